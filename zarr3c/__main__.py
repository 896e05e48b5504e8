"""Command line: ``python -m zarr3c demo|info|tree``.

``demo`` writes a ~100 MB array to a temporary directory, reads it back, verifies it and prints
the throughput; ``info PATH`` describes an array or group; ``tree PATH`` prints a hierarchy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

import zarr3c
from zarr3c.errors import ZarrError


def _demo(args: argparse.Namespace) -> int:
    shape = (200, 512, 512)  # uint16: 100 MiB; 200 is not a multiple of 64: ragged edge chunks
    chunks = (64, 64, 64)
    rng = np.random.default_rng(0)
    z, y, x = np.ogrid[: shape[0], : shape[1], : shape[2]]
    data = ((z * 7 + y * 3 + x) % 4096).astype(np.uint16)
    data += rng.integers(0, 16, size=shape, dtype=np.uint16)  # compressible but not trivial
    mib = data.nbytes / 2**20
    with tempfile.TemporaryDirectory(prefix="zarr3c-demo-") as tmp:
        store = zarr3c.LocalStore(tmp)
        compressors = None if args.uncompressed else "auto"
        t0 = time.perf_counter()
        a = zarr3c.create_array(store, "demo", shape=shape, dtype="uint16", chunks=chunks,
                                compressors=compressors)
        a[...] = data
        t_write = time.perf_counter() - t0
        t0 = time.perf_counter()
        back = zarr3c.open_array(store, "demo", mode="r")[...]
        t_read = time.perf_counter() - t0
        ok = np.array_equal(back, data)
        stored = sum(len(store.get(k) or b"") for k in store.list_prefix("demo/"))
    codec = "uncompressed" if args.uncompressed else "zstd level 0"
    print(f"zarr3c {zarr3c.__version__} demo: {shape} uint16 ({mib:.0f} MiB), chunks {chunks}, "
          f"{codec}, {zarr3c.get_num_threads()} threads")
    print(f"  stored:  {stored / 2**20:8.1f} MiB in {a.nchunks} chunks")
    print(f"  write:   {t_write * 1e3:8.1f} ms  {mib / t_write:8.1f} MiB/s")
    print(f"  read:    {t_read * 1e3:8.1f} ms  {mib / t_read:8.1f} MiB/s")
    print(f"  verify:  {'OK, read back equals what was written' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def _info(args: argparse.Namespace) -> int:
    node = zarr3c.open(args.path, mode="r")
    if isinstance(node, zarr3c.Group):
        print(f"Type: Group\nPath: {node.name}\nMembers: {len(node)}")
        print(f"Attributes: {node.attrs.asdict()}")
        return 0
    md = node.metadata
    print(f"Type: Array\nPath: {node.name}\nShape: {node.shape}\nData type: {md.data_type.name}")
    print(f"Chunks: {node.chunks}\nFill value: {md.data_type.fill_value_to_json(md.fill_value)}")
    print(f"Codecs: {[c.to_dict() for c in md.codecs]}")
    print(f"Chunks initialized: {node.nchunks_initialized}/{node.nchunks}")
    print(f"Attributes: {node.attrs.asdict()}")
    return 0


def _tree(args: argparse.Namespace) -> int:
    node = zarr3c.open(args.path, mode="r")
    if isinstance(node, zarr3c.Array):
        print(f"{node.name} {node.shape} {node.dtype}")
    else:
        print(node.tree())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr3c", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="write, read back and verify a ~100 MB array")
    demo.add_argument("--uncompressed", action="store_true", help="no compressor")
    demo.set_defaults(func=_demo)
    info = sub.add_parser("info", help="describe an array or group")
    info.add_argument("path")
    info.set_defaults(func=_info)
    tree = sub.add_parser("tree", help="print a hierarchy")
    tree.add_argument("path")
    tree.set_defaults(func=_tree)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ZarrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
