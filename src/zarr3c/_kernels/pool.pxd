# The native thread pool and per-thread scratch of pool.pyx, for the kernels that execute a
# whole read or write plan without the GIL (chunks.pyx).

from libc.stdint cimport uint8_t

# One task of a job: ``fn(ctx, i)`` for i in [0, n), called on any of the pool's threads.
ctypedef void (*task_fn)(void* ctx, Py_ssize_t i) noexcept nogil
# Frees a per-thread value when its thread ends.
ctypedef void (*value_free_fn)(void* value) noexcept nogil

cdef enum:
    # per-thread scratch buffers (thread_buffer) and values (thread_value)
    SLOTS = 8
    # their owners, one list so that no two kernels share a slot: buffers
    SLOT_STORED = 0     # chunks.pyx: a chunk's stored bytes
    SLOT_DECODED = 1    # chunks.pyx: its decoded elements
    SLOT_CHUNK = 2      # writes.pyx: a chunk's elements about to be encoded
    SLOT_ENCODED = 3    # writes.pyx: their encoding
    SLOT_TMP_PATH = 4   # writes.pyx: a temporary file's name
    SLOT_PARTS = 5      # writes.pyx: a shard's parts (pointers and lengths) and index
    SLOT_INDEX = 6      # chunks.pyx: a shard index's entries, as checked
    SLOT_ORDERED = 7    # chunks.pyx: a transposed chunk's elements put back in C order
    # values
    VALUE_DCTX = 0      # chunks.pyx: a zstd decompression context
    VALUE_ZSTREAM = 1   # chunks.pyx: a zlib inflate stream
    VALUE_CCTX = 2      # writes.pyx: a zstd compression context
    VALUE_DEFLATE = 3   # writes.pyx: a zlib deflate stream for gzip, and its level

cdef int run_tasks(task_fn fn, void* ctx, Py_ssize_t n, int nthreads) noexcept nogil
cdef uint8_t* thread_buffer(int slot, size_t nbytes) noexcept nogil
cdef void* thread_value(int slot) noexcept nogil
cdef int set_thread_value(int slot, void* value, value_free_fn free_fn) noexcept nogil
