"""Planning of reads: which chunks a read touches, which pieces of them, which bytes, into
which part of the output.

Nothing here reads a store, decodes or copies an element: the functions below build the
plan types, and the modules beside this one execute them (the map of the read paths and
the glossary of the nouns used here are in :mod:`zarr3c.array.read`).  The plan types are
named tuples, or slotted classes over int64 arrays where a kernel takes the plan whole; a
few come from Cython kernels as plain tuples (:data:`Box`, the pieces of
``box_chunk_pieces``) and are read by the field names given here.

Per-array facts (:class:`BoxGrid`, :class:`InnerBox`) are computed once when the array's
metadata is set; per-read plans are built for each read.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c._buffers import INT64_MAX, empty_array
from zarr3c._kernels.boxes import box_chunk_pieces, count_box_pieces, plan_box_pieces
from zarr3c.codecs.sharding import MISSING
from zarr3c.errors import SelectionTooLargeError
from zarr3c.indexing import (
    ChunkTask,
    DimSelection,
    OrthogonalSelection,
    c_strides,
    group_positions,
    int64_array,
    plan_chunks,
)

if TYPE_CHECKING:
    from zarr3c.codecs.sharding import ShardIndex, ShardingCodec

__all__ = [
    "BOX_CHUNKS_MAX",
    "BOX_SHARDS_MAX",
    "OUTER_PLAN_MIN_BYTES",
    "RAW_BATCH_BYTES",
    "SHARD_BOX_MAX_INNER",
    "STORED_SLACK",
    "Box",
    "BoxGrid",
    "BoxPiece",
    "BoxPlan",
    "ChunkGroup",
    "GeneralPlan",
    "InnerBox",
    "InnerParts",
    "InnerPiece",
    "Member",
    "OuterChunks",
    "OuterGrid",
    "OuterPart",
    "OuterPiece",
    "OuterPieceMap",
    "Pieces",
    "RawBatch",
    "RawRequest",
    "RawSpan",
    "ShardRawBatch",
    "ShardRun",
    "Target",
    "as_box_pieces",
    "box_grid_of",
    "box_pieces",
    "boxes_sharing_chunks",
    "check_boxes_size",
    "inner_box_of",
    "inner_in_shard",
    "new_plan",
    "one_c_piece",
    "outer_chunks",
    "outer_chunks_at_most",
    "piece_ranges",
    "plan_general",
    "plan_inner_pieces",
    "plan_outer_grid",
    "plan_outer_parts",
    "plan_outer_pieces",
    "plan_raw_batches",
    "plan_shard_raw_batches",
    "raw_span",
    "shard_runs",
    "stored_max",
    "whole_chunk_run",
]

#: The most inner chunks a box read by the sharded short path may touch (2 per axis in 3-d).
SHARD_BOX_MAX_INNER = 8
#: The most chunks a box read by the chunked short path may cross (2 per axis in 3-d).
BOX_CHUNKS_MAX = 8
#: The most shards a box read shard by shard by the short path may cross (2 per axis in 3-d).
BOX_SHARDS_MAX = 8
#: Most bytes of ranges of raw chunks one batched store request asks for.
RAW_BATCH_BYTES = 16 << 20
#: Room per compressed inner chunk beyond its decoded size and 1/128 of it (what zstd may add).
STORED_SLACK = 4096

#: ``new_plan(Cls, (field, ...))`` builds a plan named tuple from its fields in order without
#: the class's Python-level constructor, a few times dearer: used where one is built per
#: read or per chunk on small reads (asv ``Read.time_random_reads``).
new_plan = tuple.__new__

# -- boxes ---------------------------------------------------------------------------------------

#: A step-1 box, as the ``basic_box`` kernel parses a basic key: ``(start, stop, shape,
#: scalar)``, the box ``[start, stop)`` per axis, numpy's result shape for the key, and
#: whether every axis is an integer (the read returns a scalar).  A plain tuple (it comes
#: from the kernel on every small read), always unpacked by these names.
Box = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool]


class BoxPiece(NamedTuple):
    """The part of a box in one chunk, as ``box_chunk_pieces`` plans it."""

    coords: tuple[int, ...]  # the chunk's grid coordinates
    first: list[int]  # the part's first element, within the chunk
    counts: list[int]  # its extent per axis
    src_lo: int  # byte of its first element in the chunk (C order)
    src_hi: int  # one past the last byte of its last element
    dst_at: int  # byte of its first element in the box's C-ordered output


def as_box_pieces(pieces: Iterable[tuple[Any, ...]]) -> list[BoxPiece]:
    """The kernel's plain piece tuples as :class:`BoxPiece` (the short paths unpack them by
    these names instead: no object per piece on a small read)."""
    return [BoxPiece._make(p) for p in pieces]


def box_pieces(start: tuple[int, ...], stop: tuple[int, ...], grid: BoxGrid, itemsize: int,
               most: int) -> list[BoxPiece] | None:
    """The pieces of the box ``[start, stop)`` per chunk of ``grid``, in C order of the
    chunks; None when it touches more than ``most`` chunks."""
    pieces = box_chunk_pieces(start, stop, grid.chunk_i64, grid.chunk_strides, itemsize, most)
    return None if pieces is None else as_box_pieces(pieces)


class BoxGrid(NamedTuple):
    """What the short paths need of a regular grid, computed once per shape: for a sharded
    array the grid's chunks are its shards."""

    array_shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    chunk_nbytes: int  # bytes of a raw chunk
    chunk_strides: np.ndarray  # its C-order byte strides (int64)
    chunk_i64: np.ndarray  # the chunk shape (int64)
    grid_steps: np.ndarray  # C-order steps numbering the chunks of the grid (int64)


def box_grid_of(shape: Sequence[int], chunk_shape: Sequence[int], itemsize: int) -> BoxGrid:
    """The :class:`BoxGrid` of an array of ``shape`` on the regular grid of ``chunk_shape``."""
    grid = [-(-n // c) for n, c in zip(shape, chunk_shape, strict=True)]
    return BoxGrid(
        array_shape=tuple(shape), chunk_shape=tuple(chunk_shape),
        chunk_nbytes=itemsize * math.prod(chunk_shape),
        chunk_strides=int64_array(c_strides(chunk_shape, itemsize)),
        chunk_i64=int64_array(chunk_shape), grid_steps=int64_array(c_strides(grid, 1)))


class InnerBox(NamedTuple):
    """What the sharded short paths need of a regular grid's inner chunks, computed once
    (int64 arrays for the kernels, lists for plain Python arithmetic)."""

    shape: tuple[int, ...]  # the inner chunk shape
    shape_i64: np.ndarray
    strides: list[int]  # its C-order byte strides
    strides_i64: np.ndarray
    per_shard: tuple[int, ...]  # inner chunks per shard, per axis
    shard_steps: list[int]  # C-order steps numbering the inner chunks of a shard
    nbytes: int  # bytes of a raw inner chunk
    raw: bool  # inner chunks stored as raw elements (read by byte ranges)
    shard_i64: np.ndarray  # the shard shape
    whole_los: np.ndarray  # 0 per part: whole inner chunks from their first byte ...
    whole_his: np.ndarray  # ... -1 per part: to their end (SHARD_BOX_MAX_INNER of each)
    stored_max: int  # the most bytes a stored inner chunk may hold here (stored_max)
    plain: tuple[int, bool] | None  # the codec's plain_index of a shard of the grid


def stored_max(nbytes: int) -> int:
    """The most bytes a small sharded read takes a stored inner chunk of ``nbytes`` decoded
    bytes to hold: the room it sets aside for each before their sizes are known, and the
    largest it reads itself (a larger one, possibly a damaged index's entry, goes to the
    general path, which checks it against the shard)."""
    return nbytes + nbytes // 128 + STORED_SLACK


def inner_box_of(sharding: ShardingCodec, shard_shape: Sequence[int], itemsize: int
                 ) -> InnerBox:
    """The :class:`InnerBox` of shards of ``shard_shape`` under ``sharding`` (evolved)."""
    inner = tuple(sharding.chunk_shape)
    per_shard = tuple(c // k for c, k in zip(shard_shape, inner, strict=True))
    strides = c_strides(inner, itemsize)
    nbytes = itemsize * math.prod(inner)
    return InnerBox(
        shape=inner, shape_i64=int64_array(inner), strides=strides,
        strides_i64=int64_array(strides), per_shard=per_shard,
        shard_steps=c_strides(per_shard, 1), nbytes=nbytes,
        raw=sharding.stores_raw_inner_chunks(), shard_i64=int64_array(shard_shape),
        whole_los=np.zeros(SHARD_BOX_MAX_INNER, dtype=np.int64),
        whole_his=np.full(SHARD_BOX_MAX_INNER, -1, dtype=np.int64),
        stored_max=stored_max(nbytes), plain=sharding.plain_index(shard_shape))


class InnerParts:
    """A box's parts per inner chunk of one shard, as ``plan_box_in_cell`` plans them: views
    of the blocks of its one int64 plan array (:mod:`.place` copies and fills them)."""

    __slots__ = ("counts", "dst_offsets", "dst_strides", "n", "slots", "src_hi", "src_lo")

    def __init__(self, plan: np.ndarray, ndim: int):
        n = self.n = len(plan) // (4 + 2 * ndim)
        #: per part: the inner chunk's C-order number in the shard, the bytes of the part's
        #: span in it, where its first element goes in the output; counts and output
        #: strides per axis
        self.slots, self.src_lo, self.src_hi, self.dst_offsets = (
            plan[:n], plan[n:2 * n], plan[2 * n:3 * n], plan[3 * n:4 * n])
        self.counts = plan[4 * n:(4 + ndim) * n].reshape(n, ndim)
        self.dst_strides = plan[(4 + ndim) * n:].reshape(n, ndim)


# -- many boxes ----------------------------------------------------------------------------------

class BoxPlan:
    """Step-1 boxes cut into their pieces per chunk of a regular grid (one kernel call), and
    the one output buffer that holds the boxes' elements, box after box (at most int64
    bytes: :func:`check_boxes_size`)."""

    __slots__ = ("counts", "coords", "dst_offsets", "dst_strides", "out", "src_ends",
                 "src_offsets", "starts")

    def __init__(self, boxes: Sequence[Box], chunk_shape: np.ndarray,
                 chunk_strides: np.ndarray, dtype: np.dtype):
        nboxes, ndim = len(boxes), len(chunk_shape)
        starts = np.array([box[0] for box in boxes], dtype=np.int64).reshape(nboxes, ndim)
        stops = np.array([box[1] for box in boxes], dtype=np.int64).reshape(nboxes, ndim)
        n = count_box_pieces(starts, stops, chunk_shape)
        # One allocation for the plan's arrays (contiguous slices of it).
        try:
            block = np.empty(n * (3 * ndim + 3) + nboxes + 1, dtype=np.int64)
        except (MemoryError, ValueError):  # (ValueError: beyond what numpy can index)
            raise SelectionTooLargeError(
                f"the selection is too large to read: its plan of {n} pieces (one per "
                f"chunk it touches) could not be allocated") from None
        self.coords = block[:n * ndim].reshape(n, ndim)
        self.counts = block[n * ndim:2 * n * ndim].reshape(n, ndim)
        self.dst_strides = block[2 * n * ndim:3 * n * ndim].reshape(n, ndim)
        at = 3 * n * ndim
        self.src_offsets = block[at:at + n]
        self.src_ends = block[at + n:at + 2 * n]
        self.dst_offsets = block[at + 2 * n:at + 3 * n]
        self.starts = block[at + 3 * n:]
        plan_box_pieces(starts, stops, chunk_shape, chunk_strides, dtype.itemsize, self.coords,
                        self.counts, self.src_offsets, self.src_ends, self.dst_offsets,
                        self.dst_strides, self.starts)
        self.out = empty_array(int(self.starts[-1]) // dtype.itemsize, dtype)

    def by_chunk(self, chunk_ids: Callable[[np.ndarray], np.ndarray]) -> Pieces:
        """The pieces grouped by chunk, in increasing order of ``chunk_ids(coords)`` (an int64
        id per row of chunk coordinates, equal for equal chunks)."""
        arrays: tuple[np.ndarray, ...] = (self.coords, self.counts, self.src_offsets,
                                          self.src_ends, self.dst_offsets, self.dst_strides)
        n = len(self.coords)
        if n == 1:
            return Pieces(self.out.reshape(-1).view(np.uint8), [0, 1], *arrays)
        # (in numpy: no Python step per piece, see zarr3c.array.read.native)
        ids = chunk_ids(self.coords)
        if (ids[1:] < ids[:-1]).any():
            order = np.argsort(ids, kind="stable")
            arrays = tuple([a[order] for a in arrays])
            ids = ids[order]
        bounds = [0, *(np.flatnonzero(ids[1:] != ids[:-1]) + 1).tolist(), n]
        return Pieces(self.out.reshape(-1).view(np.uint8), bounds, *arrays)

    def results(self, boxes: Sequence[Box],
                in_order: Callable[[np.ndarray], np.ndarray]) -> list[Any]:
        """What ``a[box]`` returns for each box: views of the output buffer."""
        itemsize = self.out.dtype.itemsize
        at = (self.starts // itemsize).tolist()
        out = self.out
        results = []
        for i, (_start, _stop, shape, scalar) in enumerate(boxes):
            result = out[at[i]:at[i + 1]].reshape(shape)
            results.append(result[()] if scalar else in_order(result))
        return results


def check_boxes_size(boxes: Sequence[Box], dtype: np.dtype) -> None:
    """Refuse boxes whose elements together (a :class:`BoxPlan`'s one output, whose byte
    offsets the kernels count in int64) exceed int64 bytes: SelectionTooLargeError, before
    any kernel sees them (callers ask only where the array's bytes times the number of
    boxes exceed it)."""
    nbytes = dtype.itemsize * sum(
        math.prod(e - b for b, e in zip(box[0], box[1], strict=True)) for box in boxes)
    if nbytes > INT64_MAX:
        shape = boxes[0][2] if len(boxes) == 1 else f"{len(boxes)} boxes"
        raise SelectionTooLargeError(
            f"the result of the selection ({shape} of {dtype}) is {nbytes} bytes: more "
            f"than int64 counts")


class Pieces:
    """Pieces of reads grouped by chunk: chunk ``n``'s are rows ``bounds[n]:bounds[n + 1]``
    of the arrays (see ``plan_box_pieces``), all landing in ``dst``."""

    __slots__ = ("_chunks", "bounds", "chunk_coords", "counts", "dst", "dst_offsets",
                 "dst_strides", "nchunks", "src_ends", "src_offsets")

    def __init__(self, dst: np.ndarray, bounds: list[int], coords: np.ndarray,
                 counts: np.ndarray, src_offsets: np.ndarray, src_ends: np.ndarray,
                 dst_offsets: np.ndarray, dst_strides: np.ndarray):
        self.dst = dst
        self.bounds = bounds
        self.nchunks = len(bounds) - 1
        #: each chunk's grid coordinates, an (nchunks, ndim) int64 array
        self.chunk_coords = coords[bounds[:-1]]
        self._chunks: list[tuple[int, ...]] | None = None
        self.counts = counts
        self.src_offsets = src_offsets
        self.src_ends = src_ends
        self.dst_offsets = dst_offsets
        self.dst_strides = dst_strides


    @property
    def chunks(self) -> list[tuple[int, ...]]:
        """Each chunk's grid coordinates as a tuple, made when first asked for (the Python
        path's; the native pipeline takes :attr:`chunk_coords`)."""
        if self._chunks is None:
            self._chunks = [tuple(row) for row in self.chunk_coords.tolist()]
        return self._chunks


def one_c_piece(pieces: Pieces, chunks: Sequence[int], grid_shape: np.ndarray,
                grid_strides: np.ndarray) -> list[bool]:
    """Per chunk numbered in ``chunks``: whether it is wanted whole, as one C-ordered piece
    of the output (its bytes in chunk order are a run of the output's), chunks being of
    ``grid_shape`` with C-order byte strides ``grid_strides``."""
    if not chunks:
        return []
    bounds = np.asarray(pieces.bounds, dtype=np.int64)
    numbers = np.asarray(chunks, dtype=np.int64)
    first = bounds[numbers]
    one = bounds[numbers + 1] - first == 1
    return (one & (pieces.counts[first] == grid_shape).all(axis=1)
            & (pieces.dst_strides[first] == grid_strides).all(axis=1)).tolist()


def piece_ranges(los: list[int], his: list[int], offset: int, at: int, src: list[int]
                 ) -> tuple[list[tuple[int, int, int]], int]:
    """Byte ranges ``(start, stop, at)`` reading pieces ``[los[i], his[i])`` of one raw chunk
    (at byte ``offset`` of its stored object) into a staging buffer from byte ``at``: the one
    range spanning them all when that is no longer than the pieces' ranges together, else
    each piece's.  Appends where each piece's first byte lands to ``src``; returns the ranges
    and the next free byte."""
    first, last = min(los), max(his)
    if last - first <= sum(his) - sum(los):
        src += [at + x - first for x in los]
        return [(offset + first, offset + last, at)], at + last - first
    ranges = []
    for x, y in zip(los, his, strict=True):
        ranges.append((offset + x, offset + y, at))
        src.append(at)
        at += y - x
    return ranges, at


class RawRequest(NamedTuple):
    """Byte ranges of one chunk stored as raw elements, for :func:`.raw.fetch_raw`."""

    coords: tuple[int, ...]  # the chunk
    ranges: list[tuple[int, int, int]]  # (start, stop, at): bytes of the chunk, where they go
    probe_at: int  # where its size probe (its last byte and the one after) goes
    nbytes: int  # the chunk's size (raw)


class RawBatch(NamedTuple):
    """One staging buffer's worth of a many-boxes read of raw chunks: what is fetched into
    it and which pieces are copied out of it."""

    requests: list[RawRequest]
    chunks: list[int]  # the chunk (number in the Pieces) of each request
    src: list[int]  # per piece lo:hi, where its first byte lands in the staging buffer
    skip: np.ndarray | None  # per piece lo:hi, True: its chunk is read whole instead
    lo: int  # the batch's first piece
    hi: int  # one past its last
    nbytes: int  # the staging buffer's size


def plan_raw_batches(pieces: Pieces, nbytes: int) -> tuple[list[RawBatch], list[int]]:
    """How a many-boxes read fetches chunks stored as raw elements (``nbytes`` each): per
    chunk either each piece's byte range or, when the pieces' ranges add up to more, the one
    range spanning them (:func:`piece_ranges`), batched into staging buffers of about
    :data:`RAW_BATCH_BYTES`; and the chunks whose ranges would be most of them, read whole
    instead (the second list)."""
    # Plain Python over lists: cheaper than numpy's per-call cost at these sizes.
    lo_list, hi_list = pieces.src_offsets.tolist(), pieces.src_ends.tolist()
    bounds = pieces.bounds
    batches: list[RawBatch] = []
    whole: list[int] = []
    requests: list[RawRequest] = []
    req_chunks: list[int] = []
    src: list[int] = []
    skip: np.ndarray | None = None
    first = 0  # the batch's first chunk
    at = 0
    for n in range(pieces.nchunks):
        a, b = bounds[n], bounds[n + 1]
        los, his = lo_list[a:b], hi_list[a:b]
        if 2 * min(max(his) - min(los), sum(his) - sum(los)) > nbytes:
            whole.append(n)
            if skip is None:
                skip = np.zeros(bounds[-1] - bounds[first], dtype=bool)
            skip[a - bounds[first]:b - bounds[first]] = True
            src += [0] * (b - a)
        else:
            ranges, at = piece_ranges(los, his, 0, at, src)
            requests.append(new_plan(RawRequest, (pieces.chunks[n], ranges, at, nbytes)))
            req_chunks.append(n)
            at += 2  # the size probe
        if at >= RAW_BATCH_BYTES or n == pieces.nchunks - 1:
            batches.append(RawBatch(requests, req_chunks, src,
                                    None if skip is None else skip[:b - bounds[first]],
                                    bounds[first], b, at))
            requests, req_chunks, src, skip = [], [], [], None
            first, at = n + 1, 0
    return batches, whole


class ShardRun(NamedTuple):
    """The pieces of a many-boxes read in one shard: chunks (inner chunks) ``first:end`` of
    the :class:`Pieces`, which :func:`shard_runs` groups by shard."""

    shard: tuple[int, ...]
    first: int
    end: int


def inner_in_shard(coords: tuple[int, ...], per_shard: tuple[int, ...]) -> tuple[int, ...]:
    """An inner chunk's coordinates within its shard (``coords``: in the array's inner
    grid; ``per_shard``: inner chunks per shard, per axis)."""
    return tuple(c % k for c, k in zip(coords, per_shard, strict=True))


def shard_runs(pieces: Pieces, per_shard: tuple[int, ...]) -> list[ShardRun]:
    """The runs of inner chunks of ``pieces`` (grouped by shard first) in one shard each."""
    n = pieces.nchunks
    if not n:
        return []
    # (in numpy: no Python step per inner chunk)
    shards = pieces.chunk_coords // np.asarray(per_shard, dtype=np.int64)
    cuts = (np.flatnonzero((shards[1:] != shards[:-1]).any(axis=1)) + 1).tolist()
    firsts = [0, *cuts]
    return [new_plan(ShardRun, (tuple(row), first, end)) for row, first, end in
            zip(shards[firsts].tolist(), firsts, [*cuts, n], strict=True)]


class ShardRawBatch(NamedTuple):
    """One staging buffer's worth of a many-boxes read of a shard's raw inner chunks."""

    ranges: list[tuple[int, int, int]]  # (start, stop, at): bytes of the shard, where they go
    src: list[int]  # per piece lo:hi, where its first byte lands in the staging buffer
    missing: np.ndarray | None  # per piece lo:hi, True: its inner chunk is not stored
    lo: int  # the batch's first piece
    hi: int  # one past its last
    nbytes: int  # the staging buffer's size


def plan_shard_raw_batches(pieces: Pieces, run: ShardRun, index: ShardIndex, inner: InnerBox,
                           limit: int) -> list[ShardRawBatch] | None:
    """How a many-boxes read fetches the raw inner chunks of one shard through its
    ``index``: each inner chunk's pieces by :func:`piece_ranges`, batched into staging
    buffers of about ``limit`` bytes, each batch's ranges ending with the last byte of its
    furthest inner chunk (in the shard, or the shard is cut short).  None when a stored
    inner chunk is not the size of raw elements (the shard reader says what it is)."""
    bounds = pieces.bounds
    g0, g1 = run.first, run.end
    p0, p1 = bounds[g0], bounds[g1]
    slots = [sum(c * s for c, s in zip(inner_in_shard(pieces.chunks[n], inner.per_shard),
                                       inner.shard_steps, strict=True))
             for n in range(g0, g1)]
    where = index.flat[slots].tolist()  # (offset, nbytes) per inner chunk
    if any(o != MISSING and n != inner.nbytes for o, n in where):
        return None
    lo_list = pieces.src_offsets[p0:p1].tolist()
    hi_list = pieces.src_ends[p0:p1].tolist()
    batches: list[ShardRawBatch] = []
    ranges: list[tuple[int, int, int]] = []
    src: list[int] = []
    missing: np.ndarray | None = None
    at = end = 0
    q0 = p0  # first piece of the batch
    for n, (offset, nbytes) in zip(range(g0, g1), where, strict=True):
        a, b = bounds[n], bounds[n + 1]
        if offset == MISSING:
            if missing is None:
                missing = np.zeros(p1 - q0, dtype=bool)
            missing[a - q0:b - q0] = True
            src += [0] * (b - a)
        else:
            end = max(end, offset + nbytes)
            more, at = piece_ranges(lo_list[a - p0:b - p0], hi_list[a - p0:b - p0], offset, at,
                                    src)
            ranges += more
        if at < limit and n < g1 - 1:
            continue
        if ranges:
            ranges.append((end - 1, end, at))
        batches.append(ShardRawBatch(ranges, src, None if missing is None else missing[:b - q0],
                                     q0, b, at + 1))
        ranges, src, missing, at, end, q0 = [], [], None, 0, 0, b
    return batches


def boxes_sharing_chunks(boxes: Sequence[Box], general: Sequence[OrthogonalSelection],
                         grid: BoxGrid, dims: Sequence[Any], itemsize: int) -> list[int]:
    """Which of ``boxes`` (their numbers, in the order found) ``get_many`` reads with the
    ``general`` selections so that a chunk is read once: those sharing a chunk with them,
    repeatedly (a moved box may share a chunk with a box not yet moved)."""
    box_chunks = [{piece.coords for piece in box_pieces(start, stop, grid, itemsize,
                                                         sys.maxsize) or ()}
                  for start, stop, _shape, _scalar in boxes]
    chunks = {task.coords for sel in general if sel.size for task in plan_chunks(sel, dims)}
    moved: list[int] = []
    taken: set[int] = set()
    while True:
        more = [n for n, mine in enumerate(box_chunks)
                if n not in taken and not chunks.isdisjoint(mine)]
        if not more:
            return moved
        for n in more:
            taken.add(n)
            moved.append(n)
            chunks |= box_chunks[n]


# -- the general read ----------------------------------------------------------------------------

class Member(NamedTuple):
    """A chunk task of one of the selections a general read fills."""

    task: ChunkTask
    out: int  # which output


class Target(NamedTuple):
    """An output of a general read, as the copy kernels write it."""

    dst: np.ndarray  # its bytes (flat uint8)
    strides: list[int]  # its C-order byte strides


class ChunkGroup(NamedTuple):
    """The tasks of a general read in one chunk: the chunk is read and decoded once."""

    coords: tuple[int, ...]
    members: list[Member]


class RawSpan(NamedTuple):
    """The bytes ``[lo, hi)`` of a chunk stored as raw elements spanning every element a
    general read selects in it (fetched instead of the whole chunk)."""

    coords: tuple[int, ...]
    lo: int
    hi: int
    nbytes: int  # the chunk's size
    members: list[Member]
    regions: list[tuple[int, np.ndarray]]  # per member, its byte offset and strides in the chunk


class GeneralPlan(NamedTuple):
    """A general read: its outputs, and its chunks, read whole or by :class:`RawSpan`."""

    outs: list[np.ndarray]
    targets: list[Target]
    whole: list[ChunkGroup]  # chunks (shards) read whole, or through their index
    spans: list[RawSpan]


def plan_general(counts: Sequence[Sequence[int]], plans: Sequence[Iterable[ChunkTask]],
                 dtype: np.dtype, chunk_shape_at: Callable[[tuple[int, ...]], tuple[int, ...]],
                 raw: bool, outs: Sequence[np.ndarray | None] | None = None) -> GeneralPlan:
    """The outputs of shapes ``counts`` (allocated, unless given in ``outs``: C-contiguous
    arrays of those shapes) and their chunk ``plans`` grouped by chunk; ``raw``: chunks are
    stored as raw elements, and a chunk whose selected elements span at most half of it is
    fetched by that span (:class:`RawSpan`)."""
    itemsize = dtype.itemsize
    given = outs or [None] * len(counts)
    arrays = [empty_array(c, dtype) if out is None else out
              for c, out in zip(counts, given, strict=True)]
    targets = [new_plan(Target, (out.reshape(-1).view(np.uint8), c_strides(c, itemsize)))
               for out, c in zip(arrays, counts, strict=True)]
    groups: dict[tuple[int, ...], list[Member]] = {}
    for i, (plan, out) in enumerate(zip(plans, arrays, strict=True)):
        if out.size:
            for task in plan:
                groups.setdefault(task.coords, []).append(new_plan(Member, (task, i)))
    whole: list[ChunkGroup] = []
    spans: list[RawSpan] = []
    for coords, members in groups.items():
        span = raw_span(coords, members, chunk_shape_at(coords), itemsize) if raw else None
        if span is None:
            whole.append(new_plan(ChunkGroup, (coords, members)))
        else:
            spans.append(span)
    return new_plan(GeneralPlan, (arrays, targets, whole, spans))


def raw_span(coords: tuple[int, ...], members: list[Member], chunk_shape: tuple[int, ...],
             itemsize: int) -> RawSpan | None:
    """For a chunk stored as raw elements: the byte range spanning the selected elements,
    when it is at most half the chunk (None: read the chunk whole)."""
    if not all(task.strided for task, _ in members):
        return None
    strides = c_strides(chunk_shape, itemsize)
    regions = [task.chunk_region(strides) for task, _ in members]
    lo = min(offset for offset, _ in regions)
    hi = max(sum((b - 1) * s for (_, b), s in zip(task.bounds(), strides, strict=True))
             for task, _ in members) + itemsize
    nbytes = math.prod(chunk_shape) * itemsize
    if 2 * (hi - lo) > nbytes:
        return None
    return new_plan(RawSpan, (coords, lo, hi, nbytes, members, regions))


def whole_chunk_run(chunk_shape: tuple[int, ...], member: Member, target: Target,
                    itemsize: int) -> np.ndarray | None:
    """Where a whole chunk's C-ordered bytes land in the member's output, if they are one run
    of it (the chunk is then decoded straight there); else None."""
    task = member.task
    if (not task.strided or task.counts != chunk_shape
            or any(run != (0, 1) for run in task.local)):
        return None
    offset, steps = task.out_region(target.strides)
    if any(n > 1 and step != s for n, step, s
           in zip(chunk_shape, steps.tolist(), c_strides(chunk_shape, itemsize), strict=True)):
        return None
    return target.dst[offset:offset + math.prod(chunk_shape) * itemsize]


class InnerPiece(NamedTuple):
    """What a general read copies out of one inner chunk of a shard into one output."""

    out: int  # which output
    dst_offset: int  # byte of its first element there
    dst_strides: np.ndarray
    counts: np.ndarray
    src_offset: int  # byte of its first element in the inner chunk
    src_strides: np.ndarray


def plan_inner_pieces(sharding: ShardingCodec, shard_shape: tuple[int, ...],
                      members: list[Member], targets: list[Target], itemsize: int
                      ) -> dict[tuple[int, ...], list[InnerPiece]]:
    """Strided tasks in one shard cut per inner chunk: inner chunk -> its pieces.  Plain
    integer arithmetic per axis (runs -> inner chunks), as few arrays as can be."""
    inner_shape = sharding.chunk_shape
    inner_strides = c_strides(inner_shape, itemsize)
    pieces: dict[tuple[int, ...], list[InnerPiece]] = {}
    # Selections of one shape share their stride and count arrays (read-only here).
    arrays: dict[tuple[int, ...], np.ndarray] = {}

    def shared_int64(values: tuple[int, ...]) -> np.ndarray:
        arr = arrays.get(values)
        if arr is None:
            arr = arrays[values] = int64_array(values)
        return arr

    for task, i in members:
        out_strides = targets[i].strides
        local, out, counts = task.local, task.out, task.counts
        dst_strides = shared_int64(tuple(step * s for (_, step), s
                                         in zip(out, out_strides, strict=True)))
        src_strides = shared_int64(tuple(step * s for (_, step), s
                                         in zip(local, inner_strides, strict=True)))
        inner: list[int] = []
        src_offset = 0
        for (start, step), n, c, s in zip(local, counts, inner_shape, inner_strides,
                                          strict=True):
            q = start // c
            if (start + (n - 1) * step) // c != q:
                break
            inner.append(q)
            src_offset += (start - q * c) * s
        else:  # one inner chunk (a small selection): one piece
            pieces.setdefault(tuple(inner), []).append(InnerPiece(
                i, sum(start * s for (start, _), s in zip(out, out_strides, strict=True)),
                dst_strides, shared_int64(tuple(counts)), src_offset, src_strides))
            continue
        runs = sharding.project_runs(shard_shape, local, counts)
        out_starts = [start * s for (start, _), s in zip(out, out_strides, strict=True)]
        out_steps = [step * s for (_, step), s in zip(out, out_strides, strict=True)]
        for combo in itertools.product(*runs):
            # combo: per axis (inner chunk, first output index, count, first index within)
            pieces.setdefault(tuple(p[0] for p in combo), []).append(InnerPiece(
                i,
                sum(o + p[1] * st for p, o, st in zip(combo, out_starts, out_steps, strict=True)),
                dst_strides,
                shared_int64(tuple(p[2] for p in combo)),
                sum(p[3] * s for p, s in zip(combo, inner_strides, strict=True)),
                src_strides))
    return pieces


class OuterPart(NamedTuple):
    """An outer-product selection of one shard into an output: element ``(i0, i1, ...)``
    of the shard goes to byte ``dst_offsets[0][i0] + dst_offsets[1][i1] + ...`` of ``dst``."""

    dst: np.ndarray  # the output's bytes (a writable uint8 buffer)
    local: tuple[np.ndarray, ...]  # per axis, the selected indices within the shard
    dst_offsets: tuple[np.ndarray, ...]  # per axis, the output byte offset of each


class OuterPiece(NamedTuple):
    """An :class:`OuterPart`'s share of one inner chunk: one ``copy_outer`` call."""

    dst: np.ndarray
    src_offsets: np.ndarray  # per axis in turn, byte offsets within the inner chunk
    dst_offsets: np.ndarray  # per axis in turn, byte offsets in the output
    counts: np.ndarray  # per axis, how many of the offsets above are that axis's


def plan_outer_parts(members: list[Member], targets: list[Target]) -> list[OuterPart]:
    """Index-array tasks in one shard as :func:`.points.read_shard_outer` takes them."""
    parts = []
    for task, i in members:
        dst, out_strides = targets[i]
        parts.append(OuterPart(dst, task.local_indices(), tuple(
            x * s for x, s in zip(task.out_indices(), out_strides, strict=True))))
    return parts


#: Inner chunk coordinates -> the :class:`OuterPiece` copies out of that inner chunk.
OuterPieceMap = dict[tuple[int, ...], list[OuterPiece]]


def plan_outer_pieces(parts: Sequence[OuterPart], inner_shape: Sequence[int], itemsize: int
                      ) -> OuterPieceMap:
    """The pieces of outer-product ``parts`` per inner chunk (of ``inner_shape``) they
    touch: per axis the indices grouped by inner chunk, then every combination."""
    inner_strides = c_strides(inner_shape, itemsize)
    pieces: OuterPieceMap = {}
    for dst, local, dst_dim in parts:
        # per axis: (inner chunk index, byte offsets within it, output byte offsets)
        per_axis: list[list[tuple[int, np.ndarray, np.ndarray]]] = []
        for idx, offs, c, s in zip(local, dst_dim, inner_shape, inner_strides, strict=True):
            chunk_of, pos = np.divmod(idx, c)
            per_axis.append([(int(chunk_of[g[0]]), pos[g] * s, offs[g])
                             for g in group_positions(chunk_of)])
        for combo in itertools.product(*per_axis):
            inner, src_offsets, dst_offsets = zip(*combo, strict=True)
            pieces.setdefault(tuple(inner), []).append(OuterPiece(
                dst, np.concatenate(src_offsets), np.concatenate(dst_offsets),
                np.asarray([len(o) for o in src_offsets], dtype=np.int64)))
    return pieces


#: An outer-product plan (:func:`plan_outer_grid`) may take up to this many bytes for any
#: read, and beyond it a quarter of the output's bytes (about 40 bytes per offset: its
#: source and destination, the gather building them, the kernel's checked copies): a
#: selection whose offsets would take more (a long step over small chunks: one offset per
#: element read) is read by the general path, which keeps a step as start and step.
OUTER_PLAN_MIN_BYTES = 1 << 20


def _runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[k] <= i < starts[k] + lengths[k]`` for each ``k`` in turn, one
    int64 array (no Python loop over the runs)."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(
        int(ends[-1]) if len(ends) else 0, dtype=np.int64)


def _bounds(counts: np.ndarray) -> np.ndarray:
    """Where each piece's offsets start, and the end: pieces of ``counts`` (P, ndim) laid out
    one after another, each its axes' offsets in turn."""
    return np.concatenate([[0], np.cumsum(counts.sum(axis=1))]).astype(np.int64)


class OuterGrid(NamedTuple):
    """An orthogonal selection over a regular grid (of chunks, or of a sharded array's inner
    chunks) as the native pipeline's outer-product pieces, one per (inner) chunk touched:
    piece ``p`` reads the chunk at grid coordinates ``coords[p]`` and copies the outer
    product of its per-axis offsets, ``counts[p]`` per axis, rows ``bounds[p]:bounds[p +
    1]`` of ``src_offsets`` (bytes in the decoded chunk) and ``dst_offsets`` (bytes in the
    C-ordered output), as ``scatter.copy_outer`` does."""

    coords: np.ndarray  # (P, ndim) int64
    bounds: np.ndarray  # (P + 1,) int64
    src_offsets: np.ndarray  # int64
    dst_offsets: np.ndarray  # int64
    counts: np.ndarray  # (P, ndim) int64

    def take(self, rows: np.ndarray) -> OuterGrid:
        """The pieces at ``rows``, in that order, as a grid of their own."""
        counts = self.counts[rows]
        at = _runs(self.bounds[rows], counts.sum(axis=1))
        return OuterGrid(self.coords[rows], _bounds(counts), self.src_offsets[at],
                         self.dst_offsets[at], counts)


class OuterChunks(NamedTuple):
    """The pieces of one or more :class:`OuterGrid` (several selections read together,
    each into its own part of one output buffer) grouped by the (inner) chunk they read:
    chunk ``u`` at ``coords[u]`` has the pieces ``firsts[u]:ends[u]`` of ``grid`` (its
    pieces sorted by chunk), so a chunk several selections touch is read once."""

    grid: OuterGrid
    coords: np.ndarray  # (U, ndim) int64, in C order of the grid
    firsts: np.ndarray  # (U,) int64
    ends: np.ndarray  # (U,) int64

    def take(self, chunks: np.ndarray) -> OuterChunks:
        """The chunks at ``chunks`` (in that order) and their pieces, on their own."""
        lengths = self.ends[chunks] - self.firsts[chunks]
        ends = np.cumsum(lengths)
        return OuterChunks(self.grid.take(_runs(self.firsts[chunks], lengths)),
                           self.coords[chunks], ends - lengths, ends)


def outer_chunks(grids: Sequence[OuterGrid]) -> OuterChunks:
    """The pieces of ``grids`` (each into its own part of one output buffer) grouped by
    chunk: one stable sort of their coordinates."""
    if len(grids) == 1:
        grid = grids[0]  # (its pieces are one per chunk, in C order already)
    else:
        counts = np.concatenate([g.counts for g in grids])
        grid = OuterGrid(np.concatenate([g.coords for g in grids]), _bounds(counts),
                         np.concatenate([g.src_offsets for g in grids]),
                         np.concatenate([g.dst_offsets for g in grids]), counts)
        grid = grid.take(np.lexsort(grid.coords.T[::-1]))
    coords = grid.coords
    n = len(coords)
    new = np.ones(n, dtype=bool)
    new[1:] = (coords[1:] != coords[:-1]).any(axis=1)
    firsts = np.flatnonzero(new).astype(np.int64)
    return OuterChunks(grid, coords[firsts], firsts, np.append(firsts[1:], n).astype(np.int64))


def _axis_indices(dim: Any) -> np.ndarray:
    """A dimension's selected indices in output order (int64)."""
    if isinstance(dim, DimSelection):
        idx = dim.start + dim.step * np.arange(dim.count, dtype=np.int64)
        return idx[::-1] if dim.reverse else idx
    return np.asarray(dim.indices, dtype=np.int64)


def outer_chunks_at_most(sel: OrthogonalSelection, grid_chunk: Sequence[int]) -> int:
    """At most how many chunks of the regular grid of ``grid_chunk`` an orthogonal
    selection touches: per axis the fewer of its indices and of the chunks from its least
    to its greatest index, multiplied (no grouping: a few numpy calls at most)."""
    total = 1
    for dim, size in zip(sel.dims, grid_chunk, strict=True):
        if isinstance(dim, DimSelection):
            lo, hi = dim.start, dim.start + dim.step * max(0, dim.count - 1)
        elif dim.count:
            lo, hi = int(dim.indices.min()), int(dim.indices.max())
        else:
            return 0
        total *= min(dim.count, hi // size - lo // size + 1)
    return total


def plan_outer_grid(sel: OrthogonalSelection, grid_chunk: Sequence[int], itemsize: int,
                    base: int = 0) -> OuterGrid | None:
    """The :class:`OuterGrid` of a non-empty orthogonal selection of at least one dimension
    over the regular grid of
    ``grid_chunk`` (edge chunks stored whole), into an output of ``sel.counts`` in C order
    from byte ``base`` of the output buffer on (added to the first axis's offsets);
    None where its offsets would take more memory than :data:`OUTER_PLAN_MIN_BYTES` allows.
    Per axis, the indices are grouped by chunk (one stable sort: repeats keep the user's
    order, so the last wins as in numpy); the pieces are every combination of one group per
    axis, built without a Python loop over them."""
    ndim = len(sel.dims)
    counts_out = sel.counts
    out_strides = c_strides(counts_out, itemsize)
    chunk_strides = c_strides(grid_chunk, itemsize)
    out_nbytes = math.prod(counts_out) * itemsize
    budget = max(OUTER_PLAN_MIN_BYTES, out_nbytes // 4) // 40  # (offsets)
    ids, starts, lens, srcs, dsts = [], [], [], [], []
    for d in range(ndim):
        idx = _axis_indices(sel.dims[d])
        order = np.argsort(idx // grid_chunk[d], kind="stable")
        chunk_of, pos = np.divmod(idx[order], grid_chunk[d])
        cuts = np.flatnonzero(chunk_of[1:] != chunk_of[:-1]) + 1
        first = np.concatenate([[0], cuts]).astype(np.int64)
        ids.append(chunk_of[first])
        starts.append(first)
        lens.append(np.diff(np.append(first, len(idx))))
        srcs.append(pos * chunk_strides[d])
        dsts.append(order.astype(np.int64) * out_strides[d] + (base if d == 0 else 0))
    groups = [len(g) for g in ids]
    npieces = math.prod(groups)
    # the offsets' count: each axis's indices once per combination of the other axes' groups
    noffsets = sum(len(srcs[d]) * npieces // groups[d] for d in range(ndim))
    if noffsets > budget:
        return None
    which = np.indices(groups, dtype=np.int64).reshape(ndim, -1)
    coords = np.stack([ids[d][which[d]] for d in range(ndim)], axis=1)
    counts = np.stack([lens[d][which[d]] for d in range(ndim)], axis=1)
    axis_at = np.cumsum([0] + [len(x) for x in srcs])  # (each axis's offsets in the concat)
    seg = np.stack([axis_at[d] + starts[d][which[d]] for d in range(ndim)], axis=1)
    at = _runs(seg.reshape(-1), counts.reshape(-1))
    return OuterGrid(coords, _bounds(counts), np.concatenate(srcs)[at],
                     np.concatenate(dsts)[at], counts)
