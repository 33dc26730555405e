"""What a dry run reports: one :class:`ScenarioReport` per scenario, and what holds
across them, in a :class:`SimulationReport` (docs/simulate.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.interpreter.analysis.trust import ApprovalNeed
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.simulate.unknown import json_form

__all__ = ["ScenarioReport", "SimulationReport"]


@dataclass(frozen=True, slots=True)
class ScenarioReport:
    """One scenario: a choice of outcome for every branching call that ran.

    - ``arms``: call label -> the outcome it took (an output path such as
      ``†state.receipt``, ``error arm``, or a declared outcome's name), for calls
      with more than one possible outcome;
    - ``ran``: labels of the calls that ran; ``skipped``: label -> why (the real
      run's skip reason); ``failed``: label -> the error;
    - ``writes``: state path written -> label of the call that wrote it last;
    - ``critical_path``: labels along the longest chain of dependent calls, and its
      length ``critical_seconds``; ``makespan``: estimated seconds for the whole
      scenario; ``peak_concurrency``: most calls running at once;
    - ``cost``: the sum of the ``cost`` weights of the calls that ran;
    - ``approvals``: labels of the calls that would wait for a person;
    - ``state``: the final state; ``calls``: one record per call, as a real run's;
    - ``unknown``: label -> why, for calls whose result nobody can predict (an
      :class:`~obelisk.interpreter.simulate.unknown.UnknownValue` stands for it in
      ``state`` and in the arguments of the calls reading it);
      ``unknown_arguments``: label of a call that ran with unknown arguments ->
      the labels of the calls whose unknown values they hold;
    - ``policy``: label -> ``{"action": "ask" | "deny", "reason"}``, the decision a
      policy would make on each call that runs in this scenario, from the labels of
      the plan's data flow and the arguments it runs with (a call a policy asks about
      is among ``approvals`` too; docs/simulate.md, "Policies").
    """

    number: int
    arms: dict[str, str]
    ran: list[str]
    skipped: dict[str, str]
    failed: dict[str, str]
    writes: dict[str, str]
    critical_path: list[str]
    critical_seconds: float
    makespan: float
    peak_concurrency: int
    cost: float
    approvals: list[str]
    state: dict[str, Any]
    calls: tuple[CallRecord, ...] = field(repr=False, default=())
    unknown: dict[str, str] = field(default_factory=dict)
    unknown_arguments: dict[str, list[str]] = field(default_factory=dict)
    policy: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``obelisk simulate --json``'s scenarios; an unknown value
        in ``state`` is ``{"$unknown": <label>}`` (docs/simulate.md)."""
        return {
            "scenario": self.number,
            "arms": self.arms,
            "ran": self.ran,
            "skipped": self.skipped,
            "failed": self.failed,
            "writes": self.writes,
            "critical_path": self.critical_path,
            "critical_seconds": self.critical_seconds,
            "makespan": self.makespan,
            "peak_concurrency": self.peak_concurrency,
            "cost": self.cost,
            "approvals": self.approvals,
            "state": json_form(self.state),
            "unknown": self.unknown,
            "unknown_arguments": self.unknown_arguments,
            "policy": self.policy,
        }


@dataclass(frozen=True, slots=True)
class SimulationReport:
    """A dry run of a plan.

    - ``scenarios``: the scenarios explored (at most ``max_scenarios``);
      ``explored`` their count; ``total`` how many exist, or ``None`` when there
      are too many to count (past the limit, up to ``max_scenarios`` more are played
      only to be counted); ``at_least`` how many are known to exist;
    - ``never_run``: label -> why, for calls that run in no explored scenario;
    - ``written_never_read``: state paths some call writes that no call reads;
    - ``read_in_some``: paths read in some scenarios and not in others;
    - ``approval_load``: the share (0–1) of side-effecting calls (tools not
      declared ``pure``) that ran and would need a person, or ``None`` when no
      side-effecting call runs; ``side_effects`` and ``needing_approval`` list them;
    - ``diagnostics``: problems of the dry run itself (a stub that does not fit its
      tool, an output schema no value was found for), and the plan's warnings;
    - ``notes``: tool -> why its simulated values are unknown;
    - ``unknown``: label -> why, for calls whose result nobody can predict in some
      scenario (no stub and no output schema, say); ``unknown_arguments``: label of
      a call that ran with unknown arguments in some scenario -> the labels of the
      calls whose unknown values they hold.  Those calls run in the dry run and
      count in ``side_effects`` and ``needing_approval`` (docs/simulate.md);
    - ``approval_needs``: the calls that may need a person and why, from the labels
      of the plan's data flow (``CheckResult.approval_load``'s records, worked out
      with the dry run's ``policy`` and ``input_labels``; docs/simulate.md, "Policies").
    """

    scenarios: list[ScenarioReport]
    explored: int
    total: int | None
    at_least: int
    never_run: dict[str, str]
    written_never_read: list[str]
    read_in_some: list[str]
    approval_load: float | None
    side_effects: list[str]
    needing_approval: list[str]
    diagnostics: tuple[Diagnostic, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    unknown_arguments: dict[str, list[str]] = field(default_factory=dict)
    approval_needs: tuple[ApprovalNeed, ...] = ()

    @property
    def truncated(self) -> bool:
        """True when ``max_scenarios`` cut the exploration short."""
        return self.total is None or self.explored < self.total

    def scenario_count(self) -> str:
        """``"2"``, or ``"at least 128"`` when there were too many to count."""
        return str(self.total) if self.total is not None else f"at least {self.at_least}"

    def summary(self) -> dict[str, Any]:
        """The parts that hold across scenarios (no per-scenario detail)."""
        return {
            "explored": self.explored,
            "total": self.total,
            "at_least": self.at_least,
            "never_run": self.never_run,
            "written_never_read": self.written_never_read,
            "read_in_some": self.read_in_some,
            "approval_load": self.approval_load,
            "side_effects": self.side_effects,
            "needing_approval": self.needing_approval,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "notes": self.notes,
            "unknown": self.unknown,
            "unknown_arguments": self.unknown_arguments,
            "approval_needs": [need.to_dict() for need in self.approval_needs],
        }

    def policy_lines(self) -> list[str]:
        """What a person reads of the policies: each call that may need a person and
        why, then each scenario's decisions (``[]`` when no policy has a say)."""
        lines = [
            f"may need a person: {need.label}: {'; '.join(need.reasons)}"
            for need in self.approval_needs
        ]
        for scenario in self.scenarios:
            for label, decision in scenario.policy.items():
                lines.append(
                    f"scenario {scenario.number}: {decision['action']} {label}: "
                    f"{decision['reason']}"
                )
        return lines

    def unknown_lines(self) -> list[str]:
        """What a person reads before the scenarios when some values are unknown (``[]``
        when none is): each call whose result is unknown, why, and the calls reading
        it; those nobody reads share a line per reason."""
        if not self.unknown:
            return []
        readers: dict[str, list[str]] = {}
        for reader, sources in self.unknown_arguments.items():
            for source in sources:
                readers.setdefault(source, []).append(reader)
        lines = [
            "unknown values: nothing predicts these results; every arm is explored, and "
            "the calls reading them run with unknown arguments"
        ]
        unread: dict[str, list[str]] = {}
        for label, why in self.unknown.items():
            if label in readers:
                lines.append(f"  {label}: {why}; read by {', '.join(readers[label])}")
            else:
                unread.setdefault(why, []).append(label)
        lines += [f"  {', '.join(labels)}: {why}; not read" for why, labels in unread.items()]
        return lines

    def approval_line(self, share: bool = True) -> str | None:
        """``approval load: 2 of 4 side-effecting calls need a person (50%)`` (the share
        only with ``share``), and which of them have unknown arguments; ``None`` when
        no side-effecting call runs."""
        if self.approval_load is None:
            return None
        line = (
            f"approval load: {len(self.needing_approval)} of {len(self.side_effects)} "
            "side-effecting calls need a person"
        )
        if share:
            line += f" ({self.approval_load:.0%})"
        unsure = [label for label in self.needing_approval if label in self.unknown_arguments]
        if unsure:
            line += f", with unknown arguments: {', '.join(unsure)}"
        return line

    def to_dict(self) -> dict[str, Any]:
        """``{"summary": {...}, "scenarios": [...]}``: ``obelisk simulate --json``."""
        return {
            "summary": self.summary(),
            "scenarios": [scenario.to_dict() for scenario in self.scenarios],
        }
