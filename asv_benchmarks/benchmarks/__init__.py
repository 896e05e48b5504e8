"""asv benchmarks for zarr3c (``asv_benchmarks/asv.conf.json``; see ``asv_benchmarks/README.md``).

Modules: ``bench_kernels`` (the Cython kernels), ``bench_codecs`` (codec encode/decode),
``bench_stores`` (store get/set), ``bench_array_io`` (whole-array workloads through the public
API).  The comparison with other Zarr implementations is ``asv_benchmarks/compare_peers.py``,
a script rather than an asv suite, because asv tracks one project over commits.
"""
