"""The floor of a whole read's output on many cores: 256 MiB copied into fresh pages (first
touch) or into pages already touched, by 1..16 threads (numpy's copy releases the GIL)."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

N = 256 << 20


def best_copy(pool: ThreadPoolExecutor, n: int, src: np.ndarray, fresh: bool) -> float:
    """The fastest of 3 copies of ``src`` into a new buffer over ``n`` threads, in ms."""
    bounds = np.linspace(0, N, n + 1).astype(int)
    best = float("inf")
    for _ in range(3):
        out = np.empty(N, np.uint8)
        if not fresh:
            out.fill(0)
        parts = [(out[lo:hi], src[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        start = time.perf_counter()
        list(pool.map(lambda part: np.copyto(*part), parts))
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    src = np.ones(N, np.uint8)
    for n in (1, 2, 4, 8, 16):
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(lambda i: None, range(n)))  # (threads started before timing)
            fresh, touched = best_copy(pool, n, src, True), best_copy(pool, n, src, False)
        print(f"copy 256 MiB threads={n}: fresh pages {fresh:.1f} ms, touched {touched:.1f} ms",
              flush=True)


if __name__ == "__main__":
    main()
