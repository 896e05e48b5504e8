"""Selections: turning numpy-style keys into per-dimension slices and per-chunk copy plans.

A basic selection (ints, slices with any step, ``...``, ``None``) becomes one
:class:`DimSelection` per array dimension: ``count`` elements starting at ``start`` with a
positive ``step``; a negative user step is the same elements read in reverse, so ``reverse`` is
set and the copy into the output runs with a negative output stride.  Each dimension is then
projected onto its chunk grid by the grid kernel, and the cartesian product of the projections
gives, per chunk, the byte offsets and strides that one ``copy_strided`` call needs.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarr3c.errors import BoundsCheckError, IndexingError

__all__ = ["DimSelection", "BasicSelection", "parse_basic_selection", "ChunkTask", "plan_chunks"]


@dataclass(frozen=True, slots=True)
class DimSelection:
    """The elements ``start + k * step`` for ``k < count`` of one dimension (``step >= 1``)."""

    start: int
    step: int
    count: int
    reverse: bool = False  # the user asked for them in decreasing order
    drop: bool = False  # an integer index: the axis is removed from the result


@dataclass(frozen=True, slots=True)
class BasicSelection:
    dims: tuple[DimSelection, ...]
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


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool | np.bool_):
        return False
    if isinstance(x, int | np.integer):
        return True
    return isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu"


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
    if step > 0:
        return DimSelection(start, step, count)
    # The same elements in increasing order, copied into the output back to front.
    return DimSelection(start + (count - 1) * step, -step, count, reverse=True)


def parse_basic_selection(selection: Any, shape: Sequence[int]) -> BasicSelection:
    """Normalise a numpy basic-indexing key against ``shape``.

    Raises
    ------
    IndexingError
        Too many indices, more than one ellipsis, a zero step, or an index of a type basic
        indexing does not take (arrays and lists belong to ``oindex``/``vindex``).
    BoundsCheckError
        An integer index out of bounds (the message names the axis).
    """
    ndim = len(shape)
    key = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
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

    dims: list[DimSelection] = []
    out_shape: list[int] = []
    axis = 0
    for k in expanded:
        if k is None:
            out_shape.append(1)
            continue
        length = shape[axis]
        if isinstance(k, slice):
            d = _normalize_slice(k, length, axis)
            out_shape.append(d.count)
        elif _is_integer(k):
            d = DimSelection(_normalize_integer(k, length, axis), 1, 1, drop=True)
        else:
            raise IndexingError(
                f"unsupported index on axis {axis} for basic indexing: {k!r} "
                f"(only integers, slices, ... and None; use .oindex or .vindex for arrays)"
            )
        dims.append(d)
        axis += 1
    return BasicSelection(tuple(dims), tuple(out_shape))


@dataclass(frozen=True, slots=True)
class ChunkTask:
    """What one chunk contributes to a selection.

    ``local_start``/``local_step`` select elements within the chunk, ``counts`` how many per
    dimension, and ``out_start`` where the first of them lands in the (full-rank) output,
    with ``out_step`` +1 or -1 (a reversed dimension fills the output back to front).
    """

    coords: tuple[int, ...]
    local_start: tuple[int, ...]
    local_step: tuple[int, ...]
    counts: tuple[int, ...]
    out_start: tuple[int, ...]
    out_step: tuple[int, ...]

    def covers(self, chunk_shape: Sequence[int], array_shape: Sequence[int],
               origin: Sequence[int]) -> bool:
        """True if the selection takes every element of the chunk that lies inside the array."""
        for i, n in enumerate(self.counts):
            inside = min(chunk_shape[i], array_shape[i] - origin[i])
            if self.local_start[i] != 0 or self.local_step[i] != 1 or n != inside:
                return False
        return True


def plan_chunks(selection: BasicSelection, dimensions: Sequence[Any]) -> Iterator[ChunkTask]:
    """Yield a :class:`ChunkTask` for every chunk the selection touches, in C order.

    ``dimensions`` are the grid's per-dimension objects (``project_slice`` runs the kernel).
    """
    per_dim: list[list[tuple[int, int, int, int, int, int]]] = []
    for d, dim in zip(selection.dims, dimensions, strict=True):
        if d.count == 0:
            return
        rows = dim.project_slice(d.start, d.step, d.count)
        entries = []
        for chunk, local, n, pos in rows.tolist():
            if d.reverse:
                entries.append((chunk, local, d.step, n, d.count - 1 - pos, -1))
            else:
                entries.append((chunk, local, d.step, n, pos, 1))
        per_dim.append(entries)
    for combo in itertools.product(*per_dim):
        yield ChunkTask(
            coords=tuple(e[0] for e in combo),
            local_start=tuple(e[1] for e in combo),
            local_step=tuple(e[2] for e in combo),
            counts=tuple(e[3] for e in combo),
            out_start=tuple(e[4] for e in combo),
            out_step=tuple(e[5] for e in combo),
        )


def c_strides(shape: Sequence[int], itemsize: int) -> list[int]:
    """Byte strides of a C-contiguous array."""
    strides = [0] * len(shape)
    acc = itemsize
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides
