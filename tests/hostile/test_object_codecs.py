"""Issue 31: hostile chunks of Zarr v2 object arrays (``vlen-array``, ``json2``) raise a
ChunkDecodeError naming the key without allocating what they claim: an item count or an
element length is checked against the chunk and the bytes present first (numcodecs'
``VLenArray.decode`` alone would allocate 16 GiB for the count below), a JSON chunk's
stored shape against the chunk's before anything is sized by it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Probe = Callable[..., Any]

_JSON2 = {"allow_nan": True, "check_circular": True, "encoding": "utf-8",
          "ensure_ascii": True, "id": "json2", "indent": None, "separators": [",", ":"],
          "skipkeys": False, "sort_keys": True, "strict": True}

_READ = """
import zarr3c
a = zarr3c.open_array({path!r}, mode="r")
result = a[{index}]
"""


def _array(root: Path, object_codec: dict[str, Any], n: int, chunk: bytes) -> str:
    """A v2 object array of ``n`` elements in one chunk whose stored bytes are ``chunk``."""
    root.mkdir()
    (root / ".zarray").write_text(json.dumps({
        "chunks": [n], "compressor": None, "dtype": "|O", "fill_value": 0,
        "filters": [object_codec], "order": "C", "shape": [n], "zarr_format": 2}))
    (root / "0").write_bytes(chunk)
    return str(root)


def _u32(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "little") for v in values)


@pytest.mark.parametrize("n,chunk,message", [
    # a chunk of 2**31 elements whose 8 bytes claim them all
    (2**31, _u32(2**31, 0), "2147483648 items need at least 8589934596 bytes; the chunk has 8"),
    # a count of 2**32 - 1 for a chunk of 2
    (2, _u32(2**32 - 1, 0), "stored item count is 4294967295, expected 2"),
    # an element of 2 GiB in a few bytes
    (1, _u32(1, 2**31) + bytes(8), "item 0's length (2147483648 bytes) runs past the end"),
    (2, _u32(2, 0, 2**32 - 1) + bytes(4), "item 1's length (4294967295 bytes) runs past"),
])
@pytest.mark.parametrize("index", ["0", "-1", "[0]"])
def test_vlen_array_claims_are_checked_first(probe: Probe, tmp_path: Path, n: int,
                                             chunk: bytes, message: str, index: str) -> None:
    path = _array(tmp_path / "a", {"id": "vlen-array", "dtype": "<i4"}, n, chunk)
    outcome = probe(_READ.format(path=path, index=index))
    assert outcome.error == "ChunkDecodeError" and outcome.zarr3c_error, outcome
    assert "chunk '0': vlen-array: " in outcome.message and message in outcome.message
    assert outcome.peak_mib < 300, outcome


@pytest.mark.parametrize("n,chunk,message", [
    # a stored shape numcodecs would allocate (8 TiB of float64) before filling it
    (2, b'[1,2,"<f8",[1099511627776]]', "stored data type is '<f8'"),
    (2, b'[1,2,"|O",[1099511627776]]', "stored shape is [1099511627776], expected [2]"),
    # the chunk's own shape, 2**31 elements, claimed by one
    (2**31, b'[0,"|O",[2147483648]]', "dimension 0 has 1 entries"),
    # nesting deeper than the parser's recursion limit
    (1, b"[" * 200_000 + b"]" * 200_000, "not JSON"),
])
def test_json2_claims_are_checked_first(probe: Probe, tmp_path: Path, n: int, chunk: bytes,
                                        message: str) -> None:
    path = _array(tmp_path / "a", _JSON2, n, chunk)
    outcome = probe(_READ.format(path=path, index="0"))
    assert outcome.error == "ChunkDecodeError" and outcome.zarr3c_error, outcome
    assert "chunk '0': json2: " in outcome.message and message in outcome.message
    assert outcome.peak_mib < 300, outcome
