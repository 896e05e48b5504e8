"""The public functions: create and open arrays and groups, as zarr-python 3 names them.

``store`` may be a Store, a path (str or pathlib.Path: LocalStore), ``"memory://"`` (a new
MemoryStore), a dict (a MemoryStore over it) or a URL (``s3://``, ``gs://``, ``az://``,
``http(s)://``: an ObjectStore where obstore is installed, else an FsspecStore; any other
fsspec URL: an FsspecStore).  Modes: ``r``
read-only, must exist; ``r+`` read/write, must exist; ``a`` read/write, created if missing;
``w`` create, replacing what is there; ``w-`` create, fail if something is there.

>>> import zarr3c
>>> g = zarr3c.create_group("memory://")
>>> a = g.create_array("x", shape=(3,), dtype="int8")
>>> zarr3c.open(g.store, "x", mode="r")
<zarr3c.Array '/x' shape=(3,) dtype=int8>
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zarr3c.array import Array, open_array_at
from zarr3c.array import create_array as _create_array
from zarr3c.array.create import DEFAULT_FILL_VALUE
from zarr3c.consolidated import ReadOnce, check_use_consolidated
from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.group import Group, open_group_at, open_node
from zarr3c.group import create_group as _create_group
from zarr3c.metadata.formats import (
    FORMATS,
    HierarchyFormat,
    V2Format,
    detect_format,
    probed_keys,
)
from zarr3c.paths import normalize_path
from zarr3c.settings import config
from zarr3c.stores import make_store

__all__ = ["create_array", "create_group", "open", "open_array", "open_group"]

#: The modes the open functions take (see the module docstring).
MODES = ("r", "r+", "a", "w", "w-")

#: Creating a node in a store with concurrent batches (an object store) first lists it, in
#: one request, where it holds fewer keys than this (an S3 listing page): that one answer
#: tells whether a node or a Zarr v2 hierarchy is there, instead of a read and two
#: existence checks (issue 33's fewest requests; ``compare_object_stores.py``'s ``write``).
FEW_KEYS = 1000


def _check_mode(mode: str) -> None:
    """Refuse a mode other than those in :data:`MODES` (InvalidArgumentError)."""
    if mode not in MODES:
        raise InvalidArgumentError(f"mode must be one of {MODES}, got {mode!r}")


def _config_default(value: Any, key: str) -> Any:
    """``value``, or the setting ``key`` of ``zarr3c.config`` where it is None."""
    return config.get(key) if value is None else value


def _check_zarr_format(zarr_format: Any) -> None:
    if zarr_format not in FORMATS:
        raise UnsupportedFeatureError(
            f"zarr_format {zarr_format!r} is not supported (one of {list(FORMATS)})"
        )


def _format_for_create(store: Any, zarr_format: Any, path: str = "",
                       reads: ReadOnce | None = None) -> HierarchyFormat:
    """The format a new node is written in: the hierarchy's own, which must be the one asked
    for (one hierarchy never mixes layouts).  A store without a hierarchy takes the one
    asked for.  The store is read through ``reads`` (a new :class:`ReadOnce` if None), which
    the caller may pass on to the node's creation: the root ``zarr.json`` is read once, and
    on a store with concurrent batches a store of fewer than :data:`FEW_KEYS` keys is listed
    in one request that answers every check (:func:`_reads_for`), else the existence checks
    of format detection are one batch.

    Raises UnsupportedFeatureError for a ``zarr_format`` zarr3c does not write, and
    UnsupportedFormatError when the store holds a hierarchy in another layout.
    """
    _check_zarr_format(zarr_format)
    reads = _reads_for(store, creating=True) if reads is None else reads
    if getattr(store, "concurrent_batches", False) and reads.get("zarr.json") is None:
        reads.probe(probed_keys(path, opening=False))  # one round trip, not one per key
    detected = detect_format(reads, path, opening=False)
    if detected.zarr_format == zarr_format:
        return detected
    if reads.get("zarr.json") is None and not isinstance(detected, V2Format):
        return FORMATS[zarr_format]()
    raise UnsupportedFormatError(
        f"the store holds a hierarchy in the {detected.zarr_format!r} layout; pass "
        f"zarr_format={detected.zarr_format!r} to add nodes to it",
        source="zarr.json" if reads.get("zarr.json") is not None else None,
    )


def _reads_for(store: Any, creating: bool) -> ReadOnce:
    """The store seen through a :class:`ReadOnce` for one call: its root ``zarr.json`` is
    read once however often it is looked at.  ``creating`` on a store with concurrent
    batches (an object store), a store of fewer than :data:`FEW_KEYS` keys is listed first,
    in one request that answers every check (:meth:`ReadOnce.learn_keys`)."""
    reads = ReadOnce(store)
    if creating and getattr(store, "concurrent_batches", False):
        reads.learn_keys(FEW_KEYS)
    return reads


def _format_for_open(store: Any, path: str, zarr_format: Any) -> HierarchyFormat:
    """The format to open ``path`` in: detected as zarr-python 3 does (v3 first, then v2)
    when ``zarr_format`` is None, else the one asked for.

    Raises UnsupportedFeatureError for a ``zarr_format`` zarr3c does not read, and
    UnsupportedFormatError for a draft layout the store's entry point does not name.
    """
    detected = detect_format(store, path)
    if zarr_format is None or detected.zarr_format == zarr_format:
        return detected
    if zarr_format not in FORMATS:
        raise UnsupportedFeatureError(
            f"zarr_format {zarr_format!r} is not supported (one of {list(FORMATS)})"
        )
    if zarr_format in (2, 3):
        return FORMATS[zarr_format]()
    raise UnsupportedFormatError(
        f"the store holds no {zarr_format!r} hierarchy (its layout is "
        f"{detected.zarr_format!r})", source="zarr.json",
    )


def create_array(
    store: Any,
    name: str | None = None,
    *,
    shape: Any = None,
    dtype: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = (),
    serializer: Any = "auto",
    compressors: Any = "auto",
    fill_value: Any = DEFAULT_FILL_VALUE,
    order: str | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    overwrite: bool = False,
    codecs: Sequence[Any] | None = None,
    zarr_format: Any = 3,
    write_empty_chunks: bool | None = None,
    data: Any = None,
    storage_options: dict[str, Any] | None = None,
    config: Any = None,
) -> Array:
    """Create an array, writing its metadata document to the store.

    The arguments follow zarr-python 3's ``zarr.create_array``.  Nothing is written until
    the new metadata has been checked: an array refused for its arguments leaves the store
    as it was.

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        Where to create the array: a :class:`~zarr3c.Store`; a path (a
        :class:`~zarr3c.LocalStore` over that directory, created if missing); ``"memory://"``
        or None (a new :class:`~zarr3c.MemoryStore`); a dict (a MemoryStore over it); or
        another URL (``"s3://bucket/data.zarr"``: an :class:`~zarr3c.ObjectStore` where
        obstore is installed, else an :class:`~zarr3c.FsspecStore`).
    name : str or None, default None
        Path of the array in the store, names separated by ``"/"`` (leading and trailing
        ``"/"`` are ignored).  None or ``""``: the root.  Missing parent groups are created.
    shape : int, sequence of int or None, default None
        The array's shape (an int for a 1-d array).  Required unless ``data`` is given,
        which then gives it.
    dtype : numpy dtype-like or None, default None
        The element type: one of the Zarr v3 core data types (bool, int8 ... uint64,
        float16/32/64, complex64/128) or raw bytes (``"V<n>"``, stored as ``r<8n>``).
        Required unless ``data`` is given, which then gives it.
    chunks : "auto", int, sequence of int, or sequence with edge lists, default "auto"
        The chunk shape: a tuple of ints (a regular grid), an int (the same length in every
        dimension) or ``"auto"`` (about 1 MiB chunks, found by halving the longest
        dimension).  A dimension given as a list of edge lengths (``[[10, 20, 5], 7]``)
        makes a rectilinear grid
        (https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear).
        With ``shards``: the shape of the inner chunks, which must be regular.
    shards : int, sequence of int, or None, default None
        None: no sharding.  Otherwise the shard shape: the array's chunk grid is then the
        shards, each stored as one object holding inner chunks of shape ``chunks`` in a
        ``sharding_indexed`` codec
        (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html),
        and ``filters``, ``serializer`` and ``compressors`` encode each inner chunk.
    filters : codec or sequence of codecs, default ()
        The array -> array codecs (``transpose``, ``reshape``, numcodecs filters), as codec
        dicts (``{"name": "transpose", "configuration": {"order": [1, 0]}}``) or codec
        objects.
    serializer : "auto", "bytes" or codec, default "auto"
        The array -> bytes codec.  ``"auto"`` and ``"bytes"``: the ``bytes`` codec, little
        endian where the data type has a byte order.
    compressors : "auto", codec, sequence of codecs, or None, default "auto"
        The bytes -> bytes codecs.  ``"auto"``: ``zarr3c.config``'s
        ``"array.v3_default_compressors"`` for a Zarr v3 array, by default zstd at level 0
        without checksum (as zarr-python 3 writes); None: no compression.
    fill_value : scalar or None, optional
        The value of elements never written.  Not given: the data type's default (0,
        False, 0.0, "", or zero bytes).  None: that default too, except in Zarr v2, where
        it writes ``"fill_value": null`` ("no fill value",
        https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#metadata), as zarr-python
        3 does; missing chunks of such an array read as the data type's default.
    order : {"C", "F"} or None, default None
        Memory layout of the numpy arrays that reads return (None: ``zarr3c.config``'s
        ``"array.order"``, by default "C").  In the draft-2022 and zarr2-v3 layouts it is
        also the stored chunk memory layout.
    attributes : dict or None, default None
        User attributes (JSON-serializable), stored in the array's metadata document.
    chunk_key_encoding : str, dict or None, default None
        How chunk coordinates become store keys.  None: ``default`` with the separator
        ``"/"`` (``c/0/1``); a name (``"default"``, ``"v2"``); or a dict such as
        ``{"name": "v2", "configuration": {"separator": "."}}`` (``0.1``), or in
        zarr-python's flat form ``{"name": "v2", "separator": "."}``.
    dimension_names : sequence of str or None, or None, default None
        A name (or None) per dimension, stored in the metadata.
    overwrite : bool, default False
        Replace a node already at ``name`` (it and everything below it is erased first).
        With False, a node there raises ContainsArrayError or ContainsGroupError (naming
        the store and the path) and nothing is written.
    codecs : sequence of codecs or None, default None
        The whole codec list, in order.  When given, ``filters``, ``serializer`` and
        ``compressors`` are ignored; with ``shards``, the list must hold the
        ``sharding_indexed`` codec itself.
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"}, default 3
        The hierarchy layout: 3 is the final Zarr v3 layout
        (https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html); 2 is Zarr v2
        (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html: ``.zarray`` and
        ``.zattrs``, chunk keys ``0.1`` unless ``chunk_key_encoding`` names ``"/"``, the
        codecs as a numcodecs ``compressor`` and ``filters``; ``dtype`` may then also be a
        fixed-length string, bytes, void, structured or datetime64/timedelta64 type, and
        ``dtype=str`` / ``bytes`` make an object array of the ``vlen-utf8`` / ``vlen-bytes``
        codec, as zarr-python 3 does, whose object codec may also be given in ``filters``
        as zarr-python takes it, ``filters=[numcodecs.VLenUTF8()]``); ``"draft-2022"``
        the core spec draft of 25 May 2022
        (https://zarr-specs.readthedocs.io/en/latest/v3/core/v3.0.html); ``"zarr2-v3"``
        zarr-python 2's experimental v3 layout.  A store already holding a hierarchy takes
        only that hierarchy's layout.
    write_empty_chunks : bool or None, default None
        Store chunks that hold only the fill value (None: ``zarr3c.config``'s
        ``"array.write_empty_chunks"``, by default False).  With False such chunks are not
        stored (and erased if they were), so they read as the fill value at no storage cost.
    data : array-like or None, default None
        Values written to the whole array once it is created; its shape and dtype are those
        of the array where ``shape`` and ``dtype`` are not given.  (zarr-python refuses
        ``shape`` or ``dtype`` beside ``data``; zarr3c takes them, the data then being
        written into an array of that shape and type as any write is.)
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store (credentials, ``endpoint_url``,
        ...); refused for local and in-memory stores.
    config : dict or None, default None
        zarr-python's run-time settings of the array: ``{"order": ...,
        "write_empty_chunks": ...}``, each used where the argument of that name is None.

    Returns
    -------
    Array
        The new array, writable.

    Raises
    ------
    InvalidTypeError
        If ``shape`` or ``dtype`` is missing and ``data`` is not given, or ``store`` is not
        store-like.
    ShapeMismatchError
        If ``data`` does not fit the ``shape`` given.
    InvalidArgumentError
        If ``order`` is neither "C" nor "F", or ``config`` is not a dict.
    MetadataError
        If ``shape``, ``dtype``, ``chunks``, ``shards``, a codec's configuration,
        ``fill_value``, ``chunk_key_encoding``, ``dimension_names`` or ``attributes`` is
        invalid (the message names the metadata field); :class:`UnknownExtensionError` (a
        subclass) for an unknown codec or chunk key encoding.
    UnsupportedFeatureError
        If ``zarr_format`` is not one of the layouts above, ``shards`` is given with
        rectilinear inner ``chunks``, or ``config`` has keys other than ``order`` and
        ``write_empty_chunks``.
    UnsupportedFormatError
        If the store holds a hierarchy in another layout than ``zarr_format``.
    ContainsArrayError, ContainsGroupError
        If a node exists at ``name`` and ``overwrite`` is False, or an ancestor of ``name``
        is an array (ContainsArrayError).
    NodeNameError
        If ``name`` holds an invalid node name (empty, only periods, starting with ``__``).
    ReadOnlyError
        If ``store`` is a read-only Store.
    StoreError
        If ``storage_options`` is given for a local or in-memory store, or writing fails.

    See Also
    --------
    open_array : Open an existing array, or create one with mode ``"a"`` or ``"w"``.
    Group.create_array : Create an array below a group.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4, 6), dtype="int32", chunks=(2, 3))
    >>> a[:2, :3] = 7
    >>> a[:3, :4]
    array([[7, 7, 7, 0],
           [7, 7, 7, 0],
           [0, 0, 0, 0]], dtype=int32)

    Sharded, with named dimensions and attributes:

    >>> b = zarr3c.create_array("memory://", name="images/raw", shape=(64, 64),
    ...                         dtype="uint8", chunks=(8, 8), shards=(32, 32),
    ...                         dimension_names=["y", "x"], attributes={"units": "counts"})
    >>> b.chunks, b.shards
    ((8, 8), (32, 32))
    >>> b.attrs["units"]
    'counts'

    In a directory, written from ``data`` (which gives the shape and dtype):

    >>> import numpy as np, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     c = zarr3c.create_array(tmp, data=np.arange(6, dtype="int64").reshape(2, 3))
    ...     print(c.shape, c.dtype, zarr3c.open_array(tmp)[1])
    (2, 3) int64 [3 4 5]

    A Zarr v2 array without a fill value (``"fill_value": null``), as xarray writes one:

    >>> d = zarr3c.create_array({}, shape=(2,), dtype="float32", zarr_format=2,
    ...                         fill_value=None)
    >>> d.metadata.to_dict()["fill_value"], d[...]
    (None, array([0., 0.], dtype=float32))
    """
    if data is None and (shape is None or dtype is None):
        raise InvalidTypeError("create_array() needs shape and dtype, or data (which gives "
                               "them)")
    s = make_store(store, read_only=False, storage_options=storage_options)
    p = normalize_path(name)
    reads = _reads_for(s, creating=True)  # detection and the existence checks share reads
    fmt = _format_for_create(s, zarr_format, p, reads)
    # shape and dtype only where given: the store-level create_array takes them from data.
    given = {k: v for k, v in (("shape", shape), ("dtype", dtype)) if v is not None}
    return _create_array(
        s, p, fmt=fmt, reads=reads, chunks=chunks, shards=shards,
        filters=filters, serializer=serializer, compressors=compressors, fill_value=fill_value,
        order=order, attributes=attributes,
        chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
        overwrite=overwrite, codecs=codecs,
        write_empty_chunks=write_empty_chunks, config=config,
        data=data, **given,
    )


def open_array(
    store: Any,
    path: str | None = None,
    mode: str = "r",
    *,
    write_empty_chunks: bool | None = None,
    order: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **create_kwargs: Any,
) -> Array:
    """Open an array, or create one with mode ``"a"``, ``"w"`` or ``"w-"``.

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        The store holding the array, as for :func:`create_array`.
    path : str or None, default None
        Path of the array in the store (None: the root).
    mode : {"r", "r+", "a", "w", "w-"}, default "r"
        ``"r"``: read-only, the array must exist.  ``"r+"``: read/write, it must exist.
        ``"a"``: read/write; a missing array is created from ``create_kwargs`` when they are
        given (otherwise it must exist).  ``"w"``: create it, replacing any node at
        ``path``.  ``"w-"``: create it, failing if a node is there.
    write_empty_chunks : bool or None, default None
        Store chunks that hold only the fill value (see :func:`create_array`; None:
        ``zarr3c.config``'s ``"array.write_empty_chunks"``).
    order : {"C", "F"} or None, default None
        Memory layout of the numpy arrays reads return (None: ``zarr3c.config``'s
        ``"array.order"``).
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    **create_kwargs
        When the array is created: :func:`create_array`'s keywords (``shape``, ``dtype``,
        ``chunks``, ``shards``, ``filters``, ``serializer``, ``compressors``,
        ``fill_value``, ``attributes``, ``chunk_key_encoding``, ``dimension_names``,
        ``codecs``, ``data`` (which then gives ``shape`` and ``dtype`` if they are
        missing) and ``zarr_format``).  Ignored when an existing array is opened, but for
        ``zarr_format``: without it the format is detected as zarr-python 3 does (a
        ``zarr.json`` first, then Zarr v2's ``.zarray``), with it (2 or 3) only that format
        is read.

    Returns
    -------
    Array
        The array; read-only with mode ``"r"`` or a read-only store.

    Raises
    ------
    InvalidArgumentError
        If ``mode`` or ``order`` is not one of the values above.
    ArrayNotFoundError
        If there is no node at ``path`` and none is created.
    ContainsGroupError
        If a group is at ``path`` (mode ``"w-"``, or any mode that opens).
    ContainsArrayError
        If an array is at ``path`` with mode ``"w-"``.
    MetadataError
        If the array's metadata document is invalid, or, when creating, an argument is
        (see :func:`create_array`).
    UnsupportedFormatError
        If the store holds something other than a Zarr v3, Zarr v2, draft-2022 or zarr2-v3
        hierarchy.
    ReadOnlyError
        If a read-only store is opened with a mode that creates.
    StoreError
        If reading or writing the store fails.

    See Also
    --------
    create_array : Create an array (all keywords explained).
    open : Open an array or a group, whichever is there.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> a = zarr3c.open_array(store, "temperature", mode="a", shape=(4,), dtype="int16")
    >>> a[:] = [1, 2, 3, 4]
    >>> b = zarr3c.open_array(store, "temperature")
    >>> b[1:3], b.read_only
    (array([2, 3], dtype=int16), True)
    """
    _check_mode(mode)
    write_empty_chunks = _config_default(write_empty_chunks, "array.write_empty_chunks")
    order = _config_default(order, "array.order")
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    zarr_format = create_kwargs.pop("zarr_format", None)
    reads = _reads_for(s, creating=mode in ("w", "w-"))
    fmt = _format_for_open(reads, p, zarr_format)
    if mode in ("w", "w-") or (mode == "a" and create_kwargs and not fmt.node_exists(reads, p)):
        fmt = _format_for_create(s, fmt.zarr_format if zarr_format is None else zarr_format,
                                 p, reads)
        return _create_array(s, p, fmt=fmt, overwrite=(mode == "w"), reads=reads,
                             write_empty_chunks=write_empty_chunks, order=order, **create_kwargs)
    return open_array_at(s, p, read_only=(mode == "r"), write_empty_chunks=write_empty_chunks,
                         order=order, fmt=fmt, reads=reads)


def create_group(
    store: Any,
    path: str | None = None,
    attributes: dict[str, Any] | None = None,
    zarr_format: Any = 3,
    overwrite: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Create a group (and any missing parent groups).

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        Where to create it, as for :func:`create_array`.
    path : str or None, default None
        Path of the group in the store (None: the root).
    attributes : dict or None, default None
        User attributes (JSON-serializable).
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"}, default 3
        The hierarchy layout (see :func:`create_array`; 2 writes ``.zgroup`` and
        ``.zattrs``); a store already holding a hierarchy takes only that hierarchy's
        layout.
    overwrite : bool, default False
        Replace a node already at ``path`` (erasing it and everything below it).
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.

    Returns
    -------
    Group
        The new group, writable.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node exists at ``path`` and ``overwrite`` is False, or an ancestor of ``path``
        is an array (ContainsArrayError).
    NodeNameError
        If ``path`` holds an invalid node name.
    MetadataError
        If ``attributes`` is not JSON-serializable.
    UnsupportedFeatureError
        If ``zarr_format`` is not one of the layouts above.
    UnsupportedFormatError
        If the store holds a hierarchy in another layout than ``zarr_format``.
    ReadOnlyError
        If ``store`` is a read-only Store.
    StoreError
        If ``storage_options`` is given for a local or in-memory store, or writing fails.

    See Also
    --------
    open_group : Open a group, creating it if missing (mode ``"a"``).
    Group.create_group : Create a group below another.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.create_group("memory://", "climate/2024", attributes={"source": "model"})
    >>> g
    <zarr3c.Group '/climate/2024'>
    >>> g.attrs["source"]
    'model'
    >>> zarr3c.open_group(g.store, "climate", mode="r").keys()
    ['2024']
    """
    s = make_store(store, read_only=False, storage_options=storage_options)
    p = normalize_path(path)
    reads = _reads_for(s, creating=True)  # detection and the existence checks share reads
    return _create_group(s, p, attributes=attributes, overwrite=overwrite,
                         fmt=_format_for_create(s, zarr_format, p, reads), reads=reads)


def open_group(
    store: Any,
    path: str | None = None,
    mode: str = "a",
    *,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    zarr_format: Any = None,
) -> Group:
    """Open a group; with mode ``"a"`` (the default) a missing group is created.

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        The store holding the group, as for :func:`create_array`.
    path : str or None, default None
        Path of the group in the store (None: the root).
    mode : {"r", "r+", "a", "w", "w-"}, default "a"
        ``"r"``: read-only, the group must exist.  ``"r+"``: read/write, it must exist.
        ``"a"``: read/write, created if missing.  ``"w"``: create it, replacing any node at
        ``path`` (at the root: everything in the store, the new hierarchy in
        ``zarr_format``, Zarr v3 if None, as zarr-python).  ``"w-"``: create it, failing if
        a node is there.
    attributes : dict or None, default None
        User attributes of a group created here (ignored when an existing group is opened).
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    use_consolidated : bool or None, default None
        As in zarr-python: None uses the group's consolidated metadata when its
        ``zarr.json`` has some; True requires it; False ignores it (see
        :mod:`zarr3c.consolidated`; for Zarr v2, the group's ``.zmetadata``).  A group
        created here has none.
    zarr_format : {None, 3, 2, "draft-2022", "zarr2-v3"}, default None
        None: detected as zarr-python 3 does (a ``zarr.json`` first, then Zarr v2's
        ``.zgroup``/``.zmetadata``); otherwise only that format is opened, and a group
        created here is written in it.

    Returns
    -------
    Group
        The group; read-only with mode ``"r"`` or a read-only store.

    Raises
    ------
    InvalidArgumentError
        If ``mode`` is not one of the values above, or ``use_consolidated`` is not None,
        True or False.
    GroupNotFoundError
        If there is no node at ``path`` with mode ``"r"`` or ``"r+"``.
    ContainsArrayError
        If an array is at ``path`` (or, when creating, at an ancestor).
    ContainsGroupError
        If a group is at ``path`` with mode ``"w-"``.
    MetadataError
        If ``use_consolidated`` is True and the group's ``zarr.json`` has no consolidated
        metadata (the message names the key), or a metadata document is invalid.
    UnsupportedFeatureError
        If ``use_consolidated`` is True for a hierarchy not in the Zarr v3 layout.
    UnsupportedFormatError
        If the store holds something other than a Zarr v3, Zarr v2, draft-2022 or zarr2-v3
        hierarchy.
    ReadOnlyError
        If a read-only store is opened with a mode that creates.
    StoreError
        If reading or writing the store fails.

    See Also
    --------
    create_group : Create a group.
    open_consolidated : Open a group from its consolidated metadata.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> g = zarr3c.open_group(store, "experiments")    # created: mode "a"
    >>> g.attrs["run"] = 1
    >>> again = zarr3c.open_group(store, "experiments", mode="r")
    >>> again.attrs["run"], again.read_only
    (1, True)
    """
    _check_mode(mode)
    check_use_consolidated(use_consolidated)
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    if mode == "w" and p == "":
        # The whole hierarchy is replaced, whatever its layout: the new one is in the format
        # asked for (None: Zarr v3), as zarr-python's open_group(mode="w") writes it.
        new_format = 3 if zarr_format is None else zarr_format
        _check_zarr_format(new_format)
        fmt = FORMATS[new_format]()
        reads = _reads_for(s, creating=True)
        old = detect_format(reads, opening=False)
        # (a root node in the same layout is erased by the group's creation, as any node)
        if type(old) is not type(fmt) and old.read_node(reads, "") is not None:
            old.erase_node(s, "")
            reads = ReadOnce(s)  # (what was read is gone)
        return _create_group(s, p, attributes=attributes, overwrite=True, fmt=fmt,
                             reads=reads)
    reads = _reads_for(s, creating=mode in ("w", "w-"))
    fmt = _format_for_open(reads, p, zarr_format)
    creates = mode in ("w", "w-") or (mode == "a" and not fmt.node_exists(reads, p))
    if creates and zarr_format is not None:
        fmt = _format_for_create(s, zarr_format, p, reads)
    if creates:
        return _create_group(s, p, attributes=attributes, overwrite=(mode == "w"), fmt=fmt,
                             reads=reads)
    return open_group_at(s, p, read_only=(mode == "r"), fmt=fmt,
                         use_consolidated=use_consolidated, reads=reads)


def open(
    store: Any,
    path: str | None = None,
    mode: str = "a",
    *,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    zarr_format: Any = None,
    **kwargs: Any,
) -> Array | Group:
    """Open the array or group at ``path``, or create one.

    Parameters
    ----------
    store : Store, str, os.PathLike, dict or None
        The store, as for :func:`create_array`.
    path : str or None, default None
        Path of the node in the store (None: the root).
    mode : {"r", "r+", "a", "w", "w-"}, default "a"
        As for :func:`open_group`.  When a node is created (a missing node with ``"a"``,
        always with ``"w"`` and ``"w-"``) it is an array if ``kwargs`` has ``shape`` or
        ``data``, otherwise a group.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    use_consolidated : bool or None, default None
        For a group, as for :func:`open_group`.
    zarr_format : {None, 3, 2, "draft-2022", "zarr2-v3"}, default None
        As for :func:`open_group`: None detects the format (v3 first, then v2), a value
        opens only that format and creates nodes in it.
    **kwargs
        When creating: the keywords of :func:`open_array` (an array) or :func:`open_group`
        (a group).  When opening an existing array: ``write_empty_chunks`` and ``order``
        apply, others are ignored; for an existing group all are ignored.

    Returns
    -------
    Array or Group
        The node; read-only with mode ``"r"`` or a read-only store.

    Raises
    ------
    InvalidArgumentError
        If ``mode`` is not one of the values above, or ``use_consolidated`` is not None,
        True or False.
    NodeNotFoundError
        If there is no node at ``path`` with mode ``"r"`` or ``"r+"``.
    ContainsArrayError, ContainsGroupError
        If a node is at ``path`` with mode ``"w-"``.
    MetadataError
        If a metadata document is invalid, or, when creating, an argument is (see
        :func:`create_array`).
    UnsupportedFormatError
        If the store holds something other than a Zarr v3, Zarr v2, draft-2022 or zarr2-v3
        hierarchy.
    ReadOnlyError
        If a read-only store is opened with a mode that creates.
    StoreError
        If reading or writing the store fails.

    See Also
    --------
    open_array, open_group : Open a node of a known type.

    Examples
    --------
    >>> import zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.open(store, "a", shape=(2, 2), dtype="float32")   # created: an array
    <zarr3c.Array '/a' shape=(2, 2) dtype=float32>
    >>> zarr3c.open(store, "b")                                    # created: a group
    <zarr3c.Group '/b'>
    >>> zarr3c.open(store, mode="r")                               # the root group
    <zarr3c.Group '/'>
    """
    _check_mode(mode)
    check_use_consolidated(use_consolidated)
    p = normalize_path(path)
    s = make_store(store, read_only=(mode == "r"), storage_options=storage_options)
    # A mode that creates goes straight to open_array / open_group, which detect the format
    # themselves: detecting it here too would read the store twice.
    creates = mode in ("w", "w-")
    if not creates:
        reads = ReadOnce(s)
        fmt = _format_for_open(reads, p, zarr_format)
        creates = mode == "a" and not fmt.node_exists(reads, p)
    if creates:
        if zarr_format is not None:
            kwargs["zarr_format"] = zarr_format
        if "shape" in kwargs or "data" in kwargs:
            return open_array(s, p, mode="w" if mode == "w" else "w-", **kwargs)
        return open_group(s, p, mode="w" if mode == "w" else "w-", **kwargs)
    node = open_node(s, p, read_only=(mode == "r"), fmt=fmt,
                     use_consolidated=use_consolidated, reads=reads)
    if isinstance(node, Array) and kwargs:  # again, from the document already read
        return Array(s, p, node.metadata, read_only=(mode == "r"), fmt=fmt, **{
            k: v for k, v in kwargs.items() if k in ("write_empty_chunks", "order")})
    return node
