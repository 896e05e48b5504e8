"""Zarr arrays: the :class:`Array` class, and creating and opening arrays in a store.

The package's modules:

- :mod:`.core`: :class:`Array` (set-up, properties, selection dispatch);
- :mod:`.compat`: what zarr-python's ``Array`` has beyond that (``filters``, ``info``,
  ``nbytes_stored``, ``with_config``, ...), mixed into :class:`Array`;
- :mod:`.create`: metadata from create_array's arguments, :func:`create_array`,
  :func:`open_array_at`;
- :mod:`.geometry`: chunk origins, shapes and stored chunks of an array;
- :mod:`.read`: the read paths (their map and glossary are that package's docstring);
- :mod:`.write`: writes, resize and append.
"""

from zarr3c.array.core import Array
from zarr3c.array.create import build_array_metadata, create_array, open_array_at

__all__ = ["Array", "build_array_metadata", "create_array", "open_array_at"]
