"""LocalStore's listings: the keys below a directory, depth first.

A directory entry is a key when it is a file whose name is a valid key segment and not a
reserved temporary or lock file name (:func:`~zarr3c.stores.local.files.is_reserved_name`);
subdirectories are prefixes.  Symbolic links inside the root are followed, but a directory
already on the way down (a link loop) is not entered again.  A writable store's listings
remove the stale temporary files they pass (older than
:data:`~zarr3c.stores.local.files.STALE_TEMPORARY_AGE`, held by no writer): those beside
keys that are not written again, since a write of a key removes its own key's leftovers.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from typing import TypeAlias

from zarr3c.errors import StoreError
from zarr3c.stores.local import files

__all__ = ["ScanEntry", "scan", "walk"]


#: A key or a subdirectory found by :func:`scan`: ``(name, path, is_dir)``, its name (the last
#: segment of its key or prefix), its path on disk, and whether it is a (followed) directory,
#: a prefix rather than a key.  A plain tuple: listings build one per directory entry.
ScanEntry: TypeAlias = tuple[str, str, bool]


def scan(dirpath: str, prefix: str, remove_stale: bool) -> list[ScanEntry]:
    """The keys and subdirectories directly in ``dirpath`` (the store prefix ``prefix``'s),
    sorted by name; reserved names and names that are not valid key segments omitted.
    With ``remove_stale`` (a writable store), stale temporary files seen on the way are
    removed.

    Raises
    ------
    StoreError
        The directory cannot be listed (naming ``prefix``).
    """
    out: list[ScanEntry] = []
    now: float | None = None
    for entry in files.list_dir_entries(dirpath, f"cannot list store prefix {prefix!r}"):
        name = entry.name
        if "\\" in name:
            continue
        if files.is_reserved_name(name):
            if remove_stale and files.is_temp_name(name):
                if now is None:
                    now = time.time()
                files.remove_if_stale(entry, now, files.STALE_TEMPORARY_AGE)
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


def walk(dirpath: str, prefix: str, remove_stale: bool) -> Iterator[str]:
    """Every key below ``dirpath`` (whose keys start with ``prefix``), depth first; none if
    it is missing or not a directory.

    Raises
    ------
    StoreError
        A directory cannot be listed (naming ``prefix``).
    """
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
    yield from _walk_dir(dirpath, prefix, remove_stale, frozenset({(st.st_dev, st.st_ino)}))


def _walk_dir(dirpath: str, prefix: str, remove_stale: bool,
              ancestors: frozenset[tuple[int, int]]) -> Iterator[str]:
    """:func:`walk` below a directory whose ``(device, inode)`` and its ancestors' are
    ``ancestors`` (a symlink back to one of them is a loop, not entered).  Depth first with
    a stack of its own, not recursion: a legal key may have thousands of segments."""
    stack = [(iter(scan(dirpath, prefix, remove_stale)), prefix, ancestors)]
    while stack:
        entries, here, seen = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name, path, is_dir = entry
        if not is_dir:
            yield here + name
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in seen:  # a symlink loop
            continue
        below = here + name + "/"
        stack.append((iter(scan(path, below, remove_stale)), below, seen | {ident}))
