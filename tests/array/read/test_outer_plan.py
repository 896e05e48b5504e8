"""The outer-product plans of the native pipeline (``plan.plan_outer_grid``,
``plan.outer_chunks``, ``OuterChunks.take``), executed piece by piece with the reference
``copy_outer`` over a padded array cut into chunks: each selection's part of the one
output buffer must be numpy's ``np.ix_`` of the array, whatever the selections (index
arrays with repeats, in any order; stepped, reversed and integer slices), the chunks and the
order the chunks are taken in."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels._reference import copy_outer
from zarr3c.array.read.plan import outer_chunks, outer_chunks_at_most, plan_outer_grid
from zarr3c.indexing import parse_orthogonal_selection


def _key(draw: Any, n: int) -> Any:
    kind = draw(st.sampled_from(["indices", "slice", "int"]))
    if kind == "indices":
        return np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    start = draw(st.one_of(st.none(), st.integers(-n, n)))
    stop = draw(st.one_of(st.none(), st.integers(-n, n)))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    return slice(start, stop, step)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), ndim=st.integers(1, 3), nsel=st.integers(1, 3))
def test_outer_plans_read_what_numpy_reads(data: st.DataObject, ndim: int, nsel: int) -> None:
    shape = tuple(data.draw(st.integers(1, 11)) for _ in range(ndim))
    chunk = tuple(data.draw(st.integers(1, 5)) for _ in range(ndim))
    itemsize = 2
    src = np.random.default_rng(data.draw(st.integers(0, 99))).integers(
        0, 60000, shape).astype("<u2")
    padded = np.zeros([-(-n // c) * c for n, c in zip(shape, chunk, strict=True)], "<u2")
    padded[tuple(slice(0, n) for n in shape)] = src
    keys, sels = [], []
    for _ in range(nsel):
        key = tuple(_key(data.draw, n) for n in shape)
        sel = parse_orthogonal_selection(key, shape)
        if sel.size:
            keys.append(key)
            sels.append(sel)
    if not sels:
        return
    sizes = [int(np.prod(sel.counts)) for sel in sels]
    bases = np.cumsum([0, *sizes]).tolist()
    grids = [plan_outer_grid(sel, chunk, itemsize, base * itemsize)
             for sel, base in zip(sels, bases, strict=False)]
    assert all(g is not None for g in grids)  # (small: within the plan's budget)
    for sel, grid in zip(sels, grids, strict=True):
        assert grid is not None and len(grid.coords) <= outer_chunks_at_most(sel, chunk)
    plan = outer_chunks(grids)  # type: ignore[arg-type]
    assert len({tuple(c) for c in plan.coords.tolist()}) == len(plan.coords)  # (once each)
    order = np.array(data.draw(st.permutations(range(len(plan.coords)))), dtype=np.int64)
    plan = plan.take(order)
    out = np.zeros(bases[-1], "<u2")
    dst = out.view(np.uint8)
    for u, coords in enumerate(plan.coords.tolist()):
        block = np.ascontiguousarray(padded[tuple(
            slice(c * n, (c + 1) * n) for c, n in zip(coords, chunk, strict=True))])
        for p in range(int(plan.firsts[u]), int(plan.ends[u])):
            lo, hi = int(plan.grid.bounds[p]), int(plan.grid.bounds[p + 1])
            copy_outer(block.reshape(-1).view(np.uint8), plan.grid.src_offsets[lo:hi], dst,
                       plan.grid.dst_offsets[lo:hi], plan.grid.counts[p], itemsize)
    for key, sel, lo, hi in zip(keys, sels, bases, bases[1:], strict=False):
        axes = [np.arange(n)[k] if not isinstance(k, int) else np.array([k % n])
                for k, n in zip(key, shape, strict=True)]
        np.testing.assert_array_equal(out[lo:hi].reshape(sel.counts), src[np.ix_(*axes)])
