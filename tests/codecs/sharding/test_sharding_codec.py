"""The ``sharding_indexed`` codec: configuration, shard layout, bad shards, partial reads.

Layouts are checked against shards built by hand from the spec (inner chunks' bytes, then a
little-endian ``uint64`` index of (offset, nbytes) pairs in C order, then its crc32c), so
the tests do not only check that the codec agrees with itself.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.crc32c import crc32c
from zarr3c.codecs.sharding import (
    MISSING,
    ShardIndex,
    ShardingCodec,
    partial_read_codec,
    sharding_codec_dict,
)
from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.errors import (
    ChecksumError,
    ChunkDecodeError,
    IndexingError,
    MetadataError,
    ShapeMismatchError,
    UnknownExtensionError,
)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
T10 = {"name": "transpose", "configuration": {"order": [1, 0]}}
KEY = "arr/c/0/0"


def shard(
    chunk_shape: Sequence[int],
    codecs: list[Any] | None = None,
    index_codecs: list[Any] | None = None,
    index_location: str = "end",
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "chunk_shape": list(chunk_shape),
        "codecs": codecs if codecs is not None else [LE],
        "index_codecs": index_codecs if index_codecs is not None else [LE, CRC],
        "index_location": index_location,
    }
    return {"name": "sharding_indexed", "configuration": config}


def pipeline(codec: dict[str, Any], dtype: Any = "int32", fill: Any = 0) -> CodecPipeline:
    return CodecPipeline.from_codecs([codec], dtype=dtype, fill_value=fill)


def index_bytes(entries: list[tuple[int, int]], crc: bool = True) -> bytes:
    raw = np.array(entries, dtype="<u8").tobytes()
    return raw + (crc32c(raw).to_bytes(4, "little") if crc else b"")


def with_crc(raw: bytes) -> bytes:
    return raw + crc32c(raw).to_bytes(4, "little")


# -- configuration ---------------------------------------------------------------------------------


def test_to_dict_writes_every_field_with_defaults_filled() -> None:
    codec = ShardingCodec.from_config({"chunk_shape": [2, 3]}, path="codecs[0]")
    assert codec.to_dict() == {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2, 3],
            "codecs": [LE],
            "index_codecs": [LE, CRC],
            "index_location": "end",
        },
    }


def test_from_config_to_dict_round_trip_and_evolve_fills_inner_defaults() -> None:
    blosc = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "shuffle"}}
    doc = shard([4], [LE, blosc], index_location="start")
    codec = ShardingCodec.from_config(doc["configuration"], path="codecs[0]")
    assert ShardingCodec.from_config(codec.to_dict()["configuration"], path="x") == codec
    # evolved for float64 (through the pipeline): blosc's typesize and blocksize appear
    inner = pipeline(doc, "float64").to_dicts()[0]["configuration"]["codecs"][1]
    assert inner["configuration"]["typesize"] == 8
    assert inner["configuration"]["blocksize"] == 0


def test_constructor_takes_codec_dicts() -> None:
    codec = ShardingCodec(chunk_shape=(2,), codecs=[LE, ZSTD], index_location="start")
    assert [c.name for c in codec.codecs] == ["bytes", "zstd"]
    assert codec.to_dict()["configuration"]["index_codecs"] == [LE, CRC]


def test_registered_under_its_name() -> None:
    assert zarr3c.registry.codecs.get("sharding_indexed") is ShardingCodec


@pytest.mark.parametrize(
    "config,error,match",
    [
        ({}, MetadataError, r"^codecs\[0\]\.configuration\.chunk_shape: is required"),
        ({"chunk_shape": 4}, MetadataError, r"configuration\.chunk_shape: must be a list"),
        ({"chunk_shape": []}, MetadataError, r"configuration\.chunk_shape: must have at least"),
        ({"chunk_shape": [2, 0]}, MetadataError, r"configuration\.chunk_shape\[1\]: must be 1 <="),
        ({"chunk_shape": [True]}, MetadataError, r"configuration\.chunk_shape\[0\]: must be an"),
        ({"chunk_shape": [2], "codecs": []}, MetadataError,
         r"^codecs\[0\]\.configuration\.codecs: must not be empty"),
        ({"chunk_shape": [2], "codecs": [ZSTD]}, MetadataError,
         r"^codecs\[0\]\.configuration\.codecs: no array->bytes codec"),
        ({"chunk_shape": [2], "codecs": [LE, {"name": "nope"}]}, UnknownExtensionError,
         r"^codecs\[0\]\.configuration\.codecs\[1\]: unknown codec 'nope'"),
        ({"chunk_shape": [2], "index_codecs": [CRC]}, MetadataError,
         r"^codecs\[0\]\.configuration\.index_codecs: no array->bytes"),
        ({"chunk_shape": [2], "index_location": "middle"}, MetadataError,
         r"^codecs\[0\]\.configuration\.index_location: must be one of"),
        ({"chunk_shape": [2], "extra": 1}, MetadataError,
         r"^codecs\[0\]\.configuration\.extra: unknown configuration field"),
        ({"chunk_shape": [2], "codecs": [{"name": "gzip", "configuration": {"level": 99}}]},
         MetadataError, r"^codecs\[0\]\.configuration\.codecs\[0\]\.configuration\.level"),
    ],
    ids=["no-chunk-shape", "chunk-shape-int", "chunk-shape-empty", "chunk-shape-zero",
         "chunk-shape-bool", "codecs-empty", "codecs-no-serializer", "inner-unknown-codec",
         "index-no-serializer", "bad-index-location", "unknown-field", "inner-bad-config"],
)
def test_bad_configuration(config: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ShardingCodec.from_config(config, path="codecs[0]")


@pytest.mark.parametrize(
    "codec,dtype,chunk_shape,match",
    [
        (shard([3, 2]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.chunk_shape: inner chunk shape \[3, 2\] does not "
         r"divide the shard shape \[4, 4\]"),
        (shard([2]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.chunk_shape: has 1 dimensions but the shard"),
        (shard([2, 2], index_codecs=[LE, ZSTD]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.index_codecs: the index codecs must have a fixed"),
        (shard([2, 2], index_codecs=[{"name": "bytes"}]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.index_codecs\[0\]\.configuration\.endian: is required"),
        (shard([2, 2], codecs=[{"name": "transpose", "configuration": {"order": [0]}}, LE]),
         "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.codecs\[0\]\.configuration\.order: has 1 entries"),
        (shard([2, 2], codecs=[{"name": "bytes"}]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.codecs\[0\]\.configuration\.endian: is required"),
        (shard([2, 2], codecs=[shard([3, 1])]), "int32", (4, 4),
         r"^codecs\[0\]\.configuration\.codecs\[0\]\.configuration\.chunk_shape: inner chunk "
         r"shape \[3, 1\] does not divide the shard shape \[2, 2\]"),
    ],
    ids=["not-dividing", "ndim-mismatch", "variable-size-index", "index-endian-missing",
         "inner-transpose-ndim", "inner-endian-missing", "nested-not-dividing"],
)
def test_validate_errors_name_the_field(
    codec: dict[str, Any], dtype: str, chunk_shape: tuple[int, ...], match: str
) -> None:
    with pytest.raises(MetadataError, match=match):
        pipeline(codec, dtype).validate(chunk_shape)


def test_create_array_refuses_non_dividing_inner_chunks() -> None:
    with pytest.raises(MetadataError, match=r"codecs\[0\]\.configuration\.chunk_shape"):
        zarr3c.create_array("memory://", shape=(10,), dtype="i4", chunks=(5,),
                            codecs=[shard([2])])


# -- layout ----------------------------------------------------------------------------------------


def test_encode_layout_index_at_end_matches_the_spec() -> None:
    p = pipeline(shard([2, 2]), "uint16")
    data = np.arange(16, dtype="uint16").reshape(4, 4)
    data[2:, :2] = 0  # inner chunk (1, 0) is all fill: omitted
    out = bytes(np.asarray(p.encode(data)))
    parts = [data[0:2, 0:2], data[0:2, 2:4], data[2:4, 2:4]]
    body = b"".join(a.astype("<u2").tobytes() for a in parts)
    entries = [(0, 8), (8, 8), (MISSING, MISSING), (16, 8)]
    assert out == body + index_bytes(entries)
    np.testing.assert_array_equal(p.decode(out, (4, 4)), data)


def test_encode_layout_index_at_start_offsets_count_the_index() -> None:
    p = pipeline(shard([2], index_codecs=[LE], index_location="start"), "int8")
    data = np.array([1, 2, 0, 0, 5, 6], dtype="int8")
    out = bytes(np.asarray(p.encode(data)))
    index = index_bytes([(48, 2), (MISSING, MISSING), (50, 2)], crc=False)
    assert len(index) == 48
    assert out == index + bytes([1, 2, 5, 6])
    np.testing.assert_array_equal(p.decode(out, (6,)), data)


def test_big_endian_index_codec() -> None:
    p = pipeline(shard([2], index_codecs=[BE, CRC]), "int8")
    data = np.array([1, 2, 3, 4], dtype="int8")
    out = bytes(np.asarray(p.encode(data)))
    raw = np.array([[0, 2], [2, 2]], dtype=">u8").tobytes()
    assert out == bytes([1, 2, 3, 4]) + with_crc(raw)
    np.testing.assert_array_equal(p.decode(out, (4,)), data)


def test_decode_inner_chunks_in_any_order_with_gaps() -> None:
    """Readers must follow the index: reversed order and unused bytes are valid."""
    p = pipeline(shard([2], index_codecs=[LE]), "<i2")
    a, b, c = (np.array(v, dtype="<i2").tobytes() for v in ([1, 2], [3, 4], [5, 6]))
    body = b"junk" + c + b"??" + b + a
    entries = [(4 + 4 + 2 + 4, 4), (4 + 4 + 2, 4), (4, 4)]
    data = body + index_bytes(entries, crc=False)
    np.testing.assert_array_equal(p.decode(data, (6,)), [1, 2, 3, 4, 5, 6])


def test_all_fill_shard_is_an_index_of_missing_entries() -> None:
    p = pipeline(shard([2, 2]), "float32", fill=1.5)
    codec = p.array_bytes
    data = np.full((4, 4), 1.5, dtype="float32")
    out = bytes(np.asarray(p.encode(data)))
    assert out == index_bytes([(MISSING, MISSING)] * 4)
    assert codec.is_empty_shard(out, (4, 4))
    assert not codec.is_empty_shard(p.encode(np.zeros((4, 4), "float32")), (4, 4))
    np.testing.assert_array_equal(p.decode(out, (4, 4)), data)


def test_fill_detection_is_bitwise() -> None:
    """With fill -0.0, inner chunks of +0.0 are stored, -0.0 ones are not; NaN fill keeps
    its bits in missing chunks."""
    p = pipeline(shard([2], index_codecs=[LE]), "float64", fill=-0.0)
    data = np.array([-0.0, -0.0, 0.0, 0.0], dtype="float64")
    out = np.asarray(p.encode(data))
    entries = np.frombuffer(bytes(out[-32:]), dtype="<u8").reshape(2, 2)
    assert entries[0].tolist() == [MISSING, MISSING]
    assert entries[1].tolist() == [0, 16]
    back = p.decode(out, (4,))
    assert np.signbit(back).tolist() == [True, True, False, False]

    nan = np.array(0x7FF8_0000_0000_00AB, dtype="<u8").view("float64")
    q = pipeline(shard([2]), "float64", fill=nan)
    back = q.decode(q.encode(np.full(4, nan)), (4,))
    assert back.view("<u8").tolist() == [0x7FF8_0000_0000_00AB] * 4


def test_compression_and_transpose_inside_the_shard() -> None:
    p = pipeline(shard([2, 3], [T10, LE, ZSTD], index_location="start"), "float32")
    data = np.arange(36, dtype="float32").reshape(6, 6)
    out = p.encode(data)
    np.testing.assert_array_equal(p.decode(out, (6, 6)), data)


def test_transpose_before_sharding_in_the_outer_chain() -> None:
    p = CodecPipeline.from_codecs([T10, shard([2, 3])], dtype="int64", fill_value=0)
    p.validate((6, 4))  # the shard the sharding codec sees is (4, 6): [2, 3] divides it
    data = np.arange(24, dtype="int64").reshape(6, 4)
    np.testing.assert_array_equal(p.decode(p.encode(data), (6, 4)), data)


def test_nested_sharding_round_trip_and_layout() -> None:
    inner = shard([2, 2], [LE, GZIP], index_codecs=[LE])
    p = pipeline(shard([4, 4], [inner]), "int16")
    data = np.zeros((8, 8), dtype="int16")
    data[0, 0] = 7  # only inner shard (0, 0), and inside it only inner chunk (0, 0)
    data[5:8, 5:8] = np.arange(9).reshape(3, 3) + 1
    out = np.asarray(p.encode(data))
    np.testing.assert_array_equal(p.decode(out, (8, 8)), data)
    outer_index = np.frombuffer(bytes(out[-(16 * 4 + 4):-4]), dtype="<u8").reshape(2, 2, 2)
    assert (outer_index[0, 1] == MISSING).all() and (outer_index[1, 0] == MISSING).all()
    off, n = (int(v) for v in outer_index[0, 0])
    nested = out[off:off + n]
    nested_index = np.frombuffer(bytes(nested[-64:]), dtype="<u8").reshape(2, 2, 2)
    assert (nested_index[0, 0] != MISSING).all()
    assert (nested_index.reshape(-1, 2)[1:] == MISSING).all()


def test_single_inner_chunk_fast_path_equals_general_path() -> None:
    data = np.arange(12, dtype="int32").reshape(3, 4)
    one = pipeline(shard([3, 4]))
    many = pipeline(shard([1, 2]))
    np.testing.assert_array_equal(one.decode(one.encode(data), (3, 4)), data)
    np.testing.assert_array_equal(many.decode(many.encode(data), (3, 4)), data)


def test_parallel_path_equals_serial_path() -> None:
    """Shards over the parallel threshold fan inner chunks out to the pool; same bytes."""
    p = pipeline(shard([64, 64], [LE, ZSTD]), "float64")
    rng = np.random.default_rng(1)
    data = rng.standard_normal((256, 256))
    data[:64, :64] = 0  # one missing inner chunk
    old = get_num_threads()
    try:
        set_num_threads(1)
        serial = bytes(np.asarray(p.encode(data)))
        set_num_threads(4)
        parallel = bytes(np.asarray(p.encode(data)))
        decoded = p.decode(parallel, (256, 256))
    finally:
        set_num_threads(old)
    assert serial == parallel
    np.testing.assert_array_equal(decoded, data)


def test_unevolved_codec_used_directly() -> None:
    """A codec object used without a pipeline resolves its inner chain from the spec."""
    from zarr3c.codecs.base import ChunkSpec

    codec = ShardingCodec(chunk_shape=(2,), codecs=[LE, ZSTD])
    spec = ChunkSpec((4,), np.dtype("uint32"), np.array(9, dtype="uint32"))
    data = np.array([9, 9, 1, 2], dtype="uint32")
    out = codec.encode(data, spec)
    np.testing.assert_array_equal(codec.decode(out, spec), data)
    assert codec.encoded_size(spec) is None


# -- bad shards ------------------------------------------------------------------------------------


def _good_shard() -> bytes:
    """Shard of 4 int8 inner chunks [2] (shape [8]); inner chunk 2 missing."""
    p = pipeline(shard([2]), "int8")
    return bytes(np.asarray(p.encode(np.array([1, 2, 3, 4, 0, 0, 7, 8], dtype="int8"))))


def _bad_index(entries: list[tuple[int, int]], body: bytes = bytes(range(6))) -> bytes:
    return body + index_bytes(entries)


BAD_SHARDS = [
    (b"", ChunkDecodeError, r"the shard has 0 bytes, shorter than its index \(68 bytes\)"),
    (_good_shard()[-67:], ChunkDecodeError, r"67 bytes, shorter than its index"),
    (_good_shard()[:-1] + bytes([_good_shard()[-1] ^ 1]), ChecksumError,
     r"shard index: crc32c: stored checksum"),
    (_bad_index([(0, 2), (2, 2), (MISSING, MISSING), (4, 3)]), ChunkDecodeError,
     r"inner chunk \(3,\) \(offset 4, nbytes 3\) overlaps the shard index"),
    (_bad_index([(0, 2), (2, 2), (MISSING, MISSING), (100, 2)]), ChunkDecodeError,
     r"inner chunk \(3,\) \(offset 100, nbytes 2\) lies outside the shard of 74 bytes"),
    (_bad_index([(0, 2), (2, 2), (MISSING, MISSING), (2**64 - 2, 5)]), ChunkDecodeError,
     r"inner chunk \(3,\) .* lies outside the shard"),
    (_bad_index([(0, 2), (1, 2), (MISSING, MISSING), (4, 2)]), ChunkDecodeError,
     r"inner chunks \(0,\) \(offset 0, nbytes 2\) and \(1,\) \(offset 1, nbytes 2\) overlap"),
    (_bad_index([(0, 2), (2, 2), (MISSING, 0), (4, 2)]), ChunkDecodeError,
     r"index entry of inner chunk \(2,\) .* only one of them is the missing-chunk marker"),
    (_bad_index([(0, 2), (2, 1), (MISSING, MISSING), (4, 2)]), ChunkDecodeError,
     r"inner chunk \(1,\): bytes codec: expected 2 bytes .* got 1"),
]


@pytest.mark.parametrize(
    "data,error,match",
    BAD_SHARDS,
    ids=["empty", "shorter-than-index", "index-checksum", "entry-into-index",
         "entry-past-end", "entry-overflows", "entries-overlap", "half-missing-entry",
         "inner-chunk-wrong-length"],
)
def test_bad_shard_errors_name_key_and_inner_chunk(data: bytes, error: type, match: str) -> None:
    p = pipeline(shard([2]), "int8")
    with pytest.raises(error, match=match) as info:
        p.decode(data, (8,), key=KEY)
    assert info.value.key == KEY
    assert str(info.value).startswith(f"chunk {KEY!r}: sharding_indexed: ")


@pytest.mark.parametrize("shard_bytes", [_good_shard()] + [d for d, _, _ in BAD_SHARDS[2:]],
                         ids=["good", "index-checksum", "entry-into-index", "entry-past-end",
                              "entry-overflows", "entries-overlap", "half-missing-entry",
                              "inner-chunk-wrong-length"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_check_index_agrees_with_decode_index(shard_bytes: bytes, endian: str) -> None:
    """``check_index`` (the short path's check, on its scratch index, without a copy)
    passes and refuses exactly what ``decode_index`` does, with the same error."""
    codec = pipeline(shard([2], index_codecs=[LE if endian == "little" else BE, CRC]),
                     "int8").array_bytes
    raw = shard_bytes[-68:-4]
    if endian == "big":  # the same entries stored big-endian, with their own checksum
        stored = np.frombuffer(raw, "<u8").astype(">u8").tobytes()
        index = stored + (crc32c(stored) if shard_bytes[-4:] == crc32c(raw).to_bytes(
            4, "little") else crc32c(stored) ^ 1).to_bytes(4, "little")
    else:
        index = shard_bytes[-68:]
    scratch = np.frombuffer(index, np.uint8).copy()
    size = len(shard_bytes)
    try:
        expected = codec.decode_index(index, (8,), shard_nbytes=size)
    except ChunkDecodeError as exc:
        with pytest.raises(type(exc)) as info:
            codec.check_index(scratch, (8,), size)
        assert str(info.value) == str(exc)
    else:
        assert codec.check_index(scratch, (8,), size) is None
        assert expected.entries.dtype == np.uint64 and expected.entries.flags.writeable
    assert scratch.tobytes() == index  # (nothing written)


def test_bad_index_at_start() -> None:
    p = pipeline(shard([2], index_codecs=[LE], index_location="start"), "int8")
    index = index_bytes([(0, 2), (34, 2)], crc=False)  # inner chunk 0 points into the index
    with pytest.raises(ChunkDecodeError, match=r"chunk \(0,\) .* overlaps the shard index"):
        p.decode(index + b"abcd", (4,), key=KEY)


def test_corrupt_compressed_inner_chunk_names_it() -> None:
    p = pipeline(shard([2], [LE, ZSTD], index_codecs=[LE]), "int32")
    good = bytes(np.asarray(p.encode(np.array([1, 2, 3, 4], dtype="int32"))))
    entries = np.frombuffer(good[-32:], dtype="<u8").reshape(2, 2)
    off = int(entries[1, 0])
    bad = good[:off] + b"\x00" * int(entries[1, 1]) + good[off + int(entries[1, 1]):]
    with pytest.raises(ChunkDecodeError, match=r"^chunk 'arr/c/0/0': sharding_indexed: inner "
                                               r"chunk \(1,\): zstd") as info:
        p.decode(bad, (4,), key=KEY)
    assert info.value.key == KEY


def test_inner_checksum_error_keeps_its_type() -> None:
    p = pipeline(shard([2], [LE, CRC], index_codecs=[LE]), "int8")
    good = bytearray(np.asarray(p.encode(np.array([1, 2, 3, 4], dtype="int8"))))
    good[0] ^= 0xFF
    with pytest.raises(ChecksumError, match=r"inner chunk \(0,\): crc32c"):
        p.decode(bytes(good), (4,), key=KEY)


def test_nested_bad_inner_shard_names_both_levels() -> None:
    p = pipeline(shard([4], [shard([2], index_codecs=[LE])], index_codecs=[LE]), "int8")
    good = bytearray(np.asarray(p.encode(np.arange(1, 9, dtype="int8"))))
    # Point the last entry (nested inner chunk (1,)) of the nested shard of outer inner
    # chunk (1,) past the nested shard's end.
    entries = np.frombuffer(bytes(good[-32:]), dtype="<u8").reshape(2, 2)
    off, n = (int(v) for v in entries[1])
    good[off + n - 16:off + n - 8] = (1000).to_bytes(8, "little")
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(1,\): sharding_indexed: inner "
                                               r"chunk \(1,\) \(offset 1000, nbytes 2\) lies outside the shard of 36 "):
        p.decode(bytes(good), (8,), key=KEY)


# -- hypothesis round trip -------------------------------------------------------------------------


@st.composite
def shard_cases(draw: Any) -> tuple[dict[str, Any], np.ndarray, Any]:
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    per = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shape = tuple(i * p for i, p in zip(inner, per, strict=True))
    dtype = np.dtype(draw(st.sampled_from(["uint8", "<i2", ">i4", "float32", "complex64"])))
    codecs: list[Any] = [LE if dtype.itemsize > 1 else {"name": "bytes"}]
    if draw(st.booleans()):
        codecs.append(draw(st.sampled_from([ZSTD, GZIP, CRC])))
    index_codecs = [LE, CRC] if draw(st.booleans()) else [LE]
    location = draw(st.sampled_from(["start", "end"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = rng.integers(0, 100, shape).astype(dtype)
    # blank out some inner chunks so that missing entries appear
    for coords in itertools.product(*(range(p) for p in per)):
        if rng.random() < 0.4:
            data[tuple(slice(c * i, (c + 1) * i) for c, i in zip(coords, inner, strict=True))] = 0
    return shard(inner, codecs, index_codecs, location), data, dtype


@settings(max_examples=60, deadline=None)
@given(case=shard_cases(), seed=st.integers(0, 2**16))
def test_round_trip_and_partial_reads_match_numpy(case: Any, seed: int) -> None:
    doc, data, dtype = case
    p = pipeline(doc, dtype, fill=0)
    shape = data.shape
    out = bytes(np.asarray(p.encode(data)))
    back = p.decode(out, shape)
    assert back.dtype == dtype.newbyteorder("=")
    np.testing.assert_array_equal(back, data)

    codec = p.array_bytes
    rng = np.random.default_rng(seed)
    region = []
    for n in shape:
        start = int(rng.integers(0, n))
        stop = int(rng.integers(start, n + 1))
        region.append(slice(start, stop, int(rng.integers(1, 4))))
    part = codec.read_region(lambda rs: [_slice(out, r) for r in rs], shape, region)
    np.testing.assert_array_equal(part, data[tuple(region)])

    # a partial write equals the whole-shard path
    cps = codec.chunks_per_shard(shape)
    coords = tuple(int(rng.integers(0, n)) for n in cps)
    box = tuple(slice(c * i, (c + 1) * i) for c, i in zip(coords, codec.chunk_shape, strict=True))
    new = rng.integers(0, 3, codec.chunk_shape).astype(dtype)  # sometimes all fill
    expected = data.copy()
    expected[box] = new
    updated = codec.update_shard(out, shape, {coords: new})
    if updated is None:
        assert not expected.any()
    else:
        np.testing.assert_array_equal(p.decode(updated, shape), expected)
        if GZIP not in doc["configuration"]["codecs"]:  # gzip headers hold the time
            assert bytes(updated) == bytes(np.asarray(p.encode(expected)))


# -- partial reads ---------------------------------------------------------------------------------


def _slice(data: bytes, rng: tuple[int, int | None]) -> bytes:
    start, length = rng
    if start < 0:
        return data[start:]
    return data[start:] if length is None else data[start:start + length]


class CountingStore(zarr3c.MemoryStore):
    """A MemoryStore that records every byte range read through get_partial_values."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, tuple[int, int | None]]] = []
        self.bytes_read = 0
        self.full_reads = 0

    def get(self, key: str) -> Any:
        self.full_reads += 1
        return super().get(key)

    def get_partial_values(self, key_ranges: Any) -> list[Any]:
        key_ranges = list(key_ranges)
        out = super().get_partial_values(key_ranges)
        self.requests.extend(key_ranges)
        self.bytes_read += sum(len(v) for v in out if v is not None)
        return out


def _sharded_array(store: zarr3c.Store, **kw: Any) -> zarr3c.Array:
    return zarr3c.create_array(store, shape=(64, 64), dtype="float64", chunks=(64, 64),
                               codecs=[shard([8, 8], [LE, ZSTD])], **kw)


def _getter(store: zarr3c.Store, key: str) -> Any:
    return lambda ranges: store.get_partial_values([(key, r) for r in ranges])


def test_reading_one_inner_chunk_reads_only_the_index_and_that_chunk() -> None:
    store = CountingStore()
    a = _sharded_array(store)
    data = np.random.default_rng(0).standard_normal((64, 64))
    a[...] = data
    key = a.chunk_key((0, 0))
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    store.requests.clear()
    store.full_reads = 0
    out = codec.read_region(_getter(store, key), (64, 64), (slice(17, 20), slice(40, 42)))
    np.testing.assert_array_equal(out, data[17:20, 40:42])
    index_n = codec.index_nbytes((64, 64))
    assert index_n == 64 * 16 + 4
    index = codec.read_index(_getter(store, key), (64, 64))
    assert index is not None
    offset, nbytes = index.get((2, 5))  # type: ignore[misc]
    assert store.full_reads == 0
    assert store.requests[:2] == [(key, (-index_n, None)), (key, (offset, nbytes))]
    assert len(store.requests) == 3  # + the read_index above
    assert store.bytes_read == 2 * index_n + nbytes
    assert nbytes < len(store.get(key)) // 32


def test_read_index_at_start_uses_a_prefix_request() -> None:
    store = CountingStore()
    a = zarr3c.create_array(store, shape=(8,), dtype="i2", chunks=(8,),
                            codecs=[shard([2], index_location="start")])
    a[...] = np.arange(8)
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    store.requests.clear()
    index = codec.read_index(_getter(store, "c/0"), (8,))
    assert store.requests == [("c/0", (0, 68))]
    assert index is not None
    assert index.entries[:, 0].tolist() == [68, 72, 76, 80]


def test_read_missing_shard_gives_none() -> None:
    store = CountingStore()
    a = _sharded_array(store)
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    get = _getter(store, a.chunk_key((0, 0)))
    assert codec.read_index(get, (64, 64)) is None
    assert codec.read_inner_chunks(get, (64, 64), [(0, 0)]) is None
    assert codec.read_region(get, (64, 64), (slice(0, 3), slice(0, 3))) is None


def test_read_inner_chunks_missing_ones_are_none_and_no_request() -> None:
    store = CountingStore()
    a = _sharded_array(store, fill_value=-1.0)
    a[0:8, 8:16] = 5.0
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    key = a.chunk_key((0, 0))
    index = codec.read_index(_getter(store, key), (64, 64))
    store.requests.clear()
    got = codec.read_inner_chunks(_getter(store, key), (64, 64), [(0, 0), (0, 1)], index=index)
    assert got is not None
    assert got[(0, 0)] is None
    np.testing.assert_array_equal(got[(0, 1)], np.full((8, 8), 5.0))
    assert len(store.requests) == 1
    region = codec.read_region(_getter(store, key), (64, 64), [(6, 10), (7, 9)])
    # rows 6, 7 of inner chunk row 0; rows 8, 9 of the missing inner chunks below
    np.testing.assert_array_equal(region, [[-1.0, 5.0]] * 2 + [[-1.0, -1.0]] * 2)


def test_inner_chunks_for_region() -> None:
    codec = ShardingCodec(chunk_shape=(4, 5))
    assert codec.inner_chunks_for_region((8, 20), [(3, 5), (0, 5)]) == [(0, 0), (1, 0)]
    assert codec.inner_chunks_for_region((8, 20), [slice(None), slice(2, 20, 5)]) == [
        (0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]
    # a step jumping over inner chunks skips them
    assert codec.inner_chunks_for_region((8, 20), [slice(0, 1), slice(0, 20, 12)]) == [
        (0, 0), (0, 2)]
    assert codec.inner_chunks_for_region((8, 20), [(2, 2), (0, 20)]) == []


@pytest.mark.parametrize(
    "region,match",
    [
        ([(0, 9), (0, 5)], r"region \(0, 9\) of axis 0 is outside the shard"),
        ([(0, 1)], r"region has 1 dimensions, the shard has 2"),
        ([slice(None, None, -1), (0, 5)], r"step must be >= 1"),
    ],
    ids=["outside", "ndim", "negative-step"],
)
def test_bad_regions(region: Any, match: str) -> None:
    codec = ShardingCodec(chunk_shape=(4, 5))
    with pytest.raises(IndexingError, match=match):
        codec.inner_chunks_for_region((8, 20), region)


def test_byte_ranges_coalesce_close_chunks_only() -> None:
    codec = ShardingCodec(chunk_shape=(1,))
    index = ShardIndex(np.array(
        [[0, 10], [10, 5], [MISSING, MISSING], [100, 4], [15, 1]], dtype="uint64"))
    groups = codec.byte_ranges(index, [(0,), (1,), (2,), (3,), (4,)], max_gap=0)
    assert [(g.start, g.length) for g in groups] == [(0, 16), (100, 4)]
    assert groups[0].members == (((0,), 0, 10), ((1,), 10, 5), ((4,), 15, 1))
    assert groups[1].members == (((3,), 0, 4),)
    merged = codec.byte_ranges(index, [(3,), (0,)], max_gap=90)
    assert [(g.start, g.length) for g in merged] == [(0, 104)]
    assert merged[0].members == (((0,), 0, 10), ((3,), 100, 4))
    assert codec.byte_ranges(index, [(2,)]) == []


def test_decode_inner_and_index_get() -> None:
    p = pipeline(shard([2], [LE, GZIP]), "int16")
    codec = p.array_bytes
    out = bytes(np.asarray(p.encode(np.array([1, 2, 3, 4], dtype="int16"))))
    index = codec.decode_index(out[-codec.index_nbytes((4,)):], (4,), shard_nbytes=len(out))
    offset, n = index.get((1,))  # type: ignore[misc]
    np.testing.assert_array_equal(codec.decode_inner(out[offset:offset + n], (1,)), [3, 4])
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(1,\): gzip"):
        codec.decode_inner(b"garbage", (1,))
    assert index.chunks_per_shard == (2,)
    assert not index.all_missing


@pytest.mark.parametrize(
    "corrupt,error,match",
    [
        (lambda raw: raw[:10], ChunkDecodeError,
         r"^chunk 'c/0': sharding_indexed: the shard has 10 bytes, shorter than its index"),
        (lambda raw: raw[:-1] + bytes([raw[-1] ^ 4]), ChecksumError,
         r"^chunk 'c/0': sharding_indexed: shard index: crc32c"),
    ],
    ids=["truncated", "index-checksum"],
)
def test_partial_read_index_errors_name_the_key(corrupt: Any, error: type, match: str) -> None:
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, shape=(8,), dtype="i2", chunks=(8,), codecs=[shard([2])])
    a[...] = np.arange(8)
    store.set("c/0", corrupt(bytes(store.get("c/0"))))
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    with pytest.raises(error, match=match) as info:
        codec.read_region(_getter(store, "c/0"), (8,), [(0, 8)], key="c/0")
    assert info.value.key == "c/0"


def test_partial_read_entry_past_end_of_shard_names_key_and_inner_chunk() -> None:
    """An index at the start gives no shard size: the short read itself is the error."""
    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, shape=(8,), dtype="i2", chunks=(8,),
                            codecs=[shard([2], index_location="start")])
    a[...] = np.arange(8)
    store.set("c/0", bytes(store.get("c/0"))[:-1])
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    with pytest.raises(ChunkDecodeError, match=r"^chunk 'c/0': sharding_indexed: inner chunk "
                                               r"\(3,\) \(offset 80, nbytes 4\) lies outside"):
        codec.read_region(_getter(store, "c/0"), (8,), [(6, 8)], key="c/0")


def test_partial_read_codec_needs_a_bare_sharding_chain() -> None:
    assert isinstance(partial_read_codec(pipeline(shard([2]))), ShardingCodec)
    assert partial_read_codec(pipeline(LE)) is None
    with_crc = CodecPipeline.from_codecs([shard([2]), CRC], dtype="i4")
    assert partial_read_codec(with_crc) is None
    transposed = CodecPipeline.from_codecs([T10, shard([2, 2])], dtype="i4")
    assert partial_read_codec(transposed) is None


def test_partial_methods_need_an_evolved_codec() -> None:
    codec = ShardingCodec(chunk_shape=(2,))
    with pytest.raises(RuntimeError, match="not evolved"):
        codec.decode_inner(b"\x00" * 8)


# -- partial writes --------------------------------------------------------------------------------


def test_update_shard_keeps_untouched_inner_chunks_verbatim() -> None:
    p = pipeline(shard([2, 2], [LE, ZSTD]), "int32", fill=0)
    codec = p.array_bytes
    data = np.arange(1, 17, dtype="int32").reshape(4, 4)
    old = bytes(np.asarray(p.encode(data)))
    new_chunk = np.full((2, 2), 99, dtype="int32")
    out = codec.update_shard(old, (4, 4), {(1, 0): new_chunk})
    assert out is not None
    expected = data.copy()
    expected[2:, :2] = 99
    np.testing.assert_array_equal(p.decode(out, (4, 4)), expected)
    # the general path (decode, modify, encode the whole shard) gives the same bytes
    assert bytes(out) == bytes(np.asarray(p.encode(expected)))


def test_update_shard_removes_fill_and_none_and_reports_an_empty_shard() -> None:
    p = pipeline(shard([2], index_location="start"), "uint8", fill=5)
    codec = p.array_bytes
    old = bytes(np.asarray(p.encode(np.array([1, 2, 5, 5, 3, 4], dtype="uint8"))))
    out = codec.update_shard(old, (6,), {(0,): np.array([5, 5], dtype="uint8"), (2,): None})
    assert out is None  # nothing left: the caller erases the shard
    out = codec.update_shard(old, (6,), {(0,): None})
    assert out is not None
    np.testing.assert_array_equal(p.decode(out, (6,)), [5, 5, 5, 5, 3, 4])
    assert codec.decode_index(bytes(out)[:52], (6,)).present.tolist() == [False, False, True]


def test_update_shard_of_a_missing_shard() -> None:
    p = pipeline(shard([2]), "float64", fill=np.nan)
    codec = p.array_bytes
    out = codec.update_shard(None, (4,), {(1,): np.array([1.0, 2.0])})
    assert out is not None
    np.testing.assert_array_equal(p.decode(out, (4,)), [np.nan, np.nan, 1.0, 2.0])
    assert codec.update_shard(None, (4,), {(1,): np.full(2, np.nan)}) is None


@pytest.mark.parametrize(
    "data,updates,error,match",
    [
        (b"xx", {}, ChunkDecodeError, r"^chunk 'k': sharding_indexed: the shard has 2 bytes"),
        (None, {(2,): np.zeros(2, "i4")}, IndexingError, r"inner chunk \(2,\) is outside"),
        (None, {(0, 0): np.zeros(2, "i4")}, IndexingError, r"inner chunk \(0, 0\) is outside"),
        (None, {(0,): np.zeros(3, "i4")}, ShapeMismatchError,
         r"inner chunk \(0,\) has shape \[3\], expected \[2\]"),
    ],
    ids=["bad-shard", "coords-outside", "coords-ndim", "wrong-shape"],
)
def test_update_shard_errors(data: Any, updates: Any, error: type, match: str) -> None:
    codec = pipeline(shard([2]), "int32").array_bytes
    with pytest.raises(error, match=match):
        codec.update_shard(data, (4,), updates, key="k")


def test_pickled_codec_is_evolved_again() -> None:
    import pickle

    p = pipeline(shard([2], [LE, ZSTD]), "float32", fill=np.nan)
    codec = pickle.loads(pickle.dumps(p.array_bytes))
    assert codec == p.array_bytes
    np.testing.assert_array_equal(codec.decode_inner(np.asarray(
        p.array_bytes._inner.encode(np.array([1, 2], "float32")))), [1, 2])


# -- sharding_codec_dict ---------------------------------------------------------------------------


def test_sharding_codec_dict_defaults_as_zarr_python() -> None:
    doc = sharding_codec_dict((4, 4), dtype="int16")
    assert doc == {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [4, 4],
            "codecs": [LE, ZSTD],
            "index_codecs": [LE, CRC],
            "index_location": "end",
        },
    }
    assert sharding_codec_dict([8], dtype="uint8", compressors=None)["configuration"][
        "codecs"] == [{"name": "bytes"}]


def test_sharding_codec_dict_filters_serializer_compressors_location() -> None:
    import numcodecs

    doc = sharding_codec_dict(
        [2], filters=[T10], serializer=BE, compressors=numcodecs.GZip(level=3),
        index_location="start",
    )
    assert doc["configuration"]["codecs"] == [
        T10, BE, {"name": "gzip", "configuration": {"level": 3}}]
    assert doc["configuration"]["index_location"] == "start"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"index_location": "left"}, r"index_location: must be one of"),
        ({}, r"serializer 'auto' needs the array's dtype"),
        ({"serializer": LE}, r"compressors 'auto' needs the array's dtype"),
        ({"dtype": "i4", "compressors": [object()]}, r"codecs\[1\]: cannot interpret"),
    ],
    ids=["bad-location", "auto-serializer-no-dtype", "auto-compressors-no-dtype",
         "bad-compressor"],
)
def test_sharding_codec_dict_errors(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        sharding_codec_dict([2], **kwargs)


def test_sharding_codec_dict_bad_inner_chunks() -> None:
    with pytest.raises(MetadataError, match=r"chunk_shape\[0\]: must be 1 <= value"):
        sharding_codec_dict([0], dtype="i4")


# -- end to end through the array ------------------------------------------------------------------


@pytest.mark.parametrize("location", ["start", "end"])
def test_array_reads_and_writes_match_numpy(store: zarr3c.Store, location: str) -> None:
    codec = shard([3, 4], [LE, ZSTD], index_location=location)
    a = zarr3c.create_array(store, shape=(20, 17), dtype="int32", chunks=(6, 8),
                            codecs=[codec], fill_value=-7)
    expected = np.full((20, 17), -7, dtype="int32")
    rng = np.random.default_rng(3)
    for sel in [(slice(2, 9), slice(0, 17)), (slice(18, 20), slice(15, 17)),
                (5, slice(None, None, 3)), (slice(None), 16)]:
        value = rng.integers(-100, 100, expected[sel].shape, dtype="int32")
        a[sel] = value
        expected[sel] = value
        np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[1:19:4, ::-2], expected[1:19:4, ::-2])
    again = zarr3c.open_array(store, mode="r")
    np.testing.assert_array_equal(again[...], expected)
    assert again.metadata.to_dict()["codecs"][0]["configuration"]["index_location"] == location


def test_array_erases_shards_that_become_fill(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, shape=(8, 8), dtype="uint8", chunks=(4, 4),
                            codecs=[shard([2, 2], [{"name": "bytes"}])])
    a[0, 0] = 1
    assert store.exists(a.chunk_key((0, 0)))
    a[0, 0] = 0
    assert not store.exists(a.chunk_key((0, 0)))
    assert a.nchunks_initialized == 0


def test_array_nested_sharding_and_ragged_edges(store: zarr3c.Store) -> None:
    nested = shard([2, 2], [LE, GZIP], index_location="start")
    a = zarr3c.create_array(store, shape=(13, 9), dtype="float64", chunks=(8, 8),
                            codecs=[shard([4, 4], [nested])], fill_value=float("nan"))
    data = np.random.default_rng(5).standard_normal((13, 9))
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[7:13, 3:9:2], data[7:13, 3:9:2])
    a[12, 8] = np.nan
    assert math.isnan(zarr3c.open_array(store, mode="r")[12, 8])
