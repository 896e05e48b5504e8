"""The metadata documents zarr-python 2.11-2.18 wrote with its experimental v3 API.

zarr3c calls this layout ``"zarr2-v3"``.  With ``ZARR_V3_EXPERIMENTAL_API=1`` zarr-python 2
wrote an early draft of the v3 protocol: an entry point ``zarr.json``::

    {"extensions": [],
     "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
     "metadata_key_suffix": ".json",
     "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0"}

group documents ``meta/root.group.json`` (the root) and ``meta/root/<path>.group.json``
(``{"attributes": {...}}``; groups may also be implicit), array documents
``meta/root/<path>.array.json`` (``meta/root.array.json`` for a root array)::

    {"attributes": {"units": "m"},
     "chunk_grid": {"chunk_shape": [4, 3], "separator": "/", "type": "regular"},
     "chunk_memory_layout": "C",
     "compressor": {"codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
                    "configuration": {"blocksize": 0, "clevel": 5, "cname": "lz4",
                                      "shuffle": 1}},
     "data_type": "<i4", "extensions": [], "fill_value": 0, "shape": [10, 7]}

and chunks at ``data/root/<path>/c<i>/<j>`` (``c<i>.<j>`` with the ``"."`` separator; the
only chunk of a 0-d array is ``c0``).  Quirks kept as zarr-python 2 wrote them:

- one optional ``compressor``: a numcodecs configuration (without ``id``) under a ``codec``
  URI ``https://purl.org/zarr/spec/codec/<id>/1.0`` for gzip, zlib, blosc, bz2, lz4, lzma and
  zstd (any other codec got the bare prefix, which zarr-python 2 itself could not read back);
- filters, which the draft had no field for, are numcodecs configurations (with ``id``) in
  ``attributes["filters"]``; zarr3c applies them and hides that key from the attributes it
  presents (so a copy to the final v3 layout gets them as codecs, not as an attribute);
- ``data_type`` is a numpy type string (``"<i4"``, ``">f8"``, ``"bool"``, ``"u1"``), or for
  complex numbers an object ``{"extension": ..., "type": "<c16", "fallback": null}``;
- ``fill_value`` may be ``null`` (read as the data type's zero, and written back as null);
- ``dimension_separator`` repeats ``chunk_grid.separator`` when that is ``"."``.

:class:`Zarr2V3ArrayMetadata` keeps the document as written and presents the read interface of
the final v3 :class:`~zarr3c.metadata.array.ArrayMetadata`: its ``codecs`` are the equivalent v3
chain (a reversing ``transpose`` for ``chunk_memory_layout: "F"``, the array->array filters,
``bytes`` with the byte order of the data, the bytes->bytes filters, then the compressor as
``gzip``/``zstd``/``blosc`` where the configurations mean the same, else ``numcodecs.<id>``).
Documents are written as zarr-python 2 wrote them (indent 4, sorted keys, ASCII).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from zarr3c import registry
from zarr3c.errors import MetadataError, UnknownExtensionError, UnsupportedFeatureError
from zarr3c.metadata.array import ArrayMetadataView, load_json_object, parse_attributes
from zarr3c.metadata.data_types import DataType, data_type_from_numpy
from zarr3c.metadata.draft2022 import (
    Draft2022ChunkKeyEncoding,
    Draft2022GroupMetadata,
    _parse_chunk_grid,
    _parse_extensions,
    _shape,
)

__all__ = [
    "PROTOCOL_URI",
    "CODEC_URI_PREFIX",
    "COMPLEX_EXTENSION_URI",
    "COMPRESSOR_IDS",
    "Zarr2V3EntryPoint",
    "Zarr2V3ChunkKeyEncoding",
    "Zarr2V3ArrayMetadata",
    "Zarr2V3GroupMetadata",
    "dump_zarr2_json",
]

#: ``zarr_format`` (and ``metadata_encoding``) of the entry point zarr-python 2 wrote
PROTOCOL_URI = "https://purl.org/zarr/spec/protocol/core/3.0"
#: the prefix of the compressor ``codec`` URIs: ``<prefix><id>/1.0``
CODEC_URI_PREFIX = "https://purl.org/zarr/spec/codec/"
#: the extension URI zarr-python 2 wrote for complex data types
COMPLEX_EXTENSION_URI = (
    "https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/"
    "complex-dtypes/v1.0.html"
)
#: the numcodecs compressors zarr-python 2 gave a codec URI (and could read back)
COMPRESSOR_IDS = ("gzip", "zlib", "blosc", "bz2", "lz4", "lzma", "zstd")

_BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
_BLOSC_AUTOSHUFFLE = -1
_V3_BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
# numcodecs' defaults, for configurations that leave a field out
_NUMCODECS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gzip": {"level": 1},
    "zstd": {"level": 1, "checksum": False},
    "blosc": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
}


def dump_zarr2_json(doc: Mapping[str, Any]) -> bytes:
    """A document in zarr-python 2's JSON style (``zarr.util.json_dumps``), byte for byte."""
    return json.dumps(
        doc, indent=4, sort_keys=True, ensure_ascii=True, separators=(",", ": "), allow_nan=False
    ).encode("ascii")


def _unknown_fields(doc: Mapping[str, Any], known: Sequence[str], *, path: str | None,
                    source: str | None) -> None:
    unknown = sorted(set(doc) - set(known))
    if unknown:
        raise MetadataError(f"unknown fields {unknown} (zarr-python 2 wrote only "
                            f"{sorted(known)})", path=path, source=source)


@dataclass(frozen=True, slots=True, kw_only=True)
class Zarr2V3EntryPoint:
    """The entry point ``zarr.json`` of a hierarchy zarr-python 2 wrote in its v3 mode."""

    metadata_key_suffix: str = ".json"
    extensions: tuple[dict[str, Any], ...] = ()

    _KNOWN: ClassVar[tuple[str, ...]] = (
        "zarr_format", "metadata_encoding", "metadata_key_suffix", "extensions",
    )

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = "zarr.json"
                  ) -> Zarr2V3EntryPoint:
        if doc.get("zarr_format") != PROTOCOL_URI:
            raise MetadataError(f"must be {PROTOCOL_URI!r}", path="zarr_format", source=source)
        _unknown_fields(doc, cls._KNOWN, path=None, source=source)
        encoding = doc.get("metadata_encoding", PROTOCOL_URI)
        if encoding != PROTOCOL_URI:
            raise UnknownExtensionError(
                f"unknown metadata encoding {encoding!r} (zarr3c reads the JSON encoding "
                f"{PROTOCOL_URI!r})", path="metadata_encoding", source=source,
            )
        suffix = doc.get("metadata_key_suffix", ".json")
        if not isinstance(suffix, str) or "/" in suffix:
            raise MetadataError("must be a string without '/'", path="metadata_key_suffix",
                                source=source)
        return cls(metadata_key_suffix=suffix,
                   extensions=_parse_extensions(doc.get("extensions", []), path="extensions",
                                                source=source))

    def to_dict(self) -> dict[str, Any]:
        return {
            "extensions": [dict(e) for e in self.extensions],
            "metadata_encoding": PROTOCOL_URI,
            "metadata_key_suffix": self.metadata_key_suffix,
            "zarr_format": PROTOCOL_URI,
        }

    def to_json(self) -> bytes:
        return dump_zarr2_json(self.to_dict())


class Zarr2V3ChunkKeyEncoding(Draft2022ChunkKeyEncoding):
    """Chunk keys below ``data/root/<path>/``: the draft's ``c1/23/45``, except ``c0`` for a
    0-d array (zarr-python 2 keyed the only chunk of a 0-d array by the coordinates
    ``(0,)``)."""

    __slots__ = ()
    name: ClassVar[str] = "zarr2-v3"

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        return super().encode_chunk_key(coords) if len(coords) else "c0"

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        if ndim == 0:
            return () if key == "c0" else None
        return super().decode_chunk_key(key, ndim=ndim)


# -- data types and fill values -------------------------------------------------------------------


def _parse_data_type(value: Any, *, source: str | None) -> tuple[DataType, np.dtype]:
    """The data type, and the numpy dtype with the byte order the chunks are stored in."""
    path = "data_type"
    if isinstance(value, dict):
        _unknown_fields(value, ("extension", "type", "fallback"), path=path, source=source)
        if "type" not in value:
            raise MetadataError("a data type extension needs \"type\"", path=path,
                                source=source)
        type_ = value["type"]
        path = "data_type.type"
        if not isinstance(type_, str):  # structured types were a list of fields
            raise UnknownExtensionError(
                f"unsupported data type {type_!r} ({value.get('extension')!r})", path=path,
                source=source,
            )
    elif isinstance(value, str):
        type_ = value
    else:
        raise MetadataError(f"must be a string or an object, got {value!r}", path=path,
                            source=source)
    try:
        dtype = np.dtype(type_)
    except (TypeError, ValueError):
        raise UnknownExtensionError(f"unknown data type {type_!r}", path=path,
                                    source=source) from None
    if dtype.kind not in "biufc":
        raise UnknownExtensionError(
            f"data type {type_!r} is not supported (zarr3c reads bool, integers, floats and "
            "complex numbers)", path=path, source=source,
        )
    try:
        return data_type_from_numpy(dtype), dtype
    except MetadataError:
        raise UnknownExtensionError(f"unsupported data type {type_!r}", path=path,
                                    source=source) from None


def _data_type_json(data_type: DataType, endian: str) -> Any:
    """zarr-python 2's ``data_type`` for a data type stored in byte order ``endian``."""
    dtype = data_type.dtype
    if data_type.is_raw:
        raise MetadataError(
            f"data type {data_type.name!r} has no form in zarr-python 2's v3 layout",
            path="data_type",
        )
    if dtype.kind == "b":
        return "bool"
    if dtype.itemsize == 1:
        return dtype.str[1:]  # "i1" / "u1"
    text = (">" if endian == "big" else "<") + dtype.str[1:]
    if dtype.kind == "c":
        return {"extension": COMPLEX_EXTENSION_URI, "fallback": None, "type": text}
    return text


def _fill_value_json(data_type: DataType, raw: bytes) -> Any:
    """The fill value in zarr-python 2's vocabulary (no hex float spellings)."""
    value = data_type.fill_value_to_json(raw)
    if data_type.dtype.kind == "f" and isinstance(value, str) and value.startswith("0x"):
        return "NaN"  # a NaN with a payload; zarr-python 2 knows only "NaN"
    if data_type.dtype.kind == "c" and isinstance(value, list):
        return [("NaN" if isinstance(v, str) and v.startswith("0x") else v) for v in value]
    return value


# -- codecs ---------------------------------------------------------------------------------------


def _codec_class(name: str, *, path: str, source: str | None) -> Any:
    return registry.codecs.get(name, path=path, source=source)


def _checked(codec: dict[str, Any], *, path: str, source: str | None) -> Any:
    """Build the codec to validate its configuration; errors name ``path`` and ``source``."""
    cls = _codec_class(codec["name"], path=path, source=source)
    try:
        return cls.from_config(codec.get("configuration"), path=path)
    except MetadataError as exc:
        if exc.source is not None or source is None:
            raise
        raise type(exc)(str(exc), source=source) from None


def _v3_compressor(codec_id: str, config: dict[str, Any], itemsize: int) -> dict[str, Any]:
    """The v3 codec equivalent to numcodecs ``codec_id`` with ``config`` (for chunks of
    ``itemsize``-byte elements): the v3 ``gzip``/``zstd``/``blosc`` where they encode the same
    bytes, ``numcodecs.<id>`` otherwise."""
    defaults = _NUMCODECS_DEFAULTS.get(codec_id)
    if defaults is not None and set(config) <= set(defaults):
        full = {**defaults, **config}
        if codec_id in ("gzip", "zstd"):
            return {"name": codec_id, "configuration": full}
        shuffle = full["shuffle"]
        if shuffle == _BLOSC_AUTOSHUFFLE:  # numcodecs' rule, applied to the element size
            shuffle = 2 if itemsize == 1 else 1
        if (full["cname"] in _V3_BLOSC_CNAMES and isinstance(shuffle, int)
                and not isinstance(shuffle, bool) and 0 <= shuffle <= 2):
            return {"name": "blosc", "configuration": {
                "typesize": itemsize, "cname": full["cname"], "clevel": full["clevel"],
                "shuffle": _BLOSC_SHUFFLES[shuffle], "blocksize": full["blocksize"]}}
    return _named("numcodecs." + codec_id, config)


#: The object codecs of zarr-python 2 that zarr3c decodes (its ``vlen-utf8`` and
#: ``vlen-bytes`` codecs, the serializers of the variable-length types).
OBJECT_SERIALIZERS = ("vlen-utf8", "vlen-bytes")


def _named(name: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "configuration": config} if config else {"name": name}


def _numcodecs_config(codec: Mapping[str, Any], *, path: str) -> tuple[str, dict[str, Any]]:
    """The numcodecs ``(id, config)`` of a v3 bytes->bytes codec (for writing)."""
    name = codec["name"]
    config = dict(codec.get("configuration") or {})
    if name.startswith("numcodecs."):
        return name[len("numcodecs."):], config
    if name in ("gzip", "zstd"):
        return name, config
    if name == "blosc":
        config.pop("typesize", None)  # numcodecs takes the element size from the chunk
        shuffle = config.get("shuffle")
        if shuffle is not None:
            config["shuffle"] = _BLOSC_SHUFFLES.index(shuffle)
        return name, config
    raise MetadataError(
        f"codec {name!r} has no form in zarr-python 2's v3 layout (it takes numcodecs "
        "codecs only)", path=path,
    )


def _build_chain(
    *,
    ndim: int,
    dtype: np.dtype,
    layout: str,
    filters: Sequence[dict[str, Any]],
    compressor: dict[str, Any] | None,
    source: str | None,
    filters_path: str = "attributes.filters",
) -> tuple[dict[str, Any], ...]:
    """The v3 codec chain equivalent to zarr-python 2's encoding of a chunk: order, filters
    in turn, then the compressor; every codec validated, errors naming the document's field
    (the filters are at ``filters_path``: Zarr v2 keeps them in ``filters``)."""
    chain: list[dict[str, Any]] = []
    if layout == "F" and ndim > 1:
        chain.append({"name": "transpose", "configuration": {"order": list(range(ndim))[::-1]}})
    # ``current``: the data entering the next codec, as zarr-python 2 handed it over (a numpy
    # array of that dtype, in that byte order), or None once it is bytes.
    current: np.dtype | None = dtype
    serialized = False
    for i, spec in enumerate(filters):
        path = f"{filters_path}[{i}]"
        if spec["id"] in OBJECT_SERIALIZERS:  # (an object array's codec: zarr3c's own)
            codec = {"name": spec["id"], "configuration": {}}
        else:
            codec = _named("numcodecs." + spec["id"],
                           {k: v for k, v in spec.items() if k != "id"})
        obj = _checked(codec, path=path, source=source)
        kind = getattr(obj, "kind", None)
        if kind == "array->array":
            if serialized:
                raise UnsupportedFeatureError(
                    f"{source or 'array'}: {path}: an array filter after a bytes filter has "
                    "no Zarr v3 form")
            current = obj.encoded_dtype(current)
            chain.append(codec)
            continue
        if not serialized:
            if kind == "array->bytes":
                chain.append(codec)
                serialized = True
                current = None
                continue
            chain.append(_bytes_codec(current))
            serialized = True
        if kind != "bytes->bytes":
            raise UnsupportedFeatureError(
                f"{source or 'array'}: {path}: filter {spec['id']!r} cannot follow the "
                "serialization of the chunk")
        chain.append(codec)
        current = None
    if not serialized:
        chain.append(_bytes_codec(current))
    if compressor is not None:
        codec_id, config = compressor["id"], compressor["configuration"]
        itemsize = current.itemsize if current is not None else 1
        v3 = _v3_compressor(codec_id, config, itemsize)
        _checked(v3, path="compressor", source=source)
        chain.append(v3)
    return tuple(chain)


def _bytes_codec(dtype: np.dtype | None) -> dict[str, Any]:
    if dtype is None or dtype.itemsize <= 1 or dtype.kind == "V":
        return {"name": "bytes"}
    if dtype.kind in "SU":
        # Strings are held in memory in their stored dtype (byte order included), so their
        # bytes are copied, never swapped: the bytes codec's native order does that.
        return {"name": "bytes", "configuration": {"endian": sys.byteorder}}
    return {"name": "bytes",
            "configuration": {"endian": "big" if dtype.str[0] == ">" else "little"}}


def _parse_compressor(value: Any, *, source: str | None) -> dict[str, Any] | None:
    """``{"id", "configuration"}`` from the document's ``compressor`` (None: none)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise MetadataError("must be an object", path="compressor", source=source)
    _unknown_fields(value, ("codec", "configuration"), path="compressor", source=source)
    uri = value.get("codec")
    if not isinstance(uri, str):
        raise MetadataError("must be a codec URI string", path="compressor.codec",
                            source=source)
    codec_id = uri[len(CODEC_URI_PREFIX):-len("/1.0")] if (
        uri.startswith(CODEC_URI_PREFIX) and uri.endswith("/1.0")) else None
    if codec_id not in COMPRESSOR_IDS:
        raise UnknownExtensionError(
            f"unknown compressor codec {uri!r} (zarr-python 2 named "
            f"{', '.join(CODEC_URI_PREFIX + c + '/1.0' for c in COMPRESSOR_IDS)})",
            path="compressor.codec", source=source,
        )
    config = value.get("configuration", {})
    if not isinstance(config, dict):
        raise MetadataError("must be an object", path="compressor.configuration",
                            source=source)
    config = dict(config)
    if "id" in config:
        if config["id"] != codec_id:
            raise MetadataError(f"must be {codec_id!r} (the codec URI's), got "
                                f"{config['id']!r}", path="compressor.configuration.id",
                                source=source)
        del config["id"]
    return {"id": codec_id, "configuration": config}


def _parse_filters(value: Any, *, source: str | None) -> tuple[dict[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MetadataError("must be a list of numcodecs configurations",
                            path="attributes.filters", source=source)
    out = []
    for i, spec in enumerate(value):
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
            raise MetadataError('must be a numcodecs configuration with a string "id"',
                                path=f"attributes.filters[{i}]", source=source)
        out.append(dict(spec))
    return tuple(out)


# -- arrays ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Zarr2V3ArrayMetadata(ArrayMetadataView):
    """An array document zarr-python 2 wrote in its v3 mode (``meta/root/<path>.array.json``),
    presented through the read interface of the final v3 ``ArrayMetadata``."""

    zarr_format: ClassVar[str] = "zarr2-v3"
    node_type: ClassVar[str] = "array"
    dimension_names: ClassVar[None] = None

    shape: tuple[int, ...]
    data_type: DataType
    data_type_json: Any
    chunk_grid: Any  # always the regular grid
    separator: str
    dimension_separator: str | None
    chunk_memory_layout: str
    fill_value: bytes
    fill_value_json: Any
    compressor: dict[str, Any] | None  # {"id", "configuration"}
    filters: tuple[dict[str, Any], ...] | None  # None: no "filters" attribute
    extensions: tuple[dict[str, Any], ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    codec_chain: tuple[dict[str, Any], ...] = ()

    _KNOWN: ClassVar[tuple[str, ...]] = (
        "attributes", "chunk_grid", "chunk_memory_layout", "compressor", "data_type",
        "dimension_separator", "extensions", "fill_value", "shape", "storage_transformers",
    )

    # -- the v3 view used by arrays ---------------------------------------------------------------





    @property
    def chunk_key_encoding(self) -> Zarr2V3ChunkKeyEncoding:
        return Zarr2V3ChunkKeyEncoding(separator=self.separator)

    @property
    def codecs(self) -> tuple[dict[str, Any], ...]:
        """The equivalent v3 codec chain (transpose for "F", filters, bytes, compressor)."""
        return self.codec_chain

    # -- documents -------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = None
                  ) -> Zarr2V3ArrayMetadata:
        _unknown_fields(doc, cls._KNOWN, path=None, source=source)
        for name in ("shape", "data_type", "chunk_grid", "chunk_memory_layout", "fill_value"):
            if name not in doc:
                raise MetadataError("is required", path=name, source=source)
        shape = _shape(doc["shape"], source=source)
        data_type, stored = _parse_data_type(doc["data_type"], source=source)
        grid, separator = _parse_chunk_grid(doc["chunk_grid"], len(shape), source=source)
        dim_sep = doc.get("dimension_separator")
        if dim_sep is not None and dim_sep != separator:
            # zarr-python 2 wrote it only equal to the grid's separator and keyed chunks by
            # the latter: any other value is not a document it wrote.
            raise MetadataError(f"{dim_sep!r} disagrees with chunk_grid.separator "
                                f"{separator!r}", path="dimension_separator", source=source)
        layout = doc["chunk_memory_layout"]
        if layout not in ("C", "F"):
            raise MetadataError('must be "C" or "F"', path="chunk_memory_layout", source=source)
        fill_json = doc["fill_value"]
        if fill_json is None:
            fill = data_type.default_fill_value()
        else:
            fill = data_type.parse_fill_value(fill_json, path="fill_value", source=source)
        transformers = doc.get("storage_transformers") or []
        if not isinstance(transformers, list):
            raise MetadataError("must be a list", path="storage_transformers", source=source)
        if transformers:
            raise UnsupportedFeatureError(
                f"{source or 'array'}: storage_transformers[0]: zarr3c does not read "
                "zarr-python 2's experimental storage transformers (sharding)"
            )
        attributes = parse_attributes(doc.get("attributes", {}), source=source)
        filters = None
        if "filters" in attributes:
            filters = _parse_filters(attributes.pop("filters"), source=source)
        compressor = _parse_compressor(doc.get("compressor"), source=source)
        chain = _build_chain(ndim=len(shape), dtype=stored, layout=layout,
                             filters=filters or (), compressor=compressor, source=source)
        return cls(
            shape=shape,
            data_type=data_type,
            data_type_json=doc["data_type"],
            chunk_grid=grid,
            separator=separator,
            dimension_separator=dim_sep,
            chunk_memory_layout=layout,
            fill_value=fill,
            fill_value_json=fill_json,
            compressor=compressor,
            filters=filters,
            extensions=_parse_extensions(doc.get("extensions", []), path="extensions",
                                         source=source),
            attributes=attributes,
            codec_chain=chain,
        )

    def to_dict(self) -> dict[str, Any]:
        attributes = dict(self.attributes)
        if self.filters is not None:
            attributes["filters"] = [dict(f) for f in self.filters]
        doc: dict[str, Any] = {
            "attributes": attributes,
            "chunk_grid": {"chunk_shape": list(self.chunk_grid.chunk_shape),
                           "separator": self.separator, "type": "regular"},
            "chunk_memory_layout": self.chunk_memory_layout,
            "data_type": self.data_type_json,
            "extensions": [dict(e) for e in self.extensions],
            "fill_value": self.fill_value_json,
            "shape": list(self.shape),
        }
        if self.compressor is not None:
            doc["compressor"] = {
                "codec": f"{CODEC_URI_PREFIX}{self.compressor['id']}/1.0",
                "configuration": dict(self.compressor["configuration"]),
            }
        if self.dimension_separator is not None:
            doc["dimension_separator"] = self.dimension_separator
        return doc

    @classmethod
    def from_json(cls, data: bytes, *, source: str | None = None) -> Zarr2V3ArrayMetadata:
        return cls.from_dict(load_json_object(data, source=source), source=source)

    def to_json(self) -> bytes:
        return dump_zarr2_json(self.to_dict())

    def evolve(self, **changes: Any) -> Zarr2V3ArrayMetadata:
        changes.pop("chunk_grid", None)  # the grid is regular: resizing leaves it unchanged
        if "filters" in changes.get("attributes", {}):
            # zarr-python 2 reads this attribute as the array's filters
            raise MetadataError(
                "is where zarr-python 2 keeps an array's filters; it cannot be set",
                path="attributes.filters",
            )
        new = dataclasses.replace(self, **changes)
        return type(self).from_dict(new.to_dict())

    @classmethod
    def from_v3(cls, md: Any, *, chunk_memory_layout: str = "C") -> Zarr2V3ArrayMetadata:
        """The zarr-python 2 document of a new array described by v3 metadata.

        A leading reversing transpose becomes ``chunk_memory_layout: "F"``, numcodecs
        array->array codecs and all but the last bytes->bytes codec become
        ``attributes["filters"]``, the ``bytes`` codec's byte order the data type's, and the
        last bytes->bytes codec the ``compressor``.  Raises MetadataError when the chain has no
        such form, or would read back differently.
        """
        parts = split_chain(md.codecs, ndim=len(md.shape), layout=chunk_memory_layout,
                            compressor_ids=COMPRESSOR_IDS, what="zarr-python 2's v3 layout")
        layout, filters, endian = parts.layout, parts.filters, parts.endian
        compressor = None
        if parts.compressor is not None:
            compressor = {"codec": f"{CODEC_URI_PREFIX}{parts.compressor['id']}/1.0",
                          "configuration": parts.compressor["configuration"]}
        attributes = dict(md.attributes)
        if "filters" in attributes:
            raise MetadataError("is where zarr-python 2 keeps an array's filters",
                                path="attributes.filters")
        if filters:
            attributes["filters"] = filters
        encoding = md.chunk_key_encoding
        separator = "/"
        if getattr(encoding, "name", None) == "default":
            separator = getattr(encoding, "separator", "/")
        doc: dict[str, Any] = {
            "attributes": attributes,
            "chunk_grid": {"chunk_shape": list(md.chunk_grid.chunk_shape),
                           "separator": separator, "type": "regular"},
            "chunk_memory_layout": layout,
            "data_type": _data_type_json(md.data_type, endian),
            "extensions": [],
            "fill_value": _fill_value_json(md.data_type, md.fill_value),
            "shape": list(md.shape),
        }
        if compressor is not None:
            doc["compressor"] = compressor
        if separator != "/":
            doc["dimension_separator"] = separator  # as zarr-python 2 wrote it
        new = cls.from_dict(doc)
        check_same_chain(new.codecs, md.codecs, layout=layout, ndim=len(md.shape),
                         what="zarr-python 2's v3 layout")
        return new


class ChainParts(NamedTuple):
    """A v3 codec chain taken apart into the pieces of a zarr-python 2 document."""

    #: "C", or "F" for a leading transpose reversing the axes
    layout: str
    #: numcodecs configurations (with ``id``), in encoding order
    filters: list[dict[str, Any]]
    #: the ``bytes`` serializer's byte order
    endian: str
    #: ``{"id", "configuration"}`` of the last bytes->bytes codec, or None
    compressor: dict[str, Any] | None


def split_chain(codecs: Sequence[Any], *, ndim: int, layout: str,
                compressor_ids: Sequence[str] | None, what: str) -> ChainParts:
    """Take the v3 chain ``codecs`` of a new array apart for a zarr-python 2 document.

    A leading reversing transpose becomes ``layout`` ``"F"``, numcodecs array->array codecs
    and all but the last bytes->bytes codec become filters, and the last bytes->bytes codec
    the compressor when its numcodecs id is one of ``compressor_ids`` (None: any).  Raises
    MetadataError, naming ``codecs[i]`` and ``what`` (the layout), for a chain with no such
    form.
    """
    chain = [c if isinstance(c, dict) else c.to_dict() for c in codecs]
    reverse = list(range(ndim))[::-1]
    skipped = 0  # (so that error paths index the caller's codecs)
    if (chain and chain[0]["name"] == "transpose"
            and (chain[0].get("configuration") or {}).get("order") == reverse):
        layout = "F" if ndim > 1 else layout
        chain = chain[1:]
        skipped = 1
    filters: list[dict[str, Any]] = []
    i = 0
    while i < len(chain) and chain[i]["name"] != "bytes":
        c = chain[i]
        if not c["name"].startswith("numcodecs."):
            raise MetadataError(
                f"codec {c['name']!r} has no form in {what} (filters are numcodecs codecs; "
                "the only other array codec is order='F')", path=f"codecs[{skipped + i}]",
            )
        filters.append({"id": c["name"][len("numcodecs."):], **(c.get("configuration") or {})})
        i += 1
    if i == len(chain):
        raise MetadataError(f"{what} needs the bytes serializer", path="codecs")
    endian = (chain[i].get("configuration") or {}).get("endian", "little")
    rest = chain[i + 1:]
    compressor = None
    if rest:
        codec_id, config = _numcodecs_config(rest[-1], path=f"codecs[{skipped + len(chain) - 1}]")
        if compressor_ids is None or codec_id in compressor_ids:
            compressor = {"id": codec_id, "configuration": config}
            rest = rest[:-1]
    for j, c in enumerate(rest):
        codec_id, config = _numcodecs_config(c, path=f"codecs[{skipped + i + 1 + j}]")
        filters.append({"id": codec_id, **config})
    return ChainParts(layout=layout, filters=filters, endian=endian, compressor=compressor)


def check_same_chain(read_back: Sequence[Any], asked: Sequence[Any], *, layout: str, ndim: int,
                     what: str) -> None:
    """Refuse (MetadataError on ``codecs``) a document whose chain ``read_back`` differs
    from the chain ``asked`` for (numcodecs gzip/zstd/blosc equal to their v3 codecs)."""
    wanted = list(asked)
    if layout == "F" and ndim > 1 and not (wanted and _normalized(wanted[0])["name"]
                                           == "transpose"):
        wanted.insert(0, {"name": "transpose",
                          "configuration": {"order": list(range(ndim))[::-1]}})
    typesize = next((c["configuration"]["typesize"] for c in read_back
                     if c["name"] == "blosc"), 1)
    if ([_comparable(c, typesize) for c in read_back]
            != [_comparable(c, typesize) for c in wanted]):
        raise MetadataError(
            f"the codecs {[_normalized(c) for c in wanted]} have no exact form in {what} "
            f"(it would read them as {list(read_back)})", path="codecs",
        )


def _normalized(codec: Any) -> dict[str, Any]:
    c = codec if isinstance(codec, dict) else codec.to_dict()
    config = c.get("configuration") or {}
    return {"name": c["name"], "configuration": config} if config else {"name": c["name"]}


def _comparable(codec: Any, itemsize: int) -> dict[str, Any]:
    c = _normalized(codec)
    codec_id = c["name"][len("numcodecs."):] if c["name"].startswith("numcodecs.") else None
    if codec_id in _NUMCODECS_DEFAULTS:
        return _normalized(_v3_compressor(codec_id, dict(c.get("configuration", {})), itemsize))
    return c


# -- groups ---------------------------------------------------------------------------------------


class Zarr2V3GroupMetadata(Draft2022GroupMetadata):
    """A group document zarr-python 2 wrote in its v3 mode (``meta/root/<path>.group.json``):
    the draft's ``{"attributes": ...}``, written as zarr-python 2 formatted its JSON."""

    __slots__ = ()
    zarr_format: ClassVar[str] = "zarr2-v3"

    def to_json(self) -> bytes:
        return dump_zarr2_json(self.to_dict())

