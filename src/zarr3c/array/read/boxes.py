"""The small-box short path of unsharded arrays on a regular grid: one step-1 box inside one
chunk (what most small reads and chunk-by-chunk reads are), or across a few raw chunks, or
across the starts of a few compressed ones.

Planned in one kernel call (``box_chunk_pieces``).  A raw chunk is read straight into the
output when the box is all of it, else by the box's byte span when that is at most half the
chunk: where the store can, the read and the copy out are one call (``read_box_into``: a
LocalStore file), else the span (with the size probe) goes to a staging buffer; other chunks
are read whole and decoded (straight into the output where they can) and copied out with one
kernel call.  A box across a few compressed chunks whose compressor decodes prefixes has
each chunk decoded up to its piece's last byte, one after another, where those prefixes add
up to no more than each pool thread's share of the whole chunks and the native kernel would
not decode them on several threads at once.  Declines (returns None)
when the box spans more chunks than :data:`~zarr3c.array.read.plan.BOX_CHUNKS_MAX`, or
several that are not all read one of those ways:
the many-boxes path (:func:`zarr3c.array.read.many.read_boxes`) reads it then, and is tested
to agree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from zarr3c._buffers import empty_aligned, empty_array, populate_beside
from zarr3c._kernels.boxes import box_chunk_pieces
from zarr3c._kernels.copy import copy_strided, fill_strided
from zarr3c.array.read import native as native_path
from zarr3c.array.read.chunk import read_chunk
from zarr3c.array.read.plan import BOX_CHUNKS_MAX, Box, RawRequest, new_plan
from zarr3c.array.read.raw import fetch_raw, read_raw_whole
from zarr3c.concurrency import get_num_threads
from zarr3c.indexing import c_strides, int64_array

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["read_box_piece", "read_chunk_box"]


def read_chunk_box(array: Array, box: Box) -> Any:
    """``array[box]`` by the short path, or None when it declines (see the module)."""
    start, stop, shape, scalar = box
    grid = array._box_grid
    assert grid is not None
    pieces = box_chunk_pieces(start, stop, grid.chunk_i64, grid.chunk_strides,
                              array._itemsize, BOX_CHUNKS_MAX)
    if pieces is None:
        return None
    raw = array._pipeline.stores_raw_elements
    if len(pieces) > 1:
        if raw:
            return _read_raw_box_pieces(array, box, pieces)
        return _read_prefix_box_pieces(array, box, pieces)
    # The one piece, unpacked by BoxPiece's field names (not wrapped: the hottest read).
    ((coords, first, counts, src_lo, src_hi, _dst_at),) = pieces
    out = empty_array(counts, array.dtype)
    dst = out.reshape(-1).view(np.uint8)
    whole = dst.nbytes == grid.chunk_nbytes
    # Another thread takes the fresh output's page faults meanwhile: all of them, or those
    # of the last 7/10 when the file is read straight into it (this thread faults the rest
    # in, then reads and copies all of it); tuned on asv bench_array_io KeptChunkReads.
    beside = populate_beside(dst, dst.nbytes * 3 // 10 if raw and whole else 0)
    try:
        _fill_chunk_box(array, coords, first, counts, src_lo, src_hi, dst, whole, raw)
    finally:
        if beside is not None:
            beside.finish()
    return out.reshape(shape)[()] if scalar else array._in_order(out.reshape(shape))


def _read_raw_box_pieces(array: Array, box: Box, pieces: list[tuple[Any, ...]]) -> Any:
    """``array[box]`` for a step-1 box across a few raw chunks (``pieces``: the kernel's
    tuples of :class:`~.plan.BoxPiece`'s fields): each piece read and copied into the one
    output by ``Store.read_box_into``, a piece of a chunk not stored filled.  None if a
    piece is more than half its chunk or the store cannot read it so: the many-boxes path
    reads the box then (this output is dropped)."""
    start, stop, shape, scalar = box
    grid = array._box_grid
    assert grid is not None
    for _coords, _first, _counts, src_lo, src_hi, _dst_at in pieces:
        if 2 * (src_hi - src_lo) > grid.chunk_nbytes:
            return None
    counts = [e - b for b, e in zip(start, stop, strict=True)]
    out = empty_array(counts, array.dtype)
    dst = out.reshape(-1).view(np.uint8)
    out_strides = c_strides(counts, array._itemsize)
    for coords, first, part, src_lo, src_hi, dst_at in pieces:
        if not read_box_piece(array, coords, first, part, src_hi - src_lo, dst, dst_at,
                              out_strides):
            return None
    return out.reshape(shape)[()] if scalar else array._in_order(out.reshape(shape))


def _read_prefix_box_pieces(array: Array, box: Box, pieces: list[tuple[Any, ...]]) -> Any:
    """``array[box]`` for a step-1 box across a few compressed chunks, each decoded only up
    to the last byte of its piece (``CodecPipeline.decode_prefix_into``) in this thread, one
    after another, and its piece copied out.

    None unless the compressor decodes prefixes and the prefixes add up to no more than
    what each of the pool's threads would decode of the whole chunks: the many-boxes path
    decodes them whole, in parallel, then.  None too where that path's native kernel
    decodes the same prefixes and more than one thread would share them.  A time step near
    the start of chunks that span many steps (one step of an xarray ``(time, y, x)``
    variable) decodes a fraction of each.
    """
    if not array._pipeline.can_decode_prefix:
        return None
    grid = array._box_grid
    assert grid is not None
    threads = min(len(pieces), max(1, get_num_threads()))
    chain = array._pipeline.native
    if threads > 1 and native_path.enabled and chain is not None and chain.decodes_prefixes:
        # The native many-boxes path decodes the same prefixes, on every thread at once
        # (asv bench_xarray.Open.time_isel_time tracks this).
        return None
    if sum(src_hi for *_, src_hi, _dst_at in pieces) * threads > len(pieces) * grid.chunk_nbytes:
        return None
    start, stop, shape, scalar = box
    itemsize = array._itemsize
    counts = [e - b for b, e in zip(start, stop, strict=True)]
    out = empty_array(counts, array.dtype)
    dst = out.reshape(-1).view(np.uint8)
    out_strides = int64_array(c_strides(counts, itemsize))
    for coords, _first, part, src_lo, src_hi, dst_at in pieces:
        # (a view of this thread's scratch memory: copied out before the next read)
        chunk = read_chunk(array, coords, need=src_hi)
        if chunk is None:
            fill_strided(dst, dst_at, out_strides, int64_array(part), array._fill_bytes)
        else:
            copy_strided(chunk.reshape(-1).view(np.uint8), src_lo, grid.chunk_strides, dst,
                         dst_at, out_strides, int64_array(part), itemsize)
    return out.reshape(shape)[()] if scalar else array._in_order(out.reshape(shape))


def read_box_piece(array: Array, coords: tuple[int, ...], first: list[int], counts: list[int],
                   span: int, dst: np.ndarray, at: int = 0,
                   out_strides: list[int] | None = None) -> bool:
    """``counts`` elements from ``first`` of the raw chunk at ``coords`` (``span`` bytes of
    it) into ``dst`` from byte ``at``, at ``out_strides`` (None: C order of ``counts``), by
    the store's one-call read (``Store.read_box_into``); the fill value where the chunk is
    not stored.  False when the store cannot read it so (the caller reads it the ordinary
    way, which reports what is wrong)."""
    grid = array._box_grid
    assert grid is not None
    got = array._store.read_box_into(array.chunk_key(coords), grid.chunk_nbytes,
                                     grid.chunk_strides, first, counts, array._itemsize,
                                     span, dst, at, out_strides)
    if got == -1:
        strides = c_strides(counts, array._itemsize) if out_strides is None else out_strides
        fill_strided(dst, at, int64_array(strides), int64_array(counts), array._fill_bytes)
    return got == grid.chunk_nbytes or got == -1


def _fill_chunk_box(array: Array, coords: tuple[int, ...], first: list[int],
                    counts: list[int], offset: int, end: int, dst: np.ndarray, whole: bool,
                    raw: bool) -> None:
    """:func:`read_chunk_box`'s read of the box (``counts`` elements from ``first`` in the
    chunk at ``coords``, bytes ``[offset, end)`` of it raw) into its output's bytes
    ``dst``."""
    itemsize = array._itemsize
    grid = array._box_grid
    assert grid is not None
    nbytes = grid.chunk_nbytes
    src: np.ndarray | None
    if raw and whole:
        src = dst if read_raw_whole(array, coords, dst, 0, nbytes) else None
    elif raw and 2 * (end - offset) <= nbytes:  # (else the whole chunk, as the many path)
        # Where the store reads and copies the box in one call (a LocalStore file).
        if read_box_piece(array, coords, first, counts, end - offset, dst):
            return
        staging = empty_aligned(end - offset + 2)
        request = new_plan(RawRequest, (coords, [(offset, end, 0)], end - offset, nbytes))
        found = fetch_raw(array, [request], staging)
        src, offset = (staging if found[0] else None), 0
    else:
        # Part of a chunk: read, decode and copy in one kernel call where the chain and
        # store allow, one GIL hand-off a read (asv
        # bench_array_io.NativePipeline.time_random_reads_user_threads tracks it).  A whole
        # chunk is decoded straight into the output as before, its pages faulted in beside
        # (asv_benchmarks/cores/one_call_reads.py: neither way was faster on 16 cores).
        if not whole and native_path.read_box_natively(array, coords, offset, counts, dst):
            return
        chunk = read_chunk(array, coords, into=dst if whole else None,
                           need=None if whole else end)
        src = chunk if chunk is None or chunk is dst else chunk.reshape(-1).view(np.uint8)
    out_strides = int64_array(c_strides(counts, itemsize))
    if src is None:
        fill_strided(dst, 0, out_strides, int64_array(counts), array._fill_bytes)
    elif src is not dst:
        copy_strided(src, offset, grid.chunk_strides, dst, 0, out_strides,
                     int64_array(counts), itemsize)
