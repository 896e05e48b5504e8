"""zarr3c: a Cython-compiled, high-performance Zarr v3 library for Python.

The public API follows zarr-python 3's names:

- arrays and groups: :func:`create_array`, :func:`create_group`, :func:`open`,
  :func:`open_array`, :func:`open_group`, :class:`Array`, :class:`Group`;
- consolidated metadata: :func:`consolidate_metadata`, :func:`open_consolidated`;
- stores: :class:`Store` and :class:`LocalStore`, :class:`MemoryStore`, :class:`ZipStore`,
  :class:`FsspecStore` (remote, with ``zarr3c[remote]``), :class:`ObjectStore` (remote, with
  ``zarr3c[obstore]``);
- zarr-python's convenience functions (:mod:`zarr3c.api_convenience`): :func:`array`,
  :func:`group`, :func:`create`, :func:`zeros`, :func:`ones`, :func:`empty`, :func:`full`
  and their ``*_like``, :func:`from_array`, :func:`open_like`, :func:`save`,
  :func:`save_array`, :func:`save_group`, :func:`load`, :func:`tree`,
  :func:`print_debug_info`; ``zarr3c.array`` and ``zarr3c.group`` are modules that can be
  called as those functions;
- copying and rechunking hierarchies: :func:`copy`, :func:`copy_all`, :func:`copy_store`;
  writing dask arrays: :func:`from_dask`;
- settings: :data:`config` (as ``zarr.config``); the thread pool: :func:`get_num_threads`,
  :func:`set_num_threads`;
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
from zarr3c.api_convenience import (
    create,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    load,
    ones,
    ones_like,
    open_like,
    print_debug_info,
    save,
    save_array,
    save_group,
    tree,
    zeros,
    zeros_like,
)
from zarr3c.array import Array
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.consolidated import consolidate_metadata, open_consolidated
from zarr3c.copy_convenience import copy_all, copy_store
from zarr3c.dask import from_dask  # imports dask only when called
from zarr3c.group import Group
from zarr3c.node import UnreadableNode
from zarr3c.settings import config
from zarr3c.stores import FsspecStore, LocalStore, MemoryStore, ObjectStore, Store, ZipStore
from zarr3c.transfer import copy
from zarr3c._callable_modules import make_callable as _make_callable

# zarr3c.array(data) and zarr3c.group(store) as zarr-python's functions; both stay modules.
_make_callable()

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
    "array",
    "config",
    "consolidate_metadata",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "empty",
    "empty_like",
    "errors",
    "from_array",
    "from_dask",
    "full",
    "full_like",
    "get_num_threads",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "print_debug_info",
    "save",
    "save_array",
    "save_group",
    "set_num_threads",
    "tree",
    "UnreadableNode",
    "zeros",
    "zeros_like",
]
