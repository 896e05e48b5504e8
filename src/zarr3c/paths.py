"""Node paths within a hierarchy: normalisation and validation of node names.

A path is "" for the root or names joined by "/" (no leading or trailing "/").  Node names
follow the final Zarr v3 spec as zarr-python 3 applies it: not empty, not made only of periods,
no "/" inside, and not starting with "__" (reserved).  Unicode and spaces are allowed, since
the ecosystem writes them.

>>> normalize_path("/experiments/run 1/")
'experiments/run 1'
>>> join_path("experiments", "run 1/temperature")
'experiments/run 1/temperature'
"""

from __future__ import annotations

from typing import Any, NamedTuple

from zarr3c.errors import NodeNameError

__all__ = ["StorePath", "join_path", "normalize_path", "validate_node_name"]


def validate_node_name(name: str) -> str:
    """Return ``name`` if it is a valid node name, else raise :class:`NodeNameError`.

    Parameters
    ----------
    name : str
        One node name (no "/").

    Returns
    -------
    str
        ``name`` itself.

    Raises
    ------
    NodeNameError
        If ``name`` is not a string, is empty, is made only of periods, contains "/", a
        backslash or NUL, or starts with "__".

    Examples
    --------
    >>> validate_node_name("température")
    'température'
    >>> validate_node_name("..")
    Traceback (most recent call last):
        ...
    zarr3c.errors.NodeNameError: node name '..' must not consist only of periods
    """
    if not isinstance(name, str):
        raise NodeNameError(f"node name must be a string, got {type(name).__name__}")
    if name == "":
        raise NodeNameError("node name must not be empty")
    if set(name) == {"."}:
        raise NodeNameError(f"node name {name!r} must not consist only of periods")
    if "/" in name:
        raise NodeNameError(f"node name {name!r} must not contain '/'")
    if name.startswith("__"):
        raise NodeNameError(f"node name {name!r} must not start with '__' (reserved)")
    if "\\" in name or "\x00" in name:
        raise NodeNameError(f"node name {name!r} must not contain a backslash or NUL")
    return name


def normalize_path(path: str | None) -> str:
    """Normalise a user path ("/a/b/", "a/b", None) to "a/b" ("" for the root).

    Parameters
    ----------
    path : str or None
        Node names joined by "/"; leading and trailing "/" are dropped.  None or "" (or
        "/"): the root.

    Returns
    -------
    str
        The names joined by "/", or "" for the root.

    Raises
    ------
    NodeNameError
        If ``path`` is not a string or None, or one of its names is invalid (see
        :func:`validate_node_name`; ``"a//b"`` has an empty one).

    Examples
    --------
    >>> normalize_path("/a/b/"), normalize_path(None)
    ('a/b', '')
    """
    if path is None:
        return ""
    if not isinstance(path, str):
        raise NodeNameError(f"path must be a string, got {type(path).__name__}")
    stripped = path.strip("/")
    if stripped == "":
        return ""
    for name in stripped.split("/"):
        validate_node_name(name)
    return stripped


def join_path(parent: str, name: str) -> str:
    """Join a normalised parent path and a relative path (which may contain "/").

    Parameters
    ----------
    parent : str
        A normalised path ("" for the root).
    name : str
        A path relative to ``parent``, normalised by :func:`normalize_path`.

    Returns
    -------
    str
        The normalised path of ``name`` below ``parent``.

    Raises
    ------
    NodeNameError
        If ``name`` is empty (or only "/") or holds an invalid name.

    Examples
    --------
    >>> join_path("", "a/b"), join_path("a", "/b/c/")
    ('a/b', 'a/b/c')
    """
    child = normalize_path(name)
    if child == "":
        raise NodeNameError("child path must not be empty")
    return f"{parent}/{child}" if parent else child


class StorePath(NamedTuple):
    """A store and a normalised path in it: where a node is (``node.store_path``, as in
    zarr-python); ``store_path / "name"`` is the path of a child.

    Parameters
    ----------
    store : Store
        The store.
    path : str
        The normalised path ("" for the root).

    Examples
    --------
    >>> import zarr3c
    >>> sp = zarr3c.create_group("memory://", "a").store_path
    >>> sp.path, (sp / "b/c").path
    ('a', 'a/b/c')
    """

    store: Any
    path: str

    def __truediv__(self, name: str) -> StorePath:
        """The path ``name`` below this one (NodeNameError for an empty or invalid name)."""
        return StorePath(self.store, join_path(self.path, name))

    def __str__(self) -> str:
        """The store's repr, then ``/`` and the path."""
        return f"{self.store!r}/{self.path}"
