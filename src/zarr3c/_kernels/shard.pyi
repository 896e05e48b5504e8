"""One-pass validation of a decoded sharding_indexed shard index (contract; shard.pyx)."""

import numpy as np
from numpy.typing import NDArray

def check_shard_index(
    entries: NDArray[np.uint64],  # (n, 2) C-contiguous: (offset, nbytes) per inner chunk
    shard_nbytes: int,  # -1: unknown
    index_lo: int,  # the index's bytes [index_lo, index_hi) in the shard; both -1: unknown
    index_hi: int,
) -> tuple[int, int, int]:
    """The first problem of a shard index as (code, a, b): 0 valid; 1 entry a half missing
    (one of offset, nbytes is 2**64-1); 2 entry a ends past the shard (past 2**64 when the
    size is unknown); 3 entry a (nbytes > 0) overlaps the index; 4 entries a and b (nbytes > 0)
    overlap, a starting first.  Checks run in that order, each reporting its first entry in C
    order (code 4: the first overlapping neighbours in offset order, ties by position);
    unused a/b are -1.  ValueError for a bad shape or bounds.  GIL released."""
