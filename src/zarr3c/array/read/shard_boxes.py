"""The small-box short path of sharded arrays on a regular grid: one step-1 box inside one
shard (what most small reads are) touching at most
:data:`~zarr3c.array.read.plan.SHARD_BOX_MAX_INNER` inner chunks, or such a box's parts in
each of a few shards.

Planned in one kernel call (``plan_box_in_cell``); the shard's index and the bytes the box
needs of each stored inner chunk (its span, raw; else all of it) are read in one call where
the store can (``Store.read_shard_parts``: a LocalStore file opened once), else the index
then the spans in one request; then one copy call, or each inner chunk decoded and its part
copied.  A box that is one whole raw inner chunk is read straight into the output, a
compressed one decoded straight into it.  Declines (returns None) when the box touches more
inner chunks, when a store without files or values would fetch its shards whole (one
request each, together: :func:`~zarr3c.array.read.native.box_fetches_shards_whole`), or the
shard or an inner chunk is not as expected: the many-boxes path
(:func:`zarr3c.array.read.many.read_boxes`) reads it then, and reports what is wrong."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from zarr3c._buffers import chunk_too_large, empty_array, thread_scratch
from zarr3c._kernels.boxes import box_chunk_pieces, plan_box_in_cell
from zarr3c.array.read.native import box_fetches_shards_whole, read_shard_box_natively
from zarr3c.array.read.place import copy_parts, fill_parts
from zarr3c.array.read.plan import (
    BOX_SHARDS_MAX,
    SHARD_BOX_MAX_INNER,
    Box,
    InnerParts,
)
from zarr3c.codecs.sharding import MISSING
from zarr3c.concurrency import map_unordered
from zarr3c.errors import ChunkDecodeError, ChunkTooLargeError

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["ONE_CALL_INDEX_MAX", "ONE_CALL_ROOM_MAX", "read_box_by_shards", "read_shard_box"]

#: The most memory a small sharded read sets aside for compressed inner chunks whose sizes it
#: does not know yet (larger inner chunks: the index is read first, then exactly their bytes)
ONE_CALL_ROOM_MAX = 16 << 20
#: The largest index read in that one call, into memory taken before the shard is known
#: stored (a larger one is read by ``read_index``, which asks the shard's size first)
ONE_CALL_INDEX_MAX = 16 << 20

#: :func:`_fetch_shard_parts`: the shard is not stored
_MISSING_SHARD = object()


def read_shard_box(array: Array, box: Box) -> Any:
    """``array[box]`` for a box inside one shard by the short path, or None when it declines
    (see the module)."""
    ib = array._inner_box
    assert ib is not None
    start, stop, shape, scalar = box
    if box_fetches_shards_whole(array, start, stop):
        return None  # (fetched whole with the many-boxes path: one request, not two)
    planned = plan_box_in_cell(start, stop, ib.shard_i64, ib.shape_i64, ib.strides_i64,
                               array._itemsize, SHARD_BOX_MAX_INNER)
    if planned is None:
        return None
    shard, plan = planned
    parts = InnerParts(plan, len(start))
    key = array.chunk_key(shard)
    out = empty_array([e - b for b, e in zip(start, stop, strict=True)], array.dtype)
    dst = out.reshape(-1).view(np.uint8)
    # One whole inner chunk: raw, its bytes are the output's, read straight into it.
    whole = parts.n == 1 and dst.nbytes == ib.nbytes
    # Compressed inner chunks: index, reads, decodes and copies in one kernel call where
    # the chains and store allow, one GIL hand-off a read (asv
    # bench_array_io.NativePipeline.time_random_reads_user_threads tracks it).
    if read_shard_box_natively(array, shard, parts, dst, whole):
        return out.reshape(shape)[()] if scalar else array._in_order(out.reshape(shape))
    if ib.raw:
        los, his = parts.src_lo, parts.src_hi
        # (+1: the two-request read's probe of the furthest inner chunk's last byte)
        staging = dst if whole else thread_scratch(
            sum(his.tolist()) - sum(los.tolist()) + 1, "stored")
    else:
        los, his = ib.whole_los[:parts.n], ib.whole_his[:parts.n]
        staging = None
    fetched = _fetch_shard_parts(array, key, parts.slots, los, his, staging)
    if fetched is None:
        return None
    if fetched is _MISSING_SHARD:
        fill_parts(parts, dst, array._fill_bytes, slice(None))
    else:
        staging, ats, lens = fetched
        try:  # (not a context manager: the hottest sharded read)
            placed = _place_inner_parts(array, parts, staging, ats, lens, dst, whole)
        except ChunkTooLargeError:
            raise
        except MemoryError:
            raise chunk_too_large(key, ib.nbytes, "an inner chunk") from None
        if not placed:
            return None
    return out.reshape(shape)[()] if scalar else array._in_order(out.reshape(shape))


def read_box_by_shards(array: Array, box: Box) -> Any:
    """``array[box]`` for a box across two to :data:`~zarr3c.array.read.plan.BOX_SHARDS_MAX`
    shards: the part in each read by :func:`read_shard_box`, placed in one output.  None
    when the box lies in one shard or in more than that many, or a part is not for the
    short path (the many-boxes path reads it then; asv ``ShardBoxReads`` tracks the
    difference)."""
    grid, inner = array._box_grid, array._inner_box
    assert grid is not None and inner is not None
    start, stop, shape, _ = box
    # (the kernel's tuples of BoxPiece's fields, unpacked by name: a shard per piece)
    pieces = box_chunk_pieces(start, stop, grid.chunk_i64, grid.chunk_strides,
                              array._itemsize, BOX_SHARDS_MAX)
    if pieces is None or len(pieces) < 2 or box_fetches_shards_whole(array, start, stop):
        return None  # (shards fetched whole go together, on the many-boxes path)
    # Every part must be one the short path takes, known before any is read (else the
    # many-boxes path would read the first parts again), and all of them together no more
    # inner chunks than one part may touch: shard after shard, each shard's inner chunks on
    # the pool, leaves threads idle that the many-boxes path keeps busy with every inner
    # chunk of the box at once (a time series across shards; asv ``ShardBoxReads``).
    total = 0
    for _shard, first, counts, _src_lo, _src_hi, _dst_at in pieces:
        total += math.prod((f + c - 1) // i - f // i + 1
                           for f, c, i in zip(first, counts, inner.shape, strict=True))
        if total > SHARD_BOX_MAX_INNER:
            return None
    out = empty_array([e - b for b, e in zip(start, stop, strict=True)], array.dtype)
    for shard, first, counts, _src_lo, _src_hi, _dst_at in pieces:
        lo = tuple(k * n + f for k, n, f in zip(shard, grid.chunk_shape, first, strict=True))
        hi = tuple(b + c for b, c in zip(lo, counts, strict=True))
        part = read_shard_box(array, (lo, hi, tuple(counts), False))
        if part is None:
            return None
        out[tuple(slice(b - s, e - s) for b, e, s in zip(lo, hi, start, strict=True))] = part
    return array._in_order(out.reshape(shape))


def _fetch_shard_parts(array: Array, key: str, slots: np.ndarray, los: np.ndarray,
                       his: np.ndarray, staging: np.ndarray | None) -> Any:
    """Read shard ``key``'s index and, through it, bytes ``[los[i], his[i])`` of inner chunk
    ``slots[i]`` (C order in the shard; ``his[i]`` -1: all of it) into ``staging`` (None:
    this thread's scratch), one part after another: ``(staging, ats, lens)``, where part
    ``i`` starts and its length, both -1 for an inner chunk not stored.
    :data:`_MISSING_SHARD` for a shard not stored; None when anything is not as expected
    (the caller takes the general path, which reports it).  Raises what reading the index
    raises, naming ``key``."""
    ib, sharding, grid = array._inner_box, array._sharding, array._box_grid
    assert ib is not None and sharding is not None and grid is not None
    shard_shape = grid.chunk_shape
    expect = ib.nbytes if ib.raw else -1
    plain = ib.plain
    # Compressed inner chunks: room for each at its largest (their sizes are in the index),
    # where that is not much memory.
    room_n = len(los) * ib.stored_max
    if (plain is not None and plain[0] <= ONE_CALL_INDEX_MAX
            and (staging is not None or room_n <= ONE_CALL_ROOM_MAX)):
        # Where the store reads the index and the parts in one call.
        index_n, at_end = plain
        index_bytes = thread_scratch(index_n, "index")
        room = thread_scratch(room_n, "stored") if staging is None else staging
        ats = np.empty(2 * len(los), dtype=np.int64)
        size = array._store.read_shard_parts(key, index_bytes, at_end, slots, los, his,
                                             expect, room, ats[:len(los)], ats[len(los):])
        if size is not None and size < 0:
            return _MISSING_SHARD
        if size is not None:
            try:  # (the checksum and entries, before any byte read through them is used)
                sharding.check_index(index_bytes, shard_shape, size)
                return room, ats[:len(los)], ats[len(los):]
            except ChunkDecodeError:
                pass  # read again below: that reports it
    # Else the index, then the parts in one request (and the problems, named).
    index = sharding.read_index(array._ranges_of(key), shard_shape, key=key)
    if index is None:
        return _MISSING_SHARD
    entries = index.flat
    ranges: list[tuple[int, int, int]] = []
    at_list: list[int] = []
    len_list: list[int] = []
    taken = end = 0
    partial = False
    for slot, lo, hi in zip(slots.tolist(), los.tolist(), his.tolist(), strict=True):
        offset, nbytes = entries[slot].tolist()
        if offset == MISSING:
            at_list.append(-1)
            len_list.append(-1)
            continue
        if (expect >= 0 and nbytes != expect) or nbytes > ib.stored_max:
            return None
        hi = nbytes if hi < 0 else hi
        partial |= hi - lo < nbytes
        ranges.append((offset + lo, offset + hi, taken))
        at_list.append(taken)
        len_list.append(hi - lo)
        taken += hi - lo
        end = max(end, offset + nbytes)
    if ranges:
        if partial:
            # The last byte of the furthest inner chunk: in the shard, or it is cut short.
            ranges.append((end - 1, end, taken))
            taken += 1
        if staging is None or staging.nbytes < taken:
            staging = thread_scratch(taken, "stored")
        if array._store.read_ranges_into([(key, ranges)], staging)[0] != taken:
            return None
    return staging, np.array(at_list, dtype=np.int64), np.array(len_list, dtype=np.int64)


def _place_inner_parts(array: Array, parts: InnerParts, staging: np.ndarray, ats: np.ndarray,
                       lens: np.ndarray, dst: np.ndarray, whole: bool) -> bool:
    """Copy each part of the box out of what :func:`_fetch_shard_parts` read (raw inner
    chunks: their spans; else whole inner chunks, decoded first: straight into ``dst`` when
    it is the one inner chunk, ``whole``), filling those not stored.  False when an inner
    chunk does not decode (the caller takes the general path, which reports it)."""
    ib, sharding = array._inner_box, array._sharding
    assert ib is not None and sharding is not None
    itemsize = array._itemsize
    # (a list test: numpy's calls cost more than the lookup on a few parts)
    lens_list = lens.tolist()
    stored = None if -1 not in lens_list else lens >= 0
    if stored is not None:
        fill_parts(parts, dst, array._fill_bytes, ~stored)
    if ib.raw:
        if staging is not dst:  # (else read straight into it)
            copy_parts(parts, staging, ats, ib.strides_i64, dst, itemsize, stored)
        return True
    chain = sharding._evolved_pipeline()
    into = chain.can_decode_into
    ats_list = ats.tolist()

    def place(i: int) -> bool:
        at, n = ats_list[i], lens_list[i]
        if into:
            target = dst if whole else thread_scratch(ib.nbytes, "inner")
            if not chain.decode_into(staging[at:at + n], target):
                return False
            if target is dst:
                return True
        else:  # (chains that cannot decode into memory given, gzip say)
            try:
                chunk = chain.decode(staging[at:at + n], ib.shape)
            except ChunkDecodeError:
                return False
            target = chunk.reshape(-1).view(np.uint8)
        copy_parts(parts, target, parts.src_lo, ib.strides_i64, dst, itemsize,
                   slice(i, i + 1))
        return True

    todo = [i for i, n in enumerate(lens_list) if n >= 0]
    if len(todo) == 1:
        return place(todo[0])
    # Several inner chunks decode side by side (each into its thread's scratch; their parts
    # are disjoint regions of the output); asv ShardBoxReads tracks it.
    return all(map_unordered(place, todo))
