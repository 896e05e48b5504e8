"""The read-into hooks: how the array layer reads stored bytes without copying them twice.

The store interface of the v3 core specification ("Abstract store interface",
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html) returns fresh values
(``get``, ``get_partial_values``).  Reading a chunk only to decode it or copy elements out of
it at once is faster when the bytes land straight in memory the reader owns (a thread's
scratch buffer, the output array), in as few calls as possible.  :class:`ReadIntoHooks`, a
base class of :class:`~zarr3c.stores.Store`, holds those operations.  Every store has them:
the defaults here are written with ``get`` / ``get_partial_values`` / ``set`` (or answer
"cannot", see below), and a store that can do better overrides them
(:class:`~zarr3c.stores.LocalStore` does, with ``preadv`` and the ``zarr3c._kernels.fileio``
one-call reads).

The contract
------------
Buffers are writable, C-contiguous byte buffers (``bytearray``, ``uint8`` numpy arrays,
memoryviews of them); offsets and sizes are bytes.  A hook answers in one of three ways:

- **a count or a size** (an ``int >= 0``): done; what the number means is per hook below.
- **None**: for the hooks that may decline (:meth:`~ReadIntoHooks.read_shard_parts`,
  :meth:`~ReadIntoHooks.read_box_into`, :meth:`~ReadIntoHooks.read_elements_into`): "this
  store cannot, or the value is not as expected": nothing usable was read and the caller
  reads the ordinary way (``get`` / ``get_partial_values``), which reports any problem.  For
  the others, None means the key is missing.
- **-1**: (``read_shard_parts``, ``read_box_into``) the key is missing.

The hooks, and who calls them:

- :meth:`~ReadIntoHooks.read_ranges_into`: ``(start, stop, at)`` ranges of values into one
  buffer; per request the bytes copied, or None for a missing key.  Raw chunk reads of the
  array layer, and the sharding codec's reads of inner chunks.
- :meth:`~ReadIntoHooks.read_tail_into`: the last ``len(out)`` bytes of a value; the bytes
  copied, or None.  The sharding codec, for an index at the end of a shard.
- :meth:`~ReadIntoHooks.read_value_into`: a whole value into a buffer; the value's size, or
  None.  Array reads of whole chunks decoded (or copied out) at once.
- :meth:`~ReadIntoHooks.read_shard_parts`: a shard's index and parts of its inner chunks in
  one request; the shard's size, -1 or None.  Small reads of sharded arrays.
- :meth:`~ReadIntoHooks.read_box_into`: a box of a raw, C-ordered chunk into the output in
  one request; the chunk's size, -1 or None.  Small reads of uncompressed arrays.
- :meth:`~ReadIntoHooks.read_elements_into`: elements of many whole raw chunks, a batch at a
  time; the batch members not read, or None.  Point reads (``vindex``).
- :meth:`~ReadIntoHooks.chunk_files`: the files of chunk keys, for the native chunk pipeline
  to open itself; None where values are not files.  Array reads executed natively.
- :meth:`~ReadIntoHooks.chunk_values`: the values of chunk keys looked up in bulk, where
  the store holds them in memory; None elsewhere.  Array reads executed natively.
- :meth:`~ReadIntoHooks.get_at_most`, :meth:`~ReadIntoHooks.get_many_at_most`: whole values
  that must not be larger than a limit (the most bytes any valid encoding of a chunk can
  take), refused with :class:`~zarr3c.errors.OversizedValueError` from their size before they
  are read where the store can tell it (a file's size, a zip entry's, a bounded request):
  a chunk file that does not belong costs no memory.  The defaults read the value and then
  check it.  Every whole-chunk read of the array layer and the sharding codec.
- :meth:`~ReadIntoHooks.set_parts`: the write-side counterpart, a value given as parts that
  are never joined in memory.  Sharded writes.

Two flags tell callers which paths are worth taking (class attributes; False here):

- :attr:`~ReadIntoHooks.reads_into_memory`: ``read_value_into`` and ``read_ranges_into``
  read straight into the caller's memory.  Where False, the array layer and the sharding
  codec call ``get`` instead (the default hooks would only copy what ``get`` returns).
- :attr:`~ReadIntoHooks.reads_elements`: ``read_elements_into`` reads batches.  Where
  False, point reads do not group their points for it.

A store opts in by overriding the hooks it can do better and setting the flags that go
with them; the hooks it leaves alone keep these defaults, which are correct for any store.
The shapes of ``read_ranges_into``'s requests are named (:data:`RangeInto`,
:data:`RangesInto`); they are plain tuples, which the callers build on hot paths.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from zarr3c.errors import InvalidKeyError, OversizedValueError
from zarr3c.stores.byte_ranges import ByteRange, BytesLike, as_byte_view

__all__ = ["RangeInto", "RangesInto", "ReadIntoHooks", "check_size", "destination_view"]

#: ``(start, stop, at)``: bytes ``[start, stop)`` of a value go to ``out[at:at + stop - start]``.
RangeInto: TypeAlias = tuple[int, int, int]

#: One request of :meth:`ReadIntoHooks.read_ranges_into`: a key and its ranges.
RangesInto: TypeAlias = tuple[str, Sequence[RangeInto]]


def destination_view(requests: Sequence[RangesInto], out: Any) -> memoryview:
    """``out`` as a byte view, once every range of ``requests`` is checked to fit it.

    Parameters
    ----------
    requests
        The requests of a :meth:`ReadIntoHooks.read_ranges_into` call.
    out
        Its destination buffer.

    Returns
    -------
    memoryview
        ``out`` cast to bytes.

    Raises
    ------
    InvalidKeyError
        If a range is not ``0 <= start <= stop`` or does not fit in ``out`` from ``at``.

    Examples
    --------
    >>> destination_view([("k", [(0, 4, 4)])], bytearray(8)).nbytes
    8
    """
    view = memoryview(out).cast("B")
    for key, ranges in requests:
        for start, stop, at in ranges:
            if not (0 <= start <= stop and 0 <= at and at + (stop - start) <= view.nbytes):
                raise InvalidKeyError(
                    f"invalid byte range [{start}, {stop}) of store key {key!r} into offset "
                    f"{at} of a buffer of {view.nbytes} bytes"
                )
    return view


def check_size(key: str, value: BytesLike | None, limit: int, *, exact: bool = True
               ) -> BytesLike | None:
    """``value``, unless it has more than ``limit`` bytes: then OversizedValueError naming
    ``key`` (``exact`` False: ``value`` is only the start of a longer value)."""
    if value is not None:
        size = len(value) if isinstance(value, (bytes, bytearray)) else as_byte_view(
            value, key).nbytes
        if size > limit:
            raise OversizedValueError(key, size, limit, exact=exact)
    return value


class ReadIntoHooks:
    """The read-into hooks of every store, with their defaults (see the module docstring).

    :class:`~zarr3c.stores.Store` inherits this class; the defaults are written with the
    store's own ``get``, ``get_partial_values``, ``exists`` and ``set``.
    """

    #: :meth:`read_value_into` and :meth:`read_ranges_into` read straight into the
    #: caller's memory: a value read only to be decoded at once is then better read into
    #: scratch memory than returned as fresh ``bytes`` by ``get``.
    reads_into_memory: ClassVar[bool] = False
    #: :meth:`read_elements_into` reads batches; the default answers None.
    reads_elements: ClassVar[bool] = False
    #: Every read is a request with a round trip of its own (object stores, HTTP), so one
    #: larger read beats two small ones: a small shard is then fetched whole for any read of
    #: it (:data:`zarr3c.array.read.native.SMALL_SHARD_BYTES`).
    reads_by_request: ClassVar[bool] = False

    if TYPE_CHECKING:  # what the defaults use, defined by Store

        def get(self, key: str) -> BytesLike | None: ...

        def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]: ...

        def set(self, key: str, value: Any) -> None: ...

        def exists(self, key: str) -> bool: ...

        def get_partial_values(
            self, key_ranges: Iterable[tuple[str, ByteRange | None]]
        ) -> builtins.list[BytesLike | None]: ...

    def read_ranges_into(
        self, requests: Sequence[RangesInto], out: Any
    ) -> builtins.list[int | None]:
        """Copy byte ranges of values straight into one writable buffer.

        Parameters
        ----------
        requests
            ``(key, [(start, stop, at), ...])`` pairs: bytes ``[start, stop)`` of the key's
            value go to ``out[at:at + stop - start]`` (fewer where the value ends first).
        out
            The destination, a writable byte buffer.

        Returns
        -------
        list of int or None
            Per request, the number of bytes copied, or None when the key is missing.

        Raises
        ------
        InvalidKeyError
            If a key or range is malformed, or a range does not fit in ``out``.
        StoreError
            If a value exists but cannot be read.

        Notes
        -----
        The default is one :meth:`get_partial_values` call; stores that can read into
        memory override it (and set :attr:`reads_into_memory`).

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("k", b"0123456789")
        >>> out = bytearray(6)
        >>> store.read_ranges_into([("k", [(0, 2, 0), (8, 12, 2)]), ("gone", [(0, 1, 5)])],
        ...                        out)
        [4, None]
        >>> bytes(out)
        b'0189\\x00\\x00'
        """
        view = destination_view(requests, out)
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
        """Copy the last ``len(out)`` bytes of the value at ``key`` into a writable buffer.

        All of a shorter value goes into the start of ``out``.  The sharding codec reads a
        shard index stored at the end of a shard so.

        Parameters
        ----------
        key
            The key of the value.
        out
            The destination, a writable byte buffer.

        Returns
        -------
        int or None
            The number of bytes copied, or None when the key is missing.

        Raises
        ------
        InvalidKeyError
            If the key is malformed.
        StoreError
            If the value exists but cannot be read.

        Notes
        -----
        The default is one :meth:`get_partial_values` call; LocalStore reads the file in
        one call.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("k", b"0123456789")
        >>> out = bytearray(4)
        >>> store.read_tail_into("k", out), bytes(out)
        (4, b'6789')
        >>> store.read_tail_into("gone", out) is None
        True
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
        """Read a shard's index and, through its entries, bytes of some of its inner chunks,
        in one request.

        Parameters
        ----------
        key
            The shard's key.
        index, at_end, slots, los, his, expect, staging, ats, lens
            As ``zarr3c._kernels.fileio.read_shard_parts`` takes them: ``index`` receives
            the index bytes (stored at the end of the shard when ``at_end``); bytes
            ``[los[i], his[i])`` of inner chunk ``slots[i]`` go to ``staging``, one after
            another, at ``ats[i]`` for ``lens[i]`` bytes (both -1 for a chunk not stored);
            ``expect >= 0`` requires every stored inner chunk to hold that many bytes.

        Returns
        -------
        int or None
            The shard's size; -1 when the key is missing; None when this store cannot (the
            default) or anything is not as expected: the caller then reads the index and
            the parts as two requests, which report it.

        Raises
        ------
        InvalidKeyError
            Not by this default: ``key`` is malformed (LocalStore).
        ValueError
            Not by this default: arguments that do not fit each other (LocalStore's kernel
            checks them before any read).

        Notes
        -----
        The caller checks the index read (checksum, entries) before using the parts.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().read_shard_parts("s", None, True, None, None, None, -1, None,
        ...                                None, None) is None
        True
        """
        return None

    def read_box_into(self, key: str, nbytes: int, strides: Any, first: Sequence[int],
                      counts: Sequence[int], itemsize: int, span: int, dst: Any,
                      dst_offset: int = 0, dst_strides: Sequence[int] | None = None
                      ) -> int | None:
        """Read a box of a raw, C-ordered chunk straight into ``dst`` in one request.

        Parameters
        ----------
        key
            The chunk's key.
        nbytes, strides, first, counts, itemsize
            The chunk's size in bytes (only a value of exactly that size is read), its
            byte strides (an ``int64`` array), and the box: ``counts`` elements of
            ``itemsize`` bytes from ``first``, per dimension.
        span
            The box's byte span in the chunk.
        dst, dst_offset, dst_strides
            Where the box goes: ``dst`` (a writable byte buffer) from byte ``dst_offset``,
            at byte ``dst_strides`` (None: C order of ``counts``).

        Returns
        -------
        int or None
            ``nbytes`` when the box is in ``dst``; -1 when the key is missing; None when
            this store cannot (the default) or the value is not as expected: the caller
            then reads it the ordinary way, which reports it.

        Raises
        ------
        InvalidKeyError
            Not by this default: ``key`` is malformed (LocalStore; arguments that do not
            describe a box in ``dst`` answer None).

        Examples
        --------
        >>> import os, tempfile, numpy as np
        >>> from zarr3c.stores import LocalStore
        >>> chunk = np.arange(16, dtype="<u2").reshape(4, 4)
        >>> dst = np.zeros((2, 2), dtype="<u2")
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = LocalStore(tmp)
        ...     store.set("c/0/0", chunk.tobytes())
        ...     got = store.read_box_into("c/0/0", 32, np.array([8, 2]), [1, 1], [2, 2], 2,
        ...                               12, dst.reshape(-1).view(np.uint8))
        >>> got, dst.tolist()
        (32, [[5, 6], [9, 10]])
        """
        return None

    def read_value_into(self, key: str, out: Any) -> int | None:
        """Copy the value at ``key`` into the start of a writable buffer, as much as fits.

        Parameters
        ----------
        key
            The key of the value.
        out
            The destination, a writable byte buffer.

        Returns
        -------
        int or None
            The value's size (more than ``out`` holds when it did not fit; less than that
            if the value ended while read), or None when the key is missing.

        Raises
        ------
        InvalidKeyError
            If the key is malformed.
        StoreError
            If the value exists but cannot be read.

        Notes
        -----
        The default copies from :meth:`get`; stores that can read into memory override it
        (and set :attr:`reads_into_memory`).

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("k", b"0123456789")
        >>> out = bytearray(4)
        >>> store.read_value_into("k", out), bytes(out)
        (10, b'0123')
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
        """Copy elements out of whole values, a batch at a time.

        For each ``k``: read the value at ``keys[k]`` into ``scratch`` when it is exactly
        ``sizes[k]`` bytes, then copy elements ``run_starts[k] <= i < run_stops[k]`` of it
        as ``copy_elements(scratch, src_offsets, dst, dst_offsets, itemsize)`` would.

        Parameters
        ----------
        keys
            The values' keys.
        sizes
            Their expected sizes (an ``int64`` array).
        scratch
            A writable byte buffer holding the largest of them.
        run_starts, run_stops, src_offsets, dst_offsets
            ``int64`` arrays: the run of elements of each value, and per element its byte
            offset in the value and in ``dst``.
        dst
            The destination, a writable byte buffer.
        itemsize
            The elements' size in bytes.

        Returns
        -------
        list of int or None
            The ``k`` not read (missing, another size, unreadable), none of whose elements
            were copied, for the caller to read the ordinary way, which reports why; None
            when this store has no such batch read (the default, and wherever
            :attr:`reads_elements` is False): nothing was read.

        Raises
        ------
        InvalidKeyError
            Not by this default: a key is malformed (LocalStore).
        ValueError
            Not by this default: arguments that do not fit each other (LocalStore's kernel
            checks them before any read).

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().read_elements_into(["c/0"], None, None, None, None, None, None,
        ...                                  None, 1) is None
        True
        """
        return None

    def chunk_files(self, prefix: str, names: Sequence[str]) -> builtins.list[bytes] | None:
        """The files holding the values of keys ``prefix + name``, as the native chunk
        pipeline (``zarr3c._kernels.chunks``) opens them itself, or None where the values are
        not files (the default): the pipeline then fetches values with ``get_many``.

        Parameters
        ----------
        prefix
            The keys' common prefix (an array's path and ``/``, or ``""``).
        names
            Chunk keys of the array's chunk key encoding (``c/0/1``, ``0.1``...).

        Returns
        -------
        list of bytes or None
            One file path per name (a file that does not exist is a missing key).

        Raises
        ------
        InvalidKeyError
            A store with files raises it for a key that is not valid.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> MemoryStore().chunk_files("a/", ["c/0"]) is None
        True
        """
        return None

    def chunk_values(self, prefix: str, names: Sequence[str]
                     ) -> builtins.list[bytes | None] | None:
        """The values of keys ``prefix + name`` as ``bytes`` (None where missing), looked up
        in bulk where the store holds them in memory; None (the default) where it does not:
        the native chunk pipeline then fetches them with ``get_many``, in batches.

        Parameters
        ----------
        prefix
            The keys' common prefix (an array's path and ``/``, or ``""``).
        names
            Chunk keys of the array's chunk key encoding.

        Returns
        -------
        list or None
            One value (or None) per name.

        Raises
        ------
        InvalidKeyError
            A store holding values raises it for a key that is not valid.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("a/c/0", b"x")
        >>> store.chunk_values("a/", ["c/0", "c/1"])
        [b'x', None]
        """
        return None

    def get_at_most(self, key: str, limit: int) -> BytesLike | None:
        """The value of ``key`` (None if missing), refused if larger than ``limit`` bytes.

        A store that can tell a value's size before reading it (a file's, a zip entry's,
        the length of a request for ``limit + 1`` bytes) overrides this so that an
        oversized value is never read; the default reads it with :meth:`get`, then checks.

        Parameters
        ----------
        key
            The key to read.
        limit
            The most bytes the value may have.

        Returns
        -------
        bytes-like or None
            The value, or None where ``key`` is missing.

        Raises
        ------
        OversizedValueError
            The value has more than ``limit`` bytes (naming the key).
        InvalidKeyError
            If ``key`` is not a valid key.
        StoreError
            If the store cannot read it.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("c/0", b"0123456789")
        >>> store.get_at_most("c/0", 10), store.get_at_most("c/1", 10)
        (b'0123456789', None)
        >>> store.get_at_most("c/0", 4)
        Traceback (most recent call last):
        ...
        zarr3c.errors.OversizedValueError: chunk 'c/0': the stored value (10 bytes) is ...
        """
        return check_size(key, self.get(key), limit)

    def get_many_at_most(self, keys: Iterable[str], limit: int
                         ) -> builtins.list[BytesLike | None]:
        """:meth:`get_at_most` of many keys, fetched together as :meth:`get_many` does.

        Parameters
        ----------
        keys
            The keys to read.
        limit
            The most bytes each value may have.

        Returns
        -------
        list
            One value (or None where missing) per key.

        Raises
        ------
        OversizedValueError
            A value has more than ``limit`` bytes (naming its key).
        InvalidKeyError
            If a key is not valid.
        StoreError
            If the store cannot read them.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set("c/0", b"0123")
        >>> store.get_many_at_most(["c/0", "c/1"], 4)
        [b'0123', None]
        """
        key_list = builtins.list(keys)
        return [check_size(key, value, limit)
                for key, value in zip(key_list, self.get_many(key_list), strict=True)]

    def set_parts(self, key: str, parts: Sequence[Any]) -> None:
        """Store the concatenation of ``parts`` under ``key``, as :meth:`set` would store it
        joined.

        A sharded write hands over a shard as its encoded inner chunks and its index, so
        that a store able to write a file from several buffers (LocalStore) never joins
        them; the default joins them into one value and calls :meth:`set`.

        Parameters
        ----------
        key
            The key to write.
        parts
            Bytes-like objects, in order.

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        ReadOnlyError
            If the store is read-only.
        TypeError
            If a part is not bytes-like.

        Examples
        --------
        >>> from zarr3c.stores import MemoryStore
        >>> store = MemoryStore()
        >>> store.set_parts("s/0", [b"inner chunks", b"index"])
        >>> store.get("s/0")
        b'inner chunksindex'
        """
        views = [as_byte_view(part, key) for part in parts]
        self.set(key, views[0] if len(views) == 1 else b"".join(views))
