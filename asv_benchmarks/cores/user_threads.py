"""What serialises small reads made from many user threads (issue 30, point 3): the steps of
one random 4^3 read of a zstd chunk, each timed alone from 1 and from 16 Python threads, with
the process's CPU time over the wall time (how many cores the step kept busy).

The steps: reading a chunk file in Python, ``zstd_ctx.decompress_into`` (zarr3c's bound
libzstd, GIL released) into a buffer each thread keeps or into a fresh one per call, the
same into a tiny buffer (the GIL's round trip with almost no work), whole ``a[sel]``
reads, uncompressed and zstd, and a zstd ``a[sel]`` split in two: its Python alone (the
one-call kernel replaced by a no-op) and its kernel call alone (``chunks.read_chunks`` with
the arguments the read passed it, into a buffer each thread keeps).  ``T16_NREADS`` (2000)
operations per row, min of 3, from 1 and from ``T16_THREADS`` (16) threads.

``python user_threads.py`` (run it under different ``MALLOC_*`` settings to see what the
allocator does: ``MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=2147483648``).
"""

import os
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import zarr3c
from zarr3c._kernels import chunks, zstd_ctx
from zarr3c.array.read import native

NREADS = int(os.environ.get("T16_NREADS", "2000"))
THREADS = int(os.environ.get("T16_THREADS", "16"))
SIZE = 256
ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


def timed(op: Callable[[int], object], threads: int) -> tuple[float, float]:
    """us per operation and CPU / wall of ``NREADS`` calls ``op(i)`` over ``threads``."""
    best = (float("inf"), 0.0)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(op, range(min(NREADS, 64))))
        for _ in range(3):
            c0, t0 = time.process_time(), time.perf_counter()
            list(pool.map(op, range(NREADS), chunksize=16))
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            best = min(best, (wall / NREADS * 1e6, cpu / wall))
    return best


def main() -> None:
    env = " ".join(f"{k}={v}" for k, v in os.environ.items() if k.startswith("MALLOC_"))
    print(f"# {os.cpu_count()} cpus; {env or 'default malloc'}", flush=True)
    src = (np.arange(SIZE ** 3, dtype=np.uint64) % 65521).astype("uint16").reshape((SIZE,) * 3)
    rng = np.random.default_rng(1)
    starts = rng.integers(0, SIZE - 4, size=(NREADS, 3))
    sels = [tuple(slice(int(s), int(s) + 4) for s in row) for row in starts]
    with tempfile.TemporaryDirectory(prefix="uthreads-") as root:
        arrays = {}
        for comp in ("none", "zstd"):
            arrays[comp] = a = zarr3c.create_array(
                f"{root}/{comp}.zarr", shape=src.shape, dtype="uint16", chunks=(64,) * 3,
                fill_value=0, compressors=None if comp == "none" else ZSTD, overwrite=True)
            a[...] = src
        files = [f"{root}/zstd.zarr/c/{i}/{j}/{k}" for i in range(4) for j in range(4)
                 for k in range(4)]
        frames = [open(f, "rb").read() for f in files]
        tiny = zstd_ctx_frame(b"x")
        local = threading.local()

        def kept(i: int) -> int:
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = np.empty(64 ** 3 * 2, np.uint8)
            return zstd_ctx.decompress_into(frames[i % 64], buf)

        def tiny_buf(i: int) -> int:
            buf = getattr(local, "tiny", None)
            if buf is None:
                buf = local.tiny = np.empty(16, np.uint8)
            return zstd_ctx.decompress_into(tiny, buf)

        calls = kernel_calls(arrays["zstd"], sels)

        def kernel_alone(i: int) -> object:
            args = list(calls[i % len(calls)])
            bufs = getattr(local, "bufs", None)
            if bufs is None:
                bufs = local.bufs = (np.empty_like(args[6]), np.empty_like(args[18]))
            args[6], args[18] = bufs
            return chunks.read_chunks(*args)

        ops: dict[str, Callable[[int], object]] = {
            "file read (Python open/read)": lambda i: open(files[i % 64], "rb").read(),
            "decode into a kept buffer": kept,
            "decode into a fresh buffer": lambda i: zstd_ctx.decompress_into(
                frames[i % 64], np.empty(64 ** 3 * 2, np.uint8)),
            "decode of 1 byte (GIL round trip)": tiny_buf,
            "a[sel] uncompressed": lambda i: arrays["none"][sels[i]],
            "a[sel] zstd": lambda i: arrays["zstd"][sels[i]],
            "a[sel] zstd, its Python alone": lambda i: python_alone(arrays["zstd"], sels[i]),
            "a[sel] zstd, its kernel call alone": kernel_alone,
        }
        for name, op in ops.items():
            one, cpu1 = timed(op, 1)
            many, cpu16 = timed(op, THREADS)
            print(f"{name:36s} 1 thread {one:8.1f} us (cpu/wall {cpu1:4.2f})  {THREADS} threads "
                  f"{many:8.1f} us (cpu/wall {cpu16:5.2f})  speed-up {one / many:5.2f}",
                  flush=True)
        native._chunks = chunks


class _Recorder:
    """``chunks`` with ``read_chunks`` recording its positional calls (the one-call reads
    of ``native.read_box_natively``) and doing nothing else when ``noop``."""

    def __init__(self, noop: bool) -> None:
        self.noop = noop
        self.calls: list[tuple[object, ...]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(chunks, name)

    def read_chunks(self, *args: object, **kwargs: object) -> None:
        if kwargs:  # (a read over several chunks: not one call's)
            chunks.read_chunks(*args, **kwargs)
            return
        if self.noop:
            args[18][:] = 0  # type: ignore[index]  # (status: every chunk read)
            return
        self.calls.append(args)
        chunks.read_chunks(*args)


def kernel_calls(a: zarr3c.Array, sels: list[tuple[slice, ...]]) -> list[tuple[object, ...]]:
    """The one-call kernel's arguments for each of ``sels`` read in one chunk."""
    recorder = _Recorder(noop=False)
    native._chunks = recorder  # type: ignore[assignment]
    try:
        for sel in sels:
            a[sel]
    finally:
        native._chunks = chunks
    return recorder.calls


def python_alone(a: zarr3c.Array, sel: tuple[slice, ...]) -> object:
    """``a[sel]`` with the one-call kernel a no-op: the Python of a read, GIL held."""
    native._chunks = _NOOP  # type: ignore[assignment]
    return a[sel]


_NOOP = _Recorder(noop=True)


def zstd_ctx_frame(data: bytes) -> bytes:
    """One zstd frame of ``data`` through the bound libzstd."""
    out = np.empty(zstd_ctx.compress_bound(len(data)), np.uint8)
    n = zstd_ctx.compress_into(np.frombuffer(data, np.uint8), out, 0, False)
    return out[:n].tobytes()


if __name__ == "__main__":
    main()
