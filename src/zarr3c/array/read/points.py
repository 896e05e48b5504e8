"""Coordinate (``vindex``) reads, and the partial reads of one shard for point and
outer-product (``oindex``) selections.

:func:`read_coordinates` groups the points by chunk (``plan_points``, or one
``group_points`` kernel call on a regular grid) and reads each chunk's points on the thread
pool: from a shard, only its index and the inner chunks holding points
(:func:`read_shard_points`); from a chunk stored as raw elements, by byte ranges around its
points or, for chunks with many points, whole chunks in one store call
(:func:`read_raw_chunks_points`, :func:`read_raw_chunk_points`); from any other chunk, its
bytes decoded up to the furthest point.

A selection scattered over a shard needs only the shard index and the inner chunks its
elements fall in, never the decoded shard.  Inner chunks stored as raw elements (a
``bytes``-only inner chain in native byte order) are not decoded at all: each point's byte
position in the shard is its inner chunk's index offset plus its offset within the chunk,
and one ``copy_elements`` call per coalesced byte range moves the points out of the bytes
read.  Other inner chunks are read with
:meth:`~zarr3c.codecs.sharding.ShardingCodec.read_inner_chunks_into` and each decoded one
feeds one ``copy_elements`` (points) or ``copy_outer`` (outer product) call.  Follows the
sharding codec spec
(https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html: index
entries ``(offset, nbytes)``, 2**64-1 for a missing inner chunk, read as the fill value).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c._buffers import empty_array, thread_scratch
from zarr3c._kernels.grid import group_by_key, group_points_regular
from zarr3c._kernels.scatter import OuterPieces, copy_elements, copy_outer
from zarr3c.array import objects
from zarr3c.array.read.chunk import inner_memory, read_chunk, stored_value
from zarr3c.array.read.native import (
    chunks_native,
    read_points_natively,
    read_shard_points_natively,
    shards_native,
)
from zarr3c.array.read.plan import OuterPart, OuterPieceMap, RawRequest, plan_outer_pieces
from zarr3c.array.read.raw import fetch_raw, raw_size_error
from zarr3c.codecs.base import as_byte_array
from zarr3c.codecs.sharding import (
    COALESCE_MAX_GAP,
    MISSING,
    GetRanges,
    ShardIndex,
    ShardingCodec,
    StoreRanges,
    batch_decoder,
    pack_runs,
)
from zarr3c.codecs.sharding._parallel import in_parallel
from zarr3c.codecs.sharding.read import MAX_REQUEST_BYTES
from zarr3c.concurrency import map_parts, map_unordered
from zarr3c.errors import ChunkDecodeError
from zarr3c.indexing import (
    CoordinateSelection,
    PointGroups,
    PointTask,
    group_points,
    int64_array,
    plan_points,
)
from zarr3c.stores import Store

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = [
    "ShardOuterSplit", "read_coordinates", "read_raw_chunk_points", "read_raw_chunks_points",
    "read_shard_outer", "read_shard_points", "split_shard_outer",
]

#: A raw chunk holding at most one point per this many bytes is read by byte ranges around
#: its points (coalesced when closer than :data:`_POINT_GAP`), not whole: one ranged read
#: costs about what reading a few KiB of a chunk from the page cache does (tuned on the
#: ``vindex`` rows of ``asv_benchmarks/compare_peers.py``).
_SPARSE_BYTES_PER_POINT = 8 << 10
_POINT_GAP = 4 << 10
#: The largest raw chunks whose points :func:`read_raw_chunks_points` reads in one store
#: call, through scratch of a chunk's size taken before it is known which are stored.
_BATCH_CHUNK_MAX = 64 << 20

#: ``fetch(ranges, buf)``: read ``(start, stop, at)`` byte ranges of a chunk stored as raw
#: elements into ``buf``, with the chunk's size probe in its last two bytes; False if the
#: chunk is not stored, ChunkDecodeError naming it if it has the wrong size.
FetchRaw = Callable[[list[tuple[int, int, int]], np.ndarray], bool]

def _read_whole(npoints: int, chunk_nbytes: int) -> bool:
    """Whether a raw chunk holding ``npoints`` points is read whole (else by byte ranges
    around its points)."""
    return npoints * _SPARSE_BYTES_PER_POINT > chunk_nbytes


def _fill_points(dst: np.ndarray, dst_offsets: np.ndarray, fill_bytes: np.ndarray,
                 itemsize: int) -> None:
    if len(dst_offsets):
        copy_elements(fill_bytes, np.zeros(len(dst_offsets), dtype=np.int64), dst, dst_offsets,
                      itemsize)


def _by_inner_chunk(sharding: ShardingCodec, shard_shape: Sequence[int],
                    local: Sequence[np.ndarray], itemsize: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """The points grouped by inner chunk (one ``group_points_regular`` call over the shard's
    inner grid): their order, each one's byte offset in its (decoded, C-order) inner chunk in
    that order, where each inner chunk's run starts (C order of the inner grid), and that
    grid's shape."""
    cps = sharding.chunks_per_shard(shard_shape)
    n = len(local[0])
    order = np.empty(n, dtype=np.int64)
    within = np.empty(n, dtype=np.int64)
    starts = np.empty(math.prod(cps) + 1, dtype=np.int64)
    group_points_regular(tuple(np.ascontiguousarray(x, dtype=np.int64) for x in local),
                         int64_array(sharding.chunk_shape), int64_array(cps), itemsize,
                         order, within, starts)
    return order, within, starts, cps


def read_shard_points(
    sharding: ShardingCodec,
    get_ranges: GetRanges,
    shard_shape: Sequence[int],
    local: Sequence[np.ndarray],
    dst: np.ndarray,
    dst_offsets: np.ndarray,
    *,
    itemsize: int,
    fill_bytes: np.ndarray,
    key: str,
    raw: bool,
) -> None:
    """Copy the points ``local`` (per dimension, int64 indices within the shard) of one shard
    into ``dst`` (a writable uint8 buffer) at byte offsets ``dst_offsets``, in order (the
    last of repeated destinations wins).

    Only the index and the inner chunks holding points are read.  ``raw``: the inner chunks
    are stored as raw native elements, read by coalesced byte range without decoding.
    Points in missing inner chunks, or of a missing shard, get ``fill_bytes``.

    Raises
    ------
    ChunkDecodeError
        Naming ``key`` and the inner chunk: a malformed index, an inner chunk of the wrong
        size or past the end of the shard, a corrupt inner chunk.
    """
    if not len(dst_offsets):
        return
    # The index first: grouping the points takes a table of one slot per inner chunk of
    # the shard, memory for a shard known stored only.
    index = sharding.read_index(get_ranges, shard_shape, key=key)
    if index is None:
        _fill_points(dst, dst_offsets, fill_bytes, itemsize)
        return
    order, src_sorted, starts, cps = _by_inner_chunk(sharding, shard_shape, local, itemsize)
    dst_sorted = dst_offsets[order]
    if raw:
        _read_raw_points(index, get_ranges, src_sorted, starts, cps, dst_sorted, dst,
                         chunk_shape=sharding.chunk_shape, itemsize=itemsize,
                         fill_bytes=fill_bytes, key=key)
        return
    touched = np.flatnonzero(starts[1:] > starts[:-1])
    wanted = list(zip(*(c.tolist() for c in np.unravel_index(touched, cps)), strict=True))
    # (plain ints and a dict: the sink runs once per inner chunk)
    run_of = dict(zip(wanted, touched.tolist(), strict=True))
    bounds = starts.tolist()

    def sink(coords: tuple[int, ...], chunk: np.ndarray | None) -> None:
        k = run_of[coords]
        lo, hi = bounds[k], bounds[k + 1]
        if chunk is None:
            _fill_points(dst, dst_sorted[lo:hi], fill_bytes, itemsize)
        else:
            copy_elements(chunk.reshape(-1).view(np.uint8), src_sorted[lo:hi], dst,
                          dst_sorted[lo:hi], itemsize)

    kernels = sharding.inner_batch_kernels()
    batch_sink = None if kernels is None else batch_decoder(
        kernels.decompress_elements, math.prod(sharding.chunk_shape) * itemsize, run_of,
        starts, src_sorted, dst, dst_sorted, itemsize)
    sharding.read_inner_chunks_into(get_ranges, shard_shape, wanted, sink, index=index,
                                    key=key, batch_sink=batch_sink)


def _read_raw_points(index: ShardIndex, get_ranges: GetRanges, within: np.ndarray,
                     starts: np.ndarray, cps: tuple[int, ...], dst_offsets: np.ndarray,
                     dst: np.ndarray, *, chunk_shape: Sequence[int], itemsize: int,
                     fill_bytes: np.ndarray, key: str) -> None:
    """:func:`read_shard_points` for inner chunks of raw elements (of ``chunk_shape``) of a
    stored shard (its ``index``), the points grouped by inner chunk (``within`` and
    ``dst_offsets`` in that order, runs at ``starts``)."""
    entries = index.flat
    nkeys = len(entries)
    chunk_nbytes = math.prod(chunk_shape) * itemsize
    runs = np.diff(starts)
    keys = np.repeat(np.arange(nkeys, dtype=np.int64), runs)  # each point's inner chunk
    touched = np.flatnonzero(runs)
    offsets = entries[touched, 0]
    present = offsets != np.uint64(MISSING)
    wrong = present & (entries[touched, 1] != np.uint64(chunk_nbytes))
    if wrong.any():
        k = int(touched[np.flatnonzero(wrong)[0]])
        coords = tuple(int(c) for c in np.unravel_index(k, cps))
        raise ChunkDecodeError(
            f"sharding_indexed: inner chunk {coords}: bytes codec: expected {chunk_nbytes} "
            f"bytes for a chunk of shape {list(chunk_shape)}, got "
            f"{int(entries[k, 1])}", key=key)
    stored = touched[present]
    # Coalesce the stored inner chunks into ranges, sorted by offset: a new range where the
    # gap to the previous chunk is large, or after max_run chunks (bounds each request).
    starts_b = entries[stored, 0].astype(np.int64)
    by_offset = np.argsort(starts_b, kind="stable")
    stored, starts_b = stored[by_offset], starts_b[by_offset]
    m = len(stored)
    range_of_key = np.full(nkeys, -1, dtype=np.int64)
    rel_of_key = np.zeros(nkeys, dtype=np.int64)
    if m:
        max_run = max(1, MAX_REQUEST_BYTES // max(chunk_nbytes, 1))
        brk = np.ones(m, dtype=bool)
        brk[1:] = starts_b[1:] - (starts_b[:-1] + chunk_nbytes) > COALESCE_MAX_GAP
        first = np.flatnonzero(brk)
        rank = np.arange(m) - first[np.cumsum(brk) - 1]
        brk |= rank % max_run == 0
        range_id = np.cumsum(brk) - 1
        firsts = np.flatnonzero(brk)
        range_start = starts_b[firsts]
        lasts = np.append(firsts[1:], m) - 1
        range_len = starts_b[lasts] + chunk_nbytes - range_start
        range_of_key[stored] = range_id
        rel_of_key[stored] = starts_b - range_start[range_id]
    point_range = range_of_key[keys]
    missing = point_range < 0
    if missing.any():
        _fill_points(dst, dst_offsets[missing], fill_bytes, itemsize)
    if not m:
        return
    nranges = len(range_start)
    order = np.empty(len(keys), dtype=np.int64)
    bounds = np.empty(nranges + 2, dtype=np.int64)
    # Missing points go to the extra last group, which is never read.
    group_by_key(np.where(missing, nranges, point_range), nranges + 1, order, bounds)
    src = (rel_of_key[keys] + within)[order]
    dsto = dst_offsets[order]
    # Batches of at most MAX_REQUEST_BYTES (one range may exceed it), read into this
    # thread's scratch memory where the store can: the bytes are only copied out here, and
    # fresh memory per batch costs a page fault per 4 KiB.
    into = get_ranges.into if isinstance(get_ranges, StoreRanges) else None
    for r, last in pack_runs(range_len.tolist(), MAX_REQUEST_BYTES):
        ranges = [(int(range_start[j]), int(range_len[j])) for j in range(r, last)]
        values = (None if into is None else into(ranges)) or get_ranges(ranges)
        for j, value in zip(range(r, last), values, strict=True):
            if value is None:
                raise ChunkDecodeError("sharding_indexed: the shard disappeared while read",
                                       key=key)
            buf = as_byte_array(value)
            if buf.nbytes != range_len[j]:
                raise ChunkDecodeError(
                    f"sharding_indexed: inner chunks at bytes {int(range_start[j])}.."
                    f"{int(range_start[j] + range_len[j])} lie outside the shard of "
                    f"{int(range_start[j]) + buf.nbytes} bytes", key=key)
            lo, hi = int(bounds[j]), int(bounds[j + 1])
            copy_elements(buf, src[lo:hi], dst, dsto[lo:hi], itemsize)
        del values


class ShardOuterSplit(NamedTuple):
    """One shard's share of an outer-product read, cut for the thread pool: its ``shard_index``,
    read once, and ``runs``, the pieces (:func:`.plan.plan_outer_pieces`) of runs of the
    inner chunks the selection touches, in storage order: each run is read by one
    :func:`read_shard_outer` call on a worker of its own."""

    shard_index: ShardIndex
    runs: list[OuterPieceMap]


def split_shard_outer(
    sharding: ShardingCodec,
    get_ranges: GetRanges,
    shard_shape: Sequence[int],
    parts: Sequence[OuterPart],
    *,
    itemsize: int,
    key: str,
    ways: int,
) -> ShardOuterSplit | None:
    """Read a shard's index and cut its outer-product ``parts`` (as :func:`read_shard_outer`
    takes them) into at most ``ways`` runs of inner chunks, so that a read touching fewer
    shards than there are threads still spreads over them all (a shard is otherwise one
    worker's).  None if the shard is missing (the caller fills)."""
    index = sharding.read_index(get_ranges, shard_shape, key=key)
    if index is None:
        return None
    pieces = plan_outer_pieces(parts, sharding.chunk_shape, itemsize)
    offsets = index.entries[..., 0]  # (storage order; missing ones last)
    order = sorted(pieces, key=lambda c: (int(offsets[c]), c))
    nbytes = len(order) * math.prod(sharding.chunk_shape) * itemsize
    ways = max(1, min(ways, len(order) if in_parallel(nbytes) else 1))
    bounds = np.linspace(0, len(order), ways + 1).astype(int)
    return ShardOuterSplit(index, [{c: pieces[c] for c in order[lo:hi]}
                                   for lo, hi in itertools.pairwise(bounds) if hi > lo])


def read_shard_outer(
    sharding: ShardingCodec,
    get_ranges: GetRanges,
    shard_shape: Sequence[int],
    pieces: OuterPieceMap,
    *,
    itemsize: int,
    fill_bytes: np.ndarray,
    key: str,
    index: ShardIndex | None = None,
) -> bool:
    """Copy outer-product selections of one shard into their outputs, reading only the
    index (unless given) and the inner chunks they touch, each decoded once for every
    piece that needs it.

    ``pieces`` (:func:`.plan.plan_outer_pieces` of the parts) maps each inner chunk to its
    ``copy_outer`` calls: per dimension, byte offsets within the inner chunk and in the
    piece's ``dst`` (a writable uint8 buffer).  Inner chunks that are not stored give
    ``fill_bytes``.

    Returns
    -------
    bool
        False if the shard is missing (nothing was copied: the caller fills).
    """
    inner = sharding.chunk_shape

    def sink(coords: tuple[int, ...], chunk: np.ndarray | None) -> None:
        src: Any = fill_bytes if chunk is None else chunk.reshape(-1).view(np.uint8)
        for dst, src_offsets, dst_offsets, counts in pieces[coords]:
            copy_outer(src, np.zeros_like(src_offsets) if chunk is None else src_offsets,
                       dst, dst_offsets, counts, itemsize)

    kernels = sharding.inner_batch_kernels()
    batch_sink = None
    flat = [piece for group in pieces.values() for piece in group]
    if kernels is not None and flat and len({id(piece.dst) for piece in flat}) == 1:
        # (every piece into the one output, checked once for every batch of the shard)
        dst, chunk_nbytes = flat[0].dst, math.prod(inner) * itemsize
        checked = OuterPieces(
            "read_shard_outer",
            np.cumsum([0] + [len(p.src_offsets) for p in flat], dtype=np.int64),
            np.concatenate([p.src_offsets for p in flat]).astype(np.int64, copy=False),
            np.concatenate([p.dst_offsets for p in flat]).astype(np.int64, copy=False),
            np.stack([p.counts for p in flat]).astype(np.int64, copy=False), chunk_nbytes,
            dst.nbytes, itemsize)
        batch_sink = batch_decoder(
            kernels.decompress_outer, chunk_nbytes, {coords: n for n, coords in enumerate(pieces)},
            np.cumsum([0] + [len(group) for group in pieces.values()], dtype=np.int64),
            checked, dst)
    return sharding.read_inner_chunks_into(get_ranges, shard_shape, pieces, sink, key=key,
                                           index=index, batch_sink=batch_sink)


def read_raw_chunks_points(
    store: Store,
    groups: PointGroups,
    ts: Sequence[int],
    keys: Sequence[str],
    chunk_nbytes: int,
    dst: np.ndarray,
    dst_offsets: np.ndarray,
    itemsize: int,
) -> list[int]:
    """Copy the points of chunks stored as raw native elements (``chunk_nbytes`` bytes
    each: a regular grid's), a batch of whole chunks in one store call
    (:meth:`~zarr3c.stores.Store.read_elements_into`): the points of ``groups``'
    ``ts[k]``-th touched chunk from the value at ``keys[k]`` into ``dst`` (a writable uint8
    buffer) at ``dst_offsets`` (the grouped points' ``order * itemsize``).  The grouped
    arrays go to the store as they are: each chunk's points are a run of them.

    Only chunks with many points go to the batch (others are read by byte ranges around
    their points, see :func:`read_raw_chunk_points`).  Returns the ``k`` left to the
    caller: those, chunks the store did not read (missing, another size, an error), or all
    when it has no batch read; none of their points are written.
    """
    bounds = groups.bounds
    # (the batch reads into scratch of the chunk's size before it knows which are stored:
    # larger chunks go one by one, their size asked first)
    dense = [k for k, t in enumerate(ts)
             if _read_whole(int(bounds[t + 1] - bounds[t]), chunk_nbytes)
             ] if chunk_nbytes <= _BATCH_CHUNK_MAX else []
    if not dense:
        return list(range(len(ts)))
    at = np.asarray([ts[k] for k in dense], dtype=np.int64)
    left = store.read_elements_into(
        [keys[k] for k in dense], np.full(len(dense), chunk_nbytes, dtype=np.int64),
        thread_scratch(chunk_nbytes, "stored"), bounds[at], bounds[at + 1],
        groups.offsets, dst, dst_offsets, itemsize)
    if left is None:
        return list(range(len(ts)))
    done = set(dense) - {dense[j] for j in left}
    return [k for k in range(len(ts)) if k not in done]


def read_raw_chunk_points(
    get_whole: Callable[[], Any],
    chunk_nbytes: int,
    offsets: np.ndarray,
    dst: np.ndarray,
    dst_offsets: np.ndarray,
    *,
    itemsize: int,
    fill_bytes: np.ndarray,
    fetch: FetchRaw,
    wrong_size: Callable[[], ChunkDecodeError],
) -> None:
    """Copy points of a chunk stored as raw native elements (``chunk_nbytes`` bytes) from
    their byte ``offsets`` in it to ``dst_offsets`` in ``dst``, without decoding.

    A chunk with few points is read by coalesced byte ranges through ``fetch`` (which also
    checks the stored chunk's size); others are read whole through ``get_whole()`` (the
    stored value, or None), and ``wrong_size()`` is raised if it is not ``chunk_nbytes``
    bytes.  A missing chunk gives ``fill_bytes``.

    Raises
    ------
    ChunkDecodeError
        From ``wrong_size()``: the stored chunk is not ``chunk_nbytes`` bytes.
    """
    if _read_whole(len(offsets), chunk_nbytes):
        value = get_whole()
        if value is None:
            _fill_points(dst, dst_offsets, fill_bytes, itemsize)
            return
        buf = as_byte_array(value)
        if buf.nbytes != chunk_nbytes:
            raise wrong_size()
        copy_elements(buf, offsets, dst, dst_offsets, itemsize)
        return
    points = np.unique(offsets)
    brk = np.ones(len(points), dtype=bool)
    brk[1:] = points[1:] - points[:-1] > _POINT_GAP
    firsts = np.flatnonzero(brk)
    starts = points[firsts]
    ends = points[np.append(firsts[1:], len(points)) - 1] + itemsize
    # The ranges go one after another into one buffer, the size probe's two bytes last.
    packed_at = np.zeros(len(starts), dtype=np.int64)
    np.cumsum((ends - starts)[:-1], out=packed_at[1:])
    nbytes = int(ends[-1] - starts[-1] + packed_at[-1])
    buf = np.empty(nbytes + 2, dtype=np.uint8)
    if not fetch(list(zip(starts.tolist(), ends.tolist(), packed_at.tolist(), strict=True)),
                 buf):
        _fill_points(dst, dst_offsets, fill_bytes, itemsize)
        return
    which = np.searchsorted(starts, offsets, side="right") - 1
    copy_elements(buf, offsets - starts[which] + packed_at[which], dst, dst_offsets, itemsize)


def read_coordinates(array: Array, sel: CoordinateSelection) -> np.ndarray:
    """The points of a parsed coordinate selection, in the selection's ``out_shape`` (see
    the module for how each chunk's points are read)."""
    if array._references:  # (strings, bytes: numpy indexing, not byte copies)
        return objects.read_coordinates(array, sel)
    out = empty_array(sel.size, array.dtype)
    itemsize = array._itemsize
    dst = out.view(np.uint8)
    sharding = array._sharding
    raw_inner = sharding is not None and sharding.stores_raw_inner_chunks()
    fill = array._fill_bytes
    raw_chunks = sharding is None and array._pipeline.stores_raw_elements
    partial = array._pipeline.can_decode_prefix

    def read_points(task: PointTask) -> None:
        if sharding is not None:
            # Only the shard index and the inner chunks holding points are read.
            key = array.chunk_key(task.coords)
            with inner_memory(array, key):
                read_shard_points(
                    sharding, array._ranges_of(key),
                    array._chunk_shape_at(task.coords), task.local, dst, task.out * itemsize,
                    itemsize=itemsize, fill_bytes=fill, key=key, raw=raw_inner)
            return
        if raw_chunks:
            # Raw elements: copied from the stored bytes, no decode; sparse chunks are read
            # by byte range.
            key = array.chunk_key(task.coords)
            shape = array._chunk_shape_at(task.coords)
            nbytes = math.prod(shape) * itemsize
            read_raw_chunk_points(
                lambda: stored_value(array, key, nbytes, shape), nbytes, task.offsets, dst,
                task.out * itemsize,
                itemsize=itemsize, fill_bytes=fill,
                fetch=lambda ranges, buf: fetch_raw(
                    array, [RawRequest(task.coords, ranges, buf.nbytes - 2, nbytes)], buf)[0],
                wrong_size=lambda: raw_size_error(array, key, task.coords, nbytes))
            return
        # (only the chunk's bytes up to its furthest point are needed)
        need = int(task.offsets.max()) + itemsize if partial and task.offsets.size else None
        chunk = read_chunk(array, task.coords, need=need)
        if chunk is None:
            out[task.out] = array._metadata.fill_value_array
            return
        copy_elements(chunk.reshape(-1).view(np.uint8), task.offsets,
                      dst, task.out * itemsize, itemsize)

    if sharding is not None and (chain := shards_native(array)) is not None:
        left = read_shard_points_natively(array, sel, dst, chain)
        if left is not None:
            # Executed natively; the shards the kernel could not read are read again (and
            # reported) by the Python path.
            if left:
                bad = set(left)
                map_unordered(read_points, [task for task in plan_points(
                    sel, array._dims, itemsize) if task.coords in bad])
            return out.reshape(sel.out_shape)
    chain = chunks_native(array) if sharding is None else None
    if chain is not None:
        grouped = group_points(sel, array._dims, itemsize, scratch=True)
        if grouped is not None:
            # Executed natively; the chunks the kernel could not read are read again (and
            # reported) by the Python path.
            failed = read_points_natively(array, grouped, dst, chain)
            if failed:
                bounds = grouped.bounds.tolist()
                map_unordered(lambda t: read_points(grouped.task(t, bounds)), failed)
            return out.reshape(sel.out_shape)
    groups = (group_points(sel, array._dims, itemsize, scratch=True)
              if raw_chunks and array._store.reads_elements else None)
    if groups is None:
        map_unordered(read_points, plan_points(sel, array._dims, itemsize))
        return out.reshape(sel.out_shape)
    dst_offsets = groups.order * itemsize
    nbytes = math.prod(groups.sizes) * itemsize  # (every chunk's: edge chunks are full)

    def read_part(ts: list[int]) -> None:
        # Chunks with many points in one store call, without the GIL between them; the
        # grouped points go as they are (no task per chunk).
        keys = [array.chunk_key(groups.coords[t]) for t in ts]
        for k in read_raw_chunks_points(array._store, groups, ts, keys, nbytes, dst,
                                        dst_offsets, itemsize):
            read_points(groups.task(ts[k]))

    map_parts(read_part, range(len(groups)))
    return out.reshape(sel.out_shape)
