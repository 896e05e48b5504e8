"""Dtype-agnostic strided N-d copy, fill, byte swap and uniformity test, in bytes.

These are the innermost loops of chunk I/O: moving a decoded chunk (or a region of it) into a
region of the output array and back, filling regions with the fill value, swapping byte order
for the ``bytes`` codec's ``endian`` ("Chunk encoding" in the v3 core specification,
https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html), and spotting chunks equal to
the fill value.  Arrays cross the boundary as flat ``uint8`` buffers plus an element size, a
byte offset and byte strides, so one kernel serves every data type, e.g. the element
``a[i, j]`` of a numpy view ``a`` over ``base`` is at byte
``offset + i * a.strides[0] + j * a.strides[1]`` of ``base.view(np.uint8).reshape(-1)``.

Each entry point validates its arguments in O(ndim) with overflow-free integer arithmetic, so
that no argument whatsoever makes the ``noexcept nogil`` core touch a byte outside a buffer,
then releases the GIL.  The cores (``copy_core``, ``fill_core``) and the region check
(``region_fits``) are declared in ``copy.pxd`` for :mod:`zarr3c._kernels.scatter` (many
regions or elements per call), ``layout.pyx`` and ``fileio.pyx``.  Pure-numpy twins are in
:mod:`zarr3c._kernels._reference`.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memset

__all__ = ["byteswap", "copy_strided", "fill_strided", "is_uniform"]

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
    """
    uint16_t zarr3c_bswap16(uint16_t x) noexcept nogil
    uint32_t zarr3c_bswap32(uint32_t x) noexcept nogil


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


cdef int _check_region(
    str fn, str name, Py_ssize_t buflen, int64_t offset,
    const int64_t[::1] strides, const int64_t[::1] shape, int64_t itemsize,
) except -1:
    """Check that a non-empty region lies inside a buffer of ``buflen`` bytes."""
    cdef Py_ssize_t i
    cdef bint ok = region_fits(buflen, offset, _ptr(strides), _ptr(shape), shape.shape[0],
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
    # not pass -funroll-loops), since the loop overhead otherwise dominates a strided run
    # (bench_kernels.CopyStrided "stepped").
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
    # other, so 8 x 8 beats larger blocks (tracked by bench_kernels.TransposeInto and
    # CopyStrided's "block-from-F-order").
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


cdef void fill_core(
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


cdef void byteswap_core(uint8_t* buf, Py_ssize_t nbytes, Py_ssize_t width) noexcept nogil:
    # Shifts and masks on 64-bit lanes rather than bswap instructions: the compiler turns
    # these loops into SIMD code on the baseline instruction set (SSE2 has no byte shuffle),
    # faster than one bswap per word (bench_kernels.Byteswap).
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
        fill_core(dp, dst_offset, dsp, shp, ndim, vp, itemsize)


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
        byteswap_core(bp, nbytes, width)


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
