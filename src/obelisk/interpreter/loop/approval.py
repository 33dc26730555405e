"""Approval of lazy plans by a person or a policy (docs/loop.md).

An ``approve`` callback (sync or async) gets the
:class:`~obelisk.interpreter.simulate.approval.Approval` of the model's plan (the
check, the dry run, the changes from the plan before) and
returns a :class:`~obelisk.interpreter.runtime.approvals.Decision` (or
``True``/``False``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from obelisk.interpreter.runtime.approvals import Decision
from obelisk.interpreter.simulate.approval import Approval

__all__ = ["Approver"]


Approver = Callable[[Approval], "Decision | bool | Awaitable[Decision | bool]"]
