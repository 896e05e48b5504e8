"""Where the CPU of whole string reads and writes goes, and the floor numpy sets.

One thread (``ZARR3C_NUM_THREADS=1``, set before zarr3c is imported), CPU time of the
process (``time.process_time``), minimum of ``--repeat`` runs, on the data of
``bench_strings.strings`` (asv_benchmarks/benchmarks/bench_strings.py) as
``compare_peers.py --strings`` writes it: a 1-d ``string`` array, codecs ``vlen-utf8`` + zstd
level 0, on a LocalStore.  For each data set (``--sets``: ``long``, 10^5 strings of about
1,000 characters in chunks of 10^4; ``short``, 10^6 of 5-15 in chunks of 10^5) it prints:

reads
    ``zstd decode``: every stored chunk decoded by ``ZstdCodec.decode``, nothing else (each
    result dropped before the next chunk, as a read drops it);
    ``pack, fresh``: the vlen kernel checking and packing every decoded chunk into a new
    ``StringDType`` array (``vlen.decode_utf8_into``; the previous one freed first, as a
    read's caller frees the last result): what any reader returning ``StringDType`` must
    do, numpy's allocator taking new memory for every string of over 15 bytes;
    ``pack, reused``: the same into an array that already holds these strings (numpy reuses
    each string's memory): the kernel's own work, without the new memory;
    ``numpy copy``: ``values.copy()``, numpy building the same array from one it has;
    ``numpy from str``: an object array of the same ``str`` converted by
    ``astype(StringDType())``, which a reader decoding to Python strings first adds;
    ``zarr3c read``: ``a[:]``.
writes
    ``vlen encode``: ``vlen.encode_utf8`` of every chunk of the values;
    ``zstd encode``: ``ZstdCodec.encode`` of every encoded chunk, and ``numcodecs zstd``:
    ``numcodecs.Zstd.encode`` of the same (another libzstd build, where zarr3c binds one);
    ``zarr3c write``: ``a[:] = values``.

The difference between ``pack, fresh`` and ``pack, reused`` is the cost of new memory: with
glibc's default settings, memory freed at the top of the heap goes back to the system, and
each new result faults its pages in again (numpy takes one allocation per string over 15
bytes).

Usage::

    python asv_benchmarks/strings_cpu.py                  # both sets, --repeat 7
    python asv_benchmarks/strings_cpu.py --sets long --repeat 11
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ["ZARR3C_NUM_THREADS"] = "1"

import numcodecs  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_peers import STRING_SETS, ZSTD_LEVEL, import_zarr3c, load_strings  # noqa: E402

SETS = {"long": "strings_long", "short": "strings_short"}


def cpu_ms(fn: Callable[[], Any], repeat: int, before: Callable[[], None] | None = None) -> float:
    """The least CPU time of ``repeat`` calls of ``fn``, in ms; ``before`` (untimed) runs
    ahead of each, and each result is dropped before the next call."""
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
        del out
    return best * 1e3


def measure(name: str, repeat: int) -> list[tuple[str, float]]:
    """The rows of one data set."""
    zarr3c = import_zarr3c()
    from zarr3c._kernels import vlen
    from zarr3c.codecs.zstd import ZstdCodec

    n, length, chunk = STRING_SETS[SETS[name]]
    values = load_strings(n, length)
    tmp = tempfile.mkdtemp(prefix="zarr3c-strings-cpu-")
    try:
        a = zarr3c.create_array(
            zarr3c.LocalStore(tmp), shape=(n,), dtype=str, chunks=(chunk,),
            compressors=[{"name": "zstd", "configuration": {"level": ZSTD_LEVEL,
                                                            "checksum": False}}],
        )
        a[:] = values
        files = sorted(glob.glob(os.path.join(tmp, "c", "*")))
        stored = [open(f, "rb").read() for f in files]  # noqa: SIM115 - closed at once
        zstd = ZstdCodec(level=ZSTD_LEVEL)
        decoded = [np.frombuffer(zstd.decode(s), np.uint8) for s in stored]
        parts = [slice(i * chunk, (i + 1) * chunk) for i in range(len(decoded))]
        held: list[Any] = [None]

        def pack(out: np.ndarray) -> np.ndarray:
            for part, data in zip(parts, decoded, strict=True):
                vlen.decode_utf8_into(data, out[part])
            return out

        def drop() -> None:
            held[0] = None

        def fresh() -> np.ndarray:
            held[0] = pack(np.empty(n, values.dtype))
            return held[0]

        def write() -> None:
            a[:] = values

        def each(fn: Callable[[Any], Any], items: list[Any]) -> None:
            # one chunk at a time, each result dropped before the next, as reads and writes
            # hold them
            for item in items:
                fn(item)

        # zarr3c's own rows first, while the process holds little else: what the allocator
        # has kept from the rows' work changes how much new memory a read or write faults in
        whole = [("write: zarr3c write", cpu_ms(write, repeat)),
                 ("read: zarr3c read", cpu_ms(lambda: a[:], repeat))]
        rows = [("read: zstd decode", cpu_ms(lambda: each(zstd.decode, stored), repeat)),
                ("read: pack, fresh", cpu_ms(fresh, repeat, drop))]
        held[0] = pack(np.empty(n, values.dtype))
        rows.append(("read: pack, reused", cpu_ms(lambda: pack(held[0]), repeat)))
        drop()
        rows.append(("read: numpy copy", cpu_ms(values.copy, repeat)))
        held[0] = values.astype(object)
        rows.append(("read: numpy from str", cpu_ms(lambda: held[0].astype(values.dtype),
                                                    repeat)))
        drop()
        rows.append(whole[1])
        encoded = [vlen.encode_utf8(values[part]) for part in parts]
        codec = numcodecs.Zstd(level=ZSTD_LEVEL)
        rows += [
            ("write: vlen encode",
             cpu_ms(lambda: each(lambda p: vlen.encode_utf8(values[p]), parts), repeat)),
            ("write: zstd encode", cpu_ms(lambda: each(zstd.encode, encoded), repeat)),
            ("write: numcodecs zstd", cpu_ms(lambda: each(codec.encode, encoded), repeat)),
            whole[0],
        ]
        mib = sum(d.nbytes for d in decoded) / 2**20
        print(f"{name}: {n} strings of about {length} characters, chunks of {chunk}: "
              f"{mib:.1f} MiB encoded, {sum(map(len, stored)) / 2**20:.1f} MiB stored")
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="long,short", help="comma list of long,short")
    p.add_argument("--repeat", type=int, default=7, help="runs per row; the least is kept (7)")
    args = p.parse_args(argv)
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    bad = [s for s in names if s not in SETS]
    if bad or args.repeat < 1:
        raise SystemExit(f"unknown sets {bad}; choose from {', '.join(SETS)}" if bad
                         else "--repeat must be positive")
    import_zarr3c()
    from zarr3c.codecs.zstd import _LIBZSTD

    library = f"libzstd {_LIBZSTD.release} ({_LIBZSTD.name})" if _LIBZSTD else "numcodecs"
    print(f"one thread, CPU ms, min of {args.repeat}; numpy {np.__version__}, zarr3c's zstd: "
          f"{library}; MALLOC_TRIM_THRESHOLD_={os.environ.get('MALLOC_TRIM_THRESHOLD_', '-')}")
    for name in names:
        rows = measure(name, args.repeat)
        width = max(len(r) for r, _ in rows)
        for row, ms in rows:
            print(f"  {row:{width}s} {ms:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
