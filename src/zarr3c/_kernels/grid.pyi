"""Per-dimension projections of selections onto a chunk grid (contract; grid.pyx).

A dimension's chunking is given either by a regular ``chunk_size`` (arithmetic) or by an int64
``offsets`` array of length nchunks + 1 (offsets[0] == 0, non-decreasing; chunk i covers
[offsets[i], offsets[i + 1])), searched by binary search.  A chunk of length 0 (equal
neighbouring offsets) holds no element and never appears in a result.  Malformed offsets raise
ValueError (the check is O(nchunks)).
"""

import numpy as np
from numpy.typing import NDArray

def project_slice_regular(
    start: int, step: int, count: int, chunk_size: int
) -> NDArray[np.int64]:
    """Project the selection start, start+step, ..., (count elements; step >= 1) onto chunks.

    Returns an int64 array of shape (n, 4), one row per chunk touched, in increasing chunk
    order: (chunk index, index within the chunk of the first selected element, number of
    selected elements in that chunk, position in the selection of the first one).
    Validates start >= 0, step >= 1, count >= 0, chunk_size >= 1 (ValueError otherwise).
    """

def project_slice_offsets(
    start: int, step: int, count: int, offsets: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Same as project_slice_regular over an offsets array.  The last selected element
    (start + (count - 1) * step) must be < offsets[-1] (ValueError otherwise).  The rows
    equal project_slice_regular's when the offsets are those of a regular grid."""

def locate_points_regular(
    indices: NDArray[np.int64], chunk_size: int, chunk_index: NDArray[np.int64],
    local_index: NDArray[np.int64],
) -> None:
    """For each index (0 <= index, checked), write index // chunk_size and index % chunk_size
    into the caller-allocated outputs (same length as indices).  A bad index raises
    ValueError naming its position (``indices[7] = -1 is negative``); outputs before it are
    written.  GIL released."""

def locate_points_offsets(
    indices: NDArray[np.int64], offsets: NDArray[np.int64], chunk_index: NDArray[np.int64],
    local_index: NDArray[np.int64],
) -> None:
    """Same over an offsets array (binary search: chunk i with offsets[i] <= x < offsets[i+1];
    0 <= x < offsets[-1] checked).  Runs of indices in the same chunk (sorted input) skip
    the search.  GIL released."""

def group_by_key(
    keys: NDArray[np.int64], nkeys: int, order: NDArray[np.int64], starts: NDArray[np.int64]
) -> None:
    """Stable counting sort of positions by key (each key in ``[0, nkeys)``, checked): writes
    ``order`` (len(keys); ``keys[order]`` non-decreasing, ties in input order) and ``starts``
    (nkeys + 1; key k's positions are ``order[starts[k]:starts[k + 1]]``).  Mismatched lengths,
    ``nkeys < 0`` or a bad key raise ValueError naming it.  GIL released."""

def basic_box(
    key: object, shape: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool] | None:
    """The short path's parser: a basic key of plain ints, step-1 slices and at most one
    ``...`` (at most len(shape) other entries; missing trailing axes whole) selecting a
    non-empty box, as (start, stop, numpy's result shape, scalar: every axis an integer and
    no ``...``); None for anything else (the general path handles, or refuses, it)."""

def group_points_regular(
    coords: tuple[NDArray[np.int64], ...],  # per dimension, 1-d contiguous, one length n
    chunk_shape: NDArray[np.int64],  # chunk lengths (>= 1)
    grid_shape: NDArray[np.int64],  # chunks per dimension (>= 1)
    itemsize: int,  # bytes per element (>= 1)
    order: NDArray[np.int64],  # out, n: the points sorted stably by C-order chunk number
    offsets: NDArray[np.int64],  # out, n: byte offset of point order[j] in its C-order chunk
    starts: NDArray[np.int64],  # out, prod(grid_shape) + 1: chunk k's run in order
) -> None:
    """Locate, key and group points of a regular grid in one nogil call (ValueError on bad
    arguments or a coordinate outside the grid, naming its axis)."""

def count_box_pieces(
    starts: NDArray[np.int64],  # (nboxes, ndim) C-contiguous
    stops: NDArray[np.int64],  # (nboxes, ndim); each box [starts[b], stops[b]) non-empty, >= 0
    chunk_shape: NDArray[np.int64],  # (ndim,) >= 1
) -> int:
    """Pieces plan_box_pieces cuts the boxes into: per box, the product of the chunks its
    range touches per dimension.  Bad boxes / chunk sizes raise ValueError."""

def plan_box_pieces(
    starts: NDArray[np.int64],
    stops: NDArray[np.int64],
    chunk_shape: NDArray[np.int64],
    chunk_strides: NDArray[np.int64],  # (ndim,) byte strides in a chunk, >= 0
    itemsize: int,
    coords: NDArray[np.int64],  # out (P, ndim): the piece's chunk
    counts: NDArray[np.int64],  # out (P, ndim): its extent
    src_offsets: NDArray[np.int64],  # out (P,): byte of its first element in the chunk
    src_ends: NDArray[np.int64],  # out (P,): one past its last element's last byte
    dst_offsets: NDArray[np.int64],  # out (P,): byte of its first element in the output
    dst_strides: NDArray[np.int64],  # out (P, ndim): its box's C byte strides
    box_offsets: NDArray[np.int64],  # out (nboxes + 1,): box b is output bytes [o[b], o[b+1])
) -> None:
    """Pieces of step-1 boxes per chunk of a regular grid, box after box, each box's in C
    order of the chunks; one output buffer holds the boxes one after another (C order).
    Outputs checked against P = count_box_pieces(...).  GIL released."""

def box_chunk_pieces(
    start: tuple[int, ...],
    stop: tuple[int, ...],
    chunk_shape: NDArray[np.int64],
    chunk_strides: NDArray[np.int64],
    itemsize: int,
    max_pieces: int,
) -> list[tuple[tuple[int, ...], list[int], list[int], int, int, int]] | None:
    """The pieces of the step-1 box [start, stop) per chunk of the regular grid of
    chunk_shape, in C order of the chunks: (coords, first, counts, lo, hi, dst_offset); None
    when it touches more than max_pieces chunks."""

def plan_box_in_cell(
    start: tuple[int, ...],
    stop: tuple[int, ...],
    cell_shape: NDArray[np.int64],  # the grid's cells (shards)
    chunk_shape: NDArray[np.int64],  # their chunks (inner chunks), dividing cell_shape
    chunk_strides: NDArray[np.int64],  # (ndim,) byte strides in a chunk, >= 0
    itemsize: int,
    max_pieces: int,
) -> tuple[tuple[int, ...], NDArray[np.int64]] | None:
    """(cell coords, plan) of a step-1 box lying in one cell and touching at most
    max_pieces chunks, else None.  plan holds P * (4 + 2 * ndim) int64 in blocks of P:
    slot (C-order number of the chunk in the cell), src_lo, src_hi (bytes of the piece's
    span in the chunk), dst_offset, then counts and dst_strides (P rows of ndim).  Bad
    boxes / shapes raise ValueError."""
