"""How far apart two byte ranges of one object may lie and still be read with one request:
the ``coalesce`` gap of ``ObjectStore`` and ``FsspecStore`` (issue 33).

Through the same moto server and latency proxy as ``compare_object_stores.py``, with each
answer's body sent at ``--bandwidth`` bytes a second (one request's stream from a cloud
store is bounded; loopback is not), zarr3c's ``ObjectStore`` reads ``--n`` ranges of
``--kib`` KiB of one object, each ``gap`` bytes after the last, with one batch: as separate
requests (``coalesce=0``: all in flight at once) and as one request spanning them
(``coalesce=gap``).  Merging saves ``n - 1`` requests and reads ``(n - 1) * gap`` bytes
nobody needs; the table gives both times and the requests, per gap.  Where the requests are
in flight together the saving is requests (what S3 bills and rate-limits), not latency,
and the cost is the extra bytes' transfer time: a gap is worth merging while that stays
below a round trip.

Usage::

    python asv_benchmarks/coalesce_gap.py --latency 0.02 --bandwidth 100e6
"""

from __future__ import annotations

import argparse
import os
import sys

from compare_object_stores import BUCKET, KEY, REGION, SECRET, servers
from object_store_floor import best

GAPS_KIB = (0, 64, 256, 512, 1024, 2048, 4096)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2, help="ranges per read")
    parser.add_argument("--kib", type=int, default=64, help="size of each range, KiB")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    parser.add_argument("--bandwidth", type=float, default=None,
                        help="bytes per second of each answer (default: loopback's)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    from zarr3c import ObjectStore

    size = args.kib * 1024
    span = args.n * size + (args.n - 1) * max(GAPS_KIB) * 1024
    rows = []
    with servers(args.latency, args.bandwidth) as (_direct, proxy):
        options = {"access_key_id": KEY, "secret_access_key": SECRET,
                   "endpoint": proxy.endpoint, "region": REGION}
        url = f"s3://{BUCKET}/coalesce-gap"
        ObjectStore.from_url(url, options).set("v", os.urandom(span))
        for gap_kib in GAPS_KIB:
            gap = gap_kib * 1024
            ranges = [("v", (i * (size + gap), size)) for i in range(args.n)]
            row = [gap_kib]
            for coalesce in (0, gap):
                store = ObjectStore.from_url(url, {**options, "coalesce": coalesce})
                store.get_partial_values(ranges)  # (a warm connection pool)
                proxy.reset()
                store.get_partial_values(ranges)
                requests = sum(proxy.counts().values())
                row += [best(lambda s=store, r=ranges: s.get_partial_values(r), args.repeat),
                        requests]
            rows.append(row)
    bw = "loopback" if args.bandwidth is None else f"{args.bandwidth / 1e6:g} MB/s"
    print(f"# {args.n} ranges of {args.kib} KiB, {args.latency * 1000:.0f} ms a request, "
          f"{bw} an answer, min of {args.repeat}")
    print("| gap, KiB | separate, ms | requests | merged, ms | requests | merged / separate |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for gap_kib, t_sep, n_sep, t_merged, n_merged in rows:
        print(f"| {gap_kib} | {t_sep * 1000:.1f} | {n_sep} | {t_merged * 1000:.1f} | "
              f"{n_merged} | {t_merged / t_sep:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
