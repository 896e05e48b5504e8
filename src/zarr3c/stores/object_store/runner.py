"""One asyncio event loop, on a daemon thread of its own, that runs every ObjectStore's
concurrent requests.

obstore's asynchronous functions (``get_async``, ``head_async``, ...) return awaitables that
need a running asyncio loop; zarr3c's store interface is synchronous and is called from many
threads at once (the array layer's thread pool).  So the store hands each batch of requests, as
one coroutine, to this loop and waits for its result: the requests of a batch are in flight
together (bounded by the store's semaphore), while the calling threads block as they would on
a synchronous read.

obstore's own runtime (tokio's threads) does not survive ``fork``: a child forked after the
parent used obstore hangs on its first request (https://github.com/tokio-rs/tokio/issues/4301).
:func:`check_fork` turns that hang into a :class:`~zarr3c.errors.StoreError`; processes
started with ``spawn`` or ``forkserver`` (Dask's default) unpickle their stores and work.

The loop is stopped and its thread joined at exit (``atexit``), while the interpreter is
still whole: a daemon thread woken in the loop while the interpreter finalizes (by a
callback from one of tokio's threads) can abort the process after its work is done, as
other Rust-backed Python libraries found (lancedb/lancedb#4175).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Coroutine
from typing import Any, NamedTuple, TypeVar

from zarr3c.errors import StoreError

__all__ = ["check_fork", "event_loop", "run"]

_T = TypeVar("_T")


class _Loop(NamedTuple):
    pid: int
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread


_lock = threading.Lock()
_current: _Loop | None = None
#: The process that first used obstore through zarr3c (inherited by forked children).
_used_by: int | None = None


def check_fork() -> None:
    """Note that this process uses obstore; refuse where it was forked from one that did.

    Raises
    ------
    StoreError
        In a process forked after its parent used obstore (whose runtime would hang).

    Examples
    --------
    >>> check_fork()
    """
    global _used_by
    pid = os.getpid()
    if _used_by is None:
        _used_by = pid
    elif _used_by != pid:
        raise StoreError(
            "ObjectStore cannot be used in a process forked after its parent used obstore "
            "(obstore's runtime does not survive fork and would hang): start worker processes "
            "with 'spawn' or 'forkserver' (multiprocessing.get_context('spawn'); Dask's "
            "default), or fork before the first request"
        )


def _forget_in_child() -> None:
    """After ``fork``: the parent's loop thread does not exist in the child, and the lock
    may have been held by a thread that does not either."""
    global _lock, _current
    _lock = threading.Lock()
    _current = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _stop_at_exit() -> None:
    """Stop this process's loop and wait (briefly) for its thread to end."""
    current = _current
    if current is None or current.pid != os.getpid() or not current.thread.is_alive():
        return
    current.loop.call_soon_threadsafe(current.loop.stop)
    current.thread.join(timeout=5.0)


atexit.register(_stop_at_exit)


def event_loop() -> asyncio.AbstractEventLoop:
    """This process's loop for obstore requests, started on first use.

    Returns
    -------
    asyncio.AbstractEventLoop
        A loop running forever on a daemon thread.

    Examples
    --------
    >>> import asyncio
    >>> isinstance(event_loop(), asyncio.AbstractEventLoop), event_loop() is event_loop()
    (True, True)
    """
    global _current
    with _lock:
        if (_current is None or _current.pid != os.getpid()
                or not _current.thread.is_alive()):
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="zarr3c-obstore", daemon=True
            )
            thread.start()
            _current = _Loop(os.getpid(), loop, thread)
        return _current.loop


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` on :func:`event_loop` and wait for its result in the calling thread.

    Parameters
    ----------
    coro
        The coroutine (a batch of requests).

    Returns
    -------
    object
        What ``coro`` returns.

    Raises
    ------
    StoreError
        In a process forked after its parent used obstore (:func:`check_fork`).
    Exception
        What ``coro`` raises.

    Examples
    --------
    >>> import asyncio
    >>> run(asyncio.sleep(0, result=42))
    42
    """
    try:
        check_fork()
    except StoreError:
        coro.close()  # never awaited: no warning about it
        raise
    loop = event_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop).result()
