"""Group metadata: the ``zarr.json`` document of a Zarr v3 group.

Final Zarr v3 layout, as zarr-python 3 writes it.  ``consolidated_metadata`` is zarr-python's
field for consolidated metadata (not part of the v3 core spec): the ``zarr.json`` document of
every node below the group, keyed by its path relative to the group (nested nodes by
``"sub/array"``, each group entry carrying an empty ``consolidated_metadata`` of its own)::

    {
      "zarr_format": 3,
      "node_type": "group",
      "attributes": {"spam": "ham"},
      "consolidated_metadata": {
        "kind": "inline",
        "must_understand": false,
        "metadata": {
          "sub": {"zarr_format": 3, "node_type": "group", "attributes": {},
                  "consolidated_metadata": {"kind": "inline", "must_understand": false,
                                            "metadata": {}}},
          "sub/array": {"zarr_format": 3, "node_type": "array", "shape": [4], ...}
        }
      }
    }

:class:`GroupMetadata` keeps the field as raw JSON (an object, written back unchanged): reading
a group never parses its entries, so a document holding an entry zarr3c cannot parse (a data
type or codec it does not know) still opens, and :func:`zarr3c.consolidate_metadata` can
rewrite it.  :class:`ConsolidatedMetadata` parses it when consolidated metadata is used: the
object, its keys and each entry's ``node_type`` (and that every parent is a group entry) at
once; the rest of an entry only when that member is opened (:meth:`ConsolidatedMetadata.node`).
A ``null`` value means "none", as in zarr-python 3, and is not written back (groups without
consolidated metadata write no such field).

Unknown top-level fields are refused unless they are objects with ``"must_understand": false``
(kept and written back).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zarr3c.errors import MetadataError, NodeNameError
from zarr3c.metadata.array import (
    ArrayMetadata,
    _check_node_type,
    _to_json_value,
    check_zarr_format,
    dump_json,
    load_json_object,
    parse_attributes,
    parse_extra_fields,
)
from zarr3c.paths import validate_node_name

__all__ = ["ConsolidatedMetadata", "GroupMetadata", "parse_node_dict"]

_FIELD = "consolidated_metadata"


def _entry_path(parent: str, key: str) -> str:
    """JSON path of an entry: ``consolidated_metadata.metadata["a/b"]`` (keys hold '/')."""
    return f"{parent}.metadata[{json.dumps(key, ensure_ascii=False)}]"


def entry_path(key: str) -> str:
    """The JSON path of a group's consolidated entry ``key``."""
    return _entry_path(_FIELD, key)


def _check_entry_key(key: Any, *, path: str, source: str | None) -> str:
    if not isinstance(key, str):  # (JSON keys are strings; a dict built in Python may not be)
        raise MetadataError(f"keys must be strings, got {key!r}", path=path, source=source)
    try:  # every part a node name, by the rules every node name follows
        for name in key.split("/"):
            validate_node_name(name)
    except NodeNameError as exc:
        raise MetadataError(
            f"key {key!r} is not a relative node path (names joined by '/'): {exc}",
            path=_entry_path(path, key), source=source,
        ) from None
    return key


def _check_entry_node_type(value: Any, *, path: str, source: str | None) -> None:
    # What a consolidated view needs of every entry up front: which members are groups.
    if not isinstance(value, Mapping):
        raise MetadataError(
            f"must be a node's zarr.json object, got {type(value).__name__}",
            path=path, source=source,
        )
    node_type = value.get("node_type")
    if node_type not in ("array", "group"):
        if "node_type" not in value:
            raise MetadataError("missing required field", path=f"{path}.node_type",
                                source=source)
        raise MetadataError(f'must be "array" or "group", got {node_type!r}',
                            path=f"{path}.node_type", source=source)


NodeMetadata = Any  # ArrayMetadata | GroupMetadata


def parse_node_dict(doc: Mapping[str, Any], *, source: str | None = None) -> NodeMetadata:
    """A decoded ``zarr.json`` document of either node type, as :class:`ArrayMetadata` or
    :class:`GroupMetadata`.

    Parameters
    ----------
    doc : mapping
        The decoded JSON object.
    source : str, optional
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
        If ``node_type`` is missing or is neither ``"array"`` nor ``"group"``, or the document
        is invalid for its node type.

    Examples
    --------
    >>> from zarr3c.metadata import parse_node_dict
    >>> parse_node_dict({"zarr_format": 3, "node_type": "group"})
    GroupMetadata(attributes={}, consolidated_metadata=None, extra_fields={})
    >>> parse_node_dict({"zarr_format": 3, "node_type": "folder"})
    Traceback (most recent call last):
    ...
    zarr3c.errors.MetadataError: node_type: must be "array" or "group", got 'folder'
    """
    node_type = doc.get("node_type")
    if node_type == "array":  # (each from_dict checks zarr_format first)
        return ArrayMetadata.from_dict(doc, source=source)
    if node_type == "group":
        return GroupMetadata.from_dict(doc, source=source)
    check_zarr_format(doc, source=source)
    if "node_type" not in doc:
        raise MetadataError("missing required field", path="node_type", source=source)
    raise MetadataError(
        f'must be "array" or "group", got {node_type!r}', path="node_type", source=source
    )


HINT = ("; open the group with use_consolidated=False to read the member's own zarr.json "
        "instead, or run zarr3c.consolidate_metadata() to rewrite the document")


def entry_error(exc: MetadataError, key: str, source: str | None) -> MetadataError:
    """``exc`` (raised parsing or opening the consolidated entry ``key``) as an error naming
    the entry's JSON path in ``source`` and suggesting ``use_consolidated=False``."""
    prefix = entry_path(key)
    path = f"{prefix}.{exc.path}" if exc.path else prefix
    return type(exc)(f"{_message(exc)}{HINT}", path=path, source=source)


def _message(exc: MetadataError) -> str:
    message = str(exc)
    head = ": ".join(p for p in (exc.source, exc.path) if p)
    return message[len(head) + 2:] if head and message.startswith(f"{head}: ") else message


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidatedMetadata:
    """zarr-python's consolidated metadata of a group: every descendant's ``zarr.json``.

    Entries stay raw JSON until asked for (:meth:`node`), so one entry zarr3c cannot parse
    fails only where that member is opened.

    Attributes
    ----------
    metadata
        ``{relative path: the node's zarr.json object}`` in document order, flat as
        zarr-python stores it: ``"sub/array"`` is the array ``array`` of the child group
        ``sub``, and ``"sub"`` is present as a group entry.  Each entry is an object whose
        ``node_type`` is ``"array"`` or ``"group"``.
    kind
        Always ``"inline"`` (the only kind zarr-python defines).
    must_understand
        As read (zarr-python writes ``false``).
    extra_fields
        Other members of the object, written back unchanged.
    source
        The store key or file it came from, for messages.
    """

    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    kind: str = "inline"
    must_understand: bool = False
    extra_fields: dict[str, Any] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False)

    _KNOWN: ClassVar[frozenset[str]] = frozenset({"kind", "must_understand", "metadata"})

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> ConsolidatedMetadata:
        """Validate a decoded ``consolidated_metadata`` object (not yet its entries' contents).

        Parameters
        ----------
        data
            The decoded JSON object.
        source
            The store key or file it came from, for messages.

        Raises
        ------
        MetadataError
            If it is not an object, ``kind`` is not ``"inline"``, ``metadata`` is not an
            object, a key is not a relative node path, an entry is not an object whose
            ``node_type`` is ``"array"`` or ``"group"`` (the message names the entry, e.g.
            ``consolidated_metadata.metadata["a/b"].node_type``), or an entry's parent path
            is not a group entry.
        """
        path = _FIELD
        if not isinstance(data, Mapping):
            raise MetadataError(f"must be an object or null, got {data!r}", path=path,
                                source=source)
        kind = data.get("kind")
        if kind != "inline":
            raise MetadataError(
                f'only "inline" consolidated metadata is supported, got {kind!r}',
                path=f"{path}.kind", source=source,
            )
        must_understand = data.get("must_understand", False)
        if not isinstance(must_understand, bool):
            raise MetadataError(f"must be a boolean, got {must_understand!r}",
                                path=f"{path}.must_understand", source=source)
        raw = data.get("metadata")
        if not isinstance(raw, Mapping):
            raise MetadataError(f"must be an object, got {raw!r}", path=f"{path}.metadata",
                                source=source)
        entries: dict[str, dict[str, Any]] = {}
        for key, value in raw.items():
            _check_entry_key(key, path=path, source=source)
            _check_entry_node_type(value, path=_entry_path(path, key), source=source)
            entries[key] = value
        for key in entries:
            parent = key.rpartition("/")[0]
            if parent and entries.get(parent, {}).get("node_type") != "group":
                what = "missing" if parent not in entries else "an array"
                raise MetadataError(
                    f"the parent {parent!r} of this entry is {what}: every ancestor of a "
                    "consolidated node must be a group entry",
                    path=_entry_path(path, key), source=source,
                )
        extra = {k: _to_json_value(v, path=f"{path}.{k}", source=source)
                 for k, v in data.items() if k not in cls._KNOWN}
        return cls(metadata=entries, kind=kind, must_understand=must_understand,
                   extra_fields=extra, source=source)

    def node_type(self, key: str) -> str:
        """``"array"`` or ``"group"``: the node type of the entry ``key``."""
        return self.metadata[key]["node_type"]

    def node(self, key: str) -> NodeMetadata:
        """The entry ``key`` parsed as :class:`ArrayMetadata` or :class:`GroupMetadata`.

        Raises
        ------
        MetadataError
            If the entry is invalid or uses an extension zarr3c does not know; the message
            names the entry (``consolidated_metadata.metadata["a/b"].data_type``) and
            suggests ``use_consolidated=False``.
        """
        try:
            return parse_node_dict(self.metadata[key])
        except MetadataError as exc:
            raise entry_error(exc, key, self.source) from None

    def to_dict(self) -> dict[str, Any]:
        """The ``consolidated_metadata`` object (a fresh copy), entries in their order."""
        doc: dict[str, Any] = {
            "kind": self.kind,
            "must_understand": self.must_understand,
            "metadata": copy.deepcopy(self.metadata),
        }
        for key, value in self.extra_fields.items():
            doc[key] = copy.deepcopy(value)
        return doc


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMetadata:
    """The metadata of a Zarr v3 group.

    The constructor takes the parsed fields, each also an attribute; it does not validate
    them (:meth:`from_dict` does).

    Parameters
    ----------
    attributes
        User attributes (a JSON object).
    consolidated_metadata
        zarr-python's consolidated metadata of the group's descendants as raw JSON (an
        object, parsed by :class:`ConsolidatedMetadata` where it is used), or None when
        absent/null.
    extra_fields
        Unknown top-level fields marked ``"must_understand": false``, written back unchanged.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (use :meth:`evolve`).

    Examples
    --------
    >>> from zarr3c.metadata import GroupMetadata
    >>> GroupMetadata(attributes={"a": 1}).to_dict()
    {'zarr_format': 3, 'node_type': 'group', 'attributes': {'a': 1}}
    """

    zarr_format: ClassVar[int] = 3
    node_type: ClassVar[str] = "group"

    attributes: dict[str, Any] = field(default_factory=dict)
    consolidated_metadata: dict[str, Any] | None = None
    extra_fields: dict[str, Any] = field(default_factory=dict)

    _KNOWN: ClassVar[frozenset[str]] = frozenset(
        {"zarr_format", "node_type", "attributes", _FIELD}
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> GroupMetadata:
        """Validate a decoded ``zarr.json`` document of a group.

        Parameters
        ----------
        data : mapping
            The decoded JSON object.
        source : str, optional
            The store key or file it came from, for error messages.

        Returns
        -------
        GroupMetadata
            The parsed metadata.

        Raises
        ------
        UnsupportedFormatError
            If ``zarr_format`` is not 3.
        MetadataError
            For anything else malformed; the message names the JSON path and ``source``.

        Examples
        --------
        >>> from zarr3c.metadata import GroupMetadata
        >>> GroupMetadata.from_dict(
        ...     {"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}})
        GroupMetadata(attributes={'a': 1}, consolidated_metadata=None, extra_fields={})
        """
        if not isinstance(data, Mapping):
            raise MetadataError(
                f"group metadata must be a JSON object, got {type(data).__name__}", source=source
            )
        check_zarr_format(data, source=source)
        _check_node_type(data, "group", source=source)
        extra = parse_extra_fields(data, cls._KNOWN, source=source)
        attributes = parse_attributes(data.get("attributes"), source=source)
        consolidated = data.get(_FIELD)
        if consolidated is not None:  # kept raw: parsed only where it is used
            if not isinstance(consolidated, Mapping):
                raise MetadataError(f"must be an object or null, got {consolidated!r}",
                                    path=_FIELD, source=source)
            consolidated = _to_json_value(consolidated, path=_FIELD, source=source)
        return cls(attributes=attributes, consolidated_metadata=consolidated, extra_fields=extra)

    def to_dict(self) -> dict[str, Any]:
        """The ``zarr.json`` document as a dict (a fresh copy).

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
        >>> from zarr3c.metadata import GroupMetadata
        >>> GroupMetadata().to_dict()
        {'zarr_format': 3, 'node_type': 'group', 'attributes': {}}
        """
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "group",
            "attributes": copy.deepcopy(self.attributes),
        }
        if self.consolidated_metadata is not None:
            doc[_FIELD] = copy.deepcopy(self.consolidated_metadata)
        for key, value in self.extra_fields.items():
            doc[key] = copy.deepcopy(value)
        return doc

    @classmethod
    def from_json(
        cls, data: bytes | bytearray | memoryview | str, *, source: str | None = None
    ) -> GroupMetadata:
        """Parse the bytes of a ``zarr.json`` document.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or str
            The document.
        source : str, optional
            The store key or file it came from, for error messages.

        Returns
        -------
        GroupMetadata
            The parsed metadata.

        Raises
        ------
        MetadataError
            If the bytes are not a JSON object, or as :meth:`from_dict`.

        Examples
        --------
        >>> from zarr3c.metadata import GroupMetadata
        >>> GroupMetadata.from_json(b'{"zarr_format": 3, "node_type": "group"}').attributes
        {}
        >>> GroupMetadata.from_json(b"[]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: metadata document must be a JSON object, got list
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
        >>> from zarr3c.metadata import GroupMetadata
        >>> print(GroupMetadata().to_json().decode())
        {
          "zarr_format": 3,
          "node_type": "group",
          "attributes": {}
        }
        """
        return dump_json(self.to_dict())

    def evolve(self, **changes: Any) -> GroupMetadata:
        """A copy with some fields replaced, validated again.

        Parameters
        ----------
        **changes
            New values of fields, by name (as the constructor takes them).

        Returns
        -------
        GroupMetadata
            The new metadata.

        Raises
        ------
        MetadataError
            If the result is invalid (e.g. attributes that are not a JSON object).

        Examples
        --------
        >>> from zarr3c.metadata import GroupMetadata
        >>> GroupMetadata().evolve(attributes={"b": 2}).attributes
        {'b': 2}
        >>> GroupMetadata().evolve(attributes=[1])
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: attributes: must be a JSON object, got list
        """
        try:
            candidate = dataclasses.replace(self, **changes)
        except TypeError as exc:
            raise MetadataError(f"cannot evolve group metadata: {exc}") from None
        return type(self).from_dict(candidate.to_dict())
