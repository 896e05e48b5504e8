"""Creating and opening arrays: create_array's arguments normalised and checked into a
metadata document (:func:`build_array_metadata`), written to a store
(:func:`create_array`), or read back (:func:`open_array_at`).

These take a :class:`~zarr3c.stores.Store` and a normalised path; :func:`zarr3c.create_array`
and :func:`zarr3c.open_array` are the user-facing forms (any store-like, a mode, the Zarr
format)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarr3c.array.core import Array
from zarr3c.codecs.pipeline import (
    CodecPipeline,
    as_codec_list,
    codec_chain,
    normalize_codec_like,
)
from zarr3c.codecs.sharding import sharding_codec_dict
from zarr3c.errors import (
    ArrayNotFoundError,
    ContainsGroupError,
    InvalidArgumentError,
    MetadataError,
    ReadOnlyError,
    UnsupportedFeatureError,
)
from zarr3c.hierarchy import prepare_node
from zarr3c.metadata import ArrayMetadata
from zarr3c.metadata.data_types import DataType, data_type_from_numpy
from zarr3c.metadata.formats import HierarchyFormat, V3Format, detect_format
from zarr3c.metadata.v2 import V2DataType
from zarr3c.metadata.vlen_types import VariableLengthType
from zarr3c.metadata.zarr2v3 import OBJECT_SERIALIZERS
from zarr3c.settings import config as settings  # (create_array takes a `config` argument)
from zarr3c.stores import Store, describe_store

__all__ = ["array_config_arguments", "build_array_metadata", "create_array", "guess_chunks",
           "normalize_chunk_key_encoding", "normalize_chunks", "normalize_shape", "open_array_at"]


class DefaultFillValue:
    """The type of :data:`DEFAULT_FILL_VALUE`, the ``fill_value`` argument's default.

    None cannot be the default: in Zarr v2 ``fill_value=None`` asks for ``"fill_value":
    null`` (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html#metadata), as in
    zarr-python 3, whose ``zarr.core.array.DEFAULT_FILL_VALUE`` this mirrors.
    """

    def __repr__(self) -> str:
        return "DEFAULT_FILL_VALUE"


#: ``fill_value`` not given: the data type's default (0, False, "", zero bytes).
DEFAULT_FILL_VALUE = DefaultFillValue()


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """``shape`` (an int, or a sequence of ints) as a tuple of non-negative ints; a
    :class:`~zarr3c.errors.MetadataError` naming the bad entry otherwise."""
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        items = tuple(shape)
    except TypeError:
        raise MetadataError(f"shape must be an int or a sequence of ints, got {shape!r}",
                            path="shape") from None
    for i, n in enumerate(items):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise MetadataError(f"must be a non-negative integer, got {n!r}", path=f"shape[{i}]")
    return tuple(int(n) for n in items)


def guess_chunks(shape: tuple[int, ...], itemsize: int, target: int = 1 << 20) -> tuple[int, ...]:
    """A chunk shape of about ``target`` bytes: halve the longest dimension until it fits."""
    chunks = [max(1, n) for n in shape]
    while math.prod(chunks) * itemsize > target and max(chunks) > 1:
        i = max(range(len(chunks)), key=lambda j: chunks[j])
        chunks[i] = (chunks[i] + 1) // 2
    return tuple(chunks)


def normalize_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int) -> dict[str, Any]:
    """The ``chunk_grid`` object for create_array's ``chunks``: a regular grid for
    ``"auto"``, an int or a sequence of ints; a rectilinear grid
    (https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear,
    in its most compact exact form) as soon as one dimension is a sequence of edge
    lengths."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunk_shape: list[Any] = list(guess_chunks(shape, itemsize))
    elif isinstance(chunks, int | np.integer) and not isinstance(chunks, bool):
        chunk_shape = [int(chunks)] * len(shape)
    else:
        try:
            items = list(chunks)
        except TypeError:
            raise MetadataError(f"chunks must be an int or a sequence of ints, got {chunks!r}",
                                path="chunk_grid.configuration.chunk_shape") from None
        if any(isinstance(c, Sequence | np.ndarray) and not isinstance(c, str | bytes)
               for c in items):
            from zarr3c.chunk_grids.rectilinear import RectilinearChunkGrid

            return RectilinearChunkGrid.from_chunks(items, shape).to_dict()
        chunk_shape = [int(c) if isinstance(c, np.integer) else c for c in items]
    return {"name": "regular", "configuration": {"chunk_shape": chunk_shape}}


def normalize_chunk_key_encoding(value: Any) -> dict[str, Any]:
    """The ``chunk_key_encoding`` object for create_array's argument: None (the default
    encoding, ``/`` separated), a name, an encoding object or a dict: the metadata's form
    (``{"name": "v2", "configuration": {"separator": "."}}``) or zarr-python's flat one
    (``{"name": "v2", "separator": "."}``)."""
    if value is None:
        return {"name": "default", "configuration": {"separator": "/"}}
    if isinstance(value, str):
        return {"name": value}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    out = dict(value)
    if "separator" in out and "configuration" not in out:
        out["configuration"] = {"separator": out.pop("separator")}
    return out


def build_array_metadata(
    *,
    shape: Any,
    dtype: Any,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = (),
    serializer: Any = "auto",
    compressors: Any = "auto",
    fill_value: Any = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    codecs: Sequence[Any] | None = None,
    source: str | None = None,
) -> ArrayMetadata:
    """Build and validate the Zarr v3 metadata of a new array from create_array's arguments.

    Every codec is stored with its defaults filled in (blosc's typesize, zstd's checksum,
    ...): peers refuse configurations with missing members.

    Parameters
    ----------
    shape
        The array's shape (an int, or a sequence of non-negative ints).
    dtype
        Its numpy data type (anything ``numpy.dtype`` takes).
    chunks
        The chunk shape: a tuple of ints, an int for every dimension, ``"auto"`` (about
        1 MiB chunks), or per dimension a sequence of edge lengths (a rectilinear grid).
        With ``shards``, the inner chunk shape.
    shards
        The shard shape (a tuple of ints): the grid's chunks are then shards of inner chunks
        of ``chunks``, encoded with ``filters``, ``serializer`` and ``compressors``.
    filters
        The array->array codecs (codec dicts or objects).
    serializer
        The array->bytes codec (default ``bytes``, little endian).
    compressors
        The bytes->bytes codecs (default zstd; ``None`` for none).
    fill_value
        The value of elements never written (default 0 / False / "").
    attributes
        The user attributes (JSON-serialisable).
    chunk_key_encoding
        ``None`` (``"default"`` with ``/``), a name, a dict or an encoding object.
    dimension_names
        A name (or None) per dimension.
    codecs
        The whole codec list; overrides ``filters``/``serializer``/``compressors``.
    source
        Where the document will live (its key), named in errors.

    Returns
    -------
    ArrayMetadata
        The checked metadata.

    Raises
    ------
    MetadataError
        A bad shape, chunk shape, fill value, codec or other field (naming it).
    UnsupportedFeatureError
        Inner chunks of a shard that are not regular.
    UnknownExtensionError
        A codec or data type that is not registered.

    Examples
    --------
    >>> from zarr3c.array import build_array_metadata
    >>> meta = build_array_metadata(shape=(4, 4), dtype="int32", chunks=(2, 2))
    >>> meta.shape, [c["name"] for c in meta.to_dict()["codecs"]]
    ((4, 4), ['bytes', 'zstd'])
    """
    shape_t = normalize_shape(shape)
    data_type = data_type_from_numpy(dtype)
    if shards is not None:
        # As zarr-python: the grid's chunks are the shards; filters, serializer and
        # compressors encode each inner chunk (``chunks``) inside them.
        inner = normalize_chunks(chunks, shape_t, data_type.itemsize)
        if inner["name"] != "regular":
            raise UnsupportedFeatureError("inner chunks of a shard must be regular")
        if codecs is None:
            codecs = [sharding_codec_dict(
                inner["configuration"]["chunk_shape"], filters=filters, serializer=serializer,
                compressors=compressors, dtype=data_type.dtype,
            )]
        chunks = shards
    chunk_grid = normalize_chunks(chunks, shape_t, data_type.itemsize)
    if codecs is not None:
        codec_dicts = [normalize_codec_like(c, path=f"codecs[{i}]")
                       for i, c in enumerate(as_codec_list(codecs))]
    else:
        codec_dicts = codec_chain(filters, serializer, compressors, dtype=data_type.dtype)
    fill = data_type.fill_value_from_python(fill_value)
    codec_dicts = CodecPipeline.from_codecs(
        codec_dicts,
        dtype=data_type.dtype,
        fill_value=data_type.fill_array(fill),
        source=source,
    ).to_dicts()
    doc: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape_t),
        "data_type": data_type.to_json(),
        "chunk_grid": chunk_grid,
        "chunk_key_encoding": normalize_chunk_key_encoding(chunk_key_encoding),
        "fill_value": data_type.fill_value_to_json(fill),
        "codecs": codec_dicts,
        "attributes": dict(attributes or {}),
    }
    if dimension_names is not None:
        doc["dimension_names"] = list(dimension_names)
    return ArrayMetadata.from_dict(doc, source=source)


def _format_data_type(fmt: HierarchyFormat, kwargs: dict[str, Any]) -> DataType | None:
    """The data type of a new array where the format has one v3 has no name for (Zarr v2
    strings, times, structured types): ``kwargs`` then get a stand-in of the same size for
    :func:`build_array_metadata` (``int64`` for times, so that the serializer has a byte
    order; raw bytes otherwise) and the fill value's bits; None for every other type."""
    dtype = kwargs.get("dtype")
    if dtype is None:
        return None
    data_type = fmt.data_type(dtype)
    if not isinstance(data_type, V2DataType):
        kwargs["dtype"] = data_type
        return None
    stand_in = data_type_from_numpy("int64" if data_type.dtype.kind in "Mm"
                                    else f"V{data_type.itemsize}")
    fill = data_type.fill_value_from_python(kwargs.get("fill_value"))
    kwargs["dtype"] = stand_in
    kwargs["fill_value"] = np.frombuffer(fill, dtype=stand_in.dtype)[0]
    return data_type


def _object_codec_id(codec: Any) -> str | None:
    """``vlen-utf8`` / ``vlen-bytes`` where ``codec`` (a numcodecs codec, a numcodecs or v3
    codec dict, or a name) is one of these object codecs, else None."""
    if isinstance(codec, str):
        codec_id: Any = codec
    elif isinstance(codec, Mapping):
        codec_id = codec.get("id", codec.get("name"))
    else:
        codec_id = getattr(codec, "codec_id", None)
    if not isinstance(codec_id, str):
        return None
    codec_id = codec_id.removeprefix("numcodecs.")
    return codec_id if codec_id in OBJECT_SERIALIZERS else None


def _object_codec_from_filters(kwargs: dict[str, Any]) -> None:
    """Take the object codec of a new Zarr v2 string or bytes array out of ``filters``, where
    zarr-python 3 takes it for v2 (``filters=[numcodecs.VLenUTF8()]``), and make it the
    serializer, as zarr3c holds it; one of the other type, or a second serializer, is refused
    (MetadataError naming the filter)."""
    data_type = kwargs.get("dtype")
    if not isinstance(data_type, VariableLengthType) or kwargs.get("codecs") is not None:
        return
    filters = as_codec_list(kwargs.get("filters"))
    found = [(i, _object_codec_id(c)) for i, c in enumerate(filters)]
    found = [(i, codec_id) for i, codec_id in found if codec_id is not None]
    if not found:
        return
    for i, codec_id in found:
        if codec_id != data_type.codec:
            raise MetadataError(f"a {data_type.name} array's object codec is "
                                f"{data_type.codec!r}, not {codec_id!r}", path=f"filters[{i}]")
    i, codec_id = found[0]
    if len(found) > 1 or kwargs.get("serializer", "auto") not in ("auto", "bytes",
                                                                  {"name": "bytes"}):
        where = found[1][0] if len(found) > 1 else i
        raise MetadataError(f"the object codec {codec_id!r} (the serializer) is given twice",
                            path=f"filters[{where}]")
    kwargs["filters"] = [c for j, c in enumerate(filters) if j != i]
    kwargs["serializer"] = {"name": codec_id}


def array_config_arguments(config_arg: Any, order: Any,
                           write_empty_chunks: Any) -> tuple[Any, Any]:
    """``order`` and ``write_empty_chunks`` with zarr-python's ``config`` argument (its
    ArrayConfig as a dict, or zarr3c's :class:`~zarr3c.array.compat.ArrayConfig`) applied
    where they are not given.

    Parameters
    ----------
    config_arg : dict, ArrayConfig or None
        ``{"order": ..., "write_empty_chunks": ...}``, either key optional; None: nothing.
    order : {"C", "F"} or None
        The ``order`` argument (it wins over ``config_arg``'s).
    write_empty_chunks : bool or None
        The ``write_empty_chunks`` argument (it wins over ``config_arg``'s).

    Returns
    -------
    tuple
        ``(order, write_empty_chunks)``, each None where neither gives it.

    Raises
    ------
    InvalidArgumentError
        If ``config_arg`` is not a dict.
    UnsupportedFeatureError
        If it has keys other than ``order`` and ``write_empty_chunks``.

    Examples
    --------
    >>> array_config_arguments({"order": "F"}, None, None)
    ('F', None)
    >>> array_config_arguments({"write_empty_chunks": True}, "C", False)
    ('C', False)
    """
    if config_arg is None:
        return order, write_empty_chunks
    if hasattr(config_arg, "_asdict"):  # (zarr3c's ArrayConfig)
        config_arg = config_arg._asdict()
    if not isinstance(config_arg, Mapping):
        raise InvalidArgumentError(f"config must be a dict, got {type(config_arg).__name__}")
    unknown = set(config_arg) - {"order", "write_empty_chunks"}
    if unknown:
        raise UnsupportedFeatureError(f"array config keys {sorted(unknown)} are not supported "
                                      "(only 'order' and 'write_empty_chunks')")
    return (config_arg.get("order", order) if order is None else order,
            config_arg.get("write_empty_chunks", write_empty_chunks)
            if write_empty_chunks is None else write_empty_chunks)


def create_array(
    store: Store,
    path: str,
    *,
    fmt: HierarchyFormat | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool | None = None,
    order: str | None = None,
    data: Any = None,
    config: Any = None,
    reads: Any = None,
    known_group: str | None = None,
    **kwargs: Any,
) -> Array:
    """Create an array at ``path`` in ``store``, writing its metadata (and ``data``).

    The store-level form of :func:`zarr3c.create_array`, which takes any store-like
    (``"memory://"``, a path, a URL with ``storage_options``), a ``name`` and a
    ``zarr_format`` (the hierarchy format, passed here as ``fmt``), and calls this.

    Parameters
    ----------
    store
        The store (writable).
    path
        The array's path in it, already normalised (``""``: the root).
    fmt
        The hierarchy format to write (default Zarr v3).
    overwrite
        Replace a node already at ``path`` (else
        :class:`~zarr3c.errors.ContainsArrayError` /
        :class:`~zarr3c.errors.ContainsGroupError`).
    write_empty_chunks
        Store chunks holding only the fill value too (None: ``zarr3c.config``'s
        ``"array.write_empty_chunks"``, by default False: erase them).
    order
        Memory layout (``"C"`` or ``"F"``) of the numpy arrays reads return (None:
        ``zarr3c.config``'s ``"array.order"``, by default ``"C"``).
    data
        Values to write after creating it; its shape and dtype are the defaults of
        ``shape`` and ``dtype``.
    config
        zarr-python's run-time settings of the array, ``{"order": ...,
        "write_empty_chunks": ...}``, for those of the two not given
        (:func:`array_config_arguments`).
    reads
        The store seen through :class:`zarr3c.consolidated.ReadOnce` for the checks before
        anything is written (the caller's, which detected the format), or None: the store.
    known_group
        The path of the group creating the array (:meth:`zarr3c.Group.create_array`): it
        and its ancestors are not read again (:func:`zarr3c.hierarchy.prepare_node`).
    **kwargs
        The metadata arguments of :func:`build_array_metadata`: ``shape``, ``dtype``,
        ``chunks``, ``shards``, ``filters``, ``serializer``, ``compressors``,
        ``fill_value``, ``attributes``, ``chunk_key_encoding``, ``dimension_names``,
        ``codecs``.  ``compressors`` ``"auto"`` (or not given) in a Zarr v3 hierarchy is
        ``zarr3c.config``'s ``"array.v3_default_compressors"``.  ``fill_value`` not given
        (or :data:`DEFAULT_FILL_VALUE`) is the data type's default; None is too, except in
        Zarr v2, where it writes ``"fill_value": null`` (read as the data type's default).

    Returns
    -------
    Array
        The new array, writable.

    Raises
    ------
    ReadOnlyError
        The store is read-only.
    ContainsArrayError, ContainsGroupError
        A node is already at ``path`` and ``overwrite`` is false.
    MetadataError
        A bad argument (see :func:`build_array_metadata`); nothing is written then.
    InvalidArgumentError
        ``order`` is not ``"C"`` or ``"F"``.

    Examples
    --------
    >>> from zarr3c.array import create_array
    >>> from zarr3c.stores import MemoryStore
    >>> a = create_array(MemoryStore(), "x", shape=(4, 4), dtype="int32", chunks=(2, 2),
    ...                  shards=(4, 4), attributes={"units": "m"}, data=None)
    >>> a.path, a.shards, a.attrs["units"]
    ('x', (4, 4), 'm')
    >>> from zarr3c.metadata.formats import V2Format
    >>> b = create_array(MemoryStore(), "y", shape=(2,), dtype="int8", fill_value=None,
    ...                  fmt=V2Format())
    >>> b.metadata.to_dict()["fill_value"], b[...]
    (None, array([0, 0], dtype=int8))
    """
    fmt = fmt if fmt is not None else V3Format()
    order, write_empty_chunks = array_config_arguments(config, order, write_empty_chunks)
    write_empty_chunks = (settings.get("array.write_empty_chunks") if write_empty_chunks is None
                          else write_empty_chunks)
    order = settings.get("array.order") if order is None else order
    compressors = kwargs.get("compressors", "auto")
    if (isinstance(compressors, str) and compressors == "auto" and fmt.zarr_format == 3
            and kwargs.get("codecs") is None):
        kwargs["compressors"] = settings.get("array.v3_default_compressors")
    if store.read_only:
        raise ReadOnlyError(f"cannot create an array in a read-only store at {path!r}")
    if data is not None:
        data = np.asarray(data)
        kwargs.setdefault("shape", data.shape)
        kwargs.setdefault("dtype", data.dtype)
    source = fmt.metadata_key(path, "array")
    if kwargs.get("chunk_key_encoding") is None and fmt.default_chunk_key_encoding is not None:
        kwargs["chunk_key_encoding"] = fmt.default_chunk_key_encoding
    # None asks for "no fill value" where the format has one (Zarr v2's null); the
    # metadata is built with the data type's default, which is what null reads as.
    null_fill = "fill_value" in kwargs and kwargs["fill_value"] is None
    if kwargs.get("fill_value") is DEFAULT_FILL_VALUE:
        kwargs["fill_value"] = None
    data_type = _format_data_type(fmt, kwargs)
    if fmt.zarr_format == 2:
        _object_codec_from_filters(kwargs)
    metadata = fmt.new_array(build_array_metadata(source=source, **kwargs), order=order,
                             data_type=data_type, null_fill=null_fill)
    # Construct (and so validate the codec chain) before touching the store.
    array = Array(store, path, metadata, write_empty_chunks=write_empty_chunks, order=order,
                  fmt=fmt)
    prepare_node(store, fmt, path, overwrite=overwrite, reads=reads, known_group=known_group)
    fmt.write_node(store, path, metadata)
    if data is not None:
        array[...] = data
    return array


def open_array_at(
    store: Store,
    path: str,
    read_only: bool = False,
    write_empty_chunks: bool = False,
    order: str = "C",
    fmt: HierarchyFormat | None = None,
    reads: Any = None,
) -> Array:
    """Open the existing array at ``path`` in ``store``.

    The store-level form of :func:`zarr3c.open_array` (and what unpickling an array
    calls).

    Parameters
    ----------
    store
        The store.
    path
        The array's path in it, already normalised (``""``: the root).
    read_only
        Refuse writes.
    write_empty_chunks
        Store chunks holding only the fill value too (default: erase them).
    order
        Memory layout (``"C"`` or ``"F"``) of the numpy arrays reads return.
    fmt
        The hierarchy format (default: detected from the store).
    reads
        The store seen through :class:`zarr3c.consolidated.ReadOnce` by the caller, which
        detected the format (its reads are not repeated), or None: the store.

    Returns
    -------
    Array
        The array.

    Raises
    ------
    ArrayNotFoundError
        Nothing is at ``path``.
    ContainsGroupError
        A group is at ``path``.
    MetadataError
        The stored metadata is invalid.

    Examples
    --------
    >>> import zarr3c
    >>> from zarr3c.array import open_array_at
    >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,))
    >>> a[...] = 3
    >>> open_array_at(a.store, "", read_only=True)[1].item()
    3
    """
    seen = store if reads is None else reads
    fmt = fmt if fmt is not None else detect_format(seen, path)
    metadata = fmt.read_node(seen, path)
    if metadata is None:
        if path and fmt.node_exists(seen, path):
            raise ContainsGroupError(f"expected an array at path {path!r}"
                                     f" in store {describe_store(store)}, found a group")
        raise ArrayNotFoundError(
            f"no array at path {path!r}"
            f" in store {describe_store(store)} (no {fmt.metadata_key(path, 'array')!r})"
        )
    if metadata.node_type != "array":
        raise ContainsGroupError(f"expected an array at path {path!r}"
                                 f" in store {describe_store(store)}, found a group")
    return Array(store, path, metadata, read_only=read_only,
                 write_empty_chunks=write_empty_chunks, order=order, fmt=fmt)
