"""zarr3c: a Cython-compiled, high-performance Zarr v3 library for Python.

The public API follows zarr-python 3's names:

- arrays and groups: :func:`create_array`, :func:`create_group`, :func:`open`,
  :func:`open_array`, :func:`open_group`, :class:`Array`, :class:`Group`;
- consolidated metadata: :func:`consolidate_metadata`, :func:`open_consolidated`;
- stores: :class:`Store` and :class:`LocalStore`, :class:`MemoryStore`, :class:`ZipStore`,
  :class:`FsspecStore` (remote, with ``zarr3c[remote]``), :class:`ObjectStore` (remote, with
  ``zarr3c[obstore]``);
- copying and rechunking hierarchies: :func:`copy`; writing dask arrays: :func:`from_dask`;
- the thread pool: :func:`get_num_threads`, :func:`set_num_threads`;
- exceptions: :mod:`zarr3c.errors`.

>>> import zarr3c
>>> a = zarr3c.create_array("memory://", shape=(100, 100), dtype="uint16", chunks=(10, 10))
>>> a[:10, :10] = 7
>>> int(a[5, 5])
7
>>> a[8:12, 9:11]
array([[7, 0],
       [7, 0],
       [0, 0],
       [0, 0]], dtype=uint16)
"""

# First: fails in one line, naming the command to run, where the kernels are not compiled.
from zarr3c import _kernels  # noqa: F401, I001
from zarr3c import errors
from zarr3c.api import create_array, create_group, open, open_array, open_group
from zarr3c.array import Array
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.consolidated import consolidate_metadata, open_consolidated
from zarr3c.dask import from_dask  # imports dask only when called
from zarr3c.group import Group
from zarr3c.node import UnreadableNode
from zarr3c.stores import FsspecStore, LocalStore, MemoryStore, ObjectStore, Store, ZipStore
from zarr3c.transfer import copy

__version__ = "0.1.0"

__all__ = [
    "Array",
    "FsspecStore",
    "Group",
    "LocalStore",
    "MemoryStore",
    "ObjectStore",
    "Store",
    "ZipStore",
    "consolidate_metadata",
    "copy",
    "create_array",
    "create_group",
    "errors",
    "from_dask",
    "get_num_threads",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "set_num_threads",
    "UnreadableNode",
]
