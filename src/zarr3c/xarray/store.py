"""Opening a Zarr group for xarray, and the data store xarray's decoding reads it through.

:func:`open_zarr_group` resolves what ``xarray.open_dataset`` was given (a path, a URL, a
zarr3c store or group) and the arguments xarray's zarr engine takes (``group``,
``consolidated``, ``storage_options``, ``zarr_format``, ``mode``) into a zarr3c Group.
:class:`Zarr3cDataStore` presents that group as xarray's ``AbstractDataStore``: its
still-encoded variables (read lazily: opening reads metadata only), its attributes and
its dimensions; xarray's own ``StoreBackendEntrypoint`` then applies CF decoding.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from xarray.backends.common import AbstractDataStore
from xarray.core.utils import FrozenDict

from zarr3c.api import open_group
from zarr3c.array import Array
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    InvalidArgumentError,
    MemberNotFoundError,
    MetadataError,
)
from zarr3c.group import Group
from zarr3c.node import UnreadableNode
from zarr3c.paths import normalize_path
from zarr3c.stores import Store, is_url, make_store
from zarr3c.xarray.variables import array_dimensions, open_variable

__all__ = ["OpenedGroup", "Zarr3cDataStore", "iter_groups", "open_zarr_group"]

#: The modes a dataset is opened in: read-only, or read/write where it exists (xarray's
#: zarr engine takes a mode; zarr3c's reader never creates anything).
READ_MODES = ("r", "r+")


class OpenedGroup(NamedTuple):
    """A group opened for xarray, and whether its store is ours to close."""

    group: Group
    owns_store: bool


def _store_like(filename_or_obj: Any) -> Any:
    """A path as zarr3c opens it: ``~`` expanded, as xarray expands paths."""
    if isinstance(filename_or_obj, os.PathLike):
        filename_or_obj = os.fspath(filename_or_obj)
    if isinstance(filename_or_obj, str) and not is_url(filename_or_obj):
        return os.path.expanduser(filename_or_obj)
    return filename_or_obj


def _subgroup(root: Group, path: str) -> Group:
    if not path:
        return root
    try:
        node = root[path]
    except MemberNotFoundError as exc:
        raise GroupNotFoundError(f"no group {path!r}: {exc}") from None
    if not isinstance(node, Group):
        raise ContainsArrayError(f"{path!r} is an array, not a group: open its parent group "
                                 "and select the variable")
    return node


def open_zarr_group(filename_or_obj: Any, *, group: str | None = None,
                    consolidated: bool | None = None, storage_options: dict[str, Any] | None = None,
                    zarr_format: Any = None, mode: str = "r") -> OpenedGroup:
    """Open the group a dataset is read from, as xarray's zarr engine does.

    Parameters
    ----------
    filename_or_obj : str, os.PathLike, zarr3c.Store or zarr3c.Group
        A local path, a URL zarr3c opens (``s3://``, ``file://``, any fsspec URL, ...), a
        store, or a group (then ``group`` is relative to it).
    group : str or None, default None
        The path of the group in the store (None: the root).
    consolidated : bool or None, default None
        True: read members from the consolidated metadata of the hierarchy's root (Zarr
        v3 ``zarr.json``, Zarr v2 ``.zmetadata``), which must exist.  None: use it where
        it exists.  False: ignore it and read each member's document.
    storage_options : dict or None, default None
        Options for the filesystem of a URL (credentials, endpoint).
    zarr_format : {None, 2, 3}, default None
        None: detected (v3 first, then v2); otherwise only that format is opened.
    mode : {"r", "r+"}, default "r"
        Read-only, or read/write; either way the group must exist.

    Returns
    -------
    OpenedGroup
        The group, and whether its store was made here (and is closed with the dataset).

    Raises
    ------
    InvalidArgumentError
        If ``mode`` is not one of the above.
    GroupNotFoundError
        If there is no Zarr group at the path (a ``FileNotFoundError``), or no group
        ``group`` in it.
    ContainsArrayError
        If ``group`` (or the path) is an array, not a group.
    MetadataError
        If ``consolidated`` is True and the hierarchy has no consolidated metadata, or a
        metadata document is invalid (the message names the key).
    StoreError
        If the store cannot be read.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> _ = zarr3c.create_group(store).create_group("obs")
    >>> opened = open_zarr_group(store, group="obs")
    >>> opened.group, opened.owns_store
    (<zarr3c.Group '/obs'>, False)
    """
    if mode not in READ_MODES:
        raise InvalidArgumentError(
            f"mode must be one of {READ_MODES} to open a dataset, got {mode!r}")
    read_only = mode == "r"
    if isinstance(filename_or_obj, Group):
        return OpenedGroup(_subgroup(filename_or_obj, normalize_path(group)), owns_store=False)
    owns_store = not isinstance(filename_or_obj, Store)
    store = make_store(_store_like(filename_or_obj), read_only=read_only,
                       storage_options=storage_options)
    path = normalize_path(group)
    try:
        if consolidated is False or not path:
            found = open_group(store, path, mode=mode, use_consolidated=consolidated,
                               zarr_format=zarr_format)
        else:
            # consolidated metadata lives at the hierarchy's root, as xarray reads it
            try:
                root = open_group(store, mode=mode, use_consolidated=consolidated,
                                  zarr_format=zarr_format)
            except GroupNotFoundError:
                if consolidated:
                    raise
                root = None
            if root is None:
                found = open_group(store, path, mode=mode, zarr_format=zarr_format)
            else:
                found = _subgroup(root, path)
    except BaseException:
        if owns_store:
            store.close()
        raise
    return OpenedGroup(found, owns_store)


def iter_groups(group: Group) -> Iterator[Group]:
    """``group`` and every group below it, each parent before its children.

    Parameters
    ----------
    group : zarr3c.Group
        The top group.

    Yields
    ------
    zarr3c.Group
        The groups, by path.

    Raises
    ------
    StoreError
        If listing the store fails.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> _ = g.create_group("a/b")
    >>> [x.name for x in iter_groups(g)]
    ['/', '/a', '/a/b']
    """
    yield group
    for _, child in group.groups():
        yield from iter_groups(child)


class Zarr3cDataStore(AbstractDataStore):
    """A zarr3c Group as xarray's ``AbstractDataStore``: encoded variables, attributes,
    dimensions, for xarray's ``StoreBackendEntrypoint`` to decode.

    Parameters
    ----------
    group : zarr3c.Group
        The group whose arrays are the dataset's variables.
    zarr_fill_value_as_mask : bool or None, default None
        Whether the arrays' ``fill_value`` is the variables' ``_FillValue``; None: as
        xarray's zarr engine decides, True for Zarr v2, False for Zarr v3 (which keeps
        ``_FillValue`` as an attribute).
    owns_store : bool, default False
        Close the group's store with :meth:`close`.
    drop_variables : iterable of str, default ()
        Arrays left out, never opened: a variable xarray could not be given (no dimension
        names, an undecodable ``_FillValue``, a codec zarr3c lacks) can be dropped.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://", attributes={"title": "demo"})
    >>> _ = g.create_array("t", shape=(3,), dtype="int8", dimension_names=("time",))
    >>> ds = Zarr3cDataStore(g)
    >>> ds.get_attrs(), dict(ds.get_dimensions())
    ({'title': 'demo'}, {'time': 3})
    """

    __slots__ = ("_drop", "_members", "_owns_store", "_zarr_fill_value_as_mask", "zarr_group")

    def __init__(self, group: Group, *, zarr_fill_value_as_mask: bool | None = None,
                 owns_store: bool = False, drop_variables: Iterable[str] = ()):
        self.zarr_group = group
        self._drop = frozenset(drop_variables)
        if zarr_fill_value_as_mask is None:
            zarr_fill_value_as_mask = group.zarr_format != 3
        self._zarr_fill_value_as_mask = zarr_fill_value_as_mask
        self._owns_store = owns_store
        self._members: tuple[tuple[str, Array], ...] | None = None

    def _arrays(self) -> tuple[tuple[str, Array], ...]:
        # Listed once: the variables and the dimensions are read from the same members.
        if self._members is None:
            arrays = []
            for name, node in self.zarr_group.members():
                if name in self._drop:
                    continue
                if isinstance(node, UnreadableNode):
                    # a variable xarray cannot be given; leaving it out would hide it
                    raise node.error
                if isinstance(node, Array):
                    arrays.append((name, node))
            self._members = tuple(arrays)
        return self._members

    def get_variables(self) -> Mapping[str, Any]:
        """The group's arrays as still-encoded variables, by name.

        Returns
        -------
        FrozenDict of str to xarray.Variable

        Raises
        ------
        MissingDimensionsError
            If an array names no dimensions (the message names it).
        MetadataError
            If a member's metadata, or a ``_FillValue``, cannot be read (the message names
            the key or variable).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("t", shape=(3,), dtype="int8", dimension_names=("time",))
        >>> Zarr3cDataStore(g).get_variables()["t"].dims
        ('time',)
        """
        mask = self._zarr_fill_value_as_mask
        return FrozenDict((name, open_variable(array, name, zarr_fill_value_as_mask=mask))
                          for name, array in self._arrays())

    def get_attrs(self) -> dict[str, Any]:
        """The group's attributes, less NCZarr's bookkeeping (``_nc*``) ones.

        Returns
        -------
        dict

        Raises
        ------
        None

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://", attributes={"a": 1, "_NCProperties": "x"})
        >>> Zarr3cDataStore(g).get_attrs()
        {'a': 1}
        """
        return {k: v for k, v in self.zarr_group.attrs.items()
                if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> Mapping[str, int]:
        """The dimensions of the group's arrays and their lengths.

        Returns
        -------
        FrozenDict of str to int

        Raises
        ------
        MissingDimensionsError
            If an array names no dimensions.
        MetadataError
            If two arrays give one dimension different lengths (a ``ValueError``).

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_array("a", shape=(3, 2), dtype="int8", dimension_names=("t", "x"))
        >>> dict(Zarr3cDataStore(g).get_dimensions())
        {'t': 3, 'x': 2}
        """
        dims: dict[str, int] = {}
        for name, array in self._arrays():
            names, _ = array_dimensions(array, name)
            for dim, size in zip(names, array.shape, strict=True):
                if dims.setdefault(dim, size) != size:
                    raise MetadataError(
                        f"variable {name!r}: dimension {dim!r} has length {size} here and "
                        f"{dims[dim]} in another variable")
        return FrozenDict(dims)

    def close(self) -> None:
        """Close the store where it was opened for this dataset (a user's store is left
        open).

        Raises
        ------
        StoreError
            If closing the store fails.

        Examples
        --------
        >>> import zarr3c
        >>> Zarr3cDataStore(zarr3c.create_group("memory://")).close()
        """
        if self._owns_store:
            self.zarr_group.store.close()
