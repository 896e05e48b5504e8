"""The variable-length data types: ``string`` (UTF-8 text) and ``variable_length_bytes``.

Named and encoded as zarr-python 3 writes them (the zarr-extensions data types
https://github.com/zarr-developers/zarr-extensions/tree/main/data-types, with the
``vlen-utf8`` and ``vlen-bytes`` codecs of :mod:`zarr3c.codecs.vlen`)::

    "data_type": "string",                "fill_value": "",
    "codecs": [{"name": "vlen-utf8", "configuration": {}}, {"name": "zstd", ...}]

    "data_type": "variable_length_bytes", "fill_value": "YWI=",   (base64)
    "codecs": [{"name": "vlen-bytes", "configuration": {}}, ...]

(``bytes``, zarrs' name for the second, is read too.)  In memory a ``string`` array is numpy's
variable-width ``StringDType`` (object arrays of ``str`` before numpy 2), as zarr-python 3
returns it; a ``variable_length_bytes`` array is an object array of ``bytes``.  Such elements
are references, not their bytes: arrays of these types are read and written by
:mod:`zarr3c.array.objects`.  A fill value is held as its bytes (UTF-8 for ``string``), which
:meth:`VariableLengthType.fill_array` turns into the element.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

from zarr3c.errors import MetadataError, ValueConversionError
from zarr3c.metadata.data_types import DataType

__all__ = ["STRING", "VARIABLE_LENGTH_BYTES", "VLEN_NAMES", "VariableLengthType",
           "string_dtype", "vlen_type_for"]


def string_dtype() -> np.dtype:
    """The in-memory dtype of ``string`` arrays: numpy's ``StringDType`` (numpy >= 2), else
    object.

    Returns
    -------
    numpy.dtype

    Raises
    ------
    None
        Every numpy has one of the two.

    Examples
    --------
    >>> string_dtype().kind in ("T", "O")
    True
    """
    cls = getattr(np.dtypes, "StringDType", None)
    return np.dtype(cls()) if cls is not None else np.dtype(object)


class VariableLengthType(DataType):
    """``string`` or ``variable_length_bytes``: elements of any length, held as references.

    Its fill value's "bits" are its bytes (UTF-8 for ``string``); JSON: a string for
    ``string``, base64 for ``variable_length_bytes``.

    Examples
    --------
    >>> STRING.fill_value_to_json(STRING.parse_fill_value("é"))
    'é'
    >>> VARIABLE_LENGTH_BYTES.fill_value_to_json(b"ab")
    'YWI='
    >>> VARIABLE_LENGTH_BYTES.fill_array(b"ab")[()]
    b'ab'
    """

    @property
    def text(self) -> bool:
        """True for ``string``, False for ``variable_length_bytes``."""
        return self.name == "string"

    @property
    def codec(self) -> str:
        """The codec that serializes it (``vlen-utf8`` or ``vlen-bytes``)."""
        return "vlen-utf8" if self.text else "vlen-bytes"

    @property
    def family(self) -> str:
        return "vlen"

    @property
    def is_raw(self) -> bool:
        return False

    def to_json(self) -> Any:
        return self.name

    def parse_fill_value(self, value: Any, *, path: str = "fill_value",
                         source: str | None = None) -> bytes:
        if value is None:
            return b""
        if self.text:
            if not isinstance(value, str):
                raise MetadataError(f"a string data type's fill value must be a string, got "
                                    f"{value!r}", path=path, source=source)
            return _utf8(value, path=path, source=source)
        if isinstance(value, list) and all(isinstance(v, int) and 0 <= v < 256
                                           for v in value):
            return bytes(value)
        if not isinstance(value, str):
            raise MetadataError(f"a bytes data type's fill value must be base64 text, got "
                                f"{value!r}", path=path, source=source)
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise MetadataError(f"{value!r} is not base64", path=path, source=source) from None

    def fill_value_to_json(self, raw: bytes) -> Any:
        return raw.decode("utf-8") if self.text else base64.b64encode(raw).decode("ascii")

    def fill_value_from_python(self, value: Any) -> bytes:
        if value is None:
            return b""
        if self.text:
            if isinstance(value, bytes):
                raise ValueConversionError("a string array's fill value must be a str, not "
                                           "bytes")
            return _utf8(str(value), path="fill_value", source=None)
        if not isinstance(value, bytes | bytearray | memoryview | np.bytes_):
            # (bytes(5) would be five zero bytes, bytes("x") an error of its own)
            raise ValueConversionError(
                f"a bytes array's fill value must be bytes, not {type(value).__name__}")
        return bytes(value)

    def default_fill_value(self) -> bytes:
        return b""

    def fill_array(self, raw: bytes) -> np.ndarray:
        # The element, not bits: its text (or bytes) in a 0-d array of the dtype.
        out = np.empty((), dtype=self.dtype)
        out[()] = raw.decode("utf-8") if self.text else bytes(raw)
        return out


def _utf8(value: str, *, path: str, source: str | None) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise MetadataError(f"{value!r} is not valid Unicode (a lone surrogate)", path=path,
                            source=source) from None


#: The two types, and the names they are read under.
STRING = VariableLengthType(name="string", dtype=string_dtype())
VARIABLE_LENGTH_BYTES = VariableLengthType(name="variable_length_bytes",
                                           dtype=np.dtype(object))
VLEN_NAMES: dict[str, VariableLengthType] = {
    "string": STRING, "variable_length_bytes": VARIABLE_LENGTH_BYTES,
    "bytes": VARIABLE_LENGTH_BYTES,
}


def vlen_type_for(dtype_like: Any) -> VariableLengthType | None:
    """The variable-length type a user's dtype asks for (``str``, ``"str"``, ``"string"``,
    ``StringDType``: ``string``; ``bytes``, ``"bytes"``, ``"variable_length_bytes"``: bytes),
    else None.

    Parameters
    ----------
    dtype_like
        What the user passed as ``dtype``.

    Returns
    -------
    VariableLengthType or None

    Raises
    ------
    None
        Anything else gives None.

    Examples
    --------
    >>> vlen_type_for(str).name, vlen_type_for(bytes).name, vlen_type_for("u1")
    ('string', 'variable_length_bytes', None)
    """
    if dtype_like is str:
        return STRING
    if dtype_like is bytes:
        return VARIABLE_LENGTH_BYTES
    if isinstance(dtype_like, str):
        if dtype_like == "str":
            return STRING
        return VLEN_NAMES.get(dtype_like)
    if isinstance(dtype_like, np.dtype):
        return STRING if dtype_like.kind == "T" else None
    if dtype_like is getattr(np.dtypes, "StringDType", None):
        return STRING
    return None
