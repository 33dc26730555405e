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

__all__ = ["Decision", "PendingApproval", "argument_hash", "approval_id"]


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
