"""The command line through ``python -m zarr3c``, as a shell user runs it.

Every command runs in a subprocess (``sys.executable -m zarr3c ...``) importing the same zarr3c
as this test process (the source tree or an installed wheel), from a temporary directory.  One
small hierarchy per module keeps the file fast; independent commands run concurrently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import zarr3c
from zarr3c import __main__ as cli

# Put the zarr3c this process imported first on the subprocesses' path.
_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(Path(zarr3c.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
_ENV.pop("ZARR3C_NUM_THREADS", None)


def _popen(args: Sequence[str], cwd: Path, exe: Sequence[str] | None = None) -> subprocess.Popen:
    cmd = [*(exe or [sys.executable, "-m", "zarr3c"]), *map(str, args)]
    return subprocess.Popen(cmd, cwd=cwd, env=_ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``python -m zarr3c *args`` and return its exit status and output."""
    return run_many([list(map(str, args))], cwd=cwd)[0]


def run_many(commands: Sequence[Sequence[str]], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run several independent commands at once (start-up dominates their cost)."""
    procs = [_popen(args, cwd) for args in commands]
    out = []
    for args, proc in zip(commands, procs, strict=True):
        stdout, stderr = proc.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(args, proc.returncode, stdout, stderr))
    return out


def fields(stdout: str) -> dict[str, str]:
    """``info``'s ``Label : value`` lines as a dict."""
    return {k.strip(): v.strip() for k, _, v in (ln.partition(" : ") for ln in stdout.splitlines())}


@pytest.fixture(scope="module")
def hier(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A v3 hierarchy (regular, sharded, partly written arrays) and a draft-2022 one."""
    base = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    root = base / "h.zarr"
    g = zarr3c.create_group(root, attributes={"title": "demo", "n": 3})
    reg = rng.integers(0, 100, size=(30, 20)).astype("int16")
    g.create_array("sub/arr", shape=(30, 20), dtype="int16", chunks=(10, 10),
                   attributes={"units": "K"}, dimension_names=["y", "x"])[...] = reg
    sh = rng.random((24, 16)).astype("float32")
    g.create_array("sh", shape=(24, 16), dtype="float32", chunks=(4, 4), shards=(12, 8))[...] = sh
    g.create_array("part", shape=(6, 4), dtype="uint8", chunks=(3, 4))[:3] = 7
    draft = base / "draft.zarr"
    zarr3c.copy(root / "sub", draft, zarr_format="draft-2022")  # "sub" alone: no sharding
    return {"base": base, "root": root, "draft": draft, "reg": reg, "sh": sh}


# -- help and usage ----------------------------------------------------------------------------


def test_help_on_every_command(hier) -> None:
    cmds = [["--help"], *([c, "--help"] for c in ("info", "tree", "copy", "demo")), ["--version"]]
    procs = run_many(cmds, cwd=hier["base"])
    for args, proc in zip(cmds, procs, strict=True):
        assert proc.returncode == 0, (args, proc.stderr)
        assert proc.stderr == ""
    top, info, tree, copy, demo, version = (p.stdout for p in procs)
    assert all(c in top for c in ("info", "tree", "copy", "demo")) and "Exit status" in top
    assert "--path" in info and "PATH_OR_URL" in info and "PATH_OR_URL" in tree
    for option in ("--zarr-format", "--chunks", "--shards", "--compressor", "--overwrite",
                   "--progress", "--no-progress"):
        assert option in copy, option
    assert "--uncompressed" in demo
    assert version.strip() == f"zarr3c {zarr3c.__version__}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "required: COMMAND"),
        (["frobnicate"], "invalid choice"),
        (["info"], "PATH_OR_URL"),
        (["copy", "a"], "DST"),
        (["copy", "a", "b", "--chunks", "10,x"], "comma-separated list of integers"),
        (["copy", "a", "b", "--chunks", "0,4"], "positive"),
        (["copy", "a", "b", "--compressor", "lz9"], "unknown compressor 'lz9'"),
        (["copy", "a", "b", "--compressor", "zstd:high"], "level 'high'"),
        (["copy", "a", "b", "--compressor", "{bad json"], "not valid JSON"),
        (["copy", "a", "b", "--zarr-format", "4"], "invalid choice"),
        (["copy", "a", "b", "--progress", "--no-progress"], "not allowed with"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_usage_errors_exit_2_with_usage(args, message, capsys) -> None:
    # argparse errors never reach zarr3c: run in-process (SystemExit carries the status)
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ") and message in err


def test_usage_error_in_a_shell(hier) -> None:
    proc = run("copy", "a", "b", "--compressor", "lz9", cwd=hier["base"])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: ") and "unknown compressor 'lz9'" in proc.stderr


# -- info and tree -----------------------------------------------------------------------------


def test_info_on_arrays_and_groups(hier) -> None:
    root, draft = hier["root"], hier["draft"]
    procs = run_many([
        ["info", root, "--path", "sub/arr"],
        ["info", root / "sub" / "arr"],  # the same array by its directory
        ["info", root, "--path", "sh"],
        ["info", root, "--path", "part"],
        ["info", root],
        ["info", draft, "--path", "arr"],
        ["info", draft],
    ], cwd=hier["base"])
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
    arr, arr2, sh, part, group, darr, dgroup = (fields(p.stdout) for p in procs)

    assert arr == {**arr2, "Path": arr["Path"]}  # only the node's path differs
    assert arr["Type"] == "Array" and arr["Path"] == "/sub/arr" and arr["Zarr format"] == "3"
    assert arr["Shape"] == "(30, 20)" and arr["Data type"] == "int16"
    assert arr["Chunks"] == "(10, 10)" and "Shards" not in arr
    assert arr["Codecs"] == 'bytes(endian="little") -> zstd(level=0, checksum=false)'
    assert arr["Dimension names"] == "['y', 'x']"
    assert json.loads(arr["Attributes"]) == {"units": "K"}
    assert arr["Chunks initialized"] == "6/6"
    # bytes stored: the metadata document and the chunk files, as the file system counts them
    files = [p for p in (root / "sub" / "arr").rglob("*") if p.is_file()]
    stored = sum(p.stat().st_size for p in files)
    assert arr["Bytes stored"].split()[0] == str(stored)
    assert arr["Bytes"].split()[0] == str(30 * 20 * 2)

    assert sh["Chunks"] == "(4, 4)" and sh["Shards"] == "(12, 8)"
    assert sh["Codecs"].startswith("sharding_indexed(chunk_shape=[4, 4], codecs=[bytes(")
    assert sh["Chunks initialized"] == "4/4"  # shards
    assert part["Chunks initialized"] == "1/2"

    assert group["Type"] == "Group" and group["Path"] == "/"
    assert group["Members"] == "3 (2 arrays, 1 group)"
    assert json.loads(group["Attributes"]) == {"title": "demo", "n": 3}

    assert darr["Zarr format"] == "draft-2022" and darr["Shape"] == "(30, 20)"
    assert darr["Codecs"] == arr["Codecs"]  # shown in their v3 form whatever the layout
    assert darr["Chunks initialized"] == "6/6"
    assert dgroup["Type"] == "Group" and dgroup["Zarr format"] == "draft-2022"


def test_tree(hier) -> None:
    procs = run_many([["tree", hier["root"]], ["tree", hier["root"], "--path", "sub/arr"],
                      ["tree", hier["draft"]]], cwd=hier["base"])
    assert [p.returncode for p in procs] == [0, 0, 0], [p.stderr for p in procs]
    lines = procs[0].stdout.splitlines()
    assert lines[0] == "/"
    assert {ln.lstrip("│├└─ ") for ln in lines[1:]} == {
        "part (6, 4) uint8", "sh (24, 16) float32", "sub", "arr (30, 20) int16"}
    assert procs[1].stdout == "/sub/arr (30, 20) int16\n"
    assert procs[2].stdout.splitlines()[-1].endswith("arr (30, 20) int16")


ERROR_CASES = [
    (["info", "{base}/missing.zarr"], "{base}/missing.zarr: no such file or directory"),
    (["tree", "{base}/missing.zarr"], "{base}/missing.zarr: no such file or directory"),
    (["info", "{base}/h.zarr", "--path", "nope"], "no array or group at path 'nope'"),
    (["info", "{base}/h.zarr/sub/arr/zarr.json"], "is not a directory"),
    (["info", "{base}"], "{base}: no array or group at path ''"),
    (["copy", "{base}/missing.zarr", "{base}/out"], "{base}/missing.zarr: no such file"),
    (["copy", "{base}/h.zarr", "{base}/h.zarr"], "the destination is the source"),
    (["copy", "{base}/h.zarr", "{base}/h.zarr/sub/arr/zarr.json"], "is not a directory"),
    (["copy", "{base}/h.zarr", "{base}/draft.zarr"], "pass --overwrite"),
    (["copy", "{base}/h.zarr", "{base}/junk", "--overwrite"], "holds no Zarr hierarchy"),
    (["copy", "{base}/h.zarr", "{base}/out", "--chunks", "4,4,4"],
     "chunks (4, 4, 4) have 3 dimensions, the array has 2"),
    (["copy", "{base}/h.zarr", "{base}/out", "--zarr-format", "draft-2022"],
     "cannot copy array '/sh'"),
]


@pytest.fixture(scope="module")
def error_runs(hier) -> list[subprocess.CompletedProcess]:
    """Every ERROR_CASES command, run concurrently once."""
    base = hier["base"]
    (base / "junk").mkdir()
    (base / "junk" / "notes.txt").write_text("mine")
    return run_many([[a.format(base=base) for a in args] for args, _ in ERROR_CASES], cwd=base)


@pytest.mark.parametrize(
    "case", range(len(ERROR_CASES)),
    ids=[" ".join(args).replace("{base}/", "") for args, _ in ERROR_CASES],
)
def test_errors_exit_2_with_a_message_naming_the_path(hier, error_runs, case) -> None:
    base = hier["base"]
    proc = error_runs[case]
    message = ERROR_CASES[case][1].format(base=base)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    # nothing was written by a refused copy, and what was there is intact
    assert not (base / "out").exists()
    assert (base / "junk" / "notes.txt").read_text() == "mine"
    assert (base / "draft.zarr" / "zarr.json").exists()


# -- copy --------------------------------------------------------------------------------------


def _read_all(path: Path) -> dict[str, tuple[zarr3c.Array, np.ndarray]]:
    g = zarr3c.open_group(path, mode="r")
    return {name: (a, a[...]) for name, a in g.members(max_depth=None)
            if isinstance(a, zarr3c.Array)}


def test_copy_plain_and_rechunked(hier, tmp_path) -> None:
    root = hier["root"]
    plain, rechunked, draft = tmp_path / "plain.zarr", tmp_path / "re.zarr", tmp_path / "d.zarr"
    procs = run_many([
        ["copy", root, plain, "--no-progress"],
        ["copy", root, rechunked, "--chunks", "6,4", "--compressor", "gzip:3"],
        ["copy", root, draft, "--shards", "none", "--chunks", "5,5", "--zarr-format",
         "draft-2022", "--compressor", "none"],
    ], cwd=tmp_path)
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""  # no progress bar: stderr is not a terminal
    assert procs[0].stdout.startswith(f"copied {root} -> {plain} (zarr_format 3): 3 arrays")
    assert procs[1].stdout.startswith(f"re-encoded {root} -> {rechunked}")

    src = _read_all(root)
    for out in (plain, rechunked, draft):
        dst = _read_all(out)
        assert dst.keys() == src.keys()
        for name, (a, data) in src.items():
            np.testing.assert_array_equal(dst[name][1], data, err_msg=f"{out.name}:{name}")
            assert dst[name][0].attrs.asdict() == a.attrs.asdict()

    # plain: same grids and codecs, chunk files byte for byte
    for name, (a, _) in _read_all(plain).items():
        assert a.metadata.to_dict() == src[name][0].metadata.to_dict()
    assert ((plain / "sh" / "c" / "0" / "1").read_bytes()
            == (root / "sh" / "c" / "0" / "1").read_bytes())
    # rechunked: new inner chunks (shards kept), gzip level 3 at the end of every chain
    re = _read_all(rechunked)
    assert re["sub/arr"][0].chunks == (6, 4) and re["sub/arr"][0].shards is None
    assert re["sh"][0].chunks == (6, 4) and re["sh"][0].shards == (12, 8)
    assert re["sub/arr"][0].metadata.to_dict()["codecs"][-1] == {
        "name": "gzip", "configuration": {"level": 3}}
    sh_codecs = re["sh"][0].metadata.to_dict()["codecs"][0]["configuration"]["codecs"]
    assert sh_codecs[-1] == {"name": "gzip", "configuration": {"level": 3}}
    # the draft: no sharding, no compressor
    d = _read_all(draft)
    assert d["sh"][0].zarr_format == "draft-2022"
    assert d["sh"][0].chunks == (5, 5) and d["sh"][0].shards is None
    assert [c.to_dict()["name"] for c in d["sh"][0].codecs] == ["bytes"]


def test_copy_overwrite_and_json_compressor(hier, tmp_path) -> None:
    dst = tmp_path / "out.zarr"
    zarr3c.create_group(dst).create_array("stale", shape=(2,), dtype="i1")
    blosc = '{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1}}'
    proc = run("copy", hier["root"] / "sub", dst, "--overwrite", "--compressor", blosc,
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    g = zarr3c.open_group(dst, mode="r")
    assert [n for n, _ in g.members()] == ["arr"]
    a = g["arr"]
    np.testing.assert_array_equal(a[...], hier["reg"])
    last = a.metadata.to_dict()["codecs"][-1]
    assert last["name"] == "blosc" and last["configuration"]["cname"] == "lz4"


def test_progress_bar_when_forced(hier, tmp_path) -> None:
    pytest.importorskip("tqdm", reason="the progress bar needs tqdm")
    proc = run("copy", hier["root"], tmp_path / "p.zarr", "--progress", "--chunks", "6,4",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name, nchunks in (("/sub/arr", 25), ("/sh", 4), ("/part", 1)):
        assert f"{nchunks}/{nchunks}" in proc.stderr and name in proc.stderr


def test_console_script(hier) -> None:
    script = shutil.which("zarr3c", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the zarr3c console script is not installed next to this Python")
    proc = subprocess.run([script, "info", hier["root"]], cwd=hier["base"], env=_ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert fields(proc.stdout)["Type"] == "Group"


# -- demo --------------------------------------------------------------------------------------


def test_demo_exit_status(monkeypatch, capsys) -> None:
    # In-process with a small array: the real demo writes 100 MB.
    monkeypatch.setattr(cli, "_DEMO_SHAPE", (10, 20, 30))
    monkeypatch.setattr(cli, "_DEMO_CHUNKS", (4, 8, 16))
    assert cli.main(["demo"]) == 0
    assert "verify:  OK" in capsys.readouterr().out
    monkeypatch.setattr(cli.np, "array_equal", lambda *a: False)
    assert cli.main(["demo", "--uncompressed"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_copy_refuses_nested_source_and_destination(tmp_path) -> None:
    root = tmp_path / "root.zarr"
    data = np.arange(12, dtype="int16").reshape(3, 4)
    zarr3c.create_group(root).create_array("sub/a", shape=(3, 4), dtype="int16",
                                           chunks=(2, 2))[...] = data
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    procs = run_many([
        ["copy", root / "sub", root, "--overwrite"],
        ["copy", root, root / "sub" / "copy", "--overwrite", "--chunks", "1,1"],
        ["copy", root / "sub", root / ".." / "root.zarr", "--overwrite"],
    ], cwd=tmp_path)
    for proc, why in zip(procs, ["the source is inside the destination",
                                 "the destination is inside the source",
                                 "the source is inside the destination"], strict=True):
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr.startswith("error: ") and why in proc.stderr
        assert "Traceback" not in proc.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    np.testing.assert_array_equal(zarr3c.open_array(root, "sub/a", mode="r")[...], data)


def test_info_lists_the_chunks_once(hier, monkeypatch, capsys) -> None:
    """Counting chunks and summing their sizes is one pass over one listing."""
    listings: list[str] = []
    real = zarr3c.LocalStore.list_prefix

    def counting(self, prefix):
        listings.append(prefix)
        return real(self, prefix)

    monkeypatch.setattr(zarr3c.LocalStore, "list_prefix", counting)
    assert cli.main(["info", str(hier["root"]), "--path", "part"]) == 0
    info = fields(capsys.readouterr().out)
    assert info["Chunks initialized"] == "1/2"
    assert listings == ["part/"]


def test_chained_urls_are_urls(hier, tmp_path) -> None:
    pytest.importorskip("fsspec", reason="chained URLs need fsspec")
    url = f"simplecache::file://{hier['root']}"
    procs = run_many([["info", url, "--path", "sub/arr"],
                      ["copy", f"simplecache::file://{hier['root'] / 'sub'}", tmp_path / "o"]],
                     cwd=tmp_path)
    assert [p.returncode for p in procs] == [0, 0], [p.stderr for p in procs]
    assert fields(procs[0].stdout)["Shape"] == "(30, 20)"
    np.testing.assert_array_equal(zarr3c.open_array(tmp_path / "o", "arr", mode="r")[...],
                                  hier["reg"])


def test_copy_summary_does_not_list_the_destination_again(hier, tmp_path, monkeypatch,
                                                          capsys) -> None:
    calls: list[str] = []
    real = zarr3c.Group.members

    def counting(self, *args, **kwargs):
        calls.append(self.store.root.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(zarr3c.Group, "members", counting)
    assert cli.main(["copy", str(hier["root"]), str(tmp_path / "o.zarr"), "--no-progress"]) == 0
    assert "3 arrays, 2 groups" in capsys.readouterr().out
    assert calls and set(calls) == {"h.zarr"}  # the source's, for the plan; never o.zarr's
