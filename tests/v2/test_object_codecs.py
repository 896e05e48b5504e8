"""Zarr v2 object arrays of the ``vlen-array`` and ``json2`` object codecs (issue 31): read as
zarr-python 2 reads them, written into (whole and partial chunks) byte for byte as it writes
them, and every bad chunk a ChunkDecodeError naming its key.

zarr-python 3 (3.1 and 3.4) opens neither kind, and cannot create them, so the fixtures are
what zarr-python 2.18.7 (numcodecs 0.15.2) wrote, kept byte for byte below; numcodecs'
``VLenArray`` and ``JSON`` are the oracle for chunks zarr3c writes.
Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html; the codecs:
https://numcodecs.readthedocs.io/en/stable/other/vlen.html,
https://numcodecs.readthedocs.io/en/stable/other/json.html.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.codecs import ChunkSpec
from zarr3c.codecs.object_codecs import JSONCodec, VLenArrayCodec
from zarr3c.errors import (
    ChunkDecodeError,
    MetadataError,
    UnsupportedFeatureError,
    ValueConversionError,
)


def _zarray(dtype_filter: dict[str, Any], *, shape: list[int], chunks: list[int],
            fill: Any = 0, compressor: Any = None, order: str = "C") -> bytes:
    """A ``.zarray`` as zarr-python 2 writes it (sorted keys, indent 4)."""
    return json.dumps({"chunks": chunks, "compressor": compressor, "dtype": "|O",
                       "fill_value": fill, "filters": [dtype_filter], "order": order,
                       "shape": shape, "zarr_format": 2}, indent=4, sort_keys=True).encode()


_JSON2 = {"allow_nan": True, "check_circular": True, "encoding": "utf-8",
          "ensure_ascii": True, "id": "json2", "indent": None, "separators": [",", ":"],
          "skipkeys": False, "sort_keys": True, "strict": True}
_BLOSC = {"blocksize": 0, "clevel": 5, "cname": "lz4", "id": "blosc", "shuffle": 1}

#: What zarr-python 2.18.7 wrote (numcodecs 0.15.2), file by file:
#: va: VLenArray("<i4"), fill 0; a[0] = np.arange(3); a[1:3] = [array([]), array([4, 5])]
#: vab: VLenArray(">f8") under blosc; a[0:2] = [array([1.5, -2.0]), None]
#: js: JSON(), fill null; a[0] = {"a": 1}; a[1] = [1, "x", None, 2.5]; a[2] = "s"; a[3] = 3
#: vaF, jsF: order "F", shape (2, 3) in one chunk, element [i, j] = [10 i + j] / f"{i}{j}"
GOLDEN: dict[str, bytes] = {
    "va/.zarray": _zarray({"dtype": "<i4", "id": "vlen-array"}, shape=[5], chunks=[2]),
    "va/0": b"\x02\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00"
            b"\x00\x00\x00\x00\x00",
    "va/1": b"\x02\x00\x00\x00\x08\x00\x00\x00\x04\x00\x00\x00\x05\x00\x00\x00\x04\x00\x00"
            b"\x00\x00\x00\x00\x00",
    "vab/.zarray": _zarray({"dtype": ">f8", "id": "vlen-array"}, shape=[5], chunks=[2],
                           compressor=_BLOSC),
    "vab/0": b"\x02\x013\x01\x1c\x00\x00\x00\x1c\x00\x00\x00,\x00\x00\x00\x02\x00\x00\x00"
             b"\x10\x00\x00\x00?\xf8\x00\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x00"
             b"\x00\x00\x00\x00",
    "js/.zarray": _zarray(_JSON2, shape=[5], chunks=[2], fill=None),
    "js/0": b'[{"a":1},[1,"x",null,2.5],"|O",[2]]',
    "js/1": b'["s",3,"|O",[2]]',
    "vaF/.zarray": _zarray({"dtype": "<i2", "id": "vlen-array"}, shape=[2, 3],
                           chunks=[2, 3], order="F"),
    "vaF/0.0": b"\x06\x00\x00\x00\x02\x00\x00\x00\x00\x00\x02\x00\x00\x00\n\x00\x02\x00\x00"
               b"\x00\x01\x00\x02\x00\x00\x00\x0b\x00\x02\x00\x00\x00\x02\x00\x02\x00\x00\x00"
               b"\x0c\x00",
    "jsF/.zarray": _zarray(_JSON2, shape=[2, 3], chunks=[2, 3], order="F"),
    "jsF/0.0": b'[["00","01","02"],["10","11","12"],"|O",[2,3]]',
}

#: What zarr-python 2.18.7 stored after, on the arrays above,
#: va: a[0] = np.arange(4); a[2:4] = [[7, 8], None]; a[4] = np.array([9])
#: js: a[0] = [1, 2]; a[2:4] = [{"k": [1, None]}, "é"]; a[4] = 1.5
WRITTEN: dict[str, bytes] = {
    "va/0": b"\x02\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00"
            b"\x00\x03\x00\x00\x00\x00\x00\x00\x00",
    "va/1": b"\x02\x00\x00\x00\x08\x00\x00\x00\x07\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00"
            b"\x00",
    # (element 5 lies past the array's end: the fill value 0, stored as array([0]))
    "va/2": b"\x02\x00\x00\x00\x04\x00\x00\x00\t\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00",
    "js/0": b'[[1,2],[1,"x",null,2.5],"|O",[2]]',
    "js/1": b'[{"k":[1,null]},"\\u00e9","|O",[2]]',
    "js/2": b'[1.5,null,"|O",[2]]',
}


def _obj(*items: Any) -> np.ndarray:
    """A 1-d object array of ``items``, each an element as it is (lists and arrays too)."""
    out = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        out[i] = item
    return out


def _json_text(value: Any) -> str:
    """A value's JSON, for comparisons that tell ``1`` from ``1.0`` and ``True``."""
    return json.dumps(value, sort_keys=True)


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    for key, data in GOLDEN.items():
        path = tmp_path / key
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    return tmp_path


def _assert_arrays(got: np.ndarray, expected: list[Any]) -> None:
    """An object array of 1-d arrays (or fill scalars) equal to ``expected``, dtypes too."""
    assert got.dtype == np.dtype(object) and got.shape == (len(expected),)
    for element, want in zip(got, expected, strict=True):
        if isinstance(want, np.ndarray):
            assert isinstance(element, np.ndarray) and element.dtype == want.dtype
            np.testing.assert_array_equal(element, want)
        else:
            assert type(element) is type(want) and element == want


# -- reading ---------------------------------------------------------------------------------


def test_vlen_array_reads_as_zarr_python_2(golden: Path) -> None:
    a = zarr3c.open_array(golden / "va", mode="r")
    assert a.zarr_format == 2 and a.dtype == np.dtype(object) and a.shape == (5,)
    assert a.metadata.data_type.object_codec == "vlen-array"
    assert [c.to_dict() for c in a.codecs] == [
        {"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}}]
    i4 = np.dtype("<i4")
    # (element 3 was the fill value 0 in the chunk zarr-python 2 wrote: stored as array([0]);
    # element 4 is in no stored chunk: the fill value 0, as zarr-python 2 reads it)
    _assert_arrays(a[:], [np.arange(3, dtype=i4), np.array([], i4), np.array([4, 5], i4),
                          np.array([0], i4), 0])
    assert a.fill_value == 0
    np.testing.assert_array_equal(a[2], np.array([4, 5], i4))
    _assert_arrays(a[[2, 0]], [np.array([4, 5], i4), np.arange(3, dtype=i4)])
    _assert_arrays(a[1:5:2], [np.array([], i4), np.array([0], i4)])


def test_vlen_array_elements_keep_their_byte_order(golden: Path) -> None:
    a = zarr3c.open_array(golden / "vab", mode="r")
    got = a[:2]
    # (blosc-compressed; None was stored as an empty array; big-endian as configured)
    _assert_arrays(got, [np.array([1.5, -2.0], ">f8"), np.array([], ">f8")])


def test_json2_reads_as_zarr_python_2(golden: Path) -> None:
    a = zarr3c.open_array(golden / "js", mode="r")
    assert a.metadata.data_type.object_codec == "json2" and a.fill_value is None
    got = a[:]
    assert got.dtype == np.dtype(object)
    assert got.tolist() == [{"a": 1}, [1, "x", None, 2.5], "s", 3, None]
    assert [type(v) for v in got] == [dict, list, str, int, type(None)]
    assert a[1] == [1, "x", None, 2.5] and a[4] is None


def test_f_order_chunks(golden: Path) -> None:
    # vlen-array stores an "F" chunk's elements in F order; numcodecs' JSON nests them in
    # index order whatever the memory order (zarr-python 2 reads that one back scrambled:
    # zarr3c returns the stored elements, as numcodecs decodes them).
    va = zarr3c.open_array(golden / "vaF", mode="r")
    assert [[int(x[0]) for x in row] for row in va[:]] == [[0, 1, 2], [10, 11, 12]]
    js = zarr3c.open_array(golden / "jsF", mode="r")
    decoded = numcodecs.JSON().decode(GOLDEN["jsF/0.0"])
    assert js[:].tolist() == decoded.tolist() == [["00", "01", "02"], ["10", "11", "12"]]
    assert js[1, 2] == "12" and js[:, 1].tolist() == ["01", "11"]


def test_zarr_python_3_cannot_open_them(golden: Path) -> None:
    # What "interop both ways" can be today: zarr-python 3 refuses both codecs (3.1.6 and
    # 3.4.2: "No Zarr data type found that matches {'name': '|O', 'object_codec_id': ...}").
    # If a release learns them, its values must be zarr3c's.
    zarr = pytest.importorskip("zarr")
    if int(zarr.__version__.split(".")[0]) < 3:
        pytest.skip(f"zarr-python {zarr.__version__} is not zarr-python 3")
    for name in ("va", "js"):
        try:
            theirs = zarr.open_array(str(golden / name), mode="r")[:]
        except (ValueError, TypeError, NotImplementedError):
            continue
        ours = zarr3c.open_array(golden / name, mode="r")[:]
        assert [_json_text(np.asarray(x).tolist()) for x in theirs] == \
            [_json_text(np.asarray(x).tolist()) for x in ours]


# -- writing ---------------------------------------------------------------------------------


def test_writes_match_zarr_python_2_byte_for_byte(golden: Path) -> None:
    a = zarr3c.open_array(golden / "va", mode="r+")
    a[0] = np.arange(4)                     # partial: chunk 0 read, one element replaced
    a[2:4] = _obj([7, 8], None)             # a whole chunk
    a[4] = np.array([9])                    # partial, into a chunk not stored
    b = zarr3c.open_array(golden / "js", mode="r+")
    b[0] = [1, 2]                           # one element takes a list as it is
    b[2:4] = _obj({"k": [1, None]}, "é")
    b[4] = 1.5
    for key, data in WRITTEN.items():
        assert (golden / key).read_bytes() == data, key
    i4 = np.dtype("<i4")
    _assert_arrays(a[:], [np.arange(4, dtype=i4), np.array([], i4), np.array([7, 8], i4),
                          np.array([], i4), np.array([9], i4)])
    assert b[:].tolist() == [[1, 2], [1, "x", None, 2.5], {"k": [1, None]}, "é", 1.5]


def test_written_chunks_decode_with_numcodecs(tmp_path: Path) -> None:
    (tmp_path / ".zarray").write_bytes(
        _zarray({"dtype": "<u2", "id": "vlen-array"}, shape=[3, 4], chunks=[2, 3],
                compressor={"id": "zstd", "level": 1}, order="F"))
    a = zarr3c.open_array(tmp_path, mode="r+")
    values = np.empty((3, 4), dtype=object)
    for i, j in np.ndindex(3, 4):
        values[i, j] = np.arange(i * j, dtype="<u2")
    a[:] = values
    raw = numcodecs.Zstd().decode((tmp_path / "0.1").read_bytes())
    stored = numcodecs.VLenArray("<u2").decode(raw)
    # zarr-python 2's F chunk: flattened in F order, the edge chunk full size, fill past it
    chunk = np.full((2, 3), 0, dtype=object)
    chunk[:, :1] = values[0:2, 3:4]
    expected = [np.ascontiguousarray(x, "<u2") for x in chunk.reshape(-1, order="F")]
    assert len(stored) == 6
    for got, want in zip(stored, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    for (i, j), element in np.ndenumerate(a[:]):
        np.testing.assert_array_equal(element, values[i, j])


def test_json2_f_order_writes_index_order(golden: Path) -> None:
    js = zarr3c.open_array(golden / "jsF", mode="r+")
    js[0, 1] = {"x": 1}
    assert (golden / "jsF/0.0").read_bytes() == b'[["00",{"x":1},"02"],["10","11","12"],"|O",[2,3]]'


def test_chunks_of_only_the_fill_value_are_erased(golden: Path) -> None:
    a = zarr3c.open_array(golden / "va", mode="r+")
    a[0:2] = _obj(0, 0)                     # the fill value itself: nothing to store
    assert not (golden / "va/0").exists() and a[0] == 0
    a[0:2] = _obj(np.array([0]), 0)         # an array is not the fill value 0
    assert (golden / "va/0").exists()
    b = zarr3c.open_array(golden / "js", mode="r+")
    b[0:2] = _obj(None, None)
    assert not (golden / "js/0").exists()
    b[0:2] = _obj(False, None)              # False == 0 but reads back as False
    assert b[0] is False and (golden / "js/0").exists()


def test_resize_keeps_the_object_codec(golden: Path) -> None:
    a = zarr3c.open_array(golden / "js", mode="r+")
    a.resize((7,))
    doc = json.loads((golden / "js/.zarray").read_bytes())
    assert doc["shape"] == [7] and doc["filters"] == [_JSON2] and doc["dtype"] == "|O"
    assert zarr3c.open_array(golden / "js", mode="r")[:].tolist() == \
        [{"a": 1}, [1, "x", None, 2.5], "s", 3, None, None, None]


@pytest.mark.parametrize("name,value,match", [
    ("va", [[1, 2]], r"item 0 \(list\): only 1-dimensional"),
    ("va", "abc", r"item 0 \(str\)"),
    ("va", [2**40], r"item 0 \(list\)"),
    ("js", np.arange(2), r"item 0 \(ndarray\): Object of type ndarray"),
    ("js", {1j: 2}, r"item 0 \(dict\): keys must be"),
])
def test_elements_that_do_not_encode_are_refused(golden: Path, name: str, value: Any,
                                                 match: str) -> None:
    a = zarr3c.open_array(golden / name, mode="r+")
    before = (golden / name / "0").read_bytes()
    with pytest.raises(ValueConversionError, match=match):
        a[0] = value
    assert (golden / name / "0").read_bytes() == before


def test_nan_is_refused_where_the_codec_disallows_it(tmp_path: Path) -> None:
    (tmp_path / ".zarray").write_bytes(
        _zarray({**_JSON2, "allow_nan": False}, shape=[2], chunks=[2]))
    a = zarr3c.open_array(tmp_path, mode="r+")
    with pytest.raises(ValueConversionError, match=r"item 1 \(float\): Out of range float values are not JSON"):
        a[:] = _obj(1.0, float("nan"))


# -- hypothesis round trips ------------------------------------------------------------------

_ELEMENT_DTYPES = ["<i4", ">u2", "<f8", ">f4", "|u1", "|b1", "<i8"]


@st.composite
def _vlen_arrays(draw: st.DrawFn) -> tuple[str, list[np.ndarray | None]]:
    dtype = np.dtype(draw(st.sampled_from(_ELEMENT_DTYPES)))
    lengths = draw(st.lists(st.integers(0, 6), min_size=1, max_size=12))
    elements: list[np.ndarray | None] = []
    for n in lengths:
        if draw(st.booleans()) and n == 0:
            elements.append(None)  # (stored as an empty array)
            continue
        raw = draw(st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize))
        values = np.frombuffer(raw, dtype=dtype).copy()
        if dtype.kind == "f":
            values[np.isnan(values)] = 0  # (NaN payloads are not what is compared)
        if dtype.kind == "b":
            values = values.view("u1") % 2 == 1
        elements.append(values.astype(dtype))
    return dtype.str, elements


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_vlen_arrays(), chunk=st.integers(1, 5))
def test_vlen_array_round_trips(tmp_path_factory: pytest.TempPathFactory,
                                case: tuple[str, list[np.ndarray | None]], chunk: int) -> None:
    dtype, elements = case
    root = tmp_path_factory.mktemp("va")
    (root / ".zarray").write_bytes(_zarray({"dtype": dtype, "id": "vlen-array"},
                                           shape=[len(elements)], chunks=[chunk]))
    a = zarr3c.open_array(root, mode="r+")
    a[:] = _obj(*elements)
    expected = [np.array([], dtype) if e is None else e for e in elements]
    got = a[:]
    for element, want in zip(got, expected, strict=True):
        assert element.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(element, want)
    # numcodecs reads each stored chunk to the same elements (a short last chunk is padded
    # with the fill value, stored as array([0]))
    for c in range(math.ceil(len(elements) / chunk)):
        path = root / str(c)
        if not path.exists():  # (only fill values: erased)
            continue
        stored = numcodecs.VLenArray(dtype).decode(path.read_bytes())
        assert len(stored) == chunk
        for element, want in zip(stored, expected[c * chunk:(c + 1) * chunk], strict=False):
            np.testing.assert_array_equal(element, want)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_json_values, min_size=1, max_size=8), chunk=st.integers(1, 4))
def test_json2_round_trips(tmp_path_factory: pytest.TempPathFactory, values: list[Any],
                           chunk: int) -> None:
    root = tmp_path_factory.mktemp("js")
    (root / ".zarray").write_bytes(_zarray(_JSON2, shape=[len(values)], chunks=[chunk],
                                           fill=None))
    a = zarr3c.open_array(root, mode="r+")
    a[:] = _obj(*values)
    assert [_json_text(v) for v in a[:]] == [_json_text(v) for v in values]
    for c in range(math.ceil(len(values) / chunk)):
        path = root / str(c)
        if path.exists():
            stored = numcodecs.JSON().decode(path.read_bytes())
            assert [_json_text(v) for v in stored.tolist()][:len(values) - c * chunk] == \
                [_json_text(v) for v in values[c * chunk:(c + 1) * chunk]]


@settings(max_examples=80, deadline=None)
@given(values=st.lists(_json_values, min_size=1, max_size=6),
       shape=st.sampled_from([None, (2, 3), (3, 2), (1, 6), (6, 1)]))
def test_json2_decodes_as_numcodecs(values: list[Any], shape: tuple[int, ...] | None) -> None:
    # Where numcodecs' own decoding works, it and zarr3c's agree element for element.
    if shape is not None:
        values = (values * 6)[:6]
    chunk = _obj(*values).reshape(shape or (len(values),))
    encoded = numcodecs.JSON().encode(chunk)
    spec = ChunkSpec(chunk.shape, np.dtype(object), np.array(None, dtype=object))
    ours = JSONCodec().decode(encoded, spec)
    assert bytes(JSONCodec().encode(chunk, spec)) == bytes(encoded)
    try:
        theirs = numcodecs.JSON().decode(encoded)
    except ValueError:  # (numpy cannot always take the nested lists numcodecs gives it)
        theirs = None
    if theirs is not None and theirs.shape == ours.shape:
        assert [_json_text(x) for x in theirs.reshape(-1)] == \
            [_json_text(x) for x in ours.reshape(-1)]
    assert [_json_text(x) for x in ours.reshape(-1)] == [_json_text(v) for v in values]


# -- bad chunks -------------------------------------------------------------------------------


def _count(n: int) -> bytes:
    return n.to_bytes(4, "little")


@pytest.mark.parametrize("data,match", [
    (b"\x02\x00", "too few for its item count"),
    (_count(3) + bytes(12), "stored item count is 3, expected 2"),
    (_count(2) + _count(0), "2 items need at least 12 bytes"),
    (_count(2) + _count(0) + _count(8) + b"\x01\x00\x00\x00",
     r"item 1's length \(8 bytes\) runs past the end"),
    (_count(2) + _count(3) + b"abc" + _count(0), r"item 0's length \(3 bytes\) is not a whole"),
    (_count(2) + _count(0) + _count(0) + b"xyz", "3 bytes after the last item"),
])
def test_corrupt_vlen_array_chunks(golden: Path, data: bytes, match: str) -> None:
    (golden / "va/1").write_bytes(data)
    a = zarr3c.open_array(golden / "va", mode="r")
    with pytest.raises(ChunkDecodeError, match=match) as info:
        a[2]
    assert info.value.key == "1"
    np.testing.assert_array_equal(a[0], np.arange(3))  # (other chunks still read)


@pytest.mark.parametrize("data,match", [
    (b'["s",3,"\xff","|O",[2]]', "not utf-8 text"),
    (b'["s",3,"|O",[2]', "not JSON"),
    (b'{"a": 1}', "not a JSON list"),
    (b"[[2]]", "not a JSON list"),
    (b'["s",3,"<f8",[2]]', "stored data type is '<f8', expected '|O'"),
    (b'["s",3,"|O",[3]]', r"stored shape is \[3\], expected \[2\]"),
    (b'["s",3,"|O",[2.0]]', r"stored shape is \[2.0\]"),
    (b'["s",3,"|O",[true]]', r"stored shape is \[True\]"),
    (b'["s","|O",[2]]', "dimension 0 has 1 entries"),
    (b'["s",3,4,"|O",[2]]', "dimension 0 has 3 entries"),
    (b'["s",NaN,"|O",[2]]', None),  # (NaN is JSON to numcodecs and Python: it reads)
])
def test_corrupt_json2_chunks(golden: Path, data: bytes, match: str | None) -> None:
    (golden / "js/1").write_bytes(data)
    a = zarr3c.open_array(golden / "js", mode="r")
    if match is None:
        assert a[2] == "s" and math.isnan(a[3])
        return
    with pytest.raises(ChunkDecodeError, match=match) as info:
        a[2:4]
    assert info.value.key == "1"


def test_json2_2d_chunk_rows_are_checked(golden: Path) -> None:
    (golden / "jsF/0.0").write_bytes(b'[["00","01"],["10","11","12"],"|O",[2,3]]')
    with pytest.raises(ChunkDecodeError, match="dimension 1 has 2 entries") as info:
        zarr3c.open_array(golden / "jsF", mode="r")[:]
    assert info.value.key == "0.0"


# -- metadata --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec,path", [
    ({"id": "vlen-array"}, "filters[0].configuration.dtype"),
    ({"id": "vlen-array", "dtype": "|O"}, "filters[0].configuration.dtype"),
    ({"id": "vlen-array", "dtype": "<q9"}, "filters[0].configuration.dtype"),
    ({"id": "vlen-array", "dtype": 4}, "filters[0].configuration.dtype"),
    ({"id": "vlen-array", "dtype": "<i4", "x": 1}, "filters[0].configuration.x"),
    ({**_JSON2, "encoding": "hex"}, "filters[0].configuration.encoding"),
    ({**_JSON2, "encoding": "no-such-codec"}, "filters[0].configuration.encoding"),
    ({**_JSON2, "sort_keys": 1}, "filters[0].configuration.sort_keys"),
    ({**_JSON2, "separators": [","]}, "filters[0].configuration.separators"),
    ({**_JSON2, "indent": 1.5}, "filters[0].configuration.indent"),
    ({**_JSON2, "default": None}, "filters[0].configuration.default"),
])
def test_bad_codec_configurations_name_the_field(tmp_path: Path, spec: dict[str, Any],
                                                 path: str) -> None:
    (tmp_path / ".zarray").write_bytes(_zarray(spec, shape=[2], chunks=[2]))
    with pytest.raises(MetadataError) as info:
        zarr3c.open_array(tmp_path, mode="r")
    assert path in str(info.value) and ".zarray" in str(info.value)


def test_numcodecs_defaults_fill_a_short_json2_configuration() -> None:
    codec = JSONCodec.from_config({"indent": 2, "sort_keys": False}, path="filters[0]")
    assert codec.to_dict()["configuration"] == {
        **{k: v for k, v in _JSON2.items() if k != "id"}, "indent": 2, "sort_keys": False,
        "separators": [", ", ": "]}
    chunk = _obj({"b": 1, "a": [2]})
    spec = ChunkSpec((1,), np.dtype(object), np.array(None, dtype=object))
    assert codec.encode(chunk, spec) == numcodecs.JSON(indent=2, sort_keys=False).encode(chunk)


def test_the_object_codecs_take_object_arrays_only() -> None:
    with pytest.raises(MetadataError, match="serializes the elements of object arrays"):
        zarr3c.create_array("memory://", shape=(2,), dtype="i4", serializer={
            "name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}})
    spec = ChunkSpec((2,), np.dtype(object), np.array(None, dtype=object))
    with pytest.raises(zarr3c.errors.CodecError, match=r"shape \[3\] does not match"):
        VLenArrayCodec(np.dtype("<i4")).encode(_obj(1, 2, 3), spec)


@pytest.mark.parametrize("name", ["va", "js"])
@pytest.mark.parametrize("zarr_format", [3, 2, "zarr2-v3"])
def test_copy_refuses_clearly(golden: Path, name: str, zarr_format: Any) -> None:
    # No Zarr v3 data type holds arrays or JSON values; zarr3c (like zarr-python 3) creates
    # no v2 object arrays of these codecs.
    with pytest.raises(UnsupportedFeatureError, match="object array of the") as info:
        zarr3c.copy(golden / name, golden / "copy", zarr_format=zarr_format)
    assert ("vlen-array" if name == "va" else "json2") in str(info.value)
    assert not (golden / "copy").exists()


def test_pickle_object_arrays_are_refused(tmp_path: Path) -> None:
    (tmp_path / ".zarray").write_bytes(_zarray({"id": "pickle", "protocol": 5}, shape=[2],
                                               chunks=[2]))
    with pytest.raises(UnsupportedFeatureError, match="pickle.*runs code"):
        zarr3c.open_array(tmp_path, mode="r")
