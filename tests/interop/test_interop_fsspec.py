"""zarr3c <-> zarr-python over S3: one library writes to a live S3 server on loopback (moto's
server mode) with its own fsspec store, the other reads through the same endpoint, both ways,
regular and sharded arrays, groups with attributes."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="interop tests need zarr-python (pip install zarr)")
pytest.importorskip("s3fs", reason="the S3 interop tests need s3fs (pip install s3fs)")
moto_server = pytest.importorskip(
    "moto.server", reason="the S3 interop tests need moto's server mode (pip install 'moto[server]')"
)

import zarr3c  # noqa: E402

BUCKET = "zarr3c-interop"


@pytest.fixture(autouse=True)
def _without_obstore(monkeypatch: pytest.MonkeyPatch) -> None:
    """zarr3c opens the URLs with FsspecStore here, as where obstore is not installed
    (ObjectStore's interop tests are in tests/stores/test_store_obstore.py)."""
    import sys

    monkeypatch.setitem(sys.modules, "obstore", None)


@pytest.fixture(scope="module")
def s3_options() -> Iterator[dict[str, Any]]:
    """A moto S3 server on loopback with one bucket; dummy credentials only."""
    mp = pytest.MonkeyPatch()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        mp.delenv(name, raising=False)
    mp.setenv("AWS_ACCESS_KEY_ID", "testing")
    mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    mp.setenv("AWS_CONFIG_FILE", os.devnull)
    mp.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": f"http://127.0.0.1:{port}",
        "client_kwargs": {"region_name": "us-east-1"},
        "config_kwargs": {"connect_timeout": 2, "read_timeout": 10, "retries": {"max_attempts": 2}},
    }
    try:
        zarr3c.FsspecStore.from_url(f"s3://{BUCKET}", storage_options=options).fs.call_s3(
            "create_bucket", Bucket=BUCKET
        )
        yield options
    finally:
        server.stop()
        mp.undo()


@pytest.fixture
def url() -> str:
    return f"s3://{BUCKET}/t-{uuid.uuid4().hex[:12]}.zarr"


def _zarr_store(url: str, options: dict[str, Any], read_only: bool) -> Any:
    return zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=read_only)


LAYOUTS = [
    pytest.param({"chunks": (16, 8)}, id="regular"),
    pytest.param({"chunks": (8, 8), "shards": (16, 24)}, id="sharded"),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarr_python_writes_zarr3c_reads(
    s3_options: dict[str, Any],
    url: str,
    layout: dict[str, Any],
    make_data: Callable[..., np.ndarray],
    assert_same: Callable[[Any, np.ndarray], None],
) -> None:
    data = make_data("<f8", (40, 30))
    root = zarr.open_group(_zarr_store(url, s3_options, False), mode="w", attributes={"k": "v"})
    arr = root.create_array("a", shape=data.shape, dtype=data.dtype, **layout)
    arr[...] = data
    g = zarr3c.open_group(url, mode="r", storage_options=s3_options)
    assert g.attrs["k"] == "v"
    assert [name for name, _ in g.members()] == ["a"]
    assert_same(g["a"][...], data)
    assert_same(g["a"][5:21, 7:9], data[5:21, 7:9])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarr3c_writes_zarr_python_reads(
    s3_options: dict[str, Any],
    url: str,
    layout: dict[str, Any],
    make_data: Callable[..., np.ndarray],
    assert_same: Callable[[Any, np.ndarray], None],
) -> None:
    data = make_data("int16", (40, 30))
    g = zarr3c.create_group(url, attributes={"k": [1, 2]}, storage_options=s3_options)
    g.create_array("a", shape=data.shape, dtype=data.dtype, **layout)[...] = data
    root = zarr.open_group(_zarr_store(url, s3_options, True), mode="r")
    assert root.attrs["k"] == [1, 2]
    assert [name for name, _ in root.members()] == ["a"]
    assert_same(root["a"][...], data)
    assert_same(root["a"][3:9, ::4], data[3:9, ::4])
