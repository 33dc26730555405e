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
import heapq
import time
from collections.abc import Mapping
from typing import Any, Protocol

from obelisk.errors import (
    ApprovalRejected,
    OutcomeError,
    OutputValidationError,
    StateWriteError,
)
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
from obelisk.interpreter.runtime.budget import StateBudget
from obelisk.interpreter.runtime.collector import run_collector
from obelisk.interpreter.runtime.commit_order import CommitGate, CommitOrder
from obelisk.interpreter.runtime.events import (
    CallAwaitingApproval,
    CallReady,
    CallSkipped,
    CallStarted,
    CallSucceeded,
    Emitter,
    Listener,
    RunFinished,
    RunStarted,
    StateWritten,
    failure,
)
from obelisk.interpreter.runtime.invoke import EAGER_SECONDS, Invoker, start_task
from obelisk.interpreter.runtime.outcome import (
    Writes,
    error_arm,
    error_record,
    forget_traceback,
    result_writes_text,
    validated_writes,
)
from obelisk.interpreter.runtime.readiness import Readiness
from obelisk.interpreter.runtime.recorder import Recorder
from obelisk.interpreter.runtime.records import (
    CallOutcome,
    CallRecord,
    RunResult,
    UnknownCall,
    run_status,
)
from obelisk.interpreter.runtime.resolve import explain_skip, resolve_arguments
from obelisk.interpreter.runtime.result import run_result
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.options import OutputValidation
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import copy_json, memory_estimate
from obelisk.limits import DEFAULT_LIMITS, Limits, limits_in_effect

__all__ = ["Engine", "LatentRunner"]


class LatentRunner(Protocol):
    """Runs the latent calls the engine cannot: the execution loop's sub-requests
    (docs/loop.md).  ``accepts(tool)`` says which latent tools it runs (a latent
    call with ``_output`` is always written inline); ``run`` returns the result
    (an :class:`Outcome` to choose an alternative) or raises to fail the call."""

    def accepts(self, tool: Tool) -> bool: ...

    async def run(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Any: ...


class Engine:
    """Runs one checked plan against a :class:`State` (use :func:`obelisk.run`).

    With ``growing=True`` the plan may grow while it runs (streaming dispatch):
    :meth:`append` adds the next call, :meth:`hold` and :meth:`release` keep a
    call from starting or let it go, :meth:`reject` settles a call as skipped
    without running it, and :meth:`run` returns only after :meth:`close`.
    ``context`` is the run's context object, given to tools that take an
    ``obelisk.Context`` (docs/tools.md).  ``timeout`` (seconds) bounds the whole run:
    then what runs is cancelled and what has not started is ``cancelled``.
    Durable runs (docs/durable.md): ``recorder`` journals each call (its intent before
    its tool runs); a call in ``unknown`` is held, not run; ``run_id`` names the run.
    ``approval_ids`` names paused calls (default: bound to ``run_id``, docs/approvals.md).
    ``output_validation`` is the run's, for tools without their own (docs/tools.md).
    """

    def __init__(
        self,
        plan: Plan,
        graph: PlanGraph,
        registry: Registry,
        state: State,
        *,
        concurrency: int = 64,
        fail_fast: bool = False,
        listeners: tuple[Listener, ...] = (),
        latent: LatentRunner | None = None,
        growing: bool = False,
        approvals: Mapping[str, Decision] | None = None,
        replay: Mapping[int, CallOutcome] | None = None,
        context: Any = None,
        timeout: float | None = None,
        limits: Limits = DEFAULT_LIMITS,
        recorder: Recorder | None = None,
        unknown: Mapping[int, UnknownCall] | None = None,
        run_id: str = "",
        owns_state: bool = False,
        approval_ids: ApprovalIds | None = None,
        output_validation: OutputValidation = "strict",
    ) -> None:
        self.plan, self.graph, self.registry, self.state = plan, graph, registry, state
        self.owns_state = owns_state  # the result takes the state's documents uncopied
        self.timeout, self.limits, self.output_validation = timeout, limits, output_validation
        self._budget = StateBudget(state, limits.max_state_bytes)
        self.latent = latent
        self.concurrency = concurrency
        self.fail_fast = fail_fast
        self.listeners = listeners
        self.records = [CallRecord(c.index, c.id, c.tool) for c in plan.calls]
        self._order = CommitOrder(graph)
        self._succeeded: set[int] = set()
        self._pending: dict[int, Writes] = {}
        self._texts: dict[int, bytes | None] = {}  # a pending result's JSON text, if made
        self._committed = [False] * len(plan.calls)
        self._calls = Readiness(graph, self._committed)
        self._ready = self._calls.ready  # the heap of calls that may start now
        self._gate = CommitGate(self._order, self._committed)
        self._committed_count = 0
        self._written: dict[int, list[str]] = {}
        self._running: dict[int, asyncio.Task[None]] = {}
        self._per_tool: dict[str, int] = {}
        self._stopping: str | None = None
        self.recorder, self.run_id, self._unknown = recorder, run_id, dict(unknown or {})
        self.unknown: dict[int, UnknownCall] = {}  # calls held because their outcome is unknown
        self._invoker = Invoker(min(concurrency, 64), context, run_id, recorder is not None)
        self._done: asyncio.Future[None] | None = None
        self._closed = not growing
        self.approvals = dict(approvals or {})
        self._ids = approval_ids or ApprovalIds(run_id or new_scope())
        self.replay = dict(replay or {})
        self.pending: dict[int, PendingApproval] = {}  # calls awaiting a person
        self.outcomes: dict[int, CallOutcome] = {}  # what each call that ran did
        self._emitter = Emitter(listeners)
        self._interrupt: BaseException | None = None  # KeyboardInterrupt or SystemExit
        self._dispatching, self._eager_until = False, 0.0

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
        self._committed.append(False)
        self._calls.grow(graph, index)
        self._order.append(graph)
        blockers = tuple(b for b in self._order.blockers(index) if not graph.reaches(index, b))
        self._gate.add(blockers)
        return index

    def unstarted(self, index: int) -> bool:
        """True while call ``index`` has neither started nor settled."""
        return self._calls.unstarted(index)

    def started(self, index: int) -> bool:
        """True once call ``index`` has started (its reads are taken)."""
        return self._calls.started[index]

    def held(self, index: int) -> bool:
        """True while call ``index`` is held back (see :meth:`hold`)."""
        return index in self._calls.held

    def waiting(self, index: int) -> bool:
        """True while some call that may write what call ``index`` reads has not settled."""
        return self._calls.waiting[index] > 0

    def hold(self, index: int) -> None:
        """Keep call ``index`` from starting until :meth:`release` (a call that has
        started or settled is left alone)."""
        if self.unstarted(index):
            self._calls.hold(index)

    def release(self, index: int) -> None:
        """Let call ``index`` start once its inputs are settled; dispatches."""
        self._calls.held.discard(index)
        if self.unstarted(index) and self._calls.waiting[index] == 0 and index not in self._ready:
            self._make_ready(index)
        self._dispatch()
        self._check_done()

    def reject(self, index: int, reason: str) -> None:
        """Settle call ``index`` as skipped with ``reason``, without running it."""
        if not self.unstarted(index):
            return
        self._calls.held.discard(index)
        self._calls.unready(index)
        record = self.records[index]
        record.status, record.reason = "skipped", reason
        record.started = record.finished = time.time()
        self._calls.started[index] = True
        if self.listeners:
            self._emitter(CallSkipped(record.finished, index, record.tool, reason))
        self._finish(index, [])

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
        with run_collector(), limits_in_effect(self.limits):  # fewer GC walks; tools see limits
            return await self._run()

    async def _run(self) -> RunResult:
        self._done = asyncio.get_running_loop().create_future()
        if self.listeners:
            self._emitter(RunStarted(time.time(), len(self.records)))
        deadline = None  # set before the first call starts: some may finish at once
        if self.timeout is not None:
            deadline = asyncio.get_running_loop().call_later(self.timeout, self._time_up)
        for index, waiting in enumerate(self._calls.waiting):
            if waiting == 0:
                self._make_ready(index)
        self._dispatch()
        self._check_done()
        try:
            await shelter.wait_done(self._done)  # a tool cannot cancel run_sync's task
        finally:
            if deadline is not None:
                deadline.cancel()
            for task in list(self._running.values()):
                task.cancel()
            self._invoker.close()
        status = run_status(self.records, bool(self.pending), bool(self.unknown))
        if self.listeners:
            self._emitter(RunFinished(time.time(), status))
        result = run_result(
            status,
            self.state,
            self.records,
            owns_state=self.owns_state,
            pending=self.pending,
            outcomes=self.outcomes,
            unknown=self.unknown,
            run_id=self.run_id,
        )
        if self._interrupt is not None:
            self._interrupt.result = result  # type: ignore[attr-defined]
            raise self._interrupt
        return result

    def _make_ready(self, index: int) -> None:
        if not self._calls.may_start(index):
            return
        if self.listeners:
            self._emitter(CallReady(time.time(), index, self.records[index].tool))
        heapq.heappush(self._ready, index)

    def _dispatch(self) -> None:
        # nothing to start, no free slot, or a call settled in _start (skip, replay): the
        # loop below goes on, instead of recursing once per call of a long chain
        if self._dispatching or not self._ready or len(self._running) >= self.concurrency:
            return
        self._dispatching = True
        deferred: list[int] = []
        self._eager_until = time.perf_counter() + EAGER_SECONDS  # then the loop gets a turn
        try:
            while self._ready and len(self._running) < self.concurrency and not self._stopping:
                index = heapq.heappop(self._ready)
                tool = self.registry.get(self.plan.calls[index].tool)
                cap = tool.capacity if tool is not None else None
                if tool is not None and cap is not None and self._per_tool.get(tool.name, 0) >= cap:
                    deferred.append(index)
                    continue
                self._start(index, tool)
        finally:
            self._dispatching = False
            for index in deferred:
                heapq.heappush(self._ready, index)

    def _check_done(self) -> None:
        assert self._done is not None
        if self._done.done() or not self._closed:
            return
        if self._committed_count == len(self.records):
            self._done.set_result(None)
        elif (self.pending or self.unknown) and not self._running and not self._ready:
            self._done.set_result(None)  # what is left waits for a person
        elif self._stopping and not self._running:
            for record in self.records:
                if record.status == "waiting" and record.index not in self._pending:
                    record.status, record.reason = "cancelled", self._stopping
                    self._committed[record.index] = True  # nothing of it will ever come
                    self._committed_count += 1
                    self._gate.committed_without_running(record.index, self._commit)
            self._done.set_result(None)

    # -- one call -----------------------------------------------------------------
    def _start(self, index: int, tool: Tool | None) -> None:
        call, record = self.plan.calls[index], self.records[index]
        self._calls.started[index] = True
        assert tool is not None, "a checked plan names only registered tools"
        arguments, missing = resolve_arguments(call, self.state)
        if missing is not None:
            reason, record.untaken = explain_skip(
                call, missing, self.graph, self.records, self._written, self.state
            )
            record.status, record.reason = "skipped", reason
            record.started = record.finished = time.time()
            if self.listeners:
                self._emitter(CallSkipped(record.finished, index, call.tool, reason))
            self._finish(index, [])
            return
        assert arguments is not None
        record.arguments = arguments
        if index in self.replay:  # it ran before this run was resumed: do not run it again
            self._replay(index, self.replay[index])
            return
        if index in self._unknown:  # in flight at a crash: a person decides (docs/durable.md)
            record.status, record.reason = "unknown", "in flight when its process stopped"
            self.unknown[index] = self._unknown[index]
            return
        decision: Decision | None = None
        if tool.requires_approval is not False and needs_approval(tool, arguments):
            digest = argument_hash(call.tool, arguments)
            approval = self._ids(self.plan, index, digest)
            decision = self.approvals.get(approval)
            if decision is None:
                self._await_approval(index, approval, call.tool, arguments, digest)
                return
            if decision.action == "edit":
                arguments = record.arguments = dict(decision.arguments)
        record.started = time.time()
        if self.listeners:
            self._emitter(CallStarted(record.started, index, call.tool, arguments))
        if decision is not None and decision.action == "reject":
            record.finished = time.time()
            self._failed(call, tool, record, ApprovalRejected(decision.reason or "rejected"))
            return
        if tool.latent and (
            call.has_output or self.latent is None or not self.latent.accepts(tool)
        ):
            self._run_latent(call, tool, record)
            return
        if self.recorder is not None:
            self.recorder.started(record, tool)
        self._per_tool[tool.name] = self._per_tool.get(tool.name, 0) + 1
        eager = time.perf_counter() < self._eager_until
        task = start_task(self._execute(call, tool, record, arguments), eager)
        if task.done():  # it finished in its first step: no callback, no turn of the loop
            self._task_ended(tool.name, task)
            return
        self._running[index] = task
        task.add_done_callback(functools.partial(self._on_task_done, index, tool.name))

    def _await_approval(
        self, index: int, approval: str, tool: str, arguments: dict[str, Any], digest: str
    ) -> None:
        record = self.records[index]
        record.status = "awaiting_approval"
        pending = PendingApproval(approval, index, record.label, tool, arguments, digest)
        self.pending[index] = pending
        if self.recorder is not None:
            self.recorder.awaiting(pending)
        if self.listeners:
            self._emitter(CallAwaitingApproval(time.time(), index, tool, pending.id, arguments))

    def _replay(self, index: int, outcome: CallOutcome) -> None:
        record = self.records[index]
        record.replayed(outcome)
        if outcome.succeeded:
            self._finish(index, list(outcome.writes), succeeded=True)
        else:  # failed, or ran and returned an output that was not written: settled
            assert outcome.error is not None
            if self.listeners:
                invalid = outcome.invalid_output
                self._emitter(failure(invalid, time.time(), index, record.tool, outcome.error))
            self._finish(index, [])

    def _failed(self, call: Call, tool: Tool, record: CallRecord, exc: BaseException) -> None:
        """The tool (or a person) said no: the error arm takes it, or the call fails."""
        error = error_record(exc)
        arm = error_arm(call, tool, error)
        if arm is not None:  # the plan handles the failure: still a success
            record.error, record.output = error, None
            self._settle(call.index, arm, succeeded=True)
        else:
            self._fail(record, exc)
            self._settle(call.index, [], succeeded=False)

    def _run_latent(self, call: Call, tool: Tool, record: CallRecord) -> None:
        record.finished = time.time()
        if not call.has_output:
            record.status = "pending_latent"
            record.reason = "latent call without _output: the execution loop must run it"
            self._finish(call.index, [])
            return
        try:
            record.output, pending, size, self._texts[call.index] = result_writes_text(
                call, tool, call.output, self.limits
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
        try:
            validated = tool.validate_arguments(arguments)
        except Exception as exc:  # ArgumentValidationError, or a validator that broke
            self._fail(record, exc)
            self._finish(call.index, [])
            return
        # ``arguments`` are the call's own (read from the state as copies, literals
        # copied when resolved), and validation usually builds new values: only a
        # container it passed through as is (an ``Any`` parameter) is copied, so that a
        # tool mutating what it got changes neither the state nor the call's record
        for name, value in validated.items():
            if type(value) in (dict, list) and value is arguments.get(name):
                validated[name] = copy_json(value)
        if self.recorder is not None:  # its intent must be durable before the tool runs
            self.recorder.invoking(call.index)
        try:
            if tool.latent:
                assert self.latent is not None
                record.attempts += 1
                output = await self.latent.run(call, tool, validated)
            else:
                output = await self._invoker.invoke(tool, record, validated)
        except asyncio.CancelledError as exc:
            if not self._stopping and self._done and not self._done.done():  # not obelisk's
                record.finished = time.time()
                self._failed(call, tool, record, shelter.not_cancelled(exc))
                return
            if not self._abandoned(call.index):
                record.status, record.finished = "cancelled", time.time()
                record.reason = self._stopping or "cancelled"
                self._finish(call.index, [])
            raise
        except (KeyboardInterrupt, SystemExit) as exc:  # stops the run; its result is kept
            if not self._abandoned(call.index):
                record.finished = time.time()
                self._interrupted(record, exc)
            return
        except BaseException as exc:  # an Exception, GeneratorExit, a tool's own: it failed
            if not self._abandoned(call.index):
                record.finished = time.time()
                self._failed(call, tool, record, exc)
            forget_traceback(exc)
            return
        if self._abandoned(call.index):
            return
        record.finished = time.time()
        validation = tool.output_validation or self.output_validation  # docs/tools.md
        try:
            record.output, pending, size, self._texts[call.index], misfit = validated_writes(
                call, tool, output, self.limits, validation
            )
        except (OutcomeError, OutputValidationError) as exc:
            self._fail(record, exc)
            self._settle(call.index, [], succeeded=False)
            return
        if misfit is not None and validation == "strict":  # it ran; its value is not written
            self._fail(record, OutputValidationError(misfit), invalid_output=True)
            self._settle(call.index, [], succeeded=False)
            return
        record.warnings = () if misfit is None else (misfit,)  # "warn": written all the same
        self._budget.expect(call.index, memory_estimate(record.output, size) * len(pending))
        self._settle(call.index, pending, succeeded=True)

    def _abandoned(self, index: int) -> bool:
        """True when the run gave up on call ``index`` (it outlived the run's timeout)."""
        return self._committed[index]

    def _time_up(self) -> None:
        """The run's ``timeout`` has passed: cancel what runs, start nothing more, and
        soon after give up on calls that ignore the cancellation."""
        assert self._done is not None
        if self._done.done():
            return
        self._stopping = f"not run: the run timed out after {self.timeout:g} s"
        for task in self._running.values():
            task.cancel()
        asyncio.get_running_loop().call_later(shelter.GIVE_UP, self._give_up)
        self._check_done()

    def _give_up(self) -> None:
        assert self._done is not None
        if self._done.done():
            return
        for index in list(self._running):
            record = self.records[index]
            del self._running[index]  # it ignored its cancellation: it fails, timed out
            self._fail(record, shelter.ignored_cancellation(self.timeout))
            self._finish(index, [])
        self._check_done()

    def _interrupted(self, record: CallRecord, exc: BaseException) -> None:
        """A tool raised KeyboardInterrupt or SystemExit: the call fails, the calls in
        flight are cancelled, nothing more starts, and :meth:`run` raises ``exc`` with
        the run's result as ``exc.result``."""
        self._interrupt = exc
        self._stopping = f"not run: {type(exc).__name__} in {record.label} stopped the run"
        record.status, record.error = "failed", error_record(exc)
        if self.listeners:
            self._emitter(failure(False, time.time(), record.index, record.tool, record.error))
        for index, task in self._running.items():
            if index != record.index:
                task.cancel()
        self._finish(record.index, [])

    def _fail(self, record: CallRecord, exc: BaseException, invalid_output: bool = False) -> None:
        record.status = "invalid_output" if invalid_output else "failed"
        record.error = error_record(exc)
        record.finished = record.finished or time.time()
        if self.listeners:
            at, error = record.finished, record.error
            self._emitter(failure(invalid_output, at, record.index, record.tool, error))
        if self.fail_fast and not self._stopping:
            self._stopping = f"not run: fail_fast after {record.label} failed"
            for index, task in self._running.items():
                if index != record.index:
                    task.cancel()

    def _on_task_done(self, index: int, tool_name: str, task: asyncio.Task[None]) -> None:
        self._running.pop(index, None)
        if self._task_ended(tool_name, task) and self._ready:  # a slot is free: fill it
            self._dispatch()
        self._check_done()

    def _task_ended(self, tool_name: str, task: asyncio.Task[None]) -> bool:
        """Free the task's slot; False when it raised (an engine bug: run raises it)."""
        self._per_tool[tool_name] -= 1
        if task.cancelled() or task.exception() is None:
            return True
        assert self._done is not None
        if not self._done.done():
            self._done.set_exception(task.exception())  # type: ignore[arg-type]
        return False

    # -- commit, in plan order among overlapping writers --------------------------
    def _settle(self, index: int, pending: Writes, *, succeeded: bool) -> None:
        """A call ran (or a person rejected it): keep what it did, so that a resumed run
        replays it instead of running it again, then finish it."""
        record = self.records[index]
        outcome = self.outcomes[index] = CallOutcome.of(record, succeeded, pending)
        if self.recorder is not None:
            self.recorder.settled(index, outcome)
        self._finish(index, pending, succeeded=succeeded)

    def _finish(self, index: int, pending: Writes, *, succeeded: bool = False) -> None:
        """A call is done running: its writes wait for its blockers, then commit."""
        self._pending[index] = pending
        if succeeded:
            self._succeeded.add(index)
        self._gate.finish(index, bool(pending), self._commit)
        self._dispatch()
        self._check_done()

    def _commit(self, index: int) -> None:
        """Apply a call's writes, all or nothing, then let its dependents go."""
        call, record = self.plan.calls[index], self.records[index]
        pending = self._pending.pop(index)
        text = self._texts.pop(index, None)
        written: list[str] = []
        if index in self._succeeded:
            # the event's time, taken before the writes so that event times never go back
            succeeded_at = time.time() if self.listeners else 0.0
            try:
                self._budget.make_room(index)
                method, instance = call.output_method, call.instance
                entries = self.state.write_many(
                    pending, method, call=index, instance=instance, owned=True, json=text
                )
            except StateWriteError as exc:
                self._fail(record, exc)
            else:
                record.status = "succeeded"
                if entries and record.error is None:  # the state keeps the value: share the log's
                    record.output_from(entries[0])
                written = [entry.path for entry in entries]
                if self.listeners:
                    self._emitter(CallSucceeded(succeeded_at, index, call.tool, record.output))
                    for entry in entries:
                        self._emitter(StateWritten(entry.time, entry))
        self._written[index] = written
        self._committed[index] = True
        self._committed_count += 1
        if self.recorder is not None:
            self.recorder.committed(record, self.state.log[-len(written) :] if written else ())
        waiting = self._calls.waiting
        for successor in self.graph.successors[index]:
            waiting[successor] -= 1
            if waiting[successor] == 0 and not self._stopping:
                self._make_ready(successor)
