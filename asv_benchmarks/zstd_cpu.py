"""CPU cost of zstd in zarr3c against the floor numcodecs sets and against tensorstore.

Every implementation here runs on one thread, and the numbers are user CPU times (the
process's, ``resource.getrusage``), so that the comparison is of the computing done, not of
how it spreads over the cores nor of the kernel's file work (system time, printed apart).
On the peer comparison's source cube (``--size``, uint16, smooth gradients plus noise), as one
shard of ``--chunk``^3 inner chunks (one file, so that file creation does not blur the
picture), zstd level 0 without checksum, it measures:

- ``numcodecs``: ``numcodecs.Zstd.encode`` / ``decode`` called on every inner chunk, nothing
  else (numcodecs' own libzstd, 1.5.6 in numcodecs 0.16);
- ``kept context``: the libzstd zarr3c bound (``zarr3c.codecs.zstd``: ``backports.zstd``'s or
  the standard library's where installed, else numcodecs'; the header line names it)
  compressing every inner chunk into one buffer and decoding every one, through contexts
  kept per thread, as zarr3c's writes and reads do (``zarr3c._kernels.zstd_ctx``): their
  floor;
- ``zarr3c``: a whole-array write and read, one thread;
- ``tensorstore`` (if importable): the same write and read, ``data_copy_concurrency`` and
  ``file_io_concurrency`` limited to 1;
- ``zarrs-python`` (if importable): the same write and read through zarr-python with the
  ``zarrs.ZarrsCodecPipeline``, on one thread (``threading.max_workers`` 1).  zarrs compresses
  with the libzstd its Rust crate bundles, not numcodecs': below 1 in ``enc/floor``, the peer
  compresses the same bytes with less CPU than zarr3c's floor allows.

- ``zstandard`` (if importable): python-zstandard compressing and decoding every inner chunk
  with the libzstd it bundles (1.5.7 in zstandard 0.25), same level, no checksum, the
  content size written as numcodecs writes it: ``enc/floor`` below 1 is the speed of
  another build or version of libzstd (``ZARR3C_ZSTD_LIBRARY=numcodecs`` keeps zarr3c's rows
  on numcodecs' build, for comparison).

It prints the CPU milliseconds, zarr3c / numcodecs (zarr3c's own overhead) and
tensorstore / numcodecs (below 1: tensorstore's zstd costs less for the same bytes).  Each
measurement is the minimum of ``--repeat`` runs.  The compressed sizes are printed too: the
libraries compress to about the same bytes, so a difference in CPU is the calls' cost.

Usage::

    python asv_benchmarks/zstd_cpu.py                 # 256^3, 32^3 chunks
    python asv_benchmarks/zstd_cpu.py --chunk 64
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numcodecs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import ZSTD_LEVEL, make_source  # noqa: E402

ZSTD_CONFIG = {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}


def cpu_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The least user and system CPU times (ms) of ``repeat`` calls of ``fn``."""
    user = system = float("inf")
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        user = min(user, r1.ru_utime - r0.ru_utime)
        system = min(system, r1.ru_stime - r0.ru_stime)
    return user * 1e3, system * 1e3


def chunks_of(src: np.ndarray, edge: int) -> list[np.ndarray]:
    """Every ``edge``^3 chunk of ``src``, C-contiguous, in C order."""
    n = src.shape[0]
    return [np.ascontiguousarray(src[i:i + edge, j:j + edge, k:k + edge])
            for i in range(0, n, edge) for j in range(0, n, edge) for k in range(0, n, edge)]


def measure_numcodecs(src: np.ndarray, edge: int, repeat: int) -> dict[str, float]:
    codec = numcodecs.Zstd(level=ZSTD_LEVEL)
    chunks = chunks_of(src, edge)
    encoded = [codec.encode(c) for c in chunks]
    return {
        "encode": cpu_ms(lambda: [codec.encode(c) for c in chunks], repeat),
        "decode": cpu_ms(lambda: [codec.decode(e) for e in encoded], repeat),
        "bytes": sum(len(e) for e in encoded),
    }


def measure_kept_context(src: np.ndarray, edge: int, repeat: int) -> dict[str, Any] | str:
    """The libzstd zarr3c bound compressing and decoding every inner chunk into one buffer
    through contexts kept per thread, as zarr3c's writes and reads do (the floor for them)."""
    from zarr3c._kernels import zstd_ctx
    from zarr3c.codecs import zstd as zstd_codec

    if not zstd_codec._CONTEXTS:
        return "unavailable: no libzstd's symbols are visible"
    codec = numcodecs.Zstd(level=ZSTD_LEVEL)
    chunks = chunks_of(src, edge)
    encoded = [np.frombuffer(codec.encode(c), dtype=np.uint8) for c in chunks]
    out = np.empty(chunks[0].nbytes, dtype=np.uint8)
    result: dict[str, Any] = {
        "decode": cpu_ms(lambda: [zstd_ctx.decompress_into(e, out) for e in encoded], repeat),
        "bytes": sum(e.nbytes for e in encoded)}
    if zstd_codec._COMPRESS:
        room = np.empty(zstd_ctx.compress_bound(chunks[0].nbytes), dtype=np.uint8)
        raw = [c.reshape(-1).view(np.uint8) for c in chunks]
        result["encode"] = cpu_ms(
            lambda: [zstd_ctx.compress_into(r, room, ZSTD_LEVEL, False) for r in raw], repeat)
    return result


def measure_zstandard(src: np.ndarray, edge: int, repeat: int) -> dict[str, Any] | str:
    """python-zstandard's own libzstd on every inner chunk (see the module docstring)."""
    try:
        import zstandard
    except ImportError as exc:
        return f"unavailable: {exc}"
    cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=False,
                                    write_content_size=True)
    dctx = zstandard.ZstdDecompressor()
    chunks = [c.tobytes() for c in chunks_of(src, edge)]
    encoded = [cctx.compress(c) for c in chunks]
    return {
        "encode": cpu_ms(lambda: [cctx.compress(c) for c in chunks], repeat),
        "decode": cpu_ms(lambda: [dctx.decompress(e) for e in encoded], repeat),
        "bytes": sum(len(e) for e in encoded),
    }


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(path) for f in files if f != "zarr.json")


def measure_write_read(write: Callable[[], Any], read: Callable[[], Any], repeat: int,
                       path: str) -> dict[str, Any]:
    """A library's whole write and read (CPU) and the bytes it stored under ``path``."""
    out: dict[str, Any] = {"encode": cpu_ms(write, repeat), "decode": cpu_ms(read, repeat)}
    out["bytes"] = dir_bytes(path)
    return out


def measure_zarr3c(src: np.ndarray, edge: int, repeat: int, tmp: str) -> dict[str, Any]:
    import zarr3c

    zarr3c.set_num_threads(1)
    path = os.path.join(tmp, "zarr3c")
    a = zarr3c.create_array(path, shape=src.shape, dtype=src.dtype, chunks=(edge,) * 3,
                            shards=src.shape, compressors=[ZSTD_CONFIG], fill_value=0)

    def write() -> None:
        a[...] = src

    return measure_write_read(write, lambda: a[...], repeat, path)


def measure_tensorstore(src: np.ndarray, edge: int, repeat: int, tmp: str
                        ) -> dict[str, Any] | str:
    try:
        import tensorstore as ts
    except ImportError as exc:
        return f"unavailable: {exc}"
    path = os.path.join(tmp, "tensorstore")
    context = ts.Context({"data_copy_concurrency": {"limit": 1},
                          "file_io_concurrency": {"limit": 1}})
    metadata = {
        "shape": list(src.shape), "data_type": src.dtype.name, "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(src.shape)}},
        "chunk_key_encoding": {"name": "default"},
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [edge] * 3,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ZSTD_CONFIG],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
            "index_location": "end"}}],
    }
    arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path},
                   "metadata": metadata}, create=True, context=context).result()
    return measure_write_read(lambda: arr.write(src).result(), lambda: arr.read().result(),
                              repeat, path)


def measure_zarrs(src: np.ndarray, edge: int, repeat: int, tmp: str) -> dict[str, Any] | str:
    try:
        import zarr
        import zarr.codecs
        import zarr.storage
        import zarrs  # noqa: F401  (the pipeline below imports it by name)
    except ImportError as exc:
        return f"unavailable: {exc}"
    path = os.path.join(tmp, "zarrs")
    config = {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "threading.max_workers": 1}
    with zarr.config.set(config):
        arr = zarr.create_array(
            zarr.storage.LocalStore(path), shape=src.shape, dtype=src.dtype,
            chunks=(edge,) * 3, shards=src.shape, fill_value=0,
            compressors=zarr.codecs.ZstdCodec(level=ZSTD_LEVEL, checksum=False))
        pipeline = type(arr._async_array.codec_pipeline).__name__
        if pipeline != "ZarrsCodecPipeline":
            return f"unavailable: codec pipeline is {pipeline}"

        def write() -> None:
            arr[...] = src

        return measure_write_read(write, lambda: arr[...], repeat, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256, help="edge of the uint16 cube (256)")
    p.add_argument("--chunk", type=int, default=32, help="chunk edge (32: a sharded "
                   "benchmark's inner chunk; 64: the chunked layout's chunk)")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement; min kept (3)")
    p.add_argument("--tmpdir", default=None, help="where the arrays are written")
    args = p.parse_args(argv)
    src = make_source(args.size)
    tmp = tempfile.mkdtemp(prefix="zarr3c-zstd-cpu-", dir=args.tmpdir)
    try:
        floor = measure_numcodecs(src, args.chunk, args.repeat)
        rows: list[tuple[str, dict[str, Any] | str]] = [
            ("numcodecs", floor),
            ("kept context", measure_kept_context(src, args.chunk, args.repeat)),
            ("zarr3c", measure_zarr3c(src, args.chunk, args.repeat, tmp)),
            ("tensorstore", measure_tensorstore(src, args.chunk, args.repeat, tmp)),
            ("zarrs-python", measure_zarrs(src, args.chunk, args.repeat, tmp)),
            ("zstandard", measure_zstandard(src, args.chunk, args.repeat)),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from zarr3c.codecs import zstd as zstd_codec

    bound = zstd_codec._LIBZSTD
    print(f"uint16 {args.size}^3 as one shard of {args.chunk}^3 inner chunks, zstd level "
          f"{ZSTD_LEVEL}, one thread; user (system) CPU ms, min of {args.repeat}; zarr3c's "
          f"libzstd: {'none' if bound is None else f'{bound.release} ({bound.name})'}")
    print(f"{'':13} {'encode':>16} {'decode':>16} {'bytes':>10} {'enc/floor':>10} "
          f"{'dec/floor':>10}")
    for name, row in rows:
        if isinstance(row, str):
            print(f"{name:13} {row}")
            continue
        (du, ds) = row["decode"]
        if "encode" in row:
            eu, es = row["encode"]
            encode, enc_ratio = f"{eu:9.1f} ({es:4.0f})", f"{eu / floor['encode'][0]:10.2f}"
        else:
            encode, enc_ratio = f"{'-':>16}", f"{'-':>10}"
        print(f"{name:13} {encode} {du:9.1f} ({ds:4.0f}) {row['bytes']:10d} "
              f"{enc_ratio} {du / floor['decode'][0]:10.2f}")
    print("(ratios of user CPU; the writes and reads also copy the chunks in and out and "
          "parse the shard index, which the numcodecs floor does not)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
