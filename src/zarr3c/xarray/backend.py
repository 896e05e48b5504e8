"""xarray's ``engine="zarr3c"``: Zarr v2 and v3 stores opened as Datasets and DataTrees.

The entry point is registered as ``zarr3c`` in the ``xarray.backends`` group
(<https://docs.xarray.dev/en/stable/internals/how-to-add-new-backend.html>), so with zarr3c
installed::

    ds = xr.open_dataset("data.zarr", engine="zarr3c")

It takes the arguments of xarray's own zarr engine and gives the same Dataset: the store
is opened through :func:`~zarr3c.xarray.store.open_zarr_group`, its arrays become encoded
variables (:mod:`zarr3c.xarray.variables`), and xarray's ``StoreBackendEntrypoint``
applies xarray's CF decoding (masking and scaling, times, timedeltas, strings,
coordinates).  Opening reads metadata only; the data is read, chunk by chunk, when a
selection is loaded (:class:`~zarr3c.xarray.backend_array.Zarr3cBackendArray`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from typing import Any

from xarray import Dataset, DataTree
from xarray.backends import BackendEntrypoint
from xarray.backends.store import StoreBackendEntrypoint

from zarr3c.group import Group
from zarr3c.stores import Store, is_url
from zarr3c.xarray.store import Zarr3cDataStore, iter_groups, open_zarr_group

try:  # closes every node's files if building the tree fails (xarray >= 2024.10)
    from xarray.backends.common import datatree_from_dict_with_io_cleanup as _tree_helper
except ImportError:  # pragma: no cover - a later xarray without the helper
    _tree_helper = None  # type: ignore[assignment]


def _tree_from_dict(groups: dict[str, Dataset]) -> DataTree:
    if _tree_helper is not None:
        return _tree_helper(groups)  # type: ignore[no-any-return]
    return DataTree.from_dict(groups)  # pragma: no cover

__all__ = ["Zarr3cBackendEntrypoint"]

#: Keys at the root of a Zarr hierarchy, by which a directory without the ``.zarr``
#: suffix is recognized.
_ROOT_DOCUMENTS = ("zarr.json", ".zgroup", ".zmetadata")


def _dropped(drop_variables: str | Iterable[str] | None) -> frozenset[str]:
    """xarray's ``drop_variables`` as a set of names (one name may be given as a str)."""
    if drop_variables is None:
        return frozenset()
    if isinstance(drop_variables, str):
        return frozenset((drop_variables,))
    return frozenset(drop_variables)


def _decode(store: Zarr3cDataStore, decoders: dict[str, Any]) -> Dataset:
    try:
        return StoreBackendEntrypoint().open_dataset(store, **decoders)
    except BaseException:
        store.close()
        raise


class Zarr3cBackendEntrypoint(BackendEntrypoint):
    """xarray's backend for Zarr v2 and v3 stores read by zarr3c (``engine="zarr3c"``).

    Takes the arguments of xarray's ``engine="zarr"`` and returns the same Dataset;
    see :meth:`open_dataset`.  Registered as the ``xarray.backends`` entry point
    ``zarr3c``; the class itself may also be passed as ``engine``.

    Examples
    --------
    >>> import xarray as xr, zarr3c
    >>> from zarr3c.xarray import Zarr3cBackendEntrypoint
    >>> store = zarr3c.MemoryStore()
    >>> g = zarr3c.create_group(store, attributes={"title": "demo"})
    >>> t = g.create_array("t", shape=(3,), dtype="int64", dimension_names=("t",))
    >>> t[...] = [10, 20, 30]
    >>> ds = xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)
    >>> ds.attrs["title"], ds["t"].values.tolist()
    ('demo', [10, 20, 30])
    """

    description = "Open Zarr v2 and v3 stores (.zarr) with zarr3c in xarray"
    supports_groups = True
    # Named here, not detected by xarray, because xarray detects them only for engines it
    # finds through entry points, not for this class passed as ``engine``.
    open_dataset_parameters = (
        "filename_or_obj", "mask_and_scale", "decode_times", "concat_characters",
        "decode_coords", "drop_variables", "use_cftime", "decode_timedelta", "group", "mode",
        "consolidated", "storage_options", "zarr_format", "use_zarr_fill_value_as_mask",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """Whether ``filename_or_obj`` looks like a Zarr store this engine opens.

        Parameters
        ----------
        filename_or_obj : object
            What was passed to ``xarray.open_dataset``.

        Returns
        -------
        bool
            True for a zarr3c store or group, a path or URL ending in ``.zarr``, and a
            local directory holding a Zarr hierarchy (``zarr.json``, ``.zgroup`` or
            ``.zmetadata``).

        Raises
        ------
        None
            Anything else is answered False.

        Examples
        --------
        >>> import zarr3c
        >>> engine = Zarr3cBackendEntrypoint()
        >>> engine.guess_can_open("data.zarr/"), engine.guess_can_open("data.nc")
        (True, False)
        >>> engine.guess_can_open(zarr3c.MemoryStore())
        True
        """
        if isinstance(filename_or_obj, Store | Group):
            return True
        if not isinstance(filename_or_obj, str | os.PathLike):
            return False
        try:
            text = os.fspath(filename_or_obj)
        except TypeError:
            return False
        if not isinstance(text, str):
            return False
        if os.path.splitext(text.rstrip("/"))[1] == ".zarr":
            return True
        if is_url(text):
            return False
        return any(os.path.isfile(os.path.join(text, key)) for key in _ROOT_DOCUMENTS)

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: Any = True,
        decode_times: Any = True,
        concat_characters: Any = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: Any = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: Any = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> Dataset:
        """Open the group of a Zarr store as a Dataset, lazily.

        Called by ``xarray.open_dataset(filename_or_obj, engine="zarr3c", ...)``, which
        also takes ``chunks=`` (``{}``: dask arrays of the ``preferred_chunks`` in each
        variable's encoding, the Zarr chunks) and ``decode_cf``.

        Parameters
        ----------
        filename_or_obj : str, os.PathLike, zarr3c.Store or zarr3c.Group
            A local path, a URL zarr3c opens (``s3://``, ``gs://``, ``file://``, any
            fsspec URL), a store (``LocalStore``, ``ZipStore``, ``MemoryStore``,
            ``FsspecStore``, ``ObjectStore``) or a group.
        mask_and_scale, decode_times, concat_characters, decode_coords, drop_variables, \
use_cftime, decode_timedelta
            xarray's CF decoding options, as for ``xarray.open_dataset``; the decoding is
            xarray's own.  Arrays named in ``drop_variables`` are not even opened, so a
            variable that cannot be read can be dropped.
        group : str or None, default None
            The group to open (None: the root).
        mode : {"r", "r+"}, default "r"
            Open the store read-only or read/write; the group must exist.
        consolidated : bool or None, default None
            True: use the consolidated metadata at the hierarchy's root, which must exist;
            None: where it exists; False: read each array's own metadata.
        storage_options : dict or None, default None
            Options for the filesystem of a URL (credentials, ``endpoint_url``, ...).
        zarr_format : {None, 2, 3}, default None
            Open only that format (None: detected, v3 first).
        use_zarr_fill_value_as_mask : bool or None, default None
            Whether the arrays' Zarr ``fill_value`` marks missing values (becomes
            ``_FillValue``).  None: as xarray decides, yes for Zarr v2, no for Zarr v3
            (whose ``_FillValue`` is an attribute, and ``fill_value`` goes to
            ``encoding["fill_value"]``).

        Returns
        -------
        xarray.Dataset
            The decoded dataset, its data not yet read.

        Raises
        ------
        GroupNotFoundError
            If the path holds no Zarr group (a ``FileNotFoundError``), or has no group
            ``group``.
        ContainsArrayError
            If the path (or ``group``) is an array, not a group.
        MissingDimensionsError
            If an array names no dimensions (no ``dimension_names`` in Zarr v3, no
            ``_ARRAY_DIMENSIONS`` attribute in v2); a ``KeyError`` naming the variable.
        MetadataError
            If a metadata document is invalid, a ``_FillValue`` cannot be decoded (naming
            the variable), or ``consolidated`` is True and there is no consolidated
            metadata.
        InvalidArgumentError
            If ``mode`` is not ``"r"`` or ``"r+"``.
        StoreError
            If the store cannot be read, or ``storage_options`` is given for a local path.

        Examples
        --------
        >>> import xarray as xr, zarr3c
        >>> from zarr3c.xarray import Zarr3cBackendEntrypoint
        >>> store = zarr3c.MemoryStore()
        >>> g = zarr3c.create_group(store).create_group("obs")
        >>> v = g.create_array("v", shape=(4,), dtype="int16", chunks=(2,),
        ...                    dimension_names=("t",),
        ...                    attributes={"_FillValue": -1, "scale_factor": 0.5})
        >>> v[...] = [2, -1, 4, 6]
        >>> ds = xr.open_dataset(store, engine=Zarr3cBackendEntrypoint, group="obs")
        >>> ds["v"].values.tolist()
        [1.0, nan, 2.0, 3.0]
        >>> ds["v"].encoding["chunks"], ds["v"].encoding["preferred_chunks"]
        ((2,), {'t': 2})
        """
        opened = open_zarr_group(filename_or_obj, group=group, consolidated=consolidated,
                                 storage_options=storage_options, zarr_format=zarr_format,
                                 mode=mode)
        store = Zarr3cDataStore(opened.group, owns_store=opened.owns_store,
                                zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
                                drop_variables=_dropped(drop_variables))
        return _decode(store, dict(
            mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta))

    def open_groups_as_dict(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: Any = True,
        decode_times: Any = True,
        concat_characters: Any = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: Any = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: Any = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> dict[str, Dataset]:
        """Open a group and every group below it, each as a Dataset.

        Called by ``xarray.open_groups(filename_or_obj, engine="zarr3c", ...)``.

        Parameters
        ----------
        filename_or_obj, mask_and_scale, decode_times, concat_characters, decode_coords, \
drop_variables, use_cftime, decode_timedelta, group, mode, consolidated, \
storage_options, zarr_format, use_zarr_fill_value_as_mask
            As for :meth:`open_dataset`; ``group`` is the top of the tree.

        Returns
        -------
        dict of str to xarray.Dataset
            By path, parents before children, keyed as xarray's zarr engine keys them:
            ``"/"``, ``"/a"``, ``"/a/b"``; with ``group``, relative to it (``"."``,
            ``"b"``).

        Raises
        ------
        GroupNotFoundError, ContainsArrayError, MissingDimensionsError, MetadataError, \
InvalidArgumentError, StoreError
            As for :meth:`open_dataset`.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_group("a").create_array("x", shape=(2,), dtype="int8",
        ...                                      dimension_names=("x",))
        >>> sorted(Zarr3cBackendEntrypoint().open_groups_as_dict(g.store))
        ['/', '/a']
        """
        opened = open_zarr_group(filename_or_obj, group=group, consolidated=consolidated,
                                 storage_options=storage_options, zarr_format=zarr_format,
                                 mode=mode)
        decoders = dict(
            mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta)
        top = opened.group.name
        out: dict[str, Dataset] = {}
        try:
            for node in iter_groups(opened.group):
                # The root dataset closes a store opened here; the others share it.
                owns = opened.owns_store and node is opened.group
                store = Zarr3cDataStore(node, owns_store=owns,
                                        zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
                                        drop_variables=_dropped(drop_variables))
                key = (posixpath.relpath(node.name, top) if group else node.name)
                out[key] = _decode(store, decoders)
        except BaseException:
            for ds in out.values():
                ds.close()
            if opened.owns_store:
                opened.group.store.close()
            raise
        return out

    def open_datatree(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: Any = True,
        decode_times: Any = True,
        concat_characters: Any = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: Any = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        mode: str = "r",
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: Any = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> DataTree:
        """Open a group and every group below it as a DataTree, lazily.

        Called by ``xarray.open_datatree(filename_or_obj, engine="zarr3c", ...)``.

        Parameters
        ----------
        filename_or_obj, mask_and_scale, decode_times, concat_characters, decode_coords, \
drop_variables, use_cftime, decode_timedelta, group, mode, consolidated, \
storage_options, zarr_format, use_zarr_fill_value_as_mask
            As for :meth:`open_dataset`; ``group`` becomes the tree's root.

        Returns
        -------
        xarray.DataTree
            One node per group.

        Raises
        ------
        GroupNotFoundError, ContainsArrayError, MissingDimensionsError, MetadataError, \
InvalidArgumentError, StoreError
            As for :meth:`open_dataset`; ``ValueError`` (from xarray) where a child's
            dimensions do not align with its parent's.

        Examples
        --------
        >>> import zarr3c
        >>> g = zarr3c.create_group("memory://")
        >>> _ = g.create_group("a/b").create_array("x", shape=(2,), dtype="int8",
        ...                                        dimension_names=("x",))
        >>> tree = Zarr3cBackendEntrypoint().open_datatree(g.store)
        >>> tree["a/b/x"].shape
        (2,)
        """
        groups = self.open_groups_as_dict(
            filename_or_obj, mask_and_scale=mask_and_scale, decode_times=decode_times,
            concat_characters=concat_characters, decode_coords=decode_coords,
            drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta, group=group, mode=mode,
            consolidated=consolidated, storage_options=storage_options,
            zarr_format=zarr_format, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        return _tree_from_dict(groups)
