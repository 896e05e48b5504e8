"""Chunk key encodings "default" and "v2": keys, decoding, JSON forms, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.chunk_key_encodings import (
    DefaultChunkKeyEncoding,
    V2ChunkKeyEncoding,
    parse_chunk_key_encoding,
)
from zarr3c.errors import MetadataError, UnknownExtensionError

FIXTURES = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "conformance"
    / "zarr-python-zarr-metadata-fixtures"
    / "v3"
    / "chunk_key_encoding"
)

ENCODINGS = [
    DefaultChunkKeyEncoding(),
    DefaultChunkKeyEncoding(separator="."),
    V2ChunkKeyEncoding(),
    V2ChunkKeyEncoding(separator="/"),
]


@pytest.mark.parametrize(
    "encoding, coords, key",
    [
        (DefaultChunkKeyEncoding(), (1, 23, 45), "c/1/23/45"),
        (DefaultChunkKeyEncoding(separator="."), (1, 23, 45), "c.1.23.45"),
        (DefaultChunkKeyEncoding(), (), "c"),
        (DefaultChunkKeyEncoding(separator="."), (), "c"),
        (DefaultChunkKeyEncoding(), (0,), "c/0"),
        (DefaultChunkKeyEncoding(), (2**62, 0), f"c/{2**62}/0"),
        (V2ChunkKeyEncoding(), (1, 23, 45), "1.23.45"),
        (V2ChunkKeyEncoding(separator="/"), (1, 23, 45), "1/23/45"),
        (V2ChunkKeyEncoding(), (), "0"),
        (V2ChunkKeyEncoding(), (7,), "7"),
    ],
    ids=["default", "default-dot", "default-0d", "default-dot-0d", "default-1d", "default-big",
         "v2", "v2-slash", "v2-0d", "v2-1d"],
)
def test_encode_and_decode(encoding: Any, coords: tuple[int, ...], key: str) -> None:
    assert encoding.encode_chunk_key(coords) == key
    assert encoding.decode_chunk_key(key, ndim=len(coords)) == coords


def test_v2_zero_key_without_ndim_is_one_dimensional() -> None:
    assert V2ChunkKeyEncoding().decode_chunk_key("0") == (0,)
    assert V2ChunkKeyEncoding().decode_chunk_key("0", ndim=0) == ()
    assert V2ChunkKeyEncoding().decode_chunk_key("1", ndim=0) is None


@pytest.mark.parametrize(
    "encoding, key",
    [
        (DefaultChunkKeyEncoding(), "zarr.json"),
        (DefaultChunkKeyEncoding(), "c/"),
        (DefaultChunkKeyEncoding(), "c//1"),
        (DefaultChunkKeyEncoding(), "c/1/"),
        (DefaultChunkKeyEncoding(), "c/-1"),
        (DefaultChunkKeyEncoding(), "c/+1"),
        (DefaultChunkKeyEncoding(), "c/01"),
        (DefaultChunkKeyEncoding(), "c/1.2"),
        (DefaultChunkKeyEncoding(), "c.1"),
        (DefaultChunkKeyEncoding(), "c/x"),
        (DefaultChunkKeyEncoding(), "c/\u0661"),  # a non-ASCII digit
        (DefaultChunkKeyEncoding(), "d/1"),
        (DefaultChunkKeyEncoding(), "1/2"),
        (DefaultChunkKeyEncoding(), ""),
        (DefaultChunkKeyEncoding(separator="."), "c/1"),
        (V2ChunkKeyEncoding(), "zarr.json"),
        (V2ChunkKeyEncoding(), "c.1"),
        (V2ChunkKeyEncoding(), "1..2"),
        (V2ChunkKeyEncoding(), ""),
        (V2ChunkKeyEncoding(), "1/2"),
        (V2ChunkKeyEncoding(separator="/"), "1.2"),
        (V2ChunkKeyEncoding(), "sub/zarr.json"),
    ],
    ids=lambda v: repr(v) if isinstance(v, str) else f"{v.name}{v.separator}",
)
def test_decode_refuses_non_chunk_keys(encoding: Any, key: str) -> None:
    assert encoding.decode_chunk_key(key) is None


def test_decode_checks_rank_when_given() -> None:
    enc = DefaultChunkKeyEncoding()
    assert enc.decode_chunk_key("c/1/2") == (1, 2)
    assert enc.decode_chunk_key("c/1/2", ndim=3) is None
    assert enc.decode_chunk_key("c", ndim=1) is None


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: f"{e.name}{e.separator}")
@settings(max_examples=50, deadline=None)
@given(coords=st.lists(st.integers(0, 2**63 - 1), max_size=6).map(tuple))
def test_round_trip(encoding: Any, coords: tuple[int, ...]) -> None:
    key = encoding.encode_chunk_key(coords)
    assert encoding.decode_chunk_key(key, ndim=len(coords)) == coords


# -- JSON -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"name": "default"}, DefaultChunkKeyEncoding(separator="/")),
        ("default", DefaultChunkKeyEncoding(separator="/")),
        ({"name": "default", "configuration": {"separator": "."}},
         DefaultChunkKeyEncoding(separator=".")),
        ({"name": "default", "configuration": {}}, DefaultChunkKeyEncoding(separator="/")),
        ({"name": "v2"}, V2ChunkKeyEncoding(separator=".")),
        ("v2", V2ChunkKeyEncoding(separator=".")),
        ({"name": "v2", "configuration": {"separator": "/"}}, V2ChunkKeyEncoding(separator="/")),
    ],
    ids=["default", "default-bare", "default-dot", "default-empty-config", "v2", "v2-bare",
         "v2-slash"],
)
def test_parse(data: Any, expected: Any) -> None:
    enc = parse_chunk_key_encoding(data)
    assert enc == expected
    assert type(enc) is type(expected)


@pytest.mark.parametrize("encoding", ENCODINGS, ids=lambda e: f"{e.name}{e.separator}")
def test_to_dict_always_writes_the_separator(encoding: Any) -> None:
    d = encoding.to_dict()
    assert d == {"name": encoding.name, "configuration": {"separator": encoding.separator}}
    assert parse_chunk_key_encoding(d) == encoding
    assert type(encoding).from_dict(d) == encoding


@pytest.mark.parametrize(
    "data, error, fragment",
    [
        ({"name": "default", "configuration": {"separator": "-"}}, MetadataError,
         "chunk_key_encoding.configuration.separator"),
        ({"name": "v2", "configuration": {"separator": ""}}, MetadataError,
         "chunk_key_encoding.configuration.separator"),
        ({"name": "default", "configuration": {"separator": None}}, MetadataError,
         "chunk_key_encoding.configuration.separator"),
        ({"name": "default", "configuration": {"separator": "/", "x": 1}}, MetadataError, "'x'"),
        ({"name": "default", "configuration": "/"}, MetadataError,
         "chunk_key_encoding.configuration"),
        ({"name": "default", "separator": "/"}, MetadataError, "'separator'"),
        ({"name": "nested"}, UnknownExtensionError, "nested"),
        ("nested", UnknownExtensionError, "nested"),
        ({"name": 1}, MetadataError, "chunk_key_encoding.name"),
        ({}, MetadataError, "chunk_key_encoding.name"),
        (None, MetadataError, "chunk_key_encoding"),
        (["default"], MetadataError, "chunk_key_encoding"),
    ],
    ids=["bad-sep", "empty-sep", "null-sep", "unknown-config-key", "config-not-object",
         "separator-at-top", "unknown-name", "unknown-bare-name", "name-not-str", "no-name",
         "null", "list"],
)
def test_parse_errors(data: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        parse_chunk_key_encoding(data, source="g/a/zarr.json")
    assert fragment in str(info.value)
    assert "g/a/zarr.json" in str(info.value)


def test_class_from_dict_checks_its_name() -> None:
    with pytest.raises(MetadataError, match=r"chunk_key_encoding\.name"):
        DefaultChunkKeyEncoding.from_dict({"name": "v2"})
    with pytest.raises(MetadataError, match=r"chunk_key_encoding\.name"):
        V2ChunkKeyEncoding.from_dict("default")


def test_constructor_checks_separator() -> None:
    with pytest.raises(MetadataError, match="separator"):
        DefaultChunkKeyEncoding(separator="-")  # type: ignore[arg-type]


def test_encodings_are_frozen() -> None:
    enc = DefaultChunkKeyEncoding()
    with pytest.raises(AttributeError):
        enc.separator = "."  # type: ignore[misc]


def test_conformance_fixture_cases() -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data not found at {FIXTURES}")
    checked = 0
    for folder in sorted(FIXTURES.iterdir()):
        cases = json.loads((folder / "cases.json").read_text())
        for case, doc in cases.items():
            enc = parse_chunk_key_encoding(doc, source=f"{folder.name}/{case}")
            assert enc.name == folder.name
            expected_sep = (doc.get("configuration") or {}).get("separator") if isinstance(
                doc, dict
            ) else None
            assert enc.separator == (expected_sep or ("/" if enc.name == "default" else "."))
            assert parse_chunk_key_encoding(enc.to_dict()) == enc
            checked += 1
    assert checked >= 8
