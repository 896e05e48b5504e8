"""The README's Python examples run as written: each block on its own, and again.

Every ``python`` block is run in a fresh namespace in an empty directory (a block may not
lean on an earlier one's imports or files), then a second time in the same directory, as a
reader pasting it twice would (so it must write with ``overwrite=True``).  Blocks marked
``py`` instead (the remote-store example, which needs a bucket) are shown, not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_standalone_twice(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = BLOCKS[index]
    if re.search(r"^import dask", block, re.M):
        pytest.importorskip("dask.array")
    monkeypatch.chdir(tmp_path)  # the examples write relative paths
    code = compile(block, f"{README}:block{index}", "exec")
    for _ in range(2):
        exec(code, {"__name__": "__readme__"})  # noqa: S102 - our own README
    if index == 0:
        assert (tmp_path / "data" / "example.zarr" / "zarr.json").exists()
