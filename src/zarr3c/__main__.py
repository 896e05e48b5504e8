"""The command line: ``python -m zarr3c info|tree|copy|demo`` (also installed as ``zarr3c``).

- ``info PATH_OR_URL [--path NODE]``: what a node is: type, shape, data type, chunks and
  shards, codecs, bytes stored, chunks initialized, attributes.
- ``tree PATH_OR_URL [--path NODE]``: the hierarchy, with shapes and data types.
- ``copy SRC DST [--zarr-format 3|2|draft-2022] [--chunks 64,64,64] [--shards 512,512,512|none]
  [--compressor zstd|gzip|blosc|none[:LEVEL]] [--overwrite] [--progress|--no-progress]``:
  copy a hierarchy; with ``--chunks``/``--shards``/``--compressor`` it is rechunked and
  re-encoded chunk by chunk (:func:`zarr3c.copy`).
- ``demo [--uncompressed]``: write a ~100 MB array to a temporary directory, read it back,
  verify it and print the throughput.

Exit status: 0 on success; 1 when the demo reads back something other than what it wrote; 2
for a usage error or a zarr3c error (``error: ...`` on stderr, naming the path or key); 130
when interrupted.  Example::

    $ python -m zarr3c copy in.zarr out.zarr --chunks 64,64,64 --compressor zstd:5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import zarr3c
from zarr3c.array.geometry import grid_shape
from zarr3c.errors import ZarrError
from zarr3c.stores import is_url, make_store
from zarr3c.transfer import _copy_counted, _refuse_overlap

#: What ``--compressor NAME[:LEVEL]`` means, with the level's default.
_COMPRESSORS: dict[str, tuple[str, str, int]] = {
    # name: (codec name, level field, default level)
    "zstd": ("zstd", "level", 3),
    "gzip": ("gzip", "level", 6),
    "blosc": ("blosc", "clevel", 5),
}


class CliError(Exception):
    """A problem the command line reports itself (exit status 2, no traceback).

    Raised by the commands for what is wrong with their arguments (a missing source, a
    destination that is not empty); :func:`main` prints ``error: <message>`` on stderr.
    """


# -- argument types ----------------------------------------------------------------------------


def _shape_arg(text: str) -> Any:
    """``64,64,64`` -> (64, 64, 64); ``64`` -> 64 (every dimension); ``auto``."""
    if text == "auto":
        return "auto"
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers (e.g. 64,64,64)"
        ) from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: every length must be a positive integer")
    return values[0] if len(values) == 1 and "," not in text else values


def _shards_arg(text: str) -> Any:
    if text.lower() == "none":
        return None
    if text == "auto":
        raise argparse.ArgumentTypeError("shards take a shape (e.g. 512,512) or 'none'")
    return _shape_arg(text)


def _compressor_arg(text: str) -> Any:
    """``zstd``, ``gzip:9``, ``blosc:5``, ``none``, or a codec's JSON object (or a list)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not valid JSON: {exc}") from None
    name, _, level = text.partition(":")
    name = name.lower()
    if name == "none" and not level:
        return None
    if name not in _COMPRESSORS:
        raise argparse.ArgumentTypeError(
            f"unknown compressor {text!r}: use one of {', '.join(_COMPRESSORS)}, none "
            "(optionally with :LEVEL, e.g. zstd:5), or a codec as JSON"
        )
    codec, field, default = _COMPRESSORS[name]
    try:
        lvl = int(level) if level else default
    except ValueError:
        raise argparse.ArgumentTypeError(f"compressor level {level!r} is not an integer") from None
    return {"name": codec, "configuration": {field: lvl}}


# -- helpers -----------------------------------------------------------------------------------


def _open(target: str, path: str | None) -> zarr3c.Array | zarr3c.Group:
    """The node at ``path`` in ``target`` (a local path or a URL), read-only."""
    if not is_url(target) and not os.path.exists(target):
        raise CliError(f"{target}: no such file or directory")
    try:
        return zarr3c.open(target, path=path, mode="r")
    except ZarrError as exc:
        raise CliError(f"{target}: {exc}") from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{n} ({size:.1f} {unit})"
        size /= 1024
    raise AssertionError("unreachable")


def _codec_text(d: Any) -> str:
    """A codec dict as ``name(key=value, ...)``; nested codec lists recursively."""
    if not isinstance(d, dict) or "name" not in d:
        return json.dumps(d)
    parts = []
    for key, value in (d.get("configuration") or {}).items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            parts.append(f"{key}=[{', '.join(_codec_text(v) for v in value)}]")
        else:
            parts.append(f"{key}={json.dumps(value)}")
    return f"{d['name']}({', '.join(parts)})"


def _stored(a: zarr3c.Array) -> tuple[int, int]:
    """Chunks stored for ``a`` and the bytes stored (its metadata document and its chunks),
    from one listing of its chunks (a remote listing costs a request per page)."""
    store = a.store
    total = store.getsize(a.format.metadata_key(a.path, "array")) or 0
    n = 0
    for key, _ in a._stored_chunks():
        n += 1
        total += store.getsize(key) or 0
    return n, total


def _print_fields(fields: list[tuple[str, Any]]) -> None:
    width = max(len(label) for label, _ in fields)
    for label, value in fields:
        print(f"{label:<{width}} : {value}")


# -- commands ----------------------------------------------------------------------------------


def _info(args: argparse.Namespace) -> int:
    node = _open(args.target, args.path)
    attrs = json.dumps(node.attrs.asdict(), ensure_ascii=False)
    if isinstance(node, zarr3c.Group):
        members = node.members()
        n_arrays = sum(1 for _, m in members if isinstance(m, zarr3c.Array))
        n_groups = sum(1 for _, m in members if isinstance(m, zarr3c.Group))
        unreadable = len(members) - n_arrays - n_groups
        _print_fields([
            ("Type", "Group"),
            ("Path", node.name),
            ("Zarr format", node.zarr_format),
            ("Members", f"{len(members)} ({_count(n_arrays, 'array')}, "
                        f"{_count(n_groups, 'group')}"
                        + (f", {unreadable} unreadable)" if unreadable else ")")),
            ("Attributes", attrs),
        ])
        return 0
    md = node.metadata
    nchunks_stored, stored = _stored(node)
    fields: list[tuple[str, Any]] = [
        ("Type", "Array"),
        ("Path", node.name),
        ("Zarr format", node.zarr_format),
        ("Shape", node.shape),
        # The configuration of extension types too (a datetime unit, a struct's fields).
        ("Data type", node.data_type.describe()),
        ("Chunk grid", getattr(md.chunk_grid, "name", type(md.chunk_grid).__name__)),
        ("Chunks", node.chunks),
    ]
    if node.shards is not None:
        fields.append(("Shards", node.shards))
    fields += [
        ("Fill value", json.dumps(node.data_type.fill_value_to_json(md.fill_value))),
        # The pipeline's codecs: their v3 form whatever the layout (the draft's differs).
        ("Codecs", " -> ".join(_codec_text(c.to_dict()) for c in node.codecs)),
    ]
    if md.dimension_names is not None:
        fields.append(("Dimension names", list(md.dimension_names)))
    ratio = f"{node.nbytes / stored:.2f}" if stored else "-"
    fields += [
        ("Bytes", _human(node.nbytes)),
        ("Bytes stored", _human(stored)),
        ("Storage ratio", ratio),
        # Stored objects over the grid's: shards, for a sharded array.
        ("Chunks initialized", f"{nchunks_stored}/{math.prod(grid_shape(node))}"),
        ("Attributes", attrs),
    ]
    _print_fields(fields)
    return 0


def _tree(args: argparse.Namespace) -> int:
    node = _open(args.target, args.path)
    if isinstance(node, zarr3c.Array):
        print(f"{node.name} {node.shape} {node.dtype}")
    else:
        print(node.tree())
    return 0


def _progress_callback(
    enabled: bool | None,
) -> tuple[Callable[[str, int, int], None] | None, Callable[[], None]]:
    """A tqdm bar per array for :func:`zarr3c.copy`, and a function closing the last one."""
    try:
        from tqdm import tqdm
    except ImportError:
        if enabled:
            raise CliError("--progress needs tqdm: pip install 'zarr3c[cli]'") from None
        return None, lambda: None
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None, lambda: None
    bars: dict[str, Any] = {}

    def close() -> None:
        for bar in bars.values():
            bar.close()
        bars.clear()

    def callback(path: str, done: int, total: int) -> None:
        bar = bars.get(path)
        if bar is None:
            close()
            bar = bars[path] = tqdm(total=total, desc="/" + path, unit="chunk",
                                    file=sys.stderr, dynamic_ncols=True)
        bar.update(done - bar.n)

    return callback, close


def _check_destination(src: str, dst: str, overwrite: bool) -> bool:
    """Refuse to copy onto the source, or over existing data without ``--overwrite`` or that
    is not a Zarr hierarchy; returns whether the destination must be cleared first."""
    if not is_url(dst) and os.path.exists(dst) and not os.path.isdir(dst):
        raise CliError(f"{dst}: exists and is not a directory")
    store = make_store(dst)
    # zarr3c.copy's own check (same data, or one inside the other), run before the checks
    # below so that copying onto the source says so rather than asking for --overwrite.
    _refuse_overlap(make_store(src, read_only=True), store)
    if not is_url(dst) and not os.path.exists(dst):
        return False
    if next(iter(store.list()), None) is None:
        return False
    if not overwrite:
        raise CliError(f"{dst}: the destination is not empty (pass --overwrite to replace it)")
    if store.get("zarr.json") is None:
        raise CliError(f"{dst}: the destination is not empty and holds no Zarr hierarchy; "
                       "refusing to delete it")
    return True


def _copy(args: argparse.Namespace) -> int:
    if not is_url(args.src) and not os.path.exists(args.src):
        raise CliError(f"{args.src}: no such file or directory")
    callback, close = _progress_callback(args.progress)
    options: dict[str, Any] = {"clear": _check_destination(args.src, args.dst, args.overwrite)}
    for name in ("chunks", "shards", "compressors"):
        value = getattr(args, name)
        if value is not _UNSET:
            options[name] = value
    t0 = time.perf_counter()
    try:
        root, n_arrays, n_groups = _copy_counted(args.src, args.dst, zarr_format=args.zarr_format,
                                                 progress=callback, **options)
    except ZarrError as exc:
        raise CliError(f"copy {args.src} -> {args.dst}: {exc}") from None
    finally:
        close()
    elapsed = time.perf_counter() - t0
    if isinstance(root, zarr3c.Group):
        what = f"{_count(n_arrays, 'array')}, {_count(n_groups, 'group')}"
    else:
        what = _count(1, "array")
    how = "re-encoded" if len(options) > 1 else "copied"
    print(f"{how} {args.src} -> {args.dst} (zarr_format {args.zarr_format}): {what} "
          f"in {elapsed:.2f} s")
    return 0


# uint16: 100 MiB; 200 is not a multiple of 64: ragged edge chunks.
_DEMO_SHAPE = (200, 512, 512)
_DEMO_CHUNKS = (64, 64, 64)


def _demo(args: argparse.Namespace) -> int:
    shape, chunks = _DEMO_SHAPE, _DEMO_CHUNKS
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
        stored = sum(store.getsize(k) or 0 for k in store.list_prefix("demo/"))
    codec = "uncompressed" if args.uncompressed else "zstd level 0"
    print(f"zarr3c {zarr3c.__version__} demo: {shape} uint16 ({mib:.0f} MiB), chunks {chunks}, "
          f"{codec}, {zarr3c.get_num_threads()} threads")
    print(f"  stored:  {stored / 2**20:8.1f} MiB in {a.nchunks} chunks")
    print(f"  write:   {t_write * 1e3:8.1f} ms  {mib / t_write:8.1f} MiB/s")
    print(f"  read:    {t_read * 1e3:8.1f} ms  {mib / t_read:8.1f} MiB/s")
    print(f"  verify:  {'OK, read back equals what was written' if ok else 'MISMATCH'}")
    return 0 if ok else 1


# -- the parser --------------------------------------------------------------------------------

_UNSET: Any = object()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zarr3c" if os.path.basename(sys.argv[0]) == "zarr3c" else "python -m zarr3c",
        description="Inspect, copy and rechunk Zarr v3 and v2 hierarchies.",
        epilog="Exit status: 0 success, 1 demo verification failure, 2 usage or zarr3c error.",
    )
    parser.add_argument("--version", action="version", version=f"zarr3c {zarr3c.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def target(p: argparse.ArgumentParser) -> None:
        p.add_argument("target", metavar="PATH_OR_URL",
                       help="a directory holding a hierarchy, or a store URL")
        p.add_argument("--path", metavar="NODE", default=None,
                       help="the node inside the hierarchy (default: its root)")

    info = sub.add_parser("info", help="describe an array or group",
                          description="Describe an array or group: type, shape, data type, "
                          "chunks, shards, codecs, bytes stored, chunks initialized, "
                          "attributes.")
    target(info)
    info.set_defaults(func=_info)

    tree = sub.add_parser("tree", help="print a hierarchy with shapes and data types",
                          description="Print the hierarchy below a group (shapes and data "
                          "types of its arrays).")
    target(tree)
    tree.set_defaults(func=_tree)

    copy = sub.add_parser(
        "copy", help="copy a hierarchy, optionally rechunked and recompressed",
        description="Copy the hierarchy in SRC to DST. Without --chunks, --shards or "
        "--compressor the stored chunks are copied as they are; with them every array is "
        "re-encoded destination chunk by destination chunk, in parallel, with memory bounded "
        "by about one destination chunk (shard) per thread.",
    )
    copy.add_argument("src", metavar="SRC", help="the source hierarchy (a path or URL)")
    copy.add_argument("dst", metavar="DST", help="the destination (a path or URL)")
    copy.add_argument("--zarr-format", choices=("3", "2", "draft-2022"), default="3",
                      help="layout of the copy (default: 3)")
    copy.add_argument("--chunks", type=_shape_arg, default=_UNSET, metavar="N[,N...]|auto",
                      help="new chunk shape of every array (inner chunks if sharded)")
    copy.add_argument("--shards", type=_shards_arg, default=_UNSET, metavar="N[,N...]|none",
                      help="new shard shape of every array, or 'none' for no sharding")
    copy.add_argument("--compressor", dest="compressors", type=_compressor_arg, default=_UNSET,
                      metavar="NAME[:LEVEL]",
                      help="zstd, gzip, blosc or none, optionally with a level (zstd:5), or "
                      "a codec as JSON")
    copy.add_argument("--overwrite", action="store_true",
                      help="replace a destination that already holds a hierarchy")
    bar = copy.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar (needs tqdm; default: when stderr is a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false",
                     help="never show a progress bar")
    copy.set_defaults(func=_copy)

    demo = sub.add_parser("demo", help="write, read back and verify a ~100 MB array",
                          description="Write a ~100 MB array to a temporary directory, read it "
                          "back, verify it and print the throughput (exit status 1 if the "
                          "data read back differs).")
    demo.add_argument("--uncompressed", action="store_true", help="no compressor")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``python -m zarr3c``, ``zarr3c``) and return its exit status.

    Parameters
    ----------
    argv : sequence of str or None, default None
        The arguments after the program name (None: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success; 1 when ``demo`` reads back something other than what it wrote; 2 for
        a zarr3c error or a problem with the arguments (``error: ...`` on stderr, naming
        the path or key); 130 when interrupted.

    Raises
    ------
    SystemExit
        For a usage error (status 2, from argparse), ``--help`` and ``--version``
        (status 0).

    Examples
    --------
    >>> import tempfile, zarr3c
    >>> from zarr3c.__main__ import main
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a = zarr3c.create_array(tmp, "x", shape=(2, 3), dtype="int8")
    ...     status = main(["tree", tmp])
    /
    └── x (2, 3) int8
    >>> status
    0
    """
    args = _parser().parse_args(argv)
    if getattr(args, "zarr_format", None) in ("2", "3"):
        args.zarr_format = int(args.zarr_format)
    try:
        return int(args.func(args))
    except (CliError, ZarrError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
