"""The ``numcodecs.<id>`` codecs (zarr-python 3's names for numcodecs codecs)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c import registry
from zarr3c.codecs import CodecPipeline, normalize_codec_like
from zarr3c.codecs.numcodecs_adapter import NumcodecsCodec
from zarr3c.errors import ChecksumError, ChunkDecodeError, MetadataError, UnknownExtensionError

LE = {"name": "bytes", "configuration": {"endian": "little"}}

BYTES_TO_BYTES: dict[str, dict[str, Any]] = {
    "zlib": {"level": 1},
    "gzip": {"level": 5},
    "bz2": {"level": 1},
    "lzma": {"preset": 1},
    "lz4": {"acceleration": 1},
    "zstd": {"level": 1},
    "blosc": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "shuffle": {"elementsize": 4},
}
CHECKSUMS = ["adler32", "crc32", "crc32c", "fletcher32", "jenkins_lookup3"]


def test_every_numcodecs_name_is_registered_and_named_after_its_id() -> None:
    names = [n for n in registry.codecs.names() if n.startswith("numcodecs.")]
    assert len(names) >= 21
    for name in names:
        cls = registry.codecs.get(name)
        # (the object codecs of Zarr v2 object arrays are zarr3c's own, over numcodecs)
        assert issubclass(cls, NumcodecsCodec) or name in ("numcodecs.vlen-array",
                                                           "numcodecs.json2")
        assert cls.name == name == "numcodecs." + cls.codec_id


@pytest.mark.parametrize("codec_id", [*BYTES_TO_BYTES, *CHECKSUMS])
@settings(max_examples=10, deadline=None)
@given(data=st.binary(min_size=4, max_size=2000).filter(lambda b: len(b) % 4 == 0))
def test_bytes_to_bytes_round_trip_matches_numcodecs(codec_id: str, data: bytes) -> None:
    config = BYTES_TO_BYTES.get(codec_id, {})
    p = CodecPipeline.from_codecs(
        [{"name": "bytes"}, {"name": f"numcodecs.{codec_id}", "configuration": config}],
        dtype="uint8",
    )
    a = np.frombuffer(data, np.uint8)
    encoded = bytes(p.encode(a))
    reference = numcodecs.get_codec({"id": codec_id, **config})
    if codec_id not in ("gzip",):  # gzip headers hold a timestamp
        assert encoded == bytes(np.asarray(reference.encode(a)).tobytes())
    assert bytes(np.asarray(reference.decode(encoded)).tobytes()) == data
    assert p.decode(encoded, a.shape).tobytes() == data


@pytest.mark.parametrize("codec_id", CHECKSUMS)
def test_checksum_mismatch_is_a_checksum_error(codec_id: str) -> None:
    p = CodecPipeline.from_codecs([LE, {"name": f"numcodecs.{codec_id}"}], dtype="int32")
    a = np.arange(64, dtype=np.int32)
    encoded = bytes(p.encode(a))
    assert len(encoded) == a.nbytes + 4 and p.encoded_size(a.shape) == a.nbytes + 4
    for position in (0, len(encoded) // 2, len(encoded) - 1):
        corrupt = bytearray(encoded)
        corrupt[position] ^= 0x10
        with pytest.raises(ChecksumError, match="c/9"):
            p.decode(bytes(corrupt), a.shape, key="c/9")
    with pytest.raises(ChunkDecodeError, match="c/9"):
        p.decode(encoded[:3], a.shape, key="c/9")


@pytest.mark.parametrize("codec_id", ["zlib", "bz2", "lzma", "lz4", "zstd", "blosc"])
def test_corrupt_input_is_a_chunk_decode_error(codec_id: str) -> None:
    p = CodecPipeline.from_codecs(
        [LE, {"name": f"numcodecs.{codec_id}", "configuration": BYTES_TO_BYTES[codec_id]}],
        dtype="int32",
    )
    a = np.arange(1024, dtype=np.int32)
    encoded = bytes(p.encode(a))
    for bad in (b"", b"not compressed at all" * 3, encoded[: len(encoded) // 2]):
        # (bz2 decodes b"" to b"", which the bytes codec then rejects: also a decode error)
        with pytest.raises(ChunkDecodeError, match="^chunk 'c/1': (numcodecs|bytes codec)"):
            p.decode(bad, a.shape, key="c/1")


FILTERS = [
    # (dtype, configuration, encoded dtype, lossless)
    ("int32", {"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, "int32", True),
    ("int32", {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i8"}},
     "int64", True),
    ("int16", {"name": "numcodecs.delta", "configuration": {"dtype": ">i2", "astype": ">i4"}},
     "int32", True),
    ("float64", {"name": "numcodecs.quantize", "configuration": {"digits": 3}}, "float64", False),
    ("float64", {"name": "numcodecs.quantize",
                 "configuration": {"digits": 2, "dtype": "<f8", "astype": "<f4"}},
     "float32", False),
    ("float64", {"name": "numcodecs.fixedscaleoffset",
                 "configuration": {"offset": 5, "scale": 100, "astype": "<i4"}}, "int32", False),
    ("float32", {"name": "numcodecs.bitround", "configuration": {"keepbits": 5}}, "float32",
     False),
    ("int16", {"name": "numcodecs.astype", "configuration": {"encode_dtype": "<i8"}}, "int64",
     True),
    ("float64", {"name": "numcodecs.astype",
                 "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}, "float32",
     False),
]  # fmt: skip


@pytest.mark.parametrize(
    "dtype,codec,encoded_dtype,lossless",
    FILTERS,
    ids=[
        "delta", "delta-astype", "delta-big-endian", "quantize", "quantize-astype",
        "fixedscaleoffset", "bitround", "astype-widen", "astype-narrow",
    ],
)  # fmt: skip
@settings(max_examples=10, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=0, max_size=3).map(tuple),
    seed=st.integers(0, 2**32 - 1),
)
def test_array_to_array_filters(
    dtype: str, codec: dict, encoded_dtype: str, lossless: bool, shape: tuple, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    a = (rng.random(shape) * 100 - 50).astype(dtype)
    p = CodecPipeline.from_codecs([codec, LE], dtype=dtype)
    p.validate(shape)
    chain = p._chain(shape)
    assert chain.bytes_spec.dtype == np.dtype(encoded_dtype)
    assert chain.bytes_spec.shape == shape
    encoded = p.encode(a)
    assert p.encoded_size(shape) == a.size * np.dtype(encoded_dtype).itemsize
    decoded = p.decode(encoded, shape)
    assert decoded.shape == shape and decoded.dtype == a.dtype
    # the oracle: numcodecs itself, configured as the pipeline wrote the configuration
    reference = numcodecs.get_codec({"id": codec["name"][10:], **p.to_dicts()[0]["configuration"]})
    expected = np.asarray(reference.decode(reference.encode(a))).view(a.dtype).reshape(shape)
    assert decoded.tobytes() == expected.astype(a.dtype).tobytes()
    if lossless:
        np.testing.assert_array_equal(decoded, a)


def test_packbits_flattens_bools() -> None:
    a = np.random.default_rng(0).random((3, 7)) > 0.5
    p = CodecPipeline.from_codecs([{"name": "numcodecs.packbits"}, {"name": "bytes"}], dtype="bool")
    assert p.encoded_size(a.shape) == 1 + 3  # one byte of padding count + ceil(21 / 8)
    np.testing.assert_array_equal(p.decode(p.encode(a), a.shape), a)
    with pytest.raises(MetadataError, match=r"codecs\[0\]: packbits needs the bool"):
        CodecPipeline.from_codecs(
            [{"name": "numcodecs.packbits"}, {"name": "bytes"}], dtype="uint8"
        ).validate((4,))


@pytest.mark.parametrize(
    "codec,dtype,filled",
    [
        ({"name": "numcodecs.shuffle"}, "int16", {"elementsize": 2}),
        ({"name": "numcodecs.quantize", "configuration": {"digits": 1}}, "float32",
         {"digits": 1, "dtype": "<f4"}),
        ({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 1}},
         "float64", {"offset": 0, "scale": 1, "dtype": "<f8"}),
        ({"name": "numcodecs.astype", "configuration": {"encode_dtype": "<f4"}}, "float64",
         {"encode_dtype": "<f4", "decode_dtype": "<f8"}),
    ],
    ids=["shuffle-elementsize", "quantize-dtype", "fixedscaleoffset-dtype", "astype-decode_dtype"],
)  # fmt: skip
def test_evolve_fills_fields_from_the_data_type(codec: dict, dtype: str, filled: dict) -> None:
    codecs = [LE, codec] if codec["name"] == "numcodecs.shuffle" else [codec, LE]
    p = CodecPipeline.from_codecs(codecs, dtype=dtype)
    (written,) = [c for c in p.to_dicts() if c["name"] == codec["name"]]
    assert written["configuration"] == filled


def test_filter_data_type_must_match_the_array() -> None:
    p = CodecPipeline.from_codecs(
        [{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}, LE], dtype="int32"
    )
    with pytest.raises(MetadataError, match=r"codecs\[0\]\.configuration\.dtype: is int64"):
        p.validate((4,))


@pytest.mark.parametrize(
    "codec,error,match",
    [
        ({"name": "numcodecs.zlib", "configuration": {"nope": 1}}, MetadataError,
         r"codecs\[1\]\.configuration: invalid configuration for numcodecs 'zlib'"),
        ({"name": "numcodecs.zlib", "configuration": {"id": "gzip"}}, MetadataError,
         r"codecs\[1\]\.configuration\.id: must be 'zlib'"),
        ({"name": "numcodecs.zlib", "configuration": 3}, MetadataError,
         r"codecs\[1\]\.configuration: must be a JSON object"),
        ({"name": "numcodecs.delta"}, MetadataError, r"codecs\[1\]\.configuration: invalid"),
        ({"name": "numcodecs.bitround", "configuration": {"keepbits": -1}}, MetadataError,
         r"codecs\[1\]\.configuration: invalid"),
        ({"name": "numcodecs.vlen-utf8"}, UnknownExtensionError,
         r"codecs\[1\]: unknown codec 'numcodecs.vlen-utf8'"),
    ],
    ids=["unknown-kwarg", "id-mismatch", "not-an-object", "delta-no-dtype", "bitround-negative",
         "unsupported-id"],
)  # fmt: skip
def test_bad_configurations(codec: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        CodecPipeline.from_codecs([LE, codec], dtype="int32")


@pytest.mark.parametrize("codec_id,package", [("pcodec", "pcodec"), ("zfpy", "zfpy")])
def test_array_to_bytes_codecs_need_their_package(codec_id: str, package: str) -> None:
    if importlib.util.find_spec(package) is not None:
        p = CodecPipeline.from_codecs([{"name": f"numcodecs.{codec_id}"}], dtype="float64")
        a = np.linspace(0, 1, 64).reshape(8, 8)
        np.testing.assert_allclose(p.decode(p.encode(a), a.shape), a)
        return
    with pytest.raises(UnknownExtensionError, match=rf"codecs\[0\].*needs the '{package}' package"):
        CodecPipeline.from_codecs([{"name": f"numcodecs.{codec_id}"}], dtype="float64")


def test_configuration_is_written_back_as_zarr_python_writes_it() -> None:
    codecs = [
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
        LE,
        {"name": "numcodecs.zlib", "configuration": {"level": 1}},
        {"name": "numcodecs.crc32", "configuration": {}},
    ]
    assert CodecPipeline.from_codecs(codecs, dtype="int32").to_dicts() == codecs


@pytest.mark.parametrize(
    "instance,expected",
    [
        (numcodecs.Zstd(level=1), {"name": "zstd", "configuration": {"level": 1, "checksum": False}}),
        (numcodecs.GZip(level=3), {"name": "gzip", "configuration": {"level": 3}}),
        (numcodecs.Blosc(cname="lz4", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
         {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3, "shuffle": "bitshuffle",
                                             "blocksize": 0}}),
        (numcodecs.Blosc(cname="zstd", clevel=1, shuffle=numcodecs.Blosc.AUTOSHUFFLE, typesize=4),
         {"name": "blosc", "configuration": {"typesize": 4, "cname": "zstd", "clevel": 1,
                                             "blocksize": 0}}),
        (numcodecs.CRC32C(), {"name": "crc32c"}),
        (numcodecs.CRC32C(location="start"),
         {"name": "numcodecs.crc32c", "configuration": {"location": "start"}}),
        (numcodecs.Zlib(level=4), {"name": "numcodecs.zlib", "configuration": {"level": 4}}),
        (numcodecs.Delta(dtype="<i4"),
         {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}}),
    ],
    ids=["zstd", "gzip", "blosc", "blosc-autoshuffle", "crc32c", "crc32c-start", "zlib", "delta"],
)  # fmt: skip
def test_numcodecs_instances_normalize_to_v3_names(instance: object, expected: dict) -> None:
    assert normalize_codec_like(instance) == expected


def test_numcodecs_instance_encodes_like_numcodecs() -> None:
    """Blosc's bytes are numcodecs'; a ``numcodecs.Zstd`` becomes zarr3c's zstd codec, whose
    frames come from the libzstd zarr3c bound (numcodecs' or a newer build: the same
    parameters, bytes that may differ), so its frame is checked as numcodecs decodes it."""
    data = np.arange(4096, dtype="<u2")
    blosc = numcodecs.Blosc(cname="lz4", typesize=2)
    p = CodecPipeline.from_codecs([LE, blosc], dtype="uint16")
    assert bytes(p.encode(data)) == bytes(blosc.encode(data.view(np.uint8)))
    p = CodecPipeline.from_codecs([LE, numcodecs.Zstd(level=3, checksum=True)], dtype="uint16")
    assert p.to_dicts()[1] == {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
    encoded = bytes(p.encode(data))
    assert encoded[4] & 4  # the checksum flag
    assert bytes(numcodecs.Zstd().decode(encoded)) == data.tobytes()
