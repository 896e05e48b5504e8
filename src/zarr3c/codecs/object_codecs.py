"""The Zarr v2 object codecs ``vlen-array`` and ``json2``: array -> bytes serializers of object
arrays whose elements are 1-d numpy arrays, or JSON values.

A Zarr v2 object array (``"dtype": "|O"``) names the codec that serializes its elements as
the first of its ``filters``
(https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#filters); these two are numcodecs'
``VLenArray`` and ``JSON``
(https://numcodecs.readthedocs.io/en/stable/other/vlen.html#vlenarray,
https://numcodecs.readthedocs.io/en/stable/other/json.html), as zarr-python 2 writes them::

    "filters": [{"id": "vlen-array", "dtype": "<i4"}]
    "filters": [{"id": "json2", "encoding": "utf-8", "skipkeys": false,
                 "ensure_ascii": true, "check_circular": true, "allow_nan": true,
                 "indent": null, "separators": [",", ":"], "sort_keys": true,
                 "strict": true}]

In the v3 codec chain of such an array (:mod:`zarr3c.metadata.v2`) they are
``numcodecs.vlen-array`` and ``numcodecs.json2``, zarr-python 3's names for numcodecs codecs;
Zarr v3 itself has no data type they serialize.

- ``vlen-array``: a little-endian ``uint32`` item count, then per element (C order) a
  little-endian ``uint32`` byte length and the element's bytes in the configured dtype.
  Elements decode to 1-d arrays of that dtype (byte order as configured, as numcodecs
  returns them); ``None`` encodes as an empty array, anything else as
  ``numpy.ascontiguousarray(element, dtype)`` (so a scalar becomes a 1-element array).
- ``json2``: the chunk as one JSON list, its elements (nested lists for an n-d chunk) followed
  by the numpy dtype string ``"|O"`` and the chunk's shape, e.g.
  ``["foo",{"a":1},[1,2],"|O",[3]]``, text in the configured encoding.  Elements decode to
  what :mod:`json` makes of them (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``,
  ``None``).

Encoding is numcodecs' own, byte for byte.  Decoding is numcodecs' for ``vlen-array`` and
:mod:`json` for ``json2``, guarded so that a bad chunk raises
:class:`~zarr3c.errors.ChunkDecodeError` with bounded memory: numcodecs' ``VLenArray``
allocates its output from the stored item count before looking at the bytes, so the count
is checked against the chunk's size and the bytes present first (each element takes at least
its 4-byte length); its ``JSON`` sizes its output from the stored shape and broadcasts
elements into it, so the trailer is checked against the chunk and the elements against the
shape, level by level, instead.  An element that cannot be encoded raises
:class:`~zarr3c.errors.ValueConversionError` naming its index.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numcodecs
import numpy as np

from zarr3c.codecs.base import ArrayBytesCodec, ChunkSpec, as_byte_array, check_config_keys
from zarr3c.errors import ChunkDecodeError, CodecError, MetadataError, ValueConversionError

__all__ = ["JSONCodec", "VLenArrayCodec"]

# The item count before the elements, and each element's length before its bytes.
_PREFIX = 4


class _ObjectCodec(ArrayBytesCodec):
    """What the two object codecs share: they serialize object arrays only."""

    codec_id: ClassVar[str]

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        """Refuse a data type other than object.

        Parameters
        ----------
        spec : ChunkSpec
            The representation the codec receives.
        path : str
            The JSON path of the codec, for messages.

        Raises
        ------
        zarr3c.errors.MetadataError
            If ``spec.dtype`` is not object.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> from zarr3c.codecs.object_codecs import JSONCodec
        >>> JSONCodec().validate(ChunkSpec((1,), np.dtype("f8"), np.zeros((), "f8")),
        ...                      path="filters[0]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: filters[0]: json2 serializes the elements of object ...
        """
        if spec.dtype != np.dtype(object):
            raise MetadataError(f"{self.codec_id} serializes the elements of object arrays, "
                                f"not {spec.dtype}", path=path)


def _check_shape(chunk: np.ndarray, spec: ChunkSpec, codec_id: str) -> None:
    if chunk.shape != tuple(spec.shape):
        raise CodecError(f"{codec_id}: chunk of shape {list(chunk.shape)} does not match the "
                         f"chunk shape {list(spec.shape)}")


@dataclass(frozen=True)
class VLenArrayCodec(_ObjectCodec):
    """Serialize a chunk whose elements are 1-d arrays of ``dtype``, each after its length
    (numcodecs' ``VLenArray``).

    Parameters
    ----------
    dtype : numpy.dtype
        The elements' dtype, byte order included.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for a missing, unknown or invalid configuration field, and
        from :meth:`validate` for a data type other than object.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.object_codecs import VLenArrayCodec
    >>> codec = VLenArrayCodec.from_config({"dtype": "<i2"}, path="filters[0]")
    >>> chunk = np.empty(2, dtype=object)
    >>> chunk[0], chunk[1] = np.array([1, 2]), None
    >>> spec = ChunkSpec((2,), chunk.dtype, np.array(None, dtype=object))
    >>> encoded = codec.encode(chunk, spec)
    >>> encoded
    b'\\x02\\x00\\x00\\x00\\x04\\x00\\x00\\x00\\x01\\x00\\x02\\x00\\x00\\x00\\x00\\x00'
    >>> codec.decode(encoded, spec)
    array([array([1, 2], dtype=int16), array([], dtype=int16)], dtype=object)
    >>> codec.to_dict()
    {'name': 'numcodecs.vlen-array', 'configuration': {'dtype': '<i2'}}
    """

    name: ClassVar[str] = "numcodecs.vlen-array"
    #: the numcodecs id, which names the codec in messages
    codec_id: ClassVar[str] = "vlen-array"

    dtype: np.dtype

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *,
                    path: str) -> VLenArrayCodec:
        """Build the codec from its configuration, ``{"dtype": "<i4"}``.

        Parameters
        ----------
        configuration : mapping or None
            ``dtype``: a numpy type string (as numcodecs writes ``dtype.str``).
        path : str
            The JSON path of the codec, for messages.

        Returns
        -------
        VLenArrayCodec

        Raises
        ------
        zarr3c.errors.MetadataError
            If ``dtype`` is missing, not a type string, not a numpy dtype, or one whose
            elements are not plain bytes (object, empty types).

        Examples
        --------
        >>> VLenArrayCodec.from_config({"dtype": ">f8"}, path="filters[0]").dtype
        dtype('>f8')
        >>> VLenArrayCodec.from_config({"dtype": "|O"}, path="filters[0]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: filters[0].configuration.dtype: the elements of ...
        """
        config = check_config_keys(configuration, path=path, required=("dtype",))
        value = config["dtype"]
        where = f"{path}.configuration.dtype"
        if not isinstance(value, str):
            raise MetadataError(f"must be a numpy type string, got {value!r}", path=where)
        try:
            dtype = np.dtype(value)
        except (TypeError, ValueError, SyntaxError):
            raise MetadataError(f"{value!r} is not a numpy data type", path=where) from None
        if dtype.hasobject or dtype.itemsize == 0 or dtype.subdtype is not None:
            raise MetadataError(f"the elements of {value!r} are not plain bytes (object, "
                                "empty or subarray types)", path=where)
        return cls(dtype)

    def to_dict(self) -> dict[str, Any]:
        """The codec object, its ``dtype`` as numcodecs writes it (``dtype.str``).

        Returns
        -------
        dict

        Raises
        ------
        None

        Examples
        --------
        >>> import numpy as np
        >>> VLenArrayCodec(np.dtype("u1")).to_dict()
        {'name': 'numcodecs.vlen-array', 'configuration': {'dtype': '|u1'}}
        """
        return {"name": self.name, "configuration": {"dtype": self.dtype.str}}

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        """Serialize one chunk of 1-d arrays.

        Parameters
        ----------
        chunk : numpy.ndarray
            An object array of shape ``spec.shape``; each element ``None`` (an empty array)
            or anything :func:`numpy.ascontiguousarray` turns into a 1-d array of the
            codec's dtype (converted as numpy casts).
        spec : ChunkSpec
            Its representation.

        Returns
        -------
        bytes
            The encoded chunk, byte for byte what numcodecs' ``VLenArray`` writes.

        Raises
        ------
        zarr3c.errors.ValueConversionError
            If an element does not convert to a 1-d array of the dtype (the message names
            its index in C order).
        zarr3c.errors.CodecError
            If the chunk's shape is not ``spec.shape``, or it is over the format's 32-bit
            limits.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> spec = ChunkSpec((1,), np.dtype(object), np.array(None, dtype=object))
        >>> chunk = np.empty(1, dtype=object)
        >>> chunk[0] = [[1], [2]]
        >>> VLenArrayCodec(np.dtype("u1")).encode(chunk, spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ValueConversionError: vlen-array: item 0 (list): only 1-dimensional ...
        """
        _check_shape(chunk, spec, self.codec_id)
        flat = chunk.reshape(-1)
        try:
            return bytes(numcodecs.VLenArray(self.dtype).encode(flat))
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._encode_error(flat, exc) from None

    def _encode_error(self, flat: np.ndarray,
                      exc: Exception) -> ValueConversionError | CodecError:
        """The error for a chunk numcodecs did not encode, naming the first bad element."""
        for i, item in enumerate(flat):
            if item is None:
                continue
            try:
                value = np.ascontiguousarray(item, self.dtype)
            except (TypeError, ValueError, OverflowError) as item_exc:
                return ValueConversionError(f"{self.codec_id}: item {i} "
                                            f"({type(item).__name__}): {item_exc}")
            if value.ndim != 1:
                return ValueConversionError(f"{self.codec_id}: item {i} "
                                            f"({type(item).__name__}): only 1-dimensional "
                                            f"arrays are stored, got {value.ndim} dimensions")
        return CodecError(f"{self.codec_id}: cannot encode the chunk: {exc}")

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize one chunk of 1-d arrays.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded chunk.
        spec : ChunkSpec
            The representation to return (an object array of ``spec.shape``).

        Returns
        -------
        numpy.ndarray
            An object array of 1-d arrays of the codec's dtype.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If ``data`` is not an encoding of ``prod(spec.shape)`` elements: a missing or
            different item count, one the bytes cannot hold, a length that runs past the end
            or is not a whole number of elements, or bytes after the last element.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> spec = ChunkSpec((1,), np.dtype(object), np.array(None, dtype=object))
        >>> VLenArrayCodec(np.dtype("<u2")).decode(b"\\x01\\0\\0\\0\\x02\\0\\0\\0\\x07\\0", spec)
        array([array([7], dtype=uint16)], dtype=object)
        >>> VLenArrayCodec(np.dtype("<u2")).decode(b"\\x01\\0\\0\\0\\x03\\0\\0\\0abc", spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: vlen-array: item 0's length (3 bytes) is not a whole ...
        """
        buf = as_byte_array(data)
        if not buf.flags.c_contiguous:
            buf = np.ascontiguousarray(buf)
        size = buf.size
        count = math.prod(spec.shape)
        if size < _PREFIX:
            raise ChunkDecodeError(f"{self.codec_id}: the chunk has {size} bytes, too few for "
                                   "its item count")
        stored = int.from_bytes(buf[:_PREFIX].tobytes(), "little")
        if stored != count:
            raise ChunkDecodeError(f"{self.codec_id}: the stored item count is {stored}, "
                                   f"expected {count}")
        if _PREFIX * (1 + count) > size:
            # (before numcodecs sizes its output by the count)
            raise ChunkDecodeError(f"{self.codec_id}: {count} items need at least "
                                   f"{_PREFIX * (1 + count)} bytes; the chunk has {size}")
        try:
            out = numcodecs.VLenArray(self.dtype).decode(buf)
        except (ValueError, TypeError) as exc:
            raise ChunkDecodeError(self._framing_error(buf, count) or
                                   f"{self.codec_id}: {exc}") from None
        used = _PREFIX * (1 + count) + sum(item.nbytes for item in out)
        if used != size:
            raise ChunkDecodeError(f"{self.codec_id}: {size - used} bytes after the last item")
        return out.reshape(spec.shape)

    def _framing_error(self, buf: np.ndarray, count: int) -> str | None:
        """What is wrong with the element lengths of a chunk numcodecs refused (it walks them
        as numcodecs does, each step checked), or None if they look right."""
        raw = buf.tobytes()
        pos = _PREFIX
        for i in range(count):
            if pos + _PREFIX > len(raw):
                return f"{self.codec_id}: item {i}'s length runs past the end of the chunk"
            length = int.from_bytes(raw[pos:pos + _PREFIX], "little")
            pos += _PREFIX
            if pos + length > len(raw):
                return (f"{self.codec_id}: item {i}'s length ({length} bytes) runs past the "
                        "end of the chunk")
            if length % self.dtype.itemsize:
                return (f"{self.codec_id}: item {i}'s length ({length} bytes) is not a whole "
                        f"number of {self.dtype.str} elements")
            pos += length
        return None


#: numcodecs' JSON defaults, in the order its ``get_config`` writes them
_JSON_DEFAULTS: dict[str, Any] = {
    "encoding": "utf-8", "skipkeys": False, "ensure_ascii": True, "check_circular": True,
    "allow_nan": True, "indent": None, "separators": None, "sort_keys": True, "strict": True,
}
_JSON_FLAGS = ("skipkeys", "ensure_ascii", "check_circular", "allow_nan", "sort_keys",
               "strict")
#: the dtype string numcodecs writes after the elements of an object chunk
_OBJECT_DTYPE = np.dtype(object).str


@dataclass(frozen=True)
class JSONCodec(_ObjectCodec):
    """Serialize a chunk of JSON values as one JSON list followed by its dtype and shape
    (numcodecs' ``JSON``, id ``json2``).

    The parameters are numcodecs' (those of :class:`json.JSONEncoder`, ``strict`` of
    :class:`json.JSONDecoder`, and the text ``encoding``); ``separators`` None means
    ``(",", ":")``, or ``(", ", ": ")`` with an ``indent``.

    Parameters
    ----------
    encoding : str
    skipkeys, ensure_ascii, check_circular, allow_nan, sort_keys, strict : bool
    indent : int, str or None
    separators : tuple of two str, or None

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for an unknown or invalid configuration field, and from
        :meth:`validate` for a data type other than object.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.object_codecs import JSONCodec
    >>> codec = JSONCodec.from_config({"encoding": "utf-8"}, path="filters[0]")
    >>> chunk = np.empty(3, dtype=object)
    >>> chunk[:] = ["foo", {"a": 1}, None]
    >>> spec = ChunkSpec((3,), chunk.dtype, np.array(None, dtype=object))
    >>> encoded = codec.encode(chunk, spec)
    >>> encoded
    b'["foo",{"a":1},null,"|O",[3]]'
    >>> codec.decode(encoded, spec)
    array(['foo', {'a': 1}, None], dtype=object)
    """

    name: ClassVar[str] = "numcodecs.json2"
    #: the numcodecs id, which names the codec in messages
    codec_id: ClassVar[str] = "json2"

    encoding: str = "utf-8"
    skipkeys: bool = False
    ensure_ascii: bool = True
    check_circular: bool = True
    allow_nan: bool = True
    indent: int | str | None = None
    separators: tuple[str, str] | None = None
    sort_keys: bool = True
    strict: bool = True

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> JSONCodec:
        """Build the codec from its configuration (numcodecs' ``get_config`` without ``id``).

        Parameters
        ----------
        configuration : mapping or None
            Any of ``encoding``, ``skipkeys``, ``ensure_ascii``, ``check_circular``,
            ``allow_nan``, ``indent``, ``separators``, ``sort_keys``, ``strict``; absent
            ones take numcodecs' defaults.
        path : str
            The JSON path of the codec, for messages.

        Returns
        -------
        JSONCodec

        Raises
        ------
        zarr3c.errors.MetadataError
            For an unknown field, a flag that is not a boolean, an ``encoding`` Python has
            no text codec for, an ``indent`` that is not an integer, string or null, or
            ``separators`` that are not two strings.

        Examples
        --------
        >>> JSONCodec.from_config({"indent": 2}, path="filters[0]").separators
        (', ', ': ')
        >>> JSONCodec.from_config({"encoding": "hex"}, path="filters[0]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: filters[0].configuration.encoding: 'hex' is not a text ...
        """
        config = check_config_keys(configuration, path=path, optional=tuple(_JSON_DEFAULTS))
        full = {**_JSON_DEFAULTS, **config}

        def where(key: str) -> str:
            return f"{path}.configuration.{key}"

        for key in _JSON_FLAGS:
            if not isinstance(full[key], bool):
                raise MetadataError(f"must be true or false, got {full[key]!r}", path=where(key))
        encoding = full["encoding"]
        try:
            "".encode(encoding)  # (LookupError for unknown and bytes-to-bytes codecs)
        except (LookupError, TypeError):
            raise MetadataError(f"{encoding!r} is not a text encoding", path=where("encoding")) \
                from None
        indent = full["indent"]
        if isinstance(indent, bool) or not isinstance(indent, int | str | None):
            raise MetadataError(f"must be an integer, a string or null, got {indent!r}",
                                path=where("indent"))
        separators = full["separators"]
        if separators is None:
            separators = (",", ":") if indent is None else (", ", ": ")
        if not (isinstance(separators, list | tuple) and len(separators) == 2
                and all(isinstance(s, str) for s in separators)):
            raise MetadataError(f"must be a list of two strings, got {separators!r}",
                                path=where("separators"))
        full["separators"] = tuple(separators)
        return cls(**full)

    def to_dict(self) -> dict[str, Any]:
        """The codec object, its configuration as numcodecs' ``get_config`` writes it.

        Returns
        -------
        dict

        Raises
        ------
        None

        Examples
        --------
        >>> JSONCodec().to_dict()["configuration"]["separators"]
        [',', ':']
        """
        return {"name": self.name, "configuration": {
            "encoding": self.encoding, "skipkeys": self.skipkeys,
            "ensure_ascii": self.ensure_ascii, "check_circular": self.check_circular,
            "allow_nan": self.allow_nan, "indent": self.indent,
            "separators": list(self._separators()), "sort_keys": self.sort_keys,
            "strict": self.strict,
        }}

    def _separators(self) -> tuple[str, str]:
        """The separators in effect (numcodecs' rule for None)."""
        if self.separators is not None:
            return self.separators
        return (",", ":") if self.indent is None else (", ", ": ")

    def _numcodec(self) -> Any:
        return numcodecs.JSON(
            encoding=self.encoding, skipkeys=self.skipkeys, ensure_ascii=self.ensure_ascii,
            check_circular=self.check_circular, allow_nan=self.allow_nan, indent=self.indent,
            separators=self.separators, sort_keys=self.sort_keys, strict=self.strict)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes:
        """Serialize one chunk of JSON values.

        Parameters
        ----------
        chunk : numpy.ndarray
            An object array of shape ``spec.shape`` whose elements JSON encodes (``dict``,
            ``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool``, ``None``).
        spec : ChunkSpec
            Its representation.

        Returns
        -------
        bytes
            The encoded chunk, byte for byte what numcodecs' ``JSON`` writes.

        Raises
        ------
        zarr3c.errors.ValueConversionError
            If an element is not JSON (a numpy array, a NaN without ``allow_nan``, a
            circular list), naming its index in C order; or the text is not in the
            configured encoding.
        zarr3c.errors.CodecError
            If the chunk's shape is not ``spec.shape``.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> spec = ChunkSpec((2,), np.dtype(object), np.array(None, dtype=object))
        >>> JSONCodec().encode(np.array([1, np.arange(2)], dtype=object), spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ValueConversionError: json2: item 1 (ndarray): Object of type ndarray ...
        """
        _check_shape(chunk, spec, self.codec_id)
        try:
            return bytes(self._numcodec().encode(chunk))
        except (TypeError, ValueError, RecursionError) as exc:
            raise self._encode_error(chunk.reshape(-1), exc) from None

    def _encode_error(self, flat: np.ndarray, exc: Exception) -> ValueConversionError:
        """The error for a chunk numcodecs did not encode, naming the first bad element."""
        encoder = json.JSONEncoder(skipkeys=self.skipkeys, ensure_ascii=self.ensure_ascii,
                                   check_circular=self.check_circular,
                                   allow_nan=self.allow_nan, sort_keys=self.sort_keys)
        for i, item in enumerate(flat):
            try:
                encoder.encode(item)
            except (TypeError, ValueError, RecursionError) as item_exc:
                return ValueConversionError(f"{self.codec_id}: item {i} "
                                            f"({type(item).__name__}): {item_exc}")
        return ValueConversionError(f"{self.codec_id}: cannot encode the chunk: {exc}")

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize one chunk of JSON values.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded chunk.
        spec : ChunkSpec
            The representation to return (an object array of ``spec.shape``).

        Returns
        -------
        numpy.ndarray
            An object array of the decoded values.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If ``data`` is not text in the configured encoding, not JSON, not a list ending
            in ``"|O"`` and ``spec.shape``, or its elements do not form a chunk of that shape.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> spec = ChunkSpec((2,), np.dtype(object), np.array(None, dtype=object))
        >>> JSONCodec().decode(b'[[1,2],[3,4],"|O",[2]]', spec)
        array([list([1, 2]), list([3, 4])], dtype=object)
        >>> JSONCodec().decode(b'[1,2,3,"|O",[3]]', spec)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: json2: the stored shape is [3], expected [2]
        """
        buf = as_byte_array(data)
        try:
            text = buf.tobytes().decode(self.encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ChunkDecodeError(f"{self.codec_id}: the chunk is not {self.encoding} text: "
                                   f"{exc}") from None
        try:
            items = json.JSONDecoder(strict=self.strict).decode(text)
        except (ValueError, RecursionError) as exc:
            raise ChunkDecodeError(f"{self.codec_id}: the chunk is not JSON: {exc}") from None
        if not isinstance(items, list) or len(items) < 2:
            raise ChunkDecodeError(f"{self.codec_id}: the chunk is not a JSON list of the "
                                   "elements followed by their dtype and shape")
        dtype, shape = items[-2], items[-1]
        if dtype != _OBJECT_DTYPE:
            raise ChunkDecodeError(f"{self.codec_id}: the stored data type is "
                                   f"{_describe(dtype)}, expected {_OBJECT_DTYPE!r}")
        if not (isinstance(shape, list) and all(type(n) is int for n in shape)) \
                or shape != list(spec.shape):
            raise ChunkDecodeError(f"{self.codec_id}: the stored shape is {_describe(shape)}, "
                                   f"expected {list(spec.shape)}")
        elements = _elements(items[:-2], spec.shape, self.codec_id)
        # (fromiter stores each element as it is, where building an array from the list
        # would take list elements for dimensions)
        return np.fromiter(elements, dtype=object, count=len(elements)).reshape(spec.shape)


def _elements(body: list[Any], shape: tuple[int, ...], codec_id: str) -> list[Any]:
    """The elements of a JSON chunk in C order: ``body`` nested ``len(shape)`` levels deep,
    each level a list of that dimension's extent (a 0-d chunk holds one element)."""
    if not shape:
        if len(body) != 1:
            raise ChunkDecodeError(f"{codec_id}: a 0-d chunk holds 1 element, the chunk "
                                   f"{len(body)}")
        return body
    level = [body]
    for dim, extent in enumerate(shape):
        below: list[Any] = []
        for row in level:
            if not isinstance(row, list) or len(row) != extent:
                got = f"{len(row)} entries" if isinstance(row, list) else type(row).__name__
                raise ChunkDecodeError(f"{codec_id}: the elements do not form a chunk of shape "
                                       f"{list(shape)}: dimension {dim} has {got}")
            below.extend(row)
        level = below
    return level


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
