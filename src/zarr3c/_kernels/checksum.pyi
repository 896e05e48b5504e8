"""CRC-32C (Castagnoli), the crc32c codec's checksum, on the CPU's CRC instruction where there
is one (contract; checksum.pyx)."""

from zarr3c._kernels.copy import ReadBuffer

def crc32c(data: ReadBuffer, value: int = 0) -> int:
    """The CRC-32C of data (any 1-d contiguous uint8 buffer, read-only ok), continued from
    value: crc32c(b, crc32c(a)) == crc32c(a + b), crc32c(b"") == 0.

    Returns an unsigned 32-bit int.  OverflowError if value is outside [0, 2**32); ValueError
    for a non-contiguous buffer (numpy arrays must have dtype uint8).  GIL released for large
    inputs.
    """

def hardware() -> bool:
    """Whether crc32c uses a CRC instruction (SSE4.2 on x86-64, the CRC extension on aarch64)
    rather than the slicing-by-8 tables."""

def _portable_crc32c(data: ReadBuffer, value: int = 0) -> int:
    """crc32c through the slicing-by-8 tables whatever the CPU (to test the two paths agree)."""
