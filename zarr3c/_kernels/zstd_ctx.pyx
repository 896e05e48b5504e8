"""zstd frame decoding with one decompression context per thread, kept between calls.

``numcodecs.zstd.decompress`` makes (and frees) a new zstd context on every call: a fixed
13-20 us in this VM, mostly zstd's CPU feature probe (``cpuid`` traps to the hypervisor),
which a sharded read pays once per inner chunk.  This module calls the same libzstd, the one
numcodecs bundles, through function pointers that :func:`bind` receives (their addresses,
looked up by the caller), and keeps a context per thread.  Nothing here links against zstd
itself: until :func:`bind` succeeds, :func:`available` is False and callers use numcodecs.

:func:`decompress_into` decodes a whole buffer of zstd frames into a buffer whose size is
the capacity zstd may write; zstd bounds every write by that capacity and reads nothing past
the source's length, and the GIL is released for the call.  Its reference is
``numcodecs.zstd.decompress``.
"""

import threading

from libc.stdint cimport uint8_t

__all__ = ["available", "bind", "decompress_into", "version"]

ctypedef void* (*create_dctx_t)() noexcept nogil
ctypedef size_t (*free_dctx_t)(void* dctx) noexcept nogil
ctypedef size_t (*decompress_dctx_t)(void* dctx, void* dst, size_t dst_capacity,
                                     const void* src, size_t src_size) noexcept nogil
ctypedef unsigned (*is_error_t)(size_t code) noexcept nogil

cdef create_dctx_t _create_dctx = NULL
cdef free_dctx_t _free_dctx = NULL
cdef decompress_dctx_t _decompress_dctx = NULL
cdef is_error_t _is_error = NULL
cdef unsigned _version = 0

# Each thread's context lives in a _DCtx kept in this thread-local, so it is freed when the
# thread ends (its locals are dropped).
_local = threading.local()


cdef class _DCtx:
    cdef void* ptr

    def __cinit__(self):
        self.ptr = _create_dctx()
        if self.ptr == NULL:
            raise MemoryError("zstd: cannot create a decompression context")

    def __dealloc__(self):
        if self.ptr != NULL:
            _free_dctx(self.ptr)
            self.ptr = NULL


def bind(size_t create_dctx, size_t free_dctx, size_t decompress_dctx, size_t is_error,
         unsigned version):
    """Use libzstd's ``ZSTD_createDCtx``, ``ZSTD_freeDCtx``, ``ZSTD_decompressDCtx`` and
    ``ZSTD_isError`` at these addresses (``version`` is its ``ZSTD_versionNumber()``).

    Binds once per process: the contexts already made belong to the first library.
    """
    global _create_dctx, _free_dctx, _decompress_dctx, _is_error, _version
    if not (create_dctx and free_dctx and decompress_dctx and is_error):
        raise ValueError("zstd_ctx.bind: a function address is null")
    if _decompress_dctx != NULL:
        return
    _create_dctx = <create_dctx_t><void*>create_dctx
    _free_dctx = <free_dctx_t><void*>free_dctx
    _is_error = <is_error_t><void*>is_error
    _version = version
    _decompress_dctx = <decompress_dctx_t><void*>decompress_dctx


def available():
    """True once :func:`bind` has given this module a libzstd."""
    return _decompress_dctx != NULL


def version():
    """The bound libzstd's ``ZSTD_versionNumber()`` (0 if unbound)."""
    return _version


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the zstd frames in ``src`` into the start of ``dst``.

    Returns the number of bytes decoded, or -1 if zstd refuses the input (empty, corrupt,
    truncated, a checksum mismatch, or more content than ``dst`` holds: the caller's
    ordinary decode then reports why); ``dst`` may then hold anything.
    """
    if _decompress_dctx == NULL:
        raise RuntimeError("zstd_ctx: no libzstd bound")
    cdef _DCtx ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _DCtx()
        _local.dctx = ctx
    cdef size_t src_size = src.shape[0]
    cdef size_t dst_size = dst.shape[0]
    if src_size == 0:  # no frame at all (zstd itself would decode it as nothing)
        return -1
    cdef const void* src_ptr = &src[0]
    # An empty view may have no address: hand zstd a valid pointer with capacity 0 instead.
    cdef uint8_t empty = 0
    cdef void* dst_ptr = &empty
    if dst_size:
        dst_ptr = &dst[0]
    cdef size_t result
    with nogil:
        result = _decompress_dctx(ctx.ptr, dst_ptr, dst_size, src_ptr, src_size)
    if _is_error(result):
        return -1
    return <Py_ssize_t>result
