"""Per-dimension projections of selections onto a chunk grid.

Seed 002 (regular grid: chunk index = coordinate // chunk size) and seeds 000/001
(rectilinear grid, e.g. ``{"name": "rectilinear", "configuration": {"kind": "inline",
"chunk_shapes": [[10, 20, 5], 4]}}``).  A dimension's chunking reaches the kernels either as a
regular ``chunk_size`` (arithmetic) or as an int64 ``offsets`` array of length nchunks + 1 with
``offsets[0] == 0``, non-decreasing, chunk ``i`` covering ``[offsets[i], offsets[i + 1])``
(searched by binary search; a chunk of length 0 holds nothing and is never reported).

A slice projection is an int64 array of shape (n, 4), one row per chunk holding at least one
selected element, in increasing chunk order: ``(chunk index, index in the chunk of the first
selected element, number of selected elements in the chunk, position in the selection of the
first one)``.  For start=5, step=3, count=4 (elements 5, 8, 11, 14) and chunk_size=4::

    [[1, 1, 1, 0],     # 5 in chunk 1 at 1
     [2, 0, 2, 1],     # 8, 11 in chunk 2 from 0
     [3, 2, 1, 3]]     # 14 in chunk 3 at 2
"""

cimport cython
from libc.stdint cimport INT64_MAX, int64_t
from libc.stdlib cimport free, malloc

import numpy as np

__all__ = [
    "project_slice_regular",
    "project_slice_offsets",
    "locate_points_regular",
    "locate_points_offsets",
    "group_by_key",
    "group_points_regular",
    "basic_box",
    "count_box_pieces",
    "plan_box_pieces",
    "plan_box_in_cell",
]


# -- argument checks -----------------------------------------------------------------------------


cdef int _check_slice(str fn, int64_t start, int64_t step, int64_t count) except -1:
    if start < 0:
        raise ValueError(f"{fn}: start = {start} is negative")
    if step < 1:
        raise ValueError(f"{fn}: step = {step} must be >= 1 (normalise negative steps first)")
    if count < 0:
        raise ValueError(f"{fn}: count = {count} is negative")
    if count > 0 and count - 1 > (INT64_MAX - start) // step:
        raise ValueError(
            f"{fn}: the last selected element {start} + ({count} - 1) * {step} overflows int64"
        )
    return 0


cdef Py_ssize_t _first_bad_offset(const int64_t[::1] offsets) noexcept nogil:
    """Index of the first offset breaking offsets[0] == 0 / non-decreasing, or -1."""
    cdef Py_ssize_t i
    if offsets[0] != 0:
        return 0
    for i in range(1, offsets.shape[0]):
        if offsets[i] < offsets[i - 1]:
            return i
    return -1


cdef int _check_offsets(str fn, const int64_t[::1] offsets) except -1:
    cdef Py_ssize_t bad
    if offsets.shape[0] < 1:
        raise ValueError(f"{fn}: offsets is empty (it needs nchunks + 1 >= 1 entries)")
    with nogil:
        bad = _first_bad_offset(offsets)
    if bad == 0:
        raise ValueError(f"{fn}: offsets[0] = {offsets[0]} must be 0")
    if bad > 0:
        raise ValueError(
            f"{fn}: offsets must be non-decreasing but offsets[{bad}] = {offsets[bad]} "
            f"< offsets[{bad - 1}] = {offsets[bad - 1]}"
        )
    return 0


cdef int _check_lengths(str fn, Py_ssize_t n, Py_ssize_t nchunk, Py_ssize_t nlocal) except -1:
    if nchunk != n or nlocal != n:
        raise ValueError(
            f"{fn}: len(indices) = {n}, len(chunk_index) = {nchunk} and "
            f"len(local_index) = {nlocal} must be equal"
        )
    return 0


# -- nogil cores ---------------------------------------------------------------------------------


@cython.cdivision(True)
cdef inline Py_ssize_t _find_chunk(const int64_t* offsets, Py_ssize_t nchunks,
                                   int64_t x) noexcept nogil:
    """The chunk i with offsets[i] <= x < offsets[i + 1], for 0 <= x < offsets[nchunks].

    The last i with offsets[i] <= x; zero-length chunks (equal offsets) are never returned
    because the next offset is then not > x.
    """
    cdef Py_ssize_t lo = 0, hi = nchunks, mid
    # Invariant: offsets[lo] <= x < offsets[hi].
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if offsets[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@cython.cdivision(True)
cdef Py_ssize_t _project_regular_core(
    int64_t start, int64_t step, int64_t count, int64_t chunk_size, int64_t[:, ::1] out,
) noexcept nogil:
    cdef int64_t pos = 0, x = start, c, local, m
    cdef Py_ssize_t r = 0
    while pos < count:
        c = x // chunk_size
        local = x - c * chunk_size
        # Selected elements left in this chunk: x, x + step, ... < chunk end.
        m = (chunk_size - local - 1) // step + 1
        if m > count - pos:
            m = count - pos
        out[r, 0] = c
        out[r, 1] = local
        out[r, 2] = m
        out[r, 3] = pos
        r += 1
        pos += m
        if pos < count:
            x += m * step
    return r


@cython.cdivision(True)
cdef Py_ssize_t _project_offsets_core(
    int64_t start, int64_t step, int64_t count, const int64_t* offsets, Py_ssize_t nchunks,
    int64_t[:, ::1] out,
) noexcept nogil:
    cdef int64_t pos = 0, x = start, m, end
    cdef Py_ssize_t r = 0, i
    if count == 0:
        return 0
    i = _find_chunk(offsets, nchunks, x)
    while True:
        end = offsets[i + 1]
        m = (end - x - 1) // step + 1
        if m > count - pos:
            m = count - pos
        out[r, 0] = i
        out[r, 1] = x - offsets[i]
        out[r, 2] = m
        out[r, 3] = pos
        r += 1
        pos += m
        if pos >= count:
            return r
        x += m * step
        # The walk over all rows visits each chunk at most once: O(nchunks + rows) in total.
        while offsets[i + 1] <= x:
            i += 1


@cython.cdivision(True)
cdef Py_ssize_t _locate_regular_core(
    const int64_t[::1] indices, int64_t chunk_size, int64_t[::1] chunk_index,
    int64_t[::1] local_index,
) noexcept nogil:
    cdef Py_ssize_t k
    cdef int64_t x, c
    for k in range(indices.shape[0]):
        x = indices[k]
        if x < 0:
            return k
        c = x // chunk_size
        chunk_index[k] = c
        local_index[k] = x - c * chunk_size
    return -1


cdef Py_ssize_t _locate_offsets_core(
    const int64_t[::1] indices, const int64_t[::1] offsets, int64_t[::1] chunk_index,
    int64_t[::1] local_index,
) noexcept nogil:
    cdef Py_ssize_t k, i = 0, nchunks = offsets.shape[0] - 1
    cdef int64_t x, total = offsets[nchunks]
    cdef const int64_t* off = &offsets[0]
    for k in range(indices.shape[0]):
        x = indices[k]
        if x < 0 or x >= total:
            return k
        # Sorted or clustered indices mostly stay in the previous chunk: skip the search.
        if not (off[i] <= x < off[i + 1]):
            i = _find_chunk(off, nchunks, x)
        chunk_index[k] = i
        local_index[k] = x - off[i]
    return -1


# -- entry points --------------------------------------------------------------------------------


def project_slice_regular(
    int64_t start, int64_t step, int64_t count, int64_t chunk_size
) -> np.ndarray:
    """Project the selection ``start, start + step, ...`` (``count`` elements) onto chunks.

    Parameters
    ----------
    start : int
        First selected index (>= 0).
    step : int
        Distance between selected indices (>= 1; callers normalise negative steps).
    count : int
        Number of selected elements (>= 0).
    chunk_size : int
        Regular chunk length (>= 1).

    Returns
    -------
    numpy.ndarray
        int64, shape (n, 4): rows ``(chunk index, local start, count in chunk, position in
        the selection of the first element)`` in increasing chunk order; chunks without a
        selected element are absent; shape (0, 4) when ``count == 0``.

    Raises
    ------
    ValueError
        If an argument is out of range or the last selected index overflows int64.
    """
    _check_slice("project_slice_regular", start, step, count)
    if chunk_size < 1:
        raise ValueError(f"project_slice_regular: chunk_size = {chunk_size} must be >= 1")
    cdef int64_t rows = 0, last
    if count > 0:
        last = start + (count - 1) * step
        # Every chunk between the first and the last holds an element when step <= chunk
        # size; otherwise each element has its own chunk.  Either way this is exact.
        rows = last // chunk_size - start // chunk_size + 1
        if rows > count:
            rows = count
    result = np.empty((rows, 4), dtype=np.int64)
    cdef int64_t[:, ::1] out = result
    cdef Py_ssize_t r
    with nogil:
        r = _project_regular_core(start, step, count, chunk_size, out)
    return result if r == rows else result[:r]


def project_slice_offsets(
    int64_t start, int64_t step, int64_t count, const int64_t[::1] offsets not None
) -> np.ndarray:
    """Project the selection ``start, start + step, ...`` onto chunks given by offsets.

    Parameters
    ----------
    start, step, count : int
        As for :func:`project_slice_regular`.
    offsets : 1-d contiguous int64 array
        Chunk boundaries, length nchunks + 1: ``offsets[0] == 0``, non-decreasing; chunk
        ``i`` covers ``[offsets[i], offsets[i + 1])``.

    Returns
    -------
    numpy.ndarray
        int64, shape (n, 4), as for :func:`project_slice_regular`; zero-length chunks never
        appear.

    Raises
    ------
    ValueError
        If an argument is out of range, ``offsets`` is malformed, or the last selected index
        ``start + (count - 1) * step`` is not below ``offsets[-1]``.
    """
    _check_slice("project_slice_offsets", start, step, count)
    _check_offsets("project_slice_offsets", offsets)
    cdef Py_ssize_t nchunks = offsets.shape[0] - 1
    cdef int64_t rows = 0, last, ifirst, ilast
    cdef const int64_t* off = &offsets[0]
    if count > 0:
        last = start + (count - 1) * step
        if last >= offsets[nchunks]:
            raise ValueError(
                f"project_slice_offsets: the last selected index {last} is out of range "
                f"[0, {offsets[nchunks]})"
            )
        ifirst = _find_chunk(off, nchunks, start)
        ilast = _find_chunk(off, nchunks, last)
        rows = ilast - ifirst + 1
        if rows > count:
            rows = count
    result = np.empty((rows, 4), dtype=np.int64)
    cdef int64_t[:, ::1] out = result
    cdef Py_ssize_t r
    with nogil:
        r = _project_offsets_core(start, step, count, off, nchunks, out)
    return result if r == rows else result[:r]


def locate_points_regular(
    const int64_t[::1] indices not None,
    int64_t chunk_size,
    int64_t[::1] chunk_index not None,
    int64_t[::1] local_index not None,
) -> None:
    """Write ``index // chunk_size`` and ``index % chunk_size`` of every index.

    Parameters
    ----------
    indices : 1-d contiguous int64 array
        Indices along one dimension (each >= 0).
    chunk_size : int
        Regular chunk length (>= 1).
    chunk_index, local_index : 1-d contiguous writable int64 arrays
        Caller-allocated outputs, same length as ``indices``.

    Raises
    ------
    ValueError
        On mismatched lengths, ``chunk_size < 1``, or a negative index (the message names the
        first; outputs before it are written).
    """
    _check_lengths("locate_points_regular", indices.shape[0], chunk_index.shape[0],
                   local_index.shape[0])
    if chunk_size < 1:
        raise ValueError(f"locate_points_regular: chunk_size = {chunk_size} must be >= 1")
    cdef Py_ssize_t bad
    with nogil:
        bad = _locate_regular_core(indices, chunk_size, chunk_index, local_index)
    if bad >= 0:
        raise ValueError(f"locate_points_regular: indices[{bad}] = {indices[bad]} is negative")


def locate_points_offsets(
    const int64_t[::1] indices not None,
    const int64_t[::1] offsets not None,
    int64_t[::1] chunk_index not None,
    int64_t[::1] local_index not None,
) -> None:
    """Write, for every index x, the chunk i with ``offsets[i] <= x < offsets[i + 1]`` and
    ``x - offsets[i]``.

    Parameters
    ----------
    indices : 1-d contiguous int64 array
        Indices along one dimension (each in ``[0, offsets[-1])``).
    offsets : 1-d contiguous int64 array
        Chunk boundaries, as for :func:`project_slice_offsets`.
    chunk_index, local_index : 1-d contiguous writable int64 arrays
        Caller-allocated outputs, same length as ``indices``.

    Raises
    ------
    ValueError
        On mismatched lengths, malformed offsets, or an index out of range (the message names
        the first; outputs before it are written).
    """
    _check_lengths("locate_points_offsets", indices.shape[0], chunk_index.shape[0],
                   local_index.shape[0])
    _check_offsets("locate_points_offsets", offsets)
    cdef Py_ssize_t bad
    with nogil:
        bad = _locate_offsets_core(indices, offsets, chunk_index, local_index)
    if bad >= 0:
        raise ValueError(
            f"locate_points_offsets: indices[{bad}] = {indices[bad]} is out of range "
            f"[0, {offsets[offsets.shape[0] - 1]})"
        )


# -- grouping points by chunk --------------------------------------------------------------------


# The counting sort's two bookkeeping passes over ``starts`` (keys counted into
# ``starts[k + 1]``; placing an element of key k advances ``starts[k]``).


cdef inline void _runs_begin(int64_t[::1] starts, int64_t nkeys) noexcept nogil:
    # prefix sum: starts[k] is where key k's run begins
    cdef Py_ssize_t i
    for i in range(nkeys):
        starts[i + 1] += starts[i]


cdef inline void _runs_restart(int64_t[::1] starts, int64_t nkeys) noexcept nogil:
    # after placing, starts[k] is where key k's run ends: shift back to the run starts
    cdef Py_ssize_t i
    for i in range(nkeys, 0, -1):
        starts[i] = starts[i - 1]
    starts[0] = 0


#: A core's return when its input arrays changed under it between two passes (another
#: thread wrote them while the GIL was released): it stops rather than write out of bounds.
cdef enum:
    _CHANGED = -2


cdef Py_ssize_t _group_core(const int64_t[::1] keys, int64_t nkeys, int64_t[::1] order,
                            int64_t[::1] starts) noexcept nogil:
    """Stable counting sort; returns the position of the first key outside [0, nkeys), or -1
    (then ``order`` and ``starts`` are unspecified)."""
    cdef Py_ssize_t i, n = keys.shape[0]
    cdef int64_t k
    for i in range(nkeys + 1):
        starts[i] = 0
    for i in range(n):  # count key k into starts[k + 1]
        k = keys[i]
        if k < 0 or k >= nkeys:
            return i
        starts[k + 1] += 1
    _runs_begin(starts, nkeys)
    for i in range(n):  # place, in input order (stable); starts[k] ends at the run's end
        k = keys[i]
        if k < 0 or k >= nkeys or starts[k] >= n:  # keys changed since counted (a race)
            return _CHANGED
        order[starts[k]] = i
        starts[k] += 1
    _runs_restart(starts, nkeys)
    return -1


def group_by_key(
    const int64_t[::1] keys not None,
    int64_t nkeys,
    int64_t[::1] order not None,
    int64_t[::1] starts not None,
) -> None:
    """Group positions by key with one stable counting sort, O(len(keys) + nkeys).

    Used to group a coordinate selection's points by the chunk that holds them (key = the
    chunk's C-order linear index), keeping the points' order within each chunk so that
    duplicate writes stay last-one-wins.

    Parameters
    ----------
    keys : 1-d contiguous int64 array
        One key per position, each in ``[0, nkeys)``.
    nkeys : int
        Number of distinct possible keys (>= 0).
    order : 1-d contiguous writable int64 array, same length as ``keys``
        Output: the positions sorted by key, stably (``keys[order]`` is non-decreasing).
    starts : 1-d contiguous writable int64 array of length ``nkeys + 1``
        Output: key k's positions are ``order[starts[k]:starts[k + 1]]``.

    Raises
    ------
    ValueError
        On mismatched lengths, ``nkeys < 0``, or a key outside ``[0, nkeys)`` (the message
        names the first).
    """
    if nkeys < 0:
        raise ValueError(f"group_by_key: nkeys = {nkeys} is negative")
    if order.shape[0] != keys.shape[0]:
        raise ValueError(
            f"group_by_key: len(order) = {order.shape[0]} must equal len(keys) = {keys.shape[0]}"
        )
    if starts.shape[0] != nkeys + 1:
        raise ValueError(
            f"group_by_key: len(starts) = {starts.shape[0]} must be nkeys + 1 = {nkeys + 1}"
        )
    cdef Py_ssize_t bad
    with nogil:
        bad = _group_core(keys, nkeys, order, starts)
    if bad == _CHANGED:
        raise ValueError("group_by_key: keys changed during the call")
    if bad >= 0:
        raise ValueError(f"group_by_key: keys[{bad}] = {keys[bad]} is outside [0, {nkeys})")


@cython.cdivision(True)
cdef inline int64_t _point_key(const int64_t** coords, Py_ssize_t ndim, Py_ssize_t i,
                               const int64_t* chunk, const int64_t* grid, const int64_t* strides,
                               const int* shifts, int64_t* within,
                               Py_ssize_t* bad_axis) noexcept nogil:
    """Point i's C-order chunk number (and its byte offset in that chunk in ``within``); -1 if
    it lies outside the grid (its axis in ``bad_axis``)."""
    cdef Py_ssize_t d
    cdef int64_t x, c, key = 0, off = 0
    for d in range(ndim):
        x = coords[d][i]
        if x < 0:
            c = -1
        elif shifts[d] >= 0:
            c = x >> shifts[d]
        else:
            c = x // chunk[d]
        if c < 0 or c >= grid[d]:
            bad_axis[0] = d
            return -1
        key = key * grid[d] + c
        off += (x - c * chunk[d]) * strides[d]
    within[0] = off
    return key


cdef Py_ssize_t _group_points_core(
    const int64_t** coords, Py_ssize_t ndim, Py_ssize_t n, const int64_t* chunk,
    const int64_t* grid, const int64_t* strides, int64_t nkeys, int64_t[::1] order,
    int64_t[::1] offsets, int64_t[::1] starts, Py_ssize_t* bad_axis,
) noexcept nogil:
    """A stable counting sort that computes each point's key twice (counting, then placing)
    rather than keeping the keys: scratch memory costs more here (fresh pages fault) than the
    arithmetic.  Returns the first point outside the grid (its axis in ``bad_axis``) or -1."""
    cdef Py_ssize_t i, d
    cdef int64_t k, off = 0
    cdef int shifts[64]
    for d in range(ndim):  # a power-of-two chunk length divides by a shift
        shifts[d] = -1
        if chunk[d] & (chunk[d] - 1) == 0:
            shifts[d] = 0
            while (<int64_t>1 << shifts[d]) < chunk[d]:
                shifts[d] += 1
    for i in range(nkeys + 1):
        starts[i] = 0
    for i in range(n):  # count key k into starts[k + 1]
        k = _point_key(coords, ndim, i, chunk, grid, strides, shifts, &off, bad_axis)
        if k < 0:
            return i
        starts[k + 1] += 1
    _runs_begin(starts, nkeys)
    cdef int64_t at
    for i in range(n):  # place, in input order (stable); starts[k] ends at the run's end
        k = _point_key(coords, ndim, i, chunk, grid, strides, shifts, &off, bad_axis)
        if k < 0:  # coordinates changed since counted (a race)
            return _CHANGED
        at = starts[k]
        if at >= n:
            return _CHANGED
        order[at] = i
        offsets[at] = off
        starts[k] = at + 1
    _runs_restart(starts, nkeys)
    return -1


def group_points_regular(
    tuple coords not None,
    const int64_t[::1] chunk_shape not None,
    const int64_t[::1] grid_shape not None,
    int64_t itemsize,
    int64_t[::1] order not None,
    int64_t[::1] offsets not None,
    int64_t[::1] starts not None,
) -> None:
    """Group points of a regular chunk grid by chunk, in one call: what
    :func:`locate_points_regular` per axis, a C-order chunk key per point and
    :func:`group_by_key` do, plus each point's byte offset in its chunk.

    Parameters
    ----------
    coords : tuple of 1-d contiguous int64 arrays, one per dimension (ndim >= 1)
        The points' coordinates, all of one length n, each in ``[0, chunk * grid)`` of its axis.
    chunk_shape, grid_shape : 1-d contiguous int64 arrays of length ndim
        Chunk lengths (>= 1) and chunks per dimension (>= 1).
    itemsize : int
        Bytes per element (>= 1).
    order, offsets : 1-d contiguous writable int64 arrays of length n
        Outputs: the points sorted stably by chunk (C order of the chunk coordinates), and
        ``offsets[j]``, the byte offset of point ``order[j]`` in its C-order chunk.
    starts : 1-d contiguous writable int64 array of length ``prod(grid_shape) + 1``
        Output: chunk k's points are ``order[starts[k]:starts[k + 1]]``.

    Raises
    ------
    ValueError
        On mismatched lengths, a bad chunk or grid length or itemsize, sizes past int64, or a
        coordinate outside the grid (the message names the first, with its axis).
    MemoryError
        If a few bytes cannot be allocated.
    """
    cdef Py_ssize_t ndim = len(coords), d, n, bad, bad_axis = -1
    if ndim < 1 or chunk_shape.shape[0] != ndim or grid_shape.shape[0] != ndim:
        raise ValueError(
            f"group_points_regular: need ndim >= 1 coordinate arrays and as many chunk and "
            f"grid lengths, got {ndim}, {chunk_shape.shape[0]} and {grid_shape.shape[0]}")
    if itemsize < 1:
        raise ValueError(f"group_points_regular: itemsize = {itemsize} must be >= 1")
    views = [None] * ndim
    cdef const int64_t[::1] view
    n = -1
    for d in range(ndim):
        view = coords[d]
        views[d] = view
        if n < 0:
            n = view.shape[0]
        elif view.shape[0] != n:
            raise ValueError(f"group_points_regular: coords[{d}] has {view.shape[0]} points, "
                             f"coords[0] {n}")
    if order.shape[0] != n or offsets.shape[0] != n:
        raise ValueError(f"group_points_regular: order and offsets must have {n} elements")
    cdef int64_t nkeys = 1, stride = itemsize
    cdef int64_t strides[64]
    if ndim > 64:
        raise ValueError(f"group_points_regular: ndim = {ndim} > 64")
    for d in range(ndim - 1, -1, -1):
        if chunk_shape[d] < 1 or grid_shape[d] < 1:
            raise ValueError(f"group_points_regular: axis {d}: chunk length {chunk_shape[d]} "
                             f"and grid length {grid_shape[d]} must be >= 1")
        if (grid_shape[d] > (INT64_MAX - 1) // nkeys
                or chunk_shape[d] > INT64_MAX // stride
                or chunk_shape[d] > INT64_MAX // grid_shape[d]):
            raise ValueError("group_points_regular: the grid's sizes overflow int64")
        strides[d] = stride
        stride *= chunk_shape[d]
        nkeys *= grid_shape[d]
    if starts.shape[0] != nkeys + 1:
        raise ValueError(f"group_points_regular: len(starts) = {starts.shape[0]} must be "
                         f"prod(grid_shape) + 1 = {nkeys + 1}")
    cdef const int64_t** ptrs = <const int64_t**>malloc(ndim * sizeof(int64_t*))
    try:
        if ptrs == NULL:
            raise MemoryError("group_points_regular: no memory")
        for d in range(ndim):
            view = views[d]
            ptrs[d] = &view[0] if n else NULL
        with nogil:
            bad = _group_points_core(ptrs, ndim, n, &chunk_shape[0], &grid_shape[0], strides,
                                     nkeys, order, offsets, starts, &bad_axis)
    finally:
        free(ptrs)
    if bad == _CHANGED:
        raise ValueError("group_points_regular: coordinates changed during the call")
    if bad >= 0:
        view = views[bad_axis]
        raise ValueError(
            f"group_points_regular: coords[{bad_axis}][{bad}] = {view[bad]} is outside "
            f"[0, {chunk_shape[bad_axis] * grid_shape[bad_axis]})")


# -- step-1 boxes --------------------------------------------------------------------------------


cdef inline bint _plain_int(object x):
    # Exactly int: bool (an int subclass) means a mask and numpy scalars take the general path.
    return type(x) is int


cdef inline int64_t _clamp(object v, int64_t length):
    # A slice bound as slice.indices(length) resolves it for step 1 (v: any Python int).
    if v < 0:
        return 0 if v < -length else v + length
    return length if v > length else v


def basic_box(object key, tuple shape):
    """The short path's parser: a basic-indexing ``key`` that selects a non-empty box with
    step 1 on every axis, as ``(start, stop, out_shape, scalar)``; None for anything else,
    which the general parser handles (and refuses, when the key is bad).

    Taken: a tuple (or a single entry) of plain ``int`` entries (negative wraps; out of
    bounds: None), slices whose start/stop are ints or None and whose step is None or 1,
    and at most one ``...``; at most ``len(shape)`` entries besides ``...``, missing trailing
    axes whole.  Not taken: ``None``, other steps, numpy integers, arrays, empty selections.

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
        if _plain_int(k):
            if k < -length or k >= length:
                return None
            lo = k + length if k < 0 else k
            hi = lo + 1
        elif type(k) is slice:
            v = (<slice>k).step
            if v is not None and not (_plain_int(v) and v == 1):
                return None
            v = (<slice>k).start
            if v is None:
                lo = 0
            elif _plain_int(v):
                lo = _clamp(v, length)
            else:
                return None
            v = (<slice>k).stop
            if v is None:
                hi = length
            elif _plain_int(v):
                hi = _clamp(v, length)
            else:
                return None
            out_shape.append(max(hi - lo, 0))
        else:
            return None
        if hi <= lo:
            return None
        start.append(lo)
        stop.append(hi)
    return tuple(start), tuple(stop), tuple(out_shape), (not out_shape and at < 0)


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
    # the boxes changed since they were counted).  Returns 0, or _CHANGED.
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
                return _CHANGED
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
    if status == _CHANGED:
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
