"""vindex and oindex on sharded arrays read only the inner chunks they touch: against numpy.

Covers edge shards, missing shards and inner chunks, repeated points, several dtypes (raw
inner chunks read by byte range without decoding, byte-swapped and compressed ones decoded),
and corrupt or truncated shards, which must raise zarr3c errors naming the shard's key.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import ChunkDecodeError

# Every test on both read paths: the native pipeline and the Python path.
pytestmark = pytest.mark.usefixtures("read_path")

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
# (dtype, compressors, inner serializer endian): raw native elements, byte-swapped, compressed
VARIANTS = [("uint16", None, "little"), ("float64", None, "little"), ("int32", None, "big"),
            ("uint8", None, "little"), ("int16", ZSTD, "little"), ("complex64", None, "little"),
            ("uint8", ZSTD, "little"), ("complex128", ZSTD, "little")]


def _sharded(shape, shards, chunks, variant, *, fill_value=7):
    dtype, compressors, endian = variant
    a = zarr3c.create_array(
        "memory://", shape=shape, dtype=dtype, chunks=chunks, shards=shards,
        compressors=compressors, serializer={"name": "bytes", "configuration": {"endian": endian}},
        fill_value=fill_value)
    return a


@st.composite
def sharded_case(draw):
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    shape = tuple(draw(st.integers(1, 3 * s)) for s in shards)  # edge shards likely
    variant = draw(st.sampled_from(VARIANTS))
    # Which part is written: everything, nothing, or a box (missing shards / inner chunks).
    box = tuple(slice(draw(st.integers(0, n)), None, draw(st.integers(1, 3))) for n in shape)
    written = draw(st.sampled_from(["all", "none", "box"]))
    return shape, shards, chunks, variant, written, box


def _written(case):
    """The case's sharded array, written as it says, and the numpy array it equals."""
    shape, shards, chunks, variant, written, box = case
    a = _sharded(shape, shards, chunks, variant)
    dtype = np.dtype(variant[0])
    data = np.full(shape, 7, dtype=dtype)
    if written != "none":
        values = (np.arange(int(np.prod(shape))) % 251 + 11).astype(dtype).reshape(shape)
        if written == "all":
            data = values
        else:
            data[box] = values[box]
        a[...] = data
    return a, data


@SETTINGS
@given(sharded_case(), st.data())
def test_sharded_vindex_matches_numpy(case, draw) -> None:
    shape = case[0]
    a, data = _written(case)
    n = draw.draw(st.integers(0, 40))
    # Points with repeats, negative indices too, in a 2-d broadcast shape sometimes.
    pts = tuple(np.array(draw.draw(st.lists(st.integers(-s, s - 1), min_size=n, max_size=n)),
                         dtype=np.int64) for s in shape)
    if n % 2 == 0 and n:
        pts = tuple(p.reshape(2, -1) for p in pts)
    expected = data[pts]
    got = a.vindex[pts]
    assert got.dtype == data.dtype
    np.testing.assert_array_equal(got, expected)


@SETTINGS
@given(sharded_case(), st.data())
def test_sharded_oindex_matches_numpy(case, draw) -> None:
    shape = case[0]
    a, data = _written(case)
    key, ix = [], []
    for s in shape:
        kind = draw.draw(st.sampled_from(["ints", "ints", "slice", "int"]))
        if kind == "ints":
            k = np.array(draw.draw(st.lists(st.integers(-s, s - 1), max_size=7)),
                         dtype=np.int64)
            ix.append(k)
        elif kind == "slice":
            k = slice(draw.draw(st.integers(0, s)), None, draw.draw(st.sampled_from([1, 2, -1])))
            ix.append(np.arange(s)[k])
        else:
            k = draw.draw(st.integers(-s, s - 1))
            ix.append(np.array([k]))
        key.append(k)
    expected = data[np.ix_(*ix)]
    drop = tuple(i for i, k in enumerate(key) if isinstance(k, int))
    if drop:
        expected = expected.squeeze(axis=drop)
    np.testing.assert_array_equal(a.oindex[tuple(key)], expected)


@pytest.mark.parametrize("variant", VARIANTS[:3] + VARIANTS[4:5], ids=lambda v: str(v[:3]))
def test_sharded_point_writes_match_numpy(variant) -> None:
    rng = np.random.default_rng(0)
    shape = (10, 7, 9)
    a = _sharded(shape, (4, 4, 6), (2, 2, 3), variant)
    data = np.full(shape, 7, dtype=variant[0])
    for _ in range(3):
        pts = tuple(rng.integers(0, s, 25) for s in shape)
        values = rng.integers(0, 100, 25).astype(variant[0])
        a.vindex[pts] = values
        data[pts] = values  # repeats: the last one wins, in both
        rows, cols = rng.integers(0, 10, 4), rng.integers(0, 7, 3)
        a.oindex[rows, cols, 1:5] = 3
        data[np.ix_(rows, cols, np.arange(1, 5))] = 3
    np.testing.assert_array_equal(a[...], data)
    pts = tuple(rng.integers(0, s, 50) for s in shape)
    np.testing.assert_array_equal(a.vindex[pts], data[pts])


def test_point_writes_rewrite_only_the_inner_chunks_holding_points(monkeypatch) -> None:
    from zarr3c.codecs.sharding import ShardingCodec

    a = zarr3c.create_array("memory://", shape=(8, 8), dtype="int32", chunks=(2, 2),
                            shards=(8, 8), fill_value=0)
    data = np.arange(64, dtype="int32").reshape(8, 8)
    a[...] = data
    seen: list[set] = []
    update = ShardingCodec.update_shard

    def spy(self, old, shard_shape, chunks, **kw):
        seen.append(set(chunks))
        return update(self, old, shard_shape, chunks, **kw)

    monkeypatch.setattr(ShardingCodec, "update_shard", spy)
    a.vindex[[0, 7, 7], [0, 7, 6]] = [-1, -2, -3]  # opposite corners of the one shard
    data[[0, 7, 7], [0, 7, 6]] = [-1, -2, -3]
    assert seen == [{(0, 0), (3, 3)}]  # not the 16 inner chunks of their bounding box
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[0]}-{v[2]}-{bool(v[1])}")
def test_missing_inner_chunks_and_shards_read_the_fill_value(variant) -> None:
    a = _sharded((16, 8), (8, 8), (4, 4), variant)
    data = np.full((16, 8), 7, dtype=variant[0])
    data[5:7, 5:] = 1  # shard (0, 0): only inner chunk (1, 1) stored; shard (1, 0) missing
    a[...] = data
    rows, cols = np.arange(16).repeat(8), np.tile(np.arange(8), 16)
    np.testing.assert_array_equal(a.vindex[rows, cols], data[rows, cols])
    np.testing.assert_array_equal(a.oindex[[6, 0, 9, 6], [7, 1, 5]],
                                  data[np.ix_([6, 0, 9, 6], [7, 1, 5])])


def _corruptible(variant):
    a = _sharded((8, 8), (8, 8), (4, 4), variant)
    a[...] = np.arange(64).reshape(8, 8)
    key = a.chunk_key((0, 0))
    return a, a._store, key


@pytest.mark.parametrize("variant", [VARIANTS[0], VARIANTS[2], VARIANTS[4]],
                         ids=["raw", "swapped", "zstd"])
def test_truncated_shard_raises_naming_the_key(variant) -> None:
    a, store, key = _corruptible(variant)
    raw = bytes(store.get(key))
    # Drop bytes from the middle: the index (at the end) now points past the data.
    store.set(key, raw[:40] + raw[-(4 * 16 + 4):])
    pts = (np.array([0, 7, 5]), np.array([0, 7, 2]))
    with pytest.raises(ChunkDecodeError, match=key):
        a.vindex[pts]
    with pytest.raises(ChunkDecodeError, match=key):
        a.oindex[[0, 7], [1, 6]]


def test_raw_inner_chunk_of_the_wrong_size_raises_naming_the_key() -> None:
    a, store, key = _corruptible(VARIANTS[0])
    codec = a._sharding
    index = codec.decode_index(bytes(store.get(key))[-(4 * 16 + 4):], (8, 8))
    entries = index.entries.copy()
    entries[1, 1, 1] -= 2  # inner chunk (1, 1): two bytes short, still inside the shard
    fixed = codec._index_pipeline().encode(entries)
    raw = bytes(store.get(key))
    store.set(key, raw[:-(4 * 16 + 4)] + bytes(np.asarray(fixed).tobytes()))
    with pytest.raises(ChunkDecodeError, match=key) as info:
        a.vindex[np.array([6]), np.array([6])]
    assert "(1, 1)" in str(info.value)
    # Points in the other inner chunks still read.
    np.testing.assert_array_equal(a.vindex[np.array([0, 3]), np.array([1, 2])], [1, 26])


def test_corrupt_compressed_inner_chunk_raises_naming_the_key() -> None:
    a, store, key = _corruptible(VARIANTS[4])
    raw = bytearray(store.get(key))
    raw[0:8] = b"\xff" * 8  # the first inner chunk's frame header
    store.set(key, bytes(raw))
    with pytest.raises(ChunkDecodeError, match=key):
        a.vindex[np.array([0, 1]), np.array([1, 0])]
    with pytest.raises(ChunkDecodeError, match=key):
        a.oindex[[0, 1], [1, 0]]


# -- unsharded chunks of raw elements: points copied from the stored bytes, sparse ones read
# by byte range --------------------------------------------------------------------------------


def _store(local: bool) -> zarr3c.Store:
    return zarr3c.LocalStore(tempfile.mkdtemp(prefix="zarr3c-points-")) if local else \
        zarr3c.MemoryStore()


@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["float64", "uint16", ">i4"]), st.integers(0, 3), st.data())
def test_raw_chunk_vindex_matches_numpy(local, dtype, missing, draw) -> None:
    shape = (150, 70)
    a = zarr3c.create_array(_store(local), shape=shape, dtype=dtype, chunks=(64, 64),
                            compressors=None, fill_value=5)
    data = (np.arange(150 * 70) % 1000).astype(dtype).reshape(shape)
    a[...] = data
    if missing:  # one chunk not stored: reads the fill value
        a._store.erase(a.chunk_key((missing - 1, 1)))
        data[(missing - 1) * 64:missing * 64, 64:] = 5
    n = draw.draw(st.sampled_from([1, 3, 6, 200]))  # sparse (byte ranges) and dense (whole)
    rows = np.array(draw.draw(st.lists(st.integers(-150, 149), min_size=n, max_size=n)))
    cols = np.array(draw.draw(st.lists(st.integers(-70, 69), min_size=n, max_size=n)))
    np.testing.assert_array_equal(a.vindex[rows, cols], data[rows, cols])


@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
@pytest.mark.parametrize("npoints", [2, 300], ids=["ranges", "whole"])
@pytest.mark.parametrize("delta", [-2, 2, 4096], ids=["short", "long", "longer"])
def test_raw_chunk_of_the_wrong_size_raises_naming_the_key(local, npoints, delta) -> None:
    a = zarr3c.create_array(_store(local), shape=(64, 64), dtype="float64", chunks=(64, 64),
                            compressors=None, fill_value=0)
    a[...] = 1.0
    key = a.chunk_key((0, 0))
    raw = bytes(a._store.get(key))
    a._store.set(key, raw[:delta] if delta < 0 else raw + b"\0" * delta)
    rng = np.random.default_rng(npoints)
    with pytest.raises(ChunkDecodeError, match=key):
        a.vindex[rng.integers(0, 64, npoints), rng.integers(0, 64, npoints)]


def _spied_zstd_shard(monkeypatch: pytest.MonkeyPatch, call: str
                      ) -> tuple[zarr3c.Array, np.ndarray, list[int]]:
    """A (64, 8) int16 array of one zstd shard of 16 inner chunks (any shard big enough to
    go to the pool), written, and the sizes of the batches ``zstd_ctx.<call>`` is handed."""
    from zarr3c._kernels import zstd_ctx
    from zarr3c.codecs import sharding
    from zarr3c.codecs import zstd as zstd_module

    if not zstd_module._CONTEXTS:
        pytest.skip("numcodecs' libzstd is not visible")
    monkeypatch.setattr(sharding._parallel, "_PARALLEL_MIN_BYTES", 0)
    a = _sharded((64, 8), (64, 8), (4, 8), ("int16", ZSTD, "little"))
    data = (np.arange(64 * 8) % 251 + 11).astype("int16").reshape(64, 8)
    a[...] = data
    batched: list[int] = []
    real = getattr(zstd_ctx, call)
    monkeypatch.setattr(zstd_ctx, call,
                        lambda frames, *args: (batched.append(len(frames)), real(frames, *args))[1])
    return a, data, batched


@pytest.mark.parametrize("threads", [1, 2])
def test_a_shard_s_zstd_inner_chunks_are_decoded_for_points_in_few_calls(monkeypatch,
                                                                        threads) -> None:
    """Points in a shard's zstd inner chunks: decoded and copied out in one call per batch
    (``zstd_ctx.decompress_elements``) on one thread, a few parts per worker on two; the
    result equals numpy (the Python path's batches: the native pipeline reads them all in
    one call)."""
    from zarr3c.array.read import native
    from zarr3c.concurrency import get_num_threads, set_num_threads

    monkeypatch.setattr(native, "enabled", False)
    a, data, batched = _spied_zstd_shard(monkeypatch, "decompress_elements")
    pts = (np.arange(0, 64, 3)[::-1], np.arange(0, 64, 3) % 8)
    old = get_num_threads()
    set_num_threads(threads)
    try:
        np.testing.assert_array_equal(a.vindex[pts], data[pts])
    finally:
        set_num_threads(old)
    assert sum(batched) == 16
    assert len(batched) == (1 if threads == 1 else 8)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_shard_s_zstd_inner_chunks_are_decoded_for_oindex_in_few_calls(monkeypatch,
                                                                        threads) -> None:
    """An outer product over a shard's zstd inner chunks: decoded and copied out in one call
    per batch (``zstd_ctx.decompress_outer``) on one thread, one per run on two; the result
    equals numpy and the inner chunk by inner chunk path (the Python path's batches: the
    native pipeline reads them all in one call)."""
    from zarr3c.array.read import native
    from zarr3c.codecs import sharding
    from zarr3c.concurrency import get_num_threads, set_num_threads

    monkeypatch.setattr(native, "enabled", False)
    a, data, batched = _spied_zstd_shard(monkeypatch, "decompress_outer")
    rows, cols = np.arange(0, 64, 3)[::-1], np.array([7, 0, 3, 3])
    old = get_num_threads()
    set_num_threads(threads)
    try:
        got = a.oindex[rows, cols]
        np.testing.assert_array_equal(got, data[np.ix_(rows, cols)])
        assert sum(batched) == 16
        # (on two threads the shard's inner chunks are cut into 2 * 2 runs, one call each:
        # points.split_shard_outer)
        assert len(batched) == (1 if threads == 1 else 2 * threads)
        monkeypatch.setattr(sharding.ShardingCodec, "inner_batch_kernels",
                            lambda self: None)
        np.testing.assert_array_equal(a.oindex[rows, cols], got)
        assert sum(batched) == 16  # (not called again)
    finally:
        set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 3, 8])
@pytest.mark.parametrize("variant", [VARIANTS[0], VARIANTS[4]], ids=["raw", "zstd"])
def test_oindex_over_fewer_shards_than_threads_is_cut_into_runs(monkeypatch, threads,
                                                                variant) -> None:
    """An oindex over two stored shards and a missing one, on up to 8 threads: each shard
    of compressed inner chunks cut into runs read on workers of their own
    (``split_shard_outer``), every shard's index read once, the result equal to numpy's
    (the Python path's runs: the native pipeline reads every shard in one call)."""
    from zarr3c.array.read import native, points
    from zarr3c.codecs import sharding
    from zarr3c.concurrency import get_num_threads, set_num_threads

    monkeypatch.setattr(native, "enabled", False)
    monkeypatch.setattr(sharding._parallel, "_PARALLEL_MIN_BYTES", 0)
    a = _sharded((48, 16), (16, 16), (2, 4), variant)
    data = np.full((48, 16), 7, dtype=a.dtype)
    data[:32] = (np.arange(32 * 16) % 97).reshape(32, 16)
    data[3:5, 4:8] = 7  # (an inner chunk left missing: it reads as the fill value)
    a[...] = data
    runs: list[int] = []
    indexes_read: list[str] = []
    real_split, real_index = points.split_shard_outer, sharding.ShardingCodec.read_index

    def split(*args, **kwargs):
        work = real_split(*args, **kwargs)
        runs.append(0 if work is None else len(work.runs))
        return work

    def read_index(self, get_ranges, shard_shape, *, key=None):
        indexes_read.append(key)
        return real_index(self, get_ranges, shard_shape, key=key)

    monkeypatch.setattr(points, "split_shard_outer", split)
    monkeypatch.setattr("zarr3c.array.read.general.split_shard_outer", split)
    monkeypatch.setattr(sharding.ShardingCodec, "read_index", read_index)
    rows = np.array([40, 1, 30, 17, 1, 44, 8, 25, 3])
    cols = np.array([15, 0, 4, 9, 9, 2])
    old = get_num_threads()
    set_num_threads(threads)
    try:
        got = a.oindex[rows, cols]
    finally:
        set_num_threads(old)
    np.testing.assert_array_equal(got, data[np.ix_(rows, cols)])
    # (one run per shard on one thread or for raw inner chunks, which have only copies to
    # share; else enough runs for every thread; the missing shard has none)
    assert sorted(runs)[0] == 0 and len(runs) == 3
    one_each = threads == 1 or variant[1] is None
    assert runs.count(1) == 2 if one_each else sum(runs) >= threads
    assert sorted(indexes_read) == sorted(set(indexes_read))  # (once per shard)
