"""What the execution loop leaves behind: turns and the loop result (docs/loop.md).

Shapes (``to_dict()``):

* :class:`Turn` ``{"turn", "request", "solution", "raw", "state_diff", "errors",
  "usage", "timings", "delegated"}``: ``request`` is the request sent
  (:meth:`~obelisk.interpreter.loop.messages.Request.to_data`); ``solution`` the
  answer, or ``null`` when it was not a solution (then ``raw`` holds its text);
  ``state_diff`` the write-log entries the turn committed; ``errors`` the error
  records fed to the next turn; ``usage`` token counts or ``null``; ``timings``
  ``{"model", "run", "total"}`` in seconds; ``delegated`` one summary per
  sub-request ``{"call", "kind", "answers", "output"}``.
* :class:`LoopResult` ``{"status", "output", "state", "turns"}``; ``status`` is
  ``completed`` (the model gave a valid output), ``awaiting_approval`` (calls
  wait for a person; ``"pending"`` lists them), ``budget_exceeded``,
  ``corrections_exceeded`` or ``stopped`` (model failure).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.interpreter.loop.messages import ErrorMessage, Request, Solution, message_data
from obelisk.interpreter.loop.revisions import Revision
from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.events import Event
from obelisk.interpreter.runtime.records import RunResult
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.labels import LabelMap

__all__ = ["LoopResult", "LoopStatus", "Turn", "TurnFinished", "TurnStarted"]

LoopStatus = Literal[
    "completed", "awaiting_approval", "budget_exceeded", "corrections_exceeded", "stopped"
]


@dataclass(slots=True)
class Turn:
    """One request and what came of it (see the module docstring for the shape)."""

    index: int
    request: Request
    solution: Solution | None = None
    raw: str | None = None
    entries: list[WriteEntry] = field(default_factory=list)
    errors: list[ErrorMessage] = field(default_factory=list)
    usage: dict[str, int] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    run: RunResult | None = None
    delegated: list[dict[str, Any]] = field(default_factory=list)

    def answer(self) -> dict[str, Any]:
        """The model's answer as a replayable record: ``{"solution": ...}`` or
        ``{"raw": text}`` for an answer that was not a solution."""
        if self.solution is None and self.raw is not None:
            return {"raw": self.raw}
        return {"solution": None if self.solution is None else self.solution.to_data()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.index,
            "request": self.request.to_data(),
            "solution": None if self.solution is None else self.solution.to_data(),
            "raw": self.raw,
            "state_diff": [entry.to_dict() for entry in self.entries],
            "errors": [message_data(e) for e in self.errors],
            "usage": self.usage,
            "timings": self.timings,
            "delegated": self.delegated,
        }


@dataclass(slots=True, repr=False)
class LoopResult:
    """The outcome of an execution loop.

    ``output``: the final answer (validated against the caller's output schema),
    or ``None`` when the loop stopped without one.  ``state``: the final shared
    state; ``instances``: the state each instance sees; ``log``: every write of
    every turn; ``turns``: one :class:`Turn` per request, in order.  With
    ``status == "awaiting_approval"``, ``pending`` lists the calls waiting for a
    person and ``Loop.resume(result, decisions)`` goes on (docs/approvals.md);
    ``origin`` is the loop session that resume continues.  ``run_id`` names a
    durable loop's run in its journal (``Loop(journal=...)``, docs/durable.md).
    ``revisions``: every :class:`~obelisk.interpreter.loop.revisions.Revision` of the
    plan, in order (revision 0 is the plan given to ``Loop.run``), each with its diff
    against the one before (docs/loop.md, "How a plan evolves").  ``labels``: the
    labels of the final state, per path, when the loop kept labels (docs/security.md).
    """

    status: LoopStatus
    output: Any
    state: dict[str, Any]
    turns: list[Turn]
    log: list[WriteEntry] = field(default_factory=list)
    instances: dict[str, Any] = field(default_factory=dict)
    pending: tuple[PendingApproval, ...] = ()
    origin: Any = field(default=None, compare=False)
    run_id: str | None = None
    revisions: list[Revision] = field(default_factory=list)
    labels: LabelMap | None = field(default=None, compare=False, repr=False)

    @property
    def usage(self) -> dict[str, int]:
        """Token counts summed over the turns (``{}`` when the model reported none)."""
        total: dict[str, int] = {}
        for turn in self.turns:
            for key, value in (turn.usage or {}).items():
                total[key] = total.get(key, 0) + value
        return total

    def __repr__(self) -> str:
        return (
            f"LoopResult(status={self.status!r}, turns={len(self.turns)}, "
            f"output={self.output!r:.60}, writes={len(self.log)})"
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "output", "state", "turns": [turn, ...], "revisions": [revision,
        ...]}`` (``obelisk loop --json``; a revision is ``{"revision", "turn", "calls",
        "diff"}``), with ``"pending": [{"id", "call", "label", "tool", "arguments",
        "hash"}]`` while calls await approval."""
        data = {
            "status": self.status,
            "output": self.output,
            "state": self.state,
            "turns": [turn.to_dict() for turn in self.turns],
            "revisions": [revision.to_dict() for revision in self.revisions],
        }
        if self.pending:
            data["pending"] = [approval.to_dict() for approval in self.pending]
        if self.run_id is not None:
            data["run_id"] = self.run_id
        return data

    def answers(self) -> list[dict[str, Any]]:
        """Every answer the model gave, in the order it was asked: each turn's, then
        its sub-requests' (latent calls, delegates, recursively)."""
        found: list[dict[str, Any]] = []
        for turn in self.turns:
            found.append(turn.answer())
            for entry in turn.delegated:
                found.extend(entry.get("answers", ()))
        return found

    def to_jsonl(self) -> str:
        """One JSON line per turn (the :class:`Turn` shape, plus ``"revision"``: the
        revision its answer made, or ``null``), each followed by one line
        ``{"subrequest": <call>, "solution" | "raw"}`` per sub-request answer.
        ``ScriptedModel.from_jsonl`` replays it (sub-requests of parallel delegates
        replay in the order they were recorded)."""
        lines = []
        made = {revision.turn: revision for revision in self.revisions if revision.turn}
        for turn in self.turns:
            revision = made.get(turn.index)
            record = {**turn.to_dict(), "revision": revision and revision.to_dict()}
            lines.append(json.dumps(record, ensure_ascii=False, default=str))
            for entry in turn.delegated:
                for answer in entry.get("answers", ()):
                    record = {"subrequest": entry["call"], **answer}
                    lines.append(json.dumps(record, ensure_ascii=False, default=str))
        return "".join(line + "\n" for line in lines)


@dataclass(frozen=True, slots=True)
class TurnStarted(Event):
    """A loop sends request number ``turn`` (``depth`` > 0 inside a delegate)."""

    turn: int
    depth: int

    @property
    def event(self) -> str:
        return "turn_started"


@dataclass(frozen=True, slots=True)
class TurnFinished(Event):
    """Turn ``turn`` is over: ``calls`` the answer held, ``errors`` the error records
    it leaves for the next request, ``usage`` the model's token counts (or ``None``)."""

    turn: int
    depth: int
    calls: int
    errors: int
    usage: dict[str, int] | None

    @property
    def event(self) -> str:
        return "turn_finished"
