"""Read byte ranges of a file into a buffer in one call that holds the GIL once (POSIX).

A LocalStore read of one chunk is ``open``, ``fstat``, ``pread`` and ``close``: through
``os`` each releases and retakes the GIL, and when other threads are running Python
meanwhile every retake waits its turn.  Measured here: 512 chunk reads of a point selection
spent 2.6x longer in those calls with two threads than with one, so two threads were no
faster than one.  :func:`read_ranges_into` makes the four calls without the GIL, once.

Errors are not interpreted here: the caller gets ``errno`` and reads again through ``os``,
which reports them.  Its reference is that path (``zarr3c.stores.local``).
"""

from libc.errno cimport EINTR, errno
from libc.stdint cimport int64_t, uint8_t
from posix.fcntl cimport O_CLOEXEC, O_NONBLOCK, O_RDONLY
from posix.fcntl cimport open as c_open
from posix.stat cimport S_ISREG, fstat, struct_stat
from posix.unistd cimport close as c_close
from posix.unistd cimport pread as c_pread

__all__ = ["read_range_into", "read_ranges_into"]


#: _read_core's answer when a range no longer fits the buffer (the arrays changed since the
#: caller checked them, in another thread)
cdef enum:
    _CHANGED = -1


cdef int _read_core(const char* c_path, uint8_t* dst, Py_ssize_t room, const int64_t* starts,
                    const int64_t* stops, const int64_t* ats, Py_ssize_t n, int64_t* got,
                    int64_t* size) noexcept nogil:
    """open, fstat, the preads, close: errno (0 on success), or _CHANGED; ``size`` -1 if
    not a regular file.  The caller checked the ranges against the ``room`` bytes of
    ``dst``; each is checked again as it is read, since the arrays may change meanwhile."""
    cdef int fd, err = 0
    cdef struct_stat st
    cdef int64_t start, stop, at, k
    cdef Py_ssize_t i
    got[0] = 0
    size[0] = -1
    fd = c_open(c_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    if fd < 0:
        return errno
    if fstat(fd, &st) != 0:
        err = errno
    elif S_ISREG(st.st_mode):
        size[0] = st.st_size
        for i in range(n):
            start, stop, at = starts[i], stops[i], ats[i]
            if start < 0 or stop < start or at < 0 or stop - start > room - at:
                err = _CHANGED
                break
            if stop > size[0]:
                stop = size[0]
            while start < stop:
                k = c_pread(fd, dst + at, <size_t>(stop - start), start)
                if k < 0:
                    if errno == EINTR:
                        continue
                    err = errno
                    break
                if k == 0:  # the file shrank meanwhile
                    break
                got[0] += k
                start += k
                at += k
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


def read_range_into(bytes path, uint8_t[::1] buf, int64_t start, int64_t stop, int64_t at):
    """:func:`read_ranges_into` of the one range ``[start, stop)`` to ``buf[at:]``."""
    _check_range(0, start, stop, at, buf.shape[0])
    cdef const char* c_path = path
    cdef uint8_t* dst = &buf[0] if buf.shape[0] else NULL
    cdef int err
    cdef int64_t got, size
    with nogil:
        err = _read_core(c_path, dst, buf.shape[0], &start, &stop, &at, 1, &got, &size)
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
        or ``at < 0``, or would reach past the end of ``buf``.
    """
    cdef Py_ssize_t n = starts.shape[0], i
    if stops.shape[0] != n or ats.shape[0] != n:
        raise ValueError(
            f"read_ranges_into: {n} starts, {stops.shape[0]} stops and {ats.shape[0]} ats")
    for i in range(n):
        _check_range(i, starts[i], stops[i], ats[i], buf.shape[0])
    if n == 0:
        return read_range_into(path, buf, 0, 0, 0)
    cdef const char* c_path = path
    cdef uint8_t* dst = &buf[0] if buf.shape[0] else NULL
    cdef int err
    cdef int64_t got, size
    with nogil:
        err = _read_core(c_path, dst, buf.shape[0], &starts[0], &stops[0], &ats[0], n, &got,
                         &size)
    if err == _CHANGED:
        raise ValueError("read_ranges_into: the ranges changed during the call")
    return err, got, size
