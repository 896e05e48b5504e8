"""Killing a LocalStore writer at any moment leaves every chunk whole (its old or new value),
never lists its temporary files, and what it leaves behind is cleaned up.

A writer process (``spawn``) rewrites whole chunks in a loop and is SIGKILLed at random
moments; after each kill every chunk must decode to one whole generation and no listing may
show a temporary file.  The next writer is started while the previous one runs, so its
import time overlaps the checks.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import zarr3c
from zarr3c.stores.local import files as local_files
from zarr3c.testing.process_workers import crash_value, crash_writer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

N_KILLS = 20
PREFETCH = 3
N_CHUNKS = 4
CHUNK_LEN = 1 << 16  # 512 KiB of int64 per chunk, uncompressed: kills often land mid-write


def reserved_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if local_files.is_reserved_name(p.name)]


def check_whole(a: zarr3c.Array, kill: int) -> None:
    data = a[...]
    for c in range(N_CHUNKS):
        chunk = data[c * CHUNK_LEN:(c + 1) * CHUNK_LEN]
        # one whole generation, the one whose value starts as this chunk does
        generation = (int(chunk[0]) // CHUNK_LEN - c) // 1_000_003
        np.testing.assert_array_equal(chunk, crash_value(generation, c, CHUNK_LEN),
                                      err_msg=f"chunk {c} torn after kill {kill}")


def check_listings(store: zarr3c.LocalStore) -> None:
    keys = list(store.list())
    assert not any(local_files.is_reserved_name(k.rsplit("/", 1)[-1]) for k in keys), keys
    assert sorted(store.list_prefix("a/")) == sorted(k for k in keys if k.startswith("a/"))
    prefixes = [""]
    while prefixes:
        prefix = prefixes.pop()
        found, subs = store.list_dir(prefix)
        assert not any(local_files.is_reserved_name(k.rsplit("/", 1)[-1]) for k in found)
        prefixes.extend(subs)
    assert set(keys) == {"zarr.json", "a/zarr.json",
                         *(f"a/c/{c}" for c in range(N_CHUNKS))}


def test_sigkilled_writer_never_tears_a_chunk(tmp_path: Path) -> None:
    root = tmp_path / "crash.zarr"
    store = zarr3c.LocalStore(root)
    zarr3c.create_group(store)
    a = zarr3c.create_array(store, "a", shape=(N_CHUNKS * CHUNK_LEN,), dtype="int64",
                            chunks=(CHUNK_LEN,), compressors=None, fill_value=-1)
    for c in range(N_CHUNKS):  # generation 0 everywhere
        a[c * CHUNK_LEN:(c + 1) * CHUNK_LEN] = np.arange(c * CHUNK_LEN, (c + 1) * CHUNK_LEN)
    ctx = multiprocessing.get_context("spawn")
    rng = random.Random(1234)

    def start(generation: int) -> tuple[multiprocessing.process.BaseProcess, object, object]:
        go, ready = ctx.Event(), ctx.Event()
        p = ctx.Process(target=crash_writer, daemon=True,
                        args=(str(root), "a", N_CHUNKS, CHUNK_LEN, generation, go, ready))
        p.start()
        return p, go, ready

    left_behind = 0
    # Writers waiting for their turn: their imports overlap the others' work.
    queue = [start(1000 * (i + 1)) for i in range(PREFETCH)]
    try:
        for kill in range(N_KILLS):
            proc, go, ready = queue.pop(0)
            go.set()  # type: ignore[attr-defined]
            assert ready.wait(60), "writer did not start"  # type: ignore[attr-defined]
            if kill + PREFETCH < N_KILLS:
                queue.append(start(1000 * (kill + PREFETCH + 1)))
            time.sleep(rng.uniform(0.0, 0.05))
            os.kill(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]
            proc.join(30)
            assert proc.exitcode == -signal.SIGKILL
            left_behind += len(reserved_files(root))
            check_listings(store)
            check_whole(a, kill)
            # A fresh store object over the same files agrees.
            check_whole(zarr3c.open_array(zarr3c.LocalStore(root), "a", mode="r"), kill)
    finally:
        for proc, _, _ in queue:
            proc.kill()  # type: ignore[attr-defined]
            proc.join(30)  # type: ignore[attr-defined]
    # The dead writers' temporary files are stale: cleanup removes every one of them.
    on_disk = reserved_files(root)
    assert store.cleanup_temporary_files(max_age=0) == len(on_disk)
    assert reserved_files(root) == []
    check_listings(store)
    check_whole(a, N_KILLS)
    print(f"\n{N_KILLS} kills; temporary files found on disk after kills: {left_behind}")
