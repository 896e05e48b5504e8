"""xarray support: write Datasets to Zarr through zarr3c (:func:`to_zarr`)."""

from zarr3c.xarray.writer import to_zarr

__all__ = ["to_zarr"]
