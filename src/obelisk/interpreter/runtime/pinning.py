"""Pinning a paused run kept in memory to its tools, as a journal pins a durable
run's (docs/approvals.md, docs/durable.md).

:func:`live_pins` takes what :func:`~obelisk.interpreter.runtime.durable.tool_pins`
takes of every tool the plan calls (schemas and the options that change what a plan
does) and, since memory can keep what a journal cannot, the tools' functions;
:func:`live_changes` says what of that changed in the tools given to resume.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.durable import changes, tool_pins
from obelisk.interpreter.tools.registry import Registry

__all__ = ["live_changes", "live_pins"]


def live_pins(plan: Plan, registry: Registry) -> dict[str, Any]:
    """What a run kept in memory is pinned to when it pauses: :func:`tool_pins` of
    every tool its plan calls, as a journal pins them (``"tools"``), and each of
    those tools' functions and ``requires_approval`` predicates themselves
    (``"functions"``, ``"predicates"``: memory can keep what a journal cannot)."""
    names = sorted({call.tool for call in plan.calls if call.tool in registry})
    return {
        "tools": {name: tool_pins(registry[name]) for name in names},
        "functions": {name: registry[name].function for name in names},
        "predicates": {name: registry[name].requires_approval for name in names},
    }


def live_changes(pinned: Mapping[str, Any], registry: Registry) -> list[str]:
    """What changed of :func:`live_pins` in ``registry``: :func:`changes`, and one
    phrase per tool whose function, or ``requires_approval`` predicate, is another
    (``==``, so a bound method of the same object is the same function)."""
    found = changes(pinned, registry)
    for name, function in sorted(pinned.get("functions", {}).items()):
        tool = registry.get(name)
        if tool is not None and tool.function != function:
            found.append(f"tool {name!r} runs another function")
    for name, rule in sorted(pinned.get("predicates", {}).items()):
        tool = registry.get(name)
        if tool is not None and callable(rule) and tool.requires_approval != rule:
            found.append(f"tool {name!r} asks for approval with another predicate")
    return found
