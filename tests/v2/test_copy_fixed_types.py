"""Copying Zarr v2 arrays of fixed-length strings, bytes, raw bytes, structs and times to
Zarr v3 and back (``zarr3c.copy``, ``python -m zarr3c copy``).

Each v2 ``dtype`` (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#data-type-encoding)
becomes the v3 extension data type zarr-python 3.4 creates for the same numpy dtype
(https://github.com/zarr-developers/zarr-extensions/tree/main/data-types), its v2 fill value
(https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#fill-value-encoding) that type's
fill value, and the stored byte order the ``bytes`` codec's ``endian``, so that the chunks move
as they are.  The v2 arrays are written here as zarr-python 2 writes them (documents and chunk
bytes by hand, numpy as the oracle); reading the copy back must give the same elements,
missing chunks included.
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarr3c
from zarr3c.__main__ import main
from zarr3c.errors import MetadataError
from zarr3c.metadata import data_type_from_numpy

NAT = -(2**63)


def _np_dtype(dtype_json: Any) -> np.dtype:
    """The numpy dtype of a v2 ``dtype`` (a type string or a list of fields)."""
    if isinstance(dtype_json, list):
        return np.dtype([(f[0], _np_dtype(f[1]), *(tuple(s) for s in f[2:]))
                         for f in dtype_json])
    return np.dtype(dtype_json)


def _v2_fill(dtype: np.dtype, fill_json: Any) -> np.ndarray:
    """The v2 fill value as a 0-d array of the stored dtype, decoded as the v2 spec says:
    null is zero bytes (NaT for ``M``/``m``, as zarr-python 3 reads it), ``U`` the string, ``M``/``m`` the count of
    units, others base64 of the bytes (trailing NULs dropped for ``S``)."""
    if fill_json is None and dtype.kind in "Mm":
        return np.array(NAT, "i8").view(dtype.newbyteorder("=")).astype(dtype)
    if fill_json is None:
        return np.zeros((), dtype)
    if dtype.kind == "U":
        return np.array(fill_json, dtype)
    if dtype.kind in "Mm":
        return np.array(fill_json, "i8").view(dtype.newbyteorder("=")).astype(dtype)
    raw = base64.b64decode(fill_json).ljust(dtype.itemsize, b"\0")
    return np.frombuffer(raw, dtype).reshape(())


def _v2_fill_json(fill: np.ndarray) -> Any:
    """The v2 JSON form of a 0-d array's value (the inverse of :func:`_v2_fill`)."""
    dtype = fill.dtype
    if dtype.kind == "U":
        return str(fill[()])
    if dtype.kind in "Mm":
        return int(fill.astype(dtype.newbyteorder("=")).view("i8"))
    raw = fill.tobytes()
    return base64.b64encode(raw.rstrip(b"\0") if dtype.kind == "S" else raw).decode()


def _write_v2(store: Any, path: str, dtype_json: Any, fill_json: Any, data: np.ndarray,
              chunks: tuple[int, ...], *, written: Any = None, order: str = "C",
              compressor: Any = None) -> None:
    """A Zarr v2 array as zarr-python 2 writes it: ``data`` (in the stored dtype) cut into
    full-size chunks of ``order``; only the chunks in ``written`` (default: all) stored."""
    prefix = f"{path}/" if path else ""
    store.set(prefix + ".zarray", json.dumps({
        "zarr_format": 2, "shape": list(data.shape), "chunks": list(chunks),
        "dtype": dtype_json, "fill_value": fill_json, "order": order, "filters": None,
        "compressor": None if compressor is None else compressor.get_config(),
    }).encode())
    grid = [range(-(-n // c)) for n, c in zip(data.shape, chunks, strict=True)]
    for coords in itertools.product(*grid):
        if written is not None and coords not in written:
            continue
        chunk = np.zeros(chunks, data.dtype)
        region = tuple(slice(i * c, min((i + 1) * c, n))
                       for i, c, n in zip(coords, chunks, data.shape, strict=True))
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
        raw = chunk.tobytes(order=order)
        if compressor is not None:
            raw = compressor.encode(raw)
        store.set(prefix + (".".join(map(str, coords)) or "0"), bytes(raw))


def _expected(data: np.ndarray, fill: np.ndarray, chunks: tuple[int, ...],
              written: Any) -> np.ndarray:
    """``data`` where its chunk is in ``written``, the fill value elsewhere."""
    out = np.empty(data.shape, data.dtype)
    out[...] = fill
    grid = [range(-(-n // c)) for n, c in zip(data.shape, chunks, strict=True)]
    for coords in itertools.product(*grid):
        if written is None or coords in written:
            region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, chunks, strict=True))
            out[region] = data[region]
    return out


def _same_elements(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal shapes and elements, compared as native-endian bytes (NaT equals NaT)."""
    native = expected.dtype.newbyteorder("=")
    assert actual.shape == expected.shape
    assert actual.dtype.newbyteorder("=") == native, (actual.dtype, expected.dtype)
    assert actual.astype(native).tobytes() == expected.astype(native).tobytes()


def _values(dtype: np.dtype, n: int, seed: int = 3) -> np.ndarray:
    """Values with each type's edge cases: NaT, empty and non-ASCII strings, NULs."""
    rng = np.random.default_rng(seed)
    if dtype.kind in "Mm":
        out = rng.integers(-(10**12), 10**12, n).view(dtype.newbyteorder("=")).astype(dtype)
        out[1 % n] = np.array("NaT", dtype)
        return out
    if dtype.kind == "U":
        words = ["", "a", "\u00e9t\u00e9", "\u4e16\u754c", "\U0001f600", "zz\0z"]
        return np.array([w[: dtype.itemsize // 4] for w in words * n][:n], dtype=dtype)
    if dtype.kind == "S":
        words = [b"", b"a\0b", b"xyz", b"\xff\x00", b"q"]
        return np.array([w[: dtype.itemsize] for w in words * n][:n], dtype=dtype)
    if dtype.fields is None:
        return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    out = np.zeros(n, dtype)
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        out[name] = (_values(sub, n, seed + 1) if sub.kind in "MmUSV"
                     else (rng.standard_normal(n) * 100).astype(sub))
    return out


# (id, v2 dtype, v2 fill_value, v3 data_type, v3 fill_value, v3 bytes codec)
CASES = [
    ("U-le", "<U3", "\u00e9t", {"name": "fixed_length_utf32",
                                "configuration": {"length_bytes": 12}},
     "\u00e9t", {"name": "bytes", "configuration": {"endian": "little"}}),
    ("U-be", ">U3", "", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}},
     "", {"name": "bytes", "configuration": {"endian": "big"}}),
    ("S", "|S4", "YWI=", {"name": "null_terminated_bytes",
                          "configuration": {"length_bytes": 4}},
     "YWI=", {"name": "bytes"}),
    ("S-null", "|S4", None, {"name": "null_terminated_bytes",
                             "configuration": {"length_bytes": 4}},
     "", {"name": "bytes"}),
    ("V", "|V3", "AQID", {"name": "raw_bytes", "configuration": {"length_bytes": 3}},
     "AQID", {"name": "bytes"}),
    ("struct-le", [["x", "<f4"], ["n", "<i2"]], None,
     {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"},
                                                     {"name": "n", "data_type": "int16"}]}},
     {"x": 0.0, "n": 0}, {"name": "bytes", "configuration": {"endian": "little"}}),
    ("struct-be-fill", [["x", ">f8"], ["s", "|S2"]], "P/gAAAAAAABxAA==",
     {"name": "struct", "configuration": {"fields": [
         {"name": "x", "data_type": "float64"},
         {"name": "s", "data_type": {"name": "null_terminated_bytes",
                                     "configuration": {"length_bytes": 2}}}]}},
     {"x": 1.5, "s": "cQ=="}, {"name": "bytes", "configuration": {"endian": "big"}}),
    ("struct-nested-times", [["t", "<M8[s]"], ["p", [["u", "<U1"], ["b", "|u1"]]]], None,
     {"name": "struct", "configuration": {"fields": [
         {"name": "t", "data_type": {"name": "numpy.datetime64",
                                     "configuration": {"unit": "s", "scale_factor": 1}}},
         {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
             {"name": "u", "data_type": {"name": "fixed_length_utf32",
                                         "configuration": {"length_bytes": 4}}},
             {"name": "b", "data_type": "uint8"}]}}}]}},
     {"t": 0, "p": {"u": "", "b": 0}}, {"name": "bytes", "configuration": {"endian": "little"}}),
    ("struct-one-byte", [["a", "|u1"], ["b", "|i1"]], "AQI=",
     {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "uint8"},
                                                     {"name": "b", "data_type": "int8"}]}},
     {"a": 1, "b": 2}, {"name": "bytes"}),
    ("M8-ns", "<M8[ns]", NAT, {"name": "numpy.datetime64",
                               "configuration": {"unit": "ns", "scale_factor": 1}},
     NAT, {"name": "bytes", "configuration": {"endian": "little"}}),
    ("M8-ns-be", ">M8[ns]", 86400, {"name": "numpy.datetime64",
                                    "configuration": {"unit": "ns", "scale_factor": 1}},
     86400, {"name": "bytes", "configuration": {"endian": "big"}}),
    ("M8-10s", "<M8[10s]", None, {"name": "numpy.datetime64",
                                  "configuration": {"unit": "s", "scale_factor": 10}},
     NAT, {"name": "bytes", "configuration": {"endian": "little"}}),
    ("m8-us", "<m8[us]", -5, {"name": "numpy.timedelta64",
                              "configuration": {"unit": "us", "scale_factor": 1}},
     -5, {"name": "bytes", "configuration": {"endian": "little"}}),
    ("m8-D-be-nat", ">m8[D]", NAT, {"name": "numpy.timedelta64",
                                    "configuration": {"unit": "D", "scale_factor": 1}},
     NAT, {"name": "bytes", "configuration": {"endian": "big"}}),
]
IDS = [c[0] for c in CASES]


def _source(case: tuple[Any, ...], *, shape: tuple[int, ...] = (7,),
            chunks: tuple[int, ...] = (3,), written: Any = ((0,), (2,)),
            compressor: Any = None) -> tuple[zarr3c.MemoryStore, np.ndarray]:
    """A store holding the v2 array of ``case`` at ``x`` (the middle chunk missing), and the
    elements it reads as."""
    _, dtype_json, fill_json, *_ = case
    dtype = _np_dtype(dtype_json)
    data = _values(dtype, int(np.prod(shape))).reshape(shape)
    store = zarr3c.MemoryStore()
    zarr3c.create_group(store, zarr_format=2)
    written = set(written) if written is not None else None
    _write_v2(store, "x", dtype_json, fill_json, data, chunks, written=written,
              compressor=compressor)
    return store, _expected(data, _v2_fill(dtype, fill_json), chunks, written)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_copy_to_v3_names_types_and_fill_values_as_zarr_python(case: tuple[Any, ...]) -> None:
    _, dtype_json, _, v3_type, v3_fill, serializer = case
    src, expected = _source(case)
    assert zarr3c.open_array(src, "x").zarr_format == 2
    _same_elements(zarr3c.open_array(src, "x")[...], expected)  # (the oracle reads as v2)
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(src, dst)
    doc = json.loads(dst.get("x/zarr.json"))
    assert doc["data_type"] == v3_type
    # the type zarr3c (like zarr-python 3.4, tests/interop) creates for the numpy dtype
    assert doc["data_type"] == data_type_from_numpy(_np_dtype(dtype_json)).to_json()
    assert doc["fill_value"] == v3_fill
    assert doc["codecs"][0] == serializer
    _same_elements(out["x"][...], expected)
    _same_elements(zarr3c.open_array(dst, "x")[...], expected)
    # the stored chunks moved as they are; the missing one stays missing
    for coords in ("0", "2"):
        assert dst.get(f"x/c/{coords}") == src.get(f"x/{coords}")
    assert dst.get("x/c/1") is None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_copy_to_v3_and_back_to_v2(case: tuple[Any, ...], tmp_path: Path) -> None:
    src, expected = _source(case, compressor=numcodecs.Blosc(cname="zstd", shuffle=1))
    zarr3c.copy(src, tmp_path / "v3")
    back = zarr3c.copy(tmp_path / "v3", tmp_path / "v2", zarr_format=2)
    assert back.zarr_format == 2
    _same_elements(back["x"][...], expected)
    doc = json.loads((tmp_path / "v2" / "x" / ".zarray").read_text())
    dtype = _np_dtype(case[1])
    # the v2 dtype of the v3 type's numpy dtype, in the stored byte order where the chunks
    # could move as they are (strings and structs are written native-endian)
    assert _np_dtype(doc["dtype"]).newbyteorder("=") == dtype.newbyteorder("=")
    assert doc["compressor"]["id"] == "blosc"
    # chunks move as they are unless v2 holds the strings (fields) in another byte order
    if dtype.kind in "Mm" or dtype == dtype.newbyteorder("="):
        assert (tmp_path / "v2" / "x" / "0").read_bytes() == src.get("x/0")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_reencoding_copy_to_v3_sharded(case: tuple[Any, ...]) -> None:
    src, expected = _source(case, shape=(4, 5), chunks=(3, 2),
                            written={(0, 0), (1, 2), (0, 2)})
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(src, dst, chunks=(2, 2), shards=(4, 4))
    _same_elements(out["x"][...], expected)
    doc = json.loads(dst.get("x/zarr.json"))
    assert doc["data_type"] == case[3] and doc["fill_value"] == case[4]
    inner = doc["codecs"][0]["configuration"]["codecs"]
    assert inner[0] == case[5]


def test_order_f_and_blosc_chunks_move_as_they_are() -> None:
    data = np.array([["a", "\u00e9t\u00e9", ""], ["zz", "q", "\U0001f600"]], ">U3")
    src = zarr3c.MemoryStore()
    _write_v2(src, "", ">U3", "-", data, (2, 2), order="F",
              compressor=numcodecs.Blosc(cname="lz4", shuffle=2))
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(src, dst)
    _same_elements(out[...], data)
    doc = json.loads(dst.get("zarr.json"))
    assert [c["name"] for c in doc["codecs"]] == ["transpose", "bytes", "blosc"]
    assert doc["codecs"][1] == {"name": "bytes", "configuration": {"endian": "big"}}
    assert doc["fill_value"] == "-"
    assert dst.get("c/0/1") == src.get("0.1")


#: A struct whose fields are stored in both byte orders (v3 holds one per array).
_MIXED = ("mixed", [["a", "<i4"], ["b", ">f8"]], "AQAAAD/4AAAAAAAA", None, None, None)


def test_struct_stored_in_both_byte_orders_is_reencoded() -> None:
    # v3 has one byte order per array: such chunks cannot move as they are
    src, expected = _source(_MIXED)
    dst = zarr3c.MemoryStore()
    out = zarr3c.copy(src, dst)
    _same_elements(out["x"][...], expected)
    doc = json.loads(dst.get("x/zarr.json"))
    assert doc["fill_value"] == {"a": 1, "b": 1.5}
    assert doc["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    assert dst.get("x/c/0") != src.get("x/0")
    # between two Zarr v2 hierarchies the chunks still move as they are
    v2 = zarr3c.MemoryStore()
    zarr3c.copy(src, v2, zarr_format=2)
    assert v2.get("x/0") == src.get("x/0")
    _same_elements(zarr3c.open_array(v2, "x")[...], expected)


def _array_doc(store: Any, path: str) -> dict[str, Any]:
    """The metadata of the array at ``path``, without what a copy may choose itself."""
    raw = store.get(f"{path}/zarr.json") or store.get(f"{path}/.zarray")
    doc = json.loads(raw)
    return {k: v for k, v in doc.items() if k not in ("attributes", "chunk_key_encoding")}


@pytest.mark.parametrize("case", [*CASES, _MIXED], ids=[*IDS, "mixed"])
def test_copy_all_converts_between_layouts_as_copy_does(case: tuple[Any, ...]) -> None:
    # zarr3c.copy is the oracle: copy_all into a group of the other layout makes the same
    # array (data type, fill value, codecs) with the same elements, and back.
    src, expected = _source(case)
    v3 = zarr3c.group(zarr_format=3)
    assert zarr3c.copy_all(zarr3c.open_group(src, mode="r"), v3)[0] == 1
    by_copy = zarr3c.MemoryStore()
    zarr3c.copy(src, by_copy)
    assert v3["x"].zarr_format == 3
    assert _array_doc(v3.store, "x") == _array_doc(by_copy, "x")
    _same_elements(v3["x"][...], expected)
    v2 = zarr3c.group(zarr_format=2)
    zarr3c.copy_all(v3, v2)
    back = zarr3c.MemoryStore()
    zarr3c.copy(by_copy, back, zarr_format=2)
    assert v2["x"].zarr_format == 2
    assert _array_doc(v2.store, "x") == _array_doc(back, "x")
    _same_elements(v2["x"][...], expected)


def test_cli_copies_fixed_types_to_v3(tmp_path: Path) -> None:
    store = zarr3c.LocalStore(tmp_path / "v2.zarr")
    data = np.array(["2001-02-03", "NaT", "1999-12-31"], ">M8[D]")
    _write_v2(store, "", ">M8[D]", NAT, data, (2,))
    assert main(["copy", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr"),
                 "--no-progress"]) == 0
    out = zarr3c.open_array(tmp_path / "v3.zarr", mode="r")
    assert out.zarr_format == 3 and out.metadata.data_type.name == "numpy.datetime64"
    _same_elements(out[...], data)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_json, fill_json, message", [
    ("|S4", "not base64!", "not valid base64"),
    ("|S2", "YWJj", "decodes to 3 bytes"),
    ("|V3", "AQI=", "decodes to 2 bytes"),
    ("<U2", 5, "must be a string"),
    ("<U2", "abc", "longer than"),
    ("<M8[ns]", "yesterday", "not a value"),
    ("<m8[s]", 2**64, "not a value"),
    ("<M8[s]", 1.5, "must be an integer"),
    ([["a", "<i4"]], "AQID", "decodes to 3 bytes"),
])
def test_a_fill_value_that_does_not_decode_names_field_and_array(
        dtype_json: Any, fill_json: Any, message: str) -> None:
    src = zarr3c.MemoryStore()
    zarr3c.create_group(src, "grp", zarr_format=2)
    _write_v2(src, "grp/bad", dtype_json, fill_json, np.zeros(2, _np_dtype(dtype_json)), (2,),
              written=set())
    dst = zarr3c.MemoryStore()
    with pytest.raises(MetadataError, match=rf"grp/bad/\.zarray: fill_value: .*{message}"):
        zarr3c.copy(src, dst)
    assert list(dst.list()) == []


# -- hypothesis: random arrays of each type -------------------------------------------------

_DTYPES = [
    "<U1", ">U5", "|S1", "|S6", "|V1", "|V5", "<M8[ns]", ">M8[ms]", "<M8[3h]", "<m8[s]",
    ">m8[us]", [["a", "<i2"], ["b", "<U2"]], [["a", ">f4"], ["b", "|S3"]],
    [["t", ">m8[s]"], ["v", "|V2"]],
]


def _times(dtype: np.dtype) -> st.SearchStrategy[Any]:
    return st.integers(NAT, 2**63 - 1).map(lambda i: np.array(i).view(
        dtype.newbyteorder("=")))


def _elements(dtype: np.dtype) -> st.SearchStrategy[Any]:
    if dtype.kind in "Mm":
        return _times(dtype)
    if dtype.kind == "U":
        return st.text(st.characters(exclude_categories=["Cs"]), max_size=dtype.itemsize // 4)
    if dtype.kind == "S":
        return st.binary(max_size=dtype.itemsize).map(lambda b: b.rstrip(b"\0"))
    return st.binary(min_size=dtype.itemsize, max_size=dtype.itemsize)


@st.composite
def _v2_arrays(draw: Any) -> tuple[Any, np.ndarray, tuple[int, ...], Any, set[Any]]:
    dtype_json = draw(st.sampled_from(_DTYPES))
    dtype = _np_dtype(dtype_json)
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    n = int(np.prod(shape))
    if dtype.fields is None:
        items = draw(st.lists(_elements(dtype), min_size=n, max_size=n))
        data = np.empty(n, dtype)
        for i, v in enumerate(items):
            data[i] = v if dtype.kind != "V" else np.frombuffer(v, dtype)[0]
        fill_item = draw(_elements(dtype))
        fill = np.empty((), dtype)
        fill[()] = fill_item if dtype.kind != "V" else np.frombuffer(fill_item, dtype)[0]
    else:
        raw = draw(st.binary(min_size=(n + 1) * dtype.itemsize,
                             max_size=(n + 1) * dtype.itemsize))
        both = np.frombuffer(raw, dtype).copy()
        for name in dtype.names or ():  # (strings must be valid code points)
            if dtype.fields[name][0].kind == "U":  # type: ignore[index]
                both[name] = ""
        data, fill = both[:n], both[n]
    data = data.reshape(shape)
    grid = list(itertools.product(*[range(-(-s // c)) for s, c in zip(shape, chunks,
                                                                        strict=True)]))
    written = set(draw(st.lists(st.sampled_from(grid), unique=True)))
    return dtype_json, data, chunks, _v2_fill_json(np.asarray(fill)), written


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_v2_arrays())
def test_random_arrays_round_trip_through_v3(example: Any) -> None:
    dtype_json, data, chunks, fill_json, written = example
    src = zarr3c.MemoryStore()
    _write_v2(src, "", dtype_json, fill_json, data, chunks, written=written)
    expected = _expected(data, _v2_fill(data.dtype, fill_json), chunks, written)
    v3 = zarr3c.MemoryStore()
    out = zarr3c.copy(src, v3)
    assert out.zarr_format == 3
    _same_elements(out[...], expected)
    _same_elements(zarr3c.copy(v3, zarr3c.MemoryStore(), zarr_format=2)[...], expected)
    _same_elements(zarr3c.copy(src, zarr3c.MemoryStore(), chunks=(2,) * data.ndim)[...],
                   expected)


# -- interop: zarr-python reads the v3 copies --------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_zarr_python_reads_the_v3_copy_and_the_v2_copy_of_it(case: tuple[Any, ...],
                                                             tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")
    dtypes = pytest.importorskip("zarr.core.dtype", reason="needs zarr-python >= 3.1")
    dtype = _np_dtype(case[1])
    src, expected = _source(case)
    zarr3c.copy(src, tmp_path / "v3")
    zarr3c.copy(tmp_path / "v3", tmp_path / "v2", zarr_format=2)
    old = not hasattr(dtypes, "Struct")  # zarr-python before 3.4 (3.1.6 checked)
    nested = any(dtype.fields[f][0].fields is not None  # type: ignore[index]
                 for f in dtype.names or ())
    if not (old and nested):  # (3.1.6 finds no data type for a nested v2 structured dtype)
        z = zarr.open_array(str(tmp_path / "v2" / "x"), mode="r")
        _same_elements(np.asarray(z[:]), expected)
    if dtype.fields is not None and old:
        pytest.skip("zarr-python reads the 'struct' data type from 3.4 on "
                    f"(installed: {zarr.__version__})")
    z = zarr.open_array(str(tmp_path / "v3" / "x"), mode="r")
    _same_elements(np.asarray(z[:]), expected)
    # and zarr-python names the same numpy dtype with the same v3 data type
    made = zarr.create_array({}, shape=(1,), dtype=dtype.newbyteorder("="), zarr_format=3)
    assert made.metadata.to_dict()["data_type"] == case[3]


# -- the zarrita.js v2 fixtures (written by zarr-python 2.18) -------------------------------

FIXTURES = (Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
            / "zarrita-js-fixtures-v2" / "data.zarr")


@pytest.mark.parametrize("name, expected", [
    ("1d.contiguous.U13.le", np.array(["a", "b", "cc", "d"], "<U13")),
    ("1d.contiguous.U13.be", np.array(["a", "b", "cc", "d"], ">U13")),
    ("1d.contiguous.U7", np.array(["a", "b", "cc", "d"], "U7")),
    ("1d.contiguous.S7", np.array([b"a", b"b", b"cc", b"d"], "S7")),
    ("2d.chunked.U7", np.array([["a", "b"], ["cc", "d"]], "U7")),
])
def test_zarrita_fixtures_copy_to_v3(name: str, expected: np.ndarray, tmp_path: Path) -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"conformance data folder {FIXTURES} is absent (it sits beside the "
                    "checkout in CI)")
    out = zarr3c.copy(FIXTURES / name, tmp_path / "v3")
    _same_elements(out[...], expected)
    chunk_files = [p for p in (FIXTURES / name).iterdir() if not p.name.startswith(".")]
    assert chunk_files
    for p in chunk_files:  # blosc chunks, moved as they are
        key = "c/" + p.name.replace(".", "/")
        assert (tmp_path / "v3" / key).read_bytes() == p.read_bytes()
    back = zarr3c.copy(tmp_path / "v3", tmp_path / "v2", zarr_format=2)
    _same_elements(back[...], expected)
