"""C/F layout conversion and transposes: the copy kernel with permuted strides."""

import numpy as np
from numpy.typing import NDArray

from zarr3c._kernels.copy import ReadBuffer

def transpose_into(
    src: ReadBuffer,  # C-contiguous chunk of shape `shape`, as bytes
    shape: NDArray[np.int64],
    order: NDArray[np.int64],  # a permutation of range(len(shape))
    itemsize: int,
    dst: NDArray[np.uint8],  # receives src.transpose(order) in C order; same byte length
) -> None:
    """dst = ascontiguousarray(src.reshape(shape).transpose(order)), bytewise.

    Validates that order is a permutation, that both buffers hold exactly
    prod(shape) * itemsize bytes (overflow-free), extents >= 0, itemsize >= 1, ndim <= 64
    (ValueError otherwise).  C<->F conversion is order = reversed(range(ndim)).  Cache-blocked;
    releases the GIL.
    """
