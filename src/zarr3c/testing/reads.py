"""Test helpers for reads: the general path, the oracle the short paths are checked against."""

from __future__ import annotations

from zarr3c.array.read.general import read_general

__all__ = ["read_general"]
