"""The user-facing ``Group``: a node whose children are arrays and groups.

Children are discovered by listing the group's prefix (``list_dir``) and reading each child's
``zarr.json``, as in the final Zarr v3 layout.  A group opened with consolidated metadata
(:mod:`zarr3c.consolidated`) answers membership, listing and member metadata from its
``zarr.json`` alone: it and every group reached through it share one index of the hierarchy
and read nothing more from the store but chunks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from zarr3c.array import Array, create_array
from zarr3c.consolidated import (
    ConsolidatedIndex,
    ConsolidatedView,
    check_use_consolidated,
    refuse_other_formats,
)
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarr3c.hierarchy import prepare_node
from zarr3c.metadata.formats import HierarchyFormat, V3Format, detect_format
from zarr3c.metadata.group import ConsolidatedMetadata, entry_error
from zarr3c.node import Node
from zarr3c.paths import join_path
from zarr3c.stores import Store

__all__ = ["Group", "MemberNotFoundError", "create_group", "open_group_at", "open_node"]


class MemberNotFoundError(NodeNotFoundError, KeyError):
    """``group[name]`` where there is no such member (a KeyError, as for a dict)."""

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


def open_node(store: Store, path: str, *, read_only: bool = False,
              fmt: HierarchyFormat | None = None, use_consolidated: bool | None = False,
              reads: Any = None) -> Array | Group:
    """The array or group at ``path``; NodeNotFoundError when there is none.

    ``use_consolidated`` applies when it is a group (see :func:`zarr3c.open_group`; the
    default here, False, reads the hierarchy as stored, which is what copying and other
    internal walks need); ``reads`` is what metadata is read through (default: ``store``;
    see :class:`~zarr3c.consolidated.ReadOnce`).
    """
    check_use_consolidated(use_consolidated)
    reads = store if reads is None else reads
    fmt = fmt if fmt is not None else detect_format(reads)
    metadata = fmt.read_node(reads, path)
    if metadata is None:
        if not fmt.node_exists(reads, path):
            raise NodeNotFoundError(f"no array or group at path {path!r}")
        metadata = fmt.new_group({})  # an implicit group (draft-2022)
    if metadata.node_type == "array":
        return Array(store, path, metadata, read_only=read_only, fmt=fmt)
    view = None
    cm = getattr(metadata, "consolidated_metadata", None)
    if use_consolidated is True:
        key = fmt.metadata_key(path, "group")
        refuse_other_formats(fmt, f"use_consolidated=True for the group {key!r}")
        if cm is None:
            raise MetadataError(
                "no consolidated metadata in this group's document (use_consolidated=True); "
                "write it with zarr3c.consolidate_metadata()",
                path="consolidated_metadata", source=key,
            )
    if cm is not None:
        if use_consolidated is False:  # ignored, as zarr-python drops it from the metadata
            metadata = dataclasses.replace(metadata, consolidated_metadata=None)
        else:  # parsed only here, where it is used; entries only as members are opened
            cm = ConsolidatedMetadata.from_dict(cm, source=fmt.metadata_key(path, "group"))
            view = ConsolidatedView(ConsolidatedIndex(cm, path))
    return Group(store, path, metadata, read_only=read_only, fmt=fmt, consolidated=view)


class Group(Node):
    """A Zarr v3 group.  Create with :func:`zarr3c.create_group`, open with
    :func:`zarr3c.open_group`."""

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False, fmt: HierarchyFormat | None = None,
                 consolidated: ConsolidatedView | None = None):
        super().__init__(store, path, metadata, read_only=read_only, fmt=fmt)
        # Set when membership comes from consolidated metadata rather than the store.
        self._consolidated = consolidated

    @property
    def uses_consolidated_metadata(self) -> bool:
        """Whether members are looked up in consolidated metadata (no store reads)."""
        return self._consolidated is not None

    def __repr__(self) -> str:
        return f"<zarr3c.Group {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_group, (self._store, self._path, self._read_only,
                                self._consolidated is not None))

    # -- members -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Array | Group:
        path = join_path(self._path, name)
        view = self._consolidated
        if view is not None:
            rel = self._relative(path)
            metadata = view.index.get(view.child_rel(rel))
            if metadata is None:
                raise MemberNotFoundError(
                    f"no member {name!r} in group {self.name!r} (its consolidated metadata "
                    "has none)"
                )
            if metadata.node_type == "array":
                try:
                    return Array(self._store, path, metadata, read_only=self._read_only,
                                 fmt=self._format)
                except MetadataError as exc:  # name the document it came from
                    root = view.index.root_path
                    raise entry_error(exc, view.child_rel(rel),
                                      self._format.metadata_key(root, "group")) from None
            return Group(self._store, path, metadata, read_only=self._read_only,
                         fmt=self._format, consolidated=view.child(rel))
        try:
            return open_node(self._store, path, read_only=self._read_only, fmt=self._format)
        except NodeNotFoundError:
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r}") from None

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except MemberNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            path = join_path(self._path, name)
        except ValueError:
            return False
        view = self._consolidated
        if view is not None:
            return view.child_rel(self._relative(path)) in view.index
        return self._format.node_exists(self._store, path)

    def _relative(self, path: str) -> str:
        return path[len(self._path) + 1:] if self._path else path

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        path = join_path(self._path, name)
        if name not in self:
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r}")
        self._format.erase_node(self._store, path)
        if self._consolidated is not None:
            self._consolidated.forget(self._store, self._format, self._relative(path))

    def _child_names(self) -> list[str]:
        view = self._consolidated
        if view is not None:
            return view.index.child_names(view.rel)
        return self._format.child_names(self._store, self._path)

    def _record(self, node: Array | Group, overwrite: bool) -> None:
        """Show a node created through this group in its consolidated view.  What it
        replaced leaves the stored consolidated document, as a deletion does; the new node
        enters it at the next :func:`~zarr3c.consolidate_metadata`."""
        view = self._consolidated
        if view is None:
            return
        rel = self._relative(node.path)
        if overwrite:
            view.forget(self._store, self._format, rel)
        view.index.add(view.child_rel(rel), node.metadata, self._format.new_group({}))

    def __iter__(self) -> Iterator[str]:
        return iter(self._child_names())

    def __len__(self) -> int:
        return len(self._child_names())

    def keys(self) -> list[str]:
        return self._child_names()

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """(name, node) pairs of the children, sorted by name; with ``max_depth`` > 0 (or
        None for unlimited) also descendants, named by their path relative to this group."""
        out: list[tuple[str, Array | Group]] = []
        for name in self._child_names():
            node = self[name]
            out.append((name, node))
            if isinstance(node, Group) and (max_depth is None or max_depth > 0):
                deeper = None if max_depth is None else max_depth - 1
                out.extend((f"{name}/{n}", m) for n, m in node.members(deeper))
        return tuple(out)

    def arrays(self) -> tuple[tuple[str, Array], ...]:
        return tuple((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> tuple[tuple[str, Group], ...]:
        return tuple((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        return [n for n, _ in self.groups()]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array at ``name`` below this group (see :func:`zarr3c.create_array`)."""
        self._check_writable()
        array = create_array(self._store, join_path(self._path, name), fmt=self._format,
                             **kwargs)
        self._record(array, bool(kwargs.get("overwrite")))
        return array

    def create_group(self, name: str, attributes: dict[str, Any] | None = None,
                     overwrite: bool = False) -> Group:
        self._check_writable()
        group = create_group(self._store, join_path(self._path, name), attributes=attributes,
                             overwrite=overwrite, fmt=self._format)
        self._record(group, overwrite)
        view = self._consolidated
        if view is not None:
            group._consolidated = view.child(self._relative(group.path))
        return group

    def require_group(self, name: str, attributes: dict[str, Any] | None = None) -> Group:
        """The child group ``name``, created if missing."""
        path = join_path(self._path, name)
        if name not in self:
            return self.create_group(name, attributes=attributes)
        node = self[name]
        if isinstance(node, Array):
            raise ContainsArrayError(f"an array exists at {path!r}")
        return node

    def tree(self) -> str:
        """The hierarchy below this group as indented text, with shapes and dtypes."""
        lines = [self.name]

        def walk(group: Group, indent: str) -> None:
            members = group.members()
            for i, (name, node) in enumerate(members):
                last = i == len(members) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    walk(node, indent + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)


def create_group(store: Store, path: str, *, attributes: dict[str, Any] | None = None,
                 overwrite: bool = False, fmt: HierarchyFormat | None = None) -> Group:
    """Create a group at ``path`` (already normalised)."""
    fmt = fmt if fmt is not None else V3Format()
    if store.read_only:
        raise ReadOnlyError(f"cannot create a group in a read-only store at {path!r}")
    metadata = fmt.new_group(dict(attributes or {}))
    prepare_node(store, fmt, path, overwrite=overwrite)
    fmt.write_node(store, path, metadata)
    return Group(store, path, metadata, fmt=fmt)


def open_group_at(store: Store, path: str, read_only: bool = False,
                  fmt: HierarchyFormat | None = None, *, use_consolidated: bool | None = False,
                  reads: Any = None) -> Group:
    """Open the existing group at ``path`` (see :func:`open_node` for the keywords)."""
    fmt = fmt if fmt is not None else detect_format(store if reads is None else reads)
    try:
        node = open_node(store, path, read_only=read_only, fmt=fmt,
                         use_consolidated=use_consolidated, reads=reads)
    except NodeNotFoundError:
        raise GroupNotFoundError(f"no group at path {path!r}") from None
    if isinstance(node, Array):
        raise ContainsArrayError(f"expected a group at path {path!r}, found an array")
    return node


def _reopen_group(store: Store, path: str, read_only: bool, consolidated: bool) -> Group:
    """Unpickle a group: reopened from the store (from its consolidated metadata if it was)."""
    return open_group_at(store, path, read_only, use_consolidated=None if consolidated else False)
