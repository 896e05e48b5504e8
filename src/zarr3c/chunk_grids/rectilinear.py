"""The rectilinear chunk grid (zarr-extensions ``chunk-grids/rectilinear``).

The extension: https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear.

Each dimension is cut into chunks of its own, possibly varying, edge lengths.  Per dimension
the configuration holds either a bare positive integer (a regular step, repeated until it
covers the array length) or a list mixing explicit edge lengths and run-length pairs
``[value, count]`` (``count`` repetitions of ``value``).  JSON::

    "chunk_grid": {"name": "rectilinear", "configuration": {
        "kind": "inline",
        "chunk_shapes": [[10, 20, 30], [[25, 3], 10], 4]}}

Geometry (following the extension's worked example and geometry rather than its "equals or
exceeds" wording): with ``C`` the cumulative edge lengths of a dimension, chunk ``i`` covers
``[C[i-1], C[i])``, so index ``x`` is in the chunk of the first ``C[i]`` strictly greater than
``x``.  The edge lengths must sum to at least the array length and may overflow it, even by
whole chunks (documents whose edges "sum exactly" to the length, as an earlier revision of
the extension required, are accepted too).  Chunks that lie wholly
outside the array are not part of the grid's shape and are never read or written; edge chunks
have their full edge-length shape, the part outside the array holding the fill value (as
with the regular grid).

Written back, each dimension takes its most compact exact form: a bare integer where all edges
are equal and the last one covers the end (only decided where the array length is known, i.e.
in :meth:`RectilinearChunkGrid.from_chunks`), run-length pairs for runs of two or more equal
edges, plain integers otherwise.

Lookups run in the compiled grid kernels (:mod:`zarr3c._kernels.grid`): a bare-integer
dimension is a :class:`~zarr3c.chunk_grids.regular.RegularDimension` (arithmetic); an explicit
one a :class:`RectilinearDimension` (:mod:`.rectilinear_dimension`) holding a precomputed
int64 cumulative offsets array ``[0, e0, e0 + e1, ...]`` (built once, when the grid is built)
searched by binary search.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import numpy as np

from zarr3c.chunk_grids.chunk_sizes import repeated_sizes
from zarr3c.chunk_grids.rectilinear_dimension import (
    WINDOW_THRESHOLD,
    RectilinearDimension,
    edge_offsets,
)
from zarr3c.chunk_grids.regular import RegularDimension
from zarr3c.errors import MetadataError

__all__ = [
    "MAX_EDGES_PER_DIMENSION",
    "WINDOW_THRESHOLD",
    "RectilinearChunkGrid",
    "RectilinearDimension",
]

_MAX_INT = 2**63 - 1

#: The most explicit edges one dimension may expand to.  Explicit edges are materialised (an
#: int64 offsets array), so without a bound a tiny document such as ``[[1, 1e15]]`` could ask
#: for petabytes; 2**24 edges take 128 MiB of offsets.
MAX_EDGES_PER_DIMENSION = 2**24

DimSpec = int | tuple[int, ...]


_INT_TYPES = (int, np.integer)
_BOOL_TYPES = (bool, np.bool_)


def _is_int(value: Any) -> bool:
    # JSON true/false arrive as bool, a subclass of int: "true is not 1".  (Type tuples, not
    # ``int | np.integer`` unions: isinstance against a union is several times slower.)
    return isinstance(value, _INT_TYPES) and not isinstance(value, _BOOL_TYPES)


def _all_plain_ints(values: Sequence[Any]) -> bool:
    # What JSON decoding produces for an explicit edge list; checked at C speed.
    return set(map(type, values)) <= {int}


def _compress(edges: Sequence[int]) -> list[int | list[int]]:
    """Run-length encode ``edges``: runs of two or more become ``[value, count]``."""
    if not edges:
        return []
    arr = np.asarray(edges, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(arr[1:] != arr[:-1]) + 1))
    counts = np.diff(np.append(starts, len(arr)))
    out: list[int | list[int]] = []
    for value, count in zip(arr[starts].tolist(), counts.tolist(), strict=True):
        out.append([value, count] if count > 1 else value)
    return out


def _expand_bare(step: int, length: int) -> tuple[int, ...]:
    return (step,) * -(-length // step)


@dataclass(frozen=True, slots=True, kw_only=True)
class RectilinearChunkGrid:
    """A rectilinear chunk grid.

    Parameters
    ----------
    chunk_shapes
        Per dimension, a bare ``int`` (a regular step repeated until it covers the array) or a
        ``tuple`` of explicit edge lengths (run-length pairs already expanded); all >= 1.

    Build from JSON with :meth:`from_dict`, from ``create_array``'s ``chunks`` with
    :meth:`from_chunks`.  Equality compares ``chunk_shapes`` (a bare ``4`` and an explicit
    ``(4, 4)`` are different grids: they grow differently on resize).

    Raises
    ------
    MetadataError
        For an edge length below 1 or past int64, or more than
        :data:`MAX_EDGES_PER_DIMENSION` edges in a dimension.

    Examples
    --------
    >>> from zarr3c.chunk_grids import RectilinearChunkGrid
    >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
    >>> grid.grid_shape((30, 8)), grid.chunk_sizes((30, 8))
    ((2, 2), ((10, 20), (4, 4)))
    """

    name: ClassVar[str] = "rectilinear"

    chunk_shapes: tuple[DimSpec, ...]
    # Cumulative offsets of each explicit dimension (None for a bare one), built once here.
    _offsets: tuple[np.ndarray | None, ...] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        specs: list[DimSpec] = []
        offsets: list[np.ndarray | None] = []
        for i, spec in enumerate(self.chunk_shapes):
            where = f"chunk_grid.configuration.chunk_shapes[{i}]"
            if isinstance(spec, _BOOL_TYPES):
                raise MetadataError(f"dimension {i}: edge length must be an integer, got {spec}",
                                    path=where)
            if isinstance(spec, _INT_TYPES):
                if not 1 <= spec <= _MAX_INT:
                    raise MetadataError(f"dimension {i}: edge length must be >= 1, got {spec}",
                                        path=where)
                specs.append(int(spec))
                offsets.append(None)
                continue
            edges = spec if type(spec) is tuple and _all_plain_ints(spec) else tuple(
                int(e) for e in spec)
            if len(edges) > MAX_EDGES_PER_DIMENSION:
                raise MetadataError(
                    f"dimension {i}: {len(edges)} chunk edges, more than zarr3c supports "
                    f"({MAX_EDGES_PER_DIMENSION})", path=where)
            if edges and min(edges) < 1:
                raise MetadataError(
                    f"dimension {i}: edge lengths must be >= 1, got {min(edges)}", path=where)
            if sum(edges) > _MAX_INT:
                raise MetadataError(
                    f"dimension {i}: the edge lengths sum to more than 2**63 - 1", path=where)
            specs.append(edges)
            offsets.append(edge_offsets(edges))
        object.__setattr__(self, "chunk_shapes", tuple(specs))
        object.__setattr__(self, "_offsets", tuple(offsets))

    # -- JSON -------------------------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        ndim: int,
        path: str = "chunk_grid",
        source: str | None = None,
    ) -> RectilinearChunkGrid:
        """Parse the whole ``chunk_grid`` object.

        Parameters
        ----------
        data
            ``{"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [...]}}``.
        ndim
            The array's rank; ``chunk_shapes`` must have as many entries.
        path, source
            Where the object came from, for error messages.

        Returns
        -------
        RectilinearChunkGrid
            The grid.

        Raises
        ------
        MetadataError
            On any malformed field (the message names the JSON path, and for an edge length
            the dimension and the entry): an edge length or run-length value/count that is
            not a positive integer (``true``, ``2.5``, ``0``, ``-1``), a run-length entry that
            is not exactly two integers, a ``chunk_shapes`` length other than ``ndim``, a
            missing or unknown ``kind``, an unknown configuration field.  Whether the edges
            cover the array is checked by :meth:`validate_shape` (the shape is not known here).

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> RectilinearChunkGrid.from_dict({"name": "rectilinear", "configuration": {
        ...     "kind": "inline", "chunk_shapes": [[10, 20, 5], [[4, 2]]]}}, ndim=2)
        RectilinearChunkGrid(chunk_shapes=((10, 20, 5), (4, 4)))
        """
        if not isinstance(data, Mapping):
            raise MetadataError(f"chunk grid must be an object, got {data!r}",
                                path=path, source=source)
        unknown = sorted(set(data) - {"name", "configuration"})
        if unknown:
            raise MetadataError(
                f"unknown field(s) {', '.join(map(repr, unknown))} in the rectilinear chunk grid",
                path=path, source=source)
        if data.get("name") != cls.name:
            raise MetadataError(f"expected chunk grid name {cls.name!r}, got {data.get('name')!r}",
                                path=f"{path}.name", source=source)
        cpath = f"{path}.configuration"
        config = data.get("configuration")
        if not isinstance(config, Mapping):
            raise MetadataError(
                'the rectilinear chunk grid needs a configuration object with "kind" and '
                '"chunk_shapes"', path=cpath, source=source)
        unknown = sorted(set(config) - {"kind", "chunk_shapes"})
        if unknown:
            raise MetadataError(
                f"unknown field(s) {', '.join(map(repr, unknown))} (only \"kind\" and "
                "\"chunk_shapes\" are defined)", path=cpath, source=source)
        if "kind" not in config:
            raise MetadataError('missing required field (the only kind defined is "inline")',
                                path=f"{cpath}.kind", source=source)
        if config["kind"] != "inline":
            raise MetadataError(f'unsupported kind {config["kind"]!r} (only "inline" is defined)',
                                path=f"{cpath}.kind", source=source)
        spath = f"{cpath}.chunk_shapes"
        if "chunk_shapes" not in config:
            raise MetadataError("missing required field", path=spath, source=source)
        raw = config["chunk_shapes"]
        if not isinstance(raw, list | tuple):
            raise MetadataError(f"must be a list with one entry per dimension, got {raw!r}",
                                path=spath, source=source)
        if len(raw) != ndim:
            raise MetadataError(
                f"chunk_shapes has {len(raw)} entries but the array has {ndim} dimensions",
                path=spath, source=source)
        specs = tuple(_parse_dim(value, i, f"{spath}[{i}]", source) for i, value in enumerate(raw))
        return cls(chunk_shapes=specs)

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``chunk_grid`` object, as :meth:`from_dict` reads it back.

        Bare integers stay bare; explicit edges are written with run-length pairs for runs of two
        or more.

        Returns
        -------
        dict
            ``{"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [...]}}``.

        Raises
        ------
        None
            Writing a grid cannot fail.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> RectilinearChunkGrid(chunk_shapes=((5, 5, 5, 2), 4)).to_dict()["configuration"]
        {'kind': 'inline', 'chunk_shapes': [[[5, 3], 2], 4]}
        """
        shapes: list[Any] = [
            spec if isinstance(spec, int) else _compress(spec) for spec in self.chunk_shapes
        ]
        return {"name": self.name, "configuration": {"kind": "inline", "chunk_shapes": shapes}}

    @classmethod
    def from_chunks(cls, chunks: Sequence[Any], shape: Sequence[int]) -> RectilinearChunkGrid:
        """The grid for ``create_array(..., chunks=...)``, in the most compact exact form.

        Parameters
        ----------
        chunks
            Per dimension an int (a regular step) or a sequence of edge lengths (which may
            overflow the dimension, even by whole chunks).
        shape
            The array shape.

        A sequence of equal edges whose last one covers the end (``[25, 25, 25, 25]`` for a
        length of 100, or ``[30, 30]`` for 45) becomes the bare integer: it expands to the
        same edges.

        Returns
        -------
        RectilinearChunkGrid
            The grid.

        Raises
        ------
        MetadataError
            Naming ``chunks[i]`` / ``chunks[i][j]``: a rank mismatch, an edge length that is not
            a positive integer, an empty sequence, or edges summing to less than the length.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> RectilinearChunkGrid.from_chunks([[25, 25, 25, 25], [10, 20]], (100, 30))
        RectilinearChunkGrid(chunk_shapes=(25, (10, 20)))
        """
        shape = tuple(int(n) for n in shape)
        if isinstance(chunks, str | bytes) or not isinstance(chunks, Sequence | np.ndarray):
            raise MetadataError(f"must be a sequence with one entry per dimension, got "
                                f"{chunks!r}", path="chunks")
        items = list(chunks)
        if len(items) != len(shape):
            raise MetadataError(
                f"has {len(items)} entries but the array has {len(shape)} dimensions "
                f"(shape {shape})", path="chunks")
        specs: list[DimSpec] = []
        for i, (item, length) in enumerate(zip(items, shape, strict=True)):
            if _is_int(item):
                specs.append(_positive(item, i, f"chunks[{i}]", None))
                continue
            if isinstance(item, str | bytes | Mapping) or not isinstance(
                item, Sequence | np.ndarray
            ):
                raise MetadataError(
                    f"dimension {i}: must be an int or a sequence of edge lengths, got {item!r}",
                    path=f"chunks[{i}]")
            edges = tuple(_positive(e, i, f"chunks[{i}][{j}]", None) for j, e in enumerate(item))
            if not edges:
                raise MetadataError(f"dimension {i}: needs at least one edge length",
                                    path=f"chunks[{i}]")
            total = sum(edges)
            if total < length:
                raise MetadataError(
                    f"dimension {i}: the edge lengths sum to {total}, less than the array "
                    f"length {length}", path=f"chunks[{i}]")
            step = edges[0]
            if length > 0 and all(e == step for e in edges) and edges == _expand_bare(step,
                                                                                      length):
                specs.append(step)
            else:
                specs.append(edges)
        return cls(chunk_shapes=tuple(specs))

    # -- geometry ---------------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """The grid's rank."""
        return len(self.chunk_shapes)

    @property
    def max_chunk_shape(self) -> tuple[int, ...]:
        """The longest edge along each dimension (over all edges, overflowing ones too)."""
        return tuple(
            spec if isinstance(spec, int) else max(spec, default=0) for spec in self.chunk_shapes
        )

    def _check_rank(self, array_shape: Sequence[int]) -> None:
        if len(array_shape) != len(self.chunk_shapes):
            raise MetadataError(
                f"array shape {tuple(array_shape)} has {len(array_shape)} dimensions but the "
                f"chunk grid has {len(self.chunk_shapes)}",
                path="chunk_grid",
            )

    def validate_shape(
        self, array_shape: Sequence[int], *, path: str = "chunk_grid", source: str | None = None
    ) -> None:
        """Check the grid fits an array of ``array_shape``: same rank, and every explicit
        dimension's edges sum to at least its length.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.
        path, source : str
            Named by errors.

        Raises
        ------
        MetadataError
            Naming ``<path>.configuration.chunk_shapes[i]`` and the dimension.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.validate_shape((40, 8))
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: chunk_grid.configuration.chunk_shapes[0]: dimension 0: ...
        """
        if len(array_shape) != len(self.chunk_shapes):
            raise MetadataError(
                f"chunk_shapes has {len(self.chunk_shapes)} entries but the array has "
                f"{len(array_shape)} dimensions",
                path=f"{path}.configuration.chunk_shapes", source=source)
        for i, (off, length) in enumerate(zip(self._offsets, array_shape, strict=True)):
            if off is not None and int(off[-1]) < length:
                raise MetadataError(
                    f"dimension {i}: the edge lengths sum to {int(off[-1])}, less than the "
                    f"array length {length}",
                    path=f"{path}.configuration.chunk_shapes[{i}]", source=source)

    def dimensions(
        self, array_shape: Sequence[int]
    ) -> tuple[RegularDimension | RectilinearDimension, ...]:
        """Per-dimension views of the grid over an array of ``array_shape``: a
        :class:`RegularDimension` for a bare integer, a :class:`RectilinearDimension` (sharing
        the precomputed offsets) for explicit edges.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of RegularDimension or RectilinearDimension
            One per dimension.

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.dimensions((30, 8))
        (RectilinearDimension(edges=(10, 20, 5), length=30), RegularDimension(size=4, length=8))
        """
        self.validate_shape(array_shape)
        dims: list[RegularDimension | RectilinearDimension] = []
        for spec, off, n in zip(self.chunk_shapes, self._offsets, array_shape, strict=True):
            if off is None:  # a bare integer
                dims.append(RegularDimension(cast(int, spec), int(n)))
            else:
                dims.append(RectilinearDimension(off, int(n)))
        return tuple(dims)

    def grid_shape(self, array_shape: Sequence[int]) -> tuple[int, ...]:
        """The number of chunks intersecting the array along each dimension.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of int
            Chunks per dimension (chunks wholly past the array end are not counted).

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.grid_shape((30, 8))
        (2, 2)
        """
        return tuple(d.nchunks for d in self.dimensions(array_shape))

    def nchunks(self, array_shape: Sequence[int]) -> int:
        """The total number of chunks intersecting an array of ``array_shape``.

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
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.nchunks((30, 8))
        4
        """
        return math.prod(self.grid_shape(array_shape))

    def chunk_shape_at(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The full shape of the chunk at grid coordinates ``coords`` (its edge lengths).

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates.

        Returns
        -------
        tuple of int
            Its edge length per dimension, even where it overhangs the array.

        Raises
        ------
        IndexError
            If an explicit dimension has no such chunk.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.chunk_shape_at((1, 1))
        (20, 4)
        """
        return tuple(
            spec if isinstance(spec, int) else spec[c]
            for spec, c in zip(self.chunk_shapes, coords, strict=True)
        )

    def chunk_origin(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The array coordinates of the first element of the chunk at ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's grid coordinates.

        Returns
        -------
        tuple of int
            Per dimension, the sum of the edges before the chunk.

        Raises
        ------
        IndexError
            If an explicit dimension has no such chunk.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.chunk_origin((1, 1))
        (10, 4)
        """
        return tuple(
            c * cast(int, spec) if off is None else int(off[c])
            for spec, off, c in zip(self.chunk_shapes, self._offsets, coords, strict=True)
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
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> list(grid.iter_chunk_coords((12, 8)))
        [(0, 0), (0, 1), (1, 0), (1, 1)]
        """
        return itertools.product(*(range(n) for n in self.grid_shape(array_shape)))

    def distinct_chunk_shapes(self, array_shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
        """Every full chunk shape among the chunks intersecting the array, once each: the
        product of the distinct edge lengths of each dimension (for codec validation).

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        iterator of tuple of int
            The shapes.

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> list(grid.distinct_chunk_shapes((30, 8)))
        [(10, 4), (20, 4)]
        """
        per_dim = []
        for spec, d in zip(self.chunk_shapes, self.dimensions(array_shape), strict=True):
            if isinstance(spec, int):
                per_dim.append([spec])
            else:
                per_dim.append(sorted(set(spec[: max(d.nchunks, 1)])) if spec else [0])
        return itertools.product(*per_dim)

    def edges(self, array_shape: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """Every edge length of each dimension: bare integers expanded to cover the array,
        explicit edges as declared (those past the array end included).

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of tuple of int
            The edges per dimension.

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.edges((30, 8))
        ((10, 20, 5), (4, 4))
        """
        self.validate_shape(array_shape)
        return tuple(
            _expand_bare(spec, int(n)) if isinstance(spec, int) else spec
            for spec, n in zip(self.chunk_shapes, array_shape, strict=True)
        )

    def array_chunks(self, array_shape: Sequence[int]) -> tuple[Sequence[int], ...]:
        """What ``Array.chunks`` shows for this grid: :meth:`chunk_sizes`.

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of sequences of int
            The chunk sizes per dimension, clipped to the array (as :meth:`chunk_sizes`).

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.array_chunks((30, 8))
        ((10, 20), (4, 4))
        """
        return self.chunk_sizes(array_shape)

    def chunk_sizes(self, array_shape: Sequence[int]) -> tuple[Sequence[int], ...]:
        """The edge lengths of the chunks intersecting the array, clipped to it: dask's
        ``chunks`` form (a 0-length dimension is ``(0,)``, as dask writes it).

        Parameters
        ----------
        array_shape : sequence of int
            The array's shape.

        Returns
        -------
        tuple of sequences of int
            The sizes per dimension; they sum to the array's length.  A tuple each, but
            for a bare-integer dimension of 2**20 chunks or more: a lazy
            :class:`~zarr3c.chunk_grids.chunk_sizes.RepeatedSizes`, equal to the tuple.

        Raises
        ------
        MetadataError
            As :meth:`validate_shape`: another rank, or explicit edges shorter than the array.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.chunk_sizes((28, 6))
        ((10, 18), (4, 2))
        >>> RectilinearChunkGrid(chunk_shapes=(1,)).chunk_sizes((2**40,))
        (RepeatedSizes(size=1, nchunks=1099511627776, last=1),)
        """
        out: list[Sequence[int]] = []
        for d in self.dimensions(array_shape):
            if d.nchunks == 0:
                out.append((0,))
                continue
            # Only the last chunk can overhang the array end.
            last = d.length - d.chunk_offset(d.nchunks - 1)
            if isinstance(d, RegularDimension):  # (lazy when long: chunk_sizes.py)
                out.append(repeated_sizes(d.size, d.nchunks, last))
                continue
            sizes = np.diff(d.offsets[: d.nchunks + 1]).tolist()
            sizes[-1] = last
            out.append(tuple(sizes))
        return tuple(out)

    def resized(self, new_shape: Sequence[int]) -> RectilinearChunkGrid:
        """The grid for the array resized to ``new_shape``.

        A bare-integer dimension is unchanged (it covers any length).  An explicit one that
        the new length outgrows gets one more edge covering exactly the new extent; a shrink
        keeps every edge (as zarr-python does).

        Parameters
        ----------
        new_shape : sequence of int
            The array's new shape.

        Returns
        -------
        RectilinearChunkGrid
            The new grid, or ``self`` when nothing changes.

        Raises
        ------
        MetadataError
            If ``new_shape`` has another rank than the grid.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.resized((40, 8))
        RectilinearChunkGrid(chunk_shapes=((10, 20, 5, 5), 4))
        """
        self._check_rank(new_shape)
        specs: list[DimSpec] = []
        changed = False
        for spec, off, n in zip(self.chunk_shapes, self._offsets, new_shape, strict=True):
            if off is None:
                specs.append(spec)
                continue
            total = int(off[-1])
            if n > total:
                specs.append((*cast(tuple[int, ...], spec), int(n) - total))
                changed = True
            else:
                specs.append(spec)
        return RectilinearChunkGrid(chunk_shapes=tuple(specs)) if changed else self

    def chunk_index(self, dim: int, index: int) -> tuple[int, int]:
        """The chunk along dimension ``dim`` holding array index ``index`` (>= 0), and the index
        within it: a scalar lookup in Python (bulk lookups go through
        :meth:`RectilinearDimension.locate`).

        Parameters
        ----------
        dim : int
            The dimension.
        index : int
            An array index along it (>= 0).

        Returns
        -------
        tuple of int
            ``(chunk index, index within the chunk)``.

        Raises
        ------
        IndexError
            If ``index`` lies outside an explicit dimension's edges.

        Examples
        --------
        >>> from zarr3c.chunk_grids import RectilinearChunkGrid
        >>> grid = RectilinearChunkGrid(chunk_shapes=((10, 20, 5), 4))
        >>> grid.chunk_index(0, 12), grid.chunk_index(1, 5)
        ((1, 2), (1, 1))
        """
        spec, off = self.chunk_shapes[dim], self._offsets[dim]
        if isinstance(spec, int):
            return divmod(index, spec)
        assert off is not None
        if not 0 <= index < int(off[-1]):
            raise IndexError(f"index {index} is outside the edges of dimension {dim}")
        # The first C[i] strictly greater than index: chunk i covers [C[i-1], C[i]).
        c = int(off.searchsorted(index, "right")) - 1
        return c, index - int(off[c])


def _positive(value: Any, dim: int, where: str, source: str | None) -> int:
    if not _is_int(value):
        kind = "a boolean" if isinstance(value, _BOOL_TYPES) else repr(value)
        raise MetadataError(
            f"dimension {dim}: edge length must be a positive integer, got {kind}",
            path=where, source=source)
    if not 1 <= value <= _MAX_INT:
        raise MetadataError(
            f"dimension {dim}: edge length must be a positive integer, got {value}",
            path=where, source=source)
    return int(value)


def _parse_dim(value: Any, dim: int, where: str, source: str | None) -> DimSpec:
    """One ``chunk_shapes`` entry: a bare int, or a list of ints and ``[value, count]`` pairs
    (expanded)."""
    if isinstance(value, _INT_TYPES):  # bools included: _positive names them
        return _positive(value, dim, where, source)
    if not isinstance(value, list | tuple):
        raise MetadataError(
            f"dimension {dim}: must be a positive integer or a list of edge lengths and "
            f"[value, count] pairs, got {value!r}", path=where, source=source)
    if _all_plain_ints(value):  # no run-length pairs: the common, large case
        edges = tuple(value)
        if edges and not 1 <= min(edges) <= max(edges) <= _MAX_INT:
            for j, e in enumerate(edges):
                _positive(e, dim, f"{where}[{j}]", source)
        if len(edges) > MAX_EDGES_PER_DIMENSION:
            raise MetadataError(
                f"dimension {dim}: {len(edges)} chunk edges, more than zarr3c supports "
                f"({MAX_EDGES_PER_DIMENSION})", path=where, source=source)
        if sum(edges) > _MAX_INT:
            raise MetadataError(f"dimension {dim}: the edge lengths sum to more than 2**63 - 1",
                                path=where, source=source)
        return edges
    # Count first so that a huge run-length count is refused before anything is expanded.
    total = 0
    for j, item in enumerate(value):
        if isinstance(item, list | tuple):
            if len(item) != 2:
                raise MetadataError(
                    f"dimension {dim}: a run-length entry must be exactly [value, count], "
                    f"got {item!r}", path=f"{where}[{j}]", source=source)
            _positive(item[0], dim, f"{where}[{j}][0]", source)
            count = item[1]
            if not _is_int(count) or count < 1:
                kind = "a boolean" if isinstance(count, _BOOL_TYPES) else repr(count)
                raise MetadataError(
                    f"dimension {dim}: a run-length count must be a positive integer, "
                    f"got {kind}", path=f"{where}[{j}][1]", source=source)
            total += int(count)
        else:
            _positive(item, dim, f"{where}[{j}]", source)
            total += 1
        if total > MAX_EDGES_PER_DIMENSION:
            raise MetadataError(
                f"dimension {dim}: expands to more than {MAX_EDGES_PER_DIMENSION} chunk edges, "
                "more than zarr3c supports", path=where, source=source)
    expanded: list[int] = []
    for item in value:
        if isinstance(item, list | tuple):
            expanded.extend([int(item[0])] * int(item[1]))
        else:
            expanded.append(int(item))
    if sum(expanded) > _MAX_INT:
        raise MetadataError(f"dimension {dim}: the edge lengths sum to more than 2**63 - 1",
                            path=where, source=source)
    return tuple(expanded)
