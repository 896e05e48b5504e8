"""zarr3c for xarray: ``xr.open_dataset(path, engine="zarr3c")``.

- :class:`Zarr3cBackendEntrypoint`: xarray's backend (the ``xarray.backends`` entry point
  ``zarr3c``), for ``open_dataset``, ``open_mfdataset``, ``open_datatree`` and
  ``open_groups`` on Zarr v2 and v3 stores (:mod:`zarr3c.xarray.backend`).

Importing this package imports xarray (``pip install zarr3c[xarray]``).  User guide:
docs/xarray.md.

>>> import xarray as xr, zarr3c
>>> store = zarr3c.MemoryStore()
>>> a = zarr3c.create_group(store).create_array("x", shape=(3,), dtype="int8",
...                                             dimension_names=("x",))
>>> xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)["x"].dims
('x',)
"""

from zarr3c.xarray.backend import Zarr3cBackendEntrypoint

# The writer, zarr3c.xarray.to_zarr, is re-exported here from zarr3c.xarray.writer.

__all__ = ["Zarr3cBackendEntrypoint"]
