"""One-pass validation of a decoded ``sharding_indexed`` shard index.

Zarr v3 ``sharding_indexed`` codec (zarr-specs ``v3/codecs/sharding-indexed``): the index holds,
per inner chunk in C order, ``(offset, nbytes)`` as ``uint64``; ``(2**64 - 1, 2**64 - 1)``
marks a missing inner chunk.  A reader must not trust it: an entry may be half missing, point
outside the shard (or past ``2**64`` when the shard's size is unknown), into the index itself,
or overlap another entry.  :func:`check_shard_index` finds the first such problem in the
order the codec reports them, in one ``nogil`` pass (plus a sort of the stored entries only
when they are not already in increasing offset order, which writers produce), e.g.::

    code, a, b = check_shard_index(entries.reshape(-1, 2), shard_nbytes, lo, hi)
    # code 0: fine; 1: entry a half missing; 2: entry a outside the shard;
    # 3: entry a overlaps the index bytes [lo, hi); 4: entries a and b overlap

The pure-numpy twin is :func:`zarr3c._kernels._reference.check_shard_index`.
"""

cimport cython
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

__all__ = ["check_shard_index"]

cdef uint64_t _MISSING = 0xFFFFFFFFFFFFFFFFULL


cdef struct _span:
    uint64_t start
    Py_ssize_t index


cdef int _cmp_span(const void* a, const void* b) noexcept nogil:
    # By start, then by position: the order of a stable sort on start.
    cdef const _span* x = <const _span*>a
    cdef const _span* y = <const _span*>b
    if x.start < y.start:
        return -1
    if x.start > y.start:
        return 1
    if x.index < y.index:
        return -1
    if x.index > y.index:
        return 1
    return 0


cdef int check_index_core(const uint64_t* e, Py_ssize_t n, bint known, uint64_t size, bint bounded,
                     uint64_t lo, uint64_t hi, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The checks in priority order; -1 if the sort buffer cannot be allocated."""
    cdef Py_ssize_t i, first_out = -1, first_into = -1, prev = -1, nstored = 0
    cdef uint64_t off, length, prev_end = 0, prev_start = 0
    cdef bint sorted_ = True
    cdef _span* spans
    # Pass 1, C order: half-missing entries first (any one of them wins), then the first entry
    # outside the shard, then the first overlapping the index.
    for i in range(n):
        off = e[2 * i]
        length = e[2 * i + 1]
        if (off == _MISSING) != (length == _MISSING):
            a[0] = i
            return 1
        if off == _MISSING:
            continue
        if known:
            if off > size or length > size - off:
                if first_out < 0:
                    first_out = i
                continue
        elif length > _MISSING - off:
            if first_out < 0:
                first_out = i
            continue
        if length == 0:
            continue
        if bounded and first_into < 0 and off < hi and off + length > lo:
            first_into = i
        nstored += 1
        if prev >= 0 and off < prev_start:
            sorted_ = False
        prev = i
        prev_start = off
    if first_out >= 0:
        a[0] = first_out
        return 2
    if first_into >= 0:
        a[0] = first_into
        return 3
    if nstored < 2:
        return 0
    if sorted_:
        prev = -1
        for i in range(n):
            off = e[2 * i]
            length = e[2 * i + 1]
            if off == _MISSING or length == 0:
                continue
            if prev >= 0 and off < prev_end:
                a[0] = prev
                b[0] = i
                return 4
            prev = i
            prev_end = off + length
        return 0
    spans = <_span*>malloc(nstored * sizeof(_span))
    if spans == NULL:
        return -1
    nstored = 0
    for i in range(n):
        off = e[2 * i]
        if off == _MISSING or e[2 * i + 1] == 0:
            continue
        spans[nstored].start = off
        spans[nstored].index = i
        nstored += 1
    qsort(spans, nstored, sizeof(_span), _cmp_span)
    for i in range(1, nstored):
        prev = spans[i - 1].index
        if spans[i].start < spans[i - 1].start + e[2 * prev + 1]:
            a[0] = prev
            b[0] = spans[i].index
            free(spans)
            return 4
    free(spans)
    return 0


def check_shard_index(
    const uint64_t[:, ::1] entries not None,
    int64_t shard_nbytes,
    int64_t index_lo,
    int64_t index_hi,
) -> tuple:
    """Find the first problem of a decoded shard index, in one pass.

    Parameters
    ----------
    entries : uint64 array of shape (n, 2), C-contiguous (read-only accepted)
        ``(offset, nbytes)`` per inner chunk, in C order of the inner grid.
    shard_nbytes : int
        The shard's size in bytes, or -1 when unknown (then only ends past ``2**64`` are
        refused).
    index_lo, index_hi : int
        The index's bytes ``[index_lo, index_hi)`` in the shard, which no stored inner chunk
        may overlap, or both -1 when unknown.

    Returns
    -------
    tuple of int
        ``(code, a, b)``: code 0 (valid), 1 (entry ``a`` has exactly one of offset and nbytes
        equal to ``2**64 - 1``), 2 (entry ``a`` ends past the shard), 3 (entry ``a``, of
        nbytes > 0, overlaps the index), 4 (entries ``a`` and ``b``, of nbytes > 0, overlap;
        ``a`` starts first).  Checks run in that priority order, each reporting its first
        entry in C order (for code 4: the first overlapping neighbours in increasing offset
        order, ties by position).  ``a``/``b`` are -1 when unused.

    Raises
    ------
    ValueError
        If ``entries`` is not (n, 2), ``shard_nbytes`` < -1, or the index bounds are neither
        both -1 nor ``0 <= index_lo <= index_hi``.
    MemoryError
        If the sort buffer cannot be allocated.
    """
    cdef Py_ssize_t n = entries.shape[0], a = -1, b = -1
    cdef int code
    if entries.shape[1] != 2:
        raise ValueError(
            f"check_shard_index: entries must have shape (n, 2), got {entries.shape[1]} columns"
        )
    if shard_nbytes < -1:
        raise ValueError(f"check_shard_index: shard_nbytes = {shard_nbytes} (-1 for unknown)")
    if not ((index_lo == -1 and index_hi == -1) or 0 <= index_lo <= index_hi):
        raise ValueError(
            f"check_shard_index: index bounds ({index_lo}, {index_hi}) must both be -1 or "
            "satisfy 0 <= lo <= hi"
        )
    if n == 0:
        return (0, -1, -1)
    cdef const uint64_t* e = &entries[0, 0]
    cdef bint known = shard_nbytes >= 0, bounded = index_lo >= 0
    cdef uint64_t size = <uint64_t>shard_nbytes if known else 0
    cdef uint64_t lo = <uint64_t>index_lo if bounded else 0
    cdef uint64_t hi = <uint64_t>index_hi if bounded else 0
    with nogil:
        code = check_index_core(e, n, known, size, bounded, lo, hi, &a, &b)
    if code < 0:
        raise MemoryError("check_shard_index: cannot allocate the sort buffer")
    return (code, a, b)
