"""copy_outer (gather/scatter over the outer product of per-dimension byte offsets) against its
numpy reference and against numpy's own orthogonal indexing (``a[np.ix_(...)]``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels.copy import copy_outer

I64 = np.int64


def _offsets(per_dim: list[list[int]], strides: list[int]) -> np.ndarray:
    parts = [np.asarray(ix, dtype=I64) * s for ix, s in zip(per_dim, strides)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=I64)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8, 16]), st.lists(st.integers(1, 5), min_size=0, max_size=4),
       st.data())
def test_gather_matches_numpy_and_reference(itemsize: int, shape: list[int],
                                            data: st.DataObject) -> None:
    """Gathering ``chunk[np.ix_(idx...)]`` into a C-contiguous output, for any indices
    (repeats, any order, consecutive runs or not)."""
    dtype = np.dtype(f"V{itemsize}")
    nbytes = int(np.prod(shape)) * itemsize
    chunk = np.frombuffer(data.draw(st.binary(min_size=nbytes, max_size=nbytes)),
                          dtype=dtype).reshape(shape)
    idx = [data.draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=6)) for n in shape]
    counts = np.array([len(i) for i in idx], dtype=I64)
    src_off = _offsets(idx, list(chunk.strides))
    out_shape = tuple(len(i) for i in idx)
    out_strides = list(np.empty(out_shape, dtype=dtype).strides)
    dst_off = _offsets([list(range(len(i))) for i in idx], out_strides)
    got = np.zeros(out_shape, dtype=dtype)
    expected = np.zeros(out_shape, dtype=dtype)
    copy_outer(chunk.reshape(-1).view(np.uint8), src_off, got.reshape(-1).view(np.uint8),
               dst_off, counts, itemsize)
    ref.copy_outer(chunk.reshape(-1).view(np.uint8), src_off,
                   expected.reshape(-1).view(np.uint8), dst_off, counts, itemsize)
    assert got.tobytes() == expected.tobytes()
    if all(len(i) for i in idx) or not shape:
        assert got.tobytes() == chunk[np.ix_(*idx)].tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_scatter_last_write_wins_as_numpy(shape: list[int], data: st.DataObject) -> None:
    """Scattering into ``chunk[np.ix_(idx...)] = value`` with repeated indices: numpy's
    assignment also lets the last one (in C order of the value) win."""
    chunk = np.zeros(shape, dtype=np.uint32)
    expected = chunk.copy()
    idx = [data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5)) for n in shape]
    value = np.arange(1, 1 + int(np.prod([len(i) for i in idx])), dtype=np.uint32).reshape(
        [len(i) for i in idx])
    expected[np.ix_(*idx)] = value
    copy_outer(value.reshape(-1).view(np.uint8),
               _offsets([list(range(len(i))) for i in idx], list(value.strides)),
               chunk.reshape(-1).view(np.uint8), _offsets(idx, list(chunk.strides)),
               np.array([len(i) for i in idx], dtype=I64), 4)
    np.testing.assert_array_equal(chunk, expected)


def test_zero_dimensional_copies_one_item() -> None:
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
def test_bad_arguments_raise(src_off, dst_off, counts, itemsize) -> None:
    src = np.zeros(12, dtype=np.uint8)
    dst = np.zeros(8, dtype=np.uint8)
    for fn in (copy_outer, ref.copy_outer):
        with pytest.raises(ValueError):
            fn(src, np.array(src_off, dtype=I64), dst, np.array(dst_off, dtype=I64),
               np.array(counts, dtype=I64), itemsize)
    assert not dst.any()
