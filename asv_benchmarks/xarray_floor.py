"""The floor under ``compare_xarray.py``'s rows: libzstd decoding the frames a workload needs
(compressing them, for writes), the output's fresh pages, and nothing else.

For the same dataset and layouts as ``compare_xarray.py`` (the same geometry options), this
writes each layout once as that script writes its shared copy (xarray's ``to_zarr``), finds
for each read workload (``load``, ``isel_time``, ``series``) the zstd frames it must decode
(chunks, or a shard's inner chunks located through its index) and how much of each: a frame
is decoded only through the block that holds the last element the selection takes from it,
as any reader may.  Then it times decoding exactly that on ``--threads`` threads, one libzstd
call per frame (the libzstd zarr3c binds, 1.5.7 where ``backports.zstd`` is installed,
through ``zarr3c._kernels.zstd_ctx``, which gives the GIL up) into a buffer each thread
keeps, from bytes already in memory: no Zarr logic, no file reads, no copy, no xarray.  To
that it adds the page faults of the fresh output a read returns (each variable's output
allocated and written once, on every thread): ``floor`` is the sum.  No reader of these
copies can do that work in less time with this libzstd.  For ``write``, every chunk is
gathered from the source and compressed (no files written).

With ``--compare OUT.json`` (from ``compare_xarray.py --json OUT.json``, run on the same
machine with the same geometry) it prints next to each floor the fastest peer's time, zarr3c's,
and ``floor / fastest peer``: where that is above 0.5, issue 32's goal of 0.5x the fastest
peer is below what decoding the format allows on this many cores.

Usage::

    python asv_benchmarks/compare_xarray.py --repeat 3 --json xr.json
    python asv_benchmarks/xarray_floor.py --repeat 5 --compare xr.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from compare_xarray import (
    DTYPE,
    ZSTD_LEVEL,
    Geometry,
    Unavailable,
    Zarr3cAdapter,
    ZarrPythonAdapter,
    add_geometry_arguments,
    geometry,
    make_source,
    quiet,
)

WORKLOADS = ("load", "isel_time", "series")


@dataclass(frozen=True)
class Frame:
    """One zstd frame a workload decodes: its bytes and how many leading bytes it needs."""

    data: memoryview
    need: int


def boxes(geo: Geometry) -> dict[str, tuple[slice, ...]]:
    """workload -> the box each variable is read in."""
    j, i = geo.point
    k = geo.time_index
    return {
        "load": (slice(None),) * 3,
        "isel_time": (slice(k, k + 1), slice(None), slice(None)),
        "series": (slice(None), slice(j, j + 1), slice(i, i + 1)),
    }


def needed_bytes(box: tuple[slice, ...], origin: tuple[int, ...], chunk: tuple[int, ...],
                 shape: tuple[int, ...]) -> int:
    """Bytes of a C-order chunk at ``origin`` up to the last element of ``box`` in it (0:
    the box misses it)."""
    last = []
    for sl, o, c, n in zip(box, origin, chunk, shape, strict=True):
        start, stop, _ = sl.indices(n)
        lo, hi = max(start, o), min(stop, o + c)
        if lo >= hi:
            return 0
        last.append(hi - 1 - o)
    return (int(np.ravel_multi_index(last, chunk)) + 1) * DTYPE.itemsize


def _grid(shape: tuple[int, ...], chunk: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in idx)
            for idx in np.ndindex(*(math.ceil(n / c) for n, c in zip(shape, chunk, strict=True)))]


def _checked(doc: dict[str, Any], key: str, expected: Any) -> None:
    if doc.get(key) != expected:
        raise SystemExit(f"the floor reads {key}={expected!r} only, the copy has "
                         f"{doc.get(key)!r}")


def frames(array_dir: str, box: tuple[slice, ...]) -> list[Frame]:
    """The frames of one variable (a Zarr v3 array of zstd chunks, or of shards of them with
    the index at the end) that ``box`` needs."""
    with open(os.path.join(array_dir, "zarr.json")) as f:
        meta = json.load(f)
    _checked(meta, "chunk_key_encoding", {"name": "default", "configuration": {"separator": "/"}})
    shape = tuple(meta["shape"])
    outer = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    codecs = meta["codecs"]
    sharding = codecs[0] if codecs[0]["name"] == "sharding_indexed" else None
    if sharding is not None:
        _checked(sharding["configuration"], "index_location", "end")
        inner = tuple(sharding["configuration"]["chunk_shape"])
        codecs = sharding["configuration"]["codecs"]
    if [c["name"] for c in codecs] != ["bytes", "zstd"]:
        raise SystemExit(f"the floor reads bytes + zstd chunks only, {array_dir} has {codecs}")
    out = []
    for idx in _grid(shape, outer):
        origin = tuple(i * c for i, c in zip(idx, outer, strict=True))
        path = os.path.join(array_dir, "c", *map(str, idx))
        if sharding is None:
            need = needed_bytes(box, origin, outer, shape)
            if need:
                with open(path, "rb") as f:
                    out.append(Frame(memoryview(f.read()), need))
            continue
        with open(path, "rb") as f:
            blob = memoryview(f.read())
        per_shard = _grid(outer, inner)
        # The index: (offset, nbytes) uint64 pairs per inner chunk, then a crc32c.
        index = np.frombuffer(blob[-(16 * len(per_shard) + 4):-4], "<u8").reshape(-1, 2)
        for (offset, nbytes), sub in zip(index, per_shard, strict=True):
            sub_origin = tuple(o + s * c for o, s, c in zip(origin, sub, inner, strict=True))
            need = needed_bytes(box, sub_origin, inner, shape)
            if need:
                out.append(Frame(blob[int(offset):int(offset) + int(nbytes)], need))
    return out


def cpu_time() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def best_time(task: Any, items: list[Any], pool: ThreadPoolExecutor, threads: int,
              repeat: int) -> tuple[float, float]:
    """Minimum wall-clock and CPU seconds of ``task`` over ``items`` on ``pool`` (of
    ``threads``); one untimed run first, which touches the threads' buffers."""
    best = (math.inf, math.inf)
    for _ in range(repeat + 1):
        c0, t0 = cpu_time(), time.perf_counter()
        sum(pool.map(task, items, chunksize=max(1, len(items) // (8 * threads))))
        best = min(best, (time.perf_counter() - t0, cpu_time() - c0))
    return best


def _zstd_ctx() -> Any:
    import zarr3c.codecs.zstd  # noqa: F401  (binds libzstd to zstd_ctx)
    from zarr3c._kernels import zstd_ctx

    if not (zstd_ctx.prefix_available() and zstd_ctx.compress_available()):
        raise SystemExit("no libzstd with prefix decoding and compression could be bound")
    return zstd_ctx


def decoder(chunk_bytes: int) -> Any:
    """Decode one :class:`Frame` as far as it is needed, into a buffer of ``chunk_bytes``
    each thread keeps."""
    zstd_ctx = _zstd_ctx()
    local = threading.local()

    def decode(frame: Frame) -> int:
        dst = getattr(local, "dst", None)
        if dst is None:
            dst = local.dst = np.zeros(chunk_bytes, np.uint8)
        # One call for a whole frame (block by block is slower when every block is needed)
        got = (zstd_ctx.decompress_into(frame.data, dst) if frame.need == len(dst)
               else zstd_ctx.decompress_prefix_into(frame.data, dst, frame.need))
        if got < frame.need:
            raise SystemExit(f"a frame decoded to {got} bytes, {frame.need} needed")
        return int(got)

    return decode


def encoder(chunk: tuple[int, ...], level: int) -> Any:
    """Gather one chunk ``(values, box)`` into a buffer each thread keeps, and compress it
    as one zstd frame at ``level`` into another: the compressed size."""
    zstd_ctx = _zstd_ctx()
    local = threading.local()

    def encode(item: tuple[np.ndarray, tuple[slice, ...]]) -> int:
        values, box = item
        if getattr(local, "src", None) is None:
            local.src = np.zeros(chunk, DTYPE)
            local.dst = np.zeros(zstd_ctx.compress_bound(local.src.nbytes), np.uint8)
        np.copyto(local.src, values[box])
        size = zstd_ctx.compress_into(local.src.reshape(-1).view(np.uint8), local.dst,
                                      level, False)
        if size < 0:
            raise SystemExit("zstd refused to compress a chunk")
        return int(size)

    return encode


def toucher(part_bytes: int) -> Any:
    """Allocate ``part_bytes`` of fresh memory and write every page of it: the page faults
    of the part of an output one thread fills."""

    def touch(_: int) -> int:
        buf = np.empty(part_bytes, np.uint8)
        buf.fill(1)
        return int(buf.nbytes)

    return touch


def chunk_boxes(shape: tuple[int, ...], chunk: tuple[int, ...]) -> list[tuple[slice, ...]]:
    """The box of every chunk of a regular grid (the shape a multiple of the chunk)."""
    return [tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunk, strict=True))
            for idx in _grid(shape, chunk)]


def comparison(path: str | None) -> dict[tuple[str, str], dict[str, Any]]:
    """(layout, workload) -> {implementation: its wall-clock ms} of a compare_xarray.py JSON
    report."""
    if path is None:
        return {}
    with open(path) as f:
        doc = json.load(f)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in doc["results"]:
        if r["status"] == "ok" and r["value"]:
            out.setdefault((r["layout"], r["workload"]), {})[r["impl"]] = r["value"]
    return out


def reference_writer() -> Any:
    """What writes the copies: compare_xarray.py's shared copies are xarray's own
    ``Dataset.to_zarr`` (zarr-python), zarr3c's where zarr-python is missing."""
    for adapter in (ZarrPythonAdapter(), Zarr3cAdapter()):
        try:
            adapter.probe()
        except Unavailable:
            continue
        return adapter
    raise SystemExit("neither zarr-python nor zarr3c is available to write the copies")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_geometry_arguments(parser)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="decoding threads (the number of cpus)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs; min is kept (5)")
    parser.add_argument("--compare", default=None, metavar="JSON",
                        help="a compare_xarray.py --json report to set the floors against")
    args = parser.parse_args(argv)
    geo = geometry(args)
    peers = comparison(args.compare)
    src = make_source(geo.shape[0], args.grid, args.nvars)
    writer = reference_writer()
    base = tempfile.mkdtemp(prefix="zarr3c-xarray-floor-")
    print(f"{args.nvars} float32 variables {geo.shape}, {args.threads} threads, bytes in "
          f"memory, min of {args.repeat}; times in ms\n")
    head = ("| layout | workload | frames | MiB (de)coded | zstd | fresh output | floor "
            "| floor CPU |")
    if peers:
        head += " zarr3c | fastest peer | floor / fastest peer |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))

    def report(name: str, workload: str, n: int, mib: float, zstd: tuple[float, float],
               fresh: tuple[float, float]) -> None:
        wall, cpu = zstd[0] + fresh[0], zstd[1] + fresh[1]
        row = (f"| {name} | {workload} | {n} | {mib:.1f} | {zstd[0] * 1e3:.1f} | "
               f"{fresh[0] * 1e3:.1f} | {wall * 1e3:.1f} | {cpu * 1e3:.1f} |")
        cells = dict(peers.get((name, workload), {}))
        zarr3c = cells.pop("zarr3c", math.nan)
        if cells:
            best = min(cells, key=cells.__getitem__)
            row += (f" {zarr3c:.1f} | {cells[best]:.1f} ({best}) | "
                    f"**{wall * 1e3 / cells[best]:.2f}** |")
        print(row, flush=True)

    try:
        with ThreadPoolExecutor(args.threads) as pool:
            for name, layout in geo.layouts.items():
                path = os.path.join(base, name)
                with quiet():
                    writer.write(src, path, layout)
                decode = decoder(math.prod(layout.chunks) * DTYPE.itemsize)
                for workload, box in boxes(geo).items():
                    todo = [f for v in src.data_vars
                            for f in frames(os.path.join(path, str(v)), box)]
                    zstd = best_time(decode, todo, pool, args.threads, args.repeat)
                    # each variable's output: fresh memory, its pages faulted in on every thread
                    out_bytes = DTYPE.itemsize * math.prod(
                        len(range(*sl.indices(n))) for sl, n in zip(box, geo.shape, strict=True))
                    parts = [out_bytes // args.threads] * (args.threads * args.nvars)
                    fresh = best_time(toucher(parts[0]), parts, pool, args.threads, args.repeat)
                    report(name, workload, len(todo), sum(f.need for f in todo) / 2**20, zstd,
                           fresh)
                # write: every (inner) chunk of every variable, gathered and compressed
                chunks = [(src[v].values, box) for v in src.data_vars
                          for box in chunk_boxes(geo.shape, layout.chunks)]
                zstd = best_time(encoder(layout.chunks, ZSTD_LEVEL), chunks, pool,
                                 args.threads, args.repeat)
                report(name, "write", len(chunks), src.nbytes / 2**20, zstd, (0.0, 0.0))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
