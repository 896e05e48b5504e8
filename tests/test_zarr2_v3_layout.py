"""zarr-python 2.x's experimental v3 layout ("zarr2-v3"): hierarchies zarr 2.18 wrote.

The documents below are the ones zarr 2.18.7 wrote with ``ZARR_V3_EXPERIMENTAL_API=1`` (entry
point ``zarr.json``, ``meta/root.group.json``, ``meta/root/<path>.array.json``, chunks
``data/root/<path>/c<i>/<j>``), written here in zarr 2's JSON style (indent 4, sorted keys),
so the stores are byte for byte what zarr 2 left; chunks are encoded with numcodecs the way
zarr 2 encodes them (filters in turn, then the compressor, in the chunk's memory order).
The last test writes with zarr 2 itself, when ``import zarr`` gives zarr 2.x.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarr3c
from zarr3c.errors import (
    MetadataError,
    NodeNameError,
    UnknownExtensionError,
    UnsupportedFeatureError,
)
from zarr3c.metadata.formats import Zarr2V3Format, detect_format
from zarr3c.metadata.zarr2v3 import (
    Zarr2V3ArrayMetadata,
    Zarr2V3ChunkKeyEncoding,
    Zarr2V3EntryPoint,
    Zarr2V3GroupMetadata,
)

PROTOCOL = "https://purl.org/zarr/spec/protocol/core/3.0"
CODEC = "https://purl.org/zarr/spec/codec/"
COMPLEX = ("https://zarr-specs.readthedocs.io/en/core-protocol-v3.0-dev/protocol/extensions/"
           "complex-dtypes/v1.0.html")

ENTRY = {"extensions": [], "metadata_encoding": PROTOCOL, "metadata_key_suffix": ".json",
         "zarr_format": PROTOCOL}


def _blosc(shuffle: int) -> dict[str, Any]:
    return {"codec": CODEC + "blosc/1.0",
            "configuration": {"blocksize": 0, "clevel": 5, "cname": "lz4", "shuffle": shuffle}}


def _array(shape: list[int], chunks: list[int], data_type: Any, fill: Any, *,
           compressor: dict[str, Any] | None = None, layout: str = "C", separator: str = "/",
           attributes: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "attributes": attributes or {},
        "chunk_grid": {"chunk_shape": chunks, "separator": separator, "type": "regular"},
        "chunk_memory_layout": layout,
        "data_type": data_type,
        "extensions": [],
        "fill_value": fill,
        "shape": shape,
    }
    if compressor is not None:
        doc["compressor"] = compressor
    if separator != "/":
        doc["dimension_separator"] = separator
    return doc


# Each array: its document as zarr 2.18 wrote it, its numcodecs compressor and filters, the
# values zarr 2 read back and the chunks zarr 2 stored ("all", or the grid coordinates).
def _arange(n: int, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(n).astype(dtype).reshape(shape)


F8BE = np.array([0.0, 1.5, 3.0, 4.5, 6.0] + [np.nan] * 4, dtype=">f8")
BOOLS = np.ones((5, 5), dtype=bool)
BOOLS[:2, :2] = False

ARRAYS: dict[str, dict[str, Any]] = {
    "i4": {
        "doc": _array([10, 7], [4, 3], "<i4", 0, compressor=_blosc(1),
                      attributes={"units": "m"}),
        "compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
        "values": _arange(70, "<i4", (10, 7)),
        "written": "all",
    },
    "sub/f8be": {
        "doc": _array([9], [4], ">f8", "NaN",
                      compressor={"codec": CODEC + "gzip/1.0", "configuration": {"level": 3}}),
        "compressor": numcodecs.GZip(level=3),
        "values": F8BE,
        "written": [(0,), (1,)],
    },
    "sub/nested/bool": {
        "doc": _array([5, 5], [2, 2], "bool", True),
        "compressor": None,
        "values": BOOLS,
        "written": [(0, 0)],
    },
    "blosc": {
        "doc": _array([20], [8], "<u2", 0, compressor=_blosc(2)),
        "compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=2),
        "values": _arange(20, "<u2", (20,)),
        "written": "all",
    },
    "zstd": {
        "doc": _array([6, 6], [3, 3], "<f4", 0.0, layout="F", compressor={
            "codec": CODEC + "zstd/1.0", "configuration": {"checksum": False, "level": 2}}),
        "compressor": numcodecs.Zstd(level=2),
        "values": _arange(36, "<f4", (6, 6)),
        "written": "all",
    },
    "zlib": {
        "doc": _array([6], [3], "<i8", None,
                      compressor={"codec": CODEC + "zlib/1.0", "configuration": {"level": 1}}),
        "compressor": numcodecs.Zlib(level=1),
        "values": np.array([1, 2, 3, 0, 0, 0], dtype="<i8"),
        "written": [(0,)],
    },
    "filters": {
        "doc": _array([8], [4], "<i4", 0,
                      compressor={"codec": CODEC + "zlib/1.0", "configuration": {"level": 1}},
                      attributes={"filters": [{"astype": "<i4", "dtype": "<i4",
                                               "id": "delta"}]}),
        "compressor": numcodecs.Zlib(level=1),
        "filters": [numcodecs.Delta(dtype="<i4", astype="<i4")],
        "values": _arange(8, "<i4", (8,)),
        "written": "all",
    },
    "dotsep": {
        "doc": _array([4, 4], [2, 2], "<i2", 0, compressor=_blosc(1), separator="."),
        "compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
        "values": np.ones((4, 4), dtype="<i2"),
        "written": "all",
    },
    "cplx": {
        "doc": _array([3], [2], {"extension": COMPLEX, "fallback": None, "type": "<c16"},
                      [1.0, 2.0], compressor=_blosc(1)),
        "compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
        "values": np.array([1j, 2, 3], dtype="<c16"),
        "written": "all",
    },
    "bec": {
        "doc": _array([3], [2], {"extension": COMPLEX, "fallback": None, "type": ">c8"},
                      ["NaN", 1.0],
                      compressor={"codec": CODEC + "zlib/1.0", "configuration": {"level": 5}}),
        "compressor": numcodecs.Zlib(level=5),
        "values": np.array([1 + 1j, -2j, complex(np.nan, 1)], dtype=">c8"),
        "written": [(0,)],
    },
    "scalar": {
        "doc": _array([], [], "<f2", "-Infinity"),
        "compressor": None,
        "values": np.array(3, dtype="<f2"),
        "written": "all",
    },
    "x/lz": {
        "doc": _array([3, 4], [2, 2], ">u4", 0, layout="F", compressor={
            "codec": CODEC + "lzma/1.0",
            "configuration": {"check": -1, "filters": None, "format": 1, "preset": None}},
            attributes={"filters": [{"astype": ">u4", "dtype": ">u4", "id": "delta"}]}),
        "compressor": numcodecs.LZMA(),
        "filters": [numcodecs.Delta(dtype=">u4")],
        "values": _arange(12, ">u4", (3, 4)),
        "written": "all",
    },
    "x/y/arr": {
        "doc": _array([5], [2], "<i2", -1, compressor=_blosc(-1)),
        "compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=-1),
        "values": _arange(5, "<i2", (5,)),
        "written": "all",
    },
}

# The v3 codec chain each array presents (and copies to the final v3 layout with).
CHAINS: dict[str, list[dict[str, Any]]] = {
    "i4": [{"name": "bytes", "configuration": {"endian": "little"}},
           {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 5,
                                               "shuffle": "shuffle", "blocksize": 0}}],
    "sub/f8be": [{"name": "bytes", "configuration": {"endian": "big"}},
                 {"name": "gzip", "configuration": {"level": 3}}],
    "sub/nested/bool": [{"name": "bytes"}],
    "blosc": [{"name": "bytes", "configuration": {"endian": "little"}},
              {"name": "blosc", "configuration": {"typesize": 2, "cname": "lz4", "clevel": 5,
                                                  "shuffle": "bitshuffle", "blocksize": 0}}],
    "zstd": [{"name": "transpose", "configuration": {"order": [1, 0]}},
             {"name": "bytes", "configuration": {"endian": "little"}},
             {"name": "zstd", "configuration": {"level": 2, "checksum": False}}],
    "zlib": [{"name": "bytes", "configuration": {"endian": "little"}},
             {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
    "filters": [{"name": "numcodecs.delta", "configuration": {"astype": "<i4", "dtype": "<i4"}},
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
    "scalar": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "bec": [{"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "numcodecs.zlib", "configuration": {"level": 5}}],
    "x/lz": [{"name": "transpose", "configuration": {"order": [1, 0]}},
             {"name": "numcodecs.delta", "configuration": {"astype": ">u4", "dtype": ">u4"}},
             {"name": "bytes", "configuration": {"endian": "big"}},
             {"name": "numcodecs.lzma", "configuration": {"check": -1, "filters": None,
                                                          "format": 1, "preset": None}}],
    # shuffle -1 (numcodecs' AUTOSHUFFLE) is byte shuffle for elements wider than a byte
    "x/y/arr": [{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "blosc", "configuration": {"typesize": 2, "cname": "lz4", "clevel": 5,
                                                    "shuffle": "shuffle", "blocksize": 0}}],
}

GROUPS = {"": {"root_attr": {"a": 1}}, "sub": {"x": "y"}, "sub/nested": {}}
IMPLICIT_GROUPS = ("x", "x/y")


def zarr2_json(doc: dict[str, Any]) -> bytes:
    """zarr 2's ``json_dumps``."""
    return json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=True,
                      separators=(",", ": ")).encode("ascii")


def _meta_key(path: str, node_type: str) -> str:
    return f"meta/root/{path}.{node_type}.json" if path else f"meta/root.{node_type}.json"


def _encode_chunk(spec: dict[str, Any], block: np.ndarray) -> bytes:
    """A chunk as zarr 2 encodes it: filters in turn, then the compressor."""
    data: Any = block
    for f in spec.get("filters", []):
        data = f.encode(data)
    if spec["compressor"] is not None:
        return bytes(spec["compressor"].encode(data))
    return np.asarray(data).tobytes(order="A")


def _doc_dtype(doc: dict[str, Any]) -> np.dtype:
    dt = doc["data_type"]
    return np.dtype(dt["type"] if isinstance(dt, dict) else dt)


def _doc_fill(value: Any) -> Any:
    if isinstance(value, list):
        return complex(_doc_fill(value[0]), _doc_fill(value[1]))
    specials = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}
    return 0 if value is None else specials.get(value, value)


def _chunks(spec: dict[str, Any]) -> dict[str, bytes]:
    """The chunk keys and bytes zarr 2 stored for the array ``spec``."""
    doc = spec["doc"]
    values = spec["values"]
    chunk_shape = tuple(doc["chunk_grid"]["chunk_shape"])
    sep = doc["chunk_grid"]["separator"]
    dtype = _doc_dtype(doc)
    fill = _doc_fill(doc["fill_value"])
    grid = [-(-s // c) for s, c in zip(values.shape, chunk_shape, strict=True)]
    out = {}
    for coords in np.ndindex(*grid):
        if spec["written"] != "all" and coords not in spec["written"]:
            continue
        block = np.full(chunk_shape, fill, dtype=dtype, order=doc["chunk_memory_layout"])
        sel = tuple(slice(i * c, min((i + 1) * c, s))
                    for i, c, s in zip(coords, chunk_shape, values.shape, strict=True))
        block[tuple(slice(0, s.stop - s.start) for s in sel)] = values[sel]
        key = "c" + (sep.join(map(str, coords)) if coords else "0")
        out[key] = _encode_chunk(spec, block)
    return out


def _fill_zarr2(store: zarr3c.Store) -> None:
    store.set("zarr.json", zarr2_json(ENTRY))
    for path, attrs in GROUPS.items():
        store.set(_meta_key(path, "group"), zarr2_json({"attributes": attrs}))
    for path, spec in ARRAYS.items():
        store.set(_meta_key(path, "array"), zarr2_json(spec["doc"]))
        for key, data in _chunks(spec).items():
            store.set(f"data/root/{path}/{key}", data)


@pytest.fixture
def z2(store: zarr3c.Store) -> zarr3c.Store:
    """A MemoryStore / LocalStore holding the hierarchy as zarr 2.18 wrote it."""
    _fill_zarr2(store)
    return store


def _expected(path: str) -> np.ndarray:
    return np.asarray(ARRAYS[path]["values"])


# -- reading -------------------------------------------------------------------------------------


def test_entry_point_is_detected(z2) -> None:
    fmt = detect_format(z2)
    assert isinstance(fmt, Zarr2V3Format) and fmt.zarr_format == "zarr2-v3"
    root = zarr3c.open_group(z2, mode="r")
    assert root.zarr_format == "zarr2-v3"
    assert root.attrs.asdict() == {"root_attr": {"a": 1}}


@pytest.mark.parametrize("path", sorted(ARRAYS))
def test_arrays_read_as_zarr2_wrote_them(z2, path) -> None:
    a = zarr3c.open_array(z2, path, mode="r")
    expected = _expected(path)
    assert a.shape == expected.shape
    assert a.dtype == expected.dtype.newbyteorder("=")  # data is handed out native-endian
    assert a.chunks == tuple(ARRAYS[path]["doc"]["chunk_grid"]["chunk_shape"])
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize(
    ("path", "fill"),
    [("i4", 0), ("sub/f8be", np.nan), ("sub/nested/bool", True), ("zlib", 0),
     ("cplx", 1 + 2j), ("bec", complex(np.nan, 1)), ("scalar", -np.inf), ("x/y/arr", -1)],
    ids=["int", "nan", "bool-true", "null-is-zero", "complex", "complex-nan", "-inf", "neg"],
)
def test_fill_values(z2, path, fill) -> None:
    a = zarr3c.open_array(z2, path, mode="r")
    np.testing.assert_array_equal(a.fill_value, np.array(fill, dtype=a.dtype))


@pytest.mark.parametrize("path", sorted(CHAINS))
def test_codec_chain_is_the_v3_equivalent(z2, path) -> None:
    a = zarr3c.open_array(z2, path, mode="r")
    assert [dict(c) for c in a.metadata.codecs] == CHAINS[path]
    assert [c.to_dict() for c in a.codecs] == CHAINS[path]


@pytest.mark.parametrize(
    ("data_type", "compressor", "filters", "expected"),
    [
        ("u1", ("blosc", {"cname": "zstd", "clevel": 1, "shuffle": -1, "blocksize": 0}), [],
         [{"name": "bytes"}, {"name": "blosc", "configuration": {
             "typesize": 1, "cname": "zstd", "clevel": 1, "shuffle": "bitshuffle",
             "blocksize": 0}}]),
        (">i8", ("blosc", {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}), [],
         [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "blosc",
          "configuration": {"typesize": 8, "cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                            "blocksize": 0}}]),
        ("<i4", ("blosc", {"shuffle": 0}), [{"id": "delta", "dtype": "<i4", "astype": ">i2"}],
         [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": ">i2"}},
          {"name": "bytes", "configuration": {"endian": "big"}},
          {"name": "blosc", "configuration": {"typesize": 2, "cname": "lz4", "clevel": 5,
                                              "shuffle": "noshuffle", "blocksize": 0}}]),
        ("<f4", ("gzip", {}), [],
         [{"name": "bytes", "configuration": {"endian": "little"}},
          {"name": "gzip", "configuration": {"level": 1}}]),
        ("<f4", ("zstd", {"level": 5}), [],
         [{"name": "bytes", "configuration": {"endian": "little"}},
          {"name": "zstd", "configuration": {"level": 5, "checksum": False}}]),
        ("<u2", ("bz2", {"level": 9}), [],
         [{"name": "bytes", "configuration": {"endian": "little"}},
          {"name": "numcodecs.bz2", "configuration": {"level": 9}}]),
        ("bool", ("lz4", {"acceleration": 1}), [{"id": "packbits"}],
         [{"name": "numcodecs.packbits"}, {"name": "bytes"},
          {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]),
        ("<i2", None, [{"id": "zlib", "level": 1}, {"id": "crc32"}],
         [{"name": "bytes", "configuration": {"endian": "little"}},
          {"name": "numcodecs.zlib", "configuration": {"level": 1}},
          {"name": "numcodecs.crc32"}]),
    ],
    ids=["autoshuffle-1-byte", "autoshuffle-big-endian", "filter-sets-typesize-and-endian",
         "gzip-defaults", "zstd-without-checksum", "bz2", "packbits", "bytes-filters"],
)
def test_compressors_and_filters_map_to_v3(data_type, compressor, filters, expected) -> None:
    attrs = {"filters": filters} if filters else {}
    comp = None if compressor is None else {"codec": f"{CODEC}{compressor[0]}/1.0",
                                            "configuration": compressor[1]}
    md = Zarr2V3ArrayMetadata.from_dict(_array([8], [4], data_type, 0, compressor=comp,
                                               attributes=attrs) | (
        {"fill_value": False} if data_type == "bool" else {}))
    assert [dict(c) for c in md.codecs] == expected
    assert md.attributes == {}
    # and it decodes what numcodecs encoded the way zarr 2 does
    store = zarr3c.MemoryStore()
    _fill_one(store, md.to_dict(), np.arange(8) % 2 if data_type == "bool" else np.arange(8))
    np.testing.assert_array_equal(zarr3c.open_array(store, "a", mode="r")[...],
                                  np.arange(8) % 2 if data_type == "bool" else np.arange(8))


def _fill_one(store: zarr3c.Store, doc: dict[str, Any], values: np.ndarray) -> None:
    spec: dict[str, Any] = {"doc": doc, "values": values.astype(_doc_dtype(doc)),
                            "written": "all", "filters": [numcodecs.get_codec(f) for f in
                                                          doc["attributes"].get("filters", [])]}
    comp = doc.get("compressor")
    spec["compressor"] = None if comp is None else numcodecs.get_codec(
        {"id": comp["codec"][len(CODEC):].split("/")[0], **comp["configuration"]})
    store.set("zarr.json", zarr2_json(ENTRY))
    store.set("meta/root/a.array.json", zarr2_json(doc))
    for key, data in _chunks(spec).items():
        store.set(f"data/root/a/{key}", data)


def test_hierarchy_with_explicit_and_implicit_groups(z2) -> None:
    root = zarr3c.open_group(z2, mode="r")
    assert sorted(root) == ["bec", "blosc", "cplx", "dotsep", "filters", "i4", "scalar",
                            "sub", "x", "zlib", "zstd"]
    members = dict(root.members(max_depth=None))
    assert set(members) == set(ARRAYS) | {"sub", "sub/nested", *IMPLICIT_GROUPS}
    for path in ARRAYS:
        assert isinstance(members[path], zarr3c.Array)
    for path, attrs in GROUPS.items():
        if path:
            assert isinstance(members[path], zarr3c.Group)
            assert members[path].attrs.asdict() == attrs
    for path in IMPLICIT_GROUPS:  # no document: zarr 2 wrote none for an array's parents
        assert z2.get(_meta_key(path, "group")) is None
        assert isinstance(zarr3c.open(z2, path, mode="r"), zarr3c.Group)
        assert members[path].attrs.asdict() == {}
    assert "x/y" in root and "x/nope" not in root
    tree = root.tree()
    assert "└── arr (5,) int16" in tree and "nested" in tree
    assert isinstance(zarr3c.open(z2, "sub/nested/bool", mode="r"), zarr3c.Array)


def test_filters_are_codecs_not_attributes(z2) -> None:
    a = zarr3c.open_array(z2, "x/lz", mode="r+")
    assert a.attrs.asdict() == {}
    a.attrs["units"] = "K"
    doc = json.loads(bytes(z2.get("meta/root/x/lz.array.json")))
    assert doc["attributes"] == {"units": "K", "filters": [
        {"astype": ">u4", "dtype": ">u4", "id": "delta"}]}
    with pytest.raises(MetadataError, match="attributes.filters"):
        a.attrs["filters"] = []
    b = zarr3c.open_array(z2, "i4", mode="r+")  # no filters: still zarr 2's filters field
    with pytest.raises(MetadataError, match="attributes.filters"):
        b.attrs["filters"] = [{"id": "delta", "dtype": "<i4"}]
    assert b.metadata.codecs == tuple(CHAINS["i4"])


@pytest.mark.parametrize("path", sorted(ARRAYS))
def test_documents_round_trip_byte_for_byte(z2, path) -> None:
    key = _meta_key(path, "array")
    md = Zarr2V3ArrayMetadata.from_json(z2.get(key), source=key)
    assert Zarr2V3ArrayMetadata.from_dict(md.to_dict()) == md
    assert md.to_json() == zarr2_json(ARRAYS[path]["doc"])


def test_entry_point_and_group_documents_round_trip() -> None:
    entry = Zarr2V3EntryPoint.from_dict(ENTRY)
    assert entry.to_json() == zarr2_json(ENTRY)
    group = Zarr2V3GroupMetadata.from_dict({"attributes": {"x": "y"}})
    assert group.to_json() == zarr2_json({"attributes": {"x": "y"}})


def test_root_array(store) -> None:
    # zarr.create(store=KVStoreV3(...), zarr_version=3) with no path: meta/root.array.json
    store.set("zarr.json", zarr2_json(ENTRY))
    store.set("meta/root.array.json", zarr2_json(_array([3], [2], "<i4", 0)))
    store.set("data/root/c0", np.array([1, 1], "<i4").tobytes())
    store.set("data/root/c1", np.array([1, 0], "<i4").tobytes())
    a = zarr3c.open(store, mode="r")
    assert isinstance(a, zarr3c.Array) and a.path == ""
    np.testing.assert_array_equal(a[...], [1, 1, 1])
    assert a.nchunks_initialized == 2


@pytest.mark.parametrize(
    ("ndim", "coords", "sep", "key"),
    [(2, (1, 23), "/", "c1/23"), (3, (0, 1, 2), ".", "c0.1.2"), (1, (5,), "/", "c5"),
     (0, (), "/", "c0")],
    ids=["2d", "dot", "1d", "0d-is-c0"],
)
def test_chunk_keys(ndim, coords, sep, key) -> None:
    enc = Zarr2V3ChunkKeyEncoding(separator=sep)
    assert enc.encode_chunk_key(coords) == key
    assert enc.decode_chunk_key(key, ndim=ndim) == coords
    assert enc.decode_chunk_key("zarr.json", ndim=ndim) is None


# -- writing into a zarr 2 hierarchy ---------------------------------------------------------------


def _decode_as_zarr2(doc: dict[str, Any], data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """Decode a chunk the way zarr 2 does (compressor, filters in reverse, memory order)."""
    out: Any = data
    comp = doc.get("compressor")
    if comp is not None:
        codec_id = comp["codec"][len(CODEC):].split("/")[0]
        out = numcodecs.get_codec({"id": codec_id, **comp["configuration"]}).decode(out)
    for f in reversed(doc["attributes"].get("filters", [])):
        out = numcodecs.get_codec(f).decode(out)
    return np.frombuffer(np.asarray(out).tobytes(order="A"), dtype=_doc_dtype(doc)).reshape(
        shape, order=doc["chunk_memory_layout"])


@pytest.mark.parametrize("path", ["x/lz", "zstd", "sub/f8be", "filters", "bec", "x/y/arr"])
def test_chunks_written_are_read_by_zarr2s_decoding(z2, path) -> None:
    a = zarr3c.open_array(z2, path, mode="r+")
    new = (_expected(path) + 1).astype(_expected(path).dtype)
    a[...] = new
    doc = ARRAYS[path]["doc"]
    chunk_shape = tuple(doc["chunk_grid"]["chunk_shape"])  # chunk 0 lies inside each array
    key = a.chunk_key((0,) * a.ndim)
    assert key == f"data/root/{path}/c" + doc["chunk_grid"]["separator"].join("0" * a.ndim)
    block = _decode_as_zarr2(doc, bytes(z2.get(key)), chunk_shape)
    np.testing.assert_array_equal(block, new[tuple(slice(0, c) for c in chunk_shape)])
    assert json.loads(bytes(z2.get(_meta_key(path, "array")))) == doc  # document untouched


def test_new_nodes_are_written_as_zarr2_writes_them(z2) -> None:
    root = zarr3c.open_group(z2, mode="r+")
    g = root.create_group("made", attributes={"k": 1})
    assert z2.get("meta/root/made.group.json") == zarr2_json({"attributes": {"k": 1}})
    # the same arrays zarr 2 wrote as "zstd" and "sub/f8be": the same document, byte for byte
    z = g.create_array("zstd", shape=(6, 6), chunks=(3, 3), dtype="float32", order="F",
                       compressors=[{"name": "zstd", "configuration": {"level": 2}}])
    assert z2.get("meta/root/made/zstd.array.json") == zarr2_json(ARRAYS["zstd"]["doc"])
    f = g.create_array("f8be", shape=(9,), chunks=(4,), dtype="float64", fill_value=np.nan,
                       serializer={"name": "bytes", "configuration": {"endian": "big"}},
                       compressors=[{"name": "gzip", "configuration": {"level": 3}}])
    assert z2.get("meta/root/made/f8be.array.json") == zarr2_json(ARRAYS["sub/f8be"]["doc"])
    # numcodecs' own gzip is the same compressor; a "." key separator is zarr 2's too
    n = g.create_array("f8be_numcodecs", shape=(9,), chunks=(4,), dtype="float64",
                       fill_value=np.nan,
                       serializer={"name": "bytes", "configuration": {"endian": "big"}},
                       compressors=[{"name": "numcodecs.gzip", "configuration": {"level": 3}}])
    assert z2.get("meta/root/made/f8be_numcodecs.array.json") == zarr2_json(
        ARRAYS["sub/f8be"]["doc"])
    assert n.metadata.codecs == tuple(CHAINS["sub/f8be"])
    dot = g.create_array("dotsep", shape=(4, 4), chunks=(2, 2), dtype="int16",
                         chunk_key_encoding={"name": "default",
                                             "configuration": {"separator": "."}},
                         compressors=[{"name": "blosc", "configuration": {
                             "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}])
    assert z2.get("meta/root/made/dotsep.array.json") == zarr2_json(ARRAYS["dotsep"]["doc"])
    dot[...] = 1
    assert sorted(k for k in z2.list() if k.startswith("data/root/made/dotsep/")) == [
        f"data/root/made/dotsep/{k}" for k in sorted(_chunks(ARRAYS["dotsep"]))]
    z[...] = _expected("zstd")
    f[:5] = F8BE[:5]
    for path in ("zstd", "f8be"):
        src = zarr3c.open_array(z2, "sub/f8be" if path == "f8be" else path, mode="r")
        np.testing.assert_array_equal(zarr3c.open_array(z2, f"made/{path}", mode="r")[...],
                                      src[...])
    # filters go to attributes["filters"], the last compressor to "compressor"
    d = root.create_array("made/deep/delta", shape=(8,), chunks=(4,), dtype="int32",
                          filters=[{"name": "numcodecs.delta", "configuration": {
                              "dtype": "<i4", "astype": "<i4"}}],
                          compressors=[{"name": "numcodecs.zlib",
                                        "configuration": {"level": 1}}])
    assert z2.get("meta/root/made/deep/delta.array.json") == zarr2_json(
        ARRAYS["filters"]["doc"])
    assert z2.get("meta/root/made/deep.group.json") is None  # an implicit parent, as zarr 2
    d[...] = np.arange(8)
    assert z2.get("data/root/made/deep/delta/c1") == _chunks(ARRAYS["filters"])["c1"]


def test_erase_member_takes_exactly_its_keys(z2) -> None:
    root = zarr3c.open_group(z2, mode="r+")
    before = set(z2.list())
    del root["sub"]
    gone = before - set(z2.list())
    assert gone == {k for k in before if k.startswith(("meta/root/sub", "data/root/sub/"))}
    assert "meta/root/sub.group.json" in gone and "sub" not in root


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"shards": (4,)}, "sharding_indexed"),
     ({"compressors": [{"name": "crc32c"}]}, "crc32c"),
     ({"dtype": "r16"}, "data_type"),
     ({"attributes": {"filters": []}}, "attributes.filters")],
    ids=["sharding", "crc32c", "raw-bits", "filters-attribute"],
)
def test_arrays_zarr2_cannot_hold_are_refused_before_writing(z2, kwargs, match) -> None:
    root = zarr3c.open_group(z2, mode="r+")
    before = {k: z2.get(k) for k in z2.list()}
    args = {"shape": (8,), "chunks": (2,), "dtype": "int16", **kwargs}
    with pytest.raises(MetadataError, match=match):
        root.create_array("new", **args)
    assert {k: z2.get(k) for k in z2.list()} == before


def test_node_names_are_zarr2_store_keys(z2) -> None:
    with pytest.raises(NodeNameError, match="zarr2-v3"):
        zarr3c.open_group(z2, mode="r+").create_group("a b")


# -- converting to the final v3 layout -----------------------------------------------------------


def test_copy_to_final_v3(z2) -> None:
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(z2, dst, zarr_format=3)
    assert out.zarr_format == 3 and out.attrs.asdict() == {"root_attr": {"a": 1}}
    assert json.loads(bytes(dst.get("zarr.json")))["node_type"] == "group"
    for path in ARRAYS:
        a = zarr3c.open_array(dst, path, mode="r")
        assert a.zarr_format == 3
        np.testing.assert_array_equal(a[...], _expected(path))
        np.testing.assert_array_equal(
            a.fill_value, zarr3c.open_array(z2, path, mode="r").fill_value)
        doc = json.loads(bytes(dst.get(f"{path}/zarr.json")))
        assert doc["codecs"] == CHAINS.get(path, doc["codecs"])
        assert "filters" not in doc["attributes"]
    for path in ("sub", "sub/nested", *IMPLICIT_GROUPS):
        assert json.loads(bytes(dst.get(f"{path}/zarr.json")))["node_type"] == "group"
    # the encoded chunks were copied as they are: same chain, new keys
    assert dst.get("x/lz/c/1/1") == z2.get("data/root/x/lz/c1/1")
    assert dst.get("scalar/c") == z2.get("data/root/scalar/c0")
    assert zarr3c.open_array(dst, "i4", mode="r").attrs.asdict() == {"units": "m"}


def test_copy_opens_in_zarr_python_3(z2, tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    if not zarr.__version__.startswith("3."):
        pytest.skip(f"needs zarr-python 3 (found {zarr.__version__})")
    zarr3c.copy(z2, tmp_path / "v3", zarr_format=3)
    g = zarr.open_group(str(tmp_path / "v3"), mode="r")
    for path in ("i4", "sub/f8be", "zstd", "x/lz", "cplx", "scalar", "filters"):
        np.testing.assert_array_equal(g[path][...], _expected(path))


# -- bad input -------------------------------------------------------------------------------------

I4_DOC = ARRAYS["i4"]["doc"]


def _with(**changes: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(I4_DOC))
    for field, value in changes.items():
        if value is None and field != "fill_value":
            doc.pop(field, None)
        else:
            doc[field] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        (_with(order="C"), MetadataError, r"unknown fields \['order'\]"),
        (_with(shape=None), MetadataError, "shape: is required"),
        (_with(compressor={"codec": CODEC, "configuration": {}}), UnknownExtensionError,
         "compressor.codec: unknown compressor codec 'https://purl.org/zarr/spec/codec/'"),
        (_with(compressor={"codec": CODEC + "zfpy/1.0", "configuration": {}}),
         UnknownExtensionError, "compressor.codec"),
        (_with(compressor={"codec": CODEC + "gzip/2.0", "configuration": {"level": 1}}),
         UnknownExtensionError, "compressor.codec"),
        (_with(compressor={"codec": CODEC + "gzip/1.0", "configuration": {"level": 1},
                           "level": 1}), MetadataError, r"compressor: unknown fields \['level'\]"),
        (_with(compressor={"codec": CODEC + "gzip/1.0", "configuration": 1}), MetadataError,
         "compressor.configuration"),
        (_with(compressor={"codec": CODEC + "blosc/1.0", "configuration": {"clevel": 99}}),
         MetadataError, "compressor.configuration.clevel"),
        (_with(compressor={"codec": CODEC + "zlib/1.0", "configuration": {"lvl": 1}}),
         MetadataError, "compressor.configuration"),
        (_with(compressor={"codec": CODEC + "zlib/1.0", "configuration": {"id": "gzip"}}),
         MetadataError, "compressor.configuration.id"),
        (_with(attributes={"filters": {"id": "delta"}}), MetadataError, "attributes.filters"),
        (_with(attributes={"filters": [{"id": "nope"}]}), UnknownExtensionError,
         r"attributes.filters\[0\]"),
        (_with(attributes={"filters": [{"dtype": "<i4"}]}), MetadataError,
         r"attributes.filters\[0\]"),
        (_with(attributes={"filters": [{"id": "delta", "dtype": "<i4", "x": 1}]}),
         MetadataError, r"attributes.filters\[0\].configuration"),
        (_with(data_type={"extension": "x", "type": "<M8[s]", "fallback": None}),
         UnknownExtensionError, "data_type.type: data type '<M8\\[s\\]'"),
        (_with(data_type={"extension": "x", "type": "|S3", "fallback": None, "more": 1}),
         MetadataError, r"data_type: unknown fields \['more'\]"),
        (_with(data_type="|S3"), UnknownExtensionError, "data_type"),
        (_with(data_type="<U4"), UnknownExtensionError, "data_type"),
        (_with(data_type={"extension": "x", "type": [["a", "<i4"]], "fallback": None}),
         UnknownExtensionError, "data_type.type"),
        (_with(data_type="int33"), UnknownExtensionError, "data_type"),
        (_with(chunk_memory_layout="X"), MetadataError, "chunk_memory_layout"),
        (_with(chunk_grid={"chunk_shape": [4, 3], "separator": "-", "type": "regular"}),
         MetadataError, "chunk_grid.separator"),
        (_with(chunk_grid={"chunk_shape": [4], "separator": "/", "type": "regular"}),
         MetadataError, "chunk_grid"),
        (_with(dimension_separator="."), MetadataError, "dimension_separator"),
        (_with(fill_value="nope"), MetadataError, "fill_value"),
        (_with(storage_transformers=[{"extension": "x", "type": "indexed"}]),
         UnsupportedFeatureError, r"storage_transformers\[0\]"),
        (_with(extensions=[{"extension": "http://x", "must_understand": True}]),
         UnknownExtensionError, r"extensions\[0\]"),
    ],
    ids=["unknown-field", "no-shape", "bare-codec-prefix", "zfpy-uri", "codec-version",
         "compressor-field", "config-not-object", "blosc-clevel", "zlib-bad-config",
         "config-id-mismatch", "filters-not-list", "unknown-filter", "filter-without-id",
         "filter-bad-config", "datetime", "dtype-field", "bytes", "unicode", "structured",
         "bad-dtype", "bad-layout", "bad-separator", "grid-rank", "dimension-separator",
         "bad-fill", "storage-transformer", "must-understand"],
)
def test_bad_array_documents_name_key_and_field(store, doc, error, match) -> None:
    store.set("zarr.json", zarr2_json(ENTRY))
    store.set("meta/root/bad.array.json", zarr2_json(doc))
    with pytest.raises(error, match=match) as info:
        zarr3c.open_array(store, "bad", mode="r")
    assert "meta/root/bad.array.json" in str(info.value)


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        ({**ENTRY, "more": 1}, MetadataError, r"unknown fields \['more'\]"),
        ({**ENTRY, "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/4.0"},
         UnknownExtensionError, "metadata_encoding"),
        ({**ENTRY, "metadata_key_suffix": "/x"}, MetadataError, "metadata_key_suffix"),
        ({**ENTRY, "extensions": [{"extension": "http://x", "must_understand": True}]},
         UnknownExtensionError, r"extensions\[0\]"),
    ],
    ids=["unknown-field", "encoding", "suffix", "must-understand"],
)
def test_bad_entry_points_name_key_and_field(doc, error, match) -> None:
    store = zarr3c.MemoryStore()
    store.set("zarr.json", zarr2_json(doc))
    with pytest.raises(error, match=match) as info:
        zarr3c.open_group(store, mode="r")
    assert "zarr.json" in str(info.value)


def test_bad_group_document_names_key_and_field() -> None:
    store = zarr3c.MemoryStore()
    store.set("zarr.json", zarr2_json(ENTRY))
    store.set("meta/root/g.group.json", zarr2_json({"attributes": {}, "zarr_format": 3}))
    with pytest.raises(MetadataError, match=r"meta/root/g.group.json.*\['zarr_format'\]"):
        zarr3c.open_group(store, "g", mode="r")


def test_other_metadata_key_suffix() -> None:
    store = zarr3c.MemoryStore()
    store.set("zarr.json", zarr2_json({**ENTRY, "metadata_key_suffix": ".meta"}))
    store.set("meta/root/a.array.json", b"not read")
    store.set("meta/root/a.array.meta", zarr2_json(_array([2], [2], "u1", 7)))
    root = zarr3c.open_group(store, mode="r")
    assert list(root) == ["a"]
    np.testing.assert_array_equal(root["a"][...], [7, 7])


# -- zarr-python 2 itself ----------------------------------------------------------------------------


def _zarr2_module() -> Any:
    """zarr-python 2.x with its experimental v3 API switched on, or a skip."""
    os.environ.setdefault("ZARR_V3_EXPERIMENTAL_API", "1")
    try:
        import zarr
    except ImportError:
        pytest.skip("zarr-python is not installed")
    if not zarr.__version__.startswith("2."):
        pytest.skip(f"needs zarr-python 2.11-2.18 for its v3 API (found {zarr.__version__})")
    try:
        import zarr._storage.store as z2store
        from zarr._storage.v3 import DirectoryStoreV3  # noqa: F401
    except ImportError:
        pytest.skip(f"zarr {zarr.__version__} has no experimental v3 API")
    z2store.v3_api_available = True  # (read at import time from the environment)
    return zarr


def _blosc_with_typesize() -> None:
    try:
        numcodecs.Blosc(typesize=4)
    except TypeError:
        pytest.skip(f"zarr3c's blosc codec needs numcodecs>=0.16 (Blosc typesize); found "
                    f"{numcodecs.__version__}, which zarr 2.18 requires (<0.16)")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_zarr2_writes_zarr3c_reads_and_back(tmp_path) -> None:
    zarr = _zarr2_module()
    from zarr._storage.v3 import DirectoryStoreV3

    path = tmp_path / "z2"
    s = DirectoryStoreV3(str(path))
    g = zarr.open_group(s, mode="w", zarr_version=3, path="/")
    g.attrs["title"] = "zarr 2"
    a = g.create_dataset("grp/a", shape=(7, 5), chunks=(3, 2), dtype=">i4", order="F",
                         compressor=numcodecs.Zstd(level=3),
                         filters=[numcodecs.Delta(dtype=">i4")], fill_value=-5)
    a[:5] = np.arange(25).reshape(5, 5)
    b = zarr.create(shape=(4,), chunks=(3,), dtype="f4", store=s, path="b", zarr_version=3,
                    compressor=numcodecs.GZip(level=2), fill_value=np.nan,
                    dimension_separator=".")
    b[1:] = [1.0, 2.0, 3.0]
    c = zarr.create(shape=(), dtype="bool", store=s, path="deep/c", zarr_version=3,
                    compressor=None, fill_value=False)
    c[()] = True
    d = zarr.create(shape=(3, 3), chunks=(2, 2), dtype="<c8", store=s, path="d", zarr_version=3,
                    compressor=numcodecs.LZ4(), fill_value=1j)
    d[0] = [1, 2, 3]

    root = zarr3c.open_group(path, mode="r+")
    assert root.zarr_format == "zarr2-v3" and root.attrs["title"] == "zarr 2"
    for name, z in (("grp/a", a), ("b", b), ("d", d)):
        np.testing.assert_array_equal(root[name][...], z[...])
    assert bool(root["deep/c"][()]) is True
    assert sorted(root) == ["b", "d", "deep", "grp"]

    # zarr3c writes into the hierarchy; zarr 2 reads what it wrote
    root["grp/a"][5:] = -np.arange(10).reshape(2, 5)
    root["b"].attrs["units"] = "m"
    n = root.create_array("n", shape=(5, 3), chunks=(2, 2), dtype="uint16", order="F",
                          fill_value=3, compressors=[{"name": "zstd"}],
                          filters=[{"name": "numcodecs.delta",
                                    "configuration": {"dtype": "<u2"}}])
    n[:3] = 9
    a2 = zarr.open_array(s, path="grp/a", mode="r", zarr_version=3)
    np.testing.assert_array_equal(a2[...], root["grp/a"][...])
    assert dict(zarr.open_array(s, path="b", mode="r", zarr_version=3).attrs) == {"units": "m"}
    n2 = zarr.open_array(s, path="n", mode="r", zarr_version=3)
    assert n2.order == "F" and n2.fill_value == 3 and n2.filters == [numcodecs.Delta("<u2")]
    np.testing.assert_array_equal(n2[...], n[...])

    out = zarr3c.copy(path, tmp_path / "v3", zarr_format=3)
    np.testing.assert_array_equal(out["grp/a"][...], a2[...])


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_zarr2_blosc_both_ways(tmp_path) -> None:
    zarr = _zarr2_module()
    _blosc_with_typesize()
    from zarr._storage.v3 import DirectoryStoreV3

    s = DirectoryStoreV3(str(tmp_path / "z2"))
    a = zarr.create(shape=(9,), chunks=(4,), dtype="<i8", store=s, path="a", zarr_version=3)
    a[:] = np.arange(9)  # zarr 2's default compressor: blosc lz4, shuffle
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "z2", "a", mode="r")[...],
                                  np.arange(9))
    root = zarr3c.open_group(tmp_path / "z2", mode="r+")
    b = root.create_array("b", shape=(9,), chunks=(4,), dtype="uint8",
                          compressors=[{"name": "blosc"}])
    b[...] = np.arange(9)
    np.testing.assert_array_equal(zarr.open_array(s, path="b", mode="r", zarr_version=3)[...],
                                  np.arange(9))


def test_top_level_functions_create_in_the_zarr2_v3_layout() -> None:
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, "x/y", shape=(4, 4), dtype="<f8", chunks=(2, 2),
                            zarr_format="zarr2-v3")
    a[...] = np.arange(16).reshape(4, 4)
    assert store.exists("meta/root/x/y.array.json") and store.exists("data/root/x/y/c1/1")
    np.testing.assert_array_equal(zarr3c.open_array(store, "x/y")[...],
                                  np.arange(16).reshape(4, 4))
    with pytest.raises(zarr3c.errors.UnsupportedFormatError, match="zarr2-v3"):
        zarr3c.create_group(store, "g")
