"""Array.get_many: many basic selections read at once, each chunk (shard index, inner chunk)
read and decoded once; numpy is the oracle."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import BoundsCheckError, InvalidTypeError

# Every test on both read paths: the native pipeline and the Python path.
pytestmark = pytest.mark.usefixtures("read_path")

LAYOUTS = {
    "regular": {"chunks": (4, 5)},
    "rectilinear": {"chunks": [[3, 1, 6, 4], [5, 2, 9]]},
    "sharded": {"chunks": (2, 3), "shards": (4, 6)},
}


class CountingStore(zarr3c.MemoryStore):
    """Counts the reads of every key (whole values and byte ranges alike)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    def get(self, key):
        self.reads[key] += 1
        return super().get(key)

    def get_partial_values(self, key_ranges):
        key_ranges = list(key_ranges)
        for key, _ in key_ranges:
            self.reads[key] += 1
        return super().get_partial_values(key_ranges)


def _array(layout: str, store=None):
    data = np.arange(14 * 16, dtype=np.int32).reshape(14, 16)
    a = zarr3c.create_array(store if store is not None else "memory://", shape=data.shape,
                            dtype="int32", fill_value=-7, **LAYOUTS[layout])
    a[...] = data
    a[4:8, 0:6] = -7  # leaves missing chunks (and, sharded, a missing shard)
    data[4:8, 0:6] = -7
    return a, data


def _index(n: int) -> st.SearchStrategy:
    ints = st.integers(-n, n - 1)
    bound = st.none() | st.integers(-n - 2, n + 2)
    steps = st.none() | st.integers(1, 4) | st.integers(-4, -1)
    return ints | st.builds(slice, bound, bound, steps)


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_index(14), _index(16)) | st.just(Ellipsis), min_size=0,
                max_size=12))
def test_get_many_equals_numpy_per_selection(layout: str, selections: list) -> None:
    a, data = _array(layout)
    got = a.get_many(selections)
    assert len(got) == len(selections)
    for sel, value in zip(selections, got, strict=True):
        expected = data[sel]
        assert np.shape(value) == np.shape(expected), sel
        np.testing.assert_array_equal(value, expected)
        assert type(value) is type(a[sel])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_overlapping_selections_read_each_key_once(layout: str) -> None:
    store = CountingStore()
    a, data = _array(layout, store)
    selections = [(slice(0, 3), slice(0, 4)), (slice(1, 2), slice(2, 3)), (0, slice(None, 4)),
                  (slice(2, 0, -1), slice(3, 1, -1))] * 5
    store.reads.clear()
    got = a.get_many(selections)
    for sel, value in zip(selections, got, strict=True):
        np.testing.assert_array_equal(value, data[sel])
    # A chunk: one read.  A shard read in part: one request for its index, then one batched
    # request for the inner chunks every selection needs.
    assert store.reads and max(store.reads.values()) == (2 if layout == "sharded" else 1), (
        store.reads)


def test_a_bad_selection_is_refused_before_anything_is_read() -> None:
    store = CountingStore()
    a, _ = _array("regular", store)
    store.reads.clear()
    with pytest.raises(BoundsCheckError, match="axis 1"):
        a.get_many([(0, 0), (0, 16)])
    assert not store.reads


@pytest.mark.parametrize("selections", [5, "0:3", None], ids=["int", "str", "none"])
def test_selections_must_be_an_iterable(selections) -> None:
    a, _ = _array("regular")
    with pytest.raises(InvalidTypeError, match="iterable of selections"):
        a.get_many(selections)


def test_selections_may_come_from_a_generator() -> None:
    a, data = _array("regular")
    got = a.get_many((i, slice(None, 3)) for i in range(3))
    for i, value in enumerate(got):
        np.testing.assert_array_equal(value, data[i, :3])


def test_boxes_sharing_chunks_with_general_selections_are_read_once() -> None:
    # Chunks are (4, 5): a step-2 slice (general path) reads chunk (0, 0); the first box
    # spans chunks (0, 0) and (0, 1), the second lies in (0, 1) only: it must follow the
    # first box to the general path, so that no key is read twice.
    store = CountingStore()
    a, data = _array("regular", store)
    selections = [(slice(0, 4, 2), slice(0, 5)), (1, slice(3, 7)), (2, slice(6, 9)),
                  (slice(8, 12), slice(10, 15))]  # the last box shares nothing: short path
    store.reads.clear()
    got = a.get_many(selections)
    for sel, value in zip(selections, got, strict=True):
        np.testing.assert_array_equal(value, data[sel])
    assert store.reads and max(store.reads.values()) == 1, store.reads
