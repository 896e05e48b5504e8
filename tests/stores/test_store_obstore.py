"""ObjectStore: the store contract over obstore's in-memory and local stores and a live S3
server on loopback (moto's server mode), URL dispatch in make_store, obstore and zarr-python
store instances accepted as stores, interop with zarr-python's ObjectStore both ways,
concurrency and range coalescing, pickling, HTTP reads (with and without Range support) and
bad input (unreachable endpoint, missing bucket, wrong credentials) named by URL with no
credentials in messages or reprs; through the latency proxy (zarr3c.testing.s3_proxy): the
requests a read sends, and injected faults (5xx, dropped connections) on reads and writes."""

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

obstore = pytest.importorskip("obstore", reason="ObjectStore needs obstore")
from obstore.store import LocalStore as ObstoreLocal  # noqa: E402
from obstore.store import MemoryStore as ObstoreMemory  # noqa: E402
from obstore.store import S3Store  # noqa: E402

import zarr3c  # noqa: E402
from zarr3c.errors import MissingDependencyError, ReadOnlyError, StoreError  # noqa: E402
from zarr3c.stores import FsspecStore, ObjectStore, Store, make_store  # noqa: E402
from zarr3c.testing.store_suite import StoreContractTests  # noqa: E402

BUCKET = "zarr3c-obstore"
SECRET = "s3cr3t-never-shown"
# obstore's retries back off for seconds: none here, so that failures are quick.
FAST = {"max_retries": 0, "timeout": 10, "connect_timeout": 2}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- servers -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on loopback with one bucket; dummy credentials only."""
    moto_server = pytest.importorskip(
        "moto.server", reason="the live S3 tests need moto's server mode (pip install 'moto[server]')"
    )
    mp = pytest.MonkeyPatch()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL"):
        mp.delenv(name, raising=False)
    mp.setenv("AWS_ACCESS_KEY_ID", "testing")
    mp.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
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
        request = urllib.request.Request(f"{endpoint}/{BUCKET}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:  # moto: no signature check
            response.read()
        yield endpoint
    finally:
        server.stop()
        mp.undo()


def _s3_options(endpoint: str, **extra: Any) -> dict[str, Any]:
    return {
        "access_key_id": "testing",
        "secret_access_key": SECRET,
        "endpoint": endpoint,
        "region": "us-east-1",
        **FAST,
        **extra,
    }


@pytest.fixture
def s3_options(s3_endpoint: str) -> dict[str, Any]:
    return _s3_options(s3_endpoint)


@pytest.fixture
def s3_url() -> str:
    """A fresh prefix in the test bucket."""
    return f"s3://{BUCKET}/t-{uuid.uuid4().hex[:12]}"


# -- the store contract ------------------------------------------------------------------------


class TestMemoryContract(StoreContractTests):
    """Over obstore's in-memory store."""

    def make_store(self, tmp_path: Path) -> Store:
        return ObjectStore(ObstoreMemory())


class TestLocalContract(StoreContractTests):
    """Over obstore's local store (empty directories removed as keys go)."""

    def make_store(self, tmp_path: Path) -> Store:
        return ObjectStore(ObstoreLocal(tmp_path / "root", mkdir=True, automatic_cleanup=True))


class TestS3Contract(StoreContractTests):
    """Over a live S3 server on loopback (moto): concurrent requests through obstore."""

    @pytest.fixture
    def store(self, s3_options: dict[str, Any], s3_url: str) -> Iterator[Store]:
        s = ObjectStore.from_url(s3_url, storage_options=s3_options)
        yield s
        s.with_read_only(False).erase_prefix("")

    # Moto answers ~100 requests a second.  These check arguments before any request, or run
    # many random operations: the in-memory and local contracts above run them on the same
    # class; the S3 run keeps every test that talks to S3 in a way of its own.
    test_hostile_keys_are_refused = None  # type: ignore[assignment]
    test_hostile_prefixes_are_refused = None  # type: ignore[assignment]
    test_get_partial_values_bad_range = None  # type: ignore[assignment]
    test_set_partial_values_bad_input = None  # type: ignore[assignment]
    test_set_refuses_non_bytes = None  # type: ignore[assignment]
    test_behaves_like_a_dict = None  # type: ignore[assignment]
    test_concurrent_set_and_get = None  # type: ignore[assignment]
    test_get_partial_values_matches_slicing = None  # type: ignore[assignment]


# -- URLs, make_store and instances ------------------------------------------------------------


def test_make_store_prefers_obstore_for_object_store_urls(
    s3_options: dict[str, Any], s3_url: str
) -> None:
    store = make_store(s3_url, storage_options=s3_options)
    assert isinstance(store, ObjectStore)
    assert store.url == s3_url and not store.read_only
    assert make_store(s3_url, storage_options=s3_options, read_only=True).read_only
    assert make_store(s3_url.upper().replace(BUCKET.upper(), BUCKET), storage_options=s3_options)
    for url in ("gs://bucket/x.zarr", "gcs://bucket/x.zarr", "az://container/x.zarr",
                "https://example.com/x.zarr"):
        options = {"account_name": "acct"} if url.startswith("az") else None
        assert isinstance(make_store(url, storage_options=options), ObjectStore), url
    # fsspec keeps every other URL, and chained ones
    pytest.importorskip("fsspec", reason="FsspecStore needs fsspec")
    assert isinstance(make_store("simplecache::s3://bucket/x.zarr"), FsspecStore)


def test_make_store_falls_back_to_fsspec_without_obstore(
    monkeypatch: pytest.MonkeyPatch, s3_options: dict[str, Any], s3_url: str
) -> None:
    pytest.importorskip("s3fs", reason="the fallback is fsspec's S3 filesystem")
    monkeypatch.setitem(sys.modules, "obstore", None)  # as if not installed
    fsspec_options = {
        "key": "testing",
        "secret": SECRET,
        "endpoint_url": s3_options["endpoint"],
        "client_kwargs": {"region_name": "us-east-1"},
    }
    assert isinstance(make_store(s3_url, storage_options=fsspec_options), FsspecStore)
    with pytest.raises(MissingDependencyError, match=re.escape('pip install "zarr3c[obstore]"')):
        ObjectStore.from_url(s3_url)


def test_fsspec_option_names_are_mapped(s3_endpoint: str, s3_url: str) -> None:
    # options written for s3fs keep working when obstore wins the URL
    options = {
        "key": "testing",
        "secret": SECRET,
        "endpoint_url": s3_endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
        "config_kwargs": {"connect_timeout": 2, "read_timeout": 10, "retries": {"max_attempts": 0}},
    }
    a = zarr3c.create_array(s3_url, shape=(4,), dtype="i2", chunks=(2,), storage_options=options)
    a[...] = np.arange(4)
    assert isinstance(a.store, ObjectStore)
    np.testing.assert_array_equal(zarr3c.open_array(s3_url, storage_options=options)[...], np.arange(4))
    with pytest.raises(StoreError, match=r"'skip_instance_cachex'.*FsspecStore"):
        make_store(s3_url, storage_options={**options, "skip_instance_cachex": True})
    with pytest.raises(StoreError, match=r"config_kwargs.*'signature_version'"):
        make_store(s3_url, storage_options={"config_kwargs": {"signature_version": "v2"}})


def test_obstore_and_zarr_python_instances_are_stores(tmp_path: Path) -> None:
    data = np.arange(12, dtype="<f4").reshape(3, 4)
    raw = ObstoreLocal(tmp_path / "x.zarr", mkdir=True)
    a = zarr3c.create_array(raw, shape=data.shape, dtype=data.dtype, chunks=(2, 2))
    a[...] = data
    assert isinstance(a.store, ObjectStore)
    np.testing.assert_array_equal(zarr3c.open_array(str(tmp_path / "x.zarr"))[...], data)
    zarr = pytest.importorskip("zarr", reason="needs zarr-python")
    wrapped = zarr.storage.ObjectStore(raw, read_only=True)
    b = zarr3c.open_array(wrapped)
    assert isinstance(b.store, ObjectStore) and b.store.read_only
    np.testing.assert_array_equal(b[...], data)
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1
    with pytest.raises(TypeError, match="obstore store"):
        ObjectStore({"not": "a store"})
    with pytest.raises(StoreError, match="storage_options"):
        make_store(raw, storage_options={"region": "x"})


def test_constructor_checks_its_arguments() -> None:
    with pytest.raises(StoreError, match="max_concurrency"):
        ObjectStore(ObstoreMemory(), max_concurrency=0)
    with pytest.raises(StoreError, match="coalesce"):
        ObjectStore(ObstoreMemory(), coalesce=-1)
    with pytest.raises(StoreError, match="max_concurrency"):
        ObjectStore.from_url("s3://b/x", storage_options={"max_concurrency": "many"})
    with pytest.raises(TypeError, match="storage_options"):
        ObjectStore.from_url("s3://b/x", storage_options=[("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="remote stores"):
        ObjectStore.from_url("memory://", storage_options={"region": "x"})


# -- arrays, groups and interop on S3 ---------------------------------------------------------


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
    assert b.nchunks_initialized == b.nchunks == 3 * 4
    with pytest.raises(ReadOnlyError):
        b[0, 0] = 1


def test_sharded_reads_coalesce_ranges_and_read_the_index_once(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array.read import native

    # (as for shards above the small-shard size: smaller ones are fetched whole)
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    data = np.random.default_rng(1).random((64, 64)).astype("<f4")
    a = zarr3c.create_array(
        s3_url, shape=data.shape, dtype=data.dtype, chunks=(8, 8), shards=(32, 32),
        storage_options=s3_options,
    )
    a[...] = data
    requests: list[tuple[str, Any]] = []
    real = obstore.get_async

    async def spy(store: Any, path: str, *, options: Any = None) -> Any:
        requests.append((path, (options or {}).get("range")))
        return await real(store, path, options=options)

    monkeypatch.setattr(obstore, "get_async", spy)
    b = zarr3c.open_array(s3_url, mode="r", storage_options=s3_options)
    requests.clear()
    np.testing.assert_array_equal(b[3:5, 40:42], data[3:5, 40:42])
    shard = [rng for path, rng in requests if path == "c/0/1"]
    # the index from the end (one suffix request), then one inner chunk: never the whole shard
    assert len(shard) == 2 and shard[0] == {"suffix": 16 * 16 + 4}  # 16 inner chunks, shard
    assert isinstance(shard[1], tuple) and shard[1][1] - shard[1][0] < 8 * 8 * 4 + 64
    # 4 inner chunks of one shard, next to each other: one request
    requests.clear()
    np.testing.assert_array_equal(b[0:16, 32:48], data[0:16, 32:48])
    shard = [rng for path, rng in requests if path == "c/0/1"]
    assert len(shard) == 2 and isinstance(shard[1], tuple), shard
    # and none when coalescing is off
    c = zarr3c.open_array(ObjectStore.from_url(s3_url, {**s3_options, "coalesce": 0}, read_only=True))
    requests.clear()
    np.testing.assert_array_equal(c[0:16, 32:48], data[0:16, 32:48])
    assert len([r for p, r in requests if p == "c/0/1"]) >= 3


def test_get_many_is_concurrent_and_bounded(
    s3_options: dict[str, Any], s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ObjectStore.from_url(s3_url, {**s3_options, "max_concurrency": 3})
    for i in range(12):
        store.set(f"k/{i}", bytes([i]) * 10)
    in_flight, peak = 0, 0
    real = obstore.get_async

    async def spy(*args: Any, **kwargs: Any) -> Any:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            import asyncio

            await asyncio.sleep(0.02)  # long enough for the others to start
            return await real(*args, **kwargs)
        finally:
            in_flight -= 1

    monkeypatch.setattr(obstore, "get_async", spy)
    keys = [f"k/{i}" for i in range(15)]
    got = store.get_many(keys + keys[:2])
    assert [None if g is None else bytes(g) for g in got] == [
        bytes([i]) * 10 if i < 12 else None for i in range(15)
    ] + [bytes([0]) * 10, bytes([1]) * 10]
    assert peak == 3


def test_bounded_reads_ask_for_one_byte_more(s3_options: dict[str, Any], s3_url: str) -> None:
    from zarr3c.errors import OversizedValueError

    store = ObjectStore.from_url(s3_url, storage_options=s3_options)
    store.set("small", b"x" * 10)
    store.set("big", b"y" * 10_000)
    store.set("empty", b"")
    assert [None if v is None else bytes(v) for v in store.get_many_at_most(
        ["small", "empty", "gone"], 10)] == [b"x" * 10, b"", None]
    with pytest.raises(OversizedValueError, match="'big'"):
        store.get_at_most("big", 100)


def test_zarr_python_reads_what_zarr3c_wrote(s3_options: dict[str, Any], s3_url: str) -> None:
    zarr = pytest.importorskip("zarr", reason="interop needs zarr-python")
    data = np.arange(40 * 30, dtype="int16").reshape(40, 30)
    g = zarr3c.create_group(s3_url, attributes={"k": [1, 2]}, storage_options=s3_options)
    g.create_array("a", shape=data.shape, dtype=data.dtype, chunks=(8, 8), shards=(16, 24))[...] = data
    raw = S3Store(BUCKET, prefix=s3_url.split("/", 3)[3], client_options={"allow_http": True},
                  **{k: v for k, v in s3_options.items() if k not in FAST})
    root = zarr.open_group(zarr.storage.ObjectStore(raw, read_only=True), mode="r")
    assert root.attrs["k"] == [1, 2]
    np.testing.assert_array_equal(root["a"][...], data)


def test_zarr3c_reads_what_zarr_python_wrote(s3_options: dict[str, Any], s3_url: str) -> None:
    zarr = pytest.importorskip("zarr", reason="interop needs zarr-python")
    data = np.random.default_rng(3).random((40, 30))
    raw = S3Store(BUCKET, prefix=s3_url.split("/", 3)[3], client_options={"allow_http": True},
                  **{k: v for k, v in s3_options.items() if k not in FAST})
    root = zarr.open_group(zarr.storage.ObjectStore(raw), mode="w", attributes={"k": "v"})
    root.create_array("a", shape=data.shape, dtype=data.dtype, chunks=(16, 8))[...] = data
    g = zarr3c.open_group(s3_url, mode="r", storage_options=s3_options)
    assert g.attrs["k"] == "v" and [name for name, _ in g.members()] == ["a"]
    np.testing.assert_array_equal(g["a"][5:21, 7:9], data[5:21, 7:9])
    # zarr-python's own ObjectStore instance, handed to zarr3c
    np.testing.assert_array_equal(zarr3c.open_group(zarr.storage.ObjectStore(raw))["a"][...], data)


# -- pickling and secrets ----------------------------------------------------------------------


def test_pickled_array_and_store_reopen(s3_options: dict[str, Any], s3_url: str) -> None:
    a = zarr3c.create_array(s3_url, shape=(6,), dtype="i8", chunks=(4,), storage_options=s3_options)
    a[...] = np.arange(6)
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone[...], np.arange(6))
    clone[0] = 42  # still writable, over the same bucket
    np.testing.assert_array_equal(a[...], [42, 1, 2, 3, 4, 5])
    store = ObjectStore.from_url(s3_url, {**s3_options, "max_concurrency": 5}, read_only=True)
    again = pickle.loads(pickle.dumps(store))
    assert again == store and again.read_only and again.lock_id == store.lock_id
    assert again._max_concurrency == 5
    assert sorted(again.list()) == ["c/0", "c/1", "zarr.json"]


def test_pickled_store_reads_in_a_fresh_process(
    s3_options: dict[str, Any], s3_url: str, tmp_path: Path
) -> None:
    import subprocess

    a = zarr3c.create_array(s3_url, shape=(5,), dtype="u1", chunks=(2,), storage_options=s3_options)
    a[...] = np.arange(5, dtype="u1")
    (tmp_path / "a.pkl").write_bytes(pickle.dumps(a))
    code = (
        "import pickle, sys; a = pickle.load(open(sys.argv[1], 'rb')); print(a[...].tolist())"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}  # config only
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "a.pkl")],
        capture_output=True, text=True, timeout=120, env=env, check=True,
    )
    assert out.stdout.strip() == "[0, 1, 2, 3, 4]"


def test_reprs_and_errors_never_show_credentials(s3_endpoint: str, s3_url: str) -> None:
    options = _s3_options(f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    store = ObjectStore.from_url(s3_url, storage_options=options)
    assert SECRET not in repr(store) and SECRET not in str(store)
    with pytest.raises(StoreError) as excinfo:
        store.get("zarr.json")
    message = str(excinfo.value)
    assert "'zarr.json'" in message and f"{s3_url}/zarr.json" in message
    assert SECRET not in message and SECRET not in repr(excinfo.value)
    with pytest.raises(StoreError, match="nope") as excinfo:
        ObjectStore.from_url("s3://b/x", storage_options={"nope": SECRET, "secret": SECRET})
    assert SECRET not in str(excinfo.value)
    url = f"https://user:{SECRET}@example.com/x.zarr?sig={SECRET}"
    assert SECRET not in repr(make_store(url))


# -- bad input ---------------------------------------------------------------------------------


def test_unreachable_endpoint_names_the_url(s3_url: str) -> None:
    port = _free_port()
    options = _s3_options(f"http://127.0.0.1:{port}")
    with pytest.raises(StoreError, match=rf"zarr.json.*127\.0\.0\.1:{port}"):
        zarr3c.open_group(s3_url, mode="r", storage_options=options)


def test_missing_bucket_is_an_error_not_a_missing_key(s3_options: dict[str, Any]) -> None:
    url = "s3://zarr3c-no-such-bucket/x.zarr"
    store = ObjectStore.from_url(url, storage_options=s3_options)
    with pytest.raises(StoreError, match=r"zarr3c-no-such-bucket/x.zarr/zarr.json.*bucket"):
        store.get("zarr.json")
    with pytest.raises(StoreError, match="zarr3c-no-such-bucket"):
        zarr3c.open_array(url, storage_options=s3_options)
    with pytest.raises(StoreError, match="zarr3c-no-such-bucket.*bucket"):
        list(store.list())
    # (creating lists the store first: the listing's error names the bucket)
    with pytest.raises(StoreError, match=r"zarr3c-no-such-bucket/x.zarr.*does not exist"):
        zarr3c.create_group(url, storage_options=s3_options)


def test_wrong_credentials(s3_endpoint: str, s3_options: dict[str, Any], s3_url: str) -> None:
    zarr3c.create_array(s3_url, shape=(2,), dtype="i1", chunks=(1,), storage_options=s3_options)
    bad = ObjectStore.from_url(s3_url, storage_options=_s3_options(s3_endpoint, access_key_id="wrong"))

    def reset_auth(count: str) -> None:
        req = urllib.request.Request(
            f"{s3_endpoint}/moto-api/reset-auth",
            data=count.encode(),
            headers={"Content-Type": "text/plain"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=10) as response:
            response.read()

    reset_auth("0")  # moto checks signatures and IAM from now on
    try:
        with pytest.raises(StoreError, match=r"zarr.json.*(InvalidAccessKeyId|Permission|denied|403)") as excinfo:
            bad.get("zarr.json")
        assert SECRET not in str(excinfo.value)
        with pytest.raises(StoreError, match="'c/0'"):
            bad.set("c/0", b"x")
    finally:
        reset_auth("inf")
    assert bytes(ObjectStore.from_url(s3_url, storage_options=s3_options).get("zarr.json"))


# -- HTTP --------------------------------------------------------------------------------------


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """http.server's file handler with single byte ranges (``bytes=a-b``, ``a-``, ``-n``)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        header = self.headers.get("Range")
        path = self.translate_path(self.path)
        if header is None or not os.path.isfile(path):
            return super().send_head()
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
        assert m is not None
        size = os.path.getsize(path)
        first, last = m.groups()
        if first == "":
            lo, hi = max(size - int(last), 0), size
        else:
            lo, hi = int(first), size if last == "" else min(int(last) + 1, size)
        if lo >= size:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        import io

        with open(path, "rb") as f:
            f.seek(lo)
            body = f.read(hi - lo)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {lo}-{hi - 1}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Ignores Range, as Python's http.server does."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module", params=["ranges", "no-ranges"])
def http_base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("http")
    g = zarr3c.create_group(str(root / "h.zarr"), attributes={"title": "served"})
    g.create_array("sharded", shape=(64, 48), dtype="<f8", chunks=(8, 8), shards=(32, 24))[...] = (
        np.arange(64 * 48, dtype="<f8").reshape(64, 48)
    )
    zarr3c.consolidate_metadata(str(root / "h.zarr"))
    (root / "v100").write_bytes(bytes(range(100)))
    (root / "empty").write_bytes(b"")
    handler = _RangeHandler if request.param == "ranges" else _QuietHandler
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


_HTTP_RANGES = [(0, None), (10, 5), (10, None), (0, 0), (-16, None), (-1000, None), (95, 10),
                (100, 5), (200, None), (0, 150)]


def test_http_byte_ranges(http_base: str) -> None:
    store = make_store(http_base, storage_options={"max_retries": 0})
    assert isinstance(store, ObjectStore) and store.read_only
    value = bytes(range(100))
    for start, length in _HTTP_RANGES:
        expected = value[start:] if length is None else value[start : start + length]
        got = store.get_partial_values(
            [("v100", (start, length)), ("empty", (start, length)), ("missing", (start, length))]
        )
        assert bytes(got[0]) == expected, (start, length)  # type: ignore[arg-type]
        assert bytes(got[1]) == b"" and got[2] is None, (start, length)  # type: ignore[arg-type]
    with pytest.raises(ReadOnlyError, match=r"'k'.*HTTP"):
        store.set("k", b"x")


def test_http_hierarchy_reads(http_base: str) -> None:
    g = zarr3c.open_group(f"{http_base}/h.zarr", mode="r", storage_options={"max_retries": 0})
    assert isinstance(g.store, ObjectStore) and g.attrs["title"] == "served"
    expected = np.arange(64 * 48, dtype="<f8").reshape(64, 48)
    np.testing.assert_array_equal(g["sharded"][33:35, 1:3], expected[33:35, 1:3])
    np.testing.assert_array_equal(g["sharded"][...], expected)


def test_http_listing_reads_directory_pages(http_base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("aiohttp", reason="fsspec's HTTP filesystem needs aiohttp")
    store = ObjectStore.from_url(f"{http_base}/h.zarr", {"max_retries": 0})
    assert store.list_dir("") == (["zarr.json"], ["sharded/"])
    assert "sharded/zarr.json" in set(store.list_prefix("sharded/"))
    # without fsspec: obstore's WebDAV listing, which a plain server refuses: a clear error
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    bare = ObjectStore.from_url(f"{http_base}/h.zarr", {"max_retries": 0})
    with pytest.raises(StoreError, match=r"cannot list store prefix ''.*h\.zarr.*WebDAV"):
        bare.list_dir("")


def test_a_forked_child_is_refused_not_hung(tmp_path: Path) -> None:
    # obstore's runtime does not survive fork: the child's first request must fail clearly
    import subprocess

    code = f"""
import os, numpy as np, zarr3c
from obstore.store import LocalStore
a = zarr3c.create_array(LocalStore({str(tmp_path)!r}, mkdir=True), shape=(4,), dtype="i1", chunks=(2,))
a[...] = 1
pid = os.fork()
if pid == 0:
    try:
        a[...]
        print("child read")
    except zarr3c.errors.StoreError as e:
        print("child refused:", "fork" in str(e) and "spawn" in str(e))
    os._exit(0)
os.waitpid(pid, 0)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "child refused: True", out


def test_the_loop_thread_is_stopped_before_the_interpreter_finalizes() -> None:
    """At exit (atexit, before finalization) the requests' loop thread is ended, so that
    nothing of it runs while the interpreter is torn down."""
    import subprocess

    # (registered before zarr3c's own handler, so it runs after it: atexit is last-in,
    # first-out)
    code = """
import atexit, threading
atexit.register(lambda: print(sorted(t.name for t in threading.enumerate())))
import numpy as np, zarr3c
from obstore.store import MemoryStore
a = zarr3c.create_array(MemoryStore(), shape=(4,), dtype="i1", chunks=(2,))
a[...] = 1
assert a[...].tolist() == [1, 1, 1, 1]
assert "zarr3c-obstore" in {t.name for t in threading.enumerate()}
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert "zarr3c-obstore" not in out.stdout and "MainThread" in out.stdout, out


def test_silent_server_times_out_with_a_hint() -> None:
    with socket.socket() as listener:  # accepts connections (backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/x.zarr"
        options = {"timeout": 1, "connect_timeout": 1, "max_retries": 0}
        with pytest.raises(StoreError, match=rf"'zarr.json' \({re.escape(url)}/zarr.json\).*timed out"):
            zarr3c.open_array(url, storage_options=options)


def test_url_credentials_stay_out_of_messages() -> None:
    with socket.socket() as listener:  # refuses nothing, answers nothing
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        url = f"http://user:{SECRET}@127.0.0.1:{port}/x.zarr?sig={SECRET}"
        store = make_store(url, storage_options={"timeout": 1, "max_retries": 0})
        assert SECRET not in repr(store)
        with pytest.raises(StoreError) as excinfo:
            store.get("zarr.json")
        assert SECRET not in str(excinfo.value), excinfo.value
        assert f"127.0.0.1:{port}/x.zarr/zarr.json" in str(excinfo.value)


@pytest.mark.parametrize(
    ("scheme", "options", "config"),
    [
        ("gs", {"anon": True, "token": "/keys/sa.json"},
         {"skip_signature": True, "service_account_path": "/keys/sa.json"}),
        ("az", {"account_name": "acct", "sas_token": "sv=1", "anon": False},
         {"account_name": "acct", "sas_key": "sv=1", "skip_signature": False}),
        ("s3", {"anon": True, "region_name": "eu-west-1", "requester_pays": "true"},
         {"skip_signature": True, "region": "eu-west-1", "request_payer": "true"}),
    ],
    ids=["gcs", "azure", "s3"],
)
def test_fsspec_names_map_per_scheme(scheme: str, options: dict[str, Any], config: dict[str, Any]) -> None:
    from zarr3c.stores.object_store.options import split_storage_options

    out = split_storage_options(f"{scheme}://b/x", scheme, options)
    assert out.config == config and not out.client_options
    timing = split_storage_options("s3://b/x", "s3", {
        "timeout": 3, "connect_timeout": "1s", "max_retries": 2, "retry_config": {"retry_timeout": "9s"},
        "config_kwargs": {"read_timeout": 7}})
    assert timing.client_options["connect_timeout"] == "1s"
    assert timing.client_options["timeout"].total_seconds() == 7  # the later option wins
    assert timing.retry_config == {"max_retries": 2, "retry_timeout": "9s"}


def test_dask_distributed_workers_read_and_write(s3_options: dict[str, Any], s3_url: str) -> None:
    distributed = pytest.importorskip("distributed", reason="needs distributed (zarr3c[dask])")
    da = pytest.importorskip("dask.array", reason="needs dask (zarr3c[dask])")
    import dask

    data = np.arange(24 * 20, dtype="<i8").reshape(24, 20)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        with dask.config.set(scheduler=client):
            a = zarr3c.from_dask(da.from_array(data, chunks=(8, 10)), s3_url,
                                 storage_options=s3_options)
            assert isinstance(a.store, ObjectStore)
            b = zarr3c.open_array(s3_url, mode="r", storage_options=s3_options)
            y = da.from_array(b, chunks=b.chunks)
            assert int(y.sum().compute()) == int(data.sum())
        np.testing.assert_array_equal(client.submit(np.asarray, b).result(), data)


def test_import_zarr3c_does_not_import_obstore() -> None:
    import subprocess

    code = "import sys, zarr3c; print('obstore' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "False"


# -- through the latency proxy: requests on the wire, and faults -------------------------------
#
# zarr3c.testing.s3_proxy forwards to the moto server, counts requests by kind and fails the
# ones asked for.  These assert request counts and what is in flight together, never timings.


@pytest.fixture
def proxy(s3_endpoint: str) -> Iterator[Any]:
    from zarr3c.testing.s3_proxy import LatencyProxy

    with LatencyProxy(s3_endpoint) as p:
        yield p


def _through(proxy: Any, s3_url: str, **extra: Any) -> ObjectStore:
    return ObjectStore.from_url(s3_url, storage_options=_s3_options(proxy.endpoint, **extra))


def _sharded(proxy: Any, s3_url: str) -> tuple[np.ndarray, zarr3c.Array]:
    """A (64, 64) float32 array of 4 shards of 16 (8, 8) inner chunks, written and reopened
    (the proxy's counts start after the open)."""
    data = np.random.default_rng(7).random((64, 64)).astype("<f4")
    store = _through(proxy, s3_url)
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(8, 8),
                            shards=(32, 32), compressors=None)
    a[...] = data
    b = zarr3c.open_array(store.with_read_only(True))
    proxy.reset()
    return data, b


def _shard_requests(proxy: Any, key: str) -> list[Any]:
    return [r for r in proxy.requests() if r.path.endswith("/" + key)]


def test_a_shard_index_is_one_suffix_request(
    proxy: Any, s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array.read import native

    # (as for shards above the small-shard size: smaller ones are fetched whole)
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    data, b = _sharded(proxy, s3_url)
    np.testing.assert_array_equal(b[3:5, 40:42], data[3:5, 40:42])
    index_bytes = 16 * 16 + 4  # 16 (offset, nbytes) pairs and the crc32c
    got = _shard_requests(proxy, "c/0/1")
    assert [r.range for r in got][:1] == [f"bytes=-{index_bytes}"], got
    assert len(got) == 2 and got[1].kind == "GET range", got  # then one inner chunk
    assert len(proxy.requests()) == 2


def test_near_inner_chunks_of_a_shard_share_one_request(
    proxy: Any, s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array.read import native
    from zarr3c.codecs.sharding import COALESCE_MAX_GAP

    data, b = _sharded(proxy, s3_url)
    # inner chunks (0, 0) and (0, 2) of shard c/0/0: 256-byte chunks with one between them
    sel = np.r_[0:8, 16:24]
    # a small shard is fetched whole, in one bounded request (no index request first)
    np.testing.assert_array_equal(b.oindex[0:8, sel], data[0:8][:, sel])
    got = _shard_requests(proxy, "c/0/0")
    assert len(got) == 1 and not (got[0].range or "").startswith("bytes=-"), got
    # above the small-shard size: its index, then one request for both inner chunks
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    proxy.reset()
    np.testing.assert_array_equal(b.oindex[0:8, sel], data[0:8][:, sel])
    assert [r.kind for r in _shard_requests(proxy, "c/0/0")] == ["GET range"] * 2
    # Inner chunks of 16 KiB: chunks 0 and 3 of a shard are 32 KiB apart, more than the
    # shard codec merges; the store's gap (1 MiB by default, 0 here for the second read)
    # decides whether they are one request or two.  (The Python path's ranges: the native
    # pipeline fetches a shard of which a read needs half whole, in one request.)
    monkeypatch.setattr(native, "enabled", False)
    wide = np.arange(64 * 256, dtype="<f4").reshape(64, 256)
    assert 2 * wide[:, :64].nbytes > COALESCE_MAX_GAP
    url = s3_url + "-wide"
    w = zarr3c.create_array(_through(proxy, url), shape=wide.shape, dtype=wide.dtype,
                            chunks=(64, 64), shards=(64, 256), compressors=None)
    w[...] = wide
    sel = np.r_[0:64, 192:256]
    for coalesce, expected in ((None, 2), (0, 3)):
        extra = {} if coalesce is None else {"coalesce": coalesce}
        r = zarr3c.open_array(_through(proxy, url, **extra).with_read_only(True))
        proxy.reset()
        np.testing.assert_array_equal(r.oindex[:, sel], wide[:, sel])
        got = _shard_requests(proxy, "c/0/0")
        assert len(got) == expected, (coalesce, got)


@pytest.fixture
def two_threads() -> Iterator[None]:
    """zarr3c's chunk pool at 2 threads: requests in flight beyond 2 come from batching."""
    zarr3c.set_num_threads(2)
    try:
        yield
    finally:
        zarr3c.set_num_threads(None)


@pytest.mark.parametrize("way", ["native", "python"])
@pytest.mark.parametrize("how", ["oindex", "strided"])
def test_a_shard_read_by_ranges_is_its_index_and_one_request_on_every_thread_count(
    proxy: Any, s3_url: str, monkeypatch: pytest.MonkeyPatch, two_threads: None, how: str,
    way: str
) -> None:
    from zarr3c.array.read import native
    from zarr3c.codecs.sharding import _parallel
    from zarr3c.codecs.sharding import read as shard_read

    # A compressed shard above the small-shard size, large enough to share out over the
    # threads, whose stored bytes exceed what one worker fetches at once: spreading its
    # decoding must not cost a request per worker (issue 33's fewest requests).  The
    # native pipeline fetches a shard of which the read needs at least half whole: one
    # request; the Python path reads its index, then its ranges in one request.
    monkeypatch.setattr(native, "enabled", way == "native")
    monkeypatch.setattr(native, "SMALL_SHARD_BYTES", 0)
    monkeypatch.setattr(_parallel, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(shard_read, "MAX_REQUEST_BYTES", 1 << 13)
    monkeypatch.setattr(shard_read, "_MIN_WORKER_BATCH", 256)
    data = np.random.default_rng(3).random((64, 64)).astype("<f4")
    store = _through(proxy, s3_url)
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(8, 8),
                            shards=(32, 32),
                            compressors={"name": "zstd", "configuration": {"level": 0}})
    a[...] = data
    b = zarr3c.open_array(store.with_read_only(True))
    rows = np.array([30, 0, 1, 5, 9, 17, 18, 31, 12])  # (not a slice in disguise)
    proxy.reset()
    if how == "oindex":
        np.testing.assert_array_equal(b.oindex[rows, 0:32], data[rows, 0:32])
    else:
        np.testing.assert_array_equal(b[0:32:3, 0:32], data[0:32:3, 0:32])
    got = _shard_requests(proxy, "c/0/0")
    if way == "native":
        assert len(got) == 1 and not (got[0].range or "").startswith("bytes=-"), got
    else:
        assert len(got) == 2 and (got[0].range or "").startswith("bytes=-"), got


def _eight_chunks(proxy: Any, s3_url: str) -> tuple[np.ndarray, ObjectStore, zarr3c.Array]:
    data = np.arange(8 * 64, dtype="<u2").reshape(8, 64)
    store = _through(proxy, s3_url)
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(8, 8))
    a[...] = data
    # each request waits, so that requests sent one after another never overlap
    proxy.latency = 0.05
    return data, store, zarr3c.open_array(store.with_read_only(True))


def test_whole_reads_vindex_and_get_many_send_their_requests_together(
    proxy: Any, s3_url: str, two_threads: None
) -> None:
    data, store, b = _eight_chunks(proxy, s3_url)
    cols = [1, 9, 17, 25, 33, 41, 49, 57]  # one element in each of the 8 chunks
    for read, expected in ((lambda: b[...], data), (lambda: b.vindex[[0] * 8, cols],
                                                    data[0, cols])):
        proxy.reset()
        np.testing.assert_array_equal(read(), expected)
        # chunks are read as bounded ranges (at most their largest encoded size)
        assert len(proxy.requests()) == 8 and proxy.peak_in_flight() == 8, proxy.requests()
    proxy.reset()
    assert all(v is not None for v in store.get_many([f"c/0/{i}" for i in range(8)]))
    assert proxy.counts() == {"GET": 8} and proxy.peak_in_flight() == 8


def test_oindex_and_strided_reads_send_their_requests_together(
    proxy: Any, s3_url: str, two_threads: None
) -> None:
    # every chunk's request planned before any is sent: all 8 in flight together, though
    # the pool has 2 threads (oindex and strided slices take the general path)
    data, _, b = _eight_chunks(proxy, s3_url)
    cols = [1, 9, 17, 25, 33, 41, 49, 57]
    for read, expected in ((lambda: b.oindex[:, cols], data[:, cols]),
                           (lambda: b[::3, ::5], data[::3, ::5])):
        proxy.reset()
        np.testing.assert_array_equal(read(), expected)
        paths = [r.path for r in proxy.requests()]
        assert len(paths) == len(set(paths)) == 8, paths
        assert proxy.peak_in_flight() == 8, proxy.requests()


def _shard_gets(proxy: Any) -> dict[str, list[str | None]]:
    """The ranges asked of each shard (``c/i/j``) since the last reset."""
    got: dict[str, list[str | None]] = {}
    for r in proxy.requests():
        assert r.kind in ("GET", "GET range"), r
        got.setdefault(r.path.split("/c/", 1)[1], []).append(r.range)
    return got


def test_small_shards_are_fetched_whole_and_together(
    proxy: Any, s3_url: str, two_threads: None, read_path: str
) -> None:
    from zarr3c.array.read.native import SMALL_SHARD_BYTES

    data, b = _sharded(proxy, s3_url)  # 4 shards of 4 KiB: below the small-shard size
    assert 32 * 32 * 4 <= SMALL_SHARD_BYTES
    proxy.latency = 0.05  # requests sent one after another never overlap
    for sel in (np.s_[...], np.s_[3:5, 40:42], np.s_[5:60, 1:63]):
        proxy.reset()
        np.testing.assert_array_equal(b[sel], data[sel])
        got = _shard_gets(proxy)
        if read_path == "python":  # each shard's index, then its ranges
            assert all(len(ranges) == 2 and ranges[0] == "bytes=-260"
                       for ranges in got.values()), got
            continue
        # one request per shard (bounded: at most its largest encoding), all in flight at once
        assert all(len(ranges) == 1 and not ranges[0].startswith("bytes=-")
                   for ranges in got.values()), got
        assert len(got) == proxy.peak_in_flight() == (4 if len(b[sel]) > 2 else 1)
    proxy.reset()
    cols = [1, 9, 17, 41, 49, 57]
    np.testing.assert_array_equal(b.vindex[[0, 40, 63, 3, 33, 20], cols],
                                  data[[0, 40, 63, 3, 33, 20], cols])
    if read_path == "native":
        assert [len(v) for v in _shard_gets(proxy).values()] == [1] * 4


def test_oindex_and_strided_reads_fetch_small_shards_whole_and_together(
    proxy: Any, s3_url: str, two_threads: None
) -> None:
    data, b = _sharded(proxy, s3_url)  # 4 shards of 4 KiB: below the small-shard size
    proxy.latency = 0.05  # requests sent one after another never overlap
    rows, cols = [0, 40, 63, 3], [1, 9, 41, 57]
    for read, expected in ((lambda: b.oindex[rows, cols], data[np.ix_(rows, cols)]),
                           (lambda: b[::5, ::7], data[::5, ::7])):
        proxy.reset()
        np.testing.assert_array_equal(read(), expected)
        got = _shard_gets(proxy)
        # one bounded request per shard, no index request, all 4 in flight together
        assert len(got) == 4 and all(len(ranges) == 1 and not ranges[0].startswith("bytes=-")
                                     for ranges in got.values()), got
        assert proxy.peak_in_flight() == 4, proxy.requests()


def test_large_shards_are_fetched_whole_only_when_most_is_read(
    proxy: Any, s3_url: str, two_threads: None, read_path: str
) -> None:
    from zarr3c.array.read.native import SMALL_SHARD_BYTES, WHOLE_SHARD_FRACTION

    # 2 shards of 2 MiB, each of 4 x 8 inner chunks of (64, 128)
    data = np.random.default_rng(3).random((512, 1024))
    store = _through(proxy, s3_url)
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(64, 128),
                            shards=(256, 1024), compressors=None)
    a[...] = data
    assert 256 * 1024 * 8 > SMALL_SHARD_BYTES and 8 / 32 < WHOLE_SHARD_FRACTION <= 20 / 32
    b = zarr3c.open_array(store.with_read_only(True))
    proxy.latency = 0.05  # requests sent one after another never overlap
    index = "bytes=-516"  # 32 (offset, nbytes) pairs and the crc32c
    for sel, whole in ((np.s_[...], {"0/0": True, "1/0": True}),
                       (np.s_[3:5, 40:42], {"0/0": False}),  # 1 inner chunk of 32
                       (np.s_[0:256, 0:256], {"0/0": False}),  # 8 of 32
                       (np.s_[0:256, 0:600], {"0/0": True}),  # 20 of 32
                       (np.s_[100:500, 0:1000], {"0/0": True, "1/0": True})):
        proxy.reset()
        np.testing.assert_array_equal(b[sel], data[sel])
        got = _shard_gets(proxy)
        assert sorted(got) == sorted(whole), (sel, got)
        for key, ranges in got.items():
            if read_path == "python" or not whole[key]:  # the index, then ranges
                assert ranges[0] == index and len(ranges) >= 2, (sel, got)
            else:  # one request (bounded: at most its largest encoding)
                assert len(ranges) == 1 and not (ranges[0] or "").startswith("bytes=-"), got
        if read_path == "native" and all(whole.values()):
            assert proxy.peak_in_flight() == len(got)  # fetched together


@pytest.mark.parametrize("fault", [{"status": 500}, {"status": None},
                                   {"status": None, "cut_after": 100}],
                         ids=["500", "dropped", "cut-short"])
def test_a_failed_chunk_read_names_the_key_and_url(
    proxy: Any, s3_url: str, fault: dict[str, Any]
) -> None:
    from zarr3c.testing.s3_proxy import Fault

    data = np.arange(32 * 32, dtype="<i4").reshape(32, 32)
    store = _through(proxy, s3_url)  # max_retries=0: the first failure is final
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(16, 16),
                            compressors=None)  # a cut-short raw chunk must not be read
    a[...] = data
    proxy.reset()
    proxy.fail(Fault(**fault, times=1, pattern=r"/c/1/0$", kinds=("GET", "GET range")))
    with pytest.raises(StoreError) as excinfo:
        a[...]  # no partial array is returned
    message = str(excinfo.value)
    assert f"'c/1/0' ({s3_url}/c/1/0)" in message, message
    assert SECRET not in message
    statuses = [r.status for r in proxy.requests() if r.path.endswith("/c/1/0")]
    assert statuses == [fault["status"]]
    np.testing.assert_array_equal(a[...], data)  # the fault was used up


@pytest.mark.parametrize(("kind", "status"), [("GET", 503), ("GET", None), ("PUT", 500),
                                            ("PUT", None)])
def test_a_retried_failure_is_not_an_error(
    proxy: Any, s3_url: str, kind: str, status: int | None
) -> None:
    from zarr3c.testing.s3_proxy import Fault

    store = _through(proxy, s3_url, max_retries=2,
                     retry_config={"max_retries": 2, "backoff": {"init_backoff": _ms(5),
                                                                 "max_backoff": _ms(20)}})
    store.set("k", b"value")
    proxy.reset()
    proxy.fail(Fault(status=status, times=1, kinds=(kind,)))
    if kind == "PUT":
        store.set("k", b"other")
    assert bytes(store.get("k")) == (b"other" if kind == "PUT" else b"value")
    # obstore retried the failed request once, after its backoff
    assert [r.status for r in proxy.requests() if r.kind == kind] == [status, 200]


def _ms(n: int) -> Any:
    import datetime

    return datetime.timedelta(milliseconds=n)


@pytest.mark.parametrize("status", [500, None], ids=["500", "dropped"])
def test_a_failed_put_leaves_the_old_value(proxy: Any, s3_url: str, status: int | None) -> None:
    from zarr3c.testing.s3_proxy import Fault

    data = np.arange(16, dtype="<u2")
    store = _through(proxy, s3_url)
    a = zarr3c.create_array(store, shape=(16,), dtype=data.dtype, chunks=(8,))
    a[...] = data
    proxy.fail(Fault(status=status, times=1, pattern=r"/c/1$", kinds=("PUT",)))
    with pytest.raises(StoreError, match=rf"'c/1' \({re.escape(s3_url)}/c/1\)"):
        a[...] = data + 100
    # chunk c/0 may hold the new values (each object is put on its own); c/1 is whole
    got = a[...]
    np.testing.assert_array_equal(got[8:], data[8:])
    assert np.array_equal(got[:8], data[:8]) or np.array_equal(got[:8], data[:8] + 100)


def test_a_failed_multipart_upload_leaves_no_object(proxy: Any, s3_url: str) -> None:
    from zarr3c.testing.s3_proxy import Fault

    store = _through(proxy, s3_url)
    big = bytes(range(256)) * (6 * 4096 + 1)  # > 5 MiB: obstore uploads it in parts
    proxy.fail(Fault(status=500, times=1, pattern=r"/big$", kinds=("PUT",)))
    with pytest.raises(StoreError, match=rf"'big' \({re.escape(s3_url)}/big\)"):
        store.set("big", big)
    kinds = proxy.counts()
    assert kinds.get("POST", 0) >= 1, kinds  # a multipart upload was started, not completed
    assert store.get("big") is None and "big" not in list(store.list())
    store.set("big", big)
    assert bytes(store.get("big")) == big


def test_a_failed_read_sends_no_more_requests_of_its_batch(proxy: Any, s3_url: str) -> None:
    from zarr3c.testing.s3_proxy import Fault

    store = _through(proxy, s3_url, max_concurrency=1)  # the batch goes one at a time
    for i in range(8):
        store.set(f"k/{i}", bytes([i]))
    proxy.reset()
    proxy.fail(Fault(status=500, times=1, pattern=r"/k/0$"))
    with pytest.raises(StoreError, match=rf"'k/0' \({re.escape(s3_url)}/k/0\)"):
        store.get_many([f"k/{i}" for i in range(8)])
    # the other 7 were cancelled before they took a slot
    assert [r.path.rsplit("/", 1)[1] for r in proxy.requests()] == ["0"]
    assert [bytes(v or b"") for v in store.get_many([f"k/{i}" for i in range(8)])] == [
        bytes([i]) for i in range(8)]


# -- writes through the proxy: batched puts, and the requests of creating an array -------------


@pytest.fixture
def one_thread() -> Iterator[None]:
    """zarr3c's chunk pool at 1 thread: puts in flight beyond 1 come from ``set_many``."""
    zarr3c.set_num_threads(1)
    try:
        yield
    finally:
        zarr3c.set_num_threads(None)


def test_a_whole_write_sends_its_puts_together(
    proxy: Any, s3_url: str, one_thread: None
) -> None:
    data = np.arange(8 * 64, dtype="<u2").reshape(8, 64) + 1
    a = zarr3c.create_array(_through(proxy, s3_url), shape=data.shape, dtype=data.dtype,
                            chunks=(8, 8))
    proxy.latency = 0.05  # each request waits, so that puts sent one after another never overlap
    proxy.reset()
    a[...] = data
    assert proxy.counts() == {"PUT": 8} and proxy.peak_in_flight() == 8, proxy.requests()
    np.testing.assert_array_equal(a[...], data)


def test_creating_an_array_and_writing_it_whole_sends_the_fewest_requests(
    proxy: Any, s3_url: str, two_threads: None
) -> None:
    data = np.arange(8 * 64, dtype="<u2").reshape(8, 64) + 1
    proxy.latency = 0.02
    a = zarr3c.create_array(_through(proxy, s3_url), shape=data.shape, dtype=data.dtype,
                            chunks=(8, 8))
    # one listing of the (empty) store answers whether a node or a Zarr v2 hierarchy is
    # there, then the new zarr.json
    assert proxy.counts() == {"LIST": 1, "PUT": 1}, proxy.requests()
    a[...] = data
    assert proxy.counts() == {"LIST": 1, "PUT": 9}, proxy.requests()
    # an existing hierarchy: the listing, then its zarr.json, which answers every question
    # (then the erasing of the old array, and the put)
    proxy.reset()
    zarr3c.create_array(_through(proxy, s3_url), shape=data.shape, dtype=data.dtype,
                        chunks=(8, 8), overwrite=True)
    assert proxy.counts().get("GET") == 1 and "HEAD" not in proxy.counts(), proxy.requests()


def test_creating_in_a_store_of_many_keys_asks_for_the_keys_it_needs(
    proxy: Any, s3_url: str
) -> None:
    from zarr3c.api import FEW_KEYS

    store = _through(proxy, s3_url)
    store.set_many([(f"other/{i}", b"") for i in range(FEW_KEYS)])
    assert store.list_few("", FEW_KEYS) is None
    assert store.list_few("other/", FEW_KEYS + 1) == sorted(f"other/{i}" for i in range(FEW_KEYS))
    assert store.list_few("none/", 10) == []
    proxy.reset()
    zarr3c.create_array(store, name="a", shape=(4,), dtype="u1")
    # one listing page, too full to tell; then the root zarr.json and, in one batch, the
    # node's zarr.json and whether a Zarr v2 hierarchy is there; then the documents
    assert proxy.counts() == {"LIST": 1, "GET": 1, "HEAD": 5, "PUT": 2}, proxy.requests()


def test_a_group_and_its_members_are_created_with_the_fewest_requests(
    proxy: Any, s3_url: str
) -> None:
    g = zarr3c.create_group(_through(proxy, s3_url))
    # as an array: one listing of the (empty) store, then the group's document
    assert proxy.counts() == {"LIST": 1, "PUT": 1}, proxy.requests()
    proxy.reset()
    sub = g.create_group("sub")
    g.create_array("a", shape=(4,), dtype="u1")
    sub.create_array("b", shape=(4,), dtype="u1")
    # below a group it holds: whether the new node's document exists, then the document;
    # the group and its ancestors are not read again
    assert proxy.counts() == {"GET": 3, "PUT": 3}, proxy.requests()
    assert [r.path.rsplit("/", 2)[-2:] for r in proxy.requests() if r.kind == "GET"] == [
        ["sub", "zarr.json"], ["a", "zarr.json"], ["b", "zarr.json"]]
    with pytest.raises(zarr3c.errors.ContainsArrayError):
        g.create_array("a", shape=(4,), dtype="u1")
    with pytest.raises(zarr3c.errors.ContainsArrayError, match="ancestor"):
        g.create_array("a/c", shape=(4,), dtype="u1")
    again = zarr3c.open_group(_through(proxy, s3_url), mode="r")
    assert sorted(again.keys()) == ["a", "sub"] and again["sub"].keys() == ["b"]


@pytest.mark.parametrize("how", ["open_array w", "open_array w-", "open w", "open_group w-"])
def test_the_open_functions_create_with_one_listing(proxy: Any, s3_url: str, how: str) -> None:
    store = _through(proxy, s3_url)
    function, mode = how.split()
    kwargs: dict[str, Any] = {} if function == "open_group" else {"shape": (4,), "dtype": "u1"}
    node = getattr(zarr3c, function)(store, mode=mode, **kwargs)
    # one listing of the (empty) store answers every check, then the document
    assert proxy.counts() == {"LIST": 1, "PUT": 1}, proxy.requests()
    proxy.reset()
    again = (zarr3c.open_group if function == "open_group" else zarr3c.open_array)(
        store, mode="r")
    assert again.metadata.node_type == node.metadata.node_type
    assert proxy.counts() == {"GET": 1}, proxy.requests()  # opening reads zarr.json once


def test_creating_over_a_v2_hierarchy_is_still_refused(proxy: Any, s3_url: str) -> None:
    from zarr3c.errors import UnsupportedFormatError

    store = _through(proxy, s3_url)
    zarr3c.create_array(store, shape=(4,), dtype="u1", zarr_format=2)
    with pytest.raises(UnsupportedFormatError, match="zarr_format=2"):
        zarr3c.create_array(store, shape=(4,), dtype="u1", name="b")
    b = zarr3c.create_array(store, shape=(4,), dtype="u1", zarr_format=2, overwrite=True)
    assert b.metadata.zarr_format == 2


def test_batched_writes_keep_partial_chunks_empty_chunks_and_bounds(
    proxy: Any, s3_url: str, one_thread: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zarr3c.array import write as write_module

    data = np.arange(16 * 64, dtype="<u2").reshape(16, 64) + 1
    a = zarr3c.create_array(_through(proxy, s3_url), shape=data.shape, dtype=data.dtype,
                            chunks=(8, 8), compressors=None)
    a[...] = data
    # batches of 4 chunks: at most 4 puts in flight, whatever the store allows
    monkeypatch.setattr(write_module, "SET_MANY_BYTES", 4 * 8 * 8 * 2)
    proxy.latency = 0.05
    proxy.reset()
    new = data + 1000
    new[:8, 16:32] = 0  # two whole chunks of the fill value: erased, not written
    a[2:14, :] = new[2:14, :]  # the rows 2..13: every chunk covered in part, read first
    expected = data.copy()
    expected[2:14] = new[2:14]
    np.testing.assert_array_equal(a[...], expected)
    proxy.reset()
    a[:8, :] = new[:8, :]  # whole chunks, in batches of 4: 6 put, 2 erased with one request
    assert proxy.counts() == {"PUT": 6, "DELETE": 1}, proxy.requests()
    assert proxy.peak_in_flight() == 4
    expected[:8] = new[:8]
    np.testing.assert_array_equal(a[...], expected)
    stored = set(_through(proxy, s3_url).list())
    assert "c/0/2" not in stored and "c/0/3" not in stored and "c/0/4" in stored


def test_a_failed_put_of_a_batch_names_the_key_and_sends_no_more(
    proxy: Any, s3_url: str, one_thread: None
) -> None:
    from zarr3c.testing.s3_proxy import Fault

    data = np.arange(8 * 64, dtype="<u2").reshape(8, 64) + 1
    store = _through(proxy, s3_url, max_concurrency=1)  # the batch goes one put at a time
    a = zarr3c.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(8, 8))
    proxy.reset()
    proxy.fail(Fault(status=500, times=1, pattern=r"/c/0/5$", kinds=("PUT",)))
    with pytest.raises(StoreError) as excinfo:
        a[...] = data
    message = str(excinfo.value)
    assert f"'c/0/5' ({s3_url}/c/0/5)" in message and SECRET not in message, message
    # c/0/0..c/0/4 were put, c/0/5 failed, the other puts were cancelled before being sent
    assert [r.path.rsplit("/", 1)[1] for r in proxy.requests()] == [str(i) for i in range(6)]


@pytest.mark.parametrize("write_empty_chunks", [False, True])
@pytest.mark.parametrize("shards", [None, (8, 32)], ids=["chunked", "sharded"])
def test_batched_writes_store_or_erase_chunks_of_the_fill_value(
    write_empty_chunks: bool, shards: tuple[int, int] | None
) -> None:
    store = ObjectStore(ObstoreMemory())
    assert store.concurrent_batches  # (the batched write path)
    a = zarr3c.create_array(store, shape=(16, 64), dtype="<i4", chunks=(8, 8), shards=shards,
                            fill_value=7, write_empty_chunks=write_empty_chunks)
    data = np.arange(16 * 64, dtype="<i4").reshape(16, 64)
    a[...] = data
    data[8:, 32:] = 7  # the last shard (or its 4 chunks) holds only the fill value
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    keys = {k for k in store.list() if k != "zarr.json"}
    last = {"c/1/1"} if shards else {f"c/1/{j}" for j in range(4, 8)}
    assert (last <= keys) is write_empty_chunks and len(keys) == (
        (4 if shards else 16) - (0 if write_empty_chunks else len(last)))
