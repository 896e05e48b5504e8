"""Reads of many whole chunks through the Python paths from a store whose every read is a
request (``Store.reads_by_request``): their stored values are fetched ahead with one
``get_many`` per batch (``chunk.read_chunks_together``), and small shards whole
(``general._shard_sources``), then decoded; the results equal numpy's and the same reads
from a store read chunk by chunk, missing chunks and shards read as the fill value, and
damaged or oversized values are errors naming their key.

The proxy tests (``tests/stores/test_store_obstore.py``) count the requests on a real object
store; here a memory store that says it reads by request records its calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import ChunkDecodeError, OversizedValueError


class RequestStore(zarr3c.MemoryStore):
    """A memory store whose reads count as requests: it records each ``get_many`` batch and
    each single read of a chunk or shard."""

    reads_by_request = True

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.singles: list[str] = []
        self._inside = False

    def get_many(self, keys: Any) -> Any:
        keys = list(keys)
        if not self._inside:
            self.batches.append(keys)
        return super().get_many(keys)

    def get_many_at_most(self, keys: Any, limit: int) -> Any:
        keys = list(keys)
        self.batches.append(keys)
        self._inside = True  # (the base class's may read through get_many)
        try:
            return super().get_many_at_most(keys, limit)
        finally:
            self._inside = False

    def get_partial_values(self, key_ranges: Any) -> Any:
        key_ranges = list(key_ranges)
        self.singles.extend(k for k, _ in key_ranges)
        return super().get_partial_values(key_ranges)

    def read_value_into(self, key: str, out: Any) -> int | None:
        self.singles.append(key)
        return super().read_value_into(key, out)

    def read_tail_into(self, key: str, out: Any) -> int | None:
        self.singles.append(key)
        return super().read_tail_into(key, out)

    def reset(self) -> None:
        self.batches, self.singles = [], []


def _pair(shape: tuple[int, ...], chunks: tuple[int, ...], shards: Any, compressed: bool,
          missing: int) -> tuple[np.ndarray, zarr3c.Array, zarr3c.Array, RequestStore]:
    """The same array (every ``missing``-th chunk or shard erased) in a RequestStore and a
    plain MemoryStore."""
    data = np.arange(int(np.prod(shape)), dtype="<i4").reshape(shape) * 7 - 5
    out = []
    for store in (RequestStore(), zarr3c.MemoryStore()):
        a = zarr3c.create_array(store, shape=shape, dtype=data.dtype, chunks=chunks,
                                shards=shards, fill_value=-1,
                                compressors="auto" if compressed else None)
        a[...] = data
        keys = sorted(k for k in store.list() if k.startswith("c/"))
        for k in keys[::missing]:
            store.erase(k)
        out.append(a)
    expected = out[1][...]
    return expected, out[0], out[1], out[0].store  # type: ignore[return-value]


@settings(max_examples=40, deadline=None)
@given(shards=st.sampled_from([None, (8, 8)]), compressed=st.booleans(),
       missing=st.integers(2, 5), data=st.data())
def test_oindex_and_strided_reads_equal_numpy(shards: Any, compressed: bool, missing: int,
                                              data: Any) -> None:
    expected, a, plain, store = _pair((24, 20), (4, 4), shards, compressed, missing)
    rows = data.draw(st.lists(st.integers(0, 23), min_size=1, max_size=8))
    cols = data.draw(st.lists(st.integers(0, 19), min_size=1, max_size=8))
    step = data.draw(st.integers(2, 7))
    np.testing.assert_array_equal(a.oindex[rows, cols], expected[np.ix_(rows, cols)])
    np.testing.assert_array_equal(a.oindex[rows, cols], plain.oindex[rows, cols])
    np.testing.assert_array_equal(a[::step, 1::step], expected[::step, 1::step])


def test_unsharded_chunks_are_fetched_in_one_batch() -> None:
    _, a, _, store = _pair((16, 16), (4, 4), None, True, 100)
    store.reset()
    a.oindex[[0, 5, 9, 13], [1, 6, 10, 14]]
    assert len(store.batches) == 1 and len(store.batches[0]) == 16
    assert store.singles == []


def test_small_shards_are_fetched_whole_in_one_batch() -> None:
    _, a, _, store = _pair((16, 16), (4, 4), (8, 8), True, 100)
    store.reset()
    a.oindex[[0, 9], [1, 14]]
    a[::3, ::5]
    assert [sorted(b) for b in store.batches] == [["c/0/0", "c/0/1", "c/1/0", "c/1/1"]] * 2
    assert store.singles == []


def test_batches_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr3c.array.read import chunk

    _, a, _, store = _pair((16, 16), (4, 4), None, True, 100)
    monkeypatch.setattr(chunk, "FETCH_BATCH_BYTES", 5 * 4 * 4 * 4)  # 5 chunks a batch
    store.reset()
    a.oindex[list(range(16)), [0, 4, 8, 12]]
    assert [len(b) for b in store.batches] == [5, 5, 5, 1]


def test_a_truncated_shard_names_its_key() -> None:
    _, a, _, store = _pair((16, 16), (4, 4), (8, 8), False, 100)
    raw = store.get("c/0/1")
    assert raw is not None
    store.set("c/0/1", bytes(raw)[:-7])
    with pytest.raises(ChunkDecodeError, match="c/0/1"):
        a.oindex[[0, 1], [9, 10]]


def test_an_oversized_chunk_is_refused_naming_its_key() -> None:
    _, a, _, store = _pair((16, 16), (4, 4), None, True, 100)
    store.set("c/1/1", bytes(1 << 20))  # larger than any encoding of a 64-byte chunk
    with pytest.raises(OversizedValueError, match="c/1/1"):
        a.oindex[[0, 5], [1, 6]]
