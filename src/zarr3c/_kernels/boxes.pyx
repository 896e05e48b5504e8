"""Step-1 boxes cut into their pieces per chunk: the plans of small and many-box reads.

A step-1 box is ``[start, stop)`` per dimension (what ``a[10:14, 5, -3:]`` selects).  The
kernels here turn one into the pieces that lie in each chunk of a regular grid, so that a read
is one store call and one :func:`~zarr3c._kernels.scatter.copy_pieces` (or
:func:`~zarr3c._kernels.copy.copy_strided`) per chunk, without a Python step per axis:

- :func:`basic_box` parses a basic-indexing key into a box (None for anything else);
- :func:`box_chunk_pieces` plans one box over a few chunks (a small read of a chunked array);
- :func:`count_box_pieces` and :func:`plan_box_pieces` plan many boxes into one output buffer;
- :func:`plan_box_in_cell` plans one box inside one cell of a two-level grid: the inner
  chunks of one shard
  (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html).

A piece is the part of a box inside one chunk: its extent per dimension, the bytes of a
C-ordered chunk that hold it, and where its first element lands in the box's C-ordered output.
Pure-numpy twins are in :mod:`zarr3c._kernels._reference`.
"""

from libc.stdint cimport INT64_MAX, int64_t

import numpy as np

from zarr3c._kernels.grid cimport CHANGED

__all__ = [
    "basic_box",
    "box_chunk_pieces",
    "count_box_pieces",
    "plan_box_in_cell",
    "plan_box_pieces",
]


# -- a basic-indexing key as a box ---------------------------------------------------------------


cdef object _np_integer = np.integer


cdef inline object _index(object x):
    # An index as a Python int: an int, or a numpy integer (what indices computed with numpy
    # are, and numpy indexes with them alike); None for anything else.  Not bool, nor
    # numpy.bool_ (neither is one of these): a boolean means a mask, the general path's.
    if type(x) is int:
        return x
    if isinstance(x, _np_integer):
        return int(x)
    return None


cdef inline int64_t _clamp(object v, int64_t length):
    # A slice bound as slice.indices(length) resolves it for step 1 (v: any Python int).
    if v < 0:
        return 0 if v < -length else v + length
    return length if v > length else v


def basic_box(object key, tuple shape):
    """The short path's parser: a basic-indexing ``key`` that selects a non-empty box with
    step 1 on every axis, as ``(start, stop, out_shape, scalar)``; None for anything else,
    which the general parser handles (and refuses, when the key is bad).

    Taken: a tuple (or a single entry) of integer entries, ``int`` or numpy integers
    (negative wraps; out of bounds: None), slices whose start/stop are integers or None and
    whose step is None or 1, and at most one ``...``; at most ``len(shape)`` entries besides
    ``...``, missing trailing axes whole.  Not taken: ``None``, booleans, other steps,
    arrays (0-d ones too), empty selections.

    Returns
    -------
    tuple or None
        ``start`` and ``stop`` (the box, per dimension, in array coordinates), ``out_shape``
        (numpy's result shape: integer axes dropped) and ``scalar`` (True when numpy returns
        a scalar: every axis an integer and no ``...``).
    """
    cdef Py_ssize_t ndim = len(shape), d, at = -1, i = 0
    cdef int64_t length, lo, hi
    cdef object k, v
    if type(key) is not tuple:
        key = (key,)
    for k in <tuple>key:  # by identity: == on an array entry would compare elementwise
        if k is Ellipsis:
            if at >= 0:
                return None
            at = i
        i += 1
    i = ndim - len(<tuple>key) + (at >= 0)  # axes taken whole: where ... stands, or at the end
    if i < 0:
        return None  # too many indices: the general path says so
    whole = (slice(None),) * i
    key = key + whole if at < 0 else key[:at] + whole + key[at + 1:]
    start = []
    stop = []
    out_shape = []
    for d in range(ndim):
        length = shape[d]
        k = (<tuple>key)[d]
        v = _index(k)
        if v is not None:
            if v < -length or v >= length:
                return None
            lo = v + length if v < 0 else v
            hi = lo + 1
        elif type(k) is slice:
            v = (<slice>k).step
            if v is not None and _index(v) != 1:
                return None
            v = (<slice>k).start
            if v is None:
                lo = 0
            else:
                v = _index(v)
                if v is None:
                    return None
                lo = _clamp(v, length)
            v = (<slice>k).stop
            if v is None:
                hi = length
            else:
                v = _index(v)
                if v is None:
                    return None
                hi = _clamp(v, length)
            out_shape.append(max(hi - lo, 0))
        else:
            return None
        if hi <= lo:
            return None
        start.append(lo)
        stop.append(hi)
    return tuple(start), tuple(stop), tuple(out_shape), (not out_shape and at < 0)


# -- one step-1 box over a few chunks of a regular grid (a small chunked read) -----------------


def box_chunk_pieces(
    tuple start,
    tuple stop,
    const int64_t[::1] chunk_shape not None,
    const int64_t[::1] chunk_strides not None,
    int64_t itemsize,
    Py_ssize_t max_pieces,
):
    """The pieces of the step-1 box ``[start, stop)`` per chunk of the regular grid of
    ``chunk_shape``, when it touches at most ``max_pieces`` chunks; else None.  The short
    path's plan of a small read of a chunked array, without a Python step per axis.

    Returns a list, in C order of the chunks, of ``(coords, first, counts, lo, hi,
    dst_offset)``: the chunk's grid coordinates (a tuple), the piece's first element in the
    chunk and its extent per dimension (lists), the bytes ``[lo, hi)`` of a C-ordered chunk
    of byte strides ``chunk_strides`` that hold it, and its first byte in the box's
    C-ordered output.  ValueError for a box that is not a non-empty range of non-negative
    coordinates per dimension, or bad shapes.
    """
    cdef str fn = "box_chunk_pieces"
    cdef Py_ssize_t nd = chunk_shape.shape[0], d, p, n
    cdef int64_t b, e, c, k, total = 1, lo, last, at
    cdef int64_t first_chunk[64]
    cdef int64_t nchunks[64]
    cdef int64_t out_strides[64]
    cdef int64_t idx[64]
    if chunk_strides.shape[0] != nd or len(start) != nd or len(stop) != nd:
        raise ValueError(f"{fn}: start, stop, chunk_shape and chunk_strides must all have "
                         f"{nd} entries")
    if nd > 64:
        raise ValueError(f"{fn}: {nd} dimensions, at most 64 are supported")
    if itemsize < 1:
        raise ValueError(f"{fn}: itemsize = {itemsize} must be >= 1")
    for d in range(nd):
        b, e, c = start[d], stop[d], chunk_shape[d]
        if b < 0 or e <= b or c < 1:
            raise ValueError(f"{fn}: [{b}, {e}) in dimension {d} with chunks of {c}")
        first_chunk[d] = b // c
        nchunks[d] = (e - 1) // c - first_chunk[d] + 1
        if nchunks[d] > max_pieces // total:
            return None
        total *= nchunks[d]
    if total > max_pieces:  # (0-d: one piece)
        return None
    k = itemsize
    for d in range(nd - 1, -1, -1):
        out_strides[d] = k
        k *= <int64_t>stop[d] - <int64_t>start[d]
    pieces = []
    for d in range(nd):
        idx[d] = 0
    for p in range(total):
        coords = []
        first = []
        counts = []
        lo = last = at = 0
        for d in range(nd):
            c = chunk_shape[d]
            k = first_chunk[d] + idx[d]
            b = max(<int64_t>start[d], k * c)
            e = min(<int64_t>stop[d], (k + 1) * c)
            coords.append(k)
            first.append(b - k * c)
            counts.append(e - b)
            lo += (b - k * c) * chunk_strides[d]
            last += (e - 1 - k * c) * chunk_strides[d]
            at += (b - <int64_t>start[d]) * out_strides[d]
        pieces.append((tuple(coords), first, counts, lo, last + itemsize, at))
        for d in range(nd - 1, -1, -1):  # the next chunk, in C order
            idx[d] += 1
            if idx[d] < nchunks[d]:
                break
            idx[d] = 0
    return pieces


# -- many step-1 boxes on a regular grid ---------------------------------------------------------


cdef int _check_boxes(str fn, const int64_t[:, ::1] starts, const int64_t[:, ::1] stops,
                      const int64_t[::1] chunk_shape) except -1:
    cdef Py_ssize_t nd = chunk_shape.shape[0], b, d
    if starts.shape[0] != stops.shape[0] or starts.shape[1] != nd or stops.shape[1] != nd:
        raise ValueError(
            f"{fn}: starts and stops must both have shape (nboxes, {nd}) "
            f"(got ({starts.shape[0]}, {starts.shape[1]}) and ({stops.shape[0]}, {stops.shape[1]}))"
        )
    for d in range(nd):
        if chunk_shape[d] < 1:
            raise ValueError(f"{fn}: chunk_shape[{d}] = {chunk_shape[d]} must be >= 1")
    for b in range(starts.shape[0]):
        for d in range(nd):
            if starts[b, d] < 0 or stops[b, d] <= starts[b, d]:
                raise ValueError(
                    f"{fn}: box {b}: [{starts[b, d]}, {stops[b, d]}) in dimension {d} is not "
                    "a non-empty range of non-negative coordinates"
                )
    return 0


cdef int64_t _count_pieces(const int64_t[:, ::1] starts, const int64_t[:, ::1] stops,
                           const int64_t[::1] chunk_shape) noexcept nogil:
    """The number of (box, chunk) pieces, or -1 if it does not fit in int64."""
    cdef Py_ssize_t nd = chunk_shape.shape[0], b, d
    cdef int64_t total = 0, per, n
    for b in range(starts.shape[0]):
        per = 1
        for d in range(nd):
            n = (stops[b, d] - 1) // chunk_shape[d] - starts[b, d] // chunk_shape[d] + 1
            if per > INT64_MAX // n:
                return -1
            per *= n
        if total > INT64_MAX - per:
            return -1
        total += per
    return total


def count_box_pieces(
    const int64_t[:, ::1] starts not None,
    const int64_t[:, ::1] stops not None,
    const int64_t[::1] chunk_shape not None,
) -> int:
    """The number of pieces :func:`plan_box_pieces` cuts the boxes ``[starts[b], stops[b])``
    into on a regular grid of ``chunk_shape``: per box, the product over dimensions of the
    chunks its range touches.  Validates the boxes (non-empty, non-negative) and the chunk
    shape (>= 1), raising ValueError naming the first bad one."""
    _check_boxes("count_box_pieces", starts, stops, chunk_shape)
    cdef int64_t total
    with nogil:
        total = _count_pieces(starts, stops, chunk_shape)
    if total < 0:
        raise ValueError("count_box_pieces: the number of pieces overflows int64")
    return total


cdef inline bint _advance(int64_t* cur, const int64_t* first, const int64_t* last,
                          Py_ssize_t nd) noexcept nogil:
    """Step ``cur`` to the next coordinates of the box ``[first, last]`` in C order: False
    after the last."""
    cdef Py_ssize_t d = nd - 1
    while d >= 0:
        cur[d] += 1
        if cur[d] <= last[d]:
            return True
        cur[d] = first[d]
        d -= 1
    return False


cdef inline void _piece(const int64_t* cur, const int64_t* lo, const int64_t* hi,
                        const int64_t* chunk_shape, const int64_t* chunk_strides,
                        const int64_t* bs, Py_ssize_t nd, int64_t itemsize, int64_t* counts,
                        int64_t* src, int64_t* end, int64_t* dst) noexcept nogil:
    """The piece of the box ``[lo, hi)`` (C byte strides ``bs`` in its output) in chunk
    ``cur``: its extent ``counts``, the byte of its first element in the chunk ``src``, one
    past its last element's last byte ``end``, and its first byte in the output ``dst``."""
    cdef Py_ssize_t d
    cdef int64_t c, corner, first, stop_d, n, local
    src[0] = end[0] = dst[0] = 0
    for d in range(nd):
        c = chunk_shape[d]
        corner = cur[d] * c
        first = lo[d] if lo[d] > corner else corner
        stop_d = hi[d] if hi[d] < corner + c else corner + c
        n = stop_d - first
        local = first - corner
        counts[d] = n
        src[0] += local * chunk_strides[d]
        end[0] += (local + n - 1) * chunk_strides[d]
        dst[0] += (first - lo[d]) * bs[d]
    end[0] += itemsize


cdef int _plan_core(
    const int64_t[:, ::1] starts, const int64_t[:, ::1] stops, const int64_t[::1] chunk_shape,
    const int64_t[::1] chunk_strides, int64_t itemsize, int64_t[:, ::1] coords,
    int64_t[:, ::1] counts, int64_t[::1] src_offsets, int64_t[::1] src_ends,
    int64_t[::1] dst_offsets, int64_t[:, ::1] dst_strides, int64_t[::1] box_offsets,
) noexcept nogil:
    # Offsets are plain int64 arithmetic: for absurd inputs they may wrap, which only makes
    # them wrong (the copy kernels validate every region); no write leaves the outputs, whose
    # lengths were checked against the piece count (and are checked again per piece, in case
    # the boxes changed since they were counted).  Returns 0, or CHANGED.
    cdef Py_ssize_t nd = chunk_shape.shape[0], b, d, p = 0, total = coords.shape[0]
    cdef int64_t cur[64]
    cdef int64_t first_c[64]
    cdef int64_t last[64]
    cdef int64_t bs[64]
    cdef int64_t size, src, end, dst, c
    box_offsets[0] = 0
    for b in range(starts.shape[0]):
        size = itemsize
        for d in range(nd - 1, -1, -1):
            bs[d] = size
            size *= stops[b, d] - starts[b, d]
        box_offsets[b + 1] = box_offsets[b] + size
        for d in range(nd):
            c = chunk_shape[d]
            cur[d] = first_c[d] = starts[b, d] // c
            last[d] = (stops[b, d] - 1) // c
        while True:
            if p >= total:
                return CHANGED
            if nd:
                _piece(cur, &starts[b, 0], &stops[b, 0], &chunk_shape[0], &chunk_strides[0],
                       bs, nd, itemsize, &counts[p, 0], &src, &end, &dst)
            else:  # (0-d: one element)
                src, end, dst = 0, itemsize, 0
            for d in range(nd):
                coords[p, d] = cur[d]
                dst_strides[p, d] = bs[d]
            src_offsets[p] = src
            src_ends[p] = end
            dst_offsets[p] = box_offsets[b] + dst
            p += 1
            if not _advance(cur, first_c, last, nd):
                break
    return 0


def plan_box_pieces(
    const int64_t[:, ::1] starts not None,
    const int64_t[:, ::1] stops not None,
    const int64_t[::1] chunk_shape not None,
    const int64_t[::1] chunk_strides not None,
    int64_t itemsize,
    int64_t[:, ::1] coords not None,
    int64_t[:, ::1] counts not None,
    int64_t[::1] src_offsets not None,
    int64_t[::1] src_ends not None,
    int64_t[::1] dst_offsets not None,
    int64_t[:, ::1] dst_strides not None,
    int64_t[::1] box_offsets not None,
) -> None:
    """Cut step-1 boxes into their pieces per chunk of a regular grid, for one output buffer
    holding every box's elements in C order, box after box.

    Box ``b`` is ``[starts[b], stops[b])``; its pieces come box after box, each box's in C
    order of the chunks.  Per piece ``p``: ``coords[p]`` the chunk's grid coordinates,
    ``counts[p]`` the piece's extent; ``src_offsets[p]`` and ``src_ends[p]`` the byte of its
    first element in a chunk of byte strides ``chunk_strides`` (>= 0) and one past its last
    element's last byte; ``dst_offsets[p]`` / ``dst_strides[p]`` where it lands in the output
    (box ``b``'s elements are bytes ``[box_offsets[b], box_offsets[b + 1])``, C order).
    The outputs (caller-allocated: ``P = count_box_pieces(...)`` rows, ``nboxes + 1`` box
    offsets) are checked, as are the boxes (ValueError).  GIL released.
    """
    cdef str fn = "plan_box_pieces"
    cdef Py_ssize_t nd = chunk_shape.shape[0], d
    _check_boxes(fn, starts, stops, chunk_shape)
    if nd > 64:
        raise ValueError(f"{fn}: {nd} dimensions, at most 64 are supported")
    if chunk_strides.shape[0] != nd:
        raise ValueError(f"{fn}: chunk_strides has {chunk_strides.shape[0]} entries, not {nd}")
    for d in range(nd):
        if chunk_strides[d] < 0:
            raise ValueError(f"{fn}: chunk_strides[{d}] = {chunk_strides[d]} is negative")
    if itemsize < 1:
        raise ValueError(f"{fn}: itemsize = {itemsize} must be >= 1")
    cdef int64_t total
    with nogil:
        total = _count_pieces(starts, stops, chunk_shape)
    if total < 0:
        raise ValueError(f"{fn}: the number of pieces overflows int64")
    if (coords.shape[0] != total or coords.shape[1] != nd or counts.shape[0] != total
            or counts.shape[1] != nd or dst_strides.shape[0] != total
            or dst_strides.shape[1] != nd):
        raise ValueError(f"{fn}: coords, counts and dst_strides must have shape ({total}, {nd})")
    if (src_offsets.shape[0] != total or src_ends.shape[0] != total
            or dst_offsets.shape[0] != total):
        raise ValueError(f"{fn}: src_offsets, src_ends and dst_offsets must have {total} entries")
    if box_offsets.shape[0] != starts.shape[0] + 1:
        raise ValueError(f"{fn}: box_offsets must have {starts.shape[0] + 1} entries")
    cdef int status
    with nogil:
        status = _plan_core(starts, stops, chunk_shape, chunk_strides, itemsize, coords, counts,
                            src_offsets, src_ends, dst_offsets, dst_strides, box_offsets)
    if status == CHANGED:
        raise ValueError(f"{fn}: the boxes changed during the call")


# -- one step-1 box inside one cell (a small read of a sharded array) --------------------------


def plan_box_in_cell(
    tuple start,
    tuple stop,
    const int64_t[::1] cell_shape not None,
    const int64_t[::1] chunk_shape not None,
    const int64_t[::1] chunk_strides not None,
    int64_t itemsize,
    Py_ssize_t max_pieces,
):
    """The pieces of the step-1 box ``[start, stop)`` per chunk, when the box lies in one
    cell of the grid of ``cell_shape`` (a shard) whose chunks (inner chunks) have
    ``chunk_shape`` (dividing it), and touches at most ``max_pieces`` chunks; else None.

    Returns ``(cell, plan)``: the cell's grid coordinates, and an int64 array of
    ``P * (4 + 2 * ndim)`` entries holding, in blocks of ``P`` (pieces in C order of the
    chunks): ``slot`` (the chunk's C-order number in its cell), ``src_lo`` and ``src_hi``
    (the bytes ``[lo, hi)`` of a C-ordered chunk of byte strides ``chunk_strides`` that
    hold the piece), ``dst_offset`` (its first byte in the box's C-ordered output), then
    ``counts`` and ``dst_strides`` (``P`` rows of ``ndim`` each).  ValueError for a box that
    is not a non-empty range of non-negative coordinates per dimension, or bad shapes.
    """
    cdef str fn = "plan_box_in_cell"
    cdef Py_ssize_t nd = cell_shape.shape[0], d, p
    if chunk_shape.shape[0] != nd or chunk_strides.shape[0] != nd or len(start) != nd \
            or len(stop) != nd:
        raise ValueError(f"{fn}: start, stop, cell_shape, chunk_shape and chunk_strides must "
                         f"all have {nd} entries")
    if nd > 64 or nd < 1:
        raise ValueError(f"{fn}: {nd} dimensions, 1 to 64 are supported")
    if itemsize < 1:
        raise ValueError(f"{fn}: itemsize = {itemsize} must be >= 1")
    cdef int64_t lo_[64]
    cdef int64_t hi_[64]
    cdef int64_t first_c[64]
    cdef int64_t last_c[64]
    cdef int64_t cur[64]
    cdef int64_t per[64]
    cdef int64_t bs[64]
    cdef int64_t c, k, n, total = 1, size = itemsize
    for d in range(nd):
        lo_[d] = start[d]
        hi_[d] = stop[d]
        c = chunk_shape[d]
        k = cell_shape[d]
        if c < 1 or k < 1 or k % c:
            raise ValueError(f"{fn}: chunk_shape[{d}] = {c} must be >= 1 and divide "
                             f"cell_shape[{d}] = {k}")
        if chunk_strides[d] < 0:
            raise ValueError(f"{fn}: chunk_strides[{d}] = {chunk_strides[d]} is negative")
        if lo_[d] < 0 or hi_[d] <= lo_[d]:
            raise ValueError(f"{fn}: [{lo_[d]}, {hi_[d]}) in dimension {d} is not a "
                             "non-empty range of non-negative coordinates")
    for d in range(nd):
        c = chunk_shape[d]
        k = cell_shape[d]
        if lo_[d] // k != (hi_[d] - 1) // k:
            return None  # spans cells
        per[d] = k // c
        first_c[d] = lo_[d] // c
        last_c[d] = (hi_[d] - 1) // c
        n = last_c[d] - first_c[d] + 1
        if n > max_pieces or total > max_pieces // n:
            return None
        total *= n
    for d in range(nd - 1, -1, -1):
        bs[d] = size
        size *= hi_[d] - lo_[d]
    cdef Py_ssize_t P = total
    plan = np.empty(P * (4 + 2 * nd), dtype=np.int64)
    cdef int64_t[::1] out = plan
    cdef int64_t slot, src, end, dst
    for d in range(nd):
        cur[d] = first_c[d]
    p = 0
    while True:
        _piece(cur, lo_, hi_, &chunk_shape[0], &chunk_strides[0], bs, nd, itemsize,
               &out[4 * P + p * nd], &src, &end, &dst)
        slot = 0
        for d in range(nd):
            slot = slot * per[d] + cur[d] % per[d]
            out[4 * P + P * nd + p * nd + d] = bs[d]
        out[p] = slot
        out[P + p] = src
        out[2 * P + p] = end
        out[3 * P + p] = dst
        p += 1
        if not _advance(cur, first_c, last_c, nd):
            break
    return tuple([lo_[d] // cell_shape[d] for d in range(nd)]), plan
