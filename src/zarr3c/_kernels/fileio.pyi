"""Reads of file byte ranges holding the GIL once, POSIX only (contract; fileio.pyx)."""

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

def read_range_into(
    path: bytes, buf: NDArray[np.uint8] | memoryview, start: int, stop: int, at: int
) -> tuple[int, int, int]:
    """read_ranges_into of the one range [start, stop) to buf[at:]."""

def read_tail_into(path: bytes, buf: NDArray[np.uint8] | memoryview) -> tuple[int, int, int]:
    """The last len(buf) bytes of the file into buf (all of a shorter file, into its
    start): (errno, bytes read, file size) as read_ranges_into; GIL released once."""

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

def read_box_into(
    path: bytes,
    nbytes: int,
    strides: NDArray[np.int64],
    first: Sequence[int],
    counts: Sequence[int],
    itemsize: int,
    staging: NDArray[np.uint8] | memoryview,
    dst: NDArray[np.uint8] | memoryview,
    dst_offset: int = 0,
    dst_strides: Sequence[int] | None = None,
) -> tuple[int, int, int]:
    """The box of counts elements from first of the raw C-ordered chunk file at path
    (exactly nbytes bytes, byte strides) into dst from dst_offset at dst_strides (None: C
    order), its byte span read into
    staging (span + a page), then one strided copy; the GIL released once.  Returns
    (errno, file size, copied).  ValueError, before any read, for a box outside the chunk
    or dst, a staging too short, or bad counts, starts, strides or itemsize."""

def read_files_elements(
    paths: list[bytes],
    scratch: NDArray[np.uint8] | memoryview,
    sizes: NDArray[np.int64],
    run_starts: NDArray[np.int64],
    run_stops: NDArray[np.int64],
    src_offsets: NDArray[np.int64],
    dst: NDArray[np.uint8] | memoryview,
    dst_offsets: NDArray[np.int64],
    itemsize: int,
) -> list[int]:
    """For each k: the file paths[k] read whole into scratch when a regular file of exactly
    sizes[k] bytes, then copy_elements of its run of elements into dst; the GIL released
    once for all.  Returns the k not read (none of their elements copied).  ValueError,
    before any read, for a NUL in a path, a size past scratch, an element outside its
    file's size or dst, a run outside the offsets, or lengths that differ."""

def read_files_ranges_into(
    paths: list[bytes],
    buf: NDArray[np.uint8] | memoryview,
    run_starts: NDArray[np.int64],
    run_stops: NDArray[np.int64],
    starts: NDArray[np.int64],
    stops: NDArray[np.int64],
    ats: NDArray[np.int64],
) -> list[tuple[int, int, int]]:
    """read_ranges_into of each file paths[k] with its ranges run_starts[k] <= i <
    run_stops[k], the GIL released once for all: one (errno, bytes read, file size) per
    file.  ValueError, before any read, for a NUL in a path, a run outside the ranges, or
    a range outside buf."""

def populate(buf: NDArray[np.uint8] | memoryview, start: int, stop: int) -> int:
    """Fault in the whole pages of buf[start:stop] writable (MADV_POPULATE_WRITE), contents
    unchanged, GIL released: 0 or the errno of a refusal (nothing done).  ValueError for a
    range outside buf."""

def resident_pages(buf: NDArray[np.uint8] | memoryview, start: int, stop: int
                   ) -> tuple[int, int]:
    """(resident, pages): how many of the whole pages of buf[start:stop] are in memory
    (mincore; resident -1 where it cannot tell).  ValueError for a range outside buf."""

SHARD_UNEXPECTED: int
#: The most temporary files one key's native writers use at once (the temporary file slots
#: ``.<name>.zarr3c-tmp-<slot as 16 hex>`` of ``_write_atomic``, the native writes' file
#: writer, which has no entry point of its own); LocalStore's ``files.TEMP_SLOTS``.
TEMP_SLOTS: int

def read_shard_parts(
    path: bytes,
    index: NDArray[np.uint8],  # out: the shard's index bytes
    index_at_end: bool,
    slots: NDArray[np.int64],  # entry number of each part's inner chunk
    los: NDArray[np.int64],
    his: NDArray[np.int64],  # -1: to the inner chunk's end
    expect_nbytes: int,  # >= 0: every stored inner chunk must hold that many bytes
    staging: NDArray[np.uint8],  # out: the parts, one after another
    ats: NDArray[np.int64],  # out: where each part starts (-1: not stored)
    lens: NDArray[np.int64],  # out: its length (-1: not stored)
) -> tuple[int, int, int]:
    """The shard's index, then bytes [los[i], his[i]) of each inner chunk slots[i], in one
    call without the GIL: (errno, file size, status), status SHARD_UNEXPECTED when the
    file or an entry needed is not as expected.  ValueError, before any read, for bad
    arguments (see the kernel's docstring)."""
