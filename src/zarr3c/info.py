"""Summaries of arrays and groups: what ``Array.info`` and ``Group.info`` show.

The fields, their labels and their order are zarr-python 3.4's ``ArrayInfo`` and
``GroupInfo`` (``zarr.core._info``), so that a summary reads the same in either library; the
values are zarr3c's (its data type names, its codec objects).  The ``*_complete`` forms add
what needs the store (bytes stored, chunks initialized, member counts).

>>> import zarr3c
>>> print(zarr3c.create_group("memory://").info)
Name        : /
Type        : Group
Zarr format : 3
Read-only   : False
Store type  : MemoryStore
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["ArrayInfo", "GroupInfo"]


def _human_size(size: int) -> str:
    """``size`` in binary units, one decimal (``1.5K``), as zarr-python prints it."""
    for exponent, unit in ((50, "P"), (40, "T"), (30, "G"), (20, "M"), (10, "K")):
        if size >= 1 << exponent:
            return f"{size / float(1 << exponent):.1f}{unit}"
    return str(size)


def _byte_info(size: int) -> str:
    """A byte count as ``info`` shows it: the number, from 1 KiB on with its size in binary
    units after it (``1536 (1.5K)``)."""
    return str(size) if size < 1024 else f"{size} ({_human_size(size)})"


#: Fill values of more bytes than this are shown by their first bytes and their size.
_FILL_SHOWN_BYTES = 64


def _fill_text(value: Any) -> Any:
    """A fill value as ``info`` shows it: itself, but a long string, bytes or raw element
    by its first characters and its size, so that a summary of an array of 64 MiB elements
    is not a 256 MB line."""
    size = getattr(value, "nbytes", None)
    if not isinstance(size, int) or size <= _FILL_SHOWN_BYTES:
        return value
    if isinstance(value, str | bytes):
        head = value[: _FILL_SHOWN_BYTES // (4 if isinstance(value, str) else 1)]
    elif isinstance(value, np.void) and value.dtype.fields is None:
        head = bytes(np.frombuffer(value, dtype=np.uint8, count=_FILL_SHOWN_BYTES))
    else:
        return value
    return f"{head!r}... ({size:,} bytes)"


def _lines(fields: list[tuple[str, Any]], width: int) -> str:
    return "\n".join(f"{label:<{width}} : {value}" for label, value in fields)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ArrayInfo:
    """The summary of an array that ``Array.info`` and ``Array.info_complete()`` return;
    its ``repr`` is the text.

    Parameters
    ----------
    zarr_format : object
        The hierarchy format (3, 2, ``"draft-2022"`` or ``"zarr2-v3"``).
    data_type : str
        The data type, as named in the metadata.
    fill_value : object
        The fill value (a numpy scalar).
    shape : tuple of int
        The array's shape.
    shard_shape : tuple of int, str or None
        The shard shape of a sharded array (``"<variable>"`` for a rectilinear grid of
        shards), else None.
    chunk_shape : tuple of int or None
        The (inner) chunk shape; None for a rectilinear grid (shown as ``<variable>``).
    order : str
        The memory order of reads.
    read_only : bool
        Whether the array refuses writes.
    store_type : str
        The store's class name.
    filters : tuple
        The array->array codecs.
    serializer : object or None
        The array->bytes codec (None for a Zarr v2 array, as in zarr-python).
    compressors : tuple
        The bytes->bytes codecs.
    count_bytes : int or None
        The decoded size in bytes.
    count_bytes_stored : int or None
        The bytes the store holds for the array (metadata included); only when complete.
    count_chunks_initialized : int or None
        The stored chunks (shards, for a sharded array); only when complete.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,))
    >>> a.info.shape, a.info.chunk_shape
    ((4,), (2,))
    """

    type: str = "Array"
    zarr_format: Any
    data_type: str
    fill_value: Any
    shape: tuple[int, ...]
    shard_shape: tuple[int, ...] | str | None = None
    chunk_shape: tuple[int, ...] | None = None
    order: str
    read_only: bool
    store_type: str
    filters: tuple[Any, ...] = ()
    serializer: Any = None
    compressors: tuple[Any, ...] = ()
    count_bytes: int | None = None
    count_bytes_stored: int | None = None
    count_chunks_initialized: int | None = None

    def __repr__(self) -> str:
        fields: list[tuple[str, Any]] = [
            ("Type", self.type),
            ("Zarr format", self.zarr_format),
            ("Data type", self.data_type),
            ("Fill value", _fill_text(self.fill_value)),
            ("Shape", self.shape),
        ]
        if self.shard_shape is not None:
            fields.append(("Shard shape", self.shard_shape))
        fields += [
            ("Chunk shape", "<variable>" if self.chunk_shape is None else self.chunk_shape),
            ("Order", self.order),
            ("Read-only", self.read_only),
            ("Store type", self.store_type),
            ("Filters", self.filters),
        ]
        if self.serializer is not None:
            fields.append(("Serializer", self.serializer))
        fields.append(("Compressors", self.compressors))
        if self.count_bytes is not None:
            fields.append(("No. bytes", _byte_info(self.count_bytes)))
        if self.count_bytes_stored is not None:
            fields.append(("No. bytes stored", _byte_info(self.count_bytes_stored)))
            if self.count_bytes is not None and self.count_bytes_stored > 0:
                fields.append(("Storage ratio",
                               f"{self.count_bytes / self.count_bytes_stored:.1f}"))
        if self.count_chunks_initialized is not None:
            label = "Shards Initialized" if self.shard_shape is not None else "Chunks Initialized"
            fields.append((label, self.count_chunks_initialized))
        return _lines(fields, 18)

    __str__ = __repr__


@dataclasses.dataclass(frozen=True, kw_only=True)
class GroupInfo:
    """The summary of a group that ``Group.info`` and ``Group.info_complete()`` return; its
    ``repr`` is the text.

    Parameters
    ----------
    name : str
        The group's name (``"/"`` for the root).
    zarr_format : object
        The hierarchy format.
    read_only : bool
        Whether the group refuses changes.
    store_type : str
        The store's class name.
    count_members : int or None
        Members at every depth (known without reading the store only from consolidated
        metadata).
    count_arrays : int or None
        Of which arrays.
    count_groups : int or None
        Of which groups.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> _ = g.create_group("sub")
    >>> g.info_complete().count_groups
    1
    """

    name: str
    type: str = "Group"
    zarr_format: Any
    read_only: bool
    store_type: str
    count_members: int | None = None
    count_arrays: int | None = None
    count_groups: int | None = None

    def __repr__(self) -> str:
        fields: list[tuple[str, Any]] = [
            ("Name", self.name),
            ("Type", self.type),
            ("Zarr format", self.zarr_format),
            ("Read-only", self.read_only),
            ("Store type", self.store_type),
        ]
        for label, count in (("No. members", self.count_members),
                             ("No. arrays", self.count_arrays),
                             ("No. groups", self.count_groups)):
            if count is not None:
                fields.append((label, count))
        return _lines(fields, 11)

    __str__ = __repr__
