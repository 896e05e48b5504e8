"""MemoryStore: a store over a Python dict (the v3 core specification's "Abstract store
interface", https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html).

Keys map to immutable ``bytes`` values in a plain ``dict``, which may be supplied (and then
shared) by the caller::

    >>> store = MemoryStore()
    >>> store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    >>> bytes(store.get_partial_values([("zarr.json", (1, 13))])[0])
    b'"zarr_format"'

Reads return the stored ``bytes`` object itself (whole values) or zero-copy ``memoryview``
slices of it (partial values); both are immutable, so nothing a caller does can change the
store.  ``set_partial_values`` is native (a patch under the lock).  Every mutation, and every
listing snapshot, holds a lock, so the store can be shared between threads.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from zarr3c.errors import InvalidTypeError, StoreError
from zarr3c.stores.base import Store
from zarr3c.stores.byte_ranges import (
    ByteRange,
    BytesLike,
    apply_patches,
    normalize_byte_range,
    resolve_byte_range,
)
from zarr3c.stores.keys import CHUNK_NAME, validate_key, validate_prefix

__all__ = ["MemoryStore"]


_BYTES_OR_NONE = {bytes, type(None)}

class MemoryStore(Store):
    """A thread-safe in-memory store.

    Parameters
    ----------
    store_dict
        The dict holding the data (``key -> bytes``); it is used, not copied, so several
        stores (and the caller) can share it.  A new empty dict by default.
    read_only
        Refuse every write.

    Notes
    -----
    Stores made by :meth:`with_read_only` share the dict and the lock.  Two MemoryStores
    are equal when they wrap the same dict object and have the same ``read_only`` flag.  A
    pickled MemoryStore carries a snapshot of its contents; the unpickled store owns a new
    dict.

    Raises
    ------
    TypeError
        If ``store_dict`` is neither a dict nor None.

    Examples
    --------
    >>> data = {}
    >>> store = MemoryStore(data)
    >>> store.set("zarr.json", b"{}")
    >>> data
    {'zarr.json': b'{}'}
    """

    supports_writes = True
    supports_partial_writes = True
    supports_listing = True

    def __init__(self, store_dict: dict[str, Any] | None = None, *, read_only: bool = False):
        super().__init__(read_only=read_only)
        if store_dict is None:
            store_dict = {}
        elif not isinstance(store_dict, dict):
            raise InvalidTypeError(
                f"MemoryStore needs a dict (or None), not {type(store_dict).__name__}"
            )
        self._store_dict: dict[str, Any] = store_dict
        self._lock = threading.RLock()

    # -- identity -------------------------------------------------------------------------------

    @property
    def lock_id(self) -> tuple[str, int]:
        return ("memory", id(self._store_dict))

    def __repr__(self) -> str:
        return f"MemoryStore(<dict at {id(self._store_dict):#x}>, read_only={self._read_only})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryStore):
            return NotImplemented
        return self._store_dict is other._store_dict and self._read_only == other._read_only

    def __hash__(self) -> int:
        return hash((MemoryStore, id(self._store_dict), self._read_only))

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            snapshot = dict(self._store_dict)
        return {"store_dict": snapshot, "read_only": self._read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._read_only = state["read_only"]
        self._store_dict = state["store_dict"]
        self._lock = threading.RLock()

    @property
    def store_dict(self) -> dict[str, Any]:
        """The dict holding the data (shared, not a copy).

        Examples
        --------
        >>> MemoryStore({"k": b"v"}).store_dict
        {'k': b'v'}
        """
        return self._store_dict

    # -- reads ----------------------------------------------------------------------------------

    def _value(self, key: str) -> bytes | None:
        """The value of a valid key as immutable ``bytes``, or None."""
        value = self._store_dict.get(key)
        if value is None or type(value) is bytes:
            return value
        # A caller-supplied dict may hold other buffers (bytearray, numpy arrays): hand out
        # an immutable copy so the caller of get cannot alias the stored object.
        try:
            return memoryview(value).tobytes()
        except TypeError:
            raise StoreError(
                f"store key {key!r} holds a {type(value).__name__}, not a bytes-like value"
            ) from None

    def get(self, key: str) -> bytes | None:
        return self._value(validate_key(key))

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        key_list = [validate_key(key) for key in keys]
        return [self._value(key) for key in key_list]

    def chunk_values(self, prefix: str, names: Sequence[str]
                     ) -> builtins.list[bytes | None] | None:
        # The prefix is checked once; the names are chunk keys, valid below any prefix.  A
        # subclass that reads otherwise (its own get) is read through get_many.
        cls = type(self)
        if (not names or cls.get is not MemoryStore.get
                or cls.get_many is not MemoryStore.get_many
                or not all(map(CHUNK_NAME.fullmatch, names))):
            return None
        validate_key(prefix + names[0])
        get = self._store_dict.get
        values = [get(prefix + name) for name in names]
        # (other buffers a caller put in the dict go through get, which copies them)
        return values if set(map(type, values)) <= _BYTES_OR_NONE else None

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        requests = [(validate_key(key), normalize_byte_range(key, rng)) for key, rng in key_ranges]
        out: builtins.list[BytesLike | None] = []
        for key, (start, length) in requests:
            value = self._value(key)
            if value is None:
                out.append(None)
                continue
            lo, hi = resolve_byte_range(start, length, len(value))
            out.append(value if (lo, hi) == (0, len(value)) else memoryview(value)[lo:hi])
        return out

    def exists(self, key: str) -> bool:
        return validate_key(key) in self._store_dict

    # -- writes ---------------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        if type(value) is not bytes:
            try:
                value = memoryview(value).tobytes()
            except TypeError:
                raise InvalidTypeError(
                    f"value for store key {key!r} must be bytes-like, not {type(value).__name__}"
                ) from None
        with self._lock:
            self._store_dict[key] = value

    def set_partial_values(self, key_start_values: Iterable[tuple[str, int, Any]]) -> None:
        """Write ``value`` into the value of ``key`` at byte offset ``start``, for each triple.

        Native: all the triples are applied under the store's lock, so no other writer's
        value of those keys comes between the read and the write.  Otherwise as
        :meth:`Store.set_partial_values <zarr3c.stores.Store.set_partial_values>`: a missing
        key starts empty, a gap past the end is zero-filled.

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
        >>> store = MemoryStore({"k": b"abc"})
        >>> store.set_partial_values([("k", 1, b"XY"), ("k", 4, b"Z")])
        >>> store.get("k")
        b'aXY\\x00Z'
        """
        by_key = self._group_partial_writes(key_start_values)
        with self._lock:
            for key, patches in by_key.items():
                current = self._value(key)
                buf = bytearray(b"" if current is None else current)
                apply_patches(buf, patches)
                self._store_dict[key] = bytes(buf)

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        with self._lock:
            self._store_dict.pop(key, None)

    def erase_values(self, keys: Iterable[str]) -> None:
        key_list = [validate_key(key) for key in keys]
        if not key_list:
            return
        self._check_writable(f"store key {key_list[0]!r}")
        with self._lock:
            for key in key_list:
                self._store_dict.pop(key, None)

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        with self._lock:
            if prefix == "":
                self._store_dict.clear()
                return
            for key in [k for k in self._store_dict if k.startswith(prefix)]:
                del self._store_dict[key]

    # -- listings -------------------------------------------------------------------------------

    def _snapshot(self) -> builtins.list[str]:
        """A snapshot of the keys, so that callers may erase or set while iterating."""
        with self._lock:
            return builtins.list(self._store_dict)

    def list(self) -> Iterator[str]:
        return iter(self._snapshot())

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return iter([key for key in self._snapshot() if key.startswith(prefix)])
