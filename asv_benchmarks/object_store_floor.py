"""The floor under ``compare_object_stores.py``'s rows: the same server and latency proxy,
and nothing but requests.

obstore alone (no Zarr library, no decoding) sends ``--n`` GETs of objects of ``--kib`` KiB:
all in flight at once (asyncio), then one after another; and as many PUTs all in flight at
once.  A Zarr library reading ``--n`` chunks cannot take less than those times; so where the
fastest peer is within a few percent of them, issue 33's goal of 0.5x that peer is below what
the server allows, whatever the library does.  moto answers one request at a time, in
Python, which is part of every round trip.

Usage::

    python asv_benchmarks/object_store_floor.py --n 64 --kib 64 --latency 0.02
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from compare_object_stores import BUCKET, KEY, REGION, SECRET, servers


def best(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=64, help="objects (chunks) per workload")
    parser.add_argument("--kib", type=int, default=64, help="size of each object, KiB")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                      AWS_DEFAULT_REGION=REGION, AWS_EC2_METADATA_DISABLED="true")
    import obstore
    from obstore.store import S3Store

    payload = os.urandom(args.kib * 1024)
    keys = [f"floor/{i}" for i in range(args.n)]
    with servers(args.latency) as (_direct, proxy):
        store = S3Store(BUCKET, endpoint=proxy.endpoint, region=REGION, access_key_id=KEY,
                        secret_access_key=SECRET, client_options={"allow_http": True})

        async def put_all() -> None:
            await asyncio.gather(*(obstore.put_async(store, k, payload) for k in keys))

        async def get_all() -> None:
            got = await asyncio.gather(*(obstore.get_async(store, k) for k in keys))
            await asyncio.gather(*(g.bytes_async() for g in got))

        def get_each() -> None:
            for k in keys:
                obstore.get(store, k).bytes()

        asyncio.run(put_all())  # (the objects, and a warm client)
        rows = [("PUT, all in flight", best(lambda: asyncio.run(put_all()), args.repeat)),
                ("GET, all in flight", best(lambda: asyncio.run(get_all()), args.repeat)),
                ("GET, one after another", best(get_each, args.repeat))]
    print(f"# obstore {obstore.__version__}, {args.n} objects of {args.kib} KiB, "
          f"{args.latency * 1000:.0f} ms a request, min of {args.repeat}")
    print("| requests | s | per request, ms |")
    print("| --- | ---: | ---: |")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.3f} | {seconds / args.n * 1000:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
