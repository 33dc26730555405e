"""What a run leaves behind: call records and the run result (docs/semantics.md).

Shapes (``to_dict()``):

* :class:`CallRecord` ``{"index", "id", "tool", "status", "arguments", "output",
  "error", "reason", "started", "finished", "attempts"}``; ``status`` is one of
  ``succeeded``, ``failed``, ``skipped``, ``pending_latent``, ``cancelled``;
  ``error`` is ``{"type", "message"}`` or ``null``; times are seconds since the epoch.
* :class:`RunResult` ``{"status", "state", "calls", "diagnostics"}`` (the shape of
  ``obelisk run --json``, calls trimmed to ``index, id, tool, status, output,
  error, reason``); ``status`` is ``completed``, ``failed`` or ``partial``.

Events are in :mod:`~obelisk.interpreter.runtime.events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.errors import Diagnostic
from obelisk.grammar import Reference
from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.state import WriteEntry

__all__ = ["CallOutcome", "CallRecord", "CallStatus", "RunResult", "RunStatus", "run_status"]

CallStatus = Literal[
    "waiting",
    "succeeded",
    "failed",
    "skipped",
    "pending_latent",
    "cancelled",
    "awaiting_approval",
]
RunStatus = Literal["completed", "failed", "partial", "awaiting_approval"]


@dataclass(slots=True)
class CallRecord:
    """What happened to one call.  ``arguments`` are the resolved arguments it ran
    with; ``error`` keeps the error even when it went to the error arm (docs/language.md).
    ``untaken`` is true for a call skipped only because it reads an alternative
    that was not taken: the plan's normal branching, not a missing read."""

    index: int
    id: str | int | None
    tool: str
    status: CallStatus = "waiting"
    arguments: dict[str, Any] | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    reason: str | None = None
    started: float | None = None
    finished: float | None = None
    attempts: int = 0
    untaken: bool = False

    @property
    def label(self) -> str:
        """``#3 issueRefund`` (plus the ``_id`` in parentheses when there is one)."""
        base = f"#{self.index} {self.tool}"
        return base if self.id is None else f"{base} ({self.id})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.id,
            "tool": self.tool,
            "status": self.status,
            "arguments": self.arguments,
            "output": self.output,
            "error": self.error,
            "reason": self.reason,
            "started": self.started,
            "finished": self.finished,
            "attempts": self.attempts,
        }


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What a call that ran did, kept so that a resumed run replays it instead of
    running it again: whether it succeeded, the writes it made (``(reference,
    value)`` pairs, the error arm's included), and its record's ``output``,
    ``error``, ``attempts`` and ``(started, finished)`` times (seconds since the epoch)."""

    succeeded: bool
    writes: tuple[tuple[Reference, Any], ...]
    output: Any
    error: dict[str, Any] | None
    attempts: int
    times: tuple[float | None, float | None]


@dataclass(frozen=True, slots=True, repr=False)
class RunResult:
    """The outcome of :func:`obelisk.run`.

    ``state`` is the final shared state document; ``documents`` every writable
    document by kind (``state`` and data kinds); ``instances`` the state each
    instance sees; ``log`` the write log in commit order.  With ``status ==
    "awaiting_approval"`` the run is paused: ``pending`` lists the calls waiting
    for a person (:class:`~obelisk.interpreter.runtime.approvals.PendingApproval`),
    and :func:`obelisk.resume` continues it.  ``outcomes`` keeps what each call that
    ran did, and ``origin`` what the run was started with, for resuming.
    """

    status: RunStatus
    state: dict[str, Any]
    calls: tuple[CallRecord, ...]
    log: tuple[WriteEntry, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    documents: dict[str, Any] = field(default_factory=dict)
    instances: dict[str, Any] = field(default_factory=dict)
    pending: tuple[PendingApproval, ...] = ()
    outcomes: dict[int, CallOutcome] = field(default_factory=dict)
    origin: Any = None

    def __repr__(self) -> str:
        # Short on purpose: asyncio.run (Python 3.11) formats the main task's
        # result while restoring the SIGINT handler, and a full repr of a
        # 10,000-call result cost 12% of a run (benchmarks/run_overhead.py).
        counts: dict[str, int] = {}
        for call in self.calls:
            counts[call.status] = counts.get(call.status, 0) + 1
        summary = ", ".join(f"{status}={n}" for status, n in counts.items())
        calls = f"{len(self.calls)} ({summary})"
        return f"RunResult(status={self.status!r}, calls={calls}, writes={len(self.log)})"

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "state", "calls": [...], "diagnostics": [...]}``, plus
        ``"pending": [{"id", "call", "label", "tool", "arguments", "hash"}]`` while
        the run awaits approval."""
        keys = ("index", "id", "tool", "status", "output", "error", "reason")
        data: dict[str, Any] = {
            "status": self.status,
            "state": self.state,
            "calls": [{k: call.to_dict()[k] for k in keys} for call in self.calls],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.pending:
            data["pending"] = [approval.to_dict() for approval in self.pending]
        return data


def run_status(records: Sequence[CallRecord], awaiting: bool) -> RunStatus:
    """A run's status from its call records (``awaiting``: calls wait for a person):
    ``awaiting_approval``; ``failed`` when a call failed or was cancelled;
    ``partial`` when a latent call is pending or a call was skipped because a read it
    needs did not exist (a skipped untaken alternative is normal); else ``completed``."""
    if awaiting:
        return "awaiting_approval"  # the run is not over
    statuses = {record.status for record in records}
    if "failed" in statuses or "cancelled" in statuses:
        return "failed"
    if "pending_latent" in statuses:
        return "partial"
    if any(r.status == "skipped" and not r.untaken for r in records):
        return "partial"
    return "completed"
