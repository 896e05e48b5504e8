"""Arrays of variable-length elements (strings, bytes): read and written chunk by chunk with
numpy indexing, never by the byte kernels.

The read and write paths move elements as their bytes (strided copies, byte swaps, the native
pipeline), which for numpy object arrays and ``StringDType`` arrays are pointers and arena
handles, not the elements.  So every selection of an array whose dtype holds references
(:func:`zarr3c._buffers.holds_references`) takes this path instead: its chunk tasks are
planned as for any array (:func:`~zarr3c.indexing.plan_chunks`,
:func:`~zarr3c.indexing.plan_points`), and per chunk, on the thread pool:

- a read decodes the stored chunk through the codec pipeline (``vlen-utf8``, ``vlen-bytes``:
  :mod:`zarr3c.codecs.vlen`; the Zarr v2 object codecs ``vlen-array`` and ``json2``:
  :mod:`zarr3c.codecs.object_codecs`) into an array of the chunk's shape and copies its part
  into the output by numpy indexing (the fill value into it, where the chunk is not stored);
- a write, under the chunk's lock, starts from the fill value (a chunk it covers entirely)
  or from the decoded chunk, assigns its part by numpy indexing, and stores the encoding, or
  erases the chunk where it holds only the fill value (unless ``write_empty_chunks``).

Values convert as numpy converts them to the array's dtype, except that one element of a v2
object array of arrays or JSON values takes the value as it is (``a[0] = np.arange(3)``
stores the array, ``a[0] = [1, 2]`` the list), as zarr-python 2 does; to write several such
elements, give an object array of them.  Chunks holding only the fill value are erased
(unless ``write_empty_chunks``): for object arrays, where every element is of the fill
value's type and equal to it.

Sharded arrays go through the sharding codec's whole-shard decode and encode, which take
numpy indexing for such dtypes too.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from zarr3c._buffers import chunk_memory, empty_array
from zarr3c.array.read.chunk import fetch_chunk
from zarr3c.concurrency import chunk_lock, map_unordered
from zarr3c.errors import ValueConversionError
from zarr3c.indexing import (
    ChunkTask,
    CoordinateSelection,
    OrthogonalSelection,
    PointTask,
    broadcast_value,
    plan_chunks,
    plan_points,
)
from zarr3c.metadata.v2 import V2ObjectType

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from zarr3c.array.core import Array

__all__ = ["read_coordinates", "read_planned", "store_chunk", "takes_element_values",
           "write_points", "write_selection"]


def _fill(array: Array, shape: Sequence[int]) -> np.ndarray:
    """A new chunk of ``shape`` holding the fill value."""
    if array.dtype == np.dtype(object):
        # (each element the fill value itself: np.full would spread a list fill value of a
        # json2 array over the chunk's elements)
        chunk = np.empty(tuple(shape), dtype=object)
        chunk.fill(array._fill_scalar)
        return chunk
    return np.full(tuple(shape), array._fill_scalar, dtype=array.dtype)


def _place_fill(array: Array, dst: np.ndarray, where: Any) -> None:
    """The fill value into ``dst[where]``: element by element for object arrays, where
    numpy would spread a list fill value (json2) over the elements."""
    if array.dtype == np.dtype(object):
        dst[where] = _fill(array, dst[where].shape)
    else:
        dst[where] = array._fill_scalar


def _chunk(array: Array, coords: tuple[int, ...]) -> np.ndarray | None:
    """The chunk at ``coords``, decoded; None where it is not stored (readers fill their
    output, taking no memory of the chunk's size)."""
    key = array.chunk_key(coords)
    shape = array._chunk_shape_at(coords)
    raw = fetch_chunk(array, key, shape)
    if raw is None:
        return None
    with chunk_memory(key, math.prod(shape) * array._itemsize):
        return array._pipeline.decode(raw, shape, key=key)


def _whole_chunk_view(array: Array, out: np.ndarray, task: ChunkTask) -> np.ndarray | None:
    """Where a task takes all of its chunk, in order, into a C-contiguous region of a
    ``StringDType`` output: that region (a view), which the chunk is decoded straight into;
    else None.  (Only there does it pay: object elements are references either way.)"""
    if array.dtype.kind != "T" or not task.strided:
        return None
    if tuple(task.counts) != array._chunk_shape_at(task.coords):
        return None
    if any(step != 1 for _, step in task.local) or any(step != 1 for _, step in task.out):
        return None
    dst = out[_indexes(task)[1]]
    return dst if dst.flags.c_contiguous else None


def _decode_into(array: Array, coords: tuple[int, ...], dst: np.ndarray) -> bool:
    """Decode the chunk at ``coords`` into ``dst`` (its shape); False where it is not
    stored."""
    key = array.chunk_key(coords)
    shape = array._chunk_shape_at(coords)
    raw = fetch_chunk(array, key, shape)
    if raw is None:
        return False
    with chunk_memory(key, math.prod(shape) * array._itemsize):
        array._pipeline.decode_elements_into(raw, dst, key=key)
    return True


def read_planned(array: Array, counts: Sequence[Sequence[int]],
                 plans: Sequence[Iterable[ChunkTask]]) -> list[np.ndarray]:
    """Outputs of shapes ``counts`` filled by their chunk ``plans``, each chunk read once
    (as :func:`zarr3c.array.read.general.read_planned`).

    Parameters
    ----------
    array
        The array read.
    counts
        Each output's shape.
    plans
        Each output's chunk tasks.

    Returns
    -------
    list of numpy.ndarray

    Raises
    ------
    ChunkDecodeError
        A stored chunk that does not decode, naming its key.

    Examples
    --------
    >>> import zarr3c
    >>> from zarr3c.indexing import parse_orthogonal_selection, plan_chunks
    >>> a = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=str)
    >>> a[:] = ["x", "yy", "zzz"]
    >>> sel = parse_orthogonal_selection((slice(1, 3),), a.shape)
    >>> read_planned(a, [sel.counts], [plan_chunks(sel, a._dims)])[0].tolist()
    ['yy', 'zzz']
    """
    outs = [empty_array(c, array.dtype) for c in counts]
    by_chunk: dict[tuple[int, ...], list[tuple[int, ChunkTask]]] = {}
    for n, plan in enumerate(plans):
        for task in plan:
            by_chunk.setdefault(task.coords, []).append((n, task))

    def read(item: tuple[tuple[int, ...], list[tuple[int, ChunkTask]]]) -> None:
        coords, tasks = item
        if len(tasks) == 1:
            n, task = tasks[0]
            dst = _whole_chunk_view(array, outs[n], task)
            if dst is not None:
                if not _decode_into(array, coords, dst):
                    _place_fill(array, dst, ...)
                return
        chunk = _chunk(array, coords)
        for n, task in tasks:
            local, out = _indexes(task)
            if chunk is None:
                _place_fill(array, outs[n], out)
            else:
                outs[n][out] = chunk[local]

    map_unordered(read, list(by_chunk.items()))
    return outs


def _indexes(task: ChunkTask) -> tuple[Any, Any]:
    """Where a task's elements are in its chunk and in the output: slices where both are
    strided (views: each element is copied once, where index arrays would copy twice),
    else ``np.ix_`` index arrays."""
    if not task.strided:
        return np.ix_(*task.local_indices()), task.out_index()
    out = []
    for (start, step), n in zip(task.out, task.counts, strict=True):
        stop = start + n * step
        out.append(slice(start, stop if stop >= 0 else None, step))
    return task.local_slices(), tuple(out)


def read_coordinates(array: Array, sel: CoordinateSelection) -> np.ndarray:
    """The points of ``sel``, in the shape of its index arrays.

    Parameters
    ----------
    array
        The array read.
    sel
        The points.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ChunkDecodeError
        A stored chunk that does not decode, naming its key.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> from zarr3c.indexing import parse_coordinate_selection
    >>> a = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=str)
    >>> a[:] = ["x", "yy", "zzz"]
    >>> sel = parse_coordinate_selection((np.array([2, 0]),), a.shape)
    >>> read_coordinates(a, sel).tolist()
    ['zzz', 'x']
    """
    flat = empty_array(sel.size, array.dtype)

    def read(task: PointTask) -> None:
        chunk = _chunk(array, task.coords)
        if chunk is None:
            _place_fill(array, flat, task.out)
        else:
            flat[task.out] = chunk[tuple(task.local)]

    map_unordered(read, plan_points(sel, array._dims, array._itemsize))
    return flat.reshape(sel.out_shape)


def takes_element_values(array: Array) -> bool:
    """Whether one element of ``array`` takes any value as it is, a sequence included: the
    elements of v2 object arrays of arrays or JSON values (numpy stores a sequence assigned
    to one element of an object array).

    Parameters
    ----------
    array
        The array written.

    Returns
    -------
    bool

    Raises
    ------
    None

    Examples
    --------
    >>> import zarr3c
    >>> takes_element_values(zarr3c.create_array("memory://", shape=(1,), dtype=str))
    False
    """
    return isinstance(array.metadata.data_type, V2ObjectType)


def _as_values(array: Array, value: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as an array of the array's dtype (a ``ValueConversionError`` naming what
    does not convert); for one element (``shape`` ``()``) of a v2 object array of arrays or
    JSON values, ``value`` is that element, as zarr-python 2 takes it, even a list or an
    array."""
    if shape == () and takes_element_values(array) and not (
            isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0):
        element = np.empty((), dtype=object)
        element[()] = value
        return element
    if isinstance(value, np.ndarray) and value.dtype == array.dtype:
        # Taken as it is: np.asarray would copy every string of a StringDType array whose
        # dtype is another instance (each has its own allocator), though an equal one.
        return value
    try:
        return np.asarray(value, dtype=array.dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueConversionError(
            f"cannot convert the value to the array's dtype {array.dtype}: {exc}"
        ) from None


def store_chunk(array: Array, key: str, chunk: np.ndarray) -> None:
    """Store a chunk's encoding, or erase it where it holds only the fill value (unless
    ``write_empty_chunks``).

    Parameters
    ----------
    array
        The array written.
    key
        The chunk's key.
    chunk
        Its elements.

    Raises
    ------
    StoreError
        The store fails.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), chunks=(2,), dtype=str)
    >>> store_chunk(a, "c/0", np.array(["", ""], dtype=a.dtype))
    >>> a.store.get("c/0") is None
    True
    """
    if not array._write_empty_chunks and _only_fill(chunk, array._fill_scalar):
        array._store.erase(key)
    else:
        array._store.set(key, array._pipeline.encode(chunk))


def _only_fill(chunk: np.ndarray, fill: Any) -> bool:
    """Whether every element of ``chunk`` is the fill value.  Elements of object chunks are
    compared one by one, of the fill value's type only: ``==`` on arrays (vlen-array
    elements) gives arrays, and ``0 == 0.0 == False`` would erase elements that read back
    as another type."""
    if chunk.dtype != np.dtype(object):
        return bool(np.all(chunk == fill))
    kind = type(fill)
    for element in chunk.flat:
        if type(element) is not kind:
            return False
        try:
            if not bool(element == fill):
                return False
        except (TypeError, ValueError):  # (a list holding arrays, against a list fill)
            return False
    return True


def _modify(array: Array, coords: tuple[int, ...], whole: bool,
            assign: Any) -> None:
    """Read-modify-write the chunk at ``coords`` under its lock (not read if ``whole``)."""
    key = array.chunk_key(coords)
    shape = array._chunk_shape_at(coords)
    # (a write holds the chunk it writes: what cannot be allocated is refused by its key)
    with chunk_memory(key, math.prod(shape) * array._itemsize), \
            chunk_lock(array._store, key):
        chunk = None if whole else _chunk(array, coords)
        if chunk is None:
            chunk = _fill(array, shape)
        if not chunk.flags.writeable:
            chunk = chunk.copy()
        assign(chunk)
        store_chunk(array, key, chunk)


def write_selection(array: Array, sel: OrthogonalSelection, value: Any) -> None:
    """Write ``value`` (broadcast as numpy does) into the orthogonal selection ``sel``.

    Parameters
    ----------
    array
        The array written.
    sel
        The selection.
    value
        Anything numpy converts to the array's dtype.

    Raises
    ------
    ValueConversionError
        A value that does not convert.
    ShapeMismatchError
        A value that does not broadcast to the selection.

    Examples
    --------
    >>> import zarr3c
    >>> from zarr3c.indexing import parse_orthogonal_selection
    >>> a = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=str)
    >>> write_selection(a, parse_orthogonal_selection((slice(1, 3),), a.shape), "é")
    >>> a[:].tolist()
    ['', 'é', 'é']
    """
    values = broadcast_value(_as_values(array, value, tuple(sel.out_shape)),
                             sel.out_shape).reshape(sel.counts)
    if sel.size == 0:
        return

    def write(task: ChunkTask) -> None:
        shape = array._chunk_shape_at(task.coords)
        whole = task.covers(shape, array.shape, array._chunk_origin(task.coords))
        local, out = _indexes(task)
        if whole and tuple(task.counts) == tuple(shape):
            # The chunk is the value's region: encoded from it, never filled first.
            key = array.chunk_key(task.coords)
            chunk = np.ascontiguousarray(values[out])
            # (a broadcast value is read-only: the object codecs take writable arrays, while
            # the StringDType kernel reads its strings as they are, not copied first)
            if not chunk.flags.writeable and chunk.dtype.kind != "T":
                chunk = chunk.copy()
            with chunk_lock(array._store, key):
                store_chunk(array, key, chunk)
            return

        def assign(chunk: np.ndarray) -> None:
            chunk[local] = values[out]

        _modify(array, task.coords, whole, assign)

    map_unordered(write, plan_chunks(sel, array._dims))


def write_points(array: Array, sel: CoordinateSelection, value: Any) -> None:
    """Write ``value`` into the points of ``sel``; with repeated points the last one wins,
    as in numpy.

    Parameters
    ----------
    array
        The array written.
    sel
        The points.
    value
        Anything numpy converts to the array's dtype, broadcast to the points.

    Raises
    ------
    ValueConversionError
        A value that does not convert.
    ShapeMismatchError
        A value that does not broadcast to the points.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> from zarr3c.indexing import parse_coordinate_selection
    >>> a = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=str)
    >>> write_points(a, parse_coordinate_selection((np.array([2, 0]),), a.shape), ["c", "a"])
    >>> a[:].tolist()
    ['a', '', 'c']
    """
    values = _as_values(array, value)
    flat = values.reshape(-1) if values.ndim == 0 else \
        broadcast_value(values, sel.out_shape).reshape(-1)

    def write(task: PointTask) -> None:
        def assign(chunk: np.ndarray) -> None:
            # one element at a time, in the points' order: the last of repeats wins
            local = tuple(task.local)
            src = flat[0] if values.ndim == 0 else flat[task.out]
            chunk[local] = src

        _modify(array, task.coords, False, assign)

    map_unordered(write, plan_points(sel, array._dims, array._itemsize))
