"""Build the typed Cython kernels.

All compiler directives live here, in one place.  ``ZARR3C_CYTHON_DEBUG=1`` turns bounds
checks, wraparound and initialisation checks back on (CI runs the test suite once that way);
the kernels validate their arguments before entering their ``nogil`` cores, which is what
makes the unchecked release build sound.

A build reuses what an earlier one made from the same sources, so that the README's second
set-up command (an editable install after ``pip install .``) compiles nothing again:

- a C file is regenerated only when its ``.pyx`` or a ``.pxd`` beside it is newer (Cython's
  own check would always regenerate under pip's build isolation, whose fresh environment makes
  Cython's bundled ``.pxd`` files look new);
- each compiled kernel is kept in ``build/kernels-<mode>/``, and copied from there instead of
  compiled again while it is newer than its C file (pip's editable builds compile in a fresh
  temporary directory every time).
"""

import glob
import os
import shutil

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ZARR3C_CYTHON_DEBUG", "") not in ("", "0")
KERNEL_DIR = "src/zarr3c/_kernels"
KEPT = os.path.join("build", "kernels-debug" if DEBUG else "kernels-release")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

KERNELS = ["copy", "scatter", "grid", "boxes", "layout", "shard", "zstd_ctx", "checksum", "vlen"]
if os.name == "posix":
    # open/pread without the GIL, and the native chunk pipeline on its pthread pool;
    # elsewhere LocalStore reads through os and reads take the Python path.
    KERNELS += ["fileio", "pool", "chunks", "writes"]


def _extension(name: str, source: str) -> Extension:
    return Extension(
        f"zarr3c._kernels.{name}",
        [source],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
    )


def _c_is_current(name: str) -> bool:
    """Whether the release C file of a kernel is newer than its .pyx and every .pxd."""
    c_file = os.path.join(KERNEL_DIR, f"{name}.c")
    inputs = [os.path.join(KERNEL_DIR, f"{name}.pyx"), *glob.glob(f"{KERNEL_DIR}/*.pxd")]
    return os.path.exists(c_file) and all(
        os.path.getmtime(c_file) >= os.path.getmtime(path) for path in inputs
    )


class KeptBuildExt(build_ext):
    """build_ext that copies a kernel kept from an earlier build when it is still current."""

    def build_extension(self, ext: Extension) -> None:
        target = self.get_ext_fullpath(ext.name)
        kept = os.path.join(KEPT, os.path.basename(target))
        newest_input = max(os.path.getmtime(path) for path in [*ext.sources, *ext.depends])
        if not self.force and os.path.exists(kept) and os.path.getmtime(kept) >= newest_input:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(kept, target)
            return
        super().build_extension(ext)
        os.makedirs(KEPT, exist_ok=True)
        shutil.copy2(target, kept)


current = [] if DEBUG else [name for name in KERNELS if _c_is_current(name)]
stale = [name for name in KERNELS if name not in current]
extensions = [_extension(name, os.path.join(KERNEL_DIR, f"{name}.c")) for name in current]
if stale:
    extensions += cythonize(
        [_extension(name, os.path.join(KERNEL_DIR, f"{name}.pyx")) for name in stale],
        compiler_directives=DIRECTIVES,
        # Debug C files live apart from the release ones, so neither build compiles the
        # other's C code.
        build_dir="build/cython-debug" if DEBUG else None,
        force=True,
    )

setup(ext_modules=extensions, cmdclass={"build_ext": KeptBuildExt})
