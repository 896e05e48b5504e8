"""Tests of zarr3c._kernels.grid.basic_box, the short path's parser for step-1 boxes.
Oracles: the reference twin (``slice.indices``) and numpy (the box it names is what numpy's
basic indexing selects, with numpy's result shape, and a scalar exactly when numpy gives
one)."""

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
    st.just(Ellipsis),
    st.sampled_from([None, True, np.int64(1), 1.0, [1], slice(1.0, 2), np.arange(2)]),
)


@st.composite
def cases(draw: Any) -> tuple[Any, tuple[int, ...]]:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 10), min_size=ndim, max_size=ndim)))
    key = draw(st.one_of(entry, st.lists(entry, max_size=ndim + 2).map(tuple)))
    return key, shape


@settings(max_examples=500, deadline=None)
@given(cases())
def test_twin_and_numpy_agree(case: Any) -> None:
    key, shape = case
    got = grid.basic_box(key, shape)
    assert got == ref.basic_box(key, shape)
    if got is None:
        return
    start, stop, out_shape, scalar = got
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = a[key]
    assert np.shape(expected) == out_shape
    assert scalar == (not isinstance(expected, np.ndarray))
    box = a[tuple(slice(lo, hi) for lo, hi in zip(start, stop, strict=True))]
    np.testing.assert_array_equal(box.reshape(out_shape), expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_examples(impl: Any) -> None:
    assert impl.basic_box((slice(10, 14), 5, slice(-3, None)), (256, 256, 256)) == (
        (10, 5, 253), (14, 6, 256), (4, 3), False)
    assert impl.basic_box((1, ..., 3), (4, 5, 6)) == ((1, 0, 3), (2, 5, 4), (5,), False)
    assert impl.basic_box((1, 2, 3, ...), (4, 5, 6)) == ((1, 2, 3), (2, 3, 4), (), False)
    assert impl.basic_box((1, 2, 3), (4, 5, 6)) == ((1, 2, 3), (2, 3, 4), (), True)
    assert impl.basic_box(7, (5,)) is None  # out of bounds: the general path says so
    assert impl.basic_box(slice(3, 3), (5,)) is None  # empty: the general path
    assert impl.basic_box((..., ...), (5,)) is None
    assert impl.basic_box((1, 2), (5,)) is None  # too many indices
    assert impl.basic_box((), ()) == ((), (), (), True)
