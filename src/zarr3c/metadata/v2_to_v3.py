"""The Zarr v3 form of a Zarr v2 array's fixed-length strings, bytes, times and structs.

A Zarr v2 ``dtype`` (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#data-type-encoding)
names a numpy dtype with its byte order; Zarr v3 names the same elements with an extension data
type of https://github.com/zarr-developers/zarr-extensions/tree/main/data-types, always
native-endian, and keeps the byte order in the ``bytes`` codec's ``endian``.  The v3 data type is
the one zarr-python 3.4 creates for the same numpy dtype:

=============================== ===========================================================
v2 ``dtype``                    v3 ``data_type``
=============================== ===========================================================
``"<U7"`` / ``">U7"``           ``fixed_length_utf32`` (``length_bytes`` 28)
``"|S7"``                       ``null_terminated_bytes`` (``length_bytes`` 7)
``"|V7"``                       ``raw_bytes`` (``length_bytes`` 7)
``"<M8[10s]"``, ``"<m8[ns]"``   ``numpy.datetime64`` / ``numpy.timedelta64`` (unit, scale)
``[["a", "<i4"], ...]``         ``struct`` (its fields' v3 types, nested structs included)
=============================== ===========================================================

The fill value keeps its bits (v2's base64, string or count of units becomes the extension's
own JSON form when the v3 document is written), converted to native byte order.  The ``bytes``
codec takes the byte order the v2 chunks are stored in (none for ``S``, ``V`` and structs of
one-byte fields), so that the stored chunks are the v3 array's chunks as they are.  A struct
whose fields are stored in both byte orders has no such codec: its chunks are re-encoded
(little-endian, zarr-python's default).
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import numpy as np

from zarr3c.errors import MetadataError
from zarr3c.metadata.data_types import DataType, data_type_from_numpy
from zarr3c.metadata.v2 import V2ArrayMetadata, V2DataType

__all__ = ["V3Form", "stored_byte_orders", "v3_form"]

_NATIVE = sys.byteorder


class V3Form(NamedTuple):
    """A Zarr v2 array's elements as a Zarr v3 array holds them."""

    #: the v3 data type (native-endian)
    data_type: DataType
    #: the fill value's bits in the v3 data type (native byte order)
    fill_value: bytes
    #: the v3 codec chain, its ``bytes`` codec in the stored byte order
    codecs: tuple[dict[str, Any], ...]
    #: whether the v2 array's stored chunks are this chain's chunks, byte for byte
    chunks_as_stored: bool


def stored_byte_orders(dtype: np.dtype) -> set[str]:
    """The byte orders (``"little"``, ``"big"``) of the elements of ``dtype`` whose bytes
    have an order: every field of a structured dtype, nested ones included; none for ``S``,
    raw ``V`` and one-byte types.

    Parameters
    ----------
    dtype : numpy.dtype
        A stored dtype, byte order as written.

    Returns
    -------
    set of str
        Empty where byte order does not matter.

    Raises
    ------
    None

    Examples
    --------
    >>> import numpy as np
    >>> sorted(stored_byte_orders(np.dtype([("a", ">i4"), ("b", "u1"), ("c", "<U2")])))
    ['big', 'little']
    >>> stored_byte_orders(np.dtype("S4"))
    set()
    """
    if dtype.fields is not None:
        orders: set[str] = set()
        for name in dtype.names or ():
            orders |= stored_byte_orders(dtype.fields[name][0])
        return orders
    if dtype.subdtype is not None:
        return stored_byte_orders(dtype.subdtype[0])
    if dtype.itemsize <= 1 or dtype.kind in "SV":
        return set()
    order = dtype.byteorder
    if order == "|":
        return set()
    if order == "=":
        return {_NATIVE}
    return {"little" if order == "<" else "big"}


def _leading_serializer(codecs: tuple[dict[str, Any], ...]) -> int | None:
    """The index of the ``bytes`` codec where only a transpose comes before it (the codec
    then serializes the elements as held in memory), else None."""
    for i, codec in enumerate(codecs):
        if codec["name"] == "bytes":
            return i
        if codec["name"] != "transpose":
            return None
    return None


def v3_form(md: V2ArrayMetadata) -> V3Form:
    """The Zarr v3 data type, fill value and codec chain of the Zarr v2 array ``md``.

    Parameters
    ----------
    md : V2ArrayMetadata
        A Zarr v2 array's metadata.

    Returns
    -------
    V3Form
        For numbers and the variable-length types (already v3 types): the array's own data
        type, fill value and chain.

    Raises
    ------
    MetadataError
        If the stored dtype has no v3 data type (a structured dtype with subarray fields),
        on ``dtype``.

    Examples
    --------
    >>> from zarr3c.metadata.v2 import V2ArrayMetadata
    >>> md = V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [4], "chunks": [2],
    ...     "dtype": ">U2", "compressor": None, "fill_value": "ab", "order": "C",
    ...     "filters": None})
    >>> form = v3_form(md)
    >>> form.data_type.to_json(), form.data_type.fill_value_to_json(form.fill_value)
    ({'name': 'fixed_length_utf32', 'configuration': {'length_bytes': 8}}, 'ab')
    >>> form.codecs, form.chunks_as_stored
    (({'name': 'bytes', 'configuration': {'endian': 'big'}},), True)
    """
    codecs = tuple(dict(c) for c in md.codecs)
    data_type = md.data_type
    if not isinstance(data_type, V2DataType):
        return V3Form(data_type, md.fill_value, codecs, True)
    stored = md.stored_dtype
    try:
        v3 = data_type_from_numpy(stored)
    except MetadataError as exc:
        raise MetadataError(f"data type {md.dtype_json!r} has no Zarr v3 data type: {exc}",
                            path="dtype") from None
    memory = data_type.dtype
    fill = np.frombuffer(md.fill_value, dtype=memory).astype(v3.dtype).tobytes()
    if memory.kind in "Mm":
        # Times are held native-endian already; their bytes codec has the stored order.
        return V3Form(v3, fill, codecs, True)
    at = _leading_serializer(codecs)
    if at is None:
        # A filter takes the elements before serialization: it gets them native-endian.
        return V3Form(v3, fill, codecs, memory == v3.dtype)
    orders = sorted(stored_byte_orders(stored))
    serializer: dict[str, Any] = {"name": "bytes"}
    if orders:
        endian = orders[0] if len(orders) == 1 else "little"
        serializer["configuration"] = {"endian": endian}
    return V3Form(v3, fill, (*codecs[:at], serializer, *codecs[at + 1:]), len(orders) <= 1)
