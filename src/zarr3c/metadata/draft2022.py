"""The metadata documents of the Zarr core spec editor's draft of 25 May 2022.

The draft: https://zarr-specs.readthedocs.io/en/latest/v3/core/v3.0.html.

zarr3c calls this layout ``"draft-2022"``.  A hierarchy has an entry point ``zarr.json``::

    {"zarr_format": "https://purl.org/zarr/spec/core/3.0",
     "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
     "extensions": []}

and one document per explicit node, ``meta/<path>.array.json`` / ``meta/<path>.group.json``::

    {"shape": [10000, 1000], "data_type": "<f8",
     "chunk_grid": {"type": "regular", "chunk_shape": [1000, 100], "separator": "/"},
     "chunk_memory_layout": "C", "fill_value": "NaN",
     "codecs": [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0",
                 "configuration": {"level": 1}}],
     "extensions": [], "attributes": {"foo": 42}}

:class:`Draft2022ArrayMetadata` keeps the document as written (so it is written back
unchanged) and presents the same read interface as the final v3 :class:`ArrayMetadata`
(``shape``, ``data_type``, ``chunk_grid``, ``chunk_key_encoding``, ``fill_value``,
``codecs`` as a v3 codec chain, ...): the codec chain is the draft's codecs after a ``bytes``
serializer whose byte order comes from the data type or an ``endian`` codec, preceded by a
reversing ``transpose`` when ``chunk_memory_layout`` is ``"F"``.  So arrays, kernels and
codecs are shared between the two layouts.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from zarr3c import registry
from zarr3c.errors import MetadataError, UnknownExtensionError
from zarr3c.metadata.array import (
    ArrayMetadataView,
    dump_json,
    load_json_object,
    parse_array_shape,
    parse_attributes,
)
from zarr3c.metadata.data_types import DataType, data_type_from_numpy, parse_data_type

__all__ = [
    "CORE_URI",
    "CODEC_URI_PREFIX",
    "EntryPoint",
    "Draft2022ChunkKeyEncoding",
    "Draft2022ArrayMetadata",
    "Draft2022GroupMetadata",
    "codec_uri",
]

CORE_URI = "https://purl.org/zarr/spec/core/3.0"
CODEC_URI_PREFIX = "https://purl.org/zarr/spec/codecs/"
_BLOSC_SHUFFLE = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def codec_uri(name: str) -> str:
    """The draft's ``type`` URI of a codec zarr3c knows by ``name``."""
    if "." in name:  # numcodecs.* and other dotted names have no purl URI
        return name
    return f"{CODEC_URI_PREFIX}{name}/1.0"


def _codec_name(type_: str) -> str:
    if type_.startswith(CODEC_URI_PREFIX):
        return type_[len(CODEC_URI_PREFIX):].split("/", 1)[0]
    return type_


def _parse_extensions(value: Any, *, path: str, source: str | None) -> tuple[dict[str, Any], ...]:
    """The ``extensions`` list: unknown ones that must be understood are refused (zarr3c
    understands none); the others are kept and written back."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MetadataError("must be a list", path=path, source=source)
    kept = []
    for i, ext in enumerate(value):
        p = f"{path}[{i}]"
        if not isinstance(ext, dict) or not isinstance(ext.get("extension"), str):
            raise MetadataError("must be an object with a string \"extension\"", path=p,
                                source=source)
        must = ext.get("must_understand")
        if not isinstance(must, bool):
            raise MetadataError("\"must_understand\" must be true or false", path=p,
                                source=source)
        if must:
            raise UnknownExtensionError(
                f"unknown extension {ext['extension']!r} must be understood", path=p,
                source=source,
            )
        kept.append(dict(ext))
    return tuple(kept)


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryPoint:
    """The entry point document, ``zarr.json`` at the root of a draft-2022 hierarchy."""

    metadata_key_suffix: str = ".json"
    extensions: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = "zarr.json") -> EntryPoint:
        if doc.get("zarr_format") != CORE_URI:
            raise MetadataError(f"must be {CORE_URI!r}", path="zarr_format", source=source)
        unknown = set(doc) - {"zarr_format", "metadata_encoding", "extensions"}
        if unknown:
            raise MetadataError(f"unknown fields {sorted(unknown)}", source=source)
        enc = doc.get("metadata_encoding")
        if not isinstance(enc, dict):
            raise MetadataError("must be an object", path="metadata_encoding", source=source)
        if "extension" in enc or enc.get("type") != "json":
            raise UnknownExtensionError(
                f"unknown metadata encoding {enc.get('extension', enc.get('type'))!r} "
                "(zarr3c reads JSON)", path="metadata_encoding.type", source=source,
            )
        suffix = enc.get("metadata_key_suffix", ".json")
        if not isinstance(suffix, str) or "/" in suffix:
            raise MetadataError("must be a string without '/'",
                                path="metadata_encoding.metadata_key_suffix", source=source)
        unknown = set(enc) - {"type", "metadata_key_suffix"}
        if unknown:
            raise MetadataError(f"unknown fields {sorted(unknown)}", path="metadata_encoding",
                                source=source)
        return cls(metadata_key_suffix=suffix,
                   extensions=_parse_extensions(doc.get("extensions", []), path="extensions",
                                                source=source))

    def to_dict(self) -> dict[str, Any]:
        return {
            "zarr_format": CORE_URI,
            "metadata_encoding": {
                "type": "json", "metadata_key_suffix": self.metadata_key_suffix,
            },
            "extensions": [dict(e) for e in self.extensions],
        }

    def to_json(self) -> bytes:
        return dump_json(self.to_dict())


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft2022ChunkKeyEncoding:
    """Chunk identifiers of the draft's regular grid: ``c1/23/45`` (``c`` for 0-d)."""

    name: ClassVar[str] = "draft-2022"
    separator: str = "/"

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        return "c" + self.separator.join(str(i) for i in coords)

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        if not key.startswith("c"):
            return None
        body = key[1:]
        if body == "":
            coords: tuple[int, ...] = ()
        else:
            parts = body.split(self.separator)
            if not all(p.isdigit() and p.isascii() for p in parts):
                return None
            coords = tuple(int(p) for p in parts)
        if ndim is not None and len(coords) != ndim:
            return None
        return coords


def _parse_data_type(value: Any, *, source: str | None) -> tuple[DataType, str]:
    """The data type and its byte order on disk ("little" or "big")."""
    if isinstance(value, dict):
        if not isinstance(value.get("extension"), str) or "type" not in value:
            raise MetadataError("a data type extension needs \"extension\" and \"type\"",
                                path="data_type", source=source)
        fallback = value.get("fallback")
        candidates = fallback if isinstance(fallback, list) else [fallback] if fallback else []
        for candidate in candidates:
            try:
                found = _parse_data_type(candidate, source=source)
            except MetadataError:
                continue
            warnings.warn(
                f"{source or 'array'}: data type extension {value['extension']!r} is not "
                f"supported; using its fallback {candidate!r}",
                stacklevel=2,
            )
            return found
        raise UnknownExtensionError(
            f"unknown data type extension {value['extension']!r} with no known fallback",
            path="data_type", source=source,
        )
    if isinstance(value, str) and value[:1] in "<>|" and len(value) > 1:
        try:
            dt = np.dtype(value)
        except TypeError:
            raise UnknownExtensionError(f"unknown data type {value!r}", path="data_type",
                                        source=source) from None
        endian = "big" if dt.byteorder == ">" else "little"
        try:
            # The 2022 draft has numbers and raw bits (kept as r<N>, not raw_bytes).
            plain_void = dt.type is np.void and dt.fields is None and dt.subdtype is None
            core = data_type_from_numpy(f"r{8 * dt.itemsize}" if plain_void else dt)
            if core.family not in ("core", "r"):
                raise MetadataError(f"unsupported data type {value!r}")
            return core, endian
        except MetadataError:
            raise UnknownExtensionError(f"unsupported data type {value!r}", path="data_type",
                                        source=source) from None
    return parse_data_type(value, path="data_type", source=source), "little"


def _parse_chunk_grid(value: Any, ndim: int, *, source: str | None) -> tuple[Any, str]:
    if not isinstance(value, dict):
        raise MetadataError("must be an object", path="chunk_grid", source=source)
    if "extension" in value or value.get("type") != "regular":
        raise UnknownExtensionError(
            f"unknown chunk grid {value.get('extension', value.get('type'))!r}",
            path="chunk_grid", source=source,
        )
    unknown = set(value) - {"type", "chunk_shape", "separator"}
    if unknown:
        raise MetadataError(f"unknown fields {sorted(unknown)}", path="chunk_grid",
                            source=source)
    separator = value.get("separator", "/")
    if separator not in ("/", "."):
        raise MetadataError('must be "/" or "."', path="chunk_grid.separator", source=source)
    if "chunk_shape" not in value:
        raise MetadataError("is required", path="chunk_grid.chunk_shape", source=source)
    grid = registry.chunk_grids.get("regular").from_dict(
        {"name": "regular", "configuration": {"chunk_shape": value["chunk_shape"]}},
        ndim=ndim, path="chunk_grid", source=source,
    )
    return grid, separator


def _parse_codecs(value: Any, *, source: str | None) -> tuple[dict[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MetadataError("must be a list", path="codecs", source=source)
    out = []
    for i, codec in enumerate(value):
        p = f"codecs[{i}]"
        if not isinstance(codec, dict) or not isinstance(codec.get("type"), str):
            raise MetadataError('must be an object with a string "type"', path=p, source=source)
        unknown = set(codec) - {"type", "configuration"}
        if unknown:
            raise MetadataError(f"unknown fields {sorted(unknown)}", path=p, source=source)
        if not isinstance(codec.get("configuration", {}), dict):
            raise MetadataError("must be an object", path=f"{p}.configuration", source=source)
        out.append(dict(codec))
    return tuple(out)


def _v3_codec(codec: Mapping[str, Any]) -> dict[str, Any]:
    name = _codec_name(codec["type"])
    config = dict(codec.get("configuration") or {})
    if name == "blosc" and isinstance(config.get("shuffle"), int):
        config["shuffle"] = _BLOSC_SHUFFLE.get(config["shuffle"], config["shuffle"])
    return {"name": name, "configuration": config} if config else {"name": name}


def _shape(value: Any, *, source: str | None) -> tuple[int, ...]:
    return parse_array_shape(value, source=source)


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft2022ArrayMetadata(ArrayMetadataView):
    """An array document of the draft-2022 layout (``meta/<path>.array.json``)."""

    zarr_format: ClassVar[str] = "draft-2022"
    node_type: ClassVar[str] = "array"

    shape: tuple[int, ...]
    data_type: DataType
    data_type_json: Any
    endian: str
    chunk_grid: Any  # always the regular grid
    separator: str
    chunk_memory_layout: str
    fill_value: bytes
    draft_codecs: tuple[dict[str, Any], ...] = ()
    extensions: tuple[dict[str, Any], ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: ClassVar[None] = None

    _KNOWN: ClassVar[frozenset[str]] = frozenset({
        "shape", "data_type", "chunk_grid", "chunk_memory_layout", "fill_value", "codecs",
        "extensions", "attributes", "storage_transformers",
    })

    # -- the v3 view used by arrays ---------------------------------------------------------------





    @property
    def chunk_key_encoding(self) -> Draft2022ChunkKeyEncoding:
        return Draft2022ChunkKeyEncoding(separator=self.separator)

    @property
    def codecs(self) -> tuple[dict[str, Any], ...]:
        """The equivalent v3 codec chain (transpose for "F", bytes, then the draft codecs)."""
        chain: list[dict[str, Any]] = []
        if self.chunk_memory_layout == "F" and self.ndim > 1:
            chain.append({"name": "transpose",
                          "configuration": {"order": list(range(self.ndim))[::-1]}})
        endian = self.endian
        rest = []
        for codec in self.draft_codecs:
            v3 = _v3_codec(codec)
            if v3["name"] == "endian":
                endian = v3.get("configuration", {}).get("endian", endian)
            else:
                rest.append(v3)
        if self.data_type.itemsize == 1 or self.data_type.is_raw:
            chain.append({"name": "bytes"})
        else:
            chain.append({"name": "bytes", "configuration": {"endian": endian}})
        return tuple(chain + rest)

    # -- documents -------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = None
                  ) -> Draft2022ArrayMetadata:
        unknown = sorted(set(doc) - cls._KNOWN)
        if unknown:
            raise MetadataError(
                f"unknown metadata fields {unknown} (the draft allows no others)", source=source
            )
        for name in ("shape", "data_type", "chunk_grid", "chunk_memory_layout", "fill_value"):
            if name not in doc:
                raise MetadataError("is required", path=name, source=source)
        shape = _shape(doc["shape"], source=source)
        data_type, endian = _parse_data_type(doc["data_type"], source=source)
        grid, separator = _parse_chunk_grid(doc["chunk_grid"], len(shape), source=source)
        layout = doc["chunk_memory_layout"]
        if isinstance(layout, dict):
            raise UnknownExtensionError(
                f"unknown chunk memory layout {layout.get('extension')!r}",
                path="chunk_memory_layout", source=source,
            )
        if layout not in ("C", "F"):
            raise MetadataError('must be "C" or "F"', path="chunk_memory_layout", source=source)
        fill_json = doc["fill_value"]
        if fill_json is None and isinstance(doc["data_type"], dict):
            fill = data_type.default_fill_value()  # the extension's to interpret; not ours
        else:
            if isinstance(fill_json, str) and fill_json == "+Infinity":
                fill_json = "Infinity"
            fill = data_type.parse_fill_value(fill_json, path="fill_value", source=source)
        transformers = doc.get("storage_transformers", [])
        if not isinstance(transformers, list):
            raise MetadataError("must be a list", path="storage_transformers", source=source)
        if transformers:
            raise UnknownExtensionError("zarr3c understands no storage transformer",
                                        path="storage_transformers[0]", source=source)
        return cls(
            shape=shape,
            data_type=data_type,
            data_type_json=doc["data_type"],
            endian=endian,
            chunk_grid=grid,
            separator=separator,
            chunk_memory_layout=layout,
            fill_value=fill,
            draft_codecs=_parse_codecs(doc.get("codecs"), source=source),
            extensions=_parse_extensions(doc.get("extensions", []), path="extensions",
                                         source=source),
            attributes=parse_attributes(doc.get("attributes", {}), source=source),
        )

    def to_dict(self) -> dict[str, Any]:
        fill = self.data_type.fill_value_to_json(self.fill_value)
        if fill == "Infinity":
            fill = "+Infinity"  # the spelling the draft lists
        return {
            "shape": list(self.shape),
            "data_type": self.data_type_json,
            "chunk_grid": {"type": "regular", "chunk_shape": list(self.chunk_grid.chunk_shape),
                           "separator": self.separator},
            "chunk_memory_layout": self.chunk_memory_layout,
            "fill_value": fill,
            "codecs": [dict(c) for c in self.draft_codecs],
            "extensions": [dict(e) for e in self.extensions],
            "attributes": self.attributes,
        }

    @classmethod
    def from_json(cls, data: bytes, *, source: str | None = None) -> Draft2022ArrayMetadata:
        return cls.from_dict(load_json_object(data, source=source), source=source)

    def to_json(self) -> bytes:
        return dump_json(self.to_dict())

    def evolve(self, **changes: Any) -> Draft2022ArrayMetadata:
        changes.pop("chunk_grid", None)  # the draft's grid is regular: it never changes
        new = dataclasses.replace(self, **changes)
        return type(self).from_dict(new.to_dict())

    @classmethod
    def from_v3(cls, md: Any, *, chunk_memory_layout: str = "C") -> Draft2022ArrayMetadata:
        """The draft document of a new array described by v3 metadata (from create_array).

        A leading transpose that reverses the axes becomes ``chunk_memory_layout: "F"``, a
        big-endian ``bytes`` codec an ``endian`` codec, the bytes->bytes codecs keep their
        configurations under the draft's ``type`` URIs.
        """
        codecs = [c if isinstance(c, dict) else c.to_dict() for c in md.codecs]
        layout = chunk_memory_layout
        ndim = len(md.shape)
        if (codecs and codecs[0]["name"] == "transpose"
                and codecs[0].get("configuration", {}).get("order") == list(range(ndim))[::-1]):
            layout = "F" if ndim > 1 else "C"
            codecs = codecs[1:]
        if not codecs or codecs[0]["name"] != "bytes":
            raise MetadataError(
                "draft-2022 arrays take a bytes serializer, bytes->bytes codecs and "
                "optionally order='F'; other array->array codecs have no draft form",
                path="codecs",
            )
        draft: list[dict[str, Any]] = []
        if codecs[0].get("configuration", {}).get("endian") == "big":
            draft.append({"type": codec_uri("endian"), "configuration": {"endian": "big"}})
        for c in codecs[1:]:
            entry: dict[str, Any] = {"type": codec_uri(c["name"])}
            if c.get("configuration"):
                entry["configuration"] = dict(c["configuration"])
            draft.append(entry)
        return cls.from_dict({
            "shape": list(md.shape),
            "data_type": md.data_type.name,
            "chunk_grid": {"type": "regular", "chunk_shape": list(md.chunk_grid.chunk_shape),
                           "separator": "/"},
            "chunk_memory_layout": layout,
            "fill_value": md.data_type.fill_value_to_json(md.fill_value),
            "codecs": draft,
            "extensions": [],
            "attributes": dict(md.attributes),
        })


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft2022GroupMetadata:
    """A group document of the draft-2022 layout (``meta/<path>.group.json``)."""

    zarr_format: ClassVar[str] = "draft-2022"
    node_type: ClassVar[str] = "group"

    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = None
                  ) -> Draft2022GroupMetadata:
        unknown = sorted(set(doc) - {"attributes"})
        if unknown:
            raise MetadataError(f"unknown metadata fields {unknown} (groups hold only "
                                "attributes)", source=source)
        return cls(attributes=parse_attributes(doc.get("attributes", {}), source=source))

    def to_dict(self) -> dict[str, Any]:
        return {"attributes": self.attributes}

    @classmethod
    def from_json(cls, data: bytes, *, source: str | None = None) -> Draft2022GroupMetadata:
        return cls.from_dict(load_json_object(data, source=source), source=source)

    def to_json(self) -> bytes:
        return dump_json(self.to_dict())

    def evolve(self, **changes: Any) -> Draft2022GroupMetadata:
        new = dataclasses.replace(self, **changes)
        return type(self).from_dict(new.to_dict())
