"""Group metadata (``zarr.json`` of a group): parsing, writing, errors, round trips, fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.errors import MetadataError, UnsupportedFormatError
from zarr3c.metadata import GroupMetadata, parse_node_metadata
from zarr3c.metadata.group import ConsolidatedMetadata

FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "conformance"
    / "zarr-python-zarr-metadata-fixtures"
    / "v3"
)

SOURCE = "grp/zarr.json"


def test_minimal_group() -> None:
    m = GroupMetadata.from_dict({"zarr_format": 3, "node_type": "group"}, source=SOURCE)
    assert m.attributes == {}
    assert m.consolidated_metadata is None
    assert m.extra_fields == {}
    assert m.to_dict() == {"zarr_format": 3, "node_type": "group", "attributes": {}}


def test_to_json_layout() -> None:
    m = GroupMetadata.from_dict({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}})
    raw = m.to_json()
    assert raw == (
        b'{\n  "zarr_format": 3,\n  "node_type": "group",\n  "attributes": {\n    "a": 1\n  }\n}'
    )
    assert GroupMetadata.from_json(raw) == m


def test_attributes_with_nan_are_written_as_strings() -> None:
    m = GroupMetadata.from_dict(
        {"zarr_format": 3, "node_type": "group", "attributes": {"x": float("nan")}}
    )
    out = json.loads(m.to_json(), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert out["attributes"] == {"x": "NaN"}


def test_consolidated_metadata_is_kept_raw_and_written_back() -> None:
    cm = {
        "kind": "inline",
        "must_understand": False,
        "metadata": {"child": {"zarr_format": 3, "node_type": "group", "attributes": {}}},
    }
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {}, "consolidated_metadata": cm}
    m = GroupMetadata.from_dict(doc)
    assert m.consolidated_metadata == cm  # parsed only where it is used
    assert ConsolidatedMetadata.from_dict(m.consolidated_metadata).node("child") == GroupMetadata()
    assert m.to_dict() == doc
    assert list(m.to_dict()) == ["zarr_format", "node_type", "attributes", "consolidated_metadata"]


def test_consolidated_metadata_null_is_allowed() -> None:
    m = GroupMetadata.from_dict(
        {"zarr_format": 3, "node_type": "group", "consolidated_metadata": None}
    )
    assert m.consolidated_metadata is None
    assert "consolidated_metadata" not in m.to_dict()


def test_extra_fields_that_may_be_ignored_are_kept() -> None:
    doc = {
        "zarr_format": 3,
        "node_type": "group",
        "attributes": {},
        "ext": {"must_understand": False, "x": [1, {"y": None}]},
    }
    m = GroupMetadata.from_dict(doc)
    assert m.extra_fields == {"ext": doc["ext"]}
    assert m.to_dict() == doc


def test_no_aliasing() -> None:
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"l": [1]}}
    m = GroupMetadata.from_dict(doc)
    doc["attributes"]["l"].append(2)
    m.to_dict()["attributes"]["l"].append(3)
    assert m.attributes == {"l": [1]}


def test_numpy_attribute_values_become_json() -> None:
    np = pytest.importorskip("numpy")
    m = GroupMetadata.from_dict(
        {"zarr_format": 3, "node_type": "group",
         "attributes": {"i": np.int64(3), "a": np.arange(3), "f": np.float32(0.5)}}
    )
    assert m.attributes == {"i": 3, "a": [0, 1, 2], "f": 0.5}
    assert type(m.attributes["i"]) is int


def test_evolve() -> None:
    m = GroupMetadata.from_dict({"zarr_format": 3, "node_type": "group"})
    m2 = m.evolve(attributes={"a": 1})
    assert m2.attributes == {"a": 1}
    assert m.attributes == {}
    with pytest.raises(MetadataError, match="attributes"):
        m.evolve(attributes=[1])
    with pytest.raises(MetadataError, match=r"attributes\.s"):
        m.evolve(attributes={"s": {1, 2}})


GROUP_ERRORS = [
    ("zarr_format-2", {"zarr_format": 2, "node_type": "group"}, UnsupportedFormatError,
     "zarr_format"),
    ("zarr_format-missing", {"node_type": "group"}, MetadataError, "zarr_format"),
    ("zarr_format-bool", {"zarr_format": True, "node_type": "group"}, UnsupportedFormatError,
     "zarr_format"),
    ("node_type-missing", {"zarr_format": 3}, MetadataError, "node_type"),
    ("node_type-array", {"zarr_format": 3, "node_type": "array"}, MetadataError, "node_type"),
    ("attributes-list", {"zarr_format": 3, "node_type": "group", "attributes": []},
     MetadataError, "attributes"),
    ("attributes-int", {"zarr_format": 3, "node_type": "group", "attributes": 1},
     MetadataError, "attributes"),
    ("consolidated-list", {"zarr_format": 3, "node_type": "group", "consolidated_metadata": []},
     MetadataError, "consolidated_metadata"),
    ("unknown-field", {"zarr_format": 3, "node_type": "group", "foo": "bar"}, MetadataError,
     "foo"),
    ("unknown-object", {"zarr_format": 3, "node_type": "group", "foo": {"a": 1}}, MetadataError,
     "foo"),
    ("must_understand-true",
     {"zarr_format": 3, "node_type": "group", "foo": {"must_understand": True}}, MetadataError,
     "foo"),
]


@pytest.mark.parametrize(
    "doc, error, fragment", [e[1:] for e in GROUP_ERRORS], ids=[e[0] for e in GROUP_ERRORS]
)
def test_group_errors(doc: dict[str, Any], error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        GroupMetadata.from_dict(doc, source=SOURCE)
    assert fragment in str(info.value)
    assert SOURCE in str(info.value)


@pytest.mark.parametrize(
    "raw", [b"", b"{", b"[1]", b"\x80"], ids=["empty", "truncated", "list", "not-utf8"]
)
def test_from_json_errors(raw: bytes) -> None:
    with pytest.raises(MetadataError, match=SOURCE):
        GroupMetadata.from_json(raw, source=SOURCE)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=4,
)


@settings(max_examples=40, deadline=None)
@given(
    attributes=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    consolidated=st.none() | st.dictionaries(
        st.text(min_size=1, max_size=4).filter(lambda k: "/" not in k and k not in (".", "..")),
        st.dictionaries(st.text(max_size=6), json_values, max_size=2), max_size=3,
    ).map(lambda groups: {"kind": "inline", "must_understand": False, "metadata": {
        k: {"zarr_format": 3, "node_type": "group", "attributes": a} for k, a in groups.items()
    }}),
    extras=st.dictionaries(st.text(min_size=1, max_size=4).map(lambda s: "x" + s), json_values,
                           max_size=2),
)
def test_round_trip(
    attributes: dict[str, Any], consolidated: dict[str, Any] | None, extras: dict[str, Any]
) -> None:
    doc: dict[str, Any] = {"zarr_format": 3, "node_type": "group", "attributes": attributes}
    if consolidated is not None:
        doc["consolidated_metadata"] = consolidated
    for key, value in extras.items():
        doc[key] = {"must_understand": False, "v": value}
    m = GroupMetadata.from_dict(doc)
    assert m.to_dict() == doc
    assert GroupMetadata.from_dict(m.to_dict()) == m
    # Infinity in attributes is written as a string (zarr-python's convention), so compare
    # the JSON round trip only when every float is finite.
    text = json.dumps(doc)
    if "Infinity" not in text:
        assert GroupMetadata.from_json(m.to_json()) == m


def test_conformance_group_fixtures() -> None:
    folder = FIXTURES / "group"
    if not folder.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    files = sorted(folder.glob("*.json"))
    assert files
    for path in files:
        raw = path.read_bytes()
        doc = json.loads(raw)
        m = parse_node_metadata(raw, source=path.name)
        assert isinstance(m, GroupMetadata)
        expected = dict(doc)
        expected.setdefault("attributes", {})
        assert m.to_dict() == {
            "zarr_format": 3,
            "node_type": "group",
            **{k: v for k, v in expected.items() if k not in ("zarr_format", "node_type")},
        }
        assert GroupMetadata.from_json(m.to_json()) == m


def test_conformance_consolidated_fixtures_as_group_field() -> None:
    folder = FIXTURES / "consolidated"
    if not folder.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    for path in sorted(folder.glob("*.json")):
        cm = json.loads(path.read_text())
        m = GroupMetadata.from_dict(
            {"zarr_format": 3, "node_type": "group", "consolidated_metadata": cm},
            source=path.name,
        )
        assert json.loads(m.to_json())["consolidated_metadata"] == cm  # written back as read
        parsed = ConsolidatedMetadata.from_dict(m.consolidated_metadata, source=path.name)
        assert set(parsed.metadata) == set(cm["metadata"])
        for k, v in cm["metadata"].items():  # each entry parses as that node's own zarr.json
            assert parsed.node(k) == parse_node_metadata(json.dumps(v), source=k)


def test_matches_zarr_python_group_document() -> None:
    zarr_v3 = pytest.importorskip("zarr.core.group")
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2]}}
    theirs = zarr_v3.GroupMetadata.from_dict(dict(doc)).to_dict()
    ours = GroupMetadata.from_dict(doc).to_dict()
    theirs = {k: v for k, v in theirs.items() if v is not None}
    assert json.loads(json.dumps(ours)) == json.loads(json.dumps(theirs))
