"""Arrays end to end: numpy is the oracle for every read and write."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarr3c
from zarr3c.errors import (
    ArrayNotFoundError,
    BoundsCheckError,
    ChunkDecodeError,
    ContainsArrayError,
    ContainsGroupError,
    MetadataError,
    ReadOnlyError,
    ShapeMismatchError,
    UnknownExtensionError,
    ValueConversionError,
    ZarrError,
)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _data(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    return np.asarray(_random(shape, dtype, seed))


def _random(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)


def _slice(length: int) -> st.SearchStrategy[slice]:
    bound = st.one_of(st.none(), st.integers(-length - 2, length + 2))
    step = st.one_of(st.none(), st.integers(-4, 4).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@st.composite
def array_case(draw: st.DrawFn) -> tuple:
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 12)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    key = []
    for n in shape:
        if n > 0 and draw(st.booleans()) and draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(_slice(n)))
    dtype = draw(st.sampled_from(["uint8", "int16", "float32", "float64", "complex64", "bool"]))
    return shape, chunks, tuple(key), dtype


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_case(), st.sampled_from([None, "auto"]))
def test_read_matches_numpy(case: tuple, compressors: object) -> None:
    shape, chunks, key, dtype = case
    data = _data(shape, dtype)
    a = zarr3c.create_array("memory://", shape=shape, dtype=dtype, chunks=chunks,
                            compressors=compressors)
    a[...] = data
    got = a[key]
    expected = data[key]
    assert np.shape(got) == expected.shape
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_case(), st.booleans())
def test_write_matches_numpy(case: tuple, scalar: bool) -> None:
    shape, chunks, key, dtype = case
    base = _data(shape, dtype, seed=1)
    a = zarr3c.create_array("memory://", shape=shape, dtype=dtype, chunks=chunks, fill_value=0)
    a[...] = base
    expected = base.copy()
    if scalar:
        value = _data((), dtype, seed=2)
    else:
        value = _data(expected[key].shape, dtype, seed=2)
    expected[key] = value
    a[key] = value
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_round_trip(store: zarr3c.Store, dtype: str) -> None:
    data = _data((7, 5), dtype)
    a = zarr3c.create_array(store, "x", shape=data.shape, dtype=dtype, chunks=(3, 2))
    a[...] = data
    b = zarr3c.open_array(store, "x")
    assert b.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(b[...], data)


def test_raw_bits_dtype(store: zarr3c.Store) -> None:
    data = np.frombuffer(bytes(range(30)), dtype="V3").reshape(5, 2)
    a = zarr3c.create_array(store, "r", shape=(5, 2), dtype="V3", chunks=(2, 2))
    assert a.metadata.to_dict()["data_type"] == {"name": "raw_bytes",
                                                 "configuration": {"length_bytes": 3}}
    a[...] = data
    np.testing.assert_array_equal(zarr3c.open_array(store, "r")[...], data)


def test_missing_chunks_read_fill_value(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "f", shape=(10, 10), dtype="float32", chunks=(4, 4),
                            fill_value=np.nan)
    a[0:4, 0:4] = 1.0
    expected = np.full((10, 10), np.nan, dtype="float32")
    expected[0:4, 0:4] = 1.0
    np.testing.assert_array_equal(a[...], expected)
    assert a.nchunks == 9
    assert a.nchunks_initialized == 1


def test_fill_chunks_not_written_and_erased(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "e", shape=(8,), dtype="int32", chunks=(4,), fill_value=5)
    a[:] = 5
    assert a.nchunks_initialized == 0
    a[:] = np.arange(8)
    assert a.nchunks_initialized == 2
    a[0:4] = 5  # back to the fill value: erased
    assert a.nchunks_initialized == 1
    assert not store.exists("e/c/0")
    np.testing.assert_array_equal(a[...], [5, 5, 5, 5, 4, 5, 6, 7])


def test_write_empty_chunks_keeps_them(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "w", shape=(8,), dtype="int32", chunks=(4,),
                            write_empty_chunks=True)
    a[:] = 0
    assert a.nchunks_initialized == 2


def test_negative_zero_is_not_the_fill_value(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "z", shape=(4,), dtype="float64", chunks=(4,), fill_value=0.0)
    a[:] = -0.0
    assert a.nchunks_initialized == 1
    assert np.signbit(a[...]).all()


def test_edge_chunks_are_full_size_with_fill(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "edge", shape=(5,), dtype="uint8", chunks=(4,),
                            fill_value=9, compressors=None)
    a[:] = 1
    raw = store.get("edge/c/1")
    assert bytes(raw) == bytes([1, 9, 9, 9])


def test_partial_chunk_write_keeps_neighbours(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "p", shape=(6, 6), dtype="int16", chunks=(4, 4))
    a[...] = np.arange(36).reshape(6, 6)
    a[1:3, 2:5] = -1
    expected = np.arange(36, dtype="int16").reshape(6, 6)
    expected[1:3, 2:5] = -1
    np.testing.assert_array_equal(zarr3c.open_array(store, "p")[...], expected)


def test_zero_dimensional(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "s", shape=(), dtype="float64", chunks=())
    assert a[...].shape == ()
    a[...] = 3.5
    assert a[()] == 3.5
    assert isinstance(a[()], np.floating)
    assert store.exists("s/c")


def test_scalar_reads_are_numpy_scalars(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "n", shape=(3, 3), dtype="int32", chunks=(2, 2))
    a[...] = np.arange(9).reshape(3, 3)
    v = a[2, 1]
    assert isinstance(v, np.int32) and v == 7
    assert a[2, ...].shape == (3,)
    assert a[None, 1].shape == (1, 3)


def test_chunk_key_encodings(store: zarr3c.Store) -> None:
    for name, enc, key in [
        ("d1", None, "d1/c/1/0"),
        ("d2", {"name": "default", "configuration": {"separator": "."}}, "d2/c.1.0"),
        ("v2", {"name": "v2", "configuration": {"separator": "."}}, "v2/1.0"),
        ("v2s", {"name": "v2", "configuration": {"separator": "/"}}, "v2s/1/0"),
        # zarr-python's flat form of the argument
        ("v2f", {"name": "v2", "separator": "."}, "v2f/1.0"),
        ("d2f", {"name": "default", "separator": "."}, "d2f/c.1.0"),
    ]:
        a = zarr3c.create_array(store, name, shape=(4, 4), dtype="uint8", chunks=(2, 4),
                                chunk_key_encoding=enc)
        a[2:, :] = 1
        assert store.exists(key), key
        assert a.nchunks_initialized == 1
        np.testing.assert_array_equal(zarr3c.open_array(store, name)[2:, :], 1)


def test_attrs_persist(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "a", shape=(2,), dtype="uint8", attributes={"x": 1})
    a.attrs["y"] = [1, 2]
    a.attrs.update(z="s")
    del a.attrs["x"]
    b = zarr3c.open_array(store, "a")
    assert b.attrs.asdict() == {"y": [1, 2], "z": "s"}
    with pytest.raises(MetadataError, match="attributes"):
        a.attrs["bad"] = object()
    assert zarr3c.open_array(store, "a").attrs.asdict() == {"y": [1, 2], "z": "s"}


def test_dimension_names_and_metadata_round_trip(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "d", shape=(2, 3), dtype="float32",
                            dimension_names=["y", None], fill_value="NaN")
    doc = a.metadata.to_dict()
    assert doc["dimension_names"] == ["y", None]
    assert doc["fill_value"] == "NaN"
    assert type(a.metadata).from_dict(doc) == a.metadata


def test_resize_shrink_and_grow(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "r", shape=(10, 10), dtype="int32", chunks=(4, 4),
                            fill_value=-1)
    a[...] = np.arange(100).reshape(10, 10)
    a.resize((5, 10))
    assert a.shape == (5, 10)
    assert not store.exists("r/c/2/0")  # wholly outside: erased
    a.resize(10, 10)
    expected = np.full((10, 10), -1, dtype="int32")
    expected[:5] = np.arange(50).reshape(5, 10)
    np.testing.assert_array_equal(a[...], expected)  # no stale data reappears
    np.testing.assert_array_equal(zarr3c.open_array(store, "r")[...], expected)


def test_append(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "ap", shape=(3, 2), dtype="int64", chunks=(2, 2))
    a[...] = np.arange(6).reshape(3, 2)
    assert a.append(np.ones((4, 2), dtype="int64")) == (7, 2)
    np.testing.assert_array_equal(a[...], np.vstack([np.arange(6).reshape(3, 2),
                                                     np.ones((4, 2))]))
    with pytest.raises(ShapeMismatchError):
        a.append(np.ones((1, 3)))


def test_properties(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "g/p", shape=(10, 7), dtype="uint16", chunks=(4, 4),
                            fill_value=3)
    assert (a.shape, a.ndim, a.size, a.nbytes) == ((10, 7), 2, 70, 140)
    assert a.chunks == (4, 4) and a.shards is None
    assert a.fill_value == 3 and a.dtype == np.uint16
    assert a.nchunks == 6 and a.nchunks_initialized == 0
    assert a.path == "g/p" and a.name == "/g/p" and a.order == "C"
    assert len(a) == 10
    np.testing.assert_array_equal(np.asarray(a), np.full((10, 7), 3))


def test_huge_shape_is_exact() -> None:
    a = zarr3c.create_array("memory://", shape=(2**62, 2**62, 12), dtype="uint8",
                            chunks=(1, 4, 12))
    assert a.size == 2**124 * 12
    assert a.nbytes == 2**124 * 12
    a[2**62 - 1, 2**62 - 1, 11] = 7
    assert a[2**62 - 1, 2**62 - 1, 11] == 7
    assert a[0, 0, :].tolist() == [0] * 12


def test_order_f_returns_fortran_arrays() -> None:
    a = zarr3c.create_array("memory://", shape=(3, 4), dtype="int32", order="F")
    a[...] = np.arange(12).reshape(3, 4)
    out = a[...]
    assert out.flags.f_contiguous
    np.testing.assert_array_equal(out, np.arange(12).reshape(3, 4))


def test_pickle_round_trip(tmp_path) -> None:
    a = zarr3c.create_array(tmp_path / "p.zarr", shape=(4,), dtype="int8")
    a[:] = [1, 2, 3, 4]
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b[...], [1, 2, 3, 4])
    assert b == a


# -- bad input --------------------------------------------------------------------------------


def test_wrong_shape_write_refused(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "w", shape=(4, 4), dtype="int32", chunks=(2, 2))
    a[...] = 1
    for value in [np.ones((3, 4)), np.ones((4, 4, 1)), np.ones(5)]:
        with pytest.raises(ShapeMismatchError) as info:
            a[...] = value
        assert isinstance(info.value, ValueError)
    np.testing.assert_array_equal(a[...], 1)


@pytest.mark.parametrize(
    ("dtype", "value", "numpy_error"),
    [("int8", 300, OverflowError), ("int8", [1, -129], OverflowError),
     ("uint16", -1, OverflowError), ("int64", float("nan"), ValueError),
     ("int32", [1.0, float("nan")], ValueError), ("float32", 1 + 2j, TypeError),
     ("int64", None, TypeError), ("float64", "abc", ValueError)],
    ids=["int8-300", "int8-list", "uint16-negative", "nan-int", "nan-list", "complex-float",
         "none-int", "string-float"],
)
def test_values_numpy_refuses_to_convert_are_refused(store: zarr3c.Store, dtype, value,
                                                     numpy_error) -> None:
    # As numpy assignment: out-of-range Python integers are not wrapped, NaN does not become
    # INT64_MIN, complex does not lose its imaginary part; the error is also numpy's builtin.
    a = zarr3c.create_array(store, "c", shape=(4,), dtype=dtype, chunks=(3,))
    a[...] = np.ones(4, dtype=dtype)
    with pytest.raises(numpy_error):
        np.ones(4, dtype=dtype)[1:3] = value
    for key in (slice(1, 3), [1, 2]):
        with pytest.raises(ValueConversionError) as info:
            a[key] = value
        assert isinstance(info.value, numpy_error)
        with pytest.raises(ValueConversionError):
            a.vindex[[1, 2]] = value
    np.testing.assert_array_equal(a[...], np.ones(4, dtype=dtype))
    a[1:3] = np.array([300, 2])  # arrays are cast as numpy casts them (unsafe)
    expected = np.ones(4, dtype=dtype)
    expected[1:3] = np.array([300, 2])
    np.testing.assert_array_equal(a[...], expected)


def test_out_of_bounds(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "o", shape=(4, 4), dtype="int32")
    with pytest.raises(BoundsCheckError, match="axis 0"):
        a[4, 0]
    with pytest.raises(IndexError):
        a[0, -5] = 1


def test_read_only_refuses_writes(store: zarr3c.Store) -> None:
    zarr3c.create_array(store, "ro", shape=(4,), dtype="int32")
    a = zarr3c.open_array(store, "ro", mode="r")
    for op in (lambda: a.__setitem__(0, 1), lambda: a.resize(5),
               lambda: a.attrs.__setitem__("k", 1)):
        with pytest.raises(ReadOnlyError):
            op()
    assert a.nchunks_initialized == 0


def test_open_missing_and_wrong_kind(store: zarr3c.Store) -> None:
    with pytest.raises(ArrayNotFoundError) as info:
        zarr3c.open_array(store, "nope")
    assert isinstance(info.value, FileNotFoundError)
    zarr3c.create_group(store, "grp")
    with pytest.raises(ContainsGroupError):
        zarr3c.open_array(store, "grp")


def test_create_existing(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "c", shape=(4,), dtype="int32")
    a[:] = 1
    with pytest.raises(ContainsArrayError):
        zarr3c.create_array(store, "c", shape=(4,), dtype="int32")
    np.testing.assert_array_equal(zarr3c.open_array(store, "c")[...], 1)
    b = zarr3c.create_array(store, "c", shape=(2,), dtype="int8", overwrite=True)
    assert b.shape == (2,) and b.nchunks_initialized == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"chunks": (0,)}, MetadataError, "chunk_shape"),
        ({"chunks": (-1,)}, MetadataError, "chunk_shape"),
        ({"chunks": (2, 2)}, MetadataError, "chunk"),
        ({"dtype": "object"}, MetadataError, "no Zarr v3 core data type"),
        ({"fill_value": 300, "dtype": "uint8"}, MetadataError, "fill"),
        ({"compressors": [{"name": "nope"}]}, UnknownExtensionError, "nope"),
        ({"codecs": [{"name": "gzip", "configuration": {"level": 1}}]}, MetadataError, "codecs"),
        ({"compressors": [{"name": "gzip", "configuration": {"level": 12}}]}, MetadataError,
         "level"),
        ({"filters": [{"name": "transpose", "configuration": {"order": [0, 0]}}]},
         MetadataError, "order"),
    ],
    ids=["zero-chunk", "negative-chunk", "rank-mismatch", "object-dtype", "fill-range",
         "unknown-codec", "no-serializer", "gzip-level", "bad-transpose"],
)
def test_create_refuses_bad_arguments(store: zarr3c.Store, kwargs: dict, error: type,
                                      match: str) -> None:
    args = {"shape": (4,), "dtype": "int32", "chunks": (2,), **kwargs}
    with pytest.raises(error, match=match):
        zarr3c.create_array(store, "bad", **args)
    assert not store.exists("bad/zarr.json")


def test_corrupt_chunk_names_key(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "cc", shape=(8,), dtype="int32", chunks=(4,))
    a[:] = np.arange(8)
    store.set("cc/c/1", b"not zstd at all")
    with pytest.raises(ChunkDecodeError, match="cc/c/1"):
        a[...]
    np.testing.assert_array_equal(a[:4], np.arange(4))


def test_truncated_uncompressed_chunk(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "t", shape=(8,), dtype="int32", chunks=(4,), compressors=None)
    a[:] = 1
    store.set("t/c/0", bytes(store.get("t/c/0"))[:-1])
    with pytest.raises(ChunkDecodeError, match="t/c/0"):
        a[0]


def test_checksum_mismatch(store: zarr3c.Store) -> None:
    a = zarr3c.create_array(store, "k", shape=(8,), dtype="int32", chunks=(8,),
                            compressors=[{"name": "crc32c"}])
    a[:] = 1
    raw = bytearray(store.get("k/c/0"))
    raw[3] ^= 0x10
    store.set("k/c/0", bytes(raw))
    with pytest.raises(ChunkDecodeError, match="k/c/0"):
        a[...]


@pytest.mark.parametrize(
    "doc",
    [b"{not json", b"[]", b'{"zarr_format": 3, "node_type": "array"}',
     b'{"zarr_format": 2, "node_type": "array"}'],
    ids=["not-json", "not-object", "missing-fields", "zarr-format-2"],
)
def test_malformed_metadata_names_key(store: zarr3c.Store, doc: bytes) -> None:
    store.set("m/zarr.json", doc)
    with pytest.raises(ZarrError, match="m/zarr.json") as info:
        zarr3c.open_array(store, "m")
    assert isinstance(info.value, ValueError)


def test_resize_through_a_stale_object_keeps_what_others_changed(store: zarr3c.Store) -> None:
    """resize starts from the document stored now: attributes set and a shape grown through
    another Array object (or since a consolidated snapshot) are neither wiped nor misread."""
    a = zarr3c.create_array(store, "r", shape=(10,), dtype="int32", chunks=(4,), fill_value=-1)
    a[:] = np.arange(10)
    other = zarr3c.open_array(store, "r", mode="r+")
    other.attrs["units"] = "K"
    other.resize(14)
    other[10:14] = [10, 11, 12, 13]
    a.resize(12)  # a still believes the shape is (10,) and there are no attributes
    assert a.shape == (12,) and a.attrs["units"] == "K"
    fresh = zarr3c.open_array(store, "r", mode="r")
    assert fresh.attrs["units"] == "K"
    np.testing.assert_array_equal(fresh[...], np.arange(12))
