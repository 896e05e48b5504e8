"""The codec interface and the representation types of the core spec's codec chain.

The v3 core specification's "Chunk encoding"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html): each codec has a decoded and
an encoded representation, each either a multi-dimensional array (shape + data type) or a byte
string.  Codecs come in three kinds by the representations they connect: array -> array
(``transpose``), array -> bytes (``bytes``, the serializer; exactly one per chain) and
bytes -> bytes (compressors, checksums).  Arrays passed between codecs are always
native-endian numpy arrays; only array -> bytes codecs deal with byte order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from zarr3c.codecs._bounded import check_decoded_size
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

    Parameters
    ----------
    shape : tuple of int
        The chunk's shape.
    dtype : numpy.dtype
        Its data type, native-endian.
    fill_value : numpy.ndarray
        A 0-d array of ``dtype`` holding the fill value's exact bits.

    Raises
    ------
    dataclasses.FrozenInstanceError
        On an attempt to change a field (specs are immutable and hashable by identity of
        their fields).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> spec = ChunkSpec((2, 3), np.dtype("uint16"), np.zeros((), "uint16"))
    >>> spec.ndim, spec.nbytes
    (2, 12)
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    fill_value: np.ndarray

    @property
    def ndim(self) -> int:
        """The number of dimensions, ``len(shape)``."""
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """The bytes one chunk of this representation takes in memory."""
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


class Codec(ABC):
    """A codec as the spec defines it; configured once, then stateless and thread-safe.

    Subclasses are :class:`ArrayArrayCodec`, :class:`ArrayBytesCodec` and
    :class:`BytesBytesCodec`, by the representations they connect (:attr:`kind`); each
    concrete codec has a ``name`` (its name in metadata), is built from its JSON
    configuration by :meth:`from_config` and written back by :meth:`to_dict`.
    """

    #: the codec's ``name`` in metadata
    name: ClassVar[str]
    #: the representations it connects: ``"array->array"``, ``"array->bytes"`` or
    #: ``"bytes->bytes"``
    kind: ClassVar[CodecKind]

    @classmethod
    @abstractmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> Codec:
        """Build the codec from its JSON ``configuration`` object.

        Parameters
        ----------
        configuration : mapping or None
            The codec object's ``configuration`` (None when absent).
        path : str
            The JSON path of the codec object (e.g. ``"codecs[1]"``), for error messages.

        Returns
        -------
        Codec
            The configured codec.

        Raises
        ------
        zarr3c.errors.MetadataError
            If a field is missing, unknown or invalid; the message names
            ``{path}.configuration.<field>``.

        Examples
        --------
        >>> from zarr3c.codecs import GzipCodec
        >>> GzipCodec.from_config({"level": 1}, path="codecs[1]")
        GzipCodec(level=1)
        >>> GzipCodec.from_config({"level": 10}, path="codecs[1]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: codecs[1].configuration.level: must be 0 <= value <= 9, got 10
        """

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The JSON codec object, as :meth:`from_config` reads it back.

        Returns
        -------
        dict
            ``{"name": ..., "configuration": {...}}`` (no ``configuration`` for codecs
            without one).

        Raises
        ------
        None
            Writing a configured codec cannot fail.

        Examples
        --------
        >>> from zarr3c.codecs import Crc32cCodec, ZstdCodec
        >>> ZstdCodec().to_dict()
        {'name': 'zstd', 'configuration': {'level': 0, 'checksum': False}}
        >>> Crc32cCodec().to_dict()
        {'name': 'crc32c'}
        """

    def validate(self, spec: ChunkSpec, *, path: str) -> None:  # noqa: B027 - optional hook
        """Check that the codec can take chunks of this decoded representation.

        Parameters
        ----------
        spec : ChunkSpec
            The representation the codec receives when encoding.
        path : str
            The JSON path of the codec object, for error messages.

        Raises
        ------
        zarr3c.errors.MetadataError
            If it cannot (e.g. a transpose order of the wrong length).  The default accepts
            every representation.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec, TransposeCodec
        >>> spec = ChunkSpec((2, 3, 4), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> TransposeCodec(order=(1, 0)).validate(spec, path="codecs[0]")
        Traceback (most recent call last):
        ...
        zarr3c.errors.MetadataError: codecs[0].configuration.order: has 2 entries but the chunk ...
        """

    def evolve(self, spec: ChunkSpec) -> Codec:
        """Fill in the defaults that depend on the array (e.g. blosc's ``typesize``).

        Parameters
        ----------
        spec : ChunkSpec
            The representation the codec receives when encoding.

        Returns
        -------
        Codec
            The codec with those defaults set; the default returns ``self``.

        Raises
        ------
        None
            The built-in codecs' defaults always apply.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BloscCodec, ChunkSpec
        >>> spec = ChunkSpec((8,), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> BloscCodec(cname="zstd", clevel=5, shuffle="shuffle").evolve(spec).typesize
        2
        """
        return self


class ArrayArrayCodec(Codec):
    """A codec from an array to an array (``transpose``, ``reshape``): it changes how a
    chunk's elements are laid out, not their bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ArrayArrayCodec, TransposeCodec
    >>> issubclass(TransposeCodec, ArrayArrayCodec), TransposeCodec.kind
    (True, 'array->array')
    """

    kind: ClassVar[CodecKind] = "array->array"

    @abstractmethod
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The encoded representation for a decoded one.

        Parameters
        ----------
        spec : ChunkSpec
            The decoded representation (what :meth:`encode` receives).

        Returns
        -------
        ChunkSpec
            The encoded representation (what the next codec of the chain receives).

        Raises
        ------
        zarr3c.errors.MetadataError
            If the codec cannot take ``spec`` (see :meth:`Codec.validate`).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec, TransposeCodec
        >>> spec = ChunkSpec((2, 3), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> TransposeCodec(order=(1, 0)).resolve(spec).shape
        (3, 2)
        """

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Encode one chunk.

        Parameters
        ----------
        chunk : numpy.ndarray
            The decoded chunk, of representation ``spec``.
        spec : ChunkSpec
            The decoded representation of ``chunk``.

        Returns
        -------
        numpy.ndarray
            The encoded chunk, of representation ``resolve(spec)`` (possibly a view).

        Raises
        ------
        ValueError
            If ``chunk`` does not have ``spec``'s shape.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec, TransposeCodec
        >>> chunk = np.arange(6, dtype="uint16").reshape(2, 3)
        >>> spec = ChunkSpec((2, 3), chunk.dtype, np.zeros((), "uint16"))
        >>> TransposeCodec(order=(1, 0)).encode(chunk, spec)
        array([[0, 3],
               [1, 4],
               [2, 5]], dtype=uint16)
        """

    @abstractmethod
    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Decode one chunk: the inverse of :meth:`encode`.

        Parameters
        ----------
        chunk : numpy.ndarray
            The encoded chunk, of representation ``resolve(spec)``.
        spec : ChunkSpec
            The decoded representation to return.

        Returns
        -------
        numpy.ndarray
            The decoded chunk, C-contiguous, of representation ``spec``.

        Raises
        ------
        ValueError
            If ``chunk`` does not have the encoded representation's shape.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import ChunkSpec, TransposeCodec
        >>> spec = ChunkSpec((2, 3), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> encoded = np.arange(6, dtype="uint16").reshape(3, 2)
        >>> TransposeCodec(order=(1, 0)).decode(encoded, spec)
        array([[0, 2, 4],
               [1, 3, 5]], dtype=uint16)
        """


class ArrayBytesCodec(Codec):
    """A codec from an array to bytes: the serializer (``bytes``, ``sharding_indexed``),
    exactly one per chain.

    Examples
    --------
    >>> from zarr3c.codecs import ArrayBytesCodec, BytesCodec
    >>> issubclass(BytesCodec, ArrayBytesCodec), BytesCodec.kind
    (True, 'array->bytes')
    """

    kind: ClassVar[CodecKind] = "array->bytes"

    @abstractmethod
    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> bytes | memoryview | np.ndarray:
        """Serialize one chunk.

        Parameters
        ----------
        chunk : numpy.ndarray
            A C-contiguous native-endian chunk of representation ``spec``.
        spec : ChunkSpec
            Its representation.

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The encoded bytes (an array is a ``uint8`` view or buffer).

        Raises
        ------
        ValueError
            If ``chunk`` does not match ``spec``.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec
        >>> chunk = np.arange(3, dtype="uint16")
        >>> spec = ChunkSpec((3,), chunk.dtype, np.zeros((), "uint16"))
        >>> bytes(BytesCodec(endian="big").encode(chunk, spec))
        b'\\x00\\x00\\x00\\x01\\x00\\x02'
        """

    @abstractmethod
    def decode(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """Deserialize one chunk: the inverse of :meth:`encode`.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded bytes.
        spec : ChunkSpec
            The representation to return.

        Returns
        -------
        numpy.ndarray
            A C-contiguous native-endian array of representation ``spec``.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If ``data`` has the wrong length or is malformed (without the chunk's key: the
            pipeline adds it).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec
        >>> spec = ChunkSpec((3,), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> BytesCodec(endian="big").decode(b"\\x00\\x00\\x00\\x01\\x00\\x02", spec)
        array([0, 1, 2], dtype=uint16)
        """

    def decode_into(self, data: bytes | memoryview | np.ndarray, spec: ChunkSpec,
                    out: np.ndarray) -> bool:
        """Deserialize one chunk straight into ``out``, if this codec can for ``out``'s
        data type (``vlen-utf8`` into ``StringDType``: no chunk array to copy from).

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded bytes.
        spec : ChunkSpec
            The chunk's representation.
        out : numpy.ndarray
            A writable C-contiguous array of ``spec``'s shape (a view into a read's output).

        Returns
        -------
        bool
            True when done; False if this codec cannot (the default), with ``out``
            untouched: the caller then calls :meth:`decode`.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            As :meth:`decode`, where the codec can (``out`` may then hold part of the
            chunk).

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec
        >>> spec = ChunkSpec((2,), np.dtype("uint8"), np.zeros((), "uint8"))
        >>> BytesCodec().decode_into(b"\\x01\\x02", spec, np.empty(2, np.uint8))
        False
        """
        return False

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        """The size in bytes of every encoded chunk of ``spec``.

        Parameters
        ----------
        spec : ChunkSpec
            The representation the codec receives.

        Returns
        -------
        int or None
            The size, or None if it varies from chunk to chunk (the default).

        Raises
        ------
        None
            The size is arithmetic on ``spec``.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec
        >>> spec = ChunkSpec((2, 3), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> BytesCodec().encoded_size(spec)
        12
        """
        return None

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes a valid encoded chunk of ``spec`` can have.

        What the bytes -> bytes codecs after this one may decode to at most (the pipeline
        caps their decodings there: :meth:`BytesBytesCodec.decode_bounded`), and, through
        them, the most bytes a stored chunk can have.

        Parameters
        ----------
        spec : ChunkSpec
            The representation the codec receives.

        Returns
        -------
        int or None
            The bound, or None if there is none this codec knows (variable-length
            elements).  The default is :meth:`encoded_size`: exact where it is fixed.

        Raises
        ------
        None
            The bound is arithmetic on ``spec``.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec, ChunkSpec, VLenUTF8Codec
        >>> spec = ChunkSpec((2, 3), np.dtype("uint16"), np.zeros((), "uint16"))
        >>> BytesCodec().max_encoded_size(spec)
        12
        >>> spec = ChunkSpec((2,), np.dtypes.StringDType(), np.array("", "T"))
        >>> VLenUTF8Codec().max_encoded_size(spec) is None
        True
        """
        return self.encoded_size(spec)

    def stores_raw_elements(self, dtype: np.dtype) -> bool:
        """Whether the encoding is the chunk's elements as they lie in memory.

        That is native byte order and C order: element ``i`` is bytes
        ``[i * itemsize, (i + 1) * itemsize)``, so a region can be read by byte ranges
        without decoding.

        Parameters
        ----------
        dtype : numpy.dtype
            The chunk's data type.

        Returns
        -------
        bool
            False by default.

        Raises
        ------
        None
            It only compares byte orders.

        Examples
        --------
        >>> import sys
        >>> import numpy as np
        >>> from zarr3c.codecs import BytesCodec
        >>> BytesCodec(endian=sys.byteorder).stores_raw_elements(np.dtype("uint16"))
        True
        """
        return False


class BytesBytesCodec(Codec):
    """A codec from bytes to bytes: a compressor (``zstd``, ``gzip``, ``blosc``) or a
    checksum (``crc32c``).

    Besides :meth:`encode` and :meth:`decode`, a codec decodes with a cap on its output
    (:meth:`decode_bounded`; :meth:`max_encoded_size` bounds its encodings, which caps the
    codec after it in the chain), and may decode into given memory (:meth:`decode_into`,
    :meth:`decode_prefix_into`) and encode into it (:meth:`encode_into`): the defaults of
    those say it cannot, and callers then use :meth:`encode` / :meth:`decode`.

    Examples
    --------
    >>> from zarr3c.codecs import BytesBytesCodec, GzipCodec
    >>> issubclass(GzipCodec, BytesBytesCodec), GzipCodec.kind
    (True, 'bytes->bytes')
    """

    kind: ClassVar[CodecKind] = "bytes->bytes"

    @abstractmethod
    def encode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        """Encode bytes.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The bytes to encode (an array is read as its bytes).

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The encoded bytes.

        Raises
        ------
        ValueError
            If the underlying library refuses the input (e.g. too large).

        Examples
        --------
        >>> from zarr3c.codecs import Crc32cCodec
        >>> bytes(Crc32cCodec().encode(b"hello"))
        b'helloL\\xbbq\\x9a'
        """

    @abstractmethod
    def decode(self, data: bytes | memoryview | np.ndarray) -> bytes | memoryview | np.ndarray:
        """Decode bytes: the inverse of :meth:`encode`.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded bytes.

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The decoded bytes (possibly a view of ``data``).

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            On corrupt input.
        zarr3c.errors.ChecksumError
            For a checksum that does not match (``crc32c``, ``zstd`` with ``checksum``).

        Examples
        --------
        >>> from zarr3c.codecs import GzipCodec
        >>> gzip = GzipCodec(level=1)
        >>> bytes(gzip.decode(gzip.encode(b"abc" * 4)))
        b'abcabcabcabc'
        """

    def decode_bounded(self, data: bytes | memoryview | np.ndarray,
                       max_size: int | None) -> bytes | memoryview | np.ndarray:
        """:meth:`decode`, stopping at ``max_size`` bytes of output.

        The pipeline passes each codec the most bytes a valid decoding can have in its
        chain (:meth:`CodecPipeline.decode_caps`): a few KiB of compressed data may inflate,
        or claim in a header, gigabytes (a decompression bomb).  The built-in decoders never
        allocate or inflate past ``max_size`` plus one byte: the stream decompressors (gzip,
        zlib, bz2, lzma) stop there, the formats whose header states the decoded size
        (blosc, lz4, a zstd frame that declares it) are refused before decoding, and a zstd
        frame that does not is decoded into a buffer of ``max_size``.  The default, for
        codecs without a way to stop early, decodes then checks the size: bounded only for
        codecs whose output is no larger than their input (checksums, shuffle); a zstd frame
        without a declared size where zarr3c cannot reach numcodecs' libzstd (no
        ``zstd_ctx``) is decoded by numcodecs whole, then checked, too.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The encoded bytes.
        max_size : int or None
            The most bytes the decoding may have; None: no cap (:meth:`decode`).

        Returns
        -------
        bytes, memoryview or numpy.ndarray
            The decoded bytes, at most ``max_size`` of them.

        Raises
        ------
        zarr3c.errors.ChunkDecodeError
            If the decoding has (or its header claims) more than ``max_size`` bytes, naming
            the codec; as :meth:`decode` for corrupt input.
        zarr3c.errors.ChecksumError
            As :meth:`decode`.

        Examples
        --------
        >>> from zarr3c.codecs import GzipCodec
        >>> gzip = GzipCodec(level=1)
        >>> encoded = gzip.encode(bytes(100_000))
        >>> len(gzip.decode_bounded(encoded, 100_000))
        100000
        >>> gzip.decode_bounded(encoded, 1000)
        Traceback (most recent call last):
        ...
        zarr3c.errors.ChunkDecodeError: gzip: the data decodes to more than 1000 bytes, the most ...
        """
        return check_decoded_size(self.decode(data), max_size, self.name)

    def max_encoded_size(self, size: int) -> int | None:
        """The most bytes a valid encoding of ``size`` bytes can have.

        A generous bound above what the codec's library and other writers produce: the
        pipeline caps the decoding of the codec after this one there
        (:meth:`decode_bounded`), and no stored chunk is larger than the bound of its chain
        (:meth:`CodecPipeline.max_stored_size`).

        Parameters
        ----------
        size : int
            The input's size in bytes.

        Returns
        -------
        int or None
            The bound, or None if this codec knows none.  The default is
            :meth:`encoded_size` (exact for checksums; None for codecs that do not say).

        Raises
        ------
        None
            The bound is arithmetic on ``size``.

        Examples
        --------
        >>> from zarr3c.codecs import Crc32cCodec, ZstdCodec
        >>> Crc32cCodec().max_encoded_size(1000), ZstdCodec().max_encoded_size(1000)
        (1004, 5111)
        """
        return self.encoded_size(size)

    def encoded_size(self, size: int) -> int | None:
        """The encoded size of an input of ``size`` bytes.

        Parameters
        ----------
        size : int
            The input's size in bytes.

        Returns
        -------
        int or None
            The encoded size, or None if it varies (the default; compressors).

        Raises
        ------
        None
            The size is arithmetic on ``size``.

        Examples
        --------
        >>> from zarr3c.codecs import Crc32cCodec, GzipCodec
        >>> Crc32cCodec().encoded_size(100), GzipCodec().encoded_size(100)
        (104, None)
        """
        return None

    def encoded_bound(self, nbytes: int) -> int | None:
        """The room :meth:`encode_into` needs for ``nbytes`` of input.

        Parameters
        ----------
        nbytes : int
            The input's size in bytes.

        Returns
        -------
        int or None
            The most :meth:`encode_into` may write, or None if this codec cannot encode
            into given memory (the default).

        Raises
        ------
        None
            The bound is arithmetic on ``nbytes``.

        Examples
        --------
        >>> from zarr3c.codecs import GzipCodec
        >>> GzipCodec().encoded_bound(100) is None
        True
        """
        return None

    def encode_into(self, data: bytes | memoryview | np.ndarray, out: np.ndarray) -> int | None:
        """Encode ``data`` into the start of ``out``: the bytes :meth:`encode` returns.

        Parameters
        ----------
        data : bytes, memoryview or numpy.ndarray
            The bytes to encode.
        out : numpy.ndarray
            A C-contiguous ``uint8`` array of at least :meth:`encoded_bound` bytes.

        Returns
        -------
        int or None
            The number of bytes written, or None if this codec cannot (the default) or
            fails; ``out`` may then hold anything.

        Raises
        ------
        None
            Failures return None: :meth:`encode` is the one that reports errors.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import GzipCodec
        >>> GzipCodec().encode_into(b"abc", np.empty(64, np.uint8)) is None
        True
        """
        return None

    def decode_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                    out: np.ndarray) -> bool:
        """Decode ``data`` straight into ``out``, if this codec can.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The encoded bytes.
        out : numpy.ndarray
            A C-contiguous ``uint8`` array of exactly the decoded size.

        Returns
        -------
        bool
            True when ``data`` decoded to exactly ``out.nbytes`` bytes in ``out``; False if
            this codec cannot (the default) or on any failure (``out`` may then hold
            anything).

        Raises
        ------
        None
            Failures return False: :meth:`decode` is the one that reports errors.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import GzipCodec, ZstdCodec
        >>> zstd = ZstdCodec()
        >>> encoded, out = zstd.encode(b"abcdef"), np.empty(6, np.uint8)
        >>> ok = zstd.decode_into(encoded, out)  # True where zstd_ctx is bound
        >>> bytes(out) if ok else bytes(zstd.decode(encoded))
        b'abcdef'
        >>> GzipCodec().decode_into(GzipCodec().encode(b"abcdef"), out)
        False
        """
        return False

    def decode_prefix_into(self, data: bytes | bytearray | memoryview | np.ndarray,
                           out: np.ndarray, need: int) -> bool:
        """Decode at least the first ``need`` bytes of ``data``'s decoding into ``out``.

        For a read that needs only the start of a chunk, where this codec can do that for
        less than the whole decode; ``out`` past the first ``need`` bytes may hold anything.

        Parameters
        ----------
        data : bytes, bytearray, memoryview or numpy.ndarray
            The encoded bytes.
        out : numpy.ndarray
            A C-contiguous ``uint8`` array of the whole decoded size.
        need : int
            How many leading bytes of the decoding the caller needs.

        Returns
        -------
        bool
            True when done; False if this codec cannot (the default) or on any failure
            (``out`` may then hold anything), and the caller decodes the whole.

        Raises
        ------
        None
            Failures return False: the whole decode reports errors.

        Examples
        --------
        >>> import numpy as np
        >>> from zarr3c.codecs import GzipCodec
        >>> gzip = GzipCodec(level=1)
        >>> gzip.decode_prefix_into(gzip.encode(b"abcdef"), np.empty(6, np.uint8), 2)
        False
        """
        return False

    def batch_kernels(self) -> Any | None:
        """The kernels that decode a batch of chunks and copy parts of each out, if any.

        Returns
        -------
        module or None
            The module with ``decompress_pieces``, ``decompress_elements`` and
            ``decompress_outer`` (as :mod:`zarr3c._kernels.zstd_ctx`), which run a whole
            batch without Python between the chunks; None if this codec has none (the
            default).

        Raises
        ------
        None
            It only reports what is available.

        Examples
        --------
        >>> from zarr3c.codecs import GzipCodec
        >>> GzipCodec().batch_kernels() is None
        True
        """
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

    Complex numbers swap each component; ``U`` strings each 4-byte UTF-32 code unit;
    datetime64/timedelta64 the 8-byte count; raw bytes (``V``, zarr's ``r*`` and
    ``raw_bytes``) and ``S`` strings are opaque bytes and never swapped.  A structured dtype
    is swapped field by field (by numpy, not by one width): its width is that of its widest
    field, so that, as for zarr-python 3.4, its byte order matters (the ``bytes`` codec needs
    ``endian``) when any field has more than one byte.  ml_dtypes types (``bfloat16``, kind
    ``V`` but not ``numpy.void``) swap their whole item.
    """
    if dtype.fields is not None:
        return max((dtype.fields[name][0].itemsize for name in dtype.names or ()), default=1)
    if dtype.itemsize <= 1 or dtype.kind == "S" or (
        dtype.kind == "V" and dtype.type is np.void
    ):
        return 1
    if dtype.kind == "c":
        return dtype.itemsize // 2
    if dtype.kind == "U":
        return 4
    return dtype.itemsize


def has_byte_order(dtype: np.dtype) -> bool:
    """Whether the byte order (the ``bytes`` codec's ``endian``) matters for ``dtype``."""
    return swap_width(np.dtype(dtype)) > 1
