"""Decoding with a cap on the output size: what the bytes -> bytes codecs share for
:meth:`~zarr3c.codecs.base.BytesBytesCodec.decode_bounded`.

A stored chunk decodes to a known size, or at most to one (the codec pipeline works it out
from the chunk's shape and data type, :meth:`~zarr3c.codecs.CodecPipeline.decode_caps`),
while a few KiB of compressed data may claim or inflate to gigabytes: a decompression bomb.
So each decoder stops at the cap (plus one byte, to tell "exactly the cap" from "more"),
before allocating or inflating anything larger: the stream decompressors (zlib, gzip, bz2,
lzma) through the ``max_length`` Python's decompressor objects take, the formats that state
their decoded size in a header (blosc, the numcodecs lz4 prefix, a zstd frame that declares
its content size) by checking that size first, and a zstd frame that does not by decoding
into a buffer of the cap (zstd never writes past it).  The error names the codec; the
pipeline adds the chunk's key.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from zarr3c.errors import ChunkDecodeError

__all__ = ["bunzip2", "check_claimed_size", "check_decoded_size", "compressed_bound",
           "decompress_streams", "gunzip", "inflate_zlib", "too_large", "unxz"]

#: Fixed room a compressed encoding may take beyond its data (headers, trailers, block
#: headers of tiny inputs, a gzip file name), in :func:`compressed_bound`
_FIXED_OVERHEAD = 4096

#: What the stream decompressors raise for input they cannot decode
_STREAM_ERRORS = (zlib.error, OSError, EOFError, ValueError, TypeError, lzma.LZMAError)


def compressed_bound(nbytes: int, *, shift: int = 6) -> int:
    """A generous bound on the compressed size of ``nbytes`` bytes: ``nbytes`` plus
    ``nbytes >> shift`` plus 4 KiB.

    Above the worst cases the libraries document (zstd's ``ZSTD_compressBound``: about
    1/256; deflate's stored blocks: 5 bytes per 64 KiB; bzip2: 1% + 600 bytes; LZ4: 1/255;
    c-blosc: 16 bytes), with room for what other writers add; LZMA1 (``lzma``'s ``alone``
    and raw formats), which has no stored fallback, expands random data by about 1.4%
    (``shift=5``).
    """
    return nbytes + (nbytes >> shift) + _FIXED_OVERHEAD


def too_large(what: str, max_size: int, claimed: int | None = None) -> ChunkDecodeError:
    """The error of a decoding past ``max_size`` bytes (``claimed``: the size a header
    states, when that is how it was caught)."""
    if claimed is not None:
        return ChunkDecodeError(
            f"{what}: the data claims {claimed} decoded bytes, more than the {max_size} a "
            "chunk here can hold (refused before decoding)")
    return ChunkDecodeError(
        f"{what}: the data decodes to more than {max_size} bytes, the most a chunk here can "
        "hold (decoding stopped there)")


def check_claimed_size(claimed: int, max_size: int | None, what: str) -> None:
    """Refuse a header's ``claimed`` decoded size beyond ``max_size`` (None: no cap)."""
    if max_size is not None and claimed > max_size:
        raise too_large(what, max_size, claimed)


def check_decoded_size(out: Any, max_size: int | None, what: str) -> Any:
    """``out`` (a decoding already made), or the error if it is past ``max_size``: for the
    decoders that cannot stop early (the residual) or whose output is never larger than
    their input (checksums, shuffle)."""
    if max_size is not None:
        n = out.nbytes if isinstance(out, np.ndarray | memoryview) else len(out)
        if n > max_size:
            raise too_large(what, max_size)
    return out


class _Decompressor(Protocol):
    """What :func:`decompress_streams` needs of Python's zlib, bz2 and lzma decompressors."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: Any, /, max_length: int = ...) -> bytes: ...


def decompress_streams(new: Callable[[], _Decompressor], data: Any, max_size: int, what: str,
                       *, several: bool, lenient_tail: bool = False,
                       skip_zeros: bool = False) -> bytes:
    """Decompress ``data`` with decompressor objects ``new()`` into at most ``max_size``
    bytes, or raise.

    One stream, or with ``several`` one after another as long as input is left (gzip
    members, bzip2 and xz streams), as the stdlib's one-shot functions do: with
    ``lenient_tail``, input after the first stream that is not a stream is ignored
    (``bz2.decompress``, ``lzma.decompress``); with ``skip_zeros``, zero bytes between
    members are (``gzip``).  Each call asks for no more than what is left of the cap plus
    one byte, so a bomb stops there.

    Raises
    ------
    ChunkDecodeError
        Past ``max_size`` bytes, for corrupt input, or for a stream that ends early.
    """
    limit = max_size + 1
    parts: list[bytes] = []
    total = 0
    rest: Any = data
    while True:
        try:
            decompressor = new()
            out = decompressor.decompress(rest, limit - total)
        except _STREAM_ERRORS as exc:
            if parts and lenient_tail:
                break
            raise ChunkDecodeError(
                f"{what}: cannot decode ({type(exc).__name__}: {exc})") from exc
        total += len(out)
        parts.append(out)
        if total > max_size:
            raise too_large(what, max_size)
        if not decompressor.eof:  # every input consumed below the cap, and no end marker
            raise ChunkDecodeError(
                f"{what}: cannot decode (the compressed data ends before the end-of-stream "
                "marker: truncated)")
        rest = decompressor.unused_data
        if skip_zeros:
            rest = rest.lstrip(b"\0")
        if not several or not rest:
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)


def gunzip(data: Any, max_size: int, what: str) -> bytes:
    """gzip members (RFC 1952) decompressed into at most ``max_size`` bytes, as
    ``gzip.GzipFile`` (numcodecs' ``GZip``) reads them: member after member, zero padding
    between them skipped."""
    return decompress_streams(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), data, max_size,
                              what, several=True, skip_zeros=True)


def inflate_zlib(data: Any, max_size: int, what: str) -> bytes:
    """One zlib stream (RFC 1950) decompressed into at most ``max_size`` bytes, as
    ``zlib.decompress`` (numcodecs' ``Zlib``) reads it: bytes after it are ignored."""
    return decompress_streams(lambda: zlib.decompressobj(), data, max_size, what,
                              several=False)


def bunzip2(data: Any, max_size: int, what: str) -> bytes:
    """bzip2 streams decompressed into at most ``max_size`` bytes, as ``bz2.decompress``
    (numcodecs' ``BZ2``) reads them."""
    return decompress_streams(bz2.BZ2Decompressor, data, max_size, what, several=True,
                              lenient_tail=True)


def unxz(data: Any, max_size: int, what: str, *, lzma_format: int, filters: Any) -> bytes:
    """LZMA/xz streams decompressed into at most ``max_size`` bytes, as
    ``lzma.decompress(data, lzma_format, filters=filters)`` (numcodecs' ``LZMA``) reads
    them."""
    return decompress_streams(lambda: lzma.LZMADecompressor(lzma_format, None, filters), data,
                              max_size, what, several=True, lenient_tail=True)
