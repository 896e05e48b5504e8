"""The data writes of one ``to_zarr`` call: numpy values now, dask values chunk by chunk.

Dask-backed variables are stored with ``dask.array.store`` into the zarr3c arrays (which
pickle, so any scheduler, distributed included, runs the tasks), each task writing its
block.  Without a lock that is safe only when no stored object (chunk, or shard of a
sharded array) is written by two tasks: every dask chunk boundary inside the written region
must be a boundary of the array's grid, as xarray requires (its ``safe_chunks``).  With
``mode="r+"`` the region's own ends must be too (unless an end is the array's end), since
other writers may be filling the neighbouring regions at the same time.

>>> import numpy as np, dask.array as da, zarr3c
>>> a = zarr3c.create_array("memory://", shape=(10,), dtype="i4", chunks=(5,))
>>> x = da.arange(10, chunks=5, dtype="i4")
>>> plan = WritePlan()
>>> plan.check("v", x, grid_boundaries(a), (slice(0, 10),), mode="w")
>>> plan.add(x, a, (slice(0, 10),))
>>> plan.run(compute=True)
>>> int(a[...].sum())
45
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zarr3c.errors import InvalidArgumentError

__all__ = ["WritePlan", "grid_boundaries", "misaligned", "regular_boundaries"]


def grid_boundaries(array: Any, shape: Sequence[int] | None = None) -> list[list[int]]:
    """Per dimension the offsets where the array's stored objects (chunks, or shards) start,
    and its length.

    Parameters
    ----------
    array : zarr3c.Array
        The array.
    shape : sequence of int or None, default None
        The shape it will have once resized (None: its shape).

    Returns
    -------
    list of list of int
        Sorted offsets, 0 and the length included.

    Raises
    ------
    None

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(10, 4), dtype="i1", chunks=(2, 2),
    ...                         shards=(4, 4))
    >>> grid_boundaries(a)
    [[0, 4, 8, 10], [0, 4]]
    >>> grid_boundaries(a, (12, 4))[0]
    [0, 4, 8, 12]
    """
    md = array.metadata
    shape = tuple(md.shape if shape is None else shape)
    out = []
    for dim, n in zip(md.chunk_grid.dimensions(shape), shape, strict=True):
        starts = {min(dim.chunk_offset(i), n) for i in range(dim.nchunks)}
        out.append(sorted(starts | {0, n}))
    return out


def regular_boundaries(chunks: Sequence[int], shape: Sequence[int]) -> list[list[int]]:
    """:func:`grid_boundaries` of a regular grid not created yet.

    Parameters
    ----------
    chunks : sequence of int
        The chunk (shard) shape.
    shape : sequence of int
        The array's shape.

    Returns
    -------
    list of list of int
        Sorted offsets, 0 and the length included.

    Raises
    ------
    None

    Examples
    --------
    >>> regular_boundaries((4,), (10,))
    [[0, 4, 8, 10]]
    """
    return [sorted(set(range(0, n, max(int(c), 1))) | {0, n})
            for c, n in zip(chunks, shape, strict=True)]


def misaligned(dask_chunks: Sequence[Sequence[int]], region: tuple[slice, ...],
               bounds: list[list[int]], strict_ends: bool) -> tuple[int, int] | None:
    """(dimension, offset) of the first dask block edge that falls inside a stored object,
    or None when every stored object is written by at most one block.

    Parameters
    ----------
    dask_chunks : sequence of sequence of int
        The dask chunks of the values written.
    region : tuple of slice
        Where they go in the array (normalised: start and stop given).
    bounds : list of list of int
        The array's :func:`grid_boundaries`.
    strict_ends : bool
        Check the region's own start and stop too (``mode="r+"``).

    Returns
    -------
    tuple of int or None
        The dimension and the array offset of the first bad edge.

    Raises
    ------
    None

    Examples
    --------
    >>> misaligned(((4, 4, 2),), (slice(0, 10),), [[0, 4, 8, 10]], False) is None
    True
    >>> misaligned(((3, 3),), (slice(0, 6),), [[0, 4, 8]], False)
    (0, 3)
    """
    for dim, (sizes, sl, edges) in enumerate(zip(dask_chunks, region, bounds, strict=True)):
        allowed = set(edges)
        offsets = [sl.start + o for o in itertools.accumulate(int(s) for s in sizes)]
        inner = offsets[:-1]
        ends = [sl.start, sl.stop] if strict_ends else []
        for at in (*inner, *ends):
            if at not in allowed:
                return dim, at
    return None


def _unit_around(edges: list[int], at: int) -> tuple[int, int]:
    i = bisect.bisect_right(edges, at)
    return edges[i - 1], edges[min(i, len(edges) - 1)]


@dataclass
class WritePlan:
    """The data writes of a ``to_zarr`` call, collected while the arrays are made.

    Numpy (or other in-memory) values are written at once by :meth:`add`; dask values are
    kept and stored together by :meth:`run`.

    Parameters
    ----------
    safe_chunks : bool, default True
        Refuse dask values whose blocks would share a stored object; with False they are
        stored under one lock instead (safe in one process only).

    Raises
    ------
    None

    Examples
    --------
    >>> WritePlan().sources
    []
    """

    safe_chunks: bool = True
    sources: list[Any] = field(default_factory=list, init=False)
    targets: list[Any] = field(default_factory=list, init=False)
    regions: list[tuple[slice, ...]] = field(default_factory=list, init=False)
    needs_lock: bool = field(default=False, init=False)

    def check(self, name: Hashable, data: Any, bounds: list[list[int]],
              region: tuple[slice, ...], *, mode: str, unit: str = "chunk") -> None:
        """Check, before anything is written, that dask ``data`` can be stored into
        ``region`` of an array whose grid has ``bounds`` (a no-op for other data).

        Parameters
        ----------
        name : hashable
            The variable's name (named in errors).
        data : array-like
            The encoded values.
        bounds : list of list of int
            The target's :func:`grid_boundaries` at its final shape.
        region : tuple of slice
            Where in the array (normalised: start and stop given).
        mode : str
            The ``to_zarr`` mode (``"r+"`` checks the region's ends too).
        unit : str, default "chunk"
            What the grid's cells are (``"chunk"``, ``"shard"``), for the message.

        Raises
        ------
        InvalidArgumentError
            If dask blocks would share a stored object and ``safe_chunks`` is True.

        Examples
        --------
        >>> import dask.array as da
        >>> x = da.zeros(6, chunks=3)
        >>> try:
        ...     WritePlan().check("v", x, [[0, 4, 6]], (slice(0, 6),), mode="w")
        ... except ValueError as exc:
        ...     print(type(exc).__name__)
        InvalidArgumentError
        """
        if not _is_dask(data):
            return
        bad = misaligned(data.chunks, region, bounds, strict_ends=(mode == "r+"))
        if bad is None:
            return
        if not self.safe_chunks:
            self.needs_lock = True
            return
        dim, at = bad
        lo, hi = _unit_around(bounds[dim], at)
        raise InvalidArgumentError(
            f"variable {name!r}: its dask chunks {data.chunks} (written at {region}) would "
            f"have two tasks write the {unit} [{lo}, {hi}) of dimension {dim} (a block edge "
            f"at {at}), which can corrupt it; rechunk the variable to the array's {unit}s "
            "(.chunk()), change encoding['chunks'], or pass safe_chunks=False")

    def add(self, data: Any, array: Any, region: tuple[slice, ...]) -> None:
        """Write ``data`` into ``array[region]``: now, or at :meth:`run` for dask data
        (checked first with :meth:`check`).

        Parameters
        ----------
        data : array-like
            The encoded values.
        array : zarr3c.Array
            The target, at its final shape.
        region : tuple of slice
            Where in the array.

        Raises
        ------
        ZarrError
            What writing in-memory values raises.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="i1", chunks=(2,))
        >>> WritePlan().add(np.ones(2, "i1"), a, (slice(2, 4),))
        >>> a[...].tolist()
        [0, 0, 1, 1]
        """
        if not _is_dask(data):
            array[region] = np.asarray(data)
            return
        self.sources.append(data)
        self.targets.append(array)
        self.regions.append(region)

    def run(self, compute: bool, result: Any = None) -> Any:
        """Store the dask values collected.

        Parameters
        ----------
        compute : bool
            Store now, or return the ``dask.delayed.Delayed`` that stores them when
            computed.
        result : object, default None
            What the Delayed gives once computed (the group written).

        Returns
        -------
        dask.delayed.Delayed or None
            The lazy store with ``compute=False`` (one that only gives ``result`` where
            there is no dask value), else None.

        Raises
        ------
        ZarrError
            What writing a block raises.

        Examples
        --------
        >>> WritePlan().run(compute=True) is None
        True
        >>> WritePlan().run(compute=False, result="done").compute()
        'done'
        """
        stored: Any = ()
        if self.sources:
            import dask.array as da

            stored = da.store(self.sources, self.targets, regions=self.regions,
                              lock=self.needs_lock, compute=compute)
        if compute:
            return None
        import dask

        # One Delayed, as xarray returns: computing it runs the block writes first.
        return dask.delayed(finished)(stored, result)


def finished(stored: Any, result: Any) -> Any:
    """The value of the lazy store once its writes (``stored``) are done."""
    return result


def _is_dask(data: Any) -> bool:
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(data, da.Array)
