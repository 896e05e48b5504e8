"""The public functions: create and open arrays and groups, as zarr-python 3 names them.

``store`` may be a Store, a path (str or pathlib.Path: LocalStore), ``"memory://"`` (a new
MemoryStore) or a dict.  Modes: ``r`` read-only, must exist; ``r+`` read/write, must exist;
``a`` read/write, created if missing; ``w`` create, replacing what is there; ``w-`` create,
fail if something is there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zarr3c.array import Array, open_array_at
from zarr3c.array import create_array as _create_array
from zarr3c.consolidated import ReadOnce, check_use_consolidated
from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.group import Group, open_group_at, open_node
from zarr3c.group import create_group as _create_group
from zarr3c.metadata.formats import FORMATS, HierarchyFormat, detect_format
from zarr3c.paths import normalize_path
from zarr3c.stores import make_store

__all__ = ["create_array", "create_group", "open", "open_array", "open_group"]

MODES = ("r", "r+", "a", "w", "w-")


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InvalidArgumentError(f"mode must be one of {MODES}, got {mode!r}")


def _format_for_create(store: Any, zarr_format: Any) -> HierarchyFormat:
    """The format a new node is written in: the hierarchy's own, which must be the one asked
    for (one hierarchy never mixes layouts).  An empty store takes the one asked for."""
    if zarr_format not in FORMATS:
        raise UnsupportedFeatureError(
            f"zarr_format {zarr_format!r} is not supported (one of {list(FORMATS)})"
        )
    detected = detect_format(store)
    if detected.zarr_format == zarr_format:
        return detected
    if store.get("zarr.json") is None:
        return FORMATS[zarr_format]()
    raise UnsupportedFormatError(
        f"the store holds a hierarchy in the {detected.zarr_format!r} layout; pass "
        f"zarr_format={detected.zarr_format!r} to add nodes to it",
        source="zarr.json",
    )


def create_array(
    store: Any,
    name: str | None = None,
    *,
    shape: Any = None,
    dtype: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = (),
    serializer: Any = "auto",
    compressors: Any = "auto",
    fill_value: Any = None,
    order: str = "C",
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    overwrite: bool = False,
    codecs: Sequence[Any] | None = None,
    zarr_format: Any = 3,
    write_empty_chunks: bool = False,
    data: Any = None,
    storage_options: dict[str, Any] | None = None,
) -> Array:
    """Create a Zarr v3 array.

    Parameters
    ----------
    store
        Where to create it (Store, path, ``"memory://"``).
    name
        Path of the array within the store (``None``: the root).
    shape, dtype
        Shape and numpy dtype (taken from ``data`` when given).
    chunks
        Chunk shape (a tuple of ints; an int for every dimension; ``"auto"``).
    filters, serializer, compressors
        The array->array codecs, the array->bytes codec (default ``bytes``, little endian) and
        the bytes->bytes codecs (default zstd level 0; ``None`` for none), as codec dicts
        (``{"name": "gzip", "configuration": {"level": 5}}``) or codec objects.
    codecs
        The whole codec list; overrides filters/serializer/compressors.
    fill_value
        Value of elements never written (default 0 / False).
    order
        Memory layout ("C" or "F") of the numpy arrays reads return.
    write_empty_chunks
        Store chunks even when they hold only the fill value (default: erase them).
    overwrite
        Replace a node already at the path (otherwise ContainsArrayError/ContainsGroupError).
    """
    if data is None and (shape is None or dtype is None):
        raise InvalidTypeError("create_array() needs shape and dtype (or data)")
    s = make_store(store, read_only=False, storage_options=storage_options)
    return _create_array(
        s, normalize_path(name), fmt=_format_for_create(s, zarr_format), shape=shape,
        dtype=dtype, chunks=chunks, shards=shards,
        filters=filters, serializer=serializer, compressors=compressors, fill_value=fill_value,
        order=order, attributes=attributes, chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names, overwrite=overwrite, codecs=codecs,
        write_empty_chunks=write_empty_chunks, data=data,
    )


def open_array(
    store: Any,
    path: str | None = None,
    mode: str = "r",
    *,
    write_empty_chunks: bool = False,
    order: str = "C",
    storage_options: dict[str, Any] | None = None,
    **create_kwargs: Any,
) -> Array:
    """Open an array.  With mode ``a`` a missing array is created from ``create_kwargs``
    (shape, dtype, chunks, ...); with ``w``/``w-`` it is always created."""
    _check_mode(mode)
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    fmt = detect_format(s)
    if mode in ("w", "w-") or (mode == "a" and create_kwargs and not fmt.node_exists(s, p)):
        fmt = _format_for_create(s, create_kwargs.pop("zarr_format", fmt.zarr_format))
        return _create_array(s, p, fmt=fmt, overwrite=(mode == "w"),
                             write_empty_chunks=write_empty_chunks, order=order, **create_kwargs)
    return open_array_at(s, p, read_only=(mode == "r"), write_empty_chunks=write_empty_chunks,
                         order=order, fmt=fmt)


def create_group(
    store: Any,
    path: str | None = None,
    attributes: dict[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Create a group (and any missing parent groups)."""
    s = make_store(store, read_only=False, storage_options=storage_options)
    return _create_group(s, normalize_path(path), attributes=attributes, overwrite=overwrite,
                         fmt=_format_for_create(s, zarr_format))


def open_group(
    store: Any,
    path: str | None = None,
    mode: str = "a",
    *,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
) -> Group:
    """Open a group; with mode ``a`` (the default) a missing group is created.

    ``use_consolidated`` (as in zarr-python): None uses the group's consolidated metadata
    when its ``zarr.json`` has some, True requires it (MetadataError naming the key when
    there is none), False ignores it.  A group created here has none.
    """
    _check_mode(mode)
    check_use_consolidated(use_consolidated)
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    reads = ReadOnce(s)  # the root zarr.json is read once however often it is looked at
    fmt = detect_format(reads)
    if mode in ("w", "w-"):
        return _create_group(s, p, attributes=attributes, overwrite=(mode == "w"), fmt=fmt)
    if mode == "a" and not fmt.node_exists(reads, p):
        return _create_group(s, p, attributes=attributes, fmt=fmt)
    return open_group_at(s, p, read_only=(mode == "r"), fmt=fmt,
                         use_consolidated=use_consolidated, reads=reads)


def open(
    store: Any,
    path: str | None = None,
    mode: str = "a",
    *,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open whatever node is at ``path``.  When there is none: with ``shape`` in ``kwargs``
    an array is created, otherwise a group (modes ``a``, ``w``, ``w-``).  A group uses its
    consolidated metadata as :func:`open_group` does with ``use_consolidated``."""
    _check_mode(mode)
    check_use_consolidated(use_consolidated)
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    reads = ReadOnce(s)
    fmt = detect_format(reads)
    if mode in ("w", "w-") or (mode == "a" and not fmt.node_exists(reads, p)):
        if "shape" in kwargs or "data" in kwargs:
            return open_array(s, p, mode="w" if mode == "w" else "w-", **kwargs)
        return open_group(s, p, mode="w" if mode == "w" else "w-", **kwargs)
    node = open_node(s, p, read_only=(mode == "r"), fmt=fmt,
                     use_consolidated=use_consolidated, reads=reads)
    if isinstance(node, Array) and kwargs:  # again, from the document already read
        return Array(s, p, node.metadata, read_only=(mode == "r"), fmt=fmt, **{
            k: v for k, v in kwargs.items() if k in ("write_empty_chunks", "order")})
    return node
