"""What a run did, read back from the journal's tables: its intents, outcomes,
approvals, warnings and field labels (:class:`~obelisk.interpreter.runtime.durable.data.Progress`),
the calls that are over, and its write log.  Each function takes the journal's
:class:`~obelisk.interpreter.runtime.durable.backend.Backend`; :class:`Store` calls them
inside its error handling (database errors become :class:`~obelisk.errors.JournalError`).
"""

from __future__ import annotations

from typing import Any

from obelisk.errors import JournalCorrupted
from obelisk.interpreter.runtime.durable.backend import Backend
from obelisk.interpreter.runtime.durable.data import FINAL_EVENTS, Progress, load

__all__ = ["field_labels", "final", "progress", "warnings", "write_log"]


def progress(db: Backend, run_id: str) -> Progress:
    """Everything run ``run_id`` did so far (see :class:`Progress`)."""
    intents = db.execute(
        "SELECT call, tool, arguments, time FROM intents WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    outcomes = db.execute(
        "SELECT call, succeeded, writes, output, error, attempts, started, finished "
        "FROM outcomes WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    approvals = db.execute(
        "SELECT id, call, label, tool, arguments, hash, decision FROM approvals "
        "WHERE run_id = ? ORDER BY call",
        (run_id,),
    ).fetchall()
    labels = field_labels(db, run_id)
    return Progress(run_id, intents, outcomes, approvals, warnings(db, run_id), labels)


def final(db: Backend, run_id: str) -> dict[int, tuple[str, Any]]:
    """The calls that are over (committed, skipped, cancelled...): call index ->
    ``(status, event data)``, from their last final event (a call a retry runs again
    is not over from its ``call_retried`` event until it ends again)."""
    statuses = (*FINAL_EVENTS, "call_retried")
    marks = ", ".join("?" * len(statuses))
    rows = db.execute(
        f"SELECT call, event, data FROM events WHERE run_id = ? AND event IN ({marks}) ORDER BY n",
        (run_id, *statuses),
    ).fetchall()
    found: dict[int, tuple[str, Any]] = {}
    for call, event, data in rows:
        if event == "call_retried":
            found.pop(call, None)
        else:
            found[call] = (FINAL_EVENTS[event], load(data, "event") if data else None)
    return found


def warnings(db: Backend, run_id: str) -> dict[int, tuple[str, ...]]:
    """The warnings of run ``run_id``'s calls that have some (results written under
    ``output_validation="warn"``): call index -> warnings, from their
    ``call_succeeded`` events.  Raises :class:`JournalCorrupted` for damaged ones."""
    rows = db.execute(
        "SELECT call, data FROM events WHERE run_id = ? AND event = 'call_succeeded' "
        "AND data LIKE '%\"warnings\":%' ORDER BY n",
        (run_id,),
    ).fetchall()
    found: dict[int, tuple[str, ...]] = {}
    for call, data in rows:
        decoded = load(data, "event")
        noted = decoded.get("warnings") if isinstance(decoded, dict) else None
        if not isinstance(noted, list) or not all(isinstance(w, str) for w in noted):
            raise JournalCorrupted(f"the journal's event of call {call} has damaged warnings")
        found[call] = tuple(noted)
    return found


def field_labels(db: Backend, run_id: str) -> dict[int, Any]:
    """The labels a :class:`~obelisk.Labeled` result gave its fields, by call index,
    from the ``call_labels`` events (docs/security.md)."""
    rows = db.execute(
        "SELECT call, data FROM events WHERE run_id = ? AND event = 'call_labels' ORDER BY n",
        (run_id,),
    ).fetchall()
    return {call: load(data, "event") for call, data in rows}


def write_log(db: Backend, run_id: str) -> list[tuple[Any, ...]]:
    """The run's write log: ``(call, instance, path, method, value text, time)`` rows
    in commit order (by session, then seq; see :class:`RunWriter`)."""
    return db.execute(
        "SELECT call, instance, path, method, value, time FROM writes WHERE run_id = ? "
        "ORDER BY session, seq",
        (run_id,),
    ).fetchall()
