"""The regular chunk grid (Zarr v3 ``regular`` chunk grid 1.0).

The v3 core specification's "Chunk grids":
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html.

Every chunk is a hyperrectangle of the same shape; the grid is aligned with the array origin
and overhangs the array where a dimension's length is not a multiple of the chunk length.
Chunk ``(k, j, i)`` starts at ``(k * dz, j * dy, i * dx)``; edge chunks keep the full chunk
shape (elements beyond the array edge hold the fill value).  The grid shape is
``ceil(length / chunk_length)`` per dimension (0 for a 0-length dimension).  JSON::

    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 20, 400]}}

Per-dimension projections of selections run in the compiled kernels
(:mod:`zarr3c._kernels.grid`), imported on first use.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c.errors import MetadataError

__all__ = ["RegularChunkGrid", "RegularDimension"]

_MAX_INT = 2**63 - 1


def _kernels() -> Any:
    # Imported lazily so that metadata parsing works before/without the compiled kernels.
    from zarr3c._kernels import grid

    return grid


@dataclass(frozen=True, slots=True)
class RegularDimension:
    """One dimension of a regular grid.

    Parameters
    ----------
    size
        The chunk length along this dimension (>= 1).
    length
        The array length along this dimension (>= 0).

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field.

    Examples
    --------
    >>> from zarr3c.chunk_grids import RegularDimension
    >>> dim = RegularDimension(size=10, length=25)
    >>> dim.nchunks, dim.chunk_offset(2)
    (3, 20)
    """

    size: int
    length: int

    @property
    def nchunks(self) -> int:
        """Number of chunks covering the dimension (0 for a 0-length dimension)."""
        return -(-self.length // self.size)

    def chunk_length(self, i: int) -> int:
        """The length of chunk ``i``: always the full chunk length (edge chunks are full-size).

        Parameters
        ----------
        i : int
            A chunk index along this dimension.

        Returns
        -------
        int
            ``size``.

        Raises
        ------
        None
            Every chunk has the same length.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularDimension
        >>> RegularDimension(size=10, length=25).chunk_length(2)
        10
        """
        return self.size

    def chunk_lengths(self, chunk_index: np.ndarray) -> int:
        """:meth:`chunk_length` of many chunks at once.

        Parameters
        ----------
        chunk_index : numpy.ndarray
            Chunk indices along this dimension.

        Returns
        -------
        int
            ``size``: one length serves every chunk (numpy broadcasts it).

        Raises
        ------
        None
            Every chunk has the same length.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.chunk_grids import RegularDimension
        >>> RegularDimension(size=10, length=25).chunk_lengths(np.array([0, 2]))
        10
        """
        return self.size

    def chunk_offset(self, i: int) -> int:
        """The array coordinate of the first element of chunk ``i``.

        Parameters
        ----------
        i : int
            A chunk index along this dimension.

        Returns
        -------
        int
            ``i * size``.

        Raises
        ------
        None
            It is arithmetic.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularDimension
        >>> RegularDimension(size=10, length=25).chunk_offset(2)
        20
        """
        return i * self.size

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
            If an argument is out of range (see
            :func:`zarr3c._kernels.grid.project_slice_regular`).

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularDimension
        >>> RegularDimension(size=10, length=25).project_slice(5, 3, 4).tolist()
        [[0, 5, 2, 0], [1, 1, 2, 2]]
        """
        return _kernels().project_slice_regular(start, step, count, self.size)

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
            For a negative index (the message names the first).

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularDimension
        >>> chunk, local = RegularDimension(size=10, length=25).locate([3, 17, 24])
        >>> chunk.tolist(), local.tolist()
        ([0, 1, 2], [3, 7, 4])
        """
        idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
        chunk_index = np.empty_like(idx)
        local_index = np.empty_like(idx)
        _kernels().locate_points_regular(idx, self.size, chunk_index, local_index)
        return chunk_index, local_index


@dataclass(frozen=True, slots=True, kw_only=True)
class RegularChunkGrid:
    """A regular chunk grid.

    Parameters
    ----------
    chunk_shape
        The chunk length along each dimension (each >= 1).

    Build from JSON with :meth:`from_dict`.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (the lengths themselves are checked by
        :meth:`from_dict`).

    Examples
    --------
    >>> from zarr3c.chunk_grids import RegularChunkGrid
    >>> grid = RegularChunkGrid(chunk_shape=(10, 4))
    >>> grid.grid_shape((25, 8)), grid.chunk_origin((2, 1))
    ((3, 2), (20, 4))
    >>> grid.to_dict()
    {'name': 'regular', 'configuration': {'chunk_shape': [10, 4]}}
    """

    name: ClassVar[str] = "regular"

    chunk_shape: tuple[int, ...]

    # -- JSON ---------------------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        ndim: int,
        path: str = "chunk_grid",
        source: str | None = None,
    ) -> RegularChunkGrid:
        """Parse the whole ``chunk_grid`` object.

        Parameters
        ----------
        data
            ``{"name": "regular", "configuration": {"chunk_shape": [...]}}``.
        ndim
            The array's rank; ``chunk_shape`` must have as many entries.
        path, source
            Where the object came from, for error messages.

        Returns
        -------
        RegularChunkGrid
            The grid.

        Raises
        ------
        MetadataError
            On any malformed or out-of-range field; the message names its JSON path.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid.from_dict(
        ...     {"name": "regular", "configuration": {"chunk_shape": [10, 4]}}, ndim=2)
        RegularChunkGrid(chunk_shape=(10, 4))
        >>> RegularChunkGrid.from_dict(
        ...     {"name": "regular", "configuration": {"chunk_shape": [0]}}, ndim=1)
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: chunk_grid.configuration.chunk_shape[0]: chunk length must ...
        """
        if not isinstance(data, Mapping):
            raise MetadataError(
                f"chunk grid must be an object, got {data!r}", path=path, source=source
            )
        unknown = sorted(set(data) - {"name", "configuration"})
        if unknown:
            raise MetadataError(
                f"unknown field(s) {', '.join(map(repr, unknown))} in the regular chunk grid",
                path=path,
                source=source,
            )
        if data.get("name") != cls.name:
            raise MetadataError(
                f"expected chunk grid name {cls.name!r}, got {data.get('name')!r}",
                path=f"{path}.name",
                source=source,
            )
        config = data.get("configuration")
        cpath = f"{path}.configuration"
        if not isinstance(config, Mapping):
            raise MetadataError(
                "the regular chunk grid needs a configuration object with \"chunk_shape\"",
                path=cpath,
                source=source,
            )
        unknown = sorted(set(config) - {"chunk_shape"})
        if unknown:
            raise MetadataError(
                f"unknown field(s) {', '.join(map(repr, unknown))}",
                path=cpath,
                source=source,
            )
        spath = f"{cpath}.chunk_shape"
        if "chunk_shape" not in config:
            raise MetadataError("missing required field", path=spath, source=source)
        raw = config["chunk_shape"]
        if not isinstance(raw, list | tuple):
            raise MetadataError(
                f"must be a list of integers, got {raw!r}", path=spath, source=source
            )
        shape = []
        for i, s in enumerate(raw):
            if isinstance(s, bool) or not isinstance(s, int):
                raise MetadataError(
                    f"chunk length must be an integer, got {s!r}",
                    path=f"{spath}[{i}]",
                    source=source,
                )
            if not 1 <= s <= _MAX_INT:
                raise MetadataError(
                    f"chunk length must be in [1, 2**63 - 1], got {s}",
                    path=f"{spath}[{i}]",
                    source=source,
                )
            shape.append(int(s))
        if len(shape) != ndim:
            raise MetadataError(
                f"chunk_shape has {len(shape)} dimensions but the array has {ndim}",
                path=spath,
                source=source,
            )
        return cls(chunk_shape=tuple(shape))

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``chunk_grid`` object, as :meth:`from_dict` reads it back.

        Returns
        -------
        dict
            ``{"name": "regular", "configuration": {"chunk_shape": [...]}}``.

        Raises
        ------
        None
            Writing a grid cannot fail.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).to_dict()
        {'name': 'regular', 'configuration': {'chunk_shape': [10, 4]}}
        """
        return {"name": self.name, "configuration": {"chunk_shape": list(self.chunk_shape)}}

    # -- geometry -------------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """The grid's rank."""
        return len(self.chunk_shape)

    @property
    def max_chunk_shape(self) -> tuple[int, ...]:
        """The largest chunk along each dimension (for a regular grid, the chunk shape)."""
        return self.chunk_shape

    def validate_shape(
        self, array_shape: Sequence[int], *, path: str = "chunk_grid", source: str | None = None
    ) -> None:
        """Check the grid fits an array of ``array_shape`` (for a regular grid: the rank).

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.
        path, source : str
            Named by errors.

        Raises
        ------
        MetadataError
            If the ranks differ.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).validate_shape((1, 2, 3))
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: chunk_grid: array shape (1, 2, 3) has 3 dimensions but the ...
        """
        if len(array_shape) != len(self.chunk_shape):
            raise MetadataError(
                f"array shape {tuple(array_shape)} has {len(array_shape)} dimensions but the "
                f"chunk grid has {len(self.chunk_shape)}",
                path=path,
                source=source,
            )

    def _check_rank(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.chunk_shape):
            raise MetadataError(
                f"array shape {tuple(array_shape)} has {len(array_shape)} dimensions but the "
                f"chunk grid has {len(self.chunk_shape)}",
                path="chunk_grid",
            )

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """The number of chunks along each dimension (ceil division; 0 for a 0-length one).

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of int
            Chunks per dimension.

        Raises
        ------
        MetadataError
            If ``array_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).grid_shape((25, 8))
        (3, 2)
        """
        self._check_rank(array_shape)
        return tuple(-(-n // c) for n, c in zip(array_shape, self.chunk_shape, strict=True))

    def nchunks(self, array_shape: Sequence[int]) -> int:
        """The total number of chunks covering an array of ``array_shape``.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        int
            The product of :meth:`grid_shape`.

        Raises
        ------
        MetadataError
            If ``array_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).nchunks((25, 8))
        6
        """
        total = 1
        for n in self.grid_shape(array_shape):
            total *= n
        return total

    def array_chunks(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """What ``Array.chunks`` shows for this grid: the chunk shape.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of int
            The chunk shape.

        Raises
        ------
        None
            The chunk shape does not depend on the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).array_chunks((25, 8))
        (10, 4)
        """
        return self.chunk_shape

    def distinct_chunk_shapes(self, array_shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
        """Every chunk shape the grid has for ``array_shape``, once each (here: one), so that
        codec chains can be validated for each when an array is opened.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        iterator of tuple of int
            The chunk shape.

        Raises
        ------
        MetadataError
            If ``array_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> list(RegularChunkGrid(chunk_shape=(10, 4)).distinct_chunk_shapes((25, 8)))
        [(10, 4)]
        """
        self._check_rank(array_shape)
        yield self.chunk_shape

    def chunk_shape_at(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The shape of the chunk at grid coordinates ``coords`` (always the full chunk shape).

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates.

        Returns
        -------
        tuple of int
            The chunk shape (edge chunks are full-size).

        Raises
        ------
        None
            Every chunk has the same shape.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).chunk_shape_at((2, 1))
        (10, 4)
        """
        return self.chunk_shape

    def chunk_origin(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The array coordinates of the first element of the chunk at ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates.

        Returns
        -------
        tuple of int
            ``coords * chunk_shape``, per dimension.

        Raises
        ------
        ValueError
            If ``coords`` has another length than the grid's rank.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).chunk_origin((2, 1))
        (20, 4)
        """
        return tuple(c * s for c, s in zip(coords, self.chunk_shape, strict=True))

    def dimensions(self, array_shape: Sequence[int]) -> tuple[RegularDimension, ...]:
        """Per-dimension views of the grid over an array of ``array_shape``.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of RegularDimension
            One per dimension.

        Raises
        ------
        MetadataError
            If ``array_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> RegularChunkGrid(chunk_shape=(10, 4)).dimensions((25, 8))
        (RegularDimension(size=10, length=25), RegularDimension(size=4, length=8))
        """
        self._check_rank(array_shape)
        return tuple(
            RegularDimension(c, n) for c, n in zip(self.chunk_shape, array_shape, strict=True)
        )

    def iter_chunk_coords(self, array_shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
        """All chunk grid coordinates of an array of ``array_shape``, in C order.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        iterator of tuple of int
            The coordinates.

        Raises
        ------
        MetadataError
            If ``array_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> list(RegularChunkGrid(chunk_shape=(10, 4)).iter_chunk_coords((15, 8)))
        [(0, 0), (0, 1), (1, 0), (1, 1)]
        """
        return itertools.product(*(range(n) for n in self.grid_shape(array_shape)))

    def resized(self, new_shape: Sequence[int]) -> RegularChunkGrid:
        """The grid for the array resized to ``new_shape``: a regular grid does not change.

        Parameters
        ----------
        new_shape : sequence of int
            The array's new shape.

        Returns
        -------
        RegularChunkGrid
            ``self``.

        Raises
        ------
        MetadataError
            If ``new_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RegularChunkGrid
        >>> grid = RegularChunkGrid(chunk_shape=(10, 4))
        >>> grid.resized((100, 100)) is grid
        True
        """
        self._check_rank(new_shape)
        return self
