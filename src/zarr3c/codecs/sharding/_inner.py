"""One inner chunk: decoding its stored bytes, with errors naming it and the shard's key, and
filling the elements of a missing one with the fill value."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeAlias

import numpy as np

from zarr3c.codecs.pipeline import CodecPipeline
from zarr3c.errors import ChecksumError, ChunkDecodeError

#: The position of an inner chunk in the shard's inner chunk grid.
Coords: TypeAlias = tuple[int, ...]


def decode_inner_bytes(
    inner: CodecPipeline, raw: np.ndarray, chunk_shape: tuple[int, ...], coords: Coords
) -> np.ndarray:
    """Decode one inner chunk's stored bytes ``raw`` with the inner chain; errors name the
    inner chunk at ``coords`` (ChecksumError stays one)."""
    try:
        return inner.decode(raw, chunk_shape)
    except ChunkDecodeError as exc:
        cls = ChecksumError if isinstance(exc, ChecksumError) else ChunkDecodeError
        raise cls(f"sharding_indexed: inner chunk {coords}: {exc}") from exc


def fill(out: np.ndarray, fill_value: np.ndarray) -> None:
    """Set every element of ``out`` (any view) to the fill value's exact bits."""
    if out.size == 0:
        return
    if out.dtype.kind == "V" or out.dtype.itemsize == 0:
        out[...] = fill_value
    else:
        # Same-dtype assignment copies bits (NaN payloads, -0.0 included).
        np.copyto(out, fill_value, casting="equiv")


@contextmanager
def naming(key: str | None) -> Iterator[None]:
    """Re-raise a ChunkDecodeError without key as one naming ``key`` (the shard)."""
    try:
        yield
    except ChunkDecodeError as exc:
        raise renamed(exc, key)  # noqa: B904 - its cause is set


def renamed(exc: ChunkDecodeError, key: str | None) -> ChunkDecodeError:
    """``exc``, or the same error naming ``key`` (the shard) when it names no key (what
    :func:`naming` does, without a context manager on the per-read path)."""
    if key is None or exc.key is not None:
        return exc
    new = type(exc)(str(exc), key=key)
    new.__cause__ = exc
    return new
