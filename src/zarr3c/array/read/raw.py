"""Raw byte-range I/O of chunks stored as raw elements (an uncompressed ``bytes`` chain in
native byte order): their bytes are the decoded chunk's, so a read fetches only the byte
ranges it needs, straight into staging memory or the output, and never decodes.

A stored chunk of the wrong size must still be an error naming its key, as a decode would
be: every ranged request also reads the chunk's last byte and the one after (the *size
probe*), which tells a chunk cut short or too long even where the ranges lie within it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from zarr3c._buffers import empty_aligned
from zarr3c.array.read.plan import RAW_BATCH_BYTES, RawRequest, RawSpan, new_plan
from zarr3c.codecs.sharding import pack_runs
from zarr3c.errors import ChunkDecodeError

if TYPE_CHECKING:
    from zarr3c.array.core import Array

__all__ = ["fetch_raw", "raw_size_error", "read_raw_spans", "read_raw_whole"]


def read_raw_whole(array: Array, coords: tuple[int, ...], dst: np.ndarray, at: int,
                   nbytes: int) -> bool:
    """Read the chunk at ``coords``, stored as raw elements (``nbytes`` bytes), straight into
    ``dst[at:at + nbytes]``; a stored chunk of another size is an error naming its key.
    False if it is not stored."""
    key = array.chunk_key(coords)
    size = array._store.read_value_into(key, dst[at:at + nbytes])
    if size is None:
        return False
    if size != nbytes:
        raise raw_size_error(array, key, coords, nbytes)
    return True


def fetch_raw(array: Array, requests: Sequence[RawRequest], buf: np.ndarray) -> list[bool]:
    """Byte ranges of chunks stored as raw elements, straight into ``buf``, in one store
    call: per request its ranges and, at ``buf[probe_at:probe_at + 2]``, the chunk's size
    probe.  Returns per request whether the chunk is stored.

    Raises
    ------
    ChunkDecodeError
        Naming the chunk's key: a stored chunk is not its ``nbytes``.
    """
    keyed = [(array.chunk_key(coords), [*ranges, (n - 1, n + 1, at)])
             for coords, ranges, at, n in requests]
    found: list[bool] = []
    got = array._store.read_ranges_into(keyed, buf) if keyed else []
    for (key, ranges), request, g in zip(keyed, requests, got, strict=True):
        if g is not None and g != sum(stop - start for start, stop, _ in ranges) - 1:
            raise raw_size_error(array, key, request.coords, request.nbytes)
        found.append(g is not None)
    return found


def raw_size_error(array: Array, key: str, coords: tuple[int, ...], nbytes: int
                   ) -> ChunkDecodeError:
    """The error of a raw chunk at ``key`` (grid ``coords``) not of its ``nbytes``."""
    return ChunkDecodeError(
        f"bytes codec: the stored chunk is not the {nbytes} bytes of a chunk of shape "
        f"{list(array._chunk_shape_at(coords))} and data type {array.dtype}", key=key)


def read_raw_spans(array: Array, spans: Sequence[RawSpan],
                   place: Callable[[int, np.ndarray | None], None]) -> None:
    """Fetch bytes ``[lo, hi)`` of each span's chunk and call ``place(n, bytes)`` for
    ``spans[n]`` (None: the chunk is not stored), batches of about
    :data:`~zarr3c.array.read.plan.RAW_BATCH_BYTES` at a time (see :func:`fetch_raw`).  The
    copies are small: inline."""
    for first, last in pack_runs([span.hi - span.lo + 2 for span in spans], RAW_BATCH_BYTES):
        requests = []
        ats = []  # where each span's bytes land
        at = 0
        for span in spans[first:last]:
            requests.append(new_plan(RawRequest, (span.coords, [(span.lo, span.hi, at)],
                                                  at + span.hi - span.lo, span.nbytes)))
            ats.append(at)
            at += span.hi - span.lo + 2
        buf = empty_aligned(at)
        for n, (request, at, stored) in enumerate(
                zip(requests, ats, fetch_raw(array, requests, buf), strict=True), first):
            place(n, buf[at:request.probe_at] if stored else None)
