"""Count the Python function calls a read makes, per chunk: the scaling proxy on few cores.

Every Python call a read makes between its nogil kernel calls is a point where the threads
reading chunks queue for the GIL.  A read executed natively makes a number of calls that does
not grow with the number of chunks; this script shows where zarr3c stands, for a whole read
(``a[...]``) and a ``get_many`` of 1,000 random 4^3 boxes, chunked and sharded, uncompressed
and zstd, at two array sizes (calls counted by ``sys.setprofile`` in every thread).

Usage::

    python asv_benchmarks/python_calls.py                # 128^3 and 256^3, 32^3 chunks
    python asv_benchmarks/python_calls.py --sizes 256 512
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence

import numpy as np


def count_calls(fn: Callable[[], object]) -> int:
    """The number of Python function calls ``fn()`` makes, in all threads."""
    n = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal n
        if event == "call":
            n += 1

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return n


def main(argv: Sequence[str] | None = None) -> int:
    import zarr3c

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[128, 256], help="cube edges")
    p.add_argument("--chunk", type=int, default=32, help="chunk edge (chunked layout)")
    p.add_argument("--inner", type=int, default=16, help="inner chunk edge (sharded layout)")
    args = p.parse_args(argv)
    zstd = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    print("comp  layout   size   chunks  whole read: calls  per chunk   get_many: calls")
    with tempfile.TemporaryDirectory(prefix="zarr3c-calls-") as tmp:
        for comp in ("none", "zstd"):
            for layout in ("chunked", "sharded"):
                for edge in args.sizes:
                    unit = args.chunk if layout == "chunked" else args.inner
                    a = zarr3c.create_array(
                        f"{tmp}/{comp}-{layout}-{edge}.zarr", shape=(edge,) * 3,
                        dtype="uint16", chunks=(unit,) * 3,
                        shards=(4 * unit,) * 3 if layout == "sharded" else None,
                        compressors=zstd if comp == "zstd" else None,
                    )
                    a[...] = np.arange(edge**3, dtype="uint16").reshape((edge,) * 3)
                    nchunks = (-(-edge // unit)) ** 3
                    rng = np.random.default_rng(0)
                    boxes = [tuple(slice(int(s), int(s) + 4) for s in rng.integers(0, edge - 4, 3))
                             for _ in range(1000)]
                    a[...]  # (first read: imports and kept per-array facts are not counted)
                    whole = count_calls(lambda a=a: a[...])
                    many = count_calls(lambda a=a, boxes=boxes: a.get_many(boxes))
                    print(f"{comp:5} {layout:8} {edge:4}^3 {nchunks:6}  {whole:17} "
                          f"{whole / nchunks:10.1f}  {many:15}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
