"""Pinning a run to its plan and tools (docs/durable.md, docs/approvals.md).

A journal pins a durable run with :func:`pins`: the hash of the plan and
:func:`tool_pins` of every tool it calls; :func:`changes` says what of that changed
in the tools given to resume (:class:`~obelisk.errors.RunMismatch`).  The loop's
journal pins each turn the same way.

A paused run kept in memory is pinned as a journal pins a durable run's:
:func:`live_pins` takes what :func:`tool_pins` takes of every tool the plan calls
(schemas and the options that change what a plan does) and, since memory can keep what a
journal cannot, the tools' functions; :func:`live_changes` says what of that changed in
the tools given to resume."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from obelisk.errors import JournalCorrupted
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.durable.data import canonical
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["changes", "live_changes", "live_pins", "pins", "sha", "tool_pins"]


def sha(value: Any) -> str:
    """The SHA-256 (hex) of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical(value).encode("ascii")).hexdigest()


def tool_pins(tool: Tool) -> dict[str, str]:
    """What a run is pinned to of one tool: hashes of its parameters schema, its
    output schema, and the options that change what a plan does (outcomes, effects,
    latent, delegate and scopes, pure, idempotent, requires approval, and output
    validation when the tool sets it)."""
    rule = tool.requires_approval
    options = {
        "outcomes": list(tool.outcomes),
        "effects": tool.effects,
        "latent": tool.latent,
        "delegate": tool.delegate,
        "scopes": list(tool.scopes),
        "pure": tool.pure,
        "idempotent": tool.idempotent,
        "requires_approval": rule if isinstance(rule, bool) else "a function",
    }
    if tool.output_validation is not None:  # absent otherwise: older runs' pins still match
        options["output_validation"] = tool.output_validation
    return {
        "parameters": sha(tool.parameters),
        "output schema": sha(tool.output_schema),
        "options": sha(options),
    }


def pins(plan_data: Any, plan: Plan, registry: Registry) -> tuple[dict[str, Any], str]:
    """``(pinned, fingerprint)``: the hash of the plan (its canonical JSON) and
    :func:`tool_pins` of every tool it calls; the fingerprint is the SHA-256 (hex) of
    both."""
    names = sorted({call.tool for call in plan.calls})
    pinned = {
        "plan": sha(plan_data),
        "tools": {name: tool_pins(registry[name]) for name in names if name in registry},
    }
    return pinned, sha(pinned)


def changes(pinned: Mapping[str, Any], registry: Registry) -> list[str]:
    """What changed of the pinned tools in ``registry``: one phrase per tool."""
    found = []
    tools = pinned.get("tools")
    if not isinstance(tools, dict):
        raise JournalCorrupted("the journal's pins name no tools")
    for name, parts in sorted(tools.items()):
        tool = registry.get(name)
        if tool is None:
            found.append(f"tool {name!r} is missing")
            continue
        now = tool_pins(tool)
        changed = [
            part for part in now if not isinstance(parts, dict) or parts.get(part) != now[part]
        ]
        if changed:
            found.append(f"tool {name!r} changed its {' and '.join(changed)}")
    return found


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
