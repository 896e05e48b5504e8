"""Node paths within a hierarchy: normalisation and validation of node names.

A path is "" for the root or names joined by "/" (no leading or trailing "/").  Node names
follow the final Zarr v3 spec as zarr-python 3 applies it: not empty, not made only of periods,
no "/" inside, and not starting with "__" (reserved).  Unicode and spaces are allowed, since
the ecosystem writes them.
"""

from __future__ import annotations

from zarr3c.errors import NodeNameError

__all__ = ["join_path", "normalize_path", "validate_node_name"]


def validate_node_name(name: str) -> str:
    """Return ``name`` if it is a valid node name, else raise :class:`NodeNameError`."""
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
    """Normalise a user path ("/a/b/", "a/b", None) to "a/b" ("" for the root), validating names."""
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
    """Join a normalised parent path and a relative path (which may contain "/")."""
    child = normalize_path(name)
    if child == "":
        raise NodeNameError("child path must not be empty")
    return f"{parent}/{child}" if parent else child
