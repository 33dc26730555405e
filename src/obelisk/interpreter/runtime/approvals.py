"""Approvals: a person decides, bound to the exact call and arguments (docs/approvals.md).

A tool declared with ``requires_approval=True`` (or a predicate over the resolved
arguments) pauses each of its calls as ``awaiting_approval``; everything that does
not depend on it goes on.  Each pause is a :class:`PendingApproval` with an id and
a canonical hash of the call's resolved arguments.  A :class:`Decision` is given by
id, and holds only for the run, the plan and the arguments it was made for: the id
is 128 bits of a hash of the run's id, a fingerprint of the plan up to the call,
the call's index and its argument hash, so a decision can never approve different
arguments, nor a call of another run (even of an identical plan).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.errors import ApprovalError, ArgumentValidationError
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import copy_json

__all__ = [
    "ApprovalIds",
    "Decision",
    "PendingApproval",
    "PlanPrefixes",
    "Resolution",
    "approval_id",
    "argument_hash",
    "as_decision",
    "check_decisions",
    "needs_approval",
    "new_scope",
]

ID_DIGITS = 32
"""Hex digits of an approval id's hash part: 128 bits, so that finding two calls with
one id is not a search."""


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


def approval_id(call: int, digest: str, scope: str) -> str:
    """``"3-5f0c1d2e9a7b4c3d2e1f0a9b8c7d6e5f"``: the call's index, then 32 hex digits
    (128 bits) of the SHA-256 of ``scope`` (the run's id and the fingerprint of its
    plan up to the call), the index and ``digest`` (the call's
    :func:`argument_hash`).  An id of one run never names a call of another."""
    text = f"obelisk approval\x00{scope}\x00{call}\x00{digest}"
    return f"{call}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:ID_DIGITS]}"


def new_scope() -> str:
    """A fresh approval scope (32 random hex digits): what binds the approval ids of
    an engine family that has no run id of its own (a loop's turn)."""
    return secrets.token_hex(16)


class PlanPrefixes:
    """Fingerprints of a plan's beginnings: ``fingerprint(plan, i)`` is the SHA-256
    (hex) chained over the canonical JSON of calls ``0..i``, so it stays the same
    while a streamed plan grows after call ``i``.  Worked out on first need and
    kept, so a run without approvals never pays for it."""

    __slots__ = ("_chain",)

    def __init__(self) -> None:
        self._chain: list[str] = []

    def fingerprint(self, plan: Plan, index: int) -> str:
        chain = self._chain
        while len(chain) <= index:
            text = json.dumps(
                plan.calls[len(chain)].to_data(),
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=True,
                default=repr,
            )
            before = chain[-1] if chain else ""
            chain.append(hashlib.sha256(f"{before}\x00{text}".encode("ascii")).hexdigest())
        return chain[index]


class ApprovalIds:
    """The approval ids of one engine family (a run and its resumes): bound to
    ``scope`` (the run's id, or what its maker keeps across resumes) and to the plan
    up to the call (:class:`PlanPrefixes`).  ``known`` maps ``(call, argument hash)``
    to the id a run's journal already gave that call, which it keeps (journals
    written before ids were bound to their run hold 12-digit ones, docs/durable.md).
    """

    __slots__ = ("_known", "_prefixes", "_scope")

    def __init__(self, scope: str, known: Mapping[tuple[int, str], str] | None = None) -> None:
        self._scope, self._known, self._prefixes = scope, dict(known or {}), PlanPrefixes()

    def __call__(self, plan: Plan, index: int, digest: str) -> str:
        """Call ``index``'s approval id for arguments hashing to ``digest``."""
        known = self._known.get((index, digest))
        if known is not None:
            return known
        fingerprint = self._prefixes.fingerprint(plan, index)
        return approval_id(index, digest, f"{self._scope}\x00{fingerprint}")


def needs_approval(tool: Tool, arguments: dict[str, Any]) -> bool:
    """Whether a call of ``tool`` with these resolved arguments waits for a person.
    A predicate sees the arguments as the tool would get them (validated: ``"true"``
    is ``True`` for a ``bool`` parameter; containers copied) and counts as ``True``
    when it raises; arguments that do not validate need no person, since the call
    fails on them before its tool runs (docs/approvals.md)."""
    rule = tool.requires_approval
    if isinstance(rule, bool):
        return rule
    try:
        validated = tool.validate_arguments(arguments)
    except Exception:  # ArgumentValidationError, or a validator that broke: it fails
        return False
    return tool.needs_approval(
        {
            name: copy_json(value) if type(value) in (dict, list) else value
            for name, value in validated.items()
        }
    )


def as_decision(value: Any) -> Decision | None:
    """``value`` as a :class:`Decision`: itself, ``True`` (accept) or ``False``
    (reject, reason ``"rejected"``); ``None`` for anything else."""
    if isinstance(value, Decision):
        return value
    if value is True:
        return Decision.accept()
    if value is False:
        return Decision.reject("rejected")
    return None


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A call paused until a person decides (see the module docstring).

    ``id`` names it in decisions; ``call`` is the call's index and ``label`` its
    ``#3 send_email`` name; ``arguments`` the resolved arguments it would run with;
    ``hash`` their :func:`argument_hash`.  ``reason`` is why a policy asked (the
    flows of untrusted data into the call, docs/security.md); ``None`` for a tool's
    own ``requires_approval``.
    """

    id: str
    call: int
    label: str
    tool: str
    arguments: dict[str, Any]
    hash: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "call", "label", "tool", "arguments", "hash"}``, plus ``"reason"``
        when a policy asked."""
        data = {
            "id": self.id,
            "call": self.call,
            "label": self.label,
            "tool": self.tool,
            "arguments": self.arguments,
            "hash": self.hash,
        }
        if self.reason is not None:
            data["reason"] = self.reason
        return data


def check_decisions(
    pending: tuple[PendingApproval, ...],
    decisions: Mapping[str, Any],
    registry: Registry,
    run: str | None = None,
) -> dict[str, Decision]:
    """``decisions`` checked against the pending approvals, before anything runs.

    A decision is a :class:`Decision`, ``True`` (accept) or ``False`` (reject).
    Raises :class:`~obelisk.errors.ApprovalError` for any other value, an id that
    names no pending approval (the message says it is unknown to the run, named
    ``run``: an id holds for one run, one plan and one call's arguments), or edited
    arguments that do not fit the tool's schema.  Nothing is recorded when one is
    refused.
    """
    by_id = {approval.id: approval for approval in pending}
    checked: dict[str, Decision] = {}
    for approval_id, given in decisions.items():
        decision = as_decision(given)
        if decision is None:
            raise ApprovalError(
                f"the decision for {approval_id!r} must be Decision.accept() (or True), "
                "Decision.reject(reason) (or False) or Decision.edit(arguments), "
                f"got {given!r}"
            )
        approval = by_id.get(approval_id)
        if approval is None:
            ids = ", ".join(a.id for a in pending) or "none"
            where = f" of run {run!r}" if run else ""
            raise ApprovalError(
                f"approval {approval_id!r} is unknown: no call{where} awaits it (pending: {ids})"
            )
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
