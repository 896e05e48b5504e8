"""Which libzstd zarr3c compresses and decodes zstd with, and that its frames are for everyone.

``zarr3c.codecs.zstd`` binds ``zarr3c._kernels.zstd_ctx`` (the native pipeline's and the
codec's kept contexts) once per process to the newest libzstd whose symbols are visible:
the standard library's ``compression.zstd`` (3.14+) or ``backports.zstd`` (the ``zstd``
extra) where installed, else numcodecs' build; ``ZARR3C_ZSTD_LIBRARY=numcodecs`` keeps it on
numcodecs'.  Both bindings are run here, each in a process of its own: every path writes the
same frames (native and Python writes, chunked and sharded), which numcodecs decodes, with
the level and checksum asked for; and zarr-python, tensorstore and zarrs read what zarr3c
wrote in this process.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numcodecs.zstd
import numpy as np
import pytest

import zarr3c
from zarr3c.codecs import zstd as zstd_module
from zarr3c.codecs.zstd import _Candidate, _choose_libzstd, _Libzstd, _open_libzstd

needs_binding = pytest.mark.skipif(
    zstd_module._LIBZSTD is None, reason="no libzstd's symbols are visible here")

ZSTD_L3_CHECKSUM = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
ZSTD_DEFAULT = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}


def _cube(edge: int) -> np.ndarray:
    """Gradients plus 6 bits of noise (as the peer benchmark writes): where builds of
    libzstd 1.5.6 and 1.5.7 write different frames for a 64^3 chunk."""
    j = np.arange(edge, dtype=np.uint16)
    grad = j[:, None, None] * np.uint16(7) + j[None, :, None] * np.uint16(3) + j[None, None, :]
    return (grad + np.random.default_rng(0).integers(0, 64, (edge,) * 3, dtype=np.uint16)
            ).astype(np.uint16)


def _numcodecs_version() -> int | None:
    try:
        lib = ctypes.CDLL(numcodecs.zstd.__file__)
        lib.ZSTD_versionNumber.restype = ctypes.c_uint
        return int(lib.ZSTD_versionNumber())
    except (OSError, AttributeError):
        return None


def _stdlib_zstd_version() -> tuple[str, int] | None:
    """The version of ``compression.zstd`` (3.14+) or ``backports.zstd``, which they say
    themselves, as ``ZSTD_versionNumber()`` counts: the first installed."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        major, minor, patch = module.zstd_version_info
        return name, major * 10000 + minor * 100 + patch
    return None


# -- the choice -----------------------------------------------------------------------------


def _newest() -> tuple[str, int | None]:
    """The library the choice should take: the standard library's or its backport where
    installed with visible symbols and not older than numcodecs' build, else numcodecs'."""
    numcodecs_version = _numcodecs_version()
    other = _stdlib_zstd_version()
    if other is not None and _open_libzstd(
            next(c for c in zstd_module._CANDIDATES if c.name == other[0])) is not None:
        if numcodecs_version is None or other[1] >= numcodecs_version:
            return other
    return "numcodecs", numcodecs_version


@needs_binding
def test_the_newest_installed_library_is_bound() -> None:
    """(numcodecs' where ``ZARR3C_ZSTD_LIBRARY=numcodecs`` says so)"""
    bound = zstd_module._LIBZSTD
    assert bound is not None
    if os.environ.get(zstd_module._LIBRARY_ENV) == "numcodecs":
        assert (bound.name, bound.version) == ("numcodecs", _numcodecs_version())
    else:
        assert (bound.name, bound.version) == _newest()
    assert bound.compresses and zstd_module._COMPRESS


def test_choosing_takes_the_newest_compressor_then_the_first_listed(monkeypatch) -> None:
    found = {
        "old": _Libzstd("old", 10404, "/old", True),
        "new": _Libzstd("new", 10507, "/new", True),
        "same": _Libzstd("same", 10507, "/same", True),
        "decoder": _Libzstd("decoder", 10600, "/decoder", False),  # no compressor exported
    }
    monkeypatch.setattr(zstd_module, "_open_libzstd", lambda c: (
        (None, found[c.name]) if c.name in found else None))

    def chosen(*names: str) -> str | None:
        pick = _choose_libzstd(tuple(_Candidate(n, n) for n in names))
        return None if pick is None else pick[1].name

    assert chosen("old", "new") == "new"
    assert chosen("new", "old") == "new"
    assert chosen("new", "same") == "new"
    assert chosen("same", "new") == "same"
    assert chosen("decoder", "old") == "old"
    assert chosen("decoder") == "decoder"
    assert chosen("missing", "old") == "old"
    assert chosen("missing") is None


def test_candidates_that_hold_no_libzstd_are_passed_over() -> None:
    for module in ("zarr3c_no_such_module", "zarr3c_no_such_package.module", "sys",
                   "zarr3c._kernels.copy"):  # absent, absent, built in, no ZSTD_* symbols
        assert _open_libzstd(_Candidate("x", module)) is None
    opened = _open_libzstd(_Candidate("numcodecs", "numcodecs.zstd"))
    if opened is not None:
        assert opened[1].version == _numcodecs_version()


# -- each binding, in a process of its own ------------------------------------------------------

_SCRIPT = r"""
import json, sys
from pathlib import Path
import numcodecs.zstd
import numpy as np
import zarr3c
from zarr3c.array.read import native as read_native
from zarr3c.codecs import zstd as zstd_module

root = Path(sys.argv[1])
j = np.arange(64, dtype=np.uint16)
grad = j[:, None, None] * np.uint16(7) + j[None, :, None] * np.uint16(3) + j[None, None, :]
data = np.concatenate([grad + np.random.default_rng(s).integers(0, 64, (64,) * 3,
                       dtype=np.uint16) for s in (0, 1)]).astype(np.uint16)
report = {"library": zstd_module._LIBZSTD and zstd_module._LIBZSTD._asdict(), "cases": []}
for level, checksum in ((0, False), (1, False), (3, True), (5, True)):
    for shards in (None, (128, 64, 64)):
        files = {}
        for path in ("native", "python"):
            read_native.enabled = path == "native"
            where = root / f"{level}-{checksum}-{shards is not None}-{path}"
            a = zarr3c.create_array(str(where), shape=data.shape, dtype="uint16",
                                    chunks=(64, 64, 64), shards=shards, fill_value=0,
                                    compressors=[{"name": "zstd", "configuration":
                                                  {"level": level, "checksum": checksum}}])
            a[...] = data
            files[path] = {str(p.relative_to(where)): p.read_bytes()
                           for p in sorted(where.rglob("*"))
                           if p.is_file() and p.name != "zarr.json"}
            assert np.array_equal(zarr3c.open_array(str(where))[...], data)
        frames = ([] if shards else [files["python"][f"c/{i}/0/0"] for i in (0, 1)])
        report["cases"].append({
            "level": level, "checksum": checksum, "sharded": shards is not None,
            "same_files": files["native"] == files["python"] and len(files["native"]) > 0,
            "decoded": [bytes(numcodecs.zstd.decompress(f)) == data[64 * i:64 * i + 64].tobytes()
                        for i, f in enumerate(frames)],
            "checksum_flags": [bool(f[4] & 4) for f in frames],
            "numcodecs_bytes": [f == numcodecs.zstd.compress(data[64 * i:64 * i + 64].tobytes(),
                                                             level, checksum)
                                for i, f in enumerate(frames)],
        })
print(json.dumps(report))
"""


def _run_bound(tmp_path: Path, library: str | None) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(zarr3c.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    env.pop(zstd_module._LIBRARY_ENV, None)
    if library is not None:
        env[zstd_module._LIBRARY_ENV] = library
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@needs_binding
@pytest.mark.parametrize("library", [None, "numcodecs"], ids=["newest", "numcodecs"])
def test_every_path_writes_the_same_frames_numcodecs_decodes(tmp_path: Path,
                                                             library: str | None) -> None:
    """For levels 0, 1, 3 and 5, with and without checksum, chunked and sharded: the native
    and the Python write give the same files, read back as written; each chunk is a frame
    numcodecs decodes, whose header has the checksum flag asked for; under numcodecs' build
    it is ``numcodecs.zstd.compress``'s frame byte for byte."""
    report = _run_bound(tmp_path, library)
    bound = report["library"]
    assert (bound["name"], bound["version"]) == (
        ("numcodecs", _numcodecs_version()) if library == "numcodecs" else _newest())
    for case in report["cases"]:
        assert case["same_files"], case
        if case["sharded"]:
            continue
        assert case["decoded"] == [True, True], case
        assert case["checksum_flags"] == [case["checksum"]] * 2, case
        if bound["name"] == "numcodecs":
            assert case["numcodecs_bytes"] == [True, True], case


# -- the peers read what zarr3c wrote -----------------------------------------------------------


def _read_zarr_python(path: Path, pipeline: str | None) -> np.ndarray:
    zarr = pytest.importorskip("zarr")
    if pipeline is not None:
        pytest.importorskip(pipeline.split(".")[0])
    config = {} if pipeline is None else {"codec_pipeline.path": pipeline}
    with zarr.config.set(config):
        arr = zarr.open_array(str(path), mode="r")
        if pipeline is not None:
            assert type(arr._async_array.codec_pipeline).__name__ == pipeline.rsplit(".")[-1]
        return np.asarray(arr[...])


def _read_tensorstore(path: Path) -> np.ndarray:
    ts = pytest.importorskip("tensorstore")
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    return np.asarray(ts.open(spec, open=True, read=True).result().read().result())


READERS = {
    "zarr-python": lambda p: _read_zarr_python(p, None),
    "zarrs": lambda p: _read_zarr_python(p, "zarrs.ZarrsCodecPipeline"),
    "tensorstore": _read_tensorstore,
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("codec", [ZSTD_DEFAULT, ZSTD_L3_CHECKSUM], ids=["l0", "l3-checksum"])
@pytest.mark.parametrize("shards", [None, (64, 64, 64)], ids=["chunked", "sharded"])
def test_the_peers_read_what_zarr3c_compressed(tmp_path: Path, reader: str, codec: dict,
                                               shards: tuple[int, ...] | None) -> None:
    data = _cube(64)
    chunks = (64, 64, 64) if shards is None else (32, 32, 32)
    a = zarr3c.create_array(str(tmp_path / "a"), shape=data.shape, dtype="uint16",
                            chunks=chunks, shards=shards, fill_value=0, compressors=[codec])
    a[...] = data
    np.testing.assert_array_equal(READERS[reader](tmp_path / "a"), data)
