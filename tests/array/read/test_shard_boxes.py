"""The fast paths of sharded reads against the general paths and numpy.

Guards :meth:`ShardingCodec.read_inner_chunks_into`'s short paths (one inner chunk, inner
chunks of a raw-element chain viewed without the pipeline, workers fetching their own batches),
:meth:`ShardingCodec.project_runs` (against :meth:`ShardingCodec.project_region`), the index
decoded without the pipeline (against the pipeline), and ``LocalStore.get_partial_values``
with one range (against the grouped path).  Oracles: numpy, and the general code paths.
"""

from __future__ import annotations

import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c._kernels import zstd_ctx
from zarr3c.codecs import sharding
from zarr3c.codecs import zstd as zstd_module
from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.errors import ChecksumError, ChunkDecodeError
from zarr3c.stores.base import Store
from zarr3c.testing.reads import read_general


def _codec(inner, index_location="end", compressed=False, dtype="uint16"):
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if compressed:
        codecs.append({"name": "zstd", "configuration": {"level": 0, "checksum": False}})
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location}}


@st.composite
def read_case(draw):
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shards = tuple(i * draw(st.integers(1, 4)) for i in inner)
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    keys = []
    for _ in range(draw(st.integers(1, 4))):
        key = []
        for n in shape:
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            key.append(slice(start, stop, draw(st.sampled_from([1, 1, 2, 3]))))
        keys.append(tuple(key))
    return shape, inner, shards, keys


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(read_case(), st.sampled_from(["start", "end"]), st.booleans(), st.sampled_from([1, 2]),
       st.sampled_from([64, 1 << 22]), st.data())
def test_sharded_reads_match_numpy(tmp_path_factory, monkeypatch, case, index_location,
                                   compressed, threads, max_request, data):
    """Whole and partial reads and get_many, over a LocalStore, with missing inner chunks,
    one or two threads and tiny batches (workers fetch their own) match numpy."""
    shape, inner, shards, keys = case
    monkeypatch.setattr(sharding.read, "MAX_REQUEST_BYTES", max_request)
    # every inner chunk counts as big enough to fan out
    monkeypatch.setattr(sharding._parallel, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(sharding.read, "_MIN_WORKER_BATCH", 1)
    root = tmp_path_factory.mktemp("shards")
    a = zarr3c.create_array(zarr3c.LocalStore(root), shape=shape, dtype="uint16",
                            chunks=shards, codecs=[_codec(inner, index_location, compressed)],
                            fill_value=7)
    expected = np.full(shape, 7, dtype="uint16")
    values = np.arange(expected.size, dtype="uint16").reshape(shape) + 100
    # leave some inner chunks missing: write a random sub-box only
    box = tuple(slice(data.draw(st.integers(0, n - 1)), None) for n in shape)
    a[box] = values[box]
    expected[box] = values[box]
    old = get_num_threads()
    set_num_threads(threads)
    try:
        np.testing.assert_array_equal(a[...], expected)
        for key in keys:
            np.testing.assert_array_equal(a[key], expected[key])
        for got, key in zip(a.get_many(keys), keys, strict=True):
            np.testing.assert_array_equal(got, expected[key])
    finally:
        set_num_threads(old)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_project_runs_matches_project_region(data):
    ndim = data.draw(st.integers(1, 3))
    inner = tuple(data.draw(st.integers(1, 5)) for _ in range(ndim))
    shard = tuple(i * data.draw(st.integers(1, 5)) for i in inner)
    runs, counts, region = [], [], []
    for n in shard:
        start = data.draw(st.integers(0, n - 1))
        step = data.draw(st.integers(1, 4))
        count = data.draw(st.integers(0, len(range(start, n, step))))
        runs.append((start, step))
        counts.append(count)
        region.append(slice(start, start + (count - 1) * step + 1 if count else start, step))
    codec = CodecPipeline.from_codecs([_codec(inner)], dtype=np.dtype("uint16"),
                                      fill_value=0).array_bytes
    got = codec.project_runs(shard, runs, counts)
    want = codec.project_region(shard, region)
    assert [[(i, k0, n, first) for i, k0, n, first in p] for p in got] == [
        [(i, o.start, o.stop - o.start, c.start) for i, o, c in p] for p in want]


def test_project_runs_refuses_runs_outside_the_shard():
    codec = CodecPipeline.from_codecs([_codec((2, 2))], dtype=np.dtype("uint16"),
                                      fill_value=0).array_bytes
    with pytest.raises(IndexError):
        codec.project_runs((4, 4), [(0, 1), (3, 1)], [1, 2])
    with pytest.raises(IndexError):
        codec.project_runs((4, 4), [(0, 1)], [1])


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_index_decoded_without_the_pipeline_matches_it(data):
    cps = tuple(data.draw(st.integers(1, 4)) for _ in range(data.draw(st.integers(1, 3))))
    inner = (2,) * len(cps)
    shard = tuple(2 * c for c in cps)
    codec = CodecPipeline.from_codecs([_codec(inner, "start")], dtype=np.dtype("uint16"),
                                      fill_value=0).array_bytes
    n = int(np.prod(cps))
    index_n = codec.index_nbytes(shard)
    entries = np.full((*cps, 2), 2**64 - 1, dtype=np.uint64)
    pos = index_n
    for f in range(n):
        if data.draw(st.booleans()):
            # (at most the 4 bytes of an inner chunk's encoding: a larger entry is damage)
            k = data.draw(st.integers(0, 4))
            entries.reshape(-1, 2)[f] = (pos, k)
            pos += k
    encoded = np.array(codec._index_pipeline().encode(entries)).view(np.uint8)
    got = codec.decode_index(encoded, shard, shard_nbytes=pos)
    want = codec._index_pipeline().decode(encoded, (*cps, 2))
    np.testing.assert_array_equal(got.entries, want)
    assert got.entries.flags.writeable
    corrupt = encoded.copy()
    corrupt[data.draw(st.integers(0, corrupt.size - 1))] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises(ChecksumError) as info:
        codec.decode_index(corrupt, shard)
    with pytest.raises(ChecksumError) as pipeline_info:
        codec._index_pipeline().decode(corrupt, (*cps, 2))
    assert str(info.value) == f"sharding_indexed: shard index: {pipeline_info.value}"


def _one_shard(tmp_path, compressed=False):
    """An 8-element array in one shard of two inner chunks, index first: (store, array,
    the shard's key)."""
    store = zarr3c.LocalStore(tmp_path)
    a = zarr3c.create_array(store, shape=(8,), dtype="uint16", chunks=(8,),
                            codecs=[_codec((4,), "start", compressed)])
    a[...] = np.arange(8, dtype="uint16")
    return store, a, a.chunk_key((0,))


@pytest.mark.parametrize("box", [slice(5, 6), slice(4, 8)], ids=["part", "whole-inner"])
def test_errors_of_the_short_path_name_the_shard(tmp_path, box):
    """A truncated shard read through the one-inner-chunk path names the key (a part of
    the cut inner chunk, or all of it, read straight into the output)."""
    store, a, key = _one_shard(tmp_path)
    store.set(key, store.get(key)[:-3])
    with pytest.raises(ChunkDecodeError, match="outside the shard") as info:
        a[box]
    assert info.value.key == key
    np.testing.assert_array_equal(a[0:4], np.arange(4, dtype="uint16"))


@pytest.mark.usefixtures("python_path")  # (the Python path's own steps)
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_an_inner_chunk_wanted_whole_is_read_straight_into_the_output(
        tmp_path, monkeypatch, index_location, store_kind, compressed) -> None:
    """Reading inner chunk by inner chunk: each one's stored bytes are read in one range,
    straight into the output (raw) or to be decoded straight into it (zstd); edge and
    missing inner chunks, and F order, as numpy."""
    store = zarr3c.LocalStore(tmp_path) if store_kind == "local" else zarr3c.MemoryStore()
    shape, inner = (9, 10, 6), (2, 5, 3)
    data = np.arange(np.prod(shape), dtype="<i4").reshape(shape)
    a = zarr3c.create_array(store, shape=shape, dtype="<i4", chunks=(4, 10, 6),
                            codecs=[_codec(inner, index_location, compressed, dtype="<i4")],
                            fill_value=-1)
    a[...] = data
    a[0:2, 5:10, 3:6] = -1  # an inner chunk of fill only: not stored
    data[0:2, 5:10, 3:6] = -1
    calls: list[list[tuple[int, int, int]]] = []
    original = type(store).read_ranges_into

    def spy(self, requests, out):
        calls.extend(ranges for _, ranges in requests)
        return original(self, requests, out)

    monkeypatch.setattr(type(store), "read_ranges_into", spy)
    # LocalStore reads the index and the inner chunk in one call: what it read, per call.
    fused: list[tuple[int | None, int, list[int], list[int]]] = []
    original_fused = type(store).read_shard_parts

    def spy_fused(self, key, index, at_end, slots, los, his, expect, staging, ats, lens):
        size = original_fused(self, key, index, at_end, slots, los, his, expect, staging,
                              ats, lens)
        fused.append((size, staging.nbytes, ats.tolist(), lens.tolist()))
        return size

    monkeypatch.setattr(type(store), "read_shard_parts", spy_fused)

    def no_shard_reader(*args, **kwargs):
        raise AssertionError("an inner chunk wanted whole went through the shard reader")

    monkeypatch.setattr(sharding.ShardingCodec, "read_inner_chunks_into",
                        no_shard_reader)
    nbytes = int(np.prod(inner)) * 4
    for i in range(0, 8, 2):  # (the last row of shards' inner chunks ends past the array)
        for j in range(0, 10, 5):
            for k in range(0, 6, 3):
                box = (slice(i, i + 2), slice(j, j + 5), slice(k, k + 3))
                calls.clear()
                fused.clear()
                np.testing.assert_array_equal(a[box], data[box])
                done = [f for f in fused if f[0] is not None]  # (MemoryStore: cannot)
                assert len(done) == (store_kind == "local")
                if (i, j, k) == (0, 5, 3):  # (missing: filled, nothing read)
                    assert calls == [] and all(lens == [-1] for *_, lens in done)
                    continue
                if done:  # (the output itself is the room the inner chunk is read into)
                    ((size, room, ats, lens),) = done
                    assert size and ats == [0] and calls == []
                    assert compressed or (lens == [nbytes] and room == nbytes)
                    continue
                ((start, stop, at),) = calls[-1]
                assert at == 0 and (compressed or stop - start == nbytes)
    f = zarr3c.open_array(store, mode="r", order="F") if store_kind == "local" else None
    if f is not None:
        got = f[2:4, 0:5, 3:6]
        assert got.flags.f_contiguous
        np.testing.assert_array_equal(got, data[2:4, 0:5, 3:6])


@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_a_shard_index_at_the_end_is_read_as_the_shard_s_tail(tmp_path, monkeypatch,
                                                               store_kind) -> None:
    """StoreRanges reads a lone suffix (the index) through Store.read_tail_into: one call
    per index read, whatever the store; a shard shorter than its index is an error naming
    it, and reads as numpy otherwise."""
    store = zarr3c.LocalStore(tmp_path) if store_kind == "local" else zarr3c.MemoryStore()
    data = np.arange(16, dtype="uint16")
    a = zarr3c.create_array(store, shape=(16,), dtype="uint16", chunks=(8,),
                            codecs=[_codec((4,), "end")])
    a[...] = data
    tails: list[tuple[str, int]] = []
    real = type(store).read_tail_into

    def spy(self, key, out):
        tails.append((key, len(out)))
        return real(self, key, out)

    monkeypatch.setattr(type(store), "read_tail_into", spy)
    first = a.chunk_key((0,))
    index = a._sharding.read_index(a._ranges_of(first), (8,), key=first)
    index_n = a._sharding.index_nbytes((8,))
    assert index is not None and tails == [(first, index_n)]
    np.testing.assert_array_equal(a[5:6], data[5:6])
    key = a.chunk_key((1,))
    store.set(key, store.get(key)[-index_n + 1:])
    with pytest.raises(ChunkDecodeError, match="shorter than its index") as info:
        a[12:13]
    assert info.value.key == key


def test_a_corrupt_inner_chunk_wanted_whole_is_an_error_naming_the_shard(tmp_path):
    store, a, key = _one_shard(tmp_path, compressed=True)
    raw = bytearray(store.get(key))
    index = a._sharding.decode_index(bytes(raw[:a._sharding.index_nbytes((8,))]), (8,))
    offset, nbytes = (int(v) for v in index.entries[1])
    raw[offset:offset + nbytes] = b"\xff" * nbytes  # no zstd frame
    store.set(key, bytes(raw))
    with pytest.raises(ChunkDecodeError) as info:
        a[4:8]
    assert info.value.key == key
    np.testing.assert_array_equal(a[0:4], np.arange(4, dtype="uint16"))


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=40), st.one_of(
    st.none(), st.tuples(st.integers(0, 50), st.one_of(st.none(), st.integers(0, 50))),
    st.tuples(st.integers(-50, -1), st.none())))
def test_local_store_one_range_matches_the_grouped_path(tmp_path_factory, value, rng):
    store = zarr3c.LocalStore(tmp_path_factory.mktemp("one"))
    store.set("k", value)
    (one,) = store.get_partial_values([("k", rng)])
    grouped = Store.get_partial_values(store, [("k", rng)])[0]
    assert bytes(one) == bytes(grouped)
    assert store.get_partial_values([("missing", rng)]) == [None]


# -- a batch of zstd inner chunks decoded and copied out in one kernel call -----------------------


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(read_case(), st.sampled_from(["uint8", "int16", "float32", "complex128"]),
       st.sampled_from([1, 2]), st.data())
def test_batches_decoded_in_one_call_match_the_per_chunk_path(monkeypatch, case, dtype, threads,
                                                              data):
    """Box reads of a sharded zstd array through ``zstd_ctx.decompress_pieces`` (the default)
    equal numpy and the reads with it off (each inner chunk decoded and copied on its own)."""
    shape, inner, shards, keys = case
    monkeypatch.setattr(sharding._parallel, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(sharding.read, "_MIN_WORKER_BATCH", 1)
    a = zarr3c.create_array(zarr3c.MemoryStore(), shape=shape, dtype=dtype, chunks=shards,
                            codecs=[_codec(inner, compressed=True)], fill_value=3)
    expected = np.full(shape, 3, dtype=dtype)
    box = tuple(slice(data.draw(st.integers(0, n - 1)), None) for n in shape)
    expected[box] = (np.arange(expected.size).reshape(shape) * 7 % 251)[box]
    a[box] = expected[box]
    batched = []
    real = zstd_ctx.decompress_pieces

    def spy(frames, *args):
        batched.append(len(frames))
        return real(frames, *args)

    monkeypatch.setattr(zstd_ctx, "decompress_pieces", spy)
    old = get_num_threads()
    set_num_threads(threads)
    try:
        reads = [a[...], *(a[key] for key in keys), *a.get_many(keys)]
        with monkeypatch.context() as m:
            m.setattr(sharding.ShardingCodec, "inner_batch_kernels", lambda self: None)
            calls = len(batched)
            unbatched = [a[...], *(a[key] for key in keys), *a.get_many(keys)]
            assert len(batched) == calls  # (off: no batch call)
    finally:
        set_num_threads(old)
    for got, other, key in zip(reads, unbatched, [..., *keys, *keys], strict=True):
        np.testing.assert_array_equal(got, expected[key])
        np.testing.assert_array_equal(other, expected[key])



@pytest.mark.skipif(not zstd_module._CONTEXTS, reason="numcodecs' libzstd is not visible")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.usefixtures("python_path")
def test_a_shard_s_inner_chunks_are_decoded_in_few_calls(monkeypatch, threads):
    """One call for a shard's inner chunks on one thread; a few parts per worker on two."""
    monkeypatch.setattr(sharding._parallel, "_PARALLEL_MIN_BYTES", 0)
    a = zarr3c.create_array(zarr3c.MemoryStore(), shape=(64, 8), dtype="uint16", chunks=(64, 8),
                            codecs=[_codec((4, 8), compressed=True)], fill_value=0)
    values = np.arange(64 * 8, dtype="uint16").reshape(64, 8) + 1
    a[...] = values
    batched = []
    real = zstd_ctx.decompress_pieces
    monkeypatch.setattr(zstd_ctx, "decompress_pieces",
                        lambda frames, *args: (batched.append(len(frames)), real(frames, *args))[1])
    old = get_num_threads()
    set_num_threads(threads)
    try:
        np.testing.assert_array_equal(a[1:63, 2:], values[1:63, 2:])
    finally:
        set_num_threads(old)
    assert sum(batched) == 16
    assert len(batched) == (1 if threads == 1 else 8)


@pytest.mark.skipif(not zstd_module._CONTEXTS, reason="numcodecs' libzstd is not visible")
@pytest.mark.parametrize("damage", ["garbage", "other size"])
def test_a_bad_inner_chunk_in_a_batch_is_reported_by_the_per_chunk_decode(damage):
    """The batch leaves an inner chunk it cannot decode to the ordinary decode, which
    names the shard and the inner chunk; the other chunks of the batch read as written."""
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, shape=(64,), dtype="uint16", chunks=(64,),
                            codecs=[_codec((4,), compressed=True)], fill_value=0)
    values = np.arange(64, dtype="uint16")
    a[...] = values
    shard = bytearray(store.get("c/0"))
    index = a._sharding._decode_index_from_shard(np.frombuffer(bytes(shard), np.uint8), (64,))
    offset, n = (int(v) for v in index.entries[(5,)])
    if damage == "garbage":
        shard[offset:offset + n] = b"\x28\xb5\x2f\xfd" + bytes(n - 4)
    else:  # a valid frame of one element less, in the same bytes
        frame = numcodecs.zstd.compress(values[20:23].tobytes(), 1)
        assert len(frame) <= n
        shard[offset:offset + len(frame)] = frame
        shard[offset + len(frame):offset + n] = bytes(n - len(frame))
    store.set("c/0", bytes(shard))
    with pytest.raises(ChunkDecodeError, match=r"c/0.*\(5,\)|\(5,\).*c/0"):
        a[...]
    np.testing.assert_array_equal(a[:20], values[:20])  # (inner chunks 0-4)


@pytest.mark.usefixtures("python_path")  # (the Python path's own steps)
@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("room_max", [0, 16 << 20])
def test_compressed_inner_chunks_too_large_for_one_call_read_the_index_first(
        tmp_path, monkeypatch, compressed, room_max) -> None:
    """A small read sets aside room for compressed inner chunks at their largest only up to
    ``ONE_CALL_ROOM_MAX``: past it the index is read first, then exactly their bytes (raw
    inner chunks, whose spans are known, always go in one call); either way as numpy, and
    an inner chunk not stored reads as the fill value."""
    from zarr3c.array.read import shard_boxes  # noqa: PLC0415 - the module's constant

    monkeypatch.setattr(shard_boxes, "ONE_CALL_ROOM_MAX", room_max)
    store = zarr3c.LocalStore(tmp_path)
    data = np.arange(6 * 8, dtype="uint16").reshape(6, 8)
    a = zarr3c.create_array(store, shape=data.shape, dtype="uint16", chunks=(6, 8),
                            codecs=[_codec((3, 4), "end", compressed)], fill_value=7)
    a[...] = data
    a[3:6, 4:8] = 7  # (an inner chunk of fill only: not stored)
    data[3:6, 4:8] = 7
    calls: list[int | None] = []
    real = type(store).read_shard_parts

    def spy(self, *args):
        calls.append(real(self, *args))
        return calls[-1]

    monkeypatch.setattr(type(store), "read_shard_parts", spy)
    for box in (np.s_[1:5, 2:7], np.s_[0:3, 0:4], np.s_[4, 5], np.s_[2:4, 3:5]):
        calls.clear()
        np.testing.assert_array_equal(a[box], data[box])
        assert len(calls) == (0 if compressed and room_max == 0 else 1)
        assert all(size is not None and size > 0 for size in calls)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["start", "end"]), st.booleans(), st.booleans(), st.data())
def test_a_damaged_shard_reads_the_same_through_the_short_path(
        tmp_path_factory, index_location, compressed, crc, data) -> None:
    """A shard file cut short, lengthened, or with bytes flipped (in its index or its inner
    chunks), read by small boxes on a LocalStore (the index and the parts in one call):
    each box gives exactly what the general path gives, or both raise a ChunkDecodeError
    naming the shard.  Never other data than the general path's, never another error."""
    store, a = _damaged_array(tmp_path_factory, index_location, compressed, crc)
    key = a.chunk_key((0, 0))
    _damage(store, key, data)
    for _ in range(4):
        lo = [data.draw(st.integers(0, 3)), data.draw(st.integers(0, 5))]
        box = tuple(slice(b, data.draw(st.integers(b + 1, e)))
                    for b, e in zip(lo, (4, 6), strict=True))
        try:
            want = read_general(a, box)
        except ChunkDecodeError as exc:
            with pytest.raises(ChunkDecodeError) as info:
                a[box]
            assert info.value.key == exc.key == key
            continue
        np.testing.assert_array_equal(a[box], want)
    # Every other read of the shard: its data, or a ChunkDecodeError naming it.
    rows = np.array([0, 3, 1, 2])
    cols = np.array([5, 0, 4, 1])
    for read in (lambda: a[...], lambda: a.get_many([np.s_[0:3, 1:5], np.s_[2, :]]),
                 lambda: a.vindex[rows, cols], lambda: a.oindex[rows, cols],
                 lambda: a.blocks[0, 0]):
        try:
            read()
        except ChunkDecodeError as exc:
            assert exc.key == key


def _damaged_array(tmp_path_factory, index_location, compressed, crc):
    """An 8x6 array of 4x6 shards of 2x3 inner chunks (one not stored): (store, array)."""
    codec = _codec((2, 3), index_location, compressed)
    if not crc:
        codec["configuration"]["index_codecs"] = codec["configuration"]["index_codecs"][:1]
    store = zarr3c.LocalStore(tmp_path_factory.mktemp("damaged"))
    a = zarr3c.create_array(store, shape=(8, 6), dtype="uint16", chunks=(4, 6),
                            codecs=[codec], fill_value=7)
    a[...] = np.arange(48, dtype="uint16").reshape(8, 6) + 100
    a[0:2, 3:6] = 7  # (an inner chunk not stored)
    return store, a


def _damage(store, key, data) -> None:
    """Cut the value at ``key`` short, lengthen it, or flip 1-4 of its bytes."""
    raw = bytearray(store.get(key))
    how = data.draw(st.sampled_from(["cut", "lengthen", "flip"]))
    if how == "cut":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "lengthen":
        raw += bytes(data.draw(st.integers(1, 40)))
    else:
        for at in data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=4)):
            raw[at] ^= data.draw(st.integers(1, 255))
    store.set(key, bytes(raw))


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["start", "end"]), st.booleans(), st.booleans(), st.data())
def test_writes_into_a_damaged_shard_succeed_or_leave_it_as_it_was(
        tmp_path_factory, index_location, compressed, crc, data) -> None:
    """Box, point and outer-product writes into a damaged shard (see above) either succeed
    or raise a ChunkDecodeError naming the shard, and a refused write leaves the shard's
    bytes as they were."""
    store, a = _damaged_array(tmp_path_factory, index_location, compressed, crc)
    key = a.chunk_key((0, 0))
    _damage(store, key, data)
    b0, b1 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 5))
    box = np.s_[b0:data.draw(st.integers(b0 + 1, 4)), b1:data.draw(st.integers(b1 + 1, 6))]
    for write in (lambda: a.__setitem__(box, 1),
                  lambda: a.vindex.__setitem__(([0, 3], [1, 4]), 2),
                  lambda: a.oindex.__setitem__(([0, 1], [2, 5]), 3)):
        before = store.get(key)
        try:
            write()
        except ChunkDecodeError as exc:
            assert exc.key == key
            assert store.get(key) == before


@pytest.mark.parametrize("how", ["short path", "general path"])
def test_a_huge_entry_in_an_index_without_checksum_is_an_error_not_an_allocation(
        tmp_path, how) -> None:
    """An index at the start without crc32c is not checked against the shard's size before
    its entries are used: an entry claiming 24 GiB must give a ChunkDecodeError naming the
    shard, not an attempt to set aside 24 GiB for it (numpy's MemoryError on this machine;
    found by the test above, on both paths)."""
    codec = _codec((2, 3), "start")
    codec["configuration"]["index_codecs"] = codec["configuration"]["index_codecs"][:1]
    store = zarr3c.LocalStore(tmp_path)
    a = zarr3c.create_array(store, shape=(8, 6), dtype="uint16", chunks=(4, 6),
                            codecs=[codec], fill_value=7)
    a[...] = np.arange(48, dtype="uint16").reshape(8, 6) + 100
    a[0:2, 3:6] = 7  # (an inner chunk not stored)
    key = a.chunk_key((0, 0))
    raw = bytearray(store.get(key))
    raw[0] ^= 1  # inner chunk (0, 0) one byte later
    raw[33] ^= 1  # inner chunk (1, 0) 256 bytes later ...
    raw[44] ^= 6  # ... and 24 GiB long
    store.set(key, bytes(raw))
    with pytest.raises(ChunkDecodeError,
                       match="outside the shard|more than any valid encoding") as info:
        if how == "short path":
            a[0:3, 0:1]
        else:
            read_general(a, np.s_[0:3, 0:1])
    assert info.value.key == key


@pytest.mark.parametrize("read", ["box", "general", "vindex", "oindex", "get_many"])
def test_an_entry_past_the_largest_file_offset_is_an_error_naming_the_shard(
        tmp_path, read) -> None:
    """An index at the start without crc32c whose entry's offset is 2**63 or more (a flipped
    top bit): every read of it raises a ChunkDecodeError naming the shard, rather than
    numpy's OverflowError on the way to a kernel or an InvalidKeyError for a negative
    range (the offset wrapped through int64; both found by the damaged-shard test)."""
    codec = _codec((2, 3), "start")
    codec["configuration"]["index_codecs"] = codec["configuration"]["index_codecs"][:1]
    store = zarr3c.LocalStore(tmp_path)
    a = zarr3c.create_array(store, shape=(4, 6), dtype="uint16", chunks=(4, 6),
                            codecs=[codec])
    a[...] = np.arange(24, dtype="uint16").reshape(4, 6)
    key = a.chunk_key((0, 0))
    raw = bytearray(store.get(key))
    raw[7] ^= 128  # inner chunk (0, 0): offset + 2**63
    store.set(key, bytes(raw))
    with pytest.raises(ChunkDecodeError, match="beyond any possible shard") as info:
        if read == "box":
            a[0:2, 0:3]
        elif read == "general":
            read_general(a, np.s_[0:2, 0:3])
        elif read == "vindex":
            a.vindex[[0, 1], [1, 2]]
        elif read == "oindex":
            a.oindex[[0, 1], [1, 2]]
        else:
            a.get_many([np.s_[0:2, 0:3], np.s_[1, 1:2]])
    assert info.value.key == key
