"""ObjectStore: zarr3c's store over obstore (``pip install "zarr3c[obstore]"``), for S3, GCS,
Azure, HTTP(S), local and in-memory object stores.

:mod:`~zarr3c.stores.object_store.store` holds the store, :mod:`.options` how URLs and
``storage_options`` become obstore's configuration, and :mod:`.runner` the event loop its
concurrent requests run on.  obstore is imported on first use, never by ``import zarr3c``.
"""

from __future__ import annotations

from zarr3c.stores.object_store.options import (
    INSTALL_HINT,
    OBSTORE_SCHEMES,
    import_obstore,
    obstore_available,
)
from zarr3c.stores.object_store.store import ObjectStore

__all__ = ["INSTALL_HINT", "OBSTORE_SCHEMES", "ObjectStore", "import_obstore", "obstore_available"]
