"""``obelisk.simulate``: a dry run of a plan, in every branch, before anything runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.errors import UsageError
from obelisk.grammar import parse_reference
from obelisk.interpreter.analysis.handoff import PlanOrChecked, checked_plan
from obelisk.interpreter.analysis.path_index import PathIndex
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.commit_order import CommitOrder
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.simulate.decisions import Decisions
from obelisk.interpreter.simulate.outcomes import OutputSource
from obelisk.interpreter.simulate.report import ScenarioReport, SimulationReport
from obelisk.interpreter.simulate.scenario import Explorer, Played, documents_factory
from obelisk.interpreter.simulate.schedule import Schedule, schedule
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry, ToolsLike

__all__ = ["simulate", "simulate_checked"]


def simulate(
    plan: PlanOrChecked,
    tools: ToolsLike,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    *,
    data: Mapping[str, Any] | None = None,
    stubs: Mapping[str, Any] | None = None,
    latency: Mapping[str, float] | None = None,
    cost: Mapping[str, float] | None = None,
    max_scenarios: int = 64,
    seed: int = 0,
    concurrency: int = 64,
    policy: PolicyMode = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> SimulationReport:
    """Play ``plan`` through in every combination of its calls' outcomes, running
    nothing with side effects; returns a :class:`SimulationReport` (docs/simulate.md).

    ``plan`` is a plan, or the :class:`~obelisk.CheckResult` of ``obelisk.check(plan,
    tools, input, state, data=...)``, played without checking the plan again when it was
    checked against the same tools and documents (docs/semantics.md, "Check once, then
    run").

    ``stubs`` maps a tool name (or a call's ``_id``) to a value, a function of the
    resolved arguments, or a list of outcomes to explore (values, ``Outcome(k,
    value)``, exceptions).  Without a stub a tool's value is generated from its
    output schema (the same ``seed`` gives the same values), or really computed when
    the tool is declared ``pure=True``.  Every combination of alternative outcomes
    (success and error arm, declared outcomes, a stub list's items) is explored, at
    most ``max_scenarios`` of them.  ``latency`` (seconds) and ``cost`` (any unit)
    are per-tool estimates, 1.0 by default; ``concurrency`` caps calls at once, as
    ``obelisk.run`` does.  ``policy`` and ``input_labels`` are the run's, as
    ``obelisk.run`` takes them: each scenario reports the decisions the tools'
    policies would make, and the report the calls that may need a person
    (docs/simulate.md, "Policies").

    Raises :class:`~obelisk.errors.PlanError` when the plan has errors (there is
    nothing to simulate) and :class:`~obelisk.errors.UsageError` for bad arguments and
    for a ``CheckResult`` checked against other tools or documents.
    A stub that does not fit its tool, or an output schema no value can be found
    for, is a diagnostic of the report, naming the tool.
    """
    registry = Registry.coerce(tools)
    checked = checked_plan(plan, registry, input, state, data=data)
    return simulate_checked(
        checked,
        registry,
        input,
        state,
        data=data,
        stubs=stubs,
        latency=latency,
        cost=cost,
        max_scenarios=max_scenarios,
        seed=seed,
        concurrency=concurrency,
        policy=policy,
        input_labels=input_labels,
    )


def simulate_checked(
    checked: CheckResult,
    registry: Registry,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    *,
    data: Mapping[str, Any] | None = None,
    stubs: Mapping[str, Any] | None = None,
    latency: Mapping[str, float] | None = None,
    cost: Mapping[str, float] | None = None,
    max_scenarios: int = 64,
    seed: int = 0,
    concurrency: int = 64,
    policy: PolicyMode = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> SimulationReport:
    """:func:`simulate` of a plan already checked without errors (``checked``)."""
    if type(max_scenarios) is not int or max_scenarios < 1:
        raise UsageError(f"max_scenarios must be an integer >= 1, got {max_scenarios!r}")
    if type(concurrency) is not int or concurrency < 1:
        raise UsageError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    checked.raise_for_errors()
    assert checked.plan is not None and checked.graph is not None
    parsed, graph = checked.plan, checked.graph
    ranks = CommitOrder(graph).ranks
    order = sorted(range(len(parsed.calls)), key=ranks.__getitem__)
    outputs = OutputSource(stubs, seed)
    diagnostics: list[Diagnostic] = list(checked.diagnostics)
    up_front, flagged = _check_stubs(parsed, registry, stubs or {})
    diagnostics += up_front
    latency = dict(latency or {})
    cost = dict(cost or {})
    documents = documents_factory(state, input, data)

    decisions = Decisions.build(parsed, graph, registry, policy, input_labels)
    explorer = Explorer(parsed, graph, order, registry, outputs, documents)
    timing = _Timing(graph, [call.tool for call in parsed.calls], latency, concurrency)
    scenarios: list[ScenarioReport] = []
    for played in explorer.scenarios(max_scenarios):
        scenario = _scenario(len(scenarios) + 1, parsed, graph, played, timing, cost)
        scenarios.append(_with_decisions(scenario, played, decisions, timing.labels))
        _add_stub_problems(diagnostics, parsed, played, stubs or {}, flagged)
    # past the limit, count the scenarios left (up to as many again) to say how many exist
    counted = len(scenarios) + (explorer.count(max_scenarios) if not explorer.finished else 0)
    finished = explorer.finished
    diagnostics += _unsatisfiable_outputs(outputs.notes)
    report = _across(
        parsed,
        graph,
        registry,
        scenarios,
        finished,
        counted,
        tuple(diagnostics),
        dict(outputs.notes),
    )
    if decisions is None or not decisions.needs:
        return report
    return dataclasses.replace(report, approval_needs=decisions.needs)


def _with_decisions(
    scenario: ScenarioReport, played: Played, decisions: Decisions | None, labels: list[str]
) -> ScenarioReport:
    """``scenario`` with the policies' decisions on its calls (those that ask among
    its ``approvals``, in plan order)."""
    if decisions is None:
        return scenario
    found = decisions.of(played.records)
    if not found:
        return scenario
    asked = {labels[i] for i, decision in found.items() if decision["action"] == "ask"}
    approvals = [label for label in labels if label in asked or label in scenario.approvals]
    policy = {labels[i]: decision for i, decision in sorted(found.items())}
    return dataclasses.replace(scenario, policy=policy, approvals=approvals)


def _add_stub_problems(
    diagnostics: list[Diagnostic],
    plan: Plan,
    played: Played,
    stubs: Mapping[str, Any],
    flagged: set[str],
) -> None:
    """Add to ``diagnostics`` each stub value of the scenario ``played`` that did not
    fit its tool, once, unless its stub was found wrong up front (``flagged``)."""
    for index, problem in played.problems:
        call = plan.calls[index]
        key = str(call.id) if call.id is not None and str(call.id) in stubs else None
        if (key or call.tool) in flagged:
            continue  # said once already, up front
        diagnostic = Diagnostic(
            "invalid_stub",
            "error",
            f"the stub of {call.tool} does not fit its tool: {problem}",
            index,
            "stubs",
            label=call.label,
        )
        if diagnostic not in diagnostics:
            diagnostics.append(diagnostic)


def _unsatisfiable_outputs(notes: Mapping[str, str]) -> list[Diagnostic]:
    """A warning for each tool whose output schema no value can be found for."""
    return [
        Diagnostic("unsatisfiable_output", "warning", f"tool {tool!r}: {note}")
        for tool, note in notes.items()
        if "cannot be satisfied" in note
    ]


def _check_stubs(
    plan: Plan, registry: Registry, stubs: Mapping[str, Any]
) -> tuple[list[Diagnostic], set[str]]:
    """Stub values that cannot fit their tool's output schema, checked up front; and
    the stub keys found wrong."""
    found: list[Diagnostic] = []
    flagged: set[str] = set()
    ids = {str(call.id): call.tool for call in plan.calls if call.id is not None}
    for key, stub in stubs.items():
        name = ids.get(key, key)
        tool = registry.get(name)
        if tool is None:
            found.append(
                Diagnostic(
                    "invalid_stub",
                    "error",
                    f"stub {key!r} names no tool and no call _id of the plan",
                    path="stubs",
                )
            )
            continue
        values = stub if isinstance(stub, list) else [stub]
        for value in values:
            if callable(value) or isinstance(value, BaseException):
                continue
            if hasattr(value, "k") and hasattr(value, "value"):  # an Outcome
                value = value.value
            problems = tool.validate_output(value)
            if problems:
                where = f" at {problems[0].path}" if problems[0].path else ""
                found.append(
                    Diagnostic(
                        "invalid_stub",
                        "error",
                        f"the stub of {tool.name} does not fit its output schema{where}: "
                        f"{problems[0].message}",
                        path="stubs",
                    )
                )
                flagged.add(key)
    return found, flagged


class _Timing:
    """Schedules by the set of calls that run: scenarios that run the same calls (the
    common case: branches that rejoin) share one."""

    def __init__(
        self, graph: Any, tools: list[str], latency: Mapping[str, float], concurrency: int
    ) -> None:
        self.graph, self.tools, self.concurrency = graph, tools, concurrency
        self.seconds = [float(latency.get(tool, 1.0)) for tool in tools]
        self.labels = [call.label for call in graph.plan.calls]
        self.known: dict[tuple[int, ...], Schedule] = {}

    def schedule(self, ran: list[int]) -> Schedule:
        key = tuple(ran)
        found = self.known.get(key)
        if found is None:
            durations = {i: self.seconds[i] for i in ran}
            found = schedule(self.graph.predecessors, durations, self.tools, {}, self.concurrency)
            self.known[key] = found
        return found


def _scenario(
    number: int,
    plan: Plan,
    graph: Any,
    played: Played,
    timing: _Timing,
    cost: Mapping[str, float],
) -> ScenarioReport:
    calls = plan.calls
    records = played.records
    labels = timing.labels
    ran = [i for i, r in enumerate(records) if r.status in ("succeeded", "failed") and r.attempts]
    sched = timing.schedule(ran)
    skipped, failed = _not_succeeded(records, labels)
    return ScenarioReport(
        number=number,
        arms=_arms(plan, labels, played),
        ran=[labels[i] for i in ran],
        skipped=skipped,
        failed=failed,
        writes={path: labels[i] for path, i in sorted(played.writes.items())},
        critical_path=[labels[i] for i in sched.critical_path],
        critical_seconds=sched.critical_seconds,
        makespan=sched.makespan,
        peak_concurrency=sched.peak,
        cost=sum(float(cost.get(calls[i].tool, 1.0)) for i in ran),
        approvals=[labels[i] for i in played.approvals],
        state=played.state,
        calls=tuple(records),
        unknown={labels[i]: why for i, why in sorted(played.unknown.items())},
        unknown_arguments={
            labels[i]: sources for i, sources in sorted(played.unknown_arguments.items())
        },
    )


def _arms(plan: Plan, labels: list[str], played: Played) -> dict[str, str]:
    """Call label -> the outcome it took, for the calls with more than one."""
    calls = plan.calls
    return {
        labels[i]: branch.label or OutputSource.alternative_label(calls[i], branch.alternative or 0)
        for i, branch in sorted(played.branches.items())
        if len(calls[i].alternatives) > 1 or branch.error is not None
    }


def _not_succeeded(
    records: list[CallRecord], labels: list[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The skipped calls (label -> why) and the failed ones (label -> the error)."""
    skipped = {labels[i]: r.reason or "" for i, r in enumerate(records) if r.status == "skipped"}
    failed = {
        labels[i]: f"{r.error['type']}: {r.error['message']}"
        for i, r in enumerate(records)
        if r.status == "failed" and r.error
    }
    return skipped, failed


def _across(
    plan: Plan,
    graph: Any,
    registry: Registry,
    scenarios: list[ScenarioReport],
    finished: bool,
    counted: int,
    diagnostics: tuple[Diagnostic, ...],
    notes: dict[str, str],
) -> SimulationReport:
    labels = [call.label for call in plan.calls]
    ran_somewhere: set[str] = set()
    for scenario in scenarios:
        ran_somewhere.update(scenario.ran)
    side = [
        label
        for label, call in zip(labels, plan.calls, strict=True)
        if label in ran_somewhere and not registry[call.tool].pure
    ]
    asking = sorted({a for scenario in scenarios for a in scenario.approvals} & set(side))
    load = len(asking) / len(side) if side else None
    unknown, unknown_arguments = _unknowns(labels, scenarios)
    return SimulationReport(
        scenarios=scenarios,
        explored=len(scenarios),
        total=counted if finished else None,
        at_least=counted,
        never_run=_never_run(labels, scenarios, ran_somewhere),
        written_never_read=_written_never_read(graph, scenarios),
        read_in_some=_read_in_some(graph, labels, scenarios),
        approval_load=load,
        side_effects=side,
        needing_approval=asking,
        diagnostics=diagnostics,
        notes=notes,
        unknown=unknown,
        unknown_arguments=unknown_arguments,
    )


def _never_run(
    labels: list[str], scenarios: list[ScenarioReport], ran_somewhere: set[str]
) -> dict[str, str]:
    """The calls that run in no scenario -> why (the first scenario's skip or error)."""
    reasons: dict[str, str] = {}
    for scenario in scenarios:
        for label, reason in scenario.skipped.items():
            reasons.setdefault(label, reason)
        for label, error in scenario.failed.items():
            reasons.setdefault(label, f"it fails: {error}")
    return {label: reasons.get(label, "") for label in labels if label not in ran_somewhere}


def _written_never_read(graph: Any, scenarios: list[ScenarioReport]) -> list[str]:
    """The paths written in some scenario that no call reads (statically), sorted."""
    reads: PathIndex[int] = PathIndex()
    for index, call_reads in enumerate(graph.reads):
        for read in call_reads:
            reads.add(read.key, index)
    written: set[str] = set()
    for scenario in scenarios:
        written.update(scenario.writes)
    return sorted(p for p in written if not reads.overlapping(parse_reference(p).key))


def _read_in_some(graph: Any, labels: list[str], scenarios: list[ScenarioReport]) -> list[str]:
    """The paths read only in some scenarios: read by calls that run in some, not all."""
    read_by: dict[str, set[int]] = {}
    for index, call_reads in enumerate(graph.reads):
        for read in call_reads:
            read_by.setdefault(str(read.reference), set()).add(index)
    partly = []
    ran_in = [set(scenario.ran) for scenario in scenarios]
    for path, readers in sorted(read_by.items()):
        per = [any(labels[i] in ran for i in readers) for ran in ran_in]
        if any(per) and not all(per):
            partly.append(path)
    return partly


def _unknowns(
    labels: list[str], scenarios: list[ScenarioReport]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The unknown values and the calls reading them, across scenarios, in plan order
    (a call's first reason; the sources of its unknown arguments in every scenario)."""
    unknown: dict[str, str] = {}
    reads: dict[str, dict[str, None]] = {}  # label -> its sources, as an ordered set
    for scenario in reversed(scenarios):  # the first scenario's reason wins
        unknown.update(scenario.unknown)
    for scenario in scenarios:
        for label, sources in scenario.unknown_arguments.items():
            reads.setdefault(label, {}).update(dict.fromkeys(sources))
    position = {label: i for i, label in enumerate(labels)}
    return (
        {label: unknown[label] for label in sorted(unknown, key=position.__getitem__)},
        {label: list(reads[label]) for label in sorted(reads, key=position.__getitem__)},
    )
