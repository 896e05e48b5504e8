"""Consolidated metadata interop with zarr-python 3, both ways, on a LocalStore folder.

zarr-python consolidates and zarr3c opens from the consolidated document (reading nothing
else but chunks) and reads equal data; zarr3c consolidates and zarr-python's
``open_consolidated`` / ``open_group(use_consolidated=True)`` read it equal, and the two
libraries write the same consolidated document for the same hierarchy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (pip install zarr)")

import zarr3c

# zarr-python warns that consolidated metadata is not in the v3 spec: that is what is tested.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _layout(make_data: Any) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
    """path -> (data, create_array keywords both libraries take)."""
    return {
        "t": (make_data("float32", (6, 7)), {"chunks": (4, 3), "fill_value": np.nan}),
        "grp/i": (make_data("int16", (10,)), {"chunks": (3,), "attributes": {"units": "K"}}),
        "grp/sub/s": (make_data("uint8", (8, 8)), {"chunks": (2, 2), "shards": (4, 8)}),
        "grp/sub/c": (make_data("complex64", (5,), seed=1),
                      {"chunks": (5,), "compressors": [{"name": "gzip",
                                                        "configuration": {"level": 1}}]}),
    }


def _write(lib: Any, root: Path, layout: dict[str, Any]) -> None:
    lib.create_group(str(root), attributes={"title": "both ways"})
    lib.open_group(str(root), mode="r+").create_group("grp/empty", attributes={"e": 1})
    for path, (data, kwargs) in layout.items():
        a = lib.create_array(str(root), name=path, shape=data.shape, dtype=data.dtype, **kwargs)
        a[...] = data


def _check_zarr3c(g: zarr3c.Group, layout: dict[str, Any], assert_same: Any) -> None:
    assert g.attrs["title"] == "both ways"
    for path, (data, kwargs) in layout.items():
        a = g[path]
        assert a.attrs.asdict() == kwargs.get("attributes", {})
        assert_same(a[...], data)
    assert g["grp/empty"].attrs["e"] == 1 and g["grp/empty"].keys() == []
    # depth first, as zarr3c lists a hierarchy without consolidated metadata
    assert [n for n, _ in g.members(max_depth=None)] == [
        "grp", "grp/empty", "grp/i", "grp/sub", "grp/sub/c", "grp/sub/s", "t"]


def test_zarr_python_consolidates_zarr3c_reads(tmp_path: Path, make_data: Any,
                                               assert_same: Any) -> None:
    root = tmp_path / "h.zarr"
    layout = _layout(make_data)
    _write(zarr, root, layout)
    zarr.consolidate_metadata(str(root))
    # the only metadata zarr3c reads is the root document
    reads: list[str] = []

    class Watching(zarr3c.LocalStore):
        def get(self, key: str) -> Any:
            reads.append(key)
            return super().get(key)

        def list_dir(self, prefix: str) -> Any:
            raise AssertionError(f"listed {prefix!r}")

    g = zarr3c.open_consolidated(Watching(root, read_only=True))
    assert g.uses_consolidated_metadata
    _check_zarr3c(g, layout, assert_same)
    assert [k for k in reads if k.endswith("zarr.json")] == ["zarr.json"]
    g2 = zarr3c.open_group(root, mode="r", use_consolidated=True)
    _check_zarr3c(g2, layout, assert_same)


def test_zarr3c_consolidates_zarr_python_reads(tmp_path: Path, make_data: Any,
                                               assert_same: Any) -> None:
    root = tmp_path / "h.zarr"
    layout = _layout(make_data)
    _write(zarr3c, root, layout)
    zarr3c.consolidate_metadata(root)
    for g in (zarr.open_consolidated(str(root), mode="r"),
              zarr.open_group(str(root), mode="r", use_consolidated=True)):
        assert g.metadata.consolidated_metadata is not None
        assert g.attrs["title"] == "both ways"
        for path, (data, kwargs) in layout.items():
            assert dict(g[path].attrs) == kwargs.get("attributes", {})
            assert_same(g[path][...], data)
        assert sorted(k for k, _ in g.members(max_depth=None)) == sorted(
            ["grp", "t", "grp/empty", "grp/i", "grp/sub", "grp/sub/c", "grp/sub/s"])


def test_both_write_the_same_consolidated_document(tmp_path: Path, make_data: Any) -> None:
    layout = _layout(make_data)
    docs = []
    for lib, name in ((zarr, "zp.zarr"), (zarr3c, "z3.zarr")):
        root = tmp_path / name
        _write(zarr3c, root, layout)  # same node documents; only consolidation differs
        lib.consolidate_metadata(str(root))
        docs.append(json.loads((root / "zarr.json").read_bytes()))
    ours, theirs = docs[1], docs[0]
    assert list(ours["consolidated_metadata"]["metadata"]) == list(
        theirs["consolidated_metadata"]["metadata"])
    assert ours == theirs


def test_zarr3c_reads_what_zarr_python_left_after_deleting(tmp_path: Path, make_data: Any,
                                                            assert_same: Any) -> None:
    """zarr-python removes a deleted member from the consolidated document, as zarr3c does."""
    root = tmp_path / "h.zarr"
    layout = _layout(make_data)
    _write(zarr, root, layout)
    zarr.consolidate_metadata(str(root))
    zg = zarr.open_group(str(root), mode="r+")
    del zg["t"]
    g = zarr3c.open_consolidated(root)
    assert "t" not in g and "grp/i" in g
    assert_same(g["grp/i"][...], layout["grp/i"][0])
    # and the other way
    g = zarr3c.open_consolidated(root, mode="r+")
    del g["grp"]["i"]
    assert "i" not in zarr.open_consolidated(str(root), mode="r")["grp"]
