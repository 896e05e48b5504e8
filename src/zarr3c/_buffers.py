"""Buffers that stored data is read or decoded into: page-aligned ones, and per-thread
scratch memory.

On AMD Zen cores a large copy (``rep movsb``: the kernel's copy from the page cache, and
glibc 2.36's ``memcpy``, which numpy uses too) runs several times slower when the
destination lies 1 to 31 bytes past the source modulo the 4 KiB page.  Large numpy arrays are
``malloc``'d by ``mmap``, 16 bytes into a page, which is exactly such an offset for a read from
the start of a file.  Buffers that stored bytes are read into therefore start on a page
boundary, and :func:`bad_offset` tells a store when a read would be slow anyway (LocalStore
then reads through a bounce buffer).  The two cases are tracked by
``LocalStoreSuite.time_read_into_1mib_page_aligned`` and
``LocalStoreSuite.time_read_into_1mib_16_bytes_into_a_page`` in
``asv_benchmarks/benchmarks/bench_stores.py``.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from zarr3c.concurrency import Beside, run_beside
from zarr3c.errors import ChunkTooLargeError, SelectionTooLargeError

try:
    from zarr3c._kernels import fileio as _fileio
except ImportError:  # (not POSIX: no madvise)
    _fileio = None  # type: ignore[assignment]

__all__ = [
    "INT64_MAX", "PAGE_SIZE", "address_of", "bad_offset", "chunk_memory", "chunk_too_large",
    "empty_aligned", "empty_array", "holds_references", "populate_beside", "thread_scratch",
]

PAGE_SIZE: int = mmap.PAGESIZE
#: The most bytes one buffer may hold: numpy's limit, and the kernels' (their sizes, offsets
#: and strides are int64).  Larger sizes are refused before any allocation or kernel call.
INT64_MAX: int = (1 << 63) - 1
#: Below this many bytes a buffer is not worth aligning: finding its address costs as much
#: as the slow copy of so few bytes loses.
_ALIGN_MIN_BYTES = 1 << 16
#: Distances (destination minus source, modulo the page) at which the kernel copy is slow.
_SLOW_DISTANCES = range(1, 32)
#: A thread keeps its scratch buffer (:func:`thread_scratch`) up to this size between calls;
#: larger ones are allocated per call (numpy backs them with huge pages: few faults).
_SCRATCH_KEEP_BYTES = 4 << 20
_scratch = threading.local()
#: Fresh buffers this large are worth faulting in on another thread while they are filled
#: (a hand-off to a pool thread costs about as much as 64 page faults) ...
_POPULATE_MIN_BYTES = 256 << 10
#: ... and smaller than this: numpy asks for huge pages at 4 MiB, which take few faults.
_POPULATE_MAX_BYTES = 4 << 20


def address_of(buffer: Any) -> int:
    """Where a writable buffer's first byte lies in memory.

    Parameters
    ----------
    buffer
        A writable buffer (``bytearray``, numpy array, writable memoryview).

    Returns
    -------
    int
        The address.

    Examples
    --------
    >>> buf = empty_aligned(PAGE_SIZE, always=True)
    >>> address_of(buf) % PAGE_SIZE
    0
    """
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


def empty_aligned(nbytes: int, *, always: bool = False) -> np.ndarray:
    """An uninitialised ``uint8`` array of ``nbytes``, starting on a page boundary when it
    is long enough for that to matter (:data:`_ALIGN_MIN_BYTES`), or ``always``.

    Parameters
    ----------
    nbytes
        The array's length.
    always
        Align it whatever its length.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    MemoryError
        Where it cannot be allocated, or numpy cannot index that many bytes.

    Examples
    --------
    >>> buf = empty_aligned(1 << 20)
    >>> buf.dtype, buf.nbytes, address_of(buf) % PAGE_SIZE
    (dtype('uint8'), 1048576, 0)
    """
    if nbytes < _ALIGN_MIN_BYTES and not always:
        return np.empty(nbytes, dtype=np.uint8)
    if nbytes > INT64_MAX - PAGE_SIZE:  # (numpy: ValueError, "maximum dimension exceeded")
        raise MemoryError(f"cannot allocate {nbytes} bytes: more than numpy can index")
    raw = np.empty(nbytes + PAGE_SIZE, dtype=np.uint8)
    skip = -address_of(raw) % PAGE_SIZE
    return raw[skip:skip + nbytes]


def empty_array(shape: int | Sequence[int], dtype: np.dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, its data starting on a page boundary (see
    :func:`empty_aligned`): an output that chunks are read straight into.

    Parameters
    ----------
    shape, dtype
        As ``np.empty`` takes them.

    Returns
    -------
    numpy.ndarray
        Uninitialised; aligned when large enough and of a fixed-size dtype.

    Raises
    ------
    SelectionTooLargeError
        Its size is beyond int64, or cannot be allocated (it is a read's output).

    Examples
    --------
    >>> a = empty_array((256, 256), np.dtype("uint16"))
    >>> a.shape, a.ctypes.data % PAGE_SIZE
    ((256, 256), 0)
    """
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = np.dtype(dtype)
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > INT64_MAX:
        raise SelectionTooLargeError(
            f"the result of the selection, shape {dims} of {dtype}, is {nbytes} bytes: "
            f"more than int64 counts")
    try:
        if nbytes < _ALIGN_MIN_BYTES or holds_references(dtype):
            # (object and variable-width string elements cannot be viewed from bytes)
            return np.empty(dims, dtype=dtype)
        return empty_aligned(nbytes).view(dtype).reshape(dims)
    except MemoryError:
        raise SelectionTooLargeError(
            f"the result of the selection, shape {dims} of {dtype}, is {nbytes} bytes: "
            f"more than can be allocated") from None


def chunk_too_large(key: str, nbytes: int, what: str = "the decoded chunk"
                    ) -> ChunkTooLargeError:
    """The error refusing ``nbytes`` of memory for ``what`` of the chunk at ``key``, which
    must be held (stored, or built by a write) but could not be allocated.

    Parameters
    ----------
    key : str
        The chunk's store key (a shard's, for its inner chunks).
    nbytes : int
        The memory asked for.
    what : str, default "the decoded chunk"
        What it was for.

    Returns
    -------
    ChunkTooLargeError
        To raise.

    Raises
    ------
    None
        It is returned, not raised.

    Examples
    --------
    >>> print(chunk_too_large("c/0", 2**40))
    chunk 'c/0': 1099511627776 bytes for the decoded chunk could not be allocated
    """
    return ChunkTooLargeError(f"{nbytes} bytes for {what} could not be allocated", key=key)


@contextmanager
def chunk_memory(key: str, nbytes: int, what: str = "the decoded chunk") -> Iterator[None]:
    """A block that holds the chunk at ``key`` (``nbytes`` for ``what``) in memory: a
    ``MemoryError`` in it becomes :func:`chunk_too_large`'s error, naming the chunk.

    Parameters
    ----------
    key, nbytes, what
        As :func:`chunk_too_large` takes them.

    Yields
    ------
    None

    Raises
    ------
    ChunkTooLargeError
        Where the block ran out of memory.

    Examples
    --------
    >>> try:
    ...     with chunk_memory("c/0", 2**40):
    ...         raise MemoryError
    ... except MemoryError as exc:
    ...     print(type(exc).__name__, exc.key)
    ChunkTooLargeError c/0
    """
    try:
        yield
    except ChunkTooLargeError:
        raise
    except MemoryError:
        raise chunk_too_large(key, nbytes, what) from None


def holds_references(dtype: np.dtype) -> bool:
    """Whether elements of ``dtype`` are references rather than their bytes (object arrays,
    numpy's variable-width ``StringDType``): such arrays are never moved as bytes (the copy
    kernels, byte views, the native pipeline), only by numpy.

    Parameters
    ----------
    dtype : numpy.dtype
        An array's dtype.

    Returns
    -------
    bool

    Raises
    ------
    None
        Any dtype is answered.

    Examples
    --------
    >>> holds_references(np.dtype(object)), holds_references(np.dtype("<U3"))
    (True, False)
    """
    return bool(dtype.hasobject) or dtype.kind == "T"


def bad_offset(address: int, file_offset: int) -> bool:
    """Whether reading from ``file_offset`` of a file to memory ``address`` hits the slow
    kernel copy (see the module notes).

    Parameters
    ----------
    address
        Where the first byte read lands in memory.
    file_offset
        Where it comes from in the file.

    Returns
    -------
    bool

    Examples
    --------
    >>> bad_offset(16 * PAGE_SIZE + 16, 0), bad_offset(16 * PAGE_SIZE, 0)
    (True, False)
    """
    return (address - file_offset) % PAGE_SIZE in _SLOW_DISTANCES


def thread_scratch(nbytes: int, slot: str = "decoded") -> np.ndarray:
    """``nbytes`` of this thread's scratch memory (``uint8``, page-aligned, contents
    undefined), valid until the thread's next call for the same ``slot``: ``"decoded"`` for a
    chunk decoded only to be copied out at once, ``"inner"`` for a shard's inner chunk
    likewise (a whole shard may be decoding into ``"decoded"`` meanwhile), ``"stored"`` for
    the stored bytes either is decoded from, ``"index"`` for a shard index read only to be
    checked, ``"encoded"`` for a chunk's encoding about to be stored, ``"zstd"`` for a zstd
    frame copied out at once (``ZstdCodec.encode``), ``"points"`` for a point read's grouped
    points (``group_points``).

    Fresh memory for every chunk can cost a page fault per 4 KiB, depending on the
    allocator's state (glibc serves a 512 KiB request from ``mmap`` until a freed block of
    that size raised its threshold, or for good where ``M_MMAP_THRESHOLD`` is set), which
    makes small reads of compressed chunks markedly slower (``Read.time_random_reads`` in
    ``asv_benchmarks/benchmarks/bench_array_io.py``).  A thread keeps up to
    :data:`_SCRATCH_KEEP_BYTES` per slot between calls.

    Parameters
    ----------
    nbytes
        How many bytes are needed.
    slot
        Which of the thread's buffers (see above).

    Returns
    -------
    numpy.ndarray
        ``uint8``, ``nbytes`` long.

    Examples
    --------
    >>> a = thread_scratch(100, "stored")
    >>> b = thread_scratch(50, "stored")
    >>> a.nbytes, b.nbytes, address_of(a) == address_of(b)
    (100, 50, True)
    """
    if nbytes > _SCRATCH_KEEP_BYTES:
        return empty_aligned(nbytes)
    buf = getattr(_scratch, slot, None)
    if buf is None or buf.nbytes < nbytes:
        buf = empty_aligned(max(nbytes, _ALIGN_MIN_BYTES))
        setattr(_scratch, slot, buf)
    return buf[:nbytes]


def populate_beside(buf: np.ndarray, start: int = 0) -> Beside | None:
    """Start faulting in the pages of ``buf[start:]`` (fresh ``uint8`` memory the calling
    thread is about to fill: a read's output) on a pool thread, so that the two threads
    share the page faults, and then fault in ``buf[:start]`` on the calling thread;
    contents are never changed.  The caller calls ``finish()`` on the answer before
    handing ``buf`` on.  None where it would not pay: one thread, a pool
    worker, a buffer outside [:data:`_POPULATE_MIN_BYTES`, :data:`_POPULATE_MAX_BYTES`),
    pages of it already in memory, or no ``madvise``/``mincore``.

    It pays for reads into outputs that are all kept (fresh memory each), and costs nothing
    measurable where the memory is reused: ``KeptChunkReads`` (helper ``beside`` against
    ``off``) in ``asv_benchmarks/benchmarks/bench_array_io.py`` tracks it.

    Parameters
    ----------
    buf
        Fresh ``uint8`` memory, about to be filled.
    start
        The calling thread's share: ``buf[:start]``.

    Returns
    -------
    zarr3c.concurrency.Beside or None
        The pool thread's work, to ``finish()``; None where nothing was started.

    Examples
    --------
    >>> populate_beside(np.zeros(16, dtype=np.uint8)) is None   # too small to pay
    True
    """
    if _fileio is None or not _POPULATE_MIN_BYTES <= buf.nbytes < _POPULATE_MAX_BYTES:
        return None
    # Memory the allocator reused is in place already: a helper would cost its hand-off and
    # save nothing.
    resident, pages = _fileio.resident_pages(buf, start, buf.nbytes)
    if resident != 0 or not pages:
        return None
    beside = run_beside(_fileio.populate, buf, start, buf.nbytes)
    if beside is not None and start:
        # The caller's share too: one madvise costs less than faulting the pages in one by
        # one inside the read's copy.
        _fileio.populate(buf, 0, start)
    return beside
