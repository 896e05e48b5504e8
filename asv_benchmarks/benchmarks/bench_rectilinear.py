"""asv benchmarks: the rectilinear chunk grid
(https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear).

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

- **Throughput** of a rectilinear array against a regular one with the same mean chunk size is
  the ``rectilinear`` layout of ``bench_array_io`` (next to ``chunked``).

``setup`` checks every answer (lookups against ``np.searchsorted``), so a wrong result fails
the benchmark instead of being timed.  A zarr3c that fails to import raises
``NotImplementedError`` in ``setup`` (reported as skipped).
"""

from __future__ import annotations

import importlib
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
