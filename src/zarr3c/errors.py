"""zarr3c's exceptions: one module, one hierarchy.

Every error zarr3c raises on bad input is a :class:`ZarrError` that also subclasses the
builtin a numpy or zarr-python user would catch (``ValueError``, ``KeyError``, ``IndexError``,
``FileNotFoundError``, ...).  Messages name the JSON field path, store key or file involved.
"""

from __future__ import annotations

__all__ = [
    "ArrayNotFoundError",
    "BoundsCheckError",
    "ChecksumError",
    "ChunkDecodeError",
    "CodecError",
    "ContainsArrayError",
    "ContainsGroupError",
    "GroupNotFoundError",
    "IndexingError",
    "InvalidKeyError",
    "MetadataError",
    "MissingDependencyError",
    "NodeExistsError",
    "NodeNameError",
    "NodeNotFoundError",
    "ReadOnlyError",
    "ShapeMismatchError",
    "StoreError",
    "UnknownExtensionError",
    "UnsupportedFeatureError",
    "UnsupportedFormatError",
    "ValueConversionError",
    "ZarrError",
]


class ZarrError(Exception):
    """Base class of every zarr3c error."""


class MissingDependencyError(ZarrError, ImportError):
    """An optional dependency a feature needs is not installed; the message names the extra
    to install (``pip install "zarr3c[remote]"``, ``"zarr3c[dask]"``)."""


class InvalidArgumentError(ZarrError, ValueError):
    """An argument has a value zarr3c does not take (a mode, an order, a thread count...)."""


class InvalidTypeError(ZarrError, TypeError):
    """An argument has a type zarr3c does not take (a store-like, a value that is not
    bytes-like, a missing shape or dtype...)."""


class AttributeNotFoundError(ZarrError, KeyError):
    """A node has no user attribute of that name (a KeyError, as for a dict)."""

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


# -- metadata ----------------------------------------------------------------------------------


class MetadataError(ZarrError, ValueError):
    """A metadata document is malformed or invalid.

    The message names the JSON path of the offending field (``codecs[1].configuration.level``)
    and, where known, the store key or file it came from.
    """

    def __init__(self, message: str, *, path: str | None = None, source: str | None = None):
        self.path = path
        self.source = source
        parts = []
        if source:
            parts.append(f"{source}")
        if path:
            parts.append(f"{path}")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownExtensionError(MetadataError):
    """A codec, chunk grid, chunk key encoding, data type or other extension is not known."""


class UnsupportedFormatError(MetadataError):
    """The document is not a Zarr format zarr3c reads (e.g. ``zarr_format`` 2)."""


# -- hierarchy ---------------------------------------------------------------------------------


class NodeNotFoundError(ZarrError, FileNotFoundError):
    """No array or group at the given path."""


class ArrayNotFoundError(NodeNotFoundError):
    """No array at the given path."""


class GroupNotFoundError(NodeNotFoundError):
    """No group at the given path."""


class NodeExistsError(ZarrError, FileExistsError):
    """A node already exists where one is to be created (mode ``w-``, or no overwrite)."""


class ContainsArrayError(NodeExistsError):
    """An array exists at the path."""


class ContainsGroupError(NodeExistsError):
    """A group exists at the path."""


class NodeNameError(ZarrError, ValueError):
    """A node name or path is not allowed (empty, '.', '..', '/' inside, leading '__', ...)."""


# -- stores ------------------------------------------------------------------------------------


class StoreError(ZarrError, OSError):
    """A store operation failed; the message names the key (and file, for LocalStore)."""


class InvalidKeyError(ZarrError, ValueError):
    """A store key is malformed or would reach outside the store (``..``, leading ``/``, ...)."""


class ReadOnlyError(ZarrError, PermissionError, ValueError):
    """A write was attempted through a read-only store or array."""


# -- codecs and chunks ---------------------------------------------------------------------------


class CodecError(ZarrError, ValueError):
    """A codec failed to encode or decode."""


class ChunkDecodeError(CodecError):
    """A stored chunk is corrupt or truncated; the message names its key."""

    def __init__(self, message: str, *, key: str | None = None):
        self.key = key
        super().__init__(f"chunk {key!r}: {message}" if key else message)


class ChecksumError(ChunkDecodeError):
    """A checksum (crc32c) did not match."""


# -- indexing ------------------------------------------------------------------------------------


class IndexingError(ZarrError, IndexError):
    """A selection is malformed (too many indices, step 0, wrong index type, ...)."""


class BoundsCheckError(IndexingError):
    """An index is out of bounds; the message names the axis."""


class ShapeMismatchError(ZarrError, ValueError):
    """A value cannot be broadcast to the selection's shape (as numpy raises ValueError)."""


class ValueConversionError(ZarrError, ValueError, TypeError, OverflowError):
    """A value to write does not convert to the array's data type the way numpy assignment
    refuses it: a Python integer out of the type's range (numpy: OverflowError), NaN into
    integers (ValueError), complex into reals or None into numbers (TypeError).  It subclasses
    all three so that whichever numpy would raise is caught."""


class UnsupportedFeatureError(ZarrError, NotImplementedError):
    """A feature of the format that this version of zarr3c does not implement yet."""
