"""A durable run's lineage: aborting it, retrying its failed calls, and what each
retry superseded (docs/durable.md, "Retry from the failed step" and "Aborting a run").

:class:`Lineage` adds to the :class:`~obelisk.interpreter.runtime.durable.store.Store`
what a run's later life writes: :meth:`Lineage.abort` marks a run ``aborted`` with a
reason (it is never resumed again), :meth:`Lineage.supersede` moves the intent and the
outcome of each call a ``retry="failed"`` runs again into the ``retries`` table, so
that the retry's own win while what the call did before is kept, and
:meth:`Lineage.retries` reads them back.  A run that replaces another is linked when
it is created (``Store.create_run(..., replaces=...)``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from obelisk.errors import JournalError, RunLocked, UsageError
from obelisk.interpreter.runtime.durable.data import dump, holder, load
from obelisk.interpreter.runtime.durable.store import Store

__all__ = ["Lineage"]


class Lineage(Store):
    """The store, with what aborts and retries write (see the module docstring)."""

    def abort(self, run_id: str, reason: str) -> None:
        """Abort run ``run_id`` (a plain run or a loop) with ``reason``: its status
        becomes ``aborted`` and it is never resumed (resume raises
        :class:`~obelisk.errors.JournalError` naming the reason); its pending
        approvals are no longer listed.  A run that replaces it names it with
        ``obelisk.run(..., replaces=run_id)``.

        Raises :class:`~obelisk.errors.UsageError` for an empty reason,
        :class:`~obelisk.errors.JournalError` for no such run, a loop's turn (abort
        its loop), a run that completed or is aborted already, and
        :class:`~obelisk.errors.RunLocked` for a run another process is running."""
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"aborting run {run_id!r} needs a reason (a non-empty text)")
        row = self.run_row(run_id)  # no such run: a JournalError naming the runs there are
        now = time.time()
        with self.errors():
            self.db.begin()
            status, owner, beat = self.db.execute(
                "SELECT status, owner, heartbeat FROM runs WHERE run_id = ?" + self.db.for_update,
                (run_id,),
            ).fetchone()
            problem = _abort_problem(row.kind, row.parent, status, row.reason)
            holder_info = load(owner, "owner") if owner is not None else None
            if problem is None and self.running(run_id, holder_info, beat):
                self.db.rollback()
                who = holder(holder_info) if isinstance(holder_info, dict) else "another process"
                raise RunLocked(
                    f"run {run_id!r} is being run by {who}; it was not "
                    "aborted. Stop that process first",
                    self.path,
                )
            if problem is not None:
                self.db.rollback()
                raise JournalError(f"run {run_id!r} cannot be aborted: {problem}", self.path)
            self.db.execute(
                "UPDATE runs SET status = 'aborted', reason = ?, owner = NULL, updated = ? "
                "WHERE run_id = ?",
                (reason, now, run_id),
            )
            self.event(run_id, now, "run_aborted", None, {"reason": reason, "status": status})
            self.db.commit()

    def supersede(self, run_id: str, session: int, calls: Mapping[int, str]) -> None:
        """Before session ``session`` of run ``run_id`` runs ``calls`` again (call index
        -> the status it ended with): move each one's intent and outcome into
        ``retries`` and record a ``call_retried`` event for each (so it is not over
        until it ends again) and a ``run_retried`` one, in one transaction."""
        now = time.time()
        with self.errors():
            self.db.begin()
            for call, status in sorted(calls.items()):
                intent, outcome = self._taken_rows(run_id, call)
                self.db.upsert("retries", [(run_id, session, call, now, status, intent, outcome)])
                self.event(run_id, now, "call_retried", call, {"status": status})
            self.event(run_id, now, "run_retried", None, {"calls": sorted(calls)})
            self.db.commit()

    def _taken_rows(self, run_id: str, call: int) -> tuple[str | None, str | None]:
        """Call ``call``'s intent and outcome as JSON objects' text (``None``: it has
        none), deleted from ``intents`` and ``outcomes`` (inside a transaction)."""
        where = (run_id, call)
        found = self.db.execute(
            "SELECT tool, arguments, time FROM intents WHERE run_id = ? AND call = ?", where
        ).fetchone()
        intent = None
        if found is not None:
            arguments = load(found[1], f"run {run_id!r} intent of call {call}")
            intent = dump({"tool": found[0], "arguments": arguments, "time": found[2]})
        found = self.db.execute(
            "SELECT succeeded, writes, output, error, attempts, started, finished FROM outcomes "
            "WHERE run_id = ? AND call = ?",
            where,
        ).fetchone()
        outcome = None
        if found is not None:
            names = ("succeeded", "writes", "output", "error", "attempts", "started", "finished")
            values = dict(zip(names, found, strict=True))
            for name in ("writes", "output", "error"):
                values[name] = load(values[name], f"run {run_id!r} outcome of call {call}")
            outcome = dump(values)
        self.db.execute("DELETE FROM intents WHERE run_id = ? AND call = ?", where)
        self.db.execute("DELETE FROM outcomes WHERE run_id = ? AND call = ?", where)
        return intent, outcome

    def retries(self, run_id: str) -> list[dict[str, Any]]:
        """What each retry of run ``run_id`` superseded, oldest first: ``{"call",
        "session", "time", "status", "error", "attempts"}`` (``status``: how the call
        had ended; ``error``: its error record or ``None``)."""
        with self.errors():
            rows = self.db.execute(
                "SELECT call, session, time, status, outcome FROM retries WHERE run_id = ? "
                "ORDER BY session, call",
                (run_id,),
            ).fetchall()
        found = []
        for call, session, at, status, outcome in rows:
            done = load(outcome, f"run {run_id!r} retry of call {call}") if outcome else None
            done = done if isinstance(done, dict) else {}
            found.append(
                {
                    "call": call,
                    "session": session,
                    "time": at,
                    "status": status,
                    "error": done.get("error"),
                    "attempts": done.get("attempts", 0),
                }
            )
        return found


def _abort_problem(kind: str, parent: str | None, status: str, reason: str | None) -> str | None:
    """Why a run of ``kind`` and ``status`` cannot be aborted (``None``: it can)."""
    if kind == "turn":
        return f"it is a turn of loop {parent!r}: abort the loop"
    if status == "aborted":
        return f"it is aborted already ({reason})"
    if status == "completed":
        return "it completed: there is nothing to abort"
    return None
