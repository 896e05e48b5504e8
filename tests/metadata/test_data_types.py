"""Data types and fill values: names, numpy mapping, every JSON fill-value form, exact bits."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.errors import MetadataError, UnknownExtensionError
from zarr3c.metadata.data_types import (
    CORE_DATA_TYPE_NAMES,
    DataType,
    data_type_from_numpy,
    parse_data_type,
)

FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "conformance"
    / "zarr-python-zarr-metadata-fixtures"
    / "v3"
    / "data_type"
)


def dt(name: str) -> DataType:
    return parse_data_type(name)


def le(fmt: str, *values: Any) -> bytes:
    """Bytes of values packed little-endian, converted to native order (the host's)."""
    raw = struct.pack("<" + fmt, *values)
    size = struct.calcsize("<" + fmt[0])
    if np.little_endian:
        return raw
    return b"".join(raw[i : i + size][::-1] for i in range(0, len(raw), size))


def bits(hex_be: str, itemsize: int) -> bytes:
    """Native-order bytes of an unsigned integer given as big-endian hex digits."""
    return np.array(int(hex_be, 16), dtype=f"u{itemsize}").tobytes()


# -- data type names ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CORE_DATA_TYPE_NAMES)
def test_core_names_map_to_native_numpy(name: str) -> None:
    d = parse_data_type(name)
    assert d.name == name
    assert d.dtype == np.dtype(name)
    assert d.dtype.isnative
    assert d.itemsize == np.dtype(name).itemsize


@pytest.mark.parametrize("bits_, nbytes", [(8, 1), (16, 2), (24, 3), (64, 8), (1024, 128)])
def test_raw_bits_names(bits_: int, nbytes: int) -> None:
    d = parse_data_type(f"r{bits_}")
    assert d.name == f"r{bits_}"
    assert d.dtype == np.dtype(f"V{nbytes}")
    assert d.itemsize == nbytes
    assert d.is_raw


def test_object_form_of_a_core_name() -> None:
    assert parse_data_type({"name": "int16"}) == parse_data_type("int16")
    assert parse_data_type({"name": "r16", "configuration": {}}) == parse_data_type("r16")


@pytest.mark.parametrize(
    "value, error, fragment",
    [
        ("no_such_type", UnknownExtensionError, "'no_such_type'"),
        ("binary", UnknownExtensionError, "'binary'"),
        ("numpy.datetime64", MetadataError, "needs a configuration"),
        ({"name": "struct", "configuration": {"fields": []}}, MetadataError, "non-empty"),
        ({"name": "int16", "configuration": {"x": 1}}, UnknownExtensionError, "int16"),
        ("r0", MetadataError, "positive multiple of 8"),
        ("r7", MetadataError, "positive multiple of 8"),
        ("r12", MetadataError, "positive multiple of 8"),
        ("r08", UnknownExtensionError, "r08"),
        ("R8", UnknownExtensionError, "R8"),
        ("int", UnknownExtensionError, "'int'"),
        ("<f8", UnknownExtensionError, "<f8"),
        ("Float32", UnknownExtensionError, "Float32"),
        ("", UnknownExtensionError, "''"),
        (5, MetadataError, "string or an object"),
        (None, MetadataError, "string or an object"),
        (["int8"], MetadataError, "string or an object"),
        ({"name": 5}, MetadataError, "name"),
        ({"configuration": {}}, MetadataError, "name"),
    ],
    ids=[
        "unknown", "binary", "datetime-name", "struct", "core-with-config",
        "r0", "r7", "r12", "leading-zero", "upper-R", "int", "numpy-str", "capital", "empty",
        "number", "null", "list", "name-not-str", "no-name",
    ],
)
def test_parse_data_type_errors(value: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        parse_data_type(value, source="a/zarr.json")
    msg = str(info.value)
    assert fragment in msg
    assert "data_type" in msg
    assert "a/zarr.json" in msg
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "value, name",
    [
        ("uint16", "uint16"),
        (np.uint16, "uint16"),
        (np.dtype(">u2"), "uint16"),
        (np.dtype("<u2"), "uint16"),
        (">f8", "float64"),
        ("i4", "int32"),
        ("bool", "bool"),
        (bool, "bool"),
        (np.bool_, "bool"),
        (float, "float64"),
        (complex, "complex128"),
        (np.dtype(">c8"), "complex64"),
        ("float16", "float16"),
        ("r24", "r24"),
        (np.int8, "int8"),
        (np.uint64, "uint64"),
    ],
    ids=lambda v: repr(v),
)
def test_data_type_from_numpy(value: Any, name: str) -> None:
    d = data_type_from_numpy(value)
    assert d.name == name
    assert d.dtype.isnative or d.dtype.kind == "V"
    assert d == parse_data_type(name)


def test_data_type_from_numpy_passes_data_types_through() -> None:
    d = parse_data_type("int8")
    assert data_type_from_numpy(d) is d


@pytest.mark.parametrize(
    "value",
    [
        object,
        "O",
        "U0",
        "S0",
        np.dtype({"names": ["a"], "formats": ["i4"], "offsets": [4], "itemsize": 8}),
        np.dtype(("i4", (2,))),
        "V0",
        np.longdouble if np.dtype(np.longdouble).itemsize > 8 else "clongdouble",
        "not a dtype",
        3.5,
    ],
    ids=["object", "O", "U0", "S0", "padded-struct", "subarray", "V0",
         "longdouble", "garbage", "float-value"],
)
def test_data_type_from_numpy_refuses(value: Any) -> None:
    with pytest.raises(MetadataError):
        data_type_from_numpy(value)


# -- fill values: JSON -> bits --------------------------------------------------------------------

VALID_FILL = [
    ("bool", True, b"\x01"),
    ("bool", False, b"\x00"),
    ("int8", -128, le("b", -128)),
    ("int8", 127, le("b", 127)),
    ("int16", -1, le("h", -1)),
    ("int32", 2**31 - 1, le("i", 2**31 - 1)),
    ("int64", -(2**63), le("q", -(2**63))),
    ("int64", 2**63 - 1, le("q", 2**63 - 1)),
    ("uint8", 255, b"\xff"),
    ("uint16", 65535, le("H", 65535)),
    ("uint32", 2**32 - 1, le("I", 2**32 - 1)),
    ("uint64", 2**64 - 1, le("Q", 2**64 - 1)),
    ("int32", 7.0, le("i", 7)),
    ("int64", 1e3, le("q", 1000)),
    ("float64", 0.1, le("d", 0.1)),
    ("float64", 5, le("d", 5.0)),
    ("float64", -0.0, le("d", -0.0)),
    ("float32", -0.0, le("f", -0.0)),
    ("float16", -0.0, bits("8000", 2)),
    ("float32", 0.1, le("f", 0.1)),
    ("float16", 1.5, bits("3e00", 2)),
    ("float64", "NaN", bits("7ff8000000000000", 8)),
    ("float32", "NaN", bits("7fc00000", 4)),
    ("float16", "NaN", bits("7e00", 2)),
    ("float64", "Infinity", bits("7ff0000000000000", 8)),
    ("float64", "+Infinity", bits("7ff0000000000000", 8)),
    ("float64", "-Infinity", bits("fff0000000000000", 8)),
    ("float16", "-Infinity", bits("fc00", 2)),
    ("float32", "0x7fc00001", bits("7fc00001", 4)),
    ("float32", "0x7FA00000", bits("7fa00000", 4)),
    ("float16", "0x7d00", bits("7d00", 2)),
    ("float64", "0xfff4000000000001", bits("fff4000000000001", 8)),
    ("float32", "0x3f800000", le("f", 1.0)),
    ("float32", "0b00111111100000000000000000000000", le("f", 1.0)),
    ("float16", "0b0111110100000000", bits("7d00", 2)),
    ("float32", 3.4028234663852886e38, le("f", 3.4028234663852886e38)),
    ("complex64", [1.5, 2.5], le("ff", 1.5, 2.5)),
    ("complex128", [0, -0.0], le("dd", 0.0, -0.0)),
    ("complex128", ["-Infinity", "NaN"], bits("fff0000000000000", 8) + bits("7ff8000000000000", 8)),
    ("complex64", ["0x7fc00001", "0x00000000"], bits("7fc00001", 4) + bytes(4)),
    ("r8", [7], b"\x07"),
    ("r24", [1, 2, 3], b"\x01\x02\x03"),
    ("r24", "AQID", b"\x01\x02\x03"),
    ("r32", [0, 0, 0, 0], b"\x00\x00\x00\x00"),
    ("r16", "/wA=", b"\xff\x00"),
]


@pytest.mark.parametrize(
    "name, value, expected", VALID_FILL, ids=[f"{n}-{v!r}" for n, v, _ in VALID_FILL]
)
def test_parse_fill_value(name: str, value: Any, expected: bytes) -> None:
    d = dt(name)
    raw = d.parse_fill_value(value)
    assert raw == expected
    assert len(raw) == d.itemsize


def test_nan_payloads_survive_a_round_trip() -> None:
    for name, hexval in [("float32", "0x7fc00001"), ("float16", "0x7d00"),
                         ("float64", "0x7ff4000000000000"), ("float32", "0xffc00000")]:
        d = dt(name)
        raw = d.parse_fill_value(hexval)
        assert d.fill_value_to_json(raw) == hexval
        assert np.isnan(np.frombuffer(raw, dtype=d.dtype)[0])


INVALID_FILL = [
    ("bool", None, "null"),
    ("bool", 1, "true or false"),
    ("bool", 0, "true or false"),
    ("bool", "true", "true or false"),
    ("int8", None, "null"),
    ("int8", True, "integer"),
    ("int8", False, "integer"),
    ("int8", 128, "out of range"),
    ("int8", -129, "out of range"),
    ("uint8", 256, "out of range"),
    ("uint8", -1, "out of range"),
    ("uint64", 2**64, "out of range"),
    ("int64", 2**63, "out of range"),
    ("int64", 1e19, "out of range"),
    ("int32", 1.5, "integer"),
    ("int32", "1", "integer"),
    ("int32", "NaN", "integer"),
    ("int32", [1], "integer"),
    ("uint8", float("nan"), "integer"),
    ("float32", None, "null"),
    ("float32", True, "number"),
    ("float32", "nan", "number"),
    ("float32", "inf", "number"),
    ("float32", "Inf", "number"),
    ("float32", "0x7fc0000", "8 hex digits"),
    ("float32", "0x7fc000001", "8 hex digits"),
    ("float32", "0x7fc0000g", "8 hex digits"),
    ("float32", "0x7f_c0000", "8 hex digits"),
    ("float16", "0x7e00 ", "4 hex digits"),
    ("float32", "0b0101", "32 binary digits"),
    ("float16", "0b0111110100000002", "16 binary digits"),
    ("float32", "1.5", "number"),
    ("float32", [1.0], "number"),
    ("float32", {"x": 1}, "number"),
    ("float32", 1e39, "out of range"),
    ("float16", 65520.0, "out of range"),
    ("float64", 10**400, "out of range"),
    ("complex64", 1.0, "two-element"),
    ("complex64", [1.0], "two-element"),
    ("complex64", [1.0, 2.0, 3.0], "two-element"),
    ("complex64", [1.0, "nan"], "fill_value[1]"),
    ("complex64", ["0x7ff8000000000000", 0], "fill_value[0]"),
    ("complex128", None, "null"),
    ("r16", [1], "2 byte values"),
    ("r16", [1, 256], "fill_value[1]"),
    ("r16", [1, -1], "fill_value[1]"),
    ("r16", [True, 0], "fill_value[0]"),
    ("r16", [1.0, 0], "fill_value[0]"),
    ("r16", "AQID", "decodes to 3 bytes"),
    ("r16", "not base64!", "base64"),
    ("r16", 0, "byte values"),
    ("r16", None, "null"),
]


@pytest.mark.parametrize(
    "name, value, fragment", INVALID_FILL, ids=[f"{n}-{v!r}" for n, v, _ in INVALID_FILL]
)
def test_parse_fill_value_errors(name: str, value: Any, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        dt(name).parse_fill_value(value, source="x/zarr.json")
    msg = str(info.value)
    assert "fill_value" in msg
    assert "x/zarr.json" in msg
    assert fragment in msg


# -- fill values: bits -> JSON --------------------------------------------------------------------

CANONICAL = [
    ("bool", b"\x01", True),
    ("bool", b"\x00", False),
    ("int16", le("h", -5), -5),
    ("uint64", le("Q", 2**64 - 1), 2**64 - 1),
    ("float64", le("d", 0.1), 0.1),
    ("float32", le("f", 0.1), float(np.float32(0.1))),
    ("float16", bits("3555", 2), float(np.frombuffer(bits("3555", 2), np.float16)[0])),
    ("float64", le("d", -0.0), -0.0),
    ("float32", bits("7fc00000", 4), "NaN"),
    ("float16", bits("7e00", 2), "NaN"),
    ("float64", bits("7ff8000000000000", 8), "NaN"),
    ("float32", bits("ffc00000", 4), "0xffc00000"),
    ("float32", bits("7f800001", 4), "0x7f800001"),
    ("float64", bits("7ff0000000000000", 8), "Infinity"),
    ("float32", bits("ff800000", 4), "-Infinity"),
    ("complex64", le("ff", 1.0, float("inf")), [1.0, "Infinity"]),
    ("complex128", bits("7ff8000000000000", 8) + le("d", 2.5), ["NaN", 2.5]),
    ("r24", b"\x01\x02\x03", [1, 2, 3]),
]


@pytest.mark.parametrize(
    "name, raw, expected", CANONICAL, ids=[f"{n}-{r.hex()}" for n, r, _ in CANONICAL]
)
def test_fill_value_to_json(name: str, raw: bytes, expected: Any) -> None:
    d = dt(name)
    out = d.fill_value_to_json(raw)
    assert out == expected
    assert type(out) is type(expected)
    if isinstance(expected, float):
        # -0.0 == 0.0, so compare signs too.
        assert np.copysign(1.0, out) == np.copysign(1.0, expected)
    assert d.parse_fill_value(json.loads(json.dumps(out, allow_nan=False))) == raw


def test_fill_value_to_json_refuses_wrong_length() -> None:
    with pytest.raises(MetadataError, match="fill_value"):
        dt("float32").fill_value_to_json(b"\x00\x00")


@pytest.mark.parametrize("name", (*CORE_DATA_TYPE_NAMES, "r8", "r24", "r72"))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_bits_round_trip_through_json(name: str, data: st.DataObject) -> None:
    d = dt(name)
    if name == "bool":
        raw = data.draw(st.sampled_from([b"\x00", b"\x01"]))
    else:
        raw = data.draw(st.binary(min_size=d.itemsize, max_size=d.itemsize))
    text = json.dumps(d.fill_value_to_json(raw), allow_nan=False)
    assert d.parse_fill_value(json.loads(text)) == raw


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=False, width=32))
def test_float32_numbers_are_written_exactly(x: float) -> None:
    d = dt("float32")
    raw = np.array(x, dtype=np.float32).tobytes()
    out = d.fill_value_to_json(raw)
    if np.isfinite(x):
        assert isinstance(out, float)
        assert np.array(out, dtype=np.float32).tobytes() == raw


# -- fill values: Python -> bits ------------------------------------------------------------------

FROM_PYTHON = [
    ("bool", None, b"\x00"),
    ("bool", True, b"\x01"),
    ("bool", np.True_, b"\x01"),
    ("bool", 0, b"\x00"),
    ("int16", None, bytes(2)),
    ("int16", -3, le("h", -3)),
    ("int16", np.int64(7), le("h", 7)),
    ("int16", 4.0, le("h", 4)),
    ("int16", np.float32(2.0), le("h", 2)),
    ("int16", True, le("h", 1)),
    ("uint8", np.array(200, dtype=np.uint8), b"\xc8"),
    ("uint64", 2**64 - 1, le("Q", 2**64 - 1)),
    ("float32", None, bytes(4)),
    ("float32", 1, le("f", 1.0)),
    ("float32", 0.5, le("f", 0.5)),
    ("float32", float("nan"), bits("7fc00000", 4)),
    ("float32", float("-inf"), bits("ff800000", 4)),
    ("float32", np.float64(0.25), le("f", 0.25)),
    ("float32", "NaN", bits("7fc00000", 4)),
    ("float32", "0x7fc00001", bits("7fc00001", 4)),
    ("float32", np.frombuffer(bits("7fc00001", 4), np.float32)[0], bits("7fc00001", 4)),
    ("float32", np.frombuffer(bytes.fromhex("7fc00001"), ">f4")[0], bits("7fc00001", 4)),
    ("float32", np.frombuffer(bytes.fromhex("7fc00001"), ">f4").reshape(()),
     bits("7fc00001", 4)),
    ("float16", np.float16(-0.0), bits("8000", 2)),
    ("float64", -0.0, le("d", -0.0)),
    ("complex64", 1 + 2j, le("ff", 1.0, 2.0)),
    ("complex64", 3, le("ff", 3.0, 0.0)),
    ("complex64", np.complex128(1.5 - 1j), le("ff", 1.5, -1.0)),
    ("complex64", (1.0, "NaN"), le("f", 1.0) + bits("7fc00000", 4)),
    ("complex128", None, bytes(16)),
    ("r16", None, b"\x00\x00"),
    ("r16", b"\x01\x02", b"\x01\x02"),
    ("r16", bytearray(b"\x01\x02"), b"\x01\x02"),
    ("r16", [1, 2], b"\x01\x02"),
    ("r16", (1, 2), b"\x01\x02"),
    ("r16", np.void(b"\x05\x06"), b"\x05\x06"),
    ("r16", "AQI=", b"\x01\x02"),
]


@pytest.mark.parametrize(
    "name, value, expected", FROM_PYTHON, ids=[f"{n}-{v!r}" for n, v, _ in FROM_PYTHON]
)
def test_fill_value_from_python(name: str, value: Any, expected: bytes) -> None:
    assert dt(name).fill_value_from_python(value) == expected


FROM_PYTHON_INVALID = [
    ("uint8", 300),
    ("uint8", -1),
    ("int16", 1.5),
    ("int16", np.float64(np.nan)),
    ("int16", "3"),
    ("int16", 1 + 0j),
    ("int16", b"\x00\x00"),
    ("int16", np.zeros(2, dtype=np.int16)),
    ("bool", 2),
    ("bool", 0.5),
    ("float32", 1e40),
    ("float32", "hello"),
    ("float32", 1j),
    ("float32", object()),
    ("complex64", "x"),
    ("complex64", [1.0]),
    ("r16", b"\x00"),
    ("r16", 5),
    ("r16", np.void(b"\x00\x00\x00")),
    ("r16", [1, 2, 3]),
]


@pytest.mark.parametrize(
    "name, value", FROM_PYTHON_INVALID, ids=[f"{n}-{v!r}" for n, v in FROM_PYTHON_INVALID]
)
def test_fill_value_from_python_refuses(name: str, value: Any) -> None:
    with pytest.raises(MetadataError, match="fill_value"):
        dt(name).fill_value_from_python(value)


def test_default_fill_value_is_zero_bits() -> None:
    for name in (*CORE_DATA_TYPE_NAMES, "r40"):
        d = dt(name)
        assert d.default_fill_value() == bytes(d.itemsize)
        assert d.fill_value_from_python(None) == d.default_fill_value()


# -- conformance fixtures (zarr-python's zarr-metadata package) -----------------------------------

SUPPORTED_FIXTURE_TYPES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "raw": None,
}


def _fixture_dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


def test_conformance_fixture_fill_values() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    checked = 0
    for folder in _fixture_dirs():
        if folder.name not in SUPPORTED_FIXTURE_TYPES:
            continue
        cases = json.loads((folder / "fill_values.json").read_text())
        for case, value in cases.items():
            name = SUPPORTED_FIXTURE_TYPES[folder.name]
            if name is None:  # raw bits: the size is the length of the byte list
                name = f"r{8 * len(value)}"
            d = dt(name)
            raw = d.parse_fill_value(value, source=f"{folder.name}/{case}")
            assert len(raw) == d.itemsize
            again = d.parse_fill_value(json.loads(json.dumps(d.fill_value_to_json(raw))))
            assert again == raw, (folder.name, case)
            checked += 1
    assert checked >= 40


def test_conformance_fixture_signalling_nan_bits_are_kept() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    f16 = json.loads((FIXTURES / "float16" / "fill_values.json").read_text())
    d = dt("float16")
    raw = d.parse_fill_value(f16["hex_signaling_nan"])
    assert raw == bits("7d00", 2)
    assert d.fill_value_to_json(raw) == "0x7d00"


def test_conformance_fixtures_of_the_variable_length_types() -> None:
    # zarr-python's fill value fixtures of string and (variable-length) bytes: each parses,
    # and writes back as it was (bytes: base64, whichever form it was read in).
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    string = parse_data_type("string")
    for value in json.loads((FIXTURES / "string" / "fill_values.json").read_text()).values():
        assert string.fill_value_to_json(string.parse_fill_value(value)) == value
    raw = parse_data_type("bytes")
    assert raw.name == "variable_length_bytes"
    forms = json.loads((FIXTURES / "bytes" / "fill_values.json").read_text())
    assert {raw.parse_fill_value(v) for v in forms.values()} == {b"\x01\x02\x03"}
    assert raw.fill_value_to_json(b"\x01\x02\x03") == forms["base64"]


def test_bytes_fixture_base64_matches_list_form_for_raw() -> None:
    # zarr-python's variable-length "bytes" fixture spells the same 3 bytes two ways; for r24
    # both are accepted on read.
    d = dt("r24")
    assert d.parse_fill_value([1, 2, 3]) == d.parse_fill_value(base64.b64encode(b"\1\2\3").decode())
