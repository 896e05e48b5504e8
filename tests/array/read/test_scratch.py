"""Stored bytes read into per-thread scratch memory (``Store.read_value_into``,
``StoreRanges``) rather than fresh ``bytes`` per chunk.

Where the store reads into memory (LocalStore), a chunk's stored bytes that are decoded and
copied out at once, a raw chunk read whole for its points, and a shard's inner chunks read
by coalesced ranges all land in the reading thread's ``"stored"`` scratch buffer, reused from
read to read.  These tests guard what that returns (oracle: the bytes written, numpy) and
that nothing read through scratch memory outlives the read that filled it; never speed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c import _buffers
from zarr3c._buffers import empty_aligned
from zarr3c.codecs.sharding import StoreRanges
from zarr3c.errors import ChunkDecodeError
from zarr3c.stores import LocalStore, MemoryStore
from zarr3c.stores.local import reads as local_reads

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}


def _sharded(inner_codecs: list) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 8], "codecs": inner_codecs,
        "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 3 * local_reads.BOUNCE_MIN_BYTES), st.integers(0, 70_000),
       st.sampled_from([0, 1, 16, 31, 32, 4000]))
def test_read_value_into_copies_what_fits_and_returns_the_size(tmp_path_factory, size, room,
                                                               skew) -> None:
    """LocalStore (at every distance, bounced or not) and the default agree: the value's
    first ``min(size, room)`` bytes, and its whole size."""
    value = (np.arange(size, dtype=np.uint32) * 2654435761 % 251).astype(np.uint8).tobytes()
    local = LocalStore(tmp_path_factory.mktemp("v"))
    memory = MemoryStore()
    for store in (local, memory):
        store.set("a/k", value)
        raw = empty_aligned(room + skew + 8, always=True)
        raw[...] = 0xEE
        out = raw[skew:skew + room]
        assert store.read_value_into("a/k", out) == size
        n = min(size, room)
        assert out[:n].tobytes() == value[:n]
        assert (raw[:skew] == 0xEE).all() and (raw[skew + n:] == 0xEE).all()  # nothing else
        assert store.read_value_into("a/missing", out) is None


def test_only_stores_that_read_into_memory_say_so(tmp_path) -> None:
    assert LocalStore(tmp_path).reads_into_memory
    assert not MemoryStore().reads_into_memory


@pytest.mark.parametrize("codecs", [
    [BYTES, ZSTD], [BYTES], [_sharded([BYTES, ZSTD])], [_sharded([BYTES])],
], ids=["zstd", "raw", "sharded-zstd", "sharded-raw"])
def test_reads_one_after_another_never_see_each_others_bytes(tmp_path, codecs) -> None:
    """Boxes, points and outer products read in turn (each thread's scratch reused for every
    chunk) equal numpy, and results already returned do not change as more are read."""
    a = zarr3c.create_array(LocalStore(tmp_path), shape=(64, 48), dtype="int32",
                            chunks=(16, 16), codecs=codecs, fill_value=-3)
    data = np.random.default_rng(1).integers(-1000, 1000, (64, 48)).astype("int32")
    a[...] = data
    a[16:32, 16:32] = -3  # a chunk (or inner chunk) that is not stored
    data[16:32, 16:32] = -3
    rng = np.random.default_rng(2)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(30):
        i, j = rng.integers(0, 60), rng.integers(0, 44)
        kept.append((a[i:i + 4, j:j + 4], data[i:i + 4, j:j + 4]))
        rows, cols = rng.integers(0, 64, 300), rng.integers(0, 48, 300)
        kept.append((a.vindex[rows, cols], data[rows, cols]))
        rows, cols = rng.integers(0, 64, 5), rng.integers(0, 48, 7)
        kept.append((a.oindex[rows, cols], data[np.ix_(rows, cols)]))
    kept.append((a[...], data))
    for got, want in kept:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("inner", [[BYTES], [BYTES, ZSTD]], ids=["raw", "zstd"])
@pytest.mark.parametrize("local", [True, False], ids=["local", "memory"])
def test_inner_chunks_kept_by_read_inner_chunks_are_not_scratch(tmp_path, inner,
                                                                local) -> None:
    """``read_inner_chunks`` keeps the chunks it returns: they must not be views of
    scratch memory (stored bytes or decoded inner chunks) that the next read overwrites."""
    store = LocalStore(tmp_path) if local else MemoryStore()
    a = zarr3c.create_array(store, shape=(16, 16), dtype="uint16",
                            chunks=(16, 16), codecs=[_sharded(inner)], fill_value=0)
    data = np.arange(256, dtype="uint16").reshape(16, 16)
    a[...] = data
    codec, key = a._sharding, a.chunk_key((0, 0))
    first = codec.read_inner_chunks(StoreRanges(a._store, key), (16, 16), [(0, 0), (1, 1)])
    a[...] = data + 1000
    codec.read_inner_chunks(StoreRanges(a._store, key), (16, 16), [(0, 0), (1, 1)])
    a[...]  # and everything else through scratch
    np.testing.assert_array_equal(first[(0, 0)], data[:8, :8])
    np.testing.assert_array_equal(first[(1, 1)], data[8:, 8:])


def test_store_ranges_into_reads_each_range_or_says_none(tmp_path) -> None:
    store = LocalStore(tmp_path)
    value = bytes(range(200))
    store.set("s", value)
    ranges = StoreRanges(store, "s")
    got = ranges.into([(10, 5), (100, 20), (0, 3)])
    assert got is not None
    assert [v.tobytes() for v in got] == [value[10:15], value[100:120], value[:3]]
    assert ranges.into([(190, 20)]) is None  # past the end: not all there
    assert StoreRanges(store, "missing").into([(0, 4)]) is None
    assert StoreRanges(MemoryStore(), "s").into([(0, 4)]) is None  # cannot read into memory
    assert [bytes(v) for v in ranges([(10, 5), (-3, None)])] == [value[10:15], value[-3:]]


@pytest.mark.parametrize("inner", [[BYTES, ZSTD], [BYTES]], ids=["zstd", "raw"])
def test_a_shard_cut_short_is_named_through_the_scratch_path(tmp_path, inner) -> None:
    """Inner chunks whose ranges are no longer all in the shard: read again without
    scratch memory, which names the shard and the inner chunk."""
    store = LocalStore(tmp_path)
    a = zarr3c.create_array(store, shape=(16, 16), dtype="uint16", chunks=(16, 16),
                            codecs=[_sharded(inner)], fill_value=0)
    a[...] = np.arange(256, dtype="uint16").reshape(16, 16)
    key = a.chunk_key((0, 0))
    raw = bytes(store.get(key))
    store.set(key, raw[:40] + raw[-(4 * 16 + 4):])  # the index now points past the data
    for read in (lambda: a[...], lambda: a[9:15, 9:15], lambda: a.vindex[[1, 15], [1, 15]]):
        with pytest.raises(ChunkDecodeError, match=key):
            read()


@pytest.mark.usefixtures("python_path")  # (the Python path's own steps)
def test_a_chunk_read_into_scratch_is_decoded_from_it(tmp_path, monkeypatch) -> None:
    """LocalStore chunks are read into the ``"stored"`` slot, not through ``get``; a chunk
    kept whole (straight into the output) still equals numpy."""
    a = zarr3c.create_array(LocalStore(tmp_path), shape=(40,), dtype="int64", chunks=(10,),
                            codecs=[BYTES, ZSTD], fill_value=0)
    data = np.arange(40, dtype="int64") ** 2
    a[...] = data
    slots: list[str] = []
    real = _buffers.thread_scratch

    def spy(nbytes, slot="decoded"):
        slots.append(slot)
        return real(nbytes, slot)

    from zarr3c.array.read import chunk as chunk_module
    monkeypatch.setattr(chunk_module, "thread_scratch", spy)
    monkeypatch.setattr(LocalStore, "get", lambda self, key: pytest.fail(f"get({key!r})"))
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[3:17], data[3:17])
    np.testing.assert_array_equal(a[12], data[12])
    assert "stored" in slots


def test_inner_chunks_are_decoded_into_scratch_not_fresh_memory(tmp_path, monkeypatch) -> None:
    """A shard's zstd inner chunks, decoded only to be copied out, are decoded into the
    thread's ``"inner"`` scratch: zstd's allocating ``decode`` is never needed."""
    from zarr3c.codecs.zstd import ZstdCodec

    a = zarr3c.create_array(LocalStore(tmp_path), shape=(64, 48), dtype="int32",
                            chunks=(32, 48), codecs=[_sharded([BYTES, ZSTD])], fill_value=0)
    data = np.arange(64 * 48, dtype="int32").reshape(64, 48)
    a[...] = data

    def refuse(self, data):  # noqa: ANN001, ANN202 - the spy
        raise AssertionError("decoded into fresh memory")

    monkeypatch.setattr(ZstdCodec, "decode", refuse)
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[3:40, 5:47], data[3:40, 5:47])
    rng = np.random.default_rng(3)
    rows, cols = rng.integers(0, 64, 200), rng.integers(0, 48, 200)
    np.testing.assert_array_equal(a.vindex[rows, cols], data[rows, cols])
    np.testing.assert_array_equal(a.oindex[rows[:9], cols[:7]],
                                  data[np.ix_(rows[:9], cols[:7])])


@pytest.mark.usefixtures("python_path")
def test_raw_inner_chunks_read_for_points_go_to_scratch(tmp_path, monkeypatch) -> None:
    """Points of a shard of raw inner chunks on the Python path: the coalesced ranges holding
    them are read through ``StoreRanges.into`` (the ``"stored"`` scratch), not into fresh
    memory per request; the points equal numpy.  (The native pipeline reads each inner
    chunk's span of points into its own per-thread scratch.)"""
    a = zarr3c.create_array(LocalStore(tmp_path), shape=(64, 48), dtype="int32",
                            chunks=(32, 48), codecs=[_sharded([BYTES])], fill_value=0)
    data = np.arange(64 * 48, dtype="int32").reshape(64, 48)
    a[...] = data
    into: list[int] = []
    fresh: list[tuple[int, int | None]] = []
    real_into, real_call = StoreRanges.into, StoreRanges.__call__

    def spy_into(self, ranges):  # noqa: ANN001, ANN202 - the spy
        into.append(sum(n for _, n in ranges))
        return real_into(self, ranges)

    def spy_call(self, ranges):  # noqa: ANN001, ANN202 - the spy
        fresh.extend(ranges)
        return real_call(self, ranges)

    monkeypatch.setattr(StoreRanges, "into", spy_into)
    monkeypatch.setattr(StoreRanges, "__call__", spy_call)
    rng = np.random.default_rng(4)
    rows, cols = rng.integers(0, 64, 500), rng.integers(0, 48, 500)
    np.testing.assert_array_equal(a.vindex[rows, cols], data[rows, cols])
    inner_chunks = 2 * 4 * 6
    assert sum(into) == inner_chunks * 8 * 8 * 4  # 500 points touch every inner chunk
    # fetched into fresh memory: the two indexes only (4 x 6 entries and a checksum, the
    # shard's tail)
    assert fresh == [(-(4 * 6 * 16 + 4), None)] * 2
