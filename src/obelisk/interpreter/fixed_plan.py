"""``obelisk.run`` and ``obelisk.run_sync``: run a fixed plan, its model steps answered
by ``model=`` when one is given (docs/semantics.md, docs/loop.md).

The runtime runs plans but cannot import the execution loop (the layers of
docs/architecture.md), and ``import obelisk`` must not load the loop either: a plan
without a model never needs it.  So the public entry points live here, above both:
they hand every argument to the runtime's
:func:`~obelisk.interpreter.runtime.run.run`, and only when ``model=`` is given
import the loop's :func:`~obelisk.interpreter.loop.steps.model_steps`, which turns
the model into the runtime's ``LatentFactory`` (sub-requests, as lazy mode makes).
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from obelisk.interpreter.analysis.handoff import PlanOrChecked
from obelisk.interpreter.runtime.approvals import Decision, Resolution
from obelisk.interpreter.runtime.engine import LatentFactory
from obelisk.interpreter.runtime.records import RunResult
from obelisk.interpreter.runtime.resume import resume as resume_run
from obelisk.interpreter.runtime.retry import Retry
from obelisk.interpreter.runtime.run import EventHandlers, listeners_of, run_blocking
from obelisk.interpreter.runtime.run import run as run_plan
from obelisk.interpreter.runtime.settings import DEFAULT_CONCURRENCY, RunSettings
from obelisk.interpreter.tools.options import OutputValidation
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from obelisk.interpreter.loop.model import Model
else:  # what typing.get_type_hints(obelisk.run) sees, without importing the loop
    Model = Any

__all__ = ["resume", "resume_sync", "run", "run_sync"]


async def run(
    plan: PlanOrChecked,
    tools: ToolsLike,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    *,
    model: Model | None = None,
    data: Mapping[str, Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    fail_fast: bool = False,
    on_event: EventHandlers = None,
    context: Any = None,
    timeout: float | None = None,
    limits: Limits | None = None,
    journal: Any = None,
    run_id: str | None = None,
    output_validation: OutputValidation = "strict",
    replaces: str | None = None,
    tracer_provider: Any = None,
    policy: PolicyMode = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> RunResult:
    """Check ``plan`` against ``tools``, then run it; returns a :class:`RunResult`.

    ``plan`` is a plan in any form :func:`obelisk.parse_plan` takes, or the
    :class:`~obelisk.CheckResult` that ``obelisk.check(plan, tools, input, state,
    data=..., limits=...)`` returned: that is run without checking the plan again, and
    must have been checked against the same tools (schemas and options), documents and
    limits as this run is given, else :class:`~obelisk.errors.UsageError` names what
    differs (docs/semantics.md, "Check once, then run").

    ``input`` is the read-only input document, ``state`` the state to start from (default
    ``{}``), ``data`` other data kinds by name.  ``concurrency`` caps the calls in flight (count,
    >= 1); per-tool ``capacity`` caps further.  With ``fail_fast=True`` the first failed call
    cancels the calls in flight and the rest are ``cancelled`` (docs/semantics.md).  ``on_event``
    receives every :class:`~obelisk.interpreter.runtime.events.Event`.  ``context`` is any
    object, given as ``.deps`` to tools with an ``obelisk.Context[T]`` parameter, whose calls
    fail with :class:`~obelisk.errors.UsageError` when it is ``None`` (docs/tools.md).
    ``output_validation`` (``"strict"``, ``"warn"``, ``"off"``) is what a call does with a
    result that does not fit its tool's output schema, for tools that do not say it themselves
    (docs/tools.md, "Output validation").  ``limits`` (:class:`obelisk.Limits`) bounds the plan,
    each result and the state (docs/limits.md).  ``timeout`` (seconds) bounds the whole run: then
    the calls in flight are cancelled, nothing more starts, and the result (``failed``) keeps
    everything written so far.  Calls of tools declared ``requires_approval`` pause the run
    (``awaiting_approval``; :func:`obelisk.resume` continues, with the model,
    docs/approvals.md).  ``journal`` (a file path or an :class:`obelisk.Journal`) makes the run
    durable, resumable by ``run_id`` (default: 16 random hex digits) after a crash or a pause;
    the input, state and data must then be JSON data (docs/durable.md).  ``model`` (an
    :class:`obelisk.Model`) answers latent calls and delegates as lazy mode does, one
    sub-request per latent call (docs/loop.md, "A fixed plan with model steps"): its answer is
    the call's outcome, an unusable one fails that call only.  Without it they are left
    ``pending_latent``.  ``tracer_provider`` (OpenTelemetry's, ``otel`` extra) traces this run
    and those nested in it (docs/observability.md).  ``policy``, ``input_labels``: docs/security.md.

    Raises :class:`~obelisk.errors.PlanError` (with every diagnostic) before
    anything runs when the plan (or the ``CheckResult``) has errors,
    :class:`~obelisk.errors.UsageError` for bad arguments (``model`` with
    ``journal``, a model without ``complete``) and for a ``CheckResult``
    checked against other tools or documents, and
    :class:`~obelisk.errors.JournalError` when the journal cannot be used (a run
    ``run_id`` exists in it, a value is not JSON data; ``replaces``, the run of it this
    one replaces, is not over).  Tool failures never raise: they are in the call records.

    >>> import asyncio, obelisk
    >>> @obelisk.tool
    ... def double(n: int) -> int:
    ...     "Twice n."
    ...     return 2 * n
    >>> plan = [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}]
    >>> asyncio.run(obelisk.run(plan, [double], input={"n": 21})).state
    {'twice': 42}
    """
    registry = Registry.coerce(tools)  # a model's sub-requests run with the run's settings
    given = (concurrency, fail_fast, timeout, limits or DEFAULT_LIMITS, output_validation, context)
    latent = None if model is None else _model_steps(model, registry, RunSettings(*given, policy))
    return await _traced(tracer_provider, run_plan(
        plan, registry, input, state, data=data, concurrency=concurrency, fail_fast=fail_fast,
        on_event=on_event, context=context, timeout=timeout, limits=limits, journal=journal,
        run_id=run_id, output_validation=output_validation, latent=latent, replaces=replaces,
        policy=policy, input_labels=input_labels,
    ))  # fmt: skip


async def _traced(tracer_provider: Any, running: Coroutine[Any, Any, RunResult]) -> RunResult:
    """``running``, traced with ``tracer_provider`` unless it is ``None``; tracing is
    imported here, when a run is first traced (``running`` is closed when it cannot be)."""
    if tracer_provider is None:
        return await running
    try:
        from obelisk.interpreter.tracing import traced

        tracing = traced(tracer_provider)
    except BaseException:
        running.close()
        raise
    with tracing:
        return await running


def _model_steps(model: Model, registry: Registry, settings: RunSettings) -> LatentFactory:
    """The loop's runner factory for ``model``; the loop is imported here, when a run
    first has a model, so that ``import obelisk`` and ``obelisk run`` never load it."""
    from obelisk.interpreter.loop.steps import model_steps

    return model_steps(model, registry, settings)


def run_sync(
    plan: PlanOrChecked,
    tools: ToolsLike,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    *,
    model: Model | None = None,
    data: Mapping[str, Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    fail_fast: bool = False,
    on_event: EventHandlers = None,
    context: Any = None,
    timeout: float | None = None,
    limits: Limits | None = None,
    journal: Any = None,
    run_id: str | None = None,
    output_validation: OutputValidation = "strict",
    replaces: str | None = None,
    tracer_provider: Any = None,
    policy: PolicyMode = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> RunResult:
    """:func:`run` for code without an event loop (it starts one, as ``asyncio.run`` does,
    sheltered from tools that attack it: docs/limits.md).

    Raises :class:`~obelisk.errors.UsageError` when called from a running event
    loop; ``await obelisk.run(...)`` there instead.
    """
    return run_blocking(
        run(
            plan,
            tools,
            input,
            state,
            model=model,
            data=data,
            concurrency=concurrency,
            fail_fast=fail_fast,
            on_event=on_event,
            context=context,
            timeout=timeout,
            limits=limits,
            journal=journal,
            run_id=run_id,
            output_validation=output_validation,
            replaces=replaces,
            tracer_provider=tracer_provider,
            policy=policy,
            input_labels=input_labels,
        )
    )


async def resume(
    run: RunResult | str,
    decisions: Mapping[str, Decision] | None = None,
    *,
    tools: ToolsLike = None,
    journal: Any = None,
    unknown: Mapping[Any, Resolution] | None = None,
    context: Any = None,
    on_event: EventHandlers = None,
    retry: Retry = None,
    tracer_provider: Any = None,
) -> RunResult:
    """Continue a paused run, or a durable run by its id; returns the new :class:`RunResult`.

    ``run`` is the paused result, or the id of a durable run with ``journal=`` (a
    file path or an :class:`obelisk.Journal`; docs/durable.md).  ``decisions`` maps
    approval ids (``result.pending[i].id``) to
    :class:`~obelisk.interpreter.runtime.approvals.Decision`: accepted calls run,
    edited ones run with the edited arguments, rejected ones fail with the reason
    (``ApprovalRejected``, which an error arm may take).  Calls without a decision
    keep waiting.  ``True`` and ``False`` are ``Decision.accept()`` and
    ``Decision.reject("rejected")``.  ``tools`` replaces the run's tools (default:
    the same; a run resumed by id needs them); a run kept in memory is pinned to its
    tools' schemas and options, as a journal pins them, and to their functions.
    Nothing that already ran is run again, and a result kept in memory is resumed
    once: resume the result its resume returned.

    ``retry="failed"`` picks up a run whose status is ``failed`` at the failed step:
    the calls that failed (``failed``, ``invalid_output``) or were ``cancelled`` run
    again, and so does every call skipped because of them; the calls that succeeded
    are replayed, not run again, and a call a person rejected stays rejected
    (docs/durable.md, "Retry from the failed step").  ``retry=None`` (the default)
    resumes as above.

    Durable runs only: ``unknown`` maps calls whose outcome is unknown (by index or
    ``_id``; ``result.unknown``) to a
    :class:`~obelisk.interpreter.runtime.approvals.Resolution`; ``context`` is the
    context object for the tools (default: the one the result ran with) and
    ``on_event`` a listener or listeners, as for :func:`obelisk.run`.

    ``tracer_provider`` (an OpenTelemetry ``TracerProvider``, ``otel`` extra; default
    ``None``: traced only when :func:`obelisk.instrument` is on) traces the resumed
    run, and those nested in it, with that provider, as :func:`run` does
    (docs/observability.md, "Resumed runs").

    Raises :class:`~obelisk.errors.ApprovalError` for a bad decision or resolution
    (see :func:`~obelisk.interpreter.runtime.approvals.check_decisions`) and for a
    result resumed already (naming its run),
    :class:`~obelisk.errors.RunMismatch` for tools that changed,
    :class:`~obelisk.errors.UsageError` for a result that cannot be resumed (and for
    ``retry="failed"`` with a run that is not ``failed``, or another ``retry``), and for
    a durable run :class:`~obelisk.errors.JournalError` (no such run, a run that is
    over), :class:`~obelisk.errors.JournalCorrupted`,
    :class:`~obelisk.errors.RunMismatch` (its tools changed) and
    :class:`~obelisk.errors.RunLocked` (another process runs it).
    """
    return await _traced(tracer_provider, resume_run(
        run, decisions, tools=tools, journal=journal, unknown=unknown, context=context,
        on_event=on_event, retry=retry,
    ))  # fmt: skip


def resume_sync(
    run: RunResult | str,
    decisions: Mapping[str, Decision] | None = None,
    *,
    tools: ToolsLike = None,
    journal: Any = None,
    unknown: Mapping[Any, Resolution] | None = None,
    context: Any = None,
    on_event: EventHandlers = None,
    retry: Retry = None,
    tracer_provider: Any = None,
) -> RunResult:
    """:func:`resume` for code without an event loop (``retry="failed"``: run the failed
    calls again, docs/durable.md; ``tracer_provider``: docs/observability.md)."""
    return run_blocking(resume(
        run, decisions, tools=tools, journal=journal, unknown=unknown, context=context,
        on_event=listeners_of(on_event), retry=retry, tracer_provider=tracer_provider,
    ))  # fmt: skip
