"""The ``bytes`` (and legacy ``endian``) array -> bytes codec."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.base import ChunkSpec
from zarr3c.codecs.bytes import BytesCodec, EndianCodec
from zarr3c.errors import ChunkDecodeError, MetadataError

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "V3",
]  # fmt: skip


def random_array(seed: int, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Any bit pattern (NaNs, infinities, subnormals) of ``dtype``; bools stay 0/1."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    if dtype == np.dtype(bool):
        raw &= 1
    return raw.view(dtype).reshape(shape)


def spec_of(a: np.ndarray) -> ChunkSpec:
    return ChunkSpec(shape=a.shape, dtype=a.dtype, fill_value=np.zeros((), a.dtype))


def bytes_config(endian: str | None) -> dict:
    return (
        {"name": "bytes"}
        if endian is None
        else {"name": "bytes", "configuration": {"endian": endian}}
    )


shapes = st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("endian", ["little", "big"])
@settings(max_examples=15, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**32 - 1))
def test_round_trip_every_dtype(dtype: str, endian: str, shape: tuple, seed: int) -> None:
    a = random_array(seed, dtype, shape)
    p = CodecPipeline.from_codecs([bytes_config(endian)], dtype=dtype)
    out = p.decode(p.encode(a), shape)
    assert out.shape == a.shape and out.dtype == a.dtype
    assert out.tobytes() == a.tobytes()
    assert out.flags.c_contiguous


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("endian,prefix", [("little", "<"), ("big", ">")])
def test_encoding_is_numpy_byte_order(dtype: str, endian: Any, prefix: Any) -> None:
    a = random_array(7, dtype, (3, 4))
    expected_dtype = a.dtype if a.dtype.kind == "V" else a.dtype.newbyteorder(prefix)
    expected = a.astype(expected_dtype).tobytes()
    encoded = BytesCodec(endian=endian).encode(a, spec_of(a))
    assert bytes(encoded) == expected
    # and decoding the numpy-produced bytes gives back the native values
    decoded = BytesCodec(endian=endian).decode(expected, spec_of(a))
    assert decoded.tobytes() == a.tobytes()
    assert decoded.dtype.isnative


def test_complex_swaps_each_component() -> None:
    a = np.array([1 + 2j], dtype="<c8")
    encoded = bytes(BytesCodec(endian="big").encode(a, spec_of(a)))
    assert encoded == np.array([1.0, 2.0], dtype=">f4").tobytes() == b"\x3f\x80\0\0\x40\0\0\0"


def test_raw_types_are_never_swapped() -> None:
    a = np.frombuffer(b"\x01\x02\x03\x04\x05\x06", dtype="V3")
    assert bytes(BytesCodec(endian="big").encode(a, spec_of(a))) == b"\x01\x02\x03\x04\x05\x06"


def test_native_decode_is_a_zero_copy_view() -> None:
    a = np.arange(12, dtype="<u2").reshape(3, 4)
    stored = a.tobytes()
    out = BytesCodec(endian="little").decode(stored, spec_of(a))
    assert np.shares_memory(out, np.frombuffer(stored, np.uint8))
    assert not out.flags.writeable  # a view of immutable bytes
    np.testing.assert_array_equal(out, a)


def test_swapped_decode_copies_and_is_writable() -> None:
    a = np.arange(12, dtype="<u4").reshape(3, 4)
    stored = a.astype(">u4").tobytes()
    out = BytesCodec(endian="big").decode(stored, spec_of(a))
    assert out.flags.writeable and out.dtype.isnative
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("length", [0, 1, 23, 25, 48], ids=lambda n: f"{n}-bytes")
def test_wrong_length_is_a_chunk_decode_error(length: int) -> None:
    p = CodecPipeline.from_codecs([bytes_config("little")], dtype="uint16")
    with pytest.raises(ChunkDecodeError, match=r"c/1/2.*expected 24 bytes") as info:
        p.decode(b"\x00" * length, (3, 4), key="c/1/2")
    assert info.value.key == "c/1/2"


@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "V3", "V7"])
def test_endian_may_be_omitted_without_a_byte_order(dtype: str) -> None:
    p = CodecPipeline.from_codecs([{"name": "bytes"}], dtype=dtype)
    p.validate((4,))
    assert p.to_dicts() == [{"name": "bytes"}]
    a = random_array(3, dtype, (4,))
    assert p.decode(p.encode(a), (4,)).tobytes() == a.tobytes()


@pytest.mark.parametrize("dtype", ["uint16", "int64", "float32", "complex64", "float16"])
def test_endian_is_required_for_multibyte_types(dtype: str) -> None:
    p = CodecPipeline.from_codecs([{"name": "bytes"}], dtype=dtype, source="a/zarr.json")
    with pytest.raises(MetadataError, match=r"a/zarr\.json: codecs\[0\]\.configuration\.endian"):
        p.validate((4,))


@pytest.mark.parametrize(
    "configuration,match",
    [
        ({"endian": "middle"}, r"codecs\[0\]\.configuration\.endian: must be 'little' or 'big'"),
        ({"endian": None}, r"codecs\[0\]\.configuration\.endian"),
        ({"endian": "little", "order": "C"}, r"codecs\[0\]\.configuration\.order: unknown"),
        ([1], r"codecs\[0\]\.configuration: must be a JSON object"),
    ],
    ids=["bad-endian", "null-endian", "unknown-field", "not-an-object"],
)
def test_bad_configurations(configuration: object, match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        CodecPipeline.from_codecs(
            [{"name": "bytes", "configuration": configuration}], dtype="uint16"
        )


def test_legacy_endian_name_is_read_and_written_back() -> None:
    codecs = [{"name": "endian", "configuration": {"endian": "big"}}]
    p = CodecPipeline.from_codecs(codecs, dtype="int32")
    assert isinstance(p.array_bytes, EndianCodec)
    assert p.to_dicts() == codecs
    a = np.arange(6, dtype="int32")
    assert bytes(p.encode(a)) == a.astype(">i4").tobytes()


def test_encoded_size() -> None:
    assert BytesCodec().encoded_size(ChunkSpec((3, 5), np.dtype("f8"), np.zeros((), "f8"))) == 120
    p = CodecPipeline.from_codecs([bytes_config("little")], dtype="complex128")
    assert p.encoded_size((2, 3)) == 96
    assert p.encoded_size((0, 3)) == 0


def test_encode_accepts_non_native_and_non_contiguous_input() -> None:
    p = CodecPipeline.from_codecs([bytes_config("little")], dtype="<i4")
    base = np.arange(24, dtype=">i4").reshape(4, 6)
    chunk = base[:, ::2]
    assert bytes(p.encode(chunk)) == np.ascontiguousarray(chunk).astype("<i4").tobytes()
