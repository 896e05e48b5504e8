"""MemoryStore: the store contract, plus dict sharing, pickling and make_store's in-memory and
URL handling."""

from __future__ import annotations

import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from zarr3c.errors import MissingDependencyError, ReadOnlyError, StoreError
from zarr3c.stores import LocalStore, MemoryStore, Store, make_store
from zarr3c.testing.store_suite import StoreContractTests


class TestMemoryStoreContract(StoreContractTests):
    def make_store(self, tmp_path: Path) -> Store:
        return MemoryStore()


# -- the dict ----------------------------------------------------------------------------------


def test_store_dict_is_shared_not_copied() -> None:
    d: dict[str, Any] = {}
    store = MemoryStore(d)
    store.set("a/b", bytearray(b"xy"))
    assert d == {"a/b": b"xy"}
    assert type(d["a/b"]) is bytes  # stored as an immutable copy
    d["c"] = b"from the caller"
    assert store.get("c") == b"from the caller"
    assert store.store_dict is d


def test_read_only_twin_shares_the_dict() -> None:
    store = MemoryStore()
    ro = store.with_read_only(True)
    store.set("k", b"v")
    assert ro.get("k") == b"v"
    with pytest.raises(ReadOnlyError, match="'k'"):
        ro.set("k", b"w")


def test_foreign_buffers_in_the_dict_are_read_as_bytes_copies() -> None:
    d: dict[str, Any] = {"k": bytearray(b"abc")}
    store = MemoryStore(d)
    got = store.get("k")
    assert got == b"abc" and type(got) is bytes
    d["k"][0] = ord("z")
    assert got == b"abc"


def test_non_bytes_value_in_the_dict_is_a_store_error() -> None:
    store = MemoryStore({"bad/key": "a str"})
    with pytest.raises(StoreError, match="'bad/key'"):
        store.get("bad/key")


def test_a_key_may_also_be_a_prefix() -> None:
    # The abstract interface allows "a" and "a/b" together (a file system cannot).
    store = MemoryStore()
    store.set("a", b"1")
    store.set("a/b", b"2")
    assert store.list_dir("") == (["a"], ["a/"])
    store.erase_prefix("a/")
    assert list(store.list()) == ["a"]


def test_get_returns_the_stored_bytes_without_copying() -> None:
    store = MemoryStore()
    store.set("k", b"value")
    assert store.get("k") is store.get("k")
    (part,) = store.get_partial_values([("k", (1, 2))])
    assert isinstance(part, memoryview) and part.readonly and bytes(part) == b"al"


@pytest.mark.parametrize("bad", [[("k", b"v")], "abc", 1], ids=["list", "str", "int"])
def test_constructor_needs_a_dict(bad: Any) -> None:
    with pytest.raises(TypeError, match=type(bad).__name__):
        MemoryStore(bad)


# -- identity and pickling ---------------------------------------------------------------------


def test_equality_is_identity_of_the_dict() -> None:
    d: dict[str, Any] = {"k": b"v"}
    assert MemoryStore(d) == MemoryStore(d)
    assert hash(MemoryStore(d)) == hash(MemoryStore(d))
    assert MemoryStore(d) != MemoryStore(dict(d))  # same contents, other data
    assert MemoryStore(d) != MemoryStore(d, read_only=True)
    assert MemoryStore(d) != LocalStore("somewhere")


def test_pickle_copies_the_contents() -> None:
    store = MemoryStore(read_only=True)
    store.store_dict["a/b"] = b"xyz"
    clone = pickle.loads(pickle.dumps(store))
    assert clone.read_only is True
    assert clone.store_dict == {"a/b": b"xyz"}
    assert clone.store_dict is not store.store_dict
    clone.with_read_only(False).set("new", b"1")  # the clone has a working lock
    assert "new" not in store.store_dict


# -- thread safety -----------------------------------------------------------------------------


def test_concurrent_partial_writes_to_one_key_are_not_lost() -> None:
    store = MemoryStore()
    store.set("k", bytes(64))
    n = 8

    def work(t: int) -> None:
        for r in range(50):
            store.set_partial_values([("k", t * 8 + (r % 8), b"\x01")])

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get("k") == b"\x01" * 64


# -- make_store --------------------------------------------------------------------------------


def test_make_store_memory_url_and_none_make_new_stores() -> None:
    a = make_store("memory://")
    b = make_store("memory://")
    c = make_store(None)
    assert isinstance(a, MemoryStore) and isinstance(b, MemoryStore)
    assert isinstance(c, MemoryStore)
    assert a != b and a.store_dict is not b.store_dict
    assert make_store("memory://", read_only=True).read_only is True


def test_make_store_dict_wraps_that_dict() -> None:
    d: dict[str, Any] = {"zarr.json": b"{}"}
    store = make_store(d)
    assert isinstance(store, MemoryStore) and store.store_dict is d
    assert make_store(d, read_only=True).read_only is True


def test_make_store_returns_a_store_itself() -> None:
    store = MemoryStore()
    assert make_store(store) is store
    ro = make_store(store, read_only=True)
    assert ro.read_only is True and ro.store_dict is store.store_dict  # type: ignore[attr-defined]
    already = store.with_read_only(True)
    assert make_store(already, read_only=True) is already
    # read_only=False never makes a read-only store writable
    assert make_store(already) is already and already.read_only


@pytest.mark.parametrize(
    "url",
    [
        "s3://bucket/data.zarr",
        "gs://bucket/data.zarr",
        "gcs://bucket/data.zarr",
        "http://example.com/data.zarr",
        "https://example.com/data.zarr",
        "S3://Bucket/x",
        "abfs://container/x",
    ],
    ids=["s3", "gs", "gcs", "http", "https", "upper-case", "abfs"],
)
def test_make_store_remote_urls_need_fsspec(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "obstore", None)  # ObjectStore's backend too
    with pytest.raises(MissingDependencyError, match="fsspec") as excinfo:
        make_store(url)
    assert repr(url) in str(excinfo.value)


@pytest.mark.parametrize(
    "store_like",
    [None, {}, "memory://", MemoryStore()],
    ids=["none", "dict", "memory-url", "store"],
)
def test_make_store_refuses_unused_storage_options(store_like: Any) -> None:
    with pytest.raises(StoreError, match="storage_options"):
        make_store(store_like, storage_options={"anon": True})
    make_store(store_like, storage_options={})  # empty options are harmless


@pytest.mark.parametrize(
    "store_like", [42, b"bytes/path", [("k", b"v")], 1.5], ids=["int", "bytes", "list", "float"]
)
def test_make_store_refuses_other_types(store_like: Any) -> None:
    with pytest.raises(TypeError, match=type(store_like).__name__):
        make_store(store_like)


def test_make_store_windows_drive_letter_is_a_path_not_a_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "C:" has a one-letter "scheme" and no "//": a path, wherever it runs.
    monkeypatch.chdir(tmp_path)
    store = make_store("C:/data.zarr")
    assert isinstance(store, LocalStore)
    assert store.root.name == "data.zarr" and store.root.is_absolute()


@pytest.mark.parametrize(("text", "expected"), [
    ("s3://bucket/x.zarr", True), ("https://host/x.zarr", True), ("memory://", True),
    ("File:///tmp/x", True), ("simplecache::s3://bucket/x.zarr", True),
    ("zip://a.zarr::file:///tmp/x.zip", True), ("C:\\data\\x.zarr", False),
    ("C://data", False), ("data/x.zarr", False), ("/abs/x.zarr", False), ("", False),
    ("a::b", False), (Path("s3://x"), False), (None, False),
])
def test_is_url(text: Any, expected: bool) -> None:
    from zarr3c.stores import is_url

    assert is_url(text) is expected
