"""One registry class for every kind of extension: codecs, chunk grids, chunk key encodings.

Built-ins are listed in one place per kind (below) as ``"module:attribute"`` strings and are
imported lazily, so importing zarr3c stays cheap and lower layers (metadata) can resolve names
without importing higher ones.  Third parties register through entry points in the group of
each registry (``zarr3c.codecs``, ``zarr3c.chunk_grids``, ``zarr3c.chunk_key_encodings``) or by
calling :meth:`Registry.register`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from zarr3c.errors import UnknownExtensionError

T = TypeVar("T")

__all__ = ["Registry", "chunk_grids", "chunk_key_encodings", "codecs"]


class Registry(Generic[T]):
    """Maps extension names to implementations (classes, usually).

    Parameters
    ----------
    kind
        What is registered, for error messages ("codec", "chunk grid", ...).
    entry_point_group
        The entry point group scanned once, on first miss, for third-party registrations.
    builtins
        ``name -> "module:attribute"`` for the implementations shipped with zarr3c.
    """

    def __init__(self, kind: str, entry_point_group: str, builtins: dict[str, str]):
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._lazy: dict[str, str] = dict(builtins)
        self._loaded: dict[str, T] = {}
        self._entry_points_scanned = False
        self._lock = threading.Lock()
        #: Counts :meth:`register` calls: what was built from earlier lookups (a cached
        #: codec pipeline) is stale once it changes.
        self.generation = 0

    def register(self, name: str, obj: T) -> None:
        """Register ``obj`` under ``name``, replacing any earlier registration."""
        with self._lock:
            self._loaded[name] = obj
            self._lazy.pop(name, None)
            self.generation += 1

    def _scan_entry_points(self) -> None:
        if self._entry_points_scanned:
            return
        self._entry_points_scanned = True
        for ep in entry_points(group=self.entry_point_group):
            self._lazy.setdefault(ep.name, ep.value)

    def get(self, name: Any, *, path: str | None = None, source: str | None = None) -> T:
        """Return the implementation registered under ``name``.

        Raises
        ------
        UnknownExtensionError
            If nothing is registered under ``name``; the message names the kind, the name and
            (when given) the JSON path and source document.
        """
        if not isinstance(name, str):
            raise UnknownExtensionError(
                f"{self.kind} name must be a string, got {name!r}", path=path, source=source
            )
        with self._lock:
            obj = self._loaded.get(name)
            if obj is not None:
                return obj
            target = self._lazy.get(name)
            if target is None:
                self._scan_entry_points()
                target = self._lazy.get(name)
            if target is None:
                known = ", ".join(sorted(set(self._lazy) | set(self._loaded)))
                raise UnknownExtensionError(
                    f"unknown {self.kind} {name!r} (known: {known})", path=path, source=source
                )
        module_name, _, attr = target.partition(":")
        obj = getattr(importlib.import_module(module_name), attr)
        with self._lock:
            self._loaded[name] = obj
            self._lazy.pop(name, None)
        return obj

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._loaded or name in self._lazy:
            return True
        self._scan_entry_points()
        return name in self._lazy

    def names(self) -> Iterable[str]:
        self._scan_entry_points()
        return sorted(set(self._lazy) | set(self._loaded))


# The built-ins, one place per kind.

codecs: Registry[Any] = Registry(
    "codec",
    "zarr3c.codecs",
    {
        "bytes": "zarr3c.codecs.bytes:BytesCodec",
        "endian": "zarr3c.codecs.bytes:EndianCodec",  # the name used by early v3 writers
        "transpose": "zarr3c.codecs.transpose:TransposeCodec",
        "reshape": "zarr3c.codecs.reshape:ReshapeCodec",
        "scale_offset": "zarr3c.codecs.scale_offset:ScaleOffsetCodec",
        "cast_value": "zarr3c.codecs.cast_value:CastValueCodec",
        "gzip": "zarr3c.codecs.gzip:GzipCodec",
        "zstd": "zarr3c.codecs.zstd:ZstdCodec",
        "vlen-utf8": "zarr3c.codecs.vlen:VLenUTF8Codec",
        "vlen-bytes": "zarr3c.codecs.vlen:VLenBytesCodec",
        "blosc": "zarr3c.codecs.blosc:BloscCodec",
        "crc32c": "zarr3c.codecs.crc32c:Crc32cCodec",
        "sharding_indexed": "zarr3c.codecs.sharding:ShardingCodec",
        # numcodecs codecs under the names zarr-python 3 writes (not in the v3 spec)
        "numcodecs.zlib": "zarr3c.codecs.numcodecs_adapter:Zlib",
        "numcodecs.gzip": "zarr3c.codecs.numcodecs_adapter:GZip",
        "numcodecs.bz2": "zarr3c.codecs.numcodecs_adapter:BZ2",
        "numcodecs.lzma": "zarr3c.codecs.numcodecs_adapter:LZMA",
        "numcodecs.lz4": "zarr3c.codecs.numcodecs_adapter:LZ4",
        "numcodecs.zstd": "zarr3c.codecs.numcodecs_adapter:Zstd",
        "numcodecs.blosc": "zarr3c.codecs.numcodecs_adapter:Blosc",
        "numcodecs.shuffle": "zarr3c.codecs.numcodecs_adapter:Shuffle",
        "numcodecs.adler32": "zarr3c.codecs.numcodecs_adapter:Adler32",
        "numcodecs.crc32": "zarr3c.codecs.numcodecs_adapter:CRC32",
        "numcodecs.crc32c": "zarr3c.codecs.numcodecs_adapter:CRC32C",
        "numcodecs.fletcher32": "zarr3c.codecs.numcodecs_adapter:Fletcher32",
        "numcodecs.jenkins_lookup3": "zarr3c.codecs.numcodecs_adapter:JenkinsLookup3",
        "numcodecs.delta": "zarr3c.codecs.numcodecs_adapter:Delta",
        "numcodecs.bitround": "zarr3c.codecs.numcodecs_adapter:BitRound",
        "numcodecs.quantize": "zarr3c.codecs.numcodecs_adapter:Quantize",
        "numcodecs.fixedscaleoffset": "zarr3c.codecs.numcodecs_adapter:FixedScaleOffset",
        "numcodecs.astype": "zarr3c.codecs.numcodecs_adapter:AsType",
        "numcodecs.packbits": "zarr3c.codecs.numcodecs_adapter:PackBits",
        "numcodecs.pcodec": "zarr3c.codecs.numcodecs_adapter:PCodec",
        "numcodecs.zfpy": "zarr3c.codecs.numcodecs_adapter:ZFPY",
        # the object codecs of Zarr v2 object arrays (zarr3c's own, over numcodecs)
        "numcodecs.vlen-array": "zarr3c.codecs.object_codecs:VLenArrayCodec",
        "numcodecs.json2": "zarr3c.codecs.object_codecs:JSONCodec",
    },
)

chunk_grids: Registry[Any] = Registry(
    "chunk grid",
    "zarr3c.chunk_grids",
    {
        "regular": "zarr3c.chunk_grids.regular:RegularChunkGrid",
        "rectilinear": "zarr3c.chunk_grids.rectilinear:RectilinearChunkGrid",
    },
)

chunk_key_encodings: Registry[Any] = Registry(
    "chunk key encoding",
    "zarr3c.chunk_key_encodings",
    {
        "default": "zarr3c.chunk_key_encodings:DefaultChunkKeyEncoding",
        "v2": "zarr3c.chunk_key_encodings:V2ChunkKeyEncoding",
    },
)
