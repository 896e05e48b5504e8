"""Dtype-agnostic strided N-d copy, fill, byte swap and uniformity test, in bytes.

These are the innermost loops of chunk I/O: moving a decoded chunk (or a region of it) into a
region of the output array and back, filling regions with the fill value, swapping byte order
for the ``bytes`` codec's ``endian`` (seed 003, "Chunk encoding"), and spotting chunks equal to
the fill value.  Arrays cross the boundary as flat ``uint8`` buffers plus an element size, a
byte offset and byte strides, so one kernel serves every data type, e.g. the element
``a[i, j]`` of a numpy view ``a`` over ``base`` is at byte
``offset + i * a.strides[0] + j * a.strides[1]`` of ``base.view(np.uint8).reshape(-1)``.

Each entry point validates its arguments in O(ndim) with overflow-free integer arithmetic, so
that no argument whatsoever makes the ``noexcept nogil`` core touch a byte outside a buffer,
then releases the GIL.  Pure-numpy twins are in :mod:`zarr3c._kernels._reference`.
"""

cimport cython
from libc.stdint cimport INT64_MIN, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset

__all__ = [
    "copy_strided", "fill_strided", "byteswap", "is_uniform", "copy_elements", "copy_outer",
    "copy_pieces", "fill_pieces", "OuterPieces",
]

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <stdlib.h>
    #define zarr3c_bswap16(x) _byteswap_ushort(x)
    #define zarr3c_bswap32(x) _byteswap_ulong(x)
    #else
    #define zarr3c_bswap16(x) __builtin_bswap16(x)
    #define zarr3c_bswap32(x) __builtin_bswap32(x)
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define zarr3c_prefetch_write(p) __builtin_prefetch((p), 1)
    #else
    #define zarr3c_prefetch_write(p) ((void)(p))
    #endif
    """
    uint16_t zarr3c_bswap16(uint16_t x) noexcept nogil
    uint32_t zarr3c_bswap32(uint32_t x) noexcept nogil
    void zarr3c_prefetch_write(const void* p) noexcept nogil


# -- argument checks (with the GIL; O(ndim)) -----------------------------------------------------


cdef int _check_ndim(str fn, Py_ssize_t ndim, Py_ssize_t nsrc, Py_ssize_t ndst) except -1:
    if nsrc != ndim or ndst != ndim:
        raise ValueError(
            f"{fn}: the stride arrays and the shape must have the same length "
            f"(got {nsrc}, {ndst} and {ndim})"
        )
    if ndim > MAX_NDIM:
        raise ValueError(f"{fn}: {ndim} dimensions, at most {MAX_NDIM} are supported")
    return 0


cdef int _check_shape(str fn, const int64_t[::1] shape) except -1:
    """Raise on a negative extent; return 1 if the region is empty, else 0."""
    cdef Py_ssize_t i
    cdef int empty = 0
    for i in range(shape.shape[0]):
        if shape[i] < 0:
            raise ValueError(f"{fn}: shape[{i}] = {shape[i]} is negative")
        if shape[i] == 0:
            empty = 1
    return empty


cdef int _check_offset(str fn, str name, int64_t offset) except -1:
    if offset < 0:
        raise ValueError(f"{fn}: {name}_offset = {offset} is negative")
    return 0


cdef inline const int64_t* _ptr(const int64_t[::1] a) noexcept:
    # &a[0] is an IndexError in the bounds-checked build when a is empty (ndim 0).
    return &a[0] if a.shape[0] > 0 else NULL


cdef bint _region_fits(
    Py_ssize_t buflen, int64_t offset, const int64_t* strides, const int64_t* shape,
    Py_ssize_t ndim, int64_t itemsize,
) noexcept nogil:
    """Whether a non-empty region (offset >= 0, extents >= 1) lies inside ``buflen`` bytes.

    Rather than computing the lowest and highest byte touched (which can overflow int64 for
    absurd strides), spend two budgets: the bytes below the offset, which negative strides
    use up, and the bytes above the first element, which positive strides use up.  Each step
    compares before it multiplies, so nothing can wrap around.
    """
    cdef Py_ssize_t i
    cdef int64_t below, above, st, n1
    if not (offset <= buflen and itemsize <= buflen - offset):
        return False
    below = offset
    above = buflen - offset - itemsize
    for i in range(ndim):
        n1 = shape[i] - 1
        st = strides[i]
        if n1 == 0 or st == 0:
            continue
        if st == INT64_MIN:
            return False
        if st > 0:
            if st > above // n1:
                return False
            above -= st * n1
        else:
            if -st > below // n1:
                return False
            below -= -st * n1
    return True


cdef int _check_region(
    str fn, str name, Py_ssize_t buflen, int64_t offset,
    const int64_t[::1] strides, const int64_t[::1] shape, int64_t itemsize,
) except -1:
    """Check that a non-empty region lies inside a buffer of ``buflen`` bytes."""
    cdef Py_ssize_t i
    cdef bint ok = _region_fits(buflen, offset, _ptr(strides), _ptr(shape), shape.shape[0],
                                itemsize)
    if not ok:
        # Error path only: exact Python integers for the message.
        lo = hi = int(offset)
        for i in range(shape.shape[0]):
            span = int(strides[i]) * (int(shape[i]) - 1)
            if span < 0:
                lo += span
            else:
                hi += span
        hi += int(itemsize) - 1
        raise ValueError(
            f"{fn}: the region reaches outside {name}: it touches bytes [{lo}, {hi}] "
            f"but {name} has {buflen} bytes"
        )
    return 0



# -- the iteration (nogil) -----------------------------------------------------------------------


cdef Py_ssize_t _normalise(
    const int64_t* shape, const int64_t* src_strides, const int64_t* dst_strides,
    Py_ssize_t ndim, int64_t* src_offset, int64_t* dst_offset,
    int64_t* n, int64_t* s, int64_t* d,
) noexcept nogil:
    """Reduce a (validated) region to the fewest dimensions that iterate the same elements.

    Writes extents and strides into n, s, d (outermost first) and returns their number, or -1
    if the region is empty.  Steps: drop extent-1 dimensions; flip dimensions with a negative
    dst stride (element order is free since src and dst do not overlap) so writes go forward;
    order dimensions by decreasing dst stride so the innermost loop writes the most compact
    run; merge neighbours that are contiguous in both buffers, so that a run of elements
    adjacent in src and in dst becomes one memcpy.
    """
    cdef Py_ssize_t i, j, k = 0
    cdef int64_t ni, si, di
    for i in range(ndim):
        ni = shape[i]
        if ni == 0:
            return -1
        if ni == 1:
            continue
        si = src_strides[i]
        di = dst_strides[i]
        if di < 0:
            dst_offset[0] += di * (ni - 1)
            src_offset[0] += si * (ni - 1)
            di = -di
            si = -si
        # Stable insertion sort, descending dst stride.
        j = k
        while j > 0 and d[j - 1] < di:
            n[j] = n[j - 1]
            s[j] = s[j - 1]
            d[j] = d[j - 1]
            j -= 1
        n[j] = ni
        s[j] = si
        d[j] = di
        k += 1
    if k == 0:
        return 0
    j = 0
    for i in range(1, k):
        # Outer dimension j is inner dimension i repeated n[j] times: one dimension.  The
        # extent guard only matters for zero strides, where nothing else bounds the product.
        if (s[j] == s[i] * n[i] and d[j] == d[i] * n[i]
                and n[j] <= (<int64_t>0x7FFFFFFFFFFFFFFF) // n[i]):
            n[j] *= n[i]
            s[j] = s[i]
            d[j] = d[i]
        else:
            j += 1
            n[j] = n[i]
            s[j] = s[i]
            d[j] = d[i]
    return j + 1


cdef struct _word16:
    uint64_t lo
    uint64_t hi


ctypedef fused word_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    _word16


cdef void _run_words(
    word_t* kind, const uint8_t* src, int64_t so, int64_t ss, uint8_t* dst, int64_t do_,
    int64_t ds, int64_t count,
) noexcept nogil:
    # ``kind`` (always NULL) only selects the specialisation; a fixed-size memcpy compiles
    # to one unaligned load and store per element.  Unrolled by four by hand (setup.py does
    # not pass -funroll-loops): the loop overhead otherwise halves the throughput.
    cdef int64_t k = 0, ss2 = 2 * ss, ss3 = 3 * ss, ds2 = 2 * ds, ds3 = 3 * ds
    while k + 4 <= count:
        memcpy(dst + do_, src + so, sizeof(word_t))
        memcpy(dst + do_ + ds, src + so + ss, sizeof(word_t))
        memcpy(dst + do_ + ds2, src + so + ss2, sizeof(word_t))
        memcpy(dst + do_ + ds3, src + so + ss3, sizeof(word_t))
        so += 4 * ss
        do_ += 4 * ds
        k += 4
    while k < count:
        memcpy(dst + do_, src + so, sizeof(word_t))
        so += ss
        do_ += ds
        k += 1


cdef inline void _copy_run(
    const uint8_t* src, int64_t so, int64_t ss, uint8_t* dst, int64_t do_, int64_t ds,
    int64_t count, int64_t itemsize,
) noexcept nogil:
    cdef int64_t k
    if itemsize == 1:
        _run_words(<uint8_t*>NULL, src, so, ss, dst, do_, ds, count)
    elif itemsize == 2:
        _run_words(<uint16_t*>NULL, src, so, ss, dst, do_, ds, count)
    elif itemsize == 4:
        _run_words(<uint32_t*>NULL, src, so, ss, dst, do_, ds, count)
    elif itemsize == 8:
        _run_words(<uint64_t*>NULL, src, so, ss, dst, do_, ds, count)
    elif itemsize == 16:
        _run_words(<_word16*>NULL, src, so, ss, dst, do_, ds, count)
    else:
        for k in range(count):
            memcpy(dst + do_, src + so, <size_t>itemsize)
            so += ss
            do_ += ds


cdef enum:
    # Block shape of the tiled (transposing) copy: TILE_B elements along the src-compact
    # dimension by TILE_0 along the dst-compact one.  Small blocks matter: chunk extents are
    # usually powers of two, so the TILE_0 src lines of a block are a power-of-two stride
    # apart and land in the same L1 set; more lines than the cache's ways would evict each
    # other (measured: 8 x 8 beats 16 x 16 and 32 x 32 by 2-3x on 64^3 transposes).
    TILE_B = 8
    TILE_0 = 8


cdef void _tiled_words(
    word_t* kind, const uint8_t* src, int64_t so, int64_t sb, int64_t s0,
    uint8_t* dst, int64_t do_, int64_t db, int64_t d0, int64_t nb, int64_t n0,
) noexcept nogil:
    # ``kind`` (always NULL) only selects the specialisation.
    cdef int64_t bb = 0, be, ii = 0, ie, x, k, sp, dp
    while ii < n0:
        ie = ii + TILE_0 if n0 - ii > TILE_0 else n0
        bb = 0
        while bb < nb:
            be = bb + TILE_B if nb - bb > TILE_B else nb
            for x in range(bb, be):
                sp = so + x * sb + ii * s0
                dp = do_ + x * db + ii * d0
                for k in range(ii, ie):
                    memcpy(dst + dp, src + sp, sizeof(word_t))
                    sp += s0
                    dp += d0
            bb = be
        ii = ie


cdef void _copy_tiled(
    const uint8_t* src, int64_t so, int64_t sb, int64_t s0,
    uint8_t* dst, int64_t do_, int64_t db, int64_t d0,
    int64_t nb, int64_t n0, int64_t itemsize,
) noexcept nogil:
    """Copy an nb x n0 plane in small blocks (a cache-blocked transpose).

    The inner dimension (stride d0) is compact in dst and dimension b (stride sb) in src; a
    block reads a few short src runs and writes a few short dst runs that stay in L1, where
    the plain loop would miss the cache on every src read.
    """
    cdef int64_t bb = 0, be, ii, m, x
    if itemsize == 1:
        _tiled_words(<uint8_t*>NULL, src, so, sb, s0, dst, do_, db, d0, nb, n0)
    elif itemsize == 2:
        _tiled_words(<uint16_t*>NULL, src, so, sb, s0, dst, do_, db, d0, nb, n0)
    elif itemsize == 4:
        _tiled_words(<uint32_t*>NULL, src, so, sb, s0, dst, do_, db, d0, nb, n0)
    elif itemsize == 8:
        _tiled_words(<uint64_t*>NULL, src, so, sb, s0, dst, do_, db, d0, nb, n0)
    elif itemsize == 16:
        _tiled_words(<_word16*>NULL, src, so, sb, s0, dst, do_, db, d0, nb, n0)
    else:
        ii = 0
        while ii < n0:
            m = TILE_0 if n0 - ii > TILE_0 else n0 - ii
            bb = 0
            while bb < nb:
                be = bb + TILE_B if nb - bb > TILE_B else nb
                for x in range(bb, be):
                    _copy_run(src, so + x * sb + ii * s0, s0, dst, do_ + x * db + ii * d0, d0,
                              m, itemsize)
                bb = be
            ii += TILE_0


cdef inline int64_t _abs64(int64_t v) noexcept nogil:
    return -v if v < 0 else v


cdef void copy_core(
    const uint8_t* src, int64_t src_offset, const int64_t* src_strides,
    uint8_t* dst, int64_t dst_offset, const int64_t* dst_strides,
    const int64_t* shape, Py_ssize_t ndim, int64_t itemsize,
) noexcept nogil:
    """Copy a validated region; offsets are integers so no pointer ever leaves a buffer."""
    cdef int64_t n[MAX_NDIM]
    cdef int64_t s[MAX_NDIM]
    cdef int64_t d[MAX_NDIM]
    cdef int64_t idx[MAX_NDIM]
    cdef int64_t so = src_offset, do_ = dst_offset
    cdef Py_ssize_t nd, j, inner, b, nouter
    cdef int64_t n0, s0, d0, nb = 0, sb = 0, db = 0, tn, ts, td
    cdef bint contiguous, tiled = False
    nd = _normalise(shape, src_strides, dst_strides, ndim, &so, &do_, n, s, d)
    if nd < 0:
        return
    if nd == 0:
        memcpy(dst + do_, src + so, <size_t>itemsize)
        return
    inner = nd - 1
    n0 = n[inner]
    s0 = s[inner]
    d0 = d[inner]
    contiguous = s0 == itemsize and d0 == itemsize
    nouter = inner
    if (not contiguous and inner >= 1 and n0 >= TILE_0 and _abs64(s0) >= 64
            and _abs64(s0) * n0 > 16384):
        # The innermost (dst-compact) loop jumps through src, over more than fits in L1
        # (n0 * |s0| is at most twice a buffer's length, validated: no overflow).  If another
        # dimension is more compact in src, pair the two and copy in blocks.
        b = 0
        for j in range(1, inner):
            if _abs64(s[j]) < _abs64(s[b]):
                b = j
        if _abs64(s[b]) < _abs64(s0) and n[b] >= TILE_B:
            tn = n[b]
            ts = s[b]
            td = d[b]
            for j in range(b, inner - 1):
                n[j] = n[j + 1]
                s[j] = s[j + 1]
                d[j] = d[j + 1]
            n[inner - 1] = tn
            s[inner - 1] = ts
            d[inner - 1] = td
            nb = tn
            sb = ts
            db = td
            tiled = True
            nouter = inner - 1
    for j in range(nouter):
        idx[j] = 0
    while True:
        if tiled:
            _copy_tiled(src, so, sb, s0, dst, do_, db, d0, nb, n0, itemsize)
        elif contiguous:
            memcpy(dst + do_, src + so, <size_t>(n0 * itemsize))
        else:
            _copy_run(src, so, s0, dst, do_, d0, n0, itemsize)
        j = nouter - 1
        while j >= 0:
            idx[j] += 1
            so += s[j]
            do_ += d[j]
            if idx[j] < n[j]:
                break
            idx[j] = 0
            so -= s[j] * n[j]
            do_ -= d[j] * n[j]
            j -= 1
        if j < 0:
            break


cdef void _fill_words(
    word_t* kind, uint8_t* dst, int64_t do_, int64_t ds, int64_t count, const uint8_t* value,
) noexcept nogil:
    # ``kind`` (always NULL) only selects the specialisation.
    cdef int64_t k
    cdef word_t v
    memcpy(&v, value, sizeof(word_t))
    if ds == <int64_t>sizeof(word_t):
        # A compact run: constant-step stores the compiler vectorises.
        dst += do_
        for k in range(count):
            memcpy(dst + k * <int64_t>sizeof(word_t), &v, sizeof(word_t))
    else:
        for k in range(count):
            memcpy(dst + do_, &v, sizeof(word_t))
            do_ += ds


cdef inline void _fill_run(
    uint8_t* dst, int64_t do_, int64_t ds, int64_t count, const uint8_t* value,
    int64_t itemsize,
) noexcept nogil:
    cdef int64_t k
    if itemsize == 1:
        _fill_words(<uint8_t*>NULL, dst, do_, ds, count, value)
    elif itemsize == 2:
        _fill_words(<uint16_t*>NULL, dst, do_, ds, count, value)
    elif itemsize == 4:
        _fill_words(<uint32_t*>NULL, dst, do_, ds, count, value)
    elif itemsize == 8:
        _fill_words(<uint64_t*>NULL, dst, do_, ds, count, value)
    elif itemsize == 16:
        _fill_words(<_word16*>NULL, dst, do_, ds, count, value)
    else:
        for k in range(count):
            memcpy(dst + do_, value, <size_t>itemsize)
            do_ += ds


cdef void _fill_core(
    uint8_t* dst, int64_t dst_offset, const int64_t* dst_strides, const int64_t* shape,
    Py_ssize_t ndim, const uint8_t* value, int64_t itemsize,
) noexcept nogil:
    cdef int64_t n[MAX_NDIM]
    cdef int64_t s[MAX_NDIM]
    cdef int64_t d[MAX_NDIM]
    cdef int64_t idx[MAX_NDIM]
    cdef int64_t so = 0, do_ = dst_offset
    cdef Py_ssize_t nd, j, inner
    cdef int64_t n0, d0, k
    cdef bint contiguous, one_byte = True
    for k in range(1, itemsize):
        if value[k] != value[0]:
            one_byte = False
            break
    # The "src" strides are the dst strides, ignored afterwards.
    nd = _normalise(shape, dst_strides, dst_strides, ndim, &so, &do_, n, s, d)
    if nd < 0:
        return
    if nd == 0:
        memcpy(dst + do_, value, <size_t>itemsize)
        return
    inner = nd - 1
    n0 = n[inner]
    d0 = d[inner]
    contiguous = d0 == itemsize
    for j in range(inner):
        idx[j] = 0
    while True:
        if contiguous and one_byte:
            # Zero and other byte-uniform fill values (the common case): memset.
            memset(dst + do_, value[0], <size_t>(n0 * itemsize))
        else:
            _fill_run(dst, do_, d0, n0, value, itemsize)
        j = inner - 1
        while j >= 0:
            idx[j] += 1
            do_ += d[j]
            if idx[j] < n[j]:
                break
            idx[j] = 0
            do_ -= d[j] * n[j]
            j -= 1
        if j < 0:
            break


cdef inline uint64_t _swap_bytes_in_16(uint64_t v) noexcept nogil:
    return ((v << 8) & 0xFF00FF00FF00FF00ULL) | ((v >> 8) & 0x00FF00FF00FF00FFULL)


cdef inline uint64_t _swap_bytes_in_32(uint64_t v) noexcept nogil:
    v = _swap_bytes_in_16(v)
    return ((v << 16) & 0xFFFF0000FFFF0000ULL) | ((v >> 16) & 0x0000FFFF0000FFFFULL)


cdef inline uint64_t _swap_bytes_in_64(uint64_t v) noexcept nogil:
    v = _swap_bytes_in_32(v)
    return (v << 32) | (v >> 32)


cdef void _byteswap_core(uint8_t* buf, Py_ssize_t nbytes, Py_ssize_t width) noexcept nogil:
    # Shifts and masks on 64-bit lanes rather than bswap instructions: the compiler turns
    # these loops into SIMD code on the baseline instruction set (SSE2 has no byte shuffle),
    # about twice as fast as one bswap per word.
    cdef Py_ssize_t i, nlanes = nbytes // 8
    cdef uint16_t v16
    cdef uint32_t v32
    cdef uint64_t v64, w64
    if width == 2:
        for i in range(nlanes):
            memcpy(&v64, buf + 8 * i, 8)
            v64 = _swap_bytes_in_16(v64)
            memcpy(buf + 8 * i, &v64, 8)
        for i in range(nlanes * 8, nbytes, 2):
            memcpy(&v16, buf + i, 2)
            v16 = zarr3c_bswap16(v16)
            memcpy(buf + i, &v16, 2)
    elif width == 4:
        for i in range(nlanes):
            memcpy(&v64, buf + 8 * i, 8)
            v64 = _swap_bytes_in_32(v64)
            memcpy(buf + 8 * i, &v64, 8)
        for i in range(nlanes * 8, nbytes, 4):
            memcpy(&v32, buf + i, 4)
            v32 = zarr3c_bswap32(v32)
            memcpy(buf + i, &v32, 4)
    elif width == 8:
        for i in range(nlanes):
            memcpy(&v64, buf + 8 * i, 8)
            v64 = _swap_bytes_in_64(v64)
            memcpy(buf + 8 * i, &v64, 8)
    elif width == 16:
        # Reversing 16 bytes = swapping the two halves and reversing each.
        for i in range(0, nlanes, 2):
            memcpy(&v64, buf + 8 * i, 8)
            memcpy(&w64, buf + 8 * i + 8, 8)
            v64 = _swap_bytes_in_64(v64)
            w64 = _swap_bytes_in_64(w64)
            memcpy(buf + 8 * i, &w64, 8)
            memcpy(buf + 8 * i + 8, &v64, 8)


cdef bint _is_uniform_core(const uint8_t* buf, Py_ssize_t nbytes, const uint8_t* value,
                           Py_ssize_t width) noexcept nogil:
    # buf repeats value iff it starts with value and is periodic with period width, i.e.
    # buf[width:] == buf[:-width]: two memcmp calls, both vectorised by libc.
    if nbytes == 0:
        return True
    if memcmp(buf, value, <size_t>width) != 0:
        return False
    return memcmp(buf + width, buf, <size_t>(nbytes - width)) == 0


# -- entry points --------------------------------------------------------------------------------


def copy_strided(
    const uint8_t[::1] src not None,
    int64_t src_offset,
    const int64_t[::1] src_strides not None,
    uint8_t[::1] dst not None,
    int64_t dst_offset,
    const int64_t[::1] dst_strides not None,
    const int64_t[::1] shape not None,
    int64_t itemsize,
) -> None:
    """Copy a strided N-d region of elements from one byte buffer into another.

    Element ``idx`` (a tuple of ``len(shape)`` indices) of the region is the ``itemsize``
    bytes at ``offset + sum(idx[i] * strides[i])`` of its buffer; every element of the dst
    region receives the matching element of the src region.

    Parameters
    ----------
    src : 1-d contiguous uint8 array (read-only arrays and bytes-backed arrays are accepted)
        The source bytes.
    src_offset : int
        Byte offset of element ``(0, ..., 0)`` in ``src`` (>= 0).
    src_strides : 1-d contiguous int64 array
        Byte strides of the source region; negative (reversed views) and zero (broadcast)
        strides are allowed.
    dst : 1-d contiguous writable uint8 array
        The destination bytes; must not overlap the src region.
    dst_offset : int
        Byte offset of element ``(0, ..., 0)`` in ``dst`` (>= 0).
    dst_strides : 1-d contiguous int64 array
        Byte strides of the destination region (may be negative).
    shape : 1-d contiguous int64 array
        Elements per dimension (>= 0); an empty array copies one element.
    itemsize : int
        Bytes per element (>= 1).

    Raises
    ------
    ValueError
        If the lengths of the strides and shape differ, an extent, offset or itemsize is out
        of range, or a non-empty region reaches outside its buffer.

    Notes
    -----
    Runs of elements contiguous in both buffers are copied with one ``memcpy``.  The GIL is
    released during the copy.
    """
    cdef Py_ssize_t ndim = shape.shape[0]
    _check_ndim("copy_strided", ndim, src_strides.shape[0], dst_strides.shape[0])
    if itemsize < 1:
        raise ValueError(f"copy_strided: itemsize = {itemsize} must be >= 1")
    _check_offset("copy_strided", "src", src_offset)
    _check_offset("copy_strided", "dst", dst_offset)
    if _check_shape("copy_strided", shape):
        return
    _check_region("copy_strided", "src", src.shape[0], src_offset, src_strides, shape, itemsize)
    _check_region("copy_strided", "dst", dst.shape[0], dst_offset, dst_strides, shape, itemsize)
    cdef const uint8_t* sp = &src[0]
    cdef uint8_t* dp = &dst[0]
    cdef const int64_t* ssp = _ptr(src_strides)
    cdef const int64_t* dsp = _ptr(dst_strides)
    cdef const int64_t* shp = _ptr(shape)
    with nogil:
        copy_core(sp, src_offset, ssp, dp, dst_offset, dsp, shp, ndim, itemsize)


def fill_strided(
    uint8_t[::1] dst not None,
    int64_t dst_offset,
    const int64_t[::1] dst_strides not None,
    const int64_t[::1] shape not None,
    const uint8_t[::1] value not None,
) -> None:
    """Set every element of a strided N-d region of a byte buffer to one element value.

    Parameters
    ----------
    dst : 1-d contiguous writable uint8 array
        The destination bytes.
    dst_offset : int
        Byte offset of element ``(0, ..., 0)`` (>= 0).
    dst_strides : 1-d contiguous int64 array
        Byte strides (may be negative).
    shape : 1-d contiguous int64 array
        Elements per dimension (>= 0).
    value : 1-d contiguous uint8 array
        The element's bytes; its length (>= 1) is the itemsize.

    Raises
    ------
    ValueError
        On mismatched lengths, a negative extent or offset, an empty value, or a non-empty
        region reaching outside ``dst``.

    Notes
    -----
    Contiguous runs with a byte-uniform value (zero, in particular) are one ``memset``.
    The GIL is released during the fill.
    """
    cdef Py_ssize_t ndim = shape.shape[0]
    cdef int64_t itemsize = value.shape[0]
    _check_ndim("fill_strided", ndim, dst_strides.shape[0], dst_strides.shape[0])
    if itemsize < 1:
        raise ValueError("fill_strided: value is empty (its length is the itemsize, >= 1)")
    _check_offset("fill_strided", "dst", dst_offset)
    if _check_shape("fill_strided", shape):
        return
    _check_region("fill_strided", "dst", dst.shape[0], dst_offset, dst_strides, shape, itemsize)
    cdef uint8_t* dp = &dst[0]
    cdef const uint8_t* vp = &value[0]
    cdef const int64_t* dsp = _ptr(dst_strides)
    cdef const int64_t* shp = _ptr(shape)
    with nogil:
        _fill_core(dp, dst_offset, dsp, shp, ndim, vp, itemsize)


def byteswap(uint8_t[::1] buf not None, Py_ssize_t width) -> None:
    """Reverse the byte order of each consecutive ``width``-byte word of ``buf``, in place.

    Parameters
    ----------
    buf : 1-d contiguous writable uint8 array
        The bytes; ``len(buf)`` must be a multiple of ``width``.
    width : int
        Word size in bytes: 1 (a no-op), 2, 4, 8 or 16.  For complex data types pass the
        component width (``itemsize // 2``).

    Raises
    ------
    ValueError
        If ``width`` is not one of the above or does not divide ``len(buf)``.
    """
    cdef Py_ssize_t nbytes = buf.shape[0]
    if width != 1 and width != 2 and width != 4 and width != 8 and width != 16:
        raise ValueError(f"byteswap: width = {width} is not one of 1, 2, 4, 8, 16")
    if nbytes % width != 0:
        raise ValueError(f"byteswap: len(buf) = {nbytes} is not a multiple of width = {width}")
    if nbytes == 0 or width == 1:
        return
    cdef uint8_t* bp = &buf[0]
    with nogil:
        _byteswap_core(bp, nbytes, width)


def is_uniform(const uint8_t[::1] buf not None, const uint8_t[::1] value not None) -> bool:
    """Whether ``buf`` is ``len(buf) // len(value)`` repetitions of ``value``, bit for bit.

    Parameters
    ----------
    buf : 1-d contiguous uint8 array (read-only accepted)
        The bytes to test; an empty buffer is uniform.
    value : 1-d contiguous uint8 array
        One element's bytes (length >= 1, dividing ``len(buf)``).

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If ``value`` is empty or its length does not divide ``len(buf)``.
    """
    cdef Py_ssize_t nbytes = buf.shape[0], width = value.shape[0]
    cdef bint result
    if width < 1:
        raise ValueError("is_uniform: value is empty (its length is the itemsize, >= 1)")
    if nbytes % width != 0:
        raise ValueError(
            f"is_uniform: len(buf) = {nbytes} is not a multiple of len(value) = {width}"
        )
    if nbytes == 0:
        return True
    cdef const uint8_t* bp = &buf[0]
    cdef const uint8_t* vp = &value[0]
    with nogil:
        result = _is_uniform_core(bp, nbytes, vp, width)
    return result


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
    # A few hundred elements take a microsecond or two: less than retaking a GIL that other
    # threads want, so only long runs release it.
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

#: Most dimensions copy_outer takes (numpy's own limit); its scratch arrays live on the stack.
cdef enum:
    _MAX_NDIM = 64

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
                           Py_ssize_t itemsize, bint inner_run) noexcept nogil:
    cdef Py_ssize_t idx[_MAX_NDIM]
    cdef Py_ssize_t base[_MAX_NDIM]
    cdef Py_ssize_t d, k, last = ndim - 1, n_inner
    cdef int64_t so, do
    cdef const int64_t* inner_s
    cdef const int64_t* inner_d
    cdef uint8_t* pf
    if ndim == 0:
        memcpy(dst, src, itemsize)
        return
    base[0] = 0
    for d in range(ndim):
        idx[d] = 0
        if d > 0:
            base[d] = base[d - 1] + counts[d - 1]
    n_inner = counts[last]
    inner_s = src_offsets + base[last]
    inner_d = dst_offsets + base[last]
    while True:
        so = 0
        do = 0
        for d in range(last):
            so += src_offsets[base[d] + idx[d]]
            do += dst_offsets[base[d] + idx[d]]
        if inner_run:
            if last > 0 and n_inner > 0 and idx[last - 1] + _PREFETCH_RUNS < counts[last - 1]:
                # The run that many rows ahead (in the buffer: every row's offsets were
                # checked): its destination lines are fetched while these copies run, since
                # scattered runs into a large output each wait on memory otherwise
                # (measured: oindex of 10^6 runs of 128 bytes 5-12% faster).
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
                              Py_ssize_t itemsize) except -1:
    """Every offset >= 0 and the largest element (sum of the per-dimension maxima) inside
    the buffer, summed without overflow."""
    cdef Py_ssize_t d, base = 0
    cdef int64_t lo = 0, hi = 0, room = nbytes - itemsize
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
        base += counts[d]
    return 0


cdef bint _outer_inner_run(const int64_t* src_offsets, const int64_t* dst_offsets,
                           const int64_t* counts, Py_ssize_t ndim, int64_t total,
                           int64_t itemsize) noexcept nogil:
    """Whether the innermost dimension's offsets are consecutive items in both buffers (each
    innermost run is then one memcpy)."""
    cdef Py_ssize_t d
    if ndim == 0:
        return True
    for d in range(total - counts[ndim - 1] + 1, total):
        if (src_offsets[d] - src_offsets[d - 1] != itemsize
                or dst_offsets[d] - dst_offsets[d - 1] != itemsize):
            return False
    return True


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
    if ndim > _MAX_NDIM:
        raise ValueError(f"copy_outer: {ndim} dimensions (at most {_MAX_NDIM})")
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
    cdef bint inner_run = _outer_inner_run(so, do, cp, ndim, total, itemsize)
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
        if ndim > _MAX_NDIM:
            raise ValueError(f"{fn}: {ndim} dimensions (at most {_MAX_NDIM})")
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
        if (self.bounds == NULL or self.counts == NULL or self.src_offsets == NULL
                or self.dst_offsets == NULL or self.inner_run == NULL):
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
            self.inner_run[p] = 2  # (empty: nothing to copy)
            for d in range(ndim):
                if self.counts[p * ndim + d] == 0:
                    break
            else:
                _check_outer_offsets(f"{fn}: piece {p}", "src", self.src_offsets + lo,
                                     self.counts + p * ndim, ndim, slen, itemsize)
                _check_outer_offsets(f"{fn}: piece {p}", "dst", self.dst_offsets + lo,
                                     self.counts + p * ndim, ndim, dlen, itemsize)
                self.inner_run[p] = _outer_inner_run(self.src_offsets + lo,
                                                     self.dst_offsets + lo,
                                                     self.counts + p * ndim, ndim, total,
                                                     itemsize)

    def __dealloc__(self):
        free(self.bounds)
        free(self.counts)
        free(self.src_offsets)
        free(self.dst_offsets)
        free(self.inner_run)

    cdef void copy(self, Py_ssize_t p0, Py_ssize_t p1, const uint8_t* src,
                   uint8_t* dst) noexcept nogil:
        """Pieces ``p0 <= p < p1`` (the caller checked ``0 <= p0 <= p1 <= n``) from ``src``
        to ``dst``, the buffers the pieces were checked against."""
        cdef Py_ssize_t p
        cdef int64_t lo
        for p in range(p0, p1):
            if self.inner_run[p] == 2:
                continue
            lo = self.bounds[p]
            _copy_outer_core(src, self.src_offsets + lo, dst, self.dst_offsets + lo,
                             self.counts + p * self.ndim, self.ndim, self.itemsize,
                             self.inner_run[p])


# -- many small regions at once ------------------------------------------------------------------


cdef int _check_pieces(
    str fn, Py_ssize_t n, const int64_t[::1] dst_offsets, const int64_t[:, ::1] dst_strides,
    const int64_t[:, ::1] shapes, Py_ssize_t ndim,
) except -1:
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
    _check_pieces("copy_pieces", n, dst_offsets, dst_strides, shapes, ndim)
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
        if not _region_fits(slen, src_offsets[p], src_strides, shapes + p * ndim, ndim,
                            itemsize):
            raise ValueError(f"{fn}: piece {p}: the region reaches outside src ({slen} bytes)")
        if not _region_fits(dlen, dst_offsets[p], dst_strides + p * ndim, shapes + p * ndim,
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
                or not _region_fits(slen, so, src_strides, shp_l, ndim, itemsize)
                or not _region_fits(dlen, do, dst_l, shp_l, ndim, itemsize)):
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
    _check_pieces("fill_pieces", n, dst_offsets, dst_strides, shapes, ndim)
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
        if not _region_fits(dlen, dst_offsets[p], dsp + p * ndim, shp + p * ndim, ndim,
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
                    or not _region_fits(dlen, do, dst_l, shp_l, ndim, itemsize)):
                changed = True
                break
            _fill_core(dp, do, dst_l, shp_l, ndim, vp, itemsize)
    if changed:
        raise ValueError(f"fill_pieces: piece {p} changed during the call")
