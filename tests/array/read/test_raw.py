"""Chunks stored as raw elements (a lone ``bytes`` codec in the machine's byte order) are read
by byte range: the fast path must equal numpy (and the general path) for every basic
selection, fetch only the range it needs, and still report chunks of the wrong size."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import ChunkDecodeError

NATIVE = "little" if sys.byteorder == "little" else "big"
FOREIGN = "big" if NATIVE == "little" else "little"


class RangeLog(zarr3c.MemoryStore):
    """Records the byte ranges asked of every key."""

    def __init__(self) -> None:
        super().__init__()
        self.ranges: list[tuple[str, tuple]] = []
        self.whole: list[str] = []

    def get(self, key):
        self.whole.append(key)
        return super().get(key)

    def get_partial_values(self, key_ranges):
        key_ranges = list(key_ranges)
        self.ranges += key_ranges
        return super().get_partial_values(key_ranges)


def _index(n: int) -> st.SearchStrategy:
    bound = st.none() | st.integers(-n - 2, n + 2)
    return st.integers(-n, n - 1) | st.builds(slice, bound, bound,
                                              st.none() | st.integers(1, 5) | st.integers(-5, -1))


@pytest.mark.parametrize("endian", [NATIVE, FOREIGN], ids=["native", "foreign"])
@pytest.mark.parametrize("chunks", [(8, 16), [[5, 11, 3, 9], [16, 4, 12]]],
                         ids=["regular", "rectilinear"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_index(28), _index(32)), min_size=1, max_size=4))
def test_reads_equal_numpy(endian: str, chunks, selections) -> None:
    data = np.arange(28 * 32, dtype=np.int32).reshape(28, 32) * 7 - 1000
    a = zarr3c.create_array("memory://", shape=data.shape, dtype="int32", chunks=chunks,
                            serializer={"name": "bytes", "configuration": {"endian": endian}},
                            compressors=None, fill_value=-1)
    a[...] = data
    a[0:5, 0:16] = -1  # a missing chunk (regular grid) reads as fill
    data[0:5, 0:16] = -1
    assert a._pipeline.stores_raw_elements == (endian == NATIVE)
    for sel in selections:
        np.testing.assert_array_equal(a[sel], data[sel])
    for sel, got in zip(selections, a.get_many(selections), strict=True):
        np.testing.assert_array_equal(got, data[sel])


def test_a_small_read_fetches_only_its_range_and_the_size_probe() -> None:
    store = RangeLog()
    a = zarr3c.create_array(store, shape=(64, 64, 64), dtype="uint16", chunks=(64, 64, 64),
                            compressors=None)
    data = np.arange(64**3, dtype=np.uint16).reshape(64, 64, 64)
    a[...] = data
    store.ranges.clear()
    store.whole.clear()
    np.testing.assert_array_equal(a[10:14, 20:24, 30:34], data[10:14, 20:24, 30:34])
    assert store.whole == []
    (key, (start, length)), (key2, (tail_start, tail_length)) = store.ranges
    assert key == key2 == "c/0/0/0"
    # from element (10, 20, 30) to element (13, 23, 33), 2 bytes each: ~24 KiB of 512 KiB
    assert start == ((10 * 64 + 20) * 64 + 30) * 2
    assert start + length == ((13 * 64 + 23) * 64 + 33) * 2 + 2
    assert (tail_start, tail_length) == (64**3 * 2 - 1, 2)


def test_a_large_read_takes_the_whole_chunk() -> None:
    store = RangeLog()
    a = zarr3c.create_array(store, shape=(16, 16), dtype="int64", chunks=(16, 16),
                            compressors=None)
    a[...] = 5
    store.ranges.clear()
    store.whole.clear()
    assert (a[1:15, :] == 5).all()
    assert store.ranges == [] and store.whole == ["c/0/0"]


@pytest.mark.parametrize("change", [lambda b: b[:-1], lambda b: b + b"\0"],
                         ids=["truncated", "too-long"])
def test_a_chunk_of_the_wrong_size_is_reported_even_outside_the_range(change) -> None:
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, "t", shape=(64, 64), dtype="int32", chunks=(64, 64),
                            compressors=None)
    a[...] = 1
    store.set("t/c/0/0", change(bytes(store.get("t/c/0/0"))))
    with pytest.raises(ChunkDecodeError, match="t/c/0/0"):
        a[0, 0:2]


@pytest.mark.usefixtures("python_path")
def test_ranges_of_many_chunks_go_to_the_store_in_one_batched_request() -> None:
    """What lets a remote store run them concurrently (and a local one over its pool)."""
    store = RangeLog()
    calls = []
    original = store.get_partial_values

    def spy(key_ranges):
        key_ranges = list(key_ranges)
        calls.append(key_ranges)
        return original(key_ranges)

    a = zarr3c.create_array(store, shape=(64, 64), dtype="int16", chunks=(16, 16),
                            compressors=None)
    data = np.arange(64 * 64, dtype=np.int16).reshape(64, 64)
    a[...] = data
    store.get_partial_values = spy
    selections = [(slice(1, 3), slice(1, 3)), (slice(20, 22), slice(40, 42)), (40, slice(50, 52))]
    for sel, got in zip(selections, a.get_many(selections), strict=True):
        np.testing.assert_array_equal(got, data[sel])
    assert len(calls) == 1
    assert sorted({k for k, _ in calls[0]}) == ["c/0/0", "c/1/2", "c/2/3"]
