"""The short path of basic reads of step-1 boxes (``grid.basic_box`` then
``Array._read_boxes``) must give what the general path and numpy give: values, shape, scalar
or array, memory order, fill for missing chunks, and the same errors for bad chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c._kernels.grid import basic_box
from zarr3c.errors import ChunkDecodeError
from zarr3c.testing.reads import read_general

SHAPE = (13, 9, 10)
CHUNKS = (4, 5, 3)

CODECS: dict[str, dict[str, Any]] = {
    "raw": {"compressors": None},
    "zstd": {"compressors": [{"name": "zstd", "configuration": {"level": 0}}]},
    "transpose": {"filters": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}],
                  "compressors": None},
    "big-endian": {"serializer": {"name": "bytes", "configuration": {"endian": "big"}},
                   "compressors": None},
    "crc32c": {"compressors": [{"name": "crc32c"}]},
    # shards of 2 x 2 x 2 inner chunks: boxes become shard tasks for the shard reader
    "sharded": {"shards": (8, 10, 6), "compressors": None},
    "sharded-zstd": {"shards": (8, 10, 6),
                     "compressors": [{"name": "zstd", "configuration": {"level": 0}}]},
}


def _entry(n: int) -> st.SearchStrategy:
    bound = st.none() | st.integers(-n - 2, n + 2)
    return st.integers(-n, n - 1) | st.builds(slice, bound, bound) | st.builds(
        slice, bound, bound, st.just(1))


keys = st.tuples(_entry(13), _entry(9), _entry(10)).flatmap(
    lambda k: st.integers(0, 3).map(lambda n: k[:n] if n < 3 else k))


def _array(codecs: str, dtype: str, order: str) -> tuple[zarr3c.Array, np.ndarray]:
    data = (np.arange(np.prod(SHAPE)).reshape(SHAPE) * 3 - 50).astype(dtype)
    a = zarr3c.create_array("memory://", shape=SHAPE, dtype=dtype, chunks=CHUNKS,
                            fill_value=7, order=order, **CODECS[codecs])
    a[...] = data
    a[4:8, 5:9, 0:3] = 7  # one chunk left as fill only: not stored
    data[4:8, 5:9, 0:3] = 7
    return a, data



@pytest.mark.parametrize("codecs", list(CODECS))
@pytest.mark.parametrize("dtype,order", [("int16", "C"), ("float64", "F"), ("uint8", "C")])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(keys, min_size=1, max_size=6))
def test_short_path_equals_general_path_and_numpy(codecs: str, dtype: str, order: str,
                                                   selections: list[Any]) -> None:
    a, data = _array(codecs, dtype, order)
    for key, many in zip(selections, a.get_many(selections), strict=True):
        got = a[key]
        expected = data[key]
        general = read_general(a, key)
        for value in (got, many):
            assert type(value) is type(general)
            assert np.shape(value) == np.shape(expected)
            np.testing.assert_array_equal(value, expected)
            if isinstance(value, np.ndarray):
                assert value.dtype == a.dtype
                assert value.flags.f_contiguous == general.flags.f_contiguous
                assert value.flags.writeable


def test_short_path_is_taken_for_a_box_inside_a_chunk() -> None:
    a, _ = _array("raw", "int16", "C")
    assert basic_box((1, slice(0, 3), slice(3, 6)), a._box_grid[0]) is not None
    a2 = zarr3c.create_array("memory://", shape=(8, 8), dtype="int16", chunks=(4, 4),
                             shards=(8, 8), compressors=None)
    assert a2._sharding is not None  # boxes become shard tasks for the shard reader


@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_a_bad_chunk_is_an_error_naming_its_key(codecs: str) -> None:
    a, _ = _array(codecs, "int16", "C")
    a.store.set("c/0/0/0", b"\x00" * 5)  # wrong size / not a zstd frame
    for call in (lambda: a[1, 1:3, 0:2], lambda: a.get_many([(1, 1, 1)])):
        with pytest.raises(ChunkDecodeError, match="c/0/0/0"):
            call()


@pytest.mark.parametrize("codecs", ["raw", "zstd", "transpose"])
def test_a_box_inside_one_chunk_takes_the_one_chunk_path(monkeypatch, codecs: str) -> None:
    """Boxes inside one chunk of an unsharded array are read by ``_read_chunk_box`` (never
    planned by ``_read_boxes``); boxes over several chunks are not."""
    a, data = _array(codecs, "int16", "C")
    planned: list[int] = []
    real = zarr3c.Array._read_boxes

    def spy(self, boxes):
        planned.append(len(boxes))
        return real(self, boxes)

    monkeypatch.setattr(zarr3c.Array, "_read_boxes", spy)
    for key in [(1, slice(0, 3), slice(3, 6)), (slice(0, 4), slice(0, 5), slice(0, 3)),
                (slice(12, 13), slice(5, 9), 9), (5, 6, 1), (slice(4, 8), slice(5, 9), 0)]:
        np.testing.assert_array_equal(a[key], data[key])
    assert planned == []
    np.testing.assert_array_equal(a[2:6, 0:3, 0:2], data[2:6, 0:3, 0:2])  # two chunks
    assert planned == [1]


@pytest.mark.parametrize("change", [lambda b: b[:-1], lambda b: b + b"\0"],
                         ids=["truncated", "too-long"])
@pytest.mark.parametrize("key", [(slice(0, 4), slice(0, 5), slice(0, 3)),  # all of it
                                 (1, slice(1, 3), slice(0, 2)),              # a byte range
                                 (slice(0, 4), slice(0, 5), slice(0, 2))])   # most: whole
def test_a_raw_chunk_of_the_wrong_size_is_named_by_the_one_chunk_path(tmp_path, change,
                                                                        key) -> None:
    a = zarr3c.create_array(zarr3c.LocalStore(tmp_path), shape=SHAPE, dtype="int16",
                            chunks=CHUNKS, compressors=None)
    a[...] = 1
    a.store.set("c/0/0/0", change(bytes(a.store.get("c/0/0/0"))))
    with pytest.raises(ChunkDecodeError, match="c/0/0/0"):
        a[key]
