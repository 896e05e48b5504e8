"""The ``scale_offset`` codec: an array -> array affine map ``(x - offset) * scale``.

Specified at https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset::

    {"name": "scale_offset", "configuration": {"offset": 5, "scale": 0.1}}

``offset`` and ``scale`` are written as fill values of the input data type (``"NaN"``,
``"0x..."`` included); either may be left out (0 and 1), and so may the whole configuration,
which is how zarr-python 3.4 writes the defaults.  Encoding computes ``(x - offset) * scale``
and decoding ``x / scale + offset``, both in the input data type: floats with their own
rounding, integers exactly (a result outside the type's range, or a division that leaves a
remainder, is an error: integer arithmetic must not wrap).  Only the core integer and float
types are accepted.  The data type is unchanged; follow it with ``cast_value`` to narrow it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs.base import ArrayArrayCodec, ChunkSpec, check_config_keys
from zarr3c.errors import CodecError, MetadataError
from zarr3c.metadata.data_types import data_type_from_numpy

__all__ = ["ScaleOffsetCodec"]

_INT64_LIMIT = 2**63


@dataclass(frozen=True)
class ScaleOffsetCodec(ArrayArrayCodec):
    """Subtract ``offset``, then multiply by ``scale`` (decode: divide, then add).

    Parameters
    ----------
    offset, scale
        JSON fill values of the input data type (defaults ``0`` and ``1``).

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`validate` for a data type other than an integer or float, a value the
        data type cannot hold (``0.5`` for an integer type) or ``scale`` zero.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.scale_offset import ScaleOffsetCodec
    >>> codec = ScaleOffsetCodec.from_config({"offset": 10, "scale": 2}, path="codecs[0]")
    >>> spec = ChunkSpec((3,), np.dtype("int16"), np.zeros((), "int16"))
    >>> codec.encode(np.array([10, 11, 15], "int16"), spec)
    array([ 0,  2, 10], dtype=int16)
    >>> codec.to_dict()
    {'name': 'scale_offset', 'configuration': {'offset': 10, 'scale': 2}}
    """

    name: ClassVar[str] = "scale_offset"

    offset: Any = 0
    scale: Any = 1

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *,
                    path: str) -> ScaleOffsetCodec:
        config = check_config_keys(configuration, path=path, optional=("offset", "scale"))
        for key in ("offset", "scale"):
            value = config.get(key)
            if key in config and (isinstance(value, bool)
                                  or not isinstance(value, int | float | str)):
                raise MetadataError(f"must be a number or a string, got {value!r}",
                                    path=f"{path}.configuration.{key}")
        return cls(offset=config.get("offset", 0), scale=config.get("scale", 1))

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if not _is_number(self.offset, 0):
            config["offset"] = self.offset
        if not _is_number(self.scale, 1):
            config["scale"] = self.scale
        if not config:
            return {"name": self.name}
        return {"name": self.name, "configuration": config}

    def _parameters(self, dtype: np.dtype, *, path: str) -> tuple[Any, Any]:
        """``offset`` and ``scale`` as numpy scalars of ``dtype``."""
        if dtype.kind not in "iuf" or dtype.type.__module__ != "numpy":
            raise MetadataError(f"takes integer and float data types, not {dtype}", path=path)
        data_type = data_type_from_numpy(dtype)
        values = []
        for key, value in (("offset", self.offset), ("scale", self.scale)):
            raw = data_type.parse_fill_value(value, path=f"{path}.configuration.{key}")
            values.append(np.frombuffer(raw, dtype=dtype)[0])
        if values[1] == 0:
            raise MetadataError("must not be zero", path=f"{path}.configuration.scale")
        return values[0], values[1]

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        self._parameters(spec.dtype, path=path)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        fill = self.encode(np.asarray(spec.fill_value).reshape(1), spec).reshape(())
        return ChunkSpec(shape=spec.shape, dtype=spec.dtype, fill_value=fill)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._parameters(spec.dtype, path="scale_offset")
        if spec.dtype.kind == "f":
            with np.errstate(all="ignore"):  # inf and NaN are values of float types
                return np.ascontiguousarray((chunk - offset) * scale, dtype=spec.dtype)
        lo, hi = _int_range(spec.dtype)
        bound = max(abs(lo - int(offset)), abs(hi - int(offset))) * abs(int(scale))
        wide = _widen(chunk, bound)
        return _narrow((wide - int(offset)) * int(scale), spec.dtype, "encode")

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        offset, scale = self._parameters(spec.dtype, path="scale_offset")
        if spec.dtype.kind == "f":
            with np.errstate(all="ignore"):
                return np.ascontiguousarray(chunk / scale + offset, dtype=spec.dtype)
        lo, hi = _int_range(spec.dtype)
        wide = _widen(chunk, max(abs(lo), abs(hi)) + abs(int(offset)))
        if np.any(wide % int(scale)):
            raise CodecError(f"scale_offset: a stored value is not a multiple of scale "
                             f"{self.scale!r}, so it has no exact {spec.dtype} value")
        return _narrow(wide // int(scale) + int(offset), spec.dtype, "decode")


def _is_number(value: Any, number: int) -> bool:
    return not isinstance(value, bool | str) and value == number


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _widen(chunk: np.ndarray, bound: int) -> np.ndarray:
    """``chunk`` as int64 where every intermediate stays below ``bound`` < 2**63, else as
    Python integers (exact for uint64 and int64 products)."""
    if bound < _INT64_LIMIT:
        return chunk.astype(np.int64)
    return chunk.astype(object)


def _narrow(values: np.ndarray, dtype: np.dtype, step: str) -> np.ndarray:
    """``values`` in integer ``dtype``, refusing any value outside its range."""
    lo, hi = _int_range(dtype)
    if values.size and (values.min() < lo or values.max() > hi):
        raise CodecError(f"scale_offset {step}: a value leaves the range of {dtype} "
                         f"[{lo}, {hi}]")
    return np.ascontiguousarray(values.astype(dtype))
