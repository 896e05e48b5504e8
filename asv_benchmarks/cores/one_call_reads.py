"""Small reads in one kernel call against the Python short paths' steps (issue 30, point 3),
in one process, the two ways taking turns: ``read_chunks`` of ``compare_peers.py`` (every
64^3 chunk of its 512^3 zstd cube, one after another), its ``random`` rows (1,000 random 4^3
boxes one after another, its layouts), and 2,000 random 4^3 boxes of a 256^3
cube read as ``a[sel]`` from 16 user threads, chunked (64^3) and sharded (128^3 shards of
32^3), uncompressed and zstd; ms per pass, min of 5.

``python one_call_reads.py`` (from the repository root or with ``compare_peers`` importable).
"""

import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import zarr3c
from zarr3c.array.read import native, shard_boxes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare_peers import make_source  # noqa: E402

ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
WAYS = {"one call": (native.read_box_natively, shard_boxes.read_shard_box_natively),
        "steps": (lambda *args: False, lambda *args: False)}


def take_turns(fn: Callable[[], object], repeat: int = 5) -> dict[str, float]:
    """The least ms of ``fn`` each way, the ways taking turns."""
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(repeat):
        for way, (chunked, sharded) in WAYS.items():
            native.read_box_natively, shard_boxes.read_shard_box_natively = chunked, sharded
            start = time.perf_counter()
            fn()
            times[way].append(time.perf_counter() - start)
    native.read_box_natively, shard_boxes.read_shard_box_natively = WAYS["one call"]
    return {way: min(t) * 1e3 for way, t in times.items()}


def main() -> None:
    print(f"# {os.cpu_count()} cpus, {zarr3c.get_num_threads()} zarr3c threads", flush=True)
    with tempfile.TemporaryDirectory(prefix="one-call-") as root:
        src = make_source(512)
        a = zarr3c.create_array(f"{root}/cube.zarr", shape=src.shape, dtype="uint16",
                                chunks=(64,) * 3, compressors=ZSTD, fill_value=0)
        a[...] = src
        units = [tuple(slice(64 * i, 64 * i + 64) for i in (x, y, z))
                 for x in range(8) for y in range(8) for z in range(8)]
        got = take_turns(lambda: [a[u] for u in units])
        print("chunked zstd read_chunks: " + ", ".join(f"{w} {t:.1f} ms" for w, t in got.items()),
              flush=True)
        # compare_peers.py's random rows: 1,000 4^3 boxes one after another
        starts = np.random.default_rng(1).integers(0, 508, size=(1000, 3))
        boxes = [tuple(slice(int(s), int(s) + 4) for s in row) for row in starts]
        for layout, kw in {"chunked": {"chunks": (64,) * 3},
                           "sharded": {"chunks": (32,) * 3, "shards": (256,) * 3}}.items():
            for comp in ("none", "zstd"):
                c = zarr3c.create_array(f"{root}/peer_{layout}_{comp}.zarr", shape=src.shape,
                                        dtype="uint16", fill_value=0,
                                        compressors=ZSTD if comp == "zstd" else None, **kw)
                c[...] = src
                got = take_turns(lambda c=c: [c[b] for b in boxes], 3)
                print(f"{layout} {comp} random one after another: " + ", ".join(
                    f"{w} {t * 1e3 / len(boxes):.1f} us/read" for w, t in got.items()),
                    flush=True)
        small = src[:256, :256, :256]
        starts = np.random.default_rng(1).integers(0, 252, size=(2000, 3))
        sels = [tuple(slice(int(s), int(s) + 4) for s in row) for row in starts]
        layouts = {"chunked": {"chunks": (64,) * 3},
                   "sharded": {"chunks": (32,) * 3, "shards": (128,) * 3}}
        with ThreadPoolExecutor(16) as pool:
            for layout, kw in layouts.items():
                for comp in ("none", "zstd"):
                    b = zarr3c.create_array(f"{root}/{layout}_{comp}.zarr", shape=small.shape,
                                            dtype="uint16", fill_value=0,
                                            compressors=ZSTD if comp == "zstd" else None, **kw)
                    b[...] = small
                    for s in sels[:20]:
                        assert np.array_equal(b[s], small[s])
                    got = take_turns(lambda b=b: list(pool.map(b.__getitem__, sels)), 3)
                    print(f"{layout} {comp} 16 user threads a[sel]: " + ", ".join(
                        f"{w} {t * 1e3 / len(sels):.1f} us/read" for w, t in got.items()),
                        flush=True)


if __name__ == "__main__":
    main()
