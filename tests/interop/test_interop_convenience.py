"""zarr-python's convenience functions and zarr3c's: the same call on the same data, each into
its own folder, gives equal arrays, attributes and metadata documents (``zarr.json`` /
``.zarray``, compared as JSON), and each library reads what the other wrote.

The calls are the ones zarr-python users make: ``array``, ``zeros``/``ones``/``empty``/``full``
and their ``*_like``, ``create`` with v2-era keywords, ``from_array``, ``open_like``,
``save``/``save_array``/``save_group``/``load``, ``group``, ``create_array(data=...)``; and the
refusals both make (a node already where a convenience call writes).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")

import zarr3c

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


def _document(root: Path) -> dict[str, Any]:
    """The array's metadata document in ``root`` (v3 or v2), without the members only one
    library writes (zarr-python's empty ``storage_transformers``)."""
    if (root / "zarr.json").exists():
        doc = json.loads((root / "zarr.json").read_text())
        if doc.get("storage_transformers") == []:
            del doc["storage_transformers"]
        return doc
    doc = json.loads((root / ".zarray").read_text())
    attrs = root / ".zattrs"
    doc["attributes"] = json.loads(attrs.read_text()) if attrs.exists() else {}
    return doc


def _assert_same_array(tmp_path: Path, make: Callable[[Any, Any], Any]) -> None:
    """``make(lib, store)`` with both libraries: equal documents, values and attributes, and
    each library reads the other's array alike."""
    zp_dir, z3_dir = tmp_path / "zp.zarr", tmp_path / "z3.zarr"
    make(zarr, str(zp_dir))
    make(zarr3c, str(z3_dir))
    assert _document(z3_dir) == _document(zp_dir)
    for reader in (zarr, zarr3c):
        a = reader.open_array(str(zp_dir), mode="r")
        b = reader.open_array(str(z3_dir), mode="r")
        np.testing.assert_array_equal(b[...], a[...])
        assert dict(b.attrs) == dict(a.attrs)


DATA = np.arange(60, dtype="int32").reshape(6, 10)


def _zarr_version_2(lib: Any) -> dict[str, int]:
    """``zarr_version=2`` for zarr3c (which maps it) and for a zarr-python that still takes
    it; ``zarr_format=2``, its meaning, for one that dropped it (3.4)."""
    if lib is zarr3c or "zarr_version" in inspect.signature(zarr.create).parameters:
        return {"zarr_version": 2}
    return {"zarr_format": 2}

CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "array": lambda lib, s: lib.array(DATA, store=s, chunks=(4, 4), attributes={"u": "m"}),
    "array-default-chunks": lambda lib, s: lib.array(DATA, store=s),
    "zeros": lambda lib, s: lib.zeros((7, 5), chunks=(3, 3), store=s, dtype="uint16"),
    "zeros-default-dtype": lambda lib, s: lib.zeros((7,), store=s),
    "ones": lambda lib, s: lib.ones((4,), chunks=2, dtype="int8", store=s),
    "empty": lambda lib, s: lib.empty((4, 2), dtype="float32", store=s),
    "full": lambda lib, s: lib.full((5,), 3.5, store=s, chunks=(2,)),
    "full-int": lambda lib, s: lib.full((3, 3), -7, dtype="int64", store=s),
    "create": lambda lib, s: lib.create((10, 10), chunks=(5, 5), dtype="f4", store=s,
                                        fill_value=1.5, attributes={"a": [1, 2]},
                                        dimension_names=["y", "x"]),
    "create-v2": lambda lib, s: lib.create((10,), chunks=5, dtype="<i4", compressor=None,
                                           dimension_separator="/", zarr_format=2, store=s),
    "create-v2-dot": lambda lib, s: lib.create((4, 4), chunks=(2, 2), dtype="<f8",
                                               zarr_format=2, store=s, compressor=None,
                                               fill_value=0.0),
    "create-v2-zarr-version": lambda lib, s: lib.create((6,), chunks=3, dtype="<u1",
                                                        store=s, compressor=None,
                                                        **_zarr_version_2(lib)),
    "create-chunk-key-tuple": lambda lib, s: lib.create((4, 4), chunks=2, dtype="u1", store=s,
                                                        chunk_key_encoding=("default", ".")),
    "create_array-data": lambda lib, s: lib.create_array(s, data=DATA, chunks=(3, 5)),
    "from_array-numpy": lambda lib, s: lib.from_array(s, data=DATA),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_call_same_array(tmp_path: Path, name: str) -> None:
    _assert_same_array(tmp_path, CALLS[name])


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_functions_of_an_array_match(tmp_path: Path, fn: str) -> None:
    """``*_like`` of an array each library opened from the same folder: the same new
    array (shape, chunks, dtype, codecs, fill value; no attributes)."""
    src = tmp_path / "src.zarr"
    a = zarr.create_array(str(src), shape=(9, 4), dtype="int16", chunks=(4, 2), fill_value=7,
                          compressors={"name": "gzip", "configuration": {"level": 3}},
                          attributes={"kept": False})
    a[...] = 1
    kwargs = {"fill_value": 5} if fn == "full_like" else {}

    def make(lib: Any, store: Any) -> Any:
        like = lib.open_array(str(src), mode="r")
        return getattr(lib, fn)(like, store=store, **kwargs)

    _assert_same_array(tmp_path, make)


@pytest.mark.parametrize("fn", ["zeros_like", "empty_like"])
def test_like_functions_of_a_v2_array_match(tmp_path: Path, fn: str) -> None:
    """A Zarr v2 template: both libraries make a v2 array with its compressor, filters and
    memory order (stored in ``.zarray``)."""
    if tuple(int(p) for p in zarr.__version__.split(".")[:2]) < (3, 4):
        pytest.skip("zarr-python before 3.4 passes a v2 template's compressor to a v3 array "
                    f"and refuses it (3.1.6 checked; installed: {zarr.__version__})")
    src = tmp_path / "src.zarr"
    zarr.create_array(str(src), shape=(9, 4), dtype="int16", chunks=(4, 2), fill_value=7,
                      zarr_format=2, order="F", compressors=None)

    def make(lib: Any, store: Any) -> Any:
        return getattr(lib, fn)(lib.open_array(str(src), mode="r"), store=store)

    _assert_same_array(tmp_path, make)
    assert _document(tmp_path / "z3.zarr")["order"] == "F"


def test_like_of_a_sharded_array_keeps_the_shard_shape(tmp_path: Path) -> None:
    """zarr-python 3.4's ``zeros_like`` of a sharded array keeps its codecs but makes the
    shards as small as the inner chunks; zarr3c keeps the template's shards, so only the
    chunk grid and the sharding codec's place in it differ."""
    src = tmp_path / "src.zarr"
    zarr.create_array(str(src), shape=(8, 8), dtype="float32", chunks=(2, 2), shards=(4, 8),
                      fill_value=1.5)
    theirs = zarr.zeros_like(zarr.open_array(str(src), mode="r"))
    ours = zarr3c.zeros_like(zarr3c.open_array(str(src), mode="r"),
                             store=str(tmp_path / "z3.zarr"))
    assert (ours.chunks, ours.shards) == ((2, 2), (4, 8))
    assert ours.chunks == theirs.chunks
    doc = _document(tmp_path / "z3.zarr")
    want = theirs.metadata.to_dict()
    assert doc["codecs"][0]["configuration"]["chunk_shape"] == [2, 2]
    for key in ("shape", "data_type", "chunk_key_encoding"):
        assert json.loads(json.dumps(want[key])) == doc[key], key
    assert doc["fill_value"] == 0.0 and float(theirs.fill_value) == 0.0
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "z3.zarr"))[...],
                                  np.zeros((8, 8), dtype="float32"))


@pytest.mark.parametrize("fn", ["zeros_like", "full_like"])
def test_like_functions_of_numpy_match(tmp_path: Path, fn: str) -> None:
    kwargs = {"fill_value": 2} if fn == "full_like" else {}
    _assert_same_array(tmp_path, lambda lib, s: getattr(lib, fn)(DATA, store=s, **kwargs))


def test_from_array_of_an_array_keeps_its_chunks_codecs_and_values(tmp_path: Path) -> None:
    src = tmp_path / "src.zarr"
    a = zarr.create_array(str(src), shape=(10, 6), dtype="float64", chunks=(4, 3),
                          shards=(8, 6), fill_value=-1.0, dimension_names=["t", "x"],
                          attributes={"units": "K"})
    a[:5] = np.arange(30).reshape(5, 6)

    def make(lib: Any, store: Any) -> Any:
        return lib.from_array(store, data=lib.open_array(str(src), mode="r"))

    zp_dir, z3_dir = tmp_path / "zp.zarr", tmp_path / "z3.zarr"
    make(zarr, str(zp_dir))
    make(zarr3c, str(z3_dir))
    zp_doc, z3_doc = _document(zp_dir), _document(z3_dir)
    for key in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "codecs",
                "dimension_names"):
        assert z3_doc[key] == zp_doc[key], key
    # The source's fill value and attributes are kept, as zarr-python 3.4 keeps them (3.1
    # reset the fill value to the type's default and dropped the attributes).
    assert z3_doc["fill_value"] == -1.0 and z3_doc["attributes"] == {"units": "K"}
    np.testing.assert_array_equal(zarr.open_array(str(z3_dir))[...], a[...])


def test_open_like_creates_like_the_array_then_opens_it(tmp_path: Path) -> None:
    # zarr-python (3.1.6 and 3.4.2 alike) opens open_like's path inside a new MemoryStore and
    # writes nothing there, so zarr3c's array is checked against its source and read back
    # by zarr-python.
    src = zarr3c.full((6,), 4, dtype="uint8", chunks=3)
    made = zarr3c.open_like(src, str(tmp_path / "z3.zarr"))
    assert (made.shape, made.dtype, made.chunks) == (src.shape, src.dtype, src.chunks)
    theirs = zarr.open_array(str(tmp_path / "z3.zarr"), mode="r")
    assert (theirs.shape, theirs.dtype, theirs.chunks) == ((6,), np.dtype("uint8"), (3,))
    np.testing.assert_array_equal(theirs[...], made[...])
    again = zarr3c.open_like(src, str(tmp_path / "z3.zarr"))
    assert again.shape == (6,) and int(again[0]) == 4


def test_save_array_and_save_group_match_and_load(tmp_path: Path) -> None:
    labels = np.array([3, 1, 2], dtype="uint8")
    zarr.save_array(str(tmp_path / "zp.zarr"), DATA)
    zarr3c.save_array(str(tmp_path / "z3.zarr"), DATA)
    assert _document(tmp_path / "z3.zarr") == _document(tmp_path / "zp.zarr")
    np.testing.assert_array_equal(zarr.load(str(tmp_path / "z3.zarr")), DATA)
    np.testing.assert_array_equal(zarr3c.load(str(tmp_path / "zp.zarr")), DATA)

    zarr.save_group(str(tmp_path / "gzp.zarr"), DATA, labels=labels)
    zarr3c.save_group(str(tmp_path / "gz3.zarr"), DATA, labels=labels)
    for name in ("arr_0", "labels"):
        assert (_document(tmp_path / "gz3.zarr" / name)
                == _document(tmp_path / "gzp.zarr" / name))
    loaded = zarr3c.load(str(tmp_path / "gzp.zarr"))
    assert sorted(loaded) == ["arr_0", "labels"]
    np.testing.assert_array_equal(loaded["labels"], labels)
    group = zarr.open_group(str(tmp_path / "gz3.zarr"), mode="r")
    np.testing.assert_array_equal(group["arr_0"][...], DATA)


def test_save_with_several_arrays_writes_a_group_as_zarr_python(tmp_path: Path) -> None:
    zarr.save(str(tmp_path / "zp.zarr"), DATA, np.ones(3))
    zarr3c.save(str(tmp_path / "z3.zarr"), DATA, np.ones(3))
    zp_group = zarr.open_group(str(tmp_path / "zp.zarr"), mode="r")
    z3_group = zarr.open_group(str(tmp_path / "z3.zarr"), mode="r")
    assert sorted(z3_group.array_keys()) == sorted(zp_group.array_keys()) == ["arr_0", "arr_1"]
    for name in ("arr_0", "arr_1"):
        np.testing.assert_array_equal(z3_group[name][...], zp_group[name][...])


def test_group_opens_or_creates_as_zarr_python(tmp_path: Path) -> None:
    zarr.group(str(tmp_path / "zp.zarr"), attributes={"title": "t"})
    zarr3c.group(str(tmp_path / "z3.zarr"), attributes={"title": "t"})
    zp_doc = json.loads((tmp_path / "zp.zarr" / "zarr.json").read_text())
    z3_doc = json.loads((tmp_path / "z3.zarr" / "zarr.json").read_text())
    assert {k: v for k, v in z3_doc.items() if k != "consolidated_metadata"} == {
        k: v for k, v in zp_doc.items() if k != "consolidated_metadata"}
    assert zarr3c.group(str(tmp_path / "zp.zarr")).attrs["title"] == "t"


# -- refusals both libraries make ----------------------------------------------------------------


REFUSED: dict[str, Callable[[Any, str], Any]] = {
    "array": lambda lib, s: lib.array(np.arange(3), store=s),
    "zeros": lambda lib, s: lib.zeros((3,), store=s),
    "create": lambda lib, s: lib.create((3,), store=s),
    "create_array": lambda lib, s: lib.create_array(s, shape=(3,), dtype="i1"),
    "save_array": lambda lib, s: lib.save_array(s, np.arange(3)),
    "save": lambda lib, s: lib.save(s, np.arange(3)),
    "from_array": lambda lib, s: lib.from_array(s, data=np.arange(3)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_node_already_there_is_kept_by_both(tmp_path: Path, name: str) -> None:
    """Over an existing array, without overwrite: both refuse, both leave it as it was."""
    for lib in (zarr, zarr3c):
        where = str(tmp_path / f"{lib.__name__}.zarr")
        old = zarr3c.create_array(where, shape=(4,), dtype="int16", chunks=(2,))
        old[...] = [1, 2, 3, 4]
        with pytest.raises(Exception) as info:
            REFUSED[name](lib, where)
        assert "exists" in str(info.value).lower()
        np.testing.assert_array_equal(zarr.open_array(where, mode="r")[...], [1, 2, 3, 4])
    with pytest.raises(zarr3c.errors.ContainsArrayError,
                       match=rf"path '' in store {str(tmp_path / 'zarr3c.zarr')}"):
        REFUSED[name](zarr3c, str(tmp_path / "zarr3c.zarr"))


OVERWRITE: dict[str, Callable[[Any, str], Any]] = {
    "array": lambda lib, s: lib.array(np.arange(3), store=s, overwrite=True),
    "zeros": lambda lib, s: lib.zeros((3,), store=s, overwrite=True),
    "create": lambda lib, s: lib.create((3,), store=s, overwrite=True),
    "save_array": lambda lib, s: lib.save_array(s, np.arange(3), mode="w"),
}


@pytest.mark.parametrize("name", sorted(OVERWRITE))
def test_overwrite_replaces_as_in_zarr_python(tmp_path: Path, name: str) -> None:
    for lib in (zarr, zarr3c):
        where = str(tmp_path / f"{lib.__name__}.zarr")
        zarr3c.create_array(where, shape=(4,), dtype="int16")[...] = 9
        OVERWRITE[name](lib, where)
    for lib in (zarr, zarr3c):
        assert zarr.open_array(str(tmp_path / f"{lib.__name__}.zarr")).shape == (3,)
