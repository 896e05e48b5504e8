"""Smoke test of an installed zarr3c wheel, run from outside the source tree.

Usage (what ``.ci/run`` and cibuildwheel's ``test-command`` do)::

    cd "$(mktemp -d)" && /path/to/fresh-venv/bin/python -I /path/to/src/.ci/smoke_wheel.py [WHEEL]

``-I`` keeps the script's directory, the current directory and ``PYTHON*`` variables off
``sys.path``, so only the installed package can be imported.  Checks, each failing with a
message and exit status 1:

- zarr3c is imported from the environment's site-packages, not from the source tree;
- every ``.py`` module of the source package is installed, and every Cython kernel
  (``zarr3c/_kernels/*.pyx``) is an installed compiled extension that loads, with its
  ``.pyx``/``.pxd``/``.pyi`` files beside it;
- with WHEEL given: the wheel holds those files, no tests and no generated ``.c`` files;
- a small sharded, compressed array written, read back and verified; a rechunking copy;
- ``python -m zarr3c demo`` succeeds.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]
SOURCE_PACKAGE = SOURCE / "src" / "zarr3c"
KERNEL_DATA = (".pyx", ".pxd", ".pyi")


class SmokeError(Exception):
    pass


def check(condition: object, message: str) -> None:
    if not condition:
        raise SmokeError(message)


def source_modules() -> tuple[set[str], set[str]]:
    """Package-relative paths of the source's .py files, and the kernels' module names."""
    py = {p.relative_to(SOURCE_PACKAGE).as_posix() for p in SOURCE_PACKAGE.rglob("*.py")
          if "__pycache__" not in p.parts}
    kernels = {p.stem for p in (SOURCE_PACKAGE / "_kernels").glob("*.pyx")}
    check(py and kernels, f"no zarr3c sources found under {SOURCE_PACKAGE}")
    return py, kernels


def check_installed(py: set[str], kernels: set[str]) -> Path:
    try:
        import zarr3c
    except ImportError as exc:
        raise SmokeError(f"import zarr3c failed: {exc!r}") from exc

    installed = Path(zarr3c.__file__).resolve().parent
    print(f"zarr3c {zarr3c.__version__} imported from {installed}")
    check(SOURCE not in installed.parents,
          f"zarr3c was imported from the source tree ({installed}), not from the wheel")
    site = {Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib")}
    check(installed.parent in site, f"zarr3c is not in this environment's site-packages {site}")
    missing = sorted(f for f in py if not (installed / f).is_file())
    check(not missing, f"modules missing from the installed package: {missing}")
    for name in sorted(kernels):
        try:
            module = importlib.import_module(f"zarr3c._kernels.{name}")
        except ImportError as exc:
            raise SmokeError(f"kernel zarr3c._kernels.{name} does not load: {exc!r}") from exc
        path = Path(module.__file__ or "")
        check(path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)),
              f"kernel zarr3c._kernels.{name} is not a compiled extension: {path}")
        check(path.resolve().parent == installed / "_kernels",
              f"kernel zarr3c._kernels.{name} loaded from {path}, outside the installed package")
        # A kernel's data files ship beside it (the .pxd only where the source has one).
        for ext in KERNEL_DATA:
            if (SOURCE_PACKAGE / "_kernels" / f"{name}{ext}").exists():
                check((installed / "_kernels" / f"{name}{ext}").is_file(),
                      f"{name}{ext} is missing from the installed package")
        print(f"  kernel {name}: {path.name}")
    return installed


def check_wheel(wheel: Path, py: set[str], kernels: set[str]) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    missing = sorted(f"zarr3c/{f}" for f in py if f"zarr3c/{f}" not in names)
    check(not missing, f"{wheel.name} lacks modules: {missing}")
    for name in kernels:
        so = [n for n in names if n.startswith(f"zarr3c/_kernels/{name}.") and n.endswith(suffixes)]
        check(len(so) == 1, f"{wheel.name}: expected one compiled {name} kernel, found {so}")
    stray = sorted(n for n in names if n.startswith("tests/") or n.endswith(".c"))
    check(not stray, f"{wheel.name} holds files it should not: {stray}")
    print(f"wheel {wheel.name}: {len(names)} files, kernels compiled, no tests or .c files")


def check_round_trip() -> None:
    import numpy as np

    import zarr3c

    rng = np.random.default_rng(42)
    data = rng.normal(size=(70, 45)).astype("float32")
    data[::7] = 0
    with tempfile.TemporaryDirectory(prefix="zarr3c-smoke-") as tmp:
        a = zarr3c.create_array(os.path.join(tmp, "a.zarr"), shape=data.shape, dtype="float32",
                                chunks=(8, 9), shards=(32, 45),
                                compressors={"name": "zstd", "configuration": {"level": 3}})
        a[...] = data
        back = zarr3c.open_array(os.path.join(tmp, "a.zarr"), mode="r")
        check(np.array_equal(back[...], data), "sharded array read back differs")
        check(np.array_equal(back[5:60:3, -10:], data[5:60:3, -10:]), "a slice read differs")
        out = zarr3c.copy(os.path.join(tmp, "a.zarr"), os.path.join(tmp, "b.zarr"),
                          chunks=(10, 10), shards=None, compressors=None)
        check(isinstance(out, zarr3c.Array) and out.chunks == (10, 10), "rechunked copy")
        assert isinstance(out, zarr3c.Array)
        check(np.array_equal(out[...], data), "rechunked copy differs")
    print("round trip: sharded write/read and rechunking copy OK")


def check_demo() -> None:
    proc = subprocess.run([sys.executable, "-I", "-m", "zarr3c", "demo"],
                          capture_output=True, text=True, timeout=600)
    sys.stdout.write(proc.stdout)
    check(proc.returncode == 0 and "verify:  OK" in proc.stdout,
          f"python -m zarr3c demo failed ({proc.returncode}): {proc.stderr}")


def main(argv: list[str]) -> int:
    try:
        check(Path.cwd().resolve() != SOURCE and SOURCE not in Path.cwd().resolve().parents,
              f"run this from outside the source tree, not {Path.cwd()}")
        py, kernels = source_modules()
        check_installed(py, kernels)
        for wheel in argv:
            check_wheel(Path(wheel), py, kernels)
        check_round_trip()
        check_demo()
    except SmokeError as exc:
        print(f"wheel smoke test FAILED: {exc}", file=sys.stderr)
        return 1
    print("wheel smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
