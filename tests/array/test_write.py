"""Whole-chunk writes (encoded straight from the value) against the general read-modify-write
path and numpy: chunked and sharded, edge chunks, F-order and broadcast values, fill-only
chunks; and the memory bound of a whole-shard write."""

from __future__ import annotations

import gzip
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.array.write import byte_source as _byte_source
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.indexing import ChunkTask

ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


def _contents(store: zarr3c.MemoryStore) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list() if not k.endswith("zarr.json")}


def _files(root) -> dict[str, bytes]:
    """Every file below ``root`` (a LocalStore's), by path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def _array(store, shape, chunks, shards, compressors, index_location, write_empty_chunks):
    if shards is None:
        return zarr3c.create_array(store, shape=shape, dtype="int16", chunks=chunks,
                                   compressors=compressors, fill_value=7,
                                   write_empty_chunks=write_empty_chunks)
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}, *(compressors or [])]
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunks), "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location}}]
    return zarr3c.create_array(store, shape=shape, dtype="int16", chunks=shards,
                               codecs=codecs, fill_value=7,
                               write_empty_chunks=write_empty_chunks)


@st.composite
def write_case(draw):
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    sharded = draw(st.booleans())
    shards = tuple(c * draw(st.integers(1, 3)) for c in chunks) if sharded else None
    shape = tuple(draw(st.integers(1, 10)) for _ in range(ndim))
    # A region from a chunk-aligned start to anywhere (the end: edge chunks), so that some
    # chunks are covered whole and others only partly.
    grid = shards or chunks
    region = []
    for n, c in zip(shape, grid, strict=True):
        start = c * draw(st.integers(0, (n - 1) // c))
        region.append(slice(start, draw(st.integers(start + 1, n))))
    return shape, chunks, shards, tuple(region)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=write_case(), compressed=st.booleans(), index_location=st.sampled_from(["start", "end"]),
       order=st.sampled_from(["C", "F", "broadcast", "scalar"]),
       write_empty=st.booleans(), data=st.data())
def test_whole_chunk_writes_store_what_the_general_path_stores(
        case, compressed, index_location, order, write_empty, data) -> None:
    shape, chunks, shards, region = case
    counts = tuple(s.stop - s.start for s in region)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    # Mostly the fill value (7): whole chunks and inner chunks of it are left out.
    value = np.where(rng.random(counts) < 0.8, 7, rng.integers(-5, 5, counts)).astype("int16")
    if order == "F":
        value = np.asfortranarray(value)
    elif order == "broadcast":
        value = np.broadcast_to(value[(slice(None),) * (len(counts) - 1) + (slice(0, 1),)],
                                counts)
    elif order == "scalar":
        value = np.int16(data.draw(st.sampled_from([7, 3])))
    compressors = ZSTD if compressed else None
    expected = np.full(shape, 7, dtype="int16")
    expected[region] = value

    fast_store = zarr3c.MemoryStore()
    a = _array(fast_store, shape, chunks, shards, compressors, index_location, write_empty)
    a[region] = value
    np.testing.assert_array_equal(a[...], expected)

    general_store = zarr3c.MemoryStore()
    b = _array(general_store, shape, chunks, shards, compressors, index_location, write_empty)
    with pytest.MonkeyPatch.context() as m:  # every chunk through the read-modify-write path
        m.setattr(ChunkTask, "covers", lambda *args: False)
        b[region] = value
    np.testing.assert_array_equal(b[...], expected)
    fast, general = _contents(fast_store), _contents(general_store)
    if shards is not None and write_empty:
        # The general path erases a shard left without inner chunks; a whole write keeps
        # its index alone when asked to write empty chunks (as ShardingCodec.encode does).
        fast = {k: v for k, v in fast.items() if k in general}
    assert fast == general


@pytest.mark.parametrize("sharded", [False, True])
def test_fill_only_chunks_are_not_stored(sharded) -> None:
    store = zarr3c.MemoryStore()
    a = _array(store, (8, 8), (2, 2), (4, 4) if sharded else None, ZSTD, "end", False)
    value = np.full((8, 8), 7, dtype="int16")
    value[5, 6] = 1  # one chunk (one shard, one inner chunk of it) holds data
    a[...] = value
    keys = sorted(_contents(store))
    assert keys == (["c/1/1"] if sharded else ["c/2/3"])
    np.testing.assert_array_equal(a[...], value)
    if sharded:
        codec = a._sharding
        raw = bytes(store.get("c/1/1"))
        index = codec.decode_index(raw[-codec.index_nbytes((4, 4)):], (4, 4))
        assert index.present.sum() == 1 and index.present[0, 1]
    a[...] = 7
    assert _contents(store) == {}


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_byte_source_reads_any_layout(shape, data) -> None:
    big = [2 * n for n in shape]
    base = np.arange(np.prod(big), dtype="int32").reshape(big)
    steps = [data.draw(st.sampled_from([1, 2, -1])) for _ in shape]
    view = base[tuple(slice(None, None, s) for s in steps)]
    view = view[tuple(slice(0, n) for n in shape)]
    if data.draw(st.booleans()):
        view = np.asfortranarray(view)
    buf, strides = _byte_source(view)
    got = np.lib.stride_tricks.as_strided(buf.view("int32"), shape=view.shape, strides=strides)
    np.testing.assert_array_equal(got, view)
    assert all(s >= 0 for s in strides)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compressors", [None, ZSTD], ids=["uncompressed", "zstd"])
def test_a_whole_sharded_write_holds_about_one_shard_per_worker(tmp_path, threads,
                                                                compressors, read_path) -> None:
    """Inner chunks are encoded from views of the value: a whole write of two 8 MiB shards
    holds (besides the input) one shard per worker plus per-worker inner-chunk scratch, not
    the shard array, its encoded pieces and the assembled shard (3 shards each); compressed,
    only the encoded pieces of one shard per worker.  On both paths (the native one's
    encodings are allocated where tracemalloc sees them)."""
    import tracemalloc

    data = (np.arange(64 * 256 * 256, dtype=np.uint32) % 65521).astype(np.uint16)
    data = np.asfortranarray(data.reshape(64, 256, 256))  # F order: not copied either
    shard_nbytes = 64 * 256 * 128 * 2
    old = get_num_threads()
    set_num_threads(threads)
    try:
        a = zarr3c.create_array(zarr3c.LocalStore(tmp_path), shape=data.shape, dtype="uint16",
                                chunks=(32, 32, 32), shards=(64, 256, 128),
                                compressors=compressors)
        tracemalloc.start()
        try:
            a[...] = data
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        set_num_threads(old)
    np.testing.assert_array_equal(a[...], data)
    assert peak <= threads * shard_nbytes * 1.1 + (1 << 20), peak / shard_nbytes
    if compressors:
        # Never a whole-shard buffer: the encoded pieces of one shard per worker, which the
        # store writes one after another without joining them.
        stored = max(p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file())
        assert stored < shard_nbytes / 2
        assert peak <= threads * stored * 1.1 + (1 << 20), (peak, stored)


def test_a_part_arena_hands_out_disjoint_memory_reused_after_reset(monkeypatch) -> None:
    from zarr3c.codecs import sharding
    from zarr3c.codecs.sharding import PartArena

    monkeypatch.setattr(sharding.write, "_ARENA_BLOCK_BYTES", 100)
    arena = PartArena()
    sizes = [30, 50, 40, 0, 250, 10, 100]
    parts = [arena.put(np.full(n, i, dtype=np.uint8)) for i, n in enumerate(sizes)]
    for i, (n, part) in enumerate(zip(sizes, parts, strict=True)):
        assert part.nbytes == n and (part == i).all()  # nothing overwrote another
    addresses = sorted(p.ctypes.data for p in parts if p.nbytes)
    arena.reset()
    again = [arena.put(np.full(n, 9, dtype=np.uint8)) for n in sizes]
    assert sorted(p.ctypes.data for p in again if p.nbytes) == addresses  # the same memory
    assert arena.take(1000).nbytes == 1000  # larger than a block: a block of its own


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compressors", [None, [{"name": "zstd", "configuration": {"level": 0}}],
                                         [{"name": "gzip", "configuration": {"level": 1}}]])
def test_shards_written_through_the_arena_match_those_written_without(tmp_path, monkeypatch,
                                                                     threads, compressors):
    """Parts kept in the writing thread's arena, reused from shard to shard, give the same
    stored shards as fresh memory (with fill-only inner chunks and edge shards)."""
    from zarr3c.codecs import sharding

    monkeypatch.setattr(sharding.write, "_ARENA_BLOCK_BYTES", 512)  # many blocks, reused
    # gzip stores the time of compression in its header: one clock for both writes, or they
    # differ whenever a second ticks between them.
    monkeypatch.setattr(gzip, "time", types.SimpleNamespace(time=lambda: 1_700_000_000))
    data = np.arange(40 * 36 * 20, dtype=np.int32).reshape(40, 36, 20) % 1000
    data[8:16] = 0  # fill-only inner chunks
    stored = {}
    real = sharding.ShardingCodec.encode_region
    old = get_num_threads()
    set_num_threads(threads)
    try:
        for arena in (True, False):
            if not arena:
                monkeypatch.setattr(sharding.ShardingCodec, "encode_region",
                                    lambda self, *a, arena=None: real(self, *a))
            root = tmp_path / str(arena)
            a = zarr3c.create_array(zarr3c.LocalStore(root), shape=data.shape, dtype="int32",
                                    chunks=(8, 6, 5), shards=(16, 12, 20),
                                    compressors=compressors, fill_value=0)
            a[...] = data
            np.testing.assert_array_equal(a[...], data)
            stored[arena] = _files(root)
    finally:
        set_num_threads(old)
    assert stored[True] == stored[False]
    assert len(stored[True]) == 1 + 3 * 3  # zarr.json and 9 shards


def test_a_whole_sharded_write_reuses_each_threads_arena(tmp_path, monkeypatch,
                                                        python_path) -> None:
    """Shard after shard, a thread's parts go to the same arena blocks: the blocks
    allocated over a whole write are about one shard's encodings per thread, not every
    shard's (the Python path's arena: the native pipeline frees each shard's encodings
    once it is written)."""
    from zarr3c.codecs import sharding

    allocated: list[int] = []
    real_take = sharding.PartArena.take

    def take(self, nbytes):
        before = len(self._blocks)
        view = real_take(self, nbytes)
        allocated.extend(b.nbytes for b in self._blocks[before:])
        return view

    monkeypatch.setattr(sharding.PartArena, "take", take)
    monkeypatch.setattr(sharding.write, "_ARENA_BLOCK_BYTES", 1 << 14)
    data = np.random.default_rng(0).integers(0, 200, (64, 64, 64), dtype=np.uint16)
    old = get_num_threads()
    set_num_threads(2)
    try:
        a = zarr3c.create_array(zarr3c.LocalStore(tmp_path), shape=data.shape, dtype="uint16",
                                chunks=(16, 16, 16), shards=(32, 32, 32),
                                compressors=[{"name": "zstd", "configuration": {"level": 0}}])
        a[...] = data
    finally:
        set_num_threads(old)
    np.testing.assert_array_equal(a[...], data)
    largest = max(p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file())
    # 8 shards over 2 threads: about one shard's encodings per thread (with the blocks'
    # unused tails), not four
    assert 0 < sum(allocated) <= 2 * 1.5 * largest, (sum(allocated), largest)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("grid", ["regular", "rectilinear", "sharded"])
@pytest.mark.parametrize("checksum", [False, True])
def test_chunks_compressed_into_kept_memory_match_numcodecs_encode(tmp_path, monkeypatch,
                                                                   threads, grid, checksum):
    """Chunks and inner chunks compressed into the writer's own memory through a kept zstd
    context (``encode_into``) are stored byte for byte as ``numcodecs.Zstd.encode`` stores
    them: whole and partial writes, edge chunks, chunks of several sizes, fill-only chunks."""
    from zarr3c.codecs import zstd as zstd_module

    if not zstd_module._COMPRESS:
        pytest.skip("numcodecs' libzstd compressor symbols are not visible")
    rng = np.random.default_rng(11)
    data = np.asfortranarray(rng.integers(0, 50, (37, 30, 21), dtype=np.int16))
    data[:10] = 0  # fill-only chunks
    zstd = [{"name": "zstd", "configuration": {"level": 1, "checksum": checksum}}]
    chunks: object = {"regular": (8, 7, 16), "sharded": (4, 6, 8),
                      "rectilinear": [[10, 20, 7], [3, 27], [21]]}[grid]
    stored = {}
    old = get_num_threads()
    set_num_threads(threads)
    try:
        for kept in (True, False):
            monkeypatch.setattr(zstd_module, "_COMPRESS", kept)
            root = tmp_path / str(kept)
            a = zarr3c.create_array(zarr3c.LocalStore(root), shape=data.shape, dtype="int16",
                                    chunks=chunks, compressors=zstd, fill_value=0,
                                    shards=(8, 12, 16) if grid == "sharded" else None)
            a[...] = data
            a[3:20, 5, 2:19] = 9  # partial: read-modify-write of chunks and inner chunks
            expected = data.copy()
            expected[3:20, 5, 2:19] = 9
            np.testing.assert_array_equal(a[...], expected)
            stored[kept] = _files(root)
    finally:
        set_num_threads(old)
    assert stored[True] == stored[False]
    assert len(stored[True]) > 3
