"""The native chunk pipeline's writes: whole chunks encoded and stored on native threads.

A write of a selection plans in Python once which chunks it covers entirely (those need no
read: :mod:`zarr3c.array.write`), then :func:`write_chunks` executes them in one call
without the GIL, on the pool's threads (:mod:`.pool`): for each chunk, copy its elements out
of the value into a per-thread scratch chunk, compare it with the fill value, encode it and
store it.  No Python runs between chunks.  Chunks the selection covers only in part keep the
Python path (read, modify, write), which is also this kernel's reference, chunk for chunk
(:func:`zarr3c._kernels._reference.write_chunks`).

The nouns, defined once:

chunk
    Chunk ``c`` holds the region of ``counts[c]`` elements at byte ``src_offsets[c]`` of
    ``src`` (byte strides ``src_strides``, shared by all chunks), from its origin in C order;
    where ``counts[c]`` is less than ``chunk_shape`` (a chunk at the array's end) the rest
    of it is ``fill``.
chain
    How the chunk's ``nbytes`` bytes (C order, the machine's byte order) are encoded: where
    the chain has zarr's ``transpose`` codec (``order``), the chunk is laid out in C order
    of its shape permuted by ``order`` instead (as the codec encodes it); a byte
    swap of ``swap``-byte words (an ``endian`` other than the machine's), one
    ``compressor`` (:data:`NONE`; :data:`ZSTD`: ``zstd_ctx``'s frame at ``level``, with
    zstd's own checksum if ``zstd_checksum``; :data:`BLOSC`: c-blosc v1's frame at
    ``level``, ``blosc`` giving its compressor, shuffle, typesize and blocksize, one
    internal thread, through the address :func:`bind_blosc` was given; :data:`GZIP`: one
    gzip member at ``level`` as ``zlib.compress(data, level, wbits=31)`` writes it, through
    :func:`bind_zlib`'s), then ``checksums`` CRC-32C checksums appended (zarr's ``crc32c``
    codec, each over everything before it).
destination
    Where chunk ``c``'s encoding goes: the file ``dests[c]`` (``paths=True``), written as
    ``LocalStore.set`` writes (a temporary file beside it renamed over it, missing
    directories created); or the writable buffer ``dests[c]`` of at least
    :func:`encoded_cap` bytes, ``sizes[c]`` set to the encoding's length.
status
    Per chunk: :data:`WRITTEN`; :data:`EMPTY` (it equals the fill value and ``skip_empty``:
    nothing written, the caller erases its key); or a negative :data:`FAILED_*` code:
    nothing written (no temporary file left), and the caller writes that chunk through the
    Python path, which reports what is wrong.  The kernel never raises for what it meets in
    the file system.
"""

from cpython.buffer cimport PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport int8_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcpy, memset, strlen

from zarr3c._kernels.checksum cimport crc32c_update
from zarr3c._kernels.copy cimport (
    MAX_NDIM, _is_uniform_core, byteswap_core, copy_core, fill_core, region_fits,
)
from zarr3c._kernels.fileio cimport _write_atomic
from zarr3c._kernels.pool cimport (
    SLOT_CHUNK, SLOT_ENCODED, SLOT_PARTS, SLOT_TMP_PATH, VALUE_CCTX, VALUE_DEFLATE, run_tasks,
    set_thread_value, thread_buffer, thread_value,
)
from zarr3c._kernels.zstd_ctx cimport bound_of, cctx_compress, cctx_free, cctx_new
from zarr3c._kernels.zstream cimport (
    GZIP_WINDOW, Z_DEFAULT_STRATEGY, Z_DEFLATED, Z_FINISH, Z_OK, Z_STREAM_END,
    ZARR3C_HAVE_ZLIB, ZLIB_VERSION, z_stream,
)

import numpy as np

from zarr3c._kernels.zstd_ctx import available as _zstd_available

__all__ = ["BLOSC", "EMPTY", "EncodeArena", "FAILED_ENCODE", "FAILED_IO", "FAILED_MEMORY", "GZIP",
           "NONE", "WRITTEN", "ZSTD", "bind_blosc", "bind_zlib", "blosc_available",
           "encoded_cap", "write_chunks", "write_shards", "zlib_available"]

# compressors (as chunks.pyx numbers them)
NONE = 0
ZSTD = 1
BLOSC = 2
GZIP = 3
# statuses
WRITTEN = 0
EMPTY = 1
FAILED_IO = -1
FAILED_ENCODE = -3
FAILED_MEMORY = -6

cdef enum:
    _NONE = 0
    _ZSTD = 1
    _BLOSC = 2
    _GZIP = 3
    # c-blosc v1's BLOSC_MAX_OVERHEAD (a frame's header), and zlib's DEF_MEM_LEVEL (what
    # Python's zlib.compress deflates with)
    _BLOSC_OVERHEAD = 16
    _MEM_LEVEL = 8
    _WRITTEN = 0
    _EMPTY = 1
    _FAILED_IO = -1
    _FAILED_ENCODE = -3
    _FAILED_MEMORY = -6
    # room in a temporary file's name beyond its destination's path
    _TMP_EXTRA = 96


cdef struct WritePlan:
    const uint8_t* src
    Py_ssize_t slen
    const int64_t* src_offsets
    int64_t src_strides[MAX_NDIM]
    const int64_t* counts
    int64_t chunk_shape[MAX_NDIM]
    int64_t chunk_strides[MAX_NDIM]
    Py_ssize_t ndim
    int64_t itemsize
    int64_t nbytes
    const uint8_t* fill
    bint skip_empty
    int compressor
    int level
    bint zstd_checksum
    # blosc's compressor name, shuffle (0 none, 1 byte, 2 bit), typesize, blocksize (0: auto)
    const char* blosc_cname
    int blosc_shuffle
    int64_t blosc_typesize
    int64_t blosc_blocksize
    int checksums
    int64_t swap
    int64_t cap           # room for an encoding
    # destinations: paths, or buffers of caps[c] bytes
    const char** paths
    uint8_t** bufs
    const int64_t* caps
    int64_t* sizes
    int8_t* status


# c-blosc (v1), as numcodecs bundles it: blosc_compress_ctx (no global state), through the
# address bind_blosc() was given.
ctypedef int (*blosc_compress_ctx_t)(int clevel, int doshuffle, size_t typesize, size_t nbytes,
                                     const void* src, void* dest, size_t destsize,
                                     const char* compressor, size_t blocksize,
                                     int numinternalthreads) noexcept nogil
cdef blosc_compress_ctx_t _blosc_compress = NULL


def bind_blosc(size_t compress_ctx):
    """Use c-blosc's ``blosc_compress_ctx`` at this address for the :data:`BLOSC`
    compressor (binds once per process)."""
    global _blosc_compress
    if not compress_ctx:
        raise ValueError("writes.bind_blosc: the function address is null")
    if _blosc_compress == NULL:
        _blosc_compress = <blosc_compress_ctx_t><void*>compress_ctx


def blosc_available():
    """True once :func:`bind_blosc` has given this module c-blosc."""
    return _blosc_compress != NULL


# zlib (zstream.pxd): deflate through the addresses bind_zlib() was given.
ctypedef int (*deflate_init2_t)(z_stream* strm, int level, int method, int window_bits,
                                int mem_level, int strategy, const char* version,
                                int stream_size) noexcept nogil
ctypedef int (*deflate_t)(z_stream* strm, int flush) noexcept nogil
ctypedef int (*deflate_end_t)(z_stream* strm) noexcept nogil
ctypedef int (*deflate_reset_t)(z_stream* strm) noexcept nogil
cdef deflate_init2_t _deflate_init2 = NULL
cdef deflate_t _deflate = NULL
cdef deflate_end_t _deflate_end = NULL
cdef deflate_reset_t _deflate_reset = NULL


def bind_zlib(size_t deflate_init2, size_t deflate, size_t deflate_end, size_t deflate_reset):
    """Use zlib's ``deflateInit2_``, ``deflate``, ``deflateEnd`` and ``deflateReset`` at these
    addresses for the :data:`GZIP` compressor (binds once per process; nothing where this
    build has no ``zlib.h``, or the library's stream layout is not the header's)."""
    global _deflate_init2, _deflate, _deflate_end, _deflate_reset
    cdef z_stream probe
    if not (deflate_init2 and deflate and deflate_end and deflate_reset):
        raise ValueError("writes.bind_zlib: a function address is null")
    if not ZARR3C_HAVE_ZLIB or _deflate != NULL:
        return
    memset(&probe, 0, sizeof(probe))
    if (<deflate_init2_t><void*>deflate_init2)(&probe, 1, Z_DEFLATED, GZIP_WINDOW, _MEM_LEVEL,
                                               Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                               sizeof(z_stream)) != Z_OK:
        return
    (<deflate_end_t><void*>deflate_end)(&probe)
    _deflate_end = <deflate_end_t><void*>deflate_end
    _deflate_reset = <deflate_reset_t><void*>deflate_reset
    _deflate_init2 = <deflate_init2_t><void*>deflate_init2
    _deflate = <deflate_t><void*>deflate


def zlib_available():
    """True once :func:`bind_zlib` has given this module zlib."""
    return _deflate != NULL


cdef struct Deflater:
    z_stream strm
    int level


cdef void _free_deflater(void* p) noexcept nogil:
    _deflate_end(&(<Deflater*>p).strm)
    free(p)


cdef z_stream* _thread_deflater(int level) noexcept nogil:
    """This thread's deflate stream for gzip members at ``level`` (NULL if none can be
    made); a stream of another level is replaced."""
    cdef Deflater* d = <Deflater*>thread_value(VALUE_DEFLATE)
    if d != NULL and d.level == level:
        return &d.strm
    d = <Deflater*>calloc(1, sizeof(Deflater))
    if d == NULL:
        return NULL
    if _deflate_init2(&d.strm, level, Z_DEFLATED, GZIP_WINDOW, _MEM_LEVEL, Z_DEFAULT_STRATEGY,
                      ZLIB_VERSION, sizeof(z_stream)) != Z_OK:
        free(d)
        return NULL
    d.level = level
    if set_thread_value(VALUE_DEFLATE, d, _free_deflater) != 0:
        _free_deflater(d)
        return NULL
    return &d.strm


cdef Py_ssize_t _gzip_encode(uint8_t* out, int64_t cap, const uint8_t* src, int64_t nbytes,
                             int level) noexcept nogil:
    """``nbytes`` of ``src`` as one gzip member at ``level`` (zlib's header: mtime 0) in
    ``out`` (``cap`` bytes): its length, or -1."""
    cdef z_stream* strm
    cdef int rc
    if nbytes > <int64_t>0xFFFFFFFFU or cap > <int64_t>0xFFFFFFFFU:
        return -1
    strm = _thread_deflater(level)
    if strm == NULL:
        return -1
    strm.next_in, strm.avail_in = <uint8_t*>src, <unsigned int>nbytes
    strm.next_out, strm.avail_out = out, <unsigned int>cap
    rc = _deflate(strm, Z_FINISH)
    cap -= strm.avail_out
    if _deflate_reset(strm) != Z_OK:
        set_thread_value(VALUE_DEFLATE, NULL, NULL)  # (not used again)
        return -1
    return cap if rc == Z_STREAM_END else -1


cdef int64_t _encoded_cap(int64_t nbytes, int compressor, int checksums) noexcept nogil:
    """The most bytes an encoding of ``nbytes`` bytes takes (-1: no zstd bound)."""
    cdef size_t bound
    if compressor == _ZSTD:
        bound = bound_of(<size_t>nbytes)
        if bound == 0:
            return -1
        return <int64_t>bound + 4 * checksums
    if compressor == _BLOSC:
        return nbytes + _BLOSC_OVERHEAD + 4 * checksums
    if compressor == _GZIP:
        # zlib's compressBound (a zlib wrapper), and the larger gzip wrapper's 18 bytes
        return (nbytes + (nbytes >> 12) + (nbytes >> 14) + (nbytes >> 25) + 13 + 18
                + 4 * checksums)
    return nbytes + 4 * checksums


cdef int _check_compressor(str fn, int compressor, int checksums) except -1:
    """Refuse an unknown chain, or a compressor whose library is not bound."""
    if compressor not in (_NONE, _ZSTD, _BLOSC, _GZIP) or not 0 <= checksums <= 8:
        raise ValueError(f"{fn}: unknown chain (compressor {compressor}, {checksums} "
                         "checksums)")
    if compressor == _ZSTD and not _zstd_available():
        raise ValueError(f"{fn}: no libzstd is bound")
    if compressor == _BLOSC and _blosc_compress == NULL:
        raise ValueError(f"{fn}: no c-blosc is bound")
    if compressor == _GZIP and _deflate == NULL:
        raise ValueError(f"{fn}: no zlib is bound")
    return 0


def encoded_cap(int64_t nbytes, int compressor, int checksums):
    """The room a destination buffer needs for an encoding of ``nbytes`` bytes by this
    chain (``compressor``, ``checksums``), as :func:`write_chunks` requires it.

    Raises
    ------
    ValueError
        For a negative size, an unknown chain, or a compressor whose library is not bound.
    """
    if nbytes < 0:
        raise ValueError(f"encoded_cap: no size ({nbytes})")
    _check_compressor("encoded_cap", compressor, checksums)
    cap = _encoded_cap(nbytes, compressor, checksums)
    if cap < 0:
        raise ValueError("encoded_cap: no libzstd is bound")
    return cap


cdef void _free_cctx(void* cctx) noexcept nogil:
    cctx_free(cctx)


cdef void* _thread_cctx() noexcept nogil:
    """This thread's zstd compression context (NULL if none can be made)."""
    cdef void* cctx = thread_value(VALUE_CCTX)
    if cctx == NULL:
        cctx = cctx_new()
        if cctx != NULL and set_thread_value(VALUE_CCTX, cctx, _free_cctx) != 0:
            cctx_free(cctx)
            cctx = NULL
    return cctx


cdef int64_t _encode(WritePlan* plan, uint8_t* chunk, uint8_t* out, int64_t cap
                     ) noexcept nogil:
    """Encode the chunk (``nbytes`` bytes in ``chunk``, which may be changed) into ``out``
    (``cap`` bytes; without a compressor ``out`` must be ``chunk``, with room for the
    checksums after it): the encoding's length, or a negative status."""
    cdef int64_t n = plan.nbytes
    cdef Py_ssize_t got
    cdef uint8_t* crc
    cdef uint64_t value
    cdef int k
    if plan.swap > 1:
        byteswap_core(chunk, plan.nbytes, plan.swap)
    if plan.compressor == _ZSTD:
        got = cctx_compress(_thread_cctx(), out, <size_t>(cap - 4 * plan.checksums), chunk,
                            <size_t>plan.nbytes, plan.level, plan.zstd_checksum)
        if got < 0:
            # (a context that failed is not used again)
            set_thread_value(VALUE_CCTX, NULL, NULL)
            return _FAILED_ENCODE
        n = got
    elif plan.compressor == _BLOSC:
        if plan.nbytes > 0x7FFFFFFF - _BLOSC_OVERHEAD:  # (c-blosc v1's largest buffer)
            return _FAILED_ENCODE
        got = _blosc_compress(plan.level, plan.blosc_shuffle, <size_t>plan.blosc_typesize,
                              <size_t>plan.nbytes, chunk, out,
                              <size_t>(cap - 4 * plan.checksums), plan.blosc_cname,
                              <size_t>plan.blosc_blocksize, 1)
        if got <= 0:
            return _FAILED_ENCODE
        n = got
    elif plan.compressor == _GZIP:
        got = _gzip_encode(out, cap - 4 * plan.checksums, chunk, plan.nbytes, plan.level)
        if got < 0:
            return _FAILED_ENCODE
        n = got
    for k in range(plan.checksums):
        value = crc32c_update(0, out, <size_t>n)
        crc = out + n
        crc[0], crc[1], crc[2], crc[3] = value & 0xFF, (value >> 8) & 0xFF, \
            (value >> 16) & 0xFF, (value >> 24) & 0xFF
        n += 4
    return n


cdef bint _load(WritePlan* plan, uint8_t* chunk, int64_t src_offset,
                const int64_t* counts) noexcept nogil:
    """The chunk's elements into ``chunk`` (C order, fill past ``counts``): False, nothing
    copied, where the region lies outside ``src`` (the arrays changed under the call)."""
    cdef Py_ssize_t d
    cdef bint edge = False
    for d in range(plan.ndim):
        if counts[d] != plan.chunk_shape[d]:
            edge = True
    if not region_fits(plan.slen, src_offset, plan.src_strides, counts, plan.ndim,
                       plan.itemsize):
        return False
    if edge:
        fill_core(chunk, 0, plan.chunk_strides, plan.chunk_shape, plan.ndim, plan.fill,
                  plan.itemsize)
    copy_core(plan.src, src_offset, plan.src_strides, chunk, 0, plan.chunk_strides,
              counts, plan.ndim, plan.itemsize)
    return True


cdef int _store(WritePlan* plan, Py_ssize_t c, const uint8_t** bufs, const int64_t* lens,
                Py_ssize_t nbufs) noexcept nogil:
    """Destination ``c`` written from its parts, one after another: its file, or its buffer
    (:data:`FAILED_ENCODE` where they do not fit in it): a status."""
    cdef Py_ssize_t i
    cdef int64_t at = 0
    cdef size_t tmp_cap
    cdef char* tmp
    if plan.paths == NULL:
        for i in range(nbufs):
            if lens[i] > plan.caps[c] - at:
                return _FAILED_ENCODE
            at += lens[i]
        at = 0
        for i in range(nbufs):
            memcpy(plan.bufs[c] + at, bufs[i], <size_t>lens[i])
            at += lens[i]
        return _WRITTEN
    tmp_cap = strlen(plan.paths[c]) + _TMP_EXTRA
    tmp = <char*>thread_buffer(SLOT_TMP_PATH, tmp_cap)
    if tmp == NULL:
        return _FAILED_MEMORY
    if _write_atomic(plan.paths[c], tmp, tmp_cap, bufs, lens, nbufs) != 0:
        return _FAILED_IO
    return _WRITTEN


cdef void _write_chunk(void* ctx, Py_ssize_t c) noexcept nogil:
    """One task: chunk ``c`` copied out of the value, compared with the fill value, encoded
    and stored."""
    cdef WritePlan* plan = <WritePlan*>ctx
    cdef uint8_t* chunk = thread_buffer(SLOT_CHUNK, <size_t>(plan.nbytes + 4 * plan.checksums))
    cdef uint8_t* out
    cdef const uint8_t* part
    cdef int64_t n
    if chunk == NULL:
        plan.status[c] = _FAILED_MEMORY
        return
    if not _load(plan, chunk, plan.src_offsets[c], plan.counts + c * plan.ndim):
        plan.status[c] = _FAILED_ENCODE
        return
    if plan.skip_empty and _is_uniform_core(chunk, plan.nbytes, plan.fill, plan.itemsize):
        plan.status[c] = _EMPTY
        return
    out = chunk
    if plan.compressor != _NONE:
        out = thread_buffer(SLOT_ENCODED, <size_t>plan.cap)
        if out == NULL:
            plan.status[c] = _FAILED_MEMORY
            return
    n = _encode(plan, chunk, out, plan.cap)
    if n < 0:
        plan.status[c] = <int8_t>n
        return
    plan.sizes[c] = n
    part = out
    plan.status[c] = _store(plan, c, &part, &n, 1)


cdef class _Dests:
    """The destinations of a call, held for it: paths (bytes without NUL) as C strings, or
    writable buffers."""
    cdef const char** paths
    cdef uint8_t** bufs
    cdef Py_buffer* views
    cdef int64_t* caps
    cdef Py_ssize_t held
    cdef list keep

    def __cinit__(self, list dests, bint paths, int64_t cap):
        cdef Py_ssize_t i, n = len(dests)
        self.keep = dests
        self.held = 0
        self.paths = <const char**>calloc(max(1, n), sizeof(char*))
        self.bufs = <uint8_t**>calloc(max(1, n), sizeof(uint8_t*))
        self.views = <Py_buffer*>calloc(max(1, n), sizeof(Py_buffer))
        self.caps = <int64_t*>calloc(max(1, n), sizeof(int64_t))
        if self.paths == NULL or self.bufs == NULL or self.views == NULL or self.caps == NULL:
            raise MemoryError()
        for i in range(n):
            d = dests[i]
            if paths:
                if type(d) is not bytes or b"\0" in <bytes>d or not len(<bytes>d):
                    raise ValueError(f"write_chunks: destination {i} is not a path (bytes "
                                     "without NUL)")
                self.paths[i] = <bytes>d
                continue
            PyObject_GetBuffer(d, &self.views[i], PyBUF_WRITABLE)
            self.held = i + 1
            self.bufs[i] = <uint8_t*>self.views[i].buf
            self.caps[i] = self.views[i].len
            if self.caps[i] < cap:
                raise ValueError(f"write_chunks: destination {i} has {self.caps[i]} bytes, "
                                 f"less than the {cap} an encoding may take")

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.views != NULL:
            for i in range(self.held):
                PyBuffer_Release(&self.views[i])
        free(self.paths)
        free(self.bufs)
        free(self.views)
        free(self.caps)


cdef int _set_plan(WritePlan* plan, str fn, Py_ssize_t n, const uint8_t[::1] src,
                   const int64_t[::1] src_offsets, const int64_t[::1] src_strides,
                   const int64_t[:, ::1] counts, const int64_t[::1] region_shape,
                   const int64_t[::1] chunk_shape, int64_t itemsize,
                   const uint8_t[::1] fill, int compressor, int checksums, int64_t swap,
                   int64_t[::1] sizes, int8_t[::1] status) except -1:
    """Validate a plan of ``n`` regions (chunks or shards, each at most ``region_shape``,
    encoded by chunks of ``chunk_shape``) and its chain, and put them in ``plan``."""
    cdef Py_ssize_t ndim = chunk_shape.shape[0], c, d
    cdef int64_t nbytes = itemsize
    if not 1 <= ndim <= MAX_NDIM or src_strides.shape[0] != ndim or \
            counts.shape[1] != ndim or region_shape.shape[0] != ndim:
        raise ValueError(f"{fn}: the shapes, src_strides and counts must have the same "
                         f"number (1 to {MAX_NDIM}) of dimensions")
    if itemsize < 1 or fill.shape[0] != itemsize:
        raise ValueError(f"{fn}: fill must be one element ({itemsize} bytes)")
    if src_offsets.shape[0] != n or counts.shape[0] != n or sizes.shape[0] != n or \
            status.shape[0] != n:
        raise ValueError(f"{fn}: src_offsets, counts, sizes and status must have one entry "
                         f"per destination ({n})")
    _check_compressor(fn, compressor, checksums)
    for d in range(ndim - 1, -1, -1):
        if chunk_shape[d] < 1 or nbytes > (1 << 62) // chunk_shape[d]:
            raise ValueError(f"{fn}: chunk_shape[{d}] = {chunk_shape[d]} is not a size")
        plan.chunk_strides[d] = nbytes
        nbytes *= chunk_shape[d]
        plan.chunk_shape[d] = chunk_shape[d]
        plan.src_strides[d] = src_strides[d]
    if swap not in (0, 1, 2, 4, 8, 16) or (swap > 1 and nbytes % swap):
        raise ValueError(f"{fn}: swap = {swap} is not a word size of the chunk")
    for c in range(n):
        for d in range(ndim):
            if not 1 <= counts[c, d] <= region_shape[d]:
                raise ValueError(f"{fn}: region {c}: counts[{d}] = {counts[c, d]} is "
                                 "outside its shape")
        if not region_fits(src.shape[0], src_offsets[c], plan.src_strides, &counts[c, 0],
                           ndim, itemsize):
            raise ValueError(f"{fn}: region {c} lies outside src")
    plan.cap = _encoded_cap(nbytes, compressor, checksums)
    plan.src = &src[0] if src.shape[0] else NULL
    plan.slen = src.shape[0]
    plan.src_offsets = &src_offsets[0] if n else NULL
    plan.counts = &counts[0, 0] if n else NULL
    plan.ndim, plan.itemsize, plan.nbytes = ndim, itemsize, nbytes
    plan.fill = &fill[0]
    plan.compressor, plan.checksums, plan.swap = compressor, checksums, swap
    plan.sizes = &sizes[0] if n else NULL
    plan.status = &status[0] if n else NULL
    return 0


cdef int _set_order(WritePlan* plan, str fn, object order) except -1:
    """A transpose codec's ``order`` (None: none): the chunk's strides in ``plan`` become
    those of the transposed chunk, so that loading a chunk lays it out as the codec
    encodes it (after :func:`_set_plan`)."""
    cdef const int64_t[::1] o
    cdef Py_ssize_t ndim = plan.ndim, d, i
    cdef int64_t n = plan.itemsize
    cdef int64_t strides[MAX_NDIM]
    if order is None:
        return 0
    o = order
    if o.shape[0] != ndim:
        raise ValueError(f"{fn}: order must have one entry per dimension ({ndim})")
    seen = [False] * ndim
    for d in range(ndim):
        if not 0 <= o[d] < ndim or seen[o[d]]:
            raise ValueError(f"{fn}: order is not a permutation of the chunk's axes")
        seen[o[d]] = True
    for i in range(ndim - 1, -1, -1):
        strides[i] = n
        n *= plan.chunk_shape[o[i]]
    for i in range(ndim):
        plan.chunk_strides[o[i]] = strides[i]
    return 0


cdef object _set_codec(WritePlan* plan, str fn, int level, bint zstd_checksum,
                       object blosc):
    """The compressor's parameters in ``plan`` (after :func:`_set_plan`), checked: its
    ``level`` (gzip's and blosc's 0-9), zstd's checksum, blosc's ``(cname, shuffle,
    typesize, blocksize)`` (None: not blosc); returns blosc's name, to be held for the
    call."""
    plan.level, plan.zstd_checksum = level, zstd_checksum
    plan.blosc_cname = NULL
    plan.blosc_shuffle, plan.blosc_typesize, plan.blosc_blocksize = 0, 1, 0
    if plan.compressor in (_GZIP, _BLOSC) and not 0 <= level <= 9:
        raise ValueError(f"{fn}: the compressor's level {level} is not 0-9")
    if plan.compressor != _BLOSC:
        return None
    if blosc is None:
        raise ValueError(f"{fn}: a blosc compressor needs its blosc parameters")
    cname, shuffle, typesize, blocksize = blosc
    if type(cname) is not bytes or b"\0" in cname or not cname:
        raise ValueError(f"{fn}: blosc's compressor name must be bytes without NUL")
    if shuffle not in (0, 1, 2) or not 1 <= typesize <= 255 or not 0 <= blocksize < 2**31:
        raise ValueError(f"{fn}: blosc's shuffle, typesize or blocksize is out of range")
    plan.blosc_cname = <bytes>cname
    plan.blosc_shuffle, plan.blosc_typesize, plan.blosc_blocksize = shuffle, typesize, blocksize
    return cname


def write_chunks(
    list dests not None,
    bint paths,
    const uint8_t[::1] src not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    const int64_t[:, ::1] counts not None,
    const int64_t[::1] chunk_shape not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    bint skip_empty,
    int compressor,
    int level,
    bint zstd_checksum,
    int checksums,
    int64_t swap,
    int nthreads,
    int64_t[::1] sizes not None,
    int8_t[::1] status not None,
    object order=None,
    object blosc=None,
):
    """Execute a write plan of whole chunks (see the module for its nouns): each chunk's
    elements copied out of ``src``, compared with ``fill``, encoded and stored at its
    destination, on up to ``nthreads`` threads with the GIL released throughout.
    ``status[c]`` says what became of chunk ``c``, ``sizes[c]`` its encoding's length.

    Raises
    ------
    ValueError
        For a plan that does not hold together (array lengths, a region outside ``src``, a
        chunk's counts outside the chunk shape, an unknown chain, a destination that is not
        a path or a large enough writable buffer): never for the file system.
    """
    cdef WritePlan plan
    cdef _Dests held
    cdef Py_ssize_t nchunks = len(dests)
    _set_plan(&plan, "write_chunks", nchunks, src, src_offsets, src_strides, counts,
              chunk_shape, chunk_shape, itemsize, fill, compressor, checksums, swap, sizes,
              status)
    _set_order(&plan, "write_chunks", order)
    held = _Dests(dests, paths, plan.cap)
    plan.skip_empty = skip_empty
    name = _set_codec(&plan, "write_chunks", level, zstd_checksum, blosc)
    plan.paths = held.paths if paths else NULL
    plan.bufs, plan.caps = held.bufs, held.caps
    with nogil:
        run_tasks(_write_chunk, &plan, nchunks, nthreads)


# -- shards ------------------------------------------------------------------------------------


cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    int pthread_mutex_init(pthread_mutex_t* mutex, const void* attr)
    int pthread_mutex_destroy(pthread_mutex_t* mutex)
    int pthread_mutex_lock(pthread_mutex_t* mutex)
    int pthread_mutex_unlock(pthread_mutex_t* mutex)


cdef extern from *:
    """
    static inline long long zarr3c_count_down(long long* counter) {
        return __atomic_sub_fetch(counter, 1, __ATOMIC_ACQ_REL);
    }
    """
    # One less, atomically, the other threads' writes before theirs visible: the new count.
    long long zarr3c_count_down(long long* counter) noexcept nogil


cdef extern from *:
    """
    #include <sys/mman.h>
    #include <stdint.h>
    /* Transparent huge pages for a large region (as numpy asks for its large arrays): a
       fresh region then takes one page fault per 2 MiB, not per 4 KiB. */
    static void zarr3c_advise_huge(void* p, size_t n) {
    #ifdef MADV_HUGEPAGE
        uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)4095;
        if (hi > lo) madvise((void*)lo, hi - lo, MADV_HUGEPAGE);
    #endif
    }
    """
    void zarr3c_advise_huge(void* p, size_t n) noexcept nogil


cdef struct Arena:
    pthread_mutex_t lock
    uint8_t* base         # one region, sized from the calls before
    int64_t cap
    int64_t used
    uint8_t** extra       # what did not fit in it this call, one buffer each
    Py_ssize_t nextra
    Py_ssize_t room       # entries of extra
    int64_t need          # the bytes asked for this call


cdef uint8_t* _arena_take(Arena* a, int64_t n) noexcept nogil:
    """``n`` bytes of the arena (8-byte aligned), valid until it is started over: from its
    region while it has room, else a buffer of their own; NULL when memory runs out."""
    cdef uint8_t* p = NULL
    cdef uint8_t** extra
    n = (n + 7) // 8 * 8
    pthread_mutex_lock(&a.lock)
    a.need += n
    if a.used + n <= a.cap:
        p = a.base + a.used
        a.used += n
    else:
        if a.nextra == a.room:
            extra = <uint8_t**>realloc(a.extra, (2 * a.room + 8) * sizeof(uint8_t*))
            if extra != NULL:
                a.extra = extra
                a.room = 2 * a.room + 8
        if a.nextra < a.room:
            p = <uint8_t*>PyMem_RawMalloc(<size_t>n)
            if p != NULL:
                a.extra[a.nextra] = p
                a.nextra += 1
    pthread_mutex_unlock(&a.lock)
    return p


cdef void _arena_free_extra(Arena* a) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(a.nextra):
        PyMem_RawFree(a.extra[i])
    a.nextra = 0


cdef class EncodeArena:
    """Memory for one write's encoded inner chunks: :func:`write_shards` takes them from it
    and the shards are written from it.  Each call starts it over: what the call before
    needed becomes one region (an eighth more), reused from call to call, so that a write's
    pages fault in about once, not per shard; what does not fit gets buffers of its own,
    freed at the next start.  Everything is freed with the object.

    Parameters
    ----------
    expect : int, default 0
        What one call will need, where the caller knows it (an uncompressed chain's
        encodings have known sizes): the region's first size.

    Examples
    --------
    >>> arena = EncodeArena(1 << 20)
    >>> arena.nbytes
    0
    """
    cdef Arena state

    def __cinit__(self, int64_t expect=0):
        pthread_mutex_init(&self.state.lock, NULL)
        self.state.base, self.state.extra = NULL, NULL
        self.state.cap = self.state.used = 0
        self.state.need = max(0, expect)  # (the first start allocates it)
        self.state.nextra = self.state.room = 0

    def __dealloc__(self):
        _arena_free_extra(&self.state)
        PyMem_RawFree(self.state.base)
        free(self.state.extra)
        pthread_mutex_destroy(&self.state.lock)

    @property
    def nbytes(self):
        """The bytes of its region."""
        return self.state.cap

    cdef Arena* start(self) except NULL:
        """The arena, started over (its region grown to the last call's need)."""
        cdef Arena* a = &self.state
        cdef int64_t cap
        _arena_free_extra(a)
        if a.need > a.cap:
            cap = a.need + a.need // 8 + 64
            PyMem_RawFree(a.base)
            a.base = <uint8_t*>PyMem_RawMalloc(<size_t>cap)
            a.cap = cap if a.base != NULL else 0
            if a.base != NULL:
                zarr3c_advise_huge(a.base, <size_t>cap)
        a.used = a.need = 0
        return a


cdef struct ShardWrite:
    WritePlan* plan       # the inner chunks' geometry and chain; its regions are the shards
    int64_t per_dim[MAX_NDIM]   # inner chunks per shard, per axis
    int64_t per_shard
    uint8_t** parts       # per inner chunk k of the call: its encoding (NULL: none)
    Arena* arena          # where the encodings are
    long long* remaining  # per shard: its inner chunks not encoded yet
    int64_t* inner_sizes  # per inner chunk: its encoding's length, -1 not stored, < -1 failed
    int64_t index_nbytes
    bint index_at_start
    bint index_checksum
    bint skip_empty


cdef void _encode_one(ShardWrite* sw, Py_ssize_t k) noexcept nogil:
    """Inner chunk ``k`` of the call: copied out of the value (if it holds any of its
    shard's region), compared with the fill value and encoded into the arena."""
    cdef WritePlan* plan = sw.plan
    cdef Py_ssize_t s = k // sw.per_shard, d
    cdef int64_t j = k % sw.per_shard, i, origin
    cdef int64_t extent[MAX_NDIM]
    cdef int64_t offset = plan.src_offsets[s]
    cdef uint8_t* chunk
    cdef uint8_t* out
    cdef int64_t n
    for d in range(plan.ndim - 1, -1, -1):  # (C order of the inner chunks in the shard)
        i = j % sw.per_dim[d]
        j //= sw.per_dim[d]
        origin = i * plan.chunk_shape[d]
        extent[d] = plan.counts[s * plan.ndim + d] - origin
        if extent[d] <= 0:
            sw.inner_sizes[k] = -1  # all fill: not stored
            return
        if extent[d] > plan.chunk_shape[d]:
            extent[d] = plan.chunk_shape[d]
        offset += origin * plan.src_strides[d]
    # Without a compressor the encoding's size is known: the chunk is assembled in its own
    # buffer; else in this thread's scratch, and only the encoding is kept.
    if plan.compressor == _NONE:
        chunk = _arena_take(sw.arena, plan.nbytes + 4 * plan.checksums)
        sw.parts[k] = chunk
    else:
        chunk = thread_buffer(SLOT_CHUNK, <size_t>plan.nbytes)
    if chunk == NULL:
        sw.inner_sizes[k] = _FAILED_MEMORY - 8
        return
    if not _load(plan, chunk, offset, extent):
        sw.inner_sizes[k] = _FAILED_ENCODE - 8
        return
    if _is_uniform_core(chunk, plan.nbytes, plan.fill, plan.itemsize):
        sw.inner_sizes[k] = -1
        return
    out = chunk
    if plan.compressor != _NONE:
        out = thread_buffer(SLOT_ENCODED, <size_t>plan.cap)
        if out == NULL:
            sw.inner_sizes[k] = _FAILED_MEMORY - 8
            return
    n = _encode(plan, chunk, out, plan.cap)
    if n < 0:
        sw.inner_sizes[k] = n - 8
        return
    if plan.compressor != _NONE:
        sw.parts[k] = _arena_take(sw.arena, n)
        if sw.parts[k] == NULL:
            sw.inner_sizes[k] = _FAILED_MEMORY - 8
            return
        memcpy(sw.parts[k], out, <size_t>n)
    sw.inner_sizes[k] = n


cdef inline void _put_u64(uint8_t* p, uint64_t v) noexcept nogil:
    cdef int i
    for i in range(8):
        p[i] = (v >> (8 * i)) & 0xFF


cdef void _write_shard(ShardWrite* sw, Py_ssize_t s) noexcept nogil:
    """Shard ``s``, its inner chunks encoded: its index built and the shard written (its
    stored inner chunks in C order, the index at its start or end)."""
    cdef WritePlan* plan = sw.plan
    cdef int64_t per = sw.per_shard, j, n, stored = 0, total
    cdef int64_t pos = sw.index_nbytes if sw.index_at_start else 0
    # the index, then (8-byte aligned) the parts' pointers and lengths
    cdef size_t room = <size_t>(sw.index_nbytes + 8 + (per + 2) * (sizeof(void*) + 8))
    cdef uint8_t* scratch = thread_buffer(SLOT_PARTS, room)
    cdef uint8_t* index
    cdef const uint8_t** bufs
    cdef int64_t* lens
    cdef Py_ssize_t nbufs = 0
    cdef uint64_t value
    if scratch == NULL:
        plan.status[s] = _FAILED_MEMORY
        return
    index = scratch
    bufs = <const uint8_t**>(scratch + sw.index_nbytes + (8 - sw.index_nbytes % 8) % 8)
    lens = <int64_t*>(<uint8_t*>bufs + (per + 2) * sizeof(void*))
    if <uint8_t*>(lens + per + 2) > scratch + room:
        plan.status[s] = _FAILED_MEMORY  # (never: room counts them)
        return
    if sw.index_at_start:
        bufs[0], lens[0] = index, sw.index_nbytes
        nbufs = 1
    for j in range(per):
        n = sw.inner_sizes[s * per + j]
        if n < -1:
            plan.status[s] = <int8_t>(n + 8)
            return
        if n < 0:
            _put_u64(index + 16 * j, 0xFFFFFFFFFFFFFFFFULL)
            _put_u64(index + 16 * j + 8, 0xFFFFFFFFFFFFFFFFULL)
            continue
        _put_u64(index + 16 * j, <uint64_t>pos)
        _put_u64(index + 16 * j + 8, <uint64_t>n)
        bufs[nbufs], lens[nbufs] = sw.parts[s * per + j], n
        nbufs += 1
        pos += n
        stored += 1
    if sw.index_checksum:
        value = crc32c_update(0, index, <size_t>(16 * per))
        index[16 * per], index[16 * per + 1] = value & 0xFF, (value >> 8) & 0xFF
        index[16 * per + 2], index[16 * per + 3] = (value >> 16) & 0xFF, (value >> 24) & 0xFF
    if not sw.index_at_start:
        bufs[nbufs], lens[nbufs] = index, sw.index_nbytes
        nbufs += 1
    total = pos + (0 if sw.index_at_start else sw.index_nbytes)
    if stored == 0 and sw.skip_empty:
        plan.status[s] = _EMPTY
        return
    plan.sizes[s] = total
    plan.status[s] = _store(plan, s, bufs, lens, nbufs)


cdef void _shard_task(void* ctx, Py_ssize_t k) noexcept nogil:
    """One task: inner chunk ``k`` encoded; its shard written by the thread encoding the
    shard's last one."""
    cdef ShardWrite* sw = <ShardWrite*>ctx
    cdef Py_ssize_t s = k // sw.per_shard
    _encode_one(sw, k)
    if zarr3c_count_down(&sw.remaining[s]) == 0:
        _write_shard(sw, s)


def write_shards(
    list dests not None,
    const uint8_t[::1] src not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    const int64_t[:, ::1] counts not None,
    const int64_t[::1] shard_shape not None,
    const int64_t[::1] chunk_shape not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    bint skip_empty,
    int compressor,
    int level,
    bint zstd_checksum,
    int checksums,
    int64_t swap,
    bint index_at_start,
    bint index_checksum,
    EncodeArena arena not None,
    int nthreads,
    int64_t[::1] sizes not None,
    int8_t[::1] status not None,
    object order=None,
    object blosc=None,
    bint paths=True,
):
    """Execute a write plan of whole shards (see the module): shard ``s``, the file
    ``dests[s]`` (``paths``; else the writable buffer ``dests[s]``, large enough for the
    shard's index and its inner chunks' :func:`encoded_cap` each, or :data:`FAILED_ENCODE`
    for that shard), holds the region of ``counts[s]`` elements at byte ``src_offsets[s]`` of
    ``src`` (the rest fill), in inner chunks of ``chunk_shape`` encoded by the chain; its
    index (``index_checksum``: with a CRC-32C) at its start or end.  ``status[s]`` says what
    became of shard ``s``, ``sizes[s]`` its size.  The inner chunks' encodings are held in
    ``arena`` (started over by the call) until their shard is written: the caller bounds
    the shards per call.

    Raises
    ------
    ValueError
        As :func:`write_chunks`, and for a chunk shape that does not divide the shard shape.
    """
    cdef str fn = "write_shards"
    cdef WritePlan plan
    cdef ShardWrite sw
    cdef Py_ssize_t nshards = len(dests), d
    cdef _Dests held
    _set_plan(&plan, fn, nshards, src, src_offsets, src_strides, counts, shard_shape,
              chunk_shape, itemsize, fill, compressor, checksums, swap, sizes, status)
    _set_order(&plan, fn, order)
    name = _set_codec(&plan, fn, level, zstd_checksum, blosc)
    held = _Dests(dests, paths, 0)  # (before anything is allocated: it may refuse a path)
    plan.paths = held.paths if paths else NULL
    plan.bufs, plan.caps = held.bufs, held.caps
    plan.skip_empty = True
    sw.per_shard = 1
    for d in range(chunk_shape.shape[0]):
        if shard_shape[d] < 1 or shard_shape[d] % chunk_shape[d]:
            raise ValueError(f"{fn}: chunk_shape[{d}] does not divide shard_shape[{d}]")
        sw.per_dim[d] = shard_shape[d] // chunk_shape[d]
        if sw.per_shard > (1 << 40) // sw.per_dim[d]:
            raise ValueError(f"{fn}: too many inner chunks per shard")
        sw.per_shard *= sw.per_dim[d]
    if nshards and sw.per_shard > PY_SSIZE_T_MAX // (nshards * <Py_ssize_t>sizeof(void*)):
        raise ValueError(f"{fn}: too many inner chunks")
    inner_sizes = np.empty(max(1, nshards * sw.per_shard), dtype=np.int64)
    cdef int64_t[::1] inner_v = inner_sizes
    sw.parts = <uint8_t**>calloc(max(1, nshards * sw.per_shard), sizeof(uint8_t*))
    if sw.parts == NULL:
        raise MemoryError()
    sw.plan = &plan
    sw.inner_sizes = &inner_v[0]
    sw.arena = arena.start()
    sw.index_nbytes = 16 * sw.per_shard + (4 if index_checksum else 0)
    sw.index_at_start, sw.index_checksum, sw.skip_empty = index_at_start, index_checksum, \
        skip_empty
    remaining = np.full(max(1, nshards), sw.per_shard, dtype=np.longlong)
    cdef long long[::1] remaining_v = remaining
    sw.remaining = &remaining_v[0]
    try:
        with nogil:
            run_tasks(_shard_task, &sw, nshards * sw.per_shard, nthreads)
    finally:
        free(sw.parts)
