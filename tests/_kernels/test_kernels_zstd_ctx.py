"""``zarr3c._kernels.zstd_ctx``: zstd decoding with a context kept per thread, through the
libzstd ``zarr3c.codecs.zstd`` bound (the newest build installed: ``backports.zstd``'s or the
standard library's where present, else numcodecs'), of whole frames and of the start of a
frame's content; and compression into a given buffer the same way.

The references are ``numcodecs.zstd.decompress`` and ``_reference.zstd_frame`` (the calls
``numcodecs.zstd.compress`` makes, through ctypes on the bound library: numcodecs' frame
itself where that is numcodecs' build); every decode is checked against the first and
against the bytes compressed, every compression against the second, byte for byte, and
decoded by numcodecs with its checksum flag as asked.  Bad input (corrupt, truncated, too
large for the buffer) must come back as -1 (``decompress_bounded``: minus libzstd's error
code) without a write outside the buffer given.  The suite runs against numcodecs' build too
with ``ZARR3C_ZSTD_LIBRARY=numcodecs`` (``.ci/run``).
"""

from __future__ import annotations

import threading
from typing import Any

import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import zstd_ctx
from zarr3c._kernels.scatter import OuterPieces
from zarr3c.codecs import zstd as zstd_module
from zarr3c.codecs.zstd import ZstdCodec

GUARD = 0xA5

pytestmark = pytest.mark.skipif(
    not zstd_module._CONTEXTS, reason="no libzstd's symbols are visible here")


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


def _has_checksum(frame: bytes) -> bool:
    """Whether a zstd frame's header sets the content checksum flag (RFC 8878, 3.1.1.1.1)."""
    return bool(frame[4] & 4)


def _realistic_chunk(edge: int = 64) -> bytes:
    """An ``edge``^3 uint16 chunk of gradients plus 6 bits of noise, as the peer benchmark
    writes (``compare_peers.make_source``): at 64^3, four zstd blocks, where libzstd 1.5.6 and
    1.5.7 write different frames at levels 0 to 4."""
    j = np.arange(edge, dtype=np.uint16)
    grad = j[:, None, None] * np.uint16(7) + j[None, :, None] * np.uint16(3) + j[None, None, :]
    noise = np.random.default_rng(0).integers(0, 64, (edge,) * 3, dtype=np.uint16)
    return (grad + noise).astype("<u2").tobytes()


def _run_on_threads(work: Any, n: int) -> None:
    """``work(k)`` on ``n`` threads at once, ``k`` = 0 .. n - 1; returns when all are done."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_it_is_bound_to_the_library_the_codec_module_chose() -> None:
    assert zstd_ctx.available()
    assert zstd_module._LIBZSTD is not None
    assert zstd_ctx.version() == zstd_module._LIBZSTD.version >= zstd_module._MIN_ZSTD_VERSION


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
        zstd_ctx.bind(0, 0, 0, 0, 0, 0, 0, 0, 0)
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

    _run_on_threads(work, 4)
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


# -- decompress_prefix_into ------------------------------------------------------------------

#: zstd's largest block (of decoded content)
BLOCK = 128 * 1024


def _large_payload(seed: int, nbytes: int) -> bytes:
    """Compressible bytes spanning several zstd blocks (128 KiB each): a noisy ramp."""
    rng = np.random.default_rng(seed)
    ramp = np.arange((nbytes + 1) // 2, dtype=np.uint16) // 7
    return (ramp + rng.integers(0, 4, ramp.size, dtype=np.uint16)).tobytes()[:nbytes]


def test_prefix_decoding_is_bound() -> None:
    assert zstd_ctx.prefix_available()


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 600_000), st.integers(-5, 9), st.data())
def test_a_prefix_decodes_as_the_start_of_numcodecs_decode(seed: int, size: int, level: int,
                                                           draw) -> None:
    """At least the first ``need`` bytes, exactly numcodecs' (any need from 1 to the whole,
    frames of one to five blocks), whole blocks only, and nothing written outside the buffer
    given."""
    payload = _large_payload(seed, size)
    frame = np.frombuffer(numcodecs.zstd.Zstd(level=level).encode(payload), dtype=np.uint8)
    want = bytes(numcodecs.zstd.decompress(frame))
    need = draw.draw(st.integers(1, len(payload)))
    dst, whole = _guarded(len(payload))
    got = zstd_ctx.decompress_prefix_into(frame, dst, need)
    assert need <= got <= len(payload)
    assert got == len(payload) or got % BLOCK == 0  # (blocks of at most 128 KiB)
    assert dst[:got].tobytes() == want[:got]
    assert _guards_intact(whole, len(payload))


def test_a_prefix_decodes_only_the_blocks_holding_it() -> None:
    """Stopping early is the point: a need in the first block decodes that block only, so a
    prefix decode of a frame whose last block is damaged still succeeds while the whole
    decode fails."""
    payload = _large_payload(1, 512 * 1024)
    frame = bytearray(numcodecs.zstd.compress(payload, 3))
    dst = np.empty(len(payload), dtype=np.uint8)
    for need, blocks in [(1, 1), (BLOCK, 1), (BLOCK + 1, 2), (3 * BLOCK, 3), (len(payload), 4)]:
        got = zstd_ctx.decompress_prefix_into(np.frombuffer(bytes(frame), dtype=np.uint8), dst,
                                              need)
        assert got == blocks * BLOCK, need
    tail = len(frame) - 100  # inside the last block's compressed bytes
    frame[tail:tail + 50] = bytes(50)
    damaged = np.frombuffer(bytes(frame), dtype=np.uint8)
    assert zstd_ctx.decompress_into(damaged, dst) == -1 or dst.tobytes() != payload
    assert zstd_ctx.decompress_prefix_into(damaged, dst, 1000) == BLOCK
    assert dst[:BLOCK].tobytes() == payload[:BLOCK]


def test_frames_a_prefix_decode_refuses() -> None:
    """-1 (the caller then decodes the whole frame, which verifies or reports) for: a frame
    with a content checksum, one cut short (its block headers do not reach the end), bytes
    after the frame, two frames, a declared size other than the buffer's, bytes that are no
    frame, and a need of nothing or past the buffer."""
    payload = _large_payload(2, 300_000)
    n = len(payload)
    frame = np.frombuffer(numcodecs.zstd.compress(payload, 3), dtype=np.uint8)
    with_checksum = numcodecs.zstd.Zstd(level=3, checksum=True).encode(payload)
    cases = {
        "checksum": (np.frombuffer(with_checksum, dtype=np.uint8), n, 1000),
        "cut short": (frame[:-1], n, 1000),
        "cut to the header": (frame[:12], n, 1000),
        "trailing bytes": (np.concatenate([frame, np.zeros(3, dtype=np.uint8)]), n, 1000),
        "two frames": (np.concatenate([frame, frame]), 2 * n, 1000),
        "other declared size": (frame, n + 2, 1000),
        "not a frame": (np.frombuffer(payload[:5000], dtype=np.uint8), n, 1000),
        "too short": (frame[:4], n, 1000),
        "no need": (frame, n, 0),
        "need past the buffer": (frame, n, n + 1),
    }
    for what, (src, size, need) in cases.items():
        dst, whole = _guarded(size)
        assert zstd_ctx.decompress_prefix_into(src, dst, need) == -1, what
        assert _guards_intact(whole, size), what
    # (and the kept context still decodes a good frame after all those)
    dst = np.empty(n, dtype=np.uint8)
    assert zstd_ctx.decompress_prefix_into(frame, dst, 1000) == BLOCK
    assert dst[:BLOCK].tobytes() == payload[:BLOCK]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.data())
def test_damaged_frames_give_a_prefix_or_minus_one_within_the_buffer(seed: int, draw) -> None:
    """A flipped byte anywhere: -1 or whole blocks covering the need, never a write outside
    the buffer."""
    payload = _large_payload(seed, draw.draw(st.integers(1000, 300_000)))
    frame = bytearray(numcodecs.zstd.compress(payload, 3))
    at = draw.draw(st.integers(0, len(frame) - 1))
    frame[at] ^= draw.draw(st.integers(1, 255))
    need = draw.draw(st.integers(1, len(payload)))
    dst, whole = _guarded(len(payload))
    got = zstd_ctx.decompress_prefix_into(np.frombuffer(bytes(frame), dtype=np.uint8), dst,
                                          need)
    assert got == -1 or need <= got <= len(payload)
    assert _guards_intact(whole, len(payload))


def test_prefix_and_whole_decodes_share_a_thread_s_context() -> None:
    """A prefix decode stops mid-frame; the whole decodes and prefix decodes after it on the
    same thread (the same context) are unaffected."""
    payloads = [_large_payload(k, 400_000) for k in range(3)]
    frames = [np.frombuffer(numcodecs.zstd.compress(p, 3), dtype=np.uint8) for p in payloads]
    for k in range(6):
        i = k % 3
        dst = np.empty(len(payloads[i]), dtype=np.uint8)
        need = 7000 * (k + 1)
        got = zstd_ctx.decompress_prefix_into(frames[i], dst, need)
        assert got >= need and dst[:got].tobytes() == payloads[i][:got]
        assert zstd_ctx.decompress_into(frames[i], dst) == dst.nbytes
        assert dst.tobytes() == payloads[i]


def test_the_codec_decodes_a_prefix_only_where_it_may(monkeypatch) -> None:
    """``ZstdCodec.decode_prefix_into``: True and the bytes for a whole frame of the
    buffer's size; False with a checksum, without prefix decoding bound, or into a buffer of
    another size or a read-only one."""
    payload = _large_payload(3, 200_000)
    plain = ZstdCodec(level=3)
    frame = np.frombuffer(plain.encode(payload), dtype=np.uint8)
    out = np.empty(len(payload), dtype=np.uint8)
    assert plain.decode_prefix_into(frame, out, 5000)
    assert out[:5000].tobytes() == payload[:5000]
    assert not plain.decode_prefix_into(frame, out[:-1], 5000)
    checked = ZstdCodec(level=3, checksum=True)
    assert not checked.decode_prefix_into(checked.encode(payload), out, 5000)
    read_only = np.zeros(len(payload), dtype=np.uint8)
    read_only.flags.writeable = False
    assert not plain.decode_prefix_into(frame, read_only, 5000)
    monkeypatch.setattr(zstd_module, "_PREFIX", False)
    assert not plain.decode_prefix_into(frame, out, 5000)


# -- decompress_bounded ------------------------------------------------------------------------

#: The block size zstd allows in the frames _block_frame writes (their window)
_WINDOW = 128 * 1024


def _block_frame(blocks: list[tuple[bool, bytes]], declared: int | None) -> bytes:
    """A zstd frame of raw blocks (``(False, content)``) and RLE blocks (``(True, content)``,
    one byte repeated), declaring ``declared`` content bytes (None: no content size; any
    value: a frame may claim a wrong one), with a 128 KiB window: what other writers may
    send, which numcodecs' frames (always declaring their size) do not cover."""
    fhd = 0x00 if declared is None else 0x80  # no content size, or a 4-byte one
    header = b"\x28\xb5\x2f\xfd" + bytes([fhd, 0x38])
    if declared is not None:
        header += declared.to_bytes(4, "little")
    body = b""
    for i, (rle, content) in enumerate(blocks):
        last = int(i == len(blocks) - 1)
        head = ((len(content) << 3) | (int(rle) << 1) | last).to_bytes(3, "little")
        body += head + (content[:1] if rle else content)
    return header + body


@st.composite
def _blocks(draw: st.DrawFn) -> list[tuple[bool, bytes]]:
    """One to six blocks: raw ones of drawn bytes, RLE ones up to the window."""
    blocks = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            byte = draw(st.binary(min_size=1, max_size=1))
            blocks.append((True, byte * draw(st.integers(1, _WINDOW))))
        else:
            blocks.append((False, draw(st.binary(min_size=1, max_size=600))))
    return blocks


@settings(max_examples=150, deadline=None)
@given(_blocks(), st.booleans(), st.integers(-3, 3), st.integers(-2, 2), st.booleans())
def test_a_bounded_decode_is_numcodecs_decode_or_says_why(
        blocks: list[tuple[bool, bytes]], declare: bool, declared_off: int, slack: int,
        tiny: bool) -> None:
    """Random frames, with their content size declared (rightly or not) or not: into a
    buffer that holds the content, that size and numcodecs' bytes; into a smaller one,
    -ERROR_DST_SIZE_TOO_SMALL (zstd stops at the buffer, with or without a declared size);
    a wrong declared size, an error code; never a write outside the buffer."""
    content = b"".join(c for _, c in blocks)
    declared = None if not declare else max(0, len(content) + declared_off)
    frame = np.frombuffer(_block_frame(blocks, declared), dtype=np.uint8)
    n = 1 if tiny else max(0, len(content) + slack)
    dst, whole = _guarded(n)
    got = zstd_ctx.decompress_bounded(frame, dst)
    assert _guards_intact(whole, n)
    if declared not in (None, len(content)):
        assert got < 0
    elif n >= len(content):
        assert got == len(content)
        assert dst[:got].tobytes() == content == bytes(numcodecs.zstd.decompress(frame))
    else:
        assert got == -zstd_ctx.ERROR_DST_SIZE_TOO_SMALL


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=1, max_size=3000), st.integers(1, 40), st.booleans(),
       st.integers(-3, 3))
def test_a_bounded_decode_of_numcodecs_frames(data: bytes, repeat: int, checksum: bool,
                                              slack: int) -> None:
    """numcodecs' own frames: as decompress_into where the content fits; else
    -ERROR_DST_SIZE_TOO_SMALL rather than -1."""
    payload = _payload(data, repeat)
    frame = np.frombuffer(numcodecs.zstd.Zstd(level=3, checksum=checksum).encode(payload),
                          dtype=np.uint8)
    n = max(0, len(payload) + slack)
    dst, whole = _guarded(n)
    got = zstd_ctx.decompress_bounded(frame, dst)
    assert _guards_intact(whole, n)
    if n >= len(payload):
        assert got == len(payload) and dst[:got].tobytes() == payload
    else:
        assert got == -zstd_ctx.ERROR_DST_SIZE_TOO_SMALL
        assert zstd_ctx.decompress_into(frame, dst) == -1


def test_a_bounded_decode_names_checksum_and_empty_input() -> None:
    payload = _payload(b"zarr3c", 500)
    frame = np.frombuffer(numcodecs.zstd.Zstd(level=3, checksum=True).encode(payload),
                          dtype=np.uint8).copy()
    frame[-1] ^= 0xFF  # the content checksum, last in the frame
    dst = np.empty(len(payload), dtype=np.uint8)
    assert zstd_ctx.decompress_bounded(frame, dst) == -zstd_ctx.ERROR_CHECKSUM_WRONG
    assert zstd_ctx.decompress_bounded(np.empty(0, np.uint8), dst) == \
        -zstd_ctx.ERROR_SRC_SIZE_WRONG
    read_only = np.zeros(len(payload), dtype=np.uint8)
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        zstd_ctx.decompress_bounded(frame, read_only)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=2000), st.booleans(), st.data())
def test_damaged_frames_give_a_size_within_the_buffer_or_an_error_code(
        data: bytes, checksum: bool, draw) -> None:
    payload = _payload(data, 8)
    frame = bytearray(numcodecs.zstd.Zstd(level=3, checksum=checksum).encode(payload))
    if draw.draw(st.booleans()):
        frame = frame[:draw.draw(st.integers(0, len(frame) - 1))]
    else:
        at = draw.draw(st.integers(0, len(frame) - 1))
        frame[at] ^= draw.draw(st.integers(1, 255))
    n = len(payload)
    dst, whole = _guarded(n)
    got = zstd_ctx.decompress_bounded(np.frombuffer(bytes(frame), dtype=np.uint8), dst)
    assert got < 0 or 0 <= got <= n
    assert _guards_intact(whole, n)


# -- a batch of chunks decoded and copied out in one call (decompress_pieces) -------------------

I64 = np.int64


def _draw_frames(draw: st.DrawFn, slen: int) -> list[bytes]:
    """Up to four chunks of ``slen`` bytes as zstd frames, some not: empty, garbage, or
    another size (all of which a batch call must leave undone)."""
    frames = []
    for k in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["ok", "ok", "ok", "empty", "garbage", "short", "long"]))
        size = {"short": slen - 1, "long": slen + 1}.get(kind, slen)
        content = (np.arange(size, dtype=np.uint8) * (k + 3) + k).tobytes()
        frame = numcodecs.zstd.compress(content, 1)
        frames.append({"empty": b"", "garbage": b"\x28\xb5\x2f\xfd" + bytes(12)}.get(kind, frame))
    return frames


def _draw_runs(draw: st.DrawFn, nframes: int, n: int) -> dict[str, np.ndarray]:
    """Each frame's run ``[start, stop)`` of ``n`` pieces or elements."""
    runs = []
    for _ in range(nframes):
        lo = draw(st.integers(0, n))
        runs.append((lo, draw(st.integers(lo, n))))
    return dict(starts=np.array([r[0] for r in runs], I64),
                stops=np.array([r[1] for r in runs], I64))


def _decode_each(c: dict[str, Any], copy_run: Any) -> list[int]:
    """numcodecs' decode of each frame, then ``copy_run(content, lo, hi)`` of its run:
    the frames left undone (refused, or not ``slen`` bytes)."""
    failed = []
    for k, (frame, lo, hi) in enumerate(zip(c["frames"], c["starts"].tolist(),
                                             c["stops"].tolist(), strict=True)):
        content = _decoded(frame, c["slen"])
        if content is None:
            failed.append(k)
            continue
        copy_run(content, lo, hi)
    return failed


@st.composite
def _pieces_batches(draw: st.DrawFn) -> dict[str, Any]:
    """Chunks of ``slen`` bytes as zstd frames (some not: empty, garbage, or another size),
    and pieces of them (any, including ones reaching outside the chunk or the output) to copy
    to an output."""
    slen = draw(st.integers(1, 120))
    ndim = draw(st.integers(0, 3))
    itemsize = draw(st.sampled_from([1, 2, 3, 4]))
    npieces = draw(st.integers(0, 8))
    ints = st.integers
    frames = _draw_frames(draw, slen)
    if draw(st.booleans()):  # anything, mostly refused
        offset, stride, extent, dst_len = ints(-1, 120), ints(-8, 24), ints(0, 4), ints(0, 200)
    else:  # mostly pieces that fit
        offset, extent, dst_len = ints(0, max(0, slen // 2 - itemsize)), ints(1, 2), ints(200, 300)
        stride = st.sampled_from([itemsize, 2 * itemsize, 4 * itemsize])
    return dict(
        frames=frames, slen=slen, itemsize=itemsize, dst_len=draw(dst_len),
        **_draw_runs(draw, len(frames), npieces),
        src_offsets=np.array([draw(offset) for _ in range(npieces)], I64),
        src_strides=np.array([draw(stride) for _ in range(ndim)], I64),
        dst_offsets=np.array([draw(offset) for _ in range(npieces)], I64),
        dst_strides=np.array([[draw(stride) for _ in range(ndim)]
                              for _ in range(npieces)], I64).reshape(npieces, ndim),
        shapes=np.array([[draw(extent) for _ in range(ndim)] for _ in range(npieces)],
                        I64).reshape(npieces, ndim),
    )


def _decoded(frame: bytes, size: int) -> np.ndarray | None:
    """numcodecs' decode of ``frame`` if it is ``size`` bytes, else None (also when refused)."""
    try:
        content = numcodecs.zstd.decompress(frame)
    except Exception:  # noqa: BLE001 - any refusal: the chunk is left undone
        return None
    return np.frombuffer(content, np.uint8) if len(content) == size else None


def _pieces_reference(c: dict[str, Any], dst: np.ndarray) -> list[int]:
    """numcodecs' decompress, then the reference copy_pieces, per chunk; every piece checked
    first (on a copy of ``dst``)."""
    scratch = np.zeros(c["slen"], np.uint8)
    args = (c["src_strides"],)
    rows = ("src_offsets", "dst_offsets", "dst_strides", "shapes")

    def piece_args(lo: int, hi: int) -> tuple[Any, ...]:
        off, doff, dstr, shp = (c[name][lo:hi] for name in rows)
        return (off, *args, doff, dstr, shp, c["itemsize"])

    probe = dst.copy()
    for lo, hi in zip(c["starts"].tolist(), c["stops"].tolist(), strict=True):
        off, sst, doff, dstr, shp, itemsize = piece_args(lo, hi)
        ref.copy_pieces(scratch, off, sst, probe, doff, dstr, shp, itemsize)

    def copy_run(content: np.ndarray, lo: int, hi: int) -> None:
        off, sst, doff, dstr, shp, itemsize = piece_args(lo, hi)
        ref.copy_pieces(content, off, sst, dst, doff, dstr, shp, itemsize)

    return _decode_each(c, copy_run)


def _same_outcome(kernel: Any, reference: Any, dst_len: int) -> None:
    """The same output bytes and the same chunks left undone, or a ValueError from both
    with nothing written (everything is checked before anything is decoded)."""
    outcomes = []
    for run in (kernel, reference):
        dst = np.full(dst_len, 0xEE, dtype=np.uint8)
        try:
            left = run(dst)
        except ValueError:
            assert (dst == 0xEE).all()
            left = None
        outcomes.append((left, dst.tobytes()))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=400, deadline=None)
@given(_pieces_batches())
def test_decompress_pieces_equals_decoding_then_copying_each_chunk(c: dict[str, Any]) -> None:
    """The kernel against numcodecs' decode and the reference copy_pieces per chunk."""
    def kernel(dst: np.ndarray) -> list[int]:
        return zstd_ctx.decompress_pieces(
            c["frames"], np.zeros(c["slen"], np.uint8), c["starts"], c["stops"],
            c["src_offsets"], c["src_strides"], dst, c["dst_offsets"], c["dst_strides"],
            c["shapes"], c["itemsize"])

    _same_outcome(kernel, lambda dst: _pieces_reference(c, dst), c["dst_len"])


def _refuses_each(call: Any, good: dict[str, Any], bad: list[dict[str, Any]],
                  dst: np.ndarray) -> None:
    """Each change of ``good`` alone makes ``call(**args)`` raise ValueError before
    anything is written to ``dst`` (filled with 0xEE)."""
    for change in bad:
        with pytest.raises(ValueError):
            call(**{**good, **change})
        assert (dst == 0xEE).all(), change


def test_decompress_pieces_refuses_bad_arguments_before_decoding() -> None:
    frame = numcodecs.zstd.compress(bytes(range(16)), 1)
    one, row = np.zeros(1, I64), np.ones((1, 1), I64)
    dst = np.full(16, 0xEE, np.uint8)
    scratch = np.zeros(16, np.uint8)
    good = dict(frames=[frame], scratch=scratch, piece_starts=np.zeros(1, I64),
                piece_stops=np.ones(1, I64), src_offsets=one, src_strides=np.ones(1, I64),
                dst=dst, dst_offsets=one, dst_strides=row, shapes=row, itemsize=1)
    assert zstd_ctx.decompress_pieces(*good.values()) == []
    assert dst[0] == 0 and (dst[1:] == 0xEE).all()
    dst[...] = 0xEE
    bad = [
        dict(piece_stops=np.array([2], I64)),            # past the pieces
        dict(piece_starts=np.array([1], I64), piece_stops=np.zeros(1, I64)),  # start > stop
        dict(piece_starts=np.zeros(2, I64)),             # one range per frame
        dict(scratch=np.zeros(0, np.uint8)),             # nothing to decode into
        dict(src_offsets=np.array([16], I64)),           # the piece reaches past scratch
        dict(dst_offsets=np.array([16], I64)),           # ... past dst
        dict(dst_strides=np.ones((2, 1), I64)),          # a row per piece
        dict(itemsize=0),
    ]
    _refuses_each(lambda **args: zstd_ctx.decompress_pieces(*args.values()), good, bad, dst)
    with pytest.raises(TypeError):  # frames must be a list
        zstd_ctx.decompress_pieces(*{**good, "frames": (frame,)}.values())


@st.composite
def _element_batches(draw: st.DrawFn) -> dict[str, Any]:
    """Chunks as zstd frames (some not), and runs of elements of them to copy to an output
    (offsets mostly inside both buffers, sometimes not; repeated destinations)."""
    itemsize = draw(st.sampled_from([1, 2, 4, 8, 3, 16]))
    slen = itemsize * draw(st.integers(1, 12))
    dst_len = draw(st.integers(0, 120))
    nelements = draw(st.integers(0, 12))
    wild = draw(st.booleans())
    ints = st.integers

    def offset(room: int) -> st.SearchStrategy[int]:
        return ints(-1, room + 1) if wild else ints(0, max(0, room - itemsize))

    frames = _draw_frames(draw, slen)
    return dict(
        frames=frames, slen=slen, itemsize=itemsize, dst_len=dst_len,
        **_draw_runs(draw, len(frames), nelements),
        src_offsets=np.array([draw(offset(slen)) for _ in range(nelements)], I64),
        dst_offsets=np.array([draw(offset(dst_len)) for _ in range(nelements)], I64),
    )


def _elements_reference(c: dict[str, Any], dst: np.ndarray) -> list[int]:
    scratch = np.zeros(c["slen"], np.uint8)
    probe = dst.copy()
    runs = list(zip(c["starts"].tolist(), c["stops"].tolist(), strict=True))
    for lo, hi in runs:  # every element checked first
        ref.copy_elements(scratch, c["src_offsets"][lo:hi], probe, c["dst_offsets"][lo:hi],
                          c["itemsize"])
    return _decode_each(c, lambda content, lo, hi: ref.copy_elements(
        content, c["src_offsets"][lo:hi], dst, c["dst_offsets"][lo:hi], c["itemsize"]))


@settings(max_examples=400, deadline=None)
@given(_element_batches())
def test_decompress_elements_equals_decoding_then_copying_each_chunk(c: dict[str, Any]) -> None:
    """The kernel against numcodecs' decode and the reference copy_elements per chunk."""
    def kernel(dst: np.ndarray) -> list[int]:
        return zstd_ctx.decompress_elements(
            c["frames"], np.zeros(c["slen"], np.uint8), c["starts"], c["stops"],
            c["src_offsets"], dst, c["dst_offsets"], c["itemsize"])

    _same_outcome(kernel, lambda dst: _elements_reference(c, dst), c["dst_len"])


def test_decompress_elements_refuses_bad_arguments_before_decoding() -> None:
    frame = numcodecs.zstd.compress(bytes(range(16)), 1)
    dst = np.full(16, 0xEE, np.uint8)
    good = dict(frames=[frame], scratch=np.zeros(16, np.uint8), run_starts=np.zeros(1, I64),
                run_stops=np.full(1, 2, I64), src_offsets=np.array([2, 4], I64), dst=dst,
                dst_offsets=np.array([0, 0], I64), itemsize=2)
    assert zstd_ctx.decompress_elements(*good.values()) == []
    assert dst[:2].tobytes() == bytes([4, 5]) and (dst[2:] == 0xEE).all()  # (the last wins)
    dst[...] = 0xEE
    bad = [
        dict(run_stops=np.full(1, 3, I64)),                         # past the elements
        dict(run_starts=np.ones(1, I64), run_stops=np.zeros(1, I64)),
        dict(run_starts=np.zeros(2, I64)),                          # one run per frame
        dict(scratch=np.zeros(0, np.uint8)),
        dict(src_offsets=np.array([2, 15], I64)),                   # past scratch
        dict(dst_offsets=np.array([0, -1], I64)),
        dict(dst_offsets=np.zeros(3, I64)),                         # lengths differ
        dict(itemsize=0),
    ]
    _refuses_each(lambda **args: zstd_ctx.decompress_elements(*args.values()), good, bad,
                  dst)


@st.composite
def _outer_batches(draw: st.DrawFn) -> dict[str, Any]:
    """Chunks as zstd frames (some not), and outer-product pieces of them to copy to an
    output (offsets mostly inside both buffers, sometimes not; empty pieces; repeated
    destinations), each frame with a run of pieces."""
    itemsize = draw(st.sampled_from([1, 2, 4, 8, 3]))
    ndim = draw(st.integers(1, 3))
    slen = itemsize * draw(st.integers(1, 30))
    dst_len = draw(st.integers(0, 200))
    wild = draw(st.booleans())
    ints = st.integers

    def offset(room: int) -> st.SearchStrategy[int]:
        return ints(-1, room + 1) if wild else ints(0, max(0, room - itemsize) // ndim)

    counts, src, dst = [], [], []
    for _ in range(draw(ints(0, 5))):
        row = [draw(ints(0 if wild else 1, 3)) for _ in range(ndim)]
        counts.append(row)
        src += [draw(offset(slen)) for _ in range(sum(row))]
        dst += [draw(offset(dst_len)) for _ in range(sum(row))]
        n = row[-1]
        if draw(st.booleans()) and n > 1:  # an innermost run of consecutive items (memcpy)
            src[-n:] = [src[-n] + itemsize * i for i in range(n)]
            dst[-n:] = [dst[-n] + itemsize * i for i in range(n)]
    frames = _draw_frames(draw, slen)
    bounds = np.zeros(len(counts) + 1, I64)
    np.cumsum([sum(row) for row in counts], out=bounds[1:])
    return dict(
        frames=frames, slen=slen, itemsize=itemsize, dst_len=dst_len, bounds=bounds,
        **_draw_runs(draw, len(frames), len(counts)),
        src_offsets=np.array(src, I64), dst_offsets=np.array(dst, I64),
        counts=np.array(counts, I64).reshape(len(counts), ndim),
    )


def _outer_reference(c: dict[str, Any], dst: np.ndarray) -> list[int]:
    """numcodecs' decompress, then the reference copy_outer of each piece of the chunk's
    run; every piece checked first (on copies)."""
    b = c["bounds"].tolist()

    def copy(src: np.ndarray, out: np.ndarray, p: int) -> None:
        ref.copy_outer(src, c["src_offsets"][b[p]:b[p + 1]], out,
                       c["dst_offsets"][b[p]:b[p + 1]], c["counts"][p], c["itemsize"])

    probe = dst.copy()
    for p in range(len(c["counts"])):
        copy(np.zeros(c["slen"], np.uint8), probe, p)
    def copy_run(content: np.ndarray, lo: int, hi: int) -> None:
        for p in range(lo, hi):
            copy(content, dst, p)

    return _decode_each(c, copy_run)


def _decompress_outer(frames: list[bytes], scratch: np.ndarray, piece_starts: np.ndarray,
                      piece_stops: np.ndarray, bounds: np.ndarray, src_offsets: np.ndarray,
                      dst: np.ndarray, dst_offsets: np.ndarray, counts: np.ndarray,
                      itemsize: int, checked_slen: int | None = None,
                      checked_dlen: int | None = None) -> list[int]:
    """The kernel with its pieces checked against ``scratch`` and ``dst`` (or the lengths
    given), as ``copy_outer``'s arguments."""
    pieces = OuterPieces(
        "test", bounds, src_offsets, dst_offsets, counts,
        len(scratch) if checked_slen is None else checked_slen,
        len(dst) if checked_dlen is None else checked_dlen, itemsize)
    return zstd_ctx.decompress_outer(frames, scratch, piece_starts, piece_stops, pieces, dst)


@settings(max_examples=400, deadline=None)
@given(_outer_batches())
def test_decompress_outer_equals_decoding_then_copying_each_chunk(c: dict[str, Any]) -> None:
    """The kernel against numcodecs' decode and the reference copy_outer per piece."""
    def kernel(dst: np.ndarray) -> list[int]:
        return _decompress_outer(
            c["frames"], np.zeros(c["slen"], np.uint8), c["starts"], c["stops"], c["bounds"],
            c["src_offsets"], dst, c["dst_offsets"], c["counts"], c["itemsize"])

    _same_outcome(kernel, lambda dst: _outer_reference(c, dst), c["dst_len"])


def test_decompress_outer_refuses_bad_arguments_before_decoding() -> None:
    frame = numcodecs.zstd.compress(bytes(range(16)), 1)
    dst = np.full(16, 0xEE, np.uint8)
    good = dict(frames=[frame], scratch=np.zeros(16, np.uint8), piece_starts=np.zeros(1, I64),
                piece_stops=np.ones(1, I64), bounds=np.array([0, 4], I64),
                src_offsets=np.array([0, 8, 0, 1], I64), dst=dst,
                dst_offsets=np.array([0, 4, 0, 1], I64), counts=np.array([[2, 2]], I64),
                itemsize=1)
    assert _decompress_outer(**good) == []
    assert dst[:6].tobytes() == bytes([0, 1, 0xEE, 0xEE, 8, 9]) and (dst[6:] == 0xEE).all()
    dst[...] = 0xEE
    bad = [
        dict(piece_stops=np.full(1, 2, I64)),                 # past the pieces
        dict(piece_starts=np.ones(1, I64), piece_stops=np.zeros(1, I64)),
        dict(piece_starts=np.zeros(2, I64)),                  # one run per frame
        dict(scratch=np.zeros(0, np.uint8)),
        dict(bounds=np.array([0, 5], I64)),                   # past the offsets
        dict(bounds=np.array([0], I64)),                      # a bound per piece and one
        dict(counts=np.array([[2, 1]], I64)),                 # counts do not sum to 4
        dict(counts=np.array([[-1, 5]], I64)),
        dict(src_offsets=np.array([0, 15, 0, 1], I64)),       # past scratch
        dict(dst_offsets=np.array([0, -1, 0, 1], I64)),
        dict(dst_offsets=np.zeros(3, I64)),                   # lengths differ
        dict(itemsize=0),
        dict(checked_slen=17),                                # scratch shorter than checked
        dict(checked_dlen=17),                                # dst likewise
    ]
    _refuses_each(_decompress_outer, good, bad, dst)


# -- compress_into ---------------------------------------------------------------------------

pytestmark_compress = pytest.mark.skipif(
    not zstd_module._COMPRESS, reason="no libzstd compressor's symbols are visible")


@pytestmark_compress
def test_the_compressor_is_bound_to_the_same_library() -> None:
    assert zstd_ctx.compress_available()
    for n in (0, 1, 1000, 128 * 1024, 10**7):
        assert zstd_ctx.compress_bound(n) >= n + 9  # header and a raw block's overhead


@pytestmark_compress
@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=3000), st.integers(1, 60),
       st.sampled_from([-131072, -50, -5, -1, 0, 1, 3, 9, 19, 22]), st.booleans(),
       st.integers(-40, 40))
def test_compresses_as_numcodecs_calls_do(data: bytes, repeat: int, level: int,
                                           checksum: bool, slack: int) -> None:
    """The reference's frame (numcodecs' calls on the bound library), byte for byte, into a
    buffer of the bound; into a smaller one that holds the frame, the frame or -1 (zstd may
    want room to spare: an empty input's 9-byte frame does not fit 9 bytes); -1 into one too
    small for it; never a write outside the buffer given.  The frame decodes with numcodecs
    and has the checksum flag as asked."""
    payload = _payload(data, repeat)
    want = ref.zstd_frame(payload, level, checksum)
    if payload:  # (numcodecs refuses to decode a frame of empty content)
        assert bytes(numcodecs.zstd.decompress(want)) == payload
    assert _has_checksum(want) == checksum
    src = np.frombuffer(payload, dtype=np.uint8)
    bound = zstd_ctx.compress_bound(len(payload))
    assert bound >= len(want)
    for n in (bound, max(0, len(want) + slack)):
        dst, whole = _guarded(n)
        got = zstd_ctx.compress_into(src, dst, level, checksum)
        if n >= bound or (n >= len(want) and got != -1):
            assert got == len(want)
            assert dst[:got].tobytes() == want
        else:
            assert got == -1
        assert _guards_intact(whole, n)


@pytestmark_compress
@pytest.mark.parametrize("level", [-3, 0, 1, 3, 5, 19])
@pytest.mark.parametrize("checksum", [False, True])
def test_a_whole_chunk_compresses_with_its_level_and_checksum(level: int, checksum: bool
                                                              ) -> None:
    """A realistic 64^3 chunk: the reference's frame; numcodecs decodes it; its checksum flag
    is as asked and numcodecs refuses the frame with its checksum changed; with numcodecs'
    build bound it is ``numcodecs.zstd.compress``'s frame byte for byte."""
    payload = _realistic_chunk()
    out = np.empty(zstd_ctx.compress_bound(len(payload)), dtype=np.uint8)
    frame = out[:zstd_ctx.compress_into(np.frombuffer(payload, np.uint8), out, level,
                                        checksum)].tobytes()
    assert frame == ref.zstd_frame(payload, level, checksum)
    assert bytes(numcodecs.zstd.decompress(frame)) == payload
    assert _has_checksum(frame) == checksum
    if checksum:
        with pytest.raises(RuntimeError):
            numcodecs.zstd.decompress(frame[:-1] + bytes([frame[-1] ^ 1]))
    if zstd_module._LIBZSTD is not None and zstd_module._LIBZSTD.name == "numcodecs":
        assert frame == numcodecs.zstd.compress(payload, level, checksum)


@pytestmark_compress
def test_the_level_is_the_one_asked() -> None:
    """Higher levels compress the realistic chunk smaller (each a level of its own: the
    frames of levels 1, 3 and 19 all differ)."""
    payload = np.frombuffer(_realistic_chunk(), np.uint8)
    out = np.empty(zstd_ctx.compress_bound(payload.nbytes), dtype=np.uint8)
    sizes = [zstd_ctx.compress_into(payload, out, level, False) for level in (-50, 1, 19)]
    assert sizes[0] > sizes[1] > sizes[2] > 0


@pytestmark_compress
def test_compress_refuses_outputs_it_cannot_write_before_compressing() -> None:
    src = np.frombuffer(b"zarr3c" * 100, dtype=np.uint8)
    read_only = np.zeros(1000, dtype=np.uint8)
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        zstd_ctx.compress_into(src, read_only, 3, False)
    with pytest.raises(ValueError):
        zstd_ctx.compress_into(src, np.zeros(2000, dtype=np.uint8)[::2], 3, False)
    with pytest.raises(ValueError):
        zstd_ctx.compress_bound(-1)
    assert ZstdCodec().encode_into(src, read_only) is None
    # A refusal leaves this thread able to compress (zstd's failed context is not reused).
    assert zstd_ctx.compress_into(src, np.empty(5, dtype=np.uint8), 3, False) == -1
    out = np.empty(zstd_ctx.compress_bound(src.nbytes), dtype=np.uint8)
    n = zstd_ctx.compress_into(src, out, 3, False)
    assert out[:n].tobytes() == ref.zstd_frame(src.tobytes(), 3, False)
    with pytest.raises(ValueError, match="null"):
        zstd_ctx.bind_compress(0, 0, 0, 0, 0)
    assert zstd_ctx.compress_available()  # still bound to the first library


@pytestmark_compress
def test_threads_compress_at_once_each_with_its_own_context() -> None:
    """Four threads, each switching level and checksum from call to call (a context's
    parameters are sticky: every call must set its own)."""
    rng = np.random.default_rng(7)
    payloads = [_payload(rng.integers(0, 256, 400, dtype=np.uint8).tobytes(), 40 + i)
                for i in range(12)]
    settings_ = [(level, checksum) for level in (-3, 1, 7) for checksum in (False, True)]
    want = {(i, s): ref.zstd_frame(p, *s)
            for i, p in enumerate(payloads) for s in settings_}
    errors: list[str] = []

    def work(k: int) -> None:
        for round_ in range(60):
            i = (k + round_) % len(payloads)
            s = settings_[(k * 5 + round_) % len(settings_)]
            dst = np.empty(zstd_ctx.compress_bound(len(payloads[i])), dtype=np.uint8)
            n = zstd_ctx.compress_into(np.frombuffer(payloads[i], dtype=np.uint8), dst, *s)
            if n < 0 or dst[:n].tobytes() != want[(i, s)]:
                errors.append(f"thread {k}, payload {i}, {s}")

    _run_on_threads(work, 4)
    assert errors == []


@pytest.mark.parametrize("bound", [True, False])
def test_the_codec_encodes_into_only_through_a_kept_context(monkeypatch, bound: bool) -> None:
    """``ZstdCodec.encode_into``: ``encode``'s bytes where the compressor is bound; where it
    is not, no bound and None (the caller then calls ``encode``)."""
    if bound and not zstd_module._COMPRESS:
        pytest.skip("no libzstd compressor's symbols are visible")
    monkeypatch.setattr(zstd_module, "_COMPRESS", bound)
    codec = ZstdCodec(level=2, checksum=True)
    payload = np.frombuffer(_payload(b"inner chunk", 500), dtype=np.uint8)
    room = codec.encoded_bound(payload.nbytes)
    if not bound:
        assert room is None
        assert codec.encode_into(payload, np.empty(10**5, dtype=np.uint8)) is None
        return
    assert room is not None
    out = np.empty(room, dtype=np.uint8)
    n = codec.encode_into(payload, out)
    assert n is not None and out[:n].tobytes() == bytes(codec.encode(payload))
    assert codec.encode_into(payload, out[:n - 1]) is None  # too small: encode() instead
