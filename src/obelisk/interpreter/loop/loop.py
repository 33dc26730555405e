"""The execution loop: eager and lazy modes driving a model (docs/loop.md).

Every turn sends a fresh :class:`~obelisk.interpreter.loop.messages.Request` (tools,
input, current state, carried plan, error records) and gets a
:class:`~obelisk.interpreter.loop.messages.Solution` back.

* **eager** (default): the solution's calls are checked and run at once (latent
  calls carrying ``_output`` are written inline); failures and skips become
  error messages.
* **lazy**: the solution is a whole plan; it is checked (diagnostics go back for
  correction; a call carrying ``_output`` is one, ``lazy_output``), shown to
  ``approve``, then run, with each latent call answered by one sub-request.

In both modes the next request's plan message carries every call of the answer,
as the model wrote it (after any edit by the approver): those that ran included,
since the state shows what they did, and all of them when the plan had an error
diagnostic or was rejected.  An answer that is not a solution leaves the plan
message as it was.  The first request carries the plan given to :meth:`Loop.run`,
if any (docs/loop.md, "The carried plan").

The loop stops when ``output`` is not null and fits ``output_schema``, or after
``max_turns`` requests (:class:`LoopBudgetExceeded`; the last request carries a
notice).  More than ``max_corrections`` unusable answers in a row raise
:class:`CorrectionBudgetExceeded`.  Every stop keeps the transcript, the state
and the write log in the exception's ``result``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from obelisk.errors import (
    ApprovalError,
    LoopBudgetExceeded,
    LoopError,
    UsageError,
)
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.loop.approval import Approver
from obelisk.interpreter.loop.durable import LoopJournal
from obelisk.interpreter.loop.messages import solution_schema
from obelisk.interpreter.loop.model import GuardedModel, Model, StreamingModel
from obelisk.interpreter.loop.plan_history import Advance
from obelisk.interpreter.loop.primer import primer_text
from obelisk.interpreter.loop.records import LoopResult
from obelisk.interpreter.loop.session import LoopOrigin, Session
from obelisk.interpreter.loop.tracer import traced_by
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime.approvals import Decision
from obelisk.interpreter.runtime.durable.runs import opened
from obelisk.interpreter.runtime.events import Listener
from obelisk.interpreter.runtime.flows import check_input_labels
from obelisk.interpreter.runtime.instrument import active
from obelisk.interpreter.runtime.run import run_blocking
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.options import OutputValidation
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.validation import validator_for

__all__ = ["Loop", "Mode"]

Mode = Literal["eager", "lazy"]


def _check_counts(**counts: Any) -> None:
    """Raises :class:`UsageError` for a count below its least (``max_turns`` >= 1,
    ``max_corrections`` and ``max_depth`` >= 0) or not an integer."""
    for name, value in counts.items():
        low = 1 if name == "max_turns" else 0
        if type(value) is not int or value < low:
            raise UsageError(f"{name} must be an integer >= {low}, got {value!r}")


def _model_bounds(model_timeout: Any, max_requests: Any) -> tuple[float | None, int | None]:
    """``(model_timeout, max_requests)``, checked: seconds > 0 or ``None``, a count
    >= 1 or ``None``.  Raises :class:`UsageError`."""
    if max_requests is not None and (type(max_requests) is not int or max_requests < 1):
        raise UsageError(f"max_requests must be an integer >= 1 or None, got {max_requests!r}")
    if model_timeout is not None and (
        isinstance(model_timeout, bool)
        or not isinstance(model_timeout, (int, float))
        or not 0 < model_timeout < float("inf")
    ):
        raise UsageError(f"model_timeout must be a number of seconds > 0, got {model_timeout!r}")
    return model_timeout, max_requests


def _check_model(model: Any, mode: str, stream: bool, journal: Any, approve: Any) -> None:
    """Raises :class:`UsageError` for a model that cannot answer, and for ``stream``
    or ``approve`` where they do not apply."""
    if not callable(getattr(model, "complete", None)):
        raise UsageError(f"model must have an async complete(request) method, got {model!r}")
    if stream and not isinstance(model, StreamingModel):
        raise UsageError("stream=True needs a model with a stream(request) method")
    if stream and mode != "eager":
        raise UsageError("stream=True applies to eager mode only (a lazy plan is approved whole)")
    if stream and journal is not None:
        raise UsageError("stream=True cannot go with journal= (a durable loop is not streamed)")
    if approve is not None and mode != "lazy":
        raise UsageError("approve= applies to lazy mode only")


class Loop:
    """An execution loop over ``model`` and ``tools`` (see the module docstring).

    ``tools``: anything :meth:`Registry.coerce` takes.  ``mode``: ``"eager"`` or
    ``"lazy"``; when not given, the ``mode`` of a plan message given to :meth:`run`
    (``plan={"type": "plan", "plan": [...], "mode": "lazy"}``) picks it, else it is
    ``"eager"``.  ``output_schema``: JSON
    schema of the final output (``None`` = any JSON value).  ``state_schema``: JSON
    schema of the state, sent with the state so the model plans against its shape.
    ``instructions``: extra text for every request.  ``max_turns`` (count, >= 1),
    ``max_corrections`` (unusable answers in a row, >= 0), ``max_depth`` (delegate
    nesting, >= 0).
    ``approve``: lazy-mode approval callback (sync or async) taking the plan's
    :class:`~obelisk.interpreter.simulate.approval.Approval` (its check, dry run
    and changes from the plan before) and returning a ``Decision`` or a bool
    (docs/approvals.md); calls of tools that require approval pause the loop
    (``LoopResult.pending``, :meth:`resume`).  ``stream``: dispatch calls while a
    :class:`StreamingModel` is still writing (eager mode).  ``concurrency``,
    ``fail_fast``, ``output_validation`` and ``on_event`` go to each run (see
    :func:`obelisk.run`; ``output_validation`` to delegates' child loops too);
    ``on_event`` also receives ``TurnStarted`` and ``TurnFinished`` (docs/loop.md).
    ``context``: the object tools with an ``obelisk.Context[T]`` parameter receive
    (as ``.deps``) in every run of the loop, delegates' child loops included
    (docs/tools.md).  ``model_timeout`` (seconds, default none) bounds each model
    answer, a whole stream included; ``max_requests`` (count, default 1000, ``None``
    for no limit) bounds the model requests of the loop, its delegates and its
    sub-requests together.  Past either, and whatever the model raises, the loop stops
    with :class:`LoopStopped` carrying the result so far.  ``model`` becomes
    ``loop.model``, a :class:`~obelisk.interpreter.loop.model.GuardedModel` around
    it (``loop.model.inner`` is yours; ``loop.model.requests`` counts).
    ``journal`` (a file path or an :class:`obelisk.Journal`) makes the loop durable
    (docs/durable.md): each turn's request and answer and each turn's calls are
    journaled; ``loop.resume(run_id)`` (``result.run_id``) replays the journaled turns
    without asking the model again and goes on.  ``advance``: ``"all"`` (default) runs
    every call of each revision of the plan that needs to run; ``"step"`` runs only the
    calls ready when the turn starts, then asks the model again (docs/loop.md, "How a
    plan evolves"; not with ``stream``).  ``primer`` (default on) adds to the
    instructions a short primer of the plan language with one worked example built
    from the loop's own tools (docs/loop.md, "The primer"); ``primer=False`` leaves
    it out, to measure what it does.
    ``policy`` and ``input_labels``: labels and policies for every run of the loop, as
    :func:`obelisk.run` takes them (docs/security.md).  ``quarantine``: the planning
    requests never hold an untrusted value, only a handle to it (docs/loop.md,
    "Quarantine"); latent calls run as sub-requests, which see the values, in eager
    mode too.  ``tracer_provider`` (an OpenTelemetry ``TracerProvider``, ``otel`` extra;
    default ``None``: traced only when :func:`obelisk.instrument` is on) traces every run
    and resume of the loop, its delegates included, as :func:`obelisk.run` does one run
    (docs/observability.md).
    Raises :class:`~obelisk.errors.UsageError` for bad settings.

    >>> import obelisk
    >>> @obelisk.tool
    ... def double(n: int) -> int:
    ...     "Twice n."
    ...     return 2 * n
    >>> model = obelisk.ScriptedModel([
    ...     {"calls": [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}],
    ...      "output": None},
    ...     {"calls": [], "output": "†state.twice"},
    ... ])
    >>> result = obelisk.Loop(model, [double]).run_sync({"n": 21})
    >>> result.output, result.state, len(result.turns)
    (42, {'twice': 42}, 2)
    """

    def __init__(
        self,
        model: Model,
        tools: ToolsLike,
        *,
        mode: Mode | None = None,
        output_schema: Mapping[str, Any] | None = None,
        state_schema: Mapping[str, Any] | None = None,
        instructions: str | None = None,
        max_turns: int = 8,
        max_corrections: int = 3,
        max_depth: int = 3,
        approve: Approver | None = None,
        stream: bool = False,
        concurrency: int = 64,
        fail_fast: bool = False,
        on_event: Listener | None = None,
        depth: int = 0,
        context: Any = None,
        model_timeout: float | None = None,
        max_requests: int | None = 1000,
        journal: Any = None,
        output_validation: OutputValidation = "strict",
        advance: Advance = "all",
        primer: bool = True,
        policy: PolicyMode = "off",
        input_labels: Mapping[str, Any] | None = None,
        quarantine: bool = False,
        tracer_provider: Any = None,
    ) -> None:
        if not isinstance(quarantine, bool):
            raise UsageError(f"quarantine must be True or False, got {quarantine!r}")
        self.quarantine = quarantine
        self.mode_given = mode is not None  # else a plan message's mode may pick it
        if mode is None:
            mode = "eager"
        if mode not in ("eager", "lazy"):
            raise UsageError(f"mode must be 'eager' or 'lazy', got {mode!r}")
        if advance not in ("all", "step"):
            raise UsageError(f"advance must be 'all' or 'step', got {advance!r}")
        if advance == "step" and stream:
            raise UsageError(
                "advance='step' cannot go with stream=True (a step starts no call early)"
            )
        self.advance: Advance = advance
        _check_counts(max_turns=max_turns, max_corrections=max_corrections, max_depth=max_depth)
        self.settings = RunSettings(
            concurrency,
            fail_fast,
            output_validation=output_validation,
            context=context,
            policy=policy,
            input_labels=check_input_labels(input_labels),
        )  # what each run of the loop runs with
        bounds = _model_bounds(model_timeout, max_requests)
        _check_model(model, mode, stream, journal, approve)
        # one guard for a loop and its children: a shared request budget, a time bound
        if not isinstance(model, GuardedModel):
            model = GuardedModel(model, *bounds)
        self.model: GuardedModel = model
        self.registry, self.mode = Registry.coerce(tools), mode
        self.output_schema = None if output_schema is None else dict(output_schema)
        self.output_validator = (
            None
            if self.output_schema is None
            else validator_for(self.output_schema, "output", "output_schema")
        )
        self.state_schema = None if state_schema is None else dict(state_schema)
        if self.state_schema is not None:
            validator_for(self.state_schema, "state", "state_schema")
        self.instructions, self.approve, self.stream = instructions, approve, stream
        self.max_turns, self.max_corrections, self.max_depth = max_turns, max_corrections, max_depth
        self.depth, self.journal, self.tracer_provider = depth, journal, tracer_provider
        self.base: Loop | None = None  # the loop a plan message's mode was applied to
        self.listeners: tuple[Listener, ...] = () if on_event is None else (on_event,)
        self.schema = solution_schema(self.registry, self.output_schema, mode=mode)
        self.primer = bool(primer)
        self.primer_text = primer_text(self.registry, mode) if primer else None

    @property
    def concurrency(self) -> int:
        """Calls in flight at once in each run (``settings.concurrency``)."""
        return self.settings.concurrency

    @property
    def fail_fast(self) -> bool:
        """Whether a failed call stops its run (``settings.fail_fast``)."""
        return self.settings.fail_fast

    @property
    def output_validation(self) -> OutputValidation:
        """What runs do with a result that does not fit (``settings.output_validation``)."""
        return self.settings.output_validation

    @property
    def context(self) -> Any:
        """The context object the tools receive (``settings.context``)."""
        return self.settings.context

    async def delegate(
        self,
        *,
        tools: Registry,
        output_schema: Mapping[str, Any] | None,
        instructions: str,
        input: Any,
        state: Mapping[str, Any] | None,
        data: Mapping[str, Any] | None,
    ) -> LoopResult:
        """Run a delegate call's own loop: same model and limits, one level deeper,
        with only ``tools`` (the call's ``_tools``, docs/loop.md), ``input`` (the call's
        arguments) and the parent context its scopes allow.  Raises what :meth:`run`
        raises."""
        child = self._child(tools=tools, output_schema=output_schema, instructions=instructions)
        return await child.run(input, state, data=data)

    def _child(
        self, *, tools: Registry, output_schema: Mapping[str, Any] | None, instructions: str
    ) -> Loop:
        return Loop(
            self.model,
            tools,
            mode=self.mode,
            output_schema=output_schema,
            instructions=instructions,
            max_turns=self.max_turns,
            max_corrections=self.max_corrections,
            max_depth=self.max_depth,
            approve=None,
            concurrency=self.concurrency,
            output_validation=self.output_validation,
            depth=self.depth + 1,
            context=self.context,
            primer=self.primer,
            policy=self.settings.policy,
        )

    # -- the loop ------------------------------------------------------------------
    async def run(
        self,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        instances: Mapping[str, Any] | None = None,
        plan: Any = None,
        run_id: str | None = None,
    ) -> LoopResult:
        """Run turns until the model gives an output; returns a :class:`LoopResult`.

        ``input``: the read-only input; ``state``: the state to start from;
        ``data``: other data documents by kind; ``instances``: instance name ->
        that instance's own input (docs/semantics.md; calls with ``_instance`` read it);
        ``plan``: a plan to start from (any shape :func:`obelisk.parse_plan` takes, or the
        ``CheckResult`` of :func:`obelisk.check`, whose plan is taken as it is), which
        the first request carries for the model to adjust (docs/loop.md).  Raises
        :class:`~obelisk.errors.PlanError` when ``plan`` does not parse, and
        :class:`LoopBudgetExceeded`, :class:`CorrectionBudgetExceeded` or
        :class:`LoopStopped` (each carrying the partial result) as described on
        the module.  ``run_id`` names a durable loop's run (with ``journal=``;
        default: 16 random hex digits); then :class:`~obelisk.errors.JournalError`
        is raised when the journal cannot be used.
        """
        session = self.session(input, state, data=data, instances=instances, plan=plan)
        if self.journal is None:
            if run_id is not None:
                raise UsageError("run_id= names a durable loop: it needs Loop(journal=...)")
            return await self._turns(session, 1)
        settings = {
            "mode": session.loop.mode,
            "instances": dict(instances or {}),
            "plan": session.carried,
        }
        with opened(self.journal) as book:
            session.journal = LoopJournal.start(
                book, run_id, self.registry, settings, input, state, data
            )
            return await self._durable(session)

    async def _durable(self, session: Session) -> LoopResult:
        """Run a durable loop's turns from the first (journaled ones are replayed),
        then give its lock back with how it ended."""
        journal = session.journal
        assert journal is not None
        status = "interrupted"
        try:
            result = await self._turns(session, 1)
            status = result.status
            return result
        except LoopError as exc:
            ended = getattr(getattr(exc, "result", None), "status", "stopped")
            status = "failed" if ended in ("budget_exceeded", "corrections_exceeded") else ended
            raise
        finally:
            journal.finish(status)

    async def _turns(self, session: Session, first: int) -> LoopResult:
        with traced_by(self.tracer_provider):  # Loop(tracer_provider=...), else no-op
            instrument = active()  # tracing (docs/observability.md): None when it is off
            if instrument is None:
                return await self._run_turns(session, first)
            with instrument.agent(self) as span:  # the loop's invoke_agent span
                try:
                    result = await self._run_turns(session, first)
                except LoopError as exc:
                    span.finished(getattr(exc, "result", None))
                    raise
                span.finished(result)
                return result

    async def _run_turns(self, session: Session, first: int) -> LoopResult:
        for number in range(first, self.max_turns + 1):
            if await session.turn(number):
                return session.result("completed", session.output)
        result = session.result("budget_exceeded", None)
        raise LoopBudgetExceeded(f"no output after max_turns={self.max_turns} turns", result)

    async def resume(
        self,
        result: LoopResult | str,
        decisions: Mapping[str, Decision] | None = None,
        *,
        tools: ToolsLike = None,
    ) -> LoopResult:
        """Continue a loop whose calls await approval; returns a new :class:`LoopResult`.

        ``result``: the ``awaiting_approval`` result of :meth:`run` (or of an earlier
        resume); ``decisions``: approval id -> ``Decision``, as for
        :func:`obelisk.resume`.  The paused turn's run goes on without running again
        what already ran, then the loop takes its output or sends the next request.
        Calls without a decision keep waiting.

        A durable loop (``journal=``) is resumed by its ``run_id`` too, in another
        process or after a crash: its journaled turns are replayed (the model is not
        asked again, no committed call runs again), ``decisions`` are recorded in
        the journal first, then the loop goes on (docs/durable.md).

        Raises :class:`~obelisk.errors.ApprovalError` for a bad decision (nothing is
        recorded; ``True`` and ``False`` are accept and reject, as for
        :func:`obelisk.resume`) and for a paused result resumed already (it is used
        once; the message names its run), :class:`~obelisk.errors.RunMismatch` for
        ``tools`` other than those the turn paused with,
        :class:`~obelisk.errors.JournalError` (and its kinds) for a durable
        loop that cannot be resumed, :class:`~obelisk.errors.UsageError` for a result that is not
        paused or was made by another loop, and the loop's own errors as :meth:`run` does.
        """
        if isinstance(result, str):
            return await self._resume_journaled(result, decisions or {})
        origin = result.origin
        if isinstance(origin, LoopOrigin) and origin.session.journal is not None:
            if result.status != "awaiting_approval":
                raise UsageError(f"a loop result with status {result.status!r} cannot be resumed")
            return await self._resume_journaled(origin.session.journal.run_id, decisions or {})
        if not isinstance(origin, LoopOrigin) or self not in (
            origin.session.loop,
            getattr(origin.session.loop, "base", None),
        ):
            raise UsageError("this result was not made by this loop: it cannot be resumed here")
        session, paused = origin.session, origin.session.paused
        if result.status != "awaiting_approval" or origin.run is None:
            raise UsageError(f"a loop result with status {result.status!r} cannot be resumed")
        if paused is None or paused.run is not origin.run:
            name = origin.name
            raise ApprovalError(
                f"run {name!r} was resumed already: a paused result is used once, so "
                "nothing ran; resume the result its resume returned"
            )
        if await session.resume(decisions or {}, tools):
            return session.result("completed", session.output)
        return await self._turns(session, paused.turn.index + 1)

    async def _resume_journaled(self, run_id: str, decisions: Mapping[str, Decision]) -> LoopResult:
        """Take durable loop ``run_id`` up again from the journal: record the
        decisions, replay the journaled turns, go on."""
        if self.journal is None:
            raise UsageError(f"resuming loop {run_id!r} by its id needs Loop(journal=...)")
        with opened(self.journal) as book:
            journal, row = LoopJournal.reopen(book, run_id, self.registry)
            try:
                for approval, decision in decisions.items():
                    book.decide(approval, decision, tools=self.registry)
                settings = row.settings
                session = self.session(
                    row.input,
                    row.state,
                    data=row.data,
                    instances=settings.get("instances") or None,
                    plan=settings.get("plan") or None,
                    mode=settings.get("mode"),
                )
            except BaseException:
                journal.finish("interrupted")
                raise
            session.journal = journal
            return await self._durable(session)

    def resume_sync(
        self,
        result: LoopResult | str,
        decisions: Mapping[str, Decision] | None = None,
        *,
        tools: ToolsLike = None,
    ) -> LoopResult:
        """:meth:`resume` for code without an event loop."""
        return run_blocking(self.resume(result, decisions, tools=tools))

    def session(
        self,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        instances: Mapping[str, Any] | None = None,
        plan: Any = None,
        mode: Mode | None = None,
    ) -> Session:
        """A :class:`~obelisk.interpreter.loop.session.Session` to drive this loop one
        turn at a time (``await session.turn(n)``); :meth:`run` is built on it.
        Arguments as for :meth:`run`; ``mode``: the session's mode when the loop was
        not given one (default: the mode ``plan`` writes, if any)."""
        inputs = dict(instances or {})
        start = _starting_plan(plan) if plan is not None else None
        if mode is None and start is not None and start.mode_written:
            mode = start.mode
        loop = self._in_mode(mode) if mode is not None and not self.mode_given else self
        session = Session(loop, input, inputs, State(state, input, data, inputs=inputs))
        if start is not None:
            session.carried = [call.to_data() for call in start.calls]
            session.lineage.revise(session.carried, 0)  # revision 0 (docs/loop.md)
        return session

    def _in_mode(self, mode: Mode) -> Loop:
        """This loop in ``mode`` (itself when it is in it already): a copy whose
        ``base`` is this loop.  Raises :class:`UsageError` for a mode its settings
        refuse (``stream`` is eager only, ``approve`` lazy only)."""
        if mode == self.mode:
            return self
        _check_model(self.model.inner, mode, self.stream, self.journal, self.approve)
        other = copy.copy(self)
        other.mode, other.base = mode, self
        other.schema = solution_schema(self.registry, self.output_schema, mode=mode)
        other.primer_text = primer_text(self.registry, mode) if self.primer else None
        return other

    def run_sync(
        self,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        instances: Mapping[str, Any] | None = None,
        plan: Any = None,
        run_id: str | None = None,
    ) -> LoopResult:
        """:meth:`run` for code without an event loop (starts one with ``asyncio.run``)."""
        return run_blocking(
            self.run(input, state, data=data, instances=instances, plan=plan, run_id=run_id)
        )


def _starting_plan(plan: Any) -> Plan:
    """The plan a loop starts from: a ``CheckResult``'s (not parsed or checked again; a
    result whose plan did not parse raises its :class:`~obelisk.errors.PlanError`), or
    ``plan`` parsed."""
    if isinstance(plan, CheckResult):
        if plan.plan is None:
            plan.raise_for_errors()
        assert plan.plan is not None
        return plan.plan
    return parse_plan(plan)
