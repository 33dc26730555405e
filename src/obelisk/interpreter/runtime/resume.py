"""Resuming a run paused for approvals, without running again what already ran.

A run whose calls wait for a person returns with ``status ==
"awaiting_approval"``.  :func:`resume` takes that result and decisions by approval
id, checks every decision (known id, arguments unchanged, an edit that fits the
tool's schema) before anything runs, then runs the plan again from the start: every
call that ran is replayed from its recorded outcome instead of being called, so the
state comes out the same, and only the calls still to run are called
(docs/approvals.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk.errors import ApprovalError, ArgumentValidationError, Diagnostic, UsageError
from obelisk.interpreter.runtime.approvals import Decision, PendingApproval
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.records import CallOutcome, RunResult
from obelisk.interpreter.tools.registry import Registry

__all__ = ["EngineFactory", "RunOrigin", "check_decisions", "resume"]

EngineFactory = Callable[[Registry, Mapping[str, Decision], Mapping[int, CallOutcome]], Engine]
"""Builds the engine of a run again: ``(registry, decisions, outcomes to replay)``."""


@dataclass(frozen=True)
class RunOrigin:
    """What a run was started with, so that it can be resumed: ``make`` builds its
    engine again (same plan, graph, starting state and settings), ``registry`` the
    tools, ``diagnostics`` the check's warnings, ``decisions`` every decision given
    so far (by approval id)."""

    make: EngineFactory
    registry: Registry
    diagnostics: tuple[Diagnostic, ...] = ()
    decisions: Mapping[str, Decision] = field(default_factory=dict)


def check_decisions(
    pending: tuple[PendingApproval, ...], decisions: Mapping[str, Any], registry: Registry
) -> dict[str, Decision]:
    """``decisions`` checked against the pending approvals, before anything runs.

    Raises :class:`~obelisk.errors.ApprovalError` for a decision that is not a
    ``Decision``, an id that names no pending approval (a call whose arguments
    changed has a new id: the message says so), or edited arguments that do not
    fit the tool's schema.  Nothing is recorded when one is refused.
    """
    by_id = {approval.id: approval for approval in pending}
    checked: dict[str, Decision] = {}
    for approval_id, decision in decisions.items():
        if not isinstance(decision, Decision):
            raise ApprovalError(
                f"the decision for {approval_id!r} must be Decision.accept(), "
                f"Decision.reject(reason) or Decision.edit(arguments), got {decision!r}"
            )
        approval = by_id.get(approval_id)
        if approval is None:
            call = str(approval_id).split("-", 1)[0]
            same = [a for a in pending if str(a.call) == call]
            hint = (
                f"; {same[0].label} awaits {same[0].id}: its arguments are not the ones "
                "that decision was made for"
                if same
                else ""
            )
            ids = ", ".join(a.id for a in pending) or "none"
            raise ApprovalError(f"no call awaits approval {approval_id!r}{hint} (pending: {ids})")
        if decision.action == "edit":
            tool = registry.get(approval.tool)
            if not isinstance(decision.arguments, Mapping):
                raise ApprovalError(
                    f"the edit of {approval.label} must be an arguments object, "
                    f"got {decision.arguments!r}"
                )
            if tool is not None:
                try:
                    tool.validate_arguments(dict(decision.arguments))
                except ArgumentValidationError as exc:
                    raise ApprovalError(
                        f"the edited arguments of {approval.label} do not fit its tool; "
                        f"nothing was recorded: {exc}"
                    ) from None
        checked[approval_id] = decision
    return checked


async def resume(
    run: RunResult | str,
    decisions: Mapping[str, Decision] | None = None,
    *,
    tools: Any = None,
    journal: Any = None,
) -> RunResult:
    """Continue a run paused for approvals; returns the new :class:`RunResult`.

    ``run`` is the paused result (a run id with ``journal=`` is for durable runs).
    ``decisions`` maps approval ids (``result.pending[i].id``) to
    :class:`~obelisk.interpreter.runtime.approvals.Decision`: accepted calls run,
    edited ones run with the edited arguments, rejected ones fail with the reason
    (``ApprovalRejected``, which an error arm may take).  Calls without a decision
    keep waiting.  ``tools`` replaces the run's tools (default: the same).  Nothing
    that already ran is run again.

    Raises :class:`~obelisk.errors.ApprovalError` for a bad decision (see
    :func:`check_decisions`) and :class:`~obelisk.errors.UsageError` for a result
    that cannot be resumed.
    """
    if isinstance(run, str) or journal is not None:
        raise UsageError("resuming by run id needs durable runs (a journal), not available here")
    origin = run.origin
    if not isinstance(origin, RunOrigin):
        raise UsageError("this result cannot be resumed: it was not made by obelisk.run")
    registry = origin.registry if tools is None else Registry.coerce(tools)
    given = check_decisions(run.pending, decisions or {}, registry)
    every = {**origin.decisions, **given}
    engine = origin.make(registry, every, run.outcomes)
    result = await engine.run()
    return dataclasses.replace(
        result,
        diagnostics=origin.diagnostics,
        origin=dataclasses.replace(origin, registry=registry, decisions=every),
    )
