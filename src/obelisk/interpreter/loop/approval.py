"""Approval of lazy plans by a person or a policy (docs/loop.md).

An ``approve`` callback (sync or async) gets the
:class:`~obelisk.interpreter.analysis.result.CheckResult` of the model's plan and
returns a :class:`Decision` (or ``True``/``False``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.interpreter.analysis.result import CheckResult

__all__ = ["Approver", "Decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What an ``approve`` callback decided about a checked plan (lazy mode).

    ``Decision.accept()``; ``Decision.reject(reason)`` (the reason goes back to the
    model as an error message); ``Decision.edit(plan)`` (the edited plan, any form
    :func:`~obelisk.interpreter.plan.parse_plan` takes, is checked again and shown
    to ``approve`` again).  A callback may also return ``True`` / ``False``.
    """

    action: Literal["accept", "reject", "edit"]
    reason: str | None = None
    plan: Any = None

    @classmethod
    def accept(cls) -> Decision:
        return cls("accept")

    @classmethod
    def reject(cls, reason: str) -> Decision:
        return cls("reject", reason=reason)

    @classmethod
    def edit(cls, plan: Any) -> Decision:
        return cls("edit", plan=plan)


Approver = Callable[[CheckResult], "Decision | bool | Awaitable[Decision | bool]"]
