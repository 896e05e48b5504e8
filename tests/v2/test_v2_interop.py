"""Zarr v2 interop with zarr-python 3, both ways, on LocalStore folders: each library reads
what the other wrote (``zarr_format=2``), for every dtype, chunk order, dimension separator
and compressor/filter kind zarr3c maps; numpy is the oracle for the values.

Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")
numcodecs = pytest.importorskip("numcodecs")

import zarr3c  # noqa: E402

STRUCT = np.dtype([("a", "<i4"), ("b", "S2"), ("c", "<f8")])

#: dtype -> values (shape (4, 6)), chosen so that every kind's edge values appear
VALUES: dict[str, Any] = {
    "|b1": np.arange(24).reshape(4, 6) % 3 == 0,
    "|i1": np.arange(-12, 12, dtype="i1").reshape(4, 6),
    "<i2": np.arange(24, dtype="<i2").reshape(4, 6) * -300,
    ">i4": np.arange(24, dtype=">i4").reshape(4, 6) * 70000,
    "<u8": np.arange(24, dtype="<u8").reshape(4, 6) * 2**59,
    ">u2": np.arange(24, dtype=">u2").reshape(4, 6) * 2000,
    "<f2": np.linspace(-3, 3, 24).astype("<f2").reshape(4, 6),
    ">f4": np.array([np.nan, np.inf, -np.inf, -0.0] + list(range(20)), ">f4").reshape(4, 6),
    "<f8": np.linspace(-1e300, 1e300, 24).reshape(4, 6),
    ">c8": (np.arange(24) * (1 + 2j)).astype(">c8").reshape(4, 6),
    "<c16": (np.arange(24) * (1 - 0.5j)).reshape(4, 6),
    "<U3": np.array(["", "a", "bc", "déf", "x", "yy"] * 4).reshape(4, 6),
    "|S3": np.array([b"", b"a", b"b\0c", b"def", b"x", b"yy"] * 4).reshape(4, 6),
    "|V3": np.frombuffer(bytes(range(72)), "V3").reshape(4, 6),
    "<M8[ns]": (np.arange(24) * 10**12).astype("<M8[ns]").reshape(4, 6),
    ">M8[s]": np.arange(24).astype(">M8[s]").reshape(4, 6),
    "<m8[ms]": (np.arange(24) - 12).astype("<m8[ms]").reshape(4, 6),
    "struct": np.array([(i, b"ab", i / 4) for i in range(24)], dtype=STRUCT).reshape(4, 6),
}

#: (zarr-python keyword, zarr3c keyword) pairs naming the same compressor / filters
CODECS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "none": ({"compressors": None}, {"compressors": None}),
    "blosc": ({"compressors": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2)},
              {"compressors": {"name": "blosc", "configuration": {
                  "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4,
                  "blocksize": 0}}}),
    "zlib": ({"compressors": numcodecs.Zlib(level=4)},
             {"compressors": {"name": "numcodecs.zlib", "configuration": {"level": 4}}}),
    "gzip": ({"compressors": numcodecs.GZip(level=2)},
             {"compressors": {"name": "gzip", "configuration": {"level": 2}}}),
    "zstd": ({"compressors": numcodecs.Zstd(level=1)},
             {"compressors": {"name": "zstd", "configuration": {"level": 1,
                                                                "checksum": False}}}),
    "lz4-shuffle": ({"compressors": numcodecs.LZ4(),
                     "filters": [numcodecs.Shuffle(elementsize=4)]},
                    # (shuffle works on bytes: a v2 filter, but a v3 bytes->bytes codec)
                    {"compressors": [{"name": "numcodecs.shuffle",
                                      "configuration": {"elementsize": 4}},
                                     {"name": "numcodecs.lz4",
                                      "configuration": {"acceleration": 1}}]}),
    "delta": ({"compressors": numcodecs.Zlib(level=1),
               "filters": [numcodecs.Delta(dtype="<i4")]},
              {"compressors": {"name": "numcodecs.zlib", "configuration": {"level": 1}},
               "filters": [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}]}),
}


def _dtype(name: str) -> np.dtype:
    return STRUCT if name == "struct" else np.dtype(name)


def _assert_same(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape
    if expected.dtype.kind == "V" and expected.dtype.fields is None:
        assert actual.tobytes() == expected.tobytes()
    else:
        assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("=")
        np.testing.assert_array_equal(actual, expected)


def _zarr_python_writes(path: Path, data: np.ndarray, *, order: str, separator: str,
                        **codecs: Any) -> None:
    a = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=(3, 4),
                          zarr_format=2, order=order,
                          chunk_key_encoding={"name": "v2", "separator": separator}, **codecs)
    a[...] = data


def _zarr3c_writes(path: Path, data: np.ndarray, *, order: str, separator: str,
                   **codecs: Any) -> None:
    a = zarr3c.create_array(
        path, shape=data.shape, dtype=data.dtype, chunks=(3, 4), zarr_format=2, order=order,
        chunk_key_encoding={"name": "v2", "configuration": {"separator": separator}},
        **codecs)
    a[...] = data


@pytest.mark.parametrize("separator", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("direction", ["zarr-python->zarr3c", "zarr3c->zarr-python"])
def test_dtypes_orders_separators(tmp_path: Path, direction: str, dtype: str, order: str,
                                  separator: str, read_path: str) -> None:
    data = VALUES[dtype]
    path = tmp_path / "a.zarr"
    if direction == "zarr-python->zarr3c":
        _zarr_python_writes(path, data, order=order, separator=separator)
        a = zarr3c.open_array(path, mode="r")
        assert a.zarr_format == 2
        _assert_same(a[...], data)
        _assert_same(a[1:3, 2:5], data[1:3, 2:5])
    else:
        _zarr3c_writes(path, data, order=order, separator=separator)
        doc = json.loads((path / ".zarray").read_text())
        assert doc["order"] == order and doc["dimension_separator"] == separator
        first = "0" + separator + "0"
        assert (path / first).is_file()
        _assert_same(zarr.open_array(str(path), mode="r", zarr_format=2)[...], data)


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("direction", ["zarr-python->zarr3c", "zarr3c->zarr-python"])
def test_compressors_and_filters(tmp_path: Path, direction: str, codec: str) -> None:
    data = np.arange(24, dtype="<i4").reshape(4, 6) * 1001
    path = tmp_path / "a.zarr"
    theirs, ours = CODECS[codec]
    if direction == "zarr-python->zarr3c":
        _zarr_python_writes(path, data, order="C", separator=".", **theirs)
        _assert_same(zarr3c.open_array(path, mode="r")[...], data)
    else:
        _zarr3c_writes(path, data, order="C", separator=".", **ours)
        z = zarr.open_array(str(path), mode="r", zarr_format=2)
        _assert_same(z[...], data)
        expected = theirs["compressors"]
        doc = json.loads((path / ".zarray").read_text())
        if expected is None:
            assert doc["compressor"] is None
        else:
            assert doc["compressor"]["id"] == expected.codec_id


@pytest.mark.parametrize("compressor", [numcodecs.Blosc(), numcodecs.Blosc(cname="zstd",
                                                                         shuffle=2),
                                        numcodecs.Zstd(level=2), numcodecs.Zlib()],
                         ids=["blosc", "blosc-bitshuffle", "zstd", "zlib"])
@pytest.mark.parametrize("kind", ["str", "bytes"])
def test_variable_length_with_numcodecs_compressors(tmp_path: Path, kind: str,
                                                    compressor: Any) -> None:
    # a numcodecs compressor (blosc's typesize included, which v2 does not store) on a v2
    # object array: the same document as zarr-python 3 writes, read back by it
    values = (np.array(["a", "", "h\u00e9llo", "x\x00y"], dtype=object) if kind == "str"
              else np.array([b"a", b"", b"\x00\xff", b"long" * 9], dtype=object))
    dtype: Any = str if kind == "str" else zarr.dtype.VariableLengthBytes()
    z = zarr.create_array(str(tmp_path / "p"), shape=(6,), chunks=(3,), dtype=dtype,
                          zarr_format=2, compressors=compressor)
    a = zarr3c.create_array(tmp_path / "q", shape=(6,), chunks=(3,),
                            dtype=str if kind == "str" else "variable_length_bytes",
                            zarr_format=2, compressors=compressor)
    theirs = json.loads((tmp_path / "p" / ".zarray").read_text())
    ours = json.loads((tmp_path / "q" / ".zarray").read_text())
    assert ours == theirs
    a[:4] = values
    z[:4] = values
    for path in ("p", "q"):
        back = zarr.open_array(str(tmp_path / path), mode="r", zarr_format=2)[...]
        assert back[:4].tolist() == values.tolist()
        assert zarr3c.open_array(tmp_path / path)[...].tolist() == back.tolist()


@pytest.mark.parametrize("fill", [np.nan, np.inf, -np.inf, 1.5])
def test_float_fill_values_both_ways(tmp_path: Path, fill: float) -> None:
    a = zarr.create_array(str(tmp_path / "p"), shape=(5,), chunks=(2,), dtype="<f8",
                          zarr_format=2, fill_value=fill)
    a[:2] = 1
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "p")[...],
                                  np.array([1, 1, fill, fill, fill]))
    b = zarr3c.create_array(tmp_path / "q", shape=(5,), chunks=(2,), dtype="<f8",
                            zarr_format=2, fill_value=fill)
    b[:2] = 1
    z = zarr.open_array(str(tmp_path / "q"), mode="r", zarr_format=2)
    np.testing.assert_array_equal(z[...], np.array([1, 1, fill, fill, fill]))
    assert np.array_equal(np.asarray(z.fill_value), np.asarray(fill), equal_nan=True)


@pytest.mark.parametrize("dtype,fill", [("|S4", b"ab"), ("<U3", "xy"), ("|V2", b"\x01\x02"),
                                        ("<M8[s]", np.datetime64(5, "s")),
                                        ("struct", (3, b"z", 0.5))])
def test_other_fill_values_both_ways(tmp_path: Path, dtype: str, fill: Any) -> None:
    dt = _dtype(dtype)
    value = np.array(fill, dtype=dt)
    z = zarr.create_array(str(tmp_path / "p"), shape=(3,), chunks=(2,), dtype=dt,
                          zarr_format=2, fill_value=value[()])
    assert zarr3c.open_array(tmp_path / "p")[...].tobytes() == np.full(3, value).tobytes()
    b = zarr3c.create_array(tmp_path / "q", shape=(3,), chunks=(2,), dtype=dt,
                            zarr_format=2, fill_value=value[()])
    b[:1] = np.zeros(1, dt)
    expected = np.full(3, value)
    expected[0] = np.zeros((), dt)
    got = zarr.open_array(str(tmp_path / "q"), mode="r", zarr_format=2)[...]
    assert got.tobytes() == expected.tobytes()
    assert json.loads((tmp_path / "q" / ".zarray").read_text())["fill_value"] == \
        json.loads((tmp_path / "p" / ".zarray").read_text())["fill_value"]
    del z


@pytest.mark.parametrize("how", ["create_array", "create"])
@pytest.mark.parametrize("dtype", ["|b1", "<i2", "<f8", "<c16", "<U3", "|S3", "|V3",
                                   "<M8[ns]", "struct", "str"])
def test_null_fill_value_as_zarr_python(tmp_path: Path, how: str, dtype: str) -> None:
    # fill_value=None in Zarr v2 is "fill_value": null, in both zarr-python 3 functions
    dt: Any = str if dtype == "str" else _dtype(dtype)
    if how == "create_array":
        zarr.create_array(str(tmp_path / "p"), shape=(5,), chunks=(2,), dtype=dt,
                          zarr_format=2, fill_value=None, compressors=None)
        b = zarr3c.create_array(tmp_path / "q", shape=(5,), chunks=(2,), dtype=dt,
                                zarr_format=2, fill_value=None, compressors=None)
    else:
        zarr.create(store=str(tmp_path / "p"), shape=(5,), chunks=(2,), dtype=dt,
                    zarr_format=2, fill_value=None, compressor=None)
        b = zarr3c.create(store=tmp_path / "q", shape=(5,), chunks=(2,), dtype=dt,
                          zarr_format=2, fill_value=None, compressor=None)
    theirs = json.loads((tmp_path / "p" / ".zarray").read_text())
    ours = json.loads((tmp_path / "q" / ".zarray").read_text())
    assert theirs["fill_value"] is None
    assert ours == theirs
    # "no fill value" reads as zarr-python 3 reads it (the type's default: zero, "", NaT),
    # whoever wrote it, and Array.fill_value is None as there
    oracle = zarr.open_array(str(tmp_path / "p"), mode="r", zarr_format=2)[...]
    if dtype == "struct" and not hasattr(zarr.dtype, "Struct"):
        oracle = np.zeros(5, b.dtype)  # (before 3.4: an S field's default read as b"0")
    assert b.fill_value is None
    for path in ("p", "q"):
        read = zarr3c.open_array(tmp_path / path)
        assert read.fill_value is None
        if dtype == "str":
            assert read[...].tolist() == oracle.tolist() == [""] * 5
        else:
            assert read[...].dtype == oracle.dtype
            assert read[...].tobytes() == oracle.tobytes()
    written = (VALUES[dtype].ravel()[3:5] if dtype != "str"
               else np.array(["a", "bc"], dtype=object))
    b[:2] = written
    z = zarr.open_array(str(tmp_path / "q"), mode="r", zarr_format=2)
    assert z.fill_value is None
    assert z[:2].tolist() == written.tolist()


@pytest.mark.parametrize("fmt", [2, 3])
def test_default_fill_value_as_zarr_python(tmp_path: Path, fmt: int) -> None:
    # fill_value not given: the type's default, null nowhere; None in v3: the default too
    for i, kwargs in enumerate([{}, {"fill_value": None}] if fmt == 3 else [{}]):
        zarr.create_array(str(tmp_path / f"p{i}"), shape=(3,), dtype="<i2", zarr_format=fmt,
                          compressors=None, **kwargs)
        zarr3c.create_array(tmp_path / f"q{i}", shape=(3,), dtype="<i2", zarr_format=fmt,
                            compressors=None, **kwargs)
        key = ".zarray" if fmt == 2 else "zarr.json"
        theirs = json.loads((tmp_path / f"p{i}" / key).read_text())["fill_value"]
        assert theirs == 0
        assert json.loads((tmp_path / f"q{i}" / key).read_text())["fill_value"] == theirs


def test_zero_dimensional(tmp_path: Path) -> None:
    z = zarr.create_array(str(tmp_path / "p"), shape=(), dtype="<i8", zarr_format=2)
    z[()] = 42
    assert (tmp_path / "p" / "0").is_file()
    assert zarr3c.open_array(tmp_path / "p")[()] == 42
    b = zarr3c.create_array(tmp_path / "q", shape=(), dtype="<i8", zarr_format=2)
    b[()] = 7
    assert (tmp_path / "q" / "0").is_file()
    assert zarr.open_array(str(tmp_path / "q"), mode="r", zarr_format=2)[()] == 7


def test_groups_attributes_and_hierarchy(tmp_path: Path) -> None:
    root = zarr.open_group(str(tmp_path / "p"), mode="w", zarr_format=2)
    root.attrs["title"] = "t"
    sub = root.create_group("sub", attributes={"n": 1})
    sub.create_array("x", shape=(3,), dtype="<i2", attributes={"units": "m"})[...] = [1, 2, 3]
    g = zarr3c.open_group(tmp_path / "p", mode="r")
    assert g.zarr_format == 2 and g.attrs["title"] == "t"
    assert g["sub"].attrs.asdict() == {"n": 1}
    assert g["sub/x"].attrs["units"] == "m"
    np.testing.assert_array_equal(g["sub/x"][...], [1, 2, 3])

    ours = zarr3c.create_group(tmp_path / "q", zarr_format=2, attributes={"title": "t"})
    x = ours.create_group("sub", attributes={"n": 1}).create_array(
        "x", shape=(3,), dtype="<i2", attributes={"units": "m"})
    x[...] = [1, 2, 3]
    x.attrs["more"] = [1, 2]
    zg = zarr.open_group(str(tmp_path / "q"), mode="r", zarr_format=2)
    assert dict(zg.attrs) == {"title": "t"}
    assert dict(zg["sub/x"].attrs) == {"units": "m", "more": [1, 2]}
    np.testing.assert_array_equal(zg["sub/x"][...], [1, 2, 3])


def test_consolidated_both_ways(tmp_path: Path) -> None:
    root = zarr.open_group(str(tmp_path / "p"), mode="w", zarr_format=2)
    root.create_array("a/b", shape=(2,), dtype="<i4")[...] = [5, 6]
    zarr.consolidate_metadata(str(tmp_path / "p"))
    g = zarr3c.open_consolidated(tmp_path / "p")
    assert g.uses_consolidated_metadata
    np.testing.assert_array_equal(g["a/b"][...], [5, 6])

    ours = zarr3c.create_group(tmp_path / "q", zarr_format=2)
    ours.create_array("a/b", shape=(2,), dtype="<i4")[...] = [5, 6]
    zarr3c.consolidate_metadata(tmp_path / "q")
    zg = zarr.open_consolidated(str(tmp_path / "q"), zarr_format=2)
    np.testing.assert_array_equal(zg["a/b"][...], [5, 6])
    ours_doc = json.loads((tmp_path / "q" / ".zmetadata").read_text())
    theirs_doc = json.loads((tmp_path / "p" / ".zmetadata").read_text())
    assert sorted(ours_doc["metadata"]) == sorted(theirs_doc["metadata"])


def test_documents_match_zarr_python_fields(tmp_path: Path) -> None:
    zarr.create_array(str(tmp_path / "p"), shape=(4,), chunks=(2,), dtype="<f4",
                      zarr_format=2, compressors=numcodecs.Zstd(level=0))
    zarr3c.create_array(tmp_path / "q", shape=(4,), chunks=(2,), dtype="<f4",
                        zarr_format=2)
    theirs = json.loads((tmp_path / "p" / ".zarray").read_text())
    ours = json.loads((tmp_path / "q" / ".zarray").read_text())
    assert list(ours) == list(theirs)
    assert ours["compressor"]["id"] == "zstd"
    assert (tmp_path / "q" / ".zattrs").is_file()
