"""Copying whole hierarchies between stores and formats, chunk by chunk.

``zarr3c.copy(src, dst, zarr_format=3)`` recreates every group and array of ``src`` in
``dst`` (in the final v3 layout or the draft-2022 one) with the same data, attributes and fill
values.  Chunks are streamed one at a time; where the destination's codec chain is the same
as the source's (always the case between the two layouts: the draft's "F" memory layout is a
reversing ``transpose`` in v3, its byte order the ``bytes`` codec's) the encoded bytes are
copied as they are, otherwise each chunk is decoded and re-encoded.
"""

from __future__ import annotations

from typing import Any

from zarr3c.api import _format_for_create
from zarr3c.array import Array, create_array
from zarr3c.concurrency import map_unordered
from zarr3c.group import Group, create_group, open_node
from zarr3c.metadata.formats import detect_format
from zarr3c.stores import make_store

__all__ = ["copy"]


def _copy_array(src: Array, dst_store: Any, fmt: Any, path: str) -> Array:
    md = src.metadata
    v3_like = fmt.zarr_format == 3 and src.zarr_format == 3
    dst = create_array(
        dst_store,
        path,
        fmt=fmt,
        overwrite=True,
        shape=md.shape,
        dtype=md.data_type,
        chunks=src.chunks,
        codecs=list(src.codecs),
        fill_value=src.fill_value,
        attributes=dict(md.attributes),
        dimension_names=md.dimension_names,
        chunk_key_encoding=md.chunk_key_encoding if v3_like else None,
        write_empty_chunks=True,
    )
    same_encoding = [c.to_dict() for c in dst.codecs] == [c.to_dict() for c in src.codecs]

    def copy_chunk(item: tuple[str, tuple[int, ...]]) -> None:
        key, coords = item
        if same_encoding:
            data = src.store.get(key)
            if data is not None:
                dst_store.set(dst.chunk_key(coords), data)
        else:
            dst.blocks[coords] = src.blocks[coords]

    map_unordered(copy_chunk, src._stored_chunks())
    return dst


def copy(src: Any, dst: Any, zarr_format: Any = 3) -> Group | Array:
    """Copy the hierarchy in ``src`` to ``dst`` in the layout ``zarr_format`` (3 or
    ``"draft-2022"``); returns the root node of the copy.

    Nodes already in ``dst`` at the same paths are replaced; nothing else there is touched.
    """
    src_store = make_store(src, read_only=True)
    dst_store = make_store(dst)
    src_fmt = detect_format(src_store)
    fmt = _format_for_create(dst_store, zarr_format)
    root = open_node(src_store, "", read_only=True, fmt=src_fmt)
    if isinstance(root, Array):
        return _copy_array(root, dst_store, fmt, "")
    out = create_group(dst_store, "", attributes=root.attrs.asdict(), overwrite=True, fmt=fmt)
    for name, node in root.members(max_depth=None):
        if isinstance(node, Array):
            _copy_array(node, dst_store, fmt, name)
        else:
            create_group(dst_store, name, attributes=node.attrs.asdict(), overwrite=True, fmt=fmt)
    return out
