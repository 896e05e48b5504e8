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


def test_a_path_with_a_nul_byte_is_refused_before_any_read(tmp_path) -> None:
    """C would stop at the NUL and open another file: here, the one before it."""
    (tmp_path / "chunk").write_bytes(bytes(range(20)))
    path = bytes(tmp_path / "chunk") + b"\0.tmp"
    buf = np.full(8, GUARD, dtype=np.uint8)
    one = np.zeros(1, dtype=np.int64)
    calls = [
        ("read_range_into", lambda: fileio.read_range_into(path, buf, 0, 4, 0)),
        ("read_ranges_into", lambda: fileio.read_ranges_into(path, buf, one, one + 4, one)),
        ("read_ranges_into", lambda: fileio.read_ranges_into(path, buf, one[:0], one[:0],
                                                             one[:0])),
        ("read_tail_into", lambda: fileio.read_tail_into(path, buf)),
    ]
    for name, call in calls:
        with pytest.raises(ValueError, match=f"{name}: the path holds a NUL byte"):
            call()
    assert (buf == GUARD).all()


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


# -- read_files_elements: a batch of whole files, each one's elements copied out -----------------

def _batch_case(root, draw, nfiles: int, itemsize: int) -> dict:
    """Files of expected size, or one byte short or long, missing or a directory, and for
    each a run of in-bounds elements (all with the same expected size ``room``)."""
    room = itemsize * draw.draw(st.integers(2, 64))
    paths, sizes, counts, src, dst_at = [], [], [], [], []
    ndst = 200
    for k in range(nfiles):
        path = root / f"c{k}"
        kind = draw.draw(st.sampled_from(["ok", "ok", "ok", "short", "long", "missing", "dir"]))
        content = np.random.default_rng(k).integers(0, 256, room, dtype=np.uint8).tobytes()
        if kind == "ok":
            path.write_bytes(content)
        elif kind == "short":
            path.write_bytes(content[:-1])
        elif kind == "long":
            path.write_bytes(content + b"x")
        elif kind == "dir":
            path.mkdir()
        size = draw.draw(st.sampled_from([room, room, room - itemsize]))
        n = draw.draw(st.integers(0, 12))
        paths.append(bytes(path))
        sizes.append(size)
        counts.append(n)
        src += [itemsize * draw.draw(st.integers(0, size // itemsize - 1)) for _ in range(n)]
        dst_at += [itemsize * draw.draw(st.integers(0, ndst - 1)) for _ in range(n)]
    stops = np.cumsum(np.array(counts, dtype=np.int64))
    return {
        "paths": paths, "scratch_room": room, "sizes": np.array(sizes, dtype=np.int64),
        "run_starts": stops - np.array(counts, dtype=np.int64), "run_stops": stops,
        "src_offsets": np.array(src, dtype=np.int64), "ndst": ndst * itemsize,
        "dst_offsets": np.array(dst_at, dtype=np.int64),
    }


def _run_batch(fn, c: dict, itemsize: int) -> tuple[object, bytes]:
    scratch = np.full(c["scratch_room"] + 16, GUARD, dtype=np.uint8)
    dst = np.full(c["ndst"] + 16, GUARD, dtype=np.uint8)
    try:
        left = fn(c["paths"], scratch[:c["scratch_room"]], c["sizes"], c["run_starts"],
                  c["run_stops"], c["src_offsets"], dst[:c["ndst"]], c["dst_offsets"], itemsize)
    except ValueError:
        left = "ValueError"
    assert (scratch[c["scratch_room"]:] == GUARD).all()
    return left, dst.tobytes()  # (the guard bytes past dst included)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 6), st.sampled_from([1, 2, 4, 8, 3]), st.data())
def test_batch_agrees_with_the_reference(tmp_path_factory, nfiles: int, itemsize: int,
                                         draw) -> None:
    """Same files left out and the same bytes in dst as reading each file through ``os``
    and copy_elements of its run; files missing, a directory, or not of the expected size
    are left out whole."""
    c = _batch_case(tmp_path_factory.mktemp("b"), draw, nfiles, itemsize)
    got = _run_batch(fileio.read_files_elements, c, itemsize)
    assert got == _run_batch(ref.read_files_elements, c, itemsize)
    assert got[0] != "ValueError"


@pytest.mark.parametrize("change", [
    "nul", "size_past_scratch", "negative_size", "element_past_size", "element_past_dst",
    "negative_element", "run_past_offsets", "run_backwards", "lengths", "offset_lengths",
    "itemsize",
])
def test_batch_refusals_write_nothing(tmp_path, change: str) -> None:
    """Every argument the batch cannot honour raises ValueError before any file is read and
    leaves dst untouched; the reference refuses the same."""
    (tmp_path / "a").write_bytes(bytes(range(16)))
    (tmp_path / "b").write_bytes(bytes(range(16, 32)))
    args = {
        "paths": [bytes(tmp_path / "a"), bytes(tmp_path / "b")],
        "sizes": np.array([16, 16], dtype=np.int64),
        "run_starts": np.array([0, 2], dtype=np.int64),
        "run_stops": np.array([2, 4], dtype=np.int64),
        "src_offsets": np.array([0, 14, 2, 4], dtype=np.int64),
        "dst_offsets": np.array([0, 2, 4, 6], dtype=np.int64),
        "itemsize": 2,
    }
    if change == "nul":
        args["paths"][1] = bytes(tmp_path / "b") + b"\0x"
    elif change == "size_past_scratch":
        args["sizes"][1] = 17
    elif change == "negative_size":
        args["sizes"][0] = -1
    elif change == "element_past_size":
        args["sizes"][0] = 14  # element 1 reads bytes 14-15
    elif change == "element_past_dst":
        args["dst_offsets"][3] = 7
    elif change == "negative_element":
        args["src_offsets"][2] = -2
    elif change == "run_past_offsets":
        args["run_stops"][1] = 5
    elif change == "run_backwards":
        args["run_starts"][1] = 3
        args["run_stops"][1] = 2
    elif change == "lengths":
        args["sizes"] = args["sizes"][:1]
    elif change == "offset_lengths":
        args["dst_offsets"] = args["dst_offsets"][:3]
    elif change == "itemsize":
        args["itemsize"] = 0
    for fn in (fileio.read_files_elements, ref.read_files_elements):
        scratch = np.zeros(16, dtype=np.uint8)
        dst = np.full(8, GUARD, dtype=np.uint8)
        with pytest.raises(ValueError):
            fn(args["paths"], scratch, args["sizes"], args["run_starts"], args["run_stops"],
               args["src_offsets"], dst, args["dst_offsets"], args["itemsize"])
        assert (dst == GUARD).all()
        assert not scratch.any()


def test_batch_threads_at_once(tmp_path) -> None:
    """Threads each running batches over the same files, with their own scratch and dst."""
    paths = []
    for k in range(8):
        (tmp_path / f"c{k}").write_bytes(bytes([k]) * 4096)
        paths.append(bytes(tmp_path / f"c{k}"))
    sizes = np.full(8, 4096, dtype=np.int64)
    stops = np.arange(1, 9, dtype=np.int64) * 3
    src = np.tile(np.array([0, 2048, 4095], dtype=np.int64), 8)
    dst_offsets = np.arange(24, dtype=np.int64)

    def work(_: int) -> bool:
        scratch = np.empty(4096, dtype=np.uint8)
        dst = np.empty(24, dtype=np.uint8)
        ok = True
        for _ in range(40):
            dst[:] = 255
            left = fileio.read_files_elements(paths, scratch, sizes, stops - 3, stops, src, dst,
                                              dst_offsets, 1)
            ok &= left == [] and (dst == np.repeat(np.arange(8), 3)).all()
        return ok

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))


# -- read_files_ranges_into: ranges of many files, one call ----------------------------------------

@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 9000), min_size=0, max_size=4), st.data())
def test_many_files_agree_with_the_reference(tmp_path_factory, sizes: list[int], draw) -> None:
    """Each file's ranges read as read_ranges_into reads them, files missing or a directory
    included: the same (errno, bytes read, size) per file and the same buffer."""
    root = tmp_path_factory.mktemp("m")
    names = []
    for k, size in enumerate(sizes):
        (root / f"f{k}").write_bytes(
            np.random.default_rng(k).integers(0, 256, size, dtype=np.uint8).tobytes())
        names.append(bytes(root / f"f{k}"))
    (root / "d").mkdir()
    names += [bytes(root / "missing"), bytes(root / "d")]
    room = draw.draw(st.integers(0, 20_000))
    paths, counts, ranges = [], [], []
    for _ in range(draw.draw(st.integers(0, 7))):
        paths.append(draw.draw(st.sampled_from(names)))
        n = 0
        for _ in range(draw.draw(st.integers(0, 3))):
            start = draw.draw(st.integers(0, 10_000))
            stop = draw.draw(st.integers(start, start + 6000))
            if stop - start <= room:
                ranges.append((start, stop, draw.draw(st.integers(0, room - (stop - start)))))
                n += 1
        counts.append(n)
    stops = np.cumsum(np.array(counts, dtype=np.int64))
    runs = (stops - np.array(counts, dtype=np.int64), stops)
    got = np.full(room + 16, GUARD, dtype=np.uint8)
    want = got.copy()
    assert fileio.read_files_ranges_into(paths, got[:room], *runs, *_cols(ranges)) == \
        ref.read_files_ranges_into(paths, want[:room], *runs, *_cols(ranges))
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("change", ["nul", "run_past_ranges", "run_backwards", "lengths",
                                    "range_lengths", "range_past_buffer", "negative_at"])
def test_many_files_refusals_read_nothing(tmp_path, change: str) -> None:
    (tmp_path / "a").write_bytes(b"abcdefgh")
    paths = [bytes(tmp_path / "a"), bytes(tmp_path / "a")]
    run_starts, run_stops = np.array([0, 1], np.int64), np.array([1, 2], np.int64)
    starts, stops, ats = (np.array([0, 2], np.int64), np.array([2, 4], np.int64),
                          np.array([0, 2], np.int64))
    if change == "nul":
        paths[1] += b"\0"
    elif change == "run_past_ranges":
        run_stops[1] = 3
    elif change == "run_backwards":
        run_starts[1], run_stops[1] = 2, 1
    elif change == "lengths":
        run_stops = run_stops[:1]
    elif change == "range_lengths":
        ats = ats[:1]
    elif change == "range_past_buffer":
        stops[1] = 8
    elif change == "negative_at":
        ats[0] = -1
    for fn in (fileio.read_files_ranges_into, ref.read_files_ranges_into):
        buf = np.full(4, GUARD, dtype=np.uint8)
        with pytest.raises(ValueError):
            fn(paths, buf, run_starts, run_stops, starts, stops, ats)
        assert (buf == GUARD).all()


# -- populate and resident_pages: the page faults of a fresh output, taken beside a read ---------


def _fresh(nbytes: int) -> np.ndarray:
    """Page-aligned memory of its own mapping, never touched (a fresh read output)."""
    import mmap

    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.uint8)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40), st.data())
def test_populate_changes_no_byte_and_brings_the_pages_in(pages: int, draw) -> None:
    import mmap

    nbytes = pages * mmap.PAGESIZE
    whole = _fresh(nbytes + 2 * mmap.PAGESIZE)
    buf = whole[mmap.PAGESIZE:mmap.PAGESIZE + nbytes]  # (a page on each side, untouched)
    start = draw.draw(st.integers(0, nbytes))
    stop = draw.draw(st.integers(start, nbytes))
    written = draw.draw(st.lists(st.integers(0, nbytes - 1), max_size=5))
    content = np.random.default_rng(pages).integers(0, 256, len(written), dtype=np.uint8)
    buf[written] = content
    expected = np.zeros(whole.size, dtype=np.uint8)  # (reading ``whole`` would map pages)
    expected[mmap.PAGESIZE:mmap.PAGESIZE + nbytes][written] = content
    assert fileio.resident_pages(buf, start, stop)[1] == \
        ref.resident_pages(buf, start, stop)[1]
    assert fileio.populate(buf, start, stop) == ref.populate(buf, start, stop)
    # Every whole page of the range is now in memory, and the pages beside it are not.
    assert fileio.resident_pages(buf, start, stop) == ref.resident_pages(buf, start, stop)
    assert fileio.resident_pages(whole, 0, mmap.PAGESIZE) == (0, 1)
    assert fileio.resident_pages(whole, nbytes + mmap.PAGESIZE, nbytes + 2 * mmap.PAGESIZE) \
        == (0, 1)
    assert whole.tobytes() == expected.tobytes()  # no byte changed, inside or beside it


def test_a_fresh_buffer_has_no_resident_pages_and_a_written_one_all() -> None:
    import mmap

    buf = _fresh(8 * mmap.PAGESIZE)
    assert fileio.resident_pages(buf, 0, buf.size) == (0, 8)
    buf[::mmap.PAGESIZE] = 1
    assert fileio.resident_pages(buf, 0, buf.size) == (8, 8)
    # Only whole pages count: a range inside one page has none.
    assert fileio.resident_pages(buf, 1, mmap.PAGESIZE) == (0, 0)
    assert fileio.resident_pages(buf, 5, 5) == (0, 0)


@pytest.mark.parametrize("fn", ["populate", "resident_pages"])
@pytest.mark.parametrize(("start", "stop"), [(-1, 4), (5, 4), (0, 4097), (4097, 4097)])
def test_page_calls_refuse_a_range_outside_the_buffer(fn: str, start: int, stop: int) -> None:
    buf = np.full(4096, GUARD, dtype=np.uint8)
    with pytest.raises(ValueError, match=fn):
        getattr(fileio, fn)(buf, start, stop)
    with pytest.raises(ValueError, match=fn):
        getattr(ref, fn)(buf, start, stop)
    assert (buf == GUARD).all()


def test_page_calls_refuse_read_only_buffers() -> None:
    buf = np.zeros(8192, dtype=np.uint8)
    buf.flags.writeable = False
    for fn in (fileio.populate, fileio.resident_pages):
        with pytest.raises(ValueError):
            fn(buf, 0, 8192)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 20_000), st.integers(0, 24_000))
def test_a_tail_read_agrees_with_reading_through_os(tmp_path_factory, size: int,
                                                    room: int) -> None:
    path = tmp_path_factory.mktemp("f") / "shard"
    path.write_bytes(np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
                     .tobytes())
    got = np.full(room + 16, GUARD, dtype=np.uint8)
    want = got.copy()
    assert fileio.read_tail_into(bytes(path), got[:room]) == \
        ref.read_tail_into(bytes(path), want[:room])
    assert got.tobytes() == want.tobytes()  # (the guard bytes past the buffer included)


def test_a_tail_read_of_what_is_not_a_regular_file(tmp_path) -> None:
    buf = np.full(8, GUARD, dtype=np.uint8)
    missing = bytes(tmp_path / "missing")
    assert fileio.read_tail_into(missing, buf) == (errno.ENOENT, 0, -1)
    assert fileio.read_tail_into(bytes(tmp_path), buf) == (0, 0, -1)
    assert ref.read_tail_into(missing, buf) == (errno.ENOENT, 0, -1)
    assert ref.read_tail_into(bytes(tmp_path), buf) == (0, 0, -1)
    assert (buf == GUARD).all()


# -- read_shard_parts: a shard's index, then bytes of inner chunks through it -------------------

MISSING = 2**64 - 1


@st.composite
def shard_cases(draw) -> dict:
    """A shard file: random inner chunk bytes, an index at its end or start whose entries
    are stored, missing, or bad (half missing, outside the data, into the index), perhaps
    cut short; and parts to read through it."""
    nslots = draw(st.integers(1, 6))
    at_end = draw(st.booleans())
    index_n = 16 * nslots + draw(st.sampled_from([0, 4]))  # (+ a crc32c's 4 bytes)
    data_n = draw(st.integers(0, 3000))
    size = data_n + index_n
    data_lo = 0 if at_end else index_n
    entries = []
    for _ in range(nslots):
        kind = draw(st.sampled_from(["stored"] * 4 + ["missing", "half", "outside", "index"]))
        if kind == "missing":
            entries += [MISSING, MISSING]
        elif kind == "half":
            entries += [MISSING, draw(st.integers(0, 100))]
        elif kind == "outside":
            entries += [data_lo + draw(st.integers(0, data_n)), data_n + 1]
        elif kind == "index":
            entries += [0 if not at_end else data_n, draw(st.integers(1, 40))]
        else:
            offset = draw(st.integers(0, data_n))
            entries += [data_lo + offset, draw(st.integers(0, data_n - offset))]
    index = np.array(entries, dtype="<u8").view(np.uint8)
    index = np.concatenate([index, np.zeros(index_n - index.size, np.uint8)])
    data = np.random.default_rng(data_n).integers(0, 256, data_n, dtype=np.uint8)
    content = np.concatenate([data, index] if at_end else [index, data]).tobytes()
    content = content[:draw(st.sampled_from([size, size, size, draw(st.integers(0, size))]))]
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        lo = draw(st.integers(0, 60))
        parts.append((draw(st.integers(0, nslots - 1)), lo,
                      draw(st.one_of(st.just(-1), st.integers(lo, lo + 200)))))
    expect = draw(st.one_of(st.just(-1), st.integers(0, 50)))
    return dict(content=content, index_n=index_n, at_end=at_end, parts=parts, expect=expect,
                room=draw(st.integers(0, 4000)))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shard_cases())
def test_shard_parts_agree_with_reading_through_os(tmp_path_factory, case: dict) -> None:
    path = tmp_path_factory.mktemp("f") / "shard"
    path.write_bytes(case["content"])
    arr = np.array(case["parts"], dtype=np.int64).reshape(-1, 3)
    slots, los, his = (np.ascontiguousarray(arr[:, k]) for k in range(3))
    outs = []
    for impl in (fileio, ref):
        index = np.full(case["index_n"] + 8, GUARD, dtype=np.uint8)
        staging = np.full(case["room"] + 8, GUARD, dtype=np.uint8)
        ats = np.full(len(slots), -7, dtype=np.int64)
        lens = ats.copy()
        result = impl.read_shard_parts(bytes(path), index[:case["index_n"]], case["at_end"],
                                       slots, los, his, case["expect"],
                                       staging[:case["room"]], ats, lens)
        outs.append((result, index, staging, ats, lens))
    (got, *got_bufs), (want, *want_bufs) = outs
    assert got == want
    for g, w in zip(got_bufs, want_bufs, strict=True):
        if g.dtype == np.uint8:  # (nothing written past the index or the staging buffer)
            assert (g[-8:] == GUARD).all() and (w[-8:] == GUARD).all()
        if got[2] == 0:  # (else the parts before the problem may or may not be read)
            assert g.tobytes() == w.tobytes()
    if got[2] == 0 and len(slots):
        # The oracle: each stored part is its inner chunk's bytes, as the index says.
        index, staging, ats, lens = got_bufs
        entries = index[:case["index_n"]][:16 * (case["index_n"] // 16)].view("<u8")
        for slot, lo, hi, at, n in zip(slots, los, his, ats, lens, strict=True):
            offset, nbytes = int(entries[2 * slot]), int(entries[2 * slot + 1])
            if offset == MISSING:
                assert at == n == -1
                continue
            hi = nbytes if hi < 0 else hi
            assert n == hi - lo
            assert staging[at:at + n].tobytes() == case["content"][offset + lo:offset + hi]


@pytest.mark.parametrize("change", ["lengths", "too_many", "slot", "negative_slot", "range",
                                    "empty_index", "nul"])
def test_shard_parts_refusals_read_nothing(tmp_path, change: str) -> None:
    path = tmp_path / "shard"
    path.write_bytes(np.arange(64, dtype="<u8").tobytes())
    index = np.full(36, GUARD, dtype=np.uint8)
    staging = np.full(64, GUARD, dtype=np.uint8)
    slots, los, his = (np.array([v], dtype=np.int64) for v in (1, 0, -1))
    ats, lens = np.zeros(1, np.int64), np.zeros(1, np.int64)
    target = bytes(path)
    if change == "lengths":
        los = np.zeros(2, np.int64)
    elif change == "too_many":
        slots, los, his, ats, lens = (np.zeros(65, np.int64) for _ in range(5))
    elif change == "slot":
        slots = np.array([2], np.int64)  # (its entry would end at byte 48 of 36)
    elif change == "negative_slot":
        slots = np.array([-1], np.int64)
    elif change == "range":
        los, his = np.array([5], np.int64), np.array([4], np.int64)
    elif change == "empty_index":
        index = index[:0]
    else:
        target = bytes(path) + b"\0x"
    for impl in (fileio, ref):
        with pytest.raises(ValueError):
            impl.read_shard_parts(target, index, True, slots, los, his, -1, staging, ats,
                                  lens)
    assert (index == GUARD).all() and (staging == GUARD).all()


def test_shard_parts_of_what_is_not_a_regular_file(tmp_path) -> None:
    index = np.zeros(16, np.uint8)
    one = np.zeros(1, np.int64)
    for impl in (fileio, ref):
        assert impl.read_shard_parts(bytes(tmp_path / "missing"), index, True, one, one, one,
                                     -1, index, one.copy(), one.copy())[:2] == \
            (errno.ENOENT, -1)
        assert impl.read_shard_parts(bytes(tmp_path), index, True, one, one, one, -1, index,
                                     one.copy(), one.copy()) == (0, -1, 0)


# -- read_box_into: a box of a raw chunk file, read and copied out in one call --------------


@st.composite
def box_cases(draw: st.DrawFn) -> dict:
    nd = draw(st.integers(0, 4))
    shape = [draw(st.integers(1, 9)) for _ in range(nd)]
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    first = [draw(st.integers(0, n - 1)) for n in shape]
    counts = [draw(st.integers(1, n - f)) for n, f in zip(shape, first, strict=True)]
    # The box sits somewhere in a larger C-ordered output (a piece of a box across chunks),
    # or is the whole C-ordered output (dst_strides None).
    pad = [draw(st.integers(0, 3)) for _ in range(nd)]
    at = [draw(st.integers(0, p)) for p in pad]
    return {"shape": shape, "itemsize": itemsize, "first": first, "counts": counts,
            "outer": [c + p for c, p in zip(counts, pad, strict=True)], "at": at,
            "placed": draw(st.booleans())}


def _c_strides(shape: list[int], itemsize: int) -> list[int]:
    return [itemsize * int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(box_cases())
def test_a_box_read_agrees_with_the_reference_and_numpy(tmp_path_factory, case: dict) -> None:
    shape, itemsize, first, counts = case["shape"], case["itemsize"], case["first"], case["counts"]
    nbytes = itemsize * int(np.prod(shape, dtype=np.int64))
    chunk = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    path = tmp_path_factory.mktemp("box") / "chunk"
    path.write_bytes(chunk.tobytes())
    strides = np.array(_c_strides(shape, itemsize), dtype=np.int64)
    box = chunk.view(f"V{itemsize}").reshape(shape)[
        tuple(slice(f, f + c) for f, c in zip(first, counts, strict=True))]
    if case["placed"]:
        outer, at = case["outer"], case["at"]
        out_strides = _c_strides(outer, itemsize)
        offset = sum(a * s for a, s in zip(at, out_strides, strict=True))
        room = itemsize * int(np.prod(outer, dtype=np.int64))
        where = tuple(slice(a, a + c) for a, c in zip(at, counts, strict=True))
        kwargs: dict = {"dst_offset": offset, "dst_strides": out_strides}
    else:
        outer, room, where, kwargs = counts, box.nbytes, (), {}
    span = int(np.dot(np.array(counts, dtype=np.int64) - 1, strides)) + itemsize
    got = np.full(room + 16, GUARD, dtype=np.uint8)
    want = got.copy()
    staging = np.empty(span + 4096, dtype=np.uint8)
    assert fileio.read_box_into(bytes(path), nbytes, strides, first, counts, itemsize,
                                staging, got[:room], **kwargs) == (0, nbytes, 1)
    assert ref.read_box_into(bytes(path), nbytes, strides, first, counts, itemsize, staging,
                             want[:room], **kwargs) == (0, nbytes, 1)
    assert got.tobytes() == want.tobytes()  # (the guard bytes past the buffer included)
    expected = np.full(room, GUARD, dtype=np.uint8).view(f"V{itemsize}").reshape(outer)
    expected[where] = box
    assert got[:room].tobytes() == expected.tobytes()


@pytest.mark.parametrize("size", [-1, 1], ids=["shorter", "longer"])
def test_a_box_of_a_file_of_another_size_copies_nothing(tmp_path, size: int) -> None:
    path = tmp_path / "chunk"
    path.write_bytes(bytes(range(64 + size)))
    strides = np.array([16, 2], dtype=np.int64)
    for impl in (fileio, ref):
        dst = np.full(8, GUARD, dtype=np.uint8)
        assert impl.read_box_into(bytes(path), 64, strides, [1, 2], [2, 2], 2,
                                  np.empty(4200, np.uint8), dst) == (0, 64 + size, 0)
        assert (dst == GUARD).all()
        assert impl.read_box_into(bytes(tmp_path / "missing"), 64, strides, [1, 2], [2, 2],
                                  2, np.empty(4200, np.uint8), dst) == (errno.ENOENT, -1, 0)
        assert impl.read_box_into(bytes(tmp_path), 64, strides, [1, 2], [2, 2], 2,
                                  np.empty(4200, np.uint8), dst)[1:] == (-1, 0)
        assert (dst == GUARD).all()


@pytest.mark.parametrize("change", [
    "past_chunk", "past_dst", "dst_offset", "negative_start", "zero_count", "negative_stride",
    "negative_dst_stride", "lengths", "dst_lengths", "staging", "itemsize", "nul"])
def test_box_refusals_read_nothing(tmp_path, change: str) -> None:
    path = tmp_path / "chunk"
    path.write_bytes(bytes(range(64)))
    target, nbytes, itemsize = bytes(path), 64, 2
    strides = np.array([16, 2], dtype=np.int64)
    first, counts, dst_offset, dst_strides = [1, 2], [2, 2], 0, [4, 2]
    staging = np.full(4200, GUARD, dtype=np.uint8)
    dst = np.full(8, GUARD, dtype=np.uint8)
    if change == "past_chunk":
        first = [3, 7]  # (its last element would end at byte 66 of 64)
        counts = [1, 2]
    elif change == "past_dst":
        dst_strides = [6, 2]
    elif change == "dst_offset":
        dst_offset = 2
    elif change == "negative_start":
        first = [-1, 2]
    elif change == "zero_count":
        counts = [0, 2]
    elif change == "negative_stride":
        strides = np.array([16, -2], dtype=np.int64)
    elif change == "negative_dst_stride":
        dst_strides = [4, -2]
    elif change == "lengths":
        first = [1, 2, 0]
    elif change == "dst_lengths":
        dst_strides = [4]
    elif change == "staging":
        staging = staging[:4096 + 17]  # (the span is 18 bytes)
    elif change == "itemsize":
        itemsize = 0
    else:
        target = bytes(path) + b"\0x"
    for impl in (fileio, ref):
        with pytest.raises(ValueError):
            impl.read_box_into(target, nbytes, strides, first, counts, itemsize, staging, dst,
                               dst_offset, dst_strides)
    assert (dst == GUARD).all() and (staging == GUARD).all()
