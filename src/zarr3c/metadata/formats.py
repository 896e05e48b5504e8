"""Hierarchy formats: how nodes and chunks of a hierarchy map to store keys.

The formats stand behind one interface, :class:`HierarchyFormat`, so that arrays, groups,
grids, codecs and stores never branch on the format:

- :class:`V3Format`, the final Zarr v3 layout the ecosystem writes: ``<path>/zarr.json`` per
  node (``zarr.json`` for the root), chunks below the array's own prefix, groups explicit.
- :class:`Draft2022Format`, the core spec editor's draft of 25 May 2022
  (https://zarr-specs.readthedocs.io/en/latest/v3/core/v3.0.html): an entry
  point ``zarr.json``, ``meta/<path>.array.json`` / ``meta/<path>.group.json`` documents,
  chunk keys ``data/<path>/c<i>/<j>``, and implicit groups (a group exists when any node below
  it does).  Its operations follow the draft's "Storage" section.
- :class:`Zarr2V3Format`, what zarr-python 2.11-2.18 wrote with its experimental v3 API
  (``ZARR_V3_EXPERIMENTAL_API=1``): an entry point ``zarr.json`` whose ``zarr_format`` is
  ``"https://purl.org/zarr/spec/protocol/core/3.0"``, documents ``meta/root.group.json`` /
  ``meta/root/<path>.array.json``, chunks ``data/root/<path>/c<i>/<j>``, implicit groups
  (see :mod:`zarr3c.metadata.zarr2v3`).
- :class:`V2Format`, Zarr v2 (https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html):
  ``<path>/.zarray`` or ``<path>/.zgroup`` per node with the attributes in ``<path>/.zattrs``,
  chunks below the array's own prefix (see :mod:`zarr3c.metadata.v2`).

Stores are used through their interface only (``get``, ``set``, ``erase``, ``list_dir``, ...).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from zarr3c.errors import (
    MetadataError,
    NodeNameError,
    UnsupportedFeatureError,
    UnsupportedFormatError,
)
from zarr3c.metadata.array import ArrayMetadata, load_json_object
from zarr3c.metadata.data_types import data_type_from_numpy, from_zarr_python_dtype
from zarr3c.metadata.draft2022 import (
    CORE_URI,
    Draft2022ArrayMetadata,
    Draft2022GroupMetadata,
    EntryPoint,
)
from zarr3c.metadata.group import GroupMetadata, parse_node_dict
from zarr3c.metadata.v2 import (
    ARRAY_KEY,
    ATTRS_KEY,
    CONSOLIDATED_KEY,
    GROUP_KEY,
    V2ArrayMetadata,
    V2DataType,
    V2GroupMetadata,
    V2ObjectType,
    dump_v2_json,
    read_v2_node,
    v2_data_type_from_numpy,
)
from zarr3c.metadata.vlen_types import vlen_type_for
from zarr3c.metadata.zarr2v3 import (
    PROTOCOL_URI,
    Zarr2V3ArrayMetadata,
    Zarr2V3EntryPoint,
    Zarr2V3GroupMetadata,
)

__all__ = [
    "FORMATS",
    "HierarchyFormat",
    "V3Format",
    "Draft2022Format",
    "Zarr2V3Format",
    "V2Format",
    "detect_format",
    "PROTOCOL_URI",
]

Metadata = Any  # ArrayMetadata | GroupMetadata | the draft-2022 and zarr2-v3 documents


def _prefix(path: str) -> str:
    return f"{path}/" if path else ""


def _children_with(store: Any, path: str, documents: tuple[str, ...]) -> list[str]:
    """Names of the sub-prefixes of ``path`` holding one of ``documents``, sorted."""
    prefix = _prefix(path)
    _, prefixes = store.list_dir(prefix)
    names = [p[len(prefix):].rstrip("/") for p in prefixes
             if any(store.exists(p + name) for name in documents)]
    return sorted(names)


class HierarchyFormat(ABC):
    """Where a hierarchy keeps its metadata documents and chunks."""

    #: the ``zarr_format`` argument that selects this format
    zarr_format: ClassVar[Any]
    #: the chunk key encoding of a new array when create_array is given none (None: v3's)
    default_chunk_key_encoding: ClassVar[Any] = None

    @abstractmethod
    def read_node(self, store: Any, path: str) -> Metadata | None:
        """The metadata of the explicit node at ``path``, or None."""

    def node_exists(self, store: Any, path: str) -> bool:
        """Whether a node (explicit, or implicit where the format has those) is at ``path``."""
        return self.read_node(store, path) is not None

    @abstractmethod
    def metadata_key(self, path: str, node_type: str) -> str:
        """The key of the document of a node of ``node_type`` ("array"/"group") at ``path``."""

    def write_node(self, store: Any, path: str, metadata: Metadata) -> None:
        store.set(self.metadata_key(path, metadata.node_type), metadata.to_json())

    @abstractmethod
    def chunk_prefix(self, path: str) -> str:
        """The prefix below which the array at ``path`` keeps its chunks."""

    def chunk_key(self, path: str, metadata: Metadata, coords: Sequence[int]) -> str:
        return self.chunk_prefix(path) + metadata.chunk_key_encoding.encode_chunk_key(coords)

    @abstractmethod
    def child_names(self, store: Any, path: str) -> list[str]:
        """Names of the child nodes of the group at ``path``, sorted."""

    @abstractmethod
    def erase_node(self, store: Any, path: str) -> None:
        """Erase the node at ``path`` and everything below it, and nothing else."""

    @abstractmethod
    def new_group(self, attributes: dict[str, Any]) -> Metadata:
        """Metadata of a new group."""

    @abstractmethod
    def new_array(self, metadata: ArrayMetadata, *, order: str = "C",
                  data_type: Any = None, null_fill: bool = False) -> Metadata:
        """Metadata of a new array, from the v3 metadata create_array builds (``order`` is
        the chunk memory layout where the format stores one; ``data_type`` the array's type
        where ``metadata`` holds a stand-in for one only this format has, see
        :meth:`data_type`; ``null_fill`` that ``fill_value=None`` was asked: a format with
        a null fill value writes it, the others keep ``metadata``'s, the type's default)."""

    def data_type(self, dtype: Any) -> Any:
        """The data type of a new array for a user's ``dtype`` (a
        :class:`~zarr3c.metadata.data_types.DataType`); formats with more types than the
        v3 core ones widen it.  zarr-python's data type objects are taken too."""
        dtype = from_zarr_python_dtype(dtype, self.zarr_format)
        _refuse_object_elements(dtype, self.zarr_format)
        if isinstance(dtype, V2DataType):
            raise MetadataError(f"data type {dtype.name!r} ({dtype.dtype}) has no form in the "
                                f"{self.zarr_format!r} layout", path="data_type")
        return data_type_from_numpy(dtype)

    def check_name(self, name: str) -> None:  # noqa: B027 - formats may add rules
        """Refuse node names this format does not allow (beyond zarr3c's own rules)."""

    @property
    def writes_parent_groups(self) -> bool:
        """Whether creating a node writes documents for missing ancestor groups."""
        return True

    def initialize(self, store: Any) -> None:  # noqa: B027 - only some formats need it
        """Write what a new hierarchy needs before its first node (an entry point)."""


class V3Format(HierarchyFormat):
    """The final Zarr v3 layout: one ``zarr.json`` per node."""

    zarr_format: ClassVar[Any] = 3

    def read_node(self, store: Any, path: str) -> Metadata | None:
        key = self.metadata_key(path, "")
        data = store.get(key)
        if data is None:
            return None
        return parse_node_dict(load_json_object(data, source=key), source=key)

    def node_exists(self, store: Any, path: str) -> bool:
        # A key lookup: the document is parsed once, by whoever then reads the node.
        return store.exists(self.metadata_key(path, ""))

    def metadata_key(self, path: str, node_type: str) -> str:
        return f"{_prefix(path)}zarr.json"

    def chunk_prefix(self, path: str) -> str:
        return _prefix(path)

    def child_names(self, store: Any, path: str) -> list[str]:
        return _children_with(store, path, ("zarr.json",))

    def erase_node(self, store: Any, path: str) -> None:
        store.erase_prefix(_prefix(path))
        if path == "":
            store.erase("zarr.json")

    def new_group(self, attributes: dict[str, Any]) -> Metadata:
        return GroupMetadata.from_dict(
            {"zarr_format": 3, "node_type": "group", "attributes": attributes}
        )

    def new_array(self, metadata: ArrayMetadata, *, order: str = "C",
                  data_type: Any = None, null_fill: bool = False) -> Metadata:
        return metadata  # v3 has no chunk memory layout: order is the in-memory one only


_DRAFT_NAME = re.compile(r"[A-Za-z0-9._-]+")


class Draft2022Format(HierarchyFormat):
    """The layout of the core spec editor's draft of 25 May 2022 (``"draft-2022"``)."""

    zarr_format: ClassVar[Any] = "draft-2022"
    #: where documents and chunks live below ``meta/`` and ``data/``
    _root_dir: ClassVar[str] = ""
    _entry_point_type: ClassVar[type] = EntryPoint
    _array_type: ClassVar[type[Draft2022ArrayMetadata] | type[Zarr2V3ArrayMetadata]] = (
        Draft2022ArrayMetadata)
    _group_type: ClassVar[type[Draft2022GroupMetadata]] = Draft2022GroupMetadata

    def __init__(self, entry_point: Any = None):
        self.entry_point = entry_point or self._entry_point_type()
        self.suffix = self.entry_point.metadata_key_suffix

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.entry_point == self.entry_point  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.suffix))

    def metadata_key(self, path: str, node_type: str) -> str:
        # Root: meta/array.json / meta/group.json; else meta/<path>.array.json, ...
        return f"meta/{path}.{node_type}{self.suffix}" if path else f"meta/{node_type}{self.suffix}"

    def _meta_prefix(self, path: str) -> str:
        return f"meta/{self._root_dir}{_prefix(path)}"

    def chunk_prefix(self, path: str) -> str:
        return f"data/{self._root_dir}{_prefix(path)}"

    def read_node(self, store: Any, path: str) -> Metadata | None:
        # The 2022 draft's order: array document, then explicit group document.
        key = self.metadata_key(path, "array")
        data = store.get(key)
        if data is not None:
            return self._array_type.from_json(data, source=key)
        key = self.metadata_key(path, "group")
        data = store.get(key)
        if data is not None:
            return self._group_type.from_json(data, source=key)
        return None

    def node_exists(self, store: Any, path: str) -> bool:
        if path == "" or self.read_node(store, path) is not None:
            return True  # (the root group of a hierarchy with an entry point always exists)
        # An implicit group: some node below it exists.
        keys, prefixes = store.list_dir(self._meta_prefix(path))
        return bool(keys or prefixes)

    def child_names(self, store: Any, path: str) -> list[str]:
        prefix = self._meta_prefix(path)
        keys, prefixes = store.list_dir(prefix)
        names = set()
        for key in keys:
            rel = key[len(prefix):]
            for node_type in ("array", "group"):
                ending = f".{node_type}{self.suffix}"
                if rel.endswith(ending) and len(rel) > len(ending):
                    names.add(rel[: -len(ending)])
        names.update(p[len(prefix):].rstrip("/") for p in prefixes)
        return sorted(names)

    def erase_node(self, store: Any, path: str) -> None:
        # The 2022 draft's "Erase a group or array": the node's own document, and the meta/ and
        # data/ prefixes of its path; nothing else.
        store.erase(self.metadata_key(path, "array"))
        store.erase(self.metadata_key(path, "group"))
        store.erase_prefix(self._meta_prefix(path))
        store.erase_prefix(self.chunk_prefix(path))

    def new_group(self, attributes: dict[str, Any]) -> Metadata:
        return self._group_type.from_dict({"attributes": attributes})

    def new_array(self, metadata: ArrayMetadata, *, order: str = "C",
                  data_type: Any = None, null_fill: bool = False) -> Metadata:
        return self._array_type.from_v3(metadata, chunk_memory_layout=order)

    def check_name(self, name: str) -> None:
        if not _DRAFT_NAME.fullmatch(name):
            raise NodeNameError(
                f"node name {name!r} is not allowed in a {self.zarr_format} hierarchy: only "
                "the characters a-z A-Z 0-9 - _ . may be used"
            )

    @property
    def writes_parent_groups(self) -> bool:
        return False  # creating a node implies its ancestors (implicit groups)

    def initialize(self, store: Any) -> None:
        if store.get("zarr.json") is None:
            store.set("zarr.json", self.entry_point.to_json())


class Zarr2V3Format(Draft2022Format):
    """The layout zarr-python 2.11-2.18 wrote with its experimental v3 API.

    Like the draft-2022 layout, but every document lives below ``meta/root`` and every chunk
    below ``data/root/``: the root group is ``meta/root.group.json``, the array ``a/b`` is
    ``meta/root/a/b.array.json`` with chunks ``data/root/a/b/c0/1``; a root array is
    ``meta/root.array.json`` with chunks ``data/root/c0``.  Groups with no document exist when
    a node below them does (zarr-python 2 wrote none for the parents of a new array).
    """

    zarr_format: ClassVar[Any] = "zarr2-v3"
    # zarr-python 2's v3 stores refuse keys with other characters than the draft allows
    # (StoreV3._valid_key), and it wrote no documents for the parents of a new node.
    _root_dir: ClassVar[str] = "root/"
    _entry_point_type: ClassVar[type] = Zarr2V3EntryPoint
    _array_type = Zarr2V3ArrayMetadata
    _group_type = Zarr2V3GroupMetadata

    def metadata_key(self, path: str, node_type: str) -> str:
        if path:
            return f"meta/root/{path}.{node_type}{self.suffix}"
        return f"meta/root.{node_type}{self.suffix}"


class V2Format(HierarchyFormat):
    """Zarr v2: ``.zarray`` / ``.zgroup`` per node, attributes in ``.zattrs``, chunks
    ``<path>/<i>.<j>`` (or ``<i>/<j>``) below the array's own prefix."""

    zarr_format: ClassVar[Any] = 2
    default_chunk_key_encoding: ClassVar[Any] = {"name": "v2", "configuration": {"separator": "."}}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def read_node(self, store: Any, path: str) -> Metadata | None:
        return read_v2_node(store, path)

    def node_exists(self, store: Any, path: str) -> bool:
        prefix = _prefix(path)
        return store.exists(prefix + ARRAY_KEY) or store.exists(prefix + GROUP_KEY)

    def metadata_key(self, path: str, node_type: str) -> str:
        return _prefix(path) + (ARRAY_KEY if node_type == "array" else GROUP_KEY)

    def write_node(self, store: Any, path: str, metadata: Metadata) -> None:
        # The attributes first: a reader seeing the new document sees its attributes.  Written
        # always (also {}), as zarr-python 3 does.
        store.set(_prefix(path) + ATTRS_KEY, dump_v2_json(metadata.attributes))
        store.set(self.metadata_key(path, metadata.node_type), metadata.to_json())

    def chunk_prefix(self, path: str) -> str:
        return _prefix(path)

    def child_names(self, store: Any, path: str) -> list[str]:
        return _children_with(store, path, (ARRAY_KEY, GROUP_KEY))

    def erase_node(self, store: Any, path: str) -> None:
        store.erase_prefix(_prefix(path))
        if path == "":
            for key in (ARRAY_KEY, GROUP_KEY, ATTRS_KEY, CONSOLIDATED_KEY):
                store.erase(key)

    def new_group(self, attributes: dict[str, Any]) -> Metadata:
        return V2GroupMetadata.from_dict({"zarr_format": 2}, attributes=attributes)

    def new_array(self, metadata: ArrayMetadata, *, order: str = "C",
                  data_type: Any = None, null_fill: bool = False) -> Metadata:
        return V2ArrayMetadata.from_v3(metadata, order=order, data_type=data_type,
                                       null_fill=null_fill)

    def data_type(self, dtype: Any) -> Any:
        dtype = from_zarr_python_dtype(dtype, self.zarr_format)
        _refuse_object_elements(dtype, self.zarr_format)
        # Strings and bytes become object arrays of the vlen-utf8 / vlen-bytes codec, as
        # zarr-python 3 writes them (V2ArrayMetadata.from_v3).
        vlen = vlen_type_for(dtype)
        if vlen is not None:
            return vlen
        return v2_data_type_from_numpy(dtype)


def _refuse_object_elements(dtype: Any, layout: Any) -> None:
    """Refuse a new array of a v2 object array's arrays or JSON values (a copy's): no v3
    data type holds them, and zarr3c, like zarr-python 3, creates no v2 object arrays of
    those codecs (only of vlen-utf8 and vlen-bytes)."""
    if isinstance(dtype, V2ObjectType):
        what = "1-d arrays" if dtype.object_codec == "vlen-array" else "JSON values"
        why = ("zarr3c, like zarr-python 3, creates Zarr v2 object arrays of the vlen-utf8 "
               "and vlen-bytes codecs only (strings and bytes)" if layout == 2
               else "no Zarr v3 data type holds them")
        raise UnsupportedFeatureError(
            f"a Zarr v2 object array of the {dtype.object_codec} codec ({what}) cannot be "
            f"created in the {layout!r} layout: {why}")


def _is_v2(store: Any, path: str, opening: bool = True) -> bool:
    """Whether ``store`` has Zarr v2 documents at ``path`` or at its root.

    Opening, ``.zmetadata`` is asked first: a consolidated group is then opened from that
    one read (through :class:`zarr3c.consolidated.ReadOnce`, which keeps it).  Creating, it
    is not asked: a v2 hierarchy's root has a ``.zgroup`` (or ``.zarray``) beside it.
    """
    return any(store.exists(key) for key in _v2_keys(path, opening))


def _v2_keys(path: str, opening: bool = True) -> list[str]:
    """The Zarr v2 documents :func:`_is_v2` looks for, in its order."""
    wheres = [_prefix(path), ""] if path else [""]
    names = (CONSOLIDATED_KEY, GROUP_KEY, ARRAY_KEY) if opening else (GROUP_KEY, ARRAY_KEY)
    return [where + name for where in wheres for name in names]


def probed_keys(path: str = "", opening: bool = True) -> list[str]:
    """The keys whose existence :func:`detect_format` asks about when the store has no root
    ``zarr.json`` (a caller may learn them all with one batch first).

    Parameters
    ----------
    path
        The node's normalised path.
    opening
        As :func:`detect_format`'s.

    Returns
    -------
    list of str
        The keys, in the order :func:`detect_format` asks.

    Examples
    --------
    >>> probed_keys()
    ['.zmetadata', '.zgroup', '.zarray']
    >>> probed_keys("a")[:2]
    ['a/zarr.json', 'a/.zmetadata']
    >>> probed_keys(opening=False)
    ['.zgroup', '.zarray']
    """
    return ([f"{path}/zarr.json"] if path else []) + _v2_keys(path, opening)


def detect_format(store: Any, path: str = "", opening: bool = True) -> HierarchyFormat:
    """The format of the hierarchy in ``store``, from its root ``zarr.json``, else from the
    documents at ``path``.

    A root ``zarr.json`` whose ``zarr_format`` is 3 (or missing) holds the final v3 layout;
    ``"https://purl.org/zarr/spec/core/3.0"`` is the draft-2022 layout and
    ``"https://purl.org/zarr/spec/protocol/core/3.0"`` zarr-python 2's experimental v3 one.
    Without a root ``zarr.json``, as zarr-python 3 does: a ``zarr.json`` at ``path`` is v3,
    else ``.zarray``/``.zgroup`` at ``path`` or the root (or, ``opening``, a ``.zmetadata``)
    is Zarr v2, else (an empty store) v3.  With ``opening`` False (a node about to be
    created) ``.zmetadata`` is not asked about: one request less on an object store.
    """
    data = store.get("zarr.json")
    if data is None:
        if path and store.exists(f"{path}/zarr.json"):
            return V3Format()
        return V2Format() if _is_v2(store, path, opening) else V3Format()
    doc = load_json_object(data, source="zarr.json")
    zarr_format = doc.get("zarr_format")
    if zarr_format == CORE_URI:
        return Draft2022Format(EntryPoint.from_dict(doc, source="zarr.json"))
    if zarr_format == PROTOCOL_URI:
        return Zarr2V3Format(Zarr2V3EntryPoint.from_dict(doc, source="zarr.json"))
    if zarr_format == 3 or zarr_format is None:
        return V3Format()
    raise UnsupportedFormatError(
        f"zarr_format {zarr_format!r} is neither Zarr v3, the draft-2022 core spec "
        f"({CORE_URI!r}) nor zarr-python 2's experimental v3 protocol ({PROTOCOL_URI!r})",
        path="zarr_format", source="zarr.json",
    )


#: the layouts zarr3c writes, by their ``zarr_format`` argument
FORMATS: dict[Any, type[HierarchyFormat]] = {
    V3Format.zarr_format: V3Format,
    Draft2022Format.zarr_format: Draft2022Format,
    Zarr2V3Format.zarr_format: Zarr2V3Format,
    V2Format.zarr_format: V2Format,
}
