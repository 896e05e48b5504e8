"""The ``oindex`` rows of ``compare_peers.py`` against the thread count: two 1000-long index
arrays and one chunk's width over the 512^3 uint16 cube (only ``[:, :, :32]`` stored), chunked
(64^3) and sharded (256^3 shards of 32^3), min of 5 reads, through the native pipeline's
outer products and through the Python general path (``native.reads_outer`` switched off in
the same process), with tensorstore's time for the same read beside them.

``python oindex_threads.py [THREADS ...]`` (default 1 4 16)."""

import sys
import time
from collections.abc import Callable

import numpy as np

import zarr3c
from zarr3c.array.read import native

try:
    import tensorstore as ts
except ImportError:  # (zarr3c's rows alone)
    ts = None


def best_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    threads = [int(n) for n in sys.argv[1:]] or [1, 4, 16]
    reads_outer = native.reads_outer
    rng = np.random.default_rng(0)
    src = (np.add.outer(np.arange(512), np.arange(512))[:, :, None]
           + rng.integers(0, 64, (512, 512, 32))).astype("uint16")
    r3 = np.random.default_rng(3)
    sel = (r3.integers(0, 512, size=1000), r3.integers(0, 512, size=1000), slice(0, 32))
    expect = src[np.ix_(sel[0], sel[1], np.arange(32))]
    layouts = {"sharded": {"chunks": (32,) * 3, "shards": (256,) * 3},
               "chunked": {"chunks": (64,) * 3}}
    for comp in ("none", "zstd"):
        codecs = None if comp == "none" else [
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
        for layout, kw in layouts.items():
            path = f"/tmp/oindex_threads_{comp}_{layout}.zarr"
            a = zarr3c.create_array(path, shape=(512,) * 3, dtype="uint16", compressors=codecs,
                                    fill_value=0, overwrite=True, **kw)
            a[:, :, 0:32] = src
            for way in ("native", "python"):
                native.reads_outer = reads_outer if way == "native" else lambda array: False
                assert np.array_equal(a.oindex[sel], expect)
                for n in threads:
                    zarr3c.set_num_threads(n)
                    ms = best_ms(lambda: a.oindex[sel])  # noqa: B023 - called at once
                    print(f"{layout} {comp} oindex {way} threads={n}: {ms:.1f} ms", flush=True)
            native.reads_outer = reads_outer
            zarr3c.set_num_threads(None)
            if ts is not None:
                t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
                            ).result().oindex[sel]
                assert np.array_equal(t.read().result(), expect)
                print(f"{layout} {comp} oindex tensorstore: "
                      f"{best_ms(lambda: t.read().result()):.1f} ms", flush=True)  # noqa: B023


if __name__ == "__main__":
    main()
