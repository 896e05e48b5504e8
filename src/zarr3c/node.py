"""What arrays and groups share: where they are, their format, their attributes.

Every node knows its store, its path, its hierarchy format and its metadata document;
attribute changes are written to that document at once, re-read under a lock so concurrent
updates through different objects are not lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from zarr3c.concurrency import chunk_lock
from zarr3c.errors import AttributeNotFoundError, MetadataError, ReadOnlyError
from zarr3c.metadata.formats import HierarchyFormat, V3Format

__all__ = ["Node", "Attributes"]


class Node:
    """The common part of :class:`~zarr3c.Array` and :class:`~zarr3c.Group`."""

    #: "array" or "group", for messages
    kind: str = "node"

    def __init__(self, store: Any, path: str, metadata: Any, *, read_only: bool,
                 fmt: HierarchyFormat | None):
        self._format = fmt if fmt is not None else V3Format()
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only or store.read_only

    @property
    def metadata(self) -> Any:
        return self._metadata

    @property
    def store(self) -> Any:
        return self._store

    @property
    def format(self) -> HierarchyFormat:
        """The hierarchy's layout: the final Zarr v3 one, or the 2022 core-spec draft's."""
        return self._format

    @property
    def zarr_format(self) -> Any:
        return self._format.zarr_format

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self.kind} {self.name!r} was opened read-only")

    def _set_metadata(self, metadata: Any) -> None:
        self._metadata = metadata

    @contextmanager
    def _stored_metadata(self) -> Iterator[Any]:
        """Hold the lock of this node's metadata document and yield the document stored now
        (this object's copy if the node is gone or is now of another type): the start of every
        read-modify-write of the document, so that changes made through other objects (or
        after a consolidated snapshot) are kept."""
        self._check_writable()
        key = self._format.metadata_key(self._path, self._metadata.node_type)
        with chunk_lock(self._store, key):
            current = self._format.read_node(self._store, self._path)
            if current is None or type(current) is not type(self._metadata):
                current = self._metadata
            yield current

    def _update_attributes(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` (a function mutating a dict) to the stored attributes."""
        fmt = self._format
        key = fmt.metadata_key(self._path, self._metadata.node_type)
        with self._stored_metadata() as current:
            attrs = json.loads(json.dumps(current.attributes))
            change(attrs)
            try:
                json.dumps(attrs, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise MetadataError(f"attributes must be JSON-serializable: {exc}",
                                    path="attributes", source=key) from None
            new = current.evolve(attributes=attrs)
            fmt.write_node(self._store, self._path, new)
        self._set_metadata(new)

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other._store == self._store  # type: ignore[attr-defined]
                and other._path == self._path)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), type(self._store), self._path))


class Attributes(MutableMapping[str, Any]):
    """A node's user attributes; every change is written to its ``zarr.json`` at once."""

    def __init__(self, node: Node):
        self._node = node

    def _current(self) -> dict[str, Any]:
        return self._node.metadata.attributes

    def __getitem__(self, key: str) -> Any:
        try:
            return self._current()[key]
        except KeyError:
            raise self._missing(key) from None

    def _missing(self, key: str) -> AttributeNotFoundError:
        return AttributeNotFoundError(f"{self._node.name!r} has no attribute {key!r}")

    def __setitem__(self, key: str, value: Any) -> None:
        self._node._update_attributes(lambda attrs: attrs.__setitem__(key, value))

    def __delitem__(self, key: str) -> None:
        def delete(attrs: dict[str, Any]) -> None:
            if key not in attrs:
                raise self._missing(key)
            del attrs[key]

        self._node._update_attributes(delete)

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._current()))

    def __len__(self) -> int:
        return len(self._current())

    def update(self, *args: Any, **kwargs: Any) -> None:  # one write for many keys
        new = dict(*args, **kwargs)
        self._node._update_attributes(lambda attrs: attrs.update(new))

    def put(self, attributes: dict[str, Any]) -> None:
        """Replace all attributes."""
        new = dict(attributes)

        def replace(attrs: dict[str, Any]) -> None:
            attrs.clear()
            attrs.update(new)

        self._node._update_attributes(replace)

    def asdict(self) -> dict[str, Any]:
        return dict(self._current())

    def __repr__(self) -> str:
        return repr(self._current())
