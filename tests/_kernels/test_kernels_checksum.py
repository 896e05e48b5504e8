"""``zarr3c._kernels.checksum``: CRC-32C on the CPU's CRC instruction or slicing-by-8 tables.

Three independent oracles: published check values, the bitwise reference
:func:`zarr3c._kernels._reference.crc32c`, and numcodecs' ``CRC32C`` (the checksum the
``crc32c`` codec used before the kernel, and what other Zarr implementations write).  The
instruction path and the table path must agree on every length and alignment, in particular
around the lengths where the instruction path changes strategy (three runs of 8192 bytes,
three runs of 256, eight bytes at a time, then single bytes).
"""

from __future__ import annotations

import platform
import sys
import threading
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import checksum
from zarr3c.codecs.crc32c import Crc32cCodec
from zarr3c.codecs.crc32c import crc32c as codec_crc32c

with warnings.catch_warnings():
    # numcodecs deprecates the `crc32c` package in favour of google_crc32c (either works)
    warnings.simplefilter("ignore", DeprecationWarning)
    from numcodecs.checksum32 import CRC32C

NUMCODECS = CRC32C(location="end")

# RFC 3720 (iSCSI), appendix B.4, and the usual "123456789" check value.
KNOWN = [
    (b"", 0),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]

# Lengths on either side of each change of strategy in the instruction path.
EDGES = sorted({max(0, n + d) for n in (8, 768, 3 * 8192, 2 * 3 * 8192 + 768)
                for d in (-9, -1, 0, 1, 9)})


def numcodecs_crc(data: object) -> int:
    return int(NUMCODECS.checksum(data)) & 0xFFFFFFFF


@pytest.mark.parametrize(("data", "want"), KNOWN)
def test_known_values(data: bytes, want: int) -> None:
    assert checksum.crc32c(data) == want
    assert checksum._portable_crc32c(data) == want
    assert ref.crc32c(data) == want
    assert numcodecs_crc(np.frombuffer(data, np.uint8)) == want


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=5000), st.integers(0, 7), st.integers(0, 7))
def test_equals_reference_and_numcodecs(data: bytes, head: int, tail: int) -> None:
    """For any bytes, also seen through unaligned slices of a larger buffer (memoryview and
    numpy), the kernel, both of its paths, the bitwise reference and numcodecs agree."""
    want = ref.crc32c(data)
    assert numcodecs_crc(np.frombuffer(data, np.uint8)) == want
    padded = bytes(range(head)) + data + bytes(tail)
    view = memoryview(padded)[head:head + len(data)]
    arr = np.frombuffer(padded, np.uint8)[head:head + len(data)]
    for buf in (data, bytearray(data), view, arr):
        assert checksum.crc32c(buf) == want
        assert checksum._portable_crc32c(buf) == want


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.data())
def test_chaining(data: bytes, draw: st.DataObject) -> None:
    """crc32c(b, crc32c(a)) is crc32c(a + b) for every split, on both paths and the reference."""
    cut = draw.draw(st.integers(0, len(data)))
    a, b = data[:cut], data[cut:]
    want = checksum.crc32c(data)
    assert checksum.crc32c(b, checksum.crc32c(a)) == want
    assert checksum._portable_crc32c(b, checksum._portable_crc32c(a)) == want
    assert ref.crc32c(b, ref.crc32c(a)) == want
    assert numcodecs_crc(np.frombuffer(data, np.uint8)) == want


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600), st.integers(0, 2**32 - 1))
def test_any_starting_value(data: bytes, value: int) -> None:
    want = ref.crc32c(data, value)
    assert checksum.crc32c(data, value) == want
    assert checksum._portable_crc32c(data, value) == want
    assert int(NUMCODECS.checksum(data, value)) & 0xFFFFFFFF == want


@pytest.mark.parametrize("n", EDGES)
def test_paths_agree_around_each_change_of_strategy(n: int) -> None:
    rng = np.random.default_rng(n)
    whole = rng.integers(0, 256, n + 8, dtype=np.uint8)
    for head in range(8):
        buf = whole[head:head + n]
        want = numcodecs_crc(buf)
        assert checksum.crc32c(buf) == want
        assert checksum._portable_crc32c(buf) == want
        # each half continued from the other, split inside a run
        cut = n // 3 + head
        assert checksum.crc32c(buf[cut:], checksum.crc32c(buf[:cut])) == want


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 3 * 2**20), st.integers(0, 7), st.integers(0, 2**32 - 1))
def test_paths_agree_on_large_inputs(n: int, head: int, seed: int) -> None:
    """Large inputs (the GIL is released for these) from unaligned starts."""
    whole = np.random.default_rng(seed).integers(0, 256, n + head, dtype=np.uint8)
    buf = whole[head:]
    want = numcodecs_crc(buf)
    assert checksum.crc32c(buf) == want
    assert checksum._portable_crc32c(buf) == want


def test_threads_get_their_own_results() -> None:
    """Several threads checksumming large buffers at once (GIL released) each get theirs."""
    rng = np.random.default_rng(7)
    bufs = [rng.integers(0, 256, 1 << 20, dtype=np.uint8) for _ in range(8)]
    want = [numcodecs_crc(b) for b in bufs]
    got: list[list[int]] = [[] for _ in bufs]

    def work(k: int) -> None:
        got[k] = [checksum.crc32c(bufs[k]) for _ in range(20)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(bufs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [[w] * 20 for w in want]


def test_read_only_buffers() -> None:
    arr = np.frombuffer(b"123456789", np.uint8)
    assert not arr.flags.writeable
    assert checksum.crc32c(arr) == 0xE3069283
    assert checksum.crc32c(memoryview(b"123456789")) == 0xE3069283


@pytest.mark.parametrize("fn", [checksum.crc32c, checksum._portable_crc32c, ref.crc32c])
def test_rejects_bad_arguments(fn: Callable[..., int]) -> None:
    with pytest.raises(OverflowError):
        fn(b"abc", -1)
    with pytest.raises(OverflowError):
        fn(b"abc", 2**32)
    with pytest.raises(ValueError):
        fn(np.arange(16, dtype=np.uint8)[::2])  # not contiguous
    with pytest.raises(ValueError):
        fn(np.arange(4, dtype=np.int32))  # not uint8


def test_hardware_is_used_where_the_cpu_has_it() -> None:
    assert isinstance(checksum.hardware(), bool)
    if sys.platform == "linux" and platform.machine() == "x86_64":
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
        assert checksum.hardware() == ("sse4_2" in flags)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from(["u1", "<i2", ">f8"]), st.booleans())
def test_codec_matches_numcodecs(data: bytes, dtype: str, strided: bool) -> None:
    """Crc32cCodec (now on the kernel) writes numcodecs' CRC32C(location="end") bytes and
    reads them back, for arrays of any dtype and layout."""
    itemsize = np.dtype(dtype).itemsize
    arr = np.frombuffer(data[:len(data) // itemsize * itemsize], dtype)
    if strided:
        arr = arr[::2]
    encoded = Crc32cCodec().encode(arr)
    assert bytes(encoded) == bytes(NUMCODECS.encode(np.ascontiguousarray(arr)))
    assert codec_crc32c(arr) == numcodecs_crc(np.ascontiguousarray(arr).view(np.uint8))
    assert bytes(Crc32cCodec().decode(encoded)) == np.ascontiguousarray(arr).tobytes()
