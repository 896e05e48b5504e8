"""Interop of the extension data types with zarr-python 3 and tensorstore, both ways.

zarr-python: ``numpy.datetime64``, ``numpy.timedelta64``, ``fixed_length_utf32``,
``null_terminated_bytes``, ``raw_bytes`` and ``struct``, in both byte orders, with fill values,
plain and sharded; the ``zarr.json`` each library writes for the same call must be the same
document and the chunks the same bytes.  numpy is the oracle.  zarr-python 3.1 writes structs
under the older name ``structured`` and cannot read ``struct``: those cases skip with a reason
naming the version.

tensorstore: ``bfloat16``, ``float8_*`` and ``int4`` (with ``ml_dtypes``), and that the
``raw_bytes`` arrays zarr3c now writes for numpy ``V`` dtypes open in it (zarr3c's ``r<N>``
arrays, with their list fill value, do not: tensorstore wants base64 there).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


def _zarr() -> Any:
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")
    if not hasattr(zarr, "__version__") or not zarr.__version__.startswith("3."):
        pytest.skip(f"needs zarr-python 3 (installed: {zarr.__version__})")
    dtypes = pytest.importorskip("zarr.core.dtype",
                                 reason="needs zarr-python >= 3.1 (its data type registry)")
    return zarr, dtypes


def _needs_struct_reader(dtypes: Any, zarr: Any) -> None:
    if not hasattr(dtypes, "Struct"):
        pytest.skip("zarr-python reads the 'struct' data type from 3.4 on "
                    f"(installed: {zarr.__version__})")


RNG = np.random.default_rng(7)


def _values(dtype: np.dtype, n: int) -> np.ndarray:
    """Test values with each type's edge cases (NaT, empty strings, embedded NULs, ...)."""
    if dtype.kind in "Mm":
        out = RNG.integers(-(10**12), 10**12, n).view(dtype.newbyteorder("=")).astype(dtype)
        out[1] = np.array("NaT", dtype)
        return out
    if dtype.kind == "U":
        words = ["", "a", "\u00e9t\u00e9", "\u4e16\u754c", "\U0001f600", "zz"]
        return np.array([w[: dtype.itemsize // 4] for w in words * n][:n], dtype=dtype)
    if dtype.kind == "S":
        words = [b"", b"a\0b", b"xyz", b"\xff\x00", b"q"]
        return np.array([w[: dtype.itemsize] for w in words * n][:n], dtype=dtype)
    if dtype.fields is None:
        return RNG.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    out = np.zeros(n, dtype)
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        out[name] = (_values(sub, n) if sub.kind in "MmUSV"
                     else (RNG.standard_normal(n) * 100).astype(sub))
    return out


# (id, numpy dtype, fill value given to both libraries' create_array)
CASES = [
    ("datetime64-ns", "<M8[ns]", None),
    ("datetime64-ns-fill", "<M8[ns]", np.datetime64("2001-02-03T04:05:06.000000007")),
    ("datetime64-10s", "<M8[10s]", None),
    ("datetime64-D-big", ">M8[D]", np.datetime64("2020-01-02")),
    ("timedelta64-us", "<m8[us]", np.timedelta64(3, "us")),
    ("timedelta64-nat", "<m8[s]", np.timedelta64("NaT", "s")),
    ("utf32", "<U4", "\u00e9t\u00e9"),
    ("utf32-big", ">U2", None),
    ("null-terminated", "S4", b"ab"),
    ("raw-bytes", "V3", b"\x01\x02\x03"),
    ("struct", [("x", "<f4"), ("y", ">i2"), ("when", "<M8[ns]"), ("s", "<U2")], None),
    ("struct-fill", [("x", "<f8"), ("b", "S2")], (1.5, b"q")),
    ("struct-bytes-only", [("a", "u1"), ("b", "i1")], None),
    ("struct-nested", [("a", "u1"), ("b", [("c", ">f8"), ("d", "S2")])], None),
]


def _write(lib: str, path: Path, data: np.ndarray, fill: Any, endian: str,
           shards: Any) -> None:
    kwargs: dict[str, Any] = dict(
        shape=(13,), chunks=(3,) if shards else (4,), shards=shards, dtype=data.dtype,
        fill_value=fill, serializer={"name": "bytes", "configuration": {"endian": endian}},
    )
    if lib == "zarr-python":
        import zarr

        a = zarr.create_array(str(path), **kwargs)
    else:
        a = zarr3c.create_array(path, **kwargs)
    a[1:11] = data  # elements 0, 11 and 12 (and with shards a whole inner chunk) stay fill


def _read(lib: str, path: Path) -> tuple[np.ndarray, Any]:
    if lib == "zarr-python":
        import zarr

        a = zarr.open_array(str(path), mode="r")
        return np.asarray(a[:]), a.fill_value
    b = zarr3c.open_array(path)
    return b[:], b.fill_value


def _native_fields(dtype: np.dtype) -> bool:
    return dtype == dtype.newbyteorder("=")


def _same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("=") or (
        actual.dtype == expected.dtype.newbyteorder("=")), (actual.dtype, expected.dtype)
    assert actual.astype(expected.dtype.newbyteorder("=")).tobytes() == \
        expected.astype(expected.dtype.newbyteorder("=")).tobytes()


@pytest.mark.parametrize("shards", [None, (6,)], ids=["plain", "sharded"])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("writer, reader", [("zarr-python", "zarr3c"), ("zarr3c", "zarr-python")],
                         ids=["zarr-python->zarr3c", "zarr3c->zarr-python"])
@pytest.mark.parametrize("case, dtype, fill", CASES, ids=[c[0] for c in CASES])
def test_round_trip(tmp_path: Path, case: str, dtype: Any, fill: Any, writer: str,
                    reader: str, endian: str, shards: Any) -> None:
    zarr, dtypes = _zarr()
    dt = np.dtype(dtype)
    if dt.fields is not None and reader == "zarr-python":
        _needs_struct_reader(dtypes, zarr)
    old = not hasattr(dtypes, "Struct")  # zarr-python before 3.4 (3.1.6 checked)
    if old and shards and dt.kind == "V":
        pytest.skip("zarr-python 3.1 cannot shard void or struct arrays (TypeError: unhashable "
                    f"void scalar); 3.4 can (installed: {zarr.__version__})")
    if old and writer == "zarr-python" and dt.fields is not None and not _native_fields(dt):
        pytest.skip("zarr-python 3.1 stores non-native struct fields unswapped with no endian "
                    f"(it reads them back wrong itself); 3.4 does not (installed: "
                    f"{zarr.__version__})")
    data = _values(dt, 10)
    _write(writer, tmp_path / "a", data, fill, endian, shards)
    actual, fill_read = _read(reader, tmp_path / "a")
    fill_bits = np.asarray(fill_read).astype(dt.newbyteorder("=")).reshape(())
    expected = np.full(13, fill_bits, dtype=dt.newbyteorder("="))
    expected[1:11] = data
    _same(actual, expected)
    # the fill value each reads is the one written (zarr-python: None -> NaT / zeros)
    want = zarr3c.metadata.data_type_from_numpy(dt).fill_value_from_python(fill)
    assert fill_bits.tobytes() == want


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("case, dtype, fill", CASES, ids=[c[0] for c in CASES])
def test_same_documents_and_chunks(tmp_path: Path, case: str, dtype: Any, fill: Any,
                                   endian: str) -> None:
    _zarr()
    data = _values(np.dtype(dtype), 10)
    for lib in ("zarr-python", "zarr3c"):
        _write(lib, tmp_path / lib, data, fill, endian, None)
    docs = [json.loads((tmp_path / lib / "zarr.json").read_text())
            for lib in ("zarr-python", "zarr3c")]
    if docs[0]["data_type"] != docs[1]["data_type"] and np.dtype(dtype).fields is not None:
        assert docs[0]["data_type"]["name"] == "structured"
        pytest.skip("zarr-python writes 'struct' (not 'structured') from 3.4 on")
    for key in ("data_type", "fill_value", "codecs"):
        assert docs[0][key] == docs[1][key], key
    for key in ("c/0", "c/1", "c/2"):
        assert (tmp_path / "zarr-python" / key).read_bytes() == \
            (tmp_path / "zarr3c" / key).read_bytes(), key


def test_zarr_python_opens_what_zarr3c_writes_for_v_dtypes(tmp_path: Path) -> None:
    zarr, _ = _zarr()
    a = zarr3c.create_array(tmp_path / "v", shape=(4,), chunks=(2,), dtype="V3",
                            fill_value=b"\x01\x02\x03")
    a[:2] = np.frombuffer(b"abcdef", "V3")
    z = zarr.open_array(str(tmp_path / "v"), mode="r")
    assert z.dtype == np.dtype("V3")
    assert np.asarray(z[:]).tobytes() == b"abcdef\x01\x02\x03\x01\x02\x03"


def test_zarr_python_opens_zarr3c_datetime_metadata_unchanged(tmp_path: Path) -> None:
    zarr, _ = _zarr()
    zarr3c.create_array(tmp_path / "t", shape=(2,), chunks=(2,), dtype="M8[ms]")
    doc = json.loads((tmp_path / "t" / "zarr.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path / "t"), mode="r")
    assert z.dtype == np.dtype("M8[ms]")
    assert z.metadata.to_dict()["data_type"] == doc["data_type"]
    assert np.isnat(z.fill_value)


# -- tensorstore: ml_dtypes types and raw_bytes --------------------------------------------------


def _ts() -> Any:
    return pytest.importorskip("tensorstore",
                               reason="tensorstore is not installed (pip install tensorstore)")


ML_CASES = [
    ("bfloat16", [1.5, -2.0, float("inf"), float("nan"), 0.0, 3e38], "NaN"),
    ("float8_e4m3fn", [1.5, -2.0, 448.0, float("nan"), 0.0, 0.125], 1.0),
    ("float8_e5m2", [1.5, -2.0, float("-inf"), float("nan"), 0.0, 57344.0], "Infinity"),
    ("int4", [-8, 7, 0, -1, 3, 5], -3),
]


def _ml_dtype(name: str) -> np.dtype:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    return np.dtype(getattr(ml_dtypes, name))


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("writer", ["tensorstore", "zarr3c"])
@pytest.mark.parametrize("name, values, fill", ML_CASES, ids=[c[0] for c in ML_CASES])
def test_ml_dtypes_with_tensorstore(tmp_path: Path, name: str, values: list, fill: Any,
                                    writer: str, endian: str) -> None:
    ts = _ts()
    dtype = _ml_dtype(name)
    data = np.array(values, dtype=dtype)
    serializer = ({"name": "bytes"} if dtype.itemsize == 1
                  else {"name": "bytes", "configuration": {"endian": endian}})
    path = tmp_path / "a"
    if writer == "tensorstore":
        metadata = {
            "shape": [8], "data_type": name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
            "codecs": [serializer],
        }
        store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                         "metadata": metadata}, create=True).result()
        store[1:7].write(data).result()
        out = zarr3c.open_array(path)
        assert out.dtype == dtype
        actual = out[:]
    else:
        a = zarr3c.create_array(path, shape=(8,), chunks=(3,), dtype=dtype, fill_value=fill,
                                serializer=serializer, compressors=None)
        a[1:7] = data
        assert json.loads((path / "zarr.json").read_text())["data_type"] == name
        store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                        "path": str(path)}}).result()
        actual = np.asarray(store.read().result())
    fill_bits = zarr3c.metadata.data_type_from_numpy(dtype).fill_value_from_python(fill)
    expected = np.full(8, np.frombuffer(fill_bits, dtype)[0], dtype=dtype)
    expected[1:7] = data
    assert actual.dtype == dtype
    if name.startswith(("int", "uint")):
        # the spec leaves a 4-bit integer's upper bits arbitrary (tensorstore sign-extends)
        np.testing.assert_array_equal(actual.astype("i1"), expected.astype("i1"))
    else:
        assert actual.tobytes() == expected.tobytes()


_TS_OPEN = """
import sys, tensorstore as ts
t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": sys.argv[1]}}).result()
print(t.spec().to_json()["metadata"]["data_type"], list(t.shape))
"""


def test_tensorstore_opens_raw_bytes_written_by_zarr3c(tmp_path: Path) -> None:
    _ts()
    a = zarr3c.create_array(tmp_path / "v", shape=(4,), chunks=(2,), dtype="V3")
    a[:] = np.frombuffer(bytes(range(12)), "V3")
    # In a child process: tensorstore aborts the interpreter on some raw-bits metadata.
    done = subprocess.run([sys.executable, "-c", _TS_OPEN, str(tmp_path / "v")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # tensorstore shows raw_bytes as a "byte" array with one more dimension
    assert done.stdout.split() == ["raw_bytes", "[4,", "3]"]
