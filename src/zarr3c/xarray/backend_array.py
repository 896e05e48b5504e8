"""The lazily indexed data of an xarray variable: xarray's indexers onto a zarr3c Array.

xarray hands a backend array one of three explicit indexers
(<https://docs.xarray.dev/en/stable/internals/how-to-add-new-backend.html#backendarray-subclassing>):
basic (integers and slices), outer (each axis indexed on its own, by integer arrays too)
and vectorized (integer arrays broadcast against each other, numpy's fancy indexing).
They map one to one onto ``a[...]``, ``a.oindex[...]`` and ``a.vindex[...]``, each of which
reads only the chunks the selection touches; xarray's ``explicit_indexing_adapter`` makes
slice steps positive first and applies what remains (a reversal) to the result in memory.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from xarray.backends import BackendArray
from xarray.core import indexing

__all__ = ["Zarr3cBackendArray"]

_SUPPORT = indexing.IndexingSupport.VECTORIZED


class Zarr3cBackendArray(BackendArray):
    """A zarr3c Array as xarray's ``BackendArray``: indexed lazily, read chunk by chunk.

    Parameters
    ----------
    array : zarr3c.Array
        The array.
    dtype : numpy.dtype or None, default None
        The dtype xarray sees, where it differs from the array's (xarray's marked object
        dtype for variable-length text); None: the array's.

    Examples
    --------
    >>> import numpy as np, zarr3c
    >>> from xarray.core import indexing
    >>> a = zarr3c.create_array("memory://", shape=(4, 4), dtype="int32", chunks=(2, 2))
    >>> a[...] = np.arange(16).reshape(4, 4)
    >>> b = Zarr3cBackendArray(a)
    >>> b[indexing.BasicIndexer((1, slice(None, None, -2)))]
    array([7, 5], dtype=int32)
    >>> b[indexing.OuterIndexer((np.array([3, 0]), np.array([1, 2])))]
    array([[13, 14],
           [ 1,  2]], dtype=int32)
    >>> b[indexing.VectorizedIndexer((np.array([3, 0]), np.array([1, 2])))]
    array([13,  2], dtype=int32)
    """

    __slots__ = ("_array", "dtype", "shape")

    def __init__(self, array: Any, dtype: np.dtype | None = None):
        self._array = array
        self.shape = tuple(array.shape)
        self.dtype = array.dtype if dtype is None else dtype

    def get_array(self) -> Any:
        """The zarr3c Array read from.

        Returns
        -------
        zarr3c.Array

        Raises
        ------
        None

        Examples
        --------
        >>> import zarr3c
        >>> a = zarr3c.create_array("memory://", shape=(2,), dtype="int8")
        >>> Zarr3cBackendArray(a).get_array() is a
        True
        """
        return self._array

    def _basic(self, key: tuple[Any, ...]) -> Any:
        return self._array[key]

    def _outer(self, key: tuple[Any, ...]) -> Any:
        return self._array.oindex[key]

    def _vectorized(self, key: tuple[Any, ...]) -> Any:
        return self._array.vindex[key]

    def _method(self, key: Any) -> Any:
        if isinstance(key, indexing.VectorizedIndexer):
            return self._vectorized
        if isinstance(key, indexing.OuterIndexer):
            return self._outer
        return self._basic

    def _as_array(self, value: Any) -> Any:
        # A selection of one element comes back as a scalar; xarray wants an array of the
        # variable's dtype (numpy would make text '<U').
        if isinstance(value, np.ndarray):
            return value
        return np.asarray(value, dtype=self.dtype)

    def __getitem__(self, key: Any) -> Any:
        """Read the elements an xarray indexer selects, only from the chunks it touches.

        Parameters
        ----------
        key : xarray.core.indexing.ExplicitIndexer
            A ``BasicIndexer``, ``OuterIndexer`` or ``VectorizedIndexer``.

        Returns
        -------
        numpy.ndarray
            The selection, shaped as numpy's (basic and vectorized) or xarray's outer
            indexing shapes it.

        Raises
        ------
        zarr3c.errors.IndexingError
            If the selection is out of bounds or malformed.
        zarr3c.errors.ZarrError
            If a chunk cannot be read or decoded (the message names its key).

        Examples
        --------
        >>> import zarr3c
        >>> from xarray.core import indexing
        >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="float32", fill_value=1.5)
        >>> Zarr3cBackendArray(a)[indexing.BasicIndexer((2,))]
        array(1.5, dtype=float32)
        """
        value = indexing.explicit_indexing_adapter(key, self.shape, _SUPPORT, self._method(key))
        return self._as_array(value)

    async def async_getitem(self, key: Any) -> Any:
        """:meth:`__getitem__` for xarray's asynchronous loading (``Dataset.load_async``):
        the read runs on zarr3c's reader threads while the event loop goes on.

        Parameters
        ----------
        key : xarray.core.indexing.ExplicitIndexer
            As for :meth:`__getitem__`.

        Returns
        -------
        numpy.ndarray
            As :meth:`__getitem__` returns.

        Raises
        ------
        zarr3c.errors.ZarrError
            As :meth:`__getitem__` raises.

        Examples
        --------
        >>> import asyncio, zarr3c
        >>> from xarray.core import indexing
        >>> a = zarr3c.create_array("memory://", shape=(3,), dtype="int8", fill_value=4)
        >>> asyncio.run(Zarr3cBackendArray(a).async_getitem(indexing.BasicIndexer((0,))))
        array(4, dtype=int8)
        """
        method = self._method(key)

        async def read(raw_key: tuple[Any, ...]) -> Any:
            if method == self._basic:
                return await asyncio.wrap_future(self._array.read_async(raw_key))
            return await asyncio.to_thread(method, raw_key)

        raw_key, in_memory = indexing.decompose_indexer(key, self.shape, _SUPPORT)
        value = await read(raw_key.tuple)
        if in_memory.tuple:
            value = indexing.apply_indexer(indexing.as_indexable(value), in_memory)
        return self._as_array(value)
