"""zarr3c for xarray: ``xr.open_dataset(path, engine="zarr3c")`` and ``to_zarr``.

- :class:`Zarr3cBackendEntrypoint`: xarray's backend (the ``xarray.backends`` entry point
  ``zarr3c``), for ``open_dataset``, ``open_mfdataset``, ``open_datatree`` and
  ``open_groups`` on Zarr v2 and v3 stores (:mod:`zarr3c.xarray.backend`).
- :func:`to_zarr`: write a Dataset as xarray's ``Dataset.to_zarr`` writes it, through
  zarr3c (:mod:`zarr3c.xarray.writer`).

Importing this package imports xarray (``pip install zarr3c[xarray]``).  User guides:
docs/xarray.md and docs/xarray_writer.md.

>>> import xarray as xr, zarr3c
>>> store = zarr3c.MemoryStore()
>>> a = zarr3c.create_group(store).create_array("x", shape=(3,), dtype="int8",
...                                             dimension_names=("x",))
>>> xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)["x"].dims
('x',)
"""

from zarr3c.xarray.backend import Zarr3cBackendEntrypoint
from zarr3c.xarray.writer import to_zarr

__all__ = ["Zarr3cBackendEntrypoint", "to_zarr"]
