"""Many independent random 4^3 reads at once, zarr3c against tensorstore (issue 30, point
3), then whole writes and reads of the 512^3 cube at 1..16 threads.

``T16_SIZE`` (256) is the cube edge of the read rows, ``T16_NREADS`` (2000) their reads;
times are us per read (min of 3) and ms per whole write or read.
"""

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorstore as ts

import zarr3c

SIZE = int(os.environ.get("T16_SIZE", "256"))
NREADS = int(os.environ.get("T16_NREADS", "2000"))
ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
LAYOUTS = {"chunked": {"chunks": (64,) * 3}, "sharded": {"chunks": (32,) * 3, "shards": (128,) * 3}}

CUBE = r"""
import sys, time, numpy as np, zarr3c
path, comp = sys.argv[1], sys.argv[2]
src = (np.arange(512 ** 3, dtype=np.uint64) % 65521).astype("uint16").reshape((512,) * 3)
c = None if comp == "none" else [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
w = []
for _ in range(3):
    a = zarr3c.create_array(path, shape=src.shape, dtype="uint16", chunks=(64,) * 3,
                            compressors=c, fill_value=0, overwrite=True)
    s = time.perf_counter(); a[...] = src; w.append(time.perf_counter() - s)
a = zarr3c.open_array(path, mode="r"); a[...]
r = []
for _ in range(3):
    s = time.perf_counter(); a[...]; r.append(time.perf_counter() - s)
print(f"write {min(w) * 1e3:.1f} ms read {min(r) * 1e3:.1f} ms")
"""


def per_read(fn: Callable[[], object]) -> float:
    """The fastest of 3 runs of ``fn`` (after one warm-up), in us per read."""
    fn()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) / NREADS * 1e6


def small_reads(root: str) -> None:
    starts = np.random.default_rng(1).integers(0, SIZE - 4, size=(NREADS, 3))
    sels = [tuple(slice(int(s), int(s) + 4) for s in row) for row in starts]
    src = (np.arange(SIZE ** 3, dtype=np.uint64) % 65521).astype("uint16").reshape((SIZE,) * 3)
    for layout, kw in LAYOUTS.items():
        for comp in ("none", "zstd"):
            path = f"{root}/{layout}_{comp}.zarr"
            a = zarr3c.create_array(path, shape=src.shape, dtype="uint16", fill_value=0,
                                    compressors=None if comp == "none" else ZSTD,
                                    overwrite=True, **kw)
            a[...] = src
            a = zarr3c.open_array(path, mode="r")
            t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}},
                        open=True, read=True).result()
            for s in sels[:5]:
                assert np.array_equal(a[s], src[s])
                assert np.array_equal(t[s].read().result(), src[s])
            with ThreadPoolExecutor(16) as pool:
                for name, fn in ways_to_read(a, t, sels, pool).items():
                    print(f"{layout} {comp} {name}: {per_read(fn):.1f} us/read", flush=True)


def ways_to_read(a: zarr3c.Array, t: ts.TensorStore, sels: list[tuple[slice, ...]],
                 pool: ThreadPoolExecutor) -> dict[str, Callable[[], object]]:
    """Each way of reading all of ``sels`` from zarr3c (``a``) and tensorstore (``t``)."""
    return {
        "zarr3c serial a[sel]": lambda: [a[s] for s in sels],
        "zarr3c 16 user threads a[sel]": lambda: list(pool.map(a.__getitem__, sels)),
        "zarr3c read_async futures": lambda: [f.result() for f in [a.read_async(s) for s in sels]],
        "zarr3c get_many": lambda: a.get_many(sels),
        "tensorstore serial": lambda: [t[s].read().result() for s in sels],
        "tensorstore futures": lambda: [f.result() for f in [t[s].read() for s in sels]],
        "tensorstore 16 user threads": lambda: list(pool.map(lambda s: t[s].read().result(),
                                                              sels)),
    }


def scaling(root: str) -> None:
    for comp in ("none", "zstd"):
        for n in (1, 2, 4, 8, 16):
            r = subprocess.run([sys.executable, "-c", CUBE, f"{root}/cube_{comp}.zarr", comp],
                               env=dict(os.environ, ZARR3C_NUM_THREADS=str(n)),
                               capture_output=True, text=True, check=False)
            print(f"cube {comp} threads={n}: {r.stdout.strip() or r.stderr[-300:]}", flush=True)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="cores-") as tmp:
        small_reads(tmp)
        scaling(tmp)
