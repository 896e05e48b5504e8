"""Bad arguments to the public functions raise zarr3c errors that subclass the builtin."""

from __future__ import annotations

import pytest

import zarr3c
from zarr3c.errors import (
    AttributeNotFoundError,
    InvalidArgumentError,
    InvalidTypeError,
    ZarrError,
)


def _array() -> zarr3c.Array:
    return zarr3c.create_array("memory://", shape=(2,), dtype="int8", attributes={"a": 1})


@pytest.mark.parametrize(
    ("call", "error", "builtin", "match"),
    [
        (lambda: zarr3c.open_array(3), InvalidTypeError, TypeError, "int"),
        (lambda: zarr3c.open_array("memory://", mode="q"), InvalidArgumentError, ValueError,
         "mode"),
        (lambda: zarr3c.create_array("memory://", shape=(2,)), InvalidTypeError, TypeError,
         "dtype"),
        (lambda: zarr3c.create_array("memory://", shape=(2,), dtype="i1", order="X"),
         InvalidArgumentError, ValueError, "order"),
        (lambda: zarr3c.set_num_threads(0), InvalidArgumentError, ValueError, "threads"),
        (lambda: zarr3c.MemoryStore().set("k", "text"), InvalidTypeError, TypeError, "'k'"),
        (lambda: zarr3c.MemoryStore([]), InvalidTypeError, TypeError, "dict"),
        (lambda: _array().attrs["nope"], AttributeNotFoundError, KeyError, "'nope'"),
        (lambda: _array().attrs.__delitem__("nope"), AttributeNotFoundError, KeyError, "'nope'"),
        (lambda: len(zarr3c.create_array("memory://", shape=(), dtype="i1")),
         InvalidTypeError, TypeError, "0-d"),
    ],
    ids=["store-type", "mode", "no-dtype", "order", "threads", "value-type", "store-dict",
         "missing-attr", "del-missing-attr", "len-0d"],
)
def test_bad_arguments(call, error, builtin, match) -> None:
    with pytest.raises(error, match=match) as info:
        call()
    assert isinstance(info.value, ZarrError) and isinstance(info.value, builtin)
