"""LocalStore: the store contract, plus what only a file system store can get wrong: atomic
writes, temporary files, paths outside the root, symlinks, directories and special files."""

from __future__ import annotations

import errno
import os
import pathlib
import pickle
import stat
from pathlib import Path
from typing import Any

import pytest

from zarr3c.errors import InvalidKeyError, StoreError
from zarr3c.stores import LocalStore, MemoryStore, Store, make_store
from zarr3c.stores import local as local_module
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
    assert local_module._is_temp_name(seen[0]) and seen[0].startswith(".zarr.json.")


# -- nothing outside the root ------------------------------------------------------------------


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
    assert LocalStore(root) != LocalStore(tmp_path / "other")
    assert LocalStore(root) != MemoryStore()


@pytest.mark.parametrize(
    "kwargs", [{}, {"read_only": True}, {"fsync": True}], ids=["plain", "read-only", "fsync"]
)
def test_pickle_round_trip(root: Path, kwargs: dict[str, Any]) -> None:
    LocalStore(root).set("a/b", b"data")
    store = LocalStore(root, **kwargs)
    clone = pickle.loads(pickle.dumps(store))
    assert clone == store
    assert clone.root == store.root and clone.read_only == store.read_only
    assert clone.fsync == store.fsync
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
