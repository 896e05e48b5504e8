"""Dtype-agnostic strided N-d copy in bytes (contract; implemented in copy.pyx)."""

import numpy as np
from numpy.typing import NDArray

def copy_strided(
    src: NDArray[np.uint8],  # 1-d contiguous uint8 (a numpy array viewed as bytes), read-only ok
    src_offset: int,  # byte offset of element (0, ..., 0) in src
    src_strides: NDArray[np.int64],  # byte strides, may be negative or zero
    dst: NDArray[np.uint8],  # 1-d contiguous writable uint8
    dst_offset: int,
    dst_strides: NDArray[np.int64],  # byte strides, may be negative
    shape: NDArray[np.int64],  # elements per dimension (>= 0); len == len(strides)
    itemsize: int,  # bytes per element (>= 1)
) -> None:
    """dst[elem at dst_offset + idx.dst_strides] = src[elem at src_offset + idx.src_strides].

    Validates: equal lengths; shape >= 0; itemsize >= 1; for a non-empty region, the lowest
    and highest byte touched in each buffer lie inside it (computed from the offset and the
    sign of each stride); raises ValueError otherwise.  Runs of elements contiguous in both
    buffers (collapsed innermost dimensions) are copied with one memcpy.  src and dst must not
    overlap.  Releases the GIL.
    """

def fill_strided(
    dst: NDArray[np.uint8],
    dst_offset: int,
    dst_strides: NDArray[np.int64],
    shape: NDArray[np.int64],
    value: NDArray[np.uint8],  # one element's bytes; len(value) is the itemsize
) -> None:
    """Set every element of the strided region of dst to the element ``value``. GIL released."""

def byteswap(buf: NDArray[np.uint8], width: int) -> None:
    """Reverse the byte order of each consecutive ``width``-byte word of buf, in place.

    width in {1, 2, 4, 8, 16}; len(buf) must be a multiple of width (ValueError otherwise).
    For complex dtypes callers pass the component width (itemsize // 2).
    """

def is_uniform(buf: NDArray[np.uint8], value: NDArray[np.uint8]) -> bool:
    """True if buf is len(buf) // len(value) repetitions of value, bit for bit.

    len(buf) must be a multiple of len(value) (ValueError otherwise).  Used to detect chunks
    equal to the fill value without a numpy temporary.  GIL released.
    """
