"""ZipStore: a store over a single zip file (the v3 core specification's "Abstract store
interface", https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html), with the names,
modes and defaults of zarr-python 3's ``zarr.storage.ZipStore``.

Keys are the names of the archive's entries and values their contents; the archive is read and
written with the standard library's :mod:`zipfile`::

    >>> import os, tempfile, zarr3c
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "example.zip")
    >>> with ZipStore(path, mode="w") as store:                # writes the zip on close
    ...     a = zarr3c.create_array(store, shape=(4,), dtype="i4", chunks=(2,))
    ...     a[:] = [1, 2, 3, 4]
    >>> zarr3c.open_array(ZipStore(path))[:]                   # mode="r" by default
    array([1, 2, 3, 4], dtype=int32)
    >>> tmp.cleanup()

What zip files allow, and what this store does about it:

- A zip file is complete only after :meth:`ZipStore.close` (or the end of a ``with`` block)
  has written its central directory.  Until then the file on disk is not a readable zip (in
  mode ``"a"``, not even the part that was there before), so a writer must be closed, and
  nothing else should open the file while it is being written.  Using a closed store raises
  :class:`~zarr3c.errors.StoreError`.
- Entries cannot be replaced in place.  Setting an existing key (``zarr.json`` when attributes
  change, a chunk written twice) appends a new entry; reads, ``exists`` and listings see only
  the newest value and list each key once.  As zarr-python's ZipStore, the bytes of the
  replaced entry stay in the file.
- Erasing is supported: the key disappears from reads and listings at once.  When the store is
  closed, replaced and erased entries are left out of the central directory, so every zip
  reader (zarr-python, ``unzip``, :mod:`zipfile`) sees each key once and no erased key.  Their
  bytes are not reclaimed: rewrite the archive (e.g. ``zarr3c.copy``) to shrink it.
- Partial reads (shard indexes, inner chunks) of stored entries (``ZIP_STORED``, the default)
  read only the requested bytes; compressed entries are decompressed whole.
- Every zipfile operation holds one lock, so the store can be shared by the threads zarr3c
  writes chunks from.  Read-only twins (:meth:`ZipStore.with_read_only`) share the open file
  and the lock; closing one closes the file for all.
- A read-only store opened with ``mode="r"`` pickles as its path and reopens the file; a store
  that is writing cannot be pickled (its file is not a complete zip yet).
- Entry names that are not valid store keys (directory entries ``"a/"``, ``"../x"``,
  absolute names) are neither listed nor readable, and are kept as they are.
"""

from __future__ import annotations

import builtins
import os
import pathlib
import struct
import threading
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, Literal, cast

from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    OversizedValueError,
    ReadOnlyError,
    StoreError,
    UnsupportedFeatureError,
    ZarrError,
)
from zarr3c.stores.base import Store
from zarr3c.stores.byte_ranges import (
    ByteRange,
    BytesLike,
    apply_patches,
    as_byte_view,
    group_byte_ranges,
    resolve_byte_range,
    scatter_byte_ranges,
)
from zarr3c.stores.keys import key_problem, validate_key, validate_prefix

__all__ = ["ZipStore"]

ZipStoreAccessMode = Literal["r", "w", "a", "x"]
_MODES = ("r", "w", "a", "x")

# The local file header: signature, ..., file name length, extra field length (APPNOTE 4.3.7).
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_FLAG_ENCRYPTED = 0x1

# What zipfile and its decompressors raise on a damaged or unsupported archive.
_READ_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    RuntimeError,  # encrypted entries, missing bz2/lzma modules
    NotImplementedError,  # unsupported compression methods
    ValueError,
    struct.error,
)
try:
    import lzma

    _READ_ERRORS += (lzma.LZMAError,)
except ImportError:  # pragma: no cover - Python built without lzma
    pass


def _is_key(name: str) -> bool:
    return key_problem(name) is None


class _Archive:
    """The open zip file shared by a ZipStore and its read-only twins.

    Every method must be called with ``lock`` held.  ``index`` maps each key to the ZipInfo
    of its newest entry; ``superseded`` counts entries that are no longer in it (replaced or
    erased), which :meth:`close` leaves out of the central directory.
    """

    def __init__(self, path: str, mode: str, compression: int, allow_zip64: bool) -> None:
        self.path = path
        self.mode = mode
        self.compression = compression
        self.lock = threading.RLock()
        self.zf: zipfile.ZipFile | None = _open_zip(path, mode, compression, allow_zip64)
        self.index: dict[str, zipfile.ZipInfo] = {}
        for info in self.zf.infolist():
            if _is_key(info.filename):
                self.index[info.filename] = info  # a later duplicate wins, as in zipfile
        self.superseded = sum(_is_key(i.filename) for i in self.zf.infolist()) - len(self.index)
        # (header offset, name) -> offset of the entry's data, for seeking into stored entries
        self._data_starts: dict[tuple[int, str], int] = {}

    # -- state ----------------------------------------------------------------------------------

    def zip(self) -> zipfile.ZipFile:
        """The open ZipFile; StoreError once closed."""
        zf = self.zf
        if zf is None:
            raise StoreError(f"ZipStore over zip file {self.path!r} is closed")
        return zf

    def close(self) -> None:
        """Write the central directory (without superseded entries) and close; idempotent."""
        zf = self.zf
        if zf is None:
            return
        self.zf = None
        try:
            if self.superseded and self.mode != "r":
                live = {id(info) for info in self.index.values()}
                # zipfile writes its central directory from ``filelist``: leave out replaced
                # and erased entries; entries that are not keys belong to someone else.
                zf.filelist[:] = [
                    i for i in zf.filelist if id(i) in live or not _is_key(i.filename)
                ]
            zf.close()
        except (OSError, ValueError, zipfile.LargeZipFile, struct.error) as exc:
            raise StoreError(
                f"cannot finish zip file {self.path!r} (writing its central directory): {exc}"
            ) from exc

    def __del__(self) -> None:
        # zipfile closes a forgotten ZipFile when collected; do the same, without superseded
        # entries.  Errors cannot be reported from here.
        try:
            with self.lock:
                self.close()
        except Exception:
            pass

    # -- reads ----------------------------------------------------------------------------------

    def read(self, key: str, info: zipfile.ZipInfo) -> bytes:
        """The whole value of the entry ``info`` (CRC checked); StoreError naming ``key``."""
        try:
            with self.zip().open(info) as f:
                return f.read()  # checks the CRC
        except _READ_ERRORS as exc:
            raise self._read_error(key, exc) from exc

    def read_ranges(
        self, key: str, info: zipfile.ZipInfo, ranges: builtins.list[tuple[int, int | None]]
    ) -> builtins.list[bytes]:
        """The normalized ranges of the entry ``info``: only those bytes from a stored
        entry, slices of the whole value from a compressed one."""
        size = info.file_size
        spans = [resolve_byte_range(start, length, size) for start, length in ranges]
        seekable = info.compress_type == zipfile.ZIP_STORED and not (
            info.flag_bits & _FLAG_ENCRYPTED
        )
        if not seekable or any(span == (0, size) for span in spans):
            whole = self.read(key, info)
            return [whole[lo:hi] for lo, hi in spans]
        # A stored entry's bytes lie as they are in the file: read just the ranges.
        try:
            fp = self.zip().fp
            assert fp is not None
            start = self._data_start(fp, info)
            out = []
            for lo, hi in spans:
                fp.seek(start + lo)
                data = fp.read(hi - lo)
                if len(data) != hi - lo:
                    raise zipfile.BadZipFile("the entry's data is truncated")
                out.append(data)
            return out
        except _READ_ERRORS as exc:
            raise self._read_error(key, exc) from exc

    def _data_start(self, fp: Any, info: zipfile.ZipInfo) -> int:
        """Where the entry's data starts in the file (past its local header), kept.  The
        local header must name the entry, as ``zipfile``'s whole reads check: a central
        directory pointing one name at another entry's header is a damaged archive, not
        that entry's bytes."""
        ident = (info.header_offset, info.orig_filename)
        start = self._data_starts.get(ident)
        if start is None:
            fp.seek(info.header_offset)
            header = fp.read(_LOCAL_HEADER.size)
            if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
                raise zipfile.BadZipFile("bad local file header")
            fields = _LOCAL_HEADER.unpack(header)
            name = fp.read(fields[-2])
            utf8 = fields[3] & 0x800
            expected = info.orig_filename.encode("utf-8" if utf8 else "cp437",
                                                 errors="replace")
            if name != expected:
                raise zipfile.BadZipFile(
                    f"the local file header names {name!r}, the central directory "
                    f"{info.orig_filename!r}")
            start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
            self._data_starts[ident] = start
        return start

    def _read_error(self, key: str, exc: BaseException) -> StoreError:
        """The StoreError for a failed read of ``key``."""
        return StoreError(f"cannot read store key {key!r} from zip file {self.path!r}: {exc}")

    # -- writes ---------------------------------------------------------------------------------

    def write(self, key: str, data: memoryview) -> None:
        """Append an entry for ``key`` (superseding an older one); on failure the archive
        holds what it held before."""
        zf = self.zip()
        info = zipfile.ZipInfo(key, date_time=time.localtime(time.time())[:6])
        info.compress_type = self.compression
        info.external_attr = 0o644 << 16  # rw-r--r--, as zarr-python writes
        old = self.index.get(key)
        n_entries, start_dir = len(zf.filelist), zf.start_dir
        # The index keeps the old entry; hiding it from zipfile's name table keeps zipfile
        # from warning about a duplicate name (the duplicate is intended, see the module doc).
        zf.NameToInfo.pop(key, None)
        try:
            zf.writestr(info, data)
        except BaseException as exc:
            # Forget the failed entry and write the next one (or the central directory) over
            # its bytes: the archive holds exactly what it held before.
            del zf.filelist[n_entries:]
            zf.start_dir = start_dir
            if old is not None:
                zf.NameToInfo[key] = old
            else:
                zf.NameToInfo.pop(key, None)
            if isinstance(exc, Exception) and not isinstance(exc, ZarrError):
                raise StoreError(
                    f"cannot write store key {key!r} to zip file {self.path!r}: {exc}"
                ) from exc
            raise
        self.index[key] = info
        if old is not None:
            self.superseded += 1

    def erase(self, key: str) -> None:
        """Hide ``key``'s entry: gone from reads and listings, left out on close."""
        if self.index.pop(key, None) is not None:
            self.superseded += 1
            # zipfile rewrites the central directory on close only if it was modified, which
            # in mode "a" only a write marks: without this an erase-only session is lost.
            self.zip()._didModify = True  # type: ignore[attr-defined]


def _open_zip(path: str, mode: str, compression: int, allow_zip64: bool) -> zipfile.ZipFile:
    """Open ``path`` as zipfile does, with zarr3c errors naming the file."""
    if mode == "r" and not os.path.exists(path):
        raise StoreError(f"zip file {path!r} does not exist (mode 'r' opens an existing zip)")
    if mode == "x" and os.path.exists(path):
        raise StoreError(f"zip file {path!r} already exists (mode 'x' creates a new zip)")
    if mode == "a" and os.path.isfile(path) and os.path.getsize(path) > 0:
        # zipfile's mode "a" appends a new archive to a file that is not a zip (or to a
        # damaged one) instead of refusing: check that it is a readable zip first.
        _open_zip(path, "r", compression, allow_zip64).close()
    try:
        return zipfile.ZipFile(
            path,
            mode=cast(ZipStoreAccessMode, mode),
            compression=compression,
            allowZip64=allow_zip64,
        )
    except (NotImplementedError, RuntimeError) as exc:  # checked before the file is opened
        raise InvalidArgumentError(
            f"cannot open zip file {path!r} with compression {compression!r}: {exc}"
        ) from exc
    except zipfile.BadZipFile as exc:
        raise StoreError(f"file {path!r} is not a zip file, or is truncated: {exc}") from exc
    except (OSError, ValueError, struct.error, EOFError) as exc:
        raise StoreError(f"cannot open zip file {path!r} (mode {mode!r}): {exc}") from exc


class ZipStore(Store):
    """A store over the entries of a zip file.

    Parameters
    ----------
    path
        The zip file.
    mode
        ``"r"`` reads an existing zip (the default), ``"w"`` creates a new one (truncating an
        existing file), ``"a"`` adds to an existing zip (or creates one), ``"x"`` creates a new
        zip and refuses an existing file.  The file is opened at once.
    read_only
        Refuse writes; by default a store is read-only exactly in mode ``"r"`` (as in
        zarr-python).  ``read_only=False`` with mode ``"r"`` is refused.
    compression
        The :mod:`zipfile` compression method of new entries: ``zipfile.ZIP_STORED`` (the
        default, which zarr-python also uses, and which lets partial reads seek),
        ``ZIP_DEFLATED``, ``ZIP_BZIP2`` or ``ZIP_LZMA``.
    allowZip64
        Use the ZIP64 extensions when the zip needs them (over 2 GiB or 65,535 entries);
        with False, such a write raises :class:`~zarr3c.errors.StoreError`.

    Raises
    ------
    StoreError
        If the file is missing (mode ``"r"``), exists (mode ``"x"``), cannot be opened, or is
        not a zip file or a truncated one (modes ``"r"`` and ``"a"``); the message names it.
    InvalidArgumentError
        For an unknown ``mode`` or ``compression``.

    Notes
    -----
    The zip is complete only after :meth:`close` (or a ``with`` block) has written its
    central directory.  Replacing a key appends an entry and erasing a key hides it; on close
    both leave the central directory, so readers see the newest values and no erased key, but
    the bytes stay in the file (see the module documentation).  Two ZipStores are equal when
    they are over the same file with the same ``read_only`` flag.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "data.zip")
    ...     with ZipStore(path, mode="w") as store:
    ...         store.set("zarr.json", b"{}")
    ...     with ZipStore(path) as store:
    ...         print(store.read_only, store.get("zarr.json"))
    True b'{}'
    """

    supports_writes = True
    supports_partial_writes = False
    supports_listing = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: ZipStoreAccessMode = "r",
        *,
        read_only: bool | None = None,
        compression: int = zipfile.ZIP_STORED,
        allowZip64: bool = True,  # noqa: N803 - zarr-python's and zipfile's name
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidTypeError(
                f"ZipStore needs a path to a zip file, not {type(path).__name__}"
            )
        path_str = os.path.abspath(os.fsdecode(os.fspath(path)))
        if mode not in _MODES:
            raise InvalidArgumentError(
                f"invalid mode {mode!r} for ZipStore {path_str!r}: expected 'r', 'w', 'a' or 'x'"
            )
        if read_only is None:
            read_only = mode == "r"
        elif not read_only and mode == "r":
            raise InvalidArgumentError(
                f"ZipStore {path_str!r}: read_only=False needs mode 'w', 'a' or 'x', not 'r'"
            )
        super().__init__(read_only=read_only)
        self._archive = _Archive(path_str, mode, compression, bool(allowZip64))
        self._allow_zip64 = bool(allowZip64)

    # -- identity -------------------------------------------------------------------------------

    @property
    def path(self) -> pathlib.Path:
        """The zip file (absolute).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w") as store:
        ...         print(store.path.name, store.path.is_absolute())
        data.zip True
        """
        return pathlib.Path(self._archive.path)

    @property
    def mode(self) -> str:
        """The mode the zip file was opened with (``"r"``, ``"w"``, ``"a"`` or ``"x"``).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="x") as store:
        ...         print(store.mode, store.read_only)
        x False
        """
        return self._archive.mode

    @property
    def compression(self) -> int:
        """The :mod:`zipfile` compression method of new entries.

        Examples
        --------
        >>> import os, tempfile, zipfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w",
        ...                   compression=zipfile.ZIP_DEFLATED) as store:
        ...         print(store.compression == zipfile.ZIP_DEFLATED)
        True
        """
        return self._archive.compression

    @property
    def allowZip64(self) -> bool:  # noqa: N802 - zarr-python's name
        """Whether the ZIP64 extensions may be used.

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w") as store:
        ...         print(store.allowZip64)
        True
        """
        return self._allow_zip64

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (on this store or a twin sharing the file).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = ZipStore(os.path.join(tmp, "data.zip"), mode="w")
        ...     twin = store.with_read_only(True)
        ...     store.close()
        ...     print(store.closed, twin.closed)
        True True
        """
        return self._archive.zf is None

    @property
    def lock_id(self) -> tuple[str, str]:
        return ("zip", self._archive.path)

    def __repr__(self) -> str:
        extra = "" if self._read_only == (self.mode == "r") else f", read_only={self._read_only}"
        return f"ZipStore({self._archive.path!r}, mode={self.mode!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ZipStore):
            return NotImplemented
        return (self._archive.path, self._read_only) == (other._archive.path, other._read_only)

    def __hash__(self) -> int:
        return hash((ZipStore, self._archive.path, self._read_only))

    def __getstate__(self) -> dict[str, Any]:
        if self.mode != "r":
            raise UnsupportedFeatureError(
                f"cannot pickle {self!r}: a zip file being written is complete only after "
                "close(); close it and pickle ZipStore(path, mode='r')"
            )
        return {
            "path": self._archive.path,
            "compression": self.compression,
            "allowZip64": self._allow_zip64,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["path"],
            mode="r",
            compression=state["compression"],
            allowZip64=state["allowZip64"],
        )

    # -- lifecycle ------------------------------------------------------------------------------

    def with_read_only(self, read_only: bool = False) -> ZipStore:
        """A store over the same open zip file (sharing it) with the given ``read_only`` flag.

        Parameters
        ----------
        read_only
            The new store's flag.

        Returns
        -------
        ZipStore
            A twin sharing the open file and its lock: closing one closes both.

        Raises
        ------
        ReadOnlyError
            For ``read_only=False`` when the file was opened with mode ``"r"``.

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w") as store:
        ...         store.set("k", b"v")
        ...         print(store.with_read_only(True).get("k"))
        b'v'
        """
        if not read_only and self.mode == "r":
            raise ReadOnlyError(
                f"cannot write to zip file {self._archive.path!r}: it was opened with mode "
                "'r'; open ZipStore(path, mode='a') to add to it"
            )
        return super().with_read_only(read_only)

    def close(self) -> None:
        """Finish the zip file (write its central directory) and close it; idempotent.

        Replaced and erased entries are left out of the central directory.

        Raises
        ------
        StoreError
            If the central directory cannot be written; the message names the file.

        Examples
        --------
        >>> import os, tempfile, zipfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = os.path.join(tmp, "data.zip")
        ...     store = ZipStore(path, mode="w")
        ...     store.set("k", b"old"); store.set("k", b"new")
        ...     store.close(); store.close()
        ...     print(zipfile.ZipFile(path).namelist())
        ['k']
        """
        with self._archive.lock:
            self._archive.close()

    # -- reads ----------------------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        validate_key(key)
        archive = self._archive
        with archive.lock:
            archive.zip()
            info = archive.index.get(key)
            return None if info is None else archive.read(key, info)

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        return self._get_many(keys, None)

    def get_at_most(self, key: str, limit: int) -> BytesLike | None:
        return self._get_many([key], limit)[0]

    def get_many_at_most(self, keys: Iterable[str], limit: int
                         ) -> builtins.list[BytesLike | None]:
        return self._get_many(keys, limit)

    def _get_many(self, keys: Iterable[str], limit: int | None
                  ) -> builtins.list[BytesLike | None]:
        """The values of ``keys``; with ``limit``, an entry whose size in the central
        directory is larger is refused before it is read (or inflated), and zipfile stops
        reading an entry at that size."""
        key_list = [validate_key(key) for key in keys]
        archive = self._archive
        with archive.lock:
            archive.zip()
            out: builtins.list[BytesLike | None] = []
            for key in key_list:
                info = archive.index.get(key)
                if info is not None and limit is not None and info.file_size > limit:
                    raise OversizedValueError(key, info.file_size, limit)
                out.append(None if info is None else archive.read(key, info))
            return out

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        # Group the ranges by key so that each entry is opened (or decompressed) once.
        groups, n = group_byte_ranges(key_ranges, validate_key)
        results: builtins.list[builtins.list[bytes] | None] = []
        archive = self._archive
        with archive.lock:
            archive.zip()
            for key, (_key, _positions, ranges) in groups.items():
                info = archive.index.get(key)
                results.append(None if info is None else archive.read_ranges(key, info, ranges))
        return scatter_byte_ranges(groups, results, n)

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._archive.lock:
            self._archive.zip()
            return key in self._archive.index

    def getsize(self, key: str) -> int | None:
        """The size of the value under ``key`` (from the zip's index, without reading the
        entry), or None if there is none.

        Parameters
        ----------
        key
            The key to look up.

        Returns
        -------
        int or None

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        StoreError
            If the store is closed.

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w") as store:
        ...         store.set("k", b"0123")
        ...         print(store.getsize("k"), store.getsize("gone"))
        4 None
        """
        validate_key(key)
        with self._archive.lock:
            self._archive.zip()
            info = self._archive.index.get(key)
            return None if info is None else info.file_size

    # -- writes ---------------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like object) under ``key``: a new entry.

        Setting an existing key appends a new entry that supersedes the old one: reads and
        listings see the newest value at once, and :meth:`close` leaves the old entry out of
        the central directory (its bytes stay in the file).

        Parameters
        ----------
        key
            The key to write.
        value
            The new value.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If ``value`` is not bytes-like.
        StoreError
            If the store is closed or the entry cannot be written (the archive is then as
            it was).

        Examples
        --------
        >>> import os, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ZipStore(os.path.join(tmp, "data.zip"), mode="w") as store:
        ...         store.set("k", b"old"); store.set("k", b"new")
        ...         print(store.get("k"), list(store.list()))
        b'new' ['k']
        """
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        view = as_byte_view(value, key)
        with self._archive.lock:
            self._archive.write(key, view)

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        by_key = self._group_partial_writes(key_start_values)
        archive = self._archive
        with archive.lock:  # the read-modify-write of each value is atomic
            archive.zip()
            for key, patches in by_key.items():
                info = archive.index.get(key)
                buf = bytearray(b"" if info is None else archive.read(key, info))
                apply_patches(buf, patches)
                archive.write(key, memoryview(buf))

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        with self._archive.lock:
            self._archive.zip()
            self._archive.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        archive = self._archive
        with archive.lock:
            archive.zip()
            for key in [k for k in archive.index if k.startswith(prefix)]:
                archive.erase(key)

    # -- listings -------------------------------------------------------------------------------

    def _keys(self) -> builtins.list[str]:
        """A snapshot of the keys, so that callers may set or erase while iterating."""
        with self._archive.lock:
            self._archive.zip()
            return builtins.list(self._archive.index)

    def list(self) -> Iterator[str]:
        return iter(self._keys())

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return iter([key for key in self._keys() if key.startswith(prefix)])
