"""The reads of :meth:`zarr3c.Array.read_async`: a queue per array, drained in batches.

A **queue** (:class:`ReadQueue`) holds one array's submitted reads, each a selection and the
future its result goes to (a :class:`QueuedRead`).  One **drain** at a time (a task on the
pool of submitted reads, :func:`zarr3c.concurrency.submit`) takes everything queued (up to
:data:`MAX_BATCH` reads) and reads it with one :func:`.many.get_many` call, so reads issued
together that touch the same chunk read and decode it once, and the batch's chunks spread
over the chunk pool (on native threads where the chain is native).  Reads queued while a
batch runs make the next batch.  A read issued alone is a batch of one: no waiting for
company.

This is what tensorstore's futures do by sharing a chunk's in-flight read among the reads
waiting for it; asv's ``bench_array_io.Read.time_random_reads_async`` tracks it.

When a batch fails, its reads run one by one, so each future gets its own result or error.
Selections ``get_many`` does not take (integer or boolean arrays) run one by one too.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, NamedTuple

from zarr3c.array.read.many import get_many
from zarr3c.concurrency import submit
from zarr3c.indexing import selection_kind

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["MAX_BATCH", "QueuedRead", "ReadQueue"]

#: The most reads one ``get_many`` call takes: the first results come back while later
#: reads still queue, and a batch's scratch stays bounded.
MAX_BATCH = 4096


class QueuedRead(NamedTuple):
    """One submitted read: what ``a[selection]`` would return goes to ``future``."""

    selection: Any
    future: Future[Any]


class ReadQueue:
    """One array's submitted reads and whether a drain is running.

    Parameters
    ----------
    array
        The array the reads are of.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> from zarr3c.array.read.queued import ReadQueue
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8", chunks=(2,))
    >>> a[...] = np.arange(4)
    >>> ReadQueue(a).submit(np.s_[1:3]).result().tolist()
    [1, 2]
    """

    def __init__(self, array: Array) -> None:
        self._array = array
        self._reset()

    def _reset(self) -> None:
        # Also in a forked child: the parent's lock may have been held by a thread the child
        # does not have, and its queued reads are the parent's to finish.
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._queued: list[QueuedRead] = []
        self._draining = False

    def submit(self, selection: Any) -> Future[Any]:
        """Queue ``array[selection]`` and return its future; start a drain if none runs.

        Parameters
        ----------
        selection
            Any selection ``array[...]`` takes.

        Returns
        -------
        concurrent.futures.Future
            Its ``result()`` is what ``array[selection]`` returns, or raises what it raises.

        Raises
        ------
        None
            A read's errors are its future's.

        Examples
        --------
        >>> import zarr3c
        >>> from zarr3c.array.read.queued import ReadQueue
        >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="int8", chunks=(2,),
        ...                         fill_value=7)
        >>> ReadQueue(a).submit(0).result()
        np.int8(7)
        """
        if self._pid != os.getpid():
            self._reset()
        future: Future[Any] = Future()
        with self._lock:
            self._queued.append(QueuedRead(selection, future))
            start = not self._draining
            self._draining = True
        if start:
            submit(self._drain)
        return future

    def _take(self) -> list[QueuedRead]:
        with self._lock:
            batch = self._queued[:MAX_BATCH]
            del self._queued[:MAX_BATCH]
            if not batch:
                self._draining = False
            return batch

    def _drain(self) -> None:
        while batch := self._take():
            self._run(batch)

    def _run(self, batch: list[QueuedRead]) -> None:
        # A cancelled future is left out (and never started).
        live = [q for q in batch if q.future.set_running_or_notify_cancel()]
        ndim = self._array.ndim
        basic = []
        for q in live:
            if _is_basic(q.selection, ndim):
                basic.append(q)
            else:
                _settle(q.future, self._array.__getitem__, q.selection)
        try:
            results = get_many(self._array, [q.selection for q in basic])
        except BaseException:
            # Which read failed is unknown: read one by one, each getting its own outcome.
            for q in basic:
                _settle(q.future, self._array.__getitem__, q.selection)
        else:
            for q, result in zip(basic, results, strict=True):
                q.future.set_result(result)


def _is_basic(selection: Any, ndim: int) -> bool:
    """Whether ``get_many`` takes ``selection`` (ints, slices, ``...``, ``None``)."""
    try:
        return selection_kind(selection, ndim) == "basic"
    except Exception:  # (an invalid key: its own read raises the right error)
        return False


def _settle(future: Future[Any], read: Any, selection: Any) -> None:
    try:
        result = read(selection)
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)
