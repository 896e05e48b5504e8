"""Partial reads of a shard: its index, then only the inner chunks a selection touches.

:class:`ShardReads` holds the partial-read methods of
:class:`~zarr3c.codecs.sharding.ShardingCodec` (which inherits them): ``read_index``,
``byte_ranges``, ``read_inner_chunks_into`` and what is built on it (``read_inner_chunks``,
``read_region``), and ``project_region``/``project_runs``, which map a selection of the shard
onto its inner chunks.  A read goes: the index (one request, or the whole shard where only its
size can tell a truncated shard), then the stored inner chunks wanted are sorted by offset
and coalesced into requests (:func:`coalesce`: neighbours at most ``max_gap`` bytes apart
share one request), the requests packed into batches of bounded size (:func:`pack_runs`),
each batch fetched through a :data:`GetRanges` callable and its inner chunks decoded and
handed to a sink as soon as each is decoded.  Nothing read from the store is cached.

Named types: :class:`StoreRanges` (the ``get_ranges`` of one store key, which also reads into
scratch memory), :class:`ByteRangeGroup` (one coalesced request) and the aliases
:data:`GetRanges`, :data:`BatchSink` and :data:`Stored`.

Tunables (module attributes, read at call time, so tests may patch them here):
:data:`COALESCE_MAX_GAP`, :data:`MAX_REQUEST_BYTES` and ``_MIN_WORKER_BATCH``, tracked by the
sharded layout of ``Read`` and ``ShardBoxReads`` in
``asv_benchmarks/benchmarks/bench_array_io.py`` and of ``asv_benchmarks/compare_peers.py``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from zarr3c._buffers import chunk_too_large, thread_scratch
from zarr3c.codecs.base import BytesBytesCodec, as_byte_array
from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.codecs.sharding._inner import Coords, decode_inner_bytes, fill, renamed
from zarr3c.codecs.sharding._parallel import fan_out_parts, in_parallel
from zarr3c.codecs.sharding._part import CodecPart
from zarr3c.codecs.sharding.index import MISSING, ShardIndex, check_shard_size
from zarr3c.concurrency import get_num_threads, map_unordered
from zarr3c.errors import ChunkDecodeError, IndexingError
from zarr3c.stores.byte_ranges import resolve_byte_range

if TYPE_CHECKING:
    pass

__all__ = [
    "COALESCE_MAX_GAP",
    "MAX_REQUEST_BYTES",
    "BatchSink",
    "ByteRangeGroup",
    "GetRanges",
    "ShardReads",
    "Stored",
    "StoreRanges",
    "ValueRanges",
    "batch_decoder",
    "coalesce",
    "fetches_by_request",
    "pack_runs",
]

#: Default largest gap (bytes) between two inner chunks that ``byte_ranges`` still reads
#: as one request: fetching a few unused bytes beats another round trip.
COALESCE_MAX_GAP: int = 1 << 14
#: Most bytes of a shard one batch of partial reads holds at once (a single larger inner chunk
#: is read alone), so that reading a large shard never holds all of its stored bytes.
MAX_REQUEST_BYTES: int = 4 << 20
# Fewest bytes a worker fetches at once when the workers of a shard read fetch their own
# batches (smaller requests cost more round trips than they save in memory).
_MIN_WORKER_BATCH = 1 << 16
#: StoreRanges.into: the most bytes it reads into scratch memory in one call, allocated
#: before the read (the ranges come from an index, which may be damaged)
_INTO_MAX_BYTES = 64 << 20

#: ``get_ranges(ranges) -> values``: read byte ranges of one shard, one result per
#: ``(start, length | None)`` request, with the semantics of
#: :meth:`zarr3c.stores.base.Store.get_partial_values` (``(-n, None)`` is the last ``n``
#: bytes; a range past the end is clipped); None for every range when the shard is missing.
#: For a store: ``lambda ranges: store.get_partial_values([(key, r) for r in ranges])``.
GetRanges: TypeAlias = Callable[
    [Sequence[tuple[int, int | None]]],
    Sequence[bytes | bytearray | memoryview | np.ndarray | None],
]

#: ``read_inner_chunks_into``'s ``batch_sink``: ``(coords, stored bytes)`` of a batch of
#: inner chunks in, those it left out
BatchSink: TypeAlias = Callable[[list[tuple[Coords, np.ndarray]]],
                                list[tuple[Coords, np.ndarray]]]

#: ``(offset, nbytes, coords)`` of a stored inner chunk, as its index entry gives them: a
#: plain tuple (one per inner chunk read, sorted by offset)
Stored: TypeAlias = tuple[int, int, Coords]

#: ``(coords, stored bytes)`` of one inner chunk fetched, to decode
_Task: TypeAlias = tuple[Coords, np.ndarray]


class ValueRanges:
    """The ``get_ranges`` of a shard already fetched whole (in one request, with other
    shards: issue 33's small-shard rule): its ranges are slices of the value in memory, as
    :data:`GetRanges` says; None for every range where the shard is not stored.

    Parameters
    ----------
    value
        The shard's stored bytes (any buffer), or None if it is not stored.

    Raises
    ------
    None
        (A range past the end is clipped: the shard reader reports a shard cut short.)

    Examples
    --------
    >>> [bytes(v) for v in ValueRanges(b"0123456789")([(2, 3), (-2, None), (8, 5)])]
    [b'234', b'89', b'89']
    >>> ValueRanges(None)([(0, 4)])
    [None]
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, ranges: Sequence[tuple[int, int | None]]
                 ) -> Sequence[bytes | bytearray | memoryview | np.ndarray | None]:
        if self.value is None:
            return [None] * len(ranges)
        data = as_byte_array(self.value)
        size = len(data)
        out: list[bytes | bytearray | memoryview | np.ndarray | None] = []
        for start, length in ranges:
            lo, hi = resolve_byte_range(start, length, size)
            out.append(data[lo:hi])
        return out


class StoreRanges:
    """The ``get_ranges`` of one key of a store; it also reads ranges straight into a
    buffer (:meth:`into`) where the store reads into memory, so that a shard's stored inner
    chunks, read only to be decoded at once, go to scratch memory rather than fresh
    ``bytes`` per request.

    Calling it reads ``ranges`` of the key as :data:`GetRanges` says; a lone suffix range
    (a shard index at the end) is read with one :meth:`~zarr3c.stores.base.Store.read_tail_into`.

    Parameters
    ----------
    store
        The store to read (a :class:`~zarr3c.stores.base.Store`).
    key
        The key of the shard in it (not checked here: reads report a malformed key).

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> store.set("k", b"0123456789")
    >>> [bytes(v) for v in StoreRanges(store, "k")([(2, 3), (-2, None)])]
    [b'234', b'89']
    """

    __slots__ = ("key", "store")

    def __init__(self, store: Any, key: str) -> None:
        self.store, self.key = store, key

    def __call__(self, ranges: Sequence[tuple[int, int | None]]
                 ) -> Sequence[bytes | bytearray | memoryview | np.ndarray | None]:
        if len(ranges) == 1 and ranges[0][0] < 0 and ranges[0][1] is None:
            # A lone suffix (a shard index at the end): read in one call where the store
            # can (Store.read_tail_into), into fresh memory; a large one only once the
            # shard is known stored, and no longer than it.
            n = -ranges[0][0]
            if n > _INTO_MAX_BYTES:
                size = self.store.getsize(self.key)
                if size is None:
                    return [None]
                n = min(n, size)
            try:
                buf = np.empty(n, dtype=np.uint8)
            except MemoryError:
                raise chunk_too_large(self.key, n, "the shard's index") from None
            got = self.store.read_tail_into(self.key, buf)
            return [None if got is None else buf[:got]]
        return self.store.get_partial_values([(self.key, r) for r in ranges])

    def into(self, ranges: Sequence[tuple[int, int]]) -> list[np.ndarray] | None:
        """The ``(start, length)`` ranges, read one after another into this thread's
        scratch memory (valid until its next such read): a view of each.  None if the store
        cannot read into memory or any range is not all there (the caller reads them
        again, and reports).

        Parameters
        ----------
        ranges
            ``(start, length)`` byte ranges of the value, ``start >= 0``.

        Returns
        -------
        list of numpy.ndarray or None
            A ``uint8`` view of the thread's ``"stored"`` scratch memory per range, in
            order; None where the store does not read into memory
            (:attr:`~zarr3c.stores.base.Store.reads_into_memory` False), the ranges add up
            to more than 64 MiB, or the key is missing or shorter than a range.

        Raises
        ------
        InvalidKeyError
            If the key or a range is malformed.
        StoreError
            If the value exists but cannot be read.

        Examples
        --------
        >>> import tempfile
        >>> import zarr3c
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = zarr3c.LocalStore(tmp.name)
        >>> store.set("k", b"0123456789")
        >>> get_ranges, wanted = StoreRanges(store, "k"), [(2, 3), (7, 2)]
        >>> got = get_ranges.into(wanted) or get_ranges(wanted)  # as a shard read does
        >>> [bytes(v) for v in got]
        [b'234', b'78']
        >>> StoreRanges(zarr3c.MemoryStore(), "k").into(wanted) is None  # no reads into memory
        True
        >>> tmp.cleanup()
        """
        if not self.store.reads_into_memory:
            return None
        requests, at = [], 0
        for start, n in ranges:
            requests.append((start, start + n, at))
            at += n
        if at > _INTO_MAX_BYTES:
            # (a huge inner chunk, or an entry of a damaged index without a checksum: read
            # through get_ranges, which stops at the shard's end, and the caller reports it)
            return None
        buf = thread_scratch(at, "stored")
        (got,) = self.store.read_ranges_into([(self.key, requests)], buf)
        if got != at:
            return None
        return [buf[lo:lo + stop - start] for start, stop, lo in requests]


@dataclass(frozen=True, slots=True)
class ByteRangeGroup:
    """One read request covering one or more stored inner chunks (see
    :meth:`ShardingCodec.byte_ranges`).

    Parameters
    ----------
    start, length
        The bytes of the shard to read: ``shard[start:start + length]``.
    members
        ``(inner coords, offset within this range, nbytes)`` of each inner chunk it holds.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Examples
    --------
    >>> group = ByteRangeGroup(start=100, length=12, members=(((0,), 0, 4), ((1,), 8, 4)))
    >>> shard = bytes(range(128))
    >>> [shard[group.start + rel:group.start + rel + n] for _, rel, n in group.members]
    [b'defg', b'lmno']
    """

    start: int
    length: int
    members: tuple[tuple[Coords, int, int], ...]


# -- the partial-read methods of ShardingCodec -------------------------------------------------


class ShardReads(CodecPart):
    """The partial-read methods of :class:`~zarr3c.codecs.sharding.ShardingCodec`.

    A mixin without state of its own: ``ShardingCodec`` inherits these methods and provides
    what :class:`~zarr3c.codecs.sharding._part.CodecPart` declares.  So the reading code sits
    in one module with the helpers it uses, while the codec keeps one class.
    """

    def read_index(
        self, get_ranges: GetRanges, shard_shape: Sequence[int], *, key: str | None = None
    ) -> ShardIndex | None:
        """Read and decode a shard's index with one request; None if the shard is missing.

        An index at the end without a ``crc32c`` index codec is checked against the shard's
        size, so that request reads the whole shard (a truncated shard would otherwise show
        other bytes as its index).

        Parameters
        ----------
        get_ranges
            Reads byte ranges of the shard (:data:`~zarr3c.codecs.sharding.read.GetRanges`).
        shard_shape
            The shard's shape (the array's chunk shape).
        key
            The shard's store key, named by errors.

        Returns
        -------
        ShardIndex or None
            The checked index, or None if the shard is not stored.

        Raises
        ------
        ChunkDecodeError
            Naming ``key``: the shard is shorter than its index, or the index is malformed
            (ChecksumError for a crc32c mismatch).

        Examples
        --------
        >>> import numpy as np
        >>> import zarr3c
        >>> from zarr3c.codecs.sharding import StoreRanges, partial_read_codec
        >>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
        ...                         shards=(8, 8))
        >>> a[:4, :4] = 1
        >>> codec = partial_read_codec(a._pipeline)
        >>> index = codec.read_index(StoreRanges(a._store, a.chunk_key((0, 0))), (8, 8))
        >>> index.present.tolist()
        [[True, False], [False, False]]
        """
        layout = self._layout(shard_shape)
        if layout.read_whole:
            # Without a checksum, an index read from the end of a truncated shard would be
            # other bytes taken for an index: only the shard's size can tell, so read it all.
            (whole,) = get_ranges([(0, None)])
            if whole is None:
                return None
            try:
                return self._decode_index_from_shard(as_byte_array(whole), shard_shape)
            except ChunkDecodeError as exc:
                raise renamed(exc, key)  # noqa: B904 - its cause is set
        (raw,) = get_ranges([layout.request])
        if raw is None:
            return None
        try:
            buf = as_byte_array(raw)
            check_shard_size(buf.nbytes, layout)
            return self.decode_index(buf, shard_shape)
        except ChunkDecodeError as exc:
            raise renamed(exc, key)  # noqa: B904 - its cause is set

    def inner_chunks_for_region(
        self, shard_shape: Sequence[int], region: Sequence[slice | tuple[int, int]]
    ) -> list[Coords]:
        """The inner chunks (C order) holding at least one element of ``region``.

        Parameters
        ----------
        shard_shape
            The shard's shape.
        region
            Per dimension a ``slice`` (``step >= 1``; bounds as numpy takes them) or a
            ``(start, stop)`` pair, within the shard.

        Returns
        -------
        list of tuple of int
            The inner chunks' coords.

        Raises
        ------
        IndexingError
            As :meth:`project_region`.

        Examples
        --------
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2, 2]}, path="c")
        >>> codec.inner_chunks_for_region((4, 4), (slice(1, 3), (0, 1)))
        [(0, 0), (1, 0)]
        """
        plans = self.project_region(shard_shape, region)
        return [tuple(p[0] for p in combo) for combo in itertools.product(*plans)]

    def byte_ranges(
        self,
        index: ShardIndex,
        inner_coords: Iterable[Sequence[int]],
        *,
        max_gap: int = COALESCE_MAX_GAP,
        max_length: int | None = None,
    ) -> list[ByteRangeGroup]:
        """Coalesced read requests for the stored inner chunks among ``inner_coords``.

        Missing inner chunks get no request.  Chunks are sorted by offset and merged into
        one request when the gap between them is at most ``max_gap`` bytes and the merged
        request stays within ``max_length`` bytes.

        Parameters
        ----------
        index
            The shard's index.
        inner_coords
            The inner chunks wanted.
        max_gap
            The largest gap (bytes) read through rather than split.
        max_length
            The largest request (bytes; None: no bound; a larger inner chunk gets its own).

        Returns
        -------
        list of ByteRangeGroup
            The requests, by offset.

        Raises
        ------
        IndexError
            Inner coords outside the index.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs.sharding import ShardIndex
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> index = ShardIndex(np.array([[0, 2], [2, 2], [100, 2]], dtype="uint64"))
        >>> [(g.start, g.length) for g in codec.byte_ranges(index, [(0,), (1,), (2,)],
        ...                                                   max_gap=10)]
        [(0, 4), (100, 2)]
        """
        found: list[Stored] = []
        for coords in inner_coords:
            coords = tuple(int(c) for c in coords)
            entry = index.get(coords)
            if entry is not None:
                found.append((entry[0], entry[1], coords))
        found.sort()
        return coalesce(found, max_gap, max_length)

    def read_inner_chunks_into(
        self,
        get_ranges: GetRanges,
        shard_shape: Sequence[int],
        inner_coords: Iterable[Sequence[int]],
        sink: Callable[[Coords, np.ndarray | None], None],
        *,
        index: ShardIndex | None = None,
        key: str | None = None,
        max_gap: int = COALESCE_MAX_GAP,
        max_request: int | None = None,
        scratch: bool = True,
        batch_sink: BatchSink | None = None,
    ) -> bool:
        """Read and decode some inner chunks of a shard, handing each to a sink as soon as
        it is decoded.

        The index is read first (unless given); then the coalesced byte ranges of the stored
        inner chunks are fetched in batches of bounded size, each batch decoded over the
        thread pool with ``sink`` called in the worker that decoded the chunk, so a read of
        a large shard holds one batch of stored bytes and one decoded inner chunk per
        worker, never the whole shard.

        Parameters
        ----------
        get_ranges
            Reads byte ranges of the shard (:data:`~zarr3c.codecs.sharding.read.GetRanges`);
            a :class:`~zarr3c.codecs.sharding.read.StoreRanges` also reads into scratch
            memory.
        shard_shape
            The shard's shape.
        inner_coords
            The inner chunks to read (duplicates read once).
        sink
            ``sink(coords, chunk)``, ``chunk`` None for an inner chunk that is not stored (it
            reads as the fill value).  It may be called from several threads at once, once
            per inner chunk, and must copy what it keeps: a chunk may be a view of scratch
            memory that the thread reuses, unless ``scratch`` is False.
        index
            The shard's index, if already read.
        key
            The shard's store key, named by errors.
        max_gap
            As :meth:`byte_ranges`.
        max_request
            The most bytes fetched in one batch (default
            :data:`~zarr3c.codecs.sharding.read.MAX_REQUEST_BYTES`).
        scratch
            Whether chunks handed to ``sink`` may be views of reused scratch memory.
        batch_sink
            Handed the ``(coords, stored bytes)`` of a batch of stored inner chunks first (in
            the worker that fetched them: a few calls per shard rather than one per inner
            chunk); returns those it left for the decode and ``sink`` above (any it cannot
            decode, which the decode then reports).  See
            :func:`~zarr3c.codecs.sharding.read.batch_decoder`.

        Returns
        -------
        bool
            False if the whole shard is missing (``sink`` is then never called).

        Raises
        ------
        ChunkDecodeError
            Naming ``key`` (and the inner chunk): malformed index, a range past the end of
            the shard, a corrupt inner chunk.

        Examples
        --------
        >>> import zarr3c
        >>> from zarr3c.codecs.sharding import StoreRanges, partial_read_codec
        >>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
        ...                         shards=(8, 8))
        >>> a[4:, :4] = 3
        >>> codec, got = partial_read_codec(a._pipeline), {}
        >>> codec.read_inner_chunks_into(
        ...     StoreRanges(a._store, a.chunk_key((0, 0))), (8, 8), [(0, 0), (1, 0)],
        ...     lambda c, chunk: got.update({c: None if chunk is None else int(chunk.sum())}))
        True
        >>> got
        {(0, 0): None, (1, 0): 48}
        """
        if max_request is None:
            max_request = MAX_REQUEST_BYTES
        wanted = list(dict.fromkeys(tuple(int(c) for c in coords) for coords in inner_coords))
        if index is None:
            index = self.read_index(get_ranges, shard_shape, key=key)
            if index is None:
                return False
        found = _stored_or_sunk(index, wanted, sink)
        if not found:
            return True
        inner = self._evolved_pipeline()
        chunk_nbytes = math.prod(self.chunk_shape) * inner.dtype.itemsize
        decode_one = _inner_decoder(self, inner, sink, scratch)
        into = get_ranges.into if scratch and isinstance(get_ranges, StoreRanges) else None
        if len(found) == 1:  # one inner chunk: one request, no grouping
            _read_one(get_ranges, into, found[0], decode_one, key)
            return True
        found.sort()
        try:
            _read_batches(get_ranges, into, found, decode_one, batch_sink, max_gap, max_request,
                          chunk_nbytes)
        except ChunkDecodeError as exc:
            raise renamed(exc, key)  # noqa: B904 - its cause is set
        return True

    def read_inner_chunks(
        self,
        get_ranges: GetRanges,
        shard_shape: Sequence[int],
        inner_coords: Iterable[Sequence[int]],
        *,
        index: ShardIndex | None = None,
        key: str | None = None,
        max_gap: int = COALESCE_MAX_GAP,
    ) -> dict[Coords, np.ndarray | None] | None:
        """:meth:`read_inner_chunks_into` collected into a dict.

        Parameters
        ----------
        get_ranges, shard_shape, inner_coords, index, key, max_gap
            As :meth:`read_inner_chunks_into`.

        Returns
        -------
        dict or None
            ``coords -> decoded inner chunk`` (None for one that is not stored, an array
            of its own otherwise); None if the whole shard is missing.

        Raises
        ------
        ChunkDecodeError
            As :meth:`read_inner_chunks_into`.

        Examples
        --------
        >>> import zarr3c
        >>> from zarr3c.codecs.sharding import StoreRanges, partial_read_codec
        >>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
        ...                         shards=(8, 8))
        >>> a[:4, 4:] = 2
        >>> chunks = partial_read_codec(a._pipeline).read_inner_chunks(
        ...     StoreRanges(a._store, a.chunk_key((0, 0))), (8, 8), [(0, 1)])
        >>> chunks[(0, 1)].tolist()[0]
        [2, 2, 2, 2]
        """
        result: dict[Coords, np.ndarray | None] = {}

        def keep(coords: Coords, chunk: np.ndarray | None) -> None:
            result[coords] = chunk

        found = self.read_inner_chunks_into(get_ranges, shard_shape, inner_coords, keep,
                                            index=index, key=key, max_gap=max_gap,
                                            scratch=False)
        return result if found else None

    def read_region(
        self,
        get_ranges: GetRanges,
        shard_shape: Sequence[int],
        region: Sequence[slice | tuple[int, int]],
        *,
        key: str | None = None,
        max_gap: int = COALESCE_MAX_GAP,
    ) -> np.ndarray | None:
        """``shard[region]``, reading only the index and the inner chunks it touches.

        Each inner chunk holding selected elements is fetched and decoded, and copied into
        the result as soon as it is decoded.

        Parameters
        ----------
        get_ranges, shard_shape, key, max_gap
            As :meth:`read_inner_chunks_into`.
        region
            Per dimension a ``slice`` (``step >= 1``) or ``(start, stop)``.

        Returns
        -------
        numpy.ndarray or None
            numpy's ``shard[slices]`` (no dimension dropped), or None if the shard is missing
            (the caller fills with the fill value).

        Raises
        ------
        ChunkDecodeError
            As :meth:`read_inner_chunks_into`.
        IndexingError
            As :meth:`project_region`.

        Examples
        --------
        >>> import numpy as np
        >>> import zarr3c
        >>> from zarr3c.codecs.sharding import StoreRanges, partial_read_codec
        >>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
        ...                         shards=(8, 8))
        >>> a[...] = np.arange(64, dtype="uint8").reshape(8, 8)
        >>> partial_read_codec(a._pipeline).read_region(
        ...     StoreRanges(a._store, a.chunk_key((0, 0))), (8, 8), (slice(3, 5), (7, 8))
        ... ).tolist()
        [[31], [39]]
        """
        plans = self.project_region(shard_shape, region)
        inner = self._evolved_pipeline()
        out = np.empty(tuple(sum(o.stop - o.start for _, o, _ in p) for p in plans),
                       dtype=inner.dtype)
        pieces = {tuple(p[0] for p in combo): combo for combo in itertools.product(*plans)}

        def place(coords: Coords, chunk: np.ndarray | None) -> None:
            combo = pieces[coords]
            dst = out[tuple(p[1] for p in combo)]
            if chunk is None:
                fill(dst, inner.fill_value)
            else:
                dst[...] = chunk[tuple(p[2] for p in combo)]

        found = self.read_inner_chunks_into(get_ranges, shard_shape, pieces, place, key=key,
                                            max_gap=max_gap)
        return out if found else None

    def project_region(
        self, shard_shape: Sequence[int], region: Sequence[slice | tuple[int, int]]
    ) -> list[list[tuple[int, slice, slice]]]:
        """Map a region of the shard onto its inner chunks, per dimension.

        Parameters
        ----------
        shard_shape
            The shard's shape.
        region
            Per dimension a ``slice`` (``step >= 1``) or ``(start, stop)``.

        Returns
        -------
        list of list of (int, slice, slice)
            Per dimension, ``(inner chunk index, slice of the output, slice of the inner
            chunk)`` for each inner chunk the region's selection touches (the output being
            ``shard[region]``; slices have ``step >= 1``).

        Raises
        ------
        IndexingError
            A region of the wrong number of dimensions, outside the shard, or with a step
            below 1.
        MetadataError
            As :meth:`chunks_per_shard`.

        Examples
        --------
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [4]}, path="c")
        >>> codec.project_region((8,), (slice(2, 6),))
        [[(0, slice(0, 2, None), slice(2, 4, 1)), (1, slice(2, 4, None), slice(0, 2, 1))]]
        """
        shard_shape = tuple(shard_shape)
        self._layout(shard_shape)
        if len(region) != len(shard_shape):
            raise IndexingError(
                f"region has {len(region)} dimensions, the shard has {len(shard_shape)}"
            )
        plans = []
        for axis, (sel, n, c) in enumerate(zip(region, shard_shape, self.chunk_shape,
                                                strict=True)):
            if isinstance(sel, slice):
                start, stop, step = sel.indices(n)
            else:
                start, stop = (int(v) for v in sel)
                step = 1
                if not 0 <= start <= stop <= n:
                    raise IndexingError(
                        f"region ({start}, {stop}) of axis {axis} is outside the shard "
                        f"(length {n})"
                    )
            if step < 1:
                raise IndexingError(f"region of axis {axis}: step must be >= 1, got {step}")
            count = len(range(start, stop, step))
            plan = []
            if count:
                last = start + (count - 1) * step
                for i in range(start // c, last // c + 1):
                    lo, hi = i * c, (i + 1) * c
                    k0 = max(0, -(-(lo - start) // step))
                    k1 = min(count, -(-(hi - start) // step))
                    if k1 > k0:
                        first = start + k0 * step - lo
                        plan.append((i, slice(k0, k1),
                                     slice(first, first + (k1 - k0 - 1) * step + 1, step)))
            plans.append(plan)
        return plans

    def project_runs(
        self, shard_shape: Sequence[int], runs: Sequence[tuple[int, int]], counts: Sequence[int]
    ) -> list[list[tuple[int, int, int, int]]]:
        """:meth:`project_region` for a strided selection given as integers.

        Cheaper than slices when planning many small selections.

        Parameters
        ----------
        shard_shape
            The shard's shape.
        runs
            Per dimension the ``(start, step)`` (``step >= 1``) of the selection.
        counts
            Per dimension its number of elements.

        Returns
        -------
        list of list of (int, int, int, int)
            Per dimension, ``(inner chunk index, position in the selection of its first
            element, number of elements, index of that first element in the inner chunk)``
            per inner chunk touched, in increasing order.

        Raises
        ------
        IndexingError
            If the runs do not match the shard's dimensions or leave it.

        Examples
        --------
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [4]}, path="c")
        >>> codec.project_runs((8,), [(1, 3)], [3])
        [[(0, 0, 1, 1), (1, 1, 2, 0)]]
        """
        shard_shape = tuple(shard_shape)
        self._layout(shard_shape)
        if not len(runs) == len(counts) == len(shard_shape):
            raise IndexingError(
                f"{len(runs)} runs and {len(counts)} counts for a shard of "
                f"{len(shard_shape)} dimensions"
            )
        plans: list[list[tuple[int, int, int, int]]] = []
        for axis, ((start, step), count, n, c) in enumerate(
                zip(runs, counts, shard_shape, self.chunk_shape, strict=True)):
            last = start + (count - 1) * step
            if step < 1 or count < 0 or start < 0 or (count and last >= n):
                raise IndexingError(
                    f"run (start {start}, step {step}, count {count}) of axis {axis} is not "
                    f"inside the shard (length {n})"
                )
            if not count:
                plans.append([])
                continue
            i0, i1 = start // c, last // c
            if i0 == i1:  # the usual case of a small selection: one inner chunk
                plans.append([(i0, 0, count, start - i0 * c)])
                continue
            plan = []
            for i in range(i0, i1 + 1):
                lo = i * c
                k0 = max(0, -(-(lo - start) // step))
                k1 = min(count, -(-(lo + c - start) // step))
                if k1 > k0:
                    plan.append((i, k0, k1 - k0, start + k0 * step - lo))
            plans.append(plan)
        return plans


# -- which bytes to read ---------------------------------------------------------------------


def coalesce(found: list[Stored], max_gap: int, max_length: int | None
             ) -> list[ByteRangeGroup]:
    """Requests for stored inner chunks sorted by offset: neighbours at most ``max_gap``
    bytes apart share one request of at most ``max_length`` bytes (None: no bound)."""
    groups: list[ByteRangeGroup] = []
    start = end = -1
    members: list[tuple[Coords, int, int]] = []
    for offset, n, coords in found:
        if members and offset - end <= max_gap and (
            max_length is None or max(end, offset + n) - start <= max_length
        ):
            members.append((coords, offset - start, n))
            end = max(end, offset + n)
            continue
        if members:
            groups.append(ByteRangeGroup(start, end - start, tuple(members)))
        start, end = offset, offset + n
        members = [(coords, 0, n)]
    if members:
        groups.append(ByteRangeGroup(start, end - start, tuple(members)))
    return groups


def pack_runs(sizes: Sequence[int], limit: int) -> list[tuple[int, int]]:
    """Consecutive runs ``[lo, hi)`` of items whose ``sizes`` add up to at most ``limit``
    (an item larger than ``limit`` alone): how requests are batched to bound the bytes held
    at once.

    Parameters
    ----------
    sizes
        The items' sizes, in order (bytes, ``>= 0``).
    limit
        The most a run adds up to, unless it is one item larger than that.

    Returns
    -------
    list of tuple of (int, int)
        ``(lo, hi)`` of each run, covering ``range(len(sizes))`` in order, each greedily as
        long as ``limit`` allows; empty for no items.

    Examples
    --------
    >>> pack_runs([3, 3, 5, 1, 9], 6)
    [(0, 2), (2, 4), (4, 5)]
    """
    runs = []
    first = 0
    while first < len(sizes):
        last, size = first + 1, sizes[first]
        while last < len(sizes) and size + sizes[last] <= limit:
            size += sizes[last]
            last += 1
        runs.append((first, last))
        first = last
    return runs


def _check_range(
    value: bytes | bytearray | memoryview | np.ndarray | None,
    coords: Coords, start: int, n: int, rel: int, length: int,
) -> np.ndarray:
    """The bytes read for a request of ``length`` bytes at ``start`` of the shard, checked to
    hold the inner chunk at ``coords`` (``n`` bytes from ``rel`` in the request)."""
    if value is None:
        raise ChunkDecodeError("sharding_indexed: the shard disappeared while read")
    buf = as_byte_array(value)
    if rel + n > buf.nbytes:
        raise ChunkDecodeError(
            f"sharding_indexed: inner chunk {coords} (offset {start + rel}, nbytes {n}) lies "
            f"outside the shard of {start + buf.nbytes} bytes"
        )
    return buf


# -- reading and decoding inner chunks -------------------------------------------------------


def _stored_or_sunk(index: ShardIndex, wanted: list[Coords],
                    sink: Callable[[Coords, np.ndarray | None], None]) -> list[Stored]:
    """The stored inner chunks among ``wanted``; each missing one is handed to ``sink`` as
    None at once."""
    entries = index.entries
    found: list[Stored] = []
    for coords in wanted:
        offset, n = entries[coords].tolist()
        if offset == MISSING:
            sink(coords, None)
        else:
            found.append((offset, n, coords))
    return found


def _inner_decoder(sharding: ShardReads, inner: CodecPipeline,
                   sink: Callable[[Coords, np.ndarray | None], None], scratch: bool
                   ) -> Callable[[_Task], None]:
    """``decode_one((coords, stored bytes))``: decode one inner chunk and hand it to
    ``sink``, by the cheapest way the inner chain allows."""
    chunk_shape = sharding.chunk_shape
    dtype = inner.dtype
    chunk_nbytes = math.prod(chunk_shape) * dtype.itemsize
    # A chain whose serializer stores the raw elements (``bytes`` in native order, then
    # any compressors) decodes to a view of its bytes->bytes codecs' output: take that
    # view here rather than through the pipeline's layers.  Anything unexpected (a failing
    # codec, the wrong size) goes through the pipeline again, which reports it.
    raw_chain = _raw_chain(inner, chunk_shape)
    # Decoded only to be copied out: where the inner codecs can, into this thread's
    # memory for it (no fresh memory per inner chunk), as zarr3c.array.read.chunk does.
    into_scratch = scratch and inner.can_decode_into

    def decode_one(task: _Task) -> None:
        coords, raw = task
        if into_scratch:
            out = thread_scratch(chunk_nbytes, "inner")
            if inner.decode_into(raw, out):
                sink(coords, out.view(dtype).reshape(chunk_shape))
                return
        if raw_chain is not None:
            try:
                buf: Any = raw
                for codec, cap in raw_chain:
                    buf = codec.decode_bounded(buf, cap)
                buf = as_byte_array(buf)
            except Exception:  # noqa: BLE001 - decoded again below, which reports it
                buf = None
            if buf is not None and buf.nbytes == chunk_nbytes:
                sink(coords, buf.view(dtype).reshape(chunk_shape))
                return
        sink(coords, decode_inner_bytes(inner, raw, chunk_shape, coords))

    return decode_one


def _raw_chain(pipeline: CodecPipeline, chunk_shape: tuple[int, ...]
               ) -> tuple[tuple[BytesBytesCodec, int | None], ...] | None:
    """The bytes->bytes codecs to undo, in decode order, each with the cap of its decoding
    (``CodecPipeline.decode_caps``), when ``pipeline`` stores chunks of ``chunk_shape`` as
    its elements' native bytes under them (no array->array codec); else None."""
    if pipeline.array_array or not pipeline.array_bytes.stores_raw_elements(pipeline.dtype):
        return None
    return tuple(zip(reversed(pipeline.bytes_bytes),
                     reversed(pipeline.decode_caps(chunk_shape)), strict=True))


def _read_one(get_ranges: GetRanges, into: Callable[..., list[np.ndarray] | None] | None,
              stored: Stored, decode_one: Callable[[_Task], None], key: str | None) -> None:
    """Fetch and decode one stored inner chunk with one request (errors naming ``key``)."""
    offset, n, coords = stored
    (value,) = (None if into is None else into([(offset, n)])) or get_ranges([(offset, n)])
    try:
        buf = _check_range(value, coords, offset, n, 0, n)
        decode_one((coords, buf if buf.nbytes == n else buf[:n]))
    except ChunkDecodeError as exc:
        raise renamed(exc, key)  # noqa: B904 - its cause is set


def _read_batches(get_ranges: GetRanges, into: Callable[..., list[np.ndarray] | None] | None,
                  found: list[Stored], decode_one: Callable[[_Task], None],
                  batch_sink: BatchSink | None, max_gap: int, max_request: int,
                  chunk_nbytes: int) -> None:
    """Fetch the stored inner chunks ``found`` (sorted by offset) in coalesced batches of at
    most ``max_request`` bytes, and decode each batch's (through ``batch_sink`` first)."""
    threads = get_num_threads()
    if (threads > 1 and in_parallel(len(found) * chunk_nbytes)
            and not fetches_by_request(get_ranges)):
        # Each worker fetches and decodes batches of its own, so reading, decoding and
        # copying overlap across workers; smaller batches keep the bytes held at once
        # (one batch per worker) within max_request.  Not where every fetch is a round
        # trip (an object store): there one batch's requests go together, and its decoding
        # fans out (issue 33's fewest requests).
        part = min(max_request, max(max_request // (2 * threads), _MIN_WORKER_BATCH))
    else:
        part = max_request
    groups = coalesce(found, max_gap, part)
    batches = [groups[lo:hi] for lo, hi in pack_runs([g.length for g in groups], part)]

    def fetch(batch: list[ByteRangeGroup]) -> list[_Task]:
        ranges = [(g.start, g.length) for g in batch]
        values = (None if into is None else into(ranges)) or get_ranges(ranges)
        tasks = []
        for group, value in zip(batch, values, strict=True):
            buf = None
            for coords, rel, n in group.members:
                if buf is None or rel + n > buf.nbytes:
                    buf = _check_range(value, coords, group.start, n, rel, group.length)
                tasks.append((coords, buf[rel:rel + n]))
        return tasks

    def run_tasks(tasks: list[_Task]) -> None:
        for task in tasks if batch_sink is None else batch_sink(tasks):
            decode_one(task)

    def run_batch(batch: list[ByteRangeGroup]) -> None:
        run_tasks(fetch(batch))

    if part < max_request and len(batches) > 1:
        map_unordered(run_batch, batches)
    else:
        for batch in batches:
            tasks = fetch(batch)
            fan_out_parts(run_tasks, tasks, len(tasks) * chunk_nbytes)
            del tasks  # this batch's bytes go before the next batch is fetched


def fetches_by_request(get_ranges: GetRanges) -> bool:
    """Whether every fetch through ``get_ranges`` is a round trip: a :class:`StoreRanges` of
    a store whose every read is a request (:attr:`~zarr3c.stores.base.Store.reads_by_request`:
    an object store), not a shard already in memory (:class:`ValueRanges`).

    Parameters
    ----------
    get_ranges
        A shard's ``get_ranges``.

    Returns
    -------
    bool

    Raises
    ------
    None
        (It only looks at the object's type and store flag.)

    Examples
    --------
    >>> import zarr3c
    >>> fetches_by_request(StoreRanges(zarr3c.MemoryStore(), "c/0")), fetches_by_request(
    ...     ValueRanges(b"shard"))
    (False, False)
    """
    return isinstance(get_ranges, StoreRanges) and bool(
        getattr(get_ranges.store, "reads_by_request", False))


def batch_decoder(call: Callable[..., list[int]], chunk_nbytes: int,
                  index: Mapping[Coords, int], bounds: np.ndarray, *args: Any) -> BatchSink:
    """A ``batch_sink`` for :meth:`ShardingCodec.read_inner_chunks_into` that decodes a
    batch of inner chunks and copies their parts out in one kernel call (a batch call of
    :meth:`~zarr3c.codecs.base.BytesBytesCodec.batch_kernels`, no Python between the
    chunks): ``call(frames, scratch, run_starts, run_stops, *args)``, inner chunk ``c``'s
    run being ``bounds[index[c]]`` to ``bounds[index[c] + 1]``.  Returns the tasks the call
    left, for the ordinary decode (which reports them).

    Parameters
    ----------
    call
        The batch kernel: ``call(frames, scratch, run_starts, run_stops, *args)`` decodes
        each stored inner chunk of ``frames`` into ``scratch`` and copies out its run, and
        returns the positions in ``frames`` of those it did not decode.
    chunk_nbytes
        The size of a decoded inner chunk: the scratch memory the kernel decodes into.
    index
        The position of each inner chunk's run in ``bounds``, by inner coords.
    bounds
        ``int64`` run boundaries: inner chunk ``c``'s run is ``bounds[index[c]]`` to
        ``bounds[index[c] + 1]``.
    *args
        Passed on to ``call`` after the run bounds (the destination and its offsets).

    Returns
    -------
    BatchSink
        ``batch_sink(tasks)``: takes ``(coords, stored bytes)`` of a batch of inner chunks
        and returns those the kernel left (an inner chunk it could not decode), in order.

    Raises
    ------
    KeyError
        Not here, but from the sink it returns: an inner chunk of a batch that is not in
        ``index``.  The sink also passes on what ``call`` raises.

    Examples
    --------
    >>> import numpy as np
    >>> calls = []
    >>> def call(frames, scratch, run_starts, run_stops):
    ...     calls.append((len(frames), run_starts.tolist(), run_stops.tolist()))
    ...     return [1]  # leaves the second inner chunk to the ordinary decode
    >>> sink = batch_decoder(call, 8, {(0,): 0, (1,): 1}, np.array([0, 4, 8]))
    >>> left = sink([((0,), np.zeros(3, "uint8")), ((1,), np.zeros(3, "uint8"))])
    >>> [coords for coords, _ in left], calls
    ([(1,)], [(2, [0, 4], [4, 8])])
    """

    def batch_sink(tasks: list[_Task]) -> list[_Task]:
        runs = np.array([index[coords] for coords, _ in tasks], dtype=np.int64)
        left = call([raw for _, raw in tasks], thread_scratch(chunk_nbytes, "inner"),
                    bounds[runs], bounds[runs + 1], *args)
        return [tasks[k] for k in left]

    return batch_sink
