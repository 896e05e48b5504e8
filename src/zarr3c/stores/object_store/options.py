"""How :class:`~zarr3c.stores.ObjectStore` is configured: which URLs it opens, how
``storage_options`` map to obstore's configuration, and how secrets are kept out of what it
prints.

``storage_options`` take obstore's own configuration keys (``region``, ``endpoint``,
``access_key_id``, ``skip_signature``, ..., per store: https://developmentseed.org/obstore/),
the common fsspec names for the same things (so that options written for s3fs, gcsfs or adlfs
keep working), and four keys of their own:

==========================================  =================================================
``storage_options`` key                     obstore configuration
==========================================  =================================================
``key`` / ``secret`` / ``token`` (S3)       ``access_key_id`` / ``secret_access_key`` /
                                            ``session_token``
``endpoint_url``, ``client_kwargs``'s        ``endpoint`` (an ``http://`` endpoint also sets
``endpoint_url``                            ``client_options={"allow_http": True}``)
``region_name``, ``client_kwargs``'s         ``region``
``region_name``
``anon`` (S3, GCS, Azure)                   ``skip_signature``
``requester_pays`` (S3)                     ``request_payer``
``token`` (GCS, a path)                     ``service_account_path``
``sas_token`` (Azure)                       ``sas_key``
``config_kwargs`` (s3fs: ``connect_timeout``, ``client_options`` ``connect_timeout`` /
``read_timeout``, ``retries.max_attempts``)  ``timeout``, ``retry_config`` ``max_retries``
``timeout``, ``connect_timeout``            ``client_options`` (seconds, or ``"30s"``)
``max_retries``, ``retry_timeout``          ``retry_config``
``client_options``, ``retry_config``        passed to obstore as they are
``max_concurrency``, ``coalesce``           the store's own (requests in flight, range gap)
==========================================  =================================================

Anything else goes to obstore, which refuses keys it does not know; the error names the key
and suggests :class:`~zarr3c.stores.FsspecStore` for fsspec-only options.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from zarr3c.errors import InvalidTypeError, MissingDependencyError, StoreError

__all__ = [
    "INSTALL_HINT",
    "OBSTORE_SCHEMES",
    "StoreOptions",
    "display_url",
    "import_obstore",
    "obstore_available",
    "redact",
    "secret_values",
    "split_storage_options",
]

#: What to install for ObjectStore (pyproject's ``obstore`` extra).
INSTALL_HINT = 'pip install "zarr3c[obstore]"'

#: URL schemes that :func:`zarr3c.stores.make_store` opens with obstore where it is installed.
#: ``gcs`` is fsspec's name for ``gs``.
OBSTORE_SCHEMES = frozenset(
    {"s3", "s3a", "gs", "gcs", "az", "azure", "abfs", "abfss", "http", "https"}
)

#: Per scheme family, fsspec option names and the obstore keys they stand for.
_ALIASES: dict[str, dict[str, str]] = {
    "s3": {
        "key": "access_key_id",
        "secret": "secret_access_key",
        "token": "session_token",
        "endpoint_url": "endpoint",
        "region_name": "region",
        "anon": "skip_signature",
        "requester_pays": "request_payer",
    },
    "gs": {"token": "service_account_path", "anon": "skip_signature", "endpoint_url": "base_url"},
    "az": {"sas_token": "sas_key", "anon": "skip_signature"},
    "http": {},
}

_FAMILY = {
    "s3": "s3", "s3a": "s3", "gs": "gs", "gcs": "gs",
    "az": "az", "azure": "az", "abfs": "az", "abfss": "az",
    "http": "http", "https": "http",
}

#: Configuration keys whose values are secrets (matched as substrings, lower-case).
_SECRET_WORDS = ("secret", "token", "password", "key", "sas", "credential")


def import_obstore(url: str | None = None) -> Any:
    """Import and return the ``obstore`` module.

    Parameters
    ----------
    url
        The URL being opened, named in the error.

    Returns
    -------
    module
        ``obstore``.

    Raises
    ------
    MissingDependencyError
        If obstore is not installed; the message names the URL and the extra to install.

    Examples
    --------
    >>> import_obstore().__name__
    'obstore'
    """
    try:
        import obstore
    except ImportError:
        where = f"cannot open store URL {url!r}: " if url is not None else ""
        raise MissingDependencyError(
            f"{where}ObjectStore needs obstore, which is not installed: {INSTALL_HINT}"
        ) from None
    return obstore


def obstore_available() -> bool:
    """Whether obstore can be imported (then :func:`~zarr3c.stores.make_store` opens
    ``s3://``, ``gs://``, ``az://`` and ``http(s)://`` URLs with it).

    Returns
    -------
    bool

    Examples
    --------
    >>> isinstance(obstore_available(), bool)
    True
    """
    try:
        import_obstore()
    except MissingDependencyError:
        return False
    return True


@dataclass
class StoreOptions:
    """``storage_options`` sorted into what obstore's ``from_url`` takes and what the store
    keeps for itself.

    Examples
    --------
    >>> StoreOptions().config
    {}
    """

    #: obstore's store configuration (``region``, ``endpoint``, credentials, ...).
    config: dict[str, Any] = field(default_factory=dict)
    #: obstore's HTTP client configuration (timeouts, ``allow_http``, ...).
    client_options: dict[str, Any] = field(default_factory=dict)
    #: obstore's retry configuration (``max_retries``, ``retry_timeout``, ``backoff``).
    retry_config: dict[str, Any] = field(default_factory=dict)
    #: The most requests in flight at once (None: the store's default).
    max_concurrency: int | None = None
    #: Ranges of one value at most this many bytes apart are read with one request (None:
    #: the store's default).
    coalesce: int | None = None


def _seconds(value: Any, name: str, url: str) -> Any:
    """A duration for obstore: numbers are seconds; strings (``"30s"``) and timedeltas pass."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | datetime.timedelta):
        raise InvalidTypeError(
            f"storage option {name!r} for {display_url(url)!r} must be seconds, a duration "
            f"string or a timedelta, not {type(value).__name__}"
        )
    if isinstance(value, int | float):
        return datetime.timedelta(seconds=value)
    return value


def _count(value: Any, name: str, url: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(
            f"storage option {name!r} for {display_url(url)!r} must be a non-negative integer, "
            f"not {value!r}"
        )
    return value


def split_storage_options(
    url: str, scheme: str, storage_options: Mapping[str, Any] | None
) -> StoreOptions:
    """Sort ``storage_options`` for a URL of ``scheme`` into obstore's configuration (the
    table in this module's docstring).

    Parameters
    ----------
    url
        The URL being opened (named in errors, never with credentials).
    scheme
        Its scheme, lower-case (one of :data:`OBSTORE_SCHEMES`).
    storage_options
        The options, or None.

    Returns
    -------
    StoreOptions

    Raises
    ------
    TypeError
        If ``storage_options`` or one of its nested dicts is not a dict, or a duration is
        not a number, string or timedelta.
    StoreError
        If ``max_concurrency``, ``coalesce`` or a retry count is not a non-negative integer,
        or ``config_kwargs`` holds a key with no obstore equivalent.

    Examples
    --------
    >>> opts = split_storage_options("s3://b/x", "s3", {"key": "K", "secret": "S",
    ...     "endpoint_url": "http://127.0.0.1:9000", "timeout": 5})
    >>> sorted(opts.config), opts.client_options["allow_http"]
    (['access_key_id', 'endpoint', 'secret_access_key'], True)
    """
    if storage_options is None:
        storage_options = {}
    if not isinstance(storage_options, Mapping):
        raise InvalidTypeError(
            f"storage_options for {display_url(url)!r} must be a dict, not "
            f"{type(storage_options).__name__}"
        )
    family = _FAMILY.get(scheme, "http")
    aliases = _ALIASES[family]
    out = StoreOptions()
    for name, value in storage_options.items():
        if name == "client_options" or name == "retry_config":
            if not isinstance(value, Mapping):
                raise InvalidTypeError(
                    f"storage option {name!r} for {display_url(url)!r} must be a dict, not "
                    f"{type(value).__name__}"
                )
            getattr(out, name).update(value)
        elif name == "max_concurrency":
            out.max_concurrency = _count(value, name, url)
        elif name == "coalesce":
            out.coalesce = _count(value, name, url)
        elif name in ("timeout", "connect_timeout"):
            out.client_options[name] = _seconds(value, name, url)
        elif name == "max_retries":
            out.retry_config[name] = _count(value, name, url)
        elif name == "retry_timeout":
            out.retry_config[name] = _seconds(value, name, url)
        elif name == "client_kwargs" and isinstance(value, Mapping):
            for sub, sub_value in value.items():  # botocore's client arguments, where mapped
                target = {"region_name": "region", "endpoint_url": "endpoint"}.get(sub)
                if target is None or family != "s3":
                    raise StoreError(
                        f"storage option 'client_kwargs' key {sub!r} for {display_url(url)!r} "
                        "has no obstore equivalent; use FsspecStore.from_url for fsspec's "
                        "options"
                    )
                out.config[target] = sub_value
        elif name == "config_kwargs" and isinstance(value, Mapping):
            _map_config_kwargs(value, out, url)
        elif name in aliases:
            target = aliases[name]
            out.config[target] = value
        else:
            out.config[name] = value
    endpoint = out.config.get("endpoint") or out.config.get("base_url")
    if scheme == "http" or (
        isinstance(endpoint, str) and endpoint.lower().startswith("http://")
    ):  # obstore refuses plain HTTP unless told: the URL or endpoint says it
        out.client_options.setdefault("allow_http", True)
    return out


def _map_config_kwargs(value: Mapping[str, Any], out: StoreOptions, url: str) -> None:
    """s3fs' ``config_kwargs`` (botocore's Config): timeouts and retry counts."""
    for sub, sub_value in value.items():
        if sub == "connect_timeout":
            out.client_options["connect_timeout"] = _seconds(sub_value, sub, url)
        elif sub == "read_timeout":
            out.client_options["timeout"] = _seconds(sub_value, sub, url)
        elif sub == "retries" and isinstance(sub_value, Mapping) and set(sub_value) <= {
            "max_attempts", "total_max_attempts", "mode"
        }:
            attempts = sub_value.get("max_attempts", sub_value.get("total_max_attempts"))
            if attempts is not None:
                out.retry_config["max_retries"] = _count(attempts, "max_attempts", url)
        else:
            raise StoreError(
                f"storage option 'config_kwargs' key {sub!r} for {display_url(url)!r} has no "
                "obstore equivalent; use FsspecStore.from_url for fsspec's options"
            )


def secret_values(config: Mapping[str, Any]) -> list[str]:
    """The values of ``config`` (obstore's configuration) that are secrets.

    Parameters
    ----------
    config
        A store configuration.

    Returns
    -------
    list of str
        The secret values, longest first (so that one contained in another is not left
        half-redacted).

    Examples
    --------
    >>> secret_values({"region": "eu-west-1", "secret_access_key": "abc123"})
    ['abc123']
    """
    found = set()
    for name, value in config.items():
        lowered = str(name).lower()
        # flags ("true") are not secrets, and hiding them would garble every message
        if (isinstance(value, str) and len(value) >= 4
                and value.lower() not in ("true", "false")
                and any(w in lowered for w in _SECRET_WORDS)):
            found.add(value)
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    """``text`` with every secret replaced by ``***``.

    Parameters
    ----------
    text
        A message (an obstore error's text).
    secrets
        The values to hide (:func:`secret_values`).

    Returns
    -------
    str

    Examples
    --------
    >>> redact("signature for abc123 refused", ["abc123"])
    'signature for *** refused'
    """
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def display_url(url: str) -> str:
    """``url`` without user information, query or fragment (where credentials and SAS
    tokens travel), for reprs and error messages.

    Parameters
    ----------
    url
        A URL.

    Returns
    -------
    str

    Examples
    --------
    >>> display_url("https://user:pw@host/x.zarr?sig=abc")
    'https://host/x.zarr'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"[?#].*", "", url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
