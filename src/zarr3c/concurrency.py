"""Thread fan-out over chunks, and per-chunk-key locks.

The core is synchronous; parallelism is a thread pool over chunks, which scales because the
kernels and numcodecs release the GIL.  The pool size comes from ``ZARR3C_NUM_THREADS`` or the
machine's cores, and can be changed with :func:`set_num_threads`.

Writes take a lock per chunk key for their read-modify-write, so threads writing disjoint
regions of the same chunk lose nothing, while unrelated chunks proceed in parallel.  Locks
are keyed by the store's identity for locking (:func:`store_lock_id`) and the key, so two
``Array`` objects over the same data share them.  Inside the thread lock, the store's
``key_lock(key)`` adds a cross-process lock where the store offers one (``LocalStore(root,
process_locks=True)``: ``flock`` on a lock file next to the key).

>>> import zarr3c
>>> zarr3c.set_num_threads(2)
>>> zarr3c.get_num_threads()
2
>>> zarr3c.set_num_threads(None)       # back to ZARR3C_NUM_THREADS or the core count
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from zarr3c.errors import InvalidArgumentError

T = TypeVar("T")
R = TypeVar("R")

__all__ = [
    "Beside", "chunk_lock", "chunk_locks", "get_num_threads", "in_worker", "map_parts",
    "map_unordered", "run_beside", "set_num_threads", "store_lock_id", "submit",
]

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_num_threads: int | None = None


# The machine's core count does not change while the process runs: ask the OS once (the
# size is looked up on every chunk-parallel read).  The environment variable is still read
# each time, so changing it takes effect as before.
_CPU_COUNT: int = max(1, os.cpu_count() or 1)
_env_threads: tuple[str | None, int] = (None, _CPU_COUNT)


def _default_threads() -> int:
    """The pool size without :func:`set_num_threads`: ``ZARR3C_NUM_THREADS`` if it is set
    (a malformed value counts as unset), else the core count."""
    global _env_threads
    env = os.environ.get("ZARR3C_NUM_THREADS")
    if not env:
        return _CPU_COUNT
    cached_env, cached = _env_threads
    if env == cached_env:
        return cached
    try:
        n = max(1, int(env))
    except ValueError:
        n = _CPU_COUNT
    _env_threads = (env, n)
    return n


def get_num_threads() -> int:
    """The number of worker threads used for chunk-parallel reads and writes.

    The value given to :func:`set_num_threads`; without one, the environment variable
    ``ZARR3C_NUM_THREADS`` (read at each call; a value that is not an integer counts as
    unset), else the machine's core count.

    Returns
    -------
    int
        At least 1.

    See Also
    --------
    set_num_threads

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.get_num_threads() >= 1
    True
    """
    return _num_threads if _num_threads is not None else _default_threads()


def set_num_threads(n: int | None) -> None:
    """Set the number of worker threads used for chunk-parallel reads and writes.

    The pool is replaced (and the pool of :meth:`~zarr3c.Array.read_async`'s reads): work
    already running on the old one finishes there.  With one thread, every read and write
    runs in the calling thread.  Native reads use at most ``n`` threads, the reading one
    included.

    Parameters
    ----------
    n : int or None
        The number of threads (1 or more).  None: back to the default
        (``ZARR3C_NUM_THREADS``, else the core count).

    Raises
    ------
    InvalidArgumentError
        If ``n`` is not a positive int or None.

    See Also
    --------
    get_num_threads

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.set_num_threads(1)
    >>> zarr3c.get_num_threads()
    1
    >>> zarr3c.set_num_threads(None)
    """
    global _pool, _num_threads, _submit_pool
    if n is not None and (not isinstance(n, int) or n < 1):
        raise InvalidArgumentError(f"number of threads must be a positive int, got {n!r}")
    with _pool_lock:
        old, _pool = _pool, None
        _num_threads = n
    with _submit_lock:  # (the pool of submitted reads is sized alike)
        old_submitted, _submit_pool = _submit_pool, None
    for pool in (old, old_submitted):
        if pool is not None:
            pool.shutdown(wait=False)


def _executor() -> ThreadPoolExecutor:
    """The shared pool, created on first use with :func:`get_num_threads` threads."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(get_num_threads(), thread_name_prefix="zarr3c")
        return _pool


_submit_lock = threading.Lock()
_submit_pool: ThreadPoolExecutor | None = None


def submit(fn: Callable[..., R], *args: Any) -> Future[R]:
    """Run ``fn(*args)`` on the pool of submitted reads and return its future.

    A pool of its own (:func:`get_num_threads` threads, made on first use), apart from the
    chunk pool that reads fan out on: a submitted read that fans out never waits for a
    thread held by another submitted read.

    Parameters
    ----------
    fn
        What to run (an array read).
    *args
        Its arguments.

    Returns
    -------
    concurrent.futures.Future
        Its result, or the exception it raised.

    Raises
    ------
    None
        ``fn``'s exceptions are the future's.

    Examples
    --------
    >>> from zarr3c.concurrency import submit
    >>> submit(sum, [1, 2, 3]).result()
    6
    """
    global _submit_pool
    with _submit_lock:
        if _submit_pool is None:
            _submit_pool = ThreadPoolExecutor(get_num_threads(),
                                              thread_name_prefix="zarr3c-submitted")
        pool = _submit_pool
    return pool.submit(fn, *args)


def _reset_after_fork() -> None:
    """Forget the pool and the locks in a forked child.

    A forked child (multiprocessing's default start method on Linux) inherits the pool and
    the locks but not the threads that run or hold them: without this, its first
    chunk-parallel read would wait forever on the parent's workers.
    """
    global _pool, _pool_lock, _locks_guard, _submit_pool, _submit_lock
    _pool = None
    _pool_lock = threading.Lock()
    _submit_pool = None
    _submit_lock = threading.Lock()
    _locks_guard = threading.Lock()
    _locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


_in_worker = threading.local()


def in_worker() -> bool:
    """Whether this thread is running items of :func:`map_unordered` (where a nested
    fan-out runs inline, in this thread).

    Returns
    -------
    bool

    Examples
    --------
    >>> in_worker()
    False
    """
    return getattr(_in_worker, "active", False)


def _run_in_worker(fn: Callable[[T], R], item: T) -> R:
    """``fn(item)`` with this thread marked as a worker (see :func:`in_worker`)."""
    _in_worker.active = True
    try:
        return fn(item)
    finally:
        _in_worker.active = False


def map_unordered(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """Apply ``fn`` to every item, in parallel when there is more than one, and wait.

    Runs inline for a single item, with one thread, or when called from a worker (nested
    fan-out would otherwise deadlock a bounded pool).  Otherwise the calling thread and up to
    ``get_num_threads() - 1`` pool threads take items one at a time from the shared iterator:
    one pool task per thread rather than per item, since a future and the hand-offs between
    threads cost about as much as reading a small chunk (tracked by the asv benchmark
    ``bench_array_io.Read.time_vindex``).  Items are drawn as they are needed, so a
    generator of tasks (a whole write's chunk plan) is never held whole.  Every item runs even
    when one raises; the first exception (or one from ``items`` itself, after which no item is
    taken) is re-raised after all have finished, so no task is still writing when the caller
    sees it.  Ctrl-C stops the threads from taking new items (and is re-raised once the
    running ones have finished).

    Parameters
    ----------
    fn : callable
        Called once per item.
    items : iterable
        The items, drawn lazily.

    Returns
    -------
    list
        ``fn(item)`` for every item, in the items' order.

    Raises
    ------
    Exception
        The first exception ``fn`` (or iterating ``items``) raised, once every running item
        has finished.

    Examples
    --------
    >>> map_unordered(lambda x: x * x, range(5))
    [0, 1, 4, 9, 16]
    """
    source = iter(items)
    threads = get_num_threads()
    # Up to one item per thread first: fewer items than threads need fewer pool tasks.
    head = [] if threads == 1 else list(itertools.islice(source, threads))
    if len(head) <= 1 or in_worker():
        return [fn(item) for item in itertools.chain(head, source)]
    numbered = enumerate(itertools.chain(head, source))
    results: list[Any] = []
    errors: list[BaseException] = []
    stop: list[BaseException] = []  # non-empty: take no more items
    take = threading.Lock()  # the shared iterator is advanced by one thread at a time

    def work(_: object) -> None:
        """Take items from the shared iterator and run them until none is left (or stop)."""
        while not stop:
            with take:
                try:
                    i, item = next(numbered)
                except StopIteration:
                    return
                except BaseException as exc:  # noqa: BLE001 - items failed: take no more
                    errors.append(exc)
                    stop.append(exc)
                    return
                results.append(None)  # slot i, filled below
            try:
                results[i] = fn(item)
            except Exception as exc:  # noqa: BLE001 - re-raised by the caller; the rest run
                errors.append(exc)
            except BaseException as exc:  # Ctrl-C and the like: no new items
                errors.append(exc)
                stop.append(exc)
                return

    pool = _executor()
    futures = [pool.submit(_run_in_worker, work, None) for _ in range(len(head) - 1)]
    try:
        _run_in_worker(work, None)  # the caller works too, as a worker (nested runs inline)
    except BaseException as exc:  # noqa: BLE001 - Ctrl-C between items: stop the others
        errors.append(exc)
        stop.append(exc)
    # Pool tasks that have not started have nothing left to take; the others are waited for,
    # even through Ctrl-C.
    for fut in futures:
        fut.cancel()
    for fut in futures:
        while True:
            try:
                if not fut.cancelled():
                    fut.result()
                break
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)
    if errors:
        raise errors[0]
    return results


class Beside:
    """A call :func:`run_beside` handed to a pool thread; :meth:`finish` once done with it.

    Parameters
    ----------
    future : concurrent.futures.Future
        The pool's future of the call.
    """

    __slots__ = ("_future",)

    def __init__(self, future: Future[Any]) -> None:
        self._future = future

    def finish(self) -> None:
        """Drop the call if no thread has started it, else wait for it to end (its answer
        and any exception are dropped: it only helps).

        Examples
        --------
        >>> started = run_beside(sum, [1, 2])
        >>> if started is not None:
        ...     started.finish()
        """
        if not self._future.cancel():
            wait([self._future])


def run_beside(fn: Callable[..., Any], *args: Any) -> Beside | None:
    """Start ``fn(*args)`` on a pool thread, to overlap work that only helps the calling
    thread's (taking the page faults of a buffer it is about to fill).

    Parameters
    ----------
    fn : callable
        The helping call; its result and exceptions are dropped.
    *args
        Its arguments.

    Returns
    -------
    Beside or None
        The started call, which the caller must :meth:`~Beside.finish` once its own work is
        done; None, and nothing started, with one thread or in a pool worker (whose pool
        threads are busy with the same fan-out).

    Examples
    --------
    >>> import numpy as np
    >>> buf = np.empty(1 << 20, dtype=np.uint8)
    >>> started = run_beside(buf.fill, 0)
    >>> if started is not None:
    ...     started.finish()
    """
    if get_num_threads() < 2 or in_worker():
        return None
    try:
        return Beside(_executor().submit(fn, *args))
    except RuntimeError:  # the pool was shut down meanwhile (set_num_threads): no help
        return None


#: map_parts' parts per thread: enough that a slow part does not hold the others up
_PARTS_PER_THREAD = 4


def map_parts(fn: Callable[[list[T]], R], items: Sequence[T]) -> list[R]:
    """``fn`` of each of a few consecutive parts of ``items`` (:data:`_PARTS_PER_THREAD`
    per thread, one on one thread), in parallel as :func:`map_unordered`.

    For work whose per-item step is short enough that handing the GIL between threads at
    every item would cost more than the step: ``fn`` does a part in one call without it.

    Parameters
    ----------
    fn : callable
        Called with a list of consecutive items.
    items : sequence
        The items.

    Returns
    -------
    list
        ``fn(part)`` for every part, in the parts' order (empty for no items).

    Raises
    ------
    Exception
        The first exception ``fn`` raised, as :func:`map_unordered`.

    Examples
    --------
    >>> sum(map_parts(sum, list(range(100))))
    4950
    """
    threads = get_num_threads()
    nparts = 1 if threads == 1 or in_worker() else min(len(items), threads * _PARTS_PER_THREAD)
    if nparts <= 1:
        return [fn(list(items))] if items else []
    size = -(-len(items) // nparts)
    return map_unordered(fn, [list(items[i:i + size]) for i in range(0, len(items), size)])


class _RefLock:
    """A lock and the number of :func:`chunk_lock` callers using it (freed at zero)."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


_locks_guard = threading.Lock()
_locks: dict[tuple[Any, str], _RefLock] = {}


def store_lock_id(store: Any) -> Any:
    """What identifies a store's data for locking (``Store.lock_id``).

    Two store objects over the same data (a store and its read-only twin, two LocalStores
    of one directory) have the same one, so their writers share chunk locks.

    Parameters
    ----------
    store : Store
        The store.

    Returns
    -------
    hashable

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> store_lock_id(store) == store_lock_id(store.with_read_only(True))
    True
    """
    return store.lock_id


@contextmanager
def chunk_lock(store: Any, key: str) -> Iterator[None]:
    """Hold the lock of ``key`` in ``store`` for a read-modify-write.

    First the process-wide lock (created on demand, freed when unused), which serialises
    threads; then the store's own cross-process lock (``store.key_lock(key)``, a no-op unless
    the store offers one, e.g. ``LocalStore(root, process_locks=True)``).

    Parameters
    ----------
    store : Store
        The store holding ``key``.
    key : str
        The key read, changed and written under the lock.

    Raises
    ------
    StoreError
        If the store's cross-process lock cannot be taken.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> with chunk_lock(store, "c/0"):
    ...     store.set("c/0", b"new")
    """
    ident = (store_lock_id(store), key)
    with _locks_guard:
        ref = _locks.get(ident)
        if ref is None:
            ref = _locks[ident] = _RefLock()
        ref.users += 1
    try:
        with ref.lock, store.key_lock(key):
            yield
    finally:
        with _locks_guard:
            ref.users -= 1
            if ref.users == 0:
                _locks.pop(ident, None)


@contextmanager
def chunk_locks(store: Any, keys: Sequence[str], *, key_locks: bool = True
                ) -> Iterator[None]:
    """Hold the locks of all ``keys`` in ``store`` at once, as :func:`chunk_lock` holds one.

    The process-wide locks are taken in key order, so that two callers holding several
    keys (or one, through :func:`chunk_lock`) cannot deadlock; the bookkeeping is done once
    for all keys rather than per key (a native write holds a batch of chunks).

    Parameters
    ----------
    store : Store
        The store holding ``keys``.
    keys : sequence of str
        The keys written under the locks (repeats are held once).
    key_locks : bool, default True
        Whether to take the store's cross-process locks too (``store.key_lock``); False
        where the caller knows the store has none (a call per key saved).

    Raises
    ------
    StoreError
        If the store's cross-process lock of a key cannot be taken (the locks taken are
        released).

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> with chunk_locks(store, ["c/1", "c/0"]):
    ...     store.set("c/0", b"new")
    """
    lock_id = store_lock_id(store)
    ordered = sorted(set(keys))
    with _locks_guard:
        refs = []
        for key in ordered:
            ref = _locks.get((lock_id, key))
            if ref is None:
                ref = _locks[(lock_id, key)] = _RefLock()
            ref.users += 1
            refs.append(ref)
    held = 0
    try:
        with ExitStack() as store_locks:
            for ref in refs:
                ref.lock.acquire()
                held += 1
            for key in ordered if key_locks else ():
                store_locks.enter_context(store.key_lock(key))
            yield
    finally:
        for ref in refs[:held]:
            ref.lock.release()
        with _locks_guard:
            for key, ref in zip(ordered, refs, strict=True):
                ref.users -= 1
                if ref.users == 0:
                    _locks.pop((lock_id, key), None)
