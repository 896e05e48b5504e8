"""Dask and distributed: pickling, chunk-aligned reads and writes, zarr3c.from_dask.

numpy is the oracle.  The distributed tests run on a 2-process LocalCluster on loopback and
write an array several times larger than a worker's memory limit.
"""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarr3c
from zarr3c.dask import _aligned, chunks_from_dask
from zarr3c.errors import (
    ContainsArrayError,
    InvalidArgumentError,
    InvalidTypeError,
    MissingDependencyError,
    ReadOnlyError,
)

da = pytest.importorskip("dask.array", reason="dask[array] is not installed (zarr3c[dask] extra)")
import dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHAPE = (23, 17)
REF = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE) * 3 - 100

# Each layout: create_array options, and the array's write unit (chunks, shards) as dask
# chunks, edge chunks included.
LAYOUTS = {
    "regular": (dict(chunks=(5, 4)), ((5, 5, 5, 5, 3), (4, 4, 4, 4, 1))),
    "rectilinear": (dict(chunks=[[3, 10, 10], [4, 13]]), ((3, 10, 10), (4, 13))),
    "sharded": (dict(chunks=(3, 4), shards=(6, 8)), ((6, 6, 6, 5), (8, 8, 1))),
}


def make_store(kind: str, tmp_path: Path) -> zarr3c.Store:
    return zarr3c.MemoryStore() if kind == "memory" else zarr3c.LocalStore(tmp_path / "d.zarr")


def make_array(store: zarr3c.Store, layout: str, name: str = "a") -> zarr3c.Array:
    a = zarr3c.create_array(store, name, shape=SHAPE, dtype="int32", fill_value=-1,
                            **LAYOUTS[layout][0])
    a[...] = REF
    return a


# -- import and optional dependency --------------------------------------------------------------

def test_import_zarr3c_does_not_import_dask() -> None:
    code = "import sys, zarr3c; zarr3c.from_dask; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.array", None)  # makes the import fail
    with pytest.raises(MissingDependencyError, match=r'zarr3c\[dask\]') as info:
        zarr3c.from_dask(np.zeros(3), "memory://")
    assert isinstance(info.value, ImportError)


# -- pickling ------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("read_only", [False, True], ids=["rw", "ro"])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_array_pickle_round_trip(kind: str, read_only: bool, layout: str,
                                 tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    make_array(store, layout)
    a = zarr3c.open_array(store, "a", mode="r" if read_only else "r+")
    np.testing.assert_array_equal(a[...], REF)  # the thread pool has run: it must not travel
    b = pickle.loads(pickle.dumps(a))
    assert (b.path, b.shape, b.dtype, b.chunks, b.shards, b.read_only) == (
        "a", a.shape, a.dtype, a.chunks, a.shards, read_only)
    assert b.metadata == a.metadata
    np.testing.assert_array_equal(b[...], REF)
    if read_only:
        with pytest.raises(ReadOnlyError):
            b[0, 0] = 1
        return
    b[0, :] = 7
    np.testing.assert_array_equal(b[0], 7)
    if kind == "local":  # same files: the write is seen through the original
        assert a == b
        np.testing.assert_array_equal(a[0], 7)
    else:  # a pickled MemoryStore is a snapshot, owned by the copy
        np.testing.assert_array_equal(a[...], REF)


def test_array_reopens_in_forked_process(tmp_path: Path) -> None:
    # The parent's chunk thread pool has run; a forked child must not wait on its threads.
    a = make_array(zarr3c.LocalStore(tmp_path / "d.zarr"), "sharded")
    np.testing.assert_array_equal(a[...], REF)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        np.testing.assert_array_equal(pool.apply_async(np.asarray, (a,)).get(timeout=60), REF)


def test_local_array_pickle_carries_no_data(tmp_path: Path) -> None:
    a = zarr3c.create_array(tmp_path / "d.zarr", shape=(1000, 1000), dtype="int64",
                            chunks=(100, 100))
    a[...] = 1
    assert len(pickle.dumps(a)) < 1000


@pytest.mark.parametrize("read_only", [False, True], ids=["rw", "ro"])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_group_pickle_round_trip(kind: str, read_only: bool, tmp_path: Path) -> None:
    store = make_store(kind, tmp_path)
    root = zarr3c.create_group(store, attributes={"k": 1})
    sub = root.create_group("sub")
    for layout in LAYOUTS:
        make_array(store, layout, name=f"sub/{layout}")
    g = zarr3c.open_group(store, mode="r" if read_only else "r+")
    h = pickle.loads(pickle.dumps(g))
    assert (h.path, h.read_only, dict(h.attrs)) == ("", read_only, {"k": 1})
    assert [n for n, _ in h.members(max_depth=None)] == [
        n for n, _ in g.members(max_depth=None)]
    for layout in LAYOUTS:
        child = h["sub"][layout]
        assert child.read_only == read_only
        np.testing.assert_array_equal(child[...], REF)
    s = pickle.loads(pickle.dumps(sub))
    assert s.path == "sub" and sorted(s) == sorted(LAYOUTS)


# -- reads: from_array -----------------------------------------------------------------------------

@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_from_array_reads_chunk_aligned(layout: str, tmp_path: Path) -> None:
    a = make_array(zarr3c.LocalStore(tmp_path / "d.zarr"), layout)
    x = da.from_array(a, chunks=a.chunks)
    if layout == "sharded":  # a.chunks are the inner chunks; a.shards the stored objects
        assert x.chunks == ((3,) * 7 + (2,), (4, 4, 4, 4, 1))
        y = da.from_array(a, chunks=a.shards)
        assert y.chunks == LAYOUTS[layout][1]
        np.testing.assert_array_equal(y.compute(scheduler="threads"), REF)
    else:
        assert x.chunks == LAYOUTS[layout][1]
    np.testing.assert_array_equal(x.compute(scheduler="threads"), REF)
    # Every block, edge blocks included, is its numpy region.
    bounds = [np.cumsum((0,) + c) for c in x.chunks]
    for i, j in np.ndindex(x.numblocks):
        block = x.blocks[i, j].compute(scheduler="sync")
        np.testing.assert_array_equal(
            block, REF[bounds[0][i]:bounds[0][i + 1], bounds[1][j]:bounds[1][j + 1]])


# -- writes: store ---------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_store_aligned_round_trip(layout: str, tmp_path: Path) -> None:
    a = zarr3c.create_array(tmp_path / "d.zarr", shape=SHAPE, dtype="int32", fill_value=-1,
                            **LAYOUTS[layout][0])
    x = da.from_array(REF, chunks=LAYOUTS[layout][1])  # one task per chunk (shard)
    da.store(x, a, lock=False, scheduler="threads")
    np.testing.assert_array_equal(a[...], REF)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_store_unaligned_threads_lose_nothing(layout: str, tmp_path: Path) -> None:
    # In one process the per-chunk locks make unaligned unlocked writes safe.
    a = zarr3c.create_array(tmp_path / "d.zarr", shape=SHAPE, dtype="int32", fill_value=-1,
                            **LAYOUTS[layout][0])
    x = da.from_array(REF, chunks=(2, 3))
    da.store(x, a, lock=False, scheduler="threads", num_workers=4)
    np.testing.assert_array_equal(a[...], REF)


# -- from_dask -------------------------------------------------------------------------------------

def test_chunks_from_dask() -> None:
    assert chunks_from_dask(((5, 5, 3), (4,))) == (5, 4)
    assert chunks_from_dask(((5, 5, 5),)) == (5,)
    assert chunks_from_dask(((5, 6),)) == [[5, 6]]
    assert chunks_from_dask(((5, 3, 5), (4, 4))) == [[5, 3, 5], 4]
    assert chunks_from_dask(((0,), (2, 1))) == (1, 2)
    assert chunks_from_dask(()) == ()


def test_aligned_moves_boundaries_up_to_storage() -> None:
    assert _aligned(((7, 7, 7, 2),), [[0, 5, 10, 15, 20, 23]]) == ((10, 5, 8),)
    assert _aligned(((2, 2, 2),), [[0, 6]]) == ((6,),)
    assert _aligned(((10, 10),), [[0, 5, 10, 15, 20]]) == ((10, 10),)


@pytest.mark.parametrize(
    ("dask_chunks", "grid", "expected_chunks"),
    [
        ((5, 4), "regular", (5, 4)),
        (((5, 5, 13), (10, 7)), "rectilinear", ((5, 5, 13), (10, 7))),  # larger last ones
        (((3, 10, 10), (4, 13)), "rectilinear", ((3, 10, 10), (4, 13))),
        (((3, 10, 10), 4), "rectilinear", ((3, 10, 10), (4, 4, 4, 4, 1))),
        ((23, 17), "regular", (23, 17)),
    ],
    ids=["regular", "regular-big-last", "irregular", "mixed", "one-chunk"],
)
def test_from_dask_grid_follows_dask_chunks(dask_chunks, grid, expected_chunks,
                                            tmp_path: Path) -> None:
    x = da.from_array(REF, chunks=dask_chunks)
    a = zarr3c.from_dask(x, tmp_path / "d.zarr", "x")
    assert a.metadata.chunk_grid.to_dict()["name"] == grid
    assert a.chunks == expected_chunks
    np.testing.assert_array_equal(a[...], REF)
    b = zarr3c.open_array(tmp_path / "d.zarr", "x")
    assert b.chunks == expected_chunks
    np.testing.assert_array_equal(b[...], REF)


def test_from_dask_options_and_memory_store() -> None:
    x = da.from_array(REF, chunks=(10, 10))
    a = zarr3c.from_dask(x, "memory://", compressors=None, attributes={"u": "K"},
                         dimension_names=["y", "x"], fill_value=5)
    assert a.attrs["u"] == "K" and a.metadata.dimension_names == ("y", "x")
    assert a.fill_value == 5 and a.dtype == REF.dtype
    np.testing.assert_array_equal(a[...], REF)


def test_from_dask_explicit_aligned_chunks_and_shards(tmp_path: Path) -> None:
    x = da.from_array(REF, chunks=(6, 8))
    a = zarr3c.from_dask(x, tmp_path / "d.zarr", "c", chunks=(3, 4))  # 4 chunks per task
    assert a.chunks == (3, 4)
    np.testing.assert_array_equal(a[...], REF)
    s = zarr3c.from_dask(x, tmp_path / "d.zarr", "s", chunks=(3, 4), shards=(6, 8),
                         rechunk=False)
    assert (s.chunks, s.shards) == ((3, 4), (6, 8))
    np.testing.assert_array_equal(s[...], REF)


@pytest.mark.parametrize(
    ("dask_chunks", "kwargs", "unit", "dim"),
    [
        ((7, 17), dict(chunks=(5, 17)), "chunk", 0),
        ((23, (7, 10)), dict(chunks=(23, 4)), "chunk", 1),
        ((3, 4), dict(chunks=(3, 4), shards=(6, 8)), "shard", 0),
        ((5, 17), dict(chunks=[[3, 10, 10], 17]), "chunk", 0),
    ],
    ids=["regular-dim0", "regular-dim1", "shards", "rectilinear"],
)
def test_from_dask_unaligned_refused_or_rechunked(dask_chunks, kwargs, unit, dim,
                                                  tmp_path: Path) -> None:
    x = da.from_array(REF, chunks=dask_chunks)
    store = zarr3c.LocalStore(tmp_path / "d.zarr")
    with pytest.raises(InvalidArgumentError, match=rf"dimension {dim}.*inside the {unit}"):
        zarr3c.from_dask(x, store, "a", rechunk=False, **kwargs)
    assert list(store.list()) == []  # nothing written
    a = zarr3c.from_dask(x, store, "a", **kwargs)  # rechunked to the write unit
    np.testing.assert_array_equal(a[...], REF)


def test_from_dask_compute_false_returns_lazy_store(tmp_path: Path) -> None:
    x = da.from_array(REF, chunks=(5, 4))
    d = zarr3c.from_dask(x, tmp_path / "d.zarr", "a", compute=False)
    assert dask.is_dask_collection(d)
    a = zarr3c.open_array(tmp_path / "d.zarr", "a")  # created at once, still empty
    assert a.nchunks_initialized == 0
    d.compute(scheduler="threads")
    np.testing.assert_array_equal(a[...], REF)


def test_from_dask_overwrite(tmp_path: Path) -> None:
    x = da.from_array(REF, chunks=(5, 4))
    zarr3c.from_dask(x, tmp_path / "d.zarr", "a")
    with pytest.raises(ContainsArrayError):
        zarr3c.from_dask(x + 1, tmp_path / "d.zarr", "a")
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "d.zarr", "a")[...], REF)
    a = zarr3c.from_dask(x + 1, tmp_path / "d.zarr", "a", overwrite=True)
    np.testing.assert_array_equal(a[...], REF + 1)


def test_from_dask_empty_and_0d() -> None:
    e = zarr3c.from_dask(da.zeros((0, 5), chunks=(2, 2), dtype="f8"), "memory://")
    assert e.shape == (0, 5) and e[...].shape == (0, 5)
    z = zarr3c.from_dask(da.from_array(np.array(3.5)), "memory://")
    assert z.shape == () and z[...] == 3.5


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: zarr3c.from_dask(REF, "memory://"), InvalidTypeError, "dask.array.Array"),
        (lambda: zarr3c.from_dask(da.ones(4, chunks=2), "memory://", shape=(4,)),
         InvalidArgumentError, "shape"),
        (lambda: zarr3c.from_dask(da.ones(4, chunks=2), "memory://", shards=(4,)),
         InvalidArgumentError, "needs chunks"),
        (lambda: zarr3c.from_dask((lambda v: v[v > 1])(da.arange(4, chunks=2)), "memory://"),
         InvalidArgumentError, "unknown chunk sizes"),
    ],
    ids=["numpy-input", "shape-option", "shards-without-chunks", "unknown-chunk-sizes"],
)
def test_from_dask_bad_input(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


# -- distributed -----------------------------------------------------------------------------------

# A worker idles at ~80 MiB; the big test writes 768 MiB, three times this limit.
WORKER_MEMORY = 256 * 2**20


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed",
                                      reason="distributed is not installed (zarr3c[dask] extra)")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, memory_limit=WORKER_MEMORY,
    ) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


def test_distributed_pickles_arrays_and_groups_to_workers(client, tmp_path: Path) -> None:
    store = zarr3c.LocalStore(tmp_path / "d.zarr")
    g = zarr3c.create_group(store)
    for layout in LAYOUTS:
        make_array(store, layout, name=layout)
    for layout in LAYOUTS:
        np.testing.assert_array_equal(client.submit(np.asarray, g[layout]).result(), REF)
    assert client.submit(len, g).result() == len(LAYOUTS)


def test_distributed_refuses_memory_store(client) -> None:
    with dask.config.set(scheduler=client), pytest.raises(InvalidArgumentError,
                                                           match="MemoryStore"):
        zarr3c.from_dask(da.ones(4, chunks=2), "memory://")


def test_distributed_irregular_and_sharded(client, tmp_path: Path) -> None:
    with dask.config.set(scheduler=client):
        x = da.from_array(REF, chunks=((3, 10, 10), (4, 13)))
        a = zarr3c.from_dask(x, tmp_path / "d.zarr", "rect")
        assert a.chunks == ((3, 10, 10), (4, 13))
        np.testing.assert_array_equal(a[...], REF)

        s = zarr3c.create_array(tmp_path / "d.zarr", "sharded", shape=SHAPE, dtype="int32",
                                chunks=(3, 4), shards=(6, 8))
        da.store(da.from_array(REF, chunks=s.shards), s, lock=False)
        np.testing.assert_array_equal(s[...], REF)
        np.testing.assert_array_equal(da.from_array(s, chunks=s.shards).compute(), REF)
        np.testing.assert_array_equal(da.from_array(a, chunks=a.chunks).compute(), REF)


def test_distributed_write_larger_than_worker_memory(client, tmp_path: Path) -> None:
    rows, cols, block = 6144, 16384, (256, 8192)  # int64: 768 MiB, 16 MiB per dask chunk
    i = da.arange(rows, chunks=block[0], dtype="int64")[:, None]
    j = da.arange(cols, chunks=block[1], dtype="int64")[None, :]
    x = (i * cols + j) * 3 - 7  # built lazily, chunk by chunk, on the workers
    assert x.nbytes >= 3 * WORKER_MEMORY and x.chunks[1] == (8192, 8192)
    workers = set(client.scheduler_info()["workers"])
    from distributed import get_task_stream

    with dask.config.set(scheduler=client), get_task_stream(client) as ts:
        a = zarr3c.from_dask(x, tmp_path / "big.zarr", chunks=(128, 4096), compressors=[
            {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1,
                                                "shuffle": "shuffle"}}])  # fast and small
    assert set(client.scheduler_info()["workers"]) == workers  # none restarted
    assert len(ts.data) >= x.npartitions and {t["worker"] for t in ts.data} <= workers
    assert a.nchunks_initialized == a.nchunks == (rows // 128) * (cols // 4096)
    # Read back one stored chunk at a time: no process ever holds the whole array.
    b = zarr3c.open_array(tmp_path / "big.zarr", mode="r")
    for r in range(0, rows, 128):
        for c in range(0, cols, 4096):
            got = b[r:r + 128, c:c + 4096]
            expect = (np.arange(r, r + 128, dtype="int64")[:, None] * cols
                      + np.arange(c, c + 4096, dtype="int64")[None, :]) * 3 - 7
            np.testing.assert_array_equal(got, expect)
    shutil.rmtree(tmp_path / "big.zarr")  # pytest keeps recent tmp dirs: do not keep this
