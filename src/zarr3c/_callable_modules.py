"""``zarr3c.array(data)`` and ``zarr3c.group(store)`` as zarr-python's functions, while
``zarr3c.array`` and ``zarr3c.group`` stay the modules they are (``import zarr3c.array.core``,
``from zarr3c.group import Group``).

A module object is made callable by giving it a subclass of ``types.ModuleType`` that defines
``__call__`` (Python allows assigning a module's ``__class__`` to such a subclass,
https://docs.python.org/3/reference/datamodel.html#customizing-module-attribute-access);
its attributes, submodules and pickling are unchanged.

>>> import numpy as np, zarr3c
>>> zarr3c.array(np.arange(3))[...]
array([0, 1, 2])
>>> import zarr3c.array.core
>>> zarr3c.array.core.Array is zarr3c.Array
True
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["make_callable"]


class _ArrayModule(types.ModuleType):
    """The ``zarr3c.array`` package, callable as :func:`zarr3c.api_convenience.array`."""

    def __call__(self, data: Any, **kwargs: Any) -> Any:
        from zarr3c.api_convenience import array

        return array(data, **kwargs)


class _GroupModule(types.ModuleType):
    """The ``zarr3c.group`` module, callable as :func:`zarr3c.api_convenience.group`."""

    def __call__(self, store: Any = None, **kwargs: Any) -> Any:
        from zarr3c.api_convenience import group

        return group(store, **kwargs)


def make_callable() -> None:
    """Give the loaded ``zarr3c.array`` and ``zarr3c.group`` modules their callable classes.

    Raises
    ------
    KeyError
        If either module is not imported yet (``zarr3c/__init__.py`` imports both first).

    Examples
    --------
    >>> import zarr3c
    >>> make_callable()       # (already done when zarr3c is imported)
    >>> callable(zarr3c.group)
    True
    """
    sys.modules["zarr3c.array"].__class__ = _ArrayModule
    sys.modules["zarr3c.group"].__class__ = _GroupModule
