"""The run journal: durable runs kept in one SQLite file, or in a PostgreSQL database
that many processes share (docs/durable.md, docs/scale.md).

:class:`Journal` opens (or creates) the file, in WAL mode, or the tables at a
``postgresql://`` URL.  It holds, per run, the
plan and its fingerprint, the input and the starting state, each call's *intent*
(its resolved arguments, recorded before its tool runs) and *outcome*, every
write-log entry, the call lifecycle events, the approvals a run waits for and the
decisions people made, and the turns of a durable loop.

Tables (every JSON value is stored as JSON text)::

    meta(key, value)                      format and schema version
    runs(run_id, kind, status, created, updated, calls, fingerprint, pinned, plan,
         input, state, data, settings, owner, heartbeat, parent, sessions,
         reason, replaces, replaced_by)
    intents(run_id, call, tool, arguments, time)
    outcomes(run_id, call, succeeded, writes, output, error, attempts, started, finished)
    writes(run_id, session, seq, call, instance, path, method, value, time)
    events(run_id, n, time, event, call, data)
    approvals(run_id, id, call, label, tool, arguments, hash, requested, decision, decided)
    turns(run_id, turn, request, answer, time)
    retries(run_id, session, call, time, status, intent, outcome)

The schema's version, and the migration of older journals, are in
:mod:`~obelisk.interpreter.runtime.durable.schema`.

Durability (docs/durable.md, "What a crash can lose"): a :class:`RunWriter` buffers
what a run does and commits it once per turn of the event loop; an intent is
committed before its tool runs (:meth:`RunWriter.invoking`).  ``synchronous=
"normal"`` (the default) survives any crash of the process; ``"full"`` also
survives a power cut for intents of calls with side effects (each batch of them is
synced to disk before its tools run).

The lock: ``runs.owner`` names the process that runs a run (pid, host, process
start time); another process that finds it alive gets :class:`RunLocked` (in
PostgreSQL, the process also holds an advisory lock while its connection lives).
"""

from __future__ import annotations

import time
from typing import Any

from obelisk.errors import ApprovalError
from obelisk.interpreter.runtime.approvals import Decision, PendingApproval, check_decisions
from obelisk.interpreter.runtime.durable.data import (
    FINISHED,
    Progress,
    dump,
    holder,
    label,
    load,
    plan_calls,
)
from obelisk.interpreter.runtime.durable.lineage import Lineage
from obelisk.interpreter.tools.registry import Registry, ToolsLike

__all__ = ["Journal"]


class Journal(Lineage):
    """A run journal: one SQLite file in WAL mode, or a PostgreSQL database
    (docs/durable.md, docs/scale.md).

    ``Journal(path, synchronous="normal", create=True)``: ``path`` is a file's path
    or a ``postgresql://`` URL (psycopg 3, the ``postgres`` extra).  It is created when
    it does not exist, unless ``create=False`` (then a missing journal raises
    :class:`~obelisk.errors.JournalError`).  ``synchronous`` is ``"normal"`` (default:
    a process crash loses nothing committed; a power cut may lose the last commits)
    or ``"full"`` (intents of calls with side effects are synced to disk before their
    tools run, about 3 ms per batch on a common disk).  Raises
    :class:`~obelisk.errors.JournalCorrupted` for a file that is not a journal or is
    damaged, :class:`~obelisk.errors.JournalError` when it cannot be opened.

    Pass it (or its path) as ``journal=`` to :func:`obelisk.run`,
    :func:`obelisk.resume` and :class:`obelisk.Loop`.  Use it as a context manager,
    or :meth:`close` it.  Reading: :meth:`runs`, :meth:`describe`, :meth:`pending`;
    deciding: :meth:`decide`; giving a run up: :meth:`abort`; the runs a worker takes
    up: :meth:`ready`.
    """

    def pending(self, run_id: str | None = None) -> list[tuple[str, PendingApproval]]:
        """``(run id, PendingApproval)`` for every approval no one has decided yet (of
        run ``run_id`` only, when given), oldest first."""
        query = (
            "SELECT a.run_id, a.id, a.call, a.label, a.tool, a.arguments, a.hash FROM approvals a "
            "JOIN runs r ON r.run_id = a.run_id WHERE a.decision IS NULL "
            f"AND r.status NOT IN ({', '.join('?' * len(FINISHED))})"
        )
        parameters: tuple[Any, ...] = tuple(sorted(FINISHED))
        if run_id is not None:
            query += " AND a.run_id = ?"
            parameters = (*parameters, run_id)
        with self.errors():
            rows = self.db.execute(query + " ORDER BY a.requested, a.call", parameters).fetchall()
        return [
            (
                row[0],
                PendingApproval(
                    row[1], row[2], row[3], row[4], load(row[5], f"approval {row[1]!r}"), row[6]
                ),
            )
            for row in rows
        ]

    def decide(
        self,
        approval: str,
        decision: Decision | bool,
        *,
        run_id: str | None = None,
        tools: ToolsLike = None,
    ) -> str:
        """Record a person's decision (``True``/``False``: accept/reject) on a pending
        approval; returns the run's id.

        ``approval`` is the approval's id (bound to the run, its plan and the call's
        argument hash; docs/approvals.md); ``run_id`` is needed when several runs wait on that id.
        ``tools`` (anything :meth:`Registry.coerce` takes) checks an edit's arguments
        now; without them they are checked when the run resumes.  Raises
        :class:`~obelisk.errors.ApprovalError` for an id no run waits on, a decided
        approval or a decision that does not fit (see ``check_decisions``).
        """
        waiting = self.pending(run_id)
        same = [(run, p) for run, p in waiting if p.id == approval]
        if not same:
            decided = self._decided(approval, run_id)
            if decided is not None:
                raise ApprovalError(f"approval {approval!r} of run {decided!r} is decided already")
            runs = sorted({run for run, _ in waiting})
            ids = ", ".join(p.id for _, p in waiting) or "none"
            where = (
                f"run {run_id!r}"
                if run_id is not None
                else f"{len(runs)} run{'s' * (len(runs) != 1)}"
            )
            raise ApprovalError(
                f"approval {approval!r} is unknown: no call awaits it in {where} (pending: {ids})"
            )
        if len(same) > 1:
            names = ", ".join(run for run, _ in same)
            raise ApprovalError(
                f"approval {approval!r} is pending in several runs ({names}); name the run"
            )
        run, pending = same[0]
        registry = Registry.coerce(tools) if tools is not None else Registry()
        decision = check_decisions((pending,), {approval: decision}, registry, run)[approval]
        now = time.time()
        stored = {"action": decision.action, "reason": decision.reason, "plan": decision.plan}
        with self.errors():
            self.set_level("FULL" if self.synchronous == "full" else "NORMAL")
            self.db.begin()
            changed = self.db.execute(
                "UPDATE approvals SET decision = ?, decided = ? WHERE run_id = ? AND id = ? "
                "AND decision IS NULL",
                (dump(stored, "the decision"), now, run, approval),
            ).rowcount
            if changed != 1:
                self.db.rollback()
                raise ApprovalError(f"approval {approval!r} of run {run!r} is decided already")
            self.event(run, now, "approval_decided", pending.call, {"id": approval, **stored})
            self.db.commit()
        return run

    def _decided(self, approval: str, run_id: str | None) -> str | None:
        query = "SELECT run_id FROM approvals WHERE id = ? AND decision IS NOT NULL"
        parameters: tuple[Any, ...] = (approval,)
        if run_id is not None:
            query += " AND run_id = ?"
            parameters = (approval, run_id)
        with self.errors():
            row = self.db.execute(query, parameters).fetchone()
        return None if row is None else str(row[0])

    # -- inspection -------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        """One summary per run, oldest first: ``{"run_id", "kind", "status", "created",
        "updated", "calls", "pending", "unknown", "parent", "reason", "replaces",
        "replaced_by"}`` (times in seconds since the epoch; ``pending`` and ``unknown``
        are counts; ``reason`` is an aborted run's; ``replaces`` and ``replaced_by`` name
        the runs that replace each other, ``None`` when there are none)."""
        with self.errors():
            rows = self.db.execute(
                "SELECT r.run_id, r.kind, r.status, r.created, r.updated, r.calls, r.parent, "
                "(SELECT COUNT(*) FROM approvals a WHERE a.run_id = r.run_id "
                "AND a.decision IS NULL), r.reason, r.replaces, r.replaced_by "
                "FROM runs r ORDER BY r.created, r.run_id"
            ).fetchall()
        found = []
        for row in rows:
            unknown = len(self._unknown_calls(row[0])) if row[2] not in FINISHED else 0
            found.append(
                {
                    "run_id": row[0],
                    "kind": row[1],
                    "status": row[2],
                    "created": row[3],
                    "updated": row[4],
                    "calls": row[5],
                    "pending": row[7] if row[2] not in FINISHED else 0,
                    "unknown": unknown,
                    "parent": row[6],
                    "reason": row[8],
                    "replaces": row[9],
                    "replaced_by": row[10],
                }
            )
        return found

    def ready(self) -> list[str]:
        """The ids of the plain runs ready to continue, oldest change first: those that
        crashed or were interrupted (``running`` or ``interrupted``, and no live process
        holds them) and those whose approvals were all decided (``awaiting_approval``,
        none pending).  A run that waits for a person (an approval, an unknown call),
        is over, aborted or replaced, and a loop or its turns, are not ready
        (``obelisk worker``, docs/scale.md)."""
        with self.errors():
            rows = self.db.execute(
                "SELECT r.run_id, r.status, r.owner, r.heartbeat, "
                "(SELECT COUNT(*) FROM approvals a WHERE a.run_id = r.run_id "
                "AND a.decision IS NULL) FROM runs r WHERE r.kind = 'run' "
                "AND r.replaced_by IS NULL "
                "AND r.status IN ('running', 'interrupted', 'awaiting_approval') "
                "ORDER BY r.updated, r.run_id"
            ).fetchall()
            found = []
            for run_id, status, owner, beat, pending in rows:
                if status == "awaiting_approval" and pending:
                    continue
                holder_info = load(owner, f"run {run_id!r} owner") if owner else None
                if not self.running(run_id, holder_info, beat):
                    found.append(str(run_id))
        return found

    def _unknown_calls(self, run_id: str) -> list[int]:
        """Calls with an intent and no outcome whose last event is not final."""
        with self.errors():
            rows = self.db.execute(
                "SELECT i.call FROM intents i WHERE i.run_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM outcomes o WHERE o.run_id = i.run_id AND o.call = i.call) "
                "ORDER BY i.call",
                (run_id,),
            ).fetchall()
        return [row[0] for row in rows]

    def describe(self, run_id: str) -> dict[str, Any]:
        """Run ``run_id`` in full: ``{"run_id", "kind", "status", "created", "updated",
        "fingerprint", "parent", "reason", "replaces", "replaced_by", "locked_by",
        "calls": [{"index", "id", "tool",
        "status", "started", "finished", "seconds", "attempts", "error", "reason",
        "idempotency_key"}], "counts": {status: n}, "pending": [{"id", "call", "label",
        "tool", "arguments", "hash"}], "unknown": [{"call", "label", "tool",
        "arguments", "idempotency_key", "started"}], "writes", "turns", "retries":
        [{"call", "session", "time", "status", "error", "attempts"}], "revision"}``.

        A call's ``status`` is ``waiting`` (not started), ``running`` (started; its
        process still runs the run), ``unknown`` (started and never finished: in flight
        when its process stopped), or what it ended as.  Times are seconds since the
        epoch; ``seconds`` is how long a call ran.  ``reason`` is an aborted run's,
        ``replaces`` and ``replaced_by`` link runs that replace each other, and
        ``retries`` lists what each ``retry="failed"`` superseded: a call's earlier
        end (``status``, ``error``), in the session that ran it again (docs/durable.md).
        ``revision`` is, for a durable loop's turn, the revision of the loop's plan its
        calls are, with its diff (``{"revision", "turn", "calls", "diff"}``,
        docs/loop.md); ``None`` for other runs.
        """
        run = self.run_row(run_id)
        calls_of_plan = plan_calls(run.plan)
        with self.errors():
            owner_row = self.db.execute(
                "SELECT owner, heartbeat FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            writes = self.db.execute(
                "SELECT COUNT(*) FROM writes WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            turns = self.db.execute(
                "SELECT COUNT(*) FROM turns WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
        progress = self.progress(run_id)
        owner = load(owner_row[0], "owner") if owner_row and owner_row[0] else None
        live = self.running(run_id, owner, owner_row[1] if owner_row else None)
        final = self.final(run_id)
        # a call started and never finished, in a run not over: resume decides
        interrupted = None if run.status in FINISHED else ("running" if live else "unknown")
        calls = [
            _described_call(run_id, index, call, progress, final, interrupted)
            for index, call in enumerate(calls_of_plan)
        ]
        counts: dict[str, int] = {}
        for call_info in calls:
            counts[call_info["status"]] = counts.get(call_info["status"], 0) + 1
        pending = [p.to_dict() for _, p in self.pending(run_id)]
        return {
            "run_id": run.run_id,
            "kind": run.kind,
            "status": run.status,
            "created": run.created,
            "updated": run.updated,
            "fingerprint": run.fingerprint,
            "parent": run.parent,
            "reason": run.reason,
            "replaces": run.replaces,
            "replaced_by": run.replaced_by,
            "locked_by": holder(owner) if live and isinstance(owner, dict) else None,
            "calls": calls,
            "counts": counts,
            "pending": pending,
            "unknown": _unknown_calls(calls, progress),
            "writes": writes,
            "turns": turns,
            "retries": self.retries(run_id),
            "revision": run.settings.get("revision"),
        }


def _call_status(
    index: int,
    progress: Progress,
    final: dict[int, tuple[str, Any]],
    interrupted: str | None,
) -> tuple[str, Any]:
    """Call ``index``'s status for :meth:`Journal.describe`, and why it was skipped
    (or the like: its final event's reason).  ``interrupted``: the status of a call
    started and never finished, ``None`` when the run is over."""
    intent = progress.intents.get(index)
    outcome = progress.outcomes.get(index)
    status = "waiting"
    reason = None
    if outcome is None and intent is not None and interrupted is not None:
        status = interrupted
    elif index in final:
        status, data = final[index]
        reason = data.get("reason") if isinstance(data, dict) else None
    elif outcome is not None:
        status = outcome.status
    if index in progress.waiting and status == "waiting":
        status = "awaiting_approval"
    return status, reason


def _described_call(
    run_id: str,
    index: int,
    call: dict[str, Any],
    progress: Progress,
    final: dict[int, tuple[str, Any]],
    interrupted: str | None,
) -> dict[str, Any]:
    """One entry of :meth:`Journal.describe`'s ``calls``."""
    intent = progress.intents.get(index)
    outcome = progress.outcomes.get(index)
    status, reason = _call_status(index, progress, final, interrupted)
    started = outcome.times[0] if outcome is not None else None
    if started is None and intent is not None:
        started = intent.time
    finished = outcome.times[1] if outcome is not None else None
    return {
        "index": index,
        "id": call.get("_id"),
        "tool": call.get("_tool"),
        "status": status,
        "started": started,
        "finished": finished,
        "seconds": None if started is None or finished is None else max(finished - started, 0.0),
        "attempts": outcome.attempts if outcome is not None else 0,
        "error": outcome.error if outcome is not None else None,
        "reason": reason,
        "idempotency_key": intent.key(run_id, index) if intent is not None else None,
    }


def _unknown_calls(calls: list[dict[str, Any]], progress: Progress) -> list[dict[str, Any]]:
    """:meth:`Journal.describe`'s ``unknown``: the calls whose outcome is unknown."""
    return [
        {
            "call": c["index"],
            "label": label(c["index"], c["tool"], c["id"]),
            "tool": c["tool"],
            "arguments": progress.intents[c["index"]].arguments,
            "idempotency_key": c["idempotency_key"],
            "started": c["started"],
        }
        for c in calls
        if c["status"] == "unknown"
    ]
