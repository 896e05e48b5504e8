"""The arguments that make a new array "like" another: what ``zarr3c.zeros_like`` and the
other top-level ``*_like`` functions, ``open_like`` and ``Group.zeros_like`` and its
siblings take from their template.

One definition, so that ``zarr3c.zeros_like(a)`` and ``g.zeros_like(name=..., data=a)``
make the same array.  It follows zarr-python 3.4's ``_like_args``: the shape, chunks, data
type and (for a Zarr array) fill value always; the storage settings only where the new
array has the template's format (the codecs for Zarr v3; the memory order, filters and
compressor for Zarr v2, where the order is stored).  zarr3c differs in one place: a
sharded template's shard shape is kept (zarr-python 3.4 passes only the inner chunk
shape, so its copy has shards as small as the inner chunks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarr3c.array import Array

__all__ = ["like_args", "merge_like"]

#: The keywords that choose an array's codecs, in create_array's and create's spelling.
_CODEC_KEYS = frozenset({"codecs", "filters", "serializer", "compressors", "compressor"})
#: The keywords that choose an array's chunk layout.
_GRID_KEYS = frozenset({"chunks", "shards", "chunk_shape"})


def like_args(a: Any, zarr_format: Any = None) -> dict[str, Any]:
    """:func:`zarr3c.create_array`'s keywords that make an array like ``a``.

    Parameters
    ----------
    a : array-like
        The template: a zarr3c :class:`~zarr3c.Array`, or anything with a ``shape`` (and
        perhaps ``dtype``, ``chunks`` and ``shards``: a numpy, dask or zarr-python array),
        or a nested sequence (read by ``numpy.asarray``).
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"} or None, default None
        The format of the new array.  None: ``a``'s (for a zarr3c Array, which then adds
        ``zarr_format`` to the keywords), else no format is chosen.

    Returns
    -------
    dict
        ``shape``, ``dtype`` and, where ``a`` has them, ``chunks`` (the inner chunks of a
        sharded array) and ``shards`` (for a Zarr v3 array only); ``zarr_format`` where
        known; for a zarr3c Array also ``fill_value`` and, in
        ``a``'s own format, ``codecs`` (Zarr v3 and its drafts) or ``filters`` and
        ``compressors`` (Zarr v2), and ``order`` where the format stores it (every format
        but the final Zarr v3).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(8,), dtype="int16", chunks=(2,),
    ...                         shards=(4,), fill_value=5)
    >>> args = like_args(a)
    >>> args["shape"], args["chunks"], args["shards"], args["fill_value"], args["zarr_format"]
    ((8,), (2,), (4,), np.int16(5), 3)
    >>> sorted(like_args(a, zarr_format=2))
    ['chunks', 'dtype', 'fill_value', 'shape', 'zarr_format']
    >>> like_args([[1, 2, 3]])
    {'shape': (1, 3), 'dtype': dtype('int64')}
    """
    if not hasattr(a, "shape"):
        a = np.asarray(a)
    out: dict[str, Any] = {"shape": tuple(a.shape)}
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    chunks = _chunk_shape(a)
    if chunks is not None:
        out["chunks"] = chunks
    if isinstance(a, Array) and zarr_format is None:
        zarr_format = a.zarr_format
    shards = getattr(a, "shards", None)
    if isinstance(shards, tuple) and zarr_format in (None, 3):  # (only Zarr v3 shards)
        out["shards"] = shards
    if zarr_format is not None:
        out["zarr_format"] = zarr_format
    if not isinstance(a, Array):
        return out
    out["fill_value"] = a.fill_value
    if zarr_format != a.zarr_format:
        return out  # (a's codecs and order belong to its format: the new one's defaults)
    if a.zarr_format == 2:
        out.update(filters=a.filters, compressors=a.compressors or None)
    else:
        out["codecs"] = list(a.codecs)
    if a.zarr_format != 3:
        out["order"] = a.order
    return out


def _chunk_shape(a: Any) -> Any:
    """``a``'s chunk shape: its ``chunks`` where that has one entry per dimension, the first
    edge of each dimension for a dask array (whose ``chunks`` are edge lists), else None."""
    if isinstance(a, Array):
        return a.chunks
    chunks = getattr(a, "chunks", None)
    if not isinstance(chunks, tuple) or len(chunks) != len(a.shape):
        return None
    return tuple(c[0] if isinstance(c, tuple) and c else c for c in chunks)


def merge_like(like: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``like`` overridden by the caller's ``kwargs``, whole settings at a time.

    Codecs given any way (``codecs``, ``filters``, ``serializer``, ``compressors``,
    ``compressor``) replace all of the template's.  A chunk layout given (``chunks``,
    ``shards``, ``chunk_shape``) replaces the template's chunks and shards; the template's
    codecs then lose a sharding codec (which pins the old inner chunk shape) for the codecs
    of each inner chunk, or are dropped where the caller shards the array anew.

    Parameters
    ----------
    like : dict
        :func:`like_args`'s keywords.
    kwargs : dict
        The caller's keywords.

    Returns
    -------
    dict
        The keywords to create the array with.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(8,), dtype="int16", chunks=(2,),
    ...                         shards=(4,))
    >>> merged = merge_like(like_args(a), {"chunks": (8,)})
    >>> merged["chunks"], "shards" in merged, merged["codecs"]
    ((8,), False, [BytesCodec(endian='little'), ZstdCodec(level=0, checksum=False)])
    """
    merged = dict(like)
    if _CODEC_KEYS & set(kwargs):
        for key in _CODEC_KEYS:
            merged.pop(key, None)
    if _GRID_KEYS & set(kwargs):
        for key in _GRID_KEYS:
            merged.pop(key, None)
        codecs = merged.get("codecs")
        if codecs is not None and "shards" in kwargs:
            merged.pop("codecs")
        elif codecs is not None and "shards" in like:
            # The sharding codec's own chain encodes each inner chunk.
            merged["codecs"] = list(codecs[0].codecs)
    merged.update(kwargs)
    return merged
