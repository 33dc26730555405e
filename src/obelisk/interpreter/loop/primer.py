"""A short primer of the plan language, with one worked example built from the
request's own tools (docs/loop.md, "The primer").

A small model copies an example far better than it follows a description.  The
example answer uses two of the loop's tools: the first reads its arguments from the
input (``"†input.x"``) and writes its result at an output path with an alternative
for its error (``"†state.a || †state.a_error"``); the second reads the first's
result by reference (``"†state.a"``); the output is a reference to the second's.
Tools that run (not latent, no delegate) and take arguments are preferred.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["primer_text"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")


def _rank(tool: Tool) -> tuple[bool, bool]:
    """Sort key: tools that run and take arguments first."""
    return (tool.latent or tool.delegate, not _arguments(tool))


def _arguments(tool: Tool) -> list[str]:
    """The tool's required arguments, else its first argument, else none."""
    properties = list((tool.parameters.get("properties") or {}).keys())
    required = [name for name in tool.parameters.get("required") or () if name in properties]
    return required or properties[:1]


def _key(tool: Tool, fallback: str) -> str:
    """A state key named after ``tool`` when its name is a plain identifier."""
    return tool.name if _NAME.fullmatch(tool.name) else fallback


def _call(tool: Tool, first: str | None, output_path: str, mode: str) -> dict[str, Any]:
    """One example call: its first argument is ``first`` (a reference), the others
    read the input."""
    call: dict[str, Any] = {"_tool": tool.name}
    for n, name in enumerate(_arguments(tool)):
        call[name] = first if n == 0 and first is not None else f"†input.{name}"
    if tool.latent and not tool.delegate and mode == "eager":
        call["_output"] = "<the result you write>"
    call["_outputPath"] = output_path
    return call


def primer_text(registry: Registry, mode: Literal["eager", "lazy"] = "eager") -> str | None:
    """The primer for ``registry``'s tools (a few sentences and one example answer,
    as JSON text), or ``None`` for a registry without tools.

    >>> import obelisk
    >>> @obelisk.tool
    ... def lookup(order_id: str) -> dict:
    ...     "The order."
    ...     return {}
    >>> print(primer_text(obelisk.Registry([lookup])).splitlines()[1])
    {"calls": [{"_tool": "lookup", "order_id": "†input.order_id", "_outputPath": \
"†state.lookup || †state.lookup_error"}], "output": "†state.lookup"}
    """
    tools = sorted(registry, key=_rank)
    if not tools:
        return None
    a = tools[0]
    a_key = _key(a, "first")
    calls = [_call(a, None, f"†state.{a_key} || †state.{a_key}_error", mode)]
    last = a_key
    if len(tools) > 1:
        b = tools[1]
        b_key = _key(b, "second")
        b_key = b_key if b_key != a_key else "second"
        calls.append(_call(b, f"†state.{a_key}", f"†state.{b_key}", mode))
        last = b_key
    example = json.dumps({"calls": calls, "output": f"†state.{last}"}, ensure_ascii=False)
    lines = [
        "An example answer with your tools (the values it reads are made up):",
        example,
        f'- "†input.x" is a reference: the value at x in the input. "_outputPath" '
        f'"†state.{a_key} || †state.{a_key}_error" writes the result of {a.name} at '
        f"state.{a_key}, or, if it fails, its error at state.{a_key}_error (an "
        "alternative). A result with no _outputPath is lost.",
    ]
    if len(tools) > 1 and _arguments(tools[1]):
        lines.append(
            f'- {tools[1].name} reads that result by reference, "†state.{a_key}": it runs '
            f"once {a.name} has succeeded. Never copy a value you can reference."
        )
    lines.append(
        f'- "output": "†state.{last}" is read once the calls have run. Write "output": '
        "null instead when you must see results before you can finish."
    )
    return "\n".join(lines)
