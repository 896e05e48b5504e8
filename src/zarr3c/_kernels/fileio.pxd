# The file primitives of fileio.pyx, shared with chunks.pyx (a read plan's chunk files).

from libc.stdint cimport int64_t, uint8_t

# open (without blocking) and fstat: errno, or 0 with fd open for the caller to close and
# size the file's size (-1 if not a regular file).
cdef int _open_file(const char* c_path, int* fd, int64_t* size) noexcept nogil

# pread n bytes from pos into dst, fewer where the file ends first: errno or 0, got the
# bytes read.
cdef int _pread_upto(int fd, uint8_t* dst, int64_t n, int64_t pos, int64_t* got) noexcept nogil

# bufs[i][:lens[i]] one after another as the file path, atomically as LocalStore.set_parts
# writes (a temporary file beside it in the first of the key's slots free or left by a
# killed writer, named into tmp, which has tmp_cap bytes of room, renamed over it; missing
# directories made): errno or 0.
cdef int _write_atomic(const char* path, char* tmp, size_t tmp_cap, const uint8_t** bufs,
                       const int64_t* lens, Py_ssize_t nbufs) noexcept nogil
