"""zarr-python 2's ``copy_store`` and ``copy_all`` (zarr-python 3.4 raises
NotImplementedError for both): keys copied between stores byte for byte, members copied
between groups node by node.  Neither writes anything when ``if_exists="raise"`` finds
something in the way.

>>> import zarr3c
>>> src = zarr3c.group()
>>> _ = src.create_array("x", shape=(2,), dtype="i1")
>>> zarr3c.copy_all(src, zarr3c.group())
(1, 0, 2)
"""

from __future__ import annotations

import re
from typing import Any

from zarr3c.api_convenience import from_array
from zarr3c.array import Array
from zarr3c.errors import (
    ContainsArrayError,
    ContainsGroupError,
    InvalidArgumentError,
    NodeExistsError,
)
from zarr3c.group import Group
from zarr3c.paths import join_path, normalize_path
from zarr3c.stores import describe_store, make_store

__all__ = ["copy_all", "copy_store"]


#: The ``if_exists`` choices of :func:`copy_store` and :func:`copy_all`.
_IF_EXISTS = ("raise", "replace", "skip")


def _check_if_exists(if_exists: str) -> None:
    if if_exists not in _IF_EXISTS:
        raise InvalidArgumentError(f"if_exists must be one of {_IF_EXISTS}, got {if_exists!r}")


def _logger(log: Any) -> Any:
    """A function taking one line of text, from ``log`` (None, a callable, or a file-like
    object with ``write``), as zarr-python 2's copy functions take it."""
    if log is None:
        return lambda line: None
    if callable(log):
        return log
    if hasattr(log, "write"):
        return lambda line: log.write(line + "\n")
    raise InvalidArgumentError(f"log must be a callable or a file-like object, got {log!r}")


def copy_store(
    source: Any,
    dest: Any,
    source_path: str = "",
    dest_path: str = "",
    excludes: Any = None,
    includes: Any = None,
    flags: int = 0,
    if_exists: str = "raise",
    dry_run: bool = False,
    log: Any = None,
) -> tuple[int, int, int]:
    """Copy the keys of one store (below ``source_path``) to another (below ``dest_path``)
    byte for byte, as zarr-python 2's ``zarr.copy_store`` did (zarr-python 3.4 raises
    NotImplementedError).

    With ``if_exists="raise"`` (the default) every destination key is checked before
    anything is written: one that exists fails the call with the destination untouched.

    Parameters
    ----------
    source, dest : store-like
        The stores (``source`` opened read-only).
    source_path, dest_path : str, default ""
        The prefixes copied from and to.
    excludes, includes : str, list of str or None, default None
        Regular expressions: keys (relative to ``source_path``) matching one of
        ``excludes`` are left out, unless they match one of ``includes``.
    flags : int, default 0
        ``re`` flags for those expressions.
    if_exists : {"raise", "replace", "skip"}, default "raise"
        What to do where a destination key exists.
    dry_run : bool, default False
        Count what would be copied, writing nothing.
    log : callable, file-like or None, default None
        Receives a line per key copied or skipped.

    Returns
    -------
    tuple of int
        ``(n_copied, n_skipped, n_bytes_copied)``.

    Raises
    ------
    NodeExistsError
        With ``if_exists="raise"``, if a destination key exists (naming the store and the
        key); nothing is written then.
    InvalidArgumentError
        If ``if_exists`` or ``log`` is not valid, or ``source`` and ``dest`` are the same
        data.
    StoreError
        If reading or writing fails.

    Examples
    --------
    >>> import zarr3c
    >>> g = zarr3c.group()
    >>> a = g.create_array("x", shape=(4,), dtype="i1", chunks=(2,))
    >>> a[:] = 1
    >>> dest = zarr3c.MemoryStore()
    >>> n_copied, n_skipped, n_bytes = zarr3c.copy_store(g.store, dest)
    >>> n_copied, n_skipped, zarr3c.open_array(dest, "x")[...]
    (4, 0, array([1, 1, 1, 1], dtype=int8))
    """
    from zarr3c.transfer import _refuse_overlap

    _check_if_exists(if_exists)
    write = _logger(log)
    src = make_store(source, read_only=True)
    dst = make_store(dest, read_only=dry_run)
    _refuse_overlap(source if hasattr(source, "list") else src,
                    dest if hasattr(dest, "list") else dst)
    sp, dp = normalize_path(source_path), normalize_path(dest_path)
    exclude = [re.compile(e, flags) for e in ([excludes] if isinstance(excludes, str)
                                              else excludes or [])]
    include = [re.compile(e, flags) for e in ([includes] if isinstance(includes, str)
                                              else includes or [])]
    pairs = []
    for key in sorted(src.list_prefix(sp + "/" if sp else "")):
        rel = key[len(sp) + 1:] if sp else key
        if any(e.search(rel) for e in exclude) and not any(i.search(rel) for i in include):
            continue
        pairs.append((key, join_path(dp, rel)))
    existing = {k for _, k in pairs if dst.exists(k)}
    if if_exists == "raise" and existing:
        raise NodeExistsError(f"key {min(existing)!r} exists in store {describe_store(dst)} "
                              f"({len(existing)} of the keys to copy do); pass "
                              "if_exists='replace' or 'skip'")
    n_copied = n_skipped = n_bytes = 0
    for src_key, dst_key in pairs:
        if dst_key in existing and if_exists == "skip":
            n_skipped += 1
            write(f"skip {src_key} -> {dst_key}")
            continue
        value = src.get(src_key)
        if value is None:  # (erased since it was listed)
            continue
        if not dry_run:
            dst.set(dst_key, value)
        n_copied += 1
        n_bytes += len(value)
        write(f"copy {src_key} -> {dst_key}")
    return n_copied, n_skipped, n_bytes


def copy_all(
    source: Group,
    dest: Group,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Any = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    **create_kwargs: Any,
) -> tuple[int, int, int]:
    """Copy every member of group ``source`` into group ``dest`` (arrays with their data,
    groups with their members unless ``shallow``), as zarr-python 2's ``zarr.copy_all``
    did (zarr-python 3.4 raises NotImplementedError).  Arrays are copied chunk by chunk,
    re-encoded where ``create_kwargs`` change their chunks or codecs.

    Copies take the layout of ``dest`` (one hierarchy never mixes layouts): members of a
    Zarr v2 group copied into a v3 group become v3 arrays and groups, and back, with the
    data types and fill values :func:`zarr3c.copy` gives them (a v2 ``|S4`` becomes a v3
    ``null_terminated_bytes``, a v3 ``string`` a v2 ``vlen-utf8`` array).  Keys are not
    copied as they are: that is :func:`copy_store`.

    With ``if_exists="raise"`` (the default) a member of ``source`` whose name ``dest``
    already has fails the call before anything is written.

    Parameters
    ----------
    source, dest : Group
        The groups (``dest`` writable).
    shallow : bool, default False
        Copy only ``source``'s children: its subgroups are created empty.
    without_attrs : bool, default False
        Leave the attributes out.
    log : callable, file-like or None, default None
        Receives a line per node copied or skipped.
    if_exists : {"raise", "replace", "skip"}, default "raise"
        What to do where ``dest`` has a node of the same name.
    dry_run : bool, default False
        Count what would be copied, writing nothing.
    **create_kwargs
        Passed to :func:`from_array` for every array (``chunks``, ``compressors``, ...).

    Returns
    -------
    tuple of int
        ``(n_copied, n_skipped, n_bytes_copied)``: nodes copied and skipped, and the bytes
        of array data copied (uncompressed).

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        With ``if_exists="raise"``, if ``dest`` has a member of the same name as one of
        ``source`` (naming the store and the path); nothing is written then.
    InvalidArgumentError
        If ``source`` or ``dest`` is not a Group, or ``if_exists`` is not valid.
    MetadataError, UnsupportedFeatureError
        If an array has no form in the layout of ``dest`` (a v2 structured type with
        subarray fields in v3, a sharded v3 array in v2).
    ReadOnlyError
        If ``dest`` is read-only.

    Examples
    --------
    >>> import zarr3c
    >>> src = zarr3c.group()
    >>> a = src.create_array("sub/x", shape=(4,), dtype="int16", chunks=(2,))
    >>> a[:] = 5
    >>> dest = zarr3c.group()
    >>> zarr3c.copy_all(src, dest)
    (2, 0, 8)
    >>> dest["sub/x"][...]
    array([5, 5, 5, 5], dtype=int16)

    From a Zarr v2 group into a v3 group:

    >>> v2 = zarr3c.group(zarr_format=2)
    >>> s = v2.create_array("s", shape=(2,), dtype="S3", fill_value=b"ab")
    >>> v3 = zarr3c.group(zarr_format=3)
    >>> zarr3c.copy_all(v2, v3)
    (1, 0, 6)
    >>> v3["s"].zarr_format, v3["s"].metadata.data_type.name, v3["s"][...]
    (3, 'null_terminated_bytes', array([b'ab', b'ab'], dtype='|S3'))
    """
    _check_if_exists(if_exists)
    if not isinstance(source, Group) or not isinstance(dest, Group):
        raise InvalidArgumentError("copy_all() copies a Group into a Group")
    write = _logger(log)
    names = source.keys()
    if if_exists == "raise":
        for name in names:
            if name in dest.keys():
                node = dest[name]
                error = ContainsArrayError if isinstance(node, Array) else ContainsGroupError
                raise error(f"{'an array' if isinstance(node, Array) else 'a group'} is already at "
                            f"path {node.path!r} in store "
                            f"{describe_store(dest.store)}; pass if_exists='replace' or "
                            "'skip'")
    counts = [0, 0, 0]

    def copy_node(node: Any, parent: Group | None, name: str) -> None:
        # parent: the destination group (None below a group a dry run does not create).
        exists = parent is not None and name in parent.keys()
        if exists and if_exists == "skip":
            counts[1] += 1
            write(f"skip {node.path}")
            return
        attrs = {} if without_attrs else dict(node.attrs.asdict())
        counts[0] += 1
        write(f"copy {node.path}")
        if isinstance(node, Array):
            counts[2] += node.nbytes
            if parent is not None and not dry_run:
                # In the layout of ``dest``, which one hierarchy never mixes: an array of
                # a v2 group copied into a v3 group becomes a v3 array, as zarr3c.copy makes.
                from_array(parent.store, data=node, name=join_path(parent.path, name),
                           overwrite=exists, **{"zarr_format": dest.zarr_format,
                                                **create_kwargs, "attributes": attrs})
            return
        # A group already there is merged into, as zarr-python 2 did; an array replaced.
        new = parent[name] if exists and parent is not None else None
        if not isinstance(new, Group):
            new = None
        if parent is not None and not dry_run:
            if new is None:
                new = parent.create_group(name, attributes=attrs, overwrite=exists)
            elif attrs:
                new.attrs.update(attrs)
        if shallow:  # only the children of source: its subgroups stay empty
            return
        for child_name in node.keys():
            copy_node(node[child_name], new, child_name)

    for name in names:
        copy_node(source[name], dest, name)
    return counts[0], counts[1], counts[2]
