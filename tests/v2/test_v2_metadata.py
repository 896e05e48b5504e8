"""Zarr v2 documents: parsing ``.zarray``/``.zgroup``/``.zattrs``/``.zmetadata`` into the v3
read interface, writing them back, and every bad input raising a zarr3c error naming the key
and field.  Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import (
    MetadataError,
    ReadOnlyError,
    UnknownExtensionError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.metadata.v2 import (
    V2ArrayMetadata,
    V2ConsolidatedMetadata,
    V2DataType,
    V2GroupMetadata,
    parse_v2_dtype,
)


def _doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"zarr_format": 2, "shape": [10, 7], "chunks": [4, 3],
                           "dtype": "<i4", "compressor": None, "fill_value": 0, "order": "C",
                           "filters": None, "dimension_separator": "."}
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not ...}


def _names(md: V2ArrayMetadata) -> list[str]:
    return [c["name"] for c in md.codecs]


# -- data types ------------------------------------------------------------------------------


@pytest.mark.parametrize("text,memory,name", [
    ("|b1", "bool", "bool"), ("|i1", "int8", "int8"), ("<u2", "uint16", "uint16"),
    (">i8", "int64", "int64"), ("<f2", "float16", "float16"), (">f8", "float64", "float64"),
    ("<c8", "complex64", "complex64"), (">c16", "complex128", "complex128"),
])
def test_numeric_dtypes_are_core_types_native_in_memory(text: str, memory: str,
                                                        name: str) -> None:
    data_type, stored = parse_v2_dtype(text)
    assert type(data_type) is not V2DataType
    assert data_type.name == name and data_type.dtype == np.dtype(memory)
    assert stored == np.dtype(text) and stored.str == np.dtype(text).str


@pytest.mark.parametrize("text", ["<U7", ">U7", "|S3", "|V5", "<M8[ns]", ">M8[D]", "<m8[us]"])
def test_other_dtypes(text: str) -> None:
    data_type, stored = parse_v2_dtype(text)
    assert isinstance(data_type, V2DataType) and data_type.name == text
    if stored.kind in "Mm":
        assert data_type.dtype == stored.newbyteorder("=")  # swapped by the bytes codec
    else:
        assert data_type.dtype == stored  # held as stored


def test_structured_dtype() -> None:
    data_type, stored = parse_v2_dtype([["a", "<i4"], ["b", "|S3", [2]], ["c", [["d", "<f8"]]]])
    assert stored.names == ("a", "b", "c")
    assert stored["b"].shape == (2,)
    assert data_type.dtype == stored


@pytest.mark.parametrize("value", ["<q9", "foo", "|O8x", "<i16", [["a"]], 5, None])
def test_unknown_dtypes_are_named(value: Any) -> None:
    with pytest.raises(MetadataError) as info:
        V2ArrayMetadata.from_dict(_doc(dtype=value), source="a/.zarray")
    assert info.value.path == "dtype" and info.value.source == "a/.zarray"


def test_longdouble_is_refused() -> None:
    with pytest.raises(UnknownExtensionError, match="dtype"):
        parse_v2_dtype("<f16")


@pytest.mark.parametrize("codec_id,name", [("vlen-utf8", "string"),
                                           ("numcodecs.vlen-bytes", "variable_length_bytes")])
def test_object_arrays_of_vlen_codecs(codec_id: str, name: str) -> None:
    md = V2ArrayMetadata.from_dict(_doc(dtype="|O", filters=[{"id": codec_id}], fill_value=0),
                                   source="x/.zarray")
    assert md.data_type.name == name
    assert md.codecs[0] == {"name": codec_id.removeprefix("numcodecs."), "configuration": {}}
    assert md.fill_value == b""  # (zarr-python 2 wrote 0: missing chunks read empty)


@pytest.mark.parametrize("filters,named", [
    ([{"id": "numcodecs.msgpack2", "raw": False}], "'numcodecs.msgpack2' in filters[0]"),
    ([{"id": "json", "encoding": "utf-8"}], "object codec 'json' in filters[0]"),
    (None, "no object codec"),
])
def test_object_arrays_raise_naming_the_codec(filters: Any, named: str) -> None:
    with pytest.raises(UnknownExtensionError) as info:
        V2ArrayMetadata.from_dict(_doc(dtype="|O", filters=filters), source="x/.zarray")
    assert info.value.path == "dtype" and info.value.source == "x/.zarray"
    assert named in str(info.value) and "object arrays" in str(info.value)
    assert "vlen-utf8, vlen-bytes, vlen-array and json2" in str(info.value)


@pytest.mark.parametrize("where", ["filters", "compressor"])
@pytest.mark.parametrize("codec_id", ["pickle", "numcodecs.pickle"])
def test_pickle_is_refused(where: str, codec_id: str) -> None:
    spec = {"id": codec_id, "protocol": 5}
    doc = _doc(filters=[spec]) if where == "filters" else _doc(compressor=spec)
    with pytest.raises(UnsupportedFeatureError, match="pickle.*runs code") as info:
        V2ArrayMetadata.from_dict(doc, source="p/.zarray")
    assert "p/.zarray" in str(info.value)
    assert (f"{where}[0]" if where == "filters" else "compressor") in str(info.value)
    # also for an object array: the pickle codec is named, not the object data type
    with pytest.raises(UnsupportedFeatureError, match="pickle"):
        V2ArrayMetadata.from_dict(_doc(dtype="|O", filters=[spec]) if where == "filters"
                                  else _doc(compressor=spec), source="p/.zarray")


# -- fields ----------------------------------------------------------------------------------


@pytest.mark.parametrize("changes,path", [
    ({"chunks": [4]}, "chunks"),
    ({"chunks": [4, 3, 1]}, "chunks"),
    ({"chunks": [4, 0]}, "chunks[1]"),
    ({"chunks": [4, True]}, "chunks[1]"),
    ({"chunks": "4,3"}, "chunks"),
    ({"shape": [10, -1]}, "shape[1]"),
    ({"shape": "x"}, "shape"),
    ({"order": "K"}, "order"),
    ({"dimension_separator": "-"}, "dimension_separator"),
    ({"fill_value": "nan"}, "fill_value"),
    ({"fill_value": 2.5}, "fill_value"),
    ({"fill_value": [1]}, "fill_value"),
    ({"filters": {"id": "zlib"}}, "filters"),
    ({"filters": [{"level": 1}]}, "filters[0]"),
    ({"compressor": "zlib"}, "compressor"),
    ({"chunks": [2**40, 2**40]}, "chunks"),
    ({"dtype": [["a", "<i4", [2**40]]]}, "dtype"),
    ({"shape": ...}, "shape"),
    ({"chunks": ...}, "chunks"),
    ({"dtype": ...}, "dtype"),
    ({"compressor": ...}, "compressor"),
    ({"fill_value": ...}, "fill_value"),
    ({"order": ...}, "order"),
    ({"filters": ...}, "filters"),
])
def test_bad_fields_are_named(changes: dict[str, Any], path: str) -> None:
    with pytest.raises(MetadataError) as info:
        V2ArrayMetadata.from_dict(_doc(**changes), source="a/.zarray")
    assert info.value.path == path
    assert str(info.value).startswith(f"a/.zarray: {path}: ")


def test_chunks_rank_message() -> None:
    with pytest.raises(MetadataError, match=r"^a/\.zarray: chunks: has 1 dimensions but "
                       r"shape has 2$"):
        V2ArrayMetadata.from_dict(_doc(chunks=[4]), source="a/.zarray")


def test_unknown_codec_is_named() -> None:
    with pytest.raises(UnknownExtensionError) as info:
        V2ArrayMetadata.from_dict(_doc(compressor={"id": "no-such-codec"}), source="a/.zarray")
    assert "no-such-codec" in str(info.value) and "a/.zarray" in str(info.value)


def test_bad_codec_configuration_is_named() -> None:
    with pytest.raises(MetadataError) as info:
        V2ArrayMetadata.from_dict(_doc(compressor={"id": "zstd", "level": "high"}),
                                  source="a/.zarray")
    assert "compressor" in str(info.value) and "a/.zarray" in str(info.value)


@pytest.mark.parametrize("fmt", [3, None, "2"])
def test_zarr_format_must_be_2(fmt: Any) -> None:
    with pytest.raises(UnsupportedFormatError, match="zarr_format"):
        V2ArrayMetadata.from_dict(_doc(zarr_format=fmt))
    with pytest.raises(UnsupportedFormatError, match="zarr_format"):
        V2GroupMetadata.from_dict({"zarr_format": fmt})


def test_bad_attributes_are_named() -> None:
    with pytest.raises(MetadataError, match="attributes"):
        V2ArrayMetadata.from_dict(_doc(), attributes=[1], source="a/.zarray")


# -- codecs, keys, order ------------------------------------------------------------------------


def test_chain_for_f_order_filters_and_compressors() -> None:
    md = V2ArrayMetadata.from_dict(_doc(
        dtype=">i4", order="F",
        filters=[{"id": "delta", "dtype": ">i4"}, {"id": "numcodecs.shuffle", "elementsize": 4}],
        compressor={"id": "numcodecs.blosc", "cname": "zstd", "clevel": 3, "shuffle": 2}))
    assert _names(md) == ["transpose", "numcodecs.delta", "bytes", "numcodecs.shuffle", "blosc"]
    assert md.codecs[0]["configuration"]["order"] == [1, 0]
    assert md.codecs[2]["configuration"]["endian"] == "big"
    assert md.codecs[-1]["configuration"]["shuffle"] == "bitshuffle"
    # written back as read (the prefix too)
    assert md.to_dict()["compressor"]["id"] == "blosc"
    assert md.to_dict()["filters"][1]["id"] == "shuffle"


@pytest.mark.parametrize("compressor,name", [
    ({"id": "gzip", "level": 5}, "gzip"), ({"id": "zstd", "level": 3}, "zstd"),
    ({"id": "zlib", "level": 5}, "numcodecs.zlib"), ({"id": "lz4"}, "numcodecs.lz4"),
    ({"id": "bz2", "level": 1}, "numcodecs.bz2"), ({"id": "lzma"}, "numcodecs.lzma"),
    ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1}, "blosc"),
])
def test_native_codecs_where_the_configuration_means_the_same(compressor: dict[str, Any],
                                                             name: str) -> None:
    md = V2ArrayMetadata.from_dict(_doc(compressor=compressor))
    assert md.codecs[-1]["name"] == name


@pytest.mark.parametrize("separator,coords,key", [
    (".", (1, 2), "1.2"), ("/", (1, 2), "1/2"), (None, (0, 3), "0.3"), (..., (4, 0), "4.0"),
])
def test_chunk_keys(separator: Any, coords: tuple[int, ...], key: str) -> None:
    md = V2ArrayMetadata.from_dict(_doc(dimension_separator=separator))
    assert md.chunk_key_encoding.encode_chunk_key(coords) == key


def test_zero_dimensional_key() -> None:
    md = V2ArrayMetadata.from_dict(_doc(shape=[], chunks=[]))
    assert md.chunk_key_encoding.encode_chunk_key(()) == "0"


def test_unknown_fields_are_kept() -> None:
    md = V2ArrayMetadata.from_dict(_doc(custom={"a": 1}))
    assert md.to_dict()["custom"] == {"a": 1}


# -- fill values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,fill,expected", [
    ("<f8", "NaN", math.nan), ("<f4", "Infinity", math.inf), (">f8", "-Infinity", -math.inf),
    ("<f8", 1.5, 1.5), ("<i2", -3, -3), ("|b1", True, True), ("<c16", [1.0, "NaN"],
                                                               complex(1, math.nan)),
    ("<i4", None, 0), ("<f8", None, 0.0), ("<M8[s]", -9223372036854775808, np.datetime64("NaT")),
    ("<m8[s]", 5, np.timedelta64(5, "s")), ("<U3", "ab", "ab"), ("<U3", None, ""),
    ("|S4", base64.b64encode(b"ab").decode(), b"ab"), ("|S2", "", b""),
    ("|V2", base64.b64encode(b"\x01\x02").decode(), b"\x01\x02"),
])
def test_fill_values(dtype: str, fill: Any, expected: Any) -> None:
    md = V2ArrayMetadata.from_dict(_doc(dtype=dtype, fill_value=fill))
    got = md.fill_value_array[()]
    if isinstance(got, np.void):
        assert bytes(got) == expected
    elif isinstance(expected, float) and math.isnan(expected) or (
            isinstance(expected, np.datetime64) and np.isnat(expected)):
        assert np.isnan(got)
    elif isinstance(expected, complex):
        assert np.array_equal(got, expected, equal_nan=True)
    else:
        assert got == expected
    assert md.to_dict()["fill_value"] == fill  # written back as written (null kept)


def test_structured_fill_value() -> None:
    dt = np.dtype([("a", "<i4"), ("b", "S3")])
    raw = np.array((1, b"x"), dtype=dt).tobytes()
    md = V2ArrayMetadata.from_dict(_doc(dtype=[["a", "<i4"], ["b", "|S3"]],
                                        fill_value=base64.b64encode(raw).decode()))
    assert md.fill_value == raw
    assert md.fill_value_array[()]["b"] == b"x"


@pytest.mark.parametrize("dtype,fill", [
    ("|S2", "not base64!"), ("|S2", base64.b64encode(b"abc").decode()),
    ("|V2", base64.b64encode(b"a").decode()), ("|V2", 3), ("<U2", "abc"), ("<U2", 3),
    ("<M8[s]", "soon"), ("<M8[s]", 1.5), ([["a", "<i4"]], [1]),
])
def test_bad_fill_values(dtype: Any, fill: Any) -> None:
    with pytest.raises(MetadataError) as info:
        V2ArrayMetadata.from_dict(_doc(dtype=dtype, fill_value=fill), source="a/.zarray")
    assert info.value.path == "fill_value"


# -- groups, writing, consolidated -----------------------------------------------------------


def test_round_trip_to_dict() -> None:
    doc = _doc(dtype="<U5", fill_value="hi", order="F", dimension_separator="/",
               compressor={"id": "zlib", "level": 1}, filters=[{"id": "delta", "dtype": "<U5"}])
    md = V2ArrayMetadata.from_dict(doc, attributes={"a": [1]})
    again = V2ArrayMetadata.from_dict(json.loads(md.to_json()), attributes=md.attributes)
    assert again == md
    assert json.loads(md.to_json()) == doc


def test_evolve() -> None:
    md = V2ArrayMetadata.from_dict(_doc())
    assert md.evolve(shape=(20, 7)).shape == (20, 7)
    assert md.evolve(attributes={"x": 1}).attributes == {"x": 1}
    g = V2GroupMetadata.from_dict({"zarr_format": 2}, attributes={"a": 1})
    assert g.evolve(attributes={}).attributes == {}


def test_consolidated_document() -> None:
    cm = V2ConsolidatedMetadata.from_json(json.dumps({"metadata": {
        ".zgroup": {"zarr_format": 2}, ".zattrs": {"t": 1},
        "g/.zgroup": {"zarr_format": 2}, "g/a/.zarray": _doc(), "g/a/.zattrs": {"u": "m"},
    }, "zarr_consolidated_format": 1}).encode(), source=".zmetadata")
    assert cm.metadata == {"g": {"node_type": "group"}, "g/a": {"node_type": "array"}}
    assert cm.node("g/a").attributes == {"u": "m"}
    assert sorted(cm.without("g/a").metadata) == ["g"]


@pytest.mark.parametrize("doc,path", [
    ({"metadata": {}}, "zarr_consolidated_format"),
    ({"metadata": [], "zarr_consolidated_format": 1}, "metadata"),
    ({"metadata": {"a/b/.zarray": {}}, "zarr_consolidated_format": 1}, "metadata['a/b/.zarray']"),
])
def test_bad_consolidated_documents(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(MetadataError) as info:
        V2ConsolidatedMetadata.from_json(json.dumps(doc).encode(), source=".zmetadata")
    assert info.value.path == path


def test_bad_consolidated_entry_is_named_when_opened() -> None:
    store = zarr3c.MemoryStore()
    store.set(".zgroup", b'{"zarr_format": 2}')
    store.set(".zmetadata", json.dumps({"metadata": {
        ".zgroup": {"zarr_format": 2}, "a/.zarray": _doc(chunks=[1]),
        "b/.zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1}).encode())
    g = zarr3c.open_group(store, mode="r")
    assert g.keys() == ["a", "b"]
    with pytest.raises(MetadataError, match=r"\.zmetadata.*a/\.zarray.*chunks"):
        g["a"]
    assert isinstance(g["b"], zarr3c.Group)


def test_big_endian_strings_are_read_only() -> None:
    store = zarr3c.MemoryStore()
    store.set(".zarray", json.dumps(_doc(shape=[2], chunks=[2], dtype=">U2",
                                         fill_value="")).encode())
    store.set("0", np.array(["ab", "c"], ">U2").tobytes())
    a = zarr3c.open_array(store, mode="r+")
    assert a[...].tolist() == ["ab", "c"]
    with pytest.raises(ReadOnlyError, match="'>U2' only in native byte order"):
        a[0] = "x"


def test_structured_with_big_endian_fields_reads_and_is_read_only() -> None:
    dt = np.dtype([("a", ">i4"), ("b", "S2"), ("c", ">f8")])
    data = np.array([(1, b"x", 0.5), (-2, b"yz", 1e300)], dt)
    store = zarr3c.MemoryStore()
    store.set(".zarray", json.dumps(_doc(shape=[2], chunks=[2], dtype=[list(f) for f in
                                                                      dt.descr],
                                         fill_value=None)).encode())
    store.set("0", data.tobytes())
    a = zarr3c.open_array(store, mode="r+")
    np.testing.assert_array_equal(a[...], data)
    assert a[1]["c"] == 1e300
    with pytest.raises(ReadOnlyError, match="native byte order"):
        a[0] = data[1]
