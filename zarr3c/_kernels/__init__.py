"""Typed Cython kernels: grid lookup, strided copy, layout conversion.

Imports nothing from zarr3c.  Only flat typed buffers and integers cross the boundary.  Each
entry point validates its arguments in O(ndim) and then runs a ``noexcept nogil`` core; a
kernel never reads or writes outside a buffer, whatever it is given (it raises ValueError
instead).  Pure-numpy references of every kernel are in :mod:`zarr3c._kernels._reference`.
"""
