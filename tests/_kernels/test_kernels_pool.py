"""``zarr3c._kernels.pool``: the native thread pool that runs a read plan's chunks.

Through its test entry point ``spread(n, nthreads, spin)``, which runs ``n`` tasks and says
which thread ran each and how many times: every task runs exactly once (the reference,
:func:`zarr3c._kernels._reference.spread`, runs them one after another), on at most
``nthreads`` threads; several threads share the work when tasks take a while; jobs from many
Python threads at once all finish; a forked child starts with an empty pool and can still run
jobs; and the pool starts no more threads than the largest job asked for.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import pool

IMPLS = [pytest.param(pool, id="cython"), pytest.param(ref, id="reference")]
# enough spinning per task that a pool thread wakes before the caller has run them all
SPIN = 200_000


def _check(serials: np.ndarray, runs: np.ndarray, n: int, nthreads: int) -> None:
    """Every task ran once, on at most ``nthreads`` (and at most ``n``) threads."""
    assert serials.shape == runs.shape == (n,)
    assert serials.dtype == runs.dtype == np.int64
    assert (runs == 1).all()
    assert (serials >= 0).all()
    assert len(set(serials.tolist())) <= max(1, min(n, nthreads))


def _run_on_threads(work: Any, n: int) -> None:
    """``work(k)`` on ``n`` Python threads at once, re-raising the first failure."""
    errors: list[BaseException] = []

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as exc:  # (handed to the test's thread)
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_every_task_runs_once() -> None:
    """Every n from 0 to 3000 on 1 to 8 threads."""
    for n in range(3001):
        for nthreads in range(1, 9):
            serials, runs = pool.spread(n, nthreads)
            _check(serials, runs, n, nthreads)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 64, 3000])
def test_every_task_runs_once_with_spin(impl: Any, n: int) -> None:
    for nthreads in range(1, 9):
        serials, runs = impl.spread(n, nthreads, 300)
        _check(serials, runs, n, nthreads)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3000), st.integers(1, 8), st.sampled_from([0, 0, 100, 2000]))
def test_every_task_runs_once_random(n: int, nthreads: int, spin: int) -> None:
    serials, runs = pool.spread(n, nthreads, spin)
    _check(serials, runs, n, nthreads)
    want_serials, want_runs = ref.spread(n, nthreads, spin)
    assert (runs == want_runs).all()
    assert serials.shape == want_serials.shape


@pytest.mark.parametrize("impl", IMPLS)
def test_negative_n_is_refused(impl: Any) -> None:
    with pytest.raises(ValueError):
        impl.spread(-1, 4)


@pytest.mark.parametrize("nthreads", [0, -3, 1])
def test_one_thread_or_fewer_runs_on_the_caller(nthreads: int) -> None:
    """nthreads <= 1: the caller runs every task itself, one after another."""
    serials, runs = pool.spread(200, nthreads, 100)
    assert (runs == 1).all()
    assert len(set(serials.tolist())) == 1
    # (the caller's number is the same from call to call: its state is kept)
    again, _ = pool.spread(5, 1)
    assert set(again.tolist()) == set(serials.tolist())


def test_several_threads_share_slow_tasks() -> None:
    """A pool thread takes some of a slow job's tasks (the tasks made slower each try, so a
    busy machine that is slow to schedule the pool's threads cannot fail it)."""
    used = set()
    for k in range(5):
        serials, runs = pool.spread(64, 4, SPIN * 4**k)
        _check(serials, runs, 64, 4)
        used = set(serials.tolist())
        if len(used) > 1:
            break
    assert len(used) > 1


def test_jobs_from_many_python_threads_at_once() -> None:
    """Eight Python threads each run jobs (slow and quick, small and large) at the same
    time: each job's tasks all run once, whoever's threads ran them."""

    def work(k: int) -> None:
        for i in range(12):
            n = [0, 1, 5, 40, 300, 2000][(k + i) % 6]
            nthreads = 1 + (k + 3 * i) % 8
            serials, runs = pool.spread(n, nthreads, [0, 500, 5000][(k * i) % 3])
            _check(serials, runs, n, nthreads)

    _run_on_threads(work, 8)


def _fork_and_wait(child: Any) -> int:
    """The exit status of a forked child running ``child()`` (its return value is the exit
    code; an exception or a hang past the alarm fails it)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            signal.alarm(30)
            code = int(child())
        finally:
            os._exit(code)
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status)


def _child_job() -> int:
    """In a forked child: the pool is empty, and a job still runs, on several threads."""
    if pool.threads_started() != 0:
        return 3
    serials, runs = pool.spread(256, 4, SPIN // 4)
    if not (runs == 1).all() or (serials < 0).any():
        return 4
    if not 0 < pool.threads_started() <= 3:
        return 5
    return 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_can_run_jobs() -> None:
    pool.spread(64, 4, SPIN)  # (the parent's pool has threads when it forks)
    assert pool.threads_started() >= 1
    assert _fork_and_wait(_child_job) == 0
    serials, runs = pool.spread(64, 4, 100)  # the parent's pool still works
    _check(serials, runs, 64, 4)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_child_forked_while_jobs_run_can_run_jobs() -> None:
    """Fork while other Python threads are inside jobs: the child's pool is consistent (not
    left locked, no job of a thread that does not exist there queued)."""
    stop = threading.Event()

    def busy(k: int) -> None:
        while not stop.is_set():
            serials, runs = pool.spread(200, 4, 2000)
            _check(serials, runs, 200, 4)

    threads = [threading.Thread(target=busy, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    try:
        codes = [_fork_and_wait(_child_job) for _ in range(3)]
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert codes == [0, 0, 0]


def test_threads_started_stays_within_the_largest_ask() -> None:
    """The pool grows to the largest ``nthreads - 1`` asked (a job's caller is one of its
    threads) and never shrinks; a job of fewer tasks than threads asks for fewer."""
    before = pool.threads_started()
    for nthreads in (1, 2, 3):
        pool.spread(100, nthreads, 100)
        assert before <= pool.threads_started() <= max(before, nthreads - 1)
    pool.spread(5, 100_000)  # (as many as its 5 tasks, not 100000)
    assert pool.threads_started() <= max(before, 4)
    peak = pool.threads_started()
    pool.spread(300, 8, 100)
    after = pool.threads_started()
    assert max(before, peak) <= after <= max(before, 7)
    pool.spread(300, 2, 100)
    assert pool.threads_started() == after
