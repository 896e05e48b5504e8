"""oindex, vindex, masks, blocks and a[...] dispatch, reads and writes, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import BoundsCheckError, IndexingError, ShapeMismatchError

# Every test on both read paths: the native pipeline and the Python path.
pytestmark = pytest.mark.usefixtures("read_path")

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _array(shape, chunks, dtype="int32", fill_value=-1):
    data = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    a = zarr3c.create_array("memory://", shape=shape, dtype=dtype, chunks=chunks,
                            fill_value=fill_value)
    return a, data


@st.composite
def orthogonal_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "ints", "bools"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            step = draw(st.sampled_from([None, 1, 2, -1, -3]))
            key.append(slice(draw(st.one_of(st.none(), st.integers(-n, n))), None, step))
        elif kind == "ints":
            key.append(np.array(draw(st.lists(st.integers(-n, n - 1), max_size=6)),
                                dtype=np.int64))
        else:
            key.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
    return shape, chunks, tuple(key)


def numpy_oindex(data: np.ndarray, key: tuple) -> tuple:
    """The numpy index equivalent to an orthogonal selection, and the axes to drop."""
    idx, drop = [], []
    for axis, (k, n) in enumerate(zip(key, data.shape)):
        if isinstance(k, slice):
            idx.append(np.arange(n)[k])
        elif isinstance(k, np.ndarray) and k.dtype == bool:
            idx.append(np.flatnonzero(k))
        elif isinstance(k, np.ndarray):
            idx.append(k)
        else:
            idx.append(np.array([k]))
            drop.append(axis)
    return np.ix_(*idx), tuple(drop)


@SETTINGS
@given(orthogonal_case(), st.booleans())
def test_oindex_read_and_write(case, missing) -> None:
    shape, chunks, key = case
    a, data = _array(shape, chunks)
    if not missing:
        a[...] = data
    else:
        data = np.full(shape, -1, dtype="int32")
    ix, drop = numpy_oindex(data, key)
    expected = data[ix].squeeze(axis=drop) if drop else data[ix]
    np.testing.assert_array_equal(a.oindex[key], expected)
    np.testing.assert_array_equal(a.get_orthogonal_selection(key), expected)
    value = np.arange(expected.size, dtype="int32").reshape(expected.shape) + 1000
    a.oindex[key] = value
    data = data.copy()
    data[ix] = value.reshape(data[ix].shape)
    np.testing.assert_array_equal(a[...], data)


@st.composite
def coordinate_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    npoints = draw(st.integers(0, 12))
    coords = tuple(
        np.array(draw(st.lists(st.integers(-n, n - 1), min_size=npoints, max_size=npoints)),
                 dtype=np.int64)
        for n in shape
    )
    if ndim > 1 and npoints and draw(st.booleans()):  # broadcast a scalar coordinate
        coords = (int(coords[0][0]),) + coords[1:]
    return shape, chunks, coords


@SETTINGS
@given(coordinate_case())
def test_vindex_read_and_write(case) -> None:
    shape, chunks, coords = case
    a, data = _array(shape, chunks)
    a[...] = data
    np.testing.assert_array_equal(a.vindex[coords], data[coords])
    value = np.arange(np.size(data[coords]), dtype="int32").reshape(data[coords].shape) + 500
    a.vindex[coords] = value
    data[coords] = value  # duplicates: the last one wins, as in numpy
    np.testing.assert_array_equal(a[...], data)


@SETTINGS
@given(st.data())
def test_mask_read_and_write(data_st) -> None:
    shape = tuple(data_st.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))
    chunks = tuple(data_st.draw(st.integers(1, 4)) for _ in shape)
    mask = np.array(data_st.draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                                          max_size=int(np.prod(shape))))).reshape(shape)
    a, data = _array(shape, chunks)
    a[...] = data
    np.testing.assert_array_equal(a[mask], data[mask])
    np.testing.assert_array_equal(a.vindex[mask], data[mask])
    a[mask] = 7
    data[mask] = 7
    np.testing.assert_array_equal(a[...], data)
    a.set_mask_selection(~mask, np.arange((~mask).sum(), dtype="int32"))
    data[~mask] = np.arange((~mask).sum())
    np.testing.assert_array_equal(a.get_mask_selection(np.ones(shape, bool)), data.ravel())


def test_vindex_broadcasts_like_numpy() -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    rows = np.array([[0], [5], [2]])
    cols = np.array([1, 6, 6, 0])
    np.testing.assert_array_equal(a.vindex[rows, cols], data[rows, cols])
    assert a.vindex[rows, cols].shape == (3, 4)


def test_blocks() -> None:
    a, data = _array((10, 7), (4, 3))
    a[...] = data
    np.testing.assert_array_equal(a.blocks[1, 2], data[4:8, 6:9])
    np.testing.assert_array_equal(a.blocks[-1, -1], data[8:, 6:])
    np.testing.assert_array_equal(a.blocks[0:2], data[:8])
    np.testing.assert_array_equal(a.blocks[..., 1:], data[:, 3:])
    np.testing.assert_array_equal(a.get_block_selection((2, 0)), data[8:, :3])
    a.blocks[2, 0] = 0
    data[8:, :3] = 0
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(BoundsCheckError):
        a.blocks[3, 0]
    with pytest.raises(IndexingError):
        a.blocks[::2]


def test_the_one_block_of_a_0d_array_is_an_array() -> None:
    """A block is a region, so numpy's slicing is the oracle: a 0-d array's one block is a
    0-d array (as ``a[...]``), not a scalar."""
    a = zarr3c.create_array("memory://", shape=(), chunks=(), dtype="f4", fill_value=1.5)
    for got in (a.blocks[...], a.blocks[()], a.get_block_selection(())):
        assert isinstance(got, np.ndarray) and got.shape == () and got == np.float32(1.5)
    a.blocks[...] = 4
    assert a[()] == np.float32(4)


@pytest.mark.parametrize(
    "key",
    [
        [1, 3],
        (np.array([0, 2]), slice(1, 4)),
        (slice(None, None, -1), [2, 0, 2]),
        (np.array([True, False, True, False, True, False]), 1),
        (np.array([[0, 1], [2, 3]]), np.array([1, 2])),
        ([0, 5], [6, 0]),
        np.arange(42).reshape(6, 7) % 3 == 0,
    ],
    ids=["list", "array-slice", "reverse-array", "bool-int", "2d-coords", "pure-fancy", "mask"],
)
def test_getitem_dispatch_matches_numpy(key) -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    np.testing.assert_array_equal(a[key], data[key])
    a[key] = -5
    data[key] = -5
    np.testing.assert_array_equal(a[...], data)


def test_1d_fancy_index_with_2d_array() -> None:
    a, data = _array((10,), (3,))
    a[...] = data
    idx = np.array([[1, 9], [0, 0]])
    np.testing.assert_array_equal(a[idx], data[idx])


@pytest.mark.parametrize(
    ("mode", "key", "error"),
    [
        ("oindex", ([0, 6], slice(None)), BoundsCheckError),
        ("oindex", ([-7], slice(None)), BoundsCheckError),
        ("oindex", (np.ones(5, bool), slice(None)), BoundsCheckError),
        ("oindex", (np.array([0.5]), slice(None)), IndexingError),
        ("oindex", (np.array(["a"]), slice(None)), IndexingError),
        ("oindex", (np.zeros((2, 2), int), slice(None)), IndexingError),
        ("oindex", (0, 0, 0), IndexingError),
        ("vindex", ([0, 1], [0, 7]), BoundsCheckError),
        ("vindex", ([0, 1], [0, 1, 2]), IndexingError),
        ("vindex", ([0, 1],), IndexingError),
        ("vindex", (slice(None), [0]), IndexingError),
        ("vindex", np.ones((6, 6), bool), BoundsCheckError),
        ("getitem", (Ellipsis, [0, 1], [1, 2, 3]), IndexingError),
        ("getitem", (Ellipsis, [0, 6], [1]), BoundsCheckError),
    ],
    ids=["oob", "oob-negative", "bool-length", "float", "object", "2d", "too-many",
         "v-oob", "v-broadcast", "v-too-few", "v-slice", "mask-shape", "mixed-broadcast",
         "mixed-oob"],
)
def test_bad_selections_raise_index_errors(mode, key, error) -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    getter = {"oindex": a.oindex, "vindex": a.vindex, "getitem": a}[mode]
    with pytest.raises(error) as info:
        getter[key]
    assert isinstance(info.value, IndexError)
    with pytest.raises(error):
        getter[key] = 1
    np.testing.assert_array_equal(a[...], data)  # a refused write changes nothing


def test_wrong_shape_writes_are_value_errors() -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    with pytest.raises(ShapeMismatchError):
        a.oindex[[0, 1], :] = np.ones((3, 7))
    with pytest.raises(ShapeMismatchError):
        a.vindex[[0, 1], [0, 1]] = np.ones(3)
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(
    "chunks",
    [(1, 1), [[1] * 1500 + [2] * 750, 1]],
    ids=["regular", "rectilinear"],
)
def test_vindex_on_a_grid_with_far_more_chunks_than_points(chunks) -> None:
    """Points are grouped with a table of one slot per chunk only while the grid is small
    next to the selection; millions of chunks and a few points take the other path (the
    touched chunks numbered first), with the same result and last-write-wins order."""
    shape = (3000, 3000)
    a = zarr3c.create_array("memory://", shape=shape, dtype="int32", chunks=chunks,
                            fill_value=-1, compressors=None)
    expected = np.full(shape, -1, dtype=np.int32)
    rows = np.array([2999, 0, 1501, 1501, 7, 2999, 1500])
    cols = np.array([0, 2999, 17, 17, 7, 0, 1])
    values = np.arange(len(rows), dtype=np.int32)
    a.vindex[rows, cols] = values
    expected[rows, cols] = values
    np.testing.assert_array_equal(a.vindex[rows, cols], expected[rows, cols])
    probe = (np.array([0, 1501, 2999, 5, 1500]), np.array([2999, 17, 0, 5, 1]))
    np.testing.assert_array_equal(a.vindex[probe], expected[probe])
    assert a.nchunks_initialized == len(set(zip(rows.tolist(), cols.tolist())))


# -- a[...] with index arrays: numpy's layout ------------------------------------------------------


def _int_or_slice(n: int):
    """An int or a slice (steps 1, 2, -1) into an axis of length ``n``."""
    return st.one_of(st.integers(-n, n - 1),
                     st.builds(slice, st.one_of(st.none(), st.integers(-n, n)), st.none(),
                               st.sampled_from([None, 2, -1])))


def _array_on(layout: str, shape, chunks, order: str = "C"):
    """An int32 array of ``shape`` filled with its C-order element numbers, chunked as
    ``layout`` says (``chunks``: regular chunks, rectilinear edges alternating c and c + 1,
    or shards of half-size inner chunks), and that data."""
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    grid: dict = {"chunks": chunks}
    if layout == "rectilinear":
        grid = {"chunks": [[c + i % 2 for i in range(n)] for c, n in zip(chunks, shape)]}
    elif layout == "sharded":
        grid = {"chunks": tuple(max(c // 2, 1) for c in chunks), "shards": chunks}
    a = zarr3c.create_array("memory://", shape=shape, dtype="int32", fill_value=-1,
                            order=order, **grid)
    a[...] = data
    return a, data


def _read_and_write_as_numpy(a, data: np.ndarray, key) -> np.ndarray:
    """``a[key]`` equals ``data[key]``; so does the array after ``a[key] = value``.  Returns
    the value written."""
    expected = data[key]
    got = a[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    value = np.arange(expected.size, dtype="int32").reshape(expected.shape) + 1000
    a[key] = value
    data[key] = value
    np.testing.assert_array_equal(a[...], data)
    return value


@st.composite
def one_array_key(draw):
    """A key with one index array (1-d or 2-d integers, or a 1-d mask) and ints, slices,
    ``...`` and ``None`` elsewhere: the forms a[...] reads orthogonally."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    at = draw(st.integers(0, ndim - 1))
    key: list = []
    for axis, n in enumerate(shape):
        if axis == at:
            kind = draw(st.sampled_from(["ints", "2d", "bools"]))
            if kind == "bools":
                key.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
            else:
                size = draw(st.integers(0, 5))
                idx = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=size,
                                             max_size=size)), dtype=np.int64)
                key.append(idx.reshape(-1, 1) if kind == "2d" else idx)
        else:
            key.append(draw(_int_or_slice(n)))
    for _ in range(draw(st.integers(0, 2))):
        key.insert(draw(st.integers(0, len(key))), None)
    if draw(st.booleans()):  # some run of whole axes as ...
        whole = [i for i, k in enumerate(key) if isinstance(k, slice) and k == slice(None)]
        if whole:
            key[whole[0]] = Ellipsis
    return shape, chunks, tuple(key)


@SETTINGS
@given(one_array_key(), st.sampled_from(["C", "F"]),
       st.sampled_from(["regular", "rectilinear", "sharded"]))
def test_getitem_one_index_array_matches_numpy(case, order, layout) -> None:
    """numpy's rule: the index array's axes replace its axis, or come first when integers
    and the array are separated by a slice, ``...`` or ``None`` (``a[0, :, [1, 2]]``)."""
    shape, chunks, key = case
    a, data = _array_on(layout, shape, chunks, order)
    value = _read_and_write_as_numpy(a, data, key)
    if value.ndim > 1:  # a value broadcast along numpy's first axis
        a[key] = value[:1]
        data[key] = value[:1]
        np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(
    "key",
    [
        (0, slice(None), [1, 4]),
        (np.int64(0), slice(None), [3, 1, 3]),
        (0, Ellipsis, [1, 2]),
        (1, None, [0, 3]),
        (slice(None), 2, np.array([True, False, True, True, False])),
        np.array([True, False, True]),
        [True, False, True],
        np.array([[0, 2], [1, 1]]),
        (slice(1, None), np.array([[3], [0]]), 4),
        (np.array([True, False, True]), [1, 3], 2),
        # several index arrays among slices (zarr-python refuses them): numpy's points
        ([1, 2], [0, 1], slice(None)),
        ([True, True, False], [0, 3], slice(1, 4)),
        (slice(None), [0, 1], [1, 2]),
        ([0, 2], slice(None), [[1], [4]]),
        (Ellipsis, [0, 1], None, [1, 2]),
        # a 1-tuple is its element (numpy); boolean arrays over some but not all axes
        (np.arange(60).reshape(3, 4, 5) % 3 == 0,),
        (np.arange(12).reshape(3, 4) % 5 < 2),
        (1, np.arange(20).reshape(4, 5) % 3 == 1),
        (np.array([[True, False, True, False]] * 3), slice(1, 4)),
        (Ellipsis, np.arange(20).reshape(4, 5) > 12),
    ],
    ids=["int-slice-array", "npint-slice-array", "int-ellipsis-array", "int-none-array",
         "slice-int-mask", "mask-first-axis", "bool-list-first-axis", "2d-ints",
         "slice-2d-int", "bools-with-ints", "arrays-then-slice", "mask-and-ints",
         "slice-then-arrays", "apart-2d", "none-apart", "mask-in-1-tuple",
         "mask-of-leading-axes", "int-then-2d-mask", "2d-mask-then-slice",
         "ellipsis-then-2d-mask"],
)
def test_getitem_index_arrays_numpy_forms(key) -> None:
    a, data = _array((3, 4, 5), (2, 3, 2))
    a[...] = data
    expected = data[key]
    np.testing.assert_array_equal(a[key], expected)
    assert a[key].shape == expected.shape
    a[key] = -expected
    data[key] = -expected
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(ShapeMismatchError):
        a[key] = np.zeros(expected.shape + (2,), dtype="int32")
    np.testing.assert_array_equal(a[...], data)


@st.composite
def several_arrays_key(draw):
    """A key with two or three index arrays (integers, 1-d masks) broadcast together among
    ints, slices, ``...`` and ``None``, or stopping short of the last axes: the forms
    zarr-python refuses and numpy reads as broadcast points."""
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    arrays = set(draw(st.lists(st.integers(0, ndim - 1), min_size=2, max_size=3,
                               unique=True)))
    size = draw(st.sampled_from([(0,), (1,), (3,), (2, 3)]))  # broadcast against (3,)
    key: list = []
    for axis, n in enumerate(shape):
        if axis in arrays:
            if len(size) == 1 and draw(st.integers(0, 3)) == 0:
                key.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
                continue
            shape_i = draw(st.sampled_from([size, size[-1:]]))
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(shape_i)),
                                max_size=int(np.prod(shape_i))))
            key.append(np.array(idx, dtype=np.int64).reshape(shape_i))
        else:
            key.append(draw(_int_or_slice(n)))
    for _ in range(draw(st.integers(0, 1))):
        key.insert(draw(st.integers(0, len(key))), None)
    if draw(st.booleans()):  # the trailing axes left out
        while key and not _is_array(key[-1]):
            key.pop()
    return shape, chunks, tuple(key)


def _is_array(k) -> bool:
    return isinstance(k, np.ndarray)


@SETTINGS
@given(several_arrays_key(), st.sampled_from(["regular", "rectilinear", "sharded"]))
def test_getitem_several_index_arrays_with_slices_match_numpy(case, layout) -> None:
    """numpy's rule, where zarr-python refuses: the arrays broadcast together, their axes
    where the first array stands (or first when the arrays are apart), the sliced axes
    kept; writes too, a repeated point taking the last value as numpy does."""
    shape, chunks, key = case
    a, data = _array_on(layout, shape, chunks)
    try:
        data[key]
    except IndexError:  # arrays that do not broadcast, masks and ints mixed badly
        with pytest.raises(IndexingError):
            a[key]
        return
    _read_and_write_as_numpy(a, data, key)
    a[key] = 7  # a scalar
    data[key] = 7
    np.testing.assert_array_equal(a[...], data)


def test_getitem_several_index_arrays_refuses_what_numpy_refuses() -> None:
    a, data = _array((3, 4, 5), (2, 3, 2))
    a[...] = data
    for key, error in [(([True, True, False], [False, True, False, True], 0, 1), IndexingError),
                       (([0, 1], [0, 1, 2], slice(None)), IndexingError),
                       (([0, 3], [0, 1], slice(None)), BoundsCheckError),
                       ((np.array([0.5, 1]), [0, 1], slice(None)), IndexingError)]:
        with pytest.raises(error) as info:
            a[key]
        assert isinstance(info.value, IndexError)
        with pytest.raises(error):
            a[key] = 0
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("compressors", ["auto", None])
def test_zero_dimensional_coordinate_and_mask_selections(compressors) -> None:
    # vindex[()] and masks of a 0-d array select its one element (a 0-d mask: np.nonzero
    # refuses those, and vindex[()] used to reshape an empty read into ()).
    a = zarr3c.create_array("memory://", shape=(), dtype="int16", chunks=(), fill_value=3,
                            compressors=compressors)
    data = np.array(3, dtype="int16")
    assert a.vindex[()].shape == () and a.vindex[()] == 3
    for mask in (np.array(True), np.array(False)):
        np.testing.assert_array_equal(a[mask], data[mask])
        np.testing.assert_array_equal(a.get_mask_selection(mask), data[mask])
    a.vindex[()] = 5
    assert a[()] == 5
    a[np.array(True)] = [7]
    a.set_mask_selection(np.array(False), 9)
    assert a[()] == 7
    with pytest.raises(BoundsCheckError):
        a[np.array([True])]


@pytest.mark.parametrize(
    ("mode", "key"),
    [("basic", (0, slice(None))), ("basic", (slice(1, 3), slice(None, None, -2))),
     ("oindex", ([2, 0, 2], slice(1, 5))), ("vindex", ([0, 5, 1], [6, 0, 1])),
     ("basic", Ellipsis)],
    ids=["row", "strided", "oindex", "vindex", "all"],
)
def test_writes_drop_leading_unit_axes_of_the_value_as_numpy(mode, key) -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    setter = {"basic": a, "oindex": a.oindex, "vindex": a.vindex}[mode]
    target = data[np.ix_(*[np.r_[k] for k in key])] if mode == "oindex" else data[key]
    value = (np.arange(target.size, dtype="int32") + 100).reshape((1, 1) + target.shape)
    setter[key] = value
    if mode == "oindex":
        data[np.ix_(*[np.r_[k] for k in key])] = value
    else:
        data[key] = value
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(ShapeMismatchError):  # only length-1 axes go
        setter[key] = np.zeros((2,) + target.shape, dtype="int32")
    np.testing.assert_array_equal(a[...], data)


def test_one_element_writes_refuse_sequences_as_numpy() -> None:
    # numpy's scalar assignment (every axis an integer, no ...) takes no sequence, not even
    # one of a single element; a[...] of a 0-d array is an array view and broadcasts.
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    for value in ([5], np.ones(1, "int32"), np.ones((1, 1), "int32")):
        with pytest.raises(ShapeMismatchError):
            a[2, 3] = value
        with pytest.raises((ValueError, TypeError)):  # numpy's, by value type
            data[2, 3] = value
    np.testing.assert_array_equal(a[...], data)
    a[2, 3] = np.int32(-4)
    a[2:3, 3] = [-5]
    data[2, 3] = -5
    np.testing.assert_array_equal(a[...], data)
    z = zarr3c.create_array("memory://", shape=(), dtype="int32", chunks=())
    z[...] = np.full((1, 1), 6)
    assert z[()] == 6
    with pytest.raises(ShapeMismatchError):
        z[()] = [7]
    assert z[()] == 6


@pytest.mark.parametrize(
    ("mode", "key", "error", "axis"),
    [
        ("getitem", [[1, 2], [3]], IndexingError, 0),
        ("getitem", (None, 0, None, [1.5]), IndexingError, 1),
        ("vindex", (2**64, [0]), BoundsCheckError, 0),
        ("vindex", ([0], -2**64), BoundsCheckError, 1),
        ("blocks", (slice(None, None, 1.0),), IndexingError, 0),
        ("blocks", (0, slice(0, 1, 2)), IndexingError, 1),
    ],
    ids=["ragged-list", "float-after-none", "vindex-huge-int", "vindex-huge-negative",
         "block-float-step", "block-step-2"],
)
def test_odd_keys_raise_index_errors_naming_the_axis(mode, key, error, axis) -> None:
    # Each used to escape as numpy's ValueError/OverflowError or Python's TypeError, or
    # named the wrong axis.
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    getter = {"vindex": a.vindex, "getitem": a, "blocks": a.blocks}[mode]
    with pytest.raises(error, match=f"axis {axis}") as info:
        getter[key]
    assert isinstance(info.value, IndexError)
    with pytest.raises(error):
        getter[key] = 1
    np.testing.assert_array_equal(a[...], data)


def test_slice_steps_beyond_int64_take_one_element_as_numpy() -> None:
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    for key in [(slice(None, None, 2**64), slice(1, None, -2**70)), np.s_[3::-2**63]]:
        np.testing.assert_array_equal(a[key], data[key])
        np.testing.assert_array_equal(a.oindex[key], data[key])
        a[key] = -1
        data[key] = -1
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize(
    ("mask", "error"),
    [(np.array([1, 2]), IndexingError), ([0, 1], IndexingError),
     (np.ones((6,), bool), BoundsCheckError), (np.ones((6, 7, 1), bool), BoundsCheckError)],
    ids=["int-array", "int-list", "1d-mask", "3d-mask"],
)
def test_mask_selection_takes_only_a_mask_of_the_arrays_shape(mask, error) -> None:
    # get/set_mask_selection read integer arrays as coordinates before; zarr-python refuses.
    a, data = _array((6, 7), (4, 3))
    a[...] = data
    with pytest.raises(error) as info:
        a.get_mask_selection(mask)
    assert isinstance(info.value, IndexError)
    with pytest.raises(error):
        a.set_mask_selection(mask, 0)
    np.testing.assert_array_equal(a[...], data)


@st.composite
def bool_scalar_key(draw):
    """A key with one to three boolean scalars (``True``, ``False``, ``np.bool_``, 0-d
    arrays) among ints, slices, index arrays, ``...`` and ``None``: numpy reads each as a
    new axis of length 1 indexed by its ``nonzero()``."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    key: list = []
    for n in shape:
        kind = draw(st.sampled_from(["int_or_slice", "slice", "array"]))
        if kind == "array":
            key.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)),
                                dtype=np.int64))
        elif kind == "slice":
            key.append(slice(None))
        else:
            key.append(draw(_int_or_slice(n)))
    bools = st.sampled_from([True, False, np.True_, np.False_, np.array(True), np.array(False)])
    for _ in range(draw(st.integers(1, 3))):
        key.insert(draw(st.integers(0, len(key))), draw(bools))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), draw(st.sampled_from([None, Ellipsis])))
    if draw(st.booleans()):  # the trailing axes left out
        while key and not isinstance(key[-1], bool | np.bool_ | np.ndarray):
            key.pop()
    return shape, chunks, tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]


@SETTINGS
@given(bool_scalar_key(), st.sampled_from(["regular", "rectilinear", "sharded"]))
def test_getitem_boolean_scalars_match_numpy(case, layout) -> None:
    """``a[True]``, ``a[..., False]``, ``a[0, True, [1, 2]]``: reads and writes as numpy."""
    shape, chunks, key = case
    a, data = _array_on(layout, shape, chunks)
    try:
        data[key]
    except IndexError:  # e.g. an index array with several others apart
        with pytest.raises(IndexingError):
            a[key]
        return
    _read_and_write_as_numpy(a, data, key)


@pytest.mark.parametrize("key", [True, False, (True, True), (Ellipsis, False), (None, True),
                                 np.array(True), (np.False_, None)])
def test_getitem_boolean_scalars_of_a_0d_array_match_numpy(key) -> None:
    a = zarr3c.create_array("memory://", shape=(), dtype="int32", chunks=(), fill_value=3)
    data = np.array(3, dtype="int32")
    _read_and_write_as_numpy(a, data, key)
    with pytest.raises(ShapeMismatchError):
        a[key] = np.zeros((2, 3), dtype="int32")
    np.testing.assert_array_equal(a[...], data)


def test_a_plain_true_is_read_without_coordinates(monkeypatch) -> None:
    """``a[..., True]`` among slices is the basic read of ``a[..., None]``: no coordinate
    array of the result's size."""
    from zarr3c.array import core as array_module

    a, data = _array((6, 7), (4, 3))
    a[...] = data
    monkeypatch.setattr(array_module, "numpy_advanced_coordinates",
                        lambda *args: pytest.fail("coordinates made"))
    np.testing.assert_array_equal(a[..., True], data[..., True])
    np.testing.assert_array_equal(a[1:3, True, :], data[1:3, True, :])
    a[True] = -data[True]
    np.testing.assert_array_equal(a[...], -data)


@pytest.mark.parametrize("mode", ["getitem", "vindex"])
def test_index_arrays_out_of_bounds_that_select_nothing_are_read_as_numpy(mode) -> None:
    """numpy checks the bounds of index arrays only when they select something: ``x[[5],
    []]`` is empty; an integer out of bounds is refused still."""
    a, data = _array((3, 3), (2, 2))
    a[...] = data
    getter = {"vindex": a.vindex, "getitem": a}[mode]
    for key in [([5], []), ([[5]], np.zeros((2, 0), int)), ([-4], [])]:
        expected = data[key]
        assert getter[key].shape == expected.shape
        getter[key] = 1
    np.testing.assert_array_equal(a[...], data)
    for key in [(5, []), ([5], [1, 2])]:
        with pytest.raises(BoundsCheckError):
            getter[key]
