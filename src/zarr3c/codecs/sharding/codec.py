"""The ``sharding_indexed`` codec object: configuration, validation, evolve, whole shards.

:class:`ShardingCodec` is an array -> bytes codec (spec:
https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html).  This
module holds what it is (its configuration, checked; the inner and index pipelines it
resolves for an array; what a shard shape implies, cached per shape) and the whole-shard
:meth:`~ShardingCodec.encode` and :meth:`~ShardingCodec.decode`.  Its partial-read methods
are inherited from :class:`~zarr3c.codecs.sharding.read.ShardReads` and its partial-write
methods from :class:`~zarr3c.codecs.sharding.write.ShardWrites`, which sit with the code they
run; the index format is :mod:`zarr3c.codecs.sharding.index`.

Also here: :func:`partial_read_codec` (whether a chain's chunks can be read partially) and
:func:`sharding_codec_dict` (the codec dict ``create_array(chunks=, shards=)`` writes).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from zarr3c._buffers import holds_references
from zarr3c.codecs.base import (
    ArrayBytesCodec,
    ChunkSpec,
    Codec,
    as_byte_array,
    check_config_keys,
    native_dtype,
    parse_choice_field,
    parse_int_field,
)
from zarr3c.codecs.native import NativeChain, NativeWriteChain
from zarr3c.codecs.pipeline import CodecLike, CodecPipeline, codec_chain, parse_codecs
from zarr3c.codecs.sharding import write as _write
from zarr3c.codecs.sharding._inner import Coords, decode_inner_bytes, fill
from zarr3c.codecs.sharding._parallel import fan_out
from zarr3c.codecs.sharding.index import (
    DEFAULT_INDEX_CODECS,
    IndexLayout,
    IndexLocation,
    ShardIndex,
    decode_index,
    index_layout,
    index_of_shard,
    index_pipeline,
    plain_index,
)
from zarr3c.codecs.sharding.read import ShardReads
from zarr3c.codecs.sharding.write import ShardWrites
from zarr3c.errors import MetadataError
from zarr3c.indexing import c_strides

__all__ = ["ShardingCodec", "partial_read_codec", "sharding_codec_dict"]

_DEFAULT_CODECS: tuple[dict[str, Any], ...] = (
    {"name": "bytes", "configuration": {"endian": "little"}},
)

#: How many shard shapes a codec keeps the :class:`IndexLayout` of (a rectilinear grid's
#: edge shards may have many shapes: past this, the cache starts afresh).
_LAYOUTS_KEPT = 256


def _as_codecs(value: Any, *, path: str) -> tuple[Codec, ...]:
    """Codec objects for a codec list given as dicts, names or codec objects."""
    if isinstance(value, tuple) and all(isinstance(c, Codec) for c in value):
        return value
    return parse_codecs(value, path=path)


def _parse_chunk_shape(value: Any, *, path: str) -> tuple[int, ...]:
    """``chunk_shape`` as a tuple of positive ints (MetadataError naming the field)."""
    field_path = f"{path}.configuration.chunk_shape"
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise MetadataError(f"must be a list of positive integers, got {value!r}", path=field_path)
    if len(value) == 0:
        raise MetadataError("must have at least one dimension", path=field_path)
    return tuple(
        parse_int_field(v, path=f"{field_path}[{i}]", minimum=1) for i, v in enumerate(value)
    )


@dataclass(frozen=True)
class ShardingCodec(ShardReads, ShardWrites, ArrayBytesCodec):
    """Store inner chunks of ``chunk_shape``, each encoded with ``codecs``, in one shard.

    The chunk of the array's chunk grid is the *shard*; it is cut into inner chunks of
    ``chunk_shape``, each encoded with the inner ``codecs`` chain; the encoded inner chunks
    are stored in C order of the inner grid, those equal to the fill value left out, with
    an index (:mod:`zarr3c.codecs.sharding.index`) at the ``start`` or ``end`` of the shard.

    Parameters
    ----------
    chunk_shape
        Shape of the inner chunks; must divide the shard shape (the array's chunk shape).
    codecs
        The inner chunks' codec chain (dicts, names or codec objects; any chain zarr3c
        supports, nested sharding included).
    index_codecs
        The index's codec chain; its encoded size must be fixed (``bytes`` + ``crc32c``).
    index_location
        ``"end"`` (default) or ``"start"``.
    path
        The JSON path of this codec object, named by errors (not compared, not written).
    _inner, _index
        Internal: the inner and index chains :meth:`evolve` resolved for an array; leave
        them out (None).

    Raises
    ------
    MetadataError
        A ``chunk_shape`` that is not a non-empty list of positive integers, an
        ``index_location`` other than ``"start"`` or ``"end"``, or a bad codec in either
        chain (naming the field under ``path``).
    UnknownExtensionError
        An inner or index codec name that is not registered.
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Notes
    -----
    :class:`~zarr3c.codecs.pipeline.CodecPipeline` calls :meth:`evolve`, which resolves the
    inner and index chains for the array's data type and fill value; the partial-read
    methods that take only a shard shape need that evolved codec (``pipeline.array_bytes``).

    Examples
    --------
    >>> codec = ShardingCodec.from_config({"chunk_shape": [4, 4]}, path="codecs[0]")
    >>> codec.chunk_shape, codec.index_location
    ((4, 4), 'end')
    >>> [c.name for c in codec.index_codecs]
    ['bytes', 'crc32c']
    """

    name: ClassVar[str] = "sharding_indexed"

    chunk_shape: tuple[int, ...]
    codecs: tuple[Codec, ...] = field(default=())
    index_codecs: tuple[Codec, ...] = field(default=())
    index_location: IndexLocation = "end"
    #: JSON path of this codec object, named by errors
    path: str = field(default="sharding_indexed", compare=False, repr=False)
    _inner: CodecPipeline | None = field(default=None, compare=False, repr=False)
    _index: CodecPipeline | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "chunk_shape", _parse_chunk_shape(self.chunk_shape, path=self.path))
        set_(self, "codecs", _as_codecs(
            self.codecs or _DEFAULT_CODECS, path=f"{self.path}.configuration.codecs"))
        set_(self, "index_codecs", _as_codecs(
            self.index_codecs or DEFAULT_INDEX_CODECS,
            path=f"{self.path}.configuration.index_codecs"))
        parse_choice_field(
            self.index_location, ("start", "end"), path=f"{self.path}.configuration.index_location"
        )
        set_(self, "_cache_lock", threading.Lock())
        set_(self, "_cache", {})
        set_(self, "_layouts", {})

    def __reduce__(self) -> tuple[Any, ...]:
        # The cached pipelines hold locks: pickle the configuration and, for an evolved
        # codec, the data type and fill value to evolve it again.
        inner = self._inner
        state = None if inner is None else (inner.dtype.str, inner.fill_value.tobytes())
        return (_restore_codec, (self.to_dict()["configuration"], self.path, state))

    # -- metadata ---------------------------------------------------------------------------------

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> ShardingCodec:
        """The codec of a ``sharding_indexed`` codec's ``configuration`` in metadata.

        Parameters
        ----------
        configuration
            The ``configuration`` object: ``chunk_shape`` (required), ``codecs``,
            ``index_codecs`` and ``index_location`` (each defaults as zarr-python 3:
            ``bytes``; ``bytes`` + ``crc32c``; ``"end"``).
        path
            The JSON path of the codec object, named by errors.

        Returns
        -------
        ShardingCodec
            The codec, not yet evolved for an array.

        Raises
        ------
        MetadataError
            An unknown or missing key, a bad field, an empty codec list (naming the field).
        UnknownExtensionError
            An inner or index codec that is not registered.

        Examples
        --------
        >>> codec = ShardingCodec.from_config(
        ...     {"chunk_shape": [2], "index_location": "start"}, path="codecs[0]")
        >>> codec.to_dict()["configuration"]["index_location"]
        'start'
        """
        config = check_config_keys(
            configuration,
            path=path,
            required=("chunk_shape",),
            optional=("codecs", "index_codecs", "index_location"),
        )
        # zarr-python writes every field, tensorstore leaves out index_location "end"; a
        # missing optional field takes zarr-python's default.
        codecs = config.get("codecs", _DEFAULT_CODECS)
        index_codecs = config.get("index_codecs", DEFAULT_INDEX_CODECS)
        for key, value in (("codecs", codecs), ("index_codecs", index_codecs)):
            if isinstance(value, list | tuple) and len(value) == 0:
                raise MetadataError(
                    "must not be empty (it needs an array->bytes codec)",
                    path=f"{path}.configuration.{key}",
                )
        return cls(
            chunk_shape=config["chunk_shape"],
            codecs=parse_codecs(codecs, path=f"{path}.configuration.codecs"),
            index_codecs=parse_codecs(index_codecs, path=f"{path}.configuration.index_codecs"),
            index_location=config.get("index_location", "end"),
            path=path,
        )

    def to_dict(self) -> dict[str, Any]:
        """The codec object for metadata, every field written (as zarr-python 3 does).

        Returns
        -------
        dict
            ``{"name": "sharding_indexed", "configuration": {...}}``.

        Raises
        ------
        None
            Writing a configured codec cannot fail (nor can its inner and index codecs').

        Examples
        --------
        >>> ShardingCodec.from_config({"chunk_shape": [2]}, path="c").to_dict()["name"]
        'sharding_indexed'
        """
        return {
            "name": self.name,
            "configuration": {
                "chunk_shape": list(self.chunk_shape),
                "codecs": [c.to_dict() for c in self.codecs],
                "index_codecs": [c.to_dict() for c in self.index_codecs],
                "index_location": self.index_location,
            },
        }

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        """This codec with its inner chain resolved for the array's data type and fill value
        (which evolves the inner codecs, e.g. blosc's typesize) and its index chain for
        ``uint64``.

        Parameters
        ----------
        spec
            The shard's representation (shape, data type, fill value).

        Returns
        -------
        ShardingCodec
            The evolved codec (the one partial reads and writes need).

        Raises
        ------
        MetadataError
            An inner chain that does not take the data type.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> codec.evolve(spec).stores_raw_inner_chunks()
        True
        """
        inner = CodecPipeline.from_codecs(
            self.codecs,
            dtype=spec.dtype,
            fill_value=spec.fill_value,
            path=f"{self.path}.configuration.codecs",
        )
        index = self._make_index_pipeline()
        return replace(self, codecs=inner.codecs, index_codecs=index.codecs,
                       _inner=inner, _index=index)

    def _make_index_pipeline(self) -> CodecPipeline:
        return index_pipeline(self.index_codecs, path=f"{self.path}.configuration.index_codecs")

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        """Check the codec against the shard it encodes.

        Parameters
        ----------
        spec
            The shard's representation.
        path
            The JSON path of the codec object, named by errors.

        Raises
        ------
        MetadataError
            The inner chunk shape does not divide the shard shape, the inner chain does not
            take inner chunks, or the index chain does not take the index or has no fixed
            encoded size.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [3]}, path="c")
        >>> codec.validate(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")), path="c")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: ...does not divide the shard shape [4]...
        """
        cps = self._chunks_per_shard(spec.shape, path=path)
        self._inner_pipeline(spec).validate(
            self.chunk_shape, path=f"{path}.configuration.codecs"
        )
        index = self._index_pipeline()
        index_path = f"{path}.configuration.index_codecs"
        index.validate((*cps, 2), path=index_path)
        if index.encoded_size((*cps, 2)) is None:
            raise MetadataError(
                "the index codecs must have a fixed encoded size (e.g. bytes, or bytes + "
                f"crc32c), got {[c.name for c in self.index_codecs]}",
                path=index_path,
            )

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        """None: omitted inner chunks and compression make a shard's size vary.

        Parameters
        ----------
        spec
            The shard's representation.

        Returns
        -------
        None

        Raises
        ------
        Nothing.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec.encoded_size(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        """
        return None

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes a valid shard of ``spec`` can have: its index and every inner chunk
        at the most its inner chain can store (:meth:`CodecPipeline.max_stored_size`).

        Parameters
        ----------
        spec
            The shard's representation.

        Returns
        -------
        int or None
            The bound, or None where the inner chain has none (variable-length elements).

        Raises
        ------
        MetadataError
            If the inner chunk shape does not divide the shard's.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec.max_encoded_size(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        40
        """
        layout = self._layout(spec.shape)
        inner = self._inner_pipeline(spec).max_stored_size(self.chunk_shape)
        if inner is None:
            return None
        return layout.nbytes + math.prod(layout.chunks_per_shard) * inner

    # -- pipelines and shapes ---------------------------------------------------------------------

    def _inner_pipeline(self, spec: ChunkSpec) -> CodecPipeline:
        """The inner chain for ``spec``'s data type and fill value: the evolved one, or one
        resolved (and kept) for a codec used on its own."""
        inner = self._inner
        if (
            inner is not None
            and inner.dtype == spec.dtype
            and inner.fill_value.tobytes() == spec.fill_value.tobytes()
        ):
            return inner
        dtype = native_dtype(spec.dtype)
        key = (dtype.str, spec.fill_value.tobytes())
        cache: dict[Any, CodecPipeline] = self._cache  # type: ignore[attr-defined]
        pipeline = cache.get(key)
        if pipeline is None:
            pipeline = CodecPipeline.from_codecs(
                self.codecs, dtype=dtype, fill_value=spec.fill_value,
                path=f"{self.path}.configuration.codecs",
            )
            with self._cache_lock:  # type: ignore[attr-defined]
                cache[key] = pipeline
        return pipeline

    def _index_pipeline(self) -> CodecPipeline:
        """The index chain, resolved (the evolved one, or one resolved once and kept)."""
        if self._index is not None:
            return self._index
        cache: dict[Any, CodecPipeline] = self._cache  # type: ignore[attr-defined]
        pipeline = cache.get("index")
        if pipeline is None:
            pipeline = self._make_index_pipeline()
            with self._cache_lock:  # type: ignore[attr-defined]
                cache["index"] = pipeline
        return pipeline

    def _evolved_pipeline(self) -> CodecPipeline:
        """The inner chain :meth:`evolve` resolved (RuntimeError for a codec not evolved)."""
        if self._inner is None:
            raise RuntimeError(
                "this sharding codec was not evolved for an array (use the codec found in "
                "CodecPipeline.from_codecs(...).array_bytes)"
            )
        return self._inner

    def _chunks_per_shard(self, shard_shape: Sequence[int], *, path: str | None = None) -> Coords:
        """The inner grid of a shard of ``shard_shape`` (MetadataError naming ``path``'s
        ``chunk_shape`` field if the inner chunk shape does not divide it)."""
        field_path = f"{path or self.path}.configuration.chunk_shape"
        shard_shape = tuple(shard_shape)
        if len(shard_shape) != len(self.chunk_shape):
            raise MetadataError(
                f"has {len(self.chunk_shape)} dimensions but the shard (the array's chunk) "
                f"has {len(shard_shape)}: {list(shard_shape)}",
                path=field_path,
            )
        if any(s % c for s, c in zip(shard_shape, self.chunk_shape, strict=True)):
            raise MetadataError(
                f"inner chunk shape {list(self.chunk_shape)} does not divide the shard shape "
                f"{list(shard_shape)} (the array's chunk shape)",
                path=field_path,
            )
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape, strict=True))

    def _layout(self, shard_shape: Sequence[int]) -> IndexLayout:
        """The cached :class:`~zarr3c.codecs.sharding.index.IndexLayout` of a shard of
        ``shard_shape`` (MetadataError, naming the field, if the inner chunk shape does not
        divide it)."""
        shard_shape = tuple(shard_shape)
        cache: dict[Coords, IndexLayout] = self._layouts  # type: ignore[attr-defined]
        layout = cache.get(shard_shape)
        if layout is not None:
            return layout
        cps = self._chunks_per_shard(shard_shape)
        inner = self._inner  # (the evolved chain; a codec used on its own has none)
        layout = index_layout(self._index_pipeline(), cps, self.index_location,
                              path=f"{self.path}.configuration.index_codecs",
                              inner_limit=None if inner is None
                              else inner.max_stored_size(self.chunk_shape))
        with self._cache_lock:  # type: ignore[attr-defined]
            if len(cache) >= _LAYOUTS_KEPT:
                cache.clear()
            cache[shard_shape] = layout
        return layout

    def chunks_per_shard(self, shard_shape: Sequence[int]) -> Coords:
        """The shape of the inner chunk grid of a shard of ``shard_shape``.

        Parameters
        ----------
        shard_shape
            The shard's shape (the array's chunk shape).

        Returns
        -------
        tuple of int
            Inner chunks per shard, per dimension.

        Raises
        ------
        MetadataError
            If ``chunk_shape`` does not divide ``shard_shape`` (names the field).

        Examples
        --------
        >>> ShardingCodec.from_config({"chunk_shape": [2, 4]}, path="c").chunks_per_shard((8, 8))
        (4, 2)
        """
        return self._layout(shard_shape).chunks_per_shard

    def index_nbytes(self, shard_shape: Sequence[int]) -> int:
        """The size in bytes of the encoded index of a shard of ``shard_shape``.

        Parameters
        ----------
        shard_shape
            The shard's shape.

        Returns
        -------
        int
            16 bytes per inner chunk, plus 4 for a ``crc32c`` index codec.

        Raises
        ------
        MetadataError
            As :meth:`chunks_per_shard`.

        Examples
        --------
        >>> ShardingCodec.from_config({"chunk_shape": [2]}, path="c").index_nbytes((8,))
        68
        """
        return self._layout(shard_shape).nbytes

    # -- whole shards -----------------------------------------------------------------------------

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Encode a shard: its non-fill inner chunks, in C order, and the index.

        A shard whose inner chunks all equal the fill value encodes to its index alone
        (every entry missing), a valid shard.

        Parameters
        ----------
        chunk
            The shard's elements (an array of ``spec.shape``).
        spec
            The shard's representation.

        Returns
        -------
        numpy.ndarray
            The shard's bytes (``uint8``).

        Raises
        ------
        MetadataError
            If ``chunk_shape`` does not divide the shard shape.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> shard = codec.encode(np.array([0, 0, 7, 8], "uint8"), spec)
        >>> shard[:2].tolist(), shard.nbytes  # the second inner chunk, then the index
        ([7, 8], 38)
        """
        chunk = np.ascontiguousarray(chunk)
        if holds_references(chunk.dtype):
            return self._encode_references(chunk, spec)
        itemsize = chunk.dtype.itemsize
        parts, _ = _write.encode_strided(
            self, self._inner_pipeline(spec), as_byte_array(chunk), 0,
            c_strides(spec.shape, itemsize), tuple(spec.shape), tuple(spec.shape), None,
        )
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _encode_references(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """:meth:`encode` of a shard whose elements are references (strings, bytes): each
        inner chunk taken by numpy indexing (the byte copies would copy pointers), those
        equal to the fill value left out."""
        inner = self._inner_pipeline(spec)
        pieces: dict[Coords, np.ndarray] = {}
        for coords in np.ndindex(*self._chunks_per_shard(spec.shape)):
            part = chunk[self._box(coords)]
            if not bool(np.all(part == spec.fill_value)):
                pieces[coords] = np.frombuffer(bytes(inner.encode(part)), dtype=np.uint8)
        return np.concatenate(_write.shard_parts(self, pieces, spec.shape))

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Decode a whole shard; missing inner chunks read as the fill value.

        Parameters
        ----------
        data
            The shard's bytes.
        spec
            The shard's representation.

        Returns
        -------
        numpy.ndarray
            The shard's elements, of ``spec.shape`` and ``spec.dtype``.

        Raises
        ------
        ChunkDecodeError
            (ChecksumError for a bad index checksum) without the shard key, which the
            pipeline adds: a shard shorter than its index, an entry pointing outside the
            shard or into the index, overlapping entries, a corrupt inner chunk (named).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.full((), 9, "uint8"))
        >>> codec.decode(codec.encode(np.array([9, 9, 7, 8], "uint8"), spec), spec).tolist()
        [9, 9, 7, 8]
        """
        buf = as_byte_array(data)
        cps = self._chunks_per_shard(spec.shape)
        inner = self._inner_pipeline(spec)
        index = self._decode_index_from_shard(buf, spec.shape)
        present = index.present
        if present.all() and all(n == 1 for n in cps):
            # One inner chunk filling the shard: its decoding is the shard.
            return self._decode_inner_with(inner, buf, (0,) * len(cps), index)
        out = np.empty(spec.shape, dtype=spec.dtype)
        if not present.all():
            fill(out, spec.fill_value)
        coords_list = [tuple(int(i) for i in c) for c in np.argwhere(present)]

        def decode_one(coords: Coords) -> None:
            out[self._box(coords)] = self._decode_inner_with(inner, buf, coords, index)

        fan_out(decode_one, coords_list, spec.nbytes)
        return out

    def _box(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The region of the shard the inner chunk at ``coords`` covers."""
        return tuple(
            slice(i * c, (i + 1) * c) for i, c in zip(coords, self.chunk_shape, strict=True)
        )

    def _decode_inner_with(
        self, inner: CodecPipeline, buf: np.ndarray, coords: Coords, index: ShardIndex
    ) -> np.ndarray:
        """Decode the stored inner chunk at ``coords`` of the whole shard ``buf``."""
        entry = index.get(coords)
        assert entry is not None
        offset, n = entry
        return decode_inner_bytes(inner, buf[offset:offset + n], self.chunk_shape, coords)

    def is_empty_shard(
        self, data: bytes | memoryview | np.ndarray, shard_shape: Sequence[int]
    ) -> bool:
        """Whether an encoded shard holds no inner chunk (all read as the fill value).

        Parameters
        ----------
        data
            The shard's bytes.
        shard_shape
            The shard's shape.

        Returns
        -------
        bool
            True when every index entry is missing.

        Raises
        ------
        ChunkDecodeError
            If the shard's index is malformed.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> codec.is_empty_shard(codec.encode(np.zeros(4, "uint8"), spec), (4,))
        True
        """
        return self._decode_index_from_shard(as_byte_array(data), shard_shape).all_missing

    # -- the index --------------------------------------------------------------------------------

    def _decode_index_from_shard(self, buf: np.ndarray, shard_shape: Sequence[int]) -> ShardIndex:
        """The checked index of the whole shard ``buf`` (``uint8``)."""
        layout = self._layout(shard_shape)
        raw = index_of_shard(buf, layout)
        return decode_index(raw, layout, buf.nbytes, copy=True)

    def decode_index(
        self,
        data: bytes | bytearray | memoryview | np.ndarray,
        shard_shape: Sequence[int],
        *,
        shard_nbytes: int | None = None,
    ) -> ShardIndex:
        """Decode and check an encoded index (exactly :meth:`index_nbytes` bytes).

        Parameters
        ----------
        data
            The encoded index.
        shard_shape
            The shard's shape.
        shard_nbytes
            The shard's size in bytes when known: entries must then lie inside the shard and
            outside the index.  Without it, only what the index alone shows is checked
            (well-formed entries that do not overlap each other nor, at the start, the index).

        Returns
        -------
        ShardIndex
            The index, its entries a native ``uint64`` copy.

        Raises
        ------
        ChunkDecodeError
            A wrong size, a bad entry (naming the inner chunk); ChecksumError for a crc32c
            mismatch.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> shard = codec.encode(np.array([0, 0, 7, 8], "uint8"), spec)
        >>> index = codec.decode_index(shard[-codec.index_nbytes((4,)):], (4,))
        >>> index.get((0,)), index.get((1,))
        (None, (0, 2))
        """
        return decode_index(as_byte_array(data), self._layout(shard_shape), shard_nbytes,
                            copy=True)

    def check_index(self, data: np.ndarray, shard_shape: Sequence[int], shard_nbytes: int
                    ) -> None:
        """:meth:`decode_index` of a ``uint8`` array without keeping what it decodes (a
        small read checks the index its parts were read through).

        Parameters
        ----------
        data
            The encoded index (``uint8``).
        shard_shape
            The shard's shape.
        shard_nbytes
            The shard's size in bytes.

        Raises
        ------
        ChunkDecodeError
            As :meth:`decode_index`.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> shard = codec.encode(np.array([0, 0, 7, 8], "uint8"), spec)
        >>> codec.check_index(shard[2:], (4,), 38)  # the whole shard's 38 bytes: valid
        >>> codec.check_index(shard[2:], (4,), 37)  # a shard cut short
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: ...overlaps the shard index...
        """
        decode_index(data, self._layout(shard_shape), shard_nbytes, copy=False)

    def plain_index(self, shard_shape: Sequence[int]) -> tuple[int, bool] | None:
        """Where a reader may take entries straight from a shard's index bytes.

        When the index stores its entries as plain little-endian ``uint64`` pairs from its
        first byte (the ``bytes`` [+ ``crc32c``] index chain that writers use), a reader may
        take an entry's offset and size from the index bytes before decoding them
        (``fileio.read_shard_parts``), provided it checks them with :meth:`check_index`
        before using what it read.

        Parameters
        ----------
        shard_shape
            The shard's shape.

        Returns
        -------
        (int, bool) or None
            ``(index bytes, at the end)``, or None for another index chain.

        Raises
        ------
        MetadataError
            As :meth:`chunks_per_shard`.

        Examples
        --------
        >>> ShardingCodec.from_config({"chunk_shape": [2]}, path="c").plain_index((8,))
        (68, True)
        """
        return plain_index(self._layout(shard_shape))

    # -- the evolved inner chain ------------------------------------------------------------------

    def inner_batch_kernels(self) -> Any | None:
        """The evolved inner pipeline's ``batch_kernels``.

        Where its inner chunks (native elements under zstd) can be decoded in batches and
        parts of each copied out in one call, the module with those calls.

        Returns
        -------
        module or None
            The batch kernels, or None.

        Raises
        ------
        RuntimeError
            For a codec that was not evolved.

        Examples
        --------
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec.inner_batch_kernels()
        Traceback (most recent call last):
        ...
        RuntimeError: this sharding codec was not evolved for an array ...
        """
        return self._evolved_pipeline().batch_kernels

    def inner_native_chain(self) -> NativeChain | None:
        """How the native chunk pipeline decodes the evolved inner chain, or None.

        Returns
        -------
        NativeChain or None
            See :func:`zarr3c.codecs.native.native_chain`.

        Raises
        ------
        RuntimeError
            For a codec that was not evolved.

        Examples
        --------
        >>> ShardingCodec.from_config({"chunk_shape": [2]}, path="c").inner_native_chain()
        Traceback (most recent call last):
        ...
        RuntimeError: this sharding codec was not evolved for an array ...
        """
        return self._evolved_pipeline().native

    def inner_native_write_chain(self) -> NativeWriteChain | None:
        """How the native chunk pipeline encodes the evolved inner chain, or None.

        Returns
        -------
        NativeWriteChain or None
            See :func:`zarr3c.codecs.native.native_write_chain`.

        Raises
        ------
        RuntimeError
            For a codec that was not evolved.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec = codec.evolve(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        >>> codec.inner_native_write_chain()
        NativeWriteChain(compressor=0, level=0, zstd_checksum=False, checksums=0, swap=1,
                         order=None, blosc=None)
        """
        return self._evolved_pipeline().native_write

    def stores_raw_inner_chunks(self) -> bool:
        """Whether inner chunks are stored as their elements' native bytes in C order.

        Such inner chunks (a ``bytes``-only inner chain needing no byte swap) can be read
        element by element, by byte offset, without decoding.

        Returns
        -------
        bool

        Raises
        ------
        RuntimeError
            For a codec that was not evolved.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> spec = ChunkSpec((4,), np.dtype("<u2"), np.zeros((), "<u2"))
        >>> codec.evolve(spec).stores_raw_inner_chunks()
        True
        """
        return self._evolved_pipeline().stores_raw_elements

    def decode_inner(
        self, data: bytes | bytearray | memoryview | np.ndarray, coords: Sequence[int] = ()
    ) -> np.ndarray:
        """Decode one inner chunk's stored bytes into an array of ``chunk_shape``.

        Needs the evolved codec (see the class notes).

        Parameters
        ----------
        data
            The inner chunk's stored bytes.
        coords
            Its position in the shard: only names it in errors.

        Returns
        -------
        numpy.ndarray
            The inner chunk.

        Raises
        ------
        ChunkDecodeError
            Naming the inner chunk.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec
        >>> codec = ShardingCodec.from_config({"chunk_shape": [2]}, path="c")
        >>> codec = codec.evolve(ChunkSpec((4,), np.dtype("uint8"), np.zeros((), "uint8")))
        >>> codec.decode_inner(b"\\x01\\x02", (0,)).tolist()
        [1, 2]
        """
        return decode_inner_bytes(
            self._evolved_pipeline(), as_byte_array(data), self.chunk_shape, tuple(coords)
        )


def _restore_codec(
    configuration: dict[str, Any], path: str, state: tuple[str, bytes] | None
) -> ShardingCodec:
    """Unpickle a :class:`ShardingCodec`: from its configuration, evolved again for the data
    type and fill value of ``state`` where it was evolved."""
    codec = ShardingCodec.from_config(configuration, path=path)
    if state is None:
        return codec
    dtype = np.dtype(state[0])
    fill_value = np.frombuffer(state[1], dtype=dtype).reshape(()).copy()
    return codec.evolve(ChunkSpec(shape=(), dtype=dtype, fill_value=fill_value))


def partial_read_codec(pipeline: CodecPipeline) -> ShardingCodec | None:
    """The sharding codec of ``pipeline`` if its chunks can be read partially, else None.

    Partial reads by byte range need the shard's stored bytes to be the sharding codec's
    output: the chain must be exactly ``[sharding_indexed]`` (no array -> array codec before
    it, no bytes -> bytes codec after it).

    Parameters
    ----------
    pipeline
        An array's codec pipeline.

    Returns
    -------
    ShardingCodec or None
        The evolved sharding codec, or None.

    Raises
    ------
    Nothing.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(8,), dtype="uint8", chunks=(4,),
    ...                         shards=(8,))
    >>> partial_read_codec(a._pipeline).chunk_shape
    (4,)
    """
    codec = pipeline.array_bytes
    if isinstance(codec, ShardingCodec) and len(pipeline.codecs) == 1:
        return codec
    return None


def sharding_codec_dict(
    inner_chunks: Sequence[int],
    *,
    filters: Iterable[CodecLike] | CodecLike = (),
    serializer: CodecLike = "auto",
    compressors: Iterable[CodecLike] | CodecLike = "auto",
    index_location: IndexLocation = "end",
    dtype: Any = None,
) -> dict[str, Any]:
    """The ``sharding_indexed`` codec dict for ``create_array(chunks=inner, shards=outer)``.

    As zarr-python 3: the filters, serializer and compressors go inside the shard (they
    encode each inner chunk); the index is ``bytes`` (little endian) + ``crc32c``.

    Parameters
    ----------
    inner_chunks
        The inner chunk shape (``chunks=``).
    filters, serializer, compressors
        As ``create_array`` takes them; ``"auto"`` (and a bare ``"bytes"`` serializer) mean
        zarr-python's defaults for ``dtype``, which is then required.  ``None`` compressors
        mean none.
    index_location
        ``"end"`` (default) or ``"start"``.
    dtype
        The array's data type, needed to resolve ``"auto"``.

    Returns
    -------
    dict
        The codec object, for the array's ``codecs`` list.

    Raises
    ------
    MetadataError
        A bad ``index_location``, an ``"auto"`` without ``dtype``, or an inner chunk shape
        that is not a list of positive integers.

    Examples
    --------
    >>> d = sharding_codec_dict([4], compressors=None, dtype="uint8")
    >>> d["configuration"]["chunk_shape"], [c["name"] for c in d["configuration"]["codecs"]]
    ([4], ['bytes'])
    """
    path = "codecs[0]"
    shape = _parse_chunk_shape(list(inner_chunks), path=path)
    parse_choice_field(index_location, ("start", "end"),
                       path=f"{path}.configuration.index_location")

    if dtype is None:  # the defaults depend on the data type
        if serializer in ("auto", "bytes", {"name": "bytes"}):
            raise MetadataError("serializer 'auto' needs the array's dtype", path=path)
        if isinstance(compressors, str) and compressors == "auto":
            raise MetadataError("compressors 'auto' needs the array's dtype", path=path)
    inner = codec_chain(filters, serializer, compressors, dtype=dtype,
                        path=f"{path}.configuration.codecs")
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(shape),
            "codecs": inner,
            "index_codecs": [dict(c) for c in DEFAULT_INDEX_CODECS],
            "index_location": index_location,
        },
    }
