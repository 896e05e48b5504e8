"""The command line: info and tree on real hierarchies, errors as exit codes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import zarr3c
from zarr3c.__main__ import main


@pytest.fixture()
def hierarchy(tmp_path):
    root = tmp_path / "h.zarr"
    g = zarr3c.create_group(root, attributes={"title": "demo"})
    a = g.create_array("sub/arr", shape=(6, 4), dtype="int16", chunks=(3, 4))
    a[:3] = np.arange(12).reshape(3, 4)
    return root


def test_info_array(hierarchy, capsys) -> None:
    assert main(["info", str(hierarchy / "sub" / "arr")]) == 0
    out = capsys.readouterr().out
    assert "Shape: (6, 4)" in out and "int16" in out and "Chunks initialized: 1/2" in out


def test_info_group_and_tree(hierarchy, capsys) -> None:
    assert main(["info", str(hierarchy)]) == 0
    assert "Type: Group" in capsys.readouterr().out
    assert main(["tree", str(hierarchy)]) == 0
    out = capsys.readouterr().out
    assert "sub" in out and "arr (6, 4) int16" in out


def test_missing_path_is_an_error(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "zarr3c", "info", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and "Traceback" not in proc.stderr
