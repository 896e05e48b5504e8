"""The ``sharding_indexed`` codec: many inner chunks stored in one shard, found through an index.

Zarr v3 ``sharding_indexed`` codec (zarr-specs ``v3/codecs/sharding-indexed``, as zarr-python 3,
tensorstore and zarrs implement it).  It is an array -> bytes codec: the chunk of the array's
chunk grid is the *shard*; the shard is cut into inner chunks of ``chunk_shape`` (which must
divide the shard shape), each inner chunk is encoded with the inner ``codecs`` chain, and the
encoded inner chunks are concatenated with an *index* placed at the ``start`` or ``end`` of
the shard (default ``end``)::

    {"name": "sharding_indexed",
     "configuration": {
        "chunk_shape": [32, 32],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "end"}}

The index is a ``uint64`` array of shape ``chunks_per_shard + [2]`` holding, for each inner
chunk in C order, the byte ``offset`` (from the start of the shard) and the byte length
``nbytes`` of its encoding; ``(2**64 - 1, 2**64 - 1)`` marks a missing inner chunk, which
reads as the fill value.  The index is encoded with ``index_codecs``, whose output size must
be fixed (``bytes`` plus an optional ``crc32c``) so that a reader knows where to find it.

Writing (:meth:`ShardingCodec.encode`, or :meth:`ShardingCodec.encode_region` straight from a
strided region of the caller's buffer) stores the inner chunks in C order of the inner grid
and omits those whose bits all equal the fill value.  ``encode_region`` hands the shard over
as its parts (the encoded inner chunks and the index, in order) for the store to write one
after another, so a compressed shard is never assembled in memory.  A shard whose inner
chunks are all fill still encodes to a valid shard (an index whose entries are all missing,
which every reader accepts); the array layer never stores such shards because it erases a
chunk that equals the fill value before encoding it (:meth:`ShardingCodec.is_empty_shard`
tells the same from the encoded bytes).

Partial decoding is supported: :meth:`ShardingCodec.read_index`,
:meth:`ShardingCodec.inner_chunks_for_region`, :meth:`ShardingCodec.byte_ranges`,
:meth:`ShardingCodec.decode_inner`, and on top of them
:meth:`ShardingCodec.read_inner_chunks_into` (each decoded inner chunk handed to a sink as soon
as it is decoded, the shard's bytes fetched in bounded batches),
:meth:`ShardingCodec.read_inner_chunks` and :meth:`ShardingCodec.read_region` read only the
index and the inner chunks a selection touches, through a batched ``get_ranges`` callable (see
:data:`GetRanges`); :meth:`ShardingCodec.project_region` and :meth:`ShardingCodec.project_runs`
map a region of the shard onto its inner chunks.  The index is checked in one pass of the
``shard`` kernel, and what a shard shape implies (index size and request, inner grid) is
computed once per shape; nothing read from the store is ever cached.  Partial writes:
:meth:`ShardingCodec.update_shard` replaces some inner chunks and copies the others' stored
bytes verbatim (None when no inner chunk is left, so the caller erases the shard).
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, TypeAlias

import numpy as np

from zarr3c._buffers import thread_scratch
from zarr3c._kernels.copy import copy_strided, fill_strided, is_uniform
from zarr3c._kernels.shard import check_shard_index
from zarr3c.codecs.base import (
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    as_byte_array,
    check_config_keys,
    native_dtype,
    parse_choice_field,
    parse_int_field,
)
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.pipeline import (
    CodecLike,
    CodecPipeline,
    codec_chain,
    parse_codecs,
)
from zarr3c.concurrency import get_num_threads, in_worker, map_parts, map_unordered
from zarr3c.errors import (
    ChecksumError,
    ChunkDecodeError,
    CodecError,
    IndexingError,
    MetadataError,
    ShapeMismatchError,
)
from zarr3c.indexing import c_strides, int64_array

__all__ = [
    "COALESCE_MAX_GAP",
    "MISSING",
    "ByteRangeGroup",
    "GetRanges",
    "IndexLocation",
    "ShardIndex",
    "PartArena",
    "ShardingCodec",
    "StoreRanges",
    "batch_decoder",
    "partial_read_codec",
    "sharding_codec_dict",
]

#: The index entry value (both offset and nbytes) of a missing inner chunk: 2**64 - 1.
MISSING: int = 2**64 - 1

#: Default largest gap (bytes) between two inner chunks that :meth:`ShardingCodec.byte_ranges`
#: still reads as one request: fetching a few unused bytes beats another round trip.
COALESCE_MAX_GAP: int = 1 << 14
#: Most bytes of a shard one batch of partial reads holds at once (a single larger inner chunk
#: is read alone), so that reading a large shard never holds all of its stored bytes.
MAX_REQUEST_BYTES: int = 4 << 20

IndexLocation: TypeAlias = Literal["start", "end"]

#: ``get_ranges(ranges) -> values``: read byte ranges of one shard, one result per
#: ``(start, length | None)`` request, with the semantics of
#: :meth:`zarr3c.stores.base.Store.get_partial_values` (``(-n, None)`` is the last ``n``
#: bytes; a range past the end is clipped); None for every range when the shard is missing.
#: For a store: ``lambda ranges: store.get_partial_values([(key, r) for r in ranges])``.
GetRanges: TypeAlias = Callable[
    [Sequence[tuple[int, int | None]]],
    Sequence[bytes | bytearray | memoryview | np.ndarray | None],
]


class StoreRanges:
    """The ``get_ranges`` of one key of a store; it also reads ranges straight into a
    buffer (:meth:`into`) where the store reads into memory, so that a shard's stored inner
    chunks, read only to be decoded at once, go to scratch memory rather than fresh
    ``bytes`` per request."""

    __slots__ = ("key", "store")

    def __init__(self, store: Any, key: str) -> None:
        self.store, self.key = store, key

    def __call__(self, ranges: Sequence[tuple[int, int | None]]
                 ) -> Sequence[bytes | bytearray | memoryview | np.ndarray | None]:
        if len(ranges) == 1 and ranges[0][0] < 0 and ranges[0][1] is None:
            # A lone suffix (a shard index at the end): read in one call where the store
            # can (Store.read_tail_into), into fresh memory.
            buf = np.empty(-ranges[0][0], dtype=np.uint8)
            got = self.store.read_tail_into(self.key, buf)
            return [None if got is None else buf[:got]]
        return self.store.get_partial_values([(self.key, r) for r in ranges])

    def into(self, ranges: Sequence[tuple[int, int]]) -> list[np.ndarray] | None:
        """The ``(start, length)`` ranges, read one after another into this thread's
        scratch memory (valid until its next such read): a view of each.  None if the store
        cannot read into memory or any range is not all there (the caller reads them
        again, and reports)."""
        if not self.store._reads_into_memory:
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


#: The largest shard there can be, when its size is not known: the largest file offset
_LARGEST_SHARD = 2**63 - 1

#: StoreRanges.into: the most bytes it reads into scratch memory in one call, allocated
#: before the read (the ranges come from an index, which may be damaged)
_INTO_MAX_BYTES = 64 << 20

_U64 = np.dtype("uint64")
_MISSING_FILL = np.array(MISSING, dtype=_U64).reshape(())
_DEFAULT_CODECS: tuple[dict[str, Any], ...] = (
    {"name": "bytes", "configuration": {"endian": "little"}},
)
_DEFAULT_INDEX_CODECS: tuple[dict[str, Any], ...] = (
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
)
# Below this many bytes per shard, inner chunks are encoded/decoded in the calling thread:
# handing tiny tasks to the pool costs more than it saves.
_PARALLEL_MIN_BYTES = 1 << 20
# Fewest bytes a worker fetches at once when the workers of a shard read fetch their own
# batches (smaller requests cost more round trips than they save in memory).
_MIN_WORKER_BATCH = 1 << 16
# The size of a PartArena's blocks (a part larger than this gets a block of its own).
_ARENA_BLOCK_BYTES = 1 << 20

Coords: TypeAlias = tuple[int, ...]
#: ``read_inner_chunks_into``'s ``batch_sink``: ``(coords, stored bytes)`` of a batch of
#: inner chunks in, those it left out
BatchSink: TypeAlias = Callable[[list[tuple[Coords, np.ndarray]]],
                                list[tuple[Coords, np.ndarray]]]


# -- the index -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ShardIndex:
    """A decoded shard index: where each inner chunk's bytes are in the shard.

    Attributes
    ----------
    entries
        ``uint64`` array of shape ``chunks_per_shard + (2,)``: ``[..., 0]`` offsets,
        ``[..., 1]`` byte lengths; :data:`MISSING` in both for a missing inner chunk.
    """

    entries: np.ndarray

    @property
    def chunks_per_shard(self) -> tuple[int, ...]:
        return tuple(self.entries.shape[:-1])

    @property
    def present(self) -> np.ndarray:
        """Boolean array of ``chunks_per_shard``: which inner chunks are stored."""
        return self.entries[..., 0] != MISSING

    @property
    def all_missing(self) -> bool:
        return not bool(self.present.any())

    def get(self, coords: Sequence[int]) -> tuple[int, int] | None:
        """``(offset, nbytes)`` of the inner chunk at ``coords``, or None if it is missing."""
        offset, nbytes = (int(v) for v in self.entries[tuple(coords)])
        if offset == MISSING:
            return None
        return offset, nbytes

    @classmethod
    def empty(cls, chunks_per_shard: Sequence[int]) -> ShardIndex:
        """An index in which every inner chunk is missing."""
        return cls(np.full((*chunks_per_shard, 2), MISSING, dtype=_U64))


@dataclass(frozen=True, slots=True)
class ByteRangeGroup:
    """One read request covering one or more stored inner chunks (see
    :meth:`ShardingCodec.byte_ranges`).

    Attributes
    ----------
    start, length
        The bytes of the shard to read: ``shard[start:start + length]``.
    members
        ``(inner coords, offset within this range, nbytes)`` of each inner chunk it holds.
    """

    start: int
    length: int
    members: tuple[tuple[Coords, int, int], ...]


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a codec's reads of a shard of one shape need, computed once per shape (all of it
    follows from the codec's configuration, which never changes)."""

    chunks_per_shard: Coords
    index_shape: Coords
    index_nbytes: int
    #: the store request that reads the index
    index_range: tuple[int, int | None]
    #: an index at the end without crc32c: read the whole shard to know its size
    read_whole: bool
    #: for the usual index chain (``bytes`` [+ ``crc32c``]): the crc32c codec or None, and
    #: the stored data type of the entries, to decode without the pipeline; else None
    index_fast: tuple[Codec | None, np.dtype] | None


# -- the codec -------------------------------------------------------------------------------------


def _as_codecs(value: Any, *, path: str) -> tuple[Codec, ...]:
    """Codec objects for a codec list given as dicts, names or codec objects."""
    if isinstance(value, tuple) and all(isinstance(c, Codec) for c in value):
        return value
    return parse_codecs(value, path=path)


def _parse_chunk_shape(value: Any, *, path: str) -> tuple[int, ...]:
    field_path = f"{path}.configuration.chunk_shape"
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"must be a list of positive integers, got {value!r}", path=field_path)
    if len(value) == 0:
        raise MetadataError("must have at least one dimension", path=field_path)
    return tuple(
        parse_int_field(v, path=f"{field_path}[{i}]", minimum=1) for i, v in enumerate(value)
    )


class PartArena:
    """One thread's memory for the shards it encodes during one write: the encoded inner
    chunks (or a raw shard's one buffer) are kept here until the shard is written, in
    blocks reused from shard to shard.

    Fresh memory for every shard costs a page fault per 4 KiB: the heap grows by a shard's
    encodings and is trimmed again once they are written (measured on a 512^3 sharded zstd
    write on 2 threads: 20,000-26,000 page faults, 9,600-10,500 with the arena).  Blocks are
    never moved or grown, so the parts handed out stay valid until :meth:`reset`.
    """

    __slots__ = ("_at", "_block", "_blocks")

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._block = 0
        self._at = 0

    def reset(self) -> None:
        """Start a new shard: the memory of the parts handed out so far is reused."""
        self._block = self._at = 0

    def take(self, nbytes: int) -> np.ndarray:
        """``nbytes`` of uninitialised ``uint8`` memory, valid until :meth:`reset`."""
        while True:
            if self._block == len(self._blocks):
                self._blocks.append(np.empty(max(_ARENA_BLOCK_BYTES, nbytes), dtype=np.uint8))
            block = self._blocks[self._block]
            if self._at + nbytes <= block.nbytes:
                break
            self._block, self._at = self._block + 1, 0  # (a block too small is skipped)
        self._at += nbytes
        return block[self._at - nbytes:self._at]

    def put(self, data: np.ndarray) -> np.ndarray:
        """A copy of ``data`` (``uint8``) in the arena, valid until :meth:`reset`."""
        view = self.take(data.nbytes)
        view[...] = data
        return view


@dataclass(frozen=True)
class ShardingCodec(ArrayBytesCodec):
    """Store inner chunks of ``chunk_shape``, each encoded with ``codecs``, in one shard.

    Parameters
    ----------
    chunk_shape
        Shape of the inner chunks; must divide the shard shape (the array's chunk shape).
    codecs
        The inner chunks' codec chain (dicts, names or codec objects; any chain zarr3c
        supports, nested sharding included).
    index_codecs
        The index's codec chain; its encoded size must be fixed (``bytes`` + ``crc32c``).
    index_location
        ``"end"`` (default) or ``"start"``.

    Notes
    -----
    :class:`~zarr3c.codecs.pipeline.CodecPipeline` calls :meth:`evolve`, which resolves the
    inner and index chains for the array's data type and fill value; the partial-read
    methods that take only a shard shape need that evolved codec (``pipeline.array_bytes``).
    """

    name: ClassVar[str] = "sharding_indexed"

    chunk_shape: tuple[int, ...]
    codecs: tuple[Codec, ...] = field(default=())
    index_codecs: tuple[Codec, ...] = field(default=())
    index_location: IndexLocation = "end"
    #: JSON path of this codec object, named by errors
    path: str = field(default="sharding_indexed", compare=False, repr=False)
    _inner: CodecPipeline | None = field(default=None, compare=False, repr=False)
    _index: CodecPipeline | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "chunk_shape", _parse_chunk_shape(self.chunk_shape, path=self.path))
        set_(self, "codecs", _as_codecs(
            self.codecs or _DEFAULT_CODECS, path=f"{self.path}.configuration.codecs"))
        set_(self, "index_codecs", _as_codecs(
            self.index_codecs or _DEFAULT_INDEX_CODECS,
            path=f"{self.path}.configuration.index_codecs"))
        parse_choice_field(
            self.index_location, ("start", "end"), path=f"{self.path}.configuration.index_location"
        )
        set_(self, "_cache_lock", threading.Lock())
        set_(self, "_cache", {})
        set_(self, "_layouts", {})

    def __reduce__(self) -> tuple[Any, ...]:
        # The cached pipelines hold locks: pickle the configuration and, for an evolved
        # codec, the data type and fill value to evolve it again.
        inner = self._inner
        state = None if inner is None else (inner.dtype.str, inner.fill_value.tobytes())
        return (_restore_codec, (self.to_dict()["configuration"], self.path, state))

    # -- metadata ---------------------------------------------------------------------------------

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> ShardingCodec:
        config = check_config_keys(
            configuration,
            path=path,
            required=("chunk_shape",),
            optional=("codecs", "index_codecs", "index_location"),
        )
        # zarr-python writes every field, tensorstore leaves out index_location "end"; a
        # missing optional field takes zarr-python's default.
        codecs = config.get("codecs", _DEFAULT_CODECS)
        index_codecs = config.get("index_codecs", _DEFAULT_INDEX_CODECS)
        for key, value in (("codecs", codecs), ("index_codecs", index_codecs)):
            if isinstance(value, list | tuple) and len(value) == 0:
                raise MetadataError(
                    "must not be empty (it needs an array->bytes codec)",
                    path=f"{path}.configuration.{key}",
                )
        return cls(
            chunk_shape=config["chunk_shape"],
            codecs=parse_codecs(codecs, path=f"{path}.configuration.codecs"),
            index_codecs=parse_codecs(index_codecs, path=f"{path}.configuration.index_codecs"),
            index_location=config.get("index_location", "end"),
            path=path,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "configuration": {
                "chunk_shape": list(self.chunk_shape),
                "codecs": [c.to_dict() for c in self.codecs],
                "index_codecs": [c.to_dict() for c in self.index_codecs],
                "index_location": self.index_location,
            },
        }

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        """Resolve the inner chain for the array's data type and fill value (which evolves the
        inner codecs, e.g. blosc's typesize) and the index chain for ``uint64``."""
        inner = CodecPipeline.from_codecs(
            self.codecs,
            dtype=spec.dtype,
            fill_value=spec.fill_value,
            path=f"{self.path}.configuration.codecs",
        )
        index = self._make_index_pipeline()
        return replace(self, codecs=inner.codecs, index_codecs=index.codecs,
                       _inner=inner, _index=index)

    def _make_index_pipeline(self) -> CodecPipeline:
        return CodecPipeline.from_codecs(
            self.index_codecs,
            dtype=_U64,
            fill_value=_MISSING_FILL,
            path=f"{self.path}.configuration.index_codecs",
        )

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        """Check the inner chunk shape divides the shard shape, the inner chain takes inner
        chunks, and the index chain takes the index and has a fixed encoded size."""
        cps = self._chunks_per_shard(spec.shape, path=path)
        self._inner_pipeline(spec).validate(
            self.chunk_shape, path=f"{path}.configuration.codecs"
        )
        index = self._index_pipeline()
        index_path = f"{path}.configuration.index_codecs"
        index.validate((*cps, 2), path=index_path)
        if index.encoded_size((*cps, 2)) is None:
            raise MetadataError(
                "the index codecs must have a fixed encoded size (e.g. bytes, or bytes + "
                f"crc32c), got {[c.name for c in self.index_codecs]}",
                path=index_path,
            )

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return None  # omitted inner chunks and compression make it vary

    # -- pipelines and shapes ---------------------------------------------------------------------

    def _inner_pipeline(self, spec: ChunkSpec) -> CodecPipeline:
        inner = self._inner
        if (
            inner is not None
            and inner.dtype == spec.dtype
            and inner.fill_value.tobytes() == spec.fill_value.tobytes()
        ):
            return inner
        # Not evolved for this data type (a codec used on its own): resolve and keep it.
        dtype = native_dtype(spec.dtype)
        key = (dtype.str, spec.fill_value.tobytes())
        cache: dict[Any, CodecPipeline] = self._cache  # type: ignore[attr-defined]
        pipeline = cache.get(key)
        if pipeline is None:
            pipeline = CodecPipeline.from_codecs(
                self.codecs, dtype=dtype, fill_value=spec.fill_value,
                path=f"{self.path}.configuration.codecs",
            )
            with self._cache_lock:  # type: ignore[attr-defined]
                cache[key] = pipeline
        return pipeline

    def _index_pipeline(self) -> CodecPipeline:
        if self._index is not None:
            return self._index
        cache: dict[Any, CodecPipeline] = self._cache  # type: ignore[attr-defined]
        pipeline = cache.get("index")
        if pipeline is None:
            pipeline = self._make_index_pipeline()
            with self._cache_lock:  # type: ignore[attr-defined]
                cache["index"] = pipeline
        return pipeline

    def _evolved_pipeline(self) -> CodecPipeline:
        if self._inner is None:
            raise RuntimeError(
                "this sharding codec was not evolved for an array (use the codec found in "
                "CodecPipeline.from_codecs(...).array_bytes)"
            )
        return self._inner

    def _chunks_per_shard(self, shard_shape: Sequence[int], *, path: str | None = None) -> Coords:
        field_path = f"{path or self.path}.configuration.chunk_shape"
        shard_shape = tuple(shard_shape)
        if len(shard_shape) != len(self.chunk_shape):
            raise MetadataError(
                f"has {len(self.chunk_shape)} dimensions but the shard (the array's chunk) "
                f"has {len(shard_shape)}: {list(shard_shape)}",
                path=field_path,
            )
        if any(s % c for s, c in zip(shard_shape, self.chunk_shape, strict=True)):
            raise MetadataError(
                f"inner chunk shape {list(self.chunk_shape)} does not divide the shard shape "
                f"{list(shard_shape)} (the array's chunk shape)",
                path=field_path,
            )
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape, strict=True))

    def _layout(self, shard_shape: Sequence[int]) -> _Layout:
        """The cached :class:`_Layout` of a shard of ``shard_shape`` (MetadataError, naming
        the field, if the inner chunk shape does not divide it)."""
        shard_shape = tuple(shard_shape)
        cache: dict[Coords, _Layout] = self._layouts  # type: ignore[attr-defined]
        layout = cache.get(shard_shape)
        if layout is not None:
            return layout
        cps = self._chunks_per_shard(shard_shape)
        size = self._index_pipeline().encoded_size((*cps, 2))
        if size is None:
            raise MetadataError(
                "the index codecs must have a fixed encoded size",
                path=f"{self.path}.configuration.index_codecs",
            )
        index = self._index_pipeline()
        index_fast = None
        serializer = index.array_bytes
        if (
            not index.array_array
            and len(index.bytes_bytes) <= 1
            and all(c.name == "crc32c" for c in index.bytes_bytes)
            and isinstance(serializer, BytesCodec)
            and serializer.endian in ("little", "big")
        ):
            order = "<" if serializer.endian == "little" else ">"
            index_fast = (index.bytes_bytes[0] if index.bytes_bytes else None,
                          np.dtype(f"{order}u8"))
        layout = _Layout(
            chunks_per_shard=cps,
            index_shape=(*cps, 2),
            index_nbytes=size,
            index_range=(0, size) if self.index_location == "start" else (-size, None),
            read_whole=self.index_location == "end"
            and not any(c.name == "crc32c" for c in self.index_codecs),
            index_fast=index_fast,
        )
        with self._cache_lock:  # type: ignore[attr-defined]
            if len(cache) >= 256:  # many edge-shard shapes (rectilinear grids): start afresh
                cache.clear()
            cache[shard_shape] = layout
        return layout

    def chunks_per_shard(self, shard_shape: Sequence[int]) -> Coords:
        """The shape of the inner chunk grid of a shard of ``shard_shape``.

        Raises
        ------
        MetadataError
            If ``chunk_shape`` does not divide ``shard_shape`` (names the field).
        """
        return self._layout(shard_shape).chunks_per_shard

    def index_nbytes(self, shard_shape: Sequence[int]) -> int:
        """The size in bytes of the encoded index of a shard of ``shard_shape``."""
        return self._layout(shard_shape).index_nbytes

    # -- encode -----------------------------------------------------------------------------------

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Encode a shard: its non-fill inner chunks, in C order, and the index.

        A shard whose inner chunks all equal the fill value encodes to its index alone
        (every entry missing), a valid shard.
        """
        chunk = np.ascontiguousarray(chunk)
        itemsize = chunk.dtype.itemsize
        parts, _ = self._encode_strided(
            self._inner_pipeline(spec), as_byte_array(chunk), 0,
            c_strides(spec.shape, itemsize), tuple(spec.shape), tuple(spec.shape), None,
        )
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def encode_region(
        self,
        src: np.ndarray,
        src_offset: int,
        src_strides: Sequence[int] | np.ndarray,
        counts: Sequence[int],
        shard_shape: Sequence[int],
        arena: PartArena | None = None,
    ) -> tuple[list[np.ndarray], int]:
        """Encode a shard straight from a strided region of a caller's buffer.

        The shard's elements ``[0, counts)`` (per dimension) are read from ``src`` (a 1-d
        ``uint8`` buffer: element ``idx`` at byte ``src_offset + idx . src_strides``; zero
        strides repeat an element); the rest of the shard is the fill value.  Each inner
        chunk is copied into a per-worker scratch buffer (or, for a ``bytes``-only inner
        chain, straight into its place in the shard), checked against the fill value and
        encoded.  The shard comes back as its parts: a ``bytes``-only chain's one buffer of
        raw inner chunks (and the index), or else each inner chunk's encoding and the index,
        in the shard's order, never joined (``Store.set_parts`` writes them one after
        another).  So a whole write holds the shard's encoded pieces once, never a decoded
        copy or an assembled copy of them.  Needs the evolved codec (see the class notes).

        With ``arena`` (the calling thread's, see :class:`PartArena`), the parts are kept in
        it, reset first: they are valid until the caller's next shard in that arena.  Inner
        chunks encoded on other threads (a shard encoded by the pool, when the caller is not
        a pool worker) are not put in the arena.

        Returns
        -------
        (list of numpy.ndarray, int)
            The shard's bytes as ``uint8`` parts whose concatenation is the shard (inner
            chunks in C order and the index where ``index_location`` puts it), and how many
            inner chunks it stores (0: every inner chunk equals the fill value, the shard is
            its index alone).

        Raises
        ------
        ValueError
            From the copy kernel, if the region does not lie inside ``src``.
        """
        if arena is not None:
            arena.reset()
        return self._encode_strided(self._evolved_pipeline(), src, int(src_offset),
                                    [int(s) for s in src_strides],
                                    tuple(int(n) for n in counts), tuple(shard_shape), arena)

    def _encode_strided(
        self,
        inner: CodecPipeline,
        src: np.ndarray,
        src_offset: int,
        src_strides: Sequence[int],
        counts: tuple[int, ...],
        shard_shape: tuple[int, ...],
        arena: PartArena | None,
    ) -> tuple[list[np.ndarray], int]:
        """See :meth:`encode_region`."""
        cps = self._chunks_per_shard(shard_shape)
        index = ShardIndex.empty(cps)
        index_n = self.index_nbytes(shard_shape)
        base = index_n if self.index_location == "start" else 0
        itemsize = inner.dtype.itemsize
        inner_shape = self.chunk_shape
        inner_nbytes = math.prod(inner_shape) * itemsize
        inner_strides = np.asarray(c_strides(inner_shape, itemsize), dtype=np.int64)
        fill_bytes = as_byte_array(inner.fill_value)
        src_steps = np.asarray(src_strides, dtype=np.int64)

        # Inner chunks holding some of the region, in C order, with their source offsets and
        # the extents that lie inside it; the others are all fill, so missing.
        todo: list[tuple[Coords, int, np.ndarray, bool]] = []
        for coords in np.ndindex(*cps):
            origin = [i * c for i, c in zip(coords, inner_shape, strict=True)]
            extent = [min(c, n - o) for o, c, n in zip(origin, inner_shape, counts, strict=True)]
            if min(extent, default=1) <= 0:
                continue
            offset = src_offset + sum(o * s for o, s in zip(origin, src_strides, strict=True))
            full = all(e == c for e, c in zip(extent, inner_shape, strict=True))
            todo.append((coords, offset, int64_array(extent), full))

        def load(dst: np.ndarray, at: int, item: tuple[Coords, int, np.ndarray, bool]) -> bool:
            """Put inner chunk ``item`` at ``dst[at:]``; True unless it is all fill."""
            _, offset, extent, full = item
            if not itemsize:  # elements without bytes: nothing to copy or compare
                return True
            if not full:
                fill_strided(dst, at, inner_strides, int64_array(inner_shape), fill_bytes)
            copy_strided(src, offset, src_steps, dst, at, inner_strides, extent, itemsize)
            return not is_uniform(dst[at:at + inner_nbytes], fill_bytes)

        nbytes = len(todo) * inner_nbytes
        if inner.stores_raw_elements:
            # The encoding is the elements: each inner chunk is copied into its own slot of
            # the shard, then the slots of fill-only chunks are squeezed out.
            total = base + len(todo) * inner_nbytes + index_n
            out = np.empty(total, dtype=np.uint8) if arena is None else arena.take(total)

            def place(j: int) -> bool:
                return load(out, base + j * inner_nbytes, todo[j])

            kept = _fan_out(place, list(range(len(todo))), nbytes)
            pos = base
            for j, keep in enumerate(kept):
                if not keep:
                    continue
                slot = base + j * inner_nbytes
                if slot != pos:  # slots move down by whole slots: never overlapping
                    out[pos:pos + inner_nbytes] = out[slot:slot + inner_nbytes]
                index.entries[todo[j][0]] = (pos, inner_nbytes)
                pos += inner_nbytes
            count = sum(kept)
            index_bytes = self._encode_index(index, index_n)
            if self.index_location == "start":
                out[:index_n] = index_bytes
                return [out[:pos]], count
            out[pos:pos + index_n] = index_bytes
            return [out[:pos + index_n]], count
        encoded = self._encode_pieces(inner, todo, load, inner_nbytes, nbytes, arena)
        stored = {item[0]: piece for item, piece in zip(todo, encoded, strict=True)
                  if piece is not None}
        return self._shard_parts(stored, shard_shape), len(stored)

    def _encode_index(self, index: ShardIndex, index_n: int) -> np.ndarray:
        """The index's bytes, checked to be the ``index_n`` bytes its codecs promise."""
        index_bytes = as_byte_array(self._index_pipeline().encode(index.entries))
        if index_bytes.nbytes != index_n:  # a third-party codec misreported its encoded size
            raise CodecError(
                f"sharding_indexed: the index codecs wrote {index_bytes.nbytes} bytes, "
                f"expected {index_n}"
            )
        return index_bytes

    def _encode_pieces(
        self,
        inner: CodecPipeline,
        todo: list[tuple[Coords, int, np.ndarray, bool]],
        load: Callable[[np.ndarray, int, Any], bool],
        inner_nbytes: int,
        nbytes: int,
        arena: PartArena | None = None,
    ) -> list[np.ndarray | None]:
        """Encode inner chunks through a per-worker scratch buffer: each one's encoding (None
        for a fill-only one), in the order of ``todo``; kept in ``arena`` (the calling
        thread's) when the calling thread encodes them all.

        Workers take inner chunks in C order from a shared counter, so a shard of many small
        inner chunks costs one task hand-off per worker, not one per chunk.
        """
        pieces: list[np.ndarray | None] = [None] * len(todo)
        counter = itertools.count()
        threads = get_num_threads()
        workers = 1 if len(todo) <= 1 or nbytes < _PARALLEL_MIN_BYTES else threads
        if workers > 1 and not in_worker():
            arena = None  # (the pool's threads would share the caller's arena)

        def work(_: int) -> None:
            scratch = np.empty(inner_nbytes, dtype=np.uint8)
            chunk = scratch.view(inner.dtype).reshape(self.chunk_shape) if inner_nbytes \
                else np.empty(self.chunk_shape, dtype=inner.dtype)
            while (j := next(counter)) < len(todo):
                if load(scratch, 0, todo[j]):
                    # copied: the encoding may alias the scratch buffer (a bytes-only chain),
                    # or be in the thread's scratch memory when the arena keeps it
                    encoded = as_byte_array(inner.encode_to_scratch(chunk) if arena is not None
                                            else inner.encode(chunk))
                    if arena is not None:
                        pieces[j] = arena.put(encoded)
                    elif np.may_share_memory(encoded, scratch):
                        pieces[j] = encoded.copy()
                    else:
                        pieces[j] = encoded

        map_unordered(work, range(workers))
        return pieces

    def _shard_parts(
        self, pieces: Mapping[Coords, np.ndarray], shard_shape: Sequence[int]
    ) -> list[np.ndarray]:
        """The shard holding ``pieces`` (encoded inner chunks by coords, ``uint8``) as its
        parts, never joined: the encodings in C order of their coords, and the index where
        ``index_location`` puts it."""
        index = ShardIndex.empty(self._chunks_per_shard(shard_shape))
        index_n = self.index_nbytes(shard_shape)
        pos = index_n if self.index_location == "start" else 0
        order = sorted(pieces)
        for coords in order:
            index.entries[coords] = (pos, pieces[coords].nbytes)
            pos += pieces[coords].nbytes
        data = [pieces[coords] for coords in order]
        index_bytes = self._encode_index(index, index_n)
        return [index_bytes, *data] if self.index_location == "start" else [*data, index_bytes]

    def update_shard(
        self,
        data: bytes | bytearray | memoryview | np.ndarray | None,
        shard_shape: Sequence[int],
        updates: Mapping[Sequence[int], np.ndarray | None],
        *,
        key: str | None = None,
    ) -> np.ndarray | None:
        """A stored shard with some inner chunks replaced, the others' bytes kept verbatim.

        A partial write without decoding (and re-encoding) the inner chunks it does not
        touch.  Needs the evolved codec (see the class notes).

        Parameters
        ----------
        data
            The shard's stored bytes, or None if the shard does not exist yet.
        shard_shape
            The shard's shape.
        updates
            ``inner coords -> new inner chunk`` (an array of ``chunk_shape``), or None to
            remove it; an inner chunk equal to the fill value is removed too.
        key
            The shard's store key, named by errors.

        Returns
        -------
        numpy.ndarray or None
            The new shard's bytes, or None when no inner chunk is left (the caller erases the
            shard).

        Raises
        ------
        ChunkDecodeError
            The stored shard's index is malformed (naming ``key``).
        IndexingError
            Inner coords outside the shard's inner grid.
        ShapeMismatchError
            An inner chunk of the wrong shape.
        """
        inner = self._evolved_pipeline()
        cps = self._chunks_per_shard(shard_shape)
        pieces: dict[Coords, np.ndarray] = {}
        if data is not None:
            with _naming(key):
                buf = as_byte_array(data)
                index = self._decode_index_from_shard(buf, shard_shape)
            for c in np.argwhere(index.present):
                coords = tuple(int(i) for i in c)
                offset, n = index.get(coords)  # type: ignore[misc]
                pieces[coords] = buf[offset:offset + n]
        todo: list[tuple[Coords, np.ndarray]] = []
        for raw_coords, arr in updates.items():
            coords = tuple(int(i) for i in raw_coords)
            if len(coords) != len(cps) or not all(
                0 <= i < n for i, n in zip(coords, cps, strict=True)
            ):
                raise IndexingError(
                    f"inner chunk {coords} is outside the shard's inner chunk grid {list(cps)}"
                )
            pieces.pop(coords, None)
            if arr is None:
                continue
            arr = np.asarray(arr)
            if arr.shape != self.chunk_shape:
                raise ShapeMismatchError(
                    f"inner chunk {coords} has shape {list(arr.shape)}, expected "
                    f"{list(self.chunk_shape)}"
                )
            todo.append((coords, np.ascontiguousarray(arr, dtype=inner.dtype)))
        fill_bytes = as_byte_array(inner.fill_value)

        def encode_one(task: tuple[Coords, np.ndarray]) -> tuple[Coords, np.ndarray | None]:
            coords, arr = task
            if arr.dtype.itemsize and is_uniform(as_byte_array(arr), fill_bytes):
                return coords, None
            # copy: the encoding may alias the caller's array, which the caller may reuse
            return coords, np.array(as_byte_array(inner.encode(arr)))

        nbytes = len(todo) * math.prod(self.chunk_shape) * inner.dtype.itemsize
        for coords, encoded in _fan_out(encode_one, todo, nbytes):
            if encoded is not None:
                pieces[coords] = encoded
        if not pieces:
            return None
        return np.concatenate(self._shard_parts(pieces, shard_shape))

    def _box(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The region of the shard the inner chunk at ``coords`` covers."""
        return tuple(
            slice(i * c, (i + 1) * c) for i, c in zip(coords, self.chunk_shape, strict=True)
        )

    # -- decode -----------------------------------------------------------------------------------

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Decode a whole shard; missing inner chunks read as the fill value.

        Raises
        ------
        ChunkDecodeError
            (ChecksumError for a bad index checksum) without the shard key, which the
            pipeline adds: a shard shorter than its index, an entry pointing outside the
            shard or into the index, overlapping entries, a corrupt inner chunk (named).
        """
        buf = as_byte_array(data)
        cps = self._chunks_per_shard(spec.shape)
        inner = self._inner_pipeline(spec)
        index = self._decode_index_from_shard(buf, spec.shape)
        present = index.present
        if present.all() and all(n == 1 for n in cps):
            # One inner chunk filling the shard: its decoding is the shard.
            return self._decode_inner_with(inner, buf, (0,) * len(cps), index)
        out = np.empty(spec.shape, dtype=spec.dtype)
        if not present.all():
            _fill(out, spec.fill_value)
        coords_list = [tuple(int(i) for i in c) for c in np.argwhere(present)]

        def decode_one(coords: Coords) -> None:
            out[self._box(coords)] = self._decode_inner_with(inner, buf, coords, index)

        _fan_out(decode_one, coords_list, spec.nbytes)
        return out

    def _decode_index_from_shard(self, buf: np.ndarray, shard_shape: Sequence[int]) -> ShardIndex:
        n = self.index_nbytes(shard_shape)
        size = buf.nbytes
        if size < n:
            raise ChunkDecodeError(
                f"sharding_indexed: the shard has {size} bytes, shorter than its index "
                f"({n} bytes)"
            )
        raw = buf[:n] if self.index_location == "start" else buf[size - n:]
        return self.decode_index(raw, shard_shape, shard_nbytes=size)

    def decode_index(
        self,
        data: bytes | bytearray | memoryview | np.ndarray,
        shard_shape: Sequence[int],
        *,
        shard_nbytes: int | None = None,
    ) -> ShardIndex:
        """Decode and check an encoded index (exactly :meth:`index_nbytes` bytes).

        Parameters
        ----------
        data
            The encoded index.
        shard_shape
            The shard's shape.
        shard_nbytes
            The shard's size in bytes when known: entries must then lie inside the shard and
            outside the index.  Without it, only what the index alone shows is checked
            (well-formed entries that do not overlap each other nor, at the start, the index).

        Raises
        ------
        ChunkDecodeError
            A wrong size, a bad entry (naming the inner chunk); ChecksumError for a crc32c
            mismatch.
        """
        # (a writable copy, owned)
        return self._checked_index(as_byte_array(data), shard_shape, shard_nbytes, copy=True)

    def check_index(self, data: np.ndarray, shard_shape: Sequence[int], shard_nbytes: int
                    ) -> None:
        """:meth:`decode_index` of a ``uint8`` array without keeping what it decodes (a
        small read checks the index its parts were read through).

        Raises
        ------
        As :meth:`decode_index`.
        """
        self._checked_index(data, shard_shape, shard_nbytes, copy=False)

    def _checked_index(self, buf: np.ndarray, shard_shape: Sequence[int],
                       shard_nbytes: int | None, *, copy: bool) -> ShardIndex:
        """The index ``buf`` encodes, checked: its entries a native ``uint64`` copy, or
        without ``copy`` a view of ``buf`` where they are stored natively."""
        layout = self._layout(shard_shape)
        n = layout.index_nbytes
        if buf.nbytes != n:
            raise ChunkDecodeError(
                f"sharding_indexed: the shard index has {buf.nbytes} bytes, expected {n}"
            )
        fast = layout.index_fast
        try:
            if fast is None:
                entries = self._index_pipeline().decode(buf, layout.index_shape)
            else:  # what the pipeline does for bytes [+ crc32c], without its layers
                crc, stored = fast
                payload = buf if crc is None else crc.decode(buf)  # type: ignore[attr-defined]
                entries = payload.view(stored).reshape(layout.index_shape)
        except ChunkDecodeError as exc:
            cls = ChecksumError if isinstance(exc, ChecksumError) else ChunkDecodeError
            raise cls(f"sharding_indexed: shard index: {exc}") from exc
        index = ShardIndex(np.array(entries, dtype=_U64) if copy
                           else np.asarray(entries, dtype=_U64))
        self._check_index(index, shard_nbytes, n)
        return index

    def _check_index(self, index: ShardIndex, shard_nbytes: int | None, index_n: int) -> None:
        # One pass of the shard kernel finds the first problem, in the order these checks
        # report them (half-missing entry, outside the shard, into the index, overlaps).
        entries = index.entries
        if self.index_location == "start":
            lo, hi = 0, index_n
        elif shard_nbytes is not None:
            lo, hi = shard_nbytes - index_n, shard_nbytes
        else:
            lo = hi = -1
        # An unknown size is at most the largest file offset: entries past it cannot be
        # read, and readers take offsets as int64.
        code, a, b = check_shard_index(
            entries.reshape(-1, 2), _LARGEST_SHARD if shard_nbytes is None else shard_nbytes,
            lo, hi
        )
        if code == 0:
            return
        cps = index.chunks_per_shard
        first = tuple(int(i) for i in np.unravel_index(a, cps))
        offset, nbytes = (int(v) for v in entries[first])
        if code == 1:
            raise ChunkDecodeError(
                f"sharding_indexed: index entry of inner chunk {first} is "
                f"(offset {offset}, nbytes {nbytes}): only one of "
                "them is the missing-chunk marker 2**64-1"
            )
        if code == 2 and shard_nbytes is not None:
            raise ChunkDecodeError(
                f"sharding_indexed: inner chunk {first} (offset {offset}, "
                f"nbytes {nbytes}) lies outside the shard of {shard_nbytes} bytes"
            )
        if code == 2:
            raise ChunkDecodeError(
                f"sharding_indexed: inner chunk {first} (offset {offset}, "
                f"nbytes {nbytes}) ends beyond any possible shard (2**63 - 1 bytes)"
            )
        if code == 3:
            raise ChunkDecodeError(
                f"sharding_indexed: inner chunk {first} (offset {offset}, "
                f"nbytes {nbytes}) overlaps the shard index (bytes {lo}..{hi})"
            )
        second = tuple(int(i) for i in np.unravel_index(b, cps))
        offset_b, nbytes_b = (int(v) for v in entries[second])
        raise ChunkDecodeError(
            f"sharding_indexed: inner chunks {first} (offset {offset}, nbytes "
            f"{nbytes}) and {second} (offset {offset_b}, nbytes "
            f"{nbytes_b}) overlap"
        )

    def _decode_inner_with(
        self, inner: CodecPipeline, buf: np.ndarray, coords: Coords, index: ShardIndex
    ) -> np.ndarray:
        entry = index.get(coords)
        assert entry is not None
        offset, n = entry
        return _decode_inner_bytes(inner, buf[offset:offset + n], self.chunk_shape, coords)

    def is_empty_shard(
        self, data: bytes | memoryview | np.ndarray, shard_shape: Sequence[int]
    ) -> bool:
        """Whether an encoded shard holds no inner chunk (all read as the fill value).

        Raises
        ------
        ChunkDecodeError
            If the shard's index is malformed.
        """
        return self._decode_index_from_shard(as_byte_array(data), shard_shape).all_missing

    def inner_batch_kernels(self) -> Any | None:
        """The evolved inner pipeline's ``batch_kernels``: where its inner chunks (native
        elements under zstd) can be decoded in batches and parts of each copied out in one
        call, the module with those calls, else None.  Needs the evolved codec."""
        return self._evolved_pipeline().batch_kernels

    def stores_raw_inner_chunks(self) -> bool:
        """Whether inner chunks are stored as their elements' native bytes in C order (a
        ``bytes``-only inner chain needing no byte swap): they can then be read element by
        element, by byte offset, without decoding.  Needs the evolved codec."""
        return self._evolved_pipeline().stores_raw_elements

    def plain_index(self, shard_shape: Sequence[int]) -> tuple[int, bool] | None:
        """``(index bytes, at the end)`` when a shard's index stores its entries as plain
        little-endian ``uint64`` pairs from its first byte (the ``bytes`` [+ ``crc32c``]
        index chain that writers use): a reader may then take an entry's offset and size
        from the index bytes before decoding them (``fileio.read_shard_parts``), provided
        it checks them with :meth:`decode_index` before using what it read.  Else None."""
        layout = self._layout(shard_shape)
        fast = layout.index_fast
        if fast is None or fast[1] != np.dtype("<u8"):
            return None
        return layout.index_nbytes, self.index_location == "end"

    # -- partial reads ----------------------------------------------------------------------------

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
            Reads byte ranges of the shard (:data:`GetRanges`).
        shard_shape
            The shard's shape (the array's chunk shape).
        key
            The shard's store key, named by errors.

        Raises
        ------
        ChunkDecodeError
            Naming ``key``: the shard is shorter than its index, or the index is malformed
            (ChecksumError for a crc32c mismatch).
        """
        layout = self._layout(shard_shape)
        n = layout.index_nbytes
        if layout.read_whole:
            # Without a checksum, an index read from the end of a truncated shard would be
            # other bytes taken for an index: only the shard's size can tell, so read it all.
            (whole,) = get_ranges([(0, None)])
            if whole is None:
                return None
            try:
                return self._decode_index_from_shard(as_byte_array(whole), shard_shape)
            except ChunkDecodeError as exc:
                raise _renamed(exc, key)  # noqa: B904 - its cause is set
        (raw,) = get_ranges([layout.index_range])
        if raw is None:
            return None
        try:
            buf = as_byte_array(raw)
            if buf.nbytes < n:
                raise ChunkDecodeError(
                    f"sharding_indexed: the shard has {buf.nbytes} bytes, shorter than its "
                    f"index ({n} bytes)"
                )
            return self.decode_index(buf, shard_shape)
        except ChunkDecodeError as exc:
            raise _renamed(exc, key)  # noqa: B904 - its cause is set

    def inner_chunks_for_region(
        self, shard_shape: Sequence[int], region: Sequence[slice | tuple[int, int]]
    ) -> list[Coords]:
        """The inner chunks (C order) holding at least one element of ``region``.

        ``region`` gives per dimension a ``slice`` (``step >= 1``; bounds as numpy takes
        them) or a ``(start, stop)`` pair, within the shard.
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
        request stays within ``max_length`` bytes (None: no bound).
        """
        found = []
        for coords in inner_coords:
            coords = tuple(int(c) for c in coords)
            entry = index.get(coords)
            if entry is not None:
                found.append((entry[0], entry[1], coords))
        found.sort()
        return _coalesce(found, max_gap, max_length)

    def decode_inner(
        self, data: bytes | bytearray | memoryview | np.ndarray, coords: Sequence[int] = ()
    ) -> np.ndarray:
        """Decode one inner chunk's stored bytes into an array of ``chunk_shape``.

        ``coords`` (its position in the shard) only names it in errors.  Needs the evolved
        codec (see the class notes).

        Raises
        ------
        ChunkDecodeError
            Naming the inner chunk.
        """
        return _decode_inner_bytes(
            self._evolved_pipeline(), as_byte_array(data), self.chunk_shape, tuple(coords)
        )

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
        """Read and decode some inner chunks of a shard, handing each to
        ``sink(coords, chunk)`` as soon as it is decoded (``chunk`` None for an inner chunk
        that is not stored: it reads as the fill value).

        The index is read first (unless given); then the coalesced byte ranges of the stored
        inner chunks are fetched in batches of at most ``max_request`` bytes (default
        :data:`MAX_REQUEST_BYTES`), each batch decoded over the thread pool with ``sink``
        called in the worker that decoded the chunk, so a read of a large shard holds one
        batch of stored bytes and one decoded inner chunk per worker, never the whole shard.
        ``sink`` may be called from several threads at once, once per inner chunk, and
        must copy what it keeps: a chunk may be a view of scratch memory that the thread
        reuses (its stored bytes read through :class:`StoreRanges`, or it decoded into
        :func:`~zarr3c._buffers.thread_scratch`), unless ``scratch`` is False.
        ``batch_sink``, where given, is handed the ``(coords, stored bytes)`` of a batch of
        stored inner chunks first (in the worker that fetched them: a few calls per shard
        rather than one per inner chunk) and returns those it left for the decode and
        ``sink`` above (any it cannot decode, which the decode then reports).

        Returns
        -------
        bool
            False if the whole shard is missing (``sink`` is then never called).

        Raises
        ------
        ChunkDecodeError
            Naming ``key`` (and the inner chunk): malformed index, a range past the end of
            the shard, a corrupt inner chunk.
        """
        if max_request is None:
            max_request = MAX_REQUEST_BYTES
        wanted = list(dict.fromkeys(tuple(int(c) for c in coords) for coords in inner_coords))
        if index is None:
            index = self.read_index(get_ranges, shard_shape, key=key)
            if index is None:
                return False
        entries = index.entries
        found: list[tuple[int, int, Coords]] = []
        for coords in wanted:
            offset, n = entries[coords].tolist()
            if offset == MISSING:
                sink(coords, None)
            else:
                found.append((offset, n, coords))
        if not found:
            return True
        inner = self._evolved_pipeline()
        chunk_shape = self.chunk_shape
        dtype = inner.dtype
        chunk_nbytes = math.prod(chunk_shape) * dtype.itemsize
        # A chain whose serializer stores the raw elements (``bytes`` in native order, then
        # any compressors) decodes to a view of its bytes->bytes codecs' output: take that
        # view here rather than through the pipeline's layers.  Anything unexpected (a failing
        # codec, the wrong size) goes through the pipeline again, which reports it.
        raw_chain = _raw_chain(inner)

        # Decoded only to be copied out: where the inner codecs can, into this thread's
        # memory for it (no fresh memory per inner chunk), as Array._read_chunk does.
        into_scratch = scratch and inner.can_decode_into

        def decode_one(task: tuple[Coords, np.ndarray]) -> None:
            coords, raw = task
            if into_scratch:
                out = thread_scratch(chunk_nbytes, "inner")
                if inner.decode_into(raw, out):
                    sink(coords, out.view(dtype).reshape(chunk_shape))
                    return
            if raw_chain is not None:
                try:
                    buf: Any = raw
                    for codec in raw_chain:
                        buf = codec.decode(buf)
                    buf = as_byte_array(buf)
                except Exception:  # noqa: BLE001 - decoded again below, which reports it
                    buf = None
                if buf is not None and buf.nbytes == chunk_nbytes:
                    sink(coords, buf.view(dtype).reshape(chunk_shape))
                    return
            sink(coords, _decode_inner_bytes(inner, raw, chunk_shape, coords))

        into = get_ranges.into if scratch and isinstance(get_ranges, StoreRanges) else None
        if len(found) == 1:  # one inner chunk: one request, no grouping
            offset, n, coords = found[0]
            (value,) = (None if into is None else into([(offset, n)])) or get_ranges(
                [(offset, n)])
            try:
                buf = _check_range(value, coords, offset, n, 0, n)
                decode_one((coords, buf if buf.nbytes == n else buf[:n]))
            except ChunkDecodeError as exc:
                raise _renamed(exc, key)  # noqa: B904 - its cause is set
            return True
        found.sort()
        threads = get_num_threads()
        if threads > 1 and len(found) * chunk_nbytes >= _PARALLEL_MIN_BYTES:
            # Each worker fetches and decodes batches of its own, so reading, decoding and
            # copying overlap across workers; smaller batches keep the bytes held at once
            # (one batch per worker) within max_request.
            part = min(max_request, max(max_request // (2 * threads), _MIN_WORKER_BATCH))
        else:
            part = max_request
        groups = _coalesce(found, max_gap, part)
        batches = [groups[lo:hi] for lo, hi in pack_runs([g.length for g in groups], part)]

        def fetch(batch: list[ByteRangeGroup]) -> list[tuple[Coords, np.ndarray]]:
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

        def run_tasks(tasks: list[tuple[Coords, np.ndarray]]) -> None:
            for task in tasks if batch_sink is None else batch_sink(tasks):
                decode_one(task)

        def run_batch(batch: list[ByteRangeGroup]) -> None:
            run_tasks(fetch(batch))

        try:
            if part < max_request and len(batches) > 1:
                map_unordered(run_batch, batches)
            else:
                for batch in batches:
                    tasks = fetch(batch)
                    _fan_out_parts(run_tasks, tasks, len(tasks) * chunk_nbytes)
                    del tasks  # this batch's bytes go before the next batch is fetched
        except ChunkDecodeError as exc:
            raise _renamed(exc, key)  # noqa: B904 - its cause is set
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
        """:meth:`read_inner_chunks_into` collected into a dict ``coords -> decoded inner
        chunk`` (None for one that is not stored); None if the whole shard is missing."""
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
        """``shard[region]``: only the index and the inner chunks holding selected elements
        are fetched and decoded, each copied into the result as soon as it is decoded.

        ``region`` gives per dimension a ``slice`` (``step >= 1``) or ``(start, stop)``;
        the result has numpy's shape for ``shard[slices]`` (no dimension dropped).  Returns
        None if the shard is missing (the caller fills with the fill value).
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
                _fill(dst, inner.fill_value)
            else:
                dst[...] = chunk[tuple(p[2] for p in combo)]

        found = self.read_inner_chunks_into(get_ranges, shard_shape, pieces, place, key=key,
                                            max_gap=max_gap)
        return out if found else None

    def project_region(
        self, shard_shape: Sequence[int], region: Sequence[slice | tuple[int, int]]
    ) -> list[list[tuple[int, slice, slice]]]:
        """Per dimension, ``(inner chunk index, slice of the output, slice of the inner chunk)``
        for each inner chunk the region's selection touches (the output being
        ``shard[region]``; slices have ``step >= 1``)."""
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
        """:meth:`project_region` for a strided selection given as integers: per dimension
        the ``(start, step)`` run (``step >= 1``) of ``count`` elements in the shard, split
        into ``(inner chunk index, position in the selection of its first element, number of
        elements, index of that first element in the inner chunk)`` per inner chunk touched,
        in increasing order.  Cheaper than slices when planning many small selections.

        Raises
        ------
        IndexingError
            If the runs do not match the shard's dimensions or leave it.
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


# -- helpers ---------------------------------------------------------------------------------------


@contextmanager
def _naming(key: str | None) -> Iterator[None]:
    """Re-raise a ChunkDecodeError without key as one naming ``key`` (the shard)."""
    try:
        yield
    except ChunkDecodeError as exc:
        raise _renamed(exc, key)  # noqa: B904 - its cause is set


def _renamed(exc: ChunkDecodeError, key: str | None) -> ChunkDecodeError:
    """``exc``, or the same error naming ``key`` (the shard) when it names no key (what
    :func:`_naming` does, without a context manager on the per-read path)."""
    if key is None or exc.key is not None:
        return exc
    new = type(exc)(str(exc), key=key)
    new.__cause__ = exc
    return new


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


def _coalesce(
    found: list[tuple[int, int, Coords]], max_gap: int, max_length: int | None
) -> list[ByteRangeGroup]:
    """Requests for ``(offset, nbytes, coords)`` of stored inner chunks sorted by offset:
    neighbours at most ``max_gap`` bytes apart share one request of at most ``max_length``
    bytes (None: no bound)."""
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
    at once."""
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


def _raw_chain(pipeline: CodecPipeline) -> tuple[BytesBytesCodec, ...] | None:
    """The bytes->bytes codecs to undo, in decode order, when ``pipeline`` stores chunks as
    its elements' native bytes under them (no array->array codec); else None."""
    if pipeline.array_array or not pipeline.array_bytes.stores_raw_elements(pipeline.dtype):
        return None
    return tuple(reversed(pipeline.bytes_bytes))


def _fill(out: np.ndarray, fill_value: np.ndarray) -> None:
    """Set every element of ``out`` (any view) to the fill value's exact bits."""
    if out.size == 0:
        return
    if out.dtype.kind == "V" or out.dtype.itemsize == 0:
        out[...] = fill_value
    else:
        # Same-dtype assignment copies bits (NaN payloads, -0.0 included).
        np.copyto(out, fill_value, casting="equiv")


def _decode_inner_bytes(
    inner: CodecPipeline, raw: np.ndarray, chunk_shape: tuple[int, ...], coords: Coords
) -> np.ndarray:
    try:
        return inner.decode(raw, chunk_shape)
    except ChunkDecodeError as exc:
        cls = ChecksumError if isinstance(exc, ChecksumError) else ChunkDecodeError
        raise cls(f"sharding_indexed: inner chunk {coords}: {exc}") from exc


def batch_decoder(call: Callable[..., list[int]], chunk_nbytes: int,
                  index: Mapping[Coords, int], bounds: np.ndarray, *args: Any) -> BatchSink:
    """A ``batch_sink`` for :meth:`ShardingCodec.read_inner_chunks_into` that decodes a
    batch of inner chunks and copies their parts out in one kernel call (a batch call of
    :meth:`~zarr3c.codecs.base.BytesBytesCodec.batch_kernels`, no Python between the
    chunks): ``call(frames, scratch, run_starts, run_stops, *args)``, inner chunk ``c``'s
    run being ``bounds[index[c]]`` to ``bounds[index[c] + 1]``.  Returns the tasks the call
    left, for the ordinary decode (which reports them)."""

    def batch_sink(tasks: list[tuple[Coords, np.ndarray]]) -> list[tuple[Coords, np.ndarray]]:
        runs = np.array([index[coords] for coords, _ in tasks], dtype=np.int64)
        left = call([raw for _, raw in tasks], thread_scratch(chunk_nbytes, "inner"),
                    bounds[runs], bounds[runs + 1], *args)
        return [tasks[k] for k in left]

    return batch_sink


def _fan_out(fn: Callable[[Any], Any], items: list[Any], nbytes: int) -> list[Any]:
    """``[fn(x) for x in items]``, in the thread pool when the shard is big enough to gain
    (see :func:`_fan_out_parts`)."""
    done = _fan_out_parts(lambda part: [fn(x) for x in part], items, nbytes)
    return [r for results in done for r in results]


def _fan_out_parts(fn: Callable[[list[Any]], Any], items: list[Any], nbytes: int) -> list[Any]:
    """``fn`` of a few consecutive parts of ``items`` in the thread pool when the shard is
    big enough to gain (:func:`~zarr3c.concurrency.map_parts`: a shard of many small inner
    chunks costs a few task hand-offs, not one per chunk), else ``[fn(items)]``: its results
    in order."""
    if len(items) <= 1 or nbytes < _PARALLEL_MIN_BYTES:
        return [fn(items)]
    return map_parts(fn, items)


def _restore_codec(
    configuration: dict[str, Any], path: str, state: tuple[str, bytes] | None
) -> ShardingCodec:
    codec = ShardingCodec.from_config(configuration, path=path)
    if state is None:
        return codec
    dtype = np.dtype(state[0])
    fill = np.frombuffer(state[1], dtype=dtype).reshape(()).copy()
    return codec.evolve(ChunkSpec(shape=(), dtype=dtype, fill_value=fill))


def partial_read_codec(pipeline: CodecPipeline) -> ShardingCodec | None:
    """The sharding codec of ``pipeline`` if its chunks can be read partially, else None.

    Partial reads by byte range need the shard's stored bytes to be the sharding codec's
    output: the chain must be exactly ``[sharding_indexed]`` (no array -> array codec before
    it, no bytes -> bytes codec after it).
    """
    codec = pipeline.array_bytes
    if isinstance(codec, ShardingCodec) and len(pipeline.codecs) == 1:
        return codec
    return None


def sharding_codec_dict(
    inner_chunks: Sequence[int],
    *,
    filters: Iterable[CodecLike] | CodecLike = (),
    serializer: CodecLike = "auto",
    compressors: Iterable[CodecLike] | CodecLike = "auto",
    index_location: IndexLocation = "end",
    dtype: Any = None,
) -> dict[str, Any]:
    """The ``sharding_indexed`` codec dict for ``create_array(chunks=inner, shards=outer)``.

    As zarr-python 3: the filters, serializer and compressors go inside the shard (they
    encode each inner chunk); the index is ``bytes`` (little endian) + ``crc32c``.

    Parameters
    ----------
    inner_chunks
        The inner chunk shape (``chunks=``).
    filters, serializer, compressors
        As ``create_array`` takes them; ``"auto"`` (and a bare ``"bytes"`` serializer) mean
        zarr-python's defaults for ``dtype``, which is then required.  ``None`` compressors
        mean none.
    index_location
        ``"end"`` (default) or ``"start"``.
    dtype
        The array's data type, needed to resolve ``"auto"``.

    Raises
    ------
    MetadataError
        A bad ``index_location``, an ``"auto"`` without ``dtype``, or an inner chunk shape
        that is not a list of positive integers.
    """
    path = "codecs[0]"
    shape = _parse_chunk_shape(list(inner_chunks), path=path)
    parse_choice_field(index_location, ("start", "end"),
                       path=f"{path}.configuration.index_location")

    if dtype is None:  # the defaults depend on the data type
        if serializer in ("auto", "bytes", {"name": "bytes"}):
            raise MetadataError("serializer 'auto' needs the array's dtype", path=path)
        if isinstance(compressors, str) and compressors == "auto":
            raise MetadataError("compressors 'auto' needs the array's dtype", path=path)
    inner = codec_chain(filters, serializer, compressors, dtype=dtype,
                        path=f"{path}.configuration.codecs")
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(shape),
            "codecs": inner,
            "index_codecs": [dict(c) for c in _DEFAULT_INDEX_CODECS],
            "index_location": index_location,
        },
    }
