"""The policy decisions a dry run reports (docs/simulate.md, "Policies"): per scenario,
what the tools' policies would decide on each call that runs, from the labels of the
plan's data flow (:mod:`obelisk.interpreter.analysis.trust`, an upper bound of a real
run's) and the arguments the call runs with in that scenario; across scenarios, the
calls that may need a person (``CheckResult.approval_load``'s records)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from obelisk.errors import UsageError
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.trust import (
    ApprovalNeed,
    StaticLabels,
    input_label_pairs,
    labels_in_play,
)
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.tools.policies import PolicyCall, PolicyMode, decide
from obelisk.interpreter.tools.registry import Registry

__all__ = ["Decisions"]


class Decisions:
    """The policies of one dry run: ``of(records)`` gives a scenario's decisions,
    ``needs`` the approval load; ``None`` from :meth:`build` when no label is in play."""

    @classmethod
    def build(
        cls,
        plan: Plan,
        graph: PlanGraph,
        registry: Registry,
        policy: PolicyMode,
        input_labels: Mapping[str, Any] | None,
    ) -> Decisions | None:
        """The decisions of a dry run with ``policy`` and ``input_labels`` (as
        ``obelisk.run`` takes them); ``None`` when no policy can have a say."""
        if policy not in ("off", "strict"):
            raise UsageError(f"policy must be 'off' or 'strict', got {policy!r}")
        pairs = input_label_pairs(input_labels)
        tools = [registry.get(call.tool) for call in plan.calls]
        if not labels_in_play(policy, pairs, tools):
            return None
        return cls(StaticLabels(plan, graph, tools, policy, pairs))

    def __init__(self, labels: StaticLabels) -> None:
        self.labels = labels
        self.needs: tuple[ApprovalNeed, ...] = labels.approval_load()

    def of(self, records: list[CallRecord]) -> dict[int, dict[str, str]]:
        """Call index -> ``{"action", "reason"}`` for each call of a scenario that ran
        (its arguments resolved) and that a policy would not simply allow."""
        labels, found = self.labels, {}
        for record in records:
            tool = labels.tools[record.index]
            if tool is None or record.arguments is None or record.index not in labels.ordered:
                continue
            if record.status not in ("succeeded", "failed") or not record.attempts:
                continue
            call = labels.plan.calls[record.index]
            seen = PolicyCall(call.tool, call.label, record.arguments, labels.arguments[call.index])
            verdict = decide(tool.rules, seen, labels.mode)
            if verdict.action != "allow":
                found[record.index] = {"action": verdict.action, "reason": verdict.reason}
        return found
