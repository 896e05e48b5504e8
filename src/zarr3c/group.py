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
    MemberNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarr3c.group_compat import GroupCompat
from zarr3c.hierarchy import prepare_node
from zarr3c.metadata.formats import HierarchyFormat, V2Format, V3Format, detect_format
from zarr3c.metadata.group import ConsolidatedMetadata, entry_error
from zarr3c.metadata.v2 import (
    CONSOLIDATED_KEY,
    V2ConsolidatedMetadata,
    v2_node_from_documents,
)
from zarr3c.node import UNREADABLE, Node, UnreadableNode
from zarr3c.paths import join_path
from zarr3c.stores import Store, describe_store

__all__ = ["Group", "MemberNotFoundError", "create_group", "open_group_at", "open_node"]


def open_node(store: Store, path: str, *, read_only: bool = False,
              fmt: HierarchyFormat | None = None, use_consolidated: bool | None = False,
              reads: Any = None) -> Array | Group:
    """The array or group at ``path`` (already normalised) in ``store``.

    Parameters
    ----------
    store : Store
        The store holding the hierarchy.
    path : str
        The node's path ("" for the root).
    read_only : bool, default False
        Open the node read-only.
    fmt : HierarchyFormat or None, default None
        The hierarchy's layout (None: detected from the store).
    use_consolidated : bool or None, default False
        For a group, as for :func:`zarr3c.open_group`; the default here, False, reads the
        hierarchy as stored, which is what copying and other internal walks need.
    reads : object or None, default None
        What metadata is read through (None: ``store``; see
        :class:`~zarr3c.consolidated.ReadOnce`).

    Returns
    -------
    Array or Group
        The node.

    Raises
    ------
    NodeNotFoundError
        If there is no node at ``path``.
    MetadataError
        If ``use_consolidated`` is True and the group has no consolidated metadata, or a
        document is invalid.
    InvalidArgumentError
        If ``use_consolidated`` is not None, True or False.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://", "a/b")
    >>> open_node(g.store, "a")
    <zarr3c.Group '/a'>
    """
    check_use_consolidated(use_consolidated)
    reads = store if reads is None else reads
    fmt = fmt if fmt is not None else detect_format(reads, path)
    if isinstance(fmt, V2Format) and use_consolidated is not False:
        group = _open_v2_consolidated(store, reads, path, read_only=read_only, fmt=fmt,
                                      required=use_consolidated is True)
        if group is not None:
            return group
    metadata = fmt.read_node(reads, path)
    if metadata is None:
        if not fmt.node_exists(reads, path):
            raise NodeNotFoundError(f"no array or group at path {path!r}"
                                    f" in store {describe_store(store)}")
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


def _open_v2_consolidated(store: Store, reads: Any, path: str, *, read_only: bool,
                          fmt: HierarchyFormat, required: bool) -> Group | None:
    """The v2 group at ``path`` opened from its ``.zmetadata`` (one read: the group's own
    documents come from it too, where it holds them), or None where it has none.

    Raises MetadataError where ``required`` and there is none, or it is invalid.
    """
    key = join_path(path, CONSOLIDATED_KEY)
    data = reads.get(key)
    if data is None:
        if required and fmt.node_exists(reads, path):
            raise MetadataError(
                "no consolidated metadata for this group (use_consolidated=True); write it "
                "with zarr3c.consolidate_metadata()", source=key)
        return None
    cm = V2ConsolidatedMetadata.from_json(data, source=key)
    metadata = v2_node_from_documents(cm.documents, "", source=key)
    if metadata is None:  # (zarr-python puts the group's own documents in; others may not)
        metadata = fmt.read_node(reads, path)
        if metadata is None:
            raise GroupNotFoundError(f"no group at path {path!r}"
                                     f" in store {describe_store(store)} (only {key!r})")
    if metadata.node_type != "group":
        raise ContainsArrayError(f"expected a group at path {path!r}"
                                 f" in store {describe_store(store)}, found an array")
    view = ConsolidatedView(ConsolidatedIndex(cm, path))  # type: ignore[arg-type]
    return Group(store, path, metadata, read_only=read_only, fmt=fmt, consolidated=view)


class Group(GroupCompat, Node):
    """A group: a node whose members are arrays and other groups.

    Create one with :func:`zarr3c.create_group` or :meth:`Group.create_group`, open one with
    :func:`zarr3c.open_group` (or :func:`zarr3c.open`, :func:`zarr3c.open_consolidated`);
    the constructor is what these call, with a metadata document already read.

    A group is a mapping from member names to nodes (``g["x"]``, ``"x" in g``,
    ``len(g)``, iteration over names, ``del g["x"]`` to erase a member, ``g["x"] = data`` to
    create an array holding ``data``); nested paths work (``g["sub/x"]``).  zarr-python's
    other ``Group`` methods are in :mod:`zarr3c.group_compat`.  Members are found by
    listing the store, or in the group's consolidated metadata when it was opened from it.
    Groups compare equal when they are the same path in the same store, and pickle as a
    reference to it.

    Parameters
    ----------
    store : Store
        The store holding the hierarchy.
    path : str
        The group's path in the store, normalised ("" for the root).
    metadata : GroupMetadata
        The group's metadata document (a draft-2022 or zarr2-v3 one in those layouts).
    read_only : bool, default False
        Refuse changes (also when the store is read-only).
    fmt : HierarchyFormat or None, default None
        The hierarchy's layout (None: the final Zarr v3 one).
    consolidated : ConsolidatedView or None, default None
        Where members are looked up when the group was opened from consolidated metadata.

    See Also
    --------
    zarr3c.create_group, zarr3c.open_group

    Examples
    --------
    >>> import zarr3c
    >>> root = zarr3c.create_group("memory://")
    >>> a = root.create_array("data", shape=(3,), dtype="uint8")
    >>> sub = root.create_group("sub")
    >>> sorted(root), len(root), "data" in root
    (['data', 'sub'], 2, True)
    >>> root["data"]
    <zarr3c.Array '/data' shape=(3,) dtype=uint8>
    """

    kind = "group"

    def __init__(self, store: Store, path: str, metadata: Any, *,
                 read_only: bool = False, fmt: HierarchyFormat | None = None,
                 consolidated: ConsolidatedView | None = None):
        super().__init__(store, path, metadata, read_only=read_only, fmt=fmt)
        # Set when membership comes from consolidated metadata rather than the store.
        self._consolidated = consolidated

    @property
    def uses_consolidated_metadata(self) -> bool:
        """Whether members are looked up in consolidated metadata (no store reads).

        True for a group opened with consolidated metadata and the groups reached through
        it.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.uses_consolidated_metadata
        False
        >>> zarr3c.consolidate_metadata(g.store).uses_consolidated_metadata
        True
        """
        return self._consolidated is not None

    def __repr__(self) -> str:
        """``<zarr3c.Group '/path'>``."""
        return f"<zarr3c.Group {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as (store, path, read-only, consolidated): the group is reopened."""
        return (_reopen_group, (self._store, self._path, self._read_only,
                                self._consolidated is not None))

    # -- members -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Array | Group:
        """The member at ``name``: a child, or a descendant by relative path.

        Parameters
        ----------
        name : str
            A member name, or a path relative to this group (``"sub/x"``).

        Returns
        -------
        Array or Group
            The member, opened read-only if this group is.

        Raises
        ------
        MemberNotFoundError
            If there is no such member (a KeyError).
        NodeNameError
            If ``name`` is not a valid path (empty, ``".."``, ...).
        MetadataError
            If the member's metadata document (or consolidated entry) is invalid.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> x = g.create_group("sub").create_array("x", shape=(2,), dtype="int8")
        >>> g["sub"]
        <zarr3c.Group '/sub'>
        >>> g["sub/x"]
        <zarr3c.Array '/sub/x' shape=(2,) dtype=int8>
        """
        path = join_path(self._path, name)
        view = self._consolidated
        if view is not None:
            rel = self._relative(path)
            metadata = view.index.get(view.child_rel(rel))
            if metadata is None:
                raise MemberNotFoundError(
                    f"no member {name!r} in group {self.name!r} in store "
                    f"{describe_store(self._store)} (its consolidated metadata has none)"
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
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r} in store "
                                      f"{describe_store(self._store)}") from None

    def get(self, name: str, default: Any = None) -> Any:
        """The member at ``name``, or ``default`` when there is none (as ``dict.get``).

        Parameters
        ----------
        name : str
            A member name, or a path relative to this group.
        default : object, default None
            What to return when there is no such member.

        Returns
        -------
        Array, Group or object
            The member, or ``default``.

        Raises
        ------
        NodeNameError
            If ``name`` is not a valid path.
        MetadataError
            If the member's metadata document is invalid.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.get("nothing") is None
        True
        >>> g.get("nothing", "default")
        'default'
        """
        try:
            return self[name]
        except MemberNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` (a member name or relative path) is a member; False for an
        invalid name."""
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
        """``path`` (below this group) relative to this group."""
        return path[len(self._path) + 1:] if self._path else path

    def __delitem__(self, name: str) -> None:
        """Erase the member ``name`` and everything below it (MemberNotFoundError if none;
        ReadOnlyError if the group is read-only)."""
        self._check_writable()
        path = join_path(self._path, name)
        if name not in self:
            raise MemberNotFoundError(f"no member {name!r} in group {self.name!r} in store "
                                      f"{describe_store(self._store)}")
        self._format.erase_node(self._store, path)
        if self._consolidated is not None:
            self._consolidated.forget(self._store, self._format, self._relative(path))

    def _child_names(self) -> list[str]:
        """Names of the children, sorted: from the consolidated view or a store listing."""
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
        """The names of the children, sorted."""
        return iter(self._child_names())

    def __len__(self) -> int:
        """The number of children."""
        return len(self._child_names())

    def keys(self) -> list[str]:
        """Names of the children (arrays and groups), sorted.

        Returns
        -------
        list of str
            The names, without their group's path.

        Raises
        ------
        StoreError
            If listing the store fails.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_group("b"), g.create_array("a", shape=(1,), dtype="int8")
        >>> g.keys()
        ['a', 'b']
        """
        return self._child_names()

    def members(self, max_depth: int | None = 0
                ) -> tuple[tuple[str, Array | Group | UnreadableNode], ...]:
        """The children (and with ``max_depth``, deeper descendants) as (name, node) pairs.

        A member whose metadata cannot be read (invalid, or a data type, codec or format
        this zarr3c does not know) is listed as an :class:`~zarr3c.UnreadableNode` holding
        the error, so that it never hides the others.

        Parameters
        ----------
        max_depth : int or None, default 0
            0: the children only.  n > 0: also descendants up to n levels below them.
            None: every descendant.  Descendants are named by their path relative to this
            group, each right after its parent.

        Returns
        -------
        tuple of (str, Array, Group or UnreadableNode)
            Children sorted by name, each followed by its own descendants.

        Raises
        ------
        StoreError
            If listing or reading the store fails.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> x = g.create_group("sub").create_array("x", shape=(2,), dtype="int8")
        >>> [name for name, _ in g.members()]
        ['sub']
        >>> [name for name, _ in g.members(max_depth=None)]
        ['sub', 'sub/x']
        """
        out: list[tuple[str, Array | Group | UnreadableNode]] = []
        for name in self._child_names():
            try:
                node: Array | Group | UnreadableNode = self[name]
            except UNREADABLE as exc:  # listed with what is wrong, never hiding the others
                node = UnreadableNode(join_path(self._path, name), exc)
            out.append((name, node))
            if isinstance(node, Group) and (max_depth is None or max_depth > 0):
                deeper = None if max_depth is None else max_depth - 1
                out.extend((f"{name}/{n}", m) for n, m in node.members(deeper))
        return tuple(out)

    def arrays(self) -> tuple[tuple[str, Array], ...]:
        """The child arrays as (name, array) pairs, sorted by name.

        Returns
        -------
        tuple of (str, Array)

        Raises
        ------
        StoreError
            If listing or reading the store fails (members whose metadata cannot be read
            are left out).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("x", shape=(2,), dtype="int8"), g.create_group("sub")
        >>> g.arrays()
        (('x', <zarr3c.Array '/x' shape=(2,) dtype=int8>),)
        """
        return tuple((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> tuple[tuple[str, Group], ...]:
        """The child groups as (name, group) pairs, sorted by name.

        Returns
        -------
        tuple of (str, Group)

        Raises
        ------
        StoreError
            If listing or reading the store fails (members whose metadata cannot be read
            are left out).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("x", shape=(2,), dtype="int8"), g.create_group("sub")
        >>> g.groups()
        (('sub', <zarr3c.Group '/sub'>),)
        """
        return tuple((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        """Names of the child arrays, sorted.

        Returns
        -------
        list of str

        Raises
        ------
        StoreError
            If listing or reading the store fails (members whose metadata cannot be read
            are left out).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("x", shape=(2,), dtype="int8"), g.create_group("sub")
        >>> g.array_keys()
        ['x']
        """
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        """Names of the child groups, sorted.

        Returns
        -------
        list of str

        Raises
        ------
        StoreError
            If listing or reading the store fails (members whose metadata cannot be read
            are left out).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("x", shape=(2,), dtype="int8"), g.create_group("sub")
        >>> g.group_keys()
        ['sub']
        """
        return [n for n, _ in self.groups()]

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array at ``name`` below this group, in the group's layout.

        Parameters
        ----------
        name : str
            The array's name, or a path relative to this group (missing groups between are
            created).
        **kwargs
            :func:`zarr3c.create_array`'s keywords but ``zarr_format`` (the group's layout is
            used) and ``storage_options``: ``shape``, ``dtype``, ``chunks``, ``shards``,
            ``filters``, ``serializer``, ``compressors``, ``fill_value``, ``order``,
            ``attributes``, ``chunk_key_encoding``, ``dimension_names``, ``overwrite``,
            ``codecs``, ``write_empty_chunks``, ``config`` and ``data`` (which here gives
            ``shape`` and ``dtype`` when they are not given).

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError
            If the group is read-only.
        ContainsArrayError, ContainsGroupError
            If a node exists at ``name`` and ``overwrite`` is not True.
        NodeNameError
            If ``name`` is not a valid path.
        MetadataError
            If an argument is invalid (see :func:`zarr3c.create_array`).

        See Also
        --------
        zarr3c.create_array

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> a = g.create_array("x", shape=(2, 3), dtype="float32", chunks=(1, 3))
        >>> a, a.chunks
        (<zarr3c.Array '/x' shape=(2, 3) dtype=float32>, (1, 3))
        """
        self._check_writable()
        array = create_array(self._store, join_path(self._path, name), fmt=self._format,
                             known_group=self._path, **kwargs)
        self._record(array, bool(kwargs.get("overwrite")))
        return array

    def create_group(self, name: str, attributes: dict[str, Any] | None = None,
                     overwrite: bool = False) -> Group:
        """Create a group at ``name`` below this group.

        Parameters
        ----------
        name : str
            The group's name, or a path relative to this group (missing groups between are
            created).
        attributes : dict or None, default None
            User attributes (JSON-serializable).
        overwrite : bool, default False
            Replace a node already at ``name`` (erasing it and everything below it).

        Returns
        -------
        Group
            The new group.

        Raises
        ------
        ReadOnlyError
            If this group is read-only.
        ContainsArrayError, ContainsGroupError
            If a node exists at ``name`` and ``overwrite`` is False.
        NodeNameError
            If ``name`` is not a valid path.
        MetadataError
            If ``attributes`` is not JSON-serializable.

        See Also
        --------
        require_group : The group at ``name``, created only if missing.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.create_group("sub/deeper", attributes={"level": 2})
        <zarr3c.Group '/sub/deeper'>
        >>> g.group_keys()
        ['sub']
        """
        self._check_writable()
        group = create_group(self._store, join_path(self._path, name), attributes=attributes,
                             overwrite=overwrite, fmt=self._format, known_group=self._path)
        self._record(group, overwrite)
        view = self._consolidated
        if view is not None:
            group._consolidated = view.child(self._relative(group.path))
        return group

    def require_group(self, name: str, attributes: dict[str, Any] | None = None) -> Group:
        """The group at ``name`` below this group, created if missing.

        Parameters
        ----------
        name : str
            The group's name, or a path relative to this group.
        attributes : dict or None, default None
            User attributes of a group created here (an existing group keeps its own).

        Returns
        -------
        Group
            The existing or new group.

        Raises
        ------
        ContainsArrayError
            If an array is at ``name``.
        ReadOnlyError
            If the group is missing and this group is read-only.
        NodeNameError
            If ``name`` is not a valid path.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> first = g.require_group("sub", attributes={"n": 1})
        >>> g.require_group("sub", attributes={"n": 2}).attrs["n"]
        1
        """
        path = join_path(self._path, name)
        if name not in self:
            return self.create_group(name, attributes=attributes)
        node = self[name]
        if isinstance(node, Array):
            raise ContainsArrayError(f"an array exists at path {path!r} in store "
                                     f"{describe_store(self._store)}")
        return node

    def tree(self) -> str:
        """The hierarchy below this group as indented text, with shapes and dtypes.

        Returns
        -------
        str
            One line per node, the group's own name first; a member whose metadata cannot
            be read shows what is wrong with it.

        Raises
        ------
        StoreError
            If listing or reading the store fails (members whose metadata cannot be read
            are left out).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> a = g.create_array("sub/x", shape=(2, 3), dtype="int16")
        >>> b = g.create_array("y", shape=(4,), dtype="uint8")
        >>> print(g.tree())
        /
        ├── sub
        │   └── x (2, 3) int16
        └── y (4,) uint8
        """
        lines = [self.name]

        def walk(group: Group, indent: str) -> None:
            members = group.members()
            for i, (name, node) in enumerate(members):
                last = i == len(members) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                elif isinstance(node, UnreadableNode):
                    lines.append(f"{indent}{branch}{name} (unreadable: {node.error})")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    walk(node, indent + ("    " if last else "│   "))

        walk(self, "")
        return "\n".join(lines)


def create_group(store: Store, path: str, *, attributes: dict[str, Any] | None = None,
                 overwrite: bool = False, fmt: HierarchyFormat | None = None,
                 reads: Any = None, known_group: str | None = None) -> Group:
    """Create a group at ``path`` (already normalised) in ``store``.

    What :func:`zarr3c.create_group` and :meth:`Group.create_group` call once the store and
    format are known.

    Parameters
    ----------
    store : Store
        The store, writable.
    path : str
        The group's normalised path ("" for the root).
    attributes : dict or None, default None
        User attributes.
    overwrite : bool, default False
        Replace a node already at ``path``.
    fmt : HierarchyFormat or None, default None
        The hierarchy's layout (None: the final Zarr v3 one).
    reads : ReadOnce or None, default None
        The store seen through :class:`zarr3c.consolidated.ReadOnce` by the caller, which
        detected the format: the checks before the write do not read its keys again.
    known_group : str or None, default None
        The path of the group creating this one (:meth:`Group.create_group`): it and its
        ancestors are not read again (:func:`zarr3c.hierarchy.prepare_node`).

    Returns
    -------
    Group

    Raises
    ------
    ReadOnlyError
        If the store is read-only.
    ContainsArrayError, ContainsGroupError
        If a node exists at ``path`` and ``overwrite`` is False, or an ancestor is an array.
    MetadataError
        If ``attributes`` is not JSON-serializable.

    Examples
    --------
    >>> import zarr3c
    >>> create_group(zarr3c.MemoryStore(), "a/b")
    <zarr3c.Group '/a/b'>
    """
    fmt = fmt if fmt is not None else V3Format()
    if store.read_only:
        raise ReadOnlyError(f"cannot create a group in a read-only store at {path!r}")
    metadata = fmt.new_group(dict(attributes or {}))
    prepare_node(store, fmt, path, overwrite=overwrite, reads=reads, known_group=known_group)
    fmt.write_node(store, path, metadata)
    return Group(store, path, metadata, fmt=fmt)


def open_group_at(store: Store, path: str, read_only: bool = False,
                  fmt: HierarchyFormat | None = None, *, use_consolidated: bool | None = False,
                  reads: Any = None) -> Group:
    """Open the existing group at ``path`` (already normalised) in ``store``.

    Parameters
    ----------
    store : Store
        The store holding the hierarchy.
    path : str
        The group's normalised path ("" for the root).
    read_only : bool, default False
        Open the group read-only.
    fmt : HierarchyFormat or None, default None
        The hierarchy's layout (None: detected).
    use_consolidated : bool or None, default False
        As for :func:`open_node`.
    reads : object or None, default None
        What metadata is read through, as for :func:`open_node`.

    Returns
    -------
    Group

    Raises
    ------
    GroupNotFoundError
        If there is no node at ``path``.
    ContainsArrayError
        If an array is at ``path``.
    MetadataError
        If ``use_consolidated`` is True and there is no consolidated metadata.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://", "a")
    >>> open_group_at(g.store, "a", read_only=True).read_only
    True
    """
    fmt = fmt if fmt is not None else detect_format(store if reads is None else reads, path)
    try:
        node = open_node(store, path, read_only=read_only, fmt=fmt,
                         use_consolidated=use_consolidated, reads=reads)
    except NodeNotFoundError:
        raise GroupNotFoundError(f"no group at path {path!r}"
                                 f" in store {describe_store(store)}") from None
    if isinstance(node, Array):
        raise ContainsArrayError(f"expected a group at path {path!r}"
                                 f" in store {describe_store(store)}, found an array")
    return node


def _reopen_group(store: Store, path: str, read_only: bool, consolidated: bool) -> Group:
    """Unpickle a group: reopened from the store (from its consolidated metadata if it was)."""
    return open_group_at(store, path, read_only, use_consolidated=None if consolidated else False)
