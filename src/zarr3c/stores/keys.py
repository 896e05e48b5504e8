"""Store keys and prefixes: what every store accepts, and why.

Keys are ``/``-separated paths such as ``"zarr.json"`` or ``"temp/c/0/1"``; prefixes are ``""``
(the root) or a key followed by ``/`` (``"temp/c/"``), as the v3 core specification's
"Abstract store interface" names them
(https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html).  The specification's key
alphabet is narrower than what the ecosystem writes (zarr-python stores group names with
spaces and non-ASCII letters), so validation only refuses what is ambiguous or dangerous:
empty keys and segments, ``.`` and ``..`` segments, a leading or trailing ``/``, backslashes
and NUL.  With those rules no key can name a location outside a directory store's root.
"""

from __future__ import annotations

import re
from typing import Any

from zarr3c.errors import InvalidKeyError

__all__ = ["CHUNK_NAME", "key_problem", "validate_key", "validate_prefix"]

#: A chunk key of any chunk key encoding (coordinates and separators after an optional
#: ``c``): valid below any valid prefix, so keys of this form built in bulk for a read need
#: their prefix checked once (``Store.chunk_files``, ``Store.chunk_values``).
CHUNK_NAME = re.compile(r"(?:c[./]?)?\d+(?:[./]\d+)*|c")


def key_problem(key: str) -> str | None:
    """The reason ``key`` is not a valid store key, or None if it is.

    The test behind :func:`validate_key`, for callers that skip invalid names rather than
    refuse them (a zip archive's entries that are not keys).

    Parameters
    ----------
    key
        A candidate key (a ``str``).

    Returns
    -------
    str or None
        The broken rule, as a phrase for an error message; None for a valid key.

    Examples
    --------
    >>> key_problem("a/c/0") is None
    True
    >>> key_problem("a/../b")
    "a key must not contain '..' path segments"
    >>> key_problem("a/\\ud800")
    'a key must be valid Unicode (it holds a lone surrogate)'
    """
    if not key:
        return "a key must not be empty"
    if "\x00" in key:
        return "a key must not contain NUL characters"
    if "\\" in key:
        return "a key must not contain backslashes (the separator is '/')"
    if key[0] == "/":
        return "a key must not start with '/'"
    if key[-1] == "/":
        return "a key must not end with '/'"
    if "//" in key:
        return "a key must not contain empty path segments ('//')"
    if not key.isascii():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:  # (a lone surrogate: no store can spell it)
            return "a key must be valid Unicode (it holds a lone surrogate)"
    if "." in key:
        for segment in key.split("/"):
            if segment == "." or segment == "..":
                return f"a key must not contain {segment!r} path segments"
    return None


def validate_key(key: Any) -> str:
    """Check that ``key`` is a valid store key and return it.

    A key is a non-empty ``str`` of ``/``-separated segments, none of them empty, ``.`` or
    ``..``, without backslashes or NUL characters.  Any other character (spaces, non-ASCII
    letters) is allowed, as the Zarr ecosystem writes them.

    Parameters
    ----------
    key
        The candidate key, e.g. ``"group/array/c/0/1"``.

    Returns
    -------
    str
        ``key`` unchanged.

    Raises
    ------
    InvalidKeyError
        If ``key`` is not a string or breaks a rule; the message names the key and the rule.

    Examples
    --------
    >>> validate_key("group/array/c/0/1")
    'group/array/c/0/1'
    >>> validate_key("a//b")
    Traceback (most recent call last):
    ...
    zarr3c.errors.InvalidKeyError: invalid store key 'a//b': a key must not contain empty path segments ('//')
    """  # noqa: E501
    if not isinstance(key, str):
        raise InvalidKeyError(
            f"invalid store key {key!r}: a key must be a str, not {type(key).__name__}"
        )
    problem = key_problem(key)
    if problem is not None:
        raise InvalidKeyError(f"invalid store key {key!r}: {problem}")
    return key


def validate_prefix(prefix: Any) -> str:
    """Check that ``prefix`` is a valid store prefix and return it.

    A prefix is ``""`` (the root of the store) or a valid key followed by ``"/"``.

    Parameters
    ----------
    prefix
        The candidate prefix, e.g. ``"group/array/"``.

    Returns
    -------
    str
        ``prefix`` unchanged.

    Raises
    ------
    InvalidKeyError
        If ``prefix`` is not ``""`` and not a valid key plus ``"/"``; the message names it.

    Examples
    --------
    >>> validate_prefix(""), validate_prefix("group/array/")
    ('', 'group/array/')
    >>> validate_prefix("group")
    Traceback (most recent call last):
    ...
    zarr3c.errors.InvalidKeyError: invalid store prefix 'group': a prefix must be '' or end with '/'
    """
    if not isinstance(prefix, str):
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must be a str, not {type(prefix).__name__}"
        )
    if prefix == "":
        return prefix
    if prefix[0] == "/":
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must not start with '/' (the root is '')"
        )
    if prefix[-1] != "/":
        raise InvalidKeyError(
            f"invalid store prefix {prefix!r}: a prefix must be '' or end with '/'"
        )
    problem = key_problem(prefix[:-1])
    if problem is not None:
        raise InvalidKeyError(f"invalid store prefix {prefix!r}: {problem}")
    return prefix
