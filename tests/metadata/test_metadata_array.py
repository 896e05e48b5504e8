"""Array metadata (``zarr.json``): parsing, writing, validation errors, round trips, fixtures."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.chunk_grids import RegularChunkGrid
from zarr3c.chunk_key_encodings import DefaultChunkKeyEncoding, V2ChunkKeyEncoding
from zarr3c.errors import MetadataError, UnknownExtensionError, UnsupportedFormatError
from zarr3c.metadata import (
    ArrayMetadata,
    GroupMetadata,
    NamedConfig,
    parse_data_type,
    parse_node_metadata,
)
from zarr3c.registry import chunk_grids

FIXTURES = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "conformance"
    / "zarr-python-zarr-metadata-fixtures"
    / "v3"
)

SOURCE = "group/arr/zarr.json"


def base_doc() -> dict[str, Any]:
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 20],
        "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
        "storage_transformers": [],
    }


def parse(doc: dict[str, Any]) -> ArrayMetadata:
    return ArrayMetadata.from_dict(doc, source=SOURCE)


# -- the happy path -------------------------------------------------------------------------------


def test_parse_base_document() -> None:
    m = parse(base_doc())
    assert m.shape == (10, 20)
    assert m.ndim == 2
    assert m.data_type == parse_data_type("float32")
    assert m.dtype == np.dtype("float32")
    assert m.chunk_grid == RegularChunkGrid(chunk_shape=(5, 5))
    assert m.chunk_shape == (5, 5)
    assert m.chunk_key_encoding == DefaultChunkKeyEncoding(separator="/")
    assert m.fill_value == bytes(4)
    assert m.codecs == (NamedConfig(name="bytes", configuration={"endian": "little"}),)
    assert m.attributes == {}
    assert m.dimension_names is None
    assert m.storage_transformers == ()
    assert m.extra_fields == {}


def test_to_dict_is_the_document_in_zarr_python_key_order() -> None:
    doc = base_doc()
    doc["attributes"] = {"a": [1, 2], "b": {"c": None}}
    doc["dimension_names"] = ["y", None]
    doc["ext"] = {"must_understand": False, "x": 1}
    out = parse(doc).to_dict()
    assert out == doc
    assert list(out) == [
        "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
        "fill_value", "codecs", "attributes", "dimension_names", "storage_transformers", "ext",
    ]


def test_optional_fields_get_their_defaults() -> None:
    doc = base_doc()
    del doc["attributes"], doc["storage_transformers"]
    doc["chunk_key_encoding"] = {"name": "v2"}
    doc["codecs"] = ["bytes"]
    m = parse(doc)
    assert m.attributes == {}
    assert m.chunk_key_encoding == V2ChunkKeyEncoding(separator=".")
    assert m.codecs == (NamedConfig(name="bytes"),)
    out = m.to_dict()
    assert out["attributes"] == {}
    assert out["storage_transformers"] == []
    assert out["chunk_key_encoding"] == {"name": "v2", "configuration": {"separator": "."}}
    assert out["codecs"] == [{"name": "bytes"}]
    assert "dimension_names" not in out


def test_fill_value_array_has_the_exact_bits() -> None:
    doc = base_doc()
    doc["fill_value"] = "0x7fc00001"
    m = parse(doc)
    fv = m.fill_value_array
    assert fv.shape == () and fv.dtype == np.float32
    assert fv.tobytes() == np.array(0x7FC00001, dtype=np.uint32).tobytes()
    assert m.to_dict()["fill_value"] == "0x7fc00001"


def test_negative_zero_fill_value_is_kept() -> None:
    doc = base_doc()
    doc["fill_value"] = -0.0
    out = json.loads(parse(doc).to_json())
    assert out["fill_value"] == 0.0 and math.copysign(1.0, out["fill_value"]) == -1.0


def test_huge_shapes_are_exact_python_ints() -> None:
    doc = base_doc()
    doc["shape"] = [2**62, 2**62, 12]
    doc["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": [2**20, 2**20, 1]}}
    m = parse(doc)
    assert m.shape == (2**62, 2**62, 12)
    assert m.chunk_grid.grid_shape(m.shape) == (2**42, 2**42, 12)
    assert parse(m.to_dict()) == m


def test_zero_dimensional_array() -> None:
    doc = base_doc()
    doc["shape"] = []
    doc["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": []}}
    doc["dimension_names"] = []
    m = parse(doc)
    assert m.ndim == 0 and m.chunk_shape == ()
    assert parse(m.to_dict()) == m


def test_zero_length_dimension() -> None:
    doc = base_doc()
    doc["shape"] = [0, 20]
    m = parse(doc)
    assert m.chunk_grid.grid_shape(m.shape) == (0, 4)


def test_codec_entries_are_not_resolved() -> None:
    doc = base_doc()
    doc["codecs"] = [
        {"name": "some-future-codec", "configuration": {"x": [1, 2]}},
        {"name": "bytes"},
    ]
    m = parse(doc)
    assert m.codecs[0] == NamedConfig(name="some-future-codec", configuration={"x": [1, 2]})


def test_metadata_does_not_alias_its_input_or_output() -> None:
    doc = base_doc()
    doc["attributes"] = {"list": [1, 2]}
    doc["codecs"][0]["configuration"] = {"endian": "little"}
    m = parse(doc)
    doc["attributes"]["list"].append(3)
    doc["codecs"][0]["configuration"]["endian"] = "big"
    assert m.attributes == {"list": [1, 2]}
    assert m.codecs[0].configuration == {"endian": "little"}
    out = m.to_dict()
    out["attributes"]["list"].append(4)
    out["codecs"][0]["configuration"]["endian"] = "big"
    assert m.to_dict()["attributes"] == {"list": [1, 2]}
    assert m.to_dict()["codecs"][0]["configuration"] == {"endian": "little"}


def test_metadata_is_frozen() -> None:
    m = parse(base_doc())
    with pytest.raises(AttributeError):
        m.shape = (1, 1)  # type: ignore[misc]


# -- JSON bytes -----------------------------------------------------------------------------------


def test_to_json_and_back() -> None:
    doc = base_doc()
    doc["fill_value"] = "NaN"
    doc["attributes"] = {"text": "héllo 世界", "n": 1.5}
    m = parse(doc)
    raw = m.to_json()
    assert isinstance(raw, bytes)
    assert raw.startswith(b'{\n  "zarr_format": 3,\n  "node_type": "array",')
    assert ArrayMetadata.from_json(raw, source=SOURCE) == m
    assert json.loads(raw) == doc


def test_to_json_never_writes_bare_nan() -> None:
    doc = base_doc()
    doc["attributes"] = {"a": float("nan"), "b": [float("inf"), -float("inf")]}
    doc["fill_value"] = "NaN"
    raw = parse(doc).to_json()
    assert b"NaN," not in raw.replace(b'"NaN"', b"") and b"Infinity" not in raw.replace(
        b'"Infinity"', b""
    ).replace(b'"-Infinity"', b"")
    out = json.loads(raw, parse_constant=lambda c: pytest.fail(f"bare {c} in output"))
    assert out["attributes"] == {"a": "NaN", "b": ["Infinity", "-Infinity"]}
    assert out["fill_value"] == "NaN"


def test_bare_nan_token_is_read_leniently() -> None:
    raw = json.dumps(base_doc()).replace('"fill_value": 0.0', '"fill_value": NaN').encode()
    m = ArrayMetadata.from_json(raw)
    assert m.to_dict()["fill_value"] == "NaN"


@pytest.mark.parametrize(
    "raw, fragment",
    [
        (b"", "not valid JSON"),
        (b"{", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[]", "JSON object"),
        (b'"zarr"', "JSON object"),
        (b"null", "JSON object"),
        (b"3", "JSON object"),
    ],
    ids=["empty", "truncated", "not-utf8", "list", "string", "null", "number"],
)
def test_from_json_errors_name_the_source(raw: bytes, fragment: str) -> None:
    with pytest.raises(MetadataError) as info:
        ArrayMetadata.from_json(raw, source=SOURCE)
    assert SOURCE in str(info.value)
    assert fragment in str(info.value)


# -- validation errors ----------------------------------------------------------------------------


def mutate(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        for key, value in changes.items():
            if value is _DELETE:
                doc.pop(key, None)
            else:
                doc[key] = value

    return apply


_DELETE = object()


def set_in(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        target: Any = doc
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = value

    return apply


ERRORS: list[tuple[str, Callable[[dict[str, Any]], None], type[Exception], str]] = [
    ("zarr_format-2", mutate(zarr_format=2), UnsupportedFormatError, "zarr_format"),
    ("zarr_format-str", mutate(zarr_format="3"), UnsupportedFormatError, "zarr_format"),
    ("zarr_format-float", mutate(zarr_format=3.0), UnsupportedFormatError, "zarr_format"),
    ("zarr_format-uri", mutate(zarr_format="https://purl.org/zarr/spec/core/3.0"),
     UnsupportedFormatError, "zarr_format"),
    ("zarr_format-missing", mutate(zarr_format=_DELETE), MetadataError, "zarr_format"),
    ("node_type-group", mutate(node_type="group"), MetadataError, "node_type"),
    ("node_type-missing", mutate(node_type=_DELETE), MetadataError, "node_type"),
    ("shape-missing", mutate(shape=_DELETE), MetadataError, "shape"),
    ("data_type-missing", mutate(data_type=_DELETE), MetadataError, "data_type"),
    ("chunk_grid-missing", mutate(chunk_grid=_DELETE), MetadataError, "chunk_grid"),
    ("cke-missing", mutate(chunk_key_encoding=_DELETE), MetadataError, "chunk_key_encoding"),
    ("fill_value-missing", mutate(fill_value=_DELETE), MetadataError, "fill_value"),
    ("codecs-missing", mutate(codecs=_DELETE), MetadataError, "codecs"),
    ("shape-not-list", mutate(shape=10), MetadataError, "shape"),
    ("shape-negative", mutate(shape=[10, -1]), MetadataError, "shape[1]"),
    ("shape-bool", mutate(shape=[True, 20]), MetadataError, "shape[0]"),
    ("shape-float", mutate(shape=[10.0, 20]), MetadataError, "shape[0]"),
    ("shape-too-large", mutate(shape=[2**63, 20]), MetadataError, "shape[0]"),
    ("shape-null-entry", mutate(shape=[None, 20]), MetadataError, "shape[0]"),
    ("rank-mismatch", mutate(shape=[10, 20, 30]), MetadataError,
     "chunk_grid.configuration.chunk_shape"),
    ("chunk-zero", set_in(("chunk_grid", "configuration", "chunk_shape"), [5, 0]),
     MetadataError, "chunk_grid.configuration.chunk_shape[1]"),
    ("chunk-negative", set_in(("chunk_grid", "configuration", "chunk_shape"), [-5, 5]),
     MetadataError, "chunk_grid.configuration.chunk_shape[0]"),
    ("chunk-bool", set_in(("chunk_grid", "configuration", "chunk_shape"), [5, True]),
     MetadataError, "chunk_grid.configuration.chunk_shape[1]"),
    ("chunk-too-many-bytes",
     set_in(("chunk_grid", "configuration", "chunk_shape"), [2**31, 2**30]),
     MetadataError, "chunk_grid"),
    ("grid-unknown", set_in(("chunk_grid", "name"), "hexagonal"), UnknownExtensionError,
     "hexagonal"),
    ("grid-not-object", mutate(chunk_grid=[5, 5]), MetadataError, "chunk_grid"),
    ("cke-unknown", set_in(("chunk_key_encoding", "name"), "morton"), UnknownExtensionError,
     "morton"),
    ("cke-bad-separator", set_in(("chunk_key_encoding", "configuration", "separator"), ":"),
     MetadataError, "chunk_key_encoding.configuration.separator"),
    ("data_type-unknown", mutate(data_type="no_such_type"), UnknownExtensionError,
     "no_such_type"),
    ("data_type-datetime",
     mutate(data_type={"name": "numpy.datetime64", "configuration": {"unit": "ns"}}),
     MetadataError, "data_type.configuration.scale_factor"),
    ("fill-null", mutate(fill_value=None), MetadataError, "fill_value"),
    ("fill-bool-for-float", mutate(fill_value=True), MetadataError, "fill_value"),
    ("fill-bad-string", mutate(fill_value="nan"), MetadataError, "fill_value"),
    ("fill-out-of-range", mutate(data_type="uint8", fill_value=256), MetadataError,
     "fill_value"),
    ("fill-bool-for-int", mutate(data_type="int32", fill_value=True), MetadataError,
     "fill_value"),
    ("fill-fraction-for-int", mutate(data_type="int32", fill_value=0.5), MetadataError,
     "fill_value"),
    ("fill-int-for-bool", mutate(data_type="bool", fill_value=0), MetadataError, "fill_value"),
    ("fill-short-hex", mutate(fill_value="0x7fc0"), MetadataError, "fill_value"),
    ("codecs-empty", mutate(codecs=[]), MetadataError, "codecs"),
    ("codecs-not-list", mutate(codecs={"name": "bytes"}), MetadataError, "codecs"),
    ("codec-not-object", mutate(codecs=[{"name": "bytes"}, 5]), MetadataError, "codecs[1]"),
    ("codec-no-name", mutate(codecs=[{"name": "bytes"}, {"configuration": {}}]), MetadataError,
     "codecs[1].name"),
    ("codec-name-not-str", mutate(codecs=[{"name": 1}]), MetadataError, "codecs[0].name"),
    ("codec-empty-name", mutate(codecs=[""]), MetadataError, "codecs[0]"),
    ("codec-config-not-object", mutate(codecs=[{"name": "bytes", "configuration": [1]}]),
     MetadataError, "codecs[0].configuration"),
    ("codec-unknown-key", mutate(codecs=[{"name": "bytes", "must_understand": False}]),
     MetadataError, "codecs[0]"),
    ("attributes-list", mutate(attributes=[1]), MetadataError, "attributes"),
    ("attributes-string", mutate(attributes="x"), MetadataError, "attributes"),
    ("dimension_names-wrong-length", mutate(dimension_names=["x"]), MetadataError,
     "dimension_names"),
    ("dimension_names-int", mutate(dimension_names=["x", 1]), MetadataError,
     "dimension_names[1]"),
    ("dimension_names-string", mutate(dimension_names="xy"), MetadataError, "dimension_names"),
    ("storage_transformers-entry",
     mutate(storage_transformers=[{"name": "chunk-manifest-json", "configuration": {}}]),
     UnknownExtensionError, "chunk-manifest-json"),
    ("storage_transformers-must_understand-false",
     mutate(storage_transformers=[{"name": "x", "must_understand": False}]),
     MetadataError, "storage_transformers[0]"),
    ("storage_transformers-not-list", mutate(storage_transformers={}), MetadataError,
     "storage_transformers"),
    ("unknown-field", mutate(foo=1), MetadataError, "foo"),
    ("unknown-object-field", mutate(foo={"x": 1}), MetadataError, "foo"),
    ("unknown-field-must_understand-true", mutate(foo={"must_understand": True}),
     MetadataError, "foo"),
    ("unknown-field-must_understand-string", mutate(foo={"must_understand": "false"}),
     MetadataError, "foo"),
    ("v2-field", mutate(dtype="<f4"), MetadataError, "dtype"),
]


@pytest.mark.parametrize(
    "change, error, fragment", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_validation_errors(
    change: Callable[[dict[str, Any]], None], error: type[Exception], fragment: str
) -> None:
    doc = base_doc()
    change(doc)
    with pytest.raises(error) as info:
        parse(doc)
    msg = str(info.value)
    assert fragment in msg
    assert SOURCE in msg
    assert isinstance(info.value, MetadataError)
    # The same document through the bytes path and the node dispatcher fails the same way.
    with pytest.raises(error):
        parse_node_metadata(json.dumps(doc).encode(), source=SOURCE)


def test_storage_transformer_error_names_the_entry() -> None:
    doc = base_doc()
    doc["storage_transformers"] = [{"name": "a"}]
    with pytest.raises(UnknownExtensionError, match=r"storage_transformers\[0\]"):
        parse(doc)


def test_unknown_fields_that_may_be_ignored_are_kept() -> None:
    doc = base_doc()
    doc["my_extension"] = {"must_understand": False, "nested": {"a": [1, 2]}}
    m = parse(doc)
    assert m.extra_fields == {"my_extension": {"must_understand": False, "nested": {"a": [1, 2]}}}
    assert json.loads(m.to_json())["my_extension"] == doc["my_extension"]


# -- evolve ---------------------------------------------------------------------------------------


def test_evolve_shape_keeps_the_grid() -> None:
    m = parse(base_doc())
    m2 = m.evolve(shape=(100, 3))
    assert m2.shape == (100, 3)
    assert m2.chunk_grid == m.chunk_grid
    assert m.shape == (10, 20)


def test_evolve_attributes() -> None:
    m = parse(base_doc())
    m2 = m.evolve(attributes={"units": "m"})
    assert m2.attributes == {"units": "m"}
    assert m2.to_dict()["attributes"] == {"units": "m"}
    assert m.attributes == {}


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"shape": (10, 20, 30)}, "chunk_grid"),
        ({"chunk_grid": RegularChunkGrid(chunk_shape=(5,))}, "chunk_grid"),
        ({"dimension_names": ("x",)}, "dimension_names"),
        ({"fill_value": b"\x00"}, "fill_value"),
        ({"data_type": parse_data_type("float64")}, "fill_value"),
        ({"attributes": {"x": object()}}, "attributes.x"),
        ({"attributes": [1]}, "attributes"),
        ({"no_such_field": 1}, "no_such_field"),
    ],
    ids=["rank", "grid-rank", "dimension_names", "fill-length", "dtype-vs-fill",
         "attrs-not-json", "attrs-not-object", "unknown-field"],
)
def test_evolve_revalidates(changes: dict[str, Any], fragment: str) -> None:
    m = parse(base_doc())
    with pytest.raises(MetadataError, match=fragment):
        m.evolve(**changes)


def test_evolve_data_type_with_matching_fill_value() -> None:
    m = parse(base_doc())
    f64 = parse_data_type("float64")
    m2 = m.evolve(data_type=f64, fill_value=f64.parse_fill_value("NaN"))
    assert m2.dtype == np.float64
    assert m2.to_dict()["fill_value"] == "NaN"


# -- hypothesis round trip ------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=4,
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=10)
DATA_TYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "r8", "r24", "r64",
]


@st.composite
def array_documents(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0, 2**40), min_size=ndim, max_size=ndim))
    chunks = draw(st.lists(st.integers(1, 2**10), min_size=ndim, max_size=ndim))
    dtype = parse_data_type(draw(st.sampled_from(DATA_TYPES)))
    raw = (
        draw(st.sampled_from([b"\x00", b"\x01"]))
        if dtype.name == "bool"
        else draw(st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize))
    )
    encoding = draw(
        st.sampled_from(
            [
                {"name": "default", "configuration": {"separator": "/"}},
                {"name": "default", "configuration": {"separator": "."}},
                {"name": "v2", "configuration": {"separator": "."}},
                {"name": "v2", "configuration": {"separator": "/"}},
            ]
        )
    )
    codecs = draw(
        st.lists(
            st.fixed_dictionaries(
                {"name": names},
                optional={"configuration": st.dictionaries(names, json_values, max_size=3)},
            ),
            min_size=1,
            max_size=4,
        )
    )
    doc: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dtype.name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": encoding,
        "fill_value": dtype.fill_value_to_json(raw),
        "codecs": codecs,
        "attributes": draw(st.dictionaries(st.text(max_size=6), json_values, max_size=4)),
    }
    if draw(st.booleans()):
        doc["dimension_names"] = draw(
            st.lists(st.none() | st.text(max_size=5), min_size=ndim, max_size=ndim)
        )
    doc["storage_transformers"] = []
    extras = draw(st.dictionaries(names.map(lambda s: "x_" + s), json_values, max_size=2))
    for key, value in extras.items():
        doc[key] = {"must_understand": False, "value": value}
    return doc


@settings(max_examples=50, deadline=None)
@given(array_documents())
def test_round_trip(doc: dict[str, Any]) -> None:
    m = ArrayMetadata.from_dict(doc)
    assert m.to_dict() == doc
    assert ArrayMetadata.from_dict(m.to_dict()) == m
    again = ArrayMetadata.from_json(m.to_json())
    assert again == m
    assert again.fill_value == m.fill_value


# -- parse_node_metadata --------------------------------------------------------------------------


def test_parse_node_metadata_dispatches() -> None:
    assert isinstance(parse_node_metadata(json.dumps(base_doc()).encode()), ArrayMetadata)
    group = {"zarr_format": 3, "node_type": "group"}
    assert isinstance(parse_node_metadata(json.dumps(group).encode()), GroupMetadata)


@pytest.mark.parametrize(
    "doc, error, fragment",
    [
        ({"zarr_format": 3}, MetadataError, "node_type"),
        ({"zarr_format": 3, "node_type": "dataset"}, MetadataError, "node_type"),
        ({"zarr_format": 3, "node_type": None}, MetadataError, "node_type"),
        ({"zarr_format": 2, "node_type": "array"}, UnsupportedFormatError, "zarr_format"),
        ({"node_type": "group"}, MetadataError, "zarr_format"),
        ([], MetadataError, "JSON object"),
    ],
    ids=["no-node_type", "unknown-node_type", "null-node_type", "v2", "no-zarr_format", "list"],
)
def test_parse_node_metadata_errors(doc: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        parse_node_metadata(json.dumps(doc).encode(), source=SOURCE)
    assert fragment in str(info.value)
    assert SOURCE in str(info.value)


def test_zarr_v2_document_is_unsupported() -> None:
    v2 = {"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": "<f8", "compressor": None,
          "fill_value": 0, "filters": None, "order": "C"}
    with pytest.raises(UnsupportedFormatError, match="zarr_format"):
        ArrayMetadata.from_json(json.dumps(v2).encode(), source=".zarray")


# -- conformance fixtures -------------------------------------------------------------------------


def _array_fixtures() -> list[Path]:
    folder = FIXTURES / "array"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _expected_document(doc: dict[str, Any]) -> dict[str, Any]:
    """The fixture as zarr3c writes it back: defaults filled in, the same meaning."""
    out = copy.deepcopy(doc)
    out.setdefault("attributes", {})
    out.setdefault("storage_transformers", [])
    cke = out["chunk_key_encoding"]
    if isinstance(cke, str):
        cke = out["chunk_key_encoding"] = {"name": cke}
    cke.setdefault("configuration", {"separator": "/" if cke["name"] == "default" else "."})
    return out


def test_conformance_array_fixtures() -> None:
    files = _array_fixtures()
    if not files:
        pytest.skip(f"conformance data not found at {FIXTURES}")
    parsed = 0
    for path in files:
        raw = path.read_bytes()
        doc = json.loads(raw)
        name = doc["chunk_grid"]["name"]
        if name not in chunk_grids:
            with pytest.raises(UnknownExtensionError, match=name):
                parse_node_metadata(raw, source=path.name)
            continue
        m = parse_node_metadata(raw, source=path.name)
        assert isinstance(m, ArrayMetadata)
        assert ArrayMetadata.from_dict(m.to_dict()) == m
        assert ArrayMetadata.from_json(m.to_json()) == m
        if name == "regular":
            assert m.to_dict() == _expected_document(doc), path.name
            parsed += 1
    assert parsed >= 9


def test_conformance_consolidated_children_parse() -> None:
    path = FIXTURES / "consolidated" / "with_array_and_group.json"
    if not path.is_file():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    children = json.loads(path.read_text())["metadata"]
    kinds = {
        key: type(parse_node_metadata(json.dumps(child).encode(), source=key)).__name__
        for key, child in children.items()
    }
    assert kinds == {"child_group": "GroupMetadata", "child_array": "ArrayMetadata"}


def test_conformance_fixtures_match_zarr_python() -> None:
    zarr_v3 = pytest.importorskip("zarr.core.metadata.v3")
    files = _array_fixtures()
    if not files:
        pytest.skip(f"conformance data not found at {FIXTURES}")
    compared = 0
    for path in files:
        doc = json.loads(path.read_bytes())
        if isinstance(doc["data_type"], dict) or doc["chunk_grid"]["name"] != "regular":
            continue
        theirs = zarr_v3.ArrayV3Metadata.from_dict(copy.deepcopy(doc)).to_dict()
        ours = ArrayMetadata.from_dict(doc).to_dict()
        assert json.loads(json.dumps(ours)) == json.loads(json.dumps(theirs, default=list)), (
            path.name
        )
        compared += 1
    assert compared >= 9
