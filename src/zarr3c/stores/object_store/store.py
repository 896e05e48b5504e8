"""ObjectStore: the store over obstore (S3, GCS, Azure, HTTP, local and in-memory stores), the
v3 core specification's "Abstract store interface"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html) on the Rust ``object_store``
crate (https://developmentseed.org/obstore/).

What it relies on in obstore, and why:

- Every read of a batch (``get_many``, ``get_partial_values``, ``get_many_at_most``) is one
  coroutine on the shared event loop (:mod:`~zarr3c.stores.object_store.runner`): its requests
  are in flight together, at most ``max_concurrency`` at once per store.  Byte ranges of one
  value at most ``coalesce`` bytes apart are read with one request and sliced here; a suffix
  range (a shard index at the end of a shard) is one ``bytes=-n`` request.  At the first
  failure of a batch its other requests are cancelled, those still waiting for a slot
  unsent: the error comes after one round trip, not after the whole batch.  A batch of
  writes (``set_many``, which an array's write hands the encoded chunks of a batch) is sent
  the same way: concurrent ``put`` requests under the same bound, failing fast.
- Missing keys (obstore's ``NotFoundError``, a ``FileNotFoundError``; on a local store "not a
  directory" below a file) read as None.  "Range not satisfiable" (HTTP 416; obstore's "start
  too large") means the value exists and the range starts at or past its end: ``b""``.  A
  server that does not honour ``Range`` (obstore's "range not supported" or "non-partial
  response") is read whole and sliced here, and the store remembers it.  Every other failure
  - after obstore's retries - raises :class:`~zarr3c.errors.StoreError` naming the key and its
  URL; a missing bucket is an error, never a missing key.
- Erasing is one ``delete`` of many paths (S3's bulk delete); a store that refuses a batch
  holding a missing path (obstore's local store) is erased one path at a time.  Listings are
  ``list`` and ``list_with_delimiter`` (one delimited listing on S3).  Over HTTP, obstore
  lists with WebDAV's ``PROPFIND``, which plain web servers refuse: where fsspec's HTTP
  filesystem is installed, HTTP listings read the server's HTML directory pages through an
  :class:`~zarr3c.stores.FsspecStore` instead (as ``FsspecStore`` itself does).

Timeouts and retries are obstore's (``client_options`` ``timeout`` / ``connect_timeout``,
``retry_config`` ``max_retries`` / ``retry_timeout``), set through ``storage_options``
(:mod:`~zarr3c.stores.object_store.options`).  HTTP(S) stores are read-only; listing over HTTP
needs a WebDAV server (obstore lists with ``PROPFIND``).  Values are returned as read-only
memoryviews of obstore's buffers (no copy).
"""

from __future__ import annotations

import asyncio
import builtins
import re
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Self

from zarr3c.errors import InvalidTypeError, ReadOnlyError, StoreError
from zarr3c.stores.base import Store
from zarr3c.stores.byte_ranges import (
    DEFAULT_COALESCE,
    ByteRange,
    BytesLike,
    Want,
    as_byte_view,
    coalesce_byte_ranges,
    cut_answers,
    normalize_byte_range,
)
from zarr3c.stores.keys import validate_key, validate_prefix
from zarr3c.stores.object_store import runner
from zarr3c.stores.object_store.options import (
    display_url,
    import_obstore,
    redact,
    secret_values,
    split_storage_options,
)
from zarr3c.stores.read_into import check_size

__all__ = ["ObjectStore"]

#: What installs fsspec's HTTP filesystem (the remote extra).
INSTALL_REMOTE = 'pip install "zarr3c[remote]"'

#: Requests in flight at once per store, by default.
DEFAULT_CONCURRENCY = 32

_RANGE_PAST_END = re.compile(
    r"\b416\b|InvalidRange|StartTooLarge|Requested range was invalid|Invalid range", re.I
)
_RANGE_IGNORED = re.compile(r"Range request not supported|non-partial response|NotPartial", re.I)
_MISSING_CONTAINER = re.compile(
    r"NoSuchBucket|ContainerNotFound|bucket does not exist|container does not exist", re.I
)
# Below a file on a local store: ENOTDIR ("not a directory", os error 20), which is no value.
_NOT_A_DIRECTORY = re.compile(r"os error 20\b|Not a directory", re.I)
# The first line of a timeout says "error sending request"; obstore's debug text below it
# names reqwest's error kind (``kind: Timeout``, ``TimedOut``).
_TIMED_OUT = re.compile(r"timed out|TimedOut|kind: Timeout|deadline has elapsed")


class _Read(NamedTuple):
    """One request: ``rng`` None (the whole value), ``(lo, hi)`` (bytes ``[lo, hi)``),
    ``("offset", n)`` (from ``n`` to the end), ``("suffix", n)`` (the last ``n`` bytes) or
    ``("head", 0)`` (whether the value exists)."""

    key: str
    rng: tuple[Any, int] | None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0] or type(exc).__name__
    return text if len(text) <= 400 else text[:400] + "..."


class ObjectStore(Store):
    """A store over an obstore store (``obstore.store.S3Store``, ``GCSStore``,
    ``AzureStore``, ``HTTPStore``, ``LocalStore``, ``MemoryStore``).

    Parameters
    ----------
    store
        The obstore store; keys are paths below its prefix.  A zarr-python
        ``zarr.storage.ObjectStore`` is accepted too (its obstore store and read-only flag).
    read_only
        Refuse every write.  HTTP(S) stores are always read-only.
    max_concurrency
        The most requests of this store in flight at once.
    coalesce
        Byte ranges of one value at most this many bytes apart are read with one request
        (0: only adjacent or overlapping ones).

    Notes
    -----
    Prefer :meth:`from_url`.  The store pickles as its obstore store's configuration (an
    in-memory store as its contents), so arrays and groups over it reopen on Dask workers;
    its repr and error messages never show credentials.

    Raises
    ------
    MissingDependencyError
        If obstore is not installed.
    TypeError
        If ``store`` is not an obstore store.
    StoreError
        If ``max_concurrency`` is not a positive integer or ``coalesce`` not a non-negative
        one.

    Examples
    --------
    >>> from obstore.store import MemoryStore as ObstoreMemory
    >>> store = ObjectStore(ObstoreMemory())
    >>> store.set("zarr.json", b"{}")
    >>> store.list_dir(""), bytes(store.get("zarr.json"))
    ((['zarr.json'], []), b'{}')
    """

    supports_writes = True
    supports_partial_writes = False
    supports_listing = True
    reads_by_request = True  # (a round trip per request: small shards are fetched whole)

    def __init__(
        self,
        store: Any,
        *,
        read_only: bool = False,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        coalesce: int = DEFAULT_COALESCE,
    ) -> None:
        import_obstore()
        inner = getattr(store, "store", None)
        if inner is not None and type(store).__module__.startswith("zarr.storage"):
            read_only = read_only or bool(getattr(store, "read_only", False))
            store = inner  # zarr-python's ObjectStore: its obstore store
        kind = type(store).__name__
        if type(store).__module__.split(".")[0] != "obstore" or kind not in _KINDS:
            raise InvalidTypeError(
                f"ObjectStore needs an obstore store (S3Store, GCSStore, AzureStore, HTTPStore, "
                f"LocalStore, MemoryStore), not {type(store).__name__}"
            )
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or (
            max_concurrency < 1
        ):
            raise StoreError(
                f"max_concurrency must be a positive integer, not {max_concurrency!r}"
            )
        if isinstance(coalesce, bool) or not isinstance(coalesce, int) or coalesce < 0:
            raise StoreError(f"coalesce must be a non-negative integer, not {coalesce!r}")
        self._kind = kind
        super().__init__(read_only=read_only or kind == "HTTPStore")
        self._store = store
        self._max_concurrency = max_concurrency
        self._coalesce = coalesce
        self._url: str | None = None
        self._setup()

    def _setup(self) -> None:
        """What is derived from the obstore store, at construction and after unpickling."""
        self._secrets = secret_values(_config_of(self._store))
        self._root = _root_url(self._store)
        # Whether the server honours Range, learnt from the first answer that says it does
        # not (see the module docstring); not pickled.
        self._ranges_ignored = False
        self._limiter: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._lister: Store | bool | None = None  # see _html_lister

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: Mapping[str, Any] | None = None,
        read_only: bool = False,
    ) -> ObjectStore:
        """The store at ``url`` (``"s3://bucket/data.zarr"``, ``"gs://..."``, ``"az://..."``,
        ``"https://host/x.zarr"``, ``"file:///path"``, ``"memory://"``).

        Parameters
        ----------
        url
            The URL; schemes as obstore's ``from_url`` takes them (``gcs://`` is read as
            ``gs://``).
        storage_options
            Credentials, endpoint, region, timeouts, retries, ``max_concurrency``,
            ``coalesce``: see :mod:`zarr3c.stores.object_store.options`.
        read_only
            Refuse every write.

        Returns
        -------
        ObjectStore
            The store, read-only for HTTP(S) URLs.

        Raises
        ------
        MissingDependencyError
            If obstore is not installed.
        StoreError
            If obstore refuses the URL or an option (the message names the URL, without
            credentials, and the option).
        TypeError
            If ``url`` is not a ``str`` or ``storage_options`` not a dict.

        Examples
        --------
        >>> store = ObjectStore.from_url("memory://")
        >>> store.set("k", b"v"); bytes(store.get("k"))
        b'v'
        """
        if not isinstance(url, str):
            raise InvalidTypeError(f"store URL must be a str, not {type(url).__name__}")
        import_obstore(display_url(url))
        from obstore.store import from_url as obstore_from_url

        match = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*)://", url)
        scheme = match.group(1).lower() if match else ""
        if match is not None:  # schemes are case-insensitive (RFC 3986); obstore's are not
            url = scheme + url[len(scheme):]
        if scheme == "gcs":
            url = "gs" + url[3:]
        options = split_storage_options(url, scheme, storage_options)
        secrets = secret_values(options.config)
        kwargs: dict[str, Any] = {}
        if scheme in ("file", "memory"):
            if options.config or options.client_options or options.retry_config:
                raise StoreError(
                    f"storage_options for {display_url(url)!r} are only used by remote stores"
                )
            if scheme == "file":
                kwargs = {"automatic_cleanup": True, "mkdir": True}
        else:
            kwargs = {
                "config": options.config or None,
                "client_options": options.client_options or None,
                "retry_config": options.retry_config or None,
            }
        inner: Any
        try:
            if scheme == "memory":
                from obstore.store import MemoryStore as ObstoreMemory

                inner = ObstoreMemory()
            else:
                inner = obstore_from_url(url, **kwargs)
        except Exception as exc:
            hint = ""
            if type(exc).__name__ == "UnknownConfigurationKeyError":
                hint = " (use FsspecStore.from_url for fsspec's options)"
            raise StoreError(
                f"cannot open store URL {display_url(url)!r}: "
                f"{type(exc).__name__}: {redact(_first_line(exc), secrets)}{hint}"
            ) from None
        extra: dict[str, Any] = {}
        if options.max_concurrency is not None:
            extra["max_concurrency"] = options.max_concurrency
        if options.coalesce is not None:
            extra["coalesce"] = options.coalesce
        store = cls(inner, read_only=read_only, **extra)
        store._url = display_url(url).rstrip("/") if scheme != "memory" else "memory://"
        store._secrets = sorted({*store._secrets, *_url_secrets(url)}, key=len, reverse=True)
        return store

    # -- identity -------------------------------------------------------------------------------

    @property
    def store(self) -> Any:
        """The obstore store.

        Examples
        --------
        >>> type(ObjectStore.from_url("memory://").store).__name__
        'MemoryStore'
        """
        return self._store

    @property
    def url(self) -> str:
        """The URL of the store's root, without credentials.

        Examples
        --------
        >>> ObjectStore.from_url("s3://bucket/x.zarr", {"secret": "hidden", "key": "id"}).url
        's3://bucket/x.zarr'
        """
        return self._url if self._url is not None else self._root

    @property
    def lock_id(self) -> Hashable:
        if self._kind == "MemoryStore":
            return ("obstore", "memory", id(self._store))
        endpoint = _config_of(self._store).get("endpoint")
        return ("obstore", self._root, str(endpoint))

    def __repr__(self) -> str:
        return f"ObjectStore({self.url!r}, read_only={self._read_only})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObjectStore):
            return NotImplemented
        return self._read_only == other._read_only and (
            self._store is other._store
            or (self._kind != "MemoryStore" and self._store == other._store)
        )

    def __hash__(self) -> int:
        return hash((ObjectStore, self.lock_id, self._read_only))

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "kind": self._kind,
            "read_only": self._read_only,
            "url": self._url,
            "max_concurrency": self._max_concurrency,
            "coalesce": self._coalesce,
        }
        if self._kind == "MemoryStore":
            # an in-memory store cannot be shared with another process: it pickles as a copy
            state["contents"] = {key: bytes(self.get(key) or b"") for key in self.list()}
        else:
            args, kwargs = self._store.__getnewargs_ex__()
            state["args"], state["kwargs"] = args, kwargs
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Making a store sends no request: only the in-memory one's contents do (so that in
        # a forked child the first read, not unpickling, reports the fork).
        obstore = import_obstore()
        cls = getattr(obstore.store, state["kind"])
        if state["kind"] == "MemoryStore":
            runner.check_fork()
            self._store = cls()
            for key, value in state["contents"].items():
                obstore.put(self._store, key, value)
        else:
            self._store = cls(*state["args"], **state["kwargs"])
        self._kind = state["kind"]
        self._read_only = state["read_only"]
        self._url = state["url"]
        self._max_concurrency = state["max_concurrency"]
        self._coalesce = state["coalesce"]
        self._setup()

    @property
    def concurrent_batches(self) -> bool:
        """True: every batch (reads, :meth:`set_many`) sends its requests concurrently.

        Examples
        --------
        >>> ObjectStore.from_url("memory://").concurrent_batches
        True
        """
        return True

    def with_read_only(self, read_only: bool = False) -> Self:
        new = super().with_read_only(read_only)
        new._read_only = new._read_only or self._kind == "HTTPStore"
        return new

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            why = " (HTTP stores are read-only)" if self._kind == "HTTPStore" else ""
            raise ReadOnlyError(f"cannot write {what}: {self!r} is read-only{why}")

    # -- messages -------------------------------------------------------------------------------

    def _where(self, key: str) -> str:
        """The key and its URL, for messages."""
        return f"store key {key!r} ({self.url}/{key})"

    def _describe(self, exc: BaseException) -> str:
        """An obstore error for a message: its first line, credentials hidden, with a hint on
        timeouts."""
        text = redact(_first_line(exc), self._secrets)
        if _TIMED_OUT.search(str(exc)[:4000]):
            text += (
                " (timed out: set storage_options={'timeout': seconds, 'connect_timeout': "
                "seconds, 'max_retries': n})"
            )
        return f"{type(exc).__name__}: {text}"

    def _error(self, what: str, key: str, exc: BaseException) -> StoreError:
        if _MISSING_CONTAINER.search(str(exc)[:4000]):
            return StoreError(
                f"cannot {what} {self._where(key)}: the bucket or container does not exist "
                f"({self._describe(exc)})"
            )
        return StoreError(f"cannot {what} {self._where(key)}: {self._describe(exc)}")

    def _is_missing(self, exc: BaseException) -> bool:
        if isinstance(exc, FileNotFoundError):
            return not _MISSING_CONTAINER.search(str(exc)[:4000])
        return self._kind == "LocalStore" and bool(_NOT_A_DIRECTORY.search(str(exc)[:2000]))

    # -- reads ----------------------------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        """This store's bound on requests in flight, on the running loop (called there)."""
        loop = asyncio.get_running_loop()
        if self._limiter is None or self._limiter[0] is not loop:
            self._limiter = (loop, asyncio.Semaphore(self._max_concurrency))
        return self._limiter[1]

    async def _fetch(self, read: _Read, failed: asyncio.Event | None = None
                     ) -> memoryview | None:
        """One request; None for a missing key.  Once ``failed`` (its batch's) is set, a read
        still waiting for a slot is cancelled rather than sent."""
        obstore = _obstore()
        key, rng = read
        if rng is not None and rng[0] != "head" and self._ranges_ignored:
            return _slice(await self._fetch(_Read(key, None), failed), rng)
        fallback = False
        async with self._semaphore():
            if failed is not None and failed.is_set():
                raise asyncio.CancelledError
            try:
                if rng is not None and rng[0] == "head":
                    await obstore.head_async(self._store, key)
                    return memoryview(b"")
                options: dict[str, Any] = {}
                if rng is not None:
                    options["range"] = (
                        {rng[0]: rng[1]} if isinstance(rng[0], str) else (rng[0], rng[1])
                    )
                result = await obstore.get_async(self._store, key, options=options)
                return memoryview(await result.bytes_async())
            except Exception as exc:
                if self._is_missing(exc):
                    return None
                text = str(exc)[:2000]
                if rng is not None and _RANGE_IGNORED.search(text):
                    # an empty value answers a suffix request whole, too: only HTTP servers
                    # are remembered as ignoring Range
                    if self._kind == "HTTPStore":
                        self._ranges_ignored = True
                    fallback = True
                elif rng is not None and _RANGE_PAST_END.search(text):
                    return memoryview(b"")  # the value exists; the range starts past its end
                else:
                    if failed is not None:
                        failed.set()  # before this slot is given to the next read
                    raise self._error("read", key, exc) from None
        # Here only where the server ignored Range: read the whole value (outside the
        # semaphore: that read takes a slot of its own) and slice it.
        assert fallback and rng is not None
        return _slice(await self._fetch(_Read(key, None), failed), rng)

    async def _gather(self, reads: Sequence[_Read]) -> builtins.list[memoryview | None]:
        """Every read of a batch; at the first failure the reads not yet answered are
        cancelled (those waiting for a slot are never sent), and the failure of the first
        read, in batch order, among those that failed is raised."""
        failed = asyncio.Event()
        return await _all_or_first_error([self._fetch(r, failed) for r in reads])

    def _read(self, wants: Sequence[Want]) -> builtins.list[memoryview | None]:
        """Read ``(key, start, length)`` ranges (normalized) with one concurrent batch:
        ranges of one key at most ``coalesce`` bytes apart share a request."""
        requests, cuts = coalesce_byte_ranges(wants, self._coalesce)
        reads: list[_Read] = []
        for key, start, length in requests:
            if length == 0:
                rng: tuple[Any, int] | None = ("head", 0)
            elif start < 0:
                rng = ("suffix", -start)
            elif length is not None:
                rng = (start, start + length)
            elif start == 0:
                rng = None
            else:
                rng = ("offset", start)
            reads.append(_Read(key, rng))
        return cut_answers(runner.run(self._gather(reads)), cuts)

    def get(self, key: str) -> BytesLike | None:
        return self._read([Want(validate_key(key), 0, None)])[0]

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        wants = [Want(validate_key(key), 0, None) for key in keys]
        return list(self._read(wants)) if wants else []

    def get_at_most(self, key: str, limit: int) -> BytesLike | None:
        return self.get_many_at_most([key], limit)[0]

    def get_many_at_most(self, keys: Iterable[str], limit: int
                         ) -> builtins.list[BytesLike | None]:
        # Ask for one byte more than allowed: a longer value shows itself by that byte, and
        # no more than it crosses the network.
        wants = [Want(validate_key(key), 0, limit + 1) for key in keys]
        values = self._read(wants) if wants else []
        return [check_size(w.key, value, limit, exact=False)
                for w, value in zip(wants, values, strict=True)]

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        wants = []
        for key, rng in key_ranges:
            validate_key(key)
            start, length = normalize_byte_range(key, rng)
            wants.append(Want(key, start, length))
        return list(self._read(wants)) if wants else []

    def exists(self, key: str) -> bool:
        return self._read([Want(validate_key(key), 0, 0)])[0] is not None

    def getsize(self, key: str) -> int | None:
        """The size of the value under ``key`` from its metadata (one HEAD request), or None
        if there is none.

        Parameters
        ----------
        key
            The key to look up.

        Returns
        -------
        int or None

        Raises
        ------
        InvalidKeyError
            If ``key`` is not a valid key.
        StoreError
            If the metadata cannot be read; the message names the key and URL.

        Examples
        --------
        >>> store = ObjectStore.from_url("memory://")
        >>> store.set("k", b"0123")
        >>> store.getsize("k"), store.getsize("gone")
        (4, None)
        """
        obstore = _obstore()
        validate_key(key)
        try:
            meta = obstore.head(self._store, key)
        except Exception as exc:
            if self._is_missing(exc):
                return None
            raise self._error("read the size of", key, exc) from None
        return int(meta["size"])

    # -- writes ---------------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        obstore = _obstore()
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        data = value if type(value) is bytes else as_byte_view(value, key).tobytes()
        try:
            obstore.put(self._store, key, data)
        except Exception as exc:
            raise self._error("write", key, exc) from None

    def set_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store each ``(key, value)`` pair with one concurrent batch of requests, at most
        ``max_concurrency`` in flight (shared with the store's reads).

        At the first failure the writes not yet sent are cancelled and the failure is
        raised; writes already answered stay stored (an object is replaced whole by each
        PUT, never left half-written).

        Parameters
        ----------
        items
            ``(key, value)`` pairs; values are bytes-like.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before any request).
        ReadOnlyError
            If the store is read-only (checked before any request).
        TypeError
            If a value is not bytes-like.
        StoreError
            If a value cannot be written; the message names its key and URL.

        Examples
        --------
        >>> store = ObjectStore.from_url("memory://")
        >>> store.set_many([("a/c/0", b"0"), ("a/c/1", b"1")])
        >>> sorted(store.list())
        ['a/c/0', 'a/c/1']
        """
        batch = self._validate_set_many(items)
        if not batch:
            return
        puts = [(key, value if type(value) is bytes else as_byte_view(value, key).tobytes())
                for key, value in batch.items()]
        _obstore()  # (refused in a forked child before the loop is touched)
        runner.run(self._put_all(puts))

    async def _put(self, key: str, data: bytes, failed: asyncio.Event) -> None:
        """One PUT; once ``failed`` (its batch's) is set, a put still waiting for a slot is
        cancelled rather than sent."""
        obstore = _obstore()
        async with self._semaphore():
            if failed.is_set():
                raise asyncio.CancelledError
            try:
                await obstore.put_async(self._store, key, data)
            except Exception as exc:
                failed.set()  # before this slot is given to the next put
                raise self._error("write", key, exc) from None

    async def _put_all(self, puts: Sequence[tuple[str, bytes]]) -> None:
        """Every put of a batch, failing fast as :meth:`_gather` does for reads: the failure
        of the first put, in batch order, among those that failed is raised."""
        failed = asyncio.Event()
        await _all_or_first_error([self._put(key, data, failed) for key, data in puts])

    def erase(self, key: str) -> None:
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        self._remove([key])

    def erase_values(self, keys: Iterable[str]) -> None:
        key_list = [validate_key(key) for key in keys]
        if not key_list:
            return
        self._check_writable(f"store key {key_list[0]!r}")
        self._remove(list(dict.fromkeys(key_list)))

    def erase_prefix(self, prefix: str) -> None:
        validate_prefix(prefix)
        self._check_writable(f"store prefix {prefix!r}")
        self._remove(self._list(prefix))

    def _remove(self, keys: builtins.list[str]) -> None:
        obstore = _obstore()
        if not keys:
            return
        try:
            obstore.delete(self._store, keys)
            return
        except Exception as exc:
            if not self._is_missing(exc):
                raise self._error("erase", keys[0], exc) from None
        for key in keys:  # the store refused a batch holding a missing key: one at a time
            try:
                obstore.delete(self._store, key)
            except Exception as exc:
                if not self._is_missing(exc):
                    raise self._error("erase", key, exc) from None

    # -- listings -------------------------------------------------------------------------------

    def _list_error(self, prefix: str, exc: BaseException) -> StoreError:
        where = f"{self.url}/{prefix}"
        if _MISSING_CONTAINER.search(str(exc)[:4000]):
            return StoreError(
                f"cannot list store prefix {prefix!r} ({where}): the bucket or container does "
                f"not exist ({self._describe(exc)})"
            )
        hint = ""
        if self._kind == "HTTPStore":
            hint = (
                " (obstore lists HTTP servers with WebDAV; with fsspec installed, "
                f"{INSTALL_REMOTE}, plain servers' directory pages are read instead; "
                "consolidated metadata needs no listing)"
            )
        return StoreError(
            f"cannot list store prefix {prefix!r} ({where}): {self._describe(exc)}{hint}"
        )

    def _html_lister(self) -> Store | None:
        """For an HTTP store, an FsspecStore over the same URL, which lists a plain web
        server's HTML directory pages (obstore lists with WebDAV's ``PROPFIND``, which plain
        servers refuse, after retries); None where fsspec's HTTP filesystem is missing."""
        if self._kind != "HTTPStore":
            return None
        if self._lister is None:
            try:
                import aiohttp  # noqa: F401 - fsspec's HTTP filesystem needs it

                from zarr3c.stores.fsspec import FsspecStore

                self._lister = FsspecStore.from_url(self.url, read_only=True)
            except ImportError:
                self._lister = False
        return self._lister if isinstance(self._lister, Store) else None

    def _list(self, prefix: str) -> builtins.list[str]:
        lister = self._html_lister()
        if lister is not None:
            return builtins.list(lister.list_prefix(prefix))
        obstore = _obstore()
        try:
            batches = obstore.list(self._store, prefix[:-1] if prefix else None)
            keys = [meta["path"] for batch in batches for meta in batch]
        except Exception as exc:
            if self._is_missing(exc):
                return []
            raise self._list_error(prefix, exc) from None
        return [k for k in keys if k.startswith(prefix)]

    def list(self) -> Iterator[str]:
        return iter(self._list(""))

    def list_few(self, prefix: str, limit: int) -> builtins.list[str] | None:
        """One listing request (the first page, at most ``limit`` keys): every key below
        ``prefix`` if there are fewer, else None.  Not over HTTP, where listing is WebDAV's
        or the directory pages'.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.
        limit
            Give up (None) at this many keys; at most one listing page (1,000 on S3).

        Returns
        -------
        list of str or None
            The keys, sorted.

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        StoreError
            If the store cannot be listed (a missing bucket, an unreachable endpoint); the
            message names the prefix and URL.

        Examples
        --------
        >>> from obstore.store import MemoryStore as ObstoreMemory
        >>> store = ObjectStore(ObstoreMemory())
        >>> store.set_many([("a/zarr.json", b"{}"), ("a/c/0", b"0"), ("b", b"")])
        >>> store.list_few("a/", 10), store.list_few("", 3)
        (['a/c/0', 'a/zarr.json'], None)
        """
        validate_prefix(prefix)
        if self._kind == "HTTPStore" or limit < 1:
            return None
        obstore = _obstore()
        try:
            # (the stream fetches pages as it is read: its first batch is the first page)
            stream = obstore.list(self._store, prefix[:-1] if prefix else None,
                                  chunk_size=limit)
            first: builtins.list[Any] = next(iter(stream), [])
        except Exception as exc:
            if self._is_missing(exc):
                return []
            raise self._list_error(prefix, exc) from None
        if len(first) >= limit:
            return None
        return sorted(k for k in (meta["path"] for meta in first) if k.startswith(prefix))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return iter(self._list(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        lister = self._html_lister()
        if lister is not None:
            return lister.list_dir(prefix)
        obstore = _obstore()
        try:
            listing = obstore.list_with_delimiter(self._store, prefix[:-1] if prefix else None)
        except Exception as exc:
            if self._is_missing(exc):
                return [], []
            raise self._list_error(prefix, exc) from None
        keys = sorted(m["path"] for m in listing["objects"] if m["path"].startswith(prefix))
        prefixes = sorted(
            p.rstrip("/") + "/" for p in listing["common_prefixes"] if p.startswith(prefix)
        )
        return keys, prefixes


#: The obstore store classes, by name.
_KINDS = frozenset(
    {"S3Store", "GCSStore", "AzureStore", "HTTPStore", "LocalStore", "MemoryStore"}
)

_SCHEMES = {"S3Store": "s3", "GCSStore": "gs", "AzureStore": "az"}


def _obstore() -> Any:
    """The obstore module, for a request from this process (see :func:`runner.check_fork`)."""
    obstore = import_obstore()
    runner.check_fork()
    return obstore


def _url_secrets(url: str) -> builtins.list[str]:
    """What a URL carries that messages must not show: a user's password, a query (SAS
    tokens, signatures)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password or "", parts.query]
    return [f for f in found if len(f) >= 4]


def _config_of(store: Any) -> dict[str, Any]:
    config = getattr(store, "config", None)
    return dict(config) if isinstance(config, Mapping) else {}


def _root_url(store: Any) -> str:
    """The URL of an obstore store's root (without credentials), for messages."""
    kind = type(store).__name__
    prefix = str(getattr(store, "prefix", None) or "").strip("/")
    if kind in _SCHEMES:
        config = _config_of(store)
        container = config.get("bucket") or config.get("container_name") or ""
        return f"{_SCHEMES[kind]}://{container}" + (f"/{prefix}" if prefix else "")
    if kind == "HTTPStore":
        return display_url(str(getattr(store, "url", ""))).rstrip("/")
    if kind == "LocalStore":
        return f"file:///{prefix}" if prefix else "file://"
    return "memory://"



async def _all_or_first_error(calls: Sequence[Any]) -> builtins.list[Any]:
    """Run the coroutines ``calls`` together; at the first failure cancel those not yet
    finished (a request still waiting for its slot is never sent) and raise the failure of
    the first call, in batch order, among those that failed; else their results, in order."""
    if not calls:
        return []  # (asyncio.wait refuses an empty batch)
    tasks = [asyncio.ensure_future(call) for call in calls]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    if any(t.done() and not t.cancelled() and t.exception() is not None for t in tasks):
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    return [t.result() for t in tasks]


def _slice(value: memoryview | None, rng: tuple[Any, int]) -> memoryview | None:
    """What a ranged request denotes, from the whole value (a server that ignores Range)."""
    if value is None:
        return None
    if rng[0] == "offset":
        return value[rng[1]:]
    if rng[0] == "suffix":
        return value[-rng[1]:] if rng[1] < value.nbytes else value
    return value[rng[0]:rng[1]]

