"""The ``transpose`` array -> array codec (the C/F layout conversion)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.base import ChunkSpec
from zarr3c.codecs.transpose import TransposeCodec
from zarr3c.errors import MetadataError

DTYPES = ["bool", "int8", "uint16", "int32", "float64", "complex64", "complex128", "V3"]

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def random_array(seed: int, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    if dt == np.dtype(bool):
        raw &= 1
    return raw.view(dt).reshape(shape)


@st.composite
def shape_and_order(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int]]:
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    order = draw(st.permutations(list(range(ndim))))
    return shape, list(order)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=25, deadline=None)
@given(case=shape_and_order(), seed=st.integers(0, 2**32 - 1))
def test_matches_numpy_transpose(dtype: str, case: tuple, seed: int) -> None:
    shape, order = case
    a = random_array(seed, dtype, shape)
    codec = TransposeCodec(order=tuple(order))
    spec = ChunkSpec(shape=shape, dtype=a.dtype, fill_value=np.zeros((), a.dtype))
    encoded = codec.encode(a, spec)
    expected = a.transpose(order).copy()  # C order; ascontiguousarray would make 0-d 1-d
    assert encoded.shape == expected.shape
    assert encoded.tobytes() == expected.tobytes()
    assert codec.resolve(spec).shape == expected.shape
    decoded = codec.decode(encoded, spec)
    assert decoded.shape == shape and decoded.flags.c_contiguous
    assert decoded.tobytes() == a.tobytes()

    # through a pipeline: the stored bytes are the transposed array's C-order bytes
    p = CodecPipeline.from_codecs(
        [{"name": "transpose", "configuration": {"order": order}}, LE], dtype=dtype
    )
    stored = bytes(p.encode(a))
    assert stored == expected.astype(expected.dtype.newbyteorder("<")).tobytes()
    assert p.decode(stored, shape).tobytes() == a.tobytes()


@pytest.mark.parametrize(
    "legacy,order", [("C", [0, 1, 2]), ("F", [2, 1, 0])], ids=["C-is-identity", "F-reverses"]
)
def test_legacy_orders(legacy: str, order: list[int]) -> None:
    a = random_array(1, "uint16", (2, 3, 4))
    codecs = [{"name": "transpose", "configuration": {"order": legacy}}, LE]
    p = CodecPipeline.from_codecs(codecs, dtype="uint16")
    assert bytes(p.encode(a)) == np.ascontiguousarray(a.transpose(order)).tobytes()
    assert p.to_dicts() == codecs  # written back as read
    np.testing.assert_array_equal(p.decode(p.encode(a), a.shape), a)


def test_f_order_is_fortran_layout() -> None:
    a = np.arange(24, dtype="<i4").reshape(2, 3, 4)
    p = CodecPipeline.from_codecs(
        [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE], dtype="int32"
    )
    assert bytes(p.encode(a)) == a.tobytes(order="F")


def test_to_dict_writes_a_list() -> None:
    codec = TransposeCodec.from_config({"order": (1, 0)}, path="codecs[0]")
    assert codec.to_dict() == {"name": "transpose", "configuration": {"order": [1, 0]}}


@pytest.mark.parametrize(
    "configuration,match",
    [
        ({"order": [0, 0]}, r"codecs\[0\]\.configuration\.order: has duplicate axes"),
        ({"order": [1, 2]}, r"codecs\[0\]\.configuration\.order: must be a permutation"),
        ({"order": [-1, 0]}, r"codecs\[0\]\.configuration\.order: must be a permutation"),
        ({"order": [True, False]}, r"codecs\[0\]\.configuration\.order: entry 0 must be an integer"),
        ({"order": [0.0, 1]}, r"codecs\[0\]\.configuration\.order: entry 0 must be an integer"),
        ({"order": "X"}, r"codecs\[0\]\.configuration\.order: must be a list"),
        ({"order": 1}, r"codecs\[0\]\.configuration\.order: must be a list"),
        ({}, r"codecs\[0\]\.configuration\.order: is required"),
        (None, r"codecs\[0\]\.configuration\.order: is required"),
        ({"order": [1, 0], "x": 1}, r"codecs\[0\]\.configuration\.x: unknown"),
    ],
    ids=[
        "duplicate", "out-of-range", "negative", "bools", "float", "bad-string", "not-a-list",
        "missing", "no-configuration", "unknown-field",
    ],
)  # fmt: skip
def test_bad_configurations(configuration: object, match: str) -> None:
    codecs = [{"name": "transpose", "configuration": configuration}, LE]
    if configuration is None:
        codecs[0] = {"name": "transpose"}
    with pytest.raises(MetadataError, match=match):
        CodecPipeline.from_codecs(codecs, dtype="uint16")


@pytest.mark.parametrize("chunk_shape", [(4,), (2, 3, 4)], ids=["too-few-dims", "too-many-dims"])
def test_order_length_must_match_ndim(chunk_shape: tuple[int, ...]) -> None:
    p = CodecPipeline.from_codecs(
        [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE],
        dtype="uint16",
        source="arr/zarr.json",
    )
    p.validate((3, 4))
    with pytest.raises(
        MetadataError, match=r"arr/zarr\.json: codecs\[0\]\.configuration\.order: has 2 entries"
    ):
        p.validate(chunk_shape)
