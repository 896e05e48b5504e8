"""Reads of file byte ranges holding the GIL once, POSIX only (contract; fileio.pyx)."""

import numpy as np
from numpy.typing import NDArray

def read_range_into(
    path: bytes, buf: NDArray[np.uint8] | memoryview, start: int, stop: int, at: int
) -> tuple[int, int, int]:
    """read_ranges_into of the one range [start, stop) to buf[at:]."""

def read_ranges_into(
    path: bytes,
    buf: NDArray[np.uint8] | memoryview,
    starts: NDArray[np.int64],
    stops: NDArray[np.int64],
    ats: NDArray[np.int64],
) -> tuple[int, int, int]:
    """Bytes [starts[i], stops[i]) of the file into buf[ats[i]:], none past its end:
    (errno, bytes read, file size), the size -1 if not a regular file.  ValueError for a
    range outside buf.  GIL released once for open, fstat, the reads and close."""
