"""Chunk grids: how an array's index space is cut into chunks.

The built-in ``regular`` and ``rectilinear`` grids live in :mod:`zarr3c.chunk_grids.regular` and
:mod:`zarr3c.chunk_grids.rectilinear`; every grid, built-in or third-party, is found by name
through :data:`zarr3c.registry.chunk_grids`.  A grid class provides
``from_dict(data, *, ndim, path, source)`` taking the whole ``chunk_grid`` object::

    {"name": "regular", "configuration": {"chunk_shape": [10, 10]}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarr3c import registry
from zarr3c.chunk_grids.rectilinear import RectilinearChunkGrid, RectilinearDimension
from zarr3c.chunk_grids.regular import RegularChunkGrid, RegularDimension
from zarr3c.errors import MetadataError

__all__ = [
    "RectilinearChunkGrid",
    "RectilinearDimension",
    "RegularChunkGrid",
    "RegularDimension",
    "parse_chunk_grid",
]


def parse_chunk_grid(
    data: Any, *, ndim: int, path: str = "chunk_grid", source: str | None = None
) -> Any:
    """Parse a ``chunk_grid`` JSON value into a chunk grid object.

    Parameters
    ----------
    data
        The ``chunk_grid`` object (``{"name": ..., "configuration": {...}}``); a bare name
        string is passed on as ``{"name": <string>}`` (the spec's short-hand).
    ndim
        The array's rank.
    path, source
        Where the value came from, for error messages.

    Returns
    -------
    RegularChunkGrid or RectilinearChunkGrid
        The grid registered under the name, parsed by its ``from_dict``.

    Raises
    ------
    MetadataError
        If ``data`` is not an object with a string ``name``, or the grid refuses it.
    UnknownExtensionError
        If no grid is registered under the name.

    Examples
    --------
    >>> from zarr3c.chunk_grids import parse_chunk_grid
    >>> parse_chunk_grid({"name": "regular", "configuration": {"chunk_shape": [4]}}, ndim=1)
    RegularChunkGrid(chunk_shape=(4,))
    >>> parse_chunk_grid({"name": "hexagonal"}, ndim=1)
    Traceback (most recent call last):
    ...
    zarr3c.errors.UnknownExtensionError: chunk_grid.name: unknown chunk grid 'hexagonal' ...
    """
    if isinstance(data, str):
        data = {"name": data}
    if not isinstance(data, Mapping):
        raise MetadataError(
            f"chunk grid must be an object with \"name\" and \"configuration\", got {data!r}",
            path=path,
            source=source,
        )
    name = data.get("name")
    if not isinstance(name, str):
        raise MetadataError(
            f"chunk grid \"name\" must be a string, got {name!r}",
            path=f"{path}.name",
            source=source,
        )
    cls = registry.chunk_grids.get(name, path=f"{path}.name", source=source)
    return cls.from_dict(data, ndim=ndim, path=path, source=source)
