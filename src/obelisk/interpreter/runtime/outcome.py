"""From a tool's result to the writes it makes (docs/language.md, docs/semantics.md).

A result is turned into JSON data (:func:`json_result`): pydantic models,
dataclasses, enums, dates and times (ISO 8601 strings), UUIDs, decimals (strings),
tuples and sets (lists) become what ``pydantic_core.to_jsonable_python`` makes of
them, so the state only ever holds JSON.  A bare value goes to the first
alternative of the call's ``_outputPath``; an
:class:`~obelisk.interpreter.tools.options.Outcome` picks its alternative by
index or by a name the tool declares; a raised exception goes to the last
alternative (the error arm) when the call has two or more and the tool declares
no ``outcomes``.  Each alternative may fan out (``a && b``): the same value is
written to every target.  The value is validated before anything is written: as
returned, against a function's return annotation (pydantic, which honours the
model's own settings such as ``strict``), or as JSON data, against a JSON output
schema.

Copies: the conversion makes obelisk's own copy of the result, and that copy is
what the state keeps (``State.write_many(..., owned=True)``); the write log and
the call record get one more copy, which never shares objects with the state.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import to_json, to_jsonable_python

from obelisk.errors import OutcomeError, OutputValidationError
from obelisk.grammar import Reference
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Writes", "error_arm", "error_record", "json_result", "result_writes", "writes_for"]

Writes = list[tuple[Reference, Any]]
"""The writes of one call: ``(target, value)`` pairs, committed all or nothing."""


def error_record(exc: BaseException) -> dict[str, Any]:
    """``{"type": <exception class name>, "message": str(exc)}``: a call's ``error``."""
    return {"type": type(exc).__name__, "message": str(exc)}


class _NotJSON(Exception):
    """Raised by the conversion's fallback: ``args[0]`` is the type's name."""


def _refuse(value: Any) -> Any:
    raise _NotJSON(type(value).__qualname__)


_SCALARS = (str, int, float, bool, type(None))


def json_result(tool: Tool, value: Any) -> Any:
    """``value`` as JSON data: a new object that shares no container with ``value``
    (scalars are returned as they are).

    Uses ``pydantic_core.to_jsonable_python`` (aliases as in the tool's JSON
    schema; dates and times as ISO 8601 strings; UUIDs and decimals as strings;
    tuples, sets and frozensets as lists, sets in iteration order; bytes as UTF-8
    text; non-string dict keys as strings).  Raises
    :class:`~obelisk.errors.OutputValidationError` when a part of it has no JSON
    form: ``the output of make_socket is not JSON data: socket is not JSON
    serializable``, or ``the output of price is not JSON data: nan at items[2].cost``
    (NaN and infinities are not JSON; docs/semantics.md, "Values are JSON data").
    """
    if type(value) in _SCALARS:
        if type(value) is float and not math.isfinite(value):
            raise OutputValidationError(f"the output of {tool.name} is not JSON data: {value}")
        return value
    try:
        converted = to_jsonable_python(value, fallback=_refuse)
    except _NotJSON as exc:
        raise OutputValidationError(
            f"the output of {tool.name} is not JSON data: {exc.args[0]} is not JSON serializable"
        ) from None
    except Exception as exc:  # a serializer of the value's own failed, a cycle, bad UTF-8
        raise OutputValidationError(
            f"the output of {tool.name} is not JSON data: {type(exc).__name__}: {exc}"
        ) from None
    where = _non_finite(converted)
    if where is not None:
        raise OutputValidationError(f"the output of {tool.name} is not JSON data: {where}")
    return converted


def _non_finite(value: Any) -> str | None:
    """Where ``value`` (JSON data) holds NaN or an infinity, e.g. ``nan at [2].price``,
    or ``None``.  pydantic-core writes the whole value in one pass first; only text that
    could hold one (``NaN``, ``Infinity``) is walked."""
    try:
        text = to_json(value, inf_nan_mode="constants")
    except Exception:
        text = b"NaN"
    if b"NaN" not in text and b"Infinity" not in text:
        return None
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if type(item) is float and not math.isfinite(item):
            return f"{item} at {path}" if path else str(item)
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def result_writes(call: Call, tool: Tool, output: Any) -> tuple[Any, Writes]:
    """``(value, writes)``: the result as JSON data (:func:`json_result`; an
    ``Outcome``'s value) and the writes it makes: its alternative's targets, each
    given that value (one object for every target: the state copies repeats).
    A tool's return annotation checks the value as returned, before conversion
    (:attr:`Tool.typed_output`); a JSON output schema checks the JSON data.

    Raises :class:`~obelisk.errors.OutcomeError` for an ``Outcome`` naming an
    alternative the call does not have, and
    :class:`~obelisk.errors.OutputValidationError` when the value is not JSON data
    or does not fit the tool's output schema.  A call without ``_outputPath``
    writes nothing, whatever the outcome (docs/language.md, docs/semantics.md).
    """
    alternatives = call.alternatives
    chosen: int | str = 0
    value = output
    if isinstance(output, Outcome):
        value = output.value
        chosen = tool.outcomes.index(output.k) if output.k in tool.outcomes else output.k
        if alternatives and (
            not isinstance(chosen, int)
            or isinstance(chosen, bool)
            or not 0 <= chosen < len(alternatives)
        ):
            count = len(alternatives)
            raise OutcomeError(
                f"{call.label} returned Outcome({output.k!r}, ...), but its _outputPath has "
                f"{count} alternative{'s' if count != 1 else ''}",
            )
    if tool.typed_output:  # pydantic checks what the function returned, then it becomes JSON
        problems = tool.validate_output(value)
        value = json_result(tool, value) if not problems else value
    else:  # a JSON schema checks JSON data
        value = json_result(tool, value)
        problems = tool.validate_output(value)
    if problems:
        where = problems[0].path
        raise OutputValidationError(
            f"the output of {tool.name} does not fit its schema"
            + (f" at {where}" if where else "")
            + f": {problems[0].message}",
        )
    if not alternatives:
        return value, []
    assert isinstance(chosen, int)
    return value, [(ref, value) for ref in alternatives[chosen]]


def writes_for(call: Call, tool: Tool, output: Any) -> Writes:
    """The writes ``output`` makes (see :func:`result_writes`, which also returns
    the JSON value; raises as it does)."""
    return result_writes(call, tool, output)[1]


def error_arm(call: Call, tool: Tool, error: dict[str, Any]) -> Writes | None:
    """The writes of a failure routed to the error arm, or ``None`` when the call
    has no error arm (fewer than two alternatives, or the tool declares outcomes).

    The value written is ``{"error": {"type", "message", "tool", "call"}}``.
    """
    alternatives = call.alternatives
    if len(alternatives) < 2 or tool.outcomes:
        return None
    value = {"error": {**error, "tool": call.tool, "call": call.index}}
    return [(ref, value) for ref in alternatives[-1]]
