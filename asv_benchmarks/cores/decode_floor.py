"""The floor of ``compare_peers.py``'s chunked zstd ``read_chunks`` row (issue 30): every
64^3 chunk of its 512^3 uint16 cube read one after another, so one thread decodes each chunk.
In one process, taking turns (ms per pass, min of ``DECODE_FLOOR_REPEAT``, default 5):

- ``zarr3c a[chunk]`` and ``tensorstore t[chunk]``, each reading the same files;
- ``file + zstd, new buffers``: each chunk's file read (``open``/``read``) and decoded by
  zarr3c's zstd codec into a new buffer, the buffers kept as a read's outputs are (so each
  decode writes fresh pages): the least a reader does, in Python calls;
- ``zstd, new buffers``: the same from the files' bytes already in memory;
- ``zstd, one buffer``: the same into one buffer used again (no page faults).

A pass of one chunk after another decodes on one thread (a zstd frame decodes in sequence),
so the first floor is what a reader can approach, not beat by threads.

``python decode_floor.py [size]`` (from the repository root or with ``compare_peers``
importable; ``size`` defaults to 512).
"""

import os
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import tensorstore as ts

import zarr3c
from zarr3c.codecs.zstd import ZstdCodec

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare_peers import grid_selections, make_source  # noqa: E402

ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
REPEAT = int(os.environ.get("DECODE_FLOOR_REPEAT", "5"))


def read_file(name: str) -> np.ndarray:
    with open(name, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8)


def main(size: int) -> None:
    src = make_source(size)
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "cube.zarr")
        a = zarr3c.create_array(path, shape=src.shape, dtype=src.dtype, chunks=(64,) * 3,
                                compressors=ZSTD, fill_value=0, overwrite=True)
        a[...] = src
        a = zarr3c.open_array(path, mode="r")
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}},
                    open=True, read=True).result()
        sels = grid_selections(src.shape, (64,) * 3)
        files = [os.path.join(path, "c", *(str(s.start // 64) for s in sel)) for sel in sels]
        frames = [read_file(name) for name in files]
        nbytes = 64 ** 3 * src.itemsize
        kept = np.empty(nbytes, dtype=np.uint8)
        codec = ZstdCodec(level=0, checksum=False)

        def decode(frame: np.ndarray, out: np.ndarray) -> np.ndarray:
            assert codec.decode_into(frame, out)
            return out

        ways: dict[str, Callable[[], object]] = {
            "zarr3c a[chunk]": lambda: [a[s] for s in sels],
            "tensorstore t[chunk]": lambda: [t[s].read().result() for s in sels],
            "file + zstd, new buffers":
                lambda: [decode(read_file(name), np.empty(nbytes, np.uint8)) for name in files],
            "zstd, new buffers": lambda: [decode(f, np.empty(nbytes, np.uint8)) for f in frames],
            "zstd, one buffer": lambda: [decode(f, kept) for f in frames],
        }
        for sel in sels[:3]:
            assert np.array_equal(a[sel], src[sel])
            assert np.array_equal(t[sel].read().result(), src[sel])
        times: dict[str, list[float]] = {name: [] for name in ways}
        for fn in ways.values():
            fn()
        for _ in range(REPEAT):
            for name, fn in ways.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
        print(f"# {os.cpu_count()} cpus; {len(sels)} chunks of 64^3 uint16, "
              f"{sum(len(f) for f in frames) / len(frames) / 1024:.0f} KiB stored on average; "
              f"ms per pass, min of {REPEAT}, taking turns")
        for name, ts_ in times.items():
            print(f"{name:26s} {min(ts_) * 1e3:8.1f} ms  (median {np.median(ts_) * 1e3:.1f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 512)
