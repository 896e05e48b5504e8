"""Tests of zarr3c._kernels.scatter: copy_elements (gather/scatter by byte offsets),
copy_outer (over the outer product of per-dimension byte offsets) and copy_pieces /
fill_pieces (many strided regions per call).

Oracles: the pure-numpy twins in zarr3c._kernels._reference (twin == kernel on random
inputs, including which inputs raise), and numpy's own fancy and orthogonal indexing
(``a[idx]``, ``a[np.ix_(...)]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import scatter
from zarr3c._kernels.scatter import copy_elements, copy_outer

I64 = np.int64


# -- copy_elements ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8, 16]), st.integers(0, 12), st.integers(0, 12),
       st.data())
def test_copy_elements_matches_reference(itemsize: int, nsrc: int, ndst: int,
                                         data: st.DataObject) -> None:
    src = np.frombuffer(data.draw(st.binary(min_size=nsrc * itemsize,
                                            max_size=nsrc * itemsize)), dtype=np.uint8)
    n = data.draw(st.integers(0, 20)) if nsrc and ndst else 0
    so = np.array(data.draw(st.lists(st.integers(0, max(nsrc - 1, 0)), min_size=n,
                                     max_size=n)), dtype=np.int64) * itemsize
    do = np.array(data.draw(st.lists(st.integers(0, max(ndst - 1, 0)), min_size=n,
                                     max_size=n)), dtype=np.int64) * itemsize
    got = np.zeros(ndst * itemsize, dtype=np.uint8)
    expected = got.copy()
    copy_elements(src, so, got, do, itemsize)
    ref.copy_elements(src, so, expected, do, itemsize)
    np.testing.assert_array_equal(got, expected)


def test_copy_elements_gather_matches_numpy_fancy_indexing() -> None:
    rng = np.random.default_rng(0)
    chunk = rng.standard_normal((5, 6, 7))
    idx = tuple(rng.integers(0, n, 50) for n in chunk.shape)
    offsets = sum(i * s for i, s in zip(idx, chunk.strides)).astype(np.int64)
    out = np.empty(50)
    copy_elements(chunk.reshape(-1).view(np.uint8), offsets, out.view(np.uint8),
                  np.arange(50, dtype=np.int64) * 8, 8)
    np.testing.assert_array_equal(out, chunk[idx])


def test_copy_elements_last_write_wins() -> None:
    dst = np.zeros(2, dtype=np.uint32)
    src = np.array([1, 2, 3], dtype=np.uint32)
    copy_elements(src.view(np.uint8), np.array([0, 4, 8]), dst.view(np.uint8),
                  np.array([4, 4, 4]), 4)
    assert dst.tolist() == [0, 3]


@pytest.mark.parametrize(
    ("src_off", "dst_off", "itemsize"),
    [([0, 8], [0], 4), ([9], [0], 4), ([-1], [0], 1), ([0], [5], 4), ([0], [-4], 4),
     ([0], [0], 0), ([2**62], [0], 8)],
    ids=["lengths", "src-past-end", "src-negative", "dst-past-end", "dst-negative",
         "itemsize-0", "huge"],
)
def test_copy_elements_bad_arguments_raise(src_off, dst_off, itemsize) -> None:
    src = np.zeros(12, dtype=np.uint8)
    dst = np.zeros(8, dtype=np.uint8)
    for fn in (copy_elements, ref.copy_elements):
        with pytest.raises(ValueError):
            fn(src, np.array(src_off, dtype=np.int64), dst, np.array(dst_off, dtype=np.int64),
               itemsize)
    assert not dst.any()


@pytest.mark.parametrize("empty", ["src", "dst"])
def test_copy_elements_refuses_an_empty_buffer(empty: str) -> None:
    """An element reaching into an empty buffer is a ValueError in release and bounds-checked
    builds alike (never an IndexError from taking the buffer's address)."""
    src = np.zeros(0 if empty == "src" else 8, dtype=np.uint8)
    dst = np.zeros(0 if empty == "dst" else 8, dtype=np.uint8)
    for fn in (copy_elements, ref.copy_elements):
        with pytest.raises(ValueError):
            fn(src, np.zeros(1, dtype=np.int64), dst, np.zeros(1, dtype=np.int64), 1)


# -- copy_outer ------------------------------------------------------------------------------------


def _offsets(per_dim: list[list[int]], strides: list[int]) -> np.ndarray:
    parts = [np.asarray(ix, dtype=I64) * s for ix, s in zip(per_dim, strides)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=I64)


def _axis_indices(data: st.DataObject, n: int) -> list[int]:
    """One axis's indices into ``n`` elements: any (repeats, any order, runs or not), or a
    stepped or reversed slice's (constant steps)."""
    if data.draw(st.booleans()):
        return data.draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=6))
    start = data.draw(st.integers(0, n - 1))
    return list(range(n))[start::data.draw(st.sampled_from([1, 2, 3, -1, -2]))]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8, 16]), st.lists(st.integers(1, 9), min_size=0, max_size=4),
       st.sampled_from([1, 2]), st.data())
def test_copy_outer_gather_matches_numpy_and_reference(itemsize: int, shape: list[int],
                                                       spread: int, data: st.DataObject) -> None:
    """Gathering ``chunk[np.ix_(idx...)]`` for any indices (repeats, any order, consecutive
    runs or not, stepped and reversed slices) into a C-ordered output, or into every other
    item of each axis of one twice as large (``spread`` 2: no innermost run is then
    consecutive in the output)."""
    dtype = np.dtype(f"V{itemsize}")
    nbytes = int(np.prod(shape)) * itemsize
    chunk = np.frombuffer(data.draw(st.binary(min_size=nbytes, max_size=nbytes)),
                          dtype=dtype).reshape(shape)
    idx = [_axis_indices(data, n) for n in shape]
    counts = np.array([len(i) for i in idx], dtype=I64)
    src_off = _offsets(idx, list(chunk.strides))
    out_shape = tuple(spread * len(i) for i in idx)
    out_strides = [spread * s for s in np.empty(out_shape, dtype=dtype).strides]
    dst_off = _offsets([list(range(len(i))) for i in idx], out_strides)
    got = np.zeros(out_shape, dtype=dtype)
    expected = np.zeros(out_shape, dtype=dtype)
    copy_outer(chunk.reshape(-1).view(np.uint8), src_off, got.reshape(-1).view(np.uint8),
               dst_off, counts, itemsize)
    ref.copy_outer(chunk.reshape(-1).view(np.uint8), src_off,
                   expected.reshape(-1).view(np.uint8), dst_off, counts, itemsize)
    assert got.tobytes() == expected.tobytes()
    if all(len(i) for i in idx) or not shape:
        assert got[tuple(slice(None, None, spread) for _ in shape)].tobytes() == chunk[
            np.ix_(*idx)].tobytes()


def test_copy_outer_zero_dimensional_copies_one_item() -> None:
    src = np.array([7], dtype=np.uint64)
    dst = np.zeros(1, dtype=np.uint64)
    empty = np.zeros(0, dtype=I64)
    copy_outer(src.view(np.uint8), empty, dst.view(np.uint8), empty, empty, 8)
    assert dst.tolist() == [7]


@pytest.mark.parametrize(
    ("src_off", "dst_off", "counts", "itemsize"),
    [
        ([0, 4], [0], [2], 4),              # dst_offsets too short for sum(counts)
        ([0], [0], [-1], 4),                # negative count
        ([0], [0], [1], 0),                 # itemsize 0
        ([12], [0], [1], 4),                # src element past the end (12 bytes)
        ([-4], [0], [1], 4),                # negative src offset
        ([0], [8], [1], 4),                 # dst element past the end (8 bytes)
        ([0, 8, 0, 4], [0, 0, 0, 0], [2, 2], 4),   # src: 8 + 4 + 4 > 12
        ([2**62, 2**62], [0, 0], [1, 1], 8),       # sums that would overflow int64
        ([0] * 65, [0] * 65, [1] * 65, 1),         # more than 64 dimensions
    ],
    ids=["lengths", "negative-count", "itemsize-0", "src-past-end", "src-negative",
         "dst-past-end", "src-sum-past-end", "overflow", "too-many-dims"],
)
def test_copy_outer_bad_arguments_raise(src_off, dst_off, counts, itemsize) -> None:
    src = np.zeros(12, dtype=np.uint8)
    dst = np.zeros(8, dtype=np.uint8)
    for fn in (copy_outer, ref.copy_outer):
        with pytest.raises(ValueError):
            fn(src, np.array(src_off, dtype=I64), dst, np.array(dst_off, dtype=I64),
               np.array(counts, dtype=I64), itemsize)
    assert not dst.any()


# -- copy_pieces / fill_pieces ---------------------------------------------------------------------


@st.composite
def piece_cases(draw: Any) -> dict[str, Any]:
    ndim = draw(st.integers(0, 3))
    itemsize = draw(st.sampled_from([1, 2, 4, 3]))
    n = draw(st.integers(0, 6))
    src_len = draw(st.integers(0, 200))
    dst_len = draw(st.integers(0, 200))
    ints = st.integers
    return dict(
        src=np.arange(src_len, dtype=np.uint8),
        dst_len=dst_len,
        src_offsets=np.array([draw(ints(-2, 120)) for _ in range(n)], I64),
        src_strides=np.array([draw(ints(-8, 24)) for _ in range(ndim)], I64),
        dst_offsets=np.array([draw(ints(-2, 120)) for _ in range(n)], I64),
        dst_strides=np.array([[draw(ints(-8, 24)) for _ in range(ndim)] for _ in range(n)],
                             I64).reshape(n, ndim),
        shapes=np.array([[draw(ints(-1, 4)) for _ in range(ndim)] for _ in range(n)],
                        I64).reshape(n, ndim),
        itemsize=itemsize,
    )


def run_copy(impl: Any, c: dict[str, Any]) -> tuple[str, np.ndarray]:
    dst = np.full(c["dst_len"], 0xEE, dtype=np.uint8)
    try:
        impl.copy_pieces(c["src"], c["src_offsets"], c["src_strides"], dst, c["dst_offsets"],
                         c["dst_strides"], c["shapes"], c["itemsize"])
    except ValueError:
        return "error", dst
    return "ok", dst


@settings(max_examples=500, deadline=None)
@given(piece_cases())
def test_copy_pieces_twin_equals_kernel(c: dict[str, Any]) -> None:
    """Same result, or ValueError from both (and then nothing written: all checks first).
    Overlapping destinations are written in piece order by both."""
    k_status, k_dst = run_copy(scatter, c)
    r_status, r_dst = run_copy(ref, c)
    assert k_status == r_status
    if k_status == "error":
        assert (k_dst == 0xEE).all() and (r_dst == 0xEE).all()
    else:
        np.testing.assert_array_equal(k_dst, r_dst)


@settings(max_examples=300, deadline=None)
@given(piece_cases(), st.binary(min_size=1, max_size=4))
def test_fill_pieces_twin_equals_kernel(c: dict[str, Any], value: bytes) -> None:
    out = []
    for impl in (scatter, ref):
        dst = np.full(c["dst_len"], 0xEE, dtype=np.uint8)
        try:
            impl.fill_pieces(dst, c["dst_offsets"], c["dst_strides"], c["shapes"],
                             np.frombuffer(value, np.uint8))
            out.append(("ok", dst))
        except ValueError:
            assert (dst == 0xEE).all()
            out.append(("error", dst))
    assert out[0][0] == out[1][0]
    np.testing.assert_array_equal(out[0][1], out[1][1])


@pytest.mark.parametrize("impl", [scatter, ref], ids=["cython", "reference"])
def test_pieces_validate_row_counts(impl: Any) -> None:
    src, dst = np.zeros(16, np.uint8), np.zeros(16, np.uint8)
    one, two = np.zeros(1, I64), np.zeros((1, 1), I64)
    with pytest.raises(ValueError):
        impl.copy_pieces(src, one, np.zeros(1, I64), dst, np.zeros(2, I64), two, two, 1)
    with pytest.raises(ValueError):
        impl.copy_pieces(src, one, np.zeros(2, I64), dst, one, two, two, 1)
    with pytest.raises(ValueError):
        impl.fill_pieces(dst, one, np.zeros((2, 1), I64), two, np.zeros(1, np.uint8))
    with pytest.raises(ValueError):
        impl.fill_pieces(dst, one, two, two, np.zeros(0, np.uint8))
