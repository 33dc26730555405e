"""Unknown calls: a call that was in flight when a durable run stopped, whose tool is
neither ``pure`` nor ``idempotent``, so that nobody knows whether it ran
(docs/durable.md).  Resume holds it until a person resolves it with a
:class:`~obelisk.interpreter.runtime.approvals.Resolution`: run it again, or record
the output it had, or the failure.  :func:`chosen_resolutions` checks what a person
gave; :func:`resolved_outcome` turns one resolution into the call's outcome.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from obelisk.errors import ApprovalError, OutcomeError, OutputValidationError
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.runtime.approvals import Resolution
from obelisk.interpreter.runtime.outcome import error_arm, result_writes
from obelisk.interpreter.runtime.records import CallOutcome, UnknownCall
from obelisk.interpreter.tools.tool import Tool
from obelisk.limits import Limits

__all__ = ["chosen_resolutions", "resolved_outcome"]


def chosen_resolutions(
    resolutions: Mapping[Any, Any], plan: Plan, held: Mapping[int, UnknownCall]
) -> dict[int, Resolution]:
    """``unknown=`` by call index, checked: each key names a call whose outcome is
    unknown (by index or ``_id``), each value is a :class:`Resolution`."""
    by_id = {call.id: call.index for call in plan.calls if call.id is not None}
    names = ", ".join(call.label for call in held.values()) or "none"
    chosen: dict[int, Resolution] = {}
    for key, resolution in resolutions.items():
        if not isinstance(resolution, Resolution):
            raise ApprovalError(
                f"the resolution for {key!r} must be Resolution.retry(), "
                f"Resolution.succeeded(output) or Resolution.failed(message), got {resolution!r}"
            )
        index = key if type(key) is int else by_id.get(key)
        if index is None or index not in held:
            what = (
                f"call {key!r}"
                if index is None
                else plan.calls[index].label
                if 0 <= index < len(plan.calls)
                else f"call {key!r}"
            )
            raise ApprovalError(
                f"{what} is not a call whose outcome is unknown (unknown: {names}); "
                "nothing was recorded"
            )
        if index in chosen:
            raise ApprovalError(f"{held[index].label} is resolved twice")
        chosen[index] = resolution
    return chosen


def resolved_outcome(
    call: Call, tool: Tool, resolution: Resolution, limits: Limits, started: float | None
) -> CallOutcome | None:
    """The outcome a person gave an unknown call (``None``: run it again).  Raises
    :class:`ApprovalError` for an output that does not fit the tool."""
    now = time.time()
    if resolution.action == "retry":
        return None
    if resolution.action == "succeeded":
        try:
            value, writes, _ = result_writes(call, tool, resolution.output, limits)
        except (OutcomeError, OutputValidationError) as exc:
            raise ApprovalError(
                f"the output given for {call.label} does not fit: {exc}; nothing was recorded"
            ) from None
        return CallOutcome(True, tuple(writes), value, None, 1, (started, now))
    if not isinstance(resolution.message, str):
        raise ApprovalError(
            f"the failure of {call.label} needs a message, got {resolution.message!r}"
        )
    error = {"type": "UnknownOutcome", "message": resolution.message}
    arm = error_arm(call, tool, error)
    if arm is not None:
        return CallOutcome(True, tuple(arm), None, error, 1, (started, now))
    return CallOutcome(False, (), None, error, 1, (started, now))
