"""asv benchmarks: the rectilinear chunk grid (seeds 000/001).

Two questions:

- **Lookup cost** against the number of chunks along a dimension, 10^2 ... 10^6 (edges drawn
  uniformly from 1..127, mean 64): a binary search over the precomputed int64 offsets should
  grow as log n.  ``Lookup`` times, per ``nchunks`` and ``grid`` (``rectilinear``: explicit
  edges, searched; ``regular``: the same number of 64-element chunks, arithmetic):

  - ``time_locate_points``: ``locate`` of 10,000 random indices (one kernel call);
  - ``time_project_slices``: 100 short slices (64 elements each, step 1) projected one by one,
    i.e. the per-selection cost a small read pays on one dimension;
  - ``time_chunk_index``: 100 scalar lookups through ``RectilinearChunkGrid.chunk_index``;
  - ``time_parse_grid``: parsing the ``chunk_grid`` JSON (run-length free, n explicit edges)
    and building its offsets, what opening such an array costs.

- **Throughput** of a rectilinear array against a regular one with the same mean chunk size:
  a uint16 256^3 cube (32 MiB), regular 64^3 chunks against edges ``[16, 112, 40, 88]`` on every
  axis (also mean 64; chunk volumes from 4 Ki to 1.4 Mi elements), compression ``none`` /
  ``zstd`` level 0, on a ``LocalStore`` in a temporary directory: ``time_write_all``,
  ``time_read_all``, ``time_random_reads`` (500 random 4^3 boxes, one after another).

``setup`` checks every answer (lookups against ``np.searchsorted``, reads against the
source), so a wrong result fails the benchmark instead of being timed.  A zarr3c that fails to
import raises ``NotImplementedError`` in ``setup`` (reported as skipped).
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from typing import Any, ClassVar

import numpy as np

zarr3c: Any
try:
    zarr3c = importlib.import_module("zarr3c")
    from zarr3c.chunk_grids import RectilinearChunkGrid, RectilinearDimension, RegularDimension

    _IMPORT_ERROR = ""
except Exception as exc:  # noqa: BLE001 - any import failure means "skip", with its reason
    zarr3c = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

MEAN = 64
NCHUNKS = [10**2, 10**3, 10**4, 10**5, 10**6]
GRIDS = ["rectilinear", "regular"]
N_POINTS = 10_000
N_SLICES = 100

SIZE = 256
EDGES = [16, 112, 40, 88]  # sum 256, mean 64 = the regular chunk length
COMPRESSIONS = ["none", "zstd"]
N_RANDOM = 500
BOX = 4


def _require_zarr3c() -> None:
    if zarr3c is None:
        raise NotImplementedError(f"zarr3c unavailable: {_IMPORT_ERROR}")


def _edges(n: int) -> np.ndarray:
    return np.random.default_rng(n).integers(1, 2 * MEAN, size=n, dtype=np.int64)


class Lookup:
    """Index -> chunk lookups along one dimension of ``nchunks`` chunks."""

    params = (NCHUNKS, GRIDS)
    param_names: ClassVar[list[str]] = ["nchunks", "grid"]
    timeout = 300.0

    def setup(self, nchunks: int, grid: str) -> None:
        _require_zarr3c()
        edges = _edges(nchunks)
        self.doc = {"name": "rectilinear",
                    "configuration": {"kind": "inline", "chunk_shapes": [edges.tolist()]}}
        if grid == "rectilinear":
            self.grid = RectilinearChunkGrid.from_dict(self.doc, ndim=1)
            length = int(edges.sum())
            cumulative = np.cumsum(edges)
        else:
            self.grid = RectilinearChunkGrid(chunk_shapes=(MEAN,))
            length = nchunks * MEAN
            cumulative = MEAN * np.arange(1, nchunks + 1, dtype=np.int64)
        (self.dim,) = self.grid.dimensions((length,))
        rng = np.random.default_rng(1)
        self.points = rng.integers(0, length, size=N_POINTS, dtype=np.int64)
        self.starts = rng.integers(0, length - MEAN, size=N_SLICES).tolist()
        chunk_index, _ = self.dim.locate(self.points)
        expected = np.searchsorted(cumulative, self.points, side="right")
        if not np.array_equal(chunk_index, expected):
            raise AssertionError(f"{grid}/{nchunks}: locate differs from np.searchsorted")
        if grid == "rectilinear" and not isinstance(self.dim, RectilinearDimension):
            raise AssertionError("expected an offsets-backed dimension")
        if grid == "regular" and not isinstance(self.dim, RegularDimension):
            raise AssertionError("expected an arithmetic dimension")

    def time_locate_points(self, nchunks: int, grid: str) -> None:
        self.dim.locate(self.points)

    def time_project_slices(self, nchunks: int, grid: str) -> None:
        project = self.dim.project_slice
        for start in self.starts:
            project(start, 1, MEAN)

    def time_chunk_index(self, nchunks: int, grid: str) -> None:
        lookup = self.grid.chunk_index
        for start in self.starts:
            lookup(0, start)

    def time_parse_grid(self, nchunks: int, grid: str) -> None:
        RectilinearChunkGrid.from_dict(self.doc, ndim=1)


def _chunks(grid: str) -> Any:
    return (MEAN,) * 3 if grid == "regular" else [EDGES] * 3


def _compressors(compression: str) -> list[dict[str, Any]] | None:
    if compression == "none":
        return None
    return [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


_SOURCE: np.ndarray | None = None


def source() -> np.ndarray:
    """The uint16 ``SIZE``^3 source cube: smooth gradients plus noise (built once)."""
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


def _create(path: str, grid: str, compression: str) -> Any:
    _require_zarr3c()
    return zarr3c.create_array(
        zarr3c.LocalStore(path), shape=(SIZE,) * 3, dtype="uint16", chunks=_chunks(grid),
        compressors=_compressors(compression), fill_value=0, overwrite=True,
    )


class WriteAll:
    """Write the whole cube into an existing array."""

    params = (GRIDS, COMPRESSIONS)
    param_names: ClassVar[list[str]] = ["grid", "compression"]
    number = 1
    repeat = (3, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, grid: str, compression: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        self.src = source()
        self.arr = _create(os.path.join(self.tmp, "a"), grid, compression)

    def teardown(self, grid: str, compression: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_write_all(self, grid: str, compression: str) -> None:
        self.arr[...] = self.src


class Read:
    """Read an array written once in ``setup`` (its files stay in the page cache)."""

    params = (GRIDS, COMPRESSIONS)
    param_names: ClassVar[list[str]] = ["grid", "compression"]
    number = 1
    repeat = (2, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, grid: str, compression: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-")
        path = os.path.join(self.tmp, "a")
        try:
            src = source()
            _create(path, grid, compression)[...] = src
            self.arr = zarr3c.open_array(zarr3c.LocalStore(path), mode="r")
            back = np.asarray(self.arr[...])
        except Exception:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        if not np.array_equal(back, src):
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise AssertionError(f"{grid}/{compression}: read back differs from what was written")
        rng = np.random.default_rng(1)
        self.random_sels = [
            tuple(slice(int(o), int(o) + BOX) for o in row)
            for row in rng.integers(0, SIZE - BOX + 1, size=(N_RANDOM, 3))
        ]

    def teardown(self, grid: str, compression: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_read_all(self, grid: str, compression: str) -> None:
        self.arr[...]

    def time_random_reads(self, grid: str, compression: str) -> None:
        arr = self.arr
        for sel in self.random_sels:
            arr[sel]
