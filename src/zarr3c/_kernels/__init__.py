"""Typed Cython kernels: strided copy, gathers and scatters, grid lookup, box plans, layout
conversion, shard indexes, zstd, file reads and CRC-32C checksums.

Imports nothing from zarr3c.  Only flat typed buffers and integers cross the boundary.  Each
entry point validates its arguments in O(ndim) and then runs a ``noexcept nogil`` core; a
kernel never reads or writes outside a buffer, whatever it is given (it raises ValueError
instead).  Pure-numpy references of every kernel are in :mod:`zarr3c._kernels._reference`.

Importing this package checks that the compiled kernels are there: an uncompiled source tree
on ``sys.path`` (a checkout never built) fails here with one line saying what to run, rather
than later with a ``ModuleNotFoundError`` for one kernel.
"""

from __future__ import annotations

import importlib.util
import os

# The kernels every zarr3c install has (fileio is built on POSIX systems only).
REQUIRED = (
    "copy", "scatter", "grid", "boxes", "layout", "shard", "zstd_ctx", "checksum", "vlen"
)

_absent = [name for name in REQUIRED if importlib.util.find_spec(f"{__name__}.{name}") is None]
if _absent:
    raise ImportError(
        f"zarr3c's compiled kernels ({', '.join(_absent)}) are missing from "
        f"{os.path.dirname(os.path.abspath(__file__))} (an uncompiled source tree is on "
        "sys.path): run `pip install -e .` in the project root, or use an installed zarr3c"
    )
