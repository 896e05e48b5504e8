"""C/F memory layout conversion and axis transposes of whole chunks, in bytes.

The ``transpose`` codec
(https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html) stores a chunk's
elements in C order or in any permutation of its axes; e.g. ``{"name": "transpose",
"configuration": {"order": [2, 0, 1]}}`` encodes ``chunk.transpose((2, 0, 1))`` in C order,
and F order is ``order = reversed(range(ndim))``.  A transpose is the strided copy of
:mod:`.copy` with the source strides permuted, so it shares that kernel's nogil core.
"""

from libc.stdint cimport int64_t, uint8_t

from zarr3c._kernels.copy cimport MAX_NDIM, copy_core

__all__ = ["transpose_into"]


# (Over 100 lines with its docstring: most of the body is the argument checks that make the
# unchecked nogil copy safe, kept in one place before it.)
def transpose_into(
    const uint8_t[::1] src not None,
    const int64_t[::1] shape not None,
    const int64_t[::1] order not None,
    int64_t itemsize,
    uint8_t[::1] dst not None,
) -> None:
    """Write ``src.reshape(shape).transpose(order)`` into ``dst`` in C order, bytewise.

    Parameters
    ----------
    src : 1-d contiguous uint8 array (read-only accepted)
        A C-contiguous chunk of shape ``shape``, as bytes.
    shape : 1-d contiguous int64 array
        The chunk shape (extents >= 0).
    order : 1-d contiguous int64 array
        A permutation of ``range(len(shape))``; output axis ``k`` is input axis
        ``order[k]``.
    itemsize : int
        Bytes per element (>= 1).
    dst : 1-d contiguous writable uint8 array
        Receives the transposed chunk; must not overlap ``src``.

    Raises
    ------
    ValueError
        If ``order`` is not a permutation of the axes, an extent is negative, ``itemsize``
        is < 1, or ``src`` and ``dst`` do not both hold exactly ``prod(shape) * itemsize``
        bytes.

    Notes
    -----
    Equivalent to ``dst[:] = np.ascontiguousarray(a.transpose(order)).view(np.uint8).ravel()``
    for ``a`` the chunk; C<->F conversion is ``order = reversed(range(ndim))``.  The GIL is
    released during the copy.
    """
    cdef Py_ssize_t ndim = shape.shape[0], i, k
    cdef Py_ssize_t nsrc = src.shape[0]
    cdef int64_t p, ax
    cdef bint seen[MAX_NDIM]
    cdef int64_t src_strides[MAX_NDIM]
    cdef int64_t perm_strides[MAX_NDIM]
    cdef int64_t perm_shape[MAX_NDIM]
    cdef int64_t dst_strides[MAX_NDIM]
    cdef bint empty = False, fits = True
    if order.shape[0] != ndim:
        raise ValueError(
            f"transpose_into: len(order) = {order.shape[0]} differs from len(shape) = {ndim}"
        )
    if ndim > MAX_NDIM:
        raise ValueError(f"transpose_into: {ndim} dimensions, at most {MAX_NDIM} are supported")
    if itemsize < 1:
        raise ValueError(f"transpose_into: itemsize = {itemsize} must be >= 1")
    for i in range(ndim):
        seen[i] = False
    for k in range(ndim):
        ax = order[k]
        if ax < 0 or ax >= ndim or seen[ax]:
            raise ValueError(
                f"transpose_into: order = {list(order)} is not a permutation of "
                f"range({ndim})"
            )
        seen[ax] = True
    for i in range(ndim):
        if shape[i] < 0:
            raise ValueError(f"transpose_into: shape[{i}] = {shape[i]} is negative")
        if shape[i] == 0:
            empty = True
    # prod(shape) * itemsize, compared with len(src) before each multiplication so that it
    # cannot overflow.
    if empty:
        p = 0
    else:
        p = itemsize
        fits = p <= nsrc
        if fits:
            for i in range(ndim):
                if p > nsrc // shape[i]:
                    fits = False
                    break
                p *= shape[i]
    if not fits or p != nsrc or p != dst.shape[0]:
        nbytes = int(itemsize)
        for i in range(ndim):
            nbytes *= int(shape[i])
        raise ValueError(
            f"transpose_into: a chunk of shape {tuple(shape)} and itemsize {itemsize} has "
            f"{nbytes} bytes but len(src) = {nsrc} and len(dst) = {dst.shape[0]}"
        )
    if empty:
        return
    if ndim > 0:
        src_strides[ndim - 1] = itemsize
        for i in range(ndim - 2, -1, -1):
            src_strides[i] = src_strides[i + 1] * shape[i + 1]
        for k in range(ndim):
            perm_shape[k] = shape[order[k]]
            perm_strides[k] = src_strides[order[k]]
        dst_strides[ndim - 1] = itemsize
        for k in range(ndim - 2, -1, -1):
            dst_strides[k] = dst_strides[k + 1] * perm_shape[k + 1]
    cdef const uint8_t* sp = &src[0]
    cdef uint8_t* dp = &dst[0]
    with nogil:
        copy_core(sp, 0, perm_strides, dp, 0, dst_strides, perm_shape, ndim, itemsize)
