"""Dtype-agnostic strided N-d copy in bytes (contract; implemented in copy.pyx)."""

from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

# Read-only byte buffers: any 1-d contiguous buffer of bytes (a uint8 numpy array, possibly
# read-only, or bytes / bytearray / memoryview).
ReadBuffer: TypeAlias = NDArray[np.uint8] | bytes | bytearray | memoryview

def copy_strided(
    src: ReadBuffer,  # 1-d contiguous uint8 (a numpy array viewed as bytes), read-only ok
    src_offset: int,  # byte offset of element (0, ..., 0) in src
    src_strides: NDArray[np.int64],  # byte strides, may be negative or zero
    dst: NDArray[np.uint8],  # 1-d contiguous writable uint8
    dst_offset: int,
    dst_strides: NDArray[np.int64],  # byte strides, may be negative
    shape: NDArray[np.int64],  # elements per dimension (>= 0); len == len(strides)
    itemsize: int,  # bytes per element (>= 1)
) -> None:
    """dst[elem at dst_offset + idx.dst_strides] = src[elem at src_offset + idx.src_strides].

    Validates: equal lengths; ndim <= 64; shape >= 0; itemsize >= 1; offsets >= 0; for a
    non-empty region, the lowest and highest byte touched in each buffer lie inside it
    (computed from the offset and the sign of each stride, overflow-free); raises ValueError
    otherwise.  An empty region (some extent 0) is a no-op whatever its offsets and strides.
    Scalars outside int64 raise OverflowError (argument conversion).  Runs of elements
    contiguous in both buffers (collapsed innermost dimensions) are copied with one memcpy;
    transposing copies (the src-compact dimension is not the dst-compact one) are cache-blocked.
    src and dst must not overlap (memory-safe regardless, but the result is then unspecified),
    nor should dst elements overlap each other.  Releases the GIL.
    """

def fill_strided(
    dst: NDArray[np.uint8],
    dst_offset: int,
    dst_strides: NDArray[np.int64],
    shape: NDArray[np.int64],
    value: ReadBuffer,  # one element's bytes; len(value) is the itemsize
) -> None:
    """Set every element of the strided region of dst to the element ``value``.

    Same validation as copy_strided, itemsize = len(value) >= 1.  GIL released.
    """

def byteswap(buf: NDArray[np.uint8], width: int) -> None:
    """Reverse the byte order of each consecutive ``width``-byte word of buf, in place.

    width in {1, 2, 4, 8, 16}; len(buf) must be a multiple of width (ValueError otherwise).
    For complex dtypes callers pass the component width (itemsize // 2).
    """

def is_uniform(buf: ReadBuffer, value: ReadBuffer) -> bool:
    """True if buf is len(buf) // len(value) repetitions of value, bit for bit.

    len(buf) must be a multiple of len(value) (ValueError otherwise).  Used to detect chunks
    equal to the fill value without a numpy temporary.  GIL released.
    """

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
