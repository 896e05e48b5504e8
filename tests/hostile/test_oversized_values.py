"""Issue 35, point 3: a stored value far larger than any valid encoding of its chunk is
refused from its size (a file's size, a zip entry's size in the central directory, the
length of a bounded request) before it is read, on every path that reads chunks whole."""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import ChunkDecodeError, OversizedValueError

Probe = Callable[..., Any]

#: A chunk file of 2 GiB (sparse: no disk, no memory) where a 4 KiB chunk belongs.
_SPARSE_CHUNK = """
import os, zarr3c
a = zarr3c.create_array({path!r}, shape=(8192,), chunks=(4096,), dtype="uint8",
                        compressors={compressors})
a[:] = 1
with open(os.path.join({path!r}, "c", "0"), "r+b") as f:
    f.truncate(2 << 30)
{action}
"""


@pytest.mark.parametrize("compressors", [
    "None", "'zstd'", "{'name': 'gzip', 'configuration': {'level': 1}}"])
@pytest.mark.parametrize("action", [
    "result = a[:]",                    # whole chunks: the native pipeline, then Python
    "result = a[5]",                    # one element
    "result = a[[1, 4000, 5000]]",      # points
    "a[3] = 7",                         # a partial write reads the chunk first
])
def test_an_oversized_chunk_file_is_refused_from_its_size(
        probe: Probe, tmp_path: Path, compressors: str, action: str) -> None:
    outcome = probe(_SPARSE_CHUNK.format(path=str(tmp_path / "a.zarr"),
                                         compressors=compressors, action=action))
    if compressors == "None" and action == "result = a[5]":
        # An uncompressed box is read in place, after one look at the file's size.
        assert outcome.error == "ChunkDecodeError", outcome
        assert "c/0" in outcome.message and "not the 4096 bytes" in outcome.message
    else:
        assert outcome.error == "OversizedValueError", outcome
        assert "c/0" in outcome.message and "2,147,483,648 bytes" in outcome.message
    assert outcome.peak_mib < 300, outcome


def test_a_chunk_of_the_largest_valid_size_still_reads(tmp_path: Path) -> None:
    # Incompressible data: the encoding is larger than the chunk, and must still be read.
    a = zarr3c.create_array(tmp_path / "a.zarr", shape=(1 << 16,), chunks=(1 << 16,),
                            dtype="uint8", compressors="zstd")
    data = np.random.default_rng(0).integers(0, 256, 1 << 16, dtype=np.uint8)
    a[:] = data
    assert a.store.getsize("c/0") > data.nbytes
    np.testing.assert_array_equal(a[:], data)


def test_a_limit_comes_from_the_codec_chain(tmp_path: Path) -> None:
    a = zarr3c.create_array(tmp_path / "a.zarr", shape=(100,), chunks=(10,), dtype="int32",
                            compressors=None)
    a[:] = 1
    a.store.set("c/3", bytes(41))  # one byte too many: read, then refused by the decoder
    with pytest.raises(ChunkDecodeError, match="expected 40 bytes"):
        a[:]
    a.store.set("c/3", bytes(1 << 20))  # far too many: refused from the file's size
    with pytest.raises(OversizedValueError) as info:
        a[:]
    assert info.value.key == "c/3" and info.value.size == 1 << 20 and info.value.limit == 40
    assert isinstance(info.value, ChunkDecodeError)


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_an_inflated_zip_entry_is_refused_from_the_central_directory(
        probe: Probe, tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    a = zarr3c.create_array(zarr3c.ZipStore(path, mode="w"), shape=(8192,), chunks=(4096,),
                            dtype="uint8", compressors=None)
    a[:] = 1
    a.store.close()
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        # 64 MiB of zeros deflate to 64 KiB; zarr3c must not inflate them for a 4 KiB chunk.
        zf.writestr("c/0", bytes(64 << 20))
    code = f"""
import warnings, zarr3c
warnings.simplefilter("ignore")  # (the duplicate name zipfile warned about when writing)
a = zarr3c.open_array(zarr3c.ZipStore({str(path)!r}, mode="r"))
result = a[:]
"""
    outcome = probe(code)
    assert outcome.error == "OversizedValueError", outcome
    assert "c/0" in outcome.message and outcome.peak_mib < 200, outcome


def test_a_zip_directory_claiming_a_huge_entry_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    a = zarr3c.create_array(zarr3c.ZipStore(path, mode="w"), shape=(16,), chunks=(8,),
                            dtype="uint8", compressors=None)
    a[:] = 1
    a.store.close()
    raw = bytearray(path.read_bytes())
    # Claim 2 GiB for c/0 in its central directory entry (uncompressed size at +24).
    at = raw.index(b"PK\x01\x02")
    while raw[at + 46:at + 49] != b"c/0":
        at = raw.index(b"PK\x01\x02", at + 4)
    raw[at + 24:at + 28] = struct.pack("<I", 2 << 30)
    path.write_bytes(bytes(raw))
    b = zarr3c.open_array(zarr3c.ZipStore(path, mode="r"))
    with pytest.raises(OversizedValueError) as info:
        b[:]
    assert info.value.key == "c/0" and info.value.size == 2 << 30


def test_a_remote_value_is_read_no_further_than_the_limit() -> None:
    pytest.importorskip("fsspec")
    store = zarr3c.FsspecStore.from_url("memory://zarr3c-tests/oversized.zarr")
    try:
        a = zarr3c.create_array(store, shape=(64,), chunks=(32,), dtype="uint8",
                                compressors=None, overwrite=True)
        a[:] = 3
        store.set("c/1", bytes(1 << 20))
        assert store.get_at_most("c/0", 32) == bytes([3]) * 32
        with pytest.raises(OversizedValueError) as info:
            a[:]
        # Only limit + 1 bytes were asked for: the error says "or more".
        assert info.value.key == "c/1" and info.value.size == 33 and "or more" in str(
            info.value)
    finally:
        store.erase_prefix("")


@pytest.mark.parametrize("make", ["memory", "local"])
def test_get_many_at_most_reports_the_first_oversized_key(tmp_path: Path, make: str) -> None:
    store: zarr3c.Store = (zarr3c.MemoryStore() if make == "memory"
                           else zarr3c.LocalStore(tmp_path / "s"))
    store.set("k/0", b"abc")
    store.set("k/1", b"abcdef")
    assert store.get_many_at_most(["k/0", "k/2"], 3) == [b"abc", None]
    with pytest.raises(OversizedValueError) as info:
        store.get_many_at_most(["k/0", "k/1"], 3)
    assert info.value.key == "k/1" and info.value.size == 6


def test_an_inner_chunk_claiming_more_than_any_encoding_is_refused(tmp_path: Path) -> None:
    a = zarr3c.create_array(tmp_path / "a.zarr", shape=(64,), chunks=(8,), shards=(32,),
                            dtype="uint8", compressors=None)
    a[:] = np.arange(64, dtype=np.uint8)
    shard = tmp_path / "a.zarr" / "c" / "0"
    raw = bytearray(shard.read_bytes())
    # Grow the shard (sparse) and point inner chunk 1 at 1 MiB of it: inside the shard,
    # overlapping nothing, but far more than an 8-byte inner chunk's encoding.
    index_at = len(raw) - (4 * 16 + 4)
    body = bytes(raw[:index_at])
    entries = np.frombuffer(bytes(raw[index_at:index_at + 64]), "<u8").reshape(4, 2).copy()
    entries[1] = (len(body), 1 << 20)
    import google_crc32c  # noqa: PLC0415 - the index's checksum, as zarr3c writes it
    index = entries.tobytes()
    new = body + bytes(1 << 20) + index + struct.pack("<I", google_crc32c.value(index))
    shard.write_bytes(new)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(1,\)"):
        a[:]
