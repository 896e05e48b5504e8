"""The codec pipeline: a chunk's ``codecs`` list resolved into codec objects and run in order.

The v3 core specification's "Chunk encoding"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html): a chain is ``array -> array``
codecs, then exactly one ``array -> bytes`` codec (the serializer), then ``bytes -> bytes``
codecs; encoding runs them in order and decoding in reverse, each codec knowing the
representation (shape, data type) it receives.  The list comes from ``zarr.json``::

    "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]

:meth:`CodecPipeline.from_codecs` is the one place where codec names become codec objects
(through :data:`zarr3c.registry.codecs`).  The chunk shape is given per call, since some chunk
grids have chunks of several shapes; the representation chain of each shape is computed
once and cached, with the most bytes each bytes -> bytes codec may decode to: decoding stops
at that cap (:meth:`CodecPipeline.decode_caps`,
:meth:`~zarr3c.codecs.BytesBytesCodec.decode_bounded`), so a decompression bomb is refused
where it would pass the chunk's size.  Also here: the defaults ``create_array`` uses
(:func:`default_serializer`, :func:`default_compressors`) and :func:`normalize_codec_like`,
which turns what users pass (dicts, names, codec objects, numcodecs or zarr-python codec
instances) into codec dicts.
"""

from __future__ import annotations

import enum
import json
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numcodecs.abc
import numpy as np
from numpy.typing import DTypeLike

from zarr3c import registry
from zarr3c._buffers import thread_scratch
from zarr3c.codecs.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    as_byte_array,
    has_byte_order,
    native_dtype,
)
from zarr3c.codecs.native import NativeChain, NativeWriteChain, native_chain, native_write_chain
from zarr3c.errors import ChunkDecodeError, CodecError, MetadataError, ZarrError

__all__ = [
    "CodecLike",
    "CodecPipeline",
    "default_compressors",
    "default_serializer",
    "normalize_codec_like",
    "parse_codecs",
]

#: what may name a codec: a JSON codec object, a bare name, an object with ``name`` and
#: ``configuration`` attributes (metadata's NamedConfig), a codec instance, a numcodecs codec
#: instance or a zarr-python codec object (anything with ``to_dict()``)
CodecLike = Any

_CODEC_OBJECT_KEYS = frozenset({"name", "configuration", "must_understand"})
_KIND_ORDER = {"array->array": 0, "array->bytes": 1, "bytes->bytes": 2}
# Distinct chunk shapes kept per pipeline; a rectilinear grid may have many, and recomputing
# a chain is cheap, so the cache is simply reset when full.
_MAX_CACHED_SHAPES = 4096

#: Pipelines shared between arrays (:meth:`CodecPipeline.for_array`), oldest first.
_SHARED: dict[tuple[Any, ...], CodecPipeline] = {}
_SHARED_LOCK = threading.Lock()
_MAX_SHARED = 256
#: Grids with more distinct chunk shapes than this (rectilinear ones) are not shared.
_MAX_SHARED_SHAPES = 16
#: Nor are elements larger than this: the key holds a copy of the fill value.
_MAX_SHARED_ITEMSIZE = 1024


def _shared_key(codecs: Sequence[Any], dtype: np.dtype, fill_value: np.ndarray,
                shapes: tuple[tuple[int, ...], ...]) -> tuple[Any, ...] | None:
    """What makes two arrays' pipelines the same, or None where they are not shared: codec
    objects given as such (they may hold state), elements that are references (their fill
    value's bytes are addresses), large elements, or many chunk shapes."""
    from zarr3c.metadata.array import NamedConfig

    if (dtype.hasobject or not 0 < dtype.itemsize <= _MAX_SHARED_ITEMSIZE
            or len(shapes) > _MAX_SHARED_SHAPES
            or not all(type(c) is NamedConfig for c in codecs)):
        return None
    try:
        chain = json.dumps([[c.name, c.configuration] for c in codecs], sort_keys=True)
    except (TypeError, ValueError):
        return None
    return (chain, dtype, np.asarray(fill_value).tobytes(), shapes,
            registry.codecs.generation)


def _with_source(exc: MetadataError, source: str | None) -> MetadataError:
    """``exc`` re-made to name ``source`` (codecs raise errors that know only the JSON path)."""
    if source is None or exc.source is not None:
        return exc
    message = str(exc)
    if exc.path and message.startswith(f"{exc.path}: "):
        message = message[len(exc.path) + 2 :]
    new = type(exc).__new__(type(exc))
    MetadataError.__init__(new, message, path=exc.path, source=source)
    return new


def _jsonify(value: Any) -> Any:
    """A JSON-compatible copy: tuples -> lists, numpy scalars/arrays -> Python values."""
    if isinstance(value, Mapping):
        return {str(k): _jsonify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonify(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonify(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, enum.Enum):
        return _jsonify(value.value)  # zarr-python's enums (BloscShuffle, Endian, ...)
    return value


def _numcodec_to_dict(codec: Any) -> dict[str, Any]:
    """A numcodecs codec instance as a v3 codec dict: the v3-native name where the encoding is
    the same (zstd, gzip, blosc, crc32c at the end), else ``numcodecs.<id>``."""
    config = dict(codec.get_config())
    codec_id = config.pop("id")
    if codec_id == "zstd":
        return {
            "name": "zstd",
            "configuration": {
                "level": int(config.get("level", 0)),
                "checksum": bool(config.get("checksum", False)),
            },
        }
    if codec_id == "gzip" and 0 <= int(config.get("level", 1)) <= 9:
        return {"name": "gzip", "configuration": {"level": int(config.get("level", 1))}}
    if codec_id == "blosc":
        shuffle = int(config.get("shuffle", 1))
        v3: dict[str, Any] = {}
        typesize = getattr(codec, "_typesize", None)
        if typesize is not None:
            v3["typesize"] = int(typesize)
        v3["cname"] = config.get("cname", "lz4")
        v3["clevel"] = int(config.get("clevel", 5))
        if shuffle in (0, 1, 2):
            v3["shuffle"] = ("noshuffle", "shuffle", "bitshuffle")[shuffle]
        # AUTOSHUFFLE (-1) picks bit- or byte-shuffle by itemsize, as the v3 codec's evolve does
        v3["blocksize"] = int(config.get("blocksize", 0))
        return {"name": "blosc", "configuration": v3}
    if codec_id == "crc32c" and getattr(codec, "location", "end") == "end":
        return {"name": "crc32c"}
    return {"name": "numcodecs." + codec_id, "configuration": _jsonify(config)}


def normalize_codec_like(x: CodecLike, *, path: str = "codec", source: str | None = None) -> dict:
    """Turn a user's codec specification into a JSON codec object ``{"name", "configuration"?}``.

    Parameters
    ----------
    x
        A codec dict (copied), a bare name (``"crc32c"``), a zarr3c :class:`Codec`, an
        object with ``name`` / ``configuration`` attributes, a numcodecs codec instance
        (``numcodecs.Zstd(level=1)`` -> ``{"name": "zstd", ...}``; codecs without a v3 native
        equivalent -> ``{"name": "numcodecs.<id>", ...}``), or a zarr-python codec object.
    path, source
        Named by errors.

    Returns
    -------
    dict
        The JSON codec object (a new dict).

    Raises
    ------
    MetadataError
        If ``x`` is none of these, or is a dict without a string ``name``.

    Examples
    --------
    >>> import numcodecs
    >>> from zarr3c.codecs import normalize_codec_like
    >>> normalize_codec_like("crc32c")
    {'name': 'crc32c'}
    >>> normalize_codec_like(numcodecs.Zstd(level=1))
    {'name': 'zstd', 'configuration': {'level': 1, 'checksum': False}}
    """
    if isinstance(x, Codec):
        return x.to_dict()
    if isinstance(x, str):
        return {"name": x}
    if isinstance(x, numcodecs.abc.Codec):
        return _numcodec_to_dict(x)
    if isinstance(x, Mapping):
        out = _jsonify(x)
    elif hasattr(x, "name") and hasattr(x, "configuration") and not callable(x.name):
        out = {"name": x.name}
        if x.configuration is not None:
            out["configuration"] = _jsonify(x.configuration)
    elif callable(getattr(x, "to_dict", None)):
        out = _jsonify(x.to_dict())
        if not isinstance(out, dict):
            raise MetadataError(f"{x!r}.to_dict() is not a codec object", path=path, source=source)
    else:
        raise MetadataError(
            f"cannot interpret {x!r} as a codec (expected a dict with 'name', a codec name, "
            "or a codec object)",
            path=path,
            source=source,
        )
    if not isinstance(out.get("name"), str):
        raise MetadataError(
            f"codec object needs a string 'name', got {out.get('name')!r}",
            path=f"{path}.name",
            source=source,
        )
    return out


def _resolve_one(x: CodecLike, *, path: str, source: str | None) -> Codec:
    if isinstance(x, Codec):
        return x
    obj = normalize_codec_like(x, path=path, source=source)
    for key in obj:
        if key not in _CODEC_OBJECT_KEYS:
            raise MetadataError(
                "unknown field in a codec object", path=f"{path}.{key}", source=source
            )
    name = obj["name"]
    cls = registry.codecs.get(name, path=path, source=source)
    try:
        codec = cls.from_config(obj.get("configuration"), path=path)
    except MetadataError as exc:
        raise _with_source(exc, source) from None
    except Exception as exc:  # noqa: BLE001 - a third-party codec's own validation errors
        raise MetadataError(
            f"invalid configuration for codec {name!r}: {exc}",
            path=f"{path}.configuration",
            source=source,
        ) from None
    if not isinstance(codec, Codec) or codec.kind not in _KIND_ORDER:
        raise MetadataError(
            f"codec {name!r} is registered as {cls!r}, which is not a zarr3c codec",
            path=path,
            source=source,
        )
    return codec


def parse_codecs(
    codecs: Iterable[CodecLike], *, path: str = "codecs", source: str | None = None
) -> tuple[Codec, ...]:
    """Resolve a codec list into codec objects and check the order of their kinds.

    The order must be ``array->array*``, exactly one ``array->bytes``, ``bytes->bytes*``.

    Parameters
    ----------
    codecs : iterable
        The ``codecs`` list, in any form :func:`normalize_codec_like` takes.
    path, source : str
        The JSON path of the list and the document it came from, named by errors.

    Returns
    -------
    tuple of Codec
        The codec objects, in order (not yet evolved for an array: see
        :meth:`CodecPipeline.from_codecs`).

    Raises
    ------
    UnknownExtensionError
        A name no registered codec has; names ``codecs[i]``.
    MetadataError
        A bad configuration (``codecs[i].configuration.<field>``) or a bad order (``codecs[i]``).

    Examples
    --------
    >>> from zarr3c.codecs import parse_codecs
    >>> parse_codecs(["bytes", {"name": "zstd", "configuration": {"level": 1}}])
    (BytesCodec(endian=None), ZstdCodec(level=1, checksum=False))
    >>> parse_codecs(["zstd"])
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: codecs: no array->bytes codec (e.g. {'name': 'bytes'}); a ...
    """
    if isinstance(codecs, str | bytes | Mapping) or not isinstance(codecs, Iterable):
        raise MetadataError(f"must be a list of codecs, got {codecs!r}", path=path, source=source)
    parsed = tuple(
        _resolve_one(x, path=f"{path}[{i}]", source=source) for i, x in enumerate(codecs)
    )
    serializers = [i for i, c in enumerate(parsed) if c.kind == "array->bytes"]
    if not serializers:
        raise MetadataError(
            "no array->bytes codec (e.g. {'name': 'bytes'}); a chain needs exactly one",
            path=path,
            source=source,
        )
    if len(serializers) > 1:
        first, second = serializers[:2]
        raise MetadataError(
            f"a second array->bytes codec {parsed[second].name!r} (the first is "
            f"{path}[{first}], {parsed[first].name!r}); a chain has exactly one",
            path=f"{path}[{second}]",
            source=source,
        )
    ab = serializers[0]
    for i, codec in enumerate(parsed):
        if i < ab and codec.kind == "bytes->bytes":
            raise MetadataError(
                f"bytes->bytes codec {codec.name!r} before the array->bytes codec "
                f"({path}[{ab}], {parsed[ab].name!r})",
                path=f"{path}[{i}]",
                source=source,
            )
        if i > ab and codec.kind == "array->array":
            raise MetadataError(
                f"array->array codec {codec.name!r} after the array->bytes codec "
                f"({path}[{ab}], {parsed[ab].name!r})",
                path=f"{path}[{i}]",
                source=source,
            )
    return parsed


class _Chain:
    """The representations of one chunk shape: what each array codec receives; and the
    most bytes each bytes -> bytes codec may decode to (``caps``, in chain order; None: no
    bound known) and a stored chunk may have (``max_stored``)."""

    __slots__ = ("array_specs", "bytes_spec", "caps", "max_stored")

    def __init__(self, array_specs: tuple[ChunkSpec, ...], bytes_spec: ChunkSpec,
                 caps: tuple[int | None, ...], max_stored: int | None):
        self.array_specs = array_specs
        self.bytes_spec = bytes_spec
        self.caps = caps
        self.max_stored = max_stored


class CodecPipeline:
    """A resolved, validated codec chain for one array (its data type and fill value).

    Build with :meth:`from_codecs`.  Stateless apart from a cache of representation chains
    per chunk shape; thread-safe.

    Parameters
    ----------
    codecs : sequence of Codec
        The codecs, already parsed and evolved (what :meth:`from_codecs` passes).
    dtype : numpy.dtype
        The array's native-endian data type.
    fill_value : numpy.ndarray
        A 0-d array of ``dtype``.
    path, source : str
        The JSON path of the ``codecs`` list and its document, named by later errors.

    Attributes
    ----------
    codecs
        All codecs, in order (evolved for the array's data type).
    array_array, array_bytes, bytes_bytes
        The codecs by kind.
    dtype
        The array's (native-endian) data type.
    stores_raw_elements
        True when stored chunks are the elements' native bytes in C order.
    fill_value
        A 0-d array of ``dtype``.

    Raises
    ------
    ValueError
        If ``codecs`` does not hold exactly one array -> bytes codec (:meth:`from_codecs`
        reports that as a MetadataError instead).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import CodecPipeline
    >>> pipeline = CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8")
    >>> encoded = pipeline.encode(np.arange(6, dtype="uint8").reshape(2, 3))
    >>> len(encoded), pipeline.encoded_size((2, 3))
    (10, 10)
    >>> pipeline.decode(encoded, (2, 3))
    array([[0, 1, 2],
           [3, 4, 5]], dtype=uint8)
    """

    codecs: tuple[Codec, ...]
    array_array: tuple[ArrayArrayCodec, ...]
    array_bytes: ArrayBytesCodec
    bytes_bytes: tuple[BytesBytesCodec, ...]

    def __init__(
        self,
        codecs: Sequence[Codec],
        *,
        dtype: np.dtype,
        fill_value: np.ndarray,
        path: str = "codecs",
        source: str | None = None,
    ):
        self.codecs = tuple(codecs)
        self.dtype = dtype
        self.fill_value = fill_value
        self.path = path
        self.source = source
        self.array_array = tuple(c for c in self.codecs if isinstance(c, ArrayArrayCodec))
        (self.array_bytes,) = (c for c in self.codecs if isinstance(c, ArrayBytesCodec))
        self.bytes_bytes = tuple(c for c in self.codecs if isinstance(c, BytesBytesCodec))
        #: A stored chunk is its elements' native bytes in C order (a lone serializer that
        #: stores them so): regions can be read by byte range, with nothing to decode.
        self.stores_raw_elements = (
            not self.array_array and not self.bytes_bytes
            and self.array_bytes.stores_raw_elements(dtype)
        )
        #: The one compressor over the native bytes (else None), which may decode a chunk
        #: straight into a caller's buffer (decode_into).
        self._sole_compressor = (
            self.bytes_bytes[0] if not self.array_array and len(self.bytes_bytes) == 1
            and self.array_bytes.stores_raw_elements(dtype) else None
        )
        #: decode_into can decode a chunk straight into a caller's buffer.
        self.can_decode_into = self._sole_compressor is not None and (
            type(self._sole_compressor).decode_into is not BytesBytesCodec.decode_into)
        #: decode_prefix_into can decode only the start of a chunk.
        self.can_decode_prefix = self._sole_compressor is not None and (
            type(self._sole_compressor).decode_prefix_into
            is not BytesBytesCodec.decode_prefix_into)
        #: The sole compressor's batch_kernels (decode a batch of chunks and copy parts of
        #: each out in one call), or None.
        self.batch_kernels = (None if self._sole_compressor is None
                              else self._sole_compressor.batch_kernels())
        self._chains: dict[tuple[int, ...], _Chain] = {}
        self._lock = threading.Lock()
        #: How the native chunk pipeline decodes this chain, or None (the Python path).
        self.native: NativeChain | None = native_chain(self)
        #: How the native chunk pipeline encodes this chain, or None (the Python path).
        self.native_write: NativeWriteChain | None = native_write_chain(self)

    @classmethod
    def from_codecs(
        cls,
        codecs: Iterable[CodecLike],
        *,
        dtype: DTypeLike,
        fill_value: Any = None,
        path: str = "codecs",
        source: str | None = None,
    ) -> CodecPipeline:
        """Resolve, order-check and evolve a codec list for an array.

        Parameters
        ----------
        codecs
            The ``codecs`` list: JSON codec objects, names, NamedConfig-like objects, codec
            instances (see :func:`normalize_codec_like`).
        dtype
            The array's data type (converted to native byte order).
        fill_value
            The array's fill value (anything ``np.asarray(..., dtype)`` takes; None = zeros).
        path, source
            The JSON path of the list and the document it came from, named by errors.

        Returns
        -------
        CodecPipeline
            The pipeline, each codec evolved for ``dtype`` (e.g. blosc's typesize).

        Raises
        ------
        UnknownExtensionError, MetadataError
            See :func:`parse_codecs`; also a MetadataError for a codec that cannot take
            ``dtype``.

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> bytes_le = {"name": "bytes", "configuration": {"endian": "little"}}
        >>> pipeline = CodecPipeline.from_codecs([bytes_le, "crc32c"], dtype="<u2")
        >>> pipeline.dtype, [codec.name for codec in pipeline.codecs]
        (dtype('uint16'), ['bytes', 'crc32c'])
        """
        dtype = native_dtype(np.dtype(dtype))
        fill = _as_fill(fill_value, dtype, source=source)
        parsed = parse_codecs(codecs, path=path, source=source)
        # As zarr-python: every codec sees the array's own representation type here (only
        # data-type-derived defaults are filled, e.g. blosc typesize); shapes come per call.
        spec = ChunkSpec(shape=(), dtype=dtype, fill_value=fill)
        evolved = []
        for i, codec in enumerate(parsed):
            try:
                evolved.append(codec.evolve(spec))
            except MetadataError as exc:
                raise _with_source(exc, source) from None
            except Exception as exc:  # noqa: BLE001 - reported as a metadata problem
                raise MetadataError(
                    f"codec {codec.name!r} cannot be used with data type {dtype}: {exc}",
                    path=f"{path}[{i}]",
                    source=source,
                ) from None
        return cls(evolved, dtype=dtype, fill_value=fill, path=path, source=source)

    @classmethod
    def for_array(
        cls,
        codecs: Sequence[Any],
        *,
        dtype: np.dtype,
        fill_value: np.ndarray,
        chunk_shapes: Iterable[Sequence[int]],
        source: str | None = None,
    ) -> CodecPipeline:
        """:meth:`from_codecs`, validated for each of ``chunk_shapes``: the pipeline of an
        array, shared by every array with the same chain, data type, fill value and chunk
        shapes (opening a group of many alike arrays parses their chain once).

        Parameters
        ----------
        codecs : sequence
            The ``codecs`` list, as for :meth:`from_codecs`.  Only lists of JSON codec
            objects (``NamedConfig``) are shared; others are resolved each time.
        dtype : numpy.dtype
            The array's data type.
        fill_value : numpy.ndarray
            The array's fill value, as a 0-d array of ``dtype``.
        chunk_shapes : iterable of sequence of int
            Every chunk shape of the array's grid.
        source : str or None, default None
            The document named by errors (those of the first array whose chain was
            resolved, for a shared pipeline: the chain passed for it, as for this one).

        Returns
        -------
        CodecPipeline

        Raises
        ------
        UnknownExtensionError, MetadataError
            As :meth:`from_codecs` and :meth:`validate` raise them (nothing is shared then).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.metadata import NamedConfig
        >>> chain = [NamedConfig(name="bytes", configuration={"endian": "little"}),
        ...          NamedConfig(name="zstd", configuration={"level": 1})]
        >>> fill = np.zeros((), "<u2")
        >>> a = CodecPipeline.for_array(chain, dtype=fill.dtype, fill_value=fill,
        ...                             chunk_shapes=[(4, 4)])
        >>> a is CodecPipeline.for_array(chain, dtype=fill.dtype, fill_value=fill,
        ...                              chunk_shapes=[(4, 4)])
        True
        """
        shapes = tuple(tuple(int(n) for n in shape) for shape in chunk_shapes)
        key = _shared_key(codecs, dtype, fill_value, shapes)
        if key is not None:
            shared = _SHARED.get(key)
            if shared is not None:
                return shared
        pipeline = cls.from_codecs(codecs, dtype=dtype, fill_value=fill_value, source=source)
        for shape in shapes:
            pipeline.validate(shape, source=source)
        if key is not None:
            with _SHARED_LOCK:
                if len(_SHARED) >= _MAX_SHARED:
                    _SHARED.pop(next(iter(_SHARED)))
                _SHARED[key] = pipeline
        return pipeline

    # -- representation chains ------------------------------------------------------------------

    def _compute_chain(self, chunk_shape: tuple[int, ...], path: str, source: str | None) -> _Chain:
        spec = ChunkSpec(shape=chunk_shape, dtype=self.dtype, fill_value=self.fill_value)
        array_specs = []
        for i, codec in enumerate(self.codecs):
            codec_path = f"{path}[{i}]"
            try:
                codec.validate(spec, path=codec_path)
                if isinstance(codec, ArrayArrayCodec):
                    array_specs.append(spec)
                    spec = codec.resolve(spec)
                elif isinstance(codec, ArrayBytesCodec):
                    bytes_spec = spec
            except MetadataError as exc:
                raise _with_source(exc, source) from None
            except Exception as exc:  # noqa: BLE001 - reported as a metadata problem
                raise MetadataError(
                    f"codec {codec.name!r} cannot take a chunk of shape {list(spec.shape)} "
                    f"and data type {spec.dtype}: {exc}",
                    path=codec_path,
                    source=source,
                ) from None
        # Each bytes->bytes codec decodes to at most what the codec before it can encode:
        # the serializer's encoding of the chunk (exact for ``bytes``), then each bound.
        size = self.array_bytes.max_encoded_size(bytes_spec)
        caps = []
        for codec in self.bytes_bytes:
            caps.append(size)
            size = None if size is None else codec.max_encoded_size(size)
        return _Chain(tuple(array_specs), bytes_spec, tuple(caps), size)

    def _chain(self, chunk_shape: tuple[int, ...]) -> _Chain:
        chain = self._chains.get(chunk_shape)
        if chain is None:
            chain = self._compute_chain(chunk_shape, self.path, self.source)
            with self._lock:
                if len(self._chains) >= _MAX_CACHED_SHAPES:
                    self._chains.clear()
                self._chains[chunk_shape] = chain
        return chain

    def validate(
        self, chunk_shape: Sequence[int], *, path: str | None = None, source: str | None = None
    ) -> None:
        """Check every codec can take chunks of ``chunk_shape`` (e.g. transpose order length
        = ndim, bytes endian present for multi-byte types).

        Parameters
        ----------
        chunk_shape : sequence of int
            The shape of the array's chunks.
        path, source : str, optional
            Named by errors (default: those given to :meth:`from_codecs`).

        Raises
        ------
        MetadataError
            Naming ``codecs[i]...``.

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(
        ...     [{"name": "transpose", "configuration": {"order": [1, 0]}}, "bytes"], dtype="u2")
        >>> pipeline.validate((2, 3, 4))
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: codecs[0].configuration.order: has 2 entries but the chunk ...
        """
        shape = _as_shape(chunk_shape)
        chain = self._compute_chain(
            shape,
            path if path is not None else self.path,
            source if source is not None else self.source,
        )
        with self._lock:
            self._chains.setdefault(shape, chain)

    # -- encode / decode --------------------------------------------------------------------------

    def encode(self, chunk: np.ndarray) -> bytes | memoryview | np.ndarray:
        """Encode one chunk (its shape is the chunk shape) into its stored bytes.

        Parameters
        ----------
        chunk : numpy.ndarray
            The chunk (converted to the array's data type and C order if need be).

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The stored bytes (``bytes``, or a 1-d ``uint8`` array).  They may share memory
            with ``chunk`` (a ``bytes``-only chain in native byte order does not copy):
            callers that keep them beyond the next write to ``chunk`` must copy them.

        Raises
        ------
        CodecError
            If a codec fails (e.g. a data type a numcodecs codec does not support).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs([{"name": "bytes"}], dtype="uint8")
        >>> bytes(pipeline.encode(np.arange(4, dtype="uint8")))
        b'\\x00\\x01\\x02\\x03'
        """
        chunk = np.asarray(chunk)
        if chunk.dtype != self.dtype:
            chunk = chunk.astype(self.dtype)
        if not chunk.flags.c_contiguous:
            chunk = np.ascontiguousarray(chunk)
        chain = self._chain(tuple(chunk.shape))
        codec: Codec = self.array_bytes
        try:
            for codec, spec in zip(self.array_array, chain.array_specs, strict=True):
                chunk = codec.encode(chunk, spec)
            codec = self.array_bytes
            data = codec.encode(chunk, chain.bytes_spec)
            for codec in self.bytes_bytes:
                data = codec.encode(data)
        except ZarrError:
            raise
        except Exception as exc:
            raise CodecError(f"codec {codec.name!r} failed to encode a chunk: {exc}") from exc
        return data

    def encode_to_scratch(self, chunk: np.ndarray) -> bytes | memoryview | np.ndarray:
        """:meth:`encode`, for a caller that copies or writes the encoding before this thread
        encodes again.

        A chain of native elements under one compressor that can (zstd) compresses a
        C-contiguous chunk straight into this thread's scratch memory (no output, nor
        compression context, of its own per chunk); other chains call :meth:`encode`.

        Parameters
        ----------
        chunk : numpy.ndarray
            The chunk.

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The stored bytes, valid until this thread encodes to scratch again.

        Raises
        ------
        CodecError
            As :meth:`encode`.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["bytes", "zstd"], dtype="uint8")
        >>> encoded = bytes(pipeline.encode_to_scratch(np.arange(4, dtype="uint8")))
        >>> pipeline.decode(encoded, (4,))
        array([0, 1, 2, 3], dtype=uint8)
        """
        codec = self._sole_compressor
        if codec is not None and chunk.dtype == self.dtype and chunk.flags.c_contiguous:
            bound = codec.encoded_bound(chunk.nbytes)
            if bound is not None:
                room = thread_scratch(bound, "encoded")
                n = codec.encode_into(chunk.reshape(-1).view(np.uint8), room)
                if n is not None:
                    return room[:n]
        return self.encode(chunk)

    def decode_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                    out: np.ndarray) -> bool:
        """Decode stored bytes straight into ``out``, with no intermediate buffer.

        Only for a chain of native elements under one compressor that can (zstd, blosc).

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The stored bytes.
        out : numpy.ndarray
            A C-contiguous ``uint8`` array of exactly the chunk's size: receives the chunk's
            elements as native bytes in C order.

        Returns
        -------
        bool
            True when done; False when the chain cannot or the data is not as expected
            (``out`` may then hold anything).

        Raises
        ------
        None
            Failures return False: :meth:`decode` decodes the data, or reports what is
            wrong.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["bytes", "zstd"], dtype="uint8")
        >>> encoded, out = pipeline.encode(np.arange(4, dtype="uint8")), np.empty(4, np.uint8)
        >>> out if pipeline.decode_into(encoded, out) else pipeline.decode(encoded, (4,))
        array([0, 1, 2, 3], dtype=uint8)
        """
        codec = self._sole_compressor
        return codec is not None and codec.decode_into(data, out)

    def decode_prefix_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                           out: np.ndarray, need: int) -> bool:
        """:meth:`decode_into`, but only the chunk's first ``need`` bytes are decoded for
        sure, for a read that needs only elements that start there.

        Only for a chain of native elements under one compressor that can (zstd: the blocks
        past them are not decoded).

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The stored bytes.
        out : numpy.ndarray
            As for :meth:`decode_into`; past the first ``need`` bytes it may hold anything.
        need : int
            How many leading bytes of the chunk the caller needs.

        Returns
        -------
        bool
            True when done; False otherwise (``out`` may then hold anything).

        Raises
        ------
        None
            Failures return False: :meth:`decode_into` or :meth:`decode` then decodes the
            whole.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["bytes", "zstd"], dtype="uint8")
        >>> encoded, out = pipeline.encode(np.arange(4, dtype="uint8")), np.empty(4, np.uint8)
        >>> head = out[:2] if pipeline.decode_prefix_into(encoded, out, 2) else None
        >>> head if head is not None else pipeline.decode(encoded, (4,))[:2]
        array([0, 1], dtype=uint8)
        """
        codec = self._sole_compressor
        return codec is not None and codec.decode_prefix_into(data, out, need)

    def decode(
        self,
        data: bytes | bytearray | memoryview | np.ndarray,
        chunk_shape: Sequence[int],
        *,
        key: str | None = None,
    ) -> np.ndarray:
        """Decode stored bytes into a chunk of ``chunk_shape``.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The stored bytes.
        chunk_shape : sequence of int
            The chunk's shape.
        key : str, optional
            The chunk's store key, named by errors.

        Returns
        -------
        numpy.ndarray
            A C-contiguous native-endian array of the array's data type; it may be a
            read-only view of ``data``.

        Raises
        ------
        ChunkDecodeError
            (or its subclass ChecksumError) naming ``key``, for any failure: wrong length,
            corrupt compressed data, checksum mismatch, a decoding past what a chunk of
            ``chunk_shape`` can hold (each bytes -> bytes codec stops at its cap,
            :meth:`decode_caps`, rather than inflate a decompression bomb).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8")
        >>> pipeline.decode(pipeline.encode(np.arange(3, dtype="uint8")), (3,))
        array([0, 1, 2], dtype=uint8)
        >>> pipeline.decode(b"\\x00\\x01\\x02\\x00\\x00\\x00\\x00", (3,), key="c/0")
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChecksumError: chunk 'c/0': crc32c: stored checksum 0x00000000 does not ...
        """
        shape = _as_shape(chunk_shape)
        chain = self._chain(shape)
        if 0 in shape:
            # No elements, nothing to decode (and numcodecs' zstd and blosc cannot decode the
            # empty frames they write).
            return np.empty(shape, dtype=self.dtype)
        chunk = self._decode_chain(data, chain, key, None)
        assert chunk is not None  # (without out, the chain always returns the chunk)
        return self._checked(chunk, shape, key)

    def _checked(self, chunk: np.ndarray, shape: tuple[int, ...],
                 key: str | None) -> np.ndarray:
        """The decoded ``chunk``, checked to be of ``shape`` and the data type, C-contiguous."""
        if chunk.shape != shape or chunk.dtype != self.dtype:
            raise ChunkDecodeError(
                f"decoded a chunk of shape {list(chunk.shape)} and data type {chunk.dtype}, "
                f"expected {list(shape)} and {self.dtype}",
                key=key,
            )
        if not chunk.flags.c_contiguous:
            chunk = np.ascontiguousarray(chunk)
        return chunk

    def decode_elements_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                             out: np.ndarray, *, key: str | None = None) -> None:
        """Decode stored bytes into ``out``, a chunk-shaped array of the array's data type:
        straight from the serializer where it can (``vlen-utf8`` into ``StringDType``, with
        no array-to-array codec), else through :meth:`decode` and a copy.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The stored bytes.
        out : numpy.ndarray
            A writable C-contiguous array of the chunk's shape (a view into a read's
            output).
        key : str, optional
            The chunk's store key, named by errors.

        Raises
        ------
        ChunkDecodeError
            As :meth:`decode`; ``out`` may then hold part of the chunk.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["vlen-utf8", "zstd"], dtype=object)
        >>> out = np.empty(2, dtype=object)
        >>> pipeline.decode_elements_into(pipeline.encode(np.array(["a", "bc"], object)), out)
        >>> out
        array(['a', 'bc'], dtype=object)
        """
        shape = tuple(out.shape)
        chain = self._chain(shape)
        if 0 in shape:
            return
        if self.array_array or out.dtype != self.dtype or not out.flags.c_contiguous:
            out[...] = self.decode(data, shape, key=key)
            return
        chunk = self._decode_chain(data, chain, key, out)
        if chunk is not None:
            out[...] = self._checked(chunk, shape, key)

    def _decode_chain(self, data: bytes | bytearray | memoryview | np.ndarray, chain: _Chain,
                      key: str | None, out: np.ndarray | None) -> np.ndarray | None:
        """The chain's decoding of ``data``: None where the serializer decoded it straight
        into ``out`` (given only without array-to-array codecs), else the chunk; every
        failure a ChunkDecodeError naming ``key``."""
        codec: Codec = self.array_bytes
        try:
            buf: Any = as_byte_array(data)
            for codec, cap in zip(reversed(self.bytes_bytes), reversed(chain.caps),
                                  strict=True):
                buf = codec.decode_bounded(buf, cap)
            codec = self.array_bytes
            if out is not None and codec.decode_into(buf, chain.bytes_spec, out):
                return None
            chunk = codec.decode(buf, chain.bytes_spec)
            for codec, spec in zip(
                reversed(self.array_array), reversed(chain.array_specs), strict=True
            ):
                chunk = codec.decode(chunk, spec)
            return chunk
        except ChunkDecodeError as exc:
            if exc.key is None and key is not None:
                try:
                    new = type(exc)(str(exc), key=key)
                except TypeError:
                    new = ChunkDecodeError(str(exc), key=key)
                raise new from exc
            raise
        except MemoryError:
            raise
        except Exception as exc:
            raise ChunkDecodeError(
                f"{codec.name}: cannot decode ({type(exc).__name__}: {exc})", key=key
            ) from exc

    def encoded_size(self, chunk_shape: Sequence[int]) -> int | None:
        """The size in bytes of every encoded chunk of ``chunk_shape``.

        Parameters
        ----------
        chunk_shape : sequence of int
            The chunk's shape.

        Returns
        -------
        int or None
            The size, or None if it varies (a compressor in the chain).

        Raises
        ------
        MetadataError
            If a codec cannot take chunks of ``chunk_shape`` (see :meth:`validate`).

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8").encoded_size((4,))
        8
        >>> CodecPipeline.from_codecs(["bytes", "zstd"], dtype="uint8").encoded_size((4,))
        """
        chain = self._chain(_as_shape(chunk_shape))
        size = self.array_bytes.encoded_size(chain.bytes_spec)
        for codec in self.bytes_bytes:
            if size is None:
                return None
            size = codec.encoded_size(size)
        return size

    def decode_caps(self, chunk_shape: Sequence[int]) -> tuple[int | None, ...]:
        """The most bytes each bytes -> bytes codec's decoding can have, for a chunk of
        ``chunk_shape``: the caps :meth:`decode` passes to
        :meth:`BytesBytesCodec.decode_bounded`.

        The codec next to the array -> bytes codec decodes to that codec's encoding of the
        chunk (for ``bytes``, exactly the chunk's size: its
        :meth:`~ArrayBytesCodec.max_encoded_size`); each codec after it to at most the
        :meth:`~BytesBytesCodec.max_encoded_size` of the cap of the codec before it.  A
        serializer of variable-length elements (``vlen-utf8``, ``vlen-bytes``) has no
        bound, and then no codec of the chain has a cap.

        Parameters
        ----------
        chunk_shape : sequence of int
            The chunk's shape.

        Returns
        -------
        tuple of int or None
            One cap per bytes -> bytes codec, in chain order (that of
            :attr:`bytes_bytes`); None where no bound is known.

        Raises
        ------
        MetadataError
            If a codec cannot take chunks of ``chunk_shape`` (see :meth:`validate`).

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> pipeline = CodecPipeline.from_codecs(["bytes", "zstd", "crc32c"], dtype="uint8")
        >>> pipeline.decode_caps((1000,))
        (1000, 5111)
        >>> CodecPipeline.from_codecs(["vlen-utf8", "zstd"], dtype="T").decode_caps((100,))
        (None,)
        """
        return self._chain(_as_shape(chunk_shape)).caps

    def max_stored_size(self, chunk_shape: Sequence[int]) -> int | None:
        """The most bytes a valid stored chunk of ``chunk_shape`` can have.

        The serializer's bound (:meth:`ArrayBytesCodec.max_encoded_size`), through every
        bytes -> bytes codec's (:meth:`BytesBytesCodec.max_encoded_size`): generous bounds
        above what the libraries and other writers produce, so that a larger stored value
        is not a chunk of this array and can be refused before it is read.

        Parameters
        ----------
        chunk_shape : sequence of int
            The chunk's shape.

        Returns
        -------
        int or None
            The bound; None if a codec of the chain knows none (variable-length elements,
            a codec that does not say).

        Raises
        ------
        MetadataError
            If a codec cannot take chunks of ``chunk_shape`` (see :meth:`validate`).

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8").max_stored_size((4,))
        8
        >>> CodecPipeline.from_codecs(["bytes", "zstd"], dtype="uint8").max_stored_size((64,))
        4161
        """
        return self._chain(_as_shape(chunk_shape)).max_stored

    # -- metadata ---------------------------------------------------------------------------------

    def to_dicts(self) -> list[dict[str, Any]]:
        """The JSON ``codecs`` list.

        Returns
        -------
        list of dict
            One codec object per codec, as :meth:`Codec.to_dict` writes it.

        Raises
        ------
        None
            Writing configured codecs cannot fail.

        Examples
        --------
        >>> from zarr3c.codecs import CodecPipeline
        >>> CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8").to_dicts()
        [{'name': 'bytes'}, {'name': 'crc32c'}]
        """
        return [c.to_dict() for c in self.codecs]

    def __repr__(self) -> str:
        return f"CodecPipeline({self.to_dicts()!r}, dtype={self.dtype})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CodecPipeline):
            return NotImplemented
        return (
            self.dtype == other.dtype
            and self.to_dicts() == other.to_dicts()
            and self.fill_value.tobytes() == other.fill_value.tobytes()
        )

    __hash__ = None  # type: ignore[assignment]


def _as_shape(chunk_shape: Sequence[int]) -> tuple[int, ...]:
    shape = tuple(chunk_shape)
    if not all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0 for s in shape
    ):
        raise MetadataError(
            f"must be a sequence of non-negative integers, got {chunk_shape!r}", path="chunk shape"
        )
    return tuple(int(s) for s in shape)


def _as_fill(fill_value: Any, dtype: np.dtype, *, source: str | None) -> np.ndarray:
    """The fill value as a 0-d array of ``dtype`` (its exact bits when already one)."""
    if fill_value is None:
        return np.zeros((), dtype=dtype)
    if isinstance(fill_value, np.ndarray) and fill_value.dtype == dtype and fill_value.ndim == 0:
        return fill_value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a lossy cast (NaN -> int) is an error here
            return np.asarray(fill_value).astype(dtype).reshape(())
    except Exception as exc:  # noqa: BLE001 - numpy's cast errors vary by type
        raise MetadataError(
            f"{fill_value!r} does not fit data type {dtype}: {exc}",
            path="fill_value",
            source=source,
        ) from None


def default_serializer(dtype: DTypeLike) -> dict[str, Any]:
    """The serializer zarr-python 3 writes by default: ``bytes``, little endian (for the
    variable-length types, ``vlen-utf8`` or ``vlen-bytes``).

    Parameters
    ----------
    dtype : numpy.dtype or str
        The array's data type.

    Returns
    -------
    dict
        The codec object; its ``endian`` field is omitted for data types without a byte
        order (1-byte and raw types).

    Raises
    ------
    TypeError
        If ``dtype`` is not a data type numpy understands.

    Examples
    --------
    >>> from zarr3c.codecs import default_serializer
    >>> default_serializer("float32")
    {'name': 'bytes', 'configuration': {'endian': 'little'}}
    >>> default_serializer("uint8")
    {'name': 'bytes'}
    """
    dt = np.dtype(dtype)
    if dt.kind == "T":  # numpy's StringDType: the string data type
        return {"name": "vlen-utf8", "configuration": {}}
    if dt.kind == "O":  # object arrays of bytes: variable_length_bytes
        return {"name": "vlen-bytes", "configuration": {}}
    if has_byte_order(dt):
        return {"name": "bytes", "configuration": {"endian": "little"}}
    return {"name": "bytes"}


def default_compressors(dtype: DTypeLike) -> list[dict[str, Any]]:
    """The compressors zarr-python 3 writes by default: zstd, level 0, no checksum.

    Parameters
    ----------
    dtype : numpy.dtype or str
        The array's data type (the default is the same for every type).

    Returns
    -------
    list of dict
        The codec objects.

    Raises
    ------
    None
        The default does not depend on ``dtype``.

    Examples
    --------
    >>> from zarr3c.codecs import default_compressors
    >>> default_compressors("uint16")
    [{'name': 'zstd', 'configuration': {'level': 0, 'checksum': False}}]
    """
    return [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]


def as_codec_list(value: Any) -> list[Any]:
    """One codec or several (None: none) as a list."""
    if value is None:
        return []
    if isinstance(value, str | Mapping) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def codec_chain(
    filters: Any = (),
    serializer: Any = "auto",
    compressors: Any = "auto",
    *,
    dtype: DTypeLike,
    path: str = "codecs",
    source: str | None = None,
) -> list[dict[str, Any]]:
    """The codec list for create_array's ``filters``, ``serializer`` and ``compressors``.

    ``"auto"`` means zarr-python 3's defaults for ``dtype``; a bare ``"bytes"`` serializer
    means the default one (little endian where byte order matters); ``None`` compressors
    mean none.
    """
    bare_bytes = serializer in ("auto", "bytes", {"name": "bytes"})
    ser = default_serializer(dtype) if bare_bytes else serializer
    comps = default_compressors(dtype) if compressors == "auto" else compressors
    return [
        normalize_codec_like(c, path=f"{path}[{i}]", source=source)
        for i, c in enumerate([*as_codec_list(filters), ser, *as_codec_list(comps)])
    ]
