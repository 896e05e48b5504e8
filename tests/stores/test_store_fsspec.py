"""FsspecStore: the store contract over fsspec's in-memory filesystem and a live S3 server on
loopback (moto's server mode, through s3fs), arrays and groups end to end on S3 and over a
read-only HTTP server (Python's http.server, with and without Range support), URL handling,
bad input (unreachable, silent and failing servers, missing bucket, wrong credentials,
unknown schemes, writes over HTTP) and pickling."""

from __future__ import annotations

import functools
import http.server
import logging
import os
import pickle
import re
import socket
import sys
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarr3c
from zarr3c.errors import InvalidArgumentError, MissingDependencyError, ReadOnlyError, StoreError
from zarr3c.stores import FsspecStore, LocalStore, MemoryStore, Store, make_store
from zarr3c.testing.store_suite import StoreContractTests

# Short timeouts and no retries, so a test against a dead or silent server fails fast.
S3_CONFIG = {"connect_timeout": 2, "read_timeout": 10, "retries": {"max_attempts": 2}}
BUCKET = "zarr3c-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _without_obstore(monkeypatch: pytest.MonkeyPatch) -> None:
    """URLs open as FsspecStore here, as where obstore is not installed (where it is,
    make_store prefers ObjectStore for s3:// and http(s):// URLs: test_store_obstore.py)."""
    monkeypatch.setitem(sys.modules, "obstore", None)


# -- servers -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on loopback with one bucket; dummy credentials only."""
    pytest.importorskip("s3fs", reason="the live S3 tests need s3fs (pip install s3fs)")
    moto_server = pytest.importorskip(
        "moto.server", reason="the live S3 tests need moto's server mode (pip install 'moto[server]')"
    )
    mp = pytest.MonkeyPatch()
    # Never the real environment's credentials or AWS config: dummy values, no files.
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        mp.delenv(name, raising=False)
    mp.setenv("AWS_ACCESS_KEY_ID", "testing")
    mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
    mp.setenv("AWS_CONFIG_FILE", os.devnull)
    mp.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        import s3fs

        fs = s3fs.S3FileSystem(**_s3_options(endpoint), skip_instance_cache=True)
        fs.call_s3("create_bucket", Bucket=BUCKET)
        yield endpoint
    finally:
        server.stop()
        mp.undo()


def _s3_options(endpoint: str, **extra: Any) -> dict[str, Any]:
    return {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
        "config_kwargs": dict(S3_CONFIG),
        **extra,
    }


@pytest.fixture
def s3_options(s3_endpoint: str) -> dict[str, Any]:
    return _s3_options(s3_endpoint)


@pytest.fixture
def s3_url() -> str:
    """A fresh prefix in the test bucket."""
    return f"s3://{BUCKET}/t-{uuid.uuid4().hex[:12]}"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """http.server's file handler, quiet, answering paths containing "boom" with a 500."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        if "boom" in self.path:
            self.send_error(500, "injected failure")
            return None
        return super().send_head()


class _RangeHandler(_Handler):
    """Adds single byte ranges (``bytes=a-b``, ``bytes=a-``, ``bytes=-n``), answered 206 or
    416, and counts the 206 answers."""

    #: (path, Range header) of every request answered 206
    ranged: list[tuple[str, str]] = []

    def send_head(self) -> Any:
        header = self.headers.get("Range")
        path = self.translate_path(self.path)
        if header is None or "boom" in self.path or not os.path.isfile(path):
            return super().send_head()
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
        if m is None or m.groups() == ("", ""):
            return super().send_head()
        size = os.path.getsize(path)
        first, last = m.groups()
        if first == "":
            lo, hi = max(size - int(last), 0), size
        else:
            lo, hi = int(first), size if last == "" else min(int(last) + 1, size)
        if lo >= size or (first != "" and lo >= hi):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        with open(path, "rb") as f:
            f.seek(lo)
            body = f.read(hi - lo)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {lo}-{hi - 1}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        type(self).ranged.append((self.path, header))
        import io

        return io.BytesIO(body)


@pytest.fixture(scope="module")
def http_root(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A hierarchy zarr3c wrote with LocalStore, and the numpy data it holds."""
    root = tmp_path_factory.mktemp("http") / "h.zarr"
    rng = np.random.default_rng(7)
    data = {
        "regular": rng.integers(-1000, 1000, (50, 37), dtype=np.int32),
        "sharded": rng.random((64, 48)).astype("<f8"),
        "sub/inner": np.arange(10, dtype=np.uint8),
    }
    g = zarr3c.create_group(LocalStore(root), attributes={"title": "served"})
    g.create_array("regular", shape=(50, 37), dtype="int32", chunks=(16, 16))[...] = data["regular"]
    g.create_array("sharded", shape=(64, 48), dtype="<f8", chunks=(8, 8), shards=(32, 24))[
        ...
    ] = data["sharded"]
    g.create_group("sub").create_array("inner", shape=(10,), dtype="uint8", chunks=(4,))[...] = (
        data["sub/inner"]
    )
    (root.parent / "empty").write_bytes(b"")
    (root.parent / "v100").write_bytes(bytes(range(100)))
    return {"dir": root.parent, "data": data}


def _serve(directory: Path, handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module", params=["ranges", "no-ranges"])
def http_base(request: pytest.FixtureRequest, http_root: dict[str, Any]) -> Iterator[str]:
    """The served directory, by a server that honours Range and by one that ignores it."""
    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    handler = _RangeHandler if request.param == "ranges" else _Handler
    yield from _serve(http_root["dir"], handler)


# -- the store contract ------------------------------------------------------------------------


class TestMemoryFilesystemContract(StoreContractTests):
    """Over fsspec's in-memory filesystem (a sync filesystem: fsspec's generic code paths)."""

    def make_store(self, tmp_path: Path) -> Store:
        fsspec = pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
        return FsspecStore(fsspec.filesystem("memory"), f"/zarr3c-test-{uuid.uuid4().hex}")

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        s = self.make_store(tmp_path)
        yield s
        s.with_read_only(False).erase_prefix("")


class TestS3Contract(StoreContractTests):
    """Over a live S3 server on loopback (moto) through s3fs: async, concurrent requests."""

    @pytest.fixture
    def store(self, s3_options: dict[str, Any], s3_url: str) -> Iterator[Store]:
        s = FsspecStore.from_url(s3_url, storage_options=s3_options)
        yield s
        s.with_read_only(False).erase_prefix("")

    # Moto answers ~100 requests a second.  These run FsspecStore's checks, which happen
    # before any request, or its logic over many random operations: the in-memory contract
    # above runs them on the same class; the S3 run keeps every test that talks to S3 in a
    # way of its own (ranges, listings, erasing, missing keys).  test_concurrent_s3_threads
    # below is a smaller thread race against S3.
    test_hostile_keys_are_refused = None  # type: ignore[assignment]
    test_hostile_prefixes_are_refused = None  # type: ignore[assignment]
    test_get_partial_values_bad_range = None  # type: ignore[assignment]
    test_set_partial_values_bad_input = None  # type: ignore[assignment]
    test_set_refuses_non_bytes = None  # type: ignore[assignment]
    test_behaves_like_a_dict = None  # type: ignore[assignment]
    test_concurrent_set_and_get = None  # type: ignore[assignment]


def test_concurrent_s3_threads(s3_options: dict[str, Any], s3_url: str) -> None:
    store = FsspecStore.from_url(s3_url, storage_options=s3_options)
    n_threads, n_rounds = 4, 4
    candidates = {bytes([65 + t]) * (1000 + 100 * t) for t in range(n_threads)}
    store.set("shared", next(iter(candidates)))
    barrier = threading.Barrier(n_threads, timeout=60)

    def work(t: int) -> None:
        barrier.wait()
        mine = bytes([65 + t]) * (1000 + 100 * t)
        for r in range(n_rounds):
            store.set(f"t{t}/{r}", mine[: r + 1])
            store.set("shared", mine)
            whole, own = store.get_many(["shared", f"t{t}/{r}"])
            assert whole is not None and bytes(whole) in candidates
            assert own is not None and bytes(own) == mine[: r + 1]
            (part,) = store.get_partial_values([("shared", (-4, None))])
            assert part is not None and len(set(bytes(part))) == 1

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        for future in [pool.submit(work, t) for t in range(n_threads)]:
            future.result()
    assert len(list(store.list())) == n_threads * n_rounds + 1
    store.erase_prefix("")


# -- URLs and make_store ------------------------------------------------------------------------


def test_make_store_keeps_local_and_memory_urls(tmp_path: Path) -> None:
    assert isinstance(make_store(f"file://{tmp_path}/x.zarr"), LocalStore)
    assert isinstance(make_store(str(tmp_path / "y.zarr")), LocalStore)
    assert isinstance(make_store("memory://"), MemoryStore)


def test_make_store_s3_url(s3_options: dict[str, Any], s3_url: str) -> None:
    store = make_store(s3_url, storage_options=s3_options)
    assert isinstance(store, FsspecStore)
    assert store.url == s3_url and store.path == s3_url[len("s3://") :]
    assert not store.read_only
    assert make_store(s3_url, storage_options=s3_options, read_only=True).read_only
    assert make_store(s3_url + "/", storage_options=s3_options) == store  # trailing slash


def test_chained_url_is_an_fsspec_store(tmp_path: Path) -> None:
    pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    zarr3c.create_array(LocalStore(tmp_path / "a.zarr"), shape=(4,), dtype="i2", chunks=(2,))[...] = 3
    store = make_store(f"simplecache::file://{tmp_path}/a.zarr", read_only=True)
    assert isinstance(store, FsspecStore)
    np.testing.assert_array_equal(zarr3c.open_array(store)[...], np.full(4, 3, "i2"))


def test_fsspec_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec -> ImportError
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "zarr3c[remote]"')):
        make_store("s3://bucket/x.zarr")
    with pytest.raises(ImportError, match="fsspec"):
        FsspecStore.from_url("https://example.com/x.zarr")


def test_scheme_without_installed_implementation() -> None:
    fsspec = pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    scheme = next(
        (s for s in ("gs", "abfs", "oci", "webdav") if not _importable(s, fsspec)), None
    )
    if scheme is None:
        pytest.skip("every probed scheme's implementation is installed")
    url = f"{scheme}://bucket/x.zarr"
    from fsspec.registry import known_implementations

    package = known_implementations[scheme]["class"].split(".")[0]
    with pytest.raises(MissingDependencyError) as excinfo:
        zarr3c.open_group(url, mode="r")
    assert repr(url) in str(excinfo.value) and package in str(excinfo.value)


def test_missing_s3fs_is_a_missing_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    # One error type for a missing optional package, fsspec or the scheme's implementation.
    pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    registry = sys.modules["fsspec.registry"]
    monkeypatch.delitem(registry._registry, "s3", raising=False)  # forget an imported s3fs
    monkeypatch.setitem(sys.modules, "s3fs", None)  # import s3fs -> ImportError
    with pytest.raises(MissingDependencyError) as excinfo:
        make_store("s3://bucket/x.zarr")
    message = str(excinfo.value)
    assert "'s3://bucket/x.zarr'" in message and "s3fs" in message
    assert 'pip install "zarr3c[remote]"' in message
    assert isinstance(excinfo.value, ImportError)


def _importable(scheme: str, fsspec: Any) -> bool:
    try:
        fsspec.get_filesystem_class(scheme)
    except ImportError:
        return False
    return True


def test_unknown_scheme() -> None:
    pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    with pytest.raises(StoreError, match=r"'nosuchscheme://x/y.zarr'.*nosuchscheme"):
        zarr3c.create_array("nosuchscheme://x/y.zarr", shape=(2,), dtype="i1", chunks=(1,))


def test_constructor_checks_its_arguments() -> None:
    fsspec = pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    with pytest.raises(TypeError, match="fsspec filesystem"):
        FsspecStore("not a filesystem")
    with pytest.raises(TypeError, match="storage_options"):
        FsspecStore.from_url("memory://x", storage_options=[("a", 1)])  # type: ignore[arg-type]
    store = FsspecStore(fsspec.filesystem("memory"), "memory://root/x/")
    assert store.path == "/root/x" and store.url == "memory:///root/x"
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidArgumentError, match="coalesce"):
            FsspecStore(fsspec.filesystem("memory"), "root/x", coalesce=bad)  # type: ignore[arg-type]


# -- arrays and groups on S3 -------------------------------------------------------------------


def test_array_round_trip_on_s3(s3_options: dict[str, Any], s3_url: str) -> None:
    data = np.arange(40 * 30, dtype="<i4").reshape(40, 30) * 7
    a = zarr3c.create_array(
        s3_url, shape=data.shape, dtype=data.dtype, chunks=(16, 8), storage_options=s3_options
    )
    a[...] = data
    a[3:9, 2] = -1
    data[3:9, 2] = -1
    b = zarr3c.open_array(s3_url, mode="r", storage_options=s3_options)
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[5:33:3, 1::4], data[5:33:3, 1::4])
    np.testing.assert_array_equal(b.oindex[[0, 39], [1, 29]], data[np.ix_([0, 39], [1, 29])])
    assert b.nchunks_initialized == b.nchunks == 3 * 4
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1


def test_sharded_partial_reads_on_s3_use_byte_ranges(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array.read import native

    # (as for shards above the small-shard size: smaller ones are fetched whole)
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    data = np.random.default_rng(1).random((64, 64)).astype("<f4")
    a = zarr3c.create_array(
        s3_url,
        shape=data.shape,
        dtype=data.dtype,
        chunks=(8, 8),
        shards=(32, 32),
        storage_options=s3_options,
    )
    a[...] = data
    store = FsspecStore.from_url(s3_url, storage_options=s3_options, read_only=True)
    requests: list[tuple[str, Any, Any]] = []
    real = store.fs.cat_ranges

    def spy(paths: list[str], starts: Any, ends: Any, **kwargs: Any) -> Any:
        requests.extend(zip(paths, starts, ends, strict=True))
        return real(paths, starts, ends, **kwargs)

    monkeypatch.setattr(store.fs, "cat_ranges", spy)
    b = zarr3c.open_array(store)
    requests.clear()
    np.testing.assert_array_equal(b[3:5, 40:42], data[3:5, 40:42])
    shard = [(s, e) for p, s, e in requests if p.endswith("/c/0/1")]
    assert shard, requests
    # the shard index from the end (a suffix range) and one inner chunk: never the whole shard
    assert all(e is not None or s < 0 for s, e in shard)
    assert any(s < 0 and e is None for s, e in shard)
    np.testing.assert_array_equal(b[...], data)


def test_close_ranges_of_one_object_are_one_request(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = FsspecStore.from_url(s3_url, storage_options=s3_options).fs
    value = bytes(range(256)) * 64  # 16 KiB
    wanted = [("v", (10, 20)), ("v", (4000, 8)), ("v", (25, 100)), ("v", (-6, None)),
              ("w", (0, 4))]
    for coalesce, expected in ((None, [("v", 10, 4008), ("v", -6, None), ("w", 0, 4)]),
                               (1000, [("v", 10, 125), ("v", 4000, 4008), ("v", -6, None),
                                       ("w", 0, 4)]),
                               (0, [("v", 10, 125), ("v", 4000, 4008), ("v", -6, None),
                                    ("w", 0, 4)])):
        store = FsspecStore(fs, s3_url, **({} if coalesce is None else {"coalesce": coalesce}))
        store.set("v", value)
        store.set("w", b"wxyz")
        sent: list[tuple[str, Any, Any]] = []
        real = fs.cat_ranges

        def spy(paths: list[str], starts: Any, ends: Any, real: Any = real,
                sent: list[tuple[str, Any, Any]] = sent, **kwargs: Any) -> Any:
            sent.extend(zip(paths, starts, ends, strict=True))
            return real(paths, starts, ends, **kwargs)

        monkeypatch.setattr(fs, "cat_ranges", spy)
        got = store.get_partial_values(wanted)
        monkeypatch.undo()
        assert [bytes(g) if g is not None else None for g in got] == [
            value[10:30], value[4000:4008], value[25:125], value[-6:], b"wxyz"[:4]]
        assert sorted((p.rsplit("/", 1)[1], s, e) for p, s, e in sent) == sorted(expected), (
            coalesce, sent)
        assert pickle.loads(pickle.dumps(store))._coalesce == store._coalesce


def test_groups_and_members_on_s3(s3_options: dict[str, Any], s3_url: str) -> None:
    g = zarr3c.create_group(s3_url, attributes={"a": 1}, storage_options=s3_options)
    g.create_array("x", shape=(5,), dtype="u1", chunks=(2,))[...] = np.arange(5, dtype="u1")
    g.create_group("sub").create_array("y", shape=(3, 3), dtype="f8", chunks=(2, 2))[...] = 1.5
    h = zarr3c.open_group(s3_url, mode="r", storage_options=s3_options)
    assert h.attrs["a"] == 1
    assert sorted(name for name, _ in h.members()) == ["sub", "x"]
    assert sorted(name for name, _ in h.members(max_depth=None)) == ["sub", "sub/y", "x"]
    np.testing.assert_array_equal(h["x"][...], np.arange(5, dtype="u1"))
    np.testing.assert_array_equal(h["sub/y"][...], np.full((3, 3), 1.5))
    assert "sub" in h and "nope" not in h


def test_pickled_array_and_store_reopen(s3_options: dict[str, Any], s3_url: str) -> None:
    a = zarr3c.create_array(s3_url, shape=(6,), dtype="i8", chunks=(4,), storage_options=s3_options)
    a[...] = np.arange(6)
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone[...], np.arange(6))
    clone[0] = 42  # still writable, over the same bucket
    np.testing.assert_array_equal(a[...], [42, 1, 2, 3, 4, 5])
    store = FsspecStore.from_url(s3_url, storage_options=s3_options, read_only=True)
    again = pickle.loads(pickle.dumps(store))
    assert again == store and again.read_only and again.lock_id == store.lock_id
    assert sorted(again.list()) == ["c/0", "c/1", "zarr.json"]


def test_identity(s3_options: dict[str, Any], s3_url: str) -> None:
    a = FsspecStore.from_url(s3_url, storage_options=s3_options)
    b = FsspecStore.from_url(s3_url, storage_options=dict(s3_options))
    assert a == b and hash(a) == hash(b) and a.lock_id == b.lock_id
    other = FsspecStore.from_url(s3_url + "-other", storage_options=s3_options)
    assert other != a and other.lock_id != a.lock_id
    assert a != a.with_read_only(True)
    assert s3_url in repr(a)


def test_get_many_and_ranges_run_in_one_batch(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FsspecStore.from_url(s3_url, storage_options=s3_options)
    for i in range(20):
        store.set(f"k/{i}", bytes([i]) * 10)
    calls: list[int] = []
    real = store.fs.cat_ranges

    def spy(paths: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(paths))
        return real(paths, *args, **kwargs)

    monkeypatch.setattr(store.fs, "cat_ranges", spy)
    keys = [f"k/{i}" for i in range(25)]
    got = store.get_many(keys + keys[:3])
    assert [None if g is None else bytes(g) for g in got] == [
        bytes([i]) * 10 if i < 20 else None for i in range(25)
    ] + [bytes([i]) * 10 for i in range(3)]
    parts = store.get_partial_values([(k, (-3, None)) for k in keys])
    assert [None if p is None else bytes(p) for p in parts] == [
        bytes([i]) * 3 if i < 20 else None for i in range(25)
    ]
    assert calls == [25, 25]  # one concurrent batch each, duplicates fetched once


# -- bad input ---------------------------------------------------------------------------------


def test_missing_bucket_is_an_error_not_a_missing_key(s3_options: dict[str, Any]) -> None:
    url = "s3://zarr3c-no-such-bucket/x.zarr"
    store = FsspecStore.from_url(url, storage_options=s3_options)
    with pytest.raises(StoreError, match=r"zarr3c-no-such-bucket/x.zarr/zarr.json.*bucket"):
        store.get("zarr.json")
    with pytest.raises(StoreError, match="zarr3c-no-such-bucket"):
        zarr3c.open_array(url, storage_options=s3_options)
    with pytest.raises(StoreError, match="zarr3c-no-such-bucket"):
        list(store.list())
    # (creating lists the store first: the listing's error names the bucket)
    with pytest.raises(StoreError, match=r"zarr3c-no-such-bucket/x.zarr.*bucket does not exist"):
        zarr3c.create_group(url, storage_options=s3_options)


def test_creating_on_s3_lists_once_and_reads_nothing(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FsspecStore.from_url(s3_url, storage_options=s3_options)
    calls: list[str] = []
    real_call, real_cat = store.fs.call_s3, store.fs.cat_ranges

    def call_s3(method: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(method)
        return real_call(method, *args, **kwargs)

    def cat_ranges(paths: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.extend(["read"] * len(paths))
        return real_cat(paths, *args, **kwargs)

    monkeypatch.setattr(store.fs, "call_s3", call_s3)
    monkeypatch.setattr(store.fs, "cat_ranges", cat_ranges)
    a = zarr3c.create_array(store, name="a/b", shape=(4,), dtype="u1")
    # one listing of the (empty) store answers every check; then the three documents
    assert calls[:1] == ["list_objects_v2"] and "read" not in calls, calls
    assert store.list_few("", 10) == ["a/b/zarr.json", "a/zarr.json", "zarr.json"]
    assert store.list_few("a/", 2) is None and store.list_few("a/b/", 2) == ["a/b/zarr.json"]
    # v3 below a Zarr v2 hierarchy is still refused, from the listing alone
    v2 = FsspecStore.from_url(s3_url + "-v2", storage_options=s3_options)
    zarr3c.create_group(v2, zarr_format=2)
    with pytest.raises(zarr3c.errors.UnsupportedFormatError, match="zarr_format=2"):
        zarr3c.create_array(v2, name="x", shape=(4,), dtype="u1")
    a[...] = 7
    np.testing.assert_array_equal(zarr3c.open_array(store, path="a/b", mode="r")[...], 7)


def test_unreachable_s3_endpoint(s3_url: str) -> None:
    pytest.importorskip("s3fs", reason="needs s3fs")
    options = _s3_options(f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    options["config_kwargs"] = {"connect_timeout": 1, "read_timeout": 1, "retries": {"max_attempts": 1}}
    with pytest.raises(StoreError, match=r"zarr.json.*127\.0\.0\.1"):
        zarr3c.open_group(s3_url, mode="r", storage_options=options)


def test_unreachable_http_server() -> None:
    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    url = f"http://127.0.0.1:{_free_port()}/x.zarr"
    with pytest.raises(StoreError, match=re.escape(url + "/zarr.json")):
        zarr3c.open_group(url, mode="r")


def test_silent_http_server_times_out() -> None:
    aiohttp = pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    with socket.socket() as listener:  # accepts connections (backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x.zarr"
        options = {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=1)}}
        with pytest.raises(StoreError, match=r"zarr.json.*timed out"):
            zarr3c.open_array(url, storage_options=options)


def test_wrong_credentials(s3_endpoint: str, s3_options: dict[str, Any], s3_url: str) -> None:
    zarr3c.create_array(s3_url, shape=(2,), dtype="i1", chunks=(1,), storage_options=s3_options)
    bad = FsspecStore.from_url(
        s3_url, storage_options=_s3_options(s3_endpoint, key="wrong", skip_instance_cache=True)
    )

    def reset_auth(count: str) -> None:
        req = urllib.request.Request(
            f"{s3_endpoint}/moto-api/reset-auth",
            data=count.encode(),
            headers={"Content-Type": "text/plain"},  # a form body would be parsed away
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=10) as response:
            response.read()

    reset_auth("0")  # moto checks signatures and IAM from now on
    try:
        with pytest.raises(StoreError, match=r"zarr.json.*(InvalidAccessKeyId|Permission|denied)"):
            bad.get("zarr.json")
        with pytest.raises(StoreError, match="'c/0'"):
            bad.set("c/0", b"x")
    finally:
        reset_auth("inf")
    assert bytes(FsspecStore.from_url(s3_url, storage_options=s3_options).get("zarr.json"))


def test_failed_request_in_a_batch_raises(http_base: str) -> None:
    store = FsspecStore.from_url(http_base)
    assert store.get_many(["v100", "missing"])[1] is None  # a 404 is a missing key
    with pytest.raises(StoreError, match=r"'boom/1'.*500"):
        store.get_many(["v100", "boom/1", "missing"])
    with pytest.raises(StoreError, match="'boom'"):
        store.get_partial_values([("v100", (0, 4)), ("boom", (-4, None))])


# -- HTTP ---------------------------------------------------------------------------------------


_HTTP_RANGES = [
    ((0, None), "whole"),
    ((10, 5), "middle"),
    ((10, None), "to-end"),
    ((0, 0), "empty"),
    ((-16, None), "suffix"),
    ((-1000, None), "suffix-longer"),
    ((95, 10), "past-end"),
    ((100, 5), "at-end"),
    ((200, None), "beyond-end"),
    ((0, 100), "exact"),
    ((0, 150), "longer"),
    ((10, 100), "offset-length-of-value"),  # whole value == length asked: still sliced
]


@pytest.mark.parametrize(("rng", "rid"), _HTTP_RANGES, ids=[i for _, i in _HTTP_RANGES])
def test_http_byte_ranges(http_base: str, rng: tuple[int, int | None], rid: str) -> None:
    store = FsspecStore.from_url(http_base)
    value = bytes(range(100))
    start, length = rng
    expected = value[start:] if length is None else value[start : start + length]
    got = store.get_partial_values([("v100", rng), ("empty", rng), ("missing", rng)])
    assert bytes(got[0]) == expected  # type: ignore[arg-type]
    assert bytes(got[1]) == b""  # type: ignore[arg-type]
    assert got[2] is None


def test_http_range_support_is_learnt_once_per_store(
    http_base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FsspecStore.from_url(http_base)
    real_info = store.fs.info
    looked_up: list[str] = []

    def info(path: str, **kwargs: Any) -> Any:
        looked_up.append(path)
        return real_info(path, **kwargs)

    monkeypatch.setattr(store.fs, "info", info)
    value = bytes(range(100))
    ranges = [(10, 100), (1, 5), (50, None), (99, 1), (3, 97), (90, 20), (20, 80)]
    for rng in ranges * 2:
        start, length = rng
        expected = value[start:] if length is None else value[start : start + length]
        assert bytes(store.get_partial_values([("v100", rng)])[0]) == expected  # type: ignore[arg-type]
    got = store.get_partial_values([("v100", rng) for rng in ranges])
    expected = [value[s:] if n is None else value[s : s + n] for s, n in ranges]
    assert [bytes(g) for g in got] == expected  # type: ignore[arg-type]
    assert len(looked_up) <= 1


def test_http_hierarchy_reads(http_base: str, http_root: dict[str, Any]) -> None:
    data = http_root["data"]
    url = f"{http_base}/h.zarr"
    g = zarr3c.open_group(url, mode="r")
    assert g.attrs["title"] == "served"
    assert sorted(name for name, _ in g.members()) == ["regular", "sharded", "sub"]
    np.testing.assert_array_equal(g["regular"][...], data["regular"])
    np.testing.assert_array_equal(g["regular"][7:40:5, 3], data["regular"][7:40:5, 3])
    np.testing.assert_array_equal(g["sharded"][33:35, 1:3], data["sharded"][33:35, 1:3])
    np.testing.assert_array_equal(g["sharded"][...], data["sharded"])
    a = zarr3c.open_array(f"{url}/sub/inner", mode="r")
    np.testing.assert_array_equal(a[...], data["sub/inner"])
    assert a.nchunks_initialized == 3


def test_http_sharded_reads_are_ranged(
    http_root: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array.read import native

    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    # (as for shards above the small-shard size: smaller ones are fetched whole)
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    for base in _serve(http_root["dir"], _RangeHandler):
        a = zarr3c.open_array(f"{base}/h.zarr/sharded", mode="r")
        _RangeHandler.ranged.clear()
        np.testing.assert_array_equal(a[40, 30], http_root["data"]["sharded"][40, 30])
        # the shard index from the end, then one inner chunk: never the whole shard
        shard = "/h.zarr/sharded/c/1/1"
        assert [p for p, _ in _RangeHandler.ranged] == [shard, shard]
        index, chunk = (r for _, r in _RangeHandler.ranged)
        assert re.fullmatch(r"bytes=-\d+", index) and re.fullmatch(r"bytes=\d+-\d+", chunk)


def test_getsize_asks_the_filesystem_not_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    fsspec = pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    store = FsspecStore(fsspec.filesystem("memory"), f"/zarr3c-test-{uuid.uuid4().hex}")
    store.set("a/b", b"x" * 300)

    def no_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("getsize read a value")

    monkeypatch.setattr(store.fs, "cat_ranges", no_reads)
    assert [store.getsize(k) for k in ("a/b", "a", "missing")] == [300, None, None]

    def refused(path: str, **kwargs: Any) -> Any:
        raise PermissionError("access denied")

    monkeypatch.setattr(store.fs, "info", refused)
    with pytest.raises(StoreError, match=r"'a/b'.*access denied"):
        store.getsize("a/b")
    monkeypatch.undo()
    store.erase_prefix("")


def test_set_passes_bytes_through_without_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    fsspec = pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    store = FsspecStore(fsspec.filesystem("memory"), f"/zarr3c-test-{uuid.uuid4().hex}")
    real_pipe = store.fs.pipe_file
    sent: list[Any] = []

    def pipe_file(path: str, data: Any, **kwargs: Any) -> Any:
        sent.append(data)
        return real_pipe(path, data, **kwargs)

    monkeypatch.setattr(store.fs, "pipe_file", pipe_file)
    value, mutable = b"x" * 1000, bytearray(b"y" * 10)
    store.set("a", value)
    store.set("b", mutable)
    store.set("c", np.arange(4, dtype="<u2")[::2])  # not contiguous: copied
    assert sent[0] is value and sent[1] is mutable
    assert [bytes(store.get(k)) for k in "abc"] == [value, bytes(mutable), b"\x00\x00\x02\x00"]  # type: ignore[arg-type]
    monkeypatch.undo()
    store.erase_prefix("")


def test_http_getsize(http_base: str) -> None:
    store = FsspecStore.from_url(http_base)
    assert [store.getsize(k) for k in ("v100", "empty", "missing")] == [100, 0, None]


def test_http_is_read_only(http_base: str) -> None:
    url = f"{http_base}/h.zarr"
    store = make_store(url)  # not asked read-only, and still read-only
    assert store.read_only and store.with_read_only(False).read_only
    with pytest.raises(ReadOnlyError, match=r"'c/0'.*HTTP"):
        store.set("c/0", b"x")
    with pytest.raises(ReadOnlyError, match="read-only"):
        zarr3c.create_array(f"{url}/new", shape=(2,), dtype="i1", chunks=(1,))
    a = zarr3c.open_array(f"{url}/regular", mode="r+")
    with pytest.raises(ReadOnlyError):
        a[0, 0] = 5
    assert pickle.loads(pickle.dumps(store)).read_only


class _CountingHandler(_Handler):
    """Counts every request (path, method) the server answers."""

    requests: list[tuple[str, str]] = []

    def send_head(self) -> Any:
        type(self).requests.append((self.command, self.path))
        return super().send_head()


def test_consolidated_hierarchy_of_1000_arrays_opens_over_http_with_one_request(
    tmp_path: Path,
) -> None:
    """Issue 10: a consolidated hierarchy of 1,000 arrays opens, lists and opens every array
    over a high-latency (HTTP) store with a single metadata request."""
    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    root = tmp_path / "big.zarr"
    g = zarr3c.create_group(LocalStore(root))
    shapes = {}
    for i in range(10):
        sub = g.create_group(f"g{i}")
        for j in range(100):
            shape = (i + 1, j + 1)
            sub.create_array(f"a{j}", shape=shape, dtype="int16", chunks=(4, 4))
            shapes[f"g{i}/a{j}"] = shape
    zarr3c.consolidate_metadata(LocalStore(root))
    for base in _serve(tmp_path, _CountingHandler):
        _CountingHandler.requests.clear()
        h = zarr3c.open_group(f"{base}/big.zarr", mode="r")
        seen = {}
        for gname, sub in h.members():
            for aname, arr in sub.members():
                seen[f"{gname}/{aname}"] = arr.shape
        assert seen == shapes
        assert h["g3/a7"].shape == (4, 8)
        assert _CountingHandler.requests == [("GET", "/big.zarr/zarr.json")]
