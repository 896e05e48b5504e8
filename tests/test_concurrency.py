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


def test_run_beside_runs_on_a_pool_thread_and_finish_waits_for_it() -> None:
    from zarr3c.concurrency import run_beside

    ran: list[str] = []
    release = threading.Event()

    def helper() -> None:
        release.wait(5)
        ran.append(threading.current_thread().name)

    set_num_threads(2)
    try:
        beside = run_beside(helper)
        assert beside is not None
        release.set()
        beside.finish()  # (started: waited for)
        assert ran and ran[0].startswith("zarr3c") and ran[0] != threading.current_thread().name
    finally:
        set_num_threads(None)


def test_finish_drops_a_helper_no_thread_has_started() -> None:
    """A helper still queued behind busy pool threads is dropped, not waited for: the
    caller's work is done and the help is no longer worth anything."""
    from zarr3c.concurrency import run_beside

    release = threading.Event()
    ran: list[int] = []
    set_num_threads(2)
    try:
        busy = [run_beside(release.wait, 5) for _ in range(2)]  # both pool threads
        late = run_beside(ran.append, 1)
        assert late is not None and all(b is not None for b in busy)
        late.finish()  # returns at once although both threads are busy
        release.set()
        for b in busy:
            b.finish()  # type: ignore[union-attr]
        assert ran == []
    finally:
        release.set()
        set_num_threads(None)


def test_run_beside_starts_nothing_on_one_thread_or_in_a_worker() -> None:
    from zarr3c.concurrency import run_beside

    ran: list[int] = []
    set_num_threads(1)
    try:
        assert run_beside(ran.append, 1) is None
    finally:
        set_num_threads(None)
    set_num_threads(2)
    try:
        assert map_unordered(lambda i: run_beside(ran.append, i), [1, 2]) == [None, None]
    finally:
        set_num_threads(None)
    assert ran == []


def test_run_beside_gives_up_quietly_when_the_pool_is_being_replaced(monkeypatch) -> None:
    """set_num_threads in another thread shuts the old pool down: a helper asked of it is
    not started, and the caller goes on without it."""
    from concurrent.futures import ThreadPoolExecutor

    from zarr3c import concurrency

    closed = ThreadPoolExecutor(1)
    closed.shutdown()
    monkeypatch.setattr(concurrency, "_executor", lambda: closed)
    set_num_threads(2)
    try:
        assert concurrency.run_beside(print, "never") is None
    finally:
        set_num_threads(None)
