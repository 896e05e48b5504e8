"""Decoding with a cap (``BytesBytesCodec.decode_bounded``) and the bounds that set the caps
(``max_encoded_size``, ``CodecPipeline.decode_caps`` and ``max_stored_size``).

For every bytes -> bytes codec, over random data and random caps: a cap at least the data's
size gives the data back, a smaller one a ChunkDecodeError naming the codec; random frames
and claimed sizes (a zstd frame without, or with a wrong, content size; blosc's and lz4's
size headers rewritten) give the data or a ChunkDecodeError, never more than the cap; a
decoding stopped at the cap allocates about the cap, not what the data inflates to
(``tracemalloc``); and every encoding fits the codec's ``max_encoded_size``.
"""

from __future__ import annotations

import lzma
import tracemalloc
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import (
    BloscCodec,
    BytesBytesCodec,
    ChunkSpec,
    CodecPipeline,
    Crc32cCodec,
    GzipCodec,
    ZstdCodec,
)
from zarr3c.codecs import zstd as zstd_module
from zarr3c.errors import ChunkDecodeError
from zarr3c.registry import codecs as codec_registry


def _numcodec(name: str, configuration: dict[str, Any]) -> BytesBytesCodec:
    cls = codec_registry.get(f"numcodecs.{name}", path="codec")
    codec = cls.from_config(configuration, path="codec")
    assert isinstance(codec, BytesBytesCodec)
    return codec


#: every bytes -> bytes codec zarr3c has, in a few configurations
CODECS: dict[str, BytesBytesCodec] = {
    "zstd": ZstdCodec(level=1),
    "zstd+checksum": ZstdCodec(level=3, checksum=True),
    "gzip": GzipCodec(level=1),
    "blosc-lz4": BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4),
    "blosc-zstd": BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=1),
    "crc32c": Crc32cCodec(),
    "numcodecs.zlib": _numcodec("zlib", {"level": 1}),
    "numcodecs.gzip": _numcodec("gzip", {"level": 1}),
    "numcodecs.bz2": _numcodec("bz2", {"level": 1}),
    "numcodecs.lzma-xz": _numcodec("lzma", {"preset": 1}),
    "numcodecs.lzma-alone": _numcodec("lzma", {"format": lzma.FORMAT_ALONE, "preset": 1}),
    "numcodecs.lzma-raw": _numcodec("lzma", {"format": lzma.FORMAT_RAW,
                                             "filters": [{"id": lzma.FILTER_LZMA1,
                                                          "preset": 1}]}),
    "numcodecs.lz4": _numcodec("lz4", {"acceleration": 1}),
    "numcodecs.zstd": _numcodec("zstd", {"level": 1}),
    "numcodecs.blosc": _numcodec("blosc", {"cname": "lz4", "clevel": 5, "shuffle": 1}),
    "numcodecs.shuffle": _numcodec("shuffle", {"elementsize": 4}),
    "numcodecs.adler32": _numcodec("adler32", {}),
    "numcodecs.crc32": _numcodec("crc32", {}),
    "numcodecs.crc32c": _numcodec("crc32c", {}),
    "numcodecs.fletcher32": _numcodec("fletcher32", {}),
    "numcodecs.jenkins_lookup3": _numcodec("jenkins_lookup3", {}),
}

#: the decoders that stop early: any other decodes whole (its output is never larger than
#: its input), then checks
STREAMING = [name for name in CODECS if not any(
    word in name for word in ("crc32", "adler32", "fletcher32", "jenkins", "shuffle"))]


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """4 to 20000 bytes, a multiple of 4 (shuffle's element size): random bytes, or a few
    drawn bytes repeated (compressible), or zeros."""
    kind = draw(st.sampled_from(["random", "repeated", "zeros"]))
    n = 4 * draw(st.integers(1, 5000))
    if kind == "random":
        return np.random.default_rng(draw(st.integers(0, 2**32))).bytes(n)
    if kind == "zeros":
        return bytes(n)
    unit = draw(st.binary(min_size=1, max_size=16))
    return (unit * (n // len(unit) + 1))[:n]


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=40, deadline=None)
@given(data=payloads(), slack=st.integers(0, 64), cut=st.integers(1, 20000))
def test_a_cap_at_least_the_size_gives_the_data_and_a_smaller_one_an_error(
        name: str, data: bytes, slack: int, cut: int) -> None:
    codec = CODECS[name]
    encoded = codec.encode(data)
    assert bytes(codec.decode_bounded(encoded, len(data) + slack)) == data
    assert bytes(codec.decode_bounded(encoded, None)) == data
    cap = max(0, len(data) - cut)
    with pytest.raises(ChunkDecodeError, match=rf"^{name.split('-')[0].split('+')[0]}: "):
        codec.decode_bounded(encoded, cap)


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=40, deadline=None)
@given(data=payloads())
def test_every_encoding_fits_the_codec_s_bound(name: str, data: bytes) -> None:
    codec = CODECS[name]
    bound = codec.max_encoded_size(len(data))
    assert bound is not None and len(bytes(codec.encode(data))) <= bound


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=60, deadline=None)
@given(data=payloads(), cap=st.integers(0, 30000), st_data=st.data())
def test_damaged_data_decodes_within_the_cap_or_is_a_chunk_decode_error(
        name: str, data: bytes, cap: int, st_data: st.DataObject) -> None:
    codec = CODECS[name]
    encoded = bytearray(codec.encode(data))
    if st_data.draw(st.booleans(), label="cut") or len(encoded) < 2:
        encoded = encoded[:st_data.draw(st.integers(0, max(0, len(encoded) - 1)))]
    else:
        at = st_data.draw(st.integers(0, len(encoded) - 1))
        encoded[at] ^= st_data.draw(st.integers(1, 255))
    try:
        out = codec.decode_bounded(bytes(encoded), cap)
    except ChunkDecodeError:
        return
    assert len(bytes(out)) <= cap


# -- claimed sizes -----------------------------------------------------------------------------


def _zstd_frame(content: bytes, declared: int | None) -> bytes:
    """``content`` as a zstd frame of raw blocks of up to 128 KiB, declaring ``declared``
    content bytes (None: no content size), as other writers may send it."""
    block = 128 * 1024
    header = b"\x28\xb5\x2f\xfd" + bytes([0x00 if declared is None else 0x80, 0x38])
    if declared is not None:
        header += declared.to_bytes(4, "little")
    pieces = [content[i:i + block] for i in range(0, len(content), block)] or [b""]
    body = b"".join(
        ((len(p) << 3) | int(i == len(pieces) - 1)).to_bytes(3, "little") + p
        for i, p in enumerate(pieces))
    return header + body


@pytest.mark.parametrize("contexts", [True, False])
@pytest.mark.parametrize("name", ["zstd", "numcodecs.zstd"])
@settings(max_examples=80, deadline=None)
@given(data=payloads(), declare=st.booleans(), off=st.integers(-2, 2),
       cap=st.integers(0, 25000))
def test_zstd_frames_with_any_claimed_size(contexts: bool, name: str, data: bytes,
                                           declare: bool, off: int, cap: int) -> None:
    """A frame declaring no size, the right one or a wrong one, through zstd_ctx or (where
    numcodecs' libzstd is out of reach) numcodecs: the data where it is right and fits the
    cap, else a ChunkDecodeError."""
    declared = max(0, len(data) + off) if declare else None
    frame = _zstd_frame(data, declared)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(zstd_module, "_CONTEXTS", contexts and zstd_module._CONTEXTS)
            out = bytes(CODECS[name].decode_bounded(frame, cap))
    except ChunkDecodeError:
        assert cap < len(data) or declared not in (None, len(data))
        return
    assert out == data and len(data) <= cap and declared in (None, len(data))


@pytest.mark.parametrize("name", ["blosc-lz4", "blosc-zstd", "numcodecs.blosc"])
@settings(max_examples=60, deadline=None)
@given(data=payloads(), claimed=st.integers(0, 2**32 - 1), cap=st.integers(0, 25000))
def test_blosc_headers_with_any_claimed_size(name: str, data: bytes, claimed: int,
                                             cap: int) -> None:
    """A header claiming any decoded size: past the cap, refused from it (before c-blosc
    allocates it); else the data where it is right, a ChunkDecodeError where not."""
    codec = CODECS[name]
    frame = bytearray(codec.encode(data))
    frame[4:8] = claimed.to_bytes(4, "little")
    try:
        out = bytes(codec.decode_bounded(bytes(frame), cap))
    except ChunkDecodeError as exc:
        assert claimed > cap or claimed != len(data) or len(data) > cap
        if claimed > cap:
            assert f"claims {claimed} decoded bytes" in str(exc)
        return
    assert out == data and claimed == len(data) <= cap


@settings(max_examples=60, deadline=None)
@given(data=payloads(), claimed=st.integers(0, 2**32 - 1), cap=st.integers(0, 25000))
def test_lz4_prefixes_with_any_claimed_size(data: bytes, claimed: int, cap: int) -> None:
    codec = CODECS["numcodecs.lz4"]
    frame = bytearray(codec.encode(data))
    frame[:4] = claimed.to_bytes(4, "little")
    try:
        out = bytes(codec.decode_bounded(bytes(frame), cap))
    except ChunkDecodeError as exc:
        if claimed > cap:
            assert f"claims {claimed} decoded bytes" in str(exc)
        return
    assert out == data and claimed == len(data) <= cap


# -- memory --------------------------------------------------------------------------------------

#: what the bombs of the memory test inflate to: far more than any cap it draws
_INFLATED = 32 << 20


def _bomb(name: str) -> bytes:
    """32 MiB of zeros encoded by codec ``name`` (zstd: a frame declaring no size)."""
    if "zstd" in name and "blosc" not in name:
        return _zstd_frame(bytes(_INFLATED), None)
    return bytes(CODECS[name].encode(bytes(_INFLATED)))


_BOMBS: dict[str, bytes] = {}

#: the most a decoder's own state takes, beside its output
_DECODER_STATE = 8 << 20


@pytest.mark.parametrize("name", sorted(STREAMING))
@settings(max_examples=10, deadline=None)
@given(cap=st.integers(0, 1 << 20))
def test_a_decoding_stopped_at_the_cap_allocates_about_the_cap(name: str, cap: int) -> None:
    """Traced allocations (Python's and numpy's, liblzma's and libbzip2's) while a 32 MiB
    bomb is refused: at most twice the cap (a stream decoder's output joined once) and the
    decoder's own state (bzip2's 3.6 MiB at most, the dictionary of an lzma preset), never
    the 32 MiB."""
    bomb = _BOMBS.get(name)
    if bomb is None:
        bomb = _BOMBS[name] = _bomb(name)
    codec = CODECS[name]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        with pytest.raises(ChunkDecodeError):
            codec.decode_bounded(bomb, cap)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= 2 * cap + _DECODER_STATE, peak


# -- the pipeline's caps -------------------------------------------------------------------------


def test_the_caps_follow_the_chain_from_the_serializer() -> None:
    pipeline = CodecPipeline.from_codecs(
        [{"name": "bytes", "configuration": {"endian": "little"}}, "zstd", "crc32c",
         {"name": "gzip", "configuration": {"level": 1}}], dtype="<u4")
    zstd, crc, gzip = pipeline.bytes_bytes
    n = 4 * 100
    assert pipeline.decode_caps((10, 10)) == (n, zstd.max_encoded_size(n),
                                              zstd.max_encoded_size(n) + 4)
    assert pipeline.max_stored_size((10, 10)) == gzip.max_encoded_size(
        zstd.max_encoded_size(n) + 4)
    assert CodecPipeline.from_codecs(["bytes", "crc32c"], dtype="uint8").max_stored_size(
        (7,)) == 11
    assert CodecPipeline.from_codecs(["bytes"], dtype="uint8").decode_caps((7,)) == ()


def test_variable_length_elements_have_no_cap() -> None:
    pipeline = CodecPipeline.from_codecs(["vlen-utf8", "zstd", "crc32c"], dtype="T")
    assert pipeline.decode_caps((5,)) == (None, None)
    assert pipeline.max_stored_size((5,)) is None


def test_a_shard_s_bound_is_its_index_and_every_inner_chunk_s() -> None:
    inner = [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}]
    sharding = {"name": "sharding_indexed",
                "configuration": {"chunk_shape": [4, 4], "codecs": inner}}
    pipeline = CodecPipeline.from_codecs([sharding, "zstd"], dtype="uint8")
    per_inner = CodecPipeline.from_codecs(inner, dtype="uint8").max_stored_size((4, 4))
    assert per_inner == GzipCodec().max_encoded_size(16)
    shard = 4 * per_inner + 4 * 16 + 4  # 4 inner chunks; the index: 16 bytes each + crc32c
    spec = ChunkSpec((8, 8), np.dtype("uint8"), np.zeros((), "uint8"))
    assert pipeline.array_bytes.max_encoded_size(spec) == shard
    assert pipeline.decode_caps((8, 8)) == (shard,)
    assert pipeline.max_stored_size((8, 8)) == ZstdCodec().max_encoded_size(shard)
    vlen = {"name": "sharding_indexed",
            "configuration": {"chunk_shape": [2], "codecs": ["vlen-utf8"]}}
    assert CodecPipeline.from_codecs([vlen], dtype="T").max_stored_size((4,)) is None


def test_a_codec_without_a_bound_leaves_the_codecs_after_it_uncapped() -> None:
    class Opaque(BytesBytesCodec):
        """A third-party codec that says nothing of its sizes (and decodes as ``decode``)."""

        name = "opaque-test"

        @classmethod
        def from_config(cls, configuration: Any, *, path: str) -> Opaque:
            return cls()

        def to_dict(self) -> dict[str, Any]:
            return {"name": self.name}

        def encode(self, data: Any) -> bytes:
            return zlib.compress(bytes(data))

        def decode(self, data: Any) -> bytes:
            return zlib.decompress(bytes(data))

    pipeline = CodecPipeline.from_codecs(["bytes", Opaque(), "zstd"], dtype="uint8")
    assert pipeline.decode_caps((100,)) == (100, None)
    assert pipeline.max_stored_size((100,)) is None
    encoded = pipeline.encode(np.arange(100, dtype="uint8"))
    np.testing.assert_array_equal(pipeline.decode(encoded, (100,)), np.arange(100))
    # its default decode_bounded decodes, then checks
    with pytest.raises(ChunkDecodeError, match="^opaque-test: the data decodes to more than"):
        Opaque().decode_bounded(zlib.compress(bytes(200)), 100)
