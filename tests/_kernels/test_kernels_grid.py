"""Tests of zarr3c._kernels.grid: slice projections, point location and grouping on chunk grids.

Oracles: the reference twins (numpy searchsorted and run grouping) and a brute-force
element-by-element expansion of the projection rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import grid

IMPLS = [pytest.param(grid, id="cython"), pytest.param(ref, id="reference")]
INT64_MAX = 2**63 - 1


def i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64).reshape(-1)


def offsets_of(lengths: list[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def check_rows(rows: np.ndarray, start: int, step: int, count: int, chunk_start: Any) -> None:
    """Brute force: the rows partition exactly the selected elements, in order."""
    assert rows.dtype == np.int64 and rows.ndim == 2 and rows.shape[1] == 4
    assert rows.flags.c_contiguous
    pos = 0
    for c, local, n, first in rows.tolist():
        assert n >= 1 and first == pos
        for k in range(n):
            x = start + (pos + k) * step
            assert chunk_start(c) + local + k * step == x
        pos += n
    assert pos == count
    assert list(rows[:, 0]) == sorted(set(rows[:, 0].tolist()))  # increasing, each once


# -- project_slice_regular -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 200), st.integers(1, 25), st.integers(0, 60), st.integers(1, 20))
def test_project_slice_regular_matches_reference(
    start: int, step: int, count: int, chunk_size: int
) -> None:
    got = grid.project_slice_regular(start, step, count, chunk_size)
    np.testing.assert_array_equal(got, ref.project_slice_regular(start, step, count, chunk_size))
    check_rows(got, start, step, count, lambda c: c * chunk_size)
    assert ((got[:, 1] >= 0) & (got[:, 1] < chunk_size)).all()


def test_project_slice_regular_example() -> None:
    rows = grid.project_slice_regular(5, 3, 4, 4)
    assert rows.tolist() == [[1, 1, 1, 0], [2, 0, 2, 1], [3, 2, 1, 3]]


@pytest.mark.parametrize("impl", IMPLS)
def test_project_slice_regular_empty_selection(impl: Any) -> None:
    rows = impl.project_slice_regular(7, 2, 0, 4)
    assert rows.shape == (0, 4) and rows.dtype == np.int64


def test_project_slice_regular_huge_coordinates() -> None:
    """Near the top of int64, nothing overflows."""
    start = INT64_MAX - 10
    rows = grid.project_slice_regular(start, 5, 3, 2**62)
    assert rows.tolist() == [[1, start - 2**62, 3, 0]]
    np.testing.assert_array_equal(rows, ref.project_slice_regular(start, 5, 3, 2**62))
    rows = grid.project_slice_regular(0, 2**61, 4, INT64_MAX)
    np.testing.assert_array_equal(rows, [[0, 0, 4, 0]])


REGULAR_ERRORS = [
    ((-1, 1, 3, 4), "start", "negative-start"),
    ((0, 0, 3, 4), "step", "step-0"),
    ((9, -1, 3, 4), "step", "negative-step"),
    ((0, 1, -1, 4), "count", "negative-count"),
    ((0, 1, 3, 0), "chunk_size", "chunk-size-0"),
    ((0, 1, 3, -4), "chunk_size", "negative-chunk-size"),
    ((2**62, 2**62, 3, 4), "overflows", "last-element-overflows"),
    ((INT64_MAX, 1, 2, 4), "overflows", "one-past-int64-max"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("args, match, _id", REGULAR_ERRORS, ids=[c[2] for c in REGULAR_ERRORS])
def test_project_slice_regular_rejects_invalid_arguments(
    impl: Any, args: tuple[int, ...], match: str, _id: str
) -> None:
    with pytest.raises(ValueError, match=match):
        impl.project_slice_regular(*args)


# -- project_slice_offsets -------------------------------------------------------------------------


chunk_lengths = st.lists(st.integers(0, 7), min_size=0, max_size=12)


@st.composite
def offsets_slices(draw: st.DrawFn) -> tuple[list[int], int, int, int]:
    lengths = draw(chunk_lengths)
    total = sum(lengths)
    step = draw(st.integers(1, 9))
    if total == 0:
        return lengths, draw(st.integers(0, 5)), step, 0
    start = draw(st.integers(0, total - 1))
    count = draw(st.integers(0, (total - 1 - start) // step + 1))
    return lengths, start, step, count


@settings(max_examples=200, deadline=None)
@given(offsets_slices())
def test_project_slice_offsets_matches_reference(case: tuple[list[int], int, int, int]) -> None:
    lengths, start, step, count = case
    off = offsets_of(lengths)
    got = grid.project_slice_offsets(start, step, count, off)
    np.testing.assert_array_equal(got, ref.project_slice_offsets(start, step, count, off))
    check_rows(got, start, step, count, lambda c: int(off[c]))
    for c, local, n, _ in got.tolist():
        assert lengths[c] > 0  # zero-length chunks never appear
        assert local + (n - 1) * step < lengths[c]


def test_project_slice_offsets_equals_regular_for_regular_offsets() -> None:
    """A regular grid written as offsets projects the same (the two code paths agree)."""
    off = np.append(np.arange(0, 1000, 7, dtype=np.int64), 1000)  # last chunk is partial
    for start, step, count in [(0, 1, 1000), (3, 5, 150), (999, 1, 1), (10, 13, 70)]:
        np.testing.assert_array_equal(
            grid.project_slice_offsets(start, step, count, off),
            grid.project_slice_regular(start, step, count, 7),
        )


@pytest.mark.parametrize("impl", IMPLS)
def test_project_slice_offsets_skips_zero_length_chunks(impl: Any) -> None:
    off = offsets_of([3, 0, 0, 2, 0, 4])
    rows = impl.project_slice_offsets(1, 2, 4, off)  # 1, 3, 5, 7
    assert rows.tolist() == [[0, 1, 1, 0], [3, 0, 1, 1], [5, 0, 2, 2]]


OFFSETS_ERRORS = [
    ((0, 1, 1, i64([])), "empty", "empty-offsets"),
    ((0, 1, 1, i64([1, 4])), "offsets[0]", "first-not-0"),
    ((0, 1, 1, i64([0, 4, 3])), "non-decreasing", "decreasing"),
    ((0, 1, 4, i64([0, 2, 3])), "out of range", "selection-past-end"),
    ((3, 1, 1, i64([0, 2, 3])), "out of range", "start-at-end"),
    ((0, 1, 1, i64([0])), "out of range", "no-chunks"),
    ((0, 5, 2, i64([0, 4, 5])), "out of range", "step-past-end"),
    ((-1, 1, 1, i64([0, 4])), "start", "negative-start"),
    ((0, 0, 1, i64([0, 4])), "step", "step-0"),
    ((0, 1, -1, i64([0, 4])), "count", "negative-count"),
    ((2**62, 2**62, 3, i64([0, INT64_MAX])), "overflows", "overflow"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("args, match, _id", OFFSETS_ERRORS, ids=[c[2] for c in OFFSETS_ERRORS])
def test_project_slice_offsets_rejects_invalid_arguments(
    impl: Any, args: tuple[Any, ...], match: str, _id: str
) -> None:
    with pytest.raises(ValueError) as info:
        impl.project_slice_offsets(*args)
    if impl is grid:
        assert match in str(info.value)


def test_project_slice_offsets_count_0_still_validates_offsets() -> None:
    assert grid.project_slice_offsets(100, 1, 0, i64([0, 4])).shape == (0, 4)
    with pytest.raises(ValueError, match="non-decreasing"):
        grid.project_slice_offsets(0, 1, 0, i64([0, 4, 2]))


# -- locate_points ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**6), max_size=40), st.integers(1, 1000), st.booleans())
def test_locate_points_regular_matches_reference(
    indices: list[int], chunk_size: int, sort: bool
) -> None:
    idx = i64(sorted(indices) if sort else indices)
    got = (np.full(len(idx), -7, np.int64), np.full(len(idx), -7, np.int64))
    want = (np.empty(len(idx), np.int64), np.empty(len(idx), np.int64))
    grid.locate_points_regular(idx, chunk_size, *got)
    ref.locate_points_regular(idx, chunk_size, *want)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0] * chunk_size + got[1], idx)


@st.composite
def offsets_points(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    lengths = draw(chunk_lengths.filter(lambda ls: sum(ls) > 0))
    points = draw(st.lists(st.integers(0, sum(lengths) - 1), max_size=40))
    if draw(st.booleans()):
        points.sort()
    return lengths, points


@settings(max_examples=200, deadline=None)
@given(offsets_points())
def test_locate_points_offsets_matches_reference(case: tuple[list[int], list[int]]) -> None:
    lengths, points = case
    off, idx = offsets_of(lengths), i64(points)
    got = (np.full(len(idx), -7, np.int64), np.full(len(idx), -7, np.int64))
    want = (np.empty(len(idx), np.int64), np.empty(len(idx), np.int64))
    grid.locate_points_offsets(idx, off, *got)
    ref.locate_points_offsets(idx, off, *want)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(off[got[0]] + got[1], idx)
    assert all(0 <= loc < lengths[c] for c, loc in zip(got[0], got[1], strict=True))


def _outs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(n, np.int64), np.zeros(n, np.int64)


LOCATE_REGULAR_ERRORS = [
    ((i64([1, 2, -3, -4]), 4, *_outs(4)), r"indices\[2\] = -3 is negative", "negative-index"),
    ((i64([1, 2]), 4, *_outs(3)), "must be equal", "chunk-index-too-long"),
    (
        (i64([1, 2]), 4, np.zeros(2, np.int64), np.zeros(1, np.int64)),
        "must be equal",
        "local-index-too-short",
    ),
    ((i64([1, 2]), 0, *_outs(2)), "chunk_size", "chunk-size-0"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "args, match, _id", LOCATE_REGULAR_ERRORS, ids=[c[2] for c in LOCATE_REGULAR_ERRORS]
)
def test_locate_points_regular_rejects_invalid_arguments(
    impl: Any, args: tuple[Any, ...], match: str, _id: str
) -> None:
    with pytest.raises(ValueError) as info:
        impl.locate_points_regular(*args)
    if impl is grid:
        assert info.match(match)


LOCATE_OFFSETS_ERRORS = [
    (
        (i64([0, 5, 9, 2]), i64([0, 4, 9]), *_outs(4)),
        r"indices\[2\] = 9 is out of range \[0, 9\)",
        "index-at-end",
    ),
    ((i64([-1]), i64([0, 4, 9]), *_outs(1)), r"indices\[0\] = -1 is out of range", "negative"),
    ((i64([0]), i64([0]), *_outs(1)), r"indices\[0\] = 0 is out of range \[0, 0\)", "no-chunks"),
    ((i64([0]), i64([]), *_outs(1)), "empty", "empty-offsets"),
    ((i64([0]), i64([2, 4]), *_outs(1)), r"offsets\[0\] = 2 must be 0", "first-not-0"),
    (
        (i64([0]), i64([0, 4, 3, 9]), *_outs(1)),
        r"offsets\[2\] = 3 < offsets\[1\] = 4",
        "decreasing",
    ),
    ((i64([0, 1]), i64([0, 4]), *_outs(1)), "must be equal", "outputs-too-short"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "args, match, _id", LOCATE_OFFSETS_ERRORS, ids=[c[2] for c in LOCATE_OFFSETS_ERRORS]
)
def test_locate_points_offsets_rejects_invalid_arguments(
    impl: Any, args: tuple[Any, ...], match: str, _id: str
) -> None:
    with pytest.raises(ValueError) as info:
        impl.locate_points_offsets(*args)
    if impl is grid:
        assert info.match(match)


def test_locate_points_offsets_writes_outputs_before_the_bad_index() -> None:
    chunk_index, local_index = _outs(3)
    with pytest.raises(ValueError, match=r"indices\[2\]"):
        grid.locate_points_offsets(i64([5, 1, 100]), i64([0, 4, 9]), chunk_index, local_index)
    assert chunk_index[:2].tolist() == [1, 0] and local_index[:2].tolist() == [1, 1]


def test_locate_points_reject_readonly_outputs() -> None:
    ro = np.zeros(2, np.int64)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        grid.locate_points_regular(i64([1, 2]), 4, ro, np.zeros(2, np.int64))
    with pytest.raises(ValueError):
        grid.locate_points_offsets(i64([1, 2]), i64([0, 4]), np.zeros(2, np.int64), ro)


# -- group_by_key --------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", IMPLS)
@settings(max_examples=200, deadline=None)
@given(st.integers(0, 9), st.data())
def test_group_by_key_is_a_stable_sort(impl: Any, nkeys: int, data: st.DataObject) -> None:
    keys = i64(data.draw(st.lists(st.integers(0, nkeys - 1), max_size=40)) if nkeys else [])
    order = np.full(len(keys), -1, dtype=np.int64)
    starts = np.full(nkeys + 1, -1, dtype=np.int64)
    impl.group_by_key(keys, nkeys, order, starts)
    np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"))
    for k in range(nkeys):
        np.testing.assert_array_equal(order[starts[k]:starts[k + 1]], np.flatnonzero(keys == k))
    assert starts[0] == 0 and starts[-1] == len(keys)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    ("keys", "nkeys", "norder", "nstarts"),
    [([0, 3], 3, 2, 4), ([-1], 3, 1, 4), ([0], -1, 1, 0), ([0, 1], 2, 1, 3), ([0], 2, 1, 2)],
    ids=["key-too-large", "key-negative", "nkeys-negative", "order-length", "starts-length"],
)
def test_group_by_key_bad_arguments_raise(impl: Any, keys, nkeys, norder, nstarts) -> None:
    with pytest.raises(ValueError):
        impl.group_by_key(i64(keys), nkeys, np.zeros(norder, dtype=np.int64),
                          np.zeros(max(nstarts, 0), dtype=np.int64))


# -- group_points_regular: points located, keyed and grouped by chunk in one call -----------------
#
# Oracle: a brute force per point (numpy's ``divmod`` and C-order raveling of the chunk
# coordinates, Python's stable sort), against both the kernel and its reference twin.


def group_points(impl: Any, coords: tuple[np.ndarray, ...], chunk: list[int], grid_: list[int],
                 itemsize: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(coords[0])
    order = np.full(n, -1, dtype=np.int64)
    offsets = np.full(n, -1, dtype=np.int64)
    starts = np.full(int(np.prod(grid_)) + 1, -1, dtype=np.int64)
    impl.group_points_regular(coords, i64(chunk), i64(grid_), itemsize, order, offsets, starts)
    return order, offsets, starts


@pytest.mark.parametrize("impl", IMPLS)
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_group_points_regular_matches_brute_force(impl: Any, data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 4))
    chunk = data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim))
    grid_ = data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    itemsize = data.draw(st.sampled_from([1, 2, 8]))
    n = data.draw(st.integers(0, 60))
    coords = tuple(i64(data.draw(st.lists(st.integers(0, c * g - 1), min_size=n, max_size=n)))
                   for c, g in zip(chunk, grid_, strict=True))
    order, offsets, starts = group_points(impl, coords, chunk, grid_, itemsize)

    keys, within = [], []
    for i in range(n):
        point = [int(c[i]) for c in coords]
        chunk_coords = [x // c for x, c in zip(point, chunk, strict=True)]
        local = [x % c for x, c in zip(point, chunk, strict=True)]
        keys.append(int(np.ravel_multi_index(chunk_coords, grid_)))
        within.append(int(np.ravel_multi_index(local, chunk)) * itemsize)
    expected = sorted(range(n), key=lambda i: keys[i])  # stable
    np.testing.assert_array_equal(order, i64(expected))
    np.testing.assert_array_equal(offsets, i64([within[i] for i in expected]))
    assert starts[0] == 0 and starts[-1] == n
    for k in range(int(np.prod(grid_))):
        assert [keys[i] for i in order[starts[k]:starts[k + 1]]] == [k] * int(
            starts[k + 1] - starts[k])


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    ("coords", "chunk", "grid_", "itemsize", "norder", "nstarts"),
    [
        (([0, 9],), [3], [3], 1, 2, 4),           # coordinate past the grid
        (([0, -1],), [3], [3], 1, 2, 4),          # negative coordinate
        (([0], [7]), [2, 2], [2, 3], 1, 1, 7),    # past the grid on axis 1
        (([0, 1], [0]), [2, 2], [2, 2], 1, 2, 5),  # coordinate arrays of different lengths
        (([0],), [0], [3], 1, 1, 4),              # chunk length 0
        (([0],), [3], [0], 1, 1, 1),              # grid length 0
        (([0],), [3], [3], 0, 1, 4),              # itemsize 0
        (([0],), [3], [3], 1, 2, 4),              # order of the wrong length
        (([0],), [3], [3], 1, 1, 3),              # starts of the wrong length
        (([0],), [3, 3], [3, 3], 1, 1, 10),       # fewer coordinate arrays than dimensions
        ((), [], [], 1, 0, 2),                    # no dimension
        (([0],), [2**62], [4], 1, 1, 5),          # chunk * grid past int64
    ],
    ids=["past-grid", "negative", "past-grid-axis1", "lengths", "chunk-0", "grid-0",
         "itemsize-0", "order-length", "starts-length", "ndim-mismatch", "ndim-0", "overflow"],
)
def test_group_points_regular_bad_arguments_raise(impl: Any, coords, chunk, grid_, itemsize,
                                                  norder, nstarts) -> None:
    with pytest.raises(ValueError):
        impl.group_points_regular(tuple(i64(c) for c in coords), i64(chunk), i64(grid_),
                                  itemsize, np.zeros(norder, dtype=np.int64),
                                  np.zeros(norder, dtype=np.int64),
                                  np.zeros(nstarts, dtype=np.int64))


def test_group_points_regular_names_the_axis_and_point() -> None:
    with pytest.raises(ValueError, match=r"coords\[1\]\[2\] = 8 is outside \[0, 6\)"):
        group_points(grid, (i64([0, 1, 2]), i64([0, 1, 8])), [2, 2], [2, 3], 1)
