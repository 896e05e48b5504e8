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
