"""The native chunk pipeline through Array: which reads take it, that they give what the
Python path gives, and that a read's Python calls do not grow with its chunks (the proxy,
on few cores, for reads that scale: each Python call between chunks is a GIL hand-off)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c._kernels import chunks as chunks_kernel
from zarr3c.array.read import native

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": True}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}
CHAINS: dict[str, dict[str, Any]] = {
    "raw": {"compressors": None},
    "zstd": {"compressors": [ZSTD]},
    "crc32c": {"compressors": ["crc32c"]},
    "zstd-crc32c": {"compressors": [ZSTD, "crc32c"]},
    "big-endian": {"compressors": None, "serializer": BIG},
    "big-endian-zstd": {"compressors": [ZSTD], "serializer": BIG},
    "blosc": {"compressors": [{"name": "blosc", "configuration": {"cname": "lz4"}}]},
    "gzip": {"compressors": [{"name": "gzip", "configuration": {"level": 1}}]},
    # transposed chunks, put back in C order by the kernel
    "transpose": {"filters": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}],
                  "compressors": None},
    "transpose-F-zstd-crc32c": {"filters": [{"name": "transpose", "configuration": {
        "order": "F"}}], "compressors": [ZSTD, "crc32c"], "serializer": BIG},
}


def count_calls(fn: Callable[[], object]) -> int:
    """The Python function calls ``fn()`` makes, in every thread (with the garbage of
    earlier tests collected first and no collection during the call: the finalizers a
    collection runs are not the read's calls)."""
    n = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal n
        if event == "call":
            n += 1

    gc.collect()
    gc.disable()
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        gc.enable()
    return n


def _count_calls_of(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[int]:
    """A list that gets an item per call of the native kernels ``names``."""
    calls: list[int] = []
    for name in names:
        kernel = getattr(chunks_kernel, name)
        monkeypatch.setattr(chunks_kernel, name,
                            lambda *args, kernel=kernel, **kw: calls.append(1) or kernel(
                                *args, **kw))
    return calls


def _store(kind: str, tmp_path: Path) -> zarr3c.Store:
    if kind == "local":
        return zarr3c.LocalStore(tmp_path / f"{kind}.zarr")
    if kind == "zip":
        return zarr3c.ZipStore(tmp_path / "a.zip", mode="w")
    return zarr3c.MemoryStore()


def _array(store: zarr3c.Store, edge: int, chunk: int, sharded: bool, chain: str,
           dtype: str = "uint16") -> tuple[zarr3c.Array, np.ndarray]:
    shape = (edge,) * 3
    a = zarr3c.create_array(store, name="a", shape=shape, dtype=dtype, chunks=(chunk,) * 3,
                            shards=(2 * chunk,) * 3 if sharded else None, fill_value=7,
                            **CHAINS[chain])
    data = (np.arange(edge**3) % 1000).astype(dtype).reshape(shape)
    data[: chunk * 2, : chunk * 2, : chunk * 2] = 7  # (a shard, or chunks, not stored)
    a[...] = data
    return a, data


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", ["raw", "zstd", "crc32c"])
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_whole_read_makes_as_many_python_calls_for_512_chunks_as_for_216(
        tmp_path: Path, kind: str, chain: str, sharded: bool) -> None:
    calls = []
    for edge in (24, 32):  # 6^3 and 8^3 chunks of 4^3 (inner chunks when sharded)
        a, data = _array(_store(kind, tmp_path / str(edge)), edge, 4, sharded, chain)
        np.testing.assert_array_equal(a[...], data)  # (warm: per-array facts kept)
        calls.append(count_calls(lambda a=a: a[...]))
    small, large = calls
    # (a few calls per call of the kernel: one per 256 shards)
    assert large <= small + 16, calls


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", ["raw", "zstd"])
def test_get_many_of_1000_boxes_makes_as_many_python_calls_over_more_chunks(
        tmp_path: Path, chain: str, sharded: bool) -> None:
    rng = np.random.default_rng(0)
    calls = []
    for edge in (16, 64):  # 4^3 and 16^3 chunks of 4^3
        a, data = _array(_store("local", tmp_path / str(edge)), edge, 4, sharded, chain)
        boxes = [tuple(slice(int(s), int(s) + 3) for s in rng.integers(0, edge - 3, 3))
                 for _ in range(1000)]
        for got, box in zip(a.get_many(boxes), boxes, strict=True):
            np.testing.assert_array_equal(got, data[box])
        calls.append(count_calls(lambda a=a, boxes=boxes: a.get_many(boxes)))
    small, large = calls
    # (a few dozen calls per call of the kernel, which takes 256 shards: 512 shards are 2)
    assert large <= small + 64, calls


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("index_crc", [True, False])
def test_shards_with_either_index_location_and_chain(tmp_path: Path, location: str,
                                                      index_crc: bool) -> None:
    index_codecs: list[Any] = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if index_crc:
        index_codecs.append({"name": "crc32c"})
    a = zarr3c.create_array(
        zarr3c.LocalStore(tmp_path / "s.zarr"), shape=(20, 20), dtype="float64",
        chunks=(10, 10), fill_value=np.nan,
        codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [5, 5], "index_location": location, "index_codecs": index_codecs,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ZSTD]}}])
    data = np.arange(400.0).reshape(20, 20)
    data[:5, :5] = np.nan
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[3:17, 2:19], data[3:17, 2:19])


def test_chains_without_a_native_decoder_take_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> None:
        raise AssertionError("the native pipeline was called")

    monkeypatch.setattr(chunks_kernel, "read_chunks", refuse)
    little = {"name": "bytes", "configuration": {"endian": "little"}}
    transpose = {"name": "transpose", "configuration": {"order": [1, 0]}}
    numcodecs_zlib = {"name": "numcodecs.zlib", "configuration": {"level": 1}}
    # (one transpose is the kernel's, two are not)
    for n, codecs in enumerate([[transpose, transpose, little], [little, numcodecs_zlib]]):
        a = zarr3c.create_array(zarr3c.LocalStore(tmp_path / str(n)),
                                shape=(12, 12), dtype="int32", chunks=(3, 3), codecs=codecs)
        data = np.arange(144, dtype="int32").reshape(12, 12)
        a[...] = data
        np.testing.assert_array_equal(a[...], data)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 23), st.integers(1, 24)), min_size=3, max_size=3),
       st.sampled_from(["raw", "zstd", "big-endian-zstd"]), st.booleans())
def test_boxes_equal_numpy_on_complex_and_swapped_data(tmp_path_factory: Any, box: Any,
                                                      chain: str, sharded: bool) -> None:
    a, data = _array(_store("local", tmp_path_factory.mktemp("c")), 24, 4, sharded, chain,
                     dtype="complex128")
    key = tuple(slice(lo, min(24, lo + n)) for lo, n in box)
    np.testing.assert_array_equal(a[key], data[key])


def test_read_async_gives_what_a_read_gives_and_its_errors(tmp_path: Path) -> None:
    a, data = _array(_store("local", tmp_path), 32, 4, True, "zstd")
    rng = np.random.default_rng(1)
    keys = [tuple(slice(int(s), int(s) + 5) for s in rng.integers(0, 27, 3))
            for _ in range(64)]
    futures = [a.read_async(key) for key in keys]
    for future, key in zip(futures, keys, strict=True):
        np.testing.assert_array_equal(future.result(), data[key])
    with pytest.raises(zarr3c.errors.BoundsCheckError):
        a.read_async(np.s_[40]).result()


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
def test_native_chains_are_read_natively_and_equal_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, chain: str,
        sharded: bool) -> None:
    """A box in part of a chunk (or shard) is read by one kernel call, a large box by the
    many-boxes path's; both as the Python path and numpy read them."""
    a, data = _array(_store(kind, tmp_path), 24, 4, sharded, chain, dtype=">i4")
    # inside a chunk; in one not stored; a whole chunk; a scalar; across two inner chunks;
    # most of the array
    keys = [(slice(5, 7), slice(9, 12), slice(13, 16)), (slice(1, 3), 2, slice(0, 4)),
            (slice(8, 12), slice(12, 16), slice(16, 20)), (21, 22, 23),
            (slice(9, 11), slice(10, 14), slice(17, 19)),
            (slice(1, 23), slice(2, None), slice(None, 21))]
    calls = _count_calls_of(monkeypatch, "read_chunks", "read_shards")
    got, per_key = [], []
    for key in keys:
        got.append(a[key])
        per_key.append(len(calls))
        calls.clear()
    # (a zip store has neither files nor values: its small shards are fetched whole)
    assert per_key[5] >= 1
    if kind == "zip" or chain == "raw":
        # (zip: the short paths read in Python; raw: the store reads the box, or the
        # shard's index and the box's spans, in one call of its own)
        assert per_key[:4] == [0] * 4
    else:  # (a whole chunk is decoded straight into the output as before)
        assert per_key[:5] == [1, 1, 1 if sharded else 0, 1, 1]
    monkeypatch.setattr(native, "enabled", False)
    for value, key in zip(got, keys, strict=True):
        np.testing.assert_array_equal(value, a[key])
        np.testing.assert_array_equal(value, data[key])


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
def test_a_damaged_chunk_under_a_small_box_is_reported_by_key(tmp_path: Path,
                                                               sharded: bool) -> None:
    store = zarr3c.LocalStore(tmp_path / "d.zarr")
    a, data = _array(store, 16, 4, sharded, "zstd")
    key = a.chunk_key((1, 1, 1) if sharded else (3, 3, 3))
    stored = store.get(key)
    assert stored is not None
    store.set(key, stored[:-5])
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match=key):
        a[13:15, 13:15, 13:15]
    np.testing.assert_array_equal(a[1:3, 5:7, 9:11], data[1:3, 5:7, 9:11])


@pytest.mark.parametrize(("sharded", "edge", "threads"),
                         [(False, 12, 8), (False, 3, 16), (True, 3, 16)],
                         ids=["chunked-large", "chunked-small", "sharded-small"])
def test_reads_from_many_threads_at_once_are_all_right(tmp_path: Path, sharded: bool,
                                                       edge: int, threads: int) -> None:
    a, data = _array(_store("local", tmp_path), 32, 4, sharded, "zstd")
    rng = np.random.default_rng(2)
    keys = [tuple(slice(int(s), int(s) + edge) for s in rng.integers(0, 32 - edge, 3))
            for _ in range(400)]
    with ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(a.__getitem__, keys))
    for got, key in zip(results, keys, strict=True):
        np.testing.assert_array_equal(got, data[key])


@pytest.mark.parametrize("how", ["truncated", "longer", "garbage"])
@pytest.mark.parametrize("chain", ["blosc", "gzip", "zstd", "crc32c",
                                   "transpose-F-zstd-crc32c"])
def test_a_damaged_chunk_is_reported_by_key_on_the_native_path(tmp_path: Path, chain: str,
                                                               how: str) -> None:
    store = zarr3c.LocalStore(tmp_path / "d.zarr")
    a, data = _array(store, 16, 4, False, chain)
    key = a.chunk_key((3, 3, 3))
    stored = store.get(key)
    assert stored is not None
    damaged = {"truncated": stored[:-5], "longer": stored + b"\0" * 7,
               "garbage": bytes(len(stored))}[how]
    store.set(key, damaged)
    if chain == "gzip" and how == "longer":
        # (numcodecs' gzip, as Python's, ignores zero bytes after the last member: the
        # native decoder leaves the chunk to the Python path, which reads it)
        np.testing.assert_array_equal(a[...], data)
        return
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match="c/3/3/3"):
        a[...]
    np.testing.assert_array_equal(a[:12], data[:12])  # (the others read as they are)


def test_gzip_members_back_to_back_decode_and_trailing_bytes_go_to_the_python_path(
        tmp_path: Path) -> None:
    import gzip

    store = zarr3c.LocalStore(tmp_path / "g.zarr")
    a, data = _array(store, 8, 4, False, "gzip")
    key = a.chunk_key((1, 1, 1))
    raw = data[4:8, 4:8, 4:8].tobytes()
    store.set(key, gzip.compress(raw[:50]) + gzip.compress(raw[50:]))  # two members
    np.testing.assert_array_equal(a[...], data)
    store.set(key, gzip.compress(raw) + b"junk")
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match="c/1/1/1"):
        a[...]


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", ["raw", "zstd", "big-endian-zstd", "gzip", "transpose",
                                   "transpose-F-zstd-crc32c"])
@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
def test_points_are_read_natively_and_equal_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, chain: str,
        sharded: bool) -> None:
    a, data = _array(_store(kind, tmp_path), 24, 4, sharded, chain, dtype="<f8")
    calls = _count_calls_of(monkeypatch, "read_elements", "read_shard_elements")
    rng = np.random.default_rng(3)
    points = tuple(rng.integers(0, 24, 2000) for _ in range(3))
    mask = data % 5 == 1
    got, got_mask = a.vindex[points], a.vindex[mask]
    assert calls  # (a zip store's small shards are fetched whole)
    monkeypatch.setattr(native, "enabled", False)
    np.testing.assert_array_equal(got, a.vindex[points])
    np.testing.assert_array_equal(got, data[points])
    np.testing.assert_array_equal(got_mask, data[mask])


def test_a_damaged_inner_chunk_under_points_is_reported_by_key(tmp_path: Path) -> None:
    store = zarr3c.LocalStore(tmp_path / "p.zarr")
    a, data = _array(store, 16, 4, True, "zstd")
    key = a.chunk_key((1, 1, 1))
    stored = store.get(key)
    assert stored is not None
    store.set(key, stored[:-30])  # (its index is gone: the shard is truncated)
    points = (np.array([0, 9, 15]), np.array([0, 10, 15]), np.array([1, 12, 15]))
    with pytest.raises(zarr3c.errors.ZarrError, match="c/1/1/1"):
        a.vindex[points]
    np.testing.assert_array_equal(a.vindex[np.array([0, 1]), np.array([0, 1]),
                                          np.array([1, 2])], data[[0, 1], [0, 1], [1, 2]])


# -- outer products: oindex and stepped slices ---------------------------------------------------

OUTER_KEYS = [
    (np.array([5, 0, 23, 5, 11]), slice(None), np.array([3, 2, 2, 17, 0, 9])),
    (slice(1, 23, 3), np.array([20, 1, 7]), slice(None, None, -2)),
    (slice(None, None, 5), 4, slice(2, 22, 7)),
    (np.array([True, False] * 12), slice(3, 9), np.array([23])),
]


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", ["raw", "zstd", "big-endian-zstd", "crc32c", "gzip",
                                   "transpose", "transpose-F-zstd-crc32c"])
@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
def test_outer_products_are_read_natively_and_equal_the_python_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, chain: str,
        sharded: bool) -> None:
    """``oindex`` (index arrays, booleans, ints, slices) and stepped basic slices: one call
    of the outer-product kernel, and what numpy and the Python path give."""
    a, data = _array(_store(kind, tmp_path), 24, 4, sharded, chain, dtype="<i4")
    calls = _count_calls_of(monkeypatch, "read_chunks_outer", "read_shards_outer")
    got = [a.oindex[key] for key in OUTER_KEYS] + [a[::3, 5, ::-4], a[1::2]]
    assert calls  # (a zip store's small shards are fetched whole)
    monkeypatch.setattr(native, "enabled", False)
    for key, value in zip(OUTER_KEYS, got, strict=False):
        np.testing.assert_array_equal(value, a.oindex[key])
        np.testing.assert_array_equal(value, data[np.ix_(*(
            np.arange(24)[k] if not isinstance(k, int) else np.array([k])
            for k in key))].reshape(value.shape))
    np.testing.assert_array_equal(got[-2], data[::3, 5, ::-4])
    np.testing.assert_array_equal(got[-1], data[1::2])


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("chain", ["raw", "zstd"])
def test_an_oindex_makes_as_many_python_calls_over_more_chunks(
        tmp_path: Path, chain: str, sharded: bool) -> None:
    """Planned in a few numpy calls whatever the chunks it touches; executed in one kernel
    call (of up to 256 shards): 64 chunks or 1,728 of them, the same Python calls (give or
    take a few)."""
    calls = []
    for edge in (16, 48):  # 4^3 and 12^3 chunks of 4^3 (inner chunks when sharded)
        a, data = _array(_store("local", tmp_path / str(edge)), edge, 4, sharded, chain)
        rng = np.random.default_rng(1)
        key = (rng.integers(0, edge, 40), rng.integers(0, edge, 40), slice(None, None, 3))
        np.testing.assert_array_equal(a.oindex[key], data[np.ix_(key[0], key[1],
                                                                  np.arange(edge)[::3])])
        calls.append(count_calls(lambda a=a, key=key: a.oindex[key]))
    small, large = calls
    assert large <= small + 16, calls


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_get_many_reads_its_stepped_selections_in_one_kernel_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, sharded: bool) -> None:
    """``get_many`` of selections that are not boxes (steps, ints, reversed), and of the
    boxes sharing chunks with them: one kernel call for them all, each chunk read once,
    what numpy gives."""
    a, data = _array(_store(kind, tmp_path), 24, 4, sharded, "zstd")
    keys = [np.s_[::2, 1:9, ::3], np.s_[1::3, 5, ::-1], np.s_[20:2:-5, :, 7],
            np.s_[2:6, 2:6, 2:6], np.s_[0, 0, 0:24:23]]
    calls: list[tuple[int, int]] = []  # per kernel call: its (inner) chunks, its pieces
    for name in ("read_chunks_outer", "read_shards_outer"):
        kernel = getattr(chunks_kernel, name)

        def spy(*args: Any, kernel: Any = kernel, **kw: Any) -> Any:
            calls.append((len(kw["firsts"]), len(kw["counts"])))
            return kernel(*args, **kw)

        monkeypatch.setattr(chunks_kernel, name, spy)
    got = a.get_many(keys)
    assert len(calls) == 1, calls
    ((nchunks, npieces),) = calls
    assert npieces > nchunks  # (chunks several selections touch, read once for them all)
    for value, key in zip(got, keys, strict=True):
        np.testing.assert_array_equal(value, data[key])


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
def test_a_selection_inside_one_chunk_takes_the_general_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sharded: bool) -> None:
    """One (inner) chunk has no hand-off between chunks to save: the general path reads it
    (``native.OUTER_MIN_CHUNKS``); two take the kernel."""
    a, data = _array(_store("local", tmp_path), 16, 4, sharded, "zstd")
    calls = _count_calls_of(monkeypatch, "read_chunks_outer", "read_shards_outer")
    np.testing.assert_array_equal(a.oindex[[9, 8, 9], 5:8, 4:8:2], data[[9, 8, 9], 5:8, 4:8:2])
    np.testing.assert_array_equal(a[8:12:2, 4, 4:8], data[8:12:2, 4, 4:8])
    assert not calls
    np.testing.assert_array_equal(a.oindex[[9, 3], 5:8, ::2], data[[9, 3], 5:8, ::2])
    assert calls


def test_a_plan_too_large_for_its_output_takes_the_python_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A long step over small chunks (an offset per element read, more than the output's
    quarter) is read by the general path, which keeps the step: the same values."""
    from zarr3c.array.read import plan as plan_module

    a = zarr3c.create_array("memory://", shape=(4096,), dtype="uint8", chunks=(2,))
    a[...] = np.arange(4096) % 251
    calls = _count_calls_of(monkeypatch, "read_chunks_outer")
    monkeypatch.setattr(plan_module, "OUTER_PLAN_MIN_BYTES", 0)
    np.testing.assert_array_equal(a[::3], (np.arange(4096) % 251)[::3])
    assert not calls
    monkeypatch.setattr(plan_module, "OUTER_PLAN_MIN_BYTES", 1 << 20)
    np.testing.assert_array_equal(a[::3], (np.arange(4096) % 251)[::3])
    assert calls


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
def test_a_damaged_chunk_under_an_oindex_is_reported_by_key(tmp_path: Path,
                                                            sharded: bool) -> None:
    """The kernel leaves a chunk (or shard) it cannot read to the Python path, which reads
    the rest of it again and names the key at fault; the other chunks read as they are."""
    store = zarr3c.LocalStore(tmp_path / "o.zarr")
    a, data = _array(store, 16, 4, sharded, "zstd")
    coords = (1, 1, 1) if sharded else (3, 3, 3)
    key = a.chunk_key(coords)
    stored = store.get(key)
    assert stored is not None
    store.set(key, stored[:-30])
    rows = np.array([15, 0, 9, 3])
    with pytest.raises(zarr3c.errors.ZarrError, match="/".join(map(str, coords))):
        a.oindex[rows, rows, ::2]
    np.testing.assert_array_equal(a.oindex[rows[1:], :5, ::2],
                                  data[np.ix_(rows[1:], np.arange(5), np.arange(16)[::2])])
