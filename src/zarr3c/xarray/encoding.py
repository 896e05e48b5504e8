"""A Zarr array's storage layout as xarray's ``Variable.encoding`` reports it.

The keys are those xarray's own zarr engine sets, so that code reading ``encoding``
(``chunks={}``, ``to_zarr`` writing a dataset back) finds what it expects:

- ``chunks``: the chunk shape (for a sharded array the inner chunks, as zarr-python's
  ``Array.chunks``); ``preferred_chunks``: the same by dimension name, the chunks xarray
  gives dask with ``chunks={}``.  Inner chunks tile their shards, so those dask chunks are
  aligned with the shards too.  A dimension of a rectilinear grid whose chunks differ
  gives its tuple of chunk lengths.
- ``shards``: the shard shape, or None.
- ``compressors``, ``filters`` (and in Zarr v3 ``serializer``): the codecs of each
  (inner) chunk.  Zarr v2's are numcodecs codec objects, as zarr-python reports them;
  Zarr v3's are the ``{"name", "configuration"}`` documents of ``zarr.json``, which
  ``zarr3c.create_array`` and zarr-python's ``create_array`` both take, so that a
  dataset opened here can be written back by either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numcodecs

__all__ = ["compact_chunk_sizes", "storage_encoding"]


def compact_chunk_sizes(chunks: Sequence[Any]) -> tuple[Any, ...]:
    """Chunk shapes, one int per dimension where the grid is regular.

    Parameters
    ----------
    chunks : sequence
        Per dimension an int, or the lengths of its chunks (a rectilinear grid, as
        ``zarr3c.Array.chunks`` gives them).

    Returns
    -------
    tuple
        Per dimension an int where every chunk but a shorter last one has that length,
        else the tuple of lengths (``(0,)`` for a dimension of length 0).

    Raises
    ------
    None
        Only sizes are compared.

    Examples
    --------
    >>> compact_chunk_sizes((4, (3, 3, 2), (1, 2)))
    (4, 3, (1, 2))
    """
    out: list[Any] = []
    for dim in chunks:
        if isinstance(dim, int):
            out.append(dim)
            continue
        sizes = tuple(int(s) for s in dim)
        if not sizes:
            out.append((0,))
        elif all(s == sizes[0] for s in sizes[:-1]) and sizes[-1] <= sizes[0]:
            out.append(sizes[0])
        else:
            out.append(sizes)
    return tuple(out)


def _numcodecs(config: dict[str, Any]) -> Any:
    """A numcodecs codec from its configuration; the configuration itself where numcodecs
    knows no such codec (it is still what ``to_zarr`` takes)."""
    try:
        return numcodecs.get_codec(dict(config))
    except (ValueError, TypeError, KeyError):
        return dict(config)


def _v2_codecs(metadata: Any) -> dict[str, Any]:
    compressor = metadata.compressor
    compressors: tuple[Any, ...] = ()
    if compressor is not None:
        compressors = (_numcodecs({"id": compressor["id"], **compressor["configuration"]}),)
    filters = tuple(_numcodecs(f) for f in metadata.filters or ())
    return {"compressors": compressors, "filters": filters}


def _v3_codecs(codecs: Sequence[Any]) -> dict[str, Any]:
    chain = list(codecs)
    for codec in chain:
        inner = getattr(codec, "codecs", None)
        if codec.kind == "array->bytes" and inner is not None:
            # sharding: what encodes each inner chunk, as zarr-python reports it
            chain = list(inner)
            break
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for codec in chain:
        by_kind.setdefault(codec.kind, []).append(codec.to_dict())
    serializers = by_kind.get("array->bytes", [])
    return {
        "compressors": tuple(by_kind.get("bytes->bytes", [])),
        "filters": tuple(by_kind.get("array->array", [])),
        "serializer": serializers[0] if serializers else None,
    }


def storage_encoding(array: Any, dims: Sequence[str]) -> dict[str, Any]:
    """The ``encoding`` entries of the variable stored in ``array`` with dimensions
    ``dims``: chunks, preferred chunks, shards and codecs (see the module docstring).

    Parameters
    ----------
    array : zarr3c.Array
        The array.
    dims : sequence of str
        The variable's dimension names, one per axis.

    Returns
    -------
    dict
        ``chunks``, ``preferred_chunks``, ``shards``, ``compressors``, ``filters`` and,
        for Zarr v3, ``serializer``.

    Raises
    ------
    None
        Everything is read from metadata already validated.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(8, 6), dtype="float32",
    ...                         chunks=(2, 3), shards=(4, 6))
    >>> enc = storage_encoding(a, ("time", "x"))
    >>> enc["chunks"], enc["preferred_chunks"], enc["shards"]
    ((2, 3), {'time': 2, 'x': 3}, (4, 6))
    >>> enc["serializer"], enc["compressors"]
    ({'name': 'bytes', 'configuration': {'endian': 'little'}}, \
({'name': 'zstd', 'configuration': {'level': 0, 'checksum': False}},))
    """
    chunks = compact_chunk_sizes(array.chunks)
    shards = array.shards
    encoding: dict[str, Any] = {
        "chunks": chunks,
        "preferred_chunks": dict(zip(dims, chunks, strict=True)),
        "shards": None if shards is None else compact_chunk_sizes(shards),
    }
    if array.zarr_format == 2:
        encoding.update(_v2_codecs(array.metadata))
    else:
        codecs = _v3_codecs(array.codecs)
        if array.zarr_format != 3:
            # the draft layouts: xarray's engine names a serializer for Zarr v3 alone
            del codecs["serializer"]
        encoding.update(codecs)
    return encoding
