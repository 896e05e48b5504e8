"""What a user sees when zarr3c is imported from a source tree whose kernels were never built."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import zarr3c


def test_uncompiled_source_tree_says_what_to_run(tmp_path: Path) -> None:
    # A copy of the package's Python and Cython sources, without the compiled kernels: what
    # `python -m zarr3c` finds first when an unbuilt checkout's package is on sys.path.
    source = Path(zarr3c.__file__).parent
    shutil.copytree(source, tmp_path / "zarr3c",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-c", "import zarr3c"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: zarr3c's compiled kernels (")
    assert "copy" in last.split(")")[0]
    assert str(tmp_path / "zarr3c" / "_kernels") in last
    assert "pip install -e ." in last
