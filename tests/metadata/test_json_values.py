"""The JSON copy of metadata values: the fast path for decoded documents gives what the
general conversion gives, and refusals still name the JSON path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.errors import MetadataError
from zarr3c.metadata.array import (
    ArrayMetadata,
    _convert_json_value,
    _to_json_value,
)
from zarr3c.metadata.group import GroupMetadata

json_scalars = (st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                | st.floats(allow_nan=False))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=30,
)
#: Values the fast path leaves to the general one: numpy values and tuples inside
mixed_values = st.recursive(
    json_scalars | st.integers(-100, 100).map(np.int32) | st.floats(-1, 1).map(np.float64),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def _containers(value):
    """Every dict and list in ``value``, by identity."""
    found = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict | list):
            found.append(v)
            stack.extend(v.values() if isinstance(v, dict) else v)
    return found


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_decoded_document_copied_equal_and_unshared(value):
    doc = json.loads(json.dumps(value))
    out = _to_json_value(doc, path="attributes", source=None)
    assert out == doc == _convert_json_value(doc, path="attributes", source=None)
    assert type(out) is type(doc)
    # a deep copy: no container of the result is one of the input's
    assert not {id(c) for c in _containers(out)} & {id(c) for c in _containers(doc)}


@settings(max_examples=200, deadline=None)
@given(mixed_values)
def test_numpy_values_and_tuples_converted_as_before(value):
    out = _to_json_value({"a": [value]}, path="attributes", source=None)
    assert out == _convert_json_value({"a": [value]}, path="attributes", source=None)
    assert json.loads(json.dumps(out)) == out  # plain JSON types only


def test_non_string_key_refused_with_path():
    with pytest.raises(MetadataError, match=r"attributes\.a\.b: object keys must be strings"):
        _to_json_value({"a": {"b": {1: 2}}}, path="attributes", source=None)


def test_unserializable_value_refused_with_path():
    with pytest.raises(MetadataError, match=r"attributes\.a\[1\]: value of type set"):
        _to_json_value({"a": [1, {2}]}, path="attributes", source=None)


@pytest.mark.parametrize("depth,ok", [(1, True), (201, True), (202, False), (5000, False)])
def test_nesting_limit_unchanged(depth, ok):
    """``depth`` nested lists: the innermost at depth ``depth - 1``, 200 the deepest allowed."""
    doc: list = []
    for _ in range(depth - 1):
        doc = [doc]
    if ok:
        assert _to_json_value(doc, path="attributes", source=None) == doc
        assert _convert_json_value(doc, path="attributes", source=None) == doc
    else:
        for convert in (_to_json_value, _convert_json_value):
            with pytest.raises(MetadataError, match="nested too deeply"):
                convert(doc, path="attributes", source=None)


def test_documents_parse_to_independent_copies():
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, {"b": 2}]},
           "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                     "metadata": {}}}
    meta = GroupMetadata.from_dict(doc)
    doc["attributes"]["a"][1]["b"] = 3
    doc["consolidated_metadata"]["kind"] = "changed"
    assert meta.attributes == {"a": [1, {"b": 2}]}
    assert meta.consolidated_metadata["kind"] == "inline"


def test_codec_configuration_with_numpy_values():
    doc = {
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"},
                   {"name": "zstd", "configuration": {"level": np.int64(3),
                                                      "checksum": np.bool_(False)}}],
        "attributes": {"v": np.float32(0.5), "t": (1, 2)},
    }
    meta = ArrayMetadata.from_dict(doc)
    assert meta.codecs[1].configuration == {"level": 3, "checksum": False}
    assert type(meta.codecs[1].configuration["level"]) is int
    assert meta.attributes == {"v": 0.5, "t": [1, 2]}
