"""Chunk geometry of an array: where a chunk starts and how large it is (from the chunk
grid's per-axis dimensions), which chunks are stored, and the per-array facts the short
read paths need of a regular grid (:class:`~zarr3c.array.read.plan.BoxGrid`,
:class:`~zarr3c.array.read.plan.InnerBox`), computed once per shape.

The functions taking the array first are also :class:`~zarr3c.array.Array`'s private
methods (``_chunk_origin``, ``_chunk_shape_at``, ``_stored_chunks``): assigned in the class,
so a call costs no extra layer."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from zarr3c._buffers import INT64_MAX
from zarr3c.array.read.plan import BoxGrid, InnerBox, box_grid_of, inner_box_of
from zarr3c.metadata import ArrayMetadata

if TYPE_CHECKING:
    from zarr3c.array.core import Array
    from zarr3c.codecs.sharding import ShardingCodec

__all__ = ["chunk_origin", "chunk_shape_at", "grid_shape", "int64_grid", "regular_grid_facts",
           "stored_chunks"]


def grid_shape(array: Array) -> tuple[int, ...]:
    """The number of chunks of the array's chunk grid per dimension: the stored objects'
    grid (shards, for a sharded array; :attr:`Array.cdata_shape` counts inner chunks)."""
    return tuple(d.nchunks for d in array._dims)


def chunk_origin(array: Array, coords: Sequence[int]) -> tuple[int, ...]:
    """The index of the first element of the chunk at grid ``coords``."""
    return tuple(d.chunk_offset(c) for d, c in zip(array._dims, coords, strict=True))


def chunk_shape_at(array: Array, coords: Sequence[int]) -> tuple[int, ...]:
    """The full shape of the chunk at ``coords`` (edge chunks too are full-size)."""
    return tuple(d.chunk_length(c) for d, c in zip(array._dims, coords, strict=True))


def stored_chunks(array: Array) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Keys and grid coordinates of the chunks stored for ``array``, inside its grid (keys
    that do not decode as chunk keys of its grid, and stray chunks outside it, are
    skipped)."""
    decode = array._metadata.chunk_key_encoding.decode_chunk_key
    grid = grid_shape(array)
    prefix = array._prefix
    keys = array._store.list_prefix(prefix) if prefix else array._store.list()
    for key in keys:
        rel = key[len(prefix):]
        if rel == "zarr.json":
            continue
        coords = decode(rel, ndim=len(grid))
        if coords is None or len(coords) != len(grid):
            continue
        if all(0 <= c < n for c, n in zip(coords, grid, strict=True)):
            yield key, coords


def regular_grid_facts(metadata: ArrayMetadata, sharding: ShardingCodec | None,
                       itemsize: int) -> tuple[BoxGrid | None, InnerBox | None]:
    """What the short paths need of the array's grid, when it is regular (else two Nones):
    its :class:`BoxGrid` and, for shards whose inner chunks can be read by byte range, its
    :class:`InnerBox`.  Two Nones also where those facts do not fit the kernels' int64
    (:func:`int64_grid`): the general path, in Python integers, reads such an array."""
    regular = getattr(metadata.chunk_grid, "chunk_shape", None)
    if regular is None or not int64_grid(metadata.shape, regular, itemsize, sharding):
        return None, None
    grid = box_grid_of(metadata.shape, regular, itemsize)
    inner = None if sharding is None else inner_box_of(sharding, tuple(regular), itemsize)
    return grid, inner


def int64_grid(shape: Sequence[int], chunk_shape: Sequence[int], itemsize: int,
               sharding: ShardingCodec | None) -> bool:
    """Whether the short paths' and the native pipeline's int64 arithmetic holds on the
    regular grid of ``chunk_shape`` over ``shape``: every chunk's end along each axis (the
    last may overhang the array) and the number of chunks fit int64 (a chunk's bytes do:
    the metadata refuses more); for shards, also a shard's index and the number of inner
    chunks of the array.  The grid itself may be larger (the Zarr spec sets no limit): an
    array of ``(2**32,) * 3`` chunks of one element reads by the general path, in Python
    integers."""
    nchunks = [-(-n // c) for n, c in zip(shape, chunk_shape, strict=True)]
    if (math.prod(nchunks) > INT64_MAX or math.prod(chunk_shape) * itemsize > INT64_MAX
            or any(n * c > INT64_MAX for n, c in zip(nchunks, chunk_shape, strict=True))):
        return False
    if sharding is None:
        return True
    per_shard = math.prod(c // k for c, k in zip(chunk_shape, sharding.chunk_shape,
                                                  strict=True))
    # (the index: an (offset, nbytes) pair per inner chunk, and a checksum)
    return 16 * per_shard + 4 <= INT64_MAX and math.prod(nchunks) * per_shard <= INT64_MAX
