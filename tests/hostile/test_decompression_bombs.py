"""Decompression bombs (issue 35): every decoder stops at the chunk's size.

Each bomb is a few KiB or MiB of compressed data that inflates to, or whose header claims,
about 2 GiB; it is stored as a chunk (or a shard's inner chunk) of an array whose chunks
decode to far less, and read under the probe's 1 GiB address-space cap, where inflating it
whole fails.  The read must end in the decoder's own ``ChunkDecodeError``, naming the chunk's
key and the codec, in a small fraction of the memory the bomb asks for.  Each bomb is
smaller than the most bytes a stored chunk of its array can have
(``CodecPipeline.max_stored_size``), so that a store's size check lets it through to the
decoder, which is what is tested here.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.crc32c import crc32c

#: What a probe may take at its peak: the interpreter, numpy and zarr3c, the stored bomb
#: and a few chunks, far below the 2 GiB the bombs claim.
PEAK_MIB = 300

_MIB = 1 << 20


def zstd_bomb(nbytes: int) -> bytes:
    """A zstd frame that declares no content size, of RLE blocks of 128 KiB (4 bytes each)
    that inflate to ``nbytes``."""
    block = 128 << 10
    count = nbytes // block
    header = b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x38])  # no content size; window 128 KiB
    rle = ((block << 3) | (1 << 1)).to_bytes(3, "little") + b"\x00"
    last = ((block << 3) | (1 << 1) | 1).to_bytes(3, "little") + b"\x00"
    return header + rle * (count - 1) + last


def deflate_bomb(nbytes: int, wbits: int) -> bytes:
    """A deflate stream (zlib ``wbits``: 15 zlib, 31 gzip) of ``nbytes`` zeros, built from one
    MiB compressed once and repeated (each flushed to a byte boundary, so the repeats are
    byte for byte equal); its trailer is left out (the decoder stops long before)."""
    zeros = bytes(_MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    head = compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH)
    middle = compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return head + middle * (nbytes // _MIB - 1)


def bz2_bomb(nbytes: int) -> bytes:
    """bzip2 streams of 8 MiB of zeros each (about 80 bytes), concatenated to ``nbytes``."""
    return bz2.compress(bytes(8 * _MIB), 9) * (nbytes // (8 * _MIB))


def xz_bomb(nbytes: int) -> bytes:
    """xz streams of 8 MiB of zeros each, concatenated to ``nbytes``."""
    return lzma.compress(bytes(8 * _MIB), preset=0) * (nbytes // (8 * _MIB))


def blosc_bomb(nbytes: int) -> bytes:
    """A 64-byte blosc (v1) frame whose header claims ``nbytes`` decoded bytes."""
    frame = bytearray(64)
    frame[0:4] = bytes([2, 1, 0x11, 1])  # version, lz4 version, flags (shuffle), typesize
    frame[4:8] = nbytes.to_bytes(4, "little")
    frame[8:12] = (1 << 16).to_bytes(4, "little")  # blocksize
    frame[12:16] = len(frame).to_bytes(4, "little")  # the frame's size: the chunk's
    return bytes(frame)


def lz4_bomb(nbytes: int) -> bytes:
    """numcodecs' LZ4 format with a size prefix claiming ``nbytes``."""
    return nbytes.to_bytes(4, "little") + bytes(60)


_BOMB = (1 << 31) - 1  # the size every bomb inflates to or claims: 2 GiB


class Case(NamedTuple):
    """A bomb, the compressor of the array storing it and the chunk size (``uint8``) that
    the stored bomb fits (its ``max_stored_size``) while it decodes to far more."""

    compressor: dict[str, Any]
    chunk: int
    build: Callable[[], bytes]
    #: what the decoder's message says: it decoded to more than the chunk, or a header
    #: claimed more
    says: str


_DECODES = "decodes to more than"
_CLAIMS = "claims 2147483647 decoded bytes"

CASES = {
    "zstd": Case({"name": "zstd", "configuration": {"level": 0, "checksum": False}}, 64 << 10,
                 lambda: zstd_bomb(_BOMB), _DECODES),
    "gzip": Case({"name": "gzip", "configuration": {"level": 5}}, 4 * _MIB,
                 lambda: deflate_bomb(_BOMB, 31), _DECODES),
    "blosc": Case({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}, 1000,
                  lambda: blosc_bomb(_BOMB), _CLAIMS),
    "numcodecs.zstd": Case({"name": "numcodecs.zstd", "configuration": {"level": 1}}, 64 << 10,
                           lambda: zstd_bomb(_BOMB), _DECODES),
    "numcodecs.gzip": Case({"name": "numcodecs.gzip", "configuration": {"level": 5}},
                           4 * _MIB, lambda: deflate_bomb(_BOMB, 31), _DECODES),
    "numcodecs.zlib": Case({"name": "numcodecs.zlib", "configuration": {"level": 5}},
                           4 * _MIB, lambda: deflate_bomb(_BOMB, 15), _DECODES),
    "numcodecs.bz2": Case({"name": "numcodecs.bz2", "configuration": {"level": 5}}, 16 << 10,
                          lambda: bz2_bomb(_BOMB), _DECODES),
    "numcodecs.lzma": Case({"name": "numcodecs.lzma", "configuration": {}}, 512 << 10,
                           lambda: xz_bomb(_BOMB), _DECODES),
    "numcodecs.blosc": Case({"name": "numcodecs.blosc", "configuration": {"cname": "lz4"}},
                            1000, lambda: blosc_bomb(_BOMB), _CLAIMS),
    "numcodecs.lz4": Case({"name": "numcodecs.lz4", "configuration": {}}, 1000,
                          lambda: lz4_bomb(_BOMB), _CLAIMS),
}


def _stored(tmp_path: Path, data: bytes) -> str:
    """``data`` in a file for the probe to store (built here, not in the capped child)."""
    path = tmp_path / "bomb"
    path.write_bytes(data)
    return str(path)


def _check(outcome: Any, key: str, codec: str, says: str) -> None:
    """The decoder's own error, naming the chunk and the codec, within the memory bound."""
    assert outcome.zarr3c_error and outcome.error == "ChunkDecodeError", outcome
    assert f"chunk {key!r}" in outcome.message, outcome.message
    assert f"{codec}: the data {says}" in outcome.message, outcome.message
    assert outcome.peak_mib < PEAK_MIB, outcome


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bomb_in_a_chunk_stops_at_the_chunk_s_size(probe: Callable[..., Any], tmp_path: Path,
                                                     name: str) -> None:
    case = CASES[name]
    bomb = case.build()
    pipeline = CodecPipeline.from_codecs(["bytes", case.compressor], dtype="uint8")
    limit = pipeline.max_stored_size((case.chunk,))
    assert limit is not None and len(bomb) <= limit < _BOMB // 100
    path = _stored(tmp_path, bomb)
    outcome = probe(f"""
        import zarr3c
        a = zarr3c.create_array(zarr3c.MemoryStore(), shape=({2 * case.chunk},),
                                chunks=({case.chunk},), dtype="uint8",
                                compressors={case.compressor!r})
        with open({path!r}, "rb") as f:
            a.store.set("c/1", f.read())
        a[:]
    """)
    _check(outcome, "c/1", name, case.says)


@pytest.mark.parametrize("name", ["numcodecs.zlib", "numcodecs.bz2", "numcodecs.lzma"])
def test_a_bomb_in_a_zarr_v2_chunk(probe: Callable[..., Any], tmp_path: Path,
                                   name: str) -> None:
    case = CASES[name]
    config = {"id": name.removeprefix("numcodecs."), **case.compressor["configuration"]}
    path = _stored(tmp_path, case.build())
    outcome = probe(f"""
        import numcodecs, zarr3c
        a = zarr3c.create_array(zarr3c.MemoryStore(), shape=({case.chunk},),
                                chunks=({case.chunk},), dtype="uint8", zarr_format=2,
                                compressors=numcodecs.get_codec({config!r}))
        with open({path!r}, "rb") as f:
            a.store.set("0", f.read())
        a[:]
    """)
    _check(outcome, "0", name, case.says)


def test_a_partial_write_over_a_bomb_stops_at_the_chunk_s_size(probe: Callable[..., Any],
                                                               tmp_path: Path) -> None:
    """A write of part of a chunk decodes the stored chunk first: bounded the same way."""
    case = CASES["zstd"]
    path = _stored(tmp_path, case.build())
    outcome = probe(f"""
        import zarr3c
        a = zarr3c.create_array(zarr3c.MemoryStore(), shape=({case.chunk},),
                                chunks=({case.chunk},), dtype="uint8")
        with open({path!r}, "rb") as f:
            a.store.set("c/0", f.read())
        a[:10] = 1
    """)
    _check(outcome, "c/0", "zstd", case.says)


def _shard(inner: bytes, chunks_per_shard: int) -> bytes:
    """A shard whose first inner chunk is ``inner`` and the others missing, with its index
    (``bytes`` little-endian + ``crc32c``) at the end."""
    missing = (1 << 64) - 1
    entries = np.full((chunks_per_shard, 2), missing, dtype="<u8")
    entries[0] = (0, len(inner))
    index = entries.tobytes()
    return inner + index + crc32c(index).to_bytes(4, "little")


@pytest.mark.parametrize("name", ["zstd", "gzip"])
@pytest.mark.parametrize("selection", ["[:]", "[:10]"])
def test_a_bomb_in_an_inner_chunk_stops_at_the_inner_chunk_s_size(
        probe: Callable[..., Any], tmp_path: Path, name: str, selection: str) -> None:
    case = CASES[name]
    inner = case.chunk
    path = _stored(tmp_path, _shard(case.build(), 4))
    outcome = probe(f"""
        import zarr3c
        a = zarr3c.create_array(zarr3c.MemoryStore(), shape=({4 * inner},), chunks=({inner},),
                                shards=({4 * inner},), dtype="uint8",
                                compressors={case.compressor!r})
        with open({path!r}, "rb") as f:
            a.store.set("c/0", f.read())
        a{selection}
    """)
    _check(outcome, "c/0", name, case.says)
    assert "inner chunk (0,)" in outcome.message, outcome.message
