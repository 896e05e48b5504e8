"""The ``sharding_indexed`` codec: many inner chunks stored in one shard, found through an index.

Zarr v3 ``sharding_indexed`` codec
(https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html, as
zarr-python 3, tensorstore and zarrs implement it).  It is an array -> bytes codec: the chunk
of the array's chunk grid is the *shard*; the shard is cut into inner chunks of
``chunk_shape`` (which must divide the shard shape), each inner chunk is encoded with the
inner ``codecs`` chain, and the encoded inner chunks are concatenated with an *index* placed
at the ``start`` or ``end`` of the shard (default ``end``)::

    {"name": "sharding_indexed",
     "configuration": {
        "chunk_shape": [32, 32],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": "end"}}

The package, one concern per module:

:mod:`~zarr3c.codecs.sharding.index`
    The shard index format and its checks: ``(offset, nbytes)`` ``uint64`` entries,
    :data:`MISSING` for an inner chunk not stored, where the index sits, how it is encoded,
    decoded and checked.  Everything that knows the layout, nothing else.
:mod:`~zarr3c.codecs.sharding.codec`
    :class:`ShardingCodec`: configuration, validation, evolve, the index and whole-shard
    encode/decode; :func:`partial_read_codec`, :func:`sharding_codec_dict`.  It inherits its
    partial-read and partial-write methods from the two modules below.
:mod:`~zarr3c.codecs.sharding.read`
    Partial reads (``ShardReads``): the index, then only the inner chunks a selection
    touches, coalesced into bounded batches of requests (:class:`StoreRanges`,
    :class:`ByteRangeGroup`, :func:`pack_runs`, :func:`batch_decoder`); regions projected
    onto inner chunks.
:mod:`~zarr3c.codecs.sharding.write`
    Writing (``ShardWrites``): shards from a strided region (parts never joined, kept in a
    :class:`PartArena`) and partial updates that keep the untouched inner chunks' bytes
    verbatim.
``_parallel``, ``_inner``
    What those share: when a shard's work goes to the thread pool; decoding one inner chunk
    (errors naming it and the shard), filling a missing one.

Writing stores the inner chunks in C order of the inner grid and omits those whose bits all
equal the fill value; a shard whose inner chunks are all fill still encodes to a valid shard
(an index whose entries are all missing), though the array layer erases such a shard rather
than store it.  Reading never caches what it read from the store; what a shard shape implies
(index size and request, inner grid) is computed once per shape.

Examples
--------
>>> import numpy as np
>>> import zarr3c
>>> a = zarr3c.create_array("memory://", shape=(8, 8), dtype="uint8", chunks=(4, 4),
...                         shards=(8, 8))
>>> a[...] = np.arange(64, dtype="uint8").reshape(8, 8)
>>> codec = partial_read_codec(a._pipeline)
>>> codec.chunk_shape, codec.chunks_per_shard((8, 8))
((4, 4), (2, 2))
"""

from zarr3c.codecs.sharding.codec import (
    ShardingCodec,
    partial_read_codec,
    sharding_codec_dict,
)
from zarr3c.codecs.sharding.index import MISSING, IndexLocation, ShardIndex
from zarr3c.codecs.sharding.read import (
    COALESCE_MAX_GAP,
    ByteRangeGroup,
    GetRanges,
    StoreRanges,
    ValueRanges,
    batch_decoder,
    fetches_by_request,
    pack_runs,
)
from zarr3c.codecs.sharding.write import PartArena

__all__ = [
    "COALESCE_MAX_GAP",
    "MISSING",
    "ByteRangeGroup",
    "GetRanges",
    "IndexLocation",
    "PartArena",
    "ShardIndex",
    "ShardingCodec",
    "StoreRanges",
    "ValueRanges",
    "batch_decoder",
    "fetches_by_request",
    "pack_runs",
    "partial_read_codec",
    "sharding_codec_dict",
]
