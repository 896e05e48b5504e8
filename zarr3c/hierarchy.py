"""Nodes in a store: reading and writing ``zarr.json`` documents, and making room for new nodes.

Follows the final Zarr v3 layout (one ``zarr.json`` per node).  Creating a node writes group
documents for missing ancestors, as zarr-python 3 does, so that every node is discoverable by
listing from the root.
"""

from __future__ import annotations

from zarr3c.errors import ContainsArrayError, ContainsGroupError, NodeNameError
from zarr3c.metadata import ArrayMetadata, GroupMetadata, parse_node_metadata
from zarr3c.paths import metadata_key, node_prefix
from zarr3c.stores import Store

__all__ = ["ancestors", "prepare_node", "read_node_metadata", "write_metadata"]

NodeMetadata = ArrayMetadata | GroupMetadata


def read_node_metadata(store: Store, path: str) -> NodeMetadata | None:
    """The node's metadata, or None when there is no ``zarr.json`` at ``path``."""
    key = metadata_key(path)
    data = store.get(key)
    if data is None:
        return None
    return parse_node_metadata(bytes(data), source=key)


def write_metadata(store: Store, path: str, metadata: NodeMetadata) -> None:
    store.set(metadata_key(path), metadata.to_json())


def ancestors(path: str) -> list[str]:
    """Paths of the ancestors of ``path``, root first ("" is the root)."""
    if path == "":
        return []
    parts = path.split("/")
    return [""] + ["/".join(parts[:i]) for i in range(1, len(parts))]


def prepare_node(store: Store, path: str, *, overwrite: bool) -> None:
    """Make ``path`` free for a new node and make sure its ancestors are groups.

    Raises ContainsArrayError/ContainsGroupError when a node exists and ``overwrite`` is false,
    or when an ancestor is an array.  Nothing is written or erased before every check passed.
    """
    existing = read_node_metadata(store, path)
    if existing is not None and not overwrite:
        cls = ContainsArrayError if isinstance(existing, ArrayMetadata) else ContainsGroupError
        kind = "an array" if isinstance(existing, ArrayMetadata) else "a group"
        raise cls(f"{kind} already exists at path {path!r} ({metadata_key(path)!r})")
    missing: list[str] = []
    for parent in ancestors(path):
        md = read_node_metadata(store, parent)
        if isinstance(md, ArrayMetadata):
            raise ContainsArrayError(
                f"cannot create a node at {path!r}: its ancestor {parent!r} is an array"
            )
        if md is None:
            missing.append(parent)
    if existing is not None:
        prefix = node_prefix(path)
        if prefix == "":
            store.erase_prefix("")
        else:
            store.erase_prefix(prefix)
    for parent in missing:
        write_metadata(store, parent, GroupMetadata.from_dict(
            {"zarr_format": 3, "node_type": "group", "attributes": {}}
        ))


def check_child_name(name: str) -> None:
    if name == "zarr.json":
        raise NodeNameError("'zarr.json' is not a valid node name")
