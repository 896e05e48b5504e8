"""The user-facing ``Group``: a node whose children are arrays and groups.

Children are discovered by listing the group's prefix (``list_dir``) and reading each child's
``zarr.json``, as in the final Zarr v3 layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zarr3c.array import Array, Attributes, create_array, update_node_attributes
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarr3c.hierarchy import prepare_node, read_node_metadata, write_metadata
from zarr3c.metadata import ArrayMetadata, GroupMetadata
from zarr3c.paths import join_path, metadata_key, node_prefix
from zarr3c.stores import Store

__all__ = ["Group", "MemberNotFoundError", "create_group", "open_group_at", "open_node"]


class MemberNotFoundError(NodeNotFoundError, KeyError):
    """``group[name]`` where there is no such member (a KeyError, as for a dict)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def open_node(store: Store, path: str, *, read_only: bool = False) -> Array | Group:
    """The array or group at ``path``; NodeNotFoundError when there is none."""
    metadata = read_node_metadata(store, path)
    if metadata is None:
        raise NodeNotFoundError(f"no array or group at path {path!r} (no {metadata_key(path)!r})")
    if isinstance(metadata, ArrayMetadata):
        return Array(store, path, metadata, read_only=read_only)
    return Group(store, path, metadata, read_only=read_only)


class Group:
    """A Zarr v3 group.  Create with :func:`zarr3c.create_group`, open with
    :func:`zarr3c.open_group`."""

    def __init__(self, store: Store, path: str, metadata: GroupMetadata, *,
                 read_only: bool = False):
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = read_only or getattr(store, "read_only", False)

    @property
    def metadata(self) -> GroupMetadata:
        return self._metadata

    @property
    def store(self) -> Store:
        return self._store

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

    def _update_attributes(self, change: Any) -> None:
        self._metadata = update_node_attributes(self, change)

    def __repr__(self) -> str:
        return f"<zarr3c.Group {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (open_group_at, (self._store, self._path, self._read_only))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Group) and other._store == self._store and other._path == self._path
        )

    def __hash__(self) -> int:
        return hash((type(self._store), self._path))

    # -- members -----------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"group {self.name!r} was opened read-only")

    def __getitem__(self, name: str) -> Array | Group:
        path = join_path(self._path, name)
        try:
            return open_node(self._store, path, read_only=self._read_only)
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
        return read_node_metadata(self._store, path) is not None

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        path = join_path(self._path, name)
        if read_node_metadata(self._store, path) is None:
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r}")
        self._store.erase_prefix(node_prefix(path))

    def _child_names(self) -> list[str]:
        _, prefixes = self._store.list_dir(node_prefix(self._path))
        names = []
        for prefix in prefixes:
            name = prefix[len(node_prefix(self._path)):].rstrip("/")
            if self._store.exists(metadata_key(join_path(self._path, name))):
                names.append(name)
        return sorted(names)

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
        return create_array(self._store, join_path(self._path, name), **kwargs)

    def create_group(self, name: str, attributes: dict[str, Any] | None = None,
                     overwrite: bool = False) -> Group:
        self._check_writable()
        return create_group(self._store, join_path(self._path, name), attributes=attributes,
                            overwrite=overwrite)

    def require_group(self, name: str, attributes: dict[str, Any] | None = None) -> Group:
        """The child group ``name``, created if missing."""
        path = join_path(self._path, name)
        md = read_node_metadata(self._store, path)
        if md is None:
            return self.create_group(name, attributes=attributes)
        if isinstance(md, ArrayMetadata):
            raise ContainsArrayError(f"an array exists at {path!r}")
        return Group(self._store, path, md, read_only=self._read_only)

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
                 overwrite: bool = False) -> Group:
    """Create a group at ``path`` (already normalised)."""
    if store.read_only:
        raise ReadOnlyError(f"cannot create a group in a read-only store at {path!r}")
    metadata = GroupMetadata.from_dict(
        {"zarr_format": 3, "node_type": "group", "attributes": dict(attributes or {})},
        source=metadata_key(path),
    )
    prepare_node(store, path, overwrite=overwrite)
    write_metadata(store, path, metadata)
    return Group(store, path, metadata)


def open_group_at(store: Store, path: str, read_only: bool = False) -> Group:
    metadata = read_node_metadata(store, path)
    if metadata is None:
        raise GroupNotFoundError(f"no group at path {path!r} (no {metadata_key(path)!r})")
    if isinstance(metadata, ArrayMetadata):
        raise ContainsArrayError(f"expected a group at path {path!r}, found an array")
    return Group(store, path, metadata, read_only=read_only)
