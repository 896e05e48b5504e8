"""xarray's engine="zarr3c" (zarr3c.xarray): stores written by xarray's own to_zarr (Zarr v2
and v3, consolidated or not) open equal to engine="zarr"; opening is lazy and a selection
reads only the chunks it touches; groups, stores, URLs and bad input."""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import tomllib
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")  # xarray's engine="zarr", the oracle
pd = pytest.importorskip("pandas")

import zarr3c
from zarr3c.errors import (
    ContainsArrayError,
    GroupNotFoundError,
    InvalidArgumentError,
    MetadataError,
    MissingDimensionsError,
)
from zarr3c.xarray import Zarr3cBackendEntrypoint

ENGINE = Zarr3cBackendEntrypoint
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.filterwarnings(
    # xarray's engine="zarr" warns where a store has no consolidated metadata, and
    # zarr-python about the v3 string and fixed-width types it writes
    "ignore::RuntimeWarning", "ignore::UserWarning", "ignore::FutureWarning",
)


# -- datasets as xarray writes them --------------------------------------------------------------


def _dataset() -> Any:
    """Every kind of variable xarray encodes: times, timedeltas, masked and packed integers,
    NaN-filled floats, text, bytes, booleans, a non-index coordinate, a scalar."""
    time = pd.date_range("2000-01-01", periods=8, freq="D")
    temp = np.arange(48, dtype="float32").reshape(8, 6)
    temp[2, 3] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "count": (("time",), np.array([1, 2, -1, 4, 5, -1, 7, 8], dtype="int16")),
            "packed": (("time",), np.array([1.5, np.nan, 2.5, 3.0, 0.5, 1.0, np.nan, 4.0])),
            "name": (("x",), np.array(["a", "bb", "", "dddd", "e", "ff"], dtype=object)),
            "code": (("x",), np.array([b"a", b"bb", b"c", b"d", b"e", b"f"])),
            "flag": (("x",), np.array([True, False, True, True, False, False])),
            "lag": (("time",), pd.to_timedelta(np.arange(8), unit="h")),
            "scalar": ((), 3.25, {"note": "0-d"}),
        },
        coords={"time": time, "x": np.arange(6) * 10, "lat": (("x",), np.linspace(0, 5, 6))},
        attrs={"title": "test", "history": ["a", "b"], "version": 2},
    )
    ds["count"].encoding["_FillValue"] = -1
    ds["packed"].encoding.update(dtype="int16", scale_factor=0.5, add_offset=1.0,
                                 _FillValue=-999)
    return ds


_CHUNKS = {"temp": (2, 3), "count": (4,), "packed": (4,), "lag": (4,), "time": (4,)}


def _write(ds: Any, path: Path, zarr_format: int, consolidated: bool,
           shards: dict[str, tuple[int, ...]] | None = None) -> Path:
    # to_zarr's encoding replaces each variable's own, so the variable's is kept in it
    encoding = {k: {**ds[k].encoding, "chunks": v} for k, v in _CHUNKS.items()
                if k in ds.variables}
    for name, shape in (shards or {}).items():
        encoding[name]["shards"] = shape
    ds.to_zarr(path, mode="w", zarr_format=zarr_format, consolidated=consolidated,
               encoding=encoding)
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, bool], Path]:
    """The dataset written by xarray as Zarr v2 and v3, consolidated and not."""
    base = tmp_path_factory.mktemp("xr")
    ds = _dataset()
    return {(fmt, cons): _write(ds, base / f"v{fmt}-{cons}.zarr", fmt, cons)
            for fmt in (2, 3) for cons in (True, False)}


# -- comparing with engine="zarr" ----------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equality of encoding values: NaN equals NaN, and the types must agree."""
    if isinstance(a, float | np.floating) and isinstance(b, float | np.floating):
        return type(a) is type(b) and (a == b or (math.isnan(a) and math.isnan(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _codec_json(codec: Any) -> Any:
    """A codec of zarr-python's encoding as zarr.json writes it (v3), or itself (v2's
    numcodecs codecs, which zarr3c reports as they are)."""
    if hasattr(codec, "to_dict"):
        doc = codec.to_dict()
        return {k: v for k, v in doc.items() if not (k == "configuration" and v == {})}
    return codec


def _strip_empty(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: v for k, v in doc.items() if not (k == "configuration" and v == {})}
    return doc


def assert_same_encoding(expected: Any, actual: Any) -> None:
    """Every variable's encoding as engine="zarr" sets it: the same keys, equal values of
    the same types; the codecs in their JSON form (zarr-python gives its codec objects)."""
    for name, var in expected.variables.items():
        want, got = dict(var.encoding), dict(actual[name].encoding)
        assert want.keys() == got.keys(), (name, want.keys() ^ got.keys())
        for key in want:
            if key in ("compressors", "filters"):
                assert [_codec_json(c) for c in want[key]] == [_strip_empty(c) for c in got[key]]
            elif key == "serializer":
                assert _codec_json(want[key]) == _strip_empty(got[key]), name
            else:
                assert _same(want[key], got[key]), (name, key, want[key], got[key])


def _open_both(path: Any, **kwargs: Any) -> tuple[Any, Any]:
    return (xr.open_dataset(path, engine="zarr", **kwargs),
            xr.open_dataset(path, engine=ENGINE, **kwargs))


@pytest.mark.parametrize("consolidated", [True, False])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_matches_zarr_engine(stores: dict[Any, Path], zarr_format: int,
                             consolidated: bool) -> None:
    expected, actual = _open_both(stores[zarr_format, consolidated])
    xr.testing.assert_identical(expected, actual)
    if consolidated:  # else zarr-python lists members in the directory's order
        assert list(actual.variables) == list(expected.variables)
    assert actual.encoding == expected.encoding
    assert_same_encoding(expected, actual)
    # the values too, decoded: masked, unpacked, times, text
    assert np.isnan(actual["temp"].values[2, 3])
    assert actual["packed"].dtype == np.float64 and np.isnan(actual["packed"].values[1])
    assert actual["count"].dtype == np.float32 and np.isnan(actual["count"].values[2])
    assert actual["time"].dtype.kind == "M" and actual["lag"].dtype.kind == "m"
    assert actual["name"].values.tolist() == ["a", "bb", "", "dddd", "e", "ff"]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("options", [
    {"decode_times": False},
    {"mask_and_scale": False},
    {"decode_cf": False},
    {"decode_timedelta": False},
    {"decode_coords": False},
    {"concat_characters": False},
    {"drop_variables": ["count", "lat"]},
    {"consolidated": True},
    {"consolidated": False},
])
def test_decoding_options_match(stores: dict[Any, Path], zarr_format: int,
                                options: dict[str, Any]) -> None:
    expected, actual = _open_both(stores[zarr_format, True], **options)
    xr.testing.assert_identical(expected, actual)
    assert_same_encoding(expected, actual)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_chunks_give_dask_arrays_on_the_zarr_chunks(stores: dict[Any, Path],
                                                    zarr_format: int) -> None:
    pytest.importorskip("dask.array")
    expected, actual = _open_both(stores[zarr_format, False], chunks={})
    xr.testing.assert_identical(expected, actual)
    assert actual["temp"].chunks == ((2,) * 4, (3, 3))
    for name, var in expected.data_vars.items():
        assert actual[name].chunks == var.chunks, name
    xr.testing.assert_identical(expected.compute(), actual.compute())


def test_sharded_arrays_report_chunks_and_shards(tmp_path: Path) -> None:
    pytest.importorskip("dask.array")
    path = _write(_dataset(), tmp_path / "sharded.zarr", 3, True,
                  shards={"temp": (4, 6), "count": (8,)})
    expected, actual = _open_both(path, chunks={})
    xr.testing.assert_identical(expected, actual)
    assert_same_encoding(expected, actual)
    enc = actual["temp"].encoding
    # xarray's engine="zarr" prefers the inner chunks, which tile the shards
    assert (enc["chunks"], enc["shards"], enc["preferred_chunks"]) == (
        (2, 3), (4, 6), {"time": 2, "x": 3})
    assert actual["temp"].chunks == expected["temp"].chunks == ((2,) * 4, (3, 3))
    np.testing.assert_array_equal(actual["temp"].values, expected["temp"].values)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_encoding_writes_back(stores: dict[Any, Path], tmp_path: Path,
                              zarr_format: int) -> None:
    """A dataset opened here is written again by xarray's to_zarr (zarr-python) from its
    encoding as it is: the codecs, chunks and shards in the form this engine reports them."""
    import numcodecs

    ds = _dataset()
    # codecs other than the defaults, which a lost encoding would also give
    ds["temp"].encoding["compressors"] = (
        (numcodecs.Zlib(level=3),) if zarr_format == 2 else
        ({"name": "zstd", "configuration": {"level": 5, "checksum": True}},))
    source = _write(ds, tmp_path / "source.zarr", zarr_format, True,
                    shards={"temp": (4, 6)} if zarr_format == 3 else None)
    opened = xr.open_dataset(source, engine=ENGINE)
    if zarr_format == 2:
        # engine="zarr" reports the same (VLenUTF8(),) filters for v2 text, and zarr-python
        # writes an array from them that it cannot read back ('<U4' with vlen-utf8)
        del opened["name"].encoding["filters"]
    copy = tmp_path / "copy.zarr"
    opened.to_zarr(copy, mode="w", zarr_format=zarr_format)
    expected, actual = _open_both(copy)
    xr.testing.assert_identical(expected, actual)
    original = xr.open_dataset(source, engine="zarr")
    xr.testing.assert_identical(original, actual)
    assert "level=" + ("3" if zarr_format == 2 else "5") in str(
        expected["temp"].encoding["compressors"])
    for name, var in original.variables.items():
        for key in ("chunks", "shards", "compressors", "serializer"):
            if key in var.encoding:
                assert str(expected[name].encoding[key]) == str(var.encoding[key]), (name, key)


# -- selections read through the BackendArray ----------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_selections_match(stores: dict[Any, Path], zarr_format: int) -> None:
    expected, actual = _open_both(stores[zarr_format, True])
    memory = expected.load()
    point = xr.DataArray([0, 7, 3, 3], dims="p")
    where = xr.DataArray([5, 0, 2, 1], dims="p")
    selections = [
        {"time": 0},
        {"time": -1, "x": slice(None, None, -2)},
        {"time": slice(6, 1, -3), "x": [5, 0, 2]},        # outer, unsorted
        {"time": [1, 1, 6], "x": slice(1, 5)},            # outer, repeated
        {"time": point, "x": where},                      # vectorized
        {"time": point},
    ]
    for sel in selections:
        for name in ("temp", "packed", "name", "time"):
            got = actual[name].isel({k: v for k, v in sel.items()
                                     if k in actual[name].dims})
            want = memory[name].isel({k: v for k, v in sel.items()
                                      if k in memory[name].dims})
            xr.testing.assert_identical(got.load(), want)
    by_label = actual["temp"].sel(time="2000-01-03", x=[10, 40])
    xr.testing.assert_identical(by_label.load(), memory["temp"].sel(time="2000-01-03",
                                                                    x=[10, 40]))
    assert actual["scalar"].values.item() == 3.25


def test_load_async(stores: dict[Any, Path]) -> None:
    expected, actual = _open_both(stores[3, True])
    if not hasattr(actual, "load_async"):
        pytest.skip("this xarray has no Dataset.load_async")
    for sel in ({"time": [0, 5], "x": slice(1, 4)},                  # outer: a thread
                {"time": 3, "x": slice(None, None, -1)},               # basic: read_async
                {"time": xr.DataArray([1, 2], dims="p"),               # vectorized
                 "x": xr.DataArray([0, 5], dims="p")}):
        loaded = asyncio.run(actual.isel(sel).load_async())
        xr.testing.assert_identical(loaded, expected.isel(sel).load())


def test_pickled_dataset_reads_the_same(stores: dict[Any, Path]) -> None:
    """What dask's distributed scheduler does with a lazily opened dataset's tasks."""
    import pickle

    expected, actual = _open_both(stores[2, True])
    again = pickle.loads(pickle.dumps(actual.isel(time=slice(2, 6))))
    xr.testing.assert_identical(again.load(), expected.isel(time=slice(2, 6)).load())


# -- laziness: what opening and selecting read ---------------------------------------------------


class CountingStore(zarr3c.Store):
    """Wraps a store and records every key read (its read-into hooks left to the base
    class, so that every read goes through get, get_many or get_partial_values)."""

    def __init__(self, inner: zarr3c.Store):
        super().__init__(read_only=True)
        self.inner = inner
        self.keys: list[str] = []
        self.calls: Counter[str] = Counter()

    def get(self, key: str) -> Any:
        self.keys.append(key)
        return self.inner.get(key)

    def get_many(self, keys: Any) -> list[Any]:
        keys = list(keys)
        self.keys.extend(keys)
        return self.inner.get_many(keys)

    def get_partial_values(self, key_ranges: Any) -> list[Any]:
        key_ranges = list(key_ranges)
        self.keys.extend(k for k, _ in key_ranges)
        return self.inner.get_partial_values(key_ranges)

    def exists(self, key: str) -> bool:
        self.keys.append(key)
        return self.inner.exists(key)

    def set(self, key: str, value: Any) -> None:
        raise AssertionError(f"a reader wrote {key!r}")

    def erase(self, key: str) -> None:
        raise AssertionError(f"a reader erased {key!r}")

    def list(self) -> Any:
        self.calls["list"] += 1
        return self.inner.list()

    def list_prefix(self, prefix: str) -> Any:
        self.calls["list"] += 1
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> Any:
        self.calls["list"] += 1
        return self.inner.list_dir(prefix)

    def chunk_reads(self) -> set[str]:
        """The keys read that are not metadata documents."""
        documents = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
        return {k for k in self.keys if k.rsplit("/", 1)[-1] not in documents}


def _chunk_key(zarr_format: int, name: str, *coords: int) -> str:
    if zarr_format == 3:
        return "/".join([name, "c", *map(str, coords)])
    return f"{name}/" + ".".join(map(str, coords))


@pytest.mark.parametrize("consolidated", [True, False])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_reads_metadata_and_selections_read_their_chunks(
        stores: dict[Any, Path], zarr_format: int, consolidated: bool) -> None:
    store = CountingStore(zarr3c.LocalStore(stores[zarr_format, consolidated]))
    k = lambda *c: _chunk_key(zarr_format, *c)  # noqa: E731
    # The backend itself reads metadata alone ...
    ENGINE().open_dataset(store, consolidated=consolidated, decode_times=False)
    assert store.chunk_reads() == set()
    if consolidated:
        # the root's documents alone (v2 after the probe for a v3 zarr.json)
        documents = {"zarr.json"} | ({".zmetadata", ".zgroup", ".zattrs"}
                                     if zarr_format == 2 else set())
        assert set(store.keys) <= documents
        assert store.calls["list"] == 0
    # ... but for the first and last time, which xarray's time decoding reads ...
    store.keys.clear()
    ENGINE().open_dataset(store, consolidated=consolidated)
    assert store.chunk_reads() == {k("time", 0), k("time", 1)}
    # ... and xarray loads the dimension coordinates for its indexes, nothing else.
    store.keys.clear()
    ds = xr.open_dataset(store, engine=ENGINE, consolidated=consolidated)
    assert store.chunk_reads() == {k("time", 0), k("time", 1), k("x", 0)}
    # One time step: the two chunks of row 1 of temp's (2, 3) chunks.
    store.keys.clear()
    step = ds["temp"].isel(time=3).values
    assert store.chunk_reads() == {k("temp", 1, 0), k("temp", 1, 1)}
    np.testing.assert_array_equal(step, np.arange(18, 24, dtype="float32"))
    # An outer and a vectorized selection read only the chunks holding their points.
    store.keys.clear()
    outer = ds["temp"].isel(time=[7, 0], x=[1]).values
    assert store.chunk_reads() == {k("temp", 3, 0), k("temp", 0, 0)}
    assert outer.tolist() == [[43.0], [1.0]]
    store.keys.clear()
    points = ds["temp"].isel(time=xr.DataArray([5], dims="p"),
                             x=xr.DataArray([4], dims="p")).values
    assert store.chunk_reads() == {k("temp", 2, 1)}
    assert points.tolist() == [34.0]


# -- groups and DataTree -------------------------------------------------------------------------


def _tree() -> Any:
    root = xr.Dataset({"a": ("x", np.arange(3))}, coords={"x": [1, 2, 3]},
                      attrs={"level": 0})
    child = xr.Dataset({"b": (("time",), np.array([1.5, np.nan]))},
                       coords={"time": pd.date_range("2001-01-01", periods=2)},
                       attrs={"level": 1})
    leaf = xr.Dataset({"c": ("x", np.array(["p", "q", "r"], dtype=object))})
    return xr.DataTree.from_dict({"/": root, "/child": child, "/child/leaf": leaf})


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_groups_and_datatree_match(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "tree.zarr"
    _tree().to_zarr(path, mode="w", zarr_format=zarr_format)
    for group in (None, "child", "/child/leaf"):
        expected, actual = _open_both(path, group=group)
        xr.testing.assert_identical(expected, actual)
        assert_same_encoding(expected, actual)
    expected_tree = xr.open_datatree(path, engine="zarr")
    actual_tree = xr.open_datatree(path, engine=ENGINE)
    xr.testing.assert_identical(expected_tree, actual_tree)
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarr", group="child"),
                                xr.open_datatree(path, engine=ENGINE, group="child"))
    for group in (None, "child"):
        want = xr.open_groups(path, engine="zarr", group=group)
        got = xr.open_groups(path, engine=ENGINE, group=group)
        assert list(got) == list(want)
        for key in want:
            xr.testing.assert_identical(want[key], got[key])


# -- stores and URLs -----------------------------------------------------------------------------


def _zip(directory: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as zf:
        for file in sorted(directory.rglob("*")):
            if file.is_file():
                zf.write(file, file.relative_to(directory).as_posix())
    return target


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_stores_and_urls(stores: dict[Any, Path], tmp_path: Path, zarr_format: int) -> None:
    path = stores[zarr_format, True]
    expected = xr.open_dataset(path, engine="zarr")
    memory = zarr3c.MemoryStore()
    zarr3c.copy_store(zarr3c.LocalStore(path), memory)
    opened = [
        str(path), path, f"file://{path}", zarr3c.LocalStore(path, read_only=True), memory,
        zarr3c.open_group(path, mode="r"),
        zarr3c.ZipStore(_zip(path, tmp_path / "data.zip"), mode="r"),
    ]
    for source in opened:
        actual = xr.open_dataset(source, engine=ENGINE)
        xr.testing.assert_identical(expected, actual)
        actual.close()
    if isinstance(opened[-1], zarr3c.ZipStore):
        assert not opened[-1].closed  # a store passed in stays open
        opened[-1].close()


def test_fsspec_url_with_storage_options(stores: dict[Any, Path], tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    path = stores[3, True]
    url = f"simplecache::file://{path}"
    cache = tmp_path / "cache"
    actual = xr.open_dataset(url, engine=ENGINE,
                             storage_options={"simplecache": {"cache_storage": str(cache)}})
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarr"), actual)
    assert any(cache.iterdir())  # the options reached the filesystem


def test_object_store(stores: dict[Any, Path]) -> None:
    """An ObjectStore (obstore, the path s3://, gs:// and az:// URLs take), over obstore's
    LocalStore to stay offline."""
    obstore = pytest.importorskip("obstore")
    path = stores[3, True]
    store = zarr3c.ObjectStore(obstore.store.LocalStore(path), read_only=True)
    xr.testing.assert_identical(xr.open_dataset(path, engine="zarr"),
                                xr.open_dataset(store, engine=ENGINE))


def test_open_mfdataset(tmp_path: Path) -> None:
    pytest.importorskip("dask.array")
    ds = _dataset().drop_vars(["scalar"])
    parts = [_write(ds.isel(time=slice(i, i + 4)), tmp_path / f"p{i}.zarr", 3, True)
             for i in (0, 4)]
    expected = xr.open_mfdataset(parts, engine="zarr", combine="by_coords")
    actual = xr.open_mfdataset(parts, engine=ENGINE, combine="by_coords")
    xr.testing.assert_identical(expected.compute(), actual.compute())


def test_zarr_fill_value_as_mask(tmp_path: Path) -> None:
    g = zarr3c.create_group(tmp_path / "m.zarr")
    a = g.create_array("v", shape=(4,), dtype="int16", fill_value=0, dimension_names=("t",))
    a[...] = [0, 1, 2, 0]
    kept = xr.open_dataset(g.store, engine=ENGINE)["v"]
    assert kept.values.tolist() == [0, 1, 2, 0] and kept.encoding["fill_value"] == 0
    masked = xr.open_dataset(g.store, engine=ENGINE, use_zarr_fill_value_as_mask=True)["v"]
    np.testing.assert_array_equal(masked.values, [np.nan, 1, 2, np.nan])
    assert masked.encoding["_FillValue"] == 0 and "fill_value" not in masked.encoding


def test_fill_value_forms(tmp_path: Path) -> None:
    """_FillValue in each form xarray writes it to Zarr v3, and each kind of array."""
    ds = xr.Dataset({
        "f4": ("x", np.array([1.0, np.nan, 3.0], dtype="float32")),
        "f8": ("x", np.array([1.0, -9.5, 3.0])),
        "c8": ("x", np.array([1 + 1j, 2, 3], dtype="complex64")),
        "u1": ("x", np.array([1, 255, 3], dtype="uint8")),
        "b": ("x", np.array([True, False, True])),
    })
    ds["f8"].encoding["_FillValue"] = -9.5
    ds["u1"].encoding["_FillValue"] = 255
    ds["c8"].encoding["_FillValue"] = 2 + 0j
    for fmt in (2, 3):
        path = tmp_path / f"f{fmt}.zarr"
        ds.to_zarr(path, mode="w", zarr_format=fmt)
        expected, actual = _open_both(path)
        xr.testing.assert_identical(expected, actual)
        assert_same_encoding(expected, actual)
    stored = json.loads((tmp_path / "f3.zarr" / "f8" / "zarr.json").read_text())
    assert isinstance(stored["attributes"]["_FillValue"], str)  # the base64 form was read


def test_nczarr_dimensions(tmp_path: Path) -> None:
    """Zarr v2 written by NCZarr: dimensions from the ``.zarray`` field ``_NCZARR_ARRAY``,
    NCZarr's ``_nc*`` attributes hidden, as xarray's zarr engine reads them."""
    path = tmp_path / "nc.zarr"
    g = zarr3c.create_group(path, zarr_format=2, attributes={"title": "nc",
                                                              "_nczarr_group": {"dims": {}}})
    a = g.create_array("v", shape=(2, 3), dtype="float32", chunks=(1, 3),
                       attributes={"units": "m", "_nczarr_attr": {"types": {}}})
    a[...] = np.arange(6).reshape(2, 3)
    zarray = path / "v" / ".zarray"
    doc = json.loads(zarray.read_text())
    doc["_NCZARR_ARRAY"] = {"dimrefs": ["/y", "/x"], "storage": "chunked"}
    zarray.write_text(json.dumps(doc))
    expected, actual = _open_both(path, consolidated=False)
    xr.testing.assert_identical(expected, actual)
    assert actual["v"].dims == ("y", "x") and actual["v"].attrs == {"units": "m"}
    assert actual.attrs == {"title": "nc"}


# -- the entry point -----------------------------------------------------------------------------


def test_entry_point_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["xarray.backends"]["zarr3c"]
    module, _, name = target.partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is Zarr3cBackendEntrypoint
    extras = project["optional-dependencies"]
    assert any(r.startswith("xarray") for r in extras["xarray"])
    assert any(r.startswith("xarray") for r in extras["test"])


def test_entry_point_found_by_xarray(stores: dict[Any, Path], tmp_path: Path) -> None:
    """xarray finds engine="zarr3c" by the entry point pyproject declares (installed here
    as a distribution of its own, since the test environment may predate the entry
    point), and opens a store with it."""
    import subprocess

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["xarray.backends"]["zarr3c"]
    dist = tmp_path / "zarr3c_entry_probe-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zarr3c-entry-probe\n"
                                   "Version: 0\n")
    (dist / "entry_points.txt").write_text(f"[xarray.backends]\nzarr3c = {target}\n")
    code = (
        "import sys, warnings, xarray as xr\n"
        "warnings.simplefilter('ignore')\n"
        "ds = xr.open_dataset(sys.argv[1], engine='zarr3c')\n"
        "print(type(xr.backends.list_engines()['zarr3c']).__name__, ds['temp'].shape)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", code, str(stores[3, True])],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["Zarr3cBackendEntrypoint", "(8,", "6)"]


def test_guess_can_open(stores: dict[Any, Path], tmp_path: Path) -> None:
    engine = ENGINE()
    plain = tmp_path / "no_suffix"
    zarr3c.create_group(plain)
    assert engine.guess_can_open(str(stores[2, True]))
    assert engine.guess_can_open(stores[3, False])
    assert engine.guess_can_open("s3://bucket/data.zarr/")
    assert engine.guess_can_open(plain) and engine.guess_can_open(zarr3c.MemoryStore())
    assert not engine.guess_can_open(tmp_path)  # a directory without Zarr documents
    assert not engine.guess_can_open("data.nc") and not engine.guess_can_open(b"bytes")


# -- bad input -----------------------------------------------------------------------------------


def test_not_zarr(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("not zarr")
    for path in (tmp_path / "plain", tmp_path / "missing.zarr"):
        with pytest.raises(FileNotFoundError) as info:
            xr.open_dataset(path, engine=ENGINE)
        assert isinstance(info.value, GroupNotFoundError)
        assert "plain" in str(info.value) or "missing" in str(info.value)


def test_missing_dimension_names(tmp_path: Path) -> None:
    v3 = zarr3c.create_group(tmp_path / "v3.zarr")
    v3.create_array("ok", shape=(2,), dtype="int8", dimension_names=("x",))
    v3.create_array("anon", shape=(2, 3), dtype="int8")
    with pytest.raises(KeyError, match="variable 'anon'.*dimension_names") as info:
        xr.open_dataset(v3.store, engine=ENGINE)
    assert isinstance(info.value, MissingDimensionsError)
    with pytest.raises(KeyError, match="dimension_names"):  # the oracle refuses it too
        xr.open_dataset(tmp_path / "v3.zarr", engine="zarr")
    # dropped, the array is never opened (engine="zarr" opens it and fails all the same)
    kept = xr.open_dataset(v3.store, engine=ENGINE, drop_variables="anon")
    assert list(kept.variables) == ["ok"]
    v2 = zarr3c.create_group(tmp_path / "v2.zarr", zarr_format=2)
    v2.create_array("plain", shape=(2,), dtype="int8")
    with pytest.raises(MissingDimensionsError, match="variable 'plain'.*_ARRAY_DIMENSIONS"):
        xr.open_dataset(v2.store, engine=ENGINE)
    v2["plain"].attrs["_ARRAY_DIMENSIONS"] = ["x", "y"]  # two names for one axis
    with pytest.raises(MissingDimensionsError, match="variable 'plain'"):
        xr.open_dataset(v2.store, engine=ENGINE)


@pytest.mark.parametrize(("dtype", "bad"), [
    ("float32", "not base64!"), ("float32", "AAAA"), ("float32", [1, 2]),
    ("float32", {"a": 1}), ("float32", True), ("int16", 1.5), ("int16", "7"),
    ("complex64", ["AAAAAAAA8D8="]), ("bool", "yes"),
])
def test_undecodable_fill_value(tmp_path: Path, dtype: str, bad: Any) -> None:
    g = zarr3c.create_group(tmp_path / "f.zarr")
    g.create_array("temp", shape=(2,), dtype=dtype, dimension_names=("x",),
                   attributes={"_FillValue": bad})
    with pytest.raises(MetadataError, match="variable 'temp'.*_FillValue") as info:
        xr.open_dataset(g.store, engine=ENGINE)
    assert isinstance(info.value, ValueError) and "temp/zarr.json" in str(info.value)


@pytest.mark.parametrize(("dtype", "stored", "decoded"), [
    ("float32", "AAAAAAAA+H8=", math.nan),      # xarray's base64 of a double
    ("float64", "AAAAAAAAJMA=", -10.0),
    ("float64", -10, -10.0),                    # a plain number, as other writers put it
    ("float64", "-Infinity", -math.inf),        # the v3 spec's words
    ("int8", -1, -1), ("uint16", 7.0, 7), ("bool", False, False),
    ("complex128", ["AAAAAAAA8D8=", "AAAAAAAAAEA="], 1 + 2j),
    ("S3", "YWJj", b"abc"), ("<U3", "abc", "abc"),
])
def test_fill_value_decoding(dtype: str, stored: Any, decoded: Any) -> None:
    from zarr3c.xarray.fill_values import decode_fill_value

    got = decode_fill_value(stored, np.dtype(dtype), variable="v")
    assert type(got) is type(decoded)
    assert got == decoded or (math.isnan(got) and math.isnan(decoded))


def test_bad_arguments(stores: dict[Any, Path], tmp_path: Path) -> None:
    path = stores[3, False]
    with pytest.raises(InvalidArgumentError, match="mode"):
        xr.open_dataset(path, engine=ENGINE, mode="w")
    with pytest.raises(ContainsArrayError, match="'temp' is an array"):
        xr.open_dataset(stores[3, True], engine=ENGINE, group="temp")
    with pytest.raises(GroupNotFoundError, match="nothere"):
        xr.open_dataset(stores[3, True], engine=ENGINE, group="nothere")
    with pytest.raises(MetadataError, match="consolidated"):
        xr.open_dataset(path, engine=ENGINE, consolidated=True)
    with pytest.raises(zarr3c.errors.StoreError):
        xr.open_dataset(path, engine=ENGINE, storage_options={"anon": True})
    assert not os.path.exists(tmp_path / "created.zarr")
    with pytest.raises(FileNotFoundError):
        xr.open_dataset(tmp_path / "created.zarr", engine=ENGINE, mode="r+")
    assert not os.path.exists(tmp_path / "created.zarr")  # nothing was created


def test_no_xarray_import_in_zarr3c() -> None:
    """Importing zarr3c does not import xarray (only zarr3c.xarray does)."""
    import subprocess

    code = "import sys, zarr3c; print('xarray' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    assert out.stdout.strip() == "False"

