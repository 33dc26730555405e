"""The scheduler: runs each call the moment its inputs are settled (DESIGN §2.3, §2.4).

A call is *ready* when every call that may write what it reads has committed.
Then its expressions are evaluated (``||`` fallback, ``&&`` gate, ``[*]``); a
missing required read skips it, with a reason naming the path and who did not
write it.  Otherwise its arguments are validated and the tool runs: async tools
on the event loop, sync tools in worker threads, under a global ``concurrency``
limit and per-tool ``capacity``; calls ready together are dispatched in plan
order.  Per-tool ``timeout`` and ``retry`` (tenacity) apply before a call counts
as failed.

Determinism (DESIGN §1.4): a call's writes *commit* only after every earlier
call (in plan order) that writes an overlapping path in the same layer has
committed, and its dependents become ready on commit.  So the state, and every
value read, depend on the plan, the inputs and the tool results, never on timing.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tenacity

from obelisk.grammar import Conjunction, Escaped, Expression, Reference
from obelisk.interpreter.graph import PlanGraph
from obelisk.interpreter.plan_model import Call, Plan
from obelisk.interpreter.records import (
    CallFailed,
    CallReady,
    CallRecord,
    CallSkipped,
    CallStarted,
    CallSucceeded,
    Event,
    RunFinished,
    RunResult,
    RunStarted,
    RunStatus,
    StateWritten,
)
from obelisk.interpreter.registry import Registry
from obelisk.interpreter.state import MISSING, State, StateWriteError
from obelisk.interpreter.tools import ArgumentValidationError, Outcome, Tool

__all__ = ["Engine", "Listener"]

Listener = Callable[[Event], None]
Pending = list[tuple[Reference, Any]]


class _CallError(Exception):
    """A failure the engine itself detects (bad outcome, output schema, write)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _error(exc: BaseException) -> dict[str, Any]:
    kind = exc.kind if isinstance(exc, _CallError) else type(exc).__name__
    return {"type": kind, "message": str(exc)}


class Engine:
    """Runs one checked plan against a :class:`State` (use :func:`obelisk.run`)."""

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
    ) -> None:
        self.plan, self.graph, self.registry, self.state = plan, graph, registry, state
        self.concurrency = concurrency
        self.fail_fast = fail_fast
        self.listeners = listeners
        self.records = [CallRecord(c.index, c.id, c.tool) for c in plan.calls]
        self._waiting = [len(preds) for preds in graph.predecessors]
        self._blockers = [self._blockers_of(c) for c in plan.calls]
        self._ready: list[int] = []
        self._executed: list[int] = []  # heap of calls run but not yet committed
        self._pending: dict[int, Pending] = {}
        self._committed = [False] * len(plan.calls)
        self._committed_count = 0
        self._written: dict[int, list[str]] = {}
        self._running: dict[int, asyncio.Task[None]] = {}
        self._per_tool: dict[str, int] = {}
        self._stopping: str | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._done: asyncio.Future[None] | None = None

    # -- set-up ------------------------------------------------------------------
    def _blockers_of(self, call: Call) -> tuple[int, ...]:
        """Earlier calls whose overlapping writes in the same layer must commit first."""
        found: set[int] = set()
        for write in self.graph.writes[call.index]:
            for other in self.graph.index.overlapping(write.key):
                if (
                    other.call < call.index
                    and other.instance == write.instance
                    and other.call not in found
                    and not self.graph.reaches(call.index, other.call)
                ):
                    found.add(other.call)
        return tuple(sorted(found))

    def _emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)

    # -- the loop ----------------------------------------------------------------
    async def run(self) -> RunResult:
        """Run every call; returns the :class:`RunResult` (never raises for tool errors)."""
        self._done = asyncio.get_running_loop().create_future()
        if self.listeners:
            self._emit(RunStarted(time.time(), len(self.records)))
        for index, waiting in enumerate(self._waiting):
            if waiting == 0:
                self._make_ready(index)
        self._dispatch()
        self._check_done()
        try:
            await self._done
        finally:
            for task in list(self._running.values()):
                task.cancel()
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
        status = self._status()
        if self.listeners:
            self._emit(RunFinished(time.time(), status))
        state = self.state
        return RunResult(
            status=status,
            state=state.document("state") or {},
            calls=tuple(self.records),
            log=tuple(state.log),
            documents={kind: state.document(kind) for kind in state.kinds},
            instances={name: state.document("state", name) for name in state.instances},
        )

    def _status(self) -> RunStatus:
        statuses = {record.status for record in self.records}
        if "failed" in statuses or "cancelled" in statuses:
            return "failed"
        if "pending_latent" in statuses:
            return "partial"
        return "completed"

    def _make_ready(self, index: int) -> None:
        if self.listeners:
            self._emit(CallReady(time.time(), index, self.records[index].tool))
        heapq.heappush(self._ready, index)

    def _dispatch(self) -> None:
        deferred: list[int] = []
        while self._ready and len(self._running) < self.concurrency and not self._stopping:
            index = heapq.heappop(self._ready)
            tool = self.registry.get(self.plan.calls[index].tool)
            if (
                tool is not None
                and tool.capacity is not None
                and self._per_tool.get(tool.name, 0) >= tool.capacity
            ):
                deferred.append(index)
                continue
            self._start(index, tool)
        for index in deferred:
            heapq.heappush(self._ready, index)

    def _check_done(self) -> None:
        assert self._done is not None
        if self._done.done():
            return
        if self._committed_count == len(self.records):
            self._done.set_result(None)
        elif self._stopping and not self._running:
            for record in self.records:
                if record.status == "waiting":
                    record.status, record.reason = "cancelled", self._stopping
            self._done.set_result(None)

    # -- one call -----------------------------------------------------------------
    def _start(self, index: int, tool: Tool | None) -> None:
        call, record = self.plan.calls[index], self.records[index]
        assert tool is not None, "a checked plan names only registered tools"
        arguments, reason = self._resolve(call)
        if reason is not None:
            record.status, record.reason = "skipped", reason
            record.started = record.finished = time.time()
            if self.listeners:
                self._emit(CallSkipped(record.finished, index, call.tool, reason))
            self._finish(index, [])
            return
        assert arguments is not None
        record.arguments = arguments
        record.started = time.time()
        if self.listeners:
            self._emit(CallStarted(record.started, index, call.tool, arguments))
        if tool.latent:
            self._run_latent(call, tool, record)
            return
        self._per_tool[tool.name] = self._per_tool.get(tool.name, 0) + 1
        task = asyncio.ensure_future(self._execute(call, tool, record, arguments))
        self._running[index] = task
        task.add_done_callback(functools.partial(self._on_task_done, index, tool.name))

    def _run_latent(self, call: Call, tool: Tool, record: CallRecord) -> None:
        record.finished = time.time()
        if not call.has_output:
            record.status = "pending_latent"
            record.reason = "latent call without _output: the execution loop must run it"
            self._finish(call.index, [])
            return
        try:
            pending = self._outputs(call, tool, call.output)
        except _CallError as exc:
            self._fail(record, exc)
            self._finish(call.index, [])
            return
        record.status, record.output = "succeeded", call.output
        if self.listeners:
            self._emit(CallSucceeded(record.finished, call.index, call.tool, call.output))
        self._finish(call.index, pending)

    async def _execute(
        self, call: Call, tool: Tool, record: CallRecord, arguments: dict[str, Any]
    ) -> None:
        try:
            validated = tool.validate_arguments(arguments)
        except ArgumentValidationError as exc:
            self._fail(record, exc)
            self._finish(call.index, [])
            return
        try:
            output = await self._invoke(tool, record, validated)
        except asyncio.CancelledError:
            record.status, record.finished = "cancelled", time.time()
            record.reason = self._stopping or "cancelled"
            self._finish(call.index, [])
            raise
        except Exception as exc:
            record.finished = time.time()
            alternatives = call.alternatives
            if len(alternatives) >= 2 and not tool.outcomes:  # the error arm (DESIGN §1.3)
                record.error = _error(exc)
                value = {"error": {**record.error, "tool": call.tool, "call": call.index}}
                record.status, record.output = "succeeded", None
                if self.listeners:
                    self._emit(CallSucceeded(record.finished, call.index, call.tool, None))
                self._finish(call.index, [(ref, value) for ref in alternatives[-1]])
            else:
                self._fail(record, exc)
                self._finish(call.index, [])
            return
        record.finished = time.time()
        try:
            pending = self._outputs(call, tool, output)
        except _CallError as exc:
            self._fail(record, exc)
            self._finish(call.index, [])
            return
        record.status = "succeeded"
        record.output = output.value if isinstance(output, Outcome) else output
        if self.listeners:
            self._emit(CallSucceeded(record.finished, call.index, call.tool, record.output))
        self._finish(call.index, pending)

    async def _invoke(self, tool: Tool, record: CallRecord, arguments: dict[str, Any]) -> Any:
        policy = tool.retry
        if policy is None or policy.attempts == 1:  # no retries: skip tenacity's set-up
            record.attempts += 1
            return await self._once(tool, arguments)
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(policy.attempts),
            wait=tenacity.wait_exponential(multiplier=policy.backoff)
            if policy.backoff
            else tenacity.wait_none(),
            retry=tenacity.retry_if_exception_type(policy.retry_on),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                record.attempts += 1
                return await self._once(tool, arguments)
        raise AssertionError("tenacity either returns or re-raises")  # pragma: no cover

    async def _once(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        function = tool.function
        assert function is not None
        if tool.is_async:
            awaitable = function(**arguments)
        else:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=min(self.concurrency, 64), thread_name_prefix="obelisk-tool"
                )
            loop = asyncio.get_running_loop()
            awaitable = loop.run_in_executor(
                self._executor, functools.partial(function, **arguments)
            )
        if tool.timeout is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, tool.timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"timed out after {tool.timeout:g} s") from None

    def _outputs(self, call: Call, tool: Tool, output: Any) -> Pending:
        """The writes a result makes: its alternative's targets (fan-out), validated."""
        alternatives = call.alternatives
        chosen: int | str = 0
        value = output
        if isinstance(output, Outcome):
            value = output.value
            chosen = tool.outcomes.index(output.k) if output.k in tool.outcomes else output.k
            if (
                not isinstance(chosen, int)
                or isinstance(chosen, bool)
                or not 0 <= chosen < max(1, len(alternatives))
            ):
                count = len(alternatives)
                raise _CallError(
                    "OutcomeError",
                    f"{call.label} returned Outcome({output.k!r}, ...), but its _outputPath has "
                    f"{count} alternative{'s' if count != 1 else ''}",
                )
        problems = tool.validate_output(value)
        if problems:
            where = problems[0].path
            raise _CallError(
                "OutputValidationError",
                f"the output of {tool.name} does not fit its schema"
                + (f" at {where}" if where else "")
                + f": {problems[0].message}",
            )
        if not alternatives:
            return []
        assert isinstance(chosen, int)
        return [(ref, value) for ref in alternatives[chosen]]

    def _fail(self, record: CallRecord, exc: BaseException) -> None:
        record.status, record.error = "failed", _error(exc)
        record.finished = record.finished or time.time()
        if self.listeners:
            self._emit(CallFailed(record.finished, record.index, record.tool, record.error))
        if self.fail_fast and not self._stopping:
            self._stopping = f"not run: fail_fast after {record.label} failed"
            for index, task in self._running.items():
                if index != record.index:
                    task.cancel()

    def _on_task_done(self, index: int, tool_name: str, task: asyncio.Task[None]) -> None:
        self._running.pop(index, None)
        self._per_tool[tool_name] -= 1
        if not task.cancelled() and task.exception() is not None:  # an engine bug: surface it
            assert self._done is not None
            if not self._done.done():
                self._done.set_exception(task.exception())  # type: ignore[arg-type]
            return
        self._dispatch()
        self._check_done()

    # -- commit, in plan order among overlapping writers --------------------------
    def _finish(self, index: int, pending: Pending) -> None:
        self._pending[index] = pending
        heapq.heappush(self._executed, index)
        progressed = True
        while progressed:
            progressed = False
            for candidate in sorted(self._executed):
                if (
                    all(self._committed[b] for b in self._blockers[candidate])
                    or not self._pending[candidate]
                ):
                    self._executed.remove(candidate)
                    heapq.heapify(self._executed)
                    self._commit(candidate)
                    progressed = True
                    break
        self._dispatch()
        self._check_done()

    def _commit(self, index: int) -> None:
        call, record = self.plan.calls[index], self.records[index]
        written: list[str] = []
        for reference, value in self._pending.pop(index):
            try:
                entry = self.state.write(
                    reference, value, call.output_method, call=index, instance=call.instance
                )
            except StateWriteError as exc:
                record.status, record.error = "failed", _error(exc)
                if self.listeners:
                    self._emit(CallFailed(time.time(), index, call.tool, record.error))
                break
            written.append(str(reference))
            if self.listeners:
                self._emit(StateWritten(entry.time, entry))
        self._written[index] = written
        self._committed[index] = True
        self._committed_count += 1
        for successor in self.graph.successors[index]:
            self._waiting[successor] -= 1
            if self._waiting[successor] == 0 and not self._stopping:
                self._make_ready(successor)

    # -- reading -------------------------------------------------------------------
    def _resolve(self, call: Call) -> tuple[dict[str, Any] | None, str | None]:
        """The call's arguments with every expression evaluated, or the skip reason."""
        values: dict[tuple[str | int, ...], Any] = {}
        for argument in call.expressions:
            node = argument.expression
            if isinstance(node, Escaped):
                values[argument.path] = str(node)
                continue
            value, missing = self._evaluate(node, call.instance)
            if missing is not None:
                return None, self._explain(call, missing)
            values[argument.path] = value
        if not values:
            return dict(call.arguments), None
        return _substitute(call.arguments, values, ()), None

    def _evaluate(
        self, node: Expression, instance: str | None
    ) -> tuple[Any, list[Reference] | None]:
        if isinstance(node, Reference):
            value = self.state.read(node, instance)
            return (None, [node]) if value is MISSING else (value, None)
        if isinstance(node, Conjunction):
            value = None
            for part in node.parts:
                value = self.state.read(part, instance)
                if value is MISSING:
                    return None, [part]
            return value, None
        missing: list[Reference] = []
        for option in node.options:
            value, absent = self._evaluate(option, instance)
            if absent is None:
                return value, None
            missing.extend(absent)
        return None, missing

    def _explain(self, call: Call, missing: list[Reference]) -> str:
        """``†state.receipt was not written: #0 processPayment wrote †state.error``."""
        reasons = []
        for reference in missing:
            writers: list[str] = []
            for read, sources in zip(
                self.graph.reads[call.index], self.graph.sources[call.index], strict=True
            ):
                if read.reference is not reference:
                    continue
                for source in sources:
                    writer = self.records[source.call]
                    if writer.status == "succeeded":
                        wrote = self._written.get(source.call) or []
                        what = " and ".join(wrote) if wrote else "nothing"
                        text = f"{writer.label} wrote {what}"
                    elif writer.status == "pending_latent":
                        text = f"{writer.label} is a latent call still pending"
                    else:
                        text = f"{writer.label} {writer.status.replace('skipped', 'was skipped')}"
                    if text not in writers:
                        writers.append(text)
            if writers:
                reasons.append(f"{reference} was not written: {'; '.join(writers)}")
            elif reference.kind == "input":
                reasons.append(f"{reference} is not in the input")
            else:
                reasons.append(f"{reference} does not exist and no call writes it")
        return "; ".join(reasons)


def _substitute(
    value: Any, values: dict[tuple[str | int, ...], Any], path: tuple[str | int, ...]
) -> Any:
    """A copy of ``value`` with the evaluated expressions put in at their paths."""
    if path in values:
        return values[path]
    if isinstance(value, dict):
        return {key: _substitute(item, values, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, values, (*path, i)) for i, item in enumerate(value)]
    return value
