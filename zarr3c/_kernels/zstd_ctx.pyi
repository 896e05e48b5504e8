"""zstd decoding with a context per thread, through a bound libzstd (contract; zstd_ctx.pyx)."""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

def bind(
    create_dctx: int, free_dctx: int, decompress_dctx: int, is_error: int, version: int
) -> None:
    """Use the libzstd functions at these addresses; binds once per process."""

def available() -> bool:
    """True once bind() has given this module a libzstd."""

def version() -> int:
    """The bound libzstd's ZSTD_versionNumber() (0 if unbound)."""

def decompress_into(src: ReadBuffer, dst: NDArray[np.uint8]) -> int:
    """Decode src's zstd frames into the start of dst (its length is the capacity): bytes
    decoded, or -1 if zstd refuses the input.  RuntimeError if unbound.  GIL released."""
