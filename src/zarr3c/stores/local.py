"""LocalStore: a store over a directory of the local file system (seed 003, "Store
implementations": keys are paths below a root directory, values are file contents).

The key ``"temp/c/0/1"`` is the file ``<root>/temp/c/0/1``; every parent directory is created on
demand::

    >>> store = LocalStore("/data/example.zarr")
    >>> store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    >>> store.list_dir("")
    (['zarr.json'], [])

Guarantees:

- No key reaches outside the root: keys are validated (no ``..``, ``.``, empty segments,
  leading ``/`` or backslash) and the joined path is checked to lie below the root.  Symbolic
  links *inside* the root, which only the user can create, are followed on reads and writes
  (data directories spread over disks by symlinks keep working); ``erase_prefix`` removes such
  links without deleting what they point to, and listings never loop through them.
- ``set`` is atomic: the value is written to a temporary file in the key's directory
  (``.<name>.zarr3c-tmp-<16 hex digits>``) and renamed over the key with ``os.replace``, so a
  reader or a crash sees the old value or the new one, never a torn file.  Temporary names are
  reserved: they are never listed nor readable as keys.  ``fsync=True`` also flushes the file
  and its directory to disk before returning.
- Temporary files left by a killed writer are never listed nor read; a writer holds an
  ``flock`` on its temporary file until it is renamed, so stale ones can be told from live
  ones: listings of a writable store remove those older than an hour that no writer holds,
  ``erase_prefix`` removes every unheld one, and :meth:`LocalStore.cleanup_temporary_files`
  does it on demand with any age limit.
- ``process_locks=True`` (POSIX only) makes :meth:`LocalStore.key_lock` a cross-process
  lock: ``flock`` on a lock file ``.<name>.zarr3c-lock`` next to the key, which exists only
  while held (its holder removes it before unlocking), so writers in several processes that
  share a chunk or shard lose nothing.  Lock file names are reserved like temporary names.
- Reads open the file once: ``get`` reads the whole file in one ``pread`` into a bytes
  object of the ``fstat`` size (one copy), ``get_partial_values`` reads each range with its
  own ``pread``, never the whole file, and ``get_many`` spreads many keys over a small thread
  pool (file reads release the GIL).
- A key that is a directory, a special file or missing reads as None.  ``erase`` and
  ``erase_prefix`` remove directories that become empty (up to, not including, the root), so
  ``list_dir`` reports exactly the prefixes that hold keys.

``set_partial_values`` is the base class's read-modify-write followed by an atomic ``set``
(``supports_partial_writes`` is False): patching a file in place could tear it.
"""

from __future__ import annotations

import builtins
import errno
import os
import pathlib
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

import numpy as np

from zarr3c._buffers import PAGE_SIZE, address_of, bad_offset, empty_aligned, thread_scratch
from zarr3c.errors import InvalidKeyError, StoreError, UnsupportedFeatureError
from zarr3c.stores.base import (
    ByteRange,
    BytesLike,
    Store,
    _group_byte_ranges,
    _scatter_byte_ranges,
    _view_for,
    as_byte_view,
    normalize_byte_range,
    resolve_byte_range,
    validate_key,
    validate_prefix,
)

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LocalStore"]

_T = TypeVar("_T")
_R = TypeVar("_R")

#: The marker in temporary file names, ``.<name>.zarr3c-tmp-<16 hex>``.
_TMP_MARK = ".zarr3c-tmp-"
_TMP_NAME = re.compile(r"\..*\.zarr3c-tmp-[0-9a-f]{16}\Z", re.DOTALL)
#: The suffix of lock file names, ``.<name>.zarr3c-lock``.
_LOCK_SUFFIX = ".zarr3c-lock"
_LOCK_NAME = re.compile(r"\..+\.zarr3c-lock\Z", re.DOTALL)
#: Listings remove temporary files older than this (seconds) that no writer holds.
STALE_TEMPORARY_AGE = 3600.0

# O_NONBLOCK: opening a FIFO planted at a key's path must not block (it then reads as None).
_O_READ = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_O_WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_O_LOCK = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
_HAVE_PREAD = hasattr(os, "pread")
_HAVE_PREADV = hasattr(os, "preadv")
#: Ranges at least this long are read through a bounce buffer when their destination lies
#: at a slow distance from the source (zarr3c._buffers); shorter ones cost too little to care.
_BOUNCE_MIN_BYTES = 1 << 14
_BOUNCE_BYTES = 1 << 18
_bounce = threading.local()
_WINDOWS = os.name == "nt"

_fileio: Any
try:  # (POSIX builds only)
    from zarr3c._kernels import fileio as _fileio
except ImportError:  # pragma: no cover - Windows
    _fileio = None
#: What the one-call read (``_fileio``) reports for a file that is not there: None, as
#: ``_open_for_read`` says.
_NO_FILE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EISDIR})
#: ``_read_file_in_one_call``'s answer when it leaves the read to the ``os`` path
_RETRY = object()

#: The largest file offset (``off_t``)
_INT64_MAX = 2**63 - 1
#: LocalStore keeps the files of this many keys (see LocalStore._path)
_PATHS_KEPT = 1 << 14


def _iov_max() -> int:
    try:
        n = os.sysconf("SC_IOV_MAX")
    except (AttributeError, ValueError, OSError):
        return 16
    return min(n, 1024) if n > 0 else 16


#: Writes of several buffers (a shard's parts) go through writev, at most this many a call
#: (POSIX guarantees 16; Linux and macOS take 1024).
_IOV_MAX = _iov_max()

#: get_many / get_partial_values use the thread pool from this many distinct keys on.
_PARALLEL_MIN_KEYS = 16
#: Keys per pool task: batching keeps the per-task overhead small for small files.
_KEYS_PER_TASK = 8


def _is_temp_name(name: str) -> bool:
    return _TMP_MARK in name and _TMP_NAME.match(name) is not None


def _is_lock_name(name: str) -> bool:
    return name.endswith(_LOCK_SUFFIX) and _LOCK_NAME.match(name) is not None


def _is_reserved_name(name: str) -> bool:
    """A temporary or lock file name: never a key."""
    return name[:1] == "." and (_is_temp_name(name) or _is_lock_name(name))


def _lock_path(path: str) -> str:
    """The lock file of the key file ``path`` (names longer than 200 characters share a lock
    file with others of the same first 200: coarser, still correct)."""
    dirname, basename = os.path.split(path)
    return os.path.join(dirname, f".{basename[:200]}{_LOCK_SUFFIX}")


def _same_file(fd: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)


def _remove_if_stale(entry: os.DirEntry[str], now: float, max_age: float) -> bool:
    """Remove the temporary or lock file ``entry`` if it is stale; True if removed.

    A temporary file is stale when it is at least ``max_age`` seconds old at time ``now`` and
    no writer holds it; a lock file when no process holds it, whatever its age.
    """
    try:
        if _is_temp_name(entry.name) and now - entry.stat().st_mtime < max_age:
            return False
    except OSError:
        return False  # vanished: its writer renamed or removed it
    return _remove_if_unheld(entry.path)


def _remove_if_unheld(path: str) -> bool:
    """Remove a temporary or lock file unless a live writer holds its ``flock``; True if
    removed.  (Without flock, on Windows, the file is removed.)"""
    if fcntl is None:
        try:
            os.unlink(path)
        except OSError:
            return False
        return True
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # held: a live writer's (or the lock is unsupported here)
        # Unlink only what we hold: the path may have been renamed or replaced meanwhile.
        if not _same_file(fd, path):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# -- a small per-process thread pool for batched reads -----------------------------------------

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_POOL_WORKERS = min(16, (os.cpu_count() or 1) + 4)


def _reset_pool_after_fork() -> None:
    # A forked child inherits the executor object but not its threads: start afresh.
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pool_after_fork)


def _executor() -> ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(
                    max_workers=_POOL_WORKERS, thread_name_prefix="zarr3c-localstore"
                )
            pool = _pool
    return pool


def _map_batched(fn: Callable[[_T], _R], items: builtins.list[_T]) -> builtins.list[_R]:
    """``[fn(x) for x in items]``, spread over the pool in batches when there are many."""
    return _map_batched_parts(lambda part: [fn(x) for x in part], items)


def _map_batched_parts(fn: Callable[[builtins.list[_T]], builtins.list[_R]],
                       items: builtins.list[_T]) -> builtins.list[_R]:
    """``fn(items)``, or when there are many items ``fn`` of each of a few consecutive
    parts of them on the pool (each returning a result per item), concatenated."""
    n = len(items)
    if n < _PARALLEL_MIN_KEYS:
        return fn(items)
    n_tasks = min(_POOL_WORKERS + 1, -(-n // _KEYS_PER_TASK))
    bounds = [n * i // n_tasks for i in range(n_tasks + 1)]

    def run(lo: int, hi: int) -> builtins.list[_R]:
        return fn(items[lo:hi])

    pool = _executor()
    futures: builtins.list[Future[builtins.list[_R]]] = [
        pool.submit(run, bounds[i], bounds[i + 1]) for i in range(1, n_tasks)
    ]
    try:
        out = run(bounds[0], bounds[1])  # the calling thread takes the first batch
        for fut in futures:
            out.extend(fut.result())
    finally:
        for fut in futures:
            fut.cancel()
    return out


# -- file primitives ---------------------------------------------------------------------------


def _read_at(fd: int, offset: int, n: int) -> bytes:
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


def _open_for_read(key: str, path: str) -> tuple[int, int] | None:
    """``(fd, size)`` of the regular file at ``path``, or None when there is no such file."""
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


def _read_file(key: str, path: str) -> bytes | None:
    opened = _open_for_read(key, path)
    if opened is None:
        return None
    fd, size = opened
    try:
        return _read_at(fd, 0, size)
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)


def _read_ranges(
    key: str, path: str, ranges: builtins.list[tuple[int, int | None]]
) -> builtins.list[bytes | None]:
    opened = _open_for_read(key, path)
    if opened is None:
        return [None] * len(ranges)
    fd, size = opened
    try:
        out: builtins.list[bytes | None] = []
        for start, length in ranges:
            lo, hi = resolve_byte_range(start, length, size)
            out.append(_read_at(fd, lo, hi - lo))
        return out
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)


def _write_all(fd: int, views: builtins.list[memoryview]) -> None:
    """Write ``views`` one after another, however short each write comes back: several
    with ``os.writev`` (at most :data:`_IOV_MAX` buffers a call) where there is one."""
    pending = [v for v in views if v.nbytes]
    writev = getattr(os, "writev", None) if len(pending) > 1 else None
    i = 0
    while i < len(pending):
        if writev is None:
            written = os.write(fd, pending[i])
        else:
            written = writev(fd, pending[i:i + _IOV_MAX])
        if written <= 0:  # never for a regular file (errors raise): do not spin
            raise OSError(errno.EIO, "a write made no progress")
        while i < len(pending) and written >= pending[i].nbytes:
            written -= pending[i].nbytes
            i += 1
        if written:  # a short write stopped inside this buffer
            pending[i] = pending[i][written:]


def _claim_temp_file(fd: int, tmp: str) -> bool:
    """Lock a new temporary file for its writer's lifetime (marking it live for cleanups);
    False if a cleanup removed it first.  Where flock is missing or refused, age alone tells
    stale files apart."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return _same_file(fd, tmp)
    except OSError:
        return True


def _fsync_dir(path: str) -> None:
    if _WINDOWS:  # directories cannot be opened for fsync there
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the store ---------------------------------------------------------------------------------


def _list_dir_entries(dirpath: str, failure: str) -> builtins.list[os.DirEntry[str]]:
    """The entries of a directory; none if it is missing (or a file); StoreError, starting
    with ``failure``, if it cannot be listed."""
    try:
        with os.scandir(dirpath) as it:
            return builtins.list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StoreError(f"{failure}: cannot list directory {dirpath!r}: {exc}") from exc


class LocalStore(Store):
    """A store over the files below a local directory.

    Parameters
    ----------
    root
        The directory holding the hierarchy.  It need not exist: it is created by the first
        write (a read-only store over a missing root reads as empty).
    read_only
        Refuse every write.
    fsync
        Flush each written file and its directory to disk before ``set`` returns (durable
        across power loss, slower).
    process_locks
        Make :meth:`key_lock` a cross-process lock (``flock`` on a lock file next to the key),
        so that writers in several processes sharing a chunk or a shard lose nothing.  Costs
        a lock file creation and removal per chunk written; POSIX only.

    Raises
    ------
    StoreError
        If ``root`` exists and is not a directory.
    UnsupportedFeatureError
        ``process_locks=True`` where ``fcntl.flock`` does not exist (Windows).

    Notes
    -----
    Two LocalStores are equal when they have the same (absolute) root and flags; a
    LocalStore pickles as its root and flags.
    """

    supports_writes = True
    supports_partial_writes = False
    supports_listing = True
    _reads_into_memory = _HAVE_PREADV  # (see read_value_into)
    _reads_elements = _fileio is not None  # (see read_elements_into)

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        read_only: bool = False,
        fsync: bool = False,
        process_locks: bool = False,
    ):
        super().__init__(read_only=read_only)
        root_str = os.path.abspath(os.fsdecode(os.fspath(root)))
        if os.path.exists(root_str) and not os.path.isdir(root_str):
            raise StoreError(f"LocalStore root {root_str!r} exists and is not a directory")
        if process_locks and fcntl is None:
            raise UnsupportedFeatureError(
                f"LocalStore({root_str!r}, process_locks=True): cross-process locks need "
                "fcntl.flock, which this platform (Windows) does not have"
            )
        self._root = root_str
        self._root_prefix = root_str if root_str.endswith(os.sep) else root_str + os.sep
        self._fsync = bool(fsync)
        self._process_locks = bool(process_locks)
        self._paths: dict[str, tuple[str, bytes | None]] = {}  # (see _path)

    def __getstate__(self) -> dict[str, Any]:
        # (the kept files of keys are a cache: a pickled array stays small)
        return {k: v for k, v in self.__dict__.items() if k != "_paths"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._paths = {}

    # -- identity -------------------------------------------------------------------------------

    @property
    def root(self) -> pathlib.Path:
        """The root directory (absolute)."""
        return pathlib.Path(self._root)

    @property
    def fsync(self) -> bool:
        """Whether writes are flushed to disk before ``set`` returns."""
        return self._fsync

    @property
    def process_locks(self) -> bool:
        """Whether :meth:`key_lock` is a cross-process lock."""
        return self._process_locks

    @property
    def lock_id(self) -> tuple[str, str]:
        return ("local", self._root)

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """With ``process_locks=True``, an exclusive ``flock`` on ``key``'s lock file
        ``.<name>.zarr3c-lock`` (in the key's directory), shared with every process and
        thread; otherwise a no-op.  Array writes hold it (inside the in-process lock) across
        each read-modify-write of a chunk or shard.

        Raises
        ------
        StoreError
            The lock file cannot be created or locked (naming the key and the file).
        ReadOnlyError
            The store is read-only.
        """
        if not self._process_locks:
            return nullcontext()
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        return self._hold_lock_file(key, _lock_path(path))

    @contextmanager
    def _hold_lock_file(self, key: str, lock_path: str) -> Iterator[None]:
        assert fcntl is not None
        dirname = os.path.dirname(lock_path)
        while True:
            try:
                fd = os.open(lock_path, _O_LOCK, 0o666)
            except FileNotFoundError:
                self._makedirs(key, dirname)
                continue
            except OSError as exc:
                raise StoreError(
                    f"cannot lock store key {key!r} (lock file {lock_path!r}): {exc}"
                ) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # Its previous holder may have removed the file before unlocking: then lock
                # the file now at that path instead.
                if _same_file(fd, lock_path):
                    break
            except OSError as exc:
                os.close(fd)
                raise StoreError(
                    f"cannot lock store key {key!r} (lock file {lock_path!r}): {exc}"
                ) from exc
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        try:
            yield
        finally:
            # Remove the file while holding it, so no lock file outlives its holder.
            try:
                os.unlink(lock_path)
            except OSError:
                pass
            os.close(fd)
            self._prune_empty_dirs(dirname)

    def __repr__(self) -> str:
        extra = ", fsync=True" if self._fsync else ""
        if self._process_locks:
            extra += ", process_locks=True"
        return f"LocalStore({self._root!r}, read_only={self._read_only}{extra})"

    def _flags(self) -> tuple[str, bool, bool, bool]:
        return (self._root, self._read_only, self._fsync, self._process_locks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalStore):
            return NotImplemented
        return self._flags() == other._flags()

    def __hash__(self) -> int:
        return hash((LocalStore, *self._flags()))

    # -- keys to paths --------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        """The file of a key (validated, reserved names refused, checked to be below root).

        Kept for the last :data:`_PATHS_KEPT` keys: the checks cost ~2 us, as much as
        reading a 4 KiB chunk from the page cache, and chunk by chunk reads ask again and
        again (the answer depends on the key and the root only)."""
        return self._kept_file(key)[0]

    def _kernel_file(self, key: str) -> bytes | None:
        """:meth:`_path` as the ``fileio`` kernels take it (None if it holds a NUL), kept
        with it."""
        return self._kept_file(key)[1]

    def _one_call_file(self, key: str) -> bytes | None:
        """:meth:`_kernel_file`, or None where there are no ``fileio`` kernels."""
        return None if _fileio is None else self._kernel_file(key)

    def _kept_file(self, key: str) -> tuple[str, bytes | None]:
        kept = self._paths.get(key)
        if kept is None:
            path = self._checked_path(key)
            kept = (path, _kernel_path(path))
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            self._paths[key] = kept
        return kept

    def _checked_path(self, key: str) -> str:
        validate_key(key)
        if (_TMP_MARK in key or _LOCK_SUFFIX in key) and any(
            _is_reserved_name(s) for s in key.split("/")
        ):
            raise InvalidKeyError(
                f"invalid store key {key!r}: names like '.<name>{_TMP_MARK}<16 hex>' and "
                f"'.<name>{_LOCK_SUFFIX}' are reserved for LocalStore's temporary and lock files"
            )
        if _WINDOWS and ":" in key:
            raise InvalidKeyError(
                f"invalid store key {key!r}: ':' is not allowed in file names on Windows"
            )
        path = self._root_prefix + (key if os.sep == "/" else key.replace("/", os.sep))
        # Defence in depth: validated keys cannot escape, and this proves it for the result.
        if not os.path.normpath(path).startswith(self._root_prefix):
            raise InvalidKeyError(
                f"invalid store key {key!r}: file {path!r} is outside the root {self._root!r}"
            )
        return path

    def _prefix_dir(self, prefix: str) -> str:
        """The directory of a validated prefix (the root for ``""``)."""
        return self._root if prefix == "" else self._path(prefix[:-1])

    # -- reads ----------------------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        return _read_file(key, self._path(key))

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        items = [(key, self._path(key)) for key in keys]
        return _map_batched(_read_file_item, items)

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        if type(key_ranges) is not builtins.list:
            key_ranges = builtins.list(key_ranges)
        if key_ranges:
            # Ranges of one key (a small read's range and size probe, a shard's index or
            # inner chunks): one file, read in this thread, without grouping and scattering.
            key = key_ranges[0][0]
            if type(key) is str and all(k == key for k, _ in key_ranges):
                values: builtins.list[BytesLike | None] = []
                values += _read_ranges(key, self._path(key),
                                       [normalize_byte_range(key, r) for _, r in key_ranges])
                return values
        # Group the ranges by key, so each file is opened once whatever the request order.
        groups, n = _group_byte_ranges(key_ranges, self._path)
        work = [(key, path, ranges) for key, (path, _, ranges) in groups.items()]
        return _scatter_byte_ranges(groups, _map_batched(_read_ranges_item, work), n)

    def read_ranges_into(
        self, requests: Sequence[tuple[str, Sequence[tuple[int, int, int]]]], out: Any
    ) -> builtins.list[int | None]:
        # Each file opened once, its ranges read straight into ``out`` (no bytes objects);
        # files spread over the pool when there are many.
        if not _HAVE_PREADV:
            return super().read_ranges_into(requests, out)
        view = _view_for(requests, out)
        # Where ``out`` lies, when some range is long enough for the slow kernel copy to
        # matter (see zarr3c._buffers).
        address = None
        if not view.readonly and any(stop - start >= _BOUNCE_MIN_BYTES
                                     for _, ranges in requests for start, stop, _ in ranges):
            address = address_of(view)
        items = [(key, self._path(key), ranges, view, address) for key, ranges in requests]
        if _fileio is not None and len(items) > 1:  # (one file: no batch to build)
            return _map_batched_parts(_read_into_items, items)
        return _map_batched(_read_into_item, items)

    def read_tail_into(self, key: str, out: Any) -> int | None:
        # One call without the GIL (open, fstat, pread, close), where it can: through ``os``
        # each of the four gives it up and takes it back.
        view = memoryview(out).cast("B")
        # (no bounce: an index is small, and where the tail starts is not known before)
        encoded = None if view.readonly else self._one_call_file(key)
        if encoded is not None:
            try:
                done = _one_call_outcome(*_fileio.read_tail_into(encoded, view))
            except (ValueError, TypeError, BufferError):  # not a byte buffer
                done = _RETRY
            if done is not _RETRY:
                return None if done is None else done[0]
        return super().read_tail_into(key, out)

    def read_shard_parts(self, key: str, index: Any, at_end: bool, slots: Any, los: Any,
                          his: Any, expect: int, staging: Any, ats: Any, lens: Any
                          ) -> int | None:
        # The file opened once for the index and the parts: two reads through the store
        # open it twice, and give the GIL up and take it back twice more.
        encoded = self._one_call_file(key)
        if encoded is None:
            return None
        err, size, status = _fileio.read_shard_parts(encoded, index, at_end, slots, los, his,
                                                     expect, staging, ats, lens)
        done = _one_call_outcome(err, 0, size)
        if done is None:
            return -1
        return None if done is _RETRY or status else size

    def read_box_into(self, key: str, nbytes: int, strides: Any, first: Sequence[int],
                       counts: Sequence[int], itemsize: int, span: int, dst: Any,
                       dst_offset: int = 0, dst_strides: Sequence[int] | None = None
                       ) -> int | None:
        # Open, read, close and copy without the GIL in between: a small read of an
        # uncompressed chunk spent 42 of its 60 us in the Python and hand-offs around them.
        encoded = self._one_call_file(key)
        if encoded is None:
            return None
        try:
            err, size, copied = _fileio.read_box_into(
                encoded, nbytes, strides, first, counts, itemsize,
                thread_scratch(span + PAGE_SIZE, "stored"), dst, dst_offset, dst_strides)
        except (ValueError, TypeError, BufferError):  # (left to the ordinary read)
            return None
        done = _one_call_outcome(err, 0, size)
        if done is None:
            return -1
        return nbytes if copied and done is not _RETRY else None

    def read_value_into(self, key: str, out: Any) -> int | None:
        # One open and one read (two would be the range and a size probe).
        if not _HAVE_PREADV:
            return super().read_value_into(key, out)
        view = memoryview(out).cast("B")
        address = address_of(view) if view.nbytes >= _BOUNCE_MIN_BYTES else None
        read = _read_file_into(key, self._path(key), [(0, view.nbytes, 0)], view, address)
        if read is None:
            return None
        got, size = read
        return size if got == min(size, view.nbytes) else got

    def read_elements_into(
        self, keys: Sequence[str], sizes: Any, scratch: Any, run_starts: Any, run_stops: Any,
        src_offsets: Any, dst: Any, dst_offsets: Any, itemsize: int,
    ) -> builtins.list[int] | None:
        # The whole batch in one call without the GIL (zarr3c._kernels.fileio): through
        # ``os`` every file gives the GIL up and takes it back, and a copy call after each
        # read once more.
        if _fileio is None or not keys:
            return None
        view = memoryview(scratch).cast("B")
        address = address_of(view) if view.nbytes >= _BOUNCE_MIN_BYTES else None
        if not _kernel_ranges([(0, int(max(sizes)), 0)], address):
            return None
        paths = [self._kernel_file(key) for key in keys]
        if None in paths:  # (left to the ordinary reads)
            return None
        return _fileio.read_files_elements(paths, scratch, sizes, run_starts, run_stops,
                                           src_offsets, dst, dst_offsets, itemsize)

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def getsize(self, key: str) -> int | None:
        path = self._path(key)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"cannot stat store key {key!r} (file {path!r}): {exc}") from exc
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    # -- writes ---------------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        self.set_parts(key, (value,))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        # The parts go into the temporary file one after another: never joined in memory.
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        self._write_atomic(key, path, [as_byte_view(part, key) for part in parts])

    def _makedirs(self, key: str, dirname: str) -> None:
        try:
            os.makedirs(dirname, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot write store key {key!r}: cannot create directory {dirname!r}: {exc}"
            ) from exc

    def _write_atomic(self, key: str, path: str, views: builtins.list[memoryview]) -> None:
        dirname, basename = os.path.split(path)
        created_dirs = False
        fd = -1
        tmp = ""
        for _attempt in range(16):
            tmp = os.path.join(dirname, f".{basename[:64]}{_TMP_MARK}{os.urandom(8).hex()}")
            try:
                fd = os.open(tmp, _O_WRITE_NEW, 0o666)
            except FileNotFoundError:
                # The directory is missing (or was just pruned by a concurrent erase): create
                # it and try again.
                self._makedirs(key, dirname)
                created_dirs = True
                continue
            except FileExistsError:
                continue  # a temporary name collision, however unlikely
            except OSError as exc:
                raise StoreError(f"cannot write store key {key!r} (file {path!r}): {exc}") from exc
            if _claim_temp_file(fd, tmp):
                break
            os.close(fd)  # removed by a cleanup in the instant before we locked it
            fd = -1
        if fd < 0:
            raise StoreError(
                f"cannot write store key {key!r}: cannot create a temporary file in {dirname!r}"
            )
        try:
            try:
                _write_all(fd, views)
                if self._fsync:
                    os.fsync(fd)
                if _WINDOWS:  # an open file cannot be renamed there
                    os.close(fd)
                    fd = -1
                # Renamed while still open (and flock-ed): a cleanup never takes it for stale.
                os.replace(tmp, path)
            finally:
                if fd >= 0:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, Exception):
                raise StoreError(
                    f"cannot write store key {key!r} (file {path!r}, via temporary file "
                    f"{tmp!r}): {exc}"
                ) from exc
            raise
        if self._fsync:
            try:
                _fsync_dir(dirname)
                if created_dirs:
                    parent = dirname
                    while parent.startswith(self._root_prefix):
                        parent = os.path.dirname(parent)
                        _fsync_dir(parent)
            except OSError as exc:
                raise StoreError(
                    f"store key {key!r} (file {path!r}) was written but its directory could "
                    f"not be flushed to disk: {exc}"
                ) from exc

    def erase(self, key: str) -> None:
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        self._erase_path(key, path)

    def _erase_path(self, key: str, path: str) -> None:
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        except OSError as exc:
            if os.path.isdir(path):  # macOS and Windows refuse unlink() on directories
                return
            raise StoreError(f"cannot erase store key {key!r} (file {path!r}): {exc}") from exc
        self._prune_empty_dirs(os.path.dirname(path))

    def erase_values(self, keys: Iterable[str]) -> None:
        items = [(key, self._path(key)) for key in keys]
        if not items:
            return
        self._check_writable(f"store key {items[0][0]!r}")
        for key, path in items:
            self._erase_path(key, path)

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        dirpath = self._prefix_dir(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        try:
            st = os.lstat(dirpath)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(
                f"cannot erase store prefix {prefix!r} (directory {dirpath!r}): {exc}"
            ) from exc
        if prefix and stat.S_ISLNK(st.st_mode):
            # Remove the link, never what it points to (which may be outside the root).
            if os.path.isdir(dirpath):
                self._remove(prefix, dirpath, os.unlink)
                self._prune_empty_dirs(os.path.dirname(dirpath))
            return
        if not os.path.isdir(dirpath):
            return
        self._clear_dir(prefix, dirpath)
        if prefix:
            self._prune_empty_dirs(dirpath)

    def _remove(self, prefix: str, path: str, remove: Callable[[str], None]) -> None:
        try:
            remove(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if remove is os.rmdir and exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return  # a concurrent write landed in it: that key now exists
            raise StoreError(
                f"cannot erase store prefix {prefix!r}: cannot remove {path!r}: {exc}"
            ) from exc

    def _clear_dir(self, prefix: str, dirpath: str) -> None:
        """Remove everything below ``dirpath`` (temporary files too); keep ``dirpath``."""
        for entry in _list_dir_entries(dirpath, f"cannot erase store prefix {prefix!r}"):
            try:
                is_real_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_real_dir = False
            if is_real_dir:
                self._clear_dir(prefix, entry.path)
                self._remove(prefix, entry.path, os.rmdir)
            elif _is_reserved_name(entry.name):
                # A live writer's temporary file or a held lock stays (its owner removes or
                # renames it); a stale one goes.
                _remove_if_unheld(entry.path)
            else:
                self._remove(prefix, entry.path, os.unlink)

    def cleanup_temporary_files(
        self, prefix: str = "", *, max_age: float = STALE_TEMPORARY_AGE
    ) -> int:
        """Remove the temporary and lock files left below ``prefix`` by killed writers.

        A temporary file is removed when it is older than ``max_age`` seconds (by its
        modification time) and no live writer holds it (writers hold an ``flock`` on their
        temporary file until they rename it; on Windows, age alone decides).  A lock file is
        removed when no process holds it, whatever its age.

        Parameters
        ----------
        prefix
            Where to look (``""``: the whole store).
        max_age
            Minimum age in seconds of a temporary file to remove; 0 removes every unheld one.

        Returns
        -------
        int
            How many files were removed.

        Raises
        ------
        ReadOnlyError
            The store is read-only.
        StoreError
            A directory cannot be listed.
        """
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        removed = 0
        now = time.time()
        pending = [self._prefix_dir(prefix)]
        while pending:
            dirpath = pending.pop()
            removed_here = 0
            for entry in _list_dir_entries(dirpath, f"cannot clean store prefix {prefix!r}"):
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                        continue
                except OSError:
                    continue
                if _is_reserved_name(entry.name) and _remove_if_stale(entry, now, max_age):
                    removed_here += 1
            # Only a directory this cleanup emptied goes: other empty directories (an empty
            # group's, one a writer just made) are not ours to remove.
            if removed_here:
                removed += removed_here
                self._prune_empty_dirs(dirpath)
        return removed

    def _prune_empty_dirs(self, dirpath: str) -> None:
        """Remove ``dirpath`` and its parents while they are empty, stopping at the root."""
        while dirpath.startswith(self._root_prefix) and len(dirpath) > len(self._root_prefix):
            try:
                os.rmdir(dirpath)
            except OSError:
                return
            dirpath = os.path.dirname(dirpath)

    # -- listings -------------------------------------------------------------------------------

    def _scan(self, dirpath: str, prefix: str) -> builtins.list[tuple[str, str, bool]]:
        """``(name, path, is_dir)`` of the keys and subdirectories directly in ``dirpath``,
        sorted by name; temporary files and names that are not valid key segments omitted.
        Stale temporary files seen on the way are removed (not by a read-only store)."""
        out = []
        now: float | None = None
        for entry in _list_dir_entries(dirpath, f"cannot list store prefix {prefix!r}"):
            name = entry.name
            if "\\" in name:
                continue
            if _is_reserved_name(name):
                if not self._read_only and _is_temp_name(name):
                    if now is None:
                        now = time.time()
                    _remove_if_stale(entry, now, STALE_TEMPORARY_AGE)
                continue
            try:
                if entry.is_file():
                    out.append((name, entry.path, False))
                elif entry.is_dir():
                    out.append((name, entry.path, True))
            except OSError:
                continue  # vanished or unreadable while listing: not a key
        out.sort()
        return out

    def _walk(self, dirpath: str, prefix: str) -> Iterator[str]:
        """Every key below ``dirpath`` (whose keys start with ``prefix``), depth first."""
        try:
            st = os.stat(dirpath)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(
                f"cannot list store prefix {prefix!r} (directory {dirpath!r}): {exc}"
            ) from exc
        if not stat.S_ISDIR(st.st_mode):
            return
        yield from self._walk_dir(dirpath, prefix, frozenset({(st.st_dev, st.st_ino)}))

    def _walk_dir(
        self, dirpath: str, prefix: str, ancestors: frozenset[tuple[int, int]]
    ) -> Iterator[str]:
        for name, path, is_dir in self._scan(dirpath, prefix):
            if not is_dir:
                yield prefix + name
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue
            ident = (st.st_dev, st.st_ino)
            if ident in ancestors:  # a symlink loop
                continue
            yield from self._walk_dir(path, prefix + name + "/", ancestors | {ident})

    def list(self) -> Iterator[str]:
        return self._walk(self._root, "")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return self._walk(self._prefix_dir(prefix), prefix)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        keys: builtins.list[str] = []
        prefixes: builtins.list[str] = []
        for name, path, is_dir in self._scan(self._prefix_dir(prefix), prefix):
            if not is_dir:
                keys.append(prefix + name)
            elif next(self._walk(path, prefix + name + "/"), None) is not None:
                # Only directories that hold a key are prefixes, as in any other store.
                prefixes.append(prefix + name + "/")
        return keys, prefixes


def _read_file_item(item: tuple[str, str]) -> bytes | None:
    return _read_file(item[0], item[1])


def _read_ranges_item(
    item: tuple[str, str, builtins.list[tuple[int, int | None]]],
) -> builtins.list[bytes | None]:
    return _read_ranges(item[0], item[1], item[2])


#: ``(key, path, (start, stop, at) ranges, destination, its address when it matters)``
_ReadInto = tuple[str, str, Sequence[tuple[int, int, int]], memoryview, int | None]


def _read_into_item(item: _ReadInto) -> int | None:
    read = _read_file_into(*item)
    return None if read is None else read[0]


def _read_into_items(items: builtins.list[_ReadInto]) -> builtins.list[int | None]:
    """:func:`_read_into_item` of each item, all those that can in one
    ``zarr3c._kernels.fileio`` call (the GIL given up and taken back once, not once per
    file: with other threads running Python each retake waits its turn)."""
    out: builtins.list[int | None] = [None] * len(items)
    todo: builtins.list[int] = []
    paths: builtins.list[bytes] = []
    ranges: builtins.list[tuple[int, int, int]] = []
    bounds = [0]
    for i, (_, path, item_ranges, _, address) in enumerate(items):
        encoded = _one_call_path(path, item_ranges, address)
        if encoded is None:
            out[i] = _read_into_item(items[i])
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
        done = _fileio.read_files_ranges_into(paths, items[todo[0]][3], runs[:-1], runs[1:],
                                              *cols)
    except (ValueError, TypeError, BufferError):  # not a writable byte buffer, or too short
        for i in todo:
            out[i] = _read_into_item(items[i])
        return out
    for i, answer in zip(todo, done, strict=True):
        outcome = _one_call_outcome(*answer)
        if outcome is _RETRY:
            out[i] = _read_into_item(items[i])  # the os path reads it again and reports why
        else:
            out[i] = None if outcome is None else outcome[0]
    return out


def _read_file_into(key: str, path: str, ranges: Sequence[tuple[int, int, int]],
                    view: memoryview, address: int | None) -> tuple[int, int] | None:
    """Each ``(start, stop, at)`` range of the file into ``view[at:]`` (see
    :func:`_pread_into`): ``(bytes read, file size)``, or None when there is no file.

    In one call that holds the GIL once where it can (:func:`_read_file_in_one_call`),
    else (or to report an error) through ``os``."""
    if _fileio is not None:
        done = _read_file_in_one_call(path, ranges, view, address)
        if done is not _RETRY:
            return done  # type: ignore[return-value]
    opened = _open_for_read(key, path)
    if opened is None:
        return None
    fd, size = opened
    got = 0
    try:
        for start, stop, at in ranges:
            # (no read past the end: it would only return nothing)
            got += _pread_into(fd, view, start, min(stop, size), at, address)
    except OSError as exc:
        raise StoreError(f"cannot read store key {key!r} (file {path!r}): {exc}") from exc
    finally:
        os.close(fd)
    return got, size


def _read_file_in_one_call(path: str, ranges: Sequence[tuple[int, int, int]],
                           view: memoryview, address: int | None) -> Any:
    """:func:`_read_file_into` through ``zarr3c._kernels.fileio``: open, fstat, the reads
    and close without the GIL in between (through ``os`` each call gives it up and waits
    to take it back, which other threads running Python make slow).  :data:`_RETRY` where
    a range needs the bounce buffer, or on any error: the ``os`` path reads it again, and
    reports what is wrong."""
    assert _fileio is not None
    encoded = _one_call_path(path, ranges, address)
    if encoded is None:
        return _RETRY
    try:
        if len(ranges) == 1:
            ((start, stop, at),) = ranges
            return _one_call_outcome(*_fileio.read_range_into(encoded, view, start, stop, at))
        starts, stops, ats = np.array(ranges, dtype=np.int64).reshape(-1, 3).T.copy()
        return _one_call_outcome(*_fileio.read_ranges_into(encoded, view, starts, stops, ats))
    except (ValueError, TypeError, BufferError):  # not a writable byte buffer, or too short
        return _RETRY


def _one_call_path(path: str, ranges: Iterable[tuple[int, int, int]],
                   address: int | None) -> bytes | None:
    """``path`` as the ``fileio`` kernel takes it, or None where the ``os`` path must read
    it: a range needs the bounce buffer, or reaches past what ``int64`` holds (a damaged
    shard index's; no file is that long, and the ``os`` path reads nothing of it), or the
    path holds a NUL (C would stop at it; ``os`` refuses such a path and reports it)."""
    return _kernel_path(path) if _kernel_ranges(ranges, address) else None


def _kernel_ranges(ranges: Iterable[tuple[int, int, int]], address: int | None) -> bool:
    """Whether the ``fileio`` kernel can read these ranges (see :func:`_one_call_path`)."""
    return not any(stop > _INT64_MAX or _needs_bounce(address, start, stop, at)
                   for start, stop, at in ranges)


def _kernel_path(path: str) -> bytes | None:
    """``path`` as the ``fileio`` kernel takes it; None if it holds a NUL."""
    encoded = os.fsencode(path)
    return None if b"\0" in encoded else encoded


def _one_call_outcome(err: int, got: int, size: int) -> Any:
    """A ``fileio`` read's ``(errno, bytes read, size)`` as :func:`_read_file_into` answers:
    ``(bytes read, size)``, None for no file (or not a regular one), :data:`_RETRY` for any
    other error (the ``os`` path reads it again and reports it)."""
    if err:
        return None if err in _NO_FILE_ERRNOS else _RETRY
    return None if size < 0 else (got, size)


def _pread_into(fd: int, view: memoryview, start: int, stop: int, at: int,
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
    return (address is not None and stop - start >= _BOUNCE_MIN_BYTES
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
