"""Copying whole hierarchies between stores and formats, chunk by chunk, optionally rechunked.

``zarr3c.copy(src, dst, zarr_format=3)`` recreates every group and array of ``src`` in
``dst`` (in the final v3 layout, Zarr v2 or the draft-2022 one) with the same data,
attributes and fill values.  Two ways, chosen per call:

- **Encoded copy** (the default): the destination keeps the source's chunk grid and codecs,
  and chunks are streamed one at a time.  Where the destination's codec chain is the same as
  the source's (always the case between the two layouts: the draft's "F" memory layout is a
  reversing ``transpose`` in v3, its byte order the ``bytes`` codec's) the encoded bytes are
  copied as they are, otherwise each chunk is decoded and re-encoded.
- **Re-encoding copy**, when ``chunks``, ``shards`` or ``compressors`` is given: each array is
  created with the new grid and codecs (its filters and serializer kept) and filled
  destination chunk by destination chunk (shard by shard for a sharded destination), reading
  from the source only the region that chunk covers.  Memory stays bounded by about one
  destination chunk per worker thread, whatever the array's size; regions are spread over
  zarr3c's thread pool (:func:`zarr3c.set_num_threads`).

>>> import zarr3c
>>> src = zarr3c.MemoryStore()
>>> a = zarr3c.create_array(src, "x", shape=(64, 64), dtype="uint8", chunks=(16, 16))
>>> a[:] = 1
>>> out = zarr3c.copy(src, zarr3c.MemoryStore(), chunks=(32, 32),
...                   compressors={"name": "zstd", "configuration": {"level": 5}})
>>> out["x"].chunks, int(out["x"][...].sum())
((32, 32), 4096)
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from zarr3c.api import _format_for_create
from zarr3c.array import Array, create_array
from zarr3c.array.geometry import grid_shape
from zarr3c.chunk_grids.regular import RegularChunkGrid
from zarr3c.codecs.base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarr3c.codecs.bytes import BytesCodec
from zarr3c.codecs.sharding import ShardingCodec
from zarr3c.concurrency import get_num_threads, map_unordered
from zarr3c.errors import (
    ContainsArrayError,
    ContainsGroupError,
    InvalidArgumentError,
    NodeExistsError,
    ZarrError,
)
from zarr3c.group import Group, create_group, open_node
from zarr3c.metadata.data_types import DataType
from zarr3c.metadata.formats import detect_format
from zarr3c.metadata.v2 import V2ArrayMetadata, V2DataType
from zarr3c.metadata.v2_to_v3 import V3Form, v3_form
from zarr3c.node import UnreadableNode
from zarr3c.stores import (
    FsspecStore,
    LocalStore,
    MemoryStore,
    Store,
    describe_store,
    make_store,
)

__all__ = ["KEEP", "ProgressCallback", "copy"]

#: Default of :func:`copy`'s ``chunks``, ``shards`` and ``compressors``: as in the source.
KEEP = "keep"

#: ``progress(array_path, chunks_done, chunks_total)``, called from the copying thread.
ProgressCallback = Callable[[str, int, int], None]


class _Progress:
    """Counts finished chunks of one array and reports them to the callback (reporting
    ``(path, 0, total)`` at once)."""

    def __init__(self, callback: ProgressCallback | None, path: str, total: int) -> None:
        self._callback = callback
        self._path = path
        self._total = total
        self._done = 0
        self._lock = threading.Lock()
        if callback is not None:
            callback(path, 0, total)

    def step(self, n: int = 1) -> None:
        """Count ``n`` more chunks done and report the total so far."""
        if self._callback is None:
            return
        with self._lock:
            self._done += n
            self._callback(self._path, self._done, self._total)


def _grid_chunks(src: Array) -> Any:
    """The source's chunk grid as ``create_array(chunks=...)`` takes it: the grid's own chunks
    (shards, for a sharded array; every edge, overflowing ones included, for a rectilinear
    grid), so that stored chunks fit the copy's grid byte for byte."""
    grid = src.metadata.chunk_grid
    if isinstance(grid, RegularChunkGrid):
        return tuple(grid.chunk_shape)
    return [list(edges) for edges in grid.edges(src.shape)]


def _v2_fixed_form(md: Any) -> V3Form | None:
    """The v3 form of a Zarr v2 array of fixed-length strings, bytes, times or structs
    (:mod:`zarr3c.metadata.v2_to_v3`); None for every other array."""
    if not isinstance(md, V2ArrayMetadata) or not isinstance(md.data_type, V2DataType):
        return None
    return v3_form(md)


def _to_v3_form(src: Array, fmt: Any) -> V3Form | None:
    """The v3 form of ``src`` where it is such a Zarr v2 array copied to the v3 layout."""
    return _v2_fixed_form(src.metadata) if fmt.zarr_format == 3 else None


def _with_serializer(codecs: Iterable[Any], form: V3Form) -> list[Any]:
    """``codecs`` (codec objects) with their ``bytes`` codec the one of ``form``'s chain."""
    spec = next(c for c in form.codecs if c["name"] == "bytes")
    serializer = BytesCodec.from_config(spec.get("configuration"), path="codecs")
    return [serializer if isinstance(c, BytesCodec) else c for c in codecs]


class _CopyType(NamedTuple):
    """The data type and fill value of an array's copy in some layout, and the v3 form
    (:mod:`zarr3c.metadata.v2_to_v3`) whose serializer its codecs take, if any."""

    data_type: DataType
    fill_value: Any
    form: V3Form | None

    def codecs(self, codecs: Iterable[Any]) -> list[Any]:
        """``codecs`` (the source's codec objects) as the copy takes them: with the
        ``bytes`` codec of the v3 form, which keeps the stored byte order."""
        return list(codecs) if self.form is None else _with_serializer(codecs, self.form)


def _copy_type(src: Array, zarr_format: Any) -> _CopyType:
    """The data type and fill value of ``src`` copied to the layout ``zarr_format``: a
    Zarr v2 array of strings, bytes, times or structs copied to v3 takes the extension type
    zarr-python 3.4 creates for its numpy dtype; every other array its own data type (which
    each layout writes in its own way: a v3 ``fixed_length_utf32`` is a v2 ``<U``).

    Parameters
    ----------
    src : Array
        The array copied.
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"}
        The layout of the copy.

    Returns
    -------
    _CopyType

    Raises
    ------
    MetadataError
        If ``src`` is a Zarr v2 structured array v3 has no form for (subarray fields).

    Examples
    --------
    >>> import zarr3c
    >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="S3", fill_value=b"ab",
    ...                         zarr_format=2)
    >>> copied = _copy_type(a, 3)
    >>> copied.data_type.name, copied.fill_value
    ('null_terminated_bytes', np.bytes_(b'ab'))
    """
    md = src.metadata
    form = _v2_fixed_form(md) if zarr_format == 3 else None
    if form is None:
        return _CopyType(md.data_type, src.fill_value, None)
    return _CopyType(form.data_type, form.data_type.fill_array(form.fill_value)[()], form)


def _stored_chain(a: Array) -> list[dict[str, Any]] | None:
    """The codec chain that makes ``a``'s stored chunks from native-endian elements (None
    where none does: a Zarr v2 struct stored in both byte orders).

    A Zarr v2 array of strings or structs holds its elements as stored, so its own chain
    never swaps them; as a v3 array of its elements would have it, its ``bytes`` codec has
    the stored byte order.
    """
    try:
        form = _v2_fixed_form(a.metadata)
    except ZarrError:  # (a type v3 has no form for: compared by its own chain)
        return None
    if form is None:
        return [c.to_dict() for c in a.codecs]
    if not form.chunks_as_stored:
        return None
    return [c.to_dict() for c in _with_serializer(a.codecs, form)]


def _base_spec(src: Array, fmt: Any) -> dict[str, Any]:
    """The ``create_array`` arguments every copy of ``src`` shares."""
    md = src.metadata
    # The chunk key encoding is kept between two Zarr v3 or two Zarr v2 hierarchies; across
    # layouts each takes its own default.
    v3_like = fmt.zarr_format == src.zarr_format and fmt.zarr_format in (2, 3)
    copied = _copy_type(src, fmt.zarr_format)
    fill_value = copied.fill_value
    if v3_like and fmt.zarr_format == 2 and getattr(md, "fill_value_json", 0) is None:
        # A Zarr v2 array without a fill value keeps none (xarray reads any other value
        # as a _FillValue that masks); v3 has no null: it gets the type's default.
        fill_value = None
    return dict(
        shape=md.shape,
        dtype=copied.data_type,
        fill_value=fill_value,
        attributes=dict(md.attributes),
        dimension_names=md.dimension_names,
        chunk_key_encoding=md.chunk_key_encoding if v3_like else None,
    )


def _encoded_spec(src: Array, fmt: Any) -> dict[str, Any]:
    """``create_array`` arguments for a copy with the source's grid and codecs."""
    form = _to_v3_form(src, fmt)
    return dict(
        _base_spec(src, fmt),
        chunks=_grid_chunks(src),
        codecs=list(src.codecs) if form is None else _with_serializer(src.codecs, form),
        write_empty_chunks=True,
    )


def _reencoded_spec(src: Array, fmt: Any, chunks: Any, shards: Any,
                    compressors: Any) -> dict[str, Any]:
    """``create_array`` arguments for a re-encoding copy: new grid and compressors, the
    source's filters and serializer."""
    filters, serializer, old_compressors = _split_codecs(src)
    form = _to_v3_form(src, fmt)
    if form is not None:
        (serializer,) = _with_serializer([serializer], form)
    _check_rank(src, "chunks", chunks)
    _check_rank(src, "shards", shards)
    sharded = src.shards is not None
    if _is_keep(shards):
        # The grid as stored: a rectilinear grid keeps its edges, overflowing ones included.
        shards = _grid_chunks(src) if sharded else None
    if _is_keep(chunks):
        # The inner chunks of a sharded source; the stored grid of an unsharded one kept
        # unsharded (a new shard shape needs regular inner chunks).
        chunks = src.chunks if sharded or shards is not None else _grid_chunks(src)
    return dict(
        _base_spec(src, fmt),
        chunks=chunks,
        shards=shards,
        filters=filters,
        serializer=serializer,
        compressors=old_compressors if _is_keep(compressors) else compressors,
    )


def _copy_chunks_encoded(src: Array, dst: Array, progress: ProgressCallback | None) -> None:
    """Copy every stored chunk of ``src`` to ``dst`` (same grid), as bytes if the codecs
    match."""
    chain = _stored_chain(src)
    same_encoding = (
        (chain is not None and chain == _stored_chain(dst))
        # (the same elements in memory through the same chain: a Zarr v2 struct stored in
        # both byte orders, copied to Zarr v2)
        or (src.dtype == dst.dtype
            and [c.to_dict() for c in dst.codecs] == [c.to_dict() for c in src.codecs])
    )
    stored = list(src._stored_chunks())
    dst_store = dst.store

    def copy_chunk(item: tuple[str, tuple[int, ...]]) -> None:
        key, coords = item
        if same_encoding:
            data = src.store.get(key)
            if data is not None:
                dst_store.set(dst.chunk_key(coords), data)
        else:
            region = _region(dst, coords)
            dst[region] = src[region]

    _run_batched(copy_chunk, stored, _Progress(progress, dst.path, len(stored)))


def _run_batched(fn: Callable[[Any], None], items: Iterable[Any], counter: _Progress) -> int:
    """Apply ``fn`` to every item on the thread pool, a few items per thread at a time.

    ``map_unordered`` waits for every task it was given, even on an exception or Ctrl-C:
    small batches make an interrupted copy stop after the running batch, keep memory bounded
    (``items`` is consumed lazily) and report progress steadily, from the calling thread.
    Returns the number of items.
    """
    batch = 4 * get_num_threads()
    it = iter(items)
    done = 0
    while items_now := list(itertools.islice(it, batch)):
        map_unordered(fn, items_now)
        counter.step(len(items_now))
        done += len(items_now)
    return done


def _split_codecs(src: Array) -> tuple[list[Any], Any, list[Any]]:
    """The source's filters, serializer and compressors; a sharded source's inner ones
    (refused, naming the array, when codecs outside its sharding codec would be lost)."""
    codecs: Iterable[Any] = src.codecs
    serializers = [c for c in codecs if isinstance(c, ArrayBytesCodec)]
    if len(serializers) == 1 and isinstance(serializers[0], ShardingCodec):
        outer = [c.to_dict()["name"] for c in codecs if c is not serializers[0]]
        if outer:
            # The new chain is built from the inner codecs: these would be silently lost.
            raise InvalidArgumentError(
                f"cannot re-encode array {src.name!r}: codecs {outer} around its "
                "sharding_indexed codec would be dropped; copy it without chunks, shards "
                "and compressors to keep its codecs as they are"
            )
        codecs = serializers[0].codecs
    filters = [c for c in codecs if isinstance(c, ArrayArrayCodec)]
    (serializer,) = (c for c in codecs if isinstance(c, ArrayBytesCodec))
    compressors = [c for c in codecs if isinstance(c, BytesBytesCodec)]
    return filters, serializer, compressors


def _region(a: Array, coords: tuple[int, ...]) -> tuple[slice, ...]:
    """The region of ``a`` covered by the chunk (the shard, if sharded) at ``coords``."""
    region = []
    for d, c, n in zip(a._dims, coords, a.shape, strict=True):
        start = d.chunk_offset(c)
        region.append(slice(start, min(start + d.chunk_length(c), n)))
    return tuple(region)


def _regions(a: Array) -> Iterator[tuple[slice, ...]]:
    """The region of every chunk of ``a``'s grid (of every shard, if sharded), C order."""
    for coords in itertools.product(*(range(d.nchunks) for d in a._dims)):
        yield _region(a, coords)


def _copy_chunks_reencoded(src: Array, dst: Array, progress: ProgressCallback | None) -> None:
    """Fill ``dst`` from ``src`` (same shape) destination chunk (shard) by chunk, in
    parallel."""
    def copy_region(region: tuple[slice, ...]) -> None:
        # One destination chunk (shard): read what it covers, write it whole (never read back).
        dst[region] = src[region]

    nregions = math.prod(grid_shape(dst))
    counter = _Progress(progress, dst.path, nregions)
    # Where src stores nothing it reads its fill value; dst reads the same there unasked
    # only if its fill value is the same (from_array may be given another).
    regions = _regions_with_data(dst, src) if _same_fill(src, dst) else _regions(dst)
    written = _run_batched(copy_region, regions, counter)
    counter.step(nregions - written)  # the skipped regions: done, as fill values


def _same_fill(src: Array, dst: Array) -> bool:
    """Whether ``dst`` reads what ``src`` reads where neither stores a chunk: the same data
    type and fill value, bit for bit (``-0.0`` is not ``0.0``; variable-length strings and
    objects by value)."""
    try:
        a = np.asarray(src._fill_scalar, dtype=src.dtype)
        b = np.asarray(dst._fill_scalar, dtype=dst.dtype)
    except (TypeError, ValueError):
        return False
    if a.dtype != b.dtype:
        return False
    if a.dtype.hasobject or a.dtype.kind == "T":  # (their bytes are pointers)
        return bool(a.item() == b.item())
    return a.tobytes() == b.tobytes()


def _regions_with_data(dst: Array, src: Array) -> Iterator[tuple[slice, ...]]:
    """The regions of :func:`_regions` that intersect a stored chunk of ``src`` (listed
    once): the others hold only the fill value, which the new ``dst`` already reads, so
    reading them would cost a request per missing source chunk on a remote store."""
    stored = {coords for _, coords in src._stored_chunks()}
    for region in _regions(dst):
        ranges = []
        for d, sl in zip(src._dims, region, strict=True):
            first, last = d.locate(np.array([sl.start, sl.stop - 1], dtype=np.int64))[0]
            ranges.append(range(int(first), int(last) + 1))
        if any(coords in stored for coords in itertools.product(*ranges)):
            yield region


def _location(store: Store) -> tuple[Hashable, str, str]:
    """Where ``store``'s data lives: a namespace, a ``/``-separated root in it (``""``: the
    whole namespace) and a description for messages.  Two stores in the same namespace whose
    roots nest hold overlapping data."""
    if isinstance(store, LocalStore):
        root = os.path.realpath(store.root)
        return "local", root.replace(os.sep, "/"), root
    if isinstance(store, FsspecStore):
        protocols = store.fs.protocol
        protocols = {protocols} if isinstance(protocols, str) else set(protocols)
        if protocols & {"file", "local"}:
            root = os.path.realpath(store.path)
            return "local", root.replace(os.sep, "/"), root
        # The innermost target of a chained URL ("simplecache::s3://b/x" is "s3://b/x").
        url = store.url.rsplit("::", 1)[-1].rstrip("/")
        return "url", url, store.url
    # Stores that cannot say where their data is: the same data is the same lock_id.
    return ("lock_id", store.lock_id), "", repr(store)


def _nests(inner: str, outer: str) -> bool:
    """Whether the ``/``-separated path ``inner`` is ``outer`` or below it."""
    return inner == outer or outer == "" or inner.startswith(outer.rstrip("/") + "/")


def _refuse_overlap(src: Store, dst: Store) -> None:
    """Refuse a copy whose destination is the source, or contains it or is inside it:
    clearing or writing the destination would destroy the source before it is read."""
    if src is dst:
        raise InvalidArgumentError(
            f"cannot copy {src!r} onto itself: the destination is the source"
        )
    src_ns, src_root, src_text = _location(src)
    dst_ns, dst_root, dst_text = _location(dst)
    if src_ns != dst_ns:
        return
    if src_root == dst_root:
        why = "the destination is the source"
    elif _nests(src_root, dst_root):
        why = "the source is inside the destination"
    elif _nests(dst_root, src_root):
        why = "the destination is inside the source"
    else:
        return
    raise InvalidArgumentError(f"cannot copy {src_text} to {dst_text}: {why}")


def _refuse_node_overlap(src: Array, store: Store, path: str) -> None:
    """Refuse to overwrite the node at ``path`` in ``store`` with ``src`` when the overwrite,
    which deletes everything below that node before the copy reads ``src``, would delete
    part of ``src``: the node is ``src`` or holds it, or lies inside ``src`` where ``src``
    stores chunks (``"c"`` below a v3 array).  zarr-python raises ValueError too."""
    src_ns, src_root, src_text = _location(src.store)
    dst_ns, dst_root, dst_text = _location(store)
    if src_ns != dst_ns:
        return
    src_at = "/".join(p for p in (src_root, src.path) if p)
    dst_at = "/".join(p for p in (dst_root, path) if p)
    if not _nests(src_at, dst_at):
        if not _nests(dst_at, src_at):
            return
        # The destination lies strictly inside the source: only the keys below it go, which
        # matters where some are the source's chunks (rare: listing all of them is fine).
        inside = dst_at[len(src_at) + 1:] if src_at else dst_at
        below = "/".join(p for p in (src.path, inside) if p) + "/"
        if not any(key.startswith(below) for key, _ in src._stored_chunks()):
            return
    where = "" if src_text == dst_text else f" in {src_text}"
    raise InvalidArgumentError(
        f"cannot overwrite {path!r} in {dst_text} with the array at {src.path!r}{where}: "
        "the paths overlap, so the overwrite would delete the source; write to another "
        "path, or pass data=array[...]"
    )


def _refuse_non_empty(store: Store) -> None:
    """Refuse to write a copy into ``store`` when it holds anything: replacing what is there
    needs ``overwrite`` (or ``clear``), as in the CLI."""
    if next(iter(store.list()), None) is None:
        return
    error: type[NodeExistsError] = NodeExistsError
    what = "the destination is not empty"
    try:
        root = detect_format(store).read_node(store, "")
    except ZarrError:  # not a hierarchy zarr3c reads: still not empty
        root = None
    if root is not None:
        error = ContainsArrayError if root.node_type == "array" else ContainsGroupError
        what = f"the destination holds {'an array' if root.node_type == 'array' else 'a group'}"
    raise error(f"{what} in store {describe_store(store)}, at path ''; pass overwrite=True to "
                "replace its nodes (or clear=True to erase it first)")


def _naming(exc: ZarrError, what: str) -> ZarrError:
    """``exc`` again (same class) with ``what`` in front of its message."""
    try:
        return type(exc)(f"{what}: {exc}")
    except TypeError:  # a subclass with another signature
        return InvalidArgumentError(f"{what}: {exc}")


def _is_keep(value: Any) -> bool:
    """Whether ``value`` is :data:`KEEP` (compared as a string: it may be an array)."""
    return isinstance(value, str) and value == KEEP


def _check_rank(src: Array, name: str, value: Any) -> None:
    """Refuse a chunk or shard shape of the wrong rank, naming the array."""
    if isinstance(value, tuple | list) and len(value) != src.ndim:
        raise InvalidArgumentError(
            f"cannot rechunk array {src.name!r} of shape {src.shape}: {name} {tuple(value)} "
            f"have {len(value)} dimensions, the array has {src.ndim}"
        )


def copy(
    src: Any,
    dst: Any,
    zarr_format: Any = 3,
    *,
    chunks: Any = KEEP,
    shards: Any = KEEP,
    compressors: Any = KEEP,
    progress: ProgressCallback | None = None,
    clear: bool = False,
    overwrite: bool = False,
) -> Group | Array:
    """Copy the hierarchy in ``src`` to ``dst`` in the layout ``zarr_format``.

    Every group and array is recreated with the same data, attributes, fill values,
    dimension names and (between two Zarr v3 layouts) chunk key encoding.  A ``dst`` that
    holds anything is refused unless ``overwrite`` or ``clear`` is given (as the CLI refuses
    it without ``--overwrite``).  With ``overwrite``, nodes already in ``dst`` at the same
    paths are replaced (a hierarchy whose root is a group replaces everything below the root
    of ``dst``; a root array, only that array).  Every array's new
    metadata is checked in memory before anything is written, so options that do not fit
    some array fail with ``dst`` untouched.

    Parameters
    ----------
    src, dst : Store, str, os.PathLike, dict or URL
        Store-likes, as for :func:`zarr3c.create_array`: the source (opened read-only) and
        the destination.
    zarr_format : {3, 2, "draft-2022", "zarr2-v3"}, default 3
        The layout of the copy: 3 is the final Zarr v3 layout, 2 Zarr v2
        (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html), ``"draft-2022"`` the
        2022 core spec draft's (see :func:`zarr3c.create_array`).  Zarr v2 object arrays
        of strings and bytes (``vlen-utf8``, ``vlen-bytes``) become v3 ``string`` and
        ``variable_length_bytes`` arrays and back, their chunks copied as they are.  Zarr v2
        fixed-length strings and bytes, raw bytes, structured types and times (``<U``,
        ``|S``, ``|V``, field lists, ``M8``/``m8``) become the v3 extension types
        zarr-python 3.4 creates for the same numpy dtype (``fixed_length_utf32``,
        ``null_terminated_bytes``, ``raw_bytes``, ``struct``, ``numpy.datetime64``,
        ``numpy.timedelta64``) and back, with the same fill value; the ``bytes`` codec
        keeps the stored byte order, so the chunks are copied as they are (a struct
        stored in both byte orders, and v3 strings or structs stored in the non-native
        order copied to v2, are re-encoded).  A structured type v3 cannot hold (subarray
        fields) raises MetadataError; v2 object arrays of arrays or JSON values
        (``vlen-array``, ``json2``) are copied to no layout (UnsupportedFeatureError).
    chunks : "keep", "auto", int or tuple of int, default "keep"
        ``"keep"``: every array keeps its chunk grid.  Otherwise the new chunk shape of
        every array, as ``create_array`` takes it (a tuple of ints, an int for every
        dimension, ``"auto"``); for a sharded destination, the inner chunk shape.
    shards : "keep", tuple of int or None, default "keep"
        ``"keep"``: sharded arrays stay sharded with the same shard shape.  None: no
        sharding; a tuple of ints: the new shard shape.
    compressors : "keep", "auto", codec, list of codecs or None, default "keep"
        ``"keep"``: the source's bytes -> bytes codecs.  Otherwise as ``create_array`` takes
        them: a codec dict or a list of them, ``"auto"``, or None for no compression.
        Filters and the serializer are always kept.
    progress : callable or None, default None
        Called as ``progress(array_path, chunks_done, chunks_total)`` as each array is
        copied (from the calling thread or a worker; calls for one array are serialised).
    clear : bool, default False
        Erase everything in ``dst`` before writing (as mode ``"w"`` does), once the options
        have been checked against every array; ``dst`` may then hold a hierarchy in another
        layout than ``zarr_format``.
    overwrite : bool, default False
        Write into a ``dst`` that is not empty, replacing the nodes at the paths of the
        copy.  With False (and ``clear`` False) a non-empty ``dst`` raises
        NodeExistsError before anything is written.

    Returns
    -------
    Group or Array
        The root node of the copy.

    Notes
    -----
    With ``chunks``, ``shards`` and ``compressors`` all ``"keep"``, stored chunks are copied
    (their encoded bytes as they are where the codecs match).  Otherwise every array is
    re-encoded destination chunk by destination chunk, in parallel; memory holds about one
    destination chunk (one shard, if sharded) per worker thread.

    Raises
    ------
    InvalidArgumentError
        If ``chunks`` does not have as many dimensions as an array (the message names it),
        if ``dst`` is ``src``, contains it or is inside it (checked before anything is
        written), or a sharded array with codecs around its ``sharding_indexed`` codec is
        re-encoded.
    NodeNotFoundError
        If ``src`` holds no hierarchy.
    NodeExistsError
        If ``dst`` is not empty and neither ``overwrite`` nor ``clear`` is given
        (:class:`~zarr3c.errors.ContainsGroupError` or
        :class:`~zarr3c.errors.ContainsArrayError` where it holds a group or an array at its
        root); the message names the destination.
    MetadataError, UnsupportedFeatureError
        If an option does not apply to some array (the message names the array).
    UnsupportedFormatError
        If ``dst`` holds a hierarchy in another layout and ``clear`` is False.
    ChunkDecodeError
        If a source chunk that must be decoded is corrupt.
    StoreError
        If reading ``src`` or writing ``dst`` fails.

    See Also
    --------
    zarr3c.create_array : What ``chunks``, ``shards`` and ``compressors`` mean.

    Examples
    --------
    >>> import zarr3c
    >>> src = zarr3c.MemoryStore()
    >>> g = zarr3c.create_group(src, attributes={"title": "demo"})
    >>> a = g.create_array("x", shape=(8, 8), dtype="int16", chunks=(2, 2))
    >>> a[:] = 3
    >>> seen = []
    >>> out = zarr3c.copy(src, zarr3c.MemoryStore(), shards=(4, 4),
    ...                   progress=lambda path, done, total: seen.append((done, total)))
    >>> out.attrs["title"], out["x"].chunks, out["x"].shards, seen[-1]
    ('demo', (2, 2), (4, 4), (4, 4))

    Into the 2022 draft layout, chunks copied as they are:

    >>> draft = zarr3c.copy(src, zarr3c.MemoryStore(), zarr_format="draft-2022")
    >>> draft.zarr_format, int(draft["x"][0, 0])
    ('draft-2022', 3)
    """
    return _copy_counted(src, dst, zarr_format, chunks=chunks, shards=shards,
                         compressors=compressors, progress=progress, clear=clear,
                         overwrite=overwrite)[0]


def _copy_counted(
    src: Any,
    dst: Any,
    zarr_format: Any = 3,
    *,
    chunks: Any = KEEP,
    shards: Any = KEEP,
    compressors: Any = KEEP,
    progress: ProgressCallback | None = None,
    clear: bool = False,
    overwrite: bool = False,
) -> tuple[Group | Array, int, int]:
    """:func:`copy`, also returning how many arrays and groups it copied (for the CLI's
    summary, without listing the destination again)."""
    reencode = not (_is_keep(chunks) and _is_keep(shards) and _is_keep(compressors))
    src_store = make_store(src, read_only=True)
    dst_store = make_store(dst)
    # The stores as given: a read-only twin of a store without a location is another object.
    _refuse_overlap(src if isinstance(src, Store) else src_store,
                    dst if isinstance(dst, Store) else dst_store)
    if not (overwrite or clear):
        _refuse_non_empty(dst_store)
    src_fmt = detect_format(src_store)
    # A destination about to be cleared takes the layout asked for, whatever it holds now.
    fmt = _format_for_create(MemoryStore() if clear else dst_store, zarr_format)
    root = open_node(src_store, "", read_only=True, fmt=src_fmt)
    nodes: list[tuple[str, Array | Group | UnreadableNode]] = [("", root)]
    if isinstance(root, Group):
        nodes += root.members(max_depth=None)
    plan: list[tuple[str, Array | Group, dict[str, Any]]] = []
    for path, node in nodes:
        if isinstance(node, UnreadableNode):  # (nothing copied: nothing written yet)
            raise node.error
        if isinstance(node, Array):
            try:
                spec = (_reencoded_spec(node, fmt, chunks, shards, compressors) if reencode
                        else _encoded_spec(node, fmt))
            except ZarrError as exc:
                raise _naming(exc, f"cannot copy {node.kind} {node.name!r}") from exc
        else:
            spec = {"attributes": node.attrs.asdict()}
        plan.append((path, node, spec))

    # A dry run of the metadata in memory first: options that do not apply to some array (a
    # chunk shape, a codec the layout has no form for) fail before anything is written.
    scratch = MemoryStore()
    scratch_fmt = _format_for_create(scratch, zarr_format)
    for path, node, spec in plan:
        make = create_array if isinstance(node, Array) else create_group
        try:
            make(scratch, path, fmt=scratch_fmt, overwrite=True, **spec)
        except ZarrError as exc:
            raise _naming(exc, f"cannot copy {node.kind} {node.name!r}") from exc

    if clear:
        dst_store.erase_prefix("")
    out: Array | Group | None = None
    for path, node, spec in plan:
        new: Array | Group
        if isinstance(node, Array):
            new = create_array(dst_store, path, fmt=fmt, overwrite=True, **spec)
            if reencode:
                _copy_chunks_reencoded(node, new, progress)
            else:
                _copy_chunks_encoded(node, new, progress)
        else:
            new = create_group(dst_store, path, fmt=fmt, overwrite=True, **spec)
        out = new if out is None else out
    assert out is not None
    n_arrays = sum(1 for _, node, _ in plan if isinstance(node, Array))
    return out, n_arrays, len(plan) - n_arrays
