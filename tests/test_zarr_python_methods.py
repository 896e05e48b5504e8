"""zarr-python 3.4's ``Array`` and ``Group`` methods in zarr3c (issue 34, points 2 and 3).

Each method is called the same way on zarr-python (3.1.6 or later, in-process, where it is
installed and has the method) and on zarr3c over the same data, and the arrays, attributes
and metadata must agree; where zarr-python lacks the method (``read_chunk_sizes`` before
3.4, ``move``, which it does not implement) numpy is the oracle.  The error cases assert
zarr3c's error types.  The list of the names zarr3c leaves out is docs/zarr_python_names.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.array.compat import ArrayConfig
from zarr3c.array.create import build_array_metadata
from zarr3c.errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    IndexingError,
    InvalidArgumentError,
    InvalidTypeError,
    NodeNameError,
    ReadOnlyError,
    ShapeMismatchError,
    UnsupportedFeatureError,
)
from zarr3c.group import MemberNotFoundError
from zarr3c.paths import StorePath

try:
    import zarr
except ImportError:  # the comparisons skip; the zarr3c-only tests run
    zarr = None

needs_zarr = pytest.mark.skipif(zarr is None, reason="zarr-python is not installed")

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

DATA = np.arange(48, dtype="int32").reshape(6, 8)

#: create_array arguments given to both libraries.
LAYOUTS = {
    "plain": {"chunks": (4, 3)},
    "sharded": {"chunks": (2, 2), "shards": (4, 4)},
    "transpose": {"chunks": (4, 3), "filters": [{"name": "transpose",
                                                 "configuration": {"order": [1, 0]}}]},
    "uncompressed": {"chunks": (4, 3), "compressors": None},
}


def _pair(tmp_path: Path, name: str = "x", data: np.ndarray = DATA, zarr_format: int = 3,
          **kwargs: Any) -> tuple[Any, zarr3c.Array]:
    """The same array made by zarr-python and by zarr3c, in two folders, ``data`` written."""
    zp = zarr.create_array(str(tmp_path / "zp"), name=name, shape=data.shape,
                           dtype=data.dtype, zarr_format=zarr_format, **kwargs)
    zc = zarr3c.create_array(str(tmp_path / "zc"), name=name, shape=data.shape,
                             dtype=data.dtype, zarr_format=zarr_format, **kwargs)
    zp[...] = data
    zc[...] = data
    return zp, zc


def _json(codecs: Any) -> list[Any]:
    """The codecs' JSON forms (tuples as lists, as they are stored)."""
    return json.loads(json.dumps([c.to_dict() for c in codecs]))


def _info_fields(text: str) -> dict[str, str]:
    """An info repr as {label: value}, in order."""
    return dict(re.match(r"(.+?)\s*: (.*)", line).groups() for line in str(text).splitlines())


# -- Array: the codec chain --------------------------------------------------------------------


@needs_zarr
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_filters_serializer_compressors_match_zarr_python(tmp_path: Path, layout: str) -> None:
    zp, zc = _pair(tmp_path, **LAYOUTS[layout])
    assert _json(zc.filters) == _json(zp.filters)
    assert _json([zc.serializer]) == _json([zp.serializer])
    assert _json(zc.compressors) == _json(zp.compressors)


@needs_zarr
@pytest.mark.parametrize("compressors", ["auto", None])
def test_v2_compressor_matches_zarr_python(tmp_path: Path, compressors: Any) -> None:
    zp, zc = _pair(tmp_path, zarr_format=2, chunks=(4, 3), compressors=compressors)
    assert zc.serializer is None and zp.serializer is None
    assert len(zc.compressors) == len(zp.compressors)
    if compressors is None:
        assert zc.compressor is None and zp.compressor is None
    else:
        assert zc.compressor.name == zp.compressor.codec_id == "zstd"
    assert zc.filters == () and tuple(zp.filters) == ()


def test_compressor_of_a_v3_array_is_a_type_error() -> None:
    a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
    with pytest.raises(InvalidTypeError, match="compressors"):
        _ = a.compressor
    assert issubclass(InvalidTypeError, TypeError)  # what zarr-python raises


# -- Array: zarr-python's data type objects ----------------------------------------------------


def _zdtype(name: str, *args: Any, **kwargs: Any) -> Any:
    dtypes = pytest.importorskip("zarr.core.dtype", reason="zarr-python 3.1 or later")
    return getattr(dtypes, name)(*args, **kwargs)


ZDTYPES = {
    "Int16": ((), {}, {2, 3}),
    "Float32": ((), {}, {2, 3}),
    "Bool": ((), {}, {2, 3}),
    "VariableLengthUTF8": ((), {}, {2, 3}),
    "FixedLengthUTF32": ((), {"length": 3}, {2, 3}),
    "DateTime64": ((), {"unit": "s", "scale_factor": 10}, {3}),
}


@needs_zarr
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("zarr_format", [3, 2])
@pytest.mark.parametrize("name", sorted(ZDTYPES))
def test_create_array_takes_zarr_python_dtype_objects(tmp_path: Path, name: str,
                                                      zarr_format: int) -> None:
    """``dtype=zarr.dtype.Int16()`` and the like: the same stored data type as zarr-python
    writes for that object."""
    args, kwargs, formats = ZDTYPES[name]
    if zarr_format not in formats:
        pytest.skip(f"{name} has no Zarr v{zarr_format} form")
    zdtype = _zdtype(name, *args, **kwargs)
    for lib in (zarr, zarr3c):
        lib.create_array(str(tmp_path / lib.__name__), shape=(3,), dtype=zdtype,
                         chunks=(2,), zarr_format=zarr_format)
    doc, field = ("zarr.json", "data_type") if zarr_format == 3 else (".zarray", "dtype")
    theirs, mine = (json.loads((tmp_path / lib / doc).read_text()) for lib in ("zarr",
                                                                                 "zarr3c"))
    assert mine[field] == theirs[field]
    assert mine["fill_value"] == theirs["fill_value"]
    back = zarr3c.open_array(str(tmp_path / "zarr"), mode="r")
    assert back.dtype == zarr3c.open_array(str(tmp_path / "zarr3c"), mode="r").dtype


# -- Array: info, sizes ------------------------------------------------------------------------


@needs_zarr
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_info_complete_fields_match_zarr_python(tmp_path: Path, layout: str) -> None:
    zp, zc = _pair(tmp_path, data=DATA[:, :5], **LAYOUTS[layout])
    mine, theirs = _info_fields(zc.info_complete()), _info_fields(zp.info_complete())
    assert list(mine) == list(theirs)
    for label in ("Type", "Zarr format", "Fill value", "Shape", "Shard shape", "Chunk shape",
                  "Order", "Read-only", "Store type", "No. bytes", "Shards Initialized",
                  "Chunks Initialized"):
        assert mine.get(label) == theirs.get(label), label
    assert list(_info_fields(zc.info)) == list(_info_fields(zp.info))


#: (shape, chunks, shards, written region) -> (cdata_shape, nchunks, nchunks_initialized,
#: stored objects), the first three as zarr-python 3.4.2 gives them.
CHUNK_COUNTS = [
    (((10,), (1,), (2,), np.s_[:5]), ((10,), 10, 6, 3)),
    (((10,), (2,), (4,), np.s_[8:]), ((5,), 5, 2, 1)),
    (((7, 9), (2, 3), (4, 6), np.s_[...]), ((4, 3), 12, 16, 4)),  # edge shards counted whole
    (((10,), (2,), None, np.s_[:5]), ((5,), 5, 3, 3)),
]


@pytest.mark.parametrize(("layout", "counts"), CHUNK_COUNTS)
def test_chunk_counts_of_sharded_arrays_are_inner_chunks(layout: Any, counts: Any) -> None:
    """cdata_shape, nchunks and nchunks_initialized count inner chunks, as zarr-python 3.4
    does (a stored shard counts all its inner chunks); info_complete counts the shards."""
    shape, chunks, shards, region = layout
    a = zarr3c.create_array("memory://", shape=shape, dtype="int8", chunks=chunks,
                            shards=shards)
    a[region] = 1
    assert (a.cdata_shape, a.nchunks, a.nchunks_initialized,
            a.info_complete().count_chunks_initialized) == counts


@needs_zarr
@pytest.mark.parametrize(("layout", "counts"), CHUNK_COUNTS)
def test_chunk_counts_match_zarr_python(tmp_path: Path, layout: Any, counts: Any) -> None:
    if tuple(int(p) for p in zarr.__version__.split(".")[:2]) < (3, 4):
        pytest.skip("zarr-python before 3.4 counted a sharded array's chunks otherwise "
                    f"(installed: {zarr.__version__})")
    shape, chunks, shards, region = layout
    arrays = [lib.create_array(str(tmp_path / lib.__name__), shape=shape, dtype="int8",
                               chunks=chunks, shards=shards) for lib in (zarr, zarr3c)]
    for a in arrays:
        a[region] = 1
    zp, zc = arrays
    assert (zc.cdata_shape, zc.nchunks, zc.nchunks_initialized) == (
        zp.cdata_shape, zp.nchunks, zp.nchunks_initialized)


@needs_zarr
def test_nbytes_stored_counts_the_same_chunk_bytes_as_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, chunks=(4, 3), compressors=None)
    meta_zp = (tmp_path / "zp" / "x" / "zarr.json").stat().st_size
    meta_zc = (tmp_path / "zc" / "x" / "zarr.json").stat().st_size
    # 6x8 in chunks of 4x3: 2x3 chunks of 12 int32 each (edge chunks are stored whole)
    assert zc.nbytes_stored() - meta_zc == zp.nbytes_stored() - meta_zp == 2 * 3 * 12 * 4
    assert zc.info_complete().count_bytes_stored == zc.nbytes_stored()


def test_nbytes_stored_leaves_out_siblings_and_counts_v2_documents() -> None:
    g = zarr3c.create_group("memory://", zarr_format=2)
    a = g.create_array("x", shape=(4,), dtype="int8", chunks=(2,), compressors=None)
    g.create_array("xy", shape=(4,), dtype="int8", chunks=(2,), compressors=None)[...] = 1
    store = g.store
    docs = store.getsize("x/.zarray") + store.getsize("x/.zattrs")
    assert a.nbytes_stored() == docs
    a[:3] = 5
    assert a.nbytes_stored() == docs + 4


def test_read_and_write_chunk_sizes_as_zarr_python_3_4() -> None:
    # The examples of zarr-python 3.4's docstrings (3.1.6 lacks the properties).
    a = zarr3c.create_array("memory://", dtype="i1", shape=(100, 80), chunks=(30, 40))
    assert a.read_chunk_sizes == a.write_chunk_sizes == ((30, 30, 30, 10), (40, 40))
    s = zarr3c.create_array("memory://", dtype="i1", shape=(40,), chunks=(10,), shards=(20,))
    assert s.read_chunk_sizes == ((10, 10, 10, 10),)
    assert s.write_chunk_sizes == ((20, 20),)
    r = zarr3c.create_array("memory://", dtype="i1", shape=(7,), chunks=[[3, 2, 4]])
    assert r.write_chunk_sizes == ((3, 2, 2),)
    for sizes, shape in ((a.read_chunk_sizes, a.shape), (r.read_chunk_sizes, r.shape)):
        assert tuple(sum(s) for s in sizes) == shape
    assert zarr3c.create_array("memory://", dtype="i1", shape=(0,), chunks=(4,)
                               ).write_chunk_sizes == ((),)


# -- Array: attributes, store path, config, shape, constructors ---------------------------------


@needs_zarr
def test_update_attributes_merges_as_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, chunks=(4, 3))
    for node in (zp, zc):
        node.attrs["keep"] = 1
    new_zp = zp.update_attributes({"a": [1, 2], "keep": 2})
    assert zc.update_attributes({"a": [1, 2], "keep": 2}) is zc
    assert zc.attrs.asdict() == new_zp.attrs.asdict() == {"keep": 2, "a": [1, 2]}
    assert zarr.open_array(str(tmp_path / "zc"), path="x").attrs.asdict() == zc.attrs.asdict()


def test_update_attributes_errors() -> None:
    a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
    with pytest.raises(zarr3c.errors.MetadataError):
        a.update_attributes({"bad": object()})
    assert a.attrs.asdict() == {}
    ro = zarr3c.open_array(a.store, mode="r")
    with pytest.raises(ReadOnlyError):
        ro.update_attributes({"a": 1})


@needs_zarr
def test_store_path_and_read_only_as_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, name="g/x", chunks=(4, 3))
    assert zc.store_path.path == zp.store_path.path == "g/x"
    assert zc.store_path.store is zc.store
    assert (zc.store_path / "y").path == "g/x/y"
    ro_zp = zarr.open_array(str(tmp_path / "zp"), path="g/x", mode="r")
    ro_zc = zarr3c.open_array(str(tmp_path / "zc"), path="g/x", mode="r")
    assert (ro_zc.read_only, zc.read_only) == (ro_zp.read_only, zp.read_only) == (True, False)


@needs_zarr
def test_config_and_with_config_as_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, chunks=(4, 3))
    assert zc.config.order == zp.config.order
    assert zc.config.write_empty_chunks == zp.config.write_empty_chunks
    f_zp = zp.with_config({"order": "F", "write_empty_chunks": True})
    f_zc = zc.with_config({"order": "F", "write_empty_chunks": True})
    assert f_zc.config == ArrayConfig("F", True) and zc.config == ArrayConfig("C", False)
    assert (f_zc.order, f_zc.write_empty_chunks) == (f_zp.order, f_zp.config.write_empty_chunks)
    np.testing.assert_array_equal(f_zc[...], f_zp[...])
    assert f_zc[...].flags.f_contiguous


def test_with_config_errors() -> None:
    a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
    with pytest.raises(InvalidArgumentError, match="unknown"):
        a.with_config({"colour": "red"})
    with pytest.raises(InvalidArgumentError):
        a.with_config({"order": "K"})
    with pytest.raises(InvalidTypeError):
        a.with_config("F")


@needs_zarr
def test_shape_setter_resizes_as_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, chunks=(4, 3))
    zp.shape = (3, 10)
    zc.shape = (3, 10)
    assert zc.shape == zp.shape == (3, 10)
    np.testing.assert_array_equal(zc[...], zp[...])
    with pytest.raises(ShapeMismatchError):
        zc.shape = (3,)


@needs_zarr
def test_open_and_from_dict_read_what_zarr_python_wrote(tmp_path: Path) -> None:
    zp = zarr.create_array(str(tmp_path / "a"), shape=(6, 8), dtype="int32", chunks=(4, 3),
                           attributes={"u": 1})
    zp[...] = DATA
    opened = zarr3c.Array.open(str(tmp_path / "a"), config={"order": "F"})
    np.testing.assert_array_equal(opened[...], DATA)
    assert opened.config.order == "F" and not opened.read_only
    assert json.loads(json.dumps(opened.metadata.to_dict())) == \
        json.loads(json.dumps(zarr.Array.open(str(tmp_path / "a")).metadata.to_dict()))
    store = zarr3c.LocalStore(tmp_path / "a")
    from_dict = zarr3c.Array.from_dict(StorePath(store, ""), zp.metadata.to_dict())
    np.testing.assert_array_equal(from_dict[...], DATA)
    assert from_dict.attrs.asdict() == {"u": 1}


def test_open_and_from_dict_errors() -> None:
    g = zarr3c.create_group("memory://")
    with pytest.raises(ContainsGroupError):
        zarr3c.Array.open(g.store)
    with pytest.raises(ArrayNotFoundError):
        zarr3c.Array.open(zarr3c.MemoryStore())
    with pytest.raises(zarr3c.errors.MetadataError):
        zarr3c.Array.from_dict(StorePath(g.store, "x"), {"zarr_format": 3})
    with pytest.raises(InvalidTypeError):
        zarr3c.Array.from_dict(g.store, {"zarr_format": 3})
    doc = build_array_metadata(shape=(3,), dtype="int8", fill_value=4).to_dict()
    a = zarr3c.Array.from_dict(StorePath(g.store, "x"), doc)
    assert a[...].tolist() == [4, 4, 4] and "x" not in g  # nothing written


# -- Array: block and mask selections ----------------------------------------------------------


@needs_zarr
@pytest.mark.parametrize("layout", ["plain", "sharded"])
@pytest.mark.parametrize("selection", [(0, 1), (slice(None), -1), (slice(0, 2), slice(1, 3)),
                                       (1,), ()])
def test_block_selection_matches_zarr_python(tmp_path: Path, layout: str,
                                             selection: tuple[Any, ...]) -> None:
    zp, zc = _pair(tmp_path, **LAYOUTS[layout])
    np.testing.assert_array_equal(zc.get_block_selection(selection),
                                  zp.get_block_selection(selection))
    np.testing.assert_array_equal(zc.blocks[selection], zp.blocks[selection])
    value = -np.ones_like(zp.get_block_selection(selection))
    zp.set_block_selection(selection, value)
    zc.set_block_selection(selection, value)
    np.testing.assert_array_equal(zc[...], zp[...])


@needs_zarr
def test_mask_selection_matches_zarr_python(tmp_path: Path) -> None:
    zp, zc = _pair(tmp_path, chunks=(4, 3))
    mask = (DATA % 5 == 0)
    np.testing.assert_array_equal(zc.get_mask_selection(mask), zp.get_mask_selection(mask))
    np.testing.assert_array_equal(zc.vindex[mask], zp.vindex[mask])
    zp.set_mask_selection(mask, 99)
    zc.set_mask_selection(mask, 99)
    values = np.arange(int(mask.sum()))
    zp.set_mask_selection(~mask & (DATA < 10), 7)
    zc.set_mask_selection(~mask & (DATA < 10), 7)
    zp.vindex[mask] = values
    zc.vindex[mask] = values
    np.testing.assert_array_equal(zc[...], zp[...])


def test_block_and_mask_selection_errors() -> None:
    a = zarr3c.create_array("memory://", shape=(6, 8), dtype="int32", chunks=(4, 3))
    with pytest.raises(IndexingError):
        a.get_block_selection((2, 0))  # 2 chunks on axis 0
    with pytest.raises(IndexingError):
        a.set_block_selection((0, -4), 1)  # 3 chunks on axis 1
    with pytest.raises(IndexingError):
        a.get_mask_selection(np.ones((6, 7), dtype=bool))
    with pytest.raises(IndexingError):
        a.set_mask_selection(np.ones((6, 8), dtype=int), 1)
    with pytest.raises(ShapeMismatchError):
        a.set_mask_selection(np.ones((6, 8), dtype=bool), [1, 2])


# -- Group: creating arrays --------------------------------------------------------------------


def _groups(tmp_path: Path, zarr_format: int = 3) -> tuple[Any, zarr3c.Group]:
    return (zarr.create_group(str(tmp_path / "zp"), zarr_format=zarr_format),
            zarr3c.create_group(str(tmp_path / "zc"), zarr_format=zarr_format))


def _same_array(zc: zarr3c.Array, zp: Any) -> None:
    assert zc.shape == zp.shape and zc.dtype == zp.dtype
    assert zc.fill_value == zp.fill_value or (np.isnan(zc.fill_value)
                                              and np.isnan(zp.fill_value))
    np.testing.assert_array_equal(zc[...], zp[...])
    assert zc.attrs.asdict() == zp.attrs.asdict()


@needs_zarr
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_setitem_creates_an_array_as_zarr_python(tmp_path: Path, zarr_format: int) -> None:
    gp, gc = _groups(tmp_path, zarr_format)
    for value in (DATA, np.array([1.5, 2.5]), np.arange(3, dtype="uint8")):
        gp["x"] = value
        gc["x"] = value  # (replacing the one before, as zarr-python does)
        _same_array(gc["x"], gp["x"])
    gc["scalar"] = np.array(3, dtype="uint8")  # (zarr-python 3.1.6 fails on a 0-d array)
    gc["list"] = [[1, 2], [3, 4]]  # (and zarr-python's save_array refuses a list)
    assert gc["scalar"][()] == 3 and gc["scalar"].dtype == np.uint8
    np.testing.assert_array_equal(gc["list"][...], np.array([[1, 2], [3, 4]]))
    # and zarr-python reads the array zarr3c wrote
    _same_array(gc["x"], zarr.open_group(str(tmp_path / "zc"))["x"])


@needs_zarr
@pytest.mark.parametrize("method,kwargs", [
    ("zeros", {}), ("ones", {"dtype": "int16"}), ("empty", {"dtype": "uint8"}),
    ("full", {"fill_value": 2.5}), ("full", {"fill_value": np.nan, "dtype": "float32"}),
])
def test_filled_arrays_match_zarr_python(tmp_path: Path, method: str,
                                         kwargs: dict[str, Any]) -> None:
    gp, gc = _groups(tmp_path)
    zp = getattr(gp, method)(name="a", shape=(3, 4), chunks=(2, 2), **kwargs)
    zc = getattr(gc, method)(name="a", shape=(3, 4), chunks=(2, 2), **kwargs)
    _same_array(zc, zp)
    assert zc.chunks == zp.chunks


@needs_zarr
@pytest.mark.parametrize("method", ["zeros_like", "ones_like", "empty_like", "full_like"])
@pytest.mark.parametrize("template", ["numpy", "array"])
def test_like_arrays_match_zarr_python(tmp_path: Path, method: str, template: str) -> None:
    gp, gc = _groups(tmp_path)
    if template == "numpy":
        data_p = data_c = np.arange(6, dtype="int16").reshape(2, 3)
    else:
        data_p = gp.create_array("t", shape=(5, 4), dtype="float32", chunks=(2, 2),
                                 fill_value=1.5)
        data_c = gc.create_array("t", shape=(5, 4), dtype="float32", chunks=(2, 2),
                                 fill_value=1.5)
    kwargs = {"fill_value": 3} if method == "full_like" else {}
    zp = getattr(gp, method)(name="n", data=data_p, **kwargs)
    zc = getattr(gc, method)(name="n", data=data_c, **kwargs)
    _same_array(zc, zp)
    if template == "array":
        assert zc.chunks == zp.chunks == (2, 2)
        assert _json(zc.codecs) == json.loads(json.dumps(zp.metadata.to_dict()["codecs"]))


def test_like_keeps_shards_and_takes_overrides() -> None:
    g = zarr3c.create_group("memory://")
    t = g.create_array("t", shape=(8,), dtype="int32", chunks=(2,), shards=(4,),
                       compressors=None)
    n = g.zeros_like(name="n", data=t)
    assert (n.chunks, n.shards, n.compressors) == ((2,), (4,), ())
    m = g.ones_like(name="m", data=t, shards=None, chunks=(8,), dtype="int8",
                    compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    assert (m.chunks, m.shards, m.dtype, m[...].tolist()) == ((8,), None, np.int8, [1] * 8)
    assert [c.name for c in m.compressors] == ["gzip"]


@needs_zarr
def test_create_and_create_array_with_data_match_zarr_python(tmp_path: Path) -> None:
    gp, gc = _groups(tmp_path)
    _same_array(gc.create_array("d", data=DATA, chunks=(3, 3), attributes={"a": 1}),
                gp.create_array("d", data=DATA, chunks=(3, 3), attributes={"a": 1}))
    _same_array(gc.create("c", shape=(4,), dtype="uint16", fill_value=9),
                gp.create("c", shape=(4,), dtype="uint16", fill_value=9))


def test_shorthand_creation_errors() -> None:
    g = zarr3c.create_group("memory://")
    g.zeros(name="z", shape=(2,))
    with pytest.raises(ContainsArrayError):
        g.ones(name="z", shape=(2,))
    with pytest.raises(zarr3c.errors.MetadataError):
        g.full(name="f", shape=(2,), fill_value=300, dtype="int8")
    with pytest.raises(NodeNameError):
        g["__bad"] = [1]
    ro = zarr3c.open_group(g.store, mode="r")
    with pytest.raises(ReadOnlyError):
        ro["y"] = [1]
    with pytest.raises(ReadOnlyError):
        ro.zeros_like(name="y", data=np.zeros(2))


# -- Group: require_*, lookups, listings, counts -----------------------------------------------


@needs_zarr
def test_require_array_and_require_groups_as_zarr_python(tmp_path: Path) -> None:
    gp, gc = _groups(tmp_path)
    zp = gp.require_array("r", shape=(3,), dtype="int16", fill_value=2)
    zc = gc.require_array("r", shape=(3,), dtype="int16", fill_value=2)
    _same_array(zc, zp)
    assert gc.require_array("r", shape=(3,), dtype="int32") == zc  # safe cast
    assert gc.require_array("r", shape=(3,), dtype="int16", exact=True) == zc
    gp.create_group("a")
    gc.create_group("a")
    assert [g.path for g in gc.require_groups("a", "b/c")] == \
        [g.path for g in gp.require_groups("a", "b/c")] == ["a", "b/c"]
    # (zarr-python creates the groups concurrently: a name given twice may fail there)
    assert [g.path for g in gc.require_groups("d", "d")] == ["d", "d"]


def test_require_array_errors() -> None:
    g = zarr3c.create_group("memory://")
    g.require_array("r", shape=(3,), dtype="int16")
    g.create_group("sub")
    with pytest.raises(ShapeMismatchError):
        g.require_array("r", shape=(4,), dtype="int16")
    with pytest.raises(InvalidTypeError):
        g.require_array("r", shape=(3,), dtype="int8")  # not a safe cast
    with pytest.raises(InvalidTypeError):
        g.require_array("r", shape=(3,), dtype="int32", exact=True)
    with pytest.raises(ContainsGroupError):
        g.require_array("sub", shape=(3,))
    with pytest.raises(ContainsArrayError):
        g.require_groups("ok", "r")
    assert "ok" in g  # (the groups before it were created)


@needs_zarr
def test_lookups_and_listings_match_zarr_python(tmp_path: Path) -> None:
    gp, gc = _groups(tmp_path)
    for g in (gp, gc):
        g.create_array("b", shape=(2,), dtype="int8")
        g.create_array("a/x", shape=(2,), dtype="int8")
        g.create_group("c/d")
    assert gc.get("nothing") is gp.get("nothing") is None
    assert gc.get("nothing", 5) == gp.get("nothing", 5) == 5
    assert gc.get("a/x").path == gp.get("a/x").path
    assert sorted(gc.array_keys()) == sorted(gp.array_keys()) == ["b"]
    assert [a.path for a in gc.array_values()] == sorted(a.path for a in gp.array_values())
    assert [g.path for g in gc.group_values()] == sorted(g.path for g in gp.group_values())
    for depth in (0, 1, None):
        assert gc.nmembers(max_depth=depth) == gp.nmembers(max_depth=depth), depth
    assert gc.get_array("a/x").path == "a/x" and gc.get_group("c").path == "c"


def test_get_array_and_get_group_errors() -> None:
    g = zarr3c.create_group("memory://")
    g.create_array("x", shape=(2,), dtype="int8")
    g.create_group("sub")
    with pytest.raises(ArrayNotFoundError):
        g.get_array("none")
    with pytest.raises(ContainsGroupError):
        g.get_array("sub")
    with pytest.raises(GroupNotFoundError):
        g.get_group("none")
    with pytest.raises(ContainsArrayError):
        g.get_group("x")


@needs_zarr
def test_group_info_matches_zarr_python(tmp_path: Path) -> None:
    gp, gc = _groups(tmp_path)
    for g in (gp, gc):
        g.create_array("a/x", shape=(2,), dtype="int8")
        g.create_group("b")
        g.attrs["k"] = 1
    mine, theirs = _info_fields(gc.info_complete()), _info_fields(gp.info_complete())
    assert list(mine) == list(theirs)
    for label in ("Type", "Zarr format", "Read-only", "Store type", "No. members",
                  "No. arrays", "No. groups"):
        assert mine[label] == theirs[label], label
    assert list(_info_fields(gc.info)) == list(_info_fields(gp.info))
    # From consolidated metadata the static info counts too, as zarr-python's.
    cp = zarr.consolidate_metadata(str(tmp_path / "zp"))
    cc = zarr3c.consolidate_metadata(str(tmp_path / "zc"))
    assert _info_fields(cc.info)["No. members"] == _info_fields(cp.info)["No. members"] == "3"
    assert _info_fields(cc.info)["No. arrays"] == _info_fields(cp.info)["No. arrays"] == "1"
    assert gc.update_attributes({"j": 2}) is gc
    assert gc.attrs.asdict() == gp.update_attributes({"j": 2}).attrs.asdict()


@needs_zarr
def test_from_store_open_and_store_path_as_zarr_python(tmp_path: Path) -> None:
    gp = zarr.Group.from_store(str(tmp_path / "zp"), attributes={"a": 1})
    gc = zarr3c.Group.from_store(str(tmp_path / "zc"), attributes={"a": 1})
    assert gc.attrs.asdict() == gp.attrs.asdict()
    assert gc.store_path.path == gp.store_path.path == ""
    with pytest.raises(ContainsGroupError):
        zarr3c.Group.from_store(gc.store)
    assert zarr3c.Group.from_store(gc.store, overwrite=True).attrs.asdict() == {}
    opened = zarr3c.Group.open(str(tmp_path / "zp"))  # what zarr-python wrote
    assert opened.attrs.asdict() == {"a": 1} and not opened.read_only
    with pytest.raises(GroupNotFoundError):
        zarr3c.Group.open(zarr3c.MemoryStore())
    v2 = zarr3c.Group.from_store(zarr3c.MemoryStore(), zarr_format=2)
    assert v2.zarr_format == 2 and zarr3c.Group.open(v2.store, zarr_format=2) == v2


# -- Group: move, create_hierarchy -------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_move_moves_the_subtree(zarr_format: int) -> None:
    # zarr-python 3 does not implement move (NotImplementedError): numpy is the oracle.
    g = zarr3c.create_group("memory://", zarr_format=zarr_format)
    g["a/x"] = DATA
    g["a/x"].attrs["u"] = "m"
    g.create_group("a/sub", attributes={"s": 1})
    g.move("a", "b/c")
    assert "a" not in g and sorted(g) == ["b"]
    np.testing.assert_array_equal(g["b/c/x"][...], DATA)
    assert g["b/c/x"].attrs["u"] == "m" and g["b/c/sub"].attrs["s"] == 1
    g.move("b/c/x", "y")
    np.testing.assert_array_equal(g["y"][...], DATA)
    assert "b/c/x" not in g and "b/c/sub" in g


def test_move_errors() -> None:
    g = zarr3c.create_group("memory://")
    g["x"] = [1, 2]
    g["y"] = [3]
    g.create_group("sub")
    with pytest.raises(MemberNotFoundError):
        g.move("none", "z")
    with pytest.raises(ContainsArrayError):
        g.move("sub", "x")
    with pytest.raises(ContainsArrayError):
        g.move("y", "x/inner")  # an array cannot hold a member
    with pytest.raises(NodeNameError):
        g.move("sub", "sub/deeper")
    with pytest.raises(ReadOnlyError):
        zarr3c.open_group(g.store, mode="r").move("x", "z")
    with pytest.raises(UnsupportedFeatureError):
        zarr3c.consolidate_metadata(g.store).move("x", "z")
    assert g["x"][...].tolist() == [1, 2] and g["y"][...].tolist() == [3]


@needs_zarr
def test_move_is_not_implemented_in_zarr_python(tmp_path: Path) -> None:
    gp, _ = _groups(tmp_path)
    gp.create_group("a")
    with pytest.raises(NotImplementedError):
        gp.move("a", "b")


def test_create_hierarchy_writes_the_nodes() -> None:
    g = zarr3c.create_group("memory://", "root")
    nodes = {"a/x": build_array_metadata(shape=(2,), dtype="int8", fill_value=3,
                                         attributes={"u": 1}),
             "b": zarr3c.create_group("memory://", attributes={"g": 1}).metadata}
    written = list(g.create_hierarchy(nodes))
    assert [p for p, _ in written] == ["a/x", "b"]
    assert g["a/x"][...].tolist() == [3, 3] and g["a/x"].attrs["u"] == 1
    assert g["b"].attrs["g"] == 1 and "a" in g
    with pytest.raises(ContainsArrayError):
        g.create_hierarchy(nodes)
    assert len(list(g.create_hierarchy(nodes, overwrite=True))) == 2
    with pytest.raises(NodeNameError):
        g.create_hierarchy({"": g.metadata})
    with pytest.raises(InvalidTypeError):
        g.create_hierarchy({"c": {"zarr_format": 3}})
    v2 = zarr3c.create_group("memory://", zarr_format=2)
    with pytest.raises(InvalidTypeError):  # a v3 document in a v2 hierarchy
        v2.create_hierarchy({"c": g.metadata})
    assert "c" not in g and "c" not in v2


# -- StorePath ---------------------------------------------------------------------------------


def test_store_path() -> None:
    g = zarr3c.create_group("memory://", "a")
    assert g.store_path == StorePath(g.store, "a")
    assert str(g.store_path).endswith("/a")
    with pytest.raises(NodeNameError):
        _ = g.store_path / ""


def test_names_of_zarr_python_are_present_or_listed() -> None:
    """Every public name of zarr-python 3.4's Array and Group is in zarr3c or in the list of
    names left out (docs/zarr_python_names.md)."""
    doc = (Path(__file__).parents[1] / "docs" / "zarr_python_names.md").read_text()
    section = doc.split("## Array and Group", 1)[1].split("\n## ", 1)[0]
    left_out = set(re.findall(r"`(?:Array|Group)\.(\w+)`", section))
    for cls, names in ((zarr3c.Array, _ZARR_PYTHON_3_4_ARRAY), (zarr3c.Group,
                                                                 _ZARR_PYTHON_3_4_GROUP)):
        missing = {n for n in names if not hasattr(cls, n)} - left_out
        assert not missing, (cls.__name__, sorted(missing))


#: ``dir()`` of zarr-python 3.4.2's ``zarr.Array`` and ``zarr.Group``, public names.
_ZARR_PYTHON_3_4_ARRAY = (
    "append", "async_array", "attrs", "basename", "blocks", "cdata_shape", "chunks",
    "compressor", "compressors", "config", "dtype", "fill_value", "filters", "from_dict",
    "get_basic_selection", "get_block_selection", "get_coordinate_selection",
    "get_mask_selection", "get_orthogonal_selection", "info", "info_complete", "metadata",
    "name", "nbytes", "nbytes_stored", "nchunks", "nchunks_initialized", "ndim", "oindex",
    "open", "order", "path", "read_chunk_sizes", "read_only", "resize", "serializer",
    "set_basic_selection", "set_block_selection", "set_coordinate_selection",
    "set_mask_selection", "set_orthogonal_selection", "shape", "shards", "size", "store",
    "store_path", "update_attributes", "vindex", "with_config", "write_chunk_sizes",
)
_ZARR_PYTHON_3_4_GROUP = (
    "array_keys", "array_values", "arrays", "attrs", "basename", "create", "create_array",
    "create_group", "create_hierarchy", "empty", "empty_like", "from_store", "full",
    "full_like", "get", "get_array", "get_group", "group_keys", "group_values", "groups",
    "info", "info_complete", "keys", "members", "metadata", "move", "name", "nmembers", "ones",
    "ones_like", "open", "path", "read_only", "require_array", "require_group",
    "require_groups", "store", "store_path", "synchronizer", "tree", "update_attributes",
    "update_attributes_async", "zeros", "zeros_like",
)


def test_chunk_sizes_of_a_huge_grid_are_lazy() -> None:
    # A shape declared in metadata may be 2**62 elements: the sizes must not become tuples.
    a = zarr3c.create_array("memory://", shape=(2**62, 3), dtype="int8", chunks=(2, 2),
                            shards=(4, 2))
    write, read = a.write_chunk_sizes, a.read_chunk_sizes
    assert (len(write[0]), len(read[0])) == (2**60, 2**61)
    assert write[0][-1] == 4 and read[0][:2] == (2, 2) and write[1] == read[1] == (2, 1)
    assert write[0] == zarr3c.chunk_grids.chunk_sizes.RepeatedSizes(4, 2**60, 4)


# -- indexing with another array's values -------------------------------------------------------


def test_an_array_indexes_as_its_values_do() -> None:
    """A zarr3c Array as an index (zarr-python's issue 2133): every indexing mode reads it
    into numpy, as numpy reads an array-like index."""
    g = zarr3c.create_group("memory://")
    values = np.arange(10) * 10
    a = g.create_array("a", data=values, chunks=(3,))
    mask = np.arange(10) % 3 == 0
    ints = np.array([7, 0, 2, 2])
    zmask = g.create_array("mask", data=mask, chunks=(4,))
    zints = g.create_array("ints", data=ints, chunks=(2,))
    for reader in (a.__getitem__, a.oindex.__getitem__, a.vindex.__getitem__):
        np.testing.assert_array_equal(reader(zmask), values[mask])
        np.testing.assert_array_equal(reader(zints), values[ints])
    np.testing.assert_array_equal(a.get_mask_selection(zmask), values[mask])
    np.testing.assert_array_equal(a.get_orthogonal_selection((zints,)), values[ints])
    a[zmask] = -1
    a.oindex[zints] = -2
    expected = values.copy()
    expected[mask] = -1
    expected[ints] = -2
    np.testing.assert_array_equal(a[...], expected)
    m2 = g.create_array("m2", data=np.ones((10, 2), dtype=bool), chunks=(5, 2))
    b = g.create_array("b", data=np.arange(20).reshape(10, 2), chunks=(5, 1))
    np.testing.assert_array_equal(b.vindex[m2], np.arange(20))
    np.testing.assert_array_equal(b[zints, 1], np.arange(20).reshape(10, 2)[ints, 1])
