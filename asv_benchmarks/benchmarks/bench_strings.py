"""asv benchmarks of the variable-length types: whole writes and reads of ``string`` and
``variable_length_bytes`` arrays (codecs ``vlen-utf8`` / ``vlen-bytes``, then zstd as
zarr-python 3 writes them by default) on a LocalStore.

Two shapes of data, as issue 31 names them: 10^6 short strings (5-15 characters) and 10^5
long ones (about 1,000 characters), ASCII with one in ten holding non-ASCII characters, in
chunks of 10^5 and 10^4 elements.  ``setup`` checks the round trip once, so a wrong answer
fails instead of being timed.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, ClassVar

import numpy as np

import zarr3c


def strings(n: int, length: int, seed: int = 0) -> np.ndarray:
    """``n`` strings of about ``length`` characters (one in ten with non-ASCII ones), as the
    array's in-memory dtype (numpy's ``StringDType``)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(max(1, length // 2), length + length // 2 + 1, size=n)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789 "))
    pool = ["".join(rng.choice(alphabet, size=int(k))) for k in lengths[:1000]]
    out = [pool[i % len(pool)] for i in range(n)]
    for i in range(0, n, 10):
        out[i] = out[i][:-1] + "é"
    dtype = zarr3c.create_array("memory://", shape=(1,), dtype=str).dtype
    return np.array(out, dtype=dtype)


class Strings:
    """Whole write and read of 10^6 short or 10^5 long strings (and the same as bytes)."""

    params: ClassVar[tuple[list[str], list[str]]] = (["short", "long"], ["string", "bytes"])
    param_names: ClassVar[list[str]] = ["size", "kind"]
    number = 1
    repeat = (2, 6, 20.0)
    rounds = 1
    warmup_time = 0.0

    def setup(self, size: str, kind: str) -> None:
        n, length, chunk = (10**6, 10, 10**5) if size == "short" else (10**5, 1000, 10**4)
        values = strings(n, length)
        self.values: Any = values if kind == "string" else \
            np.array([s.encode() for s in values.tolist()], dtype=object)
        self.tmp = tempfile.mkdtemp(prefix="zarr3c-asv-strings-")
        self.arr = zarr3c.create_array(self.tmp, shape=(n,), chunks=(chunk,),
                                       dtype=str if kind == "string" else bytes)
        self.arr[:] = self.values
        if self.arr[:].tolist() != self.values.tolist():
            raise AssertionError("round trip differs")

    def teardown(self, size: str, kind: str) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_write(self, size: str, kind: str) -> None:
        self.arr[:] = self.values

    def time_read(self, size: str, kind: str) -> None:
        self.arr[:]
