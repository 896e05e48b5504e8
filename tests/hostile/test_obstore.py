"""Hostile input through ObjectStore (issue 33 with issue 35's rules): a stored value far
larger than any valid encoding of its chunk is refused from a bounded request (``limit + 1``
bytes), never read whole, on obstore's local store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("obstore", reason="ObjectStore needs obstore")

Probe = Callable[..., Any]

#: A chunk object of 2 GiB (sparse: no disk, no memory) where a 4 KiB chunk belongs, read
#: through obstore's local store.
_SPARSE_CHUNK = """
import os, zarr3c
from obstore.store import LocalStore
store = zarr3c.ObjectStore(LocalStore({path!r}, mkdir=True))
a = zarr3c.create_array(store, shape=(8192,), chunks=(4096,), dtype="uint8",
                        compressors={compressors})
a[:] = 1
with open(os.path.join({path!r}, "c", "0"), "r+b") as f:
    f.truncate(2 << 30)
{action}
"""


@pytest.mark.parametrize("compressors", ["None", "'zstd'"])
@pytest.mark.parametrize("action", [
    "result = a[:]",
    "result = a[5]",
    "a[3] = 7",  # a partial write reads the chunk first
    "result = store.get_many_at_most(['c/1', 'c/0'], 4096)",
])
def test_an_oversized_object_is_refused_from_a_bounded_request(
        probe: Probe, tmp_path: Path, compressors: str, action: str) -> None:
    outcome = probe(_SPARSE_CHUNK.format(path=str(tmp_path / "a.zarr"),
                                         compressors=compressors, action=action))
    assert outcome.zarr3c_error, outcome
    if compressors == "None" and action == "result = a[5]":
        # the box of one element is read with a bounded request too, then found too long
        assert outcome.error == "ChunkDecodeError", outcome
        assert "not the 4096 bytes" in outcome.message, outcome
    else:
        assert outcome.error == "OversizedValueError", outcome
        # from the bounded request: limit + 1 bytes came back, not the 2 GiB
        assert "bytes or more) is larger" in outcome.message, outcome
    assert "c/0" in outcome.message, outcome
    assert outcome.peak_mib < 300, outcome
