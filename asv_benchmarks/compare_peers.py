"""Peer comparison: the same array workloads through zarr3c and the other Zarr libraries.

Runs, in one process and on the same source data, each workload through

- ``zarr3c``;
- ``zarr-python`` (3.x, its default ``BatchedCodecPipeline``);
- ``zarrs-python`` (zarr-python with ``codec_pipeline.path = "zarrs.ZarrsCodecPipeline"``);
- ``tensorstore`` (driver ``"zarr3"``, or ``"zarr"`` for Zarr v2, over a ``"file"`` kvstore);
- ``limit`` (read workloads only): not a library but a bound: the chunk files read with plain
  Python I/O and decoded with numcodecs' zstd over a ``ThreadPoolExecutor`` with
  ``os.cpu_count()`` workers, i.e. the file read and decode of the same bytes split over the
  cores, with nothing else (no metadata, no index parsing, no copy into an output array).
  For ``random`` every read decodes each chunk it touches; for ``random_concurrent`` each
  touched chunk is decoded once (reads in flight together may share a decode); for
  ``vindex`` and ``oindex`` each chunk the points or the outer product touch, once (the
  floor of any library that decodes whole chunks: on the zstd rows that is every chunk).

and prints a table of times with the ratio of zarr3c to the fastest peer (the limit is not a
peer) and the geometric mean of that ratio over the rows.

The source is one uint16 cube (``--size``, default 512: 256 MiB) of smooth gradients plus
noise, so that it is random-ish but compressible.  Rows are ``layout x compression x workload``:

- layouts: ``chunked`` (``--chunk``\\ ^3 chunks) and ``sharded`` (``--shard``\\ ^3 shards of
  ``--inner``\\ ^3 inner chunks); a layout an implementation cannot write is reported as
  skipped with the reason, never timed;
- compressions: ``none`` and ``zstd`` (level 0, no checksum);
- workloads: ``write`` (all data, into a fresh array), ``read_all``, ``read_chunks`` (every
  read unit -- a chunk, or an inner chunk when sharded -- one after another), ``random``
  (``--nreads`` random 4^3 boxes one after another) and ``random_concurrent`` (the same boxes
  issued concurrently), ``vindex`` (``--npoints`` random points, ``a.vindex[i, j, k]``) and
  ``oindex`` (``a.oindex[i, j, :chunk]`` with two unsorted ``--nindices``-element index arrays
  with repeats on the first two axes and the first chunk's width on the last: 1000 x 1000 x 64
  uint16 is 128 MiB out).

With ``--strings`` the rows are string arrays instead of the cube (zarr3c, zarr-python and
zarrs-python only): 10^6 short strings (5-15 characters, chunks of 10^5) and 10^5 long ones
(about 1,000 characters, chunks of 10^4), the data of ``bench_strings.strings`` (one in ten
holding a non-ASCII character), each written whole into a fresh array (``write``) and read
whole (``read_all``), codecs ``vlen-utf8`` + zstd level 0 without checksum (zarr-python's
defaults for ``dtype=str``), every result checked equal to the source.

With ``--zarr-format 2`` every implementation writes Zarr v2 arrays of the same cube instead
(``.zarray``, chunk keys ``i.j.k``, dtype ``"<u2"``, compressor null or numcodecs
``{"id": "zstd", "level": 0}``); Zarr v2 has no sharding, so the sharded rows are reported as
skipped.  Each written copy is checked to be in the asked format (``zarr.json`` for 3,
``.zarray`` with the expected dtype, compressor and separator for 2) before it is read; a copy
in another format is reported as ``WRONG``.

Each implementation writes its own copy (timed) and reads its own copy (the files are in the
page cache: every read workload runs once untimed as a warm-up).  Every timed write goes to a
fresh path and no copy is deleted before the run ends: on ext4 without a journal a delete
slows the writes that follow it (freed inodes are skipped for 30 s).  Each measurement is repeated
``--repeat`` times and the minimum kept.  Every read result is compared with the source: a wrong
answer is reported as ``WRONG`` and not timed.  An implementation that fails to import or
raises is reported as ``unavailable: <reason>`` / ``error: <reason>``; the run goes on.

Usage::

    python asv_benchmarks/compare_peers.py                       # everything, 512^3
    python asv_benchmarks/compare_peers.py --size 256 --repeat 1 # quick
    python asv_benchmarks/compare_peers.py --zarr-format 2       # the same through Zarr v2
    python asv_benchmarks/compare_peers.py --strings             # the string rows
    python asv_benchmarks/compare_peers.py --only zarr3c,tensorstore --layouts chunked \\
        --compressions zstd --workloads read_all,random --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import importlib
import itertools
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

PEERS = ("zarr-python", "zarrs-python", "tensorstore")
IMPLEMENTATIONS = ("zarr3c", *PEERS)
LIMIT = "limit"
ALL_COLUMNS = (*IMPLEMENTATIONS, LIMIT)
WORKLOADS = (
    "write", "read_all", "read_chunks", "random", "random_concurrent", "vindex", "oindex",
)
#: Workloads the limit bounds (for points and outer products: reading and decoding the read
#: units they touch, without picking the values out of them)
LIMIT_WORKLOADS = ("read_all", "read_chunks", "random", "random_concurrent", "vindex", "oindex")
PER_READ_WORKLOADS = ("random", "random_concurrent")
COMPRESSIONS = ("none", "zstd")
LAYOUTS = ("chunked", "sharded")
DTYPE = np.dtype("uint16")
RANDOM_BOX = 4
ZSTD_LEVEL = 0
ZARR_FORMATS = (2, 3)
#: Zarr v2's chunk key separator, the same for every implementation (v2's default)
V2_SEPARATOR = "."
V2_NO_SHARDING = "Zarr v2 has no sharding"

#: The string rows (``--strings``): name -> (strings, about how many characters each, chunk
#: length), the data of ``bench_strings.strings`` (asv_benchmarks/benchmarks/bench_strings.py)
STRING_SETS = {"strings_short": (10**6, 10, 10**5), "strings_long": (10**5, 1000, 10**4)}
STRING_WORKLOADS = ("write", "read_all")
#: The implementations with string rows (zarrs-python as zarr-python's codec pipeline)
STRING_IMPLEMENTATIONS = ("zarr3c", "zarr-python", "zarrs-python")

Selection = tuple[slice, ...]


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Layout:
    """How an array is split into stored objects.

    Parameters
    ----------
    name : str
        ``"chunked"`` or ``"sharded"``.
    chunks : tuple of int
        The read unit: the chunk shape, or the inner chunk shape of a sharded array.
    shards : tuple of int or None
        The shard shape (the stored object), or None for an unsharded array.
    """

    name: str
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None = None

    @property
    def stored(self) -> tuple[int, ...]:
        """Shape of one stored object (a chunk file or a shard file)."""
        return self.shards if self.shards is not None else self.chunks


@dataclass
class Case:
    """Everything a workload needs: the source, its layout, the selections to read."""

    src: np.ndarray
    layout: Layout
    compression: str
    chunk_selections: list[Selection]
    random_selections: list[Selection]
    threads: int
    points: tuple[np.ndarray, ...] = ()
    orthogonal: tuple[Any, ...] = ()
    zarr_format: int = 3

    @property
    def shape(self) -> tuple[int, ...]:
        return self.src.shape

    @functools.cached_property
    def expected_points(self) -> np.ndarray:
        """What ``vindex`` of :attr:`points` returns (numpy, computed once per case)."""
        return self.src[self.points]

    @functools.cached_property
    def expected_orthogonal(self) -> np.ndarray:
        """What ``oindex`` of :attr:`orthogonal` returns (numpy, computed once per case)."""
        return numpy_orthogonal(self.src, self.orthogonal)


@dataclass
class Result:
    """One cell of the table: a workload timed for one implementation."""

    layout: str
    compression: str
    workload: str
    impl: str
    status: str  # ok | unavailable | skipped | error | wrong
    reason: str = ""
    times_s: list[float] = field(default_factory=list)
    unit: str = "ms"
    value: float | None = None  # min time in `unit`
    stored_bytes: int | None = None


class Unavailable(Exception):
    """An implementation cannot run here (import failure, missing feature)."""


class Skipped(Exception):
    """An implementation does not support a layout/compression combination."""


def describe(exc: BaseException) -> str:
    """One line naming an exception: ``Type: first line of the message`` (at most 200 chars)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# --------------------------------------------------------------------------- source data


def make_source(size: int, seed: int = 0) -> np.ndarray:
    """A ``size``^3 uint16 cube: smooth gradients plus 6 bits of noise.

    Built slab by slab so that the only large allocation is the result itself.
    """
    rng = np.random.default_rng(seed)
    src = np.empty((size, size, size), dtype=DTYPE)
    j = np.arange(size, dtype=np.uint16)
    # Gradients along every axis keep neighbouring values close (compressible); the noise keeps
    # zstd honest (it cannot collapse the data to nothing).
    plane = (j[:, None] * np.uint16(3) + j[None, :]).astype(np.uint16)
    for i in range(size):
        np.add(plane, np.uint16((i * 7) % 4096), out=src[i])
        src[i] += rng.integers(0, 64, size=(size, size), dtype=np.uint16)
    return src


def grid_selections(shape: Sequence[int], unit: Sequence[int]) -> list[Selection]:
    """Every ``unit``-shaped block of ``shape`` in C order, clipped at the edges."""
    ranges = [range(0, n, c) for n, c in zip(shape, unit, strict=True)]
    return [
        tuple(slice(o, min(o + c, n)) for o, c, n in zip(origin, unit, shape, strict=True))
        for origin in itertools.product(*ranges)
    ]


def random_selections(shape: Sequence[int], n: int, box: int, seed: int = 1) -> list[Selection]:
    """``n`` random ``box``^ndim selections inside ``shape`` (fixed seed: same for everyone)."""
    rng = np.random.default_rng(seed)
    origins = rng.integers(0, [max(1, s - box + 1) for s in shape], size=(n, len(shape)))
    return [tuple(slice(int(o), int(o) + box) for o in row) for row in origins]


def point_selection(shape: Sequence[int], n: int, seed: int = 2) -> tuple[np.ndarray, ...]:
    """``n`` random points (one int64 array per axis) for ``vindex``."""
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(0, s, size=n) for s in shape)


def orthogonal_selection(shape: Sequence[int], n: int, width: int,
                         seed: int = 3) -> tuple[Any, ...]:
    """Two unsorted ``n``-element index arrays (repeats allowed) on the first two axes and
    ``slice(0, width)`` on the rest, for ``oindex``."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, shape[0], size=n), rng.integers(0, shape[1], size=n),
            *(slice(0, min(width, s)) for s in shape[2:]))


def numpy_orthogonal(src: np.ndarray, sel: tuple[Any, ...]) -> np.ndarray:
    """``src`` indexed orthogonally (what ``oindex`` returns), numpy being the oracle."""
    axes = [np.arange(src.shape[i])[k] if isinstance(k, slice) else k for i, k in enumerate(sel)]
    return src[np.ix_(*axes)]


def dir_size(path: str) -> int:
    """Total size in bytes of the files under ``path``."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, f))
    return total


def stored_format_error(path: str, case: Case) -> str:
    """'' if the array written at ``path`` is in ``case``'s Zarr format, else what is not.

    For 3: a ``zarr.json`` and no ``.zarray``.  For 2: a ``.zarray`` (and no ``zarr.json``)
    whose dtype, compressor and chunk key separator are the ones every implementation is asked
    for, so that the rows compare the same stored bytes.
    """
    has_v3 = os.path.isfile(os.path.join(path, "zarr.json"))
    has_v2 = os.path.isfile(os.path.join(path, ".zarray"))
    if case.zarr_format == 3:
        return "" if has_v3 and not has_v2 else "the copy written is not Zarr v3 (no zarr.json)"
    if has_v3 or not has_v2:
        return "the copy written is not Zarr v2 (no .zarray, or a zarr.json)"
    try:
        with open(os.path.join(path, ".zarray")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        return f".zarray unreadable: {describe(exc)}"
    comp = doc.get("compressor")
    if case.compression == "none":
        comp_ok = comp is None
    else:
        comp_ok = (
            isinstance(comp, dict) and comp.get("id") == "zstd"
            and comp.get("level") == ZSTD_LEVEL and not comp.get("checksum", False)
        )
    if not comp_ok:
        expected = "null" if case.compression == "none" else f"zstd level {ZSTD_LEVEL}"
        return f".zarray compressor {comp!r}, expected {expected}"
    if doc.get("dtype") != "<u2" or doc.get("filters") is not None:
        return f".zarray dtype {doc.get('dtype')!r}, filters {doc.get('filters')!r}"
    if doc.get("dimension_separator", ".") != V2_SEPARATOR:
        return f".zarray dimension_separator {doc.get('dimension_separator')!r}"
    return ""


# --------------------------------------------------------------------------- implementations


class Adapter:
    """One implementation under test.

    The harness calls, in order: :meth:`probe` (once), :meth:`check` (per case),
    :meth:`session` around everything done for one case, then :meth:`create` + :meth:`write`
    for each timed write (only ``write`` is timed), :meth:`open` once, and the read methods.
    """

    name = "?"

    def probe(self) -> str:
        """Import the implementation; return its version, or raise :class:`Unavailable`."""
        raise NotImplementedError

    def check(self, case: Case, root: str) -> None:
        """Raise :class:`Skipped` if ``case`` cannot be run by this implementation."""

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Context around all the work for one case (zarrs-python sets its config here)."""
        yield

    def create(self, path: str, case: Case) -> None:
        """Create an empty array at ``path`` (untimed); keep a handle for :meth:`write`."""
        raise NotImplementedError

    def write(self, src: np.ndarray) -> None:
        """Write all of ``src`` into the array made by :meth:`create` (timed)."""
        raise NotImplementedError

    def open(self, path: str) -> None:
        """Open the array at ``path`` for reading (untimed)."""
        raise NotImplementedError

    def read(self, sel: Selection) -> np.ndarray:
        """Read one selection."""
        raise NotImplementedError

    def read_concurrent(self, sels: Sequence[Selection]) -> list[np.ndarray]:
        """Read many selections, all in flight at once."""
        raise NotImplementedError

    def vindex(self, points: tuple[np.ndarray, ...]) -> np.ndarray:
        """Read points (``a.vindex[...]``)."""
        return self.arr.vindex[points]

    def oindex(self, sel: tuple[Any, ...]) -> np.ndarray:
        """Read an orthogonal selection (``a.oindex[...]``)."""
        return self.arr.oindex[sel]

    def close(self) -> None:
        """Drop handles."""

    def create_strings(self, path: str, n: int, chunk: int) -> None:
        """Create an empty 1-d string array of ``n`` elements in chunks of ``chunk``, codecs
        ``vlen-utf8`` + zstd level 0 without checksum (untimed); keep it for :meth:`write`
        and :meth:`read`."""
        raise Skipped("no string rows")

    def open_strings(self, path: str) -> None:
        """Open the string array at ``path`` for reading (untimed)."""
        self.open(path)


def import_zarr3c() -> Any:
    """``import zarr3c``; if it is not installed, from this checkout (needs built kernels)."""
    try:
        return importlib.import_module("zarr3c")
    except ModuleNotFoundError as exc:
        if exc.name != "zarr3c":
            raise
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(repo, "src"))
    return importlib.import_module("zarr3c")


class Zarr3cAdapter(Adapter):
    """zarr3c through its public API (docs/design.md)."""

    name = "zarr3c"

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.arr: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._sharding: str | None = None  # None: not probed; "": supported; else the reason

    def probe(self) -> str:
        try:
            zarr3c = import_zarr3c()
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        missing = [
            n for n in ("create_array", "open_array", "LocalStore") if not hasattr(zarr3c, n)
        ]
        if missing:
            raise Unavailable(f"zarr3c has no {', '.join(missing)} yet")
        self.zarr3c = zarr3c
        version = str(getattr(zarr3c, "__version__", "?"))
        # Which libzstd it compresses with (the zstd rows depend on it: docs/performance.md)
        libzstd = getattr(importlib.import_module("zarr3c.codecs.zstd"), "_LIBZSTD", None)
        if libzstd is None:
            return version
        return f"{version} (libzstd {libzstd.release}, {libzstd.name})"

    def _compressors(self, compression: str) -> list[dict[str, Any]] | None:
        if compression == "none":
            return None
        return [{"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}]

    def check(self, case: Case, root: str) -> None:
        if case.layout.shards is None:
            return
        if self._sharding is None:
            # Probe once, on a tiny array: the layout runs as soon as zarr3c supports shards=.
            probe_dir = tempfile.mkdtemp(prefix="zarr3c-shard-probe-", dir=root)
            try:
                data = np.arange(8**3, dtype=DTYPE).reshape(8, 8, 8)
                a = self.zarr3c.create_array(
                    self.zarr3c.LocalStore(probe_dir),
                    shape=data.shape,
                    dtype=DTYPE,
                    chunks=(2, 2, 2),
                    shards=(4, 4, 4),
                    compressors=None,
                    fill_value=0,
                )
                a[...] = data
                back = self.zarr3c.open_array(self.zarr3c.LocalStore(probe_dir), mode="r")[...]
                ok = np.array_equal(np.asarray(back), data)
                self._sharding = "" if ok else "not implemented (sharded round trip differs)"
            except Exception as exc:  # report, never crash the run
                self._sharding = f"not implemented ({describe(exc)})"
            finally:
                shutil.rmtree(probe_dir, ignore_errors=True)
        if self._sharding:
            raise Skipped(self._sharding)

    def create(self, path: str, case: Case) -> None:
        z = self.zarr3c
        self.arr = z.create_array(
            z.LocalStore(path),
            shape=case.shape,
            dtype=DTYPE,
            chunks=case.layout.chunks,
            shards=case.layout.shards,
            compressors=self._compressors(case.compression),
            fill_value=0,
            overwrite=True,
            # zarr3c maps the v3 zstd codec to the v2 compressor {"id": "zstd", ...}; v2 chunk
            # keys default to "i.j.k", as the other implementations write them.
            zarr_format=case.zarr_format,
        )

    def write(self, src: np.ndarray) -> None:
        self.arr[...] = src

    def create_strings(self, path: str, n: int, chunk: int) -> None:
        z = self.zarr3c
        self.arr = z.create_array(z.LocalStore(path), shape=(n,), dtype=str, chunks=(chunk,),
                                  compressors=self._compressors("zstd"), overwrite=True)

    def open(self, path: str) -> None:
        # The format is found from the documents present, as a user would open it.
        self.arr = self.zarr3c.open_array(self.zarr3c.LocalStore(path), mode="r")

    def read(self, sel: Selection) -> np.ndarray:
        return self.arr[sel]

    def read_concurrent(self, sels: Sequence[Selection]) -> list[np.ndarray]:
        # zarr3c's batched read (each chunk read and decoded once for all the selections);
        # a thread pool over a[...] for a zarr3c that predates it.
        batch = getattr(self.arr, "get_many", None)
        if callable(batch):
            return list(batch(sels))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.threads)
        return list(self._pool.map(self.arr.__getitem__, sels))

    def close(self) -> None:
        self.arr = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class ZarrPythonAdapter(Adapter):
    """zarr-python 3 with its default codec pipeline."""

    name = "zarr-python"

    def __init__(self) -> None:
        self.arr: Any = None
        self.zarr_format = 3

    def probe(self) -> str:
        try:
            import zarr
            import zarr.codecs
            import zarr.storage
            from zarr.core.sync import sync
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        if int(zarr.__version__.split(".")[0]) < 3:
            raise Unavailable(f"zarr {zarr.__version__} is not 3.x")
        self.zarr, self.sync = zarr, sync
        return zarr.__version__

    def check(self, case: Case, root: str) -> None:
        pass

    def create(self, path: str, case: Case) -> None:
        zarr = self.zarr
        self.zarr_format = case.zarr_format
        compressors: Any = None
        if case.compression == "zstd" and case.zarr_format == 2:
            import numcodecs  # zarr-python 3 takes a numcodecs codec as a v2 compressor

            compressors = numcodecs.Zstd(level=ZSTD_LEVEL)
        elif case.compression == "zstd":
            compressors = zarr.codecs.ZstdCodec(level=ZSTD_LEVEL, checksum=False)
        self.arr = zarr.create_array(
            zarr.storage.LocalStore(path),
            shape=case.shape,
            dtype=DTYPE,
            chunks=case.layout.chunks,
            shards=case.layout.shards,
            compressors=compressors,
            fill_value=0,
            overwrite=True,
            zarr_format=case.zarr_format,
        )
        self._check_pipeline()

    def write(self, src: np.ndarray) -> None:
        self.arr[...] = src

    def create_strings(self, path: str, n: int, chunk: int) -> None:
        zarr = self.zarr
        self.zarr_format = 3
        self.arr = zarr.create_array(
            zarr.storage.LocalStore(path), shape=(n,), dtype=str, chunks=(chunk,),
            compressors=zarr.codecs.ZstdCodec(level=ZSTD_LEVEL, checksum=False), overwrite=True,
        )
        self._check_pipeline()

    def open(self, path: str) -> None:
        store = self.zarr.storage.LocalStore(path, read_only=True)
        self.arr = self.zarr.open_array(store, mode="r", zarr_format=self.zarr_format)
        self._check_pipeline()

    def _check_pipeline(self) -> None:
        pass

    def read(self, sel: Selection) -> np.ndarray:
        return self.arr[sel]

    def read_concurrent(self, sels: Sequence[Selection]) -> list[np.ndarray]:
        async_arr = self.arr._async_array

        async def gather() -> list[np.ndarray]:
            return list(await asyncio.gather(*(async_arr.getitem(s) for s in sels)))

        # zarr's own event loop (the one its stores are bound to), as Array.__getitem__ uses.
        return self.sync(gather())

    def close(self) -> None:
        self.arr = None


class ZarrsPythonAdapter(ZarrPythonAdapter):
    """zarr-python 3 with the Rust ``zarrs.ZarrsCodecPipeline``."""

    name = "zarrs-python"
    PIPELINE = "zarrs.ZarrsCodecPipeline"

    def probe(self) -> str:
        zarr_version = super().probe()
        try:
            importlib.import_module("zarrs")
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        from importlib.metadata import version

        return f"{version('zarrs')} (zarr {zarr_version})"

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        # The pipeline is chosen when an array is built, and some of its settings are read at
        # call time: keep the config for the whole case rather than per call (a config context
        # per random read would be timed too).
        with self.zarr.config.set({"codec_pipeline.path": self.PIPELINE}):
            yield

    def _check_pipeline(self) -> None:
        pipeline = self.arr._async_array.codec_pipeline
        name = type(pipeline).__name__
        if name != self.PIPELINE.rsplit(".", 1)[1]:
            raise Unavailable(f"codec pipeline is {name}, not {self.PIPELINE}")
        # zarrs-python builds its Rust pipeline from the array metadata (v3, or v2 converted
        # to v3) and, where it cannot, falls back to zarr-python's own for every call: that
        # would time zarr-python under zarrs' name.
        if getattr(pipeline, "impl", True) is None:
            raise Unavailable(
                f"zarrs cannot handle this Zarr v{self.zarr_format} array "
                "(its pipeline falls back to zarr-python's)"
            )


class TensorstoreAdapter(Adapter):
    """tensorstore, driver ``zarr3`` (``zarr`` for Zarr v2) over a ``file`` kvstore, default
    context (no cache)."""

    name = "tensorstore"

    def __init__(self) -> None:
        self.arr: Any = None
        self.driver = "zarr3"

    def probe(self) -> str:
        try:
            import tensorstore
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        self.ts = tensorstore
        from importlib.metadata import version

        return version("tensorstore")

    def _codecs(self, case: Case) -> list[dict[str, Any]]:
        inner: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
        if case.compression == "zstd":
            inner.append(
                {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}
            )
        if case.layout.shards is None:
            return inner
        return [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(case.layout.chunks),
                    "codecs": inner,
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                    "index_location": "end",
                },
            }
        ]

    def _v2_metadata(self, case: Case) -> dict[str, Any]:
        return {
            "shape": list(case.shape),
            "chunks": list(case.layout.chunks),
            "dtype": "<u2",
            "fill_value": 0,
            "order": "C",
            "filters": None,
            "compressor": (
                None if case.compression == "none" else {"id": "zstd", "level": ZSTD_LEVEL}
            ),
            "dimension_separator": V2_SEPARATOR,
        }

    def create(self, path: str, case: Case) -> None:
        if case.zarr_format == 2:
            self.driver = "zarr"
            spec: dict[str, Any] = {
                "driver": "zarr",
                "kvstore": {"driver": "file", "path": path},
                "metadata": self._v2_metadata(case),
            }
            self.arr = self.ts.open(spec, create=True, delete_existing=True).result()
            return
        self.driver = "zarr3"
        spec = {
            "driver": "zarr3",
            "kvstore": {"driver": "file", "path": path},
            "metadata": {
                "shape": list(case.shape),
                "data_type": DTYPE.name,
                "chunk_grid": {
                    "name": "regular",
                    "configuration": {"chunk_shape": list(case.layout.stored)},
                },
                "chunk_key_encoding": {"name": "default"},
                "fill_value": 0,
                "codecs": self._codecs(case),
            },
        }
        self.arr = self.ts.open(spec, create=True, delete_existing=True).result()

    def write(self, src: np.ndarray) -> None:
        self.arr.write(src).result()

    def open(self, path: str) -> None:
        spec = {"driver": self.driver, "kvstore": {"driver": "file", "path": path}}
        self.arr = self.ts.open(spec, open=True, read=True).result()

    def read(self, sel: Selection) -> np.ndarray:
        return self.arr[sel].read().result()

    def read_concurrent(self, sels: Sequence[Selection]) -> list[np.ndarray]:
        futures = [self.arr[s].read() for s in sels]
        return [f.result() for f in futures]

    def vindex(self, points: tuple[np.ndarray, ...]) -> np.ndarray:
        return self.arr.vindex[points].read().result()

    def oindex(self, sel: tuple[Any, ...]) -> np.ndarray:
        return self.arr.oindex[sel].read().result()

    def close(self) -> None:
        self.arr = None


# --------------------------------------------------------------------------- the limit


@dataclass(frozen=True)
class ChunkRef:
    """Where one read unit's encoded bytes live: file, byte range, and which block it holds."""

    path: str
    offset: int
    nbytes: int
    block: tuple[int, ...]  # read-unit grid coordinates


class LimitRunner:
    """The bound: plain file reads + numcodecs zstd decodes over a thread pool, nothing else.

    It writes its own copy of the array (zarr v3 chunk files ``c/i/j/k``, or shard files with an
    end index of ``(offset, nbytes)`` uint64 pairs + crc32c, as zarr writes them) and keeps the
    byte range of every read unit, so a read touches exactly the bytes a library must touch:
    no metadata, no index parsing (the shard index is known from writing it), no assembly
    into an output array.  Only reads are bounded: :meth:`write` (encode + file write over the
    same pool) makes the copy, untimed.  With ``--zarr-format 2`` it is the same bound: a v2
    chunk file holds the same bytes as a v3 one (only the key differs), and there is no
    sharded case.
    """

    name = LIMIT

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.pool = ThreadPoolExecutor(max_workers=threads)
        self.refs: dict[tuple[int, ...], ChunkRef] = {}
        self.codec: Any = None

    def probe(self) -> str:
        try:
            import numcodecs
            from numcodecs import Zstd
        except Exception as exc:
            raise Unavailable(describe(exc)) from exc
        self.Zstd = Zstd
        return f"numcodecs {numcodecs.__version__}"

    def _encode_block(self, case: Case, block: tuple[int, ...]) -> bytes:
        unit = case.layout.chunks
        sel = tuple(
            slice(b * c, min((b + 1) * c, n))
            for b, c, n in zip(block, unit, case.shape, strict=True)
        )
        part = case.src[sel]
        if part.shape != unit:  # edge chunk: stored padded with the fill value, as zarr does
            full = np.zeros(unit, dtype=DTYPE)
            full[tuple(slice(0, s) for s in part.shape)] = part
            part = full
        raw = np.ascontiguousarray(part).astype("<u2", copy=False).tobytes()
        return raw if self.codec is None else bytes(self.codec.encode(raw))

    def create(self, path: str, case: Case) -> None:
        self.codec = None if case.compression == "none" else self.Zstd(level=ZSTD_LEVEL)
        os.makedirs(path, exist_ok=True)

    def write(self, path: str, case: Case) -> None:
        self.refs = {}
        stored = case.layout.stored
        unit = case.layout.chunks
        per_stored = [s // u for s, u in zip(stored, unit, strict=True)]
        n_stored = [math.ceil(n / s) for n, s in zip(case.shape, stored, strict=True)]
        n_units = [math.ceil(n / u) for n, u in zip(case.shape, unit, strict=True)]

        def write_one(obj: tuple[int, ...]) -> list[ChunkRef]:
            key = os.path.join(path, "c", *map(str, obj))
            os.makedirs(os.path.dirname(key), exist_ok=True)
            if case.layout.shards is None:
                data = self._encode_block(case, obj)
                with open(key, "wb") as f:
                    f.write(data)
                return [ChunkRef(key, 0, len(data), obj)]
            import google_crc32c  # zarr3c's dependency (numcodecs' CRC-32C backend)

            parts: list[bytes] = []
            index = np.full((*per_stored, 2), np.iinfo(np.uint64).max, dtype="<u8")
            refs: list[ChunkRef] = []
            offset = 0
            for inner in itertools.product(*map(range, per_stored)):
                block = tuple(o * p + i for o, p, i in zip(obj, per_stored, inner, strict=True))
                if any(b >= n for b, n in zip(block, n_units, strict=True)):
                    continue
                data = self._encode_block(case, block)
                parts.append(data)
                index[inner] = (offset, len(data))
                refs.append(ChunkRef(key, offset, len(data), block))
                offset += len(data)
            raw_index = index.tobytes()
            with open(key, "wb") as f:
                f.write(b"".join(parts))
                f.write(raw_index)
                f.write(google_crc32c.value(raw_index).to_bytes(4, "little"))
            return refs

        objs = list(itertools.product(*map(range, n_stored)))
        for refs in self.pool.map(write_one, objs):
            for ref in refs:
                self.refs[ref.block] = ref

    def blocks_for(self, case: Case, workload: str) -> list[tuple[int, ...]]:
        """The read units a workload must decode.

        ``random``: every read decodes each unit it touches (sequential reads cannot share a
        decode without a chunk cache, and the peers run without one).  ``random_concurrent``:
        each touched unit once, because reads in flight together can share a decode
        (tensorstore coalesces them), so the bound must allow for it.  ``vindex`` and
        ``oindex``: each unit holding a selected point, or crossed by the outer product, once.
        """
        unit = case.layout.chunks
        if workload in ("read_all", "read_chunks"):
            return [
                tuple(s.start // c for s, c in zip(sel, unit, strict=True))
                for sel in case.chunk_selections
            ]
        if workload == "vindex":
            coords = np.stack([p // c for p, c in zip(case.points, unit, strict=True)], axis=1)
            return [tuple(map(int, b)) for b in np.unique(coords, axis=0)]
        if workload == "oindex":
            per_axis = [
                range(k.start // c, (k.stop - 1) // c + 1) if isinstance(k, slice)
                else np.unique(np.asarray(k) // c).tolist()
                for k, c in zip(case.orthogonal, unit, strict=True)
            ]
            return list(itertools.product(*per_axis))
        blocks: list[tuple[int, ...]] = []
        for sel in case.random_selections:
            ranges = [
                range(s.start // c, (s.stop - 1) // c + 1) for s, c in zip(sel, unit, strict=True)
            ]
            blocks.extend(itertools.product(*ranges))
        if workload == "random_concurrent":
            blocks = list(dict.fromkeys(blocks))
        return blocks

    def _read_one(self, ref: ChunkRef) -> np.ndarray:
        with open(ref.path, "rb", buffering=0) as f:
            if ref.offset:
                f.seek(ref.offset)
            data = f.read(ref.nbytes)
        if self.codec is not None:
            data = self.codec.decode(data)
        return np.frombuffer(data, dtype="<u2")

    def read(self, refs: Sequence[ChunkRef]) -> list[np.ndarray]:
        return list(self.pool.map(self._read_one, refs))

    def verify(self, case: Case, refs: Sequence[ChunkRef], out: Sequence[np.ndarray]) -> str:
        unit = case.layout.chunks
        if len(out) != len(refs):
            return f"{len(out)} decoded blocks for {len(refs)} reads"
        for ref, got in zip(refs, out, strict=True):
            sel = tuple(
                slice(b * c, min((b + 1) * c, n))
                for b, c, n in zip(ref.block, unit, case.shape, strict=True)
            )
            if got.size != math.prod(unit):
                return f"block {ref.block}: {got.size} elements, expected {math.prod(unit)}"
            got_block = got.reshape(unit)[tuple(slice(0, s.stop - s.start) for s in sel)]
            if not np.array_equal(got_block, case.src[sel]):
                return f"block {ref.block} differs from the source"
        return ""

    def close(self) -> None:
        self.pool.shutdown()


# --------------------------------------------------------------------------- verification


def verify_one(got: Any, expected: np.ndarray, what: str) -> str:
    """'' if ``got`` equals ``expected`` (shape, dtype kind, values), else what differs."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        return f"{what}: shape {got.shape}, expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"{what}: dtype {got.dtype}, expected {expected.dtype}"
    if not np.array_equal(got, expected):
        bad = int(np.count_nonzero(got != expected))
        return f"{what}: {bad} of {expected.size} elements differ"
    return ""


def verify_many(outs: Sequence[Any], sels: Sequence[Selection], src: np.ndarray) -> str:
    """'' if each ``outs[i]`` equals ``src[sels[i]]``, else the first difference."""
    if len(outs) != len(sels):
        return f"{len(outs)} results for {len(sels)} reads"
    for out, sel in zip(outs, sels, strict=True):
        err = verify_one(out, src[sel], f"read {[(s.start, s.stop) for s in sel]}")
        if err:
            return err
    return ""


# --------------------------------------------------------------------------- the harness


def time_min(
    fn: Callable[[], Any], check: Callable[[Any], str], repeat: int, warmup: bool
) -> tuple[list[float], str]:
    """Run ``fn`` (once untimed if ``warmup``), then ``repeat`` timed runs; check every result.

    Returns the times and '' or, at the first wrong result, ``([], what differs)``.
    """
    if warmup:
        err = check(fn())
        if err:
            return [], err
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        err = check(out)
        del out
        if err:
            return [], err
        times.append(dt)
    return times, ""


def finish(res: Result, times: list[float], nreads: int) -> Result:
    """Mark ``res`` ok with its times; its value is the minimum, in ms or in us per read."""
    res.times_s = times
    best = min(times)
    if res.workload in PER_READ_WORKLOADS:
        res.unit, res.value = "us/read", best / nreads * 1e6
    else:
        res.unit, res.value = "ms", best * 1e3
    res.status = "ok"
    return res


def log(msg: str) -> None:
    """Progress, on stderr (the table goes to stdout)."""
    print(msg, file=sys.stderr, flush=True)


def log_result(res: Result) -> None:
    """One progress line for a finished cell."""
    what = f"{res.value:.1f} {res.unit}" if res.status == "ok" else f"{res.status}: {res.reason}"
    stored = f" ({res.stored_bytes} bytes stored)" if res.stored_bytes is not None else ""
    log(f"  {res.impl:13s} {res.layout}/{res.compression} {res.workload}: {what}{stored}")


def run_adapter(
    adapter: Adapter, case: Case, workloads: Sequence[str], root: str, repeat: int
) -> list[Result]:
    """All selected workloads of one case for one implementation; never raises."""
    lay, comp = case.layout.name, case.compression
    path = ""  # the copy the reads use: the last one written

    def result(workload: str, status: str, reason: str = "") -> Result:
        return Result(lay, comp, workload, adapter.name, status, reason)

    try:
        adapter.check(case, root)
    except Skipped as exc:
        return [result(w, "skipped", str(exc)) for w in workloads]
    except Exception as exc:  # report, never crash the run
        return [result(w, "error", describe(exc)) for w in workloads]

    out: list[Result] = []
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(adapter.session())
        except Exception as exc:  # report, never crash the run
            return [result(w, "error", describe(exc)) for w in workloads]

        # Write: each timed run writes a fresh array at a fresh path (untimed create); when
        # 'write' is not selected the data is still written once, untimed.  Earlier copies are
        # left until the run ends: ext4 without a journal skips inodes freed in the last 30 s,
        # so deleting a copy right before a timed write makes that write search for free
        # inodes and measures the delete rather than the library.
        n_writes = repeat if "write" in workloads else 1
        times: list[float] = []
        write_error = ""
        try:
            for k in range(n_writes):
                path = os.path.join(root, f"{adapter.name}-{lay}-{comp}-w{k}")
                shutil.rmtree(path, ignore_errors=True)
                adapter.create(path, case)
                gc.collect()
                os.sync()  # the last copy's dirty pages are flushed now, not in this timed write
                t0 = time.perf_counter()
                adapter.write(case.src)
                times.append(time.perf_counter() - t0)
            adapter.close()
        except Unavailable as exc:
            write_error = f"unavailable: {exc}"
        except Exception as exc:  # report, never crash the run
            write_error = f"error: {describe(exc)}"
        if write_error:
            adapter.close()
            status, _, reason = write_error.partition(": ")
            return [
                result(w, status, reason if w == "write" else f"write failed: {reason}")
                for w in workloads
            ]
        format_error = stored_format_error(path, case)
        if format_error:
            return [result(w, "wrong", format_error) for w in workloads]

        try:
            adapter.open(path)
            readback = adapter.read(tuple(slice(None) for _ in case.shape))
            mismatch = verify_one(readback, case.src, "read back after write")
            del readback
        except Exception as exc:  # report, never crash the run
            adapter.close()
            reason = describe(exc)
            return [result(w, "error", f"open/read back failed: {reason}") for w in workloads]
        if "write" in workloads:
            res = (
                result("write", "wrong", mismatch)
                if mismatch
                else finish(result("write", "ok"), times, 1)
            )
            res.stored_bytes = dir_size(path)
            out.append(res)
            log_result(res)

        full = tuple(slice(None) for _ in case.shape)
        plans: dict[str, tuple[Callable[[], Any], Callable[[Any], str], int]] = {
            "read_all": (
                lambda: adapter.read(full),
                lambda o: verify_one(o, case.src, "read_all"),
                1,
            ),
            "read_chunks": (
                lambda: [adapter.read(s) for s in case.chunk_selections],
                lambda o: verify_many(o, case.chunk_selections, case.src),
                len(case.chunk_selections),
            ),
            "random": (
                lambda: [adapter.read(s) for s in case.random_selections],
                lambda o: verify_many(o, case.random_selections, case.src),
                len(case.random_selections),
            ),
            "random_concurrent": (
                lambda: adapter.read_concurrent(case.random_selections),
                lambda o: verify_many(o, case.random_selections, case.src),
                len(case.random_selections),
            ),
            "vindex": (
                lambda: adapter.vindex(case.points),
                lambda o: verify_one(o, case.expected_points, "vindex"),
                1,
            ),
            "oindex": (
                lambda: adapter.oindex(case.orthogonal),
                lambda o: verify_one(o, case.expected_orthogonal, "oindex"),
                1,
            ),
        }
        for w in workloads:
            if w == "write":
                continue
            fn, check, nreads = plans[w]
            try:
                times, err = time_min(fn, check, repeat, warmup=True)
                res = result(w, "wrong", err) if err else finish(result(w, "ok"), times, nreads)
            except Exception as exc:  # report, never crash the run
                res = result(w, "error", describe(exc))
            out.append(res)
            log_result(res)
        adapter.close()
    return out


def load_strings(n: int, length: int) -> np.ndarray:
    """``bench_strings.strings(n, length)``: the strings the asv benchmarks write."""
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module("bench_strings").strings(n, length)


def run_strings_adapter(adapter: Adapter, name: str, src: np.ndarray, chunk: int, root: str,
                        repeat: int) -> list[Result]:
    """The string rows of one data set for one implementation (as :func:`run_adapter`: each
    timed write into a fresh array, the reads of the last copy after one untimed warm-up,
    every result checked equal to ``src``); never raises."""

    def result(workload: str, status: str, reason: str = "") -> Result:
        return Result(name, "zstd", workload, adapter.name, status, reason)

    out: list[Result] = []
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(adapter.session())
            times: list[float] = []
            for k in range(repeat):
                path = os.path.join(root, f"{adapter.name}-{name}-w{k}")
                adapter.create_strings(path, src.shape[0], chunk)
                gc.collect()
                os.sync()
                t0 = time.perf_counter()
                adapter.write(src)
                times.append(time.perf_counter() - t0)
            adapter.close()
            adapter.open_strings(path)
            full = (slice(None),)
            mismatch = verify_one(adapter.read(full), src, "read back after write")
            res = result("write", "wrong", mismatch) if mismatch else \
                finish(result("write", "ok"), times, 1)
            res.stored_bytes = dir_size(path)
            out.append(res)
            log_result(res)
            times, err = time_min(lambda: adapter.read(full),
                                  lambda o: verify_one(o, src, "read_all"), repeat, warmup=True)
            res = result("read_all", "wrong", err) if err else \
                finish(result("read_all", "ok"), times, 1)
        except Skipped as exc:
            return [result(w, "skipped", str(exc)) for w in STRING_WORKLOADS]
        except Unavailable as exc:
            return [result(w, "unavailable", str(exc)) for w in STRING_WORKLOADS]
        except Exception as exc:  # report, never crash the run
            if not out:
                return [result(w, "error", describe(exc)) for w in STRING_WORKLOADS]
            res = result("read_all", "error", describe(exc))
        finally:
            adapter.close()
        out.append(res)
        log_result(res)
    return out


def run_strings(adapters: Sequence[Adapter], names: Sequence[str], unavailable: dict[str, str],
                base: str, repeat: int) -> list[Result]:
    """Every string data set through every selected implementation."""
    results: list[Result] = []
    for set_name, (n, length, chunk) in STRING_SETS.items():
        src = load_strings(n, length)
        log(f"[{set_name}] {n} strings of about {length} characters, chunks of {chunk}")
        results += [Result(set_name, "zstd", w, name, "unavailable", unavailable[name])
                    for name in names if name in unavailable for w in STRING_WORKLOADS]
        for adapter in adapters:
            results += run_strings_adapter(adapter, set_name, src, chunk, base, repeat)
    return results


def run_limit(
    limit: LimitRunner, case: Case, workloads: Sequence[str], root: str, repeat: int
) -> list[Result]:
    """The bound for every selected workload of one case; never raises."""
    lay, comp = case.layout.name, case.compression
    path = os.path.join(root, f"limit-{lay}-{comp}")
    out: list[Result] = []
    try:
        # The limit bounds reads only: its copy is written untimed (no "write" cell).
        shutil.rmtree(path, ignore_errors=True)
        limit.create(path, case)
        limit.write(path, case)
    except Exception as exc:  # report, never crash the run
        return [
            Result(lay, comp, w, LIMIT, "error", describe(exc))
            for w in workloads if w in LIMIT_WORKLOADS
        ]
    for w in workloads:
        if w not in LIMIT_WORKLOADS:
            continue
        res = Result(lay, comp, w, LIMIT, "ok")
        try:
            refs = [limit.refs[b] for b in limit.blocks_for(case, w)]
            times, err = time_min(
                functools.partial(limit.read, refs),
                functools.partial(limit.verify, case, refs),
                repeat,
                warmup=True,
            )
            nreads = len(case.random_selections) if w in PER_READ_WORKLOADS else 1
            res = Result(lay, comp, w, LIMIT, "wrong", err) if err else finish(res, times, nreads)
        except Exception as exc:  # report, never crash the run
            res = Result(lay, comp, w, LIMIT, "error", describe(exc))
        out.append(res)
        log_result(res)
    return out


# --------------------------------------------------------------------------- report


def summarize(results: Sequence[Result]) -> tuple[list[dict[str, Any]], float | None, int]:
    """One row per (layout, compression, workload) with the ratio zarr3c / fastest peer."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in results:
        key = (r.layout, r.compression, r.workload)
        row = rows.setdefault(
            key,
            {"layout": r.layout, "compression": r.compression, "workload": r.workload, "cells": {}},
        )
        row["cells"][r.impl] = r
    ratios = []
    for row in rows.values():
        cells = row["cells"]
        peers = [cells[p] for p in PEERS if p in cells and cells[p].status == "ok"]
        best = min(peers, key=lambda c: c.value) if peers else None
        row["best_peer"] = best.impl if best else None
        z = cells.get("zarr3c")
        row["ratio"] = (
            (z.value / best.value) if (best and z and z.status == "ok" and best.value) else None
        )
        lim = cells.get(LIMIT)
        lim_ok = lim is not None and lim.status == "ok" and lim.value
        row["ratio_limit"] = (z.value / lim.value) if (z and z.status == "ok" and lim_ok) else None
        if row["ratio"] is not None:
            ratios.append(row["ratio"])
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return list(rows.values()), geo, len(ratios)


def cell_text(r: Result | None) -> str:
    """A table cell: the value, or a short word saying why there is none."""
    if r is None:
        return "-"
    if r.status == "ok" and r.value is not None:
        return f"{r.value:.1f}" if r.value >= 10 else f"{r.value:.2f}"
    return {"wrong": "WRONG", "error": "ERROR", "unavailable": "n/a", "skipped": "skip"}.get(
        r.status, r.status
    )


def print_table(results: Sequence[Result], columns: Sequence[str], file: Any = sys.stdout) -> None:
    """The comparison table, the geometric mean, and why any cell was not timed."""
    rows, geo, n = summarize(results)
    head = ["layout", "comp", "workload", "unit", *columns, "z3c/best", "best peer", "z3c/limit"]
    table = [head]
    for row in rows:
        cells = row["cells"]
        unit = "us/read" if row["workload"] in PER_READ_WORKLOADS else "ms"
        table.append(
            [
                row["layout"],
                row["compression"],
                row["workload"],
                unit,
                *(cell_text(cells.get(c)) for c in columns),
                f"{row['ratio']:.2f}" if row["ratio"] is not None else "-",
                row["best_peer"] or "-",
                f"{row['ratio_limit']:.2f}" if row["ratio_limit"] is not None else "-",
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for i, line in enumerate(table):
        print(
            "  ".join(
                c.ljust(w) if j < 4 or j == len(head) - 2 else c.rjust(w)
                for j, (c, w) in enumerate(zip(line, widths, strict=True))
            ),
            file=file,
        )
        if i == 0:
            print("  ".join("-" * w for w in widths), file=file)
    if geo is not None:
        print(f"\ngeometric mean of zarr3c / fastest peer over {n} rows: {geo:.3f}", file=file)
    else:
        print(
            "\ngeometric mean of zarr3c / fastest peer: n/a (no row with zarr3c and a peer)",
            file=file,
        )
    notes: dict[tuple[str, str, str], None] = {}
    for r in results:
        if r.status != "ok":
            notes[(r.impl, r.status, r.reason)] = None
    if notes:
        print("\nnot timed:", file=file)
        for impl, status, reason in notes:
            label = {
                "unavailable": "unavailable",
                "skipped": "skipped",
                "error": "error",
                "wrong": "WRONG ANSWER",
            }.get(status, status)
            print(f"  {impl}: {label}: {reason}", file=file)


# --------------------------------------------------------------------------- main


def parse_list(text: str, allowed: Sequence[str], what: str) -> list[str]:
    """A comma list of names from ``allowed``, returned in ``allowed``'s order."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)}"
        )
    return [a for a in allowed if a in items]  # canonical order


def build_parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring and README.md)."""
    p = argparse.ArgumentParser(
        description="Compare zarr3c with zarr-python, zarrs-python and tensorstore."
    )
    p.add_argument("--size", type=int, default=512, help="edge of the uint16 cube (512)")
    p.add_argument("--chunk", type=int, default=64, help="chunk edge, chunked layout (64)")
    p.add_argument(
        "--shard", type=int, default=256, help="shard edge, sharded layout (256; clipped to --size)"
    )
    p.add_argument("--inner", type=int, default=32, help="inner chunk edge, sharded layout (32)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per cell; min is kept (3)")
    p.add_argument("--nreads", type=int, default=1000, help="random 4^3 reads (1000)")
    p.add_argument("--npoints", type=int, default=100_000, help="vindex points (100000)")
    p.add_argument("--nindices", type=int, default=1000,
                   help="oindex: index-array length on each of the first two axes (1000)")
    p.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="threads for zarr3c's concurrent reads and the limit (os.cpu_count())",
    )
    p.add_argument(
        "--only",
        type=lambda s: parse_list(s, ALL_COLUMNS, "implementation"),
        default=list(ALL_COLUMNS),
        help=f"comma list of {','.join(ALL_COLUMNS)}",
    )
    p.add_argument(
        "--workloads",
        type=lambda s: parse_list(s, WORKLOADS, "workload"),
        default=list(WORKLOADS),
        help=f"comma list of {','.join(WORKLOADS)}",
    )
    p.add_argument(
        "--compressions",
        type=lambda s: parse_list(s, COMPRESSIONS, "compression"),
        default=list(COMPRESSIONS),
        help=f"comma list of {','.join(COMPRESSIONS)}",
    )
    p.add_argument(
        "--layouts",
        type=lambda s: parse_list(s, LAYOUTS, "layout"),
        default=list(LAYOUTS),
        help=f"comma list of {','.join(LAYOUTS)}",
    )
    p.add_argument(
        "--zarr-format",
        type=int,
        choices=ZARR_FORMATS,
        default=3,
        help="the Zarr format every implementation writes (3; 2 has no sharded rows)",
    )
    p.add_argument(
        "--strings",
        action="store_true",
        help="the string rows instead of the cube: 10^6 short and 10^5 long strings "
        "(vlen-utf8 + zstd), written and read whole",
    )
    p.add_argument(
        "--tmpdir", default=None, help="where the copies are written (a fresh directory inside it)"
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep the written copies (else all are deleted when the run ends, never during it)",
    )
    p.add_argument(
        "--json",
        dest="json_out",
        default=None,
        metavar="OUT",
        help="also write machine-readable results to OUT",
    )
    return p


def make_adapters(names: Sequence[str], threads: int) -> list[Adapter]:
    """The adapters for the selected implementation names (the limit is separate)."""
    factories: dict[str, Callable[[], Adapter]] = {
        "zarr3c": lambda: Zarr3cAdapter(threads),
        "zarr-python": ZarrPythonAdapter,
        "zarrs-python": ZarrsPythonAdapter,
        "tensorstore": TensorstoreAdapter,
    }
    return [factories[n]() for n in names if n in factories]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison; exit status 1 if any implementation returned a wrong answer."""
    args = build_parser().parse_args(argv)
    if min(args.size, args.chunk, args.shard, args.inner, args.repeat, args.nreads) < 1:
        raise SystemExit("sizes, --repeat and --nreads must be positive")
    if args.size < RANDOM_BOX:
        raise SystemExit(f"--size must be at least {RANDOM_BOX}")
    shard = min(args.shard, args.size)
    if shard % args.inner:
        raise SystemExit(f"shard edge {shard} is not a multiple of --inner {args.inner}")

    ndim = 3
    layouts = {
        "chunked": Layout("chunked", (args.chunk,) * ndim),
        "sharded": Layout("sharded", (args.inner,) * ndim, (shard,) * ndim),
    }

    versions: dict[str, str] = {}
    adapters: list[Adapter] = []
    unavailable: dict[str, str] = {}
    for adapter in make_adapters(args.only, args.threads):
        try:
            versions[adapter.name] = adapter.probe()
            adapters.append(adapter)
        except Unavailable as exc:
            unavailable[adapter.name] = str(exc)
        except Exception as exc:  # report, never crash the run
            unavailable[adapter.name] = describe(exc)
    if args.strings:
        return main_strings(args, adapters, versions, unavailable)
    limit: LimitRunner | None = None
    if LIMIT in args.only:
        limit = LimitRunner(args.threads)
        try:
            versions[LIMIT] = limit.probe()
        except Exception as exc:  # report, never crash the run
            unavailable[LIMIT] = str(exc)
            limit.close()
            limit = None

    log(
        f"source: Zarr v{args.zarr_format}, "
        f"uint16 {args.size}^3 ({args.size**3 * 2 / 2**20:.0f} MiB), "
        f"{os.cpu_count()} cpus, repeat {args.repeat}"
    )
    for name in args.only:
        log(f"  {name:13s} {versions.get(name) or 'unavailable: ' + unavailable.get(name, '?')}")
    t_src = time.perf_counter()
    src = make_source(args.size)
    log(f"  source built in {time.perf_counter() - t_src:.1f} s")
    rand = random_selections(src.shape, args.nreads, RANDOM_BOX)
    points = point_selection(src.shape, args.npoints)

    base = tempfile.mkdtemp(prefix="zarr3c-peers-", dir=args.tmpdir)
    results: list[Result] = []
    try:
        for lay_name in args.layouts:
            layout = layouts[lay_name]
            chunk_sels = grid_selections(src.shape, layout.chunks)
            ortho = orthogonal_selection(src.shape, args.nindices, layout.chunks[-1])
            for comp in args.compressions:
                case = Case(src, layout, comp, chunk_sels, rand, args.threads, points, ortho,
                            zarr_format=args.zarr_format)
                log(f"[{lay_name} {comp}] stored {layout.stored}, read unit {layout.chunks}")
                for name in args.only:
                    if name in unavailable:
                        results += [
                            Result(lay_name, comp, w, name, "unavailable", unavailable[name])
                            for w in args.workloads
                        ]
                if args.zarr_format == 2 and layout.shards is not None:
                    results += [
                        Result(lay_name, comp, w, name, "skipped", V2_NO_SHARDING)
                        for name in args.only if name not in unavailable
                        for w in args.workloads if name != LIMIT or w in LIMIT_WORKLOADS
                    ]
                    log(f"  skipped: {V2_NO_SHARDING}")
                    continue
                for adapter in adapters:
                    results += run_adapter(
                        adapter, case, args.workloads, base, args.repeat
                    )
                if limit is not None:
                    results += run_limit(limit, case, args.workloads, base, args.repeat)
    finally:
        if limit is not None:
            limit.close()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log(f"copies kept in {base}")

    # Canonical order: layout, compression, workload, then column.
    order = {n: i for i, n in enumerate(ALL_COLUMNS)}
    results.sort(
        key=lambda r: (
            LAYOUTS.index(r.layout),
            COMPRESSIONS.index(r.compression),
            WORKLOADS.index(r.workload),
            order[r.impl],
        )
    )
    columns = [c for c in ALL_COLUMNS if c in args.only]
    header = (
        f"Zarr v{args.zarr_format}, "
        f"uint16 {args.size}^3, chunks {args.chunk}^3, shards {shard}^3 / {args.inner}^3, "
        f"{args.nreads} random {RANDOM_BOX}^3 reads, min of {args.repeat}, "
        f"{os.cpu_count()} cpus; times in ms, random rows in us/read"
    )
    return report(args, results, columns, header, versions, unavailable, {"shard": shard})


def main_strings(args: argparse.Namespace, adapters: Sequence[Adapter], versions: dict[str, str],
                 unavailable: dict[str, str]) -> int:
    """The string rows (``--strings``) in place of the cube's: the implementations that
    have them (tensorstore and the limit do not)."""
    names = [n for n in args.only if n in STRING_IMPLEMENTATIONS]
    adapters = [a for a in adapters if a.name in names]
    log(f"strings: {os.cpu_count()} cpus, repeat {args.repeat}")
    for name in names:
        log(f"  {name:13s} {versions.get(name) or 'unavailable: ' + unavailable.get(name, '?')}")
    base = tempfile.mkdtemp(prefix="zarr3c-peers-", dir=args.tmpdir)
    try:
        results = run_strings(adapters, names, unavailable, base, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log(f"copies kept in {base}")
    order = {n: i for i, n in enumerate(ALL_COLUMNS)}
    sets = list(STRING_SETS)
    results.sort(key=lambda r: (sets.index(r.layout), STRING_WORKLOADS.index(r.workload),
                                order[r.impl]))
    columns = names
    header = (
        "Zarr v3 string arrays (vlen-utf8 + zstd level 0), bench_strings.strings data: "
        + ", ".join(f"{k} {n} x ~{m} chars in chunks of {c}"
                    for k, (n, m, c) in STRING_SETS.items())
        + f"; whole writes and reads, min of {args.repeat}, {os.cpu_count()} cpus; times in ms"
    )
    return report(args, results, columns, header, versions, unavailable, {})


def report(args: argparse.Namespace, results: Sequence[Result], columns: Sequence[str],
           header: str, versions: dict[str, str], unavailable: dict[str, str],
           config: dict[str, Any]) -> int:
    """Print the table (and write ``--json``); exit status 1 if any answer was wrong."""
    print(f"\n{header}\n")
    print_table(results, columns)

    if args.json_out:
        rows, geo, n = summarize(results)
        doc = {
            "config": {k: v for k, v in vars(args).items() if k != "json_out"} | config,
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": sys.version.split()[0],
                "numpy": np.__version__,
            },
            "versions": versions,
            "unavailable": unavailable,
            "results": [asdict(r) for r in results],
            "rows": [{k: v for k, v in row.items() if k != "cells"} for row in rows],
            "geomean_zarr3c_over_best_peer": geo,
            "geomean_rows": n,
        }
        with open(args.json_out, "w") as f:
            json.dump(doc, f, indent=1)
        log(f"results written to {args.json_out}")
    return 1 if any(r.status == "wrong" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
