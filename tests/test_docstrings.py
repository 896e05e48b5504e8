"""The documentation runs and is complete.

Two checks:

- ``test_module_doctests``: the doctests of every module of the zarr3c package run and pass,
  one test per module (a module whose examples need an optional dependency that is not
  installed is skipped, naming it).
- ``test_public_docstring``: every name in ``zarr3c.__all__`` and in the ``__all__`` of the
  user-facing subpackages (``_PUBLIC_MODULES``) has a numpydoc docstring, recursing into the
  public methods and properties of the exported classes (inherited ones too, where a zarr3c
  class defines them), one test per qualified name; an object reached under several names
  is checked once, under its shortest one.  A function or method
  needs an ``Examples`` section; a ``Parameters`` section naming each parameter when it takes
  any besides ``self``/``cls``; a ``Returns`` section unless it returns None (or is
  ``__init__``); and a ``Raises`` section.  A property needs a docstring; an exception class
  in :mod:`zarr3c.errors` needs one of its own.  A constructor is documented, as numpydoc
  asks, in its class's docstring unless ``__init__`` has one of its own.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import importlib.util
import inspect
import pkgutil
import pydoc
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import zarr3c

# -- doctests ----------------------------------------------------------------------------------

#: Modules whose examples need optional dependencies, beyond what importing them needs.
_DOCTEST_NEEDS: dict[str, tuple[str, ...]] = {
    "zarr3c.dask": ("dask.array",),
    "zarr3c.stores.object_store.options": ("obstore",),
    "zarr3c.stores.object_store.store": ("obstore",),
}

_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    """Every module of the package, subpackages included (a subpackage that fails to import
    is still listed: its test reports why)."""
    names = {"zarr3c"}
    for info in pkgutil.walk_packages(zarr3c.__path__, "zarr3c.", onerror=lambda name: None):
        names.add(info.name)
    return sorted(names)


def _missing_dependency(names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that cannot be imported, or None."""
    for name in names:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ModuleNotFoundError:
            return name
    return None


def _import_or_skip(name: str) -> ModuleType:
    """Import module ``name``; skip the test when that needs an optional dependency (a module
    outside zarr3c) that is not installed."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and not exc.name.startswith("zarr3c"):
            pytest.skip(f"{name} needs {exc.name!r}, which is not installed")
        raise
    missing = _missing_dependency(_DOCTEST_NEEDS.get(name, ()))
    if missing is not None:
        pytest.skip(f"the examples of {name} need {missing!r}, which is not installed")
    return module


@pytest.mark.parametrize("module_name", _module_names())
def test_module_doctests(module_name: str, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    module = _import_or_skip(module_name)
    monkeypatch.chdir(tmp_path)  # examples that write relative paths write there
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    report: list[str] = []
    failed = 0
    for test in finder.find(module, module_name):
        failed += runner.run(test, out=report.append).failed
    if failed:
        pytest.fail(f"{failed} doctest example(s) of {module_name} failed:\n" + "".join(report),
                    pytrace=False)


# -- public docstrings ---------------------------------------------------------------------------

#: Dunder methods documented like any other method; other dunders are exempt.
_CHECKED_DUNDERS = ("__init__", "__getitem__", "__setitem__")

#: Public functions that cannot raise, for which an empty Raises section would mislead.
_RAISES_NOTHING = {
    "zarr3c.get_num_threads",
    "zarr3c.Group.__init__",
    "zarr3c.Store.__init__",
    # a regex match on a str, False for anything else
    "zarr3c.stores.is_url",
    # integer sums over the sizes given
    "zarr3c.codecs.sharding.pack_runs",
    # these keep their arguments (or set counters) and allocate nothing
    "zarr3c.codecs.sharding.PartArena.__init__",
    "zarr3c.codecs.sharding.PartArena.reset",
    "zarr3c.codecs.sharding.StoreRanges.__init__",
    "zarr3c.UnreadableNode.__init__",
    # copies the default settings into a dict
    "zarr3c.settings.Config.__init__",
}


def _defined_in_zarr3c(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("zarr3c")


def _class_members(cls: type) -> Iterator[tuple[str, Any]]:
    """(name, attribute as stored in the class dict) of the public methods and properties of
    ``cls``, its own and inherited ones defined in a zarr3c class."""
    for name in sorted(dir(cls)):
        if name.startswith("_") and name not in _CHECKED_DUNDERS:
            continue
        owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
        if owner is None or not _defined_in_zarr3c(owner):
            continue
        raw = owner.__dict__[name]
        if (isinstance(raw, property | functools.cached_property | staticmethod | classmethod)
                or inspect.isfunction(raw)):
            yield name, raw


#: The subpackages whose ``__all__`` is checked besides ``zarr3c.__all__``.
_PUBLIC_MODULES = (
    "zarr3c",
    "zarr3c.stores",
    "zarr3c.codecs",
    "zarr3c.codecs.sharding",
    "zarr3c.metadata",
    "zarr3c.chunk_grids",
    "zarr3c.chunk_key_encodings",
    "zarr3c.errors",
    "zarr3c.api_convenience",
    "zarr3c.copy_convenience",
    "zarr3c.settings",
)
# Importing the xarray integration imports xarray: checked where xarray is installed.
if importlib.util.find_spec("xarray") is not None:
    _PUBLIC_MODULES += ("zarr3c.xarray",)


def _is_exception(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseException)


def _candidates() -> Iterator[tuple[str, str, Any, type | None, Any]]:
    """(qualified name, kind, object, owning class, identity key) of every name the check
    reaches, in the order of ``_PUBLIC_MODULES`` and their ``__all__``; constants and
    typing aliases, which carry no docstring of their own, are left out."""
    for module_name in _PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            qual = f"{module_name}.{name}"
            if inspect.ismodule(obj):
                for cname, cls in vars(obj).items():
                    if _is_exception(cls) and cls.__module__ == obj.__name__:
                        yield f"{qual}.{cname}", "exception", cls, None, cls
            elif _is_exception(obj):
                yield qual, "exception", obj, None, obj
            elif isinstance(obj, type):
                yield qual, "class", obj, None, obj
                for mname, raw in _class_members(obj):
                    if isinstance(raw, property | functools.cached_property):
                        yield f"{qual}.{mname}", "property", raw, obj, raw
                    else:
                        # a constructor without a docstring of its own is documented by
                        # its class's docstring, so it is a different check per class
                        key = (raw, obj) if mname == "__init__" else raw
                        yield f"{qual}.{mname}", "method", getattr(obj, mname), obj, key
            elif inspect.isroutine(obj):
                yield qual, "function", obj, None, obj


def _public_objects() -> dict[str, tuple[str, Any, type | None]]:
    """Qualified name -> (kind, object, owning class) of everything the check covers; kind
    is "function", "method", "property", "class" or "exception".  An object reached under
    several names (a class exported by ``zarr3c`` and by its subpackage, a method inherited
    by several exported classes) is checked once, under its shortest name (the first
    reached, among names as short)."""
    chosen: dict[Any, tuple[str, str, Any, type | None]] = {}
    for qual, kind, obj, owner, key in _candidates():
        ident = tuple(id(k) for k in key) if isinstance(key, tuple) else id(key)
        if ident not in chosen or len(qual) < len(chosen[ident][0]):
            chosen[ident] = (qual, kind, obj, owner)
    return {qual: (kind, obj, owner) for qual, kind, obj, owner in chosen.values()}


_PUBLIC = _public_objects()


def _section(doc: str, title: str) -> str | None:
    """The text of numpydoc section ``title`` (None when the docstring has none)."""
    match = re.search(rf"^{title}\n-{{{len(title)}}}-*\n(.*?)(?=^\S[^\n]*\n-{{3,}}\n|\Z)",
                      doc, re.M | re.S)
    return None if match is None else match.group(1)


def _entry_names(section: str) -> set[str]:
    """The names a numpydoc Parameters section documents: its unindented entry lines
    (``name : type``, ``x, y : type``, ``**kwargs``)."""
    names = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            for name in line.split(" : ", 1)[0].split(","):
                names.add(name.strip().lstrip("*"))
    return names


def _parameters(func: Callable[..., Any]) -> list[str]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def _returns_none(func: Callable[..., Any]) -> bool:
    try:
        annotation = inspect.signature(func).return_annotation
    except (TypeError, ValueError):
        return False
    return annotation is None or annotation == "None"


def _function_problems(qual: str, func: Callable[..., Any], doc: str) -> list[str]:
    """What the numpydoc docstring ``doc`` of ``func`` lacks."""
    problems = []
    if _section(doc, "Examples") is None or ">>>" not in (_section(doc, "Examples") or ""):
        problems.append("no Examples section with a doctest")
    params = _parameters(func)
    documented = _section(doc, "Parameters")
    if params and documented is None:
        problems.append(f"no Parameters section (parameters: {', '.join(params)})")
    elif params and documented is not None:
        missing = [p for p in params if p not in _entry_names(documented)]
        if missing:
            problems.append(f"parameters not documented: {', '.join(missing)}")
    name = qual.rsplit(".", 1)[-1]
    if name != "__init__" and not _returns_none(func) and _section(doc, "Returns") is None:
        problems.append("no Returns section")
    if qual not in _RAISES_NOTHING and _section(doc, "Raises") is None:
        problems.append("no Raises section")
    return problems


@pytest.mark.parametrize("qualname", sorted(_PUBLIC))
def test_public_docstring(qualname: str) -> None:
    kind, obj, owner = _PUBLIC[qualname]
    if kind in ("class", "exception"):
        # its own docstring: inspect.getdoc would find a base class's (Exception's)
        doc = obj.__dict__.get("__doc__")
        assert doc and doc.strip(), f"{qualname} has no docstring"
        return
    if kind == "property":
        doc = inspect.getdoc(obj)
        assert doc, f"{qualname} has no docstring"
        return
    doc = inspect.getdoc(obj)
    if qualname.endswith(".__init__"):
        own = obj.__doc__ if _defined_in_zarr3c(obj) else None
        doc = inspect.cleandoc(own) if own else inspect.getdoc(owner)
    assert doc, f"{qualname} has no docstring"
    problems = _function_problems(qualname, obj, doc)
    assert not problems, f"{qualname}: " + "; ".join(problems)


def test_create_array_help_names_every_parameter() -> None:
    """``help(zarr3c.create_array)`` explains every parameter, not only in the signature."""
    text = pydoc.plain(pydoc.render_doc(zarr3c.create_array))
    body = inspect.getdoc(zarr3c.create_array)
    assert body is not None and body.splitlines()[0] in text
    documented = _entry_names(_section(body, "Parameters") or "")
    for name in inspect.signature(zarr3c.create_array).parameters:
        assert name in documented, f"help(zarr3c.create_array) does not explain {name!r}"
