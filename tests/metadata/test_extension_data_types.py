"""Extension data types: numpy.datetime64/timedelta64, fixed_length_utf32,
null_terminated_bytes, raw_bytes, struct and the ml_dtypes types.

The expected ``data_type`` / ``fill_value`` JSON below is what zarr-python 3.4.2 writes for the
same numpy dtype (recorded from it; the interop tests check against the live library), and
numpy is the oracle for the bits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.codecs import BytesCodec, ChunkSpec
from zarr3c.errors import MetadataError
from zarr3c.metadata.data_types import DataType, data_type_from_numpy, parse_data_type

FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared" / "conformance" / "zarr-python-zarr-metadata-fixtures" / "v3"
)

NAT = -(2**63)

# numpy dtype -> (data_type JSON, default fill value JSON), as zarr-python 3.4.2 writes them.
WRITTEN = [
    ("M8[ns]", {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}},
     NAT),
    ("M8[10s]", {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 10}},
     NAT),
    (">M8[D]", {"name": "numpy.datetime64", "configuration": {"unit": "D", "scale_factor": 1}},
     NAT),
    ("m8[s]", {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
     NAT),
    ("m8[us]", {"name": "numpy.timedelta64", "configuration": {"unit": "us", "scale_factor": 1}},
     NAT),
    ("<U3", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}, ""),
    (">U3", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}, ""),
    ("S4", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}, ""),
    ("V3", {"name": "raw_bytes", "configuration": {"length_bytes": 3}}, "AAAA"),
    ([("x", "<f4"), ("y", ">i2"), ("when", "<M8[ns]")],
     {"name": "struct", "configuration": {"fields": [
         {"name": "x", "data_type": "float32"},
         {"name": "y", "data_type": "int16"},
         {"name": "when", "data_type": {"name": "numpy.datetime64",
                                        "configuration": {"unit": "ns", "scale_factor": 1}}},
     ]}},
     {"x": 0.0, "y": 0, "when": 0}),
    ([("a", "u1"), ("b", [("c", "<f8"), ("d", "S2")])],
     {"name": "struct", "configuration": {"fields": [
         {"name": "a", "data_type": "uint8"},
         {"name": "b", "data_type": {"name": "struct", "configuration": {"fields": [
             {"name": "c", "data_type": "float64"},
             {"name": "d", "data_type": {"name": "null_terminated_bytes",
                                         "configuration": {"length_bytes": 2}}},
         ]}}},
     ]}},
     {"a": 0, "b": {"c": 0.0, "d": ""}}),
]


@pytest.mark.parametrize("dtype, data_type, fill", WRITTEN, ids=lambda v: str(v)[:30])
def test_names_and_default_fill_as_zarr_python_writes(dtype: Any, data_type: Any,
                                                       fill: Any) -> None:
    d = data_type_from_numpy(dtype)
    assert d.to_json() == data_type
    assert d.fill_value_to_json(d.default_fill_value()) == fill
    # in memory: native byte order, same layout as numpy's
    assert d.dtype == np.dtype(dtype).newbyteorder("=")
    again = parse_data_type(json.loads(json.dumps(data_type)))
    assert again == d
    assert again.parse_fill_value(fill) == d.default_fill_value()


def test_metadata_document_round_trip() -> None:
    meta = zarr3c.array.build_array_metadata(shape=(4,), dtype="M8[ms]", chunks=(2,))
    doc = meta.to_dict()
    assert doc["data_type"] == {"name": "numpy.datetime64",
                                "configuration": {"unit": "ms", "scale_factor": 1}}
    assert doc["fill_value"] == NAT
    assert doc["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    assert type(meta).from_dict(doc) == meta


def test_legacy_structured_name_and_pairs_are_read() -> None:
    # zarr-python 3.1 writes "structured" with [name, type] pairs and a base64 fill value of
    # the little-endian bytes.
    d = parse_data_type({"name": "structured",
                         "configuration": {"fields": [["x", "float32"], ["y", "int16"]]}})
    assert d.dtype == np.dtype([("x", "f4"), ("y", "i2")])
    assert d.to_json()["name"] == "struct"
    raw = d.parse_fill_value("AACAPwIA")  # x = 1.0, y = 2 little-endian
    assert np.frombuffer(raw, d.dtype)[0].tolist() == (1.0, 2)


def test_microsecond_unit_spelled_mu() -> None:
    d = parse_data_type({"name": "numpy.datetime64",
                         "configuration": {"unit": "\u03bcs", "scale_factor": 1}})
    assert d.dtype == np.dtype("M8[us]")


# -- fill values ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, value, expected", [
    ("M8[ns]", 12345, np.array(12345, "i8").view("M8[ns]")),
    ("M8[ns]", "NaT", np.array("NaT", "M8[ns]")),
    ("M8[ns]", NAT, np.array("NaT", "M8[ns]")),
    ("M8[10s]", 5, np.array(50, "i8").view("M8[s]").astype("M8[10s]")),
    ("m8[s]", -3, np.array(-3, "m8[s]")),
    ("<U3", "h\u00e9\u4e16", np.array("h\u00e9\u4e16", "U3")),
    ("<U3", "", np.array("", "U3")),
    ("S4", "YWI=", np.array(b"ab", "S4")),
    ("S4", "YQBi", np.array(b"a\0b", "S4")),
    ("V3", "AQID", np.frombuffer(b"\1\2\3", "V3")[0]),
    ("V3", [1, 2, 3], np.frombuffer(b"\1\2\3", "V3")[0]),
])
def test_parse_fill_value(dtype: str, value: Any, expected: Any) -> None:
    d = data_type_from_numpy(dtype)
    raw = d.parse_fill_value(value)
    assert raw == np.asarray(expected).astype(d.dtype).tobytes()


@pytest.mark.parametrize("dtype, raw, expected", [
    ("M8[ns]", np.array("NaT", "M8[ns]"), NAT),
    ("M8[D]", np.array("2020-01-02", "M8[D]"), 18263),
    ("<U3", np.array("ab", "U3"), "ab"),
    ("S4", np.array(b"ab", "S4"), "YWI="),
    ("S4", np.array(b"a\0b", "S4"), "YQBi"),
    ("V3", np.frombuffer(b"\1\2\3", "V3")[0], "AQID"),
])
def test_fill_value_to_json(dtype: str, raw: Any, expected: Any) -> None:
    d = data_type_from_numpy(dtype)
    assert d.fill_value_to_json(np.asarray(raw).tobytes()) == expected


def test_struct_fill_values() -> None:
    d = data_type_from_numpy([("x", "<f4"), ("y", ">i2"), ("when", "<M8[ns]")])
    raw = d.parse_fill_value({"x": 0.5, "y": -2, "when": "NaT"})
    value = np.frombuffer(raw, d.dtype)[0]
    assert value["x"] == 0.5 and value["y"] == -2 and np.isnat(value["when"])
    assert d.fill_value_to_json(raw) == {"x": 0.5, "y": -2, "when": NAT}
    # a missing field takes its type's default (NaT for a time), as zarr-python reads it
    missing = np.frombuffer(d.parse_fill_value({"x": 1.0}), d.dtype)[0]
    assert missing["y"] == 0 and np.isnat(missing["when"])
    # the struct's own default is all zeros (zarr-python writes {"when": 0})
    assert d.default_fill_value() == bytes(d.itemsize)


def test_conformance_fixtures() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    checked = 0
    for folder in ("numpy_datetime64", "numpy_timedelta64", "struct"):
        d = parse_data_type(json.loads((FIXTURES / "data_type" / folder / "data_type.json")
                                       .read_text()))
        cases = json.loads((FIXTURES / "data_type" / folder / "fill_values.json").read_text())
        for value in cases.values():
            raw = d.parse_fill_value(value)
            assert d.parse_fill_value(json.loads(json.dumps(d.fill_value_to_json(raw)))) == raw
            checked += 1
    assert checked == 5
    doc = (FIXTURES / "array" / "datatype_named_config.json").read_bytes()
    meta = zarr3c.metadata.parse_node_metadata(doc)
    assert meta.dtype == np.dtype("M8[ns]")
    assert meta.to_dict()["data_type"] == json.loads(doc)["data_type"]


@pytest.mark.parametrize("dtype, value", [
    ("M8[D]", np.datetime64("2020-01-02")),
    ("M8[D]", "2020-01-02"),
    ("M8[ns]", np.datetime64("2020-01-02T03:04:05")),
    ("M8[ns]", "NaT"),
    ("M8[ns]", 7),
    ("m8[s]", np.timedelta64(3, "m")),
    ("<U4", "\u00e9t\u00e9"),
    ("S4", b"ab"),
    ("V2", b"\1\2"),
    ("V2", np.void(b"\1\2")),
])
def test_fill_value_from_python(dtype: str, value: Any) -> None:
    d = data_type_from_numpy(dtype)
    expected = (np.array(value, dtype="i8").view(d.dtype) if isinstance(value, int)
                else np.array(value).astype(d.dtype) if not isinstance(value, bytes | np.void)
                else np.array(bytes(value), dtype=d.dtype))
    assert d.fill_value_from_python(value) == np.asarray(expected).astype(d.dtype).tobytes()


def test_struct_fill_value_from_python() -> None:
    d = data_type_from_numpy([("x", "<f4"), ("s", "U2")])
    for value in ((1.5, "ab"), {"x": 1.5, "s": "ab"},
                  np.array((1.5, "ab"), dtype=[("x", ">f4"), ("s", ">U2")])[()]):
        raw = d.fill_value_from_python(value)
        assert raw == np.array((1.5, "ab"), dtype=d.dtype).tobytes()


def test_time_default_fill_is_nat() -> None:
    assert np.isnat(np.frombuffer(data_type_from_numpy("m8[s]").fill_value_from_python(None),
                                  "m8[s]")[0])


# -- errors -------------------------------------------------------------------------------------

_DT = "numpy.datetime64"


@pytest.mark.parametrize("value, fragment", [
    ({"name": _DT, "configuration": {"scale_factor": 1}}, "data_type.configuration.unit"),
    ({"name": _DT, "configuration": {"unit": "ns"}}, "data_type.configuration.scale_factor"),
    ({"name": _DT, "configuration": {"unit": "fortnight", "scale_factor": 1}},
     "data_type.configuration.unit"),
    ({"name": _DT, "configuration": {"unit": "ns", "scale_factor": 0}},
     "data_type.configuration.scale_factor"),
    ({"name": _DT, "configuration": {"unit": "ns", "scale_factor": True}},
     "data_type.configuration.scale_factor"),
    ({"name": _DT, "configuration": {"unit": "ns", "scale_factor": 1, "x": 1}},
     "data_type.configuration"),
    ({"name": _DT}, "data_type.configuration"),
    ({"name": "numpy.timedelta64", "configuration": None}, "data_type.configuration"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}},
     "data_type.configuration.length_bytes"),
    ({"name": "fixed_length_utf32", "configuration": {}}, "data_type.configuration.length_bytes"),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 0}},
     "data_type.configuration.length_bytes"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": -1}},
     "data_type.configuration.length_bytes"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": "3"}},
     "data_type.configuration.length_bytes"),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 2**40}},
     "data_type.configuration.length_bytes"),
    ({"name": "struct", "configuration": {"fields": "x"}}, "data_type.configuration.fields"),
    ({"name": "struct", "configuration": {"fields": [{"name": "a"}]}},
     "data_type.configuration.fields[0]"),
    ({"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}]}},
     "data_type.configuration.fields[1].name"),
    ({"name": "struct", "configuration": {"fields": [{"name": "", "data_type": "int8"}]}},
     "data_type.configuration.fields[0].name"),
    ({"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": {"name": _DT, "configuration": {"unit": "ns"}}}]}},
     "data_type.configuration.fields[0].data_type.configuration.scale_factor"),
    ("raw_bytes", "needs a configuration"),
])
def test_bad_configurations_name_the_field(value: Any, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        parse_data_type(value, source="a/zarr.json")
    assert fragment in str(info.value)
    assert "a/zarr.json" in str(info.value)


@pytest.mark.parametrize("dtype, value, fragment", [
    ("M8[ns]", 1.5, "integer count"),
    ("M8[ns]", "2020-01-01", "integer count"),
    ("M8[ns]", 2**63, "integer count"),
    ("M8[ns]", True, "integer count"),
    ("<U2", "abc", "3 characters"),
    ("<U2", 5, "must be a string"),
    ("S2", "YWJj", "at most 2"),
    ("S2", "not base64!", "base64"),
    ("S2", 5, "base64"),
    ("V2", "AQID", "expected 2"),
    ("V2", [1, 2, 300], "fill_value[2]"),
    ([("x", "f4")], {"y": 1}, "['y']"),
    ([("x", "f4")], [1.0], "object of field values"),
    ([("x", "f4")], {"x": "big"}, "fill_value.x"),
    ([("x", "i2")], "AAAA", "decodes to 3 bytes"),
])
def test_bad_fill_values_name_the_field(dtype: Any, value: Any, fragment: str) -> None:
    d = data_type_from_numpy(dtype)
    with pytest.raises(MetadataError) as info:
        d.parse_fill_value(value)
    assert fragment in str(info.value)
    assert "fill_value" in str(info.value)


@pytest.mark.parametrize("dtype, value", [
    ("M8[ns]", np.timedelta64(1, "s")),
    ("M8[ns]", "not a date"),
    ("<U2", b"ab"),
    ("<U2", "abc"),
    ("S2", b"abc"),
    ("S2", 5),
    ("V2", b"\1"),
    ([("x", "f4")], (1.0, 2.0)),
])
def test_bad_python_fill_values(dtype: Any, value: Any) -> None:
    with pytest.raises(MetadataError, match="fill_value"):
        data_type_from_numpy(dtype).fill_value_from_python(value)


@pytest.mark.parametrize("dtype", [
    np.dtype({"names": ["a", "b"], "formats": ["u1", "i4"], "offsets": [0, 4]}),
    np.dtype([("a", "f4", (2,))]),
    np.dtype([(("title", "a"), "f4")]),
    "U0",
    "O",
])
def test_unsupported_numpy_dtypes(dtype: Any) -> None:
    with pytest.raises(MetadataError, match="dtype"):
        data_type_from_numpy(dtype)


# -- the bytes codec ----------------------------------------------------------------------------

CODEC_CASES = [
    "M8[ns]", "m8[10s]", "<U3", "S3", "V3",
    [("x", "<f4"), ("y", "i2"), ("s", "U2"), ("n", [("c", "c8"), ("t", "M8[s]")])],
    [("a", "u1"), ("b", "S3")],
]


def _values(dtype: np.dtype) -> np.ndarray:
    raw = np.random.default_rng(1).integers(0, 256, 5 * dtype.itemsize, dtype=np.uint8)
    if dtype.kind == "U":  # valid code points only
        return np.array(["a\u00e9", "\u4e16", "", "xyz", "q"], dtype=dtype)
    return raw.view(dtype)


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("dtype", CODEC_CASES, ids=lambda v: str(v)[:20])
def test_bytes_codec_matches_numpy_byte_order(dtype: Any, endian: str) -> None:
    d = data_type_from_numpy(dtype)
    data = _values(d.dtype)
    spec = ChunkSpec(data.shape, d.dtype, np.frombuffer(d.default_fill_value(), d.dtype)[0])
    codec = BytesCodec(endian=endian).evolve(spec)
    assert isinstance(codec, BytesCodec)
    stored = data.astype(d.dtype.newbyteorder("<" if endian == "little" else ">"))
    encoded = bytes(codec.encode(data, spec))
    assert encoded == stored.tobytes()
    decoded = codec.decode(encoded, spec)
    assert decoded.dtype == d.dtype
    assert decoded.tobytes() == data.tobytes()


@pytest.mark.parametrize("dtype, keeps", [
    ("S3", False), ("V3", False), ([("a", "u1"), ("b", "u1")], False),
    ([("a", "u1"), ("b", "S2")], True), ("<U1", True), ("M8[s]", True),
])
def test_bytes_codec_endian_kept_as_zarr_python_does(dtype: Any, keeps: bool) -> None:
    d = data_type_from_numpy(dtype)
    spec = ChunkSpec((2,), d.dtype, np.zeros((), d.dtype))
    assert (BytesCodec(endian="big").evolve(spec).endian == "big") == keeps


def test_struct_without_endian_is_read_little_endian() -> None:
    # zarr-python 3.1 writes structs with {"name": "bytes"} and little-endian data.
    d = data_type_from_numpy([("x", "<i2")])
    spec = ChunkSpec((2,), d.dtype, np.zeros((), d.dtype))
    codec = BytesCodec(endian=None)
    codec.validate(spec, path="codecs[0]")
    assert codec.decode(b"\1\0\2\0", spec)["x"].tolist() == [1, 2]


# -- whole arrays -------------------------------------------------------------------------------


@pytest.mark.parametrize("shards", [None, (6,)])
@pytest.mark.parametrize("dtype, fill", [
    ("M8[s]", np.datetime64("2001-01-01T00:00:00")),
    ("m8[ms]", None),
    ("<U3", "zz"),
    ("S3", b"q"),
    ("V2", b"\7\7"),
    ([("x", "f8"), ("s", "U1")], (2.5, "f")),
], ids=lambda v: str(v)[:20])
def test_arrays_round_trip(dtype: Any, fill: Any, shards: Any, tmp_path: Path) -> None:
    d = data_type_from_numpy(dtype)
    if d.dtype.fields is not None:
        data = np.array([(1.0, "a"), (2.0, "b"), (3.0, "c"), (4.0, "d"), (5.0, "e")],
                        dtype=d.dtype)
    elif d.dtype.kind == "M":
        data = np.arange(5).astype(d.dtype)
    else:
        data = _values(d.dtype)
    a = zarr3c.create_array(tmp_path / "a", shape=(12,), chunks=(3,), shards=shards,
                            dtype=dtype, fill_value=fill)
    a[2:7] = data
    b = zarr3c.open_array(tmp_path / "a")
    out = b[:]
    expected = np.full(12, np.frombuffer(d.fill_value_from_python(fill), d.dtype)[0],
                       dtype=d.dtype)
    expected[2:7] = data
    assert out.dtype == d.dtype
    assert out.tobytes() == expected.tobytes()


def test_numpy_v_dtype_becomes_raw_bytes_and_r_names_stay_readable(tmp_path: Path) -> None:
    a = zarr3c.create_array(tmp_path / "v", shape=(2,), chunks=(2,), dtype="V2")
    doc = json.loads((tmp_path / "v" / "zarr.json").read_text())
    assert doc["data_type"] == {"name": "raw_bytes", "configuration": {"length_bytes": 2}}
    assert doc["fill_value"] == "AAA="
    assert a.dtype == np.dtype("V2")
    r = zarr3c.create_array(tmp_path / "r", shape=(2,), chunks=(2,), dtype="r16")
    r[:] = np.frombuffer(b"\1\2\3\4", "V2")
    assert json.loads((tmp_path / "r" / "zarr.json").read_text())["data_type"] == "r16"
    assert zarr3c.open_array(tmp_path / "r")[:].tobytes() == b"\1\2\3\4"


# -- ml_dtypes ----------------------------------------------------------------------------------


def test_ml_dtypes_types() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    bf16 = data_type_from_numpy(ml_dtypes.bfloat16)
    assert bf16.to_json() == "bfloat16"
    assert bf16 == parse_data_type("bfloat16")
    assert bf16.parse_fill_value("NaN") == np.array(np.nan, ml_dtypes.bfloat16).tobytes()
    assert bf16.fill_value_to_json(bf16.parse_fill_value("NaN")) == "NaN"
    assert bf16.fill_value_to_json(bf16.parse_fill_value(1.5)) == 1.5
    assert bf16.fill_value_to_json(bf16.parse_fill_value("0x7fc1")) == "0x7fc1"
    assert bf16.fill_value_to_json(bf16.parse_fill_value("-Infinity")) == "-Infinity"
    for name in ("float8_e4m3fn", "float8_e5m2", "int4", "uint4"):
        d = data_type_from_numpy(getattr(ml_dtypes, name))
        assert d.to_json() == name and d.itemsize == 1
    e4m3 = parse_data_type("float8_e4m3fn")
    with pytest.raises(MetadataError, match="cannot be represented"):
        e4m3.parse_fill_value("Infinity")  # the type has no infinity
    int4 = parse_data_type("int4")
    assert int4.parse_fill_value(-8) == np.array(-8, ml_dtypes.int4).tobytes()
    with pytest.raises(MetadataError, match=r"out of range .*\[-8, 7\]"):
        int4.parse_fill_value(8)


@pytest.mark.parametrize("endian", ["little", "big"])
def test_bfloat16_arrays(endian: str, tmp_path: Path) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    data = np.array([1.5, -2.0, np.inf, np.nan, 0.0], dtype=ml_dtypes.bfloat16)
    a = zarr3c.create_array(tmp_path / "b", shape=(5,), chunks=(2,), dtype=data.dtype,
                            fill_value="NaN",
                            serializer={"name": "bytes", "configuration": {"endian": endian}},
                            compressors=None)
    a[:] = data
    doc = json.loads((tmp_path / "b" / "zarr.json").read_text())
    assert doc["data_type"] == "bfloat16" and doc["fill_value"] == "NaN"
    stored = (tmp_path / "b" / "c" / "0").read_bytes()
    assert stored == data[:2].astype(data.dtype.newbyteorder(
        "<" if endian == "little" else ">")).tobytes()
    assert zarr3c.open_array(tmp_path / "b")[:].tobytes() == data.tobytes()


def test_data_type_dataclass_stays_one_class() -> None:
    # formats tell their own data types apart by class: the extensions are plain DataTypes
    assert type(data_type_from_numpy("M8[ns]")) is DataType
