"""asv benchmarks of the ``reshape`` codec (seed 004): one 64^3 uint16 chunk (512 KiB).

Reshape is a view of a C-contiguous chunk, so a chain with it should cost what the same chain
without it costs (plus a few microseconds of Python per call):

- ``bytes`` vs ``reshape+bytes`` (``[[0, 1], [2]]``, i.e. [4096, 64]): both are views;
- ``transpose+bytes`` vs ``transpose+reshape+bytes`` (``[-1]``): one pass of the copy kernel
  each way, reshape adds no second copy;
- ``reshape+bytes+zstd``: a compressor after the serializer, beside ``bytes+zstd``.

``setup`` checks the round trip once, so a wrong answer fails instead of being timed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs import CodecPipeline

SHAPE = (64, 64, 64)
KEY = "c/0/0/0"

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
TRANSPOSE = {"name": "transpose", "configuration": {"order": [2, 1, 0]}}
RESHAPE_2D = {"name": "reshape", "configuration": {"shape": [[0, 1], [2]]}}
RESHAPE_1D = {"name": "reshape", "configuration": {"shape": [-1]}}

CHAINS: dict[str, list[dict[str, Any]]] = {
    "bytes": [BYTES],
    "reshape+bytes": [RESHAPE_2D, BYTES],
    "transpose+bytes": [TRANSPOSE, BYTES],
    "transpose+reshape+bytes": [TRANSPOSE, RESHAPE_1D, BYTES],
    "bytes+zstd": [BYTES, ZSTD],
    "reshape+bytes+zstd": [RESHAPE_2D, BYTES, ZSTD],
}


def make_chunk() -> np.ndarray:
    z, y, x = np.indices(SHAPE, dtype=np.uint16)
    noise = np.random.default_rng(0).integers(0, 4, SHAPE, dtype=np.uint16)
    return (z * 256 + y * 16 + x + noise).astype(np.uint16)


class ReshapeSuite:
    """Encode / decode of one chunk through chains with and without reshape."""

    params: ClassVar[list[list[str]]] = [list(CHAINS)]
    param_names: ClassVar[list[str]] = ["chain"]

    def setup(self, chain: str) -> None:
        self.chunk = make_chunk()
        self.pipeline = CodecPipeline.from_codecs(CHAINS[chain], dtype="uint16", fill_value=0)
        # stored bytes are immutable, as a store returns them
        self.encoded = bytes(self.pipeline.encode(self.chunk))
        decoded = self.pipeline.decode(self.encoded, SHAPE, key=KEY)
        if not np.array_equal(decoded, self.chunk):
            raise AssertionError(f"{chain}: round trip failed")

    def time_encode(self, chain: str) -> None:
        self.pipeline.encode(self.chunk)

    def time_decode(self, chain: str) -> None:
        self.pipeline.decode(self.encoded, SHAPE, key=KEY)
