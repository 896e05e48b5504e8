"""Build the typed Cython kernels.

All compiler directives live here, in one place.  ``ZARR3C_CYTHON_DEBUG=1`` turns bounds
checks, wraparound and initialisation checks back on (CI runs the test suite once that way);
the kernels validate their arguments before entering their ``nogil`` cores, which is what
makes the unchecked release build sound.
"""

import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("ZARR3C_CYTHON_DEBUG", "") not in ("", "0")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

KERNELS = ["copy", "grid", "layout", "shard", "zstd_ctx"]
if os.name == "posix":  # (open/pread without the GIL; elsewhere LocalStore reads through os)
    KERNELS.append("fileio")

extensions = [
    Extension(
        f"zarr3c._kernels.{name}",
        [f"src/zarr3c/_kernels/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
    )
    for name in KERNELS
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        # Debug C files live apart from the release ones, so neither build compiles the
        # other's C code.  C files are regenerated only when their .pyx changed, and
        # setuptools skips extensions whose module is newer than its C file: the README's
        # second set-up command reuses what the first one built.
        build_dir="build/cython-debug" if DEBUG else None,
    ),
)
