"""Interop with tensorstore's ``zarr3`` driver: each library reads what the other wrote.

tensorstore takes the array's metadata as the ``zarr.json`` fields themselves, so each case is
one metadata description handed to both libraries (zarr3c through ``create_array(codecs=...)``).
Both directions for a representative subset: several data types, the bytes codec in both byte
orders, transpose, gzip, zstd, blosc, crc32c, ragged edge chunks, missing chunks and fill values,
both chunk key encodings, attributes and ``dimension_names``, and which chunk files exist for an
array that is partly fill (tensorstore, like zarr3c by default, does not store such chunks).

Raw bits (``r<N>``) are left out: tensorstore spells their fill value as base64 where zarrs and
zarr3c write a list of byte values, and tensorstore aborts the process (a C++ check failure)
on some ``r<N>`` specs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ts = pytest.importorskip(
    "tensorstore", reason="tensorstore is not installed (pip install tensorstore)"
)

import zarr3c

DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)

LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}
BYTES = {"name": "bytes"}  # no endian: 1-byte types
GZIP = {"name": "gzip", "configuration": {"level": 6}}
CRC32C = {"name": "crc32c"}
DEFAULT_CKE = {"name": "default", "configuration": {"separator": "/"}}


def _zstd(level: int, checksum: bool) -> dict[str, Any]:
    return {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}


def _blosc(cname: str, shuffle: str, typesize: int) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {
        "cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize, "blocksize": 0,
    }}


def _t(*order: int) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(order)}}


def fill_to_json(value: Any, dtype: str) -> Any:
    """A Python fill value in its zarr.json form."""
    def real(x: float) -> Any:
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return float(x)

    kind = np.dtype(dtype).kind
    if kind == "c":
        c = complex(value)
        return [real(c.real), real(c.imag)]
    if kind == "f":
        return real(float(value))
    if kind == "b":
        return bool(value)
    return int(value)


def make_metadata(
    shape: tuple[int, ...],
    dtype: str,
    chunks: tuple[int, ...],
    codecs: list[dict[str, Any]],
    fill_value: Any = 0,
    chunk_key_encoding: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
    dimension_names: list[str | None] | None = None,
) -> dict[str, Any]:
    """The array's ``zarr.json`` fields, as both libraries take them."""
    meta: dict[str, Any] = {
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": chunk_key_encoding or DEFAULT_CKE,
        "fill_value": fill_to_json(fill_value, dtype),
        "codecs": codecs,
    }
    if attributes is not None:
        meta["attributes"] = attributes
    if dimension_names is not None:
        meta["dimension_names"] = dimension_names
    return meta


# -- the two libraries behind one interface -------------------------------------------------------

Regions = list[tuple[tuple[slice, ...], np.ndarray]]


def _ts_spec(path: Path) -> dict[str, Any]:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def write_tensorstore(path: Path, meta: dict[str, Any], data: np.ndarray | None,
                      regions: Regions | None = None) -> None:
    t = ts.open({**_ts_spec(path), "metadata": meta}, create=True, delete_existing=True).result()
    if regions is not None:
        for sel, value in regions:
            t[sel].write(value).result()
    elif data is not None:
        t.write(data).result()


def write_zarr3c(path: Path, meta: dict[str, Any], data: np.ndarray | None,
                 regions: Regions | None = None) -> None:
    a = zarr3c.create_array(
        str(path),
        shape=tuple(meta["shape"]),
        dtype=meta["data_type"],
        chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
        codecs=meta["codecs"],
        fill_value=meta["fill_value"],
        chunk_key_encoding=meta["chunk_key_encoding"],
        attributes=meta.get("attributes"),
        dimension_names=meta.get("dimension_names"),
    )
    if regions is not None:
        for sel, value in regions:
            a[sel] = value
    elif data is not None:
        a[...] = data


class Opened:
    """What a test needs from an opened array, whichever library opened it."""

    def __init__(self, values: Callable[[Any], np.ndarray], fill_value: Any,
                 attributes: dict[str, Any], dimension_names: tuple[str | None, ...] | None):
        self.values = values
        self.fill_value = fill_value
        self.attributes = attributes
        self.dimension_names = dimension_names

    def __getitem__(self, sel: Any) -> np.ndarray:
        return self.values(sel)


def open_tensorstore(path: Path) -> Opened:
    t = ts.open(_ts_spec(path), open=True, read=True).result()
    meta = t.spec().to_json()["metadata"]
    names = meta.get("dimension_names")
    return Opened(
        lambda sel: np.asarray(t[sel].read().result()),
        t.fill_value,
        meta.get("attributes", {}),
        None if names is None else tuple(names),
    )


def open_zarr3c(path: Path) -> Opened:
    a = zarr3c.open_array(str(path), mode="r")
    names = a.metadata.to_dict().get("dimension_names")
    return Opened(
        lambda sel: np.asarray(a[sel]),
        a.fill_value,
        dict(a.attrs),
        None if names is None else tuple(names),
    )


WRITERS: dict[str, Callable[..., None]] = {"tensorstore": write_tensorstore, "zarr3c": write_zarr3c}
READERS: dict[str, Callable[[Path], Opened]] = {
    "tensorstore": open_tensorstore, "zarr3c": open_zarr3c,
}
DIRECTIONS = [("tensorstore", "zarr3c"), ("zarr3c", "tensorstore")]


def both_ways(func: Callable[..., Any]) -> Callable[..., Any]:
    return pytest.mark.parametrize(
        ("writer", "reader"), DIRECTIONS, ids=[f"{w}->{r}" for w, r in DIRECTIONS]
    )(func)


def _serializer(dtype: str, endian: dict[str, Any] = LITTLE) -> dict[str, Any]:
    return BYTES if np.dtype(dtype).itemsize == 1 else endian


# -- data types ------------------------------------------------------------------------------------


@both_ways
@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_ragged(
    tmp_path: Path, writer: str, reader: str, dtype: str, make_data: Any, assert_same: Any
) -> None:
    data = make_data(dtype, (7, 10), seed=21)
    meta = make_metadata((7, 10), dtype, (3, 4), [_serializer(dtype)])
    WRITERS[writer](tmp_path / "a", meta, data)
    a = READERS[reader](tmp_path / "a")
    assert_same(a[...], data)
    assert_same(a[1:6, 2:9], data[1:6, 2:9])


@both_ways
@pytest.mark.parametrize(
    ("shape", "chunks"), [((), ()), ((0, 4), (2, 2)), ((3, 5), (8, 8))],
    ids=["0d", "empty", "chunk-larger-than-array"],
)
def test_degenerate_shapes(
    tmp_path: Path, writer: str, reader: str, shape: Any, chunks: Any, make_data: Any,
    assert_same: Any,
) -> None:
    data = make_data("int16", shape, seed=30)
    WRITERS[writer](tmp_path / "a", make_metadata(shape, "int16", chunks, [LITTLE]), data)
    assert_same(READERS[reader](tmp_path / "a")[...], data)


# -- codecs ----------------------------------------------------------------------------------------

# (id, dtype, shape, chunks, codecs)
CODEC_CASES: list[tuple[str, str, tuple[int, ...], tuple[int, ...], list[dict[str, Any]]]] = [
    ("big-int16", "int16", (9, 10), (4, 3), [BIG]),
    ("big-uint64", "uint64", (9, 10), (4, 3), [BIG]),
    ("big-float32-gzip", "float32", (9, 10), (4, 3), [BIG, GZIP]),
    ("big-complex128", "complex128", (9, 10), (4, 3), [BIG]),
    ("gzip", "int32", (9, 10), (4, 3), [LITTLE, GZIP]),
    ("zstd", "float64", (9, 10), (4, 3), [LITTLE, _zstd(3, False)]),
    ("zstd-checksum", "int16", (9, 10), (4, 3), [LITTLE, _zstd(1, True)]),
    ("blosc-lz4-shuffle", "float32", (9, 10), (4, 3), [LITTLE, _blosc("lz4", "shuffle", 4)]),
    ("blosc-zstd-bitshuffle", "uint8", (9, 10), (4, 3), [BYTES, _blosc("zstd", "bitshuffle", 1)]),
    ("blosc-blosclz-noshuffle", "int64", (9, 10), (4, 3),
     [LITTLE, _blosc("blosclz", "noshuffle", 8)]),
    ("crc32c", "float16", (9, 10), (4, 3), [LITTLE, CRC32C]),
    ("gzip-crc32c", "bool", (9, 10), (4, 3), [BYTES, GZIP, CRC32C]),
    ("transpose-2d", "float32", (9, 10), (4, 3), [_t(1, 0), LITTLE]),
    ("transpose-3d", "int32", (5, 6, 7), (2, 3, 4), [_t(2, 0, 1), LITTLE, GZIP]),
    ("transpose-3d-big-blosc-crc32c", "float64", (5, 6, 7), (2, 3, 4),
     [_t(1, 2, 0), BIG, _blosc("lz4", "shuffle", 8), CRC32C]),
    ("transpose-complex64", "complex64", (5, 6, 7), (2, 3, 4), [_t(2, 1, 0), LITTLE]),
]


@both_ways
@pytest.mark.parametrize("case", CODEC_CASES, ids=[c[0] for c in CODEC_CASES])
def test_codecs(
    tmp_path: Path, writer: str, reader: str, case: tuple, make_data: Any, assert_same: Any
) -> None:
    _, dtype, shape, chunks, codecs = case
    data = make_data(dtype, shape, seed=22)
    WRITERS[writer](tmp_path / "a", make_metadata(shape, dtype, chunks, codecs), data)
    stored = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert [c["name"] for c in stored["codecs"]] == [c["name"] for c in codecs]
    a = READERS[reader](tmp_path / "a")
    assert_same(a[...], data)
    sel = tuple(slice(1, None, 2) for _ in shape)
    assert_same(a[sel], data[sel])


UPDATE_CASES = [c for c in CODEC_CASES if c[0].startswith(("big", "transpose"))]


@pytest.mark.parametrize("case", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_zarr3c_updates_tensorstore_chunks(
    tmp_path: Path, case: tuple, make_data: Any, assert_same: Any
) -> None:
    """zarr3c rewrites part of tensorstore's chunks (read-modify-write); tensorstore reads it."""
    _, dtype, shape, chunks, codecs = case
    data = make_data(dtype, shape, seed=23)
    write_tensorstore(tmp_path / "a", make_metadata(shape, dtype, chunks, codecs), data)
    sel = tuple(slice(1, n - 1) for n in shape)
    patch = make_data(dtype, data[sel].shape, seed=24)
    zarr3c.open_array(str(tmp_path / "a"), mode="r+")[sel] = patch
    data[sel] = patch
    assert_same(open_tensorstore(tmp_path / "a")[...], data)


# Codec configurations with fields left out: zarr3c fills in the defaults and must write the
# completed configuration, since tensorstore requires every field (zstd level, blosc shuffle...).
# (id, dtype, codecs given to zarr3c)
DEFAULTED_CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("zstd-no-configuration", "float32", [LITTLE, {"name": "zstd"}]),
    ("zstd-level-only", "int16", [LITTLE, {"name": "zstd", "configuration": {"level": 3}}]),
    ("blosc-cname-clevel", "float64",
     [LITTLE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}]),
    ("blosc-no-configuration", "uint8", [BYTES, {"name": "blosc"}]),
]


@pytest.mark.parametrize("case", DEFAULTED_CASES, ids=[c[0] for c in DEFAULTED_CASES])
def test_tensorstore_opens_zarr3c_arrays_with_defaulted_codec_fields(
    tmp_path: Path, case: tuple, make_data: Any, assert_same: Any
) -> None:
    _, dtype, codecs = case
    data = make_data(dtype, (5, 6), seed=29)
    write_zarr3c(tmp_path / "a", make_metadata((5, 6), dtype, (2, 4), codecs), data)
    stored = json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"]
    for codec in stored:
        if codec["name"] == "zstd":
            assert set(codec["configuration"]) == {"level", "checksum"}, codec
        if codec["name"] == "blosc":
            assert set(codec["configuration"]) == {
                "cname", "clevel", "shuffle", "typesize", "blocksize"}, codec
            assert codec["configuration"]["typesize"] == np.dtype(dtype).itemsize
    assert_same(open_tensorstore(tmp_path / "a")[...], data)


# -- chunk key encodings ---------------------------------------------------------------------------

ENCODINGS = [
    ({"name": "default", "configuration": {"separator": "/"}}, {"c/0/0", "c/2/1"}),
    ({"name": "default", "configuration": {"separator": "."}}, {"c.0.0", "c.2.1"}),
    ({"name": "v2", "configuration": {"separator": "."}}, {"0.0", "2.1"}),
    ({"name": "v2", "configuration": {"separator": "/"}}, {"0/0", "2/1"}),
]
ENCODING_IDS = ["default-slash", "default-dot", "v2-dot", "v2-slash"]


@both_ways
@pytest.mark.parametrize(("encoding", "some_keys"), ENCODINGS, ids=ENCODING_IDS)
def test_chunk_key_encodings(
    tmp_path: Path, writer: str, reader: str, encoding: dict, some_keys: set[str],
    make_data: Any, assert_same: Any, chunk_files: Any,
) -> None:
    data = make_data("int32", (5, 7), seed=25)
    meta = make_metadata((5, 7), "int32", (2, 4), [LITTLE], chunk_key_encoding=encoding)
    WRITERS[writer](tmp_path / "a", meta, data)
    files = chunk_files(tmp_path / "a")
    assert len(files) == 6 and some_keys <= files
    assert_same(READERS[reader](tmp_path / "a")[...], data)


# -- fill values, missing chunks, which chunks are stored ------------------------------------------

FILL_CASES = [
    ("bool-true", "bool", True),
    ("int16-minus-7", "int16", -7),
    ("uint64-max", "uint64", 2**64 - 1),
    ("int64-min", "int64", -(2**63)),
    ("float32-nan", "float32", math.nan),
    ("float64-inf", "float64", math.inf),
    ("float16-neginf", "float16", -math.inf),
    ("float64-half", "float64", 0.5),
    ("complex64-nan-inf", "complex64", complex(math.nan, math.inf)),
]


@both_ways
@pytest.mark.parametrize(
    ("dtype", "fill"), [c[1:] for c in FILL_CASES], ids=[c[0] for c in FILL_CASES]
)
def test_missing_chunks_read_as_fill_value(
    tmp_path: Path, writer: str, reader: str, dtype: str, fill: Any, make_data: Any,
    assert_same: Any, chunk_files: Any,
) -> None:
    shape = (6, 8)
    meta = make_metadata(shape, dtype, (2, 4), [_serializer(dtype), GZIP], fill_value=fill)
    expected = np.full(shape, fill, dtype=dtype)
    regions = [
        ((slice(0, 2), slice(0, 4)), make_data(dtype, (2, 4), seed=26)),
        ((slice(3, 5), slice(5, 8)), make_data(dtype, (2, 3), seed=27)),
    ]
    for sel, value in regions:
        expected[sel] = value
    WRITERS[writer](tmp_path / "a", meta, None, regions=regions)
    assert "c/0/0" in chunk_files(tmp_path / "a")
    assert chunk_files(tmp_path / "a") <= {"c/0/0", "c/1/1", "c/2/1"}
    a = READERS[reader](tmp_path / "a")
    fill_read = np.asarray(a.fill_value, dtype=dtype)
    assert np.array_equal(
        fill_read, np.asarray(fill, dtype=dtype), equal_nan=fill_read.dtype.kind in "fc"
    ), a.fill_value
    assert_same(a[...], expected)
    assert_same(a[4:, :4], expected[4:, :4])


@pytest.mark.parametrize(
    ("dtype", "fill"), [("int16", 0), ("float32", math.nan), ("uint8", 3)],
    ids=["int-0", "float-nan", "uint8-3"],
)
def test_same_chunk_files_for_partly_fill_array(
    tmp_path: Path, dtype: str, fill: Any, make_data: Any, chunk_files: Any, assert_same: Any
) -> None:
    """Written whole, an array that is mostly fill leaves the same chunk files in both
    (chunks equal to the fill value are not stored), and each reads the other's."""
    data = np.full((6, 8), fill, dtype=dtype)
    data[2:4, 0:4] = np.arange(8).reshape(2, 4) + 10  # chunk (1, 0)
    data[5, 7] = 1                                     # one element of chunk (2, 1)
    meta = make_metadata((6, 8), dtype, (2, 4), [_serializer(dtype), _zstd(0, False)],
                         fill_value=fill)
    for name, write in WRITERS.items():
        write(tmp_path / name, meta, data)
        assert chunk_files(tmp_path / name) == {"c/1/0", "c/2/1"}, name
    for writer in WRITERS:
        for reader in READERS.values():
            assert_same(reader(tmp_path / writer)[...], data)


# -- attributes and dimension names ----------------------------------------------------------------


@both_ways
@pytest.mark.parametrize(
    "dimension_names", [None, ["z", "y", "x"], ["z", None, "x"]],
    ids=["none", "all", "one-null"],
)
def test_attributes_and_dimension_names(
    tmp_path: Path, writer: str, reader: str, dimension_names: Any, make_data: Any
) -> None:
    attributes = {"units": "m/s", "scale": [1.5, 2], "nested": {"ok": True, "none": None}}
    data = make_data("uint16", (2, 3, 4), seed=28)
    meta = make_metadata((2, 3, 4), "uint16", (1, 2, 2), [LITTLE], attributes=attributes,
                         dimension_names=dimension_names)
    WRITERS[writer](tmp_path / "a", meta, data)
    a = READERS[reader](tmp_path / "a")
    assert a.attributes == attributes
    assert a.dimension_names == (None if dimension_names is None else tuple(dimension_names))
