"""Codecs and the codec pipeline that runs them.

The v3 core specification's "Chunk encoding":
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html.

The codec classes are imported lazily (attribute access), like the registry's built-ins, so
that importing :mod:`zarr3c.codecs` stays cheap; names resolve to codec objects only through
:meth:`CodecPipeline.from_codecs`.
"""

from __future__ import annotations

import importlib
from typing import Any

from zarr3c.codecs.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
)
from zarr3c.codecs.pipeline import (
    CodecPipeline,
    default_compressors,
    default_serializer,
    normalize_codec_like,
    parse_codecs,
)

__all__ = [
    "ArrayArrayCodec",
    "ArrayBytesCodec",
    "BloscCodec",
    "BytesBytesCodec",
    "BytesCodec",
    "CastValueCodec",
    "ChunkSpec",
    "Codec",
    "CodecPipeline",
    "Crc32cCodec",
    "GzipCodec",
    "ReshapeCodec",
    "ScaleOffsetCodec",
    "ShardingCodec",
    "TransposeCodec",
    "VLenBytesCodec",
    "VLenUTF8Codec",
    "ZstdCodec",
    "default_compressors",
    "default_serializer",
    "normalize_codec_like",
    "parse_codecs",
]

_LAZY = {
    "BytesCodec": "zarr3c.codecs.bytes",
    "TransposeCodec": "zarr3c.codecs.transpose",
    "GzipCodec": "zarr3c.codecs.gzip",
    "ZstdCodec": "zarr3c.codecs.zstd",
    "BloscCodec": "zarr3c.codecs.blosc",
    "Crc32cCodec": "zarr3c.codecs.crc32c",
    "ReshapeCodec": "zarr3c.codecs.reshape",
    "ScaleOffsetCodec": "zarr3c.codecs.scale_offset",
    "CastValueCodec": "zarr3c.codecs.cast_value",
    "ShardingCodec": "zarr3c.codecs.sharding",
    "VLenUTF8Codec": "zarr3c.codecs.vlen",
    "VLenBytesCodec": "zarr3c.codecs.vlen",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
