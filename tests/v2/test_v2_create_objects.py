"""New Zarr v2 object arrays of strings and bytes (issue 31): ``create_array(...,
zarr_format=2, dtype=str)`` (``bytes``) writes the ``.zarray`` zarr-python 3 writes
(``"dtype": "|O"``, ``"filters": [{"id": "vlen-utf8"}]`` / ``vlen-bytes``) and chunks that
decode to zarr-python's bytes; zarr-python reads them (and zarr3c reads and writes into
zarr-python's); ``copy`` converts them to the v3 ``string`` / ``variable_length_bytes`` types
and back, chunks moved as they are.

The in-process zarr-python is 3.1.6 on Python 3.11; the same file run under a Python 3.12
environment with zarr-python 3.4.2 checks that one.  Spec:
https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html (object codecs in ``filters``);
https://numcodecs.readthedocs.io/en/stable/other/vlen.html.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest

import zarr3c
from zarr3c.errors import UnsupportedFeatureError

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

STRINGS = ["", "a", "é", "日本語", "a\x00b", "x" * 300, "🙂"]
BYTES = [b"", b"a", b"\x00\xff", "日本".encode(), b"x" * 300, b"\x00", b"z"]


def _values(kind: str) -> list[Any]:
    return STRINGS if kind == "string" else BYTES


def _dtype(kind: str) -> Any:
    return str if kind == "string" else bytes


def _fill(kind: str) -> Any:
    return "-" if kind == "string" else b"-"


def _zarr() -> Any:
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
    if int(zarr.__version__.split(".")[0]) < 3:
        pytest.skip(f"zarr-python {zarr.__version__} is not zarr-python 3")
    return zarr


def _zarr_dtype(zarr: Any, kind: str) -> Any:
    return str if kind == "string" else zarr.core.dtype.VariableLengthBytes()


def _raw_chunks(folder: Path) -> dict[str, bytes]:
    """The decompressed chunks of a v2 array folder (zstd or none), by key."""
    doc = json.loads((folder / ".zarray").read_text())
    out = {}
    for p in folder.iterdir():
        if p.name.startswith("."):
            continue
        data = p.read_bytes()
        if doc["compressor"] is not None:
            data = numcodecs.get_codec(doc["compressor"]).decode(data)
        out[p.name] = bytes(data)
    return out


# -- creating -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["string", "bytes"])
def test_the_document_is_an_object_array_of_the_vlen_codec(kind: str) -> None:
    a = zarr3c.create_array("memory://", shape=(5,), chunks=(2,), dtype=_dtype(kind),
                            zarr_format=2, fill_value=_fill(kind), compressors=None)
    doc = json.loads(a.store.get(".zarray"))
    codec = "vlen-utf8" if kind == "string" else "vlen-bytes"
    assert doc == {"shape": [5], "chunks": [2], "dtype": "|O",
                   "fill_value": "-" if kind == "string" else "LQ==", "order": "C",
                   "filters": [{"id": codec}], "dimension_separator": ".",
                   "compressor": None, "zarr_format": 2}
    assert json.loads(a.store.get(".zattrs")) == {}
    assert a.data_type.name == ("string" if kind == "string" else "variable_length_bytes")
    assert a[...].tolist() == [_fill(kind)] * 5
    assert a.dtype == zarr3c.create_array("memory://", shape=(1,), dtype=_dtype(kind)).dtype


@pytest.mark.parametrize("dtype", ["str", "string", np.dtypes.StringDType(),
                                   "variable_length_bytes"])
def test_every_spelling_of_the_types(dtype: Any) -> None:
    a = zarr3c.create_array("memory://", shape=(3,), dtype=dtype, zarr_format=2)
    codec = "vlen-bytes" if dtype == "variable_length_bytes" else "vlen-utf8"
    assert json.loads(a.store.get(".zarray"))["filters"] == [{"id": codec}]


@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("options", [{}, {"fill_value": "F"}, {"compressors": None},
                                     {"chunks": (3, 2), "shape": (4, 5)}],
                         ids=["default", "fill", "uncompressed", "2d"])
def test_the_document_is_zarr_pythons(tmp_path: Path, kind: str,
                                      options: dict[str, Any]) -> None:
    zarr = _zarr()
    options = {"shape": (5,), "chunks": (2,), **options}
    if kind == "bytes" and "fill_value" in options:
        options["fill_value"] = b"F"
    ours = zarr3c.create_array(tmp_path / "ours", dtype=_dtype(kind), zarr_format=2,
                               **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "theirs"), dtype=_zarr_dtype(zarr, kind),
                          zarr_format=2, **options)
    got = json.loads((tmp_path / "ours" / ".zarray").read_text())
    want = json.loads((tmp_path / "theirs" / ".zarray").read_text())
    assert got == want
    assert ours.fill_value == (options.get("fill_value") or _fill(kind)[:0])


@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_zarr3c_writes_zarr_python_reads(tmp_path: Path, kind: str, order: str) -> None:
    zarr = _zarr()
    values = np.array(_values(kind) + _values(kind)[:5], dtype=object).reshape(3, 4)
    a = zarr3c.create_array(tmp_path / "a", shape=(4, 4), chunks=(2, 3), order=order,
                            dtype=_dtype(kind), fill_value=_fill(kind), zarr_format=2)
    a[:3] = values.astype(a.dtype)       # row 3 left: chunk (1, 1) partly, fill values
    assert json.loads((tmp_path / "a" / ".zarray").read_text())["order"] == order
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path / "a"), mode="r")
        got = z[:]
    expected = [*values.tolist(), [_fill(kind)] * 4]
    assert got.tolist() == expected == zarr3c.open_array(tmp_path / "a", mode="r")[:].tolist()


@pytest.mark.parametrize("kind", ["string", "bytes"])
def test_the_chunks_are_zarr_pythons(tmp_path: Path, kind: str) -> None:
    # The same values give the same encoded elements (zstd frames may differ in their
    # header: compared decompressed).
    zarr = _zarr()
    values = np.array(_values(kind), dtype=object)
    a = zarr3c.create_array(tmp_path / "ours", shape=(9,), chunks=(3,), dtype=_dtype(kind),
                            zarr_format=2)
    a[:7] = values.astype(a.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path / "theirs"), shape=(9,), chunks=(3,),
                              dtype=_zarr_dtype(zarr, kind), zarr_format=2)
        z[:7] = values.astype(z.dtype)
    assert _raw_chunks(tmp_path / "ours") == _raw_chunks(tmp_path / "theirs")
    assert sorted(_raw_chunks(tmp_path / "ours")) == ["0", "1", "2"]


@pytest.mark.parametrize("kind", ["string", "bytes"])
def test_zarr_python_writes_zarr3c_reads_and_writes(tmp_path: Path, kind: str) -> None:
    zarr = _zarr()
    values = _values(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path), shape=(9,), chunks=(2,), zarr_format=2,
                              dtype=_zarr_dtype(zarr, kind), fill_value=_fill(kind))
        z[:7] = np.array(values, dtype=object).astype(z.dtype)
    a = zarr3c.open_array(tmp_path, mode="r+")
    assert a[:].tolist() == [*values, _fill(kind), _fill(kind)]
    new = "new" if kind == "string" else b"new"
    a[3] = new                            # partial: the chunk read, one element replaced
    a[8] = new                            # into a chunk not stored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = zarr.open_array(str(tmp_path), mode="r")[:]
    assert got.tolist() == [*values[:3], new, *values[4:], _fill(kind), new]


def test_object_arrays_of_other_codecs_are_still_refused() -> None:
    # zarr-python 3 creates no vlen-array or json2 arrays either; a plain object dtype names
    # no element type.
    with pytest.raises(zarr3c.errors.MetadataError, match="dtype object"):
        zarr3c.create_array("memory://", shape=(3,), dtype=object, zarr_format=2)
    with pytest.raises(zarr3c.errors.MetadataError):
        zarr3c.create_array("memory://", shape=(3,), dtype=str, zarr_format=2,
                            serializer={"name": "numcodecs.json2"})


# -- copying --------------------------------------------------------------------------------


def _source(root: Path) -> zarr3c.Group:
    g = zarr3c.create_group(root, zarr_format=2, attributes={"t": 1})
    for kind in ("string", "bytes"):
        a = g.create_array(kind, shape=(9,), chunks=(2,), dtype=_dtype(kind),
                           fill_value=_fill(kind), attributes={"k": kind})
        a[:7] = np.array(_values(kind), dtype=object).astype(a.dtype)
    return g


@pytest.mark.parametrize("kind", ["string", "bytes"])
def test_copy_v2_to_v3_and_back_moves_chunks_as_they_are(tmp_path: Path, kind: str) -> None:
    _source(tmp_path / "v2")
    v3 = zarr3c.copy(tmp_path / "v2", tmp_path / "v3", zarr_format=3)
    doc = json.loads((tmp_path / "v3" / kind / "zarr.json").read_text())
    assert doc["data_type"] == ("string" if kind == "string" else "variable_length_bytes")
    assert [c["name"] for c in doc["codecs"]] == [
        "vlen-utf8" if kind == "string" else "vlen-bytes", "zstd"]
    assert v3[kind].attrs["k"] == kind and v3[kind].fill_value == _fill(kind)
    expected = [*_values(kind), _fill(kind), _fill(kind)]
    assert v3[kind][:].tolist() == expected
    for i in range(4):
        assert ((tmp_path / "v3" / kind / "c" / str(i)).read_bytes()
                == (tmp_path / "v2" / kind / str(i)).read_bytes())
    assert not (tmp_path / "v3" / kind / "c" / "4").exists()  # (not stored in the source)

    back = zarr3c.copy(tmp_path / "v3", tmp_path / "back", zarr_format=2)
    assert back[kind][:].tolist() == expected
    assert ((tmp_path / "back" / kind / ".zarray").read_bytes()
            == (tmp_path / "v2" / kind / ".zarray").read_bytes())
    assert _raw_chunks(tmp_path / "back" / kind) == _raw_chunks(tmp_path / "v2" / kind)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_copy_reencoded_strings(tmp_path: Path, zarr_format: int) -> None:
    _source(tmp_path / "v2")
    out = zarr3c.copy(tmp_path / "v2", tmp_path / "out", zarr_format=zarr_format,
                      chunks=(4,), compressors=None)
    for kind in ("string", "bytes"):
        assert out[kind].chunks == (4,)
        assert out[kind][:].tolist() == [*_values(kind), _fill(kind), _fill(kind)]
        assert [c.to_dict()["name"] for c in out[kind].codecs] == [
            "vlen-utf8" if kind == "string" else "vlen-bytes"]


def test_copies_read_in_zarr_python(tmp_path: Path) -> None:
    zarr = _zarr()
    _source(tmp_path / "v2")
    zarr3c.copy(tmp_path / "v2", tmp_path / "v3", zarr_format=3)
    zarr3c.copy(tmp_path / "v3", tmp_path / "back", zarr_format=2, chunks=(3,))
    for out in ("v3", "back"):
        for kind in ("string", "bytes"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = zarr.open_array(str(tmp_path / out / kind), mode="r")[:]
            assert got.tolist() == [*_values(kind), _fill(kind), _fill(kind)], (out, kind)


def test_cli_copy_both_ways(tmp_path: Path) -> None:
    _source(tmp_path / "v2")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(zarr3c.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    for src, dst, fmt in (("v2", "v3", "3"), ("v3", "back", "2")):
        proc = subprocess.run([sys.executable, "-m", "zarr3c", "copy", str(tmp_path / src),
                               str(tmp_path / dst), "--zarr-format", fmt, "--no-progress"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"copied {tmp_path / src} -> {tmp_path / dst} "
                                      f"(zarr_format {fmt}): 2 arrays")
    assert ((tmp_path / "back" / "string" / "0").read_bytes()
            == (tmp_path / "v2" / "string" / "0").read_bytes())
    back = zarr3c.open_group(tmp_path / "back", mode="r")
    assert back.zarr_format == 2 and back.attrs["t"] == 1
    assert back["bytes"][:].tolist() == [*BYTES, b"-", b"-"]


def test_copy_still_refuses_vlen_array_and_json2(tmp_path: Path) -> None:
    (tmp_path / "va").mkdir()
    (tmp_path / "va" / ".zarray").write_text(json.dumps({
        "chunks": [2], "compressor": None, "dtype": "|O", "fill_value": 0,
        "filters": [{"id": "vlen-array", "dtype": "<i4"}], "order": "C", "shape": [2],
        "zarr_format": 2}))
    for fmt in (2, 3):
        with pytest.raises(UnsupportedFeatureError, match="vlen-array"):
            zarr3c.copy(tmp_path / "va", tmp_path / f"out{fmt}", zarr_format=fmt)
        assert not (tmp_path / f"out{fmt}").exists()


@pytest.mark.parametrize("kind", ["string", "bytes"])
@pytest.mark.parametrize("spelling", ["numcodecs", "id", "name", "v3"])
def test_the_object_codec_may_be_given_in_filters(kind: str, spelling: str) -> None:
    # As zarr-python 3 takes it for v2 (filters=[numcodecs.VLenUTF8()]); zarr3c holds it as
    # the serializer, and writes the same document as without it.
    codec_id = "vlen-utf8" if kind == "string" else "vlen-bytes"
    given = {"numcodecs": numcodecs.get_codec({"id": codec_id}), "id": {"id": codec_id},
             "name": codec_id, "v3": {"name": f"numcodecs.{codec_id}"}}[spelling]
    a = zarr3c.create_array("memory://", shape=(4,), chunks=(2,), dtype=_dtype(kind),
                            zarr_format=2, filters=[given])
    b = zarr3c.create_array("memory://", shape=(4,), chunks=(2,), dtype=_dtype(kind),
                            zarr_format=2)
    assert a.store.get(".zarray") == b.store.get(".zarray")
    a[:] = np.array(_values(kind)[:4], dtype=object).astype(a.dtype)
    assert a[:].tolist() == _values(kind)[:4]


@pytest.mark.parametrize(("filters", "serializer", "message"), [
    ([numcodecs.VLenBytes()], "auto", r"filters\[0\]: a string array's object codec is "
                                      r"'vlen-utf8', not 'vlen-bytes'"),
    ([numcodecs.VLenUTF8(), numcodecs.VLenUTF8()], "auto", r"filters\[1\]: .* given twice"),
    ([numcodecs.VLenUTF8()], {"name": "vlen-utf8"}, r"filters\[0\]: .* given twice"),
])
def test_a_wrong_or_second_object_codec_is_refused(tmp_path: Path, filters: Any,
                                                   serializer: Any, message: str) -> None:
    # (zarr-python 3.1.6 and 3.4.2 write a string array with the vlen-bytes filter)
    with pytest.raises(zarr3c.errors.MetadataError, match=message):
        zarr3c.create_array(tmp_path / "a", shape=(2,), dtype=str, zarr_format=2,
                            filters=filters, serializer=serializer)
    assert not (tmp_path / "a").exists()
