"""The user-facing ``Array``: numpy-style reads and writes over chunks in a store.

Reads of step-1 boxes on a regular grid of unsharded chunks take a short path (the box parsed
in one kernel call, split over chunks with plain arithmetic); other reads project the
selection onto the chunk grid (grid kernel).  Either way each touched chunk is fetched and
decoded once, in a worker thread, and the selected elements are copied straight into the
output with one ``copy_strided`` call per chunk; missing chunks are filled with the fill
value in place.  Writes do the reverse under a per-chunk lock: a chunk the selection covers
entirely is encoded straight from the value's strided bytes (through a per-worker scratch
buffer; a shard inner chunk by inner chunk into one shard buffer), any other is read,
modified and written back.  Chunks that end up equal to the fill value are erased instead of
written (unless ``write_empty_chunks``)."""

from __future__ import annotations

import itertools
import math
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from zarr3c._buffers import empty_aligned, empty_array, populate_beside, thread_scratch
from zarr3c._kernels.copy import (
    copy_elements,
    copy_outer,
    copy_pieces,
    copy_strided,
    fill_pieces,
    fill_strided,
    is_uniform,
)
from zarr3c._kernels.grid import (
    basic_box,
    box_chunk_pieces,
    count_box_pieces,
    plan_box_in_cell,
    plan_box_pieces,
)
from zarr3c._points import (
    read_raw_chunk_points,
    read_raw_chunks_points,
    read_shard_outer,
    read_shard_points,
)
from zarr3c.codecs import sharding_indexed
from zarr3c.codecs.pipeline import (
    CodecPipeline,
    as_codec_list,
    codec_chain,
    normalize_codec_like,
)
from zarr3c.codecs.sharding_indexed import (
    MISSING,
    GetRanges,
    PartArena,
    ShardingCodec,
    StoreRanges,
    batch_decoder,
    pack_runs,
    partial_read_codec,
    sharding_codec_dict,
)
from zarr3c.concurrency import chunk_lock, map_parts, map_unordered
from zarr3c.errors import (
    ArrayNotFoundError,
    ChunkDecodeError,
    ContainsGroupError,
    IndexingError,
    InvalidArgumentError,
    InvalidTypeError,
    MetadataError,
    ReadOnlyError,
    ShapeMismatchError,
    UnsupportedFeatureError,
    ValueConversionError,
)
from zarr3c.hierarchy import prepare_node
from zarr3c.indexing import (
    ChunkTask,
    NumpyLayout,
    OrthogonalSelection,
    PointTask,
    bool_scalar_as_new_axis,
    broadcast_value,
    c_strides,
    group_points,
    int64_array,
    numpy_advanced_coordinates,
    numpy_coordinates,
    parse_basic_selection,
    parse_block_selection,
    parse_coordinate_selection,
    parse_mask,
    parse_orthogonal_selection,
    plan_chunks,
    plan_points,
    selection_kind,
)
from zarr3c.metadata import ArrayMetadata
from zarr3c.metadata.data_types import DataType, data_type_from_numpy
from zarr3c.metadata.formats import HierarchyFormat, V3Format, detect_format
from zarr3c.node import Node
from zarr3c.stores import Store
from zarr3c.stores.base import resolve_byte_range

__all__ = ["Array", "create_array", "open_array_at"]


#: Most bytes of ranges of raw-element chunks one batched store request asks for.
_RAW_BATCH_BYTES = 16 << 20


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


class Array(Node):
    """A Zarr v3 array in a store.  Create with :func:`zarr3c.create_array`, open with
    :func:`zarr3c.open_array`."""

    kind = "array"

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadata,
        *,
        read_only: bool = False,
        write_empty_chunks: bool = False,
        order: str = "C",
        fmt: HierarchyFormat | None = None,
    ):
        if order not in ("C", "F"):
            raise InvalidArgumentError(f"order must be 'C' or 'F', got {order!r}")
        super().__init__(store, path, metadata, read_only=read_only, fmt=fmt)
        key = self._format.metadata_key(path, "array")
        self._write_empty_chunks = bool(write_empty_chunks)
        self._order = order
        self._pipeline = CodecPipeline.from_codecs(
            metadata.codecs,
            dtype=metadata.dtype,
            fill_value=metadata.fill_value_array,
            source=key,
        )
        # Set when chunks are shards whose inner chunks can be read by byte range.
        self._sharding = partial_read_codec(self._pipeline)
        self._set_metadata(metadata)
        for chunk_shape in metadata.chunk_grid.distinct_chunk_shapes(metadata.shape):
            self._pipeline.validate(chunk_shape, source=key)

    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        self._metadata = metadata
        self._dims = metadata.chunk_grid.dimensions(metadata.shape)
        self._itemsize = metadata.dtype.itemsize
        self._fill_bytes = np.frombuffer(metadata.fill_value, dtype=np.uint8)
        self._prefix = self._format.chunk_prefix(self._path)
        self._encode_key = metadata.chunk_key_encoding.encode_chunk_key
        # The short path for step-1 boxes on a regular grid: (shape, chunk shape), and what
        # its reads need of the grid's chunks (and for shards, of their inner chunks),
        # computed once.
        regular = getattr(metadata.chunk_grid, "chunk_shape", None)
        self._box_grid: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self._inner_box: _InnerBox | None = None
        if regular is not None:
            self._box_grid = (tuple(metadata.shape), tuple(regular))
            grid = [-(-n // c) for n, c in zip(metadata.shape, regular, strict=True)]
            chunk_strides = c_strides(regular, self._itemsize)
            self._box_chunk = _ChunkBox(self._itemsize * math.prod(regular),
                                        int64_array(chunk_strides), int64_array(regular),
                                        int64_array(c_strides(grid, 1)))
            if self._sharding is not None:
                inner = tuple(self._sharding.chunk_shape)
                cps = tuple(c // k for c, k in zip(regular, inner, strict=True))
                strides = c_strides(inner, self._itemsize)
                self._inner_box = _InnerBox(
                    inner, int64_array(inner), strides, int64_array(strides), cps,
                    c_strides(cps, 1), self._itemsize * math.prod(inner),
                    self._sharding.stores_raw_inner_chunks(), int64_array(regular),
                    np.zeros(_SHARD_BOX_MAX_INNER, dtype=np.int64),
                    np.full(_SHARD_BOX_MAX_INNER, -1, dtype=np.int64),
                    _stored_max(self._itemsize * math.prod(inner)),
                    self._sharding.plain_index(regular))

    # -- properties ------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    @property
    def dtype(self) -> np.dtype:
        return self._metadata.dtype

    @property
    def data_type(self) -> DataType:
        return self._metadata.data_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self._itemsize

    @property
    def chunks(self) -> tuple[int, ...] | tuple[tuple[int, ...], ...]:
        """The chunk shape of a regular grid.  For a rectilinear grid, per dimension the edge
        lengths of the chunks clipped to the array: the form dask uses (the full edges,
        overflowing ones included, are on ``metadata.chunk_grid``).  For a sharded array, the
        inner chunk shape, as in zarr-python (the shards are :attr:`shards`)."""
        serializer = self._pipeline.array_bytes
        if isinstance(serializer, ShardingCodec):
            return tuple(serializer.chunk_shape)
        return self._metadata.chunk_grid.array_chunks(self.shape)  # type: ignore[no-any-return]

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array (its grid's chunks; dask-style edge lengths for
        a rectilinear grid of shards), else None."""
        if not isinstance(self._pipeline.array_bytes, ShardingCodec):
            return None
        return self._metadata.chunk_grid.array_chunks(self.shape)  # type: ignore[no-any-return]

    @property
    def fill_value(self) -> Any:
        return self._metadata.fill_value_array[()]

    @property
    def order(self) -> str:
        return self._order

    @property
    def write_empty_chunks(self) -> bool:
        return self._write_empty_chunks


    @property
    def codecs(self) -> tuple[Any, ...]:
        return self._pipeline.codecs

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Shape of the chunk grid."""
        return tuple(d.nchunks for d in self._dims)

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        return sum(1 for _ in self._stored_chunks())

    def __len__(self) -> int:
        if not self.shape:
            raise InvalidTypeError("len() of unsized object (a 0-d array)")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<zarr3c.Array {self.name!r} shape={self.shape} dtype={self.dtype}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            open_array_at,
            (self._store, self._path, self._read_only, self._write_empty_chunks, self._order),
        )

    # -- chunks ----------------------------------------------------------------------------------

    def chunk_key(self, coords: Sequence[int]) -> str:
        """Store key of the chunk at grid coordinates ``coords``."""
        return self._prefix + self._encode_key(tuple(coords))

    def _stored_chunks(self) -> Iterator[tuple[str, tuple[int, ...]]]:
        """Keys and coordinates of the chunks stored for this array, inside its grid."""
        decode = self._metadata.chunk_key_encoding.decode_chunk_key
        grid_shape = self.cdata_shape
        prefix = self._prefix
        keys = self._store.list_prefix(prefix) if prefix else self._store.list()
        for key in keys:
            rel = key[len(prefix):]
            if rel == "zarr.json":
                continue
            coords = decode(rel, ndim=len(grid_shape))
            if coords is None or len(coords) != len(grid_shape):
                continue
            if all(0 <= c < n for c, n in zip(coords, grid_shape, strict=True)):
                yield key, coords

    def _chunk_origin(self, coords: Sequence[int]) -> tuple[int, ...]:
        return tuple(d.chunk_offset(c) for d, c in zip(self._dims, coords, strict=True))

    def _chunk_shape_at(self, coords: Sequence[int]) -> tuple[int, ...]:
        """The full shape of the chunk at ``coords`` (edge chunks too are full-size)."""
        return tuple(d.chunk_length(c) for d, c in zip(self._dims, coords, strict=True))

    def _decode_chunk(self, raw: Any, key: str, chunk_shape: tuple[int, ...]) -> np.ndarray:
        return self._pipeline.decode(raw, chunk_shape, key=key)

    def _new_chunk(self, chunk_shape: tuple[int, ...], *, filled: bool) -> np.ndarray:
        chunk = np.empty(chunk_shape, dtype=self.dtype)
        if filled and chunk.size:
            buf = chunk.reshape(-1).view(np.uint8)
            fill_strided(buf, 0, int64_array([self._itemsize]), int64_array([chunk.size]),
                         self._fill_bytes)
        return chunk

    # -- reads -----------------------------------------------------------------------------------

    def __getitem__(self, selection: Any) -> Any:
        if self._box_grid is not None:
            # A step-1 box of ints and slices (most small reads): straight to the short path.
            box = basic_box(selection, self._box_grid[0])
            if box is not None:
                return self._read_box(box)
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
        """Orthogonal indexing: ``a.oindex[[1, 5], :]`` selects rows 1 and 5, all columns."""
        return _Indexer(self.get_orthogonal_selection, self.set_orthogonal_selection)

    @property
    def vindex(self) -> _Indexer:
        """Coordinate (vectorised) indexing: ``a.vindex[rows, cols]`` picks points; a boolean
        mask of the array's shape picks the points where it is true."""
        return _Indexer(self.get_coordinate_selection, self.set_coordinate_selection)

    @property
    def blocks(self) -> _Indexer:
        """Chunk-aligned blocks by chunk index: ``a.blocks[1, -1]``, ``a.blocks[0:2]``."""
        return _Indexer(self.get_block_selection, self.set_block_selection)

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        """Read a basic selection (ints, slices with any step, ``...``, ``None``)."""
        if self._box_grid is not None:
            box = basic_box(selection, self._box_grid[0])
            if box is not None:
                return self._read_box(box)
        sel = parse_basic_selection(selection, self.shape)
        return self._basic_result(selection, sel, self._read(sel))

    def _read_box(self, box: tuple[Any, ...]) -> Any:
        """``a[box]`` for a step-1 box (``basic_box``): the short path for one chunk or one
        shard (or each of a few shards), else the many-boxes path."""
        if self._inner_box is None:
            done = self._read_chunk_box(box)
        else:
            done = self._read_shard_box(box)
            if done is None:
                done = self._read_box_by_shards(box)
        return done if done is not None else self._read_boxes([box])[0]

    def _read_box_by_shards(self, box: tuple[Any, ...]) -> Any:
        """A step-1 box across two to :data:`_BOX_SHARDS_MAX` shards: the part in each
        shard read by :meth:`_read_shard_box`, placed in one output.  None when the box
        lies in one shard or in more than that many, or a part is not for the short path
        (the many-boxes path reads it then, which took 420 us for a 4^3 box across two
        uncompressed shards, against 135 us this way; /tmp/s16/straddle.py)."""
        start, stop, shape, _ = box
        pieces = box_chunk_pieces(start, stop, self._box_chunk.shape, self._box_chunk.strides,
                                  self._itemsize, _BOX_SHARDS_MAX)
        if pieces is None or len(pieces) < 2:
            return None
        # Every part must be one the short path takes, known before any is read (else the
        # many-boxes path would read the first parts again).
        inner = self._inner_box.shape  # type: ignore[union-attr]
        if any(math.prod((f + c - 1) // i - f // i + 1
                         for f, c, i in zip(first, counts, inner, strict=True))
               > _SHARD_BOX_MAX_INNER for _, first, counts, _, _, _ in pieces):
            return None
        shard_shape = self._box_grid[1]  # type: ignore[index]
        out = empty_array([e - b for b, e in zip(start, stop, strict=True)], self.dtype)
        for shard, first, counts, _, _, _ in pieces:
            lo = tuple(k * n + f for k, n, f in zip(shard, shard_shape, first, strict=True))
            hi = tuple(b + c for b, c in zip(lo, counts, strict=True))
            part = self._read_shard_box((lo, hi, tuple(counts), False))
            if part is None:
                return None
            out[tuple(slice(b - s, e - s) for b, e, s in zip(lo, hi, start, strict=True))] = part
        return self._in_order(out.reshape(shape))

    def get_many(self, selections: Iterable[Any]) -> list[Any]:
        """Read many basic selections at once, as ``[a[s] for s in selections]``.

        What tensorstore's concurrent reads give: every chunk (for a sharded array, every
        shard index and inner chunk) that any of the selections touches is read and decoded
        once, and the chunks are spread over the thread pool, however the selections
        overlap.  Selections are parsed (and bad ones refused) before anything is read.
        """
        if isinstance(selections, str | bytes) or not isinstance(selections, Iterable):
            raise InvalidTypeError(
                f"get_many() takes an iterable of selections, not {type(selections).__name__}"
            )
        selections = list(selections)
        results: list[Any] = [None] * len(selections)
        boxes: list[tuple[Any, ...]] = []
        at: list[int] = []
        rest: list[int] = []
        for i, s in enumerate(selections):
            box = None if self._box_grid is None else basic_box(s, self._box_grid[0])
            if box is None:
                rest.append(i)
            else:
                boxes.append(box)
                at.append(i)
        parsed = [parse_basic_selection(selections[i], self.shape) for i in rest]
        if boxes and parsed:
            # A chunk is read once: boxes in chunks the general selections read go with them
            # (repeated, since a moved box may share a chunk with a box not yet moved).
            chunk_box = self._box_chunk
            box_chunks = [{piece[0] for piece in box_chunk_pieces(
                start, stop, chunk_box.shape, chunk_box.strides, self._itemsize, sys.maxsize)
                or ()} for start, stop, _, _ in boxes]
            general = {task.coords for sel in parsed if sel.size
                       for task in plan_chunks(sel, self._dims)}
            moved: set[int] = set()
            while True:
                more = [n for n, chunks in enumerate(box_chunks)
                        if n not in moved and not general.isdisjoint(chunks)]
                if not more:
                    break
                for n in more:
                    moved.add(n)
                    general |= box_chunks[n]
                    rest.append(at[n])
                    parsed.append(parse_basic_selection(selections[at[n]], self.shape))
            boxes = [b for n, b in enumerate(boxes) if n not in moved]
            at = [i for n, i in enumerate(at) if n not in moved]
        if boxes:
            for i, r in zip(at, self._read_boxes(boxes), strict=True):
                results[i] = r
        for i, sel, r in zip(rest, parsed, self._read_many(parsed), strict=True):
            results[i] = self._basic_result(selections[i], sel, r)
        return results

    def _basic_result(self, selection: Any, sel: OrthogonalSelection, raw: np.ndarray) -> Any:
        """What ``a[selection]`` returns for the values read: numpy's shape, a scalar for
        all-integer keys, the array's memory order."""
        result = raw.reshape(sel.out_shape)
        if result.shape == () and not _has_ellipsis(selection):
            return result[()]
        return self._in_order(result)

    def get_orthogonal_selection(self, selection: Any) -> np.ndarray:
        """Read an orthogonal selection: per axis an int, a slice, an integer array or a
        boolean array (the outer product of the per-axis selections)."""
        sel = parse_orthogonal_selection(selection, self.shape)
        return self._in_order(self._read(sel).reshape(sel.out_shape))

    def get_coordinate_selection(self, selection: Any) -> np.ndarray:
        """Read points: integer arrays per axis broadcast together, or a boolean mask."""
        sel = parse_coordinate_selection(selection, self.shape)
        out = np.empty(sel.size, dtype=self.dtype)

        itemsize = self._itemsize
        dst = out.view(np.uint8)
        sharding = self._sharding
        raw_inner = sharding is not None and sharding.stores_raw_inner_chunks()
        fill = self._fill_bytes
        raw_chunks = sharding is None and self._pipeline.stores_raw_elements
        partial = self._pipeline.can_decode_prefix

        def read_points(task: PointTask) -> None:
            if sharding is not None:
                # Only the shard index and the inner chunks holding points are read.
                key = self.chunk_key(task.coords)
                read_shard_points(
                    sharding, self._ranges_of(key),
                    self._chunk_shape_at(task.coords), task.local, dst, task.out * itemsize,
                    itemsize=itemsize, fill_bytes=fill, key=key, raw=raw_inner)
                return
            if raw_chunks:
                # Raw elements: copied from the stored bytes, no decode; sparse chunks are
                # read by byte range.
                key = self.chunk_key(task.coords)
                nbytes = math.prod(self._chunk_shape_at(task.coords)) * itemsize
                read_raw_chunk_points(
                    lambda: self._get_transient(key, nbytes), nbytes, task.offsets, dst,
                    task.out * itemsize,
                    itemsize=itemsize, fill_bytes=fill,
                    fetch=lambda ranges, buf: self._fetch_raw(
                        [(task.coords, ranges, buf.nbytes - 2, nbytes)], buf)[0],
                    wrong_size=lambda: self._raw_size_error(key, task.coords, nbytes))
                return
            # (only the chunk's bytes up to its furthest point are needed)
            need = int(task.offsets.max()) + itemsize if partial and task.offsets.size else None
            chunk = self._read_chunk(task.coords, need=need)
            if chunk is None:
                out[task.out] = self._metadata.fill_value_array
                return
            copy_elements(chunk.reshape(-1).view(np.uint8), task.offsets,
                          dst, task.out * itemsize, itemsize)

        groups = (group_points(sel, self._dims, itemsize, scratch=True)
                  if raw_chunks and self._store._reads_elements else None)
        if groups is None:
            map_unordered(read_points, plan_points(sel, self._dims, itemsize))
            return out.reshape(sel.out_shape)
        dst_offsets = groups.order * itemsize
        nbytes = math.prod(groups.sizes) * itemsize  # (every chunk's: edge chunks are full)

        def read_part(ts: list[int]) -> None:
            # Chunks with many points in one store call, without the GIL between them; the
            # grouped points go as they are (no task per chunk).
            keys = [self.chunk_key(groups.coords[t]) for t in ts]
            for k in read_raw_chunks_points(self._store, groups, ts, keys, nbytes, dst,
                                            dst_offsets, itemsize):
                read_points(groups.task(ts[k]))

        map_parts(read_part, range(len(groups)))
        return out.reshape(sel.out_shape)

    def get_mask_selection(self, mask: Any) -> np.ndarray:
        """Read the elements where a boolean mask of the array's shape is true."""
        return self.get_coordinate_selection(parse_mask(mask, self.shape))

    def get_block_selection(self, selection: Any) -> np.ndarray:
        """Read whole chunks by chunk index (negative indices and step-1 slices allowed): always
        an array, as a slice of numpy's (a 0-d array's one block too)."""
        return self.get_basic_selection(
            parse_block_selection(selection, self._dims, self.shape) or ...)

    def _in_order(self, result: np.ndarray) -> np.ndarray:
        if self._order == "F" and result.ndim > 1:
            return np.asfortranarray(result)
        return result

    def _read_boxes(self, boxes: Sequence[tuple[Any, ...]]) -> list[Any]:
        """The short path of basic reads of step-1 boxes (``basic_box``'s plans) on a regular
        grid: every box cut into its pieces per chunk by one kernel call, the boxes' elements
        in one output buffer, and each chunk read once however many boxes it feeds.
        Raw-element chunks are read by byte ranges (each piece's, or the span of them all)
        straight into one buffer per batch and copied out with one kernel call; the others
        are read and decoded whole on the thread pool, one copy call per chunk.  Same
        results as the general path (tested against it)."""
        if self._sharding is not None:
            return self._read_shard_boxes(boxes)
        box = self._box_chunk
        plan = _BoxPlan(boxes, box.shape, box.strides, self.dtype)
        pieces = plan.by_chunk(lambda coords: coords @ box.grid_steps)
        if self._pipeline.stores_raw_elements:
            self._read_raw_pieces(pieces, box.nbytes)
        else:
            self._read_whole_pieces(pieces)
        return plan.results(boxes, self._in_order)

    def _read_whole_pieces(self, pieces: _Pieces, chunks: Sequence[int] | None = None) -> None:
        """Decode each chunk of ``pieces`` (or those numbered ``chunks``) on the thread pool
        and copy its pieces out; a chunk wanted whole in one C-ordered piece of the output
        is decoded straight into it where the codecs can (``CodecPipeline.decode_into``)."""
        box = self._box_chunk
        itemsize = self._itemsize
        todo = range(pieces.nchunks) if chunks is None else chunks
        into: set[int] = set()
        if self._pipeline.can_decode_into:
            into = {n for n, d in zip(todo, self._one_c_piece(pieces, todo), strict=True) if d}
        partial = self._pipeline.can_decode_prefix

        def read_whole(n: int) -> None:
            lo, hi = pieces.bounds[n], pieces.bounds[n + 1]
            target = None
            if n in into:
                at = int(pieces.dst_offsets[lo])
                target = pieces.dst[at:at + box.nbytes]
            # (the pieces read nothing past their furthest end: only that much is decoded)
            need = (int(pieces.src_ends[lo:hi].max()) if partial and target is None
                    else None)
            chunk = self._read_chunk(pieces.chunks[n], into=target, need=need)
            if chunk is None:
                fill_pieces(pieces.dst, pieces.dst_offsets[lo:hi], pieces.dst_strides[lo:hi],
                            pieces.counts[lo:hi], self._fill_bytes)
                return
            if chunk is target:
                return
            copy_pieces(chunk.reshape(-1).view(np.uint8), pieces.src_offsets[lo:hi],
                        box.strides, pieces.dst, pieces.dst_offsets[lo:hi],
                        pieces.dst_strides[lo:hi], pieces.counts[lo:hi], itemsize)

        map_unordered(read_whole, todo)

    def _one_c_piece(self, pieces: _Pieces, chunks: Sequence[int]) -> list[bool]:
        """Per chunk numbered in ``chunks``: whether it is wanted whole, as one C-ordered
        piece of the output (its bytes in chunk order are a run of the output's)."""
        if not chunks:
            return []
        first = np.array([pieces.bounds[n] for n in chunks], dtype=np.int64)
        one = np.array([pieces.bounds[n + 1] for n in chunks], dtype=np.int64) - first == 1
        return (one & (pieces.counts[first] == self._box_chunk.shape).all(axis=1)
                & (pieces.dst_strides[first] == self._box_chunk.strides).all(axis=1)).tolist()

    def _read_raw_pieces(self, pieces: _Pieces, nbytes: int) -> None:
        """Chunks stored as raw elements (``nbytes`` each): per chunk either each piece's
        byte range or, when the pieces' ranges add up to more, the one range spanning them,
        read straight into a staging buffer (batches of about :data:`_RAW_BATCH_BYTES`), and
        the pieces copied out of it with one kernel call per batch.  Each chunk's request
        also reads its last byte and the one after, so a stored chunk of the wrong size is
        an error naming its key, as a decode is."""
        # Plain Python over lists: cheaper than numpy's per-call cost at these sizes.
        lo_list, hi_list = pieces.src_offsets.tolist(), pieces.src_ends.tolist()
        bounds = pieces.bounds
        requests: list[tuple[tuple[int, ...], list[tuple[int, int, int]], int, int]] = []
        src: list[int] = []
        first_chunk = 0
        at = 0
        req_chunks: list[int] = []
        whole: list[int] = []  # chunks read whole (their ranges would be most of them)
        skip: np.ndarray | None = None
        for n in range(pieces.nchunks):
            a, b = bounds[n], bounds[n + 1]
            los, his = lo_list[a:b], hi_list[a:b]
            if 2 * min(max(his) - min(los), sum(his) - sum(los)) > nbytes:
                whole.append(n)
                if skip is None:
                    skip = np.zeros(pieces.bounds[-1] - bounds[first_chunk], dtype=bool)
                skip[a - bounds[first_chunk]:b - bounds[first_chunk]] = True
                src += [0] * (b - a)
            else:
                ranges, at = _piece_ranges(lo_list[a:b], hi_list[a:b], 0, at, src)
                requests.append((pieces.chunks[n], ranges, at, nbytes))
                req_chunks.append(n)
                at += 2  # the size probe
            if at >= _RAW_BATCH_BYTES or n == pieces.nchunks - 1:
                buf = empty_aligned(at)
                missing = None
                for c, found in zip(req_chunks, self._fetch_raw(requests, buf), strict=True):
                    if found:
                        continue
                    if missing is None:
                        missing = np.zeros(b - bounds[first_chunk], dtype=bool)
                    missing[bounds[c] - bounds[first_chunk]:bounds[c + 1]
                            - bounds[first_chunk]] = True
                pieces.copy_from(buf, int64_array(src), self._box_chunk.strides,
                                 bounds[first_chunk], b,
                                 missing, self._fill_bytes, self._itemsize,
                                 None if skip is None else skip[:b - bounds[first_chunk]])
                requests, req_chunks, src, skip = [], [], [], None
                first_chunk, at = n + 1, 0
        if whole:
            # A chunk wanted whole in one C-ordered piece of the output is read straight into
            # it; the others are read whole and copied out.
            direct = self._one_c_piece(pieces, whole)
            into = [n for n, d in zip(whole, direct, strict=True) if d]
            if into:
                map_unordered(lambda n: self._read_raw_chunk_into(pieces, n, nbytes), into)
                whole = [n for n, d in zip(whole, direct, strict=True) if not d]
            if whole:
                self._read_whole_pieces(pieces, whole)

    def _read_raw_chunk_into(self, pieces: _Pieces, n: int, nbytes: int) -> None:
        """Read raw chunk ``n`` of ``pieces`` (``nbytes`` bytes, one piece: all of it, C
        ordered in the output) straight into the output."""
        coords, p = pieces.chunks[n], pieces.bounds[n]
        if not self._read_raw_whole(coords, pieces.dst, int(pieces.dst_offsets[p]), nbytes):
            fill_pieces(pieces.dst, pieces.dst_offsets[p:p + 1], pieces.dst_strides[p:p + 1],
                        pieces.counts[p:p + 1], self._fill_bytes)

    def _read_raw_whole(self, coords: tuple[int, ...], dst: np.ndarray, at: int, nbytes: int
                        ) -> bool:
        """Read the chunk at ``coords``, stored as raw elements (``nbytes`` bytes), straight
        into ``dst[at:at + nbytes]``; a stored chunk of another size is an error naming its
        key.  False if it is not stored."""
        key = self.chunk_key(coords)
        size = self._store.read_value_into(key, dst[at:at + nbytes])
        if size is None:
            return False
        if size != nbytes:
            raise self._raw_size_error(key, coords, nbytes)
        return True

    def _fetch_raw(self, requests: Sequence[tuple[tuple[int, ...], list[tuple[int, int, int]],
                                                  int, int]], buf: np.ndarray) -> list[bool]:
        """Byte ranges of chunks stored as raw elements, straight into ``buf``: per request
        ``(chunk coords, [(start, stop, at), ...], probe_at, chunk bytes)``, the ranges and,
        at ``buf[probe_at:probe_at + 2]``, the chunk's last byte and the one after.  That
        probe makes a stored chunk of the wrong size an error naming its key, as a decode
        is, even where the ranges lie within it.  Returns per request whether the chunk is
        stored."""
        keyed = [(self.chunk_key(coords), [*ranges, (n - 1, n + 1, at)])
                 for coords, ranges, at, n in requests]
        found: list[bool] = []
        got = self._store.read_ranges_into(keyed, buf) if keyed else []
        for (key, ranges), (coords, _, _, n), g in zip(keyed, requests, got, strict=True):
            if g is not None and g != sum(stop - start for start, stop, _ in ranges) - 1:
                raise self._raw_size_error(key, coords, n)
            found.append(g is not None)
        return found

    def _raw_size_error(self, key: str, coords: tuple[int, ...], nbytes: int
                        ) -> ChunkDecodeError:
        return ChunkDecodeError(
            f"bytes codec: the stored chunk is not the {nbytes} bytes of a chunk of shape "
            f"{list(self._chunk_shape_at(coords))} and data type {self.dtype}", key=key)

    def _read_raw_spans(self, spans: Sequence[tuple[tuple[int, ...], int, int, int]],
                        place: Callable[[int, np.ndarray | None], None]) -> None:
        """For chunks stored as raw elements, ``spans[n] = (coords, lo, hi, nbytes)``: fetch
        bytes ``[lo, hi)`` of the chunk (of ``nbytes`` bytes) and call ``place(n, bytes)``
        (None: the chunk is not stored), batches of about :data:`_RAW_BATCH_BYTES` at a time
        (see :meth:`_fetch_raw`).  The copies are small: inline."""
        for first, last in pack_runs([hi - lo + 2 for _, lo, hi, _ in spans], _RAW_BATCH_BYTES):
            requests = []
            at = 0
            for coords, lo, hi, nbytes in spans[first:last]:
                requests.append((coords, [(lo, hi, at)], at + hi - lo, nbytes))
                at += hi - lo + 2
            buf = empty_aligned(at)
            for n, (request, stored) in enumerate(
                    zip(requests, self._fetch_raw(requests, buf), strict=True), first):
                at = request[1][0][2]
                place(n, buf[at:request[2]] if stored else None)

    def _read_shard_boxes(self, boxes: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Step-1 boxes of a sharded array: cut into pieces per inner chunk by one kernel call,
        grouped by shard; per shard the index is read once, then raw inner chunks by byte
        ranges straight into a staging buffer (one store request, one copy call), other
        inner chunks read and decoded by the shard reader, each copied out once."""
        sharding, ib = self._sharding, self._inner_box
        assert sharding is not None and ib is not None
        shard_shape = self._box_grid[1]  # type: ignore[index]
        inner_strides, cps, steps = ib.strides_i64, ib.per_shard, ib.shard_steps
        plan = _BoxPlan(boxes, ib.shape_i64, inner_strides, self.dtype)
        cps_i64, per_shard = int64_array(cps), math.prod(cps)
        cps_steps = int64_array(steps)
        pieces = plan.by_chunk(lambda coords: (coords // cps_i64) @ self._box_chunk.grid_steps
                               * per_shard + (coords % cps_i64) @ cps_steps)
        # Runs of inner chunks in one shard: (shard coords, first group, end group).
        shards: list[tuple[tuple[int, ...], int, int]] = []
        for n, coords in enumerate(pieces.chunks):
            shard = tuple(c // k for c, k in zip(coords, cps, strict=True))
            if shards and shards[-1][0] == shard:
                shards[-1] = (shard, shards[-1][1], n + 1)
            else:
                shards.append((shard, n, n + 1))
        fill = self._fill_bytes
        itemsize = self._itemsize

        def local(coords: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(c % k for c, k in zip(coords, cps, strict=True))

        def copy_group(n: int, chunk: np.ndarray | None) -> None:
            lo, hi = pieces.bounds[n], pieces.bounds[n + 1]
            if chunk is None:
                fill_pieces(pieces.dst, pieces.dst_offsets[lo:hi], pieces.dst_strides[lo:hi],
                            pieces.counts[lo:hi], fill)
            else:
                copy_pieces(chunk.reshape(-1).view(np.uint8), pieces.src_offsets[lo:hi],
                            inner_strides, pieces.dst, pieces.dst_offsets[lo:hi],
                            pieces.dst_strides[lo:hi], pieces.counts[lo:hi], itemsize)

        kernels = sharding.inner_batch_kernels()
        bounds = int64_array(pieces.bounds)

        def decoded(key: str, g0: int, g1: int, index: Any) -> None:
            # The shard reader: fetches, decodes (and reports bad inner chunks); with batch
            # kernels, a batch of inner chunks is decoded and copied out in one call and
            # only what it leaves goes through copy_group.
            at = {local(pieces.chunks[n]): n for n in range(g0, g1)}
            sharding.read_inner_chunks_into(
                self._ranges_of(key), shard_shape, list(at),
                lambda c, chunk: copy_group(at[c], chunk),
                index=index, key=key,
                batch_sink=None if kernels is None else batch_decoder(
                    kernels.decompress_pieces, ib.nbytes, at, bounds, pieces.src_offsets,
                    inner_strides, pieces.dst, pieces.dst_offsets, pieces.dst_strides,
                    pieces.counts, itemsize))

        def read_shard(item: tuple[tuple[int, ...], int, int]) -> None:
            shard, g0, g1 = item
            key = self.chunk_key(shard)
            index = sharding.read_index(self._ranges_of(key), shard_shape, key=key)
            p0, p1 = pieces.bounds[g0], pieces.bounds[g1]
            if index is None:
                pieces.copy_from(pieces.dst, pieces.src_offsets[p0:p1], inner_strides, p0, p1,
                                 np.ones(p1 - p0, dtype=bool), fill, itemsize)
                return
            if not ib.raw:
                decoded(key, g0, g1, index)
                return
            entries = index.entries.reshape(-1, 2)
            flat = [sum(c * s for c, s in zip(local(pieces.chunks[n]), steps, strict=True))
                    for n in range(g0, g1)]
            where = entries[flat].tolist()
            if any(o != MISSING and n != ib.nbytes for o, n in where):
                decoded(key, g0, g1, index)  # not raw elements after all: the reader says so
                return
            lo_list = pieces.src_offsets[p0:p1].tolist()
            hi_list = pieces.src_ends[p0:p1].tolist()
            limit = sharding_indexed.MAX_REQUEST_BYTES  # staging held at once, per shard
            ranges: list[tuple[int, int, int]] = []
            src: list[int] = []
            missing: np.ndarray | None = None
            at = end = 0
            q0 = p0  # first piece of the batch
            for n, (offset, nbytes) in zip(range(g0, g1), where, strict=True):
                a, b = pieces.bounds[n], pieces.bounds[n + 1]
                if offset == MISSING:
                    if missing is None:
                        missing = np.zeros(p1 - q0, dtype=bool)
                    missing[a - q0:b - q0] = True
                    src += [0] * (b - a)
                else:
                    end = max(end, offset + nbytes)
                    more, at = _piece_ranges(lo_list[a - p0:b - p0], hi_list[a - p0:b - p0],
                                             offset, at, src)
                    ranges += more
                if at < limit and n < g1 - 1:
                    continue
                buf = empty_aligned(at + 1)
                if ranges:
                    # and the last byte of the furthest inner chunk: in the shard, or an error
                    ranges.append((end - 1, end, at))
                    if self._store.read_ranges_into([(key, ranges)], buf)[0] != at + 1:
                        decoded(key, g0, g1, index)  # a truncated shard: the reader says so
                        return
                pieces.copy_from(buf, int64_array(src), inner_strides, q0, b,
                                 None if missing is None else missing[:b - q0], fill, itemsize)
                ranges, src, missing, at, end, q0 = [], [], None, 0, 0, b

        map_unordered(read_shard, shards)
        return plan.results(boxes, self._in_order)

    def _read_chunk_box(self, box: tuple[Any, ...]) -> Any:
        """The shortest path, for an unsharded regular grid: one step-1 box inside one
        chunk (what most small reads and chunk-by-chunk reads are), or across a few raw
        chunks.  Planned in one kernel call (``box_chunk_pieces``).  A raw chunk is read
        straight into the output when the box is all of it, else by the box's byte span
        when that is at most half the chunk: where the store can, the read and the copy
        out are one call (``Store.read_box_into``: a LocalStore file), else the span (with
        the size probe) goes to a staging buffer; other chunks are read whole and decoded
        (straight into the output where they can) and copied out with one kernel call.
        None when the box spans more chunks than :data:`_BOX_CHUNKS_MAX`, or several that
        are not all read that way: :meth:`_read_boxes` reads it then (and is tested to
        agree)."""
        start, stop, shape, scalar = box
        chunk_box = self._box_chunk
        pieces = box_chunk_pieces(start, stop, chunk_box.shape, chunk_box.strides,
                                  self._itemsize, _BOX_CHUNKS_MAX)
        if pieces is None:
            return None
        raw = self._pipeline.stores_raw_elements
        if len(pieces) > 1:
            return self._read_raw_box_pieces(box, pieces) if raw else None
        ((coords, first, counts, lo, hi, _),) = pieces
        out = empty_array(counts, self.dtype)
        dst = out.reshape(-1).view(np.uint8)
        whole = dst.nbytes == chunk_box.nbytes
        # Another thread takes the fresh output's page faults meanwhile: all of them, or
        # those of the last 7/10 when the file is read straight into it (this thread faults
        # the rest in, then reads and copies all of it; measured, 512 reads of 512 KiB
        # outputs, /tmp/s16/rck.py: 124-127 ms from 3/10, 127-129 from 2/5, 141 from half,
        # 137-147 from 1/5 or 3/5, and 135-142 before this thread faulted its share in
        # with one madvise; asv KeptChunkReads tracks it).
        beside = populate_beside(dst, dst.nbytes * 3 // 10 if raw and whole else 0)
        try:
            self._fill_chunk_box(coords, first, counts, lo, hi, dst, whole, raw)
        finally:
            if beside is not None:
                beside.finish()
        return out.reshape(shape)[()] if scalar else self._in_order(out.reshape(shape))

    def _read_raw_box_pieces(self, box: tuple[Any, ...], pieces: list[Any]) -> Any:
        """``a[box]`` for a step-1 box across a few raw chunks (``box_chunk_pieces``' plan):
        each piece read and copied into the one output by ``Store.read_box_into``, a piece
        of a chunk not stored filled.  None if a piece is more than half its chunk or the
        store cannot read it so: the many-boxes path reads the box then (this output is
        dropped; it reported a box across two 64^3 chunks at 136 us)."""
        start, stop, shape, scalar = box
        if any(2 * (hi - lo) > self._box_chunk.nbytes for _, _, _, lo, hi, _ in pieces):
            return None
        counts = [e - b for b, e in zip(start, stop, strict=True)]
        out = empty_array(counts, self.dtype)
        dst = out.reshape(-1).view(np.uint8)
        out_strides = c_strides(counts, self._itemsize)
        for coords, first, part, lo, hi, at in pieces:
            if not self._read_box_piece(coords, first, part, hi - lo, dst, at, out_strides):
                return None
        return out.reshape(shape)[()] if scalar else self._in_order(out.reshape(shape))

    def _read_box_piece(self, coords: tuple[int, ...], first: list[int], counts: list[int],
                        span: int, dst: np.ndarray, at: int = 0,
                        out_strides: list[int] | None = None) -> bool:
        """``counts`` elements from ``first`` of the raw chunk at ``coords`` (``span`` bytes
        of it) into ``dst`` from byte ``at``, at ``out_strides`` (None: C order of
        ``counts``), by the store's one-call read (``Store.read_box_into``); the fill
        value where the chunk is not stored.  False when the store cannot read it so (the
        caller reads it the ordinary way, which reports what is wrong)."""
        chunk_box = self._box_chunk
        got = self._store.read_box_into(self.chunk_key(coords), chunk_box.nbytes,
                                         chunk_box.strides, first, counts, self._itemsize,
                                         span, dst, at, out_strides)
        if got == -1:
            strides = c_strides(counts, self._itemsize) if out_strides is None else out_strides
            fill_strided(dst, at, int64_array(strides), int64_array(counts), self._fill_bytes)
        return got == chunk_box.nbytes or got == -1

    def _fill_chunk_box(self, coords: tuple[int, ...], first: list[int], counts: list[int],
                        offset: int, end: int, dst: np.ndarray, whole: bool, raw: bool) -> None:
        """:meth:`_read_chunk_box`'s read of the box (``counts`` elements from ``first`` in
        the chunk at ``coords``, bytes ``[offset, end)`` of it raw) into its output's bytes
        ``dst``."""
        itemsize = self._itemsize
        chunk_box = self._box_chunk
        nbytes = chunk_box.nbytes
        src: np.ndarray | None
        if raw and whole:
            src = dst if self._read_raw_whole(coords, dst, 0, nbytes) else None
        elif raw and 2 * (end - offset) <= nbytes:  # (else the whole chunk, as _read_raw_pieces)
            # Where the store reads and copies the box in one call (a LocalStore file).
            if self._read_box_piece(coords, first, counts, end - offset, dst):
                return
            staging = empty_aligned(end - offset + 2)
            found = self._fetch_raw([(coords, [(offset, end, 0)], end - offset, nbytes)],
                                    staging)
            src, offset = (staging if found[0] else None), 0
        else:
            chunk = self._read_chunk(coords, into=dst if whole else None,
                                     need=None if whole else end)
            src = chunk if chunk is None or chunk is dst else chunk.reshape(-1).view(np.uint8)
        out_strides = int64_array(c_strides(counts, itemsize))
        if src is None:
            fill_strided(dst, 0, out_strides, int64_array(counts), self._fill_bytes)
        elif src is not dst:
            copy_strided(src, offset, chunk_box.strides, dst, 0, out_strides,
                         int64_array(counts), itemsize)

    def _read_shard_box(self, box: tuple[Any, ...]) -> Any:
        """The shortest path, for a sharded array: one step-1 box inside one shard (what
        most small reads are), touching at most :data:`_SHARD_BOX_MAX_INNER` inner chunks
        (a larger read goes to the general path, which bounds the bytes it holds at once).

        Planned in one kernel call (``plan_box_in_cell``); the shard's index and the bytes
        the box needs of each stored inner chunk (its span, raw; else all of it) are read
        in one call where the store can (``Store.read_shard_parts``: a LocalStore file
        opened once), else the index then the spans in one request; then one copy call,
        or each inner chunk decoded and its part copied.  A box that is one whole raw inner
        chunk is read straight into the output, a compressed one decoded straight into it.
        None when the shard or an inner chunk is not as expected: the general path
        (``_read_shard_boxes``) reads it then, and reports what is wrong."""
        ib = self._inner_box
        sharding = self._sharding
        assert ib is not None and sharding is not None
        start, stop, shape, scalar = box
        planned = plan_box_in_cell(start, stop, ib.shard_i64, ib.shape_i64, ib.strides_i64,
                                   self._itemsize, _SHARD_BOX_MAX_INNER)
        if planned is None:
            return None
        shard, plan = planned
        parts = _InnerParts(plan, len(start))
        key = self.chunk_key(shard)
        out = empty_array([e - b for b, e in zip(start, stop, strict=True)], self.dtype)
        dst = out.reshape(-1).view(np.uint8)
        # One whole inner chunk: raw, its bytes are the output's, read straight into it.
        whole = parts.n == 1 and dst.nbytes == ib.nbytes
        if ib.raw:
            los, his = parts.src_lo, parts.src_hi
            # (+1: the two-request read's probe of the furthest inner chunk's last byte)
            staging = dst if whole else thread_scratch(
                sum(his.tolist()) - sum(los.tolist()) + 1, "stored")
        else:
            los, his = ib.whole_los[:parts.n], ib.whole_his[:parts.n]
            staging = None
        fetched = self._fetch_shard_parts(key, parts.slots, los, his, staging)
        if fetched is None:
            return None
        if fetched is _MISSING_SHARD:
            parts.fill(dst, self._fill_bytes, slice(None))
        else:
            staging, ats, lens = fetched
            if not self._place_inner_parts(parts, staging, ats, lens, dst, whole):
                return None
        return out.reshape(shape)[()] if scalar else self._in_order(out.reshape(shape))

    def _fetch_shard_parts(self, key: str, slots: np.ndarray, los: np.ndarray,
                           his: np.ndarray, staging: np.ndarray | None) -> Any:
        """Read shard ``key``'s index and, through it, bytes ``[los[i], his[i])`` of inner
        chunk ``slots[i]`` (C order in the shard; ``his[i]`` -1: all of it) into
        ``staging`` (None: this thread's scratch), one part after another: ``(staging, ats,
        lens)``, where part ``i`` starts and its length, both -1 for an inner chunk not
        stored.  :data:`_MISSING_SHARD` for a shard not stored; None when anything is not
        as expected (the caller takes the general path, which reports it).  Raises what
        reading the index raises, naming ``key``."""
        ib = self._inner_box
        sharding = self._sharding
        assert ib is not None and sharding is not None
        shard_shape = self._box_grid[1]  # type: ignore[index]
        expect = ib.nbytes if ib.raw else -1
        plain = ib.plain
        # Compressed inner chunks: room for each at its largest (their sizes are in the
        # index), where that is not much memory.
        room_n = len(los) * ib.stored_max
        if plain is not None and (staging is not None or room_n <= _ONE_CALL_ROOM_MAX):
            # Where the store reads the index and the parts in one call.
            index_n, at_end = plain
            index_bytes = thread_scratch(index_n, "index")
            room = thread_scratch(room_n, "stored") if staging is None else staging
            ats = np.empty(2 * len(los), dtype=np.int64)
            size = self._store.read_shard_parts(key, index_bytes, at_end, slots, los, his,
                                                 expect, room, ats[:len(los)], ats[len(los):])
            if size is not None and size < 0:
                return _MISSING_SHARD
            if size is not None:
                try:  # (the checksum and entries, before any byte read through them is used)
                    sharding.check_index(index_bytes, shard_shape, size)
                    return room, ats[:len(los)], ats[len(los):]
                except ChunkDecodeError:
                    pass  # read again below: that reports it
        # Else the index, then the parts in one request (and the problems, named).
        index = sharding.read_index(self._ranges_of(key), shard_shape, key=key)
        if index is None:
            return _MISSING_SHARD
        entries = index.entries.reshape(-1, 2)
        ranges: list[tuple[int, int, int]] = []
        at_list: list[int] = []
        len_list: list[int] = []
        taken = end = 0
        partial = False
        for slot, lo, hi in zip(slots.tolist(), los.tolist(), his.tolist(), strict=True):
            offset, nbytes = entries[slot].tolist()
            if offset == MISSING:
                at_list.append(-1)
                len_list.append(-1)
                continue
            if (expect >= 0 and nbytes != expect) or nbytes > ib.stored_max:
                return None
            hi = nbytes if hi < 0 else hi
            partial |= hi - lo < nbytes
            ranges.append((offset + lo, offset + hi, taken))
            at_list.append(taken)
            len_list.append(hi - lo)
            taken += hi - lo
            end = max(end, offset + nbytes)
        if ranges:
            if partial:
                # The last byte of the furthest inner chunk: in the shard, or it is cut short.
                ranges.append((end - 1, end, taken))
                taken += 1
            if staging is None or staging.nbytes < taken:
                staging = thread_scratch(taken, "stored")
            if self._store.read_ranges_into([(key, ranges)], staging)[0] != taken:
                return None
        return staging, np.array(at_list, dtype=np.int64), np.array(len_list, dtype=np.int64)

    def _place_inner_parts(self, parts: _InnerParts, staging: np.ndarray, ats: np.ndarray,
                           lens: np.ndarray, dst: np.ndarray, whole: bool) -> bool:
        """Copy each part of the box out of what :meth:`_fetch_shard_parts` read (raw inner
        chunks: their spans; else whole inner chunks, decoded first: straight into ``dst``
        when it is the one inner chunk, ``whole``), filling those not stored.  False when
        an inner chunk does not decode (the caller takes the general path, which reports
        it)."""
        ib = self._inner_box
        assert ib is not None and self._sharding is not None
        # (a list test: numpy's calls cost more than the lookup on a few parts)
        lens_list = lens.tolist()
        stored = None if -1 not in lens_list else lens >= 0
        if stored is not None:
            parts.fill(dst, self._fill_bytes, ~stored)
        if ib.raw:
            if staging is not dst:  # (else read straight into it)
                parts.copy(staging, ats, ib.strides_i64, dst, self._itemsize, stored)
            return True
        chain = self._sharding._evolved_pipeline()
        into = chain.can_decode_into
        ats_list = ats.tolist()

        def place(i: int) -> bool:
            at, n = ats_list[i], lens_list[i]
            if into:
                target = dst if whole else thread_scratch(ib.nbytes, "inner")
                if not chain.decode_into(staging[at:at + n], target):
                    return False
                if target is dst:
                    return True
            else:  # (chains that cannot decode into memory given, gzip say)
                try:
                    chunk = chain.decode(staging[at:at + n], ib.shape)
                except ChunkDecodeError:
                    return False
                target = chunk.reshape(-1).view(np.uint8)
            parts.copy(target, parts.src_lo, ib.strides_i64, dst, self._itemsize,
                       slice(i, i + 1))
            return True

        todo = [i for i, n in enumerate(lens_list) if n >= 0]
        if len(todo) == 1:
            return place(todo[0])
        # Several inner chunks decode side by side (each into its thread's scratch; their
        # parts are disjoint regions of the output): a 4^3 box across inner chunks of 32^3
        # under zstd took 271 us against 307-311 one after another (/tmp/s16/straddle3.py).
        return all(map_unordered(place, todo))

    def _ranges_of(self, key: str) -> GetRanges:
        """The shard reader's ``get_ranges``: byte ranges of ``key``, in one store request."""
        return StoreRanges(self._store, key)

    def _read_chunk(self, coords: tuple[int, ...], into: np.ndarray | None = None,
                    need: int | None = None) -> np.ndarray | None:
        """The decoded chunk at ``coords`` (possibly read-only), or None if it is not stored,
        for a caller that copies it out at once, before this thread reads another: its
        stored bytes are read into, and it is decoded into, this thread's scratch memory
        where the store and the codecs can (``thread_scratch``: no fresh memory, and its
        page faults, per chunk), so it may be a view of either.  With ``into`` (where the
        chunk's C-ordered bytes go in an output: a contiguous ``uint8`` run of its size),
        decoded straight there where the codecs can (``CodecPipeline.decode_into``), and
        ``into`` itself is returned.  With ``need``, the caller reads only the chunk's first
        ``need`` bytes (C order): where the codecs can, only they are decoded
        (``CodecPipeline.decode_prefix_into``) and the rest of the chunk returned is
        undefined."""
        key = self.chunk_key(coords)
        shape = self._chunk_shape_at(coords)
        nbytes = math.prod(shape) * self._itemsize
        raw = self._get_transient(key, nbytes)
        if raw is None:
            return None
        if into is not None:
            if self._pipeline.decode_into(raw, into):
                return into
        elif self._pipeline.can_decode_into:
            scratch = thread_scratch(nbytes)
            if (need is not None and need < nbytes and self._pipeline.can_decode_prefix
                    and self._pipeline.decode_prefix_into(raw, scratch, need)):
                return scratch.view(self.dtype).reshape(shape)
            if self._pipeline.decode_into(raw, scratch):
                return scratch.view(self.dtype).reshape(shape)
        return self._decode_chunk(raw, key, shape)

    def _get_transient(self, key: str, nbytes: int) -> Any:
        """The value stored at ``key`` (None if missing) of a chunk of ``nbytes`` decoded
        bytes, used at once (decoded, or its raw elements copied out): where the store
        reads into memory, in this thread's ``"stored"`` scratch memory (valid until its
        next such read), not fresh ``bytes`` (whose page faults, in some allocator states,
        cost as much as the read)."""
        store = self._store
        if not store._reads_into_memory:
            return store.get(key)
        cap = nbytes + (nbytes >> 3) + 4096  # an incompressible chunk's encoding fits
        buf = thread_scratch(cap, "stored")
        size = store.read_value_into(key, buf)
        if size is None:
            return None
        return buf[:size] if size <= cap else store.get(key)

    def _read(self, sel: OrthogonalSelection) -> np.ndarray:
        return self._read_many([sel])[0]

    def _read_many(self, sels: Sequence[OrthogonalSelection]) -> list[np.ndarray]:
        """Read orthogonal selections: their chunk tasks grouped by chunk, so each chunk is
        read and decoded once, whichever selections touch it."""
        return self._read_planned([sel.counts for sel in sels],
                                  [plan_chunks(sel, self._dims) if sel.size else ()
                                   for sel in sels])

    def _read_planned(self, counts: Sequence[Sequence[int]],
                      plans: Sequence[Iterable[ChunkTask]]) -> list[np.ndarray]:
        """Outputs of shapes ``counts`` filled by their chunk ``plans``."""
        itemsize = self._itemsize
        outs = [empty_array(c, self.dtype) for c in counts]
        targets = [(out.reshape(-1).view(np.uint8), c_strides(c, itemsize))
                   for out, c in zip(outs, counts, strict=True)]
        groups: dict[tuple[int, ...], list[tuple[ChunkTask, int]]] = {}
        for i, (plan, out) in enumerate(zip(plans, outs, strict=True)):
            if out.size:
                for task in plan:
                    groups.setdefault(task.coords, []).append((task, i))

        def copy_out(task: ChunkTask, i: int, chunk: np.ndarray | None) -> None:
            """Move ``task``'s elements of a decoded chunk (None: missing) into output i."""
            dst, out_strides = targets[i]
            if not task.strided:
                if chunk is None:
                    outs[i][task.out_index()] = self._metadata.fill_value_array
                else:  # one gather over the outer product of the per-dimension indices
                    copy_outer(chunk.reshape(-1).view(np.uint8),
                               task.local_dim_offsets(c_strides(chunk.shape, itemsize)),
                               dst, task.out_dim_offsets(out_strides), int64_array(task.counts),
                               itemsize)
                return
            dst_offset, dst_strides = task.out_region(out_strides)
            shape = int64_array(task.counts)
            if chunk is None:
                fill_strided(dst, dst_offset, dst_strides, shape, self._fill_bytes)
                return
            src = chunk.reshape(-1).view(np.uint8)
            src_offset, src_strides = task.chunk_region(c_strides(chunk.shape, itemsize))
            copy_strided(src, src_offset, src_strides, dst, dst_offset, dst_strides, shape,
                         itemsize)

        def run_of_output(coords: tuple[int, ...], task: ChunkTask, i: int
                          ) -> np.ndarray | None:
            # Where a whole chunk's C-ordered bytes land in output i, if they are one run of it.
            shape = self._chunk_shape_at(coords)
            if (not task.strided or task.counts != shape
                    or any(run != (0, 1) for run in task.local)):
                return None
            dst, out_strides = targets[i]
            offset, steps = task.out_region(out_strides)
            if any(n > 1 and step != s for n, step, s
                   in zip(shape, steps.tolist(), c_strides(shape, itemsize), strict=True)):
                return None
            return dst[offset:offset + math.prod(shape) * itemsize]

        def read_group(item: tuple[tuple[int, ...], list[tuple[ChunkTask, int]]]) -> None:
            coords, members = item
            if self._sharding is not None:
                if all(task.strided for task, _ in members):
                    read_shard_parts(coords, members)
                else:
                    read_shard_indices(coords, members)
                return
            target = run_of_output(coords, *members[0]) if (
                len(members) == 1 and self._pipeline.can_decode_into) else None
            chunk = self._read_chunk(coords, into=target)
            if chunk is not None and chunk is target:
                return
            for task, i in members:
                copy_out(task, i, chunk)

        def read_shard_indices(coords: tuple[int, ...],
                               members: list[tuple[ChunkTask, int]]) -> None:
            # Index arrays into a shard: only the inner chunks the outer products touch are
            # read and decoded, each feeding one copy_outer per output region.
            key = self.chunk_key(coords)
            assert self._sharding is not None
            parts = []
            for task, i in members:
                dst, out_strides = targets[i]
                parts.append((dst, task.local_indices(), tuple(
                    x * s for x, s in zip(task.out_indices(), out_strides, strict=True))))
            found = read_shard_outer(
                self._sharding, self._ranges_of(key),
                self._chunk_shape_at(coords), parts, itemsize=itemsize,
                fill_bytes=self._fill_bytes, key=key)
            if not found:
                for task, i in members:
                    copy_out(task, i, None)

        regions: dict[tuple[int, ...], list[tuple[int, np.ndarray]]] = {}  # per raw span

        def raw_span(coords: tuple[int, ...], members: list[tuple[ChunkTask, int]]
                     ) -> tuple[tuple[int, ...], int, int, int] | None:
            # For a chunk stored as raw elements: the byte range spanning the selected
            # elements, when it is well under the chunk (None: read the chunk whole).
            if not all(task.strided for task, _ in members):
                return None
            chunk_shape = self._chunk_shape_at(coords)
            strides = c_strides(chunk_shape, itemsize)
            regions[coords] = [task.chunk_region(strides) for task, _ in members]
            lo = min(offset for offset, _ in regions[coords])
            hi = max(sum((b - 1) * s for (_, b), s in zip(task.bounds(), strides, strict=True))
                     for task, _ in members) + itemsize
            nbytes = math.prod(chunk_shape) * itemsize
            return (coords, lo, hi, nbytes) if 2 * (hi - lo) <= nbytes else None

        def place_raw(span: tuple[tuple[int, ...], int, int, int],
                      buf: np.ndarray | None) -> None:
            coords, lo, _, _ = span
            members = groups[coords]
            if buf is None:
                for task, i in members:
                    copy_out(task, i, None)
                return
            for (task, i), (offset, steps) in zip(members, regions[coords], strict=True):
                dst, out_strides = targets[i]
                dst_offset, dst_strides = task.out_region(out_strides)
                copy_strided(buf, offset - lo, steps, dst, dst_offset, dst_strides,
                             int64_array(task.counts), itemsize)

        def read_shard_parts(coords: tuple[int, ...],
                             members: list[tuple[ChunkTask, int]]) -> None:
            # Only the shard index and the inner chunks the selections touch are read, once,
            # in bounded batches; each decoded inner chunk is copied straight into every output
            # region it feeds, so neither the shard's bytes nor the decoded shard is ever held.
            key = self.chunk_key(coords)
            shard_shape = self._chunk_shape_at(coords)
            sharding = self._sharding
            assert sharding is not None
            # Every copy is planned before anything is read: inner chunk -> (output, its byte
            # offset and strides, counts, byte offset and strides in the inner chunk).  Plain
            # integer arithmetic per dimension (runs -> inner chunks), as few arrays as can be.
            inner_shape = sharding.chunk_shape
            inner_strides = c_strides(inner_shape, itemsize)
            pieces: dict[tuple[int, ...], list[tuple[int, int, np.ndarray, np.ndarray, int,
                                                     np.ndarray]]] = {}
            # Selections of one shape share their stride and count arrays (read-only here).
            arrays: dict[tuple[int, ...], np.ndarray] = {}

            def shared_int64(values: tuple[int, ...]) -> np.ndarray:
                arr = arrays.get(values)
                if arr is None:
                    arr = arrays[values] = int64_array(values)
                return arr

            for task, i in members:
                out_strides = targets[i][1]
                local, out, counts = task.local, task.out, task.counts
                dst_strides = shared_int64(tuple(step * s for (_, step), s
                                                 in zip(out, out_strides, strict=True)))
                src_strides = shared_int64(tuple(step * s for (_, step), s
                                                 in zip(local, inner_strides, strict=True)))
                inner: list[int] = []
                src_offset = 0
                for (start, step), n, c, s in zip(local, counts, inner_shape, inner_strides,
                                                  strict=True):
                    q = start // c
                    if (start + (n - 1) * step) // c != q:
                        break
                    inner.append(q)
                    src_offset += (start - q * c) * s
                else:  # one inner chunk (a small selection): one piece
                    pieces.setdefault(tuple(inner), []).append((
                        i, sum(start * s for (start, _), s in zip(out, out_strides, strict=True)),
                        dst_strides, shared_int64(tuple(counts)), src_offset, src_strides,
                    ))
                    continue
                plans = sharding.project_runs(shard_shape, local, counts)
                out_starts = [start * s for (start, _), s in zip(out, out_strides, strict=True)]
                out_steps = [step * s for (_, step), s in zip(out, out_strides, strict=True)]
                for combo in itertools.product(*plans):
                    pieces.setdefault(tuple(p[0] for p in combo), []).append((
                        i,
                        sum(o + p[1] * st for p, o, st
                            in zip(combo, out_starts, out_steps, strict=True)),
                        dst_strides,
                        shared_int64(tuple(p[2] for p in combo)),
                        sum(p[3] * s for p, s in zip(combo, inner_strides, strict=True)),
                        src_strides,
                    ))

            def sink(inner_coords: tuple[int, ...], chunk: np.ndarray | None) -> None:
                src = None if chunk is None else chunk.reshape(-1).view(np.uint8)
                for i, dst_offset, dst_strides, shape, src_offset, src_strides in pieces[
                        inner_coords]:
                    dst = targets[i][0]
                    if src is None:
                        fill_strided(dst, dst_offset, dst_strides, shape, self._fill_bytes)
                    else:
                        copy_strided(src, src_offset, src_strides, dst, dst_offset,
                                     dst_strides, shape, itemsize)

            found = sharding.read_inner_chunks_into(
                self._ranges_of(key), shard_shape, pieces, sink, key=key)
            if not found:
                for task, i in members:
                    copy_out(task, i, None)

        whole: list[tuple[tuple[int, ...], list[tuple[ChunkTask, int]]]] = []
        spans: list[tuple[tuple[int, ...], int, int, int]] = []
        for coords, members in groups.items():
            span = raw_span(coords, members) if self._pipeline.stores_raw_elements else None
            if span is None:
                whole.append((coords, members))
            else:
                spans.append(span)
        self._read_raw_spans(spans, lambda n, buf: place_raw(spans[n], buf))
        map_unordered(read_group, whole)
        return outs

    # -- writes ----------------------------------------------------------------------------------

    def __setitem__(self, selection: Any, value: Any) -> None:
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
                _numpy_key_of_0d(element, selection, self._as_dtype(value))
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
            arr = self._as_dtype(value)
            self._write(sel, arr if arr.ndim == 0 else layout.from_numpy(arr, sel.out_shape))
        else:
            self.set_basic_selection(selection, value)

    def _as_dtype(self, value: Any) -> np.ndarray:
        """``value`` as an array of the array's dtype, converted as numpy assignment does:
        arrays cast (unsafe, as numpy), scalars and sequences through ``np.asarray(value,
        dtype)``, which refuses what does not fit (300 into int8, NaN into integers, complex
        into reals) instead of wrapping it."""
        try:
            if isinstance(value, np.ndarray):
                return value if value.dtype == self.dtype else value.astype(self.dtype)
            return np.asarray(value, dtype=self.dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            kind = value.dtype if isinstance(value, np.ndarray) else type(value).__name__
            raise ValueConversionError(
                f"cannot convert the value ({kind}) to the array's dtype {self.dtype}: {exc}"
            ) from None

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` (broadcast as numpy does) into a basic selection."""
        self._check_writable()
        sel = parse_basic_selection(selection, self.shape)
        if sel.out_shape == () and not _has_ellipsis(selection) and np.ndim(value) > 0:
            # One element (numpy's scalar case, unlike a[...] of a 0-d array): numpy refuses
            # any sequence, even one of a single element.
            raise ShapeMismatchError(
                f"cannot write a value of shape {np.shape(value)} into the single element "
                f"selected by {selection!r}"
            )
        self._write(sel, value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` into an orthogonal selection (see get_orthogonal_selection)."""
        self._check_writable()
        self._write(parse_orthogonal_selection(selection, self.shape), value)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        """Write ``value`` into whole chunks selected by chunk index."""
        self.set_basic_selection(parse_block_selection(selection, self._dims, self.shape), value)

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """Write ``value`` where a boolean mask of the array's shape is true."""
        self._check_writable()
        self.set_coordinate_selection(parse_mask(mask, self.shape), value)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """Write points; with duplicate coordinates the last value wins, as in numpy."""
        self._check_writable()
        sel = parse_coordinate_selection(selection, self.shape)
        arr = self._as_dtype(value)
        flat = arr.reshape(-1) if arr.ndim == 0 else broadcast_value(arr, sel.out_shape).reshape(-1)

        itemsize = self._itemsize
        src = np.ascontiguousarray(flat).view(np.uint8)

        def write_points(task: PointTask) -> None:
            # In the points' order, so with duplicate coordinates the last value wins.
            src_offsets = (np.zeros(len(task.out), dtype=np.int64) if arr.ndim == 0
                           else task.out * itemsize)

            def scatter(chunk: np.ndarray) -> None:
                copy_elements(src, src_offsets, chunk.reshape(-1).view(np.uint8),
                              task.offsets, itemsize)

            local = task.local
            region = tuple((int(x.min()), int(x.max()) + 1) for x in local)
            inner_chunks = None
            if self._sharding is not None:  # only the inner chunks holding points change
                ids = np.stack([x // c for x, c in zip(local, self._sharding.chunk_shape,
                                                       strict=True)], axis=1)
                inner_chunks = [tuple(row) for row in np.unique(ids, axis=0).tolist()]
            self._modify_chunk(task.coords, None, scatter, region=region,
                               inner_chunks=inner_chunks)

        map_unordered(write_points, plan_points(sel, self._dims, itemsize))

    def _write(self, sel: OrthogonalSelection, value: Any) -> None:
        arr = self._as_dtype(value)
        scalar = arr.ndim == 0
        if scalar:
            arr = arr.copy()  # (np.ascontiguousarray would make it 1-d)
        else:
            # Any strides (F order, broadcast): the copy kernels read them as they are, so
            # the value is never copied whole.
            arr = broadcast_value(arr, sel.out_shape).reshape(sel.counts)
        if sel.size == 0:
            return
        itemsize = self._itemsize
        if scalar:
            src, value_strides = arr.reshape(-1).view(np.uint8), [0] * len(sel.counts)
        else:
            src, value_strides = _byte_source(arr)
        scratch = _Scratch()

        def modify(task: ChunkTask, chunk: np.ndarray) -> None:
            if not task.strided:  # one scatter over the outer product of the indices
                src_offsets = task.out_dim_offsets(value_strides)
                copy_outer(src, src_offsets, chunk.reshape(-1).view(np.uint8),
                           task.local_dim_offsets(c_strides(chunk.shape, itemsize)),
                           int64_array(task.counts), itemsize)
                return
            dst = chunk.reshape(-1).view(np.uint8)
            dst_offset, dst_strides = task.chunk_region(c_strides(chunk.shape, itemsize))
            counts = int64_array(task.counts)
            if scalar:
                fill_strided(dst, dst_offset, dst_strides, counts, src)
            else:
                src_offset, src_strides = task.out_region(value_strides)
                copy_strided(src, src_offset, src_strides, dst, dst_offset, dst_strides,
                             counts, itemsize)

        def write(task: ChunkTask) -> None:
            if task.strided and itemsize:
                chunk_shape = self._chunk_shape_at(task.coords)
                if task.covers(chunk_shape, self.shape, self._chunk_origin(task.coords)):
                    self._write_whole_chunk(task, chunk_shape, src, value_strides, scratch)
                    return
            self._modify_chunk(task.coords, task, lambda c: modify(task, c),
                               region=task.bounds())

        map_unordered(write, plan_chunks(sel, self._dims))

    def _write_whole_chunk(self, task: ChunkTask, chunk_shape: tuple[int, ...],
                           src: np.ndarray, value_strides: Sequence[int],
                           scratch: _Scratch) -> None:
        """Write a chunk the value covers entirely (elements past the array's end are fill),
        without reading it: encoded straight from the value's strided bytes.  A shard's
        inner chunks are encoded one by one and the store writes their encodings one after
        another (see ``ShardingCodec.encode_region``); another chunk is copied into this
        worker's scratch buffer, reused from chunk to chunk, and encoded from there."""
        key = self.chunk_key(task.coords)
        src_offset, src_strides = task.out_region(value_strides)
        counts = int64_array(task.counts)
        with chunk_lock(self._store, key):
            if self._sharding is not None:
                parts, stored = self._sharding.encode_region(
                    src, src_offset, src_strides, task.counts, chunk_shape,
                    arena=scratch.arena())
                if stored == 0 and not self._write_empty_chunks:
                    self._store.erase(key)
                else:
                    self._store.set_parts(key, parts)
                return
            chunk = scratch.chunk(chunk_shape, self.dtype)
            dst = chunk.reshape(-1).view(np.uint8)
            strides = int64_array(c_strides(chunk_shape, self._itemsize))
            if tuple(task.counts) != chunk_shape:  # an edge chunk: fill past the array's end
                fill_strided(dst, 0, strides, int64_array(chunk_shape), self._fill_bytes)
            copy_strided(src, src_offset, src_strides, dst, 0, strides, counts, self._itemsize)
            # The store copies what it is given (Store.set), so the scratch can be reused.
            self._store_chunk(key, chunk)

    def _modify_chunk(self, coords: tuple[int, ...], task: ChunkTask | None,
                      modify: Callable[[np.ndarray], None], *,
                      region: tuple[tuple[int, int], ...],
                      inner_chunks: list[tuple[int, ...]] | None = None) -> None:
        """Read-modify-write one chunk under its lock.  A chunk the ``task`` covers entirely
        is not read: it is built from the new values alone.  ``region`` bounds, per
        dimension, the elements ``modify`` changes (so a shard rewrites only those inner
        chunks); ``inner_chunks``, if given, lists the inner chunks of a shard it changes (points
        scattered over a shard touch few of those in their bounding box)."""
        key = self.chunk_key(coords)
        chunk_shape = self._chunk_shape_at(coords)
        with chunk_lock(self._store, key):
            origin = self._chunk_origin(coords)
            if task is not None and task.covers(chunk_shape, self.shape, origin):
                inside = all(o + c <= n for o, c, n in
                             zip(origin, chunk_shape, self.shape, strict=True))
                chunk = self._new_chunk(chunk_shape, filled=not inside)
            elif self._sharding is not None:
                self._modify_inner_chunks(key, chunk_shape, region, modify, inner_chunks)
                return
            else:
                raw = self._store.get(key)
                if raw is None:
                    chunk = self._new_chunk(chunk_shape, filled=True)
                else:
                    chunk = self._decode_chunk(raw, key, chunk_shape)
                    if not chunk.flags.writeable:
                        chunk = chunk.copy()
            modify(chunk)
            self._store_chunk(key, chunk)

    def _modify_inner_chunks(self, key: str, shard_shape: tuple[int, ...],
                             region: tuple[tuple[int, int], ...],
                             modify: Callable[[np.ndarray], None],
                             inner_chunks: list[tuple[int, ...]] | None = None) -> None:
        """A partial write of a shard (its lock held): decode only the inner chunks holding
        ``region`` (or those listed in ``inner_chunks``: ``modify`` must change nothing else),
        modify them in a shard-shaped scratch array (pages of the untouched part are never
        written, so never allocated), and rewrite the shard with every other inner chunk's
        stored bytes kept as they are."""
        codec = self._sharding
        assert codec is not None
        old = self._store.get(key)
        touched = (codec.inner_chunks_for_region(shard_shape, region) if inner_chunks is None
                   else inner_chunks)
        decoded = None
        if old is not None:
            view = memoryview(old).cast("B")

            def from_old(ranges: Sequence[tuple[int, int | None]]) -> list[memoryview]:
                spans = [resolve_byte_range(start, length, len(view)) for start, length in ranges]
                return [view[lo:hi] for lo, hi in spans]

            decoded = codec.read_inner_chunks(from_old, shard_shape, touched, key=key)
        scratch = np.empty(shard_shape, dtype=self.dtype)
        fill = self._metadata.fill_value_array
        boxes = {}
        for inner in touched:
            box = tuple(slice(i * c, (i + 1) * c)
                        for i, c in zip(inner, codec.chunk_shape, strict=True))
            part = None if decoded is None else decoded.get(inner)
            scratch[box] = fill if part is None else part
            boxes[inner] = box
        modify(scratch)
        new = codec.update_shard(old, shard_shape,
                                 {inner: scratch[box] for inner, box in boxes.items()}, key=key)
        if new is None:
            self._store.erase(key)
        else:
            self._store.set(key, new)

    def _store_chunk(self, key: str, chunk: np.ndarray) -> None:
        """Write an encoded chunk, or erase it when it holds only the fill value."""
        if not self._write_empty_chunks and is_uniform(
            chunk.reshape(-1).view(np.uint8), self._fill_bytes
        ):
            self._store.erase(key)
        else:
            # (Store.set copies or writes it: the thread's scratch can hold the encoding)
            self._store.set(key, self._pipeline.encode_to_scratch(chunk))

    # -- metadata updates -----------------------------------------------------------------------

    def resize(self, *shape: Any) -> None:
        """Change the shape.  Chunks wholly outside the new shape are erased; where the array
        shrinks inside a chunk, that chunk's outside part is reset to the fill value, so growing
        the array again shows the fill value, not stale data."""
        self._check_writable()
        new_shape = _normalize_shape(shape[0] if len(shape) == 1 else shape)
        if len(new_shape) != self.ndim:
            raise ShapeMismatchError(
                f"cannot resize a {self.ndim}-d array to shape {new_shape} ({len(new_shape)}-d)"
            )
        # From the document stored now, not this object's copy: the shape or the attributes
        # may have changed through another object since it was read.
        with self._stored_metadata() as current:
            self._set_metadata(current)
            old_shape = self.shape
            new_meta = current.evolve(
                shape=new_shape, chunk_grid=current.chunk_grid.resized(new_shape)
            )
            # Metadata first: a crash in between leaves stray chunks outside the shape
            # (ignored), never a declared region whose chunks were already erased.
            self._format.write_node(self._store, self._path, new_meta)
        old_stored = list(self._stored_chunks())
        self._set_metadata(new_meta)
        grid_shape = self.cdata_shape
        outside = {k for k, c in old_stored
                   if any(ci >= n for ci, n in zip(c, grid_shape, strict=True))}
        if outside:
            self._store.erase_values(outside)
        shrunk = [i for i, (n, o) in enumerate(zip(new_shape, old_shape, strict=True)) if n < o]
        if not shrunk:
            return
        for key, coords in old_stored:
            if key in outside:
                continue
            origin = self._chunk_origin(coords)
            chunk_shape = self._chunk_shape_at(coords)
            cut = [i for i in shrunk if origin[i] + chunk_shape[i] > new_shape[i]]
            if cut:
                self._reset_outside(key, origin, chunk_shape, cut)

    def _reset_outside(self, key: str, origin: Sequence[int], chunk_shape: tuple[int, ...],
                       axes: Sequence[int]) -> None:
        with chunk_lock(self._store, key):
            raw = self._store.get(key)
            if raw is None:
                return
            chunk = np.array(self._decode_chunk(raw, key, chunk_shape))
            fill = self._metadata.fill_value_array
            for i in axes:
                index = [slice(None)] * self.ndim
                index[i] = slice(max(0, self.shape[i] - origin[i]), None)
                chunk[tuple(index)] = fill
            self._store_chunk(key, chunk)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array along ``axis`` and write ``data`` there; returns the new shape."""
        self._check_writable()
        data = np.asarray(data)
        if data.ndim != self.ndim:
            raise ShapeMismatchError(
                f"cannot append {data.ndim}-d data to a {self.ndim}-d array"
            )
        if not -self.ndim <= axis < self.ndim:
            raise IndexingError(f"axis {axis} is out of bounds for a {self.ndim}-d array")
        axis %= self.ndim
        for i, (n, m) in enumerate(zip(self.shape, data.shape, strict=True)):
            if i != axis and n != m:
                raise ShapeMismatchError(
                    f"data shape {data.shape} does not match array shape {self.shape} "
                    f"on axis {i}"
                )
        old = self.shape[axis]
        new_shape = list(self.shape)
        new_shape[axis] += data.shape[axis]
        self.resize(tuple(new_shape))
        region = [slice(None)] * self.ndim
        region[axis] = slice(old, new_shape[axis])
        self[tuple(region)] = data
        return self.shape


#: The most inner chunks a box read by ``Array._read_shard_box`` may touch (2 per axis in 3-d)
_SHARD_BOX_MAX_INNER = 8
#: The most chunks a box read by ``Array._read_chunk_box`` may cross (2 per axis in 3-d)
_BOX_CHUNKS_MAX = 8
#: The most shards a box read by ``Array._read_box_by_shards`` may cross (2 per axis in 3-d)
_BOX_SHARDS_MAX = 8

#: ``Array._fetch_shard_parts``: the shard is not stored
_MISSING_SHARD = object()

#: Room per compressed inner chunk beyond its decoded size and 1/128 of it (what zstd may add)
_STORED_SLACK = 4096


def _stored_max(nbytes: int) -> int:
    """The most bytes a small sharded read takes a stored inner chunk of ``nbytes`` decoded
    bytes to hold: the room it sets aside for each before their sizes are known, and the
    largest it reads itself (a larger one, possibly a damaged index's entry, goes to the
    general path, which checks it against the shard)."""
    return nbytes + nbytes // 128 + _STORED_SLACK


#: The most memory a small sharded read sets aside for compressed inner chunks whose sizes it
#: does not know yet (larger inner chunks: the index is read first, then exactly their bytes)
_ONE_CALL_ROOM_MAX = 16 << 20


class _InnerParts:
    """A box's parts per inner chunk, as ``plan_box_in_cell`` plans them: views of its
    blocks, and the copy and fill calls that place them in the box's output."""

    __slots__ = ("counts", "dst_offsets", "dst_strides", "n", "slots", "src_hi", "src_lo")

    def __init__(self, plan: np.ndarray, ndim: int):
        n = self.n = len(plan) // (4 + 2 * ndim)
        self.slots, self.src_lo, self.src_hi, self.dst_offsets = (
            plan[:n], plan[n:2 * n], plan[2 * n:3 * n], plan[3 * n:4 * n])
        self.counts = plan[4 * n:(4 + ndim) * n].reshape(n, ndim)
        self.dst_strides = plan[(4 + ndim) * n:].reshape(n, ndim)

    def fill(self, dst: np.ndarray, fill: np.ndarray, which: Any) -> None:
        """Fill the parts ``which`` selects (a mask or a slice) with the element ``fill``."""
        fill_pieces(dst, self.dst_offsets[which], self.dst_strides[which], self.counts[which],
                    fill)

    def copy(self, src: np.ndarray, src_offsets: np.ndarray, src_strides: np.ndarray,
             dst: np.ndarray, itemsize: int, which: Any = None) -> None:
        """Copy the parts ``which`` selects (a mask or a slice; None: all, as they are, the
        common case kept free of indexing) from ``src``, the first element of part ``i`` at
        ``src_offsets[i]``."""
        if which is None:
            copy_pieces(src, src_offsets, src_strides, dst, self.dst_offsets, self.dst_strides,
                        self.counts, itemsize)
        else:
            copy_pieces(src, src_offsets[which], src_strides, dst, self.dst_offsets[which],
                        self.dst_strides[which], self.counts[which], itemsize)


class _ChunkBox(NamedTuple):
    """What the short path's reads need of a regular grid's chunks, computed once."""

    nbytes: int  # bytes of a raw chunk
    strides: np.ndarray  # its C-order byte strides (int64)
    shape: np.ndarray  # the chunk shape (int64)
    grid_steps: np.ndarray  # C-order steps numbering the chunks of the grid (int64)


class _InnerBox(NamedTuple):
    """What the short path's reads need of a sharded regular grid's inner chunks, computed
    once (the int64 arrays for the kernels, the lists for plain Python arithmetic)."""

    shape: tuple[int, ...]  # the inner chunk shape
    shape_i64: np.ndarray
    strides: list[int]  # its C-order byte strides
    strides_i64: np.ndarray
    per_shard: tuple[int, ...]  # inner chunks per shard, per dimension
    shard_steps: list[int]  # C-order steps numbering the inner chunks of a shard
    nbytes: int  # bytes of a raw inner chunk
    raw: bool  # inner chunks stored as raw elements (read by byte ranges)
    shard_i64: np.ndarray  # the shard shape
    whole_los: np.ndarray  # 0 and -1 per part: whole inner chunks (_SHARD_BOX_MAX_INNER)
    whole_his: np.ndarray
    stored_max: int  # the most bytes a stored inner chunk may hold here (_stored_max)
    plain: tuple[int, bool] | None  # the codec's plain_index of a shard of the grid


class _BoxPlan:
    """Step-1 boxes cut into their pieces per chunk of a regular grid (one kernel call), and
    the one output buffer that holds the boxes' elements, box after box."""

    __slots__ = ("counts", "coords", "dst_offsets", "dst_strides", "out", "src_ends",
                 "src_offsets", "starts")

    def __init__(self, boxes: Sequence[tuple[Any, ...]], chunk_shape: np.ndarray,
                 chunk_strides: np.ndarray, dtype: np.dtype):
        nboxes, ndim = len(boxes), len(chunk_shape)
        starts = np.array([box[0] for box in boxes], dtype=np.int64).reshape(nboxes, ndim)
        stops = np.array([box[1] for box in boxes], dtype=np.int64).reshape(nboxes, ndim)
        n = count_box_pieces(starts, stops, chunk_shape)
        # One allocation for the plan's arrays (contiguous slices of it).
        block = np.empty(n * (3 * ndim + 3) + nboxes + 1, dtype=np.int64)
        self.coords = block[:n * ndim].reshape(n, ndim)
        self.counts = block[n * ndim:2 * n * ndim].reshape(n, ndim)
        self.dst_strides = block[2 * n * ndim:3 * n * ndim].reshape(n, ndim)
        at = 3 * n * ndim
        self.src_offsets = block[at:at + n]
        self.src_ends = block[at + n:at + 2 * n]
        self.dst_offsets = block[at + 2 * n:at + 3 * n]
        self.starts = block[at + 3 * n:]
        plan_box_pieces(starts, stops, chunk_shape, chunk_strides, dtype.itemsize, self.coords,
                        self.counts, self.src_offsets, self.src_ends, self.dst_offsets,
                        self.dst_strides, self.starts)
        self.out = empty_array(int(self.starts[-1]) // dtype.itemsize, dtype)

    def by_chunk(self, chunk_ids: Callable[[np.ndarray], np.ndarray]) -> _Pieces:
        """The pieces grouped by chunk, in increasing order of ``chunk_ids(coords)`` (an int64
        id per row of chunk coordinates, equal for equal chunks)."""
        arrays: tuple[np.ndarray, ...] = (self.coords, self.counts, self.src_offsets,
                                          self.src_ends, self.dst_offsets, self.dst_strides)
        n = len(self.coords)
        if n == 1:
            return _Pieces(self.out.reshape(-1).view(np.uint8), [0, 1], *arrays)
        ids = chunk_ids(self.coords)
        id_list = ids.tolist()
        if any(y < x for x, y in zip(id_list, id_list[1:], strict=False)):
            order = np.argsort(ids, kind="stable")
            arrays = tuple(a[order] for a in arrays)
            id_list = ids[order].tolist()
        bounds = [0, *(i for i in range(1, n) if id_list[i] != id_list[i - 1]), n]
        return _Pieces(self.out.reshape(-1).view(np.uint8), bounds, *arrays)

    def results(self, boxes: Sequence[tuple[Any, ...]],
                in_order: Callable[[np.ndarray], np.ndarray]) -> list[Any]:
        """What ``a[box]`` returns for each box: views of the output buffer."""
        itemsize = self.out.dtype.itemsize
        at = (self.starts // itemsize).tolist()
        out = self.out
        return [out[at[i]:at[i + 1]].reshape(box[2])[()] if box[3]
                else in_order(out[at[i]:at[i + 1]].reshape(box[2]))
                for i, box in enumerate(boxes)]


class _Pieces:
    """Pieces of reads grouped by chunk: chunk ``n``'s are rows ``bounds[n]:bounds[n + 1]``
    of the arrays (see ``plan_box_pieces``), all landing in ``dst``."""

    __slots__ = ("bounds", "chunks", "counts", "dst", "dst_offsets", "dst_strides", "nchunks",
                 "src_ends", "src_offsets")

    def __init__(self, dst: np.ndarray, bounds: list[int], coords: np.ndarray,
                 counts: np.ndarray, src_offsets: np.ndarray, src_ends: np.ndarray,
                 dst_offsets: np.ndarray, dst_strides: np.ndarray):
        self.dst = dst
        self.bounds = bounds
        self.nchunks = len(bounds) - 1
        coords_list = coords.tolist()
        self.chunks = [tuple(coords_list[i]) for i in bounds[:-1]]
        self.counts = counts
        self.src_offsets = src_offsets
        self.src_ends = src_ends
        self.dst_offsets = dst_offsets
        self.dst_strides = dst_strides

    def copy_from(self, src: np.ndarray, src_offsets: np.ndarray, src_strides: np.ndarray,
                  lo: int, hi: int, missing: np.ndarray | None, fill: np.ndarray,
                  itemsize: int, skip: np.ndarray | None = None) -> None:
        """Copy pieces ``lo:hi`` out of ``src`` (at ``src_offsets``, one per piece), but fill
        those flagged ``missing`` with the element ``fill`` and leave those flagged
        ``skip``."""
        dst_offsets = self.dst_offsets[lo:hi]
        dst_strides = self.dst_strides[lo:hi]
        counts = self.counts[lo:hi]
        if skip is not None and skip.any():
            keep = ~skip
            src_offsets, dst_offsets = src_offsets[keep], dst_offsets[keep]
            dst_strides, counts = dst_strides[keep], counts[keep]
            if missing is not None:
                missing = missing[keep]
        if missing is not None and missing.any():
            fill_pieces(self.dst, dst_offsets[missing], dst_strides[missing], counts[missing],
                        fill)
            keep = ~missing
            src_offsets, dst_offsets = src_offsets[keep], dst_offsets[keep]
            dst_strides, counts = dst_strides[keep], counts[keep]
        copy_pieces(src, src_offsets, src_strides, self.dst, dst_offsets, dst_strides, counts,
                    itemsize)


def _piece_ranges(los: list[int], his: list[int], offset: int, at: int, src: list[int]
                  ) -> tuple[list[tuple[int, int, int]], int]:
    """Byte ranges ``(start, stop, at)`` reading pieces ``[los[i], his[i])`` of one raw chunk
    (at byte ``offset`` of its stored object) into a staging buffer from byte ``at``: the one
    range spanning them all when that is no longer than the pieces' ranges together, else
    each piece's.  Appends where each piece's first byte lands to ``src``; returns the ranges
    and the next free byte."""
    first, last = min(los), max(his)
    if last - first <= sum(his) - sum(los):
        src += [at + x - first for x in los]
        return [(offset + first, offset + last, at)], at + last - first
    ranges = []
    for x, y in zip(los, his, strict=True):
        ranges.append((offset + x, offset + y, at))
        src.append(at)
        at += y - x
    return ranges, at


class _Scratch:
    """Per-thread chunk buffers for one write call, reused from chunk to chunk (and freed
    with the call): no allocation per chunk."""

    __slots__ = ("_local",)

    def __init__(self) -> None:
        self._local = threading.local()

    def arena(self) -> PartArena:
        """This thread's memory for the parts of the shards it writes (a shard's parts are
        written before the thread encodes its next shard)."""
        arena = getattr(self._local, "arena", None)
        if arena is None:
            arena = self._local.arena = PartArena()
        return arena

    def chunk(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A C-contiguous array of ``shape`` over this thread's buffer (contents undefined)."""
        nbytes = math.prod(shape) * dtype.itemsize
        buf = getattr(self._local, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = self._local.buf = np.empty(nbytes, dtype=np.uint8)
        return buf[:nbytes].view(dtype).reshape(shape)


def _byte_source(arr: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """A 1-d ``uint8`` view of the memory of ``arr`` and its byte strides, element ``(0,
    ..., 0)`` at byte 0: what the copy kernels read.  Without copying when no stride is
    negative (C or F order, broadcast, sliced); otherwise from a C-contiguous copy."""
    itemsize = arr.dtype.itemsize
    if arr.flags.c_contiguous:
        return arr.reshape(-1).view(np.uint8), c_strides(arr.shape, itemsize)
    if any(s < 0 for s in arr.strides) or not itemsize:
        arr = np.ascontiguousarray(arr)
        return arr.reshape(-1).view(np.uint8), c_strides(arr.shape, itemsize)
    span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True)) + itemsize
    # The bytes from element 0 to the last one, viewed through the array interface (as
    # numpy's as_strided does); ``arr`` is kept alive as the view's base.
    interface = dict(arr.__array_interface__)
    interface.update(shape=(span,), strides=None, typestr="|u1", descr=[("", "|u1")])
    view = np.asarray(_Interface(interface, arr))
    return view, list(arr.strides)


class _Interface:
    """An object exposing ``__array_interface__`` that keeps its base alive."""

    def __init__(self, interface: dict[str, Any], base: np.ndarray):
        self.__array_interface__ = interface
        self.base = base


def _has_ellipsis(selection: Any) -> bool:
    if selection is Ellipsis:
        return True
    return isinstance(selection, tuple) and any(s is Ellipsis for s in selection)


def _normalize_shape(shape: Any) -> tuple[int, ...]:
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


def _guess_chunks(shape: tuple[int, ...], itemsize: int, target: int = 1 << 20) -> tuple[int, ...]:
    """A chunk shape of about ``target`` bytes: halve the longest dimension until it fits."""
    chunks = [max(1, n) for n in shape]
    while math.prod(chunks) * itemsize > target and max(chunks) > 1:
        i = max(range(len(chunks)), key=lambda j: chunks[j])
        chunks[i] = (chunks[i] + 1) // 2
    return tuple(chunks)


def _normalize_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int) -> dict[str, Any]:
    """The ``chunk_grid`` object for create_array's ``chunks``: a regular grid for ``"auto"``,
    an int or a sequence of ints; a rectilinear grid (seeds 000/001, in its most compact exact
    form) as soon as one dimension is a sequence of edge lengths."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunk_shape: list[Any] = list(_guess_chunks(shape, itemsize))
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


def _normalize_chunk_key_encoding(value: Any) -> dict[str, Any]:
    if value is None:
        return {"name": "default", "configuration": {"separator": "/"}}
    if isinstance(value, str):
        return {"name": value}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return dict(value)


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
    """Build and validate the metadata of a new array from create_array's arguments."""
    shape_t = _normalize_shape(shape)
    data_type = data_type_from_numpy(dtype)
    if shards is not None:
        # As zarr-python: the grid's chunks are the shards; filters, serializer and
        # compressors encode each inner chunk (``chunks``) inside them.
        inner = _normalize_chunks(chunks, shape_t, data_type.itemsize)
        if inner["name"] != "regular":
            raise UnsupportedFeatureError("inner chunks of a shard must be regular")
        if codecs is None:
            codecs = [sharding_codec_dict(
                inner["configuration"]["chunk_shape"], filters=filters, serializer=serializer,
                compressors=compressors, dtype=data_type.dtype,
            )]
        chunks = shards
    chunk_grid = _normalize_chunks(chunks, shape_t, data_type.itemsize)
    if codecs is not None:
        codec_dicts = [normalize_codec_like(c, path=f"codecs[{i}]")
                       for i, c in enumerate(as_codec_list(codecs))]
    else:
        codec_dicts = codec_chain(filters, serializer, compressors, dtype=data_type.dtype)
    fill = data_type.fill_value_from_python(fill_value)
    # Store the codecs with every default filled in (blosc typesize, zstd checksum, ...):
    # peers refuse configurations with missing members.
    codec_dicts = CodecPipeline.from_codecs(
        codec_dicts,
        dtype=data_type.dtype,
        fill_value=np.frombuffer(fill, dtype=data_type.dtype).reshape(()),
        source=source,
    ).to_dicts()
    doc: dict[str, Any] = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape_t),
        "data_type": data_type.name,
        "chunk_grid": chunk_grid,
        "chunk_key_encoding": _normalize_chunk_key_encoding(chunk_key_encoding),
        "fill_value": data_type.fill_value_to_json(fill),
        "codecs": codec_dicts,
        "attributes": dict(attributes or {}),
    }
    if dimension_names is not None:
        doc["dimension_names"] = list(dimension_names)
    return ArrayMetadata.from_dict(doc, source=source)


def create_array(
    store: Store,
    path: str,
    *,
    fmt: HierarchyFormat | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool = False,
    order: str = "C",
    data: Any = None,
    **kwargs: Any,
) -> Array:
    """Create an array at ``path`` (already normalised) in ``store``; see zarr3c.create_array."""
    fmt = fmt if fmt is not None else V3Format()
    if store.read_only:
        raise ReadOnlyError(f"cannot create an array in a read-only store at {path!r}")
    if data is not None:
        data = np.asarray(data)
        kwargs.setdefault("shape", data.shape)
        kwargs.setdefault("dtype", data.dtype)
    source = fmt.metadata_key(path, "array")
    metadata = fmt.new_array(build_array_metadata(source=source, **kwargs), order=order)
    # Construct (and so validate the codec chain) before touching the store.
    array = Array(store, path, metadata, write_empty_chunks=write_empty_chunks, order=order,
                  fmt=fmt)
    prepare_node(store, fmt, path, overwrite=overwrite)
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
) -> Array:
    """Open the existing array at ``path``; raises ArrayNotFoundError / ContainsGroupError."""
    fmt = fmt if fmt is not None else detect_format(store)
    metadata = fmt.read_node(store, path)
    if metadata is None:
        if path and fmt.node_exists(store, path):
            raise ContainsGroupError(f"expected an array at path {path!r}, found a group")
        raise ArrayNotFoundError(
            f"no array at path {path!r} (no {fmt.metadata_key(path, 'array')!r})"
        )
    if metadata.node_type != "array":
        raise ContainsGroupError(f"expected an array at path {path!r}, found a group")
    return Array(store, path, metadata, read_only=read_only,
                 write_empty_chunks=write_empty_chunks, order=order, fmt=fmt)


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
