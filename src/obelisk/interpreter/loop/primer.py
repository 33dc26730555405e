"""A short primer of the plan language, with one worked example built from the
request's own tools (docs/loop.md, "The primer").

A small model copies an example far better than it follows a description.  The
example answer uses two of the loop's tools: the first reads its arguments from the
input (``"†input.x"``) and writes its result at an output path with an alternative
for its error (``"†state.a || †state.a_error"``, or one path per declared outcome);
the second reads the first's result, or a field of it, by reference
(``"†state.a"``) where its type fits; the output is a reference to the second's.
Tools that run (not latent, no delegate), take arguments and declare no outcomes
are preferred.  The example is a plan ``check`` accepts.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Literal

from obelisk.errors import UsageError
from obelisk.interpreter.analysis.schema_types import (
    STAND_IN_UNKNOWN,
    admitted_types,
    stand_in,
    types_compatible,
)
from obelisk.interpreter.simulate.samples import SchemaSampler
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["primer_text"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")


def _rank(tool: Tool) -> tuple[bool, bool, bool]:
    """Sort key: tools that run, take arguments and declare no outcomes first."""
    return (tool.latent or tool.delegate, not _arguments(tool), bool(tool.outcomes))


def _arguments(tool: Tool) -> list[str]:
    """The tool's required arguments, else its first argument, else none."""
    properties = list((tool.parameters.get("properties") or {}).keys())
    required = [name for name in tool.parameters.get("required") or () if name in properties]
    return required or properties[:1]


def _key(tool: Tool, fallback: str) -> str:
    """A state key named after ``tool`` when its name is a plain identifier."""
    return tool.name if _NAME.fullmatch(tool.name) else fallback


def _feeds(a: Tool, b: Tool) -> tuple[str, str] | None:
    """``(argument of b, field)``: an argument of ``b`` that ``a``'s result, or one
    field of it (``".name"``), fits by type; ``None`` when there is none."""
    out = a.output_schema
    produced = admitted_types(out, out) if out is not None else None
    fields = (out or {}).get("properties") or {}
    for name in _arguments(b):
        accepted = admitted_types(b.parameters["properties"][name], b.parameters)
        if types_compatible(produced, accepted):
            return name, ""
        for field, schema in fields.items():
            if _NAME.fullmatch(field) and types_compatible(admitted_types(schema, out), accepted):
                return name, f".{field}"
    return None


def _writes(tool: Tool, key: str, mode: str, alternative: bool) -> tuple[str, str]:
    """``(_outputPath, the path a later call reads)``: one alternative per declared
    outcome; else, with ``alternative``, the result or its error."""
    if tool.outcomes:
        paths = [f"†state.{key}_{_plain(outcome)}" for outcome in tool.outcomes]
        return " || ".join(paths), paths[0]
    if alternative and not _writes_output(tool, mode):
        return f"†state.{key} || †state.{key}_error", f"†state.{key}"
    return f"†state.{key}", f"†state.{key}"


def _plain(name: str) -> str:
    return name if _NAME.fullmatch(name) else "outcome"


def _writes_output(tool: Tool, mode: str) -> bool:
    return tool.latent and not tool.delegate and mode == "eager"


def _call(tool: Tool, feed: tuple[str, str] | None, path: str, mode: str) -> dict[str, Any]:
    """One example call: the argument ``feed`` names reads ``feed``'s reference, the
    others read the input."""
    call: dict[str, Any] = {"_tool": tool.name}
    for name in _arguments(tool):
        call[name] = feed[1] if feed is not None and name == feed[0] else f"†input.{name}"
    if _writes_output(tool, mode):
        call["_output"] = _sample(tool.output_schema)
    call["_outputPath"] = path
    return call


def _sample(schema: dict[str, Any] | None) -> Any:
    """A value that fits ``schema``, the same every time (``None`` for no schema)."""
    if schema is None:
        return None
    value = stand_in(schema, schema)
    if value is not STAND_IN_UNKNOWN:
        return value
    try:
        return SchemaSampler(schema).sample(random.Random(0))
    except UsageError:  # a pattern or format the sampler does not model
        return None


def _pair(tools: list[Tool]) -> tuple[Tool, Tool | None, tuple[str, str] | None]:
    """The example's first tool, a second one that reads its result, and how."""
    for a in tools:
        for b in tools:
            if b is not a:
                feed = _feeds(a, b)
                if feed is not None:
                    return a, b, feed
    return tools[0], None, None


def _field(tool: Tool | None, read: str) -> str:
    """``read`` and one plain field of ``tool``'s object result (``"†state.b.id"``),
    or ``read`` alone when its result has none."""
    fields = ((tool.output_schema or {}).get("properties") or {}) if tool is not None else {}
    plain = [name for name in fields if _NAME.fullmatch(name)]
    return f"{read}.{plain[0]}" if plain else read


def primer_text(registry: Registry, mode: Literal["eager", "lazy"] = "eager") -> str | None:
    """The primer for ``registry``'s tools (a few sentences and one example answer,
    as JSON text, on the second line), or ``None`` for a registry without tools.

    In eager mode the example answer calls and goes on (``"output": null``), and a
    second one finishes with no calls, reading a field of the results by reference;
    in lazy mode the one answer holds the output.  The example writes no error
    alternative (a small model copied it onto every call), the text says how.

    >>> import obelisk
    >>> @obelisk.tool
    ... def lookup(order_id: str) -> dict:
    ...     "The order."
    ...     return {}
    >>> print(primer_text(obelisk.Registry([lookup])).splitlines()[1])
    {"calls": [{"_tool": "lookup", "order_id": "†input.order_id", "_outputPath": \
"†state.lookup"}], "output": null}
    """
    tools = sorted(registry, key=_rank)
    if not tools:
        return None
    a, b, feed = _pair(tools)
    a_key = _key(a, "first")
    a_path, a_read = _writes(a, a_key, mode, alternative=False)
    calls = [_call(a, None, a_path, mode)]
    last, last_tool = a_read, a
    if b is not None and feed is not None:
        b_key = _key(b, "second") if _key(b, "second") != a_key else "second"
        b_path, last = _writes(b, b_key, mode, alternative=False)
        calls.append(_call(b, (feed[0], a_read + feed[1]), b_path, mode))
        last_tool = b
    eager = mode == "eager"
    example = json.dumps({"calls": calls, "output": None if eager else last}, ensure_ascii=False)
    lines = [
        "An example answer with your tools (the values it reads are made up):",
        example,
        f'- "†input.x" is a reference: the value at x in the input. "_outputPath": '
        f'"{a_path}" says where the result of {a.name} is written: '
        + (
            "one path per outcome, in order (alternatives)."
            if a.outcomes
            else f"at {a_read[1:]}. To keep a failure's error instead of stopping, give an "
            f'alternative: "{a_read} || {a_read}_error".'
        )
        + " A result with no _outputPath is lost.",
    ]
    if b is not None and feed is not None:
        lines.append(
            f'- {b.name} reads that result by reference, "{a_read}{feed[1]}": it runs once '
            f"{a.name} has succeeded. Never copy a value you can reference."
        )
    if eager:
        finish = json.dumps({"calls": [], "output": _field(last_tool, last)}, ensure_ascii=False)
        lines.append(
            "- The next request's state holds the results. Once it has what you need, "
            "finish with no calls and an output that reads the results, or one field of "
            f"them, by reference, never a made-up value: {finish}"
        )
    else:
        lines.append(
            f'- "output": "{last}" is read once the calls have run. Write "output": null '
            "instead when you must see results before you can finish."
        )
    return "\n".join(lines)
