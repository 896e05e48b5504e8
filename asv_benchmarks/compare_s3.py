"""Reading a 64 MiB array from S3 on loopback: zarr3c vs zarr-python, same endpoint.

Starts moto's S3 server (``python -m moto.server``) in a subprocess on 127.0.0.1 (so the
server's work does not share the client's GIL), writes one array with zarr3c (float32,
4096 x 4096 = 64 MiB by default, 512 x 512 chunks or, with ``--shards``, shards of inner
chunks), then times ``a[...]`` through

- ``zarr3c``: ``zarr3c.open_array("s3://...", storage_options=...)``, its chunk thread pool at
  the default size (``zarr3c.get_num_threads()``, the number of cores) and at ``--threads``;
- ``zarr-python``: ``zarr.open_array(zarr.storage.FsspecStore.from_url(...))`` with its
  default ``async.concurrency`` (10);

both over s3fs with the same ``storage_options`` (endpoint, dummy credentials).  Each read is
checked against the source (a wrong answer exits 1, never timed); each is repeated
``--repeat`` times after one warm-up and the minimum kept.  Prints the times and the ratios
zarr3c / zarr-python (below 1: zarr3c is faster).  On a shared machine compare the ratios of
one run, not absolute times across runs.

Usage::

    python asv_benchmarks/compare_s3.py                       # 64 MiB, regular chunks
    python asv_benchmarks/compare_s3.py --shards --repeat 5   # 2048^2 shards of 512^2 chunks
    python asv_benchmarks/compare_s3.py --compression zstd --threads 32

Needs ``zarr3c[remote]``, ``moto[server]`` and, for the comparison, zarr-python.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# The peer script's timing and checking, from the same directory (on sys.path when this
# script runs).
from compare_peers import time_min, verify_one

BUCKET = "zarr3c-bench"


@contextmanager
def moto_s3() -> Iterator[dict[str, Any]]:
    """A moto S3 server subprocess on loopback with one bucket; yields storage_options."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start") from None
                time.sleep(0.1)
        options = {
            "key": "testing",  # dummy credentials: never the environment's
            "secret": "testing",
            "endpoint_url": endpoint,
            "client_kwargs": {"region_name": "us-east-1"},
            "config_kwargs": {"connect_timeout": 5, "read_timeout": 60},
        }
        import s3fs

        s3fs.S3FileSystem(**options, skip_instance_cache=True).call_s3(
            "create_bucket", Bucket=BUCKET
        )
        yield options
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def best_of(fn: Callable[[], np.ndarray], expected: np.ndarray, repeat: int) -> float:
    """Minimum wall time of ``fn()`` over ``repeat`` runs after a warm-up, every result
    checked (compare_peers' timing and checking; a wrong result ends the run)."""
    times, err = time_min(fn, lambda got: verify_one(got, expected, "read"), repeat,
                          warmup=True)
    if err:
        sys.exit(f"WRONG result: {err}")
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=4096, help="edge of the float32 square")
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--shards", action="store_true", help="2048^2 shards of --chunk chunks")
    parser.add_argument("--compression", choices=["none", "zstd"], default="none")
    parser.add_argument("--threads", type=int, default=16, help="zarr3c's second pool size")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import zarr3c

    rng = np.random.default_rng(0)
    src = rng.random((args.size, args.size), dtype=np.float32)
    url = f"s3://{BUCKET}/bench.zarr"
    with moto_s3() as options:
        shards = (min(2048, args.size),) * 2 if args.shards else None
        compressors = None if args.compression == "none" else "auto"
        t0 = time.perf_counter()
        a = zarr3c.create_array(
            url,
            shape=src.shape,
            dtype=src.dtype,
            chunks=(args.chunk, args.chunk),
            shards=shards,
            compressors=compressors,
            storage_options=options,
        )
        a[...] = src
        write = time.perf_counter() - t0
        mib = src.nbytes / 2**20
        layout = f"shards {shards} of " if shards else ""
        print(
            f"{mib:.0f} MiB float32 {src.shape}, {layout}chunks {(args.chunk,) * 2}, "
            f"compression {args.compression}; written by zarr3c in {write:.2f} s"
        )

        rows: dict[str, float] = {}
        default_threads = zarr3c.get_num_threads()

        def read_zarr3c() -> np.ndarray:
            return zarr3c.open_array(url, mode="r", storage_options=options)[...]

        rows[f"zarr3c (threads={default_threads})"] = best_of(read_zarr3c, src, args.repeat)
        zarr3c.set_num_threads(args.threads)
        try:
            rows[f"zarr3c (threads={args.threads})"] = best_of(read_zarr3c, src, args.repeat)
        finally:
            zarr3c.set_num_threads(None)
        try:
            import zarr
        except ImportError as exc:
            print(f"zarr-python: unavailable ({exc})")
        else:

            def read_zarr() -> np.ndarray:
                store = zarr.storage.FsspecStore.from_url(
                    url, storage_options=options, read_only=True
                )
                return zarr.open_array(store, mode="r")[...]

            concurrency = zarr.config.get("async.concurrency")
            rows[f"zarr-python {zarr.__version__} (concurrency={concurrency})"] = best_of(
                read_zarr, src, args.repeat
            )

    ref = next((v for k, v in rows.items() if k.startswith("zarr-python")), None)
    print(f"{'reader':<40} {'s':>8} {'MiB/s':>8} {'/ zarr-python':>14}")
    for name, t in rows.items():
        ratio = f"{t / ref:14.2f}" if ref else f"{'n/a':>14}"
        print(f"{name:<40} {t:8.3f} {mib / t:8.1f} {ratio}")


if __name__ == "__main__":
    main()
