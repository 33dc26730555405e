"""Approvals: a person decides, bound to the exact call and arguments (docs/approvals.md).

A tool declared with ``requires_approval=True`` (or a predicate over the resolved
arguments) pauses each of its calls as ``awaiting_approval``; everything that does
not depend on it goes on.  Each pause is a :class:`PendingApproval` with an id and
a canonical hash of the call's resolved arguments.  A :class:`Decision` is given by
id, and holds only for the arguments it was made for: the id is derived from the
hash, so a decision can never approve different arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.errors import ApprovalError, ArgumentValidationError
from obelisk.interpreter.tools.registry import Registry

__all__ = [
    "Decision",
    "PendingApproval",
    "Resolution",
    "approval_id",
    "argument_hash",
    "check_decisions",
]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a person (or a policy) decided.

    ``Decision.accept()``; ``Decision.reject(reason)``; ``Decision.edit(value)``.
    For a whole plan (lazy mode, ``obelisk run --approve``), ``value`` is the edited
    plan, in any form :func:`obelisk.parse_plan` takes, which is checked (and
    simulated) again.  For a call awaiting approval, ``value`` is its edited
    arguments object, validated against the tool's schema before anything runs.
    A rejected call fails with ``ApprovalRejected`` and the reason, so an error
    arm can take it; a rejected plan sends the reason back to the model.
    """

    action: Literal["accept", "reject", "edit"]
    reason: str | None = None
    plan: Any = None

    @property
    def arguments(self) -> Any:
        """The edited arguments of a call (the same value as :attr:`plan`)."""
        return self.plan

    @classmethod
    def accept(cls) -> Decision:
        return cls("accept")

    @classmethod
    def reject(cls, reason: str) -> Decision:
        return cls("reject", reason=reason)

    @classmethod
    def edit(cls, value: Any) -> Decision:
        return cls("edit", plan=value)


def argument_hash(tool: str, arguments: Mapping[str, Any]) -> str:
    """The canonical hash of a call's resolved arguments: SHA-256 (hex) of the JSON
    text ``{"arguments", "tool"}`` with sorted keys and no spaces.  Values that are
    not JSON are hashed by their repr."""
    text = json.dumps(
        {"tool": tool, "arguments": dict(arguments)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=repr,
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def approval_id(call: int, digest: str) -> str:
    """``"3-5f0c1d2e9a7b"``: the call's index and the first 12 hex digits of its hash."""
    return f"{call}-{digest[:12]}"


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A call paused until a person decides (see the module docstring).

    ``id`` names it in decisions; ``call`` is the call's index and ``label`` its
    ``#3 send_email`` name; ``arguments`` the resolved arguments it would run with;
    ``hash`` their :func:`argument_hash`.
    """

    id: str
    call: int
    label: str
    tool: str
    arguments: dict[str, Any]
    hash: str

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "call", "label", "tool", "arguments", "hash"}``."""
        return {
            "id": self.id,
            "call": self.call,
            "label": self.label,
            "tool": self.tool,
            "arguments": self.arguments,
            "hash": self.hash,
        }


def check_decisions(
    pending: tuple[PendingApproval, ...], decisions: Mapping[str, Any], registry: Registry
) -> dict[str, Decision]:
    """``decisions`` checked against the pending approvals, before anything runs.

    Raises :class:`~obelisk.errors.ApprovalError` for a decision that is not a
    ``Decision``, an id that names no pending approval (a call whose arguments
    changed has a new id: the message says so), or edited arguments that do not
    fit the tool's schema.  Nothing is recorded when one is refused.
    """
    by_id = {approval.id: approval for approval in pending}
    checked: dict[str, Decision] = {}
    for approval_id, decision in decisions.items():
        if not isinstance(decision, Decision):
            raise ApprovalError(
                f"the decision for {approval_id!r} must be Decision.accept(), "
                f"Decision.reject(reason) or Decision.edit(arguments), got {decision!r}"
            )
        approval = by_id.get(approval_id)
        if approval is None:
            call = str(approval_id).split("-", 1)[0]
            same = [a for a in pending if str(a.call) == call]
            hint = (
                f"; {same[0].label} awaits {same[0].id}: its arguments are not the ones "
                "that decision was made for"
                if same
                else ""
            )
            ids = ", ".join(a.id for a in pending) or "none"
            raise ApprovalError(f"no call awaits approval {approval_id!r}{hint} (pending: {ids})")
        if decision.action == "edit":
            tool = registry.get(approval.tool)
            if not isinstance(decision.arguments, Mapping):
                raise ApprovalError(
                    f"the edit of {approval.label} must be an arguments object, "
                    f"got {decision.arguments!r}"
                )
            if tool is not None:
                try:
                    tool.validate_arguments(dict(decision.arguments))
                except ArgumentValidationError as exc:
                    raise ApprovalError(
                        f"the edited arguments of {approval.label} do not fit its tool; "
                        f"nothing was recorded: {exc}"
                    ) from None
        checked[approval_id] = decision
    return checked


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a person decided about a call whose outcome is unknown: a durable run's
    call that was in flight when its process stopped (docs/durable.md).

    - ``Resolution.retry()``: run the call again (its tool gets the same
      ``idempotency_key``);
    - ``Resolution.succeeded(output)``: it did its work and returned ``output`` (an
      ``obelisk.Outcome`` picks the alternative), which is checked against the tool's
      output schema and written as if the tool had returned it;
    - ``Resolution.failed(message)``: it failed; the call fails with the error
      ``UnknownOutcome`` and ``message`` (an error arm takes it).

    Given to ``obelisk.resume(run_id, unknown={call index or _id: resolution})``.
    """

    action: Literal["retry", "succeeded", "failed"]
    output: Any = None
    message: str | None = None

    @classmethod
    def retry(cls) -> Resolution:
        return cls("retry")

    @classmethod
    def succeeded(cls, output: Any) -> Resolution:
        return cls("succeeded", output=output)

    @classmethod
    def failed(cls, message: str) -> Resolution:
        return cls("failed", message=message)
