"""The core spec editor's draft of 25 May 2022 as the "draft-2022" layout.

The draft: https://zarr-specs.readthedocs.io/en/latest/v3/core/v3.0.html
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import (
    ContainsArrayError,
    MetadataError,
    NodeNameError,
    UnknownExtensionError,
    UnsupportedFormatError,
)
from zarr3c.metadata.draft2022 import Draft2022ArrayMetadata, EntryPoint

ENTRY = {
    "zarr_format": "https://purl.org/zarr/spec/core/3.0",
    "metadata_encoding": {"type": "json", "metadata_key_suffix": ".json"},
    "extensions": [],
}

# The seed's array metadata example, verbatim but for the size.
SEED_ARRAY = {
    "shape": [100, 10],
    "data_type": "<f8",
    "chunk_grid": {"type": "regular", "chunk_shape": [10, 5], "separator": "/"},
    "chunk_memory_layout": "C",
    "codecs": [{"type": "https://purl.org/zarr/spec/codecs/gzip/1.0",
                "configuration": {"level": 1}}],
    "fill_value": "NaN",
    "extensions": [],
    "attributes": {"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]},
}


def _put(store: zarr3c.Store, key: str, doc: dict) -> None:
    store.set(key, json.dumps(doc).encode())


def test_seed_documents_read() -> None:
    import gzip

    store = zarr3c.MemoryStore()
    _put(store, "zarr.json", ENTRY)
    _put(store, "meta/foo.array.json", SEED_ARRAY)
    chunk = np.arange(50, dtype="<f8").reshape(10, 5)
    store.set("data/foo/c1/1", gzip.compress(chunk.tobytes()))
    a = zarr3c.open_array(store, "foo", mode="r+")
    assert a.zarr_format == "draft-2022"
    assert a.shape == (100, 10) and a.dtype == np.float64 and a.chunks == (10, 5)
    np.testing.assert_array_equal(a[10:20, 5:10], chunk)
    assert np.isnan(a[0, 0])
    assert a.attrs["bar"] == "apples"
    assert json.loads(bytes(store.get("meta/foo.array.json"))) == SEED_ARRAY
    a.attrs["new"] = 1  # written back in the draft's form, unknown to nobody
    doc = json.loads(bytes(store.get("meta/foo.array.json")))
    assert doc["attributes"]["new"] == 1 and doc["data_type"] == "<f8"


def test_extension_data_type_with_fallback_warns() -> None:
    doc = dict(SEED_ARRAY, data_type={
        "extension": "https://purl.org/zarr/spec/extensions/data-types/datetime/1.0",
        "type": "<M8[ns]", "fallback": "<i8"}, fill_value=None, codecs=[])
    with pytest.warns(UserWarning, match="fallback"):
        md = Draft2022ArrayMetadata.from_dict(doc)
    assert md.dtype == np.int64
    doc["data_type"] = dict(doc["data_type"], fallback=["nope", "int16"])
    with pytest.warns(UserWarning):
        assert Draft2022ArrayMetadata.from_dict(doc).dtype == np.int16
    doc["data_type"] = dict(doc["data_type"], fallback="nope")
    with pytest.raises(UnknownExtensionError, match="datetime"):
        Draft2022ArrayMetadata.from_dict(doc)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"unknown": 1}, MetadataError, "unknown"),
        ({"chunk_memory_layout": "X"}, MetadataError, "chunk_memory_layout"),
        ({"chunk_memory_layout": {"extension": "x", "type": "y"}}, UnknownExtensionError,
         "layout"),
        ({"chunk_grid": {"type": "regular", "chunk_shape": [0, 5], "separator": "/"}},
         MetadataError, "chunk_shape"),
        ({"chunk_grid": {"type": "regular", "chunk_shape": [10, 5], "separator": "-"}},
         MetadataError, "separator"),
        ({"chunk_grid": {"extension": "x", "type": "rect"}}, UnknownExtensionError, "grid"),
        ({"extensions": [{"extension": "http://x/y", "must_understand": True}]},
         UnknownExtensionError, "http://x/y"),
        ({"storage_transformers": [{"extension": "x", "type": "y"}]}, UnknownExtensionError,
         "storage_transformers"),
        ({"fill_value": None}, MetadataError, "fill_value"),
        ({"codecs": [{"type": "gzip", "level": 1}]}, MetadataError, "codecs"),
        ({"data_type": "<U4"}, MetadataError, "data_type"),
    ],
    ids=["unknown-field", "bad-layout", "layout-extension", "zero-chunk", "bad-separator",
         "grid-extension", "must-understand", "storage-transformer", "null-fill",
         "codec-field", "string-dtype"],
)
def test_bad_array_documents(change, error, match) -> None:
    with pytest.raises(error, match=match):
        Draft2022ArrayMetadata.from_dict({**SEED_ARRAY, **change}, source="meta/x.array.json")


def test_optional_extension_kept_and_written_back() -> None:
    ext = {"extension": "http://example.org/zarr/extension/foo", "must_understand": False,
           "configuration": {"foo": "bar"}}
    md = Draft2022ArrayMetadata.from_dict({**SEED_ARRAY, "extensions": [ext]})
    assert md.to_dict()["extensions"] == [ext]
    entry = EntryPoint.from_dict({**ENTRY, "extensions": [ext]})
    assert entry.to_dict()["extensions"] == [ext]


@pytest.mark.parametrize(
    "doc",
    [
        {**ENTRY, "extensions": [{"extension": "http://x", "must_understand": True}]},
        {**ENTRY, "metadata_encoding": {"type": "yaml", "metadata_key_suffix": ".yaml"}},
        {**ENTRY, "metadata_encoding": {"extension": "http://enc", "type": "cbor",
                                        "metadata_key_suffix": ".cbor"}},
        {**ENTRY, "zarr_format": "https://purl.org/zarr/spec/core/4.0"},
        {**ENTRY, "other": 1},
    ],
    ids=["must-understand", "yaml", "encoding-extension", "core-4", "unknown-field"],
)
def test_bad_entry_points_refused_by_name(doc) -> None:
    store = zarr3c.MemoryStore()
    _put(store, "zarr.json", doc)
    with pytest.raises(MetadataError, match="zarr.json"):
        zarr3c.open_group(store, mode="r")


@pytest.mark.parametrize(
    ("fill", "dtype", "expected"),
    [("NaN", "<f4", np.nan), ("+Infinity", "<f8", np.inf), ("Infinity", "<f8", np.inf),
     ("-Infinity", "float16", -np.inf), ("0x3ff0000000000000", "<f8", 1.0),
     ("0b0011111110000000", "float16", 1.875), (7, "int32", 7), (True, "bool", True)],
)
def test_fill_values(fill, dtype, expected) -> None:
    md = Draft2022ArrayMetadata.from_dict({**SEED_ARRAY, "data_type": dtype, "fill_value": fill})
    np.testing.assert_array_equal(md.fill_value_array, np.array(expected, dtype=md.dtype))


def test_writes_exactly_the_seed_keys(tmp_path) -> None:
    store = zarr3c.LocalStore(tmp_path / "d")
    root = zarr3c.create_group(store, zarr_format="draft-2022")
    root.create_group("foo")
    arr = root.create_array("foo/baz", shape=(4, 4), dtype="int32", chunks=(2, 2))
    root.create_group("foo/bar")
    arr[2:4, 0:2] = 1
    keys = set(store.list())
    assert keys == {"zarr.json", "meta/group.json", "meta/foo.group.json",
                    "meta/foo/baz.array.json", "meta/foo/bar.group.json", "data/foo/baz/c1/0"}
    assert json.loads(bytes(store.get("zarr.json"))) == ENTRY


def test_root_array_and_dot_separator() -> None:
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, shape=(3, 3), dtype="uint8", chunks=(2, 2),
                            zarr_format="draft-2022")
    a[...] = 5
    assert {k for k in store.list() if k.startswith("data/")} == {
        "data/c0/0", "data/c0/1", "data/c1/0", "data/c1/1"}
    assert store.exists("meta/array.json")
    doc = json.loads(bytes(store.get("meta/array.json")))
    doc["chunk_grid"]["separator"] = "."
    _put(store, "meta/x.array.json", doc)
    x = zarr3c.open_array(store, "x", mode="r+")
    x[0, 0] = 1
    assert store.exists("data/x/c0.0")


def test_discover_children_seed_example() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_group(store, "foo/bar", zarr_format="draft-2022")
    zarr3c.create_array(store, "foo/baz/qux", shape=(2,), dtype="int8",
                        zarr_format="draft-2022")
    assert set(store.list()) == {"zarr.json", "meta/foo/bar.group.json",
                                 "meta/foo/baz/qux.array.json"}
    foo = zarr3c.open_group(store, "foo", mode="r")  # implicit
    assert list(foo) == ["bar", "baz"]
    assert isinstance(foo["baz"], zarr3c.Group) and isinstance(foo["baz/qux"], zarr3c.Array)
    assert "baz" in foo and "nope" not in foo
    root = zarr3c.open_group(store, mode="r")
    assert [n for n, _ in root.members(max_depth=None)] == ["foo", "foo/bar", "foo/baz",
                                                             "foo/baz/qux"]


def test_exists_order_and_erase() -> None:
    store = zarr3c.MemoryStore()
    g = zarr3c.create_group(store, zarr_format="draft-2022")
    a = g.create_array("a/x", shape=(4,), dtype="int8", chunks=(2,))
    a[:] = 1
    g.create_group("a/y").create_array("z", shape=(2,), dtype="int8")[:] = 2
    g.create_array("keep", shape=(2,), dtype="int8")[:] = 3
    before = set(store.list())
    del g["a/x"]  # array: its document and data/a/x/ only
    assert set(store.list()) == before - {"meta/a/x.array.json", "data/a/x/c0", "data/a/x/c1"}
    del g["a"]  # implicit group: meta/a/ and data/a/
    assert not any(k.startswith(("meta/a/", "data/a/")) for k in store.list())
    assert store.exists("meta/keep.array.json") and store.exists("data/keep/c0")
    with pytest.raises(KeyError):
        del g["a"]


def test_chunk_memory_layout_f_is_column_major() -> None:
    store = zarr3c.MemoryStore()
    data = np.arange(12, dtype="<i4").reshape(3, 4)
    a = zarr3c.create_array(store, "f", shape=(3, 4), dtype="int32", chunks=(3, 4),
                            order="F", compressors=None, zarr_format="draft-2022")
    a[...] = data
    assert json.loads(bytes(store.get("meta/f.array.json")))["chunk_memory_layout"] == "F"
    assert bytes(store.get("data/f/c0/0")) == data.tobytes(order="F")
    c = zarr3c.create_array(store, "c", shape=(3, 4), dtype="int32", chunks=(3, 4),
                            compressors=None, zarr_format="draft-2022")
    c[...] = data
    assert bytes(store.get("data/c/c0/0")) == data.tobytes(order="C")
    np.testing.assert_array_equal(zarr3c.open_array(store, "f")[...], data)


def test_big_endian_data_type_spelling() -> None:
    store = zarr3c.MemoryStore()
    _put(store, "zarr.json", ENTRY)
    _put(store, "meta/b.array.json", {**SEED_ARRAY, "data_type": ">i2", "codecs": [],
                                      "fill_value": 0})
    store.set("data/b/c0/0", np.arange(50, dtype=">i2").tobytes())
    np.testing.assert_array_equal(zarr3c.open_array(store, "b")[:10, :5],
                                  np.arange(50).reshape(10, 5))


def test_node_names_outside_the_seed_charset_refused() -> None:
    store = zarr3c.MemoryStore()
    g = zarr3c.create_group(store, zarr_format="draft-2022")
    for name in ["with space", "ünïcode", "a+b"]:
        with pytest.raises(NodeNameError):
            g.create_group(name)
    g.create_group("ok-Name_1.x")


def test_formats_do_not_mix() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_group(store, zarr_format="draft-2022")
    with pytest.raises(UnsupportedFormatError):
        zarr3c.create_array(store, "a", shape=(2,), dtype="int8")
    v3 = zarr3c.MemoryStore()
    zarr3c.create_group(v3)
    with pytest.raises(UnsupportedFormatError):
        zarr3c.create_group(v3, "g", zarr_format="draft-2022")


def test_no_node_below_an_array() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, "a", shape=(2,), dtype="int8", zarr_format="draft-2022")
    with pytest.raises(ContainsArrayError):
        zarr3c.create_group(store, "a/b", zarr_format="draft-2022")


@pytest.mark.parametrize("direction", ["draft-to-v3", "v3-to-draft"])
def test_copy_between_layouts_preserves_everything(direction) -> None:
    src_format, dst_format = (("draft-2022", 3) if direction == "draft-to-v3"
                              else (3, "draft-2022"))
    src = zarr3c.MemoryStore()
    g = zarr3c.create_group(src, attributes={"title": "t"}, zarr_format=src_format)
    data = np.arange(60, dtype="float32").reshape(6, 10)
    a = g.create_array("grp/arr", shape=(6, 10), dtype="float32", chunks=(4, 4),
                       fill_value=np.nan, attributes={"units": "m"}, order="F",
                       compressors=[{"name": "zstd", "configuration": {"level": 1,
                                                                        "checksum": False}}])
    a[:4, :] = data[:4]
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(src, dst, zarr_format=dst_format)
    assert out.zarr_format == dst_format and out.attrs["title"] == "t"
    b = zarr3c.open_array(dst, "grp/arr")
    expected = data.copy()
    expected[4:] = np.nan
    np.testing.assert_array_equal(b[...], expected)
    assert b.attrs["units"] == "m" and np.isnan(b.fill_value)
    assert b.nchunks_initialized == a.nchunks_initialized == 3
    # Round trip back: the same encoded bytes, chunk for chunk.
    back = zarr3c.MemoryStore()
    zarr3c.copy(dst, back, zarr_format=src_format)
    assert {k: bytes(v) for k, v in back.store_dict.items() if "c" in k.split("/")[-1][:1]} \
        == {k: bytes(v) for k, v in src.store_dict.items() if "c" in k.split("/")[-1][:1]}
