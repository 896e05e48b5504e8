"""LocalStore's files: atomic writes, temporary and lock files, fsync, erasing and cleanup.

Every write goes to a temporary file in the key's directory, renamed over the key with
``os.replace`` (:func:`write_atomic`): a reader or a crash sees the old value or the new one,
never a torn file.  The writer holds an ``flock`` on its temporary file until the rename
(:func:`claim_temp_file`), so a temporary file nobody holds is a killed writer's.

A key's temporary files are drawn from a fixed sequence of slots beside it,
``.<name>.zarr3c-tmp-<slot>`` (the first 64 bytes of the name; the slot number as 16 hex
digits, :func:`temp_path`), so that a write finds its key's crash leftovers without
listing the directory: it creates slot 0, 1, ... exclusively (``O_EXCL``: the file is its
own, nobody else writes into it) and takes the first that is free; a slot that exists and
that no writer holds is a killed writer's leftover, which it removes and takes instead
(:func:`remove_if_unheld`), and one a live writer holds it passes.  A writer takes slot
``i`` only while slots ``0..i-1`` are held, so (where ``flock`` works) however often writers
of a key are killed, at most as many temporary files lie beside it as it ever had
concurrent writers, and the next write of the key removes the one in the slot it takes.
A failed write removes its temporary file while still holding it: once unlocked, the slot
may be another writer's.  (The native writes,
``_kernels/fileio.pyx``'s ``_write_atomic``, follow the same protocol with the same names.)

Leftovers beside keys that are not written again, and those of writers from before slots
(16 random hex digits), go by age: :func:`remove_if_stale` removes an unheld temporary file
once it is :data:`STALE_TEMPORARY_AGE` old, in listings and cleanups.  Without ``fcntl``
(Windows) nothing tells a live writer's file from a leftover but age: writes then pass every
existing slot, and only the age-based cleanups remove leftovers.

Cross-process key locks are ``flock`` on a lock file ``.<name>.zarr3c-lock`` beside the key
(:func:`hold_lock_file`), which exists only while held.  Both kinds of name are reserved
(:func:`is_reserved_name`): never keys, never listed.

Directories are created on demand and removed when an erase or a cleanup leaves them empty
(:func:`prune_empty_dirs`, never the root), so listings report exactly the prefixes that hold
keys.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from zarr3c.errors import StoreError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCK_SUFFIX",
    "STALE_TEMPORARY_AGE",
    "TEMP_SLOTS",
    "TMP_MARK",
    "WINDOWS",
    "claim_temp_file",
    "clear_dir",
    "erase_file",
    "fsync_dir",
    "hold_lock_file",
    "is_lock_name",
    "is_reserved_name",
    "is_temp_name",
    "list_dir_entries",
    "lock_path",
    "makedirs",
    "prune_empty_dirs",
    "remove_if_stale",
    "remove_if_unheld",
    "remove_path",
    "remove_stale_below",
    "same_file",
    "temp_path",
    "write_all",
    "write_atomic",
]

#: The marker in temporary file names, ``.<name>.zarr3c-tmp-<16 hex>``.
TMP_MARK = ".zarr3c-tmp-"
#: The most temporary files one key's writers use at once (slots 0 to TEMP_SLOTS - 1): a
#: write finding them all held by live writers fails.  ``_kernels/fileio.pyx`` has the same.
TEMP_SLOTS = 1024
#: Retries of a write losing its slot to a concurrent writer or cleanup, or its directory to
#: a concurrent erase, before it gives up.
_TEMP_RETRIES = 16
_TMP_NAME = re.compile(r"\..*\.zarr3c-tmp-[0-9a-f]{16}\Z", re.DOTALL)
#: The suffix of lock file names, ``.<name>.zarr3c-lock``.
LOCK_SUFFIX = ".zarr3c-lock"
_LOCK_NAME = re.compile(r"\..+\.zarr3c-lock\Z", re.DOTALL)
#: Listings remove temporary files older than this (seconds) that no writer holds: those
#: beside keys that are not written again (a write of the key removes them at once).
STALE_TEMPORARY_AGE = 3600.0
#: Windows: directories cannot be opened (for fsync), open files cannot be renamed.
WINDOWS = os.name == "nt"

_O_WRITE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_O_LOCK = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


def _iov_max() -> int:
    try:
        n = os.sysconf("SC_IOV_MAX")
    except (AttributeError, ValueError, OSError):
        return 16
    return min(n, 1024) if n > 0 else 16


#: Writes of several buffers (a shard's parts) go through writev, at most this many a call
#: (POSIX guarantees 16; Linux and macOS take 1024).
_IOV_MAX = _iov_max()


# -- reserved names --------------------------------------------------------------------------


def is_temp_name(name: str) -> bool:
    """Whether a file name is a temporary file's, ``.<name>.zarr3c-tmp-<16 hex>``."""
    return TMP_MARK in name and _TMP_NAME.match(name) is not None


def is_lock_name(name: str) -> bool:
    """Whether a file name is a lock file's, ``.<name>.zarr3c-lock``."""
    return name.endswith(LOCK_SUFFIX) and _LOCK_NAME.match(name) is not None


def is_reserved_name(name: str) -> bool:
    """A temporary or lock file name: never a key."""
    return name[:1] == "." and (is_temp_name(name) or is_lock_name(name))


def lock_path(path: str) -> str:
    """The lock file of the key file ``path`` (names longer than 200 characters share a lock
    file with others of the same first 200: coarser, still correct)."""
    dirname, basename = os.path.split(path)
    return os.path.join(dirname, f".{basename[:200]}{LOCK_SUFFIX}")


def temp_path(path: str, slot: int) -> str:
    """The temporary file of slot ``slot`` of the key file ``path``,
    ``.<name>.zarr3c-tmp-<slot as 16 hex digits>`` beside it (the name cut to its first 64
    bytes, as the native writes cut it: keys sharing them share slots, still correct)."""
    dirname, basename = os.path.split(path)
    if basename.isascii():
        stem = basename[:64]
    else:
        raw = os.fsencode(basename)[:64]
        try:
            stem = os.fsdecode(raw)  # (POSIX: a UTF-8 sequence cut in two round-trips)
        except UnicodeDecodeError:  # Windows, which has no native writes to agree with
            stem = raw.decode("utf-8", "ignore")
    return os.path.join(dirname, f".{stem}{TMP_MARK}{slot:016x}")


def same_file(fd: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (mine.st_ino, mine.st_dev)


# -- stale temporary and lock files ----------------------------------------------------------


def remove_if_stale(entry: os.DirEntry[str], now: float, max_age: float) -> bool:
    """Remove the temporary or lock file ``entry`` if it is stale; True if removed.

    A temporary file is stale when it is at least ``max_age`` seconds old at time ``now`` and
    no writer holds it; a lock file when no process holds it, whatever its age.
    """
    try:
        if is_temp_name(entry.name) and now - entry.stat().st_mtime < max_age:
            return False
    except OSError:
        return False  # vanished: its writer renamed or removed it
    return remove_if_unheld(entry.path)


def remove_if_unheld(path: str) -> bool:
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
        if not same_file(fd, path):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_stale_below(top: str, prefix: str, max_age: float, root_prefix: str) -> int:
    """Remove the stale temporary and lock files below the directory ``top`` (the store
    prefix ``prefix``'s), then the directories that leaves empty; how many files went.

    Raises
    ------
    StoreError
        A directory cannot be listed (naming ``prefix``).
    """
    removed = 0
    now = time.time()
    pending = [top]
    while pending:
        dirpath = pending.pop()
        removed_here = 0
        for entry in list_dir_entries(dirpath, f"cannot clean store prefix {prefix!r}"):
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                    continue
            except OSError:
                continue
            if is_reserved_name(entry.name) and remove_if_stale(entry, now, max_age):
                removed_here += 1
        # Only a directory this cleanup emptied goes: other empty directories (an empty
        # group's, one a writer just made) are not ours to remove.
        if removed_here:
            removed += removed_here
            prune_empty_dirs(dirpath, root_prefix)
    return removed


# -- directories -----------------------------------------------------------------------------


def list_dir_entries(dirpath: str, failure: str) -> list[os.DirEntry[str]]:
    """The entries of a directory; none if it is missing (or a file); StoreError, starting
    with ``failure``, if it cannot be listed."""
    try:
        with os.scandir(dirpath) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StoreError(f"{failure}: cannot list directory {dirpath!r}: {exc}") from exc


def makedirs(key: str, dirname: str) -> None:
    """Create the directory ``dirname`` of ``key``'s file and its parents, as needed: by a
    loop, not ``os.makedirs``, whose recursion a legal key of 1,500 segments exhausts."""
    missing = []
    parent = dirname
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                if not os.path.isdir(path):  # a file where a directory must be
                    raise
    except OSError as exc:
        raise StoreError(
            f"cannot write store key {key!r}: cannot create directory {dirname!r}: {exc}"
        ) from exc


def prune_empty_dirs(dirpath: str, root_prefix: str) -> None:
    """Remove ``dirpath`` and its parents while they are empty, stopping at the root
    (``root_prefix`` is the root with a trailing separator)."""
    while dirpath.startswith(root_prefix) and len(dirpath) > len(root_prefix):
        try:
            os.rmdir(dirpath)
        except OSError:
            return
        dirpath = os.path.dirname(dirpath)


def fsync_dir(path: str) -> None:
    """Flush a directory's entries (a rename, a new file) to disk; not on Windows."""
    if WINDOWS:  # directories cannot be opened for fsync there
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- writes ----------------------------------------------------------------------------------


def write_all(fd: int, views: list[memoryview]) -> None:
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


def claim_temp_file(fd: int, tmp: str) -> bool:
    """Lock a new temporary file for its writer's lifetime (marking it live for cleanups
    and the key's other writers); False if one of them removed it first.  Where flock is
    missing or refused, age alone tells stale files apart."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return same_file(fd, tmp)
    except OSError:
        return True


def _open_temp_file(key: str, path: str) -> tuple[int, str, bool]:
    """A new temporary file beside ``path`` in the first slot free or left by a killed
    writer, claimed: ``(fd, its path, whether directories were created for it)``."""
    created_dirs = False
    slot = retries = 0
    while slot < TEMP_SLOTS and retries <= _TEMP_RETRIES:
        tmp = temp_path(path, slot)
        try:
            fd = os.open(tmp, _O_WRITE_NEW, 0o666)
        except FileNotFoundError:
            # The directory is missing (or was just pruned by a concurrent erase): create
            # it and try again.
            makedirs(key, os.path.dirname(path))
            created_dirs = True
            retries += 1
            continue
        except FileExistsError:
            # A killed writer's leftover (removed: the slot is taken again) or a live
            # writer's (held: the next slot).
            if fcntl is not None and remove_if_unheld(tmp):
                retries += 1
            else:
                slot += 1
            continue
        except OSError as exc:
            raise StoreError(f"cannot write store key {key!r} (file {path!r}): {exc}") from exc
        if claim_temp_file(fd, tmp):
            return fd, tmp, created_dirs
        os.close(fd)  # removed by a cleanup in the instant before we locked it
        retries += 1
    why = (f"all {TEMP_SLOTS} slots are held by live writers" if slot == TEMP_SLOTS
           else "concurrent writers or cleanups kept taking it")
    raise StoreError(
        f"cannot write store key {key!r}: cannot create a temporary file beside {path!r}: "
        f"{why}"
    )


def write_atomic(key: str, path: str, views: list[memoryview], *, fsync: bool,
                 root_prefix: str) -> None:
    """Write ``views``, one after another, as the file ``path`` of ``key``: into a
    temporary file renamed over ``path``.  With ``fsync``, the file and the directories
    written (up to the root, ``root_prefix``) are flushed to disk before returning.

    Raises
    ------
    StoreError
        Anything failed (naming the key and the files); ``path`` is as it was.
    """
    fd, tmp, created_dirs = _open_temp_file(key, path)
    try:
        try:
            write_all(fd, views)
            if fsync:
                os.fsync(fd)
            if WINDOWS:  # an open file cannot be renamed there
                os.close(fd)
                fd = -1
            # Renamed while still open (and flock-ed): a cleanup never takes it for stale.
            os.replace(tmp, path)
        except BaseException:
            # Removed while still held, and only if still ours: once unlocked, or renamed,
            # its slot may be another writer's.  (Windows removes no open file, and has no
            # flock: closed first.)
            try:
                if WINDOWS and fd >= 0:
                    fd, held = -1, fd
                    os.close(held)
                if fd < 0 or same_file(fd, tmp):
                    os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
    except BaseException as exc:
        if isinstance(exc, Exception):
            raise StoreError(
                f"cannot write store key {key!r} (file {path!r}, via temporary file "
                f"{tmp!r}): {exc}"
            ) from exc
        raise
    if fsync:
        dirname = os.path.dirname(path)
        try:
            fsync_dir(dirname)
            if created_dirs:
                parent = dirname
                while parent.startswith(root_prefix):
                    parent = os.path.dirname(parent)
                    fsync_dir(parent)
        except OSError as exc:
            raise StoreError(
                f"store key {key!r} (file {path!r}) was written but its directory could "
                f"not be flushed to disk: {exc}"
            ) from exc


@contextmanager
def hold_lock_file(key: str, lock_file: str, root_prefix: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``key``'s lock file ``lock_file`` (creating it and its
    directory); on leaving, remove the file while still holding it, then the directories
    that leaves empty (up to the root, ``root_prefix``).

    Raises
    ------
    StoreError
        The lock file cannot be created or locked (naming the key and the file).
    """
    assert fcntl is not None
    dirname = os.path.dirname(lock_file)
    while True:
        try:
            fd = os.open(lock_file, _O_LOCK, 0o666)
        except FileNotFoundError:
            makedirs(key, dirname)
            continue
        except OSError as exc:
            raise StoreError(
                f"cannot lock store key {key!r} (lock file {lock_file!r}): {exc}"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # Its previous holder may have removed the file before unlocking: then lock
            # the file now at that path instead.
            if same_file(fd, lock_file):
                break
        except OSError as exc:
            os.close(fd)
            raise StoreError(
                f"cannot lock store key {key!r} (lock file {lock_file!r}): {exc}"
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
            os.unlink(lock_file)
        except OSError:
            pass
        os.close(fd)
        prune_empty_dirs(dirname, root_prefix)


# -- erasing ---------------------------------------------------------------------------------


def erase_file(key: str, path: str, root_prefix: str) -> None:
    """Remove the file ``path`` of ``key`` (nothing if there is none, or a directory), then
    the directories that leaves empty."""
    try:
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return
    except OSError as exc:
        if os.path.isdir(path):  # macOS and Windows refuse unlink() on directories
            return
        raise StoreError(f"cannot erase store key {key!r} (file {path!r}): {exc}") from exc
    prune_empty_dirs(os.path.dirname(path), root_prefix)


def remove_path(prefix: str, path: str, remove: Callable[[str], None]) -> None:
    """``remove(path)`` (``os.unlink`` or ``os.rmdir``) for an erase of ``prefix``: a path
    already gone, or a directory a concurrent write landed in, is no error."""
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


def clear_dir(prefix: str, dirpath: str) -> None:
    """Remove everything below ``dirpath`` (temporary files too); keep ``dirpath``."""
    for entry in list_dir_entries(dirpath, f"cannot erase store prefix {prefix!r}"):
        try:
            is_real_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_real_dir = False
        if is_real_dir:
            clear_dir(prefix, entry.path)
            remove_path(prefix, entry.path, os.rmdir)
        elif is_reserved_name(entry.name):
            # A live writer's temporary file or a held lock stays (its owner removes or
            # renames it); a stale one goes.
            remove_if_unheld(entry.path)
        else:
            remove_path(prefix, entry.path, os.unlink)
