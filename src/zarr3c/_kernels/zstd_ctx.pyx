"""zstd frame decoding with one decompression context per thread, kept between calls.

``numcodecs.zstd.decompress`` makes (and frees) a new zstd context on every call: a fixed
cost, mostly zstd's CPU feature probe (``cpuid``, which traps to the hypervisor in a virtual
machine), which a sharded read pays once per inner chunk (``bench_codecs.ZstdCallCost``
tracks it).  This module calls a libzstd through function pointers that :func:`bind`
receives (their addresses, looked up by the caller: ``zarr3c.codecs.zstd`` picks the newest
build installed, ``backports.zstd``'s or the standard library's ``compression.zstd``'s, else
numcodecs'), and keeps a context per thread.  Nothing here links against zstd itself: until
:func:`bind` succeeds, :func:`available` is False and callers use numcodecs.

:func:`decompress_into` decodes a whole buffer of zstd frames into a buffer whose size is
the capacity zstd may write; zstd bounds every write by that capacity and reads nothing past
the source's length, and the GIL is released for the call.  :func:`decompress_prefix_into`
decodes only the blocks of a frame that hold the first bytes of its content (zstd's
buffer-less block-by-block decoder, straight into the output and stopped there: the blocks
past them are never decoded), for a read that needs only the start of a chunk.
:func:`decompress_bounded` is :func:`decompress_into` telling why zstd refused (libzstd's
error code): a decoding capped at a chunk's size, which must say whether the content was
too large (a decompression bomb stops there), corrupt, or failed its checksum.  The
reference of all three is ``numcodecs.zstd.decompress``.

:func:`compress_into` encodes a buffer as one zstd frame into a given buffer through a
compression context kept per thread (bound separately: :func:`bind_compress`), with the
parameters ``numcodecs.zstd.compress`` sets (level and checksum flag), so that its frames are
byte for byte those numcodecs' calls make with the same library (its reference,
``_reference.zstd_frame``: numcodecs' own frames where numcodecs' build is bound; another
version of libzstd may write other bytes).  numcodecs makes a context per call and returns a
new ``bytes`` of zstd's worst-case size: a fresh workspace and output per chunk, whose page
faults are a visible part of a sharded write (``bench_codecs.ZstdInnerEncode``).

:func:`decompress_pieces` decodes a batch of a shard's inner chunks one after another into
one scratch buffer and copies each one's pieces out (``scatter.copy_pieces``), with the GIL
released once for the batch rather than taken back twice per inner chunk; its reference is
``decompress_into`` then ``copy_pieces`` per chunk.  :func:`decompress_elements` is the same
for points (``scatter.copy_elements``), :func:`decompress_outer` for outer products
(``scatter.copy_outer``).
"""

import threading

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from cpython.pyport cimport PY_SSIZE_T_MAX

from zarr3c._kernels.copy cimport MAX_NDIM
from zarr3c._kernels.scatter cimport (
    OuterPieces,
    check_element_runs,
    check_piece_rows,
    check_pieces,
    copy_element_run,
    copy_live_pieces,
    take_runs,
)

__all__ = ["ERROR_CHECKSUM_WRONG", "ERROR_DST_SIZE_TOO_SMALL", "ERROR_SRC_SIZE_WRONG",
           "available", "bind", "bind_compress", "compress_available", "compress_bound",
           "compress_into", "decompress_bounded", "decompress_elements", "decompress_into",
           "decompress_outer", "decompress_pieces", "decompress_prefix_into",
           "prefix_available", "version"]

ctypedef void* (*create_dctx_t)() noexcept nogil
ctypedef size_t (*free_dctx_t)(void* dctx) noexcept nogil
ctypedef size_t (*decompress_dctx_t)(void* dctx, void* dst, size_t dst_capacity,
                                     const void* src, size_t src_size) noexcept nogil
ctypedef unsigned (*is_error_t)(size_t code) noexcept nogil

ctypedef size_t (*decompress_begin_t)(void* dctx) noexcept nogil
ctypedef size_t (*next_src_size_t)(void* dctx) noexcept nogil
ctypedef size_t (*decompress_continue_t)(void* dctx, void* dst, size_t dst_capacity,
                                         const void* src, size_t src_size) noexcept nogil
ctypedef size_t (*find_frame_compressed_size_t)(const void* src, size_t src_size) noexcept nogil
ctypedef unsigned long long (*get_frame_content_size_t)(const void* src,
                                                        size_t src_size) noexcept nogil

ctypedef void* (*create_cctx_t)() noexcept nogil
ctypedef size_t (*free_cctx_t)(void* cctx) noexcept nogil
ctypedef size_t (*cctx_set_parameter_t)(void* cctx, int param, int value) noexcept nogil
ctypedef size_t (*compress2_t)(void* cctx, void* dst, size_t dst_capacity,
                               const void* src, size_t src_size) noexcept nogil
ctypedef size_t (*compress_bound_t)(size_t src_size) noexcept nogil

# zstd.h's ZSTD_cParameter values (stable API since 1.4.0)
cdef int _C_COMPRESSION_LEVEL = 100
cdef int _C_CHECKSUM_FLAG = 201

cdef create_dctx_t _create_dctx = NULL
cdef free_dctx_t _free_dctx = NULL
cdef decompress_dctx_t _decompress_dctx = NULL
cdef is_error_t _is_error = NULL
cdef decompress_begin_t _decompress_begin = NULL
cdef next_src_size_t _next_src_size = NULL
cdef decompress_continue_t _decompress_continue = NULL
cdef find_frame_compressed_size_t _find_frame_compressed_size = NULL
cdef get_frame_content_size_t _get_frame_content_size = NULL
cdef unsigned _version = 0
cdef create_cctx_t _create_cctx = NULL
cdef free_cctx_t _free_cctx = NULL
cdef cctx_set_parameter_t _cctx_set_parameter = NULL
cdef compress2_t _compress2 = NULL
cdef compress_bound_t _compress_bound = NULL

# Each thread's contexts live in a _DCtx and a _CCtx kept in this thread-local, so they are
# freed when the thread ends (its locals are dropped).
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


cdef class _CCtx:
    cdef void* ptr

    def __cinit__(self):
        self.ptr = _create_cctx()
        if self.ptr == NULL:
            raise MemoryError("zstd: cannot create a compression context")

    def __dealloc__(self):
        if self.ptr != NULL:
            _free_cctx(self.ptr)
            self.ptr = NULL


def bind(size_t create_dctx, size_t free_dctx, size_t decompress_dctx, size_t is_error,
         unsigned version, size_t decompress_begin=0, size_t next_src_size=0,
         size_t decompress_continue=0, size_t find_frame_compressed_size=0,
         size_t get_frame_content_size=0):
    """Use libzstd's ``ZSTD_createDCtx``, ``ZSTD_freeDCtx``, ``ZSTD_decompressDCtx`` and
    ``ZSTD_isError`` at these addresses (``version`` is its ``ZSTD_versionNumber()``), and
    for prefix decoding (all five, or none: :func:`prefix_available`) its
    ``ZSTD_decompressBegin``, ``ZSTD_nextSrcSizeToDecompress``,
    ``ZSTD_decompressContinue`` (the buffer-less decoder), ``ZSTD_findFrameCompressedSize``
    and ``ZSTD_getFrameContentSize``.

    Binds once per process: the contexts already made belong to the first library.
    """
    global _create_dctx, _free_dctx, _decompress_dctx, _is_error, _version
    global _decompress_begin, _next_src_size, _decompress_continue
    global _find_frame_compressed_size, _get_frame_content_size
    if not (create_dctx and free_dctx and decompress_dctx and is_error):
        raise ValueError("zstd_ctx.bind: a function address is null")
    if _decompress_dctx != NULL:
        return
    _create_dctx = <create_dctx_t><void*>create_dctx
    _free_dctx = <free_dctx_t><void*>free_dctx
    _is_error = <is_error_t><void*>is_error
    _version = version
    if (decompress_begin and next_src_size and decompress_continue
            and find_frame_compressed_size and get_frame_content_size):
        _decompress_begin = <decompress_begin_t><void*>decompress_begin
        _next_src_size = <next_src_size_t><void*>next_src_size
        _decompress_continue = <decompress_continue_t><void*>decompress_continue
        _find_frame_compressed_size = (
            <find_frame_compressed_size_t><void*>find_frame_compressed_size)
        _get_frame_content_size = <get_frame_content_size_t><void*>get_frame_content_size
    _decompress_dctx = <decompress_dctx_t><void*>decompress_dctx


def bind_compress(size_t create_cctx, size_t free_cctx, size_t cctx_set_parameter,
                  size_t compress2, size_t compress_bound):
    """Use libzstd's ``ZSTD_createCCtx``, ``ZSTD_freeCCtx``, ``ZSTD_CCtx_setParameter``,
    ``ZSTD_compress2`` and ``ZSTD_compressBound`` at these addresses (the library
    :func:`bind` was given, which must be bound first: errors are read with its
    ``ZSTD_isError``).  Binds once per process."""
    global _create_cctx, _free_cctx, _cctx_set_parameter, _compress2, _compress_bound
    if not (create_cctx and free_cctx and cctx_set_parameter and compress2 and compress_bound):
        raise ValueError("zstd_ctx.bind_compress: a function address is null")
    if _decompress_dctx == NULL:
        raise RuntimeError("zstd_ctx.bind_compress: bind() the library first")
    if _compress2 != NULL:
        return
    _create_cctx = <create_cctx_t><void*>create_cctx
    _free_cctx = <free_cctx_t><void*>free_cctx
    _cctx_set_parameter = <cctx_set_parameter_t><void*>cctx_set_parameter
    _compress_bound = <compress_bound_t><void*>compress_bound
    _compress2 = <compress2_t><void*>compress2


def compress_available():
    """True once :func:`bind_compress` has given this module libzstd's compressor."""
    return _compress2 != NULL


def compress_bound(Py_ssize_t nbytes):
    """The most bytes :func:`compress_into` may write for ``nbytes`` of input (zstd's
    ``ZSTD_compressBound``); -1 for a size zstd cannot take."""
    if _compress2 == NULL:
        raise RuntimeError("zstd_ctx: no libzstd compressor bound")
    if nbytes < 0:
        raise ValueError("zstd_ctx.compress_bound: negative size")
    cdef size_t bound = _compress_bound(<size_t>nbytes)
    if _is_error(bound) or bound > <size_t>PY_SSIZE_T_MAX:
        return -1
    return <Py_ssize_t>bound


cdef _CCtx _thread_cctx():
    if _compress2 == NULL:
        raise RuntimeError("zstd_ctx: no libzstd compressor bound")
    cdef _CCtx ctx = getattr(_local, "cctx", None)
    if ctx is None:
        ctx = _CCtx()
        _local.cctx = ctx
    return ctx


def compress_into(const uint8_t[::1] src, uint8_t[::1] dst, int level, bint checksum):
    """Encode ``src`` as one zstd frame at ``level`` (0: zstd's default), with a content
    checksum if ``checksum``, into the start of ``dst``: the frame
    ``numcodecs.zstd.compress(src, level, checksum)`` makes with the bound library.

    Returns the frame's size, or -1 if zstd refuses (a ``dst`` smaller than
    :func:`compress_bound` that zstd finds too small, which it may even when the frame
    would fit); ``dst`` may then hold anything.  zstd writes nothing past ``len(dst)`` and
    reads nothing past ``len(src)``.
    """
    cdef _CCtx ctx = _thread_cctx()
    cdef size_t src_size = src.shape[0]
    cdef size_t dst_size = dst.shape[0]
    # Empty views may have no address: hand zstd valid pointers with size 0 instead.
    cdef uint8_t empty_src = 0
    cdef uint8_t empty_dst = 0
    cdef const void* src_ptr = &empty_src
    cdef void* dst_ptr = &empty_dst
    if src_size:
        src_ptr = &src[0]
    if dst_size:
        dst_ptr = &dst[0]
    cdef size_t result
    with nogil:
        # Parameters are sticky in a context: set both on every call (another codec of this
        # thread may have set others).  A compression starts a new frame (ZSTD_compress2).
        result = _cctx_set_parameter(ctx.ptr, _C_COMPRESSION_LEVEL, level)
        if not _is_error(result):
            result = _cctx_set_parameter(ctx.ptr, _C_CHECKSUM_FLAG, 1 if checksum else 0)
        if not _is_error(result):
            result = _compress2(ctx.ptr, dst_ptr, dst_size, src_ptr, src_size)
    if _is_error(result):
        # A context whose compression failed (e.g. a dst found too small) fails every later
        # one too: this thread makes a new one next time.
        _local.cctx = None
        return -1
    return <Py_ssize_t>result


def available():
    """True once :func:`bind` has given this module a libzstd."""
    return _decompress_dctx != NULL


def prefix_available():
    """True once :func:`bind` has given this module a libzstd with prefix decoding."""
    return _decompress_dctx != NULL and _decompress_continue != NULL


def version():
    """The bound libzstd's ``ZSTD_versionNumber()`` (0 if unbound)."""
    return _version


cdef _DCtx _thread_ctx():
    if _decompress_dctx == NULL:
        raise RuntimeError("zstd_ctx: no libzstd bound")
    cdef _DCtx ctx = getattr(_local, "dctx", None)
    if ctx is None:
        ctx = _DCtx()
        _local.dctx = ctx
    return ctx


#: ZSTD_ErrorCode values (zstd_errors.h, among the codes it declares stable) that callers of
#: :func:`decompress_bounded` tell apart
cdef enum:
    _CHECKSUM_WRONG = 22
    _DST_SIZE_TOO_SMALL = 70
    _SRC_SIZE_WRONG = 72
ERROR_CHECKSUM_WRONG = _CHECKSUM_WRONG
ERROR_DST_SIZE_TOO_SMALL = _DST_SIZE_TOO_SMALL
ERROR_SRC_SIZE_WRONG = _SRC_SIZE_WRONG


cdef Py_ssize_t _decode_whole(const uint8_t[::1] src, uint8_t[::1] dst) except? -1:
    """:func:`decompress_bounded`'s core: the bytes decoded, or minus libzstd's error code."""
    cdef _DCtx ctx = _thread_ctx()
    cdef size_t src_size = src.shape[0]
    cdef size_t dst_size = dst.shape[0]
    if src_size == 0:  # no frame at all (zstd itself would decode it as nothing)
        return -_SRC_SIZE_WRONG
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
        # (ZSTD_getErrorCode: an error result is the code's negation as a size_t)
        return -<Py_ssize_t>(<size_t>0 - result)
    return <Py_ssize_t>result


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the zstd frames in ``src`` into the start of ``dst``.

    Returns the number of bytes decoded, or -1 if zstd refuses the input (empty, corrupt,
    truncated, a checksum mismatch, or more content than ``dst`` holds: the caller's
    ordinary decode then reports why); ``dst`` may then hold anything.
    """
    cdef Py_ssize_t n = _decode_whole(src, dst)
    return n if n >= 0 else -1


def decompress_bounded(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decode the zstd frames in ``src`` into the start of ``dst``, never past its end.

    Returns the number of bytes decoded, or minus libzstd's error code
    (``ZSTD_getErrorCode``) if it refuses the input: ``-ERROR_DST_SIZE_TOO_SMALL`` when the
    content does not fit in ``dst`` (zstd stops there, whether the frame declares its size
    or not), ``-ERROR_CHECKSUM_WRONG`` for a frame checksum mismatch,
    ``-ERROR_SRC_SIZE_WRONG`` for an empty ``src``; ``dst`` may then hold anything.  For a
    caller that caps a decoding at ``len(dst)`` bytes and reports why it failed.
    """
    return _decode_whole(src, dst)


def decompress_prefix_into(const uint8_t[::1] src, uint8_t[::1] dst, Py_ssize_t need):
    """Decode the zstd frame ``src``, whose content is ``len(dst)`` bytes, into ``dst``
    block after block, stopping after the block that holds byte ``need - 1``.

    Only for ``src`` that is exactly one frame (zstd walks its block headers to the end:
    a truncated frame, or bytes after it, are refused), declaring ``len(dst)`` bytes of
    content, and without a content checksum (one could only be verified by decoding
    everything: such frames are refused, for the caller's whole decode to check).  Returns
    the number of bytes decoded (at least ``need``: whole blocks; ``dst`` past them may
    hold anything), or -1 if refused or zstd fails (``dst`` may then hold anything: the caller
    decodes the whole frame, which reports why).  RuntimeError if prefix decoding is not
    bound.
    """
    cdef _DCtx ctx = _thread_ctx()
    if _decompress_continue == NULL:
        raise RuntimeError("zstd_ctx: no buffer-less decoder bound")
    cdef size_t src_size = src.shape[0]
    cdef size_t dst_size = dst.shape[0]
    if src_size < 5 or need < 1 or <size_t>need > dst_size:
        return -1
    cdef const uint8_t* sp = &src[0]
    cdef uint8_t* dp = &dst[0]
    cdef Py_ssize_t done
    with nogil:
        done = dctx_decompress_prefix(ctx.ptr, dp, dst_size, sp, src_size, <size_t>need)
    return done


cdef class _Batch:
    """The frames of a batch call as pointers and sizes (their buffers held while it
    lives), and each frame's ``[start, stop)`` run of pieces or elements, checked to lie in
    ``[0, limit]``: private copies, which the calls read without the GIL; and the scratch
    buffer the frames decode into, which must not be empty.  :meth:`decode` decodes a frame
    into it, :meth:`left` lists the frames that did not decode."""
    cdef list views
    cdef const uint8_t** srcs
    cdef size_t* sizes
    cdef int64_t* runs
    cdef uint8_t* failed
    cdef Py_ssize_t n
    cdef uint8_t[::1] scratch
    cdef uint8_t* sp
    cdef size_t slen

    def __cinit__(self, str fn, list frames, const int64_t[::1] starts not None,
                  const int64_t[::1] stops not None, Py_ssize_t limit,
                  uint8_t[::1] scratch not None):
        cdef Py_ssize_t k, n = len(frames)
        cdef const uint8_t[::1] frame
        if scratch.shape[0] == 0:
            raise ValueError(f"{fn}: scratch is empty")
        self.scratch, self.sp, self.slen = scratch, &scratch[0], scratch.shape[0]
        self.n = n
        self.views = []
        self.srcs = <const uint8_t**>malloc((n + 1) * sizeof(uint8_t*))
        self.sizes = <size_t*>malloc((n + 1) * sizeof(size_t))
        self.runs = <int64_t*>malloc((2 * n + 1) * sizeof(int64_t))
        self.failed = <uint8_t*>calloc(n + 1, 1)
        if self.srcs == NULL or self.sizes == NULL or self.runs == NULL or self.failed == NULL:
            raise MemoryError(fn)
        take_runs(fn, "frame", self.runs, starts, stops, n, limit)
        for k in range(n):
            frame = frames[k]
            self.views.append(frame)
            self.sizes[k] = frame.shape[0]
            self.srcs[k] = &frame[0] if self.sizes[k] else NULL

    def __dealloc__(self):
        free(self.srcs)
        free(self.sizes)
        free(self.runs)
        free(self.failed)

    cdef bint decode(self, void* dctx, Py_ssize_t k) noexcept nogil:
        """Whether frame ``k`` decodes to exactly the scratch buffer's size, into it (if
        not, it is marked left)."""
        cdef size_t result
        if self.sizes[k] == 0:  # no frame at all
            self.failed[k] = 1
            return False
        result = _decompress_dctx(dctx, self.sp, self.slen, self.srcs[k], self.sizes[k])
        if _is_error(result) or result != self.slen:
            self.failed[k] = 1
            return False
        return True

    cdef list left(self):
        """The frames :meth:`decode` marked: none of their parts were copied."""
        return [k for k in range(self.n) if self.failed[k]]


def decompress_pieces(
    list frames,
    uint8_t[::1] scratch not None,
    const int64_t[::1] piece_starts not None,
    const int64_t[::1] piece_stops not None,
    const int64_t[::1] src_offsets not None,
    const int64_t[::1] src_strides not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    const int64_t[:, ::1] dst_strides not None,
    const int64_t[:, ::1] shapes not None,
    int64_t itemsize,
):
    """For each ``k``: decode the zstd frames ``frames[k]`` into ``scratch``, then copy
    pieces ``piece_starts[k] <= p < piece_stops[k]`` of it to ``dst`` as
    ``scatter.copy_pieces(scratch, src_offsets, src_strides, dst, dst_offsets, dst_strides,
    shapes, itemsize)`` copies them; the GIL released once for all.

    Returns the list of ``k`` whose frames did not decode to exactly ``len(scratch)`` bytes
    (refused by zstd, or another size): none of their pieces are copied, for the caller's
    ordinary decode, which reports why.

    Raises
    ------
    ValueError
        Before anything is decoded, as ``copy_pieces`` for a piece reaching outside
        ``scratch`` or ``dst``; for a piece range outside the piece arrays, arrays of
        different lengths or an empty ``scratch``.
    """
    cdef _DCtx ctx = _thread_ctx()
    cdef Py_ssize_t npieces = src_offsets.shape[0], ndim = src_strides.shape[0], k
    cdef Py_ssize_t changed = -1
    cdef _Batch batch = _Batch("decompress_pieces", frames, piece_starts, piece_stops, npieces,
                               scratch)
    check_piece_rows("decompress_pieces", npieces, dst_offsets, dst_strides, shapes, ndim)
    if itemsize < 1:
        raise ValueError(f"decompress_pieces: itemsize = {itemsize} must be >= 1")
    cdef Py_ssize_t slen = batch.slen, dlen = dst.shape[0]
    cdef uint8_t[::1] live = bytearray(npieces + 1)
    # (private copies: the arrays may change while the GIL is released; see copy_live_pieces)
    cdef int64_t sst[MAX_NDIM]
    if ndim:
        memcpy(sst, &src_strides[0], ndim * sizeof(int64_t))
    cdef const int64_t* sop = &src_offsets[0] if npieces else NULL
    cdef const int64_t* dop = &dst_offsets[0] if npieces else NULL
    cdef const int64_t* dsp = &dst_strides[0, 0] if npieces and ndim else NULL
    cdef const int64_t* shp = &shapes[0, 0] if npieces and ndim else NULL
    cdef const int64_t* runs = batch.runs
    for k in range(batch.n):
        check_pieces("decompress_pieces", runs[2 * k], runs[2 * k + 1], sop, sst, slen, dop,
                     dsp, shp, dlen, ndim, itemsize, &live[0])
    cdef uint8_t* dp = &dst[0] if dlen else NULL
    with nogil:
        for k in range(batch.n):
            if batch.decode(ctx.ptr, k):
                changed = copy_live_pieces(batch.sp, slen, sop, sst, dp, dlen, dop, dsp, shp,
                                           runs[2 * k], runs[2 * k + 1], ndim, itemsize,
                                           &live[0])
                if changed >= 0:
                    break
    if changed >= 0:
        raise ValueError(f"decompress_pieces: piece {changed} changed during the call")
    return batch.left()


def decompress_elements(
    list frames,
    uint8_t[::1] scratch not None,
    const int64_t[::1] run_starts not None,
    const int64_t[::1] run_stops not None,
    const int64_t[::1] src_offsets not None,
    uint8_t[::1] dst not None,
    const int64_t[::1] dst_offsets not None,
    int64_t itemsize,
):
    """For each ``k``: decode the zstd frames ``frames[k]`` into ``scratch``, then copy
    elements ``run_starts[k] <= i < run_stops[k]`` of it to ``dst`` as
    ``scatter.copy_elements(scratch, src_offsets, dst, dst_offsets, itemsize)`` copies them (in
    order: the last of repeated destinations wins); the GIL released once for all.

    Returns the list of ``k`` whose frames did not decode to exactly ``len(scratch)`` bytes:
    none of their elements are copied (the caller's ordinary decode reports why).

    Raises
    ------
    ValueError
        Before anything is decoded: an element reaching outside ``scratch`` or ``dst``, a
        run outside the offset arrays, arrays of different lengths or an empty ``scratch``.
    """
    cdef _DCtx ctx = _thread_ctx()
    cdef Py_ssize_t nelements = src_offsets.shape[0], k, bad = -1
    cdef _Batch batch = _Batch("decompress_elements", frames, run_starts, run_stops, nelements,
                               scratch)
    cdef Py_ssize_t slen = batch.slen, dlen = dst.shape[0]
    check_element_runs("decompress_elements", "frame", batch.runs, batch.n, src_offsets,
                       dst_offsets, NULL, slen, dlen, itemsize, "scratch")
    cdef const int64_t* sop = &src_offsets[0] if nelements else NULL
    cdef const int64_t* dop = &dst_offsets[0] if nelements else NULL
    cdef uint8_t* dp = &dst[0] if dlen else NULL
    with nogil:
        for k in range(batch.n):
            if batch.decode(ctx.ptr, k):
                bad = copy_element_run(batch.runs, k, batch.sp, slen, sop, dp, dlen, dop,
                                       itemsize)
                if bad >= 0:
                    break
    if bad >= 0:
        raise ValueError(f"decompress_elements: element {bad} changed during the call")
    return batch.left()


def decompress_outer(
    list frames,
    uint8_t[::1] scratch not None,
    const int64_t[::1] piece_starts not None,
    const int64_t[::1] piece_stops not None,
    OuterPieces pieces not None,
    uint8_t[::1] dst not None,
):
    """For each ``k``: decode the zstd frames ``frames[k]`` into ``scratch``, then copy the
    outer-product pieces ``piece_starts[k] <= p < piece_stops[k]`` of ``pieces`` (a
    ``scatter.OuterPieces``: each piece as ``scatter.copy_outer`` copies it) from it to ``dst``;
    the GIL released once for all.

    Returns the list of ``k`` whose frames did not decode to exactly ``len(scratch)`` bytes:
    none of their pieces are copied (the caller's ordinary decode reports why).

    Raises
    ------
    ValueError
        Before anything is decoded: ``scratch`` or ``dst`` shorter than the pieces were
        checked against, an empty ``scratch``, a piece range outside the pieces, or
        arrays of different lengths.
    """
    cdef _DCtx ctx = _thread_ctx()
    cdef Py_ssize_t k
    cdef _Batch batch = _Batch("decompress_outer", frames, piece_starts, piece_stops, pieces.n,
                               scratch)
    cdef Py_ssize_t slen = batch.slen, dlen = dst.shape[0]
    if slen < pieces.slen or dlen < pieces.dlen:
        raise ValueError(f"decompress_outer: scratch ({slen} bytes) and dst ({dlen}) are "
                         f"shorter than the pieces' {pieces.slen} and {pieces.dlen}")
    cdef uint8_t* dp = &dst[0] if dlen else NULL
    with nogil:
        for k in range(batch.n):
            if batch.decode(ctx.ptr, k):
                pieces.copy(batch.runs[2 * k], batch.runs[2 * k + 1], batch.sp, dp)
    return batch.left()


# -- for kernels running on threads of their own (zstd_ctx.pxd) ---------------------------------


cdef void* dctx_new() noexcept nogil:
    return _create_dctx() if _create_dctx != NULL else NULL


cdef void dctx_free(void* dctx) noexcept nogil:
    if dctx != NULL and _free_dctx != NULL:
        _free_dctx(dctx)


cdef Py_ssize_t dctx_decompress(void* dctx, uint8_t* dst, size_t cap, const uint8_t* src,
                                size_t n) noexcept nogil:
    cdef size_t result
    if dctx == NULL or n == 0 or cap == 0:
        return -1
    result = _decompress_dctx(dctx, dst, cap, src, n)
    if _is_error(result):
        return -1
    return <Py_ssize_t>result


cdef Py_ssize_t dctx_decompress_prefix(void* dctx, uint8_t* dst, size_t cap,
                                       const uint8_t* src, size_t n,
                                       size_t need) noexcept nogil:
    cdef size_t result, step, at = 0, done = 0
    if (dctx == NULL or _decompress_continue == NULL or n < 5 or need < 1 or need > cap):
        return -1
    # Frame header descriptor: bit 2 is the content checksum flag.
    if src[4] & 4:
        return -1
    result = _find_frame_compressed_size(src, n)
    if (_is_error(result) or result != n
            or _get_frame_content_size(src, n) != <unsigned long long>cap
            or _is_error(_decompress_begin(dctx))):
        return -1
    # Each step is what zstd asks for next (the frame header, then per block its header
    # and its body); it writes each block after the ones before, in dst.
    while done < need:
        step = _next_src_size(dctx)
        if step == 0 or step > n - at:  # the frame ended short of its declared size
            return -1
        result = _decompress_continue(dctx, dst + done, cap - done, src + at, step)
        if _is_error(result):
            return -1
        at += step
        done += result
    return <Py_ssize_t>done


cdef void* cctx_new() noexcept nogil:
    return _create_cctx() if _create_cctx != NULL else NULL


cdef void cctx_free(void* cctx) noexcept nogil:
    if cctx != NULL and _free_cctx != NULL:
        _free_cctx(cctx)


cdef Py_ssize_t cctx_compress(void* cctx, uint8_t* dst, size_t cap, const uint8_t* src,
                              size_t n, int level, bint checksum) noexcept nogil:
    cdef size_t result
    cdef uint8_t empty = 0
    if cctx == NULL or cap == 0:
        return -1
    # (as compress_into: both parameters set every time, they are sticky)
    result = _cctx_set_parameter(cctx, _C_COMPRESSION_LEVEL, level)
    if not _is_error(result):
        result = _cctx_set_parameter(cctx, _C_CHECKSUM_FLAG, 1 if checksum else 0)
    if not _is_error(result):
        result = _compress2(cctx, dst, cap, src if n else &empty, n)
    if _is_error(result):
        return -1
    return <Py_ssize_t>result


cdef size_t bound_of(size_t n) noexcept nogil:
    cdef size_t bound
    if _compress_bound == NULL:
        return 0
    bound = _compress_bound(n)
    return 0 if _is_error(bound) else bound
