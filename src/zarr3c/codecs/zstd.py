"""The ``zstd`` codec: bytes -> bytes Zstandard compression (RFC 8878).

Zarr v3 ``zstd`` codec as zarr-python 3, tensorstore and zarrs write it::

    {"name": "zstd", "configuration": {"level": 0, "checksum": false}}

``level`` is an integer from -131072 to 22 (0 is zstd's default level, negative levels are
the fast modes); ``checksum`` stores a frame checksum that decoding verifies.  Both default,
when absent, to what zarr-python writes (0 and false) and are always written.  Compression
runs through ``numcodecs.Zstd`` (GIL released).  Corrupt input raises
:class:`~zarr3c.errors.ChunkDecodeError`, a frame checksum mismatch
:class:`~zarr3c.errors.ChecksumError`.

A decoding capped at a chunk's size (:meth:`ZstdCodec.decode_bounded`, what the pipeline
calls) refuses a frame that declares more content before allocating anything, and decodes
one that declares none into a buffer of the cap, through the kept context below: zstd never
writes past a buffer, so a frame of a few KiB that would inflate to gigabytes (a
decompression bomb) stops at the cap.  Only where numcodecs' libzstd symbols are not
visible is such a frame decoded whole by numcodecs, then checked.

Decoding into a given buffer (:meth:`ZstdCodec.decode_into`, the hot path of chunk and
inner-chunk reads) calls numcodecs' own bundled libzstd with a decompression context kept
per thread (:mod:`zarr3c._kernels.zstd_ctx`), where that library's symbols are visible:
numcodecs makes a new context per call, a fixed cost that every inner chunk of a sharded read
would pay (``asv_benchmarks`` ``bench_codecs.ZstdCallCost`` tracks it).  Elsewhere it falls
back to numcodecs' ``decompress``.  A read that needs only the start of a chunk decodes only the
blocks holding it (:meth:`ZstdCodec.decode_prefix_into`, through the same context), from a
frame that is whole and declares the chunk's size; a frame with a checksum is decoded whole,
so that the checksum is verified.  Writes that keep the encodings in their own memory (a
shard's inner chunks, a chunk about to be stored) compress into it the same way
(:meth:`ZstdCodec.encode_into`): numcodecs' frames, byte for byte, through a compression
context kept per thread.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numcodecs
import numcodecs.zstd
import numpy as np
from numcodecs.zstd import decompress as _decompress

from zarr3c._kernels import zstd_ctx
from zarr3c.codecs._bounded import (
    check_claimed_size,
    check_decoded_size,
    compressed_bound,
    too_large,
)
from zarr3c.codecs.base import (
    BytesBytesCodec,
    as_byte_array,
    check_config_keys,
    parse_bool_field,
    parse_int_field,
)
from zarr3c.codecs.numcodecs_adapter import decode_into_with, decode_with
from zarr3c.errors import ChecksumError, ChunkDecodeError

__all__ = ["MAX_LEVEL", "MIN_LEVEL", "ZstdCodec", "decode_frames_bounded"]

#: zstd's level range (ZSTD_minCLevel() is -(1 << 17))
MIN_LEVEL = -(1 << 17)
MAX_LEVEL = 22


@dataclass(frozen=True)
class ZstdCodec(BytesBytesCodec):
    """Zstandard compression.

    Parameters
    ----------
    level
        Compression level, -131072 to 22; 0 means zstd's default (3).
    checksum
        Whether to store (and verify) a checksum of each frame.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config`, for a level outside the range or a checksum that is not a
        boolean.

    Examples
    --------
    >>> from zarr3c.codecs import ZstdCodec
    >>> codec = ZstdCodec.from_config({"level": 3, "checksum": True}, path="codecs[1]")
    >>> bytes(codec.decode(codec.encode(b"abc" * 100)))[:6]
    b'abcabc'
    >>> codec.to_dict()
    {'name': 'zstd', 'configuration': {'level': 3, 'checksum': True}}
    """

    name: ClassVar[str] = "zstd"

    level: int = 0
    checksum: bool = False
    _codec: Any = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_codec", numcodecs.Zstd(level=self.level, checksum=self.checksum))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> ZstdCodec:
        config = check_config_keys(configuration, path=path, optional=("level", "checksum"))
        level = parse_int_field(
            config.get("level", 0),
            path=f"{path}.configuration.level",
            minimum=MIN_LEVEL,
            maximum=MAX_LEVEL,
        )
        checksum = parse_bool_field(
            config.get("checksum", False), path=f"{path}.configuration.checksum"
        )
        return cls(level=level, checksum=checksum)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "configuration": {"level": self.level, "checksum": self.checksum},
        }

    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        return self._codec.encode(as_byte_array(data))

    def encoded_bound(self, nbytes: int) -> int | None:
        if not _COMPRESS:
            return None
        bound = zstd_ctx.compress_bound(nbytes)
        return bound if bound >= 0 else None

    def encode_into(self, data: bytes | memoryview | np.ndarray, out: np.ndarray) -> int | None:
        # numcodecs' frame (same library, same parameters), through a context kept per
        # thread and into the caller's memory rather than a new bytes object.
        if not _COMPRESS:
            return None
        try:
            n = zstd_ctx.compress_into(as_byte_array(data), out, self.level, self.checksum)
        except (ValueError, TypeError, BufferError):  # not a writable uint8 buffer
            return None
        return n if n >= 0 else None

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        buf = as_byte_array(data)
        try:
            # (numcodecs' decompress itself: Zstd.decode only checks the buffer again, a few
            # microseconds per chunk, which a shard's thousands of inner chunks feel)
            return decode_with(_decompress, buf, self.name)
        except MemoryError as exc:
            # numcodecs allocates the size a frame header declares: a corrupt header asks
            # for terabytes.  Without a declared size it is a real shortage: re-raise it.
            declared = _frame_content_size(buf)
            if declared is None:
                raise
            raise ChunkDecodeError(
                f"zstd: the frame declares {declared} decoded bytes, which cannot be "
                "allocated (corrupt frame header?)"
            ) from exc

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | np.ndarray:
        if max_size is None:
            return self.decode(data)
        return decode_frames_bounded(as_byte_array(data), max_size, self.name)

    def max_encoded_size(self, size: int) -> int | None:
        return compressed_bound(size)

    def decode_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                    out: np.ndarray) -> bool:
        # Only content of exactly out's size.  Through a kept context (zstd_ctx) zstd says
        # how much it decoded; numcodecs does not (it would fill a larger buffer partly
        # without complaint), so there the frame must declare out's size, which zstd checks
        # against the content.
        buf = as_byte_array(data)
        if _CONTEXTS:
            try:
                return zstd_ctx.decompress_into(buf, out) == out.nbytes
            except (ValueError, TypeError, BufferError):  # not a writable uint8 buffer
                return False
        return (_frame_content_size(buf) == out.nbytes
                and decode_into_with(_decompress_into, buf, out))

    def decode_prefix_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                           out: np.ndarray, need: int) -> bool:
        # Through a kept context only: one frame declaring out's size, whole (its block
        # headers walked to the end) and without a checksum, else the caller's whole decode.
        if not _PREFIX:
            return False
        try:
            return zstd_ctx.decompress_prefix_into(as_byte_array(data), out, need) >= need
        except (ValueError, TypeError, BufferError):  # not a writable uint8 buffer
            return False

    def batch_kernels(self) -> Any | None:
        # Through a kept context only (the batch without the GIL in between).
        return zstd_ctx if _CONTEXTS else None


#: The oldest libzstd whose ``ZSTD_decompressDCtx`` zstd_ctx relies on (1.4.0, where the
#: advanced API it sits beside became stable)
_MIN_ZSTD_VERSION = 10400


#: libzstd's buffer-less decoder (and the frame checks before it), for prefix decoding
_PREFIX_FUNCTIONS = ("ZSTD_decompressBegin", "ZSTD_nextSrcSizeToDecompress",
                     "ZSTD_decompressContinue", "ZSTD_findFrameCompressedSize",
                     "ZSTD_getFrameContentSize")


def _bind_numcodecs_libzstd() -> bool:
    """Hand :mod:`zarr3c._kernels.zstd_ctx` the libzstd inside ``numcodecs.zstd``'s extension
    module; False where its symbols cannot be found (e.g. not exported on this platform) or
    it is too old."""
    try:
        lib = ctypes.CDLL(numcodecs.zstd.__file__)
        version_number = lib.ZSTD_versionNumber
        version_number.restype = ctypes.c_uint
        version = int(version_number())
        if version < _MIN_ZSTD_VERSION:
            return False

        def address(name: str) -> int:
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0

        def optional(name: str) -> int:
            try:
                return address(name)
            except AttributeError:  # not exported: no prefix decoding, the rest works
                return 0

        zstd_ctx.bind(address("ZSTD_createDCtx"), address("ZSTD_freeDCtx"),
                      address("ZSTD_decompressDCtx"), address("ZSTD_isError"), version,
                      *(optional(name) for name in _PREFIX_FUNCTIONS))
        compress = [optional(name) for name in _COMPRESS_FUNCTIONS]
        if all(compress):  # else numcodecs compresses, as everywhere without symbols
            zstd_ctx.bind_compress(*compress)
    except (OSError, AttributeError, ValueError, TypeError):
        return False
    return bool(zstd_ctx.available())


#: libzstd's compressor, as numcodecs calls it (for encode_into)
_COMPRESS_FUNCTIONS = ("ZSTD_createCCtx", "ZSTD_freeCCtx", "ZSTD_CCtx_setParameter",
                       "ZSTD_compress2", "ZSTD_compressBound")

#: Whether decode_into goes through zstd_ctx (else numcodecs' decompress)
_CONTEXTS = _bind_numcodecs_libzstd()
#: Whether encode_into can compress through a kept context (else it refuses)
_COMPRESS = _CONTEXTS and zstd_ctx.compress_available()
#: Whether decode_prefix_into can decode only the start of a frame (else it refuses)
_PREFIX = _CONTEXTS and zstd_ctx.prefix_available()


#: libzstd's messages (ZSTD_getErrorName) for the error codes a corrupt frame gives
_ERROR_NAMES = {1: "Error (generic)", 10: "Unknown frame descriptor",
                12: "Version not supported", 14: "Unsupported frame parameter",
                16: "Frame requires too much memory for decoding",
                20: "Data corruption detected", 22: "Restored data doesn't match checksum",
                70: "Destination buffer is too small", 72: "Src size is incorrect"}


def decode_frames_bounded(buf: np.ndarray, max_size: int, what: str) -> bytes | np.ndarray:
    """Decode the zstd frames ``buf`` into at most ``max_size`` bytes (``what`` names the
    codec in errors); shared by ``zstd`` and ``numcodecs.zstd``.

    A frame that declares a larger content size is refused before anything is allocated.
    Through a kept context (:mod:`zarr3c._kernels.zstd_ctx`), zstd decodes into a buffer of
    the declared size, or of ``max_size`` where none is declared, and never writes past it;
    without one, numcodecs decodes a frame declaring its size into that size, and one that
    declares none (or 0) whole, streaming, before the size is checked: the residual where
    numcodecs' libzstd symbols are not visible.

    Raises
    ------
    ChunkDecodeError
        Content past ``max_size`` (the codec named), or a corrupt frame; ChecksumError for
        a frame checksum mismatch.
    """
    declared = _frame_content_size(buf)
    if declared is not None:
        check_claimed_size(declared, max_size, what)
    if not _CONTEXTS:
        if declared:  # numcodecs allocates the declared size, checked above
            return decode_with(_decompress, buf, what)
        return check_decoded_size(decode_with(_decompress, buf, what), max_size, what)
    out = np.empty(declared or max_size, dtype=np.uint8)
    n = zstd_ctx.decompress_bounded(buf, out)
    if n >= 0:
        return out[:n]
    code = -n
    if code == zstd_ctx.ERROR_DST_SIZE_TOO_SMALL and not declared:
        raise too_large(what, max_size)
    message = f"Zstd decompression error: {_ERROR_NAMES.get(code, f'error code {code}')}"
    if code == zstd_ctx.ERROR_CHECKSUM_WRONG:
        raise ChecksumError(f"{what}: checksum mismatch ({message})")
    raise ChunkDecodeError(f"{what}: cannot decode ({message})")


def _decompress_into(data: np.ndarray, out: np.ndarray) -> Any:
    return _decompress(data, out)


def _frame_content_size(buf: np.ndarray) -> int | None:
    """The content size a zstd frame header declares (None if absent or unreadable)."""
    head = bytes(buf[:18])
    if len(head) < 5 or head[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = head[4]
    fcs_flag, single_segment, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    start = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    if size == 0 or len(head) < start + size:
        return None
    value = int.from_bytes(head[start:start + size], "little")
    return value + 256 if size == 2 else value
