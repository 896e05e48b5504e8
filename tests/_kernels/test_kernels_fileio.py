"""``zarr3c._kernels.fileio``: byte ranges of a file read in one call that holds the GIL once.

The reference (``_reference.read_ranges_into``) reads through ``os``; the kernel must agree
on the bytes, the count and the file size, write nothing outside the ranges' destinations,
and refuse (ValueError, before any read) a range outside the buffer.
"""

from __future__ import annotations

import errno
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref

fileio = pytest.importorskip("zarr3c._kernels.fileio", reason="POSIX builds only")

GUARD = 0x5C


def _cols(ranges: list[tuple[int, int, int]]) -> tuple[np.ndarray, ...]:
    arr = np.array(ranges, dtype=np.int64).reshape(-1, 3)
    return tuple(np.ascontiguousarray(arr[:, k]) for k in range(3))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 70_000), st.data())
def test_agrees_with_reading_through_os(tmp_path_factory, size: int, draw) -> None:
    path = tmp_path_factory.mktemp("f") / "chunk"
    content = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    path.write_bytes(content)
    room = draw.draw(st.integers(0, 80_000))
    ranges = []
    for _ in range(draw.draw(st.integers(0, 5))):
        start = draw.draw(st.integers(0, size + 10))
        stop = draw.draw(st.integers(start, start + 30_000))
        if stop - start > room:
            continue
        ranges.append((start, stop, draw.draw(st.integers(0, room - (stop - start)))))
    got = np.full(room + 16, GUARD, dtype=np.uint8)
    want = got.copy()
    cols = _cols(ranges)
    assert fileio.read_ranges_into(bytes(path), got[:room], *cols) == \
        ref.read_ranges_into(bytes(path), want[:room], *cols)
    assert got.tobytes() == want.tobytes()  # (the guard bytes past the buffer included)
    if len(ranges) == 1:
        one = np.full(room + 16, GUARD, dtype=np.uint8)
        assert fileio.read_range_into(bytes(path), one[:room], *ranges[0]) == \
            ref.read_ranges_into(bytes(path), want[:room], *cols)
        assert one.tobytes() == got.tobytes()


def test_what_is_not_a_regular_file(tmp_path) -> None:
    """A missing path gives its errno; a directory or a FIFO gives size -1 (a FIFO is opened
    without blocking)."""
    buf = np.zeros(8, dtype=np.uint8)
    err, got, size = fileio.read_range_into(bytes(tmp_path / "missing"), buf, 0, 8, 0)
    assert (err, got, size) == (errno.ENOENT, 0, -1)
    err, _, _ = fileio.read_range_into(bytes(tmp_path / "missing" / "deeper"), buf, 0, 8, 0)
    assert err == errno.ENOENT
    (tmp_path / "file").write_bytes(b"x")
    err, _, _ = fileio.read_range_into(bytes(tmp_path / "file" / "below"), buf, 0, 8, 0)
    assert err == errno.ENOTDIR
    assert fileio.read_range_into(bytes(tmp_path), buf, 0, 8, 0) == (0, 0, -1)
    os.mkfifo(tmp_path / "fifo")
    assert fileio.read_range_into(bytes(tmp_path / "fifo"), buf, 0, 8, 0) == (0, 0, -1)
    assert not buf.any()


@pytest.mark.parametrize(("ranges", "room"), [
    ([(0, 9, 0)], 8),          # past the buffer's end
    ([(0, 4, 5)], 8),          # likewise, from an offset
    ([(-1, 3, 0)], 8),         # negative start
    ([(5, 3, 0)], 8),          # stop before start
    ([(0, 3, -1)], 8),         # negative destination
    ([(0, 2, 0), (0, 9, 0)], 8),
])
def test_a_range_outside_the_buffer_is_refused_before_any_read(tmp_path, ranges, room) -> None:
    path = tmp_path / "chunk"
    path.write_bytes(bytes(range(20)))
    whole = np.full(room + 8, GUARD, dtype=np.uint8)
    with pytest.raises(ValueError, match="read_ranges_into"):
        fileio.read_ranges_into(bytes(path), whole[:room], *_cols(ranges))
    if len(ranges) == 1:
        with pytest.raises(ValueError, match="read_ranges_into"):
            fileio.read_range_into(bytes(path), whole[:room], *ranges[0])
    assert (whole == GUARD).all()
    with pytest.raises(ValueError, match="read_ranges_into"):
        fileio.read_ranges_into(bytes(path), whole[:room], np.zeros(2, dtype=np.int64),
                                np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64))


def test_read_only_buffers_are_refused(tmp_path) -> None:
    path = tmp_path / "chunk"
    path.write_bytes(b"abc")
    with pytest.raises((ValueError, BufferError)):
        fileio.read_range_into(bytes(path), bytes(3), 0, 3, 0)


def test_threads_read_at_once(tmp_path) -> None:
    paths = []
    for k in range(8):
        p = tmp_path / f"c{k}"
        p.write_bytes(bytes([k]) * (10_000 + k))
        paths.append(p)
    def work(t: int) -> list[str]:
        buf = np.empty(20_000, dtype=np.uint8)
        wrong = []
        for r in range(50):
            k = (t + r) % 8
            err, got, size = fileio.read_range_into(bytes(paths[k]), buf, 0, 20_000, 0)
            if (err, got, size) != (0, 10_000 + k, 10_000 + k) or (buf[:got] != k).any():
                wrong.append(f"thread {t}, file {k}")
        return wrong

    with ThreadPoolExecutor(4) as pool:
        assert [w for wrong in pool.map(work, range(4)) for w in wrong] == []
