"""Groups: creation, members, nested paths, names, deletion."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import ContainsArrayError, NodeNameError, NodeNotFoundError, ReadOnlyError


def test_nested_hierarchy(store: zarr3c.Store) -> None:
    root = zarr3c.create_group(store, attributes={"title": "t"})
    sub = root.create_group("a")
    arr = sub.create_array("x", shape=(3,), dtype="int8")
    arr[:] = [1, 2, 3]
    root.create_array("b/c/y", shape=(2,), dtype="float32")  # parents created
    assert "a" in root and "a/x" in root and "b/c" in root and "zz" not in root
    assert isinstance(root["b"], zarr3c.Group)
    np.testing.assert_array_equal(root["a/x"][...], [1, 2, 3])
    assert [n for n, _ in root.members()] == ["a", "b"]
    assert [n for n, _ in root.members(max_depth=None)] == ["a", "a/x", "b", "b/c", "b/c/y"]
    assert root.group_keys() == ["a", "b"] and sub.array_keys() == ["x"]
    assert zarr3c.open_group(store).attrs["title"] == "t"
    tree = root.tree()
    assert "x (3,) int8" in tree and "y (2,) float32" in tree


def test_delete_member(store: zarr3c.Store) -> None:
    g = zarr3c.create_group(store, "g")
    a = g.create_array("x", shape=(4,), dtype="int8", chunks=(2,))
    a[:] = 1
    g.create_array("xy", shape=(4,), dtype="int8")
    del g["x"]
    assert "x" not in g and "xy" in g
    assert not any(k.startswith("g/x/") for k in store.list())
    with pytest.raises(KeyError):
        del g["x"]


def test_missing_member_is_key_error(store: zarr3c.Store) -> None:
    g = zarr3c.create_group(store)
    with pytest.raises(KeyError) as info:
        g["nope"]
    assert isinstance(info.value, NodeNotFoundError)
    assert g.get("nope") is None


@pytest.mark.parametrize("name", ["", ".", "..", "__x", "a/../b", "a//b", "a\\b"])
def test_bad_names(store: zarr3c.Store, name: str) -> None:
    g = zarr3c.create_group(store)
    with pytest.raises(NodeNameError):
        g.create_group(name)


def test_no_node_below_array(store: zarr3c.Store) -> None:
    zarr3c.create_array(store, "arr", shape=(2,), dtype="int8")
    with pytest.raises(ContainsArrayError):
        zarr3c.create_group(store, "arr/sub")


def test_open_group_modes(store: zarr3c.Store) -> None:
    with pytest.raises(NodeNotFoundError):
        zarr3c.open_group(store, "x", mode="r")
    g = zarr3c.open_group(store, "x", mode="a")  # created
    g.attrs["k"] = 1
    assert zarr3c.open_group(store, "x", mode="r").attrs["k"] == 1
    assert zarr3c.open_group(store, "x", mode="w").attrs.asdict() == {}
    with pytest.raises(ReadOnlyError):
        zarr3c.open_group(store, "x", mode="r").create_group("y")


def test_open_dispatches(store: zarr3c.Store) -> None:
    zarr3c.create_array(store, "a", shape=(2,), dtype="int8")
    assert isinstance(zarr3c.open(store, "a"), zarr3c.Array)
    assert isinstance(zarr3c.open(store), zarr3c.Group)
    assert isinstance(zarr3c.open(store, "new", shape=(3,), dtype="int8"), zarr3c.Array)


def test_group_pickles(tmp_path) -> None:
    g = zarr3c.create_group(tmp_path / "g.zarr", attributes={"a": 1})
    assert pickle.loads(pickle.dumps(g)).attrs["a"] == 1
