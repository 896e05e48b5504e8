"""The ``vlen-utf8`` and ``vlen-bytes`` array -> bytes codecs, standalone.

Oracles: numcodecs' ``VLenUTF8`` / ``VLenBytes`` (byte for byte) and the chunks zarr-python 3
writes for ``string`` / ``variable_length_bytes`` arrays (when zarr is importable).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numcodecs import VLenBytes, VLenUTF8

from zarr3c._kernels import vlen as kernel
from zarr3c.codecs import CodecPipeline, VLenBytesCodec, VLenUTF8Codec
from zarr3c.codecs.base import ChunkSpec
from zarr3c.errors import ChunkDecodeError, CodecError, MetadataError, ValueConversionError
from zarr3c.registry import codecs as registry

StringDType = getattr(np.dtypes, "StringDType", None)
needs_string_dtype = pytest.mark.skipif(
    not kernel.string_dtype_supported(), reason="numpy has no StringDType (numpy < 2)"
)


def objects(values: list[Any], shape: tuple[int, ...] | None = None) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape if shape is not None else (len(values),))


def spec(shape: tuple[int, ...], dtype: Any = object) -> ChunkSpec:
    dtype = np.dtype(dtype)
    return ChunkSpec(shape, dtype, np.zeros((), dtype))


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


# -- configuration and registration ------------------------------------------------------------


@pytest.mark.parametrize("cls", [VLenUTF8Codec, VLenBytesCodec])
def test_configuration(cls: Any) -> None:
    for config in (None, {}):
        codec = cls.from_config(config, path="codecs[0]")
        assert codec == cls()
        assert codec.to_dict() == {"name": cls.name, "configuration": {}}
    with pytest.raises(MetadataError, match=r"codecs\[0\]\.configuration\.level"):
        cls.from_config({"level": 1}, path="codecs[0]")
    assert registry.get(cls.name) is cls
    assert cls.kind == "array->bytes"


def test_validate_data_types() -> None:
    VLenUTF8Codec().validate(spec((2,)), path="codecs[0]")
    VLenUTF8Codec().validate(spec((2,), "U3"), path="codecs[0]")
    VLenBytesCodec().validate(spec((2,)), path="codecs[0]")
    with pytest.raises(MetadataError, match=r"codecs\[0\]: serializes strings"):
        VLenUTF8Codec().validate(spec((2,), "int32"), path="codecs[0]")
    with pytest.raises(MetadataError, match=r"codecs\[0\]: serializes byte strings"):
        VLenBytesCodec().validate(spec((2,), "float64"), path="codecs[0]")


def test_pipeline_from_names() -> None:
    p = CodecPipeline.from_codecs([{"name": "vlen-utf8", "configuration": {}},
                                   {"name": "zstd"}], dtype=object)
    a = objects(["a", "bb", "", "dé"], (2, 2))
    out = p.decode(p.encode(a), (2, 2))
    assert out.dtype == object and out.tolist() == a.tolist()


# -- round trips and byte equality with numcodecs ------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(shape=shapes, data=st.data())
def test_utf8_round_trip_equals_numcodecs(shape: tuple[int, ...], data: Any) -> None:
    n = int(np.prod(shape))
    values = data.draw(st.lists(st.text(max_size=30), min_size=n, max_size=n))
    a = objects(values, shape)
    codec, s = VLenUTF8Codec(), spec(shape)
    encoded = codec.encode(a, s)
    assert encoded == bytes(VLenUTF8().encode(a))  # numcodecs flattens in C order too
    out = codec.decode(encoded, s)
    assert out.shape == shape and out.dtype == object and out.tolist() == a.tolist()
    # Fortran-ordered chunks are written in C order all the same
    assert codec.encode(np.asfortranarray(a), s) == encoded


@settings(max_examples=100, deadline=None)
@given(shape=shapes, data=st.data())
def test_bytes_round_trip_equals_numcodecs(shape: tuple[int, ...], data: Any) -> None:
    n = int(np.prod(shape))
    values = data.draw(st.lists(st.binary(max_size=30), min_size=n, max_size=n))
    a = objects(values, shape)
    codec, s = VLenBytesCodec(), spec(shape)
    encoded = codec.encode(a, s)
    assert encoded == bytes(VLenBytes().encode(a))
    out = codec.decode(encoded, s)
    assert out.shape == shape and out.tolist() == a.tolist()


@needs_string_dtype
def test_string_dtype_in_and_out() -> None:
    assert StringDType is not None
    values = ["a", "héllo", "", "\x00", "😀" * 40, "x" * 1000]
    strings = np.array(values, dtype=StringDType()).reshape(2, 3)
    s = spec((2, 3), StringDType())
    codec = VLenUTF8Codec()
    encoded = codec.encode(strings, s)
    assert encoded == bytes(VLenUTF8().encode(objects(values)))
    out = codec.decode(encoded, s)
    assert isinstance(out.dtype, StringDType) and out.shape == (2, 3)
    np.testing.assert_array_equal(out, strings)
    # an object spec decodes the same bytes to str objects
    assert codec.decode(encoded, spec((2, 3))).tolist() == strings.tolist()


@needs_string_dtype
def test_string_dtype_through_objects_without_the_kernel_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # where the kernel cannot reach numpy's StringDType functions, the codec converts
    import zarr3c.codecs.vlen as module

    assert StringDType is not None
    monkeypatch.setattr(module, "_STRING_DTYPE_KERNEL", False)
    strings = np.array(["a", "é", ""], dtype=StringDType())
    s = spec((3,), StringDType())
    encoded = VLenUTF8Codec().encode(strings, s)
    assert encoded == bytes(VLenUTF8().encode(strings))
    out = VLenUTF8Codec().decode(encoded, s)
    assert isinstance(out.dtype, StringDType) and out.tolist() == ["a", "é", ""]


def test_fixed_width_inputs() -> None:
    u = np.array(["ab", "c"], dtype="U2")
    assert VLenUTF8Codec().encode(u, spec((2,), "U2")) == bytes(VLenUTF8().encode(u))
    b = np.array([b"ab", b"c"], dtype="S2")
    assert VLenBytesCodec().encode(b, spec((2,), "S2")) == bytes(VLenBytes().encode(b))


def test_none_items_are_written_empty() -> None:
    a = objects(["a", None])
    encoded = VLenUTF8Codec().encode(a, spec((2,)))
    assert encoded == bytes(VLenUTF8().encode(a))
    assert VLenUTF8Codec().decode(encoded, spec((2,))).tolist() == ["a", ""]


# -- bad chunks and bad items --------------------------------------------------------------------


@pytest.mark.parametrize(("data", "message"), [
    (b"", "too short for the 4-byte item count"),
    (b"\x01\x00", "too short"),
    (b"\x03\x00\x00\x00", "stored item count is 3, expected 2"),
    (b"\x02\x00\x00\x00\x04\x00\x00\x00abcd", "length prefix runs past the end"),
    (b"\x02\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00ab", "item 1's length"),
    (b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00!", "1 bytes follow the last item"),
    (b"\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\xff", "item 1 is not valid UTF-8"),
])  # fmt: skip
def test_bad_chunks(data: bytes, message: str) -> None:
    dtypes: list[Any] = [object]
    if kernel.string_dtype_supported():
        dtypes.append(StringDType())
    for dtype in dtypes:
        with pytest.raises(ChunkDecodeError, match=f"vlen-utf8: .*{message}"):
            VLenUTF8Codec().decode(data, spec((2,), dtype))
    if "UTF-8" not in message:
        with pytest.raises(ChunkDecodeError, match=f"vlen-bytes: .*{message}"):
            VLenBytesCodec().decode(data, spec((2,)))


def test_bad_chunk_through_the_pipeline_names_the_key() -> None:
    p = CodecPipeline.from_codecs([{"name": "vlen-bytes"}], dtype=object)
    with pytest.raises(ChunkDecodeError, match="chunk 'c/0': vlen-bytes: the stored item count") as info:
        p.decode(b"\xff\xff\xff\xff", (3,), key="c/0")
    assert info.value.key == "c/0"


def test_huge_claimed_count_is_refused() -> None:
    with pytest.raises(ChunkDecodeError, match="length prefixes"):
        VLenBytesCodec().decode(b"\xff\xff\xff\xff", spec((2**32 - 1,)))


def test_wrong_item_types() -> None:
    with pytest.raises(ValueConversionError, match="vlen-utf8: item 1 has type int") as info:
        VLenUTF8Codec().encode(objects(["a", 3]), spec((2,)))
    assert isinstance(info.value, TypeError)
    with pytest.raises(ValueConversionError, match="vlen-bytes: item 0 has type str"):
        VLenBytesCodec().encode(objects(["a"]), spec((1,)))
    with pytest.raises(CodecError, match="cannot be encoded as UTF-8"):
        VLenUTF8Codec().encode(objects(["\udc80"]), spec((1,)))
    with pytest.raises(CodecError, match="does not match the chunk shape"):
        VLenUTF8Codec().encode(objects(["a"]), spec((2,)))


# -- chunks zarr-python writes --------------------------------------------------------------------


def zarr_chunk(values: np.ndarray, dtype: Any) -> tuple[bytes, list[Any]]:
    zarr = pytest.importorskip("zarr")
    store: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the string data types warn that they are unstable
        z = zarr.create_array(store, shape=values.shape, chunks=values.shape, dtype=dtype,
                              compressors=None, zarr_format=3)
        z[...] = values
        codecs = z.metadata.to_dict()["codecs"]
    return store["c/" + "/".join("0" for _ in values.shape)].to_bytes(), codecs


def test_reads_and_writes_zarr_python_string_chunks() -> None:
    values = ["a", "héllo", "", "\x00x", "😀", "long" * 100]
    stored, codecs = zarr_chunk(np.array(values).reshape(2, 3), str)
    assert codecs[0]["name"] == "vlen-utf8"
    codec = registry.get(codecs[0]["name"]).from_config(codecs[0].get("configuration"),
                                                        path="codecs[0]")
    out = codec.decode(stored, spec((2, 3)))
    assert out.tolist() == np.array(values).reshape(2, 3).tolist()
    assert codec.encode(out, spec((2, 3))) == stored
    if kernel.string_dtype_supported():
        # what zarr-python returns for `string` arrays under numpy 2
        out = codec.decode(stored, spec((2, 3), StringDType()))
        assert isinstance(out.dtype, StringDType)


def test_reads_zarr_python_bytes_chunks() -> None:
    zarr = pytest.importorskip("zarr")
    try:
        from zarr.core.dtype import VariableLengthBytes
    except ImportError:
        pytest.skip("this zarr-python has no variable_length_bytes data type")
    values = objects([b"", b"\x00\xff", b"abc"])
    stored, codecs = zarr_chunk(values, VariableLengthBytes())
    assert codecs[0]["name"] == "vlen-bytes" and zarr is not None
    codec = VLenBytesCodec.from_config(codecs[0].get("configuration"), path="codecs[0]")
    assert codec.decode(stored, spec((3,))).tolist() == values.tolist()
    assert codec.encode(values, spec((3,))) == stored
