"""Writes executed natively: the chunks a write covers entirely, encoded and stored on the
native thread pool (:mod:`zarr3c._kernels.writes`), the GIL released for the whole execution;
and the chunks it covers in part, read, modified and written the same way.

A write of a selection projects it on the chunk grid per dimension
(:func:`~zarr3c.indexing.project_dims`).  Along each dimension some chunks are covered
entirely (every element of the chunk inside the array is written); the chunks covered along
every dimension, the *whole chunks*, need no read, and where

- the array is on a regular grid (of chunks, or of shards whose index chain is the usual
  ``bytes`` [+ ``crc32c``]),
- its (inner) chain is one the kernel encodes
  (:func:`zarr3c.codecs.native.native_write_chain`: ``bytes`` in either byte order, a
  ``transpose`` before it, ``zstd``, ``blosc``, ``gzip`` or no compressor, trailing
  ``crc32c``), and
- the store lets the kernel write its files itself (``Store.chunk_write_files``:
  :class:`~zarr3c.stores.LocalStore` without ``fsync`` or cross-process locks), or the
  array is sharded (its shards are then handed to the store's ``set_many``),

they are planned in bulk (numpy over the per-dimension entries, not a task per chunk) and
handed over in batches (:data:`BATCH_CHUNKS` chunks; for shards at most one per thread and
:data:`SHARD_BYTES_PER_THREAD` of encodings per thread): the batch's keys locked
(:func:`~zarr3c.concurrency.chunk_locks`), then each chunk's (inner chunk's) elements
copied out of the value, compared with the fill value, encoded, and the chunk (shard)
written as ``LocalStore.set`` writes (a temporary file renamed over the key's file), or
the shard laid out in a buffer of the batch and the batch's values stored by one
``set_many`` call (:func:`_store_values`).  A chunk (shard) equal to the fill value is
erased instead (unless ``write_empty_chunks``), as on the Python path.  The other chunks (covered in
part along some dimension) become :class:`~zarr3c.indexing.ChunkTask` objects.  Those of
an unsharded array on a store the kernel writes files to, whose selection is a run on every
axis (slices, ints), are read, modified and written in batches of
:data:`PARTIAL_BYTES_PER_THREAD` of chunks per thread, drawn as the Python path draws its
tasks: the batch's keys locked, its chunks decoded whole into one buffer by the read
kernel (``chunks.read_chunks``; the fill where not stored), the value's runs copied in
(``scatter.copy_pieces``), and the chunks encoded and written by ``write_chunks``.  The
rest (partial shards, index arrays, other stores) go to the Python path's read, modify and
write.

A chunk the kernels could not read or write (damaged, an I/O error, a directory that is a
file) is handed back to the Python path, which writes it again and reports what is wrong
with the key at fault; both paths store the same bytes (``tests/array/test_native_writes.py``
compares them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from zarr3c._kernels.scatter import copy_pieces
from zarr3c.array.read import native as read_native
from zarr3c.concurrency import chunk_locks, get_num_threads
from zarr3c.errors import SelectionTooLargeError
from zarr3c.indexing import (
    ChunkTask,
    DimEntry,
    OrthogonalSelection,
    chunk_tasks,
    int64_array,
    project_dims,
)

try:  # (POSIX builds)
    from zarr3c._kernels import writes as _writes
except ImportError:  # pragma: no cover - other systems
    _writes = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from zarr3c._kernels.writes import EncodeArena
    from zarr3c.array.core import Array
    from zarr3c.stores.base import Store

from zarr3c.codecs.native import NativeWriteChain

__all__ = ["BATCH_CHUNKS", "PARTIAL_BYTES_PER_THREAD", "SHARD_BYTES_PER_THREAD",
           "write_natively"]

#: The most chunks (shards) one kernel call writes (and whose keys it holds locked).
BATCH_CHUNKS = 1024
#: The most room for encoded inner chunks one call of the shard kernel holds, per thread of
#: the call (at least one shard's, at most one shard's per thread): they are kept until the
#: call ends.  Several shards a call let one shard's file be written while the next shard's
#: inner chunks are encoded; one shard a call leaves the other threads idle while the last
#: one writes it (``compare_peers.py``, sharded zstd ``write`` on 16 cores).
SHARD_BYTES_PER_THREAD = 64 << 20
#: The most bytes of chunks written in part that one batch reads, modifies and writes, per
#: thread of the calls (at least one chunk): they are held decoded until the batch is
#: written, as the Python path holds one chunk per worker.
PARTIAL_BYTES_PER_THREAD = 64 << 20
#: The most bytes of a chunk (shard) the kernel takes (``writes.write_chunks`` refuses
#: more); larger ones take the Python path, which refuses what it cannot hold by key.
_CHUNK_NBYTES_MAX = 1 << 62


def write_natively(array: Array, sel: OrthogonalSelection, src: np.ndarray,
                   value_strides: Sequence[int]) -> Iterable[ChunkTask]:
    """Write natively the chunks of ``sel`` that the value (``src``: its bytes, element
    ``(0, ..., 0)`` at byte 0, byte strides ``value_strides``) covers entirely, and, for an
    unsharded array, those it covers in part with a run on every axis (read, modified and
    written: :func:`_modify_natively`); returns the chunk tasks left to the Python path
    (every chunk's, where the array, its chain or its store is not one the kernels write).

    Parameters
    ----------
    array
        The array written.
    sel
        The selection written.
    src, value_strides
        The value's bytes and byte strides.

    Returns
    -------
    iterable of ChunkTask
        The tasks the Python path writes: chunks of a shard or by index arrays covered in
        part, and chunks the kernels could not read or write.

    Raises
    ------
    StoreError
        If a key's cross-process lock cannot be taken, or a chunk equal to the fill value
        cannot be erased.

    Examples
    --------
    >>> import numpy as np, tempfile, zarr3c
    >>> from zarr3c.array.write import byte_source
    >>> from zarr3c.indexing import parse_orthogonal_selection
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a = zarr3c.create_array(tmp, shape=(4,), chunks=(2,), dtype="u1", shards=(4,))
    ...     src, strides = byte_source(np.arange(1, 4, dtype="u1"))
    ...     sel = parse_orthogonal_selection((slice(0, 3),), a.shape)
    ...     left = list(write_natively(a, sel, src, strides))  # (a shard in part)
    ...     print([task.coords for task in left], a[:].tolist())
    [(0,)] [0, 0, 0, 0]
    """
    per_dim = project_dims(sel, array._dims)
    if per_dim is None:
        return ()
    grid, kernel = array._box_grid, _kernel(array)
    if kernel is None or grid is None or array.ndim == 0:
        return chunk_tasks(per_dim)
    covered = [[e for e in entries if _covers(e, c, n)]
               for entries, c, n in zip(per_dim, grid.chunk_shape, array.shape, strict=True)]
    failed: list[ChunkTask] = []
    partial: Iterable[ChunkTask] = chunk_tasks(per_dim)
    if all(covered):
        whole = _write_whole(array, kernel, covered, src, value_strides)
        if whole is None:  # (the store writes its own files)
            return partial
        failed, partial = whole, _partial_tasks(per_dim, covered)
    if kernel.shards is None:
        partial = _modify_natively(array, kernel, partial, src, value_strides)
    return itertools.chain(partial, failed)


class _Kernel(NamedTuple):
    """Which kernel writes an array's whole chunks, and its arguments beyond the plan's."""

    chain: NativeWriteChain  # the (inner) chunks' chain
    shards: tuple[np.ndarray, bool, bool] | None  # inner chunk shape, index at start and
    #                                                with a checksum; None: unsharded
    batch: int  # the most chunks (shards) one call takes
    shard_room: int  # the most bytes one shard's encodings take (0: unsharded)


def _kernel(array: Array) -> _Kernel | None:
    """The kernel writing ``array``'s whole chunks (shards), or None: the Python path."""
    if (_writes is None or not read_native.enabled or array._box_grid is None
            or array._box_grid.chunk_nbytes > _CHUNK_NBYTES_MAX):
        return None
    sharding = array._sharding
    if sharding is None:
        chain = array._pipeline.native_write
        return None if chain is None else _Kernel(chain, None, BATCH_CHUNKS, 0)
    ib, chain = array._inner_box, sharding.inner_native_write_chain()
    if (ib is None or ib.plain is None or chain is None or ib.plain[0] % 16 not in (0, 4)
            or ib.plain[0] > read_native.INDEX_BATCH_BYTES):
        return None  # (another index chain, or inner chain, or a huge index: Python's path)
    index_nbytes, at_end = ib.plain
    # At most one shard's encodings per thread, as the Python path holds (and at most
    # SHARD_BYTES_PER_THREAD per thread); each encoding 8-byte aligned in the arena.
    shard_room = math.prod(ib.per_shard) * (
        _writes.encoded_cap(ib.nbytes, chain.compressor, chain.checksums) + 8)
    threads = get_num_threads()
    per_call = max(1, min(BATCH_CHUNKS, threads, threads * SHARD_BYTES_PER_THREAD // shard_room))
    return _Kernel(chain, (ib.shape_i64, not at_end, index_nbytes % 16 == 4), per_call,
                   shard_room)


def _covers(entry: DimEntry, chunk: int, size: int) -> bool:
    """Whether a dimension's entry takes all of its chunk that lies inside the array."""
    index, count, local, _ = entry
    return (isinstance(local, tuple) and local == (0, 1)
            and count == min(chunk, size - index * chunk))


def _partial_tasks(per_dim: list[list[DimEntry]], covered: list[list[DimEntry]]
                   ) -> Iterable[ChunkTask]:
    """The tasks of the chunks covered in part: for each dimension ``d``, those covered along
    the dimensions before it and not along ``d`` (each chunk once)."""
    for d, entries in enumerate(per_dim):
        whole = {id(e) for e in covered[d]}
        part = [e for e in entries if id(e) not in whole]
        if part:
            yield from chunk_tasks([*covered[:d], part, *per_dim[d + 1:]])


def _write_whole(array: Array, kernel: _Kernel, covered: list[list[DimEntry]],
                 src: np.ndarray, value_strides: Sequence[int]) -> list[ChunkTask] | None:
    """Write the whole chunks (every combination of ``covered`` entries) with the kernel:
    the tasks of those it could not write, or None where the store does not let it."""
    assert _writes is not None and array._box_grid is not None
    # Per dimension: the entries' chunk indices, counts and first output positions; each
    # whole chunk is one combination of positions (C order), taken with numpy at once.
    try:  # (a few int64 per whole chunk: a write of a scalar over a huge array can exceed it)
        picks = [p.reshape(-1) for p in
                 np.meshgrid(*[np.arange(len(c)) for c in covered], indexing="ij")]
        coords = np.stack([np.array([e[0] for e in c], dtype=np.int64)[p]
                           for c, p in zip(covered, picks, strict=True)], axis=1)
        counts = np.ascontiguousarray(np.stack(
            [np.array([e[1] for e in c], dtype=np.int64)[p]
             for c, p in zip(covered, picks, strict=True)], axis=1))
        offsets = np.asarray(sum(np.array([e[3][0] * s for e in c], dtype=np.int64)[p]
                                 for c, p, s in zip(covered, picks, value_strides,
                                                    strict=True)),
                             dtype=np.int64).reshape(-1)
    except MemoryError:
        raise SelectionTooLargeError(
            f"the write covers {math.prod(len(c) for c in covered)} whole chunks: more "
            f"than can be planned") from None
    # (an out run's step is the dimension's: 1, or -1 for a reversed selection)
    strides = np.array([c[0][3][1] * s for c, s in zip(covered, value_strides, strict=True)],
                       dtype=np.int64)
    names = read_native.chunk_names(array, coords)
    status = np.empty(len(names), dtype=np.int8)
    whole = _Whole(src, offsets, strides, counts)
    files = array._store.chunk_write_files(array._prefix, names)
    if files is None:
        if kernel.shards is None:
            # (the Python path copies a chunk in and out of one scratch buffer a thread,
            # in cache, as fast here: asv NativeValueWrites, docs/performance.md)
            return None
        _store_values(array, kernel, names, whole, status)
        return _failed_tasks(covered, picks, status)
    sizes = np.empty(len(names), dtype=np.int64)
    arena = _arena(kernel, len(names))
    for lo in range(0, len(names), kernel.batch):
        hi = min(lo + kernel.batch, len(names))
        keys = [array._prefix + name for name in names[lo:hi]]
        # (chunk_write_files answers only for stores without cross-process locks)
        with chunk_locks(array._store, keys, key_locks=False):
            _encode(array, kernel, whole, files[lo:hi], True, slice(lo, hi), sizes, status,
                    arena)
            _erase_empty(array._store, keys, status[lo:hi])
    return _failed_tasks(covered, picks, status)


class _Whole(NamedTuple):
    """The whole chunks (shards) of a write as the kernels take them."""

    src: np.ndarray  # the value's bytes
    offsets: np.ndarray  # per chunk, the byte of the value at its first element
    strides: np.ndarray  # the value's byte strides along the chunks' axes
    counts: np.ndarray  # per chunk, its elements along each axis


def _failed_tasks(covered: list[list[DimEntry]], picks: list[np.ndarray], status: np.ndarray
                  ) -> list[ChunkTask]:
    """The tasks of the whole chunks (``picks`` of ``covered``) the kernel could not write
    (``status`` below 0), for the Python path."""
    return [next(iter(chunk_tasks([[c[p[i]]] for c, p in zip(covered, picks, strict=True)])))
            for i in np.flatnonzero(status < 0).tolist()]


def _arena(kernel: _Kernel, n: int) -> EncodeArena:
    """One arena for a write's shard calls, so that its pages fault in once; sized at once
    where the encodings' sizes are known (no compressor: else it holds what they take)."""
    assert _writes is not None
    expect = 0
    if kernel.chain.compressor == _writes.NONE:
        expect = min(kernel.batch, n) * kernel.shard_room
    return _writes.EncodeArena(expect)


def _encode(array: Array, kernel: _Kernel, whole: _Whole, dests: list[bytes] | list[np.ndarray],
            paths: bool, part: slice, sizes: np.ndarray, status: np.ndarray,
            arena: EncodeArena | None) -> None:
    """The chunks (shards) ``part`` of ``whole`` encoded by one kernel call into ``dests``:
    their files (``paths``) or buffers; ``sizes`` and ``status`` of them set.  ``arena``
    holds a shard call's inner chunks (None for chunks)."""
    assert _writes is not None and array._box_grid is not None
    chain = kernel.chain
    shape = np.asarray(array._box_grid.chunk_shape, dtype=np.int64)
    order = chain.order_for(array.ndim)  # (a transpose codec's: each chunk laid out so)
    if kernel.shards is None:
        _writes.write_chunks(
            dests, paths, whole.src, whole.offsets[part], whole.strides, whole.counts[part],
            shape, array._itemsize, array._fill_bytes, not array._write_empty_chunks,
            chain.compressor, chain.level, chain.zstd_checksum, chain.checksums, chain.swap,
            get_num_threads(), sizes[part], status[part], order, chain.blosc)
        return
    inner, at_start, checksum = kernel.shards
    assert arena is not None
    _writes.write_shards(
        dests, whole.src, whole.offsets[part], whole.strides, whole.counts[part], shape, inner,
        array._itemsize, array._fill_bytes, not array._write_empty_chunks, chain.compressor,
        chain.level, chain.zstd_checksum, chain.checksums, chain.swap, at_start, checksum,
        arena, get_num_threads(), sizes[part], status[part], order, chain.blosc, paths)


def _erase_empty(store: Store, keys: list[str], status: np.ndarray) -> None:
    """Erase the keys whose chunks (shards) the kernel found equal to the fill value."""
    assert _writes is not None
    empty = [keys[i] for i in np.flatnonzero(status == _writes.EMPTY).tolist()]
    if empty:
        store.erase_values(empty)


def _store_values(array: Array, kernel: _Kernel, names: list[str], whole: _Whole,
                  status: np.ndarray) -> None:
    """The whole shards ``names`` on a store that writes its own values (memory, zip,
    object and fsspec stores, a ``LocalStore`` with ``fsync`` or cross-process locks):
    encoded by the kernel into buffers, a batch at a time, and handed to the store's
    ``set_many`` (which copies them; an object store writes a batch concurrently), those
    storing no inner chunk erased; ``status`` as the kernel leaves it (a batch that cannot
    be allocated: every shard of it to the Python path).

    A batch is at most :data:`_Kernel.batch` shards and about a quarter of the write, so
    that a helper thread hands one batch to the store while the kernel encodes the next:
    the store's copies hold the GIL, the kernel does not (asv ``NativeValueWrites``)."""
    assert _writes is not None and kernel.shards is not None
    assert array._inner_box is not None and array._inner_box.plain is not None
    room = (kernel.shard_room + array._inner_box.plain[0] + 7) // 8 * 8  # (and the index)
    per_call = max(1, min(kernel.batch, -(-len(names) // 4)))
    # Two buffers taking turns: the helper stores from one while the kernel fills the other
    # (so a write faults in at most two batches' worth of fresh pages).
    try:
        buffers = [np.empty(per_call * room, dtype=np.uint8)
                   for _ in range(min(2, -(-len(names) // per_call)))]
    except (MemoryError, ValueError):  # (more than numpy can index, too: the Python
        status[:] = _writes.FAILED_MEMORY  # path refuses such a shard by its key)
        return
    sizes = np.empty(len(names), dtype=np.int64)
    arena = _arena(kernel, len(names))
    pending: Future[None] | None = None
    helper: ThreadPoolExecutor | None = None
    try:
        for turn, lo in enumerate(range(0, len(names), per_call)):
            hi = min(lo + per_call, len(names))
            keys = [array._prefix + name for name in names[lo:hi]]
            buffer = buffers[turn % 2]
            dests = [buffer[i * room:(i + 1) * room] for i in range(hi - lo)]
            locks = ExitStack()  # (released once the batch is stored, maybe by the helper)
            try:
                locks.enter_context(chunk_locks(array._store, keys))
                _encode(array, kernel, whole, dests, False, slice(lo, hi), sizes, status,
                        arena)
                if pending is not None:
                    pending.result()  # (the batch before: its failure is raised here)
                    pending = None
            except BaseException:
                locks.close()
                raise
            batch = _ValueBatch(keys, buffer, room, status[lo:hi], sizes[lo:hi], locks)
            if hi == len(names):
                _hand_over(array._store, batch)
                continue
            if helper is None:
                helper = ThreadPoolExecutor(1, thread_name_prefix="zarr3c-values")
            pending = helper.submit(_hand_over, array._store, batch)
        if pending is not None:
            pending.result()
    finally:
        if helper is not None:
            helper.shutdown(wait=True)  # (on a failure: the batch in hand stored, unlocked)


class _ValueBatch(NamedTuple):
    """One batch of :func:`_store_values`, encoded and waiting for the store."""

    keys: list[str]  # its shards' keys
    buffer: np.ndarray  # their encodings, ``room`` bytes apart
    room: int
    status: np.ndarray  # what the kernel left of each
    sizes: np.ndarray  # each encoding's length
    locks: ExitStack  # its keys' locks, released once it is stored


def _hand_over(store: Store, batch: _ValueBatch) -> None:
    """``batch``'s encodings stored by one ``set_many`` call, those equal to the fill value
    erased; its keys' locks released."""
    assert _writes is not None
    with batch.locks:
        room, view = batch.room, batch.buffer.data
        written = np.flatnonzero(batch.status == _writes.WRITTEN).tolist()
        if written:
            store.set_many([(batch.keys[i], view[i * room:i * room + int(batch.sizes[i])])
                            for i in written])
        _erase_empty(store, batch.keys, batch.status)


def _modify_natively(array: Array, kernel: _Kernel, tasks: Iterable[ChunkTask],
                     src: np.ndarray, value_strides: Sequence[int]) -> Iterator[ChunkTask]:
    """Read, modify and write natively the chunks of an unsharded array that ``tasks`` cover
    in part with runs on every axis (strided tasks), in batches of at most
    :data:`PARTIAL_BYTES_PER_THREAD` of chunks per thread (:func:`_modify_batch`), as the
    tasks are drawn; yields the tasks left to the Python path: those that are not runs, and
    the chunks either kernel could not read or write (which that path reports).  Lazy, as
    the Python path draws its tasks: a write's plan is never held whole."""
    grid = array._box_grid
    assert grid is not None  # (a kernel writes only regular grids: see _kernel)
    per_call = max(1, get_num_threads() * PARTIAL_BYTES_PER_THREAD // grid.chunk_nbytes)
    batch: list[ChunkTask] = []
    for task in tasks:
        if not task.strided:
            yield task
            continue
        batch.append(task)
        if len(batch) == per_call:
            yield from _modify_batch(array, kernel, batch, src, value_strides)
            batch = []
    if batch:
        yield from _modify_batch(array, kernel, batch, src, value_strides)


def _modify_batch(array: Array, kernel: _Kernel, batch: list[ChunkTask], src: np.ndarray,
                  value_strides: Sequence[int]) -> list[ChunkTask]:
    """One batch of :func:`_modify_natively`, the chunks' keys locked for it: the chunks
    read and decoded whole into one buffer by one call of the read kernel
    (``chunks.read_chunks``, each chunk direct; the fill where not stored), the value's runs
    copied in (:func:`_copy_runs`), and the chunks encoded and written by one call of
    ``writes.write_chunks``; returns the tasks left to the Python path."""
    grid, chain = array._box_grid, array._pipeline.native
    # (a chain the kernels encode is one they decode, from the same build: native_write_chain)
    assert grid is not None and chain is not None and read_native._chunks is not None
    n, nbytes, itemsize = len(batch), grid.chunk_nbytes, array._itemsize
    names = read_native.chunk_names(
        array, np.array([t.coords for t in batch], dtype=np.int64).reshape(n, -1))
    files = array._store.chunk_write_files(array._prefix, names)
    if files is None:
        return batch
    try:
        chunks = np.empty(n * nbytes, dtype=np.uint8)
    except MemoryError:  # (the Python path refuses such a chunk by its key)
        return batch
    each = np.arange(n + 1, dtype=np.int64)  # (one piece a chunk: the whole of it)
    at = each[:n] * nbytes
    rows = np.repeat(np.asarray(grid.chunk_shape, dtype=np.int64)[None, :], n, axis=0)
    read = np.empty(n, dtype=np.int8)
    keys = [array._prefix + name for name in names]
    with chunk_locks(array._store, keys, key_locks=False):
        read_native._chunks.read_chunks(
            files, True, each[:n], each[1:], np.zeros(n, dtype=np.int64), grid.chunk_strides,
            chunks, at, np.repeat(grid.chunk_strides[None, :], n, axis=0), rows, itemsize,
            array._fill_bytes, np.ones(n, dtype=np.uint8), chain.compressor, chain.checksums,
            chain.swap, nbytes, get_num_threads(), read, chain.transpose(grid.chunk_shape))
        ok = np.flatnonzero(read >= 0).tolist()
        _copy_runs([batch[i] for i in ok], at[ok], src, value_strides, chunks,
                   grid.chunk_strides.tolist(), itemsize)
        left = [batch[i] for i in np.flatnonzero(read < 0).tolist()]
        return left + _write_modified(array, kernel, [batch[i] for i in ok],
                                      [files[i] for i in ok], [keys[i] for i in ok], chunks,
                                      at[ok], rows[ok])


def _copy_runs(tasks: list[ChunkTask], at: np.ndarray, src: np.ndarray,
               value_strides: Sequence[int], chunks: np.ndarray, strides: list[int],
               itemsize: int) -> None:
    """Each task's runs of the value (``src``, byte strides ``value_strides``) copied into
    its chunk, C order at byte ``at[i]`` of ``chunks`` (byte strides ``strides``): with one
    call of the copy kernel where the runs step alike in the value in every chunk (a
    selection of slices and ints), else one call a chunk (index arrays that happen to be
    runs)."""
    src_offsets, src_strides, dst_offsets, dst_strides, counts = [], [], [], [], []
    for task, base in zip(tasks, at.tolist(), strict=True):
        src_offsets.append(sum(run[0] * s for run, s in zip(task.out, value_strides,
                                                            strict=True)))
        # (a dimension of one element has no step)
        src_strides.append([run[1] * s if n > 1 else 0 for run, s, n in zip(
            task.out, value_strides, task.counts, strict=True)])
        dst_offsets.append(base + sum(run[0] * s for run, s in zip(task.local, strides,
                                                                   strict=True)))
        dst_strides.append([run[1] * s for run, s in zip(task.local, strides, strict=True)])
        counts.append(task.counts)
    if not tasks:
        return
    rows, shapes = np.array(dst_strides, dtype=np.int64), np.array(counts, dtype=np.int64)
    if all(row == src_strides[0] for row in src_strides):
        copy_pieces(src, int64_array(src_offsets), int64_array(src_strides[0]), chunks,
                    int64_array(dst_offsets), rows, shapes, itemsize)
        return
    for i in range(len(tasks)):
        copy_pieces(src, int64_array(src_offsets[i:i + 1]), int64_array(src_strides[i]),
                    chunks, int64_array(dst_offsets[i:i + 1]), rows[i:i + 1],
                    shapes[i:i + 1], itemsize)


def _write_modified(array: Array, kernel: _Kernel, batch: list[ChunkTask], files: list[bytes],
                    keys: list[str], chunks: np.ndarray, offsets: np.ndarray,
                    rows: np.ndarray) -> list[ChunkTask]:
    """Encode and write the modified chunks at ``offsets`` of ``chunks`` (whole, C order)
    to ``files`` (their keys locked by the caller), erasing those equal to the fill value;
    returns the tasks of those the kernel could not write."""
    if not batch:
        return []
    grid = array._box_grid
    assert grid is not None
    status = np.empty(len(batch), dtype=np.int8)
    sizes = np.empty(len(batch), dtype=np.int64)
    _encode(array, kernel, _Whole(chunks, offsets, grid.chunk_strides, rows), files, True,
            slice(None), sizes, status, None)
    _erase_empty(array._store, keys, status)
    return [batch[i] for i in np.flatnonzero(status < 0).tolist()]
