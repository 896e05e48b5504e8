"""Tests of zarr3c._kernels.grid.box_in_chunk, the short path's planner for reads inside one
chunk.  Oracles: the reference twin (``slice.indices``) and numpy (the box it names is what
numpy's basic indexing selects, and lies in the chunk it names)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import grid

IMPLS = [pytest.param(grid, id="cython"), pytest.param(ref, id="reference")]

bound = st.one_of(st.none(), st.integers(-12, 12), st.sampled_from([-(10**30), 10**30]))
entry = st.one_of(
    st.integers(-12, 12),
    st.builds(slice, bound, bound),
    st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, -1])),
    st.sampled_from([Ellipsis, None, True, np.int64(1), 1.0, [1], slice(1.0, 2)]),
)


@st.composite
def cases(draw: Any) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 10), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    key = draw(st.one_of(entry, st.lists(entry, max_size=ndim + 1).map(tuple)))
    return key, shape, chunks


@settings(max_examples=400, deadline=None)
@given(cases())
def test_twin_and_numpy_agree(case: Any) -> None:
    key, shape, chunks = case
    got = grid.box_in_chunk(key, shape, chunks)
    assert got == ref.box_in_chunk(key, shape, chunks)
    if got is None:
        return
    coords, start, counts, out_shape = got
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = a[key]
    assert np.shape(expected) == out_shape
    origin = [c * n + s for c, n, s in zip(coords, chunks, start, strict=True)]
    box = a[tuple(slice(o, o + n) for o, n in zip(origin, counts, strict=True))]
    np.testing.assert_array_equal(box.reshape(out_shape), expected)
    for o, n, c, size in zip(origin, counts, coords, chunks, strict=True):
        assert n >= 1 and c * size <= o and o + n <= (c + 1) * size


@pytest.mark.parametrize("impl", IMPLS)
def test_examples(impl: Any) -> None:
    s = (slice(10, 14), 5, slice(-3, None))
    assert impl.box_in_chunk(s, (256, 256, 256), (64, 64, 64)) == (
        (0, 0, 3), (10, 5, 61), (4, 1, 3), (4, 3))
    assert impl.box_in_chunk(slice(60, 70), (256,), (64,)) is None  # crosses a boundary
    assert impl.box_in_chunk(5, (256, 256), (64, 64)) is None  # a whole row: 4 chunks
    assert impl.box_in_chunk(7, (5,), (5,)) is None  # out of bounds: the general path says so
    assert impl.box_in_chunk((), (), ()) == ((), (), (), ())


@pytest.mark.parametrize("impl", IMPLS)
def test_bad_chunk_shape(impl: Any) -> None:
    with pytest.raises(ValueError, match="box_in_chunk"):
        impl.box_in_chunk(1, (5,), (5, 5))
    with pytest.raises(ValueError, match="box_in_chunk"):
        impl.box_in_chunk(1, (5,), (0,))
