"""Shards fetched whole from a store without files or values in memory (issue 33's
whole-shard and small-shard rules, :mod:`zarr3c.array.read.native`) keep issue 35's rule: a
stored shard far larger than any valid encoding of it is refused from a bounded request
(``limit + 1`` bytes), never read whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("obstore", reason="ObjectStore needs obstore")

Probe = Callable[..., Any]

#: A shard object of 2 GiB (sparse: no disk, no memory) where a shard of 4 KiB belongs, read
#: through obstore's local store: its shards are small, so any read fetches them whole.
_SPARSE_SHARD = """
import os, zarr3c
from obstore.store import LocalStore
store = zarr3c.ObjectStore(LocalStore({path!r}, mkdir=True))
a = zarr3c.create_array(store, shape=(8192,), chunks=(1024,), shards=(4096,),
                        dtype="uint8", compressors={compressors})
a[:] = 1
with open(os.path.join({path!r}, "c", "0"), "r+b") as f:
    f.truncate(2 << 30)
{action}
"""


@pytest.mark.parametrize("compressors", ["None", "'zstd'"])
@pytest.mark.parametrize("action", [
    "result = a[:]",  # two shards, fetched together
    "result = a[5]",  # a small shard: fetched whole for any read
    "result = a.vindex[[1, 5000]]",  # points
])
def test_an_oversized_shard_is_refused_from_a_bounded_request(
        probe: Probe, tmp_path: Path, compressors: str, action: str) -> None:
    outcome = probe(_SPARSE_SHARD.format(path=str(tmp_path / "a.zarr"),
                                         compressors=compressors, action=action))
    assert outcome.error == "OversizedValueError", outcome
    # from the bounded request: limit + 1 bytes came back, not the 2 GiB
    assert "bytes or more) is larger" in outcome.message, outcome
    assert "c/0" in outcome.message, outcome
    assert outcome.peak_mib < 300, outcome
