"""Many step-1 boxes at once (``get_many`` and ``a[box]`` through ``many.read_boxes``:
one plan kernel call, one output buffer, raw chunks and raw inner chunks read by byte ranges
straight into a staging buffer; ``a[box]`` inside one shard through ``read_shard_box``).  Oracles: numpy, and the general path; on a LocalStore
(its ``read_ranges_into``) and a MemoryStore (the store's default), with edge chunks,
missing chunks, shards and inner chunks, fill values, F order and big-endian data, and
corrupt chunks raising ChunkDecodeError naming the key."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.array.read import many, shard_boxes
from zarr3c.errors import ChunkDecodeError
from zarr3c.testing.reads import read_general

# Every test on both read paths: the native pipeline and the Python path.
pytestmark = pytest.mark.usefixtures("read_path")

SHAPE = (11, 13, 7)
ZSTD = [{"name": "zstd", "configuration": {"level": 0}}]
LAYOUTS: dict[str, dict[str, Any]] = {
    "raw": {"chunks": (4, 5, 3), "compressors": None},
    "zstd": {"chunks": (4, 5, 3), "compressors": ZSTD},
    "big-endian": {"chunks": (4, 5, 3), "compressors": None,
                   "serializer": {"name": "bytes", "configuration": {"endian": "big"}}},
    "sharded": {"chunks": (2, 3, 3), "shards": (4, 6, 6), "compressors": None},
    "sharded-zstd": {"chunks": (2, 3, 3), "shards": (4, 6, 6), "compressors": ZSTD},
    # (gzip cannot decode into given memory: inner chunks decoded, then copied out)
    "sharded-gzip": {"chunks": (2, 3, 3), "shards": (4, 6, 6),
                     "compressors": [{"name": "gzip", "configuration": {"level": 1}}]},
    "sharded-crc-end": {"chunks": (2, 3, 3), "shards": (4, 6, 6), "compressors": None,
                        "index_crc": False},
}


def _make(store: Any, layout: str, dtype: str, order: str) -> tuple[zarr3c.Array, np.ndarray]:
    opts = dict(LAYOUTS[layout])
    if opts.pop("index_crc", True) is False:
        # shards whose index has no crc32c: read whole to check the index
        opts = {"codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(opts["chunks"]), "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}}],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}],
            "chunks": opts["shards"]}
    data = (np.arange(np.prod(SHAPE)).reshape(SHAPE) % 251 - 20).astype(dtype)
    a = zarr3c.create_array(store, shape=SHAPE, dtype=dtype, fill_value=3, order=order, **opts)
    # Regions equal to the fill value are not stored: whole chunks, inner chunks, shards.
    data[0:4, 0:5, 0:3] = 3
    data[4:6, 6:9, 3:6] = 3
    data[8:11, 6:13, :] = 3
    a[...] = data
    return a, data


def _box(n: int) -> st.SearchStrategy:
    return st.integers(0, n - 1).flatmap(
        lambda lo: st.one_of(st.integers(lo + 1, n).map(lambda hi: slice(lo, hi)),
                             st.just(lo), st.just(lo - n)))


boxes = st.tuples(_box(SHAPE[0]), _box(SHAPE[1]), _box(SHAPE[2]))


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype,order", [("uint16", "C"), ("float64", "F"), (">i4", "C")])
@pytest.mark.parametrize("kind", ["local", "memory"])
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(boxes, min_size=1, max_size=12))
def test_boxes_equal_numpy_and_the_general_path(tmp_path_factory, kind: str, layout: str,
                                                dtype: str, order: str, keys: list) -> None:
    store = (zarr3c.LocalStore(tmp_path_factory.mktemp("boxes")) if kind == "local"
             else zarr3c.MemoryStore())
    a, data = _make(store, layout, dtype, order)
    # a missing shard / chunk erased outright too
    store.erase(a.chunk_key((2, 2, 1)))
    if "sharded" in layout:
        data[8:11, 12:13, 6:7] = 3
    else:
        data[8:11, 10:13, 3:6] = 3
    many = a.get_many(keys)
    for key, got in zip(keys, many, strict=True):
        want = data[key]
        general = read_general(a, key)
        one = a[key]
        for value in (got, one):
            assert type(value) is type(want) or np.ndim(want) == 0
            assert np.shape(value) == np.shape(want)
            np.testing.assert_array_equal(value, want)
            np.testing.assert_array_equal(value, general)
            if np.ndim(value) > 1:
                assert value.flags.f_contiguous if order == "F" else value.flags.c_contiguous


@pytest.mark.parametrize("layout", ["sharded", "sharded-zstd", "sharded-gzip",
                                    "sharded-crc-end"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("box", [np.s_[3:5, 4, 2:4],          # two shards
                                 np.s_[3:5, 5:7, 0:2],        # four
                                 np.s_[3:5, 5:7, 5:7],        # eight
                                 np.s_[7:9, 11:13, 5:7],      # eight, one not stored
                                 np.s_[2:6, 4:8, 4:8]])       # eight, parts of many inner
def test_a_small_box_across_shards_reads_each_shard_s_part_by_the_short_path(
        tmp_path, monkeypatch, layout: str, order: str, box: Any) -> None:
    """A box across two to eight shards: each shard's part by ``read_shard_box``, never
    the many-boxes path; numpy's values, in the array's memory order."""
    store = zarr3c.LocalStore(tmp_path)
    a, data = _make(store, layout, "int16", order)
    store.erase(a.chunk_key((1, 1, 1)))
    data[4:8, 6:12, 6:7] = 3
    want = data[box]
    monkeypatch.setattr(many, "read_boxes",
                        lambda array, boxes: pytest.fail("many-boxes path"))
    got = a[box]
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape
    assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous


def test_a_box_across_more_shards_takes_the_many_boxes_path_and_a_bad_one_is_named(
        tmp_path, monkeypatch) -> None:
    """Past eight shards the box goes to the many-boxes path; a damaged shard among a few
    is reported, naming it."""
    store = zarr3c.LocalStore(tmp_path)
    a, data = _make(store, "sharded", "int16", "C")
    taken: list[int] = []
    real = many.read_boxes

    def spy(array, boxes):
        taken.append(len(boxes))
        return real(array, boxes)

    monkeypatch.setattr(many, "read_boxes", spy)
    box = np.s_[1:10, 1:12, 1:7]  # 3 x 2 x 2 shards
    np.testing.assert_array_equal(a[box], data[box])
    assert taken == [1]
    box = np.s_[3:5, 5:7, 5:7]
    _corrupt(store, a.chunk_key((1, 1, 1)), "truncate")
    with pytest.raises(ChunkDecodeError) as info:
        a[box]
    assert info.value.key == a.chunk_key((1, 1, 1))  # (by either path)


def test_a_box_across_shards_with_a_part_too_large_reads_nothing_twice(tmp_path,
                                                                        monkeypatch) -> None:
    """A box across two shards whose part in one of them touches more inner chunks than
    the short path takes goes to the many-boxes path before any part is read."""
    data = np.arange(512, dtype="int16").reshape(8, 8, 8)
    a = zarr3c.create_array(zarr3c.LocalStore(tmp_path), shape=data.shape, dtype="int16",
                            chunks=(1, 1, 1), shards=(4, 4, 4), compressors=None)
    a[...] = data
    calls = {"shard": 0, "many": 0}
    shard_box, many_boxes = shard_boxes.read_shard_box, many.read_boxes

    def count_shard(array, box):
        calls["shard"] += 1
        return shard_box(array, box)

    def count_many(array, boxes):
        calls["many"] += 1
        return many_boxes(array, boxes)

    monkeypatch.setattr(shard_boxes, "read_shard_box", count_shard)
    monkeypatch.setattr(many, "read_boxes", count_many)
    box = np.s_[2:6, 0:3, 0:3]  # 2 x 3 x 3 inner chunks in each of two shards
    np.testing.assert_array_equal(a[box], data[box])
    assert calls == {"shard": 1, "many": 1}  # (the one-shard try, then the many-boxes path)


@pytest.mark.parametrize("layout", ["sharded-zstd", "sharded-gzip"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_box_across_compressed_inner_chunks_decodes_them_side_by_side(
        tmp_path, monkeypatch, layout: str, threads: int) -> None:
    """A box inside one shard across several compressed inner chunks: each decoded (on the
    pool's threads when there are two, each into its own scratch: the Python path's fan-out
    or, natively, one kernel call for the box) and its part placed; numpy's values; a
    damaged inner chunk among them is reported naming the shard."""
    from zarr3c._kernels import chunks as chunks_kernel
    from zarr3c.array.read import native
    from zarr3c.concurrency import set_num_threads

    store = zarr3c.LocalStore(tmp_path)
    a, data = _make(store, layout, "int16", "C")
    fanned: list[int] = []
    real = shard_boxes.map_unordered

    def spy(fn, items):
        items = list(items)
        fanned.append(len(items))
        return real(fn, items)

    monkeypatch.setattr(shard_boxes, "map_unordered", spy)
    kernel_calls: list[int] = []
    kernel = chunks_kernel.read_shards
    monkeypatch.setattr(chunks_kernel, "read_shards",
                        lambda *args, **kw: kernel_calls.append(1) or kernel(*args, **kw))
    set_num_threads(threads)
    try:
        boxes = (np.s_[4:8, 6:12, 0:6], np.s_[5:7, 7:11, 2:5], np.s_[4:6, 8:10, 4])
        for box in boxes:
            np.testing.assert_array_equal(a[box], data[box])
        if native.enabled:
            assert kernel_calls == [1] * len(boxes) and not fanned
        else:
            assert fanned and all(n > 1 for n in fanned)
        _corrupt(store, a.chunk_key((1, 1, 0)), "garble")
        with pytest.raises(ChunkDecodeError) as info:
            a[np.s_[4:8, 6:12, 0:6]]
        assert info.value.key == a.chunk_key((1, 1, 0))
    finally:
        set_num_threads(None)


@pytest.mark.parametrize("layout", ["raw", "zstd", "sharded", "sharded-zstd"])
def test_boxes_over_many_chunks_and_repeats(tmp_path, layout: str) -> None:
    a, data = _make(zarr3c.LocalStore(tmp_path), layout, "int16", "C")
    rng = np.random.default_rng(3)
    keys = []
    for _ in range(300):
        lo = [int(rng.integers(0, n)) for n in SHAPE]
        keys.append(tuple(slice(x, int(rng.integers(x + 1, n + 1))) for x, n in zip(lo, SHAPE)))
    keys += keys[:20]  # the same boxes again
    for key, got in zip(keys, a.get_many(keys), strict=True):
        np.testing.assert_array_equal(got, data[key])


def _corrupt(store: zarr3c.LocalStore, key: str, how: str) -> None:
    raw = bytearray(store.get(key))
    if how == "truncate":
        store.set(key, bytes(raw[:-3]))
    elif how == "extend":
        store.set(key, bytes(raw) + b"xyz")
    else:  # garble the middle
        for i in range(len(raw) // 4, len(raw) // 2):
            raw[i] ^= 0x5A
        store.set(key, bytes(raw))


@pytest.mark.parametrize("layout,how,chunk,box", [
    ("raw", "truncate", (1, 1, 1), np.s_[4:5, 5:6, 3:4]),
    ("raw", "extend", (1, 1, 1), np.s_[4:5, 5:6, 3:4]),
    ("zstd", "garble", (1, 1, 1), np.s_[4:6, 5:7, 3:4]),
    ("sharded", "truncate", (1, 1, 0), np.s_[7, 11, 5]),
    ("sharded-crc-end", "truncate", (1, 1, 0), np.s_[4, 6, 0]),
    ("sharded-zstd", "garble", (0, 0, 1), np.s_[0:4, 0:6, 6:7]),
    ("sharded-gzip", "garble", (0, 0, 1), np.s_[0:4, 0:6, 6:7]),
])
@pytest.mark.parametrize("many", [True, False], ids=["get_many", "getitem"])
def test_corrupt_chunks_name_the_key(tmp_path, layout: str, how: str, chunk: tuple,
                                     box: Any, many: bool) -> None:
    store = zarr3c.LocalStore(tmp_path)
    a, _ = _make(store, layout, "uint16", "C")
    key = a.chunk_key(chunk)
    _corrupt(store, key, how)
    with pytest.raises(ChunkDecodeError) as info:
        if many:
            a.get_many([np.s_[0, 0, 0], box, np.s_[10, 12, 6]])
        else:
            a[box]
    assert info.value.key == key
    with pytest.raises(ChunkDecodeError):
        read_general(a, box)


def test_sharded_inner_chunk_of_the_wrong_size_names_the_shard(tmp_path) -> None:
    """An index entry whose length is not the raw inner chunk's: the shard reader's error."""
    store = zarr3c.LocalStore(tmp_path)
    a, _ = _make(store, "sharded", "uint16", "C")
    key = a.chunk_key((1, 1, 0))
    codec = a._sharding
    shard = bytearray(store.get(key))
    n = codec.index_nbytes(a._box_grid.chunk_shape)
    index = np.frombuffer(bytes(shard[-n:-4]), dtype="<u8").reshape(-1, 2).copy()
    present = np.flatnonzero(index[:, 0] != 2**64 - 1)
    index[present[0], 1] -= 2
    from zarr3c.codecs.crc32c import Crc32cCodec  # noqa: PLC0415 - test-only helper
    body = index.tobytes()
    shard[-n:] = bytes(Crc32cCodec().encode(np.frombuffer(body, np.uint8)))
    store.set(key, bytes(shard))
    for read in (lambda box: a.get_many([box]), a.__getitem__):
        with pytest.raises(ChunkDecodeError) as info:
            read(np.s_[4:8, 6:12, 0:6])
        assert info.value.key == key


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("how", [None, "missing", "truncate", "extend"])
def test_whole_raw_chunks_read_straight_into_the_output(tmp_path, kind: str, how: Any) -> None:
    """A box holding whole raw chunks (each one C-ordered piece of the output) is read
    straight into the output; a chunk of the wrong size is still an error naming its key,
    a missing one reads as the fill value."""
    store = zarr3c.LocalStore(tmp_path) if kind == "local" else zarr3c.MemoryStore()
    a, data = _make(store, "raw", "uint16", "C")
    key = a.chunk_key((1, 1, 1))
    if how == "missing":
        store.erase(key)
        data[4:8, 5:10, 3:6] = 3
    elif how is not None:
        _corrupt(store, key, how)
    for box in (np.s_[4:8, 5:10, 3:6], np.s_[4:8, 5:10, 0:6], np.s_[0:8, 5:10, 3:6]):
        if how in ("truncate", "extend"):
            with pytest.raises(ChunkDecodeError) as info:
                a[box]
            assert info.value.key == key
            continue
        np.testing.assert_array_equal(a[box], data[box])
        np.testing.assert_array_equal(a.get_many([box, box])[1], data[box])
