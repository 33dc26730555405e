"""What a run leaves behind: call records, the run result and typed events (DESIGN §2.5).

Shapes (``to_dict()``):

* :class:`CallRecord` ``{"index", "id", "tool", "status", "arguments", "output",
  "error", "reason", "started", "finished", "attempts"}``; ``status`` is one of
  ``succeeded``, ``failed``, ``skipped``, ``pending_latent``, ``cancelled``;
  ``error`` is ``{"type", "message"}`` or ``null``; times are seconds since the epoch.
* :class:`RunResult` ``{"status", "state", "calls", "diagnostics"}`` (the shape of
  ``obelisk run --json``, calls trimmed to ``index, id, tool, status, output,
  error, reason``); ``status`` is ``completed``, ``failed`` or ``partial``.
* Events ``{"event", "time", ...}`` with ``event`` one of ``run_started``,
  ``call_ready``, ``call_started``, ``call_succeeded``, ``call_failed``,
  ``call_skipped``, ``state_written``, ``run_finished``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.errors import Diagnostic
from obelisk.interpreter.state import WriteEntry

__all__ = [
    "CallFailed",
    "CallReady",
    "CallRecord",
    "CallSkipped",
    "CallStarted",
    "CallStatus",
    "CallSucceeded",
    "Event",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RunStatus",
    "StateWritten",
]

CallStatus = Literal["waiting", "succeeded", "failed", "skipped", "pending_latent", "cancelled"]
RunStatus = Literal["completed", "failed", "partial"]


@dataclass(slots=True)
class CallRecord:
    """What happened to one call.  ``arguments`` are the resolved arguments it ran
    with; ``error`` keeps the error even when it went to the error arm (§1.3)."""

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


@dataclass(frozen=True, slots=True, repr=False)
class RunResult:
    """The outcome of :func:`obelisk.run`.

    ``state`` is the final shared state document; ``documents`` every writable
    document by kind (``state`` and data kinds); ``instances`` the state each
    instance sees; ``log`` the write log in commit order.
    """

    status: RunStatus
    state: dict[str, Any]
    calls: tuple[CallRecord, ...]
    log: tuple[WriteEntry, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    documents: dict[str, Any] = field(default_factory=dict)
    instances: dict[str, Any] = field(default_factory=dict)

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
        """``{"status", "state", "calls": [...], "diagnostics": [...]}``."""
        keys = ("index", "id", "tool", "status", "output", "error", "reason")
        return {
            "status": self.status,
            "state": self.state,
            "calls": [{k: call.to_dict()[k] for k in keys} for call in self.calls],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass(frozen=True, slots=True)
class Event:
    """Base of the typed events; ``time`` is seconds since the epoch."""

    time: float

    @property
    def event(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.event}
        for name in self.__slots__:
            data[name] = getattr(self, name)
        data["time"] = self.time
        return data


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    calls: int

    @property
    def event(self) -> str:
        return "run_started"


@dataclass(frozen=True, slots=True)
class CallReady(Event):
    call: int
    tool: str

    @property
    def event(self) -> str:
        return "call_ready"


@dataclass(frozen=True, slots=True)
class CallStarted(Event):
    call: int
    tool: str
    arguments: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_started"


@dataclass(frozen=True, slots=True)
class CallSucceeded(Event):
    call: int
    tool: str
    output: Any

    @property
    def event(self) -> str:
        return "call_succeeded"


@dataclass(frozen=True, slots=True)
class CallFailed(Event):
    call: int
    tool: str
    error: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_failed"


@dataclass(frozen=True, slots=True)
class CallSkipped(Event):
    call: int
    tool: str
    reason: str

    @property
    def event(self) -> str:
        return "call_skipped"


@dataclass(frozen=True, slots=True)
class StateWritten(Event):
    entry: WriteEntry

    @property
    def event(self) -> str:
        return "state_written"

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, **self.entry.to_dict()}


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    status: RunStatus

    @property
    def event(self) -> str:
        return "run_finished"
