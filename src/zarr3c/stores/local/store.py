"""The :class:`LocalStore` class: keys to paths, and each store operation on the files.

The files themselves (atomic writes, temporary and lock files, erasing) are
:mod:`~zarr3c.stores.local.files`; reads are :mod:`~zarr3c.stores.local.reads`, spread over
threads by :mod:`~zarr3c.stores.local.pool`; listings are
:mod:`~zarr3c.stores.local.listing`.  The package docstring (:mod:`zarr3c.stores.local`)
states what the store guarantees.
"""

from __future__ import annotations

import builtins
import os
import pathlib
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from zarr3c._buffers import PAGE_SIZE, address_of, thread_scratch
from zarr3c.errors import InvalidKeyError, StoreError, UnsupportedFeatureError
from zarr3c.stores.base import Store
from zarr3c.stores.byte_ranges import (
    ByteRange,
    BytesLike,
    as_byte_view,
    group_byte_ranges,
    normalize_byte_range,
    scatter_byte_ranges,
)
from zarr3c.stores.keys import CHUNK_NAME, validate_key, validate_prefix
from zarr3c.stores.local import files, listing, pool, reads
from zarr3c.stores.read_into import RangesInto, destination_view

__all__ = ["LocalStore"]

#: LocalStore keeps the files of this many keys (see LocalStore._path).
_PATHS_KEPT = 1 << 14


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
    LocalStore pickles as its root and flags.  What the store guarantees (atomic writes,
    no key outside the root, reserved file names) is in the :mod:`zarr3c.stores.local`
    package docstring.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     store = LocalStore(tmp)
    ...     store.set("a/zarr.json", b"{}")
    ...     print(sorted(p.name for p in store.root.iterdir()), store.list_dir(""))
    ['a'] ([], ['a/'])
    """

    supports_writes = True
    supports_partial_writes = False
    supports_listing = True
    reads_into_memory = reads.HAVE_PREADV  # (see read_value_into)
    reads_elements = reads.fileio is not None  # (see read_elements_into)

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
        if process_locks and files.fcntl is None:
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
        """The root directory (absolute).

        Examples
        --------
        >>> LocalStore("data/example.zarr").root.is_absolute()
        True
        """
        return pathlib.Path(self._root)

    @property
    def fsync(self) -> bool:
        """Whether writes are flushed to disk before ``set`` returns.

        Examples
        --------
        >>> LocalStore("data/example.zarr", fsync=True).fsync
        True
        """
        return self._fsync

    @property
    def process_locks(self) -> bool:
        """Whether :meth:`key_lock` is a cross-process lock.

        Examples
        --------
        >>> LocalStore("data/example.zarr").process_locks
        False
        """
        return self._process_locks

    @property
    def lock_id(self) -> tuple[str, str]:
        return ("local", self._root)

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock on ``key`` shared with other processes (with ``process_locks=True``).

        An exclusive ``flock`` on ``key``'s lock file ``.<name>.zarr3c-lock`` (in the key's
        directory), shared with every process and thread; the file exists only while held.
        Without ``process_locks``, a no-op.  Array writes hold it (inside the in-process
        lock) across each read-modify-write of a chunk or shard.

        Parameters
        ----------
        key
            The key about to be read, modified and written.

        Returns
        -------
        contextlib.AbstractContextManager
            Holds the lock while entered.

        Raises
        ------
        InvalidKeyError
            ``key`` is not a valid key.
        StoreError
            The lock file cannot be created or locked (naming the key and the file).
        ReadOnlyError
            The store is read-only.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = LocalStore(tmp, process_locks=True)
        ...     with store.key_lock("a/c/0"):
        ...         store.set("a/c/0", b"new")
        ...     print(sorted(store.list()))
        ['a/c/0']
        """
        if not self._process_locks:
            return nullcontext()
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        return files.hold_lock_file(key, files.lock_path(path), self._root_prefix)

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

        Kept for the last :data:`_PATHS_KEPT` keys: the checks cost as much as reading a
        small chunk from the page cache, and chunk by chunk reads ask again and again (the
        answer depends on the key and the root only)."""
        return self._kept_file(key)[0]

    def _kernel_file(self, key: str) -> bytes | None:
        """:meth:`_path` as the ``fileio`` kernels take it (None if it holds a NUL), kept
        with it."""
        return self._kept_file(key)[1]

    def _one_call_file(self, key: str) -> bytes | None:
        """:meth:`_kernel_file`, or None where there are no ``fileio`` kernels."""
        return None if reads.fileio is None else self._kernel_file(key)

    def _kept_file(self, key: str) -> tuple[str, bytes | None]:
        """``(path, kernel path)`` of a key, from the kept ones or checked afresh."""
        kept = self._paths.get(key)
        if kept is None:
            path = self._checked_path(key)
            kept = (path, reads.kernel_path(path))
            if len(self._paths) >= _PATHS_KEPT:
                self._paths.clear()
            self._paths[key] = kept
        return kept

    def _checked_path(self, key: str) -> str:
        """The file of a key, every check made (see :meth:`_path`)."""
        validate_key(key)
        if (files.TMP_MARK in key or files.LOCK_SUFFIX in key) and any(
            files.is_reserved_name(s) for s in key.split("/")
        ):
            raise InvalidKeyError(
                f"invalid store key {key!r}: names like '.<name>{files.TMP_MARK}<16 hex>' and "
                f"'.<name>{files.LOCK_SUFFIX}' are reserved for LocalStore's temporary and "
                "lock files"
            )
        if files.WINDOWS and ":" in key:
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
        return reads.read_file(key, self._path(key))

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        items = [(key, self._path(key)) for key in keys]
        return pool.map_batched(reads.read_file_item, items)

    def get_at_most(self, key: str, limit: int) -> bytes | None:
        return reads.read_file(key, self._path(key), limit)

    def get_many_at_most(self, keys: Iterable[str], limit: int
                         ) -> builtins.list[BytesLike | None]:
        items = [(key, self._path(key), limit) for key in keys]
        return pool.map_batched(reads.read_file_at_most_item, items)

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
                values += reads.read_ranges(key, self._path(key),
                                            [normalize_byte_range(key, r) for _, r in key_ranges])
                return values
        # Group the ranges by key, so each file is opened once whatever the request order.
        groups, n = group_byte_ranges(key_ranges, self._path)
        work = [(key, path, ranges) for key, (path, _positions, ranges) in groups.items()]
        return scatter_byte_ranges(groups, pool.map_batched(reads.read_ranges_item, work), n)

    def read_ranges_into(
        self, requests: Sequence[RangesInto], out: Any
    ) -> builtins.list[int | None]:
        # Each file opened once, its ranges read straight into ``out`` (no bytes objects);
        # files spread over the pool when there are many.
        if not reads.HAVE_PREADV:
            return super().read_ranges_into(requests, out)
        view = destination_view(requests, out)
        # Where ``out`` lies, when some range is long enough for the slow kernel copy to
        # matter (see zarr3c._buffers).
        address = None
        if not view.readonly and any(stop - start >= reads.BOUNCE_MIN_BYTES
                                     for _, ranges in requests for start, stop, _ in ranges):
            address = address_of(view)
        items = [(key, self._path(key), ranges, view, address) for key, ranges in requests]
        if reads.fileio is not None and len(items) > 1:  # (one file: no batch to build)
            return pool.map_batched_parts(reads.read_into_items, items)
        return pool.map_batched(reads.read_into_item, items)

    def read_tail_into(self, key: str, out: Any) -> int | None:
        # One call without the GIL (open, fstat, pread, close), where it can: through ``os``
        # each of the four gives it up and takes it back.
        view = memoryview(out).cast("B")
        # (no bounce: an index is small, and where the tail starts is not known before)
        encoded = None if view.readonly else self._one_call_file(key)
        if encoded is not None:
            try:
                done = reads.one_call_outcome(*reads.fileio.read_tail_into(encoded, view))
            except (ValueError, TypeError, BufferError):  # not a byte buffer
                done = reads.RETRY
            if done is not reads.RETRY:
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
        err, size, status = reads.fileio.read_shard_parts(encoded, index, at_end, slots, los,
                                                          his, expect, staging, ats, lens)
        done = reads.one_call_outcome(err, 0, size)
        if done is None:
            return -1
        return None if done is reads.RETRY or status else size

    def read_box_into(self, key: str, nbytes: int, strides: Any, first: Sequence[int],
                      counts: Sequence[int], itemsize: int, span: int, dst: Any,
                      dst_offset: int = 0, dst_strides: Sequence[int] | None = None
                      ) -> int | None:
        # Open, read, close and copy without the GIL in between: for a small read of an
        # uncompressed chunk, the Python steps and GIL hand-offs around those calls cost
        # more than the calls (Read.time_random_reads, uncompressed, in
        # asv_benchmarks/benchmarks/bench_array_io.py).
        encoded = self._one_call_file(key)
        if encoded is None:
            return None
        try:
            err, size, copied = reads.fileio.read_box_into(
                encoded, nbytes, strides, first, counts, itemsize,
                thread_scratch(span + PAGE_SIZE, "stored"), dst, dst_offset, dst_strides)
        except (ValueError, TypeError, BufferError):  # (left to the ordinary read)
            return None
        done = reads.one_call_outcome(err, 0, size)
        if done is None:
            return -1
        return nbytes if copied and done is not reads.RETRY else None

    def chunk_files(self, prefix: str, names: Sequence[str]) -> builtins.list[bytes] | None:
        cls = type(self)
        if (reads.fileio is None or not names or cls.get is not LocalStore.get
                or cls.get_many is not LocalStore.get_many):
            return None  # (a subclass reading otherwise is read through get_many)
        return self._chunk_paths(prefix, names)

    def chunk_write_files(self, prefix: str, names: Sequence[str]
                          ) -> builtins.list[bytes] | None:
        cls = type(self)
        # The kernel writes as set_parts does without fsync or cross-process locks; a
        # read-only store refuses through set, a subclass writing otherwise writes itself.
        if (reads.fileio is None or not names or self._read_only or self._fsync
                or self._process_locks or cls.set is not LocalStore.set
                or cls.set_parts is not LocalStore.set_parts):
            return None
        return self._chunk_paths(prefix, names)

    def _chunk_paths(self, prefix: str, names: Sequence[str]) -> builtins.list[bytes] | None:
        """The kernel paths of chunk keys ``prefix + name`` (None where they are not plain
        chunk keys under a valid prefix)."""
        # The first key is checked in full (the prefix with it); the others differ from it
        # only in chunk coordinates, checked here to be nothing else.
        first = self._kernel_file(prefix + names[0])
        if first is not None and len(names) == 1:
            return [first]  # (one key: its own path, checked in full)
        if first is None or not all(map(CHUNK_NAME.fullmatch, names)):
            return None
        base = first[:len(first) - len(names[0].encode())]
        return [base + name for name in map(str.encode, names)]

    def read_value_into(self, key: str, out: Any) -> int | None:
        # One open and one read (two would be the range and a size probe).
        if not reads.HAVE_PREADV:
            return super().read_value_into(key, out)
        view = memoryview(out).cast("B")
        address = address_of(view) if view.nbytes >= reads.BOUNCE_MIN_BYTES else None
        read = reads.read_file_into(key, self._path(key), [(0, view.nbytes, 0)], view, address)
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
        if reads.fileio is None or not keys:
            return None
        view = memoryview(scratch).cast("B")
        address = address_of(view) if view.nbytes >= reads.BOUNCE_MIN_BYTES else None
        if not reads.kernel_ranges([(0, int(max(sizes)), 0)], address):
            return None
        paths = [self._kernel_file(key) for key in keys]
        if None in paths:  # (left to the ordinary reads)
            return None
        return reads.fileio.read_files_elements(paths, scratch, sizes, run_starts, run_stops,
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
        """Store ``value`` (any bytes-like object) under ``key``, atomically.

        The value is written to a temporary file in the key's directory and renamed over
        the key's file, so a reader or a crash sees the old value or the new one; missing
        directories are created.  The temporary file takes the key's first slot that no live
        writer holds, removing a killed writer's leftover there (see
        :mod:`~zarr3c.stores.local.files`).  With ``fsync=True`` the file and its directory
        are on disk when this returns.

        Parameters
        ----------
        key
            The key to write.
        value
            The new value: ``bytes``, ``bytearray``, a numpy array, ... (its bytes).

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key, or names a reserved temporary or lock file.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If ``value`` is not bytes-like.
        StoreError
            If the file cannot be written (naming the key and the files); the key keeps its
            previous value.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = LocalStore(tmp)
        ...     store.set("a/c/0", b"\\x01\\x02")
        ...     print((store.root / "a" / "c" / "0").read_bytes())
        b'\\x01\\x02'
        """
        self.set_parts(key, (value,))

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        # The parts go into the temporary file one after another: never joined in memory.
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        files.write_atomic(key, path, [as_byte_view(part, key) for part in parts],
                           fsync=self._fsync, root_prefix=self._root_prefix)

    def erase(self, key: str) -> None:
        path = self._path(key)
        self._check_writable(f"store key {key!r}")
        files.erase_file(key, path, self._root_prefix)

    def erase_values(self, keys: Iterable[str]) -> None:
        items = [(key, self._path(key)) for key in keys]
        if not items:
            return
        self._check_writable(f"store key {items[0][0]!r}")
        for key, path in items:
            files.erase_file(key, path, self._root_prefix)

    def erase_prefix(self, prefix: str) -> None:
        """Erase every key that starts with ``prefix`` (``""``: every key in the store).

        Removes the prefix's directory and everything below it (stale temporary files too;
        a live writer's stays), then its parents that this leaves empty.  A prefix that is
        a symbolic link to a directory loses the link, never what it points to.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        ReadOnlyError
            If the store is read-only.
        StoreError
            If a file or directory cannot be removed.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = LocalStore(tmp)
        ...     store.set_parts("a/c/0", [b"1"]); store.set("b", b"2")
        ...     store.erase_prefix("a/")
        ...     print(sorted(p.name for p in store.root.iterdir()))
        ['b']
        """
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
                files.remove_path(prefix, dirpath, os.unlink)
                files.prune_empty_dirs(os.path.dirname(dirpath), self._root_prefix)
            return
        if not os.path.isdir(dirpath):
            return
        files.clear_dir(prefix, dirpath)
        if prefix:
            files.prune_empty_dirs(dirpath, self._root_prefix)

    def cleanup_temporary_files(
        self, prefix: str = "", *, max_age: float = files.STALE_TEMPORARY_AGE
    ) -> int:
        """Remove the temporary and lock files left below ``prefix`` by killed writers.

        A temporary file is removed when it is older than ``max_age`` seconds (by its
        modification time) and no live writer holds it (writers hold an ``flock`` on their
        temporary file until they rename it; on Windows, age alone decides).  A lock file is
        removed when no process holds it, whatever its age.  Directories this empties are
        removed too.

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
        InvalidKeyError
            ``prefix`` is malformed.
        ReadOnlyError
            The store is read-only.
        StoreError
            A directory cannot be listed.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = LocalStore(tmp)
        ...     store.set("a/zarr.json", b"{}")
        ...     _ = (store.root / "a" / ".c.zarr3c-tmp-0123456789abcdef").write_bytes(b"")
        ...     print(store.cleanup_temporary_files(max_age=0), store.list_dir("a/"))
        1 (['a/zarr.json'], [])
        """
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        return files.remove_stale_below(self._prefix_dir(prefix), prefix, max_age,
                                        self._root_prefix)

    # -- listings -------------------------------------------------------------------------------

    def list(self) -> Iterator[str]:
        return listing.walk(self._root, "", not self._read_only)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return listing.walk(self._prefix_dir(prefix), prefix, not self._read_only)

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        remove_stale = not self._read_only
        keys: builtins.list[str] = []
        prefixes: builtins.list[str] = []
        for name, path, is_dir in listing.scan(self._prefix_dir(prefix), prefix, remove_stale):
            if not is_dir:
                keys.append(prefix + name)
            elif next(listing.walk(path, prefix + name + "/", remove_stale), None) is not None:
                # Only directories that hold a key are prefixes, as in any other store.
                prefixes.append(prefix + name + "/")
        return keys, prefixes
