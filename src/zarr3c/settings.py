"""``zarr3c.config``: process-wide defaults, read and set as zarr-python's ``zarr.config``.

The settings (dotted keys, as zarr-python names them):

- ``"array.order"`` (``"C"``): the memory layout of arrays created or opened without
  ``order``;
- ``"array.write_empty_chunks"`` (False): whether arrays created or opened without
  ``write_empty_chunks`` store chunks that hold only the fill value;

  both are read when the :class:`~zarr3c.Array` object is made, however it is reached
  (:func:`zarr3c.open_array`, :func:`zarr3c.open`, a group's ``g[name]`` and listings,
  :meth:`zarr3c.Array.from_dict`, ...);
- ``"array.v3_default_compressors"`` (``"auto"``: zstd at level 0): the compressors of Zarr v3
  arrays created with ``compressors="auto"``;
- ``"threading.max_workers"`` (None: ``ZARR3C_NUM_THREADS``, else the core count): the size of
  the thread pool (:func:`zarr3c.set_num_threads`);
- ``"default_zarr_format"`` (3): the layout the convenience functions (:func:`zarr3c.create`,
  :func:`zarr3c.array`, ...) write when not given ``zarr_format``.

:meth:`Config.set` changes settings at once and, used as a context manager, puts them back
on exit:

>>> import zarr3c
>>> with zarr3c.config.set({"array.order": "F"}):
...     zarr3c.create_array("memory://", shape=(2, 2), dtype="i1").order
'F'
>>> zarr3c.config.get("array.order")
'C'
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from zarr3c.concurrency import get_num_threads, set_num_threads
from zarr3c.errors import InvalidArgumentError

__all__ = ["Config", "config"]

#: The settings and their defaults ("threading.max_workers" lives in the thread pool).
_DEFAULTS: dict[str, Any] = {
    "array.order": "C",
    "array.write_empty_chunks": False,
    "array.v3_default_compressors": "auto",
    "default_zarr_format": 3,
}

_THREADS = "threading.max_workers"


class _Undo:
    """What :meth:`Config.set` returns: the settings are already changed; leaving a ``with``
    block over it puts back the values they had before."""

    def __init__(self, cfg: Config, previous: dict[str, Any]) -> None:
        self._config = cfg
        self._previous = previous

    def __enter__(self) -> Config:
        return self._config

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._config._apply(self._previous)


class Config:
    """Process-wide settings, with zarr-python's ``zarr.config`` interface (``get``, ``set``
    usable as a context manager, ``reset``).  The module's docstring lists the keys.

    Examples
    --------
    >>> import zarr3c
    >>> zarr3c.config.get("array.write_empty_chunks")
    False
    """

    def __init__(self) -> None:
        self._values = dict(_DEFAULTS)
        self._lock = threading.Lock()

    def get(self, key: str, default: Any = None) -> Any:
        """The value of setting ``key``; a section name (``"array"``) gives a dict of its
        settings.

        Parameters
        ----------
        key : str
            A dotted key (``"array.order"``) or a section (``"array"``, ``"threading"``).
        default : object, default None
            Returned for a key that is not a setting.

        Returns
        -------
        object
            The value (or dict of values).

        Raises
        ------
        InvalidArgumentError
            If ``key`` is not a str.

        Examples
        --------
        >>> import zarr3c
        >>> zarr3c.config.get("array")["order"]
        'C'
        >>> zarr3c.config.get("threading.max_workers") >= 1
        True
        """
        if not isinstance(key, str):
            raise InvalidArgumentError(f"a config key must be a str, got {key!r}")
        values = self._snapshot()
        if key in values:
            return values[key]
        section = {k[len(key) + 1:]: v for k, v in values.items() if k.startswith(key + ".")}
        return section if section else default

    def set(self, options: dict[str, Any] | None = None, **kwargs: Any) -> _Undo:
        """Change settings now; as a context manager, put them back on leaving the block.

        Parameters
        ----------
        options : dict or None, default None
            Dotted keys and their new values.
        **kwargs
            More settings, with ``__`` for the dots (``array__order="F"``), as donfig
            (zarr-python's config) takes them.

        Returns
        -------
        object
            A context manager restoring the previous values on exit.

        Raises
        ------
        InvalidArgumentError
            If a key is not a setting, or a value does not fit it (an order other than
            ``"C"``/``"F"``, a thread count that is not a positive int, ...); nothing is
            changed then.

        Examples
        --------
        >>> import zarr3c
        >>> with zarr3c.config.set(threading__max_workers=1):
        ...     zarr3c.get_num_threads()
        1
        >>> zarr3c.config.set({"array.write_empty_chunks": True})  # doctest: +ELLIPSIS
        <zarr3c.settings._Undo object at ...>
        >>> zarr3c.config.get("array.write_empty_chunks")
        True
        >>> zarr3c.config.reset()
        """
        new = dict(options or {})
        new.update({k.replace("__", "."): v for k, v in kwargs.items()})
        for key, value in new.items():
            _check(key, value)
        previous = self._snapshot(raw=True)
        self._apply(new)
        return _Undo(self, {k: previous[k] for k in new})

    def reset(self) -> None:
        """Put every setting back to its default (the thread count to ``ZARR3C_NUM_THREADS``
        or the core count).

        Raises
        ------
        InvalidArgumentError
            Never for the defaults; listed for the checks they pass through.

        Examples
        --------
        >>> import zarr3c
        >>> _ = zarr3c.config.set({"array.order": "F"})
        >>> zarr3c.config.reset()
        >>> zarr3c.config.get("array.order")
        'C'
        """
        self._apply({**_DEFAULTS, _THREADS: None})

    def _snapshot(self, raw: bool = False) -> dict[str, Any]:
        """Every setting's value; the thread count as set (None: the default) when ``raw``,
        else as in effect."""
        from zarr3c import concurrency

        with self._lock:
            values = dict(self._values)
        values[_THREADS] = concurrency._num_threads if raw else get_num_threads()
        return values

    def _apply(self, values: dict[str, Any]) -> None:
        with self._lock:
            for key, value in values.items():
                if key == _THREADS:
                    set_num_threads(value)
                else:
                    self._values[key] = value


def _check(key: str, value: Any) -> None:
    """Refuse a key that is not a setting, or a value that does not fit it."""
    if key == _THREADS:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise InvalidArgumentError(f"config {key!r} must be a positive int or None, "
                                       f"got {value!r}")
        return
    if key not in _DEFAULTS:
        raise InvalidArgumentError(
            f"unknown config key {key!r} (one of {sorted([*_DEFAULTS, _THREADS])})")
    if key == "array.order" and value not in ("C", "F"):
        raise InvalidArgumentError(f"config {key!r} must be 'C' or 'F', got {value!r}")
    if key == "array.write_empty_chunks" and not isinstance(value, bool):
        raise InvalidArgumentError(f"config {key!r} must be a bool, got {value!r}")
    if key == "default_zarr_format" and value not in (2, 3):
        raise InvalidArgumentError(f"config {key!r} must be 2 or 3, got {value!r}")


#: The settings object (``zarr3c.config``).
config = Config()
