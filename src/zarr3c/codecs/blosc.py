"""The ``blosc`` codec: bytes -> bytes compression with the Blosc (v1) meta-compressor.

Zarr v3 ``blosc`` codec as zarr-python 3, tensorstore and zarrs write it::

    {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle",
                                         "typesize": 4, "blocksize": 0}}

- ``cname``: ``lz4``, ``lz4hc``, ``blosclz``, ``zstd``, ``snappy`` or ``zlib``;
- ``clevel``: 0-9; ``blocksize``: bytes per block, 0 = automatic;
- ``shuffle``: ``noshuffle``, ``shuffle`` (bytes) or ``bitshuffle``;
- ``typesize``: element size in bytes used by the shuffle.

On read, absent fields take zarr-python's defaults (``zstd``, 5, 0); an absent ``typesize``
or ``shuffle`` is filled by :meth:`BloscCodec.evolve` from the array's data type (typesize =
itemsize; ``bitshuffle`` for 1-byte types, else ``shuffle``), as zarr-python does, and the
filled values are written.  Compression runs through ``numcodecs.Blosc`` (GIL released);
corrupt input raises :class:`~zarr3c.errors.ChunkDecodeError`; the frame size in the
header is checked against the chunk's length first (numcodecs trusts it, and would read a
truncated frame past its end).  A decoding capped at a chunk's size
(:meth:`BloscCodec.decode_bounded`, what the pipeline calls) refuses a header whose decoded
size (``nbytes``) is past the cap before c-blosc allocates it.  No partial decoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numcodecs
import numpy as np

from zarr3c.codecs._bounded import compressed_bound
from zarr3c.codecs.base import (
    BytesBytesCodec,
    ChunkSpec,
    as_byte_array,
    check_config_keys,
    parse_choice_field,
    parse_int_field,
)
from zarr3c.codecs.numcodecs_adapter import (
    BLOSC_HEADER_SIZE,
    check_blosc_frame,
    decode_into_with,
    decode_with,
)
from zarr3c.errors import ChunkDecodeError

__all__ = ["CNAMES", "SHUFFLES", "BloscCodec"]

CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
Shuffle = Literal["noshuffle", "shuffle", "bitshuffle"]


@dataclass(frozen=True)
class BloscCodec(BytesBytesCodec):
    """Blosc compression.

    Parameters
    ----------
    cname
        The compressor inside Blosc.
    clevel
        Compression level, 0-9.
    shuffle
        ``"noshuffle"``, ``"shuffle"`` or ``"bitshuffle"``; None: chosen by :meth:`evolve`.
    typesize
        Element size for the shuffle; None: the data type's itemsize, set by :meth:`evolve`.
    blocksize
        Block size in bytes; 0 lets Blosc choose.

    Raises
    ------
    ValueError
        For a ``shuffle`` that is not one of the above.  The other fields are checked when
        read from JSON (:meth:`from_config`, MetadataError).

    Examples
    --------
    >>> from zarr3c.codecs import BloscCodec
    >>> blosc = BloscCodec.from_config(
    ...     {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
    ...      "blocksize": 0}, path="codecs[1]")
    >>> blosc.to_dict()["configuration"]["typesize"]
    2
    >>> bytes(blosc.decode(blosc.encode(b"0123456789" * 10)))[:10]
    b'0123456789'
    """

    name: ClassVar[str] = "blosc"

    cname: str = "zstd"
    clevel: int = 5
    shuffle: Shuffle | None = None
    typesize: int | None = None
    blocksize: int = 0
    _codec: Any = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        codec = numcodecs.Blosc(
            cname=self.cname,
            clevel=self.clevel,
            shuffle=SHUFFLES.index(self.shuffle) if self.shuffle is not None else -1,
            blocksize=self.blocksize,
            typesize=self.typesize,
        )
        object.__setattr__(self, "_codec", codec)

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> BloscCodec:
        config = check_config_keys(
            configuration,
            path=path,
            optional=("cname", "clevel", "shuffle", "typesize", "blocksize"),
        )
        field_path = f"{path}.configuration"
        cname = parse_choice_field(config.get("cname", "zstd"), CNAMES, path=f"{field_path}.cname")
        clevel = parse_int_field(
            config.get("clevel", 5), path=f"{field_path}.clevel", minimum=0, maximum=9
        )
        shuffle: Any = config.get("shuffle")
        if shuffle is not None:
            shuffle = parse_choice_field(shuffle, SHUFFLES, path=f"{field_path}.shuffle")
        typesize = config.get("typesize")
        if typesize is not None:
            typesize = parse_int_field(typesize, path=f"{field_path}.typesize", minimum=1)
        blocksize = parse_int_field(
            config.get("blocksize", 0), path=f"{field_path}.blocksize", minimum=0
        )
        return cls(
            cname=cname, clevel=clevel, shuffle=shuffle, typesize=typesize, blocksize=blocksize
        )

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if self.typesize is not None:
            config["typesize"] = self.typesize
        config["cname"] = self.cname
        config["clevel"] = self.clevel
        if self.shuffle is not None:
            config["shuffle"] = self.shuffle
        config["blocksize"] = self.blocksize
        return {"name": self.name, "configuration": config}

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        itemsize = max(spec.dtype.itemsize, 1)
        typesize = self.typesize if self.typesize is not None else itemsize
        shuffle = self.shuffle
        if shuffle is None:
            shuffle = "bitshuffle" if itemsize == 1 else "shuffle"
        if typesize == self.typesize and shuffle == self.shuffle:
            return self
        return replace(self, typesize=typesize, shuffle=shuffle)

    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        return self._codec.encode(as_byte_array(data))

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes:
        buf = as_byte_array(data)
        check_blosc_frame(buf, self.name)
        return decode_with(self._codec.decode, buf, self.name)

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes:
        buf = as_byte_array(data)
        check_blosc_frame(buf, self.name, max_size)
        return decode_with(self._codec.decode, buf, self.name)

    def max_encoded_size(self, size: int) -> int | None:
        return compressed_bound(size)

    def decode_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                    out: np.ndarray) -> bool:
        # Only a whole frame whose header gives exactly out's size (bytes 4-8: nbytes).
        buf = as_byte_array(data)
        if buf.nbytes < BLOSC_HEADER_SIZE or int.from_bytes(
                buf[4:8].tobytes(), "little") != out.nbytes:
            return False
        try:
            check_blosc_frame(buf, self.name)  # a truncated frame: decode() reports it
        except ChunkDecodeError:
            return False
        return decode_into_with(self._codec.decode, buf, out)
