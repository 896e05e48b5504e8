"""zarr-python's convenience functions: ``zarr3c.array``, ``zeros``, ``full``, ``save``, ...

Same names, argument names, defaults and return types as zarr-python 3.4's top-level
functions, built on :func:`zarr3c.create_array` and :func:`zarr3c.open_array`.  Nothing is
replaced that the call does not say to replace: a node already where a new array is to be
written raises :class:`~zarr3c.errors.ContainsArrayError` or
:class:`~zarr3c.errors.ContainsGroupError` (naming the store and the path) unless
``overwrite=True`` or ``mode="w"`` is given, as in zarr-python; :func:`save_group` (like
zarr-python's) replaces what is at its path.

Where zarr3c differs from zarr-python on purpose, the function's docstring says so; two
differences hold for every array these functions return: negative slice steps are read
(zarr-python refuses them), and a write of a value whose shape does not fit the selection is
refused (zarr3c never broadcasts a wrong shape into a selection).

>>> import numpy as np, zarr3c
>>> z = zarr3c.zeros((4, 4), chunks=(2, 2), dtype="int32")
>>> z[1:3, 1:3] = 5
>>> zarr3c.array(z)[1]
array([0, 5, 5, 0], dtype=int32)
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarr3c.api import create_array, open_array, open_group
from zarr3c.array import Array
from zarr3c.array.create import DEFAULT_FILL_VALUE, array_config_arguments
from zarr3c.concurrency import get_num_threads
from zarr3c.errors import InvalidArgumentError, UnsupportedFeatureError
from zarr3c.group import Group
from zarr3c.like import like_args, merge_like
from zarr3c.metadata.formats import detect_format
from zarr3c.paths import join_path, normalize_path
from zarr3c.settings import config
from zarr3c.stores import MemoryStore, make_store

__all__ = [
    "array",
    "create",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "ones",
    "ones_like",
    "open_like",
    "print_debug_info",
    "save",
    "save_array",
    "save_group",
    "tree",
    "zeros",
    "zeros_like",
]

def _zarr_format(zarr_format: Any, zarr_version: Any = None) -> Any:
    """The layout asked for by ``zarr_format`` or its old name ``zarr_version``
    (``zarr3c.config``'s ``"default_zarr_format"`` when neither is given)."""
    if zarr_version is not None and zarr_format is not None and zarr_version != zarr_format:
        raise InvalidArgumentError(f"zarr_version={zarr_version!r} and zarr_format="
                                   f"{zarr_format!r} disagree; pass zarr_format only")
    chosen = zarr_format if zarr_format is not None else zarr_version
    return config.get("default_zarr_format") if chosen is None else chosen


def _format_in(store: Any, zarr_format: Any) -> Any:
    """The layout to write into ``store`` (a Store): ``zarr_format`` where given, else the
    hierarchy's own where the store holds one, else ``zarr3c.config``'s default."""
    if zarr_format is not None or next(iter(store.list()), None) is None:
        return _zarr_format(zarr_format)
    return detect_format(store).zarr_format


def _store(store: Any) -> Any:
    """``store``, or a new MemoryStore where it is None (zarr-python's default)."""
    return MemoryStore() if store is None else store


def _chunk_key_encoding(chunk_key_encoding: Any, dimension_separator: Any,
                        zarr_format: Any) -> Any:
    """create_array's ``chunk_key_encoding`` for zarr-python's ``create`` arguments: the
    v2-era ``dimension_separator`` becomes the layout's encoding with that separator; a
    ``(name, separator)`` tuple becomes the encoding's dict."""
    if dimension_separator is not None:
        if chunk_key_encoding is not None:
            raise InvalidArgumentError("pass chunk_key_encoding or dimension_separator, not both")
        if dimension_separator not in (".", "/"):
            raise InvalidArgumentError(
                f"dimension_separator must be '.' or '/', got {dimension_separator!r}")
        name = "v2" if zarr_format == 2 else "default"
        return {"name": name, "configuration": {"separator": dimension_separator}}
    if isinstance(chunk_key_encoding, tuple):
        name, separator = chunk_key_encoding
        return {"name": name, "configuration": {"separator": separator}}
    return chunk_key_encoding


def _chunks(chunks: Any, chunk_shape: Any, shape: Any) -> Any:
    """create_array's ``chunks`` for ``create``'s ``chunks``/``chunk_shape``: None and True
    (zarr-python 2's "guess") are ``"auto"``, False one chunk for the whole array."""
    if chunk_shape is not None:
        if chunks is not None:
            raise InvalidArgumentError("pass chunks or chunk_shape, not both")
        chunks = chunk_shape
    if chunks is None or chunks is True:
        return "auto"
    if chunks is False:
        return tuple(max(1, n) for n in ((shape,) if isinstance(shape, int) else shape))
    return chunks


def create(
    shape: Any,
    *,
    chunks: Any = None,
    dtype: Any = None,
    compressor: Any = "auto",
    fill_value: Any = DEFAULT_FILL_VALUE,
    order: str | None = None,
    store: Any = None,
    synchronizer: Any = None,
    overwrite: bool = False,
    path: str | None = None,
    chunk_store: Any = None,
    filters: Any = None,
    cache_metadata: bool | None = None,
    cache_attrs: bool | None = None,
    read_only: bool | None = None,
    object_codec: Any = None,
    dimension_separator: str | None = None,
    write_empty_chunks: bool | None = None,
    zarr_version: Any = None,
    zarr_format: Any = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_shape: Any = None,
    chunk_key_encoding: Any = None,
    codecs: Any = None,
    dimension_names: Any = None,
    storage_options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    mode: str | None = None,
    data: Any = None,
    shards: Any = None,
) -> Array:
    """Create an array, with zarr-python's ``zarr.create`` arguments (its v2-era keywords
    mapped onto :func:`zarr3c.create_array`'s).

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    chunks : int, tuple of int, bool or None, default None
        The chunk shape.  None or True: guessed (about 1 MiB chunks, as ``"auto"``); False:
        one chunk for the whole array (zarr-python 3.4 refuses booleans; zarr3c keeps
        zarr-python 2's meaning).
    dtype : numpy dtype-like or None, default None
        The element type; None: float64 (``data``'s type where ``data`` is given).
    compressor : "auto", codec or None, default "auto"
        The compressor: ``"auto"`` the default (zstd for Zarr v3), None none, or one codec
        (a codec dict or numcodecs codec), as ``compressors=[compressor]``.  zarr-python
        3.4 takes it for Zarr v2 only; zarr3c for v3 too.
    fill_value : scalar or None, optional
        The value of elements never written.  Not given: the data type's default (0); None:
        that default too, except in Zarr v2, where it writes ``"fill_value": null``, as
        zarr-python 3 does (see :func:`zarr3c.create_array`).
    order : {"C", "F"} or None, default None
        Memory layout of reads (None: ``zarr3c.config``'s ``"array.order"``).
    store : store-like or None, default None
        Where to create it (None: a new MemoryStore), as :func:`zarr3c.create_array` takes.
    synchronizer : object or None, default None
        Ignored: zarr3c locks chunks itself for concurrent writes.
    overwrite : bool, default False
        Replace a node already at ``path``; otherwise such a node raises.
    path : str or None, default None
        The array's path in the store.
    chunk_store : None
        Must be None: zarr3c keeps chunks beside the metadata.
    filters : list of codecs or None, default None
        The array -> array codecs (numcodecs filters for Zarr v2).  zarr-python 3.4 takes
        them for Zarr v2 only; zarr3c for v3 too.
    cache_metadata, cache_attrs : bool or None, default None
        Ignored (zarr3c reads an array's metadata once when it opens it).
    read_only : bool or None, default None
        Return the new array read-only.
    object_codec : None
        Must be None: zarr3c writes no object arrays this way.
    dimension_separator : {".", "/"} or None, default None
        Zarr v2's chunk key separator: for Zarr v2 the ``v2`` encoding with it, for Zarr v3
        the ``default`` encoding with it (zarr-python 3.4 refuses it for v3).
    write_empty_chunks : bool or None, default None
        Store chunks that hold only the fill value (None: ``zarr3c.config``).
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.
    zarr_format : {2, 3, "draft-2022", "zarr2-v3"} or None, default None
        The layout.  None: the layout of the hierarchy ``store`` holds, else
        ``zarr3c.config``'s ``"default_zarr_format"`` (3).  (zarr-python takes its default
        whatever the store holds.)
    meta_array : None
        Must be None: zarr3c reads into numpy arrays only.
    attributes : dict or None, default None
        User attributes.
    chunk_shape : int, tuple of int or None, default None
        Another name for ``chunks``.
    chunk_key_encoding : str, dict, tuple or None, default None
        As for :func:`zarr3c.create_array`; a ``(name, separator)`` tuple too.
    codecs : list of codecs or None, default None
        The whole Zarr v3 codec list (then ``compressor`` and ``filters`` are ignored).
    dimension_names : sequence of str or None, default None
        A name per dimension.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    config : dict or None, default None
        zarr-python's array config: ``{"order": ..., "write_empty_chunks": ...}``.
    mode : {"a", "w", "w-", "r+"} or None, default None
        ``"w"`` replaces a node at ``path`` (as ``overwrite=True``); the others create the
        array only where nothing is.
    data : array-like or None, default None
        Values written once the array is created (its shape must be ``shape``).
    shards : tuple of int or None, default None
        The shard shape, ``chunks`` then being the inner chunks, as for
        :func:`zarr3c.create_array` (zarr3c's addition: zarr-python's ``create`` does not
        shard; it lets the ``*_like`` functions keep a template's shards).

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is at ``path`` and neither ``overwrite`` nor ``mode="w"`` is given (the
        message names the store and the path).
    InvalidArgumentError
        If two arguments that name the same thing are both given (``chunks`` and
        ``chunk_shape``, ``zarr_version`` and ``zarr_format``, ``dimension_separator`` and
        ``chunk_key_encoding``), or a ``dimension_separator`` or ``mode`` is not valid.
    UnsupportedFeatureError
        If ``chunk_store``, ``object_codec`` or ``meta_array`` is given.
    MetadataError
        If an argument does not make valid metadata (see :func:`zarr3c.create_array`).

    Examples
    --------
    >>> import zarr3c
    >>> z = zarr3c.create((10, 10), chunks=5, dtype="int16", compressor=None,
    ...                   dimension_separator=".", zarr_format=2)
    >>> z.chunks, z.zarr_format, sorted(z.store.list())
    ((5, 5), 2, ['.zarray', '.zattrs'])
    >>> try:
    ...     zarr3c.create((3,), store=z.store)
    ... except zarr3c.errors.ContainsArrayError:
    ...     print("refused: an array is there")
    refused: an array is there
    """
    for name, value in (("chunk_store", chunk_store), ("object_codec", object_codec),
                        ("meta_array", meta_array)):
        if value is not None:
            raise UnsupportedFeatureError(f"create(): {name} is not supported by zarr3c")
    if mode not in (None, "a", "w", "w-", "r+"):
        raise InvalidArgumentError(f"create(): mode must be 'a', 'w', 'w-' or 'r+', got "
                                   f"{mode!r}")
    s = make_store(_store(store), storage_options=storage_options)
    fmt = _format_in(s, zarr_format if zarr_format is not None else zarr_version)
    if zarr_format is not None and zarr_version is not None:
        _zarr_format(zarr_format, zarr_version)  # (refuses the two disagreeing)
    order, write_empty_chunks = array_config_arguments(config, order, write_empty_chunks)
    if dtype is None:
        dtype = np.asarray(data).dtype if data is not None else np.dtype("float64")
    if codecs is None and compressor is not None and not (
            isinstance(compressor, str) and compressor == "auto"):
        compressors: Any = [compressor]
    else:
        compressors = compressor
    out = create_array(
        s, path, shape=shape, dtype=dtype, chunks=_chunks(chunks, chunk_shape, shape),
        filters=() if filters is None else filters, compressors=compressors,
        shards=shards, fill_value=fill_value, order=order, attributes=attributes,
        chunk_key_encoding=_chunk_key_encoding(chunk_key_encoding, dimension_separator, fmt),
        dimension_names=dimension_names, overwrite=overwrite or mode == "w", codecs=codecs,
        zarr_format=fmt, write_empty_chunks=write_empty_chunks, data=data,
    )
    if read_only:
        return open_array(out.store, out.path, mode="r", order=out.order,
                          write_empty_chunks=out.write_empty_chunks)
    return out


def _like(a: Any, kwargs: dict[str, Any], **fixed: Any) -> Array:
    """create(**(like ``a`` | ``kwargs`` | ``fixed``)), in the format ``kwargs`` name (else
    ``a``'s), as zarr-python's ``*_like`` take it."""
    like = like_args(a, kwargs.get("zarr_format", kwargs.get("zarr_version")))
    if "zarr_version" in kwargs:
        like.pop("zarr_format", None)
    if "compressors" in like:  # (create's spelling: a Zarr v2 array has one at most)
        compressors = like.pop("compressors")
        like["compressor"] = compressors[0] if compressors else None
    return create(**{**merge_like(like, kwargs), **fixed})


def zeros(shape: Any, **kwargs: Any) -> Array:
    """Create an array of zeros (its fill value 0: nothing is stored).

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    **kwargs
        :func:`create`'s keywords (``dtype`` float64 by default, ``store``, ``chunks``, ...).

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.zeros((2, 3), dtype="uint8")[...]
    array([[0, 0, 0],
           [0, 0, 0]], dtype=uint8)
    """
    return create(shape, **{**kwargs, "fill_value": 0})


def ones(shape: Any, **kwargs: Any) -> Array:
    """Create an array of ones (its fill value 1: nothing is stored).

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    **kwargs
        :func:`create`'s keywords.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.ones(3, dtype="int8")[...]
    array([1, 1, 1], dtype=int8)
    """
    return create(shape, **{**kwargs, "fill_value": 1})


def empty(shape: Any, **kwargs: Any) -> Array:
    """Create an array without setting its values (they read as the data type's default
    fill value, as in zarr-python).

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    **kwargs
        :func:`create`'s keywords (``fill_value`` included).

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.empty((2,), dtype="float32").fill_value
    np.float32(0.0)
    """
    return create(shape, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """Create an array filled with ``fill_value`` (its fill value: nothing is stored).

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    fill_value : scalar
        The value of every element.
    **kwargs
        :func:`create`'s keywords.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.
    MetadataError
        If ``fill_value`` does not fit the data type, or another argument is invalid.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.full((2, 2), 7, dtype="int16")[...]
    array([[7, 7],
           [7, 7]], dtype=int16)
    """
    return create(shape, **{**kwargs, "fill_value": fill_value})


def zeros_like(a: Any, **kwargs: Any) -> Array:
    """Create an array of zeros with the shape, chunks and dtype of ``a`` (for a zarr3c
    Array also its shards and, in its own format, its codecs; not its attributes), as
    zarr-python does.  The arguments taken from ``a`` are :func:`zarr3c.like.like_args`'s,
    which ``Group.zeros_like`` takes too; zarr3c keeps a sharded template's shard shape,
    which zarr-python 3.4 shrinks to the inner chunk shape.

    Parameters
    ----------
    a : array-like
        A zarr3c Array, numpy array or anything with ``shape`` and ``dtype``.
    **kwargs
        :func:`create`'s keywords, overriding what is taken from ``a``.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    MetadataError
        If an argument, or ``a``'s dtype, does not make valid metadata.
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> zarr3c.zeros_like(np.ones((2, 2), dtype="int8"))[...]
    array([[0, 0],
           [0, 0]], dtype=int8)
    """
    return _like(a, kwargs, fill_value=0)


def ones_like(a: Any, **kwargs: Any) -> Array:
    """Create an array of ones shaped like ``a`` (see :func:`zeros_like`).

    Parameters
    ----------
    a : array-like
        The array whose shape, chunks and dtype are taken.
    **kwargs
        :func:`create`'s keywords, overriding what is taken from ``a``.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    MetadataError
        If an argument, or ``a``'s dtype, does not make valid metadata.
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> zarr3c.ones_like(np.zeros(3, dtype="float32"))[...]
    array([1., 1., 1.], dtype=float32)
    """
    return _like(a, kwargs, fill_value=1)


def empty_like(a: Any, **kwargs: Any) -> Array:
    """Create an array shaped like ``a`` without setting its values (they read as ``a``'s
    fill value where ``a`` is a zarr3c Array, else the data type's default).

    Parameters
    ----------
    a : array-like
        The array whose shape, chunks and dtype are taken.
    **kwargs
        :func:`create`'s keywords, overriding what is taken from ``a``.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    MetadataError
        If an argument, or ``a``'s dtype, does not make valid metadata.
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.full(4, 9, dtype="int32")
    >>> zarr3c.empty_like(a)[...]
    array([9, 9, 9, 9], dtype=int32)
    """
    return _like(a, kwargs)


def full_like(a: Any, **kwargs: Any) -> Array:
    """Create an array shaped like ``a`` filled with ``fill_value`` (``a``'s own fill value
    where not given and ``a`` is a zarr3c Array).

    Parameters
    ----------
    a : array-like
        The array whose shape, chunks and dtype are taken.
    **kwargs
        :func:`create`'s keywords, ``fill_value`` among them.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    MetadataError
        If an argument, or ``a``'s dtype, does not make valid metadata.
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True``.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> zarr3c.full_like(np.zeros(2, dtype="int64"), fill_value=-1)[...]
    array([-1, -1])
    """
    return _like(a, kwargs)


def open_like(a: Any, path: Any, **kwargs: Any) -> Array:
    """Open the array at ``path`` (a store-like, as zarr-python names it), creating it like
    ``a`` (shape, chunks, dtype, fill value) where nothing is there: mode ``"a"``.

    Parameters
    ----------
    a : array-like
        The array whose shape, chunks, dtype (and, for a zarr3c Array, fill value) a new
        array takes.
    path : store-like
        Where the array is (a directory, URL or Store).
    **kwargs
        :func:`zarr3c.open_array`'s keywords (``mode``, ``path`` within the store is not
        one: use ``store``-level paths), overriding what is taken from ``a``.

    Returns
    -------
    Array
        The array found or created.

    Raises
    ------
    ContainsGroupError
        If a group is there.
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.full((4,), 3, dtype="int8", chunks=2)
    >>> b = zarr3c.open_like(a, zarr3c.MemoryStore())
    >>> b.shape, b.chunks, b[...]
    ((4,), (2,), array([3, 3, 3, 3], dtype=int8))
    """
    # As zarr-python: the template's codecs count only for an array of its format (the
    # default one unless ``zarr_format`` is given), which is found, not forced, on opening.
    like = like_args(a, kwargs.get("zarr_format", 3))
    like.pop("zarr_format")
    args = merge_like(like, kwargs)
    args.setdefault("mode", "a")
    return open_array(path, **args)


def array(data: Any, **kwargs: Any) -> Array:
    """Create an array holding ``data`` (by default in a new MemoryStore).

    Parameters
    ----------
    data : array-like
        The values: a numpy array, anything ``numpy.asarray`` takes, or a zarr3c Array
        (then copied chunk by chunk, as :func:`from_array` copies it, keeping its chunks and
        codecs unless others are given).
    **kwargs
        :func:`create`'s keywords (``store``, ``path``, ``chunks``, ``dtype``,
        ``overwrite``, ``attributes``, ...).  ``dtype`` defaults to ``data``'s, ``chunks``
        to ``data``'s chunks where it has some.

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is where it is to be created, without ``overwrite=True`` (nothing is
        written then).
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> z = zarr3c.array(np.arange(6).reshape(2, 3), chunks=(1, 3))
    >>> z.chunks, z[1]
    ((1, 3), array([3, 4, 5]))
    """
    if isinstance(data, Array):
        store = kwargs.pop("store", None)
        name = kwargs.pop("path", kwargs.pop("name", None))
        return from_array(_store(store), data=data, name=name, **kwargs)
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asarray(data)
    kwargs.setdefault("dtype", data.dtype)
    if kwargs.get("chunks") is None and kwargs.get("chunk_shape") is None:
        chunks = like_args(data).get("chunks")
        if chunks is not None:
            kwargs["chunks"] = chunks
    return create(tuple(data.shape), data=data, **kwargs)


_KEEP = "keep"


def _is_keep(value: Any) -> bool:
    return isinstance(value, str) and value == _KEEP


def from_array(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Any = _KEEP,
    shards: Any = _KEEP,
    filters: Any = _KEEP,
    compressors: Any = _KEEP,
    serializer: Any = _KEEP,
    fill_value: Any = DEFAULT_FILL_VALUE,
    order: str | None = None,
    zarr_format: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: dict[str, Any] | None = None,
) -> Array:
    """Create an array in ``store`` from ``data``, keeping what ``data`` has (a zarr3c
    Array's chunks, shards, codecs, fill value, attributes and dimension names) unless told
    otherwise.  A zarr3c Array is copied destination chunk by destination chunk (memory:
    about one chunk per worker thread).

    Parameters
    ----------
    store : store-like
        Where to create the array.
    data : Array or array-like
        The source.
    write_data : bool, default True
        Copy the values (False: only the metadata).
    name : str or None, default None
        The new array's path in ``store``.
    chunks : "keep", "auto", int or tuple of int, default "keep"
        ``"keep"``: ``data``'s chunks (for a numpy array, ``"auto"``).
    shards, filters, compressors, serializer : "keep" or as for create_array, default "keep"
        ``"keep"``: ``data``'s (for a numpy array, create_array's defaults).
    fill_value : scalar or None, optional
        Not given: ``data``'s fill value (for a numpy array, the data type's default).
        None: as :func:`zarr3c.create_array` takes it (the data type's default; Zarr v2:
        ``"fill_value": null``), as in zarr-python 3.4.2.
    order : {"C", "F"} or None, default None
        Memory layout of reads (None: ``data``'s, else ``zarr3c.config``'s).
    zarr_format : {2, 3} or None, default None
        None: ``data``'s layout (3 for a numpy array).  A zarr3c Array copied to another
        layout takes the data type :func:`zarr3c.copy` gives it there (a v2 ``|S4`` is a
        v3 ``null_terminated_bytes``).
    attributes : dict or None, default None
        None: ``data``'s attributes.
    chunk_key_encoding : str, dict or None, default None
        As for :func:`zarr3c.create_array`.
    dimension_names : sequence of str or None, default None
        None: ``data``'s dimension names.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    overwrite : bool, default False
        Replace a node already at ``name``.
    config : dict or None, default None
        zarr-python's array config (``order``, ``write_empty_chunks``).

    Returns
    -------
    Array
        The new array.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is at ``name`` and ``overwrite`` is False (nothing is written).
    InvalidArgumentError
        If ``data`` is a sharded Zarr v3 array with codecs around its sharding codec and
        its codecs are to be changed, or if ``overwrite`` would delete ``data`` before it
        is copied (``name`` is ``data``'s node or contains it, or lies inside it where
        ``data`` stores chunks, in the same data; nothing is written).
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> src = zarr3c.create_array("memory://", shape=(4, 4), dtype="int16", chunks=(2, 2),
    ...                           attributes={"units": "m"})
    >>> src[...] = 1
    >>> copy = zarr3c.from_array("memory://", data=src)
    >>> copy.chunks, copy.attrs["units"], int(copy[...].sum())
    ((2, 2), 'm', 16)
    """
    from zarr3c.transfer import (
        _copy_chunks_reencoded,
        _copy_type,
        _refuse_node_overlap,
        _split_codecs,
    )

    order, write_empty_chunks = array_config_arguments(config, order, None)
    store = make_store(store, storage_options=storage_options)
    storage_options = None  # (used: store is a Store now)
    if write_data and overwrite and isinstance(data, Array):
        _refuse_node_overlap(data, store, normalize_path(name))
    if not isinstance(data, Array):
        values = np.asarray(data)
        out = create_array(
            store, name, shape=values.shape, dtype=values.dtype,
            chunks="auto" if _is_keep(chunks) else chunks,
            shards=None if _is_keep(shards) else shards,
            filters=() if _is_keep(filters) else filters,
            compressors="auto" if _is_keep(compressors) else compressors,
            serializer="auto" if _is_keep(serializer) else serializer,
            fill_value=fill_value,
            order=order, attributes=attributes,
            chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
            overwrite=overwrite, zarr_format=_format_in(store, zarr_format),
            write_empty_chunks=write_empty_chunks, storage_options=storage_options,
        )
        if write_data:
            out[...] = values
        return out
    if zarr_format is None:
        zarr_format = data.zarr_format
    # The data type as the layout of the copy names it (a Zarr v2 "|S4" is a v3
    # null_terminated_bytes), so that copies between layouts keep it, as zarr3c.copy does.
    copied = _copy_type(data, zarr_format)
    keep_codecs = _is_keep(filters) and _is_keep(compressors) and _is_keep(serializer)
    spec: dict[str, Any] = {}
    if keep_codecs and _is_keep(chunks) and _is_keep(shards):
        spec["codecs"] = copied.codecs(data.codecs)
        spec["chunks"] = data.shards if data.shards is not None else data.chunks
    else:
        old_filters, old_serializer, old_compressors = _split_codecs(data)
        spec["filters"] = old_filters if _is_keep(filters) else filters
        spec["serializer"] = (copied.codecs([old_serializer])[0] if _is_keep(serializer)
                              else serializer)
        spec["compressors"] = old_compressors if _is_keep(compressors) else compressors
        spec["chunks"] = data.chunks if _is_keep(chunks) else chunks
        spec["shards"] = data.shards if _is_keep(shards) else shards
    out = create_array(
        store, name, shape=data.shape, dtype=copied.data_type,
        fill_value=copied.fill_value if fill_value is DEFAULT_FILL_VALUE else fill_value,
        order=data.order if order is None else order,
        attributes=dict(data.attrs.asdict()) if attributes is None else attributes,
        chunk_key_encoding=chunk_key_encoding,
        dimension_names=(data.metadata.dimension_names if dimension_names is None
                         else dimension_names),
        overwrite=overwrite, zarr_format=zarr_format, write_empty_chunks=write_empty_chunks,
        storage_options=storage_options, **spec,
    )
    if write_data:
        _copy_chunks_reencoded(data, out, None)
    return out


def save_array(
    store: Any,
    arr: Any,
    *,
    zarr_version: Any = None,
    zarr_format: Any = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Save a numpy array to ``store`` as a Zarr array (like ``numpy.save``).

    As in zarr-python, an existing node at ``path`` is kept and the call refused unless
    ``overwrite=True`` or ``mode="w"`` is given.

    Parameters
    ----------
    store : store-like
        Where to save it.
    arr : array-like
        The values (a scalar makes a 0-d array).
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.
    zarr_format : {2, 3} or None, default None
        The layout (None: ``zarr3c.config``'s default, 3).
    path : str or None, default None
        The array's path in ``store``.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    **kwargs
        :func:`create`'s keywords (``chunks``, ``compressor``, ``overwrite``, ``mode``...).

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        If a node is at ``path`` without ``overwrite=True`` or ``mode="w"``; the message
        names the store and the path, and nothing is written.
    MetadataError
        If an argument does not make valid metadata.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.save_array(store, np.arange(4))
    >>> zarr3c.load(store)
    array([0, 1, 2, 3])
    >>> try:
    ...     zarr3c.save_array(store, np.zeros(2))
    ... except zarr3c.errors.ContainsArrayError:
    ...     print("kept")
    kept
    """
    values = np.asarray(arr) if np.isscalar(arr) or not hasattr(arr, "shape") else arr
    kwargs.setdefault("dtype", values.dtype)
    chunks = like_args(values).get("chunks")
    if chunks is not None and "chunks" not in kwargs:
        kwargs["chunks"] = chunks
    create(tuple(values.shape), store=store, path=path,
           zarr_format=_zarr_format(zarr_format, zarr_version),
           storage_options=storage_options, data=values, **kwargs)


def save_group(
    store: Any,
    *args: Any,
    zarr_version: Any = None,
    zarr_format: Any = None,
    path: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> None:
    """Save numpy arrays as the arrays of a group (like ``numpy.savez``): positional ones
    as ``arr_0``, ``arr_1``, ..., keyword ones under their names.

    As zarr-python does, this **replaces** whatever is at ``path`` (a group or an array,
    and everything below it) with the new group.

    Parameters
    ----------
    store : store-like
        Where to save them.
    *args : array-like
        Arrays saved as ``arr_0``, ``arr_1``, ...
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.
    zarr_format : {2, 3} or None, default None
        The layout (None: 3).
    path : str or None, default None
        The group's path in ``store``.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.
    **kwargs : array-like
        Arrays saved under their keyword names.

    Raises
    ------
    InvalidArgumentError
        If no array is given.
    ContainsArrayError
        If an ancestor of ``path`` is an array.
    MetadataError
        If an array's type has no Zarr form.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.save_group(store, np.arange(3), labels=np.array([1, 2], dtype="u1"))
    >>> loaded = zarr3c.load(store)
    >>> sorted(loaded), loaded["labels"]
    (['arr_0', 'labels'], array([1, 2], dtype=uint8))
    """
    if not args and not kwargs:
        raise InvalidArgumentError("save_group(): at least one array must be provided")
    fmt = _zarr_format(zarr_format, zarr_version)
    arrays = {f"arr_{i}": a for i, a in enumerate(args)} | kwargs
    # Everything is converted before anything is erased.
    values = {k: np.asarray(v) if not hasattr(v, "shape") else v for k, v in arrays.items()}
    g = open_group(store, path, mode="w", zarr_format=fmt, storage_options=storage_options)
    for name, v in values.items():
        save_array(g.store, v, zarr_format=fmt, path=join_path(g.path, name))


def save(
    store: Any,
    *args: Any,
    zarr_version: Any = None,
    zarr_format: Any = None,
    path: str | None = None,
    **kwargs: Any,
) -> None:
    """Save one array (:func:`save_array`) or several (:func:`save_group`).

    Parameters
    ----------
    store : store-like
        Where to save.
    *args : array-like
        The arrays: one positional array and no keywords saves an array, anything else a
        group.
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.
    zarr_format : {2, 3} or None, default None
        The layout (None: 3).
    path : str or None, default None
        The node's path in ``store``.
    **kwargs : array-like
        Arrays saved under their names in a group.

    Raises
    ------
    InvalidArgumentError
        If no array is given.
    ContainsArrayError, ContainsGroupError
        Saving one array where a node is (as :func:`save_array`; a group replaces what is
        there, as :func:`save_group`).

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.save(store, np.arange(3), np.ones(2))
    >>> sorted(zarr3c.load(store))
    ['arr_0', 'arr_1']
    """
    if not args and not kwargs:
        raise InvalidArgumentError("save(): at least one array must be provided")
    fmt = _zarr_format(zarr_format, zarr_version)
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=fmt, path=path)
    else:
        save_group(store, *args, zarr_format=fmt, path=path, **kwargs)


class LazyLoader(Mapping[str, Any]):
    """What :func:`load` returns for a group: a read-only mapping from each array's name to
    its values, read when looked up.

    Parameters
    ----------
    group : Group
        The group whose arrays are loaded.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.save(store, a=np.arange(2))
    >>> zarr3c.load(store)
    <LazyLoader: a>
    """

    def __init__(self, group: Group) -> None:
        self._group = group
        self._names = sorted(group.array_keys())

    def __getitem__(self, name: str) -> Any:
        node = self._group[name] if name in self._names else None
        if not isinstance(node, Array):
            raise KeyError(name)
        return node[...]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"<LazyLoader: {', '.join(self._names)}>"


def load(store: Any, path: str | None = None, zarr_format: Any = None,
         zarr_version: Any = None) -> Any:
    """Load what :func:`save` wrote: an array's values, or for a group a mapping of its
    arrays' names to their values (read as they are looked up).  zarr-python 3.4 raises
    NotImplementedError for a group; zarr3c returns the mapping zarr-python 2 did.

    Parameters
    ----------
    store : store-like
        Where to load from (opened read-only).
    path : str or None, default None
        The node's path in ``store``.
    zarr_format : {2, 3} or None, default None
        Read only that layout (None: detected).
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.

    Returns
    -------
    numpy.ndarray or LazyLoader
        The array's values, or the group's arrays.

    Raises
    ------
    NodeNotFoundError
        If nothing is at ``path`` (the message names the store and the path).

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> store = zarr3c.MemoryStore()
    >>> zarr3c.save(store, np.eye(2))
    >>> zarr3c.load(store)
    array([[1., 0.],
           [0., 1.]])
    """
    if zarr_version is not None and zarr_format is None:
        zarr_format = zarr_version
    from zarr3c.api import open as open_node_api

    node = open_node_api(store, path, mode="r", zarr_format=zarr_format)
    if isinstance(node, Array):
        return node[...]
    return LazyLoader(node)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> str:
    """The hierarchy below ``grp`` as text (:meth:`zarr3c.Group.tree`).

    Parameters
    ----------
    grp : Group
        The group.
    expand : bool or None, default None
        Ignored (zarr-python's rich rendering option; zarr3c's tree is plain text).
    level : int or None, default None
        Show only this many levels below ``grp`` (None: all).

    Returns
    -------
    str
        One line per node (zarr-python returns an object whose ``str`` is such text and
        which notebooks render as HTML; zarr3c returns the text).

    Raises
    ------
    InvalidArgumentError
        If ``grp`` is not a Group, or ``level`` is negative.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.group()
    >>> _ = g.create_array("a/x", shape=(2,), dtype="i1")
    >>> print(zarr3c.tree(g))
    /
    └── a
        └── x (2,) int8
    >>> print(zarr3c.tree(g, level=1))
    /
    └── a
    """
    if not isinstance(grp, Group):
        raise InvalidArgumentError(f"tree() needs a Group, got {type(grp).__name__}")
    if level is not None and (not isinstance(level, int) or level < 0):
        raise InvalidArgumentError(f"level must be a non-negative int or None, got {level!r}")
    text = grp.tree()
    if level is None:
        return text
    # Every level indents a member's line by 4 characters after the root's line.
    lines = text.splitlines()
    kept = [lines[0]] + [ln for ln in lines[1:] if _depth(ln) < level]
    return "\n".join(kept)


def _depth(line: str) -> int:
    """How many levels below the root a line of Group.tree() is (0: a child)."""
    marker = min((i for i in (line.find("├── "), line.find("└── ")) if i >= 0), default=0)
    return marker // 4


def group(
    store: Any = None,
    *,
    overwrite: bool = False,
    chunk_store: Any = None,
    cache_attrs: bool | None = None,
    synchronizer: Any = None,
    path: str | None = None,
    zarr_version: Any = None,
    zarr_format: Any = None,
    meta_array: Any = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open the group at ``path``, creating it where nothing is (``zarr.group``; as
    ``zarr3c.group(...)``, the module being callable).

    Parameters
    ----------
    store : store-like or None, default None
        The store (None: a new MemoryStore).
    overwrite : bool, default False
        Replace whatever is at ``path`` (and below) with a new, empty group.
    chunk_store : None
        Must be None.
    cache_attrs : bool or None, default None
        Ignored.
    synchronizer : object or None, default None
        Ignored (zarr3c locks chunks itself).
    path : str or None, default None
        The group's path.
    zarr_version : {2, 3} or None, default None
        The old name of ``zarr_format``.
    zarr_format : {2, 3} or None, default None
        The layout of a new group (None: the store's, else 3).
    meta_array : None
        Must be None.
    attributes : dict or None, default None
        Attributes of a group created here.
    storage_options : dict or None, default None
        Options for the fsspec filesystem of a URL store.

    Returns
    -------
    Group
        The group, writable.

    Raises
    ------
    ContainsArrayError
        If an array is at ``path`` and ``overwrite`` is False.
    UnsupportedFeatureError
        If ``chunk_store`` or ``meta_array`` is given.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.group(attributes={"title": "demo"})
    >>> zarr3c.group(g.store).attrs["title"]
    'demo'
    """
    for name, value in (("chunk_store", chunk_store), ("meta_array", meta_array)):
        if value is not None:
            raise UnsupportedFeatureError(f"group(): {name} is not supported by zarr3c")
    fmt = zarr_format if zarr_format is not None else zarr_version
    return open_group(_store(store), path, mode="w" if overwrite else "a",
                      attributes=attributes, zarr_format=fmt, storage_options=storage_options)


def print_debug_info() -> None:
    """Print the versions of zarr3c, Python and the libraries it uses, and its settings,
    for bug reports.

    Raises
    ------
    OSError
        If printing to standard output fails.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.print_debug_info()  # doctest: +ELLIPSIS
    platform: ...
    python: ...
    zarr3c: ...
    """
    from zarr3c import __version__

    print(f"platform: {platform.platform()}")
    print(f"python: {sys.version.split()[0]}")
    print(f"zarr3c: {__version__}")
    for dist in ("numpy", "numcodecs", "google-crc32c", "backports.zstd", "fsspec", "s3fs",
                 "dask", "tqdm"):
        try:
            print(f"{dist}: {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            print(f"{dist}: not installed")
    print(f"threads: {get_num_threads()}")
    for key in ("array.order", "array.write_empty_chunks", "default_zarr_format"):
        print(f"config {key}: {config.get(key)!r}")
