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


@pytest.fixture
def python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads take the Python path, never the native pipeline (for tests of that path's own
    steps)."""
    from zarr3c.array.read import native

    monkeypatch.setattr(native, "enabled", False)


@pytest.fixture(params=["native", "python"])
def read_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test on both read paths: the native pipeline (where the array's chain has one)
    and the Python path, which must give the same results and report the same errors."""
    from zarr3c.array.read import native

    monkeypatch.setattr(native, "enabled", request.param == "native")
    return str(request.param)
