"""Peer comparison through xarray: one dataset opened, loaded, indexed and written by each.

Runs, in one process and on the same source dataset, each workload through

- ``zarr3c``: ``xr.open_dataset(path, engine="zarr3c")`` (the backend class itself is passed
  as ``engine``, so that a checkout on ``PYTHONPATH`` is measured without its entry point)
  and ``zarr3c.xarray.to_zarr``;
- ``zarr-python``: xarray's own ``engine="zarr"`` and ``Dataset.to_zarr``;
- ``xarray-tensorstore``: ``xarray_tensorstore.open_zarr`` (which opens through xarray's
  zarr engine first, then replaces the data variables with tensorstore arrays), loading
  through ``xarray_tensorstore.read`` as its documentation advises (every variable's read
  started before the first is waited for).  It has no writer: its ``write`` cells are
  reported as skipped.

and prints a table of wall-clock times with the ratio of zarr3c to the fastest peer and the
geometric mean of that ratio over the rows (issue 32's goal: at most 0.5 on every row), then
the same table of the process's CPU time (every thread, user and system: the work done,
which other processes on a busy machine disturb less than the wall clock, but which does
not show how well it was spread over the cores).

The source is an in-memory Dataset of ``--nvars`` float32 variables ``(time, y, x)`` of
smooth fields plus noise, quantized so that zstd has something to find; ``--size`` MiB of
them in all (default 1024: 4 variables of 1024 x 256 x 256), with a datetime ``time``
coordinate, float ``y``/``x`` coordinates and CF attributes.  Rows are ``layout x
workload``:

- layouts (zstd level 0, no checksum, in both): ``chunked`` (``--chunks``, default
  16 x 128 x 128: 1 MiB) and ``sharded`` (``--shards`` of ``--inner`` inner chunks,
  default 128 x 256 x 256 of 16 x 64 x 64; clipped to the shape);
- workloads: ``open`` (metadata, and what xarray reads to decode: the index coordinates),
  ``load`` (open, then ``.load()`` of everything), ``isel_time`` (``.isel(time=k).load()``
  of one time step, on a dataset opened untimed), ``series`` (``.isel(y=j, x=i).load()``, the
  time series at one point, likewise) and ``write`` (the whole dataset into a fresh path,
  with consolidated metadata as both writers write by default).

Every reader reads the same copy, written (untimed) by xarray's ``Dataset.to_zarr`` (by
zarr3c's writer where zarr-python is missing); its encoding (chunks, shards, zstd) is
checked before anything is timed.  Every result is checked against the source with
``xr.testing.assert_identical`` (``open``: the variables, dimensions, coordinates and
attributes) and a wrong one is reported as ``WRONG`` and not timed; each written copy is
read back through every reader available and compared the same way, its encoding checked
too.  The files are in the page cache (every read workload runs once untimed first); each
timed write goes to a fresh path, after ``os.sync()``, and no copy is deleted before the run
ends (see compare_peers.py).  Each measurement is repeated ``--repeat`` times and the
minimum kept; a read cell runs until its timed runs add up to ``--min-time`` seconds
(default 1, at most 200 runs), so that the quick rows' minimum holds on a busy machine.
An implementation that does not import, or raises, is reported as
``unavailable: <reason>`` / ``error: <reason>``; the run goes on.

``xarray_floor.py`` (same geometry options, ``--compare`` this script's ``--json``) times
the floor under each row: libzstd alone decoding (encoding) what the row must.

Usage::

    python asv_benchmarks/compare_xarray.py                     # 1 GiB, min of 5
    python asv_benchmarks/compare_xarray.py --size 128          # 128 MiB, quick
    python asv_benchmarks/compare_xarray.py --size 64 --only zarr3c,zarr-python \\
        --layouts chunked --workloads open,load --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.metadata
import json
import math
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

# compare_peers' helpers (this directory is on sys.path when this script runs)
from compare_peers import describe, dir_size, import_zarr3c, log, parse_list

PEERS = ("zarr-python", "xarray-tensorstore")
IMPLEMENTATIONS = ("zarr3c", *PEERS)
WORKLOADS = ("open", "load", "isel_time", "series", "write")
READ_WORKLOADS = ("open", "load", "isel_time", "series")
LAYOUTS = ("chunked", "sharded")
DTYPE = np.dtype("float32")
ZSTD_LEVEL = 0
NO_WRITER = "xarray-tensorstore has no writer"
#: The most timed runs of one read cell that ``--min-time`` asks for
MAX_RUNS = 200


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Layout:
    """How each variable is split into stored objects.

    Parameters
    ----------
    name : str
        ``"chunked"`` or ``"sharded"``.
    chunks : tuple of int
        The chunk shape (the inner chunk shape of a sharded array).
    shards : tuple of int or None
        The shard shape, or None for an unsharded array.
    """

    name: str
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None = None


@dataclass
class Case:
    """Everything a workload needs: the source dataset, the layout, the selections."""

    src: Any  # xarray.Dataset, in memory
    layout: Layout
    time_index: int
    point: tuple[int, int]

    @property
    def names(self) -> list[str]:
        return [str(n) for n in self.src.data_vars]


@dataclass
class Result:
    """One cell of the table: a workload timed for one implementation."""

    layout: str
    workload: str
    impl: str
    status: str  # ok | unavailable | skipped | error | wrong
    reason: str = ""
    times_s: list[float] = field(default_factory=list)
    value: float | None = None  # min time in ms
    cpu_s: list[float] = field(default_factory=list)  # CPU time of the process, per run
    cpu_value: float | None = None  # min CPU time in ms


class Unavailable(Exception):
    """An implementation cannot run here (import failure, missing feature)."""


class Skipped(Exception):
    """An implementation does not have a workload (xarray-tensorstore writes nothing)."""


# --------------------------------------------------------------------------- source data


def make_source(n_time: int, grid: int, nvars: int, seed: int = 0) -> Any:
    """The source Dataset: ``nvars`` float32 ``(time, y, x)`` variables, in memory.

    Smooth fields (a different one per variable, drifting with time) plus noise, quantized
    to 1/256 so that zstd compresses them somewhat; built slab by slab, so that the only
    large allocations are the variables themselves.
    """
    import pandas as pd
    import xarray as xr

    rng = np.random.default_rng(seed)
    y = np.linspace(-60.0, 60.0, grid)
    x = np.linspace(0.0, 360.0, grid, endpoint=False)
    yy, xx = np.meshgrid(np.radians(y), np.radians(x), indexing="ij")
    data_vars = {}
    for v in range(nvars):
        arr = np.empty((n_time, grid, grid), dtype=DTYPE)
        base = (10 * np.cos(yy) * np.sin((v + 1) * xx)).astype(DTYPE)
        for t in range(n_time):
            slab = base + DTYPE.type(np.sin(t / 50 + v))
            slab += rng.normal(0, 0.5, size=(grid, grid)).astype(DTYPE)
            arr[t] = np.round(slab * 256) / 256
        data_vars[f"var{v}"] = (
            ("time", "y", "x"), arr, {"units": "K", "long_name": f"field number {v}"},
        )
    coords = {
        "time": ("time", pd.date_range("2000-01-01", periods=n_time, freq="D").values,
                 {"standard_name": "time"}),
        "y": ("y", y, {"units": "degrees_north"}),
        "x": ("x", x, {"units": "degrees_east"}),
    }
    return xr.Dataset(data_vars, coords=coords, attrs={"title": "compare_xarray source"})


# --------------------------------------------------------------------------- implementations


class Adapter:
    """One implementation under test: how it opens, loads and writes a dataset."""

    name = "?"

    def probe(self) -> str:
        """Import the implementation; return its version, or raise :class:`Unavailable`."""
        raise NotImplementedError

    def open(self, path: str) -> Any:
        """The dataset at ``path``, lazily (chunks=None: numpy-backed, not dask)."""
        raise NotImplementedError

    def load(self, ds: Any) -> Any:
        """``ds`` with every variable read into memory."""
        return ds.load()

    def write(self, ds: Any, path: str, layout: Layout) -> None:
        """Write ``ds`` to a new store at ``path`` in ``layout``."""
        raise Skipped(f"{self.name} has no writer")


def encoding_for(names: Sequence[str], layout: Layout, compressor: Any) -> dict[str, Any]:
    """The ``encoding`` argument of a write: chunks, shards and the zstd compressor."""
    enc: dict[str, Any] = {"chunks": layout.chunks, "compressors": (compressor,)}
    if layout.shards is not None:
        enc["shards"] = layout.shards
    return {n: dict(enc) for n in names}


class Zarr3cAdapter(Adapter):
    """zarr3c's xarray backend and writer."""

    name = "zarr3c"

    def probe(self) -> str:
        try:
            zarr3c = import_zarr3c()
            xr_mod = importlib.import_module("zarr3c.xarray")
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        self.engine = xr_mod.Zarr3cBackendEntrypoint
        self.to_zarr = xr_mod.to_zarr
        return str(getattr(zarr3c, "__version__", "?"))

    def open(self, path: str) -> Any:
        import xarray as xr

        return xr.open_dataset(path, engine=self.engine, chunks=None)

    def write(self, ds: Any, path: str, layout: Layout) -> None:
        zstd = {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}
        self.to_zarr(ds, path, mode="w-", zarr_format=3,
                     encoding=encoding_for(list(map(str, ds.data_vars)), layout, zstd))


class ZarrPythonAdapter(Adapter):
    """xarray's own zarr engine and ``Dataset.to_zarr``, on zarr-python 3."""

    name = "zarr-python"

    def probe(self) -> str:
        try:
            import xarray  # noqa: F401
            import zarr
            import zarr.codecs
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        if int(zarr.__version__.split(".")[0]) < 3:
            raise Unavailable(f"zarr {zarr.__version__} is not 3.x")
        self.zstd = zarr.codecs.ZstdCodec(level=ZSTD_LEVEL, checksum=False)
        return f"zarr {zarr.__version__}"

    def open(self, path: str) -> Any:
        import xarray as xr

        return xr.open_dataset(path, engine="zarr", chunks=None)

    def write(self, ds: Any, path: str, layout: Layout) -> None:
        ds.to_zarr(path, mode="w-", zarr_format=3,
                   encoding=encoding_for(list(map(str, ds.data_vars)), layout, self.zstd))


class XarrayTensorstoreAdapter(Adapter):
    """``xarray_tensorstore.open_zarr``; loads through ``xarray_tensorstore.read``."""

    name = "xarray-tensorstore"

    def probe(self) -> str:
        try:
            self.xts = importlib.import_module("xarray_tensorstore")
            importlib.import_module("tensorstore")
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        try:
            ts_version = importlib.metadata.version("tensorstore")
        except importlib.metadata.PackageNotFoundError:
            ts_version = "?"
        return f"{getattr(self.xts, '__version__', '?')} (tensorstore {ts_version})"

    def open(self, path: str) -> Any:
        return self.xts.open_zarr(path)

    def load(self, ds: Any) -> Any:
        return self.xts.read(ds).load()

    def write(self, ds: Any, path: str, layout: Layout) -> None:
        raise Skipped(NO_WRITER)


# --------------------------------------------------------------------------- verification


def identical(got: Any, expected: Any, what: str) -> str:
    """'' if ``got`` is identical to ``expected`` (xarray's oracle), else what differs."""
    import xarray as xr

    try:
        xr.testing.assert_identical(got, expected)
    except AssertionError as exc:
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        return f"{what}: " + " / ".join(lines[:3])[:300]
    return ""


def opened_like(ds: Any, src: Any) -> str:
    """'' if the lazily opened ``ds`` has the source's variables, dimensions, dtypes,
    coordinates and attributes (without reading the data variables), else what differs."""
    if dict(ds.sizes) != dict(src.sizes):
        return f"open: sizes {dict(ds.sizes)}, expected {dict(src.sizes)}"
    if set(ds.data_vars) != set(src.data_vars):
        return f"open: variables {sorted(ds.data_vars)}, expected {sorted(src.data_vars)}"
    if ds.attrs != src.attrs:
        return f"open: attributes {ds.attrs}, expected {src.attrs}"
    for name, var in src.data_vars.items():
        got = ds[name]
        if got.dims != var.dims or got.dtype != var.dtype or got.attrs != var.attrs:
            return (f"open: {name}: {got.dims} {got.dtype} {got.attrs}, expected "
                    f"{var.dims} {var.dtype} {var.attrs}")
    return identical(ds.coords.to_dataset(), src.coords.to_dataset(), "open: coordinates")


def encoding_error(ds: Any, case: Case) -> str:
    """'' if every data variable of ``ds`` is stored in ``case``'s layout with zstd."""
    lay = case.layout
    for name in case.names:
        enc = ds[name].encoding
        if tuple(enc.get("chunks") or ()) != lay.chunks:
            return f"{name}: chunks {enc.get('chunks')}, expected {lay.chunks}"
        shards = enc.get("shards")
        if (tuple(shards) if shards else None) != lay.shards:
            return f"{name}: shards {shards}, expected {lay.shards}"
        codecs = [c if isinstance(c, dict) else c.to_dict() for c in enc.get("compressors", ())]
        if [c.get("name") for c in codecs] != ["zstd"]:
            return f"{name}: compressors {codecs}, expected zstd"
    return ""


# --------------------------------------------------------------------------- the harness


def time_min(
    prepare: Callable[[], Any], fn: Callable[[Any], Any], check: Callable[[Any], str],
    repeat: int, warmup: bool, cleanup: Callable[[Any, Any], None] = lambda p, o: None,
    min_time: float = 0.0,
) -> tuple[list[float], list[float], str]:
    """``fn(prepare())`` ``repeat`` times, and more until the timed runs add up to
    ``min_time`` seconds (at most ``MAX_RUNS``), once more untimed first if ``warmup``; only
    ``fn`` is timed; every result is checked, then ``cleanup(prepared, result)`` is called.

    Returns the wall-clock times, the CPU times and '' or, at the first wrong result,
    ``([], [], what differs)``.
    """
    times: list[float] = []
    cpu: list[float] = []
    k = 0
    while k < repeat + int(warmup) or (sum(times) < min_time and len(times) < MAX_RUNS):
        k += 1
        prepared = prepare()
        gc.collect()
        c0, t0 = cpu_time(), time.perf_counter()
        out = fn(prepared)
        dt, dc = time.perf_counter() - t0, cpu_time() - c0
        try:
            err = check(out)
        finally:
            cleanup(prepared, out)
        del out, prepared
        if err:
            return [], [], err
        if k > int(warmup):
            times.append(dt)
            cpu.append(dc)
    return times, cpu, ""


def cpu_time() -> float:
    """CPU seconds this process has used, in every thread, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def finish(res: Result, times: list[float], cpu: list[float]) -> Result:
    """Mark ``res`` ok with its times; its values are the minima, in ms."""
    res.times_s, res.cpu_s = times, cpu
    res.value = min(times) * 1e3
    res.cpu_value = min(cpu) * 1e3
    res.status = "ok"
    return res


def log_result(res: Result) -> None:
    """One progress line for a finished cell."""
    what = f"{res.value:.1f} ms" if res.status == "ok" else f"{res.status}: {res.reason}"
    log(f"  {res.impl:18s} {res.layout} {res.workload}: {what}")


def close_all(*datasets: Any) -> None:
    """Close the datasets that are datasets (a result may be one, or an error string)."""
    for ds in datasets:
        close = getattr(ds, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


def read_plans(adapter: Adapter, case: Case, path: str) -> dict[str, tuple[Any, ...]]:
    """workload -> (prepare, fn, check, cleanup) of each read workload for one adapter."""
    src = case.src
    k = case.time_index
    j, i = case.point
    expected_step = src.isel(time=k)
    expected_series = src.isel(y=j, x=i)

    def none() -> None:
        return None

    def opened() -> Any:
        return adapter.open(path)

    return {
        "open": (none, lambda _: adapter.open(path), lambda ds: opened_like(ds, src),
                 lambda _, ds: close_all(ds)),
        "load": (none, lambda _: adapter.load(adapter.open(path)),
                 lambda ds: identical(ds, src, "load"), lambda _, ds: close_all(ds)),
        "isel_time": (opened, lambda ds: adapter.load(ds.isel(time=k)),
                      lambda out: identical(out, expected_step, f"isel(time={k})"),
                      lambda ds, _: close_all(ds)),
        "series": (opened, lambda ds: adapter.load(ds.isel(y=j, x=i)),
                   lambda out: identical(out, expected_series, f"isel(y={j}, x={i})"),
                   lambda ds, _: close_all(ds)),
    }


def run_reads(adapter: Adapter, case: Case, workloads: Sequence[str], path: str,
              repeat: int, min_time: float = 0.0) -> list[Result]:
    """The read workloads of one case for one implementation, on the shared copy."""
    lay = case.layout.name
    out = []
    plans = read_plans(adapter, case, path)
    for w in workloads:
        if w not in READ_WORKLOADS:
            continue
        prepare, fn, check, cleanup = plans[w]
        res = Result(lay, w, adapter.name, "error")
        try:
            times, cpu, err = time_min(prepare, fn, check, repeat, warmup=True, cleanup=cleanup,
                                  min_time=min_time)
            if err:
                res.status, res.reason = "wrong", err
            else:
                finish(res, times, cpu)
        except Exception as exc:  # report, never crash the run
            res.reason = describe(exc)
        out.append(res)
        log_result(res)
    return out


def verify_copy(path: str, case: Case, readers: Sequence[Adapter]) -> str:
    """'' if the copy at ``path`` reads back identical to the source through every reader
    (and in the layout asked for), else what is wrong."""
    for reader in readers:
        try:
            ds = reader.open(path)
        except Exception as exc:  # a copy a reader cannot open is a wrong copy
            return f"{reader.name} cannot open it: {describe(exc)}"
        try:
            err = encoding_error(ds, case) if reader.name != "xarray-tensorstore" else ""
            err = err or identical(reader.load(ds), case.src, f"read back by {reader.name}")
        finally:
            close_all(ds)
        if err:
            return err
    return ""


def run_write(adapter: Adapter, case: Case, root: str, repeat: int,
              readers: Sequence[Adapter]) -> Result:
    """The timed write of one case for one implementation: each run into a fresh path."""
    res = Result(case.layout.name, "write", adapter.name, "error")
    times: list[float] = []
    cpu: list[float] = []
    path = ""
    try:
        for k in range(repeat):
            path = os.path.join(root, f"{adapter.name}-{case.layout.name}-w{k}")
            gc.collect()
            os.sync()  # the last copy's dirty pages are flushed now, not in this timed write
            c0, t0 = cpu_time(), time.perf_counter()
            adapter.write(case.src, path, case.layout)
            times.append(time.perf_counter() - t0)
            cpu.append(cpu_time() - c0)
    except Skipped as exc:
        res.status, res.reason = "skipped", str(exc)
        return res
    except Exception as exc:  # report, never crash the run
        res.reason = describe(exc)
        return res
    err = verify_copy(path, case, readers)
    if err:
        res.status, res.reason = "wrong", err
    else:
        finish(res, times, cpu)
    return res


# --------------------------------------------------------------------------- the table


def summarize(results: Sequence[Result], measure: str = "value"
              ) -> tuple[list[dict[str, Any]], float | None, int]:
    """Rows (one per layout x workload) with the fastest peer and zarr3c's ratio to it,
    and the geometric mean of the ratios over the rows that have one; ``measure``:
    ``"value"`` (wall-clock) or ``"cpu_value"`` (CPU time)."""

    def of(c: Result) -> float | None:
        v: float | None = getattr(c, measure)
        return v

    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        row = rows.setdefault((r.layout, r.workload),
                              {"layout": r.layout, "workload": r.workload, "cells": {}})
        row["cells"][r.impl] = r
    ratios = []
    for row in rows.values():
        cells = row["cells"]
        peers = [c for n, c in cells.items() if n in PEERS and c.status == "ok" and of(c)]
        best = min(peers, key=lambda c: of(c) or 0.0) if peers else None
        row["best_peer"] = best.impl if best else None
        z = cells.get("zarr3c")
        row["ratio"] = (
            (of(z) or 0.0) / (of(best) or 1.0)
            if (best and z and z.status == "ok" and of(z) and of(best)) else None
        )
        if row["ratio"] is not None:
            ratios.append(row["ratio"])
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return list(rows.values()), geo, len(ratios)


def cell_text(r: Result | None, measure: str = "value") -> str:
    """A table cell: the value, or a short word saying why there is none."""
    if r is None:
        return "-"
    v = getattr(r, measure)
    if r.status == "ok" and v is not None:
        return f"{v:.1f}" if v >= 10 else f"{v:.2f}"
    return {"wrong": "WRONG", "error": "ERROR", "unavailable": "n/a", "skipped": "skip"}.get(
        r.status, r.status
    )


def print_table(results: Sequence[Result], columns: Sequence[str], file: Any = sys.stdout,
                measure: str = "value", notes_too: bool = True) -> None:
    """The comparison table of ``measure`` (see :func:`summarize`), the geometric mean,
    and (``notes_too``) why any cell was not timed."""
    rows, geo, n = summarize(results, measure)
    head = ["layout", "workload", *columns, "z3c/best", "best peer"]
    table = [head]
    for row in rows:
        cells = row["cells"]
        table.append([
            row["layout"], row["workload"], *(cell_text(cells.get(c), measure) for c in columns),
            f"{row['ratio']:.2f}" if row["ratio"] is not None else "-",
            row["best_peer"] or "-",
        ])
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for i, line in enumerate(table):
        print("  ".join(
            c.ljust(w) if j < 2 or j == len(head) - 1 else c.rjust(w)
            for j, (c, w) in enumerate(zip(line, widths, strict=True))
        ), file=file)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=file)
    if geo is not None:
        print(f"\ngeometric mean of zarr3c / fastest peer over {n} rows: {geo:.3f}", file=file)
    else:
        print("\ngeometric mean of zarr3c / fastest peer: n/a (no row with zarr3c and a peer)",
              file=file)
    notes: dict[tuple[str, str, str], None] = {}
    for r in results:
        if r.status != "ok" and notes_too:
            notes[(r.impl, r.status, r.reason)] = None
    if notes:
        print("\nnot timed:", file=file)
        for impl, status, reason in notes:
            label = {"wrong": "WRONG ANSWER"}.get(status, status)
            print(f"  {impl}: {label}: {reason}", file=file)


# --------------------------------------------------------------------------- main


def parse_shape(text: str) -> tuple[int, ...]:
    """``"16,128,128"`` -> ``(16, 128, 128)``: three positive integers."""
    try:
        shape = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a shape of integers: {text!r}") from None
    if len(shape) != 3 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"a shape is three positive integers, got {text!r}")
    return shape


def add_geometry_arguments(p: argparse.ArgumentParser) -> None:
    """The options that shape the dataset and its layouts (shared with xarray_floor.py)."""
    p.add_argument("--size", type=int, default=1024,
                   help="MiB of data variables in all (1024); sets the time length")
    p.add_argument("--nvars", type=int, default=4, help="data variables (4)")
    p.add_argument("--grid", type=int, default=256, help="length of y and of x (256)")
    p.add_argument("--chunks", type=parse_shape, default=(16, 128, 128),
                   help="chunk shape of the chunked layout (16,128,128)")
    p.add_argument("--shards", type=parse_shape, default=(128, 256, 256),
                   help="shard shape of the sharded layout (128,256,256; clipped to the shape)")
    p.add_argument("--inner", type=parse_shape, default=(16, 64, 64),
                   help="inner chunk shape of the sharded layout (16,64,64)")


@dataclass(frozen=True)
class Geometry:
    """The dataset's shape, its two layouts and the selections the workloads read.

    Parameters
    ----------
    shape : tuple of int
        ``(time, y, x)`` of every variable.
    layouts : dict of str to Layout
        ``"chunked"`` and ``"sharded"``, clipped to the shape.
    time_index : int
        The step ``isel_time`` reads: neither on a chunk boundary nor at an end, so that
        edge handling is not what is timed.
    point : tuple of int
        The ``(y, x)`` whose time series ``series`` reads.
    """

    shape: tuple[int, int, int]
    layouts: dict[str, Layout]
    time_index: int
    point: tuple[int, int]


def geometry(args: argparse.Namespace) -> Geometry:
    """The :class:`Geometry` of parsed arguments (SystemExit for an impossible one)."""
    if min(args.size, args.nvars, args.grid) < 1:
        raise SystemExit("--size, --nvars and --grid must be positive")
    n_time = max(1, round(args.size * 2**20 / (args.nvars * args.grid**2 * DTYPE.itemsize)))
    shape = (n_time, args.grid, args.grid)
    shards = tuple(min(s, n) for s, n in zip(args.shards, shape, strict=True))
    inner = tuple(min(c, s) for c, s in zip(args.inner, shards, strict=True))
    if any(s % c for s, c in zip(shards, inner, strict=True)):
        raise SystemExit(f"shard shape {shards} is not a multiple of the inner chunks {inner}")
    chunks = tuple(min(c, n) for c, n in zip(args.chunks, shape, strict=True))
    layouts = {"chunked": Layout("chunked", chunks), "sharded": Layout("sharded", inner, shards)}
    k = min(n_time - 1, n_time // 2 + 3)
    point = (min(args.grid - 1, args.grid // 3 + 1), min(args.grid - 1, args.grid // 2 + 5))
    return Geometry(shape, layouts, k, point)


def build_parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(
        description="Compare zarr3c's xarray backend and writer with xarray's zarr engine "
        "(zarr-python) and xarray-tensorstore."
    )
    add_geometry_arguments(p)
    p.add_argument("--repeat", type=int, default=5, help="timed runs per cell; min is kept (5)")
    p.add_argument("--min-time", type=float, default=1.0,
                   help="read cells: more runs until the timed ones add up to this many "
                   f"seconds, at most {MAX_RUNS} (1.0): the quick rows on a busy machine")
    p.add_argument("--only", type=lambda s: parse_list(s, IMPLEMENTATIONS, "implementation"),
                   default=list(IMPLEMENTATIONS),
                   help=f"comma list of {','.join(IMPLEMENTATIONS)}")
    p.add_argument("--workloads", type=lambda s: parse_list(s, WORKLOADS, "workload"),
                   default=list(WORKLOADS), help=f"comma list of {','.join(WORKLOADS)}")
    p.add_argument("--layouts", type=lambda s: parse_list(s, LAYOUTS, "layout"),
                   default=list(LAYOUTS), help=f"comma list of {','.join(LAYOUTS)}")
    p.add_argument("--tmpdir", default=None,
                   help="where the copies are written (a fresh directory inside it)")
    p.add_argument("--keep", action="store_true",
                   help="keep the written copies (else all are deleted when the run ends)")
    p.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                   help="also write machine-readable results to OUT")
    return p


def make_adapters(names: Sequence[str]) -> list[Adapter]:
    """The adapters for the selected implementation names."""
    factories: dict[str, Callable[[], Adapter]] = {
        "zarr3c": Zarr3cAdapter,
        "zarr-python": ZarrPythonAdapter,
        "xarray-tensorstore": XarrayTensorstoreAdapter,
    }
    return [factories[n]() for n in names]


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No warnings printed in timed code (zarr-python warns that consolidated metadata is
    not in the Zarr v3 spec, on every write)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison; exit status 1 if any implementation returned a wrong answer."""
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        raise SystemExit("--repeat must be positive")
    geo = geometry(args)
    shape, layouts, k, point = geo.shape, geo.layouts, geo.time_index, geo.point
    n_time = shape[0]
    chunks = layouts["chunked"].chunks
    shards, inner = layouts["sharded"].shards, layouts["sharded"].chunks

    versions: dict[str, str] = {}
    adapters: list[Adapter] = []
    unavailable: dict[str, str] = {}
    for adapter in make_adapters(args.only):
        try:
            versions[adapter.name] = adapter.probe()
            adapters.append(adapter)
        except Unavailable as exc:
            unavailable[adapter.name] = str(exc)
        except Exception as exc:  # report, never crash the run
            unavailable[adapter.name] = describe(exc)
    import xarray as xr

    writers = {a.name: a for a in adapters if type(a).write is not Adapter.write
               and a.name != "xarray-tensorstore"}
    reference = writers.get("zarr-python") or writers.get("zarr3c")
    if reference is None:
        raise SystemExit("neither zarr-python nor zarr3c is available to write the source")

    mib = args.nvars * math.prod(shape) * DTYPE.itemsize / 2**20
    log(f"source: {args.nvars} float32 variables {shape} ({mib:.0f} MiB), zstd level "
        f"{ZSTD_LEVEL}, {os.cpu_count()} cpus, repeat {args.repeat}, xarray {xr.__version__}")
    for name in args.only:
        log(f"  {name:18s} {versions.get(name) or 'unavailable: ' + unavailable.get(name, '?')}")
    t_src = time.perf_counter()
    src = make_source(n_time, args.grid, args.nvars)
    log(f"  source built in {time.perf_counter() - t_src:.1f} s")

    base = tempfile.mkdtemp(prefix="zarr3c-xarray-", dir=args.tmpdir)
    results: list[Result] = []
    try:
        with quiet():
            for lay_name in args.layouts:
                layout = layouts[lay_name]
                case = Case(src, layout, k, point)
                log(f"[{lay_name}] chunks {layout.chunks}, shards {layout.shards}")
                for name in args.only:
                    if name in unavailable:
                        results += [Result(lay_name, w, name, "unavailable", unavailable[name])
                                    for w in args.workloads]
                shared = os.path.join(base, f"source-{lay_name}")
                reads = [w for w in args.workloads if w in READ_WORKLOADS]
                err = ""
                if reads:
                    try:
                        reference.write(src, shared, layout)
                        err = verify_copy(shared, case, [reference])
                    except Exception as exc:  # report, never crash the run
                        err = f"writing the shared copy with {reference.name}: {describe(exc)}"
                    if err:
                        log(f"  shared copy: {err}")
                        results += [Result(lay_name, w, a.name, "error", f"shared copy: {err}")
                                    for a in adapters for w in reads]
                    else:
                        log(f"  shared copy by {reference.name}: {dir_size(shared)} bytes")
                for adapter in adapters:
                    if reads and not err:
                        results += run_reads(adapter, case, reads, shared, args.repeat,
                                             args.min_time)
                    if "write" in args.workloads:
                        res = run_write(adapter, case, base, args.repeat, adapters)
                        results.append(res)
                        log_result(res)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log(f"copies kept in {base}")

    order = {n: i for i, n in enumerate(IMPLEMENTATIONS)}
    results.sort(key=lambda r: (LAYOUTS.index(r.layout), WORKLOADS.index(r.workload),
                                order[r.impl]))
    header = (
        f"xarray {xr.__version__}: {args.nvars} float32 variables {shape} ({mib:.0f} MiB), "
        f"zstd level {ZSTD_LEVEL}; chunked {chunks}, sharded {shards} / {inner}; "
        f"isel(time={k}), isel(y={point[0]}, x={point[1]}); min of {args.repeat}, "
        f"{os.cpu_count()} cpus; times in ms"
    )
    print(f"\n{header}\n")
    print_table(results, args.only, notes_too=False)
    print("\nCPU time of the process (every thread, user + system), ms:\n")
    print_table(results, args.only, measure="cpu_value")
    if args.json_out:
        rows, geo, n = summarize(results)
        cpu_rows, cpu_geo, _ = summarize(results, "cpu_value")
        doc = {
            "config": {k: v for k, v in vars(args).items() if k != "json_out"}
            | {"shape": shape, "shards": shards, "inner": inner, "chunks": chunks,
               "time_index": k, "point": point},
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": sys.version.split()[0],
                "numpy": np.__version__,
                "xarray": xr.__version__,
            },
            "versions": versions,
            "unavailable": unavailable,
            "results": [asdict(r) for r in results],
            "rows": [{k: v for k, v in row.items() if k != "cells"} for row in rows],
            "geomean_zarr3c_over_best_peer": geo,
            "cpu_rows": [{k: v for k, v in row.items() if k != "cells"} for row in cpu_rows],
            "cpu_geomean_zarr3c_over_best_peer": cpu_geo,
            "geomean_rows": n,
        }
        with open(args.json_out, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"results written to {args.json_out}")
    return 1 if any(r.status == "wrong" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
