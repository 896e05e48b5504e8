"""The native chunk pipeline: a read plan executed on native threads without the GIL
(contract; chunks.pyx, where the plan's nouns are defined)."""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

#: The most shards one read_shards call takes (it holds their files open).
MAX_SHARDS: int
#: compressors of a chain
NONE: int
ZSTD: int
BLOSC: int
GZIP: int
#: what became of a chunk: read, not stored (filled), or failed (the Python path reads it)
READ: int
MISSING: int
FAILED_IO: int
FAILED_SIZE: int
FAILED_DECODE: int
FAILED_CHECKSUM: int
FAILED_INDEX: int
FAILED_MEMORY: int

def read_chunks(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool,
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64],
    dst: NDArray[np.uint8], dst_offsets: NDArray[np.int64], dst_strides: NDArray[np.int64],
    counts: NDArray[np.int64], itemsize: int, fill: ReadBuffer, direct: NDArray[np.uint8],
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """Read, decode and copy out each chunk of ``sources`` (file paths if ``paths``, else
    values, None where not stored) on up to ``nthreads`` threads, the GIL released;
    ``status[c]`` says what became of chunk ``c``.  ``transpose`` (every read kernel): a
    chain with a transpose codec, as ``[chunk shape, order]``; its decoded chunks are put
    back in C order.  ValueError for a plan that does not hold together, never for stored
    bytes."""

def read_elements(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool,
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8],
    itemsize: int, fill: ReadBuffer, compressor: int, checksums: int, swap: int, nbytes: int,
    nthreads: int, status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """read_chunks for points: chunk ``c``'s elements are rows ``firsts[c]:ends[c]``, each
    copied from ``src_offsets[p]`` of the decoded chunk to ``dst_offsets[p]`` of ``dst`` (in
    row order), or filled.  ValueError for an element outside the chunk or ``dst``, or as
    read_chunks."""

def read_chunks_outer(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool,
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    bounds: NDArray[np.int64], src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
    counts: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int, fill: ReadBuffer,
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """read_chunks for outer products: chunk ``c``'s pieces are rows ``firsts[c]:ends[c]``,
    piece ``p`` a ``scatter.copy_outer`` of the decoded chunk into ``dst`` with lengths
    ``counts[p]`` ((P, ndim) C-contiguous) and the offsets ``bounds[p]:bounds[p + 1]`` of
    ``src_offsets`` and ``dst_offsets``, or filled.  ValueError for a piece reaching outside
    the chunk or ``dst``, or as read_chunks."""

def read_shards(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool, index_nbytes: int,
    index_at_end: bool, index_checksum: bool,
    inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64],
    dst: NDArray[np.uint8], dst_offsets: NDArray[np.int64], dst_strides: NDArray[np.int64],
    counts: NDArray[np.int64], itemsize: int, fill: ReadBuffer, direct: NDArray[np.uint8],
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8], shard_status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """read_chunks for the inner chunks of shards: inner chunk ``k`` is entry
    ``inner_slot[k]`` of the index of shard ``inner_shard[k]`` (``index_nbytes`` bytes of
    little-endian uint64 pairs, then a CRC-32C if ``index_checksum``, at the shard's end or
    start); ``shard_status[s]`` says what became of shard ``s``'s index (an index that
    ``shard.check_shard_index`` refuses fails its shard)."""

def bind_blosc(decompress_ctx: int, cbuffer_validate: int) -> None:
    """Use c-blosc's blosc_decompress_ctx and blosc_cbuffer_validate at these addresses for
    BLOSC (binds once per process).  ValueError for a null address."""

def blosc_available() -> bool:
    """True once bind_blosc() has given this module c-blosc."""

def bind_zlib(inflate_init2: int, inflate: int, inflate_end: int, inflate_reset: int) -> None:
    """Use zlib's inflateInit2_, inflate, inflateEnd and inflateReset at these addresses for
    GZIP (once per process; nothing without zlib.h at build or with another stream layout).
    ValueError for a null address."""

def zlib_available() -> bool:
    """True once bind_zlib() has given this module zlib."""

def read_shard_elements(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool, index_nbytes: int,
    index_at_end: bool, index_checksum: bool,
    inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64], dst: NDArray[np.uint8],
    itemsize: int, fill: ReadBuffer, compressor: int, checksums: int, swap: int, nbytes: int,
    nthreads: int, status: NDArray[np.int8], shard_status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """read_shards for points: inner chunk ``k`` (entry ``inner_slot[k]`` of shard
    ``inner_shard[k]``) has the elements ``firsts[k]:ends[k]``, as in read_elements.
    ValueError as read_shards and read_elements."""

def read_shards_outer(
    sources: list[bytes] | list[ReadBuffer | None], paths: bool, index_nbytes: int,
    index_at_end: bool, index_checksum: bool,
    inner_shard: NDArray[np.int64], inner_slot: NDArray[np.int64],
    firsts: NDArray[np.int64], ends: NDArray[np.int64],
    bounds: NDArray[np.int64], src_offsets: NDArray[np.int64], dst_offsets: NDArray[np.int64],
    counts: NDArray[np.int64], dst: NDArray[np.uint8], itemsize: int, fill: ReadBuffer,
    compressor: int, checksums: int, swap: int, nbytes: int, nthreads: int,
    status: NDArray[np.int8], shard_status: NDArray[np.int8],
    transpose: NDArray[np.int64] | None = ...,
) -> None:
    """read_shards for outer products: inner chunk ``k`` (entry ``inner_slot[k]`` of shard
    ``inner_shard[k]``) has the pieces ``firsts[k]:ends[k]``, as in read_chunks_outer.
    ValueError as read_shards and read_chunks_outer."""
