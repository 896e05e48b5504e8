"""The native chunk pipeline's writes: whole chunks encoded and stored on native threads
without the GIL (contract; writes.pyx, where the plan's nouns are defined)."""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

#: compressors of a chain (chunks.pyx's numbers)
NONE: int
ZSTD: int
BLOSC: int
GZIP: int
#: what became of a chunk: written, equal to the fill value (not written: the caller erases
#: it), or failed (nothing written: the Python path writes it)
WRITTEN: int
EMPTY: int
FAILED_IO: int
FAILED_ENCODE: int
FAILED_MEMORY: int

class EncodeArena:
    """Memory for one write's encoded inner chunks (write_shards starts it over each call,
    reusing its region); freed with the object.  expect: what one call will need, where
    known (the region's first size)."""

    def __init__(self, expect: int = 0) -> None: ...

    @property
    def nbytes(self) -> int:
        """The bytes of its blocks."""

def bind_blosc(compress_ctx: int) -> None:
    """Use c-blosc's blosc_compress_ctx at this address for BLOSC (once per process)."""

def blosc_available() -> bool:
    """Whether bind_blosc has given this module c-blosc."""

def bind_zlib(deflate_init2: int, deflate: int, deflate_end: int, deflate_reset: int) -> None:
    """Use zlib's deflateInit2_, deflate, deflateEnd and deflateReset at these addresses for
    GZIP (once per process; nothing where the build has no zlib.h or the layouts differ)."""

def zlib_available() -> bool:
    """Whether bind_zlib has given this module zlib."""

def encoded_cap(nbytes: int, compressor: int, checksums: int) -> int:
    """The room a destination buffer needs for one chunk's encoding.  ValueError for a
    negative size, an unknown chain, or a compressor whose library is not bound."""

def write_chunks(
    dests: list[bytes] | list[bytearray] | list[NDArray[np.uint8]], paths: bool,
    src: ReadBuffer, src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64],
    counts: NDArray[np.int64], chunk_shape: NDArray[np.int64], itemsize: int,
    fill: ReadBuffer, skip_empty: bool, compressor: int, level: int, zstd_checksum: bool,
    checksums: int, swap: int, nthreads: int, sizes: NDArray[np.int64],
    status: NDArray[np.int8],
    order: NDArray[np.int64] | None = ...,
    blosc: tuple[bytes, int, int, int] | None = ...,
) -> None:
    """Copy each chunk's region out of ``src`` (the rest of an edge chunk: ``fill``),
    compare it with ``fill`` (``skip_empty``), encode it and store it at ``dests[c]`` (a file
    path written atomically if ``paths``, else a writable buffer of ``encoded_cap`` bytes)
    on up to ``nthreads`` threads, the GIL released; ``status[c]`` and ``sizes[c]`` say what
    became of chunk ``c``.  ``order`` (here and in write_shards): a transpose codec's,
    each chunk laid out as it encodes it; ``blosc``: for BLOSC, (cname, shuffle, typesize,
    blocksize), its clevel the ``level``.  ValueError for a plan that does not hold
    together, never for the file system."""

def write_shards(
    dests: list[bytes] | list[bytearray] | list[NDArray[np.uint8]], src: ReadBuffer,
    src_offsets: NDArray[np.int64], src_strides: NDArray[np.int64], counts: NDArray[np.int64],
    shard_shape: NDArray[np.int64], chunk_shape: NDArray[np.int64], itemsize: int,
    fill: ReadBuffer, skip_empty: bool, compressor: int, level: int, zstd_checksum: bool,
    checksums: int, swap: int, index_at_start: bool, index_checksum: bool,
    arena: EncodeArena, nthreads: int, sizes: NDArray[np.int64], status: NDArray[np.int8],
    order: NDArray[np.int64] | None = ...,
    blosc: tuple[bytes, int, int, int] | None = ...,
    paths: bool = ...,
) -> None:
    """Write each shard dests[s] (a file path, atomically; with paths False a writable
    buffer, FAILED_ENCODE for a shard that does not fit in it): its region of counts[s]
    elements from src_offsets[s] (the rest fill) in inner chunks of chunk_shape encoded by
    the chain (an inner chunk equal to fill not stored), laid out as the sharding codec
    does (inner chunks in C order, the index of (offset, nbytes) little-endian uint64 pairs,
    with a CRC-32C if index_checksum, at the start or end); the inner chunks encoded into
    arena (started over) on up to nthreads threads, the GIL released.
    status[s] and sizes[s] say what became of shard s (EMPTY: it stores no inner chunk and
    skip_empty).  ValueError for a plan that does
    not hold together (a chunk_shape not dividing shard_shape, ...), never for the file
    system."""
