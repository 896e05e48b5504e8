"""The ``cast_value`` codec: an array -> array conversion to another data type, by value.

Specified at https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value::

    {"name": "cast_value", "configuration": {"data_type": "uint8",
        "rounding": "towards-zero", "out_of_range": "clamp",
        "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}}

``data_type`` is the encoded type (any integer or float type, ``bfloat16`` and ``float8_*``
with ml_dtypes); ``rounding`` (default ``"nearest-even"``; also ``"towards-zero"``,
``"towards-positive"``, ``"towards-negative"``, ``"nearest-away"``) applies where a float
becomes an integer; ``out_of_range`` (default: an error) may be ``"clamp"`` or, for an integer
target, ``"wrap"`` (modulo 2**bits); ``scalar_map`` lists values mapped exactly, before any
of that, in each direction (keys and values written as fill values of the source and target
types).  A NaN with no mapping into a type without NaN is an error, whatever
``out_of_range`` says.  Decoding applies the same rules from the encoded type back to the
array's.  zarr-python 3.4 writes only the fields that differ from their defaults.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from zarr3c.codecs.base import ArrayArrayCodec, ChunkSpec, check_config_keys
from zarr3c.errors import CodecError, MetadataError
from zarr3c.metadata.data_types import DataType, data_type_from_numpy, parse_data_type

__all__ = ["CastValueCodec"]

ROUNDING = ("nearest-even", "towards-zero", "towards-positive", "towards-negative",
            "nearest-away")
OUT_OF_RANGE = ("clamp", "wrap")
_NUMBER_FAMILIES = ("core", "ml_float", "ml_int")


@dataclass(frozen=True)
class CastValueCodec(ArrayArrayCodec):
    """Convert each value to ``data_type`` (decode: back), with the spec's rounding and
    range rules.

    Parameters
    ----------
    data_type
        The encoded data type.
    rounding
        How a float becomes an integer.
    out_of_range
        ``None`` (an error), ``"clamp"`` or ``"wrap"``.
    scalar_map
        ``{"encode": [[from, to], ...], "decode": [...]}`` as JSON, or None.

    Raises
    ------
    zarr3c.errors.MetadataError
        From :meth:`from_config` for a bad field, and from :meth:`validate` for a source or
        target type that is not a number, ``wrap`` with a float target, or a map entry the
        types cannot hold.

    Examples
    --------
    >>> import numpy as np
    >>> from zarr3c.codecs import ChunkSpec
    >>> from zarr3c.codecs.cast_value import CastValueCodec
    >>> codec = CastValueCodec.from_config({"data_type": "uint8", "out_of_range": "clamp"},
    ...                                    path="codecs[0]")
    >>> spec = ChunkSpec((3,), np.dtype("float32"), np.zeros((), "float32"))
    >>> codec.encode(np.array([2.5, 3.5, 300.0], "float32"), spec)
    array([  2,   4, 255], dtype=uint8)
    """

    name: ClassVar[str] = "cast_value"

    data_type: DataType
    rounding: str = "nearest-even"
    out_of_range: str | None = None
    scalar_map: Any = None

    @classmethod
    def from_config(cls, configuration: Mapping[str, Any] | None, *,
                    path: str) -> CastValueCodec:
        config = check_config_keys(configuration, path=path, required=("data_type",),
                                   optional=("rounding", "out_of_range", "scalar_map"))
        where = f"{path}.configuration"
        # Any data type parses (the metadata schema allows them); validate() refuses those
        # the codec cannot cast, as zarr-python 3.4 does.
        data_type = parse_data_type(config["data_type"], path=f"{where}.data_type")
        rounding = config.get("rounding", "nearest-even")
        if rounding not in ROUNDING:
            raise MetadataError(f"must be one of {list(ROUNDING)}, got {rounding!r}",
                                path=f"{where}.rounding")
        out_of_range = config.get("out_of_range")
        if "out_of_range" in config and out_of_range not in OUT_OF_RANGE:
            raise MetadataError(f"must be one of {list(OUT_OF_RANGE)}, got {out_of_range!r}",
                                path=f"{where}.out_of_range")
        scalar_map = config.get("scalar_map")
        if "scalar_map" in config:
            _check_map_shape(scalar_map, path=f"{where}.scalar_map")
        return cls(data_type=data_type, rounding=rounding, out_of_range=out_of_range,
                   scalar_map=scalar_map)

    def to_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"data_type": self.data_type.to_json()}
        if self.rounding != "nearest-even":
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            config["scalar_map"] = self.scalar_map
        return {"name": self.name, "configuration": config}

    def validate(self, spec: ChunkSpec, *, path: str) -> None:
        source = _number_type(spec.dtype, path=path)
        target = self.data_type
        if target.family not in _NUMBER_FAMILIES or target.dtype.kind in "bc":
            raise MetadataError(f"must be an integer or float data type, got "
                                f"{target.to_json()!r}", path=f"{path}.configuration.data_type")
        if self.out_of_range == "wrap" and not _is_int(target.dtype):
            raise MetadataError(f"'wrap' needs an integer data type, not {target.name}",
                                path=f"{path}.configuration.out_of_range")
        self._map("encode", source, target, path=path)
        self._map("decode", target, source, path=path)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        fill = self.encode(np.asarray(spec.fill_value).reshape(1), spec).reshape(())
        return ChunkSpec(shape=spec.shape, dtype=self.data_type.dtype, fill_value=fill)

    def encode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        source = _number_type(spec.dtype, path="cast_value")
        return self._cast(chunk, source, self.data_type, "encode")

    def decode(self, chunk: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        source = _number_type(spec.dtype, path="cast_value")
        return self._cast(chunk, self.data_type, source, "decode")

    # -- the conversion -------------------------------------------------------------------------

    def _map(self, direction: str, source: DataType, target: DataType, *,
             path: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The ``scalar_map`` entries of ``direction`` as (source value, target value)."""
        entries = (self.scalar_map or {}).get(direction, [])
        out = []
        for i, (key, value) in enumerate(entries):
            where = f"{path}.configuration.scalar_map.{direction}[{i}]"
            k = np.frombuffer(source.parse_fill_value(key, path=f"{where}[0]"), source.dtype)
            v = np.frombuffer(target.parse_fill_value(value, path=f"{where}[1]"), target.dtype)
            out.append((k, v))
        return out

    def _cast(self, chunk: np.ndarray, source: DataType, target: DataType,
              step: str) -> np.ndarray:
        values = np.asarray(chunk, dtype=source.dtype)
        mapped = np.zeros(values.shape, dtype=bool)
        result = np.zeros(values.shape, dtype=target.dtype)
        for key, value in self._map(step, source, target, path="cast_value"):
            hit = _equal(values, key)
            result[hit] = value[0]
            mapped |= hit
        rest = ~mapped
        if rest.any():
            result[rest] = _convert(values[rest], target.dtype, self.rounding,
                                    self.out_of_range, step)
        return result


def _check_map_shape(value: Any, *, path: str) -> None:
    if not isinstance(value, dict) or set(value) - {"encode", "decode"}:
        raise MetadataError(f"must be an object with \"encode\" and/or \"decode\", got "
                            f"{value!r}", path=path)
    for direction, entries in value.items():
        if not isinstance(entries, list) or not all(
                isinstance(e, list) and len(e) == 2 for e in entries):
            raise MetadataError("must be a list of [from, to] pairs",
                                path=f"{path}.{direction}")


def _number_type(dtype: np.dtype, *, path: str) -> DataType:
    try:
        data_type = data_type_from_numpy(dtype)
    except MetadataError:
        data_type = None
    if data_type is None or data_type.family not in _NUMBER_FAMILIES or dtype.kind in "bc":
        raise MetadataError(f"takes integer and float data types, not {dtype}", path=path)
    return data_type


def _is_int(dtype: np.dtype) -> bool:
    return dtype.kind in "iu" or data_type_from_numpy(dtype).family == "ml_int"


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    import ml_dtypes  # only ml_dtypes integers get here

    ml_info = ml_dtypes.iinfo(dtype)
    return int(ml_info.min), int(ml_info.max)


def _equal(values: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Where ``values`` equal the map key (NaN matching NaN)."""
    k = key.astype("f8")[0] if not _is_int(values.dtype) else None
    if k is not None and math.isnan(k):
        return np.isnan(values.astype("f8"))
    return values == key[0]


def _round(values: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "nearest-even":
        return np.rint(values)
    if rounding == "towards-zero":
        return np.trunc(values)
    if rounding == "towards-positive":
        return np.ceil(values)
    if rounding == "towards-negative":
        return np.floor(values)
    return np.sign(values) * np.floor(np.abs(values) + 0.5)  # nearest-away


def _convert(values: np.ndarray, target: np.dtype, rounding: str, out_of_range: str | None,
             step: str) -> np.ndarray:
    """Values (no scalar-map hits) converted by the spec's rules."""
    where = f"cast_value {step}"
    source_int = _is_int(values.dtype)
    if _is_int(target):
        lo, hi = _int_range(target)
        # Python integers where int64 could overflow (64-bit types, wrapping big floats).
        exact_ints = (target.itemsize >= 8 or values.dtype.itemsize >= 8
                      or out_of_range == "wrap")
        if source_int:
            exact = values.astype(object if exact_ints else np.int64)
        else:
            wide = values.astype("f8")
            if np.isnan(wide).any():
                raise CodecError(f"{where}: NaN has no value in {target} (map it with "
                                 "scalar_map)")
            rounded = _round(wide, rounding)
            if np.isinf(rounded).any() and out_of_range != "clamp":
                raise CodecError(f"{where}: infinity is out of the range of {target}")
            if exact_ints:
                rounded = np.clip(rounded, -(2.0**80), 2.0**80)  # +-inf clamp anyway
                exact = np.array([int(x) for x in rounded.ravel()],
                                 dtype=object).reshape(rounded.shape)
            else:
                exact = np.clip(rounded, lo - 1, hi + 1).astype(np.int64)
        low, high = exact < lo, exact > hi
        if low.any() or high.any():
            if out_of_range is None:
                raise CodecError(f"{where}: a value is out of the range of {target} "
                                 f"[{lo}, {hi}]")
            if out_of_range == "clamp":
                exact = np.where(low, lo, np.where(high, hi, exact))
            else:  # wrap: modulo the number of values, into [lo, hi]
                exact = (exact - lo) % (hi - lo + 1) + lo
        out = np.asarray(exact)
        if target.type.__module__ != "numpy":  # ml_dtypes integers convert from int64
            out = out.astype(np.int64)
        return out.astype(target)
    # float target
    wide = values.astype(object) if source_int else values.astype("f8")
    with np.errstate(all="ignore"):
        result = np.asarray(wide, dtype="f8").astype(target)
    back = result.astype("f8")
    finite_in = np.isfinite(np.asarray(wide, dtype="f8"))
    overflow = finite_in & ~np.isfinite(back)
    nan_in = ~finite_in & np.isnan(np.asarray(wide, dtype="f8"))
    if (nan_in & ~np.isnan(back)).any():
        raise CodecError(f"{where}: NaN has no value in {target} (map it with scalar_map)")
    inf_in = np.isinf(np.asarray(wide, dtype="f8"))
    lost_inf = inf_in & ~np.isinf(back)
    if overflow.any() or lost_inf.any():
        if out_of_range != "clamp":
            raise CodecError(f"{where}: a value is out of the range of {target}")
        top = _float_max(target)
        sign = np.sign(np.asarray(wide, dtype="f8"))
        bad = overflow | lost_inf
        result[bad] = (sign[bad] * top).astype(target)
    return result


def _float_max(dtype: np.dtype) -> float:
    if dtype.type.__module__ == "numpy":
        return float(np.finfo(dtype).max)
    import ml_dtypes  # only ml_dtypes floats get here

    return float(ml_dtypes.finfo(dtype).max)
