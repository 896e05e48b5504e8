"""Concurrent writers through threads lose nothing (a lock per chunk key)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarr3c
from zarr3c.concurrency import map_unordered, set_num_threads


@pytest.mark.parametrize("layout", ["aligned", "unaligned", "shared-shard"])
@pytest.mark.parametrize("same_object", [True, False], ids=["same-array", "separate-arrays"])
def test_threads_writing_elementwise_lose_nothing(store: zarr3c.Store, layout: str,
                                                  same_object: bool) -> None:
    # 8 writers, 64 elements each; unaligned: 96-element chunks; shared-shard: 4 writers
    # per 256-element shard of 32-element inner chunks.
    chunks, shards = {"aligned": (64, None), "unaligned": (96, None),
                      "shared-shard": (32, 256)}[layout]
    a = zarr3c.create_array(store, "race", shape=(512,), dtype="int32", chunks=(chunks,),
                            shards=None if shards is None else (shards,), fill_value=0)
    barrier = threading.Barrier(8)

    def writer(w: int) -> None:
        # Separate objects: a new LocalStore over the same root shares the chunk locks.
        where = getattr(store, "root", store)
        arr = a if same_object else zarr3c.open_array(where, "race", mode="r+")
        barrier.wait()
        for i in range(w * 64, (w + 1) * 64):
            arr[i] = i + 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(a[...], np.arange(1, 513))


def test_map_unordered_reports_first_error_after_all_tasks() -> None:
    done = []

    def task(i: int) -> int:
        if i == 1:
            raise ValueError("boom")
        done.append(i)
        return i

    with pytest.raises(ValueError, match="boom"):
        map_unordered(task, range(6))
    assert sorted(done) == [0, 2, 3, 4, 5]


def test_single_thread_mode_gives_same_result(store: zarr3c.Store) -> None:
    data = np.arange(1000, dtype="float64").reshape(10, 100)
    set_num_threads(1)
    try:
        a = zarr3c.create_array(store, "one", shape=data.shape, dtype="float64", chunks=(3, 7))
        a[...] = data
        np.testing.assert_array_equal(a[::-1, 5:90:3], data[::-1, 5:90:3])
    finally:
        set_num_threads(None)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_map_unordered_draws_items_as_it_needs_them(threads: int) -> None:
    """A generator of tasks (a whole write's chunk plan) is never held whole: when item i
    runs, at most a few items per thread beyond it have been drawn; results stay in order."""
    drawn = [0]
    seen: dict[int, int] = {}

    def items():
        for i in range(200):
            drawn[0] += 1
            yield i

    def fn(i: int) -> int:
        seen[i] = drawn[0]
        return i * i

    set_num_threads(threads)
    try:
        assert map_unordered(fn, items()) == [i * i for i in range(200)]
    finally:
        set_num_threads(None)
    assert max(seen[i] - i for i in seen) <= 2 * threads


@pytest.mark.parametrize("threads", [1, 2])
def test_map_unordered_stops_taking_items_when_the_iterator_fails(threads: int) -> None:
    ran: list[int] = []

    def items():
        yield from range(5)
        raise RuntimeError("plan failed")

    set_num_threads(threads)
    try:
        with pytest.raises(RuntimeError, match="plan failed"):
            map_unordered(ran.append, items())
    finally:
        set_num_threads(None)
    assert sorted(ran) == list(range(5))
