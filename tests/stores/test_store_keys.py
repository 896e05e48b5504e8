"""Store keys, prefixes and byte ranges: validate_key, validate_prefix and the range helpers."""

from __future__ import annotations

import posixpath
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.errors import InvalidKeyError
from zarr3c.stores import validate_key, validate_prefix
from zarr3c.stores.byte_ranges import (
    Want,
    as_byte_view,
    coalesce_byte_ranges,
    cut_answers,
    normalize_byte_range,
    resolve_byte_range,
)

VALID_KEYS = [
    "zarr.json",
    "a/b/c",
    "group/array/c/0/1",
    "c.0.1",
    "my group with spaces/zarr.json",
    "données/€/日本",
    ".zattrs",
    "a/.hidden",
    "...",
    "..a/b..",
    "a/.../b",
    "-_~!@#$%^&*()+=,;:'\"<>?|",
    "a" * 300,
]


@pytest.mark.parametrize("key", VALID_KEYS)
def test_valid_keys(key: str) -> None:
    assert validate_key(key) is key
    assert validate_prefix(key + "/") == key + "/"


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("/a", "start with '/'", id="leading-slash"),
        pytest.param("/", "start with '/'", id="slash"),
        pytest.param("a/", "end with '/'", id="trailing-slash"),
        pytest.param("a//b", "empty path segments", id="empty-segment"),
        pytest.param(".", "'.' path segments", id="dot"),
        pytest.param("..", "'..' path segments", id="dotdot"),
        pytest.param("a/./b", "'.' path segments", id="dot-segment"),
        pytest.param("a/../b", "'..' path segments", id="dotdot-segment"),
        pytest.param("a/..", "'..' path segments", id="dotdot-last"),
        pytest.param("../../etc/passwd", "'..' path segments", id="traversal"),
        pytest.param("a\\b", "backslash", id="backslash"),
        pytest.param("..\\x", "backslash", id="backslash-traversal"),
        pytest.param("a\x00b", "NUL", id="nul"),
        pytest.param(None, "must be a str", id="none"),
        pytest.param(b"a", "must be a str", id="bytes"),
        pytest.param(1, "must be a str", id="int"),
        pytest.param(("a",), "must be a str", id="tuple"),
    ],
)
def test_invalid_keys(key: Any, reason: str) -> None:
    with pytest.raises(InvalidKeyError) as excinfo:
        validate_key(key)
    message = str(excinfo.value)
    assert repr(key) in message
    assert reason in message
    assert isinstance(excinfo.value, ValueError)


@pytest.mark.parametrize("prefix", ["", "a/", "a/b/", "with space/", "ü/"])
def test_valid_prefixes(prefix: str) -> None:
    assert validate_prefix(prefix) == prefix


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        pytest.param("a", "end with '/'", id="no-trailing-slash"),
        pytest.param("/", "start with '/'", id="slash-only"),
        pytest.param("/a/", "start with '/'", id="leading-slash"),
        pytest.param("a//", "end with '/'", id="double-trailing-slash"),
        pytest.param("a//b/", "empty path segments", id="empty-segment"),
        pytest.param("../", "'..' path segments", id="dotdot"),
        pytest.param("./", "'.' path segments", id="dot"),
        pytest.param("a/../", "'..' path segments", id="dotdot-last"),
        pytest.param("a\\b/", "backslash", id="backslash"),
        pytest.param("a\x00/", "NUL", id="nul"),
        pytest.param(None, "must be a str", id="none"),
        pytest.param(b"a/", "must be a str", id="bytes"),
    ],
)
def test_invalid_prefixes(prefix: Any, reason: str) -> None:
    with pytest.raises(InvalidKeyError) as excinfo:
        validate_prefix(prefix)
    assert repr(prefix) in str(excinfo.value)
    assert reason in str(excinfo.value)


# -- properties --------------------------------------------------------------------------------

_segment = st.text(
    alphabet=st.characters(blacklist_characters="/\\\x00", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=8,
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=100, deadline=None)
@given(st.lists(_segment, min_size=1, max_size=5))
def test_keys_made_of_valid_segments_are_valid(segments: list[str]) -> None:
    key = "/".join(segments)
    assert validate_key(key) == key
    assert validate_prefix(key + "/") == key + "/"


@settings(max_examples=250, deadline=None)
@given(st.text(alphabet="ab./\\\x00 ", max_size=12))
def test_accepted_keys_cannot_leave_a_directory(key: str) -> None:
    try:
        validate_key(key)
    except InvalidKeyError as exc:
        assert repr(key) in str(exc)
        return
    # Accepted: joining under a root and normalizing changes nothing, so the key names a
    # location strictly below the root, whatever the platform's path rules.
    assert posixpath.normpath("/root/" + key) == "/root/" + key
    assert "\\" not in key and "\x00" not in key
    assert all(segment not in ("", ".", "..") for segment in key.split("/"))


# -- byte ranges and values --------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(0, 50),
    start=st.integers(-60, 60),
    length=st.none() | st.integers(0, 60),
)
def test_resolve_byte_range_matches_slicing(size: int, start: int, length: int | None) -> None:
    if start < 0:
        length = None
    value = bytes(range(size))
    lo, hi = resolve_byte_range(*normalize_byte_range("k", (start, length)), size)
    expected = value[start:] if length is None else value[start : start + length]
    assert 0 <= lo <= hi <= size
    assert value[lo:hi] == expected


def _slice(value: bytes, start: int, length: int | None) -> bytes:
    """The reference: what a range of ``value`` denotes (module docstring of byte_ranges)."""
    return value[start:] if length is None else value[start : start + length]


_WANTS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "gone"]),
        st.integers(-40, 90),
        st.none() | st.integers(0, 40),
    ).map(lambda t: Want(t[0], t[1], None if t[1] < 0 else t[2])),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(wants=_WANTS, max_gap=st.integers(0, 30))
def test_coalesced_ranges_cut_to_what_each_range_denotes(wants: list[Want], max_gap: int
                                                         ) -> None:
    values = {"a": bytes(range(80)), "b": bytes(range(100, 107))}
    requests, cuts = coalesce_byte_ranges(wants, max_gap)
    answers = [None if r.key not in values else _slice(values[r.key], r.start, r.length)
               for r in requests]
    got = cut_answers(answers, cuts)
    assert got == [None if w.key not in values else _slice(values[w.key], w.start, w.length)
                   for w in wants]
    assert len(requests) == len(set(requests)) <= len(set(wants))
    # merged spans of one key are more than max_gap apart, and each covers wanted bytes only
    # up to gaps of at most max_gap
    spans = sorted((r.key, r.start, r.start + (r.length or 0)) for r in requests
                   if r.length and r.start >= 0)
    for (k1, _, hi), (k2, lo, _) in zip(spans, spans[1:], strict=False):
        assert k1 != k2 or lo - hi > max_gap
    assert sum(r.length or 0 for r in requests if r.start >= 0) <= sum(
        (w.length or 0) + max_gap for w in set(wants) if w.start >= 0)


@pytest.mark.parametrize(
    ("byte_range", "expected"),
    [
        pytest.param(None, (0, None), id="none"),
        pytest.param((3, None), (3, None), id="open"),
        pytest.param([3, 4], (3, 4), id="list"),
        pytest.param((np.int32(-5), None), (-5, None), id="numpy-suffix"),
    ],
)
def test_normalize_byte_range(byte_range: Any, expected: tuple[int, int | None]) -> None:
    got = normalize_byte_range("k", byte_range)
    assert got == expected
    assert all(type(x) is int for x in got if x is not None)


@pytest.mark.parametrize(
    ("byte_range", "reason"),
    [
        pytest.param((-1, 2), "suffix request", id="negative-start-with-length"),
        pytest.param((0, -1), "must not be negative", id="negative-length"),
        pytest.param((True, None), "start must be an integer", id="bool-start"),
        pytest.param((0.5, None), "start must be an integer", id="float-start"),
        pytest.param((0, "1"), "length must be an integer", id="str-length"),
        pytest.param((1,), "(start, length) pair", id="one"),
        pytest.param(7, "(start, length) pair", id="int"),
    ],
)
def test_bad_byte_ranges(byte_range: Any, reason: str) -> None:
    with pytest.raises(InvalidKeyError) as excinfo:
        normalize_byte_range("some/key", byte_range)
    assert "'some/key'" in str(excinfo.value)
    assert reason in str(excinfo.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(b"abc", b"abc", id="bytes"),
        pytest.param(bytearray(b"abc"), b"abc", id="bytearray"),
        pytest.param(memoryview(b"abcdef")[::2], b"ace", id="strided"),
        pytest.param(np.array([[1, 2], [3, 4]], dtype="u1").T, b"\x01\x03\x02\x04", id="f-order"),
        pytest.param(np.array([1], dtype="<u4"), b"\x01\x00\x00\x00", id="u4"),
    ],
)
def test_as_byte_view(value: Any, expected: bytes) -> None:
    view = as_byte_view(value, "k")
    assert view.format == "B" and view.ndim == 1 and view.contiguous
    assert view.tobytes() == expected


def test_as_byte_view_does_not_copy_contiguous_bytes() -> None:
    value = bytearray(b"abc")
    view = as_byte_view(value, "k")
    value[0] = ord("z")
    assert view.tobytes() == b"zbc"


@pytest.mark.parametrize("value", ["str", 3, None], ids=["str", "int", "none"])
def test_as_byte_view_refuses_non_buffers(value: Any) -> None:
    with pytest.raises(TypeError, match="'the/key'"):
        as_byte_view(value, "the/key")
