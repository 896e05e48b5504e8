"""The vlen-utf8 and vlen-bytes encodings of variable-length strings and bytes (contract;
implemented in vlen.pyx).

Format: a little-endian uint32 item count N, then per item a little-endian uint32 byte length
and that many bytes (UTF-8 for vlen-utf8), nothing after the last item.  Decoding checks the
count against the caller's and against the bytes present (4 * N <= len(data) - 4) before
allocating anything, then every length prefix as it reads the items.  A malformed buffer
raises ValueError (the message names the item), never reads outside the buffer, and drops
whatever it had made.
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

def decode_utf8(
    data: ReadBuffer, count: int, dtype: np.dtype[Any] | None = None
) -> NDArray[Any]:
    """The ``count`` strings encoded in data, as a 1-d array of length count.

    dtype None or object: an object array of ``str``.  dtype a numpy StringDType instance
    (numpy 2; see string_dtype_supported): an array of that dtype, the items packed by
    numpy's string allocator straight from the buffer (no Python objects), the UTF-8 checked
    by this module; the GIL is released meanwhile.

    ValueError (the message names the item and where) if: count < 0; data is under 4 bytes;
    the stored count differs from count; 4 * count > len(data) - 4; a length prefix or an
    item runs past the end; an item is not UTF-8 as Python's strict decoder defines it
    (overlong forms, surrogates, truncated sequences, > U+10FFFF); bytes follow the last item.
    TypeError for another dtype, or a StringDType where numpy has none.  MemoryError if numpy's
    string allocator fails.
    """

def decode_utf8_into(data: ReadBuffer, out: NDArray[Any]) -> None:
    """The len(out) strings encoded in data, packed into out: a 1-d, C-contiguous, writable
    StringDType array (a view of a larger array too: each string comes from the allocator
    of out's descriptor, which a view shares with its base).  Items already in out are
    replaced.  The items are checked (framing, UTF-8) a run at a time without the GIL or
    out's allocator lock, and each run packed under that lock, so threads filling parts of
    one array check side by side.

    ValueError as decode_utf8 (count being len(out)), and if out is not 1-d, C-contiguous and
    writable; out then holds the items before the bad one (or the run that holds it) and
    its other items unchanged.  TypeError if out is not a StringDType array or numpy has
    none.  MemoryError if numpy's string allocator fails.
    """

def decode_bytes(data: ReadBuffer, count: int) -> NDArray[np.object_]:
    """The ``count`` byte strings encoded in data, as a 1-d object array of ``bytes``.

    ValueError as decode_utf8 (without the UTF-8 check).
    """

def encode_utf8(items: NDArray[Any], *, array_from: int = -1) -> bytes | NDArray[np.uint8]:
    """The vlen-utf8 encoding of a 1-d array of strings: ``bytes``, or where array_from >= 0
    and the encoding is at least array_from bytes, the same bytes as a 1-d uint8 numpy array
    (numpy's allocator backs large ones with huge pages: new memory costs few page faults).

    items: an object array (any strides) whose items are ``str`` (subclasses such as
    numpy.str_ included) or None, which is written as an empty string, as numcodecs (and so
    zarr-python) writes it; or a StringDType array, whose missing values (a StringDType with
    na_object) are likewise written as empty strings.  Byte for byte what numcodecs'
    VLenUTF8 writes for the same items.

    TypeError if items is not a numpy array, has another dtype, or an item is neither str nor
    None (the message names the item's index and type).  ValueError if items is not 1-d, an
    item cannot be encoded as UTF-8 (a lone surrogate), or an item or the count exceeds
    2**32 - 1.  Copying releases the GIL for large outputs.
    """

def encode_bytes(items: NDArray[np.object_], *,
                 array_from: int = -1) -> bytes | NDArray[np.uint8]:
    """The vlen-bytes encoding of a 1-d object array of ``bytes`` (subclasses such as
    numpy.bytes_ included) or None (written as an empty item, as numcodecs writes it);
    array_from as for encode_utf8.

    TypeError for an item of another type (bytearray and memoryview included) and for a
    non-object array; ValueError as encode_utf8.
    """

def string_dtype_supported() -> bool:
    """Whether numpy has StringDType and its C functions were bound (numpy >= 2)."""
