"""The abstract store interface: key validation and the :class:`Store` base class.

Follows seed 003 (core spec editor's draft, "Abstract store interface"): a store maps string
keys to byte values and offers three capability sets, with the spec's operation names:

- readable: ``get(key)``, ``get_partial_values([(key, (start, length)), ...])``
- writeable: ``set``, ``set_partial_values([(key, start, value), ...])``, ``erase``,
  ``erase_values``, ``erase_prefix``
- listable: ``list()``, ``list_prefix(prefix)``, ``list_dir(prefix)`` (-> keys, prefixes)

plus ``exists(key)``, ``getsize(key)``, the batched ``get_many(keys)`` and the capability flags
``supports_writes``, ``supports_partial_writes`` and ``supports_listing``.  As the spec
recommends, the partial and batched operations have fallbacks here, written in terms of the
primitives, so that a new store needs only ``get``, ``set``, ``erase`` and ``list``.

Keys are ``/``-separated paths such as ``"zarr.json"`` or ``"temp/c/0/1"``; prefixes are ``""``
(the root) or a key followed by ``/`` (``"temp/c/"``).  The spec's key alphabet is narrower than
what the ecosystem writes (zarr-python stores group names with spaces and non-ASCII letters),
so validation only refuses what is ambiguous or dangerous: empty keys and segments, ``.`` and
``..`` segments, a leading or trailing ``/``, backslashes and NUL.  With those rules no key can
name a location outside a directory store's root.

Byte ranges are ``(start, length)`` pairs: ``(10, 5)`` is ``value[10:15]``, ``(10, None)``
is ``value[10:]`` and ``(-16, None)`` is the last 16 bytes (a suffix request, how shard
indexes are read from the end of a shard).  A range past the end of a value returns the bytes
that exist, as slicing does; a missing key gives ``None``.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any, ClassVar, Self, TypeAlias, TypeVar

from zarr3c.errors import InvalidKeyError, InvalidTypeError, ReadOnlyError

__all__ = [
    "ByteRange",
    "BytesLike",
    "Store",
    "as_byte_view",
    "normalize_byte_range",
    "resolve_byte_range",
    "validate_key",
    "validate_prefix",
]

#: What stores return from reads: an immutable or fresh buffer owned by the caller.
BytesLike: TypeAlias = bytes | bytearray | memoryview

#: ``(start, length)``; ``length`` None reads to the end; a negative ``start`` with ``length``
#: None reads the last ``-start`` bytes.
ByteRange: TypeAlias = tuple[int, int | None]

_T = TypeVar("_T")


# -- keys --------------------------------------------------------------------------------------


def _key_problem(key: str) -> str | None:
    """The reason ``key`` is not a valid store key, or None if it is."""
    if not key:
        return "a key must not be empty"
    if "\x00" in key:
        return "a key must not contain NUL characters"
    if "\\" in key:
        return "a key must not contain backslashes (the separator is '/')"
    if key[0] == "/":
        return "a key must not start with '/'"
    if key[-1] == "/":
        return "a key must not end with '/'"
    if "//" in key:
        return "a key must not contain empty path segments ('//')"
    if "." in key:
        for segment in key.split("/"):
            if segment == "." or segment == "..":
                return f"a key must not contain {segment!r} path segments"
    return None


def validate_key(key: Any) -> str:
    """Check that ``key`` is a valid store key and return it.

    A key is a non-empty ``str`` of ``/``-separated segments, none of them empty, ``.`` or
    ``..``, without backslashes or NUL characters.  Any other character (spaces, non-ASCII
    letters) is allowed, as the Zarr ecosystem writes them.

    Parameters
    ----------
    key
        The candidate key, e.g. ``"group/array/c/0/1"``.

    Returns
    -------
    str
        ``key`` unchanged.

    Raises
    ------
    InvalidKeyError
        If ``key`` is not a string or breaks a rule; the message names the key and the rule.
    """
    if not isinstance(key, str):
        raise InvalidKeyError(
            f"invalid store key {key!r}: a key must be a str, not {type(key).__name__}"
        )
    problem = _key_problem(key)
    if problem is not None:
        raise InvalidKeyError(f"invalid store key {key!r}: {problem}")
    return key


def validate_prefix(prefix: Any) -> str:
    """Check that ``prefix`` is a valid store prefix and return it.

    A prefix is ``""`` (the root of the store) or a valid key followed by ``"/"``.

    Raises
    ------
    InvalidKeyError
        If ``prefix`` is not ``""`` and not a valid key plus ``"/"``; the message names it.
    """
    if not isinstance(prefix, str):
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must be a str, not {type(prefix).__name__}"
        )
    if prefix == "":
        return prefix
    if prefix[0] == "/":
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must not start with '/' (the root is '')"
        )
    if prefix[-1] != "/":
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must be '' or end with '/'"
        )
    problem = _key_problem(prefix[:-1])
    if problem is not None:
        raise InvalidKeyError(f"invalid store prefix {prefix!r}: {problem}")
    return prefix


# -- values and ranges -------------------------------------------------------------------------


def as_byte_view(value: Any, key: str) -> memoryview:
    """A flat, contiguous, unsigned-byte view of a bytes-like ``value`` (no copy if possible).

    Raises
    ------
    TypeError
        If ``value`` does not support the buffer protocol (a ``str``, an ``int``, ...); the
        message names ``key``.
    """
    try:
        view = memoryview(value)
    except TypeError:
        raise InvalidTypeError(
            f"value for store key {key!r} must be bytes-like, not {type(value).__name__}"
        ) from None
    if view.ndim == 1 and view.format == "B" and view.contiguous:
        return view
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B")


def _as_int(x: Any) -> int | None:
    """``x`` as a Python int (numpy integers too), or None if it is not an integer."""
    if isinstance(x, bool):
        return None
    if type(x) is int:
        return x
    try:
        return int(x.__index__())
    except (AttributeError, TypeError):
        return None


def normalize_byte_range(key: str, byte_range: Any) -> tuple[int, int | None]:
    """Check a ``(start, length)`` range and return it as a tuple of ``int`` / None.

    ``None`` stands for the whole value (``(0, None)``).  ``start`` may be negative only
    with ``length`` None (a suffix request); ``length`` must not be negative.

    Raises
    ------
    InvalidKeyError
        If the range is malformed; the message names the key and the range.
    """
    if byte_range is None:
        return (0, None)
    try:
        start, length = byte_range
    except (TypeError, ValueError):
        raise InvalidKeyError(
            f"invalid byte range {byte_range!r} for store key {key!r}: "
            "expected a (start, length) pair"
        ) from None
    start = _as_int(start)
    if start is None:
        raise InvalidKeyError(
            f"invalid byte range {byte_range!r} for store key {key!r}: start must be an integer"
        )
    if length is not None:
        length = _as_int(length)
        if length is None:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "length must be an integer or None"
            )
    if length is not None:
        if length < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "length must not be negative"
            )
        if start < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "a negative start (suffix request) needs length None"
            )
    return (start, length)


def resolve_byte_range(start: int, length: int | None, size: int) -> tuple[int, int]:
    """``[lo, hi)`` byte offsets of a normalized range in a value of ``size`` bytes.

    Clipped to the value, so ``value[lo:hi]`` is exactly what the range denotes.
    """
    if start < 0:
        return (max(size + start, 0), size)
    lo = min(start, size)
    hi = size if length is None else min(start + length, size)
    return (lo, hi)


# -- the store ---------------------------------------------------------------------------------


class Store(ABC):
    """A key/value store holding a Zarr hierarchy (seed 003, "Abstract store interface").

    Subclasses implement :meth:`get`, :meth:`set`, :meth:`erase` and :meth:`list`; every
    other operation has a default here written in terms of those, which a subclass
    overrides where it can do better.  Public methods validate their keys and prefixes
    (:func:`validate_key`, :func:`validate_prefix`) and refuse writes on a read-only store
    with :class:`~zarr3c.errors.ReadOnlyError`.

    Parameters
    ----------
    read_only
        Refuse every write (``set``, ``set_partial_values``, ``erase*``).

    Notes
    -----
    Stores are thread-safe: the array layer reads and writes chunks from a thread pool.
    Stores are used as context managers; :meth:`close` releases any resource the store
    holds (file handles, connections).
    """

    #: The store can hold new values (``set``, ``erase``, ...) when not read-only.
    supports_writes: ClassVar[bool] = True
    #: ``set_partial_values`` is native rather than a read-modify-write of whole values.
    supports_partial_writes: ClassVar[bool] = False
    #: ``list``, ``list_prefix`` and ``list_dir`` are available.
    supports_listing: ClassVar[bool] = True
    #: :meth:`read_value_into` reads straight into the caller's memory (internal): a
    #: value read only to be decoded at once is then better read into scratch memory than
    #: returned as fresh ``bytes`` by :meth:`get`.
    _reads_into_memory: ClassVar[bool] = False
    #: :meth:`read_elements_into` reads batches (internal); the default answers None.
    _reads_elements: ClassVar[bool] = False

    _read_only: bool

    def __init__(self, *, read_only: bool = False) -> None:
        self._read_only = bool(read_only)

    # -- flags and lifecycle --------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        """Whether the store refuses writes."""
        return self._read_only

    def with_read_only(self, read_only: bool = False) -> Self:
        """An equivalent store over the same data with the given ``read_only`` flag.

        The default shallow-copies the instance, which suits stores whose state is shared
        references (a dict, a root path); stores with per-instance resources override it.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._read_only = bool(read_only)
        return new

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the store's resources; the default holds none, so does nothing."""

    @property
    def lock_id(self) -> Hashable:
        """Identifies the data behind the store, so that writers through different store
        objects over the same data share the per-chunk locks; default: this object."""
        return ("store", id(self))

    def key_lock(self, key: str) -> AbstractContextManager[None]:
        """A lock on ``key`` shared with other processes, held (inside the in-process lock of
        :func:`zarr3c.concurrency.chunk_lock`) across each read-modify-write of the key.

        The default does nothing: stores without cross-process locking rely on the
        in-process lock alone.  ``LocalStore(root, process_locks=True)`` overrides it.
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
        if self._read_only:
            raise ReadOnlyError(f"cannot write {what}: {self!r} is read-only")

    # -- the primitives -------------------------------------------------------------------------

    @abstractmethod
    def get(self, key: str) -> BytesLike | None:
        """The value stored under ``key``, or None if there is none.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        StoreError
            If the value exists but cannot be read; the message names the key.
        """

    @abstractmethod
    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like object; it is copied) under ``key``.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If ``value`` is not bytes-like.
        """

    @abstractmethod
    def erase(self, key: str) -> None:
        """Remove ``key`` and its value; erasing a missing key is not an error.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.
        """

    @abstractmethod
    def list(self) -> Iterator[str]:
        """Every key in the store, in no particular order."""

    # -- reads built on get ---------------------------------------------------------------------

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        """Read byte ranges of values, one result per ``(key, (start, length))`` pair.

        A key may appear several times.  Each result is the requested slice of the value
        (clipped at its end, as slicing is) or None if the key is missing.  ``length`` None
        reads to the end; ``(-n, None)`` reads the last ``n`` bytes.

        Raises
        ------
        InvalidKeyError
            If a key or range is malformed (checked before any read).
        """
        groups, n = _group_byte_ranges(key_ranges, validate_key)
        results: list[list[BytesLike] | None] = []
        for key, (_, _, ranges) in groups.items():
            value = self.get(key)  # once per key, whatever the number of ranges
            if value is None:
                results.append(None)
                continue
            view = memoryview(value)
            spans = [resolve_byte_range(start, length, view.nbytes) for start, length in ranges]
            results.append(
                [view[lo:hi] if (lo, hi) != (0, view.nbytes) else value for lo, hi in spans]
            )
        return _scatter_byte_ranges(groups, results, n)

    def read_ranges_into(
        self, requests: Sequence[tuple[str, Sequence[tuple[int, int, int]]]], out: Any
    ) -> builtins.list[int | None]:
        """Copy byte ranges of values straight into one writable buffer (internal).

        For each ``(key, [(start, stop, at), ...])``, bytes ``[start, stop)`` of the key's value
        go to ``out[at:at + stop - start]`` (fewer where the value ends first).  Returns per
        request the number of bytes copied, or None when the key is missing.  The default
        is one :meth:`get_partial_values` call; stores that can read into memory override it.

        Raises
        ------
        InvalidKeyError
            If a key or range is malformed, or a range does not fit in ``out``.
        """
        view = _view_for(requests, out)
        flat = [(key, (start, stop - start)) for key, ranges in requests
                for start, stop, _ in ranges]
        values = self.get_partial_values(flat)
        result: builtins.list[int | None] = []
        i = 0
        for _key, ranges in requests:
            got: int | None = 0
            for _start, _stop, at in ranges:
                value = values[i]
                i += 1
                if value is None:
                    got = None
                elif got is not None:
                    n = memoryview(value).nbytes
                    view[at:at + n] = memoryview(value).cast("B")
                    got += n
            result.append(got)
        return result

    def read_tail_into(self, key: str, out: Any) -> int | None:
        """Copy the last ``len(out)`` bytes of the value at ``key`` into a writable buffer
        (all of a shorter value, into its start) (internal): a shard index at the end.
        Returns the number of bytes copied, or None when the key is missing.  The default
        is one :meth:`get_partial_values` call; LocalStore reads the file in one call.

        Raises
        ------
        InvalidKeyError
            If the key is malformed.
        """
        view = memoryview(out).cast("B")
        if not view.nbytes:
            return 0 if self.exists(key) else None
        (value,) = self.get_partial_values([(key, (-view.nbytes, None))])
        if value is None:
            return None
        src = memoryview(value).cast("B")
        view[:src.nbytes] = src
        return src.nbytes

    def read_shard_parts(self, key: str, index: Any, at_end: bool, slots: Any, los: Any,
                          his: Any, expect: int, staging: Any, ats: Any, lens: Any
                          ) -> int | None:
        """Read a shard's index and, through its entries, bytes of some of its inner chunks
        in one request (internal; LocalStore: ``fileio.read_shard_parts``, whose docstring
        gives the arguments).  Returns the value's size, -1 when the key is missing, or
        None when this store cannot (the default) or anything is not as expected: the
        caller then reads the index and the parts as two requests, which report it.  The
        caller checks the index read (checksum, entries) before using the parts."""
        return None

    def read_box_into(self, key: str, nbytes: int, strides: Any, first: Sequence[int],
                       counts: Sequence[int], itemsize: int, span: int, dst: Any,
                       dst_offset: int = 0, dst_strides: Sequence[int] | None = None
                       ) -> int | None:
        """Read a box of a raw, C-ordered chunk straight into ``dst`` in one request
        (internal; LocalStore: ``fileio.read_box_into``, whose docstring gives the
        arguments; ``span`` is the box's byte span in the chunk).  Returns ``nbytes`` when
        the box is in ``dst`` (from byte ``dst_offset``, at byte ``dst_strides``; None: C
        order), -1 when the key is missing, or None when this store cannot
        (the default) or the value is not as expected: the caller then reads it the
        ordinary way, which reports it."""
        return None

    def read_value_into(self, key: str, out: Any) -> int | None:
        """Copy the value at ``key`` into the start of a writable buffer, as much of it as
        fits (internal).  Returns the value's size (more than ``out`` holds when it did not
        fit; less than that if the value ended while read), or None when the key is
        missing.  The default copies from :meth:`get`; stores that can read into memory
        override it (and set :attr:`_reads_into_memory`).

        Raises
        ------
        InvalidKeyError
            If the key is malformed.
        """
        value = self.get(key)
        if value is None:
            return None
        src = memoryview(value).cast("B")
        view = memoryview(out).cast("B")
        n = min(src.nbytes, view.nbytes)
        view[:n] = src[:n]
        return src.nbytes

    def read_elements_into(
        self, keys: Sequence[str], sizes: Any, scratch: Any, run_starts: Any, run_stops: Any,
        src_offsets: Any, dst: Any, dst_offsets: Any, itemsize: int,
    ) -> builtins.list[int] | None:
        """Copy elements out of whole values, a batch at a time (internal): for each ``k``,
        read the value at ``keys[k]`` into ``scratch`` (a writable byte buffer) when it is
        exactly ``sizes[k]`` bytes, then copy elements ``run_starts[k] <= i < run_stops[k]``
        of it as ``copy_elements(scratch, src_offsets, dst, dst_offsets, itemsize)`` would.

        Returns the ``k`` not read (missing, another size, unreadable), none of whose
        elements were copied, for the caller to read the ordinary way, which reports why;
        or None when this store has no such batch read (the default, and where
        :attr:`_reads_elements` is False): nothing was read.
        """
        return None

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        """Store the concatenation of ``parts`` (bytes-like objects) under ``key``, as
        :meth:`set` would store it joined (internal).

        A sharded write hands over a shard as its encoded inner chunks and its index, so
        that a store able to write a file from several buffers (LocalStore) never joins
        them; the default joins them into one value and calls :meth:`set`.

        Raises
        ------
        As :meth:`set`.
        """
        views = [as_byte_view(part, key) for part in parts]
        self.set(key, views[0] if len(views) == 1 else b"".join(views))

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        """The values of ``keys`` (None for missing ones), in order.

        A batched :meth:`get` that stores with concurrent or vectored reads override.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before any read).
        """
        key_list = [validate_key(key) for key in keys]
        return [self.get(key) for key in key_list]

    def exists(self, key: str) -> bool:
        """Whether a value is stored under ``key``.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        """
        return self.get(validate_key(key)) is not None

    def getsize(self, key: str) -> int | None:
        """The size in bytes of the value stored under ``key``, or None if there is none.

        The default reads the value; stores that know sizes without reading (a file's
        ``stat``, an object's metadata) override it.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        """
        value = self.get(validate_key(key))
        return None if value is None else memoryview(value).nbytes

    # -- writes built on set / erase ------------------------------------------------------------

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        """Write ``value`` into the value of ``key`` at byte offset ``start``, for each triple.

        A missing key starts as an empty value; writing past the end of a value extends it,
        zero-filling any gap.  Ranges for one key should not overlap (the spec forbids it);
        they are applied in order.  The default reads each key once, patches and writes it
        back with one :meth:`set`.

        Raises
        ------
        InvalidKeyError
            If a key is malformed or a start is not a non-negative integer.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If a value is not bytes-like.
        """
        by_key = self._group_partial_writes(key_start_values)
        for key, patches in by_key.items():
            current = self.get(key)
            buf = bytearray(b"" if current is None else current)
            _apply_patches(buf, patches)
            self.set(key, buf)

    def _group_partial_writes(
        self, key_start_values: Iterable[tuple[str, int, Any]]
    ) -> dict[str, builtins.list[tuple[int, memoryview]]]:
        """Validate ``(key, start, value)`` triples and group them by key, in order."""
        by_key: dict[str, list[tuple[int, memoryview]]] = {}
        for item in key_start_values:
            try:
                key, start, value = item
            except (TypeError, ValueError):
                raise InvalidKeyError(
                    f"invalid partial write {item!r}: expected a (key, start, value) triple"
                ) from None
            validate_key(key)
            offset = _as_int(start)
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

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before anything is erased).
        ReadOnlyError
            If the store is read-only.
        """
        key_list = [validate_key(key) for key in keys]
        if key_list:
            self._check_writable(f"store key {key_list[0]!r}")
        for key in key_list:
            self.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        """Erase every key that starts with ``prefix`` (``""``: every key in the store).

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        ReadOnlyError
            If the store is read-only.
        """
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        for key in [k for k in self.list() if k.startswith(prefix)]:
            self.erase(key)

    # -- listings built on list -----------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key that starts with ``prefix`` (``""``: every key), in no particular order.

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        """
        validate_prefix(prefix)
        return (key for key in self.list() if key.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """The keys and the prefixes directly below ``prefix``, both sorted.

        Keys are full keys without a ``/`` after ``prefix``; prefixes are full prefixes
        ending in ``/`` that at least one key starts with.  With keys ``a/b``, ``a/c``,
        ``a/d/e`` and ``a/f/g``, ``list_dir("a/")`` is ``(["a/b", "a/c"], ["a/d/", "a/f/"])``.

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
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


#: What :func:`_group_byte_ranges` returns per key: what ``check`` returned for the key, the
#: positions of its requests in the batch and their normalized ranges.
_RangeGroup: TypeAlias = tuple[_T, builtins.list[int], builtins.list[tuple[int, int | None]]]


def _view_for(requests: Sequence[tuple[str, Sequence[tuple[int, int, int]]]], out: Any
              ) -> memoryview:
    """``out`` as a byte view, once every ``(start, stop, at)`` range of the
    :meth:`Store.read_ranges_into` ``requests`` is checked to fit it."""
    view = memoryview(out).cast("B")
    for key, ranges in requests:
        for start, stop, at in ranges:
            if not (0 <= start <= stop and 0 <= at and at + (stop - start) <= view.nbytes):
                raise InvalidKeyError(
                    f"invalid byte range [{start}, {stop}) of store key {key!r} into offset "
                    f"{at} of a buffer of {view.nbytes} bytes"
                )
    return view


def _group_byte_ranges(
    key_ranges: Iterable[tuple[str, ByteRange | None]],
    check: Callable[[str], _T],
) -> tuple[dict[str, _RangeGroup[_T]], int]:
    """Group a ``get_partial_values`` batch by key, so each value is opened once.

    Every key is checked once (``check(key)``, e.g. :func:`validate_key` or a store's
    key-to-path function, raising on a bad key) and every range normalized, all before any
    read.  Returns the groups, in order of first appearance, and the number of requests;
    :func:`_scatter_byte_ranges` puts the results back in request order.
    """
    groups: dict[str, _RangeGroup[_T]] = {}
    n = 0
    for key, rng in key_ranges:
        # type(...) is str: an unhashable non-key must reach check() and its error
        group = groups.get(key) if type(key) is str else None
        if group is None:
            checked = check(key)
            group = groups.setdefault(key, (checked, [], []))
        group[1].append(n)
        group[2].append(normalize_byte_range(key, rng))
        n += 1
    return groups, n


def _scatter_byte_ranges(
    groups: dict[str, _RangeGroup[Any]],
    results: Iterable[Sequence[BytesLike | None] | None],
    n: int,
) -> builtins.list[BytesLike | None]:
    """The results of grouped requests in request order: ``results`` holds, per group in
    order, one value per range of the group, or None when the key is missing."""
    out: builtins.list[BytesLike | None] = [None] * n
    for (_, indices, _), values in zip(groups.values(), results, strict=True):
        if values is not None:
            for i, value in zip(indices, values, strict=True):
                out[i] = value
    return out


def _apply_patches(buf: bytearray, patches: Sequence[tuple[int, memoryview]]) -> None:
    """Write each ``(start, data)`` into ``buf``, extending it (zero-filled) as needed."""
    for start, data in patches:
        end = start + data.nbytes
        if end > len(buf):
            buf.extend(bytes(end - len(buf)))
        buf[start:end] = data
