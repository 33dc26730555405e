"""Streaming dispatch: run each call while the model is still writing the plan (docs/loop.md).

The solution's JSON text is parsed as it arrives with jiter's partial mode.  A
call is taken the moment its object is complete (its closing brace has arrived)
and joins a growing plan, which is checked
again as a whole each time.  A call is dispatched as soon as its inputs are
settled, exactly as in :mod:`~obelisk.interpreter.runtime.engine`.

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
from collections.abc import AsyncIterator, Callable
from typing import Any

import jiter

from obelisk.diagnostics import Collector, Diagnostic
from obelisk.errors import SolutionError
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.loop.messages import Solution, parse_solution
from obelisk.interpreter.plan.call import parse_call
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.records import CallOutcome, RunResult

__all__ = ["Keep", "StreamDispatcher", "complete_calls", "stream_solution"]

Keep = Callable[[int, Any], tuple[CallOutcome, tuple[str, ...]] | None]
"""``keep(index, raw)``: the outcome to replay for a streamed call, and the paths it
wrote before, or ``None`` to run it."""


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


def _parsed(raw: Any, index: int, collector: Collector) -> Call:
    """Call ``index`` of a stream, or when it is unusable (its problems in
    ``collector``) a placeholder that reads and writes nothing."""
    call = parse_call(raw, index, collector)
    if call is None:
        tool = raw.get("_tool") if isinstance(raw, dict) else None
        placeholder = {"_tool": tool if isinstance(tool, str) and tool else "?"}
        call = parse_call(placeholder, index, Collector())
        assert call is not None
    return call


class StreamDispatcher:
    """Feeds the calls of a streamed solution to a growing :class:`Engine`.

    ``engine`` must be built with ``growing=True`` on an empty plan;
    ``check_plan(plan)`` checks a prefix of the plan (the loop passes its
    registry, input and state); ``keep(index, raw)`` gives the outcome to replay (and
    the paths it wrote) for a call an earlier revision ran, or ``None`` (the loop's
    :class:`~obelisk.interpreter.loop.plan_history.StreamKeeper`).  :meth:`add` takes each
    complete call object,
    :meth:`close` ends the stream.  ``calls`` keeps the raw call objects,
    ``diagnostics`` the problems that kept calls from being dispatched.
    """

    def __init__(
        self,
        engine: Engine,
        check_plan: Callable[[Plan], CheckResult],
        keep: Keep | None = None,
    ) -> None:
        self.engine = engine
        self.check_plan = check_plan
        self.keep = keep
        self.plan = Plan(calls=())
        self.calls: list[Any] = []
        self.checked: CheckResult | None = None
        self.diagnostics: list[Diagnostic] = []

    def add(self, raw: Any) -> None:
        """Take the next call object of the stream: parse, re-check, maybe dispatch."""
        engine = self.engine
        index = len(self.plan.calls)
        self.calls.append(raw)
        collector = Collector()
        call = _parsed(raw, index, collector)
        plan = Plan(calls=(*self.plan.calls, call))
        checked = self.check_plan(plan)
        graph = checked.graph if checked.graph is not None else PlanGraph(plan)
        self.plan, self.checked = plan, checked
        engine.append(plan, graph)
        problems = self._problems(call, collector, checked, graph)
        if problems:
            self.diagnostics.extend(problems)
            engine.reject(index, "not dispatched: " + str(problems[0]).split("\n")[0])
        elif self.keep is not None:
            kept = self.keep(index, raw)
            if kept is not None:  # an earlier revision's call: replayed, not run again
                engine.keep(index, *kept)
        self._hold_or_release(checked)

    def _problems(
        self, call: Call, collector: Collector, checked: CheckResult, graph: PlanGraph
    ) -> list[Diagnostic]:
        """The errors that keep the new ``call`` from being dispatched: its own, the
        check's (but for reads a later call may still write, and cycles a later call
        may not close), and ``stream_order`` when it writes what a started call read."""
        index = call.index
        problems = [d for d in collector.diagnostics if d.severity == "error"]
        problems += [
            d
            for d in checked.diagnostics
            if d.call == index
            and d.severity == "error"
            and d.code not in ("unresolved_reference", "dependency_cycle")
        ]
        late = [reader for reader in graph.successors[index] if self.engine.started(reader)]
        if late and not problems:
            reader = self.engine.records[late[0]]
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
        return problems

    def _hold_or_release(self, checked: CheckResult) -> None:
        """Hold the calls not started yet that read what no call writes so far (a
        later call may still write it); release the others."""
        engine = self.engine
        unresolved = {
            d.call
            for d in checked.diagnostics
            if d.code == "unresolved_reference" and d.call is not None
        }
        for other in range(len(self.plan.calls)):
            if not engine.unstarted(other):
                continue
            if other in unresolved:  # a later call may still write what it reads
                engine.hold(other)
            else:
                engine.release(other)

    def close(self) -> None:
        """The stream has ended: held calls and calls in a cycle are skipped."""
        engine = self.engine
        final = self.checked.diagnostics if self.checked is not None else ()
        for index in range(len(self.plan.calls)):
            if not engine.unstarted(index):
                continue
            found = [d for d in final if d.call == index and d.severity == "error"]
            if engine.held(index) or (found and engine.waiting(index)):
                if found:
                    self.diagnostics.append(found[0])
                reason = str(found[0]).split("\n")[0] if found else "its inputs never settled"
                engine.reject(index, "not dispatched: " + reason)
        engine.close()


async def stream_solution(
    chunks: AsyncIterator[str],
    engine: Engine,
    check_plan: Callable[[Plan], CheckResult],
    keep: Keep | None = None,
) -> tuple[Solution, RunResult]:
    """Read a solution's text as ``chunks`` arrive, dispatching each call to
    ``engine`` (``growing=True``) the moment its object is complete.

    Returns the parsed solution and the run.  Raises
    :class:`~obelisk.errors.SolutionError` when the whole text is not a solution
    and no call was taken (calls already run keep their writes in the state).
    """
    dispatcher = StreamDispatcher(engine, check_plan, keep)
    running = asyncio.ensure_future(engine.run())
    await asyncio.sleep(0)  # let the engine start before the first call arrives
    text = ""
    taken = 0
    try:
        async for chunk in chunks:
            text += chunk
            if "}" not in chunk and "]" not in chunk:
                continue
            calls = complete_calls(text)
            for raw in calls[taken:]:
                dispatcher.add(raw)
            taken = max(taken, len(calls))
        for raw in complete_calls(text, final=True)[taken:]:
            dispatcher.add(raw)
    finally:
        dispatcher.close()
        run = await running
    try:
        solution = parse_solution(text)
    except SolutionError:
        if not dispatcher.calls:
            raise
        solution = Solution(calls=dispatcher.calls, output=None)
    return solution, run
