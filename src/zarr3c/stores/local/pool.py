"""A small per-process thread pool that spreads LocalStore's batched reads over threads.

File reads give up the GIL, so ``get_many``, ``get_partial_values`` and ``read_ranges_into``
over many keys read several files at once: the keys are cut into a few consecutive parts,
one per pool task, and the calling thread reads the first part itself.  Small batches stay
in the calling thread (a hand-off costs more than a few small reads).  The thresholds are
tracked by ``LocalStoreSuite.time_get_many_64_small`` and ``LocalStoreBatchedRanges`` in
``asv_benchmarks/benchmarks/bench_stores.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["KEYS_PER_TASK", "PARALLEL_MIN_KEYS", "POOL_WORKERS", "map_batched",
           "map_batched_parts"]

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Batches of this many items (distinct keys) or more go to the pool.
PARALLEL_MIN_KEYS = 16
#: Keys per pool task: batching keeps the per-task overhead small for small files.
KEYS_PER_TASK = 8
#: The pool's threads.
POOL_WORKERS = min(16, (os.cpu_count() or 1) + 4)

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _reset_pool_after_fork() -> None:
    # A forked child inherits the executor object but not its threads: start afresh.
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pool_after_fork)


def _executor() -> ThreadPoolExecutor:
    """The process's pool, started on first use."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(
                    max_workers=POOL_WORKERS, thread_name_prefix="zarr3c-localstore"
                )
            pool = _pool
    return pool


def map_batched(fn: Callable[[_T], _R], items: list[_T]) -> list[_R]:
    """``[fn(x) for x in items]``, spread over the pool in batches when there are many."""
    return map_batched_parts(lambda part: [fn(x) for x in part], items)


def map_batched_parts(fn: Callable[[list[_T]], list[_R]], items: list[_T]) -> list[_R]:
    """``fn(items)``, or when there are many items ``fn`` of each of a few consecutive
    parts of them on the pool (each returning a result per item), concatenated."""
    n = len(items)
    if n < PARALLEL_MIN_KEYS:
        return fn(items)
    n_tasks = min(POOL_WORKERS + 1, -(-n // KEYS_PER_TASK))
    bounds = [n * i // n_tasks for i in range(n_tasks + 1)]

    def run(lo: int, hi: int) -> list[_R]:
        return fn(items[lo:hi])

    pool = _executor()
    futures: list[Future[list[_R]]] = [
        pool.submit(run, bounds[i], bounds[i + 1]) for i in range(1, n_tasks)
    ]
    try:
        out = run(bounds[0], bounds[1])  # the calling thread takes the first batch
        for fut in futures:
            out.extend(fut.result())
    finally:
        for fut in futures:
            fut.cancel()
    return out
