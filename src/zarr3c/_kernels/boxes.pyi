"""Step-1 boxes cut into their pieces per chunk (contract; boxes.pyx).

A step-1 box is [start, stop) per dimension; a piece is its part inside one chunk of a regular
grid: its extent, the bytes of a C-ordered chunk (byte strides chunk_strides) that hold it, and
where its first element lands in the box's C-ordered output.
"""

import numpy as np
from numpy.typing import NDArray

def basic_box(
    key: object, shape: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool] | None:
    """The short path's parser: a basic key of integers (int or numpy integers; not bool),
    step-1 slices and at most one ``...`` (at most len(shape) other entries; missing
    trailing axes whole) selecting a non-empty box, as (start, stop, numpy's result shape,
    scalar: every axis an integer and no ``...``); None for anything else (the general path
    handles, or refuses, it)."""

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
