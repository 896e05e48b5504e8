"""Zarr v3 core data types and their fill values.

Follows the data type table of the v3 core specification ("Data types",
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html): ``bool``, ``int8`` ...
``int64``, ``uint8`` ... ``uint64``, ``float16``, ``float32``, ``float64``, ``complex64``,
``complex128`` and the raw-bits types ``r8``, ``r16``, ``r24``, ... (any positive multiple of
8 bits).  In ``zarr.json`` a core data type is a bare
string::

    "data_type": "float32",
    "fill_value": "NaN"

In memory a data type is always a *native-endian* numpy dtype (raw bits are numpy void
``V{n}``); byte order on disk is the ``bytes`` codec's business.  Fill values are held as their
exact bits (``bytes`` of length ``itemsize``, native byte order), so NaN payloads and ``-0.0``
survive a read/write round trip.  JSON forms of fill values (the core specification's
"fill_value"):

========== ==============================================================================
bool       ``true`` / ``false``
int/uint   a JSON integer within range (``1.0`` is accepted, ``1.5`` and ``true`` are not)
float      a JSON number, ``"NaN"``, ``"Infinity"``, ``"+Infinity"``, ``"-Infinity"``,
           ``"0x..."`` (exactly ``2 * itemsize`` hex digits: the exact bits) or ``"0b..."``
           (exactly ``8 * itemsize`` binary digits)
complex    ``[re, im]``, each in one of the float forms of the component type
r<N>       a list of ``N / 8`` integers in 0..255; on read also a base64 string of N / 8 bytes
========== ==============================================================================
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarr3c.errors import MetadataError, UnknownExtensionError

__all__ = [
    "CORE_DATA_TYPE_NAMES",
    "DataType",
    "data_type_from_numpy",
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

# numpy cannot describe a void dtype larger than this.
_MAX_RAW_BYTES = 2**31 - 1

_FLOAT_SPECIALS = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}


def _describe(value: Any) -> str:
    """A short rendering of a (JSON) value for error messages."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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
        """True for the raw-bits types ``r<N>``."""
        return self.dtype.kind == "V"

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
        """All-zero bits: ``False``, ``0``, ``0.0``, ``0j`` or zero bytes.

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
        return bytes(self.itemsize)


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


def _raw_data_type(nbits: int, *, path: str, source: str | None) -> DataType:
    if nbits <= 0 or nbits % 8:
        raise MetadataError(
            f"raw data type r{nbits}: the number of bits must be a positive multiple of 8",
            path=path,
            source=source,
        )
    nbytes = nbits // 8
    if nbytes > _MAX_RAW_BYTES:
        raise MetadataError(
            f"raw data type r{nbits} is too large (at most r{8 * _MAX_RAW_BYTES})",
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
        For any other name (``"string"``, ``"numpy.datetime64"``, ...), in either form.
    MetadataError
        If the value is neither a string nor an object with a string ``name``.

    Examples
    --------
    >>> from zarr3c.metadata import parse_data_type
    >>> parse_data_type("r24"), parse_data_type({"name": "int16"}).itemsize
    (DataType(name='r24', dtype=dtype('V3')), 2)
    >>> parse_data_type("string")
    Traceback (most recent call last):
    ...
    zarr3c.errors.UnknownExtensionError: data_type: unknown data type 'string' ...
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
    raise UnknownExtensionError(
        f"unknown data type {name!r} (zarr3c supports {', '.join(CORE_DATA_TYPE_NAMES)} "
        "and raw bits r8, r16, ...)",
        path=path,
        source=source,
    )


def data_type_from_numpy(dtype_like: Any) -> DataType:
    """The Zarr data type for a user's dtype.

    Parameters
    ----------
    dtype_like
        A :class:`DataType`, a Zarr name (``"uint16"``, ``"r24"``) or anything
        :func:`numpy.dtype` accepts (``np.uint16``, ``">u2"``, ``"V3"``, ``bool``).  Byte order
        is dropped: data is handled native-endian, the ``bytes`` codec sets it on disk.

    Returns
    -------
    DataType
        The core data type (native-endian).

    Raises
    ------
    MetadataError
        For dtypes Zarr v3 core cannot hold (object, str, bytes, datetime, structured,
        subarray, longdouble, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.metadata import data_type_from_numpy
    >>> data_type_from_numpy(">u2"), data_type_from_numpy(np.bool_).name
    (DataType(name='uint16', dtype=dtype('uint16')), 'bool')
    >>> data_type_from_numpy(object)
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: dtype: dtype object has no Zarr v3 core data type ...
    """
    if isinstance(dtype_like, DataType):
        return dtype_like
    if isinstance(dtype_like, str):
        if dtype_like in _CORE:
            return DataType(name=dtype_like, dtype=_CORE[dtype_like])
        m = _RAW_NAME.fullmatch(dtype_like)
        if m is not None:
            return _raw_data_type(int(m.group(1)), path="dtype", source=None)
    try:
        dtype = np.dtype(dtype_like)
    except (TypeError, ValueError) as exc:
        raise MetadataError(
            f"not a data type: {_describe(dtype_like)} ({exc})", path="dtype"
        ) from None
    kind = dtype.kind
    if kind == "V":
        if dtype.fields is not None or dtype.subdtype is not None or dtype.itemsize == 0:
            raise MetadataError(
                f"dtype {dtype} is not supported: only plain void dtypes (raw bits r<N>) are",
                path="dtype",
            )
        return _raw_data_type(8 * dtype.itemsize, path="dtype", source=None)
    if kind in "biufc":
        native = dtype.newbyteorder("=")
        for name, core in _CORE.items():
            if core == native:
                return DataType(name=name, dtype=core)
    raise MetadataError(
        f"dtype {dtype} has no Zarr v3 core data type (supported: "
        f"{', '.join(CORE_DATA_TYPE_NAMES)}, r<N>)",
        path="dtype",
    )
