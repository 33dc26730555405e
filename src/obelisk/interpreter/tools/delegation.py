"""Which tools a delegate's child loop may use: a delegate call's ``_tools`` (docs/loop.md,
"Delegates").

A delegate call (its tool declared with ``_delegate``) runs a child execution loop
whose input is the call's arguments, often text from outside.  ``_tools`` bounds
what that loop can do:

- absent: every tool of the parent's registry that does not write the world (no
  ``"write"`` in its ``effects``);
- a list of tool names, ``["lookup", "search"]``: exactly those;
- an object ``{"allow": [...], "deny": [...]}``: ``allow`` (default: the tools of
  the default above) less ``deny``; both keys are optional, no other key is taken.

:func:`delegate_tools` works the names out, and :func:`tools_problems` says what is
wrong with a ``_tools`` value (the checker reports each as an ``invalid_tools``
diagnostic).  :class:`DelegateRegistry` is the child's registry: the allowed tools,
and the names it withholds, so that a child answer that calls one of them gets an
``unknown_tool`` diagnostic saying so (fed back as a correction, never run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import json_kind

__all__ = [
    "DelegateRegistry",
    "ToolsProblem",
    "delegate_tools",
    "tools_problems",
    "withheld_message",
    "writes_world",
]

_KEYS = ("allow", "deny")
_SHAPE = 'a list of tool names or an object {"allow": [...], "deny": [...]}'


@dataclass(frozen=True, slots=True)
class ToolsProblem:
    """One problem of a ``_tools`` value: ``path`` inside the call (``_tools[1]``,
    ``_tools.deny[0]``) and the ``message``."""

    path: str
    message: str


def writes_world(tool: Tool) -> bool:
    """Whether ``tool`` declares a ``"write"`` effect on some world resource (such a
    tool is left out of a delegate's tools unless ``_tools`` lists it)."""
    return "write" in tool.effects.values()


def _names(value: Any, path: str, registry: Registry, out: list[ToolsProblem]) -> list[str]:
    """The tool names of the list ``value`` at ``path``, each one known to
    ``registry``; every problem goes to ``out``."""
    if not isinstance(value, list):
        out.append(ToolsProblem(path, f"must be a list of tool names, found {json_kind(value)}"))
        return []
    names: list[str] = []
    for position, item in enumerate(value):
        where = f"{path}[{position}]"
        if not isinstance(item, str):
            out.append(ToolsProblem(where, f"must be a tool name, found {json_kind(item)}"))
        elif isinstance(registry, DelegateRegistry) and item in registry.withheld:
            out.append(ToolsProblem(where, withheld_message(item, registry)))
        elif item not in registry:
            close = registry.suggest(item)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            out.append(ToolsProblem(where, f"unknown tool '{item}'{hint}"))
        else:
            names.append(item)
    return names


def withheld_message(name: str, registry: DelegateRegistry) -> str:
    """Why ``name`` is not in a delegate's registry, naming the tools that are."""
    available = ", ".join(registry.names()) or "none"
    return (
        f"tool '{name}' is not available here: {registry.withheld[name]} (available: {available})"
    )


def _parsed(spec: Any, registry: Registry, out: list[ToolsProblem]) -> list[str]:
    """The allowed names of a ``_tools`` value that is not ``None`` (problems to ``out``)."""
    if isinstance(spec, list):
        return _names(spec, "_tools", registry, out)
    if not isinstance(spec, Mapping):
        out.append(ToolsProblem("_tools", f"must be {_SHAPE}, found {json_kind(spec)}"))
        return []
    for key in spec:
        if key not in _KEYS:
            out.append(ToolsProblem("_tools", f'unknown key {key!r}: only "allow" and "deny"'))
    if "allow" in spec:
        allowed = _names(spec["allow"], "_tools.allow", registry, out)
    else:
        allowed = default_tools(registry)
    denied = set(_names(spec.get("deny", []), "_tools.deny", registry, out))
    return [name for name in allowed if name not in denied]


def default_tools(registry: Registry) -> list[str]:
    """The tools a delegate gets without ``_tools``: those that do not write the world."""
    return [tool.name for tool in registry if not writes_world(tool)]


def tools_problems(spec: Any, registry: Registry) -> list[ToolsProblem]:
    """What is wrong with the ``_tools`` value ``spec`` against ``registry`` (the
    parent's tools): its shape, and names that are not tools.  ``[]`` when fine."""
    out: list[ToolsProblem] = []
    if spec is not None:
        _parsed(spec, registry, out)
    return out


def delegate_tools(spec: Any, registry: Registry) -> list[str]:
    """The names of the tools a delegate call with ``_tools`` = ``spec`` (``None``:
    absent) may use, in ``registry``'s order.  Raises ``ValueError`` naming the first
    problem of a bad ``spec`` (the checker reports it before a plan runs)."""
    if spec is None:
        return default_tools(registry)
    out: list[ToolsProblem] = []
    allowed = set(_parsed(spec, registry, out))
    if out:
        raise ValueError(f"{out[0].path}: {out[0].message}")
    return [name for name in registry.names() if name in allowed]


class DelegateRegistry(Registry):
    """A delegate's child registry: the allowed tools of ``parent``, and ``withheld``,
    the parent's other tool names mapped to why they are not there (``unknown_tool``
    diagnostics say it)."""

    __slots__ = ("withheld",)

    def __init__(self, parent: Registry, allowed: Iterable[str], why: str) -> None:
        keep = set(allowed)
        super().__init__(tool for tool in parent if tool.name in keep)
        inherited = parent.withheld if isinstance(parent, DelegateRegistry) else {}
        self.withheld: dict[str, str] = {
            **inherited,
            **{name: why for name in parent.names() if name not in keep},
        }
