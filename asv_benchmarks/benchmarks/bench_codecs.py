"""asv benchmarks of the codec pipeline: encode and decode of one 64^3 uint16 chunk (512 KiB).

The chunk is a smooth gradient plus a little noise (compressible, like real data).  Chains,
as zarr-python 3 writes them:

- ``bytes``: the serializer alone (encode and decode are views: the floor);
- ``bytes+zstd``: zstd level 0, no checksum (zarr-python's default);
- ``bytes+blosc``: blosc zstd level 5, byte shuffle, typesize 2 (zarr-python's blosc default);
- ``transpose+bytes``: order [2, 1, 0] (Fortran layout), one pass of the copy kernel each way;
- ``bytes+crc32c``: the checksum (sharding indexes use it);
- ``reshape+bytes``, ``transpose+reshape+bytes``, ``reshape+bytes+zstd``: the reshape codec
  (https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape) is a view, so
  these should cost what the same chains without reshape cost.

``ZstdCallCost`` times zstd on a chunk of 8 elements, so that what it measures is the fixed
cost of one call: numcodecs makes a new zstd context per call (mostly zstd's ``cpuid``
feature check, which traps to the hypervisor in a virtual machine), which the thousands of
small inner chunks of a sharded read would pay once each; ``time_decode_into_tiny`` is the
decode reads make instead, through a context kept per thread (``zarr3c._kernels.zstd_ctx``),
and ``time_encode_to_scratch_tiny`` the compression writes make, likewise.

``ZstdInnerEncode`` times the compression of one 32^3 uint16 inner chunk (64 KiB, a sharded
write's unit) through numcodecs (``encode``: a new context and output per call) and through
a context kept per thread into thread scratch (``encode_to_scratch``, what writes call).

``ZstdPrefix`` times the decode of the 64^3 chunk into a buffer whole, and of only its first
4 KiB, half and all but its last element (``decode_prefix_into``, what a read of a box inside
a chunk decodes: zstd's blocks of 128 KiB up to the box's furthest element), so the saving
of stopping early is tracked against the whole decode.

``setup`` checks the round trip once, so a wrong answer fails instead of being timed.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs import CodecPipeline

SHAPE = (64, 64, 64)

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
TRANSPOSE = {"name": "transpose", "configuration": {"order": [2, 1, 0]}}
RESHAPE_2D = {"name": "reshape", "configuration": {"shape": [[0, 1], [2]]}}
RESHAPE_1D = {"name": "reshape", "configuration": {"shape": [-1]}}
CHAINS: dict[str, list[dict[str, Any]]] = {
    "bytes": [BYTES],
    "bytes+zstd": [BYTES, ZSTD],
    "bytes+blosc": [BYTES, {"name": "blosc"}],
    "transpose+bytes": [TRANSPOSE, BYTES],
    "bytes+crc32c": [BYTES, {"name": "crc32c"}],
    "reshape+bytes": [RESHAPE_2D, BYTES],
    "transpose+reshape+bytes": [TRANSPOSE, RESHAPE_1D, BYTES],
    "reshape+bytes+zstd": [RESHAPE_2D, BYTES, ZSTD],
}


def make_chunk() -> np.ndarray:
    z, y, x = np.indices(SHAPE, dtype=np.uint16)
    noise = np.random.default_rng(0).integers(0, 4, SHAPE, dtype=np.uint16)
    return (z * 256 + y * 16 + x + noise).astype(np.uint16)


class CodecSuite:
    """Encode / decode of one chunk through each chain."""

    params: ClassVar[list[list[str]]] = [list(CHAINS)]
    param_names: ClassVar[list[str]] = ["chain"]

    def setup(self, chain: str) -> None:
        self.chunk = make_chunk()
        self.pipeline = CodecPipeline.from_codecs(CHAINS[chain], dtype="uint16", fill_value=0)
        # stored bytes are immutable, as a store returns them
        self.encoded = bytes(self.pipeline.encode(self.chunk))
        decoded = self.pipeline.decode(self.encoded, SHAPE, key="c/0/0/0")
        if not np.array_equal(decoded, self.chunk):
            raise AssertionError(f"{chain}: round trip failed")

    def time_encode(self, chain: str) -> None:
        self.pipeline.encode(self.chunk)

    def time_decode(self, chain: str) -> None:
        self.pipeline.decode(self.encoded, SHAPE, key="c/0/0/0")

    def track_encoded_bytes(self, chain: str) -> int:
        return len(self.encoded)

    track_encoded_bytes.unit = "bytes"  # type: ignore[attr-defined]


class ZstdCallCost:
    """zstd's fixed cost per call: encode and decode of an 8-element chunk."""

    def setup(self) -> None:
        self.chunk = np.arange(8, dtype=np.uint16)
        self.pipeline = CodecPipeline.from_codecs(CHAINS["bytes+zstd"], dtype="uint16",
                                                  fill_value=0)
        self.encoded = bytes(self.pipeline.encode(self.chunk))
        if not np.array_equal(self.pipeline.decode(self.encoded, (8,)), self.chunk):
            raise AssertionError("zstd: round trip failed")
        self.out = np.empty(self.chunk.nbytes, dtype=np.uint8)

    def time_encode_tiny(self) -> None:
        self.pipeline.encode(self.chunk)

    def time_decode_tiny(self) -> None:
        self.pipeline.decode(self.encoded, (8,))

    def time_encode_to_scratch_tiny(self) -> None:
        # The writes' path: into thread scratch, through a zstd context kept per thread.
        self.pipeline.encode_to_scratch(self.chunk)

    def time_decode_into_tiny(self) -> None:
        # The reads' path: into a given buffer, through a zstd context kept per thread.
        if not self.pipeline.decode_into(self.encoded, self.out):
            raise AssertionError("zstd: decode_into refused its own chunk")


class ZstdInnerEncode:
    """Compression of one 32^3 uint16 inner chunk: numcodecs' call, or a kept context into
    thread scratch (the same frame)."""

    def setup(self) -> None:
        self.chunk = np.ascontiguousarray(make_chunk()[:32, :32, :32])
        self.pipeline = CodecPipeline.from_codecs(CHAINS["bytes+zstd"], dtype="uint16",
                                                  fill_value=0)
        if bytes(self.pipeline.encode_to_scratch(self.chunk)) != \
                bytes(self.pipeline.encode(self.chunk)):
            raise AssertionError("zstd: encode_to_scratch differs from encode")

    def time_encode(self) -> None:
        self.pipeline.encode(self.chunk)

    def time_encode_to_scratch(self) -> None:
        self.pipeline.encode_to_scratch(self.chunk)


class ZstdPrefix:
    """Decode of a 64^3 uint16 chunk (512 KiB, four zstd blocks): whole, or only the blocks
    holding a prefix of it."""

    params: ClassVar[list[str]] = ["4KiB", "half", "all_but_one"]
    param_names: ClassVar[list[str]] = ["prefix"]

    def setup(self, prefix: str) -> None:
        chunk = make_chunk()
        self.pipeline = CodecPipeline.from_codecs(CHAINS["bytes+zstd"], dtype="uint16",
                                                  fill_value=0)
        self.encoded = bytes(self.pipeline.encode(chunk))
        self.out = np.empty(chunk.nbytes, dtype=np.uint8)
        self.need = {"4KiB": 4096, "half": chunk.nbytes // 2,
                     "all_but_one": chunk.nbytes - 2}[prefix]
        if not self.pipeline.decode_prefix_into(self.encoded, self.out, self.need):
            raise NotImplementedError("zstd prefix decoding is not available here")
        if self.out[:self.need].tobytes() != chunk.tobytes()[:self.need]:
            raise AssertionError("zstd: the prefix differs from the chunk's start")

    def time_decode_into_whole(self, prefix: str) -> None:
        self.pipeline.decode_into(self.encoded, self.out)

    def time_decode_prefix_into(self, prefix: str) -> None:
        self.pipeline.decode_prefix_into(self.encoded, self.out, self.need)
