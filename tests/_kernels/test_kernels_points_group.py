"""Tests of zarr3c._kernels.grid.group_points_regular: points of a regular grid located, keyed
and grouped by chunk in one call.

Oracle: a brute force per point (numpy's ``divmod`` and C-order raveling of the chunk
coordinates, Python's stable sort), against both the kernel and its reference twin.
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


def i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64).reshape(-1)


def run(impl: Any, coords: tuple[np.ndarray, ...], chunk: list[int], grid_: list[int],
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
    order, offsets, starts = run(impl, coords, chunk, grid_, itemsize)

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
        run(grid, (i64([0, 1, 2]), i64([0, 1, 8])), [2, 2], [2, 3], 1)
