"""The scheduler: runs each call the moment its inputs are settled (docs/semantics.md).

A call is *ready* when every call that may write what it reads has committed.
Then its expressions are evaluated (``||`` fallback, ``&&`` gate, ``[*]``); a
missing required read skips it, with a reason naming the path and who did not
write it.  Otherwise its arguments are validated and the tool runs: async tools
on the event loop, sync tools in worker threads, under a global ``concurrency``
limit and per-tool ``capacity``; calls ready together are dispatched in plan
order.  Per-tool ``timeout`` and ``retry`` (tenacity) apply before a call counts
as failed.

Determinism (docs/semantics.md): a call's writes *commit* only after every earlier
call (in plan order) that writes an overlapping path in the same layer has
committed, and its dependents become ready on commit.  So the state, and every
value read, depend on the plan, the inputs and the tool results, never on timing.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any, Protocol

from obelisk.errors import (
    ApprovalRejected,
    OutcomeError,
    OutputValidationError,
    PolicyViolation,
    WorkerLost,
)
from obelisk.grammar import Reference
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.runtime import shelter
from obelisk.interpreter.runtime.approvals import (
    ApprovalIds,
    Decision,
    PendingApproval,
    argument_hash,
    needs_approval,
    new_scope,
)
from obelisk.interpreter.runtime.collector import run_collector
from obelisk.interpreter.runtime.events import (
    CallAwaitingApproval,
    CallSkipped,
    CallStarted,
    RunFinished,
    RunStarted,
    failure,
)
from obelisk.interpreter.runtime.flows import RunLabels
from obelisk.interpreter.runtime.hooks import Hooks
from obelisk.interpreter.runtime.instrument import RunTrace, active
from obelisk.interpreter.runtime.invoke import Invoker
from obelisk.interpreter.runtime.outcome import (
    forget_traceback,
    result_writes_text,
    validated_writes,
)
from obelisk.interpreter.runtime.records import (
    CallOutcome,
    CallRecord,
    RunResult,
    UnknownCall,
    run_status,
)
from obelisk.interpreter.runtime.resolve import explain_skip, resolve_arguments
from obelisk.interpreter.runtime.result import run_result
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.settling import Settling
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.labels import Labeled, LabelMap
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import copy_json, memory_estimate
from obelisk.limits import limits_in_effect

__all__ = ["Engine", "LatentFactory", "LatentRunner"]


class LatentRunner(Protocol):
    """Runs the latent calls the engine cannot: the execution loop's sub-requests
    (docs/loop.md).  ``accepts(tool)`` says which latent tools it runs (a latent
    call with ``_output`` is always written inline); ``run`` returns the result
    (an :class:`Outcome` to choose an alternative) or raises to fail the call."""

    def accepts(self, tool: Tool) -> bool: ...

    async def run(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Any: ...


LatentFactory = Callable[[State], LatentRunner]
"""What ``obelisk.run(..., model=...)`` hands the runtime: given the :class:`State` a
run starts from (a resumed run's own), the :class:`LatentRunner` that answers its
latent calls and delegates with the model (the loop builds it, docs/loop.md)."""


class Engine(Settling):
    """Runs one checked plan against a :class:`State` (use :func:`obelisk.run`).

    ``settings`` (:class:`~obelisk.interpreter.runtime.settings.RunSettings`) say how
    it runs: concurrency, fail-fast, the run's ``timeout`` (seconds: then what runs is
    cancelled and what has not started is ``cancelled``), limits, output validation
    and the context object tools receive (docs/tools.md).  ``resumption``
    (:class:`~obelisk.interpreter.runtime.resumption.Resumption`) is what a resumed
    run brings: the people's decisions, the outcomes to replay, the calls held
    ``unknown`` (docs/durable.md), the run's id and its approval ids
    (docs/approvals.md).  ``hooks`` (:class:`~obelisk.interpreter.runtime.hooks.Hooks`)
    are told of each call's life: event listeners, a durable run's journal.
    ``latent`` runs the latent calls the engine cannot (the loop's sub-requests).

    With ``growing=True`` the plan may grow while it runs (streaming dispatch):
    :meth:`append` adds the next call, :meth:`hold` and :meth:`release` keep a
    call from starting or let it go, :meth:`reject` settles a call as skipped
    without running it, and :meth:`run` returns only after :meth:`close`.
    ``owns_state``: the result takes the state's documents uncopied.  ``labels``: the
    labels of ``state`` as the run starts (an execution loop's earlier turns,
    docs/security.md); the run keeps them up to date and its result carries them.
    """

    def __init__(
        self,
        plan: Plan,
        graph: PlanGraph,
        registry: Registry,
        state: State,
        settings: RunSettings | None = None,
        resumption: Resumption | None = None,
        hooks: Hooks | None = None,
        *,
        latent: LatentRunner | None = None,
        growing: bool = False,
        owns_state: bool = False,
        labels: LabelMap | None = None,
    ) -> None:
        settings, hooks = settings or RunSettings(), hooks or Hooks()
        instrument = active()  # tracing (docs/observability.md): None when it is off
        self._trace: RunTrace | None = None
        if instrument is not None:
            self._trace = instrument.trace_run(self)
            hooks = Hooks((*hooks.observers, self._trace))
        super().__init__(plan, graph, registry, state, settings, hooks, growing, labels)
        resumption = resumption or Resumption()
        self.owns_state, self.latent, self.run_id = owns_state, latent, resumption.run_id
        self.approvals, self.replay = dict(resumption.approvals), dict(resumption.replay)
        self._unknown = dict(resumption.unknown)  # in flight at a crash: held, not run
        self._standing, self._deferred = dict(resumption.standing), dict(resumption.deferred)
        self._ids = resumption.approval_ids or ApprovalIds(self.run_id or new_scope())
        concurrency, context = settings.concurrency, settings.context
        self._invoker = Invoker(min(concurrency, 64), context, self.run_id, hooks.durable)

    @property
    def labels(self) -> RunLabels | None:
        """The run's labels (docs/security.md); ``None`` while no label is in play."""
        return self._labels

    # -- a plan that grows while it runs (growing=True) ----------------------------
    def append(self, plan: Plan, graph: PlanGraph) -> int:
        """Grow the plan by one call: ``plan`` is the current plan plus its new last
        call, ``graph`` its dependency graph.  Returns the new call's index.

        The new call commits after every call before it (its commit rank is its
        index); calls that have not started and read what it writes now wait for
        it too.  It does not start until :meth:`release`; :meth:`reject` settles it.
        """
        index = len(self.records)
        assert len(plan.calls) == index + 1, "append adds exactly one call"
        call = plan.calls[index]
        self.plan, self.graph = plan, graph
        self.records.append(CallRecord(index, call.id, call.tool))
        self._calls.grow(graph, index)
        self._order.append(graph)
        blockers = tuple(b for b in self._order.blockers(index) if not graph.reaches(index, b))
        self._gate.add(blockers)
        return index

    def keep(self, index: int, outcome: CallOutcome, standing: tuple[str, ...] = ()) -> None:
        """Replay ``outcome`` for call ``index`` instead of running it (a call an
        execution loop keeps from an earlier revision, docs/loop.md); ``standing``: the
        paths it wrote before, which stand when ``outcome`` writes nothing."""
        self.replay[index] = outcome
        if standing:
            self._standing[index] = standing

    def unstarted(self, index: int) -> bool:
        """True while call ``index`` has neither started nor settled."""
        return self._calls.unstarted(index)

    def started(self, index: int) -> bool:
        """True once call ``index`` has started (its reads are taken)."""
        return self._calls.is_started(index)

    def held(self, index: int) -> bool:
        """True while call ``index`` is held back (see :meth:`hold`)."""
        return self._calls.is_held(index)

    def waiting(self, index: int) -> bool:
        """True while some call that may write what call ``index`` reads has not settled."""
        return self._calls.is_waiting(index)

    def hold(self, index: int) -> None:
        """Keep call ``index`` from starting until :meth:`release` (a call that has
        started or settled is left alone)."""
        self._calls.hold(index)

    def release(self, index: int) -> None:
        """Let call ``index`` start once its inputs are settled; dispatches."""
        if self._calls.release(index):
            self._ready_event(index)
        self._dispatch()
        self._check_done()

    def reject(self, index: int, reason: str) -> None:
        """Settle call ``index`` as skipped with ``reason``, without running it."""
        if not self._calls.reject(index):
            return
        self._skipped(self.records[index], reason)

    def close(self) -> None:
        """No more calls will be appended: :meth:`run` returns once all have settled."""
        self._closed = True
        self._dispatch()
        self._check_done()

    # -- the loop ----------------------------------------------------------------
    async def run(self) -> RunResult:
        """Run every call; returns the :class:`RunResult` (never raises for tool errors).

        A tool that raises ``KeyboardInterrupt`` or ``SystemExit`` stops the run: the
        calls in flight are cancelled, and that exception is raised again with the
        run's result so far as its ``result`` attribute (docs/semantics.md)."""
        with run_collector(), limits_in_effect(self.settings.limits):  # tools see limits
            trace = self._trace
            if trace is None:
                return await self._run()
            with trace.running():  # the run's span (docs/observability.md)
                result = await self._run()
                trace.finished(result)
                return result

    async def _run(self) -> RunResult:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        if self._events:
            self._emit(RunStarted(time.time(), len(self.records)))
        timeout = self.settings.timeout  # the deadline is set before the first call starts
        deadline = None if timeout is None else loop.call_later(timeout, self._time_up)
        # left for a later step of a loop: none may start (settling one wakes the calls
        # after it, which may be deferred too), then each settles as skipped
        deferred = [index for index in self._deferred if self._calls.reject(index)]
        for index in deferred:
            self._skipped(self.records[index], self._deferred[index])
        for index in self._calls.prepare():
            self._ready_event(index)
        self._dispatch()
        self._check_done()
        try:
            await shelter.wait_done(self._done)  # a tool cannot cancel run_sync's task
        finally:
            if deadline is not None:
                deadline.cancel()
            self._tasks.cancel()
            self._invoker.close()
        status = run_status(self.records, bool(self.pending), bool(self.unknown))
        if self._events:
            self._emit(RunFinished(time.time(), status))
        result = run_result(
            status,
            self.state,
            self.records,
            owns_state=self.owns_state,
            pending=self.pending,
            outcomes=self.outcomes,
            unknown=self.unknown,
            run_id=self.run_id,
            plan=self.plan,
            labels=None if self._labels is None else self._labels.map,
        )
        if self._interrupt is not None:
            self._interrupt.result = result  # type: ignore[attr-defined]
            raise self._interrupt
        return result

    # -- one call -----------------------------------------------------------------
    def _start(self, index: int, tool: Tool | None) -> None:
        call, record = self.plan.calls[index], self.records[index]
        self._calls.start(index)
        assert tool is not None, "a checked plan names only registered tools"
        arguments, missing = resolve_arguments(call, self.state)
        if missing is not None:
            return self._missing(call, record, missing)
        assert arguments is not None
        record.arguments = arguments
        if self._labels is not None:
            self._labels.call_arguments(call, tool, self.state)
        if (self.replay or self._unknown) and self._resumed(index):
            return
        asked: str | None = None  # why a policy asks a person (docs/security.md)
        if self._labels is not None:
            emit = self._emit if self._events else None  # the call_policy event
            verdict = self._labels.verdict(call, tool, record, arguments, emit)
            if verdict.action == "deny":
                return self._denied(call, tool, record, verdict.reason)
            asked = verdict.reason if verdict.action == "ask" else None
        decision: Decision | None = None
        if asked is not None or (
            tool.requires_approval is not False and needs_approval(tool, arguments)
        ):
            decision = self._decision(index, call.tool, arguments, asked)
            if decision is None:
                return  # it waits for a person
            if asked is not None and self._labels is not None:  # endorses what it asked
                self._labels.approved(record, decision.action)
            if decision.action == "edit":
                arguments = record.arguments = dict(decision.arguments)
        record.started = time.time()
        if self._events:
            self._emit(CallStarted(record.started, index, call.tool, arguments))
        if decision is not None and decision.action == "reject":
            record.finished = time.time()
            self._failed(call, tool, record, ApprovalRejected(decision.reason or "rejected"))
        elif tool.function is None and self._inline(call, tool):  # latent (no property call)
            self._run_latent(call, tool, record)
        else:
            self._launch(call, tool, record, arguments)

    def _denied(self, call: Call, tool: Tool, record: CallRecord, reason: str) -> None:
        """A policy refused the call: it fails with PolicyViolation (an error arm takes it)."""
        record.started = record.finished = time.time()
        self._failed(call, tool, record, PolicyViolation(reason, (reason,)))

    def _missing(self, call: Call, record: CallRecord, missing: list[Reference]) -> None:
        """A read of ``call`` did not exist: it is skipped, with the reason."""
        reason, record.untaken = explain_skip(
            call, missing, self.graph, self.records, self._written, self.state
        )
        if self._labels is not None:  # its outputs' absence carries what decided it
            self._labels.skipped(call, missing)
        self._skipped(record, reason)

    def _skipped(self, record: CallRecord, reason: str) -> None:
        """Call ``record.index`` is settled as skipped with ``reason``, without running."""
        record.status, record.reason = "skipped", reason
        record.started = record.finished = time.time()
        if self._events:
            self._emit(CallSkipped(record.finished, record.index, record.tool, reason))
        self._finish(record.index, [])

    def _resumed(self, index: int) -> bool:
        """True when call ``index`` is not run: it ran before this run was resumed
        (replayed), or was in flight at a crash (held for a person, docs/durable.md)."""
        if index in self.replay:
            self._replay(index, self.replay[index])
            return True
        if index in self._unknown:
            record = self.records[index]
            record.status, record.reason = "unknown", "in flight when its process stopped"
            self.unknown[index] = self._unknown[index]
            return True
        return False

    def _decision(
        self, index: int, tool: str, arguments: dict[str, Any], reason: str | None = None
    ) -> Decision | None:
        """The people's decision on call ``index``; ``None``: it waits for one
        (``reason``: why a policy asked)."""
        digest = argument_hash(tool, arguments)
        approval = self._ids(self.plan, index, digest)
        decision = self.approvals.get(approval)
        if decision is not None:
            self.approved[index] = approval
        else:
            record = self.records[index]
            record.status = "awaiting_approval"
            pending = PendingApproval(
                approval, index, record.label, tool, arguments, digest, reason
            )
            self.pending[index] = pending
            if self._observed:
                self._hooks.awaiting(pending)
            if self._events:
                self._emit(CallAwaitingApproval(time.time(), index, tool, approval, arguments))
        return decision

    def _inline(self, call: Call, tool: Tool) -> bool:
        """Whether latent ``call`` is written here (with ``_output``) or left to the
        loop, rather than run by ``latent``."""
        return call.has_output or self.latent is None or not self.latent.accepts(tool)

    def _launch(
        self, call: Call, tool: Tool, record: CallRecord, arguments: dict[str, Any]
    ) -> None:
        if self._observed:
            self._hooks.started(record, tool)
        task = self._tasks.launch(tool, self._execute(call, tool, record, arguments))
        if task.done():  # it finished in its first step: no callback, no turn of the loop
            self._task_ended(tool.name, task)
            return
        self._tasks.running[call.index] = task
        task.add_done_callback(functools.partial(self._on_task_done, call.index, tool.name))

    def _replay(self, index: int, outcome: CallOutcome) -> None:
        record = self.records[index]
        record.replayed(outcome)
        if self._labels is not None:
            call = self.plan.calls[index]
            self._labels.replayed(record, call, self.registry[call.tool], outcome.labels)
        self.outcomes[index] = outcome  # kept, so a resume of this result replays it too
        if outcome.succeeded:
            self._finish(index, list(outcome.writes), succeeded=True)
        else:  # failed, or ran and returned an output that was not written: settled
            assert outcome.error is not None
            if self._events:
                invalid = outcome.invalid_output
                self._emit(failure(invalid, time.time(), index, record.tool, outcome.error))
            self._finish(index, [])

    def _run_latent(self, call: Call, tool: Tool, record: CallRecord) -> None:
        record.finished = time.time()
        if not call.has_output:
            record.status = "pending_latent"
            record.reason = "latent call without _output: the execution loop must run it"
            self._finish(call.index, [])
            return
        if self._labels is not None:
            self._labels.result(call, tool, None)
        try:
            record.output, pending, size, self._texts[call.index] = result_writes_text(
                call, tool, call.output, self.settings.limits
            )
        except (OutcomeError, OutputValidationError) as exc:
            self._fail(record, exc)
            self._finish(call.index, [])
            return
        self._budget.expect(call.index, memory_estimate(record.output, size) * len(pending))
        self._settle(call.index, pending, succeeded=True)

    async def _execute(
        self, call: Call, tool: Tool, record: CallRecord, arguments: dict[str, Any]
    ) -> None:
        validated = self._validated(tool, record, arguments)
        if validated is None:
            return
        if self._observed:  # its intent must be durable before the tool runs
            self._hooks.invoking(call.index)
        try:
            if tool.function is None:  # latent (Tool.latent, without the property call)
                assert self.latent is not None
                record.attempts += 1
                output = await self.latent.run(call, tool, validated)
            else:
                output = await self._invoker.invoke(tool, record, validated)
        except asyncio.CancelledError as exc:
            if not self._cancelled(call, tool, record, exc):
                return  # not obelisk's cancellation: the call failed
            raise
        except (KeyboardInterrupt, SystemExit) as exc:  # stops the run; its result is kept
            if not self._calls.is_settled(call.index):  # else the run gave up on it
                record.finished = time.time()
                self._interrupted(record, exc)
            return
        except WorkerLost:  # its remote worker died mid-call: nobody knows if it ran
            if not self._calls.is_settled(call.index):
                record.finished = time.time()  # held for a person, as after a crash
                record.status, record.reason = "unknown", "its remote worker was lost mid-call"
                self.unknown[call.index] = UnknownCall.lost(self.run_id, record, validated)
            return
        except BaseException as exc:  # an Exception, GeneratorExit, a tool's own: it failed
            if not self._calls.is_settled(call.index):  # else the run gave up on it
                record.finished = time.time()
                self._failed(call, tool, record, exc)
            forget_traceback(exc)
            return
        if not self._calls.is_settled(call.index):  # else the run gave up on it
            record.finished = time.time()
            self._written_output(call, tool, record, output)

    def _validated(
        self, tool: Tool, record: CallRecord, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The arguments as the tool gets them; ``None`` when they do not fit (the
        call failed)."""
        try:
            validated = tool.validate_arguments(arguments)
        except Exception as exc:  # ArgumentValidationError, or a validator that broke
            self._fail(record, exc)
            self._finish(record.index, [])
            return None
        # ``arguments`` are the call's own (read from the state as copies, literals
        # copied when resolved), and validation usually builds new values: only a
        # container it passed through as is (an ``Any`` parameter) is copied, so that a
        # tool mutating what it got changes neither the state nor the call's record
        for name, value in validated.items():
            if type(value) in (dict, list) and value is arguments.get(name):
                validated[name] = copy_json(value)
        return validated

    def _cancelled(
        self, call: Call, tool: Tool, record: CallRecord, exc: asyncio.CancelledError
    ) -> bool:
        """The call's task was cancelled: True when obelisk did it (the run stops; the
        call is ``cancelled``), False when something else did (the call failed)."""
        if not self._tasks.stopping and self._done and not self._done.done():
            record.finished = time.time()
            self._failed(call, tool, record, shelter.not_cancelled(exc))
            return False
        if not self._calls.is_settled(call.index):  # else the run gave up on it
            record.status, record.finished = "cancelled", time.time()
            record.reason = self._tasks.stopping or "cancelled"
            self._finish(call.index, [])
        return True

    def _written_output(self, call: Call, tool: Tool, record: CallRecord, output: Any) -> None:
        """Check a tool's result and settle the call with the writes it makes."""
        validation = tool.output_validation or self.settings.output_validation  # docs/tools.md
        if self._labels is not None or type(output) is Labeled:
            output = self._labelled(call, tool, output)
        try:
            value, pending, size, self._texts[call.index], misfit = validated_writes(
                call, tool, output, self.settings.limits, validation
            )
            record.output = value
        except (OutcomeError, OutputValidationError) as exc:
            self._fail(record, exc)
            self._settle(call.index, [], succeeded=False)
            return
        if misfit is not None and validation == "strict":  # it ran; its value is not written
            self._fail(record, OutputValidationError(misfit), invalid_output=True)
            self._settle(call.index, [], succeeded=False)
            return
        record.warnings = () if misfit is None else (misfit,)  # "warn": written all the same
        self._budget.expect(call.index, memory_estimate(value, size) * len(pending))
        self._settle(call.index, pending, succeeded=True)

    def _labelled(self, call: Call, tool: Tool, output: Any) -> Any:
        """Note the label of a call's result (tracking labels from now on if this is
        the run's first :class:`Labeled` result); returns the value to write."""
        if self._labels is None:
            settings = self.settings
            self._labels = RunLabels(settings.policy, settings.input_labels)
            self._labels.call_arguments(call, tool, self.state)
        return self._labels.result(call, tool, output)
