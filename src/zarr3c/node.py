"""What arrays and groups share: where they are, their format, their attributes.

Every node knows its store, its path, its hierarchy format and its metadata document;
attribute changes are written to that document at once, re-read under a lock so concurrent
updates through different objects are not lost.

>>> import zarr3c
>>> g = zarr3c.create_group("memory://", "experiments/run1")
>>> g.path, g.name, g.basename
('experiments/run1', '/experiments/run1', 'run1')
>>> g.attrs["trial"] = 42
>>> zarr3c.open_group(g.store, "experiments/run1", mode="r").attrs.asdict()
{'trial': 42}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, Self

from zarr3c.concurrency import chunk_lock
from zarr3c.errors import (
    AttributeNotFoundError,
    MetadataError,
    MissingDependencyError,
    ReadOnlyError,
    UnsupportedFeatureError,
    ZarrError,
)
from zarr3c.metadata.formats import HierarchyFormat, V3Format
from zarr3c.paths import StorePath

__all__ = ["Node", "Attributes", "UNREADABLE", "UnreadableNode"]

#: What makes a node unreadable rather than its store failing: its document is invalid,
#: names a data type, codec or format zarr3c does not know, or needs a missing extra.
UNREADABLE = (MetadataError, UnsupportedFeatureError, MissingDependencyError)


class Node:
    """The common part of :class:`~zarr3c.Array` and :class:`~zarr3c.Group`.

    Parameters
    ----------
    store : Store
        The store holding the hierarchy.
    path : str
        The node's normalised path ("" for the root).
    metadata : object
        The node's metadata document.
    read_only : bool
        Refuse changes (the node is read-only also when the store is).
    fmt : HierarchyFormat or None
        The hierarchy's layout (None: the final Zarr v3 one).
    """

    #: "array" or "group", for messages
    kind: str = "node"

    def __init__(self, store: Any, path: str, metadata: Any, *, read_only: bool,
                 fmt: HierarchyFormat | None):
        self._format = fmt if fmt is not None else V3Format()
        self._store = store
        self._path = path
        self._metadata = metadata
        # A document may say why zarr3c cannot write its node (a Zarr v2 dtype whose stored
        # byte order zarr3c reads but does not write): such nodes open read-only.
        self._read_only_reason = getattr(metadata, "read_only_reason", None)
        self._read_only = read_only or store.read_only or self._read_only_reason is not None

    @property
    def metadata(self) -> Any:
        """The node's metadata document, as last read or written through this object.

        An :class:`~zarr3c.metadata.array.ArrayMetadata` or
        :class:`~zarr3c.metadata.group.GroupMetadata` (their draft-2022 or zarr2-v3
        counterparts in those layouts); ``to_dict()`` gives its JSON form.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", attributes={"a": 1}).metadata.to_dict()
        {'zarr_format': 3, 'node_type': 'group', 'attributes': {'a': 1}}
        """
        return self._metadata

    @property
    def store(self) -> Any:
        """The :class:`~zarr3c.Store` holding the node.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://").store
        MemoryStore(...)
        """
        return self._store

    @property
    def format(self) -> HierarchyFormat:
        """The hierarchy's layout (a :class:`~zarr3c.metadata.formats.HierarchyFormat`): the
        final Zarr v3 one, the 2022 core-spec draft's or zarr-python 2's experimental one.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", zarr_format="draft-2022").format.zarr_format
        'draft-2022'
        """
        return self._format

    @property
    def zarr_format(self) -> Any:
        """The hierarchy's layout: 3, 2 (Zarr v2), ``"draft-2022"`` or ``"zarr2-v3"``.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://").zarr_format
        3
        """
        return self._format.zarr_format

    @property
    def path(self) -> str:
        """The node's path in its store: names joined by "/", "" for the root.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", "/a/b/").path
        'a/b'
        """
        return self._path

    @property
    def name(self) -> str:
        """The node's absolute name: its path after a "/" (``"/"`` for the root).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", "a/b").name
        '/a/b'
        """
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last name of the node's path ("" for the root).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", "a/b").basename
        'b'
        """
        return self._path.rsplit("/", 1)[-1]

    @property
    def read_only(self) -> bool:
        """Whether the node refuses changes (opened read-only, or its store is).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.read_only, zarr3c.open_group(g.store, mode="r").read_only
        (False, True)
        """
        return self._read_only

    @property
    def store_path(self) -> StorePath:
        """The node's store and path together (a :class:`~zarr3c.paths.StorePath`), as
        zarr-python's ``store_path``.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://", "a/b")
        >>> g.store_path.path, g.store_path.store is g.store
        ('a/b', True)
        """
        return StorePath(self._store, self._path)

    def update_attributes(self, new_attributes: dict[str, Any]) -> Self:
        """Merge ``new_attributes`` into the user attributes, in one write of the document
        (as zarr-python's ``update_attributes``; the same as ``attrs.update``).

        Parameters
        ----------
        new_attributes : dict
            Attributes to add or replace (JSON-serializable).

        Returns
        -------
        Array or Group
            This node, its attributes updated.

        Raises
        ------
        MetadataError
            If a value is not JSON-serializable (nothing is written).
        ReadOnlyError
            If the node is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://", attributes={"a": 1})
        >>> g.update_attributes({"b": 2}).attrs.asdict()
        {'a': 1, 'b': 2}
        """
        self.attrs.update(new_attributes)
        return self

    @property
    def attrs(self) -> Attributes:
        """The node's user attributes, a mutable mapping written through at once.

        Each change (``attrs[k] = v``, ``del attrs[k]``, ``update``, ``put``) rewrites the
        node's metadata document; values must be JSON-serializable.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.attrs["units"] = "m"
        >>> g.attrs.update(scale=2, offset=0)
        >>> g.attrs.asdict()
        {'units': 'm', 'scale': 2, 'offset': 0}
        """
        return Attributes(self)

    def _check_writable(self) -> None:
        """Raise ReadOnlyError, naming the node, if it is read-only."""
        if self._read_only_reason is not None:
            raise ReadOnlyError(f"{self.kind} {self.name!r} is read-only: "
                                f"{self._read_only_reason}")
        if self._read_only:
            raise ReadOnlyError(f"{self.kind} {self.name!r} was opened read-only")

    def _set_metadata(self, metadata: Any) -> None:
        """Adopt ``metadata`` as this object's copy of the document (after a write)."""
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
        """Nodes are equal when they are the same type at the same path of equal stores."""
        return (type(other) is type(self) and other._store == self._store  # type: ignore[attr-defined]
                and other._path == self._path)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        """Hash of the type, the store's type and the path (consistent with ``==``)."""
        return hash((type(self), type(self._store), self._path))


class UnreadableNode:
    """A member of a group whose metadata cannot be read (a document that is not valid, a
    data type or codec this zarr3c does not know, an optional dependency missing): what
    :meth:`Group.members` and :meth:`Group.tree` list in its place, so that one bad node
    never hides its siblings.  Opening it (``group[name]``) raises :attr:`error`.

    Parameters
    ----------
    path : str
        The node's path in its hierarchy.
    error : ZarrError
        Why it cannot be read (naming the key and field).

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> g.store.set("bad/zarr.json", b'{"zarr_format": 3, "node_type": "array"}')
    >>> name, node = g.members()[0]
    >>> name, type(node).__name__, type(node.error).__name__
    ('bad', 'UnreadableNode', 'MetadataError')
    """

    #: for messages, as Array and Group
    kind: str = "unreadable node"

    __slots__ = ("error", "path")

    def __init__(self, path: str, error: ZarrError):
        self.path = path
        self.error = error

    @property
    def name(self) -> str:
        """The node's absolute name (``"/"`` and its path)."""
        return "/" + self.path

    @property
    def basename(self) -> str:
        """The last component of the node's path."""
        return self.path.rsplit("/", 1)[-1]

    def __repr__(self) -> str:
        return f"<zarr3c.UnreadableNode {self.name!r}: {self.error}>"


class Attributes(MutableMapping[str, Any]):
    """A node's user attributes; every change is written to its metadata document at once.

    What :attr:`Node.attrs` returns: a mutable mapping over the attributes of the node's
    document as this object last read or wrote it.  A change re-reads the stored document
    under the key's lock, applies itself and writes it back, so changes made through other
    objects meanwhile are kept.

    Parameters
    ----------
    node : Node
        The array or group whose attributes these are.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> g.attrs["a"] = [1, 2]
    >>> dict(g.attrs), "a" in g.attrs, len(g.attrs)
    ({'a': [1, 2]}, True, 1)
    >>> del g.attrs["a"]
    >>> g.attrs
    {}
    """

    def __init__(self, node: Node):
        self._node = node

    def _current(self) -> dict[str, Any]:
        """The attributes of the node's document as this object last read or wrote it."""
        return self._node.metadata.attributes

    def __getitem__(self, key: str) -> Any:
        """The attribute ``key``; AttributeNotFoundError (a KeyError) when there is none."""
        try:
            return self._current()[key]
        except KeyError:
            raise self._missing(key) from None

    def _missing(self, key: str) -> AttributeNotFoundError:
        """The error for a missing attribute ``key``, naming the node."""
        return AttributeNotFoundError(f"{self._node.name!r} has no attribute {key!r}")

    def __setitem__(self, key: str, value: Any) -> None:
        """Set the attribute ``key`` (written at once; MetadataError if not JSON-serializable,
        ReadOnlyError if the node is read-only)."""
        self._node._update_attributes(lambda attrs: attrs.__setitem__(key, value))

    def __delitem__(self, key: str) -> None:
        """Remove the attribute ``key`` (written at once; AttributeNotFoundError if none)."""
        def delete(attrs: dict[str, Any]) -> None:
            if key not in attrs:
                raise self._missing(key)
            del attrs[key]

        self._node._update_attributes(delete)

    def __iter__(self) -> Iterator[str]:
        """The attribute names, in stored order."""
        return iter(dict(self._current()))

    def __len__(self) -> int:
        """The number of attributes."""
        return len(self._current())

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Set several attributes in one write of the document (as ``dict.update``).

        Parameters
        ----------
        *args : mapping or iterable of (key, value) pairs
            At most one, as for ``dict.update``.
        **kwargs
            More attributes.

        Raises
        ------
        MetadataError
            If a value is not JSON-serializable (nothing is written).
        ReadOnlyError
            If the node is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.attrs.update({"a": 1}, b=2)
        >>> g.attrs.asdict()
        {'a': 1, 'b': 2}
        """
        new = dict(*args, **kwargs)
        self._node._update_attributes(lambda attrs: attrs.update(new))

    def put(self, attributes: dict[str, Any]) -> None:
        """Replace all attributes with ``attributes``, in one write of the document.

        Parameters
        ----------
        attributes : dict
            The new attributes (JSON-serializable).

        Raises
        ------
        MetadataError
            If a value is not JSON-serializable (nothing is written).
        ReadOnlyError
            If the node is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://", attributes={"old": 1})
        >>> g.attrs.put({"new": 2})
        >>> g.attrs.asdict()
        {'new': 2}
        """
        new = dict(attributes)

        def replace(attrs: dict[str, Any]) -> None:
            attrs.clear()
            attrs.update(new)

        self._node._update_attributes(replace)

    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict.

        Returns
        -------
        dict

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_group("memory://", attributes={"a": 1}).attrs.asdict()
        {'a': 1}
        """
        return dict(self._current())

    def __repr__(self) -> str:
        """The attributes' dict repr."""
        return repr(self._current())
