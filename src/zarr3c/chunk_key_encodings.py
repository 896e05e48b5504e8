"""Chunk key encodings: chunk grid coordinates <-> store keys (relative to the array's prefix).

Zarr v3 core (and seed 003, "Chunk grids", for the ``c`` prefix and the separator):

``default``
    ``"c"`` followed by the coordinates, each preceded by the separator (``"/"`` by default,
    or ``"."``): chunk ``(1, 23, 45)`` -> ``"c/1/23/45"`` (or ``"c.1.23.45"``); a 0-d array's
    only chunk -> ``"c"``.
``v2``
    The coordinates joined by the separator (``"."`` by default, or ``"/"``), as Zarr v2 does:
    ``(1, 23, 45)`` -> ``"1.23.45"``; 0-d -> ``"0"``.

JSON (the configuration is optional on read; zarr3c always writes it, as zarr-python does)::

    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}
    "chunk_key_encoding": "v2"                     # short-hand: the name alone
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from zarr3c import registry
from zarr3c.errors import MetadataError

__all__ = [
    "ChunkKeyEncoding",
    "DefaultChunkKeyEncoding",
    "V2ChunkKeyEncoding",
    "parse_chunk_key_encoding",
]

Separator = Literal["/", "."]
_SEPARATORS = ("/", ".")


def _parse_separator(
    cls_name: str, default: str, data: Any, *, path: str, source: str | None
) -> str:
    """Validate a chunk key encoding object (or bare name) and return its separator."""
    if isinstance(data, str):
        data = {"name": data}
    if not isinstance(data, Mapping):
        raise MetadataError(
            f"chunk key encoding must be an object or a name, got {data!r}",
            path=path,
            source=source,
        )
    unknown = sorted(set(data) - {"name", "configuration"})
    if unknown:
        raise MetadataError(
            f"unknown field(s) {', '.join(map(repr, unknown))} in the chunk key encoding",
            path=path,
            source=source,
        )
    if data.get("name") != cls_name:
        raise MetadataError(
            f"expected chunk key encoding name {cls_name!r}, got {data.get('name')!r}",
            path=f"{path}.name",
            source=source,
        )
    config = data.get("configuration")
    cpath = f"{path}.configuration"
    if config is None:
        return default
    if not isinstance(config, Mapping):
        raise MetadataError(
            f"configuration must be an object, got {config!r}", path=cpath, source=source
        )
    unknown = sorted(set(config) - {"separator"})
    if unknown:
        raise MetadataError(
            f"unknown field(s) {', '.join(map(repr, unknown))}", path=cpath, source=source
        )
    sep = config.get("separator", default)
    if sep not in _SEPARATORS:
        raise MetadataError(
            f"separator must be \"/\" or \".\", got {sep!r}",
            path=f"{cpath}.separator",
            source=source,
        )
    return str(sep)


def _parse_index(text: str) -> int | None:
    # Only the canonical decimal form we write: no sign, no leading zeros, ASCII digits.
    if not text or not text.isascii() or not text.isdigit():
        return None
    if len(text) > 1 and text[0] == "0":
        return None
    return int(text)


def _check_separator(sep: Any) -> None:
    if sep not in _SEPARATORS:
        raise MetadataError(
            f"separator must be \"/\" or \".\", got {sep!r}",
            path="chunk_key_encoding.configuration.separator",
        )


class ChunkKeyEncoding:
    """Common base of the chunk key encodings: the interface and the shared ``to_dict``."""

    __slots__ = ()

    name: ClassVar[str]
    separator: str

    def encode_chunk_key(self, coords: Sequence[int]) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def decode_chunk_key(
        self, key: str, *, ndim: int | None = None
    ) -> tuple[int, ...] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``chunk_key_encoding`` object (always with its configuration)."""
        return {"name": self.name, "configuration": {"separator": self.separator}}


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultChunkKeyEncoding(ChunkKeyEncoding):
    """The ``default`` encoding: ``c/1/23/45`` (or ``c.1.23.45``); ``c`` for a 0-d array.

    Parameters
    ----------
    separator
        ``"/"`` (default) or ``"."``.
    """

    name: ClassVar[str] = "default"

    separator: Separator = "/"

    def __post_init__(self) -> None:
        _check_separator(self.separator)

    @classmethod
    def from_dict(
        cls, data: Any, *, path: str = "chunk_key_encoding", source: str | None = None
    ) -> DefaultChunkKeyEncoding:
        """Parse the ``chunk_key_encoding`` object (or the bare name ``"default"``).

        Raises
        ------
        MetadataError
            On a wrong name, an unknown field or a separator other than ``"/"``/``"."``.
        """
        sep = _parse_separator(cls.name, "/", data, path=path, source=source)
        return cls(separator=sep)  # type: ignore[arg-type]

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """The store key of the chunk at grid coordinates ``coords``."""
        if not coords:
            return "c"
        sep = self.separator
        return "c" + sep + sep.join(map(str, coords))

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        """Grid coordinates of a chunk key, or None if ``key`` is not one of this encoding.

        Parameters
        ----------
        key
            A key relative to the array's prefix.
        ndim
            When given, keys with another number of coordinates are not chunk keys.
        """
        if key == "c":
            coords: tuple[int, ...] = ()
        else:
            sep = self.separator
            if not key.startswith("c" + sep):
                return None
            parts = key[2:].split(sep)
            values = [_parse_index(p) for p in parts]
            if any(v is None for v in values):
                return None
            coords = tuple(values)  # type: ignore[arg-type]
        if ndim is not None and len(coords) != ndim:
            return None
        return coords


@dataclass(frozen=True, slots=True, kw_only=True)
class V2ChunkKeyEncoding(ChunkKeyEncoding):
    """The ``v2`` encoding: ``1.23.45`` (or ``1/23/45``); ``0`` for a 0-d array.

    Parameters
    ----------
    separator
        ``"."`` (default) or ``"/"``.
    """

    name: ClassVar[str] = "v2"

    separator: Separator = "."

    def __post_init__(self) -> None:
        _check_separator(self.separator)

    @classmethod
    def from_dict(
        cls, data: Any, *, path: str = "chunk_key_encoding", source: str | None = None
    ) -> V2ChunkKeyEncoding:
        """Parse the ``chunk_key_encoding`` object (or the bare name ``"v2"``).

        Raises
        ------
        MetadataError
            On a wrong name, an unknown field or a separator other than ``"/"``/``"."``.
        """
        sep = _parse_separator(cls.name, ".", data, path=path, source=source)
        return cls(separator=sep)  # type: ignore[arg-type]

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """The store key of the chunk at grid coordinates ``coords``."""
        if not coords:
            return "0"
        return self.separator.join(map(str, coords))

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        """Grid coordinates of a chunk key, or None if ``key`` is not one of this encoding.

        ``"0"`` is both the 0-d chunk and chunk ``(0,)`` of a 1-d array: it decodes to ``()``
        when ``ndim == 0`` and to ``(0,)`` otherwise.
        """
        if ndim == 0:
            return () if key == "0" else None
        values = [_parse_index(p) for p in key.split(self.separator)]
        if any(v is None for v in values):
            return None
        coords: tuple[int, ...] = tuple(values)  # type: ignore[arg-type]
        if ndim is not None and len(coords) != ndim:
            return None
        return coords


def parse_chunk_key_encoding(
    data: Any, *, path: str = "chunk_key_encoding", source: str | None = None
) -> Any:
    """Parse a ``chunk_key_encoding`` JSON value (object or bare name) via the registry.

    Raises
    ------
    MetadataError
        If the value is neither a name nor an object with a string ``name``, or the encoding
        refuses its configuration.
    UnknownExtensionError
        If no encoding is registered under the name.
    """
    if isinstance(data, str):
        name: Any = data
    elif isinstance(data, Mapping):
        name = data.get("name")
        if not isinstance(name, str):
            raise MetadataError(
                f"chunk key encoding \"name\" must be a string, got {name!r}",
                path=f"{path}.name",
                source=source,
            )
    else:
        raise MetadataError(
            f"chunk key encoding must be an object or a name, got {data!r}",
            path=path,
            source=source,
        )
    cls = registry.chunk_key_encodings.get(name, path=f"{path}.name", source=source)
    return cls.from_dict(data, path=path, source=source)
