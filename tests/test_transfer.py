"""zarr3c.copy with chunks/shards/compressors: rechunking and re-encoding, chunk by chunk.

numpy is the oracle for the data; the destination's metadata is checked for the new grid and
codecs; errors are raised before anything is written.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import zarr3c
from zarr3c.array.geometry import grid_shape
from zarr3c.errors import InvalidArgumentError, ZarrError
from zarr3c.transfer import _regions

GZIP3 = {"name": "gzip", "configuration": {"level": 3}}


def _codec_names(a: zarr3c.Array) -> list[str]:
    return [c["name"] for c in a.metadata.to_dict()["codecs"]]


@pytest.fixture()
def source() -> tuple[zarr3c.MemoryStore, dict[str, np.ndarray]]:
    """A hierarchy with a regular, a sharded, a rectilinear and a partly written array."""
    store = zarr3c.MemoryStore()
    rng = np.random.default_rng(1)
    g = zarr3c.create_group(store, attributes={"title": "src"})
    data = {
        "reg": rng.integers(0, 1000, size=(30, 17, 9)).astype(">i4"),
        "sub/sh": rng.random((40, 24)).astype("float32"),
        "rect": rng.integers(0, 255, size=(25, 12)).astype("uint8"),
    }
    # big-endian serializer and a transpose filter: kept by a re-encoding copy
    g.create_array("reg", shape=(30, 17, 9), dtype=">i4", chunks=(7, 5, 9),
                   filters=[{"name": "transpose", "configuration": {"order": [2, 1, 0]}}],
                   serializer={"name": "bytes", "configuration": {"endian": "big"}},
                   attributes={"units": "m"}, dimension_names=["z", "y", "x"])[...] = data["reg"]
    g.create_array("sub/sh", shape=(40, 24), dtype="float32", chunks=(5, 6),
                   shards=(20, 12))[...] = data["sub/sh"]
    g.create_array("rect", shape=(25, 12), dtype="uint8",
                   chunks=[[10, 5, 10], [4, 8]])[...] = data["rect"]
    part = np.full((20, 20), np.nan, dtype="float64")
    part[:5, :5] = 1.5
    g.create_array("part", shape=(20, 20), dtype="float64", chunks=(5, 5),
                   fill_value=np.nan)[:5, :5] = 1.5
    data["part"] = part
    return store, data


def _check_data(dst: zarr3c.Group, data: dict[str, np.ndarray]) -> None:
    for path, expected in data.items():
        np.testing.assert_array_equal(dst[path][...], expected, err_msg=path)


def test_rechunk_and_recompress_every_array(source) -> None:
    store, data = source
    calls: list[tuple[str, int, int]] = []
    dst_store = zarr3c.MemoryStore()
    out = zarr3c.copy(store, dst_store, chunks=4, compressors=GZIP3,
                      progress=lambda *a: calls.append(a))
    assert isinstance(out, zarr3c.Group) and out.attrs["title"] == "src"
    dst = zarr3c.open_group(dst_store, mode="r")
    _check_data(dst, data)
    for path in data:
        a = dst[path]
        assert a.metadata.to_dict()["chunk_grid"] == {
            "name": "regular",
            "configuration": {"chunk_shape": [20, 12] if path == "sub/sh" else [4] * a.ndim}}
        assert a.chunks == (4,) * a.ndim  # inner chunks for the sharded one
    assert _codec_names(dst["reg"])[-1] == "gzip"
    sh_inner = dst["sub/sh"].metadata.to_dict()["codecs"][0]["configuration"]["codecs"]
    assert sh_inner[-1] == GZIP3 and dst["sub/sh"].shards == (20, 12)
    reg = dst["reg"]
    assert reg.metadata.to_dict()["codecs"][:2] == [
        {"name": "transpose", "configuration": {"order": [2, 1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
    ]
    assert reg.attrs["units"] == "m" and reg.metadata.dimension_names == ("z", "y", "x")
    # progress: each array reported up to its own number of destination chunks (shards)
    last = {path: (done, total) for path, done, total in calls}
    grids = {p: math.prod(grid_shape(dst[p])) for p in data}
    assert last == {p: (n, n) for p, n in grids.items()}
    # fill-only destination chunks are not stored
    assert dst["part"].nchunks_initialized == 4  # the 4 chunks the written 5x5 corner touches


@pytest.fixture()
def sharded() -> tuple[zarr3c.Array, np.ndarray]:
    """A sharded array at the root of its own store."""
    data = np.random.default_rng(2).random((40, 24)).astype("float32")
    a = zarr3c.create_array("memory://", shape=(40, 24), dtype="float32", chunks=(5, 6),
                            shards=(20, 12))
    a[...] = data
    return a, data


def test_sharded_source_keeps_shards_with_new_inner_chunks(sharded) -> None:
    src, data = sharded
    a = zarr3c.copy(src.store, zarr3c.MemoryStore(), chunks=(10, 4), compressors=None)
    assert isinstance(a, zarr3c.Array)
    assert a.shards == (20, 12) and a.chunks == (10, 4)
    inner = a.metadata.to_dict()["codecs"][0]["configuration"]["codecs"]
    assert inner == [{"name": "bytes", "configuration": {"endian": "little"}}]
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(("chunks", "shards"), [((10, 12), None), ((10, 12), (20, 24)),
                                                  ((8, 8), (16, 24))],
                         ids=["unshard", "reshard", "reshard-unaligned"])
def test_change_sharding(sharded, chunks, shards) -> None:
    src, data = sharded
    a = zarr3c.copy(src.store, zarr3c.MemoryStore(), chunks=chunks, shards=shards)
    assert isinstance(a, zarr3c.Array)
    assert a.shards == shards and a.chunks == chunks
    assert _codec_names(a)[0] == ("sharding_indexed" if shards else "bytes")
    np.testing.assert_array_equal(a[...], data)


def test_shard_an_unsharded_source(source) -> None:
    store, data = source
    dst_store = zarr3c.MemoryStore()
    zarr3c.copy(store, dst_store, chunks=2, shards=4)  # every array, whatever its rank
    dst = zarr3c.open_group(dst_store, mode="r")
    _check_data(dst, data)
    assert dst["reg"].shards == (4, 4, 4) and dst["reg"].chunks == (2, 2, 2)


def test_only_compressors_keeps_every_grid(source) -> None:
    store, data = source
    dst_store = zarr3c.MemoryStore()
    zarr3c.copy(store, dst_store, compressors=GZIP3)
    dst = zarr3c.open_group(dst_store, mode="r")
    _check_data(dst, data)
    src = zarr3c.open_group(store, mode="r")
    for path in data:
        assert dst[path].metadata.chunk_grid == src[path].metadata.chunk_grid, path
        assert dst[path].chunks == src[path].chunks and dst[path].shards == src[path].shards
    assert dst["rect"].chunks == ((10, 5, 10), (4, 8))
    sh_inner = dst["sub/sh"].metadata.to_dict()["codecs"][0]["configuration"]["codecs"]
    assert sh_inner[-1] == GZIP3


def test_rechunk_into_draft_2022(source) -> None:
    store, data = source
    del data["sub/sh"]  # the draft layout has no sharding
    src = zarr3c.open_group(store, mode="r+")
    del src["sub"]
    dst_store = zarr3c.MemoryStore()
    zarr3c.copy(store, dst_store, zarr_format="draft-2022", chunks=6)
    dst = zarr3c.open_group(dst_store, mode="r")
    assert dst.zarr_format == "draft-2022"
    _check_data(dst, data)
    assert dst["rect"].chunks == (6, 6)


def test_wrong_rank_is_refused_before_anything_is_written(source) -> None:
    store, _ = source
    dst_store = zarr3c.MemoryStore()
    dst_store.set("keep/me", b"x")
    with pytest.raises(InvalidArgumentError, match=r"'/reg'.*the array has 3"):
        zarr3c.copy(store, dst_store, chunks=(4, 4), overwrite=True)
    assert list(dst_store.list()) == ["keep/me"]


def test_an_option_the_layout_lacks_is_refused_naming_the_array(source) -> None:
    store, _ = source
    dst_store = zarr3c.MemoryStore()
    zarr3c.create_group(dst_store, attributes={"old": True})
    with pytest.raises(ZarrError, match="'/sub/sh'"):
        zarr3c.copy(store, dst_store, zarr_format="draft-2022", chunks=4, clear=True)
    # the destination was not cleared: the check ran first
    assert zarr3c.open_group(dst_store, mode="r").attrs["old"] is True


def test_clear_replaces_a_destination_in_another_layout(sharded) -> None:
    src, data = sharded
    dst_store = zarr3c.MemoryStore()
    zarr3c.create_group(dst_store).create_array("stale", shape=(3,), dtype="i1")
    with pytest.raises(ZarrError, match="layout"):  # one hierarchy never mixes layouts
        zarr3c.copy(src.store, dst_store, zarr_format="draft-2022", shards=None,
                    overwrite=True)
    a = zarr3c.copy(src.store, dst_store, zarr_format="draft-2022", shards=None, clear=True)
    assert a.zarr_format == "draft-2022" and not any("stale" in k for k in dst_store.list())
    np.testing.assert_array_equal(a[...], data)


def test_single_array_root_and_thread_counts_agree() -> None:
    data = np.arange(1000, dtype="int16").reshape(10, 100)
    src = zarr3c.create_array("memory://", shape=data.shape, dtype="int16", chunks=(3, 7))
    src[...] = data
    results = []
    for threads in (1, 3):
        zarr3c.set_num_threads(threads)
        try:
            out = zarr3c.copy(src.store, zarr3c.MemoryStore(), chunks=(4, 30))
        finally:
            zarr3c.set_num_threads(None)
        assert isinstance(out, zarr3c.Array) and out.chunks == (4, 30)
        results.append(dict((k, bytes(out.store.get(k))) for k in out.store.list()))
        np.testing.assert_array_equal(out[...], data)
    assert results[0] == results[1]


def test_encoded_copy_keeps_grids_and_bytes(source) -> None:
    store, data = source
    # a rectilinear grid whose last edge overflows the array: chunks are stored full-size
    zarr3c.create_array(store, "over", shape=(25,), dtype="int32", chunks=[[10, 10, 10]],
                        data=np.arange(25, dtype="int32"))
    src = zarr3c.open_group(store, mode="r")
    data["over"] = np.arange(25, dtype="int32")
    dst_store = zarr3c.MemoryStore()
    zarr3c.copy(store, dst_store)
    dst = zarr3c.open_group(dst_store, mode="r")
    _check_data(dst, data)
    for path in data:
        assert dst[path].metadata.to_dict() == src[path].metadata.to_dict(), path
    chunk_keys = [k for k in store.list() if not k.endswith("zarr.json")]
    assert sorted(chunk_keys) == sorted(k for k in dst_store.list() if not k.endswith("zarr.json"))
    for key in chunk_keys:
        assert bytes(dst_store.get(key)) == bytes(store.get(key)), key


def test_encoded_copy_reports_progress(source) -> None:
    store, _ = source
    calls: list[tuple[str, int, int]] = []
    zarr3c.copy(store, zarr3c.MemoryStore(), progress=lambda *a: calls.append(a))
    src = zarr3c.open_group(store, mode="r")
    last = {path: (done, total) for path, done, total in calls}
    assert last == {p: (_stored_objects(src[p]),) * 2 for p in ("reg", "sub/sh", "rect",
                                                                     "part")}


def _stored_objects(a: zarr3c.Array) -> int:
    """The chunks (shards, if sharded) stored for ``a``: ``nchunks_initialized`` counts a
    shard's inner chunks, as zarr-python 3.4 does."""
    return sum(1 for _ in a._stored_chunks())


@pytest.mark.parametrize(
    ("shape", "chunks", "shards"),
    [((10, 7), (3, 4), None), ((25, 12), [[10, 5, 10], [4, 8]], None),
     ((40, 24), (5, 6), (20, 12)), ((0, 5), (2, 2), None), ((), (), None)],
    ids=["regular", "rectilinear", "sharded", "empty", "0-d"],
)
def test_regions_tile_the_array_one_chunk_each(shape, chunks, shards) -> None:
    a = zarr3c.create_array("memory://", shape=shape, dtype="u1", chunks=chunks, shards=shards)
    seen = np.zeros(shape, dtype=int)
    grid_chunks = a.shards or a.chunks
    regions = list(_regions(a))
    assert len(regions) == math.prod(grid_shape(a))  # one per shard, if sharded
    for region in regions:
        seen[region] += 1
        if isinstance(grid_chunks[0] if grid_chunks else 0, int):
            assert all(s.stop - s.start <= c for s, c in zip(region, grid_chunks, strict=True))
    assert (seen == 1).all()


def test_destination_opens_in_zarr_python(source, tmp_path) -> None:
    zarr = pytest.importorskip("zarr", reason="zarr-python is needed for this interop check")
    store, data = source
    zstd = {"name": "zstd", "configuration": {"level": 5, "checksum": True}}
    zarr3c.copy(store, tmp_path / "out.zarr", chunks=4, shards=None, compressors=zstd)
    for path, expected in data.items():
        z = zarr.open_array(str(tmp_path / "out.zarr"), path=path, mode="r")
        assert z.chunks == (4,) * expected.ndim
        np.testing.assert_array_equal(z[...], expected, err_msg=path)


def _local_hierarchy(root) -> np.ndarray:
    data = np.arange(60, dtype="int32").reshape(6, 10)
    g = zarr3c.create_group(root)
    g.create_array("sub/a", shape=data.shape, dtype="int32", chunks=(3, 5))[...] = data
    return data


@pytest.mark.parametrize("clear", [False, True])
@pytest.mark.parametrize("direction", ["dst-contains-src", "src-contains-dst", "same"])
def test_copy_refuses_overlapping_local_stores_and_keeps_the_source(tmp_path, clear,
                                                                    direction) -> None:
    root = tmp_path / "root.zarr"
    data = _local_hierarchy(root)
    src, dst = {
        "dst-contains-src": (root / "sub", root),
        "src-contains-dst": (root, root / "sub" / "copy"),
        # the same directory through another spelling and as a Store
        "same": (zarr3c.LocalStore(root), str(tmp_path / "." / "root.zarr")),
    }[direction]
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.raises(InvalidArgumentError, match="inside|is the source"):
        zarr3c.copy(src, dst, clear=clear)
    with pytest.raises(InvalidArgumentError, match="inside|is the source"):
        zarr3c.copy(src, dst, clear=clear, chunks=(2, 2))
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    np.testing.assert_array_equal(zarr3c.open_array(root, "sub/a", mode="r")[...], data)


def test_copy_refuses_the_same_store_object_or_data() -> None:
    backing: dict = {}
    store = zarr3c.MemoryStore(backing)
    zarr3c.create_array(store, shape=(4,), dtype="i1", chunks=(2,))[...] = 5
    for dst in (store, zarr3c.MemoryStore(backing), store.with_read_only(False)):
        with pytest.raises(InvalidArgumentError, match="is the source"):
            zarr3c.copy(store, dst, clear=True)
    np.testing.assert_array_equal(zarr3c.open_array(store, mode="r")[...], 5)
    out = zarr3c.copy(store, zarr3c.MemoryStore(), clear=True)
    np.testing.assert_array_equal(out[...], 5)


def test_copy_to_a_sibling_with_a_common_name_prefix(tmp_path) -> None:
    # "a.zarr2" starts like "a.zarr" but is not inside it
    data = _local_hierarchy(tmp_path / "a.zarr")
    out = zarr3c.copy(tmp_path / "a.zarr", tmp_path / "a.zarr2", clear=True)
    np.testing.assert_array_equal(out["sub/a"][...], data)


@pytest.mark.parametrize("options", [{}, {"compressors": None}], ids=["encoded", "re-encoded"])
def test_an_interrupted_copy_stops_after_the_running_batch(options) -> None:
    """Ctrl-C (here raised by the progress callback) stops the copy after at most one batch
    of chunks per thread pool round, not after every chunk of the array."""
    src = zarr3c.create_array("memory://", shape=(200,), dtype="int16", chunks=(1,))
    src[...] = np.arange(200, dtype="int16")
    dst_store = zarr3c.MemoryStore()

    def interrupt(path: str, done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    zarr3c.set_num_threads(2)
    try:
        with pytest.raises(KeyboardInterrupt):
            zarr3c.copy(src.store, dst_store, progress=interrupt, **options)
    finally:
        zarr3c.set_num_threads(None)
    copied = [k for k in dst_store.list() if not k.endswith("zarr.json")]
    assert 0 < len(copied) <= 4 * 2


def test_reencoding_keeps_a_rectilinear_grid_with_an_overflowing_last_edge() -> None:
    store = zarr3c.MemoryStore()
    data = np.arange(25 * 6, dtype="int32").reshape(25, 6)
    src = zarr3c.create_array(store, shape=(25, 6), dtype="int32", chunks=[[10, 10, 10], [4, 4]],
                              data=data)
    out = zarr3c.copy(store, zarr3c.MemoryStore(), compressors=GZIP3)
    assert out.metadata.to_dict()["chunk_grid"] == src.metadata.to_dict()["chunk_grid"]
    assert out.metadata.to_dict()["codecs"][-1] == GZIP3
    np.testing.assert_array_equal(out[...], data)


def test_reencoding_refuses_codecs_outside_the_sharding_codec() -> None:
    store = zarr3c.MemoryStore()
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}]}}
    src = zarr3c.create_array(store, "a", shape=(8,), dtype="int16", chunks=(4,),
                              codecs=[sharding, GZIP3], data=np.arange(8, dtype="int16"))
    assert _codec_names(src) == ["sharding_indexed", "gzip"]
    dst_store = zarr3c.MemoryStore()
    with pytest.raises(InvalidArgumentError, match=r"'/a'.*\['gzip'\]"):
        zarr3c.copy(store, dst_store, compressors=None)
    assert list(dst_store.list()) == []
    out = zarr3c.copy(store, dst_store)  # a plain copy keeps them
    assert _codec_names(out["a"]) == ["sharding_indexed", "gzip"]
    np.testing.assert_array_equal(out["a"][...], np.arange(8))


class _CountingStore(zarr3c.MemoryStore):
    """A MemoryStore recording every chunk key read (as a remote store's requests)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def _record(self, keys):
        self.reads += [k for k in keys if not k.endswith("zarr.json")]

    def get(self, key):
        self._record([key])
        return super().get(key)

    def get_many(self, keys):
        keys = list(keys)
        self._record(keys)
        return super().get_many(keys)

    def get_partial_values(self, key_ranges):
        key_ranges = list(key_ranges)
        self._record(k for k, _ in key_ranges)
        return super().get_partial_values(key_ranges)


@pytest.mark.parametrize(("options", "rows_read"), [
    ({"chunks": (2, 5)}, {0, 16}), ({"compressors": None}, {0, 16}),
    # whole shards (8 rows: source chunk rows 0-3 and 16-19) are read around stored chunks
    ({"chunks": (4, 5), "shards": (8, 10)}, {0, 1, 2, 3, 16, 17, 18, 19}),
])
def test_reencoding_a_sparse_source_reads_only_around_its_stored_chunks(options,
                                                                          rows_read) -> None:
    store = _CountingStore()
    src = zarr3c.create_array(store, shape=(40, 10), dtype="int16", chunks=(2, 5), fill_value=-1)
    src[0, 0] = 7
    src[33, 9] = 8
    expected = src[...]
    store.reads.clear()
    calls: list[tuple[str, int, int]] = []
    out = zarr3c.copy(store, zarr3c.MemoryStore(), progress=lambda *a: calls.append(a),
                      **options)
    assert {"c/0/0", "c/16/1"} <= set(store.reads)
    assert {int(k.split("/")[1]) for k in store.reads} <= rows_read
    np.testing.assert_array_equal(out[...], expected)
    assert calls[-1][1:] == (math.prod(grid_shape(out)),) * 2  # shards
