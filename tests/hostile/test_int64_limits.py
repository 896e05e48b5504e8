"""Huge declared chunks, shards and arrays (issue 35, points 1, 4 and 5): reads of chunks
not stored take no memory of their declared size, sizes beyond int64 are refused (or
computed in Python) before any kernel sees them, and what cannot be held is refused with
zarr3c's errors (``ChunkTooLargeError``, ``SelectionTooLargeError``), never numpy's
MemoryError, ValueError or OverflowError.

The probes run under a 1 GiB address-space cap (``probe``) and bound the peak memory, so
an allocation of the declared size fails inside the probe, not on the test machine."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.array.geometry import int64_grid
from zarr3c.chunk_grids import RectilinearChunkGrid
from zarr3c.chunk_grids.chunk_sizes import LAZY_SIZES_MIN, RepeatedSizes, repeated_sizes
from zarr3c.errors import SelectionTooLargeError

#: The most a probe may hold at its peak (the interpreter, numpy and zarr3c take ~100 MiB).
PEAK_MIB = 400

STORES = ["memory", "local"]

#: Opens the probe: ``make(store_kind, **create_array kwargs)``, fill value 5, uint8.
_SETUP = """
import tempfile
import numpy as np
import zarr3c

def make(kind, **kwargs):
    kwargs.setdefault("dtype", "uint8")
    kwargs.setdefault("fill_value", 5)
    store = "memory://" if kind == "memory" else tempfile.mkdtemp()
    return zarr3c.create_array(store, **kwargs)

def outcome(f):
    try:
        value = f()
    except Exception as exc:
        return (type(exc).__module__, type(exc).__name__, getattr(exc, "key", None))
    if isinstance(value, list):
        return [np.asarray(v).tolist() for v in value]
    return np.asarray(value).tolist()
"""


def _run(probe: Callable[..., Any], body: str) -> Any:
    """Run ``body`` after :data:`_SETUP` in a probe; its ``result`` (a literal), checked to
    have ended without an error and within :data:`PEAK_MIB`."""
    out = probe(_SETUP + body)
    assert out.error is None, out.traceback
    assert out.peak_mib < PEAK_MIB, out
    return ast.literal_eval(out.result)


def _reads(shape_expr: str) -> str:
    """Probe code: ``result`` is the outcome of every kind of read of the array ``a`` at
    its first and last element (``shape_expr``: its shape)."""
    return f"""
shape = {shape_expr}
first, last = (0,) * len(shape), tuple(n - 1 for n in shape)
result = [outcome(f) for f in (
    lambda: a[first], lambda: a[last],
    lambda: a[tuple(slice(-2, None) for _ in shape)],
    lambda: a[tuple(slice(None, None, max(1, n // 3)) for n in shape)],
    lambda: a.oindex[tuple([0, n - 1] for n in shape)],
    lambda: a.vindex[tuple([0, n - 1] for n in shape)],
    lambda: a.get_many([tuple(slice(0, 2) for _ in shape), last]),
)]
"""


def _fill_reads(shape: tuple[int, ...]) -> list[Any]:
    """What :func:`_reads` gives for an array of ``shape`` holding only the fill value 5."""
    ndim = len(shape)

    def full(counts: list[int]) -> Any:
        return np.full(counts, 5, dtype="uint8").tolist()

    return [5, 5, full([2] * ndim),
            full([len(range(0, n, max(1, n // 3))) for n in shape]),
            full([2] * ndim), [5, 5], [full([2] * ndim), 5]]


# -- point 1: no memory of the declared size before a chunk is known stored ----------------------


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("chunks", [2**40, 2**63 - 1], ids=["2**40", "2**63-1"])
@pytest.mark.parametrize("compressors", ["auto", None], ids=["zstd", "raw"])
def test_reading_missing_chunks_of_a_huge_declared_size(probe, store, chunks,
                                                        compressors) -> None:
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), chunks=({chunks},), compressors={compressors!r})
""" + _reads("(8,)") + """
result.append(outcome(lambda: a[...]))
""")
    assert result == [*_fill_reads((8,)), [5] * 8]


@pytest.mark.parametrize("store", STORES)
def test_a_point_of_a_huge_array_of_large_chunks(probe, store) -> None:
    """``a[2**61, 5, 3]`` of a ``(2**62, 2**62, 12)`` array of ``(2**20, 2**20, 12)``
    chunks (13.5 TiB each) reads the fill value without a chunk's memory."""
    result = _run(probe, f"""
a = make({store!r}, shape=(2**62, 2**62, 12), chunks=(2**20, 2**20, 12))
result = [outcome(lambda: a[2**61, 5, 3]), outcome(lambda: a[2**61:2**61 + 2, 5, 3:5])]
""" + _reads("a.shape").replace("result = [", "result += ["))
    assert result == [5, [[5, 5], [5, 5]], *_fill_reads((2**62, 2**62, 12))]


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("shards", [(2**40, 2**30), (2**40, 2), (2**62, 2)],
                         ids=["2**40-of-2**30", "2**40-of-2", "2**62-of-2"])
def test_reading_a_missing_shard_of_a_huge_declared_size(probe, store, shards) -> None:
    """Neither the shard's size nor its index's (8 TiB for inner chunks of 2 in 2**40;
    beyond int64 in 2**62) is taken before the shard is known stored, on every read path
    (short, many boxes, general, points, native)."""
    shard, inner = shards
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), shards=({shard},), chunks=({inner},))
""" + _reads("(8,)"))
    assert result == _fill_reads((8,))


@pytest.mark.parametrize("store", STORES)
def test_a_stored_chunk_too_large_to_decode_is_refused_by_key(probe, store) -> None:
    """A chunk that is stored must be decoded whole: past what can be allocated, that is
    ChunkTooLargeError naming its key (a MemoryError too), not numpy's."""
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), chunks=(2**40,))
a.store.set("c/0", b"stored bytes")
result = [outcome(lambda: a[0]), outcome(lambda: a[2:5]),
          outcome(lambda: a.vindex[[1]]), isinstance(zarr3c.errors.ChunkTooLargeError(""),
                                                     MemoryError)]
""")
    assert result == [("zarr3c.errors", "ChunkTooLargeError", "c/0")] * 3 + [True]


@pytest.mark.parametrize("store", STORES)
def test_a_stored_shard_shorter_than_its_huge_index_is_reported(probe, store) -> None:
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), shards=(2**40,), chunks=(2,))
a.store.set("c/0", b"not a shard")
result = [outcome(lambda: a[0]), outcome(lambda: a[::2]), outcome(lambda: a.vindex[[1]])]
""")
    assert result == [("zarr3c.errors", "ChunkDecodeError", "c/0")] * 3


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("kwargs", [
    "chunks=(2**40,)", "chunks=(2**63 - 1,)", "chunks=(2**40,), compressors=None",
    "shards=(2**40,), chunks=(2**30,)", "shards=(2**40,), chunks=(2,)",
])
def test_writing_a_chunk_too_large_to_build_is_refused_by_key(probe, store, kwargs) -> None:
    """A partial write builds the whole chunk (shard): legitimately of its size, so where
    it cannot be allocated the write is refused, naming the chunk, and nothing is stored."""
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), {kwargs})
result = [outcome(lambda: a.__setitem__(0, 3)), outcome(lambda: a.__setitem__(..., 3)),
          outcome(lambda: a.vindex.__setitem__([1], 3)), outcome(lambda: a[...]),
          sorted(k for k in a.store.list() if k != "zarr.json")]
""")
    refused = ("zarr3c.errors", "ChunkTooLargeError", "c/0")
    assert result == [refused, refused, refused, [5] * 8, []]


# -- point 4: int64 limits -----------------------------------------------------------------------


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("compressors", ["auto", None], ids=["zstd", "raw"])
def test_the_end_of_an_array_of_int64_max_elements(probe, store, compressors) -> None:
    """Shape ``(2**63 - 1,)``: the last chunk's end (2**63) is beyond int64, so the array
    reads by the general path, exactly as numpy would index it."""
    result = _run(probe, f"""
a = make({store!r}, shape=(2**63 - 1,), chunks=(2**20,), compressors={compressors!r})
before = [outcome(lambda: a[-3:]), outcome(lambda: a[-1])]
a[-1] = 3
a[-2**20 - 1] = 4
result = before + [outcome(f) for f in (
    lambda: a[-3:], lambda: a[-1], lambda: a[-2**20 - 2:-2**20 + 1],
    lambda: a.oindex[[-1, 0]], lambda: a.vindex[[-1, -2**20 - 1]],
    lambda: a.get_many([np.s_[-2:], np.s_[-1]]),
    lambda: a[::2**62], lambda: a[::-2**62], lambda: a[::2**64], lambda: a[-1::-2**61],
)]
""")
    n = 2**63 - 1
    values = {n - 1: 3, n - 2**20 - 1: 4}

    def at(indices: range | list[int]) -> list[int]:
        return [values.get(i, 5) for i in indices]

    assert result == [
        [5, 5, 5], 5, at(range(n)[-3:]), 3, at(range(n)[-2**20 - 2:-2**20 + 1]),
        at([n - 1, 0]), at([n - 1, n - 2**20 - 1]), [at(range(n)[-2:]), 3],
        at(range(n)[::2**62]), at(range(n)[::-2**62]), at(range(n)[::2**64]),
        at(range(n)[-1::-2**61]),
    ]


@pytest.mark.parametrize("store", STORES)
def test_a_grid_of_more_chunks_than_int64_counts(probe, store) -> None:
    """``(2**32,) * 3`` of one-element chunks: 2**96 chunks, legal per the spec; created,
    read and written, the grid's facts in Python integers."""
    result = _run(probe, f"""
a = make({store!r}, shape=(2**32,) * 3, chunks=(1, 1, 1))
before = outcome(lambda: a[1, 2, 3])
a[1, 2, 3] = 7
result = [before, a.nchunks, list(a.cdata_shape)] + [outcome(f) for f in (
    lambda: a[1, 2, 3], lambda: a[1, 2, 2:5], lambda: a.vindex[[1, 1], [2, 2], [3, 4]],
    lambda: a.oindex[[1], [2], [3, 4]], lambda: a[0:2, 2, 3], lambda: a[-1, -1, -1],
)]
""")
    assert result == [5, 2**96, [2**32] * 3, 7, [5, 7, 5], [7, 5], [[[7, 5]]], [5, 7], 5]


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("kwargs", [
    "shape=(2**62, 2**62, 12), chunks=(2**20, 2**20, 12)",
    "shape=(2**62, 2**62, 12), shards=(2**30, 2**20, 12), chunks=(2**20, 2**20, 12)",
    "shape=(2**63 - 1,), chunks=(2**20,)",
    "shape=(2**32,) * 3, chunks=(1, 1, 1)",
    "shape=(2**40, 2**40), chunks=(2**25, 2**25)",
])
def test_a_selection_too_large_is_refused_before_reading(probe, store, kwargs) -> None:
    """``a[...]`` (and writes of a scalar over all of it) of arrays beyond memory or int64:
    SelectionTooLargeError, before any chunk is read or any kernel planned."""
    result = _run(probe, f"""
a = make({store!r}, {kwargs})
half = tuple(slice(0, n // 2 + 1) for n in a.shape)
result = [outcome(lambda: a[...]), outcome(lambda: a.get_many([half, half])),
          outcome(lambda: a.oindex[tuple(slice(None) for _ in a.shape)]),
          outcome(lambda: a.__setitem__(..., 3)), sorted(k for k in a.store.list() if k != "zarr.json")]
""")
    too_large = ("zarr3c.errors", "SelectionTooLargeError", None)
    assert result == [too_large] * 4 + [[]]


def test_broadcast_points_too_many_to_hold_are_refused(probe) -> None:
    result = _run(probe, """
a = make("memory", shape=(2**20, 2**20), chunks=(2**10, 2**10))
rows, cols = np.arange(2**20)[:, None], np.arange(2**20)[None, :]
result = [outcome(lambda: a.vindex[rows, cols]), outcome(lambda: a[rows, cols]),
          outcome(lambda: a.oindex[rows[:, 0], cols[0]]), outcome(lambda: a.vindex[rows[:4], 5])]
""")
    too_large = ("zarr3c.errors", "SelectionTooLargeError", None)
    assert result == [too_large] * 3 + [[[5]] * 4]


def test_a_selection_too_large_is_a_memory_and_value_error() -> None:
    """In process (refused before any allocation): numpy raises MemoryError or ValueError
    for arrays it cannot hold, and the refusal is both."""
    a = zarr3c.create_array("memory://", shape=(2**62, 2**62, 12), dtype="uint8",
                            chunks=(2**20, 2**20, 12))
    with pytest.raises(SelectionTooLargeError, match="more than int64"):
        a[...]
    for builtin in (MemoryError, ValueError):
        with pytest.raises(builtin):
            a[:, 0]


def test_huge_steps_match_numpy_in_process() -> None:
    """Steps far beyond a chunk (up to and past int64) select as numpy's slices do, and
    writes through them land where numpy's would."""
    n = 2**63 - 1
    a = zarr3c.create_array("memory://", shape=(n,), dtype="uint8", chunks=(2**20,),
                            fill_value=5)
    a[2**62] = 1
    a[n - 1] = 2
    a[::2**64] = 9  # (index 0 only)
    values = {0: 9, 2**62: 1, n - 1: 2}
    for key in (slice(None, None, 2**62), slice(None, None, -2**62), slice(1, None, 2**62),
                slice(None, None, 2**63), slice(-1, None, -2**63), slice(2**61, None, 2**61)):
        want = [values.get(i, 5) for i in range(n)[key]]
        assert a[key].tolist() == want, key
        assert a.oindex[key].tolist() == want, key


def test_grid_facts_fit_int64_only_where_they_can() -> None:
    assert int64_grid((8,), (2**20,), 1, None)
    assert not int64_grid((2**63 - 1,), (2**20,), 1, None)  # the last chunk ends at 2**63
    assert not int64_grid((2**32,) * 3, (1, 1, 1), 1, None)  # 2**96 chunks
    assert int64_grid((2**40, 2**40), (2**20, 2**20), 8, None)
    sharding = zarr3c.create_array("memory://", shape=(8,), dtype="uint8", shards=(2**62,),
                                   chunks=(2,))._sharding
    assert not int64_grid((8,), (2**62,), 1, sharding)  # an index of 16 * 2**61 + 4 bytes
    sharding = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8",
                                   shards=(2**31, 2**31), chunks=(2**15, 2**15))._sharding
    assert int64_grid((2**40, 2**40), (2**31, 2**31), 1, sharding)
    assert not int64_grid((2**62, 2**62), (2**31, 2**31), 1, sharding)  # 2**94 inner chunks


# -- point 5: a.chunks of a rectilinear grid with a bare dimension of many chunks ----------------


def test_chunks_of_a_bare_dimension_of_2_to_the_40_chunks(probe) -> None:
    result = _run(probe, """
a = make("memory", shape=(2**40 + 3, 6), chunks=[4, [2, 4]])
c = a.chunks
result = [len(c[0]), c[0][0], c[0][-1], c[0][-2], list(c[0][-3:]), tuple(c[1]),
          3 in c[0], 4 in c[0], 5 in c[0], outcome(lambda: a[2**40 + 2, 5])]
""")
    n = -(-(2**40 + 3) // 4)
    assert result == [n, 4, (2**40 + 3) - 4 * (n - 1), 4, [4, 4, 3], (2, 4), True, True,
                      False, 5]


def test_repeated_sizes_behave_as_the_tuple() -> None:
    for size, n, last in [(4, 1, 2), (4, 3, 2), (4, 5, 4), (3, 7, 1)]:
        lazy, tup = RepeatedSizes(size, n, last), (size,) * (n - 1) + (last,)
        assert lazy == tup and tup == lazy and list(lazy) == list(tup) and len(lazy) == n
        assert [lazy[i] for i in range(-n, n)] == [tup[i] for i in range(-n, n)]
        assert lazy[1:] == tup[1:] and lazy[::-2] == tup[::-2]
        assert lazy.count(size) == tup.count(size) and lazy.index(last) == tup.index(last)
        assert all((v in lazy) == (v in tup) for v in range(8))
        with pytest.raises(IndexError):
            lazy[n]
    assert RepeatedSizes(4, 3, 2) != (4, 4, 3) and RepeatedSizes(4, 3, 2) != (4, 2)
    assert repeated_sizes(4, 3, 2) == (4, 4, 2) and type(repeated_sizes(4, 3, 2)) is tuple
    big = repeated_sizes(4, LAZY_SIZES_MIN, 1)
    assert isinstance(big, RepeatedSizes) and big[-1] == 1
    assert big[1:] == RepeatedSizes(4, LAZY_SIZES_MIN - 1, 1)


def test_small_rectilinear_chunks_stay_tuples() -> None:
    grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
    assert grid.array_chunks((30, 8)) == ((10, 20), (4, 4))
    assert all(type(d) is tuple for d in grid.array_chunks((30, 8)))


# -- a stored chunk whose decode cannot be allocated, on every read path (in process) ------------


@pytest.fixture
def no_decode_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scratch for decoded chunks and inner chunks cannot be allocated (the Python paths:
    the native pipeline, which reports failures back to them, is off)."""
    from zarr3c.array.read import chunk, native, shard_boxes  # noqa: PLC0415
    from zarr3c.codecs.sharding import read  # noqa: PLC0415

    def refused(nbytes: int, slot: str = "decoded") -> np.ndarray:
        if slot in ("decoded", "inner"):
            raise MemoryError(f"no {nbytes} bytes")
        return np.empty(nbytes, dtype=np.uint8)

    for module in (chunk, shard_boxes, read):
        monkeypatch.setattr(module, "thread_scratch", refused)
    monkeypatch.setattr(native, "enabled", False)


@pytest.mark.parametrize("read", [
    lambda a: a[0:2, 0:2], lambda a: a[0:6, 0:6], lambda a: a[::2, ::3],
    lambda a: a.oindex[[0, 5], [1, 4]], lambda a: a.vindex[[0, 5], [1, 4]],
    lambda a: a.get_many([np.s_[0:2, 0:2], np.s_[1:5, 1:5]]),
], ids=["box", "many-boxes", "steps", "oindex", "vindex", "get_many"])
@pytest.mark.parametrize("shards", [None, (8, 8)], ids=["chunks", "shards"])
def test_a_stored_chunk_that_cannot_be_decoded_in_memory_is_refused_by_key(
        no_decode_memory, read, shards) -> None:
    a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
                            shards=shards)
    a[...] = 1
    with pytest.raises(zarr3c.errors.ChunkTooLargeError) as info:
        read(a)
    assert isinstance(info.value, MemoryError) and info.value.key.startswith("c/")


@pytest.mark.parametrize("store", STORES)
def test_strings_in_huge_chunks(probe, store) -> None:
    """Arrays of references take their own path (numpy indexing): the same limits."""
    result = _run(probe, f"""
a = make({store!r}, shape=(8,), chunks=(2**40,), dtype=str, fill_value="x")
b = make({store!r}, shape=(2**62, 2**62), chunks=(2**20, 2**20), dtype=str, fill_value="x")
result = [outcome(lambda: a[0]), outcome(lambda: a[2:4]), outcome(lambda: a.vindex[[1, 7]]),
          outcome(lambda: a.__setitem__(0, "y")), outcome(lambda: b[...]),
          outcome(lambda: b[2**61, 3:5])]
""")
    assert result == ["x", ["x", "x"], ["x", "x"],
                      ("zarr3c.errors", "ChunkTooLargeError", "c/0"),
                      ("zarr3c.errors", "SelectionTooLargeError", None), ["x", "x"]]
