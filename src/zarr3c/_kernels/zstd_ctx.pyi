"""zstd decoding and compression with a context per thread, through a bound libzstd (contract;
zstd_ctx.pyx)."""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer
from zarr3c._kernels.scatter import OuterPieces

def bind(
    create_dctx: int, free_dctx: int, decompress_dctx: int, is_error: int, version: int,
    decompress_begin: int = 0, next_src_size: int = 0, decompress_continue: int = 0,
    find_frame_compressed_size: int = 0, get_frame_content_size: int = 0,
) -> None:
    """Use the libzstd functions at these addresses (the last five, for prefix decoding,
    all or none); binds once per process."""

def bind_compress(
    create_cctx: int, free_cctx: int, cctx_set_parameter: int, compress2: int,
    compress_bound: int,
) -> None:
    """Use the libzstd compression functions at these addresses (after bind(), same library);
    binds once per process."""

def compress_available() -> bool:
    """True once bind_compress() has given this module libzstd's compressor."""

def compress_bound(nbytes: int) -> int:
    """ZSTD_compressBound(nbytes): the room compress_into needs (-1 if zstd cannot take the
    size).  RuntimeError if unbound, ValueError if negative."""

def compress_into(src: ReadBuffer, dst: NDArray[np.uint8], level: int, checksum: bool) -> int:
    """Compress src as one frame (numcodecs' calls and parameters, with the bound library:
    _reference.zstd_frame(src, level, checksum)) into the start of dst: the frame's size, or
    -1 if zstd refuses (dst too small).  RuntimeError if unbound.  GIL released."""

def available() -> bool:
    """True once bind() has given this module a libzstd."""

def prefix_available() -> bool:
    """True once bind() has given this module a libzstd with prefix decoding."""

def version() -> int:
    """The bound libzstd's ZSTD_versionNumber() (0 if unbound)."""

def decompress_into(src: ReadBuffer, dst: NDArray[np.uint8]) -> int:
    """Decode src's zstd frames into the start of dst (its length is the capacity): bytes
    decoded, or -1 if zstd refuses the input.  RuntimeError if unbound.  GIL released."""

ERROR_CHECKSUM_WRONG: int
ERROR_DST_SIZE_TOO_SMALL: int
ERROR_SRC_SIZE_WRONG: int

def decompress_bounded(src: ReadBuffer, dst: NDArray[np.uint8]) -> int:
    """Decode src's zstd frames into the start of dst, never past it: bytes decoded, or
    minus libzstd's error code if zstd refuses the input (-ERROR_DST_SIZE_TOO_SMALL: the
    content does not fit in dst; -ERROR_CHECKSUM_WRONG: a frame checksum mismatch;
    -ERROR_SRC_SIZE_WRONG: src is empty).  RuntimeError if unbound.  GIL released."""

def decompress_prefix_into(src: ReadBuffer, dst: NDArray[np.uint8], need: int) -> int:
    """Decode src (one frame without a content checksum, declaring len(dst) bytes) into dst
    block after block, up to the block holding byte need - 1: the bytes decoded (>= need),
    or -1 if refused or zstd fails.  RuntimeError if unbound.  GIL released."""

def decompress_pieces(
    frames: list[ReadBuffer],
    scratch: NDArray[np.uint8],
    piece_starts: NDArray[np.int64],
    piece_stops: NDArray[np.int64],
    src_offsets: NDArray[np.int64],
    src_strides: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    dst_strides: NDArray[np.int64],
    shapes: NDArray[np.int64],
    itemsize: int,
) -> list[int]:
    """Per k: decompress_into(frames[k], scratch), then copy pieces
    [piece_starts[k], piece_stops[k]) of scratch to dst as scatter.copy_pieces does.  Returns
    the k whose frames did not decode to exactly len(scratch) bytes (their pieces are not
    copied).  ValueError (before decoding) for pieces outside scratch or dst.  RuntimeError
    if unbound.  GIL released once."""

def decompress_elements(
    frames: list[ReadBuffer],
    scratch: NDArray[np.uint8],
    run_starts: NDArray[np.int64],
    run_stops: NDArray[np.int64],
    src_offsets: NDArray[np.int64],
    dst: NDArray[np.uint8],
    dst_offsets: NDArray[np.int64],
    itemsize: int,
) -> list[int]:
    """Per k: decompress_into(frames[k], scratch), then copy elements
    [run_starts[k], run_stops[k]) of scratch to dst as scatter.copy_elements does.  Returns the
    k whose frames did not decode to exactly len(scratch) bytes (their elements are not
    copied).  ValueError (before decoding) for elements outside scratch or dst.
    RuntimeError if unbound.  GIL released once."""

def decompress_outer(
    frames: list[ReadBuffer],
    scratch: NDArray[np.uint8],
    piece_starts: NDArray[np.int64],
    piece_stops: NDArray[np.int64],
    pieces: OuterPieces,
    dst: NDArray[np.uint8],
) -> list[int]:
    """Per k: decompress_into(frames[k], scratch), then copy pieces [piece_starts[k],
    piece_stops[k]) of pieces (each as scatter.copy_outer copies it) from scratch to dst.
    Returns the k whose frames did not decode to exactly len(scratch) bytes (their pieces
    are not copied).  ValueError (before decoding) for scratch or dst shorter than the
    pieces were checked against, or runs outside them.  RuntimeError if unbound.  GIL
    released once."""
