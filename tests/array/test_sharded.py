"""Sharded arrays (create_array(..., chunks=inner, shards=outer)) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c


@st.composite
def sharded_case(draw):
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(i * draw(st.integers(1, 3)) for i in inner)
    shape = tuple(draw(st.integers(0, 11)) for _ in range(ndim))
    key = tuple(
        slice(draw(st.one_of(st.none(), st.integers(-n - 1, n + 1))), None,
              draw(st.sampled_from([None, 1, 2, -1, -2])))
        for n in shape
    )
    return shape, inner, shards, key


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sharded_case(), st.sampled_from(["start", "end"]))
def test_sharded_reads_and_writes_match_numpy(case, index_location) -> None:
    shape, inner, shards, key = case
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner),
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location}}]
    a = zarr3c.create_array("memory://", shape=shape, dtype="int32", chunks=shards,
                            codecs=codecs, fill_value=-1)
    expected = np.full(shape, -1, dtype="int32")
    half = tuple(slice(0, n // 2) for n in shape)
    a[half] = np.arange(expected[half].size, dtype="int32").reshape(expected[half].shape)
    expected[half] = np.arange(expected[half].size).reshape(expected[half].shape)
    np.testing.assert_array_equal(a[key], expected[key])
    value = np.arange(expected[key].size, dtype="int32").reshape(expected[key].shape) + 100
    a[key] = value
    expected[key] = value
    np.testing.assert_array_equal(a[...], expected)
    assert a.chunks == inner and a.shards == shards


class CountingStore(zarr3c.MemoryStore):
    """Counts the bytes a read asks the store for."""

    requested = 0

    def get(self, key):
        value = super().get(key)
        if value is not None and not key.endswith("zarr.json"):
            type(self).requested += len(value)
        return value

    def get_partial_values(self, key_ranges):
        values = super().get_partial_values(key_ranges)
        type(self).requested += sum(len(v) for v in values if v is not None)
        return values


def test_reading_one_inner_chunk_reads_only_its_bytes_and_the_index() -> None:
    store = CountingStore()
    a = zarr3c.create_array(store, "s", shape=(256, 256), dtype="uint16", chunks=(32, 32),
                            shards=(256, 256), compressors=None)
    a[...] = np.arange(256 * 256, dtype="uint16").reshape(256, 256)
    CountingStore.requested = 0
    np.testing.assert_array_equal(a[40:44, 70:72],
                                  np.arange(256 * 256).reshape(256, 256)[40:44, 70:72])
    index = 64 * 16 + 4
    # the index, and of the inner chunk (raw elements) only the byte range spanning the box
    # (rows 8..11 of the inner chunk, columns 6..7) and its furthest byte (a size check)
    span = (3 * 32 + 1) * 2 + 2
    assert CountingStore.requested == index + span + 1 < index + 32 * 32 * 2


def test_missing_shard_and_missing_inner_chunks_read_fill() -> None:
    a = zarr3c.create_array("memory://", shape=(8, 8), dtype="float32", chunks=(2, 2),
                            shards=(4, 4), fill_value=np.nan)
    a[0, 0] = 1.0
    assert a.nchunks_initialized == 4  # one shard: its 4 inner chunks, as zarr-python counts
    out = a[...]
    assert out[0, 0] == 1.0 and np.isnan(out).sum() == 63
    a[0, 0] = np.nan  # the shard is all fill again: erased
    assert a.nchunks_initialized == 0


def test_sharded_interop_with_zarr_python(tmp_path) -> None:
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
    data = np.arange(30 * 20, dtype="int16").reshape(30, 20)
    a = zarr3c.create_array(tmp_path / "x.zarr", shape=data.shape, dtype="int16",
                            chunks=(5, 5), shards=(10, 10))
    a[...] = data
    z = zarr.open_array(str(tmp_path / "x.zarr"), mode="r")
    np.testing.assert_array_equal(z[...], data)
    assert z.chunks == (5, 5) and z.shards == (10, 10)
    zw = zarr.create_array(str(tmp_path / "y.zarr"), shape=data.shape, dtype="int16",
                           chunks=(5, 5), shards=(10, 10))
    zw[...] = data
    b = zarr3c.open_array(tmp_path / "y.zarr")
    np.testing.assert_array_equal(b[3:27:2, ::-1], data[3:27:2, ::-1])
    assert b.chunks == (5, 5) and b.shards == (10, 10)


def test_partial_write_re_encodes_only_the_inner_chunks_it_touches(monkeypatch) -> None:
    from zarr3c.codecs.sharding import ShardingCodec

    a = zarr3c.create_array("memory://", shape=(8, 8), dtype="int32", chunks=(2, 2),
                            shards=(8, 8), fill_value=0)
    data = np.arange(64, dtype="int32").reshape(8, 8) + 1
    a[...] = data
    seen = []
    original = ShardingCodec.update_shard

    def spy(self, old, shard_shape, updates, *, key=None):
        seen.append(sorted(updates))
        return original(self, old, shard_shape, updates, key=key)

    monkeypatch.setattr(ShardingCodec, "update_shard", spy)
    a[1, 1] = -1
    a[3:5, 6] = -2
    a.vindex[[7], [0]] = -3
    assert seen == [[(0, 0)], [(1, 3), (2, 3)], [(3, 0)]]
    data[1, 1], data[3:5, 6], data[7, 0] = -1, -2, -3
    np.testing.assert_array_equal(a[...], data)
    a[0:2, 0:2] = 0  # the inner chunk is all fill again: dropped from the shard
    data[0:2, 0:2] = 0
    np.testing.assert_array_equal(a[...], data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_sharded_oindex_and_vindex_match_numpy(data_st) -> None:
    shape = tuple(data_st.draw(st.lists(st.integers(1, 10), min_size=1, max_size=3)))
    inner = tuple(data_st.draw(st.integers(1, 3)) for _ in shape)
    shards = tuple(i * data_st.draw(st.integers(1, 3)) for i in inner)
    a = zarr3c.create_array("memory://", shape=shape, dtype="int16", chunks=inner,
                            shards=shards, fill_value=-1)
    expected = np.full(shape, -1, dtype="int16")
    idx = tuple(np.array(data_st.draw(st.lists(st.integers(0, n - 1), max_size=5)),
                         dtype=np.int64) for n in shape)
    value = np.arange(int(np.prod([len(i) for i in idx])), dtype="int16").reshape(
        [len(i) for i in idx])
    a.oindex[idx] = value
    expected[np.ix_(*idx)] = value
    np.testing.assert_array_equal(a.oindex[idx], expected[np.ix_(*idx)])
    npts = data_st.draw(st.integers(0, 6))
    pts = tuple(np.array(data_st.draw(st.lists(st.integers(0, n - 1), min_size=npts,
                                               max_size=npts)), dtype=np.int64) for n in shape)
    a.vindex[pts] = np.arange(npts, dtype="int16") + 100
    expected[pts] = np.arange(npts) + 100
    np.testing.assert_array_equal(a.vindex[pts], expected[pts])
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("compressors", [None, "auto"], ids=["uncompressed", "zstd"])
def test_reading_a_whole_shard_never_holds_all_of_it(monkeypatch, compressors) -> None:
    """Each decoded inner chunk goes straight into the output and the shard's bytes are
    fetched in bounded batches: a whole-array read of a 16 MiB shard holds the output plus a
    few batches, not the shard's bytes and a decoded copy of it as well (3x the output)."""
    import tracemalloc

    from zarr3c.codecs import sharding

    monkeypatch.setattr(sharding.read, "MAX_REQUEST_BYTES", 1 << 20)
    data = (np.arange(128 * 256 * 256, dtype=np.uint32) % 65521).astype(np.uint16)
    data = data.reshape(128, 256, 256)
    a = zarr3c.create_array("memory://", shape=data.shape, dtype="uint16", chunks=(32, 32, 32),
                            shards=data.shape, compressors=compressors)
    a[...] = data
    tracemalloc.start()
    try:
        out = a[...]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, data)
    assert peak <= out.nbytes + (6 << 20), peak / out.nbytes
