"""Tests of zarr3c._kernels.shard.check_shard_index against its numpy twin and by hand.

Oracles: hand-built indexes with one known defect each, and, for random indexes (valid ones,
written as a writer lays them out, and corrupted ones), the reference twin in
:mod:`zarr3c._kernels._reference`: both must report the same code and entries.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import shard

IMPLS = [pytest.param(shard, id="cython"), pytest.param(ref, id="reference")]
M = 2**64 - 1


def entries(rows: list[tuple[int, int]]) -> np.ndarray:
    return np.array(rows, dtype=np.uint64).reshape(-1, 2)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    ("rows", "size", "lo", "hi", "expected"),
    [
        ([(0, 10), (10, 5), (M, M)], 19, 15, 19, (0, -1, -1)),
        ([(0, 10), (M, 5)], 19, 15, 19, (1, 1, -1)),
        ([(0, 10), (100, 5)], 19, 15, 19, (2, 1, -1)),
        ([(0, 10), (100, 5)], -1, -1, -1, (0, -1, -1)),
        ([(0, 10), (M - 3, 5)], -1, -1, -1, (2, 1, -1)),
        ([(0, 16), (16, 0)], 19, 15, 19, (3, 0, -1)),
        ([(20, 4), (0, 4)], -1, 0, 4, (3, 1, -1)),
        ([(0, 10), (5, 3)], 19, 15, 19, (4, 0, 1)),
        ([(8, 4), (0, 10), (M, M)], 30, 26, 30, (4, 1, 0)),
        ([(4, 0), (4, 4), (4, 0)], 12, 8, 12, (0, -1, -1)),
        # half missing wins over an earlier entry outside the shard
        ([(100, 5), (0, M)], 19, 15, 19, (1, 1, -1)),
        ([], 0, 0, 0, (0, -1, -1)),
    ],
)
def test_known_defects(impl, rows, size, lo, hi, expected):
    assert tuple(impl.check_shard_index(entries(rows), size, lo, hi)) == expected


@pytest.mark.parametrize("impl", IMPLS)
def test_bad_arguments(impl):
    with pytest.raises(ValueError):
        impl.check_shard_index(np.zeros((2, 3), dtype=np.uint64), 10, -1, -1)
    with pytest.raises(ValueError):
        impl.check_shard_index(entries([(0, 1)]), -2, -1, -1)
    with pytest.raises(ValueError):
        impl.check_shard_index(entries([(0, 1)]), 10, 5, 4)
    with pytest.raises(ValueError):
        impl.check_shard_index(entries([(0, 1)]), 10, -1, 4)


@st.composite
def indexes(draw):
    """A shard laid out by a writer (some chunks missing, some empty, maybe shuffled), then
    maybe corrupted in a few entries."""
    n = draw(st.integers(0, 40))
    index_n = n * 16 + 4
    at_start = draw(st.booleans())
    pos = index_n if at_start else 0
    rows = []
    for _ in range(n):
        kind = draw(st.sampled_from(["stored", "stored", "missing", "empty"]))
        if kind == "missing":
            rows.append((M, M))
        elif kind == "empty":
            rows.append((pos, 0))
        else:
            k = draw(st.integers(1, 50))
            rows.append((pos, k))
            pos += k
    size = pos + (0 if at_start else index_n)
    if rows and draw(st.booleans()):  # stored out of C order
        perm = draw(st.permutations(range(n)))
        rows = [rows[i] for i in perm]
    for _ in range(draw(st.integers(0, 3)) if rows else 0):
        i = draw(st.integers(0, n - 1))
        col = draw(st.integers(0, 1))
        value = draw(st.sampled_from([M, 0, 1, size, size + 1, M - 1])
                     | st.integers(0, size + 20))
        row = list(rows[i])
        row[col] = value
        rows[i] = tuple(row)
    known = draw(st.booleans())
    bounds = (0, index_n) if at_start else ((size - index_n, size) if known else (-1, -1))
    return entries(rows), size if known else -1, *bounds


@settings(max_examples=300, deadline=None)
@given(indexes())
def test_matches_reference(case):
    e, size, lo, hi = case
    assert tuple(shard.check_shard_index(e, size, lo, hi)) == ref.check_shard_index(
        e, size, lo, hi)


def test_read_only_input():
    e = entries([(0, 4), (2, 4)])
    e.setflags(write=False)
    assert tuple(shard.check_shard_index(e, 10, -1, -1)) == (4, 0, 1)
