"""Zarr v3 data types and their fill values.

The core data types of the v3 specification ("Data types",
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html): ``bool``, ``int8`` ...
``int64``, ``uint8`` ... ``uint64``, ``float16``, ``float32``, ``float64``, ``complex64``,
``complex128`` and the raw-bits types ``r8``, ``r16``, ``r24``, ... (any positive multiple of
8 bits).  In ``zarr.json`` a core data type is a bare string::

    "data_type": "float32",
    "fill_value": "NaN"

The extension data types of https://github.com/zarr-developers/zarr-extensions (data-types
folder), named, configured and given fill values exactly as zarr-python 3.4 writes them::

    {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}
    {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}}
    {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}     # numpy <U3
    {"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}   # numpy |S4
    {"name": "raw_bytes", "configuration": {"length_bytes": 3}}               # numpy |V3
    {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"}]}}

and, where the ``ml_dtypes`` package is installed, the bare names tensorstore and zarrs use for
its types: ``bfloat16``, ``float8_e4m3fn`` (and the other ``float8_*``, ``float6_*``,
``float4_e2m1fn``), ``int2``, ``int4``, ``uint2``, ``uint4`` (one element per byte).

A numpy ``V<n>`` dtype becomes ``raw_bytes``, the type zarr-python 3 and tensorstore read
(neither opens zarr3c's earlier ``r<N>`` arrays, which are still read, and still written when a
user names ``"r24"``).

In memory a data type is always a *native-endian* numpy dtype (raw bits are numpy void
``V{n}``, structs a packed structured dtype); byte order on disk is the ``bytes`` codec's
business.  Fill values are held as their exact bits (``bytes`` of length ``itemsize``, native
byte order), so NaN payloads and ``-0.0`` survive a read/write round trip.  JSON forms of fill
values (the core specification's "fill_value", and each extension's document):

================ ========================================================================
bool             ``true`` / ``false``
int/uint         a JSON integer within range (``1.0`` is accepted, ``1.5`` and ``true`` are not)
float            a JSON number, ``"NaN"``, ``"Infinity"``, ``"+Infinity"``, ``"-Infinity"``,
                 ``"0x..."`` (exactly ``2 * itemsize`` hex digits: the exact bits) or ``"0b..."``
                 (exactly ``8 * itemsize`` binary digits); also ``bfloat16`` and ``float8_*``
complex          ``[re, im]``, each in one of the float forms of the component type
r<N>             a list of ``N / 8`` integers in 0..255; on read also a base64 string of N / 8 bytes
datetime64 etc.  the integer count of units (NaT is -2**63, as zarr-python writes it); ``"NaT"``
                 on read
utf32            the string (at most ``length_bytes / 4`` characters)
null-terminated  base64 of the bytes without trailing NULs
raw_bytes        base64 of the ``length_bytes`` bytes (a list of byte values on read too)
struct           an object of field name -> the field's fill value (a missing field takes its
                 type's default); on read also base64 of the little-endian bytes (zarr-python
                 3.1 and earlier)
================ ========================================================================
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarr3c.errors import MetadataError, UnknownExtensionError

__all__ = [
    "CORE_DATA_TYPE_NAMES",
    "MAX_ITEMSIZE",
    "DataType",
    "check_itemsize",
    "data_type_from_numpy",
    "from_zarr_python_dtype",
    "parse_data_type",
]

# Core data type names -> native-endian numpy dtypes.
_CORE: dict[str, np.dtype] = {
    name: np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
}

#: The fixed names of the core data types (raw bits ``r<N>`` come on top of these).
CORE_DATA_TYPE_NAMES: tuple[str, ...] = tuple(_CORE)

# No leading zeros: "r08" is not a name anyone writes, and accepting it would not round-trip.
_RAW_NAME = re.compile(r"r(0|[1-9][0-9]*)")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]+")
_BIN_DIGITS = re.compile(r"[01]+")

#: The largest element (``itemsize``, in bytes) of an array zarr3c opens or creates: 64 MiB.
#: A fill value is held as the exact bits of one element, so opening an array builds one
#: element before any data is asked for; numpy's own limit (2**31 - 1 bytes for ``S``/``V``)
#: would let a few bytes of metadata (``"|S2000000000"``, ``"length_bytes": 2000000000``)
#: make every open allocate 2 GB.  64 MiB is far above any fixed-length string or record
#: stored in Zarr, and keeps that allocation small next to the data a read returns.
MAX_ITEMSIZE = 1 << 26

_FLOAT_SPECIALS = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}


# numpy.datetime64 / numpy.timedelta64: the numpy kind of each, and the units zarr-python 3.4
# accepts ("μs" is read as numpy's "us").
_TIME_KINDS = {"numpy.datetime64": "M", "numpy.timedelta64": "m"}
_TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic")
_NAT = -(2**63)  # the int64 bits of NaT, which zarr-python writes as the fill value

# Fixed-size extension types configured by ``length_bytes``: the numpy kind of each.
_LENGTH_KINDS = {"fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V"}
_LENGTH_NAMES = {kind: name for name, kind in _LENGTH_KINDS.items()}

# zarr-python 3.0 wrote structs under the name "structured" with [name, type] field pairs.
_STRUCT_NAMES = ("struct", "structured")

# ml_dtypes types, by the names tensorstore, zarrs and zarr-extensions give them.
_ML_FLOAT_NAMES = (
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
)
_ML_INT_NAMES = ("int2", "int4", "uint2", "uint4")
_ML_CACHE: dict[str, np.dtype] = {}


def _ml_dtypes() -> dict[str, np.dtype]:
    """The ml_dtypes types this install of ml_dtypes has, by name ({} without ml_dtypes)."""
    if not _ML_CACHE:
        try:
            import ml_dtypes  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return {}
        for name in (*_ML_FLOAT_NAMES, *_ML_INT_NAMES):
            scalar_type = getattr(ml_dtypes, name, None)
            if scalar_type is not None:
                _ML_CACHE[name] = np.dtype(scalar_type)
    return _ML_CACHE


def _ml_name(dtype: np.dtype) -> str | None:
    """The ml_dtypes name of ``dtype``, or None for any other dtype."""
    if dtype.type.__module__.split(".")[0] != "ml_dtypes":
        return None
    for name, ml in _ml_dtypes().items():
        if ml == dtype:
            return name
    return None


def _describe(value: Any) -> str:
    """A short rendering of a (JSON) value for error messages."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _describe_json(value: Any) -> str:
    """A ``data_type`` JSON value as :meth:`DataType.describe` renders it."""
    if not isinstance(value, dict):
        return value if isinstance(value, str) else json.dumps(value)
    parts = []
    for key, item in (value.get("configuration") or {}).items():
        if key == "fields" and isinstance(item, list):
            fields = ", ".join(f"{f.get('name')}: {_describe_json(f.get('data_type'))}"
                               if isinstance(f, dict) else json.dumps(f) for f in item)
            parts.append(f"fields=[{fields}]")
        else:
            parts.append(f"{key}={json.dumps(item)}")
    return f"{value.get('name')}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class DataType:
    """A Zarr v3 core data type.

    Parameters
    ----------
    name
        The identifier written in ``zarr.json`` (``"float32"``, ``"r24"``).
    dtype
        The native-endian numpy dtype (numpy void ``V{n}`` for raw bits).

    Build instances through :func:`parse_data_type` (from JSON) or
    :func:`data_type_from_numpy` (from a user's dtype).

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (the constructor does not check that ``name`` and
        ``dtype`` agree: the two functions above build matching pairs).

    Examples
    --------
    >>> from zarr3c.metadata import parse_data_type
    >>> dt = parse_data_type("float32")
    >>> dt.itemsize, dt.is_raw, dt.fill_value_to_json(dt.parse_fill_value("NaN"))
    (4, False, 'NaN')
    """

    name: str
    dtype: np.dtype

    @property
    def itemsize(self) -> int:
        """Size of one element in bytes."""
        return int(self.dtype.itemsize)

    @property
    def is_raw(self) -> bool:
        """True for opaque bytes: the raw-bits types ``r<N>`` and ``raw_bytes``."""
        return self.dtype.type is np.void and self.dtype.fields is None

    @property
    def family(self) -> str:
        """Which rules the type follows: ``"core"`` (numbers, bool), ``"r"`` (raw bits),
        ``"time"``, ``"utf32"``, ``"null_terminated"``, ``"raw_bytes"``, ``"struct"``,
        ``"ml_float"``, ``"ml_int"``, or ``"other"`` (a subclass's own type)."""
        name = self.name
        if name in _CORE:
            return "core"
        if name in _TIME_KINDS:
            return "time"
        if name == "fixed_length_utf32":
            return "utf32"
        if name == "null_terminated_bytes":
            return "null_terminated"
        if name == "raw_bytes":
            return "raw_bytes"
        if name in _STRUCT_NAMES:
            return "struct"
        if name in _ML_FLOAT_NAMES:
            return "ml_float"
        if name in _ML_INT_NAMES:
            return "ml_int"
        if _RAW_NAME.fullmatch(name):
            return "r"
        return "other"

    @property
    def fields(self) -> tuple[tuple[str, DataType], ...]:
        """A struct's fields as (name, data type) pairs; ``()`` for every other type."""
        if self.family != "struct" or self.dtype.names is None:
            return ()
        return tuple(
            (field, data_type_from_numpy(self.dtype.fields[field][0]))  # type: ignore[index]
            for field in self.dtype.names
        )

    def to_json(self) -> Any:
        """The ``data_type`` value of ``zarr.json``: the name, or for a configured type the
        ``{"name", "configuration"}`` object zarr-python 3.4 writes.

        Returns
        -------
        str | dict
            ``"float32"``, ``"r24"``, ``"bfloat16"``, or an object such as
            ``{"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}``.

        Raises
        ------
        None
            Every data type has a JSON form.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.metadata import data_type_from_numpy
        >>> data_type_from_numpy("M8[10s]").to_json()
        {'name': 'numpy.datetime64', 'configuration': {'unit': 's', 'scale_factor': 10}}
        >>> data_type_from_numpy("<U3").to_json()
        {'name': 'fixed_length_utf32', 'configuration': {'length_bytes': 12}}
        """
        family = self.family
        if family == "time":
            unit, count = np.datetime_data(self.dtype)
            return {"name": self.name, "configuration": {"unit": unit, "scale_factor": count}}
        if family in ("utf32", "null_terminated", "raw_bytes"):
            return {"name": self.name, "configuration": {"length_bytes": self.itemsize}}
        if family == "struct":
            return {
                "name": "struct",
                "configuration": {
                    "fields": [{"name": f, "data_type": d.to_json()} for f, d in self.fields]
                },
            }
        return self.name

    def describe(self) -> str:
        """The data type with its configuration, for people (``info``): the name of a type
        without one, else ``name(key=value, ...)`` from :meth:`to_json`, a struct's fields
        as ``name: type``.

        Returns
        -------
        str
            ``"float32"``, ``'numpy.datetime64(unit="s", scale_factor=10)'``,
            ``"struct(fields=[x: float32, y: int8])"``.

        Raises
        ------
        None
            Every data type has a JSON form to render.

        Examples
        --------
        >>> from zarr3c.metadata import data_type_from_numpy
        >>> data_type_from_numpy("M8[10s]").describe()
        'numpy.datetime64(unit="s", scale_factor=10)'
        >>> data_type_from_numpy([("x", "<f4"), ("n", "<U2")]).describe()
        'struct(fields=[x: float32, n: fixed_length_utf32(length_bytes=8)])'
        >>> data_type_from_numpy("int16").describe()
        'int16'
        """
        return _describe_json(self.to_json())

    # -- fill values: JSON -> bits --------------------------------------------------------

    def parse_fill_value(
        self, value: Any, *, path: str = "fill_value", source: str | None = None
    ) -> bytes:
        """Parse a ``fill_value`` JSON value into its exact bits.

        Parameters
        ----------
        value
            The decoded JSON value.
        path
            JSON path used in error messages.
        source
            Store key or file of the document, for error messages.

        Returns
        -------
        bytes
            ``itemsize`` bytes in native byte order.

        Raises
        ------
        MetadataError
            If ``value`` is not a valid fill value for this data type (``null`` included).

        Examples
        --------
        >>> from zarr3c.metadata import parse_data_type
        >>> parse_data_type("float32").parse_fill_value("NaN")
        b'\\x00\\x00\\xc0\\x7f'
        >>> parse_data_type("uint8").parse_fill_value(300)
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: fill_value: ...
        """
        if value is None:
            raise MetadataError(
                f"null is not a valid fill value (data type {self.name})", path=path, source=source
            )
        if self.family not in ("core", "r", "other"):
            return _parse_extension_fill(self, value, path=path, source=source)
        kind = self.dtype.kind
        if kind == "b":
            if value is True:
                return b"\x01"
            if value is False:
                return b"\x00"
            raise MetadataError(
                f"fill value for data type bool must be true or false, got {_describe(value)}",
                path=path,
                source=source,
            )
        if kind in "iu":
            return _parse_int(value, self.dtype, self.name, path=path, source=source)
        if kind == "f":
            return _parse_float_json(value, self.dtype, self.name, path=path, source=source)
        if kind == "c":
            comp = np.dtype(f"f{self.itemsize // 2}")
            if not isinstance(value, list | tuple) or len(value) != 2:
                raise MetadataError(
                    f"fill value for data type {self.name} must be a two-element array "
                    f"[real, imag], got {_describe(value)}",
                    path=path,
                    source=source,
                )
            return _parse_float_json(
                value[0], comp, self.name, path=f"{path}[0]", source=source
            ) + _parse_float_json(value[1], comp, self.name, path=f"{path}[1]", source=source)
        # raw bits
        return _parse_raw(value, self.itemsize, self.name, path=path, source=source)

    # -- fill values: bits -> JSON --------------------------------------------------------

    def fill_value_to_json(self, raw: bytes) -> Any:
        """The canonical JSON form of a fill value that round-trips its exact bits.

        Parameters
        ----------
        raw
            ``itemsize`` bytes in native byte order.

        Returns
        -------
        bool | int | float | str | list
            ``true``/``false`` for bool; an integer for integer types; for floats a number
            (whose float64 value converts back to the same bits), ``"NaN"`` for the canonical
            quiet NaN, ``"0x..."`` for any other NaN, ``"Infinity"``/``"-Infinity"``;
            ``[re, im]`` for complex types; a list of byte values for raw bits.

        Raises
        ------
        MetadataError
            If ``raw`` does not have ``itemsize`` bytes.

        Examples
        --------
        >>> from zarr3c.metadata import parse_data_type
        >>> parse_data_type("float64").fill_value_to_json(bytes(8))
        0.0
        >>> parse_data_type("complex64").fill_value_to_json(bytes(8))
        [0.0, 0.0]
        """
        raw = bytes(raw)
        if len(raw) != self.itemsize:
            raise MetadataError(
                f"fill value has {len(raw)} bytes, data type {self.name} needs {self.itemsize}",
                path="fill_value",
            )
        if self.family not in ("core", "r", "other"):
            return _extension_fill_to_json(self, raw)
        kind = self.dtype.kind
        if kind == "b":
            return raw != b"\x00"
        if kind in "iu":
            return int(np.frombuffer(raw, dtype=self.dtype)[0])
        if kind == "f":
            return _float_bits_to_json(raw, self.dtype)
        if kind == "c":
            half = self.itemsize // 2
            comp = np.dtype(f"f{half}")
            return [_float_bits_to_json(raw[:half], comp), _float_bits_to_json(raw[half:], comp)]
        return list(raw)

    # -- fill values: Python -> bits --------------------------------------------------------

    def fill_value_from_python(self, value: Any) -> bytes:
        """Convert a user's fill value (as given to ``create_array``) into its exact bits.

        Parameters
        ----------
        value
            ``None`` (zeros / ``False``); a Python or numpy bool, int, float or complex; a
            numpy scalar or 0-d array (bit-exact when its dtype matches, whatever its byte
            order); ``bytes`` (or ``np.void``) of ``itemsize`` for raw bits; or any JSON fill
            value form (``"NaN"``, ``"0x7fc00001"``, ``[re, im]``, ...).

        Returns
        -------
        bytes
            ``itemsize`` bytes in native byte order.

        Raises
        ------
        MetadataError
            If the value does not fit the data type (``300`` for uint8, ``1.5`` for an
            integer type, a string for an integer type, ...).

        Examples
        --------
        >>> from zarr3c.metadata import parse_data_type
        >>> parse_data_type("int16").fill_value_from_python(-2)
        b'\\xfe\\xff'
        >>> parse_data_type("uint8").fill_value_from_python(1.5)
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: fill_value: ...
        """
        if value is None:
            return self.default_fill_value()
        if isinstance(value, np.ndarray):
            if value.ndim != 0:
                raise MetadataError(
                    f"fill value must be a scalar, got an array of shape {value.shape}",
                    path="fill_value",
                )
            value = value[()]
        if isinstance(value, np.generic):
            same = value.dtype.newbyteorder("=") == self.dtype
            if same:
                # Bit-exact (NaN payloads kept): a byte-order change is a pure byte swap.
                return np.asarray(value).astype(self.dtype).tobytes()
        if self.family not in ("core", "r", "other"):
            return _extension_fill_from_python(self, value)
        kind = self.dtype.kind
        if isinstance(value, str | list | tuple):
            return self.parse_fill_value(list(value) if isinstance(value, tuple) else value)
        if kind == "b":
            if isinstance(value, bool | np.bool_):
                return b"\x01" if value else b"\x00"
            if isinstance(value, int | np.integer) and int(value) in (0, 1):
                return b"\x01" if int(value) else b"\x00"
            raise MetadataError(
                f"fill value {_describe(value)} is not a bool", path="fill_value"
            )
        if kind in "iu":
            if isinstance(value, bool | np.bool_ | np.integer):
                value = int(value)
            elif isinstance(value, float | np.floating):
                value = float(value)
            elif not isinstance(value, int):
                raise MetadataError(
                    f"fill value {_describe(value)} is not an integer (data type {self.name})",
                    path="fill_value",
                )
            return _parse_int(value, self.dtype, self.name, path="fill_value", source=None)
        if kind == "f":
            return _float_from_python(value, self.dtype, self.name)
        if kind == "c":
            comp = np.dtype(f"f{self.itemsize // 2}")
            if isinstance(value, complex | np.complexfloating):
                c = complex(value)
                return _float_from_python(c.real, comp, self.name) + _float_from_python(
                    c.imag, comp, self.name
                )
            return _float_from_python(value, comp, self.name) + bytes(comp.itemsize)
        # raw bits
        if isinstance(value, np.void) and value.dtype.itemsize == self.itemsize:
            return bytes(value.tobytes())
        if isinstance(value, bytes | bytearray | memoryview):
            data = bytes(value)
            if len(data) != self.itemsize:
                raise MetadataError(
                    f"fill value has {len(data)} bytes, data type {self.name} needs "
                    f"{self.itemsize}",
                    path="fill_value",
                )
            return data
        raise MetadataError(
            f"fill value {_describe(value)} is not valid for data type {self.name} "
            "(give bytes or a list of byte values)",
            path="fill_value",
        )

    def default_fill_value(self) -> bytes:
        """All-zero bits (``False``, ``0``, ``0.0``, ``0j``, zero bytes, an empty string), but
        NaT for ``numpy.datetime64`` / ``numpy.timedelta64``, as zarr-python 3.4 writes.

        Returns
        -------
        bytes
            ``itemsize`` zero bytes.

        Raises
        ------
        None
            Every data type has one.

        Examples
        --------
        >>> from zarr3c.metadata import parse_data_type
        >>> parse_data_type("uint16").default_fill_value()
        b'\\x00\\x00'
        """
        if self.family == "time":
            return np.array(_NAT, dtype="i8").tobytes()
        return bytes(self.itemsize)

    def fill_array(self, raw: bytes) -> np.ndarray:
        """A fill value's bits as a read-only 0-d array of the data type's dtype.

        Parameters
        ----------
        raw : bytes
            The bits (``itemsize`` bytes).

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValueError
            If ``raw`` is not ``itemsize`` bytes.

        Examples
        --------
        >>> from zarr3c.metadata import parse_data_type
        >>> int(parse_data_type("uint16").fill_array(b"\\x01\\x00"))
        1
        """
        return np.frombuffer(raw, dtype=self.dtype).reshape(())


# -- helpers --------------------------------------------------------------------------------------


def _parse_int(
    value: Any, dtype: np.dtype, name: str, *, path: str, source: str | None
) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetadataError(
            f"fill value for data type {name} must be an integer, got {_describe(value)}",
            path=path,
            source=source,
        )
    if isinstance(value, float):
        if not value.is_integer():
            raise MetadataError(
                f"fill value for data type {name} must be an integer, got {_describe(value)}",
                path=path,
                source=source,
            )
        value = int(value)
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise MetadataError(
            f"fill value {value} is out of range for data type {name} "
            f"[{info.min}, {info.max}]",
            path=path,
            source=source,
        )
    return np.array(value, dtype=dtype).tobytes()


def _uint_dtype(itemsize: int) -> np.dtype:
    return np.dtype(f"u{itemsize}")


def _float_from_number(
    value: float, dtype: np.dtype, name: str, *, path: str, source: str | None
) -> bytes:
    try:
        f = float(value)
    except OverflowError:
        raise MetadataError(
            f"fill value {_describe(value)} is out of range for data type {name}",
            path=path,
            source=source,
        ) from None
    with np.errstate(over="ignore"):
        arr = np.array(f, dtype=dtype)
    if math.isfinite(f) and not np.isfinite(arr):
        raise MetadataError(
            f"fill value {_describe(value)} is out of range for data type {name} "
            f"(largest finite value {float(np.finfo(dtype).max)!r})",
            path=path,
            source=source,
        )
    return arr.tobytes()


def _parse_float_json(
    value: Any, dtype: np.dtype, name: str, *, path: str, source: str | None
) -> bytes:
    """Parse one float (or complex component) fill value of numpy float ``dtype``."""
    if isinstance(value, bool):
        raise MetadataError(
            f"fill value for data type {name} must be a number or one of \"NaN\", "
            f"\"Infinity\", \"-Infinity\", \"0x...\", \"0b...\", got {_describe(value)}",
            path=path,
            source=source,
        )
    if isinstance(value, int | float):
        return _float_from_number(value, dtype, name, path=path, source=source)
    if isinstance(value, str):
        special = _FLOAT_SPECIALS.get(value)
        if special is not None:
            return np.array(special, dtype=dtype).tobytes()
        size = dtype.itemsize
        if value.startswith("0x"):
            digits = value[2:]
            if len(digits) != 2 * size or not _HEX_DIGITS.fullmatch(digits):
                raise MetadataError(
                    f"hexadecimal fill value {value!r} for data type {name} must have exactly "
                    f"{2 * size} hex digits after '0x'",
                    path=path,
                    source=source,
                )
            return np.array(int(digits, 16), dtype=_uint_dtype(size)).tobytes()
        if value.startswith("0b"):
            digits = value[2:]
            if len(digits) != 8 * size or not _BIN_DIGITS.fullmatch(digits):
                raise MetadataError(
                    f"binary fill value {value!r} for data type {name} must have exactly "
                    f"{8 * size} binary digits after '0b'",
                    path=path,
                    source=source,
                )
            return np.array(int(digits, 2), dtype=_uint_dtype(size)).tobytes()
    raise MetadataError(
        f"fill value for data type {name} must be a number or one of \"NaN\", \"Infinity\", "
        f"\"-Infinity\", \"0x...\", \"0b...\", got {_describe(value)}",
        path=path,
        source=source,
    )


def _float_from_python(value: Any, dtype: np.dtype, name: str) -> bytes:
    """A user's real value (Python/numpy number or JSON form) as bits of float ``dtype``."""
    if isinstance(value, np.floating) and value.dtype.newbyteorder("=") == dtype:
        return np.asarray(value).astype(dtype).tobytes()
    if isinstance(value, str):
        return _parse_float_json(value, dtype, name, path="fill_value", source=None)
    if isinstance(value, bool | np.bool_):
        value = int(value)
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, np.floating):
        value = float(value)
    if isinstance(value, int | float):
        return _float_from_number(value, dtype, name, path="fill_value", source=None)
    raise MetadataError(
        f"fill value {_describe(value)} is not a real number (data type {name})",
        path="fill_value",
    )


def _float_bits_to_json(raw: bytes, dtype: np.dtype) -> float | str:
    value = np.frombuffer(raw, dtype=dtype)[0]
    if np.isnan(value):
        if raw == np.array(np.nan, dtype=dtype).tobytes():
            return "NaN"
        bits = int(np.frombuffer(raw, dtype=_uint_dtype(dtype.itemsize))[0])
        return f"0x{bits:0{2 * dtype.itemsize}x}"
    if np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    # float16/float32 -> float64 is exact, and float64 -> float16/32 gives the bits back.
    return float(value)


def _parse_raw(value: Any, size: int, name: str, *, path: str, source: str | None) -> bytes:
    if isinstance(value, list):
        if len(value) != size:
            raise MetadataError(
                f"fill value for data type {name} must be a list of {size} byte values, "
                f"got {len(value)} values",
                path=path,
                source=source,
            )
        for i, b in enumerate(value):
            if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= 255:
                raise MetadataError(
                    f"byte value must be an integer in 0..255, got {_describe(b)}",
                    path=f"{path}[{i}]",
                    source=source,
                )
        return bytes(value)
    if isinstance(value, str):
        try:
            data = base64.b64decode(value.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise MetadataError(
                f"fill value for data type {name} is a string but not valid base64: "
                f"{_describe(value)}",
                path=path,
                source=source,
            ) from None
        if len(data) != size:
            raise MetadataError(
                f"base64 fill value for data type {name} decodes to {len(data)} bytes, "
                f"expected {size}",
                path=path,
                source=source,
            )
        return data
    raise MetadataError(
        f"fill value for data type {name} must be a list of {size} byte values (0..255) or "
        f"a base64 string, got {_describe(value)}",
        path=path,
        source=source,
    )


# -- extension fill values ------------------------------------------------------------------------


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (numpy's or ml_dtypes')."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    import ml_dtypes  # only ml_dtypes integers get here, so it is installed

    ml_info = ml_dtypes.iinfo(dtype)
    return int(ml_info.min), int(ml_info.max)


def _ml_int_bits(value: Any, data_type: DataType, *, path: str, source: str | None) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float) or (
        isinstance(value, float) and not value.is_integer()
    ):
        raise MetadataError(
            f"fill value for data type {data_type.name} must be an integer, got "
            f"{_describe(value)}",
            path=path,
            source=source,
        )
    lo, hi = _int_range(data_type.dtype)
    if not lo <= int(value) <= hi:
        raise MetadataError(
            f"fill value {int(value)} is out of range for data type {data_type.name} [{lo}, {hi}]",
            path=path,
            source=source,
        )
    return np.array(int(value), dtype="i8").astype(data_type.dtype).tobytes()


def _ml_float_bits(value: Any, data_type: DataType, *, path: str, source: str | None) -> bytes:
    """A JSON float fill value as bits of an ml_dtypes float type, refusing values the type
    would silently change (infinity where it has none, NaN where it has none, overflow)."""
    dtype = data_type.dtype
    size = dtype.itemsize
    if isinstance(value, str) and value[:2] in ("0x", "0b"):
        return _exact_bits(value, size, data_type.name, path=path, source=source)
    if isinstance(value, str) and value in _FLOAT_SPECIALS:
        f = _FLOAT_SPECIALS[value]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            f = float(value)
        except OverflowError:
            f = math.inf if value > 0 else -math.inf
    else:
        raise MetadataError(
            f"fill value for data type {data_type.name} must be a number or one of \"NaN\", "
            f"\"Infinity\", \"-Infinity\", \"0x...\", \"0b...\", got {_describe(value)}",
            path=path,
            source=source,
        )
    arr = np.array(f, dtype="f8").astype(dtype)
    back = float(arr.astype("f8"))
    same_class = (math.isnan(f) == math.isnan(back)) and (math.isinf(f) == math.isinf(back))
    if not same_class:
        raise MetadataError(
            f"fill value {_describe(value)} cannot be represented in data type "
            f"{data_type.name} (it would become {back!r})",
            path=path,
            source=source,
        )
    return arr.tobytes()


def _exact_bits(value: str, size: int, name: str, *, path: str, source: str | None) -> bytes:
    """The bits of a ``"0x..."`` / ``"0b..."`` fill value of a ``size``-byte type."""
    hexadecimal = value[:2] == "0x"
    digits, width = value[2:], (2 if hexadecimal else 8) * size
    pattern = _HEX_DIGITS if hexadecimal else _BIN_DIGITS
    if len(digits) != width or not pattern.fullmatch(digits):
        raise MetadataError(
            f"fill value {value!r} for data type {name} must have exactly {width} digits after "
            f"{value[:2]!r}",
            path=path,
            source=source,
        )
    return np.array(int(digits, 16 if hexadecimal else 2), dtype=_uint_dtype(size)).tobytes()


def _ml_float_to_json(raw: bytes, dtype: np.dtype) -> float | str:
    value = float(np.frombuffer(raw, dtype=dtype).astype("f8")[0])
    if math.isnan(value):
        if raw == np.array(math.nan, dtype="f8").astype(dtype).tobytes():
            return "NaN"
        bits = int.from_bytes(raw, "little" if np.little_endian else "big")
        return f"0x{bits:0{2 * dtype.itemsize}x}"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value  # every ml_dtypes float converts exactly to float64 and back


def _time_bits(value: Any, data_type: DataType, *, path: str, source: str | None) -> bytes:
    """A datetime64/timedelta64 fill value (an integer count of units or ``"NaT"``)."""
    if value == "NaT" and isinstance(value, str):
        return np.array(_NAT, dtype="i8").tobytes()
    if isinstance(value, bool) or not isinstance(value, int) or not _NAT <= value < 2**63:
        raise MetadataError(
            f"fill value for data type {data_type.name} must be an integer count of units "
            f"(within int64) or \"NaT\", got {_describe(value)}",
            path=path,
            source=source,
        )
    return np.array(value, dtype="i8").tobytes()


def _base64_bits(value: str, name: str, *, path: str, source: str | None) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MetadataError(
            f"fill value for data type {name} is not valid base64: {_describe(value)}",
            path=path,
            source=source,
        ) from None


def _parse_extension_fill(
    data_type: DataType, value: Any, *, path: str, source: str | None
) -> bytes:
    """The bits of a JSON fill value of an extension data type (see the module table)."""
    family = data_type.family
    size = data_type.itemsize
    name = data_type.name
    if family == "time":
        return _time_bits(value, data_type, path=path, source=source)
    if family == "utf32":
        if not isinstance(value, str):
            raise MetadataError(
                f"fill value for data type {name} must be a string, got {_describe(value)}",
                path=path,
                source=source,
            )
        if len(value) > size // 4:
            raise MetadataError(
                f"fill value {_describe(value)} has {len(value)} characters; data type {name} "
                f"holds {size // 4}",
                path=path,
                source=source,
            )
        return value.encode("utf-32-le" if np.little_endian else "utf-32-be",
                            "surrogatepass").ljust(size, b"\0")
    if family in ("null_terminated", "raw_bytes"):
        if isinstance(value, list):
            data = _parse_raw(value, len(value), name, path=path, source=source)
        elif isinstance(value, str):
            data = _base64_bits(value, name, path=path, source=source)
        else:
            raise MetadataError(
                f"fill value for data type {name} must be a base64 string, got "
                f"{_describe(value)}",
                path=path,
                source=source,
            )
        if len(data) > size or (family == "raw_bytes" and len(data) != size):
            raise MetadataError(
                f"fill value for data type {name} has {len(data)} bytes, expected "
                f"{'at most ' if family == 'null_terminated' else ''}{size}",
                path=path,
                source=source,
            )
        return data.ljust(size, b"\0")
    if family == "struct":
        return _struct_fill(data_type, value, path=path, source=source)
    if family == "ml_float":
        return _ml_float_bits(value, data_type, path=path, source=source)
    return _ml_int_bits(value, data_type, path=path, source=source)


def _struct_fill(data_type: DataType, value: Any, *, path: str, source: str | None) -> bytes:
    dtype = data_type.dtype
    if isinstance(value, str):
        # zarr-python before 3.2 wrote the little-endian bytes of the whole struct.
        data = _base64_bits(value, data_type.name, path=path, source=source)
        if len(data) != dtype.itemsize:
            raise MetadataError(
                f"base64 fill value for data type struct decodes to {len(data)} bytes, "
                f"expected {dtype.itemsize}",
                path=path,
                source=source,
            )
        return np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype).tobytes()
    if not isinstance(value, dict):
        raise MetadataError(
            f"fill value for data type struct must be an object of field values, got "
            f"{_describe(value)}",
            path=path,
            source=source,
        )
    fields = data_type.fields
    unknown = sorted(set(value) - {f for f, _ in fields})
    if unknown:
        raise MetadataError(
            f"fill value names fields the struct does not have: {unknown}",
            path=path,
            source=source,
        )
    parts = []
    for field, field_type in fields:
        if field in value:
            parts.append(field_type.parse_fill_value(value[field], path=f"{path}.{field}",
                                                     source=source))
        else:
            parts.append(field_type.default_fill_value())
    return b"".join(parts)


def _extension_fill_to_json(data_type: DataType, raw: bytes) -> Any:
    family = data_type.family
    dtype = data_type.dtype
    if family == "time":
        return int(np.frombuffer(raw, dtype="i8")[0])
    if family == "utf32":
        return str(np.frombuffer(raw, dtype=dtype)[0])
    if family == "null_terminated":
        # numpy's bytes scalar drops trailing NULs, and zarr-python encodes that scalar.
        return base64.standard_b64encode(raw.rstrip(b"\0")).decode("ascii")
    if family == "raw_bytes":
        return base64.standard_b64encode(raw).decode("ascii")
    if family == "struct":
        out = {}
        for field, field_type in data_type.fields:
            offset = dtype.fields[field][1]  # type: ignore[index]
            out[field] = field_type.fill_value_to_json(raw[offset : offset + field_type.itemsize])
        return out
    if family == "ml_float":
        return _ml_float_to_json(raw, dtype)
    return int(np.frombuffer(raw, dtype=dtype).astype("i8")[0])


def _extension_fill_from_python(data_type: DataType, value: Any) -> bytes:
    family = data_type.family
    dtype = data_type.dtype
    name = data_type.name
    if isinstance(value, np.generic):
        value = value.item() if family in ("ml_float", "ml_int") and not isinstance(
            value, np.void) else value
    try:
        if family == "time":
            # (before the integer test: numpy's timedelta64 is an integer subclass)
            if isinstance(value, np.datetime64 | np.timedelta64):
                if value.dtype.kind != dtype.kind:
                    raise MetadataError(
                        f"fill value {_describe(value)} is not a value of data type {name}",
                        path="fill_value",
                    )
                return np.asarray(value).astype(dtype).tobytes()
            if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
                return _time_bits(int(value), data_type, path="fill_value", source=None)
            return np.array(value, dtype=dtype).tobytes()
        if family == "utf32":
            if not isinstance(value, str):
                raise MetadataError(
                    f"fill value {_describe(value)} is not a string (data type {name})",
                    path="fill_value",
                )
            return _parse_extension_fill(data_type, value, path="fill_value", source=None)
        if family == "null_terminated":
            if isinstance(value, str):
                value = value.encode("ascii")
            if not isinstance(value, bytes | bytearray):
                raise MetadataError(
                    f"fill value {_describe(value)} is not bytes (data type {name})",
                    path="fill_value",
                )
            if len(value) > dtype.itemsize:
                raise MetadataError(
                    f"fill value has {len(value)} bytes; data type {name} holds "
                    f"{dtype.itemsize}",
                    path="fill_value",
                )
            return bytes(value).ljust(dtype.itemsize, b"\0")
        if family == "raw_bytes":
            if isinstance(value, np.void) and value.dtype.fields is None:
                value = value.tobytes()
            if isinstance(value, bytes | bytearray | memoryview):
                return _parse_raw(list(bytes(value)), dtype.itemsize, name, path="fill_value",
                                  source=None)
            return _parse_extension_fill(data_type, value, path="fill_value", source=None)
        if family == "struct":
            if isinstance(value, dict | str):
                return _struct_fill(data_type, value, path="fill_value", source=None)
            return np.array(value, dtype=dtype).tobytes()
        if family == "ml_float" and isinstance(value, str):
            return _ml_float_bits(value, data_type, path="fill_value", source=None)
        if isinstance(value, bool):
            value = int(value)
        if family == "ml_float":
            return _ml_float_bits(value, data_type, path="fill_value", source=None)
        return _ml_int_bits(value, data_type, path="fill_value", source=None)
    except (ValueError, TypeError, OverflowError, UnicodeEncodeError) as exc:
        if isinstance(exc, MetadataError):
            raise
        raise MetadataError(
            f"fill value {_describe(value)} is not a value of data type {name}: {exc}",
            path="fill_value",
        ) from None


def check_itemsize(dtype: np.dtype, *, path: str, source: str | None) -> None:
    """Refuse a dtype whose elements are larger than :data:`MAX_ITEMSIZE`.

    Parameters
    ----------
    dtype : numpy.dtype
        The dtype of the elements.
    path, source : str
        The metadata field and the document it came from, for the message.

    Returns
    -------
    None

    Raises
    ------
    MetadataError
        If one element of ``dtype`` has more than :data:`MAX_ITEMSIZE` bytes.

    Examples
    --------
    >>> import numpy as np
    >>> check_itemsize(np.dtype("S8"), path="dtype", source=None)
    >>> check_itemsize(np.dtype("S2000000000"), path="dtype", source="a/.zarray")
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: a/.zarray: dtype: elements of dtype |S2000000000 have ...
    """
    size = _element_bytes(dtype)
    if size > MAX_ITEMSIZE or not 0 <= dtype.itemsize <= MAX_ITEMSIZE:
        raise MetadataError(
            f"elements of {'a structured dtype' if dtype.names else 'dtype ' + dtype.str} "
            f"have {size:,} bytes; zarr3c holds "
            f"elements of at most {MAX_ITEMSIZE:,} bytes (one element is built to open "
            "the array)",
            path=path,
            source=source,
        )


def _element_bytes(dtype: np.dtype) -> int:
    """The bytes of one element, summed over fields and subarrays in Python integers: numpy
    keeps a structured dtype's size and offsets in 32 bits, and wraps past 2**31 (forty
    fields of 64 MiB have an ``itemsize`` of -1610612736)."""
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return math.prod(shape) * _element_bytes(base)
    if dtype.names is None:
        return int(dtype.itemsize)
    fields: Any = dtype.fields
    return sum(_element_bytes(fields[name][0]) for name in dtype.names)


def _raw_data_type(nbits: int, *, path: str, source: str | None) -> DataType:
    if nbits <= 0 or nbits % 8:
        raise MetadataError(
            f"raw data type r{nbits}: the number of bits must be a positive multiple of 8",
            path=path,
            source=source,
        )
    nbytes = nbits // 8
    if nbytes > MAX_ITEMSIZE:
        raise MetadataError(
            f"raw data type r{nbits} is too large (at most r{8 * MAX_ITEMSIZE})",
            path=path,
            source=source,
        )
    return DataType(name=f"r{nbits}", dtype=np.dtype(f"V{nbytes}"))


# -- module functions ------------------------------------------------------------------------------


def parse_data_type(
    value: Any, *, path: str = "data_type", source: str | None = None
) -> DataType:
    """Parse the ``data_type`` JSON value.

    Parameters
    ----------
    value
        A core data type name (``"int16"``, ``"r24"``), or the extension form
        ``{"name": "int16"}`` naming a core type without configuration.
    path, source
        Where the value came from, for error messages.

    Returns
    -------
    DataType
        The data type.

    Raises
    ------
    UnknownExtensionError
        For any other name (``"no_such_type"``), in either form.
    MetadataError
        If the value is neither a string nor an object with a string ``name``.

    Examples
    --------
    >>> from zarr3c.metadata import parse_data_type
    >>> parse_data_type("r24"), parse_data_type({"name": "int16"}).itemsize
    (DataType(name='r24', dtype=dtype('V3')), 2)
    >>> parse_data_type("string").name
    'string'
    >>> parse_data_type("no_such_type")
    Traceback (most recent call last):
    ...
    zarr3c.errors.UnknownExtensionError: data_type: unknown data type 'no_such_type' ...
    """
    name: Any = value
    configured = False
    if isinstance(value, dict):
        name = value.get("name")
        if not isinstance(name, str):
            raise MetadataError(
                f"data type object must have a string \"name\", got {_describe(value)}",
                path=path,
                source=source,
            )
        extra = set(value) - {"name", "configuration"}
        configuration = value.get("configuration")
        configured = bool(extra) or configuration not in (None, {})
    elif not isinstance(value, str):
        raise MetadataError(
            f"data type must be a string or an object, got {_describe(value)}",
            path=path,
            source=source,
        )
    dtype = _CORE.get(name)
    if dtype is not None and not configured:
        return DataType(name=name, dtype=dtype)
    m = _RAW_NAME.fullmatch(name)
    if m is not None and not configured:
        return _raw_data_type(int(m.group(1)), path=path, source=source)
    from zarr3c.metadata.vlen_types import VLEN_NAMES  # (it builds on DataType)

    if name in VLEN_NAMES and not configured:
        return VLEN_NAMES[name]
    if isinstance(value, dict) and (
        name in _TIME_KINDS or name in _LENGTH_KINDS or name in _STRUCT_NAMES
    ):
        return _parse_configured(name, value, path=path, source=source)
    if name in _ML_FLOAT_NAMES or name in _ML_INT_NAMES:
        ml = _ml_dtypes().get(name)
        if ml is None:
            raise UnknownExtensionError(
                f"data type {name!r} needs the ml_dtypes package (pip install ml_dtypes)",
                path=path,
                source=source,
            )
        if configured:
            raise MetadataError(f"data type {name!r} takes no configuration", path=path,
                                source=source)
        return DataType(name=name, dtype=ml)
    if name in _TIME_KINDS or name in _LENGTH_KINDS or name in _STRUCT_NAMES:
        raise MetadataError(
            f"data type {name!r} needs a configuration: write it as an object "
            f"{{\"name\": {name!r}, \"configuration\": {{...}}}}",
            path=path,
            source=source,
        )
    raise UnknownExtensionError(
        f"unknown data type {name!r} (zarr3c supports {', '.join(CORE_DATA_TYPE_NAMES)}, "
        "raw bits r8, r16, ..., string, variable_length_bytes, numpy.datetime64, "
        "numpy.timedelta64, fixed_length_utf32, null_terminated_bytes, raw_bytes, struct, and "
        "with ml_dtypes bfloat16, float8_*, int4, uint4)",
        path=path,
        source=source,
    )


def _configuration(value: dict[str, Any], keys: tuple[str, ...], *, path: str,
                   source: str | None) -> dict[str, Any]:
    """The ``configuration`` object of a data type, with exactly ``keys``."""
    name = value["name"]
    extra = set(value) - {"name", "configuration"}
    if extra:
        raise MetadataError(f"unexpected member(s) {sorted(extra)} in data type {name!r}",
                            path=path, source=source)
    config = value.get("configuration")
    if not isinstance(config, dict):
        raise MetadataError(
            f"data type {name!r} needs a configuration object with {list(keys)}, got "
            f"{_describe(config)}",
            path=f"{path}.configuration",
            source=source,
        )
    for key in keys:
        if key not in config:
            raise MetadataError(f"missing {key!r} for data type {name!r}",
                                path=f"{path}.configuration.{key}", source=source)
    extra = set(config) - set(keys)
    if extra:
        raise MetadataError(f"unexpected member(s) {sorted(extra)} for data type {name!r}",
                            path=f"{path}.configuration", source=source)
    return config


def _config_int(config: dict[str, Any], key: str, lo: int, hi: int, *, path: str,
                source: str | None) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise MetadataError(f"must be an integer in [{lo}, {hi}], got {_describe(value)}",
                            path=f"{path}.configuration.{key}", source=source)
    return value


def _parse_configured(name: str, value: dict[str, Any], *, path: str,
                      source: str | None) -> DataType:
    """A data type of the configured extensions: times, fixed-size strings/bytes, structs."""
    if name in _TIME_KINDS:
        config = _configuration(value, ("unit", "scale_factor"), path=path, source=source)
        unit = config["unit"]
        if unit == "\u03bcs":
            unit = "us"
        if unit not in _TIME_UNITS:
            raise MetadataError(f"must be one of {list(_TIME_UNITS)}, got {_describe(unit)}",
                                path=f"{path}.configuration.unit", source=source)
        scale = _config_int(config, "scale_factor", 1, 2**31 - 1, path=path, source=source)
        if unit == "generic" and scale != 1:
            raise MetadataError("must be 1 for the generic unit",
                                path=f"{path}.configuration.scale_factor", source=source)
        code = _TIME_KINDS[name]
        spec = f"{code}8" if unit == "generic" else f"{code}8[{scale}{unit}]"
        return DataType(name=name, dtype=np.dtype(spec))
    if name in _LENGTH_KINDS:
        config = _configuration(value, ("length_bytes",), path=path, source=source)
        length = _config_int(config, "length_bytes", 1, MAX_ITEMSIZE, path=path,
                             source=source)
        kind = _LENGTH_KINDS[name]
        if kind == "U":
            if length % 4:
                raise MetadataError(
                    f"must be a multiple of 4 (UTF-32 code units), got {length}",
                    path=f"{path}.configuration.length_bytes", source=source)
            return DataType(name=name, dtype=np.dtype(f"U{length // 4}"))
        return DataType(name=name, dtype=np.dtype(f"{kind}{length}"))
    config = _configuration(value, ("fields",), path=path, source=source)
    fields = config["fields"]
    where = f"{path}.configuration.fields"
    if not isinstance(fields, list) or not fields:
        raise MetadataError(f"must be a non-empty list of fields, got {_describe(fields)}",
                            path=where, source=source)
    parts: list[tuple[str, np.dtype]] = []
    for i, field in enumerate(fields):
        if isinstance(field, dict) and set(field) == {"name", "data_type"}:
            field_name, field_type, type_path = (field["name"], field["data_type"],
                                                 f"{where}[{i}].data_type")
        elif isinstance(field, list) and len(field) == 2:  # "structured": [name, type]
            field_name, field_type, type_path = field[0], field[1], f"{where}[{i}][1]"
        else:
            raise MetadataError(
                f"a field must be {{\"name\": ..., \"data_type\": ...}}, got {_describe(field)}",
                path=f"{where}[{i}]", source=source)
        if not isinstance(field_name, str) or not field_name:
            raise MetadataError(f"a field name must be a non-empty string, got "
                                f"{_describe(field_name)}", path=f"{where}[{i}].name",
                                source=source)
        if any(field_name == seen for seen, _ in parts):
            raise MetadataError(f"duplicate field name {field_name!r}",
                                path=f"{where}[{i}].name", source=source)
        parts.append((field_name, parse_data_type(field_type, path=type_path,
                                                  source=source).dtype))
    dtype = np.dtype(parts)
    check_itemsize(dtype, path=where, source=source)
    return DataType(name="struct", dtype=dtype)


def data_type_from_numpy(dtype_like: Any) -> DataType:
    """The Zarr data type for a user's dtype.

    Parameters
    ----------
    dtype_like
        A :class:`DataType`; a Zarr name (``"uint16"``, ``"r24"``, ``"bfloat16"``) or
        ``data_type`` object (``{"name": "numpy.datetime64", "configuration": {...}}``); or
        anything :func:`numpy.dtype` accepts (``np.uint16``, ``">u2"``, ``"M8[ns]"``,
        ``"<U5"``, ``"S3"``, ``"V3"``, a structured dtype, ``ml_dtypes.bfloat16``).  Byte
        order is dropped: data is handled native-endian, the ``bytes`` codec sets it on disk.

    Returns
    -------
    DataType
        The data type (native-endian): the core type for numbers; ``numpy.datetime64`` /
        ``numpy.timedelta64`` for ``M``/``m``; ``fixed_length_utf32`` for ``U``;
        ``null_terminated_bytes`` for ``S``; ``raw_bytes`` for a plain ``V``; ``struct``
        for a structured dtype; the ml_dtypes names for ml_dtypes types.

    Raises
    ------
    MetadataError
        For dtypes zarr3c cannot hold (object, zero-size strings, subarrays, structured
        dtypes with padding or titles, longdouble, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.metadata import data_type_from_numpy
    >>> data_type_from_numpy(">u2"), data_type_from_numpy(np.bool_).name
    (DataType(name='uint16', dtype=dtype('uint16')), 'bool')
    >>> data_type_from_numpy("V3").to_json()
    {'name': 'raw_bytes', 'configuration': {'length_bytes': 3}}
    >>> data_type_from_numpy(object)
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: dtype: dtype object has no Zarr v3 core data type ...
    """
    if isinstance(dtype_like, DataType):
        return dtype_like
    if isinstance(dtype_like, dict):
        return parse_data_type(dtype_like, path="dtype")
    from zarr3c.metadata.vlen_types import vlen_type_for  # (it builds on DataType)

    vlen = vlen_type_for(dtype_like)
    if vlen is not None:
        return vlen
    if isinstance(dtype_like, str):
        if dtype_like in _CORE:
            return DataType(name=dtype_like, dtype=_CORE[dtype_like])
        m = _RAW_NAME.fullmatch(dtype_like)
        if m is not None:
            return _raw_data_type(int(m.group(1)), path="dtype", source=None)
        if dtype_like in _ML_FLOAT_NAMES or dtype_like in _ML_INT_NAMES:
            return parse_data_type(dtype_like, path="dtype")
    try:
        dtype = np.dtype(dtype_like)
    except (TypeError, ValueError) as exc:
        raise MetadataError(
            f"not a data type: {_describe(dtype_like)} ({exc})", path="dtype"
        ) from None
    ml_name = _ml_name(dtype)
    if ml_name is not None:
        return DataType(name=ml_name, dtype=_ml_dtypes()[ml_name])
    kind = dtype.kind
    if kind in "biufc":
        native = dtype.newbyteorder("=")
        for name, core in _CORE.items():
            if core == native:
                return DataType(name=name, dtype=core)
    elif kind in "Mm":
        return DataType(name="numpy.datetime64" if kind == "M" else "numpy.timedelta64",
                        dtype=dtype.newbyteorder("="))
    elif kind in "US" and dtype.itemsize > 0:
        check_itemsize(dtype, path="dtype", source=None)
        return DataType(name=_LENGTH_NAMES[kind], dtype=dtype.newbyteorder("="))
    elif kind == "V" and dtype.type is np.void and dtype.subdtype is None \
            and dtype.itemsize > 0:
        check_itemsize(dtype, path="dtype", source=None)
        if dtype.fields is None:
            return DataType(name="raw_bytes", dtype=np.dtype(f"V{dtype.itemsize}"))
        return _struct_from_numpy(dtype)
    raise MetadataError(
        f"dtype {dtype} has no Zarr v3 core data type or extension data type (supported: "
        f"{', '.join(CORE_DATA_TYPE_NAMES)}, r<N>, datetime64, timedelta64, U, S, V, "
        "structured, ml_dtypes types)",
        path="dtype",
    )


def _struct_from_numpy(dtype: np.dtype) -> DataType:
    """The ``struct`` data type of a structured dtype: packed, native-endian fields."""
    names = dtype.names or ()
    parts: list[tuple[str, np.dtype]] = []
    offset = 0
    for field in names:
        entry = dtype.fields[field]  # type: ignore[index]
        if len(entry) > 2:
            raise MetadataError(f"dtype {dtype}: field {field!r} has a title, which Zarr "
                                "structs cannot hold", path="dtype")
        field_dtype, field_offset = entry[0], entry[1]
        if field_offset != offset:
            raise MetadataError(f"dtype {dtype}: field {field!r} is not packed (offset "
                                f"{field_offset}, expected {offset}); Zarr structs have no "
                                "padding", path="dtype")
        if field_dtype.subdtype is not None:
            raise MetadataError(f"dtype {dtype}: field {field!r} is a subarray, which Zarr "
                                "structs cannot hold", path="dtype")
        parts.append((field, data_type_from_numpy(field_dtype).dtype))
        offset += field_dtype.itemsize
    if offset != dtype.itemsize:
        raise MetadataError(f"dtype {dtype} has {dtype.itemsize - offset} bytes of padding; "
                            "Zarr structs have none", path="dtype")
    return DataType(name="struct", dtype=np.dtype(parts))


def from_zarr_python_dtype(dtype: Any, zarr_format: Any) -> Any:
    """A zarr-python data type object (its ``ZDType``: ``Int16()``, ``DateTime64(...)``,
    ``VariableLengthUTF8()``, ...) as a dtype zarr3c takes; anything else unchanged.

    Recognised by its two methods ``to_json`` and ``to_native_dtype``, so zarr-python need
    not be installed.  For Zarr v2 its numpy dtype (``str`` / ``bytes`` for the vlen-utf8
    / vlen-bytes object types, as zarr3c names them); otherwise its Zarr v3 ``data_type``
    JSON, which keeps what numpy cannot say (a datetime's ``scale_factor``).

    Parameters
    ----------
    dtype : Any
        The ``dtype`` argument.
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"}
        The layout of the array it is for.

    Returns
    -------
    Any
        ``dtype``, or what stands for it.

    Examples
    --------
    >>> class Int16:  # a stand-in with the two methods of zarr-python's ZDType
    ...     def to_json(self, zarr_format):
    ...         return "int16" if zarr_format == 3 else {"name": "<i2", "object_codec_id": None}
    ...     def to_native_dtype(self):
    ...         return np.dtype("int16")
    >>> from_zarr_python_dtype(Int16(), 3), from_zarr_python_dtype(Int16(), 2)
    ('int16', dtype('int16'))
    >>> from_zarr_python_dtype("<u2", 3)
    '<u2'
    """
    if isinstance(dtype, DataType) or not (
            callable(getattr(dtype, "to_json", None))
            and callable(getattr(dtype, "to_native_dtype", None))):
        return dtype
    if zarr_format != 2:
        return dtype.to_json(zarr_format=3)
    codec = dtype.to_json(zarr_format=2).get("object_codec_id")
    return {"vlen-utf8": str, "vlen-bytes": bytes}.get(codec) or dtype.to_native_dtype()
