"""What a person sees before approving a whole plan (docs/approvals.md).

An :class:`Approval` holds the checked plan, its dry run and, when there was a
plan before it, what changed (:class:`PlanDiff`: calls added, removed and changed,
matched by ``_id``, or by tool and arguments).  The lazy execution loop shows one to
its ``approve`` callback, and ``obelisk run --approve`` prints one; the decision is a
:class:`~obelisk.interpreter.runtime.approvals.Decision`: accept, reject with a
reason, or edit (the edited plan is checked and simulated again).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.simulate.report import SimulationReport

__all__ = ["Approval", "PlanDiff", "plan_diff"]


@dataclass(frozen=True, slots=True)
class PlanDiff:
    """How a plan differs from the one before: ``added`` and ``removed`` are call
    labels (of the new and the old plan), ``changed`` pairs an old label with the new
    one and the keys that differ; ``unchanged`` counts the calls that stayed."""

    added: list[str]
    removed: list[str]
    changed: list[tuple[str, str, list[str]]]
    unchanged: int

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """``+ #3 send_email``, ``- #2 refund``, ``~ #1 charge -> #1 charge: amount``."""
        found = [f"+ {label}" for label in self.added]
        found += [f"- {label}" for label in self.removed]
        found += [f"~ {old} -> {new}: {', '.join(keys)}" for old, new, keys in self.changed]
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "changed": [{"from": old, "to": new, "keys": keys} for old, new, keys in self.changed],
            "unchanged": self.unchanged,
        }


def _label(index: int, call: dict[str, Any]) -> str:
    tool = call.get("_tool", "?")
    return f"#{index} {tool}" + (f" ({call['_id']})" if call.get("_id") is not None else "")


def _arguments(call: dict[str, Any]) -> str:
    return json.dumps(
        {k: v for k, v in call.items() if not k.startswith("_")},
        sort_keys=True,
        ensure_ascii=False,
        default=repr,
    )


def plan_diff(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> PlanDiff:
    """What changed from ``before`` to ``after`` (lists of call objects as written).

    Calls are matched by ``_id`` first, then by tool and arguments; a call matched
    by ``_id`` whose other keys differ is changed.  Calls left over are removed
    (from ``before``) or added (to ``after``).
    """
    old = list(enumerate(before))
    by_id, left_new = _match_by_id(old, list(enumerate(after)))
    used = {i for i, _ in by_id}
    by_content, added = _match_by_content(old, left_new, used)
    used.update(i for i, _ in by_content)
    changed: list[tuple[str, str, list[str]]] = []
    unchanged = 0
    for i, j in (*by_id, *by_content):
        previous, call = before[i], after[j]
        keys = sorted(k for k in set(previous) | set(call) if previous.get(k) != call.get(k))
        if keys:
            changed.append((_label(i, previous), _label(j, call), keys))
        else:
            unchanged += 1
    removed = [_label(i, c) for i, c in old if i not in used]
    return PlanDiff(added, removed, changed, unchanged)


_Numbered = list[tuple[int, dict[str, Any]]]  # (index, call object)


def _match_by_id(old: _Numbered, new: _Numbered) -> tuple[list[tuple[int, int]], _Numbered]:
    """The (old index, new index) pairs of the calls with the same ``_id``, in the new
    plan's order, and the new calls left over."""
    ids = {c.get("_id"): i for i, c in old if c.get("_id") is not None}
    pairs: list[tuple[int, int]] = []
    left_new: _Numbered = []
    for j, call in new:
        i = ids.get(call.get("_id")) if call.get("_id") is not None else None
        if i is None:
            left_new.append((j, call))
        else:
            pairs.append((i, j))
    return pairs, left_new


def _match_by_content(
    old: _Numbered, left_new: _Numbered, used: set[int]
) -> tuple[list[tuple[int, int]], list[str]]:
    """The (old index, new index) pairs of the calls left with the same tool and
    arguments (the first old one first), and the labels of the new calls matching
    none (added).  ``used``: the old calls matched already."""
    pool: dict[tuple[Any, str], list[int]] = {}
    for i, call in old:
        if i not in used:
            pool.setdefault((call.get("_tool"), _arguments(call)), []).append(i)
    pairs: list[tuple[int, int]] = []
    added: list[str] = []
    for j, call in left_new:
        candidates = pool.get((call.get("_tool"), _arguments(call)))
        if candidates:
            pairs.append((candidates.pop(0), j))
        else:
            added.append(_label(j, call))
    return pairs, added


@dataclass(frozen=True, slots=True)
class Approval:
    """A plan awaiting a person's decision: ``checked`` (the
    :class:`~obelisk.interpreter.analysis.result.CheckResult`), ``simulation`` (its dry
    run, or ``None`` when the plan has errors) and ``diff`` (against the plan before
    it, or ``None``).  It answers ``plan``, ``graph``, ``diagnostics``, ``errors``,
    ``warnings`` and ``ok`` as the check result does."""

    checked: CheckResult
    simulation: SimulationReport | None = None
    diff: PlanDiff | None = None

    @property
    def plan(self) -> Plan | None:
        return self.checked.plan

    @property
    def graph(self) -> PlanGraph | None:
        return self.checked.graph

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.checked.diagnostics

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return self.checked.errors

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return self.checked.warnings

    @property
    def ok(self) -> bool:
        return self.checked.ok

    def summary_lines(self) -> list[str]:
        """A few lines for a person: scenarios (after the unknown values, when some
        are: docs/simulate.md), what never runs, approvals, changes."""
        lines: list[str] = []
        report = self.simulation
        if report is not None:
            total = report.scenario_count()
            lines.append(f"dry run: {report.explored} of {total} scenarios")
            lines.extend("  " + line for line in report.unknown_lines())
            for scenario in report.scenarios[:8]:
                arms = ", ".join(f"{k} -> {v}" for k, v in scenario.arms.items()) or "one path"
                lines.append(
                    f"  scenario {scenario.number}: {arms}; {len(scenario.ran)} calls run, "
                    f"{len(scenario.skipped)} skipped; ~{scenario.makespan:g} s"
                )
            for label, why in report.never_run.items():
                lines.append(f"  never runs: {label}: {why}")
            approvals = report.approval_line(share=False)
            if approvals is not None:
                lines.append("  " + approvals)
            lines.extend("  " + line for line in report.policy_lines())
        if self.diff is not None and not self.diff.empty:
            lines.append("changes from the plan before:")
            lines.extend("  " + line for line in self.diff.lines())
        return lines
