"""One run of an execution loop, turn by turn (docs/loop.md).

A :class:`Session` holds the mutable side of one ``Loop.run``: the state, the
turns so far, the calls carried into the next request, the last error records
and the count of unusable answers in a row.  :meth:`Session.turn` sends one
request and deals with its answer: eager calls run at once, lazy plans are
checked and approved first, streamed answers run while they arrive.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from obelisk.errors import (
    CorrectionBudgetExceeded,
    LoopStopped,
    ModelError,
    RequestBudgetExceeded,
    RunMismatch,
    SolutionError,
    UsageError,
)
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.loop.approval import ApprovalRound, Approver, Documents, checker
from obelisk.interpreter.loop.context import (
    record_error,
    resolve_output,
    turn_context,
    turn_notice,
)
from obelisk.interpreter.loop.durable import LoopJournal, TurnRun
from obelisk.interpreter.loop.messages import ErrorMessage, Request, Solution
from obelisk.interpreter.loop.model import StreamingModel, streamed
from obelisk.interpreter.loop.plan_history import Advance, Lineage, StreamKeeper, TurnPlan
from obelisk.interpreter.loop.quarantine import Quarantine, withheld
from obelisk.interpreter.loop.records import LoopResult, Turn, TurnFinished, TurnStarted
from obelisk.interpreter.loop.stream import stream_solution
from obelisk.interpreter.loop.subrequests import Parent, SubRequests
from obelisk.interpreter.loop.tracer import traced_by
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.approvals import ApprovalIds, Decision, check_decisions, new_scope
from obelisk.interpreter.runtime.durable.pinning import live_changes, live_pins
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.events import Listener
from obelisk.interpreter.runtime.flows import may_ask, starting_labels
from obelisk.interpreter.runtime.hooks import Hooks
from obelisk.interpreter.runtime.records import CallOutcome, RunResult
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.validation import schema_problems
from obelisk.json_values import deep_merge

__all__ = ["LoopOrigin", "LoopSettings", "Paused", "Session"]


class LoopSettings(Parent, Protocol):
    """What a session reads of its loop (a :class:`~obelisk.Loop` provides it)."""

    @property
    def mode(self) -> Literal["eager", "lazy"]: ...
    @property
    def advance(self) -> Advance: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def schema(self) -> dict[str, Any]: ...
    @property
    def state_schema(self) -> dict[str, Any] | None: ...
    @property
    def stream(self) -> bool: ...
    @property
    def approve(self) -> Approver | None: ...
    @property
    def output_validator(self) -> Any: ...
    @property
    def settings(self) -> RunSettings: ...
    @property
    def listeners(self) -> tuple[Listener, ...]: ...
    @property
    def primer_text(self) -> str | None: ...
    @property
    def quarantine(self) -> bool: ...

    tracer_provider: Any  # Loop(tracer_provider=...): docs/observability.md


@dataclass(slots=True)
class Paused:
    """A turn whose run waits for approvals: ``start`` is the state before the turn
    ran (a resumed run starts from a fork of it and replays what already ran),
    ``plan`` and ``graph`` the checked calls, ``run`` the paused run,
    ``decisions`` every decision given so far, by approval id, and ``pinned`` the
    tools it paused with (``live_pins``: resuming with others is refused)."""

    turn: Turn
    start: State
    plan: Plan
    graph: PlanGraph
    run: RunResult
    decisions: dict[str, Decision] = field(default_factory=dict)
    pinned: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LoopOrigin:
    """What ``Loop.resume`` continues: the ``session`` and, for a paused result,
    the paused ``run`` it saw (a result resumed since is out of date) and that
    run's ``name`` (:meth:`Session.run_name`)."""

    session: Session
    run: RunResult | None
    name: str | None = None


class Session:
    """The mutable side of one ``Loop.run`` (see the module docstring).

    ``turns`` lists every :class:`Turn` so far; ``output`` is set when a turn
    gave a valid output; ``state`` is the run's :class:`State`; ``paused`` is set
    while a turn's calls wait for a person (docs/approvals.md).
    """

    def __init__(
        self, loop: LoopSettings, input: Any, inputs: dict[str, Any], state: State
    ) -> None:
        self.loop, self.input, self.inputs, self.state = loop, input, inputs, state
        self.turns: list[Turn] = []
        self.carried: list[dict[str, Any]] = []
        self.errors: list[ErrorMessage] = []
        self.corrections = 0
        self.output: Any = None
        self.paused: Paused | None = None
        self.lineage = Lineage()  # the plan's revisions (docs/loop.md)
        self.running: TurnPlan | None = None  # how the latest revision runs
        self.keeper: StreamKeeper | None = None  # a streamed turn's kept calls
        self.journal: LoopJournal | None = None  # a durable loop's (docs/durable.md)
        self.scope = new_scope()[:16]  # binds the approval ids of its turns' runs
        # a turn that may pause (a person, a policy) keeps the state it started from
        self.approvals = may_ask(loop.settings, loop.registry)
        self.labels = starting_labels(loop.settings, loop.registry, loop.quarantine)
        self.check = checker(loop)  # its mode, policy and input labels

    def result(self, status: Any, output: Any) -> LoopResult:
        state = self.state
        paused = self.paused
        return LoopResult(
            status="awaiting_approval" if paused is not None else status,
            output=output,
            state=state.document("state") or {},
            turns=self.turns,
            log=list(state.log),
            instances={name: state.document("state", name) for name in state.instances},
            pending=paused.run.pending if paused is not None else (),
            origin=LoopOrigin(
                self,
                paused.run if paused is not None else None,
                self.run_name(paused.turn) if paused is not None else None,
            ),
            run_id=self.journal.run_id if self.journal is not None else None,
            revisions=list(self.lineage.revisions),
            labels=self.labels,
        )

    def request(self, number: int) -> Request:
        loop = self.loop
        planned = loop.advance == "step" and self.lineage.has_planned()
        notice = turn_notice(number, loop.max_turns, planned)
        context = turn_context(
            mode=loop.mode,
            instructions=loop.instructions,
            registry=loop.registry,
            input=self.input,
            inputs=self.inputs,
            state=self.state,
            carried=self.carried,
            statuses=self.lineage.statuses(len(self.carried)),
            errors=self.errors,
            notice=notice,
            state_schema=loop.state_schema,
            primer=loop.primer_text,
            quarantine=Quarantine.of(self.labels, self.state, self.input, self.inputs)
            if loop.quarantine
            else None,
        )
        config = {"mode": loop.mode, "turn": number, "max_turns": loop.max_turns}
        if loop.depth:
            config["depth"] = loop.depth
        return Request(config=config, schema=loop.schema, context=context)

    def unusable(self, turn: Turn, errors: list[ErrorMessage]) -> None:
        """An answer that could not be used: its errors go back; count a correction."""
        turn.errors = self.errors = errors
        self.corrections += 1
        if self.corrections > self.loop.max_corrections:
            raise CorrectionBudgetExceeded(
                f"{self.corrections} unusable answers in a row "
                f"(max_corrections={self.loop.max_corrections}); last: "
                + "; ".join(str(e.error.get("message", "")) for e in errors),
                self.result("corrections_exceeded", None),
            )

    async def turn(self, number: int) -> bool:
        """One request and its consequences; True when the loop is done.

        Emits :class:`TurnStarted` and :class:`TurnFinished` to the loop's listeners.
        Raises :class:`~obelisk.errors.CorrectionBudgetExceeded` or
        :class:`~obelisk.errors.LoopStopped` as ``Loop.run`` describes.
        """
        listeners = self.loop.listeners
        for listener in listeners:
            listener(TurnStarted(time.time(), number, self.loop.depth))
        try:
            with traced_by(self.loop.tracer_provider):  # Loop(tracer_provider=...)
                return await self._turn(number)
        finally:
            if listeners and self.turns and self.turns[-1].index == number:
                turn = self.turns[-1]
                calls = len(turn.solution.calls) if turn.solution is not None else 0
                finished = TurnFinished(
                    time.time(), number, self.loop.depth, calls, len(turn.errors), turn.usage
                )
                for listener in listeners:
                    listener(finished)

    async def _turn(self, number: int) -> bool:
        request = self.request(number)
        turn = Turn(number, request)
        self.turns.append(turn)
        started = time.perf_counter()
        before = len(self.state.log)
        start = self.state.fork() if self.approvals else None
        answer = await self._answer(turn, started, before)
        if answer is None:
            return False
        solution, run = answer
        answered = time.perf_counter()
        turn.solution, turn.usage = solution, solution.usage
        errors: list[ErrorMessage] = []
        usable = True
        if run is None and solution.calls:
            run, errors = await self.execute(turn, solution.calls, start)
            usable = run is not None
        elif run is not None:  # streamed: the calls already ran
            assert self.keeper is not None  # made by stream()
            self.running = self.lineage.streamed(solution.calls, number, self.keeper)
            errors = self.absorb(run, solution.calls)
            if run.status == "awaiting_approval" and start is not None:
                self.pause(turn, start, run)
        elif solution.output is not None and self.lineage.has_planned():
            self.lineage.revise([], number)  # a step's planned calls left out: superseded
            self.carried = []
        turn.run, turn.entries = run, self.state.log[before:]
        finished = time.perf_counter()
        turn.timings = {
            "model": answered - started,
            "run": finished - answered,
            "total": finished - started,
        }
        if self.paused is not None:
            return True
        return self.conclude(turn, errors, usable)

    async def _answer(
        self, turn: Turn, started: float, before: int
    ) -> tuple[Solution, RunResult | None] | None:
        """The model's answer to the turn's request (replayed from the journal when it
        holds the turn; streamed: the run of the calls so far), or ``None`` when it is
        unusable (the turn counts a correction).  A failing model stops the loop."""
        number, request = turn.index, turn.request
        journal = self.journal
        replayed = journal.replayed(number) if journal is not None else None
        try:
            if isinstance(replayed, BaseException):  # journaled: an unusable answer
                raise replayed
            if replayed is not None:  # journaled: not asked again (docs/durable.md)
                return replayed, None
            if self.loop.stream:
                return await self.stream(turn)
            solution = await self.loop.model.complete(request)
            if journal is not None:
                journal.record(number, request, solution)
            return solution, None
        except SolutionError as exc:
            if journal is not None and replayed is None:
                journal.record(number, request, exc)
            turn.raw = exc.text
            turn.timings = {"model": time.perf_counter() - started, "run": 0.0}
            turn.entries = self.state.log[before:]
            self.unusable(turn, [ErrorMessage(error={"type": exc.code, "message": exc.reason})])
            return None
        except ModelError as exc:
            turn.entries = self.state.log[before:]
            why = str(exc) if isinstance(exc, RequestBudgetExceeded) else f"the model failed: {exc}"
            raise LoopStopped(why, self.result("stopped", None)) from exc

    def conclude(self, turn: Turn, errors: list[ErrorMessage], usable: bool) -> bool:
        """Take the turn's output when it fits; count a correction when the answer
        was unusable.  True when the loop is done."""
        loop, solution = self.loop, turn.solution
        assert solution is not None
        stepping = loop.advance == "step" and self.lineage.has_planned()
        if solution.output is not None and usable and not stepping:
            output, problem = resolve_output(solution.output, self.state)
            if problem is None and loop.output_validator is not None:
                found = schema_problems(loop.output_validator, output)
                if found:
                    where = ".".join(str(p) for p in found[0].loc)
                    problem = (
                        "output does not fit the output schema"
                        + (f" at {where}" if where else "")
                        + f": {found[0].message}"
                    )
            if problem is None:
                self.output, turn.errors, self.errors = output, errors, errors
                return True
            errors.append(ErrorMessage(error={"type": "invalid_output", "message": problem}))
            usable = False
        if usable:
            self.corrections = 0
            turn.errors = self.errors = errors
        else:
            self.unusable(turn, errors)
        return False

    async def stream(self, turn: Turn) -> tuple[Any, RunResult]:
        """Stream the turn's answer, running each call as soon as it is complete."""
        loop = self.loop

        def check_plan(plan: Plan) -> CheckResult:
            check_input, document, data = self.check_documents()
            return self.check(plan, loop.registry, check_input, document, data=data, mode="eager")

        empty = Plan(calls=())
        engine = self.engine(empty, PlanGraph(empty), turn, growing=True)
        assert isinstance(loop.model, StreamingModel)
        chunks = loop.model.stream(turn.request)
        self.keeper = StreamKeeper(self.lineage, loop.registry, self.state.log)
        try:
            answer = stream_solution(chunks, engine, check_plan, self.keeper.keep)
            return await streamed(loop.model, turn.request, answer, chunks)
        except SolutionError as exc:
            if getattr(chunks, "finish_reason", None) != "length":
                raise
            raise SolutionError(
                "the answer was cut off at the token limit (finish_reason='length'), "
                f"write a shorter one: {exc.reason}",
                exc.text,
            ) from None

    def engine(
        self,
        plan: Plan,
        graph: PlanGraph,
        turn: Turn,
        *,
        growing: bool = False,
        registry: Registry | None = None,
        approvals: Mapping[str, Decision] | None = None,
        replay: Mapping[int, CallOutcome] | None = None,
        durable: TurnRun | None = None,
    ) -> Engine:
        """An engine for one turn's plan on the session's state, with the loop's run
        settings and sub-requests (``approvals`` and ``replay`` when resuming;
        ``durable``: the turn's journaled run)."""
        loop, run_id, unknown = self.loop, "", {}
        if durable is None:
            ids = ApprovalIds(self.run_name(turn))
            hooks = Hooks(loop.listeners)
        else:
            run_id, unknown = durable.run_id, durable.unknown
            approvals = {**durable.approvals, **(approvals or {})}
            replay = {**durable.replay, **(replay or {})}
            ids = ApprovalIds(durable.run_id, durable.approval_ids)
            hooks = Hooks.of(loop.listeners, durable.recorder)
        resumption = Resumption(run_id, approvals or {}, replay or {}, unknown, ids)
        if self.running is not None and not growing:  # kept calls; what a step leaves
            resumption = self.running.applied(resumption)
        return Engine(
            plan,
            graph,
            registry or loop.registry,
            self.state,
            loop.settings,
            resumption,
            hooks,
            latent=SubRequests(loop, self.state, turn.delegated),
            growing=growing,
            labels=self.labels,
        )

    def run_name(self, turn: Turn) -> str:
        """What names the run of ``turn`` in messages, and binds its approval ids:
        ``<loop run id>.t<n>``, the journal's name for a durable loop's turn run."""
        loop = self.journal.run_id if self.journal is not None else self.scope
        return f"{loop}.t{turn.index}"

    async def run_plan(self, plan: Plan, graph: PlanGraph, turn: Turn) -> RunResult:
        """Run a turn's checked calls; in a durable loop as a journaled run of the
        turn (docs/durable.md)."""
        if self.journal is None:
            return await self.engine(plan, graph, turn).run()
        revision = self.running.revision.to_dict() if self.running is not None else None
        journal, registry = self.journal, self.loop.registry
        with journal.turn_run(turn.index, plan, registry, self.input, revision) as durable:
            run = await self.engine(plan, graph, turn, durable=durable).run()
            durable.status = run.status
        return run

    def pause(self, turn: Turn, start: State, run: RunResult) -> None:
        """Keep a turn whose run waits for approvals, to resume it later.

        The calls are checked again as a whole against the state the turn started
        from; a streamed plan with errors does not pause: its waiting calls are
        reported as not run, and the model corrects the plan first.
        """
        check_input, document, data = self.check_documents(start)
        checked = self.check(self.carried, self.loop.registry, check_input, document, data=data)
        if checked.plan is None or checked.graph is None or checked.errors:
            return
        pinned = live_pins(checked.plan, self.loop.registry)
        self.paused = Paused(turn, start, checked.plan, checked.graph, run, pinned=pinned)

    async def resume(self, decisions: Mapping[str, Any], tools: ToolsLike = None) -> bool:
        """Continue the paused turn with ``decisions`` (approval id -> Decision);
        True when the loop is done (its output taken, or paused again).

        Raises :class:`~obelisk.errors.ApprovalError` for a bad decision and
        :class:`~obelisk.errors.RunMismatch` for ``tools`` that are not the ones the
        turn paused with (schemas, options or functions), before anything runs, and
        :class:`~obelisk.errors.UsageError` when nothing is paused.
        """
        paused = self.paused
        if paused is None:
            raise UsageError("this loop result is not awaiting approval: nothing to resume")
        registry = self.loop.registry if tools is None else Registry.coerce(tools)
        name = self.run_name(paused.turn)
        changed = live_changes(paused.pinned, registry)
        if changed:
            raise RunMismatch(
                f"run {name!r} is pinned to the tools it paused with, and these changed: "
                f"{'; '.join(changed)}; nothing was run",
                changed,
            )
        given = check_decisions(paused.run.pending, decisions, registry, name)
        every = {**paused.decisions, **given}
        turn, started = paused.turn, time.perf_counter()
        self.state = paused.start.fork()
        before = len(self.state.log)
        with traced_by(self.loop.tracer_provider):  # Loop(tracer_provider=...)
            engine = self.engine(paused.plan, paused.graph, turn, registry=registry,
                                 approvals=every, replay=paused.run.outcomes)  # fmt: skip
            run = await engine.run()
        turn.run, turn.entries = run, self.state.log[before:]
        turn.timings["run"] = turn.timings.get("run", 0.0) + time.perf_counter() - started
        if run.status == "awaiting_approval":
            paused.run, paused.decisions = run, every
            return True
        self.paused = None
        return self.conclude(turn, self.absorb(run, self.carried), True)

    def check_documents(self, state: State | None = None) -> Documents:
        """``(input, state, data)`` a plan is checked against (default: the session's
        state).  With instances, input and state are every instance's view merged
        over the shared one (a path any instance holds resolves; a call of another
        instance that reads it skips)."""
        state = self.state if state is None else state
        data = {k: state.peek(k) for k in state.kinds if k != "state"}
        document = state.peek("state") or {}
        check_input = self.input
        if self.inputs or state.instances:
            for name in state.instances:
                document = deep_merge(document, state.peek("state", name) or {})
            for value in self.inputs.values():
                check_input = deep_merge(check_input, value) if check_input else value
        return check_input, document, data

    async def execute(
        self, turn: Turn, calls: list[dict[str, Any]], start: State | None = None
    ) -> tuple[RunResult | None, list[ErrorMessage]]:
        """Check the calls (and, lazy, have them approved), then run them; returns the
        run (``None`` when nothing ran) and the error records for the next turn.  A
        run that waits for approvals pauses the session (``start``: the state before
        the turn)."""
        loop = self.loop
        check_input, state_doc, data = documents = self.check_documents()
        ran = self.journal.ran(turn.index) if self.journal is not None else None
        if ran is not None:  # a journaled turn: the calls it ran, as approved then
            calls = ran
        checked = self.check(calls, loop.registry, check_input, state_doc, data=data)
        if ran is None:
            approval = ApprovalRound.of(loop, documents)
            checked, calls, errors = await approval.run(calls, checked, list(self.carried))
            if errors is not None:
                self.carried, self.running = calls, None
                self.lineage.revise(calls, turn.index)  # carried, not run
                return None, errors
        assert checked.plan is not None and checked.graph is not None
        revision = self.lineage.revise(calls, turn.index)
        self.running = self.lineage.plan_run(
            revision, checked.graph, loop.registry, self.state.log, loop.advance
        )
        run = await self.run_plan(checked.plan, checked.graph, turn)
        errors = self.absorb(run, calls)  # the calls that ran, after any edit
        if run.status == "awaiting_approval" and start is not None:
            pinned = live_pins(checked.plan, self.loop.registry)
            self.paused = Paused(turn, start, checked.plan, checked.graph, run, pinned=pinned)
        return run, errors

    def absorb(self, run: RunResult, calls: list[dict[str, Any]]) -> list[ErrorMessage]:
        """The error records of a run, and the plan the next request carries.

        The plan message carries the calls as the model wrote them (after any edit
        by the approver), those that ran included: the state shows what they did.
        Every call that did not succeed gets an error record, except a call skipped
        because the alternative it reads was not taken (the plan's normal
        branching).  A failure the error arm handled is reported too.  A call
        whose result did not fit (``invalid_output``) is reported as such: its tool
        ran, its effects may have happened, and its result was not written (so it
        should not simply be called again).  A call kept from an earlier revision or
        left planned by a step gets none (its ``_status`` says it); the session's
        lineage takes what the run did.
        """
        if run.labels is not None:  # the state's labels, for the turns to come
            self.labels = run.labels
        errors: list[ErrorMessage] = []
        plan, registry = self.running, self.loop.registry
        quiet = self.lineage.settle(plan, run, self.state.log, registry)
        for record in run.calls:
            if record.index in quiet:  # planned, or kept: the plan message says so
                continue
            error = record_error(record)
            if error is not None and self.loop.quarantine and record.error is not None:
                error = withheld(record, registry.get(record.tool), error)  # the tool's text
            if error is not None:
                errors.append(error)
        self.carried = list(calls)
        return errors
