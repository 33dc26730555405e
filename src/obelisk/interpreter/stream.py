"""Streaming dispatch: run each call while the model is still writing the plan (DESIGN §2.6).

The solution's JSON text is parsed as it arrives with jiter's partial mode.  A
call is taken the moment its object is complete (its closing brace has arrived)
and joins a growing plan, which is checked
again as a whole each time.  A call is dispatched as soon as its inputs are
settled, exactly as in :mod:`~obelisk.interpreter.engine`.

While the plan grows:

* a call that reads a path no received call writes, and that the state and
  input do not hold, is held: a later call may still write it; at the end of
  the stream it is skipped with the ``unresolved_reference`` diagnostic;
* a call with any other error (unknown tool, bad argument, bad reference) is
  not dispatched: it is skipped with its diagnostic as the reason, so its
  dependents skip too;
* a call that would write what an already-started call read (order of the
  stream disagrees with the dependencies) is not dispatched either
  (``stream_order``); calls caught in a dependency cycle never become ready and
  are skipped with the ``dependency_cycle`` diagnostic at the end.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jiter

from obelisk.errors import Diagnostic
from obelisk.interpreter.check import check
from obelisk.interpreter.check_result import CheckResult
from obelisk.interpreter.engine import Engine
from obelisk.interpreter.graph import PlanGraph
from obelisk.interpreter.loop_records import Turn
from obelisk.interpreter.messages import Solution, SolutionError, parse_solution
from obelisk.interpreter.plan import _Collector, _parse_call
from obelisk.interpreter.plan_model import Plan
from obelisk.interpreter.records import CallRecord, CallSkipped, RunResult
from obelisk.interpreter.state import State
from obelisk.interpreter.subrequests import SubRequests

if TYPE_CHECKING:
    from obelisk.interpreter.loop import _Session

__all__ = ["GrowingEngine", "complete_calls", "stream_turn"]


def complete_calls(text: str, final: bool = False) -> list[Any]:
    """The call objects of a partial solution text that are certainly complete.

    A call is complete once its closing brace has arrived (or a key after
    ``calls`` has appeared, or the text is ``final``).

    >>> complete_calls('{"calls": [{"_tool": "a"}, {"_to')
    [{'_tool': 'a'}]
    >>> complete_calls('{"calls": [{"_tool": "a"}, {"_tool": "b"}')
    [{'_tool': 'a'}, {'_tool': 'b'}]
    >>> complete_calls('{"calls": [{"_tool": "a"}, {"_tool": "b", "x": {"y": 1}')
    [{'_tool': 'a'}]
    """
    try:
        value = jiter.from_json(text.encode("utf-8"), partial_mode="on")
    except ValueError:
        return []
    if not isinstance(value, dict) or not isinstance(value.get("calls"), list):
        return []
    calls: list[Any] = value["calls"]
    keys = list(value)
    if final or keys.index("calls") < len(keys) - 1:
        return calls
    # Partial mode cannot tell a finished last object from a cut one: close the
    # array and the solution after it; if that parses, the last call is complete.
    trimmed = text.rstrip().rstrip(",").rstrip()
    ending = {"}": "]}", "]": "}"}.get(trimmed[-1:])
    if calls and ending:
        try:
            closed = jiter.from_json((trimmed + ending).encode("utf-8"))
        except ValueError:
            pass
        else:
            if isinstance(closed, dict) and len(closed.get("calls") or ()) == len(calls):
                return calls
    return calls[:-1]


class GrowingEngine(Engine):
    """An :class:`Engine` whose plan grows while it runs (one :meth:`add` per call).

    ``check_plan(plan)`` checks a prefix of the plan (the loop passes its
    registry, input and state).  :meth:`close` ends the stream; :meth:`run`
    returns once every call has settled and the stream is closed.
    """

    def __init__(
        self, state: State, check_plan: Callable[[Plan], CheckResult], **options: Any
    ) -> None:
        empty = Plan(calls=())
        super().__init__(empty, PlanGraph(empty), options.pop("registry"), state, **options)
        self._check_plan = check_plan
        self._closed = False
        self._held: set[int] = set()
        self._started: set[int] = set()
        self._rejected: set[int] = set()
        self._raw: list[Any] = []
        self.checked: CheckResult | None = None
        self.diagnostics: list[Diagnostic] = []

    # -- growth -------------------------------------------------------------------
    def add(self, raw: Any) -> None:
        """Take the next call object of the stream: parse, re-check, maybe dispatch."""
        index = len(self.plan.calls)
        self._raw.append(raw)
        collector = _Collector()
        call = _parse_call(raw, index, collector)
        if call is None:  # unusable: a placeholder that reads and writes nothing
            tool = raw.get("_tool") if isinstance(raw, dict) else None
            placeholder = {"_tool": tool if isinstance(tool, str) and tool else "?"}
            call = _parse_call(placeholder, index, _Collector())
            assert call is not None
        plan = Plan(calls=(*self.plan.calls, call))
        checked = self._check_plan(plan)
        self.checked = checked
        graph = checked.graph if checked.graph is not None else PlanGraph(plan)
        self.plan, self.graph = plan, graph
        self.records.append(CallRecord(index, call.id, call.tool))
        self._committed.append(False)
        self._rank.append(index)
        problems = [d for d in collector.diagnostics if d.severity == "error"]
        problems += [
            d
            for d in checked.diagnostics
            if d.call == index
            and d.severity == "error"
            and d.code not in ("unresolved_reference", "dependency_cycle")
        ]
        late = [p for p in graph.successors[index] if p in self._started]
        if late and not problems:
            reader = self.records[late[0]]
            problems.append(
                Diagnostic(
                    "stream_order",
                    "error",
                    f"it writes what {reader.label} already read: in a streamed plan a "
                    "call must come before the calls that read what it writes",
                    index,
                    label=call.label,
                )
            )
        self._waiting.append(sum(1 for p in graph.predecessors[index] if not self._committed[p]))
        self._blockers.append(
            tuple(b for b in self._blockers_of(call) if not graph.reaches(index, b))
        )
        if problems:
            self.diagnostics.extend(problems)
            self._reject(index, "not dispatched: " + str(problems[0]).split("\n")[0])
        else:
            self._regather(index)
        self._update_held(checked)
        self._dispatch()
        self._check_done()

    def _regather(self, index: int) -> None:
        """Earlier calls that now wait for the new call too."""
        for reader in self.graph.successors[index]:
            if reader in self._started or reader in self._rejected or self._committed[reader]:
                continue
            if reader in self._ready:
                self._ready.remove(reader)
                heapq.heapify(self._ready)
            self._waiting[reader] += 1

    def _update_held(self, checked: CheckResult) -> None:
        unresolved = {
            d.call
            for d in checked.diagnostics
            if d.code == "unresolved_reference" and d.call is not None
        }
        for index in range(len(self.records)):
            if self._committed[index] or index in self._started or index in self._rejected:
                continue
            if index in unresolved:
                if index in self._ready:
                    self._ready.remove(index)
                    heapq.heapify(self._ready)
                self._held.add(index)
            elif index in self._held:
                self._held.discard(index)
                if self._waiting[index] == 0:
                    self._make_ready(index)
            elif self._waiting[index] == 0 and index not in self._ready:
                self._make_ready(index)

    def _reject(self, index: int, reason: str) -> None:
        record = self.records[index]
        record.status, record.reason = "skipped", reason
        record.started = record.finished = time.time()
        self._rejected.add(index)
        if self.listeners:
            self._emit(CallSkipped(record.finished, index, record.tool, reason))
        self._finish(index, [])

    def close(self) -> None:
        """The stream has ended: held calls and calls in a cycle are skipped."""
        self._closed = True
        final = self.checked.diagnostics if self.checked is not None else ()
        for index in range(len(self.records)):
            if self._committed[index] or index in self._started or index in self._rejected:
                continue
            found = [d for d in final if d.call == index and d.severity == "error"]
            if index in self._held or (found and self._waiting[index] > 0):
                if found:
                    self.diagnostics.append(found[0])
                reason = str(found[0]).split("\n")[0] if found else "its inputs never settled"
                self._held.discard(index)
                self._reject(index, "not dispatched: " + reason)
        self._dispatch()
        self._check_done()

    # -- engine hooks ---------------------------------------------------------------
    def _make_ready(self, index: int) -> None:
        if (  # held, or settled already: a cycle's member may be "freed" after it was refused
            index in self._held
            or self._committed[index]
            or index in self._started
            or index in self._rejected
        ):
            return
        super()._make_ready(index)

    def _start(self, index: int, tool: Any) -> None:
        self._started.add(index)
        super()._start(index, tool)

    def _check_done(self) -> None:
        if self._closed:
            super()._check_done()


async def stream_turn(session: _Session, turn: Turn) -> tuple[Solution, RunResult]:
    """Stream one turn's answer, dispatching calls as they complete.

    Returns the parsed solution and the run.  Raises
    :class:`~obelisk.interpreter.messages.SolutionError` when the whole text is
    not a solution (calls already run keep their writes in the state).
    """
    loop = session.loop
    state = session.state

    def check_plan(plan: Plan) -> CheckResult:
        check_input, document, data = session.check_documents()
        return check(plan, loop.registry, check_input, document, data=data)

    engine = GrowingEngine(
        state,
        check_plan,
        registry=loop.registry,
        concurrency=loop.concurrency,
        fail_fast=loop.fail_fast,
        listeners=loop.listeners,
        latent=SubRequests(loop, state, turn),
    )
    running = asyncio.ensure_future(engine.run())
    await asyncio.sleep(0)  # let the engine start before the first call arrives
    text = ""
    taken = 0
    try:
        async for chunk in loop.model.stream(turn.request):  # type: ignore[attr-defined]
            text += chunk
            if "}" not in chunk and "]" not in chunk:
                continue
            calls = complete_calls(text)
            for raw in calls[taken:]:
                engine.add(raw)
            taken = max(taken, len(calls))
        for raw in complete_calls(text, final=True)[taken:]:
            engine.add(raw)
    finally:
        engine.close()
        run = await running
    try:
        solution = parse_solution(text)
    except SolutionError:
        if not engine.records:
            raise
        solution = Solution(calls=engine._raw, output=None)
    return solution, run
