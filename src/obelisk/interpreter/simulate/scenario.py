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
from typing import Any, cast

from obelisk.errors import (
    ArgumentValidationError,
    OutcomeError,
    OutputValidationError,
    StateWriteError,
)
from obelisk.grammar import Field, Reference
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.runtime.approvals import needs_approval
from obelisk.interpreter.runtime.outcome import Writes, error_arm, error_record, result_writes
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.resolve import explain_skip, resolve_arguments
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.simulate.outcomes import Branch, OutputSource
from obelisk.interpreter.simulate.unknown import (
    ReadsThroughUnknown,
    UnknownValue,
    about_unknown,
    unknown_sources,
)
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Explorer", "Played", "documents_factory"]


@dataclass(slots=True)
class Played:
    """What one scenario did: ``records`` (one per call, as a real run's),
    ``branches[i]`` the outcome call ``i`` took (for calls that ran),
    ``writes`` path text -> index of the call that wrote it last, ``state`` the
    final state document, ``approvals`` the calls that would wait for a person,
    ``problems`` stub values that do not fit their tool (call index, message),
    ``unknown`` call index -> why its result is unknown (docs/simulate.md), and
    ``unknown_arguments`` call index -> the labels of the calls whose unknown values
    its arguments hold.  Latent calls are played like tools: a stub, or a value
    from the output schema."""

    records: list[CallRecord]
    branches: dict[int, Branch] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    approvals: list[int] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    unknown: dict[int, str] = field(default_factory=dict)
    unknown_arguments: dict[int, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class _Scenario:
    """A scenario being played: its ``state``, what it ``played`` so far, and
    ``written``, settled call index -> the paths it wrote."""

    state: State
    played: Played
    written: dict[int, list[str]]

    def copy(self, unsettled: list[int]) -> _Scenario:
        """A copy to go on from (``unsettled``: the calls still to come); the
        ``written`` lists are never changed, so they are shared."""
        return _Scenario(
            self.state.fork(), _copy_played(self.played, unsettled), dict(self.written)
        )


@dataclass(slots=True)
class _Checkpoint:
    """Where a scenario reached a call with outcomes left to explore: the position in
    the commit order, the outcome taken, how many there are, and everything the
    scenario had built before that call (copied, so that siblings start alike)."""

    position: int
    choice: int
    options: int
    saved: _Scenario


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
            played = self._play(0, None, _Scenario(self.documents(), Played(records), {}))
        else:
            unsettled = self.order[start.position :]
            played = self._play(start.position, start.choice, start.saved.copy(unsettled))
        while self._stack and self._stack[-1].choice + 1 >= self._stack[-1].options:
            self._stack.pop()
        if not self._stack:
            self.finished = True
        else:
            self._start = self._stack[-1]
            self._start.choice += 1
        return played

    def _play(self, position: int, forced: int | None, scenario: _Scenario) -> Played:
        """Settle the calls from ``position`` of the commit order on; the first one
        takes outcome ``forced`` when given."""
        for at in range(position, len(self.order)):
            self._settle(at, forced if at == position else None, scenario)
        played = scenario.played
        played.state = scenario.state.document("state") or {}
        return played

    def _settle(self, at: int, forced: int | None, scenario: _Scenario) -> None:
        """Settle the call at position ``at`` of the commit order: skip it, fail it,
        or take an outcome (``forced``, or the first, keeping a checkpoint when
        there are more) and write it."""
        index = self.order[at]
        call = self.plan.calls[index]
        state, played = scenario.state, scenario.played
        record = played.records[index]
        arguments, missing = resolve_arguments(call, state)
        if missing is not None and played.unknown:  # a read through an unknown value
            arguments, missing = resolve_arguments(call, cast(State, ReadsThroughUnknown(state)))
        if missing is not None:
            self._skip(call, record, missing, scenario)
            return
        assert arguments is not None
        record.arguments = arguments
        tool = self.registry[call.tool]
        sources = unknown_sources(arguments) if played.unknown else None
        if sources:
            played.unknown_arguments[index] = sources
        if not _arguments_fit(tool, arguments, sources, record):
            return
        options = self._options(call, tool, arguments, sources)
        branch = options[0] if forced is None else options[forced]
        if forced is None and len(options) > 1:
            self._keep(at, len(options), scenario)
        if tool.requires_approval is not False and _asks(tool, arguments, sources):
            played.approvals.append(index)
        played.branches[index] = branch
        record.attempts = 1
        pending = _pending(index, call, tool, branch, played)
        if pending is not None:
            _write(index, call, branch, pending, scenario)

    def _skip(
        self, call: Call, record: CallRecord, missing: list[Reference], scenario: _Scenario
    ) -> None:
        state, played, written = scenario.state, scenario.played, scenario.written
        reason, record.untaken = explain_skip(
            call, missing, self.graph, played.records, written, state
        )
        if self.outputs.generated:
            reason = self._generated_gaps(call, missing, reason, played, state, written)
        record.status, record.reason = "skipped", reason

    def _options(
        self, call: Call, tool: Tool, arguments: dict[str, Any], sources: list[str] | None
    ) -> list[Branch]:
        """The outcomes the call may take: the plan's own output, or the tool's."""
        if call.has_output:
            return [Branch("_output", call.output, None, source="plan")]
        return self.outputs.branches(call, tool, arguments, bool(sources))

    def _keep(self, at: int, options: int, scenario: _Scenario) -> None:
        """The call at ``at`` takes the first of ``options`` outcomes: keep where the
        scenario is, to come back for the others."""
        index = self.order[at]
        self.counts[index] = max(self.counts.get(index, 0), options)
        saved = scenario.copy(self.order[at:])
        self._stack.append(_Checkpoint(at, 0, options, saved))

    def _generated_gaps(
        self,
        call: Call,
        missing: list[Reference],
        reason: str,
        played: Played,
        state: State,
        written: dict[int, list[str]],
    ) -> str:
        """``reason``, where a missing read is a field a generated object lacks said so:
        ``†state.c.card: the generated value has no field 'card' (...)``."""
        gaps = [_generated_gap(call, reference, played, state, self.plan) for reference in missing]
        if not any(gaps):
            return reason
        records, graph = played.records, self.graph
        return "; ".join(
            gap or explain_skip(call, [reference], graph, records, written, state)[0]
            for gap, reference in zip(gaps, missing, strict=True)
        )


def _generated_gap(
    call: Call, reference: Reference, played: Played, state: State, plan: Plan
) -> str | None:
    """Why ``reference`` is missing when it names a field that an object generated from
    a tool's output schema does not have; ``None`` otherwise."""
    segments = reference.segments
    depth, value = state.deepest(reference, call.instance)
    if not 1 <= depth < len(segments) or not isinstance(value, dict):
        return None
    segment = segments[depth]
    if not isinstance(segment, Field):
        return None
    for cut in range(depth, 0, -1):  # the write that holds the object
        path = str(Reference(reference.kind, segments[:cut]))
        writer = played.writes.get(path)
        if writer is not None:
            break
    else:
        return None
    branch = played.branches.get(writer)
    if branch is None or branch.source != "generated":
        return None
    return (
        f"{reference}: the generated value has no field '{segment.name}' "
        f"({plan.calls[writer].label} wrote {path}, generated from its output schema; "
        "a stub decides)"
    )


def _arguments_fit(
    tool: Tool, arguments: dict[str, Any], sources: list[str] | None, record: CallRecord
) -> bool:
    """Whether the arguments fit the tool; if not, ``record`` fails.  Problems that
    are all about unknown values do not count: the real values may fit."""
    try:
        tool.validate_arguments(arguments)
    except ArgumentValidationError as exc:
        if not sources or not all(about_unknown(p, arguments) for p in exc.problems):
            record.status, record.error = "failed", error_record(exc)
            return False
    return True


def _pending(index: int, call: Call, tool: Tool, branch: Branch, played: Played) -> Writes | None:
    """What call ``index`` writes for the outcome ``branch``: its error arm's writes,
    an unknown value, or its result mapped to its alternative; ``None`` when the call
    failed (its record says why)."""
    record = played.records[index]
    if branch.error is not None:
        arm = error_arm(call, tool, branch.error)
        if arm is None:
            record.status, record.error = "failed", branch.error
            return None
        record.error = branch.error
        return arm
    if branch.source == "unknown":  # nothing to check: write the unknown value
        alternatives = call.alternatives
        chosen = alternatives[branch.alternative or 0] if alternatives else ()
        unknown = UnknownValue(call.label)
        played.unknown[index] = branch.why or "unknown"
        record.output = unknown
        return [(ref, unknown) for ref in chosen]
    result: Any = branch.value
    if branch.alternative is not None:
        result = Outcome(branch.alternative, branch.value)
    try:
        record.output, pending, _ = result_writes(call, tool, result)
    except (OutcomeError, OutputValidationError) as exc:
        record.status, record.error = "failed", error_record(exc)
        if branch.source == "stub":
            played.problems.append((index, str(exc)))
        return None
    return pending


def _write(index: int, call: Call, branch: Branch, pending: Writes, scenario: _Scenario) -> None:
    """Write call ``index``'s ``pending`` writes to the scenario's state; the call
    succeeds, or fails when a write does not fit the state."""
    played = scenario.played
    record = played.records[index]
    method = call.output_method
    if method == "concat" and branch.source == "unknown":
        method = "set"  # unknown items: the whole list is unknown
    try:
        entries = scenario.state.write_many(pending, method, call=index, instance=call.instance)
    except StateWriteError as exc:
        record.status, record.error = "failed", error_record(exc)
        return
    record.status = "succeeded"
    scenario.written[index] = [entry.path for entry in entries]
    for entry in entries:
        played.writes[entry.path] = index


def _asks(tool: Tool, arguments: dict[str, Any], sources: list[str] | None) -> bool:
    """Whether the call would wait for a person.  A rule that is a function of the
    arguments cannot tell from unknown ones: it counts as asking (ask rather than
    guess, as for a rule that raises)."""
    if sources and not isinstance(tool.requires_approval, bool):
        return True
    return needs_approval(tool, arguments)  # as the run decides: validated arguments


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
        dict(played.unknown),
        dict(played.unknown_arguments),
    )


def documents_factory(
    state: Mapping[str, Any] | None, input: Any, data: Mapping[str, Any] | None
) -> Callable[[], State]:
    """A function that makes the run's starting :class:`State`, fresh each time."""

    def make() -> State:
        return State(state, input, data)

    return make
