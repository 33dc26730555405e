"""One scenario of a dry run: the plan played through once, with chosen outcomes.

The calls are settled one by one in the commit order of the runtime
(:class:`~obelisk.interpreter.runtime.commit_order.CommitOrder`): every call that may
write what a call reads comes earlier in that order, and overlapping writes are
applied in it, so the state each call reads, its skip or its arguments, and the final
state are exactly those of a real run whose tools give the same results, whatever the
timing.  The same pieces as the engine's do the work: expressions are resolved, skips
explained, arguments validated, results mapped to their alternative and written.
Nothing of a tool runs (but a pure tool's function, see
:class:`~obelisk.interpreter.simulate.outcomes.OutputSource`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk.errors import (
    ArgumentValidationError,
    OutcomeError,
    OutputValidationError,
    StateWriteError,
)
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.approvals import needs_approval
from obelisk.interpreter.runtime.outcome import error_arm, error_record, result_writes
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.resolve import explain_skip, resolve_arguments
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.simulate.outcomes import Branch, OutputSource
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.registry import Registry

__all__ = ["Explorer", "Played", "documents_factory"]


@dataclass(slots=True)
class Played:
    """What one scenario did: ``records`` (one per call, as a real run's),
    ``branches[i]`` the outcome call ``i`` took (for calls that ran),
    ``writes`` path text -> index of the call that wrote it last, ``state`` the
    final state document, ``approvals`` the calls that would wait for a person, and
    ``problems`` stub values that do not fit their tool (call index, message).
    Latent calls are played like tools: a stub, or a value from the output schema."""

    records: list[CallRecord]
    branches: dict[int, Branch] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    approvals: list[int] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Checkpoint:
    """Where a scenario reached a call with outcomes left to explore: the position in
    the commit order, the outcome taken, how many there are, and everything the
    scenario had built before that call (copied, so that siblings start alike)."""

    position: int
    choice: int
    options: int
    state: State
    played: Played
    written: dict[int, list[str]]


class Explorer:
    """Plays every scenario of a plan, depth first, sharing the common beginning.

    ``order`` is the commit order and ``documents()`` makes the starting state.  At a
    call with several outcomes the scenario so far is kept; the next scenario starts
    again from the deepest such call with an outcome left, so a plan whose branches
    sit late replays only its tail.  ``counts`` holds each branching call's number of
    outcomes; ``finished`` is true once every scenario was played.
    """

    def __init__(
        self,
        plan: Plan,
        graph: PlanGraph,
        order: list[int],
        registry: Registry,
        outputs: OutputSource,
        documents: Callable[[], State],
    ) -> None:
        self.plan, self.graph, self.order = plan, graph, order
        self.registry, self.outputs, self.documents = registry, outputs, documents
        self.counts: dict[int, int] = {}
        self.finished = False
        self._stack: list[_Checkpoint] = []
        self._start: _Checkpoint | None = None  # where the next scenario starts

    def scenarios(self, limit: int) -> Iterator[Played]:
        """Up to ``limit`` more scenarios, in depth-first order of outcomes."""
        for _ in range(limit):
            if self.finished:
                return
            yield self._next()

    def count(self, limit: int) -> int:
        """Play up to ``limit`` more scenarios only to count them (their reports are
        not built); returns how many were played.  ``finished`` says whether that
        was all of them."""
        played = 0
        while played < limit and not self.finished:
            self._next()
            played += 1
        return played

    def _next(self) -> Played:
        start = self._start
        if start is None:
            records = [CallRecord(c.index, c.id, c.tool) for c in self.plan.calls]
            played = self._play(0, None, self.documents(), Played(records), {})
        else:
            played = self._play(
                start.position,
                start.choice,
                start.state.fork(),
                _copy_played(start.played, self.order[start.position :]),
                dict(start.written),  # its lists are never changed: shared
            )
        while self._stack and self._stack[-1].choice + 1 >= self._stack[-1].options:
            self._stack.pop()
        if not self._stack:
            self.finished = True
        else:
            self._start = self._stack[-1]
            self._start.choice += 1
        return played

    def _play(
        self,
        position: int,
        forced: int | None,
        state: State,
        played: Played,
        written: dict[int, list[str]],
    ) -> Played:
        plan, graph, registry = self.plan, self.graph, self.registry
        records = played.records
        order = self.order
        for at in range(position, len(order)):
            index = order[at]
            call, record = plan.calls[index], records[index]
            arguments, missing = resolve_arguments(call, state)
            if missing is not None:
                reason, record.untaken = explain_skip(call, missing, graph, records, written, state)
                record.status, record.reason = "skipped", reason
                continue
            assert arguments is not None
            record.arguments = arguments
            tool = registry[call.tool]
            try:
                tool.validate_arguments(arguments)
            except ArgumentValidationError as exc:
                record.status, record.error = "failed", error_record(exc)
                continue
            if call.has_output:
                options = [Branch("_output", call.output, None, source="plan")]
            else:
                options = self.outputs.branches(call, tool, arguments)
            choice = 0
            if at == position and forced is not None:
                choice = forced
            elif len(options) > 1:
                self.counts[index] = max(self.counts.get(index, 0), len(options))
                self._stack.append(
                    _Checkpoint(
                        at,
                        0,
                        len(options),
                        state.fork(),
                        _copy_played(played, order[at:]),
                        dict(written),
                    )
                )
            if needs_approval(tool, arguments):  # as the run decides: validated arguments
                played.approvals.append(index)
            branch = options[choice]
            played.branches[index] = branch
            record.attempts = 1
            if branch.error is not None:
                arm = error_arm(call, tool, branch.error)
                if arm is None:
                    record.status, record.error = "failed", branch.error
                    continue
                record.error, pending = branch.error, arm
            elif branch.source == "unknown":  # no value to check: write null, as a placeholder
                alternatives = call.alternatives
                chosen = alternatives[branch.alternative or 0] if alternatives else ()
                record.output, pending = None, [(ref, None) for ref in chosen]
            else:
                result: Any = branch.value
                if branch.alternative is not None:
                    result = Outcome(branch.alternative, branch.value)
                try:
                    record.output, pending, _ = result_writes(call, tool, result)
                except (OutcomeError, OutputValidationError) as exc:
                    record.status, record.error = "failed", error_record(exc)
                    if branch.source == "stub":
                        played.problems.append((index, str(exc)))
                    continue
            try:
                entries = state.write_many(
                    pending, call.output_method, call=index, instance=call.instance
                )
            except StateWriteError as exc:
                record.status, record.error = "failed", error_record(exc)
                continue
            record.status = "succeeded"
            written[index] = [entry.path for entry in entries]
            for entry in entries:
                played.writes[entry.path] = index
        played.state = state.document("state") or {}
        return played


def _copy_played(played: Played, unsettled: list[int]) -> Played:
    """A copy to go on from: the records of settled calls never change again, so
    they are shared; the calls still to come (``unsettled``) get fresh records."""
    records = list(played.records)
    for index in unsettled:
        old = records[index]
        records[index] = CallRecord(old.index, old.id, old.tool)
    return Played(
        records,
        dict(played.branches),
        dict(played.writes),
        {},
        list(played.approvals),
        list(played.problems),
    )


def documents_factory(
    state: Mapping[str, Any] | None, input: Any, data: Mapping[str, Any] | None
) -> Callable[[], State]:
    """A function that makes the run's starting :class:`State`, fresh each time."""

    def make() -> State:
        return State(state, input, data)

    return make
