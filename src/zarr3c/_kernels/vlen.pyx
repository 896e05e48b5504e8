"""Variable-length strings and bytes: the ``vlen-utf8`` and ``vlen-bytes`` encodings.

Both codecs (numcodecs' ``VLenUTF8`` / ``VLenBytes``, named in the Zarr extensions registry,
https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8 and
.../vlen-bytes) store N items as a little-endian ``uint32`` item count N, then for each item a
little-endian ``uint32`` byte length and that many bytes (UTF-8 for ``vlen-utf8``).

Decoding checks the header first, in O(1) and before anything is allocated: the count must be
the one the caller expects (the chunk's size) and its length prefixes must fit in the bytes
that follow (``4 * count <= len(data) - 4``), which bounds the output by the input's size.
One pass then reads the items, checking each length prefix and item against the end of the
buffer just before using it, and that nothing follows the last item.  It builds ``str``
objects (short ASCII items copied straight into a new string, the others through CPython's
UTF-8 decoder, which checks them), ``bytes`` objects, or, for numpy's ``StringDType``, items
checked as UTF-8 here and packed by numpy's string allocator with the GIL released and no
Python object in between.  On an error the partial output is dropped.  (A separate validating
pass before building would read the buffer twice; for long items, where each length prefix is
a cache miss, that costs more than making the output.)

Encoding makes two passes: one checks each item's type and measures its UTF-8 size, one
writes each length and item into a ``bytes`` object allocated once.  Non-ASCII strings are
converted from CPython's internal 1-, 2- or 4-byte form straight into the output, with no
temporary UTF-8 copy.  Between the two passes no Python code runs, so the items measured are
still alive when the second pass holds the GIL; where it releases it (large outputs of long
items), a private copy of the array's references keeps them alive.

numpy's ``StringDType`` C functions (``NpyString_pack``, ``NpyString_load`` and the allocator
lock) are taken from numpy's C-API table at import when numpy has them (numpy 2), rather than
through numpy's headers: the headers would make this module require numpy 2 at build and run
time, while zarr3c also runs on numpy 1.26 (which has no ``StringDType``).  The table's slots
are numpy's stable ABI for the 2.x series.

Errors are builtin exceptions (this package imports nothing from zarr3c): ``ValueError`` for a
malformed buffer or an item or count over the format's 32-bit limits, ``TypeError`` for an
item of the wrong type.  The pure-Python twins are in :mod:`zarr3c._kernels._reference`.
"""

from cpython.bytes cimport (
    PyBytes_AS_STRING,
    PyBytes_Check,
    PyBytes_FromStringAndSize,
    PyBytes_GET_SIZE,
)
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cpython.unicode cimport (
    PyUnicode_Check,
    PyUnicode_DATA,
    PyUnicode_DecodeUTF8,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_New,
)
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np

__all__ = ["decode_bytes", "decode_utf8", "decode_utf8_into", "encode_bytes", "encode_utf8",
           "string_dtype_supported"]

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)

# The characters of a compact ASCII string follow its header: what PyUnicode_DATA finds after
# checking the string's kind, which for a string just made by PyUnicode_New(n, 127) is known.
cdef extern from *:
    """
    #define zarr3c_ascii_data(op) ((void *)(((PyASCIIObject *)(op)) + 1))
    /* Strings made through the legacy wchar_t API must be made "ready" (given their compact
       form) before their kind and data are read; from Python 3.12 every string is. */
    #if PY_VERSION_HEX < 0x030C0000
    #define zarr3c_unicode_ready(op) PyUnicode_READY(op)
    #else
    #define zarr3c_unicode_ready(op) 0
    #endif
    """
    void* zarr3c_ascii_data(object o)
    int zarr3c_unicode_ready(object o) except -1

# A non-ASCII string keeps the UTF-8 form CPython made for it, if any (after
# PyUnicode_AsUTF8, e.g. when numpy converted it to StringDType): copying that is cheaper than
# converting again.
cdef extern from "Python.h":
    ctypedef struct PyCompactUnicodeObject:
        Py_ssize_t utf8_length
        char* utf8


# -- numpy's StringDType C functions, bound at import ------------------------------------------

ctypedef struct npy_static_string:
    size_t size
    const char* buf

ctypedef int (*npy_load_t)(void*, const void*, npy_static_string*) noexcept nogil
ctypedef int (*npy_pack_t)(void*, void*, const char*, size_t) noexcept nogil
ctypedef void* (*npy_acquire_t)(const void*) noexcept nogil
ctypedef void (*npy_release_t)(void*) noexcept nogil

# Slots of numpy 2's C-API table (numpy/__multiarray_api.h).
cdef enum:
    _SLOT_LOAD = 313
    _SLOT_PACK = 314
    _SLOT_ACQUIRE = 316
    _SLOT_RELEASE = 318

cdef npy_load_t _npy_load = NULL
cdef npy_pack_t _npy_pack = NULL
cdef npy_acquire_t _npy_acquire = NULL
cdef npy_release_t _npy_release = NULL


cdef _bind_string_dtype():
    """Take the functions from numpy's C-API table; leave them NULL (string_dtype_supported()
    is then False and callers convert through object arrays) if numpy does not offer them."""
    global _npy_load, _npy_pack, _npy_acquire, _npy_release
    cdef void** api
    if getattr(getattr(np, "dtypes", None), "StringDType", None) is None:
        return
    try:
        from numpy._core import _multiarray_umath
        capsule = _multiarray_umath._ARRAY_API
        api = <void**>PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))
    except Exception:
        return
    _npy_load = <npy_load_t>api[_SLOT_LOAD]
    _npy_pack = <npy_pack_t>api[_SLOT_PACK]
    _npy_acquire = <npy_acquire_t>api[_SLOT_ACQUIRE]
    _npy_release = <npy_release_t>api[_SLOT_RELEASE]


_bind_string_dtype()

cdef uint64_t _U32_MAX = 0xFFFFFFFF

# ASCII items up to this long are copied into a new string directly, which costs less than a
# call of CPython's UTF-8 decoder; longer ones go through the decoder, which checks and copies
# in one pass.
cdef Py_ssize_t _SHORT = 64

# Encoding copies object arrays' items without the GIL only past this many bytes, and only for
# items of this many bytes on average: the references must first be copied (so that no other
# thread can free an item meanwhile), which costs more than it saves for short items.
cdef Py_ssize_t _NOGIL_MIN = 1 << 20
cdef Py_ssize_t _NOGIL_AVERAGE = 64

# Why the nogil decoding loop stopped.
cdef enum:
    _OK = 0
    _PREFIX_PAST_END = 1
    _ITEM_PAST_END = 2
    _BAD_UTF8 = 3
    _NO_MEMORY = 4


# -- byte-level helpers (nogil) ----------------------------------------------------------------

cdef inline uint32_t _le32(const uint8_t* p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline void _put_le32(uint8_t* p, uint32_t v) noexcept nogil:
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = v >> 24


cdef inline uint64_t _load64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)
    return v


cdef inline uint32_t _load32(const uint8_t* p) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return v


cdef inline bint _ascii(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Whether the n bytes at p are all below 0x80.

    Whole words, the last one overlapping the one before where n is not a multiple of its
    size, so that a short item costs two loads rather than a loop over its bytes.
    """
    cdef uint64_t acc = 0
    cdef Py_ssize_t i = 0
    if n >= 8:
        while i + 8 < n:
            acc |= _load64(p + i)
            i += 8
        acc |= _load64(p + n - 8)
        return (acc & 0x8080808080808080ULL) == 0
    if n >= 4:
        return ((_load32(p) | _load32(p + n - 4)) & 0x80808080U) == 0
    if n >= 2:
        return ((p[0] | p[1] | p[n - 1]) & 0x80) == 0
    return n == 0 or p[0] < 0x80


# UTF-8 validation as a shift-based DFA: the row of a byte packs, for each state, the state
# that byte leads to, so a step is one table load (independent of the state) and one shift,
# with no branch to mispredict on mixed text.  States are multiples of 6, the bit offset of
# their 6-bit field in a row.  The grammar is RFC 3629's (table 3-7 of the Unicode standard):
# no overlong forms, no surrogates, nothing above U+10FFFF.
cdef enum:
    _ACCEPT = 0       # between characters
    _REJECT = 6       # invalid; stays so
    _NEED1 = 12       # one continuation byte (80..BF) to go
    _NEED2 = 18       # two
    _NEED3 = 24       # three
    _AFTER_E0 = 30    # 3-byte lead E0: next A0..BF (no overlong forms)
    _AFTER_ED = 36    # ED: next 80..9F (no surrogates)
    _AFTER_F0 = 42    # F0: next 90..BF (no overlong forms)
    _AFTER_F4 = 48    # F4: next 80..8F (nothing above U+10FFFF)

cdef uint64_t _UTF8_ROWS[256]


cdef int _utf8_next(int state, int c) noexcept:
    """The DFA's transition, written out (used once, to build the rows)."""
    if state == _ACCEPT:
        if c < 0x80:
            return _ACCEPT
        if 0xC2 <= c <= 0xDF:
            return _NEED1
        if c == 0xE0:
            return _AFTER_E0
        if c == 0xED:
            return _AFTER_ED
        if 0xE1 <= c <= 0xEF:
            return _NEED2
        if c == 0xF0:
            return _AFTER_F0
        if 0xF1 <= c <= 0xF3:
            return _NEED3
        if c == 0xF4:
            return _AFTER_F4
        return _REJECT
    if state == _NEED1 and 0x80 <= c <= 0xBF:
        return _ACCEPT
    if state == _NEED2 and 0x80 <= c <= 0xBF:
        return _NEED1
    if state == _NEED3 and 0x80 <= c <= 0xBF:
        return _NEED2
    if state == _AFTER_E0 and 0xA0 <= c <= 0xBF:
        return _NEED1
    if state == _AFTER_ED and 0x80 <= c <= 0x9F:
        return _NEED1
    if state == _AFTER_F0 and 0x90 <= c <= 0xBF:
        return _NEED2
    if state == _AFTER_F4 and 0x80 <= c <= 0x8F:
        return _NEED2
    return _REJECT


cdef void _build_utf8_rows() noexcept:
    cdef int c, state
    cdef uint64_t row
    for c in range(256):
        row = 0
        for state in range(0, _AFTER_F4 + 6, 6):
            row |= (<uint64_t>_utf8_next(state, c)) << state
        _UTF8_ROWS[c] = row


_build_utf8_rows()


cdef Py_ssize_t _utf8_error_at(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Where the DFA rejects p[:n]: the start of the sequence that fails, or n - (bytes of
    the unfinished last sequence)."""
    cdef Py_ssize_t i, start = 0
    cdef uint64_t state = _ACCEPT
    for i in range(n):
        if state == _ACCEPT:
            start = i
        state = (_UTF8_ROWS[p[i]] >> state) & 63
        if state == _REJECT:
            return start
    return start


cdef Py_ssize_t _utf8_error(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The offset of the first byte of p[:n] that is not valid UTF-8 (the start of the bad
    sequence), or -1 if all is, as Python's strict decoder has it."""
    cdef Py_ssize_t i = 0
    cdef uint64_t state = _ACCEPT
    while i < n:
        # ASCII runs, sixteen bytes at a time, between characters
        if state == _ACCEPT:
            while i + 16 <= n and ((_load64(p + i) | _load64(p + i + 8))
                                   & 0x8080808080808080ULL) == 0:
                i += 16
        if i + 16 <= n:
            for _ in range(16):
                state = (_UTF8_ROWS[p[i]] >> state) & 63
                i += 1
        else:
            while i < n:
                state = (_UTF8_ROWS[p[i]] >> state) & 63
                i += 1
        if state == _REJECT:
            break
    if state == _ACCEPT:
        return -1
    return _utf8_error_at(p, n)


# -- decoding ----------------------------------------------------------------------------------
#
# The header is checked first, in O(1) and before anything is allocated: the count must be the
# one expected and its length prefixes must fit in the bytes that follow, which bounds the
# output by the input's size.  One pass then reads each item, checking that its prefix and
# bytes lie inside the buffer (and, for StringDType, that they are UTF-8) just before using
# them, and that nothing follows the last item.  A separate validating pass would read the
# buffer twice; for long items, where each length prefix is a cache miss, that costs more than
# making the whole output.  On an error the partial output is dropped.

cdef Py_ssize_t _header(const uint8_t[::1] data, Py_ssize_t expected) except -1:
    """Check the item count against ``expected`` and the bytes present; return it."""
    cdef Py_ssize_t n = data.shape[0], count
    if expected < 0:
        raise ValueError(f"the expected item count must be >= 0, got {expected}")
    if n < 4:
        raise ValueError(f"{n} bytes is too short for the 4-byte item count")
    count = <Py_ssize_t>_le32(&data[0])
    if count != expected:
        raise ValueError(f"the stored item count is {count}, expected {expected}")
    if count > (n - 4) // 4:
        raise ValueError(
            f"the item count {count} needs at least {4 * count} bytes of length prefixes, "
            f"but only {n - 4} bytes follow it"
        )
    return count


cdef object _item_error(int status, Py_ssize_t i, Py_ssize_t detail):
    """The ValueError for a decoding loop that stopped at item ``i``."""
    if status == _PREFIX_PAST_END:
        return ValueError(
            f"item {i}'s 4-byte length prefix runs past the end of the buffer "
            f"({detail} bytes left)"
        )
    if status == _ITEM_PAST_END:
        return ValueError(f"item {i}'s length ({detail} bytes) runs past the end of the buffer")
    if status == _BAD_UTF8:
        return ValueError(f"item {i} is not valid UTF-8 (byte {detail} of the item)")
    return MemoryError("numpy's string allocator failed")


cdef object _trailing(Py_ssize_t n, Py_ssize_t pos):
    return ValueError(f"{n - pos} bytes follow the last item")


def decode_utf8(const uint8_t[::1] data, Py_ssize_t count, dtype=None):
    """The ``vlen-utf8`` items of ``data`` (contract: vlen.pyi)."""
    cdef Py_ssize_t n = data.shape[0], pos = 4, i, length
    cdef const uint8_t* p
    cdef object s
    cdef object[::1] view
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind == "T":
            return _decode_string_dtype(data, count, dtype)
        if dtype != np.dtype(object):
            raise TypeError(f"dtype must be object or a StringDType, got {dtype}")
    _header(data, count)
    out = np.empty(count, dtype=object)
    p = &data[0]
    view = out
    for i in range(count):
        if n - pos < 4:
            raise _item_error(_PREFIX_PAST_END, i, n - pos)
        length = <Py_ssize_t>_le32(p + pos)
        pos += 4
        if length > n - pos:
            raise _item_error(_ITEM_PAST_END, i, length)
        # UTF-8 is checked by CPython's decoder (every non-ASCII item goes through it).
        if length <= _SHORT and _ascii(p + pos, length):
            s = PyUnicode_New(length, 127)
            memcpy(zarr3c_ascii_data(s), p + pos, length)
            # Checked again on the copy, which nothing else can change: a buffer changed
            # meanwhile by another thread must not give an ASCII string holding a byte above
            # 0x7F.
            if not _ascii(<const uint8_t*>zarr3c_ascii_data(s), length):
                s = _decode_item(<const char*>zarr3c_ascii_data(s), length, i)
        else:
            s = _decode_item(<const char*>(p + pos), length, i)
        view[i] = s
        pos += length
    if pos != n:
        raise _trailing(n, pos)
    return out


cdef object _decode_item(const char* p, Py_ssize_t length, Py_ssize_t i):
    """One item as a str; ValueError naming the item if it is not UTF-8."""
    try:
        return PyUnicode_DecodeUTF8(<char*>p, length, "strict")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"item {i} is not valid UTF-8 (byte {exc.start} of the item: {exc.reason})"
        ) from None


# The StringDType decoders check a run of items (framing and UTF-8) without the allocator's
# lock, then pack the run under it: threads filling one output (its one allocator) then check
# side by side and queue only for the packing, and the run is still in cache when packed.
cdef Py_ssize_t _RUN_BYTES = 1 << 18


cdef int _check_run(const uint8_t* p, Py_ssize_t n, Py_ssize_t* pos, Py_ssize_t* i,
                    Py_ssize_t count, Py_ssize_t* detail) noexcept nogil:
    """Check items from item ``i[0]`` at ``pos[0]`` until ``_RUN_BYTES`` are passed or the
    items end; advance both past the items found good.  _OK, or why item ``i[0]`` is bad
    (``detail[0]`` as _item_error takes it)."""
    cdef Py_ssize_t at = pos[0], k = i[0], length, bad, stop = pos[0] + _RUN_BYTES
    cdef int status = _OK
    while k < count and at < stop:
        if n - at < 4:
            status = _PREFIX_PAST_END
            detail[0] = n - at
            break
        length = <Py_ssize_t>_le32(p + at)
        if length > n - at - 4:
            status = _ITEM_PAST_END
            detail[0] = length
            break
        bad = _utf8_error(p + at + 4, length)
        if bad >= 0:
            status = _BAD_UTF8
            detail[0] = bad
            break
        at += 4 + length
        k += 1
    pos[0] = at
    i[0] = k
    return status


cdef int _pack_run(void* allocator, char* slots, Py_ssize_t itemsize, const uint8_t* p,
                   Py_ssize_t n, Py_ssize_t pos, Py_ssize_t first,
                   Py_ssize_t stop) noexcept nogil:
    """Pack items ``first`` to ``stop`` (checked by _check_run) from ``pos`` into their slots.
    Each length is checked against the end again: a buffer changed meanwhile by another
    thread must not make this read past it."""
    cdef Py_ssize_t k, length
    for k in range(first, stop):
        if n - pos < 4:
            return _PREFIX_PAST_END
        length = <Py_ssize_t>_le32(p + pos)
        pos += 4
        if length > n - pos:
            return _ITEM_PAST_END
        if _npy_pack(allocator, slots + k * itemsize, <const char*>(p + pos), length) < 0:
            return _NO_MEMORY
        pos += length
    return _OK


cdef _pack_strings(const uint8_t[::1] data, Py_ssize_t count, object out):
    """Fill ``out`` (a C-contiguous 1-d StringDType array of ``count`` items, writable) with
    the items of ``data``, whose header has been checked."""
    cdef Py_ssize_t n = data.shape[0], pos = 4, i = 0, done = 0, start, detail = 0
    cdef Py_ssize_t itemsize = out.dtype.itemsize
    cdef const uint8_t* p = &data[0]
    cdef char* slots = <char*><size_t>out.__array_interface__["data"][0]
    cdef void* allocator
    cdef int status = _OK, packed = _OK
    # The array's own descriptor (a view shares its base's): numpy gives each new array its
    # own allocator, and the strings must come from the one the array frees them with.
    descr = out.dtype
    with nogil:
        while done < count and status == _OK:
            start = pos
            status = _check_run(p, n, &pos, &i, count, &detail)
            if i > done:
                allocator = _npy_acquire(<const void*>descr)
                packed = _pack_run(allocator, slots, itemsize, p, n, start, done, i)
                _npy_release(allocator)
                if packed != _OK:
                    break
                done = i
    if packed == _NO_MEMORY:
        raise MemoryError("numpy's string allocator failed")
    if packed != _OK:
        raise ValueError("the buffer changed while it was being decoded")
    if status != _OK:
        raise _item_error(status, i, detail)
    if pos != n:
        raise _trailing(n, pos)


cdef _decode_string_dtype(const uint8_t[::1] data, Py_ssize_t count, object dtype):
    if _npy_pack == NULL:
        raise TypeError("this numpy has no StringDType")
    _header(data, count)
    out = np.empty(count, dtype=dtype)
    _pack_strings(data, count, out)
    return out


def decode_utf8_into(const uint8_t[::1] data, out):
    """The ``vlen-utf8`` items of ``data`` into ``out`` (contract: vlen.pyi)."""
    if _npy_pack == NULL:
        raise TypeError("this numpy has no StringDType")
    if not isinstance(out, np.ndarray) or out.dtype.kind != "T":
        raise TypeError(f"out must be a StringDType array, got {type(out).__name__}"
                        + (f" of {out.dtype}" if isinstance(out, np.ndarray) else ""))
    if out.ndim != 1 or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be 1-d, C-contiguous and writable")
    _header(data, out.shape[0])
    _pack_strings(data, out.shape[0], out)


def decode_bytes(const uint8_t[::1] data, Py_ssize_t count):
    """The ``vlen-bytes`` items of ``data`` (contract: vlen.pyi)."""
    cdef Py_ssize_t n = data.shape[0], pos = 4, i, length
    cdef const uint8_t* p
    cdef object[::1] view
    _header(data, count)
    out = np.empty(count, dtype=object)
    p = &data[0]
    view = out
    for i in range(count):
        if n - pos < 4:
            raise _item_error(_PREFIX_PAST_END, i, n - pos)
        length = <Py_ssize_t>_le32(p + pos)
        pos += 4
        if length > n - pos:
            raise _item_error(_ITEM_PAST_END, i, length)
        view[i] = PyBytes_FromStringAndSize(<char*>(p + pos), length)
        pos += length
    if pos != n:
        raise _trailing(n, pos)
    return out


# -- encoding ----------------------------------------------------------------------------------
#
# A first pass checks each item's type and measures its UTF-8 size; the output is allocated
# once; a second pass writes each length and item.  Neither pass nor the allocation between
# them runs Python code, so nothing can drop an item meanwhile while the GIL is held; where the
# second pass releases it, a private copy of the references keeps the items alive.

cdef object _items_1d(object items):
    if not isinstance(items, np.ndarray):
        raise TypeError(f"items must be a numpy array, got {type(items).__name__}")
    if items.ndim != 1:
        raise ValueError(f"items must be 1-d, got {items.ndim} dimensions")
    return items


cdef Py_ssize_t _add(Py_ssize_t total, Py_ssize_t i, Py_ssize_t length) except -1:
    if <uint64_t>length > _U32_MAX:
        raise ValueError(f"item {i} is {length} bytes, over the format's limit of 2**32 - 1")
    if total > (<Py_ssize_t>(<size_t>-1 >> 1)) - 4 - length:
        raise ValueError("the encoded items would not fit in memory")
    return total + 4 + length


# What the copying pass writes for one item: ``size`` bytes copied from ``data`` (``kind`` 0),
# or the ``units`` code units of a str's ``kind``-byte representation (1, 2 or 4) converted
# to ``size`` bytes of UTF-8.
ctypedef struct _Piece:
    const void* data
    Py_ssize_t size
    Py_ssize_t units
    int kind


cdef Py_ssize_t _utf8_size(int kind, const void* data, Py_ssize_t units) noexcept nogil:
    """The UTF-8 size of a str's code units, or -1 if one is a surrogate (which UTF-8 cannot
    encode).  Branch-free sums, so that the compiler can vectorize them."""
    cdef Py_ssize_t i, size = units
    cdef const uint8_t* u1
    cdef const uint16_t* u2
    cdef const uint32_t* u4
    cdef uint32_t c, surrogates = 0
    if kind == 1:
        u1 = <const uint8_t*>data
        for i in range(units):
            size += u1[i] >> 7
        return size
    if kind == 2:
        u2 = <const uint16_t*>data
        for i in range(units):
            c = u2[i]
            size += <Py_ssize_t>(c >= 0x80) + <Py_ssize_t>(c >= 0x800)
            surrogates |= <uint32_t>((c >> 11) == 0x1B)  # U+D800..U+DFFF
    else:
        u4 = <const uint32_t*>data
        for i in range(units):
            c = u4[i]
            size += (<Py_ssize_t>(c >= 0x80) + <Py_ssize_t>(c >= 0x800)
                     + <Py_ssize_t>(c >= 0x10000))
            surrogates |= <uint32_t>((c >> 11) == 0x1B)  # U+D800..U+DFFF
    return -1 if surrogates else size


cdef inline Py_ssize_t _put_utf8(uint8_t* dst, uint32_t c) noexcept nogil:
    if c < 0x80:
        dst[0] = <uint8_t>c
        return 1
    if c < 0x800:
        dst[0] = 0xC0 | (c >> 6)
        dst[1] = 0x80 | (c & 0x3F)
        return 2
    if c < 0x10000:
        dst[0] = 0xE0 | (c >> 12)
        dst[1] = 0x80 | ((c >> 6) & 0x3F)
        dst[2] = 0x80 | (c & 0x3F)
        return 3
    dst[0] = 0xF0 | (c >> 18)
    dst[1] = 0x80 | ((c >> 12) & 0x3F)
    dst[2] = 0x80 | ((c >> 6) & 0x3F)
    dst[3] = 0x80 | (c & 0x3F)
    return 4


cdef void _write_piece(uint8_t* dst, const _Piece* piece) noexcept nogil:
    cdef Py_ssize_t i, at = 0
    cdef const uint8_t* u1
    cdef const uint16_t* u2
    cdef const uint32_t* u4
    if piece.kind == 0:
        if piece.size > 0:
            memcpy(dst, piece.data, piece.size)
    elif piece.kind == 1:
        u1 = <const uint8_t*>piece.data
        for i in range(piece.units):
            at += _put_utf8(dst + at, u1[i])
    elif piece.kind == 2:
        u2 = <const uint16_t*>piece.data
        for i in range(piece.units):
            at += _put_utf8(dst + at, u2[i])
    else:
        u4 = <const uint32_t*>piece.data
        for i in range(piece.units):
            at += _put_utf8(dst + at, u4[i])


cdef void _write(uint8_t* dst, Py_ssize_t count, const _Piece* pieces) noexcept nogil:
    cdef Py_ssize_t i, pos = 4
    _put_le32(dst, <uint32_t>count)
    for i in range(count):
        _put_le32(dst + pos, <uint32_t>pieces[i].size)
        pos += 4
        _write_piece(dst + pos, &pieces[i])
        pos += pieces[i].size


cdef object _output(Py_ssize_t total, Py_ssize_t array_from, uint8_t** dst):
    """The encoding's memory: a ``bytes`` object, or from ``array_from`` bytes on (if >= 0) a
    numpy ``uint8`` array, which numpy backs with huge pages when large (few page faults
    where the memory is new)."""
    if 0 <= array_from <= total:
        out = np.empty(total, dtype=np.uint8)
        dst[0] = <uint8_t*><size_t>out.__array_interface__["data"][0]
        return out
    out = PyBytes_FromStringAndSize(NULL, total)
    dst[0] = <uint8_t*>PyBytes_AS_STRING(out)
    return out


cdef object _encode_objects(object items, bint utf8, Py_ssize_t array_from):
    cdef Py_ssize_t count, i, total = 4, units
    cdef object[:] view
    cdef object item
    cdef _Piece* pieces
    cdef _Piece* piece
    cdef object out
    cdef uint8_t* dst
    items = _items_1d(items)
    if items.dtype != np.dtype(object):
        raise TypeError(f"items must have dtype object, got {items.dtype}")
    count = items.shape[0]
    if <uint64_t>count > _U32_MAX:
        raise ValueError(f"{count} items is over the format's limit of 2**32 - 1")
    view = items
    pieces = <_Piece*>malloc(max(count, 1) * sizeof(_Piece))
    if pieces == NULL:
        raise MemoryError()
    try:
        for i in range(count):
            item = view[i]
            piece = &pieces[i]
            piece.kind = 0
            piece.units = 0
            if item is None:
                # as numcodecs (and so zarr-python) writes None: an empty item
                piece.data = NULL
                piece.size = 0
            elif utf8:
                if not PyUnicode_Check(item):
                    raise TypeError(f"item {i} has type {type(item).__name__}, expected str")
                zarr3c_unicode_ready(item)
                piece.data = PyUnicode_DATA(item)
                units = PyUnicode_GET_LENGTH(item)
                if PyUnicode_IS_ASCII(item):
                    piece.size = units
                elif (<PyCompactUnicodeObject*>item).utf8 != NULL:
                    piece.data = (<PyCompactUnicodeObject*>item).utf8
                    piece.size = (<PyCompactUnicodeObject*>item).utf8_length
                else:
                    # converted straight into the output: no temporary UTF-8 copy
                    piece.kind = PyUnicode_KIND(item)
                    piece.units = units
                    piece.size = _utf8_size(piece.kind, piece.data, units)
                    if piece.size < 0:
                        raise ValueError(
                            f"item {i} cannot be encoded as UTF-8: it holds a surrogate "
                            f"code point (U+D800..U+DFFF)"
                        )
            else:
                if not PyBytes_Check(item):
                    raise TypeError(f"item {i} has type {type(item).__name__}, expected bytes")
                piece.data = PyBytes_AS_STRING(item)
                piece.size = PyBytes_GET_SIZE(item)
            total = _add(total, i, piece.size)
        # Allocating a numpy array can run Python code (a garbage collection), which could
        # drop an item: a private copy of the references keeps them alive, as without the GIL.
        nogil = total >= _NOGIL_MIN and total >= _NOGIL_AVERAGE * count
        held = items.copy() if nogil or 0 <= array_from <= total else None
        out = _output(total, array_from, &dst)
        if nogil:
            with nogil:
                _write(dst, count, pieces)
        else:
            _write(dst, count, pieces)
        del held
        return out
    finally:
        free(pieces)


def encode_utf8(items, *, Py_ssize_t array_from=-1):
    """The ``vlen-utf8`` encoding of ``items`` (contract: vlen.pyi)."""
    if isinstance(items, np.ndarray) and items.dtype.kind == "T":
        return _encode_string_dtype(items, array_from)
    return _encode_objects(items, True, array_from)


def encode_bytes(items, *, Py_ssize_t array_from=-1):
    """The ``vlen-bytes`` encoding of ``items`` (contract: vlen.pyi)."""
    return _encode_objects(items, False, array_from)


cdef object _encode_string_dtype(object items, Py_ssize_t array_from):
    cdef Py_ssize_t count, i = 0, total = 4, itemsize, pos = 4
    cdef char* slots
    cdef void* allocator
    cdef npy_static_string s
    cdef int status, failed = 0
    cdef uint8_t* dst
    cdef object out
    if _npy_load == NULL:
        raise TypeError("this numpy has no StringDType")
    items = np.ascontiguousarray(_items_1d(items))
    count = items.shape[0]
    if <uint64_t>count > _U32_MAX:
        raise ValueError(f"{count} items is over the format's limit of 2**32 - 1")
    itemsize = items.dtype.itemsize
    slots = <char*><size_t>items.__array_interface__["data"][0]
    descr = items.dtype
    # Measure, then copy, each under the allocator's lock; the output is allocated between
    # the two with the lock released (allocating can run Python code that takes it).
    with nogil:
        allocator = _npy_acquire(<const void*>descr)
        while i < count:
            status = _npy_load(allocator, slots + i * itemsize, &s)
            if status < 0:
                failed = 1
                break
            if status == 0:
                if s.size > _U32_MAX:
                    failed = 2
                    break
                total += 4 + <Py_ssize_t>s.size
            else:
                total += 4  # a missing value (StringDType with na_object): an empty item
            i += 1
        _npy_release(allocator)
    if failed == 1:
        raise MemoryError("numpy's string allocator failed to load an item")
    if failed == 2:
        raise ValueError(f"item {i} is {s.size} bytes, over the format's limit of 2**32 - 1")
    out = _output(total, array_from, &dst)
    with nogil:
        _put_le32(dst, <uint32_t>count)
        allocator = _npy_acquire(<const void*>descr)
        for i in range(count):
            status = _npy_load(allocator, slots + i * itemsize, &s)
            if status < 0:
                failed = 1
                break
            if status != 0:
                s.size = 0
            # the items may have changed since they were measured (another thread)
            if <Py_ssize_t>s.size > total - pos - 4:
                failed = 3
                break
            _put_le32(dst + pos, <uint32_t>s.size)
            pos += 4
            if s.size > 0:
                memcpy(dst + pos, s.buf, s.size)
            pos += s.size
        _npy_release(allocator)
    if failed == 1:
        raise MemoryError("numpy's string allocator failed to load an item")
    if failed == 3 or pos != total:
        raise ValueError("the items changed while they were being encoded")
    return out


def string_dtype_supported():
    """Whether numpy has ``StringDType`` and its C functions were found (numpy 2)."""
    return _npy_pack != NULL
