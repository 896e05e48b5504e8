"""The ``oindex`` rows of ``compare_peers.py`` against the thread count: two 1000-long index
arrays and one chunk's width over the 512^3 uint16 cube (only ``[:, :, :32]`` stored), chunked
(64^3) and sharded (256^3 shards of 32^3), min of 5 reads, with the output's pages first
touched on 16 threads beforehand or not (``zarr3c.array.read.general.plan_general`` wrapped
to do so: the probe of whether page faults or copies bound the row)."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import zarr3c
from zarr3c.array.read import general

POOL = ThreadPoolExecutor(16)
PREFAULT = {"on": False}
_plan_general = general.plan_general


def touch(out: np.ndarray) -> None:
    flat = out.reshape(-1).view(np.uint8)
    bounds = np.linspace(0, flat.size, 17).astype(int)
    list(POOL.map(lambda i: flat[bounds[i]:bounds[i + 1]].fill(0), range(16)))


def plan_touched(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - a wrapper
    plan = _plan_general(*args, **kwargs)
    if PREFAULT["on"]:
        for out in plan.outs:
            touch(out)
    return plan


def best_ms(fn) -> float:  # noqa: ANN001
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    general.plan_general = plan_touched
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
            a = zarr3c.create_array(f"/tmp/oindex_threads_{comp}_{layout}.zarr",
                                    shape=(512,) * 3, dtype="uint16", compressors=codecs,
                                    fill_value=0, overwrite=True, **kw)
            a[:, :, 0:32] = src
            assert np.array_equal(a.oindex[sel], expect)
            for prefault in (False, True):
                PREFAULT["on"] = prefault
                for n in (1, 4, 16):
                    zarr3c.set_num_threads(n)
                    ms = best_ms(lambda: a.oindex[sel])  # noqa: B023 - called at once
                    print(f"{layout} {comp} oindex threads={n} prefault={prefault}: {ms:.1f} ms",
                          flush=True)
            zarr3c.set_num_threads(None)


if __name__ == "__main__":
    main()
