"""zarr3c's exceptions: one module, one hierarchy.

Every error zarr3c raises on bad input is a :class:`ZarrError` that also subclasses the
builtin a numpy or zarr-python user would catch (``ValueError``, ``KeyError``, ``IndexError``,
``FileNotFoundError``, ...).  Messages name the JSON field path, store key or file involved.

>>> import zarr3c
>>> from zarr3c.errors import ZarrError
>>> a = zarr3c.create_array("memory://", shape=(3,), dtype="int8")
>>> try:
...     a[7]
... except ZarrError as exc:      # or IndexError, as numpy raises
...     print(type(exc).__name__, isinstance(exc, IndexError))
BoundsCheckError True
"""

from __future__ import annotations

__all__ = [
    "ArrayNotFoundError",
    "AttributeNotFoundError",
    "BoundsCheckError",
    "ChecksumError",
    "ChunkDecodeError",
    "ChunkTooLargeError",
    "CodecError",
    "ContainsArrayError",
    "ContainsGroupError",
    "GroupNotFoundError",
    "IndexingError",
    "InvalidArgumentError",
    "InvalidKeyError",
    "InvalidTypeError",
    "MemberNotFoundError",
    "MetadataError",
    "MissingDependencyError",
    "MissingDimensionsError",
    "NodeExistsError",
    "NodeNameError",
    "NodeNotFoundError",
    "OversizedValueError",
    "ReadOnlyError",
    "SelectionTooLargeError",
    "ShapeMismatchError",
    "StoreError",
    "UnknownExtensionError",
    "UnsupportedFeatureError",
    "UnsupportedFormatError",
    "ValueConversionError",
    "ZarrError",
]


class ZarrError(Exception):
    """Base class of every error zarr3c raises on bad input, bad data or a failed store.

    Each subclass also derives from the builtin exception a numpy or zarr-python user would
    catch, so ``except ValueError`` and ``except ZarrError`` both work.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.open_group("memory://", mode="r")
    ... except zarr3c.errors.ZarrError as exc:
    ...     print(type(exc).__name__)
    GroupNotFoundError
    """


class MissingDependencyError(ZarrError, ImportError):
    """An optional dependency a feature needs is not installed.

    Raised when a feature is used, not on import: a URL store without fsspec or the scheme's
    package (``pip install "zarr3c[remote]"``), :func:`zarr3c.from_dask` without dask
    (``"zarr3c[dask]"``); the message names the extra to install.  Also an ``ImportError``.
    """


class InvalidArgumentError(ZarrError, ValueError):
    """An argument has a value zarr3c does not take (a mode, an order, a thread count...).

    Also a ``ValueError``.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.open_group("memory://", mode="x")
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    InvalidArgumentError
    """


class InvalidTypeError(ZarrError, TypeError):
    """An argument has a type zarr3c does not take (a store-like, a value that is not
    bytes-like, a missing shape or dtype...).

    Also a ``TypeError``.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.create_array("memory://", shape=(3,))    # no dtype
    ... except TypeError as exc:
    ...     print(type(exc).__name__)
    InvalidTypeError
    """


class AttributeNotFoundError(ZarrError, KeyError):
    """A node has no user attribute of that name (``node.attrs[name]``, ``del``).

    Also a ``KeyError``, as for a dict; its message is the plain text, not KeyError's quoted
    repr of it.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> try:
    ...     g.attrs["units"]
    ... except KeyError as exc:
    ...     print(type(exc).__name__, exc)
    AttributeNotFoundError '/' has no attribute 'units'
    """

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


# -- metadata ----------------------------------------------------------------------------------


class MetadataError(ZarrError, ValueError):
    """A metadata document (or an argument that becomes one) is malformed or invalid.

    The message names the JSON path of the offending field (``codecs[1].configuration.level``)
    and, where known, the store key or file it came from; both are also attributes.  Also a
    ``ValueError``.

    Parameters
    ----------
    message : str
        What is wrong.
    path : str or None, default None
        The JSON path of the field (kept as ``.path``).
    source : str or None, default None
        The store key or file of the document (kept as ``.source``).

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.create_array("memory://", shape=(4,), dtype="int8", chunks=(2, 2))
    ... except zarr3c.errors.MetadataError as exc:
    ...     print(exc.path)
    chunk_grid.configuration.chunk_shape
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
    """A codec, chunk grid, chunk key encoding, data type or other extension is not known.

    A :class:`MetadataError` (so also a ``ValueError``).

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.create_array("memory://", shape=(4,), dtype="int8",
    ...                         compressors={"name": "no-such-codec"})
    ... except zarr3c.errors.MetadataError as exc:
    ...     print(type(exc).__name__)
    UnknownExtensionError
    """


class UnsupportedFormatError(MetadataError):
    """The store holds something that is not a Zarr layout zarr3c reads (``zarr_format`` 2),
    or a hierarchy in another layout than the one asked for.

    A :class:`MetadataError` (so also a ``ValueError``).

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> store.set("zarr.json", b'{"zarr_format": 2, "node_type": "group"}')
    >>> try:
    ...     zarr3c.open(store)
    ... except zarr3c.errors.MetadataError as exc:
    ...     print(type(exc).__name__)
    UnsupportedFormatError
    """


class MissingDimensionsError(MetadataError, KeyError):
    """An array names no dimensions where xarray needs them: no ``dimension_names`` (Zarr
    v3), no ``_ARRAY_DIMENSIONS`` attribute (Zarr v2), or not one per axis.

    Raised by ``xarray.open_dataset(..., engine="zarr3c")``; the message names the
    variable.  A :class:`MetadataError` (so also a ``ValueError``) and a ``KeyError``, as
    xarray's zarr engine raises.

    Examples
    --------
    >>> err = MissingDimensionsError("variable 'v': no dimension_names",
    ...                              path="dimension_names", source="v/zarr.json")
    >>> isinstance(err, KeyError), str(err)
    (True, "v/zarr.json: dimension_names: variable 'v': no dimension_names")
    """

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


# -- hierarchy ---------------------------------------------------------------------------------


class NodeNotFoundError(ZarrError, FileNotFoundError):
    """No array or group at the given path.

    Also a ``FileNotFoundError``.  :class:`ArrayNotFoundError`, :class:`GroupNotFoundError`
    and :class:`MemberNotFoundError` (also a KeyError) say which kind was expected.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.open("memory://", mode="r")
    ... except FileNotFoundError as exc:
    ...     print(type(exc).__name__)
    NodeNotFoundError
    """


class ArrayNotFoundError(NodeNotFoundError):
    """No array at the given path (:func:`zarr3c.open_array`).

    A :class:`NodeNotFoundError` (so also a ``FileNotFoundError``).

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.open_array("memory://")
    ... except FileNotFoundError as exc:
    ...     print(type(exc).__name__)
    ArrayNotFoundError
    """


class GroupNotFoundError(NodeNotFoundError):
    """No group at the given path (:func:`zarr3c.open_group` with mode ``"r"`` or ``"r+"``).

    A :class:`NodeNotFoundError` (so also a ``FileNotFoundError``).

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.open_group("memory://", mode="r")
    ... except FileNotFoundError as exc:
    ...     print(type(exc).__name__)
    GroupNotFoundError
    """


class MemberNotFoundError(NodeNotFoundError, KeyError):
    """Raised by ``group[name]`` (and ``del group[name]``) when the group has no such member.

    A :class:`NodeNotFoundError` (so also a ``FileNotFoundError``) and a
    ``KeyError``, as a dict lookup raises.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> try:
    ...     g["missing"]
    ... except KeyError as exc:
    ...     print(type(exc).__name__, exc)
    MemberNotFoundError no member 'missing' in group '/' in store MemoryStore(...)
    """

    __str__ = BaseException.__str__  # the message, not KeyError's quoted repr of it


class NodeExistsError(ZarrError, FileExistsError):
    """A node already exists where one is to be created (mode ``"w-"``, or no overwrite).

    Also a ``FileExistsError``; raised as :class:`ContainsArrayError` or
    :class:`ContainsGroupError`, naming what is there.
    """


class ContainsArrayError(NodeExistsError):
    """An array is at the path: where a node is to be created without ``overwrite``, where a
    group is expected, or at an ancestor of a new node.

    A :class:`NodeExistsError` (so also a ``FileExistsError``).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
    >>> try:
    ...     zarr3c.create_array(a.store, shape=(2,), dtype="int8")
    ... except FileExistsError as exc:
    ...     print(type(exc).__name__)
    ContainsArrayError
    """


class ContainsGroupError(NodeExistsError):
    """A group is at the path: where a node is to be created without ``overwrite``, or where
    an array is expected.

    A :class:`NodeExistsError` (so also a ``FileExistsError``).

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://")
    >>> try:
    ...     zarr3c.open_array(g.store)
    ... except FileExistsError as exc:
    ...     print(type(exc).__name__)
    ContainsGroupError
    """


class NodeNameError(ZarrError, ValueError):
    """A node name or path is not allowed (empty, only periods, '/' inside, leading '__',
    a backslash or NUL; the draft-2022 layout allows fewer characters).

    Also a ``ValueError``.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.create_group("memory://", "data/__private")
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    NodeNameError
    """


# -- stores ------------------------------------------------------------------------------------


class StoreError(ZarrError, OSError):
    """A store operation failed; the message names the key (and file, for LocalStore).

    Also an ``OSError``.

    Examples
    --------
    >>> import os, tempfile, zarr3c
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "a-file")
    ...     open(path, "w").close()
    ...     try:
    ...         zarr3c.LocalStore(path)
    ...     except OSError as exc:
    ...         print(type(exc).__name__)
    StoreError
    """


class InvalidKeyError(ZarrError, ValueError):
    """A store key is malformed or would reach outside the store (``..``, leading ``/``,
    ...).

    Also a ``ValueError``.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.MemoryStore().get("../outside")
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    InvalidKeyError
    """


class ReadOnlyError(ZarrError, PermissionError, ValueError):
    """A write was attempted through a read-only store or node.

    Also a ``PermissionError`` (an ``OSError``) and a ``ValueError``.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
    >>> try:
    ...     zarr3c.open_array(a.store, mode="r")[0] = 1
    ... except PermissionError as exc:
    ...     print(type(exc).__name__)
    ReadOnlyError
    """


# -- codecs and chunks ---------------------------------------------------------------------------


class CodecError(ZarrError, ValueError):
    """A codec failed to encode or decode (or refused its configuration at run time).

    Also a ``ValueError``; :class:`ChunkDecodeError` for a stored chunk that does not decode.
    """


class ChunkDecodeError(CodecError):
    """A stored chunk is corrupt or truncated; the message names its key (also ``.key``).

    A :class:`CodecError` (so also a ``ValueError``).

    Parameters
    ----------
    message : str
        What is wrong.
    key : str or None, default None
        The chunk's store key.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8", chunks=(2,),
    ...                         compressors=None)
    >>> a[:] = 1
    >>> a.store.set("c/0", b"garbage")
    >>> try:
    ...     a[0]
    ... except ValueError as exc:
    ...     print(type(exc).__name__, exc.key)
    ChunkDecodeError c/0
    """

    def __init__(self, message: str, *, key: str | None = None):
        self.key = key
        super().__init__(f"chunk {key!r}: {message}" if key else message)


class ChecksumError(ChunkDecodeError):
    """A checksum (crc32c) stored with a chunk did not match its data.

    A :class:`ChunkDecodeError` (so also a ``ValueError``).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8", chunks=(2,),
    ...                         compressors={"name": "crc32c"})
    >>> a[:] = 1
    >>> damaged = bytearray(a.store.get("c/0"))
    >>> damaged[0] ^= 1
    >>> a.store.set("c/0", bytes(damaged))
    >>> try:
    ...     a[0]
    ... except zarr3c.errors.ChunkDecodeError as exc:
    ...     print(type(exc).__name__)
    ChecksumError
    """


class OversizedValueError(ChunkDecodeError):
    """A stored value is larger than any valid encoding of its chunk, refused from its size
    (a file's size, a zip entry's, the bytes a bounded request returned) before it is read.

    A :class:`ChunkDecodeError` (so also a ``ValueError``); ``.size`` is the value's size
    (or a lower bound of it, where the store read only the first ``limit + 1`` bytes) and
    ``.limit`` the most bytes an encoding of the chunk can take.

    Parameters
    ----------
    key : str
        The value's store key.
    size : int
        Its size, or a lower bound of it.
    limit : int
        The most bytes a valid encoding of the chunk can take.
    exact : bool, default True
        Whether ``size`` is the value's size (else a lower bound of it).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8", chunks=(2,),
    ...                         compressors="zstd")
    >>> a.store.set("c/0", bytes(1 << 20))
    >>> try:
    ...     a[:]
    ... except zarr3c.errors.ChunkDecodeError as exc:
    ...     print(type(exc).__name__, exc.key, exc.size, exc.limit < 1 << 20)
    OversizedValueError c/0 1048576 True
    """

    def __init__(self, key: str, size: int, limit: int, *, exact: bool = True):
        self.size = size
        self.limit = limit
        super().__init__(
            f"the stored value ({size:,} bytes{'' if exact else ' or more'}) is larger than "
            f"any valid encoding of the chunk ({limit:,} bytes at most)", key=key)


class ChunkTooLargeError(ZarrError, MemoryError, ValueError):
    """A stored chunk (or shard) is too large to hold in memory: its decoded size is
    beyond int64, or its memory could not be allocated.  Raised only for a chunk that
    must be held: one stored (read or rewritten), or one a write builds; a chunk that is
    not stored reads as the fill value without any memory of its size.  The message
    names its key (also ``.key``).

    Also a ``MemoryError`` (what numpy raises where it cannot allocate) and a
    ``ValueError`` (what it raises for a size beyond int64).

    Parameters
    ----------
    message : str
        What is wrong.
    key : str or None, default None
        The chunk's store key.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(8,), dtype="uint8",
    ...                         chunks=(2**62,), fill_value=5)
    >>> int(a[3])                     # not stored: no memory of the chunk's size
    5
    >>> try:
    ...     a[3] = 1                  # a write builds the chunk: 4 EiB
    ... except MemoryError as exc:
    ...     print(type(exc).__name__, exc.key)
    ChunkTooLargeError c/0
    """

    def __init__(self, message: str, *, key: str | None = None):
        self.key = key
        super().__init__(f"chunk {key!r}: {message}" if key else message)


# -- indexing ------------------------------------------------------------------------------------


class IndexingError(ZarrError, IndexError):
    """A selection is malformed (too many indices, step 0, wrong index type, ...).

    Also an ``IndexError``, as numpy raises; :class:`BoundsCheckError` for an index out of
    bounds.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8")
    >>> try:
    ...     a[::0]
    ... except IndexError as exc:
    ...     print(type(exc).__name__)
    IndexingError
    """


class BoundsCheckError(IndexingError):
    """An index is out of bounds; the message names the axis.

    An :class:`IndexingError` (so also an ``IndexError``).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8")
    >>> try:
    ...     a[4]
    ... except IndexError as exc:
    ...     print(type(exc).__name__, exc)
    BoundsCheckError index 4 is out of bounds for axis 0 with size 4
    """


class SelectionTooLargeError(ZarrError, MemoryError, ValueError):
    """A selection's result is too large to read or hold: more bytes than int64 counts,
    or more than could be allocated.  Refused before any chunk is read.

    Also a ``MemoryError`` and a ``ValueError``, as numpy raises for an array it cannot
    allocate or whose size is beyond int64.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2**62, 2**62), dtype="uint8",
    ...                         chunks=(2**20, 2**20))
    >>> try:
    ...     a[...]
    ... except MemoryError as exc:
    ...     print(type(exc).__name__)
    SelectionTooLargeError
    """


class ShapeMismatchError(ZarrError, ValueError):
    """A value cannot be broadcast to the selection's shape (as numpy raises ValueError).

    Also a ``ValueError``.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8")
    >>> try:
    ...     a[:2] = [1, 2, 3]
    ... except ValueError as exc:
    ...     print(type(exc).__name__)
    ShapeMismatchError
    """


class ValueConversionError(ZarrError, ValueError, TypeError, OverflowError):
    """A value to write does not convert to the array's data type the way numpy assignment
    refuses it: a Python integer out of the type's range (numpy: OverflowError), NaN into
    integers (ValueError), complex into reals or None into numbers (TypeError).  It subclasses
    all three so that whichever numpy would raise is caught.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int8")
    >>> try:
    ...     a[0] = 300
    ... except OverflowError as exc:
    ...     print(type(exc).__name__)
    ValueConversionError
    """


class UnsupportedFeatureError(ZarrError, NotImplementedError):
    """A feature of the format (or an option) that this version of zarr3c does not implement.

    Also a ``NotImplementedError``.

    Examples
    --------
    >>> import zarr3c
    >>> try:
    ...     zarr3c.create_group("memory://", zarr_format=4)
    ... except NotImplementedError as exc:
    ...     print(type(exc).__name__)
    UnsupportedFeatureError
    """
