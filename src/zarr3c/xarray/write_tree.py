"""Write an xarray DataTree to Zarr with zarr3c: what ``DataTree.to_zarr`` writes.

Each node of the tree is a group at its path below the tree's root group, written as
:func:`zarr3c.xarray.writer.to_zarr` writes a Dataset: the root node with the coordinates
it holds, every other node with only its own (xarray's ``write_inherited_coords=False``:
``open_datatree`` gives the inherited ones back).  Nodes are written parents first, in
xarray's order (``DataTree.subtree_with_keys``); the consolidated metadata, where written,
is written once, after the last node.  As in xarray, ``encoding`` is keyed by node path
(``"/"``, ``"/a/b"``) and ``append_dim`` is refused; unlike xarray, ``group`` may place
the tree below a group of the store.

>>> import numpy as np, xarray as xr, zarr3c
>>> tree = xr.DataTree.from_dict({"/": xr.Dataset(coords={"x": [1, 2]}),
...                               "/obs": xr.Dataset({"t": ("x", [10.5, 11.0])})})
>>> store = zarr3c.MemoryStore()
>>> root = tree_to_zarr(tree, store)
>>> root["obs/t"][...], xr.open_datatree(store, engine="zarr3c")["obs"]["x"].values
(array([10.5, 11. ]), array([1, 2]))
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import xarray as xr

from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedFeatureError,
    ZarrError,
)

__all__ = ["tree_to_zarr"]

#: The mode each node after the root is written in, once the root's group is open: a new
#: tree's groups are fresh (the root's "w" removed what was below it), so nothing there is
#: overwritten and missing groups are created.
_NODE_MODE = {"w": "a", "w-": "a"}


def tree_to_zarr(
    tree: xr.DataTree,
    store: Any = None,
    *,
    mode: str | None = None,
    group: str | None = None,
    zarr_format: int | None = None,
    encoding: Mapping[Any, Mapping[Any, Any]] | None = None,
    consolidated: bool | None = None,
    append_dim: Hashable | None = None,
    region: Mapping[Hashable, Any] | str | None = None,
    compute: bool = True,
    safe_chunks: bool = True,
    storage_options: dict[str, Any] | None = None,
    write_inherited_coords: bool = False,
) -> Any:
    """Write a DataTree to a Zarr store as ``DataTree.to_zarr`` does, through zarr3c.

    Parameters
    ----------
    tree : xarray.DataTree
        What to write: every node a group at its path.
    store, mode, zarr_format, consolidated, region, compute, safe_chunks, storage_options
        As for :func:`zarr3c.xarray.to_zarr` (``mode`` None: ``"r+"`` with ``region``,
        else ``"w-"``), applied to every node.
    group : str or None, default None
        The group the tree's root is written as (None: the store's root).
    encoding : dict or None, default None
        Per node path (``"/"``, ``"/a/b"``), the encoding of its variables, as for
        :func:`zarr3c.xarray.to_zarr`.
    append_dim : None
        Refused, as by xarray: append to each node's Dataset instead.
    write_inherited_coords : bool, default False
        Write the coordinates a node inherits from its parents into its own group too.

    Returns
    -------
    zarr3c.Group or dask.delayed.Delayed
        The tree's root group, or with ``compute=False`` the lazy write of every node's
        dask values (which gives the group when computed).

    Raises
    ------
    InvalidArgumentError
        For encoding keyed by a path that is not a node of the tree, and as
        :func:`zarr3c.xarray.to_zarr` raises for a node (its message naming the node).
    UnsupportedFeatureError
        For ``append_dim``.
    ZarrError
        As :func:`zarr3c.xarray.to_zarr` raises for a node.

    Examples
    --------
    >>> import numpy as np, xarray as xr, zarr3c
    >>> tree = xr.DataTree.from_dict({"/a": xr.Dataset({"v": ("x", np.arange(3))}),
    ...                               "/b": xr.Dataset(attrs={"note": "empty"})})
    >>> root = tree_to_zarr(tree, zarr3c.MemoryStore(), zarr_format=2)
    >>> sorted(root.group_keys()), root["a/v"].attrs["_ARRAY_DIMENSIONS"]
    (['a', 'b'], ['x'])
    """
    from zarr3c.xarray import writer

    if not isinstance(tree, xr.DataTree):
        raise InvalidTypeError(f"tree_to_zarr needs an xarray DataTree, got "
                               f"{type(tree).__name__}")
    if append_dim is not None:
        raise UnsupportedFeatureError(
            "to_zarr: append_dim is not supported for a DataTree (as in xarray); append to "
            "each node's Dataset with to_zarr(node.to_dataset(), store, group=...)")
    encoding = dict(encoding or {})
    unknown = sorted(set(encoding) - set(tree.groups))
    if unknown:
        raise InvalidArgumentError(f"to_zarr: encoding given for {unknown}, which are not "
                                   f"nodes of the tree {list(tree.groups)}")
    settings = writer.check_settings(mode, None, region, consolidated)
    root = writer.open_target(store, group, settings.mode, zarr_format, consolidated,
                              storage_options)
    node_mode = _NODE_MODE.get(settings.mode, settings.mode)
    writes = []
    for rel_path, node in tree.subtree_with_keys:
        at_root = node is tree
        # (a region write finds its region in the index coordinates a node inherits, and
        # writes none of them: nodes inherit index coordinates only)
        ds = node.to_dataset(inherit=write_inherited_coords or at_root or region is not None)
        try:
            node_region = _node_region(tree, root, node, ds, region, node_mode)
            written = writer.to_zarr(
                ds, root, mode=node_mode, group=None if at_root else rel_path,
                encoding=encoding.get(node.path), consolidated=False, region=node_region,
                compute=compute, safe_chunks=safe_chunks)
        except ZarrError as exc:
            raise writer.naming(exc, f"node {node.path!r}") from exc
        if not compute:
            writes.append(written)
    if settings.consolidate:
        import zarr3c

        zarr3c.consolidate_metadata(root.store, zarr_format=int(root.metadata.zarr_format))
    if compute:
        return root
    import dask

    from zarr3c.xarray.write_tasks import finished

    return dask.delayed(finished)(writes, root)


def _node_region(tree: xr.DataTree, root: Any, node: xr.DataTree, ds: xr.Dataset,
                 region: Any, mode: str) -> Any:
    """``region`` for one node, its ``"auto"`` dimensions found in the stored coordinate of
    the node that holds it (the node itself, or the ancestor it inherits it from)."""
    if region is None or mode not in ("r+", "a"):
        return region  # (to_zarr refuses "auto" in the other modes)
    if isinstance(region, str) and region == "auto":
        region = dict.fromkeys(ds.dims, "auto")
    if not isinstance(region, Mapping):
        return region
    from zarr3c.xarray.write_existing import auto_region

    out = dict(region)
    for dim, sl in region.items():
        if not (isinstance(sl, str) and sl == "auto") or dim not in ds.variables:
            continue
        owner = node
        while (owner is not tree and owner.parent is not None
               and dim not in owner.to_dataset(inherit=False).variables):
            owner = owner.parent
        where = owner.relative_to(tree)
        out[dim] = auto_region(root if where in ("", ".") else root[where], ds, dim)
    return out
