"""Stores: where a Zarr hierarchy's keys and values live (the v3 core specification's
"Abstract store interface", https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html).

:func:`make_store` turns what users pass as ``store`` into a :class:`Store`::

    make_store("data/example.zarr")          # LocalStore (also pathlib.Path, "file://...")
    make_store("memory://")                  # a new MemoryStore
    make_store("s3://bucket/x.zarr", storage_options={...})   # ObjectStore (with obstore)
    make_store("simplecache::s3://bucket/x.zarr")              # FsspecStore (any fsspec URL)
    make_store({})                           # a MemoryStore over that dict
    make_store(store, read_only=True)        # the store itself, or a read-only twin

The modules: :mod:`~zarr3c.stores.base` (the :class:`Store` base class),
:mod:`~zarr3c.stores.read_into` (the read-into hooks every store has, and their contract),
:mod:`~zarr3c.stores.keys` (what a key is), :mod:`~zarr3c.stores.byte_ranges` (values and byte
ranges), and one module or package per store: :mod:`~zarr3c.stores.local`,
:mod:`~zarr3c.stores.memory`, :mod:`~zarr3c.stores.zip`, :mod:`~zarr3c.stores.fsspec`,
:mod:`~zarr3c.stores.object_store`.

Which store a remote URL gets: ``s3://`` (``s3a://``), ``gs://`` (``gcs://``), ``az://``
(``azure://``, ``abfs://``, ``abfss://``) and ``http(s)://`` URLs open as an
:class:`ObjectStore` where obstore is installed (``zarr3c[obstore]``), and as an
:class:`FsspecStore` where it is not; every other URL, and chained URLs
(``simplecache::s3://...``), open as an :class:`FsspecStore`.  Either can be asked for by
name: ``FsspecStore.from_url(url, ...)`` or ``ObjectStore.from_url(url, ...)``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from zarr3c.errors import InvalidTypeError, StoreError
from zarr3c.stores.base import Store
from zarr3c.stores.fsspec import FsspecStore
from zarr3c.stores.keys import validate_key, validate_prefix
from zarr3c.stores.local import LocalStore
from zarr3c.stores.memory import MemoryStore
from zarr3c.stores.object_store import OBSTORE_SCHEMES, ObjectStore, obstore_available
from zarr3c.stores.zip import ZipStore

__all__ = [
    "FsspecStore",
    "LocalStore",
    "MemoryStore",
    "ObjectStore",
    "Store",
    "ZipStore",
    "describe_store",
    "is_url",
    "make_store",
    "validate_key",
    "validate_prefix",
]

# Two or more letters, so that Windows drive letters ("C:\\data") are not taken for schemes.
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+)://")


def is_url(text: Any) -> bool:
    r"""Whether ``text`` is a store URL rather than a local path.

    True for ``scheme://...`` with a scheme of two or more characters (so that a Windows
    drive, ``C:\data`` or ``C://data``, stays a path) and for chained fsspec URLs
    (``simplecache::s3://bucket/x.zarr``); False for anything that is not a ``str``.

    Parameters
    ----------
    text
        What a caller was given as a store: a string, or anything else (a path object, a
        store, a dict).

    Returns
    -------
    bool
        Whether ``text`` is a URL string (which :func:`make_store` opens as an
        :class:`ObjectStore` or :class:`FsspecStore`, but for ``"memory://"`` and
        ``"file://<path>"``).

    Examples
    --------
    >>> is_url("s3://bucket/x.zarr"), is_url("simplecache::s3://b/x"), is_url("C:\\x")
    (True, True, False)
    """
    if not isinstance(text, str):
        return False
    return _URL_SCHEME.match(text) is not None or ("::" in text and "://" in text)


def describe_store(store: Any) -> str:
    """Where ``store``'s data is, for messages: the root directory of a local store, the
    zip file of a ZipStore, the URL of a remote one, the store's repr otherwise (an
    in-memory store has no other name).

    Parameters
    ----------
    store : Store
        The store.

    Returns
    -------
    str
        The directory, file or URL (or repr).

    Raises
    ------
    StoreError
        Never raised here; listed because a store's own properties may raise it.

    Examples
    --------
    >>> import tempfile, zarr3c
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     describe_store(zarr3c.LocalStore(tmp)) == str(zarr3c.LocalStore(tmp).root)
    True
    >>> describe_store(zarr3c.MemoryStore())
    'MemoryStore(<dict at 0x...>, read_only=False)'
    """
    if isinstance(store, LocalStore):
        return str(store.root)
    if isinstance(store, ZipStore):
        return str(store.path)
    if isinstance(store, FsspecStore):
        return store.url
    return repr(store)


def make_store(
    store_like: Any,
    *,
    read_only: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> Store:
    """The :class:`Store` that ``store_like`` denotes.

    Parameters
    ----------
    store_like
        - a :class:`Store`: itself (a read-only twin from :meth:`Store.with_read_only` when
          ``read_only`` is asked of a writable store; a read-only store stays read-only);
        - an obstore store (``obstore.store.S3Store``, ...) or zarr-python's
          ``zarr.storage.ObjectStore``: an :class:`ObjectStore` over it;
        - a ``str`` or ``os.PathLike`` path, or a ``"file://<path>"`` URL: a
          :class:`LocalStore` over that directory;
        - ``"memory://"`` or None: a new, empty :class:`MemoryStore`;
        - a ``dict``: a :class:`MemoryStore` over that dict (shared, not copied);
        - an ``s3://``, ``gs://``, ``az://`` or ``http(s)://`` URL: an :class:`ObjectStore`
          where obstore is installed (``zarr3c[obstore]``), else an :class:`FsspecStore`;
        - any other URL (chained fsspec URLs too): an :class:`FsspecStore` (needs
          ``zarr3c[remote]``).
    read_only
        Open the store read-only.
    storage_options
        Options for remote stores (credentials, ``endpoint_url``, timeouts; for an
        ObjectStore see :mod:`zarr3c.stores.object_store.options`); must be empty or None for
        the other stores.

    Returns
    -------
    Store

    Raises
    ------
    MissingDependencyError
        For a remote URL when neither obstore nor fsspec (or the scheme's fsspec
        implementation) is installed (an ImportError; the message names the package).
    StoreError
        For a remote URL whose scheme is unknown; for ``storage_options`` given with a local
        or in-memory store; or a LocalStore root that is not a directory.
    TypeError
        If ``store_like`` is none of the above.

    Examples
    --------
    >>> make_store("memory://")  # doctest: +ELLIPSIS
    MemoryStore(<dict at ...>, read_only=False)
    >>> type(make_store("data/example.zarr", read_only=True)).__name__
    'LocalStore'
    >>> data = {}
    >>> make_store(data).store_dict is data
    True
    """
    if isinstance(store_like, Store):
        _refuse_storage_options(storage_options, repr(store_like))
        if read_only and not store_like.read_only:
            return store_like.with_read_only(True)
        return store_like
    if store_like is None:
        _refuse_storage_options(storage_options, "an in-memory store")
        return MemoryStore(read_only=read_only)
    if isinstance(store_like, dict):
        _refuse_storage_options(storage_options, "a dict")
        return MemoryStore(store_like, read_only=read_only)
    if isinstance(store_like, str):
        match = _URL_SCHEME.match(store_like)
        scheme = None if match is None else match.group(1).lower()
        if scheme == "memory":
            _refuse_storage_options(storage_options, store_like)
            return MemoryStore(read_only=read_only)
        if scheme == "file" and match is not None:
            _refuse_storage_options(storage_options, store_like)
            return LocalStore(store_like[match.end() :], read_only=read_only)
        if scheme in OBSTORE_SCHEMES and obstore_available():
            return ObjectStore.from_url(
                store_like, storage_options=storage_options, read_only=read_only
            )
        if is_url(store_like):  # any other URL, or a chained one ("simplecache::s3://...")
            return FsspecStore.from_url(
                store_like, storage_options=storage_options, read_only=read_only
            )
        _refuse_storage_options(storage_options, store_like)
        return LocalStore(store_like, read_only=read_only)
    if _is_obstore_store(store_like):
        _refuse_storage_options(storage_options, repr(store_like))
        return ObjectStore(store_like, read_only=read_only)
    if isinstance(store_like, os.PathLike):
        _refuse_storage_options(storage_options, os.fspath(store_like))
        return LocalStore(store_like, read_only=read_only)
    raise InvalidTypeError(
        f"cannot make a store from a {type(store_like).__name__}: expected a Store, a path, "
        "a URL, a dict or None"
    )


def _is_obstore_store(store_like: Any) -> bool:
    """Whether ``store_like`` is an obstore store or zarr-python's ``ObjectStore`` (told by
    their modules, so that neither package is imported to ask)."""
    module = type(store_like).__module__
    if module.split(".")[0] == "obstore":
        return True
    return module.startswith("zarr.storage") and type(store_like).__name__ == "ObjectStore"


def _refuse_storage_options(storage_options: dict[str, Any] | None, what: Any) -> None:
    """Refuse ``storage_options`` given for a store that does not take them (``what``)."""
    if storage_options:
        raise StoreError(
            f"storage_options were given for {what!r} but are only used by remote stores"
        )
