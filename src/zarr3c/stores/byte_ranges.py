"""Values and byte ranges of them, as every store reads and writes them.

Stores take any bytes-like value and return :data:`BytesLike` values.  Byte ranges are
``(start, length)`` pairs (:data:`ByteRange`): ``(10, 5)`` is ``value[10:15]``, ``(10, None)``
is ``value[10:]`` and ``(-16, None)`` is the last 16 bytes (a suffix request, how shard
indexes are read from the end of a shard).  A range past the end of a value returns the bytes
that exist, as slicing does; a missing key gives ``None``.

A batch of range requests (``get_partial_values``) is grouped by key so that each value is
opened once: :func:`group_byte_ranges` checks every key and range before any read and returns
one :data:`RangeGroup` per key, ``(checked, positions, ranges)``: what the key check returned
(the key, or a store's file path), the positions of the key's requests in the batch, and their
normalized ``(start, length)`` ranges in the same order; :func:`scatter_byte_ranges` puts the
per-group results back in request order.  Groups are plain tuples, unpacked by those names:
a batch builds one per key.

Stores whose every read is a request (object stores, fsspec) send a batch of ranges as few
requests: :func:`coalesce_byte_ranges` turns the batch's :class:`Want` s (one normalized
``(key, start, length)`` each) into the distinct requests to send, merging bounded ranges of
one key at most ``max_gap`` bytes apart into one, and one :class:`Cut` per want: which request
answers it and where in that answer its bytes lie.  :func:`cut_answers` applies the cuts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeAlias, TypeVar

from zarr3c.errors import InvalidKeyError, InvalidTypeError

__all__ = [
    "DEFAULT_COALESCE",
    "ByteRange",
    "BytesLike",
    "Cut",
    "RangeGroup",
    "Want",
    "apply_patches",
    "as_byte_view",
    "as_int",
    "coalesce_byte_ranges",
    "cut_answers",
    "group_byte_ranges",
    "normalize_byte_range",
    "resolve_byte_range",
    "scatter_byte_ranges",
]

#: What stores return from reads: an immutable or fresh buffer owned by the caller.
BytesLike: TypeAlias = bytes | bytearray | memoryview

#: ``(start, length)``; ``length`` None reads to the end; a negative ``start`` with ``length``
#: None reads the last ``-start`` bytes.
ByteRange: TypeAlias = tuple[int, int | None]

_T = TypeVar("_T")


def as_byte_view(value: Any, key: str) -> memoryview:
    """A flat, contiguous, unsigned-byte view of a bytes-like ``value`` (no copy if possible).

    Parameters
    ----------
    value
        Any object with the buffer protocol (``bytes``, ``bytearray``, a numpy array, ...).
    key
        The store key the value is for, named in the error.

    Returns
    -------
    memoryview
        One-dimensional, format ``"B"``, C-contiguous; a view of ``value`` when it is
        contiguous, else of a copy.

    Raises
    ------
    TypeError
        If ``value`` does not support the buffer protocol (a ``str``, an ``int``, ...); the
        message names ``key``.

    Examples
    --------
    >>> import numpy as np
    >>> view = as_byte_view(np.arange(3, dtype="<u2"), "a/c/0")
    >>> view.format, view.nbytes, bytes(view)
    ('B', 6, b'\\x00\\x00\\x01\\x00\\x02\\x00')
    """
    try:
        view = memoryview(value)
    except TypeError:
        raise InvalidTypeError(
            f"value for store key {key!r} must be bytes-like, not {type(value).__name__}"
        ) from None
    if view.ndim == 1 and view.format == "B" and view.contiguous:
        return view
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B")


def as_int(x: Any) -> int | None:
    """``x`` as a Python int (numpy integers too), or None if it is not an integer.

    Parameters
    ----------
    x
        A candidate offset or length; ``bool`` is not taken for an integer.

    Returns
    -------
    int or None

    Examples
    --------
    >>> import numpy as np
    >>> as_int(np.int64(7)), as_int(2.0), as_int(True)
    (7, None, None)
    """
    if isinstance(x, bool):
        return None
    if type(x) is int:
        return x
    try:
        return int(x.__index__())
    except (AttributeError, TypeError):
        return None


def normalize_byte_range(key: str, byte_range: Any) -> tuple[int, int | None]:
    """Check a ``(start, length)`` range and return it as a tuple of ``int`` / None.

    ``None`` stands for the whole value (``(0, None)``).  ``start`` may be negative only
    with ``length`` None (a suffix request); ``length`` must not be negative.

    Parameters
    ----------
    key
        The store key the range is for, named in the error.
    byte_range
        ``(start, length)`` (numpy integers allowed) or None.

    Returns
    -------
    tuple of (int, int or None)

    Raises
    ------
    InvalidKeyError
        If the range is malformed; the message names the key and the range.

    Examples
    --------
    >>> normalize_byte_range("k", None), normalize_byte_range("k", (-16, None))
    ((0, None), (-16, None))
    >>> normalize_byte_range("k", (-16, 4))
    Traceback (most recent call last):
    ...
    zarr3c.errors.InvalidKeyError: invalid byte range (-16, 4) for store key 'k': a negative start (suffix request) needs length None
    """  # noqa: E501
    if byte_range is None:
        return (0, None)
    try:
        start, length = byte_range
    except (TypeError, ValueError):
        raise InvalidKeyError(
            f"invalid byte range {byte_range!r} for store key {key!r}: "
            "expected a (start, length) pair"
        ) from None
    start = as_int(start)
    if start is None:
        raise InvalidKeyError(
            f"invalid byte range {byte_range!r} for store key {key!r}: start must be an integer"
        )
    if length is not None:
        length = as_int(length)
        if length is None:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "length must be an integer or None"
            )
    if length is not None:
        if length < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "length must not be negative"
            )
        if start < 0:
            raise InvalidKeyError(
                f"invalid byte range {byte_range!r} for store key {key!r}: "
                "a negative start (suffix request) needs length None"
            )
    return (start, length)


def resolve_byte_range(start: int, length: int | None, size: int) -> tuple[int, int]:
    """``[lo, hi)`` byte offsets of a normalized range in a value of ``size`` bytes.

    Clipped to the value, so ``value[lo:hi]`` is exactly what the range denotes.

    Parameters
    ----------
    start, length
        A range as :func:`normalize_byte_range` returns it.
    size
        The value's size in bytes.

    Returns
    -------
    tuple of (int, int)
        ``(lo, hi)`` with ``0 <= lo <= hi <= size``.

    Examples
    --------
    >>> resolve_byte_range(10, 5, 12), resolve_byte_range(-16, None, 12)
    ((10, 12), (0, 12))
    """
    if start < 0:
        return (max(size + start, 0), size)
    lo = min(start, size)
    hi = size if length is None else min(start + length, size)
    return (lo, hi)


#: The requests for one key in a ``get_partial_values`` batch (:func:`group_byte_ranges`):
#: ``(checked, positions, ranges)`` (see the module docstring).
RangeGroup: TypeAlias = tuple[_T, list[int], list[tuple[int, int | None]]]


def group_byte_ranges(
    key_ranges: Iterable[tuple[str, ByteRange | None]],
    check: Callable[[str], _T],
) -> tuple[dict[str, RangeGroup[_T]], int]:
    """Group a ``get_partial_values`` batch by key, so each value is opened once.

    Parameters
    ----------
    key_ranges
        ``(key, range)`` requests; a key may appear several times.
    check
        Called once per distinct key before any read (e.g. :func:`~zarr3c.stores.keys.
        validate_key`, or a store's key-to-path function); raises on a bad key.

    Returns
    -------
    groups : dict of str to RangeGroup
        One ``(checked, positions, ranges)`` group per key, in order of first appearance.
    n : int
        The number of requests, for :func:`scatter_byte_ranges`.

    Raises
    ------
    InvalidKeyError
        If a range is malformed, or as ``check`` raises.

    Examples
    --------
    >>> groups, n = group_byte_ranges([("a", (0, 2)), ("b", None), ("a", (-1, None))], str)
    >>> groups["a"], n
    (('a', [0, 2], [(0, 2), (-1, None)]), 3)
    """
    groups: dict[str, RangeGroup[_T]] = {}
    n = 0
    for key, rng in key_ranges:
        # type(...) is str: an unhashable non-key must reach check() and its error
        group = groups.get(key) if type(key) is str else None
        if group is None:
            checked = check(key)
            group = groups.setdefault(key, (checked, [], []))
        group[1].append(n)  # (positions)
        group[2].append(normalize_byte_range(key, rng))  # (ranges)
        n += 1
    return groups, n


def scatter_byte_ranges(
    groups: dict[str, RangeGroup[Any]],
    results: Iterable[Sequence[BytesLike | None] | None],
    n: int,
) -> list[BytesLike | None]:
    """The results of grouped requests in request order.

    Parameters
    ----------
    groups, n
        As :func:`group_byte_ranges` returned them.
    results
        Per group, in order, one value per range of the group, or None when the key is
        missing.

    Returns
    -------
    list
        ``n`` values (None for the requests of missing keys).

    Examples
    --------
    >>> groups, n = group_byte_ranges([("a", (0, 1)), ("b", None), ("a", (1, 1))], str)
    >>> scatter_byte_ranges(groups, [[b"x", b"y"], None], n)
    [b'x', None, b'y']
    """
    out: list[BytesLike | None] = [None] * n
    for (_checked, positions, _ranges), values in zip(groups.values(), results, strict=True):
        if values is not None:
            for i, value in zip(positions, values, strict=True):
                out[i] = value
    return out


#: Bounded ranges of one value at most this many bytes apart are read with one request, by
#: default (obstore's own default for ``get_ranges``: on an object store such a gap costs
#: less than another round trip).
DEFAULT_COALESCE = 1024 * 1024


class Want(NamedTuple):
    """One requested range of a value, as :func:`normalize_byte_range` gives it."""

    key: str
    start: int
    length: int | None


class Cut(NamedTuple):
    """Where a :class:`Want`'s bytes lie: ``answer[lo:hi]`` of request number ``request``
    (the whole answer where ``hi`` is None)."""

    request: int
    lo: int
    hi: int | None


def coalesce_byte_ranges(wants: Sequence[Want], max_gap: int
                         ) -> tuple[list[Want], list[Cut]]:
    """The requests that answer a batch of ranges, merging close ranges of one value.

    Bounded ranges (``start >= 0``, ``length > 0``) of one key whose gap is at most
    ``max_gap`` bytes (overlapping ones too) become one request spanning them; every other
    range (a whole value, a suffix, a zero length, to the end) is requested as it is.  Equal
    wants share one request.

    Parameters
    ----------
    wants
        The batch, normalized.
    max_gap
        The largest gap, in bytes, read and thrown away to save a request.

    Returns
    -------
    requests : list of Want
        The distinct requests to send, each key's merged spans in offset order.
    cuts : list of Cut
        One per want, in the batch's order.

    Examples
    --------
    >>> requests, cuts = coalesce_byte_ranges(
    ...     [Want("a", 10, 2), Want("b", -4, None), Want("a", 0, 4)], max_gap=8)
    >>> requests
    [Want(key='b', start=-4, length=None), Want(key='a', start=0, length=12)]
    >>> cuts
    [Cut(request=1, lo=10, hi=12), Cut(request=0, lo=0, hi=None), Cut(request=1, lo=0, hi=4)]
    """
    requests: list[Want] = []
    placed: dict[Want, Cut] = {}
    spans: dict[str, list[Want]] = {}
    for want in dict.fromkeys(wants):
        if want.length and want.start >= 0:
            spans.setdefault(want.key, []).append(want)
        else:
            placed[want] = Cut(len(requests), 0, None)
            requests.append(want)
    for key, bounded in spans.items():
        bounded.sort(key=lambda w: w.start)
        members: list[Want] = []
        lo = hi = 0
        for nxt in [*bounded, None]:  # None closes the last span
            if nxt is not None and members and nxt.start - hi <= max_gap:
                hi = max(hi, nxt.start + (nxt.length or 0))
                members.append(nxt)
                continue
            if members:
                for m in members:
                    placed[m] = Cut(len(requests), m.start - lo, m.start - lo + (m.length or 0))
                requests.append(Want(key, lo, hi - lo))
            if nxt is not None:
                lo, hi, members = nxt.start, nxt.start + (nxt.length or 0), [nxt]
    return requests, [placed[w] for w in wants]


def cut_answers(answers: Sequence[Any], cuts: Sequence[Cut]) -> list[Any]:
    """Each want's bytes from the answers to :func:`coalesce_byte_ranges`'s requests.

    Parameters
    ----------
    answers
        One per request, in order: the bytes read (a slicable buffer), or None for a missing
        key.
    cuts
        As :func:`coalesce_byte_ranges` returned them.

    Returns
    -------
    list
        One per want: its slice of its request's answer (what exists of it, as slicing
        does), or None where the key is missing.

    Examples
    --------
    >>> cut_answers([b"0123456789", None], [Cut(0, 2, 4), Cut(1, 0, None), Cut(0, 8, 12)])
    [b'23', None, b'89']
    """
    out: list[Any] = []
    for request, lo, hi in cuts:
        answer = answers[request]
        out.append(answer if answer is None or hi is None else answer[lo:hi])
    return out


def apply_patches(buf: bytearray, patches: Sequence[tuple[int, memoryview]]) -> None:
    """Write each ``(start, data)`` into ``buf``, extending it (zero-filled) as needed.

    The read-modify-write of ``set_partial_values`` in stores without partial writes.

    Parameters
    ----------
    buf
        The value being patched, in place.
    patches
        ``(start, data)`` pairs, applied in order.

    Examples
    --------
    >>> buf = bytearray(b"abc")
    >>> apply_patches(buf, [(1, memoryview(b"X")), (5, memoryview(b"Z"))])
    >>> bytes(buf)
    b'aXc\\x00\\x00Z'
    """
    for start, data in patches:
        end = start + data.nbytes
        if end > len(buf):
            buf.extend(bytes(end - len(buf)))
        buf[start:end] = data
