"""Approval of lazy plans by a person or a policy (docs/loop.md).

An ``approve`` callback (sync or async) gets the
:class:`~obelisk.interpreter.analysis.result.CheckResult` of the model's plan and
returns a :class:`~obelisk.interpreter.runtime.approvals.Decision` (or
``True``/``False``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.runtime.approvals import Decision

__all__ = ["Approver"]


Approver = Callable[[CheckResult], "Decision | bool | Awaitable[Decision | bool]"]
