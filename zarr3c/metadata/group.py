"""Group metadata: the ``zarr.json`` document of a Zarr v3 group.

Final Zarr v3 layout, as zarr-python 3 writes it (``consolidated_metadata`` is zarr-python's
field for consolidated metadata, kept here as raw JSON; ``null`` is allowed)::

    {
      "zarr_format": 3,
      "node_type": "group",
      "attributes": {"spam": "ham"},
      "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {...}}
    }

Unknown top-level fields are refused unless they are objects with ``"must_understand": false``
(kept and written back).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zarr3c.errors import MetadataError
from zarr3c.metadata.array import (
    _check_node_type,
    _to_json_value,
    check_zarr_format,
    dump_json,
    load_json_object,
    parse_attributes,
    parse_extra_fields,
)

__all__ = ["GroupMetadata"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMetadata:
    """The metadata of a Zarr v3 group.

    Attributes
    ----------
    attributes
        User attributes (a JSON object).
    consolidated_metadata
        zarr-python's consolidated metadata object, as raw JSON, or None when absent/null.
    extra_fields
        Unknown top-level fields marked ``"must_understand": false``, written back unchanged.
    """

    zarr_format: ClassVar[int] = 3
    node_type: ClassVar[str] = "group"

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: dict[str, Any] | None = None
    extra_fields: dict[str, Any] = field(default_factory=dict)

    _KNOWN: ClassVar[frozenset[str]] = frozenset(
        {"zarr_format", "node_type", "attributes", "consolidated_metadata"}
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> GroupMetadata:
        """Validate a decoded ``zarr.json`` document of a group.

        Raises
        ------
        UnsupportedFormatError
            If ``zarr_format`` is not 3.
        MetadataError
            For anything else malformed; the message names the JSON path and ``source``.
        """
        if not isinstance(data, Mapping):
            raise MetadataError(
                f"group metadata must be a JSON object, got {type(data).__name__}", source=source
            )
        check_zarr_format(data, source=source)
        _check_node_type(data, "group", source=source)
        extra = parse_extra_fields(data, cls._KNOWN, source=source)
        attributes = parse_attributes(data.get("attributes"), source=source)
        consolidated = data.get("consolidated_metadata")
        if consolidated is not None:
            if not isinstance(consolidated, Mapping):
                raise MetadataError(
                    f"must be an object or null, got {consolidated!r}",
                    path="consolidated_metadata",
                    source=source,
                )
            consolidated = _to_json_value(
                consolidated, path="consolidated_metadata", source=source
            )
        return cls(attributes=attributes, consolidated_metadata=consolidated, extra_fields=extra)

    def to_dict(self) -> dict[str, Any]:
        """The ``zarr.json`` document as a dict (a fresh copy)."""
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "group",
            "attributes": copy.deepcopy(self.attributes),
        }
        if self.consolidated_metadata is not None:
            doc["consolidated_metadata"] = copy.deepcopy(self.consolidated_metadata)
        for key, value in self.extra_fields.items():
            doc[key] = copy.deepcopy(value)
        return doc

    @classmethod
    def from_json(
        cls, data: bytes | bytearray | memoryview | str, *, source: str | None = None
    ) -> GroupMetadata:
        """Parse the bytes of a ``zarr.json`` document.

        Raises
        ------
        MetadataError
            If the bytes are not a JSON object, or as :meth:`from_dict`.
        """
        return cls.from_dict(load_json_object(data, source=source), source=source)

    def to_json(self) -> bytes:
        """The ``zarr.json`` bytes (UTF-8, indent 2, no bare NaN/Infinity)."""
        return dump_json(self.to_dict())

    def evolve(self, **changes: Any) -> GroupMetadata:
        """A copy with some fields replaced, validated again.

        Raises
        ------
        MetadataError
            If the result is invalid (e.g. attributes that are not a JSON object).
        """
        try:
            candidate = dataclasses.replace(self, **changes)
        except TypeError as exc:
            raise MetadataError(f"cannot evolve group metadata: {exc}") from None
        return type(self).from_dict(candidate.to_dict())
