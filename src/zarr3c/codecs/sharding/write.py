"""Writing shards: whole or from a strided region of the caller's buffer, and partial updates.

:class:`ShardWrites` holds the partial-write methods of
:class:`~zarr3c.codecs.sharding.ShardingCodec` (which inherits them).
``encode_region`` (and the whole-shard ``encode``, through :func:`encode_strided`) stores a
shard's inner chunks in C order of the inner grid and leaves out those whose bits all equal
the fill value; the shard comes back as its parts (the encoded inner chunks and the index, in
order) for the store to write one after another, so a compressed shard is never assembled in
memory.  ``update_shard`` replaces some inner chunks of a stored shard and copies the others'
stored bytes verbatim.

Named types: :class:`PartArena` (one thread's memory for the parts of the shards it
encodes) and the alias :data:`InnerSource` (where one inner chunk of a region to encode
comes from).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from zarr3c._kernels.copy import copy_strided, fill_strided, is_uniform
from zarr3c.codecs.base import as_byte_array
from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.codecs.sharding._inner import Coords, naming
from zarr3c.codecs.sharding._parallel import fan_out, in_parallel
from zarr3c.codecs.sharding._part import CodecPart
from zarr3c.codecs.sharding.index import ShardIndex, encode_index
from zarr3c.concurrency import get_num_threads, in_worker, map_unordered
from zarr3c.errors import IndexingError, ShapeMismatchError
from zarr3c.indexing import c_strides, int64_array

if TYPE_CHECKING:
    pass

__all__ = [
    "InnerSource", "PartArena", "ShardWrites", "encode_pieces", "encode_strided", "shard_parts",
]

# The size of a PartArena's blocks (a part larger than this gets a block of its own).
_ARENA_BLOCK_BYTES = 1 << 20


class PartArena:
    """One thread's memory for the shards it encodes during one write: the encoded inner
    chunks (or a raw shard's one buffer) are kept here until the shard is written, in
    blocks reused from shard to shard.

    Fresh memory for every shard costs a page fault per 4 KiB: the heap grows by a shard's
    encodings and is trimmed again once they are written, which the arena avoids (tracked
    by the sharded write rows of ``asv_benchmarks/compare_peers.py``).  Blocks are never
    moved or grown, so the parts handed out stay valid until :meth:`reset`.

    Examples
    --------
    >>> import numpy as np
    >>> arena = PartArena()
    >>> part = arena.put(np.arange(4, dtype=np.uint8))
    >>> part.tolist()
    [0, 1, 2, 3]
    >>> arena.reset()  # the next shard reuses the memory
    """

    __slots__ = ("_at", "_block", "_blocks")

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._block = 0
        self._at = 0

    def reset(self) -> None:
        """Start a new shard: the memory of the parts handed out so far is reused.

        The parts handed out before are not valid after it: their memory is handed out
        again.  The blocks are kept (never freed nor shrunk) for the next shard.

        Examples
        --------
        >>> import numpy as np
        >>> arena = PartArena()
        >>> first = arena.take(4)
        >>> arena.reset()
        >>> np.shares_memory(arena.take(4), first)  # the same memory again
        True
        """
        self._block = self._at = 0

    def take(self, nbytes: int) -> np.ndarray:
        """``nbytes`` of uninitialised ``uint8`` memory, valid until :meth:`reset`.

        Parameters
        ----------
        nbytes
            How many bytes (``>= 0``).

        Returns
        -------
        numpy.ndarray
            A writable 1-d ``uint8`` view of ``nbytes`` of a block: after the previous part
            in the current block, or at the start of the next block (a new one of 1 MiB, or
            of ``nbytes`` if larger) where it does not fit there.

        Raises
        ------
        MemoryError
            If a new block cannot be allocated.

        Examples
        --------
        >>> arena = PartArena()
        >>> a, b = arena.take(3), arena.take(5)
        >>> a.nbytes, b.nbytes, a.base is b.base  # one block
        (3, 5, True)
        """
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
        """A copy of ``data`` (``uint8``) in the arena, valid until :meth:`reset`.

        Parameters
        ----------
        data
            The bytes to keep: a 1-d ``uint8`` array (or one that broadcasts to
            ``data.nbytes`` bytes).

        Returns
        -------
        numpy.ndarray
            The copy: a 1-d ``uint8`` view of arena memory (see :meth:`take`).

        Raises
        ------
        ValueError
            If ``data`` does not broadcast to a 1-d array of its ``nbytes`` (a 2-d array;
            most arrays of another data type than ``uint8``).
        MemoryError
            If a new block cannot be allocated.

        Examples
        --------
        >>> import numpy as np
        >>> arena = PartArena()
        >>> data = np.frombuffer(b"shard", dtype=np.uint8)
        >>> kept = arena.put(data)
        >>> bytes(kept), kept is data
        (b'shard', False)
        """
        view = self.take(data.nbytes)
        view[...] = data
        return view


#: Where one inner chunk of a region to encode comes from: ``(coords, offset, extent, full)``
#: -- its position in the inner grid, the byte offset of its first element in the source
#: buffer, how many elements per dimension lie inside the region (int64; the rest are fill),
#: and whether all of it lies inside.  A plain tuple: one is made per inner chunk written.
InnerSource: TypeAlias = tuple[Coords, int, np.ndarray, bool]


#: ``load(dst, at, source) -> bool``: put an inner chunk at ``dst[at:]``, True unless it is
#: all fill
Loader = Callable[[np.ndarray, int, InnerSource], bool]


# -- the partial-write methods of ShardingCodec ------------------------------------------------


class ShardWrites(CodecPart):
    """The partial-write methods of :class:`~zarr3c.codecs.sharding.ShardingCodec`.

    A mixin without state of its own: ``ShardingCodec`` inherits these methods and provides
    what :class:`~zarr3c.codecs.sharding._part.CodecPart` declares.  So the writing code sits
    in one module with the helpers it uses, while the codec keeps one class.
    """

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

        The shard's elements ``[0, counts)`` (per dimension) are read from ``src``; the rest
        of the shard is the fill value.  Each inner chunk is copied into a per-worker
        scratch buffer (or, for a ``bytes``-only inner chain, straight into its place in the
        shard), checked against the fill value and encoded.  The shard comes back as its
        parts: a ``bytes``-only chain's one buffer of raw inner chunks (and the index), or
        else each inner chunk's encoding and the index, in the shard's order, never joined
        (``Store.set_parts`` writes them one after another).  So a whole write holds the
        shard's encoded pieces once, never a decoded copy or an assembled copy of them.
        Needs the evolved codec (see the notes of ``ShardingCodec``).

        Parameters
        ----------
        src
            A 1-d ``uint8`` buffer: element ``idx`` at byte ``src_offset + idx . src_strides``
            (zero strides repeat an element).
        src_offset, src_strides
            Where the region's elements are in ``src`` (bytes).
        counts
            The region's extent per dimension, from the shard's origin.
        shard_shape
            The shard's shape.
        arena
            The calling thread's :class:`~zarr3c.codecs.sharding.write.PartArena`: the parts
            are kept in it, reset first, valid until the caller's next shard in that arena.
            Inner chunks encoded on other threads (a shard encoded by the pool, when the
            caller is not a pool worker) are not put in the arena.

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

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec = codec.evolve(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        >>> parts, stored = codec.encode_region(np.arange(1, 4, dtype="uint8"), 0, [1], [3], (4,))
        >>> np.concatenate(parts)[:4].tolist(), stored
        ([1, 2, 3, 0], 2)
        """
        if arena is not None:
            arena.reset()
        return encode_strided(self, self._evolved_pipeline(), src, int(src_offset),
                              [int(s) for s in src_strides],
                              tuple(int(n) for n in counts), tuple(shard_shape), arena)

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
        touch.  Needs the evolved codec (see the notes of ``ShardingCodec``).

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

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.sharding import ShardingCodec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec = codec.evolve(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        >>> shard = codec.update_shard(None, (4,), {(1,): np.array([5, 6], "uint8")})
        >>> codec.update_shard(shard, (4,), {(1,): None}) is None  # nothing left
        True
        """
        inner = self._evolved_pipeline()
        cps = self._chunks_per_shard(shard_shape)
        pieces: dict[Coords, np.ndarray] = {}
        if data is not None:
            with naming(key):
                buf = as_byte_array(data)
                index = self._decode_index_from_shard(buf, shard_shape)
            for c in np.argwhere(index.present):
                coords = tuple(int(i) for i in c)
                offset, n = index.get(coords)  # type: ignore[misc]
                pieces[coords] = buf[offset:offset + n]
        todo = _replacements(self, inner, cps, updates, pieces)
        fill_bytes = as_byte_array(inner.fill_value)

        def encode_one(task: tuple[Coords, np.ndarray]) -> tuple[Coords, np.ndarray | None]:
            coords, arr = task
            if arr.dtype.itemsize and is_uniform(as_byte_array(arr), fill_bytes):
                return coords, None
            # copy: the encoding may alias the caller's array, which the caller may reuse
            return coords, np.array(as_byte_array(inner.encode(arr)))

        nbytes = len(todo) * math.prod(self.chunk_shape) * inner.dtype.itemsize
        for coords, encoded in fan_out(encode_one, todo, nbytes):
            if encoded is not None:
                pieces[coords] = encoded
        if not pieces:
            return None
        return np.concatenate(shard_parts(self, pieces, shard_shape))


# -- encoding ------------------------------------------------------------------------------


def _sources(codec: ShardWrites, cps: Sequence[int], src_offset: int,
             src_strides: Sequence[int], counts: Sequence[int]) -> list[InnerSource]:
    """The inner chunks holding some of the region ``[0, counts)``, in C order, with their
    source offsets and the extents that lie inside it; the others are all fill, so missing."""
    inner_shape = codec.chunk_shape
    todo: list[InnerSource] = []
    for coords in np.ndindex(*cps):
        origin = [i * c for i, c in zip(coords, inner_shape, strict=True)]
        extent = [min(c, n - o) for o, c, n in zip(origin, inner_shape, counts, strict=True)]
        if min(extent, default=1) <= 0:
            continue
        offset = src_offset + sum(o * s for o, s in zip(origin, src_strides, strict=True))
        full = all(e == c for e, c in zip(extent, inner_shape, strict=True))
        todo.append((coords, offset, int64_array(extent), full))
    return todo


def encode_strided(
    codec: ShardWrites,
    inner: CodecPipeline,
    src: np.ndarray,
    src_offset: int,
    src_strides: Sequence[int],
    counts: tuple[int, ...],
    shard_shape: tuple[int, ...],
    arena: PartArena | None,
) -> tuple[list[np.ndarray], int]:
    """The shard holding the region ``[0, counts)`` of ``src`` as its parts, and how many
    inner chunks it stores (see :meth:`ShardingCodec.encode_region`)."""
    layout = codec._layout(shard_shape)
    itemsize = inner.dtype.itemsize
    inner_shape = codec.chunk_shape
    inner_nbytes = math.prod(inner_shape) * itemsize
    inner_strides = np.asarray(c_strides(inner_shape, itemsize), dtype=np.int64)
    fill_bytes = as_byte_array(inner.fill_value)
    src_steps = np.asarray(src_strides, dtype=np.int64)
    todo = _sources(codec, layout.chunks_per_shard, src_offset, src_strides, counts)

    def load(dst: np.ndarray, at: int, item: InnerSource) -> bool:
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
        return _encode_raw(codec, todo, load, inner_nbytes, shard_shape, arena)
    encoded = encode_pieces(codec, inner, todo, load, inner_nbytes, nbytes, arena)
    stored = {item[0]: piece for item, piece in zip(todo, encoded, strict=True)
              if piece is not None}
    return shard_parts(codec, stored, shard_shape), len(stored)


def _encode_raw(codec: ShardWrites, todo: list[InnerSource], load: Loader,
                inner_nbytes: int, shard_shape: tuple[int, ...], arena: PartArena | None
                ) -> tuple[list[np.ndarray], int]:
    """:func:`encode_strided` where the encoding is the elements: each inner chunk is copied
    into its own slot of the shard, then the slots of fill-only chunks are squeezed out; the
    shard is one buffer."""
    layout = codec._layout(shard_shape)
    index = ShardIndex.empty(layout.chunks_per_shard)
    index_n = layout.nbytes
    at_start = layout.location == "start"
    base = index_n if at_start else 0
    total = base + len(todo) * inner_nbytes + index_n
    out = np.empty(total, dtype=np.uint8) if arena is None else arena.take(total)

    def place(j: int) -> bool:
        return load(out, base + j * inner_nbytes, todo[j])

    kept = fan_out(place, list(range(len(todo))), len(todo) * inner_nbytes)
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
    index_bytes = encode_index(index, layout)
    if at_start:
        out[:index_n] = index_bytes
        return [out[:pos]], count
    out[pos:pos + index_n] = index_bytes
    return [out[:pos + index_n]], count


def encode_pieces(
    codec: ShardWrites,
    inner: CodecPipeline,
    todo: list[InnerSource],
    load: Loader,
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
    workers = 1 if len(todo) <= 1 or not in_parallel(nbytes) else threads
    if workers > 1 and not in_worker():
        arena = None  # (the pool's threads would share the caller's arena)
    chunk_shape = codec.chunk_shape

    def work(_: int) -> None:
        scratch = np.empty(inner_nbytes, dtype=np.uint8)
        chunk = scratch.view(inner.dtype).reshape(chunk_shape) if inner_nbytes \
            else np.empty(chunk_shape, dtype=inner.dtype)
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


def shard_parts(
    codec: ShardWrites, pieces: Mapping[Coords, np.ndarray], shard_shape: Sequence[int]
) -> list[np.ndarray]:
    """The shard holding ``pieces`` (encoded inner chunks by coords, ``uint8``) as its
    parts, never joined: the encodings in C order of their coords, and the index where
    ``index_location`` puts it."""
    layout = codec._layout(shard_shape)
    index = ShardIndex.empty(layout.chunks_per_shard)
    at_start = layout.location == "start"
    pos = layout.nbytes if at_start else 0
    order = sorted(pieces)
    for coords in order:
        index.entries[coords] = (pos, pieces[coords].nbytes)
        pos += pieces[coords].nbytes
    data = [pieces[coords] for coords in order]
    index_bytes = encode_index(index, layout)
    return [index_bytes, *data] if at_start else [*data, index_bytes]


def _replacements(codec: ShardWrites, inner: CodecPipeline, cps: Sequence[int],
                  updates: Mapping[Sequence[int], np.ndarray | None],
                  pieces: dict[Coords, np.ndarray]) -> list[tuple[Coords, np.ndarray]]:
    """The inner chunks of ``updates`` to encode, as ``(coords, contiguous array)``; every
    updated inner chunk (removed ones too) is dropped from ``pieces``, the stored ones.

    Raises
    ------
    IndexingError, ShapeMismatchError
        As :meth:`ShardingCodec.update_shard`.
    """
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
        if arr.shape != codec.chunk_shape:
            raise ShapeMismatchError(
                f"inner chunk {coords} has shape {list(arr.shape)}, expected "
                f"{list(codec.chunk_shape)}"
            )
        todo.append((coords, np.ascontiguousarray(arr, dtype=inner.dtype)))
    return todo
