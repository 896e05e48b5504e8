"""The rectilinear chunk grid: parsing, validation, compact serialisation, geometry (the
extension's worked examples) and lookups through the kernels against numpy.

The extension, both revisions of it:
https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear
"""

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

from zarr3c import registry
from zarr3c.chunk_grids import (
    RectilinearChunkGrid,
    RectilinearDimension,
    RegularDimension,
    parse_chunk_grid,
    rectilinear,
)
from zarr3c.chunk_grids.rectilinear import MAX_EDGES_PER_DIMENSION
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


def grid_doc(chunk_shapes: Any, kind: Any = "inline") -> dict[str, Any]:
    return {"name": "rectilinear", "configuration": {"kind": kind, "chunk_shapes": chunk_shapes}}


def parse(chunk_shapes: list[Any]) -> RectilinearChunkGrid:
    g = parse_chunk_grid(grid_doc(chunk_shapes), ndim=len(chunk_shapes))
    assert isinstance(g, RectilinearChunkGrid)
    return g


# -- parsing --------------------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    assert registry.chunk_grids.get("rectilinear") is RectilinearChunkGrid
    assert "rectilinear" in registry.chunk_grids


def test_seed_000_example() -> None:
    # shape (6, 6, 6, 6, 6); every form sums exactly to 6.
    g = parse([[[2, 3]], [[1, 6]], [1, [2, 1], 3], [[1, 3], 3], [6]])
    assert g.chunk_shapes == ((2, 2, 2), (1,) * 6, (1, 2, 3), (1, 1, 1, 3), (6,))
    assert g.edges((6,) * 5) == g.chunk_shapes
    assert g.grid_shape((6,) * 5) == (3, 6, 3, 4, 1)


def test_seed_001_example() -> None:
    # The bare integer 4 expands to [4, 4]; [4, 4, 4] overflows the length 6 by a whole chunk.
    g = parse([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]])
    assert g.chunk_shapes == (4, (1, 2, 3), (4, 4), (1, 1, 1, 3), (4, 4, 4))
    assert g.edges((6,) * 5) == ((4, 4), (1, 2, 3), (4, 4), (1, 1, 1, 3), (4, 4, 4))
    # The chunk wholly outside the array ([8, 12) on the last axis) is not part of the grid.
    assert g.grid_shape((6,) * 5) == (2, 3, 2, 4, 2)
    assert g.nchunks((6,) * 5) == 2 * 3 * 2 * 4 * 2
    assert g.chunk_sizes((6,) * 5) == ((4, 2), (1, 2, 3), (4, 2), (1, 1, 1, 3), (4, 2))
    # Written back: the bare integer stays, runs become pairs, distinct edges stay plain.
    assert g.to_dict()["configuration"]["chunk_shapes"] == [
        4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [[4, 3]]
    ]


def test_round_trip_through_json() -> None:
    g = parse([[10, 20, 30, 40], 50, [[10, 5], 5, 5]])
    again = RectilinearChunkGrid.from_dict(json.loads(json.dumps(g.to_dict())), ndim=3)
    assert again == g
    assert again.chunk_shapes == g.chunk_shapes


def test_conformance_fixture_cases() -> None:
    cases_file = FIXTURES / "rectilinear" / "cases.json"
    if not cases_file.is_file():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    cases = json.loads(cases_file.read_text())
    assert set(cases) >= {"explicit_per_dim", "uniform_dim_shorthand", "with_rle_pair"}
    expected = {
        "explicit_per_dim": ((10, 20, 30, 40), (50,)),
        "uniform_dim_shorthand": ((10, 20, 30, 40), 50),
        "with_rle_pair": ((10,) * 5 + (5, 5), (15, 15)),
    }
    for name, doc in cases.items():
        g = parse_chunk_grid(doc, ndim=len(doc["configuration"]["chunk_shapes"]), source=name)
        assert g.chunk_shapes == expected[name], name
        # Written back in the compact form, it parses to the same edges.
        assert RectilinearChunkGrid.from_dict(g.to_dict(), ndim=g.ndim) == g


def test_tuples_and_numpy_integers_are_accepted() -> None:
    g = parse([(np.int64(3), (np.int32(2), 2)), np.uint8(5)])
    assert g.chunk_shapes == ((3, 2, 2), 5)


def test_empty_edge_list_only_fits_an_empty_dimension() -> None:
    # The JSON Schema allows an empty list; it covers a length of 0 and nothing more.
    g = parse([[], 3])
    assert g.grid_shape((0, 7)) == (0, 3)
    assert list(g.iter_chunk_coords((0, 7))) == []
    assert g.chunk_sizes((0, 7)) == ((0,), (3, 3, 1))
    with pytest.raises(MetadataError, match=r"chunk_shapes\[0\]"):
        g.grid_shape((1, 7))


def _err(chunk_shapes: Any, kind: Any = "inline") -> dict[str, Any]:
    return grid_doc(chunk_shapes, kind)


S = "chunk_grid.configuration.chunk_shapes"
GRID_ERRORS = [
    (_err([[0, 5]]), 1, f"{S}[0][0]", "dimension 0", "zero-edge"),
    (_err([[5, -1]]), 1, f"{S}[0][1]", "dimension 0", "negative-edge"),
    (_err([[2.5]]), 1, f"{S}[0][0]", "dimension 0", "fractional-edge"),
    (_err([[2.0]]), 1, f"{S}[0][0]", "dimension 0", "float-integral-edge"),
    (_err([4, [True, 5]]), 2, f"{S}[1][0]", "a boolean", "boolean-edge"),
    (_err([True]), 1, f"{S}[0]", "a boolean", "boolean-bare"),
    (_err([False]), 1, f"{S}[0]", "a boolean", "false-bare"),
    (_err([0]), 1, f"{S}[0]", "dimension 0", "zero-bare"),
    (_err([4, -3]), 2, f"{S}[1]", "dimension 1", "negative-bare"),
    (_err([1.5]), 1, f"{S}[0]", "dimension 0", "fractional-bare"),
    (_err([2**63]), 1, f"{S}[0]", "dimension 0", "bare-too-large"),
    (_err([[2**63]]), 1, f"{S}[0][0]", "dimension 0", "edge-too-large"),
    (_err([[[True, 3]]]), 1, f"{S}[0][0][0]", "a boolean", "rle-boolean-value"),
    (_err([[[5, True]]]), 1, f"{S}[0][0][1]", "a boolean", "rle-boolean-count"),
    (_err([[[5, 0]]]), 1, f"{S}[0][0][1]", "dimension 0", "rle-zero-count"),
    (_err([[[5, -2]]]), 1, f"{S}[0][0][1]", "dimension 0", "rle-negative-count"),
    (_err([[[5, 1.5]]]), 1, f"{S}[0][0][1]", "dimension 0", "rle-fractional-count"),
    (_err([[[0, 3]]]), 1, f"{S}[0][0][0]", "dimension 0", "rle-zero-value"),
    (_err([[[2.5, 3]]]), 1, f"{S}[0][0][0]", "dimension 0", "rle-fractional-value"),
    (_err([3, [1, [5, 2, 1]]]), 2, f"{S}[1][1]", "exactly [value, count]", "rle-three"),
    (_err([[[5]]]), 1, f"{S}[0][0]", "exactly [value, count]", "rle-one"),
    (_err([[[]]]), 1, f"{S}[0][0]", "exactly [value, count]", "rle-empty"),
    (_err([[[[5, 2], 1]]]), 1, f"{S}[0][0][0]", "dimension 0", "rle-nested"),
    (_err([["5"]]), 1, f"{S}[0][0]", "dimension 0", "string-edge"),
    (_err(["5"]), 1, f"{S}[0]", "dimension 0", "string-dimension"),
    (_err([None]), 1, f"{S}[0]", "dimension 0", "null-dimension"),
    (_err([{"a": 1}]), 1, f"{S}[0]", "dimension 0", "object-dimension"),
    (_err([[None]]), 1, f"{S}[0][0]", "dimension 0", "null-edge"),
    (_err([[[1, MAX_EDGES_PER_DIMENSION + 1]]]), 1, f"{S}[0]", "more than", "too-many-edges"),
    (_err([[2**62, 2**62]]), 1, f"{S}[0]", "2**63 - 1", "edge-sum-overflows"),
    (_err([[4], [4]]), 1, S, "2 entries but the array has 1", "rank-too-large"),
    (_err([[4]]), 2, S, "1 entries but the array has 2", "rank-too-small"),
    (_err(5), 1, S, "one entry per dimension", "not-a-list"),
    (_err({"0": [1]}), 1, S, "one entry per dimension", "object-chunk-shapes"),
    ({"name": "rectilinear", "configuration": {"chunk_shapes": [[1]]}}, 1,
     "chunk_grid.configuration.kind", "missing", "missing-kind"),
    (_err([[1]], kind="external"), 1, "chunk_grid.configuration.kind", "'external'",
     "unknown-kind"),
    (_err([[1]], kind=None), 1, "chunk_grid.configuration.kind", "None", "null-kind"),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[1]],
                                               "encoded_chunk_shapes": "x"}}, 1,
     "chunk_grid.configuration", "'encoded_chunk_shapes'", "unknown-config-key"),
    ({"name": "rectilinear", "configuration": {"kind": "inline"}}, 1, S, "missing",
     "missing-chunk-shapes"),
    ({"name": "rectilinear"}, 1, "chunk_grid.configuration", "configuration object",
     "no-configuration"),
    ({"name": "rectilinear", "configuration": None}, 1, "chunk_grid.configuration",
     "configuration object", "null-configuration"),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[1]]},
      "extra": 1}, 1, "chunk_grid", "'extra'", "unknown-top-key"),
    ("rectilinear", 1, "chunk_grid.configuration", "configuration object", "bare-name"),
]


@pytest.mark.parametrize(
    "data, ndim, where, fragment", [c[:4] for c in GRID_ERRORS], ids=[c[4] for c in GRID_ERRORS]
)
def test_parse_errors(data: Any, ndim: int, where: str, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        parse_chunk_grid(data, ndim=ndim, source="arr/zarr.json")
    message = str(info.value)
    assert f"{where}:" in message
    assert fragment in message
    assert "arr/zarr.json" in message
    assert info.value.path == where


def test_class_from_dict_checks_its_name() -> None:
    with pytest.raises(MetadataError, match=r"chunk_grid\.name"):
        RectilinearChunkGrid.from_dict({"name": "regular", "configuration": {}}, ndim=1)


def test_unknown_grid_name_is_unknown_extension() -> None:
    with pytest.raises(UnknownExtensionError, match="rectilinar"):
        parse_chunk_grid(grid_doc([[1]]) | {"name": "rectilinar"}, ndim=1)


SUM_ERRORS = [
    ([[2, 3]], (6,), 0, 5, "short-by-one"),
    ([4, [1, 1]], (9, 3), 1, 2, "second-dimension"),
    ([[]], (1,), 0, 0, "empty-list"),
    ([[[5, 2]], [[1, 3], 3]], (10, 7), 1, 6, "rle"),
]


@pytest.mark.parametrize(
    "chunk_shapes, shape, dim, total", [c[:4] for c in SUM_ERRORS],
    ids=[c[4] for c in SUM_ERRORS],
)
def test_edges_below_the_array_length(
    chunk_shapes: list[Any], shape: tuple[int, ...], dim: int, total: int
) -> None:
    g = parse(chunk_shapes)
    for call in (g.validate_shape, g.dimensions, g.grid_shape, g.edges, g.chunk_sizes):
        with pytest.raises(MetadataError) as info:
            call(shape)
        message = str(info.value)
        assert f"chunk_shapes[{dim}]" in message
        assert f"dimension {dim}" in message
        assert f"sum to {total}" in message
    with pytest.raises(MetadataError, match="arr/zarr.json"):
        g.validate_shape(shape, source="arr/zarr.json")


def test_validate_shape_checks_the_rank() -> None:
    with pytest.raises(MetadataError, match="2 entries but the array has 3"):
        parse([4, [4]]).validate_shape((4, 4, 4))


def test_direct_construction_is_validated() -> None:
    assert RectilinearChunkGrid(chunk_shapes=(3, [1, 2])).chunk_shapes == (3, (1, 2))
    for bad in ((0,), ((1, 0),), (-2,)):
        with pytest.raises(MetadataError, match="dimension 0"):
            RectilinearChunkGrid(chunk_shapes=bad)


# -- compact serialisation ------------------------------------------------------------------------

COMPACT = [
    ([[25, 25, 25, 25]], (100,), [25], "equal-exact"),
    ([[30, 30]], (45,), [30], "equal-last-overhangs"),
    ([[30, 30, 30]], (45,), [[[30, 3]]], "equal-whole-chunk-overflow"),
    ([[10, 20, 30]], (60,), [[10, 20, 30]], "distinct"),
    ([[10, 10, 10, 5]], (35,), [[[10, 3], 5]], "run-then-single"),
    ([[5, 10, 10]], (25,), [[5, [10, 2]]], "single-then-run"),
    ([[1, 1, 2, 2, 1]], (7,), [[[1, 2], [2, 2], 1]], "alternating-runs"),
    ([[7]], (7,), [7], "one-edge-exact"),
    ([[7]], (3,), [7], "one-edge-overhangs"),
    ([[7]], (0,), [[7]], "one-edge-empty-dimension"),
    ([6, [2, 2, 2]], (10, 6), [6, 2], "bare-and-list"),
    ([[1, 2, 3], 4], (6, 6), [[1, 2, 3], 4], "list-and-bare"),
]


@pytest.mark.parametrize(
    "chunks, shape, expected", [c[:3] for c in COMPACT], ids=[c[3] for c in COMPACT]
)
def test_from_chunks_writes_the_most_compact_exact_form(
    chunks: list[Any], shape: tuple[int, ...], expected: list[Any]
) -> None:
    g = RectilinearChunkGrid.from_chunks(chunks, shape)
    assert g.to_dict() == grid_doc(expected)
    again = RectilinearChunkGrid.from_dict(g.to_dict(), ndim=len(shape))
    expanded = tuple(
        (c,) * -(-n // c) if isinstance(c, int) else tuple(c)
        for c, n in zip(chunks, shape, strict=True)
    )
    assert again.edges(shape) == expanded


CHUNKS_ERRORS = [
    ([[0, 5]], (5,), "chunks[0][0]", "positive integer", "zero"),
    ([[5, -1]], (4,), "chunks[0][1]", "positive integer", "negative"),
    ([[2.5, 5]], (5,), "chunks[0][0]", "positive integer", "fractional"),
    ([[True, 5]], (5,), "chunks[0][0]", "a boolean", "boolean"),
    ([4, [[5, 2]]], (4, 10), "chunks[1][0]", "positive integer", "rle-pair-in-python"),
    ([[]], (0,), "chunks[0]", "at least one edge", "empty"),
    ([[2, 2]], (5,), "chunks[0]", "sum to 4, less than the array length 5", "sum-too-small"),
    ([[2, 3]], (5, 5), "chunks", "1 entries but the array has 2", "rank"),
    ([0, [5]], (5, 5), "chunks[0]", "positive integer", "zero-bare"),
    (["ab", [5]], (5, 5), "chunks[0]", "an int or a sequence", "string-dimension"),
]


@pytest.mark.parametrize(
    "chunks, shape, where, fragment", [c[:4] for c in CHUNKS_ERRORS],
    ids=[c[4] for c in CHUNKS_ERRORS],
)
def test_from_chunks_errors(chunks: Any, shape: tuple[int, ...], where: str,
                            fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        RectilinearChunkGrid.from_chunks(chunks, shape)
    assert info.value.path == where
    assert fragment in str(info.value)


@st.composite
def edges_and_length(draw: st.DrawFn) -> tuple[list[int], int]:
    # Runs of repeated values are likely, so the run-length encoding is exercised.
    values = draw(st.lists(st.integers(1, 9), min_size=1, max_size=6))
    repeats = draw(st.lists(st.integers(1, 4), min_size=len(values), max_size=len(values)))
    edges = [v for v, r in zip(values, repeats, strict=True) for _ in range(r)]
    total = sum(edges)
    # Lengths from 1 up to the sum (overflow by whole chunks included).
    length = draw(st.integers(1, total))
    return edges, length


@settings(max_examples=200, deadline=None)
@given(st.lists(edges_and_length(), min_size=1, max_size=3))
def test_compact_round_trip_property(dims: list[tuple[list[int], int]]) -> None:
    chunks = [e for e, _ in dims]
    shape = tuple(n for _, n in dims)
    g = RectilinearChunkGrid.from_chunks(chunks, shape)
    doc = json.loads(json.dumps(g.to_dict()))
    again = RectilinearChunkGrid.from_dict(doc, ndim=len(shape))
    # Reading it back gives the same edges.
    assert again.edges(shape) == tuple(tuple(e) for e in chunks)
    assert again == g
    for (edges, length), entry in zip(dims, doc["configuration"]["chunk_shapes"], strict=True):
        step = edges[0]
        bare_ok = len(set(edges)) == 1 and len(edges) == -(-length // step)
        assert isinstance(entry, int) == bare_ok
        if isinstance(entry, list):
            # Maximal runs: neighbours always differ, runs of two or more are pairs.
            values = [x[0] if isinstance(x, list) else x for x in entry]
            assert all(a != b for a, b in itertools.pairwise(values))
            assert all(x[1] >= 2 for x in entry if isinstance(x, list))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.integers(1, 50), st.lists(st.integers(1, 50), max_size=8)),
                min_size=0, max_size=4))
def test_to_dict_from_dict_is_identity(specs: list[Any]) -> None:
    g = RectilinearChunkGrid(chunk_shapes=tuple(s if isinstance(s, int) else tuple(s)
                                                for s in specs))
    assert RectilinearChunkGrid.from_dict(g.to_dict(), ndim=len(specs)) == g


# -- geometry -------------------------------------------------------------------------------------


def test_seed_001_worked_example() -> None:
    # Edges [[24, 14], [16, 10]]: index (36, 15) is in chunk (1, 0) at (12, 15) -- chunk i
    # covers [C[i-1], C[i]) (the text's "equals or exceeds" is off by one).
    g = parse([[24, 14], [16, 10]])
    assert g.chunk_index(0, 36) == (1, 12)
    assert g.chunk_index(1, 15) == (0, 15)
    # The boundaries themselves start the next chunk.
    assert g.chunk_index(0, 24) == (1, 0)
    assert g.chunk_index(1, 16) == (1, 0)
    assert g.chunk_index(0, 23) == (0, 23)
    with pytest.raises(IndexError):
        g.chunk_index(0, 38)
    if HAVE_KERNELS:
        d0, d1 = g.dimensions((38, 26))
        assert [x.tolist() for x in d0.locate(np.array([36, 24, 23]))] == [[1, 1, 0], [12, 0, 23]]
        assert [x.tolist() for x in d1.locate(np.array([15, 16]))] == [[0, 1], [15, 0]]


def test_zarr_extensions_readme_example() -> None:
    # Edges [[16, 10], [24, 14]]: (20, 15) -> chunk (1, 0) at (4, 15); chunk (0, 1) has shape
    # [16, 14] (the README's "[14, 16]" contradicts its own definition).
    g = parse([[16, 10], [24, 14]])
    assert g.chunk_index(0, 20) == (1, 4)
    assert g.chunk_index(1, 15) == (0, 15)
    assert g.chunk_shape_at((0, 1)) == (16, 14)
    assert g.chunk_origin((1, 1)) == (16, 24)


def test_geometry_with_overflow_and_bare_dimensions() -> None:
    g = parse([[10, 20, 30, 40], 7, [[5, 2], 1]])
    shape = (35, 20, 11)
    assert g.ndim == 3
    assert g.max_chunk_shape == (40, 7, 5)
    assert g.grid_shape(shape) == (3, 3, 3)
    assert g.chunk_shape_at((2, 2, 2)) == (30, 7, 1)
    assert g.chunk_origin((2, 2, 2)) == (30, 14, 10)
    assert g.chunk_sizes(shape) == ((10, 20, 5), (7, 7, 6), (5, 5, 1))
    assert g.edges(shape) == ((10, 20, 30, 40), (7, 7, 7), (5, 5, 1))
    assert sorted(g.distinct_chunk_shapes(shape)) == sorted(
        itertools.product([10, 20, 30], [7], [1, 5])
    )
    coords = list(g.iter_chunk_coords(shape))
    assert coords == list(itertools.product(range(3), range(3), range(3)))
    dims = g.dimensions(shape)
    assert isinstance(dims[0], RectilinearDimension)
    assert isinstance(dims[1], RegularDimension) and dims[1] == RegularDimension(7, 20)
    assert [dims[0].chunk_offset(i) for i in range(4)] == [0, 10, 30, 60]
    assert [dims[0].chunk_length(i) for i in range(4)] == [10, 20, 30, 40]
    assert dims[0].edges == (10, 20, 30, 40)
    assert dims[0].nchunks == 3


def test_offsets_are_built_once_and_shared() -> None:
    g = parse([[3, 4, 5], 2])
    a, _ = g.dimensions((12, 5))
    b, _ = g.dimensions((7, 5))
    assert isinstance(a, RectilinearDimension) and isinstance(b, RectilinearDimension)
    assert a.offsets is b.offsets  # one int64 array per grid, not one per call
    assert a.offsets.dtype == np.int64 and a.offsets.tolist() == [0, 3, 7, 12]
    assert not a.offsets.flags.writeable
    assert (a.nchunks, b.nchunks) == (3, 2)


def test_distinct_shapes_ignore_chunks_outside_the_array() -> None:
    g = parse([[4, 4, 100], [2, 3]])
    assert sorted(g.distinct_chunk_shapes((8, 5))) == [(4, 2), (4, 3)]
    assert sorted(g.distinct_chunk_shapes((9, 5))) == [(4, 2), (4, 3), (100, 2), (100, 3)]


def test_zero_dimensional_grid() -> None:
    g = parse([])
    assert g.grid_shape(()) == ()
    assert g.nchunks(()) == 1
    assert list(g.iter_chunk_coords(())) == [()]
    assert list(g.distinct_chunk_shapes(())) == [()]
    assert g.to_dict() == grid_doc([])


def test_zero_length_dimension() -> None:
    g = parse([[5, 5], 3])
    assert g.grid_shape((0, 4)) == (0, 2)
    assert g.nchunks((0, 4)) == 0
    assert g.chunk_sizes((0, 4)) == ((0,), (3, 1))


def test_resized() -> None:
    g = parse([[10, 20], 7])
    assert g.resized((30, 100)) is g  # nothing outgrown
    assert g.resized((5, 1)) is g  # shrinking keeps every edge
    grown = g.resized((45, 100))
    assert grown.chunk_shapes == ((10, 20, 15), 7)
    assert grown.to_dict()["configuration"]["chunk_shapes"] == [[10, 20, 15], 7]
    with pytest.raises(MetadataError, match="chunk_grid"):
        g.resized((5,))


def test_rank_mismatch_in_geometry_is_an_error() -> None:
    g = parse([[4], 3])
    for call in (g.grid_shape, g.dimensions, g.resized, g.iter_chunk_coords, g.edges):
        with pytest.raises(MetadataError, match="chunk_grid"):
            call((10,))


def test_huge_bare_dimension_is_not_materialised() -> None:
    g = parse([1, [2**40, 2**40]])
    assert g.grid_shape((2**62, 2**41)) == (2**62, 2)
    assert g.chunk_origin((2**61, 1)) == (2**61, 2**40)


# -- lookups (compiled kernels) against numpy -----------------------------------------------------


@st.composite
def dimension_case(draw: st.DrawFn) -> tuple[list[int], int]:
    edges = draw(st.lists(st.integers(1, 12), min_size=1, max_size=20))
    length = draw(st.integers(1, sum(edges)))
    return edges, length


def _reference_projection(start: int, step: int, count: int,
                          cumulative: np.ndarray) -> list[list[int]]:
    xs = start + step * np.arange(count, dtype=np.int64)
    chunks = np.searchsorted(cumulative, xs, side="right")  # the first C[i] > x
    rows: list[list[int]] = []
    for pos, (x, c) in enumerate(zip(xs.tolist(), chunks.tolist(), strict=True)):
        origin = int(cumulative[c - 1]) if c else 0
        if rows and rows[-1][0] == c:
            rows[-1][2] += 1
        else:
            rows.append([c, x - origin, 1, pos])
    return rows


@needs_kernels
@settings(max_examples=120, deadline=None)
@given(case=dimension_case(), data=st.data())
def test_locate_matches_searchsorted(case: tuple[list[int], int], data: st.DataObject) -> None:
    edges, length = case
    d = RectilinearDimension.from_edges(edges, length)
    indices = np.array(data.draw(st.lists(st.integers(0, length - 1), max_size=40)),
                       dtype=np.int64)
    chunk_index, local_index = d.locate(indices)
    cumulative = np.cumsum(edges)
    expected = np.searchsorted(cumulative, indices, side="right")
    assert chunk_index.dtype == np.int64 and local_index.dtype == np.int64
    assert chunk_index.tolist() == expected.tolist()
    starts = np.concatenate(([0], cumulative))[expected]
    assert local_index.tolist() == (indices - starts).tolist()
    assert all(c < d.nchunks for c in chunk_index.tolist())


@needs_kernels
@settings(max_examples=120, deadline=None)
@given(case=dimension_case(), data=st.data())
def test_project_slice_matches_reference(case: tuple[list[int], int],
                                         data: st.DataObject) -> None:
    edges, length = case
    d = RectilinearDimension.from_edges(edges, length)
    start = data.draw(st.integers(0, length - 1))
    step = data.draw(st.integers(1, 15))
    count = data.draw(st.integers(0, (length - 1 - start) // step + 1))
    out = d.project_slice(start, step, count)
    assert out.dtype == np.int64 and out.shape[1] == 4
    assert out.tolist() == _reference_projection(start, step, count, np.cumsum(edges))


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(step=st.integers(1, 9), length=st.integers(1, 80), data=st.data())
def test_bare_dimension_equals_its_expanded_edges(step: int, length: int,
                                                  data: st.DataObject) -> None:
    # The arithmetic fast path of a bare-integer dimension agrees with the general
    # offsets path over the same edges.
    bare = RectilinearChunkGrid(chunk_shapes=(step,)).dimensions((length,))[0]
    explicit = RectilinearDimension.from_edges([step] * -(-length // step), length)
    assert bare.nchunks == explicit.nchunks
    start = data.draw(st.integers(0, length - 1))
    stride = data.draw(st.integers(1, 10))
    count = data.draw(st.integers(0, (length - 1 - start) // stride + 1))
    assert (bare.project_slice(start, stride, count).tolist()
            == explicit.project_slice(start, stride, count).tolist())
    idx = np.array(data.draw(st.lists(st.integers(0, length - 1), max_size=20)), dtype=np.int64)
    assert [x.tolist() for x in bare.locate(idx)] == [x.tolist() for x in explicit.locate(idx)]
    for i in range(bare.nchunks):
        assert bare.chunk_offset(i) == explicit.chunk_offset(i)
        assert bare.chunk_length(i) == explicit.chunk_length(i)


@needs_kernels
def test_locate_refuses_indices_past_the_edges() -> None:
    d = RectilinearDimension.from_edges([3, 4], 7)
    with pytest.raises(ValueError, match="out of range"):
        d.locate(np.array([7]))


def test_dimension_length_beyond_the_edges_is_an_error() -> None:
    with pytest.raises(MetadataError, match="sum to 7, less than the array length 8"):
        RectilinearDimension.from_edges([3, 4], 8)


def test_dimension_equality_and_repr() -> None:
    a = RectilinearDimension.from_edges([3, 4], 7)
    assert a == RectilinearDimension.from_edges([3, 4], 7)
    assert a != RectilinearDimension.from_edges([3, 4], 6)
    assert a != RectilinearDimension.from_edges([4, 3], 7)
    assert repr(a) == "RectilinearDimension(edges=(3, 4), length=7)"


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(case=dimension_case(), data=st.data())
def test_windowed_lookups_equal_the_full_ones(case: tuple[list[int], int],
                                              data: st.DataObject) -> None:
    # Long dimensions hand the kernel only the window of offsets a lookup touches; forcing
    # that path on small ones must give exactly what the full offsets give.
    edges, length = case
    d = RectilinearDimension.from_edges(edges, length)
    start = data.draw(st.integers(0, length - 1))
    step = data.draw(st.integers(1, 15))
    count = data.draw(st.integers(0, (length - 1 - start) // step + 1))
    indices = np.array(data.draw(st.lists(st.integers(0, length - 1), max_size=10)),
                       dtype=np.int64)
    full_rows = d.project_slice(start, step, count).tolist()
    full_points = [x.tolist() for x in d.locate(indices)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rectilinear, "WINDOW_THRESHOLD", 0)
        assert d.project_slice(start, step, count).tolist() == full_rows
        assert [x.tolist() for x in d.locate(indices)] == full_points
    assert full_rows == _reference_projection(start, step, count, np.cumsum(edges))


@needs_kernels
def test_long_dimension_lookups() -> None:
    n = 4 * rectilinear.WINDOW_THRESHOLD
    edges = np.random.default_rng(0).integers(1, 100, size=n)
    cumulative = np.cumsum(edges)
    d = RectilinearDimension.from_edges(edges.tolist(), int(cumulative[-1]))
    assert d.nchunks == n
    for start, step, count in [(12_345, 1, 300), (int(cumulative[-1]) - 50, 7, 8), (0, 1, 1),
                               (5, 97, 2_000), (0, 1, 20_000)]:
        assert (d.project_slice(start, step, count).tolist()
                == _reference_projection(start, step, count, cumulative))
    for points in ([3, 4, 5000], [int(cumulative[-1]) - 1], list(range(100_000, 100_050))):
        idx = np.array(points, dtype=np.int64)
        chunk_index, _ = d.locate(idx)
        assert chunk_index.tolist() == np.searchsorted(cumulative, idx, side="right").tolist()
    with pytest.raises(ValueError, match="out of range"):
        d.project_slice(int(cumulative[-1]) - 2, 1, 5)
    with pytest.raises(ValueError, match="out of range"):
        d.locate(np.array([10, int(cumulative[-1])]))
