"""Zip interop with zarr-python 3: each library reads the zip file the other wrote.

One hierarchy (a group with attributes, a regular array with ragged edge chunks, a nested
group holding a sharded array) is written by one library with its own ``ZipStore``, then
read by the other; numpy is the oracle.  Both ways rewrite chunks and metadata after the first
write, so the zip holds replaced entries (zarr-python keeps duplicate entries; zarr3c leaves
them out of the central directory), and zarr3c's zip erases a chunk that became all fill value.
"""

from __future__ import annotations

import asyncio
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")

import zarr3c

COMPRESSIONS = [
    pytest.param(zipfile.ZIP_STORED, id="stored"),
    pytest.param(zipfile.ZIP_DEFLATED, id="deflated"),
]


def expected_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    x = rng.integers(-1000, 1000, (45, 33), dtype="i4")
    y = rng.standard_normal((40, 48)).astype("f8")
    # the rewrites both writers make after the first write
    x[0:10, 0:10] = 7
    y[5:21, 30:48] = -2.5
    x[40:45, :] = 0  # all fill value: zarr3c erases those chunks' keys
    return {"x": x, "sub/deeper/y": y}


def write_zarr_python(path: Path, compression: int) -> None:
    data = expected_data()
    rng = np.random.default_rng(42)
    x0 = rng.integers(-1000, 1000, (45, 33), dtype="i4")
    y0 = rng.standard_normal((40, 48)).astype("f8")
    store = zarr.storage.ZipStore(path, mode="w", compression=compression)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name" on rewrites
        root = zarr.create_group(store=store, attributes={"title": "from zarr-python"})
        # zarr-python's ZipStore cannot delete: store all-fill-value chunks instead
        config = {"write_empty_chunks": True}
        x = root.create_array(
            "x", shape=x0.shape, dtype=x0.dtype, chunks=(10, 10), fill_value=0, config=config
        )
        x[:] = x0
        sub = root.create_group("sub").create_group("deeper", attributes={"level": 2})
        y = sub.create_array(
            "y",
            shape=y0.shape,
            dtype=y0.dtype,
            chunks=(8, 8),
            shards=(16, 24),
            fill_value=0.0,
            config=config,
        )
        y[:] = y0
        x[0:10, 0:10] = 7
        x[40:45, :] = 0
        y[5:21, 30:48] = -2.5
        root.attrs["more"] = [1, 2]  # rewrites the root zarr.json
    store.close()
    np.testing.assert_array_equal(x0[10:40], data["x"][10:40])  # the oracle agrees


def write_zarr3c(path: Path, compression: int) -> None:
    rng = np.random.default_rng(42)
    x0 = rng.integers(-1000, 1000, (45, 33), dtype="i4")
    y0 = rng.standard_normal((40, 48)).astype("f8")
    with zarr3c.ZipStore(path, mode="w", compression=compression) as store:
        root = zarr3c.create_group(store, attributes={"title": "from zarr3c"})
        x = root.create_array("x", shape=x0.shape, dtype=x0.dtype, chunks=(10, 10), fill_value=0)
        x[:] = x0
        sub = root.create_group("sub").create_group("deeper", attributes={"level": 2})
        y = sub.create_array(
            "y", shape=y0.shape, dtype=y0.dtype, chunks=(8, 8), shards=(16, 24), fill_value=0.0
        )
        y[:] = y0
        x[0:10, 0:10] = 7
        x[40:45, :] = 0
        y[5:21, 30:48] = -2.5
        root.attrs["more"] = [1, 2]


def read_zarr_python(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        root = zarr.open_group(store=store, mode="r")
        attrs = {"root": dict(root.attrs), "deeper": dict(root["sub/deeper"].attrs)}
        y = root["sub/deeper/y"]
        assert y.shards == (16, 24)
        arrays = {"x": root["x"][:], "sub/deeper/y": y[:]}
        return attrs, arrays
    finally:
        store.close()


def read_zarr3c(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    with zarr3c.ZipStore(path) as store:
        root = zarr3c.open_group(store)
        attrs = {"root": dict(root.attrs), "deeper": dict(root["sub/deeper"].attrs)}
        y = root["sub/deeper/y"]
        arrays = {"x": root["x"][:], "sub/deeper/y": y[:]}
        # partial reads through the shard index, from the zip
        np.testing.assert_array_equal(y[3:30, 17:41], expected_data()["sub/deeper/y"][3:30, 17:41])
        return attrs, arrays


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize(
    ("writer", "reader", "title"),
    [
        pytest.param(write_zarr_python, read_zarr3c, "from zarr-python", id="zarr-python->zarr3c"),
        pytest.param(write_zarr3c, read_zarr_python, "from zarr3c", id="zarr3c->zarr-python"),
    ],
)
def test_hierarchy_round_trip(
    tmp_path: Path,
    writer: Callable[[Path, int], None],
    reader: Callable[[Path], tuple[dict[str, Any], dict[str, np.ndarray]]],
    title: str,
    compression: int,
) -> None:
    path = tmp_path / "hierarchy.zip"
    writer(path, compression)
    attrs, arrays = reader(path)
    assert attrs == {"root": {"title": title, "more": [1, 2]}, "deeper": {"level": 2}}
    expected = expected_data()
    assert arrays.keys() == expected.keys()
    for name, value in expected.items():
        assert arrays[name].dtype == value.dtype
        np.testing.assert_array_equal(arrays[name], value)
    with zipfile.ZipFile(path) as zf:
        assert {i.compress_type for i in zf.infolist()} == {compression}


def test_zarr3c_zip_lists_each_key_once_and_drops_erased_chunks(tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    write_zarr3c(path, zipfile.ZIP_STORED)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    assert len(names) == len(set(names))
    assert "x/c/4/0" not in names  # erased: all fill value after the rewrite

    async def zarr_python_keys() -> list[str]:
        store = await zarr.storage.ZipStore.open(path, mode="r")
        try:
            return [k async for k in store.list()]
        finally:
            store.close()

    assert sorted(asyncio.run(zarr_python_keys())) == sorted(names)


def test_zarr_python_duplicates_read_as_newest(tmp_path: Path) -> None:
    path = tmp_path / "dup.zip"
    write_zarr_python(path, zipfile.ZIP_STORED)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    assert len(names) > len(set(names))  # zarr-python kept the replaced entries
    with zarr3c.ZipStore(path) as store:
        listed = list(store.list())
        assert sorted(listed) == sorted(set(names))
        assert b"more" in store.get("zarr.json")  # type: ignore[operator]


def test_zarr3c_appends_to_a_zarr_python_zip(tmp_path: Path) -> None:
    path = tmp_path / "both.zip"
    write_zarr_python(path, zipfile.ZIP_STORED)
    extra = np.arange(12, dtype="u2").reshape(3, 4)
    with zarr3c.ZipStore(path, mode="a") as store:
        root = zarr3c.open_group(store, mode="r+")
        root.create_array("added", shape=extra.shape, dtype=extra.dtype, chunks=(2, 2))[:] = extra
    attrs, arrays = read_zarr_python(path)
    assert attrs["root"]["title"] == "from zarr-python"
    np.testing.assert_array_equal(arrays["x"], expected_data()["x"])
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        np.testing.assert_array_equal(
            zarr.open_array(store=store, path="added", mode="r")[:], extra
        )
    finally:
        store.close()
