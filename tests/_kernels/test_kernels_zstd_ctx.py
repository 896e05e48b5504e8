"""``zarr3c._kernels.zstd_ctx``: zstd decoding with a context kept per thread, through the
libzstd numcodecs bundles.

The reference is ``numcodecs.zstd.decompress``; every decode is checked against it, and
against the bytes compressed.  Bad input (corrupt, truncated, too large for the buffer) must
come back as -1 without a write outside the buffer given.
"""

from __future__ import annotations

import threading

import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import zstd_ctx
from zarr3c.codecs import zstd as zstd_module
from zarr3c.codecs.zstd import ZstdCodec

GUARD = 0xA5

pytestmark = pytest.mark.skipif(
    not zstd_module._CONTEXTS, reason="numcodecs' libzstd symbols are not visible here")


def _payload(draw_bytes: bytes, repeat: int) -> bytes:
    """Compressible bytes: the drawn bytes repeated with a running offset."""
    base = np.frombuffer(draw_bytes, dtype=np.uint8)
    if base.size == 0:
        return b""
    return (np.tile(base, repeat) + np.repeat(np.arange(repeat, dtype=np.uint8),
                                              base.size)).tobytes()


def _guarded(n: int, room: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """A buffer of ``n`` bytes and the guarded array it sits in (``room`` bytes either side)."""
    whole = np.full(n + 2 * room, GUARD, dtype=np.uint8)
    return whole[room:room + n], whole


def _guards_intact(whole: np.ndarray, n: int, room: int = 64) -> bool:
    return bool((whole[:room] == GUARD).all() and (whole[room + n:] == GUARD).all())


def test_it_is_bound_to_the_libzstd_numcodecs_bundles() -> None:
    assert zstd_ctx.available()
    assert zstd_ctx.version() >= zstd_module._MIN_ZSTD_VERSION


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=1, max_size=3000), st.integers(1, 40), st.integers(-5, 9), st.booleans(),
       st.integers(-3, 3))
def test_decodes_as_numcodecs_does(data: bytes, repeat: int, level: int, checksum: bool,
                                   slack: int) -> None:
    """Into a buffer of exactly the content's size: that size and numcodecs' bytes; into a
    larger one: the same (the rest unwritten past the content is not promised); into a
    smaller one: -1, with nothing written outside it."""
    payload = _payload(data, repeat)
    frame = numcodecs.zstd.Zstd(level=level, checksum=checksum).encode(payload)
    want = bytes(numcodecs.zstd.decompress(frame))
    assert want == payload
    n = max(0, len(payload) + slack)
    dst, whole = _guarded(n)
    got = zstd_ctx.decompress_into(np.frombuffer(frame, dtype=np.uint8), dst)
    if n >= len(payload):
        assert got == len(payload)
        assert dst[:got].tobytes() == want
    else:
        assert got == -1
    assert _guards_intact(whole, n)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=2000), st.booleans(), st.data())
def test_damaged_frames_are_refused_or_decode_within_the_buffer(data: bytes, checksum: bool,
                                                                draw) -> None:
    """A flipped byte or a cut: -1 or a size within the buffer, never a write outside it;
    with a frame checksum, a flip in the content that still decodes must be caught."""
    payload = _payload(data, 8)
    frame = bytearray(numcodecs.zstd.Zstd(level=3, checksum=checksum).encode(payload))
    if draw.draw(st.booleans()):
        frame = frame[:draw.draw(st.integers(0, len(frame) - 1))]
    else:
        at = draw.draw(st.integers(0, len(frame) - 1))
        frame[at] ^= draw.draw(st.integers(1, 255))
    n = len(payload)
    dst, whole = _guarded(n)
    got = zstd_ctx.decompress_into(np.frombuffer(bytes(frame), dtype=np.uint8), dst)
    assert got == -1 or 0 <= got <= n
    assert _guards_intact(whole, n)
    if checksum and got == n:
        assert dst.tobytes() == payload  # the checksum let nothing else through


def test_empty_input_and_empty_content() -> None:
    dst, whole = _guarded(16)
    assert zstd_ctx.decompress_into(np.empty(0, dtype=np.uint8), dst) == -1
    empty_frame = numcodecs.zstd.compress(b"", 3)
    assert zstd_ctx.decompress_into(np.frombuffer(empty_frame, dtype=np.uint8),
                                    np.empty(0, dtype=np.uint8)) == 0
    assert _guards_intact(whole, 16)


def test_read_only_or_strided_output_is_refused_before_decoding() -> None:
    frame = np.frombuffer(numcodecs.zstd.compress(b"x" * 100, 3), dtype=np.uint8)
    read_only = np.zeros(100, dtype=np.uint8)
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        zstd_ctx.decompress_into(frame, read_only)
    with pytest.raises(ValueError):
        zstd_ctx.decompress_into(frame, np.zeros(200, dtype=np.uint8)[::2])
    codec = ZstdCodec()
    assert not codec.decode_into(frame, read_only)


def test_bind_refuses_null_addresses() -> None:
    with pytest.raises(ValueError, match="null"):
        zstd_ctx.bind(0, 0, 0, 0, 0)
    assert zstd_ctx.available()  # still bound to the first library


def test_threads_decode_at_once_each_with_its_own_context() -> None:
    rng = np.random.default_rng(5)
    payloads = [_payload(rng.integers(0, 256, 500, dtype=np.uint8).tobytes(), 50 + i)
                for i in range(16)]
    frames = [np.frombuffer(numcodecs.zstd.compress(p, 3), dtype=np.uint8) for p in payloads]
    errors: list[str] = []

    def work(k: int) -> None:
        for round_ in range(40):
            i = (k + round_) % len(frames)
            dst = np.empty(len(payloads[i]), dtype=np.uint8)
            if zstd_ctx.decompress_into(frames[i], dst) != dst.nbytes or \
                    dst.tobytes() != payloads[i]:
                errors.append(f"thread {k}, frame {i}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("contexts", [True, False])
@pytest.mark.parametrize("checksum", [True, False])
def test_the_codec_decodes_into_with_contexts_or_numcodecs_alike(monkeypatch, contexts: bool,
                                                                 checksum: bool) -> None:
    """``ZstdCodec.decode_into`` through zstd_ctx or through numcodecs: True and the bytes
    for a frame of exactly the buffer's size; False for anything else (then ``decode``
    reports it)."""
    monkeypatch.setattr(zstd_module, "_CONTEXTS", contexts)
    codec = ZstdCodec(level=1, checksum=checksum)
    payload = _payload(b"zarr3c-zstd", 300)
    frame = np.frombuffer(codec.encode(payload), dtype=np.uint8)
    out = np.empty(len(payload), dtype=np.uint8)
    assert codec.decode_into(frame, out) and out.tobytes() == payload
    assert not codec.decode_into(frame, np.empty(len(payload) + 1, dtype=np.uint8))
    assert not codec.decode_into(frame, np.empty(len(payload) - 1, dtype=np.uint8))
    assert not codec.decode_into(frame[:-3], out)
    damaged = frame.copy()
    damaged[len(damaged) // 2] ^= 0xFF
    if checksum:
        assert not codec.decode_into(damaged, out)
