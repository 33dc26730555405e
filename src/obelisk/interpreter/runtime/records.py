"""What a run leaves behind: call records and the run result (docs/semantics.md).

Shapes (``to_dict()``):

* :class:`CallRecord` ``{"index", "id", "tool", "status", "arguments", "output",
  "error", "reason", "started", "finished", "attempts", "warnings"}``; ``status`` is
  one of ``succeeded``, ``failed``, ``invalid_output`` (its tool ran and returned a
  value that does not fit its output schema, which was not written; docs/tools.md),
  ``skipped``, ``pending_latent``, ``cancelled``,
  ``awaiting_approval``, ``unknown`` (a durable run's call that was in flight at a
  crash, docs/durable.md);
  ``error`` is ``{"type", "message"}`` or ``null``; times are seconds since the epoch;
  ``warnings`` is a list of strings (a result written under
  ``output_validation="warn"`` that did not fit); a call of an execution loop's
  plan also has ``"revision"``, the revision it came from (docs/loop.md); a call of a
  run with labels has ``"labels"`` (its arguments' labels by name, each
  ``Label.to_dict()``, and its result's as ``"_result"``) and, when a policy asked
  or denied, ``"policy"`` ``{"action", "reason"}`` (docs/security.md).
* :class:`RunResult` ``{"status", "state", "calls", "diagnostics"}`` (the shape of
  ``obelisk run --json``, calls trimmed to ``index, id, tool, status, output,
  error, reason``, plus ``warnings`` for a call that has some); ``status`` is
  ``completed``, ``failed``, ``partial``, ``awaiting_approval`` or ``unknown``.
* :class:`UnknownCall` ``{"call", "label", "tool", "arguments", "idempotency_key",
  "started"}``.

Events are in :mod:`~obelisk.interpreter.runtime.events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.diagnostics import Diagnostic
from obelisk.errors import UsageError
from obelisk.grammar import Reference
from obelisk.interpreter.runtime.approvals import PendingApproval, argument_hash
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.labels import LabelMap
from obelisk.interpreter.tools.provenance import Origin, plan_reads, trace_back

__all__ = [
    "CallOutcome",
    "CallRecord",
    "CallStatus",
    "RunResult",
    "RunStatus",
    "UnknownCall",
    "idempotency_key",
    "run_status",
]

CallStatus = Literal[
    "waiting",
    "succeeded",
    "failed",
    "invalid_output",
    "skipped",
    "pending_latent",
    "cancelled",
    "awaiting_approval",
    "unknown",
]
RunStatus = Literal["completed", "failed", "partial", "awaiting_approval", "unknown"]


def idempotency_key(run_id: str, call: int, digest: str) -> str:
    """``"<run id>/<call index>/<first 16 hex digits of the argument hash>"``: the key
    a tool receives as ``Context.idempotency_key`` (docs/durable.md)."""
    return f"{run_id}/{call}/{digest[:16]}"


@dataclass(frozen=True, slots=True)
class UnknownCall:
    """A call of a durable run that was in flight when its process stopped: its
    tool may or may not have done its work, so it is not run again unless a person
    says so (``resume(..., unknown={call: Resolution...})``, docs/durable.md).

    ``call`` is its index, ``label`` its ``#3 charge`` name, ``arguments`` the
    resolved arguments it was started with, ``idempotency_key`` the key its tool
    was given, ``started`` when it started (seconds since the epoch)."""

    call: int
    label: str
    tool: str
    arguments: dict[str, Any]
    idempotency_key: str
    started: float | None

    @classmethod
    def lost(cls, run_id: str | None, record: CallRecord, arguments: dict[str, Any]) -> UnknownCall:
        """Call ``record.index``, whose remote worker was lost while it ran: its tool is
        neither pure nor idempotent, so nobody knows whether it did its work
        (docs/scale.md, "Failure semantics")."""
        digest = argument_hash(record.tool, record.arguments or arguments)
        key = idempotency_key(run_id or "", record.index, digest)
        return cls(record.index, record.label, record.tool, dict(arguments), key, record.started)

    def to_dict(self) -> dict[str, Any]:
        """``{"call", "label", "tool", "arguments", "idempotency_key", "started"}``."""
        return {
            "call": self.call,
            "label": self.label,
            "tool": self.tool,
            "arguments": self.arguments,
            "idempotency_key": self.idempotency_key,
            "started": self.started,
        }


@dataclass(slots=True, eq=False, repr=False)
class _CallFields:
    """A :class:`CallRecord`'s fields and constructor; ``output`` here is the slot
    that holds an output no write log entry holds (:attr:`CallRecord.output`)."""

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
    warnings: tuple[str, ...] = ()
    revision: int | None = None
    labels: dict[str, Any] | None = None
    policy: dict[str, Any] | None = None


_held_output: Any = vars(_CallFields)["output"]  # the slot, which CallRecord.output hides


class CallRecord(_CallFields):
    """What happened to one call.  ``arguments`` are the resolved arguments it ran
    with; ``error`` keeps the error even when it went to the error arm (docs/language.md),
    and the :class:`~obelisk.errors.OutputValidationError` of an ``invalid_output``
    call.  ``warnings`` holds what the run noticed but let pass: a result that did not
    fit its output schema, written under ``output_validation="warn"`` (docs/tools.md).
    ``untaken`` is true for a call skipped only because it reads an alternative
    that was not taken: the plan's normal branching, not a missing read.
    ``revision`` is the revision of an execution loop's plan the call came from
    (docs/loop.md, "How a plan evolves"); ``None`` outside a loop."""

    __slots__ = ("_written",)
    _written: WriteEntry | None

    @property
    def output(self) -> Any:
        """The call's result as JSON data (``None`` until it has one).  Once its
        writes commit, the same object as its first write log entry's ``value``,
        decoded when first read."""
        entry = self._written
        return entry.value if entry is not None else _held_output.__get__(self)

    @output.setter
    def output(self, value: Any) -> None:
        _held_output.__set__(self, value)
        self._written = None

    def output_from(self, entry: WriteEntry) -> None:
        """Take ``entry``'s value as the output, without reading it now."""
        _held_output.__set__(self, None)
        self._written = entry

    def replayed(self, outcome: CallOutcome) -> None:
        """Take what ``outcome`` says the call did (a resumed run replays it); a call
        that did not succeed takes its status too (it succeeds when its writes commit)."""
        self.output, self.error, self.warnings = outcome.output, outcome.error, outcome.warnings
        self.attempts, (self.started, self.finished) = outcome.attempts, outcome.times
        if not outcome.succeeded:
            self.status = outcome.status

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallRecord):
            return NotImplemented
        return (self.to_dict(), self.untaken) == (other.to_dict(), other.untaken)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"CallRecord(index={self.index!r}, id={self.id!r}, tool={self.tool!r}, "
            f"status={self.status!r}, arguments={self.arguments!r}, output={self.output!r}, "
            f"error={self.error!r}, reason={self.reason!r}, started={self.started!r}, "
            f"finished={self.finished!r}, attempts={self.attempts!r}, untaken={self.untaken!r}, "
            f"warnings={self.warnings!r})"
        )

    @property
    def label(self) -> str:
        """``#3 issueRefund`` (plus the ``_id`` in parentheses when there is one)."""
        base = f"#{self.index} {self.tool}"
        return base if self.id is None else f"{base} ({self.id})"

    def to_dict(self) -> dict[str, Any]:
        """The shape in the module docstring, plus ``"revision"`` when it is set."""
        data = {
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
            "warnings": list(self.warnings),
        }
        if self.revision is not None:  # a call of a loop's plan (docs/loop.md)
            data["revision"] = self.revision
        if self.labels is not None:  # a run with labels (docs/security.md)
            data["labels"] = self.labels
        if self.policy is not None:
            data["policy"] = self.policy
        return data


@dataclass(frozen=True, slots=True, init=False)
class CallOutcome:
    """What a call that ran did, kept so that a resumed run replays it instead of
    running it again: whether it succeeded, the writes it made (``(reference,
    value)`` pairs, the error arm's included), and its record's ``output``,
    ``error``, ``attempts`` and ``(started, finished)`` times (seconds since the epoch).
    ``invalid_output`` is true for a call whose tool ran and returned a value that did
    not fit (status ``invalid_output``; ``succeeded`` is then false): a resumed run
    replays it, never runs it again.  ``warnings`` are its record's; ``labels`` the
    field labels of a :class:`~obelisk.Labeled` result (``None``: none)."""

    succeeded: bool
    writes: tuple[tuple[Reference, Any], ...]
    output: Any
    error: dict[str, Any] | None
    attempts: int
    times: tuple[float | None, float | None]
    invalid_output: bool
    warnings: tuple[str, ...]
    labels: Any

    def __init__(
        self,
        succeeded: bool,
        writes: tuple[tuple[Reference, Any], ...],
        output: Any,
        error: dict[str, Any] | None,
        attempts: int,
        times: tuple[float | None, float | None],
        invalid_output: bool = False,
        warnings: tuple[str, ...] = (),
        labels: Any = None,
    ) -> None:
        # the dataclass's own __init__, with the slots' setters instead of
        # object.__setattr__ (which looks each name up): the engine makes one per call
        _outcome_setters[0](self, succeeded)
        _outcome_setters[1](self, writes)
        _outcome_setters[2](self, output)
        _outcome_setters[3](self, error)
        _outcome_setters[4](self, attempts)
        _outcome_setters[5](self, times)
        _outcome_setters[6](self, invalid_output)
        _outcome_setters[7](self, warnings)
        _outcome_setters[8](self, labels)

    @classmethod
    def of(
        cls, record: CallRecord, succeeded: bool, writes: Sequence[Any], labels: Any = None
    ) -> CallOutcome:
        """What ``record``'s call did, with ``writes`` (``(reference, value)`` pairs)
        and ``labels`` (what a run with labels keeps for a replay, docs/security.md)."""
        return cls(
            succeeded,
            tuple(writes),
            record.output,
            record.error,
            record.attempts,
            (record.started, record.finished),
            record.status == "invalid_output",
            record.warnings,
            labels,
        )

    @property
    def status(self) -> CallStatus:
        """``succeeded``, ``invalid_output`` or ``failed``: the status it replays as."""
        if self.succeeded:
            return "succeeded"
        return "invalid_output" if self.invalid_output else "failed"


_outcome_setters = tuple(
    vars(CallOutcome)[name].__set__
    for name in (
        "succeeded",
        "writes",
        "output",
        "error",
        "attempts",
        "times",
        "invalid_output",
        "warnings",
        "labels",
    )
)


@dataclass(frozen=True, slots=True, repr=False)
class RunResult:
    """The outcome of :func:`obelisk.run`.

    ``state`` is the final shared state document; ``documents`` every writable
    document by kind (``state`` and data kinds); ``instances`` the state each
    instance sees; ``log`` the write log in commit order.  With ``status ==
    "awaiting_approval"`` the run is paused: ``pending`` lists the calls waiting
    for a person (:class:`~obelisk.interpreter.runtime.approvals.PendingApproval`),
    and :func:`obelisk.resume` continues it.  With ``status == "unknown"`` (a durable
    run resumed after a crash) ``unknown`` lists the calls whose outcome is unknown,
    which wait for a person's :class:`~obelisk.Resolution` (docs/durable.md).
    ``outcomes`` keeps what each call that ran did, and ``origin`` what the run was
    started with, for resuming.  ``run_id`` names the run (in its journal, for a
    durable run; ``journal`` is then the journal file's path).  ``labels``: the
    :class:`~obelisk.interpreter.tools.labels.LabelMap` of the state's labels, per
    path, when the run kept labels (``None`` otherwise; docs/security.md).
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
    run_id: str | None = None
    unknown: tuple[UnknownCall, ...] = ()
    journal: str | None = None
    plan: Any = field(default=None, compare=False)
    labels: LabelMap | None = field(default=None, compare=False)

    def provenance(self, path: str) -> list[Origin]:
        """The calls and inputs the value at ``path`` (``"†state.paid"``) came from,
        with their labels: :class:`~obelisk.interpreter.tools.provenance.Origin` s,
        breadth first from the call that wrote it (docs/security.md, "Provenance").
        Labels are those of a run with labels (else trusted).  Raises
        :class:`~obelisk.errors.UsageError` for a result without its plan and
        :class:`~obelisk.errors.ReferenceSyntaxError` for a bad path."""
        if self.plan is None:
            raise UsageError("this result does not keep its plan: no provenance")
        writes = [(entry.call, entry.path, entry.method) for entry in self.log]
        names = {call.index: call.label for call in self.calls}
        labels = {call.index: call.labels for call in self.calls if call.labels}
        return trace_back(path, writes, plan_reads(self.plan), names, labels)

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
        the run awaits approval, ``"unknown": [UnknownCall.to_dict(), ...]`` while
        calls' outcomes are unknown, and ``"run_id"`` and ``"journal"`` for a durable
        run."""
        keys = ("index", "id", "tool", "status", "output", "error", "reason")
        calls = []
        for call in self.calls:
            whole = call.to_dict()
            trimmed = {k: whole[k] for k in keys}
            if call.warnings:
                trimmed["warnings"] = whole["warnings"]
            for extra in ("labels", "policy"):  # a run with labels (docs/security.md)
                if extra in whole:
                    trimmed[extra] = whole[extra]
            calls.append(trimmed)
        data: dict[str, Any] = {
            "status": self.status,
            "state": self.state,
            "calls": calls,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.pending:
            data["pending"] = [approval.to_dict() for approval in self.pending]
        if self.unknown:
            data["unknown"] = [call.to_dict() for call in self.unknown]
        if self.journal is not None:
            data["run_id"], data["journal"] = self.run_id, self.journal
        return data


def run_status(records: Sequence[CallRecord], awaiting: bool, unknown: bool = False) -> RunStatus:
    """A run's status from its call records (``awaiting``: calls wait for a person;
    ``unknown``: calls whose outcome is unknown wait for a resolution):
    ``awaiting_approval``; ``unknown``; ``failed`` when a call failed, returned an
    output that was not written (``invalid_output``) or was cancelled;
    ``partial`` when a latent call is pending or a call was skipped because a read it
    needs did not exist (a skipped untaken alternative is normal); else ``completed``."""
    if awaiting:
        return "awaiting_approval"  # the run is not over
    if unknown:
        return "unknown"  # nor is this one
    statuses = {record.status for record in records}
    if "failed" in statuses or "invalid_output" in statuses or "cancelled" in statuses:
        return "failed"
    if "pending_latent" in statuses:
        return "partial"
    if any(r.status == "skipped" and not r.untaken for r in records):
        return "partial"
    return "completed"
