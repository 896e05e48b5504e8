"""ZipStore: the store contract (stored and deflated entries), modes, bad input, rewrites and
erasing, partial reads, failures during writes, threads, and arrays and groups end to end."""

from __future__ import annotations

import errno
import gc
import pickle
import threading
import warnings
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import (
    InvalidArgumentError,
    InvalidKeyError,
    InvalidTypeError,
    ReadOnlyError,
    StoreError,
    UnsupportedFeatureError,
)
from zarr3c.stores import LocalStore, Store, ZipStore, make_store
from zarr3c.testing.store_suite import StoreContractTests


def names(path: Path) -> list[str]:
    """The entry names in the zip's central directory, as any zip reader sees them."""
    with zipfile.ZipFile(path) as zf:
        return zf.namelist()


def contents(store: Store) -> dict[str, bytes]:
    return {key: bytes(store.get(key)) for key in store.list()}  # type: ignore[arg-type]


# -- the contract ------------------------------------------------------------------------------


class TestZipStoreContract(StoreContractTests):
    """The shared contract on a zip opened with mode "w".

    Two contract items assume a store stays usable after ``close()`` or pickles with unsaved
    writes; a zip file cannot (it is complete only after close), so ``ZipStore`` replaces them
    with the zip behaviour below.  Every other test runs as written, and after each one the
    zip is closed, reopened with mode "r" and must hold exactly what the store held.
    """

    compression = zipfile.ZIP_STORED

    def make_store(self, tmp_path: Path) -> Store:
        return ZipStore(tmp_path / "store.zip", mode="w", compression=self.compression)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = self.make_store(tmp_path)
        yield s
        if s.closed:  # type: ignore[attr-defined]
            return
        before = contents(s)
        s.close()
        # what the store held is what the finished zip holds: newest values, each key once
        with ZipStore(tmp_path / "store.zip") as reopened:
            assert contents(reopened) == before
        assert sorted(names(tmp_path / "store.zip")) == sorted(before)

    def test_context_manager_returns_store(self, store: Store, tmp_path: Path) -> None:
        # Replaces the contract's version: leaving the block closes the zip (as in
        # zarr-python), after which the store refuses use and the file is a finished zip.
        with store as entered:
            assert entered is store
            entered.set("k", b"v")
        with pytest.raises(StoreError, match="closed"):
            store.get("k")
        with ZipStore(tmp_path / "store.zip") as reopened:
            assert reopened.get("k") == b"v"

    def test_pickle_round_trip_keeps_contents(self, store: Store, tmp_path: Path) -> None:
        # Replaces the contract's version: a zip being written is not a zip yet, so only a
        # store opened with mode "r" pickles (as its path), and reopens the finished file.
        self.fill(store, ["zarr.json", "a/b", "a/c/d"])
        for writing in (store, store.with_read_only(True)):
            with pytest.raises(UnsupportedFeatureError, match="store.zip"):
                pickle.dumps(writing)
        expected = contents(store)
        store.close()
        ro = ZipStore(tmp_path / "store.zip")
        clone = pickle.loads(pickle.dumps(ro))
        assert type(clone) is ZipStore and clone.read_only is True and clone == ro
        assert contents(clone) == expected


class TestZipStoreDeflatedContract(TestZipStoreContract):
    """The same contract with deflated entries (partial reads decompress the entry)."""

    compression = zipfile.ZIP_DEFLATED


# -- modes -------------------------------------------------------------------------------------


@pytest.fixture
def zpath(tmp_path: Path) -> Path:
    return tmp_path / "data.zip"


def write_zip(path: Path, items: dict[str, bytes], mode: str = "w") -> None:
    with ZipStore(path, mode=mode) as store:  # type: ignore[arg-type]
        for key, value in items.items():
            store.set(key, value)


def test_default_mode_is_read_only(zpath: Path) -> None:
    write_zip(zpath, {"a/b": b"1"})
    store = ZipStore(zpath)
    assert store.mode == "r" and store.read_only
    assert store.get("a/b") == b"1"
    assert store.path == zpath and store.compression == zipfile.ZIP_STORED and store.allowZip64


def test_mode_w_truncates(zpath: Path) -> None:
    write_zip(zpath, {"old": b"1"})
    write_zip(zpath, {"new": b"2"})
    assert contents(ZipStore(zpath)) == {"new": b"2"}


def test_mode_a_adds_to_an_existing_zip(zpath: Path) -> None:
    write_zip(zpath, {"keep": b"1", "replace": b"old", "erase": b"x"})
    with ZipStore(zpath, mode="a") as store:
        assert not store.read_only
        assert contents(store) == {"keep": b"1", "replace": b"old", "erase": b"x"}
        store.set("replace", b"new")
        store.set("added", b"2")
        store.erase("erase")
    assert contents(ZipStore(zpath)) == {"keep": b"1", "replace": b"new", "added": b"2"}
    assert sorted(names(zpath)) == ["added", "keep", "replace"]


def test_mode_a_creates_a_missing_zip(zpath: Path) -> None:
    write_zip(zpath, {"k": b"v"}, mode="a")
    assert contents(ZipStore(zpath)) == {"k": b"v"}


def test_mode_a_without_writes_leaves_the_file_unchanged(zpath: Path) -> None:
    write_zip(zpath, {"k": b"v"})
    before = zpath.read_bytes()
    with ZipStore(zpath, mode="a") as store:
        assert store.get("k") == b"v"
    assert zpath.read_bytes() == before


def test_mode_x_creates_and_refuses_an_existing_file(zpath: Path) -> None:
    write_zip(zpath, {"k": b"v"}, mode="x")
    assert contents(ZipStore(zpath)) == {"k": b"v"}
    with pytest.raises(StoreError, match="already exists") as excinfo:
        ZipStore(zpath, mode="x")
    assert str(zpath) in str(excinfo.value)
    assert contents(ZipStore(zpath)) == {"k": b"v"}


def test_read_only_flag(zpath: Path) -> None:
    write_zip(zpath, {"k": b"v"})
    with pytest.raises(InvalidArgumentError, match="read_only=False"):
        ZipStore(zpath, mode="r", read_only=False)
    with ZipStore(zpath, mode="a", read_only=True) as store:
        assert store.read_only
        with pytest.raises(ReadOnlyError, match="'k'"):
            store.set("k", b"w")
        writable = store.with_read_only(False)
        writable.set("k", b"w")
        assert store.get("k") == b"w"  # the twin shares the open file
    assert ZipStore(zpath).get("k") == b"w"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mode": "rw"}, InvalidArgumentError, "invalid mode 'rw'"),
        ({"mode": "w", "compression": 99}, InvalidArgumentError, "compression 99"),
    ],
    ids=["mode", "compression"],
)
def test_bad_arguments_leave_the_file_alone(
    zpath: Path, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    write_zip(zpath, {"k": b"v"})
    with pytest.raises(error, match=match):
        ZipStore(zpath, **kwargs)
    assert contents(ZipStore(zpath)) == {"k": b"v"}  # mode "w" did not truncate it


@pytest.mark.parametrize("path", [None, 3, b"x.zip"], ids=["none", "int", "bytes"])
def test_path_must_be_a_path(path: Any) -> None:
    with pytest.raises(InvalidTypeError, match="path"):
        ZipStore(path)


# -- bad files ---------------------------------------------------------------------------------


def _not_a_zip(path: Path) -> None:
    path.write_text("zarr_format = 3\nthis is not a zip file\n")


def _truncated(path: Path) -> None:
    write_zip(path, {"zarr.json": b"{}", "c/0": bytes(1000)})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _end_record_cut(path: Path) -> None:
    write_zip(path, {"zarr.json": b"{}"})
    path.write_bytes(path.read_bytes()[:-10])


def _bad_central_directory(path: Path) -> None:
    write_zip(path, {"zarr.json": b"{}", "c/0": b"x" * 100})
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x01\x02")  # the last central directory header
    data[at : at + 4] = b"XXXX"
    path.write_bytes(bytes(data))


def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _directory(path: Path) -> None:
    path.mkdir()


BAD_FILES: list[tuple[Callable[[Path], None], str, str]] = [
    (_not_a_zip, "not a zip", "not-a-zip"),
    (_truncated, "not a zip", "truncated"),
    (_end_record_cut, "not a zip", "end-record-cut"),
    (_bad_central_directory, "not a zip", "bad-central-directory"),
    (_empty_file, "not a zip", "empty-file"),
    (_directory, "cannot open", "directory"),
]


@pytest.mark.parametrize("mode", ["r", "a"])
@pytest.mark.parametrize(
    ("make", "match"), [(m, x) for m, x, _ in BAD_FILES], ids=[i for _, _, i in BAD_FILES]
)
def test_bad_files_are_store_errors_naming_the_file(
    zpath: Path, make: Callable[[Path], None], match: str, mode: str
) -> None:
    make(zpath)
    if mode == "a" and zpath.is_file() and zpath.stat().st_size == 0:
        # an empty file is where mode "a" may start a new zip, as zipfile does
        write_zip(zpath, {"k": b"v"}, mode="a")
        assert contents(ZipStore(zpath)) == {"k": b"v"}
        return
    before = zpath.read_bytes() if zpath.is_file() else None
    with pytest.raises(StoreError, match=match) as excinfo:
        ZipStore(zpath, mode=mode)  # type: ignore[arg-type]
    assert str(zpath) in str(excinfo.value)
    assert not isinstance(excinfo.value, zipfile.BadZipFile)
    if before is not None:  # mode "a" did not append a new archive to the file
        assert zpath.read_bytes() == before


def test_missing_file_in_mode_r(zpath: Path) -> None:
    with pytest.raises(StoreError, match="does not exist") as excinfo:
        ZipStore(zpath)
    assert str(zpath) in str(excinfo.value)
    assert not zpath.exists()  # nothing was created


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_corrupt_entry_data_is_a_store_error_naming_key_and_file(
    zpath: Path, compression: int
) -> None:
    value = bytes(range(256)) * 8
    with ZipStore(zpath, mode="w", compression=compression) as store:
        store.set("zarr.json", b"{}")
        store.set("c/0", value)
    data = bytearray(zpath.read_bytes())
    with zipfile.ZipFile(zpath) as zf:
        info = zf.getinfo("c/0")
        offset = info.header_offset + 30 + len(info.filename) + 40
    data[offset] ^= 0xFF
    zpath.write_bytes(bytes(data))
    store = ZipStore(zpath)
    assert store.get("zarr.json") == b"{}"
    for read in (
        lambda: store.get("c/0"),
        lambda: store.get_many(["zarr.json", "c/0"]),
        lambda: store.get_partial_values([("c/0", (0, None))]),
    ):
        with pytest.raises(StoreError, match="'c/0'") as excinfo:
            read()
        assert str(zpath) in str(excinfo.value)


def test_partial_read_of_an_entry_cut_short(zpath: Path) -> None:
    write_zip(zpath, {"c/0": bytes(range(200))})
    store = ZipStore(zpath)
    info = store._archive.index["c/0"]
    info.file_size = 10_000  # the directory claims more than the entry holds
    with pytest.raises(StoreError, match="'c/0'.*truncated"):
        store.get_partial_values([("c/0", (5000, 10))])


# -- read-only and closed stores ---------------------------------------------------------------

WRITES: list[tuple[Callable[[Store], Any], str, str]] = [
    (lambda s: s.set("k", b"new"), "'k'", "set"),
    (lambda s: s.set("new/key", b"x"), "'new/key'", "set-new"),
    (lambda s: s.set_partial_values([("k", 0, b"n")]), "'k'", "set_partial_values"),
    (lambda s: s.erase("k"), "'k'", "erase"),
    (lambda s: s.erase("missing"), "'missing'", "erase-missing"),
    (lambda s: s.erase_values(["k"]), "'k'", "erase_values"),
    (lambda s: s.erase_prefix("dir/"), "'dir/'", "erase_prefix"),
]


@pytest.mark.parametrize(
    ("write", "named"), [(w, n) for w, n, _ in WRITES], ids=[i for _, _, i in WRITES]
)
def test_mode_r_refuses_every_write(zpath: Path, write: Callable[[Store], Any], named: str) -> None:
    write_zip(zpath, {"k": b"old", "dir/x": b"x"})
    before = zpath.read_bytes()
    with ZipStore(zpath) as store:
        with pytest.raises(ReadOnlyError, match=named):
            write(store)
        assert contents(store) == {"k": b"old", "dir/x": b"x"}
    assert zpath.read_bytes() == before


def test_mode_r_has_no_writable_twin(zpath: Path) -> None:
    write_zip(zpath, {"k": b"v"})
    store = ZipStore(zpath)
    assert store.with_read_only(True) == store
    with pytest.raises(ReadOnlyError, match="mode 'r'") as excinfo:
        store.with_read_only(False)
    assert str(zpath) in str(excinfo.value)


OPERATIONS: list[tuple[Callable[[Store], Any], str]] = [
    (lambda s: s.get("k"), "get"),
    (lambda s: s.get_many(["k"]), "get_many"),
    (lambda s: s.get_partial_values([("k", (0, 1))]), "get_partial_values"),
    (lambda s: s.exists("k"), "exists"),
    (lambda s: list(s.list()), "list"),
    (lambda s: list(s.list_prefix("")), "list_prefix"),
    (lambda s: s.list_dir(""), "list_dir"),
    (lambda s: s.set("k", b"v"), "set"),
    (lambda s: s.set_partial_values([("k", 0, b"v")]), "set_partial_values"),
    (lambda s: s.erase("k"), "erase"),
    (lambda s: s.erase_prefix(""), "erase_prefix"),
]


@pytest.mark.parametrize("mode", ["w", "r"])
@pytest.mark.parametrize("operation", [op for op, _ in OPERATIONS], ids=[i for _, i in OPERATIONS])
def test_use_after_close_is_a_store_error(
    zpath: Path, mode: str, operation: Callable[[Store], Any]
) -> None:
    write_zip(zpath, {"k": b"v"})
    store = ZipStore(zpath, mode=mode)  # type: ignore[arg-type]
    twin = store.with_read_only(True)
    store.close()
    store.close()  # idempotent
    assert store.closed and twin.closed
    for s in (store, twin):
        with pytest.raises((StoreError, ReadOnlyError)) as excinfo:
            operation(s)
        if isinstance(excinfo.value, StoreError):
            assert "closed" in str(excinfo.value) and str(zpath) in str(excinfo.value)


def test_a_forgotten_writer_still_finishes_the_zip(zpath: Path) -> None:
    store = ZipStore(zpath, mode="w")
    store.set("k", b"old")
    store.set("k", b"new")
    store.set("gone", b"x")
    store.erase("gone")
    del store
    gc.collect()
    assert names(zpath) == ["k"]
    assert ZipStore(zpath).get("k") == b"new"


# -- keys and entries --------------------------------------------------------------------------

FOREIGN = ["../evil", "/abs/path", "dir/", "a\\b", "x/./y", "a//b"]


def test_entries_that_are_not_keys_are_invisible_and_kept(zpath: Path) -> None:
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("zarr.json", b"{}")
        zf.writestr("dir/k", b"v")
        for name in FOREIGN:
            zf.writestr(name, b"foreign")
    store = ZipStore(zpath, mode="a")
    assert sorted(store.list()) == ["dir/k", "zarr.json"]
    assert store.list_dir("") == (["zarr.json"], ["dir/"])
    for name in FOREIGN:
        with pytest.raises(InvalidKeyError):
            store.get(name)
    store.set("zarr.json", b'{"new": 1}')  # the central directory is rewritten on close...
    store.close()
    # ...keeping the other entries, and the newest zarr.json only
    assert sorted(names(zpath)) == sorted(["dir/k", "zarr.json", *FOREIGN])
    assert ZipStore(zpath).get("zarr.json") == b'{"new": 1}'


def test_duplicate_entries_written_by_others_read_newest_and_list_once(zpath: Path) -> None:
    with warnings.catch_warnings(), zipfile.ZipFile(zpath, "w") as zf:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        zf.writestr("zarr.json", b"first")
        zf.writestr("c/0", b"chunk")
        zf.writestr("zarr.json", b"second")
    store = ZipStore(zpath)
    assert store.get("zarr.json") == b"second"
    assert sorted(store.list()) == ["c/0", "zarr.json"]
    with ZipStore(zpath, mode="a") as store:
        store.set("c/1", b"more")
    assert sorted(names(zpath)) == ["c/0", "c/1", "zarr.json"]
    assert ZipStore(zpath).get("zarr.json") == b"second"


def test_rewrites_and_erases_leave_one_entry_per_key(zpath: Path) -> None:
    model: dict[str, bytes] = {}
    with ZipStore(zpath, mode="w") as store, warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Duplicate name" warning from zipfile
        for i in range(20):
            key = f"k{i % 4}"
            store.set(key, bytes([i]) * i)
            model[key] = bytes([i]) * i
            if i % 7 == 6:
                store.erase(key)
                del model[key]
            assert contents(store) == model
    assert sorted(names(zpath)) == sorted(model)
    assert contents(ZipStore(zpath)) == model


def test_non_ascii_keys_round_trip(zpath: Path) -> None:
    write_zip(zpath, {"données/ü/€.json": b"1", "my group/zarr.json": b"2"})
    assert sorted(names(zpath)) == ["données/ü/€.json", "my group/zarr.json"]
    assert contents(ZipStore(zpath)) == {"données/ü/€.json": b"1", "my group/zarr.json": b"2"}


# -- partial reads -----------------------------------------------------------------------------


class _ReadSpy:
    """A file proxy recording the size of every read."""

    def __init__(self, fp: Any) -> None:
        self._fp = fp
        self.sizes: list[int] = []

    def read(self, n: int = -1) -> bytes:
        data = self._fp.read(n)
        self.sizes.append(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fp, name)


@pytest.mark.parametrize("mode", ["w", "r"])
def test_partial_reads_of_stored_entries_read_only_the_ranges(zpath: Path, mode: str) -> None:
    value = bytes(range(256)) * 4096  # 1 MiB
    store = ZipStore(zpath, mode="w")
    store.set("shard", value)
    if mode == "r":
        store.close()
        store = ZipStore(zpath)
    zf = store._archive.zf
    assert zf is not None
    spy = _ReadSpy(zf.fp)
    zf.fp = spy  # type: ignore[assignment]
    try:
        got = store.get_partial_values(
            [("shard", (-16, None)), ("shard", (1000, 24)), ("shard", (2_000_000, 5))]
        )
        assert [bytes(g) for g in got] == [value[-16:], value[1000:1024], b""]  # type: ignore[arg-type]
        assert max(spy.sizes) < 100 and sum(spy.sizes) < 200
    finally:
        zf.fp = spy._fp
    store.close()


def test_partial_reads_of_deflated_entries(zpath: Path) -> None:
    value = np.random.default_rng(0).integers(0, 4, 100_000, dtype=np.uint8).tobytes()
    with ZipStore(zpath, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("shard", value)
    assert zipfile.ZipFile(zpath).getinfo("shard").compress_size < len(value)
    store = ZipStore(zpath)
    got = store.get_partial_values([("shard", (-16, None)), ("shard", (5, 3)), ("x", (0, 1))])
    assert got == [value[-16:], value[5:8], None]


# -- failing writes ----------------------------------------------------------------------------


def test_a_failed_write_keeps_the_old_value_and_the_archive(
    zpath: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ZipStore(zpath, mode="w")
    store.set("k", b"old")
    store.set("other", b"o")
    real_write = zipfile._ZipWriteFile.write
    calls = {"n": 0}

    def failing_write(self: Any, data: Any) -> int:
        calls["n"] += 1
        real_write(self, bytes(memoryview(data)[:3]))  # part of the data reaches the file
        raise OSError(errno.ENOSPC, "injected: no space left on device")

    monkeypatch.setattr(zipfile._ZipWriteFile, "write", failing_write)
    with pytest.raises(StoreError, match="'k'.*no space left") as excinfo:
        store.set("k", b"a new value of some length")
    assert str(zpath) in str(excinfo.value)
    with pytest.raises(StoreError, match="'new'"):
        store.set("new", b"value")
    monkeypatch.undo()
    assert calls["n"] == 2
    assert contents(store) == {"k": b"old", "other": b"o"}
    store.set("later", b"fine")
    store.close()
    assert contents(ZipStore(zpath)) == {"k": b"old", "other": b"o", "later": b"fine"}
    assert sorted(names(zpath)) == ["k", "later", "other"]


def test_zip64_refused_when_not_allowed(zpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 2)  # instead of writing 65,535 entries
    with ZipStore(zpath, mode="w", allowZip64=False) as store:
        store.set("a", b"1")
        store.set("b", b"2")
        with pytest.raises(StoreError, match="'c'.*ZIP64") as excinfo:
            store.set("c", b"3")
        assert str(zpath) in str(excinfo.value)
        assert sorted(store.list()) == ["a", "b"]
    assert contents(ZipStore(zpath)) == {"a": b"1", "b": b"2"}


def test_a_keyboard_interrupt_is_not_wrapped(zpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ZipStore(zpath, mode="w")
    store.set("k", b"old")

    def interrupted(self: Any, data: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(zipfile._ZipWriteFile, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.set("k", b"new")
    monkeypatch.undo()
    store.close()
    assert contents(ZipStore(zpath)) == {"k": b"old"}


# -- identity ----------------------------------------------------------------------------------


def test_equality_hash_repr_and_lock_id(zpath: Path, tmp_path: Path) -> None:
    write_zip(zpath, {"k": b"v"})
    a, b = ZipStore(zpath), ZipStore(str(zpath))
    assert a == b and hash(a) == hash(b)
    assert a.lock_id == b.lock_id == ("zip", str(zpath))
    w = ZipStore(tmp_path / "other.zip", mode="w")
    assert w != a and w.lock_id != a.lock_id
    assert a != LocalStore(tmp_path)
    assert repr(a) == f"ZipStore({str(zpath)!r}, mode='r')"
    assert "read_only=True" in repr(w.with_read_only(True))
    w.close()


def test_make_store_keeps_a_zip_store(zpath: Path) -> None:
    with ZipStore(zpath, mode="w") as store:
        assert make_store(store) is store
        ro = make_store(store, read_only=True)
        assert isinstance(ro, ZipStore) and ro.read_only and ro.path == store.path
        store.set("k", b"v")
        assert ro.get("k") == b"v"


# -- threads -----------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_threads_reading_and_writing_different_entries(zpath: Path, compression: int) -> None:
    n_threads, n_keys = 8, 40
    values = {
        f"t{t}/{i}": bytes([t * 16 + i % 16]) * (500 + 37 * i)
        for t in range(n_threads)
        for i in range(n_keys)
    }
    store = ZipStore(zpath, mode="w", compression=compression)
    barrier = threading.Barrier(n_threads, timeout=60)

    def work(t: int) -> None:
        barrier.wait()
        for i in range(n_keys):
            key = f"t{t}/{i}"
            store.set(key, values[key])
            for j in range(0, i + 1, 5):  # reread earlier entries while others write
                other = f"t{t}/{j}"
                assert store.get(other) == values[other]
                (part,) = store.get_partial_values([(other, (-7, None))])
                assert part == values[other][-7:]

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        for future in [pool.submit(work, t) for t in range(n_threads)]:
            future.result()
    store.close()
    assert contents(ZipStore(zpath)) == values


# -- arrays and groups end to end --------------------------------------------------------------


def test_array_round_trip(zpath: Path) -> None:
    data = np.arange(60 * 70, dtype="f8").reshape(60, 70)
    with ZipStore(zpath, mode="w") as store:
        a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(16, 16))
        a[:] = data
        a[5:40, 3:9] = -1.0  # a rewrite of chunks already in the zip
        a.attrs["units"] = "m"  # and of zarr.json
        data[5:40, 3:9] = -1.0
    assert names(zpath).count("zarr.json") == 1
    b = zarr3c.open_array(ZipStore(zpath))
    np.testing.assert_array_equal(b[:], data)
    assert b.attrs["units"] == "m"
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1.0


def test_fill_value_chunks_are_erased(zpath: Path) -> None:
    with ZipStore(zpath, mode="w") as store:
        a = zarr3c.create_array(store, shape=(8,), dtype="i4", chunks=(4,), fill_value=0)
        a[:] = np.arange(1, 9)
        a[:4] = 0  # the first chunk is now all fill value: its key is erased
        assert not store.exists("c/0")
    assert sorted(names(zpath)) == ["c/1", "zarr.json"]
    np.testing.assert_array_equal(zarr3c.open_array(ZipStore(zpath))[:], [0, 0, 0, 0, 5, 6, 7, 8])


def test_group_hierarchy_and_sharded_array(zpath: Path) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1000, (50, 40), dtype="i4")
    y = rng.standard_normal((64, 64)).astype("f4")
    with ZipStore(zpath, mode="w") as store:
        root = zarr3c.create_group(store, attributes={"title": "zip"})
        root.create_array("x", shape=x.shape, dtype=x.dtype, chunks=(10, 10))[:] = x
        sub = root.create_group("sub/deeper")
        s = sub.create_array("y", shape=y.shape, dtype=y.dtype, chunks=(8, 8), shards=(32, 32))
        s[:] = y
        s[3:20, 3:20] = 0.5  # rewrites shards in the zip
        y[3:20, 3:20] = 0.5
    with ZipStore(zpath) as store:
        root = zarr3c.open_group(store)
        assert root.attrs["title"] == "zip"
        np.testing.assert_array_equal(root["x"][:], x)
        s = root["sub/deeper/y"]
        np.testing.assert_array_equal(s[:], y)
        np.testing.assert_array_equal(s[10:30, 17:41], y[10:30, 17:41])
    assert len(names(zpath)) == len(set(names(zpath)))


def test_add_an_array_to_an_existing_zip(zpath: Path) -> None:
    with ZipStore(zpath, mode="w") as store:
        zarr3c.create_group(store).create_array("a", shape=(4,), dtype="u1", chunks=(2,))[:] = 7
    with ZipStore(zpath, mode="a") as store:
        g = zarr3c.open_group(store, mode="r+")
        g.create_array("b", shape=(3,), dtype="u1", chunks=(3,))[:] = [1, 2, 3]
        g["a"][1:3] = 9
    g = zarr3c.open_group(ZipStore(zpath))
    np.testing.assert_array_equal(g["a"][:], [7, 9, 9, 7])
    np.testing.assert_array_equal(g["b"][:], [1, 2, 3])


def test_array_over_a_read_only_zip_pickles(zpath: Path) -> None:
    data = np.arange(30, dtype="i2").reshape(5, 6)
    with ZipStore(zpath, mode="w") as store:
        zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(2, 4))[:] = data
    a = zarr3c.open_array(ZipStore(zpath))
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone[:], data)
    with ZipStore(zpath, mode="a") as store:
        writing = zarr3c.open_array(store, mode="r+")
        with pytest.raises(UnsupportedFeatureError, match="close"):
            pickle.dumps(writing)


@pytest.mark.parametrize(
    "erase", [lambda s: s.erase("a"), lambda s: s.erase_prefix("a/")], ids=["erase", "prefix"]
)
def test_mode_a_erase_only_session_is_saved(zpath: Path, erase: Callable[[Any], None]) -> None:
    # In mode "a" zipfile rewrites the central directory only after a write: an erase alone
    # must still reach the file.
    write_zip(zpath, {"a": b"1", "a/x": b"2", "b": b"3"})
    with ZipStore(zpath, mode="a") as store:
        erase(store)
        remaining = sorted(store.list())
    assert sorted(ZipStore(zpath).list()) == remaining
    assert sorted(names(zpath)) == remaining
    assert len(remaining) == 2


def test_getsize_reads_the_index_not_the_entry(
    zpath: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_zip(zpath, {"a": b"12345", "e": b""}, mode="w")
    with ZipStore(zpath, mode="a", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("a", b"1" * 1000)  # a compressed, replaced entry: the newest size counts

        def no_reads(*args: Any) -> bytes:
            raise AssertionError("getsize read an entry")

        monkeypatch.setattr(store._archive, "read", no_reads)
        assert [store.getsize(k) for k in ("a", "e", "missing")] == [1000, 0, None]
    with pytest.raises(StoreError, match="closed"):
        store.getsize("a")
