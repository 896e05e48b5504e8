"""Interop with zarr-python 3: each library reads what the other wrote, on a LocalStore folder.

Every test runs both ways (``zarr-python->zarr3c`` and ``zarr3c->zarr-python`` in the test id)
with the same arguments given to both libraries' ``create_array`` (codecs as JSON dicts), and
numpy is the oracle.  Covered: the core data types, ragged edge chunks, missing chunks and fill
values (NaN, +/-Infinity, -0.0, integer extremes), attributes and ``dimension_names``, both chunk
key encodings with both separators, the bytes codec in both byte orders, transpose, gzip, zstd,
blosc, crc32c and the ``numcodecs.*`` codecs zarr-python writes, which chunk files exist with
and without ``write_empty_chunks``, and that zarr-python's metadata parser accepts every
``zarr.json`` zarr3c writes.

Raw bits: zarr-python 3 writes numpy ``V`` dtypes as the ``raw_bytes`` extension data type and
does not read ``r<N>``; zarr3c reads both and writes ``raw_bytes`` for ``V`` dtypes.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")

from zarr.core.metadata.v3 import ArrayV3Metadata
from zarr.storage import LocalStore

import zarr3c

# zarr-python warns that numcodecs.* codecs and raw_bytes are not in the v3 spec; that is what
# these tests exercise.
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

CORE_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)

AUTO = "auto"

# -- the two libraries behind one interface ----------------------------------------------------


def _shape_of(data: np.ndarray | None, shape: tuple[int, ...] | None) -> tuple[int, ...]:
    if shape is not None:
        return shape
    assert data is not None, "give data or shape"
    return data.shape


def _dtype_of(data: np.ndarray | None, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    assert data is not None, "give data or dtype"
    return data.dtype


def write_zarr_python(
    path: Path,
    data: np.ndarray | None,
    *,
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
    chunks: tuple[int, ...],
    filters: Any = (),
    serializer: Any = AUTO,
    compressors: Any = AUTO,
    fill_value: Any = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    attributes: dict[str, Any] | None = None,
    write_empty_chunks: bool = False,
    regions: list[tuple[tuple[slice, ...], np.ndarray]] | None = None,
) -> None:
    """Create an array with zarr-python; write ``data`` whole, or only ``regions``."""
    a = zarr.create_array(
        store=LocalStore(str(path)),
        shape=_shape_of(data, shape),
        dtype=_dtype_of(data, dtype),
        chunks=chunks,
        filters=list(filters),
        serializer=serializer,
        compressors=compressors,
        fill_value=fill_value,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names,
        attributes=attributes,
        config={"write_empty_chunks": write_empty_chunks},
    )
    if regions is not None:
        for sel, value in regions:
            a[sel] = value
    elif data is not None:
        a[...] = data


def write_zarr3c(
    path: Path,
    data: np.ndarray | None,
    *,
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
    chunks: tuple[int, ...],
    filters: Any = (),
    serializer: Any = AUTO,
    compressors: Any = AUTO,
    fill_value: Any = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    attributes: dict[str, Any] | None = None,
    write_empty_chunks: bool = False,
    regions: list[tuple[tuple[slice, ...], np.ndarray]] | None = None,
) -> None:
    """Create an array with zarr3c; write ``data`` whole, or only ``regions``."""
    a = zarr3c.create_array(
        str(path),
        shape=_shape_of(data, shape),
        dtype=_dtype_of(data, dtype),
        chunks=chunks,
        filters=list(filters),
        serializer=serializer,
        compressors=compressors,
        fill_value=fill_value,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names,
        attributes=attributes,
        write_empty_chunks=write_empty_chunks,
    )
    if regions is not None:
        for sel, value in regions:
            a[sel] = value
    elif data is not None:
        a[...] = data


def open_zarr_python(path: Path) -> Any:
    return zarr.open_array(store=LocalStore(str(path), read_only=True), mode="r")


def open_zarr3c(path: Path) -> zarr3c.Array:
    return zarr3c.open_array(str(path), mode="r")


def dimension_names_of(a: Any) -> tuple[str | None, ...] | None:
    """``dimension_names`` as a tuple (or None), whichever library opened ``a``."""
    if isinstance(a, zarr3c.Array):
        names = a.metadata.to_dict().get("dimension_names")
    else:
        names = a.metadata.dimension_names
    return None if names is None else tuple(names)


WRITERS: dict[str, Callable[..., None]] = {"zarr-python": write_zarr_python, "zarr3c": write_zarr3c}
READERS: dict[str, Callable[[Path], Any]] = {"zarr-python": open_zarr_python, "zarr3c": open_zarr3c}

DIRECTIONS = [("zarr-python", "zarr3c"), ("zarr3c", "zarr-python")]
DIRECTION_IDS = [f"{w}->{r}" for w, r in DIRECTIONS]


def both_ways(func: Callable[..., Any]) -> Callable[..., Any]:
    """Parametrize a test over (writer, reader)."""
    return pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=DIRECTION_IDS)(func)


def _fill_equal(actual: Any, expected: Any) -> bool:
    a = np.asarray(actual)
    e = np.asarray(expected, dtype=a.dtype)
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, e, equal_nan=True)) and bool(
            np.all(np.signbit(a.real) == np.signbit(e.real))
        )
    return bool(np.array_equal(a, e))


# -- data types ------------------------------------------------------------------------------------


@both_ways
@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_core_dtypes_ragged(
    tmp_path: Path, writer: str, reader: str, dtype: str, make_data: Any, assert_same: Any
) -> None:
    """Every core data type, default codecs of the writer, edge chunks on both axes."""
    data = make_data(dtype, (7, 10), seed=1)
    WRITERS[writer](tmp_path / "a", data, chunks=(3, 4))
    a = READERS[reader](tmp_path / "a")
    assert a.shape == (7, 10)
    assert a.chunks == (3, 4)
    assert np.dtype(a.dtype) == np.dtype(dtype)
    assert_same(a[...], data)
    assert_same(a[1:6, 2:9:3], data[1:6, 2:9:3])
    assert_same(a[6, :], data[6, :])


@both_ways
@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((), ()), ((0, 5), (2, 2)), ((3, 0), (2, 2)), ((1,), (1,)), ((2, 3, 4), (5, 5, 5))],
    ids=["0d", "empty-rows", "empty-cols", "single", "chunk-larger-than-array"],
)
def test_degenerate_shapes(
    tmp_path: Path, writer: str, reader: str, shape: Any, chunks: Any, make_data: Any,
    assert_same: Any,
) -> None:
    data = make_data("int32", shape, seed=2)
    WRITERS[writer](tmp_path / "a", data, chunks=chunks)
    a = READERS[reader](tmp_path / "a")
    assert a.shape == shape
    assert_same(a[...], data)


# -- codecs ----------------------------------------------------------------------------------------

BIG = {"name": "bytes", "configuration": {"endian": "big"}}
LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}


def _t(*order: int) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(order)}}


def _blosc(cname: str, shuffle: str, typesize: int, clevel: int = 5, blocksize: int = 0) -> dict:
    return {"name": "blosc", "configuration": {
        "cname": cname, "clevel": clevel, "shuffle": shuffle, "typesize": typesize,
        "blocksize": blocksize,
    }}


def _nc(codec_id: str, **config: Any) -> dict[str, Any]:
    return {"name": f"numcodecs.{codec_id}", "configuration": config}


GZIP5 = {"name": "gzip", "configuration": {"level": 5}}
CRC32C = {"name": "crc32c"}

Geometry = tuple[tuple[int, ...], tuple[int, ...]]
G2: Geometry = ((9, 10), (4, 3))  # (shape, chunks): ragged on both axes
G3: Geometry = ((5, 6, 7), (2, 3, 4))
BYTES = {"name": "bytes"}  # no endian: 1-byte types


def _gz(level: int) -> dict[str, Any]:
    return {"name": "gzip", "configuration": {"level": level}}


def _zs(level: int, checksum: bool) -> dict[str, Any]:
    return {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}


# (id, dtype, (shape, chunks), filters, serializer, compressors)
CODEC_CASES: list[tuple[str, str, Geometry, list, Any, Any]] = [
    ("no-compressor", "float64", G2, [], LITTLE, None),
    ("bytes-big-int16", "int16", G2, [], BIG, None),
    ("bytes-big-uint32", "uint32", G2, [], BIG, None),
    ("bytes-big-int64", "int64", G2, [], BIG, None),
    ("bytes-big-float16", "float16", G2, [], BIG, None),
    ("bytes-big-float64", "float64", G2, [], BIG, [GZIP5]),
    ("bytes-big-complex64", "complex64", G2, [], BIG, None),
    ("bytes-big-complex128", "complex128", G2, [], BIG, None),
    ("bytes-no-endian-uint8", "uint8", G2, [], BYTES, None),
    ("bytes-no-endian-bool", "bool", G2, [], BYTES, None),
    ("gzip-1", "int32", G2, [], LITTLE, [_gz(1)]),
    ("gzip-9", "float32", G2, [], LITTLE, [_gz(9)]),
    ("zstd-0", "int16", G2, [], LITTLE, [_zs(0, False)]),
    ("zstd-5-checksum", "float64", G2, [], LITTLE, [_zs(5, True)]),
    ("blosc-lz4-shuffle", "float32", G2, [], LITTLE, [_blosc("lz4", "shuffle", 4)]),
    ("blosc-zstd-bitshuffle", "int64", G2, [], LITTLE, [_blosc("zstd", "bitshuffle", 8, clevel=1)]),
    ("blosc-blosclz-noshuffle", "uint16", G2, [], LITTLE, [_blosc("blosclz", "noshuffle", 2)]),
    ("blosc-zlib-shuffle", "complex64", G2, [], LITTLE, [_blosc("zlib", "shuffle", 8, clevel=9)]),
    ("blosc-lz4hc-blocksize", "float64", G2, [],
     LITTLE, [_blosc("lz4hc", "shuffle", 8, blocksize=64)]),
    ("blosc-bool", "bool", G2, [], BYTES, [_blosc("zstd", "bitshuffle", 1)]),
    ("crc32c", "int32", G2, [], LITTLE, [CRC32C]),
    ("gzip-crc32c", "float32", G2, [], BIG, [GZIP5, CRC32C]),
    ("zstd-crc32c", "uint64", G2, [], LITTLE, [_zs(3, False), CRC32C]),
    ("transpose-2d", "float32", G2, [_t(1, 0)], LITTLE, None),
    ("transpose-identity", "int16", G2, [_t(0, 1)], LITTLE, None),
    ("transpose-3d", "int32", G3, [_t(2, 0, 1)], LITTLE, [GZIP5]),
    ("transpose-3d-big-blosc", "float64", G3, [_t(1, 2, 0)], BIG, [_blosc("lz4", "shuffle", 8)]),
    ("transpose-bool-crc32c", "bool", G3, [_t(2, 1, 0)], BYTES, [CRC32C]),
    ("transpose-twice", "int16", G3, [_t(2, 0, 1), _t(1, 2, 0)], LITTLE, None),
    ("numcodecs-zlib", "float32", G2, [], LITTLE, [_nc("zlib", level=3)]),
    ("numcodecs-gzip", "float32", G2, [], LITTLE, [_nc("gzip", level=4)]),
    ("numcodecs-bz2", "int32", G2, [], LITTLE, [_nc("bz2", level=9)]),
    ("numcodecs-lzma", "int32", G2, [], LITTLE, [_nc("lzma")]),
    ("numcodecs-lz4", "float64", G2, [], LITTLE, [_nc("lz4", acceleration=1)]),
    ("numcodecs-zstd", "float64", G2, [], LITTLE, [_nc("zstd", level=2)]),
    ("numcodecs-blosc", "int16", G2, [],
     LITTLE, [_nc("blosc", cname="lz4", clevel=5, shuffle=1, blocksize=0)]),
    ("numcodecs-adler32", "float32", G2, [], LITTLE, [_nc("adler32")]),
    ("numcodecs-crc32", "float32", G2, [], LITTLE, [_nc("crc32")]),
    ("numcodecs-crc32c", "float32", G2, [], LITTLE, [_nc("crc32c")]),
    ("numcodecs-fletcher32", "int16", G2, [], LITTLE, [_nc("fletcher32")]),
    ("numcodecs-jenkins_lookup3", "uint8", G2, [], BYTES, [_nc("jenkins_lookup3")]),
    ("numcodecs-shuffle-zlib", "float64", G2, [],
     LITTLE, [_nc("shuffle", elementsize=8), _nc("zlib", level=1)]),
    ("numcodecs-packbits", "bool", G2, [_nc("packbits")], BYTES, None),
    ("numcodecs-delta", "int32", G2, [_nc("delta", dtype="<i4")], LITTLE, [GZIP5]),
    ("numcodecs-delta-astype", "int32", G2, [_nc("delta", dtype="<i4", astype="<i8")],
     LITTLE, None),
    ("transpose-numcodecs-delta-bz2", "int64", G3, [_t(2, 0, 1), _nc("delta", dtype="<i8")],
     LITTLE, [_nc("bz2", level=1), CRC32C]),
]
CODEC_IDS = [c[0] for c in CODEC_CASES]


@both_ways
@pytest.mark.parametrize("case", CODEC_CASES, ids=CODEC_IDS)
def test_codecs(
    tmp_path: Path, writer: str, reader: str, case: tuple, make_data: Any, assert_same: Any
) -> None:
    _, dtype, (shape, chunks), filters, serializer, compressors = case
    data = make_data(dtype, shape, seed=3)
    if "delta" in case[0]:
        # delta wraps around on overflow; keep the values small so astype="<i8" round-trips
        data = (data % 1000).astype(dtype)
    path = tmp_path / "a"
    WRITERS[writer](path, data, chunks=chunks, filters=filters, serializer=serializer,
                    compressors=compressors)
    stored = json.loads((path / "zarr.json").read_text())
    assert [c["name"] for c in stored["codecs"]] == [
        c["name"] for c in [*filters, serializer, *(compressors or [])]
    ]
    a = READERS[reader](path)
    assert_same(a[...], data)
    sel = tuple(slice(1, None, 2) for _ in shape)
    assert_same(a[sel], data[sel])


UPDATE_CASES = [c for c in CODEC_CASES if c[0] in (
    "bytes-big-float64", "crc32c", "transpose-3d-big-blosc", "transpose-bool-crc32c",
    "transpose-numcodecs-delta-bz2", "numcodecs-fletcher32",
)]


def test_numcodecs_filter_before_big_endian_bytes(tmp_path: Path, chunk_files: Any) -> None:
    """numcodecs.delta then bytes(big): both libraries store the same bytes and zarr3c reads
    them back.  (zarr-python 3.1.6 does not read this layout back itself -- its delta views the
    big-endian decoded array as little-endian -- so only the stored bytes are compared.)"""
    data = np.array([[1, 2, 3], [40, 50, -60]], dtype="int64")
    kwargs: dict[str, Any] = {
        "chunks": (2, 2), "filters": [_nc("delta", dtype="<i8")], "serializer": BIG,
        "compressors": None,
    }
    for name, write in WRITERS.items():
        write(tmp_path / name, data, **kwargs)
    files = chunk_files(tmp_path / "zarr3c")
    assert files == chunk_files(tmp_path / "zarr-python") == {"c/0/0", "c/0/1"}
    for key in files:
        assert (tmp_path / "zarr3c" / key).read_bytes() == (
            tmp_path / "zarr-python" / key
        ).read_bytes(), key
    for name in WRITERS:
        np.testing.assert_array_equal(open_zarr3c(tmp_path / name)[...], data)


@both_ways
@pytest.mark.parametrize("case", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_foreign_chunks(
    tmp_path: Path, writer: str, reader: str, case: tuple, make_data: Any, assert_same: Any
) -> None:
    """The reader opens the writer's array read/write, overwrites a region crossing chunk edges
    (read-modify-write of foreign chunks), and the writer's library sees the result."""
    _, dtype, (shape, chunks), filters, serializer, compressors = case
    data = make_data(dtype, shape, seed=4)
    path = tmp_path / "a"
    WRITERS[writer](path, data, chunks=chunks, filters=filters, serializer=serializer,
                    compressors=compressors)
    patch_sel = tuple(slice(1, n - 1) for n in shape)
    patch = make_data(dtype, data[patch_sel].shape, seed=5)
    if reader == "zarr3c":
        zarr3c.open_array(str(path), mode="r+")[patch_sel] = patch
    else:
        zarr.open_array(store=LocalStore(str(path)), mode="r+")[patch_sel] = patch
    data[patch_sel] = patch
    assert_same(READERS[writer](path)[...], data)


# Codec configurations given in part: the writer completes them from the array's data type.
# zarr-python writes the completed configuration to zarr.json; so must zarr3c, or readers that
# do not fill the same defaults (tensorstore, numcodecs users) cannot open the array.
# (id, dtype, filters, compressors)
PARTIAL_CONFIG_CASES: list[tuple[str, str, list, list | None]] = [
    ("blosc-float64", "float64", [],
     [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}]),
    ("blosc-uint8", "uint8", [],
     [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3}}]),
    ("numcodecs-shuffle", "float64", [], [_nc("shuffle")]),
    ("numcodecs-quantize", "float64", [_nc("quantize", digits=3)], None),
    ("numcodecs-fixedscaleoffset", "float64",
     [_nc("fixedscaleoffset", offset=1000, scale=10, astype="<i4")], None),
    ("numcodecs-astype", "float64", [_nc("astype", encode_dtype="<f4")], None),
    # complete already, but lossy: compared by what each library decodes
    ("numcodecs-bitround", "float32", [_nc("bitround", keepbits=5)], None),
]


def _same_codec(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two codec objects configure the same codec (numcodecs ones compared as numcodecs does,
    so "float64" and "<f8" are the same dtype)."""
    if a["name"] != b["name"]:
        return False
    if a["name"].startswith("numcodecs."):
        import numcodecs

        codec_id = a["name"].removeprefix("numcodecs.")
        try:  # an incomplete configuration (a required field left out) is not the same codec
            return bool(
                numcodecs.get_codec({"id": codec_id, **a.get("configuration", {})})
                == numcodecs.get_codec({"id": codec_id, **b.get("configuration", {})})
            )
        except TypeError:
            return False
    return a.get("configuration") == b.get("configuration")


@pytest.mark.parametrize("case", PARTIAL_CONFIG_CASES, ids=[c[0] for c in PARTIAL_CONFIG_CASES])
def test_completed_codec_configurations_agree(tmp_path: Path, case: tuple) -> None:
    """Given the same partial codec configurations, both libraries store the same complete
    configurations, and each reads exactly what the other decodes from its own array."""
    _, dtype, filters, compressors = case
    data = (np.linspace(0, 100, 30).reshape(5, 6)).astype(dtype)
    for name, write in WRITERS.items():
        write(tmp_path / name, data, chunks=(2, 4), filters=filters, compressors=compressors)
    codecs = {
        name: json.loads((tmp_path / name / "zarr.json").read_text())["codecs"]
        for name in WRITERS
    }
    assert len(codecs["zarr3c"]) == len(codecs["zarr-python"])
    for ours, theirs in zip(codecs["zarr3c"], codecs["zarr-python"], strict=True):
        assert _same_codec(ours, theirs), (ours, theirs)
    for name in WRITERS:
        own = READERS[name](tmp_path / name)[...]
        other = "zarr3c" if name == "zarr-python" else "zarr-python"
        np.testing.assert_array_equal(READERS[other](tmp_path / name)[...], own)


@pytest.mark.parametrize(
    "compressor",
    [{"name": "zstd"}, {"name": "zstd", "configuration": {"level": 3}},
     {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}],
    ids=["zstd-no-configuration", "zstd-level-only", "blosc-cname-clevel"],
)
def test_zarr_python_opens_zarr3c_arrays_with_defaulted_codec_fields(
    tmp_path: Path, compressor: dict[str, Any], make_data: Any, assert_same: Any
) -> None:
    """zarr3c accepts codec configurations with fields left out (defaults filled in); the
    zarr.json it writes must still open in zarr-python, which needs a ``configuration``."""
    data = make_data("float32", (5, 6), seed=15)
    write_zarr3c(tmp_path / "a", data, chunks=(2, 4), compressors=[compressor])
    stored = json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"][-1]
    assert stored["name"] == compressor["name"]
    assert set(compressor.get("configuration", {})) < set(stored["configuration"]), stored
    assert_same(open_zarr_python(tmp_path / "a")[...], data)


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
    data = make_data("uint16", (5, 7), seed=6)
    path = tmp_path / "a"
    WRITERS[writer](path, data, chunks=(2, 4), chunk_key_encoding=encoding)
    files = chunk_files(path)
    assert len(files) == 6
    assert some_keys <= files
    assert json.loads((path / "zarr.json").read_text())["chunk_key_encoding"]["name"] == (
        encoding["name"]
    )
    assert_same(READERS[reader](path)[...], data)


@pytest.mark.parametrize(("encoding", "some_keys"), ENCODINGS, ids=ENCODING_IDS)
def test_chunk_key_encodings_same_files(
    tmp_path: Path, encoding: dict, some_keys: set[str], make_data: Any, chunk_files: Any
) -> None:
    """Both libraries store the same chunks under the same keys."""
    data = make_data("float32", (5, 7, 3), seed=7)
    for name, write in WRITERS.items():
        write(tmp_path / name, data, chunks=(2, 4, 2), chunk_key_encoding=encoding)
    assert chunk_files(tmp_path / "zarr3c") == chunk_files(tmp_path / "zarr-python")


@pytest.mark.parametrize(("encoding", "key"), [
    (ENCODINGS[0][0], "c"), (ENCODINGS[1][0], "c"), (ENCODINGS[2][0], "0"), (ENCODINGS[3][0], "0"),
], ids=ENCODING_IDS)
def test_zero_dimensional_chunk_key(
    tmp_path: Path, encoding: dict, key: str, chunk_files: Any
) -> None:
    """A 0-d array's only chunk: "c" (default) or "0" (v2), the same in both."""
    data = np.array(7.5, dtype="float64")
    for name, write in WRITERS.items():
        write(tmp_path / name, data, chunks=(), chunk_key_encoding=encoding)
        assert chunk_files(tmp_path / name) == {key}, name
    for writer in WRITERS:
        for reader in READERS.values():
            assert reader(tmp_path / writer)[...] == 7.5


@both_ways
@pytest.mark.parametrize(
    "layout", ["big-endian", "fortran", "strided-view"],
)
def test_non_native_and_non_contiguous_input(
    tmp_path: Path, writer: str, reader: str, layout: str, make_data: Any, assert_same: Any
) -> None:
    """What the writer is given (byte order, memory layout) does not change what is stored."""
    base = make_data("float64", (14, 10), seed=16)
    if layout == "big-endian":
        value = base[:7].astype(">f8")
    elif layout == "fortran":
        value = np.asfortranarray(base[:7])
    else:
        value = base[::2]
    expected = np.ascontiguousarray(value, dtype="float64")
    WRITERS[writer](tmp_path / "a", value, dtype="float64", chunks=(3, 4))
    assert_same(READERS[reader](tmp_path / "a")[...], expected)


# -- fill values and missing chunks ----------------------------------------------------------------

FILL_CASES = [
    ("bool-true", "bool", True),
    ("int8-min", "int8", -128),
    ("int16-42", "int16", 42),
    ("int64-min", "int64", -(2**63)),
    ("uint8-max", "uint8", 255),
    ("uint64-max", "uint64", 2**64 - 1),
    ("float16-nan", "float16", math.nan),
    ("float32-nan", "float32", math.nan),
    ("float64-nan", "float64", math.nan),
    ("float32-inf", "float32", math.inf),
    ("float64-neginf", "float64", -math.inf),
    ("float64-negzero", "float64", -0.0),
    ("float32-fraction", "float32", 0.1),
    ("complex64-nan-1", "complex64", complex(math.nan, 1.0)),
    ("complex128-inf", "complex128", complex(math.inf, -2.5)),
]


@both_ways
@pytest.mark.parametrize(
    ("dtype", "fill"), [c[1:] for c in FILL_CASES], ids=[c[0] for c in FILL_CASES]
)
def test_missing_chunks_read_as_fill_value(
    tmp_path: Path, writer: str, reader: str, dtype: str, fill: Any, make_data: Any,
    assert_same: Any, chunk_files: Any,
) -> None:
    """Only two regions are written; every other element reads as the fill value."""
    shape, chunks = (6, 8), (2, 4)
    expected = np.full(shape, fill, dtype=dtype)
    regions = [
        ((slice(0, 2), slice(0, 4)), make_data(dtype, (2, 4), seed=8)),  # chunk (0, 0) whole
        ((slice(3, 5), slice(5, 8)), make_data(dtype, (2, 3), seed=9)),  # parts of (1, 1), (2, 1)
    ]
    for sel, value in regions:
        expected[sel] = value
    path = tmp_path / "a"
    WRITERS[writer](path, None, shape=shape, dtype=dtype, chunks=chunks, fill_value=fill,
                    regions=regions)
    assert chunk_files(path) <= {"c/0/0", "c/1/1", "c/2/1"}
    assert "c/0/0" in chunk_files(path)
    a = READERS[reader](path)
    assert _fill_equal(a.fill_value, np.asarray(fill, dtype=dtype)), a.fill_value
    assert_same(a[...], expected)
    assert_same(a[4:, :4], expected[4:, :4])  # a missing chunk alone


def test_fill_value_json_forms_agree(tmp_path: Path) -> None:
    """Both write the same JSON fill values (NaN, Infinity, -Infinity, complex, integers)."""
    for fill_id, dtype, fill in FILL_CASES:
        docs = []
        for name, write in WRITERS.items():
            path = tmp_path / f"{fill_id}-{name}"
            write(path, None, shape=(2,), dtype=dtype, chunks=(2,), fill_value=fill)
            docs.append(json.loads((path / "zarr.json").read_text())["fill_value"])
        assert docs[0] == docs[1] or (
            isinstance(docs[0], float) and isinstance(docs[1], float)
            and np.float64(docs[0]).astype(dtype) == np.float64(docs[1]).astype(dtype)
        ), (dtype, fill, docs)


def test_zarr3c_reads_hex_nan_fill_written_by_hand(tmp_path: Path) -> None:
    """A NaN fill with a payload ("0x7fc00001") written in zarr.json reads as NaN in both."""
    path = tmp_path / "a"
    write_zarr_python(path, None, shape=(4,), dtype="float32", chunks=(2,), fill_value=0.0)
    doc = json.loads((path / "zarr.json").read_text())
    doc["fill_value"] = "0x7fc00001"
    (path / "zarr.json").write_text(json.dumps(doc))
    zp = open_zarr_python(path)
    z3 = open_zarr3c(path)
    assert np.isnan(zp.fill_value) and np.isnan(z3.fill_value)
    assert np.asarray(z3.fill_value, dtype="float32").view("uint32") == 0x7FC00001
    assert np.isnan(z3[...]).all()
    assert np.isnan(zp[...]).all()


# -- write_empty_chunks ----------------------------------------------------------------------------


@pytest.mark.parametrize("write_empty_chunks", [False, True], ids=["skip-empty", "write-empty"])
@pytest.mark.parametrize(
    ("dtype", "fill"), [("int32", 0), ("float64", math.nan), ("uint8", 7)],
    ids=["int-0", "float-nan", "uint8-7"],
)
def test_write_empty_chunks_same_files(
    tmp_path: Path, write_empty_chunks: bool, dtype: str, fill: Any, make_data: Any,
    chunk_files: Any, assert_same: Any,
) -> None:
    """An array that is mostly fill: both store the same chunk files, and both read both."""
    data = np.full((6, 8), fill, dtype=dtype)
    data[2:4, 0:4] = make_data(dtype, (2, 4), seed=10)  # chunk (1, 0)
    data[5, 7] = make_data(dtype, (1,), seed=11)[0]     # one element of chunk (2, 1)
    if dtype == "float64":
        data[2, 0] = 1.5  # no NaN in the written values, so no chunk of them looks empty
        data[5, 7] = 2.5
    for name, write in WRITERS.items():
        write(tmp_path / name, data, chunks=(2, 4), fill_value=fill,
              write_empty_chunks=write_empty_chunks)
    files = chunk_files(tmp_path / "zarr3c")
    assert files == chunk_files(tmp_path / "zarr-python")
    if write_empty_chunks:
        assert files == {f"c/{i}/{j}" for i in range(3) for j in range(2)}
    else:
        assert files == {"c/1/0", "c/2/1"}
    for writer in WRITERS:
        for reader in READERS.values():
            assert_same(reader(tmp_path / writer)[...], data)


@pytest.mark.parametrize("updater", ["zarr-python", "zarr3c"])
def test_chunk_reset_to_fill_is_erased(
    tmp_path: Path, updater: str, make_data: Any, chunk_files: Any
) -> None:
    """Writing the fill value over a whole stored chunk removes its file (write_empty_chunks off),
    whichever library wrote the chunk and whichever resets it."""
    data = make_data("int16", (4, 4), seed=12)
    writer = "zarr3c" if updater == "zarr-python" else "zarr-python"
    path = tmp_path / "a"
    WRITERS[writer](path, data, chunks=(2, 2), fill_value=0)
    assert len(chunk_files(path)) == 4
    if updater == "zarr3c":
        zarr3c.open_array(str(path), mode="r+")[0:2, 2:4] = 0
    else:
        zarr.open_array(store=LocalStore(str(path)), mode="r+")[0:2, 2:4] = 0
    assert chunk_files(path) == {"c/0/0", "c/1/0", "c/1/1"}
    data[0:2, 2:4] = 0
    np.testing.assert_array_equal(open_zarr3c(path)[...], data)
    np.testing.assert_array_equal(open_zarr_python(path)[...], data)


# -- attributes and dimension names ----------------------------------------------------------------

ATTRIBUTES = {
    "title": "interop ✓",
    "n": 3,
    "x": 2.5,
    "flag": True,
    "nothing": None,
    "list": [1, "two", [3.0]],
    "nested": {"a": {"b": []}},
}


@both_ways
@pytest.mark.parametrize(
    "dimension_names", [None, ["y", "x"], [None, "x"], ["", "名前"]],
    ids=["none", "both", "one-null", "empty-and-unicode"],
)
def test_attributes_and_dimension_names(
    tmp_path: Path, writer: str, reader: str, dimension_names: Any, make_data: Any
) -> None:
    data = make_data("int8", (3, 4), seed=13)
    path = tmp_path / "a"
    WRITERS[writer](path, data, chunks=(2, 2), attributes=ATTRIBUTES,
                    dimension_names=dimension_names)
    a = READERS[reader](path)
    assert dict(a.attrs) == ATTRIBUTES
    expected = None if dimension_names is None else tuple(dimension_names)
    assert dimension_names_of(a) == expected


@both_ways
def test_attribute_updates(tmp_path: Path, writer: str, reader: str, make_data: Any) -> None:
    """Attributes changed through one library after creation are seen by the other."""
    path = tmp_path / "a"
    WRITERS[writer](path, make_data("float32", (4,)), chunks=(2,), attributes={"keep": 1})
    if reader == "zarr3c":
        a = zarr3c.open_array(str(path), mode="r+")
    else:
        a = zarr.open_array(store=LocalStore(str(path)), mode="r+")
    a.attrs["added"] = {"by": reader}
    a.attrs.update({"more": [1, 2]})
    expected = {"keep": 1, "added": {"by": reader}, "more": [1, 2]}
    assert dict(READERS[writer](path).attrs) == expected
    assert dict(READERS[reader](path).attrs) == expected


# -- metadata documents ----------------------------------------------------------------------------


def _zarr3c_documents(tmp_path: Path, make_data: Any) -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for dtype in CORE_DTYPES:
        path = tmp_path / f"dtype-{dtype}"
        write_zarr3c(path, make_data(dtype, (3, 5)), chunks=(2, 2))
        docs.append((f"dtype-{dtype}", json.loads((path / "zarr.json").read_text())))
    for case_id, dtype, (shape, chunks), filters, serializer, compressors in CODEC_CASES:
        path = tmp_path / f"codec-{case_id}"
        write_zarr3c(path, None, shape=shape, dtype=dtype, chunks=chunks, filters=filters,
                     serializer=serializer, compressors=compressors)
        docs.append((f"codec-{case_id}", json.loads((path / "zarr.json").read_text())))
    for (encoding, _), enc_id in zip(ENCODINGS, ENCODING_IDS, strict=True):
        path = tmp_path / f"cke-{enc_id}"
        write_zarr3c(path, None, shape=(3,), dtype="int8", chunks=(2,),
                     chunk_key_encoding=encoding)
        docs.append((f"cke-{enc_id}", json.loads((path / "zarr.json").read_text())))
    for fill_id, dtype, fill in FILL_CASES:
        path = tmp_path / f"fill-{fill_id}"
        write_zarr3c(path, None, shape=(3,), dtype=dtype, chunks=(2,), fill_value=fill,
                     attributes=ATTRIBUTES, dimension_names=["t"])
        docs.append((f"fill-{fill_id}", json.loads((path / "zarr.json").read_text())))
    return docs


def test_zarr3c_documents_accepted_by_zarr_python(tmp_path: Path, make_data: Any) -> None:
    """zarr-python's ``ArrayV3Metadata.from_dict`` accepts every zarr.json zarr3c writes, and
    reads the same shape, data type, chunks, fill value, codecs and attributes from it."""
    for doc_id, doc in _zarr3c_documents(tmp_path, make_data):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            meta = ArrayV3Metadata.from_dict(json.loads(json.dumps(doc)))
        back = json.loads(json.dumps(meta.to_dict(), default=str))
        assert tuple(back["shape"]) == tuple(doc["shape"]), doc_id
        assert back["data_type"] == doc["data_type"], doc_id
        assert back["chunk_grid"] == doc["chunk_grid"], doc_id
        assert back["chunk_key_encoding"]["name"] == doc["chunk_key_encoding"]["name"], doc_id
        assert back["attributes"] == doc.get("attributes", {}), doc_id
        assert [c["name"] for c in back["codecs"]] == [c["name"] for c in doc["codecs"]], doc_id
        dt = np.dtype(meta.data_type.to_native_dtype())
        expected_fill = zarr3c.open_array(str(tmp_path / doc_id), mode="r").fill_value
        assert _fill_equal(meta.fill_value, np.asarray(expected_fill, dtype=dt)), doc_id


def test_zarr3c_documents_survive_zarr_python_round_trip(tmp_path: Path, make_data: Any) -> None:
    """zarr3c opens the documents zarr-python re-serializes from its own parse of ours."""
    for doc_id, doc in _zarr3c_documents(tmp_path, make_data):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            meta = ArrayV3Metadata.from_dict(json.loads(json.dumps(doc)))
        path = tmp_path / doc_id
        (path / "zarr.json").write_bytes(
            meta.to_buffer_dict(zarr.core.buffer.default_buffer_prototype())["zarr.json"]
            .to_bytes()
        )
        a = zarr3c.open_array(str(path), mode="r")
        assert a.shape == tuple(doc["shape"]), doc_id
        assert a.metadata.to_dict()["codecs"] == doc["codecs"], doc_id


# -- groups ----------------------------------------------------------------------------------------


def test_group_written_by_zarr3c_opens_in_zarr_python(tmp_path: Path, make_data: Any) -> None:
    data = make_data("float32", (4, 3))
    root = zarr3c.create_group(str(tmp_path), attributes={"level": "root"})
    sub = root.create_group("sub", attributes={"level": 1})
    sub.create_array("arr", shape=(4, 3), dtype="float32", chunks=(2, 2))[...] = data
    g = zarr.open_group(store=LocalStore(str(tmp_path), read_only=True), mode="r")
    assert dict(g.attrs) == {"level": "root"}
    assert sorted(g.group_keys()) == ["sub"]
    assert dict(g["sub"].attrs) == {"level": 1}
    np.testing.assert_array_equal(g["sub/arr"][...], data)


def test_group_written_by_zarr_python_opens_in_zarr3c(tmp_path: Path, make_data: Any) -> None:
    data = make_data("int64", (5,))
    root = zarr.create_group(store=LocalStore(str(tmp_path)), attributes={"level": "root"})
    sub = root.create_group("sub", attributes={"level": 1})
    sub.create_array("arr", shape=(5,), dtype="int64", chunks=(2,))[...] = data
    root.create_array("top", shape=(2,), dtype="bool", chunks=(1,))
    g = zarr3c.open_group(str(tmp_path), mode="r")
    assert dict(g.attrs) == {"level": "root"}
    assert "sub" in g and "top" in g
    assert sorted(name for name, _ in g.members()) == ["sub", "top"]
    assert dict(g["sub"].attrs) == {"level": 1}
    sub = g["sub"]
    assert isinstance(sub, zarr3c.Group)
    arr = sub["arr"]
    assert isinstance(arr, zarr3c.Array)
    np.testing.assert_array_equal(arr[...], data)
    np.testing.assert_array_equal(zarr3c.open_array(str(tmp_path), path="sub/arr")[...], data)


# -- resize ----------------------------------------------------------------------------------------


def test_zarr3c_resize_seen_by_zarr_python(tmp_path: Path, make_data: Any) -> None:
    """Shrinking then growing with zarr3c: zarr-python sees the fill value, not stale data."""
    data = make_data("int32", (6, 6), seed=14)
    path = tmp_path / "a"
    write_zarr_python(path, data, chunks=(4, 4), fill_value=-1)
    a = zarr3c.open_array(str(path), mode="r+")
    a.resize((3, 6))
    a.resize((6, 7))
    expected = np.full((6, 7), -1, dtype="int32")
    expected[:3, :6] = data[:3]
    np.testing.assert_array_equal(open_zarr_python(path)[...], expected)


# -- raw bits --------------------------------------------------------------------------------------


def test_zarr_python_raw_bytes_read(tmp_path: Path) -> None:
    """zarr-python writes void dtypes as the ``raw_bytes`` extension (not ``r<N>``); zarr3c
    reads it (and writes it for numpy ``V`` dtypes: tests/interop/test_interop_extension_dtypes.py)."""
    path = tmp_path / "a"
    a = zarr.create_array(store=LocalStore(str(path)), shape=(2,), chunks=(2,), dtype="V3")
    a[...] = np.array([b"abc", b"def"], dtype="V3")
    out = zarr3c.open_array(str(path), mode="r")
    assert out.dtype == np.dtype("V3")
    assert out[...].tobytes() == b"abcdef"
