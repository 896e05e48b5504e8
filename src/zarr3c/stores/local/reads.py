"""LocalStore's reads: whole files and byte ranges, as fresh bytes or into the caller's memory.

Three ways to read a file, chosen per call:

- **into bytes** (``get``, ``get_partial_values``): :func:`open_for_read`, then one
  ``pread`` per range (:func:`read_file`, :func:`read_ranges`); each range costs one copy.
- **into memory through** ``os`` (the read-into hooks, where ``os.preadv`` exists):
  :func:`read_file_into` reads each ``(start, stop, at)`` range straight into the caller's
  buffer (:func:`pread_into`).  Every ``os`` call gives up the GIL and waits to take it
  back, which other threads running Python make slow.
- **in one call** (POSIX builds, :data:`fileio` = ``zarr3c._kernels.fileio``): open, fstat,
  the reads and close without the GIL in between (:func:`_read_file_in_one_call`), a batch of
  files in one call too (:func:`read_into_items`).  Anything unusual (an error, a range that
  needs the bounce buffer, a path the kernel cannot take) comes back as :data:`RETRY`, and
  the ``os`` path reads it again and reports what is wrong.  Setting :data:`fileio` to None
  turns the one-call reads off (the tests compare both paths so).

The bounce buffer: a long range whose destination lies at a slow distance from its place in
the file (see :mod:`zarr3c._buffers`) is read into a page-aligned per-thread buffer half a
page past that place, then copied on (:func:`_read_bounced`).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

import numpy as np

from zarr3c._buffers import PAGE_SIZE, bad_offset, empty_aligned
from zarr3c.errors import OversizedValueError, StoreError
from zarr3c.stores.byte_ranges import resolve_byte_range

__all__ = [
    "BOUNCE_MIN_BYTES",
    "HAVE_PREADV",
    "RETRY",
    "FileReadInto",
    "fileio",
    "kernel_path",
    "kernel_ranges",
    "one_call_outcome",
    "open_for_read",
    "pread_into",
    "read_at",
    "read_file",
    "read_file_into",
    "read_file_item",
    "read_into_item",
    "read_into_items",
    "read_ranges",
    "read_ranges_item",
]

# O_NONBLOCK: opening a FIFO planted at a key's path must not block (it then reads as None).
_O_READ = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_HAVE_PREAD = hasattr(os, "pread")
#: Whether ranges can be read straight into memory (``os.preadv``; not on Windows).
HAVE_PREADV = hasattr(os, "preadv")
#: Ranges at least this long are read through the bounce buffer when their destination lies
#: at a slow distance from the source (zarr3c._buffers); shorter ones cost too little to care.
BOUNCE_MIN_BYTES = 1 << 14
_BOUNCE_BYTES = 1 << 18
_bounce = threading.local()

fileio: Any
try:  # (POSIX builds only)
    from zarr3c._kernels import fileio
except ImportError:  # pragma: no cover - Windows
    fileio = None
#: What the one-call read (:data:`fileio`) reports for a file that is not there: None, as
#: :func:`open_for_read` says.
_NO_FILE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EISDIR})
#: The one-call read's answer when it leaves the read to the ``os`` path.
RETRY = object()
#: The largest file offset (``off_t``).
_INT64_MAX = 2**63 - 1

#: ``(bytes read, file size)``: what a read into memory answers for a file that is there.
ReadCount: TypeAlias = tuple[int, int]

#: One file of a batched read into memory: ``(key, path, (start, stop, at) ranges,
#: destination, its address when it matters)`` (the address is None when no range is long
#: enough for the bounce buffer).  Plain tuples: one is built per file read.
FileReadInto: TypeAlias = tuple[str, str, Sequence[tuple[int, int, int]], memoryview,
                                int | None]


# -- into bytes ------------------------------------------------------------------------------


def read_at(fd: int, offset: int, n: int) -> bytes:
    """Exactly ``n`` bytes at ``offset`` or, at end of file, as many as there are."""
    if n <= 0:
        return b""
    if _HAVE_PREAD:
        data = os.pread(fd, n, offset)
        if len(data) == n or not data:
            return data
        parts = [data]
        got = len(data)
        while got < n:
            more = os.pread(fd, n - got, offset + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)
    os.lseek(fd, offset, os.SEEK_SET)
    parts = []
    got = 0
    while got < n:
        more = os.read(fd, n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def open_for_read(key: str, path: str) -> tuple[int, int] | None:
    """``(fd, size)`` of the regular file at ``path``, or None when there is no such file.

    Raises
    ------
    StoreError
        The file is there but cannot be opened (naming the key and the file).
    """
    try:
        fd = os.open(path, _O_READ)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except PermissionError as exc:
        if os.path.isdir(path):  # Windows refuses to open directories
            return None
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st.st_size


def read_file(key: str, path: str, limit: int | None = None) -> bytes | None:
    """The contents of the file of ``key``, or None when there is none; with ``limit``,
    OversizedValueError (from the file's size, before reading) if it has more bytes."""
    opened = open_for_read(key, path)
    if opened is None:
        return None
    fd, size = opened
    if limit is not None and size > limit:
        os.close(fd)
        raise OversizedValueError(key, size, limit)
    try:
        return read_at(fd, 0, size)
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)


def read_ranges(key: str, path: str, ranges: list[tuple[int, int | None]]
                ) -> list[bytes | None]:
    """The normalized ``(start, length)`` ranges of the file of ``key``, one ``pread``
    each; all None when there is no file."""
    opened = open_for_read(key, path)
    if opened is None:
        return [None] * len(ranges)
    fd, size = opened
    try:
        out: list[bytes | None] = []
        for start, length in ranges:
            lo, hi = resolve_byte_range(start, length, size)
            out.append(read_at(fd, lo, hi - lo))
        return out
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)


def read_file_item(item: tuple[str, str]) -> bytes | None:
    """:func:`read_file` of a ``(key, path)`` pair (for the pool's map)."""
    return read_file(item[0], item[1])


def read_file_at_most_item(item: tuple[str, str, int]) -> bytes | None:
    """:func:`read_file` of a ``(key, path, limit)`` triple (for the pool's map)."""
    return read_file(item[0], item[1], item[2])


def read_ranges_item(item: tuple[str, str, list[tuple[int, int | None]]]
                     ) -> list[bytes | None]:
    """:func:`read_ranges` of a ``(key, path, ranges)`` triple (for the pool's map)."""
    return read_ranges(item[0], item[1], item[2])


# -- into memory -----------------------------------------------------------------------------


def read_into_item(item: FileReadInto) -> int | None:
    """The bytes :func:`read_file_into` read for one file, or None when it is not there."""
    read = read_file_into(*item)
    return None if read is None else read[0]


def read_into_items(items: list[FileReadInto]) -> list[int | None]:
    """:func:`read_into_item` of each item, all those that can in one :data:`fileio` call
    (the GIL given up and taken back once, not once per file: with other threads running
    Python each retake waits its turn)."""
    out: list[int | None] = [None] * len(items)
    todo: list[int] = []
    paths: list[bytes] = []
    ranges: list[tuple[int, int, int]] = []
    bounds = [0]
    for i, (_key, path, item_ranges, _view, address) in enumerate(items):
        encoded = _one_call_path(path, item_ranges, address)
        if encoded is None:
            out[i] = read_into_item(items[i])
            continue
        todo.append(i)
        paths.append(encoded)
        ranges += item_ranges
        bounds.append(len(ranges))
    if not todo:
        return out
    runs = np.array(bounds, dtype=np.int64)
    cols = np.array(ranges, dtype=np.int64).reshape(-1, 3).T.copy()
    try:
        done = fileio.read_files_ranges_into(paths, items[todo[0]][3], runs[:-1], runs[1:],
                                             *cols)
    except (ValueError, TypeError, BufferError):  # not a writable byte buffer, or too short
        for i in todo:
            out[i] = read_into_item(items[i])
        return out
    for i, answer in zip(todo, done, strict=True):
        outcome = one_call_outcome(*answer)
        if outcome is RETRY:
            out[i] = read_into_item(items[i])  # the os path reads it again and reports why
        else:
            out[i] = None if outcome is None else outcome[0]
    return out


def read_file_into(key: str, path: str, ranges: Sequence[tuple[int, int, int]],
                   view: memoryview, address: int | None) -> ReadCount | None:
    """Each ``(start, stop, at)`` range of the file into ``view[at:]`` (see
    :func:`pread_into`): ``(bytes read, file size)``, or None when there is no file.

    In one call that holds the GIL once where it can (:func:`_read_file_in_one_call`),
    else (or to report an error) through ``os``."""
    if fileio is not None:
        done = _read_file_in_one_call(path, ranges, view, address)
        if done is not RETRY:
            return done
    opened = open_for_read(key, path)
    if opened is None:
        return None
    fd, size = opened
    got = 0
    try:
        for start, stop, at in ranges:
            # (no read past the end: it would only return nothing)
            got += pread_into(fd, view, start, min(stop, size), at, address)
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)
    return got, size


def _read_file_in_one_call(path: str, ranges: Sequence[tuple[int, int, int]],
                          view: memoryview, address: int | None) -> Any:
    """:func:`read_file_into` through :data:`fileio`: open, fstat, the reads and close
    without the GIL in between (through ``os`` each call gives it up and waits to take it
    back, which other threads running Python make slow).  :data:`RETRY` where a range needs
    the bounce buffer, or on any error: the ``os`` path reads it again, and reports what is
    wrong."""
    assert fileio is not None
    encoded = _one_call_path(path, ranges, address)
    if encoded is None:
        return RETRY
    try:
        if len(ranges) == 1:
            ((start, stop, at),) = ranges
            return one_call_outcome(*fileio.read_range_into(encoded, view, start, stop, at))
        starts, stops, ats = np.array(ranges, dtype=np.int64).reshape(-1, 3).T.copy()
        return one_call_outcome(*fileio.read_ranges_into(encoded, view, starts, stops, ats))
    except (ValueError, TypeError, BufferError):  # not a writable byte buffer, or too short
        return RETRY


def _one_call_path(path: str, ranges: Iterable[tuple[int, int, int]],
                  address: int | None) -> bytes | None:
    """``path`` as the :data:`fileio` kernel takes it, or None where the ``os`` path must
    read it: a range needs the bounce buffer, or reaches past what ``int64`` holds (a
    damaged shard index's; no file is that long, and the ``os`` path reads nothing of it),
    or the path holds a NUL (C would stop at it; ``os`` refuses such a path and reports
    it)."""
    return kernel_path(path) if kernel_ranges(ranges, address) else None


def kernel_ranges(ranges: Iterable[tuple[int, int, int]], address: int | None) -> bool:
    """Whether the :data:`fileio` kernel can read these ranges (see :func:`_one_call_path`)."""
    return not any(stop > _INT64_MAX or _needs_bounce(address, start, stop, at)
                   for start, stop, at in ranges)


def kernel_path(path: str) -> bytes | None:
    """``path`` as the :data:`fileio` kernel takes it; None if it holds a NUL."""
    encoded = os.fsencode(path)
    return None if b"\0" in encoded else encoded


def one_call_outcome(err: int, got: int, size: int) -> Any:
    """A :data:`fileio` read's ``(errno, bytes read, size)`` as :func:`read_file_into`
    answers: ``(bytes read, size)``, None for no file (or not a regular one), :data:`RETRY`
    for any other error (the ``os`` path reads it again and reports it)."""
    if err:
        return None if err in _NO_FILE_ERRNOS else RETRY
    return None if size < 0 else (got, size)


# -- the bounce buffer -----------------------------------------------------------------------


def pread_into(fd: int, view: memoryview, start: int, stop: int, at: int,
               address: int | None) -> int:
    """Bytes ``[start, stop)`` of ``fd`` into ``view[at:]``, through the bounce buffer when
    ``view`` lies at ``address`` and the range is long and at a slow distance; returns the
    bytes read (fewer at the end of the file)."""
    if _needs_bounce(address, start, stop, at):
        return _read_bounced(fd, view, start, stop, at)
    got = 0
    while start < stop:
        n = os.preadv(fd, [view[at:at + stop - start]], start)
        if n <= 0:
            break
        got += n
        start += n
        at += n
    return got


def _needs_bounce(address: int | None, start: int, stop: int, at: int) -> bool:
    """Whether reading bytes ``[start, stop)`` of a file to ``address + at`` goes through
    the bounce buffer: a long range at a slow distance (see zarr3c._buffers)."""
    return (address is not None and stop - start >= BOUNCE_MIN_BYTES
            and bad_offset(address + at, start))


def _read_bounced(fd: int, view: memoryview, start: int, stop: int, at: int) -> int:
    """Bytes ``[start, stop)`` of ``fd`` into ``view[at:]`` through the bounce buffer;
    returns the bytes read.  A user-space copy at such a distance is as slow as the kernel's
    (glibc's ``memcpy`` uses the same ``rep movsb``), so each part goes to half a page past
    its place in the file: both copies are then half a page from their source, which is
    fast, and two fast copies beat one slow one several times over."""
    bounce = getattr(_bounce, "view", None)
    if bounce is None or bounce.nbytes != _BOUNCE_BYTES:
        # (this thread's, page-aligned: its own, since the caller's buffer may be scratch)
        bounce = _bounce.view = empty_aligned(_BOUNCE_BYTES, always=True).data
    got = 0
    while start < stop:
        skew = (start + PAGE_SIZE // 2) % PAGE_SIZE
        n = os.preadv(fd, [bounce[skew:skew + min(stop - start, _BOUNCE_BYTES - skew)]], start)
        if n <= 0:
            break
        view[at:at + n] = bounce[skew:skew + n]
        got += n
        start += n
        at += n
    return got
