"""``zarr3c._kernels.vlen``: the vlen-utf8 and vlen-bytes encodings.

Three oracles: the pure-Python twins in :mod:`zarr3c._kernels._reference`, numcodecs'
``VLenUTF8`` / ``VLenBytes`` (what zarr-python writes and reads), and Python's own strict
UTF-8 decoder for which byte strings are UTF-8.  Every malformed buffer must raise ValueError
in the kernel and its twin alike, without reading outside the buffer or allocating from a
claimed count.
"""

from __future__ import annotations

import struct
import threading
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numcodecs import VLenBytes, VLenUTF8

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import vlen

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")

StringDType = getattr(np.dtypes, "StringDType", None)
needs_string_dtype = pytest.mark.skipif(
    not vlen.string_dtype_supported(), reason="numpy has no StringDType (numpy < 2)"
)


def objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def frame(*items: bytes, count: int | None = None) -> bytes:
    """A vlen buffer of ``items`` (with another stored count if given)."""
    n = len(items) if count is None else count
    return struct.pack("<I", n) + b"".join(struct.pack("<I", len(i)) + i for i in items)


# Strings: any code point but lone surrogates (which UTF-8 cannot encode), NULs, long runs.
texts = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200),
    st.sampled_from(["", "\x00", "a\x00b", "é", "€", "😀", "\U0010ffff", "x" * 5000]),
)
string_lists = st.lists(texts, max_size=40)
byte_lists = st.lists(st.binary(max_size=100), max_size=40)

# Bytes around every boundary of the UTF-8 grammar, to build near-valid sequences.
EDGE_BYTES = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
              0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFF]


# -- agreement with the twins and numcodecs ------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(values=string_lists)
def test_utf8_round_trip_matches_reference_and_numcodecs(values: list[str]) -> None:
    items = objects(values)
    encoded = vlen.encode_utf8(items)
    assert encoded == ref.encode_utf8(items)
    assert encoded == bytes(VLenUTF8().encode(items))
    decoded = vlen.decode_utf8(encoded, len(values))
    assert decoded.dtype == object and decoded.shape == (len(values),)
    assert decoded.tolist() == values
    assert all(type(s) is str for s in decoded)
    assert ref.decode_utf8(encoded, len(values)).tolist() == values
    assert VLenUTF8().decode(encoded).tolist() == values


@settings(max_examples=200, deadline=None)
@given(values=byte_lists)
def test_bytes_round_trip_matches_reference_and_numcodecs(values: list[bytes]) -> None:
    items = objects(values)
    encoded = vlen.encode_bytes(items)
    assert encoded == ref.encode_bytes(items)
    assert encoded == bytes(VLenBytes().encode(items))
    decoded = vlen.decode_bytes(encoded, len(values))
    assert decoded.dtype == object and decoded.tolist() == values
    assert all(type(b) is bytes for b in decoded)
    assert ref.decode_bytes(encoded, len(values)).tolist() == values


@needs_string_dtype
@settings(max_examples=200, deadline=None)
@given(values=string_lists)
def test_string_dtype_round_trip(values: list[str]) -> None:
    assert StringDType is not None
    strings = np.array(values, dtype=StringDType())
    encoded = vlen.encode_utf8(strings)
    assert encoded == vlen.encode_utf8(objects(values))
    assert encoded == ref.encode_utf8(strings)
    decoded = vlen.decode_utf8(encoded, len(values), StringDType())
    assert isinstance(decoded.dtype, StringDType)
    np.testing.assert_array_equal(decoded, strings)
    assert decoded.tolist() == values
    np.testing.assert_array_equal(ref.decode_utf8(encoded, len(values), StringDType()), strings)


@needs_string_dtype
def test_string_dtype_strided_and_missing_values() -> None:
    assert StringDType is not None
    values = ["a", "bé", "", "x" * 300, "\x00"]
    strided = np.array(values * 2, dtype=StringDType())[::2]
    assert vlen.encode_utf8(strided) == vlen.encode_utf8(objects(values * 2)[::2])
    for na in (None, np.nan, "NA"):
        with_na = np.array(["a", na, "c"], dtype=StringDType(na_object=na))
        encoded = vlen.encode_utf8(with_na)
        assert encoded == frame(b"a", b"", b"c")
        assert encoded == ref.encode_utf8(with_na)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.text(min_size=1, max_size=40), max_size=20))
def test_utf8_cached_by_cpython_is_used_as_is(values: list[str]) -> None:
    # fresh string objects: whether CPython keeps a UTF-8 form is per object
    fresh = objects([(v + "!")[:-1] for v in values])
    want = bytes(VLenUTF8().encode(fresh))
    assert vlen.encode_utf8(fresh) == want  # converted from CPython's internal form
    if vlen.string_dtype_supported():
        fresh.astype(StringDType())  # numpy asks each string for its UTF-8, which CPython keeps
        assert vlen.encode_utf8(fresh) == want  # copied from the kept UTF-8


def test_none_is_an_empty_item_as_numcodecs_writes_it() -> None:
    utf8 = objects(["a", None, ""])
    assert vlen.encode_utf8(utf8) == ref.encode_utf8(utf8) == bytes(VLenUTF8().encode(utf8))
    raw = objects([b"a", None])
    assert vlen.encode_bytes(raw) == ref.encode_bytes(raw) == bytes(VLenBytes().encode(raw))


def test_subclasses_and_strides() -> None:
    # numpy's scalar types are str / bytes subclasses (numcodecs refuses them; the bytes
    # written for them are those of the plain values)
    assert vlen.encode_utf8(objects([np.str_("ab"), "c"])) == frame(b"ab", b"c")
    assert vlen.encode_bytes(objects([np.bytes_(b"ab"), b"c"])) == frame(b"ab", b"c")
    items = objects(["a", "b", "c", "d"])
    assert vlen.encode_utf8(items[::-2]) == frame(b"d", b"b")


@pytest.mark.parametrize("length", [0, 1, 7, 8, 9, 63, 64, 65, 1000])
@pytest.mark.parametrize("text", ["a", "é", "\x7f", "😀"])
def test_lengths_around_the_fast_paths(length: int, text: str) -> None:
    value = text * length
    encoded = vlen.encode_utf8(objects([value, value[:-1]]))
    assert vlen.decode_utf8(encoded, 2).tolist() == [value, value[:-1]]
    if vlen.string_dtype_supported():
        assert vlen.decode_utf8(encoded, 2, StringDType()).tolist() == [value, value[:-1]]


def test_large_items_copied_without_the_gil_match_numcodecs() -> None:
    # over a mebibyte, 64 bytes per item on average: the copying pass releases the GIL
    values = [("é" if i % 3 == 0 else "a") * (1000 + i) for i in range(1500)]
    items = objects(values)
    encoded = vlen.encode_utf8(items)
    assert len(encoded) > 1 << 20
    assert encoded == bytes(VLenUTF8().encode(items))
    raw = objects([v.encode() for v in values])
    assert vlen.encode_bytes(raw) == bytes(VLenBytes().encode(raw))
    assert vlen.decode_utf8(encoded, len(values)).tolist() == values


def test_zero_items() -> None:
    empty = objects([])
    assert vlen.encode_utf8(empty) == vlen.encode_bytes(empty) == b"\x00\x00\x00\x00"
    assert vlen.decode_utf8(b"\x00\x00\x00\x00", 0).shape == (0,)
    assert vlen.decode_bytes(np.zeros(4, np.uint8), 0).shape == (0,)
    if vlen.string_dtype_supported():
        assert vlen.decode_utf8(b"\x00\x00\x00\x00", 0, StringDType()).shape == (0,)


def test_buffer_types() -> None:
    encoded = frame(b"ab", b"")
    for buf in (encoded, bytearray(encoded), memoryview(encoded), np.frombuffer(encoded, np.uint8)):
        assert vlen.decode_utf8(buf, 2).tolist() == ["ab", ""]
        assert vlen.decode_bytes(buf, 2).tolist() == [b"ab", b""]


# -- UTF-8 validity: the kernel's own check agrees with Python's -------------------------------


def python_accepts(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_validity(data: bytes) -> None:
    buf = frame(data)
    accepted = python_accepts(data)
    dtypes: list[Any] = [None]
    if vlen.string_dtype_supported():
        dtypes.append(StringDType())
    for dtype in dtypes:
        if accepted:
            assert vlen.decode_utf8(buf, 1, dtype).tolist() == [data.decode("utf-8")]
        else:
            with pytest.raises(ValueError, match="item 0 is not valid UTF-8"):
                vlen.decode_utf8(buf, 1, dtype)
    if not accepted:
        with pytest.raises(ValueError):
            ref.decode_utf8(buf, 1)


@settings(max_examples=500, deadline=None)
@given(data=st.lists(st.sampled_from(EDGE_BYTES), max_size=12).map(bytes))
def test_utf8_validity_at_the_grammar_edges(data: bytes) -> None:
    check_validity(data)


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(max_size=20), data=st.binary(max_size=30))
def test_utf8_validity_of_random_bytes(prefix: str, data: bytes) -> None:
    # after a valid (often ASCII) prefix, so that the eight-byte ASCII path hands over
    check_validity(prefix.encode() + data)


@pytest.mark.parametrize("data", [
    b"\xff", b"\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"abcdefgh\xe9",
    b"abcdefghijklmno\x80",
])  # fmt: skip
def test_invalid_utf8(data: bytes) -> None:
    assert not python_accepts(data)
    check_validity(data)


# -- malformed buffers ---------------------------------------------------------------------------

BAD_BUFFERS = [
    pytest.param(b"", 0, "too short", id="empty"),
    pytest.param(b"\x01\x00", 1, "too short", id="truncated-header"),
    pytest.param(frame(b"a", count=2), 1, "count is 2, expected 1", id="count-mismatch"),
    pytest.param(frame(b"a"), 2, "count is 1, expected 2", id="count-mismatch-2"),
    pytest.param(b"\x01\x00\x00\x00", 1, "length prefixes", id="count-without-items"),
    pytest.param(b"\xff\xff\xff\xff", 2**32 - 1, "length prefixes", id="huge-count"),
    pytest.param(b"\xff\xff\xff\x7f" + bytes(8), 2**31 - 1, "length prefixes",
                 id="huge-count-some-bytes"),
    pytest.param(frame(b"a" * 5)[:-2], 1, "past the end", id="item-past-end"),
    pytest.param(frame(b"", b"") + b"\x00", 2, "follow the last item", id="trailing-byte"),
    pytest.param(b"\x02\x00\x00\x00" + b"\x04\x00\x00\x00abcd\x00\x00", 2, "past the end",
                 id="prefix-past-end"),
    pytest.param(b"\x01\x00\x00\x00\xff\xff\xff\xff", 1, "past the end",
                 id="length-2**32-1"),
]


@pytest.mark.parametrize(("data", "count", "message"), BAD_BUFFERS)
def test_bad_buffers_raise_value_error(data: bytes, count: int, message: str) -> None:
    decoders: list[Any] = [vlen.decode_bytes, vlen.decode_utf8]
    if vlen.string_dtype_supported():
        decoders.append(lambda d, c: vlen.decode_utf8(d, c, StringDType()))
    for decode in decoders:
        with pytest.raises(ValueError, match=message):
            decode(data, count)
    for twin in (ref.decode_bytes, ref.decode_utf8):
        with pytest.raises(ValueError):
            twin(data, count)


def test_negative_expected_count() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        vlen.decode_utf8(b"\x00\x00\x00\x00", -1)
    with pytest.raises(ValueError):
        ref.decode_utf8(b"\x00\x00\x00\x00", -1)
    with pytest.raises(OverflowError):
        vlen.decode_bytes(b"\x00\x00\x00\x00", 2**70)


@pytest.mark.parametrize("count", [2**31 - 1, 2**32 - 1])
def test_claimed_counts_allocate_nothing(count: int) -> None:
    data = struct.pack("<I", count) + bytes(1000)
    tracemalloc.start()
    try:
        for decode in (vlen.decode_bytes, vlen.decode_utf8):
            with pytest.raises(ValueError):
                decode(data, count)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 16


@settings(max_examples=300, deadline=None)
@given(values=string_lists, cut=st.integers(0, 2**16), flips=st.lists(
    st.tuples(st.integers(0, 2**16), st.integers(0, 255)), max_size=3))
def test_damaged_buffers_agree_with_reference(values: list[str], cut: int,
                                              flips: list[tuple[int, int]]) -> None:
    good = vlen.encode_utf8(objects(values))
    damaged = bytearray(good[:len(good) - cut % (len(good) + 1)])
    for at, value in flips:
        if damaged:
            damaged[at % len(damaged)] = value
    data = bytes(damaged)
    pairs: list[Any] = [(vlen.decode_utf8, ref.decode_utf8), (vlen.decode_bytes, ref.decode_bytes)]
    if vlen.string_dtype_supported():
        pairs.append((lambda d, c: vlen.decode_utf8(d, c, StringDType()), ref.decode_utf8))
    for kernel, twin in pairs:
        try:
            want = twin(data, len(values)).tolist()
        except ValueError:
            with pytest.raises(ValueError):
                kernel(data, len(values))
        else:
            assert kernel(data, len(values)).tolist() == want


# -- bad items -----------------------------------------------------------------------------------

@pytest.mark.parametrize("item", [1, 1.5, float("nan"), b"x", bytearray(b"x"), ["a"]])
def test_encode_utf8_wrong_item_type(item: Any) -> None:
    items = objects(["ok", item])
    with pytest.raises(TypeError, match=f"item 1 has type {type(item).__name__}, expected str"):
        vlen.encode_utf8(items)
    with pytest.raises(TypeError):
        ref.encode_utf8(items)


@pytest.mark.parametrize("item", [1, "x", bytearray(b"x"), memoryview(b"x")])
def test_encode_bytes_wrong_item_type(item: Any) -> None:
    items = objects([b"ok", item])
    with pytest.raises(TypeError, match="item 1 has type .*, expected bytes"):
        vlen.encode_bytes(items)
    with pytest.raises(TypeError):
        ref.encode_bytes(items)


def test_encode_unencodable_string() -> None:
    items = objects(["a", "\ud800"])
    with pytest.raises(ValueError, match="item 1 cannot be encoded as UTF-8"):
        vlen.encode_utf8(items)
    with pytest.raises(ValueError):
        ref.encode_utf8(items)


@pytest.mark.parametrize(("items", "error"), [
    (["a"], TypeError),
    (np.array([1, 2]), TypeError),
    (objects(["a", "b"]).reshape(1, 2), ValueError),
])  # fmt: skip
def test_encode_wrong_containers(items: Any, error: type[Exception]) -> None:
    for encode in (vlen.encode_utf8, vlen.encode_bytes, ref.encode_utf8, ref.encode_bytes):
        with pytest.raises(error):
            encode(items)


def test_decode_wrong_dtype() -> None:
    with pytest.raises(TypeError, match="dtype"):
        vlen.decode_utf8(b"\x00\x00\x00\x00", 0, np.dtype("int32"))
    with pytest.raises(TypeError):
        ref.decode_utf8(b"\x00\x00\x00\x00", 0, np.dtype("int32"))


def test_threads_encode_and_decode_side_by_side() -> None:
    # the GIL is released while copying large outputs and packing StringDType items
    values = [("é" if i % 2 else "a") * (500 + i % 7) for i in range(3000)]
    items = objects(values)
    want = bytes(VLenUTF8().encode(items))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                assert vlen.encode_utf8(items) == want
                assert vlen.decode_utf8(want, len(values)).tolist() == values
                if vlen.string_dtype_supported():
                    strings = vlen.decode_utf8(want, len(values), StringDType())
                    assert vlen.encode_utf8(strings) == want
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# -- decoding into a caller's StringDType array ------------------------------------------------


def _filled(n: int) -> np.ndarray:
    """A StringDType array already holding strings (short, medium and long), which a decode
    into it must replace or leave as they are."""
    assert StringDType is not None
    return np.array([("o" * (i % 3) * 200) or f"old{i}" for i in range(n)], dtype=StringDType())


@needs_string_dtype
@settings(max_examples=200, deadline=None)
@given(values=string_lists, before=st.integers(0, 5), after=st.integers(0, 5))
def test_decode_into_a_view_agrees_with_reference(values: list[str], before: int,
                                                   after: int) -> None:
    encoded = vlen.encode_utf8(objects(values))
    n = len(values)
    for decode in (vlen.decode_utf8_into, ref.decode_utf8_into):
        base = _filled(before + n + after)
        want = base.copy()
        want[before:before + n] = values
        decode(encoded, base[before:before + n])
        np.testing.assert_array_equal(base, want)
        # the strings belong to the base's allocator: they outlive the view, and copy
        assert base.copy().tolist() == want.tolist()


@needs_string_dtype
def test_decode_into_over_several_runs() -> None:
    # Items past the first run (the kernel checks and packs 256 KiB at a time), a bad item in
    # a later run named by its index, the items before it packed, those after unchanged.
    values = [("é" if i % 3 else "a") * (3000 + i) for i in range(400)]
    encoded = bytearray(vlen.encode_utf8(objects(values)))
    out = _filled(len(values))
    vlen.decode_utf8_into(bytes(encoded), out)
    assert out.tolist() == values
    bad = 300
    at = 4 + sum(4 + len(v.encode()) for v in values[:bad]) + 4
    encoded[at] = 0xFF
    out = _filled(len(values))
    old = out.tolist()
    with pytest.raises(ValueError, match=f"item {bad} is not valid UTF-8"):
        vlen.decode_utf8_into(bytes(encoded), out)
    with pytest.raises(ValueError):
        ref.decode_utf8_into(bytes(encoded), _filled(len(values)))
    got = out.tolist()
    assert got[:60] == values[:60]  # (at least the first run's items)
    assert got[bad:] == old[bad:]


@needs_string_dtype
@settings(max_examples=300, deadline=None)
@given(values=string_lists, cut=st.integers(0, 2**16), flips=st.lists(
    st.tuples(st.integers(0, 2**16), st.integers(0, 255)), max_size=3))
def test_decode_into_damaged_buffers_agree_with_reference(
        values: list[str], cut: int, flips: list[tuple[int, int]]) -> None:
    good = vlen.encode_utf8(objects(values))
    damaged = bytearray(good[:len(good) - cut % (len(good) + 1)])
    for at, value in flips:
        if damaged:
            damaged[at % len(damaged)] = value
    data = bytes(damaged)
    want = _filled(len(values))
    try:
        ref.decode_utf8_into(data, want)
    except ValueError:
        with pytest.raises(ValueError):
            vlen.decode_utf8_into(data, _filled(len(values)))
    else:
        got = _filled(len(values))
        vlen.decode_utf8_into(data, got)
        assert got.tolist() == want.tolist()


@needs_string_dtype
def test_decode_into_refuses_other_outputs() -> None:
    assert StringDType is not None
    data = frame(b"a", b"b")
    read_only = np.array(["", ""], dtype=StringDType())
    read_only.flags.writeable = False
    cases: list[tuple[Any, type[Exception]]] = [
        (np.empty(2, dtype=object), TypeError),
        (np.empty(2, dtype="U1"), TypeError),
        ([None, None], TypeError),
        (np.empty((1, 2), dtype=StringDType()), ValueError),
        (np.empty(4, dtype=StringDType())[::2], ValueError),
        (read_only, ValueError),
    ]
    for out, error in cases:
        with pytest.raises(error):
            vlen.decode_utf8_into(data, out)
        with pytest.raises(error):
            ref.decode_utf8_into(data, out)
    with pytest.raises(ValueError, match="stored item count is 2, expected 3"):
        vlen.decode_utf8_into(data, np.empty(3, dtype=StringDType()))


@needs_string_dtype
def test_threads_decode_into_one_array() -> None:
    # threads packing into parts of one array share its allocator (taken per run)
    assert StringDType is not None
    parts = [[f"{k}-" + ("é" if i % 2 else "a") * (100 + 37 * i % 900) for i in range(2000)]
             for k in range(8)]
    encoded = [vlen.encode_utf8(objects(p)) for p in parts]
    out = np.empty(8 * 2000, dtype=StringDType())
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(3):
                vlen.decode_utf8_into(encoded[k], out[k * 2000:(k + 1) * 2000])
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert out.tolist() == [s for p in parts for s in p]


@settings(max_examples=100, deadline=None)
@given(values=string_lists, array_from=st.integers(-2, 400))
def test_encodings_as_arrays_agree_with_bytes(values: list[str], array_from: int) -> None:
    # from array_from bytes on, the same encoding as a uint8 array (numpy's memory)
    items = objects(values)
    raw = [v.encode() for v in values]
    cases: list[tuple[Any, Any, Any]] = [
        (vlen.encode_utf8, ref.encode_utf8, items),
        (vlen.encode_bytes, ref.encode_bytes, objects(raw)),
    ]
    if vlen.string_dtype_supported():
        cases.append((vlen.encode_utf8, ref.encode_utf8, np.array(values, dtype=StringDType())))
    for kernel, twin, data in cases:
        want = kernel(data)
        assert isinstance(want, bytes)
        for encode in (kernel, twin):
            got = encode(data, array_from=array_from)
            if 0 <= array_from <= len(want):
                assert isinstance(got, np.ndarray) and got.dtype == np.uint8 and got.ndim == 1
                assert got.flags.c_contiguous and got.flags.writeable
                assert got.tobytes() == want
            else:
                assert got == want
