"""zarr-python's convenience names in zarr3c (issue 34): callable ``zarr3c.array`` and
``zarr3c.group`` that stay modules, ``zarr3c.config``, the convenience functions' own
behaviour, and that no convenience call loses data: ``copy`` refuses a non-empty destination,
writes over existing nodes follow ``overwrite``/``mode``, and "not found"/"already exists"
errors name the store and the path.  (The same calls compared with zarr-python:
tests/interop/test_interop_convenience.py.)"""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.array.compat import ArrayConfig
from zarr3c.errors import (
    ContainsArrayError,
    ContainsGroupError,
    InvalidArgumentError,
    MemberNotFoundError,
    NodeExistsError,
    NodeNotFoundError,
    UnsupportedFeatureError,
)

# -- zarr3c.array / zarr3c.group: callable, and still the modules ------------------------------


def test_array_and_group_are_callable_and_still_modules() -> None:
    a = zarr3c.array(np.arange(6).reshape(2, 3), chunks=(1, 3))
    assert isinstance(a, zarr3c.Array) and a.chunks == (1, 3)
    np.testing.assert_array_equal(a[...], np.arange(6).reshape(2, 3))
    g = zarr3c.group(attributes={"k": 1})
    assert isinstance(g, zarr3c.Group) and g.attrs["k"] == 1
    core = importlib.import_module("zarr3c.array.core")
    group_module = importlib.import_module("zarr3c.group")
    from zarr3c.array import Array, create_array

    assert core.Array is Array is zarr3c.Array is zarr3c.array.core.Array
    assert group_module.Group is zarr3c.Group and callable(create_array)


def test_modules_callable_in_a_fresh_interpreter_importing_submodules_first() -> None:
    """Importing a submodule before anything else still ends with callable modules."""
    code = ("import zarr3c.array.core, zarr3c.group, numpy as np, zarr3c;"
            "print(zarr3c.array(np.arange(3))[2], type(zarr3c.group()).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["2", "Group"]


def test_arrays_and_groups_still_pickle(tmp_path: Path) -> None:
    a = zarr3c.array(np.arange(4), store=str(tmp_path / "a.zarr"))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a))[...], np.arange(4))
    g = zarr3c.group(str(tmp_path / "g.zarr"))
    assert pickle.loads(pickle.dumps(g)).path == ""


# -- config ------------------------------------------------------------------------------------


def test_config_set_as_a_context_manager_restores() -> None:
    threads = zarr3c.get_num_threads()
    with zarr3c.config.set({"array.order": "F", "array.write_empty_chunks": True,
                            "threading.max_workers": 1}):
        a = zarr3c.create_array("memory://", shape=(4, 4), dtype="i2", chunks=(2, 2))
        assert a.order == "F" and a.write_empty_chunks is True
        assert zarr3c.get_num_threads() == 1
        a[...] = 0  # an empty chunk is stored with write_empty_chunks
        assert len([k for k in a.store.list() if k.startswith("c/")]) == 4
    assert zarr3c.config.get("array.order") == "C"
    assert zarr3c.config.get("array.write_empty_chunks") is False
    assert zarr3c.get_num_threads() == threads
    b = zarr3c.create_array("memory://", shape=(4,), dtype="i2")
    assert b.order == "C" and b.write_empty_chunks is False


def test_config_applies_to_arrays_created_in_groups() -> None:
    g = zarr3c.group()
    with zarr3c.config.set({"array.order": "F", "array.write_empty_chunks": True}):
        a = g.create_array("x", shape=(2, 2), dtype="u1")
        opened = zarr3c.open_array(g.store, "x")
    assert (a.order, a.write_empty_chunks) == ("F", True)
    assert (opened.order, opened.write_empty_chunks) == ("F", True)


def _config_paths() -> dict[str, Any]:
    """Every way to an existing array, each taking the store holding a consolidated group
    with the array ``a`` (shape (4, 2), chunks (2, 2), fill value 0)."""
    return {
        "open_array": lambda s: zarr3c.open_array(s, "a", mode="r+"),
        "open": lambda s: zarr3c.open(s, path="a"),
        "open-mode-r": lambda s: zarr3c.open(s, path="a", mode="r"),
        "open_group-getitem": lambda s: zarr3c.open_group(s)["a"],
        "open_consolidated-getitem": lambda s: zarr3c.open_consolidated(s)["a"],
        "get_array": lambda s: zarr3c.open_group(s).get_array("a"),
        "get": lambda s: zarr3c.open_group(s).get("a"),
        "arrays": lambda s: dict(zarr3c.open_group(s).arrays())["a"],
        "array_values": lambda s: next(iter(zarr3c.open_group(s).array_values())),
        "members": lambda s: dict(zarr3c.open_group(s).members())["a"],
        "require_array": lambda s: zarr3c.open_group(s).require_array(
            "a", shape=(4, 2), dtype="i2"),
        "from_dict": lambda s: zarr3c.Array.from_dict(
            (s, "a"), zarr3c.open_array(s, "a").metadata.to_dict()),
    }


@pytest.mark.parametrize("path", sorted(_config_paths()))
def test_config_applies_to_arrays_however_opened(path: str) -> None:
    """zarr3c.config's order and write_empty_chunks are those of an array reached any way,
    as of open_array: reads come back in that order and empty chunks are stored."""
    store = zarr3c.MemoryStore()
    g = zarr3c.create_group(store)
    g.create_array("a", shape=(4, 2), dtype="i2", chunks=(2, 2))
    zarr3c.consolidate_metadata(store)
    open_ = _config_paths()[path]
    with zarr3c.config.set({"array.order": "F", "array.write_empty_chunks": True}):
        a = open_(store)
    assert (a.order, a.write_empty_chunks) == ("F", True)
    assert a[...].flags.f_contiguous and not a[...].flags.c_contiguous
    if not a.read_only:
        a[...] = 0
        assert sorted(k for k in store.list() if k.startswith("a/c/")) == ["a/c/0/0",
                                                                            "a/c/1/0"]
    b = open_(store)  # the defaults again outside the block
    assert (b.order, b.write_empty_chunks) == ("C", False)


@pytest.mark.parametrize("where", ["top", "group"])
def test_create_array_takes_zarr_pythons_config_argument(where: str) -> None:
    """create_array(config=...) sets order and write_empty_chunks where their own arguments
    are not given, as zarr-python's; other keys are refused."""
    g = zarr3c.create_group("memory://")

    def make(**kwargs: Any) -> zarr3c.Array:
        if where == "top":
            return zarr3c.create_array(g.store, "x", shape=(4,), dtype="i1", chunks=(2,),
                                       overwrite=True, **kwargs)
        return g.create_array("x", shape=(4,), dtype="i1", chunks=(2,), overwrite=True,
                              **kwargs)

    a = make(config={"order": "F", "write_empty_chunks": True})
    assert (a.order, a.write_empty_chunks) == ("F", True)
    a[...] = 0
    assert sorted(k for k in g.store.list() if k.startswith("x/c/")) == ["x/c/0", "x/c/1"]
    b = make(config={"write_empty_chunks": True}, write_empty_chunks=False)
    assert (b.order, b.write_empty_chunks) == ("C", False)
    c = make(config=ArrayConfig(order="F", write_empty_chunks=False))
    assert (c.order, c.write_empty_chunks) == ("F", False)
    with pytest.raises(UnsupportedFeatureError, match="read_missing_chunks"):
        make(config={"read_missing_chunks": False})
    with pytest.raises(InvalidArgumentError):
        make(config=["F"])


def test_config_default_compressors_apply_to_auto_only() -> None:
    gzip = [{"name": "gzip", "configuration": {"level": 1}}]
    with zarr3c.config.set(array__v3_default_compressors=gzip):
        a = zarr3c.zeros((4,), dtype="i4")
        b = zarr3c.create_array("memory://", shape=(4,), dtype="i4", compressors=None)
    assert [c.to_dict()["name"] for c in a.codecs] == ["bytes", "gzip"]
    assert [c.to_dict()["name"] for c in b.codecs] == ["bytes"]


@pytest.mark.parametrize("options", [{"array.order": "X"}, {"no.such": 1},
                                     {"threading.max_workers": 0},
                                     {"array.write_empty_chunks": "yes"}])
def test_config_refuses_bad_settings_changing_nothing(options: dict) -> None:
    with pytest.raises(InvalidArgumentError):
        zarr3c.config.set({"array.order": "F", **options})
    assert zarr3c.config.get("array.order") == "C"


# -- create_array(data=...) and create -----------------------------------------------------------


def test_create_array_takes_shape_and_dtype_from_data() -> None:
    a = zarr3c.create_array("memory://", data=np.arange(10, dtype="uint16"))
    assert a.shape == (10,) and a.dtype == np.uint16
    np.testing.assert_array_equal(a[...], np.arange(10))
    with pytest.raises(zarr3c.errors.InvalidTypeError, match="or data"):
        zarr3c.create_array("memory://", shape=(3,))


def test_create_maps_v2_era_keywords() -> None:
    whole = zarr3c.create((5, 7), chunks=False, dtype="i1")
    assert whole.chunks == (5, 7)
    guessed = zarr3c.create(100, chunks=True, dtype="i1")
    assert guessed.chunks == (100,)
    dots = zarr3c.create((4, 4), chunks=2, dtype="u1", dimension_separator=".")
    dots[3, 3] = 1
    assert "c.1.1" in list(dots.store.list())
    ro = zarr3c.create((3,), dtype="f8", read_only=True)
    assert ro.read_only
    compressed = zarr3c.create((4,), dtype="i4", compressor={"name": "gzip", "configuration": {"level": 1}})
    assert [c.to_dict()["name"] for c in compressed.codecs] == ["bytes", "gzip"]


@pytest.mark.parametrize("kwargs, error", [
    ({"chunk_store": {}}, UnsupportedFeatureError),
    ({"object_codec": object()}, UnsupportedFeatureError),
    ({"chunks": 2, "chunk_shape": 2}, InvalidArgumentError),
    ({"dimension_separator": ".", "chunk_key_encoding": "v2"}, InvalidArgumentError),
    ({"dimension_separator": "-"}, InvalidArgumentError),
    ({"zarr_format": 3, "zarr_version": 2}, InvalidArgumentError),
    ({"mode": "r"}, InvalidArgumentError),
])
def test_create_refuses_what_it_cannot_honour(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        zarr3c.create((4,), dtype="i1", **kwargs)


def test_like_of_a_sharded_array_keeps_its_grid_and_codecs() -> None:
    src = zarr3c.create_array("memory://", shape=(16, 16), dtype="f4", chunks=(4, 4),
                              shards=(8, 8), attributes={"dropped": True})
    z = zarr3c.zeros_like(src)
    assert (z.shape, z.chunks, z.shards, z.dtype) == ((16, 16), (4, 4), (8, 8), np.float32)
    assert [c.to_dict() for c in z.codecs] == [c.to_dict() for c in src.codecs]
    assert dict(z.attrs) == {}
    f = zarr3c.full_like(src, fill_value=2.5)
    assert float(f[3, 3]) == 2.5


LIKE_TEMPLATES = {
    "chunked": {"chunks": (3, 4), "compressors": {"name": "gzip",
                                                  "configuration": {"level": 2}}},
    "sharded": {"chunks": (2, 4), "shards": (4, 8), "compressors": None},
    "v2": {"chunks": (3, 4), "zarr_format": 2, "order": "F"},
}


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like", "full_like"])
@pytest.mark.parametrize("template", sorted(LIKE_TEMPLATES))
def test_top_level_and_group_like_make_the_same_array(fn: str, template: str) -> None:
    """``zarr3c.<fn>(a)`` and ``g.<fn>(name=..., data=a)`` in a group of ``a``'s format: one
    metadata document, keeping ``a``'s chunks, shards, codecs, fill value and order."""
    settings = LIKE_TEMPLATES[template]
    a = zarr3c.create_array("memory://", shape=(7, 8), dtype="int16", fill_value=9,
                            attributes={"dropped": True}, **settings)
    kwargs = {"fill_value": 4} if fn == "full_like" else {}
    top = getattr(zarr3c, fn)(a, **kwargs)
    g = zarr3c.create_group("memory://", zarr_format=a.zarr_format)
    member = getattr(g, fn)(name="m", data=a, **kwargs)
    assert top.metadata.to_dict() == member.metadata.to_dict()
    expected_fill = {"zeros_like": 0, "ones_like": 1, "empty_like": 9, "full_like": 4}[fn]
    for b in (top, member):
        assert (b.zarr_format, b.shape, b.chunks, b.shards, b.dtype, b.order) == (
            a.zarr_format, a.shape, a.chunks, a.shards, a.dtype, a.order)
        assert [c.to_dict() for c in b.codecs] == [c.to_dict() for c in a.codecs]
        assert b.fill_value == expected_fill and dict(b.attrs) == {}
        np.testing.assert_array_equal(b[...], np.full((7, 8), expected_fill, dtype="int16"))


def test_like_overrides_replace_whole_settings() -> None:
    """A chunk layout given replaces the template's (a sharded template's inner codecs kept);
    another format takes that format's defaults (v2 cannot shard); codecs given replace all
    of the template's."""
    a = zarr3c.create_array("memory://", shape=(8,), dtype="int32", chunks=(2,), shards=(4,),
                            compressors=None)
    g = zarr3c.create_group("memory://")
    for b in (zarr3c.zeros_like(a, chunks=(8,)), g.zeros_like(name="c", data=a, chunks=(8,))):
        assert (b.chunks, b.shards, b.compressors) == ((8,), None, ())
    v2 = zarr3c.zeros_like(a, zarr_format=2)
    assert (v2.zarr_format, v2.chunks, v2.shards) == (2, (2,), None)
    assert [c.to_dict()["name"] for c in v2.compressors] == ["zstd"]
    gz = zarr3c.zeros_like(a, compressor={"name": "gzip", "configuration": {"level": 1}})
    assert (gz.chunks, gz.shards, [c.name for c in gz.compressors]) == ((2,), (4,), ["gzip"])
    # A v2 array in a v3 group takes the group's format and its default codecs.
    t2 = zarr3c.create_array("memory://", shape=(8,), dtype="int32", chunks=(4,),
                             compressors=None, zarr_format=2)
    m = g.zeros_like(name="m", data=t2)
    assert (m.zarr_format, m.chunks, [c.name for c in m.compressors]) == (3, (4,), ["zstd"])


def test_like_of_a_nested_list_reads_it_as_numpy_does() -> None:
    g = zarr3c.create_group("memory://")
    for b in (zarr3c.ones_like([[1, 2, 3]]), g.ones_like(name="o", data=[[1, 2, 3]])):
        assert (b.shape, b.dtype) == ((1, 3), np.asarray([1]).dtype)
        assert b[...].tolist() == [[1, 1, 1]]


def test_from_array_rechunks_and_copies_only_what_is_stored() -> None:
    src = zarr3c.create_array("memory://", shape=(20, 20), dtype="i4", chunks=(5, 5),
                              fill_value=-1)
    src[:5, :5] = 7
    out = zarr3c.from_array("memory://", data=src, chunks=(10, 10),
                            compressors={"name": "gzip", "configuration": {"level": 1}})
    assert out.chunks == (10, 10) and out.fill_value == -1
    np.testing.assert_array_equal(out[...], src[...])
    assert sorted(k for k in out.store.list() if k.startswith("c/")) == ["c/0/0"]
    meta_only = zarr3c.from_array("memory://", data=src, write_data=False)
    assert meta_only.nchunks_initialized == 0


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_from_array_fill_value_none_is_create_arrays_none(zarr_format: int) -> None:
    # As zarr-python 3.4.2: not given keeps the source's; None is create_array's None (the
    # data type's default; a Zarr v2 null); the values are the source's either way.
    src = zarr3c.create_array("memory://", shape=(4,), dtype="int32", fill_value=42,
                              attributes={"units": "K"}, zarr_format=zarr_format)
    assert zarr3c.from_array({}, data=src).fill_value == 42
    none = zarr3c.from_array({}, data=src, fill_value=None, attributes={})
    assert none.fill_value == (None if zarr_format == 2 else 0) and dict(none.attrs) == {}
    stored = none.metadata.to_dict()["fill_value"]
    assert stored == (None if zarr_format == 2 else 0)
    np.testing.assert_array_equal(none[...], [42] * 4)
    assert zarr3c.from_array({}, data=np.arange(3), fill_value=None).fill_value == 0


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("chunks", ["keep", (3,)])
def test_from_array_with_another_fill_value_copies_the_unstored_chunks_too(
        zarr_format: int, chunks: Any) -> None:
    # The chunks the source does not store read as its fill value, which the copy's own
    # fill value does not give: they are written too.
    src = zarr3c.full((6,), 1.0, chunks=(2,))
    src[:2] = 5
    out = zarr3c.from_array("memory://", data=src, fill_value=42.0, chunks=chunks,
                            zarr_format=zarr_format)
    assert out.fill_value == 42.0
    np.testing.assert_array_equal(out[...], src[...])
    # Bit for bit: a fill value of -0.0 is not 0.0.
    neg = zarr3c.full((4,), -0.0, chunks=(2,), dtype="f8")
    assert np.signbit(zarr3c.from_array("memory://", data=neg, fill_value=0.0)[...]).all()
    text = zarr3c.create_array("memory://", shape=(4,), dtype=str, chunks=(2,),
                               fill_value="x")
    np.testing.assert_array_equal(
        zarr3c.from_array("memory://", data=text, fill_value="y")[...], ["x"] * 4)


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize(("src_name", "dest_name"),
                         [("a", "a"), ("g/a", "g"), ("g/a", ""), ("a", "a/c")])
def test_from_array_refuses_to_overwrite_its_own_source(
        kind: str, src_name: str, dest_name: str, tmp_path: Path) -> None:
    # The overwrite deletes the destination before the copy reads the source: a destination
    # that is the source, holds it or lies inside it would leave only fill values.
    store = zarr3c.MemoryStore() if kind == "memory" else zarr3c.LocalStore(str(tmp_path))
    src = zarr3c.create_array(store, name=src_name, data=np.arange(4.0), fill_value=-1.0)
    with pytest.raises(InvalidArgumentError, match="paths overlap"):
        zarr3c.from_array(store, name=dest_name, data=src, overwrite=True)
    # A read-only view of the same data, or another store object over the same directory,
    # is the same source.
    same = (store.with_read_only(True) if kind == "memory"
            else zarr3c.LocalStore(str(tmp_path), read_only=True))
    with pytest.raises(ValueError, match="paths overlap"):
        zarr3c.from_array(store, name=dest_name,
                          data=zarr3c.open_array(same, src_name), overwrite=True)
    np.testing.assert_array_equal(src[...], np.arange(4.0))


def test_from_array_overwrites_beside_its_source_and_in_other_stores(tmp_path: Path) -> None:
    store = zarr3c.MemoryStore()
    src = zarr3c.create_array(store, name="ab", data=np.arange(4.0), chunks=(2,))
    zarr3c.create_array(store, name="a", shape=(2,), dtype="i1")
    out = zarr3c.from_array(store, name="a", data=src, overwrite=True)  # "a" is not "ab"'s
    np.testing.assert_array_equal(out[...], np.arange(4.0))
    meta_only = zarr3c.from_array(store, name="ab", data=src, overwrite=True, write_data=False)
    assert meta_only.nchunks_initialized == 0  # (asked for: no data is read)
    other = zarr3c.MemoryStore()  # equal-looking but distinct data
    zarr3c.create_array(other, name="a", shape=(2,), dtype="i1")
    np.testing.assert_array_equal(
        zarr3c.from_array(other, name="a", data=out, overwrite=True)[...], np.arange(4.0))
    sub = zarr3c.LocalStore(str(tmp_path / "g"))  # a store rooted inside the other
    local_src = zarr3c.create_array(zarr3c.LocalStore(str(tmp_path)), name="g/a",
                                    data=np.arange(3), chunks=(2,))
    with pytest.raises(InvalidArgumentError, match="paths overlap"):
        zarr3c.from_array(sub, name="a", data=local_src, overwrite=True)
    np.testing.assert_array_equal(
        zarr3c.from_array(sub, name="b", data=local_src, overwrite=True)[...], np.arange(3))
    # Inside the source's directory, the overwrite deletes only what is below the
    # destination: refused where that holds the source's chunks ("c"), not elsewhere.
    with pytest.raises(InvalidArgumentError, match="paths overlap"):
        zarr3c.from_array(zarr3c.LocalStore(str(tmp_path / "g" / "a" / "c")),
                          data=local_src, overwrite=True)
    beside = zarr3c.LocalStore(str(tmp_path / "g" / "a" / "copy"))
    for _ in range(2):  # (the second time over the first copy: not the source's chunks)
        copied = zarr3c.from_array(beside, data=local_src, overwrite=True)
        np.testing.assert_array_equal(copied[...], np.arange(3))
    np.testing.assert_array_equal(local_src[...], np.arange(3))


def test_array_of_a_zarr3c_array_copies_it() -> None:
    src = zarr3c.create_array("memory://", shape=(6,), dtype="u1", chunks=(2,))
    src[...] = [1, 2, 3, 4, 5, 6]
    again = zarr3c.array(src, chunks=(3,))
    assert again.chunks == (3,)
    np.testing.assert_array_equal(again[...], src[...])


# -- save, load, tree ----------------------------------------------------------------------------


def test_save_group_replaces_what_is_there_and_load_reads_it(tmp_path: Path) -> None:
    where = str(tmp_path / "g.zarr")
    zarr3c.save_array(where, np.arange(3))
    zarr3c.save_group(where, np.zeros(2), labels=np.array([1, 2]))  # as zarr-python: replaces
    loaded = zarr3c.load(where)
    assert sorted(loaded) == ["arr_0", "labels"] and len(loaded) == 2
    np.testing.assert_array_equal(loaded["labels"], [1, 2])
    with pytest.raises(KeyError):
        loaded["missing"]


def test_save_one_array_over_a_group_is_refused_keeping_it(tmp_path: Path) -> None:
    where = str(tmp_path / "g.zarr")
    zarr3c.save(where, a=np.arange(2))
    with pytest.raises(ContainsGroupError, match=rf"in store {tmp_path / 'g.zarr'}"):
        zarr3c.save(where, np.arange(5))
    np.testing.assert_array_equal(zarr3c.load(where)["a"], [0, 1])
    with pytest.raises(InvalidArgumentError, match="at least one array"):
        zarr3c.save(where)


def test_load_of_nothing_names_the_store(tmp_path: Path) -> None:
    with pytest.raises(NodeNotFoundError, match=rf"path '' in store {tmp_path / 'none.zarr'}"):
        zarr3c.load(str(tmp_path / "none.zarr"))


def test_tree_levels() -> None:
    g = zarr3c.group()
    g.create_array("a/b/x", shape=(2,), dtype="i1")
    g.create_array("y", shape=(3,), dtype="u2")
    assert zarr3c.tree(g) == g.tree()
    assert zarr3c.tree(g, level=0) == "/"
    assert zarr3c.tree(g, level=1).splitlines() == ["/", "├── a", "└── y (3,) uint16"]
    assert len(zarr3c.tree(g, level=2).splitlines()) == 4
    with pytest.raises(InvalidArgumentError):
        zarr3c.tree(g, level=-1)


def test_print_debug_info(capsys: pytest.CaptureFixture[str]) -> None:
    zarr3c.print_debug_info()
    out = capsys.readouterr().out
    assert f"zarr3c: {zarr3c.__version__}" in out and "numpy: " in out


# -- copy_store and copy_all -----------------------------------------------------------------------


def _source() -> zarr3c.Group:
    g = zarr3c.group(attributes={"root": 1})
    a = g.create_array("sub/x", shape=(4,), dtype="i2", chunks=(2,))
    a[...] = [1, 2, 3, 4]
    a.attrs["u"] = "m"
    g.create_array("y", shape=(2,), dtype="f4")
    return g


def test_copy_store_refuses_existing_keys_before_writing() -> None:
    src = _source()
    dest = zarr3c.MemoryStore()
    dest.set("y/zarr.json", b"{}")
    with pytest.raises(NodeExistsError, match="'y/zarr.json' exists in store MemoryStore"):
        zarr3c.copy_store(src.store, dest)
    assert list(dest.list()) == ["y/zarr.json"]
    n_copied, n_skipped, _ = zarr3c.copy_store(src.store, dest, if_exists="skip")
    assert n_skipped == 1 and dest.get("y/zarr.json") == b"{}"
    zarr3c.copy_store(src.store, dest, if_exists="replace")
    assert zarr3c.open_array(dest, "y").shape == (2,)


def test_copy_store_paths_excludes_and_dry_run() -> None:
    src = _source()
    dest = zarr3c.MemoryStore()
    lines: list[str] = []
    counts = zarr3c.copy_store(src.store, dest, source_path="sub", dest_path="moved",
                               excludes=[r"^x/c/"], includes=[r"/1$"], dry_run=True,
                               log=lines.append)
    assert list(dest.list()) == [] and counts[0] == len(lines) == 3  # zarr.json x2, c/1
    zarr3c.copy_store(src.store, dest, source_path="sub", dest_path="moved")
    np.testing.assert_array_equal(zarr3c.open_array(dest, "moved/x")[...], [1, 2, 3, 4])


def test_copy_all_copies_members_and_refuses_or_skips_existing() -> None:
    src = _source()
    dest = zarr3c.group()
    assert zarr3c.copy_all(src, dest) == (3, 0, 16)  # sub, sub/x, y; 8 + 8 bytes
    np.testing.assert_array_equal(dest["sub/x"][...], [1, 2, 3, 4])
    assert dest["sub/x"].attrs["u"] == "m"
    dest["sub/x"][0] = 100
    with pytest.raises(ContainsGroupError, match="path 'sub' in store MemoryStore"):
        zarr3c.copy_all(src, dest)
    assert int(dest["sub/x"][0]) == 100  # refused before anything was written
    assert zarr3c.copy_all(src, dest, if_exists="skip") == (0, 2, 0)
    zarr3c.copy_all(src, dest, if_exists="replace")
    assert int(dest["sub/x"][0]) == 1


def test_copy_all_shallow_without_attrs_and_dry_run() -> None:
    src = _source()
    dest = zarr3c.group()
    zarr3c.copy_all(src, dest, shallow=True, without_attrs=True)
    assert dest["sub"].keys() == [] and dict(dest["y"].attrs) == {}
    other = zarr3c.group()
    assert zarr3c.copy_all(src, other, dry_run=True) == (3, 0, 16)
    assert other.keys() == []


def _mixed_source(zarr_format: int) -> tuple[zarr3c.Group, dict[str, np.ndarray]]:
    """A group of the layout ``zarr_format``: nested groups with attributes, arrays of
    numbers (big-endian in v2), strings and bytes (fixed and variable length), partly
    written; and what each array reads as."""
    g = zarr3c.group(zarr_format=zarr_format, attributes={"root": 1})
    g.create_group("a", attributes={"level": 1}).create_group("b", attributes={"level": 2})
    values = {
        "a/b/i": (">i4" if zarr_format == 2 else "i4", np.arange(-3, 7, dtype="i4"), 9),
        "a/f": ("f8", np.linspace(0, 1, 10), np.nan),
        "u": ("<U3", np.array(["", "é", "xyz"] * 3 + ["q"]), "-"),
        "s": ("S2", np.array([b"", b"a\0", b"zz"] * 3 + [b"q"]), b"e"),
        "str": (str, np.array(["", "long text", "é"] * 3 + ["x"], dtype=object), None),
        "bytes": (bytes, np.array([b"", b"\xff\x00", b"abc"] * 3 + [b"x"], dtype=object),
                  None),
    }
    expected = {}
    for path, (dtype, data, fill) in values.items():
        a = g.create_array(path, shape=(10,), chunks=(4,), dtype=dtype, fill_value=fill,
                           attributes={"name": path})
        a[:6] = data[:6]  # the last chunk not stored: read as the fill value
        expected[path] = a[...]
    return g, expected


@pytest.mark.parametrize(("from_format", "to_format"), [(2, 3), (3, 2)])
@pytest.mark.parametrize("chunks", [None, (5,)])
def test_copy_all_converts_between_layouts(from_format: int, to_format: int,
                                           chunks: Any) -> None:
    src, expected = _mixed_source(from_format)
    dest = zarr3c.group(zarr_format=to_format)
    kwargs = {} if chunks is None else {"chunks": chunks}
    n_copied, n_skipped, _ = zarr3c.copy_all(src, dest, **kwargs)
    assert (n_copied, n_skipped) == (8, 0)  # a, a/b and six arrays
    by_copy = zarr3c.copy(src.store, zarr3c.MemoryStore(), zarr_format=to_format,
                          **({} if chunks is None else {"chunks": chunks}))
    assert dict(dest["a"].attrs) == {"level": 1} and dict(dest["a/b"].attrs) == {"level": 2}
    for path, values in expected.items():
        out = dest[path]
        assert out.zarr_format == to_format and dict(out.attrs) == {"name": path}
        assert out.chunks == (chunks or (4,))
        # the data type and fill value zarr3c.copy gives the array in that layout
        assert out.metadata.data_type == by_copy[path].metadata.data_type, path
        assert out.metadata.fill_value == by_copy[path].metadata.fill_value, path
        np.testing.assert_array_equal(out[...], values)


def test_from_array_into_another_layout_keeps_the_data_type() -> None:
    src = zarr3c.create_array("memory://", shape=(3,), dtype="S3", fill_value=b"ab",
                              zarr_format=2)
    src[:2] = [b"x", b"yz"]
    out = zarr3c.from_array("memory://", data=src, zarr_format=3)
    assert out.metadata.data_type.to_json() == {
        "name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}
    assert out.fill_value == b"ab"
    np.testing.assert_array_equal(out[...], [b"x", b"yz", b"ab"])
    vlen = zarr3c.create_array("memory://", shape=(2,), dtype=bytes, zarr_format=3)
    vlen[...] = np.array([b"a", b""], dtype=object)
    back = zarr3c.from_array("memory://", data=vlen, zarr_format=2)
    assert back.metadata.data_type.name == "variable_length_bytes"
    assert list(back[...]) == [b"a", b""]


# -- no data lost: zarr3c.copy and errors naming the store ----------------------------------------


def test_copy_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    small = zarr3c.array(np.arange(4), store=str(tmp_path / "small.zarr"))
    zarr3c.array(np.arange(100, 110), store=str(tmp_path / "precious.zarr"), chunks=(5,))
    with pytest.raises(ContainsArrayError,
                       match=rf"destination holds an array in store {tmp_path / 'precious.zarr'}"):
        zarr3c.copy(str(tmp_path / "small.zarr"), str(tmp_path / "precious.zarr"))
    np.testing.assert_array_equal(zarr3c.open_array(str(tmp_path / "precious.zarr"))[...],
                                  np.arange(100, 110))
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("keep me")
    with pytest.raises(NodeExistsError, match="not empty"):
        zarr3c.copy(small.store, str(junk))
    assert (junk / "notes.txt").read_text() == "keep me"
    out = zarr3c.copy(small.store, str(tmp_path / "precious.zarr"), overwrite=True)
    np.testing.assert_array_equal(out[...], np.arange(4))
    fresh = zarr3c.copy(small.store, str(tmp_path / "new.zarr"))  # missing: fine
    np.testing.assert_array_equal(fresh[...], np.arange(4))


def test_not_found_and_exists_errors_name_the_store_and_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.zarr"
    with pytest.raises(NodeNotFoundError, match=rf"path '' in store {missing}"):
        zarr3c.open_array(str(missing), mode="r")
    assert not missing.exists()
    with pytest.raises(NodeNotFoundError, match=rf"path 'a/b' in store {missing}"):
        zarr3c.open_group(str(missing), "a/b", mode="r")
    with pytest.raises(NodeNotFoundError, match=rf"path 'x' in store {missing}"):
        zarr3c.open(str(missing), "x", mode="r")
    where = tmp_path / "there.zarr"
    zarr3c.create_group(str(where), "g")
    with pytest.raises(ContainsGroupError, match=rf"path 'g' in store {where}"):
        zarr3c.create_array(str(where), "g", shape=(2,), dtype="i1")
    with pytest.raises(ContainsGroupError, match=rf"path 'g' in store {where}"):
        zarr3c.open_array(str(where), "g")
    g = zarr3c.open_group(str(where))
    with pytest.raises(MemberNotFoundError, match=rf"in store {where}"):
        g["missing"]
    g.create_array("arr", shape=(1,), dtype="i1")
    with pytest.raises(ContainsArrayError, match=rf"path 'arr' in store {where}"):
        g.require_group("arr")
    with pytest.raises(ContainsArrayError, match=rf"path 'arr' in store {where}"):
        zarr3c.open_group(str(where), "arr")


def test_member_not_found_error_lives_in_errors() -> None:
    import zarr3c.group as group_module

    assert group_module.MemberNotFoundError is zarr3c.errors.MemberNotFoundError
    assert issubclass(MemberNotFoundError, KeyError) and issubclass(MemberNotFoundError,
                                                                    NodeNotFoundError)


def test_errors_name_the_url_of_a_remote_store() -> None:
    fsspec = pytest.importorskip("fsspec")
    import uuid

    store = zarr3c.FsspecStore(fsspec.filesystem("memory"), f"/dropin-{uuid.uuid4().hex}")
    with pytest.raises(NodeNotFoundError) as info:
        zarr3c.open_array(store, "x", mode="r")
    assert store.url in str(info.value) and "path 'x'" in str(info.value)

