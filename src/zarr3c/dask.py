"""Dask and distributed: write a dask array into a new zarr3c array whose grid follows it.

Reading needs nothing from this module: an :class:`~zarr3c.Array` is array-like and pickles as
(store, path, read_only, write_empty_chunks, order), so ``dask.array.from_array(a,
chunks=a.chunks)`` reads chunk-aligned on any scheduler (``a.chunks`` is dask-style for a
rectilinear grid; for a sharded array ``chunks=a.shards`` reads whole shards, which is much
faster).  Writing with ``dask.array.store(x, a, lock=False)`` is safe across processes when
every chunk (every shard) of ``a`` is written by one dask task, i.e. when x's chunk boundaries
are chunk (shard) boundaries of ``a``; :func:`from_dask` makes sure of it.

Dask is an optional dependency (``pip install "zarr3c[dask]"``), imported only when used.

Examples
--------
>>> import dask.array as da, zarr3c
>>> x = da.ones((100, 60), chunks=((30, 30, 40), 25), dtype="int16")
>>> a = zarr3c.from_dask(x, "memory://")
>>> a.chunks          # irregular dask chunks give a rectilinear grid
((30, 30, 40), (25, 25, 10))
>>> int(a[...].sum())
6000
"""

from __future__ import annotations

import bisect
import inspect
import itertools
from collections.abc import Sequence
from typing import Any

from zarr3c.errors import InvalidArgumentError, InvalidTypeError, MissingDependencyError

__all__ = ["MissingDependencyError", "chunks_from_dask", "from_dask"]

_EXTRA = 'pip install "zarr3c[dask]"'


def _import_dask_array() -> Any:
    """``dask.array``, or a MissingDependencyError naming the extra to install."""
    try:
        import dask.array as da
    except ImportError as exc:
        raise MissingDependencyError(
            f"zarr3c's Dask support needs dask[array] ({exc}); install it with: {_EXTRA}"
        ) from exc
    return da


def chunks_from_dask(
    dask_chunks: Sequence[Sequence[int]],
) -> tuple[int, ...] | list[int | list[int]]:
    """The ``chunks=`` argument of :func:`zarr3c.create_array` whose grid matches dask chunks.

    A dimension is regular when all its chunks are equal but a smaller (or equal) last one;
    when every dimension is regular the result is a regular chunk shape, otherwise a
    rectilinear specification (an int for a regular dimension, the edge lengths for the
    others).

    Parameters
    ----------
    dask_chunks : sequence of sequence of int
        Per dimension the chunk lengths, as ``dask.array.Array.chunks``.

    Returns
    -------
    tuple of int or list
        ``(c0, c1, ...)`` or ``[c0, [e10, e11, ...], ...]``.

    Raises
    ------
    InvalidArgumentError
        If a dimension has unknown (NaN) chunk sizes.

    Examples
    --------
    >>> chunks_from_dask(((10, 10, 5), (7,)))
    (10, 7)
    >>> chunks_from_dask(((10, 20, 5), (7,)))
    [[10, 20, 5], 7]
    """
    per_dim: list[int | list[int]] = []
    for dim, edges in enumerate(dask_chunks):
        if any(e != e for e in edges):  # NaN: unknown chunk sizes
            raise InvalidArgumentError(
                f"dimension {dim} has unknown chunk sizes {tuple(edges)}; call "
                "x.compute_chunk_sizes() first"
            )
        lengths = [int(e) for e in edges if e > 0]
        if not lengths:  # an empty dimension: any chunk length will do
            per_dim.append(1)
        elif all(e == lengths[0] for e in lengths[:-1]) and lengths[-1] <= lengths[0]:
            per_dim.append(lengths[0])
        else:
            per_dim.append(lengths)
    if all(isinstance(c, int) for c in per_dim):
        return tuple(c for c in per_dim if isinstance(c, int))
    return per_dim


def _boundaries(edges: Sequence[int]) -> list[int]:
    """The offsets where chunks of these lengths start, and the total length."""
    return [0, *itertools.accumulate(int(e) for e in edges)]


def _storage_boundaries(metadata: Any) -> list[list[int]]:
    """Per dimension the offsets where the stored objects (chunks, or shards) start, and the
    array's length: the boundaries a writer must not cut across."""
    out = []
    for dim, n in zip(metadata.chunk_grid.dimensions(metadata.shape), metadata.shape,
                      strict=True):
        starts = [dim.chunk_offset(i) for i in range(dim.nchunks)]
        out.append(sorted({min(s, n) for s in starts} | {0, n}))
    return out


def _aligned(dask_chunks: Sequence[Sequence[int]], storage: list[list[int]]
             ) -> tuple[tuple[int, ...], ...]:
    """Dask chunks whose boundaries are storage boundaries: each dask boundary moves up to the
    next storage boundary, so the tasks stay about as large as before and no stored object
    is split between two tasks."""
    out = []
    for edges, bounds in zip(dask_chunks, storage, strict=True):
        moved = sorted({bounds[bisect.bisect_left(bounds, b)] for b in _boundaries(edges)})
        out.append(tuple(b - a for a, b in itertools.pairwise(moved)) or (0,))
    return tuple(out)


def _first_misalignment(dask_chunks: Sequence[Sequence[int]], storage: list[list[int]]
                        ) -> tuple[int, int, int, int] | None:
    """(dimension, dask boundary, storage start, storage end) of the first dask boundary that
    falls inside a stored object, or None when all are aligned."""
    for dim, (edges, bounds) in enumerate(zip(dask_chunks, storage, strict=True)):
        allowed = set(bounds)
        for b in _boundaries(edges):
            if b not in allowed:
                i = bisect.bisect_left(bounds, b)
                return dim, b, bounds[i - 1], bounds[i]
    return None


def _uses_distributed() -> bool:
    """Whether dask's current default scheduler is a distributed Client."""
    from dask.base import get_scheduler

    owner = getattr(get_scheduler(), "__self__", None)
    return type(owner).__module__.split(".")[0] == "distributed"


def _create_array_options() -> set[str]:
    """The :func:`zarr3c.create_array` keywords :func:`from_dask` passes on as given."""
    from zarr3c.api import create_array

    names = set(inspect.signature(create_array).parameters)
    return names - {"store", "name", "shape", "dtype", "chunks", "shards", "overwrite", "data"}


def from_dask(
    x: Any,
    store: Any,
    name: str | None = None,
    *,
    chunks: Any = None,
    shards: Any = None,
    overwrite: bool = False,
    compute: bool = True,
    rechunk: bool = True,
    **create_kwargs: Any,
) -> Any:
    """Create an array from a dask array and store the dask array into it.

    The array's shape and dtype are x's.  Its chunk grid follows x's chunks unless ``chunks``
    is given: regular when every dimension's dask chunks are all equal but a smaller last
    one, rectilinear otherwise (see :func:`chunks_from_dask`).  Each chunk (each shard of a
    sharded array) is then written by exactly one dask task, so the writes are safe on any
    scheduler, across processes too, without locks.

    Parameters
    ----------
    x : dask.array.Array
        The dask array to store (its chunk sizes must be known).
    store : Store, str, os.PathLike, dict or None
        Where to create the array (a Store, a path, ``"memory://"``), as for
        :func:`zarr3c.create_array`.
    name : str or None, default None
        Path of the array within the store (``None``: the root).
    chunks : int, tuple of int, rectilinear chunks or None, default None
        The chunk shape (inner chunk shape when ``shards`` is given), in any form
        :func:`zarr3c.create_array` takes; None: follow x's chunks.
    shards : int, tuple of int or None, default None
        The shard shape, as for :func:`zarr3c.create_array` (needs ``chunks``).
    overwrite : bool, default False
        Replace a node already at the path.
    compute : bool, default True
        Store now and return the Array; with False, create the array now and return the lazy
        dask object that stores x when computed (what ``x.store(..., compute=False)`` gives,
        as ``dask.array.to_zarr``).
    rechunk : bool, default True
        When x's chunk boundaries cut through the array's chunks (shards) — only possible
        with explicit ``chunks``/``shards`` — rechunk x first so that every chunk (shard) is
        written by one task: each dask chunk boundary moves up to the next chunk boundary of
        the array.  With False, refuse instead.
    **create_kwargs
        Other :func:`zarr3c.create_array` options: ``filters``, ``serializer``,
        ``compressors``, ``codecs``, ``fill_value``, ``attributes``, ``dimension_names``,
        ``chunk_key_encoding``, ``order``, ``write_empty_chunks``, ``zarr_format``,
        ``storage_options``.

    Returns
    -------
    Array or dask collection
        The new array, or with ``compute=False`` the lazy store.

    Raises
    ------
    MissingDependencyError
        If dask is not installed.
    InvalidArgumentError
        If x's chunks do not align with the array's and ``rechunk`` is False; if the store is
        a MemoryStore while the default scheduler is a distributed Client (each worker process
        would write into its own copy and the data would be lost); for an unknown option.
    InvalidTypeError
        If x is not a dask array.
    MetadataError, ContainsArrayError, ContainsGroupError
        As :func:`zarr3c.create_array` raises them (checked before anything is written).

    See Also
    --------
    chunks_from_dask : The chunk grid that follows dask chunks.

    Examples
    --------
    >>> import dask.array as da, numpy as np, zarr3c
    >>> x = da.from_array(np.arange(12, dtype="int32").reshape(3, 4), chunks=2)
    >>> a = zarr3c.from_dask(x, "memory://", attributes={"from": "dask"})
    >>> a.chunks, a.attrs["from"]
    ((2, 2), 'dask')
    >>> a[...]
    array([[ 0,  1,  2,  3],
           [ 4,  5,  6,  7],
           [ 8,  9, 10, 11]], dtype=int32)
    """
    da = _import_dask_array()
    from zarr3c.api import create_array
    from zarr3c.array import build_array_metadata
    from zarr3c.stores import MemoryStore, make_store

    if not isinstance(x, da.Array):
        raise InvalidTypeError(f"from_dask() needs a dask.array.Array, got {type(x).__name__}")
    unknown = sorted(set(create_kwargs) - _create_array_options())
    if unknown:
        raise InvalidArgumentError(
            f"from_dask() got unknown option(s) {unknown}; it takes create_array's options "
            f"but shape, dtype and data, which come from x"
        )
    if shards is not None and chunks is None:
        raise InvalidArgumentError(
            "from_dask(shards=...) needs chunks= too: the inner chunk shape of the shards"
        )
    if chunks is None:
        chunks = chunks_from_dask(x.chunks)
    else:
        chunks_from_dask(x.chunks)  # refuses unknown chunk sizes
    storage_options = create_kwargs.pop("storage_options", None)
    s = make_store(store, storage_options=storage_options)
    if isinstance(s, MemoryStore) and _uses_distributed():
        raise InvalidArgumentError(
            "from_dask() into a MemoryStore with the distributed scheduler: each worker "
            "process would write into its own copy of the store and the data would be lost; "
            "use a LocalStore (a path) or a store every worker reaches"
        )

    # The grid is built (and validated) before anything is written, so a refusal below
    # leaves the store as it was.
    metadata = build_array_metadata(shape=x.shape, dtype=x.dtype, chunks=chunks, shards=shards)
    storage = _storage_boundaries(metadata)
    bad = _first_misalignment(x.chunks, storage)
    if bad is not None:
        if not rechunk:
            dim, at, lo, hi = bad
            unit = "shard" if shards is not None else "chunk"
            raise InvalidArgumentError(
                f"the dask chunks of x {x.chunks} do not align with the array's {unit}s: in "
                f"dimension {dim} a dask chunk ends at {at}, inside the {unit} "
                f"[{lo}, {hi}), so two tasks would write that {unit} (unsafe across "
                f"processes); rechunk x to the {unit} boundaries, or pass rechunk=True"
            )
        x = x.rechunk(_aligned(x.chunks, storage))

    a = create_array(s, name, shape=x.shape, dtype=x.dtype, chunks=chunks, shards=shards,
                     overwrite=overwrite, **create_kwargs)
    stored = x.store(a, lock=False, compute=compute)
    return a if compute else stored
