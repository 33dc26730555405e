"""From a tool's result to the writes it makes (docs/language.md).

A bare value goes to the first alternative of the call's ``_outputPath``; an
:class:`~obelisk.interpreter.tools.options.Outcome` picks its alternative by
index or by a name the tool declares; a raised exception goes to the last
alternative (the error arm) when the call has two or more and the tool declares
no ``outcomes``.  Each alternative may fan out (``a && b``): the same value is
written to every target.  The result is validated against the tool's output
schema first.
"""

from __future__ import annotations

from typing import Any

from obelisk.errors import OutcomeError, OutputValidationError
from obelisk.grammar import Reference
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Writes", "error_arm", "error_record", "writes_for"]

Writes = list[tuple[Reference, Any]]
"""The writes of one call: ``(target, value)`` pairs, committed all or nothing."""


def error_record(exc: BaseException) -> dict[str, Any]:
    """``{"type": <exception class name>, "message": str(exc)}``: a call's ``error``."""
    return {"type": type(exc).__name__, "message": str(exc)}


def writes_for(call: Call, tool: Tool, output: Any) -> Writes:
    """The writes ``output`` makes: its alternative's targets, each given the value.

    Raises :class:`~obelisk.errors.OutcomeError` for an ``Outcome`` naming an
    alternative the call does not have, and
    :class:`~obelisk.errors.OutputValidationError` when the value does not fit the
    tool's output schema.  A call without ``_outputPath`` writes nothing, whatever
    the outcome.
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
    problems = tool.validate_output(value)
    if problems:
        where = problems[0].path
        raise OutputValidationError(
            f"the output of {tool.name} does not fit its schema"
            + (f" at {where}" if where else "")
            + f": {problems[0].message}",
        )
    if not alternatives:
        return []
    assert isinstance(chosen, int)
    return [(ref, value) for ref in alternatives[chosen]]


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
