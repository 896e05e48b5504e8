"""Tests of zarr3c._kernels.boxes: basic_box (the short path's parser for step-1 boxes),
count_box_pieces / plan_box_pieces (many boxes per chunk), plan_box_in_cell (one box in one
shard) and box_chunk_pieces (one box over a few chunks).

Oracles: the pure-numpy twins in zarr3c._kernels._reference (twin == kernel on random
inputs), and numpy itself: the box basic_box names is what numpy's basic indexing selects
(with numpy's result shape, and a scalar exactly when numpy gives one), and copying each
planned piece out of the chunks of a random array rebuilds every box (``src[box]``),
whatever the chunking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import boxes, scatter
from zarr3c._kernels import copy as kcopy

I64 = np.int64


# -- basic_box -------------------------------------------------------------------------------------


IMPLS = [pytest.param(boxes, id="cython"), pytest.param(ref, id="reference")]

# Python and numpy integers: numpy indexes with both alike (indices computed with numpy).
integer = st.one_of(st.integers(-12, 12), st.builds(
    lambda v, t: t(v), st.integers(-12, 12), st.sampled_from([np.int64, np.int32, np.int8])),
    st.builds(np.uint16, st.integers(0, 12)))
bound = st.one_of(st.none(), integer, st.sampled_from([-(10**30), 10**30]))
entry = st.one_of(
    integer,
    st.builds(slice, bound, bound),
    st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, -1])),
    st.just(Ellipsis),
    st.sampled_from([None, True, np.bool_(True), np.array(1), 1.0, [1], slice(1.0, 2),
                     np.arange(2)]),
)


@st.composite
def key_cases(draw: Any) -> tuple[Any, tuple[int, ...]]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 10), min_size=ndim, max_size=ndim)))
    key = draw(st.one_of(entry, st.lists(entry, max_size=ndim + 2).map(tuple)))
    return key, shape


@settings(max_examples=500, deadline=None)
@given(key_cases())
def test_basic_box_twin_and_numpy_agree(case: Any) -> None:
    key, shape = case
    got = boxes.basic_box(key, shape)
    assert got == ref.basic_box(key, shape)
    if got is None:
        return
    start, stop, out_shape, scalar = got
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = a[key]
    assert np.shape(expected) == out_shape
    assert scalar == (not isinstance(expected, np.ndarray))
    box = a[tuple(slice(lo, hi) for lo, hi in zip(start, stop, strict=True))]
    np.testing.assert_array_equal(box.reshape(out_shape), expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_basic_box_examples(impl: Any) -> None:
    assert impl.basic_box((slice(10, 14), 5, slice(-3, None)), (256, 256, 256)) == (
        (10, 5, 253), (14, 6, 256), (4, 3), False)
    assert impl.basic_box((1, ..., 3), (4, 5, 6)) == ((1, 0, 3), (2, 5, 4), (5,), False)
    assert impl.basic_box((1, 2, 3, ...), (4, 5, 6)) == ((1, 2, 3), (2, 3, 4), (), False)
    assert impl.basic_box((1, 2, 3), (4, 5, 6)) == ((1, 2, 3), (2, 3, 4), (), True)
    assert impl.basic_box(7, (5,)) is None  # out of bounds: the general path says so
    assert impl.basic_box(slice(3, 3), (5,)) is None  # empty: the general path
    assert impl.basic_box((..., ...), (5,)) is None
    assert impl.basic_box((1, 2), (5,)) is None  # too many indices
    assert impl.basic_box((), ()) == ((), (), (), True)
    # numpy integers, as ints; numpy booleans and 0-d arrays to the general path
    assert impl.basic_box((np.int64(-1), slice(np.uint8(1), np.int32(3))), (4, 5)) == (
        (3, 1), (4, 3), (2,), False)
    assert impl.basic_box(slice(None, None, np.int64(1)), (5,)) == ((0,), (5,), (5,), False)
    assert impl.basic_box(np.bool_(True), (5,)) is None
    assert impl.basic_box(np.array(1), (5,)) is None


# -- count_box_pieces / plan_box_pieces: many boxes on a regular grid -----------------------------


@st.composite
def box_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], np.ndarray, np.ndarray]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, n + 2)) for n in shape)
    nboxes = draw(st.integers(1, 5))
    starts, stops = [], []
    for _ in range(nboxes):
        lo = [draw(st.integers(0, n - 1)) for n in shape]
        starts.append(lo)
        stops.append([draw(st.integers(a + 1, n)) for a, n in zip(lo, shape, strict=True)])
    return (shape, chunks, np.array(starts, dtype=I64).reshape(nboxes, ndim),
            np.array(stops, dtype=I64).reshape(nboxes, ndim))


def plan(impl: Any, starts: np.ndarray, stops: np.ndarray, chunks: tuple[int, ...],
         itemsize: int) -> dict[str, np.ndarray]:
    ndim = len(chunks)
    strides = [itemsize * int(np.prod(chunks[d + 1:], dtype=I64)) for d in range(ndim)]
    n = impl.count_box_pieces(starts, stops, np.array(chunks, dtype=I64))
    out = dict(coords=np.full((n, ndim), -7, I64), counts=np.full((n, ndim), -7, I64),
               src_offsets=np.full(n, -7, I64), src_ends=np.full(n, -7, I64),
               dst_offsets=np.full(n, -7, I64), dst_strides=np.full((n, ndim), -7, I64),
               box_offsets=np.full(len(starts) + 1, -7, I64))
    impl.plan_box_pieces(starts, stops, np.array(chunks, dtype=I64),
                         np.array(strides, dtype=I64), itemsize, out["coords"], out["counts"],
                         out["src_offsets"], out["src_ends"], out["dst_offsets"],
                         out["dst_strides"], out["box_offsets"])
    return out


@settings(max_examples=300, deadline=None)
@given(box_cases(), st.sampled_from([1, 2, 3, 8]))
def test_plan_twin_equals_kernel_and_rebuilds_the_boxes(case: Any, itemsize: int) -> None:
    shape, chunks, starts, stops = case
    got = plan(boxes, starts, stops, chunks, itemsize)
    want = plan(ref, starts, stops, chunks, itemsize)
    for name in got:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    # The oracle: copy every piece out of its chunk (padded to full chunks, as stored).
    rng = np.random.default_rng(0)
    src = rng.integers(0, 256, size=(*shape, itemsize), dtype=np.uint8).view(f"V{itemsize}")
    src = src.reshape(shape)
    grid_shape = tuple(-(-n // c) for n, c in zip(shape, chunks, strict=True))
    padded = np.zeros(tuple(g * c for g, c in zip(grid_shape, chunks, strict=True)), src.dtype)
    padded[tuple(slice(0, n) for n in shape)] = src
    out = np.zeros(int(got["box_offsets"][-1]), dtype=np.uint8)
    strides = np.array([itemsize * int(np.prod(chunks[d + 1:], dtype=I64))
                        for d in range(len(chunks))], dtype=I64)
    for p, coords in enumerate(got["coords"].tolist()):
        chunk = np.ascontiguousarray(padded[tuple(
            slice(c * k, c * k + k) for c, k in zip(coords, chunks, strict=True))])
        flat = chunk.reshape(-1).view(np.uint8)
        # src_ends is one past the last byte the piece touches
        assert got["src_ends"][p] <= flat.size
        scatter.copy_pieces(flat, got["src_offsets"][p:p + 1], strides, out,
                          got["dst_offsets"][p:p + 1], got["dst_strides"][p:p + 1],
                          got["counts"][p:p + 1], itemsize)
    for b in range(len(starts)):
        box = tuple(slice(int(a), int(z)) for a, z in zip(starts[b], stops[b], strict=True))
        lo, hi = int(got["box_offsets"][b]), int(got["box_offsets"][b + 1])
        expect = np.ascontiguousarray(src[box]).reshape(-1).view(np.uint8)
        np.testing.assert_array_equal(out[lo:hi], expect)


BAD_PLANS = [
    (np.array([[1, 0]], I64), np.array([[1, 2]], I64), [2, 2], "empty box"),
    (np.array([[-1, 0]], I64), np.array([[1, 2]], I64), [2, 2], "negative start"),
    (np.array([[0, 0]], I64), np.array([[1, 2]], I64), [2, 0], "zero chunk size"),
    (np.array([[0, 0]], I64), np.array([[1, 2, 3]], I64), [2, 2], "shape mismatch"),
    (np.array([[0, 0]], I64), np.array([[1, 2]], I64), [2, 2, 2], "ndim mismatch"),
]


@pytest.mark.parametrize("impl", [boxes, ref], ids=["cython", "reference"])
@pytest.mark.parametrize("starts, stops, chunks, why", BAD_PLANS, ids=[c[3] for c in BAD_PLANS])
def test_bad_boxes_raise(impl: Any, starts: np.ndarray, stops: np.ndarray, chunks: list[int],
                         why: str) -> None:
    with pytest.raises(ValueError):
        impl.count_box_pieces(starts, stops, np.array(chunks, dtype=I64))


@pytest.mark.parametrize("impl", [boxes, ref], ids=["cython", "reference"])
def test_plan_checks_its_outputs(impl: Any) -> None:
    starts, stops = np.array([[0, 0]], I64), np.array([[3, 3]], I64)
    chunks, strides = np.array([2, 2], I64), np.array([4, 2], I64)
    n = impl.count_box_pieces(starts, stops, chunks)
    assert n == 4
    good = [np.empty((n, 2), I64), np.empty((n, 2), I64), np.empty(n, I64), np.empty(n, I64),
            np.empty(n, I64), np.empty((n, 2), I64), np.empty(2, I64)]
    for i in range(len(good)):
        bad = list(good)
        bad[i] = np.empty((n - 1, 2) if bad[i].ndim == 2 else len(bad[i]) - 1, I64)
        with pytest.raises(ValueError):
            impl.plan_box_pieces(starts, stops, chunks, strides, 2, *bad)
    with pytest.raises(ValueError):
        impl.plan_box_pieces(starts, stops, chunks, np.array([-4, 2], I64), 2, *good)
    with pytest.raises(ValueError):
        impl.plan_box_pieces(starts, stops, chunks, strides, 0, *good)


# -- plan_box_in_cell: one box inside one cell (a small read of a sharded array) ---------------


@st.composite
def cell_cases(draw: Any) -> tuple:
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    cells = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    shape = tuple(k * draw(st.integers(1, 3)) for k in cells)
    lo = tuple(draw(st.integers(0, n - 1)) for n in shape)
    hi = tuple(draw(st.integers(a + 1, n)) for a, n in zip(lo, shape, strict=True))
    return shape, cells, chunks, lo, hi, draw(st.integers(0, 30))


@settings(max_examples=400, deadline=None)
@given(cell_cases(), st.sampled_from([1, 2, 8]))
def test_box_in_cell_twin_equals_kernel_and_rebuilds_the_box(case: Any, itemsize: int) -> None:
    shape, cells, chunks, lo, hi, max_pieces = case
    strides = np.array([itemsize * int(np.prod(chunks[d + 1:], dtype=I64))
                        for d in range(len(chunks))], dtype=I64)
    args = (lo, hi, np.array(cells, I64), np.array(chunks, I64), strides, itemsize,
            max_pieces)
    got, want = boxes.plan_box_in_cell(*args), ref.plan_box_in_cell(*args)
    if want is None:
        assert got is None
        in_one = all(a // k == (b - 1) // k for a, b, k in zip(lo, hi, cells, strict=True))
        n = int(np.prod([(b - 1) // c - a // c + 1 for a, b, c in zip(lo, hi, chunks,
                                                                      strict=True)]))
        assert not in_one or n > max_pieces
        return
    assert got is not None
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    # The oracle: every piece copied out of its chunk of the cell rebuilds src[box].
    cell, plan = got
    nd, n = len(chunks), len(plan) // (4 + 2 * len(chunks))
    slots, src_lo, src_hi, dst_off = (plan[k * n:(k + 1) * n] for k in range(4))
    counts = plan[4 * n:(4 + nd) * n].reshape(n, nd)
    dst_strides = plan[(4 + nd) * n:].reshape(n, nd)
    src = np.random.default_rng(1).integers(0, 256, (*shape, itemsize), dtype=np.uint8)
    src = src.view(f"V{itemsize}").reshape(shape)
    per = tuple(k // c for k, c in zip(cells, chunks, strict=True))
    out = np.zeros(int(np.prod([b - a for a, b in zip(lo, hi, strict=True)])) * itemsize,
                   dtype=np.uint8)
    for p in range(n):
        local = np.unravel_index(int(slots[p]), per)
        corner = [k * x + c * y for k, x, c, y in zip(cells, cell, chunks, local, strict=True)]
        chunk = np.ascontiguousarray(src[tuple(slice(a, a + c) for a, c in
                                               zip(corner, chunks, strict=True))])
        flat = chunk.reshape(-1).view(np.uint8)
        assert 0 <= src_lo[p] < src_hi[p] <= flat.size
        scatter.copy_pieces(flat, src_lo[p:p + 1], strides, out, dst_off[p:p + 1],
                          dst_strides[p:p + 1], counts[p:p + 1], itemsize)
    box = tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))
    assert out.tobytes() == np.ascontiguousarray(src[box]).tobytes()


@pytest.mark.parametrize("change", ["empty", "negative", "not_dividing", "lengths",
                                    "itemsize", "strides"])
def test_box_in_cell_refusals(change: str) -> None:
    lo, hi = (0, 1), (2, 3)
    cells, chunks = np.array([4, 4], I64), np.array([2, 2], I64)
    strides, itemsize = np.array([4, 2], I64), 2
    if change == "empty":
        hi = (2, 1)
    elif change == "negative":
        lo = (-1, 1)
    elif change == "not_dividing":
        chunks = np.array([3, 2], I64)
    elif change == "lengths":
        hi = (2, 3, 4)
    elif change == "itemsize":
        itemsize = 0
    else:
        strides = np.array([4, -2], I64)
    for impl in (boxes, ref):
        with pytest.raises(ValueError):
            impl.plan_box_in_cell(lo, hi, cells, chunks, strides, itemsize, 8)


# -- box_chunk_pieces: one box over a few chunks of a regular grid (a small chunked read) -------


@st.composite
def chunk_box_cases(draw: Any) -> tuple:
    ndim = draw(st.integers(0, 4))
    chunks = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    shape = tuple(c * draw(st.integers(1, 3)) - draw(st.integers(0, c - 1)) for c in chunks)
    lo = tuple(draw(st.integers(0, n - 1)) for n in shape)
    hi = tuple(draw(st.integers(a + 1, n)) for a, n in zip(lo, shape, strict=True))
    return shape, chunks, lo, hi, draw(st.integers(0, 20))


@settings(max_examples=400, deadline=None)
@given(chunk_box_cases(), st.sampled_from([1, 2, 8]))
def test_box_chunk_pieces_twin_equals_kernel_and_rebuilds_the_box(case: Any,
                                                                   itemsize: int) -> None:
    shape, chunks, lo, hi, max_pieces = case
    strides = np.array([itemsize * int(np.prod(chunks[d + 1:], dtype=I64))
                        for d in range(len(chunks))], dtype=I64)
    args = (lo, hi, np.array(chunks, I64), strides, itemsize, max_pieces)
    got, want = boxes.box_chunk_pieces(*args), ref.box_chunk_pieces(*args)
    assert got == want
    n = int(np.prod([(b - 1) // c - a // c + 1 for a, b, c in zip(lo, hi, chunks, strict=True)]))
    if got is None:
        assert n > max_pieces
        return
    assert len(got) == n
    # The oracle: each piece copied out of its (edge-padded) chunk rebuilds src[box].
    src = np.random.default_rng(1).integers(0, 256, (*shape, itemsize), dtype=np.uint8)
    src = src.view(f"V{itemsize}").reshape(shape)
    counts_all = [b - a for a, b in zip(lo, hi, strict=True)]
    out_strides = np.array([itemsize * int(np.prod(counts_all[d + 1:], dtype=I64))
                            for d in range(len(chunks))], dtype=I64)
    out = np.zeros(int(np.prod(counts_all, dtype=I64)) * itemsize, dtype=np.uint8)
    for coords, first, counts, src_lo, src_hi, at in got:
        chunk = np.zeros(chunks, dtype=src.dtype)
        part = src[tuple(slice(k * c, (k + 1) * c) for k, c in zip(coords, chunks, strict=True))]
        chunk[tuple(slice(0, m) for m in part.shape)] = part
        flat = chunk.reshape(-1).view(np.uint8)
        assert src_lo == int(np.dot(first, strides)) if chunks else src_lo == 0
        assert 0 <= src_lo < src_hi <= flat.size
        kcopy.copy_strided(flat, src_lo, strides, out, at, out_strides,
                           np.array(counts, I64), itemsize)
    box = tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))
    assert out.tobytes() == np.ascontiguousarray(src[box]).tobytes()


@pytest.mark.parametrize("change", ["empty", "negative", "chunk", "lengths", "itemsize"])
def test_box_chunk_pieces_refusals(change: str) -> None:
    lo, hi = (0, 1), (2, 3)
    chunks, strides, itemsize = np.array([2, 2], I64), np.array([4, 2], I64), 2
    if change == "empty":
        hi = (2, 1)
    elif change == "negative":
        lo = (-1, 1)
    elif change == "chunk":
        chunks = np.array([0, 2], I64)
    elif change == "lengths":
        hi = (2, 3, 4)
    else:
        itemsize = 0
    for impl in (boxes, ref):
        with pytest.raises(ValueError):
            impl.box_chunk_pieces(lo, hi, chunks, strides, itemsize, 8)
