"""Placing: the kernel calls that move planned pieces (:mod:`.plan`) from fetched or decoded
bytes into a read's output, or fill them with the fill value where nothing is stored."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarr3c._kernels.scatter import copy_pieces, fill_pieces
from zarr3c.array.read.plan import InnerParts, Pieces

__all__ = ["copy_chunk_pieces", "copy_parts", "copy_pieces_from", "fill_chunk_pieces",
           "fill_parts"]


def fill_parts(parts: InnerParts, dst: np.ndarray, fill: np.ndarray, which: Any) -> None:
    """Fill the parts ``which`` selects (a mask or a slice) with the element ``fill``."""
    fill_pieces(dst, parts.dst_offsets[which], parts.dst_strides[which], parts.counts[which],
                fill)


def copy_parts(parts: InnerParts, src: np.ndarray, src_offsets: np.ndarray,
               src_strides: np.ndarray, dst: np.ndarray, itemsize: int,
               which: Any = None) -> None:
    """Copy the parts ``which`` selects (a mask or a slice; None: all, as they are, the
    common case kept free of indexing) from ``src``, the first element of part ``i`` at
    ``src_offsets[i]``."""
    if which is None:
        copy_pieces(src, src_offsets, src_strides, dst, parts.dst_offsets, parts.dst_strides,
                    parts.counts, itemsize)
    else:
        copy_pieces(src, src_offsets[which], src_strides, dst, parts.dst_offsets[which],
                    parts.dst_strides[which], parts.counts[which], itemsize)


def copy_pieces_from(pieces: Pieces, src: np.ndarray, src_offsets: np.ndarray,
                     src_strides: np.ndarray, lo: int, hi: int, missing: np.ndarray | None,
                     fill: np.ndarray, itemsize: int, skip: np.ndarray | None = None) -> None:
    """Copy pieces ``lo:hi`` out of ``src`` (at ``src_offsets``, one per piece), but fill
    those flagged ``missing`` with the element ``fill`` and leave those flagged ``skip``."""
    dst_offsets = pieces.dst_offsets[lo:hi]
    dst_strides = pieces.dst_strides[lo:hi]
    counts = pieces.counts[lo:hi]
    if skip is not None and skip.any():
        keep = ~skip
        src_offsets, dst_offsets = src_offsets[keep], dst_offsets[keep]
        dst_strides, counts = dst_strides[keep], counts[keep]
        if missing is not None:
            missing = missing[keep]
    if missing is not None and missing.any():
        fill_pieces(pieces.dst, dst_offsets[missing], dst_strides[missing], counts[missing],
                    fill)
        keep = ~missing
        src_offsets, dst_offsets = src_offsets[keep], dst_offsets[keep]
        dst_strides, counts = dst_strides[keep], counts[keep]
    copy_pieces(src, src_offsets, src_strides, pieces.dst, dst_offsets, dst_strides, counts,
                itemsize)


def copy_chunk_pieces(pieces: Pieces, n: int, chunk: np.ndarray, strides: np.ndarray,
                      itemsize: int) -> None:
    """Copy chunk ``n``'s pieces out of the decoded ``chunk`` (C order, byte ``strides``)."""
    lo, hi = pieces.bounds[n], pieces.bounds[n + 1]
    copy_pieces(chunk.reshape(-1).view(np.uint8), pieces.src_offsets[lo:hi], strides,
                pieces.dst, pieces.dst_offsets[lo:hi], pieces.dst_strides[lo:hi],
                pieces.counts[lo:hi], itemsize)


def fill_chunk_pieces(pieces: Pieces, n: int, fill: np.ndarray) -> None:
    """Fill chunk ``n``'s pieces with the element ``fill`` (the chunk is not stored)."""
    lo, hi = pieces.bounds[n], pieces.bounds[n + 1]
    fill_pieces(pieces.dst, pieces.dst_offsets[lo:hi], pieces.dst_strides[lo:hi],
                pieces.counts[lo:hi], fill)
