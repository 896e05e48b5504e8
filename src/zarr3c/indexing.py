"""Selections: numpy-style keys turned into per-chunk copy plans.

Every selection mode reduces to one of two plans:

- **orthogonal** (basic indexing is the special case with no index arrays): one entry per
  dimension, either a strided run :class:`DimSelection` (``count`` elements from ``start``
  with a positive ``step``; a negative user step is the same elements read in reverse, so
  ``reverse`` is set and the copy runs with a negative output stride) or explicit indices
  :class:`DimIndices`.  Each dimension is projected onto its chunk grid (slices by the grid
  kernel, indices by ``locate`` plus one stable sort), and the cartesian product of the
  projections gives one :class:`ChunkTask` per chunk.  A task whose dimensions are all
  strided is one ``copy_strided`` call; others one ``copy_outer`` gather/scatter over the
  per-dimension byte offsets (never one offset per element).
- **coordinate** (``vindex``, masks): points grouped by chunk with one stable counting sort
  (``group_by_key`` in the grid kernel); one :class:`PointTask` per chunk, whose byte offsets
  are views into arrays computed once for all points.

Blocks (``a.blocks[...]``) become basic selections of whole chunks.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from zarr3c._buffers import thread_scratch
from zarr3c._kernels.grid import group_by_key, group_points_regular
from zarr3c.errors import (
    BoundsCheckError,
    IndexingError,
    SelectionTooLargeError,
    ShapeMismatchError,
)

__all__ = [
    "DimSelection",
    "DimIndices",
    "OrthogonalSelection",
    "CoordinateSelection",
    "ChunkTask",
    "PointTask",
    "parse_basic_selection",
    "parse_orthogonal_selection",
    "parse_coordinate_selection",
    "parse_block_selection",
    "parse_mask",
    "read_indexers",
    "numpy_advanced_coordinates",
    "selection_kind",
    "numpy_coordinates",
    "NumpyLayout",
    "bool_scalar_as_new_axis",
    "plan_chunks",
    "project_dims",
    "chunk_tasks",
    "DimEntry",
    "plan_points",
    "PointGroups",
    "group_points",
    "c_strides",
    "int64_array",
]


@dataclass(frozen=True, slots=True)
class DimSelection:
    """The elements ``start + k * step`` for ``k < count`` of one dimension (``step >= 1``)."""

    start: int
    step: int
    count: int
    reverse: bool = False  # the user asked for them in decreasing order
    drop: bool = False  # an integer index: the axis is removed from the result


@dataclass(frozen=True, slots=True, eq=False)
class DimIndices:
    """Explicit, normalised (non-negative, in bounds) indices of one dimension, in the order
    and with the repeats the user gave."""

    indices: np.ndarray

    @property
    def count(self) -> int:
        return len(self.indices)


Dim = DimSelection | DimIndices


@dataclass(frozen=True, slots=True, eq=False)
class OrthogonalSelection:
    dims: tuple[Dim, ...]
    #: shape of the result as numpy gives it (integer axes dropped, ``None`` axes added)
    out_shape: tuple[int, ...]

    @property
    def counts(self) -> tuple[int, ...]:
        """Per array dimension, the number of elements selected (1 for integer indices)."""
        return tuple(d.count for d in self.dims)

    @property
    def size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d.count
        return n


# Basic selections are orthogonal selections without index arrays.
BasicSelection = OrthogonalSelection


@dataclass(frozen=True, slots=True, eq=False)
class CoordinateSelection:
    """Points: ``coords[d][k]`` is the index along dimension ``d`` of the k-th point."""

    coords: tuple[np.ndarray, ...]
    out_shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.out_shape)


# -- parsing ----------------------------------------------------------------------------------


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool | np.bool_):
        return False
    if isinstance(x, int | np.integer):
        return True
    return isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu"


def _is_index_array(x: Any) -> bool:
    """A list, tuple or array of integers or booleans (an advanced index)."""
    if isinstance(x, np.ndarray):
        return x.ndim > 0 or x.dtype.kind == "b"
    return isinstance(x, list)


def _is_bool_scalar(x: Any) -> bool:
    """A boolean scalar index (``True``, ``np.True_``, a 0-d boolean array): numpy reads it
    as a new axis of length 1 indexed by its ``nonzero()`` (``[0]`` or ``[]``)."""
    return isinstance(x, bool | np.bool_) or (
        isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind == "b")


def bool_scalar_as_new_axis(selection: Any) -> tuple[Any, ...] | None:
    """For a key whose one boolean scalar is ``True`` and whose other entries are slices,
    ``...`` and ``None``: the same key with ``None`` in its place, which reads and writes
    what numpy does (a new axis of length 1 where it stands) without any index arrays.
    None for any other key."""
    key = selection if isinstance(selection, tuple) else (selection,)
    at = [i for i, k in enumerate(key) if _is_bool_scalar(k)]
    if len(at) != 1 or not key[at[0]] or not all(
            i in at or isinstance(k, slice) or k is Ellipsis or k is None
            for i, k in enumerate(key)):
        return None
    return key[:at[0]] + (None,) + key[at[0] + 1:]


def _axes_taken(k: Any) -> int:
    """How many of the array's axes an index that is not ``...``, ``None`` nor a boolean
    scalar takes: a boolean array its number of dimensions, anything else one."""
    if _is_index_array(k):
        try:
            arr = np.asarray(k)
        except ValueError:  # ragged: numpy refuses it later, naming it
            return 1
        if arr.dtype.kind == "b":
            return max(arr.ndim, 1)
    return 1


def _expand_bool_scalars(key: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """numpy's reading of boolean scalars as a key of a view with new axes: ``(expand,
    rest)`` such that ``x[key]`` is ``x[expand][rest]``, where ``expand`` adds a length-1
    axis for each boolean scalar and ``rest`` indexes it with that scalar's ``nonzero()``."""
    expand: list[Any] = []
    rest: list[Any] = []
    for k in key:
        if _is_bool_scalar(k):
            expand.append(None)
            rest.append(np.array([0] if k else [], dtype=np.intp))
        elif k is Ellipsis:
            expand.append(Ellipsis)
            rest.append(Ellipsis)
        elif k is None:
            rest.append(None)
        else:
            expand.extend([slice(None)] * _axes_taken(k))
            rest.append(k)
    return tuple(expand), tuple(rest)


def _is_bool_over_axes(x: Any) -> bool:
    """A boolean index array over more than one axis (a malformed one is not: the mode it
    goes to names its axis)."""
    if not _is_index_array(x):
        return False
    try:
        arr = np.asarray(x)
    except ValueError:  # ragged
        return False
    return arr.dtype.kind == "b" and arr.ndim > 1


def _normalize_integer(x: Any, length: int, axis: int) -> int:
    i = operator.index(x)
    if i < -length or i >= length:
        raise BoundsCheckError(
            f"index {i} is out of bounds for axis {axis} with size {length}"
        )
    return i + length if i < 0 else i


def _normalize_slice(s: slice, length: int, axis: int) -> DimSelection:
    for name in ("start", "stop", "step"):
        v = getattr(s, name)
        if v is not None and not _is_integer(v):
            raise IndexingError(
                f"slice {name} on axis {axis} must be an integer or None, got {v!r}"
            )
    if s.step is not None and operator.index(s.step) == 0:
        raise IndexingError(f"slice step on axis {axis} cannot be zero")
    start, stop, step = slice(
        None if s.start is None else operator.index(s.start),
        None if s.stop is None else operator.index(s.stop),
        None if s.step is None else operator.index(s.step),
    ).indices(length)
    count = len(range(start, stop, step))
    if count == 0:
        return DimSelection(0, 1, 0)
    if count == 1:  # any step: one element (a step past int64, as numpy clamps it, is fine)
        return DimSelection(start, 1, 1)
    if step > 0:
        return DimSelection(start, step, count)
    # The same elements in increasing order, copied into the output back to front.
    return DimSelection(start + (count - 1) * step, -step, count, reverse=True)


def _as_index_array(x: Any, axis: int | str) -> np.ndarray:
    """An integer or boolean numpy array from a list/array index (IndexingError otherwise)."""
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError):
        raise IndexingError(f"index on axis {axis} is not a valid integer array") from None
    if arr.size == 0 and arr.dtype.kind not in "iub":
        arr = arr.astype(np.int64)  # [] is an empty integer index, as in numpy
    if arr.dtype.kind not in "iub":
        raise IndexingError(
            f"index arrays on axis {axis} must be integers or booleans, got dtype {arr.dtype}"
        )
    return arr


def _normalize_indices(arr: np.ndarray, length: int, axis: int) -> np.ndarray:
    """Wrap negative indices, check bounds; returns int64 (a copy when anything changed)."""
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise BoundsCheckError(f"index out of bounds for axis {axis} with size {length}")
    idx = arr.astype(np.int64, copy=False)
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -length or hi >= length:
            bad = lo if lo < -length else hi
            raise BoundsCheckError(
                f"index {bad} is out of bounds for axis {axis} with size {length}"
            )
        if lo < 0:
            idx = np.where(idx < 0, idx + length, idx)
    return idx


def _expand_key(selection: Any, ndim: int, *, allow_newaxis: bool) -> list[Any]:
    """The key as one entry per dimension (plus ``None`` entries), ellipsis expanded."""
    key = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    if not allow_newaxis and any(k is None for k in key):
        raise IndexingError("None (np.newaxis) is only supported in basic indexing")
    n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
    if n_real > ndim:
        raise IndexingError(
            f"too many indices for array: array is {ndim}-dimensional, but {n_real} were indexed"
        )
    expanded: list[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (ndim - n_real))
        else:
            expanded.append(k)
    if n_ellipsis == 0:
        expanded.extend([slice(None)] * (ndim - n_real))
    return expanded


def parse_basic_selection(selection: Any, shape: Sequence[int]) -> OrthogonalSelection:
    """Normalise a numpy basic-indexing key (ints, slices, ``...``, ``None``) against ``shape``.

    Raises
    ------
    IndexingError
        Too many indices, more than one ellipsis, a zero step, or an index of a type basic
        indexing does not take (arrays and lists belong to ``oindex``/``vindex``).
    BoundsCheckError
        An integer index out of bounds (the message names the axis).
    """
    return _parse_orthogonal(selection, shape, allow_arrays=False)


def parse_orthogonal_selection(selection: Any, shape: Sequence[int]) -> OrthogonalSelection:
    """Normalise an orthogonal key: per axis an int, a slice, an integer array (any order,
    repeats, negative values wrap) or a boolean array of the axis's length."""
    return _parse_orthogonal(read_indexers(selection), shape, allow_arrays=True)


def _is_foreign_array(k: Any) -> bool:
    """An array-like index other than a numpy array or a list: a zarr3c or zarr-python
    Array, a dask array, ... (what numpy reads through ``__array__``)."""
    return (hasattr(k, "__array__") and hasattr(k, "shape") and hasattr(k, "dtype")
            and not isinstance(k, np.ndarray | np.generic))


def read_indexers(selection: Any) -> Any:
    """``selection`` with its index arrays that are not numpy arrays (another array's
    values: a zarr3c Array, as zarr-python takes one since its issue 2133) read into numpy,
    as numpy indexing reads them.

    Parameters
    ----------
    selection : Any
        An index key: one entry or a tuple of them.

    Returns
    -------
    Any
        The key, with such entries replaced by numpy arrays.

    Examples
    --------
    >>> import zarr3c
    >>> mask = zarr3c.array(np.array([True, False, True]))
    >>> read_indexers((mask, slice(None)))[0]
    array([ True, False,  True])
    >>> read_indexers(slice(1, 2))
    slice(1, 2, None)
    """
    if isinstance(selection, tuple):
        if not any(_is_foreign_array(k) for k in selection):
            return selection
        return tuple(np.asarray(k) if _is_foreign_array(k) else k for k in selection)
    return np.asarray(selection) if _is_foreign_array(selection) else selection


def _parse_orthogonal(selection: Any, shape: Sequence[int], *,
                      allow_arrays: bool) -> OrthogonalSelection:
    expanded = _expand_key(selection, len(shape), allow_newaxis=True)
    dims: list[Dim] = []
    out_shape: list[int] = []
    axis = 0
    for k in expanded:
        if k is None:
            out_shape.append(1)
            continue
        length = shape[axis]
        d: Dim
        if isinstance(k, slice):
            d = _normalize_slice(k, length, axis)
            out_shape.append(d.count)
        elif _is_integer(k):
            d = DimSelection(_normalize_integer(k, length, axis), 1, 1, drop=True)
        elif allow_arrays and _is_index_array(k):
            arr = _as_index_array(k, axis)
            if arr.ndim != 1:
                raise IndexingError(
                    f"orthogonal index arrays must be 1-dimensional; axis {axis} got "
                    f"{arr.ndim} dimensions"
                )
            if arr.dtype.kind == "b":
                arr = _bool_indices(arr, length, axis)
            d = DimIndices(_normalize_indices(arr, length, axis))
            out_shape.append(d.count)
        else:
            hint = "" if allow_arrays else " (use .oindex or .vindex for arrays)"
            raise IndexingError(
                f"unsupported index on axis {axis}: {k!r} (only integers, slices, ... and "
                f"None{', integer or boolean arrays' if allow_arrays else ''}){hint}"
            )
        dims.append(d)
        axis += 1
    return OrthogonalSelection(tuple(dims), tuple(out_shape))


def parse_coordinate_selection(selection: Any, shape: Sequence[int]) -> CoordinateSelection:
    """Normalise a coordinate key: one integer array per axis, broadcast together (numpy's
    rules), or a single boolean mask of the array's shape."""
    selection = read_indexers(selection)
    ndim = len(shape)
    key = selection if isinstance(selection, tuple) else (selection,)
    if len(key) == 1 and not _is_integer(key[0]):
        mask = _as_index_array(key[0], "0")
        if mask.dtype.kind == "b":
            if mask.shape != tuple(shape):
                raise BoundsCheckError(
                    f"boolean mask of shape {mask.shape} does not match the array's shape "
                    f"{tuple(shape)}"
                )
            if mask.ndim == 0:  # a 0-d array: its one element, or none (np.nonzero refuses)
                return CoordinateSelection((), (int(mask),))
            coords = tuple(np.asarray(c, dtype=np.int64) for c in np.nonzero(mask))
            return CoordinateSelection(coords, (len(coords[0]),))
    if len(key) != ndim:
        raise IndexingError(
            f"coordinate selection needs one index array per dimension: the array is "
            f"{ndim}-dimensional, but {len(key)} were given"
        )
    arrays = []
    for axis, k in enumerate(key):
        if isinstance(k, slice) or k is Ellipsis or k is None:
            raise IndexingError(
                f"coordinate selection takes integer arrays only; axis {axis} got {k!r}"
            )
        if _is_integer(k):
            arr = np.asarray(_normalize_integer(k, shape[axis], axis), dtype=np.int64)
        else:
            arr = _as_index_array(k, axis)
        if arr.dtype.kind == "b":
            raise IndexingError(
                f"boolean arrays in a coordinate selection must be a single mask of the "
                f"array's shape (axis {axis})"
            )
        arrays.append(arr)
    try:
        out_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexingError(
            "coordinate index arrays could not be broadcast together with shapes "
            + " ".join(str(a.shape) for a in arrays)
        ) from None
    if math.prod(out_shape) == 0:
        # No point selected: numpy checks the integers' bounds, not the arrays'.
        empty = np.zeros(0, dtype=np.int64)
        return CoordinateSelection(tuple(empty for _ in arrays), tuple(out_shape))
    arrays = [_normalize_indices(a, shape[axis], axis) for axis, a in enumerate(arrays)]
    broadcast = np.broadcast_arrays(*arrays)
    out_shape = broadcast[0].shape if broadcast else ()
    try:  # (broadcast index arrays can name more points than memory holds coordinates of)
        coords = tuple(np.ascontiguousarray(b).reshape(-1) for b in broadcast)
    except (MemoryError, ValueError):  # (ValueError: beyond what numpy can index)
        raise SelectionTooLargeError(
            f"the coordinate selection of shape {tuple(out_shape)} has too many points to "
            f"hold their coordinates") from None
    return CoordinateSelection(coords, tuple(out_shape))


def _bool_indices(arr: np.ndarray, length: int, axis: int) -> np.ndarray:
    """The indices a 1-d boolean index array of an axis of ``length`` selects."""
    if len(arr) != length:
        raise BoundsCheckError(
            f"boolean index on axis {axis} has length {len(arr)}, but the axis has size {length}"
        )
    return np.flatnonzero(arr)


def parse_mask(mask: Any, shape: Sequence[int]) -> np.ndarray:
    """A boolean mask of ``shape`` for get/set_mask_selection (an integer array is refused
    there, as in zarr-python, rather than read as coordinates)."""
    arr = _as_index_array(read_indexers(mask), 0)
    if arr.dtype.kind != "b":
        raise IndexingError(
            f"a mask selection takes a boolean array of the array's shape, got dtype {arr.dtype}"
        )
    if arr.shape != tuple(shape):
        raise BoundsCheckError(
            f"boolean mask of shape {arr.shape} does not match the array's shape {tuple(shape)}"
        )
    return arr


def parse_block_selection(selection: Any, dimensions: Sequence[Any],
                          shape: Sequence[int]) -> tuple[slice, ...]:
    """Turn a key over chunk indices (ints, negative ints, slices of step 1) into the basic
    selection of the array elements those chunks hold."""
    expanded = _expand_key(selection, len(shape), allow_newaxis=False)
    out = []
    for axis, (k, dim, length) in enumerate(zip(expanded, dimensions, shape, strict=True)):
        n = dim.nchunks
        if _is_integer(k):
            i = operator.index(k)
            if i < -n or i >= n:
                raise BoundsCheckError(
                    f"block index {i} is out of bounds for axis {axis} with {n} blocks"
                )
            i %= n
            start, stop = i, i + 1
        elif isinstance(k, slice):
            if k.step is not None and not (_is_integer(k.step) and operator.index(k.step) == 1):
                raise IndexingError(f"block slices must have step 1 (axis {axis})")
            for v in (k.start, k.stop):
                if v is not None and not _is_integer(v):
                    raise IndexingError(f"block slice bounds on axis {axis} must be integers")
            start, stop, _ = k.indices(n)
            stop = max(start, stop)
        else:
            raise IndexingError(f"unsupported block index on axis {axis}: {k!r}")
        lo = dim.chunk_offset(start) if start < n else length
        hi = dim.chunk_offset(stop) if stop < n else length
        out.append(slice(min(lo, length), min(hi, length)))
    return tuple(out)


def selection_kind(selection: Any, ndim: int
                   ) -> Literal["basic", "orthogonal", "coordinate", "numpy"]:
    """Which mode ``a[selection]`` uses: zarr-python 3's dispatch where it agrees with numpy.

    Coordinate: a boolean mask of the array's shape, an index array into a 1-d array, or
    integers and index arrays on every axis with no slices (1-d boolean arrays among them
    stand for their nonzero indices, as in numpy: see :func:`numpy_coordinates`).  A
    1-tuple ``(k,)`` is ``k``, as in numpy.
    Orthogonal: one index array with slices, integers, ``...`` and ``None`` elsewhere (a
    boolean array into the first axis included), laid out as numpy does by
    :class:`NumpyLayout`.  Basic: no index arrays.  Numpy: several index arrays mixed with
    slices, ``...``, ``None`` or missing trailing axes, or a boolean array over some but
    not all axes (which zarr-python refuses), or a boolean scalar (a new axis indexed by
    its ``nonzero()``), read and written as the points numpy selects
    (:func:`numpy_advanced_coordinates`; :func:`bool_scalar_as_new_axis` for the plain
    ``True`` among slices).
    """
    key = selection if isinstance(selection, tuple) else (selection,)
    if any(_is_bool_scalar(k) for k in key):
        return "numpy"  # (an index array on a new axis: numpy_advanced_coordinates)
    is_array = [_is_index_array(k) for k in key]
    if not any(is_array):
        return "basic"
    if len(key) == 1:  # (numpy reads x[(k,)] as x[k])
        arr = _as_index_array(key[0], 0)
        if arr.dtype.kind == "b":
            if arr.ndim == 1 and ndim > 1:
                # A 1-d mask into the first axis of a n-d array selects along that axis.
                return "orthogonal"
            # A mask over the leading axes only: numpy's rules (the rest are kept whole).
            return "numpy" if 1 < arr.ndim < ndim else "coordinate"
        return "coordinate" if ndim == 1 else "orthogonal"
    no_slicing = len(key) == ndim and not any(
        isinstance(k, slice) or k is Ellipsis or k is None for k in key
    )
    if no_slicing and all(_is_integer(k) or a for k, a in zip(key, is_array, strict=True)):
        return "coordinate"
    if sum(is_array) <= 1 and not any(_is_bool_over_axes(k) for k in key):
        return "orthogonal"
    # Several index arrays among slices, or a boolean array over several axes.
    return "numpy"


def numpy_advanced_coordinates(selection: tuple[Any, ...], shape: Sequence[int]
                               ) -> tuple[np.ndarray, ...]:
    """Per axis, the coordinate of every element of numpy's ``x[selection]`` for an array
    ``x`` of ``shape`` (each an array of that result's shape): numpy's own rules for several
    index arrays among slices, ``...`` and ``None`` (broadcast together, their axes where
    the first one stands, or first when they are apart), applied to a zero-stride view of
    each axis's coordinates, so nothing of the array's size is allocated.  A coordinate
    selection of these reads and writes exactly the elements numpy would.

    Raises
    ------
    BoundsCheckError
        An index out of bounds (numpy's message names the axis).
    IndexingError
        Any other malformed key: arrays that do not broadcast together, a boolean array of
        the wrong length, a float index, too many indices.
    """
    ndim = len(shape)
    key = selection if isinstance(selection, tuple) else (selection,)
    expand: tuple[Any, ...] | None = None
    rest = selection
    if any(_is_bool_scalar(k) for k in key):
        expand, rest = _expand_bool_scalars(key)
    coords = []
    for axis, n in enumerate(shape):
        line = np.arange(n, dtype=np.intp).reshape([n if d == axis else 1 for d in range(ndim)])
        try:
            view = np.broadcast_to(line, tuple(shape))
            coords.append((view if expand is None else view[expand])[rest])
        except (IndexError, TypeError, ValueError) as exc:
            error = BoundsCheckError if "out of bounds" in str(exc) else IndexingError
            raise error(f"invalid selection {selection!r}: {exc}") from None
    return tuple(coords)


def numpy_coordinates(selection: Any, shape: Sequence[int]) -> Any:
    """A coordinate key of ``a[selection]`` with its 1-d boolean arrays replaced by their
    nonzero indices, as numpy reads them (a mask of the array's shape is left as it is)."""
    if not isinstance(selection, tuple) or len(selection) != len(shape):
        return selection
    key = list(selection)
    for axis, k in enumerate(key):
        if _is_index_array(k):
            arr = _as_index_array(k, axis)
            if arr.dtype.kind == "b" and arr.ndim == 1:
                key[axis] = _bool_indices(arr, shape[axis], axis)
    return tuple(key)


@dataclass(frozen=True, slots=True)
class NumpyLayout:
    """Where numpy puts the axes of the one index array of an ``a[...]`` key that the
    orthogonal path reads: its axes replace the array's axis, or come first when the
    integers and the array are not side by side (``a[0, :, [1, 2]]``: numpy's rule for
    advanced indices separated by a slice, ``...`` or ``None``).  The orthogonal path reads
    the array flattened (``key``), with its elements on axis ``at`` of the result."""

    key: tuple[Any, ...]
    at: int  # the index array's axis in the orthogonal result
    index_shape: tuple[int, ...]
    front: bool

    @staticmethod
    def of(selection: Any, ndim: int) -> NumpyLayout | None:
        """The layout of an orthogonal ``a[selection]``; None when numpy's is the
        orthogonal one (a 1-d array its integers do not straddle)."""
        key = selection if isinstance(selection, tuple) else (selection,)
        pos = next(i for i, k in enumerate(key) if _is_index_array(k))
        n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
        at = axis = 0  # the array's axis in the result, and in the array
        for k in key[:pos]:
            if k is Ellipsis:
                at += max(ndim - n_real, 0)
                axis += max(ndim - n_real, 0)
            elif k is None or isinstance(k, slice):
                at += 1
            if k is not None and k is not Ellipsis:
                axis += 1
        arr = _as_index_array(key[pos], axis)
        advanced = [i for i, k in enumerate(key) if i == pos or _is_integer(k)]
        front = advanced[-1] - advanced[0] + 1 != len(advanced)
        if arr.ndim == 1 and not front:
            return None
        flat = arr.reshape(-1) if arr.dtype.kind != "b" else arr
        new_key = key[:pos] + (flat,) + key[pos + 1:]
        return NumpyLayout(new_key, at, arr.shape if arr.dtype.kind != "b" else (arr.sum(),),
                           front)

    def to_numpy(self, result: np.ndarray) -> np.ndarray:
        """The orthogonal result laid out as numpy's."""
        shape = result.shape
        out = result.reshape(shape[:self.at] + self.index_shape + shape[self.at + 1:])
        if self.front:
            k = len(self.index_shape)
            out = np.moveaxis(out, list(range(self.at, self.at + k)), list(range(k)))
        return out

    def from_numpy(self, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """A value for numpy's layout of the selection, as one for the orthogonal result of
        ``shape`` (broadcast first, so a wrong shape is a ShapeMismatchError)."""
        k = len(self.index_shape)
        grouped = shape[:self.at] + self.index_shape + shape[self.at + 1:]
        numpy_shape = (self.index_shape + shape[:self.at] + shape[self.at + 1:]
                       if self.front else grouped)
        out = broadcast_value(value, numpy_shape)
        if self.front:
            out = np.moveaxis(out, list(range(k)), list(range(self.at, self.at + k)))
        return out.reshape(shape)


# -- planning ---------------------------------------------------------------------------------

# One chunk's share of one dimension: (chunk, count, local, out) where local and out are either
# (start, step) pairs (a strided run) or int64 index arrays.
#: What a selection takes of one chunk along one dimension: ``(chunk index, count, local,
#: out)``, ``local`` and ``out`` as in :class:`ChunkTask`.
DimEntry = tuple[int, int, Any, Any]


@dataclass(frozen=True, slots=True, eq=False)
class ChunkTask:
    """What one chunk contributes to an orthogonal selection.

    Per dimension, ``local[i]`` selects elements within the chunk and ``out[i]`` says where
    they land in the (full-rank) output: each a ``(start, step)`` pair for a strided run or an
    int64 index array.
    """

    coords: tuple[int, ...]
    counts: tuple[int, ...]
    local: tuple[Any, ...]
    out: tuple[Any, ...]

    @property
    def strided(self) -> bool:
        return all(isinstance(x, tuple) for x in self.local) and all(
            isinstance(x, tuple) for x in self.out
        )

    def chunk_region(self, chunk_strides: Sequence[int]) -> tuple[int, np.ndarray]:
        """Byte offset and byte strides of the selected elements in the chunk buffer."""
        return _region(self.local, chunk_strides)

    def out_region(self, out_strides: Sequence[int]) -> tuple[int, np.ndarray]:
        """Byte offset and byte strides of where they go in the output buffer."""
        return _region(self.out, out_strides)

    def local_dim_offsets(self, chunk_strides: Sequence[int]) -> np.ndarray:
        """Per dimension, the byte offsets in the chunk buffer of the selected indices,
        concatenated (``copy_outer``'s form: an element's offset is their sum)."""
        return _dim_offsets(self.local, self.counts, chunk_strides)

    def out_dim_offsets(self, out_strides: Sequence[int]) -> np.ndarray:
        """The same for where they go in the output buffer."""
        return _dim_offsets(self.out, self.counts, out_strides)

    def local_indices(self) -> tuple[np.ndarray, ...]:
        """Per dimension, the int64 indices within the chunk of the selected elements."""
        return tuple(_as_indices(x, n) for x, n in zip(self.local, self.counts, strict=True))

    def out_indices(self) -> tuple[np.ndarray, ...]:
        """Per dimension, the int64 indices in the output where they land."""
        return tuple(_as_indices(x, n) for x, n in zip(self.out, self.counts, strict=True))

    def out_index(self) -> tuple[np.ndarray, ...]:
        """``np.ix_`` index of where they go in the output."""
        return np.ix_(*self.out_indices())

    def bounds(self) -> tuple[tuple[int, int], ...]:
        """Per dimension, ``(lo, hi)`` bounding the selected elements within the chunk."""
        out = []
        for x, n in zip(self.local, self.counts, strict=True):
            if isinstance(x, tuple):
                start, step = x
                out.append((start, start + (n - 1) * step + 1))
            else:
                out.append((int(x.min()), int(x.max()) + 1))
        return tuple(out)

    def local_slices(self) -> tuple[slice, ...]:
        """The slices of the chunk a strided task selects (``chunk[task.local_slices()]``)."""
        return tuple(slice(lo, hi, x[1])
                     for (lo, hi), x in zip(self.bounds(), self.local, strict=True))

    def covers(self, chunk_shape: Sequence[int], array_shape: Sequence[int],
               origin: Sequence[int]) -> bool:
        """True if the selection takes every element of the chunk that lies inside the array."""
        if not all(isinstance(x, tuple) for x in self.local):
            return False
        for i, n in enumerate(self.counts):
            inside = min(chunk_shape[i], array_shape[i] - origin[i])
            if self.local[i] != (0, 1) or n != inside:
                return False
        return True


def _region(runs: Sequence[tuple[int, int]], strides: Sequence[int]) -> tuple[int, np.ndarray]:
    offset = sum(run[0] * s for run, s in zip(runs, strides, strict=True))
    steps = [run[1] * s for run, s in zip(runs, strides, strict=True)]
    return offset, np.asarray(steps, dtype=np.int64)


def _dim_offsets(entries: Sequence[Any], counts: Sequence[int],
                 strides: Sequence[int]) -> np.ndarray:
    parts = [_as_indices(x, n) * s for x, n, s in zip(entries, counts, strides, strict=True)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _as_indices(x: Any, count: int) -> np.ndarray:
    if isinstance(x, tuple):
        start, step = x
        return start + step * np.arange(count, dtype=np.int64)
    return x


def _project_dim(d: Dim, dim: Any) -> list[DimEntry]:
    if isinstance(d, DimSelection):
        entries: list[DimEntry] = []
        for chunk, local, n, pos in dim.project_slice(d.start, d.step, d.count).tolist():
            # (one element of a chunk: its step is 1, so that a huge step never becomes a
            # byte stride beyond int64; with two or more, step * stride stays in the chunk)
            step = d.step if n > 1 else 1
            if d.reverse:
                entries.append((chunk, n, (local, step), (d.count - 1 - pos, -1)))
            else:
                entries.append((chunk, n, (local, step), (pos, 1)))
        return entries
    chunk_index, local_index = dim.locate(d.indices)
    return [
        (int(chunk_index[group[0]]), len(group), local_index[group], group)
        for group in group_positions(chunk_index)
    ]


def group_positions(chunk_index: np.ndarray) -> list[np.ndarray]:
    """The positions of ``chunk_index`` grouped by value, in increasing value order.  One
    stable sort keeps the user's order within each group, so that repeated indices are
    written last-one-wins, as numpy does."""
    order = np.argsort(chunk_index, kind="stable")
    sorted_chunks = chunk_index[order]
    return np.split(order, np.flatnonzero(sorted_chunks[1:] != sorted_chunks[:-1]) + 1)


def plan_chunks(selection: OrthogonalSelection, dimensions: Sequence[Any]) -> Iterator[ChunkTask]:
    """Yield a :class:`ChunkTask` for every chunk the selection touches, in C order of the
    chunk grid.  ``dimensions`` are the grid's per-dimension objects."""
    per_dim = project_dims(selection, dimensions)
    if per_dim is not None:
        yield from chunk_tasks(per_dim)


def project_dims(selection: OrthogonalSelection, dimensions: Sequence[Any]
                 ) -> list[list[DimEntry]] | None:
    """Per dimension, the chunks the selection touches along it, as :data:`DimEntry`
    tuples ``(chunk index, count, local, out)`` in increasing chunk order (None for an empty
    selection): the factors of :func:`plan_chunks`' product."""
    per_dim: list[list[DimEntry]] = []
    for axis, (d, dim) in enumerate(zip(selection.dims, dimensions, strict=True)):
        if d.count == 0:
            return None
        try:
            per_dim.append(_project_dim(d, dim))
        except MemoryError:
            # (an entry per chunk touched along the axis: a write of a scalar over a huge
            # array, whose value is not there to bound the selection)
            raise SelectionTooLargeError(
                f"the selection touches too many chunks along axis {axis} to plan "
                f"({d.count} elements)") from None
    return per_dim


def chunk_tasks(per_dim: Sequence[Sequence[DimEntry]]) -> Iterator[ChunkTask]:
    """A :class:`ChunkTask` for every combination of one entry per dimension, in C order."""
    for combo in itertools.product(*per_dim):
        yield ChunkTask(
            coords=tuple(e[0] for e in combo),
            counts=tuple(e[1] for e in combo),
            local=tuple(e[2] for e in combo),
            out=tuple(e[3] for e in combo),
        )


class PointTask:
    """The points of a coordinate selection that fall in one chunk: their byte offsets in the
    decoded chunk (C order, full chunk shape) and their positions in the flat output, in the
    user's order; :attr:`local` gives their indices within the chunk.

    A plain slotted class: a read makes one per chunk touched, and a frozen dataclass costs
    a few microseconds more each."""

    __slots__ = ("coords", "offsets", "origin", "out", "points")

    def __init__(self, coords: tuple[int, ...], offsets: np.ndarray, out: np.ndarray,
                 points: tuple[np.ndarray, ...], origin: tuple[int, ...]) -> None:
        self.coords = coords
        self.offsets = offsets
        self.out = out
        self.points = points  # the selection's coordinates, every point, unsorted
        self.origin = origin  # the chunk's first element

    @property
    def local(self) -> tuple[np.ndarray, ...]:
        """The points' indices within the chunk, one array per dimension (only writes and
        sharded reads need them)."""
        return tuple(p[self.out] - o for p, o in zip(self.points, self.origin, strict=True))


#: Group points with a counting-sort table of one slot per chunk of the grid while the grid has
#: at most this many chunks per point (plus a constant); sparser grids number the chunks the
#: points touch first.
_DENSE_KEYS_PER_POINT = 4
_DENSE_KEYS_MIN = 1 << 12


def _chunk_keys(chunk_ids: Sequence[np.ndarray], grid: Sequence[int],
                n: int) -> tuple[np.ndarray, int]:
    """A key per point numbering its chunk in C order of the chunk coordinates, and the
    number of keys (the counting sort's table size)."""
    if not chunk_ids:
        return np.zeros(n, dtype=np.int64), 1
    total = 1
    for g in grid:
        total *= g
    if total <= _DENSE_KEYS_PER_POINT * n + _DENSE_KEYS_MIN:
        keys = chunk_ids[0].copy()
        for c, g in zip(chunk_ids[1:], grid[1:], strict=True):
            keys *= g
            keys += c
        return keys, total
    # Many chunks, few points: number only the chunks touched (np.unique sorts rows in C order).
    _, inverse = np.unique(np.stack(chunk_ids, axis=1), axis=0, return_inverse=True)
    keys = np.ascontiguousarray(inverse.reshape(-1), dtype=np.int64)
    return keys, int(keys.max()) + 1


class PointGroups:
    """A coordinate selection's points grouped by chunk of a regular grid (one
    ``group_points_regular`` call): the points in order of their chunks, chunk by chunk in C
    order of the grid, each run in the user's order.

    ``order[j]`` is the output position of the j-th grouped point and ``offsets[j]`` its
    byte offset in its (decoded, C-order) chunk; the t-th chunk holding points (grid
    coordinates ``coords[t]``) holds the points ``bounds[t]:bounds[t + 1]`` of them.  Reads
    of whole chunk runs take these arrays as they are; :meth:`task` makes a
    :class:`PointTask` of one chunk."""

    __slots__ = ("bounds", "coords", "offsets", "order", "points", "sizes")

    def __init__(self, order: np.ndarray, offsets: np.ndarray, starts: np.ndarray,
                 grid: Sequence[int], sizes: Sequence[int],
                 points: tuple[np.ndarray, ...]) -> None:
        self.order = order
        self.offsets = offsets
        self.points = points
        self.sizes = tuple(sizes)
        touched = np.flatnonzero(starts[1:] > starts[:-1])
        self.bounds = np.append(starts[touched], starts[-1])
        #: each touched chunk's grid coordinates
        self.coords: list[tuple[int, ...]] = list(zip(
            *(c.tolist() for c in np.unravel_index(touched, tuple(grid))), strict=True))

    def __len__(self) -> int:
        return len(self.coords)

    def task(self, t: int, bounds: list[int] | None = None) -> PointTask:
        """The :class:`PointTask` of the ``t``-th touched chunk (``bounds``: ``self.bounds``
        as a list, for a caller making many)."""
        b = self.bounds.tolist() if bounds is None else bounds
        lo, hi = b[t], b[t + 1]
        coords = self.coords[t]
        return PointTask(coords, self.offsets[lo:hi], self.order[lo:hi], self.points,
                         tuple([c * s for c, s in zip(coords, self.sizes, strict=True)]))


def group_points(selection: CoordinateSelection, dimensions: Sequence[Any],
                 itemsize: int, *, scratch: bool = False) -> PointGroups | None:
    """The selection's points grouped by chunk in one kernel call (see :class:`PointGroups`),
    or None where that does not apply: no points, a rectilinear dimension, or a grid of many
    chunks per point (:func:`plan_points` numbers the chunks touched first then).

    ``scratch``: the grouped arrays are this thread's scratch memory (slot ``"points"``,
    valid until its next such call), which saves fresh pages' faults (tracked by
    ``bench_array_io.Read.time_vindex``); for a caller done with them before it returns."""
    n = selection.size
    if n == 0 or not dimensions:
        return None
    sizes: list[Any] = [getattr(dim, "size", None) for dim in dimensions]
    grid = [dim.nchunks for dim in dimensions]
    if not (all(type(s) is int for s in sizes)
            and math.prod(grid) <= _DENSE_KEYS_PER_POINT * n + _DENSE_KEYS_MIN):
        return None
    points = tuple(np.ascontiguousarray(c, dtype=np.int64) for c in selection.coords)
    if scratch:
        grouped = thread_scratch(16 * n, "points").view(np.int64)
        order, offsets = grouped[:n], grouped[n:]
    else:
        order = np.empty(n, dtype=np.int64)
        offsets = np.empty(n, dtype=np.int64)
    starts = np.empty(math.prod(grid) + 1, dtype=np.int64)
    group_points_regular(points, int64_array(sizes), int64_array(grid), itemsize, order,
                         offsets, starts)
    return PointGroups(order, offsets, starts, grid, sizes, points)


def plan_points(selection: CoordinateSelection, dimensions: Sequence[Any],
                itemsize: int) -> Iterator[PointTask]:
    """Group the selection's points by chunk (one stable counting sort) and yield a task per
    chunk, in C order of the chunk grid.

    Every point's byte offset within its chunk is computed once for all points, so a task is
    a set of views into the sorted arrays: no per-chunk gathers.  On a regular grid of not
    too many chunks per point, one kernel call does it all (:func:`group_points`).
    """
    n = selection.size
    if n == 0:
        return
    groups = group_points(selection, dimensions, itemsize)
    if groups is not None:
        bounds = groups.bounds.tolist()
        for t in range(len(groups)):
            yield groups.task(t, bounds)
        return
    grid = [dim.nchunks for dim in dimensions]
    points = tuple(np.ascontiguousarray(c, dtype=np.int64) for c in selection.coords)
    located = [dim.locate(c) for c, dim in zip(points, dimensions, strict=True)]
    chunk_ids = [c for c, _ in located]
    keys, nkeys = _chunk_keys(chunk_ids, grid, n)
    order = np.empty(n, dtype=np.int64)
    starts = np.empty(nkeys + 1, dtype=np.int64)
    group_by_key(keys, nkeys, order, starts)
    # C-order byte strides of each point's chunk (the chunk shapes differ between chunks only
    # on rectilinear grids: chunk_lengths is then an array, else one int), then one gather.
    offsets = np.zeros(n, dtype=np.int64)
    stride: Any = itemsize
    for d in range(len(dimensions) - 1, -1, -1):
        offsets += located[d][1] * stride
        stride = stride * dimensions[d].chunk_lengths(chunk_ids[d])
    offsets = offsets[order]
    for k in np.flatnonzero(starts[1:] > starts[:-1]).tolist():
        lo, hi = int(starts[k]), int(starts[k + 1])
        first = order[lo]
        coords = tuple(int(c[first]) for c in chunk_ids)
        yield PointTask(
            coords=coords,
            offsets=offsets[lo:hi],
            out=order[lo:hi],
            points=points,
            origin=tuple(dim.chunk_offset(c)
                         for dim, c in zip(dimensions, coords, strict=True)),
        )


def broadcast_value(value: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """``value`` broadcast to ``out_shape``, as numpy assignment does (never reshaped into a
    different shape; leading length-1 axes beyond the selection's dropped first);
    ShapeMismatchError otherwise."""
    extra = value.ndim - len(out_shape)
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):
        value = value.reshape(value.shape[extra:])
    try:
        return np.broadcast_to(value, out_shape)
    except ValueError:
        raise ShapeMismatchError(
            f"could not broadcast value of shape {value.shape} to the selection's shape "
            f"{out_shape}"
        ) from None


def int64_array(values: Sequence[int]) -> np.ndarray:
    """``values`` as an int64 array: the copy and grid kernels take their shapes, strides and
    offsets so."""
    return np.asarray(values, dtype=np.int64)


def c_strides(shape: Sequence[int], itemsize: int) -> list[int]:
    """Byte strides of a C-contiguous array."""
    strides = [0] * len(shape)
    acc = itemsize
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides
