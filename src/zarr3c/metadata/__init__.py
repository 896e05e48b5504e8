"""Zarr v3 metadata documents (``zarr.json``): arrays, groups and their data types.

Everything here is pure Python over JSON: chunk grids and chunk key encodings are resolved by
name through :mod:`zarr3c.registry`, codecs stay named configurations.  Use
:func:`parse_node_metadata` to read a ``zarr.json`` whose node type is not known yet::

    {"zarr_format": 3, "node_type": "group", "attributes": {}}
"""

from __future__ import annotations

from zarr3c.metadata.array import ArrayMetadata, NamedConfig, load_json_object
from zarr3c.metadata.data_types import (
    CORE_DATA_TYPE_NAMES,
    DataType,
    data_type_from_numpy,
    parse_data_type,
)
from zarr3c.metadata.group import GroupMetadata, parse_node_dict

__all__ = [
    "CORE_DATA_TYPE_NAMES",
    "ArrayMetadata",
    "DataType",
    "GroupMetadata",
    "NamedConfig",
    "data_type_from_numpy",
    "parse_data_type",
    "parse_node_dict",
    "parse_node_metadata",
]


def parse_node_metadata(
    data: bytes | bytearray | memoryview | str, *, source: str | None = None
) -> ArrayMetadata | GroupMetadata:
    """Parse a ``zarr.json`` document of either node type.

    Parameters
    ----------
    data
        The document's bytes.
    source
        The store key or file it came from, for error messages.

    Returns
    -------
    ArrayMetadata or GroupMetadata
        By the document's ``node_type``.

    Raises
    ------
    UnsupportedFormatError
        If ``zarr_format`` is not 3.
    MetadataError
        If the document is not a JSON object, ``node_type`` is missing or is neither
        ``"array"`` nor ``"group"``, or the document is invalid for its node type.

    Examples
    --------
    >>> from zarr3c.metadata import parse_node_metadata
    >>> parse_node_metadata(b'{"zarr_format": 3, "node_type": "group"}')
    GroupMetadata(attributes={}, consolidated_metadata=None, extra_fields={})
    >>> parse_node_metadata(b'{"zarr_format": 2, "node_type": "group"}')
    Traceback (most recent call last):
    ...
    zarr3c.errors.UnsupportedFormatError: zarr_format: zarr_format 2 is not supported ...
    """
    return parse_node_dict(load_json_object(data, source=source), source=source)
