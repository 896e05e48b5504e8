"""The ``gzip`` codec: bytes -> bytes compression in the gzip format (RFC 1952).

Zarr v3 ``gzip`` codec (as zarr-python 3, tensorstore and zarrs write it); ``level`` (0-9) is
required::

    {"name": "gzip", "configuration": {"level": 5}}

Compression is one gzip member as ``zlib.compress(data, level, wbits=31)`` writes it (the GIL
released while it deflates): zlib's own header, with no modification time, so an encoding
depends on the data and level alone (and the native pipeline's writes give the same bytes;
``numcodecs.GZip`` would stamp the time of compression in bytes 4-7).  Corrupt input raises
:class:`~zarr3c.errors.ChunkDecodeError`.  No partial decoding.  A decoding capped at a
chunk's size (:meth:`GzipCodec.decode_bounded`, what the pipeline calls) inflates through a
``zlib`` decompressor object that stops one byte past the cap, so a few MiB that would
inflate to gigabytes (a decompression bomb) are refused there; members are read one after
another as ``gzip.GzipFile`` reads them.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numcodecs
import numpy as np

from zarr3c.codecs._bounded import compressed_bound, gunzip
from zarr3c.codecs.base import BytesBytesCodec, as_byte_array, check_config_keys, parse_int_field
from zarr3c.codecs.numcodecs_adapter import decode_with

__all__ = ["GzipCodec"]

#: zlib's windowBits for a gzip wrapper (16) around the largest window (15)
_GZIP_WBITS = 16 + 15


@dataclass(frozen=True)
class GzipCodec(BytesBytesCodec):
    """gzip compression.

    Parameters
    ----------
    level
        Compression level, 0 (none) to 9 (best).

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config`, for a missing level or one outside 0-9.

    Examples
    --------
    >>> from zarr3c.codecs import GzipCodec
    >>> codec = GzipCodec.from_config({"level": 1}, path="codecs[1]")
    >>> bytes(codec.decode(codec.encode(b"abc" * 100)))[:6]
    b'abcabc'
    >>> codec.to_dict()
    {'name': 'gzip', 'configuration': {'level': 1}}
    """

    name: ClassVar[str] = "gzip"

    level: int = 5
    _codec: Any = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_codec", numcodecs.GZip(level=self.level))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> GzipCodec:
        config = check_config_keys(configuration, path=path, required=("level",))
        level = parse_int_field(
            config["level"], path=f"{path}.configuration.level", minimum=0, maximum=9
        )
        return cls(level=level)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"level": self.level}}

    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        view = as_byte_array(data).data  # (a memoryview: zlib takes any buffer)
        return zlib.compress(view, self.level, wbits=_GZIP_WBITS)

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        return decode_with(self._codec.decode, as_byte_array(data), self.name)

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes:
        if max_size is None:
            return self.decode(data)
        return gunzip(as_byte_array(data), max_size, self.name)

    def max_encoded_size(self, size: int) -> int | None:
        return compressed_bound(size)
