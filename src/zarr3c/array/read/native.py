"""Reads executed natively: a plan's chunks read, decoded and copied on the native thread pool
(:mod:`zarr3c._kernels.chunks`), the GIL released for the whole execution.

The many-boxes path (:mod:`.many`: whole reads, large boxes, ``get_many``) plans its pieces
per chunk as before (:class:`~.plan.Pieces`), and coordinate reads (``vindex``, masks)
group their points by chunk (by inner chunk for sharded arrays,
:class:`~zarr3c.indexing.PointGroups`); where the chain is native
(:func:`zarr3c.codecs.native.native_chain`) the plan is handed over whole:

- the chunks' sources: their files, where the store has them
  (``Store.chunk_files``: :class:`~zarr3c.stores.LocalStore`), else their values: looked
  up in bulk where the store holds them (``Store.chunk_values``:
  :class:`~zarr3c.stores.MemoryStore`), or fetched with its ``get_many`` in batches of
  :data:`FETCH_BATCH_BYTES` decoded bytes (so the read holds at most about that much
  beyond its output);
- for sharded arrays with the usual index chain (``bytes`` [+ ``crc32c``]), the shards'
  files (or, in a store holding them in memory, ``Store.chunk_values``, their values) and
  per inner chunk its shard and its entry in the index,
  :data:`~zarr3c._kernels.chunks.MAX_SHARDS` shards per call; in other stores the Python
  path reads only the parts of shards it needs.

The number of Python calls a read makes then does not grow with its number of chunks
(``tests/array/read/test_native.py`` counts them).  Reads of a few chunks take the short
paths (:mod:`.boxes`, :mod:`.shard_boxes`) before they get here; the other selections
(``oindex``, steps) take the general path, in Python.

A chunk the kernel could not read (damaged, of the wrong size, an I/O error) is handed back
and read again by the Python path, which reports what is wrong with the key at fault: the
native path never raises for stored bytes, and both paths give the same results (tested
chunk for chunk).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c.array.read.chunk import stored_limit
from zarr3c.array.read.plan import Pieces, new_plan, one_c_piece
from zarr3c.concurrency import get_num_threads
from zarr3c.indexing import CoordinateSelection, PointGroups, group_points
from zarr3c.stores.read_into import ReadIntoHooks

try:  # (POSIX builds)
    from zarr3c._kernels import chunks as _chunks
except ImportError:  # pragma: no cover - other systems
    _chunks = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from zarr3c.array.core import Array
    from zarr3c.codecs.native import NativeChain

__all__ = ["FETCH_BATCH_BYTES", "INDEX_BATCH_BYTES", "ShardGroup", "chunk_names",
           "chunks_native", "enabled", "read_chunks_natively", "read_points_natively",
           "read_shard_points_natively", "read_shards_natively", "shards_native"]

#: Decoded bytes of the chunks whose values one ``get_many`` fetches for the native
#: pipeline, where the store has no files.
FETCH_BATCH_BYTES = 64 << 20
#: Most bytes of shard indexes one shard kernel call holds: it takes room for every shard's
#: index before it knows which shards are stored, so the shards per call are bounded by it,
#: and a shard whose index alone is larger is read by the Python path (which asks the
#: shard's size first) and written by it (:mod:`zarr3c.array.write.native`).
INDEX_BATCH_BYTES = 64 << 20

#: Whether reads and writes (:mod:`zarr3c.array.write.native`) use the native pipeline
#: where they can (``ZARR3C_NATIVE=0`` in the environment at import turns it off: every
#: read and write takes the Python path).  Tests switch it to compare the two paths.
enabled: bool = os.environ.get("ZARR3C_NATIVE", "1") != "0"


def chunks_native(array: Array) -> NativeChain | None:
    """The chain's :class:`~zarr3c.codecs.native.NativeChain` where an unsharded array's
    boxes are read natively, else None."""
    return array._pipeline.native if enabled else None


def chunk_names(array: Array, coords: np.ndarray) -> list[str]:
    """The chunk keys (without the array's prefix) of the chunks at ``coords`` (one row per
    chunk), built in bulk."""
    encoding = array._metadata.chunk_key_encoding
    many = getattr(encoding, "encode_chunk_keys", None)
    if many is not None:
        names: list[str] = many(coords)
        return names
    return [encoding.encode_chunk_key(tuple(row)) for row in coords.tolist()]


def _common(array: Array, pieces: Pieces, src_strides: np.ndarray, chain: NativeChain,
            nbytes: int) -> dict[str, Any]:
    """The kernel arguments every call of one read shares: the pieces, the chain."""
    return {"src_offsets": pieces.src_offsets, "src_strides": src_strides, "dst": pieces.dst,
            "dst_offsets": pieces.dst_offsets, "dst_strides": pieces.dst_strides,
            "counts": pieces.counts, "itemsize": array._itemsize, "fill": array._fill_bytes,
            "compressor": chain.compressor, "checksums": chain.checksums, "swap": chain.swap,
            "nbytes": nbytes, "nthreads": get_num_threads()}


def read_chunks_natively(array: Array, pieces: Pieces, chain: NativeChain) -> list[int]:
    """Read the chunks of ``pieces`` of an unsharded array natively: their pieces copied (or
    filled); returns the numbers of those left to the Python path."""
    grid = array._box_grid
    assert grid is not None and _chunks is not None
    bounds = np.asarray(pieces.bounds, dtype=np.int64)
    direct = np.array(one_c_piece(pieces, range(pieces.nchunks), grid.chunk_i64,
                                  grid.chunk_strides), dtype=np.uint8)
    status = np.empty(pieces.nchunks, dtype=np.int8)
    nbytes = grid.chunk_nbytes
    common = _common(array, pieces, grid.chunk_strides, chain, nbytes)
    for sources, paths, lo, hi in _sources(array, chunk_names(array, pieces.chunk_coords),
                                           nbytes):
        _chunks.read_chunks(sources, paths, bounds[lo:hi], bounds[lo + 1:hi + 1],
                            direct=direct[lo:hi], status=status[lo:hi], **common)
    failed: list[int] = np.flatnonzero(status < 0).tolist()
    return failed


def _element_offsets(groups: PointGroups, itemsize: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """Grouped points as the kernel takes them: each group's rows (``bounds``), and per
    point its byte in its decoded (inner) chunk and in the output."""
    return (groups.bounds.astype(np.int64), groups.offsets.astype(np.int64, copy=False),
            groups.order.astype(np.int64) * itemsize)


def read_points_natively(array: Array, groups: PointGroups, dst: np.ndarray,
                         chain: NativeChain) -> list[int]:
    """Read the points of ``groups`` (a coordinate selection grouped by chunk of an
    unsharded array) natively into ``dst`` (bytes, ``groups.order`` giving each point's
    element); returns the numbers of the chunks left to the Python path."""
    assert _chunks is not None
    itemsize = array._itemsize
    coords = np.array(groups.coords, dtype=np.int64).reshape(len(groups), len(groups.sizes))
    nbytes = math.prod(groups.sizes) * itemsize  # (every chunk's: edge chunks are full)
    bounds, src_offsets, dst_offsets = _element_offsets(groups, itemsize)
    status = np.empty(len(groups), dtype=np.int8)
    for sources, paths, lo, hi in _sources(array, chunk_names(array, coords), nbytes):
        _chunks.read_elements(sources, paths, bounds[lo:hi], bounds[lo + 1:hi + 1],
                              src_offsets, dst_offsets, dst, itemsize, array._fill_bytes,
                              chain.compressor, chain.checksums, chain.swap, nbytes,
                              get_num_threads(), status[lo:hi])
    failed: list[int] = np.flatnonzero(status < 0).tolist()
    return failed


def _sources(array: Array, names: list[str], nbytes: int
             ) -> Iterator[tuple[list[Any], bool, int, int]]:
    """The chunks' sources in batches ``(sources, paths, lo, hi)`` for chunks ``lo:hi`` of
    ``names``: their files, or their values (in one batch where the store holds them, else
    fetched with ``get_many``, :data:`FETCH_BATCH_BYTES` of decoded chunks at a time)."""
    store, prefix = array._store, array._prefix
    files = store.chunk_files(prefix, names)
    if files is not None:
        yield files, True, 0, len(names)
        return
    values = store.chunk_values(prefix, names)
    if values is not None:
        yield values, False, 0, len(names)
        return
    step = max(1, FETCH_BATCH_BYTES // nbytes)
    # (a value larger than any encoding is never fetched whole; edge chunks are full-size)
    limit = stored_limit(array, array._chunk_shape_at((0,) * array.ndim))
    for lo in range(0, len(names), step):
        hi = min(lo + step, len(names))
        keys = [prefix + name for name in names[lo:hi]]
        values = store.get_many(keys) if limit is None else store.get_many_at_most(keys, limit)
        yield list(values), False, lo, hi


def shards_native(array: Array) -> NativeChain | None:
    """The inner chain's :class:`~zarr3c.codecs.native.NativeChain` where a sharded array's
    boxes can be read natively (the usual index chain; a store with files, or holding its
    values in memory), else None."""
    ib, sharding = array._inner_box, array._sharding
    if (not enabled or ib is None or sharding is None or ib.plain is None
            or ib.plain[0] > INDEX_BATCH_BYTES):
        return None
    chain = sharding.inner_native_chain()
    if chain is None:
        return None
    store = type(array._store)
    if (store.chunk_files is ReadIntoHooks.chunk_files
            and store.chunk_values is ReadIntoHooks.chunk_values):
        return None  # (it would fetch whole shards: the Python path reads what it needs)
    return chain


class ShardGroup(NamedTuple):
    """The inner chunks of one kernel call over shards (at most ``chunks.MAX_SHARDS`` of
    them): the shards' sources and, per inner chunk of the call, its number in the read, its
    shard in the call and its entry in that shard's index."""

    sources: list[Any]  # the shards' files or values
    paths: bool  # whether they are files
    inner: np.ndarray  # the read's numbers of the call's inner chunks
    shard: np.ndarray  # per inner chunk, its shard's number in sources
    slot: np.ndarray  # per inner chunk, its entry in its shard's index
    shards: np.ndarray  # the read's numbers of the call's shards


def _shard_groups(array: Array, inner: np.ndarray
                  ) -> tuple[np.ndarray, list[ShardGroup]] | None:
    """The calls reading the inner chunks at ``inner`` (rows of coordinates over the array's
    inner grid), with the coordinates of all their shards; None where the store has neither
    files nor values in memory."""
    ib = array._inner_box
    assert ib is not None and ib.plain is not None and _chunks is not None
    per_shard = np.asarray(ib.per_shard, dtype=np.int64)
    slots = (inner % per_shard) @ np.asarray(ib.shard_steps, dtype=np.int64)
    shards, of = np.unique(inner // per_shard, axis=0, return_inverse=True)
    of = of.reshape(-1)
    names = chunk_names(array, shards)
    store, prefix = array._store, array._prefix
    files = store.chunk_files(prefix, names)
    values = None if files is not None else store.chunk_values(prefix, names)
    sources: list[Any] | None = files if files is not None else values
    if sources is None:
        return None
    groups = []
    step = max(1, min(_chunks.MAX_SHARDS, INDEX_BATCH_BYTES // ib.plain[0]))
    for lo in range(0, len(names), step):
        hi = min(lo + step, len(names))
        ks = (np.flatnonzero((of >= lo) & (of < hi)) if lo or hi < len(names)
              else np.arange(len(inner)))
        groups.append(new_plan(ShardGroup, (sources[lo:hi], files is not None, ks,
                                            of[ks] - lo, slots[ks], np.arange(lo, hi))))
    return shards, groups


def _failed_shards(shards: np.ndarray, group: ShardGroup, status: np.ndarray,
                   shard_status: np.ndarray) -> list[tuple[int, ...]]:
    """The coordinates of the shards of ``group`` with an inner chunk or index that failed."""
    bad = np.union1d(group.shards[group.shard[status < 0]],
                     group.shards[shard_status < 0])
    return [tuple(row) for row in shards[bad].tolist()]


def read_shards_natively(array: Array, pieces: Pieces, chain: NativeChain
                         ) -> list[tuple[int, ...]]:
    """Read the inner chunks of ``pieces`` (numbered over the array's whole inner grid) of a
    sharded array natively; returns the coordinates of the shards left to the Python path."""
    ib = array._inner_box
    assert ib is not None and ib.plain is not None and _chunks is not None
    index_nbytes, at_end = ib.plain
    planned = _shard_groups(array, pieces.chunk_coords)
    if planned is None:
        return [tuple(row) for row in (pieces.chunk_coords // np.asarray(
            ib.per_shard, dtype=np.int64)).tolist()]
    shards, groups = planned
    bounds = np.asarray(pieces.bounds, dtype=np.int64)
    direct = np.array(one_c_piece(pieces, range(pieces.nchunks), ib.shape_i64,
                                  ib.strides_i64), dtype=np.uint8)
    common = _common(array, pieces, ib.strides_i64, chain, ib.nbytes)
    failed: list[tuple[int, ...]] = []
    for group in groups:
        ks = group.inner
        status = np.empty(len(ks), dtype=np.int8)
        shard_status = np.empty(len(group.sources), dtype=np.int8)
        _chunks.read_shards(group.sources, group.paths, index_nbytes, at_end,
                            index_nbytes % 16 == 4, group.shard, group.slot, bounds[ks],
                            bounds[ks + 1], direct=direct[ks], status=status,
                            shard_status=shard_status, **common)
        failed += _failed_shards(shards, group, status, shard_status)
    return failed


class _InnerDimension(NamedTuple):
    """A dimension of the grid of inner chunks over a whole sharded array (what
    ``group_points`` reads of a dimension)."""

    size: int  # the inner chunk's length
    nchunks: int  # inner chunks along the array


def read_shard_points_natively(array: Array, sel: CoordinateSelection, dst: np.ndarray,
                               chain: NativeChain) -> list[tuple[int, ...]] | None:
    """Read the points of ``sel`` of a sharded array natively into ``dst`` (bytes, in the
    selection's order), grouped by inner chunk; returns the coordinates of the shards left
    to the Python path, or None (nothing read) where the points cannot be grouped so."""
    ib = array._inner_box
    assert ib is not None and ib.plain is not None and _chunks is not None
    index_nbytes, at_end = ib.plain
    itemsize = array._itemsize
    dims = [_InnerDimension(n, -(-extent // n))
            for n, extent in zip(ib.shape, array.shape, strict=True)]
    grouped = group_points(sel, dims, itemsize, scratch=True)
    if grouped is None:
        return None
    inner = np.array(grouped.coords, dtype=np.int64).reshape(len(grouped), len(dims))
    planned = _shard_groups(array, inner)
    if planned is None:
        return None
    shards, groups = planned
    bounds, src_offsets, dst_offsets = _element_offsets(grouped, itemsize)
    failed: list[tuple[int, ...]] = []
    for group in groups:
        ks = group.inner
        status = np.empty(len(ks), dtype=np.int8)
        shard_status = np.empty(len(group.sources), dtype=np.int8)
        _chunks.read_shard_elements(
            group.sources, group.paths, index_nbytes, at_end, index_nbytes % 16 == 4,
            group.shard, group.slot, bounds[ks], bounds[ks + 1], src_offsets, dst_offsets,
            dst, itemsize, array._fill_bytes, chain.compressor, chain.checksums, chain.swap,
            ib.nbytes, get_num_threads(), status, shard_status)
        failed += _failed_shards(shards, group, status, shard_status)
    return failed
