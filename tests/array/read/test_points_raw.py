"""Points (``vindex``) of chunks stored as raw elements, read in batches of whole chunks by
one store call (``Store.read_elements_into``; LocalStore's is ``fileio.read_files_elements``):
same values as numpy and as the chunk-by-chunk path, on regular and rectilinear grids with
edge chunks and missing chunks, on one thread or two; a chunk of the wrong size is still
reported naming its key; stores without the batch call read chunk by chunk."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c import indexing as indexing_module
from zarr3c.array.read import native
from zarr3c.array.read import points as _points
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.errors import ChunkDecodeError
from zarr3c.indexing import group_points, parse_coordinate_selection, plan_points
from zarr3c.stores.local import reads as local_reads

pytestmark = [pytest.mark.skipif(local_reads.fileio is None, reason="POSIX builds only"),
              # both read paths: the native pipeline and the Python path
              pytest.mark.usefixtures("read_path")]

FILL = 7


def _array(root, dtype: str, shape: tuple[int, ...], chunks, missing: list[tuple[int, ...]]
           ) -> tuple[zarr3c.Array, np.ndarray]:
    a = zarr3c.create_array(zarr3c.LocalStore(root), shape=shape, dtype=dtype, chunks=chunks,
                            compressors=None, fill_value=FILL)
    data = np.random.default_rng(1).integers(0, 100, shape).astype(dtype)
    a[...] = data
    for coords in missing:
        a._store.erase(a.chunk_key(coords))
        data[_region(chunks, shape, coords)] = FILL
    return a, data


def _region(chunks, shape: tuple[int, ...], coords: tuple[int, ...]) -> tuple[slice, ...]:
    """The slices of chunk ``coords`` (regular ``chunks`` or rectilinear edge lists)."""
    out = []
    for c, spec, n in zip(coords, chunks, shape, strict=True):
        edges = np.cumsum([0, *spec]) if isinstance(spec, list) else np.arange(0, n + spec, spec)
        out.append(slice(int(edges[c]), min(int(edges[c + 1]), n)))
    return tuple(out)


def _in_threads(threads: int, fn):
    old = get_num_threads()
    set_num_threads(threads)
    try:
        return fn()
    finally:
        set_num_threads(old)


@pytest.fixture
def no_batch(monkeypatch: pytest.MonkeyPatch):
    def off() -> None:
        monkeypatch.setattr(zarr3c.LocalStore, "read_elements_into",
                            lambda self, *args: None)
    return off


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["uint8", "<u2", "<i4", "<f8", ">u2"]),
       st.sampled_from([(6, 7), [[2, 3, 4], [1, 6, 3, 4]]]),
       st.integers(1, 2), st.integers(0, 300), st.booleans(), st.data())
def test_points_equal_numpy_and_the_chunk_by_chunk_path(
        tmp_path_factory, monkeypatch, dtype, chunks, threads, npoints, erase, draw) -> None:
    shape = (9, 14)
    a, data = _array(tmp_path_factory.mktemp("a"), dtype, shape, chunks,
                     [(1, 1)] if erase else [])
    rng = np.random.default_rng(npoints)
    coords = tuple(rng.integers(-n, n, npoints) for n in shape)
    expected = data[coords]
    got = _in_threads(threads, lambda: a.vindex[coords])
    np.testing.assert_array_equal(got, expected)
    monkeypatch.setattr(zarr3c.LocalStore, "read_elements_into", lambda self, *args: None)
    np.testing.assert_array_equal(_in_threads(threads, lambda: a.vindex[coords]), got)


@pytest.mark.parametrize("threads", [1, 2])
def test_whole_chunks_go_to_the_store_in_a_few_batches(tmp_path, monkeypatch, threads) -> None:
    """Every chunk holding points is read by a batch: one on one thread, a few parts (four
    per thread) on two, never chunk by chunk (the Python path's batches: the native
    pipeline reads them all in one call)."""
    monkeypatch.setattr(native, "enabled", False)
    a, data = _array(tmp_path, "<u2", (40, 40), (8, 8), [])
    calls: list[int] = []
    real = local_reads.fileio.read_files_elements

    def spy(paths, *args):
        calls.append(len(paths))
        return real(paths, *args)

    monkeypatch.setattr(local_reads.fileio, "read_files_elements", spy)
    monkeypatch.setattr(zarr3c.LocalStore, "get", lambda self, key: pytest.fail(key))
    monkeypatch.setattr(zarr3c.LocalStore, "read_value_into",
                        lambda self, key, out: pytest.fail(key))
    rows, cols = np.meshgrid(np.arange(40), np.arange(40), indexing="ij")
    got = _in_threads(threads, lambda: a.vindex[rows.ravel(), cols.ravel()])
    np.testing.assert_array_equal(got, data.ravel())
    assert sum(calls) == 25
    assert len(calls) == 1 if threads == 1 else 1 < len(calls) <= 8


@pytest.mark.parametrize("change", ["short", "long"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_chunk_of_the_wrong_size_in_a_batch_is_named(tmp_path, change, threads) -> None:
    a, data = _array(tmp_path, "<u2", (40, 40), (8, 8), [(0, 0)])
    key = a.chunk_key((2, 3))
    raw = bytes(a._store.get(key))
    a._store.set(key, raw[:-2] if change == "short" else raw + b"\0\0")
    everything = tuple(np.indices((40, 40)).reshape(2, -1))
    with pytest.raises(ChunkDecodeError, match=f"{key}"):
        _in_threads(threads, lambda: a.vindex[everything])
    # The other chunks, and the missing one, read as written.
    rows = np.r_[0:16, 24:40]
    sel = (np.repeat(rows, 40), np.tile(np.arange(40), len(rows)))
    np.testing.assert_array_equal(_in_threads(threads, lambda: a.vindex[sel]), data[sel])


def test_a_store_without_the_batch_call_reads_chunk_by_chunk(tmp_path) -> None:
    data = np.arange(1600, dtype="<u2").reshape(40, 40)
    a = zarr3c.create_array(zarr3c.MemoryStore(), shape=(40, 40), dtype="<u2", chunks=(8, 8),
                            compressors=None)
    a[...] = data
    assert a._store.read_elements_into(["c/0/0"], np.array([128]), np.empty(128, np.uint8),
                                        np.array([0]), np.array([0]), np.array([], np.int64),
                                        np.empty(1, np.uint8), np.array([], np.int64), 2) is None
    sel = tuple(np.indices((40, 40)).reshape(2, -1))
    np.testing.assert_array_equal(a.vindex[sel], data[sel])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 2), st.integers(1, 400), st.integers(1, 12), st.booleans(), st.data())
def test_dense_and_sparse_chunks_in_one_batch(tmp_path_factory, monkeypatch, threads,
                                             npoints, bytes_per_point, erase, draw) -> None:
    """Chunks read whole by the batch and chunks read by byte ranges around their points
    (fewer points than one per ``_SPARSE_BYTES_PER_POINT`` bytes) side by side in one part,
    with a missing chunk: the values are numpy's."""
    monkeypatch.setattr(_points, "_SPARSE_BYTES_PER_POINT", bytes_per_point)
    shape = (30, 31)
    a, data = _array(tmp_path_factory.mktemp("a"), "<u2", shape, (6, 7),
                     [(0, 1), (3, 2)] if erase else [])
    rng = np.random.default_rng(npoints)
    # Points crowd the first rows, so the chunks hold very different numbers of them.
    rows = np.minimum(rng.geometric(0.08, npoints) - 1, shape[0] - 1)
    coords = (rows, rng.integers(0, shape[1], npoints))
    got = _in_threads(threads, lambda: a.vindex[coords])
    np.testing.assert_array_equal(got, data[coords])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=3), st.integers(0, 200),
       st.integers(1, 8), st.data())
def test_point_groups_agree_with_the_general_grouping(chunk, npoints, itemsize, draw) -> None:
    """One ``group_points_regular`` call (``group_points``, in scratch memory or not) gives
    the tasks the general grouping (the chunks touched numbered first) gives."""
    grid = draw.draw(st.lists(st.integers(1, 5), min_size=len(chunk), max_size=len(chunk)))
    shape = tuple(c * g - draw.draw(st.integers(0, c - 1)) for c, g in zip(chunk, grid))
    a = zarr3c.create_array(zarr3c.MemoryStore(), shape=shape, dtype="u1", chunks=chunk)
    rng = np.random.default_rng(npoints)
    sel = parse_coordinate_selection(tuple(rng.integers(0, n, npoints) for n in shape), shape)
    fast = list(plan_points(sel, a._dims, itemsize))
    for scratch in (False, True):
        groups = group_points(sel, a._dims, itemsize, scratch=scratch)
        if npoints == 0:
            assert groups is None
            continue
        assert groups is not None and len(groups) == len(fast)
        for t, task in enumerate(fast):
            other = groups.task(t)
            assert other.coords == task.coords and other.origin == task.origin
            np.testing.assert_array_equal(other.offsets, task.offsets)
            np.testing.assert_array_equal(other.out, task.out)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(indexing_module, "_DENSE_KEYS_PER_POINT", 0)
        mp.setattr(indexing_module, "_DENSE_KEYS_MIN", 0)
        assert group_points(sel, a._dims, itemsize) is None
        general = list(plan_points(sel, a._dims, itemsize))
    assert [t.coords for t in general] == [t.coords for t in fast]
    for g, f in zip(general, fast, strict=True):
        assert g.origin == f.origin
        np.testing.assert_array_equal(g.offsets, f.offsets)
        np.testing.assert_array_equal(g.out, f.out)
        for x, y in zip(g.local, f.local, strict=True):
            np.testing.assert_array_equal(x, y)
