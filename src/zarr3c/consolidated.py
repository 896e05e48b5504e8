"""Consolidated metadata: the ``zarr.json`` of every node below a group, inline in the group's.

It follows zarr-python 3 (``zarr.consolidate_metadata``, ``zarr.open_consolidated``): the
group's ``zarr.json`` gets a ``consolidated_metadata`` object (``"kind": "inline"``,
``"must_understand": false``) whose ``metadata`` maps each descendant's path relative to the
group (``"sub"``, ``"sub/temperature"``) to that node's document (see
:mod:`zarr3c.metadata.group`).  A group opened with it answers ``g[name]``, ``name in g``,
``members()``, ``tree()`` and nested paths from that one document, with no further metadata
reads or listings, whatever the store (chunk reads still go to the store):

>>> import zarr3c
>>> store = zarr3c.MemoryStore()
>>> t = zarr3c.create_group(store).create_array("sub/temperature", shape=(20,), dtype="int8")
>>> _ = zarr3c.consolidate_metadata(store)       # after the hierarchy is written
>>> g = zarr3c.open_consolidated(store)          # one read: the root zarr.json
>>> g["sub/temperature"][:5]
array([0, 0, 0, 0, 0], dtype=int8)

Zarr v2 hierarchies have it as zarr-python writes it: a ``.zmetadata`` document beside the
group's ``.zgroup`` (``{"metadata": {".zgroup": ..., "a/.zarray": ..., "a/.zattrs": ...},
"zarr_consolidated_format": 1}``), read in place of the group's own documents (one read) and
rewritten by :func:`consolidate_metadata`.  The draft-2022 and zarr-python-2 v3 layouts
refuse it.

Entries zarr3c cannot parse
---------------------------
The document is checked when it is used (``use_consolidated`` None or True): its ``kind``,
its keys, each entry's ``node_type`` and that every parent is a group entry.  The rest of an
entry (data type, codecs, attributes, ...) is parsed when that member is opened, so an entry
zarr3c cannot parse (zarr-python's ``"string"`` data type, an unknown codec) raises a
MetadataError naming it (``consolidated_metadata.metadata["a/b"].data_type``) only for
``g["a/b"]`` and whatever opens every member (``members()``, ``arrays()``, ``groups()``,
``tree()``); ``keys()``, ``in`` and ``len`` still answer.  ``use_consolidated=False`` never
parses the document, and :func:`consolidate_metadata` rewrites it.

Staleness (a snapshot, as in zarr-python)
-----------------------------------------
The consolidated document describes the hierarchy as it was when
:func:`consolidate_metadata` last ran.  Nodes created, resized or given new attributes
afterwards are not reflected in it until it is run again (or the group is opened with
``use_consolidated=False``).  zarr3c adds two things:

- creations and deletions made *through* a Group opened from consolidated metadata (or one of
  its child groups) update that object's view at once, so ``g.create_array("x")`` is then
  ``g["x"]``; a deletion (and what a creation with ``overwrite=True`` replaces) also leaves
  the stored document (as deletions do in zarr-python), so a deleted or replaced node never
  reappears from it as a ghost read with its old metadata.  Creations are not written to the
  stored document: call :func:`consolidate_metadata` again.
- an array opened from consolidated metadata uses the consolidated copy of its metadata.
  A resize made elsewhere (another ``Array`` object, another process) never changes how a
  chunk inside the old shape is keyed or decoded: regular and sharded grids keep their chunk
  shape, rectilinear grids only gain edges, and codecs, data type and chunk key encoding are
  unchanged.  So reads return the stored values over the old shape (what a shrink cut off
  reads as the fill value, since the resize erased it); the new shape shows after
  re-consolidating.  What is not detected, as in zarr-python, is an array *replaced* by one
  with another data type, codecs or grid after consolidating: re-consolidate after replacing
  nodes, or open with ``use_consolidated=False``.
"""

from __future__ import annotations

import dataclasses
import threading
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from zarr3c.concurrency import chunk_lock
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    InvalidArgumentError,
    ReadOnlyError,
    UnsupportedFeatureError,
)
from zarr3c.metadata import parse_node_metadata
from zarr3c.metadata.formats import HierarchyFormat, V2Format, V3Format, detect_format
from zarr3c.metadata.group import ConsolidatedMetadata, GroupMetadata
from zarr3c.metadata.v2 import (
    ARRAY_KEY,
    ATTRS_KEY,
    CONSOLIDATED_KEY,
    GROUP_KEY,
    V2ConsolidatedMetadata,
    read_v2_node,
)
from zarr3c.stores import describe_store

if TYPE_CHECKING:
    from zarr3c.group import Group

__all__ = [
    "ConsolidatedIndex",
    "ConsolidatedView",
    "ReadOnce",
    "check_use_consolidated",
    "consolidate_metadata",
    "open_consolidated",
]

NodeMetadata = Any  # ArrayMetadata | GroupMetadata


def _join(parent: str, name: str) -> str:
    """``parent/name``, or ``name`` below the root ("")."""
    return f"{parent}/{name}" if parent else name


def _sort_key(rel: str) -> tuple[int, str]:
    """zarr-python's order of consolidated entries: shallow first, then by case-folded
    name."""
    return rel.count("/"), unicodedata.normalize("NFKC", rel).casefold()


class ConsolidatedIndex:
    """The hierarchy below a consolidated group, for lookups without store reads.

    Membership, listings and node types come from the validated document at once; an entry's
    metadata is parsed the first time that member is opened (:meth:`get`), so an entry zarr3c
    cannot parse fails there only, and ``keys()``, ``in`` and the other members still work.

    Parameters
    ----------
    consolidated
        The group's consolidated metadata (entries still raw).
    root_path
        The path of the group in its store (where the consolidated document lives).
    parsed
        Entries already parsed (by :func:`consolidate_metadata`), by relative path.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> _ = g.create_array("sub/x", shape=(2,), dtype="int8")
    >>> index = zarr3c.consolidate_metadata(g.store)._consolidated.index
    >>> "sub/x" in index, index.child_names("sub"), index.get("sub/x").shape
    (True, ['x'], (2,))
    """

    def __init__(self, consolidated: ConsolidatedMetadata, root_path: str,
                 parsed: dict[str, NodeMetadata] | None = None):
        self.root_path = root_path
        self._consolidated = consolidated
        # relative path -> parsed metadata, or the raw entry until it is first opened
        self._entries: dict[str, Any] = {**consolidated.metadata, **(parsed or {})}
        self._children: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        for rel in self._entries:
            self._link(rel)

    def _link(self, rel: str) -> None:
        """List ``rel`` among its parent's children."""
        parent, _, name = rel.rpartition("/")
        self._children.setdefault(parent, set()).add(name)

    def __contains__(self, rel: str) -> bool:
        """Whether there is a node at ``rel`` (its entry is not parsed)."""
        return rel in self._entries

    def get(self, rel: str) -> NodeMetadata | None:
        """The metadata of the node at ``rel`` (relative to the consolidated group), or None.

        Parameters
        ----------
        rel : str
            The node's path relative to the consolidated group.

        Returns
        -------
        ArrayMetadata, GroupMetadata or None
            The parsed entry (parsed once, then kept), or None when there is none.

        Raises
        ------
        MetadataError
            If its entry cannot be parsed (the message names the entry).
        """
        value = self._entries.get(rel)
        if not isinstance(value, Mapping):  # parsed already, or absent
            return value
        parsed = self._consolidated.node(rel)
        with self._lock:
            if self._entries.get(rel) is value:  # (not replaced meanwhile)
                self._entries[rel] = parsed
        return parsed

    def child_names(self, rel: str) -> list[str]:
        """Names of the children of the group at ``rel`` ("" is the consolidated group).

        Parameters
        ----------
        rel : str
            The group's path relative to the consolidated group.

        Returns
        -------
        list of str
            Sorted; empty for an unknown path.
        """
        with self._lock:
            return sorted(self._children.get(rel, ()))

    def add(self, rel: str, metadata: NodeMetadata, new_group: NodeMetadata) -> None:
        """Record a node created at ``rel`` (and, as ``new_group``, missing ancestors).

        Parameters
        ----------
        rel : str
            The new node's path relative to the consolidated group; what was there (and
            below it) is forgotten.
        metadata : ArrayMetadata or GroupMetadata
            The new node's metadata.
        new_group : GroupMetadata
            The metadata recorded for ancestors the index does not know yet.
        """
        with self._lock:
            parts = rel.split("/")
            for i in range(1, len(parts)):
                ancestor = "/".join(parts[:i])
                if ancestor not in self._entries:
                    self._entries[ancestor] = new_group
                    self._link(ancestor)
            self.remove_locked(rel)
            self._entries[rel] = metadata
            self._link(rel)

    def remove(self, rel: str) -> list[str]:
        """Forget the node at ``rel`` and its descendants.

        Parameters
        ----------
        rel : str
            The node's path relative to the consolidated group.

        Returns
        -------
        list of str
            The relative paths removed.
        """
        with self._lock:
            return self.remove_locked(rel)

    def remove_locked(self, rel: str) -> list[str]:
        """:meth:`remove`, for a caller already holding the index's lock."""
        gone = [k for k in self._entries if k == rel or k.startswith(rel + "/")]
        for k in gone:
            del self._entries[k]
            self._children.pop(k, None)
        parent, _, name = rel.rpartition("/")
        self._children.get(parent, set()).discard(name)
        return gone


@dataclasses.dataclass(frozen=True, slots=True)
class ConsolidatedView:
    """A group's window on a :class:`ConsolidatedIndex`.

    Parameters
    ----------
    index : ConsolidatedIndex
        The index of the hierarchy below the consolidated group, shared by every group
        reached through it.
    rel : str, default ""
        The group's path relative to the consolidated group ("" for that group itself).
    """

    index: ConsolidatedIndex
    rel: str = ""

    def child_rel(self, relative_path: str) -> str:
        """The index path of ``relative_path`` (relative to this view's group)."""
        return _join(self.rel, relative_path)

    def child(self, relative_path: str) -> ConsolidatedView:
        """The view of the group at ``relative_path`` below this view's group."""
        return ConsolidatedView(self.index, self.child_rel(relative_path))

    def forget(self, store: Any, fmt: HierarchyFormat, relative_path: str) -> None:
        """Remove a deleted node (and all below it) from the view and from the stored
        consolidated document.

        The stored keys are matched by prefix, not by what this view knew: another writer
        may have re-consolidated with more nodes below it since.

        Parameters
        ----------
        store : Store
            The store holding the consolidated group.
        fmt : HierarchyFormat
            The hierarchy's layout.
        relative_path : str
            The deleted node's path relative to this view's group.
        """
        rel = self.child_rel(relative_path)
        self.index.remove(rel)
        root = self.index.root_path
        if isinstance(fmt, V2Format):
            _forget_v2(store, root, rel)
            return
        key = fmt.metadata_key(root, "group")
        with chunk_lock(store, key):
            current = fmt.read_node(store, root)
            if not isinstance(current, GroupMetadata):
                return
            cm = current.consolidated_metadata
            entries = cm.get("metadata") if cm is not None else None
            if cm is None or not isinstance(entries, Mapping):
                return
            kept = {k: v for k, v in entries.items()
                    if not (k == rel or k.startswith(rel + "/"))}
            if len(kept) == len(entries):
                return
            fmt.write_node(store, root, dataclasses.replace(
                current, consolidated_metadata={**cm, "metadata": kept}))


def _forget_v2(store: Any, root: str, rel: str) -> None:
    """Remove the node at ``rel`` (and below) from the ``.zmetadata`` of the v2 group at
    ``root``, if it lists it."""
    key = _join(root, CONSOLIDATED_KEY)
    with chunk_lock(store, key):
        data = store.get(key)
        if data is None:
            return
        current = V2ConsolidatedMetadata.from_json(data, source=key)
        kept = current.without(rel)
        if len(kept.documents) != len(current.documents):
            store.set(key, kept.to_json())


class ReadOnce:
    """A store seen through a ``get`` that reads each key at most once.

    Opening a node looks at the root ``zarr.json`` several times (format detection, existence,
    the document itself); through this view the store is asked once.  Use it for one open call
    only: it never sees later writes.

    Parameters
    ----------
    store : Store
        The store read through; everything but ``get`` and ``exists`` goes to it directly.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> reads = ReadOnce(store)
    >>> reads.get("zarr.json") is None
    True
    >>> store.set("zarr.json", b"{}")
    >>> reads.get("zarr.json") is None      # read once, before the write
    True
    """

    def __init__(self, store: Any):
        self._store = store
        self._got: dict[str, Any] = {}
        self._exists: dict[str, bool] = {}  # learnt by probe()
        self._listed: frozenset[str] | None = None  # every key, learnt by learn_keys()

    def get(self, key: str) -> Any:
        """The value of ``key`` (None if missing), read from the store the first time."""
        if key not in self._got:
            if self._exists.get(key) is False or (
                    self._listed is not None and key not in self._listed):
                return None  # (known missing: no read)
            self._got[key] = self._store.get(key)
        return self._got[key]

    def exists(self, key: str) -> bool:
        """Whether ``key`` exists, from the one read (or probe, or listing) of it
        (V3Format.node_exists asks)."""
        if key not in self._got:
            if key in self._exists:
                return self._exists[key]
            if self._listed is not None:
                return key in self._listed
        return self.get(key) is not None

    def learn_keys(self, limit: int) -> bool:
        """Learn every key of the store from one bounded listing
        (:meth:`~zarr3c.stores.base.Store.list_few`), where the store offers one and holds
        fewer than ``limit`` keys: then :meth:`get` and :meth:`exists` answer every missing
        key without a request.  Returns whether it did; not after a read through it (the
        listing would then be a request more, not fewer)."""
        if self._listed is not None:
            return True
        if self._got or self._exists:
            return False
        keys = self._store.list_few("", limit)
        if keys is None:
            return False
        self._listed = frozenset(keys)
        return True

    def probe(self, keys: Any) -> None:
        """Learn whether each of ``keys`` exists with one batch of zero-length reads (on an
        object store, HEAD requests in flight together), for :meth:`exists` and :meth:`get`
        to answer from; keys already read or probed are not asked again, and none after a
        listing (:meth:`learn_keys`), which answers them all."""
        if self._listed is not None:
            return
        todo = [k for k in dict.fromkeys(keys) if k not in self._got and k not in self._exists]
        if todo:
            found = self._store.get_partial_values([(k, (0, 0)) for k in todo])
            self._exists.update((k, v is not None) for k, v in zip(todo, found, strict=True))

    def __getattr__(self, name: str) -> Any:
        """Listing and the rest go to the store."""
        return getattr(self._store, name)


def check_use_consolidated(use_consolidated: Any) -> None:
    """Refuse a ``use_consolidated`` other than None, True and False.

    Parameters
    ----------
    use_consolidated : object
        The argument given.

    Raises
    ------
    InvalidArgumentError
        If it is not None, True or False.

    Examples
    --------
    >>> check_use_consolidated(None)
    >>> check_use_consolidated("yes")
    Traceback (most recent call last):
        ...
    zarr3c.errors.InvalidArgumentError: use_consolidated must be None, True or False, got 'yes'
    """
    if not (use_consolidated is None or isinstance(use_consolidated, bool)):
        raise InvalidArgumentError(
            f"use_consolidated must be None, True or False, got {use_consolidated!r}"
        )


def refuse_other_formats(fmt: HierarchyFormat, what: str) -> None:
    """Refuse consolidated metadata outside the Zarr v3 ``zarr.json`` layout and Zarr v2.

    Parameters
    ----------
    fmt : HierarchyFormat
        The hierarchy's layout.
    what : str
        What was asked, for the message.

    Raises
    ------
    UnsupportedFeatureError
        If ``fmt`` is neither the final Zarr v3 layout nor Zarr v2.
    """
    if not isinstance(fmt, V3Format | V2Format):
        raise UnsupportedFeatureError(
            f"{what}: consolidated metadata is a feature of the Zarr v3 and v2 layouts, "
            f"but the hierarchy is in the {fmt.zarr_format!r} layout"
        )


def _empty(metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``consolidated_metadata`` object as zarr-python writes it."""
    return {"kind": "inline", "must_understand": False, "metadata": metadata or {}}


def collect(store: Any, fmt: HierarchyFormat, path: str) -> dict[str, NodeMetadata]:
    """The metadata of every node below the group at ``path``.

    Parameters
    ----------
    store : Store
        The store holding the hierarchy.
    fmt : HierarchyFormat
        The hierarchy's layout.
    path : str
        The group's normalised path.

    Returns
    -------
    dict of str to ArrayMetadata or GroupMetadata
        Keyed by path relative to the group, in zarr-python's order; each group entry gets
        an empty ``consolidated_metadata`` (as zarr-python writes, so readers know it has no
        other children).

    Raises
    ------
    MetadataError
        If a node's document is invalid (the message names its key).
    """
    out: dict[str, NodeMetadata] = {}
    pending = [(path, "")]
    while pending:
        group_path, rel = pending.pop()
        prefix = f"{group_path}/" if group_path else ""
        _, prefixes = store.list_dir(prefix)
        names = [p[len(prefix):].rstrip("/") for p in prefixes]
        keys = [fmt.metadata_key(_join(group_path, n), "") for n in names]
        # one batch per group: remote stores fetch these concurrently
        for name, key, data in zip(names, keys, store.get_many(keys), strict=True):
            if data is None:
                continue  # a prefix holding chunks or nothing zarr, not a node
            metadata = parse_node_metadata(data, source=key)
            child_rel = _join(rel, name)
            if isinstance(metadata, GroupMetadata):
                metadata = dataclasses.replace(metadata, consolidated_metadata=_empty())
                pending.append((_join(group_path, name), child_rel))
            out[child_rel] = metadata
    return {k: out[k] for k in sorted(out, key=_sort_key)}


def consolidate_metadata(
    store: Any,
    path: str | None = None,
    zarr_format: Any = None,
    *,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Write the metadata of every node below a group into that group's ``zarr.json`` (a
    Zarr v2 group's ``.zmetadata``).

    Readers that open the group with :func:`open_consolidated` (or ``use_consolidated``
    None or True) then find every member from that one document.  Call it again after
    changing the hierarchy: the document is a snapshot (see :mod:`zarr3c.consolidated`).

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        The store holding the hierarchy, as for :func:`zarr3c.create_array` (opened
        writable).
    path : str or None, default None
        The group to consolidate (None: the root); only nodes below it are included.
    zarr_format : {None, 3, 2}, default None
        The hierarchy's layout, checked when given: Zarr v3 (the group's ``zarr.json``) or
        Zarr v2 (the group's ``.zmetadata``).
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.

    Returns
    -------
    Group
        The group, opened from its new consolidated metadata.  Its attributes and other
        fields are kept; an earlier ``consolidated_metadata`` is replaced, and consolidated
        metadata of child groups is neither read nor changed.

    Raises
    ------
    ReadOnlyError
        If the store is read-only.
    UnsupportedFeatureError
        If the hierarchy is in neither the Zarr v3 ``zarr.json`` layout nor Zarr v2, or is
        not in the ``zarr_format`` given.
    GroupNotFoundError, ContainsArrayError
        If there is no group at ``path`` (nothing, or an array).
    MetadataError
        If a node's metadata document is invalid (the message names its key).

    See Also
    --------
    open_consolidated : Open a group from its consolidated metadata.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> root = zarr3c.create_group(store)
    >>> a = root.create_array("sub/x", shape=(2,), dtype="int8")
    >>> g = zarr3c.consolidate_metadata(store)
    >>> sorted(g.metadata.consolidated_metadata["metadata"])
    ['sub', 'sub/x']
    """
    from zarr3c.group import Group  # (group.py imports this module)
    from zarr3c.paths import normalize_path
    from zarr3c.stores import make_store

    if zarr_format not in (None, 2, 3):
        raise UnsupportedFeatureError(
            f"consolidated metadata is a Zarr v2 and v3 feature; zarr_format {zarr_format!r} "
            "has none"
        )
    p = normalize_path(path)
    s = make_store(store, read_only=False, storage_options=storage_options)
    key = V3Format().metadata_key(p, "group")
    # Held from the one read of the document to the write: an attribute update made through
    # this process meanwhile is neither lost nor overwritten.
    with chunk_lock(s, key):
        reads = ReadOnce(s)  # at the root, format detection and the group share one read
        fmt = detect_format(reads, p)
        if zarr_format is not None and zarr_format != fmt.zarr_format:
            raise UnsupportedFeatureError(
                f"zarr_format {zarr_format!r} does not match the hierarchy at {p!r}, which "
                f"is in the {fmt.zarr_format!r} layout"
            )
        if isinstance(fmt, V2Format):
            return _consolidate_v2(s, p, fmt)
        refuse_other_formats(fmt, f"cannot consolidate the group at {p!r}")
        if s.read_only:
            raise ReadOnlyError(f"cannot write consolidated metadata to {key!r}: the store is "
                                "read-only")
        current = fmt.read_node(reads, p)
        if current is None:
            raise GroupNotFoundError(f"no group at path {p!r} in store {describe_store(s)}")
        if not isinstance(current, GroupMetadata):
            raise ContainsArrayError(f"expected a group at path {p!r}"
                                     f" in store {describe_store(s)}, found an array")
        entries = collect(s, fmt, p)
        raw = {k: v.to_dict() for k, v in entries.items()}
        new = dataclasses.replace(current, consolidated_metadata=_empty(raw))
        fmt.write_node(s, p, new)
    consolidated = ConsolidatedMetadata(metadata=raw, source=key)
    return Group(s, p, new, fmt=fmt,
                 consolidated=ConsolidatedView(ConsolidatedIndex(consolidated, p, entries)))


def _consolidate_v2(store: Any, path: str, fmt: HierarchyFormat) -> Group:
    """:func:`consolidate_metadata` for a Zarr v2 group: every document below it (and its
    own ``.zgroup`` and ``.zattrs``) into its ``.zmetadata``, as zarr-python writes it."""
    from zarr3c.group import Group

    key = _join(path, CONSOLIDATED_KEY)
    if store.read_only:
        raise ReadOnlyError(f"cannot write consolidated metadata to {key!r}: the store is "
                            "read-only")
    current = read_v2_node(store, path)
    if current is None:
        raise GroupNotFoundError(f"no group at path {path!r} in store {describe_store(store)}")
    if current.node_type != "group":
        raise ContainsArrayError(f"expected a group at path {path!r}"
                                 f" in store {describe_store(store)}, found an array")
    documents: dict[str, Any] = {GROUP_KEY: current.to_dict(), ATTRS_KEY: current.attributes}
    pending = [(path, "")]
    while pending:
        group_path, rel = pending.pop()
        for name in fmt.child_names(store, group_path):
            child_path, child_rel = _join(group_path, name), _join(rel, name)
            node = read_v2_node(store, child_path)
            if node is None:
                continue
            own = ARRAY_KEY if node.node_type == "array" else GROUP_KEY
            documents[f"{child_rel}/{own}"] = node.to_dict()
            documents[f"{child_rel}/{ATTRS_KEY}"] = node.attributes
            if node.node_type == "group":
                pending.append((child_path, child_rel))
    cm = V2ConsolidatedMetadata.from_documents(documents, source=key)
    with chunk_lock(store, key):
        store.set(key, cm.to_json())
    view = ConsolidatedView(ConsolidatedIndex(cm, path))  # type: ignore[arg-type]
    return Group(store, path, current, fmt=fmt, consolidated=view)


def open_consolidated(
    store: Any,
    path: str | None = None,
    mode: str = "r",
    *,
    use_consolidated: bool = True,
    **kwargs: Any,
) -> Group:
    """Open a group from its consolidated metadata, read-only by default.

    :func:`zarr3c.open_group` with ``use_consolidated=True``, as zarr-python's
    ``zarr.open_consolidated``: membership, listings and member metadata then come from the
    group's ``zarr.json`` alone.

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        The store holding the group, as for :func:`zarr3c.create_array`.
    path : str or None, default None
        The group's path (None: the root).
    mode : {"r", "r+", "a", "w", "w-"}, default "r"
        As for :func:`zarr3c.open_group`.  A group these modes create (``"a"`` for a
        missing group, ``"w"``, ``"w-"``) is returned as created, without consolidated
        metadata.
    use_consolidated : bool, default True
        Must be True (accepted for zarr-python's signature).
    **kwargs
        Other :func:`zarr3c.open_group` keywords: ``attributes``, ``storage_options``.

    Returns
    -------
    Group
        The group, answering from its consolidated metadata.

    Raises
    ------
    MetadataError
        If the group's ``zarr.json`` has no consolidated metadata (the message names the key).
    InvalidArgumentError
        If ``use_consolidated`` is not True, or ``mode`` is invalid.
    GroupNotFoundError
        If there is no group at ``path``.
    UnsupportedFeatureError
        If the hierarchy is not in the Zarr v3 layout.

    See Also
    --------
    consolidate_metadata : Write the consolidated metadata.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> a = zarr3c.create_group(store).create_array("x", shape=(3,), dtype="int8")
    >>> _ = zarr3c.consolidate_metadata(store)
    >>> g = zarr3c.open_consolidated(store)
    >>> g.uses_consolidated_metadata, g.keys(), g.read_only
    (True, ['x'], True)
    """
    from zarr3c.api import open_group

    if use_consolidated is not True:
        raise InvalidArgumentError(
            "open_consolidated() needs use_consolidated=True; use open_group(..., "
            "use_consolidated=False) to ignore consolidated metadata"
        )
    return open_group(store, path, mode=mode, use_consolidated=True, **kwargs)

