"""asv benchmarks of the stores: LocalStore whole-value reads and writes of 1 MiB values,
reads straight into a buffer at a fast and at a slow place in a page, byte-range reads
(``get_partial_values``, as the sharding codec issues them) and batched reads of many small
keys (``get_many``); MemoryStore for comparison."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from zarr3c._buffers import empty_aligned
from zarr3c.stores import LocalStore, MemoryStore

MIB = 2**20


class LocalStoreSuite:
    """One LocalStore in a fresh temporary directory per benchmark."""

    timeout = 120

    def setup(self) -> None:
        self.tmpdir = tempfile.mkdtemp(prefix="zarr3c-bench-stores-")
        self.store = LocalStore(os.path.join(self.tmpdir, "store.zarr"))
        self.value = os.urandom(MIB)
        self.store.set("array/c/0/0", self.value)
        # a "shard": 256 inner chunks of 4 KiB plus a 16-byte-per-chunk index at the end
        self.store.set("array/shard", os.urandom(256 * 4096 + 256 * 16))
        self.ranges: list[tuple[str, tuple[int, int | None]]] = [
            ("array/shard", (i * 4096, 4096)) for i in range(0, 256, 4)
        ]
        self.ranges.append(("array/shard", (-256 * 16, None)))
        self.index = empty_aligned(256 * 16)
        self.aligned = empty_aligned(MIB + 4096)
        self.small_keys = [f"small/c/{i // 8}/{i % 8}" for i in range(64)]
        for key in self.small_keys:
            self.store.set(key, os.urandom(512))

    def teardown(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def time_set_1mib(self) -> None:
        self.store.set("array/c/1/0", self.value)

    def time_get_1mib(self) -> None:
        self.store.get("array/c/0/0")

    def time_read_into_1mib_page_aligned(self) -> None:
        # A whole value read straight into a page-aligned buffer (as chunks are read into
        # outputs and staging buffers).
        self.store.read_ranges_into([("array/c/0/0", [(0, MIB, 0)])], self.aligned)

    def time_read_into_1mib_16_bytes_into_a_page(self) -> None:
        # The same 16 bytes into a page, where a plain large numpy array starts: the kernel
        # copy to there is several times slower on some CPUs (AMD Zen), so LocalStore reads
        # it through its page-aligned bounce buffer; this should stay close to the aligned
        # read above.
        self.store.read_ranges_into([("array/c/0/0", [(0, MIB, 16)])], self.aligned)

    def time_get_partial_values_65_ranges(self) -> None:
        self.store.get_partial_values(self.ranges)

    def time_get_many_64_small(self) -> None:
        self.store.get_many(self.small_keys)

    def time_read_shard_index_as_tail(self) -> None:
        # A shard index at the end, as the sharding codec reads it: the file's last bytes in
        # one call without the GIL (Store.read_tail_into) ...
        self.store.read_tail_into("array/shard", self.index)

    def time_read_shard_index_through_os(self) -> None:
        # ... against the suffix through get_partial_values (open, fstat, pread, close
        # through os, a bytes object back).
        self.store.get_partial_values([("array/shard", (-256 * 16, None))])

    def time_get_64_small_one_by_one(self) -> None:
        get = self.store.get
        for key in self.small_keys:
            get(key)

    def time_list_prefix(self) -> None:
        list(self.store.list_prefix("small/"))

    def time_list_dir(self) -> None:
        self.store.list_dir("small/c/")


class MemoryStoreSuite:
    def setup(self) -> None:
        self.store = MemoryStore()
        self.value = os.urandom(MIB)
        self.store.set("array/c/0/0", self.value)
        self.aligned = empty_aligned(MIB + 4096)
        self.small_keys = [f"small/c/{i // 8}/{i % 8}" for i in range(64)]
        for key in self.small_keys:
            self.store.set(key, os.urandom(512))

    def time_set_1mib(self) -> None:
        self.store.set("array/c/1/0", self.value)

    def time_get_many_64_small(self) -> None:
        self.store.get_many(self.small_keys)


def _uncompressed_cube(tmpdir: str) -> Any:
    """A written 512^3 uint16 array of 512 uncompressed 64^3 chunks in ``tmpdir``."""
    import numpy as np

    import zarr3c

    a = zarr3c.create_array(LocalStore(os.path.join(tmpdir, "a.zarr")), shape=(512,) * 3,
                            dtype="uint16", chunks=(64,) * 3, compressors=None, fill_value=0)
    a[...] = np.arange(512**3, dtype=np.uint32).astype(np.uint16).reshape((512,) * 3)
    return a


class LocalStoreOneCallReads:
    """How LocalStore's reads give up the GIL, on the peer table's uncompressed chunked
    ``vindex`` (100,000 random points over a 512^3 uint16 array of 512 64^3 chunks, 2
    threads, each touched chunk read whole).  Parameter: ``batch`` (the default: a batch of
    chunk files read and their points copied out in one call without the GIL,
    ``fileio.read_files_elements``), ``one call`` (each file read in one call,
    ``fileio.read_range_into``, then its points copied out) or ``os`` (each file read
    through ``os`` calls, each of which gives the GIL up and waits to take it back while the
    other thread runs Python)."""

    params = ["batch", "one call", "os"]
    param_names = ["reads"]
    timeout = 120

    def setup(self, reads: str) -> None:
        import numpy as np

        from zarr3c.concurrency import get_num_threads, set_num_threads
        from zarr3c.stores.local import reads as local_reads

        self.tmpdir = tempfile.mkdtemp(prefix="zarr3c-bench-onecall-")
        self.array = _uncompressed_cube(self.tmpdir)
        rng = np.random.default_rng(0)
        self.points = tuple(rng.integers(0, 512, 100_000) for _ in range(3))
        self._module, self._kernel = local_reads, local_reads.fileio
        self._batch = LocalStore.read_elements_into
        if reads != "batch":
            LocalStore.read_elements_into = lambda self, *args: None  # type: ignore
        if reads == "os":
            local_reads.fileio = None
        self._threads = get_num_threads()
        set_num_threads(2)
        self.array.vindex[self.points]  # (the files in the page cache)

    def teardown(self, reads: str) -> None:
        from zarr3c.concurrency import set_num_threads

        self._module.fileio = self._kernel
        LocalStore.read_elements_into = self._batch  # type: ignore
        set_num_threads(self._threads)
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def time_vindex(self, reads: str) -> None:
        self.array.vindex[self.points]


class LocalStoreBatchedRanges:
    """Byte ranges of many files read into one buffer (``Store.read_ranges_into``, what
    ``Array.get_many`` of 1,000 random 4^3 boxes of an uncompressed 512^3 uint16 array of
    64^3 chunks issues: about 450 files): each part of the files on the pool in one call
    without the GIL (``fileio.read_files_ranges_into``, parameter ``batch``) or one such
    call per file (``per file``)."""

    params = ["batch", "per file"]
    param_names = ["reads"]
    timeout = 120

    def setup(self, reads: str) -> None:
        import numpy as np

        from zarr3c.stores.local import reads as local_reads

        self.tmpdir = tempfile.mkdtemp(prefix="zarr3c-bench-ranges-")
        self.array = _uncompressed_cube(self.tmpdir)
        rng = np.random.default_rng(1)
        self.boxes = [tuple(slice(int(s), int(s) + 4) for s in rng.integers(0, 508, 3))
                      for _ in range(1000)]
        self._module, self._batch = local_reads, local_reads.read_into_items
        if reads == "per file":
            local_reads.read_into_items = lambda items: [
                local_reads.read_into_item(x) for x in items
            ]
        self.array.get_many(self.boxes)  # (the files in the page cache)

    def teardown(self, reads: str) -> None:
        self._module.read_into_items = self._batch
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def time_get_many(self, reads: str) -> None:
        self.array.get_many(self.boxes)
