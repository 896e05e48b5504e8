"""Write an xarray Dataset to Zarr with zarr3c: what ``Dataset.to_zarr`` writes.

:func:`to_zarr` stores a dataset as xarray's zarr backend does (the layout of
https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html): one array per variable,
CF-encoded by xarray's own coders, dimension names in ``dimension_names`` (Zarr v3) or
``_ARRAY_DIMENSIONS`` (Zarr v2), the ``coordinates`` attributes, the dataset's attributes
on the group, and optionally consolidated metadata.  ``xr.open_zarr`` (zarr-python) or
``engine="zarr3c"`` read it back identical.  The modes, ``append_dim`` and ``region`` follow
``Dataset.to_zarr``; dask-backed variables are written block by block in parallel by dask
(``compute=False`` returns the lazy write).

>>> import numpy as np, xarray as xr, zarr3c
>>> from zarr3c.xarray.writer import to_zarr
>>> ds = xr.Dataset({"h": (("x",), np.array([1.5, np.nan, 3.0]))}, coords={"x": [1, 2, 3]})
>>> store = zarr3c.MemoryStore()
>>> g = to_zarr(ds, store)
>>> g["h"][...], g["h"].metadata.dimension_names
(array([1.5, nan, 3. ]), ('x',))
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import xarray as xr

from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    MemberNotFoundError,
    UnsupportedFeatureError,
    ZarrError,
)
from zarr3c.xarray import write_existing as existing
from zarr3c.xarray.write_encoding import (
    ArrayOptions,
    array_options,
    encode_attributes,
    encode_variable,
)
from zarr3c.xarray.write_tasks import WritePlan, grid_boundaries, regular_boundaries

__all__ = ["to_zarr"]

_MODES = ("w", "w-", "a", "a-", "r+")

#: The name xarray gives an unnamed DataArray's variable.
_DATAARRAY_NAME = "__xarray_dataarray_variable__"


@dataclass(frozen=True, slots=True)
class WriteSettings:
    """The checked arguments of one :func:`to_zarr` call."""

    mode: str
    append_dim: Hashable | None
    region: Any
    consolidate: bool


def check_settings(mode: str | None, append_dim: Hashable | None, region: Any,
                   consolidated: bool | None) -> WriteSettings:
    """The mode as ``Dataset.to_zarr`` chooses it, and the combinations it refuses."""
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in _MODES:
        raise InvalidArgumentError(f"to_zarr: mode must be one of {list(_MODES)}, got "
                                   f"{mode!r}")
    if append_dim is not None and mode not in ("a", "a-"):
        raise InvalidArgumentError(f"to_zarr: append_dim needs mode 'a' or 'a-' (or None), "
                                   f"got mode {mode!r}")
    if region is not None and mode not in ("a", "a-", "r+"):
        raise InvalidArgumentError(f"to_zarr: region needs mode 'a', 'a-' or 'r+' (or None), "
                                   f"got mode {mode!r}")
    if consolidated not in (None, True, False):
        raise InvalidArgumentError(f"to_zarr: consolidated must be None, True or False, got "
                                   f"{consolidated!r}")
    # As xarray: a region write changes no metadata, so it leaves the consolidated
    # metadata alone; every other mode consolidates unless told not to.
    return WriteSettings(mode, append_dim, region,
                         consolidate=mode != "r+" and consolidated is not False)


def _as_dataset(ds: Any) -> xr.Dataset:
    if isinstance(ds, xr.DataArray):
        return ds.to_dataset(name=ds.name if ds.name is not None else _DATAARRAY_NAME)
    if not isinstance(ds, xr.Dataset):
        raise InvalidTypeError(f"to_zarr needs an xarray Dataset, DataArray or DataTree, got "
                               f"{type(ds).__name__}")
    for name in ds.variables:
        if not isinstance(name, str) or not name:
            raise InvalidTypeError(f"to_zarr: variable name {name!r} is not a non-empty "
                                   "string")
    return ds


def open_target(store: Any, group: str | None, mode: str, zarr_format: Any,
                consolidated: bool | None, storage_options: dict[str, Any] | None) -> Any:
    """The group to write into, opened (or created) as the mode says."""
    import zarr3c

    if zarr_format not in (None, 2, 3):
        raise UnsupportedFeatureError(f"to_zarr writes Zarr v2 or v3; zarr_format "
                                      f"{zarr_format!r} is not one of them")
    open_mode = {"a-": "a"}.get(mode, mode)
    # A region write may go through the consolidated metadata (it changes none); every
    # other mode must see the hierarchy as it is, and rewrites the consolidated copy.
    use_consolidated = consolidated if mode == "r+" else False
    if isinstance(store, zarr3c.Group):  # a group given as the store: write below it
        group = "/".join(p for p in (store.path, (group or "").strip("/")) if p) or None
        store = store.store
    g = zarr3c.open_group(store, path=group, mode=open_mode, zarr_format=zarr_format,
                          storage_options=storage_options, use_consolidated=use_consolidated)
    if g.metadata.zarr_format not in (2, 3):
        raise UnsupportedFeatureError(f"to_zarr writes Zarr v2 or v3; the group is in the "
                                      f"{g.metadata.zarr_format!r} layout")
    return g


def _check_region(ds: xr.Dataset, region: Any, mode: str, append_dim: Hashable | None,
                  g: Any) -> dict[Hashable, slice] | None:
    """``region`` as slices per dimension, ``"auto"`` ones found from the stored coordinates
    (None where no region is written)."""
    if region is None:
        return None
    if isinstance(region, str) and region == "auto":
        region = dict.fromkeys(ds.dims, "auto")
    if not isinstance(region, Mapping):
        raise InvalidTypeError(f"to_zarr: region must be a dict or 'auto', got "
                               f"{type(region).__name__}")
    out: dict[Hashable, slice] = {}
    for dim, sl in region.items():
        if dim not in ds.dims:
            raise InvalidArgumentError(f"to_zarr: region dimension {dim!r} is not a dimension "
                                       f"of the dataset {list(ds.dims)}")
        if isinstance(sl, str) and sl == "auto":
            if mode not in ("r+", "a"):
                raise InvalidArgumentError(f"to_zarr: region='auto' needs mode 'r+' or 'a', "
                                           f"got {mode!r}")
            sl = existing.auto_region(g, ds, dim)
        if not isinstance(sl, slice):
            raise InvalidTypeError(f"to_zarr: region[{dim!r}] must be a slice, got {sl!r}")
        if sl.step not in (None, 1):
            raise InvalidArgumentError(f"to_zarr: region[{dim!r}] must have step 1, got "
                                       f"{sl!r}")
        out[dim] = sl
    apart = [str(k) for k, v in ds.variables.items() if out and not set(out) & set(v.dims)]
    if apart:
        raise InvalidArgumentError(
            f"to_zarr: with region= every variable must have a dimension of the region "
            f"{list(out)}; drop the others first: .drop_vars({apart!r})")
    if append_dim is not None and append_dim in out:
        raise InvalidArgumentError(f"to_zarr: dimension {append_dim!r} is both append_dim and "
                                   "in region")
    return out


def _refuse_lost_writes(ds: xr.Dataset, g: Any) -> None:
    """Refuse dask values bound for a MemoryStore while the scheduler is distributed: each
    worker process would write into its own copy of the store, and the data would be lost."""
    from zarr3c.stores import MemoryStore

    if not isinstance(g.store, MemoryStore) or all(v.chunks is None
                                                   for v in ds.variables.values()):
        return
    from zarr3c.dask import _uses_distributed

    if _uses_distributed():
        raise InvalidArgumentError(
            "to_zarr: dask values into a MemoryStore with the distributed scheduler would be "
            "written into each worker's own copy and lost; write to a store every worker "
            "reaches (a path)")


def naming(exc: ZarrError, what: str) -> ZarrError:
    """The same error, its message prefixed with ``what`` it arose for (``"variable 'x'"``,
    ``"node '/a'"``) unless it names it already."""
    if what in str(exc):
        return exc
    named = copy.copy(exc)
    named.args = (f"{what}: {exc}",)
    return named


def _create(g: Any, name: str, options: ArrayOptions, overwrite: bool) -> Any:
    """Create the array of a new variable."""
    # (fill_value None: in Zarr v2 "fill_value": null, no _FillValue; in v3 the default)
    return g.create_array(
        name, shape=options.shape, dtype=options.dtype, fill_value=options.fill_value,
        attributes=options.attributes, dimension_names=options.dimension_names,
        overwrite=overwrite, **options.create_kwargs,
    )


def _stored_dims_of_group(g: Any, keys: list[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for key in keys:
        array = g[key]
        for dim, n in zip(existing.stored_dims(key, array), array.shape, strict=True):
            sizes.setdefault(dim, n)
    return sizes


def _normalise(region: Mapping[Hashable, slice], dims: tuple[Hashable, ...],
               shape: tuple[int, ...]) -> tuple[slice, ...]:
    out = []
    for dim, n in zip(dims, shape, strict=True):
        start, stop, _ = region.get(dim, slice(None)).indices(n)
        out.append(slice(start, max(stop, start)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Target:
    """Where one encoded variable goes: its array's options and final shape, the region
    written, and the array's grid boundaries at that shape."""

    options: ArrayOptions
    shape: tuple[int, ...]
    region: tuple[slice, ...]
    bounds: list[list[int]]
    unit: str


def _target(name: Hashable, v: xr.Variable, opts: ArrayOptions, array: Any,
            region: Mapping[Hashable, slice], append_dim: Hashable | None) -> _Target:
    """The :class:`_Target` of a new variable (``array`` None) or a stored one."""
    if array is None:
        kwargs = opts.create_kwargs
        grid = kwargs.get("shards") or kwargs["chunks"]
        shape = opts.shape
        bounds = (regular_boundaries(grid, shape) if isinstance(grid, tuple)
                  else [[0, n] for n in shape])  # "auto" chunks: numpy data, never checked
        unit = "shard" if kwargs.get("shards") else "chunk"
        return _Target(opts, shape, _normalise(region, v.dims, shape), bounds, unit)
    wanted = dict(region)
    shape = tuple(array.shape)
    if append_dim is not None and append_dim in v.dims:
        axis = v.dims.index(append_dim)
        wanted[append_dim] = slice(shape[axis], shape[axis] + v.shape[axis])
        shape = shape[:axis] + (shape[axis] + v.shape[axis],) + shape[axis + 1:]
    unit = "chunk" if array.shards is None else "shard"
    return _Target(opts, shape, _normalise(wanted, v.dims, shape),
                   grid_boundaries(array, shape), unit)


def to_zarr(
    ds: Any,
    store: Any = None,
    *,
    mode: str | None = None,
    group: str | None = None,
    zarr_format: int | None = None,
    encoding: Mapping[Hashable, Mapping[str, Any]] | None = None,
    consolidated: bool | None = None,
    append_dim: Hashable | None = None,
    region: Mapping[Hashable, Any] | str | None = None,
    compute: bool = True,
    safe_chunks: bool = True,
    storage_options: dict[str, Any] | None = None,
    write_inherited_coords: bool = False,
) -> Any:
    """Write a Dataset to a Zarr store as ``Dataset.to_zarr`` does, through zarr3c.

    Parameters
    ----------
    ds : xarray.Dataset, xarray.DataArray or xarray.DataTree
        What to write (a DataArray is written as a dataset of one variable; a DataTree as
        ``DataTree.to_zarr`` writes it, each node a group: see
        :func:`zarr3c.xarray.write_tree.tree_to_zarr`).
    store : Store, Group, str, os.PathLike, dict or None, default None
        Where: a :class:`~zarr3c.Store`, a path, a URL (``"s3://bucket/x.zarr"``, with
        ``storage_options``), a dict or None (a new :class:`~zarr3c.MemoryStore`), as for
        :func:`zarr3c.open_group`; or a :class:`~zarr3c.Group`, ``group`` then being
        relative to it.
    mode : {"w", "w-", "a", "a-", "r+"} or None, default None
        ``"w"``: replace what is at ``group``; ``"w-"``: create, failing if a node is
        there; ``"a"``: write into the group (created if missing), overwriting the
        variables it holds and adding the others; ``"a-"``: as ``"a"``, but with
        ``append_dim`` the stored variables without that dimension are left as they are;
        ``"r+"``: write into existing variables only, changing no metadata.  None: ``"a"``
        with ``append_dim``, ``"r+"`` with ``region``, else ``"w-"``.
    group : str or None, default None
        Path of the group within the store (None: the root).
    zarr_format : {2, 3} or None, default None
        The format of a new group (None: Zarr v3); an existing group keeps its own.
    encoding : dict or None, default None
        Per variable name, the encoding to write it with: CF keys (``dtype``,
        ``_FillValue``, ``scale_factor``, ``add_offset``, ``units``, ``calendar``) and array
        keys (``chunks``, ``shards``, ``compressors`` (or v2's ``compressor``),
        ``filters``, ``serializer``, ``fill_value`` (v3), ``chunk_key_encoding``,
        ``write_empty_chunks``).  Not allowed for variables already stored.  For a
        DataTree: per node path (``"/"``, ``"/a/b"``), such a dict.
    consolidated : bool or None, default None
        None or True: write consolidated metadata at the store's root afterwards (not with
        ``mode="r+"``, which changes no metadata; there True requires consolidated metadata
        to open the group).  False: none.
    append_dim : hashable or None, default None
        Grow the stored variables along this dimension and write the new values after
        the stored ones (not for a DataTree, as in xarray).
    region : dict of slice, "auto" or None, default None
        Write into this part of the stored variables: per dimension a slice (step 1) or
        ``"auto"`` (found from the stored coordinate values); ``"auto"`` for every
        dimension.  Index coordinates are not written.
    compute : bool, default True
        Write the dask-backed values now; with False, return the ``Delayed`` that writes
        them (metadata and in-memory values are written at once).
    safe_chunks : bool, default True
        Refuse dask blocks that would share a stored chunk (shard); with False they are
        written under a lock (safe within one process only).
    storage_options : dict or None, default None
        Options for the filesystem of a URL store.
    write_inherited_coords : bool, default False
        DataTree only: write the coordinates a node inherits into its own group too.

    Returns
    -------
    zarr3c.Group or dask.delayed.Delayed
        The group written (a DataTree's root group), or with ``compute=False`` the lazy
        write (which gives the group when computed).

    Raises
    ------
    InvalidArgumentError
        For a bad mode or mode combination, region, encoding key, for new variables in
        mode ``"r+"``, an ``append_dim`` the store does not have, encoding given for a
        stored variable, dask chunks that would share a stored chunk (naming the
        variable), or dask values bound for a MemoryStore under the distributed scheduler.
    InvalidTypeError
        For something else than a Dataset, DataArray or DataTree, a bad variable or
        attribute name, or appended values of a dtype that would be truncated.
    ShapeMismatchError
        If a stored variable has other dimensions or sizes than the values written.
    ValueConversionError
        If xarray's CF encoding refuses a variable.
    ContainsGroupError, ContainsArrayError
        With mode ``"w-"`` where a node exists.
    GroupNotFoundError
        With mode ``"r+"`` where there is no group.
    UnsupportedFeatureError
        For ``append_dim`` with a DataTree, and as below.
    MetadataError, UnsupportedFeatureError, StoreError
        As zarr3c raises them creating or writing the arrays.

    See Also
    --------
    xarray.Dataset.to_zarr : xarray's writer, through zarr-python.
    xarray.DataTree.to_zarr : the same for a tree.

    Examples
    --------
    >>> import numpy as np, pandas as pd, xarray as xr, zarr3c
    >>> ds = xr.Dataset(
    ...     {"t2m": (("time", "x"), np.arange(6.0).reshape(2, 3), {"units": "K"})},
    ...     coords={"time": pd.date_range("2024-01-01", periods=2), "x": [10, 20, 30]})
    >>> store = zarr3c.MemoryStore()
    >>> g = to_zarr(ds, store, zarr_format=2)
    >>> g["t2m"].attrs["_ARRAY_DIMENSIONS"], g["time"].attrs["units"]
    (['time', 'x'], 'days since 2024-01-01 00:00:00')

    Appending along time:

    >>> later = ds.assign_coords(time=pd.date_range("2024-01-03", periods=2))
    >>> g = to_zarr(later, store, append_dim="time")
    >>> g["t2m"].shape, g["time"][...].tolist()
    ((4, 3), [0, 1, 2, 3])
    """
    if isinstance(ds, xr.DataTree):
        from zarr3c.xarray.write_tree import tree_to_zarr

        return tree_to_zarr(
            ds, store, mode=mode, group=group, zarr_format=zarr_format, encoding=encoding,
            consolidated=consolidated, append_dim=append_dim, region=region,
            compute=compute, safe_chunks=safe_chunks, storage_options=storage_options,
            write_inherited_coords=write_inherited_coords)
    ds = _as_dataset(ds)
    settings = check_settings(mode, append_dim, region, consolidated)
    mode = settings.mode
    encoding = dict(encoding or {})
    for v in ds.variables.values():
        if v.size == 0:
            v.load()  # dask stores nothing for an empty array; write it as numpy
    g = open_target(store, group, mode, zarr_format, consolidated, storage_options)
    _refuse_lost_writes(ds, g)
    fmt = int(g.metadata.zarr_format)
    write_region = _check_region(ds, settings.region, mode, append_dim, g)
    if write_region is not None:
        ds = ds.drop_vars(list(ds.indexes))  # a region write leaves the indexes as stored

    stored_keys = [] if mode == "w" else list(g.array_keys())
    in_store = [k for k in ds.variables if k in stored_keys]
    if mode in ("a", "a-", "r+"):
        given = [k for k in in_store if k in encoding]
        if given:
            raise InvalidArgumentError(f"to_zarr: variable {given[0]!r} is already stored, "
                                       "but encoding was given for it")
    if mode == "r+":
        new = [k for k in ds.variables if k not in stored_keys]
        if new:
            raise InvalidArgumentError(f"to_zarr(mode='r+') writes stored variables only; "
                                       f"{new} are new (mode='a' adds them)")
    if append_dim is not None and append_dim not in stored_keys:
        if append_dim not in _stored_dims_of_group(g, stored_keys):
            raise InvalidArgumentError(f"to_zarr: append_dim {append_dim!r} is not a "
                                       "dimension of the stored dataset")

    from xarray import conventions

    variables, attrs = conventions.encode_dataset_coordinates(ds)
    group_attrs = encode_attributes(attrs, "the dataset")
    for key, enc in encoding.items():
        if key not in variables:
            raise MemberNotFoundError(f"to_zarr: encoding given for {key!r}, which is not a "
                                      "variable of the dataset")
        variables[key].encoding = dict(enc)

    encoded: dict[Hashable, xr.Variable] = {}
    arrays: dict[Hashable, Any] = {}
    for name, var in variables.items():
        if name not in in_store:
            encoded[name] = encode_variable(name, var, fmt)
            continue
        # Encoded exactly as the stored values: the stored variable's decoded encoding.
        array = arrays[name] = g[str(name)]
        stored = existing.decode_stored(name, array)
        existing.check_append_dtype(name, stored.dtype, var.dtype)
        var = var.copy(deep=False)
        var.encoding = dict(stored.encoding)
        encoded[name] = existing.match_dims(
            name, encode_variable(name, var, fmt), existing.stored_dims(name, array),
            array.shape, write_region or {}, append_dim)
    if mode == "a-" and append_dim is not None:
        encoded = {k: v for k, v in encoded.items()
                   if k not in in_store or append_dim in v.dims}

    # Everything is checked before the store changes: encodings, then where each variable
    # goes and whether its dask blocks may be written there in parallel.
    plan = WritePlan(safe_chunks=safe_chunks)
    targets = {}
    for name, v in encoded.items():
        opts = array_options(name, v, zarr_format=fmt, checked=name in encoding)
        target = _target(name, v, opts, arrays.get(name), write_region or {}, append_dim)
        plan.check(name, v.data, target.bounds, target.region, mode=mode, unit=target.unit)
        targets[name] = target

    if mode != "r+":
        g.attrs.put(group_attrs)
    for name, v in encoded.items():
        target = targets[name]
        array = arrays.get(name)
        try:
            if array is None:
                array = _create(g, str(name), target.options, overwrite=(mode == "w"))
            elif array.shape != target.shape:
                array.resize(target.shape)
            plan.add(v.data, array, target.region)
        except ZarrError as exc:
            raise naming(exc, f"variable {name!r}") from exc

    if settings.consolidate:
        import zarr3c

        zarr3c.consolidate_metadata(g.store, zarr_format=fmt)
    delayed = plan.run(compute, result=g)
    return g if compute else delayed
