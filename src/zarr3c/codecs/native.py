"""Which codec chains the native chunk pipeline decodes (:mod:`zarr3c._kernels.chunks`) and
encodes (:mod:`zarr3c._kernels.writes`).

A chain is native when its stored bytes become the chunk's elements by steps the kernel has
in C: trailing ``crc32c`` codecs (verified and stripped), at most one ``zstd`` (through the
libzstd :mod:`zarr3c.codecs.zstd` binds), ``blosc`` (the c-blosc numcodecs bundles) or
``gzip`` (the zlib Python's ``zlib`` module uses), both bound here, the ``bytes`` serializer
in either byte order (a byte swap), and at most one ``transpose`` before it (the decoded
chunk copied back to C order; zarr v2's ``order: "F"`` is one).  Any other codec
(numcodecs' own, a checksum before the compressor) keeps the chain on the Python path,
which is what the native one is tested against.  Codecs: `the Zarr v3 core codecs
<https://zarr-specs.readthedocs.io/en/latest/v3/codecs/index.html>`_.

Writes encode natively the same chains, :class:`NativeWriteChain`: ``zstd`` as
``ZstdCodec`` frames it and ``gzip`` as ``GzipCodec`` does (``zlib.compress(data, level,
wbits=31)``), byte for byte (the same libraries and parameters); ``blosc`` through
``blosc_compress_ctx`` on one internal thread, as ``numcodecs.Blosc`` compresses without
threads (with its threads c-blosc lays the blocks out in the order they finish, so the
Python path's bytes may differ from run to run, never its values).  A ``blosc`` codec whose
``shuffle`` or ``typesize`` is left to numcodecs takes the Python path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import zlib
from typing import TYPE_CHECKING, NamedTuple

import numcodecs.blosc
import numpy as np

from zarr3c._buffers import holds_references
from zarr3c.codecs.base import swap_width
from zarr3c.codecs.blosc import SHUFFLES, BloscCodec
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.crc32c import Crc32cCodec
from zarr3c.codecs.gzip import GzipCodec
from zarr3c.codecs.transpose import TransposeCodec
from zarr3c.codecs.zstd import ZstdCodec

try:  # (POSIX builds: the pipeline runs on a pthread pool)
    from zarr3c._kernels import chunks as _chunks
    from zarr3c._kernels import writes as _writes
    from zarr3c._kernels import zstd_ctx as _zstd_ctx
except ImportError:  # pragma: no cover - other systems
    _chunks = None  # type: ignore[assignment]
    _writes = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Sequence

    from zarr3c.codecs.pipeline import CodecPipeline

__all__ = ["NativeChain", "NativeWriteChain", "native_chain", "native_write_chain"]


def _bind_numcodecs_blosc() -> bool:
    """Hand the native pipeline the c-blosc inside ``numcodecs.blosc``'s extension module
    (``blosc_decompress_ctx``, ``blosc_cbuffer_validate``; ``blosc_compress_ctx`` for
    writes); False where its symbols cannot be found (blosc chains then take the Python
    path)."""
    if _chunks is None:
        return False
    try:
        lib = ctypes.CDLL(numcodecs.blosc.__file__)
        addresses = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
                     for name in ("blosc_decompress_ctx", "blosc_cbuffer_validate",
                                  "blosc_compress_ctx")]
        _chunks.bind_blosc(*addresses[:2])
        _writes.bind_blosc(addresses[2])
    except (OSError, AttributeError, ValueError, TypeError):
        return False
    return bool(_chunks.blosc_available())


def _bind_zlib() -> bool:
    """Hand the native pipeline the zlib Python's ``zlib`` module uses (its ``inflate*``
    functions, and ``deflate*`` for writes); False where it cannot be found or does not
    match the build's ``zlib.h`` (gzip chains then take the Python path)."""
    if _chunks is None:
        return False
    names = ("inflateInit2_", "inflate", "inflateEnd", "inflateReset")
    write_names = ("deflateInit2_", "deflate", "deflateEnd", "deflateReset")
    for where in (ctypes.util.find_library("z"), getattr(zlib, "__file__", None)):
        if not where:
            continue
        try:
            lib = ctypes.CDLL(where)
            _chunks.bind_zlib(*[ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
                                for name in names])
            _writes.bind_zlib(*[ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
                                for name in write_names])
        except (OSError, AttributeError, ValueError, TypeError):
            continue
        if _chunks.zlib_available():
            return True
    return False


#: Whether blosc chains are decoded natively
_BLOSC = _bind_numcodecs_blosc()
#: Whether gzip chains are decoded natively
_GZIP = _bind_zlib()


def _permutation(order: tuple[int, ...] | str | None, ndim: int) -> tuple[int, ...] | None:
    """A transpose codec's order for ``ndim`` axes; None for none (or ``"C"``, none)."""
    if isinstance(order, str):
        order = tuple(range(ndim - 1, -1, -1)) if order == "F" else None
    return None if order is None or order == tuple(range(ndim)) else order


class NativeChain(NamedTuple):
    """How the native pipeline decodes a chain (the kernel's ``chain`` arguments)."""

    compressor: int  # chunks.NONE, ZSTD, BLOSC or GZIP
    checksums: int  # trailing crc32c codecs
    swap: int  # width of the words to byte-swap (1: none)
    order: tuple[int, ...] | str | None = None  # a transpose codec's (None: none)

    @property
    def decodes_prefixes(self) -> bool:
        """The kernel decodes a chunk only through the block holding the last byte a read
        takes from it (zstd, with a libzstd that can; not a transposed chunk)."""
        return (self.compressor == _chunks.ZSTD and self.order is None
                and bool(_zstd_ctx.prefix_available()))

    def transpose(self, chunk_shape: Sequence[int]) -> np.ndarray | None:
        """The read kernels' ``transpose`` argument for chunks of ``chunk_shape``: None, or
        ``[chunk_shape, order]`` as int64.

        Parameters
        ----------
        chunk_shape
            The (inner) chunks' shape.

        Returns
        -------
        numpy.ndarray or None

        Raises
        ------
        None
            The order was checked against the chunks when the array was opened.

        Examples
        --------
        >>> from zarr3c.codecs.native import NativeChain
        >>> NativeChain(0, 0, 1, "F").transpose((2, 3)).tolist()
        [[2, 3], [1, 0]]
        >>> NativeChain(0, 0, 1).transpose((2, 3)) is None
        True
        """
        if self.order is None:  # (the usual chain: nothing to build, on the hottest reads)
            return None
        perm = _permutation(self.order, len(chunk_shape))
        return None if perm is None else np.array([chunk_shape, perm], dtype=np.int64)


def native_chain(pipeline: CodecPipeline) -> NativeChain | None:
    """The :class:`NativeChain` of ``pipeline``, or None where it has a codec the native
    pipeline does not decode (or there is no native pipeline on this system).

    Parameters
    ----------
    pipeline
        A resolved codec chain.

    Returns
    -------
    NativeChain or None

    Raises
    ------
    None
        A chain it cannot decode gives None.

    Examples
    --------
    >>> from zarr3c.codecs import CodecPipeline
    >>> from zarr3c.codecs.native import native_chain
    >>> native_chain(CodecPipeline.from_codecs(["bytes", "zstd", "crc32c"], dtype="<u2"))
    NativeChain(compressor=1, checksums=1, swap=1, order=None)
    >>> transpose = {"name": "transpose", "configuration": {"order": [1, 0]}}
    >>> native_chain(CodecPipeline.from_codecs([transpose, "bytes"], dtype="<u2"))
    NativeChain(compressor=0, checksums=0, swap=1, order=(1, 0))
    >>> native_chain(CodecPipeline.from_codecs([transpose, transpose, "bytes"], dtype="<u2"))
    """
    if _chunks is None or not isinstance(pipeline.array_bytes, BytesCodec):
        return None
    order: tuple[int, ...] | str | None = None
    if len(pipeline.array_array) == 1 and type(pipeline.array_array[0]) is TransposeCodec:
        order = pipeline.array_array[0].order
    elif pipeline.array_array:
        return None
    dtype = pipeline.dtype
    if dtype.itemsize == 0 or holds_references(dtype):
        return None
    swap = 1
    if not pipeline.array_bytes.stores_raw_elements(dtype):
        if dtype.fields is not None or dtype.subdtype is not None:
            return None
        swap = swap_width(dtype)
    rest = list(pipeline.bytes_bytes)
    checksums = 0
    while rest and type(rest[-1]) is Crc32cCodec:
        rest.pop()
        checksums += 1
    compressor = _chunks.NONE
    if len(rest) == 1 and type(rest[0]) is ZstdCodec and _zstd_ctx.available():
        compressor = _chunks.ZSTD
        rest.pop()
    elif len(rest) == 1 and type(rest[0]) is BloscCodec and _BLOSC:
        compressor = _chunks.BLOSC
        rest.pop()
    elif len(rest) == 1 and type(rest[0]) is GzipCodec and _GZIP:
        compressor = _chunks.GZIP
        rest.pop()
    if rest:
        return None
    if order == "C" or order == tuple(range(len(order or ()))):
        order = None  # (the identity)
    return NativeChain(compressor, checksums, swap, order)


class NativeWriteChain(NamedTuple):
    """How the native pipeline encodes a chain (the write kernel's ``chain`` arguments)."""

    compressor: int  # chunks.NONE, ZSTD, BLOSC or GZIP
    level: int  # zstd's, blosc's clevel, gzip's
    zstd_checksum: bool  # zstd's own frame checksum
    checksums: int  # trailing crc32c codecs
    swap: int  # width of the words to byte-swap (1: none)
    order: tuple[int, ...] | str | None = None  # a transpose codec's (None: none)
    #: blosc's (cname, shuffle: 0 none, 1 byte, 2 bit, typesize, blocksize); None: not blosc
    blosc: tuple[bytes, int, int, int] | None = None

    def order_for(self, ndim: int) -> np.ndarray | None:
        """The write kernels' ``order`` argument for chunks of ``ndim`` dimensions: None, or
        the transpose codec's order as int64.

        Parameters
        ----------
        ndim
            The chunks' number of dimensions.

        Returns
        -------
        numpy.ndarray or None

        Raises
        ------
        None
            The order was checked against the chunks when the array was opened.

        Examples
        --------
        >>> from zarr3c.codecs.native import NativeWriteChain
        >>> NativeWriteChain(0, 0, False, 0, 1, "F").order_for(3).tolist()
        [2, 1, 0]
        """
        perm = _permutation(self.order, ndim)
        return None if perm is None else np.array(perm, dtype=np.int64)


def native_write_chain(pipeline: CodecPipeline) -> NativeWriteChain | None:
    """The :class:`NativeWriteChain` of ``pipeline``, or None where the native pipeline does
    not encode it (a chain it does not decode, a compressor whose library is not bound for
    writes, a ``blosc`` without its ``shuffle`` and ``typesize``).

    Parameters
    ----------
    pipeline
        A resolved codec chain.

    Returns
    -------
    NativeWriteChain or None

    Raises
    ------
    None
        A chain it cannot encode gives None.

    Examples
    --------
    >>> from zarr3c.codecs import CodecPipeline
    >>> from zarr3c.codecs.native import native_write_chain
    >>> zstd = {"name": "zstd", "configuration": {"level": 5, "checksum": False}}
    >>> native_write_chain(CodecPipeline.from_codecs(["bytes", zstd], dtype="<u2"))
    NativeWriteChain(compressor=1, level=5, zstd_checksum=False, checksums=0, swap=1,
                     order=None, blosc=None)
    >>> blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
    ...          "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}
    >>> native_write_chain(CodecPipeline.from_codecs(["bytes", blosc], dtype="<u2")).blosc
    (b'lz4', 1, 2, 0)
    """
    chain = pipeline.native
    if chain is None or _writes is None:
        return None
    level, checksum, blosc = 0, False, None
    codec = pipeline.bytes_bytes[0] if chain.compressor != _chunks.NONE else None
    if isinstance(codec, ZstdCodec):
        if codec.encoded_bound(1) is None:  # (no libzstd compressor is bound here)
            return None
        level, checksum = codec.level, codec.checksum
    elif isinstance(codec, BloscCodec):
        if (not _writes.blosc_available() or codec.shuffle is None
                or codec.typesize is None):
            return None
        level = codec.clevel
        blosc = (codec.cname.encode(), SHUFFLES.index(codec.shuffle), codec.typesize,
                 codec.blocksize)
    elif isinstance(codec, GzipCodec):
        if not _writes.zlib_available():
            return None
        level = codec.level
    return NativeWriteChain(chain.compressor, level, checksum, chain.checksums, chain.swap,
                            chain.order, blosc)
