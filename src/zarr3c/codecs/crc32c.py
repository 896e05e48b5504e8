"""The ``crc32c`` codec: a bytes -> bytes checksum.

Zarr v3 ``crc32c`` codec: encoding appends the CRC-32C (Castagnoli) of the data as 4
little-endian bytes; decoding verifies and strips them.  It has no configuration::

    {"name": "crc32c"}

The checksum is zarr3c's compiled kernel :func:`zarr3c._kernels.checksum.crc32c` (the CPU's
CRC instruction where there is one, with the GIL released for large chunks), which the tests
hold to numcodecs' ``CRC32C`` (whose ``location="end"`` layout is exactly this one) and to a
bitwise reference.  Decoding returns a view of the payload (no copy).  A mismatch raises
:class:`~zarr3c.errors.ChecksumError`; input shorter than 4 bytes
:class:`~zarr3c.errors.ChunkDecodeError`.  The encoded size is the input size + 4, so a
fixed-size chain stays fixed-size (sharding indexes use this codec).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c._kernels import checksum as _checksum
from zarr3c.codecs.base import BytesBytesCodec, as_byte_array, check_config_keys
from zarr3c.errors import ChecksumError, ChunkDecodeError

__all__ = ["Crc32cCodec", "crc32c"]


def _bytes_of(data: bytes | memoryview | np.ndarray) -> np.ndarray:
    """``data`` as one contiguous run of bytes (the kernel reads a contiguous buffer)."""
    buf = as_byte_array(data)
    # as_byte_array passes a strided 1-d uint8 array through as it is
    return buf if buf.flags.c_contiguous else np.ascontiguousarray(buf)


def crc32c(data: bytes | memoryview | np.ndarray) -> int:
    """The CRC-32C (Castagnoli) of the bytes of ``data``.

    Parameters
    ----------
    data
        Any bytes-like object or numpy array; an array counts as its bytes in C order.

    Returns
    -------
    int
        The checksum, an unsigned 32-bit integer.

    Examples
    --------
    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    return _checksum.crc32c(_bytes_of(data))


@dataclass(frozen=True)
class Crc32cCodec(BytesBytesCodec):
    """Append (encode) or verify and strip (decode) a CRC-32C checksum.

    The codec takes no parameters.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config`, for any configuration field.

    Examples
    --------
    >>> from zarr3c.codecs import Crc32cCodec
    >>> codec = Crc32cCodec.from_config(None, path="codecs[1]")
    >>> encoded = codec.encode(b"hello")
    >>> len(encoded), bytes(codec.decode(encoded))
    (9, b'hello')
    >>> codec.decode(b"jello" + bytes(encoded[5:]))
    Traceback (most recent call last):
    ...
    zarr3c.errors.ChecksumError: crc32c: stored checksum 0x9a71bb4c does not match the data (0x...)
    """

    name: ClassVar[str] = "crc32c"

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> Crc32cCodec:
        check_config_keys(configuration, path=path)
        return cls()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name}

    def encode(self, data: bytes | memoryview | np.ndarray) -> np.ndarray:
        buf = _bytes_of(data)
        n = buf.nbytes
        out = np.empty(n + 4, dtype=np.uint8)
        out[:n] = buf
        out[n:] = np.frombuffer(_checksum.crc32c(buf).to_bytes(4, "little"), dtype=np.uint8)
        return out

    def decode(self, data: bytes | memoryview | np.ndarray) -> np.ndarray:
        buf = _bytes_of(data)
        if buf.nbytes < 4:
            raise ChunkDecodeError(
                f"crc32c: {buf.nbytes} bytes is too short to hold the 4-byte checksum"
            )
        payload = buf[:-4]
        stored = int.from_bytes(buf[-4:].tobytes(), "little")
        computed = _checksum.crc32c(payload)
        if stored != computed:
            raise ChecksumError(
                f"crc32c: stored checksum {stored:#010x} does not match the data "
                f"({computed:#010x})"
            )
        return payload

    def encoded_size(self, size: int) -> int | None:
        return size + 4
