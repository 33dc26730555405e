"""How a run's calls settle: commits in plan order, failures, stopping early
(docs/semantics.md).

:class:`Settling` holds the state of one run and what happens once a call is done:
its writes wait for the calls before it that write overlapping paths, then commit,
all or nothing, and the calls that read what it wrote become ready
(:class:`~obelisk.interpreter.runtime.readiness.Readiness`).  A failed call may stop
the run (``fail_fast``), as may the run's ``timeout`` and a tool that raises
``KeyboardInterrupt`` or ``SystemExit``: then nothing more starts, the calls in flight
are cancelled (:class:`~obelisk.interpreter.runtime.dispatch.Dispatcher`) and the
calls that never started are ``cancelled``.  The
:class:`~obelisk.interpreter.runtime.engine.Engine` builds on it: it starts calls
and runs their tools.
"""

from __future__ import annotations

import asyncio
import time

from obelisk.errors import StateWriteError
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.runtime import shelter
from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.budget import StateBudget
from obelisk.interpreter.runtime.commit_order import CommitGate, CommitOrder
from obelisk.interpreter.runtime.dispatch import Dispatcher
from obelisk.interpreter.runtime.events import CallReady, CallSucceeded, StateWritten, failure
from obelisk.interpreter.runtime.flows import RunLabels
from obelisk.interpreter.runtime.hooks import Hooks
from obelisk.interpreter.runtime.outcome import Writes, error_arm, error_record
from obelisk.interpreter.runtime.readiness import Readiness
from obelisk.interpreter.runtime.records import CallOutcome, CallRecord, UnknownCall
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.labels import LabelMap
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Settling"]


class Settling:
    """The state of one run and how its calls settle (see the module docstring);
    :meth:`_start` (the engine's) starts a ready call.  ``records`` are the calls'
    records, ``pending`` the calls awaiting a person, ``approved`` the approval id of
    each call a person's decision let go on (accepted, edited or rejected, in a resumed
    run: docs/approvals.md), ``unknown`` the calls held because their outcome is
    unknown, ``outcomes`` what each call that ran did."""

    def __init__(
        self,
        plan: Plan,
        graph: PlanGraph,
        registry: Registry,
        state: State,
        settings: RunSettings,
        hooks: Hooks,
        growing: bool,
        labels: LabelMap | None = None,
    ) -> None:
        self.plan, self.graph, self.registry, self.state = plan, graph, registry, state
        self.settings, self._closed = settings, not growing
        self._hooks = hooks
        self._events, self._observed, self._emit = hooks.events, hooks.calls, hooks.emit
        self._budget = StateBudget(state, settings.limits.max_state_bytes)
        self.records = [CallRecord(c.index, c.id, c.tool) for c in plan.calls]
        self._calls = Readiness(graph)
        self._order = CommitOrder(graph)
        self._gate = CommitGate(self._order, self._calls.settled)
        self._tasks = Dispatcher(settings.concurrency)
        self._succeeded: set[int] = set()
        self._pending: dict[int, Writes] = {}
        self._texts: dict[int, bytes | None] = {}  # a pending result's JSON text, if made
        self._written: dict[int, list[str]] = {}
        self._standing: dict[int, tuple[str, ...]] = {}  # kept calls' earlier writes
        self._done: asyncio.Future[None] | None = None
        self.pending: dict[int, PendingApproval] = {}
        self.approved: dict[int, str] = {}  # call index: the approval id decided on
        self.unknown: dict[int, UnknownCall] = {}
        self.outcomes: dict[int, CallOutcome] = {}
        self._interrupt: BaseException | None = None  # KeyboardInterrupt or SystemExit
        self._labels = RunLabels.of(settings, registry, labels)  # None: no label in play (yet)

    def _start(self, index: int, tool: Tool | None) -> None:
        """Start ready call ``index`` (the engine does)."""
        raise NotImplementedError

    # -- ready calls, and the end of the run ---------------------------------------
    def _ready_event(self, index: int) -> None:
        if self._events:
            self._emit(CallReady(time.time(), index, self.records[index].tool))

    def _dispatch(self) -> None:
        self._tasks.dispatch(self._calls, self.plan.calls, self.registry, self._start)

    def _check_done(self) -> None:
        assert self._done is not None
        if self._done.done() or not self._closed:
            return
        running, stopping = self._tasks.running, self._tasks.stopping
        if self._calls.all_settled():
            self._done.set_result(None)
        elif (self.pending or self.unknown) and not running and not self._calls.has_ready():
            self._done.set_result(None)  # what is left waits for a person
        elif stopping and not running:
            for record in self.records:
                if record.status == "waiting" and record.index not in self._pending:
                    record.status, record.reason = "cancelled", stopping
                    self._calls.cancel(record.index)  # nothing of it will ever come
                    self._gate.committed_without_running(record.index, self._commit)
            self._done.set_result(None)

    # -- stopping early ----------------------------------------------------------
    def _time_up(self) -> None:
        """The run's ``timeout`` has passed: cancel what runs, start nothing more, and
        soon after give up on calls that ignore the cancellation."""
        assert self._done is not None
        if self._done.done():
            return
        self._tasks.stop(f"not run: the run timed out after {self.settings.timeout:g} s")
        asyncio.get_running_loop().call_later(shelter.GIVE_UP, self._give_up)
        self._check_done()

    def _give_up(self) -> None:
        assert self._done is not None
        if self._done.done():
            return
        for index in self._tasks.abandon():  # it ignored its cancellation: it fails, timed out
            self._fail(self.records[index], shelter.ignored_cancellation(self.settings.timeout))
            self._finish(index, [])
        self._check_done()

    def _interrupted(self, record: CallRecord, exc: BaseException) -> None:
        """A tool raised KeyboardInterrupt or SystemExit: the call fails, the calls in
        flight are cancelled, nothing more starts, and :meth:`run` raises ``exc`` with
        the run's result as ``exc.result``."""
        self._interrupt = exc
        reason = f"not run: {type(exc).__name__} in {record.label} stopped the run"
        record.status, record.error = "failed", error_record(exc)
        if self._events:
            self._emit(failure(False, time.time(), record.index, record.tool, record.error))
        self._tasks.stop(reason, spare=record.index)
        self._finish(record.index, [])

    def _fail(self, record: CallRecord, exc: BaseException, invalid_output: bool = False) -> None:
        record.status = "invalid_output" if invalid_output else "failed"
        record.error = error_record(exc)
        record.finished = record.finished or time.time()
        if self._events:
            at, error = record.finished, record.error
            self._emit(failure(invalid_output, at, record.index, record.tool, error))
        if self.settings.fail_fast and not self._tasks.stopping:
            self._tasks.stop(f"not run: fail_fast after {record.label} failed", record.index)

    def _on_task_done(self, index: int, tool_name: str, task: asyncio.Task[None]) -> None:
        self._tasks.running.pop(index, None)
        if self._task_ended(tool_name, task) and self._calls.has_ready():  # a slot is free
            self._dispatch()
        self._check_done()

    def _task_ended(self, tool_name: str, task: asyncio.Task[None]) -> bool:
        """Free the task's slot; False when it raised (an engine bug: run raises it)."""
        error = self._tasks.ended(tool_name, task)
        if error is None:
            return True
        assert self._done is not None
        if not self._done.done():
            self._done.set_exception(error)
        return False

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

    # -- commit, in plan order among overlapping writers --------------------------
    def _settle(self, index: int, pending: Writes, *, succeeded: bool) -> None:
        """A call ran (or a person rejected it): keep what it did, so that a resumed run
        replays it instead of running it again, then finish it."""
        record = self.records[index]
        labels = None if self._labels is None else self._labels.stored(index, record.policy)
        outcome = self.outcomes[index] = CallOutcome.of(record, succeeded, pending, labels)
        if self._observed:
            self._hooks.settled(index, outcome)
        self._finish(index, pending, succeeded=succeeded)

    def _finish(self, index: int, pending: Writes, *, succeeded: bool = False) -> None:
        """A call is done running: its writes wait for its blockers, then commit."""
        self._pending[index] = pending
        if succeeded:
            self._succeeded.add(index)
        self._gate.finish(index, bool(pending), self._commit)
        if not self._tasks.dispatching:  # else the round in progress takes what is ready
            self._dispatch()
        self._check_done()

    def _commit(self, index: int) -> None:
        """Apply a call's writes, all or nothing, then let its dependents go."""
        record = self.records[index]
        pending = self._pending.pop(index)
        text = self._texts.pop(index, None)
        written = self._write(index, pending, text) if index in self._succeeded else []
        if not written and self._standing and index in self._standing:
            written = list(self._standing[index])  # kept: its earlier writes stand
        self._written[index] = written
        if self._labels is not None:  # before its readers start (docs/security.md)
            targets = [target for target, _ in pending] if written else ()
            label = self._labels.committed(
                self.plan.calls[index], targets, record.error is not None
            )
            record.labels = {**(record.labels or {}), "_result": label.to_dict()}
        woken = self._calls.done(index, wake=not self._tasks.stopping)
        if self._observed:
            self._hooks.committed(record, self.state.log[-len(written) :] if written else ())
        if self._events:
            for ready in woken:
                self._ready_event(ready)

    def _write(self, index: int, pending: Writes, text: bytes | None) -> list[str]:
        """Write a succeeded call's results; returns the paths written."""
        call, record = self.plan.calls[index], self.records[index]
        # the event's time, taken before the writes so that event times never go back
        succeeded_at = time.time() if self._events else 0.0
        try:
            self._budget.make_room(index)
            method, instance = call.output_method, call.instance
            entries = self.state.write_many(
                pending, method, call=index, instance=instance, owned=True, json=text
            )
        except StateWriteError as exc:
            self._fail(record, exc)
            return []
        record.status = "succeeded"
        if entries and record.error is None:  # the state keeps the value: share the log's
            record.output_from(entries[0])
        if self._events:
            self._emit(CallSucceeded(succeeded_at, index, call.tool, record.output))
            for entry in entries:
                self._emit(StateWritten(entry.time, entry))
        return [entry.path for entry in entries]
