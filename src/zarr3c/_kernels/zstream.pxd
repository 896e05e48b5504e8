# zlib for the gzip codec (chunks.pyx inflates, writes.pyx deflates): the z_stream layout from
# zlib.h where the build has it (else gzip chains take the Python path), the functions called
# through the addresses of the libz Python's own zlib module uses (each kernel module's
# bind_zlib).  inflateInit2_/deflateInit2_ refuse a library whose z_stream differs from the
# header's.

from libc.stdint cimport uint8_t

cdef extern from *:
    """
    #if defined(__has_include)
    #  if __has_include(<zlib.h>)
    #    include <zlib.h>
    #    define ZARR3C_HAVE_ZLIB 1
    #  endif
    #endif
    #ifndef ZARR3C_HAVE_ZLIB
    #  define ZARR3C_HAVE_ZLIB 0
    typedef struct { unsigned char* next_in; unsigned int avail_in; unsigned char* next_out;
                     unsigned int avail_out; } z_stream;
    #  define ZLIB_VERSION ""
    #  define Z_OK 0
    #  define Z_STREAM_END 1
    #  define Z_FINISH 4
    #  define Z_DEFLATED 8
    #  define Z_DEFAULT_STRATEGY 0
    #endif
    """
    ctypedef struct z_stream:
        uint8_t* next_in
        unsigned int avail_in
        uint8_t* next_out
        unsigned int avail_out
    const int ZARR3C_HAVE_ZLIB
    const char* ZLIB_VERSION
    const int Z_OK
    const int Z_STREAM_END
    const int Z_FINISH
    const int Z_DEFLATED
    const int Z_DEFAULT_STRATEGY

cdef enum:
    # windowBits for a gzip wrapper: 15 (the largest window) + 16
    GZIP_WINDOW = 16 + 15
