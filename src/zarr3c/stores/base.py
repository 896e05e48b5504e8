"""The abstract store interface: the :class:`Store` base class.

Follows the v3 core specification's "Abstract store interface"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html): a store maps string keys
to byte values and offers three capability sets, with the specification's operation names:

- readable: ``get(key)``, ``get_partial_values([(key, (start, length)), ...])``
- writeable: ``set``, ``set_partial_values([(key, start, value), ...])``, ``erase``,
  ``erase_values``, ``erase_prefix``
- listable: ``list()``, ``list_prefix(prefix)``, ``list_dir(prefix)`` (-> keys, prefixes),
  and ``list_few(prefix, limit)`` (one bounded listing request, where a store offers it)

plus ``exists(key)``, ``getsize(key)``, the batched ``get_many(keys)`` and ``set_many(items)``,
and the capability flags ``supports_writes``, ``supports_partial_writes``,
``supports_listing`` and ``concurrent_batches``.  As the
specification recommends, the partial and batched operations have fallbacks here, written in
terms of the primitives, so that a new store needs only ``get``, ``set``, ``erase`` and
``list``.  The read-into hooks that the array layer and the sharding codec call on every store
come from :class:`~zarr3c.stores.read_into.ReadIntoHooks` (their contract is in that module).

What a key and a prefix are is in :mod:`zarr3c.stores.keys`; byte ranges, and the helpers
that group and scatter batches of them, are in :mod:`zarr3c.stores.byte_ranges`.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any, ClassVar, Self

from zarr3c.errors import InvalidKeyError, ReadOnlyError
from zarr3c.stores.byte_ranges import (
    ByteRange,
    BytesLike,
    apply_patches,
    as_byte_view,
    as_int,
    group_byte_ranges,
    resolve_byte_range,
    scatter_byte_ranges,
)
from zarr3c.stores.keys import validate_key, validate_prefix
from zarr3c.stores.read_into import ReadIntoHooks

__all__ = ["ByteRange", "BytesLike", "Store"]


class Store(ReadIntoHooks, ABC):
    """A key/value store holding a Zarr hierarchy (the v3 core specification's "Abstract
    store interface").

    Subclasses implement :meth:`get`, :meth:`set`, :meth:`erase` and :meth:`list`; every
    other operation has a default here written in terms of those, which a subclass
    overrides where it can do better.  Public methods validate their keys and prefixes
    (:func:`~zarr3c.stores.validate_key`, :func:`~zarr3c.stores.validate_prefix`) and
    refuse writes on a read-only store with :class:`~zarr3c.errors.ReadOnlyError`.

    Parameters
    ----------
    read_only
        Refuse every write (``set``, ``set_partial_values``, ``erase*``).

    Notes
    -----
    Stores are thread-safe: the array layer reads and writes chunks from a thread pool.
    Stores are used as context managers; :meth:`close` releases any resource the store
    holds (file handles, connections).

    Examples
    --------
    >>> from zarr3c.stores import MemoryStore
    >>> with MemoryStore() as store:
    ...     store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    ...     store.list_dir("")
    (['zarr.json'], [])
    """

    #: The store can hold new values (``set``, ``erase``, ...) when not read-only.
    supports_writes: ClassVar[bool] = True
    #: ``set_partial_values`` is native rather than a read-modify-write of whole values.
    supports_partial_writes: ClassVar[bool] = False
    #: ``list``, ``list_prefix`` and ``list_dir`` are available.
    supports_listing: ClassVar[bool] = True

    _read_only: bool

    def __init__(self, *, read_only: bool = False) -> None:
        self._read_only = bool(read_only)

    # -- flags and lifecycle --------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        """Whether the store refuses writes.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().read_only, MemoryStore(read_only=True).read_only
        (False, True)
        """
        return self._read_only

    @property
    def concurrent_batches(self) -> bool:
        """Whether the batched operations (:meth:`get_many`, :meth:`get_partial_values`,
        :meth:`set_many`) keep several requests in flight at once (an object store, where
        each request is a round trip).  Callers then batch what they would otherwise ask
        one key at a time: a write of an array hands :meth:`set_many` the encoded chunks of a
        batch (rather than setting them one by one from its thread pool), and creating a
        node asks whether the keys of a Zarr v2 hierarchy exist with one batch.  False here:
        the defaults go one key after another.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().concurrent_batches
        False
        """
        return False

    def with_read_only(self, read_only: bool = False) -> Self:
        """An equivalent store over the same data with the given ``read_only`` flag.

        The default shallow-copies the instance, which suits stores whose state is shared
        references (a dict, a root path); stores with per-instance resources override it.

        Parameters
        ----------
        read_only
            The new store's flag.

        Returns
        -------
        Store
            A store of the same type over the same data.

        Raises
        ------
        ReadOnlyError
            Not by this default: a store that can never be written refuses
            ``read_only=False`` (a ZipStore opened with mode ``"r"``).

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> ro = store.with_read_only(True)
        >>> store.set("k", b"v")
        >>> ro.read_only, ro.get("k")
        (True, b'v')
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._read_only = bool(read_only)
        return new

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the store's resources; the default holds none, so does nothing.

        Raises
        ------
        StoreError
            Not by this default: a store whose resources cannot be released cleanly (a
            ZipStore whose central directory cannot be written).

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().close()
        """

    @property
    def lock_id(self) -> Hashable:
        """Identifies the data behind the store, so that writers through different store
        objects over the same data share the per-chunk locks; default: this object.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> data = {}
        >>> MemoryStore(data).lock_id == MemoryStore(data).lock_id
        True
        """
        return ("store", id(self))

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock on ``key`` shared with other processes, held (inside the in-process lock of
        :func:`zarr3c.concurrency.chunk_lock`) across each read-modify-write of the key.

        The default does nothing: stores without cross-process locking rely on the
        in-process lock alone.  ``LocalStore(root, process_locks=True)`` overrides it.

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
        ReadOnlyError
            Not by this default: a store that locks across processes refuses to lock a key
            of a read-only store.
        StoreError
            Not by this default: the cross-process lock cannot be taken.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> with store.key_lock("a/c/0"):
        ...     store.set("a/c/0", b"new")
        """
        return nullcontext()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _check_writable(self, what: str) -> None:
        """Raise ReadOnlyError, naming ``what`` was to be written, on a read-only store."""
        if self._read_only:
            raise ReadOnlyError(f"cannot write {what}: {self!r} is read-only")

    # -- the primitives -------------------------------------------------------------------------

    @abstractmethod
    def get(self, key: str) -> BytesLike | None:
        """The value stored under ``key``, or None if there is none.

        Parameters
        ----------
        key
            The key to read.

        Returns
        -------
        bytes, bytearray, memoryview or None
            The value (owned by the caller; stores never hand out memory they change later),
            or None when the key is missing.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        StoreError
            If the value exists but cannot be read; the message names the key.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("zarr.json", b"{}")
        >>> store.get("zarr.json"), store.get("missing")
        (b'{}', None)
        """

    @abstractmethod
    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like object; it is copied) under ``key``.

        Parameters
        ----------
        key
            The key to write.
        value
            The new value: ``bytes``, ``bytearray``, a numpy array, ... (its bytes).

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If ``value`` is not bytes-like.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("a/c/0", np.arange(2, dtype="<u2"))
        >>> store.get("a/c/0")
        b'\\x00\\x00\\x01\\x00'
        """

    def set_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store each ``(key, value)`` pair, as :meth:`set` would, one after another.

        A batched :meth:`set` that stores able to keep several writes in flight override
        (and then answer :attr:`concurrent_batches` True).  The writes are not atomic together:
        when one fails, others of the batch may have been stored, and the error names the
        key that failed.  A key given twice is stored with its last value.

        Parameters
        ----------
        items
            ``(key, value)`` pairs; values are bytes-like, as :meth:`set` takes them.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before anything is written).
        ReadOnlyError
            If the store is read-only (checked before anything is written).
        TypeError
            If a value is not bytes-like (checked before anything is written).
        StoreError
            If a value cannot be written; the message names its key.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set_many([("a/c/0", b"0"), ("a/c/1", b"1")])
        >>> sorted(store.list())
        ['a/c/0', 'a/c/1']
        """
        batch = self._validate_set_many(items)
        for key, value in batch.items():
            self.set(key, value)

    def _validate_set_many(self, items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        """``items`` as a dict (the last value of a repeated key wins), the keys and values
        checked and writes refused on a read-only store before any is written."""
        batch: dict[str, Any] = {}
        for item in items:
            try:
                key, value = item
            except (TypeError, ValueError):
                raise InvalidKeyError(
                    f"invalid write {item!r}: expected a (key, value) pair"
                ) from None
            as_byte_view(value, validate_key(key))  # (TypeError naming the key)
            batch[key] = value
        if batch:
            self._check_writable(f"store key {next(iter(batch))!r}")
        return batch

    def chunk_write_files(self, prefix: str, names: Sequence[str]
                          ) -> builtins.list[bytes] | None:
        """The files the native chunk pipeline (``zarr3c._kernels.writes``) may write the
        values of keys ``prefix + name`` to itself, as :meth:`set` would (a temporary file
        renamed over each, directories created), or None where writes must go through
        :meth:`set` (the default).

        Parameters
        ----------
        prefix
            The keys' common prefix (an array's path and ``/``, or ``""``).
        names
            Chunk keys of the array's chunk key encoding (``c/0/1``, ``0.1``...).

        Returns
        -------
        list of bytes or None
            One file path per name.

        Raises
        ------
        InvalidKeyError
            A store with files raises it for a key that is not valid.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().chunk_write_files("a/", ["c/0"]) is None
        True
        """
        return None

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key`` and its value; erasing a missing key is not an error.

        Parameters
        ----------
        key
            The key to remove.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"k": b"v"})
        >>> store.erase("k"); store.erase("k")
        >>> store.exists("k")
        False
        """

    @abstractmethod
    def list(self) -> Iterator[str]:
        """Every key in the store, in no particular order.

        Returns
        -------
        iterator of str

        Raises
        ------
        StoreError
            If the store cannot be listed.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> sorted(MemoryStore({"b": b"", "a/c/0": b""}).list())
        ['a/c/0', 'b']
        """

    # -- reads built on get ---------------------------------------------------------------------

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        """Read byte ranges of values, one result per ``(key, (start, length))`` pair.

        Parameters
        ----------
        key_ranges
            ``(key, (start, length))`` pairs; a key may appear several times.  ``length``
            None reads to the end; ``(-n, None)`` reads the last ``n`` bytes; a range of
            None is the whole value.

        Returns
        -------
        list
            Per pair, the requested slice of the value (clipped at its end, as slicing is),
            or None if the key is missing.

        Raises
        ------
        InvalidKeyError
            If a key or range is malformed (checked before any read).
        StoreError
            If a value exists but cannot be read.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"k": b"0123456789"})
        >>> [None if v is None else bytes(v) for v in store.get_partial_values(
        ...     [("k", (2, 3)), ("k", (-2, None)), ("k", (8, 5)), ("gone", None)])]
        [b'234', b'89', b'89', None]
        """
        groups, n = group_byte_ranges(key_ranges, validate_key)
        results: list[list[BytesLike] | None] = []
        for key, (_key, _positions, ranges) in groups.items():
            value = self.get(key)  # once per key, whatever the number of ranges
            if value is None:
                results.append(None)
                continue
            view = memoryview(value)
            spans = [resolve_byte_range(start, length, view.nbytes) for start, length in ranges]
            results.append(
                [view[lo:hi] if (lo, hi) != (0, view.nbytes) else value for lo, hi in spans]
            )
        return scatter_byte_ranges(groups, results, n)

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        """The values of ``keys`` (None for missing ones), in order.

        A batched :meth:`get` that stores with concurrent or vectored reads override.

        Parameters
        ----------
        keys
            The keys to read.

        Returns
        -------
        list
            One value (or None) per key.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before any read).
        StoreError
            If a value exists but cannot be read.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore({"a": b"1", "b": b"2"}).get_many(["b", "gone", "a"])
        [b'2', None, b'1']
        """
        key_list = [validate_key(key) for key in keys]
        return [self.get(key) for key in key_list]

    def exists(self, key: str) -> bool:
        """Whether a value is stored under ``key``.

        Parameters
        ----------
        key
            The key to look up.

        Returns
        -------
        bool

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"a/zarr.json": b"{}"})
        >>> store.exists("a/zarr.json"), store.exists("a")
        (True, False)
        """
        return self.get(validate_key(key)) is not None

    def getsize(self, key: str) -> int | None:
        """The size in bytes of the value stored under ``key``, or None if there is none.

        The default reads the value; stores that know sizes without reading (a file's
        ``stat``, an object's metadata) override it.

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
            If the value (or its size) cannot be read.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"k": b"0123"})
        >>> store.getsize("k"), store.getsize("gone")
        (4, None)
        """
        value = self.get(validate_key(key))
        return None if value is None else memoryview(value).nbytes

    # -- writes built on set / erase ------------------------------------------------------------

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        """Write ``value`` into the value of ``key`` at byte offset ``start``, for each triple.

        A missing key starts as an empty value; writing past the end of a value extends it,
        zero-filling any gap.  Ranges for one key should not overlap (the specification
        forbids it); they are applied in order.  The default reads each key once, patches
        and writes it back with one :meth:`set`.

        Parameters
        ----------
        key_start_values
            ``(key, start, value)`` triples; ``value`` is bytes-like.

        Raises
        ------
        InvalidKeyError
            If a key is malformed or a start is not a non-negative integer.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If a value is not bytes-like.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"k": b"abc"})
        >>> store.set_partial_values([("k", 1, b"X"), ("new", 2, b"Z")])
        >>> store.get("k"), store.get("new")
        (b'aXc', b'\\x00\\x00Z')
        """
        by_key = self._group_partial_writes(key_start_values)
        for key, patches in by_key.items():
            current = self.get(key)
            buf = bytearray(b"" if current is None else current)
            apply_patches(buf, patches)
            self.set(key, buf)

    def _group_partial_writes(
        self, key_start_values: Iterable[tuple[str, int, Any]]
    ) -> dict[str, builtins.list[tuple[int, memoryview]]]:
        """Validate ``(key, start, value)`` triples and group them by key, in order; refuse
        them on a read-only store (for the ``set_partial_values`` of every store)."""
        by_key: dict[str, list[tuple[int, memoryview]]] = {}
        for item in key_start_values:
            try:
                key, start, value = item
            except (TypeError, ValueError):
                raise InvalidKeyError(
                    f"invalid partial write {item!r}: expected a (key, start, value) triple"
                ) from None
            validate_key(key)
            offset = as_int(start)
            if offset is None:
                raise InvalidKeyError(
                    f"invalid start {start!r} for store key {key!r}: must be an integer"
                )
            if offset < 0:
                raise InvalidKeyError(
                    f"invalid start {start!r} for store key {key!r}: must not be negative"
                )
            by_key.setdefault(key, []).append((offset, as_byte_view(value, key)))
        if by_key:
            self._check_writable(f"store key {next(iter(by_key))!r}")
        return by_key

    def erase_values(self, keys: Iterable[str]) -> None:
        """Erase every key in ``keys``; missing keys are ignored.

        Parameters
        ----------
        keys
            The keys to remove.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before anything is erased).
        ReadOnlyError
            If the store is read-only.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"a": b"", "b": b"", "c": b""})
        >>> store.erase_values(["a", "c", "gone"])
        >>> sorted(store.list())
        ['b']
        """
        key_list = [validate_key(key) for key in keys]
        if key_list:
            self._check_writable(f"store key {key_list[0]!r}")
        for key in key_list:
            self.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        """Erase every key that starts with ``prefix`` (``""``: every key in the store).

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

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"a/zarr.json": b"", "a/c/0": b"", "ab": b""})
        >>> store.erase_prefix("a/")
        >>> sorted(store.list())
        ['ab']
        """
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        for key in [k for k in self.list() if k.startswith(prefix)]:
            self.erase(key)

    # -- listings built on list -----------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key that starts with ``prefix`` (``""``: every key), in no particular order.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.

        Returns
        -------
        iterator of str

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        StoreError
            If the store cannot be listed.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore({"a/b": b"", "a/d/e": b"", "ab": b""})
        >>> sorted(store.list_prefix("a/"))
        ['a/b', 'a/d/e']
        """
        validate_prefix(prefix)
        return (key for key in self.list() if key.startswith(prefix))

    def list_few(self, prefix: str, limit: int) -> builtins.list[str] | None:
        """Every key that starts with ``prefix``, sorted, if there are fewer than ``limit``
        and the store can tell from one listing request; else None.

        Where each request is a round trip (an object store), one listing of a new node's
        place answers every question its creation asks (is a node there, or a Zarr v2
        hierarchy?) in one request.  None here: the store offers no bounded listing, and
        callers ask for keys one by one.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.
        limit
            Give up (None) at this many keys: one listing page (1,000 keys on S3) must
            hold them.

        Returns
        -------
        list of str or None

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        StoreError
            If the store cannot be listed.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore({"a/b": b""}).list_few("", 10) is None   # (no bounded listing)
        True
        """
        validate_prefix(prefix)
        return None

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """The keys and the prefixes directly below ``prefix``, both sorted.

        Keys are full keys without a ``/`` after ``prefix``; prefixes are full prefixes
        ending in ``/`` that at least one key starts with.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.

        Returns
        -------
        keys : list of str
        prefixes : list of str

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        StoreError
            If the store cannot be listed.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore(dict.fromkeys(["a/b", "a/c", "a/d/e", "a/f/g"], b""))
        >>> store.list_dir("a/")
        (['a/b', 'a/c'], ['a/d/', 'a/f/'])
        """
        validate_prefix(prefix)
        n = len(prefix)
        keys: set[str] = set()
        prefixes: set[str] = set()
        for key in self.list_prefix(prefix):
            slash = key.find("/", n)
            if slash < 0:
                keys.add(key)
            else:
                prefixes.add(key[: slash + 1])
        return sorted(keys), sorted(prefixes)
