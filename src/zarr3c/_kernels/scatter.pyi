"""Many elements or regions copied in one call (contract; implemented in scatter.pyx).

Each is the batch form of a copy.pyi kernel: element gathers, outer products, and many
copy_strided / fill_strided regions, all validated before anything is written.
"""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

def copy_elements(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],  # byte offset of each element in src
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],  # byte offset of each element in dst (same length)
    itemsize: int,
) -> None:
    """Gather/scatter element i from src[src_offsets[i]:+itemsize] to dst[dst_offsets[i]:...],
    in order (with repeated destinations, the last wins).  Every offset is checked (via the
    minimum and maximum) before copying, and again as it is used; ValueError otherwise.
    GIL released from 4096 elements on (fewer copy faster than the GIL is retaken)."""

def copy_outer(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    counts: NDArray[np.int64],
    itemsize: int,
) -> None:
    """Gather/scatter over the outer product of per-dimension byte offsets (``counts[d]``
    offsets per dimension, concatenated), in C order: element ``(i0, i1, ...)`` moves from
    ``sum_d src_offsets[base_d + i_d]`` to ``sum_d dst_offsets[base_d + i_d]``; last write
    wins.  Validated (ValueError) before the GIL is released."""

class OuterPieces:
    """Many copy_outer pieces, one after another: piece p has counts[p] (its dimensions'
    lengths) and offsets bounds[p]:bounds[p + 1] of src_offsets and dst_offsets.  Private,
    checked copies (ValueError naming the piece, as copy_outer checks it against slen
    source and dlen destination bytes), for batch calls (zstd_ctx.decompress_outer)."""

    def __init__(
        self,
        fn: str,
        bounds: NDArray[np.int64],
        src_offsets: NDArray[np.int64],
        dst_offsets: NDArray[np.int64],
        counts: NDArray[np.int64],  # (P, ndim) C-contiguous
        slen: int,
        dlen: int,
        itemsize: int,
    ) -> None: ...

def copy_pieces(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],  # (P,) byte offset of each piece's first element in src
    src_strides: NDArray[np.int64],  # (ndim,) byte strides in src, shared by every piece
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],  # (P,)
    dst_strides: NDArray[np.int64],  # (P, ndim) C-contiguous
    shapes: NDArray[np.int64],  # (P, ndim) C-contiguous
    itemsize: int,
) -> None:
    """copy_strided for each piece p (src_offsets[p], src_strides, dst_offsets[p],
    dst_strides[p], shapes[p]); every piece validated before any copy (ValueError naming the
    piece); empty pieces skipped.  GIL released."""

def fill_pieces(
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],  # (P,)
    dst_strides: NDArray[np.int64],  # (P, ndim)
    shapes: NDArray[np.int64],  # (P, ndim)
    value: ReadBuffer,  # one element's bytes
) -> None:
    """fill_strided for each piece, all validated first (ValueError naming the piece)."""
