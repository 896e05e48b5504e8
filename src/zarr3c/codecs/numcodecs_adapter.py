"""numcodecs codecs under their ``numcodecs.<id>`` names, as zarr-python 3 writes them.

zarr-python 3 (``zarr.codecs.numcodecs``) stores any numcodecs codec as a v3 codec named
``"numcodecs." + codec_id`` whose configuration is the numcodecs config without ``id``::

    {"name": "numcodecs.zlib", "configuration": {"level": 1}}
    {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}}
    {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}

These are not part of the Zarr v3 specification; zarr3c reads and writes them so that arrays
written by zarr-python with numcodecs filters and compressors open.  Supported:

- bytes -> bytes: zlib, gzip, bz2, lzma, lz4, zstd, blosc, shuffle; the checksums adler32,
  crc32, crc32c, fletcher32, jenkins_lookup3 (each appends or prepends 4 bytes);
- array -> array that keep the shape, with the encoded data type computed from the
  configuration: delta, bitround, quantize, fixedscaleoffset, astype; and packbits (bool ->
  a 1-d ``uint8`` array of ``1 + ceil(n / 8)`` bytes);
- array -> bytes: pcodec and zfpy, when their packages (``pcodec``, ``zfpy``) import.

Configurations are validated by constructing the numcodecs codec (its errors become
:class:`~zarr3c.errors.MetadataError` naming ``codecs[i].configuration``).  Fields zarr-python
fills from the array's data type when absent are filled the same way by ``evolve``
(``shuffle.elementsize``, ``quantize.dtype``, ``fixedscaleoffset.dtype``,
``astype.decode_dtype``).  On decode, checksum mismatches raise
:class:`~zarr3c.errors.ChecksumError` and any other failure
:class:`~zarr3c.errors.ChunkDecodeError`.  No partial decoding.

Decodings capped at a chunk's size (``decode_bounded``, what the pipeline calls) stop at
the cap: zlib, gzip, bz2 and lzma through Python's decompressor objects with ``max_length``
(lzma with the codec's ``format`` and ``filters``), zstd as the v3 ``zstd`` codec does; the
decoded size blosc's header and lz4's 4-byte prefix claim is checked before numcodecs
allocates it.  The other bytes -> bytes codecs (shuffle, the checksums) decode then check:
their output is never larger than their input.

The helpers :func:`decode_with` and :func:`make_numcodec` are shared with the v3-native
numcodecs-backed codecs (gzip, zstd, blosc, crc32c).
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numcodecs
import numpy as np

from zarr3c.codecs._bounded import (
    bunzip2,
    check_claimed_size,
    check_decoded_size,
    compressed_bound,
    gunzip,
    inflate_zlib,
    unxz,
)
from zarr3c.codecs.base import (
    ArrayArrayCodec,
    ArrayBytesCodec,
    BytesBytesCodec,
    ChunkSpec,
    Codec,
    as_byte_array,
    native_dtype,
)
from zarr3c.errors import ChecksumError, ChunkDecodeError, MetadataError, UnknownExtensionError

__all__ = [
    "PREFIX",
    "NumcodecsArrayArrayCodec",
    "NumcodecsArrayBytesCodec",
    "NumcodecsBytesBytesCodec",
    "NumcodecsChecksumCodec",
    "NumcodecsCodec",
    "NumcodecsCompressor",
    "check_blosc_frame",
    "decode_with",
    "make_numcodec",
    "numcodec_to_dict",
]

PREFIX = "numcodecs."

# The module numcodecs needs for each codec whose implementation lives in an optional package.
_OPTIONAL_PACKAGES = {"pcodec": "pcodec", "zfpy": "zfpy"}


def make_numcodec(config: Mapping[str, Any], *, path: str) -> Any:
    """``numcodecs.get_codec(config)``, with its errors turned into metadata errors.

    Raises
    ------
    UnknownExtensionError
        If the codec's implementation (or the package it needs) is not installed.
    MetadataError
        If numcodecs rejects the configuration; names ``{path}.configuration``.
    """
    codec_id = config["id"]
    package = _OPTIONAL_PACKAGES.get(codec_id)
    if package is not None:
        try:
            importlib.import_module(package)
        except ImportError:
            raise UnknownExtensionError(
                f"codec {PREFIX + codec_id!r} needs the {package!r} package, which is not "
                f"installed (pip install {package})",
                path=path,
            ) from None
    try:
        return numcodecs.get_codec(dict(config))
    except numcodecs.errors.UnknownCodecError as exc:
        raise UnknownExtensionError(
            f"numcodecs has no codec {codec_id!r} ({exc})", path=path
        ) from None
    except Exception as exc:  # noqa: BLE001 - numcodecs raises TypeError, ValueError, RuntimeError alike
        raise MetadataError(
            f"invalid configuration for numcodecs {codec_id!r}: {exc}",
            path=f"{path}.configuration",
        ) from None


def decode_into_with(fn: Callable[..., Any], data: Any, out: np.ndarray) -> bool:
    """``fn(data, out=out)`` (a numcodecs decode into ``out``): False on any failure, which
    the codec's ordinary decode then reports (``BytesBytesCodec.decode_into``)."""
    try:
        fn(data, out=out)
    except Exception:  # noqa: BLE001 - decode() reports it
        return False
    return True


def decode_with(fn: Callable[[Any], Any], data: Any, what: str, *, checksum: bool = False) -> Any:
    """Call a numcodecs decode function; any failure becomes a :class:`ChunkDecodeError`.

    With ``checksum=True`` (checksum codecs), a ``RuntimeError`` -- numcodecs' signal for a
    mismatch -- becomes a :class:`ChecksumError`.  A zstd frame checksum mismatch is also
    reported as a :class:`ChecksumError`.
    """
    try:
        return fn(data)
    except ChunkDecodeError:
        raise
    except MemoryError:
        raise
    except Exception as exc:
        message = str(exc)
        if isinstance(exc, RuntimeError) and (checksum or "checksum" in message.lower()):
            raise ChecksumError(f"{what}: checksum mismatch ({message})") from exc
        raise ChunkDecodeError(f"{what}: cannot decode ({type(exc).__name__}: {message})") from exc


#: Blosc (v1) frames start with a 16-byte header; bytes 12-15 hold the frame's total size
BLOSC_HEADER_SIZE = 16


def check_blosc_frame(buf: np.ndarray, what: str, max_size: int | None = None) -> None:
    """Reject a Blosc frame whose header disagrees with its length, or claims more than
    ``max_size`` decoded bytes (None: no cap).

    numcodecs trusts the header's compressed size, so a truncated frame would be read past
    its end (and may even "decode"); checking the size first makes truncation an error.
    It allocates the decoded size the header claims (bytes 4-7, ``nbytes``, up to 4 GiB)
    before decoding: checking it against the cap first stops a bomb there.
    """
    if buf.nbytes < BLOSC_HEADER_SIZE:
        raise ChunkDecodeError(
            f"{what}: {buf.nbytes} bytes is shorter than a blosc header ({BLOSC_HEADER_SIZE})"
        )
    cbytes = int.from_bytes(buf[12:16].tobytes(), "little")
    if cbytes != buf.nbytes:
        raise ChunkDecodeError(
            f"{what}: the blosc header gives a frame of {cbytes} bytes, the chunk has "
            f"{buf.nbytes} (truncated or corrupt)"
        )
    check_claimed_size(int.from_bytes(buf[4:8].tobytes(), "little"), max_size, what)


#: numcodecs' LZ4 frames start with the decoded size, 4 bytes little-endian
LZ4_PREFIX_SIZE = 4


def _config_dtype(config: Mapping[str, Any], key: str, *, path: str) -> np.dtype:
    try:
        return np.dtype(config[key])
    except Exception as exc:  # noqa: BLE001 - numpy raises TypeError or others
        raise MetadataError(
            f"not a data type: {config[key]!r} ({exc})", path=f"{path}.configuration.{key}"
        ) from None


def _json_config(codec: Any) -> dict[str, Any]:
    """A numcodecs codec's config without ``id``: the v3 ``configuration``."""
    config = dict(codec.get_config())
    config.pop("id", None)
    return config


@dataclass(frozen=True, eq=False)
class NumcodecsCodec(Codec):
    """Base of the ``numcodecs.<id>`` codecs: a configuration and the numcodecs object.

    Subclasses set :attr:`codec_id`; ``name`` is ``"numcodecs." + codec_id``.
    """

    codec_id: ClassVar[str]
    #: configuration fields that ``evolve`` fills from the data type when absent, and the
    #: placeholder values used to validate the rest of the configuration before that
    deferred: ClassVar[dict[str, Any]] = {}

    configuration: dict[str, Any]
    _codec: Any = field(default=None, repr=False, compare=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "codec_id" in cls.__dict__:
            cls.name = PREFIX + cls.codec_id  # type: ignore[misc]

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> Codec:
        if configuration is not None and not isinstance(configuration, Mapping):
            raise MetadataError(
                f"must be a JSON object, got {type(configuration).__name__}",
                path=f"{path}.configuration",
            )
        config = dict(configuration or {})
        if "id" in config:
            if config["id"] != cls.codec_id:
                raise MetadataError(
                    f"must be {cls.codec_id!r} for codec {cls.name!r}, got {config['id']!r}",
                    path=f"{path}.configuration.id",
                )
            del config["id"]
        missing = {k: v for k, v in cls.deferred.items() if config.get(k) is None}
        if missing:
            # Validate the rest now (a bad level must fail here, not at the first write);
            # the real numcodecs object is made by evolve once the data type is known.
            make_numcodec({"id": cls.codec_id, **config, **missing}, path=path)
            return cls(configuration=config)
        return cls(
            configuration=config, _codec=make_numcodec({"id": cls.codec_id, **config}, path=path)
        )

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": dict(self.configuration)}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), repr(sorted(self.configuration.items()))))

    def _filled(self, spec: ChunkSpec) -> dict[str, Any]:
        """Values for the deferred fields, from the data type (override per codec)."""
        return {}

    def evolve(self, spec: ChunkSpec) -> Codec:
        missing = [k for k in self.deferred if self.configuration.get(k) is None]
        if not missing and self._codec is not None:
            return self
        filled = self._filled(spec)
        config = {**self.configuration, **{k: filled[k] for k in missing}}
        return type(self)(
            configuration=config,
            _codec=make_numcodec({"id": self.codec_id, **config}, path=self.name),
        )

    @property
    def numcodec(self) -> Any:
        """The configured numcodecs codec object."""
        if self._codec is None:
            raise MetadataError(
                f"codec {self.name!r} needs the array's data type to fill "
                f"{sorted(self.deferred)}; build it through the codec pipeline (evolve)",
            )
        return self._codec


# -- bytes -> bytes ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class NumcodecsBytesBytesCodec(NumcodecsCodec, BytesBytesCodec):
    """A numcodecs compressor (or other bytes -> bytes codec)."""

    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        out = self.numcodec.encode(as_byte_array(data))
        return out if isinstance(out, bytes) else as_byte_array(out)

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        out = decode_with(self.numcodec.decode, as_byte_array(data), self.name)
        return out if isinstance(out, bytes) else as_byte_array(out)


@dataclass(frozen=True, eq=False)
class NumcodecsCompressor(NumcodecsBytesBytesCodec):
    """A numcodecs compressor: its encodings are bounded as the v3 compressors' are."""

    def max_encoded_size(self, size: int) -> int | None:
        return compressed_bound(size)


@dataclass(frozen=True, eq=False)
class NumcodecsChecksumCodec(NumcodecsBytesBytesCodec):
    """A numcodecs checksum: 4 bytes more on encode; mismatch -> ChecksumError on decode."""

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        buf = as_byte_array(data)
        if buf.nbytes < 4:
            raise ChunkDecodeError(
                f"{self.name}: {buf.nbytes} bytes is too short to hold a 4-byte checksum"
            )
        out = decode_with(self.numcodec.decode, buf, self.name, checksum=True)
        return out if isinstance(out, bytes) else as_byte_array(out)

    def encoded_size(self, size: int) -> int | None:
        return size + 4

    def max_encoded_size(self, size: int) -> int | None:
        return size + 4


@dataclass(frozen=True, eq=False)
class Zlib(NumcodecsCompressor):
    codec_id: ClassVar[str] = "zlib"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        if max_size is None:
            return self.decode(data)
        return inflate_zlib(as_byte_array(data), max_size, self.name)


@dataclass(frozen=True, eq=False)
class GZip(NumcodecsCompressor):
    codec_id: ClassVar[str] = "gzip"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        if max_size is None:
            return self.decode(data)
        return gunzip(as_byte_array(data), max_size, self.name)


@dataclass(frozen=True, eq=False)
class BZ2(NumcodecsCompressor):
    codec_id: ClassVar[str] = "bz2"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        if max_size is None:
            return self.decode(data)
        return bunzip2(as_byte_array(data), max_size, self.name)


@dataclass(frozen=True, eq=False)
class LZMA(NumcodecsCompressor):
    codec_id: ClassVar[str] = "lzma"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        if max_size is None:
            return self.decode(data)
        codec = self.numcodec
        return unxz(as_byte_array(data), max_size, self.name, lzma_format=codec.format,
                    filters=codec.filters)

    def max_encoded_size(self, size: int) -> int | None:
        # LZMA1 (the alone and raw formats) has no stored fallback: 1.4% on random data.
        return compressed_bound(size, shift=5)


@dataclass(frozen=True, eq=False)
class LZ4(NumcodecsCompressor):
    codec_id: ClassVar[str] = "lz4"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        # numcodecs allocates the size the prefix claims (up to 2 GiB) before decoding.
        buf = as_byte_array(data)
        if buf.nbytes >= LZ4_PREFIX_SIZE:
            claimed = int.from_bytes(buf[:LZ4_PREFIX_SIZE].tobytes(), "little")
            check_claimed_size(claimed, max_size, self.name)
        return check_decoded_size(self.decode(buf), max_size, self.name)


@dataclass(frozen=True, eq=False)
class Zstd(NumcodecsCompressor):
    codec_id: ClassVar[str] = "zstd"

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        if max_size is None:
            return self.decode(data)
        # (imported here: zarr3c.codecs.zstd imports this module)
        from zarr3c.codecs.zstd import decode_frames_bounded

        return decode_frames_bounded(as_byte_array(data), max_size, self.name)


@dataclass(frozen=True, eq=False)
class Blosc(NumcodecsCompressor):
    codec_id: ClassVar[str] = "blosc"

    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        return self.decode_bounded(data, None)

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        buf = as_byte_array(data)
        check_blosc_frame(buf, self.name, max_size)
        return super().decode(buf)


@dataclass(frozen=True, eq=False)
class Shuffle(NumcodecsBytesBytesCodec):
    codec_id: ClassVar[str] = "shuffle"
    deferred: ClassVar[dict[str, Any]] = {"elementsize": 4}

    def _filled(self, spec: ChunkSpec) -> dict[str, Any]:
        return {"elementsize": spec.dtype.itemsize}

    def max_encoded_size(self, size: int) -> int | None:
        return size  # a permutation of the bytes


@dataclass(frozen=True, eq=False)
class Adler32(NumcodecsChecksumCodec):
    codec_id: ClassVar[str] = "adler32"


@dataclass(frozen=True, eq=False)
class CRC32(NumcodecsChecksumCodec):
    codec_id: ClassVar[str] = "crc32"


@dataclass(frozen=True, eq=False)
class CRC32C(NumcodecsChecksumCodec):
    codec_id: ClassVar[str] = "crc32c"


@dataclass(frozen=True, eq=False)
class Fletcher32(NumcodecsChecksumCodec):
    codec_id: ClassVar[str] = "fletcher32"


@dataclass(frozen=True, eq=False)
class JenkinsLookup3(NumcodecsChecksumCodec):
    codec_id: ClassVar[str] = "jenkins_lookup3"


# -- array -> array ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class NumcodecsArrayArrayCodec(NumcodecsCodec, ArrayArrayCodec):
    """A numcodecs filter that keeps the chunk's shape (or, for packbits, flattens it).

    numcodecs filters return flat arrays in the byte order of their configured data types;
    the chain passes C-contiguous native-endian arrays, so results are reshaped and, for a
    non-native configured byte order, converted (and inputs converted back before decode).
    """

    #: configuration fields naming the decoded and the encoded data type (None: unchanged)
    decoded_key: ClassVar[str | None] = None
    encoded_key: ClassVar[str | None] = None

    def _config_dtype(self, key: str | None, fallback: np.dtype) -> np.dtype:
        if key is None or self.configuration.get(key) is None:
            return fallback
        return np.dtype(self.configuration[key])

    def decoded_dtype(self, spec_dtype: np.dtype) -> np.dtype:
        """The data type numcodecs expects on encode (in its configured byte order)."""
        return self._config_dtype(self.decoded_key, spec_dtype)

    def encoded_dtype(self, spec_dtype: np.dtype) -> np.dtype:
        """The data type numcodecs produces on encode (in its configured byte order)."""
        return self._config_dtype(self.encoded_key, self.decoded_dtype(spec_dtype))

    def encoded_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return shape

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        for key in (self.decoded_key, self.encoded_key):
            if key is not None and self.configuration.get(key) is not None:
                dtype = _config_dtype(self.configuration, key, path=path)
                if dtype.hasobject:
                    raise MetadataError(
                        "object data types are not supported", path=f"{path}.configuration.{key}"
                    )
        decoded = native_dtype(self.decoded_dtype(spec.dtype))
        if decoded != spec.dtype:
            raise MetadataError(
                f"is {decoded} but the codec receives {spec.dtype}",
                path=f"{path}.configuration.{self.decoded_key}",
            )

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        dtype = native_dtype(self.encoded_dtype(spec.dtype))
        # The spec leaves the fill value of inner representations open; a cast is the
        # closest meaning (NaN -> int casts warn, and any value is acceptable there).
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fill = np.asarray(spec.fill_value).astype(dtype)
        except Exception:  # noqa: BLE001 - no cast: any value will do for an inner fill
            fill = np.zeros((), dtype=dtype)
        return ChunkSpec(shape=self.encoded_shape(spec.shape), dtype=dtype, fill_value=fill)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        decoded = self.decoded_dtype(spec.dtype)
        if chunk.dtype != decoded:
            chunk = chunk.astype(decoded)
        out = np.asarray(self.numcodec.encode(chunk))
        encoded = self.resolve(spec)
        return _as_representation(out, encoded.dtype, encoded.shape)

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        encoded = self.encoded_dtype(spec.dtype)
        if chunk.dtype != encoded:
            chunk = chunk.astype(encoded)
        chunk = np.ascontiguousarray(chunk)
        out = np.asarray(decode_with(self.numcodec.decode, chunk, self.name))
        if out.size != math.prod(spec.shape):
            raise ChunkDecodeError(
                f"{self.name}: decoded {out.size} elements, expected {math.prod(spec.shape)}"
            )
        return _as_representation(out, spec.dtype, spec.shape)


def _as_representation(out: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A numcodecs filter's output as the chain's C-contiguous native ``dtype`` array.

    Filters return flat arrays in their configured byte order, and some return a
    reinterpretation of the bits (bitround encodes floats as same-width ints): byte order is
    converted, same-width types are viewed, never value-cast.
    """
    native = native_dtype(out.dtype)
    if out.dtype != native:
        out = out.astype(native)
    if native != dtype:
        if native.itemsize != dtype.itemsize:
            raise ValueError(f"numcodecs returned data type {native}, expected {dtype}")
        out = np.ascontiguousarray(out).view(dtype)
    if out.size != math.prod(shape):
        raise ValueError(f"numcodecs returned {out.size} elements, expected {math.prod(shape)}")
    return np.ascontiguousarray(out).reshape(shape)


@dataclass(frozen=True, eq=False)
class Delta(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "delta"
    decoded_key: ClassVar[str | None] = "dtype"
    encoded_key: ClassVar[str | None] = "astype"


@dataclass(frozen=True, eq=False)
class BitRound(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "bitround"

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if spec.dtype.kind != "f":
            raise MetadataError(
                f"bitround needs a floating-point data type, got {spec.dtype}", path=path
            )


@dataclass(frozen=True, eq=False)
class Quantize(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "quantize"
    deferred: ClassVar[dict[str, Any]] = {"dtype": "<f8"}
    decoded_key: ClassVar[str | None] = "dtype"
    encoded_key: ClassVar[str | None] = "astype"

    def _filled(self, spec: ChunkSpec) -> dict[str, Any]:
        return {"dtype": spec.dtype.str}


@dataclass(frozen=True, eq=False)
class FixedScaleOffset(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "fixedscaleoffset"
    deferred: ClassVar[dict[str, Any]] = {"dtype": "<f8"}
    decoded_key: ClassVar[str | None] = "dtype"
    encoded_key: ClassVar[str | None] = "astype"

    def _filled(self, spec: ChunkSpec) -> dict[str, Any]:
        return {"dtype": spec.dtype.str}


@dataclass(frozen=True, eq=False)
class AsType(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "astype"
    deferred: ClassVar[dict[str, Any]] = {"decode_dtype": "<f8"}
    decoded_key: ClassVar[str | None] = "decode_dtype"
    encoded_key: ClassVar[str | None] = "encode_dtype"

    def _filled(self, spec: ChunkSpec) -> dict[str, Any]:
        return {"decode_dtype": spec.dtype.str}


@dataclass(frozen=True, eq=False)
class PackBits(NumcodecsArrayArrayCodec):
    codec_id: ClassVar[str] = "packbits"

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if spec.dtype != np.dtype(bool):
            raise MetadataError(f"packbits needs the bool data type, got {spec.dtype}", path=path)

    def encoded_dtype(self, spec_dtype: np.dtype) -> np.dtype:
        return np.dtype(np.uint8)

    def encoded_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (1 + math.ceil(math.prod(shape) / 8),)


# -- array -> bytes ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class NumcodecsArrayBytesCodec(NumcodecsCodec, ArrayBytesCodec):
    """A numcodecs codec that serializes arrays itself (pcodec, zfpy)."""

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes | memoryview | np.ndarray:
        out = self.numcodec.encode(np.ascontiguousarray(chunk))
        return out if isinstance(out, bytes) else as_byte_array(out)

    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = np.asarray(decode_with(self.numcodec.decode, bytes(as_byte_array(data)), self.name))
        if out.size != math.prod(spec.shape):
            raise ChunkDecodeError(
                f"{self.name}: decoded {out.size} elements, expected {math.prod(spec.shape)}"
            )
        if out.dtype.itemsize != spec.dtype.itemsize:
            raise ChunkDecodeError(
                f"{self.name}: decoded data type {out.dtype}, expected {spec.dtype}"
            )
        out = out.astype(native_dtype(out.dtype), copy=False).view(spec.dtype)
        return np.ascontiguousarray(out).reshape(spec.shape)


@dataclass(frozen=True, eq=False)
class PCodec(NumcodecsArrayBytesCodec):
    codec_id: ClassVar[str] = "pcodec"


@dataclass(frozen=True, eq=False)
class ZFPY(NumcodecsArrayBytesCodec):
    codec_id: ClassVar[str] = "zfpy"


def numcodec_to_dict(codec: Any) -> dict[str, Any]:
    """The ``numcodecs.<id>`` codec object for a numcodecs codec instance."""
    return {"name": PREFIX + codec.codec_id, "configuration": _json_config(codec)}
