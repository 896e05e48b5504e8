# CRC-32C for other kernels (the native chunk pipeline checks and appends the crc32c codec's
# checksum without the GIL).  Standard CRC-32C: crc32c_update(0, data, n) is the CRC of the n
# bytes at data, and crc32c_update(crc32c_update(0, a, na), b, nb) that of a followed by b.
# Reads exactly the n bytes at data; the caller guarantees they are there.

from libc.stdint cimport uint8_t, uint32_t

cdef uint32_t crc32c_update(uint32_t crc, const uint8_t* data, size_t n) noexcept nogil
