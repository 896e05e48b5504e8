"""The ``reshape`` array -> array codec (zarr-extensions codecs/reshape): shapes, every MUST-error, views, end to end."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarr3c
import zarr3c.codecs.transpose as transpose_module
from zarr3c.codecs import CodecPipeline
from zarr3c.codecs.base import ChunkSpec
from zarr3c.codecs.reshape import ReshapeCodec, parse_shape
from zarr3c.errors import MetadataError

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}

DTYPES = ["bool", "int8", "<u2", "<i4", "<f8", "<c8", "V3"]


def reshape(shape: Any) -> dict[str, Any]:
    return {"name": "reshape", "configuration": {"shape": shape}}


def pipeline(shape: Any, *rest: dict[str, Any], dtype: str = "<u2") -> CodecPipeline:
    return CodecPipeline.from_codecs(
        [reshape(shape), *(rest or (LE,))], dtype=dtype, source="arr/zarr.json"
    )


def spec_of(shape: tuple[int, ...], dtype: Any = "<u2") -> ChunkSpec:
    dt = np.dtype(dtype)
    return ChunkSpec(shape=shape, dtype=dt, fill_value=np.zeros((), dt))


def random_array(seed: int, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(dtype)
    raw = np.random.default_rng(seed).integers(0, 256, math.prod(shape) * dt.itemsize, np.uint8)
    if dt == np.dtype(bool):
        raw &= 1
    return raw.view(dt).reshape(shape)


def numpy_shape(entries: list[Any], chunk_shape: tuple[int, ...]) -> list[int]:
    """The configuration as numpy's reshape argument (input dims -> products, -1 kept)."""
    return [math.prod(chunk_shape[d] for d in e) if isinstance(e, list) else e for e in entries]


# -- the seed's example and simple shapes ----------------------------------------------------------


def test_seed_example() -> None:
    """``[[0, 1], [2], 3]`` on chunk shape [100, 50, 64, 3] gives [5000, 64, 3]."""
    p = pipeline([[0, 1], [2], 3], dtype="uint8")
    p.validate((100, 50, 64, 3))
    codec = p.array_array[0]
    assert isinstance(codec, ReshapeCodec)
    assert codec.output_shape((100, 50, 64, 3)) == (5000, 64, 3)
    a = random_array(0, "uint8", (100, 50, 64, 3))
    encoded = codec.encode(a, spec_of(a.shape, "uint8"))
    assert encoded.shape == (5000, 64, 3)
    assert np.shares_memory(encoded, a)
    assert bytes(p.encode(a)) == a.tobytes()
    np.testing.assert_array_equal(p.decode(p.encode(a), a.shape), a)


@pytest.mark.parametrize(
    ("config", "chunk_shape", "expected"),
    [
        ([24], (4, 6), (24,)),
        ([-1], (4, 6), (24,)),
        ([[0, 1]], (4, 6), (24,)),
        ([2, 2, [1]], (4, 6), (2, 2, 6)),
        ([[0], 3, -1], (4, 6), (4, 3, 2)),
        ([-1, [1]], (4, 6), (4, 6)),
        ([[0], [], [1]], (4, 6), (4, 1, 6)),  # an empty list is a size-1 dimension
        ([[0], 1, [1]], (4, 6), (4, 1, 6)),
        ([[0], 2, 3], (4, 6), (4, 2, 3)),
        ([[0, 2]], (2, 1, 3), (6,)),  # skipping a size-1 input dimension lines up
        ([], (), ()),
        ([1, -1], (), (1, 1)),
        ([[]], (1, 1), (1,)),
        ([[0], [1]], (0, 5), (0, 5)),  # a chunk without elements
        ([[0, 1], [2], 3], (7, 5, 2, 3), (35, 2, 3)),  # the list form follows the chunk shape
    ],
    ids=[
        "flatten", "flatten-minus-one", "flatten-dims", "split-leading", "dims-size-infer",
        "infer-leading", "empty-list", "explicit-one", "split-trailing", "skip-size-1", "zero-d", "zero-d-to-2d",
        "empty-list-only", "no-elements", "seed-config-other-chunk",
    ],
)  # fmt: skip
def test_output_shapes(config: list[Any], chunk_shape: tuple[int, ...], expected: tuple) -> None:
    p = pipeline(config)
    p.validate(chunk_shape)
    assert p.array_array[0].output_shape(chunk_shape) == expected
    a = random_array(1, "<u2", chunk_shape)
    assert p.decode(p.encode(a), chunk_shape).tobytes() == a.tobytes()


def test_metadata_round_trips() -> None:
    config = {"shape": [[0, 1], -1, 3, []]}
    codec = ReshapeCodec.from_config(config, path="codecs[0]")
    assert codec.to_dict() == {"name": "reshape", "configuration": config}
    assert ReshapeCodec.from_config(codec.to_dict()["configuration"], path="c") == codec
    # numpy integers and tuples (what users may pass) are written as JSON ints and lists
    direct = ReshapeCodec(shape=(np.int64(2), (np.int32(0),), -1))  # type: ignore[arg-type]
    assert direct.to_dict() == {"name": "reshape", "configuration": {"shape": [2, [0], -1]}}
    assert json.loads(json.dumps(direct.to_dict())) == direct.to_dict()


# -- every MUST-error, at parse time (no chunk shape needed) ---------------------------------------

STATIC_ERRORS = [
    # (configuration, error path, message fragment, id)
    ({"shape": [[1], [0]]}, "shape[1]", "strictly increasing", "seed-1-then-0"),
    ({"shape": [[1, 0], 10, [3, 4]]}, "shape[0]", "strictly increasing", "seed-reversed-inside"),
    ({"shape": [[3, 4], 10, [0, 1]]}, "shape[2]", "strictly increasing", "seed-late-first-dims"),
    ({"shape": [[0, 0]]}, "shape[0]", "strictly increasing", "repeated-dim"),
    ({"shape": [[0], [], [0]]}, "shape[2]", "strictly increasing", "repeated-across-empty"),
    ({"shape": [-1, 2, -1]}, "shape[2]", "a second -1", "two-minus-ones"),
    ({"shape": [4, 0]}, "shape[1]", "got 0", "zero-size"),
    ({"shape": [-2]}, "shape[0]", "got -2", "negative-size"),
    ({"shape": [True, 4]}, "shape[0]", "got True", "bool-size"),
    ({"shape": [2.0]}, "shape[0]", "got 2.0", "float-size"),
    ({"shape": ["4"]}, "shape[0]", "got '4'", "string-size"),
    ({"shape": [None]}, "shape[0]", "got None", "null-size"),
    ({"shape": [{"a": 1}]}, "shape[0]", "got {'a': 1}", "object-size"),
    ({"shape": [2, [True]]}, "shape[1][0]", "non-negative integer", "bool-dim"),
    ({"shape": [[0, -1]]}, "shape[0][1]", "non-negative integer", "negative-dim"),
    ({"shape": [[[0]]]}, "shape[0][0]", "non-negative integer", "nested-list-dim"),
    ({"shape": [[0.0]]}, "shape[0][0]", "non-negative integer", "float-dim"),
    ({"shape": 24}, "shape", "must be a list", "shape-not-a-list"),
    ({"shape": "C"}, "shape", "must be a list", "shape-string"),
    ({}, "shape", "is required", "missing-shape"),
    (None, "shape", "is required", "no-configuration"),
    ({"shape": [24], "order": "C"}, "order", "unknown configuration field", "unknown-field"),
]


@pytest.mark.parametrize(
    ("configuration", "field", "fragment"),
    [c[:3] for c in STATIC_ERRORS],
    ids=[c[3] for c in STATIC_ERRORS],
)
def test_static_errors(configuration: Any, field: str, fragment: str) -> None:
    codec: dict[str, Any] = {"name": "reshape"}
    if configuration is not None:
        codec["configuration"] = configuration
    with pytest.raises(MetadataError) as info:
        CodecPipeline.from_codecs([codec, LE], dtype="<u2", source="arr/zarr.json")
    message = str(info.value)
    assert message.startswith(f"arr/zarr.json: codecs[0].configuration.{field}: "), message
    assert fragment in message
    assert info.value.path == f"codecs[0].configuration.{field}"


# -- every MUST-error that depends on the chunk shape ----------------------------------------------

CHUNK_ERRORS = [
    # (shape config, chunk shape, error path, message fragment, id)
    ([5], (4, 6), "shape", "holds 5 elements, but chunk shape [4, 6] holds 24", "count-short"),
    ([4, 7], (4, 6), "shape", "holds 28 elements", "count-long"),
    (
        [[0]],
        (4, 6),
        "shape[0]",
        "after it hold 1 elements, the input dimensions after 0 hold 6; "
        "also, output shape [4] holds 4 elements, but chunk shape [4, 6] holds 24",
        "dims-count",
    ),
    ([], (4, 6), "shape", "holds 1 elements", "empty-config"),
    ([5, -1], (4, 6), "shape[1]", "does not divide the 24", "minus-one-not-dividing"),
    ([7, -1, [1]], (4, 6), "shape[1]", "does not divide", "minus-one-with-dims"),
    ([[0], [2]], (4, 6), "shape[1][0]", "out of range for chunk shape [4, 6]", "dim-out-of-range"),
    ([[0, 1, 5]], (4, 6), "shape[0][2]", "out of range", "dim-out-of-range-inside"),
    ([[0]], (), "shape[0][0]", "out of range for chunk shape []", "dim-on-0d"),
    ([2, [1]], (4, 6), "shape[1]", "before it hold 2 elements", "brief-2-then-dims"),
    ([2, [1], 2], (4, 6), "shape[1]", "before it hold 2 elements", "position-before"),
    ([[0, 2], 3], (2, 3, 4), "shape[0]", "after it hold 3 elements", "position-gap-after"),
    ([[1], 4], (4, 6), "shape[0]", "before it hold 1 elements", "position-transpose-like"),
    ([3, 2, [0]], (4, 6), "shape[2]", "before it hold 6 elements", "position-dims-at-end"),
    ([-1, [0]], (4, 6), "shape[1]", "before it hold 6", "position-after-infer"),
    ([[0], -1], (0, 5), "shape[1]", "hold no elements", "minus-one-ambiguous"),
]


@pytest.mark.parametrize(
    ("config", "chunk_shape", "field", "fragment"),
    [c[:4] for c in CHUNK_ERRORS],
    ids=[c[4] for c in CHUNK_ERRORS],
)
def test_chunk_shape_errors(
    config: list[Any], chunk_shape: tuple[int, ...], field: str, fragment: str
) -> None:
    p = pipeline(config)  # the form is valid: parsing succeeds
    with pytest.raises(MetadataError) as info:
        p.validate(chunk_shape)
    message = str(info.value)
    assert message.startswith(f"arr/zarr.json: codecs[0].configuration.{field}: "), message
    assert fragment in message
    assert f"chunk shape {list(chunk_shape)}" in message  # names the chunk shape


def test_first_position_constraint_is_about_the_dims_before() -> None:
    """The seed prints ``prod(A_shape[input_dims[0]])``; its own example only holds with
    ``prod(A_shape[:input_dims[0]])``, which is what is checked (the example passes)."""
    p = pipeline([[0, 1], [2], 3])
    p.validate((100, 50, 64, 3))  # literal reading: prod(B[:1]) = 5000 != A[2] = 64
    with pytest.raises(MetadataError, match=re.escape("configuration.shape[1]")):
        pipeline([5000, [2], 3]).validate((64, 50, 100, 3))


def test_direct_construction_is_checked() -> None:
    with pytest.raises(MetadataError, match=re.escape("reshape.configuration.shape[1]")):
        ReshapeCodec(shape=((1,), (0,)))
    assert parse_shape([[0, 1], -1], path="c") == ((0, 1), -1)


# -- hypothesis: random valid configurations against numpy, and mutations that break them ----------


@st.composite
def factorization(draw: st.DrawFn, n: int) -> list[int]:
    """``n`` split into 1-3 positive factors (1s allowed), in order."""
    parts = []
    for _ in range(draw(st.integers(0, 2))):
        d = draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
        parts.append(d)
        n //= d
    return [*parts, n]


@st.composite
def valid_case(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Any], tuple[int, ...]]:
    """(chunk shape, configuration, expected output shape): consecutive groups of input
    dimensions, each written as its input dims (size-1 dims may be skipped) or as explicit
    factors of its size; size-1 entries (1 or []) sprinkled in; maybe one entry made -1."""
    ndim = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    cuts = sorted(draw(st.sets(st.integers(1, ndim - 1)))) if ndim > 1 else []
    bounds = [0, *cuts, ndim]
    entries: list[Any] = []
    out: list[int] = []
    for start, stop in zip(bounds, bounds[1:], strict=False):
        size = math.prod(shape[start:stop])
        if draw(st.booleans()):
            entries.append([d for d in range(start, stop) if shape[d] != 1 or draw(st.booleans())])
            out.append(size)
        else:
            factors = draw(factorization(size))
            entries.extend(factors)
            out.extend(factors)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(entries)))
        entries.insert(at, draw(st.sampled_from([1, []])))
        out.insert(at, 1)
    if entries and draw(st.booleans()):
        entries[draw(st.integers(0, len(entries) - 1))] = -1
    return shape, entries, tuple(out)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=40, deadline=None)
@given(case=valid_case(), seed=st.integers(0, 2**32 - 1))
def test_valid_configurations_match_numpy(dtype: str, case: tuple, seed: int) -> None:
    chunk_shape, entries, out = case
    a = random_array(seed, dtype, chunk_shape)
    expected = np.reshape(a, numpy_shape(entries, chunk_shape))
    assert expected.shape == out
    p = pipeline(
        entries, *(() if np.dtype(dtype).itemsize > 1 else ({"name": "bytes"},)), dtype=dtype
    )
    p.validate(chunk_shape)
    codec = p.array_array[0]
    assert codec.resolve(spec_of(chunk_shape, dtype)).shape == out
    encoded = codec.encode(a, spec_of(chunk_shape, dtype))
    assert encoded.shape == out and encoded.tobytes() == expected.tobytes()
    assert a.size == 0 or np.shares_memory(encoded, a)
    decoded = codec.decode(encoded, spec_of(chunk_shape, dtype))
    assert decoded.shape == chunk_shape and decoded.flags.c_contiguous
    assert decoded.tobytes() == a.tobytes()
    # the stored bytes are the chunk's, in C order: the codec never reorders elements
    stored = bytes(p.encode(a))
    assert stored == a.tobytes()
    assert p.decode(stored, chunk_shape).tobytes() == a.tobytes()


MUTATIONS = ["reverse", "second-minus-one", "bad-size", "bad-dim", "out-of-range", "count",
             "position"]  # fmt: skip


@st.composite
def mutated_case(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Any], str, str | None]:
    """(chunk shape, invalid configuration, when it fails, expected error path or None), from a
    valid case changed so that it must fail."""
    chunk_shape, entries, out = draw(valid_case())
    ndim = len(chunk_shape)
    entries = [list(e) if isinstance(e, list) else e for e in entries]
    lists = [i for i, e in enumerate(entries) if isinstance(e, list) and len(e) >= 2]
    dim_lists = [i for i, e in enumerate(entries) if isinstance(e, list) and e]
    swaps = [
        (k, k + 1) for k in range(len(entries) - 1)
        if (isinstance(entries[k], int) and entries[k] > 1 and isinstance(entries[k + 1], list)
            and entries[k + 1])
        or (isinstance(entries[k + 1], int) and entries[k + 1] > 1
            and isinstance(entries[k], list) and entries[k])
    ]  # fmt: skip
    applicable = ["bad-size", "out-of-range", "count"]
    if lists:
        applicable.append("reverse")
    if -1 in entries and len(entries) > 1:
        applicable.append("second-minus-one")
    if dim_lists:
        applicable.append("bad-dim")
    if swaps:
        applicable.append("position")
    kind = draw(st.sampled_from(applicable))
    if kind == "reverse":
        i = draw(st.sampled_from(lists))
        entries[i] = entries[i][::-1]
        return chunk_shape, entries, "parse", f"shape[{i}]"
    if kind == "second-minus-one":
        first = entries.index(-1)
        i = draw(st.sampled_from([k for k in range(len(entries)) if k != first]))
        entries[i] = -1
        return chunk_shape, entries, "parse", f"shape[{max(i, first)}]"
    if kind == "bad-size":
        i = draw(st.integers(0, len(entries)))
        entries.insert(i, draw(st.sampled_from([0, -2, -7, True, False, 1.0, "2", None])))
        return chunk_shape, entries, "parse", f"shape[{i}]"
    if kind == "bad-dim":
        i = draw(st.sampled_from(dim_lists))
        j = draw(st.integers(0, len(entries[i]) - 1))
        entries[i][j] = draw(st.sampled_from([-1, True, 0.5, [0]]))
        return chunk_shape, entries, "parse", f"shape[{i}][{j}]"
    if kind == "out-of-range":
        entries.append([ndim + draw(st.integers(0, 3))])
        return chunk_shape, entries, "validate", f"shape[{len(entries) - 1}][0]"
    if kind == "count":
        if -1 in entries:  # a -1 absorbs any change; pin it one off instead
            i = entries.index(-1)
            entries[i] = out[i] + 1
        else:
            entries.append(draw(st.integers(2, 4)))
        return chunk_shape, entries, "validate", None  # the count, or a position it breaks
    k, k1 = draw(st.sampled_from(swaps))
    moved_list = k1 if isinstance(entries[k], list) else k
    entries[k], entries[k1] = entries[k1], entries[k]
    return chunk_shape, entries, "validate", f"shape[{moved_list}]"


@settings(max_examples=300, deadline=None)
@given(case=mutated_case())
def test_mutated_configurations_fail_at_open(case: tuple) -> None:
    chunk_shape, entries, when, field = case
    with pytest.raises(MetadataError) as info:
        p = pipeline(entries)
        assert when == "validate", f"{entries} parsed, expected an error while parsing"
        p.validate(chunk_shape)
    message = str(info.value)
    assert message.startswith("arr/zarr.json: codecs[0].configuration.shape"), message
    if field is not None:
        assert message.startswith(f"arr/zarr.json: codecs[0].configuration.{field}: "), message
    if when == "validate":
        assert f"chunk shape {list(chunk_shape)}" in message


# -- views, not copies -----------------------------------------------------------------------------


def stored_buffer(a: np.ndarray) -> np.ndarray:
    """Little-endian bytes of ``a`` in a fresh writable buffer, as a store would return."""
    return np.frombuffer(bytearray(a.astype(a.dtype.newbyteorder("<")).tobytes()), np.uint8)


def test_reshape_and_bytes_decode_and_encode_are_views() -> None:
    a = random_array(2, "<u2", (4, 6, 5))
    p = pipeline([[0, 1], -1])
    data = stored_buffer(a)
    decoded = p.decode(data, a.shape)
    np.testing.assert_array_equal(decoded, a)
    assert np.shares_memory(decoded, data)
    encoded = p.encode(a)
    assert np.shares_memory(np.asarray(encoded), a)


class KernelSpy:
    """Wraps transpose's copy kernel, recording each call's source and output buffers."""

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.kernel = transpose_module.transpose_into

    def __call__(self, src: np.ndarray, shape: Any, perm: Any, itemsize: int, out: Any) -> Any:
        self.calls.append((src, out))
        return self.kernel(src, shape, perm, itemsize, out)


@pytest.mark.parametrize(
    "codecs",
    [
        [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, reshape([[0], [1, 2]])],
        [reshape([[0, 1], [2]]), {"name": "transpose", "configuration": {"order": [1, 0]}}],
        [reshape([-1, [2]]), {"name": "transpose", "configuration": {"order": [1, 0]}},
         reshape([-1])],
    ],
    ids=["transpose-then-reshape", "reshape-then-transpose", "reshape-transpose-reshape"],
)  # fmt: skip
def test_with_transpose_the_kernel_is_the_only_copy(
    codecs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = random_array(3, "<i4", (4, 6, 5))
    p = CodecPipeline.from_codecs([*codecs, LE], dtype="<i4")
    spy = KernelSpy()
    monkeypatch.setattr(transpose_module, "transpose_into", spy)

    data = stored_buffer(np.asarray(p.encode(a)).view(np.uint8))
    spy.calls.clear()
    decoded = p.decode(data, a.shape)
    np.testing.assert_array_equal(decoded, a)
    ((src, out),) = spy.calls  # one copy
    assert np.shares_memory(src, data)  # reshape handed the kernel a view of the stored bytes
    assert np.shares_memory(decoded, out)  # and the kernel's output came back as is

    spy.calls.clear()
    encoded = np.asarray(p.encode(a))
    ((src, out),) = spy.calls
    assert np.shares_memory(src, a)
    assert np.shares_memory(encoded, out)


def test_non_contiguous_input_is_copied_once_in_c_order() -> None:
    a = random_array(4, "<u2", (6, 8))[::2, ::2]
    codec = ReshapeCodec(shape=(-1,))
    encoded = codec.encode(a, spec_of(a.shape))
    assert encoded.flags.c_contiguous
    assert encoded.tolist() == a.ravel().tolist()


def test_wrong_decoded_size_is_a_chunk_decode_error() -> None:
    p = pipeline([-1])
    with pytest.raises(zarr3c.errors.ChunkDecodeError, match="c/0/0"):
        p.decode(b"\x00" * 10, (4, 6), key="c/0/0")


# -- end to end through create_array / open_array --------------------------------------------------

TRANSPOSE_201 = {"name": "transpose", "configuration": {"order": [2, 0, 1]}}
END_TO_END = {
    "reshape-only": [reshape([[0, 1], -1]), LE],
    "transpose-reshape-zstd": [TRANSPOSE_201, reshape([[0], [1, 2]]), LE, ZSTD],
    "reshape-transpose-gzip": [
        reshape([[0, 1], [2]]),
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        LE,
        {"name": "gzip", "configuration": {"level": 1}},
    ],
    "reshape-blosc-crc32c": [
        reshape([-1]),
        LE,
        {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 5,
                                            "shuffle": "shuffle", "blocksize": 0}},
        {"name": "crc32c"},
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", list(END_TO_END))
def test_end_to_end(store: zarr3c.Store, name: str) -> None:
    codecs = END_TO_END[name]
    data = np.arange(10 * 12 * 6, dtype="<f4").reshape(10, 12, 6) * 0.5
    a = zarr3c.create_array(store, "x", shape=data.shape, chunks=(4, 6, 3), dtype="<f4",
                            codecs=codecs, fill_value=-1.0)  # fmt: skip
    a[...] = data
    b = zarr3c.open_array(store, "x", mode="r")
    assert b.metadata.to_dict()["codecs"] == codecs  # written and read back exactly
    np.testing.assert_array_equal(b[...], data)
    # partial reads, inside one chunk (including the ragged edge chunks) and across chunks
    for sel in [(slice(1, 3), slice(2, 5), 1), (9, slice(None), slice(None, None, 2)),
                (slice(None, None, 3), 7, slice(1, 6)), (Ellipsis, 5)]:  # fmt: skip
        np.testing.assert_array_equal(b[sel], data[sel])
    np.testing.assert_array_equal(b.oindex[[0, 5, 9], :, [1, 4]], data[[0, 5, 9]][:, :, [1, 4]])
    np.testing.assert_array_equal(b.vindex[[0, 5, 9], [1, 2, 11], [0, 3, 5]],
                                  data[[0, 5, 9], [1, 2, 11], [0, 3, 5]])  # fmt: skip
    # a partial write keeps the rest of the chunk
    b2 = zarr3c.open_array(store, "x", mode="r+")
    b2[2, 3:5, :] = 99
    data[2, 3:5, :] = 99
    np.testing.assert_array_equal(zarr3c.open_array(store, "x")[...], data)


def test_partial_reads_equal_whole_chunk_decode() -> None:
    """Reading part of a chunk through reshape gives what decoding it whole then indexing does."""
    store = zarr3c.MemoryStore()
    data = random_array(5, "<i2", (8, 12))
    a = zarr3c.create_array(store, shape=(8, 12), chunks=(4, 6), dtype="<i2",
                            filters=[reshape([2, -1, [1]])], compressors=None, data=data)  # fmt: skip
    whole = a._pipeline.decode(store.get(a.chunk_key((1, 1))), (4, 6))
    np.testing.assert_array_equal(whole, data[4:8, 6:12])
    # (selection in the array, the same elements in chunk (1, 1))
    for sel, local in [
        ((slice(5, 7), slice(6, 12, 2)), (slice(1, 3), slice(0, 6, 2))),
        ((7, slice(6, 12)), (3, slice(None))),
        ((slice(4, 8), 11), (slice(None), 5)),
        ((6, 10), (2, 4)),
    ]:
        np.testing.assert_array_equal(a[sel], whole[local])


def test_stored_chunk_bytes_are_c_order(store: zarr3c.Store) -> None:
    data = random_array(6, "<u4", (8, 24))
    a = zarr3c.create_array(store, "x", shape=(8, 24), chunks=(4, 6), dtype="<u4",
                            filters=[reshape([24])], compressors=None, data=data)  # fmt: skip
    assert a.metadata.to_dict()["codecs"] == [reshape([24]), LE]
    for i, j in [(0, 0), (1, 3)]:
        stored = bytes(store.get(a.chunk_key((i, j))))
        assert stored == data[i * 4 : (i + 1) * 4, j * 6 : (j + 1) * 6].tobytes()


def test_filters_accept_codec_objects_and_compress() -> None:
    store = zarr3c.MemoryStore()
    data = np.arange(200, dtype="<i8").reshape(10, 20)
    zarr3c.create_array(store, shape=(10, 20), chunks=(5, 10), dtype="<i8",
                        filters=[ReshapeCodec(shape=((0, 1),))],
                        compressors=[numcodecs.Zstd(level=3)], data=data)  # fmt: skip
    codecs = zarr3c.open_array(store).metadata.to_dict()["codecs"]
    assert codecs[0] == reshape([[0, 1]])
    assert codecs[2]["name"] == "zstd"
    np.testing.assert_array_equal(zarr3c.open_array(store)[...], data)


@pytest.mark.parametrize(
    ("config", "field"),
    [([[1], [0]], "shape[1]"), ([2, [1]], "shape[1]"), ([5, -1], "shape[1]"),
     ([[0], [3]], "shape[1][0]"), ([7], "shape")],
    ids=["order", "position", "minus-one", "out-of-range", "count"],
)  # fmt: skip
def test_create_array_refuses_before_writing(config: list[Any], field: str) -> None:
    store = zarr3c.MemoryStore()
    with pytest.raises(MetadataError, match=re.escape(f"codecs[0].configuration.{field}:")):
        zarr3c.create_array(store, "x", shape=(8, 12), chunks=(4, 6), dtype="uint8",
                            filters=[reshape(config)])  # fmt: skip
    assert store.get("x/zarr.json") is None


@pytest.mark.parametrize(
    ("config", "field", "names_chunk_shape"),
    [([[1], [0]], "shape[1]", False), ([2, [1]], "shape[1]", True),
     ([5, -1], "shape[1]", True), ([[0], [3]], "shape[1][0]", True), ([7], "shape", True),
     ([-1, -1], "shape[1]", False)],
    ids=["order", "position", "minus-one", "out-of-range", "count", "two-minus-ones"],
)  # fmt: skip
def test_open_array_refuses_bad_metadata_at_open(
    config: list[Any], field: str, names_chunk_shape: bool
) -> None:
    """Errors surface when the array is opened, naming the document, the field and (when it
    matters) the chunk shape -- never later, while reading."""
    store = zarr3c.MemoryStore()
    zarr3c.create_array(store, "x", shape=(8, 12), chunks=(4, 6), dtype="uint8",
                        filters=[reshape([-1])], data=np.ones((8, 12), "uint8"))  # fmt: skip
    doc = json.loads(bytes(store.get("x/zarr.json")))
    doc["codecs"][0]["configuration"]["shape"] = config
    store.set("x/zarr.json", json.dumps(doc).encode())
    with pytest.raises(MetadataError) as info:
        zarr3c.open_array(store, "x")
    message = str(info.value)
    assert message.startswith(f"x/zarr.json: codecs[0].configuration.{field}: "), message
    assert ("chunk shape [4, 6]" in message) == names_chunk_shape


# -- variable chunk shapes (rectilinear grids) ---------------------------------------

needs_rectilinear = pytest.mark.skipif(
    "rectilinear" not in zarr3c.registry.chunk_grids, reason="rectilinear grid not available"
)


@needs_rectilinear
@pytest.mark.parametrize(
    "config", [[[0, 1]], [[0], [1]], [-1, [1]], [[0], 1, -1]], ids=["flat", "same", "infer", "pad"]
)
def test_input_dims_follow_variable_chunk_shapes(config: list[Any]) -> None:
    """The list form resolves per chunk: one configuration for chunks [3|7] x [2|5]."""
    store = zarr3c.MemoryStore()
    data = random_array(7, "<i4", (10, 7))
    a = zarr3c.create_array(store, shape=(10, 7), chunks=([3, 7], [2, 5]), dtype="<i4",
                            filters=[reshape(config)], compressors=None, data=data)  # fmt: skip
    np.testing.assert_array_equal(zarr3c.open_array(store)[...], data)
    np.testing.assert_array_equal(a[2:5, 1:4], data[2:5, 1:4])
    assert bytes(store.get(a.chunk_key((1, 0)))) == data[3:10, 0:2].tobytes()


@needs_rectilinear
def test_explicit_size_fails_for_another_chunk_shape_at_create() -> None:
    """[6] fits the [3, 2] chunks but not [3, 5]: refused up front, naming that chunk shape."""
    store = zarr3c.MemoryStore()
    with pytest.raises(MetadataError) as info:
        zarr3c.create_array(store, shape=(10, 7), chunks=([3, 7], [2, 5]), dtype="<i4",
                            filters=[reshape([6])])  # fmt: skip
    assert "codecs[0].configuration.shape: " in str(info.value)
    assert "chunk shape [3, 5]" in str(info.value)


# -- inside sharding ---------------------------------------------------------------------------------

needs_sharding = pytest.mark.skipif(
    "sharding_indexed" not in zarr3c.registry.codecs, reason="sharding not available"
)
INDEX_CODECS = [LE, {"name": "crc32c"}]


def sharded(inner: list[dict[str, Any]]) -> list[dict[str, Any]]:
    config = {"chunk_shape": [4, 6], "codecs": inner, "index_codecs": INDEX_CODECS,
              "index_location": "end"}  # fmt: skip
    return [{"name": "sharding_indexed", "configuration": config}]


@needs_sharding
def test_inside_sharding() -> None:
    store = zarr3c.MemoryStore()
    data = random_array(8, "<i4", (8, 12))
    inner = [TRANSPOSE_201 | {"configuration": {"order": [1, 0]}}, reshape([-1]), LE, ZSTD]
    a = zarr3c.create_array(store, shape=(8, 12), chunks=(8, 12), dtype="<i4",
                            codecs=sharded(inner), data=data)  # fmt: skip
    b = zarr3c.open_array(store)
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(a[1:3, 2:9], data[1:3, 2:9])  # a partial read of the shard
    assert b.metadata.to_dict()["codecs"][0]["configuration"]["codecs"][:2] == inner[:2]


@needs_sharding
@pytest.mark.parametrize(
    ("config", "field"), [([[1], [0]], "shape[1]"), ([7], "shape")], ids=["order", "count"]
)
def test_inside_sharding_errors_name_the_nested_field(config: list[Any], field: str) -> None:
    with pytest.raises(
        MetadataError, match=re.escape(f"codecs[0].configuration.codecs[0].configuration.{field}:")
    ):
        zarr3c.create_array(zarr3c.MemoryStore(), shape=(8, 12), chunks=(8, 12), dtype="<i4",
                            codecs=sharded([reshape(config), LE]))  # fmt: skip
