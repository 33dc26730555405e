"""What a run journal stores, and how it is read back (docs/durable.md).

JSON in the journal (:func:`dump`, :func:`dump_written`, :func:`load`, :func:`canonical`
for hashes), the lock's view of processes (:func:`holder_alive`), and the records read back:
:class:`RunRow` (a run), :class:`Intent` and :class:`Progress` (what a run did).
:mod:`~obelisk.interpreter.runtime.durable.store` writes them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import to_json

from obelisk.errors import JournalCorrupted, JournalError, ObeliskError
from obelisk.interpreter.runtime.approvals import Decision, PendingApproval, argument_hash
from obelisk.interpreter.runtime.records import CallOutcome, idempotency_key
from obelisk.interpreter.runtime.settings import DEFAULT_CONCURRENCY, RunSettings
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.labels import Label
from obelisk.limits import Limits

__all__ = [
    "FINAL_EVENTS",
    "FINISHED",
    "LEASE",
    "Intent",
    "Progress",
    "RunRow",
    "canonical",
    "clipped",
    "dump",
    "dump_written",
    "holder",
    "holder_alive",
    "label",
    "load",
    "me",
    "never_again",
    "outcome_row",
    "plan_calls",
    "run_settings",
    "settings_of",
]

FINISHED = frozenset({"completed", "failed", "partial", "aborted"})
"""Run statuses after which a run cannot be resumed (``retry="failed"`` takes a
``failed`` one up again; an ``aborted`` one never)."""
LEASE = 60.0
"""Seconds after which a lock held by a process on another host, whose heartbeat
stopped, counts as abandoned (a process on this host is checked directly)."""


# -- JSON in the journal ------------------------------------------------------------


class _NotJSON(Exception):
    pass


def _refuse(value: Any) -> Any:
    raise _NotJSON(type(value).__qualname__)


def dump(value: Any, what: str = "a value") -> str:
    """``value`` as compact JSON text for the journal (NaN and infinities as
    ``NaN``/``Infinity``, lone surrogates escaped).  Raises :class:`JournalError`
    for a value that is not JSON data (``what`` names it)."""
    try:
        return to_json(value, inf_nan_mode="constants", fallback=_refuse).decode()
    except _NotJSON as exc:
        raise JournalError(f"{what} cannot be journaled: {exc.args[0]} is not JSON data") from None
    except Exception:  # lone surrogates, which UTF-8 cannot hold: escape them
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=True)
        except (TypeError, ValueError) as exc:
            raise JournalError(f"{what} cannot be journaled: {exc}") from None


def dump_written(entry: WriteEntry, what: str = "a value") -> str:
    """A write log entry's value as :func:`dump` writes it.  An entry that keeps its
    value as JSON text (a tool's result, which is JSON data without NaN or
    infinities) gives that text, which is what :func:`dump` would write again, and
    its value is not decoded for it.  Raises :class:`JournalError` as :func:`dump`
    does, for an entry without JSON text whose value is not JSON data."""
    text = entry.json
    if text is not None:
        return text.decode()
    return dump(entry.value, what)


def load(text: Any, where: str) -> Any:
    """The JSON value of a journal column; :class:`JournalCorrupted` when it is not
    JSON (``where`` names the record)."""
    if text == "null":  # the common case of an empty column, without the decoder
        return None
    if not isinstance(text, (str, bytes)):
        raise JournalCorrupted(f"the journal's {where} is not JSON text")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise JournalCorrupted(f"the journal's {where} is not JSON: {exc}") from None


def canonical(value: Any) -> str:
    """JSON text with sorted keys and no spaces, ASCII only: what fingerprints hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)


def clipped(text: str, width: int = 300) -> str:
    """A database driver's message, which may quote a whole column, cut to ``width``
    characters."""
    return text if len(text) <= width else f"{text[: width - 24]}... ({len(text):,} characters)"


def never_again(run_id: str, status: str, reason: str | None, by: str | None) -> str | None:
    """Why a run can never be locked again (aborted, or replaced), ``None`` if it can."""
    if status == "aborted":
        return f"run {run_id!r} was aborted ({reason}): an aborted run is never resumed"
    if by is not None:
        return f"run {run_id!r} was replaced by run {by!r}: it is never resumed"
    return None


# -- processes and the lock -----------------------------------------------------------


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or
    ``None`` where that cannot be read; ``"zombie"`` for a process that has exited."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    if fields and fields[0] in ("Z", "X"):
        return "zombie"
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def me() -> dict[str, Any]:
    pid = os.getpid()
    return {
        "pid": pid,
        "host": socket.gethostname(),
        "start": _process_start(pid),
        "token": uuid.uuid4().hex,
        "since": time.time(),
    }


def holder_alive(owner: Mapping[str, Any], heartbeat: float | None) -> bool:
    """Whether the process named by ``owner`` still holds its lock."""
    if owner.get("host") != socket.gethostname():
        return heartbeat is not None and time.time() - heartbeat < LEASE
    pid = owner.get("pid")
    if not isinstance(pid, int) or not _alive(pid):
        return False
    start = _process_start(pid)
    if start == "zombie":
        return False
    return start is None or owner.get("start") is None or start == owner.get("start")


def holder(owner: Mapping[str, Any]) -> str:
    since = owner.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if since else "?"
    return f"process {owner.get('pid')} on {owner.get('host')} (since {when})"


def run_settings(settings: RunSettings) -> dict[str, Any]:
    """The settings a durable run keeps (``runs.settings``), for its resumes (its
    ``context`` is not kept: a resume is given its own)."""
    kept: dict[str, Any] = {
        "concurrency": settings.concurrency,
        "fail_fast": settings.fail_fast,
        "timeout": settings.timeout,
        "limits": dataclasses.asdict(settings.limits),
        "output_validation": settings.output_validation,
    }
    if settings.policy != "off" or settings.input_labels:  # docs/security.md
        kept["policy"] = settings.policy
        kept["input_labels"] = [[path, label.to_dict()] for path, label in settings.input_labels]
    return kept


def settings_of(saved: Mapping[str, Any], context: Any = None) -> RunSettings:
    """A durable run's :class:`RunSettings` from what its journal keeps
    (:func:`run_settings`; ``strict`` output validation for a run journaled before it
    was kept), with ``context``.  Raises :class:`JournalCorrupted` for damaged ones."""
    try:
        return RunSettings(
            concurrency=int(saved.get("concurrency", DEFAULT_CONCURRENCY)),
            fail_fast=bool(saved.get("fail_fast", False)),
            timeout=saved.get("timeout"),
            limits=Limits(**saved.get("limits", {})),
            output_validation=saved.get("output_validation", "strict"),
            context=context,
            policy=saved.get("policy", "off"),
            input_labels=tuple(
                (str(path), Label.from_dict(label)) for path, label in saved.get("input_labels", ())
            ),
        )
    except (TypeError, ValueError, ObeliskError) as exc:
        raise JournalCorrupted(f"the journal's run settings are damaged: {exc}") from None


class RunRow:
    """One run as the journal holds it (see :meth:`Journal.run_row`): decoded JSON.
    ``reason`` is why an aborted run was aborted, ``replaces`` and ``replaced_by`` the
    runs that replace each other (``None``: none)."""

    __slots__ = (
        "calls",
        "created",
        "data",
        "fingerprint",
        "input",
        "kind",
        "parent",
        "pinned",
        "plan",
        "reason",
        "replaced_by",
        "replaces",
        "run_id",
        "settings",
        "state",
        "status",
        "updated",
    )

    def __init__(self, row: Sequence[Any]) -> None:
        run_id = row[0]
        where = f"run {run_id!r}"
        (
            self.run_id,
            self.kind,
            self.status,
            self.created,
            self.updated,
            self.calls,
            self.fingerprint,
        ) = row[:7]
        self.pinned = load(row[7], f"{where} pins")
        self.plan = load(row[8], f"{where} plan")
        self.input = load(row[9], f"{where} input")
        self.state = load(row[10], f"{where} state")
        self.data = load(row[11], f"{where} data")
        self.settings = load(row[12], f"{where} settings")
        self.parent = row[13]
        self.reason, self.replaces, self.replaced_by = row[14:17]
        if not isinstance(self.pinned, dict) or not isinstance(self.settings, dict):
            raise JournalCorrupted(f"the journal's {where} has no pins or settings")


FINAL_EVENTS = {
    "call_succeeded": "succeeded",
    "call_failed": "failed",
    "call_invalid_output": "invalid_output",
    "call_skipped": "skipped",
    "call_cancelled": "cancelled",
    "call_pending_latent": "pending_latent",
}


def label(index: int, tool: Any, call_id: Any) -> str:
    base = f"#{index} {tool}"
    return base if call_id is None else f"{base} ({call_id})"


def plan_calls(plan: Any) -> list[dict[str, Any]]:
    """The call objects of a journaled plan (any of the three plan shapes)."""
    calls = plan
    if isinstance(plan, dict):
        calls = plan.get("calls", plan.get("plan"))
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise JournalCorrupted("the journal's plan is not a list of call objects")
    return calls


class Intent:
    """A journaled intent: the tool a call was started with, its resolved
    ``arguments`` and when (``time``, seconds since the epoch).  ``hash`` is their
    :func:`~obelisk.interpreter.runtime.approvals.argument_hash`."""

    __slots__ = ("_arguments", "_text", "_where", "time", "tool")

    def __init__(
        self, tool: str, arguments: str | dict[str, Any], at: float, where: str = ""
    ) -> None:
        self.tool, self.time, self._where = tool, at, where
        self._arguments: dict[str, Any] | None = None
        self._text: str | None = None
        if isinstance(arguments, dict):
            self._arguments = arguments
        else:
            self._text = arguments

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments, decoded when first asked for (a resume of a long run needs
        only those of the calls in flight).  Raises :class:`JournalCorrupted`."""
        if self._arguments is None:
            decoded = load(self._text, self._where)
            if not isinstance(decoded, dict):
                raise JournalCorrupted(f"the journal's {self._where} is damaged")
            self._arguments = decoded
        return self._arguments

    @property
    def hash(self) -> str:
        return argument_hash(self.tool, self.arguments)

    def key(self, run_id: str, index: int) -> str:
        """The call's idempotency key (``Context.idempotency_key``)."""
        return idempotency_key(run_id, index, self.hash)


class Progress:
    """What a run did, read back from the journal: ``intents`` and ``outcomes`` by
    call index (outcomes' writes as ``(path text, value)`` pairs; ``warnings`` by call
    index, from the calls' events; ``labels`` by call index, a Labeled result's
    field labels), ``approvals`` (every one asked for, with its
    decision, by id) and ``waiting`` (calls whose approval is undecided)."""

    def __init__(
        self,
        run_id: str,
        intents: Sequence[Sequence[Any]],
        outcomes: Sequence[Sequence[Any]],
        approvals: Sequence[Sequence[Any]],
        warnings: Mapping[int, tuple[str, ...]] | None = None,
        labels: Mapping[int, Any] | None = None,
    ) -> None:
        where = f"run {run_id!r}"
        self.intents: dict[int, Intent] = {}
        for call, tool, arguments, at in intents:
            if not isinstance(call, int) or not isinstance(arguments, str):
                raise JournalCorrupted(f"the journal's {where} has a damaged intent")
            self.intents[call] = Intent(tool, arguments, at, f"{where} intent of call {call}")
        self.outcomes: dict[int, CallOutcome] = {}
        self.paths: dict[int, list[str]] = {}
        self._labels = labels or {}
        self._read_outcomes(where, outcomes, warnings or {})
        self.approvals: dict[str, PendingApproval] = {}
        self.decisions: dict[str, Decision] = {}
        self.waiting: set[int] = set()
        self._read_approvals(where, approvals)

    def _read_outcomes(
        self,
        where: str,
        outcomes: Sequence[Sequence[Any]],
        noted: Mapping[int, tuple[str, ...]],
    ) -> None:
        """Fill ``outcomes`` and ``paths`` from the ``outcomes`` rows."""
        for call, ok, writes, output, error, attempts, started, finished in outcomes:
            label = f"{where} outcome of call {call}"
            pairs = load(writes, label)
            if not isinstance(call, int) or not isinstance(pairs, list):
                raise JournalCorrupted(f"the journal's {label} is damaged")
            decoded_error = load(error, label)
            if decoded_error is not None and not isinstance(decoded_error, dict):
                raise JournalCorrupted(f"the journal's {label} has a damaged error")
            self.paths[call] = [pair[0] for pair in pairs]
            self.outcomes[call] = CallOutcome(
                ok == SUCCEEDED,
                tuple((pair[0], pair[1]) for pair in pairs),  # paths: resolved by the caller
                load(output, label),
                decoded_error,
                int(attempts),
                (started, finished),
                ok == INVALID_OUTPUT,
                noted.get(call, ()),
                self._labels.get(call),
            )

    def _read_approvals(self, where: str, approvals: Sequence[Sequence[Any]]) -> None:
        """Fill ``approvals``, ``decisions`` and ``waiting`` from the ``approvals`` rows."""
        for approval_id, call, label, tool, arguments, digest, decision in approvals:
            decoded = load(arguments, f"{where} approval {approval_id}")
            self.approvals[approval_id] = PendingApproval(
                approval_id, call, label, tool, decoded, digest
            )
            if decision is None:
                self.waiting.add(call)
                continue
            stored = load(decision, f"{where} decision {approval_id}")
            if not isinstance(stored, dict) or stored.get("action") not in (
                "accept",
                "reject",
                "edit",
            ):
                raise JournalCorrupted(f"the journal's {where} decision {approval_id} is damaged")
            self.decisions[approval_id] = Decision(
                stored["action"], stored.get("reason"), stored.get("plan")
            )


SUCCEEDED, FAILED, INVALID_OUTPUT = 1, 0, 2
"""The ``succeeded`` column of an outcome: it succeeded, it failed, or its tool ran and
returned an output that did not fit (``invalid_output``: settled, never run again)."""


def outcome_row(run_id: str, index: int, outcome: CallOutcome) -> tuple[Any, ...]:
    """The ``outcomes`` row of a call's outcome (writes as ``[path text, value]``;
    ``succeeded`` is :data:`SUCCEEDED`, :data:`FAILED` or :data:`INVALID_OUTPUT`)."""
    writes = [[str(target), value] for target, value in outcome.writes]
    ok = SUCCEEDED if outcome.succeeded else INVALID_OUTPUT if outcome.invalid_output else FAILED
    return (
        run_id,
        index,
        ok,
        dump(writes, "a call's writes"),
        dump(outcome.output, "a call's output"),
        dump(outcome.error, "a call's error"),
        outcome.attempts,
        outcome.times[0],
        outcome.times[1],
    )
