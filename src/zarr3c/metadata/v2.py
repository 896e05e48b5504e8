"""Zarr v2 metadata documents: ``.zarray``, ``.zgroup`` and ``.zattrs``.

The format: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html.  An array is a
``.zarray`` document::

    {"zarr_format": 2, "shape": [10000, 1000], "chunks": [1000, 100], "dtype": "<f8",
     "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
     "fill_value": "NaN", "order": "C", "filters": null, "dimension_separator": "."}

with chunks at ``<path>/<i>.<j>`` (``<i>/<j>`` with ``"dimension_separator": "/"``; ``0`` for
a 0-d array); a group is ``{"zarr_format": 2}`` in ``.zgroup``; the user attributes of either
live in a separate ``.zattrs``.

:class:`V2ArrayMetadata` keeps the document as written and presents the read interface of the
final v3 :class:`~zarr3c.metadata.array.ArrayMetadata`, as the zarr-python 2 v3 layout does
(:mod:`zarr3c.metadata.zarr2v3`, whose codec mapping it shares): ``codecs`` is the equivalent
v3 chain (a reversing ``transpose`` for ``order: "F"``, the filters, ``bytes`` in the data's
byte order, the compressor as ``gzip``/``zstd``/``blosc`` where the configurations mean the
same, else ``numcodecs.<id>``).  Codec ids are read with or without a ``numcodecs.`` prefix.

Data types are numpy type strings (``"|b1"``, ``"<i4"``, ``">f8"``, ``"<c16"``, ``"<U7"``,
``"|S7"``, ``"|V8"``, ``"<M8[ns]"``, ``"<m8[s]"``) or lists of fields for structured types.
Numbers and times are held native-endian in memory (the ``bytes`` codec swaps them);
strings, raw bytes and structured types are held in their stored dtype, byte order included,
so their bytes are copied as they are.

Object arrays (``"dtype": "|O"``) are read and written by the object codec that zarr-python 2
puts first in ``filters`` (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#filters,
https://numcodecs.readthedocs.io/en/stable/other/vlen.html): ``vlen-utf8`` (strings, the v3
``string`` type), ``vlen-bytes`` (``variable_length_bytes``), ``vlen-array`` (1-d arrays of
the codec's dtype) and ``json2`` (JSON values); the last two, which no v3 data type holds, are
a :class:`V2ObjectType` (:mod:`zarr3c.codecs.object_codecs`).  ``pickle`` is refused: decoding
it runs code stored with the data; ``msgpack2`` and the old ``json`` and ``msgpack`` are not
read.  New string and bytes arrays (``dtype=str``, ``dtype=bytes``) are object arrays of
``vlen-utf8`` and ``vlen-bytes``, as zarr-python 3 creates them; zarr3c, like zarr-python 3,
creates none of the other object codecs.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from zarr3c import registry
from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
from zarr3c.errors import (
    MetadataError,
    UnknownExtensionError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.metadata.array import ArrayMetadataView, load_json_object, parse_attributes
from zarr3c.metadata.data_types import DataType, check_itemsize, data_type_from_numpy
from zarr3c.metadata.draft2022 import _shape
from zarr3c.metadata.vlen_types import STRING, VARIABLE_LENGTH_BYTES, VariableLengthType
from zarr3c.metadata.zarr2v3 import (
    _build_chain,
    _fill_value_json,
    check_same_chain,
    split_chain,
)

__all__ = [
    "ARRAY_KEY",
    "ATTRS_KEY",
    "GROUP_KEY",
    "CONSOLIDATED_KEY",
    "OBJECT_CODEC_IDS",
    "V2DataType",
    "V2ArrayMetadata",
    "V2ObjectType",
    "V2ConsolidatedMetadata",
    "V2GroupMetadata",
    "dump_v2_json",
    "parse_v2_dtype",
    "read_v2_node",
    "v2_data_type_from_numpy",
    "v2_node_from_documents",
]

#: the document names of a Zarr v2 node
ARRAY_KEY = ".zarray"
GROUP_KEY = ".zgroup"
ATTRS_KEY = ".zattrs"
#: consolidated metadata of a v2 hierarchy (zarr-python's convention, not the spec's)
CONSOLIDATED_KEY = ".zmetadata"

#: the numcodecs codecs that encode object arrays
OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2", "pickle",
                    "json", "msgpack")

_NUMERIC_KINDS = "biufc"
# The v3 extension data types whose elements are a Zarr v2 dtype's (see v2_to_v3.py).
_V3_EXTENSION_FAMILIES = ("time", "utf32", "null_terminated", "raw_bytes", "struct")
_OTHER_KINDS = "MmSUV"
# The .zarray fields zarr-python 2 and 3 write; others are kept and written back.
_ARRAY_FIELDS = ("shape", "chunks", "dtype", "fill_value", "order", "filters",
                 "dimension_separator", "compressor", "zarr_format")


def dump_v2_json(doc: Mapping[str, Any]) -> bytes:
    """A v2 document as zarr-python 3 writes it: indent 2, keys in the order given, ASCII.

    Parameters
    ----------
    doc : mapping
        The JSON document (no NaN or infinite floats: v2 spells those as strings).

    Returns
    -------
    bytes
        The encoded document.

    Raises
    ------
    MetadataError
        If ``doc`` holds a value JSON cannot encode (named by the message).

    Examples
    --------
    >>> dump_v2_json({"zarr_format": 2})
    b'{\\n  "zarr_format": 2\\n}'
    """
    try:
        return json.dumps(doc, indent=2, ensure_ascii=True, allow_nan=False).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"cannot be written as JSON: {exc}") from None


def _key(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


# -- data types ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class V2DataType(DataType):
    """A Zarr v2 data type beyond numbers: times, strings, raw bytes and structured types.

    ``name`` is the v2 type string (``"<U7"``, ``"|S4"``, ``"<M8[ns]"``, or the JSON text of a
    structured type's field list); ``dtype`` the numpy dtype held in memory.  Fill values
    take the spellings zarr-python 2 writes
    (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#fill-value-encoding): base64
    of the bytes for ``S``, ``V`` and structured types, the string itself for ``U``, the
    integer count of units for ``M``/``m``.

    Parameters
    ----------
    name : str
        The ``dtype`` as written.
    dtype : numpy.dtype
        The dtype of the elements in memory.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Examples
    --------
    >>> import numpy as np
    >>> dt = V2DataType("|S4", np.dtype("S4"))
    >>> dt.parse_fill_value("YWI="), dt.fill_value_to_json(b"ab\\x00\\x00")
    (b'ab\\x00\\x00', 'YWI=')
    """

    def parse_fill_value(self, value: Any, *, path: str = "fill_value",
                         source: str | None = None) -> bytes:
        """The fill value's bits from its v2 JSON form.

        Parameters
        ----------
        value : JSON value
            The ``fill_value`` as written (null: :meth:`default_fill_value`).
        path, source : str
            Where it came from, for messages.

        Returns
        -------
        bytes
            ``itemsize`` bytes, in the in-memory dtype.

        Raises
        ------
        MetadataError
            If ``value`` is not a fill value of this type.

        Examples
        --------
        >>> import numpy as np
        >>> V2DataType("<m8[s]", np.dtype("m8[s]")).parse_fill_value(3)
        b'\\x03\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
        """
        if value is None:
            return self.default_fill_value()
        kind = self.dtype.kind
        where = {"path": path, "source": source}
        if kind in "Mm":
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise MetadataError(f"must be an integer for data type {self.name}, got "
                                    f"{value!r}", **where)
            try:
                scalar = (np.array(value, dtype="i8").view(self.dtype) if isinstance(value, int)
                          else np.array(value, dtype=self.dtype))
            except (ValueError, OverflowError, TypeError):
                raise MetadataError(f"{value!r} is not a value of data type {self.name}",
                                    **where) from None
            return scalar.tobytes()
        if kind == "U":
            if not isinstance(value, str):
                raise MetadataError(f"must be a string for data type {self.name}, got "
                                    f"{value!r}", **where)
            if len(value) > self.dtype.itemsize // 4:
                raise MetadataError(f"{value!r} is longer than data type {self.name} holds",
                                    **where)
            return np.array(value, dtype=self.dtype).tobytes()
        # S, V, structured: base64 of the bytes; zarr-python 2 drops trailing zero bytes of S.
        if not isinstance(value, str):
            raise MetadataError(f"must be a base64 string for data type {self.name}, got "
                                f"{value!r}", **where)
        try:
            raw = base64.b64decode(value.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise MetadataError(f"is not valid base64: {value!r}", **where) from None
        size = self.dtype.itemsize
        if len(raw) > size or (len(raw) < size and kind != "S"):
            raise MetadataError(f"decodes to {len(raw)} bytes; data type {self.name} has "
                                f"{size}", **where)
        return raw.ljust(size, b"\0")

    def fill_value_to_json(self, raw: bytes) -> Any:
        """The v2 JSON form of the fill value with bits ``raw``.

        Parameters
        ----------
        raw : bytes
            ``itemsize`` bytes.

        Returns
        -------
        JSON value
            As zarr-python 2 writes it.

        Raises
        ------
        None

        Examples
        --------
        >>> import numpy as np
        >>> V2DataType("<U2", np.dtype("U2")).fill_value_to_json("ab".encode("utf-32-le"))
        'ab'
        """
        kind = self.dtype.kind
        if kind in "Mm":
            return int(np.frombuffer(raw, dtype=self.dtype).view("i8")[0])
        if kind == "U":
            return str(np.frombuffer(raw, dtype=self.dtype)[0])
        data = bytes(raw)
        if kind == "S":
            data = data.rstrip(b"\0")  # as numpy's bytes scalar, which zarr-python 2 encodes
        return base64.standard_b64encode(data).decode("ascii")

    def fill_value_from_python(self, value: Any) -> bytes:
        """The bits of a user's fill value (None: :meth:`default_fill_value`).

        Parameters
        ----------
        value : scalar or None
            Anything numpy converts to the dtype.

        Returns
        -------
        bytes
            ``itemsize`` bytes.

        Raises
        ------
        MetadataError
            If numpy cannot convert ``value`` (on ``fill_value``).

        Examples
        --------
        >>> import numpy as np
        >>> V2DataType("|S2", np.dtype("S2")).fill_value_from_python(b"a")
        b'a\\x00'
        """
        if value is None:
            return self.default_fill_value()
        try:
            return np.array(value, dtype=self.dtype).tobytes()
        except (ValueError, TypeError, OverflowError) as exc:
            raise MetadataError(f"{value!r} is not a value of data type {self.name}: {exc}",
                                path="fill_value") from None

    def default_fill_value(self) -> bytes:
        """Zero bytes (an empty string, zero fields), or NaT for ``M8``/``m8``.

        zarr-python 3 reads a null fill value as its data type's default scalar, which is NaT
        for times, and writes NaT as the default v2 fill value of a time array.

        Returns
        -------
        bytes
            ``itemsize`` bytes.

        Raises
        ------
        None

        Examples
        --------
        >>> import numpy as np
        >>> V2DataType("|V2", np.dtype("V2")).default_fill_value()
        b'\\x00\\x00'
        >>> V2DataType("<M8[s]", np.dtype("M8[s]")).default_fill_value().hex()
        '0000000000000080'
        """
        if self.dtype.kind in "Mm":
            return np.array(np.iinfo(np.int64).min, dtype="i8").view(self.dtype).tobytes()
        return bytes(self.dtype.itemsize)


@dataclass(frozen=True, slots=True)
class V2ObjectType(DataType):
    """The data type of a Zarr v2 object array (``"dtype": "|O"``) whose object codec is
    ``vlen-array`` (elements: 1-d numpy arrays) or ``json2`` (elements: JSON values); see
    :mod:`zarr3c.codecs.object_codecs`.  Zarr v3 has no such data type.

    ``dtype`` is numpy's object dtype.  The fill value is any JSON value, written as it is
    (zarr-python 2 writes ``0`` by default) and read, as zarr-python 2 reads it, as the element
    of chunks that are not stored (``null``: ``None``); its "bits" are its JSON text.

    Parameters
    ----------
    name : str
        ``"|O"``.
    dtype : numpy.dtype
        ``numpy.dtype(object)``.
    object_codec : str
        ``"vlen-array"`` or ``"json2"``.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Examples
    --------
    >>> import numpy as np
    >>> dt = V2ObjectType("|O", np.dtype(object), "json2")
    >>> dt.parse_fill_value(0), dt.fill_array(b'{"a": 1}')[()]
    (b'0', {'a': 1})
    """

    object_codec: str

    def parse_fill_value(self, value: Any, *, path: str = "fill_value",
                         source: str | None = None) -> bytes:
        """The fill value's JSON text.

        Parameters
        ----------
        value : JSON value
            The ``fill_value`` as written.
        path, source : str
            Where it came from, for messages.

        Returns
        -------
        bytes
            Its JSON text, UTF-8.

        Raises
        ------
        MetadataError
            If ``value`` is not JSON (it always is when read from a document).

        Examples
        --------
        >>> import numpy as np
        >>> V2ObjectType("|O", np.dtype(object), "vlen-array").parse_fill_value(None)
        b'null'
        """
        try:
            return json.dumps(value).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"is not a JSON value: {exc}", path=path, source=source) \
                from None

    def fill_value_to_json(self, raw: bytes) -> Any:
        """The JSON value of a fill value's text.

        Parameters
        ----------
        raw : bytes
            Its JSON text.

        Returns
        -------
        JSON value

        Raises
        ------
        None

        Examples
        --------
        >>> import numpy as np
        >>> V2ObjectType("|O", np.dtype(object), "json2").fill_value_to_json(b"[1]")
        [1]
        """
        return json.loads(raw)

    def fill_value_from_python(self, value: Any) -> bytes:
        """The JSON text of a user's fill value (None: ``null``).

        Parameters
        ----------
        value : JSON value or None
            Anything :func:`json.dumps` encodes.

        Returns
        -------
        bytes

        Raises
        ------
        MetadataError
            If ``value`` is not JSON (on ``fill_value``).

        Examples
        --------
        >>> import numpy as np
        >>> V2ObjectType("|O", np.dtype(object), "json2").fill_value_from_python("x")
        b'"x"'
        """
        return self.parse_fill_value(value)

    def default_fill_value(self) -> bytes:
        """``null``: chunks that are not stored read as ``None``.

        Returns
        -------
        bytes

        Raises
        ------
        None

        Examples
        --------
        >>> import numpy as np
        >>> V2ObjectType("|O", np.dtype(object), "json2").default_fill_value()
        b'null'
        """
        return b"null"

    def fill_array(self, raw: bytes) -> np.ndarray:
        """The fill value as a 0-d object array holding its element (a new one each call).

        Parameters
        ----------
        raw : bytes
            Its JSON text.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValueError
            If ``raw`` is not JSON.

        Examples
        --------
        >>> import numpy as np
        >>> V2ObjectType("|O", np.dtype(object), "vlen-array").fill_array(b"0")[()]
        0
        """
        out = np.empty((), dtype=object)
        out[()] = json.loads(raw)
        return out


def _as_tuples(value: Any) -> Any:
    """A structured dtype's JSON field list as numpy takes it (lists become tuples)."""
    if isinstance(value, list):
        return [tuple(_as_tuples(v) if isinstance(v, list) else v for v in f)
                if isinstance(f, list) else f for f in value]
    return value


def _dtype_json(dtype: np.dtype) -> Any:
    """The ``dtype`` field of ``dtype`` as zarr-python 2 writes it (``dtype.descr`` for
    structured types, the type string otherwise)."""
    if dtype.fields is not None:
        return [list(_json_field(f)) for f in dtype.descr]
    return dtype.str


def _json_field(f: tuple[Any, ...]) -> tuple[Any, ...]:
    name, sub = f[0], f[1]
    rest = [list(f[2])] if len(f) > 2 else []
    return (name, [list(_json_field(g)) for g in sub] if isinstance(sub, list) else sub, *rest)


def parse_v2_dtype(value: Any, *, source: str | None = None) -> tuple[DataType, np.dtype]:
    """The data type of a ``.zarray`` ``dtype`` field, and the numpy dtype it is stored in.

    Parameters
    ----------
    value : str or list
        A numpy type string (``"<i4"``, ``"|S7"``, ``"<M8[ns]"``) or a structured type's
        list of ``[name, type]`` / ``[name, type, shape]`` fields.
    source : str or None
        The document's key, for messages.

    Returns
    -------
    (DataType, numpy.dtype)
        A core :class:`DataType` for numbers (native-endian), a :class:`V2DataType`
        otherwise; and the stored dtype (byte order as written).

    Raises
    ------
    UnknownExtensionError
        For a type string numpy does not know, object (``"|O"``) types, and types zarr3c
        cannot hold (``"<f16"``, subarrays at the top level).
    MetadataError
        If ``value`` is neither a string nor a list, or its elements are larger than
        :data:`~zarr3c.metadata.data_types.MAX_ITEMSIZE`.

    Examples
    --------
    >>> parse_v2_dtype(">i2")
    (DataType(name='int16', dtype=dtype('int16')), dtype('>i2'))
    >>> parse_v2_dtype("<U3")[0]
    V2DataType(name='<U3', dtype=dtype('<U3'))
    """
    where = {"path": "dtype", "source": source}
    if not isinstance(value, str | list):
        raise MetadataError(f"must be a type string or a list of fields, got {value!r}",
                            **where)
    try:
        stored = np.dtype(_as_tuples(value))
    except (TypeError, ValueError, SyntaxError):
        raise UnknownExtensionError(f"unknown data type {value!r}", **where) from None
    if stored.hasobject:
        raise UnknownExtensionError(
            f"object data type {value!r}: zarr3c cannot hold object arrays yet "
            "(variable-length strings, bytes, arrays or JSON)", **where)
    if stored.subdtype is not None or stored.itemsize == 0:
        raise UnknownExtensionError(f"data type {value!r} is not supported (a subarray or "
                                    "empty type)", **where)
    kind = stored.kind
    if kind in _NUMERIC_KINDS:
        try:
            return data_type_from_numpy(stored), stored
        except MetadataError:
            raise UnknownExtensionError(f"data type {value!r} is not supported", **where) \
                from None
    if kind not in _OTHER_KINDS:
        raise UnknownExtensionError(f"data type {value!r} is not supported", **where)
    check_itemsize(stored, path="dtype", source=source)
    memory = stored.newbyteorder("=") if kind in "Mm" else stored
    name = value if isinstance(value, str) else json.dumps(value)
    return V2DataType(name, memory), stored


def v2_data_type_from_numpy(dtype_like: Any) -> DataType:
    """The data type of a new v2 array for a user's dtype: a core :class:`DataType` for
    numbers, a :class:`V2DataType` for times, strings, raw bytes and structured types.

    Parameters
    ----------
    dtype_like
        A :class:`DataType` or anything :func:`numpy.dtype` accepts.  A v3 extension data
        type (``fixed_length_utf32``, ``null_terminated_bytes``, ``raw_bytes``, ``struct``,
        ``numpy.datetime64``, ``numpy.timedelta64``) becomes the v2 type of its numpy dtype.

    Returns
    -------
    DataType

    Raises
    ------
    MetadataError
        For dtypes Zarr v2 files cannot hold in zarr3c (object, subarrays, longdouble), on
        ``dtype``.

    Examples
    --------
    >>> v2_data_type_from_numpy("S3"), v2_data_type_from_numpy("<i2").name
    (V2DataType(name='|S3', dtype=dtype('S3')), 'int16')
    >>> v2_data_type_from_numpy(data_type_from_numpy("M8[ns]"))
    V2DataType(name='<M8[ns]', dtype=dtype('<M8[ns]'))
    """
    if isinstance(dtype_like, DataType):
        if dtype_like.family not in _V3_EXTENSION_FAMILIES:
            return dtype_like
        # A v3 extension type (a copy's): the v2 type of its numpy dtype.
        dtype_like = dtype_like.dtype
    try:
        dtype = np.dtype(dtype_like)
    except (TypeError, ValueError):
        return data_type_from_numpy(dtype_like)  # (its message)
    if dtype.kind not in _OTHER_KINDS or dtype.hasobject or dtype.subdtype is not None:
        return data_type_from_numpy(dtype)
    if dtype.itemsize == 0:
        raise MetadataError(f"dtype {dtype} has no elements' size", path="dtype")
    value = _dtype_json(dtype)
    try:
        return parse_v2_dtype(value)[0]
    except MetadataError as exc:
        raise MetadataError(str(exc), path="dtype") from None


# -- codecs ---------------------------------------------------------------------------------------


def _codec_id(spec: Any, *, path: str, source: str | None) -> dict[str, Any]:
    """A numcodecs configuration with its ``id`` freed of a ``numcodecs.`` prefix."""
    if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
        raise MetadataError('must be a numcodecs configuration with a string "id"', path=path,
                            source=source)
    codec_id = spec["id"]
    if codec_id.startswith("numcodecs."):
        codec_id = codec_id[len("numcodecs."):]
    if codec_id == "pickle":
        raise UnsupportedFeatureError(
            f"{source or 'array'}: {path}: the 'pickle' codec is refused: decoding it runs "
            "code stored with the data")
    return {**spec, "id": codec_id}


def _parse_compressor(value: Any, *, source: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    spec = _codec_id(value, path="compressor", source=source)
    return {"id": spec["id"], "configuration": {k: v for k, v in spec.items() if k != "id"}}


def _parse_filters(value: Any, *, source: str | None) -> tuple[dict[str, Any], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise MetadataError("must be null or a list of numcodecs configurations",
                            path="filters", source=source)
    return tuple(_codec_id(spec, path=f"filters[{i}]", source=source)
                 for i, spec in enumerate(value))


def _object_data_type(doc: Mapping[str, Any], *,
                      source: str | None) -> VariableLengthType | V2ObjectType:
    """The data type of an object array (``"|O"``), from its object codec in ``filters``:
    ``vlen-utf8`` strings, ``vlen-bytes`` bytes, ``vlen-array`` arrays or ``json2`` JSON
    values; others (``msgpack2``, the old ``json`` and ``msgpack``) are refused by name."""
    for spec in doc.get("filters") or []:
        codec_id = str(spec.get("id", "")).removeprefix("numcodecs.") \
            if isinstance(spec, dict) else ""
        if codec_id == "vlen-utf8":
            return STRING
        if codec_id == "vlen-bytes":
            return VARIABLE_LENGTH_BYTES
        if codec_id in ("vlen-array", "json2"):
            return V2ObjectType("|O", np.dtype(object), codec_id)
    raise UnknownExtensionError(
        f"object data type {doc['dtype']!r} ({_object_codec(doc)}): zarr3c reads object "
        "arrays of the vlen-utf8, vlen-bytes, vlen-array and json2 codecs only", path="dtype",
        source=source)


def _object_codec(doc: Mapping[str, Any]) -> str:
    """Name the object codec of an object array's document, for the message refusing it."""
    for i, spec in enumerate(doc.get("filters") or []):
        if isinstance(spec, dict) and str(spec.get("id", "")).removeprefix(
                "numcodecs.") in OBJECT_CODEC_IDS:
            return f"object codec {spec['id']!r} in filters[{i}]"
    return "no object codec"


def _native_everywhere(dtype: np.dtype) -> bool:
    """Whether every field of ``dtype`` is native-endian or has no byte order."""
    if dtype.fields is not None:
        return all(_native_everywhere(f[0]) for f in dtype.fields.values())
    if dtype.subdtype is not None:
        return _native_everywhere(dtype.subdtype[0])
    return dtype.isnative


# -- arrays ---------------------------------------------------------------------------------------


def _positive_ints(value: Any, ndim: int, *, source: str | None) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise MetadataError("must be a list of integers", path="chunks", source=source)
    if len(value) != ndim:
        raise MetadataError(f"has {len(value)} dimensions but shape has {ndim}", path="chunks",
                            source=source)
    for i, n in enumerate(value):
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 2**63 - 1:
            raise MetadataError(f"must be a positive integer, got {n!r}", path=f"chunks[{i}]",
                                source=source)
    return tuple(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class V2ArrayMetadata(ArrayMetadataView):
    """A Zarr v2 array (``.zarray`` with its ``.zattrs``), presented through the read interface
    of the final v3 ``ArrayMetadata``.

    Build with :meth:`from_dict` (or :meth:`from_v3` for a new array); ``to_json`` gives the
    ``.zarray`` document and ``attributes`` the ``.zattrs`` one.

    Parameters
    ----------
    shape, data_type, chunk_grid, fill_value, attributes
        As for ``ArrayMetadata``.
    dtype_json : str or list
        The ``dtype`` field as written.
    stored_dtype : numpy.dtype
        The dtype the chunks are stored in (byte order as written).
    dimension_separator : str
        ``"."`` or ``"/"``.
    order : str
        ``"C"`` or ``"F"``: the memory layout of each chunk.
    fill_value_json : JSON value
        The ``fill_value`` as written (null kept as null).
    compressor : dict or None
        ``{"id", "configuration"}``.
    filters : tuple of dict or None
        numcodecs configurations with ``id``; None where the document has null.
    extra_fields : dict
        Other fields of the document, written back unchanged.
    codec_chain : tuple of dict
        The equivalent v3 codec chain.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (use :meth:`evolve`).

    Examples
    --------
    >>> md = V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [4], "chunks": [2],
    ...     "dtype": ">i2", "compressor": None, "fill_value": 0, "order": "C",
    ...     "filters": None})
    >>> md.dtype, md.codecs, md.chunk_key_encoding.encode_chunk_key((1,))
    (dtype('int16'), ({'name': 'bytes', 'configuration': {'endian': 'big'}},), '1')
    """

    zarr_format: ClassVar[int] = 2
    node_type: ClassVar[str] = "array"
    dimension_names: ClassVar[None] = None

    shape: tuple[int, ...]
    data_type: DataType
    dtype_json: Any
    stored_dtype: np.dtype
    chunk_grid: Any
    dimension_separator: str
    order: str
    fill_value: bytes
    fill_value_json: Any
    compressor: dict[str, Any] | None
    filters: tuple[dict[str, Any], ...] | None
    attributes: dict[str, Any] = field(default_factory=dict)
    extra_fields: dict[str, Any] = field(default_factory=dict)
    codec_chain: tuple[dict[str, Any], ...] = ()

    @property
    def chunk_key_encoding(self) -> V2ChunkKeyEncoding:
        """The ``v2`` chunk key encoding with the document's separator.

        Returns
        -------
        V2ChunkKeyEncoding

        Raises
        ------
        None

        Examples
        --------
        >>> V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [], "chunks": [],
        ...     "dtype": "|u1", "compressor": None, "fill_value": 0, "order": "C",
        ...     "filters": None}).chunk_key_encoding.encode_chunk_key(())
        '0'
        """
        return V2ChunkKeyEncoding(separator=self.dimension_separator)  # type: ignore[arg-type]

    @property
    def read_only_reason(self) -> str | None:
        """Why zarr3c cannot write this array, or None.

        Strings and structured types are held in their stored dtype and copied as bytes;
        written, they would be copied in native byte order.  So an array whose stored
        strings or fields are of the other byte order opens read-only.

        Returns
        -------
        str or None

        Raises
        ------
        None

        Examples
        --------
        >>> V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [2], "chunks": [2],
        ...     "dtype": ">U2", "compressor": None, "fill_value": "", "order": "C",
        ...     "filters": None}).read_only_reason
        "zarr3c writes data type '>U2' only in native byte order"
        """
        dtype = self.stored_dtype
        if dtype.kind in "UV" and not _native_everywhere(dtype):
            return f"zarr3c writes data type {self.dtype_json!r} only in native byte order"
        return None

    @property
    def codecs(self) -> tuple[dict[str, Any], ...]:
        """The equivalent v3 codec chain (transpose for "F", filters, bytes, compressor).

        Returns
        -------
        tuple of dict

        Raises
        ------
        None

        Examples
        --------
        >>> V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [4], "chunks": [2],
        ...     "dtype": "|u1", "compressor": {"id": "zlib", "level": 1}, "fill_value": 0,
        ...     "order": "C", "filters": None}).codecs[-1]
        {'name': 'numcodecs.zlib', 'configuration': {'level': 1}}
        """
        return self.codec_chain

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, attributes: Any = None,
                  source: str | None = None) -> V2ArrayMetadata:
        """Parse a ``.zarray`` document (and the ``.zattrs`` object ``attributes``).

        Parameters
        ----------
        doc : mapping
            The ``.zarray`` JSON object.
        attributes : mapping or None
            The ``.zattrs`` JSON object (None: no attributes).
        source : str or None
            The document's key, named by errors.

        Returns
        -------
        V2ArrayMetadata

        Raises
        ------
        MetadataError
            Naming the field: a missing or malformed field, ``chunks`` of another rank than
            ``shape``, a bad fill value, ``order`` not C/F, a bad codec configuration.
        UnknownExtensionError
            An unknown data type or codec, or an object data type of an object codec
            other than vlen-utf8, vlen-bytes, vlen-array and json2.
        UnsupportedFormatError
            ``zarr_format`` is not 2.
        UnsupportedFeatureError
            The ``pickle`` codec, or filters in an order with no v3 form.

        Examples
        --------
        >>> V2ArrayMetadata.from_dict({"zarr_format": 2, "shape": [4], "chunks": [2, 2],
        ...     "dtype": "<i4", "compressor": None, "fill_value": 0, "order": "C",
        ...     "filters": None}, source="a/.zarray")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: a/.zarray: chunks: has 2 dimensions but shape has 1
        """
        if doc.get("zarr_format") != 2:
            raise UnsupportedFormatError(f"must be 2, got {doc.get('zarr_format')!r}",
                                         path="zarr_format", source=source)
        for name in ("shape", "chunks", "dtype", "compressor", "fill_value", "order",
                     "filters"):
            if name not in doc:
                raise MetadataError("is required", path=name, source=source)
        shape = _shape(doc["shape"], source=source)
        chunks = _positive_ints(doc["chunks"], len(shape), source=source)
        # (codecs first: the pickle codec is refused for what it is, whatever the dtype)
        compressor = _parse_compressor(doc["compressor"], source=source)
        filters = _parse_filters(doc["filters"], source=source)
        dtype_value = doc["dtype"]
        data_type: DataType
        if dtype_value in ("|O", "O", "object"):
            data_type = _object_data_type(doc, source=source)
            stored = data_type.dtype
        else:
            data_type, stored = parse_v2_dtype(dtype_value, source=source)
        nbytes = stored.itemsize * math.prod(chunks)
        if nbytes >= 2**63:  # (checked before any read sizes a buffer by it)
            raise MetadataError(f"a chunk of shape {chunks} with {stored.itemsize}-byte "
                                f"elements has {nbytes} bytes, too many (must be < 2**63)",
                                path="chunks", source=source)
        order = doc["order"]
        if order not in ("C", "F"):
            raise MetadataError(f'must be "C" or "F", got {order!r}', path="order",
                                source=source)
        separator = doc.get("dimension_separator", ".")
        if separator is None:
            separator = "."
        if separator not in (".", "/"):
            raise MetadataError(f'must be "." or "/", got {separator!r}',
                                path="dimension_separator", source=source)
        fill_json = doc["fill_value"]
        if fill_json is None or (isinstance(data_type, VariableLengthType)
                                 and not isinstance(fill_json, str)):
            # (zarr-python 2 wrote 0 or null for object arrays: missing chunks read empty)
            fill = data_type.default_fill_value()
        else:
            fill = data_type.parse_fill_value(fill_json, path="fill_value", source=source)
        grid = registry.chunk_grids.get("regular").from_dict(
            {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            ndim=len(shape), path="chunks", source=source,
        )
        chain = _build_chain(ndim=len(shape), dtype=stored, layout=order,
                             filters=filters or (), compressor=compressor, source=source,
                             filters_path="filters")
        if (isinstance(data_type, V2ObjectType) and data_type.object_codec == "json2"
                and chain[0]["name"] == "transpose"):
            # numcodecs' JSON writes a chunk's elements nested in index order, with its
            # shape, whatever its memory order: an "F" chunk is not stored transposed.
            # (zarr-python 2 reads such n-d chunks back in the wrong order; the stored
            # elements and numcodecs' decoding of them are unambiguous.)
            chain = chain[1:]
        return cls(
            shape=shape, data_type=data_type, dtype_json=dtype_value, stored_dtype=stored,
            chunk_grid=grid, dimension_separator=separator, order=order, fill_value=fill,
            fill_value_json=fill_json, compressor=compressor, filters=filters,
            attributes=parse_attributes(attributes or {}, source=source),
            extra_fields={k: v for k, v in doc.items() if k not in _ARRAY_FIELDS},
            codec_chain=chain,
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``.zarray`` document, with its fields in zarr-python 3's order.

        Returns
        -------
        dict

        Raises
        ------
        None

        Examples
        --------
        >>> doc = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f8",
        ...        "compressor": None, "fill_value": "NaN", "order": "C", "filters": None}
        >>> V2ArrayMetadata.from_dict(doc).to_dict()["fill_value"]
        'NaN'
        """
        compressor = None
        if self.compressor is not None:
            compressor = {"id": self.compressor["id"], **self.compressor["configuration"]}
        return {
            "shape": list(self.shape),
            "chunks": list(self.chunk_grid.chunk_shape),
            "dtype": self.dtype_json,
            "fill_value": self.fill_value_json,
            "order": self.order,
            "filters": None if self.filters is None else [dict(f) for f in self.filters],
            "dimension_separator": self.dimension_separator,
            "compressor": compressor,
            "zarr_format": 2,
            **self.extra_fields,
        }

    def to_json(self) -> bytes:
        """The ``.zarray`` document's bytes (see :func:`dump_v2_json`).

        Returns
        -------
        bytes

        Raises
        ------
        MetadataError
            If a field cannot be written as JSON.

        Examples
        --------
        >>> doc = {"zarr_format": 2, "shape": [], "chunks": [], "dtype": "|b1",
        ...        "compressor": None, "fill_value": False, "order": "C", "filters": None}
        >>> b'"dtype": "|b1"' in V2ArrayMetadata.from_dict(doc).to_json()
        True
        """
        return dump_v2_json(self.to_dict())

    def evolve(self, **changes: Any) -> V2ArrayMetadata:
        """A copy with ``changes`` (``shape``, ``attributes``), checked as a new document.

        Parameters
        ----------
        **changes
            Fields to replace; ``chunk_grid`` is ignored (v2 grids are regular, their chunk
            shape does not change with the shape).

        Returns
        -------
        V2ArrayMetadata

        Raises
        ------
        MetadataError
            If the result is not a valid document.

        Examples
        --------
        >>> doc = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i8",
        ...        "compressor": None, "fill_value": 0, "order": "C", "filters": None}
        >>> V2ArrayMetadata.from_dict(doc).evolve(shape=(6,)).shape
        (6,)
        """
        changes.pop("chunk_grid", None)
        new = dataclasses.replace(self, **changes)
        return type(self).from_dict(new.to_dict(), attributes=new.attributes)

    @classmethod
    def from_v3(cls, md: Any, *, order: str = "C", data_type: DataType | None = None,
                null_fill: bool = False) -> V2ArrayMetadata:
        """The v2 document of a new array described by v3 metadata (from create_array).

        A leading reversing transpose becomes ``order: "F"``, numcodecs array->array codecs
        and all but the last bytes->bytes codec become ``filters``, the last bytes->bytes
        codec the ``compressor`` (v3 ``gzip``/``zstd``/``blosc`` as their numcodecs
        equivalents), the ``bytes`` codec's byte order the dtype's.

        Parameters
        ----------
        md : ArrayMetadata
            The metadata create_array built (a regular grid).
        order : str
            The chunk memory layout, ``"C"`` or ``"F"``.
        data_type : DataType or None
            The data type, where ``md`` holds a raw stand-in for a v2 type v3 has no name
            for (strings, times, structured types).
        null_fill : bool
            Write ``"fill_value": null`` (no fill value; missing chunks then read as the
            data type's default, ``md``'s fill value) instead of ``md``'s fill value.

        Returns
        -------
        V2ArrayMetadata

        Raises
        ------
        MetadataError
            If the chain has no v2 form or would read back differently, the grid is not
            regular, or the chunk key encoding is not ``v2``-like.

        Examples
        --------
        >>> from zarr3c.array import build_array_metadata
        >>> md = build_array_metadata(shape=(4,), dtype=">u2", chunks=(2,), compressors=None)
        >>> V2ArrayMetadata.from_v3(md).to_dict()["dtype"]
        '<u2'
        >>> null = V2ArrayMetadata.from_v3(md, null_fill=True)
        >>> null.to_dict()["fill_value"], null.fill_value
        (None, b'\\x00\\x00')
        """
        data_type = data_type if data_type is not None else md.data_type
        chunk_shape = getattr(md.chunk_grid, "chunk_shape", None)
        if chunk_shape is None:
            raise MetadataError("Zarr v2 arrays have a regular chunk grid only",
                                path="chunk_grid")
        codecs = [c if isinstance(c, dict) else c.to_dict() for c in md.codecs]
        object_filter: _ObjectFilter | None = None
        if isinstance(data_type, VariableLengthType):
            codecs, object_filter = _object_serializer_as_filter(codecs, data_type,
                                                                 ndim=len(md.shape))
        parts = split_chain(codecs, ndim=len(md.shape), layout=order, compressor_ids=None,
                            what="Zarr v2")
        if object_filter is not None:
            parts.filters.insert(object_filter.position, object_filter.spec)
        compressor = parts.compressor
        if (compressor is not None and compressor["id"] == "zstd"
                and compressor["configuration"].get("checksum") is False):
            # zstd's default left out, as zarr-python 3 writes it (numcodecs before 0.14,
            # which zarr-python 2 readers may have, takes no checksum argument)
            del compressor["configuration"]["checksum"]
        dtype = data_type.dtype
        if isinstance(data_type, VariableLengthType):
            stored = np.dtype(object)
        elif isinstance(data_type, V2DataType) and dtype.kind not in "Mm":
            stored = dtype  # held as stored
        elif dtype.itemsize > 1:
            stored = dtype.newbyteorder(">" if parts.endian == "big" else "<")
        else:
            stored = dtype
        encoding = md.chunk_key_encoding
        separator = getattr(encoding, "separator", "/")
        if getattr(encoding, "name", None) not in ("default", "v2"):
            raise MetadataError(f"chunk key encoding {getattr(encoding, 'name', encoding)!r} "
                                "has no Zarr v2 form", path="chunk_key_encoding")
        if isinstance(data_type, V2DataType):
            dtype_json: Any = data_type.name if dtype.fields is None else _dtype_json(dtype)
            if dtype.kind in "Mm":
                dtype_json = stored.str
        else:
            dtype_json = stored.str
        if null_fill:
            fill_json = None
        elif isinstance(data_type, V2DataType):
            fill_json = data_type.fill_value_to_json(md.fill_value)
        else:
            fill_json = _fill_value_json(data_type, md.fill_value)
        doc = {
            "zarr_format": 2, "shape": list(md.shape), "chunks": list(chunk_shape),
            "dtype": dtype_json, "fill_value": fill_json, "order": parts.layout,
            "filters": parts.filters or None, "dimension_separator": separator,
            "compressor": (None if parts.compressor is None else
                           {"id": parts.compressor["id"], **parts.compressor["configuration"]}),
        }
        new = cls.from_dict(doc, attributes=dict(md.attributes))
        asked = [c if isinstance(c, dict) else c.to_dict() for c in md.codecs]
        if data_type is not md.data_type:
            # md's serializer is its stand-in type's; the document's follows the real dtype.
            serializer = next(c for c in new.codecs if c["name"] == "bytes")
            asked = [serializer if c["name"] == "bytes" else c for c in asked]
        if isinstance(data_type, VariableLengthType):
            # A v2 document has no blosc typesize: the compressor of an object array sees
            # the object codec's bytes (typesize 1, as numcodecs encodes them), whatever
            # the v3 form evolved from the array's data type.
            typesize = next((c["configuration"]["typesize"] for c in new.codecs
                             if c["name"] == "blosc"), None)
            asked = [{**c, "configuration": {**c["configuration"], "typesize": typesize}}
                     if c["name"] == "blosc" and typesize is not None else c for c in asked]
        check_same_chain(new.codecs, asked, layout=parts.layout, ndim=len(md.shape),
                         what="Zarr v2")
        return new


class _ObjectFilter(NamedTuple):
    """The object codec of a new v2 object array: its place in ``filters``, its entry."""

    position: int
    spec: dict[str, Any]


def _object_serializer_as_filter(codecs: list[dict[str, Any]], data_type: VariableLengthType,
                                 *, ndim: int
                                 ) -> tuple[list[dict[str, Any]], _ObjectFilter | None]:
    """The v3 chain of a new string or bytes array with its serializer (``vlen-utf8``,
    ``vlen-bytes``) replaced by ``bytes``, so that :func:`split_chain` takes the rest apart,
    and the index in the v2 ``filters`` where that object codec goes back with its filter
    (None: the chain has no such serializer, which split_chain's check then names).

    A Zarr v2 object array (``"dtype": "|O"``) names its object codec among its filters
    (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#filters), first unless array
    filters come before it, which is what zarr-python 3 writes for ``dtype=str``:
    ``"filters": [{"id": "vlen-utf8"}]``.
    """
    at = next((i for i, c in enumerate(codecs) if c["name"] == data_type.codec), None)
    if at is None:
        return codecs, None
    # A leading reversing transpose is the document's order, not one of its filters.
    first = codecs[0]
    leading = int(first["name"] == "transpose" and at > 0
                  and (first.get("configuration") or {}).get("order")
                  == list(range(ndim))[::-1])
    return ([*codecs[:at], {"name": "bytes"}, *codecs[at + 1:]],
            _ObjectFilter(at - leading, {"id": data_type.codec}))


# -- groups ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class V2GroupMetadata:
    """A Zarr v2 group: ``.zgroup`` (``{"zarr_format": 2}``) with its ``.zattrs``.

    Parameters
    ----------
    attributes : dict
        The user attributes (``.zattrs``).
    extra_fields : dict
        Other fields of ``.zgroup``, written back unchanged.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (use :meth:`evolve`).

    Examples
    --------
    >>> V2GroupMetadata.from_dict({"zarr_format": 2}, attributes={"a": 1}).to_json()
    b'{\\n  "zarr_format": 2\\n}'
    """

    zarr_format: ClassVar[int] = 2
    node_type: ClassVar[str] = "group"

    attributes: dict[str, Any] = field(default_factory=dict)
    extra_fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, attributes: Any = None,
                  source: str | None = None) -> V2GroupMetadata:
        """Parse a ``.zgroup`` document (and the ``.zattrs`` object ``attributes``).

        Parameters
        ----------
        doc : mapping
            The ``.zgroup`` JSON object.
        attributes : mapping or None
            The ``.zattrs`` JSON object.
        source : str or None
            The document's key, named by errors.

        Returns
        -------
        V2GroupMetadata

        Raises
        ------
        UnsupportedFormatError
            If ``zarr_format`` is not 2.
        MetadataError
            If ``attributes`` is not a JSON object.

        Examples
        --------
        >>> V2GroupMetadata.from_dict({"zarr_format": 2}).attributes
        {}
        """
        if doc.get("zarr_format") != 2:
            raise UnsupportedFormatError(f"must be 2, got {doc.get('zarr_format')!r}",
                                         path="zarr_format", source=source)
        return cls(attributes=parse_attributes(attributes or {}, source=source),
                   extra_fields={k: v for k, v in doc.items() if k != "zarr_format"})

    def to_dict(self) -> dict[str, Any]:
        """The ``.zgroup`` document.

        Returns
        -------
        dict

        Raises
        ------
        None

        Examples
        --------
        >>> V2GroupMetadata().to_dict()
        {'zarr_format': 2}
        """
        return {"zarr_format": 2, **self.extra_fields}

    def to_json(self) -> bytes:
        """The ``.zgroup`` document's bytes.

        Returns
        -------
        bytes

        Raises
        ------
        MetadataError
            If an extra field cannot be written as JSON.

        Examples
        --------
        >>> V2GroupMetadata().to_json()
        b'{\\n  "zarr_format": 2\\n}'
        """
        return dump_v2_json(self.to_dict())

    def evolve(self, **changes: Any) -> V2GroupMetadata:
        """A copy with ``changes`` (``attributes``), checked.

        Parameters
        ----------
        **changes
            Fields to replace.

        Returns
        -------
        V2GroupMetadata

        Raises
        ------
        MetadataError
            If the attributes are not a JSON object.

        Examples
        --------
        >>> V2GroupMetadata().evolve(attributes={"b": 2}).attributes
        {'b': 2}
        """
        new = dataclasses.replace(self, **changes)
        return type(self).from_dict(new.to_dict(), attributes=new.attributes)


def read_v2_node(store: Any, path: str) -> V2ArrayMetadata | V2GroupMetadata | None:
    """The v2 node at ``path`` of ``store`` (its ``.zarray`` or ``.zgroup`` with ``.zattrs``),
    or None where it has neither.

    Parameters
    ----------
    store : Store
        Anything with ``get``.
    path : str
        The node's normalised path.

    Returns
    -------
    V2ArrayMetadata, V2GroupMetadata or None

    Raises
    ------
    MetadataError
        If a document is not valid (naming its key and field).

    Examples
    --------
    >>> from zarr3c.stores import MemoryStore
    >>> store = MemoryStore()
    >>> store.set("g/.zgroup", b'{"zarr_format": 2}')
    >>> read_v2_node(store, "g"), read_v2_node(store, "h")
    (V2GroupMetadata(attributes={}, extra_fields={}), None)
    """
    key = _key(path, ARRAY_KEY)
    data = store.get(key)
    node_type: type[V2ArrayMetadata] | type[V2GroupMetadata] = V2ArrayMetadata
    if data is None:
        key = _key(path, GROUP_KEY)
        data = store.get(key)
        node_type = V2GroupMetadata
        if data is None:
            return None
    doc = load_json_object(data, source=key)
    attrs_key = _key(path, ATTRS_KEY)
    raw_attrs = store.get(attrs_key)
    attrs = None if raw_attrs is None else load_json_object(raw_attrs, source=attrs_key)
    return node_type.from_dict(doc, attributes=attrs, source=key)


def v2_node_from_documents(docs: Mapping[str, Any], path: str, *, source: str
                           ) -> V2ArrayMetadata | V2GroupMetadata | None:
    """The v2 node at ``path`` from the documents of a consolidated ``.zmetadata``
    (``{"<path>/.zarray": {...}, "<path>/.zattrs": {...}, ...}``), or None.

    Parameters
    ----------
    docs : mapping
        The ``metadata`` object of ``.zmetadata``.
    path : str
        The node's path (relative to the consolidated group).
    source : str
        The ``.zmetadata`` key, named by errors.

    Returns
    -------
    V2ArrayMetadata, V2GroupMetadata or None

    Raises
    ------
    MetadataError
        If a document is not a JSON object or not valid.

    Examples
    --------
    >>> v2_node_from_documents({".zgroup": {"zarr_format": 2}, ".zattrs": {"a": 1}}, "",
    ...                        source=".zmetadata").attributes
    {'a': 1}
    """
    for name, node_type in ((ARRAY_KEY, V2ArrayMetadata), (GROUP_KEY, V2GroupMetadata)):
        key = _key(path, name)
        doc = docs.get(key)
        if doc is None:
            continue
        where = f"{source}: metadata[{key!r}]"
        attrs = docs.get(_key(path, ATTRS_KEY))
        if not isinstance(doc, dict) or not isinstance(attrs, dict | None):
            raise MetadataError("must be a JSON object", source=where)
        return node_type.from_dict(doc, attributes=attrs, source=where)  # type: ignore[attr-defined, no-any-return]
    return None



# -- consolidated metadata ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class V2ConsolidatedMetadata:
    """A v2 group's consolidated metadata, ``.zmetadata`` (zarr-python's convention)::

        {"metadata": {".zgroup": {...}, ".zattrs": {...}, "a/.zarray": {...},
                      "a/.zattrs": {...}, ...},
         "zarr_consolidated_format": 1}

    ``metadata`` lists the nodes below the group (relative path -> ``{"node_type": ...}``)
    as :class:`zarr3c.consolidated.ConsolidatedIndex` takes them; :meth:`node` parses one
    entry when it is opened, so an entry zarr3c cannot parse fails only there.

    Parameters
    ----------
    documents : dict
        The ``metadata`` object: document keys (relative to the group) to documents.
    source : str
        The ``.zmetadata`` key, named by errors.
    metadata : dict
        The nodes below the group, by relative path.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Examples
    --------
    >>> cm = V2ConsolidatedMetadata.from_json(
    ...     b'{"metadata": {".zgroup": {"zarr_format": 2}, "a/.zgroup": {"zarr_format": 2}},'
    ...     b' "zarr_consolidated_format": 1}', source=".zmetadata")
    >>> cm.metadata, cm.node("a")
    ({'a': {'node_type': 'group'}}, V2GroupMetadata(attributes={}, extra_fields={}))
    """

    documents: dict[str, Any]
    source: str
    metadata: dict[str, dict[str, Any]]

    @classmethod
    def from_documents(cls, documents: Mapping[str, Any], *, source: str
                       ) -> V2ConsolidatedMetadata:
        """Index the ``metadata`` object of a ``.zmetadata`` document.

        Parameters
        ----------
        documents : mapping
            Document keys to documents.
        source : str
            The ``.zmetadata`` key.

        Returns
        -------
        V2ConsolidatedMetadata

        Raises
        ------
        MetadataError
            If a key is not a string, or a node's parent has no ``.zgroup`` entry.

        Examples
        --------
        >>> V2ConsolidatedMetadata.from_documents({"x/.zarray": {}}, source=".zmetadata"
        ...                                        ).metadata
        {'x': {'node_type': 'array'}}
        """
        nodes: dict[str, dict[str, Any]] = {}
        for key in documents:
            if not isinstance(key, str):
                raise MetadataError(f"key {key!r} is not a string", path="metadata",
                                    source=source)
            rel, _, name = key.rpartition("/")
            if rel and name in (ARRAY_KEY, GROUP_KEY) and rel not in nodes:
                nodes[rel] = {"node_type": "array" if name == ARRAY_KEY else "group"}
        for rel in nodes:
            parent = rel.rpartition("/")[0]
            if parent and nodes.get(parent, {}).get("node_type") != "group":
                raise MetadataError(f"the parent {parent!r} of {rel!r} is not a group entry",
                                    path=f"metadata[{rel + '/' + ARRAY_KEY!r}]", source=source)
        return cls(dict(documents), source, {k: nodes[k] for k in sorted(nodes)})

    @classmethod
    def from_json(cls, data: Any, *, source: str) -> V2ConsolidatedMetadata:
        """Parse a ``.zmetadata`` document's bytes.

        Parameters
        ----------
        data : bytes
            The document.
        source : str
            Its key.

        Returns
        -------
        V2ConsolidatedMetadata

        Raises
        ------
        MetadataError
            If it is not a JSON object with ``"zarr_consolidated_format": 1`` and a
            ``metadata`` object, or :meth:`from_documents` refuses it.

        Examples
        --------
        >>> V2ConsolidatedMetadata.from_json(b'{"metadata": {}}', source=".zmetadata")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: .zmetadata: zarr_consolidated_format: must be 1, got None
        """
        doc = load_json_object(data, source=source)
        if doc.get("zarr_consolidated_format") != 1:
            raise MetadataError(f"must be 1, got {doc.get('zarr_consolidated_format')!r}",
                                path="zarr_consolidated_format", source=source)
        documents = doc.get("metadata")
        if not isinstance(documents, dict):
            raise MetadataError("must be a JSON object", path="metadata", source=source)
        return cls.from_documents(documents, source=source)

    def to_json(self) -> bytes:
        """The ``.zmetadata`` document (zarr-python writes it with indent 4, sorted keys).

        Returns
        -------
        bytes

        Raises
        ------
        MetadataError
            If a document holds a value JSON cannot encode.

        Examples
        --------
        >>> V2ConsolidatedMetadata.from_documents({}, source=".zmetadata").to_json()
        b'{\\n    "metadata": {},\\n    "zarr_consolidated_format": 1\\n}'
        """
        doc = {"metadata": self.documents, "zarr_consolidated_format": 1}
        try:
            return json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=True,
                              allow_nan=False).encode("ascii")
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"cannot be written as JSON: {exc}", source=self.source) \
                from None

    def node(self, rel: str) -> V2ArrayMetadata | V2GroupMetadata:
        """The metadata of the node at ``rel`` ("" for the consolidated group itself).

        Parameters
        ----------
        rel : str
            The node's path relative to the group.

        Returns
        -------
        V2ArrayMetadata or V2GroupMetadata

        Raises
        ------
        MetadataError
            If there is no such entry, or it is invalid (naming it).

        Examples
        --------
        >>> V2ConsolidatedMetadata.from_documents({}, source=".zmetadata").node("x")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: .zmetadata: metadata: no entry for 'x'
        """
        found = v2_node_from_documents(self.documents, rel, source=self.source)
        if found is None:
            raise MetadataError(f"no entry for {rel!r}", path="metadata", source=self.source)
        return found

    def without(self, rel: str) -> V2ConsolidatedMetadata:
        """A copy without the node at ``rel`` and everything below it.

        Parameters
        ----------
        rel : str
            The node's path relative to the group.

        Returns
        -------
        V2ConsolidatedMetadata

        Raises
        ------
        None

        Examples
        --------
        >>> cm = V2ConsolidatedMetadata.from_documents(
        ...     {"a/.zgroup": {}, "a/b/.zarray": {}, "c/.zgroup": {}}, source=".zmetadata")
        >>> sorted(cm.without("a").documents)
        ['c/.zgroup']
        """
        kept = {k: v for k, v in self.documents.items() if not k.startswith(rel + "/")}
        return type(self).from_documents(kept, source=self.source)
