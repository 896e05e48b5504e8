"""Arrays of the variable-length types ``string`` and ``variable_length_bytes``
(``zarr3c.metadata.vlen_types``), read and written through ``zarr3c.array.objects``: numpy is
the oracle for every selection and write, chunked and sharded, with random strings (empty,
non-ASCII, embedded NULs, long ones)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import ValueConversionError
from zarr3c.metadata.vlen_types import string_dtype

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
LAYOUTS = [{"chunks": (3, 2)}, {"chunks": (2, 2), "shards": (4, 4)}]


def _strings(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    pool = ["", "a", "é", "naïve", "日本語", "a\x00b", "x" * 1000, "🙂", "tab\tnewline\n"]
    picks = rng.integers(0, len(pool), size=shape)
    return np.array([pool[i] for i in picks.reshape(-1)], dtype=string_dtype()).reshape(shape)


@pytest.mark.parametrize("layout", LAYOUTS, ids=["chunked", "sharded"])
def test_string_selections_and_writes_agree_with_numpy(layout: dict) -> None:
    rng = np.random.default_rng(0)
    expected = _strings(rng, (7, 9))
    a = zarr3c.create_array("memory://", shape=expected.shape, dtype=str, **layout)
    assert a.dtype == string_dtype()
    np.testing.assert_array_equal(a[...], np.full(expected.shape, "", dtype=a.dtype))
    a[...] = expected
    for sel in [(...,), (slice(1, 6), slice(None, None, 2)), (2, slice(None)), (-1, -1),
                (slice(None, None, -1), 3)]:
        np.testing.assert_array_equal(a[sel], expected[sel])
    rows, cols = np.array([0, 5, 3]), np.array([8, 1])
    np.testing.assert_array_equal(a.oindex[rows, cols], expected[np.ix_(rows, cols)])
    np.testing.assert_array_equal(a.vindex[rows, [1, 2, 8]], expected[rows, [1, 2, 8]])
    mask = rng.random(expected.shape) < 0.3
    np.testing.assert_array_equal(a[mask], expected[mask])
    np.testing.assert_array_equal(a.get_many([(0, slice(None)), (slice(2, 4), 1)])[1],
                                  expected[2:4, 1])
    # writes: a region, a scalar broadcast, points with repeats (the last one wins), a mask
    expected[1:4, 2:7] = _strings(rng, (3, 5))
    a[1:4, 2:7] = expected[1:4, 2:7]
    expected[5] = "row"
    a[5] = "row"
    a.vindex[[0, 0, 6], [1, 1, 2]] = ["first", "second", "p"]
    expected[[0, 0, 6], [1, 1, 2]] = ["first", "second", "p"]
    a.oindex[[2, 4], [0, 8]] = "corner"
    expected[np.ix_([2, 4], [0, 8])] = "corner"
    a[::-1, 6:] = expected[:, 6:][::-1].copy()  # reversed: out runs of step -1
    a[:, :6] = expected[:, :6]  # whole chunks, encoded straight from the value
    np.testing.assert_array_equal(a[::-2, ::3], expected[::-2, ::3])
    np.testing.assert_array_equal(a[...], expected)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(TEXT, min_size=1, max_size=30), data=st.data())
def test_random_strings_round_trip(values: list[str], data: st.DataObject) -> None:
    chunk = data.draw(st.integers(1, 8))
    a = zarr3c.create_array("memory://", shape=(len(values),), chunks=(chunk,), dtype=str)
    a[:] = values
    assert a[:].tolist() == values
    b = zarr3c.create_array("memory://", shape=(len(values),), chunks=(chunk,), dtype=bytes)
    raw = [v.encode("utf-8") for v in values]
    b[:] = np.array(raw, dtype=object)
    assert b[:].tolist() == raw


def test_fill_values_and_empty_chunks() -> None:
    a = zarr3c.create_array("memory://", shape=(6,), chunks=(2,), dtype=str, fill_value="-")
    doc = json.loads(a.store.get("zarr.json"))
    assert doc["data_type"] == "string" and doc["fill_value"] == "-"
    assert doc["codecs"][0] == {"name": "vlen-utf8", "configuration": {}}
    assert a[:].tolist() == ["-"] * 6
    a[:] = ["-", "-", "x", "-", "-", "-"]
    assert sorted(k for k in a.store.list() if k.startswith("c/")) == ["c/1"]
    b = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=bytes,
                            fill_value=b"\x00\xff")
    doc = json.loads(b.store.get("zarr.json"))
    assert doc["data_type"] == "variable_length_bytes" and doc["fill_value"] == "AP8="
    assert b[:].tolist() == [b"\x00\xff"] * 3
    reopened = zarr3c.open_array(b.store)
    assert reopened[:].tolist() == [b"\x00\xff"] * 3


def test_bad_values_are_refused() -> None:
    b = zarr3c.create_array("memory://", shape=(2,), chunks=(2,), dtype=bytes)
    with pytest.raises(ValueConversionError):
        b[:] = np.array([b"ok", 5], dtype=object)
    with pytest.raises(ValueConversionError):
        zarr3c.create_array("memory://", shape=(2,), dtype=str, fill_value=b"x")
    for fill in (5, "x", [1, 2]):  # (bytes(5) would be five zero bytes)
        with pytest.raises(ValueConversionError, match="must be bytes"):
            zarr3c.create_array("memory://", shape=(2,), dtype=bytes, fill_value=fill)


def test_a_group_with_a_string_member_lists() -> None:
    g = zarr3c.create_group("memory://")
    g.create_array("station_name", shape=(2,), dtype=str)[:] = ["Oslo", "Bergen"]
    g.create_array("t", shape=(2,), dtype="f4")
    assert [n for n, _ in g.members()] == ["station_name", "t"]
    assert g["station_name"][:].tolist() == ["Oslo", "Bergen"]
    assert "station_name (2,) StringDType()" in g.tree()


def test_resize_and_append() -> None:
    a = zarr3c.create_array("memory://", shape=(3,), chunks=(2,), dtype=str)
    a[:] = ["a", "b", "c"]
    a.append(["d", "e"])
    a.resize((2,))
    a.resize((4,))
    assert a[:].tolist() == ["a", "b", "", ""]


def test_whole_chunks_decode_straight_into_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of whole rows land in C-contiguous parts of the output: decoded into them (no
    # chunk array), the others through a chunk and a copy; numpy is the oracle for both.
    from zarr3c.codecs.vlen import VLenUTF8Codec

    calls: list[tuple[int, ...]] = []
    decode_into = VLenUTF8Codec.decode_into

    def spy(self: VLenUTF8Codec, data: object, spec: object, out: np.ndarray) -> bool:
        calls.append(out.shape)
        return decode_into(self, data, spec, out)

    monkeypatch.setattr(VLenUTF8Codec, "decode_into", spy)
    rng = np.random.default_rng(1)
    expected = _strings(rng, (9, 4))
    a = zarr3c.create_array("memory://", shape=expected.shape, chunks=(2, 4), dtype=str,
                            fill_value="fill")
    a[:4] = expected[:4]  # chunks 2 to 4 are not stored: the fill value
    expected[4:] = "fill"
    into = a.dtype.kind == "T"  # (numpy 1.26 has no StringDType: object arrays, copied)
    for sel, whole in [((...,), 2), ((slice(2, 8),), 1), ((slice(1, 8),), 1),
                       ((slice(0, 4), slice(0, 4)), 2), ((slice(0, 4), slice(1, 3)), 0),
                       ((slice(None, None, -1),), 0), ((slice(0, 4), 1), 0)]:
        calls.clear()
        np.testing.assert_array_equal(a[sel], expected[sel])
        assert calls == [(2, 4)] * (whole if into else 0), sel
    expected = _strings(rng, (9, 4))
    a[:] = expected
    calls.clear()
    np.testing.assert_array_equal(a[2:8], expected[2:8])
    assert calls == [(2, 4)] * (3 if into else 0)
    # the last chunk runs past the array's end: decoded whole, then its part copied
    calls.clear()
    np.testing.assert_array_equal(a[8:], expected[8:])
    assert calls == []


def test_a_damaged_chunk_read_into_the_output_names_its_key() -> None:
    from zarr3c.errors import ChunkDecodeError

    a = zarr3c.create_array("memory://", shape=(4,), chunks=(2,), dtype=str, compressors=None)
    a[:] = ["a", "b", "c", "d"]
    a.store.set("c/1", b"\x02\x00\x00\x00\x01\x00\x00\x00c\x05\x00\x00\x00d")
    with pytest.raises(ChunkDecodeError, match="c/1") as info:
        a[:]
    assert "item 1's length (5 bytes) runs past the end" in str(info.value)
    a.store.set("c/1", b"\x02\x00\x00\x00\x01\x00\x00\x00c\x01\x00\x00\x00\xff")
    with pytest.raises(ChunkDecodeError, match="item 1 is not valid UTF-8"):
        a[2:]


def test_writes_take_string_arrays_as_they_are() -> None:
    # A StringDType value of another (equal) instance, whole chunks and a broadcast value:
    # encoded from the value itself, which is left as it was.
    values = np.array(["é" * 300, "b", "", "long " * 100, "x"], dtype=np.dtypes.StringDType()) \
        if getattr(np.dtypes, "StringDType", None) is not None else None
    if values is None:
        pytest.skip("numpy has no StringDType")
    before = values.copy()
    a = zarr3c.create_array("memory://", shape=(5,), chunks=(2,), dtype=str)
    assert a.dtype is not values.dtype
    a[:] = values
    np.testing.assert_array_equal(a[:], before)
    np.testing.assert_array_equal(values, before)
    a[:4] = np.broadcast_to(np.array("z", dtype=a.dtype), (4,))
    np.testing.assert_array_equal(a[:], np.array(["z"] * 4 + ["x"], dtype=a.dtype))
    read_only = before.copy()
    read_only.flags.writeable = False
    a[:] = read_only
    np.testing.assert_array_equal(a[:], before)
