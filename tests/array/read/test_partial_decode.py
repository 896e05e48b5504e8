"""Reads that need only the start of a zstd chunk decode only the zstd blocks holding it
(``CodecPipeline.decode_prefix_into``): a box read alone (``a[box]``) or among others
(``get_many``), or points (``vindex``), whose furthest element lies before the chunk's end.  Same values as numpy,
missing chunks read as the fill value, and the same errors for a truncated chunk or one of
the wrong size; a frame with a checksum is decoded whole, so that the checksum is checked."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.array.read import many as many_module
from zarr3c.codecs import zstd as zstd_module
from zarr3c.codecs.zstd import ZstdCodec
from zarr3c.errors import ChecksumError, ChunkDecodeError

pytestmark = pytest.mark.skipif(
    not zstd_module._CONTEXTS, reason="numcodecs' libzstd symbols are not visible here")

SHAPE = (100, 70, 50)
#: 48 x 64 x 50 uint16: 300 KiB per chunk, three zstd blocks (of 128 KiB)
CHUNKS = (48, 64, 50)
FILL = 9


def _array(checksum: bool = False, store: zarr3c.Store | None = None
           ) -> tuple[zarr3c.Array, np.ndarray]:
    """A uint16 zstd array of three-block chunks, the chunk (1, 0, 0) not stored."""
    a = zarr3c.create_array(
        store or zarr3c.MemoryStore(), shape=SHAPE, dtype="uint16", chunks=CHUNKS,
        compressors=[{"name": "zstd", "configuration": {"level": 0, "checksum": checksum}}],
        fill_value=FILL)
    rng = np.random.default_rng(0)
    data = (np.arange(np.prod(SHAPE)).reshape(SHAPE) // 3
            + rng.integers(0, 5, SHAPE)).astype("uint16")
    a[...] = data
    a._store.erase(a.chunk_key((1, 0, 0)))
    data[48:96, :64] = FILL
    return a, data


@pytest.fixture(scope="module")
def plain() -> tuple[zarr3c.Array, np.ndarray]:
    return _array()


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """``(bytes wanted, decoded)`` for each ``ZstdCodec.decode_prefix_into`` call."""
    calls: list[tuple[int, bool]] = []
    real = ZstdCodec.decode_prefix_into

    def spy(self: ZstdCodec, data: object, out: np.ndarray, need: int) -> bool:
        done = real(self, data, out, need)  # type: ignore[arg-type]
        assert out.nbytes == np.prod(CHUNKS) * 2  # (the whole chunk's room)
        calls.append((need, done))
        return done

    monkeypatch.setattr(ZstdCodec, "decode_prefix_into", spy)
    return calls


def _spy_many(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of boxes of each call of the many-boxes path."""
    calls: list[int] = []
    real = many_module.read_boxes

    def spy(array: zarr3c.Array, boxes: list) -> object:
        calls.append(len(boxes))
        return real(array, boxes)

    monkeypatch.setattr(many_module, "read_boxes", spy)
    return calls


def _boxes(draw: st.DrawFn, n: int) -> list[tuple[slice, ...]]:
    out = []
    for _ in range(n):
        box = []
        for size in SHAPE:
            lo = draw(st.integers(0, size - 1))
            box.append(slice(lo, draw(st.integers(lo + 1, min(size, lo + 12)))))
        out.append(tuple(box))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.data())
def test_box_reads_equal_numpy(plain: tuple[zarr3c.Array, np.ndarray], data: st.DataObject
                               ) -> None:
    a, expected = plain
    boxes = _boxes(data.draw, data.draw(st.integers(1, 6)))
    for box in boxes:
        np.testing.assert_array_equal(a[box], expected[box])
    for box, got in zip(boxes, a.get_many(boxes), strict=True):
        np.testing.assert_array_equal(got, expected[box])
    n = data.draw(st.integers(1, 40))
    points = tuple(np.resize(data.draw(st.lists(st.integers(0, size - 1), min_size=1,
                                                max_size=n)), n) for size in SHAPE)
    np.testing.assert_array_equal(a.vindex[points], expected[points])


@pytest.mark.usefixtures("python_path")
def test_a_box_at_a_chunk_s_start_decodes_only_the_start(
        monkeypatch: pytest.MonkeyPatch, plain: tuple[zarr3c.Array, np.ndarray]) -> None:
    """One box: its chunk's bytes up to its furthest element; a box reaching the chunk's
    last element: the whole chunk (no prefix decode)."""
    a, expected = plain
    calls = _spy(monkeypatch)
    box = (slice(2, 5), slice(3, 7), slice(0, 4))
    np.testing.assert_array_equal(a[box], expected[box])
    end = ((4 * 64 + 6) * 50 + 4) * 2
    assert calls == [(end, True)]
    calls.clear()
    last = (slice(40, 48), slice(60, 64), slice(40, 50))
    np.testing.assert_array_equal(a[last], expected[last])
    assert calls == []
    calls.clear()
    boxes = [(slice(1, 3), slice(0, 2), slice(5, 6)), (slice(0, 2), slice(10, 12), slice(0, 9)),
             (slice(50, 52), slice(0, 3), slice(0, 3))]  # (the last in the missing chunk)
    for box, got in zip(boxes, a.get_many(boxes), strict=True):
        np.testing.assert_array_equal(got, expected[box])
    # (the furthest element of the two boxes in chunk (0, 0, 0): (2, 1, 5) of the first)
    assert calls == [(((2 * 64 + 1) * 50 + 6) * 2, True)]


@pytest.fixture
def two_threads() -> object:
    from zarr3c.concurrency import set_num_threads

    set_num_threads(2)
    yield
    set_num_threads(None)


@pytest.mark.usefixtures("two_threads", "python_path")
def test_a_box_across_chunk_starts_decodes_only_their_starts(
        monkeypatch: pytest.MonkeyPatch, plain: tuple[zarr3c.Array, np.ndarray]) -> None:
    """Without the native pipeline, a box across the starts of a few chunks (one time step
    of a ``(time, y, x)`` variable): each chunk decoded up to its piece's furthest element,
    in this thread, missing chunks filled; a box reaching far into its chunks: the chunks
    decoded whole, on the pool (the prefixes would add up to more than each thread's share
    of the chunks)."""
    a, expected = plain
    calls = _spy(monkeypatch)
    box = (slice(0, 2), slice(62, 66), slice(0, 4))  # chunks (0, 0, 0) and (0, 1, 0)
    np.testing.assert_array_equal(a[box], expected[box])
    assert sorted(calls) == sorted([(((1 * 64 + 63) * 50 + 4) * 2, True),
                                    (((1 * 64 + 1) * 50 + 4) * 2, True)])
    calls.clear()
    box = (slice(48, 50), slice(62, 66), slice(0, 4))  # (1, 0, 0) is missing: filled
    np.testing.assert_array_equal(a[box], expected[box])
    assert calls == [(((1 * 64 + 1) * 50 + 4) * 2, True)]
    calls.clear()
    many_calls = _spy_many(monkeypatch)
    np.testing.assert_array_equal(a[box], expected[box])
    assert many_calls == []
    far = (slice(30, 48), slice(50, 66), slice(0, 50))  # deep into (0, 0, 0) and (0, 1, 0)
    np.testing.assert_array_equal(a[far], expected[far])
    assert many_calls == [1]


@pytest.mark.usefixtures("two_threads")
def test_a_box_across_chunk_starts_goes_native_on_two_threads(
        monkeypatch: pytest.MonkeyPatch, plain: tuple[zarr3c.Array, np.ndarray]) -> None:
    """Where the native kernel decodes the same prefixes, a box across chunk starts is read
    by the many-boxes path on every thread, not by the one-thread prefix path; on one
    thread the prefix path keeps it."""
    from zarr3c.concurrency import set_num_threads

    a, expected = plain
    if a._pipeline.native is None or not a._pipeline.native.decodes_prefixes:
        pytest.skip("no native zstd prefix decoding here")
    calls = _spy(monkeypatch)
    many_calls = _spy_many(monkeypatch)
    for box in [(slice(0, 2), slice(62, 66), slice(0, 4)),
                (slice(48, 50), slice(62, 66), slice(0, 4))]:  # (1, 0, 0) missing: filled
        np.testing.assert_array_equal(a[box], expected[box])
    assert many_calls == [1, 1]
    assert calls == []  # (the Python prefix decoder was not called)
    set_num_threads(1)
    np.testing.assert_array_equal(a[0:2, 62:66, 0:4], expected[0:2, 62:66, 0:4])
    assert many_calls == [1, 1]
    assert len(calls) == 2


def test_a_bad_chunk_across_a_box_is_named(tmp_path) -> None:
    a, _ = _array(store=zarr3c.LocalStore(tmp_path))
    key = a.chunk_key((0, 1, 0))
    a._store.set(key, bytes(a._store.get(key))[:-5])
    with pytest.raises(ChunkDecodeError, match=key):
        a[0:2, 62:66, 0:4]


@pytest.mark.usefixtures("python_path")  # (the Python path's own steps)
def test_a_checksummed_chunk_is_decoded_whole_and_checked(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    a, expected = _array(checksum=True)
    calls = _spy(monkeypatch)
    box = (slice(0, 2), slice(0, 2), slice(0, 2))
    np.testing.assert_array_equal(a[box], expected[box])
    assert calls == [(((1 * 64 + 1) * 50 + 2) * 2, False)]
    key = a.chunk_key((0, 0, 0))
    raw = bytearray(a._store.get(key))
    raw[-3] ^= 0xFF  # the checksum itself
    a._store.set(key, bytes(raw))
    with pytest.raises(ChecksumError, match=key):
        a[box]
    with pytest.raises(ChecksumError, match=key):
        a.get_many([box])


@pytest.mark.parametrize("damage", ["truncated", "trailing bytes", "other size", "garbage"])
def test_a_bad_chunk_is_still_an_error_naming_its_key(damage: str) -> None:
    """Damage a prefix decode can see without decoding the rest (the frame's block headers
    walked to its end, its declared size): the whole decode then reports it."""
    a, _ = _array()
    key = a.chunk_key((0, 0, 0))
    raw = bytes(a._store.get(key))
    if damage == "truncated":
        bad = raw[:-5]
    elif damage == "trailing bytes":
        bad = raw + b"\0\0\0"
    elif damage == "other size":  # a valid frame of one element less
        bad = bytes(ZstdCodec().encode(np.zeros(np.prod(CHUNKS) - 1, "uint16")))
    else:
        bad = b"\0" * len(raw)
    a._store.set(key, bad)
    box = (slice(0, 2), slice(0, 2), slice(0, 2))
    with pytest.raises(ChunkDecodeError, match=key):
        a[box]
    with pytest.raises(ChunkDecodeError, match=key):
        a.get_many([box, (slice(0, 1), slice(5, 6), slice(0, 1))])


def _last_block_raw(frame: bytes) -> bytes:
    """``frame`` (one zstd frame, no checksum) with its last block, a compressed one, marked
    raw: the blocks before it decode as before, the last one to other bytes and too few of
    them, so that a whole decode fails (the frame's declared size is not reached).  Block
    format: https://github.com/facebook/zstd/blob/dev/doc/zstd_compression_format.md"""
    fhd = frame[4]
    single = (fhd >> 5) & 1
    fcs = {0: single, 1: 2, 2: 4, 3: 8}[fhd >> 6]
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + fcs
    while True:
        header = int.from_bytes(frame[at:at + 3], "little")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        if last:
            assert kind == 2, "the test data's last block must be a compressed one"
            raw = (size << 3) | 1  # (type 0: raw, same size)
            return frame[:at] + raw.to_bytes(3, "little") + frame[at + 3:]
        at += 3 + (1 if kind == 1 else size)


def test_reads_decode_only_the_blocks_they_need(read_path: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """On both read paths (``get_many`` of a few boxes, ``vindex``: the native kernel where
    the chain has one, which leaves no chunk to the Python path here), a chunk is decoded
    only through the zstd block holding the furthest element read: a chunk whose last block
    is bad reads at its start, and a read of its end is an error naming its key."""
    from zarr3c.array.read import many, points

    left: list[list[int]] = []
    for module, name in ((many, "read_chunks_natively"), (points, "read_points_natively")):
        real = getattr(module, name)

        def spy(*args: object, _real: object = real) -> list[int]:
            failed: list[int] = _real(*args)  # type: ignore[operator]
            left.append(failed)
            return failed

        monkeypatch.setattr(module, name, spy)
    a, expected = _array()
    key = a.chunk_key((0, 0, 0))
    a._store.set(key, _last_block_raw(bytes(a._store.get(key))))
    start = [(slice(0, 2), slice(0, 3), slice(0, 4)), (slice(1, 2), slice(5, 6), slice(0, 50)),
             (slice(60, 62), slice(0, 2), slice(0, 2))]  # (the last in the missing chunk)
    for box, got in zip(start, a.get_many(start), strict=True):
        np.testing.assert_array_equal(got, expected[box])
    near = (np.array([0, 2, 1]), np.array([5, 0, 9]), np.array([7, 1, 0]))
    np.testing.assert_array_equal(a.vindex[near], expected[near])
    assert left == ([[], []] if read_path == "native" else [])
    end = (slice(47, 48), slice(63, 64), slice(49, 50))
    with pytest.raises(ChunkDecodeError, match=key):
        a.get_many([start[0], end])
    with pytest.raises(ChunkDecodeError, match=key):
        a.vindex[np.array([0, 47]), np.array([0, 63]), np.array([0, 49])]


def test_on_a_local_store(tmp_path) -> None:
    a, expected = _array(store=zarr3c.LocalStore(tmp_path))
    boxes = [(slice(0, 3), slice(0, 3), slice(0, 3)), (slice(60, 63), slice(60, 66), slice(1, 2)),
             (slice(95, 100), slice(64, 70), slice(45, 50))]
    for box in boxes:
        np.testing.assert_array_equal(a[box], expected[box])
    for box, got in zip(boxes, a.get_many(boxes), strict=True):
        np.testing.assert_array_equal(got, expected[box])


@pytest.mark.usefixtures("python_path")
def test_points_near_a_chunk_s_start_decode_only_the_start(
        monkeypatch: pytest.MonkeyPatch, plain: tuple[zarr3c.Array, np.ndarray]) -> None:
    a, expected = plain
    calls = _spy(monkeypatch)
    points = (np.array([0, 3, 1, 60]), np.array([5, 0, 9, 2]), np.array([7, 1, 0, 3]))
    np.testing.assert_array_equal(a.vindex[points], expected[points])
    # chunk (0, 0, 0): its furthest point is (3, 0, 1); (60, 2, 3) is in chunk (1, 0, 0),
    # which is not stored
    assert calls == [(((3 * 64 + 0) * 50 + 2) * 2, True)]
