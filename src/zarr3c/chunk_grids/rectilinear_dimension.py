"""One explicit-edge dimension of a rectilinear chunk grid: its edges, their offsets, lookups.

The grid (:mod:`zarr3c.chunk_grids.rectilinear`) holds one of these per dimension listed by
explicit edge lengths (a bare-integer dimension is a
:class:`~zarr3c.chunk_grids.regular.RegularDimension`).  Its cumulative offsets
``[0, e0, e0 + e1, ...]`` are computed once, as a read-only int64 array, and searched by the
compiled grid kernels (:mod:`zarr3c._kernels.grid`).

The extension: https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from zarr3c.errors import MetadataError

__all__ = ["WINDOW_THRESHOLD", "RectilinearDimension", "edge_offsets"]

#: Above this many chunks in a dimension, projections and lookups hand the kernel only the window
#: of offsets they touch (rebased to 0): the kernel checks every offset it is given, which would
#: make each small selection cost O(nchunks) instead of O(log nchunks).
WINDOW_THRESHOLD = 1 << 14


def _kernels() -> Any:
    # Imported lazily so that metadata parsing works before/without the compiled kernels.
    from zarr3c._kernels import grid

    return grid


def edge_offsets(edges: Sequence[int]) -> np.ndarray:
    """The read-only int64 cumulative offsets ``[0, e0, e0 + e1, ...]`` of ``edges``."""
    out = np.zeros(len(edges) + 1, dtype=np.int64)
    if edges:
        np.cumsum(np.asarray(edges, dtype=np.int64), out=out[1:])
    out.flags.writeable = False
    return out


class RectilinearDimension:
    """One explicit-edge dimension of a rectilinear grid over an array of a given length.

    Parameters
    ----------
    offsets
        int64 cumulative offsets, length ``len(edges) + 1``: ``offsets[0] == 0``, strictly
        increasing; chunk ``i`` covers ``[offsets[i], offsets[i + 1])``.  Shared, not copied.
    length
        The array length along this dimension (``0 <= length <= offsets[-1]``).

    Attributes
    ----------
    nchunks
        The number of chunks that intersect ``[0, length)`` (the chunks past the array end
        are not part of the grid's shape).

    Raises
    ------
    ValueError
        If ``offsets`` is not a non-empty 1-d int64 array or ``length`` is negative.
    MetadataError
        If the edges sum to less than ``length``.

    Examples
    --------
    >>> from zarr3c.chunk_grids import RectilinearDimension
    >>> dim = RectilinearDimension.from_edges([10, 20, 5], 30)
    >>> dim.nchunks, dim.chunk_offset(1), dim.chunk_length(1)
    (2, 10, 20)
    """

    __slots__ = ("length", "nchunks", "offsets")

    def __init__(self, offsets: np.ndarray, length: int):
        if offsets.dtype != np.int64 or offsets.ndim != 1 or len(offsets) < 1:
            raise ValueError("offsets must be a non-empty 1-d int64 array")
        total = int(offsets[-1])
        if length < 0:
            raise ValueError(f"the array length must be >= 0, got {length}")
        if length > total:
            raise MetadataError(
                f"the chunk edge lengths sum to {total}, less than the array length {length}",
                path="chunk_grid.configuration.chunk_shapes",
            )
        self.offsets = np.ascontiguousarray(offsets)
        self.length = int(length)
        # Chunks whose first element lies inside the array: offsets[i] < length, i < nedges.
        self.nchunks = int(np.searchsorted(self.offsets, self.length, side="left"))

    @classmethod
    def from_edges(cls, edges: Sequence[int], length: int) -> RectilinearDimension:
        """The dimension with explicit ``edges`` over an array of ``length``.

        Parameters
        ----------
        edges : sequence of int
            The edge lengths (each >= 1).
        length : int
            The array length along this dimension.

        Returns
        -------
        RectilinearDimension
            The dimension (its offsets computed from ``edges``).

        Raises
        ------
        MetadataError
            If the edges sum to less than ``length``.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> RectilinearDimension.from_edges([10, 20, 5], 30)
        RectilinearDimension(edges=(10, 20, 5), length=30)
        """
        return cls(edge_offsets(tuple(int(e) for e in edges)), length)

    @property
    def edges(self) -> tuple[int, ...]:
        """Every edge length, the ones past the array end included."""
        return tuple(np.diff(self.offsets).tolist())

    def chunk_length(self, i: int) -> int:
        """The full length of chunk ``i``: its edge length, even where it overhangs the array.

        Parameters
        ----------
        i : int
            A chunk index along this dimension.

        Returns
        -------
        int
            The edge length.

        Raises
        ------
        IndexError
            If there is no chunk ``i``.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> RectilinearDimension.from_edges([10, 20, 5], 30).chunk_length(1)
        20
        """
        return int(self.offsets[i + 1] - self.offsets[i])

    def chunk_lengths(self, chunk_index: np.ndarray) -> np.ndarray:
        """:meth:`chunk_length` of every chunk in the int64 array ``chunk_index``.

        Parameters
        ----------
        chunk_index : numpy.ndarray
            Chunk indices along this dimension.

        Returns
        -------
        numpy.ndarray
            Their edge lengths.

        Raises
        ------
        IndexError
            If an index names no chunk.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> dim = RectilinearDimension.from_edges([10, 20, 5], 30)
        >>> dim.chunk_lengths(np.array([0, 2])).tolist()
        [10, 5]
        """
        return self.offsets[chunk_index + 1] - self.offsets[chunk_index]

    def chunk_offset(self, i: int) -> int:
        """The array coordinate of the first element of chunk ``i``.

        Parameters
        ----------
        i : int
            A chunk index along this dimension.

        Returns
        -------
        int
            The sum of the edges before it.

        Raises
        ------
        IndexError
            If there is no chunk ``i``.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> RectilinearDimension.from_edges([10, 20, 5], 30).chunk_offset(2)
        30
        """
        return int(self.offsets[i])

    def _window(self, lo: int, hi: int) -> tuple[int, np.ndarray] | None:
        """``(i0, offsets[i0 : i1 + 2] - offsets[i0])`` for the chunks ``i0..i1`` holding
        ``lo..hi``, when that window is small next to the whole dimension; else None."""
        off = self.offsets
        if len(off) <= WINDOW_THRESHOLD or lo < 0 or hi >= int(off[-1]) or lo > hi:
            return None  # small, or invalid (the kernel raises on the full offsets)
        # (The method, not np.searchsorted: the function's dispatch would cost more than the
        # search on small selections; bench_rectilinear.Lookup tracks these lookups.)
        i0 = int(off.searchsorted(lo, "right")) - 1
        i1 = int(off.searchsorted(hi, "right")) - 1
        if (i1 - i0 + 2) * 4 > len(off):
            return None
        return i0, off[i0 : i1 + 2] - off[i0]

    def project_slice(self, start: int, step: int, count: int) -> np.ndarray:
        """Project the selection ``start, start + step, ...`` (``count`` elements) onto chunks.

        Parameters
        ----------
        start : int
            The first selected index (>= 0).
        step : int
            The distance between selected indices (>= 1).
        count : int
            The number of selected elements (>= 0).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(n, 4)``: per chunk touched, in increasing chunk order, (chunk
            index, index in the chunk of its first selected element, number of selected
            elements in it, position in the selection of the first one).

        Raises
        ------
        ValueError
            If an argument is out of range or the last selected index is past the edges (see
            :func:`zarr3c._kernels.grid.project_slice_offsets`).

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> RectilinearDimension.from_edges([10, 20, 5], 30).project_slice(5, 3, 4).tolist()
        [[0, 5, 2, 0], [1, 1, 2, 2]]
        """
        window = None
        if count > 0 and step >= 1:
            window = self._window(start, start + (count - 1) * step)
        if window is None:
            return _kernels().project_slice_offsets(start, step, count, self.offsets)
        i0, sub = window
        rows = _kernels().project_slice_offsets(start - int(self.offsets[i0]), step, count, sub)
        rows[:, 0] += i0  # local starts and positions do not depend on the rebasing
        return rows

    def locate(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The chunk index and index within the chunk of each (non-negative) array index.

        Parameters
        ----------
        indices : array_like of int
            Array indices along this dimension.

        Returns
        -------
        tuple of numpy.ndarray
            Two int64 arrays of the same length as ``indices``.

        Raises
        ------
        ValueError
            For an index outside the edges (the message names the first).

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearDimension
        >>> chunk, local = RectilinearDimension.from_edges([10, 20, 5], 30).locate([3, 17, 29])
        >>> chunk.tolist(), local.tolist()
        ([0, 1, 1], [3, 7, 19])
        """
        idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
        chunk_index = np.empty_like(idx)
        local_index = np.empty_like(idx)
        window = self._window(int(idx.min()), int(idx.max())) if len(idx) else None
        if window is None:
            _kernels().locate_points_offsets(idx, self.offsets, chunk_index, local_index)
        else:
            i0, sub = window
            _kernels().locate_points_offsets(idx - int(self.offsets[i0]), sub, chunk_index,
                                             local_index)
            chunk_index += i0
        return chunk_index, local_index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RectilinearDimension):
            return NotImplemented
        return self.length == other.length and np.array_equal(self.offsets, other.offsets)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RectilinearDimension(edges={self.edges!r}, length={self.length})"


