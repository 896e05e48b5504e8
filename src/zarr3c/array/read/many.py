"""The many-boxes path: step-1 boxes (one, or the many of ``get_many``) on a regular grid,
every box cut into its pieces per chunk by one kernel call (:class:`.plan.BoxPlan`), the
boxes' elements in one output buffer, and each chunk read once however many boxes it feeds.

Raw chunks are read by byte ranges (each piece's, or the span of them all) straight into
one staging buffer per batch and copied out with one kernel call; the others are read and
decoded whole on the thread pool, one copy call per chunk.  Sharded arrays: per shard the
index is read once, then raw inner chunks by byte ranges into a staging buffer, other inner
chunks read and decoded by the shard reader (``ShardingCodec.read_inner_chunks_into``), each
copied out once.  Same results as the general path (tested against it)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c._buffers import INT64_MAX, empty_aligned
from zarr3c._kernels.boxes import basic_box
from zarr3c._kernels.scatter import copy_pieces, fill_pieces
from zarr3c.array.read.chunk import inner_memory, read_chunk, read_chunks_together
from zarr3c.array.read.general import basic_result, read_selections
from zarr3c.array.read.native import (
    chunks_native,
    read_chunks_natively,
    read_shards_natively,
    shards_native,
)
from zarr3c.array.read.place import (
    copy_chunk_pieces,
    copy_pieces_from,
    fill_chunk_pieces,
)
from zarr3c.array.read.plan import (
    Box,
    BoxPlan,
    Pieces,
    ShardRun,
    boxes_sharing_chunks,
    check_boxes_size,
    inner_in_shard,
    one_c_piece,
    plan_raw_batches,
    plan_shard_raw_batches,
    shard_runs,
)
from zarr3c.array.read.raw import fetch_raw, read_raw_whole
from zarr3c.codecs.sharding import ShardIndex, batch_decoder
from zarr3c.codecs.sharding import read as shard_read
from zarr3c.concurrency import map_unordered
from zarr3c.errors import InvalidTypeError
from zarr3c.indexing import int64_array, parse_basic_selection

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["get_many", "read_boxes"]


def get_many(array: Array, selections: Iterable[Any]) -> list[Any]:
    """``[array[s] for s in selections]``, every chunk read once (see
    :meth:`zarr3c.Array.get_many`): the step-1 boxes by :func:`read_boxes`, the other
    selections (and the boxes sharing a chunk with them) by the general read."""
    if isinstance(selections, str | bytes) or not isinstance(selections, Iterable):
        raise InvalidTypeError(
            f"get_many() takes an iterable of selections, not {type(selections).__name__}"
        )
    selections = list(selections)
    results: list[Any] = [None] * len(selections)
    grid = array._box_grid
    boxes: list[Box] = []
    at: list[int] = []
    rest: list[int] = []
    for i, s in enumerate(selections):
        box = None if grid is None else basic_box(s, grid.array_shape)
        if box is None:
            rest.append(i)
        else:
            boxes.append(box)
            at.append(i)
    parsed = [parse_basic_selection(selections[i], array.shape) for i in rest]
    if boxes and parsed:
        assert grid is not None
        # A chunk is read once: boxes in chunks the general selections read go with them.
        moved = boxes_sharing_chunks(boxes, parsed, grid, array._dims, array._itemsize)
        for n in moved:
            rest.append(at[n])
            parsed.append(parse_basic_selection(selections[at[n]], array.shape))
        gone = set(moved)
        boxes = [b for n, b in enumerate(boxes) if n not in gone]
        at = [i for n, i in enumerate(at) if n not in gone]
    if boxes:
        for i, r in zip(at, read_boxes(array, boxes), strict=True):
            results[i] = r
    for i, sel, r in zip(rest, parsed, read_selections(array, parsed), strict=True):
        results[i] = basic_result(array, selections[i], sel, r)
    return results


def read_boxes(array: Array, boxes: Sequence[Box]) -> list[Any]:
    """What ``array[box]`` returns for each of ``boxes`` (``basic_box``'s), read together."""
    if array.nbytes * len(boxes) > INT64_MAX:  # (only then can their output exceed int64)
        check_boxes_size(boxes, array.dtype)
    if array._sharding is not None:
        return _read_shard_boxes(array, boxes)
    grid = array._box_grid
    assert grid is not None
    plan = BoxPlan(boxes, grid.chunk_i64, grid.chunk_strides, array.dtype)
    pieces = plan.by_chunk(lambda coords: coords @ grid.grid_steps)
    chain = chunks_native(array)
    if chain is not None:
        # Executed natively; the chunks the kernel could not read are read again (and
        # reported) by the Python path.
        failed = read_chunks_natively(array, pieces, chain)
        if failed:
            _read_whole_pieces(array, pieces, failed)
    elif array._pipeline.stores_raw_elements:
        _read_raw_pieces(array, pieces, grid.chunk_nbytes)
    else:
        _read_whole_pieces(array, pieces)
    return plan.results(boxes, array._in_order)


def _read_whole_pieces(array: Array, pieces: Pieces, chunks: Sequence[int] | None = None
                       ) -> None:
    """Decode each chunk of ``pieces`` (or those numbered ``chunks``) on the thread pool and
    copy its pieces out; a chunk wanted whole in one C-ordered piece of the output is
    decoded straight into it where the codecs can (``CodecPipeline.decode_into``)."""
    grid = array._box_grid
    assert grid is not None
    itemsize = array._itemsize
    fill = array._fill_bytes
    todo = range(pieces.nchunks) if chunks is None else chunks
    into: set[int] = set()
    if array._pipeline.can_decode_into:
        direct = one_c_piece(pieces, todo, grid.chunk_i64, grid.chunk_strides)
        into = {n for n, d in zip(todo, direct, strict=True) if d}
    partial = array._pipeline.can_decode_prefix

    def read_whole(n: int, raw: Any) -> None:
        lo, hi = pieces.bounds[n], pieces.bounds[n + 1]
        target = None
        if n in into:
            at = int(pieces.dst_offsets[lo])
            target = pieces.dst[at:at + grid.chunk_nbytes]
        # (the pieces read nothing past their furthest end: only that much is decoded)
        need = int(pieces.src_ends[lo:hi].max()) if partial and target is None else None
        chunk = read_chunk(array, pieces.chunks[n], into=target, need=need, raw=raw)
        if chunk is None:
            fill_pieces(pieces.dst, pieces.dst_offsets[lo:hi], pieces.dst_strides[lo:hi],
                        pieces.counts[lo:hi], fill)
            return
        if chunk is target:
            return
        copy_pieces(chunk.reshape(-1).view(np.uint8), pieces.src_offsets[lo:hi],
                    grid.chunk_strides, pieces.dst, pieces.dst_offsets[lo:hi],
                    pieces.dst_strides[lo:hi], pieces.counts[lo:hi], itemsize)

    read_chunks_together(array, todo, lambda n: pieces.chunks[n], read_whole)


def _read_raw_pieces(array: Array, pieces: Pieces, nbytes: int) -> None:
    """Chunks stored as raw elements (``nbytes`` each), as :func:`.plan.plan_raw_batches`
    plans them: each batch's ranges read straight into a staging buffer and its pieces
    copied out with one kernel call (those of chunks not stored filled); chunks wanted
    mostly whole read whole.  Each request's size probe makes a stored chunk of the wrong
    size an error naming its key, as a decode is."""
    grid = array._box_grid
    assert grid is not None
    batches, whole = plan_raw_batches(pieces, nbytes)
    bounds = pieces.bounds
    for batch in batches:
        buf = empty_aligned(batch.nbytes)
        missing = None
        for c, found in zip(batch.chunks, fetch_raw(array, batch.requests, buf), strict=True):
            if found:
                continue
            if missing is None:
                missing = np.zeros(batch.hi - batch.lo, dtype=bool)
            missing[bounds[c] - batch.lo:bounds[c + 1] - batch.lo] = True
        copy_pieces_from(pieces, buf, int64_array(batch.src), grid.chunk_strides, batch.lo,
                         batch.hi, missing, array._fill_bytes, array._itemsize, batch.skip)
    if whole:
        # A chunk wanted whole in one C-ordered piece of the output is read straight into
        # it; the others are read whole and copied out.
        direct = one_c_piece(pieces, whole, grid.chunk_i64, grid.chunk_strides)
        into = [n for n, d in zip(whole, direct, strict=True) if d]
        if into:
            map_unordered(lambda n: _read_raw_chunk_into(array, pieces, n, nbytes), into)
            whole = [n for n, d in zip(whole, direct, strict=True) if not d]
        if whole:
            _read_whole_pieces(array, pieces, whole)


def _read_raw_chunk_into(array: Array, pieces: Pieces, n: int, nbytes: int) -> None:
    """Read raw chunk ``n`` of ``pieces`` (``nbytes`` bytes, one piece: all of it, C ordered
    in the output) straight into the output."""
    coords, p = pieces.chunks[n], pieces.bounds[n]
    if not read_raw_whole(array, coords, pieces.dst, int(pieces.dst_offsets[p]), nbytes):
        fill_chunk_pieces(pieces, n, array._fill_bytes)


# -- sharded -------------------------------------------------------------------------------------

class _ShardRead(NamedTuple):
    """What every shard of one many-boxes read of a sharded array shares."""

    array: Array
    pieces: Pieces
    bounds: np.ndarray  # pieces.bounds, int64
    kernels: Any  # the inner chain's batch kernels, or None


def _read_shard_boxes(array: Array, boxes: Sequence[Box]) -> list[Any]:
    """:func:`read_boxes` of a sharded array: the pieces per inner chunk, grouped by shard,
    each shard read on the thread pool (:func:`_read_shard_run`)."""
    ib, grid = array._inner_box, array._box_grid
    assert ib is not None and grid is not None
    cps = ib.per_shard
    plan = BoxPlan(boxes, ib.shape_i64, ib.strides_i64, array.dtype)
    cps_i64, per_shard = int64_array(cps), math.prod(cps)
    cps_steps = int64_array(ib.shard_steps)
    pieces = plan.by_chunk(lambda coords: (coords // cps_i64) @ grid.grid_steps
                           * per_shard + (coords % cps_i64) @ cps_steps)
    runs = shard_runs(pieces, cps)
    assert array._sharding is not None
    read = _ShardRead(array, pieces, int64_array(pieces.bounds),
                      array._sharding.inner_batch_kernels())
    chain = shards_native(array)
    if chain is not None:
        # Executed natively; the shards the kernel could not read are read again below.
        failed = set(read_shards_natively(array, pieces, chain))
        runs = [run for run in runs if run.shard in failed]
    map_unordered(lambda run: _read_shard_run(read, run), runs)
    return plan.results(boxes, array._in_order)


def _read_shard_run(read: _ShardRead, run: ShardRun) -> None:
    """One shard's pieces: its index read once, then raw inner chunks by byte ranges
    (:func:`_read_raw_inner`), others through the shard reader (:func:`_decode_inner`)."""
    array, pieces = read.array, read.pieces
    sharding, ib, grid = array._sharding, array._inner_box, array._box_grid
    assert sharding is not None and ib is not None and grid is not None
    key = array.chunk_key(run.shard)
    index = sharding.read_index(array._ranges_of(key), grid.chunk_shape, key=key)
    p0, p1 = pieces.bounds[run.first], pieces.bounds[run.end]
    if index is None:
        copy_pieces_from(pieces, pieces.dst, pieces.src_offsets[p0:p1], ib.strides_i64, p0, p1,
                         np.ones(p1 - p0, dtype=bool), array._fill_bytes, array._itemsize)
        return
    if not ib.raw or not _read_raw_inner(read, run, key, index):
        _decode_inner(read, run, key, index)


def _decode_inner(read: _ShardRead, run: ShardRun, key: str, index: ShardIndex) -> None:
    """The shard reader: fetches, decodes (and reports bad inner chunks); with batch kernels,
    a batch of inner chunks is decoded and copied out in one call and only what it leaves
    goes through the per-chunk copy."""
    array, pieces = read.array, read.pieces
    sharding, ib, grid = array._sharding, array._inner_box, array._box_grid
    assert sharding is not None and ib is not None and grid is not None
    fill, itemsize = array._fill_bytes, array._itemsize
    at = {inner_in_shard(pieces.chunks[n], ib.per_shard): n
          for n in range(run.first, run.end)}

    def sink(coords: tuple[int, ...], chunk: np.ndarray | None) -> None:
        if chunk is None:
            fill_chunk_pieces(pieces, at[coords], fill)
        else:
            copy_chunk_pieces(pieces, at[coords], chunk, ib.strides_i64, itemsize)

    kernels = read.kernels
    with inner_memory(array, key):
        sharding.read_inner_chunks_into(
            array._ranges_of(key), grid.chunk_shape, list(at), sink, index=index, key=key,
            batch_sink=None if kernels is None else batch_decoder(
                kernels.decompress_pieces, ib.nbytes, at, read.bounds, pieces.src_offsets,
                ib.strides_i64, pieces.dst, pieces.dst_offsets, pieces.dst_strides,
                pieces.counts, itemsize))


def _read_raw_inner(read: _ShardRead, run: ShardRun, key: str, index: ShardIndex) -> bool:
    """One shard's raw inner chunks, as :func:`.plan.plan_shard_raw_batches` plans them: by
    byte ranges straight into staging buffers (held one at a time) and copied out.  False,
    having copied nothing it should not, when the index or the shard is not as expected:
    the shard reader reads it then and says what is wrong."""
    array, pieces = read.array, read.pieces
    ib = array._inner_box
    assert ib is not None
    batches = plan_shard_raw_batches(pieces, run, index, ib, shard_read.MAX_REQUEST_BYTES)
    if batches is None:
        return False  # not raw elements after all
    fill, itemsize = array._fill_bytes, array._itemsize
    for batch in batches:
        buf = empty_aligned(batch.nbytes)
        if batch.ranges and (array._store.read_ranges_into([(key, batch.ranges)], buf)[0]
                             != batch.nbytes):
            return False  # a truncated shard
        copy_pieces_from(pieces, buf, int64_array(batch.src), ib.strides_i64, batch.lo,
                         batch.hi, batch.missing, fill, itemsize)
    return True
