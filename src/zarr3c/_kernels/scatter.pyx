"""Many elements or regions copied in one call: element gathers, outer products, pieces.

The batch forms of :mod:`zarr3c._kernels.copy`'s strided copy, for selections whose
per-element or per-region work would otherwise be a Python loop:

- :func:`copy_elements` moves element ``i`` from byte ``src_offsets[i]`` to byte
  ``dst_offsets[i]`` (``vindex`` and ``oindex`` points; one call per chunk);
- :func:`copy_outer` moves the outer product of per-dimension byte offsets (an orthogonal
  selection between a chunk and the output, without one offset per element), and
  :class:`OuterPieces` holds many such products checked once for batch calls;
- :func:`copy_pieces` and :func:`fill_pieces` are many :func:`~zarr3c._kernels.copy.copy_strided`
  / :func:`~zarr3c._kernels.copy.fill_strided` regions per call (the pieces of boxes per
  chunk that :mod:`zarr3c._kernels.boxes` plans).

As in ``copy.pyx``, every entry point checks its arguments before its ``nogil`` core runs, and
each core checks again as it goes, since the arrays may change under it while the GIL is
released.  ``scatter.pxd`` declares the checks and copies that ``zstd_ctx.pyx`` and
``fileio.pyx`` run per frame or file of a batch; the strided cores come from ``copy.pxd``.
Pure-numpy twins are in :mod:`zarr3c._kernels._reference`.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from zarr3c._kernels.copy cimport MAX_NDIM, copy_core, fill_core, region_fits

__all__ = ["OuterPieces", "copy_elements", "copy_outer", "copy_pieces", "fill_pieces"]

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define zarr3c_prefetch_write(p) __builtin_prefetch((p), 1)
    #else
    #define zarr3c_prefetch_write(p) ((void)(p))
    #endif
    """
    void zarr3c_prefetch_write(const void* p) noexcept nogil


# -- the runs of a batch, and element gather/scatter ---------------------------------------------


cdef int take_runs(str fn, str item, int64_t* runs, const int64_t[::1] starts,
                   const int64_t[::1] stops, Py_ssize_t n, Py_ssize_t limit) except -1:
    """Each of ``n`` items' ``[starts[k], stops[k])`` run into ``runs`` (pairs: a private
    copy a batch call reads without the GIL), checked to lie in ``[0, limit]``."""
    cdef Py_ssize_t k
    if starts.shape[0] != n or stops.shape[0] != n:
        raise ValueError(f"{fn}: {n} {item}s, {starts.shape[0]} run starts and "
                         f"{stops.shape[0]} run stops")
    for k in range(n):
        runs[2 * k], runs[2 * k + 1] = starts[k], stops[k]
        if not 0 <= runs[2 * k] <= runs[2 * k + 1] <= limit:
            raise ValueError(f"{fn}: {item} {k}: run [{runs[2 * k]}, {runs[2 * k + 1]}) of "
                             f"{limit}")
    return 0


cdef int check_elements(str fn, str item, Py_ssize_t k, const int64_t* offsets,
                        Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t room, int64_t itemsize,
                        str name) except -1:
    """ValueError unless elements ``lo <= i < hi`` (at byte ``offsets[i]``, ``itemsize``
    bytes each) lie inside ``room`` bytes; the message names ``item k`` of call ``fn``."""
    cdef Py_ssize_t i
    for i in range(lo, hi):
        if offsets[i] < 0 or offsets[i] > room - itemsize:
            raise ValueError(f"{fn}: {item} {k}: element {i} at byte {offsets[i]} reaches "
                             f"outside {name} ({room} bytes)")
    return 0


cdef int check_element_runs(
    str fn, str item, const int64_t* runs, Py_ssize_t n, const int64_t[::1] src_offsets,
    const int64_t[::1] dst_offsets, const int64_t* rooms, Py_ssize_t room, Py_ssize_t dlen,
    int64_t itemsize, str name,
) except -1:
    """The checks of a batch of element copies, one run of elements per source (``runs``:
    ``[start, stop)`` pairs, already checked to lie in the offset arrays): offset arrays of
    one length, ``itemsize >= 1``, and each run's elements inside its source (``rooms[k]``
    bytes, or ``room`` when ``rooms`` is NULL) and inside ``dlen`` bytes of ``dst``."""
    cdef Py_ssize_t k, nelements = src_offsets.shape[0]
    if dst_offsets.shape[0] != nelements:
        raise ValueError(f"{fn}: {nelements} source offsets but {dst_offsets.shape[0]} "
                         f"destination offsets")
    if itemsize < 1:
        raise ValueError(f"{fn}: itemsize = {itemsize} must be >= 1")
    cdef const int64_t* sop = &src_offsets[0] if nelements else NULL
    cdef const int64_t* dop = &dst_offsets[0] if nelements else NULL
    for k in range(n):
        check_elements(fn, item, k, sop, runs[2 * k], runs[2 * k + 1],
                       room if rooms == NULL else rooms[k], itemsize, name)
        check_elements(fn, item, k, dop, runs[2 * k], runs[2 * k + 1], dlen, itemsize, "dst")
    return 0


cdef Py_ssize_t copy_element_run(
    const int64_t* runs, Py_ssize_t k, const uint8_t* src, Py_ssize_t slen,
    const int64_t* src_offsets, uint8_t* dst, Py_ssize_t dlen, const int64_t* dst_offsets,
    int64_t itemsize,
) noexcept nogil:
    """Copy run ``k`` of a batch (see :func:`check_element_runs`) from ``src``: -1, or the
    first element found out of bounds (the arrays changed since they were checked)."""
    cdef Py_ssize_t lo = runs[2 * k], hi = runs[2 * k + 1]
    cdef Py_ssize_t done = copy_elements_core(src, slen, src_offsets + lo, dst, dlen,
                                              dst_offsets + lo, hi - lo, itemsize)
    return -1 if done == hi - lo else lo + done


#: copy_elements releases the GIL for at least this many elements (see there)
cdef enum:
    _NOGIL_ELEMENTS = 4096


cdef int64_t _max_offset(const int64_t* offsets, Py_ssize_t n, int64_t* lowest) noexcept nogil:
    cdef int64_t lo = offsets[0], hi = offsets[0]
    cdef Py_ssize_t i
    for i in range(1, n):
        if offsets[i] < lo:
            lo = offsets[i]
        if offsets[i] > hi:
            hi = offsets[i]
    lowest[0] = lo
    return hi


cdef Py_ssize_t copy_elements_core(const uint8_t* src, Py_ssize_t slen,
                                   const int64_t* src_offsets, uint8_t* dst, Py_ssize_t dlen,
                                   const int64_t* dst_offsets, Py_ssize_t n,
                                   int64_t itemsize) noexcept nogil:
    """Copy the elements in order (so that with repeated destinations the last one written
    wins, numpy's rule for assignments with duplicate indices); each offset is checked as it
    is used, since the arrays may change under a call without the GIL.  Returns the number
    copied: ``n``, or the first element found out of bounds."""
    cdef Py_ssize_t i
    cdef int64_t so, do
    cdef int64_t smax = slen - itemsize, dmax = dlen - itemsize
    for i in range(n):
        so, do = src_offsets[i], dst_offsets[i]
        if so < 0 or so > smax or do < 0 or do > dmax:
            return i
        if itemsize == 2:
            (<uint16_t*>(dst + do))[0] = (<const uint16_t*>(src + so))[0]
        elif itemsize == 4:
            (<uint32_t*>(dst + do))[0] = (<const uint32_t*>(src + so))[0]
        elif itemsize == 8:
            (<uint64_t*>(dst + do))[0] = (<const uint64_t*>(src + so))[0]
        else:
            memcpy(dst + do, src + so, itemsize)
    return n


def copy_elements(
    const uint8_t[::1] src not None,
    const int64_t[::1] src_offsets not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    int64_t itemsize,
) -> None:
    """Gather/scatter: copy element ``i`` (``itemsize`` bytes) from byte offset
    ``src_offsets[i]`` of ``src`` to byte offset ``dst_offsets[i]`` of ``dst``, in order.

    Used for index-array selections (``oindex``/``vindex``): one call per chunk moves every
    selected element.  With repeated destination offsets, the last one wins.

    Raises
    ------
    ValueError
        If the offset arrays differ in length, ``itemsize < 1``, or any element would reach
        outside its buffer (checked over the offsets' minimum and maximum before copying).
    """
    cdef Py_ssize_t n = src_offsets.shape[0]
    cdef int64_t lo = 0, hi = 0
    if dst_offsets.shape[0] != n:
        raise ValueError(
            f"copy_elements: {n} source offsets but {dst_offsets.shape[0]} destination offsets"
        )
    if itemsize < 1:
        raise ValueError(f"copy_elements: itemsize = {itemsize} must be >= 1")
    if n == 0:
        return
    cdef Py_ssize_t slen = src.shape[0], dlen = dst.shape[0]
    cdef const uint8_t* sp = &src[0] if slen else NULL
    cdef uint8_t* dp = &dst[0] if dlen else NULL
    cdef int bad
    # Short runs copy faster than a GIL that other threads want is taken back, so only long
    # runs release it (the point reads of bench_array_io.Read.time_vindex).
    if n >= _NOGIL_ELEMENTS:
        with nogil:
            bad = _copy_elements_checked(sp, slen, &src_offsets[0], dp, dlen, &dst_offsets[0],
                                         n, itemsize, &lo, &hi)
    else:
        bad = _copy_elements_checked(sp, slen, &src_offsets[0], dp, dlen, &dst_offsets[0], n,
                                     itemsize, &lo, &hi)
    if bad == 1:
        raise ValueError(
            f"copy_elements: source offsets span [{lo}, {hi + itemsize}) but src has "
            f"{slen} bytes"
        )
    if bad == 2:
        raise ValueError(
            f"copy_elements: destination offsets span [{lo}, {hi + itemsize}) but dst has "
            f"{dlen} bytes"
        )
    if bad == 3:
        raise ValueError("copy_elements: an offset changed during the call")


cdef int _copy_elements_checked(const uint8_t* src, Py_ssize_t slen, const int64_t* src_offsets,
                                uint8_t* dst, Py_ssize_t dlen, const int64_t* dst_offsets,
                                Py_ssize_t n, Py_ssize_t itemsize, int64_t* lo,
                                int64_t* hi) noexcept nogil:
    """Check both offset arrays against their buffers (1: a source offset out of bounds, 2:
    a destination one; ``lo``/``hi`` their span), then copy: 0, or 3 if an offset changed
    between the check and its use (another thread), where the copy stops."""
    hi[0] = _max_offset(src_offsets, n, lo)
    if lo[0] < 0 or hi[0] + itemsize > slen:
        return 1
    hi[0] = _max_offset(dst_offsets, n, lo)
    if lo[0] < 0 or hi[0] + itemsize > dlen:
        return 2
    return 0 if copy_elements_core(src, slen, src_offsets, dst, dlen, dst_offsets, n,
                                   itemsize) == n else 3


# -- outer-product gather/scatter ----------------------------------------------------------------

#: copy_outer: how many runs ahead it asks for the destination's cache lines
cdef enum:
    _PREFETCH_RUNS = 8


cdef inline void _copy_item(uint8_t* dst, const uint8_t* src, Py_ssize_t itemsize) noexcept nogil:
    if itemsize == 2:
        (<uint16_t*>dst)[0] = (<const uint16_t*>src)[0]
    elif itemsize == 4:
        (<uint32_t*>dst)[0] = (<const uint32_t*>src)[0]
    elif itemsize == 8:
        (<uint64_t*>dst)[0] = (<const uint64_t*>src)[0]
    else:
        memcpy(dst, src, itemsize)


cdef void _copy_outer_core(const uint8_t* src, const int64_t* src_offsets, uint8_t* dst,
                           const int64_t* dst_offsets, const int64_t* counts, Py_ssize_t ndim,
                           Py_ssize_t itemsize, int inner_run) noexcept nogil:
    """The outer product of checked offsets copied from ``src`` to ``dst`` in C order, its
    innermost dimension as ``inner_run`` says; with ``src_offsets`` NULL every element is
    the one item at ``src`` (a fill)."""
    cdef Py_ssize_t idx[MAX_NDIM]
    cdef Py_ssize_t base[MAX_NDIM]
    cdef Py_ssize_t d, k, last = ndim - 1, n_inner
    cdef int64_t so, do
    cdef const int64_t* inner_s
    cdef const int64_t* inner_d
    cdef uint8_t* pf
    cdef const uint8_t* sp
    cdef uint8_t* dp
    cdef int64_t ss = 0, ds = 0
    cdef bint fill = src_offsets == NULL
    if ndim == 0:
        memcpy(dst, src, itemsize)
        return
    base[0] = 0
    for d in range(ndim):
        idx[d] = 0
        if d > 0:
            base[d] = base[d - 1] + counts[d - 1]
    n_inner = counts[last]
    inner_s = src_offsets  # (NULL for a fill: never read then)
    if not fill:
        inner_s = src_offsets + base[last]
    inner_d = dst_offsets + base[last]
    if inner_run == INNER_STEPS:
        ss, ds = inner_s[1] - inner_s[0], inner_d[1] - inner_d[0]
    while True:
        so = 0
        do = 0
        for d in range(last):
            if not fill:
                so += src_offsets[base[d] + idx[d]]
            do += dst_offsets[base[d] + idx[d]]
        if fill:  # (every element the one at src)
            for k in range(n_inner):
                _copy_item(dst + do + inner_d[k], src, itemsize)
        elif inner_run == INNER_STEPS:
            sp, dp = src + so + inner_s[0], dst + do + inner_d[0]
            if itemsize == 2:
                for k in range(n_inner):
                    (<uint16_t*>(dp + k * ds))[0] = (<const uint16_t*>(sp + k * ss))[0]
            elif itemsize == 4:
                for k in range(n_inner):
                    (<uint32_t*>(dp + k * ds))[0] = (<const uint32_t*>(sp + k * ss))[0]
            elif itemsize == 8:
                for k in range(n_inner):
                    (<uint64_t*>(dp + k * ds))[0] = (<const uint64_t*>(sp + k * ss))[0]
            else:
                for k in range(n_inner):
                    memcpy(dp + k * ds, sp + k * ss, itemsize)
        elif inner_run == INNER_RUN:
            if last > 0 and n_inner > 0 and idx[last - 1] + _PREFETCH_RUNS < counts[last - 1]:
                # The run that many rows ahead (in the buffer: every row's offsets were
                # checked): its destination lines are fetched while these copies run, since
                # scattered runs into a large output each wait on memory otherwise (tracked
                # by bench_array_io.Read.time_oindex and compare_peers.py's oindex rows).
                pf = (dst + do + inner_d[0]
                      + dst_offsets[base[last - 1] + idx[last - 1] + _PREFETCH_RUNS]
                      - dst_offsets[base[last - 1] + idx[last - 1]])
                zarr3c_prefetch_write(pf)
                zarr3c_prefetch_write(pf + n_inner * itemsize - 1)
            memcpy(dst + do + inner_d[0], src + so + inner_s[0], n_inner * itemsize)
        else:
            # In order, so that with repeated destinations the last element written wins.
            for k in range(n_inner):
                _copy_item(dst + do + inner_d[k], src + so + inner_s[k], itemsize)
        d = last - 1
        while d >= 0:
            idx[d] += 1
            if idx[d] < counts[d]:
                break
            idx[d] = 0
            d -= 1
        if d < 0:
            return


cdef int _check_outer_offsets(str fn, str name, const int64_t* offsets,
                              const int64_t* counts, Py_ssize_t ndim, Py_ssize_t nbytes,
                              Py_ssize_t itemsize, int64_t* span=NULL) except -1:
    """Every offset >= 0 and the largest element (sum of the per-dimension maxima) inside
    the buffer, summed without overflow; ``span`` (if given) gets the bytes ``[span[0],
    span[1])`` of the buffer the elements cover."""
    cdef Py_ssize_t d, base = 0
    cdef int64_t lo = 0, hi = 0, room = nbytes - itemsize, least = 0
    if room < 0:
        raise ValueError(f"{fn}: {name} has {nbytes} bytes, less than one item ({itemsize})")
    for d in range(ndim):
        with nogil:
            hi = _max_offset(&offsets[base], counts[d], &lo)
        if lo < 0:
            raise ValueError(f"{fn}: {name} offsets of dimension {d} include {lo} < 0")
        if hi > room:
            raise ValueError(
                f"{fn}: {name} offsets reach past its {nbytes} bytes (dimension {d})"
            )
        room -= hi
        least += lo
        base += counts[d]
    if span != NULL:
        span[0], span[1] = least, nbytes - room
    return 0


cdef uint8_t _outer_inner_run(const int64_t* src_offsets, const int64_t* dst_offsets,
                              const int64_t* counts, Py_ssize_t ndim, int64_t total,
                              int64_t itemsize) noexcept nogil:
    """How the innermost dimension is copied: :data:`INNER_RUN` where its offsets are
    consecutive items in both buffers (each innermost run one memcpy), :data:`INNER_STEPS`
    where they advance by a constant step in each buffer (two or more of them), else
    :data:`INNER_ITEMS`."""
    cdef Py_ssize_t d, first
    cdef int64_t ss = 0, ds = 0
    cdef bint run = True, steps = True
    if ndim == 0:
        return INNER_RUN
    first = total - counts[ndim - 1]
    if counts[ndim - 1] >= 2:
        ss = src_offsets[first + 1] - src_offsets[first]
        ds = dst_offsets[first + 1] - dst_offsets[first]
    for d in range(first + 1, total):
        if (src_offsets[d] - src_offsets[d - 1] != itemsize
                or dst_offsets[d] - dst_offsets[d - 1] != itemsize):
            run = False
        if src_offsets[d] - src_offsets[d - 1] != ss or dst_offsets[d] - dst_offsets[d - 1] != ds:
            steps = False
    if run:
        return INNER_RUN
    return INNER_STEPS if steps else INNER_ITEMS


cdef int _check_outer_counts(str fn, const int64_t* counts, Py_ssize_t ndim, int64_t nsrc,
                             int64_t ndst, int64_t* total) except -1:
    """Counts >= 0 whose sum is the length of both offset arrays; ``total`` their sum."""
    cdef Py_ssize_t d
    total[0] = 0
    for d in range(ndim):
        if counts[d] < 0:
            raise ValueError(f"{fn}: counts[{d}] = {counts[d]} is negative")
        if counts[d] > nsrc - total[0]:
            raise ValueError(f"{fn}: src_offsets has fewer than sum(counts) entries")
        total[0] += counts[d]
    if nsrc != total[0] or ndst != total[0]:
        raise ValueError(f"{fn}: sum(counts) = {total[0]} but there are {nsrc} source and "
                         f"{ndst} destination offsets")
    return 0


def copy_outer(
    const uint8_t[::1] src not None,
    const int64_t[::1] src_offsets not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[::1] counts not None,
    int64_t itemsize,
) -> None:
    """Gather/scatter over the outer product of per-dimension offsets, in C order.

    ``src_offsets`` and ``dst_offsets`` hold, one dimension after the other, ``counts[d]``
    byte offsets per dimension ``d``.  Element ``(i0, i1, ...)`` (C order) copies
    ``itemsize`` bytes from byte ``sum_d src_offsets[base_d + i_d]`` of ``src`` to byte
    ``sum_d dst_offsets[base_d + i_d]`` of ``dst`` (``base_d = counts[0] + ... +
    counts[d - 1]``).  This is an orthogonal selection (``oindex``) between a chunk and the
    output without materialising one offset per element; when the innermost dimension's
    offsets are consecutive items in both buffers, each innermost run is one memcpy.  With
    repeated destinations the last element written wins.

    Raises
    ------
    ValueError
        If more than 64 dimensions are given, a count is negative, the offset arrays do not
        hold ``sum(counts)`` entries each, ``itemsize < 1``, an offset is negative, or the
        largest element would reach outside its buffer.
    """
    cdef Py_ssize_t ndim = counts.shape[0], d
    cdef int64_t total = 0
    if ndim > MAX_NDIM:
        raise ValueError(f"copy_outer: {ndim} dimensions (at most {MAX_NDIM})")
    if itemsize < 1:
        raise ValueError(f"copy_outer: itemsize = {itemsize} must be >= 1")
    cdef const int64_t* cp = &counts[0] if ndim > 0 else NULL
    _check_outer_counts("copy_outer", cp, ndim, src_offsets.shape[0], dst_offsets.shape[0],
                        &total)
    for d in range(ndim):
        if counts[d] == 0:
            return
    cdef const int64_t* so = &src_offsets[0] if total > 0 else NULL
    cdef const int64_t* do = &dst_offsets[0] if total > 0 else NULL
    _check_outer_offsets("copy_outer", "src", so, cp, ndim, src.shape[0], itemsize)
    _check_outer_offsets("copy_outer", "dst", do, cp, ndim, dst.shape[0], itemsize)
    cdef uint8_t inner_run = _outer_inner_run(so, do, cp, ndim, total, itemsize)
    cdef const uint8_t* sp = &src[0]
    cdef uint8_t* dp = &dst[0]
    with nogil:
        _copy_outer_core(sp, so, dp, do, cp, ndim, itemsize, inner_run)


cdef class OuterPieces:
    """Many outer-product copies (``copy_outer``'s arguments, one piece after another) as
    private, checked copies, which :meth:`copy` performs without the GIL (the caller's
    arrays may change meanwhile; these may not).

    Piece ``p`` has the per-dimension counts ``counts[p]`` and the offsets ``bounds[p] <= i
    < bounds[p + 1]`` of ``src_offsets`` and ``dst_offsets``; it is checked as
    ``copy_outer`` checks it against a source of ``slen`` and a destination of ``dlen``
    bytes (ValueError naming the piece).  Built once, it serves any number of batch calls
    (``zstd_ctx.decompress_outer``), each of which checks its buffers are that long."""

    def __cinit__(self, str fn, const int64_t[::1] bounds not None,
                  const int64_t[::1] src_offsets not None,
                  const int64_t[::1] dst_offsets not None,
                  const int64_t[:, ::1] counts not None, Py_ssize_t slen, Py_ssize_t dlen,
                  int64_t itemsize):
        cdef Py_ssize_t n = counts.shape[0], ndim = counts.shape[1], p, d
        cdef int64_t total, lo, hi
        cdef int64_t span[2]
        if ndim > MAX_NDIM:
            raise ValueError(f"{fn}: {ndim} dimensions (at most {MAX_NDIM})")
        if itemsize < 1:
            raise ValueError(f"{fn}: itemsize = {itemsize} must be >= 1")
        if bounds.shape[0] != n + 1:
            raise ValueError(f"{fn}: {n} pieces but {bounds.shape[0]} offset bounds")
        if src_offsets.shape[0] != dst_offsets.shape[0]:
            raise ValueError(f"{fn}: {src_offsets.shape[0]} source offsets but "
                             f"{dst_offsets.shape[0]} destination offsets")
        self.n, self.ndim, self.itemsize, self.slen, self.dlen = n, ndim, itemsize, slen, dlen
        cdef Py_ssize_t noffsets = src_offsets.shape[0]
        self.bounds = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.counts = <int64_t*>malloc((n * ndim + 1) * sizeof(int64_t))
        self.src_offsets = <int64_t*>malloc((noffsets + 1) * sizeof(int64_t))
        self.dst_offsets = <int64_t*>malloc((noffsets + 1) * sizeof(int64_t))
        self.inner_run = <uint8_t*>malloc(n + 1)
        self.src_lo = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.src_hi = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if (self.bounds == NULL or self.counts == NULL or self.src_offsets == NULL
                or self.dst_offsets == NULL or self.inner_run == NULL or self.src_lo == NULL
                or self.src_hi == NULL):
            raise MemoryError(fn)
        if noffsets:
            memcpy(self.src_offsets, &src_offsets[0], noffsets * sizeof(int64_t))
            memcpy(self.dst_offsets, &dst_offsets[0], noffsets * sizeof(int64_t))
        if n and ndim:
            memcpy(self.counts, &counts[0, 0], n * ndim * sizeof(int64_t))
        memcpy(self.bounds, &bounds[0], (n + 1) * sizeof(int64_t))
        for p in range(n):
            lo, hi = self.bounds[p], self.bounds[p + 1]
            if not 0 <= lo <= hi <= noffsets:
                raise ValueError(f"{fn}: piece {p}: offsets [{lo}, {hi}) of {noffsets}")
            _check_outer_counts(f"{fn}: piece {p}", self.counts + p * ndim, ndim, hi - lo,
                                hi - lo, &total)
            self.inner_run[p] = INNER_EMPTY
            self.src_lo[p], self.src_hi[p] = 0, 0
            for d in range(ndim):
                if self.counts[p * ndim + d] == 0:
                    break
            else:
                _check_outer_offsets(f"{fn}: piece {p}", "src", self.src_offsets + lo,
                                     self.counts + p * ndim, ndim, slen, itemsize, span)
                _check_outer_offsets(f"{fn}: piece {p}", "dst", self.dst_offsets + lo,
                                     self.counts + p * ndim, ndim, dlen, itemsize)
                self.inner_run[p] = _outer_inner_run(self.src_offsets + lo,
                                                     self.dst_offsets + lo,
                                                     self.counts + p * ndim, ndim, total,
                                                     itemsize)
                self.src_lo[p], self.src_hi[p] = span[0], span[1]
        self.rows = OuterRows(self.bounds, self.counts, self.src_offsets, self.dst_offsets,
                              self.inner_run, self.src_lo, self.src_hi, ndim, itemsize)

    def __dealloc__(self):
        free(self.bounds)
        free(self.counts)
        free(self.src_offsets)
        free(self.dst_offsets)
        free(self.inner_run)
        free(self.src_lo)
        free(self.src_hi)

    cdef void copy(self, Py_ssize_t p0, Py_ssize_t p1, const uint8_t* src,
                   uint8_t* dst) noexcept nogil:
        """Pieces ``p0 <= p < p1`` (the caller checked ``0 <= p0 <= p1 <= n``) from ``src``
        to ``dst``, the buffers the pieces were checked against."""
        copy_outer_rows(&self.rows, p0, p1, src, dst)


cdef void copy_outer_rows(const OuterRows* rows, Py_ssize_t p0, Py_ssize_t p1,
                          const uint8_t* src, uint8_t* dst) noexcept nogil:
    cdef Py_ssize_t p
    cdef int64_t lo
    for p in range(p0, p1):
        if rows.inner_run[p] == INNER_EMPTY:
            continue
        lo = rows.bounds[p]
        _copy_outer_core(src, rows.src_offsets + lo, dst, rows.dst_offsets + lo,
                         rows.counts + p * rows.ndim, rows.ndim, rows.itemsize,
                         rows.inner_run[p])


cdef void fill_outer_rows(const OuterRows* rows, Py_ssize_t p0, Py_ssize_t p1, uint8_t* dst,
                          const uint8_t* fill) noexcept nogil:
    """Every element of pieces ``p0 <= p < p1`` set to the ``itemsize`` bytes at ``fill``
    (the piece's destinations taken as a product, as copy_outer_rows writes them)."""
    cdef Py_ssize_t p
    for p in range(p0, p1):
        if rows.inner_run[p] != INNER_EMPTY:
            _copy_outer_core(fill, NULL, dst, rows.dst_offsets + rows.bounds[p],
                             rows.counts + p * rows.ndim, rows.ndim, rows.itemsize,
                             INNER_ITEMS)


# -- many small regions at once ------------------------------------------------------------------


cdef int check_piece_rows(
    str fn, Py_ssize_t n, const int64_t[::1] dst_offsets, const int64_t[:, ::1] dst_strides,
    const int64_t[:, ::1] shapes, Py_ssize_t ndim,
) except -1:
    """ValueError unless the per-piece arrays have ``n`` rows (``ndim`` entries each) and
    ``ndim`` fits the cores' stack arrays."""
    if dst_offsets.shape[0] != n or dst_strides.shape[0] != n or shapes.shape[0] != n:
        raise ValueError(
            f"{fn}: the offset, stride and shape arrays must have one row per piece "
            f"(got {n}, {dst_offsets.shape[0]}, {dst_strides.shape[0]} and {shapes.shape[0]})"
        )
    if dst_strides.shape[1] != ndim or shapes.shape[1] != ndim:
        raise ValueError(
            f"{fn}: the stride and shape rows must have {ndim} entries "
            f"(got {dst_strides.shape[1]} and {shapes.shape[1]})"
        )
    if ndim > MAX_NDIM:
        raise ValueError(f"{fn}: {ndim} dimensions, at most {MAX_NDIM} are supported")
    return 0


cdef inline bint _extents_positive(const int64_t* shape, Py_ssize_t ndim) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(ndim):
        if shape[i] < 1:
            return False
    return True


cdef int _piece_kind(
    str fn, Py_ssize_t p, const int64_t* shape, Py_ssize_t ndim,
) except -1:
    """Raise on a negative extent of piece ``p``; return 1 if it is empty, else 0."""
    cdef Py_ssize_t i
    cdef int empty = 0
    for i in range(ndim):
        if shape[i] < 0:
            raise ValueError(f"{fn}: piece {p}: shape[{i}] = {shape[i]} is negative")
        if shape[i] == 0:
            empty = 1
    return empty


def copy_pieces(
    const uint8_t[::1] src not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] dst_strides not None,
    const int64_t[:, ::1] shapes not None,
    int64_t itemsize,
) -> None:
    """Many :func:`copy_strided` calls in one: piece ``p`` copies the region of
    ``shapes[p]`` at ``src_offsets[p]`` (strides ``src_strides``, shared by every piece) of
    ``src`` to ``dst_offsets[p]`` (strides ``dst_strides[p]``) of ``dst``.

    Every piece is validated (as copy_strided validates its one region) before any is
    copied; ValueError names the first bad piece.  Empty pieces are skipped.  The GIL is
    released during the copies.
    """
    cdef Py_ssize_t n = src_offsets.shape[0], ndim = src_strides.shape[0], p
    check_piece_rows("copy_pieces", n, dst_offsets, dst_strides, shapes, ndim)
    if itemsize < 1:
        raise ValueError(f"copy_pieces: itemsize = {itemsize} must be >= 1")
    if n == 0:
        return
    cdef const int64_t* dsp = &dst_strides[0, 0] if ndim > 0 else NULL
    cdef const int64_t* shp = &shapes[0, 0] if ndim > 0 else NULL
    cdef Py_ssize_t slen = src.shape[0], dlen = dst.shape[0]
    # One flag per piece: 1 copy, 0 empty (skipped).
    cdef uint8_t[::1] live = bytearray(n)
    # (a private copy of the shared strides: see copy_live_pieces)
    cdef int64_t sst[MAX_NDIM]
    if ndim:
        memcpy(sst, &src_strides[0], ndim * sizeof(int64_t))
    check_pieces("copy_pieces", 0, n, &src_offsets[0], sst, slen, &dst_offsets[0], dsp, shp,
                 dlen, ndim, itemsize, &live[0])
    cdef const uint8_t* sp = &src[0] if slen > 0 else NULL
    cdef uint8_t* dp = &dst[0] if dlen > 0 else NULL
    with nogil:
        p = copy_live_pieces(sp, slen, &src_offsets[0], sst, dp, dlen, &dst_offsets[0], dsp,
                             shp, 0, n, ndim, itemsize, &live[0])
    if p >= 0:
        raise ValueError(f"copy_pieces: piece {p} changed during the call")


cdef int check_pieces(
    str fn, Py_ssize_t p0, Py_ssize_t p1, const int64_t* src_offsets,
    const int64_t* src_strides, Py_ssize_t slen, const int64_t* dst_offsets,
    const int64_t* dst_strides, const int64_t* shapes, Py_ssize_t dlen, Py_ssize_t ndim,
    int64_t itemsize, uint8_t* live,
) except -1:
    """Validate pieces ``p0 <= p < p1`` of a :func:`copy_pieces` call (as copy_strided
    validates its one region): ``live[p]`` 1 to copy, 0 if empty.  ValueError names the
    first bad piece."""
    cdef Py_ssize_t p
    for p in range(p0, p1):
        live[p] = 0
        if src_offsets[p] < 0 or dst_offsets[p] < 0:
            raise ValueError(f"{fn}: piece {p}: negative offset")
        if _piece_kind(fn, p, shapes + p * ndim, ndim):
            continue
        if not region_fits(slen, src_offsets[p], src_strides, shapes + p * ndim, ndim,
                            itemsize):
            raise ValueError(f"{fn}: piece {p}: the region reaches outside src ({slen} bytes)")
        if not region_fits(dlen, dst_offsets[p], dst_strides + p * ndim, shapes + p * ndim,
                            ndim, itemsize):
            raise ValueError(f"{fn}: piece {p}: the region reaches outside dst ({dlen} bytes)")
        live[p] = 1
    return 0


cdef Py_ssize_t copy_live_pieces(
    const uint8_t* src, Py_ssize_t slen, const int64_t* src_offsets,
    const int64_t* src_strides, uint8_t* dst, Py_ssize_t dlen, const int64_t* dst_offsets,
    const int64_t* dst_strides, const int64_t* shapes, Py_ssize_t p0, Py_ssize_t p1,
    Py_ssize_t ndim, int64_t itemsize, const uint8_t* live,
) noexcept nogil:
    """Copy the pieces ``p0 <= p < p1`` that :func:`check_pieces` found live.  Each is
    copied from a private copy of its numbers, checked again: the arrays may change under a
    copy without the GIL (another thread), never what it touches (``src_strides`` must be
    the caller's private copy).  -1, or the first piece found changed (it and those after
    it are not copied)."""
    cdef Py_ssize_t p
    cdef int64_t so, do
    cdef int64_t dst_l[MAX_NDIM]
    cdef int64_t shp_l[MAX_NDIM]
    for p in range(p0, p1):
        if not live[p]:
            continue
        so, do = src_offsets[p], dst_offsets[p]
        if ndim:
            memcpy(dst_l, dst_strides + p * ndim, ndim * sizeof(int64_t))
            memcpy(shp_l, shapes + p * ndim, ndim * sizeof(int64_t))
        if (so < 0 or do < 0 or not _extents_positive(shp_l, ndim)
                or not region_fits(slen, so, src_strides, shp_l, ndim, itemsize)
                or not region_fits(dlen, do, dst_l, shp_l, ndim, itemsize)):
            return p
        copy_core(src, so, src_strides, dst, do, dst_l, shp_l, ndim, itemsize)
    return -1


def fill_pieces(
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] dst_strides not None,
    const int64_t[:, ::1] shapes not None,
    const uint8_t[::1] value not None,
) -> None:
    """Many :func:`fill_strided` calls in one: every element of the region of ``shapes[p]``
    at ``dst_offsets[p]`` (strides ``dst_strides[p]``) of ``dst`` becomes ``value`` (one
    element's bytes; its length is the itemsize).

    Every piece is validated before any is filled; ValueError names the first bad piece.
    The GIL is released during the fills.
    """
    cdef Py_ssize_t n = dst_offsets.shape[0], ndim = shapes.shape[1], p
    cdef int64_t itemsize = value.shape[0]
    check_piece_rows("fill_pieces", n, dst_offsets, dst_strides, shapes, ndim)
    if itemsize < 1:
        raise ValueError("fill_pieces: value is empty (its length is the itemsize, >= 1)")
    if n == 0:
        return
    cdef const int64_t* dsp = &dst_strides[0, 0] if ndim > 0 else NULL
    cdef const int64_t* shp = &shapes[0, 0] if ndim > 0 else NULL
    cdef Py_ssize_t dlen = dst.shape[0]
    cdef uint8_t[::1] live = bytearray(n)
    for p in range(n):
        if dst_offsets[p] < 0:
            raise ValueError(f"fill_pieces: piece {p}: negative offset")
        if _piece_kind("fill_pieces", p, shp + p * ndim, ndim):
            continue
        if not region_fits(dlen, dst_offsets[p], dsp + p * ndim, shp + p * ndim, ndim,
                            itemsize):
            raise ValueError(f"fill_pieces: piece {p}: the region reaches outside dst "
                             f"({dlen} bytes)")
        live[p] = 1
    cdef uint8_t* dp = &dst[0] if dlen > 0 else NULL
    cdef const uint8_t* vp = &value[0]
    # As in copy_pieces: each piece filled from a private copy of its numbers, checked again.
    cdef int64_t do
    cdef int64_t dst_l[MAX_NDIM]
    cdef int64_t shp_l[MAX_NDIM]
    cdef bint changed = False
    with nogil:
        for p in range(n):
            if not live[p]:
                continue
            do = dst_offsets[p]
            if ndim:
                memcpy(dst_l, dsp + p * ndim, ndim * sizeof(int64_t))
                memcpy(shp_l, shp + p * ndim, ndim * sizeof(int64_t))
            if (do < 0 or not _extents_positive(shp_l, ndim)
                    or not region_fits(dlen, do, dst_l, shp_l, ndim, itemsize)):
                changed = True
                break
            fill_core(dp, do, dst_l, shp_l, ndim, vp, itemsize)
    if changed:
        raise ValueError(f"fill_pieces: piece {p} changed during the call")
