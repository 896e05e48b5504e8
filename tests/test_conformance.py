"""Conformance: zarr3c reads the Zarr v3 arrays other implementations wrote.

The data lives outside the repository, in ``../shared/conformance/`` (the folder ``shared`` beside
the checkout; its ``SOURCES.md`` lists where every file comes from and the values each array
holds).  The module is skipped when that folder is absent.

Sets read here (each array is one test id, ``<set>/<array>``):

- ``zarrita``: zarrita.js' v3 fixtures (written by zarr-python >= 3.1.2);
- ``zarrs-zarr-python``: zarrs' ``v3_zarr_python`` arrays (zarr-python 3.0.8; none, blosc, gzip,
  zstd and the ``numcodecs.*`` compressors and checksums, zfpy, pcodec);
- ``zarrs-snapshot``: zarrs' snapshot arrays under ``crc32c/``, ``transpose/``,
  ``sharding_indexed_inner2x2/`` and ``reshape_flatten/`` (shape [8, 24], chunks [4, 6]);
- ``bisaloo``: Bisaloo/zarr-conformance-tests' ``int32_v3.zarr``;

plus zarr-python's zarr-metadata fixtures (array documents, and every valid fill value spelling
per data type, read bit-exactly), and damaged copies (in ``tmp_path``) of some arrays: a flipped
bit under crc32c, truncated chunks, a deleted chunk.

Each array either uses only features zarr3c implements (:data:`SUPPORTED_CODECS`, the core data
types) and must read back exactly the documented values, or it uses an extension zarr3c does not
implement yet (a codec or data type from outside the specs it follows) and opening/reading it must
raise :class:`zarr3c.errors.UnknownExtensionError` naming that extension -- never a raw
``KeyError``/``TypeError``.  When a feature lands, add its name to :data:`SUPPORTED_CODECS`
(or :data:`SUPPORTED_DATA_TYPES`, :data:`SUPPORTED_CHUNK_GRIDS`): the expected values of those
arrays are already listed here, so the same tests then check the data.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"

if not CONFORMANCE.is_dir():
    pytest.skip(
        f"conformance data folder {CONFORMANCE} is absent (it sits beside the checkout in CI)",
        allow_module_level=True,
    )

import zarr3c
from zarr3c.errors import UnknownExtensionError, ZarrError

ZARRITA = CONFORMANCE / "zarrita-js-fixtures-v3" / "data.zarr"
ZARRS_ZARR_PYTHON = CONFORMANCE / "zarrs-tests-data" / "v3_zarr_python"
ZARRS_SNAPSHOT = CONFORMANCE / "zarrs-snapshot-data"
BISALOO = CONFORMANCE / "bisaloo-zarr-conformance-tests" / "data" / "int32_v3.zarr"

#: Codec names zarr3c implements today.  ``numcodecs.*`` codecs are handled separately
#: (:func:`_numcodecs_supported`): those whose package is installed are supported.
SUPPORTED_CODECS = frozenset({
    "bytes", "transpose", "reshape", "gzip", "zstd", "blosc", "crc32c",
    "sharding_indexed", "scale_offset", "cast_value", "vlen-utf8", "vlen-bytes",
})

#: Chunk grids zarr3c implements today.
SUPPORTED_CHUNK_GRIDS = frozenset({"regular", "rectilinear"})

#: The ml_dtypes types zarr3c reads where ml_dtypes is installed.
ML_DATA_TYPES = frozenset({
    "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int2", "int4", "uint2", "uint4",
})
_HAVE_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is not None

#: The core and extension data types; raw bits ``r<N>`` are matched by :data:`_RAW_BITS`.
SUPPORTED_DATA_TYPES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
    "numpy.datetime64", "numpy.timedelta64", "fixed_length_utf32", "null_terminated_bytes",
    "raw_bytes", "struct", "string", "bytes", "variable_length_bytes",
}) | (ML_DATA_TYPES if _HAVE_ML_DTYPES else frozenset())
_RAW_BITS = re.compile(r"r[1-9][0-9]*")

# numcodecs codecs that live in optional packages (the adapter needs the package to import).
_NUMCODECS_PACKAGES = {"zfpy": "zfpy", "pcodec": "pcodec"}


def _numcodecs_supported(name: str) -> bool:
    codec_id = name.removeprefix("numcodecs.")
    package = _NUMCODECS_PACKAGES.get(codec_id)
    return package is None or importlib.util.find_spec(package) is not None


# -- expected values -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One stored array: where it is, the values it holds and how exactly to compare them."""

    id: str
    path: Path
    expected: Callable[[], np.ndarray] | None
    #: absolute tolerance for lossy codecs (zfpy); None: exact
    atol: float | None = None
    attributes: dict[str, Any] | None = None


def _arr(values: Any, dtype: str, shape: tuple[int, ...] | None = None) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        a = np.array(values, dtype=dtype)
        return a.reshape(shape) if shape is not None else a

    return make


def _arange(n: int, dtype: str, shape: tuple[int, ...], start: int = 0) -> Callable[[], np.ndarray]:
    return lambda: np.arange(start, start + n).astype(dtype).reshape(shape)


_F4_VALUES = [-1000.5, 0, 1000.5, 0]

# SOURCES.md, "zarrita.js v3 fixtures".
ZARRITA_EXPECTED: dict[str, Callable[[], np.ndarray]] = {
    "1d.contiguous.gzip.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.blosc.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.raw.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.i4": _arr([1, 2, 3, 4], "int32"),
    "1d.chunked.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.compressed.sharded.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.compressed.sharded.i4": _arr([1, 2, 3, 4], "int32"),
    "1d.chunked.compressed.sharded.i2": _arr([1, 2, 3, 4], "int16"),
    "1d.contiguous.u1": _arr([255, 0, 255, 0], "uint8"),
    "1d.contiguous.compressed.sharded.u1": _arr([255, 0, 255, 0], "uint8"),
    "1d.contiguous.f2.le": _arr(_F4_VALUES, "float16"),
    "1d.contiguous.f4.le": _arr(_F4_VALUES, "float32"),
    "1d.contiguous.f4.be": _arr(_F4_VALUES, "float32"),
    "1d.contiguous.compressed.sharded.f4": _arr(_F4_VALUES, "float32"),
    "1d.contiguous.f8": _arr([1.5, 2.5, 3.5, 4.5], "float64"),
    "1d.contiguous.compressed.sharded.f8": _arr([1.5, 2.5, 3.5, 4.5], "float64"),
    "1d.contiguous.b1": _arr([True, False, True, False], "bool"),
    "1d.contiguous.compressed.sharded.b1": _arr([True, False, True, False], "bool"),
    "1d.chunked.ragged.i2": _arr([1, 2, 3, 4, 5], "int16"),
    "1d.chunked.filled.compressed.sharded.i2": _arr([1, 2, 0, 0], "int16"),
    "1d.contiguous.delta.i4": _arr([1, 2, 3, 4], "int32"),
    "2d.contiguous.i2": _arr([[1, 2], [3, 4]], "int16"),
    "2d.chunked.i2": _arr([[1, 2], [3, 4]], "int16"),
    "2d.contiguous.compressed.sharded.i2": _arr([[1, 2], [3, 4]], "int16"),
    "2d.chunked.ragged.i2": _arange(9, "int16", (3, 3), start=1),
    "2d.chunked.ragged.compressed.sharded.i2": _arange(9, "int16", (3, 3), start=1),
    "2d.chunked.compressed.sharded.i2": _arange(16, "int16", (4, 4), start=1),
    "2d.chunked.compressed.sharded.filled.i2": _arange(16, "int16", (4, 4)),
    "3d.contiguous.i2": _arange(27, "int16", (3, 3, 3)),
    "3d.chunked.i2": _arange(27, "int16", (3, 3, 3)),
    "3d.chunked.mixed.i2.C": _arange(27, "int16", (3, 3, 3)),
    "3d.chunked.mixed.i2.F": _arange(27, "int16", (3, 3, 3)),
    "3d.contiguous.compressed.sharded.i2": _arange(27, "int16", (3, 3, 3)),
    "3d.chunked.mixed.compressed.sharded.i2": _arange(27, "int16", (3, 3, 3)),
    "3d.chunked.compressed.sharded.i2": _arange(64, "int16", (4, 4, 4)),
    "3d.contiguous.delta.i4.mixed": _arange(27, "int32", (3, 3, 3)),
    "1d.contiguous.string.vlen": _arr(["hello", "world", "zarr", "v3"], "object"),
    "1d.chunked.string.vlen": _arr(["a", "bb", "ccc", "dddd"], "object"),
    "1d.contiguous.string.compressed": _arr(["compressed", "string", "test"], "object"),
    "1d.string.empty": _arr(["", "test", ""], "object"),
    "1d.string.unicode": _arr(["hello", "世界", "🚀🎉", "Ñoño"], "object"),
    "2d.chunked.string.vlen": _arr([["hello", "world"], ["foo", "bar"]], "object"),
}


def _ml_dtype(name: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def _snapshot_values(dtype_name: str) -> np.ndarray | None:
    """zarrs' generator (SOURCES.md, "zarrs snapshot arrays"): element i of [8, 24], C order."""
    i = np.arange(192)
    if dtype_name == "bool":
        flat = (i % 2).astype(bool)
    elif dtype_name in ("int8", "int16", "uint8", "uint16"):
        flat = i.astype(dtype_name)  # i % 2**bits, wrapped to the signed type
    elif re.fullmatch(r"u?int(32|64)", dtype_name):
        flat = i.astype(dtype_name)
    elif dtype_name in ("float16", "float32", "float64"):
        flat = (i * 0.5).astype(dtype_name)
    elif dtype_name in ("complex64", "complex128"):
        flat = (i * 0.5 + i * 0.25j).astype(dtype_name)
    elif dtype_name == "r24":
        flat = np.repeat((i % 256).astype(np.uint8), 3).view("V3")
    elif dtype_name == "numpy.datetime64":
        flat = i.astype("datetime64[s]")
    elif dtype_name == "numpy.timedelta64":
        flat = i.astype("timedelta64[s]")
    elif dtype_name == "bfloat16" and _HAVE_ML_DTYPES:
        flat = (i * 0.5).astype(_ml_dtype(dtype_name))
    elif dtype_name.startswith("float8_") and _HAVE_ML_DTYPES:
        flat = (i % 128).astype(np.uint8).view(_ml_dtype(dtype_name))  # bits: i mod 128
    elif dtype_name in ("int2", "int4") and _HAVE_ML_DTYPES:
        n = 2 ** int(dtype_name[-1])
        flat = (i % n - n // 2).astype(_ml_dtype(dtype_name))  # from the minimum up
    elif dtype_name in ("uint2", "uint4") and _HAVE_ML_DTYPES:
        flat = (i % 2 ** int(dtype_name[-1])).astype(_ml_dtype(dtype_name))
    elif dtype_name == "string":
        flat = np.array([f"str_{k:04d}" for k in range(192)], dtype=object)
    elif dtype_name == "bytes":
        flat = np.array([bytes([k % 256]) * (k % 8 + 1) for k in range(192)], dtype=object)
    else:
        return None  # exotic zarrs data types (float8_e4m3, uint4, zarrs.optional(...), ...)
    return flat.reshape(8, 24)


def _const(values: np.ndarray) -> Callable[[], np.ndarray]:
    return lambda: values.copy()


def _collect_cases() -> list[Case]:
    cases: list[Case] = []
    if ZARRITA.is_dir():
        for path in sorted(p for p in ZARRITA.iterdir() if p.is_dir()):
            meta = json.loads((path / "zarr.json").read_text())
            if meta.get("node_type") != "array":
                continue
            cases.append(Case(f"zarrita/{path.name}", path, ZARRITA_EXPECTED.get(path.name)))
    if ZARRS_ZARR_PYTHON.is_dir():
        for path in sorted(ZARRS_ZARR_PYTHON.glob("*.zarr")):
            lossy = path.name == "array_zfpy.zarr"  # fixed accuracy 0.01
            cases.append(Case(
                f"zarrs-zarr-python/{path.name}",
                path,
                _arange(100, "float32", (10, 10)),
                atol=0.01 if lossy else None,
                attributes={"key": "value"},
            ))
    if ZARRS_SNAPSHOT.is_dir():
        for meta_path in sorted(ZARRS_SNAPSHOT.glob("*/*/*/zarr.json")):
            path = meta_path.parent
            folder, dtype_name, digest = path.relative_to(ZARRS_SNAPSHOT).parts
            values = _snapshot_values(dtype_name)
            cases.append(Case(
                f"zarrs-snapshot/{folder}/{dtype_name}/{digest}",
                path,
                _const(values) if values is not None else None,
            ))
    if BISALOO.is_dir():
        cases.append(Case("bisaloo/int32_v3.zarr", BISALOO, _arr([[0, 1], [2, 3]], "int32")))
    return cases


CASES = _collect_cases()


# -- what an array needs ---------------------------------------------------------------------------


def _data_type_name(meta: dict[str, Any]) -> str:
    dt = meta["data_type"]
    return dt["name"] if isinstance(dt, dict) else dt


def _codec_names(codecs: list[dict[str, Any]]) -> list[str]:
    """Names of every codec, nested ones (sharding's inner and index codecs) included."""
    names: list[str] = []
    for codec in codecs:
        names.append(codec["name"])
        config = codec.get("configuration") or {}
        for key in ("codecs", "index_codecs"):
            if isinstance(config.get(key), list):
                names.extend(_codec_names(config[key]))
    return names


def _unsupported(meta: dict[str, Any]) -> list[str]:
    """The extensions this array uses that zarr3c does not implement (data type first)."""
    missing: list[str] = []
    grid = meta["chunk_grid"]["name"]
    if grid not in SUPPORTED_CHUNK_GRIDS:
        missing.append(grid)
    dt = _data_type_name(meta)
    if dt not in SUPPORTED_DATA_TYPES and not _RAW_BITS.fullmatch(dt):
        missing.append(dt)
    for name in _codec_names(meta["codecs"]):
        ok = _numcodecs_supported(name) if name.startswith("numcodecs.") else (
            name in SUPPORTED_CODECS
        )
        if not ok and name not in missing:
            missing.append(name)
    return missing


# -- comparisons -----------------------------------------------------------------------------------


def assert_values(actual: Any, expected: np.ndarray, atol: float | None = None) -> None:
    """Exact comparison (NaN equals NaN) of dtype, shape and values."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    if expected.dtype == object:
        assert actual.tolist() == expected.tolist()
        return
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype}, expected {expected.dtype}"
    ml_int = expected.dtype.name in ("int2", "int4", "uint2", "uint4")
    if ml_int:  # ml_dtypes integers: by value (writers may set the unused upper bits)
        np.testing.assert_array_equal(actual.astype("i1"), expected.astype("i1"))
    elif expected.dtype.kind == "V" or expected.dtype.type.__module__ == "ml_dtypes":
        assert actual.tobytes() == expected.tobytes()  # bits (ml_dtypes NaN included)
    elif atol is not None:
        np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)
    else:
        np.testing.assert_array_equal(actual, expected, strict=True)


def _fill_from_json(value: Any, dtype: np.dtype) -> Any:
    """The fill value a ``zarr.json`` declares, as a numpy scalar of ``dtype``."""
    specials = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    if dtype.kind == "T":
        return value  # (a string's fill value is its text)
    if dtype.kind == "O":  # variable-length bytes: a list of byte values, or base64
        return bytes(value) if isinstance(value, list) else base64.b64decode(value)
    if dtype.kind == "c":
        re_, im = (specials.get(v, v) for v in value)
        return dtype.type(complex(re_, im))
    if dtype.kind == "V" and dtype.type is np.void:
        return bytes(value)
    if dtype.kind in "Mm":
        return np.array(value, dtype="i8").view(dtype)[()] if isinstance(value, int) \
            else np.array(value, dtype=dtype)[()]
    return np.array(specials.get(value, value)).astype(dtype)[()]


def _slices(shape: tuple[int, ...]) -> tuple[slice, ...]:
    """A selection crossing chunk boundaries with a step: odd positions from 1."""
    return tuple(slice(1, None, 2) for _ in shape)


# -- tests -----------------------------------------------------------------------------------------


def test_conformance_data_found() -> None:
    """Every set SOURCES.md lists is there, so a moved folder cannot silently shrink the suite."""
    sets = {c.id.split("/")[0] for c in CASES}
    assert sets == {"zarrita", "zarrs-zarr-python", "zarrs-snapshot", "bisaloo"}
    assert len(CASES) > 140


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_conformance_array(case: Case) -> None:
    meta = json.loads((case.path / "zarr.json").read_text())
    missing = _unsupported(meta)
    if missing:
        # An extension zarr3c lacks: a clear zarr3c error naming it, never a raw exception.
        with pytest.raises(UnknownExtensionError) as info:
            zarr3c.open_array(str(case.path), mode="r")[...]
        message = str(info.value)
        assert any(name in message for name in missing), (
            f"error does not name any of {missing}: {message}"
        )
        for name in missing:
            package = _NUMCODECS_PACKAGES.get(name.removeprefix("numcodecs."))
            if package is not None:  # says which package to install
                assert f"{package!r}" in message or f"pip install {package}" in message
        return

    assert case.expected is not None, f"no expected values listed for {case.id}"
    expected = case.expected()
    a = zarr3c.open_array(str(case.path), mode="r")

    assert a.shape == tuple(meta["shape"])
    assert a.ndim == len(meta["shape"])
    if expected.dtype != object:
        assert a.dtype == expected.dtype
    grid_chunks = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    if meta["codecs"][0]["name"] == "sharding_indexed":  # chunks are inner, as zarr-python
        assert a.shards == grid_chunks
        assert a.chunks == tuple(meta["codecs"][0]["configuration"]["chunk_shape"])
    else:
        assert a.chunks == grid_chunks
    # (object expectations are strings or bytes: the array's dtype tells which)
    fill = _fill_from_json(meta["fill_value"],
                           a.dtype if expected.dtype == object else expected.dtype)
    if expected.dtype.type is np.void:
        assert bytes(np.asarray(a.fill_value).tobytes()) == fill
    else:
        np.testing.assert_array_equal(np.asarray(a.fill_value), fill, strict=False)
    if case.attributes is not None:
        assert dict(a.attrs) == case.attributes

    assert_values(a[...], expected, case.atol)
    assert_values(np.asarray(a), expected, case.atol)
    sel = _slices(a.shape)
    assert_values(a[sel], expected[sel], case.atol)
    last = (-1,) * a.ndim
    if case.atol is None and expected.dtype.kind != "V" and \
            expected.dtype.type.__module__ == "numpy":
        value = a[last]
        assert np.ndim(value) == 0
        np.testing.assert_array_equal(value, expected[last])


# Cases SOURCES.md singles out, checked on their own so a failure says what broke.


def test_zarrita_big_endian_float32() -> None:
    """bytes codec with endian "big": values come back native-endian and exact."""
    a = zarr3c.open_array(str(ZARRITA / "1d.contiguous.f4.be"), mode="r")
    data = a[...]
    assert data.dtype == np.dtype("float32")  # native byte order
    assert data.dtype.isnative
    assert data.tolist() == [-1000.5, 0.0, 1000.5, 0.0]


def test_zarrita_transpose_matches_c_order_twin() -> None:
    """``3d.chunked.mixed.i2.F`` (transpose [2, 1, 0]) holds what its plain twin holds."""
    f = zarr3c.open_array(str(ZARRITA / "3d.chunked.mixed.i2.F"), mode="r")
    c = zarr3c.open_array(str(ZARRITA / "3d.chunked.mixed.i2.C"), mode="r")
    assert f.metadata.to_dict()["codecs"][0]["name"] == "transpose"
    np.testing.assert_array_equal(f[...], c[...], strict=True)
    np.testing.assert_array_equal(f[:, 1, ::2], np.arange(27).reshape(3, 3, 3)[:, 1, ::2])


def test_zarrita_null_dimension_names() -> None:
    """``dimension_names: null`` is the same as absent."""
    a = zarr3c.open_array(str(ZARRITA / "1d.chunked.i2"), mode="r")
    assert a.metadata.to_dict().get("dimension_names") is None
    assert a[...].tolist() == [1, 2, 3, 4]


def test_zarrita_ragged_last_chunk() -> None:
    """Shape 5 with chunk 2: the last chunk is stored whole but only one element is inside."""
    a = zarr3c.open_array(str(ZARRITA / "1d.chunked.ragged.i2"), mode="r")
    assert a.nchunks == 3
    assert a[4] == 5
    assert a[3:].tolist() == [4, 5]


def test_zarrita_root_group() -> None:
    """The fixture root is a group whose children open through it."""
    g = zarr3c.open_group(str(ZARRITA), mode="r")
    assert "1d.contiguous.raw.i2" in g
    assert "consolidated" in g
    raw = g["1d.contiguous.raw.i2"]
    assert isinstance(raw, zarr3c.Array)
    assert raw[...].tolist() == [1, 2, 3, 4]
    assert g["my group with spaces"].attrs["description"] == "A group with spaces in the name"


def test_zarrita_consolidated_group_children() -> None:
    """A group with (unread) consolidated metadata still opens node by node."""
    g = zarr3c.open_group(str(ZARRITA), path="consolidated", mode="r")
    assert g.attrs["answer"] == 42
    nested = zarr3c.open_array(str(ZARRITA), path="consolidated/nested/1d.i2", mode="r")
    assert nested[...].tolist() == [10, 20, 30, 40]


@pytest.mark.parametrize(
    ("codec", "package"),
    [("numcodecs.zfpy", "zfpy"), ("numcodecs.pcodec", "pcodec")],
    ids=["zfpy", "pcodec"],
)
def test_optional_numcodecs_package_missing(codec: str, package: str) -> None:
    """zfpy/pcodec arrays name the codec and the package to install when it is missing."""
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed: test_read_conformance_array checks the values")
    path = ZARRS_ZARR_PYTHON / f"array_{package}.zarr"
    with pytest.raises(UnknownExtensionError, match=re.escape(codec)) as info:
        zarr3c.open_array(str(path), mode="r")[...]
    assert package in str(info.value)
    assert isinstance(info.value, ZarrError) and isinstance(info.value, ValueError)


def test_reshape_flatten_core_data_types_read() -> None:
    """zarrs' ``reshape_flatten`` arrays (codec ``reshape`` [24] on [4, 6] chunks): every core
    data type is read through the reshape codec (not skipped as unsupported), and each stored
    chunk holds the chunk's elements in C order, as the seed requires."""
    read = set()
    for meta_path in sorted((ZARRS_SNAPSHOT / "reshape_flatten").glob("*/*/zarr.json")):
        meta = json.loads(meta_path.read_text())
        assert meta["codecs"][0] == {"name": "reshape", "configuration": {"shape": [24]}}
        if _unsupported(meta):
            continue
        dtype_name = meta_path.parent.parent.name
        expected = _snapshot_values(dtype_name)
        assert expected is not None
        a = zarr3c.open_array(str(meta_path.parent), mode="r")
        assert_values(a[...], expected)
        raw = (meta_path.parent / "c" / "1" / "2").read_bytes()
        chunk = expected[4:8, 12:18]
        if dtype_name in ("string", "bytes"):  # (vlen-encoded: the values are checked)
            pass
        elif dtype_name not in ("int2", "int4"):  # their upper bits are left to the writer
            assert raw == chunk.astype(chunk.dtype.newbyteorder("<")).tobytes()
        read.add(dtype_name)
    present = {p.name for p in (ZARRS_SNAPSHOT / "reshape_flatten").iterdir()}
    assert read == {name for name in present if name in SUPPORTED_DATA_TYPES or name == "r24"}

# -- zarr-python's zarr-metadata fixtures (documents only, no chunks) ------------------------------

METADATA_FIXTURES = CONFORMANCE / "zarr-python-zarr-metadata-fixtures" / "v3"
ARRAY_DOCUMENTS = sorted((METADATA_FIXTURES / "array").glob("*.json"))


def _write_document(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "array"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("doc_path", ARRAY_DOCUMENTS, ids=[p.stem for p in ARRAY_DOCUMENTS])
def test_metadata_fixture_array_documents(tmp_path: Path, doc_path: Path) -> None:
    """Each valid array document opens (all chunks missing: the fill value everywhere), or
    names the extension zarr3c lacks (rectilinear grids, sharding, datetimes)."""
    doc = json.loads(doc_path.read_text())
    path = _write_document(tmp_path, doc)
    missing = _unsupported(doc)
    if missing:
        with pytest.raises(UnknownExtensionError) as info:
            zarr3c.open_array(str(path), mode="r")[...]
        assert any(name in str(info.value) for name in missing), str(info.value)
        return
    a = zarr3c.open_array(str(path), mode="r")
    assert a.shape == tuple(doc["shape"])
    assert a.dtype == _numpy_dtype(doc["data_type"])
    cfg = doc["chunk_grid"]["configuration"]
    if "chunk_shape" in cfg:
        outer = a.shards if a.shards is not None else a.chunks  # sharded: chunks are inner
        assert outer == tuple(cfg["chunk_shape"])
    else:  # rectilinear: dask-style edge lengths clipped to the array
        assert all(sum(c) == n for c, n in zip(a.chunks, a.shape, strict=True))
    assert dict(a.attrs) == doc.get("attributes", {})
    names = a.metadata.to_dict().get("dimension_names")
    assert names == doc.get("dimension_names")
    fill = _fill_from_json(doc["fill_value"], a.dtype)
    corner = a[(slice(0, 3),) * a.ndim]
    np.testing.assert_array_equal(corner, np.full(corner.shape, fill, dtype=a.dtype))
    assert a.nchunks_initialized == 0


def _numpy_dtype(data_type: Any) -> np.dtype:
    """The numpy dtype of a ``data_type`` (core names; the time and struct extensions)."""
    if not isinstance(data_type, dict):
        return np.dtype(data_type)
    config = data_type["configuration"]
    if data_type["name"] in ("numpy.datetime64", "numpy.timedelta64"):
        kind = "M" if data_type["name"] == "numpy.datetime64" else "m"
        return np.dtype(f"{kind}8[{config['scale_factor']}{config['unit']}]")
    assert data_type["name"] == "struct"
    return np.dtype([(f["name"], _numpy_dtype(f["data_type"])) for f in config["fields"]])


def _fill_bits(value: Any, dtype: np.dtype) -> bytes:
    """The exact bits of a JSON fill value, worked out without zarr3c."""
    specials = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    if dtype.fields is not None:  # struct: {"field": fill value of the field's type}
        return b"".join(_fill_bits(value[name], dtype.fields[name][0])
                        for name in dtype.names or ())
    if dtype.kind in "Mm":
        return np.array(-(2**63) if value == "NaT" else value, dtype="i8").tobytes()
    if dtype.kind == "c":
        half = np.dtype(f"f{dtype.itemsize // 2}")
        return _fill_bits(value[0], half) + _fill_bits(value[1], half)
    if dtype.kind == "V":
        return bytes(value)
    if isinstance(value, str) and value.startswith("0x"):
        return int(value, 16).to_bytes(dtype.itemsize, "little")  # native = little here
    return np.array(specials.get(value, value), dtype=dtype).tobytes()


def _fill_value_cases() -> list[tuple[str, str, Any]]:
    cases = []
    for folder in sorted((METADATA_FIXTURES / "data_type").iterdir()):
        name = "r32" if folder.name == "raw" else folder.name
        for case, value in json.loads((folder / "fill_values.json").read_text()).items():
            cases.append((name, case, value))
    return cases


FILL_VALUE_CASES = _fill_value_cases()


@pytest.mark.parametrize(
    ("data_type", "case", "value"), FILL_VALUE_CASES,
    ids=[f"{d}-{c}" for d, c, _ in FILL_VALUE_CASES],
)
def test_metadata_fixture_fill_values(
    tmp_path: Path, data_type: str, case: str, value: Any
) -> None:
    """Every valid fill value spelling of a core data type is read bit-exactly (NaN payloads and
    signalling NaNs included) into the elements of missing chunks; other data types name
    themselves in an UnknownExtensionError."""
    assert np.little_endian  # _fill_bits builds hex fills in native (little-endian) order
    dtype_name = data_type.replace("numpy_", "numpy.")
    itemsize_1 = dtype_name in ("bool", "int8", "uint8") or _RAW_BITS.fullmatch(dtype_name)
    named = METADATA_FIXTURES / "data_type" / data_type / "data_type.json"
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [3],
        "data_type": json.loads(named.read_text()) if named.exists() else dtype_name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": value,
        "codecs": [{"name": "bytes"} if itemsize_1 else
                   {"name": "bytes", "configuration": {"endian": "little"}}],
    }
    if dtype_name in ("string", "bytes"):  # variable-length: their own serializer
        doc["codecs"] = [{"name": "vlen-utf8" if dtype_name == "string" else "vlen-bytes"}]
        a = zarr3c.open_array(str(_write_document(tmp_path, doc)), mode="r")
        assert a.fill_value == _fill_from_json(value, a.dtype)
        assert a[...].tolist() == [_fill_from_json(value, a.dtype)] * 3
        return
    path = _write_document(tmp_path, doc)
    if dtype_name not in SUPPORTED_DATA_TYPES and not _RAW_BITS.fullmatch(dtype_name):
        with pytest.raises(UnknownExtensionError, match=re.escape(dtype_name)):
            zarr3c.open_array(str(path), mode="r")
        return
    a = zarr3c.open_array(str(path), mode="r")
    bits = _fill_bits(value, a.dtype)
    assert np.asarray(a.fill_value).tobytes() == bits
    assert a[...].tobytes() == bits * 3
    # zarr3c's own spelling of it parses back to the same bits
    assert _fill_bits(a.metadata.to_dict()["fill_value"], a.dtype) == bits


# -- damaged copies of conformance arrays ----------------------------------------------------------


def _copy_array(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _snapshot(folder: str, dtype_name: str) -> Path:
    return min((ZARRS_SNAPSHOT / folder / dtype_name).iterdir())


def test_corrupt_crc32c_chunk_raises_checksum_error(tmp_path: Path) -> None:
    """A flipped bit under a crc32c codec is a ChecksumError naming the chunk key."""
    path = _copy_array(_snapshot("crc32c", "int32"), tmp_path / "a")
    chunk = path / "c" / "1" / "2"
    raw = bytearray(chunk.read_bytes())
    raw[5] ^= 0x10
    chunk.write_bytes(bytes(raw))
    a = zarr3c.open_array(str(path), mode="r")
    assert a[:4, :6].ravel().tolist() == list(range(6)) + list(range(24, 30)) + list(
        range(48, 54)) + list(range(72, 78))  # untouched chunk (0, 0) still reads
    with pytest.raises(zarr3c.errors.ChecksumError, match="c/1/2"):
        a[...]


@pytest.mark.parametrize(
    ("array", "chunk", "cut"),
    [
        (ZARRITA / "1d.contiguous.gzip.i2", "c/0", 3),
        (ZARRITA / "1d.contiguous.blosc.i2", "c/0", 10),
        (ZARRITA / "1d.contiguous.raw.i2", "c/0", 3),
        (BISALOO, "c/0/0", 5),
    ],
    ids=["gzip", "blosc", "raw", "zstd"],
)
def test_truncated_chunk_raises_chunk_decode_error(
    tmp_path: Path, array: Path, chunk: str, cut: int
) -> None:
    """A truncated chunk is a ChunkDecodeError naming its key, whatever the codec."""
    path = _copy_array(array, tmp_path / "a")
    data = (path / chunk).read_bytes()
    (path / chunk).write_bytes(data[:cut])
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match=re.escape(chunk)):
        zarr3c.open_array(str(path), mode="r")[...]


def test_deleted_chunk_reads_as_fill_value(tmp_path: Path) -> None:
    """A missing chunk of a foreign array reads as its fill value (NaN here)."""
    nan_filled = next(
        p for p in sorted((ZARRS_SNAPSHOT / "transpose" / "float32").iterdir())
        if json.loads((p / "zarr.json").read_text())["fill_value"] == "NaN"
    )
    path = _copy_array(nan_filled, tmp_path / "a")
    (path / "c" / "0" / "1").unlink()
    expected = _snapshot_values("float32")
    assert expected is not None
    expected[0:4, 6:12] = np.nan
    a = zarr3c.open_array(str(path), mode="r")
    assert_values(a[...], expected)
    assert a.nchunks_initialized == 7
