"""The ``_FillValue`` of a variable, as xarray's Zarr encoding spells it.

xarray keeps CF's ``_FillValue`` apart from Zarr's ``fill_value``
(<https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html>):

- In Zarr v3 (and in v2 where asked), ``_FillValue`` is a user attribute that
  xarray's ``to_zarr`` writes in a JSON-safe form: floats as the base64 of their
  little-endian IEEE 754 double, complex numbers as a list of two such strings, byte
  strings as base64, integers, booleans and text as themselves.  :func:`decode_fill_value`
  turns it back into a Python value; one that cannot be decoded is a
  :class:`~zarr3c.errors.MetadataError` naming the variable.
- In Zarr v2 xarray writes no such attribute: the array's ``fill_value`` doubles as the
  ``_FillValue`` (``null`` meaning none); :func:`fill_value_as_mask` gives it as the numpy
  scalar xarray's own zarr engine reports.

>>> import numpy as np
>>> decode_fill_value("AAAAAAAA+H8=", np.dtype("float32"), variable="t")
nan
>>> decode_fill_value(-999, np.dtype("int16"), variable="t")
-999
"""

from __future__ import annotations

import base64
import binascii
import math
import reprlib
import struct
from typing import Any

import numpy as np

from zarr3c.errors import MetadataError

__all__ = ["decode_fill_value", "fill_value_as_mask"]

#: The JSON spellings of the special floats, as the Zarr v3 core spec writes fill values
#: (https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html#fill-value).
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _refuse(value: Any, dtype: np.dtype, variable: str, expected: str,
            source: str | None) -> MetadataError:
    return MetadataError(
        f"variable {variable!r}: cannot decode the _FillValue {reprlib.repr(value)} for data type "
        f"{dtype}: expected {expected}",
        path="attributes._FillValue", source=source,
    )


def _b64(value: Any, max_bytes: int | None = None) -> bytes | None:
    """The bytes a base64 string encodes, or None where it is no base64 (or, given
    ``max_bytes``, encodes more: a longer string is refused before it is decoded)."""
    if not isinstance(value, str | bytes):
        return None
    if max_bytes is not None and len(value) > 4 * ((max_bytes + 2) // 3):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_float(value: Any) -> float | None:
    # xarray writes the base64 of a little-endian double; a plain JSON number, or the
    # spec's words for the special values, written by other tools, reads as itself.
    raw = _b64(value, max_bytes=8)
    if raw is not None and len(raw) == 8:
        return float(struct.unpack("<d", raw)[0])
    if isinstance(value, str) and value in _FLOAT_WORDS:
        return _FLOAT_WORDS[value]
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return float(value)
    return None


def decode_fill_value(value: Any, dtype: np.dtype, *, variable: str,
                      source: str | None = None) -> Any:
    """The ``_FillValue`` attribute ``value`` of a variable stored as ``dtype``, decoded.

    Parameters
    ----------
    value : JSON value
        The attribute as stored.
    dtype : numpy.dtype
        The array's data type (its stored type, before CF decoding).
    variable : str
        The variable's name, for the error message.
    source : str or None, default None
        The store key of the document holding the attribute, for the error message.

    Returns
    -------
    float, int, bool, complex, str or bytes
        The fill value: a float for floating-point types, an int for integers, a bool,
        a complex, text for string types and bytes for byte strings.

    Raises
    ------
    MetadataError
        If ``value`` is not a valid encoding for ``dtype`` (a float that is neither the
        base64 of a double nor a number, an integer that is not integral, ...), or
        ``dtype`` takes no ``_FillValue``; the message names the variable.

    Examples
    --------
    >>> import numpy as np
    >>> decode_fill_value("AAAAAAAA8D8=", np.dtype("float64"), variable="x")
    1.0
    >>> decode_fill_value(["AAAAAAAA8D8=", "AAAAAAAAAEA="], np.dtype("complex64"),
    ...                   variable="x")
    (1+2j)
    >>> decode_fill_value("bm9uZQ==", np.dtype("S4"), variable="x")
    b'none'
    >>> decode_fill_value("oops", np.dtype("float32"), variable="x")
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: attributes._FillValue: variable 'x': cannot decode the \
_FillValue 'oops' for data type float32: expected the base64 of a little-endian double \
or a number
    """
    kind = dtype.kind
    if kind == "f":
        result = _decode_float(value)
        if result is None:
            raise _refuse(value, dtype, variable,
                          "the base64 of a little-endian double or a number", source)
        return result
    if kind == "c":
        parts = ([_decode_float(v) for v in value] if isinstance(value, list | tuple)
                 and len(value) == 2 else [None])
        if any(p is None for p in parts):
            raise _refuse(value, dtype, variable,
                          "a list of two base64-encoded doubles (real, imaginary)", source)
        return complex(parts[0], parts[1])  # type: ignore[arg-type]
    if kind == "b":
        if not isinstance(value, bool | int | np.integer):
            raise _refuse(value, dtype, variable, "a boolean", source)
        return bool(value)
    if kind in "iu":
        if isinstance(value, bool) or not isinstance(
                value, int | float | np.integer | np.floating) or not float(value).is_integer():
            raise _refuse(value, dtype, variable, "an integer", source)
        return int(value)
    if kind == "S":
        raw = _b64(value, max_bytes=dtype.itemsize or None)
        if raw is None:
            raise _refuse(value, dtype, variable, "a base64 string", source)
        return raw
    if kind in "UTO":
        if not isinstance(value, str):
            raise _refuse(value, dtype, variable, "a string", source)
        return value
    raise _refuse(value, dtype, variable, "no _FillValue: xarray writes none for this type",
                  source)


def fill_value_as_mask(array: Any) -> Any:
    """A Zarr array's ``fill_value`` as the ``_FillValue`` xarray gives it in Zarr v2.

    Parameters
    ----------
    array : zarr3c.Array
        The array.

    Returns
    -------
    numpy scalar, str or None
        None where the document's ``fill_value`` is ``null`` (a v2 array written without
        one); otherwise the fill value as a scalar of the array's type (text as ``str``
        for variable-length strings).

    Raises
    ------
    None
        The fill value was validated when the array was opened.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="int16", fill_value=-1,
    ...                         zarr_format=2)
    >>> fill_value_as_mask(a)
    np.int16(-1)
    """
    if getattr(array.metadata, "fill_value_json", 0) is None:
        return None
    value = array.fill_value
    dtype = array.dtype
    if dtype.kind in "biufcSUmM":
        return np.asarray(value, dtype=dtype)[()]
    return value
