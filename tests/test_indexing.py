"""Selection parsing and chunk planning, checked against numpy and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.chunk_grids import RegularChunkGrid
from zarr3c.errors import BoundsCheckError, IndexingError
from zarr3c.indexing import parse_basic_selection, plan_chunks


def _slices(length: int) -> st.SearchStrategy[slice]:
    bound = st.one_of(st.none(), st.integers(-length - 3, length + 3))
    step = st.one_of(st.none(), st.integers(-5, 5).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@st.composite
def shape_and_key(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple]:
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=0, max_size=4)))
    key = []
    for n in shape:
        if n > 0 and draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(_slices(n)))
    return shape, tuple(key)


@settings(max_examples=300, deadline=None)
@given(shape_and_key())
def test_selected_elements_match_numpy(case: tuple) -> None:
    shape, key = case
    ref = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    sel = parse_basic_selection(key, shape)
    assert sel.out_shape == ref[key].shape
    # Rebuild the selection from the normalised dims and compare element by element.
    idx = []
    for d in sel.dims:
        r = np.arange(d.start, d.start + d.step * d.count, d.step)[: d.count]
        idx.append(r[::-1] if d.reverse else r)
    got = ref[np.ix_(*idx)] if idx else ref
    np.testing.assert_array_equal(got.reshape(sel.out_shape), ref[key])


@settings(max_examples=200, deadline=None)
@given(shape_and_key(), st.data())
def test_plan_covers_selection_exactly_once(case: tuple, data: st.DataObject) -> None:
    shape, key = case
    chunks = tuple(data.draw(st.integers(1, 4)) for _ in shape)
    grid = RegularChunkGrid(chunk_shape=chunks)
    sel = parse_basic_selection(key, shape)
    ref = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = ref[key].reshape(sel.counts) if sel.size else None
    out = np.full(sel.counts, -1, dtype=np.int64)
    hits = np.zeros(sel.counts, dtype=np.int64)
    for task in plan_chunks(sel, grid.dimensions(shape)):
        origin = [c * s for c, s in zip(task.coords, chunks)]
        assert task.strided
        for pos in np.ndindex(*task.counts):
            src = tuple(o + ls + p * st_ for o, (ls, st_), p in zip(origin, task.local, pos))
            dst = tuple(os_ + p * d for (os_, d), p in zip(task.out, pos))
            out[dst] = ref[src]
            hits[dst] += 1
    if sel.size:
        assert (hits == 1).all()
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ((0, 0, 0), IndexingError),
        ((..., ...), IndexingError),
        (slice(None, None, 0), IndexingError),
        (5, BoundsCheckError),
        (-6, BoundsCheckError),
        ((0, 3), BoundsCheckError),
        (1.5, IndexingError),
        ("a", IndexingError),
        (True, IndexingError),
        ([1, 2], IndexingError),
        (slice(0.5, 2), IndexingError),
    ],
    ids=["too-many", "two-ellipses", "zero-step", "oob", "oob-negative", "oob-axis1", "float",
         "string", "bool", "list", "float-slice"],
)
def test_bad_selections(key: object, error: type[Exception]) -> None:
    with pytest.raises(error) as info:
        parse_basic_selection(key, (5, 3))
    assert isinstance(info.value, IndexError)


def test_bounds_error_names_axis() -> None:
    with pytest.raises(BoundsCheckError, match="axis 1"):
        parse_basic_selection((0, 7), (5, 3))
