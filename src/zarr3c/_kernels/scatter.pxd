# The checks and copies of scatter.pyx that the batch kernels run per frame (zstd_ctx.pyx) or
# per file (fileio.pyx) of a batch, without the GIL between one and the next.

from libc.stdint cimport int64_t, uint8_t

# The runs of a batch call: which pieces or elements each of its frames or files feeds.
cdef int take_runs(
    str fn, str item, int64_t* runs, const int64_t[::1] starts, const int64_t[::1] stops,
    Py_ssize_t n, Py_ssize_t limit,
) except -1

# Element gathers (copy_elements), one run of elements per frame or file.
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

# Many regions of one source at once (copy_pieces), one run of pieces per inner chunk.
cdef int check_piece_rows(
    str fn, Py_ssize_t n, const int64_t[::1] dst_offsets, const int64_t[:, ::1] dst_strides,
    const int64_t[:, ::1] shapes, Py_ssize_t ndim,
) except -1

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

# Outer-product copies (copy_outer) in bulk, one run of pieces per (inner) chunk: the
# checked arrays of an OuterPieces, which kernels running on threads of their own
# (chunks.pyx) copy and fill through without the GIL.
# How a piece's innermost dimension is copied (OuterRows.inner_run): item by item at its
# offsets, one memcpy per run (consecutive items in both buffers), item by item at constant
# steps (a stepped slice: no offset loads in the loop); or not at all (an empty piece).
cdef enum:
    INNER_ITEMS = 0
    INNER_RUN = 1
    INNER_EMPTY = 2
    INNER_STEPS = 3

cdef struct OuterRows:
    const int64_t* bounds       # piece p's offsets are bounds[p] <= i < bounds[p + 1]
    const int64_t* counts       # (n, ndim): per piece, its dimensions' lengths
    const int64_t* src_offsets
    const int64_t* dst_offsets
    const uint8_t* inner_run    # per piece: how its innermost dimension is copied (INNER_*)
    const int64_t* src_lo       # per piece: the source bytes [src_lo, src_hi) it reads
    const int64_t* src_hi
    Py_ssize_t ndim
    int64_t itemsize

cdef class OuterPieces:
    cdef int64_t* bounds
    cdef int64_t* counts
    cdef int64_t* src_offsets
    cdef int64_t* dst_offsets
    cdef uint8_t* inner_run
    cdef int64_t* src_lo
    cdef int64_t* src_hi
    cdef Py_ssize_t n, ndim, slen, dlen
    cdef int64_t itemsize
    cdef OuterRows rows
    cdef void copy(self, Py_ssize_t p0, Py_ssize_t p1, const uint8_t* src,
                   uint8_t* dst) noexcept nogil

# Pieces p0 <= p < p1 of checked rows (0 <= p0 <= p1 <= n) copied from src, or filled with
# one element, into the buffers they were checked against.
cdef void copy_outer_rows(const OuterRows* rows, Py_ssize_t p0, Py_ssize_t p1,
                          const uint8_t* src, uint8_t* dst) noexcept nogil

cdef void fill_outer_rows(const OuterRows* rows, Py_ssize_t p0, Py_ssize_t p1, uint8_t* dst,
                          const uint8_t* fill) noexcept nogil
