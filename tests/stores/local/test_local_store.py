"""LocalStore: the store contract, plus what only a file system store can get wrong: atomic
writes, temporary files, paths outside the root, symlinks, directories and special files."""

from __future__ import annotations

import errno
import os
import pathlib
import pickle
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarr3c.errors import (
    ChunkDecodeError,
    InvalidKeyError,
    ReadOnlyError,
    StoreError,
    UnsupportedFeatureError,
)
from zarr3c.stores import LocalStore, MemoryStore, Store, make_store
from zarr3c.stores.local import files as local_files
from zarr3c.stores.local import reads as local_reads
from zarr3c.stores.local import store as local_store
from zarr3c.testing.store_suite import HOSTILE_KEYS, StoreContractTests

TMP_NAME = ".zarr.json.zarr3c-tmp-0123456789abcdef"


class TestLocalStoreContract(StoreContractTests):
    def make_store(self, tmp_path: Path) -> Store:
        return LocalStore(tmp_path / "store")


def files_below(path: Path) -> list[str]:
    """Every file and directory below ``path``, relative, "/"-joined, sorted."""
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(root: Path) -> LocalStore:
    return LocalStore(root)


# -- layout ------------------------------------------------------------------------------------


def test_keys_are_files_below_the_root(store: LocalStore, root: Path) -> None:
    store.set("zarr.json", b"{}")
    store.set("group/array/c/0/1", b"chunk")
    assert (root / "zarr.json").read_bytes() == b"{}"
    assert (root / "group" / "array" / "c" / "0" / "1").read_bytes() == b"chunk"
    assert files_below(root) == [
        "group",
        "group/array",
        "group/array/c",
        "group/array/c/0",
        "group/array/c/0/1",
        "zarr.json",
    ]


def test_files_written_by_others_are_keys(store: LocalStore, root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c").write_bytes(b"external")
    assert store.get("a/b/c") == b"external"
    assert list(store.list()) == ["a/b/c"]


def test_get_returns_bytes(store: LocalStore) -> None:
    store.set("k", b"abc")
    assert type(store.get("k")) is bytes


def test_large_value_round_trip(store: LocalStore) -> None:
    value = os.urandom(3 * 2**20 + 7)
    store.set("big", value)
    assert store.get("big") == value
    got = store.get_partial_values([("big", (2**20, 5)), ("big", (-3, None))])
    assert got == [value[2**20 : 2**20 + 5], value[-3:]]


def test_root_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = LocalStore("relative/data.zarr")
    assert store.root == Path(os.getcwd()) / "relative" / "data.zarr"
    store.set("k", b"v")
    assert (tmp_path / "relative" / "data.zarr" / "k").read_bytes() == b"v"


def test_missing_root_is_created_by_the_first_write(root: Path) -> None:
    store = LocalStore(root / "deeper")
    assert not root.exists()
    assert store.get("k") is None and list(store.list()) == []
    store.set("k", b"v")
    assert (root / "deeper" / "k").read_bytes() == b"v"


def test_read_only_store_on_missing_root(root: Path) -> None:
    store = LocalStore(root, read_only=True)
    assert store.get("zarr.json") is None
    assert store.get_partial_values([("zarr.json", (0, 4))]) == [None]
    assert store.get_many(["a", "b"]) == [None, None]
    assert list(store.list()) == [] and list(store.list_prefix("a/")) == []
    assert store.list_dir("") == ([], [])
    assert not store.exists("zarr.json")
    assert not root.exists()


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_root_that_is_a_file(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "file.zarr"
    path.write_bytes(b"not a directory")
    with pytest.raises(StoreError, match="not a directory") as excinfo:
        LocalStore(path, read_only=read_only)
    assert str(path) in str(excinfo.value)


# -- atomic writes -----------------------------------------------------------------------------


def _fail_replace(src: Any, dst: Any) -> None:
    raise OSError(errno.EIO, "injected failure in os.replace")


def test_failed_rename_keeps_the_old_value(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("a/zarr.json", b"old value")
    monkeypatch.setattr(os, "replace", _fail_replace)
    with pytest.raises(StoreError) as excinfo:
        store.set("a/zarr.json", b"new value that never lands")
    message = str(excinfo.value)
    assert "'a/zarr.json'" in message
    assert str(root / "a" / "zarr.json") in message
    assert "injected failure" in message
    monkeypatch.undo()
    assert store.get("a/zarr.json") == b"old value"
    assert files_below(root) == ["a", "a/zarr.json"]  # no temporary file left


def test_failed_write_keeps_the_old_value(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("k", b"old")
    real_write = os.write

    def half_write(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, "injected: no space left on device")

    monkeypatch.setattr(os, "write", half_write)
    with pytest.raises(StoreError, match="'k'.*no space left"):
        store.set("k", b"a new value of some length")
    monkeypatch.undo()
    assert store.get("k") == b"old"
    assert files_below(root) == ["k"]


def test_parts_are_written_whole_however_short_each_writev(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writev may write less than asked, stopping inside a buffer: the rest follows."""
    real_writev = os.writev
    calls: list[int] = []

    def short_writev(fd: int, buffers: Any) -> int:
        calls.append(len(buffers))
        first = memoryview(buffers[0])
        return real_writev(fd, [first[: max(1, first.nbytes // 3)]])  # a third of one

    monkeypatch.setattr(os, "writev", short_writev)
    parts = [b"abcdefgh", b"", b"ij", bytes(range(256)) * 9, b"k"]
    store.set_parts("a/shard", parts)
    monkeypatch.undo()
    assert (root / "a" / "shard").read_bytes() == b"".join(parts)
    assert max(calls) == 4  # the empty part is never handed over


def test_parts_go_in_batches_of_iov_max(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_writev = os.writev
    calls: list[int] = []

    def counting_writev(fd: int, buffers: Any) -> int:
        calls.append(len(buffers))
        return real_writev(fd, buffers)

    monkeypatch.setattr(os, "writev", counting_writev)
    monkeypatch.setattr(local_files, "_IOV_MAX", 16)
    parts = [bytes([i % 256]) * (i + 1) for i in range(40)]
    store.set_parts("k", parts)
    assert calls == [16, 16, 8]
    assert (root / "k").read_bytes() == b"".join(parts)


def test_a_write_making_no_progress_is_an_error_not_a_spin(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("k", b"old")
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(StoreError, match="'k'.*no progress"):
        store.set("k", b"new")
    monkeypatch.undo()
    assert store.get("k") == b"old"
    assert files_below(root) == ["k"]


def test_failed_parts_write_keeps_the_old_value(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("k", b"old")
    real_writev = os.writev

    def failing_writev(fd: int, buffers: Any) -> int:
        real_writev(fd, buffers[:1])
        raise OSError(errno.ENOSPC, "injected: no space left on device")

    monkeypatch.setattr(os, "writev", failing_writev)
    with pytest.raises(StoreError, match="'k'.*no space left"):
        store.set_parts("k", [b"a new shard's ", b"parts"])
    monkeypatch.undo()
    assert store.get("k") == b"old"
    assert files_below(root) == ["k"]


def test_interrupt_during_write_is_not_wrapped_and_leaves_no_temp(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("k", b"old")

    def interrupted(src: Any, dst: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.set("k", b"new")
    monkeypatch.undo()
    assert store.get("k") == b"old"
    assert files_below(root) == ["k"]


def test_failed_write_of_a_new_key_leaves_nothing(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("zarr.json", b"{}")
    monkeypatch.setattr(os, "replace", _fail_replace)
    with pytest.raises(StoreError, match="'new'"):
        store.set("new", b"x")
    monkeypatch.undo()
    assert store.get("new") is None
    assert files_below(root) == ["zarr.json"]


@pytest.mark.parametrize("fsync", [False, True], ids=["plain", "fsync"])
def test_fsync_option(root: Path, fsync: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(root, fsync=fsync)
    calls: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    store.set("a/b/c", b"durable")
    assert store.get("a/b/c") == b"durable"
    assert store.fsync is fsync
    if fsync:
        # the file, its directory, and the directories created for it
        assert len(calls) >= 2
    else:
        assert calls == []


def test_set_onto_a_directory_is_a_store_error(store: LocalStore, root: Path) -> None:
    store.set("a/b", b"x")
    with pytest.raises(StoreError, match="'a'"):
        store.set("a", b"the key 'a' is a directory")
    assert files_below(root) == ["a", "a/b"]


def test_set_below_a_file_is_a_store_error(store: LocalStore, root: Path) -> None:
    store.set("a", b"x")
    with pytest.raises(StoreError, match="'a/b'"):
        store.set("a/b", b"y")
    assert store.get("a/b") is None
    assert store.get("a") == b"x"


# -- temporary files ---------------------------------------------------------------------------


def test_temporary_files_are_never_listed_or_read(store: LocalStore, root: Path) -> None:
    store.set("zarr.json", b"{}")
    store.set("a/c/0", b"chunk")
    (root / TMP_NAME).write_bytes(b"torn")
    (root / "a" / ".0.zarr3c-tmp-fedcba9876543210").write_bytes(b"torn")
    (root / "only-temp").mkdir()
    (root / "only-temp" / ".x.zarr3c-tmp-00000000000000ff").write_bytes(b"torn")
    assert sorted(store.list()) == ["a/c/0", "zarr.json"]
    assert list(store.list_prefix("a/")) == ["a/c/0"]
    assert store.list_dir("") == (["zarr.json"], ["a/"])  # "only-temp/" holds no key
    assert store.list_dir("a/") == ([], ["a/c/"])
    for key in [TMP_NAME, "a/.0.zarr3c-tmp-fedcba9876543210"]:
        with pytest.raises(InvalidKeyError, match="reserved"):
            store.get(key)
        with pytest.raises(InvalidKeyError, match="reserved"):
            store.set(key, b"x")
        with pytest.raises(InvalidKeyError, match="reserved"):
            store.exists(key)


@pytest.mark.parametrize(
    "name",
    [
        ".zarr.json.zarr3c-tmp-0123",
        ".zarr3c-tmp-0123456789abcdef",
        "x.zarr3c-tmp-0123456789abcdef",
        ".a.zarr3c-tmp-0123456789ABCDEF",
        ".hidden",
    ],
    ids=["short-hex", "no-name", "no-dot", "upper-hex", "dotfile"],
)
def test_names_that_only_resemble_temporary_files_are_keys(
    store: LocalStore, root: Path, name: str
) -> None:
    store.set(name, b"v")
    assert list(store.list()) == [name]
    assert store.get(name) == b"v"


def test_erase_prefix_removes_stale_temporary_files(store: LocalStore, root: Path) -> None:
    store.set("a/b", b"x")
    (root / "a" / ".b.zarr3c-tmp-0123456789abcdef").write_bytes(b"stale")
    store.erase_prefix("a/")
    assert files_below(root) == []


def test_temporary_file_names_follow_the_pattern(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        seen.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    store.set("a/zarr.json", b"{}")
    assert len(seen) == 1
    assert local_files.is_temp_name(seen[0]) and seen[0].startswith(".zarr.json.")


# -- nothing outside the root ------------------------------------------------------------------


def test_kept_files_of_keys_are_the_checked_ones_and_bounded(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """LocalStore keeps the files of the keys it was last asked about (``_path``): the same
    answers as checking afresh, refused keys refused every time (never kept), and no more
    than ``_PATHS_KEPT`` of them kept."""
    monkeypatch.setattr(local_store, "_PATHS_KEPT", 8)
    keys = [f"a/c/{i}/{j}" for i in range(5) for j in range(5)]
    for _ in range(2):
        for key in keys:
            assert store._path(key) == store._checked_path(key)
            assert store._kernel_file(key) == os.fsencode(store._checked_path(key))
            assert len(store._paths) <= 8
    for key, _ in HOSTILE_KEYS:
        for _ in range(2):
            with pytest.raises(InvalidKeyError):
                store._path(key)
            with pytest.raises(InvalidKeyError):
                store._kernel_file(key)
        assert key not in store._paths
    store.set("a/c/0/0", b"x")
    assert store.get("a/c/0/0") == b"x"
    copy = pickle.loads(pickle.dumps(store))  # (a cache: not pickled)
    assert copy._paths == {} and copy.get("a/c/0/0") == b"x"




@pytest.mark.parametrize("key", [k for k, _ in HOSTILE_KEYS], ids=[i for _, i in HOSTILE_KEYS])
def test_hostile_keys_touch_nothing_on_disk(tmp_path: Path, key: Any) -> None:
    root = tmp_path / "deep" / "store"
    store = LocalStore(root)
    store.set("ok", b"ok")
    for operation in (
        lambda: store.set(key, b"evil"),
        lambda: store.get(key),
        lambda: store.erase(key),
        lambda: store.set_partial_values([(key, 0, b"evil")]),
    ):
        with pytest.raises(InvalidKeyError):
            operation()
    assert files_below(tmp_path) == ["deep", "deep/store", "deep/store/ok"]


def test_erase_prefix_removes_symlinks_not_their_targets(
    store: LocalStore, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_bytes(b"keep me")
    store.set("zarr.json", b"{}")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "nested").mkdir()
    (root / "nested" / "link").symlink_to(outside, target_is_directory=True)
    # symlinks the user placed inside the root are followed for reads...
    assert store.get("linked/precious") == b"keep me"
    assert sorted(store.list()) == ["linked/precious", "nested/link/precious", "zarr.json"]
    # ...but erasing removes the links, never what they point to
    store.erase_prefix("linked/")
    store.erase_prefix("nested/")
    assert (outside / "precious").read_bytes() == b"keep me"
    assert files_below(root) == ["zarr.json"]
    store.erase_prefix("")
    assert (outside / "precious").read_bytes() == b"keep me"


def test_symlink_loops_do_not_hang_listings(store: LocalStore, root: Path) -> None:
    store.set("a/b/k", b"v")
    (root / "a" / "b" / "loop").symlink_to(root / "a", target_is_directory=True)
    (root / "a" / "self").symlink_to(".", target_is_directory=True)
    # a directory already being walked is not entered again
    assert sorted(store.list()) == ["a/b/k"]
    assert sorted(store.list_prefix("a/")) == ["a/b/k"]
    assert sorted(store.list_prefix("a/b/loop/")) == ["a/b/loop/b/k"]
    assert store.list_dir("a/b/") == (["a/b/k"], ["a/b/loop/"])


# -- directories, special files ----------------------------------------------------------------


def test_a_directory_is_not_a_key(store: LocalStore) -> None:
    store.set("a/b/c", b"v")
    assert store.get("a/b") is None
    assert not store.exists("a/b")
    assert store.get_partial_values([("a/b", (0, 1))]) == [None]
    store.erase("a/b")  # a directory is a missing key: nothing happens
    assert store.get("a/b/c") == b"v"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_reads_as_missing_without_blocking(store: LocalStore, root: Path) -> None:
    store.set("zarr.json", b"{}")
    os.mkfifo(root / "pipe")
    assert store.get("pipe") is None
    assert store.get_many(["pipe", "zarr.json"]) == [None, b"{}"]
    assert not store.exists("pipe")
    assert list(store.list()) == ["zarr.json"]


@pytest.mark.skipif(os.name == "nt", reason="backslashes are separators on Windows")
def test_file_names_that_are_not_keys_are_not_listed(store: LocalStore, root: Path) -> None:
    store.set("ok", b"v")
    (root / "back\\slash").write_bytes(b"x")
    assert list(store.list()) == ["ok"]


def test_erase_removes_directories_that_become_empty(store: LocalStore, root: Path) -> None:
    store.set("a/b/c/d", b"1")
    store.set("a/x", b"2")
    store.erase("a/b/c/d")
    assert files_below(root) == ["a", "a/x"]
    store.erase("a/x")
    assert files_below(root) == []
    assert root.is_dir()  # never the root itself


def test_erase_prefix_removes_directories(store: LocalStore, root: Path) -> None:
    store.set("g/a/c/0/0", b"1")
    store.set("g/a/c/0/1", b"2")
    store.set("g/b", b"3")
    store.erase_prefix("g/a/")
    assert files_below(root) == ["g", "g/b"]
    store.erase_prefix("")
    assert files_below(root) == [] and root.is_dir()


def test_list_dir_skips_empty_directories_made_by_others(store: LocalStore, root: Path) -> None:
    store.set("a/k", b"v")
    (root / "a" / "empty" / "deeper").mkdir(parents=True)
    assert store.list_dir("a/") == (["a/k"], [])
    assert store.list_dir("") == ([], ["a/"])


# -- reads -------------------------------------------------------------------------------------


def test_partial_reads_never_read_the_whole_file(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "pread"):
        pytest.skip("needs os.pread")
    value = bytes(range(256)) * 4096  # 1 MiB
    store.set("shard", value)
    sizes: list[int] = []
    real_pread = os.pread

    def spy(fd: int, n: int, offset: int) -> bytes:
        sizes.append(n)
        return real_pread(fd, n, offset)

    monkeypatch.setattr(os, "pread", spy)
    got = store.get_partial_values([("shard", (-16, None)), ("shard", (1000, 24))])
    assert got == [value[-16:], value[1000:1024]]
    assert sizes == [16, 24]


@pytest.mark.parametrize("n", [5, 40, 200])
def test_get_many_equals_get(store: LocalStore, n: int) -> None:
    keys = [f"c/{i // 10}/{i % 10}" for i in range(n)]
    for i, key in enumerate(keys[::2]):
        store.set(key, key.encode() * i)
    assert store.get_many(keys) == [store.get(k) for k in keys]


def test_get_many_reports_read_errors(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"k{i}" for i in range(40)]
    for key in keys:
        store.set(key, b"v")
    bad = str(root / "k33")
    real_open = os.open

    def failing_open(path: Any, flags: int, *args: Any) -> int:
        if os.fspath(path) == bad:
            raise OSError(errno.EIO, "injected I/O error")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(StoreError, match="'k33'.*injected I/O error") as excinfo:
        store.get_many(keys)
    assert bad in str(excinfo.value)
    with pytest.raises(StoreError, match="'k33'"):
        store.get("k33")


def test_get_partial_values_many_keys_in_parallel(store: LocalStore) -> None:
    keys = [f"s/{i}" for i in range(50)]
    for i, key in enumerate(keys):
        store.set(key, bytes([i]) * 100)
    request = [(k, (-10, None)) for k in keys] + [(k, (0, 3)) for k in reversed(keys)]
    expected = [bytes([i]) * 10 for i in range(50)] + [bytes([i]) * 3 for i in reversed(range(50))]
    assert store.get_partial_values(request) == expected


# -- identity, pickling, make_store ------------------------------------------------------------


def test_equality_and_hash(root: Path, tmp_path: Path) -> None:
    assert LocalStore(root) == LocalStore(str(root))
    assert hash(LocalStore(root)) == hash(LocalStore(str(root)))
    assert LocalStore(root) != LocalStore(root, read_only=True)
    assert LocalStore(root) != LocalStore(root, fsync=True)
    assert LocalStore(root) != LocalStore(root, process_locks=True)
    assert LocalStore(root) != LocalStore(tmp_path / "other")
    assert LocalStore(root) != MemoryStore()


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"read_only": True}, {"fsync": True}, {"process_locks": True}],
    ids=["plain", "read-only", "fsync", "process-locks"],
)
def test_pickle_round_trip(root: Path, kwargs: dict[str, Any]) -> None:
    LocalStore(root).set("a/b", b"data")
    store = LocalStore(root, **kwargs)
    clone = pickle.loads(pickle.dumps(store))
    assert clone == store
    assert clone.root == store.root and clone.read_only == store.read_only
    assert clone.fsync == store.fsync
    assert clone.process_locks == store.process_locks
    assert clone.get("a/b") == b"data"


def test_with_read_only_keeps_root_and_fsync(root: Path) -> None:
    store = LocalStore(root, fsync=True)
    ro = store.with_read_only(True)
    assert isinstance(ro, LocalStore)
    assert ro.root == store.root and ro.fsync and ro.read_only and not store.read_only


@pytest.mark.parametrize(
    "form",
    ["str", "path", "file-url"],
)
def test_make_store_local_forms(root: Path, form: str) -> None:
    store_like: Any = {
        "str": str(root),
        "path": pathlib.Path(root),
        "file-url": "file://" + root.as_posix(),
    }[form]
    store = make_store(store_like)
    assert store == LocalStore(root)
    ro = make_store(store_like, read_only=True)
    assert ro == LocalStore(root, read_only=True)


def test_make_store_local_refuses_storage_options(root: Path) -> None:
    with pytest.raises(StoreError, match="storage_options"):
        make_store(str(root), storage_options={"anon": True})


def test_make_store_root_that_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match="not a directory"):
        make_store(path)


def test_written_files_get_ordinary_permissions(store: LocalStore, root: Path) -> None:
    if os.name == "nt":
        pytest.skip("POSIX permissions")
    umask = os.umask(0o022)
    os.umask(umask)
    store.set("k", b"v")
    assert stat.S_IMODE((root / "k").stat().st_mode) == 0o666 & ~umask


def _child_get_many(root: str, n: int, queue: Any) -> None:
    store = LocalStore(root)
    keys = [f"k{i}" for i in range(n)]
    queue.put(store.get_many(keys) == [str(i).encode() for i in range(n)])
    queue.put(store.get_many(keys[:16]) == [str(i).encode() for i in range(16)])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_get_many_works_in_a_forked_child(store: LocalStore, root: Path) -> None:
    import multiprocessing

    n = 64
    for i in range(n):
        store.set(f"k{i}", str(i).encode())
    for _ in range(20):  # the parent's pool is up, with idle threads the child will not have
        assert store.get_many([f"k{i}" for i in range(n)])[5] == b"5"
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_get_many, args=(str(root), n, queue))
    child.start()
    child.join(timeout=30)
    if child.is_alive():  # a pool inherited without its threads would hang here
        child.kill()
        child.join()
        pytest.fail("get_many hung in a forked child")
    assert child.exitcode == 0
    assert queue.get(timeout=5) is True
    assert queue.get(timeout=5) is True


# -- fault injection in the write path: a StoreError naming the key, the old value intact ------


def _raise(exc: BaseException) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


def _fail_on_temp_open(exc: OSError) -> Any:
    real_open = os.open

    def fake_open(path: Any, *args: Any, **kwargs: Any) -> int:
        if local_files.TMP_MARK in os.fspath(path):
            raise exc
        return real_open(path, *args, **kwargs)

    return fake_open


def _enospc_write() -> Any:
    real_write = os.write

    def fake_write(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[:3])  # a partial write first, as a filling disk does
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    return fake_write


FAULTS: dict[str, tuple[str, Any, str]] = {
    # id: (function patched, replacement, text the error carries)
    "error-between-write-and-rename": (
        "fsync", _raise(OSError(errno.EIO, "injected I/O error in fsync")), "injected I/O"),
    "exception-between-write-and-rename": (
        "replace", _raise(RuntimeError("injected bug before the rename")), "injected bug"),
    "failing-rename": ("replace", _raise(OSError(errno.EXDEV, "injected rename failure")),
                       "injected rename"),
    "enospc": ("write", _enospc_write(), "No space left"),
    "permission-denied-on-open": (
        "open", _fail_on_temp_open(PermissionError(errno.EACCES, "injected: read-only dir")),
        "read-only dir"),
    "read-only-file-system": (
        "open", _fail_on_temp_open(OSError(errno.EROFS, "injected: read-only file system")),
        "read-only file system"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("existing", [True, False], ids=["overwrite", "new-key"])
def test_write_faults_keep_the_previous_value(
    root: Path, monkeypatch: pytest.MonkeyPatch, fault: str, existing: bool
) -> None:
    store = LocalStore(root, fsync=True)
    store.set("zarr.json", b"{}")
    if existing:
        store.set("a/c/0", b"previous value")
    name, replacement, text = FAULTS[fault]
    monkeypatch.setattr(os, name, replacement)
    with pytest.raises(StoreError) as excinfo:
        store.set("a/c/0", b"new value that must not land")
    monkeypatch.undo()
    assert "'a/c/0'" in str(excinfo.value) and text in str(excinfo.value)
    assert store.get("a/c/0") == (b"previous value" if existing else None)
    assert not [p for p in root.rglob("*") if local_files.is_reserved_name(p.name)]
    assert sorted(store.list()) == (["a/c/0", "zarr.json"] if existing else ["zarr.json"])


def test_root_replaced_by_a_file_is_a_store_error(root: Path) -> None:
    store = LocalStore(root)
    store.set("k", b"v")
    for p in root.iterdir():
        p.unlink()
    root.rmdir()
    root.write_bytes(b"now a file")
    with pytest.raises(StoreError, match="'a/k'"):
        store.set("a/k", b"x")
    with pytest.raises(StoreError, match="'k'"):
        store.set("k", b"x")
    assert root.read_bytes() == b"now a file"


def test_write_fault_through_an_array_keeps_the_chunk(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    import zarr3c

    a = zarr3c.create_array(LocalStore(root), "a", shape=(10,), dtype="int32", chunks=(5,),
                            fill_value=0)
    a[...] = np.arange(10)
    # (LocalStore's own writes, which os.write's fault reaches: the native pipeline's
    # kernels write in C, and their I/O failures are tested in test_native_writes.py)
    from zarr3c.array.read import native

    monkeypatch.setattr(native, "enabled", False)
    monkeypatch.setattr(os, "write", _enospc_write())
    with pytest.raises(StoreError, match="'a/c/0'"):
        a[2] = 100
    monkeypatch.undo()
    np.testing.assert_array_equal(a[...], np.arange(10))


# -- cross-process key locks (process_locks=True) ------------------------------------------------

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")


def test_key_lock_is_a_no_op_by_default(store: LocalStore, root: Path) -> None:
    assert not store.process_locks
    with store.key_lock("a/c/0"):
        assert not root.exists()
    with MemoryStore().key_lock("a/c/0"):
        pass


@posix_only
def test_lock_files_exist_only_while_held_and_are_never_keys(root: Path) -> None:
    store = LocalStore(root, process_locks=True)
    assert store.process_locks and "process_locks=True" in repr(store)
    store.set("a/c/0", b"chunk")
    with store.key_lock("a/c/0"):
        lock = root / "a" / "c" / ".0.zarr3c-lock"
        assert lock.is_file()
        assert list(store.list()) == ["a/c/0"]
        assert store.list_dir("a/c/") == (["a/c/0"], [])
    with store.key_lock("b/c/0"):  # directories are created for the lock file...
        assert (root / "b" / "c" / ".0.zarr3c-lock").is_file()
        assert list(store.list_prefix("b/")) == []
    assert files_below(root) == ["a", "a/c", "a/c/0"]  # ...and pruned with it
    for key in ["a/c/.0.zarr3c-lock", ".zarr.json.zarr3c-lock"]:
        with pytest.raises(InvalidKeyError, match="reserved"):
            store.set(key, b"x")
        with pytest.raises(InvalidKeyError, match="reserved"):
            store.get(key)


@posix_only
def test_key_locks_exclude_threads_through_distinct_stores(tmp_path: Path) -> None:
    # Two roots reaching the same directory (one through a symlink) do not share the
    # in-process locks; the flock, taken on its own open file each time, still excludes.
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    one = LocalStore(real, process_locks=True)
    two = LocalStore(tmp_path / "link", process_locks=True)
    assert one.lock_id != two.lock_id
    held, acquired, release = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with one.key_lock("k"):
            held.set()
            release.wait(30)

    def waiter() -> None:
        held.wait(30)
        with two.key_lock("k"):
            acquired.set()

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    for t in threads:
        t.start()
    held.wait(30)
    time.sleep(0.2)
    assert not acquired.is_set()  # blocked while the other store holds the key
    release.set()
    for t in threads:
        t.join(30)
    assert acquired.is_set()


@posix_only
def test_locked_unaligned_thread_writers_through_distinct_stores(tmp_path: Path) -> None:
    import numpy as np

    import zarr3c

    real = tmp_path / "real"
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    real.mkdir()
    a = zarr3c.create_array(LocalStore(real), "a", shape=(256,), dtype="int32", chunks=(48,),
                            fill_value=0)
    barrier = threading.Barrier(4)

    def writer(w: int) -> None:
        where = real if w % 2 else tmp_path / "link"
        arr = zarr3c.open_array(LocalStore(where, process_locks=True), "a", mode="r+")
        barrier.wait()
        for i in range(w * 64, (w + 1) * 64):
            arr[i] = i + 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(a[...], np.arange(1, 257))


@posix_only
def test_a_stale_lock_file_is_taken_over(root: Path) -> None:
    store = LocalStore(root, process_locks=True)
    store.set("k", b"v")
    (root / ".k.zarr3c-lock").write_bytes(b"")  # left by a killed holder: not locked
    with store.key_lock("k"):
        pass
    assert files_below(root) == ["k"]


@posix_only
def test_lock_file_errors_name_the_key(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(root, process_locks=True)
    real_open = os.open

    def fake_open(path: Any, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith(".zarr3c-lock"):
            raise PermissionError(errno.EACCES, "injected")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    with pytest.raises(StoreError, match="'a/c/0'.*lock file"):
        with store.key_lock("a/c/0"):
            pass
    with pytest.raises(ReadOnlyError):
        with store.with_read_only(True).key_lock("a/c/0"):
            pass


def test_process_locks_without_flock_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_files, "fcntl", None)  # as on Windows
    with pytest.raises(UnsupportedFeatureError, match="process_locks=True.*fcntl.flock"):
        LocalStore(root, process_locks=True)
    LocalStore(root).set("k", b"v")  # the rest works without flock
    assert LocalStore(root).get("k") == b"v"


@posix_only
def test_hierarchy_written_with_locks_opens_in_zarr_python(root: Path) -> None:
    zarr = pytest.importorskip("zarr", reason="interop check needs zarr-python 3")
    import warnings

    import numpy as np

    import zarr3c

    store = LocalStore(root, process_locks=True)
    group = zarr3c.create_group(store)
    group.attrs["written"] = "with locks"  # attribute updates take the lock too
    a = zarr3c.create_array(store, "g/a", shape=(100,), dtype="int32", chunks=(10,),
                            shards=(40,), fill_value=0)
    for i in range(100):
        a[i] = i
    assert not [p for p in root.rglob("*") if local_files.is_reserved_name(p.name)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # zarr-python warns of files it does not recognise
        zg = zarr.open_group(str(root), mode="r")
        assert dict(zg.attrs) == {"written": "with locks"}
        assert [name for name, _ in zg.members(max_depth=None)] == ["g", "g/a"]
        np.testing.assert_array_equal(zarr.open_array(str(root), path="g/a", mode="r")[:],
                                      np.arange(100))


# -- stale temporary files -------------------------------------------------------------------------


def _plant_temp(root: Path, rel: str, age: float) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"torn")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_listings_remove_stale_temporary_files(store: LocalStore, root: Path) -> None:
    store.set("a/c/0", b"chunk")
    old = _plant_temp(root, "a/c/.1.zarr3c-tmp-00000000000000aa", 2 * 3600)
    young = _plant_temp(root, "a/c/.2.zarr3c-tmp-00000000000000bb", 60)
    assert list(store.list()) == ["a/c/0"]
    assert not old.exists() and young.exists()
    # a read-only store never deletes
    old = _plant_temp(root, "a/c/.3.zarr3c-tmp-00000000000000cc", 2 * 3600)
    assert list(LocalStore(root, read_only=True).list()) == ["a/c/0"]
    assert old.exists()


@posix_only
def test_cleanup_spares_temporary_files_of_live_writers(store: LocalStore, root: Path) -> None:
    import fcntl

    store.set("a/c/0", b"chunk")
    stale = _plant_temp(root, "a/c/.1.zarr3c-tmp-00000000000000aa", 10)
    live = _plant_temp(root, "a/c/.2.zarr3c-tmp-00000000000000bb", 2 * 3600)
    lock = _plant_temp(root, "a/c/.0.zarr3c-lock", 0)
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # as a writer holds its temporary file
        assert store.cleanup_temporary_files(max_age=3600) == 1  # only the unheld lock file
        assert stale.exists() and live.exists() and not lock.exists()
        assert store.cleanup_temporary_files("a/", max_age=0) == 1
        assert not stale.exists() and live.exists()
        store.erase_prefix("a/")  # erase_prefix too leaves a live writer's file alone
        assert live.exists() and store.get("a/c/0") is None
    finally:
        os.close(fd)
    assert store.cleanup_temporary_files(max_age=0) == 1
    assert files_below(root) == []
    with pytest.raises(ReadOnlyError):
        store.with_read_only(True).cleanup_temporary_files()


def test_cleanup_keeps_empty_directories_it_did_not_empty(store: LocalStore, root: Path) -> None:
    store.set("g/zarr.json", b"{}")
    (root / "empty").mkdir()
    (root / "g" / "empty").mkdir()
    _plant_temp(root, ".x.zarr3c-tmp-00000000000000aa", 2 * 3600)  # found first, at the root
    _plant_temp(root, "a/c/.1.zarr3c-tmp-00000000000000bb", 2 * 3600)
    assert store.cleanup_temporary_files(max_age=0) == 2
    # the directories the cleanup emptied go; the other empty ones stay
    assert files_below(root) == ["empty", "g", "g/empty", "g/zarr.json"]


@posix_only
def test_writers_hold_their_temporary_files(
    store: LocalStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cleanup running while a value is being written, even with max_age=0, spares it.
    real_replace = os.replace
    removed: list[int] = []

    def replace_after_cleanup(src: Any, dst: Any) -> None:
        removed.append(store.cleanup_temporary_files(max_age=0))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_after_cleanup)
    store.set("a/c/0", b"value")
    assert removed == [0]
    assert store.get("a/c/0") == b"value"


def test_a_chunk_never_reads_a_temporary_file(store: LocalStore, root: Path) -> None:
    import numpy as np

    import zarr3c

    a = zarr3c.create_array(store, "a", shape=(4,), dtype="int32", chunks=(4,), fill_value=7)
    _plant_temp(root, "a/c/.0.zarr3c-tmp-00000000000000aa", 0)  # torn, beside a missing key
    np.testing.assert_array_equal(a[...], [7, 7, 7, 7])
    a[...] = [1, 2, 3, 4]
    (root / "a" / "c" / "0").write_bytes(b"torn")  # a torn key itself would be caught
    with pytest.raises(ChunkDecodeError, match="'a/c/0'"):
        a[...]


# -- the one-call read (zarr3c._kernels.fileio) against the os path ------------------------------


@pytest.mark.skipif(local_reads.fileio is None, reason="the fileio kernel is POSIX only")
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 5000), min_size=1, max_size=4),
       requests=st.lists(
           st.tuples(st.integers(0, 5),  # a file; 4 and 5 are a missing key and a directory
                     st.lists(st.tuples(st.integers(0, 6000), st.integers(0, 3000)),
                              min_size=1, max_size=5)),
           min_size=1, max_size=20))
def test_one_call_reads_agree_with_the_os_path(tmp_path_factory: pytest.TempPathFactory,
                                                monkeypatch: pytest.MonkeyPatch,
                                                sizes: list[int],
                                                requests: list[tuple[int, list[Any]]]) -> None:
    """``read_ranges_into``, ``read_value_into`` and ``read_tail_into`` give the same
    counts and bytes, and say "missing" for the same keys, whether files are read by the
    ``fileio`` kernel or through ``os`` calls."""
    store = LocalStore(tmp_path_factory.mktemp("fileio"))
    rng = np.random.default_rng(len(sizes))
    keys = [f"k/{i}" for i in range(len(sizes))] + ["k/missing", "k"]
    for key, size in zip(keys, sizes):
        store.set(key, rng.integers(0, 256, size, dtype=np.uint8).tobytes())
    plan = []
    at = 0
    for which, spans in requests:
        ranges = []
        for start, length in spans:
            ranges.append((start, start + length, at))
            at += length
        plan.append((keys[min(which, len(keys) - 1)], ranges))

    def read(fileio: Any) -> tuple[list[Any], bytes, list[Any]]:
        monkeypatch.setattr(local_reads, "fileio", fileio)
        out = np.full(at + 8, 0xEE, dtype=np.uint8)
        counts = store.read_ranges_into(plan, out)
        whole = []
        for key in keys:
            value = np.full(4096, 0xEE, dtype=np.uint8)
            whole.append((store.read_value_into(key, value), value.tobytes()))
            for n in (0, 1, 2500, 6000):  # the tail: a shard index at the end
                tail = np.full(n + 8, 0xEE, dtype=np.uint8)
                whole.append((store.read_tail_into(key, tail[:n]), tail.tobytes()))
        return counts, out.tobytes(), whole

    kernel = local_reads.fileio
    assert read(kernel) == read(None)


@pytest.mark.skipif(local_reads.fileio is None or not hasattr(os, "mkfifo"),
                    reason="the fileio kernel is POSIX only")
def test_one_call_reads_of_special_files_are_missing_without_blocking(store: LocalStore,
                                                                      root: Path) -> None:
    store.set("zarr.json", b"{}")
    os.mkfifo(root / "pipe")
    out = np.zeros(16, dtype=np.uint8)
    assert store.read_ranges_into([("pipe", [(0, 4, 0)]), ("zarr.json", [(0, 2, 4)])],
                                   out) == [None, 2]
    assert out[4:6].tobytes() == b"{}"
    assert store.read_tail_into("pipe", out[:4]) is None
    assert store.read_tail_into("zarr.json", out[:1]) == 1 and out[0] == ord("}")
    assert store.read_value_into("pipe", out) is None
