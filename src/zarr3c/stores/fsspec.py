"""FsspecStore: a store over any fsspec filesystem (S3, GCS, Azure, HTTP, ...), after the v3
core specification's "Abstract store interface"
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html).

Keys are paths below a root on the filesystem (``"s3://bucket/data.zarr"`` + ``"a/c/0/1"`` is
the object ``bucket/data.zarr/a/c/0/1``)::

    >>> store = FsspecStore.from_url(  # doctest: +SKIP
    ...     "s3://bucket/data.zarr",
    ...     storage_options={"endpoint_url": "http://127.0.0.1:9000", "anon": False},
    ... )
    >>> store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')  # doctest: +SKIP
    >>> store.list_dir("")  # doctest: +SKIP
    (['zarr.json'], [])

fsspec's in-memory filesystem (``memory://``, shared by the whole process) serves the
examples here.

What it relies on in fsspec, and why:

- Batched reads are one ``fs.cat_ranges`` call (``on_error="return"``), which asynchronous
  filesystems (s3fs, gcsfs, adlfs, HTTP) run concurrently on fsspec's event loop: ``get_many``
  (whole values) and ``get_partial_values`` (byte ranges).  ``cat_ranges`` rather than ``cat``
  because ``cat`` expands glob characters (a key ``a[0]`` would be a pattern), sorts and
  de-duplicates its paths; ``cat_ranges`` reads exactly the paths given, in order.  fsspec
  sends every range it is given as a request of its own, so bounded ranges of one value at
  most ``coalesce`` bytes apart (1 MiB by default, as :class:`~zarr3c.stores.ObjectStore`)
  are merged into one range first and the answer sliced here.
- Whole values are requested as the range ``0-``: s3fs otherwise sends a HEAD before every
  un-ranged GET.  A suffix request ``(-n, None)`` (shard indexes) is sent as the HTTP suffix
  range ``bytes=-n``, which S3 and HTTP servers answer from the end of the object without
  knowing its size; in-memory and local filesystems slice.  Zero-length requests are never
  sent as ranges (s3fs would read the whole object): they read one byte, to tell a missing
  key (None) from an empty result (``b""``).  "Range not satisfiable" (HTTP 416, S3
  ``InvalidRange``: the range starts at or past the end) means the key exists: ``b""``.
- A server that ignores ``Range`` (Python's ``http.server``) answers with the whole value;
  the result is then sliced here.  A server either honours ``Range`` or ignores it, and with
  a start past 0 an honoured answer is always shorter than the value: so the first such
  answer over HTTP whose length alone cannot tell is compared once with the value's size
  (``fs.info``), and the store remembers the answer for every later read.  A partial read is
  never mistaken for the whole value, nor the other way round.  (Without a size, the whole
  value is read and sliced, and nothing is remembered.)
- Writes are ``fs.pipe_file`` (one PUT: an S3 object is replaced atomically); erasing is
  ``fs.rm`` over many paths (one ``DeleteObjects`` request per 1,000 keys on S3); listings
  are ``fs.find`` (``list``, ``list_prefix``) and ``fs.ls`` (``list_dir``: one delimited
  listing on S3), after dropping the filesystem's listing cache for that path, so a listing
  sees what other processes wrote.
- Missing keys (``FileNotFoundError``) read as None.  Every other failure - a server that
  refuses connections or times out, a missing bucket, bad credentials, a failed request in a
  batch - raises :class:`~zarr3c.errors.StoreError` naming the key and URL; a batch never
  returns None for a key it failed to read.

Timeouts and retries belong to the filesystem and are set through ``storage_options``:
S3 (s3fs/botocore) ``{"config_kwargs": {"connect_timeout": 5, "read_timeout": 30,
"retries": {"max_attempts": 2}}}``; HTTP (aiohttp) ``{"client_kwargs": {"timeout":
aiohttp.ClientTimeout(total=30)}}``.

HTTP(S) stores are read-only (HTTP has no standard write).  ``set_partial_values`` is the base
class's read-modify-write followed by one ``set`` (object stores have no partial writes).
fsspec is an optional dependency (``pip install "zarr3c[remote]"``); it is imported on first
use, never by ``import zarr3c``.
"""

from __future__ import annotations

import builtins
import errno
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Self, TypeVar

from zarr3c.errors import (
    InvalidArgumentError,
    InvalidTypeError,
    MissingDependencyError,
    ReadOnlyError,
    StoreError,
)
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
from zarr3c.stores.read_into import check_size

__all__ = ["FsspecStore", "import_fsspec"]

#: What to install for remote stores (pyproject's ``remote`` extra).
INSTALL_HINT = 'pip install "zarr3c[remote]"'

#: Protocols served over plain HTTP(S): read-only, and servers may ignore ``Range``.
_HTTP_PROTOCOLS = frozenset({"http", "https"})

#: Schemes whose implementation the ``remote`` extra installs.
_EXTRA = frozenset({"s3", "s3a", "http", "https"})

#: Glob characters: fsspec's ``rm`` would expand a path containing one as a pattern.
_GLOB_CHARS = re.compile(r"[*?\[]")

#: (path, start, end) as fsspec's ``cat_ranges`` takes them.
_Request = tuple[str, int | None, int | None]

_L = TypeVar("_L")


def import_fsspec(url: str | None = None) -> Any:
    """Import and return the ``fsspec`` module.

    Parameters
    ----------
    url
        The URL being opened, named in the error.

    Raises
    ------
    MissingDependencyError
        If fsspec is not installed (an ImportError); the message names the URL and the extra
        to install.

    Examples
    --------
    >>> import_fsspec().__name__
    'fsspec'
    """
    try:
        import fsspec
    except ImportError:
        where = f"cannot open store URL {url!r}: " if url is not None else ""
        raise MissingDependencyError(
            f"{where}remote stores need fsspec, which is not installed: {INSTALL_HINT}"
        ) from None
    return fsspec


def _protocols(fs: Any) -> frozenset[str]:
    """The protocol names of an fsspec filesystem."""
    proto = getattr(fs, "protocol", ())
    return frozenset([proto] if isinstance(proto, str) else proto)


def _error_code(exc: BaseException) -> str | None:
    """The S3-style error code (``NoSuchBucket``, ``InvalidRange``, ...) behind ``exc``."""
    for e in (exc, exc.__cause__, exc.__context__):
        response = getattr(e, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            if code:
                return str(code)
    return None


def _is_unsatisfiable_range(exc: BaseException) -> bool:
    """Whether ``exc`` says "range not satisfiable" (the range starts past the end)."""
    return getattr(exc, "status", None) == 416 or _error_code(exc) == "InvalidRange"


def _is_missing(exc: BaseException) -> bool:
    """Whether ``exc`` says the key is not there (a directory or nothing)."""
    return isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError) or (
        isinstance(exc, OSError) and exc.errno in (errno.ENOENT, errno.EISDIR, errno.ENOTDIR)
    )


def _is_missing_container(exc: BaseException) -> bool:
    """Whether ``exc`` says the bucket/container itself is missing (not just the key)."""
    return _error_code(exc) in ("NoSuchBucket", "ContainerNotFound")


def _describe(exc: BaseException) -> str:
    """An exception for an error message, with a hint on timeouts where it is one."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower():
        text += (
            " (timed out: timeouts are set through storage_options, e.g. "
            "config_kwargs={'connect_timeout': ..., 'read_timeout': ...} for S3 or "
            "client_kwargs={'timeout': aiohttp.ClientTimeout(total=...)} for HTTP)"
        )
    return f"{type(exc).__name__}: {text}"


class FsspecStore(Store):
    """A store over an fsspec filesystem, rooted at ``path``.

    Parameters
    ----------
    fs
        An ``fsspec.AbstractFileSystem`` in synchronous mode (the default for filesystems
        made by ``fsspec.filesystem``), e.g. ``s3fs.S3FileSystem(...)``.
    path
        The root below which keys live (``"bucket/data.zarr"``); ``""`` is the root of the
        filesystem.
    read_only
        Refuse every write.  HTTP(S) stores are always read-only.
    coalesce
        Byte ranges of one value at most this many bytes apart are read with one request
        (0: only adjacent or overlapping ones).

    Notes
    -----
    Prefer :meth:`from_url`.  The store holds no resources of its own: fsspec caches and
    shares filesystem instances, so :meth:`close` does nothing.  The store pickles as its
    filesystem (which fsspec pickles as its class and options), root and ``read_only`` flag,
    so arrays and groups over it reopen on Dask workers.  Two stores are equal when their
    filesystems are equal (same class and options), with the same root and flag.

    Raises
    ------
    MissingDependencyError
        If fsspec is not installed.
    TypeError
        If ``fs`` is not an fsspec filesystem or ``path`` not a ``str``.
    InvalidArgumentError
        If ``fs`` was made with ``asynchronous=True``, or ``coalesce`` is not a non-negative
        integer.

    Examples
    --------
    >>> import fsspec
    >>> store = FsspecStore(fsspec.filesystem("memory"), "zarr3c-doc/class.zarr")
    >>> store.set("zarr.json", b"{}")
    >>> store.list_dir(""), store.url
    ((['zarr.json'], []), 'memory:///zarr3c-doc/class.zarr')
    >>> store.erase_prefix("")
    """

    supports_writes = True
    supports_partial_writes = False
    supports_listing = True
    reads_by_request = True  # (a round trip per request: small shards are fetched whole)

    def __init__(self, fs: Any, path: str = "", *, read_only: bool = False,
                 coalesce: int = DEFAULT_COALESCE) -> None:
        fsspec = import_fsspec()
        if not isinstance(fs, fsspec.AbstractFileSystem):
            raise InvalidTypeError(
                f"FsspecStore needs an fsspec filesystem, not {type(fs).__name__}"
            )
        if getattr(fs, "asynchronous", False):
            raise InvalidArgumentError(
                f"FsspecStore needs a filesystem in synchronous mode; {fs!r} was made with "
                "asynchronous=True"
            )
        if not isinstance(path, str):
            raise InvalidTypeError(f"FsspecStore path must be a str, not {type(path).__name__}")
        if isinstance(coalesce, bool) or not isinstance(coalesce, int) or coalesce < 0:
            raise InvalidArgumentError(
                f"coalesce must be a non-negative integer, not {coalesce!r}")
        self._coalesce = coalesce
        self._http = bool(_protocols(fs) & _HTTP_PROTOCOLS)
        super().__init__(read_only=read_only or self._http)
        self._fs = fs
        root = fs._strip_protocol(path) if path else ""
        self._root = root.rstrip("/") if root.strip("/") else root
        self._url: str | None = None
        # Whether the HTTP server honours Range, learnt from the first answer that needs it
        # (see the module docstring); not pickled: a reopened store learns it again.
        self._honours_ranges: bool | None = None

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
    ) -> FsspecStore:
        """The store at ``url`` (``"s3://bucket/data.zarr"``, ``"https://host/x.zarr"``, ...).

        Parameters
        ----------
        url
            An fsspec URL, chained URLs too (``"simplecache::s3://bucket/x.zarr"``).
        storage_options
            Keyword arguments for the filesystem: credentials, ``endpoint_url``, timeouts
            (see the module docstring), ...
        read_only
            Refuse every write.

        Returns
        -------
        FsspecStore
            The store, read-only for HTTP(S) URLs.

        Raises
        ------
        MissingDependencyError
            If fsspec, or the package implementing the URL's scheme (s3fs, gcsfs, ...), is not
            installed (an ImportError); the message names what to install.
        StoreError
            If the scheme is unknown, or the options are refused by the filesystem.
        TypeError
            If ``url`` is not a ``str`` or ``storage_options`` not a dict.

        Examples
        --------
        >>> store = FsspecStore.from_url("memory://zarr3c-doc/from_url.zarr")
        >>> store.set("zarr.json", b"{}")
        >>> store.get("zarr.json"), store.read_only
        (b'{}', False)
        >>> store.erase_prefix("")
        """
        if not isinstance(url, str):
            raise InvalidTypeError(f"store URL must be a str, not {type(url).__name__}")
        fsspec = import_fsspec(url)
        if storage_options is not None and not isinstance(storage_options, dict):
            raise InvalidTypeError(
                f"storage_options for {url!r} must be a dict, not {type(storage_options).__name__}"
            )
        # URL schemes are case-insensitive (RFC 3986); fsspec's registry is lower-case.
        url = re.sub(r"\A[A-Za-z][A-Za-z0-9+.\-]*(?=://)", lambda m: m.group(0).lower(), url)
        scheme = url.split("://", 1)[0].split("::")[-1] if "://" in url else ""
        try:
            fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
        except ImportError as exc:
            from fsspec.registry import known_implementations

            # fsspec's registry names the class and what to install ("Please install gcsfs
            # to access Google Storage", 'HTTPFileSystem requires "requests" and "aiohttp"')
            impl = known_implementations.get(scheme, {}).get("class", "its implementation")
            extra = f"; {INSTALL_HINT} covers s3:// and http(s)://" if scheme in _EXTRA else ""
            raise MissingDependencyError(
                f"cannot open store URL {url!r}: the {scheme}:// scheme needs {impl}, which "
                f"cannot be imported: {exc}{extra}"
            ) from exc
        except ValueError as exc:
            if "protocol not known" in str(exc).lower():
                raise StoreError(
                    f"cannot open store URL {url!r}: no fsspec implementation is known for "
                    f"the {scheme}:// scheme"
                ) from exc
            raise StoreError(f"cannot open store URL {url!r}: {_describe(exc)}") from exc
        except (TypeError, OSError) as exc:
            raise StoreError(f"cannot open store URL {url!r}: {_describe(exc)}") from exc
        store = cls(fs, path, read_only=read_only)
        store._url = url
        return store

    # -- identity -------------------------------------------------------------------------------

    @property
    def fs(self) -> Any:
        """The fsspec filesystem.

        Examples
        --------
        >>> type(FsspecStore.from_url("memory://zarr3c-doc/fs.zarr").fs).__name__
        'MemoryFileSystem'
        """
        return self._fs

    @property
    def path(self) -> str:
        """The root of the store on the filesystem (``"bucket/data.zarr"``).

        Examples
        --------
        >>> FsspecStore.from_url("memory://zarr3c-doc/path.zarr").path
        '/zarr3c-doc/path.zarr'
        """
        return self._root

    @property
    def url(self) -> str:
        """The URL of the store's root (``"s3://bucket/data.zarr"``): the one it was opened
        with by :meth:`from_url`.

        Examples
        --------
        >>> FsspecStore.from_url("memory://zarr3c-doc/url.zarr").url
        'memory://zarr3c-doc/url.zarr'
        """
        if self._url is not None:
            return self._url
        return str(self._fs.unstrip_protocol(self._root))

    @property
    def lock_id(self) -> Hashable:
        token = getattr(self._fs, "_fs_token", None) or id(self._fs)
        return ("fsspec", type(self._fs).__name__, token, self._root)

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r}, read_only={self._read_only})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FsspecStore):
            return NotImplemented
        return (
            self._fs == other._fs
            and self._root == other._root
            and self._read_only == other._read_only
        )

    def __hash__(self) -> int:
        return hash((FsspecStore, self.lock_id, self._read_only))

    def __getstate__(self) -> dict[str, Any]:
        return {"fs": self._fs, "root": self._root, "read_only": self._read_only, "url": self._url,
                "coalesce": self._coalesce}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._fs = state["fs"]
        self._root = state["root"]
        self._read_only = state["read_only"]
        self._url = state["url"]
        self._coalesce = state.get("coalesce", DEFAULT_COALESCE)
        self._http = bool(_protocols(self._fs) & _HTTP_PROTOCOLS)
        self._honours_ranges = None

    def with_read_only(self, read_only: bool = False) -> Self:
        new = super().with_read_only(read_only)
        new._read_only = new._read_only or self._http
        return new

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            why = " (HTTP stores are read-only)" if self._http else ""
            raise ReadOnlyError(f"cannot write {what}: {self!r} is read-only{why}")

    # -- paths ----------------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        return f"{self._root}/{key}" if self._root else key

    def _where(self, key: str) -> str:
        """The key and its URL, for messages."""
        return f"store key {key!r} ({self._fs.unstrip_protocol(self._path(key))})"

    def _key_of(self, path: str, base: str) -> str | None:
        """The key of a listed ``path`` if it lies below ``base`` (a root-relative prefix)."""
        path = path.rstrip("/")
        root = self._root
        if root:
            if not path.startswith(root + "/"):
                # some filesystems list without (or with) a leading "/": compare stripped
                stripped = root.lstrip("/") + "/"
                if not path.lstrip("/").startswith(stripped):
                    return None
                rel = path.lstrip("/")[len(stripped) :]
            else:
                rel = path[len(root) + 1 :]
        else:
            rel = path.lstrip("/")
        if not rel or not rel.startswith(base):
            return None
        return rel

    # -- reads ----------------------------------------------------------------------------------

    def _fetch(self, wants: Sequence[Want]) -> builtins.list[BytesLike | None]:
        """Read ``(key, start, length)`` ranges (normalized) with one concurrent batch:
        ranges of one key at most ``coalesce`` bytes apart share a request."""
        unique, cuts = coalesce_byte_ranges(wants, self._coalesce)
        to_send: list[_Request] = []
        for key, start, length in unique:
            path = self._path(key)
            if length == 0:
                # one byte tells a missing key from an empty result (see the module header)
                to_send.append((path, start, start + 1))
            else:  # a suffix request (start < 0) has length None: (path, start, None)
                to_send.append((path, start, None if length is None else start + length))
        try:
            raw = self._fs.cat_ranges(
                [p for p, _, _ in to_send],
                [s for _, s, _ in to_send],
                [e for _, _, e in to_send],
                on_error="return",
            )
        except Exception as exc:  # the batch itself failed (not one request of it)
            key = unique[0][0]
            raise StoreError(f"cannot read {self._where(key)}: {_describe(exc)}") from exc
        answers: list[BytesLike | None] = []
        for (key, start, length), value in zip(unique, raw, strict=True):
            if isinstance(value, BaseException):
                if _is_missing(value):
                    if _is_missing_container(value):
                        raise StoreError(
                            f"cannot read {self._where(key)}: the bucket does not exist "
                            f"({_describe(value)})"
                        ) from value
                    answers.append(None)
                elif _is_unsatisfiable_range(value):
                    answers.append(b"")  # the value exists; the range lies past its end
                else:
                    raise StoreError(
                        f"cannot read {self._where(key)}: {_describe(value)}"
                    ) from value
                continue
            answers.append(self._trim(key, start, length, value))
        return cut_answers(answers, cuts)

    def _trim(self, key: str, start: int, length: int | None, data: Any) -> BytesLike:
        """What a range request denotes, from what the filesystem returned for it.

        A server that ignores ``Range`` returns the whole value: slice it here.
        """
        if length == 0:
            return b""
        n = len(data)
        if start < 0:
            return data[start:] if n > -start else data
        if start == 0 and length is None:
            return data
        if length is not None and n > length:
            if self._http:
                self._honours_ranges = False
            return data[start : start + length]  # more than asked: the whole value
        if start == 0 or not self._http:
            return data  # from 0, the whole value and the honoured range coincide
        if self._honours_ranges is None:
            # An honoured range starting past 0 is shorter than the value; the whole is not.
            size = self._size(key)
            if size is None:  # no size: read the whole value and slice it
                whole = self._fetch([Want(key, 0, None)])[0]
                if whole is None:
                    raise StoreError(f"cannot read {self._where(key)}: it vanished mid-read")
                return whole[start:] if length is None else whole[start : start + length]
            self._honours_ranges = n != size
        if self._honours_ranges:
            return data
        return data[start:] if length is None else data[start : start + length]

    def _size(self, key: str) -> int | None:
        try:
            size = self._fs.info(self._path(key)).get("size")
        except Exception as exc:
            raise StoreError(
                f"cannot read the size of {self._where(key)}: {_describe(exc)}"
            ) from exc
        return None if size is None else int(size)

    def get(self, key: str) -> BytesLike | None:
        return self._fetch([Want(validate_key(key), 0, None)])[0]

    def getsize(self, key: str) -> int | None:
        """The size of the value under ``key`` from the filesystem's metadata (``fs.info``:
        a HEAD request on S3 and HTTP), or None if there is none (a missing key, a prefix).

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
            If the metadata cannot be read (unreachable server, missing bucket, ...); the
            message names the key and URL.

        Examples
        --------
        >>> store = FsspecStore.from_url("memory://zarr3c-doc/getsize.zarr")
        >>> store.set("k", b"0123")
        >>> store.getsize("k"), store.getsize("gone")
        (4, None)
        >>> store.erase_prefix("")
        """
        path = self._path(validate_key(key))
        self._fs.invalidate_cache(path)  # a cached listing may predate another writer
        try:
            info = self._fs.info(path)
        except Exception as exc:
            if _is_missing(exc) and not _is_missing_container(exc):
                return None
            raise StoreError(
                f"cannot read the size of {self._where(key)}: {_describe(exc)}"
            ) from exc
        if info.get("type") == "directory":
            return None
        size = info.get("size")
        if size is None:  # the server does not say (HTTP without Content-Length): read it
            return super().getsize(key)
        return int(size)

    def get_many(self, keys: Iterable[str]) -> builtins.list[BytesLike | None]:
        requests = [Want(validate_key(key), 0, None) for key in keys]
        return self._fetch(requests) if requests else []

    def get_at_most(self, key: str, limit: int) -> BytesLike | None:
        return self.get_many_at_most([key], limit)[0]

    def get_many_at_most(self, keys: Iterable[str], limit: int
                         ) -> builtins.list[BytesLike | None]:
        # Ask for one byte more than allowed: a longer value shows itself by that byte,
        # and no more than it crosses the network (where the server honours ranges).
        requests = [Want(validate_key(key), 0, limit + 1) for key in keys]
        values = self._fetch(requests) if requests else []
        return [check_size(key, value, limit, exact=False)
                for (key, _, _), value in zip(requests, values, strict=True)]

    def get_partial_values(
        self, key_ranges: Iterable[tuple[str, ByteRange | None]]
    ) -> builtins.list[BytesLike | None]:
        requests = []
        for key, rng in key_ranges:
            validate_key(key)
            start, length = normalize_byte_range(key, rng)
            requests.append(Want(key, start, length))
        return self._fetch(requests) if requests else []

    def exists(self, key: str) -> bool:
        return self._fetch([Want(validate_key(key), 0, 0)])[0] is not None

    # -- writes ---------------------------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        validate_key(key)
        self._check_writable(f"store key {key!r}")
        # bytes and bytearray go as they are (every filesystem takes them; botocore takes no
        # memoryview); other buffers (numpy arrays, memoryviews) are copied once.
        data = value if type(value) in (bytes, bytearray) else as_byte_view(value, key).tobytes()
        try:
            self._fs.pipe_file(self._path(key), data)
        except Exception as exc:
            raise StoreError(f"cannot write {self._where(key)}: {_describe(exc)}") from exc

    @property
    def concurrent_batches(self) -> bool:
        """Whether batches (``cat_ranges`` reads, :meth:`set_many`) send their requests
        concurrently: where the filesystem is asynchronous underneath (s3fs, gcsfs, adlfs),
        not for a synchronous one (local files, memory).

        Examples
        --------
        >>> import fsspec
        >>> FsspecStore(fsspec.filesystem("memory")).concurrent_batches
        False
        """
        return bool(getattr(self._fs, "async_impl", False))

    def set_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store each ``(key, value)`` pair; over an asynchronous filesystem with one
        concurrent batch of ``pipe_file`` calls (at most the filesystem's ``batch_size``, or
        fsspec's default, in flight), otherwise one :meth:`set` after another.

        Parameters
        ----------
        items
            ``(key, value)`` pairs; values are bytes-like.

        Raises
        ------
        InvalidKeyError
            If a key is malformed (checked before any write).
        ReadOnlyError
            If the store is read-only (checked before any write).
        TypeError
            If a value is not bytes-like.
        StoreError
            If a value cannot be written; the message names its key and URL (the first
            failed key in batch order, once the batch has finished).

        Examples
        --------
        >>> import fsspec
        >>> store = FsspecStore(fsspec.filesystem("memory"), "zarr3c-doc/set-many.zarr")
        >>> store.set_many([("c/0", b"0"), ("c/1", b"1")])
        >>> sorted(store.list())
        ['c/0', 'c/1']
        >>> store.erase_prefix("")
        """
        if not self.concurrent_batches:
            super().set_many(items)
            return
        batch = self._validate_set_many(items)
        if not batch:
            return
        puts = [(key, value if type(value) in (bytes, bytearray)
                 else as_byte_view(value, key).tobytes()) for key, value in batch.items()]
        from fsspec.asyn import sync

        failures = sync(self._fs.loop, self._pipe_all, puts)
        for (key, _), exc in zip(puts, failures, strict=True):
            if exc is not None:
                raise StoreError(f"cannot write {self._where(key)}: {_describe(exc)}") from exc

    async def _pipe_all(self, puts: Sequence[tuple[str, Any]]
                        ) -> builtins.list[BaseException | None]:
        """``pipe_file`` of every put, on the filesystem's loop: per put, its failure or
        None."""
        import asyncio

        from fsspec.asyn import _get_batch_size

        limit = asyncio.Semaphore(getattr(self._fs, "batch_size", None)
                                  or _get_batch_size(nofiles=True))

        async def one(key: str, data: Any) -> BaseException | None:
            async with limit:
                try:
                    await self._fs._pipe_file(self._path(key), data)
                except Exception as exc:  # noqa: BLE001 - named with its key by the caller
                    return exc
            return None

        return list(await asyncio.gather(*(one(key, data) for key, data in puts)))

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
        # Only the listed keys: fs.rm(root, recursive=True) could remove the bucket itself.
        self._remove(self._find(prefix))

    def _remove(self, keys: builtins.list[str]) -> None:
        if not keys:
            return
        plain = [self._path(k) for k in keys if not _GLOB_CHARS.search(k)]
        literal = [self._path(k) for k in keys if _GLOB_CHARS.search(k)]
        try:
            if plain:
                try:
                    self._fs.rm(plain)  # one batched request where the filesystem has one
                except FileNotFoundError:
                    literal.extend(plain)  # some filesystems refuse missing paths in a batch
            for path in literal:
                try:
                    self._fs.rm_file(path)
                except FileNotFoundError:
                    pass  # erasing a missing key is not an error
        except Exception as exc:
            raise StoreError(f"cannot erase {self._where(keys[0])}: {_describe(exc)}") from exc
        self._fs.invalidate_cache(self._root or None)

    # -- listings -------------------------------------------------------------------------------

    def _listing(self, prefix: str, list_base: Callable[[str], _L]) -> _L | None:
        """``list_base(base)`` for the directory ``base`` of ``prefix``, with the filesystem's
        listing cache dropped first (so other writers' keys show); None if it is missing.

        Raises
        ------
        StoreError
            If the listing fails (or the bucket is missing); the message names the prefix.
        """
        base = self._path(prefix[:-1]) if prefix else self._root
        self._fs.invalidate_cache(base or None)
        try:
            return list_base(base)
        except Exception as exc:
            if _is_missing(exc) and not _is_missing_container(exc):
                return None
            raise StoreError(
                f"cannot list store prefix {prefix!r} ({self._fs.unstrip_protocol(base)}): "
                f"{_describe(exc)}"
            ) from exc

    def _find(self, prefix: str) -> builtins.list[str]:
        """Every key below ``prefix``, through the filesystem's recursive listing."""
        paths = self._listing(
            prefix, lambda base: self._fs.find(base, withdirs=False, detail=False)
        )
        if paths is None:
            return []
        keys = []
        for path in paths:
            key = self._key_of(path, prefix)
            if key is not None:
                keys.append(key)
        return keys

    def list(self) -> Iterator[str]:
        return iter(self._find(""))

    def list_few(self, prefix: str, limit: int) -> builtins.list[str] | None:
        """On S3 (s3fs), one ``ListObjectsV2`` request of at most ``limit`` keys: every key
        below ``prefix`` if there are fewer, else None.  None on other filesystems: fsspec's
        own listings (``ls``, ``find``) read every page, which for a flat Zarr v2 array of
        a million chunks is a thousand requests.

        Parameters
        ----------
        prefix
            ``""`` or a key followed by ``"/"``.
        limit
            Give up (None) at this many keys; at most 1,000 (one S3 page).

        Returns
        -------
        list of str or None
            The keys, sorted.

        Raises
        ------
        InvalidKeyError
            If ``prefix`` is malformed.
        StoreError
            If the listing fails (a missing bucket, an unreachable endpoint); the message
            names the prefix and URL.

        Examples
        --------
        >>> FsspecStore.from_url("memory://zarr3c-doc/few.zarr").list_few("", 10) is None
        True
        """
        validate_prefix(prefix)
        call = getattr(self._fs, "call_s3", None)
        if call is None or not 0 < limit <= 1000 or getattr(self._fs, "version_aware", False):
            return None
        base = self._path(prefix[:-1]) if prefix else self._root
        bucket, key, _ = self._fs.split_path(base)
        if not bucket:
            return None
        below = f"{key}/" if key else ""
        try:
            page = call("list_objects_v2", Bucket=bucket, Prefix=below, MaxKeys=limit)
        except Exception as exc:
            raise StoreError(
                f"cannot list store prefix {prefix!r} ({self._fs.unstrip_protocol(base)}): "
                f"{_describe(exc)}"
            ) from exc
        contents = page.get("Contents", [])
        if page.get("IsTruncated") or len(contents) >= limit:
            return None
        keys = (self._key_of(f"{bucket}/{item['Key']}", prefix) for item in contents)
        return sorted(k for k in keys if k is not None)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        validate_prefix(prefix)
        return iter(self._find(prefix))

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        validate_prefix(prefix)
        entries = self._listing(prefix, lambda base: self._fs.ls(base, detail=True))
        if entries is None:
            return [], []
        keys: set[str] = set()
        prefixes: set[str] = set()
        for entry in entries:
            rel = self._key_of(entry["name"], prefix)
            if rel is None or "/" in rel[len(prefix) :]:
                continue  # the listed path itself (a key, not a directory), or deeper
            if entry.get("type") == "directory":
                prefixes.add(rel + "/")
            else:
                keys.add(rel)
        return sorted(keys), sorted(prefixes)
