"""Writers killed mid-write leave a bounded number of temporary files (issue 35, point 7).

A LocalStore writer's temporary file is one of its key's slots, ``.<name>.zarr3c-tmp-<slot>``;
the next write of the key removes a killed writer's leftover in the slot it takes, and passes
the slots live writers hold.  So however often writers of a key are killed, the temporary
files beside it never outnumber the writers it had at once, and a write removes its own
key's leftovers (no directory listing needed).

Writers are killed for real: a child process writes chunks larger than its ``RLIMIT_FSIZE``
with ``SIGXFSZ`` at its default action, so the kernel ends it in the middle of writing a
temporary file, on the Python path (``LocalStore.set``) or in the native kernel
(``_kernels/fileio.pyx``'s ``_write_atomic``).  Live writers are a child paused before its
rename, threads and processes writing one key at once, and files flock-ed here.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import zarr3c
from zarr3c.array.read import native as read_native
from zarr3c.errors import StoreError
from zarr3c.stores.local import files as local_files
from zarr3c.stores.local import reads as local_reads

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs flock and SIGXFSZ")

CHUNK = 1 << 18  # bytes of a raw u1 chunk
NCHUNKS = 4
FSIZE_LIMIT = 1 << 16  # a child's file size limit: every chunk it writes crosses it
PATHS = ["python", pytest.param("native", marks=pytest.mark.skipif(
    local_reads.fileio is None, reason="the native writes are POSIX only"))]

# The child: open the array, pick the write path, then write every chunk with a constant
# value and die of SIGXFSZ in the middle of the first temporary file that crosses the limit.
_CRASHING_WRITER = textwrap.dedent("""
    import resource, signal, sys
    sys.dont_write_bytecode = True  # the only files it writes are the chunks'
    import zarr3c
    from zarr3c._kernels import writes
    from zarr3c.array.read import native as read_native
    root, path, value, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    a = zarr3c.open_array(zarr3c.LocalStore(root), "a", mode="r+")
    kernel = writes.write_chunks
    def announced(*args, **kwargs):
        print("native", flush=True)
        return kernel(*args, **kwargs)
    writes.write_chunks = announced
    read_native.enabled = path == "native"
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the default kills
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # (and dumps no core)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    a[:] = value
    print("survived", flush=True)
""")


def _array(root: Path) -> zarr3c.Array:
    return zarr3c.create_array(zarr3c.LocalStore(root), "a", shape=(NCHUNKS * CHUNK,),
                               chunks=(CHUNK,), dtype="u1", fill_value=0,
                               codecs=[{"name": "bytes"}])


def _leftovers(directory: Path) -> dict[str, list[str]]:
    """The temporary files in ``directory``, by the file name they stand beside."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    for p in directory.iterdir():
        if local_files.is_temp_name(p.name):
            out[p.name[1:p.name.index(local_files.TMP_MARK)]].append(p.name)
    return dict(out)


def _crash(root: Path, path: str, value: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CRASHING_WRITER, str(root), path, str(value),
         str(FSIZE_LIMIT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGXFSZ, (proc.returncode, proc.stdout, proc.stderr)
    assert ("native" in proc.stdout.split()) == (path == "native"), proc.stdout


def _write(a: zarr3c.Array, path: str, value: int, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr(read_native, "enabled", path == "native")
        a[:] = value


@pytest.mark.parametrize("crash_path", PATHS)
def test_repeated_crashes_leave_at_most_one_temporary_file_per_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_path: str) -> None:
    a = _array(tmp_path)
    chunk_dir = tmp_path / "a" / "c"
    whole = 0  # the value every chunk holds, whole
    value = 1
    for rewrite_path in ("python", "native"):
        if rewrite_path == "native" and local_reads.fileio is None:
            continue
        for _ in range(3):
            _crash(tmp_path, crash_path, value)
            value += 1
            # Each crash left its own temporary files, and removed those of the crash
            # before: one per key at most, however many crashes.
            left = _leftovers(chunk_dir)
            assert left and all(len(names) == 1 for names in left.values()), left
            assert set(left) <= {str(c) for c in range(NCHUNKS)}
            # The keys are whole: the value before the crashes.
            np.testing.assert_array_equal(a[:], whole)
            assert sorted(zarr3c.LocalStore(tmp_path).list_prefix("a/c/")) == (
                [] if whole == 0 else [f"a/c/{c}" for c in range(NCHUNKS)])
        # A write of the keys removes their leftovers.
        _write(a, rewrite_path, value, monkeypatch)
        whole, value = value, value + 1
        assert _leftovers(chunk_dir) == {}
        np.testing.assert_array_equal(a[:], whole)


# A writer paused between writing its temporary file and renaming it over the key.
_PAUSED_WRITER = textwrap.dedent("""
    import os, sys
    import zarr3c
    root, key, value = sys.argv[1], sys.argv[2], int(sys.argv[3])
    replace = os.replace
    def paused(src, dst):
        print("ready", src, flush=True)
        sys.stdin.readline()
        replace(src, dst)
    os.replace = paused
    zarr3c.LocalStore(root).set(key, bytes([value]) * int(sys.argv[4]))
    print("done", flush=True)
""")


@pytest.mark.parametrize("path", PATHS)
def test_a_live_writers_temporary_file_is_never_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    a = _array(tmp_path)
    chunk_dir = tmp_path / "a" / "c"
    chunk_dir.mkdir()
    dead = Path(local_files.temp_path(str(chunk_dir / "0"), 0))
    dead.write_bytes(b"a killed writer's")
    child = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_WRITER, str(tmp_path), "a/c/0", "7", str(CHUNK)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        ready, live = child.stdout.readline().rstrip("\n").split(" ", 1)
        # The child took slot 0, the dead writer's, and holds it.
        assert ready == "ready" and live == str(dead)
        inode = os.stat(live).st_ino
        for value in (1, 2, 3):
            _write(a, path, value, monkeypatch)
            np.testing.assert_array_equal(a[:], value)
            # Its file is intact, the same file; the writes' own temporary files are gone.
            assert os.stat(live).st_ino == inode
            assert Path(live).read_bytes() == bytes([7]) * CHUNK
            assert _leftovers(chunk_dir) == {"0": [os.path.basename(live)]}
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "done"
        assert child.wait(60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # The child's rename landed last.
    np.testing.assert_array_equal(a[:CHUNK], 7)
    np.testing.assert_array_equal(a[CHUNK:], 3)
    assert _leftovers(chunk_dir) == {}


def test_a_write_finding_every_slot_held_fails_and_touches_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    store = zarr3c.LocalStore(tmp_path)
    store.set("k", b"old")
    monkeypatch.setattr(local_files, "TEMP_SLOTS", 2)
    held = []
    try:
        for slot in range(2):
            tmp = local_files.temp_path(str(tmp_path / "k"), slot)
            Path(tmp).write_bytes(b"live")
            held.append(os.open(tmp, os.O_RDONLY))
            fcntl.flock(held[-1], fcntl.LOCK_SH)
        with pytest.raises(StoreError, match="'k'.*all 2 slots are held by live writers"):
            store.set("k", b"new")
    finally:
        for fd in held:
            os.close(fd)
    assert store.get("k") == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".k.zarr3c-tmp-0000000000000000", ".k.zarr3c-tmp-0000000000000001", "k"]
    store.set("k", b"new")  # unheld now: leftovers, taken
    assert store.get("k") == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".k.zarr3c-tmp-0000000000000001", "k"]


def test_temporary_names_cut_the_name_at_64_bytes_as_the_kernel_does() -> None:
    name = "a" + "é" * 40  # 81 bytes: the cut splits a character
    tmp = local_files.temp_path(os.path.join("d", name), 3)
    assert os.path.dirname(tmp) == "d"
    assert os.fsencode(os.path.basename(tmp)) == (
        b"." + name.encode()[:64] + b".zarr3c-tmp-0000000000000003")
    assert local_files.is_temp_name(os.path.basename(tmp))


# -- many live writers of one key: threads, and processes on both paths -----------------------

LENGTH = 4096


def _whole(data: bytes | None) -> bool:
    """Whether a value read is one writer's whole value (one byte repeated)."""
    return data is None or (len(data) == LENGTH and data.count(data[:1]) == LENGTH)


def test_threads_writing_one_key_tear_nothing_and_take_only_leftovers(
        tmp_path: Path) -> None:
    import fcntl

    store = zarr3c.LocalStore(tmp_path)
    key = tmp_path / "k"
    slots = [Path(local_files.temp_path(str(key), s)) for s in range(3)]
    for s in slots:
        s.write_bytes(b"planted")
    live = os.open(slots[1], os.O_RDONLY)  # slot 1 a live writer's, 0 and 2 killed ones'
    fcntl.flock(live, fcntl.LOCK_SH)
    stop = threading.Event()
    torn: list[bytes | None] = []

    def reader() -> None:
        while not stop.is_set():
            data = store.get("k")
            if not _whole(data):
                torn.append(data)

    def writer(w: int) -> None:
        for i in range(40):
            store.set("k", bytes([1 + (w * 40 + i) % 255]) * LENGTH)

    try:
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
        check = threading.Thread(target=reader)
        check.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        check.join()
        assert torn == []
        assert slots[1].read_bytes() == b"planted"
        assert os.fstat(live).st_ino == slots[1].stat().st_ino
    finally:
        os.close(live)
    assert not slots[0].exists()  # the first write took it
    assert _whole(store.get("k"))
    assert set(_leftovers(tmp_path)["k"]) <= {slots[1].name, slots[2].name}


_HAMMER = textwrap.dedent("""
    import os, sys
    import numpy as np
    import zarr3c
    from zarr3c._kernels import writes
    root, w, n, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    store = zarr3c.LocalStore(root)
    path = os.path.join(root, "k").encode()
    sizes, status = np.zeros(1, np.int64), np.zeros(1, np.int8)
    for i in range(n):
        value = 1 + (w * n + i) % 255
        if i % 2:
            store.set("k", bytes([value]) * length)
            continue
        writes.write_chunks([path], True, np.full(length, value, np.uint8), np.array([0]),
                            np.array([1]), np.array([[length]]), np.array([length]), 1,
                            b"\\0", False, writes.NONE, 0, False, 0, 1, 1, sizes, status)
        assert status[0] == writes.WRITTEN, status
""")


@pytest.mark.skipif(local_reads.fileio is None, reason="the native writes are POSIX only")
def test_processes_writing_one_key_on_both_paths_tear_nothing(tmp_path: Path) -> None:
    store = zarr3c.LocalStore(tmp_path)
    Path(local_files.temp_path(str(tmp_path / "k"), 0)).write_bytes(b"a killed writer's")
    procs = [subprocess.Popen([sys.executable, "-c", _HAMMER, str(tmp_path), str(w), "150",
                               str(LENGTH)]) for w in range(3)]
    torn = []
    try:
        while any(p.poll() is None for p in procs):
            data = store.get("k")
            if not _whole(data):
                torn.append(data)
            time.sleep(0.001)
    finally:
        for p in procs:
            if p.wait(120) != 0:
                pytest.fail(f"a writer exited with {p.returncode}")
    assert torn == []
    assert _whole(store.get("k")) and store.get("k") is not None
    assert _leftovers(tmp_path) == {}
