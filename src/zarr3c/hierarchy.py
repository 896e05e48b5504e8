"""Making room for new nodes, in whatever format the hierarchy has.

Creating a node checks, before anything is written, that nothing is at its path (unless
``overwrite``) and that no ancestor is an array; then it erases what ``overwrite`` replaces,
initialises a new hierarchy (a draft-2022 entry point) and, in the final v3 layout, writes
group documents for missing ancestors as zarr-python 3 does, so every node is discoverable by
listing from the root.

>>> import zarr3c
>>> store = zarr3c.MemoryStore()
>>> _ = zarr3c.create_group(store, "a/b/c")     # writes the groups a and a/b too
>>> sorted(store.list())
['a/b/c/zarr.json', 'a/b/zarr.json', 'a/zarr.json', 'zarr.json']
"""

from __future__ import annotations

from typing import Any

from zarr3c.consolidated import ReadOnce
from zarr3c.errors import ContainsArrayError, ContainsGroupError
from zarr3c.metadata.formats import HierarchyFormat
from zarr3c.stores import describe_store

__all__ = ["prepare_node", "ancestors"]


def ancestors(path: str) -> list[str]:
    """Paths of the ancestors of ``path``, root first ("" is the root).

    Parameters
    ----------
    path : str
        A normalised path.

    Returns
    -------
    list of str
        Empty for the root.

    Examples
    --------
    >>> ancestors("a/b/c")
    ['', 'a', 'a/b']
    """
    if path == "":
        return []
    parts = path.split("/")
    return [""] + ["/".join(parts[:i]) for i in range(1, len(parts))]


def prepare_node(store: Any, fmt: HierarchyFormat, path: str, *, overwrite: bool,
                 reads: Any = None, known_group: str | None = None) -> None:
    """Make ``path`` free for a new node, and its ancestors groups.

    Nothing is written or erased before every check passed.  The caller then writes the new
    node's document.

    Parameters
    ----------
    store : Store
        The store, writable.
    fmt : HierarchyFormat
        The hierarchy's layout.
    path : str
        The new node's normalised path.
    overwrite : bool
        Erase a node already at ``path`` (and everything below it).
    reads : ReadOnce, optional
        The store seen through :class:`zarr3c.consolidated.ReadOnce`, for the checks (the
        caller's reads of the same keys are not repeated); None: a new one (each key is
        read once: a missing document is not asked about again).
    known_group : str, optional
        The path of a group the caller holds (a :class:`~zarr3c.Group` creating a node
        below it): it and its ancestors are taken as the groups they were when it was
        opened, not read again (on an object store, a request per ancestor less).

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node exists at ``path`` and ``overwrite`` is False, or an ancestor is an array
        (ContainsArrayError).
    NodeNameError
        If a name of ``path`` is not allowed in the layout.

    Examples
    --------
    >>> import zarr3c
    >>> from zarr3c.metadata.formats import V3Format
    >>> store = zarr3c.MemoryStore()
    >>> prepare_node(store, V3Format(), "a/b", overwrite=False)
    >>> sorted(store.list())                     # the ancestors, as groups
    ['a/zarr.json', 'zarr.json']
    """
    if path:
        for name in path.split("/"):
            fmt.check_name(name)
    seen = ReadOnce(store) if reads is None else reads  # (nothing is written before the checks)
    existing = fmt.read_node(seen, path)
    exists = existing is not None or (path != "" and fmt.node_exists(seen, path))
    if exists and not overwrite:
        if existing is not None and existing.node_type == "array":
            raise ContainsArrayError(f"an array already exists at path {path!r}"
                                     f" in store {describe_store(store)}")
        raise ContainsGroupError(f"a group already exists at path {path!r}"
                                 f" in store {describe_store(store)}")
    missing: list[str] = []
    known = set() if known_group is None else {known_group, *ancestors(known_group)}
    for parent in ancestors(path):
        if parent in known:
            continue
        md = fmt.read_node(seen, parent)
        if md is not None and md.node_type == "array":
            raise ContainsArrayError(
                f"cannot create a node at {path!r}"
                f" in store {describe_store(store)}: its ancestor {parent!r} is an array"
            )
        if md is None:
            missing.append(parent)
    if exists:
        fmt.erase_node(store, path)
    fmt.initialize(store)
    if fmt.writes_parent_groups:
        for parent in missing:
            fmt.write_node(store, parent, fmt.new_group({}))
