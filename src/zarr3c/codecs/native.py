"""Which codec chains the native chunk pipeline decodes (:mod:`zarr3c._kernels.chunks`) and
encodes (:mod:`zarr3c._kernels.writes`).

A chain is native when its stored bytes become the chunk's elements in C order by steps the
kernel has in C: trailing ``crc32c`` codecs (verified and stripped), at most one ``zstd``
(through the libzstd :mod:`zarr3c.codecs.zstd` binds), ``blosc`` (the c-blosc
numcodecs bundles) or ``gzip`` (the zlib Python's ``zlib`` module uses), both bound here,
and the ``bytes`` serializer in either byte order (a byte swap).  Any other codec
(``transpose``, numcodecs' own, a checksum before the compressor) keeps the chain on the
Python path, which is what the native one is tested against.  Codecs: `the Zarr v3 core codecs
<https://zarr-specs.readthedocs.io/en/latest/v3/codecs/index.html>`_.

Writes encode natively the chains without a compressor or with ``zstd`` (``ZstdCodec``'s
frame, byte for byte: the same libzstd and parameters), :class:`NativeWriteChain`; ``blosc`` and
``gzip`` chains are encoded by the Python path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import zlib
from typing import TYPE_CHECKING, NamedTuple

import numcodecs.blosc

from zarr3c._buffers import holds_references
from zarr3c.codecs.base import swap_width
from zarr3c.codecs.blosc import BloscCodec
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.crc32c import Crc32cCodec
from zarr3c.codecs.gzip import GzipCodec
from zarr3c.codecs.zstd import ZstdCodec

try:  # (POSIX builds: the pipeline runs on a pthread pool)
    from zarr3c._kernels import chunks as _chunks
    from zarr3c._kernels import zstd_ctx as _zstd_ctx
except ImportError:  # pragma: no cover - other systems
    _chunks = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from zarr3c.codecs.pipeline import CodecPipeline

__all__ = ["NativeChain", "NativeWriteChain", "native_chain", "native_write_chain"]


def _bind_numcodecs_blosc() -> bool:
    """Hand the native pipeline the c-blosc inside ``numcodecs.blosc``'s extension module
    (``blosc_decompress_ctx``, ``blosc_cbuffer_validate``); False where its symbols cannot
    be found (blosc chains then take the Python path)."""
    if _chunks is None:
        return False
    try:
        lib = ctypes.CDLL(numcodecs.blosc.__file__)
        addresses = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
                     for name in ("blosc_decompress_ctx", "blosc_cbuffer_validate")]
        _chunks.bind_blosc(*addresses)
    except (OSError, AttributeError, ValueError, TypeError):
        return False
    return bool(_chunks.blosc_available())


def _bind_zlib() -> bool:
    """Hand the native pipeline the zlib Python's ``zlib`` module uses (its ``inflate*``
    functions); False where it cannot be found or does not match the build's ``zlib.h``
    (gzip chains then take the Python path)."""
    if _chunks is None:
        return False
    names = ("inflateInit2_", "inflate", "inflateEnd", "inflateReset")
    for where in (ctypes.util.find_library("z"), getattr(zlib, "__file__", None)):
        if not where:
            continue
        try:
            lib = ctypes.CDLL(where)
            _chunks.bind_zlib(*[ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
                                for name in names])
        except (OSError, AttributeError, ValueError, TypeError):
            continue
        if _chunks.zlib_available():
            return True
    return False


#: Whether blosc chains are decoded natively
_BLOSC = _bind_numcodecs_blosc()
#: Whether gzip chains are decoded natively
_GZIP = _bind_zlib()


class NativeChain(NamedTuple):
    """How the native pipeline decodes a chain (the kernel's ``chain`` arguments)."""

    compressor: int  # chunks.NONE, ZSTD, BLOSC or GZIP
    checksums: int  # trailing crc32c codecs
    swap: int  # width of the words to byte-swap (1: none)

    @property
    def decodes_prefixes(self) -> bool:
        """The kernel decodes a chunk only through the block holding the last byte a read
        takes from it (zstd, with a libzstd that can)."""
        return self.compressor == _chunks.ZSTD and bool(_zstd_ctx.prefix_available())


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
    NativeChain(compressor=1, checksums=1, swap=1)
    >>> transpose = {"name": "transpose", "configuration": {"order": [0]}}
    >>> native_chain(CodecPipeline.from_codecs([transpose, "bytes"], dtype="<u2")) is None
    True
    """
    if _chunks is None or pipeline.array_array or not isinstance(pipeline.array_bytes,
                                                                 BytesCodec):
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
    return NativeChain(compressor, checksums, swap)


class NativeWriteChain(NamedTuple):
    """How the native pipeline encodes a chain (the write kernel's ``chain`` arguments)."""

    compressor: int  # chunks.NONE or ZSTD
    level: int  # zstd's
    zstd_checksum: bool  # zstd's own frame checksum
    checksums: int  # trailing crc32c codecs
    swap: int  # width of the words to byte-swap (1: none)


def native_write_chain(pipeline: CodecPipeline) -> NativeWriteChain | None:
    """The :class:`NativeWriteChain` of ``pipeline``, or None where the native pipeline does
    not encode it (a compressor other than ``zstd``, or a chain it does not decode).

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
    NativeWriteChain(compressor=1, level=5, zstd_checksum=False, checksums=0, swap=1)
    >>> gzip = {"name": "gzip", "configuration": {"level": 5}}
    >>> native_write_chain(CodecPipeline.from_codecs(["bytes", gzip], dtype="<u2")) is None
    True
    """
    chain = pipeline.native
    if chain is None or chain.compressor not in (_chunks.NONE, _chunks.ZSTD):
        return None
    level, checksum = 0, False
    if chain.compressor == _chunks.ZSTD:
        zstd = pipeline.bytes_bytes[0]
        assert isinstance(zstd, ZstdCodec)
        if zstd.encoded_bound(1) is None:  # (no libzstd compressor is bound here)
            return None
        level, checksum = zstd.level, zstd.checksum
    return NativeWriteChain(chain.compressor, level, checksum, chain.checksums, chain.swap)
