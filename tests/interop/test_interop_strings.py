"""Interop with zarr-python 3 for the variable-length types: each library reads the
``string`` and ``variable_length_bytes`` arrays the other wrote (chunked and sharded, with
fill values and missing chunks), on a LocalStore folder; numpy is the oracle, and zarr3c
reads strings as zarr-python returns them (``StringDType``, object arrays of ``bytes``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")

import zarr3c

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

STRINGS = ["", "a", "é", "日本語", "a\x00b", "x" * 500, "🙂", "last"]


def _dtype(kind: str) -> Any:
    return str if kind == "string" else zarr.core.dtype.VariableLengthBytes()


@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("shards", [None, (4,)], ids=["chunked", "sharded"])
def test_zarr_python_writes_zarr3c_reads(tmp_path: Path, kind: str, shards: Any) -> None:
    values = STRINGS if kind == "string" else [s.encode() for s in STRINGS]
    fill = "-" if kind == "string" else b"-"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path), shape=(10,), chunks=(2,), shards=shards,
                              dtype=_dtype(kind), fill_value=fill)
        z[:8] = np.array(values, dtype=z.dtype)
    a = zarr3c.open_array(str(tmp_path))
    got = a[:]
    assert got.dtype == z.dtype
    assert got.tolist() == [*values, fill, fill]
    assert a.vindex[[9, 2]].tolist() == [fill, values[2]]


@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("shards", [None, (4,)], ids=["chunked", "sharded"])
def test_zarr3c_writes_zarr_python_reads(tmp_path: Path, kind: str, shards: Any) -> None:
    values = STRINGS if kind == "string" else [s.encode() for s in STRINGS]
    fill = "-" if kind == "string" else b"-"
    a = zarr3c.create_array(str(tmp_path), shape=(10,), chunks=(2,), shards=shards,
                            dtype=str if kind == "string" else bytes, fill_value=fill)
    a[:8] = np.array(values, dtype=a.dtype)
    doc = json.loads((tmp_path / "zarr.json").read_text())
    assert doc["data_type"] == ("string" if kind == "string" else "variable_length_bytes")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path), mode="r")
        got = z[:]
    assert got.dtype == a.dtype
    assert got.tolist() == [*values, fill, fill]


def test_the_same_chunks_as_zarr_python(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path / "z"), shape=(8,), chunks=(4,), dtype=str)
        z[:] = STRINGS
    a = zarr3c.create_array(str(tmp_path / "a"), shape=(8,), chunks=(4,), dtype=str)
    a[:] = STRINGS
    for key in ("c/0", "c/1"):
        assert (tmp_path / "a" / key).read_bytes() == (tmp_path / "z" / key).read_bytes()
    assert json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"] == \
        json.loads((tmp_path / "z" / "zarr.json").read_text())["codecs"]
