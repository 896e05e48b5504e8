"""The short path of basic reads of step-1 boxes (``grid.basic_box`` then
``many.read_boxes``) must give what the general path and numpy give: values, shape, scalar
or array, memory order, fill for missing chunks, and the same errors for bad chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c._kernels.boxes import basic_box
from zarr3c.array.read import many as many_module
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
    bound = st.none() | st.integers(-n - 2, n + 2) | st.integers(-n - 2, n + 2).map(np.int64)
    index = st.integers(-n, n - 1)
    return index | index.map(np.int32) | st.builds(slice, bound, bound) | st.builds(
        slice, bound, bound, st.just(1))


keys = st.tuples(_entry(13), _entry(9), _entry(10)).flatmap(
    lambda k: st.integers(0, 3).map(lambda n: k[:n] if n < 3 else k))


def _array(codecs: str, dtype: str, order: str, store: Any = "memory://"
           ) -> tuple[zarr3c.Array, np.ndarray]:
    data = (np.arange(np.prod(SHAPE)).reshape(SHAPE) * 3 - 50).astype(dtype)
    a = zarr3c.create_array(store, shape=SHAPE, dtype=dtype, chunks=CHUNKS,
                            fill_value=7, order=order, **CODECS[codecs])
    a[...] = data
    a[4:8, 5:9, 0:3] = 7  # one chunk left as fill only: not stored
    data[4:8, 5:9, 0:3] = 7
    return a, data



def _count_planned_boxes(monkeypatch: Any) -> list[int]:
    """A list that collects the number of boxes of each ``many.read_boxes`` call."""
    planned: list[int] = []
    real = many_module.read_boxes

    def spy(array: zarr3c.Array, boxes: Any) -> Any:
        planned.append(len(boxes))
        return real(array, boxes)

    monkeypatch.setattr(many_module, "read_boxes", spy)
    return planned


@pytest.mark.parametrize("codecs", list(CODECS))
@pytest.mark.parametrize("dtype,order", [("int16", "C"), ("float64", "F"), ("uint8", "C")])
@pytest.mark.parametrize("where", ["memory", "local"])
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(keys, min_size=1, max_size=6))
def test_short_path_equals_general_path_and_numpy(tmp_path_factory, codecs: str, dtype: str,
                                                   order: str, where: str,
                                                   selections: list[Any]) -> None:
    # (a LocalStore reads a box of raw chunks and copies it out in one call per chunk)
    store = "memory://" if where == "memory" else zarr3c.LocalStore(
        tmp_path_factory.mktemp("short"))
    a, data = _array(codecs, dtype, order, store)
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
    assert basic_box((1, slice(0, 3), slice(3, 6)), a._box_grid.array_shape) is not None
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
    """Boxes inside one chunk of an unsharded array are read by ``read_chunk_box`` (never
    planned by ``read_boxes``); boxes over several chunks are not."""
    a, data = _array(codecs, "int16", "C")
    planned = _count_planned_boxes(monkeypatch)
    for key in [(1, slice(0, 3), slice(3, 6)), (slice(0, 4), slice(0, 5), slice(0, 3)),
                (slice(12, 13), slice(5, 9), 9), (5, 6, 1), (slice(4, 8), slice(5, 9), 0),
                # numpy integers (indices computed with numpy) take the same path
                (np.int64(5), np.int32(6), np.uint8(1)),
                (slice(np.int64(0), np.int64(3)), np.intp(0), slice(None, np.int16(2)))]:
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


@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_box_across_raw_chunks_of_a_local_store_takes_the_one_box_path(
        monkeypatch, tmp_path, where: str) -> None:
    """On a LocalStore a box across up to 8 raw chunks is read piece by piece into one
    output (``Store.read_box_into``, missing chunks filled), never planned by
    ``read_boxes``; a store without that read (memory), boxes across more chunks and boxes
    spanning more than half of a chunk's bytes go there."""
    store = "memory://" if where == "memory" else zarr3c.LocalStore(tmp_path)
    a, data = _array("raw", "int16", "C", store)
    planned = _count_planned_boxes(monkeypatch)
    across = [(slice(2, 6), slice(0, 3), slice(0, 2)),     # two chunks
              (slice(3, 5), slice(4, 6), slice(2, 4)),     # eight, one of them not stored
              (slice(3, 5), 5, slice(1, 4)),               # four, the missing one among them
              (7, slice(4, 6), 2)]
    for key in across:
        got = a[key]
        np.testing.assert_array_equal(got, data[key])
        assert got.shape == data[key].shape
    assert planned == ([] if where == "local" else [1] * len(across))
    planned.clear()
    np.testing.assert_array_equal(a[0:9, 0:6, 0:4], data[0:9, 0:6, 0:4])  # 3 x 2 x 2 chunks
    np.testing.assert_array_equal(a[0:8, 1, 1], data[0:8, 1, 1])  # spans most of each chunk
    assert planned == [1, 1]


def test_a_bad_raw_chunk_across_a_box_is_named_and_nothing_else_is_wrong(tmp_path) -> None:
    a, data = _array("raw", "int16", "C", zarr3c.LocalStore(tmp_path))
    key = (slice(2, 6), slice(0, 3), slice(0, 2))  # chunks 0/0/0 and 1/0/0
    a.store.set("c/1/0/0", bytes(a.store.get("c/1/0/0"))[:-2])
    with pytest.raises(ChunkDecodeError, match="c/1/0/0"):
        a[key]
    np.testing.assert_array_equal(a[0:4, 0:3, 0:2], data[0:4, 0:3, 0:2])
