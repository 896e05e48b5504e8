"""Sharded arrays (``sharding_indexed``) across zarr3c, zarr-python 3 and tensorstore.

Each case is one ``zarr.json`` description handed to every library: zarr3c through
``create_array(codecs=...)``, tensorstore through its ``metadata`` spec, zarr-python by opening
a ``zarr.json`` written from the same description.  Each library writes, each other reads,
for: the index at the start and at the end, with and without crc32c, compressors and
transpose inside the shard, big-endian inner chunks, ragged array edges, inner chunks and
whole shards left out because they hold only the fill value, and nested sharding.

Beyond the values, the files must agree: the same shards exist, and each shard's index marks
the same inner chunks missing (all three omit inner chunks equal to the fill value; the
order of the inner chunks inside a shard may differ, zarr-python writes Morton order).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
ts = pytest.importorskip("tensorstore", reason="tensorstore is not installed")

from zarr.storage import LocalStore

import zarr3c
from zarr3c.codecs.sharding import (
    ShardingCodec,
    partial_read_codec,
    sharding_codec_dict,
)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
BYTES = {"name": "bytes"}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 5}}
BLOSC4 = {"name": "blosc", "configuration": {
    "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}
CKE = {"name": "default", "configuration": {"separator": "/"}}


def _shard(chunk_shape: list[int], codecs: list[Any], index_codecs: list[Any] | None = None,
           location: str = "end") -> dict[str, Any]:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape,
        "codecs": codecs,
        "index_codecs": index_codecs if index_codecs is not None else [LE, CRC],
        "index_location": location,
    }}


def _t(*order: int) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(order)}}


# id -> (shape, dtype, shard shape, codecs, fill value)
CASES: dict[str, tuple[tuple[int, ...], str, tuple[int, ...], list[Any], Any]] = {
    "end-crc-zstd": ((20, 17), "int32", (8, 8), [_shard([4, 4], [LE, ZSTD])], 0),
    "start-crc-gzip": ((19, 12), "float64", (8, 6), [_shard([4, 3], [LE, GZIP], location="start")],
                       -1.5),
    "end-nocrc": ((16, 10), "uint16", (8, 10), [_shard([2, 5], [LE], [LE])], 7),
    "start-nocrc-blosc": ((13, 9), "float32", (4, 9), [_shard([2, 3], [LE, BLOSC4], [LE],
                                                               "start")], 0),
    "transpose-inside": ((12, 10), "int64", (6, 10), [_shard([3, 5], [_t(1, 0), LE, ZSTD])], 0),
    "big-endian-inner": ((9,), "int16", (4,), [_shard([2], [BE, CRC])], 0),
    "uint8-3d-ragged": ((5, 7, 6), "uint8", (4, 4, 4), [_shard([2, 2, 2], [BYTES, GZIP])], 0),
    "nested": ((20, 14), "int16", (8, 8), [_shard([4, 4], [_shard([2, 2], [LE, ZSTD], [LE],
                                                                   "start")])], 0),
}


def _metadata(case: str) -> dict[str, Any]:
    shape, dtype, shards, codecs, fill = CASES[case]
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shards)}},
        "chunk_key_encoding": CKE,
        "fill_value": fill,
        "codecs": codecs,
        "attributes": {},
    }


def _data(case: str) -> np.ndarray:
    """Random values, with fill-only regions: whole inner chunks and one whole shard."""
    shape, dtype, shards, codecs, fill = CASES[case]
    rng = np.random.default_rng(len(case))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        data = (rng.standard_normal(shape) * 100).astype(dt)
    else:
        info = np.iinfo(dt)
        data = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    inner = codecs[0]["configuration"]["chunk_shape"]
    data[tuple(slice(0, i) for i in inner)] = fill  # the first inner chunk: missing
    data[tuple(slice(s, 2 * s) for s in shards)] = fill  # a whole shard (where there is one)
    return data


# -- the three libraries ----------------------------------------------------------------------------


def write_zarr3c(path: Path, meta: dict[str, Any], data: np.ndarray) -> None:
    a = zarr3c.create_array(
        str(path), shape=tuple(meta["shape"]), dtype=meta["data_type"],
        chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
        codecs=meta["codecs"], fill_value=meta["fill_value"],
    )
    a[...] = data


def write_zarr_python(path: Path, meta: dict[str, Any], data: np.ndarray) -> None:
    path.mkdir(parents=True)
    (path / "zarr.json").write_text(json.dumps(meta))
    zarr.open_array(store=LocalStore(str(path)), mode="r+")[...] = data


def write_tensorstore(path: Path, meta: dict[str, Any], data: np.ndarray) -> None:
    spec_meta = {k: v for k, v in meta.items() if k not in ("zarr_format", "node_type")}
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                 "metadata": spec_meta}, create=True).result()
    t.write(data).result()


def read_zarr3c(path: Path) -> Callable[[Any], np.ndarray]:
    a = zarr3c.open_array(str(path), mode="r")
    return lambda sel: np.asarray(a[sel])


def read_zarr_python(path: Path) -> Callable[[Any], np.ndarray]:
    a = zarr.open_array(store=LocalStore(str(path), read_only=True), mode="r")
    return lambda sel: np.asarray(a[sel])


def read_tensorstore(path: Path) -> Callable[[Any], np.ndarray]:
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}},
                open=True, read=True).result()
    return lambda sel: np.asarray(t[sel].read().result())


WRITERS = {"zarr3c": write_zarr3c, "zarr-python": write_zarr_python,
           "tensorstore": write_tensorstore}
READERS = {"zarr3c": read_zarr3c, "zarr-python": read_zarr_python,
           "tensorstore": read_tensorstore}
DIRECTIONS = [("zarr3c", "zarr-python"), ("zarr-python", "zarr3c"),
              ("zarr3c", "tensorstore"), ("tensorstore", "zarr3c")]


def _shard_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and p.name != "zarr.json"}


def _present_masks(root: Path) -> dict[str, list[bool]]:
    """Per shard file, which inner chunks its index marks stored (decoded by zarr3c)."""
    a = zarr3c.open_array(str(root), mode="r")
    codec = partial_read_codec(a._pipeline)
    assert isinstance(codec, ShardingCodec)
    shards = a.metadata.to_dict()["chunk_grid"]["configuration"]["chunk_shape"]
    out = {}
    for name in sorted(_shard_files(root)):
        raw = (root / name).read_bytes()
        index = codec.decode_index(
            raw[:codec.index_nbytes(shards)] if codec.index_location == "start"
            else raw[-codec.index_nbytes(shards):],
            shards, shard_nbytes=len(raw),
        )
        out[name] = index.present.reshape(-1).tolist()
    return out


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("writer", "reader"), DIRECTIONS, ids=[f"{w}->{r}" for w, r in DIRECTIONS])
def test_sharded_interop(tmp_path: Path, case: str, writer: str, reader: str) -> None:
    meta = _metadata(case)
    data = _data(case)
    path = tmp_path / "a.zarr"
    WRITERS[writer](path, meta, data)
    read = READERS[reader](path)
    np.testing.assert_array_equal(read(...), data, strict=True)
    sel = tuple(slice(1, None, 3) for _ in data.shape)
    np.testing.assert_array_equal(read(sel), data[sel], strict=True)

    # The same files, and the same inner chunks marked missing, as zarr3c writes.
    ours = tmp_path / "ours.zarr"
    write_zarr3c(ours, meta, data)
    assert _shard_files(path) == _shard_files(ours)
    assert _present_masks(path) == _present_masks(ours)


@pytest.mark.parametrize("case", ["end-crc-zstd", "start-crc-gzip", "nested"])
@pytest.mark.parametrize("writer", ["zarr-python", "tensorstore"])
def test_partial_reads_of_foreign_shards(tmp_path: Path, writer: str, case: str) -> None:
    """The partial-read API finds inner chunks through indexes other libraries wrote."""
    meta = _metadata(case)
    data = _data(case)
    path = tmp_path / "a.zarr"
    WRITERS[writer](path, meta, data)
    a = zarr3c.open_array(str(path), mode="r")
    codec = partial_read_codec(a._pipeline)
    assert codec is not None
    shards = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    key = a.chunk_key((0,) * a.ndim)
    region = tuple(slice(1, s - 1, 2) for s in shards)
    got = codec.read_region(
        lambda ranges: a.store.get_partial_values([(key, r) for r in ranges]),
        shards, region, key=key,
    )
    assert got is not None
    np.testing.assert_array_equal(got, data[region], strict=True)


def test_zarr_python_shards_argument_matches_sharding_codec_dict(tmp_path: Path) -> None:
    """``zarr.create_array(chunks=inner, shards=outer)`` writes the codec
    :func:`sharding_codec_dict` builds for the same arguments, and zarr3c reads its data."""
    data = np.arange(30 * 20, dtype="float32").reshape(30, 20)
    data[:5, :5] = 0
    z = zarr.create_array(store=LocalStore(str(tmp_path / "z.zarr")), shape=data.shape,
                          dtype=data.dtype, chunks=(5, 5), shards=(10, 20))
    z[...] = data
    written = json.loads((tmp_path / "z.zarr" / "zarr.json").read_text())["codecs"]
    assert written == [sharding_codec_dict((5, 5), dtype="float32")]
    a = zarr3c.open_array(str(tmp_path / "z.zarr"), mode="r")
    np.testing.assert_array_equal(a[...], data, strict=True)
    assert a.metadata.to_dict()["codecs"] == written
