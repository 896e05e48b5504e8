"""Zarr v2 through the public API: format detection as zarr-python 3 does it (v3 first, then
v2; ``zarr_format=`` forces), creating v2 groups and arrays, attributes, resizing, deleting,
consolidated ``.zmetadata`` (one metadata read), ``info``/``tree`` and copies between v2 and
v3.  Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.__main__ import main
from zarr3c.errors import (
    ArrayNotFoundError,
    MetadataError,
    UnsupportedFormatError,
)


class CountingStore(zarr3c.MemoryStore):
    """A MemoryStore counting the metadata documents read through ``get``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[str] = []

    def get(self, key: str, *args: Any, **kwargs: Any) -> Any:
        if key.rsplit("/", 1)[-1] in (".zarray", ".zgroup", ".zattrs", ".zmetadata",
                                       "zarr.json"):
            self.reads.append(key)
        return super().get(key, *args, **kwargs)


def _v2_hierarchy(store: Any) -> zarr3c.Group:
    root = zarr3c.create_group(store, zarr_format=2, attributes={"title": "t"})
    a = root.create_array("sub/a", shape=(6, 4), chunks=(4, 3), dtype="<f4")
    a[...] = np.arange(24, dtype="f4").reshape(6, 4)
    root.create_group("empty", attributes={"n": 1})
    return root


def test_create_writes_v2_documents(store: zarr3c.Store) -> None:
    _v2_hierarchy(store)
    assert sorted(k for k in store.list() if "/." in "/" + k) == [
        ".zattrs", ".zgroup", "empty/.zattrs", "empty/.zgroup", "sub/.zattrs", "sub/.zgroup",
        "sub/a/.zarray", "sub/a/.zattrs"]
    assert sorted(k for k in store.list() if k.startswith("sub/a/") and "/." not in k) == [
        "sub/a/0.0", "sub/a/0.1", "sub/a/1.0", "sub/a/1.1"]
    assert json.loads(store.get(".zattrs")) == {"title": "t"}
    assert json.loads(store.get(".zgroup")) == {"zarr_format": 2}


@pytest.mark.parametrize("opener", ["open", "open_group", "open_array"])
def test_detection_reads_v2(store: zarr3c.Store, opener: str) -> None:
    _v2_hierarchy(store)
    if opener == "open_array":
        node: Any = zarr3c.open_array(store, "sub/a", mode="r")
    elif opener == "open":
        node = zarr3c.open(store, "sub/a", mode="r")
    else:
        node = zarr3c.open_group(store, "sub", mode="r")["a"]
    assert node.zarr_format == 2
    np.testing.assert_array_equal(node[...], np.arange(24, dtype="f4").reshape(6, 4))


def test_detection_without_root_group() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, "x/y", shape=(2,), dtype="i1", zarr_format=2)
    store.erase(".zgroup")
    store.erase("x/.zgroup")
    assert zarr3c.open_array(store, "x/y", mode="r").zarr_format == 2


def test_v3_is_tried_first() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, "x", shape=(2,), dtype="i1", zarr_format=2)
    # a v3 document beside the v2 one wins, as in zarr-python 3
    store.set("x/zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]}).encode())
    assert zarr3c.open_array(store, "x", mode="r").zarr_format == 3
    a = zarr3c.open_array(store, "x", mode="r", zarr_format=2)
    assert a.zarr_format == 2 and a.shape == (2,)


def test_zarr_format_forces() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, "x", shape=(2,), dtype="i1", zarr_format=2)
    with pytest.raises(ArrayNotFoundError):
        zarr3c.open_array(store, "x", mode="r", zarr_format=3)
    assert zarr3c.open(store, "x", mode="r", zarr_format=2).zarr_format == 2
    assert zarr3c.open_group(store, mode="r", zarr_format=2).zarr_format == 2


@pytest.mark.parametrize("how", ["open_group", "open", "open_array"])
def test_create_through_open_with_zarr_format(how: str) -> None:
    store = zarr3c.MemoryStore()
    if how == "open_group":
        node: Any = zarr3c.open_group(store, "g", zarr_format=2)
    elif how == "open":
        node = zarr3c.open(store, "g", zarr_format=2, shape=(3,), dtype="i2")
    else:
        node = zarr3c.open_array(store, "g", mode="w", zarr_format=2, shape=(3,), dtype="i2")
    assert node.zarr_format == 2
    assert store.get("g/.zarray") is not None or store.get("g/.zgroup") is not None
    assert store.get("zarr.json") is None


def _fill_json(store: zarr3c.Store, path: str) -> Any:
    return json.loads(store.get(f"{path}/.zarray"))["fill_value"]


def test_fill_value_none_writes_null_through_every_creator(store: zarr3c.Store) -> None:
    # Zarr v2's "fill_value": null ("no fill value"), as zarr-python 3 writes it for None:
    # https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#metadata
    root = zarr3c.create_group(store, zarr_format=2)
    made = {
        "a": zarr3c.create_array(store, "a", shape=(5,), chunks=(2,), dtype="<f4",
                                 zarr_format=2, fill_value=None),
        "b": root.create_array("b", shape=(5,), chunks=(2,), dtype="<f4", fill_value=None),
        "c": zarr3c.create((5,), chunks=(2,), dtype="<f4", store=store, path="c",
                           zarr_format=2, fill_value=None),
        "d": zarr3c.open_array(store, "d", mode="w", shape=(5,), chunks=(2,), dtype="<f4",
                               zarr_format=2, fill_value=None),
        "e": root.require_array("e", shape=(5,), chunks=(2,), dtype="<f4", fill_value=None),
        "f": root.full(name="f", shape=(5,), chunks=(2,), dtype="<f4", fill_value=None),
    }
    for name, a in made.items():
        assert _fill_json(store, name) is None, name
        # missing chunks read as the data type's zero; fill_value is None (as zarr-python 3)
        assert a.fill_value is None and a[...].tolist() == [0] * 5, name
    a = made["a"]
    a[:3] = [1.5, 0, 0]
    assert store.get("a/1") is None  # (a chunk of zeros is a chunk of the fill value)
    a.attrs["units"] = "m"
    a.resize((7,))
    reopened = zarr3c.open_array(store, "a")
    assert _fill_json(store, "a") is None
    np.testing.assert_array_equal(reopened[...], [1.5, 0, 0, 0, 0, 0, 0])


def test_fill_value_not_given_is_the_default_not_null(store: zarr3c.Store) -> None:
    root = zarr3c.create_group(store, zarr_format=2)
    zarr3c.create_array(store, "a", shape=(2,), dtype="<i2", zarr_format=2)
    zarr3c.create((2,), dtype="<i2", store=store, path="b", zarr_format=2)
    zarr3c.empty((2,), dtype="<i2", store=store, path="c", zarr_format=2)
    root.empty(name="d", shape=(2,), dtype="<i2")
    zarr3c.from_array(store, data=np.arange(2, dtype="<i2"), name="e", zarr_format=2)
    zarr3c.open_array(store, "f", mode="w", shape=(2,), dtype="<i2", zarr_format=2)
    root.create_array("g", shape=(2,), dtype="<U2")
    for name in "abcdef":
        assert _fill_json(store, name) == 0, name
    assert _fill_json(store, "g") == ""


@pytest.mark.parametrize("layout", [3, "draft-2022", "zarr2-v3"])
def test_fill_value_none_is_the_default_where_there_is_no_null(layout: Any) -> None:
    a = zarr3c.create_array(zarr3c.MemoryStore(), "x", shape=(2,), dtype="<f8",
                            zarr_format=layout, fill_value=None)
    assert a.metadata.to_dict()["fill_value"] == 0.0
    assert a[...].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("reencode", [False, True])
def test_copy_of_a_null_fill_array(reencode: bool) -> None:
    src = zarr3c.MemoryStore()
    a = zarr3c.create_array(src, "x", shape=(5,), chunks=(2,), dtype="<i4", zarr_format=2,
                            fill_value=None)
    a[:3] = [4, 5, 6]
    options: dict[str, Any] = {"chunks": (3,)} if reencode else {}
    # v3 has no null: the copy's fill value is the data type's default, which null reads as
    v3 = zarr3c.copy(src, zarr3c.MemoryStore(), zarr_format=3, **options)["x"]
    assert v3.metadata.to_dict()["fill_value"] == 0
    assert v3[...].tolist() == [4, 5, 6, 0, 0]
    # a copy into Zarr v2 keeps the null
    dst = zarr3c.MemoryStore()
    v2 = zarr3c.copy(src, dst, zarr_format=2, **options)["x"]
    assert _fill_json(dst, "x") is None
    assert v2[...].tolist() == [4, 5, 6, 0, 0]


def test_new_nodes_keep_the_hierarchy_format() -> None:
    store = zarr3c.MemoryStore()
    root = _v2_hierarchy(store)
    assert root.create_array("b", shape=(2,), dtype="u1").zarr_format == 2
    assert zarr3c.open_group(store).create_group("c").zarr_format == 2
    with pytest.raises(UnsupportedFormatError, match="pass zarr_format=2"):
        zarr3c.create_array(store, "d", shape=(2,), dtype="u1", zarr_format=3)
    with pytest.raises(UnsupportedFormatError, match="pass zarr_format=3"):
        zarr3c.create_group(zarr3c.create_group("memory://").store, "x", zarr_format=2)


def test_mode_w_at_the_root_replaces_the_hierarchy_in_the_format_asked() -> None:
    """As zarr-python's ``open_group(mode="w")``: the whole store is replaced, and the new
    root is Zarr v3 unless ``zarr_format`` says otherwise; below the root the hierarchy's
    format is kept (one hierarchy never mixes layouts)."""
    store = zarr3c.MemoryStore()
    _v2_hierarchy(store)
    assert zarr3c.open_group(store, "sub", mode="w").zarr_format == 2
    root = zarr3c.open_group(store, mode="w")
    assert root.zarr_format == 3
    assert sorted(store.list()) == ["zarr.json"]  # (nothing of the v2 hierarchy is left)
    assert zarr3c.open_group(store, mode="w", zarr_format=2).zarr_format == 2
    assert sorted(store.list()) == [".zattrs", ".zgroup"]
    # where there is no hierarchy, nothing is erased
    other = zarr3c.MemoryStore({"notes.txt": b"kept"})
    assert zarr3c.open_group(other, mode="w").zarr_format == 3
    assert sorted(other.list()) == ["notes.txt", "zarr.json"]


def test_attributes_resize_and_delete(store: zarr3c.Store) -> None:
    root = _v2_hierarchy(store)
    a = root["sub/a"]
    a.attrs["units"] = "m"
    assert json.loads(store.get("sub/a/.zattrs")) == {"units": "m"}
    assert "units" not in json.loads(store.get("sub/a/.zarray"))
    a.resize((2, 4))
    assert json.loads(store.get("sub/a/.zarray"))["shape"] == [2, 4]
    assert sorted(k for k in store.list_prefix("sub/a/") if "/." not in k) == [
        "sub/a/0.0", "sub/a/0.1"]
    reopened = zarr3c.open_array(store, "sub/a", mode="r")
    assert reopened.attrs["units"] == "m"
    np.testing.assert_array_equal(reopened[...], np.arange(8, dtype="f4").reshape(2, 4))
    del root["sub"]
    assert root.keys() == ["empty"]
    assert not any(k.startswith("sub/") for k in store.list())


def test_strings_times_structured_write_and_read(store: zarr3c.Store) -> None:
    dt = np.dtype([("t", "<M8[s]"), ("name", "<U4"), ("v", "<f8")])
    data = np.array([(np.datetime64(i, "s"), f"n{i}", i / 2) for i in range(7)], dt)
    a = zarr3c.create_array(store, "s", shape=(7,), chunks=(3,), dtype=dt, zarr_format=2,
                            fill_value=data[0])
    a[1:] = data[1:]
    np.testing.assert_array_equal(zarr3c.open_array(store, "s")[...], data)
    u = zarr3c.create_array(store, "u", shape=(5,), chunks=(2,), dtype="<U2", zarr_format=2,
                            fill_value="zz")
    u[:2] = ["a", "é"]
    assert zarr3c.open_array(store, "u")[...].tolist() == ["a", "é", "zz", "zz", "zz"]
    assert json.loads(store.get("u/.zarray"))["fill_value"] == "zz"


def test_v2_string_types_have_their_v3_extension_form() -> None:
    a = zarr3c.create_array("memory://", shape=(2,), dtype="<U2")
    assert a.metadata.to_dict()["data_type"] == {"name": "fixed_length_utf32",
                                                 "configuration": {"length_bytes": 8}}


def test_consolidated_open_reads_one_document() -> None:
    store = CountingStore()
    _v2_hierarchy(store)
    zarr3c.consolidate_metadata(store)
    store.reads.clear()
    g = zarr3c.open_group(store, mode="r")
    assert g.uses_consolidated_metadata and g.attrs["title"] == "t"
    members = dict(g.members(max_depth=None))
    assert sorted(members) == ["empty", "sub", "sub/a"]
    np.testing.assert_array_equal(g["sub/a"][1], [4, 5, 6, 7])
    assert g["empty"].attrs["n"] == 1
    assert [k for k in store.reads if not k.endswith("zarr.json")] == [".zmetadata"]


def test_consolidated_required_and_stale(store: zarr3c.Store) -> None:
    root = _v2_hierarchy(store)
    with pytest.raises(MetadataError, match=r"\.zmetadata"):
        zarr3c.open_consolidated(store)
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store, mode="r+")
    del g["sub"]  # also leaves the stored .zmetadata
    doc = json.loads(store.get(".zmetadata"))
    assert not any(k.startswith("sub/") for k in doc["metadata"])
    assert zarr3c.open_group(store, mode="r").keys() == ["empty"]
    del root


def test_cli_info_and_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _v2_hierarchy(tmp_path / "h.zarr")
    assert main(["tree", str(tmp_path / "h.zarr")]) == 0
    out = capsys.readouterr().out
    assert "sub" in out and "a (6, 4) float32" in out and "empty" in out
    assert main(["info", str(tmp_path / "h.zarr"), "--path", "sub/a"]) == 0
    out = capsys.readouterr().out
    assert "Zarr format        : 2" in out and "(4, 3)" in out


@pytest.mark.parametrize("reencode", [False, True])
def test_copy_v2_to_v3_and_back(tmp_path: Path, reencode: bool) -> None:
    src = zarr3c.MemoryStore()
    root = zarr3c.create_group(src, zarr_format=2, attributes={"k": 1})
    data = np.arange(70, dtype=">i4").reshape(10, 7)
    a = root.create_array("x/y", shape=(10, 7), chunks=(3, 4), dtype=">i4", order="F",
                          compressors={"name": "numcodecs.zlib", "configuration": {"level": 1}})
    a[...] = data
    options: dict[str, Any] = {"chunks": (5, 5)} if reencode else {}
    v3 = zarr3c.copy(src, tmp_path / "v3", zarr_format=3, **options)
    assert v3.zarr_format == 3 and v3.attrs["k"] == 1
    np.testing.assert_array_equal(v3["x/y"][...], data)
    back = zarr3c.copy(tmp_path / "v3", tmp_path / "v2", zarr_format=2, **options)
    assert back.zarr_format == 2
    np.testing.assert_array_equal(back["x/y"][...], data)
    doc = json.loads((tmp_path / "v2" / "x" / "y" / ".zarray").read_text())
    assert doc["order"] == "F" and doc["compressor"] == {"id": "zlib", "level": 1}
    if not reencode:  # the stored chunks moved as they are
        assert ((tmp_path / "v2" / "x" / "y" / "1.1").read_bytes()
                == src.get("x/y/1.1"))


def test_copy_fixed_length_types_to_v3_and_refuse_what_v3_cannot_hold() -> None:
    # (every type, byte order and fill value: tests/v2/test_copy_fixed_types.py)
    src = zarr3c.MemoryStore()
    zarr3c.create_array(src, "s", shape=(2,), dtype="S3", zarr_format=2)[...] = [b"ab", b""]
    v3 = zarr3c.copy(src, zarr3c.MemoryStore(), zarr_format=3)["s"]
    assert v3.metadata.data_type.name == "null_terminated_bytes"
    assert v3[...].tolist() == [b"ab", b""]
    assert zarr3c.copy(src, zarr3c.MemoryStore(), zarr_format=2)["s"].dtype == np.dtype("S3")
    # a struct with a subarray field has a v2 dtype but no v3 data type
    src.set("t/.zarray", json.dumps({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": [["a", "<i4", [2]]],
        "compressor": None, "fill_value": None, "order": "C", "filters": None}).encode())
    dst = zarr3c.MemoryStore()
    with pytest.raises(MetadataError, match=r"cannot copy array '/t'.*dtype.*subarray"):
        zarr3c.copy(src, dst, zarr_format=3)
    assert list(dst.list()) == []


def test_cli_copy_to_v2(tmp_path: Path) -> None:
    zarr3c.create_array(tmp_path / "a.zarr", shape=(4,), dtype="u2", chunks=(2,))[...] = 7
    assert main(["copy", str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr"),
                 "--zarr-format", "2", "--no-progress"]) == 0
    assert (tmp_path / "b.zarr" / ".zarray").is_file()
    b = zarr3c.open_array(tmp_path / "b.zarr", mode="r")
    assert b.zarr_format == 2 and b[...].tolist() == [7, 7, 7, 7]


def test_consolidated_subgroup_and_pickle(store: zarr3c.Store) -> None:
    import pickle

    root = zarr3c.create_group(store, zarr_format=2)
    root.create_array("sub/deep/x", shape=(2,), dtype="u1")[...] = 3
    g = zarr3c.consolidate_metadata(store, "sub")
    assert g.keys() == ["deep"] and store.get(".zmetadata") is None
    opened = zarr3c.open_group(store, "sub", mode="r")
    assert opened.uses_consolidated_metadata
    again = pickle.loads(pickle.dumps(opened))
    assert again.uses_consolidated_metadata and again["deep/x"][...].tolist() == [3, 3]
    array = pickle.loads(pickle.dumps(opened["deep/x"]))
    assert array.zarr_format == 2 and array[...].tolist() == [3, 3]


@pytest.mark.parametrize("dtype", [str, bytes, "string"])
def test_new_v2_object_arrays_of_strings_and_bytes(dtype: object) -> None:
    # (tests/v2/test_v2_create_objects.py compares them with zarr-python's)
    v2 = zarr3c.create_array("memory://", shape=(3,), dtype=dtype, zarr_format=2)
    v3 = zarr3c.create_array("memory://", shape=(3,), dtype=dtype)
    assert v2.dtype == v3.dtype and v3.dtype.kind in "TO"
    assert json.loads(v2.store.get(".zarray"))["dtype"] == "|O"
