"""One whole chunk read and decoded: its stored bytes fetched into this thread's scratch
memory, decoded into scratch (or straight into the output), for a caller that copies it out
at once.  Every path that reads chunks whole ends here.

From a store whose every read is a request (``Store.reads_by_request``: object stores,
fsspec), the Python paths that read many chunks whole (:func:`read_chunks_together`) fetch
their stored values ahead, with the store's ``get_many`` in batches of
:data:`FETCH_BATCH_BYTES` decoded bytes, every request of a batch in flight together, and
decode them on the thread pool; elsewhere each worker fetches its own chunk."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from zarr3c._buffers import chunk_memory, chunk_too_large, thread_scratch
from zarr3c.concurrency import map_unordered
from zarr3c.errors import ChunkTooLargeError

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["FETCH", "FETCH_BATCH_BYTES", "fetch_chunk", "fetched_batches", "fetched_chunks",
           "inner_memory", "read_chunk", "read_chunks_together", "stored_limit", "stored_value"]

T = TypeVar("T")

#: Decoded bytes of the chunks whose values one ``get_many`` fetches ahead (here, and for
#: the native pipeline), where the store has no files.
FETCH_BATCH_BYTES = 64 << 20
#: ``read_chunk``'s ``raw`` when the chunk's value is not fetched yet: it fetches it.
FETCH: Any = type("Fetch", (), {"__repr__": lambda self: "FETCH"})()

#: Above this many bytes a chunk's scratch memory is fresh anyway (``thread_scratch`` keeps
#: less): :func:`stored_value` asks the store for the value's size first, so that a chunk not
#: stored takes no memory of its declared size, and a stored one only what it holds.
_SIZE_FIRST_BYTES = 4 << 20


def read_chunk(array: Array, coords: tuple[int, ...], into: np.ndarray | None = None,
               need: int | None = None, raw: Any = FETCH) -> np.ndarray | None:
    """The decoded chunk at ``coords`` (possibly read-only), or None if it is not stored,
    for a caller that copies it out at once, before this thread reads another: its stored
    bytes are read into, and it is decoded into, this thread's scratch memory where the
    store and the codecs can (``thread_scratch``: no fresh memory, and its page faults, per
    chunk), so it may be a view of either.  With ``into`` (where the chunk's C-ordered bytes
    go in an output: a contiguous ``uint8`` run of its size), decoded straight there where
    the codecs can (``CodecPipeline.decode_into``), and ``into`` itself is returned.  With
    ``need``, the caller reads only the chunk's first ``need`` bytes (C order): where the
    codecs can, only they are decoded (``CodecPipeline.decode_prefix_into``) and the rest of
    the chunk returned is undefined.  A stored chunk too large to decode in memory raises
    ChunkTooLargeError naming its key; one not stored takes no memory of its size.  ``raw``
    is the chunk's stored value where it was fetched already (None: not stored;
    :func:`read_chunks_together`)."""
    key = array.chunk_key(coords)
    shape = array._chunk_shape_at(coords)
    nbytes = math.prod(shape) * array._itemsize
    if raw is FETCH:
        raw = stored_value(array, key, nbytes, shape)
    if raw is None:
        return None
    pipeline = array._pipeline
    try:
        if into is not None:
            if pipeline.decode_into(raw, into):
                return into
        elif pipeline.can_decode_into:
            scratch = thread_scratch(nbytes)
            if (need is not None and need < nbytes and pipeline.can_decode_prefix
                    and pipeline.decode_prefix_into(raw, scratch, need)):
                return scratch.view(array.dtype).reshape(shape)
            if pipeline.decode_into(raw, scratch):
                return scratch.view(array.dtype).reshape(shape)
        return pipeline.decode(raw, shape, key=key)
    except ChunkTooLargeError:
        raise
    except MemoryError:
        raise chunk_too_large(key, nbytes) from None


def read_chunks_together(array: Array, items: Sequence[T],
                         coords_of: Callable[[T], tuple[int, ...]],
                         read: Callable[[T, Any], None]) -> None:
    """``read(item, raw)`` for every item on the thread pool, ``raw`` being the stored value
    of the chunk at ``coords_of(item)`` (None: not stored) where the store's every read is a
    request, fetched ahead by :func:`fetched_batches`, so that a batch's requests are in
    flight together (bounded by the store) rather than as many as threads; elsewhere
    :data:`FETCH`, which :func:`read_chunk` fetches on the worker (into its scratch
    memory)."""
    if len(items) < 2 or not array._store.reads_by_request:
        map_unordered(lambda item: read(item, FETCH), items)
        return
    for lo, hi, _keys, values in fetched_chunks(array, [coords_of(item) for item in items]):
        map_unordered(lambda pair: read(*pair), zip(items[lo:hi], values, strict=True))


def fetched_chunks(array: Array, coords: Sequence[tuple[int, ...]]
                   ) -> Iterator[tuple[int, int, list[str], list[Any]]]:
    """:func:`fetched_batches` of the chunks at ``coords``: ``(lo, hi, keys, values)`` of
    ``coords[lo:hi]`` per batch."""
    keys = [array.chunk_key(c) for c in coords]
    shapes = {array._chunk_shape_at(c) for c in coords}  # (several on a rectilinear grid)
    for lo, hi, values in fetched_batches(array, keys, shapes):
        yield lo, hi, keys[lo:hi], values


def fetched_batches(array: Array, keys: Sequence[str], shapes: Iterable[tuple[int, ...]]
                    ) -> Iterator[tuple[int, int, list[Any]]]:
    """The stored values (None: not stored) at ``keys``, chunks of the array of at most the
    ``shapes`` given, fetched with the store's ``get_many`` :data:`FETCH_BATCH_BYTES` of
    decoded chunks a batch: ``(lo, hi, values of keys[lo:hi])`` per batch.  A value larger
    than any valid encoding of its chunk is refused from its size, before it is read where
    the store can tell."""
    store = array._store
    shapes = set(shapes)
    largest = max(shapes, key=math.prod)
    step = max(1, FETCH_BATCH_BYTES // max(1, math.prod(largest) * array._itemsize))
    limits = [stored_limit(array, shape) for shape in shapes]
    limit = None if None in limits else max(limits)  # type: ignore[type-var]
    for lo in range(0, len(keys), step):
        hi = min(lo + step, len(keys))
        batch = keys[lo:hi]
        yield lo, hi, list(store.get_many(batch) if limit is None
                           else store.get_many_at_most(batch, limit))


def stored_value(array: Array, key: str, nbytes: int, shape: tuple[int, ...]) -> Any:
    """The value stored at ``key`` (None if missing) of a chunk of ``shape`` (``nbytes``
    decoded bytes), used at once (decoded, or its raw elements copied out): where the store
    reads into memory, in this thread's ``"stored"`` scratch memory (valid until its next
    such read), not fresh ``bytes`` (whose page faults, in some allocator states, cost as
    much as the read).  Large chunks have their size asked first (:data:`_SIZE_FIRST_BYTES`):
    the scratch is never sized from the declared chunk before the chunk is known stored.  A
    value larger than any valid encoding of the chunk is refused from its size
    (:func:`fetch_chunk`)."""
    store = array._store
    if not store.reads_into_memory:
        return fetch_chunk(array, key, shape)
    cap = nbytes + (nbytes >> 3) + 4096  # an incompressible chunk's encoding fits
    if cap > _SIZE_FIRST_BYTES:
        stored = store.getsize(key)
        if stored is None:
            return None
        cap = min(cap, stored)  # (a value grown since is read by get, below)
    try:
        buf = thread_scratch(cap, "stored")
    except MemoryError:
        raise chunk_too_large(key, cap, "its stored bytes") from None
    size = store.read_value_into(key, buf)
    if size is None:
        return None
    return buf[:size] if size <= cap else fetch_chunk(array, key, shape)


def stored_limit(array: Array, shape: tuple[int, ...]) -> int | None:
    """The most bytes a valid encoding of a chunk of ``shape`` can take, or None where the
    codecs cannot bound it (variable-length data)."""
    return array._pipeline.max_stored_size(shape)


def fetch_chunk(array: Array, key: str, shape: tuple[int, ...]) -> Any:
    """The value stored at ``key`` (None if missing) for a chunk of ``shape``; a value
    larger than any valid encoding of it is refused from its size, before it is read where
    the store can tell (``Store.get_at_most``), with OversizedValueError naming the key."""
    limit = stored_limit(array, shape)
    store = array._store
    return store.get(key) if limit is None else store.get_at_most(key, limit)


def inner_memory(array: Array, key: str) -> AbstractContextManager[None]:
    """:func:`~zarr3c._buffers.chunk_memory` for the inner chunks of the shard at ``key``,
    around a read of them: a stored one too large to decode in memory is refused naming
    the shard."""
    assert array._sharding is not None
    return chunk_memory(key, math.prod(array._sharding.chunk_shape) * array._itemsize,
                        "an inner chunk")
