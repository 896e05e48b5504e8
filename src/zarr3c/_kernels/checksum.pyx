"""CRC-32C (Castagnoli), the checksum of the Zarr v3 ``crc32c`` codec, without the GIL.

The ``crc32c`` codec appends the CRC-32C of a chunk's bytes ("crc32c" in the v3 codec
specifications, https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html), and
sharding protects every shard index with it.  numcodecs computes it through a Python-level
package call; a native chunk pipeline needs it as a C function it can call with the GIL
released, between decoding and copying, so :func:`crc32c_update` is declared in
``checksum.pxd`` for other kernels to ``cimport``.

Three implementations, chosen once at import:

- x86-64 built by GCC or Clang, on a CPU with SSE4.2 (checked at run time): the ``crc32``
  instruction, eight bytes at a time.  One instruction depends on the previous one's result,
  so a long input is cut into three runs computed side by side, their CRCs joined with
  precomputed tables that append a run's worth of zero bytes to a CRC;
- aarch64 built with the ARMv8 CRC extension enabled (``__ARM_FEATURE_CRC32``, e.g. every
  Apple silicon build): the ``crc32cx`` instruction, eight bytes at a time;
- everywhere else (MSVC included): slicing-by-8, eight table look-ups per eight bytes, with
  tables built at import.

:func:`hardware` says whether an instruction path is in use; :func:`_portable_crc32c` always
takes the table path, so that tests can compare the two.  The bitwise reference is
:func:`zarr3c._kernels._reference.crc32c`.  A kernel here only reads its one buffer, from its
start to its length, and writes nothing.
"""

from libc.stdint cimport uint8_t, uint32_t

__all__ = ["crc32c", "hardware"]

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include <string.h>

    /* The reflected Castagnoli polynomial. */
    #define ZARR3C_CRC32C_POLY 0x82F63B78u

    /* Slicing-by-8 tables: table[0][b] is the CRC register after the byte b (from 0);
       table[k][b] is that register after k more zero bytes. */
    static uint32_t zarr3c_crc32c_table[8][256];

    static int zarr3c_crc32c_use_hw = 0;

    /* Little-endian loads byte by byte, so that the table path is right on any byte order
       and alignment (compilers turn them into one load where that is the same thing). */
    static CYTHON_INLINE uint32_t zarr3c_crc32c_le32(const uint8_t* p) {
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
            | ((uint32_t)p[3] << 24);
    }

    static uint32_t zarr3c_crc32c_portable(uint32_t crc, const uint8_t* p, size_t n) {
        const uint32_t (*t)[256] = (const uint32_t (*)[256])zarr3c_crc32c_table;
        crc = ~crc;
        while (n >= 8) {
            uint32_t lo = crc ^ zarr3c_crc32c_le32(p);
            uint32_t hi = zarr3c_crc32c_le32(p + 4);
            crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF]
                ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF]
                ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
            p += 8;
            n -= 8;
        }
        while (n > 0) {
            crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
            p++;
            n--;
        }
        return ~crc;
    }

    static void zarr3c_crc32c_build_tables(void) {
        uint32_t b, k, crc;
        int bit;
        for (b = 0; b < 256; b++) {
            crc = b;
            for (bit = 0; bit < 8; bit++) {
                crc = (crc & 1u) ? (crc >> 1) ^ ZARR3C_CRC32C_POLY : crc >> 1;
            }
            zarr3c_crc32c_table[0][b] = crc;
        }
        for (k = 1; k < 8; k++) {
            for (b = 0; b < 256; b++) {
                crc = zarr3c_crc32c_table[k - 1][b];
                zarr3c_crc32c_table[k][b] = (crc >> 8) ^ zarr3c_crc32c_table[0][crc & 0xFF];
            }
        }
    }

    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #define ZARR3C_CRC32C_X86 1
    #include <nmmintrin.h>

    /* Run lengths for the three-way split (multiples of 8).  Each crc32 instruction waits for
       the previous one's result (3 cycles) but one can start every cycle, so three
       independent runs keep the unit busy; the long runs make the cost of joining them
       negligible, the short ones take the rest of a large input. */
    #define ZARR3C_CRC32C_LONG 8192
    #define ZARR3C_CRC32C_SHORT 256

    /* shift[k][b]: the CRC register b << 8k followed by LONG (or SHORT) zero bytes.  The
       register update is linear over GF(2), so this is a CRC "moved forward" by a run. */
    static uint32_t zarr3c_crc32c_shift_long[4][256];
    static uint32_t zarr3c_crc32c_shift_short[4][256];

    static void zarr3c_crc32c_build_shift(uint32_t shift[4][256], size_t len) {
        /* The operator on each of the 32 basis registers, then on every byte value by
           linearity. */
        uint32_t basis[32];
        uint32_t crc, v;
        size_t i;
        int bit, k, b;
        for (bit = 0; bit < 32; bit++) {
            crc = (uint32_t)1 << bit;
            for (i = 0; i < len; i++) {
                crc = zarr3c_crc32c_table[0][crc & 0xFF] ^ (crc >> 8);
            }
            basis[bit] = crc;
        }
        for (k = 0; k < 4; k++) {
            for (b = 0; b < 256; b++) {
                v = 0;
                for (bit = 0; bit < 8; bit++) {
                    if (b & (1 << bit)) {
                        v ^= basis[8 * k + bit];
                    }
                }
                shift[k][b] = v;
            }
        }
    }

    static CYTHON_INLINE uint32_t zarr3c_crc32c_shift(uint32_t shift[4][256], uint32_t crc) {
        return shift[0][crc & 0xFF] ^ shift[1][(crc >> 8) & 0xFF]
            ^ shift[2][(crc >> 16) & 0xFF] ^ shift[3][crc >> 24];
    }

    static CYTHON_INLINE uint64_t zarr3c_crc32c_load64(const uint8_t* p) {
        uint64_t w;
        memcpy(&w, p, 8);  /* x86 is little-endian and loads unaligned words */
        return w;
    }

    __attribute__((target("sse4.2")))
    static uint32_t zarr3c_crc32c_hw(uint32_t crc, const uint8_t* p, size_t n) {
        uint64_t c0 = (uint32_t)~crc, c1, c2;
        size_t i;
        while (n >= 3 * ZARR3C_CRC32C_LONG) {
            c1 = 0;
            c2 = 0;
            for (i = 0; i < ZARR3C_CRC32C_LONG; i += 8) {
                c0 = _mm_crc32_u64(c0, zarr3c_crc32c_load64(p + i));
                c1 = _mm_crc32_u64(c1, zarr3c_crc32c_load64(p + ZARR3C_CRC32C_LONG + i));
                c2 = _mm_crc32_u64(c2, zarr3c_crc32c_load64(p + 2 * ZARR3C_CRC32C_LONG + i));
            }
            c0 = zarr3c_crc32c_shift(zarr3c_crc32c_shift_long, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = zarr3c_crc32c_shift(zarr3c_crc32c_shift_long, (uint32_t)c0) ^ (uint32_t)c2;
            p += 3 * ZARR3C_CRC32C_LONG;
            n -= 3 * ZARR3C_CRC32C_LONG;
        }
        while (n >= 3 * ZARR3C_CRC32C_SHORT) {
            c1 = 0;
            c2 = 0;
            for (i = 0; i < ZARR3C_CRC32C_SHORT; i += 8) {
                c0 = _mm_crc32_u64(c0, zarr3c_crc32c_load64(p + i));
                c1 = _mm_crc32_u64(c1, zarr3c_crc32c_load64(p + ZARR3C_CRC32C_SHORT + i));
                c2 = _mm_crc32_u64(c2, zarr3c_crc32c_load64(p + 2 * ZARR3C_CRC32C_SHORT + i));
            }
            c0 = zarr3c_crc32c_shift(zarr3c_crc32c_shift_short, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = zarr3c_crc32c_shift(zarr3c_crc32c_shift_short, (uint32_t)c0) ^ (uint32_t)c2;
            p += 3 * ZARR3C_CRC32C_SHORT;
            n -= 3 * ZARR3C_CRC32C_SHORT;
        }
        while (n >= 8) {
            c0 = _mm_crc32_u64(c0, zarr3c_crc32c_load64(p));
            p += 8;
            n -= 8;
        }
        while (n > 0) {
            c0 = _mm_crc32_u8((uint32_t)c0, *p);
            p++;
            n--;
        }
        return ~(uint32_t)c0;
    }

    static int zarr3c_crc32c_hw_present(void) {
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("sse4.2")) {
            return 0;
        }
        zarr3c_crc32c_build_shift(zarr3c_crc32c_shift_long, ZARR3C_CRC32C_LONG);
        zarr3c_crc32c_build_shift(zarr3c_crc32c_shift_short, ZARR3C_CRC32C_SHORT);
        return 1;
    }

    #elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32) && !defined(__AARCH64EB__)
    #define ZARR3C_CRC32C_ARM 1
    #include <arm_acle.h>

    static uint32_t zarr3c_crc32c_hw(uint32_t crc, const uint8_t* p, size_t n) {
        uint64_t w;
        crc = ~crc;
        while (n >= 8) {
            memcpy(&w, p, 8);  /* little-endian (guarded above); unaligned loads are fine */
            crc = __crc32cd(crc, w);
            p += 8;
            n -= 8;
        }
        while (n > 0) {
            crc = __crc32cb(crc, *p);
            p++;
            n--;
        }
        return ~crc;
    }

    /* The compiler was told the extension is there, so every CPU this build runs on has it. */
    static int zarr3c_crc32c_hw_present(void) {
        return 1;
    }

    #else
    static uint32_t zarr3c_crc32c_hw(uint32_t crc, const uint8_t* p, size_t n) {
        return zarr3c_crc32c_portable(crc, p, n);
    }

    static int zarr3c_crc32c_hw_present(void) {
        return 0;
    }
    #endif

    /* Builds the tables and picks the path; returns whether it is an instruction path. */
    static int zarr3c_crc32c_setup(void) {
        zarr3c_crc32c_build_tables();
        zarr3c_crc32c_use_hw = zarr3c_crc32c_hw_present();
        return zarr3c_crc32c_use_hw;
    }

    static uint32_t zarr3c_crc32c(uint32_t crc, const uint8_t* p, size_t n) {
        return zarr3c_crc32c_use_hw ? zarr3c_crc32c_hw(crc, p, n)
                                    : zarr3c_crc32c_portable(crc, p, n);
    }
    """
    int zarr3c_crc32c_setup() noexcept nogil
    uint32_t zarr3c_crc32c(uint32_t crc, const uint8_t* p, size_t n) noexcept nogil
    uint32_t zarr3c_crc32c_portable(uint32_t crc, const uint8_t* p, size_t n) noexcept nogil


# Runs once, at import, before anything can call a kernel: every module that cimports
# crc32c_update imports this one first.
cdef bint _HARDWARE = zarr3c_crc32c_setup()

# Below this many bytes the GIL is kept: releasing and taking it back costs about as much as
# the checksum of a few kilobytes.
cdef size_t _NOGIL_MIN = 1 << 15


cdef uint32_t crc32c_update(uint32_t crc, const uint8_t* data, size_t n) noexcept nogil:
    return zarr3c_crc32c(crc, data, n)


def crc32c(const uint8_t[::1] data, uint32_t value=0):
    """The CRC-32C of ``data``, continued from ``value`` (the CRC of the bytes before it)."""
    cdef size_t n = data.shape[0]
    cdef uint32_t crc
    if n == 0:
        return value
    if n < _NOGIL_MIN:
        return zarr3c_crc32c(value, &data[0], n)
    with nogil:
        crc = zarr3c_crc32c(value, &data[0], n)
    return crc


def _portable_crc32c(const uint8_t[::1] data, uint32_t value=0):
    """:func:`crc32c` through the slicing-by-8 tables, whatever the CPU (for tests)."""
    cdef size_t n = data.shape[0]
    if n == 0:
        return value
    return zarr3c_crc32c_portable(value, &data[0], n)


def hardware():
    """Whether :func:`crc32c` (and ``crc32c_update``) use a CRC instruction of the CPU."""
    return bool(_HARDWARE)
