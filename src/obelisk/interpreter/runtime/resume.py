"""Resuming a run paused for approvals, or a durable run by its id, without running
again what already ran.

A run whose calls wait for a person returns with ``status ==
"awaiting_approval"``.  :func:`resume` takes that result and decisions by approval
id, checks the tools (pinned as a journal pins them, and the same functions) and
every decision (an id of this run's pending calls, an edit that fits the tool's
schema) before anything runs, then runs the plan again from the start: every
call that ran is replayed from its recorded outcome instead of being called, so the
state comes out the same, and only the calls still to run are called
(docs/approvals.md).  A result kept in memory is used once: its first resume
consumes it, and the result that resume returns is the one to resume next.  A run
id with ``journal=`` resumes a durable run from its journal (docs/durable.md,
:mod:`~obelisk.interpreter.runtime.durable.runs`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.errors import ApprovalError, RunMismatch, UsageError
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.approvals import Decision, Resolution, check_decisions
from obelisk.interpreter.runtime.durable.pinning import live_changes, live_pins
from obelisk.interpreter.runtime.durable.runs import DurableOrigin, resume_journaled
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.events import Listener
from obelisk.interpreter.runtime.records import CallOutcome, RunResult
from obelisk.interpreter.runtime.retry import Retry, check_retryable, retried_calls, retry_mode
from obelisk.interpreter.tools.registry import Registry, ToolsLike

__all__ = ["EngineFactory", "Once", "RunOrigin", "resume"]

EngineFactory = Callable[[Registry, Mapping[str, Decision], Mapping[int, CallOutcome]], Engine]
"""Builds the engine of a run again: ``(registry, decisions, outcomes to replay)``."""


@dataclass(eq=False)
class Once:
    """Whether a result was resumed already (``taken``): each result has its own."""

    taken: bool = False


@dataclass(frozen=True)
class RunOrigin:
    """What a run was started with, so that it can be resumed: ``make`` builds its
    engine again (same plan, graph, starting state and settings), ``registry`` the
    tools, ``diagnostics`` the check's warnings, ``decisions`` every decision given
    so far (by approval id).  ``plan`` is the checked plan and ``pinned`` its tools'
    :func:`~obelisk.interpreter.runtime.durable.runs.live_pins` when the run paused
    (``None``: worked out from ``registry`` when resumed); ``once`` marks the result
    resumed."""

    make: EngineFactory
    registry: Registry
    diagnostics: tuple[Diagnostic, ...] = ()
    decisions: Mapping[str, Decision] = field(default_factory=dict)
    plan: Plan | None = None
    pinned: Mapping[str, Any] | None = None
    once: Once = field(default_factory=Once, compare=False)


async def resume(
    run: RunResult | str,
    decisions: Mapping[str, Decision] | None = None,
    *,
    tools: ToolsLike = None,
    journal: Any = None,
    unknown: Mapping[Any, Resolution] | None = None,
    context: Any = None,
    on_event: Any = None,
    retry: Retry = None,
) -> RunResult:
    """Continue a paused run, or a durable run by its id; returns the new :class:`RunResult`.

    The runtime's part of :func:`obelisk.resume`, which takes these arguments and
    ``tracer_provider`` (:func:`obelisk.interpreter.fixed_plan.resume` describes them
    all, and what it raises; docs/approvals.md, docs/durable.md).
    """
    listeners: tuple[Listener, ...] = ()
    if on_event is not None:
        listeners = tuple(on_event) if not callable(on_event) else (on_event,)
    retried = retry_mode(retry)
    if isinstance(run, str) or isinstance(getattr(run, "origin", None), DurableOrigin):
        return await _resume_durable(
            run, decisions, journal, tools, unknown, context, listeners, retried
        )
    if not isinstance(run, RunResult):
        raise UsageError(f"resume takes a RunResult or a run id, got {type(run).__name__}")
    origin = run.origin
    if journal is not None or unknown is not None:
        raise UsageError("journal= and unknown= apply to durable runs (run with journal=)")
    if not isinstance(origin, RunOrigin):
        raise UsageError("this result cannot be resumed: it was not made by obelisk.run")
    return await _resume_in_memory(run, origin, decisions or {}, tools, retried)


async def _resume_durable(
    run: RunResult | str,
    decisions: Mapping[str, Decision] | None,
    journal: Any,
    tools: ToolsLike,
    unknown: Mapping[Any, Resolution] | None,
    context: Any,
    listeners: tuple[Listener, ...],
    retry: Retry,
) -> RunResult:
    """:func:`resume` of a durable run: by its id (``journal=`` needed), or its
    result (its journal, tools, context and listeners unless given)."""
    if isinstance(run, str):
        if journal is None:
            raise UsageError(f"resuming run {run!r} by its id needs journal= (its journal file)")
        return await resume_journaled(
            run, decisions, journal=journal, tools=tools, unknown=unknown, context=context,
            listeners=listeners, retry=retry,
        )  # fmt: skip
    origin = run.origin
    assert isinstance(origin, DurableOrigin)
    return await resume_journaled(
        origin.run_id,
        decisions,
        journal=origin.journal if journal is None else journal,
        tools=origin.registry if tools is None else tools,
        unknown=unknown,
        context=origin.context if context is None else context,
        listeners=listeners or origin.listeners,
        retry=retry,
    )


async def _resume_in_memory(
    run: RunResult,
    origin: RunOrigin,
    decisions: Mapping[str, Any],
    tools: ToolsLike,
    retry: Retry = None,
) -> RunResult:
    """:func:`resume` of a result kept in memory: used once, pinned to its tools."""
    if retry == "failed":
        check_retryable(run.run_id, run.status)
    if origin.once.taken:
        raise ApprovalError(
            f"run {run.run_id!r} was resumed already: a paused result is used once, "
            "so nothing ran; resume the result its resume returned"
        )
    registry = origin.registry if tools is None else Registry.coerce(tools)
    pinned = origin.pinned
    if pinned is None and origin.plan is not None:
        pinned = live_pins(origin.plan, origin.registry)
    changed = live_changes(pinned, registry) if pinned is not None else []
    if changed:
        raise RunMismatch(
            f"run {run.run_id!r} is pinned to the tools it paused with, and these "
            f"changed: {'; '.join(changed)}; nothing was run",
            changed,
        )
    given = check_decisions(run.pending, decisions, registry, run.run_id)
    replay = run.outcomes
    if retry == "failed":  # their outcomes are dropped: they run again
        again = retried_calls(run.calls)
        replay = {index: o for index, o in run.outcomes.items() if index not in again}
    origin.once.taken = True
    every = {**origin.decisions, **given}
    engine = origin.make(registry, every, replay)
    result = await engine.run()
    return dataclasses.replace(
        result,
        diagnostics=origin.diagnostics,
        origin=dataclasses.replace(
            origin, registry=registry, decisions=every, pinned=pinned, once=Once()
        ),
    )
