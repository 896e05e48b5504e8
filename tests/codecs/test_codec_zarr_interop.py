"""Byte-for-byte agreement with zarr-python 3's codecs (skipped when zarr is not importable).

zarr-python encodes a chunk with its own codec objects (through a one-chunk array in a dict
store); zarr3c must produce the same stored bytes and the same ``codecs`` metadata from the
metadata zarr-python wrote, and decode zarr-python's bytes.  gzip is compared with the header's
timestamp (bytes 4-7) masked, since numcodecs writes the time of compression there.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest

from zarr3c.codecs import CodecPipeline

zarr = pytest.importorskip("zarr")
zcodecs = pytest.importorskip("zarr.codecs")
znumcodecs = pytest.importorskip("zarr.codecs.numcodecs")


def zarr_encode(a: np.ndarray, *, filters: Any, serializer: Any, compressors: Any):
    """(stored chunk bytes, codecs metadata) as zarr-python writes them for ``a``."""
    store: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numcodecs.* codecs warn that they are not in the spec
        z = zarr.create_array(
            store,
            shape=a.shape,
            chunks=a.shape,
            dtype=a.dtype,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            fill_value=0,
            zarr_format=3,
        )
        z[...] = a
        codecs = json.loads(json.dumps(z.metadata.to_dict()["codecs"]))
    key = "c/" + "/".join("0" for _ in a.shape)
    return store[key].to_bytes(), codecs


def data(dtype: str, shape: tuple[int, ...] = (6, 10, 7)) -> np.ndarray:
    rng = np.random.default_rng(42)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.3
    if dt.kind in "fc":
        return (rng.random(shape) * 100 + 1).astype(dt)
    return rng.integers(1, 100, shape).astype(dt)


def _cases() -> dict[str, tuple[str, Any, Any, Any]]:
    # zarr's numcodecs wrappers warn, when made, that they are not in the v3 spec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            # id: (dtype, filters, serializer, compressors)
            "bytes-little-u2": ("<u2", (), zcodecs.BytesCodec(endian="little"), ()),
            "bytes-big-i4": ("<i4", (), zcodecs.BytesCodec(endian="big"), ()),
            "bytes-big-c16": ("<c16", (), zcodecs.BytesCodec(endian="big"), ()),
            "bytes-big-f2": ("<f2", (), zcodecs.BytesCodec(endian="big"), ()),
            "bytes-bool": ("bool", (), "auto", ()),
            "bytes-u1-default": ("uint8", (), "auto", "auto"),
            "default-f8": ("<f8", (), "auto", "auto"),
            "transpose-zstd": (
                "<u2", [zcodecs.TransposeCodec(order=(1, 0, 2))], "auto", [zcodecs.ZstdCodec(level=0)],
            ),
            "transpose-F-big": (
                "<f4", [zcodecs.TransposeCodec(order=(2, 1, 0))], zcodecs.BytesCodec(endian="big"), (),
            ),
            "zstd-checksum": ("<i8", (), "auto", [zcodecs.ZstdCodec(level=3, checksum=True)]),
            "zstd-negative": ("<i8", (), "auto", [zcodecs.ZstdCodec(level=-3)]),
            "blosc-default-u2": ("<u2", (), "auto", [zcodecs.BloscCodec()]),
            "blosc-default-u1": ("uint8", (), "auto", [zcodecs.BloscCodec()]),
            "blosc-lz4-bitshuffle": (
                "<f8", (), "auto", [zcodecs.BloscCodec(cname="lz4", clevel=9, shuffle="bitshuffle")],
            ),
            "blosc-zlib-blocksize": (
                "<i4", (), "auto", [zcodecs.BloscCodec(cname="zlib", clevel=1, blocksize=1024)],
            ),
            "crc32c": ("<u2", (), "auto", [zcodecs.Crc32cCodec()]),
            "zstd-crc32c": ("<u4", (), "auto", [zcodecs.ZstdCodec(level=1), zcodecs.Crc32cCodec()]),
            "numcodecs-zlib": ("<i4", (), "auto", [znumcodecs.Zlib(level=1)]),
            "numcodecs-delta-shuffle-lz4": (
                "<i4", [znumcodecs.Delta(dtype="<i4")], "auto",
                [znumcodecs.Shuffle(elementsize=4), znumcodecs.LZ4()],
            ),
            "numcodecs-fixedscaleoffset": (
                "<f8", [znumcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="<i2")],
                "auto", [znumcodecs.CRC32()],
            ),
        }  # fmt: skip


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_same_bytes_and_metadata_as_zarr_python(case: str) -> None:
    dtype, filters, serializer, compressors = CASES[case]
    a = data(dtype)
    stored, codecs = zarr_encode(a, filters=filters, serializer=serializer, compressors=compressors)
    p = CodecPipeline.from_codecs(codecs, dtype=dtype, fill_value=0)
    p.validate(a.shape)
    assert p.to_dicts() == codecs
    assert bytes(p.encode(a)) == stored
    decoded = p.decode(stored, a.shape, key="c/0/0/0")
    if "fixedscaleoffset" in case:
        np.testing.assert_allclose(decoded, a, atol=0.05)
    else:
        np.testing.assert_array_equal(decoded, a)


def test_gzip_matches_except_for_the_timestamp() -> None:
    a = data("<i2")
    stored, codecs = zarr_encode(
        a, filters=(), serializer="auto", compressors=[zcodecs.GzipCodec(level=4)]
    )
    assert codecs[1] == {"name": "gzip", "configuration": {"level": 4}}
    p = CodecPipeline.from_codecs(codecs, dtype="<i2")
    ours = bytes(p.encode(a))

    def masked(b: bytes) -> bytes:
        # RFC 1952's MTIME (bytes 4-7: zarr-python stamps the time, zarr3c writes none)
        # and OS (byte 9: 255 from Python's gzip module, the system's from zlib's header)
        return b[:4] + b[8:9] + b[10:]

    assert masked(ours) == masked(stored)
    assert ours[4:8] == bytes(4)  # (no time: an encoding depends on the data alone)
    assert bytes(p.encode(a)) == ours
    np.testing.assert_array_equal(p.decode(stored, a.shape), a)


@pytest.mark.parametrize(
    "ours,theirs,dtype",
    [
        ({"name": "blosc"}, zcodecs.BloscCodec(), "<i4"),
        ({"name": "blosc"}, zcodecs.BloscCodec(), "uint8"),
        ({"name": "blosc", "configuration": {"cname": "lz4"}}, zcodecs.BloscCodec(cname="lz4"),
         "<f8"),
        ({"name": "zstd"}, zcodecs.ZstdCodec(), "<u2"),
    ],
    ids=["blosc-i4", "blosc-u1", "blosc-lz4", "zstd"],
)  # fmt: skip
def test_same_metadata_for_the_same_user_input(ours: dict, theirs: Any, dtype: str) -> None:
    a = data(dtype)
    _, codecs = zarr_encode(a, filters=(), serializer="auto", compressors=[theirs])
    p = CodecPipeline.from_codecs(
        [codecs[0], ours], dtype=dtype
    )  # codecs[0]: zarr's serializer for the dtype
    assert p.to_dicts() == codecs


@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool", "<i2", "<f8", "<c8"])
def test_default_codecs_match_zarr_python(dtype: str) -> None:
    from zarr3c.codecs import default_compressors, default_serializer

    _, codecs = zarr_encode(data(dtype), filters=(), serializer="auto", compressors="auto")
    assert [default_serializer(dtype), *default_compressors(dtype)] == codecs


def test_zarr_python_reads_what_zarr3c_writes() -> None:
    a = data("<f4")
    codecs = [
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3}},
        {"name": "crc32c"},
    ]
    p = CodecPipeline.from_codecs(codecs, dtype="<f4")
    store: dict = {}
    z = zarr.create_array(
        store,
        shape=a.shape,
        chunks=a.shape,
        dtype=a.dtype,
        filters=[zcodecs.TransposeCodec(order=(2, 0, 1))],
        serializer=zcodecs.BytesCodec(endian="big"),
        compressors=[
            zcodecs.BloscCodec(cname="lz4", clevel=3),
            zcodecs.Crc32cCodec(),
        ],
        fill_value=0,
    )
    assert json.loads(json.dumps(z.metadata.to_dict()["codecs"])) == p.to_dicts()
    from zarr.core.buffer.cpu import Buffer

    store["c/0/0/0"] = Buffer.from_bytes(bytes(p.encode(a)))
    np.testing.assert_array_equal(z[...], a)
