"""Pure-numpy reference implementations of every compiled kernel (the tests' oracle).

Same names, signatures, semantics and ValueError conditions as ``copy.pyx``, ``scatter.pyx``,
``layout.pyx``, ``grid.pyx``, ``boxes.pyx``, ``shard.pyx``, ``fileio.pyx``, ``checksum.pyx``,
``chunks.pyx`` and ``pool.pyx`` (see the ``.pyi`` stubs), written the obvious way with numpy,
``os`` and Python integers and independently of the Cython code paths: strided regions become
``numpy.lib.stride_tricks.as_strided`` views with a ``V<itemsize>`` data type, projections
come from ``numpy.searchsorted`` and run-length grouping, the CRC-32C goes bit by bit,
compressed chunks go through numcodecs and ``zlib`` (zstd frames are compressed by
:func:`zstd_frame`: numcodecs' calls, made with ctypes on the libzstd zarr3c bound), a read
plan's chunks one after another.
Not meant to be fast; meant to be clearly right.  Error messages are shorter than the kernels'.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import math
import mmap
import os
import stat
import sys
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numcodecs.blosc
import numcodecs.zstd
import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import NDArray

try:
    import fcntl
except ImportError:  # Windows, which has no fileio kernel to agree with
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:  # the alias lives in the stub only
    from zarr3c._kernels.copy import ReadBuffer

__all__ = [
    "basic_box",
    "box_chunk_pieces",
    "byteswap",
    "check_shard_index",
    "copy_elements",
    "copy_outer",
    "copy_pieces",
    "copy_strided",
    "count_box_pieces",
    "crc32c",
    "decode_bytes",
    "decode_utf8",
    "decode_utf8_into",
    "encode_bytes",
    "encode_utf8",
    "EncodeArena",
    "encoded_cap",
    "fill_pieces",
    "fill_strided",
    "group_by_key",
    "is_uniform",
    "locate_points_offsets",
    "locate_points_regular",
    "plan_box_in_cell",
    "plan_box_pieces",
    "project_slice_offsets",
    "project_slice_regular",
    "read_box_into",
    "read_chunks",
    "read_chunks_outer",
    "read_elements",
    "read_shard_elements",
    "read_files_elements",
    "read_files_ranges_into",
    "read_ranges_into",
    "read_shard_parts",
    "read_shards",
    "read_shards_outer",
    "read_tail_into",
    "spread",
    "transpose_into",
    "write_chunks",
    "write_shards",
    "zstd_frame",
]

_MAX_NDIM = 64


def _ints(a: NDArray[np.int64]) -> list[int]:
    return [int(v) for v in np.asarray(a, dtype=np.int64)]


def _u8(buf: ReadBuffer) -> NDArray[np.uint8]:
    if isinstance(buf, bytes | bytearray | memoryview):
        arr = np.frombuffer(buf, dtype=np.uint8)
    else:
        arr = np.asarray(buf)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError("expected a 1-d uint8 buffer")
    return arr


def _region(
    fn: str,
    name: str,
    buf: NDArray[np.uint8],
    offset: int,
    strides: Sequence[int],
    shape: Sequence[int],
    itemsize: int,
    *,
    writeable: bool,
) -> np.ndarray:
    """A ``V<itemsize>`` view of a non-empty region of ``buf``, after a bounds check."""
    lo = offset + sum(min(0, s) * (n - 1) for s, n in zip(strides, shape, strict=True))
    hi = offset + sum(max(0, s) * (n - 1) for s, n in zip(strides, shape, strict=True))
    hi += itemsize - 1
    if lo < 0 or hi >= len(buf):
        raise ValueError(f"{fn}: the region reaches outside {name}")
    first = buf[offset : offset + itemsize].view(f"V{itemsize}")
    return as_strided(first, shape=tuple(shape), strides=tuple(strides), writeable=writeable)


def _check_common(
    fn: str,
    shape: Sequence[int],
    strides: Sequence[Sequence[int]],
    offsets: Sequence[int],
    itemsize: int,
) -> bool:
    """Shared argument checks; returns True if the region is empty."""
    if any(len(s) != len(shape) for s in strides):
        raise ValueError(f"{fn}: the stride arrays and the shape must have the same length")
    if len(shape) > _MAX_NDIM:
        raise ValueError(f"{fn}: too many dimensions")
    if itemsize < 1:
        raise ValueError(f"{fn}: itemsize must be >= 1")
    if any(o < 0 for o in offsets):
        raise ValueError(f"{fn}: negative offset")
    if any(n < 0 for n in shape):
        raise ValueError(f"{fn}: negative extent")
    return any(n == 0 for n in shape)


def copy_strided(
    src: ReadBuffer,
    src_offset: int,
    src_strides: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offset: int,
    dst_strides: NDArray[np.int64],
    shape: NDArray[np.int64],
    itemsize: int,
) -> None:
    """Reference of :func:`zarr3c._kernels.copy.copy_strided`."""
    sbuf, sst, dstr, shp = _u8(src), _ints(src_strides), _ints(dst_strides), _ints(shape)
    if _check_common("copy_strided", shp, [sst, dstr], [src_offset, dst_offset], itemsize):
        return
    s = _region("copy_strided", "src", sbuf, src_offset, sst, shp, itemsize, writeable=False)
    d = _region("copy_strided", "dst", dst, dst_offset, dstr, shp, itemsize, writeable=True)
    d[...] = s


def fill_strided(
    dst: NDArray[np.uint8],
    dst_offset: int,
    dst_strides: NDArray[np.int64],
    shape: NDArray[np.int64],
    value: ReadBuffer,
) -> None:
    """Reference of :func:`zarr3c._kernels.copy.fill_strided`."""
    vbuf = _u8(value)
    itemsize = len(vbuf)
    dstr, shp = _ints(dst_strides), _ints(shape)
    if itemsize < 1:
        raise ValueError("fill_strided: value is empty")
    if _check_common("fill_strided", shp, [dstr], [dst_offset], itemsize):
        return
    d = _region("fill_strided", "dst", dst, dst_offset, dstr, shp, itemsize, writeable=True)
    d[...] = vbuf.view(f"V{itemsize}")[0]


def byteswap(buf: NDArray[np.uint8], width: int) -> None:
    """Reference of :func:`zarr3c._kernels.copy.byteswap`."""
    if width not in (1, 2, 4, 8, 16):
        raise ValueError(f"byteswap: width = {width} is not one of 1, 2, 4, 8, 16")
    if len(buf) % width:
        raise ValueError("byteswap: len(buf) is not a multiple of width")
    words = buf.reshape(-1, width)
    words[...] = words[:, ::-1].copy()


def is_uniform(buf: ReadBuffer, value: ReadBuffer) -> bool:
    """Reference of :func:`zarr3c._kernels.copy.is_uniform`."""
    b, v = _u8(buf), _u8(value)
    if len(v) < 1:
        raise ValueError("is_uniform: value is empty")
    if len(b) % len(v):
        raise ValueError("is_uniform: len(buf) is not a multiple of len(value)")
    return bool((b.reshape(-1, len(v)) == v).all())


def copy_elements(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    itemsize: int,
) -> None:
    """Reference of :func:`zarr3c._kernels.scatter.copy_elements`."""
    s, so, do = _u8(src), _ints(src_offsets), _ints(dst_offsets)
    if len(so) != len(do):
        raise ValueError("copy_elements: offset arrays differ in length")
    if itemsize < 1:
        raise ValueError("copy_elements: itemsize must be >= 1")
    if so and (min(so) < 0 or max(so) + itemsize > len(s)):
        raise ValueError("copy_elements: source offsets reach outside src")
    if do and (min(do) < 0 or max(do) + itemsize > len(dst)):
        raise ValueError("copy_elements: destination offsets reach outside dst")
    for a, b in zip(so, do, strict=True):
        dst[b : b + itemsize] = s[a : a + itemsize]


def copy_outer(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    counts: NDArray[np.int64],
    itemsize: int,
) -> None:
    """Reference of :func:`zarr3c._kernels.scatter.copy_outer` (the offsets expanded with
    ``np.add.outer``, then :func:`copy_elements`)."""
    c = _ints(counts)
    if len(c) > 64 or any(n < 0 for n in c) or itemsize < 1:
        raise ValueError("copy_outer: bad counts or itemsize")
    if len(src_offsets) != sum(c) or len(dst_offsets) != sum(c):
        raise ValueError("copy_outer: offset arrays must hold sum(counts) entries")
    if 0 in c:
        return
    bounds = np.cumsum([0, *c])

    def expand(offsets: NDArray[np.int64]) -> NDArray[np.int64]:
        total = np.zeros((), dtype=np.int64)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            total = np.add.outer(total, np.asarray(offsets[lo:hi], dtype=np.int64))
        return total.reshape(-1)

    so, do = expand(src_offsets), expand(dst_offsets)
    buffers = (("src", src_offsets, len(_u8(src))), ("dst", dst_offsets, len(dst)))
    for name, offsets, nbytes in buffers:
        if nbytes < itemsize or (len(offsets) and min(_ints(offsets)) < 0):
            raise ValueError(f"copy_outer: {name} offsets reach outside {name}")
    copy_elements(src, so, dst, do, itemsize)


def transpose_into(
    src: ReadBuffer,
    shape: NDArray[np.int64],
    order: NDArray[np.int64],
    itemsize: int,
    dst: NDArray[np.uint8],
) -> None:
    """Reference of :func:`zarr3c._kernels.layout.transpose_into`."""
    sbuf, shp, perm = _u8(src), _ints(shape), _ints(order)
    if len(perm) != len(shp):
        raise ValueError("transpose_into: len(order) differs from len(shape)")
    if len(shp) > _MAX_NDIM:
        raise ValueError("transpose_into: too many dimensions")
    if itemsize < 1:
        raise ValueError("transpose_into: itemsize must be >= 1")
    if sorted(perm) != list(range(len(shp))):
        raise ValueError("transpose_into: order is not a permutation")
    if any(n < 0 for n in shp):
        raise ValueError("transpose_into: negative extent")
    nbytes = itemsize
    for n in shp:
        nbytes *= n
    if len(sbuf) != nbytes or len(dst) != nbytes:
        raise ValueError("transpose_into: src and dst must hold prod(shape) * itemsize bytes")
    if nbytes == 0:
        return
    chunk = sbuf.view(f"V{itemsize}").reshape(shp)
    dst.view(f"V{itemsize}")[...] = np.ascontiguousarray(chunk.transpose(perm)).reshape(-1)


def _check_slice(fn: str, start: int, step: int, count: int) -> None:
    if start < 0:
        raise ValueError(f"{fn}: start is negative")
    if step < 1:
        raise ValueError(f"{fn}: step must be >= 1")
    if count < 0:
        raise ValueError(f"{fn}: count is negative")
    if count > 0 and start + (count - 1) * step > np.iinfo(np.int64).max:
        raise ValueError(f"{fn}: the last selected element overflows int64")


def _check_offsets(fn: str, offsets: NDArray[np.int64]) -> list[int]:
    off = _ints(offsets)
    if len(off) < 1:
        raise ValueError(f"{fn}: offsets is empty")
    if off[0] != 0:
        raise ValueError(f"{fn}: offsets[0] must be 0")
    if any(b < a for a, b in zip(off, off[1:], strict=False)):
        raise ValueError(f"{fn}: offsets must be non-decreasing")
    return off


def _rows(chunks: np.ndarray, local: np.ndarray) -> NDArray[np.int64]:
    """Group per-element (chunk, local index) into (chunk, first local, count, position)."""
    if len(chunks) == 0:
        return np.empty((0, 4), dtype=np.int64)
    starts = np.flatnonzero(np.diff(chunks, prepend=chunks[0] - 1))
    counts = np.diff(np.append(starts, len(chunks)))
    return np.stack([chunks[starts], local[starts], counts, starts], axis=1).astype(np.int64)


def project_slice_regular(start: int, step: int, count: int, chunk_size: int) -> NDArray[np.int64]:
    """Reference of :func:`zarr3c._kernels.grid.project_slice_regular`."""
    _check_slice("project_slice_regular", start, step, count)
    if chunk_size < 1:
        raise ValueError("project_slice_regular: chunk_size must be >= 1")
    idx = start + step * np.arange(count, dtype=np.int64)
    return _rows(idx // chunk_size, idx % chunk_size)


def project_slice_offsets(
    start: int, step: int, count: int, offsets: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Reference of :func:`zarr3c._kernels.grid.project_slice_offsets`."""
    _check_slice("project_slice_offsets", start, step, count)
    off = _check_offsets("project_slice_offsets", offsets)
    if count > 0 and start + (count - 1) * step >= off[-1]:
        raise ValueError("project_slice_offsets: the last selected index is out of range")
    idx = start + step * np.arange(count, dtype=np.int64)
    arr = np.asarray(off, dtype=np.int64)
    chunks = np.searchsorted(arr, idx, side="right") - 1
    return _rows(chunks, idx - arr[chunks])


def _check_lengths(fn: str, *arrays: NDArray[np.int64]) -> None:
    if len({len(a) for a in arrays}) != 1:
        raise ValueError(f"{fn}: indices, chunk_index and local_index must have equal lengths")


def locate_points_regular(
    indices: NDArray[np.int64],
    chunk_size: int,
    chunk_index: NDArray[np.int64],
    local_index: NDArray[np.int64],
) -> None:
    """Reference of :func:`zarr3c._kernels.grid.locate_points_regular`."""
    _check_lengths("locate_points_regular", indices, chunk_index, local_index)
    if chunk_size < 1:
        raise ValueError("locate_points_regular: chunk_size must be >= 1")
    bad = np.flatnonzero(indices < 0)
    good = len(indices) if len(bad) == 0 else int(bad[0])
    chunk_index[:good] = indices[:good] // chunk_size
    local_index[:good] = indices[:good] % chunk_size
    if len(bad):
        raise ValueError(f"locate_points_regular: indices[{good}] is negative")


def locate_points_offsets(
    indices: NDArray[np.int64],
    offsets: NDArray[np.int64],
    chunk_index: NDArray[np.int64],
    local_index: NDArray[np.int64],
) -> None:
    """Reference of :func:`zarr3c._kernels.grid.locate_points_offsets`."""
    _check_lengths("locate_points_offsets", indices, chunk_index, local_index)
    off = np.asarray(_check_offsets("locate_points_offsets", offsets), dtype=np.int64)
    bad = np.flatnonzero((indices < 0) | (indices >= off[-1]))
    good = len(indices) if len(bad) == 0 else int(bad[0])
    chunks = np.searchsorted(off, indices[:good], side="right") - 1
    chunk_index[:good] = chunks
    local_index[:good] = indices[:good] - off[chunks]
    if len(bad):
        raise ValueError(f"locate_points_offsets: indices[{good}] is out of range")


def group_by_key(
    keys: NDArray[np.int64], nkeys: int, order: NDArray[np.int64], starts: NDArray[np.int64]
) -> None:
    """Reference of :func:`zarr3c._kernels.grid.group_by_key` (numpy's stable argsort)."""
    if nkeys < 0:
        raise ValueError("group_by_key: nkeys is negative")
    if len(order) != len(keys) or len(starts) != nkeys + 1:
        raise ValueError("group_by_key: len(order) must be len(keys), len(starts) nkeys + 1")
    bad = np.flatnonzero((keys < 0) | (keys >= nkeys))
    if len(bad):
        raise ValueError(f"group_by_key: keys[{int(bad[0])}] is outside [0, {nkeys})")
    order[:] = np.argsort(keys, kind="stable")
    starts[0] = 0
    starts[1:] = np.cumsum(np.bincount(keys, minlength=nkeys))


def group_points_regular(
    coords: tuple[NDArray[np.int64], ...],
    chunk_shape: NDArray[np.int64],
    grid_shape: NDArray[np.int64],
    itemsize: int,
    order: NDArray[np.int64],
    offsets: NDArray[np.int64],
    starts: NDArray[np.int64],
) -> None:
    """Reference of :func:`zarr3c._kernels.grid.group_points_regular`."""
    ndim = len(coords)
    if ndim < 1 or len(chunk_shape) != ndim or len(grid_shape) != ndim:
        raise ValueError("group_points_regular: need ndim >= 1 and matching lengths")
    if itemsize < 1:
        raise ValueError("group_points_regular: itemsize must be >= 1")
    n = len(coords[0])
    if any(len(c) != n for c in coords) or len(order) != n or len(offsets) != n:
        raise ValueError("group_points_regular: mismatched lengths")
    chunk = [int(c) for c in chunk_shape]
    grid = [int(g) for g in grid_shape]
    if min(chunk) < 1 or min(grid) < 1:
        raise ValueError("group_points_regular: chunk and grid lengths must be >= 1")
    nkeys = math.prod(grid)
    if nkeys + 1 > 2**63 - 1 or itemsize * math.prod(chunk) > 2**63 - 1 or any(
            c * g > 2**63 - 1 for c, g in zip(chunk, grid, strict=True)):
        raise ValueError("group_points_regular: the grid's sizes overflow int64")
    if len(starts) != nkeys + 1:
        raise ValueError("group_points_regular: len(starts) must be prod(grid_shape) + 1")
    bad = np.stack([(c < 0) | (c >= k * g) for c, k, g in zip(coords, chunk, grid, strict=True)])
    if bad.any():
        point = int(np.flatnonzero(bad.any(axis=0))[0])
        axis = int(np.flatnonzero(bad[:, point])[0])
        raise ValueError(f"group_points_regular: coords[{axis}][{point}] is outside the grid")
    keys = np.zeros(n, dtype=np.int64)
    within = np.zeros(n, dtype=np.int64)
    stride = itemsize
    for d in range(ndim - 1, -1, -1):
        within += (coords[d] % chunk[d]) * stride
        stride *= chunk[d]
    for d in range(ndim):
        keys = keys * grid[d] + coords[d] // chunk[d]
    order[:] = np.argsort(keys, kind="stable")
    offsets[:] = within[order]
    starts[0] = 0
    starts[1:] = np.cumsum(np.bincount(keys, minlength=nkeys))


def _is_index(k: Any) -> bool:
    """An int or a numpy integer, not a boolean (numpy's scalar indices)."""
    return type(k) is int or isinstance(k, np.integer)


def basic_box(
    key: Any, shape: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool] | None:
    """Reference of :func:`zarr3c._kernels.boxes.basic_box` (``slice.indices``)."""
    key = key if type(key) is tuple else (key,)
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ellipses) > 1 or len(key) - len(ellipses) > len(shape):
        return None
    whole = (slice(None),) * (len(shape) - len(key) + len(ellipses))
    key = key[:ellipses[0]] + whole + key[ellipses[0] + 1:] if ellipses else key + whole
    start, stop, out_shape = [], [], []
    for k, length in zip(key, shape, strict=True):
        if _is_index(k):
            if not -length <= k < length:
                return None
            lo = int(k) % length
            hi = lo + 1
        elif type(k) is slice and k.step in (None, 1) and all(
                v is None or _is_index(v) for v in (k.start, k.stop, k.step)):
            lo, hi, _ = k.indices(length)
            out_shape.append(max(hi - lo, 0))
        else:
            return None
        if hi <= lo:
            return None
        start.append(lo)
        stop.append(hi)
    return tuple(start), tuple(stop), tuple(out_shape), not out_shape and not ellipses


def crc32c(data: ReadBuffer, value: int = 0) -> int:
    """Reference of :func:`zarr3c._kernels.checksum.crc32c`: the CRC-32C of ``data`` continued
    from ``value``, one bit at a time with the reflected Castagnoli polynomial (RFC 3720,
    appendix B.4)."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise OverflowError("crc32c: value must be in [0, 2**32)")
    arr = _u8(data)
    if not arr.flags.c_contiguous:
        raise ValueError("crc32c: the buffer is not contiguous")
    crc = value ^ 0xFFFFFFFF
    for byte in arr.tobytes():
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def check_shard_index(
    entries: NDArray[np.uint64], shard_nbytes: int, index_lo: int, index_hi: int
) -> tuple[int, int, int]:
    """Reference of :func:`zarr3c._kernels.shard.check_shard_index` (numpy, several passes)."""
    e = np.asarray(entries)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError("check_shard_index: entries must have shape (n, 2)")
    if shard_nbytes < -1:
        raise ValueError("check_shard_index: shard_nbytes must be >= -1")
    if not ((index_lo == -1 and index_hi == -1) or 0 <= index_lo <= index_hi):
        raise ValueError("check_shard_index: bad index bounds")
    e = e.astype(np.uint64)
    missing = np.uint64(2**64 - 1)
    offsets, lengths = e[:, 0], e[:, 1]
    half = (offsets == missing) != (lengths == missing)
    if half.any():
        return (1, int(np.flatnonzero(half)[0]), -1)
    present = offsets != missing
    if shard_nbytes >= 0:
        size = np.uint64(shard_nbytes)
        outside = present & ((offsets > size) | (lengths > size - np.minimum(offsets, size)))
    else:
        outside = present & (lengths > missing - np.where(present, offsets, 0))
    if outside.any():
        return (2, int(np.flatnonzero(outside)[0]), -1)
    stored = present & (lengths > 0)
    ends = np.where(stored, offsets + np.where(stored, lengths, 0), 0)
    if index_lo >= 0:
        into = stored & (offsets < np.uint64(index_hi)) & (ends > np.uint64(index_lo))
        if into.any():
            return (3, int(np.flatnonzero(into)[0]), -1)
    flat = np.flatnonzero(stored)
    if flat.size > 1:
        order = flat[np.argsort(offsets[flat], kind="stable")]
        overlap = offsets[order[1:]] < ends[order[:-1]]
        if overlap.any():
            k = int(np.flatnonzero(overlap)[0])
            return (4, int(order[k]), int(order[k + 1]))
    return (0, -1, -1)


def _check_pieces(fn: str, n: int, dst_offsets: NDArray[np.int64],
                  dst_strides: NDArray[np.int64], shapes: NDArray[np.int64], ndim: int) -> None:
    if len(dst_offsets) != n or dst_strides.shape[0] != n or shapes.shape[0] != n:
        raise ValueError(f"{fn}: one row per piece")
    if dst_strides.shape[1] != ndim or shapes.shape[1] != ndim:
        raise ValueError(f"{fn}: rows of the wrong length")
    if ndim > _MAX_NDIM:
        raise ValueError(f"{fn}: too many dimensions")


def _live_pieces(fn: str, src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
                 shapes: NDArray[np.int64]) -> list[tuple[int, list[int]]]:
    """The non-empty pieces ``(p, shape)``, once every piece's offsets and extents are
    checked (negative ones refused)."""
    live = []
    for p in range(len(shapes)):
        shp = _ints(shapes[p])
        if src_offsets[p] < 0 or dst_offsets[p] < 0:
            raise ValueError(f"{fn}: negative offset")
        if any(v < 0 for v in shp):
            raise ValueError(f"{fn}: negative extent")
        if all(v > 0 for v in shp):
            live.append((p, shp))
    return live


def copy_pieces(
    src: ReadBuffer,
    src_offsets: NDArray[np.int64],
    src_strides: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    dst_strides: NDArray[np.int64],
    shapes: NDArray[np.int64],
    itemsize: int,
) -> None:
    """Reference of :func:`zarr3c._kernels.scatter.copy_pieces`: copy_strided per piece, all
    validated first."""
    n, ndim = len(src_offsets), len(src_strides)
    _check_pieces("copy_pieces", n, dst_offsets, dst_strides, shapes, ndim)
    if itemsize < 1:
        raise ValueError("copy_pieces: itemsize must be >= 1")
    sbuf = _u8(src)
    views = [(_region("copy_pieces", "src", sbuf, int(src_offsets[p]), _ints(src_strides), shp,
                      itemsize, writeable=False),
              _region("copy_pieces", "dst", dst, int(dst_offsets[p]), _ints(dst_strides[p]),
                      shp, itemsize, writeable=True))
             for p, shp in _live_pieces("copy_pieces", src_offsets, dst_offsets, shapes)]
    for s, d in views:
        d[...] = s


def fill_pieces(
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    dst_strides: NDArray[np.int64],
    shapes: NDArray[np.int64],
    value: ReadBuffer,
) -> None:
    """Reference of :func:`zarr3c._kernels.scatter.fill_pieces`."""
    n, ndim = len(dst_offsets), shapes.shape[1]
    _check_pieces("fill_pieces", n, dst_offsets, dst_strides, shapes, ndim)
    vbuf = _u8(value)
    itemsize = len(vbuf)
    if itemsize < 1:
        raise ValueError("fill_pieces: value is empty")
    views = [_region("fill_pieces", "dst", dst, int(dst_offsets[p]), _ints(dst_strides[p]),
                     shp, itemsize, writeable=True)
             for p, shp in _live_pieces("fill_pieces", dst_offsets, dst_offsets, shapes)]
    for d in views:
        d[...] = vbuf.view(f"V{itemsize}")[0]


def _check_boxes(fn: str, starts: NDArray[np.int64], stops: NDArray[np.int64],
                 chunk_shape: NDArray[np.int64]) -> None:
    nd = len(chunk_shape)
    if starts.shape != stops.shape or starts.ndim != 2 or starts.shape[1] != nd:
        raise ValueError(f"{fn}: starts and stops must have shape (nboxes, ndim)")
    if any(c < 1 for c in _ints(chunk_shape)):
        raise ValueError(f"{fn}: chunk sizes must be >= 1")
    if np.any(starts < 0) or np.any(stops <= starts):
        raise ValueError(f"{fn}: a box is empty or has a negative coordinate")


def _box_ranges(starts: NDArray[np.int64], stops: NDArray[np.int64],
                chunk_shape: NDArray[np.int64]) -> list[list[range]]:
    cs = _ints(chunk_shape)
    return [[range(int(lo) // c, (int(hi) - 1) // c + 1) for lo, hi, c in zip(a, b, cs,
                                                                              strict=True)]
            for a, b in zip(starts, stops, strict=True)]


def count_box_pieces(starts: NDArray[np.int64], stops: NDArray[np.int64],
                     chunk_shape: NDArray[np.int64]) -> int:
    """Reference of :func:`zarr3c._kernels.boxes.count_box_pieces`."""
    _check_boxes("count_box_pieces", starts, stops, chunk_shape)
    total = sum(int(np.prod([len(r) for r in rs], dtype=object))
                for rs in _box_ranges(starts, stops, chunk_shape))
    if total > np.iinfo(np.int64).max:
        raise ValueError("count_box_pieces: the number of pieces overflows int64")
    return total


def plan_box_pieces(
    starts: NDArray[np.int64],
    stops: NDArray[np.int64],
    chunk_shape: NDArray[np.int64],
    chunk_strides: NDArray[np.int64],
    itemsize: int,
    coords: NDArray[np.int64],
    counts: NDArray[np.int64],
    src_offsets: NDArray[np.int64],
    src_ends: NDArray[np.int64],
    dst_offsets: NDArray[np.int64],
    dst_strides: NDArray[np.int64],
    box_offsets: NDArray[np.int64],
) -> None:
    """Reference of :func:`zarr3c._kernels.boxes.plan_box_pieces`: the pieces by
    ``itertools.product`` over each box's chunk ranges."""
    total = count_box_pieces(starts, stops, chunk_shape)
    nd = len(chunk_shape)
    if nd > _MAX_NDIM or len(chunk_strides) != nd or any(s < 0 for s in _ints(chunk_strides)):
        raise ValueError("plan_box_pieces: bad chunk strides")
    if itemsize < 1:
        raise ValueError("plan_box_pieces: itemsize must be >= 1")
    for arr in (coords, counts, dst_strides):
        if arr.shape != (total, nd):
            raise ValueError("plan_box_pieces: wrong output shape")
    for arr in (src_offsets, src_ends, dst_offsets):
        if arr.shape != (total,):
            raise ValueError("plan_box_pieces: wrong output length")
    if box_offsets.shape != (len(starts) + 1,):
        raise ValueError("plan_box_pieces: wrong box_offsets length")
    cs, cst = _ints(chunk_shape), _ints(chunk_strides)
    p = 0
    base = 0
    box_offsets[0] = 0
    for b, ranges in enumerate(_box_ranges(starts, stops, chunk_shape)):
        lo, hi = _ints(starts[b]), _ints(stops[b])
        extent = [h - l_ for l_, h in zip(lo, hi, strict=True)]
        bs = [itemsize * int(np.prod(extent[d + 1:], dtype=object)) for d in range(nd)]
        for combo in itertools.product(*ranges):
            first = [max(l_, c * k) for l_, c, k in zip(lo, combo, cs, strict=True)]
            end = [min(h, c * k + k) for h, c, k in zip(hi, combo, cs, strict=True)]
            n = [e - f for f, e in zip(first, end, strict=True)]
            local = [f - c * k for f, c, k in zip(first, combo, cs, strict=True)]
            coords[p] = combo
            counts[p] = n
            dst_strides[p] = bs
            src_offsets[p] = sum(x * s for x, s in zip(local, cst, strict=True))
            src_ends[p] = sum((x + m - 1) * s
                              for x, m, s in zip(local, n, cst, strict=True)) + itemsize
            dst_offsets[p] = base + sum((f - l_) * s for f, l_, s in zip(first, lo, bs,
                                                                         strict=True))
            p += 1
        base += itemsize * int(np.prod(extent, dtype=object))
        box_offsets[b + 1] = base


def read_ranges_into(path: bytes, buf: Any, starts: NDArray[np.int64], stops: NDArray[np.int64],
                     ats: NDArray[np.int64]) -> tuple[int, int, int]:
    """fileio.read_ranges_into through ``os``: open, fstat, one pread per range, close."""
    out = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    s, e, a = _ints(starts), _ints(stops), _ints(ats)
    if not len(s) == len(e) == len(a):
        raise ValueError("read_ranges_into: lengths differ")
    for start, stop, at in zip(s, e, a, strict=True):
        if start < 0 or stop < start or at < 0 or stop - start > out.size - at:
            raise ValueError("read_ranges_into: bad range")
    err, size, fd = _open_regular(path)
    if fd is None:
        return err, 0, size
    try:
        got = 0
        for start, stop, at in zip(s, e, a, strict=True):
            data = os.pread(fd, max(0, min(stop, size) - start), start)
            out[at:at + len(data)] = np.frombuffer(data, dtype=np.uint8)
            got += len(data)
        return 0, got, size
    finally:
        os.close(fd)


def read_files_elements(paths: list[bytes], scratch: NDArray[np.uint8], sizes: NDArray[np.int64],
                        run_starts: NDArray[np.int64], run_stops: NDArray[np.int64],
                        src_offsets: NDArray[np.int64], dst: NDArray[np.uint8],
                        dst_offsets: NDArray[np.int64], itemsize: int) -> list[int]:
    """fileio.read_files_elements: :func:`read_ranges_into` of each whole file, then
    :func:`copy_elements` of its run; the ``k`` whose file was not read are returned."""
    sz, lo, hi = _ints(sizes), _ints(run_starts), _ints(run_stops)
    so, do = _ints(src_offsets), _ints(dst_offsets)
    if not len(paths) == len(sz) == len(lo) == len(hi) or len(so) != len(do) or itemsize < 1:
        raise ValueError("read_files_elements: lengths differ or itemsize < 1")
    for k, path in enumerate(paths):
        if b"\0" in path or not 0 <= sz[k] <= len(scratch) or not 0 <= lo[k] <= hi[k] <= len(so):
            raise ValueError(f"read_files_elements: file {k}")
        for i in range(lo[k], hi[k]):
            if not (0 <= so[i] <= sz[k] - itemsize and 0 <= do[i] <= len(dst) - itemsize):
                raise ValueError(f"read_files_elements: file {k}: element {i}")
    left = []
    for k, path in enumerate(paths):
        zero = np.zeros(1, dtype=np.int64)
        err, got, size = read_ranges_into(path, scratch[:sz[k]], zero, zero + sz[k], zero)
        if err or size != sz[k] or got != sz[k]:
            left.append(k)
            continue
        copy_elements(scratch[:sz[k]], np.array(so[lo[k]:hi[k]], dtype=np.int64), dst,
                      np.array(do[lo[k]:hi[k]], dtype=np.int64), itemsize)
    return left


def read_files_ranges_into(paths: list[bytes], buf: Any, run_starts: NDArray[np.int64],
                           run_stops: NDArray[np.int64], starts: NDArray[np.int64],
                           stops: NDArray[np.int64], ats: NDArray[np.int64]
                           ) -> list[tuple[int, int, int]]:
    """fileio.read_files_ranges_into: :func:`read_ranges_into` of each file's run of
    ranges, every argument checked first."""
    lo, hi, s, e, a = (_ints(x) for x in (run_starts, run_stops, starts, stops, ats))
    if not len(paths) == len(lo) == len(hi) or not len(s) == len(e) == len(a):
        raise ValueError("read_files_ranges_into: lengths differ")
    out = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    for k, path in enumerate(paths):
        if b"\0" in path or not 0 <= lo[k] <= hi[k] <= len(s):
            raise ValueError(f"read_files_ranges_into: file {k}")
    for start, stop, at in zip(s, e, a, strict=True):
        if start < 0 or stop < start or at < 0 or stop - start > out.size - at:
            raise ValueError("read_files_ranges_into: bad range")
    return [read_ranges_into(path, buf, np.array(s[lo[k]:hi[k]], dtype=np.int64),
                             np.array(e[lo[k]:hi[k]], dtype=np.int64),
                             np.array(a[lo[k]:hi[k]], dtype=np.int64))
            for k, path in enumerate(paths)]


def _whole_pages(buf: NDArray[np.uint8], start: int, stop: int, fn: str) -> tuple[int, int]:
    """The addresses ``[lo, hi)`` of the whole pages of ``buf[start:stop]``."""
    if start < 0 or stop < start or stop > buf.size:
        raise ValueError(f"{fn}: bad range")
    if stop == start:
        return 0, 0
    page = mmap.PAGESIZE
    base = buf.__array_interface__["data"][0]
    lo = -(-(base + start) // page) * page
    return lo, max(lo, (base + stop) // page * page)


def populate(buf: NDArray[np.uint8], start: int, stop: int) -> int:
    """fileio.populate: faulting pages in changes no byte, so nothing to do but check."""
    _whole_pages(buf, start, stop, "populate")
    return 0


def resident_pages(buf: NDArray[np.uint8], start: int, stop: int) -> tuple[int, int]:
    """fileio.resident_pages of a buffer whose pages have all been written: every whole
    page of the range (Python has no mincore: the count of pages is what can be checked)."""
    lo, hi = _whole_pages(buf, start, stop, "resident_pages")
    pages = (hi - lo) // mmap.PAGESIZE
    return pages, pages


def _open_regular(path: bytes) -> tuple[int, int, int | None]:
    """``os.open`` without blocking, then ``fstat``: ``(errno, size, fd)``, ``fd`` None when
    nothing is left open (``errno`` set and size -1, or not a regular file: 0 and -1)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return exc.errno or -1, -1, None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return exc.errno or -1, -1, None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return 0, -1, None
    return 0, st.st_size, fd


def read_box_into(path: bytes, nbytes: int, strides: NDArray[np.int64], first: Sequence[int],
                  counts: Sequence[int], itemsize: int, staging: Any, dst: NDArray[np.uint8],
                  dst_offset: int = 0, dst_strides: Sequence[int] | None = None
                  ) -> tuple[int, int, int]:
    """fileio.read_box_into through ``os`` and numpy: the whole file read when it is a
    regular file of ``nbytes`` bytes, the box's ``V<itemsize>`` view of it assigned to
    ``dst``'s (``staging`` is only checked for length)."""
    fn = "read_box_into"
    src_st, f, c = _ints(strides), [int(v) for v in first], [int(v) for v in counts]
    out_st = (_ints(np.asarray(dst_strides)) if dst_strides is not None
              else [itemsize * math.prod(c[d + 1:]) for d in range(len(c))])
    if not (len(src_st) == len(f) == len(c) == len(out_st) <= _MAX_NDIM):
        raise ValueError(f"{fn}: lengths differ")
    if itemsize < 1 or nbytes < itemsize:
        raise ValueError(f"{fn}: bad itemsize or chunk size")
    if any(v < 0 for v in [*f, *src_st, *out_st, dst_offset]) or any(n < 1 for n in c):
        raise ValueError(f"{fn}: negative start, stride or offset, or empty count")
    lo = sum(a * b for a, b in zip(f, src_st, strict=True))
    hi = sum((a + n - 1) * b for a, n, b in zip(f, c, src_st, strict=True)) + itemsize
    if hi > nbytes:
        raise ValueError(f"{fn}: the box reaches past the chunk")
    if len(np.asarray(staging).reshape(-1)) < hi - lo + 4096:
        raise ValueError(f"{fn}: staging too short")
    out = _region(fn, "dst", dst, dst_offset, out_st, c, itemsize, writeable=True)
    if b"\0" in path:
        raise ValueError(f"{fn}: NUL in the path")
    err, size, fd = _open_regular(path)
    if fd is None:
        return err, size, 0
    try:
        if size != nbytes:
            return 0, size, 0
        data = np.frombuffer(os.pread(fd, nbytes, 0), dtype=np.uint8)
    finally:
        os.close(fd)
    if len(data) != nbytes:
        return 0, nbytes, 0
    out[...] = _region(fn, "the chunk", data, lo, src_st, c, itemsize, writeable=False)
    return 0, nbytes, 1


def read_tail_into(path: bytes, buf: Any) -> tuple[int, int, int]:
    """fileio.read_tail_into through ``os``: the last ``len(buf)`` bytes (all of a shorter
    file) into the start of ``buf``."""
    out = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    try:
        size = os.stat(path).st_size if stat.S_ISREG(os.stat(path).st_mode) else -1
    except OSError as exc:
        return exc.errno or -1, 0, -1
    if size < 0:
        return 0, 0, -1
    start = max(0, size - out.size)
    return read_ranges_into(path, out, np.array([start], dtype=np.int64),
                            np.array([start + min(out.size, size)], dtype=np.int64),
                            np.array([0], dtype=np.int64))


SHARD_UNEXPECTED = 1
_MISSING_ENTRY = 2**64 - 1


def read_shard_parts(path: bytes, index: NDArray[np.uint8], index_at_end: bool,
                     slots: NDArray[np.int64], los: NDArray[np.int64], his: NDArray[np.int64],
                     expect_nbytes: int, staging: NDArray[np.uint8], ats: NDArray[np.int64],
                     lens: NDArray[np.int64]) -> tuple[int, int, int]:
    """fileio.read_shard_parts through ``os``: the file's size, its index read whole, each
    entry parsed with numpy and checked, each part read with ``os.pread``."""
    n = len(slots)
    if not len(los) == len(his) == len(ats) == len(lens) == n:
        raise ValueError("read_shard_parts: lengths differ")
    if n > 64 or index.size == 0:
        raise ValueError("read_shard_parts: too many parts or an empty index")
    for slot, lo, hi in zip(_ints(slots), _ints(los), _ints(his), strict=True):
        if slot < 0 or 16 * slot + 16 > index.size:
            raise ValueError("read_shard_parts: an entry outside the index")
        if lo < 0 or (hi < lo and hi != -1):
            raise ValueError("read_shard_parts: a part that is not a range")
    if b"\0" in path:
        raise ValueError("read_shard_parts: the path holds a NUL byte")
    err, size, fd = _open_regular(path)
    if fd is None:
        return err, size, 0
    try:
        index_n = index.size
        if size < index_n:
            return 0, size, SHARD_UNEXPECTED
        data_lo, data_hi = (0, size - index_n) if index_at_end else (index_n, size)
        raw = os.pread(fd, index_n, data_hi if index_at_end else 0)
        if len(raw) < index_n:
            return 0, size, SHARD_UNEXPECTED
        index[:] = np.frombuffer(raw, dtype=np.uint8)
        entries = [int(v) for v in np.frombuffer(raw, dtype="<u8", count=index_n // 8)]
        at = 0
        for i, (slot, lo, hi) in enumerate(zip(_ints(slots), _ints(los), _ints(his),
                                               strict=True)):
            offset, nbytes = entries[2 * slot], entries[2 * slot + 1]
            if offset == nbytes == _MISSING_ENTRY:
                ats[i] = lens[i] = -1
                continue
            hi = nbytes if hi < 0 else hi
            if (not data_lo <= offset <= offset + nbytes <= data_hi
                    or (expect_nbytes >= 0 and nbytes != expect_nbytes)
                    or not lo <= hi <= nbytes or hi - lo > staging.size - at):
                return 0, size, SHARD_UNEXPECTED
            got = os.pread(fd, hi - lo, offset + lo)
            staging[at:at + len(got)] = np.frombuffer(got, dtype=np.uint8)
            ats[i], lens[i] = at, hi - lo
            if len(got) < hi - lo:
                return 0, size, SHARD_UNEXPECTED
            at += hi - lo
        return 0, size, 0
    finally:
        os.close(fd)


def box_chunk_pieces(start: tuple[int, ...], stop: tuple[int, ...],
                     chunk_shape: NDArray[np.int64], chunk_strides: NDArray[np.int64],
                     itemsize: int, max_pieces: int
                     ) -> list[tuple[tuple[int, ...], list[int], list[int], int, int, int]] | None:
    """boxes.box_chunk_pieces with numpy arithmetic: every chunk of the box's range in C order
    (``itertools.product``), the piece its intersection with the box."""
    fn = "box_chunk_pieces"
    chunks, strides = np.asarray(chunk_shape, np.int64), np.asarray(chunk_strides, np.int64)
    b, e = np.array(start, dtype=np.int64), np.array(stop, dtype=np.int64)
    if not (len(chunks) == len(strides) == len(b) == len(e) <= _MAX_NDIM):
        raise ValueError(f"{fn}: lengths differ")
    if itemsize < 1 or (b < 0).any() or (e <= b).any() or (chunks < 1).any():
        raise ValueError(f"{fn}: bad box, chunk shape or itemsize")
    ranges = [range(int(x) // int(c), (int(y) - 1) // int(c) + 1)
              for x, y, c in zip(b, e, chunks, strict=True)]
    if math.prod(len(r) for r in ranges) > max_pieces:
        return None
    extent = e - b
    out_strides = np.array([itemsize * int(np.prod(extent[d + 1:])) for d in range(len(b))],
                           dtype=np.int64)
    pieces = []
    for coords in itertools.product(*ranges):
        origin = np.array(coords, dtype=np.int64) * chunks
        lo_e, hi_e = np.maximum(b, origin), np.minimum(e, origin + chunks)
        first, counts = lo_e - origin, hi_e - lo_e
        pieces.append((tuple(int(v) for v in coords), _ints(first), _ints(counts),
                       int(first @ strides), int((first + counts - 1) @ strides) + itemsize,
                       int((lo_e - b) @ out_strides)))
    return pieces


def plan_box_in_cell(start: tuple[int, ...], stop: tuple[int, ...],
                     cell_shape: NDArray[np.int64], chunk_shape: NDArray[np.int64],
                     chunk_strides: NDArray[np.int64], itemsize: int, max_pieces: int
                     ) -> tuple[tuple[int, ...], NDArray[np.int64]] | None:
    """boxes.plan_box_in_cell from :func:`plan_box_pieces` of the one box: its pieces, their
    slots numbered in the cell with ``numpy.ravel_multi_index``."""
    nd = len(cell_shape)
    cells, chunks = _ints(cell_shape), _ints(chunk_shape)
    if not (1 <= nd <= _MAX_NDIM and len(chunks) == len(chunk_strides) == len(start)
            == len(stop) == nd):
        raise ValueError("plan_box_in_cell: lengths differ")
    if itemsize < 1 or any(c < 1 or k < 1 or k % c for c, k in zip(chunks, cells, strict=True)):
        raise ValueError("plan_box_in_cell: bad chunk shape or itemsize")
    if any(s < 0 for s in _ints(chunk_strides)):
        raise ValueError("plan_box_in_cell: negative chunk strides")
    starts = np.array([start], dtype=np.int64)
    stops = np.array([stop], dtype=np.int64)
    count = count_box_pieces(starts, stops, chunk_shape)  # (checks the box)
    cell = tuple(b // k for b, k in zip(start, cells, strict=True))
    if any((e - 1) // k != c for e, k, c in zip(stop, cells, cell, strict=True)):
        return None
    if count > max_pieces:
        return None
    coords = np.empty((count, nd), np.int64)
    counts = np.empty((count, nd), np.int64)
    dst_strides = np.empty((count, nd), np.int64)
    src, end, dst = (np.empty(count, np.int64) for _ in range(3))
    plan_box_pieces(starts, stops, chunk_shape, chunk_strides, itemsize, coords, counts, src,
                    end, dst, dst_strides, np.empty(2, np.int64))
    per = tuple(k // c for k, c in zip(cells, chunks, strict=True))
    slots = np.ravel_multi_index(tuple((coords % np.array(per)).T), per).astype(np.int64)
    return cell, np.concatenate([slots, src, end, dst, counts.ravel(), dst_strides.ravel()])


# -- the native chunk pipeline (chunks.pyx) and its thread pool (pool.pyx) ---------------------

#: The most shards one read_shards call takes (as chunks.MAX_SHARDS).
MAX_SHARDS = 256
# the chain's compressors and a chunk's statuses, as chunks.pyx numbers them
_NONE, _ZSTD, _BLOSC, _GZIP = 0, 1, 2, 3
_READ, _MISSING = 0, 1
_FAILED_IO, _FAILED_SIZE, _FAILED_DECODE, _FAILED_CHECKSUM, _FAILED_INDEX = -1, -2, -3, -4, -5


def spread(n: int, nthreads: int, spin: int = 0) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Reference of :func:`zarr3c._kernels.pool.spread`: the ``n`` tasks run one after
    another on the calling thread.

    Parameters
    ----------
    n : int
        How many tasks.
    nthreads : int
        Ignored (one thread runs them all).
    spin : int
        Ignored (the tasks do nothing but count themselves).

    Returns
    -------
    tuple of numpy.ndarray
        ``(serials, runs)``: thread 0 ran every task, each once.

    Raises
    ------
    ValueError
        If ``n`` is negative.

    Examples
    --------
    >>> serials, runs = spread(3, 4)
    >>> serials.tolist(), runs.tolist()
    ([0, 0, 0], [1, 1, 1])
    """
    if n < 0:
        raise ValueError("spread: n must be >= 0")
    return np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)


def _check_chain(fn: str, itemsize: int, fill: ReadBuffer, compressor: int, checksums: int,
                 swap: int, nbytes: int) -> None:
    """The ValueError checks of a chain, a fill value and a chunk size (``_set_chain``)."""
    if itemsize < 1 or len(_u8(fill)) != itemsize:
        raise ValueError(f"{fn}: fill must be one element")
    if nbytes < 1 or nbytes % itemsize:
        raise ValueError(f"{fn}: nbytes is not a positive number of elements")
    if compressor not in (_NONE, _ZSTD, _BLOSC, _GZIP) or not 0 <= checksums <= 8:
        raise ValueError(f"{fn}: unknown chain")
    if swap not in (0, 1, 2, 4, 8, 16) or (swap > 1 and nbytes % swap):
        raise ValueError(f"{fn}: swap is not a word size of the chunk")


def _check_chunk_plan(
    fn: str, nchunks: int, firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64], dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64], dst_strides: NDArray[np.int64], counts: NDArray[np.int64],
    itemsize: int, fill: ReadBuffer, direct: NDArray[np.uint8], compressor: int,
    checksums: int, swap: int, nbytes: int, status: NDArray[np.int8],
) -> None:
    """The ValueError checks of a read plan (chunks.pyx's ``_set_pieces``): array lengths,
    the chain, each chunk's rows of pieces, each piece inside the chunk and ``dst``, each
    direct chunk one run of ``nbytes`` bytes of ``dst``."""
    n, ndim = len(src_offsets), len(src_strides)
    _check_pieces(fn, n, dst_offsets, dst_strides, counts, ndim)
    if not len(firsts) == len(ends) == len(direct) == len(status) == nchunks:
        raise ValueError(f"{fn}: firsts, ends, direct and status need one entry per chunk")
    _check_chain(fn, itemsize, fill, compressor, checksums, swap, nbytes)
    if any(st < 0 for st in _ints(src_strides)):
        raise ValueError(f"{fn}: a source stride is negative")
    lo, hi = _ints(firsts), _ints(ends)
    if any(not 0 <= a <= b <= n for a, b in zip(lo, hi, strict=True)):
        raise ValueError(f"{fn}: a chunk's pieces are not rows of the pieces")
    chunk = np.zeros(nbytes, dtype=np.uint8)
    for p, shp in _live_pieces(fn, src_offsets, dst_offsets, counts):
        _region(fn, "src", chunk, int(src_offsets[p]), _ints(src_strides), shp, itemsize,
                writeable=False)
        _region(fn, "dst", dst, int(dst_offsets[p]), _ints(dst_strides[p]), shp, itemsize,
                writeable=False)
    for c in np.flatnonzero(np.asarray(direct)):
        p = lo[c]
        if hi[c] - p != 1 or not 0 <= int(dst_offsets[p]) <= len(dst) - nbytes:
            raise ValueError(f"{fn}: chunk {c} is direct but not one run of dst")


def _chunk_sources(fn: str, sources: list[Any], paths: bool) -> list[bytes | None]:
    """The sources checked: paths as they are (bytes without NUL), values copied to bytes
    (None kept: not stored; TypeError for what is not a buffer)."""
    if paths:
        for i, path in enumerate(sources):
            if type(path) is not bytes or b"\0" in path:
                raise ValueError(f"{fn}: source {i} is not a path (bytes without NUL)")
        return list(sources)
    return [None if v is None else memoryview(v).tobytes() for v in sources]


def _read_whole(path: bytes) -> tuple[int, bytes | None, int]:
    """``(status, contents, size)`` of the regular file at ``path``: not there (or not a
    regular file) MISSING, another error FAILED_IO, a file that ends early FAILED_IO."""
    err, size, fd = _open_regular(path)
    if fd is None:
        return (_MISSING if err in (0, errno.ENOENT, errno.ENOTDIR) else _FAILED_IO), None, -1
    try:
        parts, got = [], 0
        while got < size:
            part = os.pread(fd, size - got, got)
            if not part:
                break
            parts.append(part)
            got += len(part)
    finally:
        os.close(fd)
    data = b"".join(parts)
    return (_READ if len(data) == size else _FAILED_IO), data, size


def _size_ok(size: int, compressor: int, checksums: int, swap: int, nbytes: int) -> bool:
    """Whether a chunk file of ``size`` bytes may be read: a raw chunk's is ``nbytes``, any
    other's at most an incompressible chunk's encoding (the kernel's ``cap``)."""
    if compressor == _NONE and checksums == 0 and swap <= 1:
        return size == nbytes
    return size <= nbytes + (nbytes >> 3) + 4096 + 4 * checksums


def _decompress(data: bytes, compressor: int, nbytes: int) -> bytes | None:
    """A compressor's frame decoded (None where it is not sound), at most ``nbytes + 1``
    bytes of it where the frame cannot say its size first."""
    try:
        if compressor == _ZSTD:
            # (into nbytes of room first: a frame that claims more is refused unallocated)
            numcodecs.zstd.decompress(data, bytearray(nbytes))
            return bytes(numcodecs.zstd.decompress(data))
        if compressor == _BLOSC:
            # (the header must give the frame's size and nbytes: c-blosc trusts it)
            if len(data) < 16 or int.from_bytes(data[12:16], "little") != len(data) or \
                    int.from_bytes(data[4:8], "little") != nbytes:
                return None
            return bytes(numcodecs.blosc.decompress(data))
        # gzip: members back to back, each whole, nothing after them
        out = b""
        if not data:
            return None
        while data:
            member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += member.decompress(data, nbytes + 1 - len(out))
            if not member.eof or len(out) > nbytes:
                return None
            data = member.unused_data
        return out
    except (RuntimeError, ValueError, zlib.error):
        return None


#: A transpose codec's chunk shape and order, checked (:func:`_check_transpose`)
Transposed = tuple[list[int], list[int]]


def _check_transpose(fn: str, transpose: Any, itemsize: int, nbytes: int
                     ) -> Transposed | None:
    """The ValueError checks of a ``transpose`` argument (chunks.pyx's ``_set_transpose``):
    None, or the chunk's shape and the codec's order (a ``(2, ndim)`` int64 array)."""
    if transpose is None:
        return None
    t = np.asarray(transpose)
    if t.dtype != np.int64 or t.ndim != 2 or t.shape[0] != 2 or not 1 <= t.shape[1] <= 64:
        raise ValueError(f"{fn}: transpose must be a (2, ndim) array, 1 <= ndim <= 64")
    shape, axes = t[0].tolist(), t[1].tolist()
    if sorted(axes) != list(range(len(axes))):
        raise ValueError(f"{fn}: transpose's order is not a permutation of its axes")
    if min(shape) < 1 or math.prod(shape) * itemsize != nbytes:
        raise ValueError(f"{fn}: transpose's shape does not hold nbytes = {nbytes}")
    return shape, axes


def _decode_chunk(data: bytes, compressor: int, checksums: int, swap: int, nbytes: int,
                  order: Transposed | None = None) -> tuple[int, NDArray[np.uint8] | None]:
    """Stored bytes through the chain: ``(status, the chunk's nbytes bytes)`` (in C order of
    the chunk: a transposed chunk's bytes, ``order``, transposed back)."""
    for _ in range(checksums):
        if len(data) < 4:
            return _FAILED_DECODE, None
        if crc32c(data[:-4]) != int.from_bytes(data[-4:], "little"):
            return _FAILED_CHECKSUM, None
        data = data[:-4]
    if compressor != _NONE:
        decompressed = _decompress(data, compressor, nbytes)
        if decompressed is None or len(decompressed) != nbytes:
            return _FAILED_DECODE, None
        data = decompressed
    elif len(data) != nbytes:
        return _FAILED_SIZE, None
    out = np.frombuffer(data, dtype=np.uint8).copy()
    if swap > 1:
        byteswap(out, swap)
    if order is not None:
        shape, axes = order
        itemsize = nbytes // math.prod(shape)
        stored = out.reshape([shape[a] for a in axes] + [itemsize])
        out = np.ascontiguousarray(stored.transpose([*np.argsort(axes), len(axes)])).reshape(-1)
    return _READ, out


def _finish_chunk(
    c: int, stored: bytes | None, firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64], dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64], dst_strides: NDArray[np.int64], counts: NDArray[np.int64],
    itemsize: int, fill: ReadBuffer, direct: NDArray[np.uint8], compressor: int,
    checksums: int, swap: int, nbytes: int, order: Transposed | None = None,
) -> int:
    """Chunk ``c`` from its stored bytes (None: not stored, its pieces filled): decoded
    and its pieces copied, or the whole chunk put in place if it is direct; its status."""
    p0, p1 = int(firsts[c]), int(ends[c])
    rows = slice(p0, p1)
    if stored is None:
        fill_pieces(dst, dst_offsets[rows], dst_strides[rows], counts[rows], fill)
        return _MISSING
    result, chunk = _decode_chunk(stored, compressor, checksums, swap, nbytes, order)
    if chunk is None:
        return result
    if direct[c]:
        at = int(dst_offsets[p0])
        dst[at:at + nbytes] = chunk
    else:
        copy_pieces(chunk, src_offsets[rows], src_strides, dst, dst_offsets[rows],
                    dst_strides[rows], counts[rows], itemsize)
    return _READ


def read_chunks(
    sources: list[Any], paths: bool, firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64], dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64], dst_strides: NDArray[np.int64], counts: NDArray[np.int64],
    itemsize: int, fill: ReadBuffer, direct: NDArray[np.uint8], compressor: int,
    checksums: int, swap: int, nbytes: int, nthreads: int, status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_chunks`: each chunk read whole
    (``os``), its checksums verified with :func:`crc32c`, decompressed with
    ``numcodecs.zstd``, ``numcodecs.blosc`` or ``zlib``, byte-swapped with :func:`byteswap`
    and copied out with :func:`copy_pieces` (or filled with :func:`fill_pieces`), one after
    another.

    Parameters
    ----------
    sources : list
        Per chunk, its file's path (bytes, if ``paths``) or its stored bytes (a buffer;
        None where it is not stored).
    paths : bool
        Whether ``sources`` are paths.
    firsts, ends : numpy.ndarray
        Chunk ``c``'s pieces are rows ``firsts[c]:ends[c]`` of the piece arrays.
    src_offsets, src_strides : numpy.ndarray
        Per piece its first byte in the decoded chunk; the chunk's byte strides (shared).
    dst : numpy.ndarray
        The output bytes.
    dst_offsets, dst_strides, counts : numpy.ndarray
        Per piece its first byte in ``dst``, its byte strides there and its extents.
    itemsize : int
        Bytes per element.
    fill : bytes-like
        One element: what the pieces of chunks not stored become.
    direct : numpy.ndarray
        Per chunk, 1 where its one piece is the whole chunk C-ordered in ``dst``.
    compressor, checksums, swap, nbytes : int
        The chain: the compressor (0 none, 1 zstd, 2 blosc, 3 gzip), how many trailing
        CRC-32C checksums, the byte swap's word size (0 or 1: none) and the decoded chunk's
        size.
    nthreads : int
        Ignored (the chunks run one after another).
    status : numpy.ndarray
        Filled per chunk: 0 read, 1 not stored (filled), negative: failed (its pieces hold
        anything).

    Raises
    ------
    ValueError
        For a plan that does not hold together (never for stored bytes).
    TypeError
        For a value source that is not a buffer.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> dst, status = np.zeros(4, np.uint8), np.zeros(2, np.int8)
    >>> read_chunks([b"ab", None], False, i64(0, 1), i64(1, 2), i64(0, 0), i64(1),
    ...             dst, i64(0, 2), i64(1, 1).reshape(2, 1), i64(2, 2).reshape(2, 1), 1,
    ...             b"z", np.zeros(2, np.uint8), 0, 0, 0, 2, 1, status)
    >>> dst.tobytes(), status.tolist()
    (b'abzz', [0, 1])
    """
    fn, nchunks = "read_chunks", len(sources)
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    _check_chunk_plan(fn, nchunks, firsts, ends, src_offsets, src_strides, dst, dst_offsets,
                      dst_strides, counts, itemsize, fill, direct, compressor, checksums, swap,
                      nbytes, status)
    chain = (compressor, checksums, swap, nbytes)
    for c, stored in _stored_chunks(fn, sources, paths, firsts, ends, chain, status):
        status[c] = _finish_chunk(c, stored, firsts, ends, src_offsets, src_strides, dst,
                                  dst_offsets, dst_strides, counts, itemsize, fill, direct,
                                  *chain, order)


def _stored_chunks(fn: str, sources: list[Any], paths: bool, firsts: NDArray[np.int64],
                   ends: NDArray[np.int64], chain: tuple[int, int, int, int],
                   status: NDArray[np.int8]) -> Any:
    """Per chunk ``c`` with rows (pieces, elements) to fill, ``(c, its stored bytes or
    None)``: its file read whole where ``paths`` (and refused from its size as the kernel
    refuses it); the others' ``status`` set (no rows: read; a failed file read)."""
    for c, source in enumerate(_chunk_sources(fn, sources, paths)):
        if ends[c] <= firsts[c]:
            status[c] = _READ
            continue
        stored: bytes | None = source
        if paths and source is not None:
            result, stored, size = _read_whole(source)
            if result == _READ and not _size_ok(size, *chain):
                result = _FAILED_SIZE
            if result < 0:
                status[c] = result
                continue
        yield c, stored


def read_elements(
    sources: list[Any], paths: bool, firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8],
    itemsize: int, fill: ReadBuffer, compressor: int, checksums: int, swap: int, nbytes: int,
    nthreads: int, status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_elements`: as :func:`read_chunks`,
    each chunk's elements (rows ``firsts[c]:ends[c]``) copied one by one from
    ``src_offsets[p]`` of the decoded chunk to ``dst_offsets[p]`` of ``dst``, in row order,
    or set to ``fill`` where the chunk is not stored.

    Parameters
    ----------
    sources, paths
        As :func:`read_chunks`.
    firsts, ends : numpy.ndarray
        Chunk ``c``'s elements are rows ``firsts[c]:ends[c]``.
    src_offsets, dst_offsets : numpy.ndarray
        Per element its byte in the decoded chunk and in ``dst``.
    dst : numpy.ndarray
        The output bytes.
    itemsize, fill, compressor, checksums, swap, nbytes, nthreads, status
        As :func:`read_chunks`.

    Raises
    ------
    ValueError
        For a plan that does not hold together (never for stored bytes).
    TypeError
        For a value source that is not a buffer.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> dst, status = np.zeros(3, np.uint8), np.zeros(2, np.int8)
    >>> read_elements([b"ab", None], False, i64(0, 2), i64(2, 3), i64(1, 0, 0),
    ...               i64(0, 2, 1), dst, 1, b"z", 0, 0, 0, 2, 1, status)
    >>> dst.tobytes(), status.tolist()
    (b'bza', [0, 1])
    """
    fn, nchunks = "read_elements", len(sources)
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    chain = (compressor, checksums, swap, nbytes)
    _check_elements(fn, nchunks, firsts, ends, src_offsets, dst_offsets, dst, itemsize, fill,
                    *chain, status)
    value = _u8(fill).tobytes()
    for c, stored in _stored_chunks(fn, sources, paths, firsts, ends, chain, status):
        status[c] = _finish_elements(range(int(firsts[c]), int(ends[c])), stored, src_offsets,
                                     dst_offsets, dst, itemsize, value, *chain, order)


def _check_elements(fn: str, nchunks: int, firsts: NDArray[np.int64],
                    ends: NDArray[np.int64], src_offsets: NDArray[np.int64],
                    dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int,
                    fill: ReadBuffer, compressor: int, checksums: int, swap: int, nbytes: int,
                    status: NDArray[np.int8]) -> None:
    """The ValueError checks of a plan of elements (chunks.pyx's ``_set_elements``)."""
    n = len(src_offsets)
    if len(dst_offsets) != n:
        raise ValueError(f"{fn}: src_offsets and dst_offsets of different lengths")
    if not len(firsts) == len(ends) == len(status) == nchunks:
        raise ValueError(f"{fn}: firsts, ends and status need one entry per chunk")
    _check_chain(fn, itemsize, fill, compressor, checksums, swap, nbytes)
    if any(not 0 <= a <= b <= n for a, b in zip(_ints(firsts), _ints(ends), strict=True)):
        raise ValueError(f"{fn}: a chunk's elements are not rows of the elements")
    if any(not (0 <= so <= nbytes - itemsize and 0 <= do <= len(dst) - itemsize)
           for so, do in zip(_ints(src_offsets), _ints(dst_offsets), strict=True)):
        raise ValueError(f"{fn}: an element lies outside the chunk or dst")


def _finish_elements(rows: range, stored: bytes | None, src_offsets: NDArray[np.int64],
                     dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int,
                     value: bytes, compressor: int, checksums: int, swap: int,
                     nbytes: int, order: Transposed | None = None) -> int:
    """A chunk's elements (``rows``) from its stored bytes (None: not stored, filled with
    ``value``): its status."""
    if stored is None:
        for p in rows:
            at = int(dst_offsets[p])
            dst[at:at + itemsize] = np.frombuffer(value, np.uint8)
        return _MISSING
    result, chunk = _decode_chunk(stored, compressor, checksums, swap, nbytes, order)
    if chunk is None:
        return result
    for p in rows:
        so, do = int(src_offsets[p]), int(dst_offsets[p])
        dst[do:do + itemsize] = chunk[so:so + itemsize]
    return _READ


def _read_shard(source: bytes | None, paths: bool, index_nbytes: int, index_at_end: bool,
                index_checksum: bool) -> tuple[int, bytes]:
    """A shard's status (its index read and checked) and its bytes."""
    if source is None:
        return _MISSING, b""
    data = source
    if paths:
        result, contents, _ = _read_whole(source)
        if contents is None or result != _READ:
            return result, b""
        data = contents
    if len(data) < index_nbytes:
        return _FAILED_INDEX, b""
    index = data[len(data) - index_nbytes:] if index_at_end else data[:index_nbytes]
    if index_checksum and crc32c(index[:-4]) != int.from_bytes(index[-4:], "little"):
        return _FAILED_CHECKSUM, b""
    # the whole index checked, as the Python path refuses it (an entry outside the shard
    # or into the index, a half-missing one, two overlapping)
    entries = np.frombuffer(index, "<u8", (index_nbytes - (4 if index_checksum else 0)) // 8)
    lo = len(data) - index_nbytes if index_at_end else 0
    if check_shard_index(entries.reshape(-1, 2).astype(np.uint64), len(data), lo,
                         lo + index_nbytes)[0]:
        return _FAILED_INDEX, b""
    return _READ, data


def read_shards(
    sources: list[Any], paths: bool, index_nbytes: int, index_at_end: bool,
    index_checksum: bool, inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64], src_offsets: NDArray[np.int64],
    src_strides: NDArray[np.int64], dst: NDArray[np.uint8], dst_offsets: NDArray[np.int64],
    dst_strides: NDArray[np.int64], counts: NDArray[np.int64], itemsize: int,
    fill: ReadBuffer, direct: NDArray[np.uint8], compressor: int, checksums: int, swap: int,
    nbytes: int, nthreads: int, status: NDArray[np.int8], shard_status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_shards`: each shard read whole and
    its index parsed with numpy, then each inner chunk cut out of it and finished as
    :func:`read_chunks` finishes a chunk, one after another.

    Parameters
    ----------
    sources : list
        Per shard, its file's path (bytes, if ``paths``) or its bytes (a buffer; None where
        it is not stored).
    paths : bool
        Whether ``sources`` are paths.
    index_nbytes : int
        The size of a shard's index: 16 bytes per entry, then 4 if ``index_checksum``.
    index_at_end : bool
        Whether the index is at the shard's end (else its start).
    index_checksum : bool
        Whether the index ends in the CRC-32C of its entries.
    inner_shard, inner_slot : numpy.ndarray
        Inner chunk ``k`` is entry ``inner_slot[k]`` of shard ``inner_shard[k]``.
    firsts, ends, src_offsets, src_strides, dst, dst_offsets, dst_strides, counts : ndarray
        The pieces of the inner chunks, as in :func:`read_chunks`.
    itemsize, fill, direct, compressor, checksums, swap, nbytes, nthreads
        As in :func:`read_chunks`.
    status : numpy.ndarray
        Filled per inner chunk, as in :func:`read_chunks`.
    shard_status : numpy.ndarray
        Filled per shard: 0 its index read, 1 not stored (its inner chunks filled),
        negative: failed (its inner chunks fail too).

    Raises
    ------
    ValueError
        As :func:`read_chunks`, and for an index that is not whole entries (or too large for
        all the shards' indexes in memory), an inner chunk outside the shards or their
        index, or more than :data:`MAX_SHARDS` shards.
    TypeError
        For a value source that is not a buffer.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> shard = b"ab" + np.array([0, 2], dtype="<u8").tobytes()  # one entry, at the end
    >>> dst = np.zeros(2, np.uint8)
    >>> status, shard_status = np.zeros(1, np.int8), np.zeros(1, np.int8)
    >>> read_shards([shard], False, 16, True, False, i64(0), i64(0), i64(0), i64(1), i64(0),
    ...             i64(1), dst, i64(0), i64(1).reshape(1, 1), i64(2).reshape(1, 1), 1, b"z",
    ...             np.zeros(1, np.uint8), 0, 0, 0, 2, 1, status, shard_status)
    >>> dst.tobytes(), status.tolist(), shard_status.tolist()
    (b'ab', [0], [0])
    """
    fn = "read_shards"
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    shard_of, slot_of = _check_shards(fn, len(sources), index_nbytes, index_checksum,
                                      inner_shard, inner_slot, shard_status)
    _check_chunk_plan(fn, len(shard_of), firsts, ends, src_offsets, src_strides, dst,
                      dst_offsets, dst_strides, counts, itemsize, fill, direct, compressor,
                      checksums, swap, nbytes, status)
    chain = (compressor, checksums, swap, nbytes)
    for k, stored in _stored_inner(fn, sources, paths, index_nbytes, index_at_end,
                                   index_checksum, shard_of, slot_of, firsts, ends, chain,
                                   status, shard_status):
        status[k] = _finish_chunk(k, stored, firsts, ends, src_offsets, src_strides, dst,
                                  dst_offsets, dst_strides, counts, itemsize, fill, direct,
                                  *chain, order)


def _stored_inner(fn: str, sources: list[Any], paths: bool, index_nbytes: int,
                  index_at_end: bool, index_checksum: bool, shard_of: list[int],
                  slot_of: list[int], firsts: NDArray[np.int64], ends: NDArray[np.int64],
                  chain: tuple[int, int, int, int], status: NDArray[np.int8],
                  shard_status: NDArray[np.int8]) -> Any:
    """:func:`_inner_chunks` for inner chunks with rows to fill: ``(k, its stored bytes or
    None)``; the others' ``status`` set (no rows: read; from a file, more bytes than the
    kernel takes: the wrong size)."""
    for k, stored in _inner_chunks(fn, sources, paths, index_nbytes, index_at_end,
                                   index_checksum, shard_of, slot_of, status, shard_status):
        if ends[k] <= firsts[k]:
            status[k] = _READ
        elif paths and stored is not None and not _size_ok(len(stored), *chain):
            status[k] = _FAILED_SIZE
        else:
            yield k, stored


def _check_shards(fn: str, nshards: int, index_nbytes: int, index_checksum: bool,
                  inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
                  shard_status: NDArray[np.int8]) -> tuple[list[int], list[int]]:
    """The ValueError checks of a shard plan (chunks.pyx's ``_check_shards``); the inner
    chunks' shards and index entries."""
    tail = 4 if index_checksum else 0
    entries = (index_nbytes - tail) // 16
    if nshards > MAX_SHARDS:
        raise ValueError(f"{fn}: more than {MAX_SHARDS} shards")
    if entries < 1 or entries * 16 + tail != index_nbytes:
        raise ValueError(f"{fn}: the index is not whole entries")
    if index_nbytes * max(1, nshards) > sys.maxsize:
        raise ValueError(f"{fn}: the indexes do not fit in memory")
    if len(inner_slot) != len(inner_shard) or len(shard_status) != nshards:
        raise ValueError(f"{fn}: inner_slot or shard_status of the wrong length")
    shard_of, slot_of = _ints(inner_shard), _ints(inner_slot)
    if any(not (0 <= s < nshards and 0 <= e < entries)
           for s, e in zip(shard_of, slot_of, strict=True)):
        raise ValueError(f"{fn}: an inner chunk outside the shards or their index")
    return shard_of, slot_of


def _inner_chunks(fn: str, sources: list[Any], paths: bool, index_nbytes: int,
                  index_at_end: bool, index_checksum: bool, shard_of: list[int],
                  slot_of: list[int], status: NDArray[np.int8],
                  shard_status: NDArray[np.int8]) -> Any:
    """Every shard's index read (``shard_status``), then per inner chunk ``k`` whose shard
    and entry are sound ``(k, its stored bytes or None)``; the others' ``status`` set."""
    shards = []
    for s, source in enumerate(_chunk_sources(fn, sources, paths)):
        result, data = _read_shard(source, paths, index_nbytes, index_at_end, index_checksum)
        shard_status[s] = result
        shards.append(data)
    for k, (s, slot) in enumerate(zip(shard_of, slot_of, strict=True)):
        data = shards[s]
        if shard_status[s] < 0:
            status[k] = shard_status[s]
            continue
        stored: bytes | None = None
        if shard_status[s] == _READ:
            index = data[-index_nbytes:] if index_at_end else data[:index_nbytes]
            offset, length = (int(v) for v in np.frombuffer(index, "<u8", 2, 16 * slot))
            if not offset == length == _MISSING_ENTRY:
                lo, hi = ((0, len(data) - index_nbytes) if index_at_end
                          else (index_nbytes, len(data)))
                if not lo <= offset <= offset + length <= hi:
                    status[k] = _FAILED_INDEX
                    continue
                stored = data[offset:offset + length]
        yield k, stored


def read_shard_elements(
    sources: list[Any], paths: bool, index_nbytes: int, index_at_end: bool,
    index_checksum: bool, inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64], src_offsets: NDArray[np.int64],
    dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int, fill: ReadBuffer,
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8], shard_status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_shard_elements`: the shards as
    :func:`read_shards` reads them, each inner chunk's elements as :func:`read_elements`
    copies them.

    Parameters
    ----------
    sources, paths, index_nbytes, index_at_end, index_checksum, inner_shard, inner_slot
        As :func:`read_shards`.
    firsts, ends, src_offsets, dst_offsets, dst, itemsize, fill
        As :func:`read_elements`, per inner chunk.
    compressor, checksums, swap, nbytes, nthreads, status, shard_status
        As :func:`read_shards`.

    Raises
    ------
    ValueError
        As :func:`read_shards` and :func:`read_elements`.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> shard = b"ab" + np.array([0, 2], dtype="<u8").tobytes()  # one entry, at the end
    >>> dst, status, shard_status = np.zeros(2, np.uint8), np.zeros(1, np.int8), np.zeros(
    ...     1, np.int8)
    >>> read_shard_elements([shard], False, 16, True, False, i64(0), i64(0), i64(0), i64(2),
    ...                     i64(1, 0), i64(0, 1), dst, 1, b"z", 0, 0, 0, 2, 1, status,
    ...                     shard_status)
    >>> dst.tobytes(), status.tolist()
    (b'ba', [0])
    """
    fn = "read_shard_elements"
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    shard_of, slot_of = _check_shards(fn, len(sources), index_nbytes, index_checksum,
                                      inner_shard, inner_slot, shard_status)
    chain = (compressor, checksums, swap, nbytes)
    _check_elements(fn, len(shard_of), firsts, ends, src_offsets, dst_offsets, dst, itemsize,
                    fill, *chain, status)
    value = _u8(fill).tobytes()
    for k, stored in _stored_inner(fn, sources, paths, index_nbytes, index_at_end,
                                   index_checksum, shard_of, slot_of, firsts, ends, chain,
                                   status, shard_status):
        status[k] = _finish_elements(range(int(firsts[k]), int(ends[k])), stored, src_offsets,
                                     dst_offsets, dst, itemsize, value, *chain, order)


def _check_outer_plan(fn: str, nchunks: int, firsts: NDArray[np.int64],
                      ends: NDArray[np.int64], bounds: NDArray[np.int64],
                      src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
                      counts: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int,
                      fill: ReadBuffer, compressor: int, checksums: int, swap: int,
                      nbytes: int, status: NDArray[np.int8]) -> list[tuple[int, int]]:
    """The ValueError checks of a plan of outer products (chunks.pyx's ``_set_outer``, with
    ``scatter.OuterPieces``' checks of each piece); each piece's offset rows."""
    _check_chain(fn, itemsize, fill, compressor, checksums, swap, nbytes)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[1] > _MAX_NDIM:
        raise ValueError(f"{fn}: counts must be (pieces, at most {_MAX_NDIM} dimensions)")
    npieces, b = len(counts), _ints(bounds)
    if len(b) != npieces + 1:
        raise ValueError(f"{fn}: {npieces} pieces but {len(b)} offset bounds")
    if len(src_offsets) != len(dst_offsets):
        raise ValueError(f"{fn}: source and destination offsets differ in length")
    rows = []
    for p in range(npieces):
        lo, hi = b[p], b[p + 1]
        if not 0 <= lo <= hi <= len(src_offsets):
            raise ValueError(f"{fn}: piece {p}: its offsets are not rows of the offsets")
        c = _ints(counts[p])
        if any(n < 0 for n in c) or sum(c) != hi - lo:
            raise ValueError(f"{fn}: piece {p}: counts do not match its offsets")
        if 0 not in c:
            for name, offsets, room in (("src", src_offsets, nbytes),
                                        ("dst", dst_offsets, len(dst))):
                parts = np.split(np.asarray(offsets[lo:hi], dtype=np.int64),
                                 np.cumsum(c)[:-1])
                if room < itemsize or any(len(x) and int(x.min()) < 0 for x in parts) or \
                        sum(int(x.max()) for x in parts if len(x)) > room - itemsize:
                    raise ValueError(f"{fn}: piece {p}: {name} offsets reach outside {name}")
        rows.append((lo, hi))
    if not len(firsts) == len(ends) == len(status) == nchunks:
        raise ValueError(f"{fn}: firsts, ends and status need one entry per chunk")
    if any(not 0 <= a <= z <= npieces for a, z in zip(_ints(firsts), _ints(ends), strict=True)):
        raise ValueError(f"{fn}: a chunk's pieces are not rows of the pieces")
    return rows


def _finish_outer(pieces: range, rows: list[tuple[int, int]], stored: bytes | None,
                  src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
                  counts: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int,
                  value: bytes, compressor: int, checksums: int, swap: int,
                  nbytes: int, order: Transposed | None = None) -> int:
    """A chunk's outer-product ``pieces`` from its stored bytes (None: not stored, every
    element set to ``value``): its status."""
    chunk: NDArray[np.uint8] | None
    if stored is None:  # (the fill: every element from a chunk of fill values)
        result, chunk = _MISSING, np.frombuffer(value * (nbytes // itemsize), np.uint8)
    else:
        result, chunk = _decode_chunk(stored, compressor, checksums, swap, nbytes, order)
        if chunk is None:
            return result
    for p in pieces:
        lo, hi = rows[p]
        copy_outer(chunk, src_offsets[lo:hi], dst, dst_offsets[lo:hi], counts[p], itemsize)
    return result


def read_chunks_outer(
    sources: list[Any], paths: bool, firsts: NDArray[np.int64], ends: NDArray[np.int64],
    bounds: NDArray[np.int64], src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
    counts: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int, fill: ReadBuffer,
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_chunks_outer`: as
    :func:`read_chunks`, each chunk's outer-product pieces (rows ``firsts[c]:ends[c]``)
    copied with :func:`copy_outer` one after another, or set to ``fill`` where the chunk is
    not stored.

    Parameters
    ----------
    sources, paths
        As :func:`read_chunks`.
    firsts, ends : numpy.ndarray
        Chunk ``c``'s pieces are rows ``firsts[c]:ends[c]``.
    bounds, src_offsets, dst_offsets, counts : numpy.ndarray
        Piece ``p`` is a :func:`copy_outer` with the lengths ``counts[p]`` and the offsets
        ``bounds[p]:bounds[p + 1]`` of ``src_offsets`` (in the decoded chunk) and
        ``dst_offsets`` (in ``dst``).
    dst : numpy.ndarray
        The output bytes.
    itemsize, fill, compressor, checksums, swap, nbytes, nthreads, status
        As :func:`read_chunks`.

    Raises
    ------
    ValueError
        For a plan that does not hold together (never for stored bytes).
    TypeError
        For a value source that is not a buffer.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> dst, status = np.zeros(4, np.uint8), np.zeros(2, np.int8)
    >>> read_chunks_outer([b"abc", None], False, i64(0, 1), i64(1, 2), i64(0, 2, 3),
    ...                   i64(2, 0, 0), i64(0, 1, 3), i64(2, 1).reshape(2, 1), dst, 1, b"z",
    ...                   0, 0, 0, 3, 1, status)
    >>> dst.tobytes(), status.tolist()
    (b'ca\\x00z', [0, 1])
    """
    fn, nchunks = "read_chunks_outer", len(sources)
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    chain = (compressor, checksums, swap, nbytes)
    rows = _check_outer_plan(fn, nchunks, firsts, ends, bounds, src_offsets, dst_offsets,
                             counts, dst, itemsize, fill, *chain, status)
    value = _u8(fill).tobytes()
    counts = np.asarray(counts, dtype=np.int64)
    for c, stored in _stored_chunks(fn, sources, paths, firsts, ends, chain, status):
        status[c] = _finish_outer(range(int(firsts[c]), int(ends[c])), rows, stored,
                                  src_offsets, dst_offsets, counts, dst, itemsize, value,
                                  *chain, order)


def read_shards_outer(
    sources: list[Any], paths: bool, index_nbytes: int, index_at_end: bool,
    index_checksum: bool, inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64], bounds: NDArray[np.int64],
    src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64], counts: NDArray[np.int64],
    dst: NDArray[np.uint8], itemsize: int, fill: ReadBuffer, compressor: int, checksums: int,
    swap: int, nbytes: int, nthreads: int, status: NDArray[np.int8],
    shard_status: NDArray[np.int8],
    transpose: Any = None,
) -> None:
    """Reference of :func:`zarr3c._kernels.chunks.read_shards_outer`: the shards as
    :func:`read_shards` reads them, each inner chunk's pieces as :func:`read_chunks_outer`
    copies them.

    Parameters
    ----------
    sources, paths, index_nbytes, index_at_end, index_checksum, inner_shard, inner_slot
        As :func:`read_shards`.
    firsts, ends, bounds, src_offsets, dst_offsets, counts, dst, itemsize, fill
        As :func:`read_chunks_outer`, per inner chunk.
    compressor, checksums, swap, nbytes, nthreads, status, shard_status
        As :func:`read_shards`.

    Raises
    ------
    ValueError
        As :func:`read_shards` and :func:`read_chunks_outer`.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> shard = b"ab" + np.array([0, 2], dtype="<u8").tobytes()  # one entry, at the end
    >>> dst, status, shard_status = np.zeros(2, np.uint8), np.zeros(1, np.int8), np.zeros(
    ...     1, np.int8)
    >>> read_shards_outer([shard], False, 16, True, False, i64(0), i64(0), i64(0), i64(1),
    ...                   i64(0, 2), i64(1, 0), i64(0, 1), i64(2).reshape(1, 1), dst, 1,
    ...                   b"z", 0, 0, 0, 2, 1, status, shard_status)
    >>> dst.tobytes(), status.tolist()
    (b'ba', [0])
    """
    fn = "read_shards_outer"
    order = _check_transpose(fn, transpose, itemsize, nbytes)
    shard_of, slot_of = _check_shards(fn, len(sources), index_nbytes, index_checksum,
                                      inner_shard, inner_slot, shard_status)
    chain = (compressor, checksums, swap, nbytes)
    rows = _check_outer_plan(fn, len(shard_of), firsts, ends, bounds, src_offsets,
                             dst_offsets, counts, dst, itemsize, fill, *chain, status)
    value = _u8(fill).tobytes()
    counts = np.asarray(counts, dtype=np.int64)
    for k, stored in _stored_inner(fn, sources, paths, index_nbytes, index_at_end,
                                   index_checksum, shard_of, slot_of, firsts, ends, chain,
                                   status, shard_status):
        status[k] = _finish_outer(range(int(firsts[k]), int(ends[k])), rows, stored,
                                  src_offsets, dst_offsets, counts, dst, itemsize, value,
                                  *chain, order)


# -- writes.pyx ----------------------------------------------------------------------------------

_WRITTEN, _EMPTY, _FAILED_WRITE_IO, _FAILED_ENCODE = 0, 1, -1, -3


def encoded_cap(nbytes: int, compressor: int, checksums: int) -> int:
    """The room a destination buffer needs for one chunk's encoding (``writes.encoded_cap``).

    Parameters
    ----------
    nbytes, compressor, checksums
        The chunk's size and the chain (the compressor: 0 none, 1 zstd, 2 blosc, 3 gzip;
        trailing CRC-32Cs).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For a negative size or an unknown chain.

    Examples
    --------
    >>> encoded_cap(100, 0, 1)
    104
    """
    if nbytes < 0 or compressor not in (_NONE, _ZSTD, _BLOSC, _GZIP) or not 0 <= checksums <= 8:
        raise ValueError("encoded_cap: no chain or size")
    if compressor == _ZSTD:
        return _zstd_bound(nbytes) + 4 * checksums
    if compressor == _BLOSC:  # (c-blosc v1's BLOSC_MAX_OVERHEAD)
        return nbytes + 16 + 4 * checksums
    if compressor == _GZIP:  # (zlib's compressBound, and a gzip wrapper's 18 bytes)
        return (nbytes + (nbytes >> 12) + (nbytes >> 14) + (nbytes >> 25) + 13 + 18
                + 4 * checksums)
    return nbytes + 4 * checksums


def _zstd_bound(n: int) -> int:
    """ZSTD_COMPRESSBOUND of libzstd's zstd.h."""
    margin = ((128 << 10) - n) >> 11 if n < (128 << 10) else 0
    return n + (n >> 8) + margin


@functools.cache
def _libzstd(path: str) -> ctypes.CDLL:
    """The libzstd at ``path``, with the prototypes :func:`zstd_frame` calls."""
    lib = ctypes.CDLL(path)
    size, ptr = ctypes.c_size_t, ctypes.c_void_p
    for name, restype, argtypes in (
            ("ZSTD_createCCtx", ptr, []), ("ZSTD_freeCCtx", size, [ptr]),
            ("ZSTD_CCtx_setParameter", size, [ptr, ctypes.c_int, ctypes.c_int]),
            ("ZSTD_compress2", size, [ptr, ptr, size, ctypes.c_char_p, size]),
            ("ZSTD_compressBound", size, [size]), ("ZSTD_isError", ctypes.c_uint, [size])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


def zstd_frame(data: bytes, level: int, checksum: bool) -> bytes:
    """``zstd_ctx.compress_into``'s frame of ``data``: the calls ``numcodecs.zstd.compress``
    makes (a new context, zstd's compression level and checksum flag set, then
    ``ZSTD_compress2`` into room for the worst case), made with ctypes on the libzstd
    ``zarr3c.codecs.zstd`` bound, so numcodecs' own frame where that is numcodecs' build.

    Raises
    ------
    RuntimeError
        Where no libzstd compressor is bound, or zstd refuses the level.

    Examples
    --------
    >>> import numcodecs.zstd
    >>> frame = zstd_frame(b"abc" * 100, 3, True)
    >>> bytes(numcodecs.zstd.decompress(frame))[:6], frame[4] & 4  # (4: the checksum flag)
    (b'abcabc', 4)
    """
    from zarr3c.codecs.zstd import _LIBZSTD  # (which library: the codec module picks it)

    if _LIBZSTD is None or not _LIBZSTD.compresses:
        raise RuntimeError("zstd_frame: no libzstd compressor bound")
    lib = _libzstd(_LIBZSTD.path)
    out = ctypes.create_string_buffer(lib.ZSTD_compressBound(len(data)))
    cctx = lib.ZSTD_createCCtx()
    if not cctx:
        raise RuntimeError("zstd_frame: no compression context")
    try:
        # zstd.h's ZSTD_c_compressionLevel (100) and ZSTD_c_checksumFlag (201)
        results = [lib.ZSTD_CCtx_setParameter(cctx, 100, level),
                   lib.ZSTD_CCtx_setParameter(cctx, 201, int(checksum))]
        results.append(lib.ZSTD_compress2(cctx, out, len(out), data, len(data)))
    finally:
        lib.ZSTD_freeCCtx(cctx)
    if any(lib.ZSTD_isError(r) for r in results):
        raise RuntimeError(f"zstd_frame: zstd refused level {level}")
    return out.raw[:results[-1]]


def _encode_chunk(chunk: NDArray[np.uint8], compressor: int, level: int, zstd_checksum: bool,
                  checksums: int, swap: int, blosc: Any = None) -> bytes:
    """A chunk's bytes through the chain: byte swap, zstd frame (:func:`zstd_frame`), blosc
    frame (``numcodecs.Blosc`` without threads), gzip member (``zlib.compress``), CRC-32Cs."""
    data = chunk.copy()
    if swap > 1:
        byteswap(data, swap)
    encoded = data.tobytes()
    if compressor == _ZSTD:
        encoded = zstd_frame(encoded, level, zstd_checksum)
    elif compressor == _BLOSC:
        cname, shuffle, typesize, blocksize = blosc
        threads, numcodecs.blosc.use_threads = numcodecs.blosc.use_threads, False
        try:  # (one thread: blocks in order, as the kernel's one internal thread)
            encoded = bytes(numcodecs.Blosc(cname.decode(), level, shuffle, blocksize,
                                            typesize=typesize).encode(encoded))
        finally:
            numcodecs.blosc.use_threads = threads
    elif compressor == _GZIP:
        encoded = zlib.compress(encoded, level, wbits=16 + 15)
    for _ in range(checksums):
        encoded += crc32c(encoded).to_bytes(4, "little")
    return encoded


def _check_write_codec(fn: str, compressor: int, level: int, blosc: Any) -> None:
    """The ValueError checks of a write's gzip and blosc parameters (writes.pyx's
    ``_set_codec``)."""
    if compressor in (_GZIP, _BLOSC) and not 0 <= level <= 9:
        raise ValueError(f"{fn}: the compressor's level is not 0-9")
    if compressor != _BLOSC:
        return
    if blosc is None:
        raise ValueError(f"{fn}: a blosc compressor needs its blosc parameters")
    cname, shuffle, typesize, blocksize = blosc
    if type(cname) is not bytes or b"\0" in cname or not cname:
        raise ValueError(f"{fn}: blosc's compressor name must be bytes without NUL")
    if shuffle not in (0, 1, 2) or not 1 <= typesize <= 255 or not 0 <= blocksize < 2**31:
        raise ValueError(f"{fn}: blosc's shuffle, typesize or blocksize is out of range")


def _layout_strides(fn: str, shape: tuple[int, ...], itemsize: int, order: Any
                    ) -> NDArray[np.int64]:
    """A chunk's byte strides per axis as its encoding lays it out: C order, or (a
    transpose codec's ``order``) C order of its shape permuted by ``order``."""
    axes = list(range(len(shape))) if order is None else [int(a) for a in order]
    if sorted(axes) != list(range(len(shape))):
        raise ValueError(f"{fn}: order is not a permutation of the chunk's axes")
    strides = np.zeros(len(shape), dtype=np.int64)
    step = itemsize
    for a in reversed(axes):
        strides[a] = step
        step *= shape[a]
    return strides


def write_chunks(
    dests: list[Any], paths: bool, src: ReadBuffer, src_offsets: NDArray[np.int64],
    src_strides: NDArray[np.int64], counts: NDArray[np.int64], chunk_shape: NDArray[np.int64],
    itemsize: int, fill: ReadBuffer, skip_empty: bool, compressor: int, level: int,
    zstd_checksum: bool, checksums: int, swap: int, nthreads: int, sizes: NDArray[np.int64],
    status: NDArray[np.int8], order: Any = None, blosc: Any = None,
) -> None:
    """``writes.write_chunks`` one chunk after another: each chunk's region of ``src``
    (the rest ``fill``) encoded and written to its file (``os`` calls: a temporary file in
    the first of its slots free or left by a killed writer, renamed over it) or into its
    buffer.

    Parameters
    ----------
    dests, paths, src, src_offsets, src_strides, counts, chunk_shape, itemsize, fill
        The plan (see ``writes.pyx``).
    skip_empty, compressor, level, zstd_checksum, checksums, swap, nthreads
        The chain, and whether a chunk equal to ``fill`` is left unwritten.
    sizes, status
        Out: per chunk its encoding's length and what became of it.
    order
        A transpose codec's order (None: none): each chunk is laid out in C order of its
        shape permuted by it.
    blosc
        For the blosc compressor (2), its ``(cname, shuffle, typesize, blocksize)``.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a plan that does not hold together.

    Examples
    --------
    >>> src = np.arange(4, dtype=np.uint8)
    >>> out = [bytearray(2), bytearray(2)]
    >>> sizes, status = np.zeros(2, np.int64), np.zeros(2, np.int8)
    >>> write_chunks(out, False, src, np.array([0, 2]), np.array([1]),
    ...              np.array([[2], [2]]), np.array([2]), 1, b"\\0", False, 0, 0, False, 0,
    ...              1, 1, sizes, status)
    >>> [bytes(b) for b in out], status.tolist()
    ([b'\\x00\\x01', b'\\x02\\x03'], [0, 0])
    """
    del nthreads
    u8 = _u8(src)
    fill_bytes = bytes(_u8(fill))
    shape = tuple(int(n) for n in chunk_shape)
    n = len(dests)
    if not 1 <= len(shape) <= 64 or len(src_strides) != len(shape) or \
            counts.shape[1:] != (len(shape),):
        raise ValueError("write_chunks: dimensions differ")
    if itemsize < 1 or len(fill_bytes) != itemsize:
        raise ValueError("write_chunks: fill must be one element")
    if len(src_offsets) != n or len(counts) != n or len(sizes) != n or len(status) != n:
        raise ValueError("write_chunks: one entry per chunk")
    if compressor not in (_NONE, _ZSTD, _BLOSC, _GZIP) or not 0 <= checksums <= 8 or \
            min(shape) < 1:
        raise ValueError("write_chunks: unknown chain or chunk shape")
    _check_write_codec("write_chunks", compressor, level, blosc)
    nbytes = math.prod(shape) * itemsize
    if swap not in (0, 1, 2, 4, 8, 16) or (swap > 1 and nbytes % swap):
        raise ValueError("write_chunks: swap is not a word size")
    strides = _layout_strides("write_chunks", shape, itemsize, order)
    cap = encoded_cap(nbytes, compressor, checksums)
    for c in range(n):
        if not all(1 <= int(k) <= s for k, s in zip(counts[c], shape, strict=True)):
            raise ValueError("write_chunks: counts outside the chunk shape")
        _region("write_chunks", "src", u8, int(src_offsets[c]), _ints(src_strides),
                _ints(counts[c]), itemsize, writeable=False)
        if paths:
            if type(dests[c]) is not bytes or b"\0" in dests[c] or not dests[c]:
                raise ValueError("write_chunks: a destination is not a path")
        elif len(memoryview(dests[c]).cast("B")) < cap:
            raise ValueError("write_chunks: a destination buffer is too small")
    for c in range(n):
        chunk = np.frombuffer(fill_bytes * math.prod(shape), dtype=np.uint8).copy()
        copy_strided(u8, int(src_offsets[c]), src_strides, chunk, 0, strides, counts[c],
                     itemsize)
        if skip_empty and chunk.tobytes() == fill_bytes * math.prod(shape):
            status[c] = _EMPTY
            continue
        encoded = _encode_chunk(chunk, compressor, level, zstd_checksum, checksums, swap, blosc)
        sizes[c] = len(encoded)
        if paths:
            status[c] = _write_file(dests[c], encoded)
        else:
            memoryview(dests[c]).cast("B")[:len(encoded)] = encoded
            status[c] = _WRITTEN


class EncodeArena:
    """``writes.EncodeArena``: the reference keeps its encodings in ``bytes``, so it holds
    nothing.

    Examples
    --------
    >>> EncodeArena().nbytes
    0
    """

    nbytes = 0

    def __init__(self, expect: int = 0) -> None:
        del expect


def write_shards(
    dests: list[Any], src: ReadBuffer, src_offsets: NDArray[np.int64],
    src_strides: NDArray[np.int64], counts: NDArray[np.int64], shard_shape: NDArray[np.int64],
    chunk_shape: NDArray[np.int64], itemsize: int, fill: ReadBuffer, skip_empty: bool,
    compressor: int, level: int, zstd_checksum: bool, checksums: int, swap: int,
    index_at_start: bool, index_checksum: bool, arena: EncodeArena, nthreads: int,
    sizes: NDArray[np.int64], status: NDArray[np.int8], order: Any = None,
    blosc: Any = None, paths: bool = True,
) -> None:
    """``writes.write_shards`` one shard after another, inner chunk by inner chunk: each
    shard's stored inner chunks (those holding some of its region and not all fill) in C
    order, its index at its start or end, written through a temporary file (``paths``) or
    into its buffer (:data:`FAILED_ENCODE` where it does not fit).

    Parameters
    ----------
    dests, src, src_offsets, src_strides, counts, shard_shape, chunk_shape, itemsize
        The plan (see ``writes.pyx``): shard ``s`` holds ``counts[s]`` elements from byte
        ``src_offsets[s]`` of ``src``.
    fill, skip_empty, compressor, level, zstd_checksum, checksums, swap
        The fill value, whether a shard storing nothing is left unwritten, the inner chain.
    index_at_start, index_checksum, arena, nthreads
        The index's place and checksum; scratch (unused here); threads (one here).
    sizes, status
        Out: per shard its size and what became of it.
    order, blosc
        As :func:`write_chunks`' (for the inner chunks).
    paths
        Whether ``dests`` are file paths (else writable buffers).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        For a plan that does not hold together.

    Examples
    --------
    >>> import tempfile
    >>> sizes, status = np.zeros(1, np.int64), np.zeros(1, np.int8)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "s").encode()
    ...     write_shards([path], np.arange(3, dtype=np.uint8), np.array([0]),
    ...                  np.array([1]), np.array([[3]]), np.array([4]), np.array([2]), 1,
    ...                  b"\\0", False, 0, 0, False, 0, 1, False, False, EncodeArena(),
    ...                  1, sizes, status)
    ...     data = open(path, "rb").read()
    >>> data[:4], status.tolist(), sizes.tolist()
    (b'\\x00\\x01\\x02\\x00', [0], [36])
    """
    del nthreads, arena
    shard = tuple(int(n) for n in shard_shape)
    inner = tuple(int(n) for n in chunk_shape)
    if len(shard) != len(inner) or any(c < 1 or s % c for s, c in zip(shard, inner,
                                                                      strict=True)):
        raise ValueError("write_shards: chunk_shape does not divide shard_shape")
    n = len(dests)
    if len(src_offsets) != n or len(counts) != n or len(sizes) != n or len(status) != n:
        raise ValueError("write_shards: one entry per shard")
    per_dim = [s // c for s, c in zip(shard, inner, strict=True)]
    u8, fill_bytes = _u8(src), bytes(_u8(fill))
    nelems = math.prod(inner)
    nbytes = nelems * itemsize
    strides = _layout_strides("write_shards", inner, itemsize, order)
    for s in range(n):
        if not all(1 <= int(k) <= m for k, m in zip(counts[s], shard, strict=True)):
            raise ValueError("write_shards: counts outside the shard shape")
        _region("write_shards", "src", u8, int(src_offsets[s]), _ints(src_strides),
                _ints(counts[s]), itemsize, writeable=False)
        if paths and (type(dests[s]) is not bytes or b"\0" in dests[s] or not dests[s]):
            raise ValueError("write_shards: a destination is not a path")
    encoded_cap(nbytes, compressor, checksums)  # (the chain's checks)
    _check_write_codec("write_shards", compressor, level, blosc)
    for s in range(n):
        entries, data = [], []
        pos = 16 * math.prod(per_dim) + 4 * index_checksum if index_at_start else 0
        for coords in np.ndindex(*per_dim):
            origin = [i * c for i, c in zip(coords, inner, strict=True)]
            extent = [min(c, int(k) - o) for c, k, o in zip(inner, counts[s], origin,
                                                             strict=True)]
            chunk = np.frombuffer(fill_bytes * nelems, dtype=np.uint8).copy()
            if min(extent) > 0:
                offset = int(src_offsets[s]) + sum(o * int(st) for o, st in
                                                   zip(origin, src_strides, strict=True))
                copy_strided(u8, offset, src_strides, chunk, 0, strides,
                             np.array(extent, dtype=np.int64), itemsize)
            if min(extent) <= 0 or chunk.tobytes() == fill_bytes * nelems:
                entries.append((2**64 - 1, 2**64 - 1))
                continue
            piece = _encode_chunk(chunk, compressor, level, zstd_checksum, checksums, swap,
                                  blosc)
            entries.append((pos, len(piece)))
            data.append(piece)
            pos += len(piece)
        index = b"".join(o.to_bytes(8, "little") + k.to_bytes(8, "little") for o, k in entries)
        if index_checksum:
            index += crc32c(index).to_bytes(4, "little")
        if not data and skip_empty:
            status[s] = _EMPTY
            continue
        whole = index + b"".join(data) if index_at_start else b"".join(data) + index
        sizes[s] = len(whole)
        if paths:
            status[s] = _write_file(dests[s], whole)
            continue
        out = memoryview(dests[s]).cast("B")
        if len(whole) > len(out):
            status[s] = _FAILED_ENCODE
            continue
        out[:len(whole)] = whole
        status[s] = _WRITTEN


#: A key's temporary file slots (``fileio.TEMP_SLOTS``).
TEMP_SLOTS = 1024


def _write_file(path: bytes, data: bytes) -> int:
    """``data`` as the file ``path`` through a temporary file beside it, in the first of its
    slots ``.<name>.zarr3c-tmp-<slot as 16 hex>`` that is free or holds a killed writer's
    leftover (a file no ``flock`` holds, removed): a status."""
    directory, name = os.path.split(path)
    stem = os.path.join(directory, b"." + name[:64] + b".zarr3c-tmp-")
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return _FAILED_WRITE_IO
    slot = 0
    while slot < TEMP_SLOTS:
        tmp = stem + b"%016x" % slot
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            if not _remove_if_unheld(tmp):
                slot += 1
            continue
        except OSError:
            return _FAILED_WRITE_IO
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_SH)
            with open(fd, "wb", closefd=False) as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return _FAILED_WRITE_IO
        finally:
            os.close(fd)
        return _WRITTEN
    return _FAILED_WRITE_IO


def _remove_if_unheld(tmp: bytes) -> bool:
    """Remove a temporary file unless its writer holds its ``flock``: whether it went."""
    if fcntl is None:
        return False
    try:
        fd = os.open(tmp, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(tmp)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


# -- vlen.pyx: variable-length strings and bytes ------------------------------------------------

def _vlen_items(data: ReadBuffer, count: int) -> list[bytes]:
    """The items of a vlen buffer, read with ``int.from_bytes`` and slicing."""
    if count < 0:
        raise ValueError("vlen: the expected item count must be >= 0")
    buf = _u8(data).tobytes()
    if len(buf) < 4:
        raise ValueError("vlen: missing item count")
    stored = int.from_bytes(buf[:4], "little")
    if stored != count:
        raise ValueError("vlen: wrong item count")
    if 4 * stored > len(buf) - 4:
        raise ValueError("vlen: the item count does not fit the buffer")
    items, pos = [], 4
    for _ in range(stored):
        if pos + 4 > len(buf):
            raise ValueError("vlen: a length prefix runs past the end")
        length = int.from_bytes(buf[pos:pos + 4], "little")
        pos += 4
        if pos + length > len(buf):
            raise ValueError("vlen: an item runs past the end")
        items.append(buf[pos:pos + length])
        pos += length
    if pos != len(buf):
        raise ValueError("vlen: bytes follow the last item")
    return items


def _object_array(values: list[Any]) -> NDArray[np.object_]:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def decode_utf8(data: ReadBuffer, count: int, dtype: Any = None) -> NDArray[Any]:
    """Reference of :func:`zarr3c._kernels.vlen.decode_utf8`: the items sliced out one by one
    and decoded with ``bytes.decode("utf-8")``; a StringDType result by ``astype``."""
    if dtype is not None and np.dtype(dtype).kind not in "OT":
        raise TypeError("vlen: dtype must be object or a StringDType")
    strings = []
    for i, item in enumerate(_vlen_items(data, count)):
        try:
            strings.append(item.decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"vlen: item {i} is not valid UTF-8") from None
    out = _object_array(strings)
    return out if dtype is None or np.dtype(dtype).kind == "O" else out.astype(dtype)


def decode_utf8_into(data: ReadBuffer, out: NDArray[Any]) -> None:
    """Reference of :func:`zarr3c._kernels.vlen.decode_utf8_into`: :func:`decode_utf8`, then
    assigned into ``out``."""
    if not isinstance(out, np.ndarray) or out.dtype.kind != "T":
        raise TypeError("vlen: out must be a StringDType array")
    if out.ndim != 1 or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("vlen: out must be 1-d, C-contiguous and writable")
    out[:] = decode_utf8(data, out.shape[0], out.dtype)


def decode_bytes(data: ReadBuffer, count: int) -> NDArray[np.object_]:
    """Reference of :func:`zarr3c._kernels.vlen.decode_bytes`."""
    return _object_array(_vlen_items(data, count))


def _vlen_join(parts: list[bytes]) -> bytes:
    if len(parts) > 0xFFFFFFFF or any(len(p) > 0xFFFFFFFF for p in parts):
        raise ValueError("vlen: over the format's 32-bit limits")
    out = [len(parts).to_bytes(4, "little")]
    for part in parts:
        out += [len(part).to_bytes(4, "little"), part]
    return b"".join(out)


def _vlen_check_items(items: Any) -> None:
    if not isinstance(items, np.ndarray):
        raise TypeError("vlen: items must be a numpy array")
    if items.ndim != 1:
        raise ValueError("vlen: items must be 1-d")


def _vlen_output(data: bytes, array_from: int) -> bytes | NDArray[np.uint8]:
    if 0 <= array_from <= len(data):
        return np.frombuffer(data, dtype=np.uint8).copy()
    return data


def encode_utf8(items: NDArray[Any], *, array_from: int = -1) -> bytes | NDArray[np.uint8]:
    """Reference of :func:`zarr3c._kernels.vlen.encode_utf8`: each item encoded with
    ``str.encode("utf-8")``, None (or a StringDType's missing value) as an empty string."""
    _vlen_check_items(items)
    if items.dtype.kind == "T":
        # a missing value converts to the dtype's na_object itself
        missing = getattr(items.dtype, "na_object", object())
        values = [None if v is missing else v for v in items.astype(object)]
    elif items.dtype.kind == "O":
        values = list(items)
    else:
        raise TypeError("vlen: items must have dtype object or StringDType")
    parts = []
    for i, v in enumerate(values):
        if v is None:
            parts.append(b"")
        elif not isinstance(v, str):
            raise TypeError(f"vlen: item {i} has type {type(v).__name__}, expected str")
        else:
            try:
                parts.append(v.encode("utf-8"))
            except UnicodeEncodeError:
                raise ValueError(f"vlen: item {i} cannot be encoded as UTF-8") from None
    return _vlen_output(_vlen_join(parts), array_from)


def encode_bytes(items: NDArray[np.object_], *,
                 array_from: int = -1) -> bytes | NDArray[np.uint8]:
    """Reference of :func:`zarr3c._kernels.vlen.encode_bytes`: None as an empty item."""
    _vlen_check_items(items)
    if items.dtype.kind != "O":
        raise TypeError("vlen: items must have dtype object")
    parts = []
    for i, v in enumerate(items):
        if v is None:
            parts.append(b"")
        elif not isinstance(v, bytes):
            raise TypeError(f"vlen: item {i} has type {type(v).__name__}, expected bytes")
        else:
            parts.append(bytes(v))
    return _vlen_output(_vlen_join(parts), array_from)
