# The shard index check of shard.pyx, for the kernels that read shards without the GIL
# (chunks.pyx): the checks of check_shard_index, in its priority order.

from libc.stdint cimport uint64_t

# ``(offset, nbytes)`` pairs ``e`` of ``n`` entries against a shard of ``size`` bytes (if
# ``known``) whose index is bytes ``[lo, hi)`` (if ``bounded``): 0 valid, else the code of
# check_shard_index with its entries in ``a`` and ``b``; -1 if the sort buffer (only for
# entries out of offset order) cannot be allocated.
cdef int check_index_core(const uint64_t* e, Py_ssize_t n, bint known, uint64_t size,
                          bint bounded, uint64_t lo, uint64_t hi, Py_ssize_t* a,
                          Py_ssize_t* b) noexcept nogil
