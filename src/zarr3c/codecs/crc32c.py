"""The ``crc32c`` codec: a bytes -> bytes checksum.

Zarr v3 ``crc32c`` codec: encoding appends the CRC-32C (Castagnoli) of the data as 4
little-endian bytes; decoding verifies and strips them.  It has no configuration::

    {"name": "crc32c"}

The checksum is numcodecs' ``CRC32C`` (whose ``location="end"`` layout is exactly this one),
backed by ``google_crc32c`` or the ``crc32c`` package.  Decoding returns a view of the payload
(no copy).  A mismatch raises :class:`~zarr3c.errors.ChecksumError`; input shorter than 4
bytes :class:`~zarr3c.errors.ChunkDecodeError`.  The encoded size is the input size + 4, so a
fixed-size chain stays fixed-size (sharding indexes use this codec).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs.base import BytesBytesCodec, as_byte_array, check_config_keys
from zarr3c.errors import ChecksumError, ChunkDecodeError

with warnings.catch_warnings():
    # numcodecs deprecates the `crc32c` package in favour of google_crc32c (either works)
    warnings.simplefilter("ignore", DeprecationWarning)
    from numcodecs.checksum32 import CRC32C as _NumcodecsCRC32C

__all__ = ["Crc32cCodec", "crc32c"]

_CODEC = _NumcodecsCRC32C(location="end")


def crc32c(data: bytes | memoryview | np.ndarray) -> int:
    """The CRC-32C of ``data`` as an unsigned 32-bit integer."""
    return _CODEC.checksum(as_byte_array(data)) & 0xFFFFFFFF


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
        return _CODEC.encode(as_byte_array(data))

    def decode(self, data: bytes | memoryview | np.ndarray) -> np.ndarray:
        buf = as_byte_array(data)
        if buf.nbytes < 4:
            raise ChunkDecodeError(
                f"crc32c: {buf.nbytes} bytes is too short to hold the 4-byte checksum"
            )
        payload = buf[:-4]
        stored = int.from_bytes(buf[-4:].tobytes(), "little")
        computed = crc32c(payload)
        if stored != computed:
            raise ChecksumError(
                f"crc32c: stored checksum {stored:#010x} does not match the data ({computed:#010x})"
            )
        return payload

    def encoded_size(self, size: int) -> int | None:
        return size + 4
