"""Journaling a run as it goes: :class:`RunWriter` (docs/durable.md)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

from obelisk.errors import JournalError
from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.durable.backend import Backend
from obelisk.interpreter.runtime.durable.data import dump, dump_written, outcome_row
from obelisk.interpreter.runtime.durable.store import HEARTBEAT, Store
from obelisk.interpreter.runtime.hooks import Observer
from obelisk.interpreter.runtime.records import CallOutcome, CallRecord
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["RunWriter"]

_APPROVAL_COLUMNS = ("run_id", "id", "call", "label", "tool", "arguments", "hash", "requested")


class RunWriter(Observer):
    """Journals one run as it goes: an
    :class:`~obelisk.interpreter.runtime.hooks.Observer` of the engine (``durable``).

    Rows are buffered and committed together once per turn of the event loop
    (``loop.call_soon``), and at once when a tool is about to run whose intent is
    not committed yet (:meth:`invoking`): so every tool that runs has a durable
    intent, and a busy run commits a few times per batch of calls, not once per row.
    A commit that fails (a full disk, a damaged file) is kept: every later commit,
    :meth:`invoking` included, raises that :class:`~obelisk.errors.JournalError`
    again, so no tool starts without a durable intent and the run stops with that one
    error; a commit deferred to the event loop never raises into it.
    With ``synchronous="full"``, a commit that holds intents of calls with side
    effects (neither ``pure`` nor ``idempotent``) is synced to disk.

    ``session`` numbers the process's turn at the run (0 for the first run, 1 for
    the first resume...); ``committed`` are the calls an earlier session committed,
    which this one replays: their writes and events are not journaled again.  So the
    write log, ordered by session and then seq, is in commit order: a call committed
    before a crash never waits for one committed after it.  A heartbeat marks the
    lock as alive every :data:`HEARTBEAT` seconds.
    """

    def __init__(
        self,
        journal: Store,
        run_id: str,
        session: int = 0,
        committed: frozenset[int] = frozenset(),
    ) -> None:
        self.journal, self.run_id, self.session = journal, run_id, session
        self.before = committed
        self._n = journal.next_event(run_id)
        self._intents: list[tuple[Any, ...]] = []
        self._outcomes: list[tuple[Any, ...]] = []
        self._writes: list[tuple[Any, ...]] = []
        self._events: list[tuple[Any, ...]] = []
        self._approvals: list[tuple[Any, ...]] = []
        self._unsynced: set[int] = set()
        self._effects = False  # an unsynced intent has side effects
        self._started: set[int] = set()  # calls with an intent in this run
        self._invoked: set[int] = set()  # calls whose tool was called in this run
        self._settled: set[int] = set()  # calls with an outcome in this run
        self._scheduled = False
        self._beat: Any = None
        self._failure: JournalError | None = None  # the commit that failed, raised again
        self._closed = False

    durable = True

    # -- the Observer protocol ----------------------------------------------------------
    def started(self, record: CallRecord, tool: Tool) -> None:
        at = record.started or time.time()
        index = record.index
        arguments = dump(record.arguments or {}, f"the arguments of {record.label}")
        self._intents.append((self.run_id, index, tool.name, arguments, at))
        self._unsynced.add(index)
        self._started.add(index)
        if not (tool.pure or tool.idempotent):
            self._effects = True
        self._event(at, "call_started", index, None)

    def invoking(self, index: int) -> None:
        self._invoked.add(index)
        if index in self._unsynced:
            self.flush()

    def settled(self, index: int, outcome: CallOutcome) -> None:
        self._outcomes.append(outcome_row(self.run_id, index, outcome))
        if outcome.labels is not None:  # a Labeled result's fields, for a resume
            self._event(time.time(), "call_labels", index, outcome.labels)
        self._settled.add(index)
        self._schedule()

    def committed(self, record: CallRecord, entries: Sequence[WriteEntry]) -> None:
        run_id, index = self.run_id, record.index
        if index in self.before:  # journaled by an earlier session: replayed here
            return
        if (
            record.status == "failed"
            and index in self._started
            and index not in self._settled
            and index not in self._invoked  # its tool ran and was interrupted: in flight
        ):  # it failed before its tool ran (its arguments did not fit): replay the failure
            outcome = CallOutcome(
                False, (), None, record.error, record.attempts, (record.started, record.finished)
            )
            self.settled(index, outcome)
        for entry in entries:
            self._writes.append(
                (
                    run_id,
                    self.session,
                    entry.seq,
                    entry.call,
                    entry.instance,
                    entry.path,
                    entry.method,
                    dump_written(entry, f"a value {record.label} wrote"),
                    entry.time,
                )
            )
        data: dict[str, Any] | None = None
        if record.status in ("skipped", "cancelled", "pending_latent"):
            data = {"reason": record.reason, "untaken": record.untaken}
        elif record.error is not None:
            data = {"error": record.error}
        if record.warnings:  # a result written under output_validation="warn"
            data = {**(data or {}), "warnings": list(record.warnings)}
        if record.labels is not None:  # a run with labels (docs/security.md)
            data = {**(data or {}), "labels": record.labels, "policy": record.policy}
        at = record.finished or time.time()
        self._event(at, f"call_{record.status}", index, data)
        self._schedule()

    def awaiting(self, pending: PendingApproval) -> None:
        now = time.time()
        self._approvals.append(
            (
                self.run_id,
                pending.id,
                pending.call,
                pending.label,
                pending.tool,
                dump(pending.arguments, f"the arguments of {pending.label}"),
                pending.hash,
                now,
            )
        )
        data = {"id": pending.id}
        if pending.reason is not None:  # a policy asked (docs/security.md)
            data["reason"] = pending.reason
        self._event(now, "call_awaiting_approval", pending.call, data)
        self._schedule()

    # -- buffering and commits ---------------------------------------------------------------
    def _event(self, at: float, event: str, call: int | None, data: Any) -> None:
        self._events.append(
            (self.run_id, self._n, at, event, call, None if data is None else dump(data))
        )
        self._n += 1
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled and self._failure is None:
            self._scheduled = True
            try:
                loop = asyncio_loop()
            except RuntimeError:  # no event loop: the owner flushes at the end
                return
            loop.call_soon(self._flush_soon)
            if self._beat is None:
                self._beat = loop.call_later(HEARTBEAT, self._heartbeat)

    def _flush_soon(self) -> None:
        if self._scheduled and not self._closed:
            # kept in self._failure: the engine's next call into the writer raises it
            with contextlib.suppress(JournalError):
                self.flush()

    def _heartbeat(self) -> None:
        self._beat = None
        if self._scheduled:
            return  # the next flush beats
        with contextlib.suppress(JournalError), self.journal.errors():
            self.journal.db.execute(
                "UPDATE runs SET heartbeat = ? WHERE run_id = ?", (time.time(), self.run_id)
            )
        with contextlib.suppress(RuntimeError):
            self._beat = asyncio_loop().call_later(HEARTBEAT, self._heartbeat)

    def flush(self) -> None:
        """Commit everything buffered, in one transaction.  Raises
        :class:`~obelisk.errors.JournalError` when the commit fails, and again on every
        later call (the class's docstring says why)."""
        self._scheduled = False
        if self._failure is not None:
            raise JournalError(*self._failure.args)
        if not (self._intents or self._outcomes or self._writes or self._events or self._approvals):
            return
        try:
            self._commit()
        except JournalError as exc:
            self._failure = exc
            raise
        self._intents, self._outcomes, self._writes = [], [], []
        self._events, self._approvals = [], []
        self._unsynced.clear()
        self._effects = False

    def _commit(self) -> None:
        journal, db = self.journal, self.journal.db
        full = journal.synchronous == "full" and self._effects
        with journal.errors():
            journal.set_level("FULL" if full else "NORMAL")
            with db.batch():
                self._statements(db)

    def _statements(self, db: Backend) -> None:
        """The statements of one commit (inside :meth:`_commit`'s batch)."""
        db.begin()
        for table, rows in (
            ("intents", self._intents),
            ("outcomes", self._outcomes),
            ("writes", self._writes),
        ):
            if rows:
                db.upsert(table, rows)
        if self._approvals:
            db.insert_new("approvals", _APPROVAL_COLUMNS, self._approvals)
        if self._events:
            db.upsert("events", self._events)
        db.execute(
            "UPDATE runs SET heartbeat = ?, updated = ? WHERE run_id = ?",
            (time.time(), time.time(), self.run_id),
        )
        db.commit()

    def close(self) -> None:
        """Flush what is left and stop the heartbeat; raises the failed commit's
        :class:`~obelisk.errors.JournalError` as :meth:`flush` does."""
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        self._closed = True
        self.flush()

    def note(self, event: str, call: int | None = None, data: Any = None) -> None:
        """Buffer an event of the run itself (``run_finished``, ``call_unknown``, ...)."""
        self._event(time.time(), event, call, data)


def asyncio_loop() -> asyncio.AbstractEventLoop:
    """The running event loop (``RuntimeError`` without one)."""
    return asyncio.get_running_loop()
