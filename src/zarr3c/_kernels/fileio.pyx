"""Read byte ranges of a file into a buffer in one call that holds the GIL once (POSIX).

A LocalStore read of one chunk is ``open``, ``fstat``, ``pread`` and ``close``: through
``os`` each releases and retakes the GIL, and when other threads are running Python
meanwhile every retake waits its turn, so that two threads reading chunks are no faster than
one.  :func:`read_ranges_into` makes the four calls without the GIL, once (the ``one call``
and ``os`` rows of ``bench_stores.LocalStoreOneCallReads`` track the difference).

Errors are not interpreted here: the caller gets ``errno`` and reads again through ``os``,
which reports them.  Its reference is that path (``zarr3c.stores.local``).

:func:`read_files_elements` reads a batch of whole chunk files one after another into one
scratch buffer and copies each one's elements out (``scatter.copy_elements``), with the GIL
released once for the batch: a point selection on an uncompressed chunked array otherwise
gives it up and retakes it twice per chunk, and with two threads each retake can wait longer
than the read (``bench_stores.LocalStoreOneCallReads``, ``batch`` against ``one call``).  Its
reference is :func:`read_ranges_into` then ``copy_elements`` per file.

:func:`populate` faults in the pages of a fresh buffer that a read is about to fill
(Linux's ``MADV_POPULATE_WRITE``), so that another thread can take those page faults while
the reading thread reads or decodes: a fresh output takes one fault per page, which can
take about as long as reading the chunk file (``bench_array_io.KeptChunkReads``).  It never
changes the buffer's contents; its reference does nothing.  :func:`resident_pages` tells
whether a buffer is fresh (``mincore``): memory the allocator reused takes no faults, and a
helper would only cost its hand-off.

``_write_atomic`` (for ``writes.pyx``, without an entry point of its own) writes a file as
``LocalStore.set`` does (``zarr3c.stores.local.files.write_atomic``, its reference): into a
new temporary file beside it, locked shared while written (so that cleanups and the key's
other writers leave it alone), then renamed over it; missing directories are created.  The
temporary file is the first of the key's slots ``.<name>.zarr3c-tmp-<slot as 16 hex>``
(:data:`TEMP_SLOTS` of them) that is free or holds a killed writer's leftover (an unheld
file, removed and taken again); slots held by live writers are passed.  So crash leftovers
beside a key never outnumber its concurrent writers, and are found without listing the
directory (see ``zarr3c.stores.local.files``).
"""

from libc.errno cimport EEXIST, EINTR, EIO, ENOENT, ENOSYS, errno
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, strlen, strrchr
from posix.fcntl cimport O_CLOEXEC, O_CREAT, O_EXCL, O_NONBLOCK, O_RDONLY, O_WRONLY
from posix.fcntl cimport open as c_open
from posix.stat cimport S_ISREG, fstat, mkdir, stat, struct_stat
from posix.unistd cimport close as c_close
from posix.unistd cimport pread as c_pread
from posix.unistd cimport unlink
from posix.unistd cimport write as c_write
from posix.unistd cimport _SC_PAGESIZE, sysconf

from zarr3c._kernels.copy cimport MAX_NDIM, copy_core
from zarr3c._kernels.scatter cimport check_element_runs, copy_element_run, take_runs

import numpy as np

__all__ = ["SHARD_UNEXPECTED", "TEMP_SLOTS", "populate", "read_box_into", "read_files_elements",
           "read_files_ranges_into", "read_range_into", "read_ranges_into", "read_shard_parts",
           "read_tail_into", "resident_pages"]

cdef extern from *:
    """
    #include <sys/mman.h>
    #ifdef MADV_POPULATE_WRITE
    #define ZARR3C_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
    #else
    #define ZARR3C_MADV_POPULATE_WRITE (-1)
    #endif
    """
    const int ZARR3C_MADV_POPULATE_WRITE
    int madvise(void* addr, size_t length, int advice) nogil
    int mincore(void* addr, size_t length, unsigned char* vec) nogil

cdef extern from "<sys/file.h>" nogil:
    int flock(int fd, int operation)
    const int LOCK_SH
    const int LOCK_EX
    const int LOCK_NB

cdef extern from "<stdio.h>" nogil:
    int rename(const char* old, const char* new)


#: _read_core's answer when a range no longer fits the buffer (the arrays changed since the
#: caller checked them, in another thread)
cdef enum:
    _CHANGED = -1


cdef int _open_file(const char* c_path, int* fd, int64_t* size) noexcept nogil:
    """open (without blocking: a FIFO) and fstat: errno, or 0 with ``fd`` open for the
    caller to close and ``size`` the file's size (-1 if not a regular file)."""
    cdef struct_stat st
    cdef int err
    size[0] = -1
    fd[0] = c_open(c_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    if fd[0] < 0:
        return errno
    if fstat(fd[0], &st) != 0:
        err = errno
        c_close(fd[0])
        return err
    if S_ISREG(st.st_mode):
        size[0] = st.st_size
    return 0


cdef int _pread_upto(int fd, uint8_t* dst, int64_t n, int64_t pos, int64_t* got
                     ) noexcept nogil:
    """pread ``n`` bytes from ``pos`` into ``dst``, fewer where the file ends first (it may
    shrink meanwhile): errno or 0, and ``got`` the bytes read."""
    cdef int64_t k
    got[0] = 0
    while n > 0:
        k = c_pread(fd, dst, <size_t>n, pos)
        if k < 0:
            if errno == EINTR:
                continue
            return errno
        if k == 0:
            break
        got[0] += k
        dst += k
        pos += k
        n -= k
    return 0


cdef int _write_all(int fd, const uint8_t* src, int64_t n) noexcept nogil:
    """write ``n`` bytes however short each write comes back: errno or 0."""
    cdef int64_t k
    while n > 0:
        k = c_write(fd, src, <size_t>n)
        if k < 0:
            if errno == EINTR:
                continue
            return errno
        if k == 0:
            return EIO  # never for a regular file: do not spin
        src += k
        n -= k
    return 0


cdef int _make_parents(char* path) noexcept nogil:
    """mkdir every directory above ``path`` that is missing: errno or 0 (a component that
    is a file shows when the file is opened)."""
    cdef char* p = path + 1
    cdef int err = 0
    while p[0] != 0:
        if p[0] == 47:  # "/"
            p[0] = 0
            if mkdir(path, 0o777) != 0 and errno != EEXIST:
                err = errno
            p[0] = 47
            if err:
                return err
        p += 1
    return 0


cdef enum:
    # a key's temporary file slots, and the retries of a write losing its slot (or its
    # directory) to a concurrent writer, cleanup or erase: as zarr3c.stores.local.files
    _TEMP_SLOTS = 1024
    _TEMP_RETRIES = 16

#: The most temporary files one key's writers use at once (LocalStore's ``TEMP_SLOTS``)
TEMP_SLOTS = _TEMP_SLOTS


cdef bint _same_file(int fd, const char* path) noexcept nogil:
    """Whether ``path`` still names the file open as ``fd``."""
    cdef struct_stat mine, named
    return (fstat(fd, &mine) == 0 and stat(path, &named) == 0 and mine.st_ino == named.st_ino
            and mine.st_dev == named.st_dev)


cdef bint _remove_if_unheld(const char* path) noexcept nogil:
    """Remove the temporary file ``path`` unless a live writer holds its ``flock``
    (``files.remove_if_unheld``): whether it was removed."""
    cdef int fd = c_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    cdef bint removed = False
    if fd < 0:
        return False
    # Unlink only what we hold: the path may have been renamed or replaced meanwhile.
    if flock(fd, LOCK_EX | LOCK_NB) == 0 and _same_file(fd, path):
        removed = unlink(path) == 0
    c_close(fd)
    return removed


cdef int _write_atomic(const char* path, char* tmp, size_t tmp_cap, const uint8_t** bufs,
                       const int64_t* lens, Py_ssize_t nbufs) noexcept nogil:
    """``bufs[i][:lens[i]]``, one after another, as the file ``path``, through a temporary
    file beside it (``tmp``: ``tmp_cap`` bytes of room for its name, at least
    ``strlen(path) + 96``), the first of its slots free or left by a killed writer, renamed
    over it: errno or 0, and on failure no temporary file left and ``path`` as it was."""
    cdef const char* slash = strrchr(path, 47)
    cdef size_t dir_len = <size_t>(slash - path) + 1 if slash != NULL else 0
    cdef const char* name = path + dir_len
    cdef size_t name_len = strlen(name)
    cdef int fd = -1, err = 0, slot = 0, retries = 0
    cdef Py_ssize_t i
    if name_len > 64:
        name_len = 64
    if dir_len + name_len + 64 > tmp_cap:
        return EIO
    memcpy(tmp, path, dir_len)
    tmp[dir_len] = 46  # "."
    memcpy(tmp + dir_len + 1, name, name_len)
    while slot < _TEMP_SLOTS and retries <= _TEMP_RETRIES:
        snprintf(tmp + dir_len + 1 + name_len, 48, ".zarr3c-tmp-%016llx",
                 <unsigned long long>slot)
        fd = c_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        if fd < 0:
            err = errno
            if err == ENOENT:  # the directory is missing (or was just pruned)
                err = _make_parents(tmp)
                if err:
                    return err
                retries += 1
                continue
            if err == EEXIST:
                # a killed writer's leftover (removed: the slot is taken again) or a live
                # writer's (held: the next slot)
                if _remove_if_unheld(tmp):
                    retries += 1
                else:
                    slot += 1
                continue
            return err
        # claimed, as LocalStore's writes claim theirs: a cleanup or writer that removed
        # the name in the instant before the lock leaves another file (or none) there
        if flock(fd, LOCK_SH) == 0 and not _same_file(fd, tmp):
            c_close(fd)
            fd = -1
            retries += 1
            continue
        break
    if fd < 0:
        return EEXIST
    err = 0
    for i in range(nbufs):
        if not err:
            err = _write_all(fd, bufs[i], lens[i])
    if not err and rename(tmp, path) != 0:
        err = errno
    if err:
        unlink(tmp)  # while still held: once unlocked, its slot may be another writer's
    c_close(fd)
    return err


cdef int _read_core(const char* c_path, uint8_t* dst, Py_ssize_t room, const int64_t* starts,
                    const int64_t* stops, const int64_t* ats, Py_ssize_t n, int64_t* got,
                    int64_t* size, bint tail=False) noexcept nogil:
    """open, fstat, the preads, close: errno (0 on success), or _CHANGED; ``size`` -1 if
    not a regular file.  The caller checked the ranges against the ``room`` bytes of
    ``dst``; each is checked again as it is read, since the arrays may change meanwhile.
    With ``tail``, the ranges count from ``room`` bytes before the file's end (from its
    start in a file shorter than that)."""
    cdef int fd, err
    cdef int64_t start, stop, at, k, shift = 0
    cdef Py_ssize_t i
    got[0] = 0
    err = _open_file(c_path, &fd, size)
    if err:
        return err
    if size[0] >= 0:
        if tail and size[0] > room:
            shift = size[0] - room
        for i in range(n):
            start, stop, at = starts[i], stops[i], ats[i]
            if start < 0 or stop < start or at < 0 or stop - start > room - at:
                err = _CHANGED
                break
            start += shift
            stop += shift
            if stop > size[0]:
                stop = size[0]
            if stop > start:
                err = _pread_upto(fd, dst + at, stop - start, start, &k)
                got[0] += k
                if err:
                    break
    c_close(fd)
    return err


cdef int _check_range(Py_ssize_t i, int64_t start, int64_t stop, int64_t at,
                      Py_ssize_t room) except -1:
    if start < 0 or stop < start or at < 0:
        raise ValueError(f"read_ranges_into: range {i} is [{start}, {stop}) to {at}")
    if stop - start > room - at:
        raise ValueError(f"read_ranges_into: range {i} ({stop - start} bytes to {at}) "
                         f"reaches past the buffer's {room} bytes")
    return 0


cdef int _whole_pages(uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t stop, size_t* lo,
                      size_t* hi, str fn) except -1:
    """The whole pages of ``buf[start:stop]``, ``[lo, hi)`` (empty if none); ValueError for
    a range outside ``buf``.  Whole pages only: a call on a page edge past the range could
    touch memory that is not the caller's."""
    cdef Py_ssize_t n = buf.shape[0]
    if start < 0 or stop < start or stop > n:
        raise ValueError(f"{fn}: [{start}, {stop}) is not a range of {n} bytes")
    cdef size_t page = <size_t>sysconf(_SC_PAGESIZE)
    lo[0] = hi[0] = 0
    if stop > start and page and not page & (page - 1):
        lo[0] = (<size_t>&buf[0] + <size_t>start + page - 1) & ~(page - 1)
        hi[0] = max(lo[0], (<size_t>&buf[0] + <size_t>stop) & ~(page - 1))
    return 0


def resident_pages(uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t stop):
    """How many of the whole pages of ``buf[start:stop]`` are in memory (``mincore``):
    ``(resident, pages)``, resident -1 where it cannot tell.  A buffer the allocator reused
    has them; fresh memory has none, and will fault on every one.

    Raises
    ------
    ValueError
        If ``[start, stop)`` is not a range inside ``buf``.
    """
    cdef size_t lo, hi, i, count = 0
    _whole_pages(buf, start, stop, &lo, &hi, "resident_pages")
    cdef size_t page = <size_t>sysconf(_SC_PAGESIZE)
    cdef size_t pages = (hi - lo) // page if hi > lo else 0
    if pages == 0:
        return 0, 0
    cdef unsigned char* vec = <unsigned char*>malloc(pages)
    if vec == NULL:
        raise MemoryError()
    cdef int failed
    try:
        with nogil:
            failed = mincore(<void*>lo, hi - lo, vec)
            if not failed:
                for i in range(pages):
                    count += vec[i] & 1
    finally:
        free(vec)
    return (-1 if failed else <Py_ssize_t>count), <Py_ssize_t>pages


def populate(uint8_t[::1] buf, Py_ssize_t start, Py_ssize_t stop):
    """Fault in, writable, the whole pages of ``buf[start:stop]`` (``MADV_POPULATE_WRITE``,
    Linux 5.14 and newer), leaving every byte as it was; the GIL is released meanwhile.

    Returns 0, or the ``errno`` of a refusal, after which nothing was done (``EINVAL`` on
    an older kernel, ``ENOSYS`` where the platform has no such advice); the buffer is
    unchanged either way.

    Raises
    ------
    ValueError
        If ``[start, stop)`` is not a range inside ``buf``.
    """
    cdef size_t lo, hi
    _whole_pages(buf, start, stop, &lo, &hi, "populate")
    if ZARR3C_MADV_POPULATE_WRITE < 0:
        return ENOSYS
    cdef int result = 0
    if hi > lo:
        with nogil:
            if madvise(<void*>lo, hi - lo, ZARR3C_MADV_POPULATE_WRITE) != 0:
                result = errno
    return result


cdef const char* _c_path(str fn, bytes path, str which) except NULL:
    """``path`` as a C string; ValueError if it holds a NUL byte (C would stop at it and
    open another file)."""
    if path is None:
        raise TypeError(f"{fn}: a path is bytes, not None")
    if b"\0" in path:
        raise ValueError(f"{fn}: {which} holds a NUL byte")
    return path


def read_range_into(bytes path, uint8_t[::1] buf, int64_t start, int64_t stop, int64_t at):
    """:func:`read_ranges_into` of the one range ``[start, stop)`` to ``buf[at:]``."""
    _check_range(0, start, stop, at, buf.shape[0])
    cdef const char* c_path = _c_path("read_range_into", path, "the path")
    cdef uint8_t* dst = &buf[0] if buf.shape[0] else NULL
    cdef int err
    cdef int64_t got, size
    with nogil:
        err = _read_core(c_path, dst, buf.shape[0], &start, &stop, &at, 1, &got, &size)
    return err, got, size


def read_tail_into(bytes path, uint8_t[::1] buf):
    """Read the last ``len(buf)`` bytes of the file at ``path`` into ``buf`` (all of a
    shorter file, into its start), in one call that releases the GIL once: a shard index
    at the end of its shard.

    Returns ``(errno, bytes read, file size)`` as :func:`read_ranges_into`: the read is
    whole when the bytes read equal ``min(len(buf), size)``.
    """
    cdef const char* c_path = _c_path("read_tail_into", path, "the path")
    cdef uint8_t* dst = &buf[0] if buf.shape[0] else NULL
    cdef int err
    cdef int64_t start = 0, stop = buf.shape[0], at = 0, got, size
    with nogil:
        err = _read_core(c_path, dst, buf.shape[0], &start, &stop, &at, 1, &got, &size, True)
    return err, got, size


def read_ranges_into(bytes path, uint8_t[::1] buf, const int64_t[::1] starts,
                     const int64_t[::1] stops, const int64_t[::1] ats):
    """Read bytes ``[starts[i], stops[i])`` of the file at ``path`` into ``buf[ats[i]:]``,
    for each ``i``, none past the file's end.

    Returns ``(errno, bytes read, file size)``: ``errno`` 0 on success; the size is -1 when
    ``path`` is not a regular file (nothing is read).  A FIFO is opened without blocking.

    Raises
    ------
    ValueError
        If the three arrays differ in length, a range has ``start < 0``, ``stop < start``
        or ``at < 0``, or would reach past the end of ``buf``; or ``path`` holds a NUL
        byte.
    """
    cdef Py_ssize_t n = starts.shape[0], i
    if stops.shape[0] != n or ats.shape[0] != n:
        raise ValueError(
            f"read_ranges_into: {n} starts, {stops.shape[0]} stops and {ats.shape[0]} ats")
    for i in range(n):
        _check_range(i, starts[i], stops[i], ats[i], buf.shape[0])
    cdef const char* c_path = _c_path("read_ranges_into", path, "the path")
    if n == 0:
        return read_range_into(path, buf, 0, 0, 0)
    cdef uint8_t* dst = &buf[0] if buf.shape[0] else NULL
    cdef int err
    cdef int64_t got, size
    with nogil:
        err = _read_core(c_path, dst, buf.shape[0], &starts[0], &stops[0], &ats[0], n, &got,
                         &size)
    if err == _CHANGED:
        raise ValueError("read_ranges_into: the ranges changed during the call")
    return err, got, size


#: Where a box's span lands in read_box_into's staging: at the file offset's place in a
#: page, so that the kernel's copy runs between addresses a whole number of pages apart
#: (a copy between addresses a few bytes off that is much slower; see zarr3c._buffers, and
#: bench_stores.LocalStoreSuite.time_read_into_1mib_16_bytes_into_a_page)
cdef enum:
    _PAGE = 4096

cdef int64_t _INT64_MAX = 0x7FFFFFFFFFFFFFFF


def read_box_into(bytes path, int64_t nbytes, const int64_t[::1] strides not None,
                  object first, object counts, int64_t itemsize,
                  uint8_t[::1] staging not None, uint8_t[::1] dst not None,
                  int64_t dst_offset=0, object dst_strides=None):
    """Read the box of ``counts`` elements from ``first`` (per dimension) of the raw,
    C-ordered chunk in the file at ``path`` (``nbytes`` bytes, byte ``strides``) into
    ``dst`` from byte ``dst_offset`` at byte ``dst_strides`` (None: C order of ``counts``),
    with the GIL released once: open, fstat, one pread of the box's byte span into
    ``staging``, close, one strided copy (a small read of an uncompressed chunk: through
    ``os`` and the copy kernel that is five GIL hand-offs and a dozen small Python steps).
    Only a regular file of exactly ``nbytes`` bytes is read.

    Returns ``(errno, file size, copied)``: ``copied`` 1 when the box is in ``dst``;
    otherwise nothing is usable and the caller reads the chunk the ordinary way, which
    reports what is wrong (``errno`` set, the size -1 when the path is not a regular file,
    another size, or the file shrank during the read).

    Raises
    ------
    ValueError
        Before any read: ``first``, ``counts``, ``strides`` (and ``dst_strides``) of
        different lengths or more than ``MAX_NDIM``, a count below 1, a start, stride or
        ``dst_offset`` below 0, an itemsize below 1, a box reaching past ``nbytes`` or past
        the end of ``dst``, a ``staging`` shorter than the span plus a page, or a path
        holding a NUL byte.
    """
    cdef str fn = "read_box_into"
    cdef Py_ssize_t ndim = strides.shape[0], d
    cdef int64_t c_strides[MAX_NDIM]
    cdef int64_t c_counts[MAX_NDIM]
    cdef int64_t c_dst_strides[MAX_NDIM]
    cdef int64_t f, c, lo = 0, last = 0, room = dst.shape[0]
    if ndim > MAX_NDIM or len(first) != ndim or len(counts) != ndim or (
            dst_strides is not None and len(dst_strides) != ndim):
        raise ValueError(f"{fn}: starts, counts, strides and dst_strides of different "
                         f"lengths, or more than {MAX_NDIM} dimensions")
    if itemsize < 1 or nbytes < itemsize:
        raise ValueError(f"{fn}: itemsize {itemsize}, chunk of {nbytes} bytes")
    # Private copies, checked (the arrays may change in another thread without the GIL).
    # Each term is bounded by what is left of nbytes (of dst), so no sum overflows.
    for d in range(ndim):
        f, c, c_strides[d] = first[d], counts[d], strides[d]
        if f < 0 or c < 1 or c_strides[d] < 0 or f > nbytes or c > nbytes:
            raise ValueError(f"{fn}: axis {d}: start {f}, count {c}, stride {c_strides[d]}")
        if c_strides[d] and f + c - 1 > (nbytes - itemsize - last) // c_strides[d]:
            raise ValueError(f"{fn}: the box reaches past the chunk's {nbytes} bytes")
        c_counts[d] = c
        lo += f * c_strides[d]
        last += (f + c - 1) * c_strides[d]
    cdef int64_t span = last + itemsize - lo
    if staging.shape[0] < span + _PAGE:
        raise ValueError(f"{fn}: staging of {staging.shape[0]} bytes for a span of {span}")
    if dst_strides is None:
        c = itemsize
        for d in range(ndim - 1, -1, -1):
            c_dst_strides[d] = c
            if c_counts[d] > _INT64_MAX // c:
                raise ValueError(f"{fn}: the box does not fit in dst's {room} bytes")
            c *= c_counts[d]
    else:
        for d in range(ndim):
            c_dst_strides[d] = dst_strides[d]
    if dst_offset < 0 or dst_offset > room - itemsize:
        raise ValueError(f"{fn}: the box does not fit in dst's {room} bytes at {dst_offset}")
    last = dst_offset + itemsize
    for d in range(ndim):
        if c_dst_strides[d] < 0 or (c_dst_strides[d] and
                                    c_counts[d] - 1 > (room - last) // c_dst_strides[d]):
            raise ValueError(f"{fn}: the box does not fit in dst's {room} bytes")
        last += (c_counts[d] - 1) * c_dst_strides[d]
    cdef const char* c_path = _c_path(fn, path, "the path")
    cdef uint8_t* src = &staging[0]
    src += (lo - <int64_t><size_t>src) & (_PAGE - 1)
    cdef int fd, err
    cdef int64_t size, got = 0
    cdef bint copied = False
    with nogil:
        err = _open_file(c_path, &fd, &size)
        if not err:
            if size == nbytes:
                err = _pread_upto(fd, src, span, lo, &got)
            c_close(fd)
            if not err and size == nbytes and got == span:
                copy_core(src, 0, c_strides, &dst[0], dst_offset, c_dst_strides, c_counts,
                          ndim, itemsize)
                copied = True
    return err, size, int(copied)


cdef class _Files:
    """A batch's paths as C strings (their bytes held while it lives) and each file's
    ``[start, stop)`` run of ranges or elements, checked to lie in ``[0, limit]``: private
    copies, which the batch reads without the GIL."""
    cdef list held
    cdef const char** paths
    cdef int64_t* runs
    cdef int64_t* sizes
    cdef Py_ssize_t n

    def __cinit__(self, str fn, list paths, const int64_t[::1] starts not None,
                  const int64_t[::1] stops not None, Py_ssize_t limit):
        cdef Py_ssize_t k, n = len(paths)
        cdef bytes path
        self.n = n
        self.held = []
        self.paths = <const char**>malloc((n + 1) * sizeof(char*))
        self.runs = <int64_t*>malloc((2 * n + 1) * sizeof(int64_t))
        self.sizes = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if self.paths == NULL or self.runs == NULL or self.sizes == NULL:
            raise MemoryError(fn)
        take_runs(fn, "file", self.runs, starts, stops, n, limit)
        for k in range(n):
            path = paths[k]
            self.paths[k] = _c_path(fn, path, f"path {k}")
            self.held.append(path)

    cdef int take_sizes(self, str fn, const int64_t[::1] sizes, Py_ssize_t room) except -1:
        """Each file's expected size, checked to fit ``room`` bytes."""
        cdef Py_ssize_t k
        if sizes.shape[0] != self.n:
            raise ValueError(f"{fn}: {self.n} paths but {sizes.shape[0]} sizes")
        for k in range(self.n):
            self.sizes[k] = sizes[k]
            if not 0 <= self.sizes[k] <= room:
                raise ValueError(f"{fn}: file {k}: size {self.sizes[k]} does not fit the "
                                 f"scratch buffer ({room} bytes)")
        return 0

    def __dealloc__(self):
        free(self.paths)
        free(self.runs)
        free(self.sizes)


def read_files_ranges_into(
    list paths,
    uint8_t[::1] buf not None,
    const int64_t[::1] run_starts not None,
    const int64_t[::1] run_stops not None,
    const int64_t[::1] starts not None,
    const int64_t[::1] stops not None,
    const int64_t[::1] ats not None,
):
    """:func:`read_ranges_into` of each file ``paths[k]`` with its ranges ``run_starts[k]
    <= i < run_stops[k]``, one file after another with the GIL released once for all.

    Returns a list of ``(errno, bytes read, file size)``, one per file, as
    :func:`read_ranges_into` returns them.

    Raises
    ------
    ValueError
        Before anything is read: a path with a NUL byte, a run outside the range arrays,
        arrays of different lengths, or a range as :func:`read_ranges_into` refuses it.
    """
    cdef Py_ssize_t nranges = starts.shape[0], i, k, lo, hi
    if stops.shape[0] != nranges or ats.shape[0] != nranges:
        raise ValueError(f"read_files_ranges_into: {nranges} starts, {stops.shape[0]} stops "
                         f"and {ats.shape[0]} ats")
    cdef _Files files = _Files("read_files_ranges_into", paths, run_starts, run_stops, nranges)
    cdef Py_ssize_t room = buf.shape[0]
    for i in range(nranges):
        _check_range(i, starts[i], stops[i], ats[i], room)
    cdef int64_t[::1] out = np.empty(3 * files.n + 1, dtype=np.int64)
    cdef uint8_t* dst = &buf[0] if room else NULL
    cdef const int64_t* sp = &starts[0] if nranges else NULL
    cdef const int64_t* ep = &stops[0] if nranges else NULL
    cdef const int64_t* ap = &ats[0] if nranges else NULL
    cdef int err
    cdef bint changed = False
    with nogil:
        for k in range(files.n):
            lo, hi = files.runs[2 * k], files.runs[2 * k + 1]
            err = _read_core(files.paths[k], dst, room, sp + lo, ep + lo, ap + lo, hi - lo,
                             &out[3 * k + 1], &out[3 * k + 2])
            if err == _CHANGED:
                changed = True
                break
            out[3 * k] = err
    if changed:
        raise ValueError("read_files_ranges_into: the ranges changed during the call")
    return [(int(out[3 * k]), int(out[3 * k + 1]), int(out[3 * k + 2]))
            for k in range(files.n)]


def read_files_elements(
    list paths,
    uint8_t[::1] scratch not None,
    const int64_t[::1] sizes not None,
    const int64_t[::1] run_starts not None,
    const int64_t[::1] run_stops not None,
    const int64_t[::1] src_offsets not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    int64_t itemsize,
):
    """For each ``k``: read the file at ``paths[k]`` whole into ``scratch`` when it is a
    regular file of exactly ``sizes[k]`` bytes, then copy elements ``run_starts[k] <= i <
    run_stops[k]`` of it to ``dst`` as ``scatter.copy_elements(scratch[:sizes[k]],
    src_offsets, dst, dst_offsets, itemsize)`` copies them (in order: the last of repeated
    destinations wins); the GIL released once for all.

    Returns the list of ``k`` not read: no such file, an error, not a regular file or not
    ``sizes[k]`` bytes.  None of their elements are copied (the caller reads them the
    ordinary way, which reports why).

    Raises
    ------
    ValueError
        Before anything is read: a path with a NUL byte, a size larger than ``scratch``, an
        element reaching outside its file's size or ``dst``, a run outside the offset
        arrays, or arrays of different lengths.
    """
    cdef Py_ssize_t nelements = src_offsets.shape[0], k, bad = -1
    cdef Py_ssize_t slen = scratch.shape[0], dlen = dst.shape[0]
    cdef _Files files = _Files("read_files_elements", paths, run_starts, run_stops, nelements)
    files.take_sizes("read_files_elements", sizes, slen)
    check_element_runs("read_files_elements", "file", files.runs, files.n, src_offsets,
                       dst_offsets, files.sizes, 0, dlen, itemsize, "the file's size")
    cdef const int64_t* sop = &src_offsets[0] if nelements else NULL
    cdef const int64_t* dop = &dst_offsets[0] if nelements else NULL
    cdef uint8_t[::1] failed = bytearray(files.n + 1)
    cdef uint8_t* sp = &scratch[0] if slen else NULL
    cdef uint8_t* dp = &dst[0] if dlen else NULL
    cdef int64_t start = 0, stop, at = 0, got, size
    with nogil:
        for k in range(files.n):
            stop = files.sizes[k]
            if (_read_core(files.paths[k], sp, slen, &start, &stop, &at, 1, &got, &size) != 0
                    or size != stop or got != stop):
                failed[k] = 1
                continue
            bad = copy_element_run(files.runs, k, sp, stop, sop, dp, dlen, dop, itemsize)
            if bad >= 0:
                break
    if bad >= 0:
        raise ValueError(f"read_files_elements: element {bad} changed during the call")
    return [k for k in range(files.n) if failed[k]]


# -- a shard's index and the inner chunk bytes it points to, in one call -------------------------

#: The most parts :func:`read_shard_parts` reads in one call (copied to the stack first)
cdef enum:
    _MAX_PARTS = 64

cdef enum:
    _UNEXPECTED = 1

#: read_shard_parts: the file or an entry is not as the caller expects (see its docstring)
SHARD_UNEXPECTED = _UNEXPECTED

cdef uint64_t _MISSING_ENTRY = 0xFFFFFFFFFFFFFFFFULL


cdef inline uint64_t _le_u64(const uint8_t* p) noexcept nogil:
    # The index stores little-endian uint64 whatever the machine's order.
    cdef uint64_t v = 0
    cdef int k
    for k in range(7, -1, -1):
        v = (v << 8) | p[k]
    return v


cdef int _shard_core(const char* c_path, uint8_t* index, int64_t index_n, bint at_end,
                     const int64_t* slots, const int64_t* los, const int64_t* his,
                     Py_ssize_t n, int64_t expect, uint8_t* staging, int64_t room,
                     int64_t* ats, int64_t* lens, int64_t* size, int* status) noexcept nogil:
    """open, fstat, pread the index, then each part's bytes, close: errno (0 on success);
    ``status`` _UNEXPECTED when the file or an entry is not as expected (nothing more
    is read then).  The caller checked slots against the index's length and ``los``/``his``
    to be ranges; entries are checked here, against the file's size."""
    cdef int fd, err
    cdef int64_t data_lo, data_hi, lo, hi, at = 0, pos, want, got
    cdef uint64_t offset, nbytes
    cdef Py_ssize_t i
    status[0] = 0
    err = _open_file(c_path, &fd, size)
    if err:
        return err
    if size[0] >= 0:
        if size[0] < index_n:
            status[0] = _UNEXPECTED
        else:
            # Where inner chunks may lie: the shard's bytes outside its index.
            data_lo = 0 if at_end else index_n
            data_hi = size[0] - index_n if at_end else size[0]
            err = _pread_upto(fd, index, index_n, data_hi if at_end else 0, &got)
            if got < index_n:  # (the file shrank since fstat)
                status[0] = _UNEXPECTED
            i = 0
            while i < n and not err and not status[0]:
                offset = _le_u64(index + 16 * slots[i])
                nbytes = _le_u64(index + 16 * slots[i] + 8)
                if offset == _MISSING_ENTRY and nbytes == _MISSING_ENTRY:
                    ats[i] = lens[i] = -1
                    i += 1
                    continue
                if (offset < <uint64_t>data_lo or nbytes > <uint64_t>data_hi
                        or offset > <uint64_t>data_hi - nbytes
                        or (expect >= 0 and nbytes != <uint64_t>expect)):
                    status[0] = _UNEXPECTED
                    break
                lo = los[i]
                hi = <int64_t>nbytes if his[i] < 0 else his[i]
                if hi > <int64_t>nbytes or lo > hi or hi - lo > room - at:
                    status[0] = _UNEXPECTED
                    break
                pos = <int64_t>offset + lo
                want = hi - lo
                err = _pread_upto(fd, staging + at, want, pos, &got)
                if got < want:
                    status[0] = _UNEXPECTED
                ats[i] = at
                lens[i] = want
                at += want
                i += 1
    c_close(fd)
    return err


def read_shard_parts(bytes path, uint8_t[::1] index not None, bint index_at_end,
                     const int64_t[::1] slots not None, const int64_t[::1] los not None,
                     const int64_t[::1] his not None, int64_t expect_nbytes,
                     uint8_t[::1] staging not None, int64_t[::1] ats not None,
                     int64_t[::1] lens not None):
    """Read a shard's index and, through it, bytes of some of its inner chunks, in one call
    that releases the GIL once (a small read of a sharded array: through ``os`` that is two
    opens and four GIL hand-offs).

    The index is the shard's last ``len(index)`` bytes (``index_at_end``) or its first,
    read into ``index``; its entries are little-endian ``uint64`` pairs ``(offset,
    nbytes)`` from its first byte (the usual ``bytes`` [+ ``crc32c``] index chain; the
    caller checks the checksum and the index afterwards, before using any byte read).  Part
    ``i`` is bytes ``[los[i], his[i])`` of the inner chunk of entry ``slots[i]`` (``his[i]``
    -1: to its end), read into ``staging`` one part after another: ``ats[i]`` where it
    starts, ``lens[i]`` its length; both -1 for an entry marked missing.

    Returns ``(errno, file size, status)``: ``errno`` 0 on success (else nothing is
    usable; the size is -1 when the path is not a regular file), ``status``
    :data:`SHARD_UNEXPECTED` when the file is shorter than the index, ended early, or an
    entry needed is half missing, lies outside the shard's data (into the index, past its
    end), holds other than ``expect_nbytes`` bytes (when ``>= 0``), is shorter than its
    part, or a part does not fit in ``staging``: the caller reads the shard again the long
    way, which reports what is wrong.

    Raises
    ------
    ValueError
        Arrays of different lengths, more than 64 parts, a slot whose entry lies outside
        ``index``, a part with ``los[i] < 0`` or ``his[i] < los[i]`` (other than -1), or a
        path holding a NUL byte.
    """
    cdef str fn = "read_shard_parts"
    cdef Py_ssize_t n = slots.shape[0], i
    cdef int64_t c_slots[_MAX_PARTS]
    cdef int64_t c_los[_MAX_PARTS]
    cdef int64_t c_his[_MAX_PARTS]
    if los.shape[0] != n or his.shape[0] != n or ats.shape[0] != n or lens.shape[0] != n:
        raise ValueError(f"{fn}: slots, los, his, ats and lens must have the same length")
    if n > _MAX_PARTS:
        raise ValueError(f"{fn}: {n} parts, at most {_MAX_PARTS} in one call")
    if index.shape[0] == 0:
        raise ValueError(f"{fn}: the index buffer is empty")
    # Private copies, checked: the arrays may change in another thread without the GIL.
    for i in range(n):
        c_slots[i], c_los[i], c_his[i] = slots[i], los[i], his[i]
        if c_slots[i] < 0 or c_slots[i] > (index.shape[0] - 16) // 16:
            raise ValueError(f"{fn}: part {i}: entry {c_slots[i]} is outside the "
                             f"{index.shape[0]}-byte index")
        if c_los[i] < 0 or (c_his[i] < c_los[i] and c_his[i] != -1):
            raise ValueError(f"{fn}: part {i}: [{c_los[i]}, {c_his[i]}) is not a range")
    cdef const char* c_path = _c_path(fn, path, "the path")
    cdef uint8_t* dst = &staging[0] if staging.shape[0] else NULL
    cdef int64_t* at_p = &ats[0] if n else NULL
    cdef int64_t* len_p = &lens[0] if n else NULL
    cdef int err, status
    cdef int64_t size
    with nogil:
        err = _shard_core(c_path, &index[0], index.shape[0], index_at_end, c_slots, c_los,
                          c_his, n, expect_nbytes, dst, staging.shape[0], at_p, len_p, &size,
                          &status)
    return err, size, status
