"""A data type whose one element claims gigabytes (``"|S2000000000"``, ``"length_bytes":
2000000000``) is refused from the metadata with a :class:`~zarr3c.errors.MetadataError` naming
the field, before anything of that size is built; elements up to
:data:`~zarr3c.metadata.data_types.MAX_ITEMSIZE` still open, create, describe and read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import zarr3c
from zarr3c.metadata.data_types import MAX_ITEMSIZE

Probe = Callable[..., Any]

_HUGE = 2_000_000_000

#: Writes one array document and opens the array (``{action}`` then uses it as ``a``).
_OPEN = """
import json, os, zarr3c
os.makedirs({path!r}, exist_ok=True)
with open(os.path.join({path!r}, {name!r}), "w") as f:
    json.dump({doc!r}, f)
a = zarr3c.open_array({path!r}, mode="r")
{action}
"""


def _v2(dtype: str) -> dict[str, Any]:
    return {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": dtype, "compressor": None,
            "fill_value": None, "order": "C", "filters": None}


def _v3(name: str, length: int) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "array", "shape": [1],
            "data_type": {"name": name, "configuration": {"length_bytes": length}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "",
            "codecs": [{"name": "bytes"}]}


_V2_HUGE = [f"|S{_HUGE}", f"<U{_HUGE // 4}", f"|V{_HUGE}", [["x", "<f4"], ["s", f"|S{_HUGE}"]]]
_V3_HUGE = ["null_terminated_bytes", "fixed_length_utf32", "raw_bytes"]


@pytest.mark.parametrize("dtype", _V2_HUGE, ids=["S", "U", "V", "struct"])
def test_a_v2_dtype_of_gigabyte_elements_is_refused_on_open(
        probe: Probe, tmp_path: Path, dtype: Any) -> None:
    outcome = probe(_OPEN.format(path=str(tmp_path / "a.zarr"), name=".zarray",
                                 doc=_v2(dtype), action="result = a.dtype"))
    assert outcome.error == "MetadataError" and outcome.zarr3c_error, outcome
    assert ".zarray: dtype:" in outcome.message and "have 2,000,000,00" in outcome.message
    assert outcome.peak_mib < 200, outcome


@pytest.mark.parametrize("name", _V3_HUGE)
def test_a_v3_length_bytes_of_gigabytes_is_refused_on_open(
        probe: Probe, tmp_path: Path, name: str) -> None:
    doc = _v3(name, _HUGE)
    doc["fill_value"] = "" if name != "raw_bytes" else None
    outcome = probe(_OPEN.format(path=str(tmp_path / "a.zarr"), name="zarr.json", doc=doc,
                                 action="result = a.dtype"))
    assert outcome.error == "MetadataError" and outcome.zarr3c_error, outcome
    assert "zarr.json: data_type.configuration.length_bytes:" in outcome.message, outcome
    assert outcome.peak_mib < 200, outcome


def test_a_v3_struct_of_large_fields_is_refused_from_its_total(
        probe: Probe, tmp_path: Path) -> None:
    # Each field is within the limit; the record is not.
    field = {"name": "null_terminated_bytes", "configuration": {"length_bytes": MAX_ITEMSIZE}}
    doc = _v3("raw_bytes", 1)
    doc["data_type"] = {"name": "struct", "configuration": {"fields": [
        {"name": f"f{i}", "data_type": field} for i in range(40)]}}
    doc["fill_value"] = {}
    outcome = probe(_OPEN.format(path=str(tmp_path / "a.zarr"), name="zarr.json", doc=doc,
                                 action="result = a.dtype"))
    assert outcome.error == "MetadataError" and outcome.zarr3c_error, outcome
    assert "data_type.configuration.fields" in outcome.message, outcome
    assert outcome.peak_mib < 200, outcome


_CREATE_HUGE = [f"|S{_HUGE}", f"<U{_HUGE // 4}", f"|V{_HUGE}", [("x", "f4"), ("s", f"S{_HUGE}")]]


@pytest.mark.parametrize(("dtype", "zarr_format"), [
    *((dtype, zarr_format) for dtype in _CREATE_HUGE for zarr_format in (2, 3)),
    ("r16000000000", 3),
])
def test_creating_an_array_of_gigabyte_elements_is_refused(
        probe: Probe, dtype: Any, zarr_format: int) -> None:
    outcome = probe(f"""
import zarr3c
a = zarr3c.create_array("memory://", shape=(1,), dtype={dtype!r}, zarr_format={zarr_format})
""")
    assert outcome.error == "MetadataError" and outcome.zarr3c_error, outcome
    assert outcome.message.startswith("dtype: "), outcome
    assert "too large" in outcome.message or "at most 67,108,864 bytes" in outcome.message
    assert outcome.peak_mib < 200, outcome


#: What a probe's interpreter holds with numpy and zarr3c imported, in MiB.
_BASE_MIB = 64
_ELEMENT_MIB = MAX_ITEMSIZE >> 20


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", ["S", "U", "V"])
def test_elements_of_the_largest_size_create_open_describe_and_read(
        probe: Probe, tmp_path: Path, kind: str, zarr_format: int) -> None:
    path = str(tmp_path / "a.zarr")
    length = MAX_ITEMSIZE // 4 if kind == "U" else MAX_ITEMSIZE
    created = probe(f"""
import zarr3c
zarr3c.create_array({path!r}, shape=(2,), chunks=(1,), dtype="{kind}{length}",
                    zarr_format={zarr_format}, compressors=None)
""")
    # Creation passes the fill value through its JSON form (base64 for bytes) and back: a
    # few copies of one element.
    assert created.error is None, created
    assert created.peak_mib < _BASE_MIB + 8 * _ELEMENT_MIB, created
    opened = probe(f"""
import zarr3c
a = zarr3c.open_array({path!r}, mode="r")
result = (a.dtype.itemsize, len(repr(a)) > 0, len(str(a.info)) > 0)
""")
    # Opening builds one element, the fill value, and describing builds nothing more; but a
    # raw_bytes document holds its fill value whole (base64, 4/3 of an element), and reading
    # it takes a few copies of the text.
    assert opened.error is None, opened
    assert opened.result == repr((MAX_ITEMSIZE, True, True)), opened
    assert opened.peak_mib < _BASE_MIB + (6 if kind == "V" else 2) * _ELEMENT_MIB, opened
    read = probe(f"""
import zarr3c
a = zarr3c.open_array({path!r}, mode="r")
element = a[:1].tobytes()
result = (len(element), element.count(0))
""")
    # A read of one element returns one element, on top of the fill value.
    assert read.error is None, read
    assert read.result == repr((MAX_ITEMSIZE, MAX_ITEMSIZE)), read
    assert read.peak_mib < _BASE_MIB + (6 if kind == "V" else 3) * _ELEMENT_MIB, read


@pytest.mark.parametrize(("dtype", "fill_value", "shown"), [
    ("V100", None, "b'" + "\\x00" * 64 + "'... (100 bytes)"),
    ("S100", b"a" * 100, "b'" + "a" * 64 + "'... (100 bytes)"),
    ("U100", "é" * 100, "'" + "é" * 16 + "'... (400 bytes)"),
    ("S100", b"ab", "b'ab'"),
    ("V4", b"\x01\x02\x03\x04", r"b'\x01\x02\x03\x04'"),
])
def test_info_shows_a_long_fill_value_by_its_first_bytes(
        dtype: str, fill_value: Any, shown: str) -> None:
    a = zarr3c.create_array("memory://", shape=(1,), dtype=dtype, fill_value=fill_value)
    lines = [line for line in str(a.info).splitlines() if line.startswith("Fill value")]
    assert lines == [f"Fill value         : {shown}"]
