"""Writers in several processes (``spawn``) on one LocalStore lose nothing.

Chunk-aligned disjoint regions need nothing more than atomic chunk writes; unaligned
element-by-element writes and writers sharing a shard need ``process_locks=True``.  Each
test starts 4 writer processes that meet at a barrier, so their writes overlap.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.testing.process_workers import write_elements, write_region

N_PROCS = 4
N = 512


def run_writers(target: Any, args_for: Any) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(N_PROCS)
    procs = [ctx.Process(target=target, args=(*args_for(w), barrier), daemon=True)
             for w in range(N_PROCS)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(120)
            assert p.exitcode == 0, f"writer {p.name} exited with {p.exitcode}"
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()


def test_chunk_aligned_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "aligned.zarr"
    a = zarr3c.create_array(zarr3c.LocalStore(root), "a", shape=(N,), dtype="int32",
                            chunks=(32,), fill_value=0)
    share = N // N_PROCS  # 128 elements: 4 whole chunks per writer, rewritten 20 times
    run_writers(write_region, lambda w: (str(root), "a", w * share, (w + 1) * share, 20))
    np.testing.assert_array_equal(a[...], np.arange(1, N + 1))


@pytest.mark.skipif(sys.platform == "win32", reason="process_locks need fcntl.flock")
def test_locked_elementwise_writers_lose_nothing(tmp_path: Path) -> None:
    # The same 4 processes write two arrays in turn (spawning is the slow part):
    # unaligned: 96-element chunks straddle the writers' 128-element regions;
    # shared-shard: one 512-element shard of 32-element inner chunks holds all 4 writers
    # (without the lock, about 300 of its 512 elements are typically lost).
    root = tmp_path / "locked.zarr"
    store = zarr3c.LocalStore(root)
    layouts = {"unaligned": (96, None), "shared-shard": (32, (N,))}
    arrays = {name: zarr3c.create_array(store, name, shape=(N,), dtype="int32",
                                        chunks=(chunks,), shards=shards, fill_value=0)
              for name, (chunks, shards) in layouts.items()}
    share = N // N_PROCS
    run_writers(write_elements,
                lambda w: (str(root), list(layouts), w * share, (w + 1) * share, True))
    for name, a in arrays.items():
        lost = int(np.count_nonzero(a[...] != np.arange(1, N + 1)))
        assert lost == 0, f"{name}: {lost} elements lost"
    # Lock files exist only while held.
    assert [p.name for p in root.rglob(".*")] == []
