"""The read paths of :class:`~zarr3c.array.Array`: which selection takes which path, and the
nouns they share.

Map of the read paths
---------------------

``a[key]`` and ``a.get_basic_selection(key)`` on a regular grid first try to parse the key
as a *box* (the ``basic_box`` kernel); anything else, and every key on a rectilinear grid,
goes to the general read::

    a[key]  --basic_box-->  box?
      unsharded  boxes.read_chunk_box          one chunk, <= 8 raw chunks, or the starts
                                               of <= 8 compressed chunks
                   declines -> many.read_boxes([box])
      sharded    shard_boxes.read_shard_box    one shard, <= 8 inner chunks
                   declines -> shard_boxes.read_box_by_shards   2..8 shards, a part each
                   declines -> many.read_boxes([box])
      not a box  general.read_selection        the general read (native: outer products)
    a.oindex[...], get_orthogonal_selection    general.read_selection
    a.vindex[...], a[int arrays], get_coordinate_selection, get_mask_selection
                                               points.read_coordinates
    get_block_selection                        as get_basic_selection
    get_many(keys)                             many.get_many: the boxes together by
                                               many.read_boxes; the other keys (and the boxes
                                               sharing a chunk with them) together by
                                               general.read_selections

Where the chain is native (``bytes``, ``crc32c``, ``zstd``, ``blosc``, ``gzip``:
:mod:`zarr3c.codecs.native`) and the store has files or values in memory, the short paths
read a box in one chunk (one shard) with one kernel call (``native.read_box_natively``,
``native.read_shard_box_natively``: index, read, decode and copy with the GIL given up once,
so that reads from many user threads at once queue once a read for it); ``many.read_boxes``
and ``points.read_coordinates`` hand their
plan to :mod:`.native`, and so does ``general.read_selections`` (orthogonal selections, as
per-axis offsets by chunk), which executes it in one call of the native chunk pipeline
(``zarr3c._kernels.chunks``) without the GIL; the chunks it could not read come back to the
Python paths named here, which report them.  From a store without files or values in memory
(object stores, fsspec), :mod:`.native` fetches shards whole where that takes fewer round
trips (small shards, or most of a shard read), and the sharded short paths decline such
boxes.

A *short path* declines (returns None, having written nothing the caller keeps) rather
than handle what it was not built for: more chunks or inner chunks than its limit (the
``*_MAX`` constants of :mod:`.plan`), a raw piece larger than half its chunk that the store
cannot read in one call, a shard or inner chunk that is not as expected (a damaged index, a
wrong size).  The path it falls back to reads the box in full and reports what is wrong,
so errors always name the key of the chunk or shard at fault.

Planning and executing
----------------------

:mod:`.plan` decides which chunks a read touches, which pieces of them, which bytes and
into which part of the output; it does no I/O.  The other modules execute plans: fetch
(:mod:`.raw` for byte ranges of raw chunks, :mod:`.chunk` for whole chunks, the store's
read hooks ``read_box_into``, ``read_shard_parts``, ``read_ranges_into``,
``read_value_into``, ``read_elements_into``), decode (the codec pipeline, the shard reader
``ShardingCodec.read_inner_chunks_into``) and copy (:mod:`.place`, the copy kernels).  The
short paths (:mod:`.boxes`, :mod:`.shard_boxes`) plan and execute in one go, kept as they
are: each is one hot read.

Modules
-------

- :mod:`.plan`: the plan types and the functions that build them;
- :mod:`.general`: the general read (any orthogonal selection); ``read_general`` is the
  oracle the short paths are tested against;
- :mod:`.boxes`: the small-box short path of unsharded arrays;
- :mod:`.shard_boxes`: the small-box short path of sharded arrays;
- :mod:`.many`: the many-boxes path (``get_many``, and boxes a short path declines);
- :mod:`.points`: coordinate (``vindex``) reads, and the partial reads of a shard for
  points and outer products;
- :mod:`.native`: the many-boxes and coordinate plans handed to the native chunk pipeline;
- :mod:`.raw`: byte-range I/O of raw chunks (the size probe, batches of spans);
- :mod:`.chunk`: one whole chunk fetched and decoded, through scratch memory;
- :mod:`.place`: the copy and fill calls that place planned pieces in the output.

Glossary
--------

array facts
    What the short paths need of a regular grid, computed once per shape:
    :class:`~.plan.BoxGrid` (the grid's chunks: their shape, size, strides, numbering) and,
    for a sharded array, :class:`~.plan.InnerBox` (its *inner box*: the inner chunks' shape,
    size, strides, numbering in a shard, whether they are raw, the index layout).
box
    A step-1 selection ``[start, stop)`` per axis, parsed from a basic key of ints and
    step-1 slices by the ``basic_box`` kernel, with numpy's result shape for the key and
    whether it is a scalar (:data:`~.plan.Box`).  Most small reads are boxes.
chunk, shard, inner chunk
    The grid's cells are chunks.  In a sharded array they are shards, each holding a
    regular grid of inner chunks and an *index*: per inner chunk its ``(offset, nbytes)``
    in the shard (the sharding codec's, :mod:`zarr3c.codecs.sharding`).
raw chunk
    A chunk (or inner chunk) stored as raw elements: its codec chain is ``bytes`` alone in
    native byte order, so its stored bytes are the decoded chunk's in C order.  Read by
    byte range, straight into staging or the output; never decoded.
piece
    What one read takes from one chunk: which elements (first element and counts per axis,
    or its byte offset in the chunk) and where they land in the output (byte offset and
    strides).  :class:`~.plan.BoxPiece` for one box, :class:`~.plan.Pieces` for many boxes
    grouped by chunk, :class:`~.plan.InnerPiece` for the general read of a shard.
part
    A piece of a box in one inner chunk of one shard, as the sharded short path plans it
    (:class:`~.plan.InnerParts`); and a box's share of one shard when it spans a few.
span
    The byte range ``[lo, hi)`` of a raw chunk covering every piece a read wants of it,
    fetched instead of each piece's range when that is no longer
    (:class:`~.plan.RawSpan`, :func:`~.plan.piece_ranges`).
size probe
    The last byte of a raw chunk and the one after, read with its ranges: a chunk stored
    with the wrong size is then an error naming its key, as a decode would be.
staging
    A buffer that fetched bytes land in before the pieces are copied out of it (for raw
    ranges; where a box is one whole raw chunk, the output itself).  Batches keep the
    staging held at once bounded (:data:`~.plan.RAW_BATCH_BYTES`, the sharding codec's
    ``MAX_REQUEST_BYTES``).
scratch
    Per-thread memory reused from read to read (``zarr3c._buffers.thread_scratch(nbytes,
    slot)``), valid until the thread's next use of the slot: ``"stored"`` (stored bytes
    read, or a staging buffer), ``"decoded"`` (a decoded chunk), ``"inner"`` (a decoded
    inner chunk), ``"index"`` (a shard's index).  For data copied out at once: no fresh
    memory, and no page faults, per chunk.
short path
    A path for one box touching a few chunks or inner chunks, planned in one kernel call
    with no per-read objects beyond the output; it declines what it was not built for.
native pipeline
    A read plan's chunks read, verified, decoded and copied out in one kernel call on native
    threads (``zarr3c._kernels.chunks`` on ``zarr3c._kernels.pool``), the GIL released
    throughout; ``ZARR3C_NATIVE=0`` turns it off.
task, member, target
    The general read's plan: a task (``ChunkTask``, from ``plan_chunks``) is one
    selection's elements in one chunk; a member (:class:`~.plan.Member`) a task with the
    number of its output; a target (:class:`~.plan.Target`) an output's bytes and strides.
fill
    The fill value's bytes, written where nothing is stored (a chunk, a shard or an inner
    chunk not stored).
"""
