"""The ``gzip``, ``zstd`` and ``blosc`` bytes -> bytes codecs."""

from __future__ import annotations

import gzip as stdlib_gzip

import numcodecs
import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.blosc import BloscCodec
from zarr3c.codecs.gzip import GzipCodec
from zarr3c.codecs.zstd import ZstdCodec
from zarr3c.errors import ChecksumError, ChunkDecodeError, MetadataError

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "V3",
]  # fmt: skip

COMPRESSORS = {
    "gzip-1": {"name": "gzip", "configuration": {"level": 1}},
    "gzip-0": {"name": "gzip", "configuration": {"level": 0}},
    "zstd-default": {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
    "zstd-negative-checksum": {"name": "zstd", "configuration": {"level": -5, "checksum": True}},
    "blosc-default": {"name": "blosc"},
    "blosc-lz4-bitshuffle": {
        "name": "blosc",
        "configuration": {"cname": "lz4", "clevel": 9, "shuffle": "bitshuffle", "typesize": 4},
    },
    "blosc-zlib-noshuffle-blocks": {
        "name": "blosc",
        "configuration": {"cname": "zlib", "clevel": 1, "shuffle": "noshuffle", "blocksize": 256},
    },
}


def serializer(dtype: str) -> dict:
    if np.dtype(dtype).itemsize == 1 or np.dtype(dtype).kind == "V":
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": "little"}}


def random_array(seed: int, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    # low-entropy bytes so that the compressors actually compress
    raw = rng.integers(0, 4, n, dtype=np.uint8)
    if dt == np.dtype(bool):
        raw &= 1
    return raw.view(dt).reshape(shape)


@pytest.mark.parametrize("compressor", list(COMPRESSORS), ids=list(COMPRESSORS))
@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=5, deadline=None)
@given(
    shape=st.lists(st.integers(0, 6), min_size=0, max_size=3).map(tuple),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip(compressor: str, dtype: str, shape: tuple, seed: int) -> None:
    a = random_array(seed, dtype, shape)
    p = CodecPipeline.from_codecs([serializer(dtype), COMPRESSORS[compressor]], dtype=dtype)
    out = p.decode(p.encode(a), shape, key="c/0")
    assert out.shape == shape and out.tobytes() == a.tobytes()
    assert p.encoded_size(shape) is None


@pytest.mark.parametrize("compressor", list(COMPRESSORS), ids=list(COMPRESSORS))
@pytest.mark.parametrize(
    "corrupt",
    [
        lambda e: e[: len(e) // 2],
        lambda e: b"",
        lambda e: b"garbage" * 10,
        lambda e: e[:4] + bytes(b ^ 0xFF for b in e[4:12]) + e[12:],
    ],
    ids=["truncated", "empty", "garbage", "flipped-header"],
)
def test_corrupt_input_is_a_chunk_decode_error_naming_the_key(compressor: str, corrupt) -> None:
    a = random_array(0, "uint16", (32, 32))
    p = CodecPipeline.from_codecs([serializer("uint16"), COMPRESSORS[compressor]], dtype="uint16")
    bad = corrupt(bytes(p.encode(a)))
    with pytest.raises(ChunkDecodeError, match=r"^chunk 'arr/c/3/1': ") as info:
        p.decode(bad, a.shape, key="arr/c/3/1")
    assert info.value.key == "arr/c/3/1"


@pytest.mark.parametrize("name", ["blosc", "numcodecs.blosc"])
def test_every_truncation_of_a_blosc_frame_is_detected(name: str) -> None:
    # numcodecs trusts the size in the blosc header; one byte short used to "decode"
    a = np.arange(1024, dtype="<i4")
    p = CodecPipeline.from_codecs(
        [serializer("int32"), {"name": name, "configuration": {"cname": "lz4", "clevel": 5}}],
        dtype="int32",
    )
    encoded = bytes(p.encode(a))
    for length in range(len(encoded)):
        with pytest.raises(ChunkDecodeError, match="c/0"):
            p.decode(encoded[:length], a.shape, key="c/0")
    with pytest.raises(ChunkDecodeError, match="c/0"):
        p.decode(encoded + b"\0", a.shape, key="c/0")


def test_zstd_frame_checksum_mismatch_is_a_checksum_error() -> None:
    a = np.arange(4096, dtype="<u4")
    p = CodecPipeline.from_codecs(
        [serializer("uint32"), {"name": "zstd", "configuration": {"level": 1, "checksum": True}}],
        dtype="uint32",
    )
    encoded = bytearray(p.encode(a))
    encoded[-1] ^= 0x01  # the frame checksum is the last 4 bytes
    with pytest.raises(ChecksumError, match="k"):
        p.decode(bytes(encoded), a.shape, key="k")


def test_gzip_output_is_standard_gzip() -> None:
    data = np.arange(1000, dtype="<i8").tobytes()
    encoded = GzipCodec(level=6).encode(data)
    assert stdlib_gzip.decompress(bytes(encoded)) == data
    assert bytes(GzipCodec(level=6).decode(stdlib_gzip.compress(data))) == data


@pytest.mark.parametrize("edge", [10, 64])
def test_zstd_frames_are_numcodecs_frames(edge: int) -> None:
    """What numcodecs' calls make on the bound libzstd (numcodecs' own frame where that is
    numcodecs' build; another version may write other bytes for the same content: 1.5.7's
    frames of this 64^3 chunk at level 0 or 3 are not 1.5.6's), which numcodecs decodes,
    with the checksum flag asked for."""
    from zarr3c._kernels import _reference as ref
    from zarr3c.codecs import zstd as zstd_module

    j = np.arange(edge, dtype=np.uint16)
    grad = j[:, None, None] * np.uint16(7) + j[None, :, None] * np.uint16(3) + j[None, None, :]
    noise = np.random.default_rng(0).integers(0, 64, (edge,) * 3, dtype=np.uint16)
    data = (grad + noise).astype("<u2").tobytes()
    for level, checksum in [(0, False), (3, True), (-1, False), (9, True)]:
        encoded = bytes(ZstdCodec(level=level, checksum=checksum).encode(data))
        assert bytes(numcodecs.zstd.decompress(encoded)) == data
        assert bool(encoded[4] & 4) == checksum  # the frame header's checksum flag
        if zstd_module._COMPRESS:
            assert encoded == ref.zstd_frame(data, level, checksum)
        if zstd_module._LIBZSTD is None or zstd_module._LIBZSTD.name == "numcodecs":
            expected = numcodecs.Zstd(level=level, checksum=checksum).encode(data)
            assert encoded == bytes(expected)


def test_defaults_are_written_in_full() -> None:
    p = CodecPipeline.from_codecs(
        [serializer("uint8"), {"name": "zstd"}, {"name": "blosc"}], dtype="uint8"
    )
    assert p.to_dicts()[1:] == [
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
        {
            "name": "blosc",
            "configuration": {
                "typesize": 1, "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle",
                "blocksize": 0,
            },
        },
    ]  # fmt: skip


@pytest.mark.parametrize(
    "dtype,typesize,shuffle",
    [("uint8", 1, "bitshuffle"), ("int16", 2, "shuffle"), ("complex128", 16, "shuffle"),
     ("V3", 3, "shuffle")],
)  # fmt: skip
def test_blosc_evolve_fills_typesize_and_shuffle(dtype: str, typesize: int, shuffle: str) -> None:
    p = CodecPipeline.from_codecs([serializer(dtype), {"name": "blosc"}], dtype=dtype)
    (blosc,) = p.bytes_bytes
    assert isinstance(blosc, BloscCodec)
    assert (blosc.typesize, blosc.shuffle) == (typesize, shuffle)


def test_blosc_evolve_keeps_explicit_values() -> None:
    config = {"typesize": 4, "cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "blocksize": 0}
    p = CodecPipeline.from_codecs(
        [serializer("uint16"), {"name": "blosc", "configuration": config}], dtype="uint16"
    )
    assert p.to_dicts()[1] == {"name": "blosc", "configuration": config}


def test_blosc_typesize_drives_the_shuffle() -> None:
    # the same bytes compressed with typesize 2 and 4 differ (the shuffle differs)
    data = np.arange(2048, dtype="<u4").tobytes()
    two = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=2).encode(data)
    four = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4).encode(data)
    assert bytes(two) != bytes(four)
    assert bytes(BloscCodec(typesize=2).decode(two)) == data


@pytest.mark.parametrize(
    "codec,match",
    [
        ({"name": "gzip", "configuration": {"level": 10}}, r"\.level: must be 0 <= value <= 9"),
        ({"name": "gzip", "configuration": {"level": -1}}, r"\.level: must be 0 <= value"),
        ({"name": "gzip", "configuration": {"level": "5"}}, r"\.level: must be an integer"),
        ({"name": "gzip", "configuration": {"level": 5.0}}, r"\.level: must be an integer"),
        ({"name": "gzip", "configuration": {"level": True}}, r"\.level: must be an integer"),
        ({"name": "gzip", "configuration": {}}, r"\.level: is required"),
        ({"name": "gzip"}, r"\.level: is required"),
        ({"name": "gzip", "configuration": {"level": 1, "mtime": 0}}, r"\.mtime: unknown"),
        ({"name": "zstd", "configuration": {"level": 23}}, r"\.level: must be .* <= 22"),
        ({"name": "zstd", "configuration": {"level": -200000}}, r"\.level: must be -131072"),
        ({"name": "zstd", "configuration": {"checksum": "yes"}}, r"\.checksum: must be true"),
        ({"name": "zstd", "configuration": {"checksum": 1}}, r"\.checksum: must be true"),
        ({"name": "zstd", "configuration": {"level": 0, "dict": "x"}}, r"\.dict: unknown"),
        ({"name": "blosc", "configuration": {"shuffle": "nope"}}, r"\.shuffle: must be one of"),
        ({"name": "blosc", "configuration": {"shuffle": 1}}, r"\.shuffle: must be one of"),
        ({"name": "blosc", "configuration": {"cname": "lzma"}}, r"\.cname: must be one of"),
        ({"name": "blosc", "configuration": {"clevel": 10}}, r"\.clevel: must be 0 <= value <= 9"),
        ({"name": "blosc", "configuration": {"typesize": 0}}, r"\.typesize: must be 1 <= value"),
        ({"name": "blosc", "configuration": {"blocksize": -1}}, r"\.blocksize: must be 0 <="),
        ({"name": "blosc", "configuration": {"nthreads": 2}}, r"\.nthreads: unknown"),
    ],
    ids=[
        "gzip-level-10", "gzip-level-negative", "gzip-level-string", "gzip-level-float",
        "gzip-level-bool", "gzip-level-missing", "gzip-no-configuration", "gzip-unknown-field",
        "zstd-level-23", "zstd-level-too-negative", "zstd-checksum-string", "zstd-checksum-int",
        "zstd-unknown-field", "blosc-shuffle-nope", "blosc-shuffle-int", "blosc-cname-lzma",
        "blosc-clevel-10", "blosc-typesize-0", "blosc-blocksize-negative", "blosc-unknown-field",
    ],
)  # fmt: skip
def test_bad_configurations(codec: dict, match: str) -> None:
    with pytest.raises(MetadataError, match=r"codecs\[1\]\.configuration" + match):
        CodecPipeline.from_codecs([serializer("uint16"), codec], dtype="uint16")


def test_zstd_allocation_failure_is_corruption_only_with_a_declared_size(monkeypatch) -> None:
    """A frame header declaring a huge size is a corrupt chunk (ChunkDecodeError saying the
    size); a MemoryError decoding a frame that declares none is a real shortage, re-raised."""
    from zarr3c.codecs import zstd as zstd_module

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(zstd_module, "decode_with", out_of_memory)
    codec = ZstdCodec(level=0, checksum=False)
    declared = bytes(codec.encode(np.zeros(1000, dtype=np.uint8)))  # single-segment: size 1000
    with pytest.raises(ChunkDecodeError, match="declares 1000 decoded bytes"):
        codec.decode(declared)
    no_size = b"\x28\xb5\x2f\xfd\x00" + b"\x00" * 8  # frame header without a content size
    with pytest.raises(MemoryError) as info:
        codec.decode(no_size)
    assert not isinstance(info.value, ChunkDecodeError)
