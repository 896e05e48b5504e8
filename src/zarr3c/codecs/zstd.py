"""The ``zstd`` codec: bytes -> bytes Zstandard compression (RFC 8878).

Zarr v3 ``zstd`` codec as zarr-python 3, tensorstore and zarrs write it::

    {"name": "zstd", "configuration": {"level": 0, "checksum": false}}

``level`` is an integer from -131072 to 22 (0 is zstd's default level, negative levels are
the fast modes); ``checksum`` stores a frame checksum that decoding verifies.  Both default,
when absent, to what zarr-python writes (0 and false) and are always written.  Corrupt input
raises :class:`~zarr3c.errors.ChunkDecodeError`, a frame checksum mismatch
:class:`~zarr3c.errors.ChecksumError`.

Which libzstd: at import this module hands :mod:`zarr3c._kernels.zstd_ctx` the functions of
the newest libzstd installed whose symbols it can see (``ctypes`` on the extension module
that holds or links it): the standard library's ``compression.zstd`` (Python 3.14+) or its
backport ``backports.zstd`` (``pip install zarr3c[zstd]``) where present, else the one
numcodecs bundles, which stays the fallback; with ``ZARR3C_ZSTD_LIBRARY=numcodecs`` in the
environment, numcodecs', whatever else is installed.  Builds of different versions compress
at different costs (libzstd 1.5.7 took 0.71x the CPU of numcodecs' 1.5.6 on 64 KiB chunks
at the default level: docs/performance.md) and may write different bytes for the same data,
with the same parameters: every frame any of them writes is a standard zstd frame, which
numcodecs, zarr-python, tensorstore and zarrs decode.  Every zarr3c path compresses through
the bound library (:meth:`ZstdCodec.encode`, :meth:`ZstdCodec.encode_into` and the native
write kernel), so that they all write the same bytes; where no library's symbols are
visible (e.g. Windows, whose extension modules export none) numcodecs' ``Zstd`` compresses
and decodes everything.

A decoding capped at a chunk's size (:meth:`ZstdCodec.decode_bounded`, what the pipeline
calls) refuses a frame that declares more content before allocating anything, and decodes
one that declares none into a buffer of the cap, through the kept context below: zstd never
writes past a buffer, so a frame of a few KiB that would inflate to gigabytes (a
decompression bomb) stops at the cap.  Only where no libzstd's symbols are visible is
such a frame decoded whole by numcodecs, then checked.

Decoding into a given buffer (:meth:`ZstdCodec.decode_into`, the hot path of chunk and
inner-chunk reads) goes through a decompression context kept per thread: numcodecs makes a
new context per call, a fixed cost that every inner chunk of a sharded read would pay
(``asv_benchmarks`` ``bench_codecs.ZstdCallCost`` tracks it).  A read that needs only the
start of a chunk decodes only the blocks holding it (:meth:`ZstdCodec.decode_prefix_into`,
through the same context), from a frame that is whole and declares the chunk's size; a frame
with a checksum is decoded whole, so that the checksum is verified.  Compression likewise
goes through a compression context kept per thread, with the parameters numcodecs sets (level
and checksum flag: numcodecs' frames byte for byte where its build is bound), into this
thread's scratch memory (:meth:`ZstdCodec.encode`) or into the caller's
(:meth:`ZstdCodec.encode_into`: a shard's inner chunks, a chunk about to be stored).
:meth:`ZstdCodec.decode` is numcodecs' ``decompress``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numcodecs
import numcodecs.zstd
import numpy as np
from numcodecs.zstd import decompress as _decompress

from zarr3c._buffers import thread_scratch
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
        buf = as_byte_array(data)
        if _COMPRESS:
            # Through the bound libzstd (the one encode_into and the native writes use, so
            # that every path writes the same frames), into this thread's scratch memory
            # rather than a fresh worst-case buffer, then copied out at its size.
            bound = zstd_ctx.compress_bound(buf.nbytes)
            if bound >= 0:
                room = thread_scratch(bound, "zstd")
                try:
                    n = zstd_ctx.compress_into(buf, room, self.level, self.checksum)
                except (ValueError, TypeError, BufferError):  # e.g. a strided view
                    n = -1
                if n >= 0:
                    return room[:n].tobytes()
        return self._codec.encode(buf)

    def encoded_bound(self, nbytes: int) -> int | None:
        if not _COMPRESS:
            return None
        bound = zstd_ctx.compress_bound(nbytes)
        return bound if bound >= 0 else None

    def encode_into(self, data: bytes | memoryview | np.ndarray, out: np.ndarray) -> int | None:
        # encode's frame (same library, same parameters), through a context kept per thread
        # and into the caller's memory rather than a new bytes object.
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

#: libzstd's decoder, which a library must export to be bound at all
_DECODE_FUNCTIONS = ("ZSTD_createDCtx", "ZSTD_freeDCtx", "ZSTD_decompressDCtx", "ZSTD_isError")

#: libzstd's buffer-less decoder (and the frame checks before it), for prefix decoding
_PREFIX_FUNCTIONS = ("ZSTD_decompressBegin", "ZSTD_nextSrcSizeToDecompress",
                     "ZSTD_decompressContinue", "ZSTD_findFrameCompressedSize",
                     "ZSTD_getFrameContentSize")

#: libzstd's compressor, as numcodecs calls it (for encode and encode_into)
_COMPRESS_FUNCTIONS = ("ZSTD_createCCtx", "ZSTD_freeCCtx", "ZSTD_CCtx_setParameter",
                       "ZSTD_compress2", "ZSTD_compressBound")

#: The environment variable that, set to ``numcodecs`` at import, binds numcodecs' libzstd
#: whatever else is installed (to compare the builds, or to rule the others out)
_LIBRARY_ENV = "ZARR3C_ZSTD_LIBRARY"


class _Candidate(NamedTuple):
    """A Python package whose extension module holds (or links) a libzstd."""

    name: str  # the package, as the docs and reports name it
    module: str  # the extension module's import name


#: The libzstd builds zarr3c can bind, preferred in this order at the same version: the
#: standard library's ``compression.zstd`` (Python 3.14+, PEP 784: its ``_zstd`` links the
#: system's libzstd or holds one) and its backport (the ``zstd`` extra), then the one numcodecs
#: bundles.  Each is called through its file's symbols, never through its Python API.
_CANDIDATES = (
    _Candidate("compression.zstd", "_zstd"),
    _Candidate("backports.zstd", "backports.zstd._zstd"),
    _Candidate("numcodecs", "numcodecs.zstd"),
)


class _Libzstd(NamedTuple):
    """The libzstd :mod:`zarr3c._kernels.zstd_ctx` is bound to."""

    name: str  # the candidate's name
    version: int  # its ZSTD_versionNumber(): 10507 is 1.5.7
    path: str  # the file ctypes loaded it from
    compresses: bool  # whether it exports the compressor

    @property
    def release(self) -> str:
        """The version as zstd writes it (``"1.5.7"``)."""
        v = self.version
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def _open_libzstd(candidate: _Candidate) -> tuple[ctypes.CDLL, _Libzstd] | None:
    """``candidate``'s library and what it is, if its decoder's symbols are visible (e.g.
    not on Windows, where an extension module exports none) and it is recent enough."""
    try:
        spec = importlib.util.find_spec(candidate.module)
    except Exception:  # a package above it that is absent or fails to import: not this one
        return None
    if spec is None or not spec.has_location or not spec.origin:
        return None  # not installed, or built into the interpreter
    try:
        lib = ctypes.CDLL(spec.origin)
        version_number = lib.ZSTD_versionNumber
        version_number.restype = ctypes.c_uint
        version = int(version_number())
        for name in _DECODE_FUNCTIONS:
            getattr(lib, name)
        compresses = all(hasattr(lib, name) for name in _COMPRESS_FUNCTIONS)
    except (OSError, AttributeError):
        return None
    if version < _MIN_ZSTD_VERSION:
        return None
    return lib, _Libzstd(candidate.name, version, spec.origin, compresses)


def _choose_libzstd(candidates: tuple[_Candidate, ...]
                    ) -> tuple[ctypes.CDLL, _Libzstd] | None:
    """The newest of the ``candidates`` whose symbols are visible, one with a compressor
    first, the earlier on a tie (None if none is).  Different versions of libzstd compress
    at different speeds (1.5.7 took 0.71x the CPU of 1.5.6 on 64 KiB chunks at the default
    level: docs/performance.md), and any of them decodes the frames of every other."""
    found = [opened for c in candidates if (opened := _open_libzstd(c)) is not None]
    if not found:
        return None
    return max(found, key=lambda item: (item[1].compresses, item[1].version))


def _bind_libzstd() -> _Libzstd | None:
    """Hand :mod:`zarr3c._kernels.zstd_ctx` the libzstd :func:`_choose_libzstd` picks (only
    numcodecs' where :data:`_LIBRARY_ENV` says so); None where none can be bound."""
    candidates: tuple[_Candidate, ...] = _CANDIDATES
    if os.environ.get(_LIBRARY_ENV) == "numcodecs":
        candidates = tuple(c for c in _CANDIDATES if c.name == "numcodecs")
    chosen = _choose_libzstd(candidates)
    if chosen is None:
        return None
    lib, found = chosen

    def address(name: str) -> int:
        try:
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
        except AttributeError:  # not exported: prefix decoding only lacks it
            return 0

    create, free, decompress, is_error = (address(name) for name in _DECODE_FUNCTIONS)
    try:
        zstd_ctx.bind(create, free, decompress, is_error, found.version,
                      *(address(name) for name in _PREFIX_FUNCTIONS))
        if found.compresses:  # else numcodecs compresses, as everywhere without symbols
            zstd_ctx.bind_compress(*(address(name) for name in _COMPRESS_FUNCTIONS))
    except ValueError:
        return None
    return found if zstd_ctx.available() else None


#: The libzstd zstd_ctx calls (None: numcodecs' functions do everything)
_LIBZSTD = _bind_libzstd()
#: Whether decode_into goes through zstd_ctx (else numcodecs' decompress)
_CONTEXTS = _LIBZSTD is not None
#: Whether encode and encode_into compress through a kept context (else numcodecs' compress,
#: and encode_into refuses)
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
