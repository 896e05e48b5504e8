# The copy core, shared with layout.pyx (transposes are this copy with permuted strides).

from libc.stdint cimport int64_t, uint8_t

cdef enum:
    # numpy's own limit (NPY_MAXDIMS in numpy 2); lets the cores keep their per-dimension state
    # on the stack instead of allocating.
    MAX_NDIM = 64

cdef void copy_core(
    const uint8_t* src, int64_t src_offset, const int64_t* src_strides,
    uint8_t* dst, int64_t dst_offset, const int64_t* dst_strides,
    const int64_t* shape, Py_ssize_t ndim, int64_t itemsize,
) noexcept nogil

# Many regions of one source at once (copy_pieces), shared with zstd_ctx.pyx, which decodes
# each inner chunk of a batch and copies its pieces out without the GIL in between.
cdef int check_pieces(
    str fn, Py_ssize_t p0, Py_ssize_t p1, const int64_t* src_offsets,
    const int64_t* src_strides, Py_ssize_t slen, const int64_t* dst_offsets,
    const int64_t* dst_strides, const int64_t* shapes, Py_ssize_t dlen, Py_ssize_t ndim,
    int64_t itemsize, uint8_t* live,
) except -1

cdef Py_ssize_t copy_live_pieces(
    const uint8_t* src, Py_ssize_t slen, const int64_t* src_offsets,
    const int64_t* src_strides, uint8_t* dst, Py_ssize_t dlen, const int64_t* dst_offsets,
    const int64_t* dst_strides, const int64_t* shapes, Py_ssize_t p0, Py_ssize_t p1,
    Py_ssize_t ndim, int64_t itemsize, const uint8_t* live,
) noexcept nogil

cdef int _check_pieces(
    str fn, Py_ssize_t n, const int64_t[::1] dst_offsets, const int64_t[:, ::1] dst_strides,
    const int64_t[:, ::1] shapes, Py_ssize_t ndim,
) except -1

# The runs of a batch call (zstd_ctx.pyx, fileio.pyx): which pieces or elements each of its
# frames or files feeds.
cdef int take_runs(
    str fn, str item, int64_t* runs, const int64_t[::1] starts, const int64_t[::1] stops,
    Py_ssize_t n, Py_ssize_t limit,
) except -1

# Element gathers (copy_elements), shared with zstd_ctx.pyx and fileio.pyx, which decode or
# read each chunk of a batch and copy its elements out without the GIL in between.
cdef int check_element_runs(
    str fn, str item, const int64_t* runs, Py_ssize_t n, const int64_t[::1] src_offsets,
    const int64_t[::1] dst_offsets, const int64_t* rooms, Py_ssize_t room, Py_ssize_t dlen,
    int64_t itemsize, str name,
) except -1

cdef Py_ssize_t copy_element_run(
    const int64_t* runs, Py_ssize_t k, const uint8_t* src, Py_ssize_t slen,
    const int64_t* src_offsets, uint8_t* dst, Py_ssize_t dlen, const int64_t* dst_offsets,
    int64_t itemsize,
) noexcept nogil

# Outer-product copies (copy_outer) in bulk, shared with zstd_ctx.pyx, which decodes each inner
# chunk of a batch and copies its pieces out without the GIL in between.
cdef class OuterPieces:
    cdef int64_t* bounds
    cdef int64_t* counts
    cdef int64_t* src_offsets
    cdef int64_t* dst_offsets
    cdef uint8_t* inner_run
    cdef Py_ssize_t n, ndim, slen, dlen
    cdef int64_t itemsize
    cdef void copy(self, Py_ssize_t p0, Py_ssize_t p1, const uint8_t* src,
                   uint8_t* dst) noexcept nogil
