"""The shard index format on its own (:mod:`zarr3c.codecs.sharding.index`): where the index
sits, its size, its encoding, and the checks the codec's readers rely on."""

from __future__ import annotations

import numpy as np
import pytest

from zarr3c.codecs.crc32c import crc32c
from zarr3c.codecs.pipeline import parse_codecs
from zarr3c.codecs.sharding import ShardingCodec
from zarr3c.codecs.sharding.index import (
    MISSING,
    ShardIndex,
    check_shard_size,
    decode_index,
    encode_index,
    index_layout,
    index_of_shard,
    index_pipeline,
    plain_index,
)
from zarr3c.errors import ChecksumError, ChunkDecodeError, MetadataError

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
GZIP = {"name": "gzip", "configuration": {"level": 1}}


def layout(codecs, cps=(2, 3), location="end"):
    pipeline = index_pipeline(parse_codecs(codecs, path="ic"), path="ic")
    return index_layout(pipeline, cps, location, path="ic")


@pytest.mark.parametrize(("codecs", "location", "nbytes", "request_", "read_whole", "plain"), [
    ([LE, CRC], "end", 6 * 16 + 4, (-100, None), False, (100, True)),
    ([LE, CRC], "start", 6 * 16 + 4, (0, 100), False, (100, False)),
    ([LE], "end", 6 * 16, (-96, None), True, (96, True)),
    ([LE], "start", 6 * 16, (0, 96), False, (96, False)),
    ([BE, CRC], "end", 6 * 16 + 4, (-100, None), False, None),
])
def test_layout_says_where_the_index_is_and_how_big(codecs, location, nbytes, request_,
                                                    read_whole, plain) -> None:
    got = layout(codecs, location=location)
    assert (got.chunks_per_shard, got.shape) == ((2, 3), (2, 3, 2))
    assert (got.nbytes, got.request, got.read_whole) == (nbytes, request_, read_whole)
    assert plain_index(got) == plain
    assert got.plain is not None  # either byte order decodes without the pipeline


def test_an_index_chain_without_a_fixed_size_is_refused() -> None:
    with pytest.raises(MetadataError, match="fixed encoded size"):
        layout([LE, GZIP])


def test_the_layout_agrees_with_the_codec() -> None:
    codec = ShardingCodec.from_config({"chunk_shape": [2, 2], "index_location": "start"},
                                      path="c")
    got = codec._layout((4, 6))
    assert got == codec._layout([4, 6])  # cached per shape
    assert (got.chunks_per_shard, got.nbytes) == (codec.chunks_per_shard((4, 6)),
                                                   codec.index_nbytes((4, 6)))
    assert plain_index(got) == codec.plain_index((4, 6)) == (6 * 16 + 4, False)


def test_flat_is_the_entries_by_c_order_slot() -> None:
    index = ShardIndex.empty((2, 3))
    index.entries[1, 2] = (10, 5)
    flat = index.flat
    assert flat.shape == (6, 2) and np.shares_memory(flat, index.entries)
    assert flat[5].tolist() == [10, 5]
    assert (flat[:5] == MISSING).all()
    assert index.present.tolist() == [[False, False, False], [False, False, True]]
    assert not index.all_missing and ShardIndex.empty((2,)).all_missing


@pytest.mark.parametrize("codecs", [[LE, CRC], [LE], [BE, CRC], [BE]])
def test_encode_then_decode_round_trips(codecs) -> None:
    got = layout(codecs, cps=(3,))
    index = ShardIndex.empty((3,))
    index.entries[0] = (0, 4)
    index.entries[2] = (4, 6)
    raw = encode_index(index, got)
    assert raw.nbytes == got.nbytes
    if codecs[0] is LE:
        assert raw[:48].view("<u8").reshape(3, 2).tolist() == index.entries.tolist()
    for copy in (True, False):
        back = decode_index(raw, got, 10 + got.nbytes, copy=copy)
        assert back.entries.tolist() == index.entries.tolist()


def test_decode_reports_a_bad_checksum_and_a_wrong_size() -> None:
    got = layout([LE, CRC], cps=(1,))
    raw = np.frombuffer(np.array([[0, 4]], "<u8").tobytes() + b"\0\0\0\0", np.uint8)
    with pytest.raises(ChecksumError, match="^sharding_indexed: shard index: "):
        decode_index(raw, got, None, copy=True)
    with pytest.raises(ChunkDecodeError, match="has 19 bytes, expected 20"):
        decode_index(raw[:19], got, None, copy=True)


def test_the_checks_name_the_first_bad_entry() -> None:
    got = layout([LE, CRC], cps=(3,))

    def decode(entries, shard_nbytes):
        raw = np.array(entries, "<u8").tobytes()
        buf = np.frombuffer(raw + crc32c(raw).to_bytes(4, "little"), np.uint8)
        return decode_index(buf, got, shard_nbytes, copy=True)

    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(1,\) .*only one of them"):
        decode([[0, 1], [MISSING, 3], [MISSING, MISSING]], 100)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(2,\) .*outside the shard of 60"):
        decode([[0, 1], [1, 1], [2, 70]], 60)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0,\) .*overlaps the shard index"):
        decode([[50, 10], [0, 1], [1, 1]], 100)
    with pytest.raises(ChunkDecodeError, match=r"inner chunks \(0,\) .* and \(2,\) .* overlap"):
        decode([[0, 4], [10, 1], [2, 4]], 100)
    assert decode([[0, 4], [MISSING, MISSING], [4, 0]], 100).get((1,)) is None


def test_a_shard_shorter_than_its_index_is_reported() -> None:
    got = layout([LE, CRC], cps=(1,))
    with pytest.raises(ChunkDecodeError, match=r"the shard has 19 bytes, shorter than its "
                                               r"index \(20 bytes\)"):
        check_shard_size(19, got)
    shard = np.arange(30, dtype=np.uint8)
    assert index_of_shard(shard, got).tolist() == list(range(10, 30))
    start = layout([LE, CRC], cps=(1,), location="start")
    assert index_of_shard(shard, start).tolist() == list(range(20))
