"""Object stores as users see them: an S3 server behind a latency proxy, read and written by
zarr3c and its peers, with the time and the number of requests of every row (issue 33).

Starts moto's S3 server (``python -m moto.server``) and, in front of it, the latency proxy
:mod:`zarr3c.testing.s3_proxy` (``--latency`` seconds per request, 20 ms by default), each in
a process of its own so that neither shares the clients' GIL.  Every client talks to the
proxy, which counts the requests by kind.  One uint16 cube (``--size``^3, 256 by default:
32 MiB; compare_peers' smooth data with noise) is written by zarr3c straight to the server
(not timed), once per layout x compression:

- layouts: ``chunked`` (``--chunk``^3 chunks) and ``sharded`` (``--shard``^3 shards of
  ``--chunk``^3 inner chunks);
- compressions: ``none`` and ``zstd`` (level 0, no checksum).

Then, for each of

- ``zarr3c/obstore``: ``zarr3c.ObjectStore`` (obstore, its default ``max_concurrency``);
- ``zarr3c/fsspec``: ``zarr3c.FsspecStore`` (s3fs);
- ``zarr-python/obstore``: zarr-python's ``zarr.storage.ObjectStore`` over obstore's
  ``S3Store``;
- ``zarr-python/fsspec``: zarr-python's ``zarr.storage.FsspecStore`` (s3fs);
- ``tensorstore``: its ``zarr3`` driver over its ``s3`` kvstore (``endpoint`` the proxy,
  credentials from ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``), default context,

each with its default concurrency and thread counts (and warmed up by one read and one
small write before anything is timed), the workloads, each on an array opened afresh (the
open is not timed and its requests are not counted):

- ``write``: create an array of the same layout at a new prefix and write the whole cube
  (creation included: users create, then write);
- ``read_all``: ``a[...]``;
- ``read_chunks``: every read unit (a chunk, or an inner chunk when sharded), one after
  another;
- ``random``: ``--nreads`` random 4^3 boxes one after another (the same boxes for everyone);
- ``oindex``: one ``a.oindex[i, j, :chunk]`` with two unsorted ``--nindices``-element index
  arrays (compare_peers' ``oindex`` selection): every chunk it touches planned before any
  request, at best (issue 33 point 2).

Every result is checked against the cube (a wrong one is reported, never timed).  The table
gives per row the time, its ratio to the fastest peer (peers: every library but zarr3c), the
number of requests and its ratio to the fewest among the peers, and for the zarr3c rows
whether they meet issue 33's goal: at most 0.5x the fastest peer's time and no more requests
than any peer.

Usage::

    python asv_benchmarks/compare_object_stores.py                     # 256^3, 1000 reads
    python asv_benchmarks/compare_object_stores.py --size 128 --nreads 200 --markdown

Needs ``zarr3c[obstore,remote]``, ``moto[server]`` and, for the peers, zarr-python (with
obstore and s3fs) and tensorstore; a peer that cannot run is listed with the reason.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# compare_peers' source data and checks, compare_s3's moto server (this directory is on
# sys.path when this script runs).
from compare_peers import (
    ZSTD_LEVEL,
    describe,
    grid_selections,
    import_zarr3c,
    make_source,
    numpy_orthogonal,
    orthogonal_selection,
    random_selections,
    verify_one,
)
from compare_s3 import BUCKET, moto_s3

KEY, SECRET, REGION = "testing", "testing", "us-east-1"
PEERS = ("zarr3c/obstore", "zarr3c/fsspec", "zarr-python/obstore", "zarr-python/fsspec",
         "tensorstore")
WORKLOADS = ("write", "read_all", "read_chunks", "random", "oindex")
RANDOM_BOX = 4


# --------------------------------------------------------------------------- the proxy


class Proxy:
    """The latency proxy in a process of its own, controlled over HTTP."""

    def __init__(self, upstream: str, latency: float, bandwidth: float | None = None) -> None:
        zarr3c = import_zarr3c()
        src = os.path.dirname(os.path.dirname(os.path.abspath(zarr3c.__file__)))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zarr3c.testing.s3_proxy", upstream,
             "--latency", str(latency),
             *([] if bandwidth is None else ["--bandwidth", str(bandwidth)])],
            stdout=subprocess.PIPE, text=True, env=env,
        )
        assert self.proc.stdout is not None
        self.endpoint = self.proc.stdout.readline().strip()
        if not self.endpoint.startswith("http://"):
            self.proc.kill()
            raise RuntimeError("the latency proxy did not start")

    def _call(self, what: str, data: bytes | None = None) -> Any:
        request = urllib.request.Request(f"{self.endpoint}/_proxy/{what}", data=data,
                                         method="POST" if data is not None else "GET")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def reset(self) -> None:
        self._call("reset", b"")

    def counts(self) -> dict[str, int]:
        return dict(self._call("counts")["counts"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@contextmanager
def servers(latency: float, bandwidth: float | None = None
            ) -> Iterator[tuple[dict[str, Any], Proxy]]:
    """moto (the direct storage_options) and the proxy in front of it (each answer's body
    at most ``bandwidth`` bytes a second, if given)."""
    with moto_s3() as direct:
        proxy = Proxy(direct["endpoint_url"], latency, bandwidth)
        try:
            yield direct, proxy
        finally:
            proxy.stop()


# --------------------------------------------------------------------------- the peers


@dataclass(frozen=True)
class Layout:
    name: str
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None

    @property
    def unit(self) -> tuple[int, ...]:
        return self.chunks


class Peer:
    """One library over one store backend, pointed at the proxy."""

    name = "?"

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def probe(self) -> str:
        """The version; raises where the peer cannot run here."""
        raise NotImplementedError

    def create(self, prefix: str, shape: tuple[int, ...], layout: Layout,
               compression: str) -> Any:
        raise NotImplementedError

    def write(self, arr: Any, src: np.ndarray) -> None:
        arr[...] = src

    def open(self, prefix: str) -> Any:
        raise NotImplementedError

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        if isinstance(sel, Outer):
            return np.asarray(arr.oindex[tuple(sel)])
        return np.asarray(arr[sel])


class Outer(tuple):  # type: ignore[type-arg]
    """A selection read with ``.oindex`` (numpy's ``np.ix_`` is its oracle)."""


def s3fs_options(endpoint: str) -> dict[str, Any]:
    return {"key": KEY, "secret": SECRET, "endpoint_url": endpoint,
            "client_kwargs": {"region_name": REGION},
            "config_kwargs": {"connect_timeout": 5, "read_timeout": 60}}


def zstd_dict() -> dict[str, Any]:
    return {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}


class Zarr3cPeer(Peer):
    def __init__(self, endpoint: str, backend: str) -> None:
        super().__init__(endpoint)
        self.backend = backend
        self.name = f"zarr3c/{backend}"

    def probe(self) -> str:
        self.z = import_zarr3c()
        if self.backend == "obstore":
            import obstore

            return f"{self.z.__version__} (obstore {obstore.__version__})"
        import s3fs

        return f"{self.z.__version__} (s3fs {s3fs.__version__})"

    def store(self, prefix: str, read_only: bool) -> Any:
        url = f"s3://{BUCKET}/{prefix}"
        if self.backend == "obstore":
            options = {"access_key_id": KEY, "secret_access_key": SECRET,
                       "endpoint": self.endpoint, "region": REGION}
            return self.z.ObjectStore.from_url(url, options, read_only=read_only)
        return self.z.FsspecStore.from_url(url, s3fs_options(self.endpoint),
                                           read_only=read_only)

    def create(self, prefix: str, shape: tuple[int, ...], layout: Layout,
               compression: str) -> Any:
        return self.z.create_array(
            self.store(prefix, False), shape=shape, dtype="uint16", chunks=layout.chunks,
            shards=layout.shards, compressors=None if compression == "none" else zstd_dict(),
            fill_value=0)

    def open(self, prefix: str) -> Any:
        return self.z.open_array(self.store(prefix, True), mode="r")


class ZarrPythonPeer(Peer):
    def __init__(self, endpoint: str, backend: str) -> None:
        super().__init__(endpoint)
        self.backend = backend
        self.name = f"zarr-python/{backend}"

    def probe(self) -> str:
        import zarr
        import zarr.codecs
        import zarr.storage

        self.zarr = zarr
        if self.backend == "obstore":
            import obstore

            if not hasattr(zarr.storage, "ObjectStore"):
                raise RuntimeError(f"zarr {zarr.__version__} has no zarr.storage.ObjectStore")
            return f"{zarr.__version__} (obstore {obstore.__version__})"
        import s3fs

        return f"{zarr.__version__} (s3fs {s3fs.__version__})"

    def store(self, prefix: str, read_only: bool) -> Any:
        if self.backend == "obstore":
            from obstore.store import S3Store

            raw = S3Store(BUCKET, prefix=prefix, endpoint=self.endpoint, region=REGION,
                          access_key_id=KEY, secret_access_key=SECRET,
                          client_options={"allow_http": True})
            return self.zarr.storage.ObjectStore(raw, read_only=read_only)
        return self.zarr.storage.FsspecStore.from_url(
            f"s3://{BUCKET}/{prefix}", storage_options=s3fs_options(self.endpoint),
            read_only=read_only)

    def create(self, prefix: str, shape: tuple[int, ...], layout: Layout,
               compression: str) -> Any:
        compressors = (None if compression == "none"
                       else self.zarr.codecs.ZstdCodec(level=ZSTD_LEVEL, checksum=False))
        return self.zarr.create_array(
            self.store(prefix, False), shape=shape, dtype="uint16", chunks=layout.chunks,
            shards=layout.shards, compressors=compressors, fill_value=0)

    def open(self, prefix: str) -> Any:
        return self.zarr.open_array(self.store(prefix, True), mode="r")


class TensorstorePeer(Peer):
    name = "tensorstore"

    def probe(self) -> str:
        from importlib.metadata import version

        import tensorstore

        self.ts = tensorstore
        return version("tensorstore")

    def kvstore(self, prefix: str) -> dict[str, Any]:
        # credentials: the environment's AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (main)
        return {"driver": "s3", "bucket": BUCKET, "path": prefix + "/",
                "endpoint": self.endpoint, "aws_region": REGION}

    def create(self, prefix: str, shape: tuple[int, ...], layout: Layout,
               compression: str) -> Any:
        inner: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
        if compression == "zstd":
            inner.append(zstd_dict())
        codecs = inner if layout.shards is None else [{
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": list(layout.chunks), "codecs": inner,
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}],
                "index_location": "end"}}]
        spec = {"driver": "zarr3", "kvstore": self.kvstore(prefix), "metadata": {
            "shape": list(shape), "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {
                "chunk_shape": list(layout.shards or layout.chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}}
        return self.ts.open(spec, create=True).result()

    def write(self, arr: Any, src: np.ndarray) -> None:
        arr.write(src).result()

    def open(self, prefix: str) -> Any:
        return self.ts.open({"driver": "zarr3", "kvstore": self.kvstore(prefix)},
                            open=True, read=True).result()

    def read(self, arr: Any, sel: Any) -> np.ndarray:
        if isinstance(sel, Outer):
            return np.asarray(arr.oindex[tuple(sel)].read().result())
        return np.asarray(arr[sel].read().result())


def make_peers(names: Sequence[str], endpoint: str) -> list[Peer]:
    made: dict[str, Callable[[], Peer]] = {
        "zarr3c/obstore": lambda: Zarr3cPeer(endpoint, "obstore"),
        "zarr3c/fsspec": lambda: Zarr3cPeer(endpoint, "fsspec"),
        "zarr-python/obstore": lambda: ZarrPythonPeer(endpoint, "obstore"),
        "zarr-python/fsspec": lambda: ZarrPythonPeer(endpoint, "fsspec"),
        "tensorstore": lambda: TensorstorePeer(endpoint),
    }
    return [made[n]() for n in names]


# --------------------------------------------------------------------------- the runs


@dataclass
class Row:
    layout: str
    compression: str
    workload: str
    peer: str
    seconds: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""

    @property
    def requests(self) -> int:
        return sum(self.counts.values())


def run_workload(peer: Peer, proxy: Proxy, workload: str, prefix: str, src: np.ndarray,
                 layout: Layout, compression: str, chunk_sels: Sequence[Any],
                 random_sels: Sequence[Any], outer_sel: Outer, tag: str, checker: Peer
                 ) -> tuple[float, dict[str, int]]:
    """Time one workload; its requests as the proxy counted them.  Raises on a wrong
    result (a write is read back by ``checker``, straight from the server)."""
    if workload == "write":
        target = f"w-{tag}-{peer.name.replace('/', '-')}"
        proxy.reset()
        t0 = time.perf_counter()
        arr = peer.create(target, src.shape, layout, compression)
        peer.write(arr, src)
        seconds = time.perf_counter() - t0
        counts = proxy.counts()
        err = verify_one(checker.open(target)[...], src, "write")
        if err:
            raise AssertionError(err)
        return seconds, counts
    arr = peer.open(prefix)
    sels: Sequence[Any] = {"read_all": [(Ellipsis,)], "read_chunks": chunk_sels,
                           "random": random_sels, "oindex": [outer_sel]}[workload]
    proxy.reset()
    t0 = time.perf_counter()
    outs = [peer.read(arr, sel) for sel in sels]
    seconds = time.perf_counter() - t0
    counts = proxy.counts()
    for sel, out in zip(sels, outs, strict=True):
        expected = numpy_orthogonal(src, sel) if isinstance(sel, Outer) else src[sel]
        err = verify_one(out, expected, workload)
        if err:
            raise AssertionError(err)
    return seconds, counts


def ratio(value: float | None, best: float | None) -> str:
    if value is None or not best:
        return "-"
    return f"{value / best:.2f}"


def report(rows: Sequence[Row], markdown: bool) -> list[str]:
    lines = ["| layout | compression | workload | library | s | x fastest peer | requests "
             "| x fewest peer | by kind | goal |",
             "|---|---|---|---|---:|---:|---:|---:|---|---|"]
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.layout, r.compression, r.workload), []).append(r)
    for (layout, compression, workload), group in groups.items():
        peers = [r for r in group if not r.peer.startswith("zarr3c") and not r.error]
        fastest = min((r.seconds for r in peers if r.seconds is not None), default=None)
        fewest = min((r.requests for r in peers), default=None)
        for r in group:
            if r.error:
                lines.append(f"| {layout} | {compression} | {workload} | {r.peer} | "
                             f"error: {r.error} | | | | | |")
                continue
            goal = ""
            if r.peer.startswith("zarr3c") and fastest is not None and fewest is not None:
                fast = r.seconds is not None and r.seconds <= 0.5 * fastest
                few = r.requests <= fewest
                goal = "met" if fast and few else "missed: " + ", ".join(
                    w for w, bad in (("time", not fast), ("requests", not few)) if bad)
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(r.counts.items()))
            lines.append(
                f"| {layout} | {compression} | {workload} | {r.peer} | {r.seconds:.3f} | "
                f"{ratio(r.seconds, fastest)} | {r.requests} | "
                f"{ratio(float(r.requests), float(fewest) if fewest else None)} | {kinds} | "
                f"{goal} |")
    if not markdown:
        lines = [line.replace("|", " ").strip() for line in lines if "---" not in line]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=256, help="edge of the uint16 cube")
    parser.add_argument("--chunk", type=int, default=32, help="chunk (inner chunk) edge")
    parser.add_argument("--shard", type=int, default=128, help="shard edge")
    parser.add_argument("--nreads", type=int, default=1000, help="random 4^3 reads")
    parser.add_argument("--nindices", type=int, default=100,
                        help="indices per index array of the oindex read")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--layouts", default="chunked,sharded")
    parser.add_argument("--compressions", default="none,zstd")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)

    # tensorstore reads its credentials from the environment; moto takes any
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                      AWS_DEFAULT_REGION=REGION, AWS_EC2_METADATA_DISABLED="true")
    src = make_source(args.size)
    layouts = {"chunked": Layout("chunked", (args.chunk,) * 3, None),
               "sharded": Layout("sharded", (args.chunk,) * 3, (min(args.shard, args.size),) * 3)}
    chosen = [layouts[n] for n in args.layouts.split(",")]
    compressions = args.compressions.split(",")
    workloads = args.workloads.split(",")
    random_sels = random_selections(src.shape, args.nreads, RANDOM_BOX)
    rows: list[Row] = []
    with servers(args.latency) as (direct, proxy):
        peers = make_peers(args.peers.split(","), proxy.endpoint)
        versions: dict[str, str] = {}
        usable: list[Peer] = []
        for peer in peers:
            try:
                versions[peer.name] = peer.probe()
                usable.append(peer)
            except Exception as exc:
                versions[peer.name] = f"skipped: {describe(exc)}"
        writer = Zarr3cPeer(direct["endpoint_url"], "obstore")
        writer.probe()
        warmed = False
        for layout in chosen:
            chunk_sels = grid_selections(src.shape, layout.unit)
            outer_sel = Outer(orthogonal_selection(src.shape, args.nindices, layout.unit[-1]))
            for compression in compressions:
                prefix = f"{layout.name}-{compression}.zarr"
                writer.create(prefix, src.shape, layout, compression)[...] = src
                if not warmed:
                    # First use starts clients, credential chains and thread pools (seconds
                    # for tensorstore): once per peer, before anything is timed.
                    for peer in usable:
                        peer.read(peer.open(prefix), (0, 0, 0))
                        tiny = Layout("chunked", (4, 4, 4), None)
                        target = f"warmup-{peer.name.replace('/', '-')}"
                        peer.write(peer.create(target, (4, 4, 4), tiny, compression),
                                   src[:4, :4, :4])
                    warmed = True
                for workload in workloads:
                    for peer in usable:
                        row = Row(layout.name, compression, workload, peer.name)
                        try:
                            row.seconds, row.counts = run_workload(
                                peer, proxy, workload, prefix, src, layout, compression,
                                chunk_sels, random_sels, outer_sel,
                                f"{layout.name}-{compression}",
                                writer)
                        except Exception as exc:
                            row.error = describe(exc)
                        rows.append(row)
                        print(f"# {layout.name} {compression} {workload} {peer.name}: "
                              f"{row.seconds if row.seconds is None else round(row.seconds, 3)}"
                              f" s, {row.counts} {row.error}", file=sys.stderr, flush=True)
    print(f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# uint16 {args.size}^3 ({src.nbytes / 2**20:.0f} MiB), chunks {args.chunk}^3, "
          f"shards {min(args.shard, args.size)}^3, {args.nreads} random {RANDOM_BOX}^3 reads, "
          f"latency {args.latency * 1000:.0f} ms per request")
    for name, version in versions.items():
        print(f"# {name}: {version}")
    print("\n".join(report(rows, args.markdown)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
