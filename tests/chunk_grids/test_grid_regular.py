"""The regular chunk grid: parsing, geometry (the v3 spec's regular grid examples), projections via the kernels."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.chunk_grids import RegularChunkGrid, RegularDimension, parse_chunk_grid
from zarr3c.errors import MetadataError, UnknownExtensionError

FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "conformance"
    / "zarr-python-zarr-metadata-fixtures"
    / "v3"
    / "chunk_grid"
)

HAVE_KERNELS = importlib.util.find_spec("zarr3c._kernels.grid") is not None
needs_kernels = pytest.mark.skipif(not HAVE_KERNELS, reason="zarr3c._kernels.grid not built")


def grid_doc(chunk_shape: Any) -> dict[str, Any]:
    return {"name": "regular", "configuration": {"chunk_shape": chunk_shape}}


# -- parsing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[1], [10, 20], [5, 10, 15], [], [2**63 - 1]])
def test_parse_and_write(shape: list[int]) -> None:
    g = parse_chunk_grid(grid_doc(shape), ndim=len(shape))
    assert isinstance(g, RegularChunkGrid)
    assert g.chunk_shape == tuple(shape)
    assert g.ndim == len(shape)
    assert g.to_dict() == grid_doc(shape)
    assert RegularChunkGrid.from_dict(g.to_dict(), ndim=len(shape)) == g


GRID_ERRORS = [
    (grid_doc([0]), 1, MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    (grid_doc([4, -1]), 2, MetadataError, "chunk_grid.configuration.chunk_shape[1]"),
    (grid_doc([4, 4, True]), 3, MetadataError, "chunk_grid.configuration.chunk_shape[2]"),
    (grid_doc([2.0]), 1, MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    (grid_doc(["2"]), 1, MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    (grid_doc([None]), 1, MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    (grid_doc([2**63]), 1, MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    (grid_doc(5), 1, MetadataError, "chunk_grid.configuration.chunk_shape"),
    (grid_doc({"0": 1}), 1, MetadataError, "chunk_grid.configuration.chunk_shape"),
    (grid_doc([2, 2]), 3, MetadataError, "chunk_grid.configuration.chunk_shape"),
    (grid_doc([2, 2]), 1, MetadataError, "chunk_grid.configuration.chunk_shape"),
    ({"name": "regular"}, 1, MetadataError, "chunk_grid.configuration"),
    ({"name": "regular", "configuration": None}, 1, MetadataError, "chunk_grid.configuration"),
    ({"name": "regular", "configuration": {}}, 1, MetadataError,
     "chunk_grid.configuration.chunk_shape"),
    ({"name": "regular", "configuration": {"chunk_shape": [1], "separator": "/"}}, 1,
     MetadataError, "'separator'"),
    ({"name": "regular", "configuration": {"chunk_shape": [1]}, "extra": 1}, 1, MetadataError,
     "'extra'"),
    ("regular", 1, MetadataError, "chunk_grid.configuration"),
    ({"name": "rectangular", "configuration": {"chunk_shape": [1]}}, 1, UnknownExtensionError,
     "rectangular"),
    ({"name": 3, "configuration": {"chunk_shape": [1]}}, 1, MetadataError, "chunk_grid.name"),
    ({"configuration": {"chunk_shape": [1]}}, 1, MetadataError, "chunk_grid.name"),
    ([1, 2], 2, MetadataError, "chunk_grid"),
    (None, 1, MetadataError, "chunk_grid"),
]


@pytest.mark.parametrize(
    "data, ndim, error, fragment",
    GRID_ERRORS,
    ids=[
        "zero", "negative", "bool", "float", "string", "null-entry", "too-large", "not-list",
        "object", "rank-too-small", "rank-too-large", "no-configuration", "null-configuration",
        "no-chunk_shape", "unknown-config-key", "unknown-top-key", "bare-name", "unknown-name",
        "name-not-str", "no-name", "not-object", "null",
    ],
)
def test_parse_errors(data: Any, ndim: int, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        parse_chunk_grid(data, ndim=ndim, source="arr/zarr.json")
    assert fragment in str(info.value)
    assert "arr/zarr.json" in str(info.value)


def test_class_from_dict_checks_its_name() -> None:
    with pytest.raises(MetadataError, match=r"chunk_grid\.name"):
        RegularChunkGrid.from_dict({"name": "other", "configuration": {"chunk_shape": [1]}},
                                   ndim=1)


def test_conformance_fixture_cases() -> None:
    cases_file = FIXTURES / "regular" / "cases.json"
    if not cases_file.is_file():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    cases = json.loads(cases_file.read_text())
    assert cases
    for name, doc in cases.items():
        ndim = len(doc["configuration"]["chunk_shape"])
        g = parse_chunk_grid(doc, ndim=ndim, source=name)
        assert g.to_dict() == doc


# -- geometry -------------------------------------------------------------------------------------


def test_spec_example_grid_shape_and_location() -> None:
    # Seed 002: shape (10, 200, 3000), chunks (5, 20, 400) -> grid (2, 10, 8); element
    # (7, 150, 900) is in chunk (1, 7, 2) at (2, 10, 100).
    g = RegularChunkGrid.from_dict(grid_doc([5, 20, 400]), ndim=3)
    assert g.grid_shape((10, 200, 3000)) == (2, 10, 8)
    assert g.nchunks((10, 200, 3000)) == 160
    dims = g.dimensions((10, 200, 3000))
    assert dims == (RegularDimension(5, 10), RegularDimension(20, 200), RegularDimension(400, 3000))
    assert [d.nchunks for d in dims] == [2, 10, 8]
    if HAVE_KERNELS:
        located = [d.locate(np.array([c])) for d, c in zip(dims, (7, 150, 900), strict=True)]
        assert [int(ci[0]) for ci, _ in located] == [1, 7, 2]
        assert [int(li[0]) for _, li in located] == [2, 10, 100]


def test_edge_chunks_are_full_size() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([16, 16]), ndim=2)
    assert g.grid_shape((30, 30)) == (2, 2)
    assert g.chunk_shape_at((0, 1)) == (16, 16)
    assert g.chunk_shape_at((1, 1)) == (16, 16)
    assert g.chunk_origin((1, 1)) == (16, 16)
    assert g.chunk_origin((0, 1)) == (0, 16)
    d = g.dimensions((30, 30))[1]
    assert d.chunk_length(1) == 16
    assert d.chunk_offset(1) == 16


def test_zero_length_dimension_has_no_chunks() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([4, 3]), ndim=2)
    assert g.grid_shape((0, 7)) == (0, 3)
    assert g.nchunks((0, 7)) == 0
    assert list(g.iter_chunk_coords((0, 7))) == []
    assert g.dimensions((0, 7))[0].nchunks == 0


def test_zero_dimensional_array_has_one_chunk() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([]), ndim=0)
    assert g.grid_shape(()) == ()
    assert g.nchunks(()) == 1
    assert list(g.iter_chunk_coords(())) == [()]
    assert g.chunk_shape_at(()) == ()
    assert g.chunk_origin(()) == ()


def test_iter_chunk_coords_is_c_order() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([4, 3]), ndim=2)
    coords = list(g.iter_chunk_coords((10, 7)))
    assert coords == list(itertools.product(range(3), range(3)))
    assert coords == sorted(coords)


def test_huge_shapes_are_exact() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([2**40, 3]), ndim=2)
    assert g.grid_shape((2**62, 2**62)) == (2**22, -(-(2**62) // 3))
    assert g.chunk_origin((2**22 - 1, 5)) == ((2**22 - 1) * 2**40, 15)


def test_rank_mismatch_in_geometry_is_an_error() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([4, 3]), ndim=2)
    for call in (g.grid_shape, g.dimensions, g.resized, g.iter_chunk_coords):
        with pytest.raises(MetadataError, match="chunk_grid"):
            call((10,))


def test_resized_returns_the_same_grid() -> None:
    g = RegularChunkGrid.from_dict(grid_doc([4, 3]), ndim=2)
    assert g.resized((100, 200)) is g


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 50), st.integers(0, 200)), min_size=0, max_size=4)
)
def test_grid_shape_is_ceil_division(dims: list[tuple[int, int]]) -> None:
    chunks = [c for c, _ in dims]
    shape = [n for _, n in dims]
    g = RegularChunkGrid.from_dict(grid_doc(chunks), ndim=len(dims))
    gs = g.grid_shape(shape)
    for c, n, k in zip(chunks, shape, gs, strict=True):
        # k chunks cover the dimension, k - 1 do not.
        assert k * c >= n
        assert (k - 1) * c < n or k == 0
    total = int(np.prod(gs, dtype=object))
    assert g.nchunks(shape) == total
    if total <= 5000:
        coords = list(g.iter_chunk_coords(shape))
        assert len(coords) == total
        assert all(all(0 <= c < k for c, k in zip(cc, gs, strict=True)) for cc in coords)


# -- projections (compiled kernels) ---------------------------------------------------------------


def _reference_projection(start: int, step: int, count: int, size: int) -> list[list[int]]:
    rows: list[list[int]] = []
    for pos in range(count):
        x = start + pos * step
        ci, li = divmod(x, size)
        if rows and rows[-1][0] == ci:
            rows[-1][2] += 1
        else:
            rows.append([ci, li, 1, pos])
    return rows


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(1, 20),
    start=st.integers(0, 100),
    step=st.integers(1, 30),
    count=st.integers(0, 40),
)
def test_project_slice_matches_reference(size: int, start: int, step: int, count: int) -> None:
    d = RegularDimension(size, start + step * count + 1)
    out = d.project_slice(start, step, count)
    assert out.dtype == np.int64
    assert out.shape[1] == 4
    assert out.tolist() == _reference_projection(start, step, count, size)


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(size=st.integers(1, 20), indices=st.lists(st.integers(0, 1000), max_size=30))
def test_locate_matches_divmod(size: int, indices: list[int]) -> None:
    d = RegularDimension(size, 1001)
    chunk_index, local_index = d.locate(np.array(indices, dtype=np.int64))
    assert chunk_index.dtype == np.int64 and local_index.dtype == np.int64
    assert chunk_index.tolist() == [i // size for i in indices]
    assert local_index.tolist() == [i % size for i in indices]


@needs_kernels
def test_locate_accepts_other_integer_arrays() -> None:
    d = RegularDimension(4, 100)
    ci, li = d.locate(np.array([[3, 9]], dtype=np.int32))
    assert ci.tolist() == [0, 2] and li.tolist() == [3, 1]
