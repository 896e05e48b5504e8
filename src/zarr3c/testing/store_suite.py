"""A reusable contract test suite for :class:`zarr3c.stores.Store` implementations.

It checks the v3 core specification's "Abstract store interface"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html) as zarr3c defines it: values
round-trip, byte ranges (including suffix and past-the-end ranges), listings (the
specification's ``list_prefix`` and ``list_dir`` examples), erasing, key and prefix
validation against a table of hostile keys, read-only refusal, pickling and concurrent use
from threads.  It is shipped with the package so that third-party stores can run it::

    import pytest
    from zarr3c.testing.store_suite import StoreContractTests

    class TestMyStore(StoreContractTests):
        def make_store(self, tmp_path):
            return MyStore(tmp_path / "data")

``make_store`` receives pytest's ``tmp_path`` (a fresh empty directory) and returns a new,
empty, writable store; alternatively override the ``store`` fixture itself.  Set
``case_sensitive = False`` for stores over case-insensitive back ends.  Requires pytest and
hypothesis.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarr3c.errors import InvalidKeyError, ReadOnlyError
from zarr3c.stores.base import Store

__all__ = ["HOSTILE_KEYS", "HOSTILE_PREFIXES", "StoreContractTests"]

#: Keys every store must refuse, with a readable id.
HOSTILE_KEYS: list[tuple[Any, str]] = [
    ("", "empty"),
    ("/a", "leading-slash"),
    ("a/", "trailing-slash"),
    ("a//b", "empty-segment"),
    ("a/../b", "dotdot-segment"),
    ("..", "dotdot"),
    (".", "dot"),
    ("a/./b", "dot-segment"),
    ("a\\b", "backslash"),
    ("..\\..\\x", "backslash-traversal"),
    ("a\x00b", "nul"),
    ("../../etc/passwd", "traversal"),
    ("/etc/passwd", "absolute"),
    (None, "none"),
    (1, "int"),
    (b"a", "bytes"),
]

#: Prefixes every store must refuse, with a readable id.
HOSTILE_PREFIXES: list[tuple[Any, str]] = [
    ("a", "no-trailing-slash"),
    ("/", "slash-only"),
    ("/a/", "leading-slash"),
    ("a//", "empty-segment"),
    ("../", "dotdot"),
    ("./", "dot"),
    ("a/../", "dotdot-segment"),
    ("a\\b/", "backslash"),
    ("a\x00/", "nul"),
    (None, "none"),
]

# Every operation that takes keys, as (call, readable id); each gets one hostile key.
_KEY_OPERATIONS: list[tuple[Callable[[Store, Any], Any], str]] = [
    (lambda s, k: s.get(k), "get"),
    (lambda s, k: s.set(k, b"x"), "set"),
    (lambda s, k: s.erase(k), "erase"),
    (lambda s, k: s.exists(k), "exists"),
    (lambda s, k: s.get_partial_values([("ok", (0, None)), (k, (0, 1))]), "get_partial_values"),
    (lambda s, k: s.get_many(["ok", k]), "get_many"),
    (lambda s, k: s.set_many([("ok", b"new"), (k, b"x")]), "set_many"),
    (lambda s, k: s.set_partial_values([(k, 0, b"x")]), "set_partial_values"),
    (lambda s, k: s.erase_values(["ok", k]), "erase_values"),
]

_PREFIX_OPERATIONS: list[tuple[Callable[[Store, Any], Any], str]] = [
    (lambda s, p: s.list_prefix(p), "list_prefix"),  # must raise before iteration
    (lambda s, p: s.list_dir(p), "list_dir"),
    (lambda s, p: s.erase_prefix(p), "erase_prefix"),
]

# (write, the key or prefix its error must name, readable id)
_WRITE_OPERATIONS: list[tuple[Callable[[Store], Any], str, str]] = [
    (lambda s: s.set("k", b"new"), "k", "set"),
    (lambda s: s.set("new/key", b"new"), "new/key", "set-new"),
    (lambda s: s.set_many([("k", b"new"), ("new/key", b"new")]), "k", "set_many"),
    (lambda s: s.set_partial_values([("k", 0, b"n")]), "k", "set_partial_values"),
    (lambda s: s.erase("k"), "k", "erase"),
    (lambda s: s.erase("k-missing"), "k-missing", "erase-missing"),
    (lambda s: s.erase_values(["k"]), "k", "erase_values"),
    (lambda s: s.erase_prefix("dir/"), "dir/", "erase_prefix"),
    (lambda s: s.erase_prefix(""), "", "erase_prefix-root"),
]

_VALUE = bytes(range(100))

_ERASE_KEYS = ["a.json", "a/b", "a/c/d", "a/c/e", "ab/x", "b/a/x"]

#: (range, expected slice of _VALUE, readable id)
_RANGES: list[tuple[Any, bytes, str]] = [
    ((0, None), _VALUE, "whole"),
    (None, _VALUE, "none-is-whole"),
    ((10, 5), _VALUE[10:15], "middle"),
    ((10, None), _VALUE[10:], "to-end"),
    ((0, 0), b"", "empty"),
    ((99, 1), _VALUE[99:], "last-byte"),
    ((-16, None), _VALUE[-16:], "suffix"),
    ((-100, None), _VALUE, "suffix-whole"),
    ((-1000, None), _VALUE, "suffix-longer-than-value"),
    ((95, 10), _VALUE[95:], "past-end"),
    ((100, 5), b"", "at-end"),
    ((200, None), b"", "beyond-end"),
    ((np.int64(3), np.int64(2)), _VALUE[3:5], "numpy-ints"),
]

_BAD_RANGES: list[tuple[Any, str]] = [
    ((-1, 5), "negative-start-with-length"),
    ((0, -1), "negative-length"),
    (("a", None), "str-start"),
    ((1.5, None), "float-start"),
    ((0, 2.0), "float-length"),
    ((0,), "one-element"),
    ((0, 1, 2), "three-elements"),
    (5, "int"),
]


class StoreContractTests:
    """Contract tests for a writable :class:`Store`; subclass and implement ``make_store``."""

    #: Whether keys differing only in case are distinct (the spec says they are).
    case_sensitive: ClassVar[bool] = True

    def make_store(self, tmp_path: Path) -> Store:
        """A new, empty, writable store (``tmp_path`` is a fresh empty directory)."""
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = self.make_store(tmp_path)
        try:
            yield s
        finally:
            s.close()

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def contents(store: Store) -> dict[str, bytes]:
        return {key: bytes(store.get(key)) for key in store.list()}  # type: ignore[arg-type]

    @staticmethod
    def fill(store: Store, keys: list[str]) -> None:
        for key in keys:
            store.set(key, key.encode())

    # -- flags and lifecycle ------------------------------------------------------------------

    def test_capability_flags(self, store: Store) -> None:
        assert store.supports_writes is True
        assert store.supports_listing is True
        assert isinstance(store.supports_partial_writes, bool)
        assert store.read_only is False

    def test_new_store_is_empty(self, store: Store) -> None:
        assert list(store.list()) == []
        assert store.list_dir("") == ([], [])
        assert store.get("zarr.json") is None

    def test_context_manager_returns_store(self, store: Store) -> None:
        with store as entered:
            assert entered is store
            entered.set("k", b"v")
        assert bytes(store.get("k")) == b"v"  # type: ignore[arg-type]

    def test_equality(self, store: Store) -> None:
        assert store.with_read_only(True) != store
        assert store.with_read_only(True) == store.with_read_only(True)
        assert store.with_read_only(False) == store

    def test_pickle_round_trip_keeps_contents(self, store: Store) -> None:
        self.fill(store, ["zarr.json", "a/b", "a/c/d"])
        clone = pickle.loads(pickle.dumps(store))
        assert type(clone) is type(store)
        assert clone.read_only == store.read_only
        assert self.contents(clone) == self.contents(store)
        ro = pickle.loads(pickle.dumps(store.with_read_only(True)))
        assert ro.read_only is True

    # -- get / set ----------------------------------------------------------------------------

    def test_get_missing_is_none(self, store: Store) -> None:
        store.set("a/b", b"x")
        assert store.get("missing") is None
        assert store.get("a/missing") is None
        assert store.get("a") is None  # a prefix is not a key
        assert store.get("a/b/c") is None  # below a key is nothing

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            pytest.param(b"", b"", id="empty"),
            pytest.param(b"\x00", b"\x00", id="nul-byte"),
            pytest.param(_VALUE * 50, _VALUE * 50, id="bytes"),
            pytest.param(bytearray(b"abc"), b"abc", id="bytearray"),
            pytest.param(memoryview(b"abcdef")[1:4], b"bcd", id="memoryview-slice"),
            pytest.param(memoryview(b"abcdef")[::2], b"ace", id="memoryview-strided"),
            pytest.param(np.arange(3, dtype="<u2"), b"\x00\x00\x01\x00\x02\x00", id="numpy-u2"),
            pytest.param(
                np.arange(4, dtype="u1").reshape(2, 2).T, b"\x00\x02\x01\x03", id="numpy-transposed"
            ),
        ],
    )
    def test_set_get_round_trip(self, store: Store, value: Any, expected: bytes) -> None:
        store.set("group/array/c/0", value)
        got = store.get("group/array/c/0")
        assert got is not None
        assert bytes(got) == expected

    def test_set_copies_the_value(self, store: Store) -> None:
        value = bytearray(b"abc")
        store.set("k", value)
        value[0] = ord("z")
        assert bytes(store.get("k")) == b"abc"  # type: ignore[arg-type]

    def test_get_result_does_not_alias_the_store(self, store: Store) -> None:
        store.set("k", b"abc")
        got = store.get("k")
        view = memoryview(got)  # type: ignore[arg-type]
        if not view.readonly:
            view[0] = ord("z")
        assert bytes(store.get("k")) == b"abc"  # type: ignore[arg-type]

    @pytest.mark.parametrize("sizes", [[0], [5], [3, 0, 7], [1] * 1500, [100_000, 1, 70_000]])
    def test_set_parts_stores_their_concatenation(self, store: Store, sizes: list[int]) -> None:
        # What a sharded write hands over: a shard as its encoded inner chunks and index.
        rng = np.random.default_rng(len(sizes))
        parts: list[Any] = [rng.integers(0, 256, n, dtype=np.uint8) for n in sizes]
        parts[0] = bytes(parts[0])  # any bytes-like objects
        store.set("k", b"an older, longer value than some of the new ones")
        store.set_parts("k", parts)
        assert bytes(store.get("k")) == b"".join(bytes(p) for p in parts)  # type: ignore[arg-type]
        assert list(store.list()) == ["k"]

    def test_set_parts_refuses_non_bytes(self, store: Store) -> None:
        with pytest.raises(TypeError, match="'k'"):
            store.set_parts("k", [b"ab", "cd"])
        assert store.get("k") is None

    def test_set_many_stores_every_value(self, store: Store) -> None:
        # What a write of an array hands over to a store with concurrent batches: many
        # encoded chunks at once, any bytes-like values.
        values: dict[str, Any] = {f"a/c/{i}": bytes([i]) * (i * 37 % 500) for i in range(100)}
        values["a/c/1"] = np.arange(5, dtype="<u2")
        values["a/c/2"] = memoryview(b"view")
        values["a/c/3"] = bytearray(b"array")
        store.set("a/c/4", b"an older value")
        store.set_many(values.items())
        expected = {k: bytes(memoryview(v).cast("B")) for k, v in values.items()}
        assert self.contents(store) == expected
        store.set_many([])  # an empty batch writes nothing
        store.set_many(iter([("a/c/5", b"first"), ("a/c/5", b"last")]))  # the last one wins
        assert bytes(store.get("a/c/5")) == b"last"  # type: ignore[arg-type]

    @pytest.mark.parametrize("item", [("k",), ("k", b"v", 1), None])
    def test_set_many_refuses_malformed_items(self, store: Store, item: Any) -> None:
        with pytest.raises(InvalidKeyError):
            store.set_many([("ok", b"x"), item])
        assert self.contents(store) == {}

    def test_set_many_refuses_non_bytes_before_writing(self, store: Store) -> None:
        with pytest.raises(TypeError, match="'bad'"):
            store.set_many([("ok", b"x"), ("bad", "text"), ("later", b"y")])
        assert self.contents(store) == {}

    def test_set_overwrites(self, store: Store) -> None:
        store.set("k", b"first value, long")
        store.set("k", b"second")
        assert bytes(store.get("k")) == b"second"  # type: ignore[arg-type]
        assert list(store.list()) == ["k"]

    def test_keys_are_case_sensitive(self, store: Store) -> None:
        if not self.case_sensitive:
            pytest.skip("the store's back end is case-insensitive")
        store.set("foo", b"a")
        store.set("FOO", b"b")
        assert bytes(store.get("foo")) == b"a"  # type: ignore[arg-type]
        assert bytes(store.get("FOO")) == b"b"  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "key",
        ["my group with spaces/zarr.json", "données/ü/€.json", "a/.zattrs", "...", "a/..b/c.."],
    )
    def test_unusual_but_valid_keys(self, store: Store, key: str) -> None:
        store.set(key, b"v")
        assert bytes(store.get(key)) == b"v"  # type: ignore[arg-type]
        assert list(store.list()) == [key]
        assert store.exists(key)

    @pytest.mark.parametrize(
        "value", ["text", 1, None, 1.5, ["a"]], ids=["str", "int", "none", "float", "list"]
    )
    def test_set_refuses_non_bytes(self, store: Store, value: Any) -> None:
        with pytest.raises(TypeError, match="'k'"):
            store.set("k", value)
        assert store.get("k") is None

    # -- key and prefix validation ------------------------------------------------------------

    @pytest.mark.parametrize(
        "operation", [op for op, _ in _KEY_OPERATIONS], ids=[i for _, i in _KEY_OPERATIONS]
    )
    @pytest.mark.parametrize("key", [k for k, _ in HOSTILE_KEYS], ids=[i for _, i in HOSTILE_KEYS])
    def test_hostile_keys_are_refused(
        self, store: Store, key: Any, operation: Callable[[Store, Any], Any]
    ) -> None:
        store.set("ok", b"ok")
        with pytest.raises(InvalidKeyError) as excinfo:
            operation(store, key)
        assert repr(key) in str(excinfo.value)
        # nothing happened: neither a write nor an erase of the valid key in the batch
        assert self.contents(store) == {"ok": b"ok"}

    @pytest.mark.parametrize(
        "operation",
        [op for op, _ in _PREFIX_OPERATIONS],
        ids=[i for _, i in _PREFIX_OPERATIONS],
    )
    @pytest.mark.parametrize(
        "prefix", [p for p, _ in HOSTILE_PREFIXES], ids=[i for _, i in HOSTILE_PREFIXES]
    )
    def test_hostile_prefixes_are_refused(
        self, store: Store, prefix: Any, operation: Callable[[Store, Any], Any]
    ) -> None:
        store.set("a/b", b"x")
        with pytest.raises(InvalidKeyError) as excinfo:
            operation(store, prefix)
        assert repr(prefix) in str(excinfo.value)
        assert self.contents(store) == {"a/b": b"x"}

    # -- read-only ----------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("operation", "named"),
        [pytest.param(op, named, id=i) for op, named, i in _WRITE_OPERATIONS],
    )
    def test_read_only_refuses_writes(
        self, store: Store, operation: Callable[[Store], Any], named: str
    ) -> None:
        store.set("k", b"old")
        store.set("dir/x", b"x")
        ro = store.with_read_only(True)
        assert ro.read_only is True
        with pytest.raises(ReadOnlyError) as excinfo:
            operation(ro)
        assert repr(named) in str(excinfo.value)
        assert self.contents(store) == {"k": b"old", "dir/x": b"x"}

    def test_read_only_store_reads_the_same_data(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/c/d"])
        ro = store.with_read_only(True)
        assert bytes(ro.get("a/b")) == b"a/b"  # type: ignore[arg-type]
        assert sorted(ro.list()) == ["a/b", "a/c/d"]
        assert ro.list_dir("a/") == (["a/b"], ["a/c/"])
        assert ro.exists("a/c/d")
        store.set("later", b"1")  # the original stays writable and shares the data
        assert ro.exists("later")
        rw = ro.with_read_only(False)
        rw.set("again", b"2")
        assert store.exists("again")

    # -- partial reads ------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("byte_range", "expected"),
        [(r, e) for r, e, _ in _RANGES],
        ids=[i for _, _, i in _RANGES],
    )
    def test_get_partial_values_range(self, store: Store, byte_range: Any, expected: bytes) -> None:
        store.set("shard", _VALUE)
        (got,) = store.get_partial_values([("shard", byte_range)])
        assert got is not None
        assert bytes(got) == expected

    def test_get_partial_values_order_duplicates_and_missing(self, store: Store) -> None:
        store.set("a", b"0123456789")
        store.set("b/c", b"abcdefghij")
        got = store.get_partial_values(
            [
                ("b/c", (2, 3)),
                ("missing", (0, None)),
                ("a", (-2, None)),
                ("b/c", (0, 1)),
                ("a", (0, None)),
                ("missing", (-4, None)),
            ]
        )
        assert [None if g is None else bytes(g) for g in got] == [
            b"cde",
            None,
            b"89",
            b"a",
            b"0123456789",
            None,
        ]

    def test_get_partial_values_str_subclass_keys(self, store: Store) -> None:
        # keys from numpy or an enum are str subclasses: repeated, each still gets its range
        class Key(str):
            pass

        store.set("a", b"0123456789")
        got = store.get_partial_values([(Key("a"), (0, 2)), (Key("a"), (5, 2)), ("a", (9, 1))])
        assert [None if g is None else bytes(g) for g in got] == [b"01", b"56", b"9"]

    def test_get_partial_values_empty_request(self, store: Store) -> None:
        assert store.get_partial_values([]) == []

    def test_get_partial_values_many_keys(self, store: Store) -> None:
        keys = [f"c/{i}/{j}" for i in range(8) for j in range(8)]
        for k in keys:
            store.set(k, k.encode() * 3)
        request = [(k, (1, 4)) for k in keys] + [("c/missing", (0, None))]
        got = store.get_partial_values(request)
        expected = [(k.encode() * 3)[1:5] for k in keys] + [None]
        assert [None if g is None else bytes(g) for g in got] == expected

    @pytest.mark.parametrize(
        "byte_range", [r for r, _ in _BAD_RANGES], ids=[i for _, i in _BAD_RANGES]
    )
    def test_get_partial_values_bad_range(self, store: Store, byte_range: Any) -> None:
        store.set("k", b"abc")
        with pytest.raises(InvalidKeyError, match="'k'"):
            store.get_partial_values([("k", byte_range)])

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        size=st.integers(0, 300),
        start=st.integers(-400, 400),
        length=st.none() | st.integers(0, 400),
    )
    def test_get_partial_values_matches_slicing(
        self, store: Store, size: int, start: int, length: int | None
    ) -> None:
        if start < 0 and length is not None:
            length = None  # a negative start is a suffix request
        value = bytes(i % 251 for i in range(size))
        store.set("v", value)
        (got,) = store.get_partial_values([("v", (start, length))])
        if start < 0:
            expected = value[start:]
        else:
            expected = value[start:] if length is None else value[start : start + length]
        assert got is not None
        assert bytes(got) == expected

    # -- get_many -----------------------------------------------------------------------------

    @pytest.mark.parametrize("n", [0, 3, 64])
    def test_get_many_equals_get(self, store: Store, n: int) -> None:
        keys = [f"g/{i}" for i in range(n)]
        for i, k in enumerate(keys):
            if i % 5 != 4:  # leave some missing
                store.set(k, bytes([i % 256]) * i)
        request = keys + keys[:2]  # duplicates too
        got = store.get_many(request)
        expected = [store.get(k) for k in request]
        assert [None if g is None else bytes(g) for g in got] == [
            None if e is None else bytes(e) for e in expected
        ]

    # -- partial writes -----------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("initial", "writes", "expected"),
        [
            pytest.param(b"0123456789", [(2, b"ab")], b"01ab456789", id="patch-middle"),
            pytest.param(b"0123456789", [(8, b"abcd")], b"01234567abcd", id="extend"),
            pytest.param(b"0123", [(6, b"x")], b"0123\x00\x00x", id="gap-zero-filled"),
            pytest.param(None, [(0, b"new")], b"new", id="missing-key"),
            pytest.param(None, [(2, b"x")], b"\x00\x00x", id="missing-key-offset"),
            pytest.param(
                b"0123456789", [(0, b"a"), (5, b"b"), (9, b"c")], b"a1234b678c", id="several"
            ),
            pytest.param(b"0123", [(1, b"")], b"0123", id="empty-value"),
        ],
    )
    def test_set_partial_values(
        self,
        store: Store,
        initial: bytes | None,
        writes: list[tuple[int, bytes]],
        expected: bytes,
    ) -> None:
        if initial is not None:
            store.set("k", initial)
        store.set("other", b"untouched")
        store.set_partial_values([("k", start, value) for start, value in writes])
        assert bytes(store.get("k")) == expected  # type: ignore[arg-type]
        assert bytes(store.get("other")) == b"untouched"  # type: ignore[arg-type]

    def test_set_partial_values_several_keys(self, store: Store) -> None:
        store.set("a", b"aaaa")
        store.set_partial_values([("a", 1, b"x"), ("b/c", 0, b"yy"), ("a", 3, b"z")])
        assert bytes(store.get("a")) == b"axaz"  # type: ignore[arg-type]
        assert bytes(store.get("b/c")) == b"yy"  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "item",
        [("k", -1, b"x"), ("k", "0", b"x"), ("k", 0), "k"],
        ids=["negative-start", "str-start", "pair", "str"],
    )
    def test_set_partial_values_bad_input(self, store: Store, item: Any) -> None:
        store.set("k", b"abc")
        with pytest.raises(InvalidKeyError, match="'k"):
            store.set_partial_values([item])
        assert bytes(store.get("k")) == b"abc"  # type: ignore[arg-type]

    # -- erase --------------------------------------------------------------------------------

    def test_erase(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/c", "d"])
        store.erase("a/b")
        assert store.get("a/b") is None
        assert not store.exists("a/b")
        assert sorted(store.list()) == ["a/c", "d"]
        store.erase("a/b")  # missing: not an error
        store.erase("never/was")
        assert sorted(store.list()) == ["a/c", "d"]

    def test_erase_values(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/c", "d"])
        store.erase_values(["a/b", "missing", "d"])
        assert sorted(store.list()) == ["a/c"]
        store.erase_values([])
        assert sorted(store.list()) == ["a/c"]

    @pytest.mark.parametrize(
        ("prefix", "remaining"),
        [
            pytest.param("a/", ["a.json", "ab/x", "b/a/x"], id="prefix"),
            pytest.param("a/c/", ["a.json", "a/b", "ab/x", "b/a/x"], id="nested"),
            pytest.param("ab/", ["a.json", "a/b", "a/c/d", "a/c/e", "b/a/x"], id="sibling-name"),
            pytest.param("zz/", [*_ERASE_KEYS], id="missing"),
            pytest.param("a/b/", [*_ERASE_KEYS], id="below-a-key"),
            pytest.param("", [], id="root"),
        ],
    )
    def test_erase_prefix(self, store: Store, prefix: str, remaining: list[str]) -> None:
        self.fill(store, _ERASE_KEYS)
        store.erase_prefix(prefix)
        assert sorted(store.list()) == remaining
        for key in remaining:
            assert store.exists(key)
        for key in set(_ERASE_KEYS) - set(remaining):
            assert store.get(key) is None

    # -- listing ------------------------------------------------------------------------------

    def test_list(self, store: Store) -> None:
        keys = ["zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "b c/d"]
        self.fill(store, keys)
        assert sorted(store.list()) == sorted(keys)

    def test_list_prefix_spec_example(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/c/d", "e/f/g"])
        assert sorted(store.list_prefix("a/")) == ["a/b", "a/c/d"]
        assert sorted(store.list_prefix("")) == ["a/b", "a/c/d", "e/f/g"]
        assert sorted(store.list_prefix("a/c/")) == ["a/c/d"]
        assert list(store.list_prefix("b/")) == []
        assert list(store.list_prefix("a/b/")) == []  # below a key

    def test_list_few_is_every_key_or_none(self, store: Store) -> None:
        keys = ["zarr.json", "a/zarr.json", "a/c/0", "b/x"]
        self.fill(store, keys)
        for prefix in ("", "a/", "b/", "none/"):
            below = sorted(k for k in keys if k.startswith(prefix))
            few = store.list_few(prefix, len(below) + 1)
            assert few is None or few == below, (prefix, few)
            assert store.list_few(prefix, len(below)) is None or not below, prefix
        with pytest.raises(InvalidKeyError):
            store.list_few("/a", 10)

    def test_list_dir_spec_example(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/c", "a/d/e", "a/f/g"])
        assert store.list_dir("a/") == (["a/b", "a/c"], ["a/d/", "a/f/"])
        assert store.list_dir("b/") == ([], [])
        assert store.list_dir("") == ([], ["a/"])
        assert store.list_dir("a/d/") == (["a/d/e"], [])

    def test_list_dir_is_sorted_and_complete(self, store: Store) -> None:
        keys = ["r/z", "r/b", "r/a", "r/m/x", "r/c/y/z", "r/0", "zarr.json"]
        self.fill(store, keys)
        assert store.list_dir("r/") == (["r/0", "r/a", "r/b", "r/z"], ["r/c/", "r/m/"])
        assert store.list_dir("") == (["zarr.json"], ["r/"])

    def test_list_dir_forgets_prefixes_without_keys(self, store: Store) -> None:
        self.fill(store, ["a/b", "a/d/e/f"])
        store.erase("a/d/e/f")
        assert store.list_dir("a/") == (["a/b"], [])
        assert store.list_dir("") == ([], ["a/"])
        store.erase("a/b")
        assert store.list_dir("") == ([], [])

    def test_listing_while_erasing(self, store: Store) -> None:
        self.fill(store, [f"x/{i}" for i in range(10)])
        for key in store.list_prefix("x/"):
            store.erase(key)
        assert list(store.list()) == []

    def test_exists(self, store: Store) -> None:
        store.set("a/b", b"")
        assert store.exists("a/b")  # an empty value is a value
        assert not store.exists("a")
        assert not store.exists("a/b/c")
        assert not store.exists("b")

    def test_getsize(self, store: Store) -> None:
        store.set("a/b", b"12345")
        store.set("a/e", b"")
        assert store.getsize("a/b") == 5
        assert store.getsize("a/e") == 0  # an empty value is a value
        store.set("a/b", b"123")
        assert store.getsize("a/b") == 3  # the newest value's size
        store.erase("a/e")
        assert store.getsize("a/e") is None
        assert store.getsize("a") is None  # a prefix is not a value
        assert store.getsize("missing") is None
        with pytest.raises(InvalidKeyError):
            store.getsize("a/../b")

    # -- a model-based property test ----------------------------------------------------------

    @settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        operations=st.lists(
            st.tuples(
                st.sampled_from(["set", "erase", "erase_prefix", "set_partial"]),
                # directory names and leaf names never coincide, so no key is also a prefix
                st.lists(st.sampled_from(["a", "b", "ü x"]), max_size=2),
                st.sampled_from(["k", "zarr.json", "c 1"]),
                st.binary(max_size=20),
            ),
            max_size=25,
        )
    )
    def test_behaves_like_a_dict(self, store: Store, operations: list[Any]) -> None:
        store.erase_prefix("")
        model: dict[str, bytes] = {}
        for op, dirs, leaf, data in operations:
            key = "/".join([*dirs, leaf])
            if op == "set":
                store.set(key, data)
                model[key] = data
            elif op == "erase":
                store.erase(key)
                model.pop(key, None)
            elif op == "set_partial":
                store.set_partial_values([(key, 3, data)])
                old = bytearray(model.get(key, b""))
                old.extend(bytes(max(0, 3 + len(data) - len(old))))
                old[3 : 3 + len(data)] = data
                model[key] = bytes(old)
            else:
                prefix = "".join(d + "/" for d in dirs)
                store.erase_prefix(prefix)
                model = {k: v for k, v in model.items() if not k.startswith(prefix)}
        assert self.contents(store) == model
        for prefix in ["", "a/", "b/", "a/b/", "ü x/"]:
            rest = [k[len(prefix) :] for k in model if k.startswith(prefix)]
            expected_keys = sorted(prefix + r for r in rest if "/" not in r)
            expected_prefixes = sorted({prefix + r.split("/")[0] + "/" for r in rest if "/" in r})
            assert store.list_dir(prefix) == (expected_keys, expected_prefixes)
            assert sorted(store.list_prefix(prefix)) == sorted(
                k for k in model if k.startswith(prefix)
            )

    # -- threads ------------------------------------------------------------------------------

    def test_concurrent_set_and_get(self, store: Store) -> None:
        n_threads, n_rounds = 6, 30
        # distinct bytes and lengths per writer, so a torn or mixed value is detectable
        candidates = {bytes([65 + t]) * (2048 + 512 * t) for t in range(n_threads)}
        store.set("shared", next(iter(candidates)))
        barrier = threading.Barrier(n_threads, timeout=60)

        def work(t: int) -> None:
            barrier.wait()
            mine = bytes([65 + t]) * (2048 + 512 * t)
            for r in range(n_rounds):
                store.set(f"t{t}/{r}", mine[: r + 1])
                store.set("shared", mine)
                got = store.get("shared")
                assert got is not None and bytes(got) in candidates
                own = store.get(f"t{t}/{r}")
                assert own is not None and bytes(own) == mine[: r + 1]
                (part,) = store.get_partial_values([("shared", (-4, None))])
                assert part is not None and len(set(bytes(part))) == 1
                many = store.get_many(["shared", f"t{t}/{r}"])
                assert many[0] is not None and bytes(many[0]) in candidates

        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            futures = [pool.submit(work, t) for t in range(n_threads)]
            for future in futures:
                future.result()  # re-raises a worker's failure here
        assert bytes(store.get("shared")) in candidates  # type: ignore[arg-type]
        assert len(list(store.list())) == n_threads * n_rounds + 1
