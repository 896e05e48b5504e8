"""Arrays on rectilinear chunk grids end to end: numpy is the oracle.

The grid, both revisions of it:
https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear

Covers the extension's 5-D example documents, ``create_array(chunks=[[...], ...])``, ``a.chunks``,
every indexing mode, edge chunks and overflowing edges on disk, resize/append, codecs, bad
documents, zarr-python's rectilinear fixtures, and interop with zarr-python >= 3.2 both ways.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.chunk_grids import RectilinearChunkGrid, RegularChunkGrid
from zarr3c.errors import MetadataError

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
FIXTURE_DOCS = CONFORMANCE / "zarr-python-zarr-metadata-fixtures" / "v3" / "array"


def _random(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)


def _document(shape: list[int], chunk_shapes: list[Any], dtype: str = "int32",
              fill_value: Any = 0, codecs: list[Any] | None = None) -> dict[str, Any]:
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dtype,
        "chunk_grid": {"name": "rectilinear",
                       "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }


def _write_document(store: zarr3c.Store, path: str, doc: dict[str, Any]) -> None:
    store.set(f"{path}/zarr.json", json.dumps(doc).encode())


# -- the extension's example documents -------------------------------------------------------------

EXAMPLE_DOCUMENTS = {
    # the extension's earlier revision: every dimension sums exactly to 6
    "seed-000": ([[[2, 3]], [[1, 6]], [1, [2, 1], 3], [[1, 3], 3], [6]],
                 ((2, 2, 2), (1,) * 6, (1, 2, 3), (1, 1, 1, 3), (6,))),
    # its later revision: a bare integer, and [4, 4, 4] overflowing the length by a whole chunk
    "seed-001": ([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]],
                 ((4, 2), (1, 2, 3), (4, 2), (1, 1, 1, 3), (4, 2))),
}


@pytest.mark.parametrize("seed", sorted(EXAMPLE_DOCUMENTS))
def test_seed_documents_open_read_write(store: zarr3c.Store, seed: str) -> None:
    chunk_shapes, dask_chunks = EXAMPLE_DOCUMENTS[seed]
    _write_document(store, "x", _document([6] * 5, chunk_shapes, fill_value=-7))
    a = zarr3c.open_array(store, "x", mode="r+")
    assert isinstance(a.metadata.chunk_grid, RectilinearChunkGrid)
    assert a.shape == (6,) * 5
    assert a.chunks == dask_chunks
    np.testing.assert_array_equal(a[...], np.full((6,) * 5, -7, dtype="int32"))
    data = np.arange(6**5, dtype="int32").reshape((6,) * 5)
    a[...] = data
    b = zarr3c.open_array(store, "x", mode="r")
    np.testing.assert_array_equal(b[...], data)
    sel = (slice(1, None, 2), 3, slice(None, None, -1), slice(0, 5, 3), slice(2, 6))
    np.testing.assert_array_equal(b[sel], data[sel])
    # One stored chunk per chunk intersecting the array, none for the overflowing one.
    assert b.nchunks == math.prod(len(c) for c in dask_chunks)
    assert b.nchunks_initialized == b.nchunks
    keys = [k for k in store.list_prefix("x/c/")]
    assert all(int(k.rsplit("/", 1)[1]) < len(dask_chunks[4]) for k in keys)
    # The document is written back in its compact form, edges unchanged.
    a.attrs["touched"] = True
    again = zarr3c.open_array(store, "x", mode="r")
    assert again.metadata.chunk_grid == a.metadata.chunk_grid
    np.testing.assert_array_equal(again[...], data)


# -- creation -------------------------------------------------------------------------------------


def test_create_array_with_edge_lists(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "r", shape=(60, 100), dtype="int32",
                            chunks=[[10, 20, 30], [25, 25, 25, 25]])
    grid = a.metadata.to_dict()["chunk_grid"]
    # All-equal edges whose last one ends the array: the bare integer.
    assert grid == {"name": "rectilinear",
                    "configuration": {"kind": "inline", "chunk_shapes": [[10, 20, 30], 25]}}
    assert a.chunks == ((10, 20, 30), (25, 25, 25, 25))
    assert a.nchunks == 12
    assert a.cdata_shape == (3, 4)
    stored = json.loads(bytes(store.get("r/zarr.json")))
    assert stored["chunk_grid"] == grid


def test_tuple_of_ints_is_still_regular(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "g", shape=(60, 100), dtype="int32", chunks=(10, 25))
    assert isinstance(a.metadata.chunk_grid, RegularChunkGrid)
    assert a.chunks == (10, 25)
    b = zarr3c.create_array(store, "h", shape=(60, 100), dtype="int32", chunks=[10, 25])
    assert isinstance(b.metadata.chunk_grid, RegularChunkGrid)


def test_mixed_int_and_edges(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "m", shape=(10, 7), dtype="uint8", chunks=[4, (3, 4)])
    assert a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"] == [4, [3, 4]]
    assert a.chunks == ((4, 4, 2), (3, 4))
    c = zarr3c.create_array(store, "n", shape=(10, 7), dtype="uint8",
                            chunks=[np.array([5, 5]), [np.int64(7)]])
    assert c.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"] == [5, 7]
    assert c.chunks == ((5, 5), (7,))


def test_chunks_are_clipped_but_the_grid_keeps_overflow(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "o", shape=(6, 5), dtype="int16",
                            chunks=[[4, 4, 4], [2, 9]])
    assert a.chunks == ((4, 2), (2, 3))
    assert all(sum(c) == n for c, n in zip(a.chunks, a.shape, strict=True))
    grid = a.metadata.chunk_grid
    assert grid.chunk_shapes == ((4, 4, 4), (2, 9))
    assert grid.edges(a.shape) == ((4, 4, 4), (2, 9))
    assert a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"] == [
        [[4, 3]], [2, 9]]


CREATE_ERRORS = [
    ([[0, 6]], (6,), "chunks[0][0]", "dimension 0", "zero-edge"),
    ([[2.5, 6]], (6,), "chunks[0][0]", "dimension 0", "fractional-edge"),
    ([[True, 6]], (6,), "chunks[0][0]", "a boolean", "boolean-edge"),
    ([3, [-1, 7]], (6, 6), "chunks[1][0]", "dimension 1", "negative-edge"),
    ([3, [2, 3]], (6, 6), "chunks[1]", "sum to 5, less than the array length 6", "too-short"),
    ([[6], [6]], (6,), "chunks", "2 entries", "rank"),
]


@pytest.mark.parametrize(
    "chunks, shape, where, fragment", [c[:4] for c in CREATE_ERRORS],
    ids=[c[4] for c in CREATE_ERRORS],
)
def test_create_array_refuses_bad_edges(chunks: Any, shape: tuple[int, ...], where: str,
                                        fragment: str) -> None:
    store = zarr3c.MemoryStore()
    with pytest.raises(MetadataError) as info:
        zarr3c.create_array(store, "bad", shape=shape, dtype="uint8", chunks=chunks)
    assert where in str(info.value)
    assert fragment in str(info.value)
    assert not store.exists("bad/zarr.json")


DOCUMENT_ERRORS = [
    ([6, 6], [[2, 3], 4], "chunk_shapes[0]", "dimension 0", "sum-below-length"),
    ([6, 6], [[6], [[2, 2], 1]], "chunk_shapes[1]", "dimension 1", "rle-sum-below-length"),
    ([6], [[True, 6]], "chunk_shapes[0][0]", "a boolean", "boolean-edge"),
    ([6], [[[6, 1, 1]]], "chunk_shapes[0][0]", "exactly [value, count]", "rle-three"),
    ([6], [6, 6], "chunk_shapes", "2 entries but the array has 1", "rank"),
]


@pytest.mark.parametrize(
    "shape, chunk_shapes, where, fragment", [c[:4] for c in DOCUMENT_ERRORS],
    ids=[c[4] for c in DOCUMENT_ERRORS],
)
def test_open_refuses_bad_documents(store: zarr3c.Store, shape: list[int],
                                    chunk_shapes: list[Any], where: str, fragment: str) -> None:
    _write_document(store, "bad", _document(shape, chunk_shapes))
    with pytest.raises(MetadataError) as info:
        zarr3c.open_array(store, "bad", mode="r")
    assert where in str(info.value)
    assert fragment in str(info.value)


def test_unknown_configuration_key_is_refused(store: zarr3c.Store) -> None:
    doc = _document([6], [[6]])
    doc["chunk_grid"]["configuration"]["encoded_chunk_shapes"] = "AAAA"
    _write_document(store, "bad", doc)
    with pytest.raises(MetadataError, match="encoded_chunk_shapes"):
        zarr3c.open_array(store, "bad", mode="r")


# -- reads and writes against numpy ---------------------------------------------------------------


def _slice(length: int) -> st.SearchStrategy[slice]:
    bound = st.one_of(st.none(), st.integers(-length - 2, length + 2))
    step = st.one_of(st.none(), st.integers(-5, 5).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@st.composite
def dimension_chunks(draw: st.DrawFn, length: int) -> Any:
    """A bare step, or explicit edges covering ``length`` and maybe overflowing it."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.integers(1, 6))
    edges: list[int] = []
    target = length + draw(st.integers(0, 6))
    while sum(edges) < max(target, 1):
        edges.append(draw(st.integers(1, 7)))
    return edges


@st.composite
def rectilinear_case(draw: st.DrawFn) -> tuple[Any, ...]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 14)) for _ in range(ndim))
    chunks = [draw(dimension_chunks(n)) for n in shape]
    key = []
    for n in shape:
        if n > 0 and draw(st.integers(0, 3)) == 0:
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(_slice(n)))
    dtype = draw(st.sampled_from(["uint8", "int16", "int64", "float32", "complex64", "bool"]))
    return shape, chunks, tuple(key), dtype


def _create(shape: tuple[int, ...], chunks: Any, dtype: str, **kwargs: Any) -> zarr3c.Array:
    return zarr3c.create_array("memory://", shape=shape, dtype=dtype, chunks=chunks, **kwargs)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rectilinear_case())
def test_read_matches_numpy(case: tuple[Any, ...]) -> None:
    shape, chunks, key, dtype = case
    data = _random(shape, dtype)
    a = _create(shape, chunks, dtype, compressors=None)
    a[...] = data
    got = a[key]
    expected = data[key]
    assert np.shape(got) == expected.shape
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rectilinear_case(), st.booleans())
def test_write_matches_numpy(case: tuple[Any, ...], scalar: bool) -> None:
    shape, chunks, key, dtype = case
    base = _random(shape, dtype, seed=1)
    a = _create(shape, chunks, dtype, fill_value=0)
    a[...] = base
    expected = base.copy()
    value = _random(() if scalar else expected[key].shape, dtype, seed=2)
    expected[key] = value
    a[key] = value
    np.testing.assert_array_equal(a[...], expected)
    # Every chunk intersecting the array decodes with its full edge-length shape.
    b = zarr3c.open_array(a.store, mode="r")
    np.testing.assert_array_equal(b[...], expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rectilinear_case(), st.data())
def test_orthogonal_and_coordinate_selections_match_numpy(case: tuple[Any, ...],
                                                          data: st.DataObject) -> None:
    shape, chunks, _, dtype = case
    if 0 in shape:
        return
    base = _random(shape, dtype, seed=3)
    a = _create(shape, chunks, dtype, fill_value=0)
    a[...] = base
    idx = [np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6)))
           for n in shape]
    np.testing.assert_array_equal(a.oindex[tuple(idx)], base[np.ix_(*idx)])
    npoints = data.draw(st.integers(1, 8))
    points = tuple(np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=npoints,
                                               max_size=npoints))) for n in shape)
    np.testing.assert_array_equal(a.vindex[points], base[points])
    mask = _random(shape, "bool", seed=4)
    np.testing.assert_array_equal(a.vindex[mask], base[mask])
    # Writes through the same modes.
    expected = base.copy()
    value = _random(expected[np.ix_(*idx)].shape, dtype, seed=5)
    a.oindex[tuple(idx)] = value
    expected[np.ix_(*idx)] = value
    np.testing.assert_array_equal(a[...], expected)
    pvalue = _random((npoints,), dtype, seed=6)
    a.vindex[points] = pvalue
    expected[points] = pvalue
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "float64", "complex128", "bool"])
def test_dtypes_round_trip(store: zarr3c.Store, dtype: str) -> None:
    data = _random((13, 9), dtype)
    a = zarr3c.create_array(store, "d", shape=data.shape, dtype=dtype,
                            chunks=[[1, 5, 7, 20], 4])
    a[...] = data
    b = zarr3c.open_array(store, "d")
    assert b.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[5:12:3, ::-2], data[5:12:3, ::-2])


def test_blocks_follow_the_edges(store: zarr3c.Store) -> None:
    data = np.arange(60 * 50, dtype="int32").reshape(60, 50)
    a = zarr3c.create_array(store, "b", shape=data.shape, dtype="int32",
                            chunks=[[10, 20, 30, 99], [5, 45]])
    a[...] = data
    np.testing.assert_array_equal(a.blocks[1, 1], data[10:30, 5:50])
    np.testing.assert_array_equal(a.blocks[-1, 0], data[30:60, 0:5])
    np.testing.assert_array_equal(a.blocks[0:2], data[0:30])
    a.blocks[2, 0] = -1
    data[30:60, 0:5] = -1
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(IndexError):
        a.blocks[3, 0]  # the overflowing edge is outside the array: no block


def test_example_index_lands_in_the_right_chunk(store: zarr3c.Store) -> None:
    # Seed 001: edges [[24, 14], [16, 10]]; index (36, 15) is in chunk (1, 0) at (12, 15).
    a = zarr3c.create_array(store, "e", shape=(38, 26), dtype="int32",
                            chunks=[[24, 14], [16, 10]], fill_value=0, compressors=None)
    a[36, 15] = 77
    assert sorted(k for k in store.list_prefix("e/c/")) == ["e/c/1/0"]
    chunk = np.frombuffer(bytes(store.get("e/c/1/0")), dtype="<i4").reshape(14, 16)
    assert chunk[12, 15] == 77
    assert np.count_nonzero(chunk) == 1


# -- edge chunks and overflowing edges on disk ----------------------------------------------------


def test_edge_chunks_have_full_edge_shape(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "f", shape=(6,), dtype="uint8", chunks=[[4, 4, 4]],
                            fill_value=9, compressors=None)
    a[:] = np.arange(1, 7, dtype="uint8")
    assert bytes(store.get("f/c/0")) == bytes([1, 2, 3, 4])
    assert bytes(store.get("f/c/1")) == bytes([5, 6, 9, 9])  # outside part: fill value
    assert not store.exists("f/c/2")  # wholly outside the array: never written
    assert a.nchunks == 2


def test_chunks_outside_the_array_are_never_read(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "g", shape=(6,), dtype="uint8", chunks=[[4, 4, 4]],
                            fill_value=0, compressors=None)
    a[:] = 1
    store.set("g/c/2", b"garbage that does not decode")
    np.testing.assert_array_equal(a[...], np.ones(6, dtype="uint8"))
    assert a.nchunks_initialized == 2


def test_transpose_compression_and_crc32c(store: zarr3c.Store) -> None:
    data = _random((17, 11, 5), "float32")
    codecs = [
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "gzip", "configuration": {"level": 1}},
        {"name": "crc32c"},
    ]
    a = zarr3c.create_array(store, "t", shape=data.shape, dtype="float32",
                            chunks=[[3, 10, 4, 8], [11], [2, 2, 1]], codecs=codecs)
    a[...] = data
    b = zarr3c.open_array(store, "t", mode="r")
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[2:15:4, ::-1, 1], data[2:15:4, ::-1, 1])
    # A chunk of the distinct shape (4, 11, 1) is checked by its crc32c trailer.
    raw = bytes(store.get("t/c/2/0/2"))
    store.set("t/c/2/0/2", raw[:-1] + bytes([raw[-1] ^ 1]))  # break the crc32c trailer
    with pytest.raises(zarr3c.errors.ChecksumError, match="t/c/2/0/2"):
        b[...]


@pytest.mark.parametrize("compressors", [
    [{"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                         "typesize": 8, "blocksize": 0}}],
], ids=["zstd", "blosc"])
def test_compressors(store: zarr3c.Store, compressors: list[Any]) -> None:
    data = np.arange(40 * 30, dtype="int64").reshape(40, 30)
    a = zarr3c.create_array(store, "c", shape=data.shape, dtype="int64",
                            chunks=[[7, 13, 20], [30]], compressors=compressors)
    a[...] = data
    np.testing.assert_array_equal(zarr3c.open_array(store, "c")[...], data)


def test_rectilinear_shards(store: zarr3c.Store) -> None:
    # Sharding over a rectilinear grid: each distinct shard shape is validated against the
    # inner chunk shape when the array is created.
    data = np.arange(40 * 30, dtype="int32").reshape(40, 30)
    a = zarr3c.create_array(store, "sh", shape=data.shape, dtype="int32", chunks=(5, 5),
                            shards=[[10, 30], [15, 15]])
    assert a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"] == [[10, 30], 15]
    a[...] = data
    b = zarr3c.open_array(store, "sh", mode="r")
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[3:37:3, ::-2], data[3:37:3, ::-2])
    with pytest.raises(MetadataError, match=r"\[12, 15\]"):
        zarr3c.create_array(store, "bad", shape=data.shape, dtype="int32", chunks=(5, 5),
                            shards=[[12, 28], [15, 15]])


# -- resize and append ----------------------------------------------------------------------------


def test_resize_grows_with_one_edge_and_shrinks_keeping_edges(store: zarr3c.Store) -> None:
    data = np.arange(60 * 20, dtype="int32").reshape(60, 20)
    a = zarr3c.create_array(store, "r", shape=(60, 20), dtype="int32",
                            chunks=[[10, 20, 30], [8, 8, 8]], fill_value=-1)
    a[...] = data
    a.resize((75, 20))
    grid = a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"]
    assert grid == [[10, 20, 30, 15], 8]  # [8, 8, 8] over 20 is the bare 8
    assert a.chunks == ((10, 20, 30, 15), (8, 8, 4))
    np.testing.assert_array_equal(a[:60], data)
    np.testing.assert_array_equal(a[60:], np.full((15, 20), -1, dtype="int32"))
    # Shrinking keeps every edge; chunks wholly outside are erased, cut ones reset.
    a.resize((25, 20))
    assert a.metadata.chunk_grid.chunk_shapes == ((10, 20, 30, 15), 8)
    assert a.chunks == ((10, 15), (8, 8, 4))
    assert a.nchunks_initialized == 6
    assert not any(k.startswith("r/c/2/") for k in store.list_prefix("r/c/"))
    np.testing.assert_array_equal(a[...], data[:25])
    a.resize((60, 20))  # growing back inside the edges: no new edge, fill beyond 25
    assert a.metadata.chunk_grid.chunk_shapes == ((10, 20, 30, 15), 8)
    expected = np.full((60, 20), -1, dtype="int32")
    expected[:25] = data[:25]
    np.testing.assert_array_equal(zarr3c.open_array(store, "r")[...], expected)


def test_bare_dimension_grows_by_its_step(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "s", shape=(10, 4), dtype="uint8", chunks=[4, [1, 3]])
    a.resize((19, 4))
    assert a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shapes"] == [4, [1, 3]]
    assert a.chunks == ((4, 4, 4, 4, 3), (1, 3))


@pytest.mark.parametrize("axis", [0, 1])
def test_append(store: zarr3c.Store, axis: int) -> None:
    data = np.arange(12 * 9, dtype="int16").reshape(12, 9)
    a = zarr3c.create_array(store, "a", shape=data.shape, dtype="int16",
                            chunks=[[5, 7], [2, 3, 4]])
    a[...] = data
    extra = -np.arange(12 * 9, dtype="int16").reshape(12, 9)[:5, :] if axis == 0 else \
        -np.arange(12 * 4, dtype="int16").reshape(12, 4)
    new_shape = a.append(extra, axis=axis)
    expected = np.concatenate([data, extra], axis=axis)
    assert new_shape == expected.shape
    np.testing.assert_array_equal(zarr3c.open_array(store, "a")[...], expected)
    edges = a.metadata.chunk_grid.chunk_shapes[axis]
    assert edges[-1] == extra.shape[axis]  # one new edge covering the appended part


# -- zarr-python's rectilinear fixture documents --------------------------------------------------


@pytest.mark.parametrize("name, shape, chunks", [
    ("rectilinear_grid", (100, 100), ((10, 20, 30, 40), (50, 50))),
    ("rectilinear_grid_with_rle", (60, 30), ((10,) * 5 + (5, 5), (15, 15))),
])
def test_zarr_python_fixture_documents(tmp_path: Path, name: str, shape: tuple[int, ...],
                                       chunks: tuple[tuple[int, ...], ...]) -> None:
    path = FIXTURE_DOCS / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"conformance data not found at {FIXTURE_DOCS}")
    doc = json.loads(path.read_text())
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    a = zarr3c.open_array(str(tmp_path / "a"), mode="r+")
    assert a.shape == shape
    assert a.chunks == chunks
    np.testing.assert_array_equal(a[...], np.zeros(shape, dtype=a.dtype))
    data = _random(shape, str(a.dtype))
    a[...] = data
    np.testing.assert_array_equal(zarr3c.open_array(str(tmp_path / "a"))[...], data)
    assert a.nchunks_initialized == math.prod(len(c) for c in chunks)


# -- interop with zarr-python >= 3.2 --------------------------------------------------------------


def _zarr_with_rectilinear() -> Any:
    if importlib.util.find_spec("zarr") is None:
        pytest.skip("zarr-python is not installed")
    import zarr

    version = tuple(int(p) for p in zarr.__version__.split(".")[:2] if p.isdigit())
    if version < (3, 2):
        pytest.skip(f"zarr-python {zarr.__version__} predates rectilinear chunk grids "
                    "(needs >= 3.2, which needs Python >= 3.12)")
    return zarr


@pytest.fixture
def zarr_rectilinear() -> Any:
    zarr = _zarr_with_rectilinear()
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield zarr


def test_interop_zarr_python_writes_zarr3c_reads(tmp_path: Path, zarr_rectilinear: Any) -> None:
    zarr = zarr_rectilinear
    data = np.arange(60 * 100, dtype="int32").reshape(60, 100)
    z = zarr.create_array(str(tmp_path / "zp"), shape=data.shape, dtype="int32",
                          chunks=[[10, 20, 30], [25, 25, 25, 25]], fill_value=-1)
    z[...] = data
    z.resize((70, 100))  # appends an edge of 10
    a = zarr3c.open_array(str(tmp_path / "zp"), mode="r")
    assert a.chunks == ((10, 20, 30, 10), (25, 25, 25, 25))
    expected = np.full((70, 100), -1, dtype="int32")
    expected[:60] = data
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[5:65:7, ::-3], expected[5:65:7, ::-3])


def test_interop_zarr3c_writes_zarr_python_reads(tmp_path: Path, zarr_rectilinear: Any) -> None:
    zarr = zarr_rectilinear
    data = _random((50, 40), "float64")
    codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}},
              {"name": "bytes", "configuration": {"endian": "little"}},
              {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
              {"name": "crc32c"}]
    a = zarr3c.create_array(str(tmp_path / "z3"), shape=data.shape, dtype="float64",
                            chunks=[[5, 5, 5, 35, 100], [7, 33]], codecs=codecs)
    a[...] = data
    z = zarr.open_array(str(tmp_path / "z3"), mode="r")
    np.testing.assert_array_equal(z[...], data)
    assert z.read_chunk_sizes == a.chunks
    # Overflowing edges and a bare integer dimension.
    b = zarr3c.create_array(str(tmp_path / "z3b"), shape=(6, 6), dtype="int16",
                            chunks=[[4, 4, 4], 4], fill_value=3)
    b[1:, :5] = 8
    expected = np.full((6, 6), 3, dtype="int16")
    expected[1:, :5] = 8
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "z3b"), mode="r")[...],
                                  expected)
