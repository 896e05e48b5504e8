"""Writes: values into selections, chunk by chunk under a per-chunk lock; resize and append.

Chunks the selection covers entirely are written by the native pipeline where it can
(:mod:`.native`); on the Python path below,
a chunk the selection covers entirely is encoded straight from the value's strided bytes
(through a per-worker scratch buffer, :class:`WriteScratch`; a shard inner chunk by inner
chunk into one shard buffer); any other is read, modified and written back (a shard: only
the inner chunks the write touches).  Over a store whose ``set_many`` keeps several writes
in flight (``Store.concurrent_batches``: an object store), whole chunks are encoded in
batches of bounded bytes on the thread pool and each batch stored with one ``set_many``, so
that more requests are in flight than there are threads.  Chunks that end up equal to the
fill value are erased instead of written (unless ``write_empty_chunks``)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c._buffers import chunk_memory
from zarr3c._kernels.copy import copy_strided, fill_strided, is_uniform
from zarr3c._kernels.scatter import copy_elements, copy_outer
from zarr3c.array import geometry, objects
from zarr3c.array.read.chunk import fetch_chunk
from zarr3c.array.write.native import write_natively
from zarr3c.codecs.sharding import PartArena
from zarr3c.concurrency import chunk_lock, chunk_locks, get_num_threads, map_unordered
from zarr3c.errors import IndexingError, ShapeMismatchError, ValueConversionError
from zarr3c.indexing import (
    ChunkTask,
    CoordinateSelection,
    OrthogonalSelection,
    PointTask,
    broadcast_value,
    c_strides,
    int64_array,
    plan_chunks,
    plan_points,
)
from zarr3c.stores.byte_ranges import as_byte_view, resolve_byte_range

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["WriteScratch", "append", "as_dtype", "byte_source", "modify_chunk", "new_chunk",
           "resize", "store_chunk", "write_points", "write_selection"]


def as_dtype(array: Array, value: Any) -> np.ndarray:
    """``value`` as an array of the array's dtype, converted as numpy assignment does:
    arrays cast (unsafe, as numpy), scalars and sequences through ``np.asarray(value,
    dtype)``, which refuses what does not fit (300 into int8, NaN into integers, complex
    into reals) instead of wrapping it."""
    try:
        if isinstance(value, np.ndarray):
            return value if value.dtype == array.dtype else value.astype(array.dtype)
        return np.asarray(value, dtype=array.dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        kind = value.dtype if isinstance(value, np.ndarray) else type(value).__name__
        raise ValueConversionError(
            f"cannot convert the value ({kind}) to the array's dtype {array.dtype}: {exc}"
        ) from None


def write_points(array: Array, sel: CoordinateSelection, value: Any) -> None:
    """Write ``value`` into the points of ``sel``; with duplicate coordinates the last value
    wins, as in numpy."""
    if array._references:  # (strings, bytes: numpy indexing, not byte copies)
        objects.write_points(array, sel, value)
        return
    arr = as_dtype(array, value)
    flat = arr.reshape(-1) if arr.ndim == 0 else broadcast_value(arr, sel.out_shape).reshape(-1)
    itemsize = array._itemsize
    src = np.ascontiguousarray(flat).view(np.uint8)
    sharding = array._sharding

    def write_chunk_points(task: PointTask) -> None:
        # In the points' order, so with duplicate coordinates the last value wins.
        src_offsets = (np.zeros(len(task.out), dtype=np.int64) if arr.ndim == 0
                       else task.out * itemsize)

        def scatter(chunk: np.ndarray) -> None:
            copy_elements(src, src_offsets, chunk.reshape(-1).view(np.uint8),
                          task.offsets, itemsize)

        local = task.local
        region = tuple((int(x.min()), int(x.max()) + 1) for x in local)
        inner_chunks = None
        if sharding is not None:  # only the inner chunks holding points change
            ids = np.stack([x // c for x, c in zip(local, sharding.chunk_shape, strict=True)],
                           axis=1)
            inner_chunks = [tuple(row) for row in np.unique(ids, axis=0).tolist()]
        modify_chunk(array, task.coords, None, scatter, region=region,
                     inner_chunks=inner_chunks)

    map_unordered(write_chunk_points, plan_points(sel, array._dims, itemsize))


def write_selection(array: Array, sel: OrthogonalSelection, value: Any) -> None:
    """Write ``value`` (broadcast as numpy does) into the orthogonal selection ``sel``."""
    if array._references:
        objects.write_selection(array, sel, value)
        return
    arr = as_dtype(array, value)
    scalar = arr.ndim == 0
    if scalar:
        arr = arr.copy()  # (np.ascontiguousarray would make it 1-d)
    else:
        # Any strides (F order, broadcast): the copy kernels read them as they are, so the
        # value is never copied whole.
        arr = broadcast_value(arr, sel.out_shape).reshape(sel.counts)
    if sel.size == 0:
        return
    itemsize = array._itemsize
    if scalar:
        src, value_strides = arr.reshape(-1).view(np.uint8), [0] * len(sel.counts)
    else:
        src, value_strides = byte_source(arr)
    scratch = WriteScratch()

    def modify(task: ChunkTask, chunk: np.ndarray) -> None:
        if not task.strided:  # one scatter over the outer product of the indices
            src_offsets = task.out_dim_offsets(value_strides)
            copy_outer(src, src_offsets, chunk.reshape(-1).view(np.uint8),
                       task.local_dim_offsets(c_strides(chunk.shape, itemsize)),
                       int64_array(task.counts), itemsize)
            return
        dst = chunk.reshape(-1).view(np.uint8)
        dst_offset, dst_strides = task.chunk_region(c_strides(chunk.shape, itemsize))
        counts = int64_array(task.counts)
        if scalar:
            fill_strided(dst, dst_offset, dst_strides, counts, src)
        else:
            src_offset, src_strides = task.out_region(value_strides)
            copy_strided(src, src_offset, src_strides, dst, dst_offset, dst_strides,
                         counts, itemsize)

    def write(task: ChunkTask) -> None:
        if task.strided and itemsize:
            chunk_shape = array._chunk_shape_at(task.coords)
            if task.covers(chunk_shape, array.shape, array._chunk_origin(task.coords)):
                _write_whole_chunk(array, task, chunk_shape, src, value_strides, scratch)
                return
        modify_chunk(array, task.coords, task, lambda c: modify(task, c),
                     region=task.bounds())

    if not itemsize:
        map_unordered(write, plan_chunks(sel, array._dims))
    elif array._store.concurrent_batches:
        _write_batched(array, plan_chunks(sel, array._dims), write, src, value_strides, scratch)
    else:  # (the chunks covered entirely, where the array, chain and store allow it)
        map_unordered(write, write_natively(array, sel, src, value_strides))


class _Encoded(NamedTuple):
    """A whole chunk encoded for a batch: its key and encoding (None: erase it)."""

    key: str
    value: bytes | None


def _write_batched(array: Array, tasks: Iterable[ChunkTask],
                   write: Callable[[ChunkTask], None], src: np.ndarray,
                   value_strides: Sequence[int], scratch: WriteScratch) -> None:
    """Write the chunks of ``tasks`` to a store whose ``set_many`` keeps several writes in
    flight (an object store): in batches of at most :data:`SET_MANY_BYTES` of chunks, the
    chunks covered in part are read, modified and written by ``write``, and the chunks
    covered entirely are encoded on the thread pool, then stored with one ``set_many`` (and
    those equal to the fill value erased) under their locks.  Only a batch's encodings are
    held at once, never the whole write's."""
    itemsize = array._itemsize
    for batch in _batches(array, tasks):
        whole = [t for t in batch if t.strided and t.covers(
            array._chunk_shape_at(t.coords), array.shape, array._chunk_origin(t.coords))]
        if len(whole) < len(batch):
            covered = {id(t) for t in whole}
            map_unordered(write, [t for t in batch if id(t) not in covered])

        def encode(task: ChunkTask) -> _Encoded:
            key = array.chunk_key(task.coords)
            chunk_shape = array._chunk_shape_at(task.coords)
            with chunk_memory(key, math.prod(chunk_shape) * itemsize):
                parts = _encode_whole_chunk(array, task, chunk_shape, src, value_strides,
                                            scratch)
                # (a copy: the parts are this thread's scratch, reused for its next chunk)
                return _Encoded(key, None if parts is None
                                else b"".join(as_byte_view(p, key) for p in parts))

        encoded = map_unordered(encode, whole)
        if not encoded:
            continue
        with chunk_locks(array._store, [e.key for e in encoded]):
            array._store.set_many((e.key, e.value) for e in encoded if e.value is not None)
            empty = [e.key for e in encoded if e.value is None]
            if empty:
                array._store.erase_values(empty)


#: The most bytes of (decoded) chunks one batch of a batched write covers (but at least one
#: chunk per thread, as many as the thread pool would hold): their encodings are held until
#: the batch is stored.
SET_MANY_BYTES = 64 << 20


def _batches(array: Array, tasks: Iterable[ChunkTask]) -> Iterator[list[ChunkTask]]:
    """``tasks`` in batches of at most :data:`SET_MANY_BYTES` of chunks, or of one chunk per
    thread where those are larger, drawn lazily."""
    batch: list[ChunkTask] = []
    nbytes = 0
    least = get_num_threads()
    for task in tasks:
        size = math.prod(array._chunk_shape_at(task.coords)) * array._itemsize
        if len(batch) >= least and nbytes + size > SET_MANY_BYTES:
            yield batch
            batch, nbytes = [], 0
        batch.append(task)
        nbytes += size
    if batch:
        yield batch


def _write_whole_chunk(array: Array, task: ChunkTask, chunk_shape: tuple[int, ...],
                       src: np.ndarray, value_strides: Sequence[int],
                       scratch: WriteScratch) -> None:
    """Write a chunk the value covers entirely (elements past the array's end are fill),
    without reading it: encoded straight from the value's strided bytes
    (:func:`_encode_whole_chunk`), or erased where it holds only the fill value."""
    key = array.chunk_key(task.coords)
    store = array._store
    # (it holds the chunk it writes: what cannot be allocated is refused by the chunk's key)
    with chunk_memory(key, math.prod(chunk_shape) * array._itemsize), chunk_lock(store, key):
        parts = _encode_whole_chunk(array, task, chunk_shape, src, value_strides, scratch)
        # The store copies what it is given (Store.set), so the scratch can be reused.
        if parts is None:
            store.erase(key)
        elif array._sharding is not None:
            store.set_parts(key, parts)
        else:
            store.set(key, parts[0])


def _encode_whole_chunk(array: Array, task: ChunkTask, chunk_shape: tuple[int, ...],
                        src: np.ndarray, value_strides: Sequence[int],
                        scratch: WriteScratch) -> list[Any] | None:
    """The encoding, in parts, of a chunk the value covers entirely, or None where it holds
    only the fill value and ``write_empty_chunks`` is off.  A shard's inner chunks are
    encoded one by one into this worker's arena (see ``ShardingCodec.encode_region``);
    another chunk is copied into this worker's scratch buffer, reused from chunk to chunk,
    and encoded from there: the parts are valid until the worker's next chunk."""
    src_offset, src_strides = task.out_region(value_strides)
    if array._sharding is not None:
        parts, stored = array._sharding.encode_region(
            src, src_offset, src_strides, task.counts, chunk_shape, arena=scratch.arena())
        return None if stored == 0 and not array._write_empty_chunks else list(parts)
    chunk = scratch.chunk(chunk_shape, array.dtype)
    dst = chunk.reshape(-1).view(np.uint8)
    strides = int64_array(c_strides(chunk_shape, array._itemsize))
    if tuple(task.counts) != chunk_shape:  # an edge chunk: fill past the array's end
        fill_strided(dst, 0, strides, int64_array(chunk_shape), array._fill_bytes)
    copy_strided(src, src_offset, src_strides, dst, 0, strides, int64_array(task.counts),
                 array._itemsize)
    if not array._write_empty_chunks and is_uniform(dst, array._fill_bytes):
        return None
    return [array._pipeline.encode_to_scratch(chunk)]


def modify_chunk(array: Array, coords: tuple[int, ...], task: ChunkTask | None,
                 modify: Callable[[np.ndarray], None], *,
                 region: tuple[tuple[int, int], ...],
                 inner_chunks: list[tuple[int, ...]] | None = None) -> None:
    """Read-modify-write one chunk under its lock.  A chunk the ``task`` covers entirely is
    not read: it is built from the new values alone.  ``region`` bounds, per axis, the
    elements ``modify`` changes (so a shard rewrites only those inner chunks);
    ``inner_chunks``, if given, lists the inner chunks of a shard it changes (points
    scattered over a shard touch few of those in their bounding box)."""
    key = array.chunk_key(coords)
    chunk_shape = array._chunk_shape_at(coords)
    # A partial write holds all of the chunk, stored or not (it is encoded whole; a shard's
    # partial write, a shard-shaped scratch array): what cannot be allocated is refused by
    # the chunk's key, depending on the memory the process may take, not a fixed limit.
    with (chunk_memory(key, math.prod(chunk_shape) * array._itemsize),
          chunk_lock(array._store, key)):
        origin = array._chunk_origin(coords)
        if task is not None and task.covers(chunk_shape, array.shape, origin):
            inside = all(o + c <= n for o, c, n in
                         zip(origin, chunk_shape, array.shape, strict=True))
            chunk = new_chunk(array, chunk_shape, filled=not inside)
        elif array._sharding is not None:
            _modify_inner_chunks(array, key, chunk_shape, region, modify, inner_chunks)
            return
        else:
            raw = fetch_chunk(array, key, chunk_shape)
            if raw is None:
                chunk = new_chunk(array, chunk_shape, filled=True)
            else:
                chunk = array._pipeline.decode(raw, chunk_shape, key=key)
                if not chunk.flags.writeable:
                    chunk = chunk.copy()
        modify(chunk)
        store_chunk(array, key, chunk)


def _modify_inner_chunks(array: Array, key: str, shard_shape: tuple[int, ...],
                         region: tuple[tuple[int, int], ...],
                         modify: Callable[[np.ndarray], None],
                         inner_chunks: list[tuple[int, ...]] | None = None) -> None:
    """A partial write of a shard (its lock held): decode only the inner chunks holding
    ``region`` (or those listed in ``inner_chunks``: ``modify`` must change nothing else),
    modify them in a shard-shaped scratch array (pages of the untouched part are never
    written, so never allocated), and rewrite the shard with every other inner chunk's
    stored bytes kept as they are."""
    codec = array._sharding
    assert codec is not None
    old = fetch_chunk(array, key, shard_shape)
    touched = (codec.inner_chunks_for_region(shard_shape, region) if inner_chunks is None
               else inner_chunks)
    decoded = None
    if old is not None:
        view = memoryview(old).cast("B")

        def from_old(ranges: Sequence[tuple[int, int | None]]) -> list[memoryview]:
            spans = [resolve_byte_range(start, length, len(view)) for start, length in ranges]
            return [view[lo:hi] for lo, hi in spans]

        decoded = codec.read_inner_chunks(from_old, shard_shape, touched, key=key)
    scratch = np.empty(shard_shape, dtype=array.dtype)
    fill = array._metadata.fill_value_array
    boxes = {}
    for inner in touched:
        box = tuple(slice(i * c, (i + 1) * c)
                    for i, c in zip(inner, codec.chunk_shape, strict=True))
        part = None if decoded is None else decoded.get(inner)
        scratch[box] = fill if part is None else part
        boxes[inner] = box
    modify(scratch)
    new = codec.update_shard(old, shard_shape,
                             {inner: scratch[box] for inner, box in boxes.items()}, key=key)
    if new is None:
        array._store.erase(key)
    else:
        array._store.set(key, new)


def new_chunk(array: Array, chunk_shape: tuple[int, ...], *, filled: bool) -> np.ndarray:
    """A fresh chunk of ``chunk_shape`` (filled with the fill value, or undefined)."""
    chunk = np.empty(chunk_shape, dtype=array.dtype)
    if filled and chunk.size:
        buf = chunk.reshape(-1).view(np.uint8)
        fill_strided(buf, 0, int64_array([array._itemsize]), int64_array([chunk.size]),
                     array._fill_bytes)
    return chunk


def store_chunk(array: Array, key: str, chunk: np.ndarray) -> None:
    """Write an encoded chunk, or erase it when it holds only the fill value."""
    if array._references:
        objects.store_chunk(array, key, chunk)
        return
    if not array._write_empty_chunks and is_uniform(
        chunk.reshape(-1).view(np.uint8), array._fill_bytes
    ):
        array._store.erase(key)
    else:
        # (Store.set copies or writes it: the thread's scratch can hold the encoding)
        array._store.set(key, array._pipeline.encode_to_scratch(chunk))


# -- resize and append ---------------------------------------------------------------------------

def resize(array: Array, new_shape: tuple[int, ...]) -> None:
    """Change the shape (see :meth:`zarr3c.Array.resize`): the metadata first, then chunks
    wholly outside erased and the outside part of chunks cut by the new edge reset."""
    if len(new_shape) != array.ndim:
        raise ShapeMismatchError(
            f"cannot resize a {array.ndim}-d array to shape {new_shape} ({len(new_shape)}-d)"
        )
    # From the document stored now, not this object's copy: the shape or the attributes may
    # have changed through another object since it was read.
    with array._stored_metadata() as current:
        array._set_metadata(current)
        old_shape = array.shape
        new_meta = current.evolve(
            shape=new_shape, chunk_grid=current.chunk_grid.resized(new_shape)
        )
        # Metadata first: a crash in between leaves stray chunks outside the shape (ignored),
        # never a declared region whose chunks were already erased.
        array._format.write_node(array._store, array._path, new_meta)
    old_stored = list(array._stored_chunks())
    array._set_metadata(new_meta)
    grid_shape = geometry.grid_shape(array)
    outside = {k for k, c in old_stored
               if any(ci >= n for ci, n in zip(c, grid_shape, strict=True))}
    if outside:
        array._store.erase_values(outside)
    shrunk = [i for i, (n, o) in enumerate(zip(new_shape, old_shape, strict=True)) if n < o]
    if not shrunk:
        return
    for key, coords in old_stored:
        if key in outside:
            continue
        origin = array._chunk_origin(coords)
        chunk_shape = array._chunk_shape_at(coords)
        cut = [i for i in shrunk if origin[i] + chunk_shape[i] > new_shape[i]]
        if cut:
            _reset_outside(array, key, origin, chunk_shape, cut)


def _reset_outside(array: Array, key: str, origin: Sequence[int],
                   chunk_shape: tuple[int, ...], axes: Sequence[int]) -> None:
    """Reset the part of the chunk at ``key`` past the array's new edge on ``axes`` to the
    fill value (growing the array again shows the fill value, not stale data)."""
    with chunk_lock(array._store, key):
        raw = fetch_chunk(array, key, chunk_shape)
        if raw is None:
            return
        chunk = np.array(array._pipeline.decode(raw, chunk_shape, key=key))
        fill = array._metadata.fill_value_array
        for i in axes:
            index = [slice(None)] * array.ndim
            index[i] = slice(max(0, array.shape[i] - origin[i]), None)
            chunk[tuple(index)] = fill
        store_chunk(array, key, chunk)


def append(array: Array, data: Any, axis: int) -> tuple[int, ...]:
    """Grow ``array`` along ``axis`` and write ``data`` there (see
    :meth:`zarr3c.Array.append`); returns the new shape."""
    data = np.asarray(data)
    if data.ndim != array.ndim:
        raise ShapeMismatchError(f"cannot append {data.ndim}-d data to a {array.ndim}-d array")
    if not -array.ndim <= axis < array.ndim:
        raise IndexingError(f"axis {axis} is out of bounds for a {array.ndim}-d array")
    axis %= array.ndim
    for i, (n, m) in enumerate(zip(array.shape, data.shape, strict=True)):
        if i != axis and n != m:
            raise ShapeMismatchError(
                f"data shape {data.shape} does not match array shape {array.shape} "
                f"on axis {i}"
            )
    old = array.shape[axis]
    new_shape = list(array.shape)
    new_shape[axis] += data.shape[axis]
    array.resize(tuple(new_shape))
    region = [slice(None)] * array.ndim
    region[axis] = slice(old, new_shape[axis])
    array[tuple(region)] = data
    return array.shape


# -- memory --------------------------------------------------------------------------------------

class WriteScratch:
    """Per-thread chunk buffers for one write call, reused from chunk to chunk (and freed
    with the call): no allocation per chunk."""

    __slots__ = ("_local",)

    def __init__(self) -> None:
        self._local = threading.local()

    def arena(self) -> PartArena:
        """This thread's memory for the parts of the shards it writes (a shard's parts are
        written before the thread encodes its next shard)."""
        arena = getattr(self._local, "arena", None)
        if arena is None:
            arena = self._local.arena = PartArena()
        return arena

    def chunk(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A C-contiguous array of ``shape`` over this thread's buffer (contents undefined)."""
        nbytes = math.prod(shape) * dtype.itemsize
        buf = getattr(self._local, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = self._local.buf = np.empty(nbytes, dtype=np.uint8)
        return buf[:nbytes].view(dtype).reshape(shape)


def byte_source(arr: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """A 1-d ``uint8`` view of the memory of ``arr`` and its byte strides, element ``(0,
    ..., 0)`` at byte 0: what the copy kernels read.  Without copying when no stride is
    negative (C or F order, broadcast, sliced); otherwise from a C-contiguous copy."""
    itemsize = arr.dtype.itemsize
    if arr.flags.c_contiguous:
        return arr.reshape(-1).view(np.uint8), c_strides(arr.shape, itemsize)
    if any(s < 0 for s in arr.strides) or not itemsize:
        arr = np.ascontiguousarray(arr)
        return arr.reshape(-1).view(np.uint8), c_strides(arr.shape, itemsize)
    span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True)) + itemsize
    # The bytes from element 0 to the last one, viewed through the array interface (as
    # numpy's as_strided does); ``arr`` is kept alive as the view's base.
    interface = dict(arr.__array_interface__)
    interface.update(shape=(span,), strides=None, typestr="|u1", descr=[("", "|u1")])
    view = np.asarray(_Interface(interface, arr))
    return view, list(arr.strides)


class _Interface:
    """An object exposing ``__array_interface__`` that keeps its base alive."""

    def __init__(self, interface: dict[str, Any], base: np.ndarray):
        self.__array_interface__ = interface
        self.base = base
