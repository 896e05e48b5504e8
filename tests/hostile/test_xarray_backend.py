"""Hostile stores opened through xarray's engine="zarr3c" (issue 32, point 5): a huge declared
array opens lazily and a selection reads one chunk; oversized ``_ARRAY_DIMENSIONS`` and
``_FillValue`` attributes are refused with zarr3c's errors, naming the variable, without
decoding or echoing what they claim.

The probes run under the 1 GiB address-space cap of ``probe`` and bound the peak memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("xarray")

#: The most a probe may hold at its peak (the interpreter, numpy, pandas, xarray, zarr3c).
PEAK_MIB = 300

_SETUP = """
import json
import xarray as xr
import zarr3c
from zarr3c.xarray import Zarr3cBackendEntrypoint

def v3_array(name, shape, chunks, dtype="float32", **fields):
    doc = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], **fields}
    return name + "/zarr.json", json.dumps(doc).encode()

store = zarr3c.MemoryStore()
store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
"""


def test_huge_declared_array_opens_lazily(probe: Callable[..., Any]) -> None:
    outcome = probe(_SETUP + """
store.set(*v3_array("big", [2**62], [2**20], dimension_names=["x"],
                    attributes={"_FillValue": "AAAAAAAA+H8="}))
ds = xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)
point = ds["big"].isel(x=2**61).values
result = (ds.sizes["x"], float(point), ds["big"].encoding["chunks"])
""")
    assert outcome.error is None, outcome.traceback
    assert outcome.result == f"({2**62}, 0.0, ({2**20},))"
    assert outcome.peak_mib < PEAK_MIB


def test_oversized_dimension_names_refused(probe: Callable[..., Any]) -> None:
    outcome = probe(_SETUP + """
store = zarr3c.MemoryStore()
zarr3c.create_group(store, zarr_format=2)
store.set("a/.zarray", json.dumps({"zarr_format": 2, "shape": [3], "chunks": [3],
    "dtype": "<f4", "compressor": None, "fill_value": None, "order": "C",
    "filters": None}).encode())
store.set("a/.zattrs", json.dumps({"_ARRAY_DIMENSIONS": ["d"] * 5_000_000}).encode())
xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)
""")
    assert outcome.error == "MissingDimensionsError" and outcome.zarr3c_error
    assert "variable 'a'" in outcome.message and len(outcome.message) < 500
    assert outcome.peak_mib < PEAK_MIB


@pytest.mark.parametrize("dtype", ["float64", "|S4"])
def test_oversized_fill_value_refused(probe: Callable[..., Any], dtype: str) -> None:
    data_type = "float64" if dtype == "float64" else {
        "name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}
    fill = 0 if dtype == "float64" else ""
    outcome = probe(_SETUP + f"""
store.set(*v3_array("f", [2], [2], dtype={data_type!r}, dimension_names=["x"],
                    fill_value={fill!r}, attributes={{"_FillValue": "QUFB" * 5_000_000}}))
xr.open_dataset(store, engine=Zarr3cBackendEntrypoint)
""")
    assert outcome.error == "MetadataError" and outcome.zarr3c_error, outcome.traceback
    assert "variable 'f'" in outcome.message and len(outcome.message) < 500
    assert outcome.peak_mib < PEAK_MIB
