"""The chunk sizes of a bare-integer dimension of a rectilinear grid as a lazy sequence.

``Array.chunks`` of a rectilinear grid lists, per dimension, every chunk's edge length
clipped to the array (dask's form).  A bare-integer dimension repeats one step until it
covers the array, so its list can be as long as the array: ``2**40`` chunks would take
8 TiB as a tuple.  Past :data:`LAZY_SIZES_MIN` chunks it is a :class:`RepeatedSizes`
instead, a read-only sequence computing each entry (every entry the step, the last one
clipped), which compares equal to the tuple it stands for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

__all__ = ["LAZY_SIZES_MIN", "RepeatedSizes", "repeated_sizes"]

#: From this many chunks on, a bare dimension's sizes are a :class:`RepeatedSizes` (below
#: it, a tuple: as long as the array's metadata of an explicit dimension at most).
LAZY_SIZES_MIN = 1 << 20


class RepeatedSizes(Sequence[int]):
    """``nchunks`` chunk sizes: each ``size``, the last ``last`` (the one clipped to the
    array's end), computed when asked for.

    Parameters
    ----------
    size : int
        Every chunk's size but the last.
    nchunks : int
        How many chunks (>= 1).
    last : int
        The last chunk's size.

    Raises
    ------
    None
        The arguments are taken as given (:func:`repeated_sizes` builds them).

    Examples
    --------
    >>> sizes = RepeatedSizes(4, 3, 2)
    >>> len(sizes), sizes[0], sizes[-1], list(sizes), sizes == (4, 4, 2)
    (3, 4, 2, [4, 4, 2], True)
    >>> RepeatedSizes(4, 2**40, 1)[2**40 - 2:]
    (4, 1)
    """

    __slots__ = ("last", "nchunks", "size")
    __hash__ = None  # type: ignore[assignment]  # (equal to tuples: unhashable, as a list)

    def __init__(self, size: int, nchunks: int, last: int) -> None:
        self.size, self.nchunks, self.last = size, nchunks, last

    def __len__(self) -> int:
        return self.nchunks

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            picked = range(self.nchunks)[index]
            if len(picked) >= LAZY_SIZES_MIN and picked.step == 1:
                ends = picked[-1] == self.nchunks - 1
                return RepeatedSizes(self.size, len(picked), self.last if ends else self.size)
            return tuple(self[i] for i in picked)
        i = range(self.nchunks)[index]  # (IndexError, TypeError as a tuple raises them)
        return self.last if i == self.nchunks - 1 else self.size

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.nchunks - 1):
            yield self.size
        yield self.last

    def __contains__(self, value: object) -> bool:
        return value == self.last or (self.nchunks > 1 and value == self.size)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RepeatedSizes):
            return (other.nchunks, other.last) == (self.nchunks, self.last) and (
                self.nchunks == 1 or other.size == self.size)
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self.nchunks and all(a == b for a, b in zip(self, other,
                                                                          strict=True))

    def __repr__(self) -> str:
        return f"RepeatedSizes(size={self.size}, nchunks={self.nchunks}, last={self.last})"


def repeated_sizes(size: int, nchunks: int, last: int) -> Sequence[int]:
    """``nchunks`` chunk sizes, each ``size`` but the ``last``: a tuple, or a
    :class:`RepeatedSizes` from :data:`LAZY_SIZES_MIN` chunks on.

    Parameters
    ----------
    size, nchunks, last : int
        As :class:`RepeatedSizes` takes them (``nchunks >= 1``).

    Returns
    -------
    tuple of int or RepeatedSizes

    Raises
    ------
    None
        Any sizes are taken.

    Examples
    --------
    >>> repeated_sizes(4, 3, 2)
    (4, 4, 2)
    >>> repeated_sizes(4, 2**40, 1)
    RepeatedSizes(size=4, nchunks=1099511627776, last=1)
    """
    if nchunks >= LAZY_SIZES_MIN:
        return RepeatedSizes(size, nchunks, last)
    return (size,) * (nchunks - 1) + (last,)
