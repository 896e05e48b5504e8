"""The native chunk pipeline: a read plan executed on native threads without the GIL.

A read plans in Python once (which chunks, which pieces of them land where in the output:
the plan types of :mod:`zarr3c.array.read.plan`) and then :func:`read_chunks` or
:func:`read_shards` executes the whole plan in one call: for each chunk, on the pool's
threads (:mod:`.pool`), read its stored bytes, decode them and copy its pieces out, or fill
them where it is not stored.  No Python runs between chunks, so threads never queue for the
GIL, and each output page is first touched by the thread that fills it.

The nouns, defined once:

source
    Where a chunk's stored bytes are: a file (its path; ``paths=True``), or a value already
    in memory (a bytes-like object; None where the chunk is not stored).  A file that does
    not exist is a chunk not stored.
chain
    How stored bytes decode into the chunk's elements in C order: :class:`Chain`'s
    ``checksums`` trailing CRC-32C checksums verified and stripped (zarr's ``crc32c``
    codec), then one ``compressor`` (:data:`NONE`, :data:`ZSTD`, :data:`BLOSC`: c-blosc v1
    through the addresses :func:`bind_blosc` was given, :data:`GZIP`: zlib through
    :func:`bind_zlib`'s), then a byte swap of
    ``swap``-byte words (an ``endian`` other than the machine's; the component size for
    complex types), giving ``nbytes`` bytes; then, where the chain has zarr's ``transpose``
    codec (the kernels' ``transpose``: the chunk's shape and the codec's ``order``, a
    ``(2, ndim)`` array), those bytes are the chunk transposed (C order of the shape
    permuted by ``order``) and are copied back to the chunk's C order, into the output for
    a ``direct`` chunk, else into a second scratch buffer.  Other codecs take the Python
    path.  A zstd frame (without a content checksum) of an untransposed chunk not read
    ``direct`` is decoded only through the block holding the last byte its pieces read
    (libzstd's buffer-less decoder): the rest of the decoded scratch then holds anything,
    which no piece reads.
pieces
    Chunk ``c``'s pieces are rows ``firsts[c]:ends[c]``: piece ``p`` copies the
    region of ``counts[p]`` elements at byte ``src_offsets[p]`` of the decoded chunk (byte
    strides ``src_strides``, shared) to byte ``dst_offsets[p]`` of ``dst`` (strides
    ``dst_strides[p]``).  A chunk flagged ``direct`` has one piece that is the whole chunk,
    C-ordered in ``dst``: it is decoded (or read) straight there.  The other piece kinds:
    *elements* (:func:`read_elements`: one element per row, for points) and *outer
    products* (:func:`read_chunks_outer`: per row a ``scatter.copy_outer`` of per-axis
    offsets, for ``oindex`` and stepped slices, held as a checked ``scatter.OuterPieces``).
status
    Per chunk, what happened: :data:`READ`, :data:`MISSING` (its pieces filled with
    ``fill``), or a negative :data:`FAILED_*` code: the chunk's pieces hold anything, and
    the caller reads it again through the Python path, which reports what is wrong.  The
    kernel never raises for what it finds in stored bytes.

Sharded arrays (:func:`read_shards`): the sources are shards, each holding an index of
``(offset, nbytes)`` little-endian ``uint64`` pairs (the sharding codec's, optionally with
one trailing CRC-32C) at its end or start; a first pass reads every shard's index, checks
it whole as the Python path does (``shard.check_shard_index``: an index with an entry
outside the shard, into the index, half missing, or overlapping another fails its shard,
which the Python path then reports) and keeps the shard's file open; a second executes the
inner chunks as above, each at its entry's byte range.

Memory: stored and decoded bytes go to per-thread scratch buffers (``pool.thread_buffer``)
reused from chunk to chunk; nothing is allocated per chunk once a thread is warm.

The reference of both is the Python path, chunk for chunk
(:func:`zarr3c._kernels._reference.read_chunks`).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.errno cimport ENOENT, ENOTDIR
from libc.stdint cimport int8_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset
from posix.unistd cimport close as c_close

from zarr3c._kernels.checksum cimport crc32c_update
from zarr3c._kernels.copy cimport MAX_NDIM, byteswap_core, copy_core, fill_core
from zarr3c._kernels.fileio cimport _open_file, _pread_upto
from zarr3c._kernels.pool cimport (
    SLOT_DECODED, SLOT_INDEX, SLOT_ORDERED, SLOT_STORED, VALUE_DCTX, VALUE_ZSTREAM, run_tasks,
    set_thread_value, thread_buffer, thread_value,
)
from zarr3c._kernels.scatter cimport (
    INNER_EMPTY, OuterPieces, OuterRows, check_piece_rows, check_pieces, copy_live_pieces,
    copy_outer_rows, fill_outer_rows,
)
from zarr3c._kernels.shard cimport check_index_core
from zarr3c._kernels.zstd_ctx cimport (
    dctx_decompress, dctx_decompress_prefix, dctx_free, dctx_new,
)
from zarr3c._kernels.zstream cimport (
    GZIP_WINDOW, Z_FINISH, Z_OK, Z_STREAM_END, ZARR3C_HAVE_ZLIB, ZLIB_VERSION, z_stream,
)

import numpy as np

from zarr3c._kernels.zstd_ctx import available as _zstd_available

__all__ = ["BLOSC", "GZIP", "MAX_SHARDS", "FAILED_CHECKSUM", "FAILED_DECODE", "FAILED_INDEX", "FAILED_IO", "FAILED_MEMORY",
           "FAILED_SIZE", "MISSING", "NONE", "READ", "ZSTD", "bind_blosc", "bind_zlib", "blosc_available",
           "read_chunks", "read_chunks_outer", "read_elements", "read_shard_elements",
           "read_shards", "read_shards_outer", "zlib_available"]

# compressors
NONE = 0
ZSTD = 1
BLOSC = 2
GZIP = 3
# statuses
READ = 0
MISSING = 1
FAILED_IO = -1
FAILED_SIZE = -2
FAILED_DECODE = -3
FAILED_CHECKSUM = -4
FAILED_INDEX = -5
FAILED_MEMORY = -6

cdef enum:
    _NONE = 0
    _ZSTD = 1
    _BLOSC = 2
    _BLOSC_HEADER = 16
    _GZIP = 3
    _READ = 0
    _MISSING = 1
    _FAILED_IO = -1
    _FAILED_SIZE = -2
    _FAILED_DECODE = -3
    _FAILED_CHECKSUM = -4
    _FAILED_INDEX = -5
    _FAILED_MEMORY = -6
    # the most shard files one read_shards call holds open
    MAX_OPEN_SHARDS = 256

cdef uint64_t _MISSING_ENTRY = 0xFFFFFFFFFFFFFFFFULL

# c-blosc (v1), as numcodecs bundles it, through the addresses bind_blosc() was given:
# blosc_decompress_ctx (thread-safe, no global state) and blosc_cbuffer_validate.
ctypedef int (*blosc_decompress_ctx_t)(const void* src, void* dest, size_t destsize,
                                       int numinternalthreads) noexcept nogil
ctypedef int (*blosc_cbuffer_validate_t)(const void* cbuffer, size_t cbytes,
                                         size_t* nbytes) noexcept nogil
cdef blosc_decompress_ctx_t _blosc_decompress = NULL
cdef blosc_cbuffer_validate_t _blosc_validate = NULL


def bind_blosc(size_t decompress_ctx, size_t cbuffer_validate):
    """Use c-blosc's ``blosc_decompress_ctx`` and ``blosc_cbuffer_validate`` at these
    addresses for the :data:`BLOSC` compressor (binds once per process)."""
    global _blosc_decompress, _blosc_validate
    if not (decompress_ctx and cbuffer_validate):
        raise ValueError("chunks.bind_blosc: a function address is null")
    if _blosc_decompress == NULL:
        _blosc_validate = <blosc_cbuffer_validate_t><void*>cbuffer_validate
        _blosc_decompress = <blosc_decompress_ctx_t><void*>decompress_ctx


def blosc_available():
    """True once :func:`bind_blosc` has given this module c-blosc."""
    return _blosc_decompress != NULL


# zlib, for the gzip codec (zstream.pxd): inflate through the addresses bind_zlib() was
# given.
ctypedef int (*inflate_init2_t)(z_stream* strm, int window_bits, const char* version,
                                int stream_size) noexcept nogil
ctypedef int (*inflate_t)(z_stream* strm, int flush) noexcept nogil
ctypedef int (*inflate_end_t)(z_stream* strm) noexcept nogil
ctypedef int (*inflate_reset_t)(z_stream* strm) noexcept nogil
cdef inflate_init2_t _inflate_init2 = NULL
cdef inflate_t _inflate = NULL
cdef inflate_end_t _inflate_end = NULL
cdef inflate_reset_t _inflate_reset = NULL


def bind_zlib(size_t inflate_init2, size_t inflate, size_t inflate_end, size_t inflate_reset):
    """Use zlib's ``inflateInit2_``, ``inflate``, ``inflateEnd`` and ``inflateReset`` at these
    addresses for the :data:`GZIP` compressor (binds once per process; nothing where this
    build has no ``zlib.h``, or the library's stream layout is not the header's)."""
    global _inflate_init2, _inflate, _inflate_end, _inflate_reset
    cdef z_stream probe
    if not (inflate_init2 and inflate and inflate_end and inflate_reset):
        raise ValueError("chunks.bind_zlib: a function address is null")
    if not ZARR3C_HAVE_ZLIB or _inflate != NULL:
        return
    memset(&probe, 0, sizeof(probe))
    if (<inflate_init2_t><void*>inflate_init2)(&probe, GZIP_WINDOW, ZLIB_VERSION,
                                               sizeof(z_stream)) != Z_OK:
        return
    (<inflate_end_t><void*>inflate_end)(&probe)
    _inflate_end = <inflate_end_t><void*>inflate_end
    _inflate_reset = <inflate_reset_t><void*>inflate_reset
    _inflate_init2 = <inflate_init2_t><void*>inflate_init2
    _inflate = <inflate_t><void*>inflate


def zlib_available():
    """True once :func:`bind_zlib` has given this module zlib."""
    return _inflate != NULL


cdef void _free_zstream(void* p) noexcept nogil:
    _inflate_end(<z_stream*>p)
    free(p)


cdef z_stream* _thread_zstream() noexcept nogil:
    """This thread's inflate stream, set up for gzip (NULL if none can be made)."""
    cdef z_stream* strm = <z_stream*>thread_value(VALUE_ZSTREAM)
    if strm != NULL:
        return strm
    strm = <z_stream*>calloc(1, sizeof(z_stream))
    if strm == NULL:
        return NULL
    if _inflate_init2(strm, GZIP_WINDOW, ZLIB_VERSION, sizeof(z_stream)) != Z_OK:
        free(strm)
        return NULL
    if set_thread_value(VALUE_ZSTREAM, strm, _free_zstream) != 0:
        _free_zstream(strm)
        return NULL
    return strm


cdef Py_ssize_t _gzip_decode(uint8_t* dst, int64_t nbytes, const uint8_t* src,
                             int64_t size) noexcept nogil:
    """gzip members, back to back and nothing after them, decoded into ``dst``: the bytes
    decoded, or -1 (anything else: the Python path decides)."""
    cdef z_stream* strm
    if size <= 0 or size > <int64_t>0xFFFFFFFFU or nbytes > <int64_t>0xFFFFFFFFU:
        return -1
    strm = _thread_zstream()
    if strm == NULL:
        return -1
    strm.next_in, strm.avail_in = <uint8_t*>src, <unsigned int>size
    strm.next_out, strm.avail_out = dst, <unsigned int>nbytes
    while True:
        if _inflate_reset(strm) != Z_OK or _inflate(strm, Z_FINISH) != Z_STREAM_END:
            return -1
        if strm.avail_in == 0:
            return nbytes - strm.avail_out


cdef Py_ssize_t _blosc_decode(uint8_t* dst, int64_t nbytes, const uint8_t* src,
                              int64_t size) noexcept nogil:
    """A blosc frame decoded into ``dst``: its size, or -1.  Its header must give the
    stored size and ``nbytes`` (c-blosc trusts the header, and would read past a truncated
    frame), and c-blosc must find the frame sound."""
    cdef size_t claimed = 0
    if size < _BLOSC_HEADER or _le_u32(src + 12) != <uint64_t>size or \
            _le_u32(src + 4) != <uint64_t>nbytes:
        return -1
    if _blosc_validate(src, <size_t>size, &claimed) != 0 or claimed != <size_t>nbytes:
        return -1
    return _blosc_decompress(src, dst, <size_t>nbytes, 1)
#: The most shards one read_shards call takes (it holds their files open).
MAX_SHARDS = MAX_OPEN_SHARDS


cdef struct Plan:
    # sources: per chunk a path, or a value (NULL: not stored) of value_lens bytes; for the
    # inner chunks of shards, an open fd (-1: not stored) and a byte range
    const char** paths
    const uint8_t** values
    int64_t* value_lens
    int* fds
    int64_t* starts
    int64_t* lens
    # the chain
    int compressor
    int checksums
    int64_t swap
    int64_t nbytes
    int64_t cap           # the most stored bytes a chunk may have
    # a transpose codec: the decoded chunk's byte strides per axis of the chunk (``t_from``)
    # and its C-order ones (``t_to``), over its ``t_shape``
    bint transposed
    Py_ssize_t t_ndim
    int64_t t_shape[MAX_NDIM]
    int64_t t_from[MAX_NDIM]
    int64_t t_to[MAX_NDIM]
    # the pieces
    const int64_t* firsts
    const int64_t* ends
    const int64_t* src_offsets
    int64_t src_strides[MAX_NDIM]
    uint8_t* dst
    Py_ssize_t dlen
    const int64_t* dst_offsets
    const int64_t* dst_strides
    const int64_t* counts
    Py_ssize_t ndim
    int64_t itemsize
    const uint8_t* fill
    const uint8_t* live
    const uint8_t* direct
    int8_t* status
    # elements instead of pieces: row p copies one element from src_offsets[p] of the
    # decoded chunk to dst_offsets[p] of dst (no strides, no counts, no direct chunks)
    bint elements
    # outer products instead of pieces (not NULL): row p is piece p of these checked rows
    # (no strides, no counts, no direct chunks)
    const OuterRows* outer


cdef inline uint32_t _le_u32(const uint8_t* p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t _le_u64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v |= (<uint64_t>p[i]) << (8 * i)
    return v


cdef int _copy_element(Plan* plan, const uint8_t* src, int64_t at, int64_t slen,
                       Py_ssize_t p) noexcept nogil:
    """Element ``p``: the ``itemsize`` bytes at ``src + at`` to its place in dst; -1 (nothing
    copied) where either end lies outside its buffer (the arrays changed under the call)."""
    cdef int64_t to = plan.dst_offsets[p]
    if at < 0 or at > slen - plan.itemsize or to < 0 or to > plan.dlen - plan.itemsize:
        return -1
    memcpy(plan.dst + to, src + at, <size_t>plan.itemsize)
    return 0


cdef void _fill(Plan* plan, Py_ssize_t c) noexcept nogil:
    """Fill chunk ``c``'s live pieces (or elements) with the fill value."""
    cdef Py_ssize_t p
    if plan.outer != NULL:
        fill_outer_rows(plan.outer, plan.firsts[c], plan.ends[c], plan.dst, plan.fill)
        return
    for p in range(plan.firsts[c], plan.ends[c]):
        if plan.elements:
            _copy_element(plan, plan.fill, 0, plan.itemsize, p)
        elif plan.live[p]:
            fill_core(plan.dst, plan.dst_offsets[p], plan.dst_strides + p * plan.ndim,
                      plan.counts + p * plan.ndim, plan.ndim, plan.fill, plan.itemsize)


cdef void _free_dctx(void* dctx) noexcept nogil:
    dctx_free(dctx)


cdef void* _thread_dctx() noexcept nogil:
    """This thread's zstd decompression context (NULL if none can be made)."""
    cdef void* dctx = thread_value(VALUE_DCTX)
    if dctx == NULL:
        dctx = dctx_new()
        if dctx != NULL and set_thread_value(VALUE_DCTX, dctx, _free_dctx) != 0:
            dctx_free(dctx)
            dctx = NULL
    return dctx


cdef int _decode(Plan* plan, const uint8_t* data, int64_t size, uint8_t* out,
                 const uint8_t** decoded, int64_t need) noexcept nogil:
    """Decode ``size`` stored bytes into ``out`` (``nbytes`` of room), or point ``decoded``
    at them where they are the elements already: a status.  Only the first ``need`` bytes
    are read by the caller: a zstd frame is decoded only through the block holding them
    where zstd can (the rest of ``out`` then holds anything), else whole."""
    cdef int k
    cdef Py_ssize_t got = -1
    cdef int64_t swapped = plan.nbytes
    cdef void* dctx
    for k in range(plan.checksums):
        if size < 4:
            return _FAILED_DECODE
        if crc32c_update(0, data, <size_t>(size - 4)) != _le_u32(data + size - 4):
            return _FAILED_CHECKSUM
        size -= 4
    if plan.compressor == _ZSTD:
        dctx = _thread_dctx()
        if 0 < need < plan.nbytes:
            got = dctx_decompress_prefix(dctx, out, <size_t>plan.nbytes, data, <size_t>size,
                                         <size_t>need)
            if got >= need and plan.swap > 1:
                # (whole words up to the decoded end; the chunk's size is a whole number)
                swapped = min(plan.nbytes, (got + plan.swap - 1) // plan.swap * plan.swap)
        if got < need:
            got = dctx_decompress(dctx, out, <size_t>plan.nbytes, data, <size_t>size)
            if got != plan.nbytes:
                return _FAILED_DECODE
        decoded[0] = out
    elif plan.compressor == _BLOSC:
        if _blosc_decode(out, plan.nbytes, data, size) != plan.nbytes:
            return _FAILED_DECODE
        decoded[0] = out
    elif plan.compressor == _GZIP:
        if _gzip_decode(out, plan.nbytes, data, size) != plan.nbytes:
            return _FAILED_DECODE
        decoded[0] = out
    else:
        if size != plan.nbytes:
            return _FAILED_SIZE
        if out == NULL:  # (raw elements, copied out from where they are)
            decoded[0] = data
            return _READ
        if out != data:
            memcpy(out, data, <size_t>size)
        decoded[0] = out
    if plan.swap > 1:
        byteswap_core(out, swapped, plan.swap)
    return _READ


cdef void _span(Plan* plan, Py_ssize_t c, int64_t* lo, int64_t* hi) noexcept nogil:
    """The bytes ``[lo, hi)`` of raw chunk ``c`` that its live pieces read (the source
    strides are a chunk's C-order strides: positive)."""
    cdef Py_ssize_t p, d
    cdef int64_t first, last
    lo[0], hi[0] = plan.nbytes, 0
    if plan.outer != NULL:
        for p in range(plan.firsts[c], plan.ends[c]):
            if plan.outer.inner_run[p] != INNER_EMPTY:
                lo[0] = min(lo[0], plan.outer.src_lo[p])
                hi[0] = max(hi[0], plan.outer.src_hi[p])
        return
    for p in range(plan.firsts[c], plan.ends[c]):
        if not plan.elements and not plan.live[p]:
            continue
        first = plan.src_offsets[p]
        last = first + plan.itemsize
        if first < 0 or first > plan.nbytes - plan.itemsize:
            continue  # (an element whose offset changed: _copy_elements reports it)
        for d in range(plan.ndim):
            last += (plan.counts[p * plan.ndim + d] - 1) * plan.src_strides[d]
        if first < lo[0]:
            lo[0] = first
        if last > hi[0]:
            hi[0] = last


cdef int _stored(Plan* plan, Py_ssize_t c, uint8_t* direct, const uint8_t** data,
                 int64_t* size) noexcept nogil:
    """Chunk ``c``'s stored bytes: ``data`` and ``size``, read into scratch (or, for a raw
    chunk read ``direct``, straight there; for another raw chunk, only the span its pieces
    read, at its place in the scratch): a status."""
    cdef int fd = -1, err
    cdef int64_t got, n, at = 0, lo, hi
    cdef uint8_t* buf
    cdef bint raw = (plan.compressor == _NONE and plan.checksums == 0 and plan.swap <= 1
                     and not plan.transposed)
    if plan.paths != NULL:
        err = _open_file(plan.paths[c], &fd, &n)
        if err:
            return _MISSING if err == ENOENT or err == ENOTDIR else _FAILED_IO
        if n < 0:
            c_close(fd)
            return _MISSING  # (not a regular file: as the store answers)
    elif plan.fds != NULL:
        fd = plan.fds[c]
        if fd < 0:
            return _MISSING
        n, at = plan.lens[c], plan.starts[c]
    else:
        if plan.values[c] == NULL:
            return _MISSING
        data[0], size[0] = plan.values[c], plan.value_lens[c]
        return _READ
    err = _READ
    lo, hi = 0, n
    if raw and direct == NULL:
        _span(plan, c, &lo, &hi)
    if n > plan.cap or (raw and n != plan.nbytes):
        err = _FAILED_SIZE
    else:
        # The scratch holds the whole chunk even where only a span is read into it, at its
        # place: a piece's offset checked again at its copy can then only land in it.
        buf = direct if raw and direct != NULL else thread_buffer(SLOT_STORED, <size_t>n)
        if buf == NULL:
            err = _FAILED_MEMORY
        elif hi > lo and (_pread_upto(fd, buf + lo, hi - lo, at + lo, &got) != 0
                          or got != hi - lo):
            err = _FAILED_IO
        else:
            data[0], size[0] = buf, n
    if plan.paths != NULL:
        c_close(fd)
    return err


cdef void _read_chunk(void* ctx, Py_ssize_t c) noexcept nogil:
    """One task: chunk ``c`` read, decoded and its pieces copied (or filled)."""
    cdef Plan* plan = <Plan*>ctx
    cdef Py_ssize_t p0 = plan.firsts[c], p1 = plan.ends[c]
    cdef uint8_t* direct = NULL
    cdef uint8_t* out
    cdef uint8_t* ordered
    cdef const uint8_t* data = NULL
    cdef const uint8_t* decoded = NULL
    cdef int64_t size = 0, need, lo, hi
    cdef int status
    cdef Py_ssize_t p
    if p1 <= p0:
        plan.status[c] = _READ
        return
    if plan.direct != NULL and plan.direct[c]:
        direct = plan.dst + plan.dst_offsets[p0]
    status = _stored(plan, c, direct, &data, &size)
    if status == _MISSING:
        _fill(plan, c)
    if status != _READ:
        plan.status[c] = status
        return
    if direct != NULL and data == direct:  # a raw chunk read straight into place
        plan.status[c] = _READ
        return
    # (a transposed chunk is decoded into scratch, then put in C order where it goes)
    out = NULL if plan.transposed else direct
    if out == NULL and (plan.compressor != _NONE or plan.swap > 1):
        out = thread_buffer(SLOT_DECODED, <size_t>plan.nbytes)
        if out == NULL:
            plan.status[c] = _FAILED_MEMORY
            return
    decoded = out  # (where the decoded bytes must go, if anywhere)
    need = plan.nbytes
    if direct == NULL and plan.compressor == _ZSTD and not plan.transposed:
        # Only the bytes the live pieces (elements) read are decoded: a box or points near
        # a chunk's start (a time step of a (time, y, x) variable) skip the blocks after.
        _span(plan, c, &lo, &hi)
        if 0 < hi < need:
            need = hi
    status = _decode(plan, data, size, out, &decoded, need)
    if status == _READ and plan.transposed:
        ordered = direct if direct != NULL else thread_buffer(SLOT_ORDERED,
                                                              <size_t>plan.nbytes)
        if ordered == NULL:
            plan.status[c] = _FAILED_MEMORY
            return
        copy_core(decoded, 0, plan.t_from, ordered, 0, plan.t_to, plan.t_shape, plan.t_ndim,
                  plan.itemsize)
        decoded = ordered
    if status == _READ and plan.outer != NULL:
        copy_outer_rows(plan.outer, p0, p1, decoded, plan.dst)
    elif status == _READ and plan.elements:
        for p in range(p0, p1):
            if _copy_element(plan, decoded, plan.src_offsets[p], plan.nbytes, p) != 0:
                status = _FAILED_SIZE
                break
    elif status == _READ and direct == NULL:
        if copy_live_pieces(decoded, plan.nbytes, plan.src_offsets, plan.src_strides,
                            plan.dst, plan.dlen, plan.dst_offsets, plan.dst_strides,
                            plan.counts, p0, p1, plan.ndim, plan.itemsize, plan.live) >= 0:
            status = _FAILED_SIZE
    plan.status[c] = status


cdef class _Values:
    """The buffers of a list of values, held for a call (None: not stored)."""
    cdef Py_buffer* views
    cdef const uint8_t** ptrs
    cdef int64_t* lens
    cdef Py_ssize_t n

    def __cinit__(self, list values):
        cdef Py_ssize_t i
        cdef object v
        self.n = 0
        self.views = <Py_buffer*>calloc(max(1, len(values)), sizeof(Py_buffer))
        self.ptrs = <const uint8_t**>calloc(max(1, len(values)), sizeof(uint8_t*))
        self.lens = <int64_t*>calloc(max(1, len(values)), sizeof(int64_t))
        if self.views == NULL or self.ptrs == NULL or self.lens == NULL:
            raise MemoryError()
        for i in range(len(values)):
            v = values[i]
            if v is None:
                continue
            PyObject_GetBuffer(v, &self.views[i], PyBUF_SIMPLE)
            self.n = i + 1
            self.ptrs[i] = <const uint8_t*>self.views[i].buf
            self.lens[i] = self.views[i].len
            if self.ptrs[i] == NULL:  # (an empty buffer may have no address)
                self.ptrs[i] = <const uint8_t*>&self.lens[i]

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.views != NULL:
            for i in range(self.n):
                if self.ptrs[i] != NULL:
                    PyBuffer_Release(&self.views[i])
        free(self.views)
        free(self.ptrs)
        free(self.lens)


cdef class _Paths:
    """A list of paths (bytes without NUL) as C strings, held for a call."""
    cdef const char** ptrs
    cdef list keep

    def __cinit__(self, list paths, str fn):
        cdef Py_ssize_t i
        self.keep = paths
        self.ptrs = <const char**>calloc(max(1, len(paths)), sizeof(char*))
        if self.ptrs == NULL:
            raise MemoryError()
        for i in range(len(paths)):
            p = paths[i]
            if type(p) is not bytes or b"\0" in <bytes>p:
                raise ValueError(f"{fn}: source {i} is not a path (bytes without NUL)")
            self.ptrs[i] = <bytes>p

    def __dealloc__(self):
        free(self.ptrs)


cdef object _set_sources(Plan* plan, list sources, bint paths, str fn):
    """Point ``plan`` at the chunks' sources (paths or values); returns what holds them,
    to be kept for the call."""
    cdef _Paths held_paths
    cdef _Values held_values
    plan.paths, plan.values, plan.value_lens, plan.fds = NULL, NULL, NULL, NULL
    if paths:
        held_paths = _Paths(sources, fn)
        plan.paths = held_paths.ptrs
        return held_paths
    held_values = _Values(sources)
    plan.values, plan.value_lens = held_values.ptrs, held_values.lens
    return held_values


cdef int _set_chain(Plan* plan, str fn, int64_t itemsize, const uint8_t[::1] fill,
                    int compressor, int checksums, int64_t swap, int64_t nbytes) except -1:
    """Validate the chain, the fill value and the chunk size, and put them in ``plan``."""
    if itemsize < 1 or fill.shape[0] != itemsize:
        raise ValueError(f"{fn}: fill must be one element ({itemsize} bytes)")
    if nbytes < 1 or nbytes % itemsize:
        raise ValueError(f"{fn}: nbytes = {nbytes} is not a positive number of elements")
    if compressor not in (_NONE, _ZSTD, _BLOSC, _GZIP) or checksums < 0 or checksums > 8:
        raise ValueError(f"{fn}: unknown chain (compressor {compressor}, "
                         f"{checksums} checksums)")
    if swap not in (0, 1, 2, 4, 8, 16) or (swap > 1 and nbytes % swap):
        raise ValueError(f"{fn}: swap = {swap} is not a word size of the chunk")
    if compressor == _ZSTD and not _zstd_available():
        raise ValueError(f"{fn}: no libzstd is bound")
    if compressor == _BLOSC and _blosc_decompress == NULL:
        raise ValueError(f"{fn}: no c-blosc is bound")
    if compressor == _GZIP and _inflate == NULL:
        raise ValueError(f"{fn}: no zlib is bound")
    plan.compressor, plan.checksums, plan.swap, plan.nbytes = compressor, checksums, swap, nbytes
    # an incompressible chunk's encoding fits (as in the Python path's stored scratch)
    plan.cap = nbytes + (nbytes >> 3) + 4096 + 4 * checksums
    plan.itemsize = itemsize
    plan.fill = &fill[0]
    return 0


cdef int _set_transpose(Plan* plan, str fn, object transpose) except -1:
    """Validate a transpose codec's ``transpose`` (None: none; else a ``(2, ndim)`` int64
    array: the chunk's shape, then the codec's ``order``) against the chain's chunk size,
    and put its strides in ``plan`` (after :func:`_set_chain`)."""
    cdef const int64_t[:, ::1] t
    cdef Py_ssize_t ndim, d, i
    cdef int64_t n = plan.itemsize
    cdef int64_t strides[MAX_NDIM]
    plan.transposed = False
    plan.t_ndim = 0
    if transpose is None:
        return 0
    t = transpose
    ndim = t.shape[1]
    if t.shape[0] != 2 or not 1 <= ndim <= MAX_NDIM:
        raise ValueError(f"{fn}: transpose must be a (2, ndim) array, 1 <= ndim <= {MAX_NDIM}")
    seen = [False] * ndim
    for d in range(ndim):
        if not 0 <= t[1, d] < ndim or seen[t[1, d]]:
            raise ValueError(f"{fn}: transpose's order is not a permutation of its axes")
        seen[t[1, d]] = True
    for d in range(ndim - 1, -1, -1):
        if t[0, d] < 1 or n > (1 << 62) // t[0, d]:
            raise ValueError(f"{fn}: transpose's shape[{d}] = {t[0, d]} is not a size")
        plan.t_to[d] = n
        plan.t_shape[d] = t[0, d]
        n *= t[0, d]
    if n != plan.nbytes:
        raise ValueError(f"{fn}: transpose's shape does not hold nbytes = {plan.nbytes}")
    # The decoded chunk is C order of the shape permuted by order: its axis i is the
    # chunk's axis order[i], whose stride there is the i-th C stride of that shape.
    n = plan.itemsize
    for i in range(ndim - 1, -1, -1):
        strides[i] = n
        n *= t[0, t[1, i]]
    for i in range(ndim):
        plan.t_from[t[1, i]] = strides[i]
    plan.t_ndim = ndim
    plan.transposed = True
    return 0


cdef int _set_elements(Plan* plan, str fn, Py_ssize_t nchunks, const int64_t[::1] firsts,
                       const int64_t[::1] ends, const int64_t[::1] src_offsets,
                       const int64_t[::1] dst_offsets, uint8_t[::1] dst, int64_t itemsize,
                       const uint8_t[::1] fill, int compressor, int checksums, int64_t swap,
                       int64_t nbytes, int8_t[::1] status) except -1:
    """Validate the elements and the chain, and point ``plan`` at them."""
    cdef Py_ssize_t n = src_offsets.shape[0], c, p
    _set_chain(plan, fn, itemsize, fill, compressor, checksums, swap, nbytes)
    if dst_offsets.shape[0] != n:
        raise ValueError(f"{fn}: src_offsets and dst_offsets must have the same length")
    if firsts.shape[0] != nchunks or ends.shape[0] != nchunks or status.shape[0] != nchunks:
        raise ValueError(f"{fn}: firsts, ends and status must have one entry per chunk "
                         f"({nchunks} chunks)")
    for c in range(nchunks):
        if not 0 <= firsts[c] <= ends[c] <= n:
            raise ValueError(f"{fn}: chunk {c}: elements [{firsts[c]}, {ends[c]}) are not "
                             f"rows of the {n} elements")
    for p in range(n):
        if not (0 <= src_offsets[p] <= nbytes - itemsize
                and 0 <= dst_offsets[p] <= dst.shape[0] - itemsize):
            raise ValueError(f"{fn}: element {p} lies outside the chunk or dst")
    plan.elements = True
    plan.outer = NULL
    plan.firsts = &firsts[0] if nchunks else NULL
    plan.ends = &ends[0] if nchunks else NULL
    plan.src_offsets = &src_offsets[0] if n else NULL
    plan.dst_offsets = &dst_offsets[0] if n else NULL
    plan.dst = &dst[0] if dst.shape[0] else NULL
    plan.dlen = dst.shape[0]
    plan.dst_strides, plan.counts, plan.live, plan.direct = NULL, NULL, NULL, NULL
    plan.ndim = 0
    plan.status = &status[0] if nchunks else NULL
    return 0


cdef int _set_pieces(Plan* plan, str fn, Py_ssize_t nchunks, const int64_t[::1] firsts,
                     const int64_t[::1] ends,
                     const int64_t[::1] src_offsets, const int64_t[::1] src_strides,
                     uint8_t[::1] dst, const int64_t[::1] dst_offsets,
                     const int64_t[:, ::1] dst_strides, const int64_t[:, ::1] counts,
                     int64_t itemsize, const uint8_t[::1] fill, const uint8_t[::1] direct,
                     int compressor, int checksums, int64_t swap, int64_t nbytes,
                     uint8_t[::1] live, int8_t[::1] status) except -1:
    """Validate the pieces and the chain, and point ``plan`` at them."""
    cdef Py_ssize_t n = src_offsets.shape[0], ndim = src_strides.shape[0], c, p
    check_piece_rows(fn, n, dst_offsets, dst_strides, counts, ndim)
    if firsts.shape[0] != nchunks or ends.shape[0] != nchunks or \
            direct.shape[0] != nchunks or status.shape[0] != nchunks:
        raise ValueError(f"{fn}: firsts, ends, direct and status must have one entry per "
                         f"chunk ({nchunks} chunks)")
    if live.shape[0] != n:
        raise ValueError(f"{fn}: live must have one entry per piece")
    _set_chain(plan, fn, itemsize, fill, compressor, checksums, swap, nbytes)
    for c in range(ndim):
        # (a chunk's C-order strides: a raw chunk is read by the span its pieces cover)
        if src_strides[c] < 0:
            raise ValueError(f"{fn}: src_strides[{c}] = {src_strides[c]} is negative")
    for c in range(nchunks):
        if not 0 <= firsts[c] <= ends[c] <= n:
            raise ValueError(f"{fn}: chunk {c}: pieces [{firsts[c]}, {ends[c]}) are not rows "
                             f"of the {n} pieces")
    memcpy(plan.src_strides, &src_strides[0] if ndim else NULL, ndim * sizeof(int64_t))
    if n:
        check_pieces(fn, 0, n, &src_offsets[0], plan.src_strides, nbytes, &dst_offsets[0],
                     &dst_strides[0, 0] if ndim else NULL, &counts[0, 0] if ndim else NULL,
                     dst.shape[0], ndim, itemsize, &live[0])
    for c in range(nchunks):
        if direct[c]:
            p = firsts[c]
            if ends[c] - p != 1 or dst_offsets[p] < 0 or \
                    dst_offsets[p] > dst.shape[0] - nbytes:
                raise ValueError(f"{fn}: chunk {c} is direct but its piece is not one run "
                                 f"of {nbytes} bytes of dst")
    plan.elements = False
    plan.outer = NULL
    plan.firsts = &firsts[0] if nchunks else NULL
    plan.ends = &ends[0] if nchunks else NULL
    plan.src_offsets = &src_offsets[0] if n else NULL
    plan.dst = &dst[0] if dst.shape[0] else NULL
    plan.dlen = dst.shape[0]
    plan.dst_offsets = &dst_offsets[0] if n else NULL
    plan.dst_strides = &dst_strides[0, 0] if n and ndim else NULL
    plan.counts = &counts[0, 0] if n and ndim else NULL
    plan.ndim = ndim
    plan.live = &live[0] if n else NULL
    plan.direct = &direct[0] if nchunks else NULL
    plan.status = &status[0] if nchunks else NULL
    return 0


def read_chunks(
    list sources not None,
    bint paths,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] dst_strides not None,
    const int64_t[:, ::1] counts not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    const uint8_t[::1] direct not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    object transpose=None,
):
    """Execute a read plan of whole chunks (see the module for its nouns): each chunk of
    ``sources`` read, decoded and its pieces copied into ``dst`` (or filled), on up to
    ``nthreads`` threads, the GIL released throughout.  ``status[c]`` says what became of
    chunk ``c``.

    Raises
    ------
    ValueError
        For a plan that does not hold together (array lengths, a piece outside ``src`` or
        ``dst``, negative ``src_strides``, a ``direct`` chunk that is not one run of ``dst``, an unknown chain, a
        source that is not a path or a buffer): never for stored bytes.
    """
    cdef str fn = "read_chunks"
    cdef Py_ssize_t nchunks = len(sources)
    cdef Plan plan
    live = bytearray(src_offsets.shape[0])
    _set_pieces(&plan, fn, nchunks, firsts, ends, src_offsets, src_strides, dst, dst_offsets,
                dst_strides, counts, itemsize, fill, direct, compressor, checksums, swap,
                nbytes, live, status)
    _set_transpose(&plan, fn, transpose)
    held = _set_sources(&plan, sources, paths, fn)
    with nogil:
        run_tasks(_read_chunk, &plan, nchunks, nthreads)


def read_elements(
    list sources not None,
    bint paths,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] dst_offsets not None,
    uint8_t[::1] dst not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    object transpose=None,
):
    """:func:`read_chunks` for points: chunk ``c``'s elements are rows ``firsts[c]:ends[c]``,
    element ``p`` copied from byte ``src_offsets[p]`` of the decoded chunk to byte
    ``dst_offsets[p]`` of ``dst`` (in row order: with repeated destinations the last row
    wins), or filled where the chunk is not stored.

    Raises
    ------
    ValueError
        For a plan that does not hold together (array lengths, an element outside the chunk
        or ``dst``, an unknown chain, a source that is not a path or a buffer): never for
        stored bytes.
    """
    cdef str fn = "read_elements"
    cdef Py_ssize_t nchunks = len(sources)
    cdef Plan plan
    _set_elements(&plan, fn, nchunks, firsts, ends, src_offsets, dst_offsets, dst, itemsize,
                  fill, compressor, checksums, swap, nbytes, status)
    _set_transpose(&plan, fn, transpose)
    held = _set_sources(&plan, sources, paths, fn)
    with nogil:
        run_tasks(_read_chunk, &plan, nchunks, nthreads)


cdef OuterPieces _set_outer(Plan* plan, str fn, Py_ssize_t nchunks, const int64_t[::1] firsts,
                           const int64_t[::1] ends, const int64_t[::1] bounds,
                           const int64_t[::1] src_offsets, const int64_t[::1] dst_offsets,
                           const int64_t[:, ::1] counts, uint8_t[::1] dst, int64_t itemsize,
                           const uint8_t[::1] fill, int compressor, int checksums,
                           int64_t swap, int64_t nbytes, int8_t[::1] status):
    """Validate the outer-product pieces (checked copies, against a decoded chunk and
    ``dst``) and the chain, and point ``plan`` at them; returns the pieces, to be held for
    the call."""
    cdef Py_ssize_t c
    _set_chain(plan, fn, itemsize, fill, compressor, checksums, swap, nbytes)
    cdef OuterPieces pieces = OuterPieces(fn, bounds, src_offsets, dst_offsets, counts, nbytes,
                                          dst.shape[0], itemsize)
    if firsts.shape[0] != nchunks or ends.shape[0] != nchunks or status.shape[0] != nchunks:
        raise ValueError(f"{fn}: firsts, ends and status must have one entry per chunk "
                         f"({nchunks} chunks)")
    for c in range(nchunks):
        if not 0 <= firsts[c] <= ends[c] <= pieces.n:
            raise ValueError(f"{fn}: chunk {c}: pieces [{firsts[c]}, {ends[c]}) are not rows "
                             f"of the {pieces.n} pieces")
    plan.elements = False
    plan.outer = &pieces.rows
    plan.firsts = &firsts[0] if nchunks else NULL
    plan.ends = &ends[0] if nchunks else NULL
    plan.src_offsets, plan.dst_offsets, plan.dst_strides, plan.counts = NULL, NULL, NULL, NULL
    plan.live, plan.direct = NULL, NULL
    plan.ndim = 0
    plan.dst = &dst[0] if dst.shape[0] else NULL
    plan.dlen = dst.shape[0]
    plan.status = &status[0] if nchunks else NULL
    return pieces


def read_chunks_outer(
    list sources not None,
    bint paths,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] bounds not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] counts not None,
    uint8_t[::1] dst not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    object transpose=None,
):
    """:func:`read_chunks` for outer products (``oindex``, stepped slices): chunk ``c``'s
    pieces are rows ``firsts[c]:ends[c]``, piece ``p`` a ``scatter.copy_outer`` of the
    decoded chunk into ``dst`` with the per-dimension lengths ``counts[p]`` and the offsets
    ``bounds[p]:bounds[p + 1]`` of ``src_offsets`` and ``dst_offsets`` (in C order: with
    repeated destinations the last wins), or filled where the chunk is not stored.

    Raises
    ------
    ValueError
        For a plan that does not hold together (array lengths, a piece whose offsets reach
        outside the chunk or ``dst``, an unknown chain, a source that is not a path or a
        buffer): never for stored bytes.
    """
    cdef str fn = "read_chunks_outer"
    cdef Py_ssize_t nchunks = len(sources)
    cdef Plan plan
    pieces = _set_outer(&plan, fn, nchunks, firsts, ends, bounds, src_offsets, dst_offsets,
                        counts, dst, itemsize, fill, compressor, checksums, swap, nbytes,
                        status)
    _set_transpose(&plan, fn, transpose)
    held = _set_sources(&plan, sources, paths, fn)
    with nogil:
        run_tasks(_read_chunk, &plan, nchunks, nthreads)


# -- shards ------------------------------------------------------------------------------------


cdef struct Shards:
    Plan* plan
    const char** paths
    const uint8_t** values
    int64_t* value_lens
    int* fds             # per shard: its open file (-1: not stored, or its index failed)
    int8_t* shard_status
    uint8_t* indexes     # per shard: its index, index_nbytes bytes
    int64_t index_nbytes
    bint at_end
    bint index_checksum
    int64_t per_shard    # entries in an index
    int64_t* sizes       # per shard: its size
    const int64_t* inner_shard
    const int64_t* inner_slot
    const uint8_t** inner_base  # values: per shard its first byte


cdef bint _index_unsound(const uint8_t* index, int64_t entries, int64_t size,
                        int64_t index_nbytes, bint at_end) noexcept nogil:
    """Whether a shard's index (of ``entries`` entries, in a shard of ``size`` bytes) has a
    problem the Python path reports (``shard.check_shard_index``'s: a half-missing entry,
    one outside the shard or into the index, two overlapping): the whole shard is left to
    it then, as a read of any of its inner chunks there would refuse it."""
    cdef uint64_t* e = <uint64_t*>thread_buffer(SLOT_INDEX, <size_t>(16 * entries))
    cdef Py_ssize_t i, a = -1, b = -1
    cdef int64_t lo = size - index_nbytes if at_end else 0
    if e == NULL:
        return True
    for i in range(2 * entries):
        e[i] = _le_u64(index + 8 * i)
    return check_index_core(e, entries, True, <uint64_t>size, True, <uint64_t>lo,
                            <uint64_t>(lo + index_nbytes), &a, &b) != 0


cdef void _read_index(void* ctx, Py_ssize_t s) noexcept nogil:
    """Pass one, per shard: its index read (and checked), its file kept open."""
    cdef Shards* sh = <Shards*>ctx
    cdef int fd = -1, err
    cdef int64_t size, got, at
    cdef uint8_t* index = sh.indexes + s * sh.index_nbytes
    cdef int64_t n = sh.index_nbytes
    sh.fds[s] = -1
    if sh.paths != NULL:
        err = _open_file(sh.paths[s], &fd, &size)
        if err:
            sh.shard_status[s] = _MISSING if err == ENOENT or err == ENOTDIR else _FAILED_IO
            return
        if size < 0:
            c_close(fd)
            sh.shard_status[s] = _MISSING
            return
        if size < n:
            c_close(fd)
            sh.shard_status[s] = _FAILED_INDEX
            return
        at = size - n if sh.at_end else 0
        if _pread_upto(fd, index, n, at, &got) != 0 or got != n:
            c_close(fd)
            sh.shard_status[s] = _FAILED_IO
            return
    else:
        if sh.values[s] == NULL:
            sh.shard_status[s] = _MISSING
            return
        size = sh.value_lens[s]
        if size < n:
            sh.shard_status[s] = _FAILED_INDEX
            return
        memcpy(index, sh.values[s] + (size - n if sh.at_end else 0), <size_t>n)
    if sh.index_checksum and crc32c_update(0, index, <size_t>(n - 4)) != _le_u32(index + n - 4):
        if fd >= 0:
            c_close(fd)
        sh.shard_status[s] = _FAILED_CHECKSUM
        return
    if _index_unsound(index, sh.per_shard, size, n, sh.at_end):
        if fd >= 0:
            c_close(fd)
        sh.shard_status[s] = _FAILED_INDEX
        return
    sh.sizes[s] = size
    sh.fds[s] = fd
    sh.shard_status[s] = _READ


cdef void _locate_inner(Shards* sh, Py_ssize_t k) noexcept nogil:
    """Inner chunk ``k``'s source: its shard's file or value and its entry's byte range."""
    cdef Plan* plan = sh.plan
    cdef int64_t s = sh.inner_shard[k]
    cdef const uint8_t* entry
    cdef uint64_t offset, nbytes
    cdef int64_t lo, hi
    if plan.fds != NULL:
        plan.fds[k] = -1
    plan.values[k] = NULL
    if sh.shard_status[s] != _READ:
        return
    entry = sh.indexes + s * sh.index_nbytes + 16 * sh.inner_slot[k]
    offset, nbytes = _le_u64(entry), _le_u64(entry + 8)
    if offset == _MISSING_ENTRY and nbytes == _MISSING_ENTRY:
        return
    # the data lies outside the index: before it (at the end) or after it (at the start)
    lo = 0 if sh.at_end else sh.index_nbytes
    hi = sh.sizes[s] - sh.index_nbytes if sh.at_end else sh.sizes[s]
    if offset > <uint64_t>hi or nbytes > <uint64_t>hi - offset or offset < <uint64_t>lo:
        plan.status[k] = _FAILED_INDEX
        return
    if sh.paths != NULL:
        plan.fds[k] = sh.fds[s]
        plan.starts[k] = <int64_t>offset
        plan.lens[k] = <int64_t>nbytes
    else:
        plan.values[k] = sh.values[s] + offset
        plan.value_lens[k] = <int64_t>nbytes


cdef void _read_inner(void* ctx, Py_ssize_t k) noexcept nogil:
    """Pass two, per inner chunk: located, then read as any chunk."""
    cdef Shards* sh = <Shards*>ctx
    sh.plan.status[k] = _READ
    _locate_inner(sh, k)
    if sh.plan.status[k] != _READ:  # (its entry is bad: leave it to the Python path)
        return
    if sh.shard_status[sh.inner_shard[k]] < 0:
        sh.plan.status[k] = sh.shard_status[sh.inner_shard[k]]
        return
    _read_chunk(sh.plan, k)


def read_shards(
    list sources not None,
    bint paths,
    int64_t index_nbytes,
    bint index_at_end,
    bint index_checksum,
    const int64_t[::1] inner_shard not None,
    const int64_t[::1] inner_slot not None,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] dst_strides not None,
    const int64_t[:, ::1] counts not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    const uint8_t[::1] direct not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    int8_t[::1] shard_status not None,
    object transpose=None,
):
    """Execute a read plan of inner chunks of shards (see the module): ``sources`` are the
    shards (at most :data:`MAX_SHARDS` per call), each with an index of
    ``index_nbytes`` bytes (``(offset, nbytes)`` little-endian ``uint64`` pairs, then a
    CRC-32C if ``index_checksum``) at its end or start; inner chunk ``k`` is entry
    ``inner_slot[k]`` of shard ``inner_shard[k]``, its pieces rows ``firsts[k]:ends[k]`` as
    in :func:`read_chunks`.  ``shard_status[s]`` says what became of shard ``s``'s
    index (:data:`MISSING`: its inner chunks filled), ``status[k]`` of inner chunk ``k``.

    Raises
    ------
    ValueError
        As :func:`read_chunks`, and for an index size that is not whole entries (or too
        large for ``len(sources)`` of them in memory), an
        ``inner_shard`` or ``inner_slot`` outside the shards or the index, or too many
        shards.
    """
    cdef str fn = "read_shards"
    cdef Plan plan
    _check_shards(fn, len(sources), index_nbytes, index_checksum, inner_shard, inner_slot,
                  shard_status)
    live = bytearray(src_offsets.shape[0])
    _set_pieces(&plan, fn, inner_shard.shape[0], firsts, ends, src_offsets, src_strides, dst,
                dst_offsets, dst_strides, counts, itemsize, fill, direct, compressor,
                checksums, swap, nbytes, live, status)
    _set_transpose(&plan, fn, transpose)
    _run_shards(&plan, fn, sources, paths, index_nbytes, index_at_end, index_checksum,
                inner_shard, inner_slot, nthreads, shard_status)


cdef int _check_shards(str fn, Py_ssize_t nshards, int64_t index_nbytes, bint index_checksum,
                       const int64_t[::1] inner_shard, const int64_t[::1] inner_slot,
                       int8_t[::1] shard_status) except -1:
    """Validate a shard plan's shards, index and inner chunks' places."""
    cdef Py_ssize_t ninner = inner_shard.shape[0], k
    cdef int64_t entries = (index_nbytes - (4 if index_checksum else 0)) // 16
    if nshards > MAX_OPEN_SHARDS:
        raise ValueError(f"{fn}: {nshards} shards, at most {MAX_OPEN_SHARDS} per call")
    if entries < 1 or entries * 16 + (4 if index_checksum else 0) != index_nbytes:
        raise ValueError(f"{fn}: an index of {index_nbytes} bytes is not whole entries")
    if index_nbytes > PY_SSIZE_T_MAX // max(1, nshards):
        raise ValueError(f"{fn}: {nshards} indexes of {index_nbytes} bytes do not fit in "
                         "memory")
    if inner_slot.shape[0] != ninner or shard_status.shape[0] != nshards:
        raise ValueError(f"{fn}: inner_shard and inner_slot must have one entry per inner "
                         "chunk, shard_status one per shard")
    for k in range(ninner):
        if not (0 <= inner_shard[k] < nshards and 0 <= inner_slot[k] < entries):
            raise ValueError(f"{fn}: inner chunk {k} is outside the shards or their index")
    return 0


cdef int _run_shards(Plan* plan, str fn, list sources, bint paths, int64_t index_nbytes,
                     bint index_at_end, bint index_checksum, const int64_t[::1] inner_shard,
                     const int64_t[::1] inner_slot, int nthreads,
                     int8_t[::1] shard_status) except -1:
    """Execute a checked shard plan (``plan``: its inner chunks' pieces or elements): every
    shard's index, then every inner chunk, the shards' files closed after."""
    cdef Py_ssize_t nshards = len(sources), ninner = inner_shard.shape[0], k
    cdef Shards sh
    cdef _Paths held_paths = None
    cdef _Values held_values = None
    fds = np.full(max(1, ninner), -1, dtype=np.intc)
    starts = np.zeros(max(1, ninner), dtype=np.int64)
    lens = np.zeros(max(1, ninner), dtype=np.int64)
    inner_values = _Values([None] * ninner)
    indexes = np.empty(max(1, nshards) * index_nbytes, dtype=np.uint8)
    shard_fds = np.full(max(1, nshards), -1, dtype=np.intc)
    sizes = np.zeros(max(1, nshards), dtype=np.int64)
    cdef int[::1] fds_v = fds, shard_fds_v = shard_fds
    cdef int64_t[::1] starts_v = starts, lens_v = lens, sizes_v = sizes
    cdef uint8_t[::1] indexes_v = indexes
    plan.paths = NULL
    plan.fds = &fds_v[0]
    plan.starts, plan.lens = &starts_v[0], &lens_v[0]
    plan.values, plan.value_lens = inner_values.ptrs, inner_values.lens
    sh.plan = plan
    sh.paths, sh.values, sh.value_lens = NULL, NULL, NULL
    if paths:
        held_paths = _Paths(sources, fn)
        sh.paths = held_paths.ptrs
    else:
        held_values = _Values(sources)
        sh.values, sh.value_lens = held_values.ptrs, held_values.lens
        plan.fds = NULL
    sh.fds = &shard_fds_v[0]
    sh.shard_status = &shard_status[0] if nshards else NULL
    sh.indexes = &indexes_v[0]
    sh.index_nbytes, sh.at_end, sh.index_checksum = index_nbytes, index_at_end, index_checksum
    sh.per_shard = (index_nbytes - (4 if index_checksum else 0)) // 16
    sh.sizes = &sizes_v[0]
    sh.inner_shard = &inner_shard[0] if ninner else NULL
    sh.inner_slot = &inner_slot[0] if ninner else NULL
    try:
        with nogil:
            run_tasks(_read_index, &sh, nshards, nthreads)
            run_tasks(_read_inner, &sh, ninner, nthreads)
    finally:
        for k in range(nshards):
            if shard_fds_v[k] >= 0:
                c_close(shard_fds_v[k])
    return 0


def read_shard_elements(
    list sources not None,
    bint paths,
    int64_t index_nbytes,
    bint index_at_end,
    bint index_checksum,
    const int64_t[::1] inner_shard not None,
    const int64_t[::1] inner_slot not None,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] dst_offsets not None,
    uint8_t[::1] dst not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    int8_t[::1] shard_status not None,
    object transpose=None,
):
    """:func:`read_shards` for points: inner chunk ``k`` (entry ``inner_slot[k]`` of shard
    ``inner_shard[k]``) has the elements ``firsts[k]:ends[k]``, as in
    :func:`read_elements`.

    Raises
    ------
    ValueError
        As :func:`read_shards` and :func:`read_elements`.
    """
    cdef str fn = "read_shard_elements"
    cdef Plan plan
    _check_shards(fn, len(sources), index_nbytes, index_checksum, inner_shard, inner_slot,
                  shard_status)
    _set_elements(&plan, fn, inner_shard.shape[0], firsts, ends, src_offsets, dst_offsets,
                  dst, itemsize, fill, compressor, checksums, swap, nbytes, status)
    _set_transpose(&plan, fn, transpose)
    _run_shards(&plan, fn, sources, paths, index_nbytes, index_at_end, index_checksum,
                inner_shard, inner_slot, nthreads, shard_status)


def read_shards_outer(
    list sources not None,
    bint paths,
    int64_t index_nbytes,
    bint index_at_end,
    bint index_checksum,
    const int64_t[::1] inner_shard not None,
    const int64_t[::1] inner_slot not None,
    const int64_t[::1] firsts not None,
    const int64_t[::1] ends not None,
    const int64_t[::1] bounds not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] counts not None,
    uint8_t[::1] dst not None,
    int64_t itemsize,
    const uint8_t[::1] fill not None,
    int compressor,
    int checksums,
    int64_t swap,
    int64_t nbytes,
    int nthreads,
    int8_t[::1] status not None,
    int8_t[::1] shard_status not None,
    object transpose=None,
):
    """:func:`read_shards` for outer products: inner chunk ``k`` (entry ``inner_slot[k]``
    of shard ``inner_shard[k]``) has the pieces ``firsts[k]:ends[k]``, as in
    :func:`read_chunks_outer`.

    Raises
    ------
    ValueError
        As :func:`read_shards` and :func:`read_chunks_outer`.
    """
    cdef str fn = "read_shards_outer"
    cdef Plan plan
    _check_shards(fn, len(sources), index_nbytes, index_checksum, inner_shard, inner_slot,
                  shard_status)
    pieces = _set_outer(&plan, fn, inner_shard.shape[0], firsts, ends, bounds, src_offsets,
                        dst_offsets, counts, dst, itemsize, fill, compressor, checksums, swap,
                        nbytes, status)
    _set_transpose(&plan, fn, transpose)
    _run_shards(&plan, fn, sources, paths, index_nbytes, index_at_end, index_checksum,
                inner_shard, inner_slot, nthreads, shard_status)
