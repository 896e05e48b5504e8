"""Array.read_async: submitted reads queue per array and are read in get_many batches
(``zarr3c.array.read.queued``); numpy is the oracle, and each future keeps its own outcome."""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.array.read import queued
from zarr3c.errors import BoundsCheckError

pytestmark = pytest.mark.usefixtures("read_path")

LAYOUTS = {
    "regular": {"chunks": (4, 5)},
    "sharded": {"chunks": (2, 3), "shards": (4, 6)},
}


class GatedStore(zarr3c.MemoryStore):
    """Counts the reads of every key; while ``gate`` is clear, the first chunk read waits
    (so the reads submitted meanwhile queue behind a running drain)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

    def _wait(self, key: str) -> None:
        if not key.endswith("zarr.json") and not self.gate.is_set():
            self.waiting.set()
            self.gate.wait(10)

    def get(self, key):
        self._wait(key)
        self.reads[key] += 1
        return super().get(key)

    def get_many(self, keys):
        keys = list(keys)
        for key in keys:
            self._wait(key)
            self.reads[key] += 1
        return super().get_many(keys)

    def get_partial_values(self, key_ranges):
        key_ranges = list(key_ranges)
        for key, _ in key_ranges:
            self._wait(key)
            self.reads[key] += 1
        return super().get_partial_values(key_ranges)


def _array(layout: str, store=None, dtype: str = "int32"):
    data = np.arange(14 * 16).reshape(14, 16).astype(dtype)
    a = zarr3c.create_array(store if store is not None else "memory://", shape=data.shape,
                            dtype=dtype, **LAYOUTS[layout])
    a[...] = data
    return a, data


def _index(n: int) -> st.SearchStrategy:
    ints = st.integers(-n - 1, n)  # (out of bounds at both ends too)
    bound = st.none() | st.integers(-n - 2, n + 2)
    steps = st.none() | st.integers(1, 3) | st.integers(-3, -1)
    arrays = st.lists(st.integers(-n, n - 1), min_size=1, max_size=4).map(np.array)
    return ints | st.builds(slice, bound, bound, steps) | arrays


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_index(14), _index(16)), min_size=1, max_size=10))
def test_each_future_holds_what_its_read_gives(layout: str, selections: list) -> None:
    """Basic, fancy and invalid selections mixed in one batch: each future's result (or
    error) is that of ``a[sel]`` alone."""
    a, data = _array(layout)
    futures = [a.read_async(s) for s in selections]
    for sel, future in zip(selections, futures, strict=True):
        try:
            expected = data[sel]
        except IndexError:
            with pytest.raises(zarr3c.errors.IndexingError):
                future.result()
            continue
        value = future.result()
        np.testing.assert_array_equal(value, expected)
        assert type(value) is type(a[sel])


def test_reads_issued_together_read_each_chunk_once() -> None:
    """64 reads of one chunk, queued while the first read's drain waits: two reads of the
    chunk in all (the first batch's, then the batch of the 63 others), not 64."""
    store = GatedStore()
    a, data = _array("regular", store)
    store.reads.clear()
    store.gate.clear()
    first = a.read_async(np.s_[0, 0])
    assert store.waiting.wait(10)
    rest = [a.read_async(np.s_[i % 4, 0:5]) for i in range(63)]
    store.gate.set()
    assert first.result() == data[0, 0]
    for i, future in enumerate(rest):
        np.testing.assert_array_equal(future.result(), data[i % 4, 0:5])
    assert store.reads == Counter({"c/0/0": 2})


def test_a_batch_holding_a_failing_read_still_answers_the_others() -> None:
    store = GatedStore()
    a, data = _array("sharded", store)
    store.gate.clear()
    first = a.read_async(np.s_[0, 0])
    assert store.waiting.wait(10)
    good = [a.read_async(np.s_[i, 1:9]) for i in range(14)]
    bad = a.read_async(np.s_[14, 0])
    wrong_type = a.read_async("x")
    store.gate.set()
    assert first.result() == data[0, 0]
    for i, future in enumerate(good):
        np.testing.assert_array_equal(future.result(), data[i, 1:9])
    with pytest.raises(BoundsCheckError):
        bad.result()
    with pytest.raises(zarr3c.errors.IndexingError):
        wrong_type.result()


def test_a_cancelled_read_is_never_run() -> None:
    store = GatedStore()
    a, data = _array("regular", store)
    store.gate.clear()
    first = a.read_async(np.s_[0, 0])
    assert store.waiting.wait(10)
    cancelled = a.read_async(np.s_[13, 15])
    kept = a.read_async(np.s_[5, 6])
    assert cancelled.cancel()
    store.reads.clear()
    store.gate.set()
    assert first.result() == data[0, 0] and kept.result() == data[5, 6]
    assert cancelled.cancelled()
    assert "c/3/3" not in store.reads  # (the chunk only the cancelled read needs)


def test_batches_are_at_most_max_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real = queued.get_many

    def spy(array, selections):
        sizes.append(len(selections))
        return real(array, selections)

    monkeypatch.setattr(queued, "get_many", spy)
    monkeypatch.setattr(queued, "MAX_BATCH", 5)
    store = GatedStore()
    a, data = _array("regular", store)
    store.gate.clear()
    first = a.read_async(np.s_[0, 0])
    assert store.waiting.wait(10)
    rest = [a.read_async(np.s_[i % 14, :]) for i in range(23)]
    store.gate.set()
    first.result()
    for i, future in enumerate(rest):
        np.testing.assert_array_equal(future.result(), data[i % 14, :])
    assert sizes == [1, 5, 5, 5, 5, 3]


def test_strings_read_async_too() -> None:
    a = zarr3c.create_array("memory://", shape=(10,), dtype=str, chunks=(3,))
    words = np.array([f"w{i}" * i for i in range(10)], dtype=object)
    a[...] = words
    futures = [a.read_async(np.s_[i:]) for i in range(10)] + [a.read_async([1, 7])]
    for i in range(10):
        assert futures[i].result().tolist() == words[i:].tolist()
    assert futures[10].result().tolist() == [words[1], words[7]]


def test_reads_issued_from_many_threads_all_land() -> None:
    a, data = _array("sharded")
    rng = np.random.default_rng(3)
    keys = [(slice(int(i), int(i) + 3), slice(int(j), int(j) + 4))
            for i, j in zip(rng.integers(0, 12, 200), rng.integers(0, 13, 200), strict=True)]
    results: dict[int, np.ndarray] = {}

    def issue(start: int) -> None:
        futures = [(n, a.read_async(keys[n])) for n in range(start, 200, 8)]
        for n, future in futures:
            results[n] = future.result()

    threads = [threading.Thread(target=issue, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 200
    for n, key in enumerate(keys):
        np.testing.assert_array_equal(results[n], data[key])
