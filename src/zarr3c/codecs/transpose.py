"""The ``transpose`` codec: an array -> array permutation of the chunk's dimensions.

Zarr v3 ``transpose`` codec: the encoded array is ``decoded.transpose(order)`` laid out in C
order, so ``order = [ndim-1, ..., 0]`` stores chunks in Fortran order (the 2022 draft core
spec's ``chunk_memory_layout: "F"``,
https://zarr-specs.readthedocs.io/en/latest/v3/core/v3.0.html).  Configuration::

    {"name": "transpose", "configuration": {"order": [2, 0, 1]}}

``order`` must be a permutation of ``range(ndim)``.  The strings ``"C"`` and ``"F"`` (identity
and reversal), written by zarr-python 2's v3 support and early v3 writers, are read and written
back unchanged.  Both directions are one pass of the strided copy kernel with permuted strides
(:func:`zarr3c._kernels.layout.transpose_into`).  No partial decoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c._buffers import holds_references
from zarr3c._kernels.layout import transpose_into
from zarr3c.codecs.base import ArrayArrayCodec, ChunkSpec, as_byte_array, check_config_keys
from zarr3c.errors import MetadataError

__all__ = ["TransposeCodec", "parse_order"]


def parse_order(order: Any, *, path: str) -> tuple[int, ...] | str:
    """Validate a transpose ``order``: ``"C"``, ``"F"`` or a permutation of range(len(order)).

    Raises
    ------
    MetadataError
        Naming ``{path}.configuration.order``.
    """
    field = f"{path}.configuration.order"
    if isinstance(order, str):
        if order in ("C", "F"):
            return order
        raise MetadataError(f"must be a list of integers, 'C' or 'F', got {order!r}", path=field)
    if not isinstance(order, list | tuple):
        raise MetadataError(f"must be a list of integers, got {order!r}", path=field)
    for i, axis in enumerate(order):
        # bool is an int subclass, and JSON true/false must not pass as axes 1/0
        if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
            raise MetadataError(f"entry {i} must be an integer, got {axis!r}", path=field)
    parsed = tuple(int(a) for a in order)
    if len(set(parsed)) != len(parsed):
        raise MetadataError(f"has duplicate axes: {list(parsed)}", path=field)
    if sorted(parsed) != list(range(len(parsed))):
        raise MetadataError(
            f"must be a permutation of 0..{len(parsed) - 1}, got {list(parsed)}", path=field
        )
    return parsed


@dataclass(frozen=True)
class TransposeCodec(ArrayArrayCodec):
    """Permute the dimensions of a chunk.

    Parameters
    ----------
    order
        A permutation of ``range(ndim)``, or the legacy ``"C"`` / ``"F"``.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for an ``order`` that is not a permutation, and from
        :meth:`validate` for one of the wrong length for the chunk.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec, TransposeCodec
    >>> codec = TransposeCodec.from_config({"order": [1, 0]}, path="codecs[0]")
    >>> spec = ChunkSpec((2, 3), np.dtype("uint8"), np.zeros((), "uint8"))
    >>> chunk = np.arange(6, dtype="uint8").reshape(2, 3)
    >>> np.array_equal(codec.decode(codec.encode(chunk, spec), spec), chunk)
    True
    >>> codec.to_dict()
    {'name': 'transpose', 'configuration': {'order': [1, 0]}}
    """

    name: ClassVar[str] = "transpose"

    order: tuple[int, ...] | str

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> TransposeCodec:
        config = check_config_keys(configuration, path=path, required=("order",))
        return cls(order=parse_order(config["order"], path=path))

    def to_dict(self) -> dict[str, Any]:
        order: Any = self.order if isinstance(self.order, str) else list(self.order)
        return {"name": self.name, "configuration": {"order": order}}

    def permutation(self, ndim: int) -> tuple[int, ...]:
        """The axis permutation for a chunk of ``ndim`` dimensions.

        Parameters
        ----------
        ndim : int
            The chunk's number of dimensions.

        Returns
        -------
        tuple of int
            The order as a permutation (``"C"`` and ``"F"`` resolved for ``ndim``).

        Raises
        ------
        None
            A permutation's length is checked by :meth:`validate`.

        Examples
        --------
        >>> from zarr3c.codecs import TransposeCodec
        >>> TransposeCodec(order="F").permutation(3)
        (2, 1, 0)
        """
        if self.order == "C":
            return tuple(range(ndim))
        if self.order == "F":
            return tuple(range(ndim - 1, -1, -1))
        assert isinstance(self.order, tuple)
        return self.order

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        if not isinstance(self.order, str) and len(self.order) != spec.ndim:
            raise MetadataError(
                f"has {len(self.order)} entries but the chunk has {spec.ndim} dimensions",
                path=f"{path}.configuration.order",
            )

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        perm = self.permutation(spec.ndim)
        return ChunkSpec(
            shape=tuple(spec.shape[p] for p in perm), dtype=spec.dtype, fill_value=spec.fill_value
        )

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return _transpose(chunk, self.permutation(chunk.ndim))

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        perm = self.permutation(chunk.ndim)
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        return _transpose(chunk, tuple(inverse))


def _transpose(chunk: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    """``ascontiguousarray(chunk.transpose(perm))`` through the copy kernel."""
    if perm == tuple(range(len(perm))):
        return chunk
    if chunk.ndim != len(perm):
        raise ValueError(f"transpose order {list(perm)} does not match a {chunk.ndim}-d chunk")
    if holds_references(chunk.dtype):  # (numpy copies references; the kernel bytes)
        return np.ascontiguousarray(chunk.transpose(perm))
    out_shape = tuple(chunk.shape[p] for p in perm)
    out = np.empty(out_shape, dtype=chunk.dtype)
    if out.size == 0 or chunk.dtype.itemsize == 0:
        return out
    transpose_into(
        as_byte_array(chunk),
        np.asarray(chunk.shape, dtype=np.int64),
        np.asarray(perm, dtype=np.int64),
        chunk.dtype.itemsize,
        out.reshape(-1).view(np.uint8),
    )
    return out
