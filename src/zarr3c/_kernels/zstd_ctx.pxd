# libzstd as bound by zstd_ctx.pyx, for kernels that decode or encode without the GIL on
# threads of their own (chunks.pyx keeps a context per thread).  Each returns NULL / -1 when
# no libzstd is bound or zstd refuses.

from libc.stdint cimport uint8_t

cdef void* dctx_new() noexcept nogil
cdef void dctx_free(void* dctx) noexcept nogil
# Decode the zstd frames of src[:n] into dst[:cap]: the bytes decoded, or -1.
cdef Py_ssize_t dctx_decompress(void* dctx, uint8_t* dst, size_t cap, const uint8_t* src,
                                size_t n) noexcept nogil
# Decode the one zstd frame src[:n], which declares cap bytes of content and no checksum,
# block after block into dst[:cap] until at least need bytes are decoded: the bytes decoded
# (dst past them holds anything), or -1 where the frame is not such or zstd refuses (the
# caller decodes it whole then, which reports why).
cdef Py_ssize_t dctx_decompress_prefix(void* dctx, uint8_t* dst, size_t cap,
                                       const uint8_t* src, size_t n,
                                       size_t need) noexcept nogil
cdef void* cctx_new() noexcept nogil
cdef void cctx_free(void* cctx) noexcept nogil
# Encode src[:n] as one frame (numcodecs' parameters, the bound library) into dst[:cap]: its size, or -1 (a
# context that failed must be freed, not used again).
cdef Py_ssize_t cctx_compress(void* cctx, uint8_t* dst, size_t cap, const uint8_t* src,
                              size_t n, int level, bint checksum) noexcept nogil
# ZSTD_compressBound, or 0 when unbound.
cdef size_t bound_of(size_t n) noexcept nogil
