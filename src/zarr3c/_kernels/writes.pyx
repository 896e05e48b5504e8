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
    How the chunk's ``nbytes`` bytes (C order, the machine's byte order) are encoded: a byte
    swap of ``swap``-byte words (an ``endian`` other than the machine's), one
    ``compressor`` (:data:`NONE`, or :data:`ZSTD`: numcodecs' frame at ``level``, with
    zstd's own checksum if ``zstd_checksum``), then ``checksums`` CRC-32C checksums
    appended (zarr's ``crc32c`` codec, each over everything before it).
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
from libc.stdint cimport int8_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, strlen

from zarr3c._kernels.checksum cimport crc32c_update
from zarr3c._kernels.copy cimport (
    MAX_NDIM, _is_uniform_core, byteswap_core, copy_core, fill_core, region_fits,
)
from zarr3c._kernels.fileio cimport _write_atomic
from zarr3c._kernels.pool cimport (
    SLOT_CHUNK, SLOT_ENCODED, SLOT_TMP_PATH, VALUE_CCTX, run_tasks, set_thread_value,
    thread_buffer, thread_value,
)
from zarr3c._kernels.zstd_ctx cimport bound_of, cctx_compress, cctx_free, cctx_new

from zarr3c._kernels.zstd_ctx import available as _zstd_available

__all__ = ["EMPTY", "FAILED_ENCODE", "FAILED_IO", "FAILED_MEMORY", "NONE", "WRITTEN", "ZSTD",
           "encoded_cap", "write_chunks"]

# compressors (as chunks.pyx numbers them)
NONE = 0
ZSTD = 1
# statuses
WRITTEN = 0
EMPTY = 1
FAILED_IO = -1
FAILED_ENCODE = -3
FAILED_MEMORY = -6

cdef enum:
    _NONE = 0
    _ZSTD = 1
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
    int checksums
    int64_t swap
    int64_t cap           # room for an encoding
    # destinations: paths, or buffers of caps[c] bytes
    const char** paths
    uint8_t** bufs
    const int64_t* caps
    uint64_t salt
    int64_t* sizes
    int8_t* status


cdef int64_t _encoded_cap(int64_t nbytes, int compressor, int checksums) noexcept nogil:
    """The most bytes an encoding of ``nbytes`` bytes takes (-1: no zstd bound)."""
    cdef size_t bound
    if compressor == _ZSTD:
        bound = bound_of(<size_t>nbytes)
        if bound == 0:
            return -1
        return <int64_t>bound + 4 * checksums
    return nbytes + 4 * checksums


def encoded_cap(int64_t nbytes, int compressor, int checksums):
    """The room a destination buffer needs for an encoding of ``nbytes`` bytes by this
    chain (``compressor``, ``checksums``), as :func:`write_chunks` requires it.

    Raises
    ------
    ValueError
        For a negative size, an unknown chain, or zstd without a bound libzstd.
    """
    if nbytes < 0 or compressor not in (_NONE, _ZSTD) or not 0 <= checksums <= 8:
        raise ValueError(f"encoded_cap: no chain or size ({nbytes}, {compressor}, "
                         f"{checksums})")
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


cdef int64_t _encode(WritePlan* plan, uint8_t* chunk, uint8_t** encoded) noexcept nogil:
    """Encode the chunk (``nbytes`` bytes in ``chunk``, which has room for the checksums
    after them and may be changed): its length, with ``encoded`` pointing at it, or a
    negative status."""
    cdef uint8_t* out = chunk
    cdef int64_t n = plan.nbytes
    cdef Py_ssize_t got
    cdef uint8_t* crc
    cdef uint64_t value
    cdef int k
    if plan.swap > 1:
        byteswap_core(chunk, plan.nbytes, plan.swap)
    if plan.compressor == _ZSTD:
        out = thread_buffer(SLOT_ENCODED, <size_t>plan.cap)
        if out == NULL:
            return _FAILED_MEMORY
        got = cctx_compress(_thread_cctx(), out, <size_t>plan.cap, chunk, <size_t>plan.nbytes,
                            plan.level, plan.zstd_checksum)
        if got < 0:
            # (a context that failed is not used again)
            set_thread_value(VALUE_CCTX, NULL, NULL)
            return _FAILED_ENCODE
        n = got
    for k in range(plan.checksums):
        value = crc32c_update(0, out, <size_t>n)
        crc = out + n
        crc[0], crc[1], crc[2], crc[3] = value & 0xFF, (value >> 8) & 0xFF, \
            (value >> 16) & 0xFF, (value >> 24) & 0xFF
        n += 4
    encoded[0] = out
    return n


cdef void _write_chunk(void* ctx, Py_ssize_t c) noexcept nogil:
    """One task: chunk ``c`` copied out of the value, compared with the fill value, encoded
    and stored."""
    cdef WritePlan* plan = <WritePlan*>ctx
    cdef const int64_t* counts = plan.counts + c * plan.ndim
    cdef uint8_t* chunk = thread_buffer(SLOT_CHUNK, <size_t>(plan.nbytes + 4 * plan.checksums))
    cdef uint8_t* encoded = NULL
    cdef char* tmp
    cdef size_t tmp_cap
    cdef int64_t n
    cdef Py_ssize_t d
    cdef bint edge = False
    if chunk == NULL:
        plan.status[c] = _FAILED_MEMORY
        return
    for d in range(plan.ndim):
        if counts[d] != plan.chunk_shape[d]:
            edge = True
    if edge:
        fill_core(chunk, 0, plan.chunk_strides, plan.chunk_shape, plan.ndim, plan.fill,
                  plan.itemsize)
    if not region_fits(plan.slen, plan.src_offsets[c], plan.src_strides, counts, plan.ndim,
                       plan.itemsize):
        plan.status[c] = _FAILED_ENCODE  # (the arrays changed under the call)
        return
    copy_core(plan.src, plan.src_offsets[c], plan.src_strides, chunk, 0, plan.chunk_strides,
              counts, plan.ndim, plan.itemsize)
    if plan.skip_empty and _is_uniform_core(chunk, plan.nbytes, plan.fill, plan.itemsize):
        plan.status[c] = _EMPTY
        return
    n = _encode(plan, chunk, &encoded)
    if n < 0:
        plan.status[c] = <int8_t>n
        return
    if plan.paths == NULL:
        if n > plan.caps[c]:
            plan.status[c] = _FAILED_ENCODE
            return
        memcpy(plan.bufs[c], encoded, <size_t>n)
        plan.sizes[c] = n
        plan.status[c] = _WRITTEN
        return
    tmp_cap = strlen(plan.paths[c]) + _TMP_EXTRA
    tmp = <char*>thread_buffer(SLOT_TMP_PATH, tmp_cap)
    if tmp == NULL:
        plan.status[c] = _FAILED_MEMORY
        return
    if _write_atomic(plan.paths[c], tmp, tmp_cap, plan.salt + <uint64_t>c, encoded, n) != 0:
        plan.status[c] = _FAILED_IO
        return
    plan.sizes[c] = n
    plan.status[c] = _WRITTEN


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


def write_chunks(
    list dests not None,
    bint paths,
    uint64_t salt,
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
):
    """Execute a write plan of whole chunks (see the module for its nouns): each chunk's
    elements copied out of ``src``, compared with ``fill``, encoded and stored at its
    destination, on up to ``nthreads`` threads with the GIL released throughout.
    ``status[c]`` says what became of chunk ``c``, ``sizes[c]`` its encoding's length.
    ``salt`` makes the temporary files' names (random per call).

    Raises
    ------
    ValueError
        For a plan that does not hold together (array lengths, a region outside ``src``, a
        chunk's counts outside the chunk shape, an unknown chain, a destination that is not
        a path or a large enough writable buffer): never for the file system.
    """
    cdef str fn = "write_chunks"
    cdef Py_ssize_t nchunks = len(dests), ndim = chunk_shape.shape[0], c, d
    cdef WritePlan plan
    cdef int64_t nbytes = itemsize
    cdef _Dests held
    if not 1 <= ndim <= MAX_NDIM or src_strides.shape[0] != ndim or counts.shape[1] != ndim:
        raise ValueError(f"{fn}: chunk_shape, src_strides and counts must have the same "
                         f"number (1 to {MAX_NDIM}) of dimensions")
    if itemsize < 1 or fill.shape[0] != itemsize:
        raise ValueError(f"{fn}: fill must be one element ({itemsize} bytes)")
    if src_offsets.shape[0] != nchunks or counts.shape[0] != nchunks or \
            sizes.shape[0] != nchunks or status.shape[0] != nchunks:
        raise ValueError(f"{fn}: src_offsets, counts, sizes and status must have one entry "
                         f"per chunk ({nchunks} chunks)")
    if compressor not in (_NONE, _ZSTD) or not 0 <= checksums <= 8:
        raise ValueError(f"{fn}: unknown chain (compressor {compressor}, {checksums} "
                         "checksums)")
    if compressor == _ZSTD and not _zstd_available():
        raise ValueError(f"{fn}: no libzstd is bound")
    for d in range(ndim - 1, -1, -1):
        if chunk_shape[d] < 1 or nbytes > (1 << 62) // chunk_shape[d]:
            raise ValueError(f"{fn}: chunk_shape[{d}] = {chunk_shape[d]} is not a size")
        plan.chunk_strides[d] = nbytes
        nbytes *= chunk_shape[d]
        plan.chunk_shape[d] = chunk_shape[d]
        plan.src_strides[d] = src_strides[d]
    if swap not in (0, 1, 2, 4, 8, 16) or (swap > 1 and nbytes % swap):
        raise ValueError(f"{fn}: swap = {swap} is not a word size of the chunk")
    for c in range(nchunks):
        for d in range(ndim):
            if not 1 <= counts[c, d] <= chunk_shape[d]:
                raise ValueError(f"{fn}: chunk {c}: counts[{d}] = {counts[c, d]} is outside "
                                 f"the chunk shape")
        if not region_fits(src.shape[0], src_offsets[c], plan.src_strides, &counts[c, 0],
                           ndim, itemsize):
            raise ValueError(f"{fn}: chunk {c}'s region lies outside src")
    plan.cap = _encoded_cap(nbytes, compressor, checksums)
    held = _Dests(dests, paths, plan.cap)
    plan.src = &src[0] if src.shape[0] else NULL
    plan.slen = src.shape[0]
    plan.src_offsets = &src_offsets[0] if nchunks else NULL
    plan.counts = &counts[0, 0] if nchunks else NULL
    plan.ndim, plan.itemsize, plan.nbytes = ndim, itemsize, nbytes
    plan.fill = &fill[0]
    plan.skip_empty = skip_empty
    plan.compressor, plan.level, plan.zstd_checksum = compressor, level, zstd_checksum
    plan.checksums, plan.swap = checksums, swap
    plan.paths = held.paths if paths else NULL
    plan.bufs, plan.caps = held.bufs, held.caps
    plan.salt = salt
    plan.sizes = &sizes[0] if nchunks else NULL
    plan.status = &status[0] if nchunks else NULL
    with nogil:
        run_tasks(_write_chunk, &plan, nchunks, nthreads)
