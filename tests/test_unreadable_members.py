"""One member whose metadata cannot be read never makes listing its group fail: ``members()``
and ``tree()`` list it with what is wrong (an :class:`~zarr3c.UnreadableNode`), ``arrays()``
and ``groups()`` leave it out, opening it raises the error naming its key, and the CLI shows
it; a copy refuses before writing anything (issue 31, point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import zarr3c
from zarr3c.__main__ import main
from zarr3c.errors import MetadataError, UnknownExtensionError

BAD_DOCUMENTS = {
    "not JSON": b"{",
    "missing fields": json.dumps({"zarr_format": 3, "node_type": "array"}).encode(),
    "unknown data type": json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "no_such_type",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]}).encode(),
    "unknown codec": json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}, {"name": "no_such_codec"}]}).encode(),
}


def _group(tmp_path: Path, document: bytes) -> zarr3c.Group:
    g = zarr3c.create_group(str(tmp_path))
    g.create_array("a", shape=(2,), dtype="int8")
    g.create_group("z").create_array("inner", shape=(3,), dtype="uint8")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "zarr.json").write_bytes(document)
    return zarr3c.open_group(str(tmp_path))


@pytest.mark.parametrize("case", BAD_DOCUMENTS)
def test_members_list_an_unreadable_member_with_its_error(tmp_path: Path, case: str) -> None:
    g = _group(tmp_path, BAD_DOCUMENTS[case])
    members = dict(g.members(max_depth=None))
    assert sorted(members) == ["a", "m", "z", "z/inner"]
    bad = members["m"]
    assert isinstance(bad, zarr3c.UnreadableNode)
    assert isinstance(bad.error, MetadataError)
    assert "m/zarr.json" in str(bad.error)
    assert bad.name == "/m" and bad.basename == "m" and "m/zarr.json" in repr(bad)
    assert [n for n, _ in g.arrays()] == ["a"]
    assert [n for n, _ in g.groups()] == ["z"]
    with pytest.raises(MetadataError, match="m/zarr.json"):
        g["m"]
    assert sorted(g.keys()) == ["a", "m", "z"]


def test_tree_shows_what_is_wrong(tmp_path: Path) -> None:
    g = _group(tmp_path, BAD_DOCUMENTS["unknown data type"])
    lines = g.tree().splitlines()
    assert lines[0] == "/"
    assert lines[1] == "├── a (2,) int8"
    assert lines[2].startswith("├── m (unreadable: ") and "no_such_type" in lines[2]
    assert lines[3:] == ["└── z", "    └── inner (3,) uint8"]
    assert isinstance(g.members()[1][1].error, UnknownExtensionError)


def test_the_cli_lists_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _group(tmp_path, BAD_DOCUMENTS["unknown codec"])
    assert main(["tree", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "m (unreadable: " in out and "no_such_codec" in out and "inner (3,) uint8" in out
    assert main(["info", str(tmp_path)]) == 0
    assert "3 (1 array, 1 group, 1 unreadable)" in capsys.readouterr().out


def test_a_copy_refuses_before_writing(tmp_path: Path) -> None:
    _group(tmp_path / "src", BAD_DOCUMENTS["missing fields"])
    with pytest.raises(MetadataError, match="m/zarr.json"):
        zarr3c.copy(str(tmp_path / "src"), str(tmp_path / "dst"))
    assert not (tmp_path / "dst" / "a").exists()
