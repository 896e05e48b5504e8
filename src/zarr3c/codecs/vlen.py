"""The ``vlen-utf8`` and ``vlen-bytes`` codecs: array -> bytes serializers of variable-length
strings and byte strings.

Both are in the Zarr extensions registry
(https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8 and
``.../codecs/vlen-bytes``), as the serializers of the v3 ``string`` and
``variable_length_bytes`` data types, and are the object codecs of Zarr v2 ``|O`` arrays
(https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html).  The encoding is numcodecs'
``VLenUTF8`` / ``VLenBytes``: a little-endian ``uint32`` item count, then per item (in C order)
a little-endian ``uint32`` byte length and the bytes, UTF-8 for strings.  Neither codec has a
configuration; they are written as zarr-python writes them::

    {"name": "vlen-utf8", "configuration": {}}
    {"name": "vlen-bytes", "configuration": {}}

The work is done by the compiled kernel :mod:`zarr3c._kernels.vlen`.  ``vlen-utf8`` decodes to
the chunk's data type: an object array of ``str``, or numpy's ``StringDType`` (what
zarr-python 3 returns for ``string`` arrays under numpy 2), which the kernel fills straight
from the chunk's bytes.  It encodes object arrays of ``str``, ``StringDType`` arrays and numpy
``U`` arrays.  ``vlen-bytes`` decodes to an object array of ``bytes`` and encodes object
arrays of ``bytes``.  As in numcodecs, ``None`` items (and a ``StringDType``'s missing values)
are written as empty items.

A chunk that does not decode (a count other than the chunk's size, a count or length past the
end of the bytes, bytes after the last item, invalid UTF-8) raises
:class:`~zarr3c.errors.ChunkDecodeError`; the count is checked against the bytes present
before anything is allocated.  An item of the wrong type raises
:class:`~zarr3c.errors.ValueConversionError` (also a ``TypeError``, as numcodecs raises).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c._kernels import vlen as _vlen
from zarr3c.codecs.base import ArrayBytesCodec, ChunkSpec, as_byte_array, check_config_keys
from zarr3c.errors import ChunkDecodeError, CodecError, MetadataError, ValueConversionError

__all__ = ["VLenBytesCodec", "VLenUTF8Codec"]

# Whether the kernel reads and writes numpy's StringDType itself (numpy 2); if not, StringDType
# chunks go through object arrays.
_STRING_DTYPE_KERNEL = _vlen.string_dtype_supported()

# Encodings from this size on are numpy arrays rather than bytes objects: numpy backs them
# with huge pages (it asks for them from 4 MiB), so that a chunk's encoding in new memory
# costs a few page faults rather than one per 4 KiB.
_ARRAY_FROM = 4 << 20


def _contiguous_bytes(data: bytes | memoryview | np.ndarray) -> np.ndarray:
    """``data`` as one contiguous run of bytes (the kernel reads a contiguous buffer)."""
    buf = as_byte_array(data)
    return buf if buf.flags.c_contiguous else np.ascontiguousarray(buf)


def _flat(chunk: np.ndarray, spec: ChunkSpec, name: str) -> np.ndarray:
    """The chunk's items in C order, as a 1-d array (a view where possible)."""
    if chunk.shape != tuple(spec.shape):
        raise CodecError(
            f"{name}: chunk of shape {list(chunk.shape)} does not match the chunk shape "
            f"{list(spec.shape)}"
        )
    return chunk.reshape(-1)


def _decode_error(name: str, exc: ValueError) -> ChunkDecodeError:
    return ChunkDecodeError(f"{name}: {exc}")


class _VLenCodec(ArrayBytesCodec):
    """What the two codecs share: no configuration, written as zarr-python writes it."""

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> Any:
        check_config_keys(configuration, path=path)
        return cls()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {}}


@dataclass(frozen=True)
class VLenUTF8Codec(_VLenCodec):
    """Serialize a chunk of variable-length strings as length-prefixed UTF-8.

    The codec takes no parameters.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for any configuration field, and from :meth:`validate` for
        a data type that does not hold strings.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.vlen import VLenUTF8Codec
    >>> codec = VLenUTF8Codec.from_config({}, path="codecs[0]")
    >>> chunk = np.array(["a", "héllo"], dtype=object)
    >>> spec = ChunkSpec((2,), chunk.dtype, np.array("", dtype=object))
    >>> encoded = codec.encode(chunk, spec)
    >>> encoded
    b'\\x02\\x00\\x00\\x00\\x01\\x00\\x00\\x00a\\x06\\x00\\x00\\x00h\\xc3\\xa9llo'
    >>> codec.decode(encoded, spec)
    array(['a', 'héllo'], dtype=object)
    >>> codec.to_dict()
    {'name': 'vlen-utf8', 'configuration': {}}
    """

    name: ClassVar[str] = "vlen-utf8"

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if spec.dtype.kind not in "OTU":
            raise MetadataError(
                f"serializes strings (an object, StringDType or U data type), not {spec.dtype}",
                path=path,
            )

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes | np.ndarray:
        """Serialize one chunk of strings.

        Parameters
        ----------
        chunk : numpy.ndarray
            Strings: an object array of ``str`` (or ``None``, written as ``""``), a
            ``StringDType`` array or a ``U`` array, of shape ``spec.shape``.
        spec : ChunkSpec
            Its representation.

        Returns
        -------
        bytes or numpy.ndarray
            The encoded chunk, byte for byte what numcodecs' ``VLenUTF8`` writes (from 4 MiB
            on, a 1-d ``uint8`` array).

        Raises
        ------
        zarr3c.errors.ValueConversionError
            If an item is not a string (the message names its index in C order and its type).
        zarr3c.errors.CodecError
            If the chunk's shape is not ``spec.shape``, an item is a string that UTF-8 cannot
            encode (a lone surrogate), or an item or the item count is over the format's
            32-bit limits.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.vlen import VLenUTF8Codec
        >>> spec = ChunkSpec((2,), np.dtype(object), np.array("", dtype=object))
        >>> VLenUTF8Codec().encode(np.array(["a", None], dtype=object), spec)
        b'\\x02\\x00\\x00\\x00\\x01\\x00\\x00\\x00a\\x00\\x00\\x00\\x00'
        >>> VLenUTF8Codec().encode(np.array(["a", 1], dtype=object), spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ValueConversionError: vlen-utf8: item 1 has type int, expected str
        """
        flat = _flat(chunk, spec, self.name)
        if flat.dtype.kind == "U" or (flat.dtype.kind == "T" and not _STRING_DTYPE_KERNEL):
            flat = flat.astype(object)
        try:
            return _vlen.encode_utf8(flat, array_from=_ARRAY_FROM)
        except TypeError as exc:
            raise ValueConversionError(f"{self.name}: {exc}") from None
        except ValueError as exc:
            raise CodecError(f"{self.name}: {exc}") from None

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize one chunk of strings.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded chunk.
        spec : ChunkSpec
            The representation to return: ``StringDType`` gives a ``StringDType`` array
            (decoded without making Python strings); any other data type an object array of
            ``str``.

        Returns
        -------
        numpy.ndarray
            The strings, of shape ``spec.shape``.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If ``data`` is not an encoding of ``prod(spec.shape)`` strings: a missing or
            different item count, a count or length that runs past the end, bytes after the
            last item, or an item that is not UTF-8; the message names the item.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.vlen import VLenUTF8Codec
        >>> spec = ChunkSpec((1,), np.dtype(object), np.array("", dtype=object))
        >>> VLenUTF8Codec().decode(b"\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00ok", spec)
        array(['ok'], dtype=object)
        >>> VLenUTF8Codec().decode(b"\\x01\\x00\\x00\\x00\\x09\\x00\\x00\\x00ok", spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: vlen-utf8: item 0's length (9 bytes) runs past the end ...
        """
        string_dtype = spec.dtype.kind == "T"
        dtype = spec.dtype if string_dtype and _STRING_DTYPE_KERNEL else None
        try:
            out = _vlen.decode_utf8(_contiguous_bytes(data), math.prod(spec.shape), dtype)
        except ValueError as exc:
            raise _decode_error(self.name, exc) from None
        if string_dtype and dtype is None:
            out = out.astype(spec.dtype)
        return out.reshape(spec.shape)


    def decode_into(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec,
                    out: np.ndarray) -> bool:
        """Deserialize one chunk of strings straight into ``out``, a ``StringDType`` array:
        the kernel packs each string into ``out``'s own allocator, so that a read's output
        is filled with no chunk array in between.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded chunk.
        spec : ChunkSpec
            Its representation.
        out : numpy.ndarray
            A writable C-contiguous ``StringDType`` array of shape ``spec.shape``.

        Returns
        -------
        bool
            True when done; False (``out`` untouched) for another data type or a numpy
            without ``StringDType``.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            As :meth:`decode`; ``out`` may then hold the items before the bad one.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.vlen import VLenUTF8Codec
        >>> out = np.empty(2, dtype=object)
        >>> spec = ChunkSpec((2,), out.dtype, np.array("", dtype=object))
        >>> VLenUTF8Codec().decode_into(b"\\x02\\x00\\x00\\x00" + bytes(8), spec, out)
        False
        """
        if (out.dtype.kind != "T" or not _STRING_DTYPE_KERNEL or out.shape != tuple(spec.shape)
                or not out.flags.c_contiguous or not out.flags.writeable):
            return False
        try:
            _vlen.decode_utf8_into(_contiguous_bytes(data), out.reshape(-1))
        except ValueError as exc:
            raise _decode_error(self.name, exc) from None
        return True


@dataclass(frozen=True)
class VLenBytesCodec(_VLenCodec):
    """Serialize a chunk of variable-length byte strings, each after its length.

    The codec takes no parameters.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for any configuration field, and from :meth:`validate` for
        a data type other than object (or fixed-size ``S`` bytes).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.vlen import VLenBytesCodec
    >>> codec = VLenBytesCodec.from_config(None, path="codecs[0]")
    >>> chunk = np.array([b"\\x00\\xff", b""], dtype=object)
    >>> spec = ChunkSpec((2,), chunk.dtype, np.array(b"", dtype=object))
    >>> codec.decode(codec.encode(chunk, spec), spec)
    array([b'\\x00\\xff', b''], dtype=object)
    >>> codec.to_dict()
    {'name': 'vlen-bytes', 'configuration': {}}
    """

    name: ClassVar[str] = "vlen-bytes"

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if spec.dtype.kind not in "OS":
            raise MetadataError(
                f"serializes byte strings (an object or S data type), not {spec.dtype}",
                path=path,
            )

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes | np.ndarray:
        """Serialize one chunk of byte strings.

        Parameters
        ----------
        chunk : numpy.ndarray
            An object array of ``bytes`` (or ``None``, written as an empty item), or an ``S``
            array, of shape ``spec.shape``.
        spec : ChunkSpec
            Its representation.

        Returns
        -------
        bytes or numpy.ndarray
            The encoded chunk, byte for byte what numcodecs' ``VLenBytes`` writes (from 4 MiB
            on, a 1-d ``uint8`` array).

        Raises
        ------
        zarr3c.errors.ValueConversionError
            If an item is not ``bytes`` (``bytearray`` and ``str`` included; the message
            names its index in C order and its type).
        zarr3c.errors.CodecError
            If the chunk's shape is not ``spec.shape``, or an item or the item count is over
            the format's 32-bit limits.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.vlen import VLenBytesCodec
        >>> spec = ChunkSpec((1,), np.dtype(object), np.array(b"", dtype=object))
        >>> VLenBytesCodec().encode(np.array([b"ab"], dtype=object), spec)
        b'\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00ab'
        """
        flat = _flat(chunk, spec, self.name)
        if flat.dtype.kind == "S":
            flat = flat.astype(object)
        try:
            return _vlen.encode_bytes(flat, array_from=_ARRAY_FROM)
        except TypeError as exc:
            raise ValueConversionError(f"{self.name}: {exc}") from None
        except ValueError as exc:
            raise CodecError(f"{self.name}: {exc}") from None

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize one chunk of byte strings.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded chunk.
        spec : ChunkSpec
            The representation to return (an object array of ``bytes`` of ``spec.shape``).

        Returns
        -------
        numpy.ndarray
            The byte strings, an object array of shape ``spec.shape``.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If ``data`` is not an encoding of ``prod(spec.shape)`` items: a missing or
            different item count, a count or length that runs past the end, or bytes after
            the last item; the message names the item.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.vlen import VLenBytesCodec
        >>> spec = ChunkSpec((2,), np.dtype(object), np.array(b"", dtype=object))
        >>> VLenBytesCodec().decode(b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00", spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: vlen-bytes: the stored item count is 1, expected 2
        """
        try:
            out = _vlen.decode_bytes(_contiguous_bytes(data), math.prod(spec.shape))
        except ValueError as exc:
            raise _decode_error(self.name, exc) from None
        return out.reshape(spec.shape)
