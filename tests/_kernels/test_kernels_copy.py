"""Tests of zarr3c._kernels.copy: copy_strided, fill_strided, byteswap, is_uniform.

Oracles: numpy assignment between views, and the pure-numpy twins in
zarr3c._kernels._reference (the error tables run against both implementations).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from zarr3c._kernels import _reference as ref
from zarr3c._kernels import copy as kcopy

IMPLS = [pytest.param(kcopy, id="cython"), pytest.param(ref, id="reference")]
ITEMSIZES = [1, 2, 3, 4, 8, 12, 16]
I64 = np.int64


# -- helpers -------------------------------------------------------------------------------------


def i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=I64).reshape(-1)


def flat_bytes(base: np.ndarray) -> np.ndarray:
    """The 1-d uint8 view of a C-contiguous array (what the kernels take)."""
    assert base.flags.c_contiguous
    return base.reshape(-1).view(np.uint8)


def region(view: np.ndarray, base: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """(byte offset, byte strides, shape) of a numpy view relative to its base's first byte."""
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return offset, i64(view.strides), i64(view.shape)


def random_base(rng: np.random.Generator, shape: tuple[int, ...], itemsize: int) -> np.ndarray:
    """A C-contiguous array of random ``V<itemsize>`` elements."""
    n = int(np.prod(shape, dtype=np.int64)) * itemsize
    raw = rng.integers(0, 256, size=n, dtype=np.uint8)
    return raw.view(f"V{itemsize}").reshape(shape)


@st.composite
def view_specs(draw: st.DrawFn, shape: tuple[int, ...], *, broadcast: bool) -> dict[str, Any]:
    """How to cut a view of ``shape`` out of a larger base: per-dimension step (negative
    steps make reversed views), padding, a storage axis order, and optionally length-1
    dimensions broadcast to zero strides."""
    ndim = len(shape)
    dims = []
    for n in shape:
        dims.append(
            dict(
                step=draw(st.sampled_from([1, 1, 2, 3, -1, -2])),
                lo=draw(st.integers(0, 2)),
                hi=draw(st.integers(0, 2)),
                bcast=broadcast and n != 1 and draw(st.integers(0, 4)) == 0,
            )
        )
    perm = draw(st.permutations(range(ndim)))
    return dict(shape=shape, dims=dims, perm=list(perm))


def make_view(
    spec: dict[str, Any], rng: np.random.Generator, itemsize: int
) -> tuple[np.ndarray, np.ndarray]:
    """Build (base, view) from a view spec; the view has exactly ``spec['shape']``."""
    slices, lengths = [], []
    for n, d in zip(spec["shape"], spec["dims"], strict=True):
        k = 1 if d["bcast"] else n
        step = d["step"]
        extent = (k - 1) * abs(step) + 1 if k > 0 else 0
        lengths.append(d["lo"] + extent + d["hi"])
        if k == 0:
            slices.append(slice(0, 0, step))
        elif step > 0:
            slices.append(slice(d["lo"], d["lo"] + extent, step))
        else:
            stop = d["lo"] - 1
            slices.append(slice(d["lo"] + extent - 1, None if stop < 0 else stop, step))
    perm = spec["perm"]
    base = random_base(rng, tuple(lengths[p] for p in perm), itemsize)
    # a[()] of a 0-d array is a scalar, a[...] a view.
    view = base.transpose(np.argsort(perm))[tuple(slices) if slices else ...]
    view = np.broadcast_to(view, spec["shape"])
    assert view.shape == tuple(spec["shape"])
    return base, view


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


# -- copy_strided ----------------------------------------------------------------------------------


@st.composite
def copy_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    shape = draw(shapes)
    return (
        shape,
        draw(st.sampled_from(ITEMSIZES)),
        draw(view_specs(shape, broadcast=True)),
        draw(view_specs(shape, broadcast=False)),
        draw(st.integers(0, 2**32 - 1)),
        draw(st.booleans()),
    )


def view_at(base: np.ndarray, offset: int, like: np.ndarray) -> np.ndarray:
    """A writable view of ``base`` with ``like``'s shape and strides at byte ``offset``."""
    first = flat_bytes(base)[offset : offset + base.dtype.itemsize].view(base.dtype)
    return np.lib.stride_tricks.as_strided(
        first, shape=like.shape, strides=like.strides, writeable=True
    )


@settings(max_examples=200, deadline=None)
@given(copy_cases())
def test_copy_strided_matches_numpy_and_reference(case: tuple[Any, ...]) -> None:
    shape, itemsize, src_spec, dst_spec, seed, readonly_src = case
    rng = np.random.default_rng(seed)
    src_base, src_view = make_view(src_spec, rng, itemsize)
    dst_base, dst_view = make_view(dst_spec, rng, itemsize)
    if readonly_src:
        src_base.flags.writeable = False
    so, ss, shp = region(src_view, src_base)
    do, ds, _ = region(dst_view, dst_base)

    # numpy oracle: the same view of a copy of the dst base, assigned from the src view.
    oracle = dst_base.copy()
    if dst_view.size:
        view_at(oracle, do, dst_view)[...] = src_view
    for impl in (kcopy, ref):
        out = dst_base.copy()
        impl.copy_strided(flat_bytes(src_base), so, ss, flat_bytes(out), do, ds, shp, itemsize)
        # Whole buffers compared: nothing outside the region may change either.
        np.testing.assert_array_equal(flat_bytes(out), flat_bytes(oracle), err_msg=impl.__name__)


CHUNK_INTO_OUTPUT = [
    # (output shape, output selection, chunk shape, chunk selection)
    ((20, 30, 17), np.s_[3:19:2, 29:5:-3, ::2], (8, 8, 9), np.s_[...]),
    ((64, 64), np.s_[10:42, 5:37], (32, 32), np.s_[...]),
    ((64, 64), np.s_[::-2, 1::2], (40, 40), np.s_[8:40, 39:7:-1]),
    ((5, 6, 7), np.s_[:, 2, ::-1], (5, 7), np.s_[...]),
    ((10, 10), np.s_[2:7, 3:8], (5, 5, 1), np.s_[..., 0]),
    ((9, 8, 7), np.s_[...], (9, 8, 7), np.s_[...]),
]


@pytest.mark.parametrize("dtype", ["u1", "<u2", ">i4", "f8", "c16", "S3"])
@pytest.mark.parametrize(
    "out_shape, out_sel, chunk_shape, chunk_sel",
    CHUNK_INTO_OUTPUT,
    ids=["3d-steps", "2d-block", "2d-reversed", "drop-axis", "1-extent", "whole"],
)
def test_copy_chunk_region_into_output_like_numpy(
    dtype: str,
    out_shape: tuple[int, ...],
    out_sel: Any,
    chunk_shape: tuple[int, ...],
    chunk_sel: Any,
) -> None:
    """The way the array layer uses the kernel: offsets and strides from numpy views."""
    rng = np.random.default_rng(0)
    dt = np.dtype(dtype)
    nbytes = int(np.prod(chunk_shape)) * dt.itemsize
    chunk = rng.integers(0, 256, nbytes, dtype=np.uint8).view(dt).reshape(chunk_shape)
    out = np.zeros(out_shape, dtype=dt)
    expected = out.copy()
    expected[out_sel] = chunk[chunk_sel]

    dst_view, src_view = out[out_sel], chunk[chunk_sel]
    so, ss, shape = region(src_view, chunk)
    do, ds, _ = region(dst_view, out)
    kcopy.copy_strided(flat_bytes(chunk), so, ss, flat_bytes(out), do, ds, shape, dt.itemsize)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize(
    "src_step, dst_step",
    [(1, 1), (2, 1), (1, 3), (-1, 1), (0, 1), (1, -2), (-3, -1)],
    ids=[
        "contiguous",
        "src-strided",
        "dst-strided",
        "src-reversed",
        "broadcast",
        "dst-reversed",
        "both-reversed",
    ],
)
def test_copy_strided_inner_loops(itemsize: int, src_step: int, dst_step: int) -> None:
    """Every specialised inner loop (memcpy run, per-itemsize element loops unrolled by four
    with a ragged tail: n = 37) equals numpy."""
    rng = np.random.default_rng(itemsize)
    n = 37
    src = random_base(rng, (3 * n,), itemsize)
    dst = random_base(rng, (3 * n,), itemsize)
    sview = src[0:1] if src_step == 0 else src[::src_step][:n]
    sview = np.broadcast_to(sview, (n,)) if src_step == 0 else sview
    dview = dst[::dst_step][:n]
    expected = dst.copy()
    view_at(expected, region(dview, dst)[0], dview)[...] = sview
    so, ss, shape = region(sview, src)
    do, ds, _ = region(dview, dst)
    kcopy.copy_strided(flat_bytes(src), so, ss, flat_bytes(dst), do, ds, shape, itemsize)
    np.testing.assert_array_equal(flat_bytes(dst), flat_bytes(expected))


@st.composite
def transposing_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    """Regions big enough for the cache-blocked path (a src-compact dimension that is not
    dst-compact, extents >= 8, a src span above 16 KiB), with ragged block edges."""
    ndim = draw(st.integers(2, 3))
    if ndim == 2:
        shape: tuple[int, ...] = (draw(st.integers(8, 40)), draw(st.integers(8, 700)))
    else:
        shape = tuple(draw(st.integers(8, 40)) for _ in range(3))
    return (
        shape,
        draw(st.permutations(range(ndim))),
        draw(st.sampled_from(ITEMSIZES)),
        [draw(st.sampled_from([1, 1, -1, 2])) for _ in range(ndim)],
        draw(st.booleans()),
        draw(st.integers(0, 2**32 - 1)),
    )


@settings(max_examples=60, deadline=None)
@given(transposing_cases())
def test_copy_strided_blocked_transpose_matches_numpy(case: tuple[Any, ...]) -> None:
    """The tiled fast path equals numpy (and the reference) on transposed, stepped views."""
    shape, perm, itemsize, steps, into_view, seed = case
    rng = np.random.default_rng(seed)
    src_base = random_base(rng, tuple(n * abs(st_) for n, st_ in zip(shape, steps)), itemsize)
    src_view = src_base[tuple(slice(None, None, st_) for st_ in steps)][
        tuple(slice(0, n) for n in shape)
    ].transpose(perm)
    if into_view:  # a sub-view of a bigger output, reversed along its first axis
        dst_base = random_base(rng, tuple(n + 3 for n in src_view.shape), itemsize)
        dst_view = dst_base[tuple(slice(1, 1 + n) for n in src_view.shape)][::-1]
    else:
        dst_base = random_base(rng, src_view.shape, itemsize)
        dst_view = dst_base
    so, ss, shp = region(src_view, src_base)
    do, ds, _ = region(dst_view, dst_base)
    oracle = dst_base.copy()
    view_at(oracle, do, dst_view)[...] = src_view
    for impl in (kcopy, ref):
        out = dst_base.copy()
        impl.copy_strided(flat_bytes(src_base), so, ss, flat_bytes(out), do, ds, shp, itemsize)
        np.testing.assert_array_equal(flat_bytes(out), flat_bytes(oracle), err_msg=impl.__name__)


@pytest.mark.parametrize("itemsize", ITEMSIZES)
def test_copy_strided_blocked_equals_plain_path(itemsize: int) -> None:
    """The same transpose through the tiled path (64 x 300 plane) and through plain runs
    (one row at a time, too small to tile) gives identical bytes."""
    rng = np.random.default_rng(itemsize)
    src = random_base(rng, (64, 300), itemsize)
    t = src.T
    tiled = np.empty(t.shape, dtype=src.dtype)
    plain = np.empty(t.shape, dtype=src.dtype)
    so, ss, shape = region(t, src)
    kcopy.copy_strided(
        flat_bytes(src), so, ss, flat_bytes(tiled), 0, i64(tiled.strides), shape, itemsize
    )
    for r in range(t.shape[0]):
        row_so, row_ss, row_shape = region(t[r], src)
        dst_off = r * tiled.strides[0]
        kcopy.copy_strided(
            flat_bytes(src),
            row_so,
            row_ss,
            flat_bytes(plain),
            dst_off,
            i64(plain.strides[1:]),
            row_shape,
            itemsize,
        )
    np.testing.assert_array_equal(flat_bytes(tiled), flat_bytes(plain))
    np.testing.assert_array_equal(flat_bytes(tiled), flat_bytes(np.ascontiguousarray(t)))


def test_copy_strided_ndim0_copies_one_element() -> None:
    src = np.arange(16, dtype=np.uint8)
    dst = np.zeros(16, dtype=np.uint8)
    kcopy.copy_strided(src, 5, i64([]), dst, 9, i64([]), i64([]), 3)
    expected = np.zeros(16, dtype=np.uint8)
    expected[9:12] = [5, 6, 7]
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("impl", IMPLS)
def test_copy_strided_empty_region_is_a_noop(impl: Any) -> None:
    """An empty region touches nothing, so its offsets and strides need not fit the buffers."""
    src = np.arange(4, dtype=np.uint8)
    dst = np.zeros(4, dtype=np.uint8)
    impl.copy_strided(src, 100, i64([1, 10**12]), dst, 50, i64([-7, 1]), i64([0, 3]), 2)
    np.testing.assert_array_equal(dst, 0)


def test_copy_strided_accepts_bytes_and_readonly_sources() -> None:
    dst = np.zeros(6, dtype=np.uint8)
    kcopy.copy_strided(b"abcdef", 4, i64([-2]), dst, 0, i64([2]), i64([3]), 2)
    assert dst.tobytes() == b"efcdab"
    ro = np.frombuffer(b"xyz", dtype=np.uint8)
    kcopy.copy_strided(ro, 0, i64([1]), dst, 3, i64([1]), i64([3]), 1)
    assert dst.tobytes() == b"efcxyz"


def test_copy_strided_releases_the_gil_and_is_thread_safe() -> None:
    """Concurrent copies into disjoint regions of one output give numpy's result."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(1)
    chunks = [rng.integers(0, 2**16, (32, 32, 32), dtype=np.uint16) for _ in range(8)]
    out = np.zeros((64, 64, 64), dtype=np.uint16)
    expected = out.copy()

    def put(k: int) -> None:
        i, j, m = (k >> 2) * 32, ((k >> 1) & 1) * 32, (k & 1) * 32
        sel = np.s_[i : i + 32, j : j + 32, m : m + 32]
        expected[sel] = chunks[k]
        so, ss, shape = region(chunks[k], chunks[k])
        do, ds, _ = region(out[sel], out)
        kcopy.copy_strided(flat_bytes(chunks[k]), so, ss, flat_bytes(out), do, ds, shape, 2)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(put, range(8)))
    np.testing.assert_array_equal(out, expected)
    assert (out != 0).mean() > 0.99


def _element_offsets(offset: int, strides: list[int], shape: list[int]) -> np.ndarray:
    if not shape:
        return np.array([offset], dtype=np.int64)
    grids = np.indices(shape, dtype=np.int64).reshape(len(shape), -1)
    return offset + (np.array(strides, dtype=np.int64)[:, None] * grids).sum(axis=0)


@settings(max_examples=300, deadline=None)
@given(
    ndim=st.integers(0, 3),
    data=st.data(),
    itemsize=st.integers(1, 5),
    src_len=st.integers(0, 64),
    dst_len=st.integers(0, 64),
)
def test_copy_strided_random_arguments_never_escape(
    ndim: int, data: st.DataObject, itemsize: int, src_len: int, dst_len: int
) -> None:
    """Arbitrary offsets and strides: the kernel raises exactly when the reference does (a
    region reaching outside a buffer), and otherwise writes the same bytes.  Run under
    AddressSanitizer, this is also the test that nothing outside the buffers is touched."""
    ints = st.integers(-24, 24)
    shape = data.draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim))
    ss = data.draw(st.lists(ints, min_size=ndim, max_size=ndim))
    ds = data.draw(st.lists(ints, min_size=ndim, max_size=ndim))
    so, do = data.draw(st.integers(-2, 70)), data.draw(st.integers(-2, 70))
    rng = np.random.default_rng(src_len * 65 + dst_len)
    src = rng.integers(0, 256, src_len, dtype=np.uint8)
    dst0 = rng.integers(0, 256, dst_len, dtype=np.uint8)
    outcomes: list[np.ndarray | None] = []
    for impl in (kcopy, ref):
        dst = dst0.copy()
        try:
            impl.copy_strided(src, so, i64(ss), dst, do, i64(ds), i64(shape), itemsize)
            outcomes.append(dst)
        except ValueError:
            outcomes.append(None)
    assert (outcomes[0] is None) == (outcomes[1] is None)
    event("rejected" if outcomes[0] is None else "accepted")
    if outcomes[0] is not None and 0 not in shape:
        starts = np.sort(_element_offsets(do, ds, shape))
        if (np.diff(starts) >= itemsize).all():  # dst elements disjoint: order-independent
            np.testing.assert_array_equal(outcomes[0], outcomes[1])


@settings(max_examples=150, deadline=None)
@given(
    ndim=st.integers(0, 3),
    data=st.data(),
    itemsize=st.integers(1, 5),
    dst_len=st.integers(0, 64),
)
def test_fill_strided_random_arguments_never_escape(
    ndim: int, data: st.DataObject, itemsize: int, dst_len: int
) -> None:
    shape = data.draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim))
    ds = data.draw(st.lists(st.integers(-24, 24), min_size=ndim, max_size=ndim))
    do = data.draw(st.integers(-2, 70))
    value = np.arange(1, itemsize + 1, dtype=np.uint8)
    outcomes: list[np.ndarray | None] = []
    for impl in (kcopy, ref):
        dst = np.zeros(dst_len, dtype=np.uint8)
        try:
            impl.fill_strided(dst, do, i64(ds), i64(shape), value)
            outcomes.append(dst)
        except ValueError:
            outcomes.append(None)
    assert (outcomes[0] is None) == (outcomes[1] is None)
    event("rejected" if outcomes[0] is None else "accepted")
    if outcomes[0] is not None and 0 not in shape:
        starts = np.sort(_element_offsets(do, ds, shape))
        if (np.diff(starts) >= itemsize).all():
            np.testing.assert_array_equal(outcomes[0], outcomes[1])


def _copy_args(**over: Any) -> dict[str, Any]:
    """Valid arguments (a 3x4 region of 2-byte elements, both buffers exactly big enough)."""
    args: dict[str, Any] = dict(
        src=np.zeros(24, dtype=np.uint8),
        src_offset=0,
        src_strides=i64([8, 2]),
        dst=np.zeros(24, dtype=np.uint8),
        dst_offset=0,
        dst_strides=i64([8, 2]),
        shape=i64([3, 4]),
        itemsize=2,
    )
    args.update(over)
    return args


BIG = 2**62
COPY_ERRORS = [
    (dict(src_strides=i64([8])), "same length", "src-strides-length"),
    (dict(dst_strides=i64([8, 2, 1])), "same length", "dst-strides-length"),
    (dict(shape=i64([3, -1])), "negative", "negative-extent"),
    (dict(itemsize=0), "itemsize", "itemsize-0"),
    (dict(itemsize=-3), "itemsize", "itemsize-negative"),
    (dict(src_offset=-1), "negative", "src-offset-negative"),
    (dict(dst_offset=-2), "negative", "dst-offset-negative"),
    (dict(src=np.zeros(23, dtype=np.uint8)), "outside src", "src-one-byte-short"),
    (dict(dst=np.zeros(23, dtype=np.uint8)), "outside dst", "dst-one-byte-short"),
    (dict(src_offset=1), "outside src", "src-offset-one-too-far"),
    (dict(itemsize=3), "outside src", "itemsize-one-too-big"),
    (dict(src_offset=7, src_strides=i64([-8, 2])), "outside src", "negative-stride-below-0"),
    (dict(dst_offset=5, dst_strides=i64([8, -2])), "outside dst", "negative-inner-below-0"),
    (dict(src_strides=i64([BIG, 2])), "outside src", "huge-stride"),
    (dict(src_strides=i64([-(2**63), 2]), src_offset=8), "outside src", "int64-min-stride"),
    (dict(dst_strides=i64([2**63 - 1, 1])), "outside dst", "int64-max-stride"),
    (dict(shape=i64([BIG, 4])), "outside src", "huge-extent"),
    (
        dict(shape=i64([2**63 - 1, 2**63 - 1]), src_strides=i64([0, 0])),
        "outside dst",
        "huge-extent-broadcast-src",
    ),
    (dict(src_offset=2**63 - 1), "outside src", "int64-max-offset"),
    (dict(itemsize=2**63 - 1), "outside src", "int64-max-itemsize"),
    (dict(src=np.zeros(0, dtype=np.uint8)), "outside src", "empty-src"),
    (
        dict(shape=i64([1] * 65), src_strides=i64([0] * 65), dst_strides=i64([0] * 65)),
        "at most 64",
        "too-many-dims",
    ),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("over, match, _id", COPY_ERRORS, ids=[c[2] for c in COPY_ERRORS])
def test_copy_strided_rejects_invalid_arguments(
    impl: Any, over: dict[str, Any], match: str, _id: str
) -> None:
    with pytest.raises(ValueError) as info:
        impl.copy_strided(**_copy_args(**over))
    if impl is kcopy:
        assert match in str(info.value)
        assert str(info.value).startswith("copy_strided: ")


def test_copy_strided_error_message_names_the_bytes() -> None:
    with pytest.raises(ValueError, match=r"touches bytes \[0, 23\] but src has 23 bytes"):
        kcopy.copy_strided(**_copy_args(src=np.zeros(23, dtype=np.uint8)))


def test_copy_strided_exact_fit_is_accepted() -> None:
    """The boundary cases of the error table, one byte inside: valid."""
    src = np.arange(24, dtype=np.uint8)
    for over in [{}, dict(src_offset=7, src_strides=i64([-8, 2]), shape=i64([1, 4]))]:
        args = _copy_args(src=src, **over)
        kcopy.copy_strided(**args)
        out = args["dst"].copy()
        ref.copy_strided(**{**args, "dst": out})
        np.testing.assert_array_equal(args["dst"], out)


@pytest.mark.parametrize(
    "over, error",
    [
        (dict(src_strides=np.array([8, 2], dtype=np.int32)), ValueError),  # buffer dtype
        (dict(dst=np.frombuffer(bytes(24), dtype=np.uint8)), ValueError),  # read-only dst
        (dict(src=np.zeros((4, 6), dtype=np.uint8)), ValueError),  # not 1-d
        (dict(src=None), TypeError),
        (dict(shape=None), TypeError),
        (dict(src_offset=2**64), OverflowError),  # does not fit int64
        (dict(itemsize="2"), TypeError),
    ],
    ids=[
        "int32-strides",
        "readonly-dst",
        "2d-src",
        "none-src",
        "none-shape",
        "offset-2**64",
        "str-itemsize",
    ],
)
def test_copy_strided_rejects_wrong_buffer_types(over: dict[str, Any], error: type) -> None:
    """Argument conversion errors from Cython: an exception, never a crash."""
    with pytest.raises(error):
        kcopy.copy_strided(**_copy_args(**over))


# -- fill_strided ----------------------------------------------------------------------------------


@st.composite
def fill_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    shape = draw(shapes)
    return (
        shape,
        draw(view_specs(shape, broadcast=False)),
        draw(st.sampled_from(ITEMSIZES)),
        draw(st.integers(0, 2**32 - 1)),
        draw(st.sampled_from(["random", "zero", "uniform-byte"])),
    )


@settings(max_examples=150, deadline=None)
@given(fill_cases())
def test_fill_strided_matches_numpy_and_reference(case: tuple[Any, ...]) -> None:
    shape, spec, itemsize, seed, kind = case
    rng = np.random.default_rng(seed)
    base, view = make_view(spec, rng, itemsize)
    value = {
        "random": rng.integers(0, 256, itemsize, dtype=np.uint8),
        "zero": np.zeros(itemsize, dtype=np.uint8),
        "uniform-byte": np.full(itemsize, 0xA5, dtype=np.uint8),
    }[kind]
    do, ds, shp = region(view, base)
    oracle = base.copy()
    if view.size:
        view_at(oracle, do, view)[...] = value.view(f"V{itemsize}")[0]
    for impl in (kcopy, ref):
        out = base.copy()
        impl.fill_strided(flat_bytes(out), do, ds, shp, value)
        np.testing.assert_array_equal(flat_bytes(out), flat_bytes(oracle), err_msg=impl.__name__)


def _fill_args(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        dst=np.zeros(24, dtype=np.uint8),
        dst_offset=0,
        dst_strides=i64([8, 2]),
        shape=i64([3, 4]),
        value=np.ones(2, dtype=np.uint8),
    )
    args.update(over)
    return args


FILL_ERRORS = [
    (dict(dst_strides=i64([2])), "same length", "strides-length"),
    (dict(shape=i64([-1, 4])), "negative", "negative-extent"),
    (dict(value=np.zeros(0, dtype=np.uint8)), "empty", "empty-value"),
    (dict(dst_offset=-1), "negative", "negative-offset"),
    (dict(dst=np.zeros(23, dtype=np.uint8)), "outside dst", "dst-one-byte-short"),
    (dict(value=np.zeros(3, dtype=np.uint8)), "outside dst", "value-one-byte-too-long"),
    (dict(dst_offset=1), "outside dst", "offset-one-too-far"),
    (dict(dst_strides=i64([-8, 2])), "outside dst", "negative-stride-below-0"),
    (dict(dst_strides=i64([2**62, 2])), "outside dst", "huge-stride"),
    (dict(shape=i64([2**63 - 1, 4])), "outside dst", "huge-extent"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("over, match, _id", FILL_ERRORS, ids=[c[2] for c in FILL_ERRORS])
def test_fill_strided_rejects_invalid_arguments(
    impl: Any, over: dict[str, Any], match: str, _id: str
) -> None:
    with pytest.raises(ValueError) as info:
        impl.fill_strided(**_fill_args(**over))
    if impl is kcopy:
        assert match in str(info.value)


def test_fill_strided_ndim0_and_empty() -> None:
    dst = np.zeros(8, dtype=np.uint8)
    kcopy.fill_strided(dst, 2, i64([]), i64([]), np.array([7, 8, 9], dtype=np.uint8))
    assert dst.tolist() == [0, 0, 7, 8, 9, 0, 0, 0]
    kcopy.fill_strided(dst, 1000, i64([1]), i64([0]), np.array([1], dtype=np.uint8))
    assert dst.tolist() == [0, 0, 7, 8, 9, 0, 0, 0]


# -- byteswap --------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16]), st.integers(0, 40), st.integers(0, 2**32 - 1))
def test_byteswap_matches_reference_and_numpy(width: int, nwords: int, seed: int) -> None:
    raw = np.random.default_rng(seed).integers(0, 256, width * nwords, dtype=np.uint8)
    got, want = raw.copy(), raw.copy()
    kcopy.byteswap(got, width)
    ref.byteswap(want, width)
    np.testing.assert_array_equal(got, want)
    if width in (2, 4, 8):
        swapped = raw.view(f"u{width}").byteswap().view(np.uint8)
        np.testing.assert_array_equal(got, swapped)
    if width == 16:  # complex256-free check: each 16-byte word reversed
        np.testing.assert_array_equal(got.reshape(-1, 16), raw.reshape(-1, 16)[:, ::-1])
    if width > 1 and nwords:
        kcopy.byteswap(got, width)  # an involution
        np.testing.assert_array_equal(got, raw)


def test_byteswap_unaligned_buffer() -> None:
    """Words need not be aligned in memory (a slice starting at an odd address)."""
    raw = np.arange(1, 34, dtype=np.uint8)
    view = raw[1:]
    kcopy.byteswap(view, 8)
    assert raw[0] == 1
    np.testing.assert_array_equal(view.reshape(-1, 8), np.arange(2, 34).reshape(-1, 8)[:, ::-1])


BYTESWAP_ERRORS = [
    (np.zeros(8, np.uint8), 0, "not one of", "width-0"),
    (np.zeros(9, np.uint8), 3, "not one of", "width-3"),
    (np.zeros(32, np.uint8), 32, "not one of", "width-32"),
    (np.zeros(8, np.uint8), -2, "not one of", "width-negative"),
    (np.zeros(6, np.uint8), 4, "multiple", "length-not-multiple"),
    (np.zeros(17, np.uint8), 16, "multiple", "length-16-plus-1"),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "buf, width, match, _id", BYTESWAP_ERRORS, ids=[c[3] for c in BYTESWAP_ERRORS]
)
def test_byteswap_rejects_invalid_arguments(
    impl: Any, buf: np.ndarray, width: int, match: str, _id: str
) -> None:
    before = buf.copy()
    with pytest.raises(ValueError, match=match):
        impl.byteswap(buf, width)
    np.testing.assert_array_equal(buf, before)


# -- is_uniform ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(ITEMSIZES),
    st.integers(0, 50),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["uniform", "one-byte-differs", "random"]),
)
def test_is_uniform_matches_reference(itemsize: int, n: int, seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    value = rng.integers(0, 256, itemsize, dtype=np.uint8)
    if kind == "random":
        buf = rng.integers(0, 256, itemsize * n, dtype=np.uint8)
    else:
        buf = np.tile(value, n)
        if kind == "one-byte-differs" and n:
            k = int(rng.integers(0, len(buf)))
            buf[k] ^= 1 << int(rng.integers(0, 8))
    want = ref.is_uniform(buf, value)
    assert kcopy.is_uniform(buf, value) is want
    if kind == "uniform":
        assert want is True
    if kind == "one-byte-differs" and n:
        assert want is False


def test_is_uniform_accepts_bytes_and_float_bit_patterns() -> None:
    assert kcopy.is_uniform(b"", b"\x00\x00") is True
    assert kcopy.is_uniform(b"abab", b"ab") is True
    assert kcopy.is_uniform(b"abba", b"ab") is False
    # bit for bit: -0.0 is not 0.0, NaN equals the same NaN
    zeros = np.zeros(4, dtype="f8")
    neg = np.array(-0.0)
    assert kcopy.is_uniform(zeros.view(np.uint8), neg.reshape(1).view(np.uint8)) is False
    nans = np.full(4, np.nan)
    assert kcopy.is_uniform(nans.view(np.uint8), nans[:1].view(np.uint8)) is True


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("where", [0, 1, 2, 3, -3, -2, -1], ids=lambda w: f"byte{w}")
@pytest.mark.parametrize("itemsize", [1, 2, 3, 8, 16])
def test_is_uniform_sees_every_byte(impl: Any, where: int, itemsize: int) -> None:
    """A difference in the first or last element, in any of its bytes, is seen."""
    value = np.arange(1, itemsize + 1, dtype=np.uint8)
    buf = np.tile(value, 37)
    assert impl.is_uniform(buf, value) is True
    buf[where] ^= 0x80
    assert impl.is_uniform(buf, value) is False


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize(
    "buf, value, match",
    [
        (np.zeros(4, np.uint8), np.zeros(0, np.uint8), "empty"),
        (np.zeros(5, np.uint8), np.zeros(2, np.uint8), "multiple"),
        (np.zeros(2, np.uint8), np.zeros(3, np.uint8), "multiple"),
    ],
    ids=["empty-value", "length-not-multiple", "value-longer-than-buf"],
)
def test_is_uniform_rejects_invalid_arguments(
    impl: Any, buf: np.ndarray, value: np.ndarray, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        impl.is_uniform(buf, value)
