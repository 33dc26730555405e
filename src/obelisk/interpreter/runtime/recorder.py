"""What the engine tells a run's journal, and when (docs/durable.md).

An :class:`~obelisk.interpreter.runtime.engine.Engine` given a ``recorder`` calls it
at five points of a call's life, on the event loop's thread.  The order is what
makes a crash safe to resume: :meth:`Recorder.started` records a call's *intent*
(its resolved arguments) when it is dispatched, and :meth:`Recorder.invoking` is
called just before its tool runs and must not return before that intent is
durable.  So a call whose tool may have run always has an intent in the journal;
one whose outcome is missing too was in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.records import CallOutcome, CallRecord
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Recorder"]


class Recorder(Protocol):
    """Receives a run's progress (see the module docstring).  Every method is called
    on the event loop's thread; an exception from one stops the run with it."""

    def started(self, record: CallRecord, tool: Tool) -> None:
        """Call ``record.index`` is dispatched with ``record.arguments`` (its intent)."""

    def invoking(self, index: int) -> None:
        """The tool of call ``index`` runs next: its intent must be durable first."""

    def settled(self, index: int, outcome: CallOutcome) -> None:
        """Call ``index`` ran (or was decided): what a resumed run replays."""

    def committed(self, record: CallRecord, entries: Sequence[WriteEntry]) -> None:
        """Call ``record.index`` is over (any status) and ``entries`` were written."""

    def awaiting(self, pending: PendingApproval) -> None:
        """A call waits for a person."""
