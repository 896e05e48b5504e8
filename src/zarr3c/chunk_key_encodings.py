"""Chunk key encodings: chunk grid coordinates <-> store keys (relative to the array's prefix).

The v3 core specification's chunk key encodings
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html):

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
    """Common base of the chunk key encodings: the interface and the shared ``to_dict``.

    Examples
    --------
    >>> from zarr3c.chunk_key_encodings import ChunkKeyEncoding, DefaultChunkKeyEncoding
    >>> isinstance(DefaultChunkKeyEncoding(), ChunkKeyEncoding)
    True
    """

    __slots__ = ()

    name: ClassVar[str]
    separator: str

    def encode_chunk_keys(self, coords: Sequence[Sequence[int]]) -> list[str]:
        """The store keys of many chunks at once (:meth:`encode_chunk_key` of each), for a
        read planned in bulk.

        Parameters
        ----------
        coords : sequence of sequences of int, or a 2-d integer numpy array
            One row of grid coordinates per chunk.

        Returns
        -------
        list of str
            The keys, in the order of ``coords``.

        Raises
        ------
        None
            Any coordinates have a key.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> DefaultChunkKeyEncoding().encode_chunk_keys([(0, 1), (2, 3)])
        ['c/0/1', 'c/2/3']
        """
        rows = coords.tolist() if hasattr(coords, "tolist") else coords
        # One comprehension with C-level string building: no Python call per chunk.
        head, sep = self._key_head(), self.separator
        if rows and not len(rows[0]):
            return [self.encode_chunk_key(())] * len(rows)
        return [head + sep.join(map(str, row)) for row in rows]

    def _key_head(self) -> str:
        """What every key of a chunk of ndim >= 1 starts with (before the coordinates)."""
        return ""

    def encode_chunk_key(self, coords: Sequence[int]) -> str:  # pragma: no cover - interface
        """The store key of the chunk at grid coordinates ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates (empty for a 0-d array).

        Returns
        -------
        str
            The key, relative to the array's prefix.

        Raises
        ------
        NotImplementedError
            On the base class; each encoding defines it.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> DefaultChunkKeyEncoding().encode_chunk_key((1, 23, 45))
        'c/1/23/45'
        """
        raise NotImplementedError

    def decode_chunk_key(
        self, key: str, *, ndim: int | None = None
    ) -> tuple[int, ...] | None:  # pragma: no cover - interface
        """The grid coordinates of a chunk key: the inverse of :meth:`encode_chunk_key`.

        Parameters
        ----------
        key : str
            A key relative to the array's prefix.
        ndim : int, optional
            When given, keys with another number of coordinates are not chunk keys.

        Returns
        -------
        tuple of int or None
            The coordinates, or None if ``key`` is not a chunk key of this encoding.

        Raises
        ------
        NotImplementedError
            On the base class; each encoding defines it.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> DefaultChunkKeyEncoding().decode_chunk_key("c/1/23/45")
        (1, 23, 45)
        """
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``chunk_key_encoding`` object (always with its configuration).

        Returns
        -------
        dict
            ``{"name": ..., "configuration": {"separator": ...}}``, as zarr-python writes it.

        Raises
        ------
        None
            Writing a configured encoding cannot fail.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
        >>> V2ChunkKeyEncoding().to_dict()
        {'name': 'v2', 'configuration': {'separator': '.'}}
        """
        return {"name": self.name, "configuration": {"separator": self.separator}}


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultChunkKeyEncoding(ChunkKeyEncoding):
    """The ``default`` encoding: ``c/1/23/45`` (or ``c.1.23.45``); ``c`` for a 0-d array.

    Parameters
    ----------
    separator
        ``"/"`` (default) or ``"."``.

    Raises
    ------
    MetadataError
        For another separator.

    Examples
    --------
    >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
    >>> encoding = DefaultChunkKeyEncoding(separator=".")
    >>> encoding.encode_chunk_key((1, 23, 45)), encoding.encode_chunk_key(())
    ('c.1.23.45', 'c')
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

        Parameters
        ----------
        data : dict or str
            The JSON value.
        path, source : str
            Its JSON path and document, named by errors.

        Returns
        -------
        DefaultChunkKeyEncoding
            The encoding (separator ``"/"`` when the configuration is absent).

        Raises
        ------
        MetadataError
            On a wrong name, an unknown field or a separator other than ``"/"``/``"."``.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> DefaultChunkKeyEncoding.from_dict("default")
        DefaultChunkKeyEncoding(separator='/')
        >>> DefaultChunkKeyEncoding.from_dict(
        ...     {"name": "default", "configuration": {"separator": "-"}})
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: chunk_key_encoding.configuration.separator: separator must ...
        """
        sep = _parse_separator(cls.name, "/", data, path=path, source=source)
        return cls(separator=sep)  # type: ignore[arg-type]

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """The store key of the chunk at grid coordinates ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates (empty for a 0-d array).

        Returns
        -------
        str
            ``"c"`` followed by each coordinate after the separator.

        Raises
        ------
        None
            Any coordinates have a key.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> DefaultChunkKeyEncoding().encode_chunk_key((1, 23, 45))
        'c/1/23/45'
        """
        if not coords:
            return "c"
        sep = self.separator
        return "c" + sep + sep.join(map(str, coords))

    def _key_head(self) -> str:
        return "c" + self.separator

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        """Grid coordinates of a chunk key, or None if ``key`` is not one of this encoding.

        Parameters
        ----------
        key
            A key relative to the array's prefix.
        ndim
            When given, keys with another number of coordinates are not chunk keys.

        Returns
        -------
        tuple of int or None
            The coordinates; None for a key that is not one this encoding writes (also one
            with a sign or leading zeros).

        Raises
        ------
        None
            Any key is either a chunk key or not.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding
        >>> encoding = DefaultChunkKeyEncoding()
        >>> encoding.decode_chunk_key("c/1/23"), encoding.decode_chunk_key("c/01/23")
        ((1, 23), None)
        >>> encoding.decode_chunk_key("c/1/23", ndim=3) is None
        True
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

    Raises
    ------
    MetadataError
        For another separator.

    Examples
    --------
    >>> from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
    >>> encoding = V2ChunkKeyEncoding()
    >>> encoding.encode_chunk_key((1, 23, 45)), encoding.encode_chunk_key(())
    ('1.23.45', '0')
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

        Parameters
        ----------
        data : dict or str
            The JSON value.
        path, source : str
            Its JSON path and document, named by errors.

        Returns
        -------
        V2ChunkKeyEncoding
            The encoding (separator ``"."`` when the configuration is absent).

        Raises
        ------
        MetadataError
            On a wrong name, an unknown field or a separator other than ``"/"``/``"."``.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
        >>> V2ChunkKeyEncoding.from_dict({"name": "v2", "configuration": {"separator": "/"}})
        V2ChunkKeyEncoding(separator='/')
        """
        sep = _parse_separator(cls.name, ".", data, path=path, source=source)
        return cls(separator=sep)  # type: ignore[arg-type]

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        """The store key of the chunk at grid coordinates ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates (empty for a 0-d array).

        Returns
        -------
        str
            The coordinates joined by the separator; ``"0"`` for a 0-d array.

        Raises
        ------
        None
            Any coordinates have a key.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
        >>> V2ChunkKeyEncoding(separator="/").encode_chunk_key((1, 23, 45))
        '1/23/45'
        """
        if not coords:
            return "0"
        return self.separator.join(map(str, coords))

    def decode_chunk_key(self, key: str, *, ndim: int | None = None) -> tuple[int, ...] | None:
        """Grid coordinates of a chunk key, or None if ``key`` is not one of this encoding.

        ``"0"`` is both the 0-d chunk and chunk ``(0,)`` of a 1-d array: it decodes to ``()``
        when ``ndim == 0`` and to ``(0,)`` otherwise.

        Parameters
        ----------
        key : str
            A key relative to the array's prefix.
        ndim : int, optional
            When given, keys with another number of coordinates are not chunk keys.

        Returns
        -------
        tuple of int or None
            The coordinates, or None for a key this encoding does not write.

        Raises
        ------
        None
            Any key is either a chunk key or not.

        Examples
        --------
        >>> from zarr3c.chunk_key_encodings import V2ChunkKeyEncoding
        >>> encoding = V2ChunkKeyEncoding()
        >>> encoding.decode_chunk_key("1.23"), encoding.decode_chunk_key("0", ndim=0)
        ((1, 23), ())
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

    Parameters
    ----------
    data : dict or str
        The JSON value.
    path, source : str
        Its JSON path and document, named by errors.

    Returns
    -------
    ChunkKeyEncoding
        The encoding registered under the name, configured from ``data``.

    Raises
    ------
    MetadataError
        If the value is neither a name nor an object with a string ``name``, or the encoding
        refuses its configuration.
    UnknownExtensionError
        If no encoding is registered under the name.

    Examples
    --------
    >>> from zarr3c.chunk_key_encodings import parse_chunk_key_encoding
    >>> parse_chunk_key_encoding({"name": "default", "configuration": {"separator": "."}})
    DefaultChunkKeyEncoding(separator='.')
    >>> parse_chunk_key_encoding("v2").encode_chunk_key((1, 2))
    '1.2'
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
