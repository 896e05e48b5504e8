"""The zarrita.js Zarr v2 fixtures (written by zarr-python 2.18.1 with numcodecs) read to the
values of their generator script, from the folder and from both zips of it.

The data lives outside the repository, in ``../shared/conformance/zarrita-js-fixtures-v2/``
(see ``../shared/conformance/SOURCES.md``); the module is skipped when it is absent.
Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

FIXTURES = (Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
            / "zarrita-js-fixtures-v2")

if not FIXTURES.is_dir():
    pytest.skip(f"conformance data folder {FIXTURES} is absent (it sits beside the checkout "
                "in CI)", allow_module_level=True)

import zarr3c  # noqa: E402

ARANGE27 = np.arange(27).reshape(3, 3, 3)

#: array -> expected values (SOURCES.md, from zarrita.js' scripts/generate-v2.py)
EXPECTED: dict[str, Any] = {
    **{f"1d.contiguous.{c}.i2": np.array([1, 2, 3, 4], "i2")
       for c in ("zlib", "blosc", "lz4", "zstd", "raw")},
    "1d.contiguous.i4": np.array([1, 2, 3, 4], "i4"),
    "1d.contiguous.u1": np.array([255, 0, 255, 0], "u1"),
    "1d.contiguous.f4.le": np.array([-1000.5, 0, 1000.5, 0], "<f4"),
    "1d.contiguous.f4.be": np.array([-1000.5, 0, 1000.5, 0], ">f4"),
    "1d.contiguous.f8": np.array([1.5, 2.5, 3.5, 4.5], "f8"),
    "1d.contiguous.U13.le": np.array(["a", "b", "cc", "d"], "<U13"),
    "1d.contiguous.U13.be": np.array(["a", "b", "cc", "d"], ">U13"),
    "1d.contiguous.U7": np.array(["a", "b", "cc", "d"], "U7"),
    "1d.contiguous.S7": np.array([b"a", b"b", b"cc", b"d"], "S7"),
    "1d.contiguous.b1": np.array([True, False, True, False]),
    "1d.chunked.i2": np.array([1, 2, 3, 4], "i2"),
    "1d.chunked.ragged.i2": np.array([1, 2, 3, 4, 5], "i2"),
    "2d.contiguous.i2": np.array([[1, 2], [3, 4]], "i2"),
    "2d.chunked.i2": np.array([[1, 2], [3, 4]], "i2"),
    "2d.chunked.U7": np.array([["a", "b"], ["cc", "d"]], "U7"),
    "2d.chunked.ragged.i2": np.arange(1, 10, dtype="i2").reshape(3, 3),
    "3d.contiguous.i2": ARANGE27.astype("i2"),
    "3d.chunked.i2": ARANGE27.astype("i2"),
    "3d.chunked.mixed.i2.C": ARANGE27.astype("i2"),
    "3d.chunked.mixed.i2.F": ARANGE27.astype("i2"),
    "1d.contiguous.shuffle.i2": np.array([1, 2, 3, 4], "i2"),
    "1d.contiguous.delta.i2": np.array([1, 2, 3, 4], "i2"),
    "1d.contiguous.delta.shuffle.i2": np.array([10, 20, 30, 40], "i2"),
    # quantized to 0.1 (fixedscaleoffset, scale 10, stored as <i2)
    "1d.contiguous.fixedscaleoffset.f4": np.round(
        np.array([1000.0, 1000.1, 1000.2, 1000.3], "f4") * 10) / np.float32(10),
}
#: An object array of strings (vlen-utf8), its values per SOURCES.md.
STRINGS_O = [[["a", "aa"], ["aaa", "aaaa"]], [["b", "bb"], ["bbb", "bbbb"]]]


def _bitround(values: np.ndarray, keepbits: int) -> np.ndarray:
    """float32 values with their mantissas rounded to ``keepbits`` bits (numcodecs'
    BitRound: round half to even on the dropped bits)."""
    bits = values.astype("<f4").view("<u4").astype(np.uint64)
    drop = 23 - keepbits
    half = (1 << (drop - 1)) - 1
    bits = (bits + half + ((bits >> drop) & 1)) & ~np.uint64((1 << drop) - 1)
    return bits.astype("<u4").view("<f4")


@pytest.fixture(params=["folder", "zip-from-within", "zip-from-parent"])
def root(request: pytest.FixtureRequest) -> Iterator[zarr3c.Group]:
    if request.param == "folder":
        yield zarr3c.open_group(FIXTURES / "data.zarr", mode="r")
        return
    name = ("data.zipped_from_within.zarr.zip" if request.param == "zip-from-within"
            else "data.zipped_from_parent.zarr.zip")
    store = zarr3c.ZipStore(FIXTURES / name, mode="r")
    try:
        path = "data.zarr" if request.param == "zip-from-parent" else None
        yield zarr3c.open_group(store, path, mode="r")
    finally:
        store.close()


def test_root_group(root: zarr3c.Group) -> None:
    assert root.zarr_format == 2
    assert root.attrs.asdict() == {"answer": 42}
    assert root.uses_consolidated_metadata  # data.zarr has a .zmetadata
    names = set(root.keys())
    assert set(EXPECTED) | {"1d.contiguous.json2.O", "3d.chunked.O", "my group with spaces"} \
        <= names


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_array_values(root: zarr3c.Group, name: str, read_path: str) -> None:
    a = root[name]
    assert isinstance(a, zarr3c.Array) and a.zarr_format == 2
    expected = EXPECTED[name]
    got = a[...]
    assert got.dtype.newbyteorder("=") == expected.dtype.newbyteorder("=")
    np.testing.assert_array_equal(got, expected)


def test_bitround(root: zarr3c.Group) -> None:
    got = root["1d.contiguous.bitround.f4"][...]
    np.testing.assert_array_equal(got, _bitround(np.array([1.1, 2.2, 3.3, 4.4], "f4"), 3))


def test_f_order_chunks_are_stored_transposed() -> None:
    a = zarr3c.open_array(FIXTURES / "data.zarr" / "3d.chunked.mixed.i2.F", mode="r")
    assert a.metadata.order == "F"
    assert [c.to_dict()["name"] for c in a.codecs][0] == "transpose"
    np.testing.assert_array_equal(a[1, :, 0], ARANGE27[1, :, 0])


def test_group_with_spaces(root: zarr3c.Group) -> None:
    g = root["my group with spaces"]
    assert isinstance(g, zarr3c.Group)
    assert g.attrs.asdict() == {"description": "A group with spaces in the name"}


def test_an_object_array_of_strings(root: zarr3c.Group) -> None:
    a = root["3d.chunked.O"]
    assert a.dtype.kind in "TO" and a.shape == (2, 2, 2) and a.chunks == (1, 1, 2)
    assert a[...].tolist() == STRINGS_O
    assert a[1, :, 1].tolist() == ["bb", "bbbb"]
    assert zarr3c.open_array(FIXTURES / "data.zarr", "3d.chunked.O", mode="r")[...].tolist() \
        == STRINGS_O


def test_an_object_array_of_json_values(root: zarr3c.Group) -> None:
    # (the json2 object codec: the chunk is ["foo","bar","baz","qux","|O",[4]])
    a = root["1d.contiguous.json2.O"]
    assert a.dtype == np.dtype(object) and a.shape == (4,)
    assert a.metadata.data_type.object_codec == "json2"
    got = a[...]
    assert got.dtype == np.dtype(object) and got.tolist() == ["foo", "bar", "baz", "qux"]
    assert a[2] == "baz"


def test_without_consolidated_metadata() -> None:
    g = zarr3c.open_group(FIXTURES / "data.zarr", mode="r", use_consolidated=False)
    assert not g.uses_consolidated_metadata
    np.testing.assert_array_equal(g["2d.chunked.U7"][...], EXPECTED["2d.chunked.U7"])
    assert sorted(g.keys()) == sorted(
        zarr3c.open_group(FIXTURES / "data.zarr", mode="r").keys())


def test_big_endian_strings_open_read_only(tmp_path: Path) -> None:
    a = zarr3c.open_array(FIXTURES / "data.zarr", "1d.contiguous.U13.be", mode="r")
    assert a.metadata.read_only_reason is not None
    le = zarr3c.open_array(FIXTURES / "data.zarr", "1d.contiguous.U13.le", mode="r")
    assert le.metadata.read_only_reason is None
