"""zarr3c.xarray.to_zarr: what it writes reads back identical through xarray's zarr engine.

The oracle is xarray itself: the dataset written is compared with what ``xr.open_zarr``
(zarr-python) reads back, and the stored metadata documents with those ``Dataset.to_zarr``
writes for the same dataset; a DataTree likewise, through ``open_datatree``.  Datasets are
tiny; the dask tests use the synchronous or
threaded scheduler.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pd = pytest.importorskip("pandas")

import zarr3c  # noqa: E402
from zarr3c.errors import (  # noqa: E402
    ContainsGroupError,
    GroupNotFoundError,
    IndexingError,
    InvalidArgumentError,
    InvalidTypeError,
    MemberNotFoundError,
    MetadataError,
    ShapeMismatchError,
    UnsupportedFeatureError,
    ZarrError,
)
from zarr3c.xarray import to_zarr  # noqa: E402
from zarr3c.xarray.write_tree import tree_to_zarr  # noqa: E402

FORMATS = [2, 3]

pytestmark = pytest.mark.filterwarnings(
    "ignore::UserWarning",  # zarr-python's unstable-dtype and consolidated-metadata notes
    "ignore::RuntimeWarning",
    "ignore::FutureWarning",
)


def sample() -> Any:
    """A dataset with what xarray encodes: times, timedeltas, strings of three kinds, NaN
    fills, packed ints, bools, a non-index coordinate and array attributes."""
    ds = xr.Dataset(
        {
            "t2m": (("time", "x"), np.array([[1.5, np.nan, 3], [4, 5, 6]], "float32"),
                    {"units": "K", "levels": np.array([1, 2])}),
            "count": (("time",), np.array([0, 2], "int16")),
            "ustr": (("x",), np.array(["a", "bc", "def"])),
            "ostr": (("x",), np.array(["a", "", "def"], dtype=object)),
            "bstr": (("x",), np.array([b"a", b"bc", b"d"])),
            "flag": (("x",), np.array([True, False, True])),
            "dt": (("x",), pd.to_timedelta([1, 2, 3], unit="h")),
            "packed": (("x",), np.array([1.0, np.nan, 2.5])),
        },
        coords={"time": pd.date_range("2000-01-01", periods=2), "x": [10, 20, 30],
                "lat": (("x",), [1.0, 2.0, 3.0])},
        attrs={"title": "sample", "version": 2},
    )
    ds["packed"].encoding = {"dtype": "int16", "scale_factor": 0.1, "add_offset": 1.0,
                             "_FillValue": -99}
    return ds


def read(path: Any, **kw: Any) -> Any:
    """The dataset zarr-python reads back, loaded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(path, **kw).load()


def documents(root: Path) -> dict[str, dict[str, Any]]:
    """Every metadata document under ``root`` (codecs and consolidated copies left out: the
    two writers' default compressors differ)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name in (".zarray", ".zattrs", ".zgroup", "zarr.json"):
            doc = json.loads(p.read_text())
            for key in ("consolidated_metadata", "codecs", "compressor"):
                doc.pop(key, None)
            out[str(p.relative_to(root))] = doc
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_identical(tmp_path: Path, fmt: int) -> None:
    to_zarr(sample(), tmp_path / "a.zarr", zarr_format=fmt)
    xr.testing.assert_identical(read(tmp_path / "a.zarr"), sample())


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_as_xarray_writes_it(tmp_path: Path, fmt: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample().to_zarr(tmp_path / "xr.zarr", zarr_format=fmt)
    to_zarr(sample(), tmp_path / "z3c.zarr", zarr_format=fmt)
    theirs, ours = documents(tmp_path / "xr.zarr"), documents(tmp_path / "z3c.zarr")
    assert ours == theirs
    # the points the comparison covers, spelt out
    if fmt == 2:
        assert ours["count/.zarray"]["fill_value"] is None  # not 0: that would mask zeros
        assert ours["t2m/.zarray"]["fill_value"] == "NaN"
        assert ours["packed/.zarray"]["fill_value"] == -99
        assert ours["t2m/.zattrs"]["_ARRAY_DIMENSIONS"] == ["time", "x"]
        assert ours["ostr/.zarray"]["dtype"] == "|O"
    else:
        assert ours["t2m/zarr.json"]["dimension_names"] == ["time", "x"]
        assert ours["t2m/zarr.json"]["attributes"]["_FillValue"] == "AAAAAAAA+H8="
        assert ours["ostr/zarr.json"]["data_type"] == "string"
        assert ours["t2m/zarr.json"]["attributes"]["coordinates"] == "lat"


@pytest.mark.parametrize("fmt", FORMATS)
def test_store_object_group_and_consolidated(fmt: int) -> None:
    store = zarr3c.MemoryStore()
    to_zarr(sample(), store, group="sub/ds", zarr_format=fmt)
    # consolidated at the store's root, as xarray does, and listing the new arrays
    root = zarr3c.open_consolidated(store)
    assert root.uses_consolidated_metadata
    assert root["sub/ds/t2m"].shape == (2, 3)
    g = zarr3c.open_group(store, "sub/ds", mode="r")
    assert g.attrs["title"] == "sample"
    assert g["t2m"][...].shape == (2, 3)


@pytest.mark.parametrize("fmt", FORMATS)
def test_group_read_by_zarr_python(tmp_path: Path, fmt: int) -> None:
    to_zarr(sample(), tmp_path / "g.zarr", group="inner", zarr_format=fmt,
            consolidated=False)
    xr.testing.assert_identical(read(tmp_path / "g.zarr", group="inner", consolidated=False),
                                sample())


def test_consolidated_false_writes_none(tmp_path: Path) -> None:
    to_zarr(sample(), tmp_path / "n.zarr", consolidated=False)
    with pytest.raises(ZarrError):
        zarr3c.open_consolidated(tmp_path / "n.zarr")


@pytest.mark.parametrize("fmt", FORMATS)
def test_modes(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "m.zarr"
    to_zarr(sample(), path, zarr_format=fmt)
    with pytest.raises(ContainsGroupError):
        to_zarr(sample(), path)  # "w-" is the default
    other = sample().isel(x=slice(0, 2)).drop_vars("count")
    to_zarr(other, path, mode="w")
    xr.testing.assert_identical(read(path), other)
    assert "count" not in zarr3c.open_group(path, mode="r")
    # "a": adds variables, overwrites stored ones, replaces the dataset's attributes
    more = other.assign(extra=("x", np.array([7, 8], "int32")))
    more["t2m"] = more["t2m"] * 2
    more.attrs = {"title": "again"}
    to_zarr(more, path, mode="a")
    xr.testing.assert_identical(read(path), more)
    # "r+": only stored variables, no metadata change
    with pytest.raises(InvalidArgumentError, match="new"):
        to_zarr(more.assign(novel=("x", [1, 2])), path, mode="r+")
    changed = more.copy()
    changed["extra"] = changed["extra"] + 1
    changed.attrs = {"title": "ignored by r+"}
    to_zarr(changed, path, mode="r+")
    assert read(path).attrs == {"title": "again"}
    np.testing.assert_array_equal(read(path)["extra"].values, [8, 9])


def test_mode_r_plus_needs_a_group(tmp_path: Path) -> None:
    with pytest.raises(GroupNotFoundError):
        to_zarr(sample(), tmp_path / "missing.zarr", mode="r+")


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="mode"):
        to_zarr(sample(), zarr3c.MemoryStore(), mode="x")
    with pytest.raises(InvalidArgumentError, match="append_dim"):
        to_zarr(sample(), zarr3c.MemoryStore(), mode="w", append_dim="time")
    with pytest.raises(InvalidArgumentError, match="region"):
        to_zarr(sample(), zarr3c.MemoryStore(), mode="w", region={"x": slice(0, 1)})
    with pytest.raises(InvalidTypeError):
        to_zarr(np.zeros(3), zarr3c.MemoryStore())
    with pytest.raises(InvalidArgumentError, match="'t2m'.*unexpected encoding"):
        to_zarr(sample(), zarr3c.MemoryStore(), encoding={"t2m": {"bogus": 1}})
    with pytest.raises(MemberNotFoundError, match="nope"):
        to_zarr(sample(), zarr3c.MemoryStore(), encoding={"nope": {"chunks": 1}})
    with pytest.raises(InvalidArgumentError, match="fill_value"):
        to_zarr(sample(), zarr3c.MemoryStore(), zarr_format=2,
                encoding={"t2m": {"fill_value": 1.0}})


@pytest.mark.parametrize("fmt", FORMATS)
def test_encoding_keys(tmp_path: Path, fmt: int) -> None:
    ds = sample()
    enc: dict[str, Any] = {
        "t2m": {"chunks": (1, 2), "dtype": "float64", "_FillValue": -1.0},
        "time": {"units": "hours since 1999-12-31", "calendar": "standard",
                 "dtype": "int32"},
        "count": {"compressors": None},
    }
    if fmt == 3:
        enc["t2m"]["shards"] = (2, 2)
    to_zarr(ds, tmp_path / "e.zarr", zarr_format=fmt, encoding=enc)
    xr.testing.assert_identical(read(tmp_path / "e.zarr"), ds)
    g = zarr3c.open_group(tmp_path / "e.zarr", mode="r")
    assert g["t2m"].dtype == np.float64
    assert g["t2m"].chunks == (1, 2) and g["t2m"].shards == ((2, 2) if fmt == 3 else None)
    assert g["time"].attrs["units"] == "hours since 1999-12-31"
    assert g["time"].dtype == np.int32
    np.testing.assert_array_equal(g["time"][...], [24, 48])
    if fmt == 2:
        assert g["t2m"].metadata.to_dict()["fill_value"] == -1.0
        assert g["count"].metadata.to_dict()["compressor"] is None
    else:
        assert g["t2m"].attrs["_FillValue"] == "AAAAAAAA8L8="  # -1.0, base64 float64


def test_v3_fill_value_encoding(tmp_path: Path) -> None:
    ds = xr.Dataset({"v": ("x", np.array([1, 2], "int8"))})
    to_zarr(ds, tmp_path / "f.zarr", encoding={"v": {"fill_value": 5}})
    assert zarr3c.open_array(tmp_path / "f.zarr", "v").fill_value == 5
    xr.testing.assert_identical(read(tmp_path / "f.zarr"), ds)


@pytest.mark.parametrize("fmt", FORMATS)
def test_append_dim(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "ap.zarr"
    full = sample()
    full = xr.concat([full, full.assign_coords(time=full.time + np.timedelta64(2, "D"))],
                     dim="time", data_vars="minimal", coords="minimal")
    first, second = full.isel(time=slice(0, 2)), full.isel(time=slice(2, 4))
    to_zarr(first, path, zarr_format=fmt)
    to_zarr(second, path, append_dim="time")  # mode None -> "a"
    xr.testing.assert_identical(read(path), full)
    # the appended times were encoded with the stored units
    assert zarr3c.open_array(path, "time")[...].tolist() == [0, 1, 2, 3]


def test_append_keeps_stored_packing(tmp_path: Path) -> None:
    path = tmp_path / "pk.zarr"
    ds = xr.Dataset({"p": ("t", np.array([1.0, 2.0]))}, coords={"t": [0, 1]})
    to_zarr(ds, path, encoding={"p": {"dtype": "int16", "scale_factor": 0.5}})
    to_zarr(xr.Dataset({"p": ("t", np.array([3.0]))}, coords={"t": [2]}), path,
            append_dim="t")
    a = zarr3c.open_array(path, "p")
    assert a.dtype == np.int16 and a[...].tolist() == [2, 4, 6]


def test_append_mode_a_minus_leaves_other_variables(tmp_path: Path) -> None:
    path = tmp_path / "am.zarr"
    ds = xr.Dataset({"v": ("t", [1.0, 2.0]), "static": ("x", [5, 6])}, coords={"t": [0, 1]})
    to_zarr(ds, path)
    more = xr.Dataset({"v": ("t", [3.0]), "static": ("x", [0, 0])}, coords={"t": [2]})
    to_zarr(more, path, mode="a-", append_dim="t")
    back = read(path)
    assert back["static"].values.tolist() == [5, 6]
    assert back["v"].values.tolist() == [1.0, 2.0, 3.0]


def test_append_errors(tmp_path: Path) -> None:
    path = tmp_path / "ae.zarr"
    ds = xr.Dataset({"v": (("t", "x"), np.zeros((2, 3))), "s": ("t", np.array(["ab", "cd"]))},
                    coords={"t": [0, 1]})
    to_zarr(ds, path)
    with pytest.raises(InvalidArgumentError, match="'nope'"):
        to_zarr(ds, path, append_dim="nope")
    with pytest.raises(ShapeMismatchError, match="'v'"):
        to_zarr(ds.isel(x=slice(0, 2)).assign_coords(t=[2, 3]), path, append_dim="t")
    with pytest.raises(InvalidTypeError, match="'s'"):
        to_zarr(ds.assign(s=("t", np.array(["abcdef", "g"]))), path, append_dim="t")
    with pytest.raises(InvalidArgumentError, match="already stored"):
        to_zarr(ds, path, append_dim="t", encoding={"v": {"chunks": 1}})
    assert zarr3c.open_array(path, "v").shape == (2, 3)  # nothing grew


def test_append_transposed(tmp_path: Path) -> None:
    path = tmp_path / "tr.zarr"
    ds = xr.Dataset({"v": (("t", "x"), np.arange(6.0).reshape(2, 3))}, coords={"t": [0, 1]})
    to_zarr(ds, path)
    more = xr.Dataset({"v": (("x", "t"), np.full((3, 1), 9.0))}, coords={"t": [2]})
    to_zarr(more, path, append_dim="t")
    assert zarr3c.open_array(path, "v")[2].tolist() == [9.0, 9.0, 9.0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_region_slices_and_auto(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "r.zarr"
    ds = xr.Dataset({"v": (("t", "x"), np.zeros((6, 2))), "w": ("t", np.zeros(6, "int32")),
                     "static": ("x", [1, 2])},
                    coords={"t": pd.date_range("2020-01-01", periods=6), "x": [0, 1]})
    to_zarr(ds, path, zarr_format=fmt)
    part = ds.isel(t=slice(2, 4)).drop_vars(["static", "x"])
    part = part.assign(v=part.v + 1, w=part.w + 7)
    to_zarr(part, path, region={"t": slice(2, 4)})  # mode None -> "r+"
    part2 = ds.isel(t=slice(4, 6)).drop_vars("static")
    part2 = part2.assign(v=part2.v + 2)
    to_zarr(part2, path, region="auto")
    back = read(path)
    assert back["v"].values[:, 0].tolist() == [0, 0, 1, 1, 2, 2]
    assert back["w"].values.tolist() == [0, 0, 7, 7, 0, 0]
    xr.testing.assert_identical(back["t"], ds["t"])


def test_region_errors(tmp_path: Path) -> None:
    path = tmp_path / "re.zarr"
    ds = xr.Dataset({"v": ("t", np.zeros(4)), "s": ("x", [1])}, coords={"t": [0, 1, 2, 3]})
    to_zarr(ds, path)
    with pytest.raises(InvalidArgumentError, match=r"drop_vars\(\['s'\]\)"):
        to_zarr(ds.isel(t=slice(0, 2)), path, region={"t": slice(0, 2)})
    with pytest.raises(IndexingError, match="'t'"):
        to_zarr(ds.drop_vars("s").assign_coords(t=[7, 8, 9, 10]), path, region="auto")
    with pytest.raises(InvalidArgumentError, match="step"):
        to_zarr(ds.drop_vars("s").isel(t=[0, 2]), path, region={"t": slice(0, 4, 2)})
    with pytest.raises(ShapeMismatchError, match="'v'"):
        to_zarr(ds.drop_vars("s").isel(t=slice(0, 3)), path, region={"t": slice(0, 2)})


@pytest.mark.parametrize("fmt", FORMATS)
def test_dask_parallel_round_trip(tmp_path: Path, fmt: int) -> None:
    pytest.importorskip("dask.array")
    ds = sample().chunk({"x": 1, "time": 1})
    to_zarr(ds, tmp_path / "d.zarr", zarr_format=fmt)
    g = zarr3c.open_group(tmp_path / "d.zarr", mode="r")
    assert g["t2m"].chunks == (1, 1)  # the dask chunks
    xr.testing.assert_identical(read(tmp_path / "d.zarr"), sample())


def test_dask_blocks_stored_by_dask(tmp_path: Path) -> None:
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    x = da.arange(24.0, chunks=6).reshape(4, 6).rechunk((2, 3))
    ds = xr.Dataset({"v": (("y", "x"), x)})
    to_zarr(ds, tmp_path / "p.zarr")
    with dask.config.set(scheduler="threads"):
        to_zarr(ds * 2, tmp_path / "p.zarr", mode="w")
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "p.zarr", "v")[...],
                                  np.arange(24.0).reshape(4, 6) * 2)


def test_dask_compute_false(tmp_path: Path) -> None:
    da = pytest.importorskip("dask.array")
    from dask.delayed import Delayed

    ds = xr.Dataset({"v": ("x", da.arange(10.0, chunks=5))})
    lazy = to_zarr(ds, tmp_path / "c.zarr", compute=False)
    assert isinstance(lazy, Delayed)
    a = zarr3c.open_array(tmp_path / "c.zarr", "v")
    assert a.shape == (10,) and np.isnan(a[...]).all()  # metadata now, data later
    assert lazy.compute().path == ""  # the group written
    np.testing.assert_array_equal(a[...], np.arange(10.0))


def test_dask_misaligned_chunks_refused(tmp_path: Path) -> None:
    da = pytest.importorskip("dask.array")
    ds = xr.Dataset({"v": ("x", da.zeros(12, chunks=3))})
    with pytest.raises(InvalidArgumentError, match=r"'v'.*\[0, 4\)"):
        to_zarr(ds, tmp_path / "bad.zarr", encoding={"v": {"chunks": 4}})
    with pytest.raises(InvalidArgumentError, match="shard"):
        to_zarr(ds.chunk({"x": (3, 6, 3)}), tmp_path / "bad2.zarr",
                encoding={"v": {"chunks": (3,), "shards": (6,)}})
    with pytest.raises(InvalidArgumentError, match="not uniform"):
        to_zarr(ds.chunk({"x": (3, 5, 4)}), tmp_path / "bad3.zarr")
    # written under a lock instead, when asked
    to_zarr(ds + 1, tmp_path / "ok.zarr", encoding={"v": {"chunks": 4}}, safe_chunks=False)
    assert zarr3c.open_array(tmp_path / "ok.zarr", "v")[...].tolist() == [1.0] * 12


def test_dask_append_and_region_alignment(tmp_path: Path) -> None:
    da = pytest.importorskip("dask.array")
    path = tmp_path / "al.zarr"
    ds = xr.Dataset({"v": ("t", da.arange(4.0, chunks=2))}, coords={"t": np.arange(4)})
    to_zarr(ds, path)
    # appending 2 + 2 at offset 4: the edge at 6 is a chunk edge (chunks of 2)
    more = xr.Dataset({"v": ("t", da.arange(4.0, 8.0, chunks=2))}, coords={"t": np.arange(4, 8)})
    to_zarr(more, path, append_dim="t")
    assert zarr3c.open_array(path, "v")[...].tolist() == list(np.arange(8.0))
    # r+ region writes must start and end on chunk edges
    with pytest.raises(InvalidArgumentError, match="'v'"):
        to_zarr(xr.Dataset({"v": ("t", da.zeros(2, chunks=2))}), path,
                region={"t": slice(1, 3)})
    to_zarr(xr.Dataset({"v": ("t", da.zeros(2, chunks=2))}), path, region={"t": slice(2, 4)})
    assert zarr3c.open_array(path, "v")[...].tolist() == [0, 1, 0, 0, 4, 5, 6, 7]


def test_dataarray_and_rewrite_of_opened_dataset(tmp_path: Path) -> None:
    arr = xr.DataArray(np.arange(3.0), dims="x", name="h", attrs={"units": "m"})
    to_zarr(arr, tmp_path / "da.zarr", zarr_format=3)
    # a dataset opened by xarray's zarr engine carries zarr-python codecs in its encoding
    opened = xr.open_zarr(tmp_path / "da.zarr")
    to_zarr(opened, tmp_path / "again.zarr")
    xr.testing.assert_identical(read(tmp_path / "again.zarr"), arr.to_dataset())


def test_dask_writes_without_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    da = pytest.importorskip("dask.array")
    calls: list[dict[str, Any]] = []
    real = da.store

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(da, "store", spy)
    ds = xr.Dataset({"v": (("y", "x"), da.ones((4, 6), chunks=(2, 3))),
                     "w": ("x", da.zeros(6, chunks=6))})
    to_zarr(ds, tmp_path / "nl.zarr", encoding={"w": {"shards": 6, "chunks": 2}})
    assert len(calls) == 1 and calls[0]["lock"] is False  # aligned: one task per chunk
    assert len(calls[0]["regions"]) == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_append_to_a_store_xarray_wrote(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "x.zarr"
    full = sample()
    full = xr.concat([full, full.assign_coords(time=full.time + np.timedelta64(2, "D"))],
                     dim="time", data_vars="minimal", coords="minimal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full.isel(time=slice(0, 2)).to_zarr(path, zarr_format=fmt)
    to_zarr(full.isel(time=slice(2, 4)), path, append_dim="time")
    xr.testing.assert_identical(read(path), full)


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_times_and_string_dtype(tmp_path: Path, fmt: int) -> None:
    ds = xr.Dataset({
        "when": ("n", np.array(["2001-01-01", "NaT", "2001-01-03"], "datetime64[ns]")),
        "name": ("n", np.array(["a", "bb", "ccc"], dtype=np.dtypes.StringDType())),
    })
    to_zarr(ds, tmp_path / "nat.zarr", zarr_format=fmt)
    back = read(tmp_path / "nat.zarr")
    xr.testing.assert_identical(back[["when"]], ds[["when"]])
    assert back["name"].values.tolist() == ["a", "bb", "ccc"]
    stored = zarr3c.open_array(tmp_path / "nat.zarr", "name").metadata.to_dict()
    # as Dataset.to_zarr stores them: variable-width in v3, fixed-width in v2
    assert stored.get("data_type", stored.get("dtype")) == ("string" if fmt == 3 else "<U3")


def test_distributed_writes(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    dask = pytest.importorskip("dask")
    ds = sample().chunk({"x": 1})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client, \
            dask.config.set(scheduler=client):
        to_zarr(ds, tmp_path / "dist.zarr")
        with pytest.raises(InvalidArgumentError, match="MemoryStore"):
            to_zarr(ds, zarr3c.MemoryStore())
    xr.testing.assert_identical(read(tmp_path / "dist.zarr"), sample())


def test_non_json_attributes_refused_by_name() -> None:
    from zarr3c.errors import MetadataError

    ds = xr.Dataset({"v": ("x", [1.0], {"valid_max": np.inf})})
    with pytest.raises(MetadataError, match="variable 'v'.*'valid_max'"):
        to_zarr(ds, zarr3c.MemoryStore())
    with pytest.raises(MetadataError, match="dataset.*'m'"):
        to_zarr(xr.Dataset(attrs={"m": [1.0, np.nan]}), zarr3c.MemoryStore())


@pytest.mark.parametrize("fmt", FORMATS)
def test_scalars_empty_and_complex(tmp_path: Path, fmt: int) -> None:
    ds = xr.Dataset({"s": ((), 3.5), "e": (("n",), np.zeros(0)),
                     "c": (("x",), np.array([1 + 2j, np.nan]))})
    to_zarr(ds, tmp_path / "sc.zarr", zarr_format=fmt)
    xr.testing.assert_identical(read(tmp_path / "sc.zarr"), ds)


@pytest.mark.parametrize(("src", "dst"), [(2, 2), (2, 3), (3, 3)])
def test_rewrite_of_a_dataset_xarray_opened(tmp_path: Path, src: int, dst: int) -> None:
    # its encoding carries zarr-python's codec objects (v2: the vlen-utf8 filter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sample().to_zarr(tmp_path / "src.zarr", zarr_format=src,
                         encoding={"t2m": {"chunks": (1, 3)}})
        opened = xr.open_zarr(tmp_path / "src.zarr")
    to_zarr(opened, tmp_path / "dst.zarr", zarr_format=dst)
    xr.testing.assert_identical(read(tmp_path / "dst.zarr"), sample())
    assert zarr3c.open_array(tmp_path / "dst.zarr", "t2m").chunks == (1, 3)


def test_array_errors_name_the_variable() -> None:
    from zarr3c.errors import MetadataError

    ds = xr.Dataset({"v": ("x", np.zeros(4))})
    with pytest.raises(MetadataError, match="variable 'v'.*sharding"):
        to_zarr(ds, zarr3c.MemoryStore(), zarr_format=2,
                encoding={"v": {"chunks": 2, "shards": 4}})


def test_group_object_as_store() -> None:
    store = zarr3c.MemoryStore()
    parent = zarr3c.create_group(store).create_group("runs")
    to_zarr(sample(), parent, group="first", consolidated=False)
    assert zarr3c.open_group(store, "runs/first", mode="r")["t2m"].shape == (2, 3)


# ---------------------------------------------------------------- DataTree
# The oracle as above: the tree written is compared with what open_datatree reads back through
# engine="zarr", and the stored documents with those DataTree.to_zarr writes.


def tree() -> Any:
    """A root with coordinates its children inherit, a node of xarray's encodings, a
    grandchild with its own dimension, and a node with attributes only."""
    return xr.DataTree.from_dict({
        "/": xr.Dataset(coords={"x": [10, 20, 30]}, attrs={"title": "tree"}),
        "/obs": sample().drop_vars("x"),
        "/obs/station": xr.Dataset({"h": (("x", "level"), np.arange(6.0).reshape(3, 2))},
                                   coords={"level": ["lo", "hi"]}),
        "/empty": xr.Dataset(attrs={"note": "attributes only"}),
    })


def read_tree(path: Any, engine: str, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_datatree(path, engine=engine, **kw).load()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("consolidated", [None, False])
def test_tree_round_trip_identical_through_both_engines(tmp_path: Path, fmt: int,
                                                   consolidated: bool | None) -> None:
    root = to_zarr(tree(), tmp_path / "t.zarr", zarr_format=fmt, consolidated=consolidated)
    assert isinstance(root, zarr3c.Group) and root.path == ""
    for engine in ("zarr", "zarr3c"):
        got = read_tree(tmp_path / "t.zarr", engine, consolidated=consolidated)
        xr.testing.assert_identical(got, tree())
    if consolidated is None:
        assert zarr3c.open_consolidated(tmp_path / "t.zarr")["obs/station/h"].shape == (3, 2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tree_documents_as_xarray_writes_them(tmp_path: Path, fmt: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree().to_zarr(tmp_path / "xr.zarr", zarr_format=fmt)
    to_zarr(tree(), tmp_path / "z3c.zarr", zarr_format=fmt)
    theirs, ours = documents(tmp_path / "xr.zarr"), documents(tmp_path / "z3c.zarr")
    assert ours == theirs
    # inherited coordinates stay with the root (write_inherited_coords=False)
    assert not (tmp_path / "z3c.zarr" / "obs" / "x").exists()


def test_tree_write_inherited_coords(tmp_path: Path) -> None:
    to_zarr(tree(), tmp_path / "i.zarr", write_inherited_coords=True)
    g = zarr3c.open_group(tmp_path / "i.zarr", mode="r")
    assert g["obs/x"][...].tolist() == [10, 20, 30]
    assert g["obs/station/x"][...].tolist() == [10, 20, 30]
    xr.testing.assert_identical(read_tree(tmp_path / "i.zarr", "zarr3c"), tree())


def test_tree_store_object_group_and_dataset_node(tmp_path: Path) -> None:
    store = zarr3c.MemoryStore()
    root = tree_to_zarr(tree(), store, group="deep/tree")
    assert root.path == "deep/tree"
    got = read_tree(store, "zarr3c", group="deep/tree")
    xr.testing.assert_identical(got, tree())
    # a node is the Dataset xarray reads from its group
    ds = xr.open_dataset(store, engine="zarr3c", group="deep/tree/obs/station")
    xr.testing.assert_identical(ds, tree()["obs/station"].to_dataset(inherit=False))


def test_tree_encoding_by_node_path(tmp_path: Path) -> None:
    enc = {"/obs/station": {"h": {"chunks": (1, 2), "dtype": "float32"}},
           "/": {"x": {"dtype": "int16"}}}
    to_zarr(tree(), tmp_path / "e.zarr", encoding=enc)
    g = zarr3c.open_group(tmp_path / "e.zarr", mode="r")
    assert g["obs/station/h"].chunks == (1, 2)
    assert g["obs/station/h"].dtype == np.float32
    assert g["x"].dtype == np.int16
    with pytest.raises(InvalidArgumentError, match="/nowhere"):
        to_zarr(tree(), tmp_path / "bad.zarr", encoding={"/nowhere": {}})


@pytest.mark.parametrize("fmt", FORMATS)
def test_tree_modes(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "m.zarr"
    to_zarr(tree(), path, zarr_format=fmt)
    with pytest.raises(ContainsGroupError):
        to_zarr(tree(), path)  # "w-" by default
    # "w" replaces the whole tree: a node the new tree lacks is gone
    smaller = xr.DataTree.from_dict({"/only": xr.Dataset({"v": ("y", [1, 2])})})
    to_zarr(smaller, path, mode="w")
    g = zarr3c.open_group(path, mode="r")
    assert sorted(g.group_keys()) == ["only"]
    assert g.metadata.zarr_format == 3  # (a new group: zarr_format's default)
    # "a" adds nodes and overwrites the variables it is given
    to_zarr(tree(), path, mode="a")
    xr.testing.assert_identical(read_tree(path, "zarr").drop_nodes("only"), tree())
    assert read_tree(path, "zarr3c")["only"]["v"].values.tolist() == [1, 2]


def test_tree_region_into_every_node(tmp_path: Path) -> None:
    path = tmp_path / "r.zarr"
    t = xr.DataTree.from_dict({"/": xr.Dataset(coords={"x": [1, 2, 3, 4]}),
                               "/a": xr.Dataset({"v": ("x", np.zeros(4))}),
                               "/b": xr.Dataset({"w": ("x", np.zeros(4, "i4"))})})
    to_zarr(t, path)
    part = xr.DataTree.from_dict({"/": xr.Dataset(coords={"x": [2, 3]}),
                                  "/a": xr.Dataset({"v": ("x", [5.0, 6.0])}),
                                  "/b": xr.Dataset({"w": ("x", np.array([7, 8], "i4"))})})
    to_zarr(part, path, region={"x": slice(1, 3)}, mode="r+")
    got = read_tree(path, "zarr")
    assert got["a"]["v"].values.tolist() == [0, 5, 6, 0]
    assert got["b"]["w"].values.tolist() == [0, 7, 8, 0]
    to_zarr(part * 2, path, region="auto", mode="r+")
    got = read_tree(path, "zarr3c")
    assert got["a"]["v"].values.tolist() == [0, 10, 12, 0]
    assert got["x"].values.tolist() == [1, 2, 3, 4]  # (index coordinates left as stored)
    # as in xarray, every node needs the region's dimensions: the root here has none
    rootless = xr.DataTree.from_dict({"/a": xr.Dataset({"v": ("x", [5.0, 6.0])})})
    with pytest.raises(InvalidArgumentError, match="node '/'.*region dimension 'x'"):
        to_zarr(rootless, path, region={"x": slice(1, 3)}, mode="r+")


def test_tree_dask_nodes_and_compute_false(tmp_path: Path) -> None:
    pytest.importorskip("dask.array")
    from dask.delayed import Delayed

    lazy_tree = tree().chunk({"x": 1})
    lazy = to_zarr(lazy_tree, tmp_path / "d.zarr", compute=False)
    assert isinstance(lazy, Delayed)
    h = zarr3c.open_array(tmp_path / "d.zarr", "obs/station/h")
    assert h.chunks == (1, 2) and np.isnan(h[...]).all()  # metadata now, data later
    assert lazy.compute().path == ""
    xr.testing.assert_identical(read_tree(tmp_path / "d.zarr", "zarr"), tree())


def test_tree_errors_name_the_node(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeatureError, match="append_dim"):
        to_zarr(tree(), tmp_path / "x.zarr", mode="a", append_dim="x")
    with pytest.raises(InvalidTypeError, match="DataTree"):
        tree_to_zarr(tree()["obs"].to_dataset(), tmp_path / "y.zarr")
    bad = xr.DataTree.from_dict({"/a/b": xr.Dataset({"v": ("x", [1.0])},
                                                    attrs={"bad": object()})})
    with pytest.raises(MetadataError, match="node ./a/b."):
        to_zarr(bad, tmp_path / "z.zarr")
