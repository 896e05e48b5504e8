"""Shared fixtures: every array/group test runs on a MemoryStore and on a LocalStore."""

from __future__ import annotations

from pathlib import Path

import pytest

import zarr3c

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"


@pytest.fixture(params=["memory", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> zarr3c.Store:
    if request.param == "memory":
        return zarr3c.MemoryStore()
    return zarr3c.LocalStore(tmp_path / "data.zarr")
