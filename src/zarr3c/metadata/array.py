"""Array metadata: the ``zarr.json`` document of a Zarr v3 array.

Follows the array metadata of the Zarr v3 core specification
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html) exactly as zarr-python 3,
tensorstore and zarrs write it::

    {
      "zarr_format": 3,
      "node_type": "array",
      "shape": [10000, 1000],
      "data_type": "float64",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1000, 100]}},
      "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
      "fill_value": "NaN",
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
      "attributes": {"foo": 42},
      "dimension_names": ["rows", "columns"],
      "storage_transformers": []
    }

Chunk grids and chunk key encodings are resolved by name through :mod:`zarr3c.registry`;
codecs are kept as named configurations (:class:`NamedConfig`) and resolved later by the codec
pipeline, so reading and writing metadata needs no codec.  Unknown top-level fields are
refused unless they are objects with ``"must_understand": false`` (kept and written back).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from zarr3c import registry
from zarr3c.errors import MetadataError, UnknownExtensionError, UnsupportedFormatError
from zarr3c.metadata.data_types import DataType, parse_data_type

__all__ = [
    "ArrayMetadata",
    "ArrayMetadataView",
    "NamedConfig",
    "check_zarr_format",
    "dump_json",
    "load_json_object",
    "parse_attributes",
    "parse_extra_fields",
]

_MAX_INT = 2**63 - 1


# -- helpers shared with group metadata -----------------------------------------------------------


def load_json_object(data: bytes | bytearray | memoryview | str, *, source: str | None) -> dict:
    """Decode a metadata document: UTF-8 JSON holding an object.

    Raises
    ------
    MetadataError
        If the bytes are not UTF-8, not JSON, or not a JSON object; names ``source``.
    """
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        doc = json.loads(text)
    except UnicodeDecodeError as exc:
        raise MetadataError(f"metadata document is not UTF-8: {exc}", source=source) from None
    except json.JSONDecodeError as exc:
        raise MetadataError(f"metadata document is not valid JSON: {exc}", source=source) from None
    except RecursionError:
        raise MetadataError("metadata document is nested too deeply", source=source) from None
    if not isinstance(doc, dict):
        raise MetadataError(
            f"metadata document must be a JSON object, got {type(doc).__name__}", source=source
        )
    return doc


def _replace_special_floats(value: Any) -> Any:
    # Standard JSON has no NaN/Infinity; write them as zarr-python does ("NaN", "Infinity").
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return "NaN"
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: _replace_special_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_special_floats(v) for v in value]
    return value


def dump_json(doc: Mapping[str, Any]) -> bytes:
    """Encode a metadata document: indent 2, UTF-8, never a bare ``NaN``/``Infinity``."""
    return json.dumps(_replace_special_floats(doc), indent=2, allow_nan=False).encode("utf-8")


def check_zarr_format(doc: Mapping[str, Any], *, source: str | None) -> None:
    """Require ``"zarr_format": 3``.

    Raises
    ------
    MetadataError
        If the field is missing.
    UnsupportedFormatError
        If it has any value other than the integer 3.
    """
    if "zarr_format" not in doc:
        raise MetadataError("missing required field", path="zarr_format", source=source)
    fmt = doc["zarr_format"]
    if type(fmt) is not int or fmt != 3:
        raise UnsupportedFormatError(
            f"zarr_format {fmt!r} is not supported (zarr3c reads Zarr format 3)",
            path="zarr_format",
            source=source,
        )


def _check_node_type(doc: Mapping[str, Any], expected: str, *, source: str | None) -> None:
    if "node_type" not in doc:
        raise MetadataError("missing required field", path="node_type", source=source)
    if doc["node_type"] != expected:
        raise MetadataError(
            f"expected node_type {expected!r}, got {doc['node_type']!r}",
            path="node_type",
            source=source,
        )


#: The exact types a document decoded by ``json.loads`` holds besides dict and list.
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})
#: Nesting deeper than this is refused (``_to_json_value``).
_MAX_DEPTH = 200


class _NotPlainJson(Exception):
    """A value :func:`_copy_plain_json` leaves to the general conversion."""


def _copy_plain_json(value: Any, depth: int) -> Any:
    """A deep copy of ``value`` where it holds only what ``json.loads`` returns (exact
    dicts with str keys, lists and JSON scalars); raises :class:`_NotPlainJson` otherwise.

    Documents read from a store are all like that, and the general conversion spends
    most of its time building the JSON path of every element for an error message that
    is never raised; this path builds none.
    """
    t = type(value)
    if t in _PLAIN_SCALARS:
        return value
    if depth >= _MAX_DEPTH:  # the children would be too deep: the general path says so
        raise _NotPlainJson
    plain = _PLAIN_SCALARS
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlainJson
            out[k] = v if type(v) in plain else _copy_plain_json(v, depth + 1)
        return out
    if t is list:
        return [v if type(v) in plain else _copy_plain_json(v, depth + 1) for v in value]
    raise _NotPlainJson


def _to_json_value(value: Any, *, path: str, source: str | None) -> Any:
    """A deep copy of ``value`` made of JSON types only (numpy scalars/arrays converted).

    Raises
    ------
    MetadataError
        For a value with no JSON form, a key that is not a string, or nesting deeper
        than 200 levels; the message names the JSON path below ``path``.
    """
    try:
        return _copy_plain_json(value, 0)
    except _NotPlainJson:  # numpy values, tuples, mappings, bad keys: converted or refused
        return _convert_json_value(value, path=path, source=source)


def _convert_json_value(value: Any, *, path: str, source: str | None, depth: int = 0) -> Any:
    """:func:`_to_json_value` for any value: converts numpy values, tuples and mappings,
    and names the path of what it refuses."""
    if depth > _MAX_DEPTH:
        raise MetadataError("value is nested too deeply", path=path, source=source)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
        if value is None or isinstance(value, bool | int | float | str):
            return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise MetadataError(
                    f"object keys must be strings, got {k!r}", path=path, source=source
                )
            out[k] = _convert_json_value(v, path=f"{path}.{k}", source=source, depth=depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [
            _convert_json_value(v, path=f"{path}[{i}]", source=source, depth=depth + 1)
            for i, v in enumerate(value)
        ]
    raise MetadataError(
        f"value of type {type(value).__name__} is not JSON-serializable: {value!r}",
        path=path,
        source=source,
    )


def parse_attributes(value: Any, *, source: str | None) -> dict[str, Any]:
    """Validate ``attributes``: a JSON object (copied; numpy values become JSON values)."""
    if value is None:
        # zarr-python never writes null here, but a missing/null object means "no attributes".
        return {}
    if not isinstance(value, Mapping):
        raise MetadataError(
            f"must be a JSON object, got {type(value).__name__}", path="attributes", source=source
        )
    return _to_json_value(value, path="attributes", source=source)


def parse_extra_fields(
    doc: Mapping[str, Any], known: frozenset[str], *, source: str | None
) -> dict[str, Any]:
    """Collect unknown top-level fields; each must be an object with ``must_understand: false``.

    Raises
    ------
    MetadataError
        For an unknown field that does not say it may be ignored.
    """
    extra: dict[str, Any] = {}
    for key, value in doc.items():
        if key in known:
            continue
        if isinstance(value, Mapping) and value.get("must_understand") is False:
            extra[key] = _to_json_value(value, path=key, source=source)
            continue
        raise MetadataError(
            "unknown field (an extension zarr3c does not understand; fields it may ignore "
            'must be objects with "must_understand": false)',
            path=key,
            source=source,
        )
    return extra


# -- named configurations -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedConfig:
    """An extension entry ``{"name": ..., "configuration": {...}}`` kept as JSON.

    Parameters
    ----------
    name
        The extension's name (``"bytes"``, ``"gzip"``, ...).
    configuration
        Its configuration object, or None when absent.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (the values are checked by :meth:`from_json_value`).

    Examples
    --------
    >>> from zarr3c.metadata import NamedConfig
    >>> NamedConfig(name="gzip", configuration={"level": 1}).to_dict()
    {'name': 'gzip', 'configuration': {'level': 1}}
    """

    name: str
    configuration: dict[str, Any] | None = None

    @classmethod
    def from_json_value(cls, value: Any, *, path: str, source: str | None = None) -> NamedConfig:
        """Parse an extension entry: an object with ``name`` (and optional ``configuration``),
        or a bare name string (the spec's short-hand for "no configuration").

        ``NamedConfig`` instances and objects with a ``to_dict()`` method (codec objects) are
        accepted too and converted through their JSON form.

        Parameters
        ----------
        value : dict, str or object
            The entry.
        path : str
            Its JSON path (e.g. ``"codecs[1]"``), for error messages.
        source : str, optional
            The document it came from, for error messages.

        Returns
        -------
        NamedConfig
            The entry (a copy of its configuration, as plain JSON values).

        Raises
        ------
        MetadataError
            If the value is malformed; the message names ``path`` and the offending member.

        Examples
        --------
        >>> from zarr3c.metadata import NamedConfig
        >>> NamedConfig.from_json_value("crc32c", path="codecs[1]")
        NamedConfig(name='crc32c', configuration=None)
        >>> NamedConfig.from_json_value({"name": ""}, path="codecs[1]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: codecs[1].name: must be a non-empty string, got ''
        """
        if isinstance(value, NamedConfig):
            return value
        if isinstance(value, str):
            if not value:
                raise MetadataError("name must not be empty", path=path, source=source)
            return cls(name=value)
        if not isinstance(value, Mapping) and callable(getattr(value, "to_dict", None)):
            value = value.to_dict()
        if not isinstance(value, Mapping):
            raise MetadataError(
                f'must be an object with "name" and optional "configuration", or a name; '
                f"got {value!r}",
                path=path,
                source=source,
            )
        unknown = sorted(set(value) - {"name", "configuration"})
        if unknown:
            raise MetadataError(
                f"unknown field(s) {', '.join(map(repr, unknown))}", path=path, source=source
            )
        name = value.get("name")
        if not isinstance(name, str) or not name:
            raise MetadataError(
                f"must be a non-empty string, got {name!r}", path=f"{path}.name", source=source
            )
        config = value.get("configuration")
        if config is None:
            return cls(name=name)
        if not isinstance(config, Mapping):
            raise MetadataError(
                f"must be an object, got {config!r}",
                path=f"{path}.configuration",
                source=source,
            )
        return cls(
            name=name,
            configuration=_to_json_value(config, path=f"{path}.configuration", source=source),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (``configuration`` omitted when None).

        Returns
        -------
        dict
            A fresh copy.

        Raises
        ------
        None
            The entry is JSON already.

        Examples
        --------
        >>> from zarr3c.metadata import NamedConfig
        >>> NamedConfig(name="crc32c").to_dict()
        {'name': 'crc32c'}
        """
        out: dict[str, Any] = {"name": self.name}
        if self.configuration is not None:
            out["configuration"] = copy.deepcopy(self.configuration)
        return out


# -- array metadata -------------------------------------------------------------------------------


#: The most dimensions an array may have (numpy's ``NPY_MAXDIMS``, and the kernels').
MAX_NDIM = 64


def parse_array_shape(value: Any, *, source: str | None) -> tuple[int, ...]:
    if not isinstance(value, list | tuple):
        raise MetadataError(
            f"must be a list of integers, got {value!r}", path="shape", source=source
        )
    if len(value) > MAX_NDIM:  # (numpy's limit: such an array could be created, not read)
        raise MetadataError(f"has {len(value)} dimensions, at most {MAX_NDIM} are supported",
                            path="shape", source=source)
    shape = []
    for i, n in enumerate(value):
        if isinstance(n, bool) or not isinstance(n, int):
            raise MetadataError(
                f"must be an integer, got {n!r}", path=f"shape[{i}]", source=source
            )
        if not 0 <= n <= _MAX_INT:
            raise MetadataError(
                f"must be in [0, 2**63 - 1], got {n}", path=f"shape[{i}]", source=source
            )
        shape.append(int(n))
    return tuple(shape)


def _parse_codecs(value: Any, *, source: str | None) -> tuple[NamedConfig, ...]:
    if not isinstance(value, list | tuple):
        raise MetadataError(
            f"must be a list of codec objects, got {value!r}", path="codecs", source=source
        )
    if not value:
        raise MetadataError(
            "must contain at least one codec (an array -> bytes codec such as \"bytes\")",
            path="codecs",
            source=source,
        )
    return tuple(
        NamedConfig.from_json_value(c, path=f"codecs[{i}]", source=source)
        for i, c in enumerate(value)
    )


def _parse_dimension_names(
    value: Any, ndim: int, *, source: str | None
) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise MetadataError(
            f"must be null or a list of strings or nulls, got {value!r}",
            path="dimension_names",
            source=source,
        )
    for i, name in enumerate(value):
        if name is not None and not isinstance(name, str):
            raise MetadataError(
                f"must be a string or null, got {name!r}",
                path=f"dimension_names[{i}]",
                source=source,
            )
    if len(value) != ndim:
        raise MetadataError(
            f"has {len(value)} entries but the array has {ndim} dimensions",
            path="dimension_names",
            source=source,
        )
    return tuple(value)


def _parse_storage_transformers(value: Any, *, source: str | None) -> tuple[NamedConfig, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise MetadataError(
            f"must be a list, got {value!r}", path="storage_transformers", source=source
        )
    for i, entry in enumerate(value):
        path = f"storage_transformers[{i}]"
        nc = NamedConfig.from_json_value(entry, path=path, source=source)
        raise UnknownExtensionError(
            f"unknown storage transformer {nc.name!r} (zarr3c supports none)",
            path=path,
            source=source,
        )
    return ()


def _chunk_nbytes_check(grid: Any, itemsize: int, *, source: str | None) -> None:
    shape = grid.max_chunk_shape
    nbytes = itemsize
    for n in shape:
        nbytes *= int(n)
    if nbytes >= 2**63:
        raise MetadataError(
            f"a chunk of shape {tuple(shape)} with {itemsize}-byte elements has {nbytes} bytes, "
            "which is too large (must be < 2**63)",
            path="chunk_grid",
            source=source,
        )


class ArrayMetadataView:
    """What every array metadata class (v3, draft-2022, zarr-python 2's v3) derives from its
    fields in the same way, for the arrays that read them."""

    __slots__ = ()
    shape: tuple[int, ...]
    data_type: DataType
    fill_value: bytes
    chunk_grid: Any

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The native-endian numpy dtype of the elements."""
        return self.data_type.dtype

    @property
    def fill_value_array(self) -> np.ndarray:
        """The fill value as a read-only 0-d numpy array (exact bits; for a variable-length
        type, the element)."""
        return self.data_type.fill_array(self.fill_value)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The chunk shape of a regular chunk grid.

        Raises
        ------
        MetadataError
            If the grid has no single chunk shape.
        """
        shape = getattr(self.chunk_grid, "chunk_shape", None)
        if shape is None:
            raise MetadataError(
                f"the {getattr(self.chunk_grid, 'name', '?')!r} chunk grid has no single chunk "
                "shape",
                path="chunk_grid",
            )
        return tuple(shape)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayMetadata(ArrayMetadataView):
    """The metadata of a Zarr v3 array (its ``zarr.json``).

    Build with :meth:`from_dict` / :meth:`from_json`, write with :meth:`to_dict` /
    :meth:`to_json`, change with :meth:`evolve`.  The constructor takes the parsed fields,
    each also an attribute; it does not validate them (:meth:`from_dict` does).

    Parameters
    ----------
    shape
        Array length along each dimension.
    data_type
        The element type.
    chunk_grid
        A chunk grid object (e.g. :class:`zarr3c.chunk_grids.RegularChunkGrid`).
    chunk_key_encoding
        A chunk key encoding object (e.g. ``DefaultChunkKeyEncoding``).
    fill_value
        The fill value's exact bits (native byte order, ``itemsize`` bytes).
    codecs
        The codec chain as named configurations (resolved by the codec pipeline).
    attributes
        User attributes (a JSON object).
    dimension_names
        One name (or None) per dimension, or None.
    storage_transformers
        Always empty: zarr3c understands no storage transformer.
    extra_fields
        Unknown top-level fields marked ``"must_understand": false``, written back unchanged.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (use :meth:`evolve`).

    Examples
    --------
    >>> from zarr3c.metadata import ArrayMetadata
    >>> doc = {
    ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
    ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
    ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    ...     "fill_value": "NaN",
    ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    ... }
    >>> meta = ArrayMetadata.from_dict(doc)
    >>> meta.shape, meta.data_type.name, meta.chunk_grid.chunk_shape
    ((100, 100), 'float32', (10, 10))
    """

    zarr_format: ClassVar[int] = 3
    node_type: ClassVar[str] = "array"

    shape: tuple[int, ...]
    data_type: DataType
    chunk_grid: Any
    chunk_key_encoding: Any
    fill_value: bytes
    codecs: tuple[NamedConfig, ...]
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[NamedConfig, ...] = ()
    extra_fields: dict[str, Any] = field(default_factory=dict)

    _KNOWN: ClassVar[frozenset[str]] = frozenset(
        {
            "zarr_format",
            "node_type",
            "shape",
            "data_type",
            "chunk_grid",
            "chunk_key_encoding",
            "fill_value",
            "codecs",
            "attributes",
            "dimension_names",
            "storage_transformers",
        }
    )
    _REQUIRED: ClassVar[tuple[str, ...]] = (
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
    )

    # -- JSON -------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> ArrayMetadata:
        """Validate a decoded ``zarr.json`` document of an array.

        Parameters
        ----------
        data
            The decoded JSON object.
        source
            The store key or file it came from, for error messages.

        Returns
        -------
        ArrayMetadata
            The parsed metadata.

        Raises
        ------
        UnsupportedFormatError
            If ``zarr_format`` is not 3.
        UnknownExtensionError
            For an unknown data type, chunk grid, chunk key encoding or any storage
            transformer.
        MetadataError
            For anything else malformed; the message names the JSON path.

        Examples
        --------
        >>> from zarr3c.metadata import ArrayMetadata
        >>> doc = {
        ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
        ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        ...     "fill_value": "NaN",
        ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        ... }
        >>> ArrayMetadata.from_dict(doc).fill_value  # the exact bits of the float32 NaN
        b'\\x00\\x00\\xc0\\x7f'
        >>> ArrayMetadata.from_dict({**doc, "shape": [-1, 2]})
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: shape[0]: must be in [0, 2**63 - 1], got -1
        """
        if not isinstance(data, Mapping):
            raise MetadataError(
                f"array metadata must be a JSON object, got {type(data).__name__}", source=source
            )
        check_zarr_format(data, source=source)
        _check_node_type(data, "array", source=source)
        for key in cls._REQUIRED:
            if key not in data:
                raise MetadataError("missing required field", path=key, source=source)
        extra = parse_extra_fields(data, cls._KNOWN, source=source)
        shape = parse_array_shape(data["shape"], source=source)
        ndim = len(shape)
        data_type = parse_data_type(data["data_type"], path="data_type", source=source)
        grid = _parse_chunk_grid(data["chunk_grid"], ndim=ndim, source=source)
        grid.validate_shape(shape, source=source)
        _chunk_nbytes_check(grid, data_type.itemsize, source=source)
        encoding = _parse_chunk_key_encoding(data["chunk_key_encoding"], source=source)
        fill_value = data_type.parse_fill_value(
            data["fill_value"], path="fill_value", source=source
        )
        codecs = _parse_codecs(data["codecs"], source=source)
        attributes = parse_attributes(data.get("attributes"), source=source)
        dimension_names = _parse_dimension_names(data.get("dimension_names"), ndim, source=source)
        storage_transformers = _parse_storage_transformers(
            data.get("storage_transformers"), source=source
        )
        return cls(
            shape=shape,
            data_type=data_type,
            chunk_grid=grid,
            chunk_key_encoding=encoding,
            fill_value=fill_value,
            codecs=codecs,
            attributes=attributes,
            dimension_names=dimension_names,
            storage_transformers=storage_transformers,
            extra_fields=extra,
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``zarr.json`` document as a dict (a fresh copy), in zarr-python's field set.

        Returns
        -------
        dict
            The document, as :meth:`from_dict` reads it back.

        Raises
        ------
        None
            Parsed metadata always has a JSON form.

        Examples
        --------
        >>> from zarr3c.metadata import ArrayMetadata
        >>> doc = {
        ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
        ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        ...     "fill_value": "NaN",
        ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        ... }
        >>> out = ArrayMetadata.from_dict(doc).to_dict()
        >>> out["fill_value"], out["attributes"], out["storage_transformers"]
        ('NaN', {}, [])
        """
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": self.chunk_grid.to_dict(),
            "chunk_key_encoding": self.chunk_key_encoding.to_dict(),
            "fill_value": self.data_type.fill_value_to_json(self.fill_value),
            "codecs": [c.to_dict() for c in self.codecs],
            "attributes": copy.deepcopy(self.attributes),
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc["storage_transformers"] = [t.to_dict() for t in self.storage_transformers]
        for key, value in self.extra_fields.items():
            doc[key] = copy.deepcopy(value)
        return doc

    @classmethod
    def from_json(
        cls, data: bytes | bytearray | memoryview | str, *, source: str | None = None
    ) -> ArrayMetadata:
        """Parse the bytes of a ``zarr.json`` document.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or str
            The document.
        source : str, optional
            The store key or file it came from, for error messages.

        Returns
        -------
        ArrayMetadata
            The parsed metadata.

        Raises
        ------
        MetadataError
            If the bytes are not a JSON object, or as :meth:`from_dict`.

        Examples
        --------
        >>> from zarr3c.metadata import ArrayMetadata
        >>> doc = {
        ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
        ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        ...     "fill_value": "NaN",
        ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        ... }
        >>> meta = ArrayMetadata.from_dict(doc)
        >>> ArrayMetadata.from_json(meta.to_json()) == meta
        True
        """
        return cls.from_dict(load_json_object(data, source=source), source=source)

    def to_json(self) -> bytes:
        """The ``zarr.json`` bytes (UTF-8, indent 2, no bare NaN/Infinity).

        Returns
        -------
        bytes
            The document.

        Raises
        ------
        None
            Parsed metadata always has a JSON form.

        Examples
        --------
        >>> from zarr3c.metadata import ArrayMetadata
        >>> doc = {
        ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
        ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        ...     "fill_value": "NaN",
        ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        ... }
        >>> ArrayMetadata.from_dict(doc).to_json()[:35]
        b'{\\n  "zarr_format": 3,\\n  "node_type"'
        """
        return dump_json(self.to_dict())

    def evolve(self, **changes: Any) -> ArrayMetadata:
        """A copy with some fields replaced, validated as a whole again.

        When ``shape`` changes and no ``chunk_grid`` is given, the grid is ``resized`` to the
        new shape.

        Parameters
        ----------
        **changes
            New values of fields, by name (as the constructor takes them).

        Returns
        -------
        ArrayMetadata
            The new metadata.

        Raises
        ------
        MetadataError
            If the result is inconsistent (rank mismatch, fill value of the wrong size, ...) or a
            name is not a field.

        Examples
        --------
        >>> from zarr3c.metadata import ArrayMetadata
        >>> doc = {
        ...     "zarr_format": 3, "node_type": "array", "shape": [100, 100], "data_type": "float32",
        ...     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
        ...     "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        ...     "fill_value": "NaN",
        ...     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        ... }
        >>> ArrayMetadata.from_dict(doc).evolve(shape=(200, 100)).shape
        (200, 100)
        """
        if "shape" in changes and "chunk_grid" not in changes:
            changes["chunk_grid"] = self.chunk_grid.resized(tuple(changes["shape"]))
        try:
            candidate = dataclasses.replace(self, **changes)
        except TypeError as exc:
            raise MetadataError(f"cannot evolve array metadata: {exc}") from None
        # Re-validating the JSON form checks every cross-field rule in one place.
        return type(self).from_dict(candidate.to_dict())


def _parse_chunk_grid(value: Any, *, ndim: int, source: str | None) -> Any:
    path = "chunk_grid"
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping):
        raise MetadataError(
            f'must be an object with "name" and "configuration", got {value!r}',
            path=path,
            source=source,
        )
    name = value.get("name")
    if not isinstance(name, str):
        raise MetadataError(
            f"must be a string, got {name!r}", path=f"{path}.name", source=source
        )
    cls = registry.chunk_grids.get(name, path=f"{path}.name", source=source)
    return cls.from_dict(value, ndim=ndim, path=path, source=source)


def _parse_chunk_key_encoding(value: Any, *, source: str | None) -> Any:
    path = "chunk_key_encoding"
    if isinstance(value, str):
        name: Any = value
    elif isinstance(value, Mapping):
        name = value.get("name")
        if not isinstance(name, str):
            raise MetadataError(
                f"must be a string, got {name!r}", path=f"{path}.name", source=source
            )
    else:
        raise MetadataError(
            f'must be an object with "name" (and optional "configuration") or a name, '
            f"got {value!r}",
            path=path,
            source=source,
        )
    cls = registry.chunk_key_encodings.get(name, path=f"{path}.name", source=source)
    return cls.from_dict(value, path=path, source=source)

