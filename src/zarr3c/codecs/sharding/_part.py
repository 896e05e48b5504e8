"""What the partial-read and partial-write mixins use of the codec they are part of.

:class:`~zarr3c.codecs.sharding.ShardingCodec` inherits its partial reads
(:class:`~zarr3c.codecs.sharding.read.ShardReads`) and writes
(:class:`~zarr3c.codecs.sharding.write.ShardWrites`) from mixins, so that each family sits in
one module with its helpers.  :class:`CodecPart`, their common base, declares for type
checkers the codec attributes and methods they call; it has no state or code of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from zarr3c.codecs.pipeline import CodecPipeline
    from zarr3c.codecs.sharding._inner import Coords
    from zarr3c.codecs.sharding.index import IndexLayout, ShardIndex


class CodecPart:
    """Base of the ShardingCodec mixins: the codec members they use, declared, not defined."""

    if TYPE_CHECKING:
        @property
        def chunk_shape(self) -> tuple[int, ...]: ...

        def _layout(self, shard_shape: Sequence[int]) -> IndexLayout: ...

        def _evolved_pipeline(self) -> CodecPipeline: ...

        def _chunks_per_shard(self, shard_shape: Sequence[int], *, path: str | None = None
                              ) -> Coords: ...

        def _decode_index_from_shard(self, buf: np.ndarray, shard_shape: Sequence[int]
                                     ) -> ShardIndex: ...

        def decode_index(self, data: bytes | bytearray | memoryview | np.ndarray,
                         shard_shape: Sequence[int], *, shard_nbytes: int | None = None
                         ) -> ShardIndex: ...
