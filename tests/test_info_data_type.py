"""``info``'s data type line shows an extension type's configuration (issue 31): a datetime's
unit and scale factor, a fixed-length type's size, a struct's fields; a core type is its
name.  ``DataType.describe`` renders it from the type's ``zarr.json`` form."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import zarr3c
from zarr3c.metadata import data_type_from_numpy, parse_data_type


@pytest.mark.parametrize(("dtype", "text"), [
    ("int16", "int16"),
    ("M8[10s]", 'numpy.datetime64(unit="s", scale_factor=10)'),
    ("m8[ns]", 'numpy.timedelta64(unit="ns", scale_factor=1)'),
    ("<U3", "fixed_length_utf32(length_bytes=12)"),
    ("S4", "null_terminated_bytes(length_bytes=4)"),
    ("V3", "raw_bytes(length_bytes=3)"),
    ([("x", "<f4"), ("t", "<M8[ms]")],
     'struct(fields=[x: float32, t: numpy.datetime64(unit="ms", scale_factor=1)])'),
    ([("p", [("a", "u1"), ("b", "<i2")])], "struct(fields=[p: struct(fields=[a: uint8, "
                                          "b: int16])])"),
])
def test_describe(dtype: Any, text: str) -> None:
    data_type = data_type_from_numpy(dtype)
    assert data_type.describe() == text
    # the same from its JSON form, as read from zarr.json
    assert parse_data_type(data_type.to_json()).describe() == text


@pytest.mark.parametrize(("name", "text"), [("string", "string"),
                                            ("variable_length_bytes", "variable_length_bytes"),
                                            ("r16", "r16")])
def test_describe_types_without_configuration(name: str, text: str) -> None:
    assert parse_data_type(name).describe() == text


def _info(target: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(zarr3c.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "zarr3c", "info", str(target)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {k.strip(): v.strip() for k, _, v in
            (ln.partition(" : ") for ln in proc.stdout.splitlines())}


def test_cli_info_shows_the_configuration(tmp_path: Path) -> None:
    g = zarr3c.create_group(tmp_path / "g")
    g.create_array("t", shape=(2,), dtype="M8[10s]")
    g.create_array("s", shape=(2,), dtype=[("x", "<f4"), ("n", "<U2")])
    v2 = zarr3c.create_group(tmp_path / "v2", zarr_format=2)
    v2.create_array("o", shape=(2,), dtype=str)
    v2.create_array("t", shape=(2,), dtype="<M8[ns]")
    assert _info(tmp_path / "g" / "t")["Data type"] == \
        'numpy.datetime64(unit="s", scale_factor=10)'
    assert _info(tmp_path / "g" / "s")["Data type"] == \
        "struct(fields=[x: float32, n: fixed_length_utf32(length_bytes=8)])"
    # Zarr v2: the string type of a new object array; a v2 type string holds its unit
    assert _info(tmp_path / "v2" / "o")["Data type"] == "string"
    assert _info(tmp_path / "v2" / "t")["Data type"] == "<M8[ns]"
