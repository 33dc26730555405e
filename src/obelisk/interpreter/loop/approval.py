"""Approval of lazy plans by a person or a policy (docs/loop.md).

An ``approve`` callback (sync or async) gets the
:class:`~obelisk.interpreter.simulate.approval.Approval` of the model's plan (the
check, the dry run, the changes from the plan before) and
returns a :class:`~obelisk.interpreter.runtime.approvals.Decision` (or
``True``/``False``).  :class:`ApprovalRound` is the way a lazy plan goes past it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.loop.context import diagnostic_errors
from obelisk.interpreter.loop.messages import ErrorMessage
from obelisk.interpreter.runtime.approvals import Decision
from obelisk.interpreter.simulate.approval import Approval, plan_diff
from obelisk.interpreter.simulate.simulate import simulate_checked
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry

__all__ = ["ApprovalRound", "Approver", "Documents", "checker", "trust_of"]


Approver = Callable[[Approval], "Decision | bool | Awaitable[Decision | bool]"]

Documents = tuple[Any, Any, dict[str, Any]]
"""``(input, state, data)`` a plan is checked against (``Session.check_documents``)."""


def trust_of(settings: Any) -> dict[str, Any]:
    """A loop's ``policy`` and ``input_labels`` (its ``RunSettings``), as
    :func:`check` takes them: a model's plan is checked with its labels
    (``untrusted_flow``, docs/diagnostics.md)."""
    return {"policy": settings.policy, "input_labels": dict(settings.input_labels)}


def checker(loop: Any) -> Callable[..., CheckResult]:
    """:func:`check` as a loop checks its model's plans: in its mode (a streamed plan
    passes ``mode="eager"``), with its policy and input labels (:func:`trust_of`)."""
    return functools.partial(check, mode=loop.mode, **trust_of(loop.settings))


def _accepts(decision: Any) -> bool:
    """Whether an approver's answer accepts the plan (``True`` or an accept)."""
    return decision is True or (isinstance(decision, Decision) and decision.action == "accept")


@dataclass(frozen=True, slots=True)
class ApprovalRound:
    """How a turn's plan gets past ``approve`` (lazy mode; ``None``: nothing to ask).

    The plan is shown with its dry run (when it has no errors) and its changes from
    the plan before; an edit is checked against ``documents`` and shown again, one
    with errors up to ``max_corrections`` edits; a rejection ends the turn.  ``policy``
    and ``input_labels`` are the loop's: the check and the dry run show what the
    policies would decide (docs/simulate.md, "Policies")."""

    approve: Approver | None
    registry: Registry
    mode: Literal["eager", "lazy"]
    max_corrections: int
    documents: Documents
    policy: PolicyMode = "off"
    input_labels: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, loop: Any, documents: Documents) -> ApprovalRound:
        """The round of a loop's turn (its ``approve``, tools, mode, corrections and
        policy), checking edits against ``documents``."""
        trust = trust_of(loop.settings)
        return cls(loop.approve, loop.registry, loop.mode, loop.max_corrections, documents, **trust)

    async def run(
        self,
        calls: list[dict[str, Any]],
        checked: CheckResult,
        previous: list[dict[str, Any]],
    ) -> tuple[CheckResult, list[dict[str, Any]], list[ErrorMessage] | None]:
        """``(checked, calls, None)`` for the plan to run (``calls`` as the approver
        left them, ``checked`` their check), or ``(.., errors)`` when nothing runs:
        the plan has errors or was rejected.  ``previous``: the plan before this one."""
        edits = 0
        while True:
            if checked.errors and (edits == 0 or edits > self.max_corrections):
                return checked, calls, diagnostic_errors(checked.diagnostics)
            if self.approve is None:
                return checked, calls, None
            decision = await self._decision(self.approve, checked, previous, calls)
            accepted = _accepts(decision)
            if accepted and checked.errors:  # accepting a broken edit: the model fixes it
                edits = self.max_corrections + 1
                continue
            if accepted:
                return checked, calls, None
            if isinstance(decision, Decision) and decision.action == "edit":
                edits += 1
                checked, calls = self._edited(decision, calls)
                continue
            reason = decision.reason if isinstance(decision, Decision) else None
            message = f"the plan was rejected: {reason or 'no reason given'}"
            return checked, calls, [ErrorMessage(error={"type": "rejected", "message": message})]

    async def _decision(
        self,
        approve: Approver,
        checked: CheckResult,
        previous: list[dict[str, Any]],
        calls: list[dict[str, Any]],
    ) -> Any:
        """What ``approve`` says of the plan, shown with its dry run (when it has no
        errors) and its changes from the ``previous`` plan."""
        check_input, state_doc, data = self.documents
        simulation = None
        if checked.ok:
            simulation = simulate_checked(
                checked, self.registry, check_input, state_doc, data=data,
                policy=self.policy, input_labels=self.input_labels,
            )  # fmt: skip
        diff = plan_diff(previous, calls) if previous else None
        decision = approve(
            Approval(checked, simulation, diff)
        )  # an edit with errors is shown again
        if inspect.isawaitable(decision):
            decision = await decision
        return decision

    def _edited(
        self, decision: Decision, calls: list[dict[str, Any]]
    ) -> tuple[CheckResult, list[dict[str, Any]]]:
        """The approver's edit, checked, and its calls (``calls`` when it has none)."""
        check_input, state_doc, data = self.documents
        checked = check(
            decision.plan, self.registry, check_input, state_doc, data=data, mode=self.mode,
            policy=self.policy, input_labels=self.input_labels,
        )  # fmt: skip
        if checked.plan is not None:
            calls = [call.to_data() for call in checked.plan.calls]
        elif isinstance(decision.plan, list):
            calls = decision.plan
        return checked, calls
