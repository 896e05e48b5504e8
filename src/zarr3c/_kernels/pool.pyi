"""The native thread pool that executes read and write plans without the GIL (contract;
pool.pyx).  The ``cdef`` entry points (``run_tasks``, ``thread_buffer``, ``thread_value``)
are for other kernels (pool.pxd); these are for tests."""

import numpy as np
from numpy.typing import NDArray

def spread(
    n: int, nthreads: int, spin: int = 0
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Run ``n`` tasks on up to ``nthreads`` threads: ``(serials, runs)``, the number of
    the thread that ran each task and how many times each ran (1).  ValueError if n < 0."""

def threads_started() -> int:
    """How many pool threads this process has started (they are kept)."""
