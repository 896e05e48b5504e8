"""Per-dimension projections of selections onto a chunk grid, and points grouped by chunk.

The regular grid of the v3 core specification
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html: chunk index = coordinate //
chunk size) and the rectilinear grid
(https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear, e.g.
``{"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[10, 20, 5],
4]}}``).  A dimension's chunking reaches the kernels either as a regular ``chunk_size``
(arithmetic) or as an int64 ``offsets`` array of length nchunks + 1 with ``offsets[0] == 0``,
non-decreasing, chunk ``i`` covering ``[offsets[i], offsets[i + 1])`` (searched by binary
search; a chunk of length 0 holds nothing and is never reported).

A slice projection is an int64 array of shape (n, 4), one row per chunk holding at least one
selected element, in increasing chunk order: ``(chunk index, index in the chunk of the first
selected element, number of selected elements in the chunk, position in the selection of the
first one)``.  For start=5, step=3, count=4 (elements 5, 8, 11, 14) and chunk_size=4::

    [[1, 1, 1, 0],     # 5 in chunk 1 at 1
     [2, 0, 2, 1],     # 8, 11 in chunk 2 from 0
     [3, 2, 1, 3]]     # 14 in chunk 3 at 2

Points (coordinate selections) are located per dimension (``locate_points_*``) and grouped by
the chunk that holds them with one stable counting sort (``group_by_key``, or
``group_points_regular`` doing all of it at once on a regular grid).  Step-1 boxes cut per
chunk are in :mod:`zarr3c._kernels.boxes`.
"""

cimport cython
from libc.stdint cimport INT64_MAX, int64_t
from libc.stdlib cimport free, malloc

import numpy as np

__all__ = [
    "group_by_key",
    "group_points_regular",
    "locate_points_offsets",
    "locate_points_regular",
    "project_slice_offsets",
    "project_slice_regular",
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
            return CHANGED
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
    if bad == CHANGED:
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
            return CHANGED
        at = starts[k]
        if at >= n:
            return CHANGED
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
    if bad == CHANGED:
        raise ValueError("group_points_regular: coordinates changed during the call")
    if bad >= 0:
        view = views[bad_axis]
        raise ValueError(
            f"group_points_regular: coords[{bad_axis}][{bad}] = {view[bad]} is outside "
            f"[0, {chunk_shape[bad_axis] * grid_shape[bad_axis]})")
