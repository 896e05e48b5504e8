"""CPU cost of zstd per level and checksum through the libzstd zarr3c bound, on one thread.

zarr3c compresses and decodes zstd through the newest libzstd installed whose symbols it can
see (``backports.zstd``'s or the standard library's, else numcodecs': ``zarr3c.codecs.zstd``),
always through the same calls (``zarr3c._kernels.zstd_ctx``, contexts kept per thread).  This
script times those calls on the peer comparison's source cube (``--size``, uint16, smooth
gradients plus noise) cut into ``--chunk``^3 chunks, for each level and with and without the
frame checksum: CPU time (``time.process_time``, one thread, so that a busy machine blurs it
less than wall time), the minimum of ``--repeat`` passes.  It prints one JSON object per line.

To compare two builds, run it once per binding, e.g.::

    python asv_benchmarks/zstd_levels.py --chunk 32
    ZARR3C_ZSTD_LIBRARY=numcodecs python asv_benchmarks/zstd_levels.py --chunk 32
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import import_zarr3c, make_source  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=128, help="edge of the uint16 cube (128)")
    p.add_argument("--chunk", type=int, default=32, help="chunk edge (32)")
    p.add_argument("--levels", default="-1,0,1,2,3,4,5,9", help="comma list of levels")
    p.add_argument("--repeat", type=int, default=5, help="passes per measurement; min kept (5)")
    args = p.parse_args()

    import_zarr3c()
    from zarr3c._kernels import zstd_ctx
    from zarr3c.codecs import zstd as zstd_codec

    bound = zstd_codec._LIBZSTD
    if bound is None or not zstd_codec._COMPRESS:
        sys.exit("no libzstd compressor is bound here")
    src, e = make_source(args.size), args.chunk
    chunks = [np.ascontiguousarray(src[i:i + e, j:j + e, k:k + e]).reshape(-1).view(np.uint8)
              for i in range(0, args.size, e) for j in range(0, args.size, e)
              for k in range(0, args.size, e)]
    nbytes = sum(c.nbytes for c in chunks)
    room = np.empty(zstd_ctx.compress_bound(chunks[0].nbytes), dtype=np.uint8)
    out = np.empty(chunks[0].nbytes, dtype=np.uint8)
    for level in (int(v) for v in args.levels.split(",")):
        for checksum in (False, True):
            frames = [room[:zstd_ctx.compress_into(c, room, level, checksum)].copy()
                      for c in chunks]
            encode = decode = float("inf")
            for _ in range(args.repeat):
                t = time.process_time()
                for c in chunks:
                    zstd_ctx.compress_into(c, room, level, checksum)
                encode = min(encode, time.process_time() - t)
                t = time.process_time()
                for f in frames:
                    zstd_ctx.decompress_into(f, out)
                decode = min(decode, time.process_time() - t)
            print(json.dumps({
                "library": bound.name, "version": bound.release, "chunk": e, "level": level,
                "checksum": checksum, "encode_ms": round(encode * 1e3, 2),
                "decode_ms": round(decode * 1e3, 2), "stored": sum(f.nbytes for f in frames),
                "raw": nbytes}), flush=True)


if __name__ == "__main__":
    main()
