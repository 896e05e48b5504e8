"""Consolidated metadata (zarr3c.consolidated): writing, opening, the request count, malformed
entries, and what a consolidated view shows after the hierarchy changes."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import (
    InvalidArgumentError,
    MetadataError,
    ReadOnlyError,
    UnknownExtensionError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.metadata.group import ConsolidatedMetadata, GroupMetadata

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
ZARRITA = CONFORMANCE / "zarrita-js-fixtures-v3" / "data.zarr"
FIXTURES = CONFORMANCE / "zarr-python-zarr-metadata-fixtures" / "v3" / "consolidated"


class CountingStore(zarr3c.Store):
    """Wraps any store and records metadata reads (any read of a ``zarr.json`` key) and
    listings."""

    def __init__(self, inner: zarr3c.Store):
        super().__init__(read_only=inner.read_only)
        self.inner = inner
        self.metadata_reads: list[str] = []
        self.calls: Counter[str] = Counter()

    def reset(self) -> None:
        self.metadata_reads.clear()
        self.calls.clear()

    def _note(self, key: str) -> None:
        if key.rsplit("/", 1)[-1] == "zarr.json":
            self.metadata_reads.append(key)

    def get(self, key: str) -> Any:
        self.calls["get"] += 1
        self._note(key)
        return self.inner.get(key)

    def get_many(self, keys: Any) -> list[Any]:
        keys = list(keys)
        self.calls["get_many"] += 1
        for k in keys:
            self._note(k)
        return self.inner.get_many(keys)

    def get_partial_values(self, key_ranges: Any) -> list[Any]:
        key_ranges = list(key_ranges)
        self.calls["get_partial_values"] += 1
        for k, _ in key_ranges:
            self._note(k)
        return self.inner.get_partial_values(key_ranges)

    def exists(self, key: str) -> bool:
        self.calls["exists"] += 1
        self._note(key)
        return self.inner.exists(key)

    def set(self, key: str, value: Any) -> None:
        self._check_writable(key)
        self.inner.set(key, value)

    def erase(self, key: str) -> None:
        self._check_writable(key)
        self.inner.erase(key)

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable(prefix)
        self.inner.erase_prefix(prefix)

    def list(self) -> Any:
        self.calls["list"] += 1
        return self.inner.list()

    def list_prefix(self, prefix: str) -> Any:
        self.calls["list_prefix"] += 1
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> Any:
        self.calls["list_dir"] += 1
        return self.inner.list_dir(prefix)

    @property
    def listings(self) -> int:
        return self.calls["list"] + self.calls["list_prefix"] + self.calls["list_dir"]


def _hierarchy(store: Any) -> zarr3c.Group:
    """root {a, sub {b, deep {c}}} with data and attributes."""
    root = zarr3c.create_group(store, attributes={"title": "root"})
    a = root.create_array("a", shape=(10,), dtype="int32", chunks=(4,))
    a[...] = np.arange(10)
    sub = root.create_group("sub", attributes={"level": 1})
    b = sub.create_array("b", shape=(3, 5), dtype="float64", chunks=(2, 2),
                         fill_value=np.nan, attributes={"units": "m"})
    b[1:, 2:] = 7.5
    deep = sub.create_group("deep")
    deep.create_array("c", shape=(6,), dtype="uint8", chunks=(2,), shards=(6,))[:3] = [1, 2, 3]
    return root


def _doc(store: Any, key: str = "zarr.json") -> dict[str, Any]:
    return json.loads(bytes(store.get(key)))


# -- writing and round trips -----------------------------------------------------------------


def test_consolidate_writes_every_descendant_keyed_by_relative_path(store: zarr3c.Store) -> None:
    _hierarchy(store)
    g = zarr3c.consolidate_metadata(store)
    assert g.uses_consolidated_metadata
    cm = _doc(store)["consolidated_metadata"]
    assert cm["kind"] == "inline" and cm["must_understand"] is False
    # zarr-python's order: shallow first, then by name
    assert list(cm["metadata"]) == ["a", "sub", "sub/b", "sub/deep", "sub/deep/c"]
    for rel, entry in cm["metadata"].items():
        own = _doc(store, f"{rel}/zarr.json")
        if entry["node_type"] == "group":  # as zarr-python: an explicit empty one
            assert entry.pop("consolidated_metadata") == {
                "kind": "inline", "must_understand": False, "metadata": {}}
        assert entry == own, rel
    # child documents are not touched
    assert "consolidated_metadata" not in _doc(store, "sub/zarr.json")


def test_attributes_and_other_fields_are_kept(store: zarr3c.Store) -> None:
    _hierarchy(store)
    doc = _doc(store)
    doc["ext"] = {"must_understand": False, "v": [1, 2]}
    store.set("zarr.json", json.dumps(doc).encode())
    zarr3c.consolidate_metadata(store)
    after = _doc(store)
    assert after["attributes"] == {"title": "root"}
    assert after["ext"] == {"must_understand": False, "v": [1, 2]}
    # an attribute update through the consolidated group keeps the consolidated document
    g = zarr3c.open_consolidated(store, mode="r+")
    g.attrs["more"] = 1
    again = _doc(store)
    assert again["consolidated_metadata"] == after["consolidated_metadata"]
    assert again["attributes"] == {"title": "root", "more": 1}


def test_round_trip_and_idempotence(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    first = bytes(store.get("zarr.json"))
    zarr3c.consolidate_metadata(store)
    assert bytes(store.get("zarr.json")) == first
    m = GroupMetadata.from_json(first, source="zarr.json")
    cm = ConsolidatedMetadata.from_dict(m.consolidated_metadata, source="zarr.json")
    assert [cm.node(k).node_type for k in cm.metadata] == ["array", "group", "array", "group",
                                                           "array"]
    assert cm.to_dict() == json.loads(first)["consolidated_metadata"]
    assert GroupMetadata.from_dict(m.to_dict()) == m
    assert m.to_dict() == json.loads(first)
    assert "consolidated_metadata" not in GroupMetadata().to_dict()


def test_consolidating_a_subgroup(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store, path="sub")
    assert "consolidated_metadata" not in _doc(store)
    cm = _doc(store, "sub/zarr.json")["consolidated_metadata"]
    assert list(cm["metadata"]) == ["b", "deep", "deep/c"]
    g = zarr3c.open_consolidated(store, path="sub")
    assert g.path == "sub" and g["deep/c"].path == "sub/deep/c"
    assert g["deep/c"][...].tolist() == [1, 2, 3, 0, 0, 0]
    assert g.attrs["level"] == 1


def test_reconsolidating_replaces_the_old_document(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store, path="sub")  # a child's own: ignored at the root
    zarr3c.create_array(store, "late", shape=(2,), dtype="int8")
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store)
    assert "late" in g
    assert _doc(store)["consolidated_metadata"]["metadata"]["sub"]["consolidated_metadata"][
        "metadata"] == {}


# -- reading ---------------------------------------------------------------------------------


def test_open_consolidated_reads_data_equal(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store)
    assert g.read_only
    assert [n for n, _ in g.members(max_depth=None)] == [
        "a", "sub", "sub/b", "sub/deep", "sub/deep/c"]
    assert g["a"][...].tolist() == list(range(10))
    expected = np.full((3, 5), np.nan)
    expected[1:, 2:] = 7.5
    np.testing.assert_array_equal(g["sub"]["b"][...], expected)
    assert g["sub/b"].attrs["units"] == "m"
    assert g["sub/deep/c"].shards == (6,)
    assert "sub/deep" in g and "sub/nope" not in g and "a/x" not in g and 3 not in g
    with pytest.raises(KeyError, match="nope"):
        g["nope"]
    with pytest.raises(KeyError):
        g["a/x"]  # below an array
    assert g.tree() == zarr3c.open_group(store, mode="r", use_consolidated=False).tree()
    assert zarr3c.open(store, mode="r").uses_consolidated_metadata


def test_opening_a_large_hierarchy_reads_one_metadata_document() -> None:
    """200 arrays in nested groups: opening, listing and opening every member costs one
    metadata read (the root zarr.json) and no listing."""
    store = CountingStore(zarr3c.MemoryStore())
    root = zarr3c.create_group(store)
    for i in range(4):
        for j in range(5):
            grp = root.create_group(f"g{i}/s{j}")
            for k in range(10):
                grp.create_array(f"a{k}", shape=(4,), dtype="int16", chunks=(2,),
                                 attributes={"k": k})
    root["g3/s4/a9"][...] = [1, 2, 3, 4]
    zarr3c.consolidate_metadata(store)
    for opener in (
        lambda: zarr3c.open_consolidated(store),
        lambda: zarr3c.open_group(store, mode="r"),
        lambda: zarr3c.open_group(store),  # mode "a"
        lambda: zarr3c.open_group(store, mode="r+", use_consolidated=True),
        lambda: zarr3c.open(store, mode="r"),
    ):
        store.reset()
        g = opener()
        members = g.members(max_depth=None)
        arrays = [m for _, m in members if isinstance(m, zarr3c.Array)]
        assert len(arrays) == 200 and len(members) == 224
        assert all(a.attrs["k"] == int(a.basename[1:]) and a.shape == (4,) for a in arrays)
        assert all(f"g{i}/s{j}/a{k}" in g for i in range(4) for j in range(5) for k in (0, 9))
        assert g["g2/s3/a5"].dtype == np.int16 and g["g2"]["s3"]["a5"].chunks == (2,)
        assert g.tree().count("(4,) int16") == 200
        assert store.metadata_reads == ["zarr.json"], store.metadata_reads[:5]
        assert store.listings == 0
    # chunk reads still go to the store, and nothing else
    store.reset()
    assert g["g3/s4/a9"][...].tolist() == [1, 2, 3, 4]
    assert store.metadata_reads == [] and store.listings == 0
    assert store.calls["get"] + store.calls["get_many"] + store.calls["get_partial_values"] > 0


def test_without_consolidated_metadata_every_node_is_read() -> None:
    """The same walk with use_consolidated=False lists and reads documents (the contrast)."""
    store = CountingStore(zarr3c.MemoryStore())
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    store.reset()
    zarr3c.open_group(store, mode="r", use_consolidated=False).members(max_depth=None)
    assert len(store.metadata_reads) > 5 and store.listings > 0


# -- use_consolidated --------------------------------------------------------------------------

# (state of the root document, use_consolidated, expected: "used" / "ignored" / error type)
USE_TABLE = [
    ("consolidated", None, "used"),
    ("consolidated", True, "used"),
    ("consolidated", False, "ignored"),
    ("absent", None, "ignored"),
    ("absent", True, MetadataError),
    ("absent", False, "ignored"),
    ("null", None, "ignored"),
    ("null", True, MetadataError),
    ("null", False, "ignored"),
]


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
@pytest.mark.parametrize(("state", "use", "expected"), USE_TABLE,
                         ids=[f"{s}-{u}" for s, u, _ in USE_TABLE])
def test_use_consolidated(state: str, use: bool | None, expected: Any, mode: str) -> None:
    store = zarr3c.MemoryStore()
    _hierarchy(store)
    if state == "consolidated":
        zarr3c.consolidate_metadata(store)
    elif state == "null":
        doc = _doc(store)
        doc["consolidated_metadata"] = None
        store.set("zarr.json", json.dumps(doc).encode())
    zarr3c.create_array(store, "late", shape=(1,), dtype="int8")  # after consolidating
    if isinstance(expected, type):
        with pytest.raises(expected, match=r"zarr\.json.*consolidated_metadata"):
            zarr3c.open_group(store, mode=mode, use_consolidated=use)
        with pytest.raises(expected, match=r"zarr\.json"):
            zarr3c.open_consolidated(store, mode=mode)
        return
    g = zarr3c.open_group(store, mode=mode, use_consolidated=use)
    used = expected == "used"
    assert g.uses_consolidated_metadata is used
    assert ("late" in g) is not used  # the consolidated document predates it
    assert (g.metadata.consolidated_metadata is not None) is used
    assert zarr3c.open(store, mode=mode, use_consolidated=use).uses_consolidated_metadata is used


def test_use_consolidated_with_create_modes_creates_a_plain_group() -> None:
    store = zarr3c.MemoryStore()
    g = zarr3c.open_group(store, "new", mode="a", use_consolidated=True)  # as zarr-python
    assert not g.uses_consolidated_metadata
    g = zarr3c.open_group(store, mode="w", use_consolidated=True)
    assert not g.uses_consolidated_metadata


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, "zmetadata"])
def test_use_consolidated_must_be_none_or_bool(bad: Any) -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_group(store)
    with pytest.raises(InvalidArgumentError, match="use_consolidated"):
        zarr3c.open_group(store, use_consolidated=bad)
    with pytest.raises(InvalidArgumentError, match="use_consolidated"):
        zarr3c.open(store, use_consolidated=bad)


def test_open_consolidated_errors() -> None:
    store = zarr3c.MemoryStore()
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    with pytest.raises(MetadataError, match=r"sub/zarr\.json: consolidated_metadata"):
        zarr3c.open_consolidated(store, path="sub")
    with pytest.raises(InvalidArgumentError, match="use_consolidated=True"):
        zarr3c.open_consolidated(store, use_consolidated=False)
    with pytest.raises(zarr3c.errors.ContainsArrayError):
        zarr3c.open_consolidated(store, path="a")
    with pytest.raises(zarr3c.errors.GroupNotFoundError):
        zarr3c.open_consolidated(store, path="nothing")
    with pytest.raises(zarr3c.errors.ContainsArrayError):
        zarr3c.consolidate_metadata(store, path="a")
    with pytest.raises(UnsupportedFeatureError, match="zarr_format 2"):
        zarr3c.consolidate_metadata(store, zarr_format=2)
    with pytest.raises(ReadOnlyError, match=r"zarr\.json"):
        zarr3c.consolidate_metadata(store.with_read_only(True))


@pytest.mark.parametrize("layout", ["draft-2022", "zarr2-v3"])
def test_other_layouts_refuse_consolidated_metadata(layout: str) -> None:
    store = zarr3c.MemoryStore()
    g = zarr3c.create_group(store, zarr_format=layout)
    g.create_array("a", shape=(2,), dtype="int8")
    with pytest.raises(UnsupportedFeatureError, match=layout):
        zarr3c.consolidate_metadata(store)
    with pytest.raises(UnsupportedFeatureError, match=layout):
        zarr3c.open_consolidated(store)
    with pytest.raises(UnsupportedFeatureError, match=layout):
        zarr3c.open_group(store, use_consolidated=True)
    assert "a" in zarr3c.open_group(store, mode="r")  # None: nothing to use, plain listing


# -- malformed documents -----------------------------------------------------------------------


def _array_entry(**changes: Any) -> dict[str, Any]:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int16",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    doc.update(changes)
    return doc


GROUP = {"zarr_format": 3, "node_type": "group"}
CM = "consolidated_metadata"

# (consolidated_metadata value, error type, JSON path the message must name, id, member):
# member None: the document itself is malformed and refused where it is used (opening with
# use_consolidated None/True); otherwise only opening that member fails (error None: the
# member opens, the malformed part being one the view never uses).
MALFORMED = [
    ([], MetadataError, f"{CM}: must be an object", "not-an-object", None),
    ({"metadata": {}}, MetadataError, f"{CM}.kind", "no-kind", None),
    ({"kind": "external", "metadata": {}}, MetadataError, f"{CM}.kind", "other-kind", None),
    ({"kind": "inline", "must_understand": "no", "metadata": {}}, MetadataError,
     f"{CM}.must_understand", "must-understand-not-bool", None),
    ({"kind": "inline"}, MetadataError, f"{CM}.metadata", "no-metadata", None),
    ({"kind": "inline", "metadata": [1]}, MetadataError, f"{CM}.metadata", "metadata-list",
     None),
    ({"kind": "inline", "metadata": {"x": 3}}, MetadataError, f'{CM}.metadata["x"]',
     "entry-not-object", None),
    ({"kind": "inline", "metadata": {"x": {"zarr_format": 3}}}, MetadataError,
     f'{CM}.metadata["x"].node_type', "entry-no-node-type", None),
    ({"kind": "inline", "metadata": {"x": {"zarr_format": 3, "node_type": "blob"}}},
     MetadataError, f'{CM}.metadata["x"].node_type', "entry-bad-node-type", None),
    ({"kind": "inline", "metadata": {"x": {**GROUP, "zarr_format": 2}}},
     UnsupportedFormatError, f'{CM}.metadata["x"].zarr_format', "entry-zarr-format-2", "x"),
    ({"kind": "inline", "metadata": {"a": GROUP, "a/b": _array_entry(shape=[-1])}},
     MetadataError, f'{CM}.metadata["a/b"].shape', "nested-bad-shape", "a/b"),
    ({"kind": "inline", "metadata": {"x": _array_entry(data_type="int99")}},
     UnknownExtensionError, f'{CM}.metadata["x"].data_type', "unknown-dtype", "x"),
    ({"kind": "inline", "metadata": {"x": _array_entry(chunk_grid={"name": "nope"})}},
     UnknownExtensionError, f'{CM}.metadata["x"].chunk_grid', "unknown-grid", "x"),
    ({"kind": "inline", "metadata": {"x": {**GROUP, "attributes": 5}}}, MetadataError,
     f'{CM}.metadata["x"].attributes', "group-entry-attributes", "x"),
    ({"kind": "inline", "metadata": {"a/b": GROUP}}, MetadataError, f'{CM}.metadata["a/b"]',
     "parent-missing", None),
    ({"kind": "inline", "metadata": {"a": _array_entry(), "a/b": GROUP}}, MetadataError,
     f'{CM}.metadata["a/b"]', "parent-is-array", None),
    ({"kind": "inline", "metadata": {"a//b": GROUP}}, MetadataError, f'{CM}.metadata["a//b"]',
     "empty-segment", None),
    ({"kind": "inline", "metadata": {"../x": GROUP}}, MetadataError, f'{CM}.metadata["../x"]',
     "dot-dot", None),
    ({"kind": "inline", "metadata": {"": GROUP}}, MetadataError, f'{CM}.metadata[""]',
     "empty-key", None),
    # a group entry's own consolidated document is never used by the view: not parsed
    ({"kind": "inline", "metadata": {"s": {**GROUP, CM: {
        "kind": "inline", "metadata": {"x": _array_entry(fill_value="zz")}}}}},
     None, "", "nested-document", "s"),
]


@pytest.mark.parametrize(("cm", "error", "path", "member"), [m[:3] + m[4:] for m in MALFORMED],
                         ids=[m[3] for m in MALFORMED])
def test_malformed_consolidated_metadata(cm: Any, error: Any, path: str, member: Any) -> None:
    doc = {**GROUP, "attributes": {}, CM: cm}
    store = zarr3c.MemoryStore()
    store.set("zarr.json", json.dumps(doc).encode())
    pattern = r"^zarr\.json: " + re.escape(path)
    if member is None:
        with pytest.raises(error) as info:
            ConsolidatedMetadata.from_dict(cm, source="zarr.json")
        assert str(info.value).startswith(f"zarr.json: {path}"), str(info.value)
        assert info.value.source == "zarr.json"
        with pytest.raises(error, match=pattern):
            zarr3c.open_group(store, mode="r")
        with pytest.raises(error, match=pattern):
            zarr3c.open_consolidated(store)
    else:
        g = zarr3c.open_group(store, mode="r")
        assert member in g and g.uses_consolidated_metadata
        if error is None:
            assert g[member].path == member
        else:
            with pytest.raises(error, match=pattern + ".*use_consolidated=False") as info:
                g[member]
            assert info.value.source == "zarr.json"
    if isinstance(cm, dict):  # kept raw: the group opens when its consolidated metadata is not used
        assert GroupMetadata.from_dict(doc).to_dict() == doc
        assert zarr3c.open_group(store, mode="r", use_consolidated=False).attrs.asdict() == {}


# -- staleness ---------------------------------------------------------------------------------


def test_nodes_created_elsewhere_show_after_reconsolidating(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store)
    zarr3c.create_array(store, "sub/late", shape=(2,), dtype="int8")
    assert "sub/late" not in g and "late" not in g["sub"]
    assert "late" in zarr3c.open_group(store, "sub", mode="r")  # its own listing sees it
    zarr3c.consolidate_metadata(store)
    assert "sub/late" in zarr3c.open_consolidated(store)


def test_creations_through_a_consolidated_group_show_in_its_view(store: zarr3c.Store) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    before = _doc(store)
    g = zarr3c.open_consolidated(store, mode="r+")
    new = g.create_array("x/y/new", shape=(3,), dtype="int8", fill_value=5)
    assert g["x/y/new"].shape == (3,) and "x" in g and "x/y" in g
    assert g["x/y/new"][...].tolist() == [5, 5, 5]
    assert new.path == "x/y/new"
    sub = g["sub"]
    sub.create_group("g2").create_array("z", shape=(1,), dtype="int8")
    assert "sub/g2/z" in g and sub.require_group("g2").uses_consolidated_metadata
    assert [n for n, _ in g.members()] == ["a", "sub", "x"]
    assert _doc(store) == before  # the stored document changes at the next consolidation
    assert "x" not in zarr3c.open_consolidated(store)


def test_deletions_through_a_consolidated_group_update_the_stored_document(
    store: zarr3c.Store,
) -> None:
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store, mode="r+")
    del g["sub"]["deep"]
    assert "sub/deep" not in g and "sub/deep/c" not in g
    assert list(_doc(store)[CM]["metadata"]) == ["a", "sub", "sub/b"]
    assert zarr3c.open_consolidated(store)["sub"].keys() == ["b"]
    with pytest.raises(KeyError):
        del g["sub/deep"]
    # overwriting through the group takes the old node out of the stored document too
    g.create_array("a", shape=(2,), dtype="float32", overwrite=True)
    assert g["a"].dtype == np.float32
    assert "a" not in _doc(store)[CM]["metadata"]
    assert _doc(store)["attributes"] == {"title": "root"}


@pytest.mark.parametrize(
    "layout",
    [{"chunks": (6,)}, {"chunks": (2,), "shards": (6,)}, {"chunks": [[5, 5, 10]]}],
    ids=["regular", "sharded", "rectilinear"],
)
def test_resize_elsewhere_never_misreads_chunks(layout: dict[str, Any]) -> None:
    """A consolidated array keeps its old shape after a resize through another object, and
    reads exactly what is stored over that shape."""
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, "a", shape=(20,), dtype="int32", fill_value=-1, **layout)
    a[...] = np.arange(20)
    zarr3c.consolidate_metadata(store)
    stale = zarr3c.open_consolidated(store)["a"]
    other = zarr3c.open_array(store, "a", mode="r+")
    other.resize(7)                     # shrink: chunks cut off are erased or reset
    expected = np.full(20, -1)
    expected[:7] = np.arange(7)
    np.testing.assert_array_equal(stale[...], expected)
    other.resize(35)                    # grow (a rectilinear grid gains an edge)
    other[5:35] = np.arange(100, 130)
    expected[5:] = np.arange(100, 115)
    assert stale.shape == (20,)
    np.testing.assert_array_equal(stale[...], expected)
    np.testing.assert_array_equal(stale[3:18:4], expected[3:18:4])
    zarr3c.consolidate_metadata(store)
    fresh = zarr3c.open_consolidated(store)["a"]
    assert fresh.shape == (35,)
    np.testing.assert_array_equal(fresh[...], np.r_[np.arange(5), np.arange(100, 130)])


def test_pickled_consolidated_group_reopens() -> None:
    import pickle

    store = zarr3c.MemoryStore()
    _hierarchy(store)
    g = zarr3c.consolidate_metadata(store)
    again = pickle.loads(pickle.dumps(g))
    assert again.uses_consolidated_metadata and again["sub/b"].attrs["units"] == "m"


# -- conformance data --------------------------------------------------------------------------


def test_zarrita_consolidated_fixture() -> None:
    """zarrita.js's fixture (written by zarr-python >= 3.1.2), opened from its consolidated
    metadata with one read of each document on the way."""
    if not ZARRITA.is_dir():
        pytest.skip(f"conformance data folder {CONFORMANCE} is absent")
    store = CountingStore(zarr3c.LocalStore(ZARRITA, read_only=True))
    g = zarr3c.open_consolidated(store, path="consolidated")
    assert [n for n, _ in g.members(max_depth=None)] == [
        "1d.chunked.i2", "2d.contiguous.i2", "nested", "nested/1d.i2"]
    assert g.attrs["answer"] == 42
    assert g["nested"].attrs["description"] == "A nested group"
    assert store.metadata_reads == ["zarr.json", "consolidated/zarr.json"]
    assert store.listings == 0
    assert g["nested/1d.i2"][...].tolist() == [10, 20, 30, 40]
    assert g["2d.contiguous.i2"][...].tolist() == [[1, 2], [3, 4]]
    assert g["1d.chunked.i2"][...].tolist() == [1, 2, 3, 4]
    # the fixture root has "consolidated_metadata": null: no consolidated metadata
    assert not zarr3c.open_group(ZARRITA, mode="r").uses_consolidated_metadata
    with pytest.raises(MetadataError, match=r"zarr\.json: consolidated_metadata"):
        zarr3c.open_consolidated(ZARRITA)
    doc = json.loads((ZARRITA / "consolidated" / "zarr.json").read_bytes())
    m = GroupMetadata.from_dict(doc, source="zarr.json")
    assert m.to_dict() == doc  # written back as zarr-python wrote it


def test_zarr_python_metadata_fixtures() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data folder {CONFORMANCE} is absent")
    files = sorted(FIXTURES.glob("*.json"))
    assert files
    for path in files:
        cm = ConsolidatedMetadata.from_dict(json.loads(path.read_bytes()), source=path.name)
        assert ConsolidatedMetadata.from_dict(cm.to_dict()) == cm
        for key in cm.metadata:
            assert cm.node(key).node_type in ("array", "group")


def test_unknown_codec_in_an_entry_names_the_consolidated_document() -> None:
    """Codecs are resolved when the array is opened, not when metadata is parsed: the error
    then names the entry of the document it came from."""
    store = zarr3c.MemoryStore()
    entry = _array_entry(codecs=[{"name": "nope"}])
    doc = {**GROUP, CM: {"kind": "inline", "metadata": {"s": GROUP, "s/x": entry}}}
    store.set("zarr.json", json.dumps(doc).encode())
    g = zarr3c.open_consolidated(store)
    assert g["s"].keys() == ["x"]
    with pytest.raises(UnknownExtensionError,
                       match=r'^zarr\.json: consolidated_metadata\.metadata\["s/x"\]\.codecs\[0\]'):
        g["s"]["x"]


def test_copy_reads_the_hierarchy_as_stored_not_a_stale_snapshot() -> None:
    store = zarr3c.MemoryStore()
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    zarr3c.create_array(store, "sub/late", shape=(2,), dtype="int8", fill_value=3)
    dst = zarr3c.MemoryStore()
    zarr3c.copy(store, dst)
    assert zarr3c.open_array(dst, "sub/late", mode="r")[...].tolist() == [3, 3]


# -- entries zarr3c cannot parse -----------------------------------------------------------------


def test_an_entry_zarr3c_cannot_parse_fails_only_when_that_member_is_opened() -> None:
    """An entry with an unknown data type or an unknown codec: the group still
    opens (use_consolidated False and None), other members read, the bad member raises an
    error naming the entry, and consolidate_metadata repairs the document."""
    store = zarr3c.MemoryStore()
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    doc = _doc(store)
    doc[CM]["metadata"]["sub/b"]["data_type"] = "no_such_type"
    doc[CM]["metadata"]["a"]["codecs"] = [{"name": "nope"}]
    store.set("zarr.json", json.dumps(doc).encode())
    for use in (False, None):
        g = zarr3c.open_group(store, mode="r", use_consolidated=use)
        assert g["sub/deep/c"][...].tolist() == [1, 2, 3, 0, 0, 0]
        assert g.attrs["title"] == "root"
    assert zarr3c.open(store, mode="r").uses_consolidated_metadata
    g = zarr3c.open_consolidated(store)
    assert g.metadata.to_dict() == doc  # kept as stored
    assert g["sub"].keys() == ["b", "deep"] and "sub/b" in g and "a" in g
    hint = ".*use_consolidated=False"
    for open_bad in (lambda: g["sub/b"], lambda: g["sub"]["b"]):
        with pytest.raises(UnknownExtensionError,
                           match=r'^zarr\.json: consolidated_metadata\.metadata\["sub/b"\]'
                                 r"\.data_type" + hint):
            open_bad()
    with pytest.raises(UnknownExtensionError,
                       match=r'^zarr\.json: consolidated_metadata\.metadata\["a"\]\.codecs'
                             + hint):
        g["a"]
    plain = zarr3c.open_group(store, mode="r", use_consolidated=False)
    assert plain["sub/b"].attrs["units"] == "m" and plain["a"][2] == 2
    repaired = zarr3c.consolidate_metadata(store)
    assert repaired["sub/b"].dtype == np.float64 and repaired["a"][2] == 2
    assert _doc(store)[CM]["metadata"]["sub/b"]["data_type"] == "float64"


def test_deleting_through_a_stale_view_removes_what_was_consolidated_since() -> None:
    """Another writer re-consolidated after this view was opened and added sub/new: deleting
    sub takes sub/new out of the stored document too (no entry left without its parent)."""
    store = zarr3c.MemoryStore()
    _hierarchy(store)
    zarr3c.consolidate_metadata(store)
    g = zarr3c.open_consolidated(store, mode="r+")
    zarr3c.create_array(store, "sub/new", shape=(1,), dtype="int8")
    zarr3c.create_array(store, "subway", shape=(1,), dtype="int8")  # shares the prefix only
    zarr3c.consolidate_metadata(store)
    del g["sub"]
    assert list(_doc(store)[CM]["metadata"]) == ["a", "subway"]
    assert zarr3c.open_consolidated(store).keys() == ["a", "subway"]


def test_each_document_is_read_once() -> None:
    """consolidate_metadata reads the group's document once (format detection included);
    open() with array keywords builds the array from the document it read."""
    store = CountingStore(zarr3c.MemoryStore())
    _hierarchy(store)
    for path in (None, "sub"):
        store.reset()
        zarr3c.consolidate_metadata(store, path)
        key = "sub/zarr.json" if path else "zarr.json"
        assert store.metadata_reads.count(key) == 1, store.metadata_reads
    store.reset()
    a = zarr3c.open(store, "a", mode="r", order="F")
    assert a.order == "F" and a[...].tolist() == list(range(10))
    assert store.metadata_reads == ["zarr.json", "a/zarr.json"]
    store.reset()
    assert zarr3c.open_group(store, "sub", mode="a").attrs["level"] == 1
    assert store.metadata_reads == ["zarr.json", "sub/zarr.json"]
    # existence is a key lookup, not a parse: a member with a malformed document exists
    store.set("sub/bad/zarr.json", b"{not json")
    assert "bad" in zarr3c.open_group(store, "sub", mode="r", use_consolidated=False)


@pytest.mark.parametrize("key", ["...", "__x", "a/__x", "a\\b", "a/.", "a\x00b"])
def test_entry_keys_follow_the_node_name_rules(key: str) -> None:
    """Keys are checked with the rules every node name follows (so members() and tree()
    never meet a name they refuse)."""
    parent = {"a": GROUP} if key.startswith("a/") else {}
    cm = {"kind": "inline", "metadata": {**parent, key: GROUP}}
    with pytest.raises(MetadataError, match=r"^zarr\.json: " + re.escape(
            f"{CM}.metadata[{json.dumps(key)}]")):
        ConsolidatedMetadata.from_dict(cm, source="zarr.json")


class _ListedStore(zarr3c.MemoryStore):
    """A memory store with a bounded listing, as an object store (concurrent batches),
    counting its reads."""

    @property
    def concurrent_batches(self) -> bool:
        return True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: Counter[str] = Counter()

    def list_few(self, prefix: str, limit: int) -> list[str] | None:
        keys = sorted(k for k in self.list() if k.startswith(prefix))
        return keys if len(keys) < limit else None

    def get(self, key: str) -> Any:
        self.reads[key] += 1
        return super().get(key)


def test_read_once_answers_missing_keys_from_one_listing() -> None:
    from zarr3c.consolidated import ReadOnce

    store = _ListedStore()
    store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    store.set("a/c/0", b"x")
    reads = ReadOnce(store)
    assert reads.learn_keys(10)
    assert reads.get(".zgroup") is None and not reads.exists("a/zarr.json")
    assert reads.exists("a/c/0") and reads.exists("zarr.json")
    assert reads.get("zarr.json") is not None and reads.get("zarr.json") is not None
    assert store.reads == Counter({"zarr.json": 1})  # only the listed key, once
    # too many keys for the limit: nothing learnt, every key read as before
    assert not ReadOnce(store).learn_keys(2)
    # after a read the listing would be a request more: not taken
    again = ReadOnce(store)
    again.get("zarr.json")
    assert not again.learn_keys(10)
    # creating below the root asks the listing only
    store.reads.clear()
    zarr3c.create_array(store, name="b/d", shape=(2,), dtype="u1")
    assert store.reads == Counter({"zarr.json": 1}), store.reads
    assert sorted(zarr3c.open_group(store, mode="r").keys()) == ["b"]
