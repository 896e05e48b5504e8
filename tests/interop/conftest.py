"""Fixtures shared by the interop tests (zarr3c <-> zarr-python, zarr3c <-> tensorstore).

Test modules here cannot import each other (pytest's importlib mode, no packages), so the shared
helpers are fixtures returning functions:

- ``make_data(dtype, shape, seed=0)``: deterministic test data covering each type's edge values
  (integer extremes; NaN, +/-Infinity, -0.0 and subnormals for floats; complex NaN parts);
- ``assert_same(actual, expected)``: dtype, shape and values equal, NaN equal to NaN;
- ``chunk_files(root)``: the stored keys below an array folder, ``zarr.json`` excluded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest


def _make_data(dtype: Any, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        specials = np.array([info.min, info.max, 0, 1], dtype=dt)
        flat[: min(n, 4)] = specials[: min(n, 4)]
    elif dt.kind == "f":
        flat = (rng.standard_normal(n) * 100).astype(dt)
        specials = np.array(
            [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).tiny / 2, np.finfo(dt).max], dtype=dt
        )
        k = min(n - 1, len(specials))
        flat[1 : 1 + k] = specials[:k]  # element 0 stays ordinary
    elif dt.kind == "c":
        comp = np.dtype(f"f{dt.itemsize // 2}")
        flat = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        if n > 3:
            flat[1] = complex(np.nan, 1.0)
            flat[2] = complex(1.0, np.inf)
            flat[3] = complex(-0.0, np.finfo(comp).max)
    elif dt.kind == "V":
        flat = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)
    else:
        raise ValueError(f"no test data for dtype {dt}")
    return flat.reshape(shape)


def _assert_same(actual: Any, expected: np.ndarray) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
        f"dtype {actual.dtype}, expected {expected.dtype}"
    )
    if expected.dtype.kind == "V":
        assert actual.tobytes() == expected.tobytes()
    else:
        # assert_array_equal treats NaN (also in complex parts) as equal to NaN
        np.testing.assert_array_equal(actual, expected)
        if expected.dtype.kind == "f":
            # -0.0 == 0.0 for numpy; the sign bit must survive too
            np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))


def _chunk_files(root: Path) -> set[str]:
    root = Path(root)
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name != "zarr.json"
    }


@pytest.fixture
def make_data() -> Callable[..., np.ndarray]:
    return _make_data


@pytest.fixture
def assert_same() -> Callable[[Any, np.ndarray], None]:
    return _assert_same


@pytest.fixture
def chunk_files() -> Callable[[Path], set[str]]:
    return _chunk_files
