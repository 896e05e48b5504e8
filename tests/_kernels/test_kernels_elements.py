"""copy_elements (gather/scatter by byte offsets) against its numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels.copy import copy_elements


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1, 2, 3, 4, 8, 16]), st.integers(0, 12), st.integers(0, 12),
       st.data())
def test_matches_reference(itemsize: int, nsrc: int, ndst: int, data: st.DataObject) -> None:
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


def test_gather_matches_numpy_fancy_indexing() -> None:
    rng = np.random.default_rng(0)
    chunk = rng.standard_normal((5, 6, 7))
    idx = tuple(rng.integers(0, n, 50) for n in chunk.shape)
    offsets = sum(i * s for i, s in zip(idx, chunk.strides)).astype(np.int64)
    out = np.empty(50)
    copy_elements(chunk.reshape(-1).view(np.uint8), offsets, out.view(np.uint8),
                  np.arange(50, dtype=np.int64) * 8, 8)
    np.testing.assert_array_equal(out, chunk[idx])


def test_last_write_wins() -> None:
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
def test_bad_arguments_raise(src_off, dst_off, itemsize) -> None:
    src = np.zeros(12, dtype=np.uint8)
    dst = np.zeros(8, dtype=np.uint8)
    for fn in (copy_elements, ref.copy_elements):
        with pytest.raises(ValueError):
            fn(src, np.array(src_off, dtype=np.int64), dst, np.array(dst_off, dtype=np.int64),
               itemsize)
    assert not dst.any()


@pytest.mark.parametrize("empty", ["src", "dst"])
def test_an_empty_buffer_is_refused_with_value_error(empty: str) -> None:
    """An element reaching into an empty buffer is a ValueError in release and bounds-checked
    builds alike (never an IndexError from taking the buffer's address)."""
    src = np.zeros(0 if empty == "src" else 8, dtype=np.uint8)
    dst = np.zeros(0 if empty == "dst" else 8, dtype=np.uint8)
    for fn in (copy_elements, ref.copy_elements):
        with pytest.raises(ValueError):
            fn(src, np.zeros(1, dtype=np.int64), dst, np.zeros(1, dtype=np.int64), 1)
