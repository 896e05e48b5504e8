"""The ``scale_offset`` and ``cast_value`` codecs: numpy as the oracle, then interop with
zarr-python 3.4 both ways (skipped, naming the version, where zarr-python lacks them or the
``cast-value-rs`` package its ``cast_value`` needs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.codecs import ChunkSpec, CodecPipeline
from zarr3c.codecs.cast_value import CastValueCodec
from zarr3c.codecs.scale_offset import ScaleOffsetCodec
from zarr3c.errors import CodecError, MetadataError

CODEC_FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared" / "conformance" / "zarr-python-zarr-metadata-fixtures" / "v3" / "codec"
)


def _spec(dtype: str, shape: tuple[int, ...] = (4,)) -> ChunkSpec:
    return ChunkSpec(shape, np.dtype(dtype), np.zeros((), dtype))


def _cast(config: dict[str, Any], path: str = "codecs[0]") -> CastValueCodec:
    return CastValueCodec.from_config(config, path=path)


# -- scale_offset ------------------------------------------------------------------------------


def test_scale_offset_fixture_forms() -> None:
    if not CODEC_FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {CODEC_FIXTURES}")
    cases = json.loads((CODEC_FIXTURES / "scale_offset" / "cases.json").read_text())
    for case, value in cases.items():
        pipeline = CodecPipeline.from_codecs([value, "bytes"], dtype="float64")
        codec = pipeline.codecs[0]
        assert isinstance(codec, ScaleOffsetCodec), case
        again = ScaleOffsetCodec.from_config(codec.to_dict().get("configuration"), path="c")
        assert again == codec or again.to_dict() == codec.to_dict()
    # defaults are left out, as zarr-python 3.4 writes them
    assert ScaleOffsetCodec().to_dict() == {"name": "scale_offset"}
    assert ScaleOffsetCodec(offset=5).to_dict() == {"name": "scale_offset",
                                                    "configuration": {"offset": 5}}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_scale_offset_floats(dtype: str) -> None:
    codec = ScaleOffsetCodec(offset=5, scale=0.1)
    data = np.array([5.0, 6.5, -1e3, np.nan, np.inf], dtype=dtype)
    d = np.dtype(dtype)
    expected = (data - d.type(5)) * d.type(0.1)
    encoded = codec.encode(data, _spec(dtype, (5,)))
    assert encoded.dtype == d
    np.testing.assert_array_equal(encoded, expected)
    np.testing.assert_array_equal(codec.decode(encoded, _spec(dtype, (5,))),
                                  expected / d.type(0.1) + d.type(5))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "uint64"])
def test_scale_offset_integers_exact(dtype: str) -> None:
    info = np.iinfo(dtype)
    codec = ScaleOffsetCodec(offset=1, scale=1)  # every value minus one stays in range
    data = np.array([int(info.min) + 1 if info.min else 1, info.max, 2], dtype=dtype)
    encoded = codec.encode(data, _spec(dtype, (3,)))
    assert [int(x) for x in encoded] == [int(x) - 1 for x in data]
    np.testing.assert_array_equal(codec.decode(encoded, _spec(dtype, (3,))), data)
    doubling = ScaleOffsetCodec(offset=0, scale=2)
    with pytest.raises(CodecError, match="range"):
        doubling.encode(np.array([info.max], dtype=dtype), _spec(dtype, (1,)))
    with pytest.raises(CodecError, match="multiple of scale"):
        doubling.decode(np.array([3], dtype=dtype), _spec(dtype, (1,)))


@pytest.mark.parametrize("config, dtype, fragment", [
    ({"scale": 0}, "float32", "codecs[0].configuration.scale"),
    ({"scale": "0x00000000"}, "float32", "codecs[0].configuration.scale"),
    ({"scale": 0.5}, "int16", "codecs[0].configuration.scale"),
    ({"offset": 300}, "uint8", "codecs[0].configuration.offset"),
    ({"offset": [1]}, "float32", "codecs[0].configuration.offset"),
    ({"shift": 1}, "float32", "codecs[0].configuration.shift"),
    ({}, "complex64", "codecs[0]"),
    ({}, "bool", "codecs[0]"),
])
def test_scale_offset_bad_configurations(config: dict, dtype: str, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        CodecPipeline.from_codecs([{"name": "scale_offset", "configuration": config},
                                   "bytes"], dtype=dtype).validate((4,))
    assert fragment in str(info.value)


# -- cast_value --------------------------------------------------------------------------------


def test_cast_value_fixture_forms() -> None:
    if not CODEC_FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {CODEC_FIXTURES}")
    cases = json.loads((CODEC_FIXTURES / "cast_value" / "cases.json").read_text())
    for case, value in cases.items():
        codec = _cast(value["configuration"])
        assert codec.to_dict() == value, case


@pytest.mark.parametrize("rounding, oracle", [
    ("nearest-even", np.rint), ("towards-zero", np.trunc), ("towards-positive", np.ceil),
    ("towards-negative", np.floor),
    ("nearest-away", lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
])
def test_cast_value_rounding(rounding: str, oracle: Any) -> None:
    data = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.2, 0.0], dtype="float64")
    codec = _cast({"data_type": "int16", "rounding": rounding})
    out = codec.encode(data, _spec("float64", (8,)))
    assert out.dtype == np.dtype("int16")
    np.testing.assert_array_equal(out, oracle(data).astype("int16"))
    np.testing.assert_array_equal(codec.decode(out, _spec("float64", (8,))),
                                  oracle(data))


def test_cast_value_out_of_range() -> None:
    data = np.array([-5.0, 100.0, 300.0, np.inf], dtype="float32")
    spec = _spec("float32")
    with pytest.raises(CodecError, match="range"):
        _cast({"data_type": "uint8"}).encode(data[:3], _spec("float32", (3,)))
    clamped = _cast({"data_type": "uint8", "out_of_range": "clamp"}).encode(data, spec)
    assert clamped.tolist() == [0, 100, 255, 255]
    wrapped = _cast({"data_type": "uint8", "out_of_range": "wrap"}).encode(data[:3],
                                                                          _spec("float32", (3,)))
    assert wrapped.tolist() == [251, 100, 44]
    ints = np.array([-129, 128, 5, 2**40], dtype="int64")
    assert _cast({"data_type": "int8", "out_of_range": "wrap"}).encode(
        ints, _spec("int64")).tolist() == [127, -128, 5, 0]
    big = np.array([2**64 - 1], dtype="uint64")
    assert _cast({"data_type": "int64", "out_of_range": "clamp"}).encode(
        big, _spec("uint64", (1,))).tolist() == [2**63 - 1]
    with pytest.raises(CodecError, match="range"):
        _cast({"data_type": "float16"}).encode(np.array([1e6]), _spec("float64", (1,)))
    assert _cast({"data_type": "float16", "out_of_range": "clamp"}).encode(
        np.array([1e6, -1e6]), _spec("float64", (2,))).tolist() == [65504.0, -65504.0]


def test_cast_value_nan_and_scalar_map() -> None:
    data = np.array([1.0, np.nan, 3.0], dtype="float32")
    spec = _spec("float32", (3,))
    with pytest.raises(CodecError, match="NaN"):
        _cast({"data_type": "uint8", "out_of_range": "clamp"}).encode(data, spec)
    codec = _cast({"data_type": "uint8",
                   "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}})
    encoded = codec.encode(data, spec)
    assert encoded.tolist() == [1, 0, 3]
    np.testing.assert_array_equal(codec.decode(encoded, spec), data)
    # the fill value goes through the same rules
    assert codec.resolve(ChunkSpec((3,), np.dtype("float32"),
                                   np.array(np.nan, "float32"))).fill_value == 0


@pytest.mark.parametrize("config, fragment", [
    ({}, "codecs[0].configuration.data_type"),
    ({"data_type": "bool"}, "codecs[0].configuration.data_type"),
    ({"data_type": {"name": "raw_bytes", "configuration": {"length_bytes": 2}}},
     "codecs[0].configuration.data_type"),
    ({"data_type": "uint8", "rounding": "up"}, "codecs[0].configuration.rounding"),
    ({"data_type": "uint8", "out_of_range": "error"}, "codecs[0].configuration.out_of_range"),
    ({"data_type": "float32", "out_of_range": "wrap"}, "codecs[0].configuration.out_of_range"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN"]]}},
     "codecs[0].configuration.scalar_map.encode"),
    ({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 256]]}},
     "codecs[0].configuration.scalar_map.encode[0][1]"),
    ({"data_type": "uint8", "scalar_map": {"both": []}}, "codecs[0].configuration.scalar_map"),
])
def test_cast_value_bad_configurations(config: dict, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        CodecPipeline.from_codecs([{"name": "cast_value", "configuration": config}, "bytes"],
                                  dtype="float32").validate((4,))
    assert fragment in str(info.value)


def test_scale_offset_and_cast_value_array(tmp_path: Path) -> None:
    data = np.array([10.0, 10.26, 11.5, np.nan, 35.0, -3.0, 12.25], dtype="float32")
    filters = [
        {"name": "scale_offset", "configuration": {"offset": 10, "scale": 4}},
        {"name": "cast_value", "configuration": {
            "data_type": "uint8", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}}},
    ]
    a = zarr3c.create_array(tmp_path / "a", shape=(7,), chunks=(4,), dtype="float32",
                            filters=filters, compressors=None, fill_value=1.0)
    a[:] = data
    assert (tmp_path / "a" / "c" / "0").read_bytes() == bytes([0, 1, 6, 255])
    expected = np.array([10.0, 10.25, 11.5, np.nan, 35.0, 10.0, 12.25], dtype="float32")
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "a")[:], expected)


# -- interop with zarr-python ------------------------------------------------------------------


def _zarr_with_codecs() -> Any:
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")
    codecs = pytest.importorskip("zarr.codecs")
    if not (hasattr(codecs, "ScaleOffset") and hasattr(codecs, "CastValue")):
        pytest.skip("zarr-python has scale_offset and cast_value from 3.4 on "
                    f"(installed: {zarr.__version__})")
    pytest.importorskip("cast_value_rs", reason="zarr-python's cast_value needs cast-value-rs")
    return zarr


CHAINS = {
    "scale-offset": [{"name": "scale_offset", "configuration": {"offset": 10, "scale": 0.5}}],
    "defaults": [{"name": "scale_offset"}],
    "quantize-uint8": [
        {"name": "scale_offset", "configuration": {"offset": 10, "scale": 4}},
        {"name": "cast_value", "configuration": {
            "data_type": "uint8", "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}}}],
    "towards-zero-int16": [{"name": "cast_value", "configuration": {
        "data_type": "int16", "rounding": "towards-zero",
        "scalar_map": {"encode": [["NaN", -1]], "decode": [[-1, "NaN"]]}}}],
    "float16": [{"name": "cast_value", "configuration": {"data_type": "float16"}}],
    "wrap-int8": [
        {"name": "scale_offset", "configuration": {"scale": 10}},
        {"name": "cast_value", "configuration": {
            "data_type": "int8", "out_of_range": "wrap", "rounding": "nearest-away",
            "scalar_map": {"encode": [["NaN", 0]]}}}],
}


@pytest.mark.parametrize("shards", [None, (6,)], ids=["plain", "sharded"])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_interop_both_ways(tmp_path: Path, chain: str, shards: Any) -> None:
    zarr = _zarr_with_codecs()
    data = np.array([10.0, 10.26, 11.5, np.nan, 35.0, -3.0, 12.25, 9.0, 30.0, 11.0, 10.5],
                    dtype="float32")
    kwargs = dict(shape=data.shape, chunks=(3,) if shards else (4,), shards=shards,
                  dtype="float32", filters=CHAINS[chain], compressors=None, fill_value=1.0)
    zarr.create_array(str(tmp_path / "zp"), **kwargs)[:] = data
    zarr3c.create_array(tmp_path / "zc", **kwargs)[:] = data
    for key in ("c/0", "c/1"):
        assert (tmp_path / "zp" / key).read_bytes() == (tmp_path / "zc" / key).read_bytes()
    docs = [json.loads((tmp_path / lib / "zarr.json").read_text()) for lib in ("zp", "zc")]
    assert docs[0]["fill_value"] == docs[1]["fill_value"]
    codecs = docs[1]["codecs"] if not shards else docs[1]["codecs"][0]["configuration"]["codecs"]
    assert [c["name"] for c in codecs][: len(CHAINS[chain])] == [c["name"] for c in CHAINS[chain]]
    expected = np.asarray(zarr.open_array(str(tmp_path / "zp"))[:])
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "zp")[:], expected)
    np.testing.assert_array_equal(np.asarray(zarr.open_array(str(tmp_path / "zc"))[:]),
                                  expected)
