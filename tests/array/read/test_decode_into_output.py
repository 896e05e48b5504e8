"""Chunks wanted whole as one C-ordered run of the output are decoded straight into it
(``CodecPipeline.decode_into``: native elements under one zstd or blosc compressor), never
through an intermediate buffer: same values as numpy, same fill for missing chunks, and the
same errors (naming the key) as the ordinary decode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c import _buffers
from zarr3c.codecs.blosc import BloscCodec
from zarr3c.codecs.zstd import ZstdCodec
from zarr3c.errors import ChunkDecodeError

COMPRESSORS = {
    "zstd": [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
    "blosc": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                  "shuffle": "shuffle", "typesize": 4,
                                                  "blocksize": 0}}],
}
CODECS = {"zstd": ZstdCodec, "blosc": BloscCodec}


#: Rectilinear rows: chunk c holds rows EDGES_STARTS[c]:EDGES_STARTS[c + 1].
EDGES = [4, 12, 8, 16]
EDGES_STARTS = np.cumsum([0, *EDGES])


def _rows(shape: tuple[int, ...] = (40, 6, 5), rows: int = 4, dtype: str = "int32",
          order: str = "C", store: zarr3c.Store | None = None, compressor: str = "zstd",
          rectilinear: bool = False) -> tuple[zarr3c.Array, np.ndarray]:
    """An array chunked by whole rows (each chunk a C-ordered run of a[...]): ``rows`` each,
    or ``EDGES`` when rectilinear; every third chunk not stored (reads as the fill value)."""
    chunks: Any = ([EDGES] + [[n] for n in shape[1:]]) if rectilinear else (rows, *shape[1:])
    a = zarr3c.create_array(store or zarr3c.MemoryStore(), shape=shape, dtype=dtype,
                            chunks=chunks, compressors=COMPRESSORS[compressor],
                            fill_value=7, order=order)
    data = (np.arange(np.prod(shape)) * 7919 % 1000).astype(dtype).reshape(shape)
    a[...] = data
    starts = EDGES_STARTS if rectilinear else np.arange(0, shape[0] + rows, rows)
    for c in range(0, len(starts) - 1, 3):
        a._store.erase(a.chunk_key((c,) + (0,) * (len(shape) - 1)))
        data[starts[c]:starts[c + 1]] = 7
    return a, data


def _spy(monkeypatch: pytest.MonkeyPatch, compressor: str) -> list[bool]:
    """The results of the codec's ``decode_into`` calls into an output (those into the
    calling thread's scratch memory, for chunks copied out afterwards, are left out)."""
    calls: list[bool] = []
    cls = CODECS[compressor]
    real = cls.decode_into

    def spy(self: object, data: object, out: np.ndarray) -> bool:
        done = real(self, data, out)  # type: ignore[arg-type]
        scratch = getattr(_buffers._scratch, "decoded", None)
        if scratch is None or not np.shares_memory(out, scratch):
            calls.append(done)
        return done

    monkeypatch.setattr(cls, "decode_into", spy)
    return calls


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["int32", "uint8", "float64", "<u2"]), st.sampled_from(["C", "F"]),
       st.integers(0, 41), st.integers(0, 41), st.booleans(), st.sampled_from(list(CODECS)),
       st.booleans())
def test_reads_equal_numpy(dtype: str, order: str, lo: int, hi: int, full_width: bool,
                           compressor: str, rectilinear: bool) -> None:
    a, data = _rows(dtype=dtype, order=order, compressor=compressor, rectilinear=rectilinear)
    key = (slice(lo, hi),) if full_width else (slice(lo, hi), slice(1, 5))
    got = a[key]
    np.testing.assert_array_equal(got, data[key])
    assert got.flags.f_contiguous if (order == "F" and got.ndim > 1 and got.size > 1) else True


@pytest.mark.parametrize("compressor", list(CODECS))
@pytest.mark.usefixtures("python_path")
def test_whole_chunks_are_decoded_into_the_output(monkeypatch: pytest.MonkeyPatch,
                                                  compressor: str) -> None:
    a, data = _rows(compressor=compressor)
    calls = _spy(monkeypatch, compressor)
    np.testing.assert_array_equal(a[...], data)
    assert calls == [True] * 6  # 10 chunks, 4 not stored
    calls.clear()
    np.testing.assert_array_equal(a[6:30], data[6:30])  # chunks 2..6 whole, 1 and 7 partly
    assert calls == [True] * 3  # 2, 4 and 5 (3 and 6 are not stored)
    calls.clear()
    np.testing.assert_array_equal(a[:, 1:], data[:, 1:])  # no chunk is one run of the output
    assert calls == []


@pytest.mark.parametrize("compressor", list(CODECS))
def test_rectilinear_whole_chunks_are_decoded_into_the_output(
        monkeypatch: pytest.MonkeyPatch, compressor: str) -> None:
    a, data = _rows(compressor=compressor, rectilinear=True)
    calls = _spy(monkeypatch, compressor)
    np.testing.assert_array_equal(a[...], data)
    assert calls == [True] * 2  # chunks 1 and 2 (0 and 3 are not stored)
    calls.clear()
    np.testing.assert_array_equal(a[4:24, :, :], data[4:24])  # chunks 1 and 2 whole
    assert calls == [True] * 2
    calls.clear()
    np.testing.assert_array_equal(a[5:24], data[5:24])  # chunk 1 partly
    assert calls == [True]
    calls.clear()
    np.testing.assert_array_equal(a[4:24, ::-1], data[4:24, ::-1])  # reversed: not a run
    assert calls == []


@pytest.mark.parametrize("compressor", list(CODECS))
def test_a_chunk_that_cannot_be_decoded_into_is_decoded_as_ever(
        monkeypatch: pytest.MonkeyPatch, compressor: str) -> None:
    a, data = _rows(compressor=compressor)
    monkeypatch.setattr(CODECS[compressor], "decode_into", lambda self, data, out: False)
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(("compressor", "damage"), [
    ("zstd", "truncated"), ("zstd", "corrupt"), ("zstd", "other size"), ("zstd", "garbage"),
    # (blosc has no checksum: a corrupt payload may decode to anything, as numcodecs does)
    ("blosc", "truncated"), ("blosc", "other size"), ("blosc", "garbage"),
])
def test_a_bad_chunk_is_an_error_naming_its_key(tmp_path, compressor: str, damage: str) -> None:
    a, _ = _rows(store=zarr3c.LocalStore(tmp_path), compressor=compressor)
    key = a.chunk_key((1, 0, 0))
    raw = bytes(a._store.get(key))
    if damage == "truncated":
        bad = raw[:-5]
    elif damage == "corrupt":
        bad = raw[:12] + bytes(b ^ 0x5A for b in raw[12:])
    elif damage == "other size":  # a valid frame of one element less
        codec = a._pipeline.bytes_bytes[0]
        bad = bytes(codec.encode(np.zeros(4 * 6 * 5 - 1, "int32")))
    else:
        bad = b"\0" * len(raw)
    a._store.set(key, bad)
    with pytest.raises(ChunkDecodeError, match=key):
        a[...]
    with pytest.raises(ChunkDecodeError, match=key):
        a[4:8]
