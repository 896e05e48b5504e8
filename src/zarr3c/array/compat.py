"""The part of :class:`~zarr3c.Array` that zarr-python 3.4's ``Array`` has and the numpy-style
core does not need: the codec chain split as zarr-python splits it (``filters``,
``serializer``, ``compressors``, v2's ``compressor``), the ``info`` summaries, the bytes
stored, the chunk sizes per dimension, the run-time configuration (``config``,
``with_config``) and the ``open`` / ``from_dict`` constructors.

A mixin, so that :mod:`zarr3c.array.core` stays the array's state and selection dispatch;
everything here is built from that state.  The methods type ``self`` as ``Any``: mypy cannot
give a mixin's ``self`` the type of the class deriving from it (:class:`~zarr3c.Array`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from zarr3c.chunk_grids import RegularChunkGrid
from zarr3c.chunk_grids.chunk_sizes import repeated_sizes
from zarr3c.codecs.base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, Codec
from zarr3c.codecs.sharding import ShardingCodec
from zarr3c.errors import InvalidArgumentError, InvalidTypeError
from zarr3c.info import ArrayInfo

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["ArrayCompat", "ArrayConfig"]


class ArrayConfig(NamedTuple):
    """The run-time settings of an array object (not stored): ``Array.config``.

    Parameters
    ----------
    order : str
        The memory layout (``"C"`` or ``"F"``) of the numpy arrays reads return.
    write_empty_chunks : bool
        Whether chunks holding only the fill value are stored.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.create_array("memory://", shape=(2,), dtype="int8").config
    ArrayConfig(order='C', write_empty_chunks=False)
    """

    order: str
    write_empty_chunks: bool


def _regular_sizes(size: int, length: int) -> Sequence[int]:
    """The lengths of a regular dimension's chunks, the last clipped to the array: a tuple,
    or a lazy sequence equal to it from ``LAZY_SIZES_MIN`` chunks on (a huge grid declared
    in metadata must not become a tuple of as many entries)."""
    nchunks = -(-length // size)
    if nchunks == 0:
        return ()
    return repeated_sizes(size, nchunks, length - (nchunks - 1) * size)


class ArrayCompat:
    """zarr-python's ``Array`` methods and properties beyond the core (see the module)."""

    # -- the codec chain as zarr-python splits it -----------------------------------------------

    def _inner_codecs(self: Any) -> tuple[Codec, ...]:
        """The codecs that encode each chunk: a lone sharding codec's inner chain (the chunks
        inside the shards, as zarr-python's ``metadata.inner_codecs``), else the chain."""
        codecs = self._pipeline.codecs
        if len(codecs) == 1 and isinstance(codecs[0], ShardingCodec):
            return tuple(self._pipeline.array_bytes.codecs)
        return tuple(codecs)

    @property
    def filters(self: Any) -> tuple[Any, ...]:
        """The array->array codecs applied to each chunk before it is serialized (those of
        the inner chunks, for a sharded array), in order.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2),
        ...                         filters=[{"name": "transpose", "configuration":
        ...                                   {"order": [1, 0]}}])
        >>> a.filters
        (TransposeCodec(order=(1, 0)),)
        """
        return tuple(c for c in self._inner_codecs() if isinstance(c, ArrayArrayCodec))

    @property
    def serializer(self: Any) -> Any:
        """The array->bytes codec of each chunk (the inner chunks', for a sharded array); None
        for a Zarr v2 array, as in zarr-python (v2 has no serializer in its metadata).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(8,), dtype="int32", chunks=(2,),
        ...                         shards=(4,))
        >>> a.serializer
        BytesCodec(endian='little')
        """
        if self.zarr_format == 2:
            return None
        return next(c for c in self._inner_codecs() if isinstance(c, ArrayBytesCodec))

    @property
    def compressors(self: Any) -> tuple[Any, ...]:
        """The bytes->bytes codecs applied to each serialized chunk (the inner chunks', for
        a sharded array), in order; ``()`` for none.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4,), dtype="int32").compressors
        (ZstdCodec(level=0, checksum=False),)
        """
        return tuple(c for c in self._inner_codecs() if isinstance(c, BytesBytesCodec))

    @property
    def compressor(self: Any) -> Any:
        """The compressor of a Zarr v2 array (None for none); zarr-python's deprecated
        spelling of :attr:`compressors`, for v2 arrays only.

        Raises
        ------
        InvalidTypeError
            For an array that is not Zarr v2 (a TypeError, as zarr-python raises): use
            :attr:`compressors`.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4,), dtype="int32", zarr_format=2,
        ...                     compressors=None).compressor is None
        True
        """
        if self.zarr_format != 2:
            raise InvalidTypeError(
                f"`compressor` is only available for Zarr v2 arrays; array {self.name!r} is "
                f"zarr_format {self.zarr_format!r}: use `compressors`")
        compressors = self.compressors
        return compressors[0] if compressors else None

    # -- sizes -----------------------------------------------------------------------------------

    def nbytes_stored(self: Any) -> int:
        """The bytes the store holds for the array: its metadata and its stored chunks.

        Returns
        -------
        int
            The sum of the sizes of the array's metadata document(s) and chunks.

        Raises
        ------
        StoreError
            If listing the store or reading a size fails.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,),
        ...                         compressors=None)
        >>> before = a.nbytes_stored()
        >>> a[:2] = 1
        >>> a.nbytes_stored() - before
        8
        """
        store = self._store
        keys = set(store.list_prefix(self._prefix))
        keys.add(self._format.metadata_key(self._path, "array"))
        return sum(store.getsize(key) or 0 for key in keys)

    @property
    def write_chunk_sizes(self: Any) -> tuple[Sequence[int], ...]:
        """Per dimension, the lengths of the stored chunks (shards, for a sharded array),
        the last clipped to the array: dask's ``chunks`` form, as zarr-python 3.4's.  A
        dimension of 2**20 chunks or more gives a lazy sequence equal to that tuple
        (:func:`zarr3c.chunk_grids.chunk_sizes.repeated_sizes`).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(5, 4), dtype="int8", chunks=(2, 4),
        ...                     shards=(4, 4)).write_chunk_sizes
        ((4, 1), (4,))
        """
        grid = self._metadata.chunk_grid
        if isinstance(grid, RegularChunkGrid):
            return tuple(_regular_sizes(size, n)
                         for size, n in zip(grid.chunk_shape, self.shape, strict=True))
        return tuple(grid.array_chunks(self.shape))

    @property
    def read_chunk_sizes(self: Any) -> tuple[Sequence[int], ...]:
        """Per dimension, the lengths of the chunks reads decode (the inner chunks, for a
        sharded array), the last clipped to the array; as zarr-python 3.4's.  A dimension of
        2**20 chunks or more gives a lazy sequence equal to that tuple.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(5, 4), dtype="int8", chunks=(2, 4),
        ...                     shards=(4, 4)).read_chunk_sizes
        ((2, 2, 1), (4,))
        """
        serializer = self._pipeline.array_bytes
        if not isinstance(serializer, ShardingCodec):
            return self.write_chunk_sizes  # type: ignore[no-any-return]
        # Shards are whole multiples of the inner chunks: the inner grid is regular.
        return tuple(_regular_sizes(size, n)
                     for size, n in zip(serializer.chunk_shape, self.shape, strict=True))

    # -- summaries -------------------------------------------------------------------------------

    def _info(self: Any, chunks_initialized: int | None = None,
              bytes_stored: int | None = None) -> ArrayInfo:
        regular = isinstance(self._metadata.chunk_grid, RegularChunkGrid)
        sharded = isinstance(self._pipeline.array_bytes, ShardingCodec)
        shard_shape: Any = None
        if sharded:
            shard_shape = self.shards if regular else "<variable>"
        return ArrayInfo(
            zarr_format=self.zarr_format,
            data_type=self.data_type.describe(),
            fill_value=self.fill_value,
            shape=self.shape,
            shard_shape=shard_shape,
            chunk_shape=self.chunks if (regular or sharded) else None,  # type: ignore[arg-type]
            order=self.order,
            read_only=self.read_only,
            store_type=type(self._store).__name__,
            filters=self.filters,
            serializer=self.serializer,
            compressors=self.compressors,
            count_bytes=self.nbytes,
            count_bytes_stored=bytes_stored,
            count_chunks_initialized=chunks_initialized,
        )

    @property
    def info(self: Any) -> ArrayInfo:
        """What is known of the array without reading the store, as zarr-python's
        ``Array.info`` (its repr is the text; :meth:`info_complete` adds the stored bytes and
        chunks).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(10,), dtype="float32", chunks=(2,))
        >>> a.info
        Type               : Array
        Zarr format        : 3
        Data type          : float32
        Fill value         : 0.0
        Shape              : (10,)
        Chunk shape        : (2,)
        Order              : C
        Read-only          : False
        Store type         : MemoryStore
        Filters            : ()
        Serializer         : BytesCodec(endian='little')
        Compressors        : (ZstdCodec(level=0, checksum=False),)
        No. bytes          : 40
        """
        return self._info()

    def info_complete(self: Any) -> ArrayInfo:
        """:attr:`info` with what needs the store: the bytes stored (metadata included, as
        :meth:`nbytes_stored`), their ratio to the decoded bytes and the stored chunks
        (shards, for a sharded array).

        Returns
        -------
        ArrayInfo
            The summary; its repr is the text.

        Raises
        ------
        StoreError
            If listing the store or reading a size fails.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,))
        >>> a[:] = 1
        >>> info = a.info_complete()
        >>> info.count_chunks_initialized, info.count_bytes_stored == a.nbytes_stored()
        (2, True)
        """
        return self._info(sum(1 for _ in self._stored_chunks()), self.nbytes_stored())

    # -- run-time configuration ------------------------------------------------------------------

    @property
    def config(self: Any) -> ArrayConfig:
        """The run-time settings of this array object: ``order`` and
        ``write_empty_chunks`` (an :class:`ArrayConfig`).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(2, 2), dtype="int8", order="F").config
        ArrayConfig(order='F', write_empty_chunks=False)
        """
        return ArrayConfig(self._order, self._write_empty_chunks)

    def with_config(self: Any, config: Mapping[str, Any] | ArrayConfig) -> Array:
        """The same stored array under other run-time settings (this object is unchanged).

        Parameters
        ----------
        config : dict or ArrayConfig
            ``order`` and/or ``write_empty_chunks``; settings not given keep their values.

        Returns
        -------
        Array
            A new array object over the same store path.

        Raises
        ------
        InvalidArgumentError
            A key other than ``order`` and ``write_empty_chunks``, or an ``order`` other
            than ``"C"`` or ``"F"``.
        InvalidTypeError
            ``config`` is not a mapping or an :class:`ArrayConfig`.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(2, 2), dtype="int8")
        >>> b = a.with_config({"order": "F", "write_empty_chunks": True})
        >>> b.config, a.config.order
        (ArrayConfig(order='F', write_empty_chunks=True), 'C')
        """
        from zarr3c.array.core import Array

        if isinstance(config, ArrayConfig):
            settings = config._asdict()
        elif isinstance(config, Mapping):
            settings = dict(config)
        else:
            raise InvalidTypeError(
                f"config must be a dict or an ArrayConfig, got {type(config).__name__}")
        unknown = sorted(set(settings) - set(ArrayConfig._fields))
        if unknown:
            raise InvalidArgumentError(
                f"unknown array config key(s) {unknown}; known: {list(ArrayConfig._fields)}")
        merged = self.config._replace(**settings)
        return Array(self._store, self._path, self._metadata, read_only=self._read_only,
                     write_empty_chunks=merged.write_empty_chunks, order=merged.order,
                     fmt=self._format)

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def open(cls, store: Any, *, config: Mapping[str, Any] | ArrayConfig | None = None
             ) -> Array:
        """Open the array at the root of ``store`` (read-write unless the store is
        read-only), as zarr-python's ``Array.open``.

        Parameters
        ----------
        store : Store, str, os.PathLike or dict
            A store-like, as :func:`zarr3c.open_array` takes.
        config : dict, ArrayConfig or None, default None
            Run-time settings (see :meth:`with_config`).

        Returns
        -------
        Array
            The array.

        Raises
        ------
        ArrayNotFoundError
            No array at the store's root.
        ContainsGroupError
            A group is there.
        InvalidArgumentError
            A bad ``config`` (see :meth:`with_config`).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="int8")
        >>> zarr3c.Array.open(a.store).shape
        (3,)
        """
        from zarr3c.api import open_array

        array = open_array(store, mode="r" if getattr(store, "read_only", False) else "r+")
        return array if config is None else array.with_config(config)

    @classmethod
    def from_dict(cls, store_path: Any, data: Mapping[str, Any]) -> Array:
        """An array object for the metadata document ``data`` at ``store_path``, nothing
        written (as zarr-python's ``Array.from_dict``): reads give the fill value where no
        chunk is stored.

        Parameters
        ----------
        store_path : StorePath or tuple of (Store, str)
            Where the array is: a store and a path in it.
        data : dict
            A Zarr v3 array metadata document (``zarr.json``'s content).

        Returns
        -------
        Array
            The array object.

        Raises
        ------
        MetadataError
            ``data`` is not a valid v3 array document.
        NodeNameError
            The path is not valid.
        InvalidTypeError
            ``store_path`` is not a (store, path) pair.

        Examples
        --------
        >>> import zarr3c
        >>> from zarr3c.paths import StorePath
        >>> doc = zarr3c.create_array("memory://", shape=(2,), dtype="int8").metadata.to_dict()
        >>> zarr3c.Array.from_dict(StorePath(zarr3c.MemoryStore(), "x"), doc)
        <zarr3c.Array '/x' shape=(2,) dtype=int8>
        """
        from zarr3c.array.core import Array
        from zarr3c.metadata import ArrayMetadata
        from zarr3c.paths import normalize_path

        try:
            store, path = store_path
        except (TypeError, ValueError):
            raise InvalidTypeError(
                f"store_path must be a StorePath or a (store, path) pair, got "
                f"{type(store_path).__name__}") from None
        path = normalize_path(path)
        metadata = ArrayMetadata.from_dict(dict(data), source=f"{path}/zarr.json".lstrip("/"))
        return Array(store, path, metadata)
