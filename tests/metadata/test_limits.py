"""Arrays zarr3c could create but not read are refused when created or opened (issue 35,
point 5): more than 64 dimensions (numpy's limit, and the kernels'), and a sharding
``chunk_shape`` of another rank than the shard's, in every layout that can hold them."""

from __future__ import annotations

import json

import pytest

import zarr3c
from zarr3c.errors import MetadataError

LE = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_65_dimensions_are_refused_at_creation(zarr_format: int) -> None:
    with pytest.raises(MetadataError, match="65 dimensions, at most 64"):
        zarr3c.create_array("memory://", shape=(1,) * 65, dtype="u1", zarr_format=zarr_format)
    a = zarr3c.create_array("memory://", shape=(1,) * 64, dtype="u1", zarr_format=zarr_format)
    assert a[...].shape == (1,) * 64


def test_65_dimensions_are_refused_at_open() -> None:
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, shape=(1,) * 3, dtype="u1")
    doc = json.loads(store.get("zarr.json"))
    doc["shape"] = [1] * 65
    doc["chunk_grid"]["configuration"]["chunk_shape"] = [1] * 65
    store.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(MetadataError, match="zarr.json: shape: has 65 dimensions"):
        zarr3c.open_array(store)


def test_a_sharding_chunk_shape_of_another_rank() -> None:
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [LE], "index_codecs": [LE]}}
    with pytest.raises(MetadataError, match=r"chunk_shape: has 1 dimensions but the shard"):
        zarr3c.create_array("memory://", shape=(8, 8), chunks=(4, 4), dtype="u1",
                            codecs=[sharding])
