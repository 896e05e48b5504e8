"""asv benchmarks: xarray through zarr3c (``engine="zarr3c"`` and ``zarr3c.xarray.to_zarr``).

The workloads of ``asv_benchmarks/compare_xarray.py`` (which runs them against xarray's
zarr engine and xarray-tensorstore), sized so that one asv run stays short: 4 float32
variables ``(time, y, x)`` of 64 x 256 x 256 (64 MiB in all), zstd level 0, chunks of
16 x 128 x 128 (or shards of 64 x 256 x 256 holding 16 x 64 x 64 inner chunks), written
into a temporary directory in ``setup``:

- ``Open.time_open``: ``xr.open_dataset(path, engine=...)``, metadata and the index
  coordinates xarray decodes;
- ``Open.time_load``: open, then ``.load()`` of everything;
- ``Open.time_isel_time``: ``.isel(time=k).load()`` of one time step;
- ``Open.time_series``: ``.isel(y=j, x=i).load()``, the time series at one point;
- ``Write.time_write``: the whole dataset into a fresh path (consolidated metadata, as
  ``to_zarr`` writes by default).

Where xarray (or zarr3c) does not import, ``setup`` raises ``NotImplementedError``, which asv
reports as skipped.  ``setup`` checks the round trip once, so a wrong answer fails the
benchmark instead of being timed.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from typing import Any, ClassVar

import numpy as np

xr: Any
zxr: Any
try:
    xr = importlib.import_module("xarray")
    zxr = importlib.import_module("zarr3c.xarray")
    _IMPORT_ERROR = ""
except Exception as exc:  # any import failure means "skip", with its reason
    xr = zxr = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

NVARS = 4
SHAPE = (64, 256, 256)
LAYOUTS = ["chunked", "sharded"]
CHUNKS = (16, 128, 128)
SHARDS = (64, 256, 256)
INNER = (16, 64, 64)
TIME_INDEX = SHAPE[0] // 2 + 3
POINT = {"y": SHAPE[1] // 3 + 1, "x": SHAPE[2] // 2 + 5}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}

_SOURCE: Any = None


def source() -> Any:
    """The source Dataset (built once per process): smooth float32 fields plus noise,
    quantized to 1/256, with datetime and float coordinates."""
    global _SOURCE
    if _SOURCE is None:
        rng = np.random.default_rng(0)
        n_time, ny, nx = SHAPE
        yy, xx = np.meshgrid(np.linspace(-1.0, 1.0, ny), np.linspace(0.0, 6.28, nx),
                             indexing="ij")
        data_vars = {}
        for v in range(NVARS):
            base = 10 * np.cos(yy) * np.sin((v + 1) * xx)
            noise = rng.normal(0, 0.5, size=SHAPE)
            drift = np.sin(np.arange(n_time) / 50 + v)[:, None, None]
            values = (np.round((base + drift + noise) * 256) / 256).astype("float32")
            data_vars[f"var{v}"] = (("time", "y", "x"), values, {"units": "K"})
        coords = {
            "time": np.arange(n_time).astype("datetime64[D]").astype("datetime64[ns]"),
            "y": np.linspace(-60.0, 60.0, ny),
            "x": np.linspace(0.0, 360.0, nx, endpoint=False),
        }
        _SOURCE = xr.Dataset(data_vars, coords=coords, attrs={"title": "bench_xarray"})
    return _SOURCE


def encoding(layout: str) -> dict[str, Any]:
    """The ``encoding`` of every data variable in a layout."""
    enc: dict[str, Any] = {"compressors": [ZSTD]}
    if layout == "chunked":
        enc["chunks"] = CHUNKS
    else:
        enc["chunks"], enc["shards"] = INNER, SHARDS
    return {f"var{v}": dict(enc) for v in range(NVARS)}


def write(path: str, layout: str) -> None:
    """The source dataset written to a new store at ``path`` by zarr3c's writer."""
    zxr.to_zarr(source(), path, mode="w-", encoding=encoding(layout))


def open_dataset(path: str) -> Any:
    """``xr.open_dataset(path, engine="zarr3c")``, the class given as the engine so that a
    checkout on ``PYTHONPATH`` is measured without its entry point."""
    return xr.open_dataset(path, engine=zxr.Zarr3cBackendEntrypoint, chunks=None)


def _write_checked(path: str, layout: str) -> None:
    """Write the dataset to ``path`` and check it reads back identical, chunked as asked."""
    write(path, layout)
    with open_dataset(path) as ds:
        xr.testing.assert_identical(ds.load(), source())
        if ds["var0"].encoding.get("chunks") != encoding(layout)["var0"]["chunks"]:
            raise AssertionError(f"{layout}: chunks {ds['var0'].encoding}")


def _require() -> None:
    if xr is None:
        raise NotImplementedError(f"xarray or zarr3c.xarray unavailable: {_IMPORT_ERROR}")


class Open:
    """Read the dataset written once in ``setup`` (its files stay in the page cache)."""

    params = (LAYOUTS,)
    param_names: ClassVar[list[str]] = ["layout"]
    number = 1
    repeat = (3, 20, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, layout: str) -> None:
        _require()
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-xarray-")
        self.path = os.path.join(self.tmp, "ds.zarr")
        try:
            _write_checked(self.path, layout)
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.ds = open_dataset(self.path)

    def teardown(self, layout: str) -> None:
        self.ds.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_open(self, layout: str) -> None:
        open_dataset(self.path).close()

    def time_load(self, layout: str) -> None:
        open_dataset(self.path).load()

    def time_isel_time(self, layout: str) -> None:
        # isel makes a new lazily indexed variable: nothing of an earlier load is reused
        self.ds.isel(time=TIME_INDEX).load()

    def time_series(self, layout: str) -> None:
        self.ds.isel(**POINT).load()


class Write:
    """Write the whole dataset into a fresh path (each sample its own directory)."""

    params = (LAYOUTS,)
    param_names: ClassVar[list[str]] = ["layout"]
    number = 1
    repeat = (3, 10, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 300.0

    def setup(self, layout: str) -> None:
        _require()
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-xarray-")
        self.count = 0
        try:
            _write_checked(os.path.join(self.tmp, "check.zarr"), layout)
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def teardown(self, layout: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_write(self, layout: str) -> None:
        self.count += 1
        write(os.path.join(self.tmp, f"w{self.count}.zarr"), layout)
