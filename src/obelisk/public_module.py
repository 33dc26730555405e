"""Public classes and functions report their public module (docs/architecture.md).

``obelisk.Loop.__module__ == "obelisk"``, as httpx and trio do it: reprs, tracebacks,
documentation tools and pickles name the path users import (``obelisk.PlanError``),
not the private module that defines it (``obelisk.errors.PlanError``).  A pickle
made before still loads: the defining modules keep every name.

Moving ``__module__`` alone would break two tools that look a class's names up in
its module, so :func:`report_public_module` keeps them working:

* ``typing.get_type_hints`` (and pydantic, which reads annotations the same way)
  evaluates a class's string annotations in the module ``__module__`` names; the
  class's own annotations are evaluated once, in the module that defines it, before
  ``__module__`` moves (those that do not resolve there stay strings, as before);
* :mod:`doctest` finds an object's examples only in the module ``__module__`` names;
  the defining module lists it in its ``__test__`` mapping, so its examples keep
  running where they are written (tests/unit/api/test_doctests.py).

``obelisk/__init__.py`` rehomes its names when it is imported, the lazy ones (the
loop, dry runs, ``ScriptedModel``) when they are first used through ``obelisk``;
``obelisk/testing/__init__.py`` rehomes its own to ``obelisk.testing``.  This
module imports nothing from obelisk.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import typing
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["report_public_module"]


def report_public_module(namespace: Mapping[str, Any], names: Iterable[str], module: str) -> None:
    """Make every class and function among ``namespace[name]`` (``name`` in
    ``names``) that a private module of obelisk defines report ``module`` as its
    ``__module__``.  Other values (type aliases, constants, objects defined
    outside obelisk or already reporting a public module) are left as they are."""
    for name in names:
        value = namespace[name]
        if not (isinstance(value, type) or inspect.isfunction(value)):
            continue
        home = value.__module__
        defining = sys.modules.get(home)
        if home == module or not home.startswith("obelisk.") or defining is None:
            continue
        if isinstance(value, type):
            _resolve_own_annotations(value)
        _keep_doctests(defining, value)
        value.__module__ = module


def _resolve_own_annotations(cls: type) -> None:
    """Replace the string annotations of ``cls`` itself by what they name in the
    module that defines it (all or none: a class whose hints do not resolve keeps
    its strings, and ``get_type_hints`` fails on it as it did before), and so do the
    types of a dataclass's fields."""
    own = inspect.get_annotations(cls)
    if not own or not any(isinstance(hint, str) for hint in own.values()):
        return
    with contextlib.suppress(Exception):  # NameError, TypeError: names only a type checker sees
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except TypeError:  # Python 3.10 refuses some hints as a whole (InitVar[bool])
            hints = _one_by_one(cls, own)
        cls.__annotations__ = {key: hints.get(key, hint) for key, hint in own.items()}
        # pydantic reads a dataclass's field types from its fields, in ``__module__``
        for key, field in getattr(cls, "__dataclass_fields__", {}).items():
            if isinstance(field.type, str) and key in hints:
                field.type = hints[key]


def _one_by_one(cls: type, own: dict[str, Any]) -> dict[str, Any]:
    """``cls``'s own string annotations evaluated one by one in its defining module
    (those that do not evaluate are left out)."""
    namespace = dict(vars(sys.modules[cls.__module__]))
    hints: dict[str, Any] = {}
    for key, hint in own.items():
        if not isinstance(hint, str):
            hints[key] = hint
            continue
        with contextlib.suppress(Exception):
            hints[key] = eval(hint, namespace)  # our own annotations, as typing would
    return hints


def _keep_doctests(defining: ModuleType, value: Any) -> None:
    """List ``value`` in the ``__test__`` mapping of the module that defines it."""
    tests = defining.__dict__.setdefault("__test__", {})
    tests.setdefault(value.__qualname__, value)
