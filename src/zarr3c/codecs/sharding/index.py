"""The shard index: its format, where it sits in a shard, its encoding and its checks.

Everything that knows the layout of a ``sharding_indexed`` shard index is here, and nothing
else (spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html).

The entries
    A shard whose inner chunk grid has the shape ``chunks_per_shard`` has one index: a
    ``uint64`` array of shape ``chunks_per_shard + (2,)`` holding, for each inner chunk, the
    byte ``offset`` of its encoding from the start of the shard and its length ``nbytes``.
    ``(MISSING, MISSING)`` (``2**64 - 1`` in both) marks an inner chunk that is not stored:
    it reads as the fill value.  An inner chunk's *slot* is its position in C order of the
    inner grid; :attr:`ShardIndex.flat` is the ``(slots, 2)`` view of the entries by slot.

Where it sits
    The index is encoded with the codec's ``index_codecs``, whose output must have a fixed
    size (``bytes``, optionally followed by ``crc32c``) so that a reader knows where it is:
    the first (``index_location`` ``"start"``) or the last (``"end"``, the default)
    :attr:`IndexLayout.nbytes` bytes of the shard.  Offsets count from the start of the
    shard, so behind an index at the start they begin at its size.

Its checks
    A decoded index is checked in one pass of the ``shard`` kernel
    (:func:`zarr3c._kernels.shard.check_shard_index`) before any byte is read through it: no
    entry half missing, each inside the shard (below ``2**63`` when the shard's size is not
    known), none overlapping the index, no two overlapping each other.  The first problem
    found raises :class:`~zarr3c.errors.ChunkDecodeError` naming the inner chunk(s).

Named types: :class:`ShardIndex` (a decoded index), :class:`IndexLayout` (what a shard of
one shape implies for its index, computed once per shape by :func:`index_layout`) and
:class:`PlainDecode` (how the usual ``bytes`` [+ ``crc32c``] index chain is decoded without
the pipeline's layers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np

from zarr3c._kernels.shard import check_shard_index
from zarr3c.codecs.base import Codec, as_byte_array
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.errors import ChecksumError, ChunkDecodeError, CodecError, MetadataError

__all__ = [
    "DEFAULT_INDEX_CODECS",
    "ENTRY_DTYPE",
    "LARGEST_SHARD",
    "MISSING",
    "IndexLayout",
    "IndexLocation",
    "PlainDecode",
    "ShardIndex",
    "check_entries",
    "check_shard_size",
    "decode_index",
    "encode_index",
    "index_layout",
    "index_of_shard",
    "index_pipeline",
    "plain_index",
]

#: The index entry value (both offset and nbytes) of a missing inner chunk: 2**64 - 1.
MISSING: int = 2**64 - 1

#: The data type of the decoded entries (native ``uint64``).
ENTRY_DTYPE = np.dtype("uint64")

#: The index chain writers use, and the default of a configuration without one.
DEFAULT_INDEX_CODECS: tuple[dict[str, Any], ...] = (
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
)

IndexLocation: TypeAlias = Literal["start", "end"]

#: The largest shard there can be, when its size is not known: the largest file offset.
LARGEST_SHARD = 2**63 - 1

_MISSING_FILL = np.array(MISSING, dtype=ENTRY_DTYPE).reshape(())


@dataclass(frozen=True, eq=False)
class ShardIndex:
    """A decoded shard index: where each inner chunk's bytes are in the shard.

    Parameters
    ----------
    entries
        ``uint64`` array of shape ``chunks_per_shard + (2,)``: ``[..., 0]`` offsets,
        ``[..., 1]`` byte lengths; :data:`MISSING` in both for a missing inner chunk.  Kept
        as given (not copied nor checked: :func:`decode_index` checks a decoded one).

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to rebind ``entries`` (the array itself stays writable).

    Examples
    --------
    >>> index = ShardIndex.empty((2, 2))
    >>> index.entries[1, 0] = (0, 8)  # inner chunk (1, 0): the shard's first 8 bytes
    >>> index.present.tolist(), index.get((1, 0)), index.get((0, 0))
    ([[False, False], [True, False]], (0, 8), None)
    >>> index.flat[2].tolist()  # slot 2 is inner chunk (1, 0), in C order
    [0, 8]
    """

    entries: np.ndarray

    @property
    def chunks_per_shard(self) -> tuple[int, ...]:
        """The shape of the inner chunk grid."""
        return tuple(self.entries.shape[:-1])

    @property
    def flat(self) -> np.ndarray:
        """The entries by slot: a ``(slots, 2)`` view, row ``k`` the ``(offset, nbytes)`` of
        the inner chunk at C-order position ``k`` of the inner grid."""
        return self.entries.reshape(-1, 2)

    @property
    def present(self) -> np.ndarray:
        """Boolean array of ``chunks_per_shard``: which inner chunks are stored."""
        return self.entries[..., 0] != MISSING

    @property
    def all_missing(self) -> bool:
        """Whether no inner chunk is stored (the shard reads as the fill value)."""
        return not bool(self.present.any())

    def get(self, coords: Sequence[int]) -> tuple[int, int] | None:
        """``(offset, nbytes)`` of the inner chunk at ``coords``, or None if it is missing.

        Parameters
        ----------
        coords
            The inner chunk's position in the inner grid, one index per dimension
            (negative indices count from the end, as numpy takes them).

        Returns
        -------
        tuple of (int, int) or None
            The byte offset of its encoding from the start of the shard and its length, or
            None where the entry's offset is :data:`MISSING`.

        Raises
        ------
        IndexError
            If ``coords`` lie outside the inner grid, or have two or more indices too many.
        TypeError
            If ``coords`` have fewer indices than the grid has dimensions, or one too many.

        Examples
        --------
        >>> index = ShardIndex.empty((2,))
        >>> index.entries[1] = (16, 4)
        >>> index.get((1,)), index.get((0,))
        ((16, 4), None)
        """
        offset, nbytes = (int(v) for v in self.entries[tuple(coords)])
        if offset == MISSING:
            return None
        return offset, nbytes

    @classmethod
    def empty(cls, chunks_per_shard: Sequence[int]) -> ShardIndex:
        """An index in which every inner chunk is missing.

        Parameters
        ----------
        chunks_per_shard
            The shape of the inner chunk grid.

        Returns
        -------
        ShardIndex
            Fresh, writable entries of shape ``chunks_per_shard + (2,)``, all
            :data:`MISSING`.

        Raises
        ------
        ValueError
            If a dimension of ``chunks_per_shard`` is negative.

        Examples
        --------
        >>> index = ShardIndex.empty((1, 3))
        >>> index.entries.shape, index.all_missing
        ((1, 3, 2), True)
        """
        return cls(np.full((*chunks_per_shard, 2), MISSING, dtype=ENTRY_DTYPE))


class PlainDecode(NamedTuple):
    """How an index chain of ``bytes`` [+ ``crc32c``] is decoded without the pipeline."""

    #: the ``crc32c`` codec to check and strip, or None
    crc: Codec | None
    #: the stored data type of the entries (``<u8`` or ``>u8``)
    stored: np.dtype


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """What a shard of one shape implies for its index, computed once per shape (all of it
    follows from the codec's configuration, which never changes)."""

    chunks_per_shard: tuple[int, ...]
    #: the shape of the decoded entries: ``chunks_per_shard + (2,)``
    shape: tuple[int, ...]
    #: the size of the encoded index
    nbytes: int
    location: IndexLocation
    #: the store request that reads the index: ``(0, nbytes)`` or ``(-nbytes, None)``
    request: tuple[int, int | None]
    #: an index at the end without crc32c: read the whole shard to know its size
    read_whole: bool
    #: for the usual index chain (``bytes`` [+ ``crc32c``]), how to decode it without the
    #: pipeline; else None
    plain: PlainDecode | None
    #: the index chain (see :func:`index_pipeline`) that encodes it, and decodes it where
    #: ``plain`` is None
    pipeline: CodecPipeline
    #: the most bytes a valid encoding of one inner chunk can take (None: no bound known,
    #: as for variable-length data): an entry claiming more is damage, refused before read
    inner_limit: int | None = None


def index_pipeline(index_codecs: Sequence[Codec], *, path: str) -> CodecPipeline:
    """The index chain ``index_codecs`` resolved for the entries (``uint64``, fill value
    :data:`MISSING`); ``path`` is the JSON path of the ``index_codecs`` field."""
    return CodecPipeline.from_codecs(
        index_codecs, dtype=ENTRY_DTYPE, fill_value=_MISSING_FILL, path=path
    )


def index_layout(pipeline: CodecPipeline, chunks_per_shard: tuple[int, ...],
                 location: IndexLocation, *, path: str,
                 inner_limit: int | None = None) -> IndexLayout:
    """The :class:`IndexLayout` of a shard of ``chunks_per_shard`` inner chunks whose index
    is encoded by ``pipeline`` (see :func:`index_pipeline`) at ``location``, and whose inner
    chunks' encodings take at most ``inner_limit`` bytes each (None: unknown).

    Raises
    ------
    MetadataError
        If the index chain's encoded size is not fixed (naming ``path``).
    """
    shape = (*chunks_per_shard, 2)
    size = pipeline.encoded_size(shape)
    if size is None:
        raise MetadataError("the index codecs must have a fixed encoded size", path=path)
    plain = None
    serializer = pipeline.array_bytes
    if (
        not pipeline.array_array
        and len(pipeline.bytes_bytes) <= 1
        and all(c.name == "crc32c" for c in pipeline.bytes_bytes)
        and isinstance(serializer, BytesCodec)
        and serializer.endian in ("little", "big")
    ):
        order = "<" if serializer.endian == "little" else ">"
        plain = PlainDecode(pipeline.bytes_bytes[0] if pipeline.bytes_bytes else None,
                            np.dtype(f"{order}u8"))
    return IndexLayout(
        chunks_per_shard=chunks_per_shard,
        shape=shape,
        nbytes=size,
        location=location,
        request=(0, size) if location == "start" else (-size, None),
        read_whole=location == "end" and not any(c.name == "crc32c" for c in pipeline.codecs),
        plain=plain,
        pipeline=pipeline,
        inner_limit=inner_limit,
    )


def plain_index(layout: IndexLayout) -> tuple[int, bool] | None:
    """``(index bytes, at the end)`` when the index stores its entries as plain
    little-endian ``uint64`` pairs from its first byte, else None (see
    :meth:`~zarr3c.codecs.sharding.ShardingCodec.plain_index`)."""
    plain = layout.plain
    if plain is None or plain.stored != np.dtype("<u8"):
        return None
    return layout.nbytes, layout.location == "end"


def encode_index(index: ShardIndex, layout: IndexLayout) -> np.ndarray:
    """The index's bytes, checked to be the :attr:`IndexLayout.nbytes` its codecs promise.

    Raises
    ------
    CodecError
        If the index codecs wrote another size (a third-party codec misreporting it).
    """
    index_bytes = as_byte_array(layout.pipeline.encode(index.entries))
    if index_bytes.nbytes != layout.nbytes:
        raise CodecError(
            f"sharding_indexed: the index codecs wrote {index_bytes.nbytes} bytes, "
            f"expected {layout.nbytes}"
        )
    return index_bytes


def index_of_shard(shard: np.ndarray, layout: IndexLayout) -> np.ndarray:
    """The encoded index within a whole shard's bytes (``uint8``).

    Raises
    ------
    ChunkDecodeError
        If the shard is shorter than its index.
    """
    n = layout.nbytes
    size = shard.nbytes
    check_shard_size(size, layout)
    return shard[:n] if layout.location == "start" else shard[size - n:]


def check_shard_size(shard_nbytes: int, layout: IndexLayout) -> None:
    """Check that a shard of ``shard_nbytes`` bytes can hold its index.

    Raises
    ------
    ChunkDecodeError
        If the shard is shorter than its index.
    """
    if shard_nbytes < layout.nbytes:
        raise ChunkDecodeError(
            f"sharding_indexed: the shard has {shard_nbytes} bytes, shorter than its index "
            f"({layout.nbytes} bytes)"
        )


def decode_index(buf: np.ndarray, layout: IndexLayout, shard_nbytes: int | None, *,
                 copy: bool) -> ShardIndex:
    """The index ``buf`` (``uint8``, exactly :attr:`IndexLayout.nbytes`) encodes, checked
    (:func:`check_entries`): its entries a native ``uint64`` copy, or without ``copy`` a
    view of ``buf`` where they are stored natively.

    Raises
    ------
    ChunkDecodeError
        A wrong size, a bad entry (naming the inner chunk); ChecksumError for a crc32c
        mismatch.
    """
    n = layout.nbytes
    if buf.nbytes != n:
        raise ChunkDecodeError(
            f"sharding_indexed: the shard index has {buf.nbytes} bytes, expected {n}"
        )
    plain = layout.plain
    try:
        if plain is None:
            entries = layout.pipeline.decode(buf, layout.shape)
        else:  # what the pipeline does for bytes [+ crc32c], without its layers
            crc, stored = plain
            payload = buf if crc is None else crc.decode(buf)  # type: ignore[attr-defined]
            entries = payload.view(stored).reshape(layout.shape)
    except ChunkDecodeError as exc:
        cls = ChecksumError if isinstance(exc, ChecksumError) else ChunkDecodeError
        raise cls(f"sharding_indexed: shard index: {exc}") from exc
    index = ShardIndex(np.array(entries, dtype=ENTRY_DTYPE) if copy
                       else np.asarray(entries, dtype=ENTRY_DTYPE))
    check_entries(index, layout, shard_nbytes)
    return index


def check_entries(index: ShardIndex, layout: IndexLayout, shard_nbytes: int | None) -> None:
    """Check a decoded index against the shard (of ``shard_nbytes`` bytes, None: unknown).

    One pass of the shard kernel finds the first problem, in the order these checks report
    them (half-missing entry, outside the shard, into the index, overlaps).

    Raises
    ------
    ChunkDecodeError
        Naming the first inner chunk (or pair) found wrong.
    """
    entries = index.entries
    index_n = layout.nbytes
    if layout.location == "start":
        lo, hi = 0, index_n
    elif shard_nbytes is not None:
        lo, hi = shard_nbytes - index_n, shard_nbytes
    else:
        lo = hi = -1
    # An unknown size is at most the largest file offset: entries past it cannot be read,
    # and readers take offsets as int64.
    code, a, b = check_shard_index(
        entries.reshape(-1, 2), LARGEST_SHARD if shard_nbytes is None else shard_nbytes,
        lo, hi
    )
    if code == 0:
        _check_entry_sizes(index, layout.inner_limit)
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


def _check_entry_sizes(index: ShardIndex, limit: int | None) -> None:
    """Refuse an entry claiming more bytes than any valid encoding of an inner chunk (a
    damaged index must not make a reader fetch or allocate what it claims).

    Raises
    ------
    ChunkDecodeError
        Naming the first such inner chunk.
    """
    if limit is None:
        return
    flat = index.flat
    big = np.flatnonzero((flat[:, 0] != MISSING) & (flat[:, 1] > limit))
    if big.size:
        first = tuple(int(i) for i in np.unravel_index(int(big[0]), index.chunks_per_shard))
        raise ChunkDecodeError(
            f"sharding_indexed: index entry of inner chunk {first} claims "
            f"{int(flat[big[0], 1]):,} bytes, more than any valid encoding of it "
            f"({limit:,} bytes at most)"
        )
