"""Test helpers for reads: the general path, the oracle the short paths are checked against."""

from __future__ import annotations

from typing import Any

from zarr3c.array import Array
from zarr3c.indexing import parse_basic_selection


def read_general(a: Array, key: Any) -> Any:
    """``a[key]`` for a basic selection, through the general path only (the selection
    parsed, planned per chunk and read by ``Array._read``), never the short paths."""
    sel = parse_basic_selection(key, a.shape)
    return a._basic_result(key, sel, a._read(sel))
