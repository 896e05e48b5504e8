"""Writing into arrays that already exist: appends, region writes, ``mode="a"`` overwrites.

New values must be encoded exactly as the stored ones (the same time ``units``, the same
packing ``dtype``/``scale_factor``/``_FillValue``), so the stored variable is decoded first,
as xarray's zarr reader would present it, only to learn its encoding: its data is never
read (a zero-size stand-in broadcast to its shape takes its place).  Then the checks xarray
makes before such a write, raised as zarr3c errors naming the variable: the same dimensions
(a transposed variable is transposed back), the same sizes but along ``append_dim``, a dtype
that appends without truncation; and ``region="auto"``, found from the stored coordinates.

>>> import numpy as np, xarray as xr, zarr3c
>>> g = zarr3c.create_group(zarr3c.MemoryStore())
>>> a = g.create_array("t", shape=(2,), dtype="int64", dimension_names=["t"],
...                    attributes={"units": "days since 2000-01-01"})
>>> decode_stored("t", a).encoding["units"]
'days since 2000-01-01'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from zarr3c.errors import (
    IndexingError,
    InvalidArgumentError,
    InvalidTypeError,
    MetadataError,
    ShapeMismatchError,
)
from zarr3c.xarray.write_encoding import DIMENSION_KEY

__all__ = [
    "auto_region",
    "check_append_dtype",
    "decode_stored",
    "match_dims",
    "stored_dims",
    "stored_variable",
]


def stored_dims(name: Hashable, array: Any) -> tuple[str, ...]:
    """The dimension names of a stored array: ``dimension_names`` (Zarr v3) or the
    ``_ARRAY_DIMENSIONS`` attribute (Zarr v2).

    Parameters
    ----------
    name : hashable
        The variable's name (named in errors).
    array : zarr3c.Array
        The stored array.

    Returns
    -------
    tuple of str
        One name per dimension.

    Raises
    ------
    MetadataError
        If the array does not name its dimensions (it was not written by xarray).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="i1", dimension_names=["x"])
    >>> stored_dims("v", a)
    ('x',)
    """
    if array.metadata.zarr_format == 2:
        dims = array.attrs.get(DIMENSION_KEY)
        where = f"its {DIMENSION_KEY!r} attribute"
    else:
        dims = array.metadata.dimension_names
        where = "its dimension_names"
    if dims is None or len(dims) != len(array.shape) or not all(isinstance(d, str)
                                                                 for d in dims):
        raise MetadataError(f"variable {name!r}: the stored array does not name its "
                            f"{len(array.shape)} dimensions in {where} ({dims!r}), which "
                            "xarray needs")
    return tuple(dims)


def _fill_value(array: Any) -> Any:
    """The array's fill value as zarr-python gives it to xarray (None for a Zarr v2
    ``null``, as ``Array.fill_value`` says)."""
    value = array.fill_value
    return value.item() if isinstance(value, np.generic) else value


def stored_variable(name: Hashable, array: Any) -> xr.Variable:
    """A stored array as xarray's zarr reader presents it before CF decoding, with
    stand-in data of its dtype and shape (nothing is read).

    In Zarr v2 the array's ``fill_value`` is the ``_FillValue``; in Zarr v3 the
    ``_FillValue`` attribute is decoded as xarray encodes it (base64 floats).

    Parameters
    ----------
    name : hashable
        The variable's name.
    array : zarr3c.Array
        The stored array.

    Returns
    -------
    xarray.Variable
        Dimensions, attributes and encoding as stored; the data are a read-only broadcast.

    Raises
    ------
    MetadataError
        If the array does not name its dimensions.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="f4", fill_value=-1.0,
    ...                         dimension_names=["x"], zarr_format=3)
    >>> v = stored_variable("v", a)
    >>> v.dims, v.encoding["fill_value"]
    (('x',), -1.0)
    """
    from xarray.backends.zarr import FillValueCoder

    dims = stored_dims(name, array)
    attrs = dict(array.attrs.asdict())
    attrs.pop(DIMENSION_KEY, None)
    dtype = array.dtype
    stand_in = np.broadcast_to(np.zeros((), dtype=object if dtype.kind == "T" else dtype),
                               array.shape)
    encoding: dict[str, Any] = {"chunks": array.chunks, "shards": array.shards}
    fill = _fill_value(array)
    if array.metadata.zarr_format == 2:
        if fill is not None:
            attrs["_FillValue"] = fill
    else:
        encoding["fill_value"] = fill
        if "_FillValue" in attrs:
            kind = "string" if dtype.kind in "TO" else dtype
            try:
                attrs["_FillValue"] = FillValueCoder.decode(attrs["_FillValue"], kind)
            except (ValueError, TypeError) as exc:
                raise MetadataError(f"variable {name!r}: its _FillValue attribute "
                                    f"{attrs['_FillValue']!r} does not decode: {exc}") from exc
    return xr.Variable(dims, stand_in, attrs, encoding)


def decode_stored(name: Hashable, array: Any) -> xr.Variable:
    """A stored variable CF-decoded as xarray's zarr reader decodes it, lazily (nothing is
    read): its ``encoding`` says how new values written into it must be encoded.

    Parameters
    ----------
    name : hashable
        The variable's name.
    array : zarr3c.Array
        The stored array.

    Returns
    -------
    xarray.Variable
        The decoded variable (its dtype is what the stored values decode to); its
        encoding holds the CF keys (``units``, ``calendar``, ``dtype``, ``_FillValue``,
        ``scale_factor``, ...) and the array's ``chunks`` and ``shards``.

    Raises
    ------
    MetadataError
        If the array does not name its dimensions, or its CF attributes do not decode.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="i2", dimension_names=["x"],
    ...                         attributes={"scale_factor": 0.5})
    >>> v = decode_stored("v", a)
    >>> v.dtype, v.encoding["dtype"], v.encoding["scale_factor"]
    (dtype('float64'), dtype('int16'), 0.5)
    """
    from xarray import conventions

    try:
        decoded, _, _ = conventions.decode_cf_variables({name: stored_variable(name, array)},
                                                        {})
    except (ValueError, TypeError, OverflowError) as exc:
        raise MetadataError(f"variable {name!r}: its stored CF attributes do not decode: "
                            f"{exc}") from exc
    return decoded[name]


def check_append_dtype(name: Hashable, stored: np.dtype, new: np.dtype) -> None:
    """Refuse values whose dtype would be truncated in the stored array, as xarray does:
    numbers, times, booleans and objects always append; fixed-width strings only to an
    array of the same width or of variable-width strings.

    Parameters
    ----------
    name : hashable
        The variable's name.
    stored : numpy.dtype
        The stored variable's decoded dtype.
    new : numpy.dtype
        The new values' dtype.

    Raises
    ------
    InvalidTypeError
        If the dtypes differ in a way that would truncate.

    Examples
    --------
    >>> check_append_dtype("v", np.dtype("U3"), np.dtype("U3"))
    >>> try:
    ...     check_append_dtype("v", np.dtype("U3"), np.dtype("U5"))
    ... except TypeError as exc:
    ...     print(type(exc).__name__)
    InvalidTypeError
    """
    if (np.issubdtype(new, np.number) or np.issubdtype(new, np.datetime64)
            or np.issubdtype(new, np.bool_) or new.kind == "O"
            or (new.kind in "SU" and stored.kind in "OT")):
        return
    if new != stored:
        raise InvalidTypeError(f"variable {name!r}: the stored array has dtype {stored} but "
                               f"the values to write have dtype {new}")


def match_dims(name: Hashable, new: xr.Variable, stored_dim_names: tuple[str, ...],
               stored_shape: tuple[int, ...], region: Mapping[Hashable, slice],
               append_dim: Hashable | None) -> xr.Variable:
    """The new variable in the stored dimension order, checked to fit the stored array.

    Parameters
    ----------
    name : hashable
        The variable's name.
    new : xarray.Variable
        The (encoded) values to write.
    stored_dim_names : tuple of str
        The stored array's dimensions.
    stored_shape : tuple of int
        The stored array's shape.
    region : mapping
        The region written, per dimension (whole dimensions where absent).
    append_dim : hashable or None
        The dimension appended to, whose size may differ.

    Returns
    -------
    xarray.Variable
        ``new``, transposed to the stored order where needed.

    Raises
    ------
    ShapeMismatchError
        If the dimensions differ, or a size differs outside ``append_dim``.

    Examples
    --------
    >>> v = xr.Variable(("x", "t"), np.zeros((2, 3)))
    >>> match_dims("v", v, ("t", "x"), (5, 2), {}, "t").dims
    ('t', 'x')
    """
    if tuple(new.dims) != stored_dim_names:
        if set(new.dims) != set(stored_dim_names):
            raise ShapeMismatchError(
                f"variable {name!r} is stored with dimensions {stored_dim_names} but has "
                f"dimensions {tuple(new.dims)}; to_zarr cannot change a variable's dimensions")
        new = new.transpose(*stored_dim_names)
    expected = {}
    for dim, size in zip(stored_dim_names, stored_shape, strict=True):
        if dim in region:
            start, stop, _ = region[dim].indices(size)
            size = max(stop - start, 0)
        if dim != append_dim:
            expected[dim] = size
    got = {d: s for d, s in new.sizes.items() if d != append_dim}
    if got != expected:
        raise ShapeMismatchError(
            f"variable {name!r} is stored with sizes {expected} but the values have sizes "
            f"{got}; only append_dim ({append_dim!r}) may change, and region= writes a part")
    return new


def auto_region(group: Any, ds: xr.Dataset, dim: Hashable) -> slice:
    """The slice of dimension ``dim`` that ``ds`` covers in the stored dataset, found by
    looking up ``ds``'s coordinate values in the stored (decoded) coordinate.

    Parameters
    ----------
    group : zarr3c.Group
        The group holding the stored dataset.
    ds : xarray.Dataset
        The dataset to write.
    dim : hashable
        The dimension.

    Returns
    -------
    slice
        ``slice(start, stop)``; the whole of ``ds``'s size from 0 for a dimension without
        a coordinate.

    Raises
    ------
    IndexingError
        If a coordinate value is not stored, or the values are not contiguous and in order.
    MetadataError
        If the stored coordinate does not decode.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group(zarr3c.MemoryStore())
    >>> a = g.create_array("x", data=np.array([10, 20, 30, 40]), dimension_names=["x"])
    >>> auto_region(g, xr.Dataset(coords={"x": [20, 30]}), "x")
    slice(1, 3, None)
    """
    import pandas as pd
    from xarray import conventions

    if dim not in ds.variables:
        return slice(0, ds.sizes[dim])
    if str(dim) not in group.array_keys():
        raise IndexingError(f"region='auto': the stored dataset has no coordinate {dim!r} "
                            "to find the region of the new values in")
    array = group[str(dim)]
    raw = stored_variable(dim, array)
    raw = xr.Variable(raw.dims, array[...], raw.attrs, raw.encoding)
    try:
        decoded = conventions.decode_cf_variable(str(dim), raw)
    except (ValueError, TypeError, OverflowError) as exc:
        raise MetadataError(f"coordinate {dim!r}: the stored values do not decode: "
                            f"{exc}") from exc
    positions = pd.Index(np.asarray(decoded.values)).get_indexer(np.asarray(ds[dim].values))
    if (positions == -1).any():
        raise IndexingError(f"region='auto': not every value of coordinate {dim!r} is in the "
                            "stored coordinate; a region write cannot add coordinates")
    if len(positions) and (np.diff(positions) != 1).any():
        raise IndexingError(f"region='auto': the values of coordinate {dim!r} are not one "
                            "contiguous, ordered run of the stored coordinate")
    if not len(positions):
        raise InvalidArgumentError(f"region='auto': coordinate {dim!r} is empty")
    return slice(int(positions[0]), int(positions[-1]) + 1)
