"""asv benchmarks of the typed Cython kernels (``zarr3c._kernels``), on realistic sizes.

- copy_strided: one 64^3 uint16 chunk (512 KiB) into a region of a 512^3 uint16 output
  (256 MiB): a chunk-aligned block, a stepped and reversed selection, and a transposed
  (Fortran-order) source; numpy's ``out[sel] = chunk`` is timed beside it as the baseline.
- fill_strided: the same region filled with a zero and with a non-byte-uniform fill value.
- transpose_into: 64^3 chunks, uint16 and float64, for three axis orders (C->F is [2, 1, 0]).
- byteswap, is_uniform: a 64^3 chunk (the ``bytes`` codec's endian swap, the fill-value test).
- grid: projecting slices of 10^6 elements onto 64-element chunks (regular and offsets), and
  locating 10^5 points, sorted and random, on a regular grid and on 10^4 rectilinear chunks.

Every ``setup`` checks one result against numpy, so a wrong answer fails instead of being
timed.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from zarr3c._kernels import copy as kcopy
from zarr3c._kernels import grid, layout

CHUNK = (64, 64, 64)
OUT = (512, 512, 512)


def _bytes(a: np.ndarray) -> np.ndarray:
    """The flat uint8 view of a C-contiguous array."""
    return a.reshape(-1).view(np.uint8)


def _region(view: np.ndarray, base: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return offset, np.array(view.strides, np.int64), np.array(view.shape, np.int64)


_SELECTIONS = {
    # chunk (1, 2, 4) of a 64^3 grid
    "block": np.s_[64:128, 128:192, 256:320],
    # every other plane, every third row, reversed every fourth column
    "stepped": np.s_[0:128:2, 0:192:3, 511:255:-4],
}


class CopyStrided:
    """A decoded 64^3 uint16 chunk into a region of a 512^3 output."""

    params: ClassVar[list[list[str]]] = [["block", "stepped", "block-from-F-order"]]
    param_names: ClassVar[list[str]] = ["region"]

    def setup(self, region: str) -> None:
        rng = np.random.default_rng(0)
        self.out = np.zeros(OUT, dtype=np.uint16)
        chunk = rng.integers(0, 2**16, CHUNK, dtype=np.uint16)
        if region == "block-from-F-order":
            # A Fortran-ordered chunk buffer (transpose codec) copied straight into C order.
            self.base = np.ascontiguousarray(chunk.T)
            self.chunk = self.base.T
            self.sel = _SELECTIONS["block"]
        else:
            self.base = self.chunk = chunk
            self.sel = _SELECTIONS[region]
        self.src = _bytes(self.base)
        self.dst = _bytes(self.out)
        self.so, self.ss, self.shape = _region(self.chunk, self.base)
        self.do, self.ds, _ = _region(self.out[self.sel], self.out)
        self.time_copy_strided(region)
        if not np.array_equal(self.out[self.sel], self.chunk):
            raise AssertionError(f"{region}: copy_strided disagrees with numpy")

    def time_copy_strided(self, region: str) -> None:
        kcopy.copy_strided(self.src, self.so, self.ss, self.dst, self.do, self.ds, self.shape, 2)

    def time_numpy_assign(self, region: str) -> None:
        self.out[self.sel] = self.chunk


class FillStrided:
    """Fill a 64^3 region of a 512^3 uint16 output."""

    params: ClassVar[list[list[str]]] = [["block", "stepped"], ["zero", "0x1234"]]
    param_names: ClassVar[list[str]] = ["region", "value"]

    def setup(self, region: str, value: str) -> None:
        self.out = np.zeros(OUT, dtype=np.uint16)
        self.sel = _SELECTIONS[region]
        self.scalar = np.uint16(0 if value == "zero" else 0x1234)
        self.value = np.array([self.scalar], dtype=np.uint16).view(np.uint8)
        self.dst = _bytes(self.out)
        self.do, self.ds, self.shape = _region(self.out[self.sel], self.out)
        self.out[...] = 7
        self.time_fill_strided(region, value)
        if not (self.out[self.sel] == self.scalar).all():
            raise AssertionError(f"{region}/{value}: fill_strided disagrees with numpy")

    def time_fill_strided(self, region: str, value: str) -> None:
        kcopy.fill_strided(self.dst, self.do, self.ds, self.shape, self.value)

    def time_numpy_fill(self, region: str, value: str) -> None:
        self.out[self.sel] = self.scalar


class TransposeInto:
    """Axis permutations of a 64^3 chunk (C->F is [2, 1, 0])."""

    params: ClassVar[list[list[str]]] = [["uint16", "float64"], ["210", "120", "021"]]
    param_names: ClassVar[list[str]] = ["dtype", "order"]

    def setup(self, dtype: str, order: str) -> None:
        rng = np.random.default_rng(0)
        self.chunk = (rng.random(CHUNK) * 1000).astype(dtype)
        self.perm = [int(c) for c in order]
        self.order = np.array(self.perm, np.int64)
        self.shape = np.array(CHUNK, np.int64)
        self.itemsize = self.chunk.itemsize
        self.src = _bytes(self.chunk)
        self.out = np.empty(self.chunk.nbytes, dtype=np.uint8)
        self.tmp = np.empty(self.chunk.transpose(self.perm).shape, dtype=dtype)
        self.time_transpose_into(dtype, order)
        expected = np.ascontiguousarray(self.chunk.transpose(self.perm))
        if not np.array_equal(self.out, _bytes(expected)):
            raise AssertionError(f"{dtype}/{order}: transpose_into disagrees with numpy")

    def time_transpose_into(self, dtype: str, order: str) -> None:
        layout.transpose_into(self.src, self.shape, self.order, self.itemsize, self.out)

    def time_numpy_transpose_copy(self, dtype: str, order: str) -> None:
        np.copyto(self.tmp, self.chunk.transpose(self.perm))


class Byteswap:
    """Swap the byte order of a 64^3 chunk in place."""

    params: ClassVar[list[list[str]]] = [["uint16", "float32", "float64", "complex128"]]
    param_names: ClassVar[list[str]] = ["dtype"]

    def setup(self, dtype: str) -> None:
        self.chunk = np.arange(np.prod(CHUNK)).astype(dtype).reshape(CHUNK)
        dt = np.dtype(dtype)
        self.width = dt.itemsize // 2 if dt.kind == "c" else dt.itemsize
        self.buf = _bytes(self.chunk)
        before = self.chunk.copy()
        self.time_byteswap(dtype)
        if not np.array_equal(self.chunk, before.byteswap()):
            raise AssertionError(f"{dtype}: byteswap disagrees with numpy")

    def time_byteswap(self, dtype: str) -> None:
        kcopy.byteswap(self.buf, self.width)

    def time_numpy_byteswap(self, dtype: str) -> None:
        self.chunk.byteswap(inplace=True)


class IsUniform:
    """Is a 64^3 chunk all fill value?  (The worst case: yes, every byte is read.)"""

    params: ClassVar[list[list[str]]] = [["uint16", "float64"]]
    param_names: ClassVar[list[str]] = ["dtype"]

    def setup(self, dtype: str) -> None:
        self.fill = np.array([1.5 if dtype == "float64" else 3], dtype=dtype)
        self.chunk = np.full(CHUNK, self.fill[0], dtype=dtype)
        self.buf = _bytes(self.chunk)
        self.value = self.fill.view(np.uint8)
        if not kcopy.is_uniform(self.buf, self.value):
            raise AssertionError(f"{dtype}: is_uniform missed a uniform chunk")

    def time_is_uniform(self, dtype: str) -> None:
        kcopy.is_uniform(self.buf, self.value)

    def time_numpy_all_equal(self, dtype: str) -> None:
        bool((self.chunk == self.fill[0]).all())


class ProjectSlice:
    """A slice of 10^6 elements (step 1 and step 3) onto 64-element chunks."""

    params: ClassVar[list[list[int]]] = [[1, 3]]
    param_names: ClassVar[list[str]] = ["step"]

    def setup(self, step: int) -> None:
        self.count = 10**6
        self.offsets = np.arange(0, 64 * (3 * 10**6 // 64 + 2), 64, dtype=np.int64)
        rows = grid.project_slice_regular(5, step, self.count, 64)
        if not np.array_equal(rows, grid.project_slice_offsets(5, step, self.count, self.offsets)):
            raise AssertionError("regular and offsets projections disagree")

    def time_project_slice_regular(self, step: int) -> None:
        grid.project_slice_regular(5, step, self.count, 64)

    def time_project_slice_offsets(self, step: int) -> None:
        grid.project_slice_offsets(5, step, self.count, self.offsets)


class LocatePoints:
    """10^5 points on a dimension of 10^7 elements: regular 1000-element chunks, or 10^4
    rectilinear chunks of random lengths (binary search)."""

    params: ClassVar[list[list[str]]] = [["sorted", "random"]]
    param_names: ClassVar[list[str]] = ["points"]

    def setup(self, points: str) -> None:
        rng = np.random.default_rng(0)
        lengths = rng.integers(1, 2000, 10**4)
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        n = int(self.offsets[-1])
        self.indices = rng.integers(0, n, 10**5).astype(np.int64)
        if points == "sorted":
            self.indices.sort()
        self.chunk_index = np.empty_like(self.indices)
        self.local_index = np.empty_like(self.indices)
        self.time_locate_points_offsets(points)
        expected = np.searchsorted(self.offsets, self.indices, side="right") - 1
        if not np.array_equal(self.chunk_index, expected):
            raise AssertionError("locate_points_offsets disagrees with searchsorted")

    def time_locate_points_regular(self, points: str) -> None:
        grid.locate_points_regular(self.indices, 1000, self.chunk_index, self.local_index)

    def time_locate_points_offsets(self, points: str) -> None:
        grid.locate_points_offsets(self.indices, self.offsets, self.chunk_index, self.local_index)

    def time_numpy_searchsorted(self, points: str) -> None:
        np.searchsorted(self.offsets, self.indices, side="right")
