"""``zarr3c._kernels.chunks``: the native chunk pipeline, a whole read plan in one call.

Random plans, executed by the kernel (on 1 and 4 threads) and by its reference
(:func:`zarr3c._kernels._reference.read_chunks`, ``read_shards``, and their ``_outer`` twins
for outer products at the end): random small chunk shapes and data types (byte-swapped
storage included), random pieces of each chunk copied to their own regions of the output
(strided, transposed, reversed), chains of CRC-32C checksums, zstd (blosc and gzip where
bound) and byte swaps, sources as files and as values, some chunks direct (decoded straight
into the output), some not stored, some damaged.  Both must give every chunk the same status
(a failure being any negative status) and the same output bytes wherever a chunk was read or
filled; every byte outside the pieces stays as it was.  A third oracle is the data itself: an
undamaged chunk reads as the bytes it was encoded from, a chunk not stored as the fill.

Plans that do not hold together raise ValueError in both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import google_crc32c
import numcodecs
import numcodecs.zstd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import zarr3c  # noqa: F401  (binds libzstd for the kernel)
from zarr3c._kernels import _reference as ref
from zarr3c._kernels import chunks, zstd_ctx

pytestmark = pytest.mark.skipif(not zstd_ctx.available(), reason="no libzstd bound")

IMPLS = [pytest.param(chunks, id="cython"), pytest.param(ref, id="reference")]
NONE, ZSTD = chunks.NONE, chunks.ZSTD
READ, MISSING = chunks.READ, chunks.MISSING
M64 = 2**64 - 1
GUARD_SEED = 0xC0FFEE
# an expected status that is whatever the reference's is (a flipped byte nothing checks)
ANY = 99

# (name, itemsize, swap): the element types, stored in the machine's order or swapped
DTYPES = [("u1", 1, 0), ("u1 swap 1", 1, 1), ("<u2", 2, 0), (">u2", 2, 2), (">i4", 4, 4),
          ("<f8", 8, 0), ("<c16", 16, 0), (">c16", 16, 8)]
# (name, compressor, zstd's own checksum, CRC-32C checksums after it)
CHAINS = [("none", NONE, False, 0), ("zstd", ZSTD, False, 0), ("zstd+checksum", ZSTD, True, 0),
          ("crc32c", NONE, False, 1), ("zstd, crc32c", ZSTD, False, 1),
          ("crc32c x2", NONE, False, 2)]
# the other compressors, where this build binds them
BLOSC = getattr(chunks, "BLOSC", None)
GZIP = getattr(chunks, "GZIP", None)
if BLOSC is not None and chunks.blosc_available():
    CHAINS += [("blosc", BLOSC, False, 0), ("blosc, crc32c", BLOSC, False, 1)]
if GZIP is not None and chunks.zlib_available():
    CHAINS += [("gzip", GZIP, False, 0), ("gzip, crc32c", GZIP, False, 1)]
# what becomes of a chunk's stored bytes; "ok" and "missing" are read or filled, the rest
# (but "dir", a directory where the file would be: no file, as a store answers) fail
CHUNK_KINDS = ["ok", "ok", "ok", "missing", "truncate", "extend", "flip", "garbage", "empty",
               "huge"]
FILE_KINDS = ["dir", "io"]


def _c_strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return strides[::-1]


def _crc(data: bytes) -> bytes:
    return google_crc32c.value(data).to_bytes(4, "little")


def _encode(decoded: bytes, itemsize: int, swap: int, compressor: int, zstd_checksum: bool,
            checksums: int) -> bytes:
    """A chunk's stored bytes: its elements byte-swapped (if ``swap``), compressed, then
    the CRC-32C checksums appended."""
    data = decoded
    if swap > 1:
        data = np.frombuffer(data, np.uint8).reshape(-1, swap)[:, ::-1].tobytes()
    if compressor == ZSTD:
        data = bytes(numcodecs.zstd.Zstd(level=1, checksum=zstd_checksum).encode(data))
    elif compressor == BLOSC:
        shuffle = numcodecs.Blosc.SHUFFLE if itemsize > 1 else numcodecs.Blosc.BITSHUFFLE
        data = bytes(numcodecs.Blosc(cname="lz4", clevel=1, shuffle=shuffle,
                                     typesize=itemsize).encode(data))
    elif compressor == GZIP:
        data = bytes(numcodecs.GZip(level=1).encode(data))
    for _ in range(checksums):
        data += _crc(data)
    return data


def _order(transposed: bool, shape: tuple[int, ...], rng: np.random.Generator
           ) -> list[int] | None:
    """A transpose codec's order for chunks of ``shape`` (None: none)."""
    return [int(d) for d in rng.permutation(len(shape))] if transposed else None


def _laid_out(decoded: bytes, shape: tuple[int, ...], itemsize: int,
              order: list[int] | None) -> bytes:
    """A chunk's elements (C order) as a transpose codec of ``order`` lays them out."""
    if order is None:
        return decoded
    chunk = np.frombuffer(decoded, np.uint8).reshape(*shape, itemsize)
    return chunk.transpose(*order, len(shape)).tobytes()


def _transpose(shape: tuple[int, ...], order: list[int] | None) -> np.ndarray | None:
    """The kernels' ``transpose`` argument."""
    return None if order is None else np.array([shape, order], dtype=np.int64)


def _damage(kind: str, stored: bytes, cap: int, rng: np.random.Generator) -> bytes:
    """The stored bytes of a damaged chunk."""
    if kind == "truncate":
        return stored[:int(rng.integers(0, len(stored)))] if stored else b""
    if kind == "extend":
        return stored + rng.bytes(int(rng.integers(1, 9)))
    if kind == "flip":
        at = int(rng.integers(0, len(stored)))
        return stored[:at] + bytes([stored[at] ^ int(rng.integers(1, 256))]) + stored[at + 1:]
    if kind == "garbage":
        return rng.bytes(len(stored) + int(rng.integers(1, 40)))
    if kind == "empty":
        return b""
    if kind == "huge":  # (more than any encoding of the chunk: refused unread from a file)
        return rng.bytes(cap + 1 + int(rng.integers(0, 100)))
    raise AssertionError(kind)


@dataclass
class Plan:
    """A read plan's arrays, and what each chunk should read as."""

    shape: tuple[int, ...]
    itemsize: int
    rng: np.random.Generator
    firsts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    src_offsets: list[int] = field(default_factory=list)
    dst_offsets: list[int] = field(default_factory=list)
    dst_strides: list[list[int]] = field(default_factory=list)
    counts: list[list[int]] = field(default_factory=list)
    starts: list[list[int]] = field(default_factory=list)
    direct: list[int] = field(default_factory=list)
    size: int = 0

    @property
    def nbytes(self) -> int:
        return self.itemsize * int(np.prod(self.shape))

    def _gap(self) -> None:
        self.size += int(self.rng.integers(0, 8))

    def add_chunk(self, direct: bool) -> None:
        """A chunk's pieces: the whole chunk C-ordered (direct), or 0 to 3 random boxes of
        it, each in its own region of the output, laid out at random."""
        rng, ndim = self.rng, len(self.shape)
        self.firsts.append(len(self.src_offsets))
        self.direct.append(int(direct))
        if direct:
            self._gap()
            self.starts.append([0] * ndim)
            self.counts.append(list(self.shape))
            self.src_offsets.append(0)
            self.dst_offsets.append(self.size)
            self.dst_strides.append(_c_strides(self.shape, self.itemsize))
            self.size += self.nbytes
        else:
            for _ in range(int(rng.choice([0, 1, 1, 2, 2, 3]))):
                self._gap()
                start = [int(rng.integers(0, n)) for n in self.shape]
                count = [int(rng.integers(1, n - s + 1)) for n, s in zip(self.shape, start)]
                if rng.random() < 0.05:
                    count[int(rng.integers(0, ndim))] = 0  # (an empty piece: skipped)
                pad = [int(v) for v in rng.integers(0, 3, ndim)]
                canvas = [max(c, 1) + p for c, p in zip(count, pad)]
                at = [int(rng.integers(0, p + 1)) for p in pad]
                strides, step = [0] * ndim, self.itemsize
                for d in rng.permutation(ndim)[::-1]:  # (the canvas's axes in any order)
                    strides[d] = step
                    step *= canvas[d]
                offset = self.size
                for d in range(ndim):
                    if rng.random() < 0.2:  # (this axis reversed)
                        offset += (canvas[d] - 1 - at[d]) * strides[d]
                        strides[d] = -strides[d]
                    else:
                        offset += at[d] * strides[d]
                self.starts.append(start)
                self.counts.append(count)
                self.src_offsets.append(int(np.dot(start, _c_strides(self.shape,
                                                                     self.itemsize))))
                self.dst_offsets.append(offset)
                self.dst_strides.append(strides)
                self.size += step
        self.ends.append(len(self.src_offsets))

    def arrays(self) -> dict[str, Any]:
        ndim = len(self.shape)

        def i64(v: Any, *shape: int) -> np.ndarray:
            return np.array(v, dtype=np.int64).reshape(*shape)

        n = len(self.src_offsets)
        return dict(firsts=i64(self.firsts, -1), ends=i64(self.ends, -1),
                    src_offsets=i64(self.src_offsets, -1),
                    src_strides=i64(_c_strides(self.shape, self.itemsize), -1),
                    dst_offsets=i64(self.dst_offsets, -1),
                    dst_strides=i64(self.dst_strides, n, ndim),
                    counts=i64(self.counts, n, ndim),
                    direct=np.array(self.direct, dtype=np.uint8).reshape(-1))

    def _view(self, buf: np.ndarray, p: int) -> np.ndarray:
        """Piece ``p``'s region of ``buf`` (bytes), as elements of ``itemsize`` bytes."""
        base = buf[self.dst_offsets[p]:]
        return as_strided(base, shape=(*self.counts[p], self.itemsize),
                          strides=(*self.dst_strides[p], 1))

    def mask(self, c: int) -> np.ndarray:
        """The output bytes chunk ``c``'s pieces cover."""
        out = np.zeros(self.size, dtype=bool)
        for p in range(self.firsts[c], self.ends[c]):
            if min(self.counts[p], default=1) > 0:
                self._view(out, p)[...] = True
        return out

    def expect(self, out: np.ndarray, c: int, decoded: bytes | None, fill: bytes) -> None:
        """Chunk ``c``'s pieces written into ``out``: from ``decoded``, or the fill."""
        chunk = np.frombuffer(decoded or bytes(self.nbytes), np.uint8).reshape(
            *self.shape, self.itemsize)
        for p in range(self.firsts[c], self.ends[c]):
            if min(self.counts[p], default=1) == 0:
                continue
            view = self._view(out, p)
            if decoded is None:
                view[...] = np.frombuffer(fill, np.uint8)
            else:
                view[...] = chunk[tuple(slice(s, s + n)
                                        for s, n in zip(self.starts[p], self.counts[p]))]


def _value(stored: bytes, rng: np.random.Generator) -> Any:
    """The stored bytes as one of the buffer types a value may be."""
    form = int(rng.integers(0, 4))
    if form == 0:
        return stored
    if form == 1:
        return bytearray(stored)
    if form == 2:
        return memoryview(stored)
    pad = rng.bytes(int(rng.integers(1, 9)))  # (a view into the middle of a larger buffer)
    return memoryview(pad + stored + pad)[len(pad):len(pad) + len(stored)]


def _compare(plan: Plan, got: np.ndarray, want: np.ndarray, got_status: np.ndarray,
             want_status: np.ndarray, initial: np.ndarray) -> None:
    """The same statuses (any negative one for a failure), the same bytes wherever a chunk
    was read or filled, and every byte no piece covers as it was."""
    assert ((got_status < 0) == (want_status < 0)).all(), (got_status, want_status)
    ok = got_status >= 0
    assert (got_status[ok] == want_status[ok]).all(), (got_status, want_status)
    covered = np.zeros(plan.size, dtype=bool)
    for c in range(len(plan.firsts)):
        mask = plan.mask(c)
        covered |= mask
        if got_status[c] >= 0:
            assert (got[mask] == want[mask]).all(), f"chunk {c} (status {got_status[c]})"
    assert (got[~covered] == initial[~covered]).all()
    assert (want[~covered] == initial[~covered]).all()


def _expected_status(kind: str, has_pieces: bool, checksums: int) -> int | None:
    """What a chunk's status must be (None: any failure; "flip" unchecked: anything)."""
    if not has_pieces:
        return READ
    if kind == "ok":
        return READ
    if kind in ("missing", "dir"):
        return MISSING
    if kind == "flip" and not checksums:
        return ANY  # (a flipped byte nothing checks may read: kernel == reference only)
    return None


def _check_expected(statuses: np.ndarray, expected: list[int | None]) -> None:
    for c, want in enumerate(expected):
        if want is None:
            assert statuses[c] < 0, (c, statuses)
        elif want != ANY:
            assert statuses[c] == want, (c, statuses)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPES), chain=st.sampled_from(CHAINS),
       kinds=st.lists(st.sampled_from(CHUNK_KINDS + FILE_KINDS), min_size=0, max_size=6),
       direct=st.lists(st.booleans(), min_size=6, max_size=6), transposed=st.booleans(),
       paths=st.booleans(), nthreads=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))
def test_read_chunks_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, shape: tuple[int, ...],
    dtype: tuple[str, int, int], chain: tuple[str, int, bool, int], kinds: list[str],
    direct: list[bool], transposed: bool, paths: bool, nthreads: int, seed: int,
) -> None:
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    order = _order(transposed, shape, rng)
    if not paths:
        kinds = [k if k not in FILE_KINDS else "missing" for k in kinds]
    plan = Plan(shape, itemsize, rng)
    cap = plan.nbytes + (plan.nbytes >> 3) + 4096 + 4 * checksums
    fill = rng.bytes(itemsize)
    folder = tmp_path_factory.mktemp("chunks")
    sources: list[Any] = []
    decoded_of: list[bytes | None] = []
    for c, kind in enumerate(kinds):
        plan.add_chunk(direct[c])
        low = rng.random() < 0.5  # (compressible elements, or random ones)
        decoded = (rng.integers(0, 3, plan.nbytes, dtype=np.uint8).tobytes() if low
                   else rng.bytes(plan.nbytes))
        encoded = _encode(_laid_out(decoded, shape, itemsize, order), itemsize, swap,
                          compressor, zstd_checksum, checksums)
        decoded_of.append(decoded if kind == "ok" else None)
        stored: bytes | None = encoded
        if kind in ("missing", "dir", "io"):
            stored = None
        elif kind != "ok":
            stored = _damage(kind, encoded, cap, rng)
        if paths:
            path = folder / f"c{c}"
            if kind == "dir":
                path.mkdir()
            elif kind == "io":
                path = folder / ("x" * 300)  # (ENAMETOOLONG)
            elif stored is not None:
                path.write_bytes(stored)
            sources.append(os.fsencode(path))
        else:
            sources.append(None if stored is None else _value(stored, rng))
    a = plan.arrays()
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(plan.size), np.uint8)
    outs, statuses = [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(kinds), 77, dtype=np.int8)
        impl.read_chunks(sources, paths, a["firsts"], a["ends"], a["src_offsets"],
                         a["src_strides"], dst, a["dst_offsets"], a["dst_strides"], a["counts"],
                         itemsize, fill, a["direct"], compressor, checksums, swap, plan.nbytes,
                         nthreads, status, _transpose(shape, order))
        outs.append(dst)
        statuses.append(status)
    _compare(plan, outs[0], outs[1], statuses[0], statuses[1], initial)
    expected = [_expected_status(k, plan.ends[c] > plan.firsts[c], checksums)
                for c, k in enumerate(kinds)]
    _check_expected(statuses[0], expected)
    # the third oracle: what each chunk was encoded from
    expected_out = initial.copy()
    for c, kind in enumerate(kinds):
        if kind in ("ok", "missing", "dir"):
            plan.expect(expected_out, c, decoded_of[c], fill)
            mask = plan.mask(c)
            assert (outs[0][mask] == expected_out[mask]).all(), f"chunk {c} ({kind})"


@settings(max_examples=60, deadline=None)
@given(nelements=st.integers(1, 64), dtype=st.sampled_from(DTYPES),
       chain=st.sampled_from(CHAINS),
       kinds=st.lists(st.sampled_from(CHUNK_KINDS + FILE_KINDS), min_size=0, max_size=6),
       npoints=st.lists(st.integers(0, 12), min_size=6, max_size=6),
       paths=st.booleans(), nthreads=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))
def test_read_elements_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, nelements: int, dtype: tuple[str, int, int],
    chain: tuple[str, int, bool, int], kinds: list[str], npoints: list[int], paths: bool,
    nthreads: int, seed: int,
) -> None:
    """Points: each chunk's elements copied one by one to their places (repeats too), or
    filled; the same statuses and bytes as the reference, and as the decoded chunks."""
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    if not paths:
        kinds = [k if k not in FILE_KINDS else "missing" for k in kinds]
    nbytes = nelements * itemsize
    cap = nbytes + (nbytes >> 3) + 4096 + 4 * checksums
    fill = rng.bytes(itemsize)
    folder = tmp_path_factory.mktemp("elements")
    sources: list[Any] = []
    decoded_of: list[bytes] = []
    firsts, ends, src, out_at = [], [], [], []
    total = sum(npoints[:len(kinds)])
    places = rng.permutation(total + 3)[:total]  # (distinct output slots, some left alone)
    for c, kind in enumerate(kinds):
        decoded = rng.bytes(nbytes)
        decoded_of.append(decoded)
        firsts.append(len(src))
        for _ in range(npoints[c]):
            src.append(int(rng.integers(0, nelements)) * itemsize)
            out_at.append(int(places[len(out_at)]) * itemsize)
        ends.append(len(src))
        encoded = _encode(decoded, itemsize, swap, compressor, zstd_checksum, checksums)
        stored: bytes | None = encoded
        if kind in ("missing", "dir", "io"):
            stored = None
        elif kind != "ok":
            stored = _damage(kind, encoded, cap, rng)
        if paths:
            path = folder / f"c{c}"
            if kind == "dir":
                path.mkdir()
            elif kind == "io":
                path = folder / ("x" * 300)  # (ENAMETOOLONG)
            elif stored is not None:
                path.write_bytes(stored)
            sources.append(os.fsencode(path))
        else:
            sources.append(None if stored is None else _value(stored, rng))
    size = (total + 3) * itemsize
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(size), np.uint8)
    outs, statuses = [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(kinds), 77, dtype=np.int8)
        impl.read_elements(sources, paths, _i64(*firsts), _i64(*ends), _i64(*src),
                           _i64(*out_at), dst, itemsize, fill, compressor, checksums, swap,
                           nbytes, nthreads, status)
        outs.append(dst)
        statuses.append(status)
    got, want = statuses
    assert ((got < 0) == (want < 0)).all() and (got[got >= 0] == want[got >= 0]).all()
    for c, kind in enumerate(kinds):
        rows = range(firsts[c], ends[c])
        expected = _expected_status(kind, bool(rows), checksums)
        if expected is None:
            assert got[c] < 0, (c, kind, got)
        elif expected != ANY:
            assert got[c] == expected, (c, kind, got)
        if got[c] < 0:
            continue
        for p in rows:
            piece = slice(out_at[p], out_at[p] + itemsize)
            assert outs[0][piece].tobytes() == outs[1][piece].tobytes()
            if kind in ("ok", "missing", "dir"):
                element = (fill if kind != "ok" else
                           decoded_of[c][src[p]:src[p] + itemsize])
                assert outs[0][piece].tobytes() == element
    untouched = np.ones(size, dtype=bool)
    for at in out_at:
        untouched[at:at + itemsize] = False
    assert (outs[0][untouched] == initial[untouched]).all()


@pytest.mark.parametrize("impl", IMPLS)
def test_an_element_outside_the_chunk_or_dst_is_refused(impl: Any) -> None:
    for src, out in ((8, 0), (-1, 0), (0, 8), (0, -2)):
        with pytest.raises(ValueError, match="outside"):
            impl.read_elements([b"12345678"], False, _i64(0), _i64(1), _i64(src), _i64(out),
                               np.zeros(8, np.uint8), 1, b"z", NONE, 0, 0, 8, 1,
                               np.zeros(1, np.int8))


# -- shards ------------------------------------------------------------------------------------

# what becomes of an inner chunk's entry (besides damage to its bytes, as CHUNK_KINDS)
ENTRY_KINDS = ["into_index", "past_end", "half_missing"]
SHARD_KINDS = ["ok", "ok", "ok", "missing", "bad_index_checksum", "too_small", "dir"]


@dataclass
class Shard:
    """A shard's bytes: its inner chunks' stored bytes (None: not stored, or an entry of
    one of ENTRY_KINDS) in random order with gaps, and its index."""

    stored: list[bytes | str | None]
    index_nbytes: int
    at_end: bool
    checksum: bool

    def build(self, rng: np.random.Generator) -> bytes:
        n = len(self.stored)
        body, entries = b"", [(M64, M64)] * n
        base = 0 if self.at_end else self.index_nbytes
        placed: dict[int, tuple[int, int]] = {}
        for slot in rng.permutation(n):
            data = self.stored[slot]
            if isinstance(data, bytes):
                body += rng.bytes(int(rng.integers(0, 6)))
                placed[int(slot)] = (base + len(body), len(data))
                body += data
        body += rng.bytes(int(rng.integers(0, 6)))
        size = len(body) + self.index_nbytes
        lo, hi = (0, len(body)) if self.at_end else (self.index_nbytes, size)
        for slot, data in enumerate(self.stored):
            if slot in placed:
                entries[slot] = placed[slot]
            elif data == "into_index":  # (overlapping the index, at either end)
                entries[slot] = (max(0, hi - 2), 10) if self.at_end else (lo - 4, 8)
            elif data == "past_end":
                entries[slot] = (size + 5, 1) if rng.random() < 0.5 else (lo, 2**63)
            elif data == "half_missing":
                entries[slot] = (M64, 3)
        index = np.array(entries, dtype="<u8").tobytes()
        if self.checksum:
            index += _crc(index)
        assert len(index) == self.index_nbytes
        return body + index if self.at_end else index + body

    def source(self, kind: str, path: Path, paths: bool, rng: np.random.Generator) -> Any:
        """The shard as a read's source, as one of SHARD_KINDS: a file at ``path`` (or a
        directory there, or nothing), or a value (None where missing)."""
        data = self.build(rng)
        if kind == "bad_index_checksum":
            at = len(data) - 1 if self.at_end else self.index_nbytes - 1
            data = data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1:]
        elif kind == "too_small":
            data = data[:self.index_nbytes - 1]
        if not paths:
            return None if kind == "missing" else _value(data, rng)
        if kind == "dir":
            path.mkdir()
        elif kind != "missing":
            path.write_bytes(data)
        return os.fsencode(path)


def _possible_shard_kinds(kinds: list[str], index_checksum: bool, paths: bool) -> list[str]:
    """The shards' kinds as they can be: no index checksum to spoil without one, no
    directory in place of a value."""
    if not index_checksum:
        kinds = ["ok" if k == "bad_index_checksum" else k for k in kinds]
    if not paths:
        kinds = ["missing" if k == "dir" else k for k in kinds]
    return kinds


#: The shard plans of read_shards and read_shards_outer: inner chunks of random shapes and
#: kinds in a few shards of SHARD_KINDS.
SHARD_PLANS = given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    dtype=st.sampled_from(DTYPES), chain=st.sampled_from(CHAINS), per_shard=st.integers(1, 6),
    nshards=st.integers(1, 3),
    shard_kinds=st.lists(st.sampled_from(SHARD_KINDS), min_size=3, max_size=3),
    at_end=st.booleans(), index_checksum=st.booleans(), transposed=st.booleans(),
    paths=st.booleans(), nthreads=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))


class InnerRead(NamedTuple):
    """An inner chunk a shard read takes: where it is, its kind ("shard K" where its shard
    is not sound) and the bytes it was encoded from (None unless it and its shard are
    sound)."""

    shard: int
    slot: int
    kind: str
    decoded: bytes | None


def _sound_kind(shard_kind: str, contents: list[bytes | str | None]) -> str:
    """A shard's kind once its index is built: ``"bad_index"`` for an "ok" shard with an
    entry of ENTRY_KINDS (the readers refuse the whole index then, as the Python path)."""
    if shard_kind == "ok" and any(isinstance(c, str) for c in contents):
        return "bad_index"
    return shard_kind


def _shards_read(rng: np.random.Generator, shard_kinds: list[str], per_shard: int,
                 nbytes: int, encode: Any, cap: int, index_nbytes: int, at_end: bool,
                 index_checksum: bool, folder: Path, paths: bool
                 ) -> tuple[list[Any], list[InnerRead], list[str]]:
    """Shards of ``per_shard`` inner chunks of random kinds (CHUNK_KINDS, ENTRY_KINDS), each
    shard of its kind in ``shard_kinds``, as a read's sources; the inner chunks the read
    takes, each 0, 1 or 2 times, in random order; and the shards' kinds as built
    (:func:`_sound_kind`)."""
    sources: list[Any] = []
    inner: list[InnerRead] = []
    built: list[str] = []
    for s, shard_kind in enumerate(shard_kinds):
        contents: list[bytes | str | None] = []
        reads: list[tuple[int, str, bytes]] = []
        for slot in range(per_shard):
            kind = str(rng.choice(CHUNK_KINDS + ENTRY_KINDS))
            decoded = rng.integers(0, 3, nbytes, dtype=np.uint8).tobytes()
            stored = encode(decoded)
            contents.append(None if kind == "missing" else kind if kind in ENTRY_KINDS
                            else stored if kind == "ok" else _damage(kind, stored, cap, rng))
            reads += [(slot, kind, decoded)] * int(rng.choice([0, 1, 1, 1, 2]))
        sound = _sound_kind(shard_kind, contents)
        built.append(sound)
        inner += [InnerRead(s, slot, kind if sound == "ok" else f"shard {sound}",
                            decoded if kind == "ok" and sound == "ok" else None)
                  for slot, kind, decoded in reads]
        shard = Shard(contents, index_nbytes, at_end, index_checksum)
        sources.append(shard.source(shard_kind, folder / f"s{s}", paths, rng))
    return sources, [inner[k] for k in rng.permutation(len(inner))], built


@settings(max_examples=60, deadline=None)
@SHARD_PLANS
def test_read_shards_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, shape: tuple[int, ...],
    dtype: tuple[str, int, int], chain: tuple[str, int, bool, int], per_shard: int,
    nshards: int, shard_kinds: list[str], at_end: bool, index_checksum: bool,
    transposed: bool, paths: bool, nthreads: int, seed: int,
) -> None:
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    order = _order(transposed, shape, rng)
    plan = Plan(shape, itemsize, rng)
    cap = plan.nbytes + (plan.nbytes >> 3) + 4096 + 4 * checksums
    index_nbytes = 16 * per_shard + (4 if index_checksum else 0)
    fill = rng.bytes(itemsize)
    shard_kinds = _possible_shard_kinds(shard_kinds[:nshards], index_checksum, paths)
    sources, inner, shard_kinds = _shards_read(
        rng, shard_kinds, per_shard, plan.nbytes,
        lambda raw: _encode(_laid_out(raw, shape, itemsize, order), itemsize, swap, compressor,
                            zstd_checksum, checksums), cap,
        index_nbytes, at_end, index_checksum, tmp_path_factory.mktemp("shards"), paths)
    slots = [(r.shard, r.slot) for r in inner]
    inner_kinds = [r.kind for r in inner]
    decoded_of = [r.decoded for r in inner]
    for _ in slots:
        plan.add_chunk(bool(rng.random() < 0.25))
    a = plan.arrays()
    inner_shard = np.array([s for s, _ in slots], dtype=np.int64).reshape(-1)
    inner_slot = np.array([k for _, k in slots], dtype=np.int64).reshape(-1)
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(plan.size), np.uint8)
    outs, statuses, shard_statuses = [], [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(slots), 77, dtype=np.int8)
        shard_status = np.full(nshards, 77, dtype=np.int8)
        impl.read_shards(sources, paths, index_nbytes, at_end, index_checksum, inner_shard,
                         inner_slot, a["firsts"], a["ends"], a["src_offsets"],
                         a["src_strides"], dst, a["dst_offsets"], a["dst_strides"], a["counts"],
                         itemsize, fill, a["direct"], compressor, checksums, swap, plan.nbytes,
                         nthreads, status, shard_status, _transpose(shape, order))
        outs.append(dst)
        statuses.append(status)
        shard_statuses.append(shard_status)
    _compare(plan, outs[0], outs[1], statuses[0], statuses[1], initial)
    got_shards, want_shards = shard_statuses
    assert ((got_shards < 0) == (want_shards < 0)).all(), (got_shards, want_shards)
    assert (got_shards[got_shards >= 0] == want_shards[got_shards >= 0]).all()
    for s, shard_kind in enumerate(shard_kinds):
        want = {"ok": READ, "missing": MISSING, "dir": MISSING}.get(shard_kind)
        assert got_shards[s] == want if want is not None else got_shards[s] < 0, shard_kind
    expected: list[int | None] = []
    for k, kind in enumerate(inner_kinds):
        has_pieces = plan.ends[k] > plan.firsts[k]
        if kind in ("shard missing", "shard dir"):
            expected.append(MISSING if has_pieces else READ)
        elif kind.startswith("shard ") or kind in ENTRY_KINDS:
            expected.append(None)
        else:
            expected.append(_expected_status(kind, has_pieces, checksums))
    _check_expected(statuses[0], expected)
    expected_out = initial.copy()
    for k, kind in enumerate(inner_kinds):
        if kind in ("ok", "missing", "shard missing", "shard dir"):
            plan.expect(expected_out, k, decoded_of[k], fill)
            mask = plan.mask(k)
            assert (outs[0][mask] == expected_out[mask]).all(), f"inner chunk {k} ({kind})"


@settings(max_examples=60, deadline=None)
@given(nelements=st.integers(1, 40), dtype=st.sampled_from(DTYPES),
       chain=st.sampled_from(CHAINS), per_shard=st.integers(1, 5), nshards=st.integers(1, 3),
       shard_kinds=st.lists(st.sampled_from(SHARD_KINDS), min_size=3, max_size=3),
       at_end=st.booleans(), index_checksum=st.booleans(), paths=st.booleans(),
       nthreads=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))
def test_read_shard_elements_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, nelements: int, dtype: tuple[str, int, int],
    chain: tuple[str, int, bool, int], per_shard: int, nshards: int, shard_kinds: list[str],
    at_end: bool, index_checksum: bool, paths: bool, nthreads: int, seed: int,
) -> None:
    """Points of inner chunks of shards: the same statuses and bytes as the reference, and
    the decoded elements where the inner chunk and its shard are sound."""
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    nbytes = nelements * itemsize
    cap = nbytes + (nbytes >> 3) + 4096 + 4 * checksums
    index_nbytes = 16 * per_shard + (4 if index_checksum else 0)
    fill = rng.bytes(itemsize)
    folder = tmp_path_factory.mktemp("shard-elements")
    shard_kinds = _possible_shard_kinds(shard_kinds[:nshards], index_checksum, paths)
    sources: list[Any] = []
    inner: list[tuple[int, int, str, bytes]] = []  # shard, slot, kind, decoded
    for s, shard_kind in enumerate(shard_kinds):
        contents: list[bytes | str | None] = []
        reads: list[tuple[int, str, bytes]] = []
        for slot in range(per_shard):
            kind = str(rng.choice(CHUNK_KINDS + ENTRY_KINDS))
            decoded = rng.bytes(nbytes)
            stored = _encode(decoded, itemsize, swap, compressor, zstd_checksum, checksums)
            contents.append(None if kind == "missing" else kind if kind in ENTRY_KINDS
                            else stored if kind == "ok" else _damage(kind, stored, cap, rng))
            if rng.random() < 0.8:
                reads.append((slot, kind, decoded))
        sound = _sound_kind(shard_kind, contents)
        inner += [(s, slot, kind if sound == "ok" else f"shard {sound}", decoded)
                  for slot, kind, decoded in reads]
        shard = Shard(contents, index_nbytes, at_end, index_checksum)
        sources.append(shard.source(shard_kind, folder / f"s{s}", paths, rng))
    firsts, ends, src, out_at = [], [], [], []
    for _ in inner:
        firsts.append(len(src))
        for _ in range(int(rng.integers(0, 6))):
            src.append(int(rng.integers(0, nelements)) * itemsize)
            out_at.append(len(out_at) * itemsize)
        ends.append(len(src))
    size = max(1, len(out_at)) * itemsize
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(size), np.uint8)
    outs, statuses, shard_statuses = [], [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(inner), 77, dtype=np.int8)
        shard_status = np.full(nshards, 77, dtype=np.int8)
        impl.read_shard_elements(
            sources, paths, index_nbytes, at_end, index_checksum,
            np.array([k[0] for k in inner], dtype=np.int64),
            np.array([k[1] for k in inner], dtype=np.int64), _i64(*firsts), _i64(*ends),
            _i64(*src), _i64(*out_at), dst, itemsize, fill, compressor, checksums, swap,
            nbytes, nthreads, status, shard_status)
        outs.append(dst)
        statuses.append(status)
        shard_statuses.append(shard_status)
    for got, want in (statuses, shard_statuses):
        assert ((got < 0) == (want < 0)).all() and (got[got >= 0] == want[got >= 0]).all()
    for k, (_, _, kind, decoded) in enumerate(inner):
        if statuses[0][k] < 0:
            continue
        for p in range(firsts[k], ends[k]):
            piece = slice(out_at[p], out_at[p] + itemsize)
            assert outs[0][piece].tobytes() == outs[1][piece].tobytes()
            if kind == "ok":
                assert outs[0][piece].tobytes() == decoded[src[p]:src[p] + itemsize]
            elif kind in ("missing", "shard missing", "shard dir"):
                assert outs[0][piece].tobytes() == fill


# -- by hand -----------------------------------------------------------------------------------


def _i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def _one_chunk_plan(nbytes: int = 8, itemsize: int = 1) -> dict[str, Any]:
    """A plan of two 1-d chunks of ``nbytes`` bytes: chunk 0 whole at dst 0, chunk 1 direct
    at dst ``nbytes``."""
    n = nbytes // itemsize
    return dict(firsts=_i64(0, 1), ends=_i64(1, 2), src_offsets=_i64(0, 0),
                src_strides=_i64(itemsize), dst=np.zeros(2 * nbytes, np.uint8),
                dst_offsets=_i64(0, nbytes), dst_strides=_i64(itemsize, itemsize).reshape(2, 1),
                counts=_i64(n, n).reshape(2, 1), itemsize=itemsize, fill=b"\x07" * itemsize,
                direct=np.array([0, 1], np.uint8), compressor=NONE, checksums=0, swap=0,
                nbytes=nbytes, nthreads=1, status=np.zeros(2, np.int8), transpose=None)


def _call_chunks(impl: Any, sources: list[Any], paths: bool, plan: dict[str, Any]) -> None:
    impl.read_chunks(sources, paths, plan["firsts"], plan["ends"], plan["src_offsets"],
                     plan["src_strides"], plan["dst"], plan["dst_offsets"], plan["dst_strides"],
                     plan["counts"], plan["itemsize"], plan["fill"], plan["direct"],
                     plan["compressor"], plan["checksums"], plan["swap"], plan["nbytes"],
                     plan["nthreads"], plan["status"], plan["transpose"])


def _call_shards(impl: Any, sources: list[Any], plan: dict[str, Any], *, paths: bool = False,
                 index_nbytes: int = 16, checksum: bool = False,
                 inner_shard: np.ndarray | None = None, inner_slot: np.ndarray | None = None,
                 shard_status: np.ndarray | None = None) -> None:
    impl.read_shards(sources, paths, index_nbytes, True, checksum,
                     _i64(0, 0) if inner_shard is None else inner_shard,
                     _i64(0, 0) if inner_slot is None else inner_slot,
                     plan["firsts"], plan["ends"], plan["src_offsets"], plan["src_strides"],
                     plan["dst"], plan["dst_offsets"], plan["dst_strides"], plan["counts"],
                     plan["itemsize"], plan["fill"], plan["direct"], plan["compressor"],
                     plan["checksums"], plan["swap"], plan["nbytes"], plan["nthreads"],
                     plan["status"],
                     np.zeros(len(sources), np.int8) if shard_status is None else shard_status,
                     plan["transpose"])


@pytest.mark.parametrize("impl", IMPLS)
def test_a_transposed_chunk_by_hand(impl: Any) -> None:
    """Chunks of shape (2, 4) stored transposed (order [1, 0]: a column at a time): the
    first copied out whole, the second decoded straight into dst, both in C order."""
    plan = _one_chunk_plan()
    plan["transpose"] = np.array([[2, 4], [1, 0]])
    _call_chunks(impl, [b"AEBFCGDH", b"aebfcgdh"], False, plan)
    assert plan["dst"].tobytes() == b"ABCDEFGHabcdefgh"
    assert plan["status"].tolist() == [READ, READ]


@pytest.mark.parametrize("impl", IMPLS)
def test_a_small_plan_by_hand(impl: Any, tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"ABCDEFGH")
    plan = _one_chunk_plan()
    _call_chunks(impl, [bytes(tmp_path / "a"), bytes(tmp_path / "b")], True, plan)
    assert plan["dst"].tobytes() == b"ABCDEFGH" + b"\x07" * 8
    assert plan["status"].tolist() == [READ, MISSING]
    plan = _one_chunk_plan()
    _call_chunks(impl, [None, bytearray(b"abcdefgh")], False, plan)
    assert plan["dst"].tobytes() == b"\x07" * 8 + b"abcdefgh"
    assert plan["status"].tolist() == [MISSING, READ]


@pytest.mark.parametrize("impl", IMPLS)
def test_what_is_not_a_chunk_file(impl: Any, tmp_path: Path) -> None:
    """A directory, a FIFO or a path through a file is no chunk (as the store answers); a
    name too long or a loop of links is a failure."""
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_bytes(b"ABCDEFGH")
    os.mkfifo(tmp_path / "fifo")  # (opened without blocking: no writer needed)
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    for path, want in [(tmp_path / "d", MISSING), (tmp_path / "f" / "x", MISSING),
                       (tmp_path / "fifo", MISSING),
                       (tmp_path / ("n" * 300), None), (tmp_path / "loop", None)]:
        plan = _one_chunk_plan()
        _call_chunks(impl, [bytes(path), bytes(path)], True, plan)
        if want is None:
            assert (plan["status"] < 0).all(), path
        else:
            assert plan["status"].tolist() == [want, want], path


@pytest.mark.parametrize("impl", IMPLS)
def test_a_shard_by_hand(impl: Any, tmp_path: Path) -> None:
    """Entry 0 read, entry 1 not stored; a missing shard filled; an index of bad
    checksum failing its inner chunks."""
    index = np.array([[2, 8], [M64, M64]], dtype="<u8").tobytes()
    shard = b"xyABCDEFGH" + index + _crc(index)
    plan = _one_chunk_plan()
    _call_shards(impl, [shard], plan, index_nbytes=36, checksum=True,
                 inner_slot=_i64(0, 1))
    assert plan["dst"].tobytes() == b"ABCDEFGH" + b"\x07" * 8
    assert plan["status"].tolist() == [READ, MISSING]
    plan = _one_chunk_plan()
    (tmp_path / "s").write_bytes(shard[:-1] + bytes([shard[-1] ^ 1]))
    shard_status = np.zeros(2, np.int8)
    _call_shards(impl, [bytes(tmp_path / "s"), bytes(tmp_path / "t")], plan, paths=True,
                 index_nbytes=36, checksum=True, inner_shard=_i64(0, 1),
                 shard_status=shard_status)
    assert shard_status[0] < 0 and shard_status[1] == MISSING
    assert plan["status"][0] < 0 and plan["status"][1] == MISSING
    assert plan["dst"][8:].tobytes() == b"\x07" * 8


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("entry", [(0, 9), (7, 4), (M64, 3)],
                         ids=["overlapping", "into the index", "half missing"])
def test_an_unsound_index_fails_its_whole_shard(impl: Any, entry: tuple[int, int]) -> None:
    """Entry 0 is sound, entry 1 overlaps it, reaches into the index or is half missing:
    the shard's index is refused whole (as the Python path refuses it), so inner chunk 0 is
    not read either, and nothing is written."""
    index = np.array([[0, 8], list(entry)], dtype="<u8").tobytes()
    plan = _one_chunk_plan()
    shard_status = np.zeros(1, np.int8)
    _call_shards(impl, [b"ABCDEFGH" + index], plan, index_nbytes=32, checksum=False,
                 inner_slot=_i64(0, 1), shard_status=shard_status)
    assert shard_status[0] < 0
    assert (plan["status"] < 0).all()
    assert not plan["dst"].any()


def test_negative_source_strides_are_refused(tmp_path: Path) -> None:
    """Source strides are a chunk's C-order strides: a raw chunk file is read by the span
    its pieces cover, which negative strides would put outside the bytes read."""
    (tmp_path / "c").write_bytes(bytes(range(16)))
    for impl in (ref, chunks):
        dst, status = np.zeros(16, np.uint8), np.full(1, 77, np.int8)
        with pytest.raises(ValueError, match="negative"):
            impl.read_chunks([bytes(tmp_path / "c")], True, _i64(0), _i64(1), _i64(15),
                             _i64(-1), dst, _i64(0), _i64(1).reshape(1, 1),
                             _i64(16).reshape(1, 1), 1, b"\xee", np.zeros(1, np.uint8), NONE,
                             0, 0, 16, 1, status)
        assert status.tolist() == [77] and not dst.any()


def test_indexes_too_large_for_memory_are_refused() -> None:
    """The indexes of all the shards of a call are held at once: their size is checked in
    Python integers, never multiplied in C."""
    for impl in (ref, chunks):
        with pytest.raises(ValueError, match="index"):
            impl.read_shards([b"/nonexistent"] * 4, True, 2**62 + 16, True, False, _i64(0),
                             _i64(0), _i64(0), _i64(1), _i64(0), _i64(1),
                             np.zeros(16, np.uint8), _i64(0), _i64(1).reshape(1, 1),
                             _i64(16).reshape(1, 1), 1, b"\xee", np.zeros(1, np.uint8), NONE,
                             0, 0, 16, 1, np.zeros(1, np.int8), np.zeros(4, np.int8))


# -- plans that do not hold together -----------------------------------------------------------


def _bad_plans() -> list[Any]:
    """(name, change to _one_chunk_plan()): each makes the plan not hold together."""

    def put(**kw: Any) -> Any:
        return lambda plan: plan.update(kw)

    return [
        ("first after end", put(firsts=_i64(1, 1), ends=_i64(0, 2))),
        ("end past the pieces", put(ends=_i64(1, 3))),
        ("negative first", put(firsts=_i64(-1, 1))),
        ("firsts too short", put(firsts=_i64(0))),
        ("direct too long", put(direct=np.zeros(3, np.uint8))),
        ("status too short", put(status=np.zeros(1, np.int8))),
        ("piece past dst", put(dst_offsets=_i64(9, 8))),
        ("direct past dst", put(dst_offsets=_i64(0, 9), counts=_i64(8, 7).reshape(2, 1))),
        ("piece past the chunk", put(src_offsets=_i64(1, 0))),
        ("negative src offset", put(src_offsets=_i64(-1, 0))),
        ("negative extent", put(counts=_i64(-1, 8).reshape(2, 1))),
        ("direct with two pieces", put(firsts=_i64(0, 0), direct=np.ones(2, np.uint8))),
        ("direct with no piece", put(firsts=_i64(0, 1), ends=_i64(1, 1),
                                     direct=np.array([0, 1], np.uint8))),
        ("stride rows too long", put(dst_strides=_i64(1, 1, 1, 1).reshape(2, 2))),
        ("unknown compressor", put(compressor=99)),
        ("negative compressor", put(compressor=-1)),
        ("too many checksums", put(checksums=9)),
        ("negative checksums", put(checksums=-1)),
        ("fill too short", put(itemsize=2, fill=b"\x07", src_strides=_i64(2),
                               dst_strides=_i64(2, 2).reshape(2, 1),
                               counts=_i64(4, 4).reshape(2, 1))),
        ("fill too long", put(fill=b"\x07\x07")),
        ("itemsize 0", put(itemsize=0, fill=b"")),
        ("nbytes not whole elements", put(itemsize=3, fill=b"abc", src_strides=_i64(3),
                                          dst_strides=_i64(3, 3).reshape(2, 1),
                                          counts=_i64(2, 2).reshape(2, 1))),
        ("nbytes 0", put(nbytes=0)),
        ("swap 3", put(swap=3)),
        ("swap wider than the chunk", put(swap=16)),
        # a transpose codec's [chunk shape, order]
        ("transpose not a permutation", put(transpose=np.array([[2, 4], [0, 0]]))),
        ("transpose order out of range", put(transpose=np.array([[2, 4], [0, 2]]))),
        ("transpose shape not nbytes", put(transpose=np.array([[2, 3], [1, 0]]))),
        ("transpose shape not a size", put(transpose=np.array([[-2, -4], [1, 0]]))),
        ("transpose of 3 rows", put(transpose=np.array([[2, 4], [1, 0], [0, 1]]))),
    ]


BAD_PLANS = _bad_plans()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(("name", "change"), BAD_PLANS, ids=[n for n, _ in BAD_PLANS])
def test_a_plan_that_does_not_hold_together(impl: Any, name: str, change: Any) -> None:
    for paths in (False, True):
        plan = _one_chunk_plan()
        change(plan)
        sources: list[Any] = [b"x", b"y"] if paths else [b"ABCDEFGH", b"ABCDEFGH"]
        with pytest.raises(ValueError):
            _call_chunks(impl, sources, paths, plan)
        plan = _one_chunk_plan()
        change(plan)
        with pytest.raises(ValueError):
            _call_shards(impl, [b"ABCDEFGH" + np.array([0, 8], "<u8").tobytes()], plan)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("path", [b"a\0b", "a", None, 3])
def test_a_path_that_is_not_a_path(impl: Any, path: Any) -> None:
    with pytest.raises(ValueError):
        _call_chunks(impl, [b"a", path], True, _one_chunk_plan())
    with pytest.raises(ValueError):
        _call_shards(impl, [path], _one_chunk_plan(), paths=True)


@pytest.mark.parametrize("impl", IMPLS)
def test_a_value_that_is_not_a_buffer(impl: Any) -> None:
    with pytest.raises(TypeError):
        _call_chunks(impl, [b"ABCDEFGH", "ABCDEFGH"], False, _one_chunk_plan())


@pytest.mark.parametrize("impl", IMPLS)
def test_too_many_shards(impl: Any) -> None:
    assert impl.MAX_SHARDS == chunks.MAX_SHARDS
    sources: list[Any] = [None] * (chunks.MAX_SHARDS + 1)
    with pytest.raises(ValueError):
        _call_shards(impl, sources, _one_chunk_plan())
    plan = _one_chunk_plan()  # (as many as allowed: all missing, filled)
    _call_shards(impl, sources[:-1], plan)
    assert plan["status"].tolist() == [MISSING, MISSING]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(("index_nbytes", "checksum", "shard", "slot", "nshards"), [
    (0, False, 0, 0, 1), (17, False, 0, 0, 1), (20, False, 0, 0, 1), (16, True, 0, 0, 1),
    (32, False, 0, 2, 1), (16, False, 1, 0, 1), (16, False, -1, 0, 1), (16, False, 0, -1, 1),
    (16, False, 0, 0, 2),  # (shard_status of the wrong length)
])
def test_a_shard_plan_that_does_not_hold_together(impl: Any, index_nbytes: int,
                                                  checksum: bool, shard: int, slot: int,
                                                  nshards: int) -> None:
    with pytest.raises(ValueError):
        _call_shards(impl, [None], _one_chunk_plan(), index_nbytes=index_nbytes,
                     checksum=checksum, inner_shard=_i64(0, shard), inner_slot=_i64(0, slot),
                     shard_status=np.zeros(nshards, np.int8))


# -- outer products (read_chunks_outer, read_shards_outer) --------------------------------------
#
# Per chunk 0 to 3 outer-product pieces: per axis a few indices into the chunk (unsorted,
# repeats allowed, sometimes none) landing at distinct or repeated places of the piece's own
# region of the output, laid out in any axis order.  The kernel and its reference must agree
# as above, and an undamaged chunk reads as numpy's ``np.ix_`` of the bytes it was encoded
# from (the last of repeated writes winning, in C order).


@dataclass
class OuterPlan:
    """A plan of outer-product pieces, and what each chunk should read as."""

    shape: tuple[int, ...]
    itemsize: int
    rng: np.random.Generator
    firsts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    bounds: list[int] = field(default_factory=lambda: [0])
    src_offsets: list[int] = field(default_factory=list)
    dst_offsets: list[int] = field(default_factory=list)
    counts: list[list[int]] = field(default_factory=list)
    # per piece, per axis: the chunk indices and the output byte offsets (base in axis 0)
    picks: list[list[np.ndarray]] = field(default_factory=list)
    places: list[list[np.ndarray]] = field(default_factory=list)
    size: int = 0

    @property
    def nbytes(self) -> int:
        return self.itemsize * int(np.prod(self.shape))

    def add_chunk(self) -> None:
        """0 to 3 pieces of a chunk, each into a region of the output of its own."""
        rng, ndim = self.rng, len(self.shape)
        self.firsts.append(len(self.counts))
        for _ in range(int(rng.choice([0, 1, 1, 2, 3]))):
            self.size += int(rng.integers(0, 8))
            counts = [int(rng.integers(0 if rng.random() < 0.05 else 1, 5))
                      for _ in range(ndim)]
            canvas = [max(1, c) + int(rng.integers(0, 3)) for c in counts]
            strides, step = [0] * ndim, self.itemsize
            for d in rng.permutation(ndim)[::-1]:  # (the region's axes in any order)
                strides[d] = step
                step *= canvas[d]
            picks, places = [], []
            for d in range(ndim):
                picks.append(rng.integers(0, self.shape[d], counts[d]))
                where = rng.permutation(canvas[d])[:counts[d]]
                if counts[d] > 1 and rng.random() < 0.2:  # (a repeated destination)
                    where[-1] = where[0]
                places.append(where * strides[d] + (self.size if d == 0 else 0))
            self.size += step
            chunk_strides = _c_strides(self.shape, self.itemsize)
            for d in range(ndim):
                self.src_offsets += (picks[d] * chunk_strides[d]).tolist()
                self.dst_offsets += places[d].tolist()
            self.bounds.append(len(self.src_offsets))
            self.counts.append(counts)
            self.picks.append(picks)
            self.places.append(places)
        self.ends.append(len(self.counts))

    def arrays(self) -> dict[str, Any]:
        return dict(firsts=_i64(*self.firsts), ends=_i64(*self.ends),
                    bounds=_i64(*self.bounds), src_offsets=_i64(*self.src_offsets),
                    dst_offsets=_i64(*self.dst_offsets),
                    counts=np.array(self.counts, dtype=np.int64).reshape(
                        len(self.counts), len(self.shape)))

    def _elements(self, p: int) -> tuple[np.ndarray, np.ndarray]:
        """Piece ``p``'s elements in C order: their chunk indices (rows) and output bytes."""
        picks, places = self.picks[p], self.places[p]
        grid = np.meshgrid(*picks, indexing="ij") if picks else []
        at = np.zeros([len(x) for x in places], dtype=np.int64)
        for d, x in enumerate(places):
            at = at + x.reshape([-1 if e == d else 1 for e in range(len(places))])
        return np.stack([g.reshape(-1) for g in grid], axis=1) if picks else np.zeros(
            (1, 0), np.int64), at.reshape(-1)

    def mask(self, c: int) -> np.ndarray:
        """The output bytes chunk ``c``'s pieces cover."""
        out = np.zeros(self.size, dtype=bool)
        for p in range(self.firsts[c], self.ends[c]):
            for at in self._elements(p)[1].tolist():
                out[at:at + self.itemsize] = True
        return out

    def expect(self, out: np.ndarray, c: int, decoded: bytes | None, fill: bytes) -> None:
        """Chunk ``c``'s pieces written into ``out`` in C order (the last write wins): from
        ``decoded`` (numpy's reading of the chunk at those indices), or the fill."""
        chunk = np.frombuffer(decoded or bytes(self.nbytes), np.uint8).reshape(
            *self.shape, self.itemsize)
        for p in range(self.firsts[c], self.ends[c]):
            rows, ats = self._elements(p)
            for row, at in zip(rows.tolist(), ats.tolist(), strict=True):
                out[at:at + self.itemsize] = (np.frombuffer(fill, np.uint8) if decoded is None
                                              else chunk[tuple(row)])


def _sources(kinds: list[str], plan: OuterPlan, paths: bool, folder: Any, swap: int,
             compressor: int, zstd_checksum: bool, checksums: int, order: list[int] | None
             ) -> tuple[list[Any], list[bytes | None]]:
    """Each chunk encoded (laid out by a transpose codec of ``order``), damaged as its kind
    says, as a file or a value; and the bytes each undamaged one was encoded from."""
    rng, itemsize = plan.rng, plan.itemsize
    cap = plan.nbytes + (plan.nbytes >> 3) + 4096 + 4 * checksums
    sources: list[Any] = []
    decoded_of: list[bytes | None] = []
    for c, kind in enumerate(kinds):
        decoded = rng.integers(0, 3, plan.nbytes, dtype=np.uint8).tobytes()
        encoded = _encode(_laid_out(decoded, plan.shape, itemsize, order), itemsize, swap,
                          compressor, zstd_checksum, checksums)
        decoded_of.append(decoded if kind == "ok" else None)
        stored: bytes | None = encoded
        if kind in ("missing", "dir", "io"):
            stored = None
        elif kind != "ok":
            stored = _damage(kind, encoded, cap, rng)
        if paths:
            path = folder / f"c{c}"
            if kind == "dir":
                path.mkdir()
            elif kind == "io":
                path = folder / ("x" * 300)  # (ENAMETOOLONG)
            elif stored is not None:
                path.write_bytes(stored)
            sources.append(os.fsencode(path))
        else:
            sources.append(None if stored is None else _value(stored, rng))
    return sources, decoded_of


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPES), chain=st.sampled_from(CHAINS),
       kinds=st.lists(st.sampled_from(CHUNK_KINDS + FILE_KINDS), min_size=0, max_size=6),
       transposed=st.booleans(), paths=st.booleans(), nthreads=st.sampled_from([1, 4]),
       seed=st.integers(0, 2**32 - 1))
def test_read_chunks_outer_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, shape: tuple[int, ...],
    dtype: tuple[str, int, int], chain: tuple[str, int, bool, int], kinds: list[str],
    transposed: bool, paths: bool, nthreads: int, seed: int,
) -> None:
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    order = _order(transposed, shape, rng)
    if not paths:
        kinds = [k if k not in FILE_KINDS else "missing" for k in kinds]
    plan = OuterPlan(shape, itemsize, rng)
    for _ in kinds:
        plan.add_chunk()
    fill = rng.bytes(itemsize)
    sources, decoded_of = _sources(kinds, plan, paths, tmp_path_factory.mktemp("outer"), swap,
                                   compressor, zstd_checksum, checksums, order)
    a = plan.arrays()
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(plan.size), np.uint8)
    outs, statuses = [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(kinds), 77, dtype=np.int8)
        impl.read_chunks_outer(sources, paths, a["firsts"], a["ends"], a["bounds"],
                               a["src_offsets"], a["dst_offsets"], a["counts"], dst, itemsize,
                               fill, compressor, checksums, swap, plan.nbytes, nthreads,
                               status, _transpose(shape, order))
        outs.append(dst)
        statuses.append(status)
    _compare(plan, outs[0], outs[1], statuses[0], statuses[1], initial)  # type: ignore[arg-type]
    _check_expected(statuses[0], [_expected_status(k, plan.ends[c] > plan.firsts[c], checksums)
                                  for c, k in enumerate(kinds)])
    expected_out = initial.copy()
    for c, kind in enumerate(kinds):
        if kind in ("ok", "missing", "dir"):
            plan.expect(expected_out, c, decoded_of[c], fill)
            mask = plan.mask(c)
            assert (outs[0][mask] == expected_out[mask]).all(), f"chunk {c} ({kind})"


@settings(max_examples=60, deadline=None)
@SHARD_PLANS
def test_read_shards_outer_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, shape: tuple[int, ...],
    dtype: tuple[str, int, int], chain: tuple[str, int, bool, int], per_shard: int,
    nshards: int, shard_kinds: list[str], at_end: bool, index_checksum: bool,
    transposed: bool, paths: bool, nthreads: int, seed: int,
) -> None:
    _, itemsize, swap = dtype
    _, compressor, zstd_checksum, checksums = chain
    rng = np.random.default_rng(seed)
    order = _order(transposed, shape, rng)
    plan = OuterPlan(shape, itemsize, rng)
    cap = plan.nbytes + (plan.nbytes >> 3) + 4096 + 4 * checksums
    index_nbytes = 16 * per_shard + (4 if index_checksum else 0)
    fill = rng.bytes(itemsize)
    shard_kinds = _possible_shard_kinds(shard_kinds[:nshards], index_checksum, paths)
    sources, inner, _ = _shards_read(
        rng, shard_kinds, per_shard, plan.nbytes,
        lambda raw: _encode(_laid_out(raw, shape, itemsize, order), itemsize, swap, compressor,
                            zstd_checksum, checksums), cap,
        index_nbytes, at_end, index_checksum, tmp_path_factory.mktemp("shards-outer"), paths)
    for _ in inner:
        plan.add_chunk()
    a = plan.arrays()
    initial = np.frombuffer(np.random.default_rng(GUARD_SEED).bytes(plan.size), np.uint8)
    outs, statuses, shard_statuses = [], [], []
    for impl in (chunks, ref):
        dst = initial.copy()
        status = np.full(len(inner), 77, dtype=np.int8)
        shard_status = np.full(nshards, 77, dtype=np.int8)
        impl.read_shards_outer(
            sources, paths, index_nbytes, at_end, index_checksum,
            np.array([r.shard for r in inner], dtype=np.int64),
            np.array([r.slot for r in inner], dtype=np.int64), a["firsts"], a["ends"],
            a["bounds"], a["src_offsets"], a["dst_offsets"], a["counts"], dst, itemsize, fill,
            compressor, checksums, swap, plan.nbytes, nthreads, status, shard_status,
            _transpose(shape, order))
        outs.append(dst)
        statuses.append(status)
        shard_statuses.append(shard_status)
    _compare(plan, outs[0], outs[1], statuses[0], statuses[1], initial)  # type: ignore[arg-type]
    got_shards, want_shards = shard_statuses
    assert ((got_shards < 0) == (want_shards < 0)).all(), (got_shards, want_shards)
    assert (got_shards[got_shards >= 0] == want_shards[got_shards >= 0]).all()
    expected_out = initial.copy()
    for k, (_, _, kind, decoded) in enumerate(inner):
        has_pieces = plan.ends[k] > plan.firsts[k]
        if kind in ("shard missing", "shard dir"):
            assert statuses[0][k] == (MISSING if has_pieces else 0), (k, kind)
        if kind in ("ok", "missing", "shard missing", "shard dir"):
            plan.expect(expected_out, k, decoded, fill)
            mask = plan.mask(k)
            assert (outs[0][mask] == expected_out[mask]).all(), f"inner chunk {k} ({kind})"


def _outer_plan() -> dict[str, Any]:
    """Two 1-d chunks of 8 bytes: chunk 0 gives bytes 1 and 3 to dst 0 and 1, chunk 1
    bytes 7 and 0 to dst 2 and 3."""
    return dict(firsts=_i64(0, 1), ends=_i64(1, 2), bounds=_i64(0, 2, 4),
                src_offsets=_i64(1, 3, 7, 0), dst_offsets=_i64(0, 1, 2, 3),
                counts=_i64(2, 2).reshape(2, 1), dst=np.zeros(4, np.uint8), itemsize=1,
                fill=b"\x07", compressor=NONE, checksums=0, swap=0, nbytes=8, nthreads=1,
                status=np.zeros(2, np.int8))


def _call_outer(impl: Any, sources: list[Any], paths: bool, plan: dict[str, Any]) -> None:
    impl.read_chunks_outer(sources, paths, plan["firsts"], plan["ends"], plan["bounds"],
                           plan["src_offsets"], plan["dst_offsets"], plan["counts"],
                           plan["dst"], plan["itemsize"], plan["fill"], plan["compressor"],
                           plan["checksums"], plan["swap"], plan["nbytes"], plan["nthreads"],
                           plan["status"])


def _call_shards_outer(impl: Any, sources: list[Any], plan: dict[str, Any]) -> None:
    impl.read_shards_outer(sources, False, 16, True, False, _i64(0, 0), _i64(0, 0),
                           plan["firsts"], plan["ends"], plan["bounds"], plan["src_offsets"],
                           plan["dst_offsets"], plan["counts"], plan["dst"], plan["itemsize"],
                           plan["fill"], plan["compressor"], plan["checksums"], plan["swap"],
                           plan["nbytes"], plan["nthreads"], plan["status"],
                           np.zeros(len(sources), np.int8))


@pytest.mark.parametrize("impl", IMPLS)
def test_an_outer_plan_by_hand(impl: Any) -> None:
    plan = _outer_plan()
    _call_outer(impl, [b"abcdefgh", None], False, plan)
    assert plan["dst"].tobytes() == b"bd\x07\x07"
    assert plan["status"].tolist() == [chunks.READ, MISSING]
    plan = _outer_plan()
    _call_shards_outer(impl, [b"abcdefgh" + np.array([0, 8], "<u8").tobytes()], plan)
    assert plan["dst"].tobytes() == b"bdha"


def _bad_outer_plans() -> list[Any]:
    """(name, change to _outer_plan()): each makes the plan not hold together."""

    def put(**kw: Any) -> Any:
        return lambda plan: plan.update(kw)

    return [
        ("piece past the chunk", put(src_offsets=_i64(1, 8, 7, 0))),
        ("negative src offset", put(src_offsets=_i64(1, 3, -1, 0))),
        ("piece past dst", put(dst_offsets=_i64(0, 1, 2, 4))),
        ("negative dst offset", put(dst_offsets=_i64(-1, 1, 2, 3))),
        ("counts not the offsets", put(counts=_i64(2, 1).reshape(2, 1))),
        ("negative count", put(counts=_i64(-1, 2).reshape(2, 1))),
        ("bounds too short", put(bounds=_i64(0, 2))),
        ("bounds past the offsets", put(bounds=_i64(0, 2, 5))),
        ("bounds decreasing", put(bounds=_i64(0, 3, 2))),
        ("offsets of different lengths", put(dst_offsets=_i64(0, 1, 2))),
        ("end past the pieces", put(ends=_i64(1, 3))),
        ("first after end", put(firsts=_i64(1, 1), ends=_i64(0, 2))),
        ("status too short", put(status=np.zeros(1, np.int8))),
        ("unknown compressor", put(compressor=99)),
        ("fill too long", put(fill=b"\x07\x07")),
    ]


BAD_OUTER_PLANS = _bad_outer_plans()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(("name", "change"), BAD_OUTER_PLANS,
                         ids=[n for n, _ in BAD_OUTER_PLANS])
def test_an_outer_plan_that_does_not_hold_together(impl: Any, name: str, change: Any) -> None:
    plan = _outer_plan()
    change(plan)
    with pytest.raises(ValueError):
        _call_outer(impl, [b"abcdefgh", b"abcdefgh"], False, plan)
    plan = _outer_plan()
    change(plan)
    with pytest.raises(ValueError):
        _call_shards_outer(impl, [b"abcdefgh" + np.array([0, 8], "<u8").tobytes()], plan)
