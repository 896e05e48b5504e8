"""asv benchmarks: array I/O through zarr3c's public API on a LocalStore.

The same workloads as ``asv_benchmarks/compare_peers.py`` (which runs them against the other
Zarr implementations), sized so that one asv run stays short: a uint16 256^3 cube (32 MiB) of
smooth gradients plus noise, 64^3 chunks (or 128^3 shards of 32^3 inner chunks), written into a
temporary directory in ``setup``:

- ``WriteAll.time_write_all``: ``a[...] = src`` (each sample overwrites the same chunks);
- ``Read.time_read_all``: ``a[...]``;
- ``Read.time_read_chunks``: every read unit (chunk, or inner chunk when sharded), in C order;
- ``KeptChunkReads.time_read_chunks_kept``: every chunk of the chunked layout, the outputs
  all kept (fresh memory), with their page faults taken beside the read or not;
- ``Read.time_random_reads``: 1,000 random 4^3 boxes, one after another (and
  ``time_random_reads_numpy_ints``: their bounds numpy integers, as computed with numpy);
- ``ShardBoxReads``: those boxes and every inner chunk of the sharded layout, one after
  another, with each shard index and the bytes read through it in one call or in two
  requests;
- ``Read.time_random_reads_batched``: the same boxes in one ``a.get_many`` call;
- ``Read.time_random_reads_async``: the same boxes as ``a.read_async`` futures, all issued
  before the first is waited for (tensorstore's futures, as a user writes them);
- ``Read.time_vindex``: ``a.vindex`` of 10^5 random points;
- ``Read.time_oindex``: ``a.oindex`` with two unsorted 256-element index arrays (repeats
  allowed) on the first two axes and one chunk's width on the last;
- ``Read.track_stored_bytes``: the bytes on disk (the compression achieved);
- ``NativePipeline``: whole reads, ``get_many``, the random boxes from 16 user threads and
  ``vindex`` through the native chunk pipeline and through the Python path (chunked,
  sharded, and chunks stored transposed by a ``transpose`` codec), and the Python calls of
  a whole read per chunk;
- ``NativeCodecWrites``: those with ``blosc`` and ``gzip``;
- ``Memory.track_read_all_peak``: the peak memory a whole-array read allocates (tracemalloc,
  which sees numpy's and numcodecs' buffers), as a multiple of the output array (the
  performance issue's goal: at most 1.1);
- ``Memory.track_write_all_peak``: the peak a whole-array write allocates besides the
  input, in stored chunks (shards when sharded; the largest chunk when rectilinear) of the
  array (the goal: one per worker).  At this size, a worker's staging buffer is a visible
  part of a read's peak (the goal is stated for the 512^3 cube of ``compare_peers.py``).

Parameters: compression ``none`` / ``zstd`` (level 0, no checksum) x layout ``chunked`` /
``sharded`` / ``rectilinear`` (edges ``[16, 112, 40, 88]`` on every axis: the same mean chunk
length as ``chunked``, for the rectilinear issue's "within 10% of regular" goal) / ``slabs``
(``SLAB`` x 256 x 256 chunks: each a C-ordered run of a whole read, which compressed chunks
are decoded straight into; the same chunk size as ``chunked``).  A
combination zarr3c cannot do yet (no ``shards=``), or a zarr3c that fails to
import, raises ``NotImplementedError`` in ``setup``, which asv reports as skipped.  ``setup``
checks the round trip once, so a wrong answer fails the benchmark instead of being timed.
"""

from __future__ import annotations

import importlib
import itertools
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np

zarr3c: Any
try:
    zarr3c = importlib.import_module("zarr3c")
    _IMPORT_ERROR = ""
except Exception as exc:  # any import failure means "skip", with its reason
    zarr3c = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

SIZE = 256
CHUNK = 64
SHARD = 128
INNER = 32
N_RANDOM = 1000
N_POINTS = 100_000
N_INDICES = 256
BOX = 4
COMPRESSIONS = ["none", "zstd"]
LAYOUTS = ["chunked", "sharded", "rectilinear", "slabs"]
#: slabs: chunks of SLAB whole planes (64^3 elements, as the chunked layout's)
SLAB = CHUNK ** 3 // SIZE ** 2
#: rectilinear edges on every axis: sum 256 and mean 64 (the regular chunk length), chunk
#: volumes from 4 Ki to 1.4 Mi elements
EDGES = (16, 112, 40, 88)

_SOURCE: np.ndarray | None = None


def source() -> np.ndarray:
    """The uint16 ``SIZE``^3 source cube (built once per process; never modified)."""
    global _SOURCE
    if _SOURCE is None:
        rng = np.random.default_rng(0)
        j = np.arange(SIZE, dtype=np.uint16)
        plane = (j[:, None] * np.uint16(3) + j[None, :]).astype(np.uint16)
        src = np.empty((SIZE, SIZE, SIZE), dtype=np.uint16)
        for i in range(SIZE):
            np.add(plane, np.uint16(i * 7), out=src[i])
            src[i] += rng.integers(0, 64, size=(SIZE, SIZE), dtype=np.uint16)
        src.flags.writeable = False
        _SOURCE = src
    return _SOURCE


def layout_kwargs(layout: str) -> dict[str, Any]:
    """``chunks``/``shards`` arguments of ``create_array`` for a layout name."""
    if layout == "chunked":
        return {"chunks": (CHUNK,) * 3, "shards": None}
    if layout == "rectilinear":
        return {"chunks": [list(EDGES)] * 3, "shards": None}
    if layout == "slabs":
        return {"chunks": (SLAB, SIZE, SIZE), "shards": None}
    if layout == "transposed":  # (chunks stored transposed, as zarr v2's order "F" does)
        return {"chunks": (CHUNK,) * 3, "shards": None,
                "filters": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}]}
    return {"chunks": (INNER,) * 3, "shards": (SHARD,) * 3}


def read_units(layout: str) -> list[tuple[slice, ...]]:
    """The chunks (inner chunks when sharded) of a layout, as selections in C order."""
    unit = layout_kwargs(layout)["chunks"]
    per_dim = []
    for c in unit:
        edges = list(c) if isinstance(c, list) else [c] * (SIZE // c)
        starts = list(itertools.accumulate([0, *edges]))
        per_dim.append([slice(a, b) for a, b in itertools.pairwise(starts)])
    return list(itertools.product(*per_dim))


def compressors(compression: str) -> list[dict[str, Any]] | None:
    """The ``compressors`` argument for a compression name."""
    if compression == "none":
        return None
    if compression == "blosc":  # (zarr-python 2's default compressor)
        return [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                    "shuffle": "shuffle"}}]
    if compression == "gzip":
        return [{"name": "gzip", "configuration": {"level": 1}}]
    return [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


def create(path: str, compression: str, layout: str) -> Any:
    """Create the benchmark array at ``path``; unsupported setups raise NotImplementedError."""
    if zarr3c is None:
        raise NotImplementedError(f"zarr3c unavailable: {_IMPORT_ERROR}")
    try:
        return zarr3c.create_array(
            zarr3c.LocalStore(path),
            shape=(SIZE,) * 3,
            dtype="uint16",
            compressors=compressors(compression),
            fill_value=0,
            overwrite=True,
            **layout_kwargs(layout),
        )
    except NotImplementedError:
        raise
    except Exception as exc:
        if layout == "sharded":  # until zarr3c supports shards=, skip rather than fail
            raise NotImplementedError(f"sharding: {type(exc).__name__}: {exc}") from exc
        raise


def written(tmp: str, compression: str, layout: str) -> zarr3c.Array:
    """The cube written into a new array under ``tmp``, opened read-only (``tmp`` removed
    if that fails)."""
    path = os.path.join(tmp, "a")
    try:
        create(path, compression, layout)[...] = source()
        return zarr3c.open_array(zarr3c.LocalStore(path), mode="r")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def random_boxes(rng: np.random.Generator) -> list[tuple[slice, ...]]:
    """``N_RANDOM`` random ``BOX``^3 boxes of the cube."""
    return [tuple(slice(int(o), int(o) + BOX) for o in row)
            for row in rng.integers(0, SIZE - BOX + 1, size=(N_RANDOM, 3))]


class _FreshArray:
    """``setup``: the source cube and a new, empty benchmark array in a temporary directory
    (removed in ``teardown``).  No benchmarks of its own."""

    def setup(self, compression: str, layout: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.src = source()
        try:
            self.arr = create(os.path.join(self.tmp, "a"), compression, layout)
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def teardown(self, compression: str, layout: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


class WriteAll(_FreshArray):
    """Write the whole cube into an existing array."""

    params = (COMPRESSIONS, LAYOUTS)
    param_names: ClassVar[list[str]] = ["compression", "layout"]
    # One write per sample, one process round: a zstd write of 32 MiB takes about a second on
    # 2 cores, and asv's defaults (2 rounds, warm-up) would triple the run for no information.
    number = 1
    repeat = (3, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def time_write_all(self, compression: str, layout: str) -> None:
        self.arr[...] = self.src


class Read:
    """Read an array written once in ``setup`` (its files stay in the page cache)."""

    params = (COMPRESSIONS, LAYOUTS)
    param_names: ClassVar[list[str]] = ["compression", "layout"]
    # setup reads everything back (the page cache is warm), so no asv warm-up is needed.
    number = 1
    repeat = (2, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, compression: str, layout: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        path = os.path.join(self.tmp, "a")
        try:
            src = source()
            create(path, compression, layout)[...] = src
            self.arr = zarr3c.open_array(zarr3c.LocalStore(path), mode="r")
            back = np.asarray(self.arr[...])
        except NotImplementedError:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        except Exception as exc:
            shutil.rmtree(self.tmp, ignore_errors=True)
            if layout == "sharded":
                raise NotImplementedError(f"sharding: {type(exc).__name__}: {exc}") from exc
            raise
        if back.shape != src.shape or not np.array_equal(back, src):
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise AssertionError(f"{compression}/{layout}: read back differs from what was written")
        self.chunk_sels = read_units(layout)
        rng = np.random.default_rng(1)
        self.random_sels = random_boxes(rng)
        self.random_sels_np = [tuple(slice(np.int64(s.start), np.int64(s.stop)) for s in sel)
                               for sel in self.random_sels]
        self.points = tuple(rng.integers(0, SIZE, size=N_POINTS) for _ in range(3))
        self.orthogonal = (rng.integers(0, SIZE, size=N_INDICES),
                           rng.integers(0, SIZE, size=N_INDICES), slice(0, CHUNK))
        self.path = path

    def teardown(self, compression: str, layout: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_read_all(self, compression: str, layout: str) -> None:
        self.arr[...]

    def time_read_chunks(self, compression: str, layout: str) -> None:
        arr = self.arr
        for sel in self.chunk_sels:
            arr[sel]

    def time_random_reads(self, compression: str, layout: str) -> None:
        arr = self.arr
        for sel in self.random_sels:
            arr[sel]

    def time_random_reads_numpy_ints(self, compression: str, layout: str) -> None:
        arr = self.arr
        for sel in self.random_sels_np:
            arr[sel]

    def track_stored_bytes(self, compression: str, layout: str) -> int:
        total = 0
        for root, _, files in os.walk(self.path):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        return total

    track_stored_bytes.unit = "bytes"  # type: ignore[attr-defined]

    def time_random_reads_batched(self, compression: str, layout: str) -> None:
        self.arr.get_many(self.random_sels)

    def time_random_reads_async(self, compression: str, layout: str) -> None:
        for future in [self.arr.read_async(s) for s in self.random_sels]:
            future.result()

    def time_vindex(self, compression: str, layout: str) -> None:
        self.arr.vindex[self.points]

    def time_oindex(self, compression: str, layout: str) -> None:
        self.arr.oindex[self.orthogonal]

    def time_stepped(self, compression: str, layout: str) -> None:
        """Every other element on every axis (``a[::2, ::2, ::2]``): the outer-product
        kernel's constant-step copies."""
        self.arr[::2, ::2, ::2]


class SmallOuterReads:
    """300 small orthogonal reads of the chunked cube, one after another: a stepped box and
    an ``oindex`` inside one chunk (the general path: ``native.OUTER_MIN_CHUNKS``), and an
    ``oindex`` of 20 x 20 indices across 16 chunks (the native pipeline)."""

    params = (COMPRESSIONS,)
    param_names: ClassVar[list[str]] = ["compression"]
    number = 1
    repeat = (3, 10, 10.0)
    timeout = 300.0

    def setup(self, compression: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.arr = create(os.path.join(self.tmp, "a"), compression, "chunked")
        self.arr[...] = source()
        rng = np.random.default_rng(2)
        starts = rng.integers(0, CHUNK - 8, 300) + CHUNK * rng.integers(0, SIZE // CHUNK, 300)
        self.stepped = [(slice(s, s + 8, 2), s, slice(s, s + 4)) for s in starts.tolist()]
        self.inside = [(np.array([s, s + 5, s + 2]), np.array([s + 1, s + 3]), slice(s, s + 4))
                       for s in starts.tolist()]
        self.across = [(rng.integers(0, SIZE, 20), rng.integers(0, SIZE, 20), slice(s, s + 4))
                       for s in rng.integers(0, SIZE - 4, 300).tolist()]

    def teardown(self, compression: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_stepped_in_one_chunk(self, compression: str) -> None:
        for key in self.stepped:
            self.arr[key]

    def time_oindex_in_one_chunk(self, compression: str) -> None:
        for key in self.inside:
            self.arr.oindex[key]

    def time_oindex_across_chunks(self, compression: str) -> None:
        for key in self.across:
            self.arr.oindex[key]


class KeptChunkReads:
    """Every 64^3 chunk of the chunked cube read by ``a[box]`` into outputs that are all
    kept (as the peer script's ``read_chunks`` does: fresh memory, 128 page faults per
    512 KiB output), on 2 threads, with the output's pages faulted in beside the read by a
    pool thread (``helper`` = ``beside``, the default) or not (``off``)."""

    params = (COMPRESSIONS, ["beside", "off"])
    param_names: ClassVar[list[str]] = ["compression", "helper"]
    number = 1
    repeat = (3, 10, 10.0)
    timeout = 300.0

    def setup(self, compression: str, helper: str) -> None:
        from zarr3c import array as array_module
        from zarr3c.concurrency import get_num_threads, set_num_threads

        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.arr = written(self.tmp, compression, "chunked")
        self.sels = read_units("chunked")
        self._module, self._populate = array_module, array_module.populate_beside
        if helper == "off":
            array_module.populate_beside = lambda *args: None
        self._threads = get_num_threads()
        set_num_threads(2)

    def teardown(self, compression: str, helper: str) -> None:
        from zarr3c.concurrency import set_num_threads

        self._module.populate_beside = self._populate
        set_num_threads(self._threads)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_read_chunks_kept(self, compression: str, helper: str) -> None:
        arr = self.arr
        [arr[sel] for sel in self.sels]


class ShardBoxReads:
    """Small reads of the sharded cube, one after another: 1,000 random 4^3 boxes and every
    inner chunk, with the shard's index and the inner chunk bytes read in one call
    (``read`` = ``one call``, LocalStore's ``fileio.read_shard_parts``, the default) or as
    the other stores read them, the index then the parts (``two requests``)."""

    params = (COMPRESSIONS, ["one call", "two requests"])
    param_names: ClassVar[list[str]] = ["compression", "read"]
    number = 1
    repeat = (3, 10, 10.0)
    timeout = 300.0

    def setup(self, compression: str, read: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.arr = written(self.tmp, compression, "sharded")
        if read == "two requests":  # (an instance attribute hides LocalStore's method)
            self.arr._store.read_shard_parts = lambda *args: None
        self.random_sels = random_boxes(np.random.default_rng(1))
        self.inner_sels = read_units("sharded")

    def teardown(self, compression: str, read: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_random_reads(self, compression: str, read: str) -> None:
        arr = self.arr
        for sel in self.random_sels:
            arr[sel]

    def time_inner_chunk_reads(self, compression: str, read: str) -> None:
        arr = self.arr
        for sel in self.inner_sels:
            arr[sel]


class Memory(_FreshArray):
    """Peak memory of whole-array reads and writes, tracked (deterministic: no timing)."""

    params = (COMPRESSIONS, LAYOUTS)
    param_names: ClassVar[list[str]] = ["compression", "layout"]
    number = 1
    repeat = 1
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def _peak(self, fn: Any) -> int:
        import tracemalloc

        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    def track_read_all_peak(self, compression: str, layout: str) -> float:
        self.arr[...] = self.src
        return self._peak(lambda: self.arr[...]) / self.src.nbytes

    track_read_all_peak.unit = "output arrays"  # type: ignore[attr-defined]

    def track_write_all_peak(self, compression: str, layout: str) -> float:
        stored = layout_kwargs(layout)["shards"] or layout_kwargs(layout)["chunks"]
        if isinstance(stored[0], list):  # rectilinear: the largest chunk (what a worker holds)
            stored = [max(c) for c in stored]
        chunk_nbytes = int(np.prod(stored)) * self.src.itemsize

        def write() -> None:
            self.arr[...] = self.src

        return self._peak(write) / chunk_nbytes

    track_write_all_peak.unit = "chunks"  # type: ignore[attr-defined]


def _take_path(path: str) -> tuple[Any, bool]:
    """Turn the native pipeline on (``path`` ``native``) or off (``python``): its module
    and the setting to restore (NotImplementedError for a zarr3c before it)."""
    try:
        native = importlib.import_module("zarr3c.array.read.native")
    except ImportError as exc:  # (a zarr3c before the native pipeline)
        raise NotImplementedError(f"no native pipeline: {exc}") from exc
    enabled = native.enabled
    native.enabled = path == "native"
    return native, enabled


class NativePipeline:
    """The native chunk pipeline against the Python path it replaces, on the same array:
    ``path`` ``native`` (where the chain has one) or ``python`` (``ZARR3C_NATIVE=0``'s
    switch); whole reads, ``get_many`` of the random boxes, the same boxes read as ``a[sel]``
    from 16 user threads (the native path gives the GIL up once a box, the Python path once
    a step), ``vindex`` of the points, whole writes (native where the chunks or shards are
    covered entirely), ten planes written into chunks covered in part (native where
    unsharded); and
    the Python function calls of a whole read per chunk read (the scaling proxy on few
    cores: each is a GIL hand-off between threads; the native path's do not grow with the
    chunks)."""

    params = (COMPRESSIONS, ["chunked", "sharded", "transposed"], ["native", "python"])
    param_names: ClassVar[list[str]] = ["compression", "layout", "path"]
    number = 1
    repeat = (2, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, compression: str, layout: str, path: str) -> None:
        self.native, self.enabled = _take_path(path)
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.arr = written(self.tmp, compression, layout)
        rng = np.random.default_rng(1)
        self.random_sels = random_boxes(rng)
        self.points = tuple(rng.integers(0, SIZE, size=N_POINTS) for _ in range(3))
        self.src = self.arr[...]
        self.slab = self.src[10:20].copy()
        self.target = create(os.path.join(self.tmp, "w"), compression, layout)
        self.pool = ThreadPoolExecutor(16)

    def teardown(self, compression: str, layout: str, path: str) -> None:
        self.pool.shutdown()
        self.native.enabled = self.enabled
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_read_all(self, compression: str, layout: str, path: str) -> None:
        self.arr[...]

    def time_get_many(self, compression: str, layout: str, path: str) -> None:
        self.arr.get_many(self.random_sels)

    def time_vindex(self, compression: str, layout: str, path: str) -> None:
        self.arr.vindex[self.points]

    def time_random_reads_user_threads(self, compression: str, layout: str, path: str) -> None:
        list(self.pool.map(self.arr.__getitem__, self.random_sels))

    def time_write_all(self, compression: str, layout: str, path: str) -> None:
        self.target[...] = self.src

    def time_write_partial(self, compression: str, layout: str, path: str) -> None:
        """Ten planes into chunks 64 planes deep: every chunk read, modified, written."""
        self.target[10:20] = self.slab

    def track_python_calls_per_chunk(self, compression: str, layout: str, path: str) -> float:
        import sys
        import threading

        calls = 0

        def profile(frame: object, event: str, arg: object) -> None:
            nonlocal calls
            if event == "call":
                calls += 1

        sys.setprofile(profile)
        threading.setprofile(profile)
        try:
            self.arr[...]
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
        return calls / len(read_units(layout))

    track_python_calls_per_chunk.unit = "calls"  # type: ignore[attr-defined]


class NativeCodecWrites(NativePipeline):
    """:class:`NativePipeline`'s workloads on the chunked cube with the ``blosc`` (lz4,
    shuffle: zarr-python 2's default) and ``gzip`` (level 1) compressors, whose whole
    writes the native pipeline encodes too."""

    params = (["blosc", "gzip"], ["chunked"], ["native", "python"])


class NativeValueWrites(WriteAll):
    """:class:`WriteAll`'s write into a sharded array (128^3 shards of 32^3) on a
    ``MemoryStore``: the native pipeline's shards handed to the store's ``set_many`` a
    batch at a time, one batch stored while the next is encoded (``native``), against the
    Python path's task per shard (``python``)."""

    params = (COMPRESSIONS, ["native", "python"])
    param_names: ClassVar[list[str]] = ["compression", "path"]

    def setup(self, compression: str, path: str) -> None:
        if zarr3c is None:
            raise NotImplementedError(f"zarr3c unavailable: {_IMPORT_ERROR}")
        self.native, self.enabled = _take_path(path)
        self.src = source()
        self.arr = zarr3c.create_array(
            zarr3c.MemoryStore(), shape=self.src.shape, dtype=self.src.dtype,
            shards=(SHARD,) * 3, chunks=(INNER,) * 3, compressors=compressors(compression),
            fill_value=0)

    def teardown(self, compression: str, path: str) -> None:
        self.native.enabled = self.enabled
