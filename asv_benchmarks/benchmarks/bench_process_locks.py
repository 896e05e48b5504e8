"""asv benchmarks: the cost of ``LocalStore(root, process_locks=True)``.

Element-by-element writes (the worst case: one read-modify-write of a chunk per element)
into a 512-element int32 array, with and without the cross-process lock; compare the two
``process_locks`` values of each layout for the lock's cost as a ratio:

- ``unaligned``: 96-element chunks (every write a read-modify-write of a small chunk);
- ``shared-shard``: one 512-element shard of 32-element inner chunks;
- ``aligned``: whole 64-element chunks written at once (no read, one lock each).

A zarr3c that fails to import raises ``NotImplementedError`` in ``setup`` (asv: skipped).
"""

from __future__ import annotations

import importlib
import shutil
import sys
import tempfile
from typing import Any

import numpy as np

zarr3c: Any
try:
    zarr3c = importlib.import_module("zarr3c")
    _IMPORT_ERROR = ""
except Exception as exc:  # any import failure means "skip", with its reason
    zarr3c = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

_LAYOUTS = {"unaligned": (96, None), "shared-shard": (32, (512,)), "aligned": (64, None)}


class ProcessLocks:
    params = (list(_LAYOUTS), [False, True])
    param_names = ["layout", "process_locks"]

    def setup(self, layout: str, process_locks: bool) -> None:
        if zarr3c is None:
            raise NotImplementedError(_IMPORT_ERROR)
        if process_locks and sys.platform == "win32":
            raise NotImplementedError("process_locks need fcntl.flock")
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-locks-")
        chunks, shards = _LAYOUTS[layout]
        store = zarr3c.LocalStore(self.tmp, process_locks=process_locks)
        self.a = zarr3c.create_array(store, "a", shape=(512,), dtype="int32", chunks=(chunks,),
                                     shards=shards, fill_value=0)
        self.a[...] = np.arange(512)
        self.block = np.arange(64, dtype="int32")

    def teardown(self, layout: str, process_locks: bool) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_write(self, layout: str, process_locks: bool) -> None:
        a = self.a
        if layout == "aligned":
            for c in range(8):
                a[c * 64:(c + 1) * 64] = self.block
        else:
            for i in range(0, 512, 4):  # 128 element writes
                a[i] = i
