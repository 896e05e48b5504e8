"""Per-dimension projections of selections onto a chunk grid, and points grouped by chunk
(contract; grid.pyx).  Step-1 boxes cut per chunk are in boxes.pyi.

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
