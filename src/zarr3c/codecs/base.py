"""The codec interface and the representation types of the core spec's codec chain.

Seed 003, "Chunk encoding": each codec has a decoded and an encoded representation, each
either a multi-dimensional array (shape + data type) or a byte string.  Codecs come in three
kinds by the representations they connect: array -> array (``transpose``), array -> bytes
(``bytes``, the serializer; exactly one per chain) and bytes -> bytes (compressors,
checksums).  Arrays passed between codecs are always native-endian numpy arrays; only
array -> bytes codecs deal with byte order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from zarr3c.errors import MetadataError

__all__ = [
    "ArrayArrayCodec",
    "ArrayBytesCodec",
    "BytesBytesCodec",
    "ChunkSpec",
    "Codec",
    "CodecKind",
    "as_byte_array",
    "check_config_keys",
    "has_byte_order",
    "native_dtype",
    "parse_bool_field",
    "parse_choice_field",
    "parse_int_field",
    "swap_width",
]

CodecKind = Literal["array->array", "array->bytes", "bytes->bytes"]


@dataclass(frozen=True, slots=True)
class ChunkSpec:
    """An array representation type: what a chunk looks like at one point of the chain.

    ``dtype`` is native-endian; ``fill_value`` is a 0-d array of that dtype (exact bits).
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    fill_value: np.ndarray

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


class Codec(ABC):
    """A codec as the spec defines it; configured once, then stateless and thread-safe."""

    #: the codec's ``name`` in metadata
    name: ClassVar[str]
    kind: ClassVar[CodecKind]

    @classmethod
    @abstractmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> Codec:
        """Build from the JSON ``configuration`` object (``None`` when absent).

        ``path`` is the JSON path of the codec object (``codecs[1]``); every error is a
        :class:`~zarr3c.errors.MetadataError` naming ``{path}.configuration.<field>``.
        """

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The JSON codec object, ``{"name": ..., "configuration": {...}}``."""

    def validate(self, spec: ChunkSpec, *, path: str) -> None:  # noqa: B027 - optional hook
        """Check the codec can take this decoded representation (MetadataError if not)."""

    def evolve(self, spec: ChunkSpec) -> Codec:
        """Fill in defaults that depend on the array (e.g. blosc typesize); default: self."""
        return self


class ArrayArrayCodec(Codec):
    kind: ClassVar[CodecKind] = "array->array"

    @abstractmethod
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The encoded representation for a decoded one."""

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``spec`` is the decoded representation of ``chunk``."""

    @abstractmethod
    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``spec`` is the decoded representation to return (C-contiguous)."""


class ArrayBytesCodec(Codec):
    kind: ClassVar[CodecKind] = "array->bytes"

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes | memoryview | np.ndarray:
        """Serialize a C-contiguous native-endian chunk of ``spec``."""

    @abstractmethod
    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize into a C-contiguous native-endian array of ``spec``.

        Raises :class:`~zarr3c.errors.ChunkDecodeError` (without key; the pipeline adds it)
        when ``data`` has the wrong length or is malformed.
        """

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        """Size in bytes of every encoded chunk of ``spec``, or None if it varies."""
        return None

    def stores_raw_elements(self, dtype: np.dtype) -> bool:
        """True when the encoding is the chunk's elements as they lie in memory (native
        byte order, C order): element ``i`` is bytes ``[i * itemsize, (i + 1) * itemsize)``,
        so a region can be read by byte ranges without decoding."""
        return False


class BytesBytesCodec(Codec):
    kind: ClassVar[CodecKind] = "bytes->bytes"

    @abstractmethod
    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray: ...

    @abstractmethod
    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        """Raises :class:`~zarr3c.errors.ChunkDecodeError` on corrupt input."""

    def encoded_size(self, size: int) -> int | None:
        """Encoded size for an input of ``size`` bytes, or None if it varies."""
        return None

    def encoded_bound(self, nbytes: int) -> int | None:
        """The room :meth:`encode_into` needs for ``nbytes`` of input (the most it may
        write), or None if this codec cannot encode into given memory (the default)."""
        return None

    def encode_into(self, data: bytes | memoryview | np.ndarray, out: np.ndarray) -> int | None:
        """Encode ``data`` into the start of ``out`` (a C-contiguous ``uint8`` array of at
        least :meth:`encoded_bound` bytes): the bytes :meth:`encode` returns.  Returns their
        number, or None if this codec cannot or fails (``out`` may then hold anything:
        :meth:`encode` is the one that reports errors).  The default cannot."""
        return None

    def decode_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                    out: np.ndarray) -> bool:
        """Decode ``data`` straight into ``out`` (a C-contiguous ``uint8`` array), if this
        codec can and ``data`` decodes to exactly ``out.nbytes`` bytes.  False otherwise,
        also on any failure (``out`` may then hold anything): :meth:`decode` is the one that
        reports errors.  The default cannot."""
        return False

    def decode_prefix_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                           out: np.ndarray, need: int) -> bool:
        """Decode at least the first ``need`` bytes of ``data``'s decoding, which is
        ``out.nbytes`` bytes in all, into ``out`` (a C-contiguous ``uint8`` array), if this
        codec can do so for less than the whole decode (a read that needs only the start
        of a chunk); ``out`` past them may hold anything.  False otherwise, also on any
        failure (``out`` may then hold anything): the caller decodes the whole, which
        reports errors.  The default cannot."""
        return False

    def batch_kernels(self) -> Any | None:
        """Where this codec can decode a batch of chunks and copy parts of each out in one
        call (no Python between the chunks): the module with those calls
        (``decompress_pieces``, ``decompress_elements`` and ``decompress_outer``, as in
        :mod:`zarr3c._kernels.zstd_ctx`), else None (the default)."""
        return None


def check_config_keys(
    configuration: Mapping[str, Any] | None,
    *,
    path: str,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Validate a codec ``configuration`` object's keys; return it as a dict.

    Missing required keys and unknown keys are MetadataErrors naming the field.
    """
    if configuration is None:
        configuration = {}
    if not isinstance(configuration, Mapping):
        raise MetadataError(
            f"must be a JSON object, got {type(configuration).__name__}",
            path=f"{path}.configuration",
        )
    config = dict(configuration)
    for key in required:
        if key not in config:
            raise MetadataError("is required", path=f"{path}.configuration.{key}")
    allowed = set(required) | set(optional)
    for key in config:
        if key not in allowed:
            raise MetadataError("unknown configuration field", path=f"{path}.configuration.{key}")
    return config


def as_byte_array(data: bytes | bytearray | memoryview | np.ndarray) -> np.ndarray:
    """View any contiguous bytes-like object as a 1-d ``uint8`` array, without copying.

    Read-only inputs (``bytes``) give a read-only view; callers that write must copy.
    Non-contiguous arrays are copied (they cannot be viewed as one byte run).
    """
    if isinstance(data, np.ndarray):
        if data.dtype == np.uint8 and data.ndim == 1:
            return data
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
        # reshape first: a 0-d array cannot be viewed with a different itemsize
        return data.reshape(-1).view(np.uint8)
    if isinstance(data, memoryview) and not data.contiguous:
        return np.frombuffer(data.tobytes(), dtype=np.uint8)
    return np.frombuffer(data, dtype=np.uint8)


def native_dtype(dtype: np.dtype) -> np.dtype:
    """``dtype`` in native byte order (a no-op for native and byte-order-free types)."""
    dtype = np.dtype(dtype)
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def parse_int_field(
    value: Any, *, path: str, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Validate a JSON integer (not a bool, not a float) within ``[minimum, maximum]``.

    ``path`` is the full JSON path of the field, named by the MetadataError.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise MetadataError(f"must be an integer, got {value!r}", path=path)
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        lo = "" if minimum is None else f"{minimum} <= "
        hi = "" if maximum is None else f" <= {maximum}"
        raise MetadataError(f"must be {lo}value{hi}, got {value}", path=path)
    return value


def parse_bool_field(value: Any, *, path: str) -> bool:
    """Validate a JSON boolean."""
    if not isinstance(value, bool | np.bool_):
        raise MetadataError(f"must be true or false, got {value!r}", path=path)
    return bool(value)


def parse_choice_field(value: Any, choices: tuple[str, ...], *, path: str) -> str:
    """Validate a JSON string among ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise MetadataError(f"must be one of {list(choices)}, got {value!r}", path=path)
    return value


def swap_width(dtype: np.dtype) -> int:
    """Width in bytes of the words whose byte order serialization reverses; 1 = none.

    Complex numbers swap each component; raw (``V``, zarr's ``r*``) types are opaque bytes
    and are never swapped.
    """
    if dtype.kind == "V" or dtype.itemsize <= 1:
        return 1
    if dtype.kind == "c":
        return dtype.itemsize // 2
    return dtype.itemsize


def has_byte_order(dtype: np.dtype) -> bool:
    """Whether the byte order (the ``bytes`` codec's ``endian``) matters for ``dtype``."""
    return swap_width(np.dtype(dtype)) > 1
