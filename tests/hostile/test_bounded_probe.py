"""The probe runner itself: it reports errors, results and memory, and caps allocation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def test_a_probe_reports_its_result_and_peak_memory(probe: Callable[..., Any]) -> None:
    outcome = probe("result = 6 * 7")
    assert outcome.error is None and outcome.result == "42"
    assert 0 < outcome.peak_mib < 1024


def test_an_allocation_past_the_cap_fails_inside_the_probe(probe: Callable[..., Any]) -> None:
    outcome = probe("import numpy as np\nresult = np.ones(1 << 31, np.uint8)")
    assert outcome.error is not None and "MemoryError" in outcome.error
    assert not outcome.zarr3c_error


def test_a_zarr3c_error_is_recognised(probe: Callable[..., Any]) -> None:
    outcome = probe("import zarr3c\nzarr3c.open_array(zarr3c.MemoryStore())")
    assert outcome.zarr3c_error, outcome
