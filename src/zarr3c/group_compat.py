"""The part of :class:`~zarr3c.Group` that zarr-python 3.4's ``Group`` has beyond the mapping
and the creation of members: array creation shorthands (``g[name] = data``, ``zeros``,
``ones``, ``full``, ``empty`` and their ``*_like``, ``create``, ``require_array``),
``require_groups``, typed lookups (``get_array``, ``get_group``), ``array_values`` /
``group_values``, ``nmembers``, the ``info`` summaries, ``move``, ``create_hierarchy`` and
the ``from_store`` / ``open`` constructors.

A mixin, so that :mod:`zarr3c.group` stays the group's mapping and member creation;
everything here is built on those.  The methods type ``self`` as ``Any``: mypy cannot
give a mixin's ``self`` the type of the class deriving from it (:class:`~zarr3c.Group`).
Where zarr-python's behaviour is unsound zarr3c differs, and the docstring says so
(``move``, which zarr-python 3 does not implement, moves here).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from zarr3c.array import Array
from zarr3c.array.create import DEFAULT_FILL_VALUE
from zarr3c.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    InvalidTypeError,
    NodeNameError,
    ShapeMismatchError,
    UnsupportedFeatureError,
)
from zarr3c.hierarchy import prepare_node
from zarr3c.info import GroupInfo
from zarr3c.like import like_args, merge_like
from zarr3c.metadata.formats import V2Format, V3Format
from zarr3c.node import UNREADABLE
from zarr3c.paths import join_path, normalize_path

if TYPE_CHECKING:
    from zarr3c.group import Group

__all__ = ["GroupCompat"]

#: zarr-python's data type of arrays created without one (``zeros``, ``empty``, ...).
_DEFAULT_DTYPE = "float64"


class GroupCompat:
    """zarr-python's ``Group`` methods beyond zarr3c's mapping core (see the module)."""

    # -- arrays from data and shorthands ---------------------------------------------------------

    def __setitem__(self: Any, name: str, value: Any) -> None:
        """Create an array at ``name`` holding ``value`` (replacing any node there), with
        the default settings (chunks ``"auto"``, zstd), as zarr-python's ``g[name] = data``.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        value : array-like
            The data (its shape and dtype are the array's).

        Raises
        ------
        ReadOnlyError
            If the group is read-only.
        NodeNameError
            If ``name`` is not a valid path.
        MetadataError
            If ``value``'s dtype has no Zarr data type.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g["x"] = np.arange(4)
        >>> g["x"][...].tolist()
        [0, 1, 2, 3]
        """
        self.create_array(name, data=np.asarray(value), overwrite=True)

    def create(self: Any, name: str, **kwargs: Any) -> Array:
        """Create an array at ``name``: zarr-python's other name of :meth:`create_array`.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        **kwargs
            As for :meth:`create_array` (``shape``, ``dtype``, ``data``, ``chunks``, ...).

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.create("x", shape=(2,), dtype="int8")
        <zarr3c.Array '/x' shape=(2,) dtype=int8>
        """
        return self.create_array(name, **kwargs)

    def _filled(self: Any, name: str, shape: Any, fill_value: Any, kwargs: dict[str, Any]
                ) -> Array:
        kwargs.setdefault("dtype", _DEFAULT_DTYPE)
        return self.create_array(name, shape=shape, fill_value=fill_value, **kwargs)

    def zeros(self: Any, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` reading as zeros (its fill value is 0).

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        shape : int or tuple of int
            Its shape.
        **kwargs
            As for :meth:`create_array`; ``dtype`` defaults to float64, as in zarr-python.

        Returns
        -------
        Array
            The new array (nothing but its metadata is stored).

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.zeros(name="z", shape=(2,))[...].tolist()
        [0.0, 0.0]
        """
        return self._filled(name, shape, 0, kwargs)

    def ones(self: Any, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` reading as ones (its fill value is 1).

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        shape : int or tuple of int
            Its shape.
        **kwargs
            As for :meth:`create_array`; ``dtype`` defaults to float64.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.ones(name="o", shape=(2,), dtype="int8")[...].tolist()
        [1, 1]
        """
        return self._filled(name, shape, 1, kwargs)

    def full(self: Any, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` reading as ``fill_value`` everywhere.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        shape : int or tuple of int
            Its shape.
        fill_value : scalar
            Its fill value.
        **kwargs
            As for :meth:`create_array`; ``dtype`` defaults to float64.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array` (a ``fill_value`` the dtype cannot hold: MetadataError).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.full(name="f", shape=(2,), fill_value=7, dtype="int16")[...].tolist()
        [7, 7]
        """
        return self._filled(name, shape, fill_value, kwargs)

    def empty(self: Any, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` without values (it reads as its fill value, default
        0; zarr-python leaves the contents undefined).

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        shape : int or tuple of int
            Its shape.
        **kwargs
            As for :meth:`create_array` (``fill_value`` too); ``dtype`` defaults to float64.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.empty(name="e", shape=(3,), dtype="uint8").shape
        (3,)
        """
        return self._filled(name, shape, kwargs.pop("fill_value", DEFAULT_FILL_VALUE), kwargs)

    def _like(self: Any, name: str, data: Any, fill: Any, kwargs: dict[str, Any]) -> Array:
        # The array takes this group's format: the template's codecs count only if it is
        # the template's too.
        like = like_args(data, self._format.zarr_format)
        del like["zarr_format"]
        merged = merge_like(like, kwargs)
        if fill is not _KEEP:
            merged["fill_value"] = fill
        return self.create_array(name, **merged)

    def empty_like(self: Any, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` like ``data`` (shape, dtype; for a zarr3c array also
        chunks, shards, fill value and codecs), without values.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        data : array-like or Array
            The template.
        **kwargs
            As for :meth:`create_array`; they override what ``data`` gives.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.empty_like(name="e", data=np.ones((2, 3), dtype="int16"))
        <zarr3c.Array '/e' shape=(2, 3) dtype=int16>
        """
        return self._like(name, data, _KEEP, kwargs)

    def zeros_like(self: Any, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` like ``data`` (see :meth:`empty_like`) reading as
        zeros.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        data : array-like or Array
            The template.
        **kwargs
            As for :meth:`create_array`; they override what ``data`` gives.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.zeros_like(name="z", data=np.arange(3))[...].tolist()
        [0, 0, 0]
        """
        return self._like(name, data, kwargs.pop("fill_value", 0), kwargs)

    def ones_like(self: Any, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` like ``data`` (see :meth:`empty_like`) reading as
        ones.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        data : array-like or Array
            The template.
        **kwargs
            As for :meth:`create_array`; they override what ``data`` gives.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.ones_like(name="o", data=np.zeros(2, dtype="uint8"))[...].tolist()
        [1, 1]
        """
        return self._like(name, data, kwargs.pop("fill_value", 1), kwargs)

    def full_like(self: Any, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Create an array at ``name`` like ``data`` (see :meth:`empty_like`) reading as
        ``fill_value`` (default: ``data``'s fill value for a zarr3c array, else 0).

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        data : array-like or Array
            The template.
        **kwargs
            As for :meth:`create_array` (``fill_value`` too); they override what ``data``
            gives.

        Returns
        -------
        Array
            The new array.

        Raises
        ------
        ReadOnlyError, ContainsArrayError, ContainsGroupError, NodeNameError, MetadataError
            As :meth:`create_array`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.full_like(name="f", data=np.zeros(2), fill_value=2.5)[...].tolist()
        [2.5, 2.5]
        """
        return self._like(name, data, kwargs.pop("fill_value", _KEEP), kwargs)

    def require_array(self: Any, name: str, *, shape: Any, dtype: Any = None,
                      exact: bool = False, **kwargs: Any) -> Array:
        """The array at ``name``, created (from ``shape``, ``dtype`` and ``kwargs``) if
        missing; an existing one must have ``shape`` and a compatible dtype.

        Parameters
        ----------
        name : str
            The array's name or path relative to this group.
        shape : int or tuple of int
            Its shape.
        dtype : numpy dtype-like or None, default None
            Its data type (None: float64, as zarr-python).
        exact : bool, default False
            Whether an existing array's dtype must equal ``dtype`` (else numpy must be able
            to cast it to ``dtype`` safely).
        **kwargs
            As for :meth:`create_array`, used only when it is created.

        Returns
        -------
        Array
            The existing or new array.

        Raises
        ------
        ContainsGroupError
            A group is at ``name`` (zarr-python raises TypeError).
        ShapeMismatchError
            The existing array has another shape (zarr-python raises TypeError).
        InvalidTypeError
            The existing array's dtype differs (``exact``) or does not cast safely.
        ReadOnlyError
            If the array is missing and the group is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> a = g.require_array("x", shape=(2,), dtype="int16")
        >>> g.require_array("x", shape=(2,), dtype="int32") == a
        True
        """
        from zarr3c.array.create import normalize_shape

        dtype = np.dtype(_DEFAULT_DTYPE if dtype is None else dtype)
        node = self.get(name)
        if node is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if not isinstance(node, Array):
            raise ContainsGroupError(f"a group exists at {join_path(self.path, name)!r}, "
                                     "not an array")
        shape_t = normalize_shape(shape)
        if node.shape != shape_t:
            raise ShapeMismatchError(
                f"the array at {node.path!r} has shape {node.shape}, not {shape_t}")
        if (node.dtype != dtype) if exact else not np.can_cast(node.dtype, dtype):
            raise InvalidTypeError(
                f"the array at {node.path!r} has dtype {node.dtype}, incompatible with "
                f"{dtype} ({'exact' if exact else 'safe cast'})")
        return node

    def require_groups(self: Any, *names: str) -> tuple[Group, ...]:
        """The groups at ``names``, each created if missing (see :meth:`require_group`).

        Parameters
        ----------
        *names : str
            Group names or paths relative to this group.

        Returns
        -------
        tuple of Group
            In the order of ``names``.

        Raises
        ------
        ContainsArrayError
            An array is at one of ``names`` (groups before it were created).
        ReadOnlyError
            A group is missing and this group is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g.require_groups("a", "b/c")
        (<zarr3c.Group '/a'>, <zarr3c.Group '/b/c'>)
        """
        return tuple(self.require_group(name) for name in names)

    # -- typed lookups and listings --------------------------------------------------------------

    def get_array(self: Any, path: str) -> Array:
        """The array at ``path`` (relative to this group).

        Parameters
        ----------
        path : str
            A member name or relative path.

        Returns
        -------
        Array
            The array.

        Raises
        ------
        ArrayNotFoundError
            Nothing is at ``path``.
        ContainsGroupError
            A group is at ``path``.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("x", shape=(2,), dtype="int8")
        >>> g.get_array("x").shape
        (2,)
        """
        node = self.get(path)
        if node is None:
            raise ArrayNotFoundError(f"no array {path!r} in group {self.name!r}")
        if not isinstance(node, Array):
            raise ContainsGroupError(f"{node.name!r} is a group, not an array")
        return node

    def get_group(self: Any, path: str) -> Group:
        """The group at ``path`` (relative to this group).

        Parameters
        ----------
        path : str
            A member name or relative path.

        Returns
        -------
        Group
            The group.

        Raises
        ------
        GroupNotFoundError
            Nothing is at ``path``.
        ContainsArrayError
            An array is at ``path``.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_group("sub")
        >>> g.get_group("sub")
        <zarr3c.Group '/sub'>
        """
        node = self.get(path)
        if node is None:
            raise GroupNotFoundError(f"no group {path!r} in group {self.name!r}")
        if isinstance(node, Array):
            raise ContainsArrayError(f"{node.name!r} is an array, not a group")
        return node  # type: ignore[no-any-return]

    def array_values(self: Any) -> list[Array]:
        """The child arrays, sorted by name.

        Returns
        -------
        list of Array

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
        >>> g.array_values()
        [<zarr3c.Array '/x' shape=(2,) dtype=int8>]
        """
        return [a for _, a in self.arrays()]

    def group_values(self: Any) -> list[Group]:
        """The child groups, sorted by name.

        Returns
        -------
        list of Group

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
        >>> g.group_values()
        [<zarr3c.Group '/sub'>]
        """
        return [s for _, s in self.groups()]

    def nmembers(self: Any, max_depth: int | None = 0) -> int:
        """The number of members: children, and with ``max_depth`` deeper descendants (as
        :meth:`members` counts them, unreadable ones included).

        Parameters
        ----------
        max_depth : int or None, default 0
            0: children only; n: also n levels below them; None: every descendant.

        Returns
        -------
        int

        Raises
        ------
        StoreError
            If listing or reading the store fails.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("sub/x", shape=(2,), dtype="int8")
        >>> g.nmembers(), g.nmembers(max_depth=None)
        (1, 2)
        """
        if max_depth == 0:
            return len(self._child_names())
        return len(self.members(max_depth))

    # -- summaries -------------------------------------------------------------------------------

    def _group_info(self: Any, counts: tuple[int, int, int] | None) -> GroupInfo:
        members, arrays, groups = counts if counts is not None else (None, None, None)
        return GroupInfo(name=self.name, zarr_format=self.zarr_format,
                         read_only=self.read_only, store_type=type(self._store).__name__,
                         count_members=members, count_arrays=arrays, count_groups=groups)

    def _consolidated_counts(self: Any) -> tuple[int, int, int] | None:
        """(members, arrays, groups) at every depth from the consolidated view; None
        without one."""
        view = self._consolidated
        if view is None:
            return None
        members = arrays = 0
        pending = [view.rel]
        while pending:
            rel = pending.pop()
            for name in view.index.child_names(rel):
                child = f"{rel}/{name}" if rel else name
                members += 1
                pending.append(child)
                try:
                    metadata = view.index.get(child)
                except UNREADABLE:
                    continue
                arrays += metadata is not None and metadata.node_type == "array"
        groups = members - arrays
        return members, arrays, groups

    @property
    def info(self: Any) -> GroupInfo:
        """What is known of the group without reading the store, as zarr-python's
        ``Group.info``: member counts only where it was opened from consolidated
        metadata (:meth:`info_complete` counts them from the store).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://", "a")
        >>> g.info
        Name        : /a
        Type        : Group
        Zarr format : 3
        Read-only   : False
        Store type  : MemoryStore
        """
        return self._group_info(self._consolidated_counts())

    def info_complete(self: Any) -> GroupInfo:
        """:attr:`info` with the members counted at every depth: all, arrays, groups (an
        unreadable member counts as a member only).

        Returns
        -------
        GroupInfo
            The summary; its repr is the text.

        Raises
        ------
        StoreError
            If listing or reading the store fails.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("sub/x", shape=(2,), dtype="int8")
        >>> print(g.info_complete())
        Name        : /
        Type        : Group
        Zarr format : 3
        Read-only   : False
        Store type  : MemoryStore
        No. members : 2
        No. arrays  : 1
        No. groups  : 1
        """
        from zarr3c.group import Group

        members = self.members(max_depth=None)
        arrays = sum(1 for _, m in members if isinstance(m, Array))
        groups = sum(1 for _, m in members if isinstance(m, Group))
        return self._group_info((len(members), arrays, groups))

    # -- moving and bulk creation ----------------------------------------------------------------

    def move(self: Any, source: str, dest: str) -> None:
        """Move the member at ``source`` (and everything below it) to ``dest``, both
        relative to this group; missing groups above ``dest`` are created.

        zarr-python 3 raises NotImplementedError here; this is zarr-python 2's ``move``.
        The keys are copied, then the source erased: an interrupted move leaves both (a
        rerun after erasing ``dest`` completes it).

        Parameters
        ----------
        source : str
            The member's name or relative path.
        dest : str
            Its new relative path.

        Raises
        ------
        MemberNotFoundError
            Nothing is at ``source`` (a KeyError).
        ContainsArrayError, ContainsGroupError
            A node is already at ``dest``, or an ancestor of ``dest`` is an array.
        NodeNameError
            A path is not valid, or ``dest`` lies below ``source``.
        ReadOnlyError
            If the group is read-only.
        UnsupportedFeatureError
            The group was opened from consolidated metadata (reopen it without, move, then
            consolidate again), or its layout is draft-2022 / zarr2-v3.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> g["a/x"] = [1, 2]
        >>> g.move("a", "b/c")
        >>> sorted(g.members(max_depth=None))[0][0], g["b/c/x"][...].tolist(), "a" in g
        ('b', [1, 2], False)
        """
        from zarr3c.group import MemberNotFoundError

        self._check_writable()
        if self._consolidated is not None:
            raise UnsupportedFeatureError(
                f"move in group {self.name!r} opened from consolidated metadata: reopen it "
                "with use_consolidated=False, move, then consolidate_metadata() again")
        fmt = self._format
        if not isinstance(fmt, V3Format | V2Format):
            raise UnsupportedFeatureError(f"move in the {fmt.zarr_format!r} layout")
        src, dst = join_path(self._path, source), join_path(self._path, dest)
        if source not in self:
            raise MemberNotFoundError(f"no member {source!r} in group {self.name!r}")
        if dst == src or dst.startswith(src + "/"):
            raise NodeNameError(f"cannot move {src!r} to {dst!r}: inside itself")
        prepare_node(self._store, fmt, dst, overwrite=False)
        # Both layouts keep all of a (non-root) node's keys below its path.
        store, prefix = self._store, src + "/"
        for key in sorted(store.list_prefix(prefix)):
            value = store.get(key)
            if value is not None:
                store.set(dst + "/" + key[len(prefix):], value)
        fmt.erase_node(store, src)

    def create_hierarchy(self: Any, nodes: Mapping[str, Any], *, overwrite: bool = False
                         ) -> Iterator[tuple[str, Array | Group]]:
        """Write the metadata documents ``nodes`` (path -> array or group metadata, paths
        relative to this group) and return the nodes, parents first; missing groups between
        are created.

        Nothing is written before every path and document is checked; the nodes are then
        written one by one (a failure midway leaves those before it).

        Parameters
        ----------
        nodes : dict of str to ArrayMetadata or GroupMetadata
            The documents, in this group's layout (``node.metadata`` of another node, or
            :func:`~zarr3c.array.build_array_metadata`'s result for Zarr v3).
        overwrite : bool, default False
            Replace nodes already at those paths.

        Returns
        -------
        iterator of (str, Array or Group)
            The relative path and the node written there, sorted by path (all are written
            before it is returned).

        Raises
        ------
        NodeNameError
            A path is empty (this group itself) or invalid.
        InvalidTypeError
            A value is not a metadata document of this group's layout.
        ContainsArrayError, ContainsGroupError
            A node is already at a path and ``overwrite`` is False.
        ReadOnlyError
            If the group is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> from zarr3c.array import build_array_metadata
        >>> g = zarr3c.create_group("memory://")
        >>> nodes = {"a/x": build_array_metadata(shape=(2,), dtype="int8"),
        ...          "b": g.metadata}
        >>> [path for path, _ in g.create_hierarchy(nodes)]
        ['a/x', 'b']
        >>> g.tree()
        '/\\n├── a\\n│   └── x (2,) int8\\n└── b'
        """
        from zarr3c.group import Group

        self._check_writable()
        fmt = self._format
        store = self._store
        checked: list[tuple[str, str, Any]] = []
        for rel, metadata in nodes.items():
            rel_n = normalize_path(rel)
            if rel_n == "":
                raise NodeNameError("create_hierarchy: the path '' is this group itself")
            if (getattr(metadata, "node_type", None) not in ("array", "group")
                    or getattr(metadata, "zarr_format", None) != fmt.zarr_format):
                raise InvalidTypeError(
                    f"create_hierarchy: {rel!r} must map to array or group metadata of the "
                    f"{fmt.zarr_format!r} layout, got {type(metadata).__name__}")
            path = join_path(self._path, rel_n)
            if metadata.node_type == "array":  # (checks the codec chain before any write)
                Array(store, path, metadata, fmt=fmt)
            checked.append((rel_n, path, metadata))
        if not overwrite:
            for _, path, _ in checked:
                if fmt.node_exists(store, path):
                    md = fmt.read_node(store, path)
                    if md is not None and md.node_type == "array":
                        raise ContainsArrayError(f"an array already exists at path {path!r}")
                    raise ContainsGroupError(f"a group already exists at path {path!r}")
        written: list[tuple[str, Array | Group]] = []
        for rel, path, metadata in sorted(checked, key=lambda c: c[0]):
            prepare_node(store, fmt, path, overwrite=overwrite)
            fmt.write_node(store, path, metadata)
            node: Array | Group
            if metadata.node_type == "array":
                node = Array(store, path, metadata, fmt=fmt)
            else:
                node = Group(store, path, metadata, fmt=fmt)
            written.append((rel, node))
        return iter(written)

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def from_store(cls, store: Any, *, attributes: dict[str, Any] | None = None,
                   zarr_format: Any = 3, overwrite: bool = False) -> Group:
        """Create a group at the root of ``store``, as zarr-python's ``Group.from_store``.

        Parameters
        ----------
        store : Store, str, os.PathLike or dict
            A store-like, as :func:`zarr3c.create_group` takes.
        attributes : dict or None, default None
            User attributes.
        zarr_format : {3, 2, "draft-2022", "zarr2-v3"}, default 3
            The hierarchy layout.
        overwrite : bool, default False
            Replace a node already at the root.

        Returns
        -------
        Group
            The new root group.

        Raises
        ------
        ContainsArrayError, ContainsGroupError
            A node is at the root and ``overwrite`` is False.
        ReadOnlyError
            The store is read-only.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.Group.from_store("memory://", attributes={"a": 1}).attrs.asdict()
        {'a': 1}
        """
        from zarr3c.api import create_group

        return create_group(store, attributes=attributes, zarr_format=zarr_format,
                            overwrite=overwrite)

    @classmethod
    def open(cls, store: Any, zarr_format: Any = 3) -> Group:
        """Open the existing group at the root of ``store`` (read-write unless the store is
        read-only), as zarr-python's ``Group.open``.

        Parameters
        ----------
        store : Store, str, os.PathLike or dict
            A store-like, as :func:`zarr3c.open_group` takes.
        zarr_format : {3, 2, "draft-2022", "zarr2-v3", None}, default 3
            The layout to open (None: detected).

        Returns
        -------
        Group
            The root group.

        Raises
        ------
        GroupNotFoundError
            No group at the root.
        ContainsArrayError
            An array is there.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> zarr3c.Group.open(g.store) == g
        True
        """
        from zarr3c.api import open_group

        mode = "r" if getattr(store, "read_only", False) else "r+"
        return open_group(store, mode=mode, zarr_format=zarr_format)


#: ``_like``'s marker: keep the fill value the template gives.
_KEEP = object()
