"""Writes through the native pipeline (``zarr3c.array.write.native``) against the Python path.

Every test writes the same values twice, once with the native pipeline enabled and once on
the Python path, into stores of their own: the files must be the same, byte for byte, and
read back as numpy says they should.  The chunks a write covers only in part, and chains or
stores the kernel does not write, take the Python path and must be unaffected.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c._kernels import writes as _writes
from zarr3c.array.read import native as read_native
from zarr3c.array.write import native
from zarr3c.errors import ReadOnlyError, StoreError

LE, BE = ({"name": "bytes", "configuration": {"endian": e}} for e in ("little", "big"))
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
TRANSPOSE = {"name": "transpose", "configuration": {"order": [1, 0]}}
CHAINS = {
    "raw": [LE],
    "big-endian": [BE],
    "zstd": [LE, ZSTD],
    "zstd+crc32c": [BE, ZSTD, {"name": "crc32c"}],
    "crc32c x2": [LE, {"name": "crc32c"}, {"name": "crc32c"}],
    "transpose": [TRANSPOSE, LE],
    "transpose+zstd": [TRANSPOSE, BE, ZSTD],
    # (one block per chunk: numcodecs' threads cannot reorder blocks, so the bytes agree)
    "blosc": [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                      "shuffle": "shuffle"}}],
    "gzip+crc32c": [BE, {"name": "gzip", "configuration": {"level": 6}}, {"name": "crc32c"}],
}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: Any, **create: Any
          ) -> tuple[dict[str, bytes], dict[str, bytes], list[int]]:
    """``write(array)`` on a fresh array with the native pipeline and on the Python path:
    the two stores' files, and how many chunks (shards) each native kernel call wrote."""
    written: list[int] = []

    def counting(kernel: Any) -> Any:
        def call(dests: list[Any], *args: Any, **kwargs: Any) -> None:
            kernel(dests, *args, **kwargs)
            written.append(len(dests))
        return call

    for name in ("write_chunks", "write_shards"):
        monkeypatch.setattr(_writes, name, counting(getattr(_writes, name)))
    stores = []
    for path in ("native", "python"):
        monkeypatch.setattr(read_native, "enabled", path == "native")
        root = tmp_path / path
        a = zarr3c.create_array(str(root), **create)
        write(a)
        stores.append(_files(root))
    monkeypatch.setattr(read_native, "enabled", True)
    return stores[0], stores[1], written


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("dtype", ["u1", "<i2", ">f8", "<c16"])
def test_whole_writes_store_the_python_paths_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chain: str, dtype: str) -> None:
    data = (np.arange(23 * 17).reshape(23, 17) % 11).astype(dtype)
    data[5:10, 4:8] = 0  # one chunk of the fill value: erased, not written

    def write(a: zarr3c.Array) -> None:
        a[:] = data
        np.testing.assert_array_equal(a[:], data)

    native_files, python_files, written = _both(
        tmp_path, monkeypatch, write, shape=data.shape, chunks=(5, 4), dtype=dtype,
        codecs=CHAINS[chain], fill_value=0)
    assert native_files == python_files
    assert "c/1/1" not in native_files and "c/1/0" in native_files
    assert written == [5 * 5]


@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_chunks_equal_to_the_fill_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        write_empty_chunks: bool) -> None:
    def write(a: zarr3c.Array) -> None:
        a[:] = 1
        a[:8] = 7  # the first two rows of chunks back to the fill value
        np.testing.assert_array_equal(a[:8], 7)
        np.testing.assert_array_equal(a[8:], 1)

    native_files, python_files, written = _both(
        tmp_path, monkeypatch, write, shape=(16, 8), chunks=(4, 4), dtype="i4",
        fill_value=7, write_empty_chunks=write_empty_chunks)
    assert native_files == python_files
    chunk_files = [k for k in native_files if "/c/" in f"/{k}"]
    assert len(chunk_files) == (8 if write_empty_chunks else 4)
    assert written == [8, 4]


@pytest.mark.parametrize("chain", ["zstd", "transpose", "gzip+crc32c"])
def test_partly_covered_chunks_are_read_modified_and_written_natively(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chain: str) -> None:
    data = np.arange(100, dtype="u2").reshape(10, 10)

    def write(a: zarr3c.Array) -> None:
        a[1:9, 2:10:1] = data[1:9, 2:10]
        a[::3, 5] = 99  # steps
        a[8:0:-3, 9] = 98  # a reversed run
        a[4, 1:3] = np.uint16(7)  # a scalar
        a[1:3, 2:4] = 0  # chunk (0, 0) back to the fill value: erased
        expected = np.zeros((10, 10), dtype="u2")
        expected[1:9, 2:10] = data[1:9, 2:10]
        expected[::3, 5] = 99
        expected[8:0:-3, 9] = 98
        expected[4, 1:3] = 7
        expected[1:3, 2:4] = 0
        np.testing.assert_array_equal(a[:], expected)

    native_files, python_files, written = _both(
        tmp_path, monkeypatch, write, shape=(10, 10), chunks=(3, 4), dtype="u2",
        codecs=CHAINS[chain])
    assert native_files == python_files
    assert "c/0/0" not in native_files and "c/0/1" in native_files
    # rows 3:9 by columns 4:8 and 8:10 whole; then the other 5 chunks the box touches,
    # the 4 chunks of column 5, the 3 of column 9, the one of row 4, and chunk (0, 0),
    # each write's in one call
    assert written == [4, 5, 4, 3, 1, 1]


def test_partial_chunks_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "PARTIAL_BYTES_PER_THREAD", 1)  # one chunk a batch

    def write(a: zarr3c.Array) -> None:
        a[1:8, 1:3] = 5  # (chunks of 4 x 4: two in part, rows 0:4 and 4:8 of columns 0:4)
        np.testing.assert_array_equal(a[1:8, 1:3], 5)
        np.testing.assert_array_equal(a[0], 0)

    native_files, python_files, written = _both(
        tmp_path, monkeypatch, write, shape=(8, 8), chunks=(4, 4), dtype="<f4")
    assert native_files == python_files
    assert written == [1, 1]


def test_what_the_partial_path_leaves_to_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Index arrays (not runs), shards, and a damaged chunk (reported by key; the other
    chunks of the write are written)."""
    data = np.arange(100, dtype="<i4").reshape(10, 10)

    def write(a: zarr3c.Array) -> None:
        a[...] = data
        a.oindex[[2, 0, 1], [1, 3]] = -1  # (rows 2, 0, 1 of chunk row 0: not a run)
        a[1:3, 5:7] = -2  # (a run, in part of a shard)
        expected = data.copy()
        expected[np.ix_([2, 0, 1], [1, 3])] = -1
        expected[1:3, 5:7] = -2
        np.testing.assert_array_equal(a[:], expected)

    for create in ({"chunks": (3, 4)}, {"chunks": (2, 2), "shards": (4, 4)}):
        sub = tmp_path / str(len(os.listdir(tmp_path)))
        sub.mkdir()
        native_files, python_files, written = _both(
            sub, monkeypatch, write, shape=(10, 10), dtype="<i4", **create)
        assert native_files == python_files
        # the whole write (9 shards, or 12 chunks); then, unsharded, the run's chunk (not
        # the index arrays')
        if "shards" in create:
            assert sum(written) == 9, written
        else:
            assert written == [12, 1], written
    store = zarr3c.LocalStore(tmp_path / "d.zarr")
    a = zarr3c.create_array(store, shape=(10, 10), chunks=(3, 4), dtype="<i4",
                            codecs=CHAINS["zstd"])
    a[...] = data
    store.set("c/1/1", b"not a zstd frame")
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match="c/1/1"):
        a[2:5, 3:6] = 0
    assert store.get("c/1/1") == b"not a zstd frame"
    np.testing.assert_array_equal(a[2:3, 3:4], 0)  # (chunk 0/0's part was written)


def test_no_temporary_file_is_left(tmp_path: Path) -> None:
    a = zarr3c.create_array(str(tmp_path), shape=(64, 64), chunks=(8, 8), dtype="f4")
    a[:] = np.ones((64, 64), dtype="f4")
    names = [p.name for p in tmp_path.rglob("*")]
    assert not [n for n in names if ".zarr3c-tmp-" in n]
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 64 + 1


def test_a_chunk_the_kernel_cannot_write_is_reported_by_key(tmp_path: Path) -> None:
    a = zarr3c.create_array(str(tmp_path), shape=(8, 8), chunks=(4, 4), dtype="u1")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "1").write_bytes(b"a file where a directory must be")
    with pytest.raises(StoreError, match="c/1/[01]"):
        a[:] = 3
    np.testing.assert_array_equal(a[:4], 3)  # the chunks that could be written were
    with pytest.raises(StoreError, match="c/1/0"):
        a[1:6, 1:3] = 4  # (chunks in part: read, modified, written by the kernels)
    np.testing.assert_array_equal(a[1:4, 1:3], 4)
    assert (tmp_path / "c" / "1").read_bytes() == b"a file where a directory must be"


def _values(store: zarr3c.Store) -> dict[str, bytes]:
    return {key: bytes(store.get(key) or b"") for key in sorted(store.list())}


class _CountingStore(zarr3c.MemoryStore):
    """A memory store counting the values handed to ``set_many`` in each call."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def set_many(self, items: Any) -> None:
        items = list(items)
        self.batches.append(len(items))
        super().set_many(items)


def test_unsharded_arrays_on_value_stores_take_the_python_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # (there the Python path is as fast: one scratch buffer a thread, in cache)
    monkeypatch.setattr(_writes, "write_chunks", None)  # (never called)
    store = _CountingStore()
    a = zarr3c.create_array(store, shape=(8, 8), chunks=(4, 4), dtype="<u2",
                            codecs=CHAINS["zstd+crc32c"])
    a[:] = np.arange(64, dtype="<u2").reshape(8, 8)
    np.testing.assert_array_equal(a[:], np.arange(64).reshape(8, 8))
    assert store.batches == []


@pytest.mark.parametrize("options", [{"fsync": True}, {"process_locks": True}])
def test_local_stores_the_kernel_does_not_write_files_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, bool]) -> None:
    # (fsync, cross-process locks: the store writes its files itself, through set_many)
    def write(a: zarr3c.Array) -> None:
        a[:] = np.arange(40, dtype="u1")
        np.testing.assert_array_equal(a[:], np.arange(40))

    stores = []
    for path in ("native", "python"):
        monkeypatch.setattr(read_native, "enabled", path == "native")
        store = zarr3c.LocalStore(str(tmp_path / path), **options)
        assert store.chunk_write_files("", ["c/0"]) is None
        write(zarr3c.create_array(store, shape=(40,), shards=(8,), chunks=(4,), dtype="u1"))
        stores.append(_files(tmp_path / path))
    assert stores[0] == stores[1]
    assert len([k for k in stores[0] if k.startswith("c/")]) == 5


class _FailingStore(zarr3c.MemoryStore):
    """A memory store that cannot write the key ``c/1``."""

    def set(self, key: str, value: Any) -> None:
        if key == "c/1":
            raise StoreError(f"cannot write store key {key!r}: no space left")
        super().set(key, value)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_value_the_store_cannot_write_is_reported_by_key(
        monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    # (10 shards in batches of `threads`: the first batch is stored by the helper thread
    # while the second is encoded, and its failure is raised then)
    monkeypatch.setattr(native, "get_num_threads", lambda: threads)
    store = _FailingStore()
    a = zarr3c.create_array(store, shape=(40,), shards=(4,), chunks=(2,), dtype="u1",
                            fill_value=0)
    with pytest.raises(StoreError, match="'c/1'"):
        a[:] = 5
    np.testing.assert_array_equal(a[:4], 5)  # (the chunk before it was written)
    assert store.get("c/1") is None
    np.testing.assert_array_equal(a[4:8], 0)
    a[8:] = 7  # (the failed write's keys are unlocked)
    np.testing.assert_array_equal(a[8:], 7)


def test_a_read_only_store_still_refuses(tmp_path: Path) -> None:
    zarr3c.create_array(str(tmp_path), shape=(8,), chunks=(4,), dtype="u1")
    a = zarr3c.open_array(zarr3c.LocalStore(str(tmp_path), read_only=True))
    with pytest.raises(ReadOnlyError):
        a[:] = 1


def test_chains_it_does_not_encode_take_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_writes, "write_chunks", None)  # (never called)
    # (one transpose is the kernel's, two are not)
    for i, codecs in enumerate([[LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
                                [TRANSPOSE, TRANSPOSE, LE]]):
        a = zarr3c.create_array(str(tmp_path / str(i)), shape=(8, 8), chunks=(4, 4),
                                dtype="<u2", codecs=codecs)
        a[:] = np.arange(64, dtype="<u2").reshape(8, 8)
        np.testing.assert_array_equal(a[:], np.arange(64).reshape(8, 8))


def test_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "BATCH_CHUNKS", 3)
    data = np.arange(40, dtype="u1")
    native_files, python_files, written = _both(
        tmp_path, monkeypatch, lambda a: a.__setitem__(slice(None), data), shape=(40,),
        chunks=(4,), dtype="u1")
    assert native_files == python_files
    assert written == [3, 3, 3, 1]


@pytest.mark.parametrize("selection", [
    (slice(None, None, -1), slice(None)),  # a reversed selection
    (slice(2, 20), slice(None, None, -1)),
    (np.arange(24), slice(0, 15)),  # index arrays: never covered along their axis
    (Ellipsis, slice(5, 18)),
])
def test_selections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, selection: Any) -> None:
    shape = (24, 18)
    base = np.arange(24 * 18, dtype="<i4").reshape(shape)

    def write(a: zarr3c.Array) -> None:
        expected = np.zeros(shape, dtype="<i4")
        if any(isinstance(s, np.ndarray) for s in selection):
            a.oindex[selection] = base[np.ix_(selection[0], range(15))]
            expected[np.ix_(selection[0], range(15))] = base[np.ix_(selection[0], range(15))]
        else:
            a[selection] = base[selection]
            expected[selection] = base[selection]
        np.testing.assert_array_equal(a[:], expected)

    native_files, python_files, _ = _both(tmp_path, monkeypatch, write, shape=shape,
                                          chunks=(6, 5), dtype="<i4")
    assert native_files == python_files


def _write_calls(tmp_path: Path, nchunks_per_axis: int) -> int:
    """The Python function calls of a whole write of a 3-d array of that many chunks."""
    import sys
    import threading

    a = zarr3c.create_array(str(tmp_path / str(nchunks_per_axis)),
                            shape=(4 * nchunks_per_axis,) * 3, chunks=(4, 4, 4), dtype="u2")
    data = np.ones(a.shape, dtype="u2")
    calls = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        a[:] = data
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return calls


def test_python_calls_grow_by_at_most_one_per_chunk(tmp_path: Path) -> None:
    # 64 and 512 chunks: the chunks' locks are made per key (one call each); the planning,
    # encoding and writing add nothing per chunk.  (The Python path makes ~110 calls per
    # chunk.)
    small, large = _write_calls(tmp_path, 4), _write_calls(tmp_path, 8)
    assert large - small <= (512 - 64) + 64


SHARDED = {
    "raw": {"codecs": [LE]},
    "zstd, index at start": {"codecs": [BE, ZSTD], "index_location": "start"},
    "crc32c, index without checksum": {
        "codecs": [LE, {"name": "crc32c"}], "index_codecs": [LE]},
    "transposed zstd": {"codecs": [TRANSPOSE, LE, ZSTD]},
    "gzip": {"codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}]},
    "blosc": {"codecs": [LE, {"name": "blosc", "configuration": {"cname": "zstd",
                                                                 "clevel": 3}}]},
}


@pytest.mark.parametrize("layout", SHARDED)
@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_whole_shards_store_the_python_paths_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str,
        write_empty_chunks: bool) -> None:
    data = (np.arange(23 * 17).reshape(23, 17) % 7).astype("<u2")
    data[:8, :] = 0  # the first row of shards: all fill, some inner chunks of the next too
    config = SHARDED[layout]
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 3], "codecs": config["codecs"],
        "index_codecs": config.get("index_codecs", [LE, {"name": "crc32c"}]),
        "index_location": config.get("index_location", "end")}}

    def write(a: zarr3c.Array) -> None:
        a[:] = data
        a[8:, 6:] = 1  # four whole shards (two at the array's edge)
        a[9:11, 1:4] = 2  # one shard in part: the Python path
        expected = data.copy()
        expected[8:, 6:] = 1
        expected[9:11, 1:4] = 2
        np.testing.assert_array_equal(a[:], expected)

    native_files, python_files, written = _both(
        tmp_path, monkeypatch, write, shape=data.shape, chunks=(8, 6), dtype="<u2",
        codecs=[sharding], write_empty_chunks=write_empty_chunks)
    assert native_files == python_files
    assert sum(written) == 3 * 3 + 4 and max(written) <= zarr3c.get_num_threads()
    assert ("c/0/0" in native_files) is write_empty_chunks


@pytest.mark.parametrize("layout", SHARDED)
@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_value_stores_get_the_kernels_shards(
        monkeypatch: pytest.MonkeyPatch, layout: str, write_empty_chunks: bool) -> None:
    # Whole shards on a store that writes its own values: encoded by write_shards into
    # buffers and handed to set_many, at most one shard per thread a batch; the values are
    # the Python path's.
    data = (np.arange(23 * 17).reshape(23, 17) % 7).astype("<u2")
    data[:8, :] = 0  # the first row of shards: all fill
    config = SHARDED[layout]
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 3], "codecs": config["codecs"],
        "index_codecs": config.get("index_codecs", [LE, {"name": "crc32c"}]),
        "index_location": config.get("index_location", "end")}}
    monkeypatch.setattr(native, "get_num_threads", lambda: 2)
    values, batches = {}, {}
    for path in ("native", "python"):
        monkeypatch.setattr(read_native, "enabled", path == "native")
        store = _CountingStore()
        a = zarr3c.create_array(store, shape=data.shape, chunks=(8, 6), dtype="<u2",
                                codecs=[sharding], write_empty_chunks=write_empty_chunks)
        a[:] = data
        a[9:11, 1:4] = 2  # one shard in part: the Python path
        expected = data.copy()
        expected[9:11, 1:4] = 2
        np.testing.assert_array_equal(a[:], expected)
        values[path], batches[path] = _values(store), store.batches
    assert values["native"] == values["python"]
    assert ("c/0/0" in values["native"]) is write_empty_chunks
    stored = 9 if write_empty_chunks else 6  # (3 x 3 shards, the first row all fill)
    assert sum(batches["native"]) == stored and max(batches["native"]) <= 2
    assert batches["python"] == []


def test_shards_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "SHARD_BYTES_PER_THREAD", 1)  # one shard a call (at most
    # one shard per thread in any case: a whole write holds about one shard per worker)
    data = np.arange(40, dtype="u1")
    native_files, python_files, written = _both(
        tmp_path, monkeypatch, lambda a: a.__setitem__(slice(None), data), shape=(40,),
        chunks=(4,), shards=(8,), dtype="u1")
    assert native_files == python_files
    assert written == [1] * 5


def test_runs_that_step_otherwise_in_the_value_are_copied_a_chunk_at_a_time() -> None:
    """``_copy_runs`` copies runs whose steps in the value differ from chunk to chunk (one
    copy-kernel call each) as it copies runs that step alike (one call for all)."""
    from zarr3c.indexing import ChunkTask

    value = np.arange(24, dtype="<u2").reshape(4, 6)
    src = value.reshape(-1).view(np.uint8)
    strides = [8, 2]  # (chunks of 4 x 4 uint16)
    tasks = [ChunkTask((0, 0), (2, 3), ((1, 1), (0, 1)), ((0, 2), (0, 2))),  # rows 0, 2
             ChunkTask((0, 1), (2, 2), ((2, 1), (1, 2)), ((1, 1), (1, 1)))]  # rows 1, 2
    for runs in ([tasks[0]], tasks):
        chunks = np.zeros(2 * 32, dtype=np.uint8)
        native._copy_runs(runs, np.array([0, 32][:len(runs)]), src, [12, 2], chunks,
                          strides, 2)
        got = chunks.view("<u2").reshape(2, 4, 4)
        np.testing.assert_array_equal(got[0, 1:3, 0:3], value[0:4:2, 0:6:2])
        if len(runs) == 2:
            np.testing.assert_array_equal(got[1, 2:4, 1:5:2], value[1:3, 1:3])
