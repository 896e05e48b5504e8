"""The codec pipeline: resolution, order checks, validation, encode/decode, defaults."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import (
    CodecPipeline,
    default_compressors,
    default_serializer,
    normalize_codec_like,
    parse_codecs,
)
from zarr3c.codecs.blosc import BloscCodec
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.crc32c import Crc32cCodec
from zarr3c.codecs.transpose import TransposeCodec
from zarr3c.codecs.zstd import ZstdCodec
from zarr3c.errors import (
    ChecksumError,
    ChunkDecodeError,
    CodecError,
    MetadataError,
    UnknownExtensionError,
)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
T10 = {"name": "transpose", "configuration": {"order": [1, 0]}}


@pytest.mark.parametrize(
    "codecs,error,match",
    [
        ([], MetadataError, r"^codecs: no array->bytes codec"),
        ([ZSTD], MetadataError, r"^codecs: no array->bytes codec"),
        ([T10], MetadataError, r"^codecs: no array->bytes codec"),
        ([LE, LE], MetadataError, r"^codecs\[1\]: a second array->bytes codec 'bytes'"),
        ([LE, ZSTD, {"name": "endian", "configuration": {"endian": "big"}}], MetadataError,
         r"^codecs\[2\]: a second array->bytes codec"),
        ([ZSTD, LE], MetadataError,
         r"^codecs\[0\]: bytes->bytes codec 'zstd' before the array->bytes codec \(codecs\[1\]"),
        ([LE, T10], MetadataError, r"^codecs\[1\]: array->array codec 'transpose' after"),
        ([LE, {"name": "nope"}], UnknownExtensionError, r"^codecs\[1\]: unknown codec 'nope'"),
        ([LE, {"name": 3}], MetadataError, r"^codecs\[1\]\.name: codec object needs a string"),
        ([LE, {"configuration": {}}], MetadataError, r"^codecs\[1\]\.name"),
        ([LE, {"name": "gzip", "configuration": {"level": 10}}], MetadataError,
         r"^codecs\[1\]\.configuration\.level: must be 0 <= value <= 9, got 10"),
        ([{"name": "transpose", "configuration": {"order": [0, 0]}}, LE], MetadataError,
         r"^codecs\[0\]\.configuration\.order: has duplicate axes"),
        ([LE, {"name": "blosc", "configuration": {"shuffle": "nope"}}], MetadataError,
         r"^codecs\[1\]\.configuration\.shuffle: must be one of"),
        ([LE, {"name": "zstd", "configuration": {"level": 1, "speed": 2}}], MetadataError,
         r"^codecs\[1\]\.configuration\.speed: unknown configuration field"),
        ([LE, {"name": "crc32c", "extra": 1}], MetadataError,
         r"^codecs\[1\]\.extra: unknown field in a codec object"),
        ([LE, 42], MetadataError, r"^codecs\[1\]: cannot interpret 42 as a codec"),
        ("bytes", MetadataError, r"^codecs: must be a list"),
        ({"name": "bytes"}, MetadataError, r"^codecs: must be a list"),
    ],
    ids=[
        "empty", "only-compressor", "only-filter", "two-serializers",
        "two-serializers-legacy-name", "b2b-before-a2b", "a2a-after-a2b", "unknown-name",
        "name-not-a-string", "name-missing", "gzip-level-10", "transpose-0-0", "blosc-shuffle-nope",
        "unknown-configuration-field", "unknown-codec-object-field", "not-a-codec",
        "string-not-list", "dict-not-list",
    ],
)  # fmt: skip
def test_validation_errors(codecs: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        CodecPipeline.from_codecs(codecs, dtype="uint16")  # type: ignore[arg-type]


def test_errors_name_the_source_document() -> None:
    cases: list[list[dict]] = [
        [ZSTD, LE],
        [LE, {"name": "nope"}],
        [LE, {"name": "gzip", "configuration": {"level": 10}}],
    ]
    for codecs in cases:
        with pytest.raises(MetadataError, match=r"^group/arr/zarr\.json: codecs\["):
            CodecPipeline.from_codecs(codecs, dtype="uint16", source="group/arr/zarr.json")


def test_unknown_extension_error_is_a_metadata_error_and_value_error() -> None:
    with pytest.raises(ValueError):
        CodecPipeline.from_codecs([{"name": "nope"}], dtype="uint8")


def test_parse_codecs_resolves_without_evolving() -> None:
    parsed = parse_codecs([T10, LE, {"name": "blosc"}, "crc32c"])
    assert [type(c).__name__ for c in parsed] == [
        "TransposeCodec", "BytesCodec", "BloscCodec", "Crc32cCodec",
    ]  # fmt: skip
    blosc = parsed[2]
    assert isinstance(blosc, BloscCodec)
    assert blosc.typesize is None  # filled only by from_codecs, which knows the dtype


def test_accepts_every_codec_like_form() -> None:
    named = SimpleNamespace(name="transpose", configuration={"order": (1, 0)})
    p = CodecPipeline.from_codecs(
        [named, BytesCodec(endian="big"), numcodecs.Zstd(level=2), "crc32c"], dtype="int32"
    )
    assert p.to_dicts() == [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "zstd", "configuration": {"level": 2, "checksum": False}},
        {"name": "crc32c"},
    ]
    assert isinstance(p.array_array[0], TransposeCodec)
    assert isinstance(p.bytes_bytes[0], ZstdCodec) and isinstance(p.bytes_bytes[1], Crc32cCodec)


def test_to_dicts_round_trips() -> None:
    codecs = [
        {"name": "transpose", "configuration": {"order": "F"}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "blosc", "configuration": {"cname": "lz4"}},
        ZSTD,
        {"name": "crc32c"},
    ]
    p = CodecPipeline.from_codecs(codecs, dtype="float32", fill_value=np.nan)
    again = CodecPipeline.from_codecs(p.to_dicts(), dtype="float32", fill_value=np.nan)
    assert again == p and again.to_dicts() == p.to_dicts()
    assert p != CodecPipeline.from_codecs(p.to_dicts(), dtype="float64", fill_value=np.nan)


def test_must_understand_is_accepted() -> None:
    p = CodecPipeline.from_codecs([{**LE, "must_understand": True}], dtype="int16")
    assert p.to_dicts() == [LE]


def test_dtype_is_made_native() -> None:
    p = CodecPipeline.from_codecs([LE], dtype=">u2")
    assert p.dtype == np.dtype("uint16") and p.dtype.isnative
    out = p.decode(np.arange(4, dtype="<u2").tobytes(), (4,))
    assert out.dtype.isnative


@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(["bool", "int8", "uint16", "int32", "float64", "complex64", "V3"]),
    shape=st.lists(st.integers(1, 5), min_size=0, max_size=4).map(tuple),
    endian=st.sampled_from(["little", "big"]),
    transpose=st.booleans(),
    compressors=st.sampled_from([[], [ZSTD], [{"name": "blosc"}, {"name": "crc32c"}]]),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip_any_chain(
    dtype: str, shape: tuple, endian: str, transpose: bool, compressors: list, seed: int
) -> None:
    dt = np.dtype(dtype)
    raw = np.random.default_rng(seed).integers(0, 256, int(np.prod(shape)) * dt.itemsize)
    raw = raw.astype(np.uint8)
    if dtype == "bool":
        raw &= 1
    a = raw.view(dt).reshape(shape)
    codecs: list = []
    if transpose:
        codecs.append(
            {"name": "transpose", "configuration": {"order": list(range(len(shape)))[::-1]}}
        )
    codecs.append({"name": "bytes", "configuration": {"endian": endian}})
    codecs += compressors
    p = CodecPipeline.from_codecs(codecs, dtype=dtype)
    out = p.decode(p.encode(a), shape, key="k")
    assert out.shape == shape and out.dtype == dt and out.flags.c_contiguous
    assert out.tobytes() == a.tobytes()


def test_variable_chunk_shapes_share_one_pipeline() -> None:
    p = CodecPipeline.from_codecs([T10, LE, {"name": "crc32c"}], dtype="int32")
    for shape in [(4, 5), (2, 5), (4, 1), (1, 1), (4, 5)]:
        a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
        encoded = p.encode(a)
        assert p.encoded_size(shape) == a.nbytes + 4 == len(bytes(encoded))
        np.testing.assert_array_equal(p.decode(encoded, shape), a)


def test_decode_with_the_wrong_shape_is_a_chunk_decode_error() -> None:
    p = CodecPipeline.from_codecs([LE, ZSTD], dtype="int32")
    encoded = p.encode(np.arange(20, dtype=np.int32).reshape(4, 5))
    # Too much content: the compressor stops at the chunk's size; too little: the
    # serializer reports the size it expected.
    with pytest.raises(ChunkDecodeError,
                       match=r"^chunk 'a/c/0/0': zstd: the data claims 80 decoded bytes, more "
                             r"than the 40 a chunk here can hold"):
        p.decode(encoded, (2, 5), key="a/c/0/0")
    with pytest.raises(ChunkDecodeError, match=r"^chunk 'a/c/0/0': bytes codec: expected 96 bytes"):
        p.decode(encoded, (4, 6), key="a/c/0/0")


def test_checksum_errors_keep_their_type_and_gain_the_key() -> None:
    p = CodecPipeline.from_codecs([LE, {"name": "crc32c"}], dtype="int32")
    encoded = bytearray(p.encode(np.arange(6, dtype=np.int32)))
    encoded[0] ^= 1
    with pytest.raises(ChecksumError, match=r"^chunk 'x/c/1'") as info:
        p.decode(bytes(encoded), (6,), key="x/c/1")
    assert info.value.key == "x/c/1"


def test_decode_without_a_key() -> None:
    p = CodecPipeline.from_codecs([LE], dtype="int32")
    with pytest.raises(ChunkDecodeError, match=r"^bytes codec") as info:
        p.decode(b"123", (6,))
    assert info.value.key is None


@pytest.mark.parametrize(
    "data",
    [
        lambda a: a.tobytes(),
        lambda a: bytearray(a.tobytes()),
        lambda a: memoryview(a.tobytes()),
        lambda a: np.frombuffer(a.tobytes(), np.uint8),
        lambda a: a.copy(),
    ],
    ids=["bytes", "bytearray", "memoryview", "uint8-array", "typed-array"],
)
def test_decode_accepts_any_bytes_like(data) -> None:
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    p = CodecPipeline.from_codecs([LE], dtype="int32")
    np.testing.assert_array_equal(p.decode(data(a), (3, 4)), a)


def test_zero_dimensional_and_empty_chunks() -> None:
    p = CodecPipeline.from_codecs([LE, ZSTD], dtype="float64")
    a = np.array(2.5)
    out = p.decode(p.encode(a), ())
    assert out.shape == () and out[()] == 2.5
    empty = p.decode(p.encode(np.zeros((0, 3))), (0, 3))
    assert empty.shape == (0, 3)


def test_encode_errors_are_codec_errors() -> None:
    # bitround cannot keep more mantissa bits than float32 has; numcodecs fails on encode
    p = CodecPipeline.from_codecs(
        [{"name": "numcodecs.bitround", "configuration": {"keepbits": 40}}, LE], dtype="float32"
    )
    with pytest.raises(CodecError, match="numcodecs.bitround"):
        p.encode(np.ones(4, dtype=np.float32))


def test_validate_checks_each_codec_against_the_chunk_shape() -> None:
    p = CodecPipeline.from_codecs([T10, {"name": "bytes"}], dtype="int16", source="a/zarr.json")
    with pytest.raises(MetadataError, match=r"^a/zarr\.json: codecs\[1\]\.configuration\.endian"):
        p.validate((3, 4))
    p = CodecPipeline.from_codecs([T10, LE], dtype="int16")
    with pytest.raises(MetadataError, match=r"^meta\.json: codecs\[0\]\.configuration\.order"):
        p.validate((3, 4, 5), source="meta.json")
    p.validate((3, 4))


def test_invalid_chunk_shape_is_a_metadata_error() -> None:
    p = CodecPipeline.from_codecs([LE], dtype="int16")
    for shape in [(-1,), (1.5,), (True,)]:
        with pytest.raises(MetadataError, match="chunk shape"):
            p.decode(b"", shape)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "dtype,fill_value,expected",
    [
        ("float32", np.nan, np.float32("nan").tobytes()),
        ("int16", -3, np.int16(-3).tobytes()),
        ("V3", b"abc", b"abc"),
        ("bool", True, b"\x01"),
        ("uint8", None, b"\x00"),
    ],
)
def test_fill_value_is_kept_as_a_0d_array(dtype: str, fill_value: object, expected: bytes) -> None:
    p = CodecPipeline.from_codecs(
        [{"name": "bytes", "configuration": {"endian": "little"}}]
        if np.dtype(dtype).itemsize > 1 and dtype != "V3"
        else [{"name": "bytes"}],
        dtype=dtype,
        fill_value=fill_value,
    )
    assert p.fill_value.shape == () and p.fill_value.dtype == np.dtype(dtype)
    assert p.fill_value.tobytes() == expected


@pytest.mark.parametrize("fill_value", [np.nan, "x", [1, 2]], ids=["nan", "string", "list"])
def test_fill_value_that_does_not_fit_is_a_metadata_error(fill_value: object) -> None:
    with pytest.raises(MetadataError, match="fill_value"):
        CodecPipeline.from_codecs([LE], dtype="int16", fill_value=fill_value)


def test_encoded_size() -> None:
    assert CodecPipeline.from_codecs([T10, LE], dtype="int16").encoded_size((3, 4)) == 24
    assert CodecPipeline.from_codecs([LE, {"name": "crc32c"}], dtype="u8").encoded_size((5,)) == 44
    assert CodecPipeline.from_codecs([LE, ZSTD], dtype="int16").encoded_size((3, 4)) is None
    assert (
        CodecPipeline.from_codecs([LE, ZSTD, {"name": "crc32c"}], dtype="int16").encoded_size((3,))
        is None
    )


def test_concurrent_use_from_threads() -> None:
    p = CodecPipeline.from_codecs([T10, LE, {"name": "blosc"}, {"name": "crc32c"}], dtype="int64")

    def work(i: int) -> bool:
        shape = (1 + i % 7, 1 + i % 5)
        a = np.arange(np.prod(shape), dtype=np.int64).reshape(shape) * i
        return bool(np.array_equal(p.decode(p.encode(a), shape, key=f"c/{i}"), a))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(200)))


def test_encode_result_may_alias_the_chunk_but_decoding_a_copy_is_stable() -> None:
    p = CodecPipeline.from_codecs([LE], dtype="<i4")
    a = np.arange(4, dtype="<i4")
    stored = bytes(p.encode(a))  # callers keep a copy, as documented
    a[:] = 0
    np.testing.assert_array_equal(p.decode(stored, (4,)), np.arange(4))


@pytest.mark.parametrize(
    "dtype,expected",
    [
        ("uint8", {"name": "bytes"}),
        ("int8", {"name": "bytes"}),
        ("bool", {"name": "bytes"}),
        ("V5", {"name": "bytes"}),
        ("<u2", {"name": "bytes", "configuration": {"endian": "little"}}),
        (">f8", {"name": "bytes", "configuration": {"endian": "little"}}),
        ("complex64", {"name": "bytes", "configuration": {"endian": "little"}}),
    ],
)
def test_default_serializer(dtype: str, expected: dict) -> None:
    assert default_serializer(dtype) == expected
    CodecPipeline.from_codecs([expected], dtype=dtype).validate((2,))


def test_default_compressors() -> None:
    assert default_compressors("float64") == [ZSTD]


@pytest.mark.parametrize(
    "value,expected",
    [
        ("crc32c", {"name": "crc32c"}),
        ({"name": "zstd", "configuration": {"level": np.int64(3)}},
         {"name": "zstd", "configuration": {"level": 3}}),
        (TransposeCodec(order=(1, 0)), T10),
        (SimpleNamespace(name="bytes", configuration=None), {"name": "bytes"}),
        (numcodecs.Zstd(level=1), {"name": "zstd", "configuration": {"level": 1, "checksum": False}}),
        (numcodecs.Zlib(level=2), {"name": "numcodecs.zlib", "configuration": {"level": 2}}),
    ],
    ids=["name", "dict-numpy-values", "codec", "named-config", "numcodecs-native", "numcodecs-other"],
)  # fmt: skip
def test_normalize_codec_like(value: object, expected: dict) -> None:
    assert normalize_codec_like(value) == expected


def test_normalize_codec_like_takes_zarr_python_codecs() -> None:
    zcodecs = pytest.importorskip("zarr.codecs")
    assert normalize_codec_like(zcodecs.TransposeCodec(order=(1, 0))) == T10
    assert normalize_codec_like(zcodecs.BloscCodec(cname="lz4"))["configuration"]["shuffle"] in (
        "bitshuffle", "shuffle",
    )  # fmt: skip


@pytest.mark.parametrize("value", [42, None, 1.5, ["bytes"]], ids=["int", "none", "float", "list"])
def test_normalize_codec_like_rejects(value: object) -> None:
    with pytest.raises(MetadataError, match="cannot interpret"):
        normalize_codec_like(value)


# ---------------------------------------------------------------- pipelines shared by arrays


def test_arrays_of_one_chain_share_its_pipeline() -> None:
    """Arrays alike in chain, data type, fill value and chunk shape share one resolved
    pipeline; any difference (or an array whose chain is refused) gets its own, and a
    refused chain still names its own document."""
    import zarr3c

    g = zarr3c.create_group(zarr3c.MemoryStore())
    kw = {"shape": (10, 10), "chunks": (5, 5), "compressors": {"name": "zstd",
                                                              "configuration": {"level": 1}}}
    a = g.create_array("a", dtype="f4", fill_value=0.5, **kw)
    b = g.create_array("b", dtype="f4", fill_value=0.5, **kw)
    again = zarr3c.open_group(g.store, mode="r")
    assert a._pipeline is b._pipeline is again["a"]._pipeline
    others = [g.create_array("c", dtype="f8", fill_value=0.5, **kw),
              g.create_array("d", dtype="f4", fill_value=1.5, **kw),
              g.create_array("e", dtype="f4", fill_value=0.5, **(kw | {"chunks": (2, 5)})),
              g.create_array("f", dtype="f4", fill_value=0.5, shape=(10, 10), chunks=(5, 5),
                             compressors={"name": "zstd", "configuration": {"level": 2}})]
    assert len({id(x._pipeline) for x in [a, *others]}) == 5
    data = np.arange(100, dtype="f4").reshape(10, 10)
    a[...] = data
    b[...] = data[::-1]
    np.testing.assert_array_equal(again["a"][...], data)
    np.testing.assert_array_equal(again["b"][...], data[::-1])
    # a chain that cannot take the chunk shape: refused, naming this array's document
    bad = {"name": "transpose", "configuration": {"order": [1, 0, 2]}}
    for name in ("x", "y"):
        with pytest.raises(MetadataError, match=f"{name}/zarr.json"):
            g.create_array(name, dtype="f4", shape=(4, 4), chunks=(2, 2), filters=[bad])


def test_a_new_registration_is_not_served_a_stale_pipeline() -> None:
    import zarr3c
    from zarr3c import registry

    store = zarr3c.MemoryStore()
    a = zarr3c.create_array(store, shape=(4,), dtype="u1", chunks=(2,), compressors=None)
    before = zarr3c.open_array(store, mode="r")._pipeline
    assert before is a._pipeline
    registry.codecs.register("bytes", BytesCodec)  # (the same class, registered anew)
    assert zarr3c.open_array(store, mode="r")._pipeline is not before
