"""One Zarr array as the still-encoded xarray ``Variable`` a backend hands to xarray's CF
decoding: its dimension names, its attributes, its lazily indexed data and its encoding.

Dimension names follow xarray's Zarr encoding
(<https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html>): Zarr v3 arrays
carry them as ``dimension_names``; Zarr v2 arrays as the attribute ``_ARRAY_DIMENSIONS``
(hidden from the variable's attributes), or, for arrays NCZarr wrote, as the ``dimrefs``
of the ``.zarray`` field ``_NCZARR_ARRAY`` (NCZarr's ``_nc*`` attributes hidden too).  An
array without them is refused with :class:`~zarr3c.errors.MissingDimensionsError`, as
xarray's zarr engine refuses it (a ``KeyError``), naming the variable.
"""

from __future__ import annotations

import posixpath
import reprlib
from typing import Any

import numpy as np
from xarray import Variable
from xarray.coding.strings import create_vlen_dtype
from xarray.core import indexing

from zarr3c.errors import MissingDimensionsError
from zarr3c.xarray.backend_array import Zarr3cBackendArray
from zarr3c.xarray.encoding import storage_encoding
from zarr3c.xarray.fill_values import decode_fill_value, fill_value_as_mask

__all__ = ["DIMENSION_KEY", "array_dimensions", "open_variable"]

#: The attribute holding a Zarr v2 array's dimension names.
DIMENSION_KEY = "_ARRAY_DIMENSIONS"


def _document_key(array: Any) -> str:
    """The store key of the document naming the array's dimensions, for messages."""
    name = "zarr.json" if array.zarr_format == 3 else ".zattrs"
    return posixpath.join(array.path, name)


def _hidden(name: str) -> bool:
    # NCZarr's bookkeeping attributes, which xarray's zarr engine does not show either
    return name == DIMENSION_KEY or name.lower().startswith("_nc")


def array_dimensions(array: Any, variable: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The dimension names of ``array`` and the attributes it shows to xarray.

    Parameters
    ----------
    array : zarr3c.Array
        The array.
    variable : str
        Its variable name, for the error message.

    Returns
    -------
    dims : tuple of str
        One name per axis.
    attrs : dict
        The user attributes, less those that encode dimensions (Zarr v2).

    Raises
    ------
    MissingDimensionsError
        If the array names no dimensions (no ``dimension_names`` in Zarr v3, no
        ``_ARRAY_DIMENSIONS`` attribute or NCZarr ``dimrefs`` in Zarr v2) or names a
        different number than it has axes; a ``KeyError`` too, as xarray raises.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2, 3), dtype="int8",
    ...                         dimension_names=("y", "x"), attributes={"units": "m"})
    >>> array_dimensions(a, "v")
    (('y', 'x'), {'units': 'm'})
    >>> array_dimensions(zarr3c.create_array("memory://", shape=(2,), dtype="int8"), "v")
    Traceback (most recent call last):
    ...
    zarr3c.errors.MissingDimensionsError: zarr.json: dimension_names: variable 'v': ...
    """
    attrs = dict(array.attrs)
    names = getattr(array.metadata, "dimension_names", None)
    if array.zarr_format == 3 or (array.zarr_format != 2 and names is not None):
        dims = tuple(names or ())
        if len(dims) != array.ndim or any(d is None for d in dims):
            raise MissingDimensionsError(
                f"variable {variable!r}: the array has no dimension_names for its "
                f"{array.ndim} axes (got {reprlib.repr(names)}), which xarray needs to name the "
                "variable's dimensions", path="dimension_names", source=_document_key(array))
        return dims, attrs
    found = attrs.get(DIMENSION_KEY)
    if found is None:
        nczarr = getattr(array.metadata, "extra_fields", {}).get("_NCZARR_ARRAY")
        refs = nczarr.get("dimrefs") if isinstance(nczarr, dict) else None
        if isinstance(refs, list):
            found = [posixpath.basename(str(r)) for r in refs]
    if (not isinstance(found, list | tuple) or len(found) != array.ndim
            or not all(isinstance(d, str) for d in found)):
        what = "no" if found is None else f"an invalid ({reprlib.repr(found)})"
        raise MissingDimensionsError(
            f"variable {variable!r}: the array has {what} attribute {DIMENSION_KEY!r} for its "
            f"{array.ndim} axes, which xarray needs to name the variable's dimensions",
            path=f"attributes.{DIMENSION_KEY}", source=_document_key(array))
    return tuple(found), {k: v for k, v in attrs.items() if not _hidden(k)}


def _backend_dtype(array: Any) -> np.dtype:
    """The dtype xarray sees: variable-length text read as objects keeps xarray's marker of
    a vlen ``str`` type, so that its string coders treat it as text."""
    dtype = array.dtype
    if dtype.kind == "O" and getattr(array.data_type, "name", None) == "string":
        return create_vlen_dtype(str)
    return dtype  # type: ignore[no-any-return]


def open_variable(array: Any, name: str, *, zarr_fill_value_as_mask: bool) -> Variable:
    """The still-encoded variable stored in ``array``, with lazily indexed data.

    Parameters
    ----------
    array : zarr3c.Array
        The array.
    name : str
        The variable's name.
    zarr_fill_value_as_mask : bool
        True: the array's ``fill_value`` is the variable's ``_FillValue`` (what xarray does
        for Zarr v2).  False: the ``_FillValue`` attribute is, decoded from xarray's
        encoding, and the ``fill_value`` goes to ``encoding["fill_value"]`` for Zarr v3.

    Returns
    -------
    xarray.Variable
        Dimensions, attributes and encoding as xarray's zarr engine sets them; reading
        its data reads only the chunks a selection touches.

    Raises
    ------
    MissingDimensionsError
        If the array names no dimensions (see :func:`array_dimensions`).
    MetadataError
        If its ``_FillValue`` attribute cannot be decoded; the message names the variable.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int16", chunks=(2,),
    ...                         dimension_names=("t",), attributes={"_FillValue": -1})
    >>> v = open_variable(a, "v", zarr_fill_value_as_mask=False)
    >>> v.dims, v.attrs, v.encoding["chunks"], v.encoding["fill_value"]
    (('t',), {'_FillValue': -1}, (2,), np.int16(0))
    """
    dims, attrs = array_dimensions(array, name)
    backend_array = Zarr3cBackendArray(array, dtype=_backend_dtype(array))
    encoding = storage_encoding(array, dims)
    if backend_array.dtype.kind == "T":
        encoding["dtype"] = backend_array.dtype
    if zarr_fill_value_as_mask:
        fill = fill_value_as_mask(array)
        if fill is not None:
            attrs["_FillValue"] = fill
    else:
        if array.zarr_format == 3:
            encoding["fill_value"] = array.fill_value
        if "_FillValue" in attrs:
            attrs["_FillValue"] = decode_fill_value(
                attrs["_FillValue"], array.dtype, variable=name, source=_document_key(array))
    return Variable(dims, indexing.LazilyIndexedArray(backend_array), attrs, encoding)
