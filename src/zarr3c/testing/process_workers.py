"""Process targets for zarr3c's multi-process tests (race and crash tests).

They live in the package, not in ``tests/``, so that ``multiprocessing``'s ``spawn`` start
method can import them in the child (the tests run with ``--import-mode=importlib``, which
makes test modules unimportable by name)::

    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=write_elements, args=(root, ["a"], 0, 64, True, barrier))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarr3c.api import open_array
from zarr3c.stores.local import LocalStore

__all__ = ["crash_value", "crash_writer", "write_elements", "write_region"]


def write_elements(root: str, paths: list[str], start: int, stop: int, process_locks: bool,
                   barrier: Any) -> None:
    """For each array in ``paths``: after every writer reached ``barrier``, write
    ``a[i] = i + 1`` for ``start <= i < stop``, one element at a time."""
    store = LocalStore(root, process_locks=process_locks)
    for path in paths:
        a = open_array(store, path, mode="r+")
        barrier.wait()
        for i in range(start, stop):
            a[i] = i + 1


def write_region(root: str, path: str, start: int, stop: int, repeat: int,
                 barrier: Any) -> None:
    """Write ``a[start:stop] = arange(start, stop) + 1`` ``repeat`` times (a plain store: for
    chunk-aligned regions), after every writer reached ``barrier``."""
    a = open_array(LocalStore(root), path, mode="r+")
    value = np.arange(start, stop, dtype=a.dtype) + 1
    barrier.wait()
    for _ in range(repeat):
        a[start:stop] = value


def crash_value(generation: int, chunk: int, chunk_len: int) -> np.ndarray:
    """What :func:`crash_writer` stores in ``chunk`` at ``generation``: recognisable whole."""
    base = (generation * 1_000_003 + chunk) * chunk_len
    return np.arange(base, base + chunk_len, dtype="int64")


def crash_writer(root: str, path: str, n_chunks: int, chunk_len: int, first_generation: int,
                 go: Any, ready: Any) -> None:
    """Wait for ``go``, then rewrite every chunk with ever newer generations until killed;
    ``ready`` is set once the first chunk of the first generation is stored."""
    a = open_array(LocalStore(root), path, mode="r+")
    go.wait()
    generation = first_generation
    while True:
        for c in range(n_chunks):
            a[c * chunk_len:(c + 1) * chunk_len] = crash_value(generation, c, chunk_len)
            if not ready.is_set():
                ready.set()
        generation += 1
