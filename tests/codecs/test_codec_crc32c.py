"""The ``crc32c`` bytes -> bytes checksum codec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.crc32c import Crc32cCodec, crc32c
from zarr3c.errors import ChecksumError, ChunkDecodeError, MetadataError

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def test_known_check_value() -> None:
    # the CRC-32C check value of the ASCII digits 1..9 (RFC 3720, appendix B.4)
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


@settings(max_examples=50, deadline=None)
@given(data=st.binary(max_size=300))
def test_layout_is_data_then_little_endian_crc(data: bytes) -> None:
    encoded = bytes(Crc32cCodec().encode(data))
    assert encoded == data + crc32c(data).to_bytes(4, "little")
    assert bytes(Crc32cCodec().decode(encoded)) == data


def test_decode_is_a_view_of_the_payload() -> None:
    encoded = np.frombuffer(bytes(Crc32cCodec().encode(b"abcdef")), np.uint8)
    out = Crc32cCodec().decode(encoded)
    assert np.shares_memory(out, encoded) and bytes(out) == b"abcdef"


def small_chunk_pipeline() -> tuple[CodecPipeline, np.ndarray, bytes]:
    p = CodecPipeline.from_codecs([LE, {"name": "crc32c"}], dtype="int16")
    a = np.array([[1, -2, 3], [400, -500, 6000]], dtype=np.int16)
    return p, a, bytes(p.encode(a))


def test_every_single_bit_flip_is_detected() -> None:
    p, a, encoded = small_chunk_pipeline()
    assert len(encoded) == a.nbytes + 4
    for i in range(len(encoded)):
        for bit in range(8):
            corrupt = bytearray(encoded)
            corrupt[i] ^= 1 << bit
            with pytest.raises(ChecksumError, match=r"chunk 'c/0/0': crc32c"):
                p.decode(bytes(corrupt), a.shape, key="c/0/0")
    np.testing.assert_array_equal(p.decode(encoded, a.shape, key="c/0/0"), a)


def test_every_truncation_is_detected() -> None:
    p, a, encoded = small_chunk_pipeline()
    for length in range(len(encoded)):
        expected = ChunkDecodeError if length < 4 else ChecksumError
        with pytest.raises(expected, match="c/0/0") as info:
            p.decode(encoded[:length], a.shape, key="c/0/0")
        if length < 4:
            assert "too short" in str(info.value)
            assert not isinstance(info.value, ChecksumError)


def test_appended_bytes_are_detected() -> None:
    p, a, encoded = small_chunk_pipeline()
    with pytest.raises(ChunkDecodeError):
        p.decode(encoded + b"\x00", a.shape, key="c/0/0")


def test_encoded_size_stays_fixed() -> None:
    p = CodecPipeline.from_codecs([LE, {"name": "crc32c"}], dtype="float64")
    assert p.encoded_size((10, 10)) == 804
    p = CodecPipeline.from_codecs([LE, {"name": "crc32c"}, {"name": "crc32c"}], dtype="float64")
    assert p.encoded_size((10, 10)) == 808


@pytest.mark.parametrize(
    "configuration,match",
    [
        ({"location": "end"}, r"configuration\.location: unknown"),
        ([], r"configuration: must be a JSON object"),
    ],
    ids=["unknown-field", "not-an-object"],
)
def test_bad_configurations(configuration: object, match: str) -> None:
    with pytest.raises(MetadataError, match=r"codecs\[1\]\." + match):
        CodecPipeline.from_codecs(
            [LE, {"name": "crc32c", "configuration": configuration}], dtype="int16"
        )


def test_empty_configuration_is_accepted_and_written_without_one() -> None:
    p = CodecPipeline.from_codecs([LE, {"name": "crc32c", "configuration": {}}], dtype="int16")
    assert p.to_dicts()[1] == {"name": "crc32c"}
