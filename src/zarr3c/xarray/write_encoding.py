"""How one xarray variable becomes one Zarr array: CF encoding and the array's options.

The CF encoding is xarray's own (``xarray.backends.zarr.encode_zarr_variable``: times and
timedeltas to numbers with ``units``/``calendar``, ``_FillValue`` masking, ``scale_factor``
and ``add_offset`` packing, ``dtype``, strings), so the values stored are the ones
``Dataset.to_zarr`` stores.  What this module adds is the part xarray hands to zarr-python,
spelt for zarr3c, as xarray's zarr backend does it
(https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html):

- the dimension names: ``dimension_names`` in a Zarr v3 ``zarr.json``, the
  ``_ARRAY_DIMENSIONS`` attribute in Zarr v2;
- the fill value: in Zarr v2 the CF ``_FillValue`` *is* the array's ``fill_value`` (and no
  ``_FillValue`` means ``"fill_value": null``, which readers take as "nothing is masked"); in
  Zarr v3 the array's ``fill_value`` comes from ``encoding["fill_value"]`` (NaN for floats
  where none is given) and ``_FillValue`` stays an attribute, encoded as xarray encodes it
  (base64 of the little-endian float64 for floats);
- the chunk shape: ``encoding["chunks"]``, else the dask chunks (uniform but a smaller last
  one), else zarr3c's automatic chunks; ``encoding["shards"]``;
- the codecs and other array options the encoding names (``compressors``, ``filters``,
  ``serializer``, ``chunk_key_encoding``, ``write_empty_chunks``).

>>> import numpy as np, xarray as xr
>>> v = xr.Variable(("x",), np.array([1.0, np.nan]), {"units": "m"})
>>> plan = array_options("h", encode_variable("h", v, 3), zarr_format=3, checked=False)
>>> plan.dimension_names, plan.fill_value, plan.attributes
(('x',), nan, {'units': 'm', '_FillValue': 'AAAAAAAA+H8='})
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    MetadataError,
    ValueConversionError,
)

__all__ = [
    "DIMENSION_KEY",
    "ArrayOptions",
    "array_options",
    "chunk_shape",
    "encode_attributes",
    "encode_variable",
]

#: The attribute that names a Zarr v2 array's dimensions, as xarray writes it.
DIMENSION_KEY = "_ARRAY_DIMENSIONS"

#: Encoding keys that describe the Zarr array (the CF keys are used up by the coders).
_ZARR_KEYS = frozenset({"chunks", "shards", "compressors", "compressor", "filters",
                        "serializer", "cache_metadata", "write_empty_chunks",
                        "chunk_key_encoding"})

#: The codecs of variable-length strings and bytes, in Zarr v2 and v3.
_OBJECT_CODECS = frozenset({"vlen-utf8", "vlen-bytes"})

#: Encoding keys xarray's readers set that say where data came from, not how to store it.
_SAFE_TO_DROP = frozenset({"source", "original_shape", "preferred_chunks"})


@dataclass(frozen=True, slots=True)
class ArrayOptions:
    """The arguments of :meth:`zarr3c.Group.create_array` for one encoded variable.

    Parameters
    ----------
    shape : tuple of int
        The array's shape.
    dtype : numpy dtype or type
        Its data type (``str`` for variable-length strings).
    fill_value : scalar or None
        The array's ``fill_value``.  None: in Zarr v2 ``"fill_value": null`` (no
        ``_FillValue``), in Zarr v3 the data type's default.
    attributes : dict
        The JSON attributes, dimension names and encoded ``_FillValue`` included.
    dimension_names : tuple of str or None
        Zarr v3's ``dimension_names`` (None in Zarr v2).
    create_kwargs : dict
        The other options: ``chunks``, ``shards``, ``compressors``, ``filters``,
        ``serializer``, ``chunk_key_encoding``, ``write_empty_chunks``.

    Raises
    ------
    None

    Examples
    --------
    >>> ArrayOptions((2,), np.dtype("int8"), None, {}, None).create_kwargs
    {}
    """

    shape: tuple[int, ...]
    dtype: Any
    fill_value: Any
    attributes: dict[str, Any]
    dimension_names: tuple[str, ...] | None
    create_kwargs: dict[str, Any] = field(default_factory=dict)


def encode_variable(name: Hashable, variable: xr.Variable, zarr_format: int) -> xr.Variable:
    """CF-encode a variable as xarray's zarr backend does before storing it.

    Parameters
    ----------
    name : hashable
        The variable's name (named in errors).
    variable : xarray.Variable
        The decoded variable, its ``encoding`` saying how to encode it.
    zarr_format : {2, 3}
        The format written (Zarr v3 keeps numpy's variable-width strings as they are).

    Returns
    -------
    xarray.Variable
        The encoded variable: the values to store, with the CF attributes.

    Raises
    ------
    ValueConversionError
        If xarray's coders refuse the variable (the message names it and says why).

    Examples
    --------
    >>> import pandas as pd
    >>> v = xr.Variable(("t",), pd.date_range("2000-01-01", periods=2))
    >>> e = encode_variable("time", v, 3)
    >>> e.dtype, e.attrs["units"]
    (dtype('int64'), 'days since 2000-01-01 00:00:00')
    """
    from xarray.backends.zarr import encode_zarr_variable

    try:
        return encode_zarr_variable(variable, name=name,
                                    zarr_format=2 if zarr_format == 2 else 3)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueConversionError(f"variable {name!r}: xarray's CF encoding refused it: "
                                   f"{exc}") from exc


def encode_attributes(attrs: Mapping[Any, Any], owner: str) -> dict[str, Any]:
    """Attributes as JSON values: numpy arrays become lists and numpy scalars Python ones.

    Parameters
    ----------
    attrs : mapping
        The attributes.
    owner : str
        What they belong to (``"variable 'x'"``, ``"the dataset"``), named in errors.

    Returns
    -------
    dict
        The encoded attributes, in the same order.

    Raises
    ------
    InvalidTypeError
        If a name is not a non-empty string.
    MetadataError
        If a value holds NaN or infinity: zarr3c writes strict JSON, which has neither
        (zarr-python writes the non-standard ``NaN`` literal).

    Examples
    --------
    >>> encode_attributes({"a": np.arange(2), "b": np.float32(1.5)}, "the dataset")
    {'a': [0, 1], 'b': 1.5}
    """
    from xarray.backends.zarr import encode_zarr_attr_value

    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if not isinstance(key, str) or not key:
            raise InvalidTypeError(f"{owner}: attribute name {key!r} is not a non-empty "
                                   "string")
        out[key] = encode_zarr_attr_value(value)
        if not _finite(out[key]):
            raise MetadataError(f"{owner}: attribute {key!r} holds NaN or infinity "
                                f"({value!r}), which JSON cannot hold", path=key)
    return out


def _finite(value: Any) -> bool:
    """Whether a JSON value holds no NaN or infinite float."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def chunk_shape(name: Hashable, encoded: Any, dask_chunks: Any, ndim: int
                ) -> tuple[int, ...] | str:
    """The chunk shape of a new array: as xarray chooses it for zarr-python.

    ``encoding["chunks"]`` wins (an int is the same length in every dimension; one of the
    wrong length is ignored); else the dask chunks, which must then be uniform but a smaller
    last one (Zarr's grid is regular); else ``"auto"``.

    Parameters
    ----------
    name : hashable
        The variable's name (named in errors).
    encoded : int, sequence of int or None
        ``encoding["chunks"]``.
    dask_chunks : tuple of tuple of int or None
        The variable's dask chunks (None for numpy data).
    ndim : int
        The number of dimensions.

    Returns
    -------
    tuple of int or "auto"
        The chunk shape.

    Raises
    ------
    InvalidArgumentError
        If the dask chunks cannot be one regular grid, or ``encoding["chunks"]`` holds
        something else than ints.

    Examples
    --------
    >>> chunk_shape("v", None, ((4, 4, 2), (3,)), 2)
    (4, 3)
    >>> chunk_shape("v", 5, None, 2)
    (5, 5)
    >>> chunk_shape("v", None, None, 1)
    'auto'
    """
    if encoded is not None and not (isinstance(encoded, tuple | list) and not encoded):
        wanted = (encoded,) * ndim if isinstance(encoded, int | np.integer) else tuple(encoded)
        if len(wanted) == ndim:
            if not all(isinstance(c, int | np.integer) and not isinstance(c, bool)
                       for c in wanted):
                raise InvalidArgumentError(
                    f"variable {name!r}: encoding['chunks']={encoded!r} must be an int or a "
                    "tuple of ints (one regular chunk grid)")
            return tuple(int(c) for c in wanted)
    if not dask_chunks:
        return "auto"
    for dim, sizes in enumerate(dask_chunks):
        if len(set(sizes[:-1])) > 1 or (len(sizes) > 1 and sizes[-1] > sizes[0]):
            raise InvalidArgumentError(
                f"variable {name!r}: its dask chunks {tuple(dask_chunks)!r} are not uniform "
                f"(dimension {dim}): Zarr chunks are all equal but a smaller last one; "
                "rechunk with .chunk() or give encoding['chunks']")
    return tuple(int(sizes[0]) if sizes and sizes[0] else 1 for sizes in dask_chunks)


def _is_object_codec(codec: Any) -> bool:
    """Whether a codec (object, dict or name) is one of the variable-length codecs that
    the string and bytes dtypes choose by themselves."""
    if isinstance(codec, str):
        name: Any = codec
    elif isinstance(codec, Mapping):
        name = codec.get("id", codec.get("name"))
    else:
        name = getattr(codec, "codec_id", None)
        if name is None and hasattr(codec, "to_dict"):
            name = codec.to_dict().get("name")
    return isinstance(name, str) and name.removeprefix("numcodecs.") in _OBJECT_CODECS


def _fill_attribute(name: Hashable, value: Any, dtype: np.dtype) -> Any:
    """A Zarr v3 ``_FillValue`` attribute as xarray's ``FillValueCoder`` encodes it."""
    from xarray.backends.zarr import FillValueCoder

    try:
        return FillValueCoder.encode(value, dtype)
    except (ValueError, TypeError) as exc:
        raise ValueConversionError(f"variable {name!r}: _FillValue {value!r} does not "
                                   f"encode for dtype {dtype}: {exc}") from exc


def _create_dtype(dtype: np.dtype) -> Any:
    """The dtype zarr3c creates the array with: ``str`` for variable-length strings."""
    from xarray.coding.strings import check_vlen_dtype

    if dtype.kind == "T" or check_vlen_dtype(dtype) is str:
        return str
    return dtype


def array_options(name: Hashable, variable: xr.Variable, *, zarr_format: int,
                  checked: bool) -> ArrayOptions:
    """The options of the array that stores an encoded variable.

    Parameters
    ----------
    name : hashable
        The variable's name.
    variable : xarray.Variable
        The CF-encoded variable (from :func:`encode_variable`).
    zarr_format : {2, 3}
        The format written.
    checked : bool
        Whether the encoding was given by the caller (``to_zarr(encoding=...)``): unknown
        keys are then refused, as xarray does; otherwise they are dropped.

    Returns
    -------
    ArrayOptions
        What to create the array with.

    Raises
    ------
    InvalidArgumentError
        If the encoding holds keys the zarr writer does not take (when ``checked``), a
        ``_FillValue`` (it belongs in the attributes), or chunks it cannot use.
    ValueConversionError
        If ``_FillValue`` does not encode for the variable's dtype.

    Examples
    --------
    >>> v = xr.Variable(("y", "x"), np.zeros((4, 6), "int16"), encoding={"chunks": (2, 3)})
    >>> o = array_options("v", v, zarr_format=2, checked=True)
    >>> o.fill_value, o.attributes, o.create_kwargs["chunks"]
    (None, {'_ARRAY_DIMENSIONS': ['y', 'x']}, (2, 3))
    """
    encoding = {k: v for k, v in variable.encoding.items() if k not in _SAFE_TO_DROP}
    attrs = dict(variable.attrs)
    if encoding.get("_FillValue") is not None:
        raise InvalidArgumentError(f"variable {name!r}: Zarr takes no _FillValue in the "
                                   "encoding once the variable is encoded")
    encoding.pop("_FillValue", None)
    allowed = _ZARR_KEYS | ({"fill_value"} if zarr_format == 3 else set())
    unknown = sorted(str(k) for k in encoding if k not in allowed)
    if unknown and checked:
        hint = (" (use _FillValue to set a Zarr v2 array's fill_value)"
                if "fill_value" in unknown else "")
        raise InvalidArgumentError(f"variable {name!r}: unexpected encoding parameters for "
                                   f"the zarr writer: {unknown}{hint}")
    dtype = variable.dtype
    if zarr_format == 2:
        fill = attrs.pop("_FillValue", None)  # (None: "fill_value": null)
    else:
        fill = encoding.get("fill_value")
        if fill is None and dtype.kind == "f":
            fill = math.nan  # xarray's default for floats, where zarr's is 0
        if "_FillValue" in attrs:
            fv = attrs.pop("_FillValue")
            if fv is not None:
                attrs["_FillValue"] = _fill_attribute(name, fv, dtype)
    attributes = encode_attributes(attrs, f"variable {name!r}")
    dims = tuple(str(d) for d in variable.dims)
    if zarr_format == 2:
        attributes[DIMENSION_KEY] = list(dims)

    kwargs: dict[str, Any] = {
        "chunks": chunk_shape(name, encoding.get("chunks"), variable.chunks, variable.ndim),
    }
    shards = encoding.get("shards")
    if isinstance(shards, int | np.integer):
        shards = (int(shards),) * variable.ndim
    if shards is not None:
        kwargs["shards"] = tuple(shards)
    if "compressors" in encoding:
        kwargs["compressors"] = encoding["compressors"]
    elif "compressor" in encoding:  # Zarr v2's single compressor, as zarr-python 2 took it
        c = encoding["compressor"]
        kwargs["compressors"] = None if c is None else [c]
    # The string codec follows from the dtype (vlen-utf8 for str); the one a dataset opened
    # by zarr-python carries in its encoding (a v2 filter, a v3 serializer) is left out.
    filters = encoding.get("filters")
    if filters is not None:
        kwargs["filters"] = [f for f in filters if not _is_object_codec(f)]
    if encoding.get("serializer") is not None and not _is_object_codec(encoding["serializer"]):
        kwargs["serializer"] = encoding["serializer"]
    for key in ("chunk_key_encoding", "write_empty_chunks"):
        if encoding.get(key) is not None:
            kwargs[key] = encoding[key]
    return ArrayOptions(
        shape=tuple(variable.shape), dtype=_create_dtype(dtype),
        fill_value=fill, attributes=attributes,
        dimension_names=dims if zarr_format == 3 else None, create_kwargs=kwargs,
    )
