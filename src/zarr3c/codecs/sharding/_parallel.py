"""When a shard's inner chunks are encoded or decoded in the thread pool, and how.

A shard below :data:`_PARALLEL_MIN_BYTES` is handled in the calling thread: handing tiny
tasks to the pool costs more than it saves.  Larger ones go to the pool in a few consecutive
parts (:func:`~zarr3c.concurrency.map_parts`), so a shard of many small inner chunks costs a
few task hand-offs, not one per inner chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zarr3c.concurrency import map_parts

# Below this many bytes per shard, inner chunks are encoded/decoded in the calling thread.
# (Read at call time: tests set it to 0 to exercise the pool on small shards.)
_PARALLEL_MIN_BYTES = 1 << 20


def in_parallel(nbytes: int) -> bool:
    """Whether a shard's work of ``nbytes`` is worth handing to the thread pool."""
    return nbytes >= _PARALLEL_MIN_BYTES


def fan_out(fn: Callable[[Any], Any], items: list[Any], nbytes: int) -> list[Any]:
    """``[fn(x) for x in items]``, in the thread pool when the shard (``nbytes``) is big
    enough to gain (see :func:`fan_out_parts`)."""
    done = fan_out_parts(lambda part: [fn(x) for x in part], items, nbytes)
    return [r for results in done for r in results]


def fan_out_parts(fn: Callable[[list[Any]], Any], items: list[Any], nbytes: int) -> list[Any]:
    """``fn`` of a few consecutive parts of ``items`` in the thread pool when the shard
    (``nbytes``) is big enough to gain, else ``[fn(items)]``: its results in order."""
    if len(items) <= 1 or not in_parallel(nbytes):
        return [fn(items)]
    return map_parts(fn, items)
