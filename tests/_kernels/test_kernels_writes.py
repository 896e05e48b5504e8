"""``zarr3c._kernels.writes``: the native chunk pipeline's writes, whole chunks in one call.

Random plans, executed by the kernel (on 1 and 4 threads) and by its reference
(:func:`zarr3c._kernels._reference.write_chunks`): random chunk shapes and data types, each
chunk a region of a random value (strided, reversed, broadcast), edge chunks shorter than the
chunk shape, chains of byte swaps, zstd and CRC-32C checksums, destinations as files and as
buffers, chunks equal to the fill value skipped or written.  Both must give every chunk the
same status and the same encoded bytes; a third oracle is numpy: each encoding decodes to
the chunk's region padded with the fill value.

Plans that do not hold together raise ValueError in both.  Beside a file, the kernel, its
reference and ``LocalStore.set`` take the same temporary file slot, whatever killed and
live writers left there.
"""

from __future__ import annotations

import fcntl  # (the kernels are POSIX only)
import gzip
import math
import os
from pathlib import Path
from typing import Any

import google_crc32c
import numcodecs.blosc
import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarr3c  # noqa: F401  (binds libzstd for the kernel)
from zarr3c._kernels import _reference as ref
from zarr3c._kernels import fileio, writes, zstd_ctx
from zarr3c.array.write import byte_source
from zarr3c.stores import LocalStore
from zarr3c.stores.local import files as local_files

pytestmark = pytest.mark.skipif(not zstd_ctx.available(), reason="no libzstd bound")

IMPLS = [pytest.param(writes, id="cython"), pytest.param(ref, id="reference")]


def _decode(data: bytes, compressor: int, checksums: int, swap: int, dtype: np.dtype,
            shape: tuple[int, ...], order: list[int] | None) -> np.ndarray:
    """An encoding decoded with numcodecs and google-crc32c (independent of both), and
    numpy's transpose back where a transpose codec of ``order`` laid it out."""
    for _ in range(checksums):
        assert google_crc32c.value(data[:-4]) == int.from_bytes(data[-4:], "little")
        data = data[:-4]
    if compressor == writes.ZSTD:
        data = bytes(numcodecs.zstd.decompress(data))
    elif compressor == writes.BLOSC:
        data = bytes(numcodecs.blosc.decompress(data))
    elif compressor == writes.GZIP:
        data = gzip.decompress(data)
    if order is not None:
        arr = np.frombuffer(data, dtype=dtype).reshape([shape[d] for d in order])
        arr = arr.transpose(np.argsort(order))
    else:
        arr = np.frombuffer(data, dtype=dtype).reshape(shape)
    return arr.byteswap() if swap > 1 else arr


@st.composite
def plans(draw: st.DrawFn) -> dict:
    ndim = draw(st.integers(1, 3))
    chunk = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    dtype = np.dtype(draw(st.sampled_from(["u1", "<u2", "<i4", "<f8", "<c8"])))
    nchunks = draw(st.integers(0, 5))
    value = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).integers(
        0, 3, size=tuple(c * 2 for c in chunk)).astype(dtype)
    if draw(st.booleans()):
        value = value[tuple(slice(None, None, -1) for _ in range(ndim))]
    if draw(st.booleans()):  # a broadcast value: zero strides
        value = np.broadcast_to(value[(slice(0, 1),) * ndim], value.shape)
    counts, starts, regions = [], [], []
    for _ in range(nchunks):
        n = tuple(draw(st.integers(1, c)) for c in chunk)
        start = tuple(draw(st.integers(0, v - k)) for v, k in zip(value.shape, n, strict=True))
        counts.append(n)
        starts.append(start)
        regions.append(value[tuple(slice(s, s + k) for s, k in zip(start, n, strict=True))])
    compressor = draw(st.sampled_from([writes.NONE, writes.ZSTD, writes.BLOSC, writes.GZIP]))
    blosc = None  # (cname, shuffle, typesize, blocksize: some blocks of a few bytes)
    if compressor == writes.BLOSC:
        blosc = (draw(st.sampled_from([b"lz4", b"zstd", b"blosclz", b"zlib"])),
                 draw(st.integers(0, 2)), draw(st.sampled_from([1, 2, 4, 8, 16])),
                 draw(st.sampled_from([0, 16, 64])))
    swap = draw(st.sampled_from([1, dtype.itemsize])) if dtype.kind != "c" else \
        draw(st.sampled_from([1, dtype.itemsize // 2]))
    order = draw(st.one_of(st.none(), st.permutations(range(ndim))))  # (a transpose codec)
    return {"dtype": dtype, "chunk": chunk, "value": value, "counts": counts,
            "starts": starts, "regions": regions, "compressor": compressor, "swap": swap,
            "order": order, "blosc": blosc,
            "checksums": draw(st.integers(0, 2)), "skip_empty": draw(st.booleans()),
            "level": draw(st.integers(-3, 5) if compressor == writes.ZSTD
                          else st.integers(0, 9)),
            "zstd_checksum": draw(st.booleans())}


def _args(plan: dict) -> dict:
    """The kernel's arguments (but the destinations) for a plan: the value's bytes as
    writes take them (``byte_source``), each region's offset and the shared strides."""
    src, strides = byte_source(plan["value"])
    offsets = [sum(a * b for a, b in zip(start, strides, strict=True))
               for start in plan["starts"]]
    n, ndim = len(plan["starts"]), plan["value"].ndim
    itemsize = plan["value"].itemsize
    return {"src": src, "src_offsets": np.array(offsets, dtype=np.int64),
            "src_strides": np.array(strides, dtype=np.int64),
            "counts": np.array(plan["counts"], dtype=np.int64).reshape(n, ndim),
            "chunk_shape": np.array(plan["chunk"], dtype=np.int64),
            "itemsize": itemsize, "fill": np.zeros(itemsize, dtype=np.uint8),
            "skip_empty": plan["skip_empty"], "compressor": plan["compressor"],
            "level": plan["level"], "zstd_checksum": plan["zstd_checksum"],
            "checksums": plan["checksums"], "swap": plan["swap"],
            "order": None if plan["order"] is None else np.array(plan["order"],
                                                                 dtype=np.int64),
            "blosc": plan["blosc"]}


def _expected(plan: dict, c: int) -> np.ndarray:
    chunk = np.zeros(plan["chunk"], dtype=plan["dtype"])
    chunk[tuple(slice(0, k) for k in plan["counts"][c])] = plan["regions"][c]
    return chunk


@settings(max_examples=150, deadline=None)
@given(plan=plans(), nthreads=st.sampled_from([1, 4]))
def test_buffers_agree_with_reference_and_numpy(plan: dict, nthreads: int) -> None:
    args = _args(plan)
    n = len(plan["regions"])
    nbytes = math.prod(plan["chunk"]) * plan["dtype"].itemsize
    results = []
    for impl in (writes, ref):
        cap = impl.encoded_cap(nbytes, plan["compressor"], plan["checksums"])
        dests = [bytearray(cap) for _ in range(n)]
        sizes, status = np.zeros(n, np.int64), np.full(n, 9, np.int8)
        impl.write_chunks(dests, False, nthreads=nthreads, sizes=sizes, status=status,
                          **args)
        results.append(([bytes(d[:k]) if s == writes.WRITTEN else None
                         for d, k, s in zip(dests, sizes, status, strict=True)],
                        status.tolist()))
    assert results[0] == results[1]
    for c, (data, s) in enumerate(zip(*results[0], strict=True)):
        expected = _expected(plan, c)
        if s == writes.EMPTY:
            assert plan["skip_empty"] and not expected.any()
            continue
        assert s == writes.WRITTEN
        assert plan["skip_empty"] is False or expected.any()
        got = _decode(data, plan["compressor"], plan["checksums"], plan["swap"],
                      plan["dtype"], plan["chunk"], plan["order"])
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=40, deadline=None)
@given(plan=plans())
def test_files_agree_with_reference(plan: dict, tmp_path_factory: pytest.TempPathFactory
                                    ) -> None:
    args = _args(plan)
    n = len(plan["regions"])
    got = []
    for impl in (writes, ref):
        root = tmp_path_factory.mktemp("w")
        paths = [str(root / "c" / str(c) / "0").encode() for c in range(n)]
        sizes, status = np.zeros(n, np.int64), np.full(n, 9, np.int8)
        impl.write_chunks(paths, True, nthreads=4, sizes=sizes, status=status, **args)
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        got.append((status.tolist(), files,
                    [Path(os.fsdecode(p)).read_bytes() if s == writes.WRITTEN else None
                     for p, s in zip(paths, status, strict=True)]))
    assert got[0] == got[1]
    assert not any(".zarr3c-tmp-" in f for f in got[0][1])  # no temporary file left


def test_a_directory_that_is_a_file_fails_that_chunk_alone(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "1").write_bytes(b"in the way")
    src = np.arange(8, dtype=np.uint8)
    paths = [str(tmp_path / "c" / "0" / "0").encode(), str(tmp_path / "c" / "1" / "0").encode()]
    sizes, status = np.zeros(2, np.int64), np.zeros(2, np.int8)
    writes.write_chunks(paths, True, src, np.array([0, 4]), np.array([1]),
                        np.array([[4], [4]]), np.array([4]), 1, b"\0", False, writes.NONE,
                        0, False, 0, 1, 2, sizes, status)
    assert status.tolist() == [writes.WRITTEN, writes.FAILED_IO]
    assert (tmp_path / "c" / "0" / "0").read_bytes() == bytes(range(4))
    assert (tmp_path / "c" / "1").read_bytes() == b"in the way"
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["0", "1"]


def test_an_existing_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_bytes(b"old contents, longer than the new")
    sizes, status = np.zeros(1, np.int64), np.zeros(1, np.int8)
    writes.write_chunks([str(path).encode()], True, np.arange(3, dtype=np.uint8),
                        np.array([0]), np.array([1]), np.array([[3]]), np.array([3]), 1,
                        b"\0", True, writes.NONE, 0, False, 1, 1, 1, sizes, status)
    data = path.read_bytes()
    assert data[:3] == bytes(range(3)) and len(data) == 7 == sizes[0]
    assert google_crc32c.value(data[:3]) == int.from_bytes(data[3:], "little")
    assert os.listdir(tmp_path) == ["k"]


def _write_one(impl, path: Path, data: bytes) -> int:  # type: ignore[no-untyped-def]
    """``data`` as the file ``path`` through ``impl.write_chunks`` (one raw chunk): its status."""
    sizes, status = np.zeros(1, np.int64), np.full(1, 9, np.int8)
    n = len(data)
    impl.write_chunks([os.fsencode(path)], True, np.frombuffer(data, np.uint8), np.array([0]),
                      np.array([1]), np.array([[n]]), np.array([n]), 1, b"\0", False,
                      writes.NONE, 0, False, 0, 1, 1, sizes, status)
    return int(status[0])


@settings(max_examples=40, deadline=None)
@given(states=st.lists(st.sampled_from(["absent", "dead", "live"]), max_size=6),
       name=st.sampled_from(["0", "c" * 70]))
def test_writers_take_the_first_temporary_slot_free_or_left_by_a_killed_writer(
        states: list[str], name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    # Slot i beside the key holds nothing, a killed writer's leftover (no flock), or a live
    # writer's file (flock-ed here, as writers hold theirs).  The kernel, its reference and
    # LocalStore.set must all remove the leftover in the first slot not held (or take the
    # free one), pass live ones untouched, and leave the same files.
    data = bytes(range(1, 8))
    got = []
    for impl in (writes, ref, "store"):
        root = tmp_path_factory.mktemp("slots")
        key = root / "c" / name
        key.parent.mkdir()
        held, inodes = [], {}
        try:
            for slot, state in enumerate(states):
                if state == "absent":
                    continue
                tmp = Path(local_files.temp_path(str(key), slot))
                tmp.write_bytes(f"{state} {slot}".encode())
                if state == "live":
                    held.append(os.open(tmp, os.O_RDONLY))
                    fcntl.flock(held[-1], fcntl.LOCK_SH)
                    inodes[tmp.name] = tmp.stat().st_ino
            if impl == "store":
                LocalStore(root).set(f"c/{name}", data)
                status = writes.WRITTEN
            else:
                status = _write_one(impl, key, data)
        finally:
            for fd in held:
                os.close(fd)
        assert {n: (key.parent / n).stat().st_ino for n in inodes} == inodes
        got.append((status, sorted((p.name, p.read_bytes()) for p in key.parent.iterdir())))
    assert got[0] == got[1] == got[2]
    first = next((i for i, s in enumerate(states) if s != "live"), len(states))
    expected = [(name, data)] + [
        (os.path.basename(local_files.temp_path(name, i)), f"{s} {i}".encode())
        for i, s in enumerate(states) if s == "live" or (s == "dead" and i > first)]
    assert got[0] == (writes.WRITTEN, sorted(expected))


def test_the_temporary_slots_agree() -> None:
    assert fileio.TEMP_SLOTS == ref.TEMP_SLOTS == local_files.TEMP_SLOTS


def _call(impl, **change):  # type: ignore[no-untyped-def]
    args = {"dests": [bytearray(16)], "paths": False,
            "src": np.arange(8, dtype=np.uint8), "src_offsets": np.array([0]),
            "src_strides": np.array([1]), "counts": np.array([[4]]),
            "chunk_shape": np.array([4]), "itemsize": 1, "fill": b"\0", "skip_empty": False,
            "compressor": writes.NONE, "level": 0, "zstd_checksum": False, "checksums": 0,
            "swap": 1, "nthreads": 1, "sizes": np.zeros(1, np.int64),
            "status": np.zeros(1, np.int8)}
    args.update(change)
    impl.write_chunks(**args)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("change", [
    {"src_offsets": np.array([5])},  # the region runs past src
    {"src_strides": np.array([4])},
    {"counts": np.array([[5]])},  # more than the chunk shape
    {"counts": np.array([[0]])},
    {"chunk_shape": np.array([4, 1])},  # dimensions differ
    {"dests": [bytearray(3)]},  # a buffer too small
    {"dests": [b"a\0b"], "paths": True},  # not a path
    {"dests": [bytearray(16), bytearray(16)]},  # lengths differ
    {"fill": b"\0\0"},
    {"compressor": 7},
    {"checksums": 9},
    {"swap": 3},
    {"order": np.array([1])},  # not a permutation of the chunk's axes
    {"order": np.array([0, 1])},
    {"compressor": writes.BLOSC},  # without its parameters
    {"compressor": writes.BLOSC, "blosc": ("lz4", 1, 1, 0)},  # a str name
    {"compressor": writes.BLOSC, "blosc": (b"lz4", 3, 1, 0)},  # no such shuffle
    {"compressor": writes.BLOSC, "blosc": (b"lz4", 1, 0, 0)},  # typesize 0
    {"compressor": writes.BLOSC, "blosc": (b"lz4", 1, 1, 0), "level": 10},
    {"compressor": writes.GZIP, "level": 10},
])
def test_plans_that_do_not_hold_together_raise(impl, change) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        _call(impl, **change)


@pytest.mark.parametrize("impl", IMPLS)
def test_a_plan_that_holds_together_runs(impl) -> None:  # type: ignore[no-untyped-def]
    dests = [bytearray(16)]
    _call(impl, dests=dests)
    assert bytes(dests[0][:4]) == bytes(range(4))


# -- shards ------------------------------------------------------------------------------------


@st.composite
def shard_plans(draw: st.DrawFn) -> dict:
    plan = draw(plans())
    ndim = len(plan["chunk"])
    per = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    inner = tuple(max(1, c // p) for c, p in zip(plan["chunk"], per, strict=True))
    plan["inner"] = inner
    plan["shard"] = tuple(i * p for i, p in zip(inner, per, strict=True))
    # regions at most a shard: clip the drawn counts
    plan["counts"] = [tuple(min(k, s) for k, s in zip(c, plan["shard"], strict=True))
                      for c in plan["counts"]]
    plan["regions"] = [r[tuple(slice(0, k) for k in c)]
                       for r, c in zip(plan["regions"], plan["counts"], strict=True)]
    plan["index_at_start"] = draw(st.booleans())
    plan["index_checksum"] = draw(st.booleans())
    return plan


def _read_shard(data: bytes, plan: dict) -> np.ndarray:
    """A shard's elements from its bytes: the index parsed, each inner chunk decoded
    independently of the kernels (numcodecs, google-crc32c)."""
    per = [s // i for s, i in zip(plan["shard"], plan["inner"], strict=True)]
    n = math.prod(per)
    index_nbytes = 16 * n + 4 * plan["index_checksum"]
    index = data[:index_nbytes] if plan["index_at_start"] else data[len(data) - index_nbytes:]
    if plan["index_checksum"]:
        assert google_crc32c.value(index[:-4]) == int.from_bytes(index[-4:], "little")
    entries = np.frombuffer(index[:16 * n], dtype="<u8").reshape(n, 2)
    out = np.zeros(plan["shard"], dtype=plan["dtype"])
    for j, coords in enumerate(np.ndindex(*per)):
        offset, size = (int(v) for v in entries[j])
        if offset == size == 2**64 - 1:
            continue
        chunk = _decode(data[offset:offset + size], plan["compressor"], plan["checksums"],
                        plan["swap"], plan["dtype"], plan["inner"], plan["order"])
        out[tuple(slice(c * i, (c + 1) * i)
                  for c, i in zip(coords, plan["inner"], strict=True))] = chunk
    return out


def _shard_room(plan: dict) -> int:
    """The most bytes a shard of ``plan`` takes: its index and every inner chunk's cap."""
    per = math.prod(s // i for s, i in zip(plan["shard"], plan["inner"], strict=True))
    nbytes = math.prod(plan["inner"]) * np.dtype(plan["dtype"]).itemsize
    return (16 * per + 4 * plan["index_checksum"]
            + per * writes.encoded_cap(nbytes, plan["compressor"], plan["checksums"]))


@settings(max_examples=60, deadline=None)
@given(plan=shard_plans(), nthreads=st.sampled_from([1, 4]),
       into=st.sampled_from(["files", "buffers", "short buffers"]))
def test_shards_agree_with_reference_and_numpy(
        plan: dict, nthreads: int, into: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    args = _args(plan)
    del args["chunk_shape"]
    n = len(plan["regions"])
    # (short buffers: a byte short of the largest a shard may take, so that a shard of
    # incompressible inner chunks does not fit and is a failure, not an overrun)
    room = _shard_room(plan) - (into == "short buffers")
    got = []
    for impl in (writes, ref):
        root = tmp_path_factory.mktemp("s")
        if into == "files":
            dests: list[Any] = [str(root / str(s)).encode() for s in range(n)]
        else:
            dests = [bytearray(room) for _ in range(n)]
        sizes, status = np.zeros(n, np.int64), np.full(n, 9, np.int8)
        impl.write_shards(dests, shard_shape=np.array(plan["shard"], dtype=np.int64),
                          chunk_shape=np.array(plan["inner"], dtype=np.int64),
                          index_at_start=plan["index_at_start"], arena=impl.EncodeArena(),
                          index_checksum=plan["index_checksum"], nthreads=nthreads,
                          sizes=sizes, status=status, paths=into == "files", **args)
        got.append((status.tolist(), [
            (Path(os.fsdecode(d)).read_bytes() if into == "files" else bytes(d[:size]))
            if s == writes.WRITTEN else None
            for d, s, size in zip(dests, status, sizes.tolist(), strict=True)],
            sorted(os.listdir(root)), sizes.tolist()))
    assert got[0] == got[1]
    if into == "buffers":  # (room enough for any shard)
        assert all(s in (writes.WRITTEN, writes.EMPTY) for s in got[0][0])
    if into == "short buffers":  # (only a shard of all its inner chunks at their cap fails)
        assert all(s in (writes.WRITTEN, writes.EMPTY, writes.FAILED_ENCODE)
                   for s in got[0][0])
    for s, data in enumerate(got[0][1]):
        expected = np.zeros(plan["shard"], dtype=plan["dtype"])
        expected[tuple(slice(0, k) for k in plan["counts"][s])] = plan["regions"][s]
        if got[0][0][s] == writes.FAILED_ENCODE:  # (a shard larger than its buffer)
            assert into == "short buffers" and got[0][3][s] > room
            continue
        if data is None:
            assert got[0][0][s] == writes.EMPTY and plan["skip_empty"] and not expected.any()
            continue
        np.testing.assert_array_equal(_read_shard(data, plan), expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_shard_plans_that_do_not_hold_together_raise(impl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = {"dests": [str(tmp_path / "s").encode()],
            "src": np.arange(8, dtype=np.uint8), "src_offsets": np.array([0]),
            "src_strides": np.array([1]), "counts": np.array([[4]]),
            "shard_shape": np.array([4]), "chunk_shape": np.array([3]), "itemsize": 1,
            "fill": b"\0", "skip_empty": False, "compressor": writes.NONE, "level": 0,
            "zstd_checksum": False, "checksums": 0, "swap": 1, "index_at_start": False,
            "index_checksum": False, "arena": impl.EncodeArena(), "nthreads": 1, "sizes": np.zeros(1, np.int64),
            "status": np.zeros(1, np.int8)}
    with pytest.raises(ValueError):  # 3 does not divide 4
        impl.write_shards(**args)
    args["chunk_shape"] = np.array([2])
    args["counts"] = np.array([[5]])  # more than the shard
    with pytest.raises(ValueError):
        impl.write_shards(**args)
    args["counts"] = np.array([[4]])
    impl.write_shards(**args)
    assert (tmp_path / "s").read_bytes()[:4] == bytes(range(4))
