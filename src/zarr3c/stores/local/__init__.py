"""LocalStore: a store over a directory of the local file system (the v3 core
specification's "Store implementations": keys are paths below a root directory, values are
file contents; https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html).

The key ``"temp/c/0/1"`` is the file ``<root>/temp/c/0/1``; every parent directory is created on
demand::

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     store = LocalStore(tmp)
    ...     store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    ...     store.list_dir("")
    (['zarr.json'], [])

Guarantees:

- No key reaches outside the root: keys are validated (no ``..``, ``.``, empty segments,
  leading ``/`` or backslash) and the joined path is checked to lie below the root.  Symbolic
  links *inside* the root, which only the user can create, are followed on reads and writes
  (data directories spread over disks by symlinks keep working); ``erase_prefix`` removes such
  links without deleting what they point to, and listings never loop through them.
- ``set`` is atomic: the value is written to a temporary file in the key's directory
  (``.<name>.zarr3c-tmp-<16 hex digits>``) and renamed over the key with ``os.replace``, so a
  reader or a crash sees the old value or the new one, never a torn file.  Temporary names are
  reserved: they are never listed nor readable as keys.  ``fsync=True`` also flushes the file
  and its directory to disk before returning.
- Temporary files left by a killed writer are never listed nor read; a writer holds an
  ``flock`` on its temporary file until it is renamed, so stale ones can be told from live
  ones.  The temporary files of a key are a fixed sequence of slots (the hex digits number
  the slot), and a write takes the first that no live writer holds, removing a killed
  writer's leftover there: repeated crashes leave at most one temporary file per concurrent
  writer of a key, and its next write removes the one in its slot.  Beside keys not written
  again, listings of a writable store remove those older than an hour that no writer holds,
  ``erase_prefix`` removes every unheld one, and :meth:`LocalStore.cleanup_temporary_files`
  does it on demand with any age limit.
- ``process_locks=True`` (POSIX only) makes :meth:`LocalStore.key_lock` a cross-process
  lock: ``flock`` on a lock file ``.<name>.zarr3c-lock`` next to the key, which exists only
  while held (its holder removes it before unlocking), so writers in several processes that
  share a chunk or shard lose nothing.  Lock file names are reserved like temporary names.
- Reads open the file once: ``get`` reads the whole file in one ``pread`` into a bytes
  object of the ``fstat`` size (one copy), ``get_partial_values`` reads each range with its
  own ``pread``, never the whole file, and ``get_many`` spreads many keys over a small thread
  pool (file reads release the GIL).  The read-into hooks
  (:mod:`zarr3c.stores.read_into`) read straight into the caller's memory.
- A key that is a directory, a special file or missing reads as None.  ``erase`` and
  ``erase_prefix`` remove directories that become empty (up to, not including, the root), so
  ``list_dir`` reports exactly the prefixes that hold keys.

``set_partial_values`` is the base class's read-modify-write followed by an atomic ``set``
(``supports_partial_writes`` is False): patching a file in place could tear it.

The modules:

- :mod:`~zarr3c.stores.local.store`: the :class:`LocalStore` class (keys to paths, each
  store operation, the read-into hooks);
- :mod:`~zarr3c.stores.local.files`: atomic writes, temporary and lock files, fsync,
  erasing, stale-file cleanup;
- :mod:`~zarr3c.stores.local.reads`: reads into bytes and into memory, the one-call kernel
  reads, the bounce buffer;
- :mod:`~zarr3c.stores.local.pool`: the thread pool batched reads are spread over;
- :mod:`~zarr3c.stores.local.listing`: walking the directories for listings.
"""

from __future__ import annotations

from zarr3c.stores.local.files import STALE_TEMPORARY_AGE
from zarr3c.stores.local.store import LocalStore

__all__ = ["STALE_TEMPORARY_AGE", "LocalStore"]
