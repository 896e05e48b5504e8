"""Page-aligned buffers (zarr3c._buffers) and LocalStore's reads at a slow distance.

The kernel copy from the page cache is slow when the destination lies 1 to 31 bytes past
the source modulo the page; buffers that chunks are read into start on a page boundary, and
LocalStore reads a long range at such a distance through a page-aligned bounce buffer.
These tests guard what those paths return (oracle: the bytes written, numpy's ``empty``)
and that the bounce path is taken exactly where it should be; never their speed.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c._buffers import _ALIGN_MIN_BYTES, PAGE_SIZE, bad_offset, empty_aligned, empty_array
from zarr3c.stores import LocalStore
from zarr3c.stores.local import reads as local_reads


def _address(buf: np.ndarray) -> int:
    return int(buf.ctypes.data)


@pytest.mark.parametrize("nbytes", [0, 1, 100, PAGE_SIZE, _ALIGN_MIN_BYTES - 1,
                                    _ALIGN_MIN_BYTES, 3 * _ALIGN_MIN_BYTES + 5, 5 << 20])
def test_empty_aligned_starts_on_a_page(nbytes: int) -> None:
    buf = empty_aligned(nbytes)
    assert buf.dtype == np.uint8 and buf.shape == (nbytes,) and buf.flags.writeable
    assert buf.flags.c_contiguous
    if nbytes >= _ALIGN_MIN_BYTES:
        assert _address(buf) % PAGE_SIZE == 0
    buf[...] = 7  # all of it is usable
    assert (buf == 7).all()


@pytest.mark.parametrize(("shape", "dtype"), [
    ((512, 512), "uint16"), ((3, 5), "float64"), (10_000, "int32"), ((0, 4096), "uint8"),
    ((2048,), "complex128"), ((64, 64), [("a", "<i4"), ("b", "<f8")]), ((5000,), "O"),
    ((4096,), "S3"), ((4096,), "U2"),
])
def test_empty_array_is_np_empty_on_a_page(shape, dtype) -> None:
    got = empty_array(shape, np.dtype(dtype))
    want = np.empty(shape, dtype=dtype)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous and got.flags.writeable
    if got.nbytes >= _ALIGN_MIN_BYTES and not got.dtype.hasobject:
        assert _address(got) % PAGE_SIZE == 0


def test_bad_offset_is_a_short_distance_past_the_source() -> None:
    assert [d for d in range(-64, 64) if bad_offset(10 * PAGE_SIZE + d, 0)] == list(range(1, 32))
    assert bad_offset(PAGE_SIZE + 116, 100) and not bad_offset(PAGE_SIZE + 100, 100)
    assert not bad_offset(99, 100)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(0, 700_000), start=st.integers(0, 700_000),
       length=st.integers(0, 600_000), distance=st.sampled_from([0, 1, 16, 31, 32, 4000]),
       bounce=st.sampled_from([PAGE_SIZE * 2, 1 << 18]))
def test_reads_at_any_distance_give_the_stored_bytes(tmp_path_factory, monkeypatch, size,
                                                       start, length, distance, bounce):
    """``read_ranges_into`` at slow distances (bounced, in parts when the range is longer
    than the bounce buffer) and fast ones copies exactly the stored bytes, and no more
    than the file holds."""
    monkeypatch.setattr(local_reads, "_BOUNCE_BYTES", bounce)
    monkeypatch.setattr(local_reads._bounce, "view", None, raising=False)
    store = LocalStore(tmp_path_factory.mktemp("bounce"))
    value = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    store.set("k", value)
    out = empty_aligned(length + 2 * PAGE_SIZE)
    out[...] = 0xEE
    # ``at`` puts the destination ``distance`` bytes past the source, modulo the page
    at = (start + distance) % PAGE_SIZE
    (got,) = store.read_ranges_into([("k", [(start, start + length, at)])], out)
    want = value[start:start + length]
    assert got == len(want)
    assert out[at:at + got].tobytes() == want
    assert (out[:at] == 0xEE).all() and (out[at + got:] == 0xEE).all()


def test_the_bounce_is_taken_for_long_ranges_at_a_slow_distance(tmp_path, monkeypatch):
    bounced: list[tuple[int, int]] = []
    real = local_reads._read_bounced

    def spy(fd, view, start, stop, at):
        bounced.append((start, stop))
        return real(fd, view, start, stop, at)

    monkeypatch.setattr(local_reads, "_read_bounced", spy)
    store = LocalStore(tmp_path)
    value = bytes(range(256)) * 1024
    store.set("k", value)
    long_ = local_reads.BOUNCE_MIN_BYTES
    at1, at2, at3 = 16, 100 + 8 * PAGE_SIZE, 25 + 16 * PAGE_SIZE
    requests = [("k", [(0, long_, at1),              # distance 16, long: bounced
                       (100, 100 + long_, at2),       # distance 0: read directly
                       (5, 5 + long_ - 1, at3)])]     # distance 20 but short: directly
    out = empty_aligned(at3 + long_)
    assert store.read_ranges_into(requests, out) == [3 * long_ - 1]
    assert bounced == [(0, long_)]
    assert out[at1:at1 + long_].tobytes() == value[:long_]
    assert out[at2:at2 + long_].tobytes() == value[100:100 + long_]
    assert out[at3:at3 + long_ - 1].tobytes() == value[5:5 + long_ - 1]


def test_arrays_read_back_on_page_aligned_outputs(tmp_path) -> None:
    """Whole reads of raw chunks land in page-aligned outputs (read straight into them)."""
    a = zarr3c.create_array(LocalStore(tmp_path), shape=(8, 256, 256), dtype="uint16",
                            chunks=(2, 256, 256), compressors=None)
    data = np.arange(a.size, dtype="uint16").reshape(a.shape)
    a[...] = data
    got = a[...]
    np.testing.assert_array_equal(got, data)
    assert got.ctypes.data % PAGE_SIZE == 0


def test_bounced_parts_land_half_a_page_from_both_ends(tmp_path, monkeypatch) -> None:
    """Each bounced part is read half a page past its place in the file, so neither the
    kernel's copy nor the copy on to the destination is at a slow distance."""
    store = LocalStore(tmp_path)
    value = bytes(range(256)) * 4096
    store.set("k", value)
    seen: list[tuple[int, int]] = []
    real = local_reads.os.preadv

    def spy(fd, buffers, offset):
        (buf,) = buffers
        seen.append((ctypes.addressof(ctypes.c_char.from_buffer(buf)), offset))
        return real(fd, buffers, offset)

    monkeypatch.setattr(local_reads.os, "preadv", spy)
    out = empty_aligned(len(value) + PAGE_SIZE)
    start, stop, at = 100, 100 + 3 * local_reads._BOUNCE_BYTES + 5, 116
    (got,) = store.read_ranges_into([("k", [(start, stop, at)])], out)
    assert got == stop - start and out[at:at + got].tobytes() == value[start:stop]
    assert len(seen) >= 4
    dst = out.ctypes.data + at
    for address, offset in seen:
        assert not bad_offset(address, offset)
        assert (address - offset) % PAGE_SIZE == PAGE_SIZE // 2
        assert not bad_offset(dst + (offset - start), address)  # the copy on: bounce -> dst


def test_thread_scratch_is_reused_per_thread_and_large_requests_are_fresh() -> None:
    import threading

    from zarr3c import _buffers

    a = _buffers.thread_scratch(5000)
    b = _buffers.thread_scratch(3000)
    assert a.nbytes == 5000 and b.nbytes == 3000 and a.dtype == np.uint8
    assert b.ctypes.data == a.ctypes.data  # the same memory, handed out again
    other: list[int] = []
    t = threading.Thread(target=lambda: other.append(_buffers.thread_scratch(5000).ctypes.data))
    t.start()
    t.join()
    assert other[0] != a.ctypes.data  # another thread's own
    big = _buffers.thread_scratch(_buffers._SCRATCH_KEEP_BYTES + 1)
    assert big.nbytes == _buffers._SCRATCH_KEEP_BYTES + 1
    assert _buffers.thread_scratch(10).ctypes.data == a.ctypes.data  # not kept


@pytest.mark.usefixtures("python_path")  # (the Python path's own steps)
@pytest.mark.parametrize("compressor", ["zstd", "blosc"])
def test_chunks_decoded_into_thread_scratch_read_as_numpy(tmp_path, compressor) -> None:
    """Chunks decoded only to be copied out (small boxes, points, partial whole reads) go
    through the thread's scratch memory; one after another they never leak into each
    other's results."""
    from zarr3c import _buffers

    a = zarr3c.create_array(LocalStore(tmp_path), shape=(40, 30), dtype="int32",
                            chunks=(10, 10), compressors=[{"name": compressor}], fill_value=-1)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    a[...] = data
    a[10:20, 10:20] = -1  # a missing chunk
    data[10:20, 10:20] = -1
    calls: list[tuple[int, str]] = []
    real = _buffers.thread_scratch

    def spy(nbytes, slot="decoded"):
        calls.append((nbytes, slot))
        return real(nbytes, slot)

    import zarr3c.array.read.chunk as array_module
    old = array_module.thread_scratch
    array_module.thread_scratch = spy
    try:
        results = [a[i:i + 3, j:j + 2] for i in range(0, 38, 7) for j in range(0, 28, 9)]
        points = a.vindex[[0, 15, 39, 22], [0, 15, 29, 3]]
        part = a[5:35, 3:27]
    finally:
        array_module.thread_scratch = old
    expected = [data[i:i + 3, j:j + 2] for i in range(0, 38, 7) for j in range(0, 28, 9)]
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(points, data[[0, 15, 39, 22], [0, 15, 29, 3]])
    np.testing.assert_array_equal(part, data[5:35, 3:27])
    # decoded into a chunk's worth of scratch, from the stored bytes read into scratch too
    assert {n for n, slot in calls if slot == "decoded"} == {400}
    assert {slot for _, slot in calls} == {"decoded", "stored"}


# -- populate_beside: a fresh output's page faults taken by a pool thread during the read -------

_fileio = pytest.importorskip("zarr3c._kernels.fileio", reason="POSIX builds only")


class _SpiedPages:
    """``zarr3c._buffers._fileio`` with its populate calls recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []
        self.resident_pages = _fileio.resident_pages

    def populate(self, buf: np.ndarray, start: int, stop: int) -> int:
        self.calls.append((buf.nbytes, start, stop))
        return _fileio.populate(buf, start, stop)


def _fresh(nbytes: int) -> np.ndarray:
    import mmap

    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.uint8)


def test_populate_beside_helps_only_fresh_mid_sized_buffers(monkeypatch) -> None:
    from zarr3c import _buffers
    from zarr3c.concurrency import set_num_threads

    spy = _SpiedPages()
    monkeypatch.setattr(_buffers, "_fileio", spy)
    set_num_threads(2)
    try:
        fresh = _fresh(512 << 10)
        beside = _buffers.populate_beside(fresh, 4096)
        assert beside is not None
        beside.finish()
        # The caller's share on the caller's thread; the rest on the helper (or dropped
        # unstarted).
        assert (512 << 10, 0, 4096) in spy.calls
        assert sorted(spy.calls) in ([(512 << 10, 0, 4096)],
                                     [(512 << 10, 0, 4096), (512 << 10, 4096, 512 << 10)])
        assert not fresh.any()
        touched = np.ones(512 << 10, dtype=np.uint8)  # in memory already: nothing to take
        assert _buffers.populate_beside(touched) is None
        assert _buffers.populate_beside(_fresh(64 << 10)) is None  # too small to pay
        assert _buffers.populate_beside(_fresh(8 << 20)) is None  # numpy's huge pages
    finally:
        set_num_threads(None)
    set_num_threads(1)
    try:
        assert _buffers.populate_beside(_fresh(512 << 10)) is None
    finally:
        set_num_threads(None)


@pytest.mark.parametrize("compressors", [None, "zstd"])
@pytest.mark.parametrize("threads", [1, 2])
def test_chunk_reads_ask_for_their_output_populated_and_read_as_numpy(
        tmp_path, monkeypatch, compressors, threads) -> None:
    """Each read inside one chunk offers its fresh output to populate_beside: from the
    middle when the raw chunk is read straight into it, else all of it; the reads equal
    numpy whether a helper ran, was dropped unstarted, or was never started."""
    from zarr3c import _buffers
    from zarr3c.array.read import boxes as array_module
    from zarr3c.concurrency import set_num_threads

    data = np.random.default_rng(5).integers(0, 1000, (64, 64, 128), dtype=np.uint16)
    a = zarr3c.create_array(LocalStore(tmp_path / "a"), shape=data.shape, dtype="uint16",
                            chunks=(64, 64, 64), compressors=compressors)
    a[...] = data
    asked: list[tuple[int, int]] = []

    def spy(buf: np.ndarray, start: int = 0) -> Any:
        asked.append((buf.nbytes, start))
        return _buffers.populate_beside(buf, start)

    monkeypatch.setattr(array_module, "populate_beside", spy)
    whole = (slice(None), slice(None), slice(64, 128))
    part = (slice(None), slice(0, 40), slice(64, 128))
    set_num_threads(threads)
    try:
        outs = [(sel, a[sel]) for _ in range(4) for sel in (whole, part)]  # (kept: fresh)
    finally:
        set_num_threads(None)
    for sel, out in outs:
        np.testing.assert_array_equal(out, data[sel])
    nbytes = 64 * 64 * 64 * 2
    assert asked == [(nbytes, nbytes * 3 // 10 if compressors is None else 0),
                     (64 * 40 * 64 * 2, 0)] * 4
