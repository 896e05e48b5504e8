"""Corrupt chunks are errors naming their key, never a numpy error, a wrong result or a crash.

With ``crc32c`` in the chain every single-bit flip of a stored chunk or shard index is
detected (swept over every bit of small chunks); without a checksum, truncated and malformed
chunks (every truncation length, garbage bytes, broken shard indexes) still raise a
:class:`~zarr3c.errors.ChunkDecodeError` naming the key.  Single-bit flips without a checksum
cannot always be detected; there the sweep checks that the outcome is an error naming the key
or an array of the right shape and dtype, never anything else.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import ChecksumError, ChunkDecodeError

# Every test on both read paths: the native pipeline and the Python path.
pytestmark = pytest.mark.usefixtures("read_path")

KEY = "a/c/0"
DATA = (np.arange(1, 17, dtype="int32") * 12345).astype("int32")
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
COMPRESSORS: dict[str, Any] = {
    "bytes-only": None,
    "zstd": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
    "gzip": {"name": "gzip", "configuration": {"level": 5}},
    "blosc": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                 "shuffle": "shuffle", "typesize": 4,
                                                 "blocksize": 0}},
}
# Reads through every path: the whole array, one element, a region (partial shard reads).
SELECTIONS: list[Any] = [Ellipsis, 3, slice(4, 8)]


def make_array(codecs: list[Any], store: zarr3c.Store | None = None
               ) -> tuple[zarr3c.Store, zarr3c.Array, bytes]:
    store = zarr3c.MemoryStore() if store is None else store
    a = zarr3c.create_array(store, "a", shape=(16,), dtype="int32", chunks=(16,),
                            codecs=codecs, fill_value=0)
    a[...] = DATA
    stored = store.get(KEY)
    assert stored is not None
    return store, a, bytes(stored)


def shard_codecs(inner: list[Any], index: list[Any], location: str = "end") -> list[Any]:
    return [{"name": "sharding_indexed",
             "configuration": {"chunk_shape": [4], "codecs": inner, "index_codecs": index,
                               "index_location": location}}]


def flips(data: bytes, bits: range | None = None) -> Any:
    """Every copy of ``data`` with one bit flipped (bit numbers from ``bits``, default all)."""
    for bit in bits if bits is not None else range(len(data) * 8):
        out = bytearray(data)
        out[bit // 8] ^= 1 << (bit % 8)
        yield bit, bytes(out)


def assert_detected(store: zarr3c.Store, a: zarr3c.Array, bad: bytes,
                    error: type[Exception] = ChunkDecodeError, what: str = "") -> None:
    store.set(KEY, bad)
    for sel in SELECTIONS if error is not ChecksumError else [Ellipsis]:
        with pytest.raises(error) as excinfo:
            a[sel]
        assert repr(KEY) in str(excinfo.value), what
        assert getattr(excinfo.value, "key", KEY) == KEY, what


def outcome(a: zarr3c.Array, sel: Any) -> str:
    """"error" (a ChunkDecodeError naming the key) or "value" (a well-formed result);
    anything else fails the test."""
    try:
        result = a[sel]
    except ChunkDecodeError as exc:
        assert repr(KEY) in str(exc)
        return "error"
    expected = DATA[sel]
    assert np.shape(result) == np.shape(expected)
    assert np.asarray(result).dtype == DATA.dtype
    return "value"


# -- with crc32c: every bit flip is detected -----------------------------------------------------


@pytest.mark.parametrize("compressor", ["bytes-only", "zstd"])
def test_every_bit_flip_in_a_checksummed_chunk_is_detected(compressor: str) -> None:
    chain = [BYTES] + ([COMPRESSORS[compressor]] if COMPRESSORS[compressor] else []) + [CRC]
    store, a, good = make_array(chain)
    for bit, bad in flips(good):
        store.set(KEY, bad)
        with pytest.raises(ChecksumError) as excinfo:
            a[...]
        assert excinfo.value.key == KEY, bit
        assert repr(KEY) in str(excinfo.value)
    store.set(KEY, good)
    np.testing.assert_array_equal(a[...], DATA)


@pytest.mark.parametrize("location", ["end", "start"])
def test_every_bit_flip_in_a_checksummed_shard_index_is_detected(location: str) -> None:
    store, a, good = make_array(shard_codecs([BYTES], [BYTES, CRC], location))
    index_nbytes = 4 * 16 + 4
    start = len(good) - index_nbytes if location == "end" else 0
    for bit, bad in flips(good, range(start * 8, (start + index_nbytes) * 8)):
        store.set(KEY, bad)
        for sel in SELECTIONS:  # whole-shard decode and partial reads of the index
            with pytest.raises(ChecksumError) as excinfo:
                a[sel]
            assert excinfo.value.key == KEY and repr(KEY) in str(excinfo.value), (bit, sel)


def test_every_bit_flip_in_a_fully_checksummed_shard_is_detected() -> None:
    # crc32c on the inner chunks and on the index: no bit of the shard goes unnoticed.
    store, a, good = make_array(shard_codecs([BYTES, CRC], [BYTES, CRC]))
    for bit, bad in flips(good):
        store.set(KEY, bad)
        with pytest.raises(ChecksumError) as excinfo:
            a[...]
        assert excinfo.value.key == KEY, bit


def test_a_write_into_a_corrupt_chunk_fails_and_keeps_it() -> None:
    store, a, good = make_array([BYTES, CRC])
    bad = bytes([good[0] ^ 1]) + good[1:]
    store.set(KEY, bad)
    with pytest.raises(ChecksumError, match="'a/c/0'"):
        a[3] = 7  # a read-modify-write must not build on (or hide) the corruption
    assert store.get(KEY) == bad


def test_a_write_into_a_shard_with_a_corrupt_index_fails_and_keeps_it() -> None:
    store, a, good = make_array(shard_codecs([BYTES], [BYTES, CRC]))
    bad = good[:-1] + bytes([good[-1] ^ 0x80])
    store.set(KEY, bad)
    with pytest.raises(ChecksumError, match="'a/c/0'"):
        a[3] = 7
    assert store.get(KEY) == bad


# -- without a checksum: truncated and malformed chunks --------------------------------------------


def _store(kind: str, tmp_path: Any) -> zarr3c.Store:
    # (LocalStore reads chunks and shards into scratch memory: other code paths)
    return zarr3c.MemoryStore() if kind == "memory" else zarr3c.LocalStore(tmp_path)


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("compressor", list(COMPRESSORS))
def test_every_truncation_of_a_chunk_is_an_error_naming_the_key(compressor: str, kind: str,
                                                                 tmp_path: Any) -> None:
    chain = [BYTES] + ([COMPRESSORS[compressor]] if COMPRESSORS[compressor] else [])
    store, a, good = make_array(chain, _store(kind, tmp_path))
    for n in range(len(good)):
        assert_detected(store, a, good[:n], what=f"truncated to {n} bytes")


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("location", ["end", "start"])
def test_every_truncation_of_a_shard_is_an_error_or_the_intact_part(location: str, kind: str,
                                                                    tmp_path: Any) -> None:
    store, a, good = make_array(shard_codecs([BYTES], [BYTES], location),
                                _store(kind, tmp_path))
    for n in range(len(good)):
        store.set(KEY, good[:n])
        with pytest.raises(ChunkDecodeError, match="'a/c/0'"):
            a[...]
        for sel in SELECTIONS[1:]:
            # A partial read that needs only bytes still present may succeed -- with the
            # right values.
            try:
                result = a[sel]
            except ChunkDecodeError as exc:
                assert repr(KEY) in str(exc)
            else:
                np.testing.assert_array_equal(result, DATA[sel], err_msg=f"{n} bytes, {sel}")


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("compressor", ["zstd", "gzip", "blosc", "bytes-only"])
def test_garbage_bytes_are_an_error_naming_the_key(compressor: str, kind: str,
                                                   tmp_path: Any) -> None:
    chain = [BYTES] + ([COMPRESSORS[compressor]] if COMPRESSORS[compressor] else [])
    store, a, good = make_array(chain, _store(kind, tmp_path))
    rng = np.random.default_rng(9)
    # bytes-only: any 64 bytes are a valid chunk; every other length is not.  20,000 bytes
    # are more than a chunk's encoding is read into scratch memory for.
    lengths = [1, 5, 16, 63, 65, 100, 1000, 20_000] if compressor == "bytes-only" else [
        1, 5, 16, 64, 100, 1000, 20_000]
    for n in lengths:
        for _ in range(10):
            garbage = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
            assert_detected(store, a, garbage, what=f"{n} garbage bytes")
    if compressor != "bytes-only":  # a valid header followed by garbage
        assert_detected(store, a, good[:8] + rng.integers(0, 256, 64, dtype=np.uint8).tobytes())
    assert_detected(store, a, b"", what="empty value")


@pytest.mark.parametrize("compressor", ["zstd", "gzip", "blosc"])
def test_bit_flips_without_a_checksum_never_escape_as_other_errors(compressor: str) -> None:
    store, a, good = make_array([BYTES, COMPRESSORS[compressor]])
    seen = set()
    for _bit, bad in flips(good):
        store.set(KEY, bad)
        seen.add(outcome(a, Ellipsis))
    assert "error" in seen  # header bits at least are always caught


@pytest.mark.parametrize("declared", [2**40, 2**62], ids=["1TiB", "4EiB"])
def test_zstd_frame_declaring_a_huge_size_is_an_error(declared: int) -> None:
    store, a, good = make_array([BYTES, COMPRESSORS["zstd"]])
    # frame header: magic, descriptor (8-byte content size, single segment), content size
    header = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", declared)
    assert_detected(store, a, header + good[6:])


def _index_cases(n_data: int) -> dict[str, Callable[[np.ndarray], None]]:
    def setter(i: int, field: int, value: int) -> Callable[[np.ndarray], None]:
        def apply(e: np.ndarray) -> None:
            e[i, field] = value
        return apply

    def overlap(e: np.ndarray) -> None:
        e[1] = e[0]

    return {
        "offset-past-end": setter(1, 0, n_data + 1000),
        "length-past-end": setter(1, 1, 1000),
        "offset-near-2**64": setter(1, 0, 2**64 - 2),
        "half-missing-marker": setter(1, 0, 2**64 - 1),
        "short-length": setter(1, 1, 8),
        "zero-length": setter(1, 1, 0),
        "overlapping-entries": overlap,
    }


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("case", list(_index_cases(0)))
def test_malformed_shard_index_entries_are_errors(location: str, case: str) -> None:
    store, a, good = make_array(shard_codecs([BYTES], [BYTES], location))
    start = len(good) - 64 if location == "end" else 0
    entries = np.frombuffer(good[start:start + 64], "<u8").reshape(4, 2).copy()
    _index_cases(len(good))[case](entries)
    bad = bytearray(good)
    bad[start:start + 64] = entries.astype("<u8").tobytes()
    store.set(KEY, bytes(bad))
    with pytest.raises(ChunkDecodeError, match="'a/c/0'"):
        a[...]
    with pytest.raises(ChunkDecodeError, match="'a/c/0'"):
        a[4:8]  # reads inner chunk 1 (the bad entry) through the partial path
    assert outcome(a, 3) in ("error", "value")


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("delta", [-1, 1, -64])
def test_a_shard_of_the_wrong_length_for_its_index(location: str, delta: int) -> None:
    store, a, good = make_array(shard_codecs([BYTES], [BYTES], location))
    bad = good[:delta] if delta < 0 else good + b"\0" * delta
    store.set(KEY, bad)
    for sel in SELECTIONS:
        # Never a wrong value: an error naming the key, or (trailing bytes after the data
        # with the index at the start, which the format allows) the right one.
        try:
            result = a[sel]
        except ChunkDecodeError as exc:
            assert repr(KEY) in str(exc)
        else:
            np.testing.assert_array_equal(result, DATA[sel])
    if location == "end":
        with pytest.raises(ChunkDecodeError, match="'a/c/0'"):
            a[...]
