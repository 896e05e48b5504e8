"""The user-facing :class:`Array`: numpy-style reads and writes over chunks in a store.

The class holds the array's state (metadata, codec pipeline, chunk geometry, the per-array
facts of the short read paths) and dispatches each selection to its path: reads to
:mod:`zarr3c.array.read` (the map of the read paths is that package's docstring), writes,
resize and append to :mod:`zarr3c.array.write`.  Its methods stay thin: the paths are
module functions taking the array."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from zarr3c._buffers import holds_references
from zarr3c._kernels.boxes import basic_box
from zarr3c.array import geometry, objects, write
from zarr3c.array.compat import ArrayCompat
from zarr3c.array.read import boxes, general, many, points, shard_boxes
from zarr3c.array.read.plan import Box, BoxGrid, InnerBox
from zarr3c.array.read.queued import ReadQueue
from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.codecs.sharding import GetRanges, ShardingCodec, StoreRanges, partial_read_codec
from zarr3c.errors import (
    IndexingError,
    InvalidArgumentError,
    InvalidTypeError,
    ShapeMismatchError,
)
from zarr3c.indexing import (
    NumpyLayout,
    bool_scalar_as_new_axis,
    numpy_advanced_coordinates,
    numpy_coordinates,
    parse_basic_selection,
    parse_block_selection,
    parse_coordinate_selection,
    parse_mask,
    parse_orthogonal_selection,
    read_indexers,
    selection_kind,
)
from zarr3c.metadata import ArrayMetadata
from zarr3c.metadata.data_types import DataType
from zarr3c.metadata.formats import HierarchyFormat
from zarr3c.node import Node
from zarr3c.settings import config
from zarr3c.stores import Store

__all__ = ["Array"]


class _Indexer:
    """``a.oindex`` / ``a.vindex`` / ``a.blocks``: a selection mode with [] reads and writes."""

    __slots__ = ("_get", "_set")

    def __init__(self, get: Callable[[Any], Any], set_: Callable[[Any, Any], None]):
        self._get = get
        self._set = set_

    def __getitem__(self, selection: Any) -> Any:
        return self._get(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._set(selection, value)


class Array(ArrayCompat, Node):
    """A Zarr v3 array in a store, read and written with numpy-style indexing.

    Create one with :func:`zarr3c.create_array`, open one with :func:`zarr3c.open_array`;
    the constructor takes metadata already read or built.

    Parameters
    ----------
    store
        The store holding the array.
    path
        The array's path in the store (normalised; ``""`` for the root).
    metadata
        Its metadata document, parsed (:class:`~zarr3c.metadata.ArrayMetadata`).
    read_only
        Refuse writes (:class:`~zarr3c.errors.ReadOnlyError`).
    write_empty_chunks
        Store chunks holding only the fill value too (False: erase them; None:
        ``zarr3c.config``'s ``"array.write_empty_chunks"``, by default False).
    order
        Memory layout (``"C"`` or ``"F"``) of the numpy arrays reads return (None:
        ``zarr3c.config``'s ``"array.order"``, by default ``"C"``).
    fmt
        The hierarchy format (key layout) of the store; default Zarr v3.

    Raises
    ------
    InvalidArgumentError
        ``order`` is not ``"C"`` or ``"F"``.
    MetadataError
        The codec chain does not fit the data type or the chunk shapes.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
    >>> a[...] = np.arange(16).reshape(4, 4)
    >>> a[1:3, 2].tolist()
    [6, 10]
    >>> a
    <zarr3c.Array '/' shape=(4, 4) dtype=int32>
    """

    kind = "array"

    # Chunk geometry (zarr3c.array.geometry), as methods without a layer between.
    _chunk_origin = geometry.chunk_origin
    _chunk_shape_at = geometry.chunk_shape_at
    _stored_chunks = geometry.stored_chunks

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadata,
        *,
        read_only: bool = False,
        write_empty_chunks: bool | None = None,
        order: str | None = None,
        fmt: HierarchyFormat | None = None,
    ):
        # Read here, so that every way to an Array (open_array, open, a group's members,
        # create_array, from_dict) takes the settings in force when it is made.
        if write_empty_chunks is None:
            write_empty_chunks = config.get("array.write_empty_chunks")
        if order is None:
            order = config.get("array.order")
        if order not in ("C", "F"):
            raise InvalidArgumentError(f"order must be 'C' or 'F', got {order!r}")
        super().__init__(store, path, metadata, read_only=read_only, fmt=fmt)
        key = self._format.metadata_key(path, "array")
        self._write_empty_chunks = bool(write_empty_chunks)
        self._order = order
        # (validated for every chunk shape before the grid's facts are computed from them)
        self._pipeline = CodecPipeline.for_array(
            metadata.codecs,
            dtype=metadata.dtype,
            fill_value=metadata.fill_value_array,
            chunk_shapes=metadata.chunk_grid.distinct_chunk_shapes(metadata.shape),
            source=key,
        )
        # Set when chunks are shards whose inner chunks can be read by byte range.
        self._sharding = partial_read_codec(self._pipeline)
        self._read_queue = ReadQueue(self)
        self._set_metadata(metadata)

    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        self._metadata = metadata
        self._dims = metadata.chunk_grid.dimensions(metadata.shape)
        self._itemsize = metadata.dtype.itemsize
        self._fill_bytes = np.frombuffer(metadata.fill_value, dtype=np.uint8)
        self._prefix = self._format.chunk_prefix(self._path)
        self._encode_key = metadata.chunk_key_encoding.encode_chunk_key
        # The short paths' facts of a regular grid (None otherwise), computed once.
        self._box_grid: BoxGrid | None
        self._inner_box: InnerBox | None
        self._box_grid, self._inner_box = geometry.regular_grid_facts(
            metadata, self._sharding, self._itemsize)
        #: Elements are references (strings, bytes): every read and write takes
        #: ``objects``' path, never the byte kernels' (no short paths, no native pipeline).
        self._references = holds_references(metadata.dtype)
        if self._references:
            self._box_grid, self._inner_box = None, None

    # -- properties ------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 6), dtype="int32", chunks=(2, 2)).shape
        (4, 6)
        """
        return self._metadata.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        """Setting the shape resizes the array, as :meth:`resize` (zarr-python's setter)."""
        self.resize(value)

    @property
    def dtype(self) -> np.dtype:
        """The numpy data type of the elements.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4,), dtype="<u2", chunks=(2,)).dtype
        dtype('uint16')
        """
        return self._metadata.dtype

    @property
    def data_type(self) -> DataType:
        """The Zarr data type of the elements (its name is the metadata's ``data_type``).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4,), dtype="float32", chunks=(2,)
        ...                     ).data_type.name
        'float32'
        """
        return self._metadata.data_type

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2)).ndim
        2
        """
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 6), dtype="int32", chunks=(2, 2)).size
        24
        """
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes, decoded (not what the store holds).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 6), dtype="int32", chunks=(2, 2)
        ...                     ).nbytes
        96
        """
        return self.size * self._itemsize

    @property
    def chunks(self) -> tuple[int, ...] | tuple[Sequence[int], ...]:
        """The chunk shape of a regular grid.  For a rectilinear grid, per dimension the
        edge lengths of the chunks clipped to the array: the form dask uses (the full edges,
        overflowing ones included, are on ``metadata.chunk_grid``); a bare-integer
        dimension of 2**20 chunks or more gives a lazy sequence equal to that tuple
        (``zarr3c.chunk_grids.chunk_sizes``).  For a sharded array,
        the inner chunk shape, as in zarr-python (the shards are :attr:`shards`).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 6), dtype="int32", chunks=(2, 3)
        ...                     ).chunks
        (2, 3)
        >>> zarr3c.create_array("memory://", shape=(5,), dtype="int32", chunks=[[2, 3]]
        ...                     ).chunks
        ((2, 3),)
        """
        serializer = self._pipeline.array_bytes
        if isinstance(serializer, ShardingCodec):
            return tuple(serializer.chunk_shape)
        return self._metadata.chunk_grid.array_chunks(self.shape)  # type: ignore[no-any-return]

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array (its grid's chunks; dask-style edge lengths
        for a rectilinear grid of shards), else None.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="int32", chunks=(2, 2),
        ...                         shards=(4, 4))
        >>> a.shards, a.chunks
        ((4, 4), (2, 2))
        """
        if not isinstance(self._pipeline.array_bytes, ShardingCodec):
            return None
        return self._metadata.chunk_grid.array_chunks(self.shape)  # type: ignore[no-any-return]

    @property
    def fill_value(self) -> Any:
        """The value of elements never written (a numpy scalar of :attr:`dtype`).

        None for a Zarr v2 array whose metadata says ``"fill_value": null``, as in
        zarr-python 3; its unwritten elements read as the data type's default (0, ``""``,
        NaT for times).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,),
        ...                         fill_value=-1)
        >>> int(a.fill_value), a[0].item()
        (-1, -1)
        >>> v2 = zarr3c.create_array("memory://", shape=(2,), dtype="int32", zarr_format=2,
        ...                          fill_value=None)
        >>> v2.fill_value is None, v2[0].item()
        (True, 0)
        """
        md = self._metadata
        if md.zarr_format == 2 and getattr(md, "fill_value_json", 0) is None:
            return None
        return self._fill_scalar

    @property
    def _fill_scalar(self) -> Any:
        """What unwritten elements read as (for a v2 null, the data type's default)."""
        return self._metadata.fill_value_array[()]

    @property
    def order(self) -> str:
        """The memory layout (``"C"`` or ``"F"``) of the numpy arrays reads return.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2),
        ...                         order="F")
        >>> a.order, a[...].flags.f_contiguous
        ('F', True)
        """
        return self._order

    @property
    def write_empty_chunks(self) -> bool:
        """Whether chunks holding only the fill value are stored (else they are erased).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,))
        >>> a[...] = 0
        >>> a.write_empty_chunks, a.nchunks_initialized
        (False, 0)
        """
        return self._write_empty_chunks

    @property
    def codecs(self) -> tuple[Any, ...]:
        """The codec objects of the array's codec chain, in order (array->array codecs,
        the array->bytes codec, bytes->bytes codecs).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4,), dtype="int32", chunks=(2,),
        ...                         compressors=None)
        >>> [type(c).__name__ for c in a.codecs]
        ['BytesCodec']
        """
        return self._pipeline.codecs

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """The shape of the chunk grid: chunks per dimension.  For a sharded array, the
        inner chunks across the whole array, as zarr-python 3.4 counts them (the shards
        per dimension are ``ceil(shape / shards)``).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 5), dtype="int32", chunks=(2, 2)
        ...                     ).cdata_shape
        (2, 3)
        >>> zarr3c.create_array("memory://", shape=(10,), dtype="int32", chunks=(2,),
        ...                     shards=(4,)).cdata_shape
        (5,)
        """
        sharding = self._pipeline.array_bytes
        if isinstance(sharding, ShardingCodec):
            return tuple(-(-n // c) for n, c in zip(self.shape, sharding.chunk_shape,
                                                    strict=True))
        return geometry.grid_shape(self)

    @property
    def nchunks(self) -> int:
        """The number of chunks of the grid (stored or not); inner chunks for a sharded
        array (see :attr:`cdata_shape`).

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.create_array("memory://", shape=(4, 5), dtype="int32", chunks=(2, 2)
        ...                     ).nchunks
        6
        """
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """The number of chunks stored (inside the grid); lists the store.

        For a sharded array, as zarr-python 3.4 counts them: the inner chunks of every
        stored shard, each shard counted at its full declared size (all its inner chunks,
        written or not, and for an edge shard also those wholly past the array's end), so
        the count can exceed the inner chunks the array has.  ``info_complete()`` gives
        the number of stored shards.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[0, 0] = 1
        >>> a.nchunks_initialized
        1
        >>> s = zarr3c.create_array("memory://", shape=(10,), dtype="int8", chunks=(1,),
        ...                         shards=(2,))
        >>> s[:5] = 1  # three shards of two inner chunks
        >>> s.nchunks_initialized
        6
        """
        sharding = self._pipeline.array_bytes
        if not isinstance(sharding, ShardingCodec):
            return sum(1 for _ in self._stored_chunks())
        inner = sharding.chunk_shape
        return sum(
            math.prod(n // c for n, c in zip(self._chunk_shape_at(coords), inner, strict=True))
            for _, coords in self._stored_chunks())

    def __len__(self) -> int:
        if not self.shape:
            raise InvalidTypeError("len() of unsized object (a 0-d array)")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<zarr3c.Array {self.name!r} shape={self.shape} dtype={self.dtype}>"

    def __reduce__(self) -> tuple[Any, ...]:
        from zarr3c.array.create import open_array_at

        return (
            open_array_at,
            (self._store, self._path, self._read_only, self._write_empty_chunks, self._order),
        )

    # -- chunks ----------------------------------------------------------------------------------

    def chunk_key(self, coords: Sequence[int]) -> str:
        """The store key of the chunk (the shard, for a sharded array) at grid ``coords``.

        Parameters
        ----------
        coords
            The chunk's grid coordinates, one per dimension.

        Returns
        -------
        str
            Its key: the array's path, then the chunk key encoding of ``coords``.

        Raises
        ------
        InvalidArgumentError
            ``coords`` do not have one entry per dimension (for the encodings that check).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a.chunk_key((1, 0))
        'c/1/0'
        """
        return self._prefix + self._encode_key(tuple(coords))

    def _ranges_of(self, key: str) -> GetRanges:
        """The shard reader's ``get_ranges``: byte ranges of ``key``, in one store request."""
        return StoreRanges(self._store, key)

    def _in_order(self, result: np.ndarray) -> np.ndarray:
        """``result`` in the array's memory order (a copy only for F order, 2-d and up)."""
        if self._order == "F" and result.ndim > 1:
            return np.asfortranarray(result)
        return result

    # -- reads -----------------------------------------------------------------------------------

    def __getitem__(self, selection: Any) -> Any:
        """Read a selection, as numpy indexing reads it.

        Basic selections (ints, slices, ``...``, ``None``) read as
        :meth:`get_basic_selection`; integer or boolean arrays as numpy's advanced indexing
        (one array or broadcast arrays: :meth:`get_coordinate_selection`; arrays on several
        axes with slices between: orthogonal, :meth:`get_orthogonal_selection`).

        Parameters
        ----------
        selection
            The key, as numpy takes it.

        Returns
        -------
        numpy.ndarray or scalar
            The values, of numpy's shape for the key; a numpy scalar for all-integer keys.

        Raises
        ------
        IndexingError
            An invalid key (:class:`~zarr3c.errors.BoundsCheckError`: an index out of
            bounds).
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a[1, 1:3].tolist(), int(a[3, 3]), a[[0, 2], [1, 3]].tolist()
        ([5, 6], 15, [1, 11])
        """
        grid = self._box_grid
        if grid is not None:
            # A step-1 box of ints and slices (most small reads): straight to the short path.
            box = basic_box(selection, grid.array_shape)
            if box is not None:
                return self._read_box(box)
        selection = read_indexers(selection)
        kind = selection_kind(selection, self.ndim)
        if kind == "coordinate":
            return self.get_coordinate_selection(numpy_coordinates(selection, self.shape))
        if kind == "numpy":
            as_axis = bool_scalar_as_new_axis(selection)
            if as_axis is not None:
                return self.get_basic_selection(as_axis)
            if self.ndim == 0:  # (no axis to give coordinates on: numpy on the one element)
                return _numpy_key_of_0d(self.get_basic_selection(...), selection)
            return self.get_coordinate_selection(
                numpy_advanced_coordinates(selection, self.shape))
        if kind == "orthogonal":
            layout = NumpyLayout.of(selection, self.ndim)
            if layout is None:
                return self.get_orthogonal_selection(selection)
            return self._in_order(layout.to_numpy(self.get_orthogonal_selection(layout.key)))
        return self.get_basic_selection(selection)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self.get_basic_selection(Ellipsis)
        return data if dtype is None else data.astype(dtype, copy=False)

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    @property
    def oindex(self) -> _Indexer:
        """Orthogonal indexing: ``a.oindex[[1, 5], :]`` selects rows 1 and 5, all columns
        (per axis an int, a slice, an integer array or a boolean array; the outer product
        of them).  Reads with :meth:`get_orthogonal_selection`, writes with
        :meth:`set_orthogonal_selection`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.oindex[[0, 2], [1, 3]].tolist()
        [[1, 3], [9, 11]]
        """
        return _Indexer(self.get_orthogonal_selection, self.set_orthogonal_selection)

    @property
    def vindex(self) -> _Indexer:
        """Coordinate (vectorised) indexing: ``a.vindex[rows, cols]`` picks points; a
        boolean mask of the array's shape picks the points where it is true.  Reads with
        :meth:`get_coordinate_selection`, writes with :meth:`set_coordinate_selection`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.vindex[[0, 2], [1, 3]].tolist()
        [1, 11]
        """
        return _Indexer(self.get_coordinate_selection, self.set_coordinate_selection)

    @property
    def blocks(self) -> _Indexer:
        """Chunk-aligned blocks by chunk index: ``a.blocks[1, -1]``, ``a.blocks[0:2]``.
        Reads with :meth:`get_block_selection`, writes with :meth:`set_block_selection`.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.blocks[1, 0].tolist()
        [[8, 9], [12, 13]]
        """
        return _Indexer(self.get_block_selection, self.set_block_selection)

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        """Read a basic selection: ints, slices with any step, ``...`` and ``None``.

        Parameters
        ----------
        selection
            The key (default ``...``: the whole array).

        Returns
        -------
        numpy.ndarray or scalar
            numpy's result for the key: a numpy scalar for all-integer keys (without
            ``...``), else an array in the array's :attr:`order`.

        Raises
        ------
        IndexingError
            An invalid key (:class:`~zarr3c.errors.BoundsCheckError`: an index out of
            bounds).
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.get_basic_selection((slice(None, None, 2), 1)).tolist()
        [1, 9]
        """
        grid = self._box_grid
        if grid is not None:
            box = basic_box(selection, grid.array_shape)
            if box is not None:
                return self._read_box(box)
        sel = parse_basic_selection(selection, self.shape)
        return general.basic_result(self, selection, sel, general.read_selection(self, sel))

    def _read_box(self, box: Box) -> Any:
        """``self[box]`` for a step-1 box (``basic_box``): the short path of one chunk or
        one shard (or each of a few shards), else the many-boxes path."""
        if self._inner_box is None:
            done = boxes.read_chunk_box(self, box)
        else:
            done = shard_boxes.read_shard_box(self, box)
            if done is None:
                done = shard_boxes.read_box_by_shards(self, box)
        return done if done is not None else many.read_boxes(self, [box])[0]

    def get_many(self, selections: Iterable[Any]) -> list[Any]:
        """Read many basic selections at once, as ``[a[s] for s in selections]``.

        What tensorstore's concurrent reads give: every chunk (for a sharded array, every
        shard index and inner chunk) that any of the selections touches is read and decoded
        once, and the chunks are spread over the thread pool, however the selections
        overlap.  Selections are parsed (and bad ones refused) before anything is read.

        Parameters
        ----------
        selections
            An iterable of basic selections (as :meth:`get_basic_selection` takes).

        Returns
        -------
        list
            What ``a[s]`` returns, for each selection in order.

        Raises
        ------
        InvalidTypeError
            ``selections`` is not an iterable of selections (a string, say).
        IndexingError
            A selection is invalid (nothing is read then).
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> [r.tolist() for r in a.get_many([np.s_[0, 0:2], np.s_[3, ::2]])]
        [[0, 1], [12, 14]]
        """
        return many.get_many(self, selections)

    def read_async(self, selection: Any) -> Future[Any]:
        """Start reading ``a[selection]`` and return at once: a future of its result.

        For many independent reads at once, as tensorstore's ``read().result()``: the
        array's submitted reads queue, and zarr3c's pool of submitted reads takes all those
        waiting as one :meth:`get_many` batch, so reads issued together read each chunk they
        share once, and the batch's chunks are read and decoded in parallel (on native
        threads, without the GIL, where the chain is native).  A read issued alone starts at
        once, as a batch of one.  Where the selections are known together, :meth:`get_many`
        itself is cheaper still.

        Parameters
        ----------
        selection
            Any selection ``a[...]`` takes.

        Returns
        -------
        concurrent.futures.Future
            Its ``result()`` is what ``a[selection]`` returns.

        Raises
        ------
        None
            What ``a[selection]`` would raise is raised by the future's ``result()``.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> futures = [a.read_async(np.s_[i, 1:3]) for i in range(4)]
        >>> [f.result().tolist() for f in futures]
        [[1, 2], [5, 6], [9, 10], [13, 14]]
        """
        return self._read_queue.submit(selection)

    def get_orthogonal_selection(self, selection: Any) -> np.ndarray:
        """Read an orthogonal selection: per axis an int, a slice, an integer array or a
        boolean array, selecting the outer product of the per-axis selections.

        Parameters
        ----------
        selection
            One entry per axis (missing trailing axes whole).

        Returns
        -------
        numpy.ndarray
            The values, one axis per non-integer entry, in the array's :attr:`order`.

        Raises
        ------
        IndexingError
            An invalid selection (:class:`~zarr3c.errors.BoundsCheckError`: an index out
            of bounds).
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.get_orthogonal_selection(([3, 0], slice(1, 3))).tolist()
        [[13, 14], [1, 2]]
        """
        sel = parse_orthogonal_selection(selection, self.shape)
        return self._in_order(general.read_selection(self, sel).reshape(sel.out_shape))

    def get_coordinate_selection(self, selection: Any) -> np.ndarray:
        """Read points: integer arrays per axis broadcast together (or a boolean mask of the
        array's shape), the point ``i`` at ``(selection[0][i], selection[1][i], ...)``.

        Parameters
        ----------
        selection
            One integer array per axis (broadcast together), or a boolean mask.

        Returns
        -------
        numpy.ndarray
            The points' values, of the broadcast shape of the index arrays.

        Raises
        ------
        IndexingError
            An invalid selection (:class:`~zarr3c.errors.BoundsCheckError`: a coordinate
            out of bounds).
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.get_coordinate_selection(([0, 3, 3], [1, 0, 3])).tolist()
        [1, 12, 15]
        """
        return points.read_coordinates(self, parse_coordinate_selection(selection, self.shape))

    def get_mask_selection(self, mask: Any) -> np.ndarray:
        """Read the elements where a boolean mask of the array's shape is true.

        Parameters
        ----------
        mask
            A boolean array of the array's shape.

        Returns
        -------
        numpy.ndarray
            The selected values, 1-d, in C order of their positions.

        Raises
        ------
        IndexingError
            ``mask`` is not a boolean array of the array's shape.
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.get_mask_selection(np.eye(4, dtype=bool)).tolist()
        [0, 5, 10, 15]
        """
        return self.get_coordinate_selection(parse_mask(mask, self.shape))

    def get_block_selection(self, selection: Any) -> np.ndarray:
        """Read whole chunks by chunk index (negative indices and step-1 slices allowed).

        Parameters
        ----------
        selection
            Per axis a chunk index or a step-1 slice of chunk indices.

        Returns
        -------
        numpy.ndarray
            The chunks' elements, as a slice of numpy's (always an array, a 0-d array's one
            block too).

        Raises
        ------
        IndexingError
            An invalid selection, or a chunk index out of bounds.
        ChunkDecodeError
            A stored chunk that does not decode, naming its key.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = np.arange(16).reshape(4, 4)
        >>> a.get_block_selection((0, -1)).tolist()
        [[2, 3], [6, 7]]
        """
        return self.get_basic_selection(
            parse_block_selection(selection, self._dims, self.shape) or ...)

    # -- writes ----------------------------------------------------------------------------------

    def __setitem__(self, selection: Any, value: Any) -> None:
        """Write ``value`` (broadcast as numpy does) into a selection, as numpy assignment.

        Parameters
        ----------
        selection
            The key, as numpy takes it (see :meth:`__getitem__`).
        value
            A scalar or an array broadcastable to the selection's shape.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            An invalid key.
        ShapeMismatchError
            ``value`` does not broadcast to the selection's shape.
        ValueConversionError
            ``value`` does not convert to the array's dtype (300 into int8, say).

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[1:3, 1:3] = 5
        >>> a[1].tolist()
        [0, 5, 5, 0]
        """
        selection = read_indexers(selection)
        kind = selection_kind(selection, self.ndim)
        if kind == "coordinate":
            self.set_coordinate_selection(numpy_coordinates(selection, self.shape), value)
        elif kind == "numpy":
            as_axis = bool_scalar_as_new_axis(selection)
            if as_axis is not None:
                self.set_basic_selection(as_axis, value)
            elif self.ndim == 0:
                self._check_writable()
                element = self.get_basic_selection(...)
                _numpy_key_of_0d(element, selection, write.as_dtype(self, value))
                if _numpy_key_of_0d(element, selection).size:
                    self.set_basic_selection(..., element)
            else:
                self.set_coordinate_selection(
                    numpy_advanced_coordinates(selection, self.shape), value)
        elif kind == "orthogonal":
            layout = NumpyLayout.of(selection, self.ndim)
            if layout is None:
                self.set_orthogonal_selection(selection, value)
                return
            self._check_writable()
            sel = parse_orthogonal_selection(layout.key, self.shape)
            arr = write.as_dtype(self, value)
            write.write_selection(
                self, sel, arr if arr.ndim == 0 else layout.from_numpy(arr, sel.out_shape))
        else:
            self.set_basic_selection(selection, value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` (broadcast as numpy does) into a basic selection.

        Parameters
        ----------
        selection
            Ints, slices with any step, ``...`` and ``None``.
        value
            A scalar or an array broadcastable to the selection's shape.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            An invalid selection.
        ShapeMismatchError
            ``value`` does not broadcast to the selection's shape (a sequence into one
            element, too, as numpy refuses).
        ValueConversionError
            ``value`` does not convert to the array's dtype.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a.set_basic_selection((slice(None), 0), [1, 2, 3, 4])
        >>> a[:, 0].tolist()
        [1, 2, 3, 4]
        """
        self._check_writable()
        sel = parse_basic_selection(selection, self.shape)
        if (sel.out_shape == () and not general.has_ellipsis(selection)
                and np.ndim(value) > 0 and not objects.takes_element_values(self)):
            # One element (numpy's scalar case, unlike a[...] of a 0-d array): numpy refuses
            # any sequence, even one of a single element.
            raise ShapeMismatchError(
                f"cannot write a value of shape {np.shape(value)} into the single element "
                f"selected by {selection!r}"
            )
        write.write_selection(self, sel, value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` into an orthogonal selection (see
        :meth:`get_orthogonal_selection`).

        Parameters
        ----------
        selection
            Per axis an int, a slice, an integer array or a boolean array.
        value
            A scalar or an array broadcastable to the selection's shape.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            An invalid selection.
        ShapeMismatchError
            ``value`` does not broadcast to the selection's shape.
        ValueConversionError
            ``value`` does not convert to the array's dtype.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a.set_orthogonal_selection(([0, 3], [0, 3]), 9)
        >>> a[3].tolist()
        [9, 0, 0, 9]
        """
        self._check_writable()
        write.write_selection(self, parse_orthogonal_selection(selection, self.shape), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` into whole chunks selected by chunk index (see
        :meth:`get_block_selection`).

        Parameters
        ----------
        selection
            Per axis a chunk index or a step-1 slice of chunk indices.
        value
            A scalar or an array broadcastable to the chunks' region.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            An invalid selection, or a chunk index out of bounds.
        ShapeMismatchError
            ``value`` does not broadcast to the region's shape.
        ValueConversionError
            ``value`` does not convert to the array's dtype.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a.set_block_selection((1, 1), 3)
        >>> a[2].tolist()
        [0, 0, 3, 3]
        """
        self.set_basic_selection(parse_block_selection(selection, self._dims, self.shape), value)

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """Write ``value`` where a boolean mask of the array's shape is true.

        Parameters
        ----------
        mask
            A boolean array of the array's shape.
        value
            A scalar, or one value per selected element (C order of their positions).

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            ``mask`` is not a boolean array of the array's shape.
        ShapeMismatchError
            ``value`` does not broadcast to the selected elements.
        ValueConversionError
            ``value`` does not convert to the array's dtype.

        Examples
        --------
        >>> import numpy as np, zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(3, 3), dtype="int32", chunks=(2, 2))
        >>> a.set_mask_selection(np.eye(3, dtype=bool), 1)
        >>> a[...].tolist()
        [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        """
        self._check_writable()
        self.set_coordinate_selection(parse_mask(mask, self.shape), value)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """Write points; with duplicate coordinates the last value wins, as in numpy.

        Parameters
        ----------
        selection
            One integer array per axis (broadcast together), or a boolean mask.
        value
            A scalar or an array broadcastable to the index arrays' shape.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        IndexingError
            An invalid selection (a coordinate out of bounds, say).
        ShapeMismatchError
            ``value`` does not broadcast to the points.
        ValueConversionError
            ``value`` does not convert to the array's dtype.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a.set_coordinate_selection(([0, 1, 0], [2, 3, 2]), [7, 8, 9])
        >>> a[0, 2].item(), a[1, 3].item()
        (9, 8)
        """
        self._check_writable()
        write.write_points(self, parse_coordinate_selection(selection, self.shape), value)

    # -- shape -----------------------------------------------------------------------------------

    def resize(self, *shape: Any) -> None:
        """Change the shape.

        Chunks wholly outside the new shape are erased; where the array shrinks inside a
        chunk, that chunk's outside part is reset to the fill value, so growing the array
        again shows the fill value, not stale data.  The chunk shape stays.

        Parameters
        ----------
        *shape
            The new shape, as a tuple or as separate ints, one per dimension.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        MetadataError
            The shape is not a sequence of non-negative ints.
        ShapeMismatchError
            The new shape has another number of dimensions.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
        >>> a[...] = 1
        >>> a.resize(3, 5)
        >>> a.shape, a[2].tolist()
        ((3, 5), [1, 1, 1, 1, 0])
        """
        from zarr3c.array.create import normalize_shape

        self._check_writable()
        write.resize(self, normalize_shape(shape[0] if len(shape) == 1 else shape))

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array along ``axis`` and write ``data`` there.

        Parameters
        ----------
        data
            An array of the array's shape on every axis but ``axis``.
        axis
            The axis to grow (negative counts from the end).

        Returns
        -------
        tuple of int
            The new shape.

        Raises
        ------
        ReadOnlyError
            The array was opened read-only.
        ShapeMismatchError
            ``data`` has another number of dimensions, or another length on an axis other
            than ``axis``.
        IndexingError
            ``axis`` is out of bounds.

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(2, 2), dtype="int32", chunks=(2, 2))
        >>> a.append([[5, 6]])
        (3, 2)
        >>> a[2].tolist()
        [5, 6]
        """
        self._check_writable()
        return write.append(self, data, axis)


def _numpy_key_of_0d(element: np.ndarray, selection: Any, value: np.ndarray | None = None
                     ) -> np.ndarray:
    """numpy's ``element[selection]`` of a 0-d array's one element (a copy of it), or, given
    ``value``, ``element[selection] = value``; numpy's refusals as zarr3c errors."""
    try:
        if value is None:
            return np.array(element[selection])
        element[selection] = value
        return element
    except IndexError as exc:
        raise IndexingError(f"invalid selection {selection!r}: {exc}") from None
    except (ValueError, TypeError) as exc:  # (numpy's TypeError: a value of too many axes)
        raise ShapeMismatchError(f"cannot assign to selection {selection!r}: {exc}") from None
