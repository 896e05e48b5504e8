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
  :data:`~zarr3c._kernels.chunks.MAX_SHARDS` shards per call.  In other stores (object
  stores, fsspec, zip) a shard is fetched whole where that takes fewer round trips than its
  index and then its ranges (:func:`fetched_whole`): a read needing at least
  :data:`WHOLE_SHARD_FRACTION` of its inner chunks, or, where every read is a request
  (``Store.reads_by_request``: object stores, fsspec; not a zip file), any read of a shard
  of at most :data:`SMALL_SHARD_BYTES` (issue 33's small-shard rule).  Those shards are fetched
  together with the store's ``get_many_at_most`` (as many requests in flight as the store
  allows, not as there are threads; a value larger than any valid shard refused from its
  size), :data:`FETCH_BATCH_BYTES` of decoded shards per batch, and their values handed to
  the kernel as a MemoryStore's are; the Python path reads only the parts it needs of the
  other shards (index, then coalesced ranges).  The sharded short paths
  (:mod:`.shard_boxes`) leave boxes of shards fetched whole to this path
  (:func:`box_fetches_shards_whole`).

  The thresholds were measured through ``zarr3c.testing.s3_proxy`` at 20 ms per request
  (moto on loopback): one inner chunk of 64 KiB read from a shard of 256 KiB, 1, 4 or 16
  MiB took 0.53, 0.53, 0.63 and 0.89x as long fetched whole as by index and range; a
  fraction of each of 4 shards of 4 MiB (1/8 to all) 0.36-0.48x.  Loopback moves about 500
  MB/s per request, a cloud store 50-100: the bytes fetched and not needed then cost about
  a round trip per 1-2 MB, hence whole below 1 MiB whatever is read, and above it only
  when at least half is needed (and never a shard larger than a fetch batch).

Orthogonal selections (``oindex``, stepped and reversed slices: the general read's) take the
kernel's outer-product form (:func:`read_outer_natively`): per axis the indices grouped by
(inner) chunk, every combination one piece (:func:`~.plan.plan_outer_grid`, in a few numpy
calls), each chunk decoded once and its product of offsets copied out
(``scatter.copy_outer``); several selections read together (``get_many``) are planned
into parts of one output buffer and their pieces grouped by chunk (:func:`~.plan.outer_chunks`),
so each chunk is read once for them all.  A plan that would outweigh a quarter of the output
(a long step over small chunks) stays on the general path, which keeps steps as steps, and
so does a selection inside one (inner) chunk (:data:`OUTER_MIN_CHUNKS`).

The number of Python calls a read makes then does not grow with its number of chunks
(``tests/array/read/test_native.py`` counts them).  Reads of a few chunks take the short
paths (:mod:`.boxes`, :mod:`.shard_boxes`) before they get here.

A chunk the kernel could not read (damaged, of the wrong size, an I/O error) is handed back
and read again by the Python path, which reports what is wrong with the key at fault: the
native path never raises for stored bytes, and both paths give the same results (tested
chunk for chunk).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c.array.read.chunk import FETCH_BATCH_BYTES, fetched_batches, stored_limit
from zarr3c.array.read.plan import (
    InnerParts,
    OuterChunks,
    Pieces,
    new_plan,
    one_c_piece,
    outer_chunks,
    outer_chunks_at_most,
    plan_outer_grid,
)
from zarr3c.concurrency import get_num_threads
from zarr3c.indexing import (
    CoordinateSelection,
    OrthogonalSelection,
    PointGroups,
    c_strides,
    group_points,
)
from zarr3c.stores.read_into import ReadIntoHooks

try:  # (POSIX builds)
    from zarr3c._kernels import chunks as _chunks
except ImportError:  # pragma: no cover - other systems
    _chunks = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from zarr3c.array.core import Array
    from zarr3c.codecs.native import NativeChain

__all__ = ["FETCH_BATCH_BYTES", "INDEX_BATCH_BYTES", "OUTER_MIN_CHUNKS", "SMALL_SHARD_BYTES",
           "WHOLE_SHARD_FRACTION", "ShardGroup", "box_fetches_shards_whole", "chunk_names",
           "chunks_native", "enabled", "fetched_whole", "read_box_natively", "read_chunks_natively",
           "read_outer_natively", "read_points_natively", "read_shard_box_natively",
           "read_shard_points_natively",
           "read_shards_natively", "reads_outer", "shards_native"]

#: Most bytes of shard indexes one shard kernel call holds: it takes room for every shard's
#: index before it knows which shards are stored, so the shards per call are bounded by it,
#: and a shard whose index alone is larger is read by the Python path (which asks the
#: shard's size first) and written by it (:mod:`zarr3c.array.write.native`).
INDEX_BATCH_BYTES = 64 << 20
#: From a store without files or values in memory, a shard of which a read needs at least
#: this fraction of its inner chunks is fetched whole, in one request sent with the read's
#: other such shards (``get_many``), rather than its index and then its ranges, one shard
#: after another: about one round trip for the lot instead of two per shard.
WHOLE_SHARD_FRACTION = 0.5
#: ... and, from a store whose every read is a request (``Store.reads_by_request``: object
#: stores, fsspec), a shard of at most this many decoded bytes is fetched whole for any read
#: of it (issue 33's small-shard rule: one request, not index plus ranges).
SMALL_SHARD_BYTES = 1 << 20

#: An orthogonal selection inside one (inner) chunk is read by the general path: with one
#: chunk there is no hand-off between chunks to save, and that path's plan costs less (a
#: stepped box in one 64^3 chunk: 72 against 167 us on 2 cores; asv
#: ``bench_array_io.SmallOuterReads`` tracks it).
OUTER_MIN_CHUNKS = 2
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


def _common(array: Array, pieces: Pieces, shape: Sequence[int], src_strides: np.ndarray,
            chain: NativeChain, nbytes: int) -> dict[str, Any]:
    """The kernel arguments every call of one read shares: the pieces, the chain (for
    chunks of ``shape``)."""
    return {"src_offsets": pieces.src_offsets, "src_strides": src_strides, "dst": pieces.dst,
            "dst_offsets": pieces.dst_offsets, "dst_strides": pieces.dst_strides,
            "counts": pieces.counts, "itemsize": array._itemsize, "fill": array._fill_bytes,
            "compressor": chain.compressor, "checksums": chain.checksums, "swap": chain.swap,
            "nbytes": nbytes, "nthreads": get_num_threads(),
            "transpose": chain.transpose(shape)}


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
    common = _common(array, pieces, grid.chunk_shape, grid.chunk_strides, chain, nbytes)
    for sources, paths, lo, hi in _sources(array, chunk_names(array, pieces.chunk_coords)):
        _chunks.read_chunks(sources, paths, bounds[lo:hi], bounds[lo + 1:hi + 1],
                            direct=direct[lo:hi], status=status[lo:hi], **common)
    failed: list[int] = np.flatnonzero(status < 0).tolist()
    return failed


def _held_sources(array: Array, names: list[str]) -> tuple[list[Any], bool] | None:
    """The chunks (shards) ``names`` as the kernels' sources and whether they are paths:
    their files, or their values where the store holds them in memory; None for other
    stores (whose values are fetched)."""
    store, prefix = array._store, array._prefix
    files = store.chunk_files(prefix, names)
    if files is not None:
        return files, True
    values = store.chunk_values(prefix, names)
    return None if values is None else (values, False)


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a``, read-only (the kernels take these constants as ``const``)."""
    a.flags.writeable = False
    return a


#: One piece of one chunk, as :func:`read_box_natively` hands it to the kernel: its rows
#: ``[0, 1)`` (``_FIRST`` is also its place in the output), not read straight into it
_FIRST = _frozen(np.zeros(1, dtype=np.int64))
_END = _frozen(np.ones(1, dtype=np.int64))
_NOT_DIRECT = _frozen(np.zeros(1, dtype=np.uint8))
#: One (inner) chunk decoded straight into the output
_DIRECT = _frozen(np.ones(1, dtype=np.uint8))


def read_box_natively(array: Array, coords: tuple[int, ...], offset: int, counts: list[int],
                      dst: np.ndarray) -> bool:
    """The short path's box in part of one chunk of an unsharded array (``counts`` elements
    from byte ``offset`` of the chunk at ``coords`` into ``dst``, C order) read, decoded
    and copied by one kernel call on this thread, the GIL given up once for all of it:
    reads from many user threads at once then queue once a read for the GIL, not once a
    step.  True when done (the box filled where the chunk is not stored); False where the
    chain or the store is not the kernel's, or the kernel could not read the chunk: the
    Python path reads it then, and reports what is wrong."""
    chain, grid = chunks_native(array), array._box_grid
    if chain is None or _chunks is None or grid is None:
        return False
    found = _held_sources(array, [array._encode_key(coords)])
    if found is None:
        return False
    sources, paths = found
    status = np.empty(1, dtype=np.int8)
    rows = np.array([counts, c_strides(counts, array._itemsize)], dtype=np.int64)
    # (positional: the hottest read, and keywords cost a Cython call more to parse)
    _chunks.read_chunks(sources, paths, _FIRST, _END, np.array([offset], dtype=np.int64),
                        grid.chunk_strides, dst, _FIRST, rows[1:], rows[:1],
                        array._itemsize, array._fill_bytes, _NOT_DIRECT, chain.compressor,
                        chain.checksums, chain.swap, grid.chunk_nbytes, 1, status,
                        chain.transpose(grid.chunk_shape))
    return bool(status[0] >= 0)


def read_shard_box_natively(array: Array, shard: tuple[int, ...], parts: InnerParts,
                            dst: np.ndarray, whole: bool) -> bool:
    """The sharded short path's box in one shard (its ``parts`` per inner chunk into
    ``dst``; ``whole``: one whole inner chunk, decoded straight into ``dst``) read by one
    kernel call: the shard's index, then each part's inner chunk read, decoded and copied,
    the GIL given up once for all of it (as :func:`read_box_natively`).  True when done (the
    parts filled where the shard or an inner chunk is not stored); False where the chains
    or the store are not the kernel's, or it could not read the shard: the Python path
    reads it then, and reports what is wrong.  Raw inner chunks stay on the short path,
    whose store call reads the index and the spans at once (its copy is one more call): the
    kernel's arguments cost more than the hand-off they save (one_call_reads.py)."""
    chain = shards_native(array)
    ib = array._inner_box
    if chain is None or _chunks is None or ib is None or ib.plain is None or ib.raw:
        return False
    found = _held_sources(array, [array._encode_key(shard)])
    if found is None:
        return False
    sources, paths = found
    index_nbytes, at_end = ib.plain
    n = parts.n
    status = np.empty(n + 1, dtype=np.int8)  # (the inner chunks', then the shard's)
    if n == 1:  # (the usual small read: one inner chunk)
        shards, firsts, ends, direct = _FIRST, _FIRST, _END, _DIRECT if whole else _NOT_DIRECT
    else:
        rows = np.arange(n + 1, dtype=np.int64)
        shards, firsts, ends = np.zeros(n, dtype=np.int64), rows[:n], rows[1:]
        direct = np.zeros(n, dtype=np.uint8)
    # (positional, as read_box_natively's)
    _chunks.read_shards(sources, paths, index_nbytes, at_end, index_nbytes % 16 == 4, shards,
                        parts.slots, firsts, ends, parts.src_lo, ib.strides_i64, dst,
                        parts.dst_offsets, parts.dst_strides, parts.counts, array._itemsize,
                        array._fill_bytes, direct, chain.compressor, chain.checksums,
                        chain.swap, ib.nbytes, get_num_threads(), status[:n], status[n:],
                        chain.transpose(ib.shape))
    return bool((status >= 0).all())


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
    for sources, paths, lo, hi in _sources(array, chunk_names(array, coords)):
        _chunks.read_elements(sources, paths, bounds[lo:hi], bounds[lo + 1:hi + 1],
                              src_offsets, dst_offsets, dst, itemsize, array._fill_bytes,
                              chain.compressor, chain.checksums, chain.swap, nbytes,
                              get_num_threads(), status[lo:hi], chain.transpose(groups.sizes))
    failed: list[int] = np.flatnonzero(status < 0).tolist()
    return failed


def _sources(array: Array, names: list[str]) -> Iterator[tuple[list[Any], bool, int, int]]:
    """The chunks' sources in batches ``(sources, paths, lo, hi)`` for chunks ``lo:hi`` of
    ``names``: their files, or their values (in one batch where the store holds them, else
    fetched with ``get_many``, :data:`FETCH_BATCH_BYTES` of decoded chunks at a time)."""
    held = _held_sources(array, names)
    if held is not None:
        yield held[0], held[1], 0, len(names)
        return
    # (edge chunks are no larger than the first, full-size one)
    full = array._chunk_shape_at((0,) * array.ndim)
    keys = [array._prefix + name for name in names]
    for lo, hi, values in fetched_batches(array, keys, [full]):
        yield values, False, lo, hi


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
    return chain


def _remote(array: Array) -> bool:
    """Whether the array's store has neither files nor values in memory (an object store,
    fsspec, any other): its shards are fetched with ``get_many``."""
    store = type(array._store)
    return (store.chunk_files is ReadIntoHooks.chunk_files
            and store.chunk_values is ReadIntoHooks.chunk_values)


def _shard_nbytes(array: Array) -> int:
    """The decoded bytes of a whole shard of the array."""
    ib = array._inner_box
    assert ib is not None
    return ib.nbytes * math.prod(ib.per_shard)


def fetched_whole(array: Array, shards: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """Per shard at ``shards`` (rows of shard coordinates) of which a read needs ``needed``
    inner chunks, whether it is fetched whole from a store without files or values (see
    :data:`WHOLE_SHARD_FRACTION`, :data:`SMALL_SHARD_BYTES`); none larger than
    :data:`FETCH_BATCH_BYTES` decoded."""
    ib = array._inner_box
    assert ib is not None
    nbytes = _shard_nbytes(array)
    if nbytes > FETCH_BATCH_BYTES:
        return np.zeros(len(shards), dtype=bool)
    if nbytes <= SMALL_SHARD_BYTES and array._store.reads_by_request:
        return np.ones(len(shards), dtype=bool)
    per_shard = np.asarray(ib.per_shard, dtype=np.int64)
    grid = -(-np.asarray(array.shape, dtype=np.int64) // np.asarray(ib.shape, dtype=np.int64))
    # (an edge shard holds only the inner chunks inside the array)
    present = np.minimum(per_shard, grid - shards * per_shard).prod(axis=1)
    result: np.ndarray = needed >= WHOLE_SHARD_FRACTION * present
    return result


def box_fetches_shards_whole(array: Array, start: Any, stop: Any) -> bool:
    """Whether the many-boxes path would fetch a shard of box ``[start, stop)`` whole from a
    store whose every read is a request (``Store.reads_by_request``), with a native chain:
    the sharded short paths, which read each shard's index and then its ranges, leave such
    a box to it.  (Other stores keep their small boxes on the short paths: without a round
    trip per read, reading less is faster.)"""
    ib = array._inner_box
    if (ib is None or not array._store.reads_by_request or not _remote(array)
            or shards_native(array) is None):
        return False
    if _shard_nbytes(array) <= SMALL_SHARD_BYTES:
        return True
    lo = np.asarray(start, dtype=np.int64) // np.asarray(ib.shape, dtype=np.int64)
    hi = (np.asarray(stop, dtype=np.int64) - 1) // np.asarray(ib.shape, dtype=np.int64)
    per_shard = np.asarray(ib.per_shard, dtype=np.int64)
    # the inner chunks the box needs in each shard it touches, axis by axis
    axes = []
    for a, b, n in zip(lo.tolist(), hi.tolist(), per_shard.tolist(), strict=True):
        firsts = np.arange(a // n, b // n + 1, dtype=np.int64) * n
        axes.append((np.minimum(firsts + n - 1, b) - np.maximum(firsts, a) + 1,
                     firsts // n))
    needed = np.ones(1, dtype=np.int64)
    coords = np.zeros((1, 0), dtype=np.int64)
    for counts, index in axes:
        needed = np.multiply.outer(needed, counts).reshape(-1)
        coords = np.concatenate([np.repeat(coords, len(index), axis=0),
                                 np.tile(index, len(coords))[:, None]], axis=1)
    return bool(fetched_whole(array, coords, needed).any())


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


class _ShardCalls(NamedTuple):
    """The kernel calls of one read of shards (their groups made as they are iterated, the
    fetched shards' values held one call at a time), the coordinates of all the read's
    shards, and those left to the Python path (not fetched whole)."""

    shards: np.ndarray
    groups: Iterator[ShardGroup]
    left: list[tuple[int, ...]]


def _shard_groups(array: Array, inner: np.ndarray) -> _ShardCalls | None:
    """The calls reading the inner chunks at ``inner`` (rows of coordinates over the array's
    inner grid): over the shards' files or values where the store has them, else over the
    shards it fetches whole (:func:`fetched_whole`); None where it fetches none."""
    ib = array._inner_box
    assert ib is not None and ib.plain is not None and _chunks is not None
    per_shard = np.asarray(ib.per_shard, dtype=np.int64)
    slots = (inner % per_shard) @ np.asarray(ib.shard_steps, dtype=np.int64)
    shards, of, needed = np.unique(inner // per_shard, axis=0, return_inverse=True,
                                   return_counts=True)
    of = of.reshape(-1)
    names = chunk_names(array, shards)
    store, prefix = array._store, array._prefix
    held = _held_sources(array, names)
    sources, paths = held if held is not None else (None, False)
    step = max(1, min(_chunks.MAX_SHARDS, INDEX_BATCH_BYTES // ib.plain[0]))
    left: list[tuple[int, ...]] = []
    take = np.arange(len(names))
    if sources is None:
        whole = fetched_whole(array, shards, needed)
        if not whole.any():
            return None
        take = np.flatnonzero(whole)
        left = [tuple(row) for row in shards[~whole].tolist()]
        step = max(1, min(step, FETCH_BATCH_BYTES // _shard_nbytes(array)))
    # each inner chunk's shard's place among those read here (-1: left)
    place = np.full(len(names), -1, dtype=np.int64)
    place[take] = np.arange(len(take))
    at = place[of]
    limit = stored_limit(array, array._chunk_shape_at((0,) * array.ndim))

    def groups() -> Iterator[ShardGroup]:
        for lo in range(0, len(take), step):
            hi = min(lo + step, len(take))
            ks = (np.flatnonzero((at >= lo) & (at < hi)) if lo or hi < len(names)
                  else np.arange(len(inner)))
            if sources is not None:
                batch = sources[lo:hi]
            else:
                # Fetched together, as many in flight as the store allows; a value larger
                # than any valid shard is refused from its size.
                keys = [prefix + names[i] for i in take[lo:hi].tolist()]
                batch = list(store.get_many(keys) if limit is None
                             else store.get_many_at_most(keys, limit))
            yield new_plan(ShardGroup, (batch, paths, ks, at[ks] - lo, slots[ks],
                                        take[lo:hi]))

    return _ShardCalls(shards, groups(), left)


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
        return [tuple(row) for row in np.unique(pieces.chunk_coords // np.asarray(
            ib.per_shard, dtype=np.int64), axis=0).tolist()]
    shards, groups, failed = planned
    bounds = np.asarray(pieces.bounds, dtype=np.int64)
    direct = np.array(one_c_piece(pieces, range(pieces.nchunks), ib.shape_i64,
                                  ib.strides_i64), dtype=np.uint8)
    common = _common(array, pieces, ib.shape, ib.strides_i64, chain, ib.nbytes)
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
    shards, groups, failed = planned
    bounds, src_offsets, dst_offsets = _element_offsets(grouped, itemsize)
    for group in groups:
        ks = group.inner
        status = np.empty(len(ks), dtype=np.int8)
        shard_status = np.empty(len(group.sources), dtype=np.int8)
        _chunks.read_shard_elements(
            group.sources, group.paths, index_nbytes, at_end, index_nbytes % 16 == 4,
            group.shard, group.slot, bounds[ks], bounds[ks + 1], src_offsets, dst_offsets,
            dst, itemsize, array._fill_bytes, chain.compressor, chain.checksums, chain.swap,
            ib.nbytes, get_num_threads(), status, shard_status, chain.transpose(ib.shape))
        failed += _failed_shards(shards, group, status, shard_status)
    return failed


def _outer_args(chunks: OuterChunks) -> dict[str, Any]:
    """Outer-product pieces grouped by chunk as the kernel takes them."""
    grid = chunks.grid
    return {"firsts": chunks.firsts, "ends": chunks.ends, "bounds": grid.bounds,
            "src_offsets": grid.src_offsets, "dst_offsets": grid.dst_offsets,
            "counts": grid.counts}


def reads_outer(array: Array, sel: OrthogonalSelection) -> bool:
    """Whether :func:`read_outer_natively` reads the orthogonal selection ``sel`` of the
    array: a native chain over a regular grid, fixed-size elements, at least one dimension,
    and at least :data:`OUTER_MIN_CHUNKS` (inner) chunks the selection may touch."""
    if _chunks is None or not enabled or array._references or not array.ndim:
        return False
    if array._sharding is None:
        grid = array._box_grid
        return (chunks_native(array) is not None and grid is not None
                and outer_chunks_at_most(sel, grid.chunk_shape) >= OUTER_MIN_CHUNKS)
    ib = array._inner_box
    return (shards_native(array) is not None and ib is not None
            and outer_chunks_at_most(sel, ib.shape) >= OUTER_MIN_CHUNKS)


def read_outer_natively(array: Array, sels: Sequence[OrthogonalSelection], dst: np.ndarray,
                        bases: Sequence[int]) -> set[tuple[int, ...]] | None:
    """Read non-empty orthogonal selections (``oindex``, stepped slices) that
    :func:`reads_outer` takes natively, selection ``i`` C-ordered into the bytes ``dst``
    (flat ``uint8``) from ``bases[i]`` on, every (inner) chunk they touch read once; returns
    the coordinates of the chunks (shards, for a sharded array) left to the Python path,
    which fills their part, or None (nothing read) where a plan would be too large
    (:data:`~.plan.OUTER_PLAN_MIN_BYTES`) or no shard is fetched whole from a store without
    files or values in memory."""
    sharded = array._sharding is not None
    chain = shards_native(array) if sharded else chunks_native(array)
    grid, ib = array._box_grid, array._inner_box
    if sharded:
        assert chain is not None and ib is not None
        unit, nbytes = ib.shape, ib.nbytes
    else:
        assert chain is not None and grid is not None
        unit, nbytes = grid.chunk_shape, grid.chunk_nbytes
    grids = []
    for sel, base in zip(sels, bases, strict=True):
        one = plan_outer_grid(sel, unit, array._itemsize, base)
        if one is None:
            return None
        grids.append(one)
    plan = outer_chunks(grids)
    if not sharded:
        return _read_chunks_outer(array, plan, dst, chain, unit, nbytes)
    planned = _shard_groups(array, plan.coords)
    if planned is None:
        return None
    return _read_shards_outer(array, plan, planned, dst, chain)


def _read_chunks_outer(array: Array, plan: OuterChunks, dst: np.ndarray, chain: NativeChain,
                       shape: Sequence[int], nbytes: int) -> set[tuple[int, ...]]:
    """The chunks (of ``shape``, ``nbytes`` bytes) of an unsharded array's outer-product
    plan read into ``dst``; returns the coordinates of those that failed."""
    assert _chunks is not None
    status = np.empty(len(plan.coords), dtype=np.int8)
    for sources, paths, lo, hi in _sources(array, chunk_names(array, plan.coords)):
        part = plan if lo == 0 and hi == len(plan.coords) else plan.take(np.arange(lo, hi))
        _chunks.read_chunks_outer(sources, paths, dst=dst, itemsize=array._itemsize,
                                  fill=array._fill_bytes, compressor=chain.compressor,
                                  checksums=chain.checksums, swap=chain.swap, nbytes=nbytes,
                                  nthreads=get_num_threads(), status=status[lo:hi],
                                  transpose=chain.transpose(shape), **_outer_args(part))
    return {tuple(row) for row in plan.coords[status < 0].tolist()}


def _read_shards_outer(array: Array, plan: OuterChunks, planned: _ShardCalls,
                       dst: np.ndarray, chain: NativeChain) -> set[tuple[int, ...]]:
    """The inner chunks of a sharded array's outer-product plan read into ``dst``; returns
    the coordinates of the shards left to the Python path (failed, or not fetched whole)."""
    ib = array._inner_box
    assert ib is not None and ib.plain is not None and _chunks is not None
    index_nbytes, at_end = ib.plain
    shards, groups, failed = planned
    everything = np.arange(len(plan.coords))
    for group in groups:
        ks = group.inner
        part = plan if np.array_equal(ks, everything) else plan.take(ks)
        status = np.empty(len(ks), dtype=np.int8)
        shard_status = np.empty(len(group.sources), dtype=np.int8)
        _chunks.read_shards_outer(
            group.sources, group.paths, index_nbytes, at_end, index_nbytes % 16 == 4,
            group.shard, group.slot, dst=dst, itemsize=array._itemsize,
            fill=array._fill_bytes, compressor=chain.compressor, checksums=chain.checksums,
            swap=chain.swap, nbytes=ib.nbytes, nthreads=get_num_threads(), status=status,
            shard_status=shard_status, transpose=chain.transpose(ib.shape),
            **_outer_args(part))
        failed += _failed_shards(shards, group, status, shard_status)
    return set(failed)
