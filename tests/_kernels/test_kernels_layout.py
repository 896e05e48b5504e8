"""Tests of zarr3c._kernels.layout.transpose_into (C/F conversion and axis permutations).

Oracles: numpy's ``ascontiguousarray(a.transpose(order))`` and the reference twin.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import layout

IMPLS = [pytest.param(layout, id="cython"), pytest.param(ref, id="reference")]


def i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64).reshape(-1)


def random_chunk(seed: int, shape: tuple[int, ...], itemsize: int) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64)) * itemsize
    raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    return raw.view(f"V{itemsize}").reshape(shape)


@st.composite
def transpose_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], int, int]:
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=5)))
    order = list(draw(st.permutations(range(len(shape)))))
    itemsize = draw(st.sampled_from([1, 2, 3, 4, 8, 12, 16]))
    return shape, order, itemsize, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=200, deadline=None)
@given(transpose_cases())
def test_transpose_into_matches_numpy_and_reference(
    case: tuple[tuple[int, ...], list[int], int, int],
) -> None:
    shape, order, itemsize, seed = case
    chunk = random_chunk(seed, shape, itemsize)
    src = chunk.reshape(-1).view(np.uint8)
    expected = np.ascontiguousarray(chunk.transpose(order)).reshape(-1).view(np.uint8)
    for impl in (layout, ref):
        dst = np.full(len(src), 0xEE, dtype=np.uint8)
        impl.transpose_into(src, i64(shape), i64(order), itemsize, dst)
        np.testing.assert_array_equal(dst, expected, err_msg=impl.__name__)


@pytest.mark.parametrize("dtype", ["u1", "<u2", ">f4", "i8", "c16", "S5"])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (4, 1, 6), (2, 3, 4, 5)])
def test_c_to_f_and_back(dtype: str, shape: tuple[int, ...]) -> None:
    """C<->F is the reversed permutation; converting back restores the chunk."""
    dt = np.dtype(dtype)
    chunk = random_chunk(len(shape), shape, dt.itemsize).view(dt)
    rev = i64(list(reversed(range(len(shape)))))
    f_bytes = np.empty(chunk.nbytes, dtype=np.uint8)
    layout.transpose_into(chunk.reshape(-1).view(np.uint8), i64(shape), rev, dt.itemsize, f_bytes)
    np.testing.assert_array_equal(f_bytes, np.asfortranarray(chunk).ravel(order="K").view(np.uint8))
    back = np.empty(chunk.nbytes, dtype=np.uint8)
    layout.transpose_into(f_bytes, i64(shape[::-1]), rev, dt.itemsize, back)
    np.testing.assert_array_equal(back.view(dt).reshape(shape), chunk)


def test_transpose_accepts_readonly_bytes() -> None:
    dst = np.empty(6, dtype=np.uint8)
    layout.transpose_into(b"abcdef", i64([2, 3]), i64([1, 0]), 1, dst)
    assert dst.tobytes() == b"adbecf"


def test_transpose_ndim0_and_empty() -> None:
    dst = np.zeros(2, dtype=np.uint8)
    layout.transpose_into(b"xy", i64([]), i64([]), 2, dst)
    assert dst.tobytes() == b"xy"
    layout.transpose_into(b"", i64([3, 0]), i64([1, 0]), 4, np.zeros(0, dtype=np.uint8))


def _args(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        src=np.zeros(24, dtype=np.uint8),
        shape=i64([2, 3]),
        order=i64([1, 0]),
        itemsize=4,
        dst=np.zeros(24, dtype=np.uint8),
    )
    args.update(over)
    return args


TRANSPOSE_ERRORS = [
    (dict(order=i64([0, 0])), "not a permutation", "repeated-axis"),
    (dict(order=i64([0, 2])), "not a permutation", "axis-too-big"),
    (dict(order=i64([-1, 0])), "not a permutation", "negative-axis"),
    (dict(order=i64([1, 0, 2])), "len(order)", "order-too-long"),
    (dict(order=i64([0])), "len(order)", "order-too-short"),
    (dict(src=np.zeros(23, dtype=np.uint8)), "bytes", "src-one-byte-short"),
    (dict(src=np.zeros(25, dtype=np.uint8)), "bytes", "src-one-byte-long"),
    (dict(dst=np.zeros(23, dtype=np.uint8)), "bytes", "dst-one-byte-short"),
    (dict(dst=np.zeros(25, dtype=np.uint8)), "bytes", "dst-one-byte-long"),
    (dict(itemsize=0), "itemsize", "itemsize-0"),
    (dict(itemsize=5), "bytes", "itemsize-too-big"),
    (dict(shape=i64([-2, -3])), "negative", "negative-extents"),
    (dict(shape=i64([2**32, 2**32])), "bytes", "product-overflows-int64"),
    (dict(shape=i64([2**62, 0]), src=np.zeros(0, np.uint8)), "bytes", "empty-but-dst-not"),
    (dict(shape=i64([1] * 65), order=i64(range(65))), "at most 64", "too-many-dims"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("over, match, _id", TRANSPOSE_ERRORS, ids=[c[2] for c in TRANSPOSE_ERRORS])
def test_transpose_into_rejects_invalid_arguments(
    impl: Any, over: dict[str, Any], match: str, _id: str
) -> None:
    args = _args(**over)
    before = args["dst"].copy()
    with pytest.raises(ValueError) as info:
        impl.transpose_into(**args)
    np.testing.assert_array_equal(args["dst"], before)
    if impl is layout:
        assert match in str(info.value)
        assert str(info.value).startswith("transpose_into: ")


def test_transpose_error_names_sizes() -> None:
    with pytest.raises(ValueError, match=r"has 24 bytes but len\(src\) = 23 and len\(dst\) = 24"):
        layout.transpose_into(**_args(src=np.zeros(23, dtype=np.uint8)))
