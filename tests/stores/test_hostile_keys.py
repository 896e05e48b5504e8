"""Keys and archives an attacker can make (issue 35, point 6): a legal key of 1,500 segments
in a LocalStore, keys holding a lone surrogate in every store, and a zip whose central
directory points one entry's name at another entry's local header."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

import zarr3c
from zarr3c.errors import InvalidKeyError, StoreError


def test_a_key_of_1500_segments(tmp_path: Path) -> None:
    store = zarr3c.LocalStore(str(tmp_path))
    deep = "a/" * 1500 + "b"
    store.set(deep, b"deep")
    store.set("a/z", b"z")
    assert store.get(deep) == b"deep"
    assert list(store.list()) == [deep, "a/z"]
    assert list(store.list_prefix("a/")) == [deep, "a/z"]
    store.erase(deep)  # (and its empty directories: nothing left for the cleanup to recurse)
    assert list(store.list()) == ["a/z"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def _stores(tmp_path: Path) -> list[zarr3c.Store]:
    return [zarr3c.LocalStore(str(tmp_path / "local")), zarr3c.MemoryStore(),
            zarr3c.ZipStore(str(tmp_path / "a.zip"), mode="w")]


@pytest.mark.parametrize("call", [
    lambda s: s.get("a/\ud800"),
    lambda s: s.set("a/\ud800", b"x"),
    lambda s: s.erase("a/\ud800"),
    lambda s: s.exists("\ud800"),
    lambda s: s.getsize("\ud800/c"),
    lambda s: list(s.list_prefix("\ud800/")),
    lambda s: list(s.list_dir("\ud800/")),
    lambda s: s.get_partial_values([("\ud800", (0, 1))]),
    lambda s: s.get_many(["\ud800"]),
])
def test_a_lone_surrogate_is_an_invalid_key(tmp_path: Path, call) -> None:  # type: ignore[no-untyped-def]
    for store in _stores(tmp_path):
        with pytest.raises(InvalidKeyError, match="surrogate"):
            call(store)


def test_a_central_directory_pointing_at_another_entry(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("c/0", b"zero" * 10)
        zf.writestr("c/1", b"one!" * 10)
    data = bytearray(path.read_bytes())
    # Point the central directory entry of c/1 at c/0's local header (offset 0).
    entry = data.rindex(b"PK\x01\x02")  # c/1's entry, the last one
    assert data[entry + 46:entry + 49] == b"c/1"
    struct.pack_into("<L", data, entry + 42, 0)
    path.write_bytes(bytes(data))
    store = zarr3c.ZipStore(str(path), mode="r")
    assert store.get_partial_values([("c/0", (0, 4))]) == [b"zero"]
    with pytest.raises(StoreError, match="c/1"):
        store.get_partial_values([("c/1", (0, 4))])
    with pytest.raises(StoreError, match="c/1"):
        store.get("c/1")
