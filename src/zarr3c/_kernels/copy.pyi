"""Dtype-agnostic strided N-d copy, fill, byte swap and uniformity test in bytes (contract;
implemented in copy.pyx).  The many-regions and element forms are in scatter.pyi."""

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
