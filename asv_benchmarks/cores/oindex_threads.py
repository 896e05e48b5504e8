"""The ``oindex`` rows of ``compare_peers.py`` against the thread count: two 1000-long index
arrays and one chunk's width over the 512^3 uint16 cube (only ``[:, :, :32]`` stored), chunked
(64^3) and sharded (256^3 shards of 32^3), min of 7 reads taking turns, through the native
pipeline's outer products and through the Python general path (``native.reads_outer``
switched off in the same process), with tensorstore's time for the same read beside them
(tensorstore's own thread count).

``python oindex_threads.py [THREADS ...]`` (default 1 4 16)."""

import sys
import time
from collections.abc import Callable

import numpy as np

import zarr3c
from zarr3c.array.read import native

try:
    import tensorstore as ts
except ImportError:  # (zarr3c's rows alone)
    ts = None


def best_ms(fns: dict[str, Callable[[], object]], repeat: int = 7) -> dict[str, float]:
    """The least time of each of ``fns`` over ``repeat`` rounds, the functions taking turns
    in each round (a shared machine's slow spells then fall on all of them)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: min(t) * 1e3 for name, t in times.items()}


def _way(reads_outer: Callable[..., bool], way: str) -> Callable[[], None]:
    """Switch the native outer-product reads on (``"native"``) or off (``"python"``)."""

    def switch() -> None:
        native.reads_outer = reads_outer if way == "native" else lambda array, sel: False

    return switch


def main() -> None:
    threads = [int(n) for n in sys.argv[1:]] or [1, 4, 16]
    reads_outer = native.reads_outer
    rng = np.random.default_rng(0)
    src = (np.add.outer(np.arange(512), np.arange(512))[:, :, None]
           + rng.integers(0, 64, (512, 512, 32))).astype("uint16")
    r3 = np.random.default_rng(3)
    sel = (r3.integers(0, 512, size=1000), r3.integers(0, 512, size=1000), slice(0, 32))
    expect = src[np.ix_(sel[0], sel[1], np.arange(32))]
    layouts = {"sharded": {"chunks": (32,) * 3, "shards": (256,) * 3},
               "chunked": {"chunks": (64,) * 3}}
    for comp in ("none", "zstd"):
        codecs = None if comp == "none" else [
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
        for layout, kw in layouts.items():
            path = f"/tmp/oindex_threads_{comp}_{layout}.zarr"
            a = zarr3c.create_array(path, shape=(512,) * 3, dtype="uint16", compressors=codecs,
                                    fill_value=0, overwrite=True, **kw)
            a[:, :, 0:32] = src
            for way in ("native", "python"):
                _way(reads_outer, way)()
                assert np.array_equal(a.oindex[sel], expect)
            t = None
            if ts is not None:
                t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
                            ).result().oindex[sel]
                assert np.array_equal(t.read().result(), expect)
            for n in threads:
                zarr3c.set_num_threads(n)
                fns: dict[str, Callable[[], object]] = {}
                for way in ("native", "python"):
                    switch = _way(reads_outer, way)
                    fns[way] = lambda switch=switch: switch() or a.oindex[sel]  # noqa: B023
                if t is not None:
                    fns["tensorstore"] = lambda t=t: t.read().result()
                ms = best_ms(fns)
                print(f"{layout} {comp} oindex threads={n}: " + ", ".join(
                    f"{name} {v:.1f} ms" for name, v in ms.items()), flush=True)
            native.reads_outer = reads_outer
            zarr3c.set_num_threads(None)


if __name__ == "__main__":
    main()
