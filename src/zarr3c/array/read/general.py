"""The general read: any orthogonal selection (basic keys with any step, integer and boolean
arrays per axis) projected onto the chunk grid (``plan_chunks``: one :class:`ChunkTask` per
chunk touched), every touched chunk read and decoded once however many selections touch
it, and its elements copied straight into each output.

Its steps, planned then executed: :func:`~.plan.plan_general` allocates the outputs and
groups the tasks by chunk, putting aside raw chunks whose selected elements span at most
half of them (:class:`~.plan.RawSpan`: fetched by that span, :func:`_place_span`); every
other chunk is read on the thread pool (:func:`_read_group`): decoded into scratch or
straight into an output and copied out per task (:func:`_copy_task`), or for a shard only
the inner chunks the tasks touch (:func:`_read_shard_runs` for strided tasks,
:func:`_read_shards_outer` for index arrays, the shards' inner chunks cut into runs that
spread over every thread).  From an object store the chunks' values are fetched ahead, a
batch's requests in flight together (:func:`~.chunk.read_chunks_together`), and so are
small shards, whole (:func:`_shard_sources`).

Selections of an array whose chain and grid the native pipeline takes
(:func:`read_selections`) are read by it instead, in one kernel call
(:func:`~.native.read_outer_natively`); only the chunks it could not read come here."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from zarr3c._buffers import empty_array
from zarr3c._kernels.copy import copy_strided, fill_strided
from zarr3c._kernels.scatter import copy_outer
from zarr3c.array import objects
from zarr3c.array.read import native
from zarr3c.array.read.chunk import (
    fetched_chunks,
    inner_memory,
    read_chunk,
    read_chunks_together,
)
from zarr3c.array.read.plan import (
    ChunkGroup,
    GeneralPlan,
    Member,
    OuterPieceMap,
    RawSpan,
    plan_general,
    plan_inner_pieces,
    plan_outer_parts,
    whole_chunk_run,
)
from zarr3c.array.read.points import read_shard_outer, split_shard_outer
from zarr3c.array.read.raw import read_raw_spans
from zarr3c.codecs.sharding import GetRanges, ShardIndex, ValueRanges, fetches_by_request
from zarr3c.concurrency import get_num_threads, in_worker, map_unordered
from zarr3c.indexing import (
    ChunkTask,
    OrthogonalSelection,
    c_strides,
    int64_array,
    parse_basic_selection,
    plan_chunks,
)

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["basic_result", "has_ellipsis", "read_general", "read_planned", "read_selection",
           "read_selections"]


def read_general(array: Array, selection: Any) -> Any:
    """``array[selection]`` for a basic selection, through the general path only (the
    selection parsed, planned per chunk and read by :func:`read_planned` in Python),
    never the short paths nor the native pipeline: the oracle they are tested against.

    Parameters
    ----------
    array
        The array to read.
    selection
        A basic selection (ints, slices with any step, ``...``, ``None``) or an already
        parsed :class:`~zarr3c.indexing.OrthogonalSelection` (its values are returned in
        the selection's ``out_shape`` then).

    Returns
    -------
    numpy.ndarray or scalar
        What ``array[selection]`` returns.

    Raises
    ------
    IndexingError
        For a selection that is not a valid basic selection of the array.

    Examples
    --------
    >>> import zarr3c
    >>> from zarr3c.array.read.general import read_general
    >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
    >>> a[...] = 7
    >>> read_general(a, (slice(1, 3), 2)).tolist()
    [7, 7]
    """
    if isinstance(selection, OrthogonalSelection):
        return array._in_order(_read_in_python(array, selection).reshape(selection.out_shape))
    sel = parse_basic_selection(selection, array.shape)
    return basic_result(array, selection, sel, _read_in_python(array, sel))


def _read_in_python(array: Array, sel: OrthogonalSelection) -> np.ndarray:
    """One selection read by its chunk tasks (the Python path only)."""
    return read_planned(array, [sel.counts], [plan_chunks(sel, array._dims) if sel.size
                                               else ()])[0]


def basic_result(array: Array, selection: Any, sel: OrthogonalSelection, raw: np.ndarray
                 ) -> Any:
    """What ``array[selection]`` returns for the values read (``sel`` its parse): numpy's
    shape, a scalar for all-integer keys, the array's memory order."""
    result = raw.reshape(sel.out_shape)
    if result.shape == () and not has_ellipsis(selection):
        return result[()]
    return array._in_order(result)


def has_ellipsis(selection: Any) -> bool:
    """Whether a basic key holds ``...`` (``a[...]`` of a 0-d array is an array, not a
    scalar)."""
    if selection is Ellipsis:
        return True
    return isinstance(selection, tuple) and any(s is Ellipsis for s in selection)


def read_selection(array: Array, sel: OrthogonalSelection) -> np.ndarray:
    """The elements of one orthogonal selection, in an array of shape ``sel.counts``."""
    return read_selections(array, [sel])[0]


def read_selections(array: Array, sels: Sequence[OrthogonalSelection]) -> list[np.ndarray]:
    """Read orthogonal selections, each chunk read and decoded once whichever selections
    touch it: those the native pipeline takes (:func:`~.native.reads_outer`) in one kernel
    call, into one buffer (:func:`~.native.read_outer_natively`), the others, and the chunks
    the kernel leaves, by their chunk tasks grouped by chunk."""
    native_ones = [i for i, sel in enumerate(sels)
                   if sel.size and native.reads_outer(array, sel)]
    outs: list[np.ndarray | None] = [None] * len(sels)
    left: set[tuple[int, ...]] | None = set()
    if native_ones:
        sizes = [math.prod(sels[i].counts) for i in native_ones]
        buffer = empty_array(sum(sizes), array.dtype)
        starts = np.cumsum([0, *sizes]).tolist()
        for i, lo, hi in zip(native_ones, starts, starts[1:], strict=False):
            outs[i] = buffer[lo:hi].reshape(sels[i].counts)
        left = native.read_outer_natively(array, [sels[i] for i in native_ones],
                                          buffer.view(np.uint8),
                                          [lo * array._itemsize for lo in starts[:-1]])
    plans: list[Iterable[ChunkTask]] = []
    for sel, out in zip(sels, outs, strict=True):
        if not sel.size:
            plans.append(())
        elif out is None or left is None:  # (not native, or the kernel read nothing)
            plans.append(plan_chunks(sel, array._dims))
        else:  # (the chunks the kernel left)
            plans.append([t for t in plan_chunks(sel, array._dims) if t.coords in left]
                         if left else ())
    return read_planned(array, [sel.counts for sel in sels], plans, outs=outs)


def read_planned(array: Array, counts: Sequence[Sequence[int]],
                 plans: Sequence[Iterable[ChunkTask]],
                 outs: Sequence[np.ndarray | None] | None = None) -> list[np.ndarray]:
    """Outputs of shapes ``counts`` (allocated, unless given as ``outs``) filled by their
    chunk ``plans`` (see the module)."""
    if array._references:  # (strings, bytes: numpy indexing, not byte copies)
        return objects.read_planned(array, counts, plans)
    plan = plan_general(counts, plans, array.dtype, array._chunk_shape_at,
                        array._pipeline.stores_raw_elements, outs)
    read_raw_spans(array, plan.spans, partial(_place_span, array, plan))
    whole = plan.whole
    if array._sharding is None:
        read_chunks_together(array, whole, _group_coords, partial(_read_group, array, plan))
        return plan.outs
    for groups, ranges_of in _shard_sources(array, whole):
        outer = [g for g in groups if not all(task.strided for task, _ in g.members)]
        if outer:
            _read_shards_outer(array, plan, outer, ranges_of)
        strided = [g for g in groups if all(task.strided for task, _ in g.members)]
        map_unordered(partial(_read_shard_runs, array, plan, ranges_of), strided)
    return plan.outs


def _shard_sources(array: Array, groups: list[ChunkGroup]
                   ) -> Iterator[tuple[list[ChunkGroup], Callable[[str], GetRanges]]]:
    """The shard groups of a read in batches, each with where its shards' byte ranges are
    read: from a store whose every read is a request, shards of at most
    :data:`~.native.SMALL_SHARD_BYTES` decoded (issue 33's small-shard rule) are fetched
    whole, a batch's shards together (:func:`~.chunk.fetched_chunks`), and their index and
    inner chunks sliced from memory (:class:`~zarr3c.codecs.sharding.ValueRanges`); other
    shards read their index, then their ranges, from the store."""
    if not array._store.reads_by_request:
        yield groups, array._ranges_of
        return
    itemsize = array._itemsize
    small = [math.prod(array._chunk_shape_at(g.coords)) * itemsize <= native.SMALL_SHARD_BYTES
             for g in groups]
    fetched = [g for g, s in zip(groups, small, strict=True) if s]
    if fetched:
        for lo, hi, keys, values in fetched_chunks(array, [g.coords for g in fetched]):
            yield fetched[lo:hi], partial(_held_ranges, dict(zip(keys, values, strict=True)))
    rest = [g for g, s in zip(groups, small, strict=True) if not s]
    if rest:
        yield rest, array._ranges_of


def _group_coords(group: ChunkGroup) -> tuple[int, ...]:
    """The coordinates of the chunk a group reads."""
    return group.coords


def _copy_task(array: Array, plan: GeneralPlan, member: Member, chunk: np.ndarray | None
               ) -> None:
    """Move a task's elements of a decoded chunk (None: not stored) into its output."""
    task, i = member
    itemsize = array._itemsize
    dst, out_strides = plan.targets[i]
    if not task.strided:
        if chunk is None:
            plan.outs[i][task.out_index()] = array._metadata.fill_value_array
        else:  # one gather over the outer product of the per-axis indices
            copy_outer(chunk.reshape(-1).view(np.uint8),
                       task.local_dim_offsets(c_strides(chunk.shape, itemsize)),
                       dst, task.out_dim_offsets(out_strides), int64_array(task.counts),
                       itemsize)
        return
    dst_offset, dst_strides = task.out_region(out_strides)
    shape = int64_array(task.counts)
    if chunk is None:
        fill_strided(dst, dst_offset, dst_strides, shape, array._fill_bytes)
        return
    src = chunk.reshape(-1).view(np.uint8)
    src_offset, src_strides = task.chunk_region(c_strides(chunk.shape, itemsize))
    copy_strided(src, src_offset, src_strides, dst, dst_offset, dst_strides, shape, itemsize)


def _read_group(array: Array, plan: GeneralPlan, group: ChunkGroup, raw: Any) -> None:
    """Read one chunk (its stored value ``raw`` where fetched already, else
    :data:`~.chunk.FETCH`) and fill every task of it."""
    coords, members = group
    target = None
    if len(members) == 1 and array._pipeline.can_decode_into:
        target = whole_chunk_run(array._chunk_shape_at(coords), members[0],
                                 plan.targets[members[0].out], array._itemsize)
    chunk = read_chunk(array, coords, into=target, raw=raw)
    if chunk is not None and chunk is target:
        return
    for member in members:
        _copy_task(array, plan, member, chunk)


def _place_span(array: Array, plan: GeneralPlan, n: int, buf: np.ndarray | None) -> None:
    """Copy the tasks of ``plan.spans[n]`` out of its fetched bytes (None: not stored)."""
    span: RawSpan = plan.spans[n]
    if buf is None:
        for member in span.members:
            _copy_task(array, plan, member, None)
        return
    itemsize = array._itemsize
    for (task, i), (offset, steps) in zip(span.members, span.regions, strict=True):
        dst, out_strides = plan.targets[i]
        dst_offset, dst_strides = task.out_region(out_strides)
        copy_strided(buf, offset - span.lo, steps, dst, dst_offset, dst_strides,
                     int64_array(task.counts), itemsize)


def _held_ranges(held: dict[str, Any], key: str) -> GetRanges:
    """The ``get_ranges`` of the shard at ``key``, fetched whole into ``held``."""
    return ValueRanges(held[key])


def _read_shards_outer(array: Array, plan: GeneralPlan, groups: list[ChunkGroup],
                       ranges_of: Callable[[str], GetRanges]) -> None:
    """Index arrays into shards: each shard's index is read and its pieces planned (one
    worker per shard), then runs of the inner chunks they touch are read, decoded and
    copied out (one worker per run: :func:`~.points.split_shard_outer` cuts a shard whose
    inner chunks need decoding into enough runs that a read of fewer shards than threads
    still decodes on every thread)."""
    sharding = array._sharding
    assert sharding is not None
    threads = get_num_threads()
    # Raw inner chunks have only copies to share out, into pages all over the output: more
    # workers than shards made them slower on 16 cores (docs/performance.md, oindex rows).
    ways = (1 if threads == 1 or in_worker() or sharding.stores_raw_inner_chunks()
            else -(-2 * threads // len(groups)))
    itemsize, fill = array._itemsize, array._fill_bytes

    def split(group: ChunkGroup) -> list[ShardOuterRun]:
        coords, members = group
        key = array.chunk_key(coords)
        get_ranges, shard_shape = ranges_of(key), array._chunk_shape_at(coords)
        # A shard read by ranges from an object store stays one run: each run's fetch would
        # be a round trip of its own (issue 33's fewest requests); its decoding fans out.
        work = split_shard_outer(sharding, get_ranges, shard_shape,
                                 plan_outer_parts(members, plan.targets), itemsize=itemsize,
                                 key=key, ways=1 if fetches_by_request(get_ranges) else ways)
        if work is None:  # (a missing shard: its tasks read as the fill value)
            for member in members:
                _copy_task(array, plan, member, None)
            return []
        return [ShardOuterRun(key, get_ranges, shard_shape, work.shard_index, run)
                for run in work.runs]

    def read(run: ShardOuterRun) -> None:
        with inner_memory(array, run.key):
            read_shard_outer(sharding, run.get_ranges, run.shard_shape, run.pieces,
                             itemsize=itemsize, fill_bytes=fill, key=run.key, index=run.shard_index)

    map_unordered(read, [run for runs in map_unordered(split, groups) for run in runs])


class ShardOuterRun(NamedTuple):
    """One worker's share of :func:`_read_shards_outer`: some inner chunks of the shard at
    ``key`` and their pieces, with the shard's index (``shard_index``) already read."""

    key: str
    get_ranges: GetRanges
    shard_shape: tuple[int, ...]
    shard_index: ShardIndex
    pieces: OuterPieceMap


def _read_shard_runs(array: Array, plan: GeneralPlan, ranges_of: Callable[[str], GetRanges],
                     group: ChunkGroup) -> None:
    """Strided tasks in one shard: only the shard index and the inner chunks they touch
    are read, once, in bounded batches; each decoded inner chunk is copied straight into
    every output region it feeds, so neither the shard's bytes nor the decoded shard is
    ever held.  Every copy is planned (:func:`~.plan.plan_inner_pieces`) before anything
    is read."""
    coords, members = group
    sharding = array._sharding
    assert sharding is not None
    key = array.chunk_key(coords)
    shard_shape = array._chunk_shape_at(coords)
    itemsize, fill = array._itemsize, array._fill_bytes
    targets = plan.targets
    pieces = plan_inner_pieces(sharding, shard_shape, members, targets, itemsize)

    def sink(inner_coords: tuple[int, ...], chunk: np.ndarray | None) -> None:
        src = None if chunk is None else chunk.reshape(-1).view(np.uint8)
        for i, dst_offset, dst_strides, shape, src_offset, src_strides in pieces[inner_coords]:
            dst = targets[i].dst
            if src is None:
                fill_strided(dst, dst_offset, dst_strides, shape, fill)
            else:
                copy_strided(src, src_offset, src_strides, dst, dst_offset, dst_strides, shape,
                             itemsize)

    with inner_memory(array, key):
        found = sharding.read_inner_chunks_into(ranges_of(key), shard_shape, pieces,
                                                sink, key=key)
    if not found:
        for member in members:
            _copy_task(array, plan, member, None)

