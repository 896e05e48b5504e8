"""The ``reshape`` codec: an array -> array change of a chunk's shape that keeps C order.

Follows the zarr-extensions ``reshape`` codec
(https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape).
Configuration::

    {"name": "reshape", "configuration": {"shape": [[0, 1], [2], 3]}}

Each entry of ``shape`` gives the size of one output dimension, worked out per chunk from
the shape ``A`` of the decoded chunk:

- a positive integer: that size;
- a list of input dimensions ``input_dims``: ``prod(A[input_dims])`` (an empty list is size 1);
- ``-1``, at most once: whatever keeps the element count, ``prod(A) / prod(the others)``.

So ``[[0, 1], [2], 3]`` turns a ``[100, 50, 64, 3]`` chunk into ``[5000, 64, 3]``, and the
list form follows chunks of any shape (rectilinear grids, edge chunks).

The elements keep their C order: ``ravel(encoded) == ravel(decoded)``.  Encode and decode
are numpy reshapes, i.e. views of a C-contiguous input (no copy); next to ``transpose``, the
only copy is the transpose kernel's.  No codec-level partial decoding: a selection inside a
chunk decodes the chunk (a view through this codec) and indexes it.

Errors (all :class:`~zarr3c.errors.MetadataError` naming ``codecs[i].configuration.shape[j]``):
the form of each entry (not an int / list of ints, bools, sizes 0 or below -1, a second -1)
and the order of input dimensions (strictly increasing over the whole configuration, since
reshape never transposes) are checked by :meth:`ReshapeCodec.from_config`; input dimensions out
of range, the element count and the two position constraints of each non-empty ``input_dims``
depend on the chunk shape and are checked by :meth:`ReshapeCodec.validate`, which the array
calls for every distinct chunk shape of its grid when it is opened or created.

A note on the extension's text
(https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape): the first
position constraint is printed ``prod(B[:i]) == prod(A[input_dims[0]])``; its own example
only satisfies ``prod(B[:i]) == prod(A[:input_dims[0]])`` (the input
dimensions before the first listed one, mirroring the second constraint), which is checked.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs.base import ArrayArrayCodec, ChunkSpec, check_config_keys
from zarr3c.errors import MetadataError

__all__ = ["ReshapeCodec", "ShapeEntry", "parse_shape", "reshape_output_shape"]

#: one entry of ``shape``: an explicit size (>= 1), -1, or a tuple of input dimensions
ShapeEntry = int | tuple[int, ...]

_FORMS = "a positive integer, -1 or a list of input dimensions"


def _is_int(value: Any) -> bool:
    # bool is an int subclass, and JSON true/false must not pass as 1/0
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _prod(values: Sequence[int]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def parse_shape(shape: Any, *, path: str) -> tuple[ShapeEntry, ...]:
    """Validate the form of a reshape ``shape`` (everything that does not need a chunk shape).

    Parameters
    ----------
    shape
        The ``shape`` configuration value.
    path
        JSON path of the codec object (``codecs[0]``).

    Returns
    -------
    tuple
        The entries: ints (-1 or >= 1) and tuples of input dimensions.

    Raises
    ------
    MetadataError
        Naming ``{path}.configuration.shape[i]`` (or ``...shape[i][j]`` for one input
        dimension): an entry of the wrong type, a bool, a size 0 or below -1, a second -1,
        a negative input dimension, or input dimensions not strictly increasing over the
        whole configuration.
    """
    field = f"{path}.configuration.shape"
    if not isinstance(shape, list | tuple):
        raise MetadataError(
            f"must be a list of output dimensions ({_FORMS} each), got {shape!r}", path=field
        )
    entries: list[ShapeEntry] = []
    inferred_at: int | None = None
    last_dim: int | None = None  # the last input dimension seen, and where
    last_at = -1
    for i, entry in enumerate(shape):
        efield = f"{field}[{i}]"
        if _is_int(entry):
            size = int(entry)
            if size == -1:
                if inferred_at is not None:
                    raise MetadataError(
                        f"a second -1 (the first is shape[{inferred_at}]); -1 may occur at "
                        "most once",
                        path=efield,
                    )
                inferred_at = i
            elif size < 1:
                raise MetadataError(f"must be {_FORMS}, got {size}", path=efield)
            entries.append(size)
        elif isinstance(entry, list | tuple):
            dims: list[int] = []
            for j, dim in enumerate(entry):
                if not _is_int(dim) or int(dim) < 0:
                    raise MetadataError(
                        f"an input dimension must be a non-negative integer, got {dim!r}",
                        path=f"{efield}[{j}]",
                    )
                dim = int(dim)
                if last_dim is not None and dim <= last_dim:
                    where = "in this entry" if last_at == i else f"in shape[{last_at}]"
                    raise MetadataError(
                        f"input dimension {dim} follows input dimension {last_dim} ({where}): "
                        "input dimensions must be strictly increasing over the whole "
                        "configuration, since reshape never reorders elements (use a "
                        "transpose codec before it to reorder)",
                        path=efield,
                    )
                last_dim, last_at = dim, i
                dims.append(dim)
            entries.append(tuple(dims))
        else:
            raise MetadataError(f"must be {_FORMS}, got {entry!r}", path=efield)
    return tuple(entries)


@functools.lru_cache(maxsize=1024)
def reshape_output_shape(
    entries: tuple[ShapeEntry, ...], chunk_shape: tuple[int, ...], *, path: str = "reshape"
) -> tuple[int, ...]:
    """The output shape of a reshape for a decoded chunk of ``chunk_shape``.

    Parameters
    ----------
    entries
        Parsed ``shape`` entries (:func:`parse_shape`).
    chunk_shape
        The decoded (input) chunk shape ``A``.
    path
        JSON path of the codec object, named by errors.

    Raises
    ------
    MetadataError
        Naming ``{path}.configuration.shape[i]`` and the chunk shape: an input dimension out of
        range, a -1 that cannot be inferred, an ``input_dims`` entry whose position breaks the
        extension's constraints; or ``{path}.configuration.shape`` when the element count differs.
    """
    field = f"{path}.configuration.shape"
    ndim = len(chunk_shape)
    chunk = f"chunk shape {list(chunk_shape)}"
    sizes: list[int] = []
    inferred_at: int | None = None
    for i, entry in enumerate(entries):
        if isinstance(entry, tuple):
            for j, dim in enumerate(entry):
                if dim >= ndim:
                    raise MetadataError(
                        f"input dimension {dim} is out of range for {chunk} ({ndim} dimensions)",
                        path=f"{field}[{i}][{j}]",
                    )
            sizes.append(_prod([chunk_shape[d] for d in entry]))
        elif entry == -1:
            inferred_at = i
            sizes.append(1)  # placeholder, so the product below is the other entries'
        else:
            sizes.append(entry)
    total = _prod(chunk_shape)
    if inferred_at is not None:
        known = _prod(sizes)
        if known == 0 or total % known:
            why = (
                "the other output dimensions hold no elements, so any size would do"
                if known == 0
                else f"the other output dimensions hold {known} elements, which does not "
                f"divide the {total} elements of the chunk"
            )
            raise MetadataError(
                f"-1 cannot be inferred for {chunk}: {why}", path=f"{field}[{inferred_at}]"
            )
        sizes[inferred_at] = total // known
    out = tuple(sizes)
    # The position constraints: the output dimensions around an input_dims entry must hold as
    # many elements as the input dimensions around those it lists, so that its coordinate is
    # the raveled index over those input dimensions.
    for i, entry in enumerate(entries):
        if not isinstance(entry, tuple) or not entry:
            continue
        before_out, before_in = _prod(out[:i]), _prod(chunk_shape[: entry[0]])
        after_out, after_in = _prod(out[i + 1 :]), _prod(chunk_shape[entry[-1] + 1 :])
        if before_out != before_in or after_out != after_in:
            side, n_out, n_in, dims = (
                ("before", before_out, before_in, f"before {entry[0]}")
                if before_out != before_in
                else ("after", after_out, after_in, f"after {entry[-1]}")
            )
            raise MetadataError(
                f"input dimensions {list(entry)} do not line up with output dimension {i} for "
                f"{chunk} (output shape {list(out)}): the output dimensions {side} it hold "
                f"{n_out} elements, the input dimensions {dims} hold {n_in}"
                + ("" if _prod(out) == total else f"; also, {_count_mismatch(out, chunk, total)}"),
                path=f"{field}[{i}]",
            )
    if _prod(out) != total:
        raise MetadataError(_count_mismatch(out, chunk, total), path=field)
    return out


def _count_mismatch(out: tuple[int, ...], chunk: str, total: int) -> str:
    return f"output shape {list(out)} holds {_prod(out)} elements, but {chunk} holds {total}"


@dataclass(frozen=True)
class ReshapeCodec(ArrayArrayCodec):
    """Change the shape of a chunk without reordering its elements (a view, never a copy, of a
    C-contiguous chunk).

    Parameters
    ----------
    shape
        The output dimensions: positive sizes, at most one -1, and tuples of input dimensions
        (strictly increasing over the whole configuration).  Checked on construction.

    Raises
    ------
    zarr3c.errors.MetadataError
        For a ``shape`` of the wrong form (on construction), or one that does not fit a
        chunk (:meth:`validate`, :meth:`output_shape`).

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec, ReshapeCodec
    >>> codec = ReshapeCodec.from_config({"shape": [[0, 1], [2]]}, path="codecs[0]")
    >>> spec = ChunkSpec((2, 3, 4), np.dtype("uint8"), np.zeros((), "uint8"))
    >>> codec.resolve(spec).shape
    (6, 4)
    >>> codec.encode(np.zeros((2, 3, 4), "uint8"), spec).shape
    (6, 4)
    """

    name: ClassVar[str] = "reshape"

    shape: tuple[ShapeEntry, ...]

    def __post_init__(self) -> None:
        # Normalises lists and numpy integers (and checks codecs built directly, not from JSON).
        object.__setattr__(self, "shape", parse_shape(self.shape, path=self.name))

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *, path: str) -> ReshapeCodec:
        config = check_config_keys(configuration, path=path, required=("shape",))
        return cls(shape=parse_shape(config["shape"], path=path))

    def to_dict(self) -> dict[str, Any]:
        shape = [list(e) if isinstance(e, tuple) else e for e in self.shape]
        return {"name": self.name, "configuration": {"shape": shape}}

    def output_shape(
        self, chunk_shape: Sequence[int], *, path: str | None = None
    ) -> tuple[int, ...]:
        """The encoded shape for a decoded chunk of ``chunk_shape``.

        Parameters
        ----------
        chunk_shape : sequence of int
            The decoded chunk's shape.
        path : str, optional
            The JSON path of the codec object, for error messages (default: its name).

        Returns
        -------
        tuple of int
            The shape the codec encodes such a chunk to.

        Raises
        ------
        zarr3c.errors.MetadataError
            If the configured shape does not fit ``chunk_shape`` (e.g. another size).

        Examples
        --------
        >>> from zarr3c.codecs import ReshapeCodec
        >>> ReshapeCodec(shape=(-1,)).output_shape((2, 3))
        (6,)
        """
        return reshape_output_shape(
            self.shape, tuple(int(s) for s in chunk_shape), path=path or self.name
        )

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        self.output_shape(spec.shape, path=path)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(
            shape=self.output_shape(spec.shape), dtype=spec.dtype, fill_value=spec.fill_value
        )

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return _reshape(chunk, self.output_shape(chunk.shape))

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return _reshape(chunk, spec.shape)


def _reshape(chunk: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``chunk`` in ``shape``, C order: a view when ``chunk`` is C-contiguous, else one copy."""
    out = chunk if chunk.shape == shape else chunk.reshape(shape)
    if not out.flags.c_contiguous:  # a strided input (numpy may still view some of those)
        out = np.ascontiguousarray(out)
    return out
