"""The execution loop: eager and lazy modes driving a model (docs/loop.md).

Every turn sends a fresh :class:`~obelisk.interpreter.loop.messages.Request` (tools,
input, current state, carried plan, error records) and gets a
:class:`~obelisk.interpreter.loop.messages.Solution` back.

* **eager** (default): the solution's calls are checked and run at once (latent
  calls carrying ``_output`` are written inline); failures and skips become
  error messages and the calls that did not run are carried into the next
  request's plan message.
* **lazy**: the solution is a whole plan; it is checked (diagnostics go back for
  correction), shown to ``approve``, then run, with each latent call answered
  by one sub-request.

The loop stops when ``output`` is not null and fits ``output_schema``, or after
``max_turns`` requests (:class:`LoopBudgetExceeded`; the last request carries a
notice).  More than ``max_corrections`` unusable answers in a row raise
:class:`CorrectionBudgetExceeded`.  Every stop keeps the transcript, the state
and the write log in the exception's ``result``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from typing import Any, Literal

from obelisk.errors import (
    CorrectionBudgetExceeded,
    LoopBudgetExceeded,
    LoopStopped,
    ModelError,
    SolutionError,
    UsageError,
)
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.loop.approval import Approver, Decision
from obelisk.interpreter.loop.context import (
    diagnostic_errors,
    last_turn_notice,
    resolve_output,
    turn_context,
)
from obelisk.interpreter.loop.messages import ErrorMessage, Request, solution_schema
from obelisk.interpreter.loop.model import Model, StreamingModel
from obelisk.interpreter.loop.records import LoopResult, Turn
from obelisk.interpreter.loop.stream import stream_solution
from obelisk.interpreter.loop.subrequests import SubRequests
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.engine import Engine, Listener
from obelisk.interpreter.runtime.records import RunResult
from obelisk.interpreter.runtime.run import run_blocking
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.validation import schema_problems, validator_for
from obelisk.json_values import deep_merge

__all__ = ["Approver", "Decision", "Loop", "Mode"]

Mode = Literal["eager", "lazy"]


class Loop:
    """An execution loop over ``model`` and ``tools`` (see the module docstring).

    ``tools``: anything :meth:`Registry.coerce` takes.  ``output_schema``: JSON
    schema of the final output (``None`` = any JSON value).  ``instructions``:
    extra text for every request.  ``max_turns`` (count, >= 1), ``max_corrections``
    (unusable answers in a row, >= 0), ``max_depth`` (delegate nesting, >= 0).
    ``approve``: lazy-mode approval callback (sync or async) taking the
    :class:`CheckResult`.  ``stream``: dispatch calls while a
    :class:`StreamingModel` is still writing (eager mode).  ``concurrency``,
    ``fail_fast`` and ``on_event`` go to each run (see :func:`obelisk.run`).
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
        tools: Any,
        *,
        mode: Mode = "eager",
        output_schema: Mapping[str, Any] | None = None,
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
    ) -> None:
        if mode not in ("eager", "lazy"):
            raise UsageError(f"mode must be 'eager' or 'lazy', got {mode!r}")
        for name, value, low in (
            ("max_turns", max_turns, 1),
            ("max_corrections", max_corrections, 0),
            ("max_depth", max_depth, 0),
            ("concurrency", concurrency, 1),
        ):
            if type(value) is not int or value < low:
                raise UsageError(f"{name} must be an integer >= {low}, got {value!r}")
        if not callable(getattr(model, "complete", None)):
            raise UsageError(f"model must have an async complete(request) method, got {model!r}")
        if stream and not isinstance(model, StreamingModel):
            raise UsageError("stream=True needs a model with a stream(request) method")
        if stream and mode != "eager":
            raise UsageError(
                "stream=True applies to eager mode only (a lazy plan is approved whole)"
            )
        if approve is not None and mode != "lazy":
            raise UsageError("approve= applies to lazy mode only")
        self.model, self.registry, self.mode = model, Registry.coerce(tools), mode
        self.output_schema = None if output_schema is None else dict(output_schema)
        self._output_validator = (
            None
            if self.output_schema is None
            else validator_for(self.output_schema, "output", "output_schema")
        )
        self.instructions, self.approve, self.stream = instructions, approve, stream
        self.max_turns, self.max_corrections, self.max_depth = max_turns, max_corrections, max_depth
        self.concurrency, self.fail_fast, self.depth = concurrency, fail_fast, depth
        self.listeners: tuple[Listener, ...] = () if on_event is None else (on_event,)
        self.schema = solution_schema(self.registry, self.output_schema, mode=mode)

    async def delegate(
        self,
        *,
        output_schema: Mapping[str, Any] | None,
        instructions: str,
        input: Any,
        state: Mapping[str, Any] | None,
        data: Mapping[str, Any] | None,
    ) -> LoopResult:
        """Run a delegate call's own loop: same model, tools and limits, one level
        deeper, with ``input`` (the call's arguments) and the parent context its
        scopes allow.  Raises what :meth:`run` raises."""
        child = self._child(output_schema=output_schema, instructions=instructions)
        return await child.run(input, state, data=data)

    def _child(self, *, output_schema: Mapping[str, Any] | None, instructions: str) -> Loop:
        return Loop(
            self.model,
            self.registry,
            mode=self.mode,
            output_schema=output_schema,
            instructions=instructions,
            max_turns=self.max_turns,
            max_corrections=self.max_corrections,
            max_depth=self.max_depth,
            approve=None,
            concurrency=self.concurrency,
            depth=self.depth + 1,
        )

    # -- the loop ------------------------------------------------------------------
    async def run(
        self,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        instances: Mapping[str, Any] | None = None,
    ) -> LoopResult:
        """Run turns until the model gives an output; returns a :class:`LoopResult`.

        ``input``: the read-only input; ``state``: the state to start from;
        ``data``: other data documents by kind; ``instances``: instance name ->
        that instance's own input (docs/semantics.md; calls with ``_instance`` read it).
        Raises :class:`LoopBudgetExceeded`, :class:`CorrectionBudgetExceeded` or
        :class:`LoopStopped` (each carrying the partial result) as described on
        the module.
        """
        inputs = dict(instances or {})
        session = _Session(self, input, inputs, State(state, input, data, inputs=inputs))
        for number in range(1, self.max_turns + 1):
            if await session.turn(number):
                return session.result("completed", session.output)
        result = session.result("budget_exceeded", None)
        raise LoopBudgetExceeded(f"no output after max_turns={self.max_turns} turns", result)

    def run_sync(
        self,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        instances: Mapping[str, Any] | None = None,
    ) -> LoopResult:
        """:meth:`run` for code without an event loop (starts one with ``asyncio.run``)."""
        return run_blocking(self.run(input, state, data=data, instances=instances))


class _Session:
    """The mutable side of one :meth:`Loop.run`."""

    def __init__(self, loop: Loop, input: Any, inputs: dict[str, Any], state: State) -> None:
        self.loop, self.input, self.inputs, self.state = loop, input, inputs, state
        self.turns: list[Turn] = []
        self.carried: list[dict[str, Any]] = []
        self.errors: list[ErrorMessage] = []
        self.corrections = 0
        self.output: Any = None

    def result(self, status: Any, output: Any) -> LoopResult:
        state = self.state
        return LoopResult(
            status=status,
            output=output,
            state=state.document("state") or {},
            turns=self.turns,
            log=list(state.log),
            instances={name: state.document("state", name) for name in state.instances},
        )

    def request(self, number: int) -> Request:
        loop = self.loop
        notice = last_turn_notice(number, loop.max_turns) if number == loop.max_turns else None
        context = turn_context(
            mode=loop.mode,
            instructions=loop.instructions,
            registry=loop.registry,
            input=self.input,
            inputs=self.inputs,
            state=self.state,
            carried=self.carried,
            errors=self.errors,
            notice=notice,
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
        """One request and its consequences; True when the loop is done."""
        loop = self.loop
        request = self.request(number)
        turn = Turn(number, request)
        self.turns.append(turn)
        started = time.perf_counter()
        before = len(self.state.log)
        try:
            if loop.stream:
                solution, run = await self.stream(turn)
            else:
                solution, run = await loop.model.complete(request), None
        except SolutionError as exc:
            turn.raw = exc.text
            turn.timings = {"model": time.perf_counter() - started, "run": 0.0}
            turn.entries = self.state.log[before:]
            self.unusable(turn, [ErrorMessage(error={"type": exc.code, "message": exc.reason})])
            return False
        except ModelError as exc:
            turn.entries = self.state.log[before:]
            raise LoopStopped(f"the model failed: {exc}", self.result("stopped", None)) from exc
        answered = time.perf_counter()
        turn.solution, turn.usage = solution, solution.usage
        errors: list[ErrorMessage] = []
        usable = True
        if run is None and solution.calls:
            run, errors = await self.execute(turn, solution.calls)
            usable = run is not None
        elif run is not None:  # streamed: the calls already ran
            errors = self.absorb(run, solution.calls)
        turn.run, turn.entries = run, self.state.log[before:]
        finished = time.perf_counter()
        turn.timings = {
            "model": answered - started,
            "run": finished - answered,
            "total": finished - started,
        }
        if solution.output is not None and usable:
            output, problem = resolve_output(solution.output, self.state)
            if problem is None and loop._output_validator is not None:
                found = schema_problems(loop._output_validator, output)
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
            return check(plan, loop.registry, check_input, document, data=data)

        engine = Engine(
            Plan(calls=()),
            PlanGraph(Plan(calls=())),
            loop.registry,
            self.state,
            concurrency=loop.concurrency,
            fail_fast=loop.fail_fast,
            listeners=loop.listeners,
            latent=SubRequests(loop, self.state, turn),
            growing=True,
        )
        assert isinstance(loop.model, StreamingModel)
        return await stream_solution(loop.model.stream(turn.request), engine, check_plan)

    def check_documents(self) -> tuple[Any, Any, dict[str, Any]]:
        """``(input, state, data)`` a plan is checked against.  With instances, input
        and state are every instance's view merged over the shared one (a path any
        instance holds resolves; a call of another instance that reads it skips)."""
        state = self.state
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
        self, turn: Turn, calls: list[dict[str, Any]]
    ) -> tuple[RunResult | None, list[ErrorMessage]]:
        """Check the calls (and, lazy, have them approved), then run them; returns the
        run (``None`` when nothing ran) and the error records for the next turn."""
        loop = self.loop
        check_input, state_doc, data = self.check_documents()
        checked = check(calls, loop.registry, check_input, state_doc, data=data)
        edits = 0
        while True:
            if checked.errors and (edits == 0 or edits > loop.max_corrections):
                self.carried = calls
                return None, diagnostic_errors(checked.diagnostics)
            if loop.approve is None:
                break
            decision = loop.approve(checked)  # an edit with errors is shown again
            if inspect.isawaitable(decision):
                decision = await decision
            accepted = decision is True or (
                isinstance(decision, Decision) and decision.action == "accept"
            )
            if accepted and checked.errors:  # accepting a broken edit: the model fixes it
                edits = loop.max_corrections + 1
                continue
            if accepted:
                break
            if isinstance(decision, Decision) and decision.action == "edit":
                edits += 1
                checked = check(decision.plan, loop.registry, check_input, state_doc, data=data)
                if checked.plan is not None:
                    calls = [call.to_data() for call in checked.plan.calls]
                elif isinstance(decision.plan, list):
                    calls = decision.plan
                continue
            reason = decision.reason if isinstance(decision, Decision) else None
            self.carried = calls
            message = f"the plan was rejected: {reason or 'no reason given'}"
            return None, [ErrorMessage(error={"type": "rejected", "message": message})]
        assert checked.plan is not None and checked.graph is not None
        engine = Engine(
            checked.plan,
            checked.graph,
            loop.registry,
            self.state,
            concurrency=loop.concurrency,
            fail_fast=loop.fail_fast,
            listeners=loop.listeners,
            latent=SubRequests(loop, self.state, turn),
        )
        run = await engine.run()
        return run, self.absorb(run, calls)  # the calls that ran, after any edit

    def absorb(self, run: RunResult, calls: list[dict[str, Any]]) -> list[ErrorMessage]:
        """Error records of a run, and the calls to carry into the next request."""
        errors: list[ErrorMessage] = []
        carried: list[dict[str, Any]] = []
        for record in run.calls:
            if record.status == "succeeded":
                if record.error is not None:  # handled by the error arm: still worth saying
                    errors.append(ErrorMessage(call=record.label, error=record.error))
                continue
            carried.append(calls[record.index])
            if record.error is not None:
                errors.append(ErrorMessage(call=record.label, error=record.error))
            else:
                error = {"type": record.status, "message": record.reason or record.status}
                errors.append(ErrorMessage(call=record.label, error=error))
        self.carried = carried
        return errors
