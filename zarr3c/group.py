"""The user-facing ``Group``: a node whose children are arrays and groups.

Children are discovered by listing the group's prefix (``list_dir``) and reading each child's
``zarr.json``, as in the final Zarr v3 layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zarr3c.array import Array, create_array
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarr3c.hierarchy import prepare_node
from zarr3c.metadata.formats import HierarchyFormat, V3Format, detect_format
from zarr3c.node import Node
from zarr3c.paths import join_path
from zarr3c.stores import Store

__all__ = ["Group", "MemberNotFoundError", "create_group", "open_group_at", "open_node"]


class MemberNotFoundError(NodeNotFoundError, KeyError):
    """``group[name]`` where there is no such member (a KeyError, as for a dict)."""

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


def open_node(store: Store, path: str, *, read_only: bool = False,
              fmt: HierarchyFormat | None = None) -> Array | Group:
    """The array or group at ``path``; NodeNotFoundError when there is none."""
    fmt = fmt if fmt is not None else detect_format(store)
    metadata = fmt.read_node(store, path)
    if metadata is None:
        if not fmt.node_exists(store, path):
            raise NodeNotFoundError(f"no array or group at path {path!r}")
        metadata = fmt.new_group({})  # an implicit group (draft-2022)
    if metadata.node_type == "array":
        return Array(store, path, metadata, read_only=read_only, fmt=fmt)
    return Group(store, path, metadata, read_only=read_only, fmt=fmt)


class Group(Node):
    """A Zarr v3 group.  Create with :func:`zarr3c.create_group`, open with
    :func:`zarr3c.open_group`."""

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False, fmt: HierarchyFormat | None = None):
        super().__init__(store, path, metadata, read_only=read_only, fmt=fmt)

    def __repr__(self) -> str:
        return f"<zarr3c.Group {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (open_group_at, (self._store, self._path, self._read_only))

    # -- members -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Array | Group:
        path = join_path(self._path, name)
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
        return self._format.node_exists(self._store, path)

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        path = join_path(self._path, name)
        if not self._format.node_exists(self._store, path):
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r}")
        self._format.erase_node(self._store, path)

    def _child_names(self) -> list[str]:
        return self._format.child_names(self._store, self._path)

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
        return create_array(self._store, join_path(self._path, name), fmt=self._format, **kwargs)

    def create_group(self, name: str, attributes: dict[str, Any] | None = None,
                     overwrite: bool = False) -> Group:
        self._check_writable()
        return create_group(self._store, join_path(self._path, name), attributes=attributes,
                            overwrite=overwrite, fmt=self._format)

    def require_group(self, name: str, attributes: dict[str, Any] | None = None) -> Group:
        """The child group ``name``, created if missing."""
        path = join_path(self._path, name)
        if not self._format.node_exists(self._store, path):
            return self.create_group(name, attributes=attributes)
        node = open_node(self._store, path, read_only=self._read_only, fmt=self._format)
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
                  fmt: HierarchyFormat | None = None) -> Group:
    fmt = fmt if fmt is not None else detect_format(store)
    try:
        node = open_node(store, path, read_only=read_only, fmt=fmt)
    except NodeNotFoundError:
        raise GroupNotFoundError(f"no group at path {path!r}") from None
    if isinstance(node, Array):
        raise ContainsArrayError(f"expected a group at path {path!r}, found an array")
    return node
