# The strided copy core, shared with scatter.pyx (many regions or elements per call),
# layout.pyx (transposes are this copy with permuted strides) and fileio.pyx (a box read from a
# file).

from libc.stdint cimport INT64_MIN, int64_t, uint8_t

cdef enum:
    # numpy's own limit (NPY_MAXDIMS in numpy 2); lets the cores keep their per-dimension state
    # on the stack instead of allocating.
    MAX_NDIM = 64

cdef void copy_core(
    const uint8_t* src, int64_t src_offset, const int64_t* src_strides,
    uint8_t* dst, int64_t dst_offset, const int64_t* dst_strides,
    const int64_t* shape, Py_ssize_t ndim, int64_t itemsize,
) noexcept nogil

cdef void fill_core(
    uint8_t* dst, int64_t dst_offset, const int64_t* dst_strides, const int64_t* shape,
    Py_ssize_t ndim, const uint8_t* value, int64_t itemsize,
) noexcept nogil


# Defined here rather than in copy.pyx so that every module checking regions (copy.pyx once
# per call, scatter.pyx once per piece) compiles its own inlinable copy.
cdef inline bint region_fits(
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


# Reverse the byte order of each ``width``-byte word (2, 4, 8 or 16; others: nothing) of
# ``nbytes`` bytes in place; shared with chunks.pyx (a chunk stored in the other byte order).
cdef void byteswap_core(uint8_t* buf, Py_ssize_t nbytes, Py_ssize_t width) noexcept nogil

# Whether ``nbytes`` bytes of ``buf`` repeat the ``width``-byte ``value`` (True when empty);
# shared with writes.pyx (a chunk equal to the fill value is erased, not written).
cdef bint _is_uniform_core(const uint8_t* buf, Py_ssize_t nbytes, const uint8_t* value,
                           Py_ssize_t width) noexcept nogil
