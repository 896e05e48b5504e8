"""The ``bytes`` codec: the array -> bytes serializer of the Zarr v3 codec chain.

Zarr v3 ``bytes`` codec (the 2022 draft core spec's "default binary representation", made an
explicit codec): elements are written in C order, each in the configured byte order.  The
``endian`` field may be omitted only for data types without a byte order (itemsize 1, and raw
``r*`` bytes), exactly as zarr-python 3 writes them::

    {"name": "bytes", "configuration": {"endian": "little"}}
    {"name": "bytes"}                                   # uint8, bool, int8, r*

``endian`` is the name early v3 writers (zarrita, zarr-python 3 alphas) used for the same codec
with the same configuration; it is read and written back under that name.

Decoding is zero-copy when the stored byte order is native (the result is a possibly
read-only view of the stored bytes); otherwise the bytes are copied once and swapped in place
by :func:`zarr3c._kernels.copy.byteswap`.  Every encoded chunk of a given shape has the same
size, so the format supports partial decoding by byte range (used by sharding).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from zarr3c._kernels.copy import byteswap
from zarr3c.codecs.base import (
    ArrayBytesCodec,
    ChunkSpec,
    as_byte_array,
    check_config_keys,
    has_byte_order,
    native_dtype,
    swap_width,
)
from zarr3c.errors import ChunkDecodeError, MetadataError

__all__ = ["BytesCodec", "Endian", "EndianCodec"]

Endian = Literal["little", "big"]

_NATIVE: Endian = "little" if sys.byteorder == "little" else "big"


@dataclass(frozen=True)
class BytesCodec(ArrayBytesCodec):
    """Serialize a chunk as its elements' bytes in C order.

    Parameters
    ----------
    endian
        ``"little"`` or ``"big"``; ``None`` (configuration absent) is only valid for data
        types without a byte order.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for another ``endian``, and from :meth:`validate` for a
        missing one where the data type has a byte order.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import BytesCodec, ChunkSpec
    >>> codec = BytesCodec.from_config({"endian": "little"}, path="codecs[0]")
    >>> spec = ChunkSpec((2,), np.dtype("uint16"), np.zeros((), "uint16"))
    >>> bytes(codec.encode(np.array([1, 2], "uint16"), spec))
    b'\\x01\\x00\\x02\\x00'
    >>> codec.to_dict()
    {'name': 'bytes', 'configuration': {'endian': 'little'}}
    """

    name: ClassVar[str] = "bytes"

    endian: Endian | None = "little"

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> BytesCodec:
        config = check_config_keys(configuration, path=path, optional=("endian",))
        endian = config.get("endian")
        if "endian" in config and endian not in ("little", "big"):
            raise MetadataError(
                f"must be 'little' or 'big', got {endian!r}", path=f"{path}.configuration.endian"
            )
        return cls(endian=endian)

    def to_dict(self) -> dict[str, Any]:
        if self.endian is None:
            return {"name": self.name}
        return {"name": self.name, "configuration": {"endian": self.endian}}

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if spec.dtype.hasobject:
            raise MetadataError(
                f"cannot serialize data type {spec.dtype} (not fixed-size)", path=path
            )
        # zarr-python 3 reads a struct without ``endian`` as little-endian (arrays written
        # before it required the field): so does zarr3c, see _width.
        if self.endian is None and has_byte_order(spec.dtype) and spec.dtype.fields is None:
            raise MetadataError(
                f"is required for data type {spec.dtype} (itemsize {spec.dtype.itemsize})",
                path=f"{path}.configuration.endian",
            )

    def evolve(self, spec: ChunkSpec) -> BytesCodec:
        """Drop ``endian`` where the data type has no byte order, as zarr-python 3.4 does
        (``S``/``V`` bytes, one-byte types, structs of one-byte fields).

        Parameters
        ----------
        spec : ChunkSpec
            The chunks the codec serializes.

        Returns
        -------
        BytesCodec
            This codec, or one without ``endian``.

        Raises
        ------
        None
            Any data type is accepted here (:meth:`validate` checks them).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec
        >>> spec = ChunkSpec((2,), np.dtype("S4"), np.zeros((), "S4"))
        >>> BytesCodec(endian="little").evolve(spec).to_dict()
        {'name': 'bytes'}
        """
        if self.endian is not None and not has_byte_order(spec.dtype):
            return type(self)(endian=None)
        return self

    def _width(self, dtype: np.dtype) -> int:
        """The swap width for ``dtype`` in this codec's byte order; 1 when nothing to swap."""
        endian = self.endian
        if endian is None and dtype.fields is not None:
            endian = "little"
        if endian is None or endian == _NATIVE:
            return 1
        return swap_width(dtype)

    def _stored_struct(self, dtype: np.dtype) -> np.dtype:
        """A structured dtype in the stored byte order (numpy swaps each field by its own
        width, nested structs and UTF-32 code units included)."""
        return dtype.newbyteorder(">" if (self.endian or "little") == "big" else "<")

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        dtype = native_dtype(chunk.dtype)
        if chunk.dtype != dtype:
            chunk = chunk.astype(dtype)
        width = self._width(dtype)
        if width > 1 and dtype.fields is not None:
            return as_byte_array(np.ascontiguousarray(chunk).astype(self._stored_struct(dtype)))
        src = as_byte_array(chunk)
        if width == 1:
            # Aliases the chunk: the caller (pipeline) documents that encode's result may.
            return src
        out = src.copy()
        byteswap(out, width)
        return out

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        buf = as_byte_array(data)
        expected = spec.nbytes
        if buf.nbytes != expected:
            raise ChunkDecodeError(
                f"bytes codec: expected {expected} bytes for a chunk of shape "
                f"{list(spec.shape)} and data type {spec.dtype}, got {buf.nbytes}"
            )
        width = self._width(spec.dtype)
        if width > 1 and spec.dtype.fields is not None:
            stored = buf.view(self._stored_struct(spec.dtype)).reshape(spec.shape)
            return stored.astype(spec.dtype)
        if width > 1:
            buf = buf.copy()
            byteswap(buf, width)
        if spec.dtype.itemsize == 0:
            return np.empty(spec.shape, dtype=spec.dtype)
        return buf.view(spec.dtype).reshape(spec.shape)

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return spec.nbytes

    def stores_raw_elements(self, dtype: np.dtype) -> bool:
        return dtype.itemsize > 0 and not dtype.hasobject and self._width(dtype) == 1


@dataclass(frozen=True)
class EndianCodec(BytesCodec):
    """The ``endian`` codec of early v3 writers: :class:`BytesCodec` under its old name."""

    name: ClassVar[str] = "endian"
