"""The run journal's storage: one SQLite file in WAL mode (docs/durable.md).

:class:`Store` opens (or creates) the file and checks that it is a journal; it
writes runs, events, outcomes and turns, reads back what a run did
(:class:`~obelisk.interpreter.runtime.durable.data.Progress`) and holds each run's
lock.  :class:`~obelisk.interpreter.runtime.durable.journal.Journal` adds what people use
(listing, describing, deciding); :class:`~obelisk.interpreter.runtime.durable.writer.RunWriter`
journals a run as it goes.  The tables are listed in
:mod:`~obelisk.interpreter.runtime.durable.journal`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from obelisk.errors import JournalCorrupted, JournalError, RunLocked
from obelisk.interpreter.runtime.durable.data import (
    FINAL_EVENTS,
    FINISHED,
    Progress,
    RunRow,
    dump,
    holder,
    holder_alive,
    load,
    me,
    outcome_row,
)
from obelisk.interpreter.runtime.durable.schema import FORMAT, SCHEMA, TABLES, VERSION, migrate
from obelisk.interpreter.runtime.records import CallOutcome

if TYPE_CHECKING:
    import sqlite3

__all__ = ["FORMAT", "HEARTBEAT", "VERSION", "Store", "Synchronous"]

HEARTBEAT = 15.0
"""Seconds between two heartbeats of a running process."""

Synchronous = Literal["normal", "full"]


def _sqlite3() -> ModuleType:
    """The :mod:`sqlite3` module, imported when first needed and not with this module:
    most runs keep no journal, and ``obelisk run`` does not load it."""
    import sqlite3

    return sqlite3


# -- the journal ----------------------------------------------------------------------


# what sqlite3 says of a damaged file (a text column that is not UTF-8 is one byte gone bad)
_DAMAGED = (
    "malformed",
    "not a database",
    "no such table",
    "no such column",
    "Could not decode to UTF-8",
)


def _clipped(text: str, width: int = 300) -> str:
    """sqlite3's message, which may quote a whole column, cut to ``width`` characters."""
    return text if len(text) <= width else f"{text[: width - 24]}... ({len(text):,} characters)"


def _never_again(run_id: str, status: str, reason: str | None, by: str | None) -> str | None:
    """Why a run can never be locked again (aborted, or replaced), ``None`` if it can."""
    if status == "aborted":
        return f"run {run_id!r} was aborted ({reason}): an aborted run is never resumed"
    if by is not None:
        return f"run {run_id!r} was replaced by run {by!r}: it is never resumed"
    return None


_RUN_COLUMNS = (
    "run_id, kind, status, created, updated, calls, fingerprint, pinned, plan, input, "
    "state, data, settings, parent, reason, replaces, replaced_by"
)


class Store:
    """A run journal: one SQLite file in WAL mode (see the module docstring).

    ``path`` is created when it does not exist, unless ``create=False`` (then a
    missing file raises :class:`~obelisk.errors.JournalError`).  ``synchronous`` is
    ``"normal"`` (default: a process crash loses nothing committed; a power cut may
    lose the last commits) or ``"full"`` (intents of calls with side effects are
    synced to disk before their tools run, about 3 ms per batch on a common disk).

    Raises :class:`~obelisk.errors.JournalCorrupted` for a file that is not a journal
    or is damaged, :class:`~obelisk.errors.JournalError` when it cannot be opened.
    Use it as a context manager, or :meth:`close` it.  Reading: :meth:`runs`,
    :meth:`describe`, :meth:`pending`; deciding: :meth:`decide` (docs/durable.md).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "normal",
        create: bool = True,
    ) -> None:
        if synchronous not in ("normal", "full"):
            raise JournalError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        self.path = os.fspath(path)
        self.synchronous = synchronous
        self._level = "NORMAL"
        if not create and not os.path.exists(self.path):
            raise JournalError(f"no journal at {self.path!r}", self.path)
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        sqlite = _sqlite3()
        try:
            self.db: sqlite3.Connection = sqlite.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except sqlite.Error as exc:
            raise JournalError(f"cannot open journal {self.path!r}: {exc}", self.path) from None
        try:
            with self.errors():
                self._prepare(new)
        except BaseException:
            self.db.close()
            raise

    def _prepare(self, new: bool) -> None:
        db = self.db
        if not new:  # a damaged or foreign file fails here, before anything is written
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if "meta" not in names:
                raise JournalCorrupted(
                    f"{self.path!r} is an SQLite database but not an obelisk run journal",
                    self.path,
                )
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal {self.path!r} cannot use WAL mode ({mode})", self.path)
        db.execute("PRAGMA synchronous=NORMAL")
        if new:
            self._create_tables()
        self._check_format()

    def _create_tables(self) -> None:
        """Make the tables of a new journal (unless another process made them
        meanwhile), in one transaction."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if "meta" not in names:  # another process may have made it meanwhile
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("version", VERSION)]
            )
        db.execute("COMMIT")

    def _check_format(self) -> None:
        """Raise unless the file is an obelisk run journal of this version (an older
        one is migrated) with every table."""
        db = self.db
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != FORMAT:
            raise JournalCorrupted(f"{self.path!r} is not an obelisk run journal", self.path)
        if meta.get("version") != VERSION and "runs" in names:
            migrate(db)  # an older journal: brought up to this version (durable/schema.py)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("version") != VERSION:
            raise JournalError(
                f"journal {self.path!r} has version {meta.get('version')!r}; this obelisk "
                f"reads version {VERSION}",
                self.path,
            )
        missing = [table for table in TABLES if table not in names]
        if missing:
            raise JournalCorrupted(
                f"journal {self.path!r} lacks the table{'s' if len(missing) > 1 else ''} "
                + ", ".join(missing),
                self.path,
            )

    def check(self) -> None:
        """Check the whole file (SQLite's ``quick_check``: every page and index is
        read); raises :class:`JournalCorrupted` naming the first problem.  Resume calls
        it, so a damaged journal is never resumed from."""
        with self.errors():
            found = [row[0] for row in self.db.execute("PRAGMA quick_check(5)").fetchall()]
        if found != ["ok"]:
            raise JournalCorrupted(
                f"journal {self.path!r} is damaged: {'; '.join(map(str, found))}", self.path
            )

    # -- plumbing ----------------------------------------------------------------
    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Turn sqlite3's errors into :class:`JournalError` (damage: :class:`JournalCorrupted`,
        text that is not UTF-8 included: one bad byte in the file)."""
        try:
            yield
        except (_sqlite3().Error, UnicodeDecodeError) as exc:
            text = _clipped(str(exc))
            with contextlib.suppress(_sqlite3().Error):  # a closed connection raises here too
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            if isinstance(exc, UnicodeDecodeError) or any(d in text for d in _DAMAGED):
                raise JournalCorrupted(
                    f"journal {self.path!r} is damaged: {text}", self.path
                ) from None
            raise JournalError(f"journal {self.path!r}: {text}", self.path) from None

    def close(self) -> None:
        """Close the file (checkpointing the WAL into it when no one else has it open)."""
        with contextlib.suppress(_sqlite3().Error):
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r})"

    def set_level(self, level: str) -> None:
        """``PRAGMA synchronous`` for the next commits (outside a transaction)."""
        if level != self._level:
            self.db.execute(f"PRAGMA synchronous={level}")
            self._level = level

    # -- runs -----------------------------------------------------------------------
    def create_run(
        self,
        run_id: str,
        *,
        kind: str,
        calls: int,
        fingerprint: str,
        pinned: Mapping[str, Any],
        plan: Any,
        input: Any,
        state: Any,
        data: Any,
        settings: Mapping[str, Any],
        parent: str | None = None,
        replaces: str | None = None,
    ) -> str:
        """Record a new run, locked by this process; returns its lock token.  With
        ``replaces``, the new run replaces that run, which must be over or aborted
        (both rows record the link: ``replaces``, ``replaced_by``).  Raises
        :class:`JournalError` when a run of that id exists, a value is not JSON, or
        the run to replace cannot be."""
        now = time.time()
        owner = me()
        row = (
            run_id,
            kind,
            "running",
            now,
            now,
            calls,
            fingerprint,
            dump(pinned, "the plan's fingerprint"),
            dump(plan, "the plan"),
            dump(input, "the input"),
            dump(state, "the starting state"),
            dump(data, "the data documents"),
            dump(settings, "the run's settings"),
            dump(owner),
            now,
            parent,
        )
        with self.errors():
            self.set_level("FULL" if self.synchronous == "full" else "NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            found = self.db.execute(
                "SELECT status FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if found is not None:
                self.db.execute("ROLLBACK")
                raise JournalError(
                    f"run {run_id!r} already exists in {self.path!r} (status {found[0]}); "
                    f"resume it (obelisk resume {run_id} --journal {self.path}) or choose "
                    "another run id",
                    self.path,
                )
            if replaces is not None:
                self._replacing(run_id, replaces, now)
            self.db.execute(
                "INSERT INTO runs (run_id, kind, status, created, updated, calls, fingerprint, "
                "pinned, plan, input, state, data, settings, owner, heartbeat, parent, sessions, "
                "replaces) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                (*row, replaces),
            )
            self.event(run_id, now, "run_started", None, {"calls": calls})
            self.db.execute("COMMIT")
        return str(owner["token"])

    def _replacing(self, run_id: str, old: str, now: float) -> None:
        """Inside :meth:`create_run`'s transaction: mark run ``old`` replaced by
        ``run_id``, or roll back and raise :class:`JournalError` (no such run, a run
        replaced already, a run not over: abort it first)."""
        found = self.db.execute(
            "SELECT status, replaced_by FROM runs WHERE run_id = ?", (old,)
        ).fetchone()
        problem = None
        if found is None:
            problem = f"there is no run {old!r} in {self.path!r}"
        elif found[1] is not None:
            problem = f"run {old!r} is replaced already, by run {found[1]!r}"
        elif found[0] not in FINISHED:
            problem = (
                f"run {old!r} is {found[0]}, not over: abort it first "
                f"(obelisk runs abort {old} --journal {self.path} --reason TEXT)"
            )
        if problem is not None:
            self.db.execute("ROLLBACK")
            raise JournalError(f"run {run_id!r} cannot replace run {old!r}: {problem}", self.path)
        self.db.execute(
            "UPDATE runs SET replaced_by = ?, updated = ? WHERE run_id = ?", (run_id, now, old)
        )
        self.event(old, now, "run_replaced", None, {"by": run_id})

    def run_row(self, run_id: str) -> RunRow:
        """The run ``run_id``; :class:`JournalError` naming the runs there are when
        there is no such run."""
        with self.errors():
            row = self.db.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                known = [r[0] for r in self.db.execute("SELECT run_id FROM runs ORDER BY created")]
                shown = ", ".join(known[-5:]) if known else "none"
                raise JournalError(
                    f"no run {run_id!r} in journal {self.path!r} (runs: {shown})", self.path
                )
        return RunRow(row)

    def lock(self, run_id: str) -> tuple[str, int]:
        """Take the run's lock for this process; returns the lock token and the number
        of this session (0 for the first run, 1 for the first resume, ...).  Raises
        :class:`RunLocked` naming the process that holds it, and :class:`JournalError`
        for a run aborted meanwhile (naming the reason)."""
        mine = me()
        with self.errors():
            self.db.execute("BEGIN IMMEDIATE")
            row = self.db.execute(
                "SELECT owner, heartbeat, sessions, status, reason, replaced_by FROM runs "
                "WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            over = None if row is None else _never_again(run_id, row[3], row[4], row[5])
            if row is None or over is not None:
                self.db.execute("ROLLBACK")
                raise JournalError(over or f"no run {run_id!r} in journal {self.path!r}", self.path)
            if row[0] is not None:
                owner = load(row[0], f"run {run_id!r} owner")
                if isinstance(owner, dict) and holder_alive(owner, row[1]):
                    self.db.execute("ROLLBACK")
                    raise RunLocked(
                        f"run {run_id!r} is being run by {holder(owner)}; nothing was run. "
                        "Resume it once that process has stopped",
                        self.path,
                    )
            now = time.time()
            self.db.execute(
                "UPDATE runs SET owner = ?, heartbeat = ?, status = 'running', updated = ?, "
                "sessions = sessions + 1 WHERE run_id = ?",
                (dump(mine), now, now, run_id),
            )
            self.db.execute("COMMIT")
        return str(mine["token"]), int(row[2]) + 1

    def unlock(self, run_id: str, token: str, status: str | None = None) -> None:
        """Give the lock back (when ``token`` still holds it), setting ``status``."""
        with self.errors():
            row = self.db.execute("SELECT owner FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            owner = load(row[0], "owner") if row is not None and row[0] is not None else None
            if not isinstance(owner, dict) or owner.get("token") != token:
                return
            now = time.time()
            if status is None:
                self.db.execute(
                    "UPDATE runs SET owner = NULL, updated = ? WHERE run_id = ?", (now, run_id)
                )
            else:
                self.db.execute(
                    "UPDATE runs SET owner = NULL, status = ?, updated = ? WHERE run_id = ?",
                    (status, now, run_id),
                )

    def event(self, run_id: str, at: float, event: str, call: int | None, data: Any) -> None:
        """Append one event (inside the caller's transaction, or on its own)."""
        self.db.execute(
            "INSERT INTO events (run_id, n, time, event, call, data) VALUES (?, "
            "(SELECT COALESCE(MAX(n), -1) + 1 FROM events WHERE run_id = ?), ?, ?, ?, ?)",
            (run_id, run_id, at, event, call, None if data is None else dump(data)),
        )

    def next_event(self, run_id: str) -> int:
        with self.errors():
            row = self.db.execute(
                "SELECT COALESCE(MAX(n), -1) + 1 FROM events WHERE run_id = ?", (run_id,)
            ).fetchone()
        return int(row[0])

    # -- what a run did, read back -----------------------------------------------------
    def progress(self, run_id: str) -> Progress:
        """Everything run ``run_id`` did so far (see :class:`Progress`)."""
        with self.errors():
            intents = self.db.execute(
                "SELECT call, tool, arguments, time FROM intents WHERE run_id = ?",
                (run_id,),
            ).fetchall()
            outcomes = self.db.execute(
                "SELECT call, succeeded, writes, output, error, attempts, started, finished "
                "FROM outcomes WHERE run_id = ?",
                (run_id,),
            ).fetchall()
            approvals = self.db.execute(
                "SELECT id, call, label, tool, arguments, hash, decision FROM approvals "
                "WHERE run_id = ? ORDER BY call",
                (run_id,),
            ).fetchall()
        labels = self.labels(run_id)
        return Progress(run_id, intents, outcomes, approvals, self.warnings(run_id), labels)

    def final(self, run_id: str) -> dict[int, tuple[str, Any]]:
        """The calls that are over (committed, skipped, cancelled...): call index ->
        ``(status, event data)``, from their last final event (a call a retry runs again
        is not over from its ``call_retried`` event until it ends again)."""
        statuses = (*FINAL_EVENTS, "call_retried")
        marks = ", ".join("?" * len(statuses))
        with self.errors():
            rows = self.db.execute(
                f"SELECT call, event, data FROM events WHERE run_id = ? AND event IN ({marks}) "
                "ORDER BY n",
                (run_id, *statuses),
            ).fetchall()
        found: dict[int, tuple[str, Any]] = {}
        for call, event, data in rows:
            if event == "call_retried":
                found.pop(call, None)
            else:
                found[call] = (FINAL_EVENTS[event], load(data, "event") if data else None)
        return found

    def warnings(self, run_id: str) -> dict[int, tuple[str, ...]]:
        """The warnings of run ``run_id``'s calls that have some (results written under
        ``output_validation="warn"``): call index -> warnings, from their
        ``call_succeeded`` events.  Raises :class:`JournalCorrupted` for damaged ones."""
        with self.errors():
            rows = self.db.execute(
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

    def labels(self, run_id: str) -> dict[int, Any]:
        """The labels a :class:`~obelisk.Labeled` result gave its fields, by call index,
        from the ``call_labels`` events (docs/security.md)."""
        with self.errors():
            rows = self.db.execute(
                "SELECT call, data FROM events WHERE run_id = ? AND event = 'call_labels' "
                "ORDER BY n",
                (run_id,),
            ).fetchall()
        return {call: load(data, "event") for call, data in rows}

    def log(self, run_id: str) -> list[tuple[Any, ...]]:
        """The run's write log: ``(call, instance, path, method, value text, time)`` rows
        in commit order (by session, then seq; see :class:`RunWriter`)."""
        with self.errors():
            return self.db.execute(
                "SELECT call, instance, path, method, value, time FROM writes WHERE run_id = ? "
                "ORDER BY session, seq",
                (run_id,),
            ).fetchall()

    def record_outcome(self, run_id: str, index: int, outcome: CallOutcome, event: str) -> None:
        """Write one call's outcome now (a person's resolution), with an event."""
        with self.errors():
            self.set_level("FULL" if self.synchronous == "full" else "NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                outcome_row(run_id, index, outcome),
            )
            self.event(run_id, time.time(), event, index, {"error": outcome.error})
            self.db.execute("COMMIT")

    def record(self, run_id: str, event: str, call: int | None, data: Any) -> None:
        """Append one event in a transaction of its own."""
        with self.errors():
            self.db.execute("BEGIN IMMEDIATE")
            self.event(run_id, time.time(), event, call, data)
            self.db.execute("COMMIT")

    # -- approvals ------------------------------------------------------------------------
    # -- loop turns ------------------------------------------------------------------------
    def turns(self, run_id: str) -> list[tuple[int, Any, Any]]:
        """``(turn, request, answer)`` of every journaled turn of loop run ``run_id``."""
        with self.errors():
            rows = self.db.execute(
                "SELECT turn, request, answer FROM turns WHERE run_id = ? ORDER BY turn",
                (run_id,),
            ).fetchall()
        return [(row[0], load(row[1], "turn request"), load(row[2], "turn answer")) for row in rows]

    def record_turn(self, run_id: str, turn: int, request: Any, answer: Any) -> None:
        """Journal one turn's request and the model's answer (committed at once)."""
        with self.errors():
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?)",
                (run_id, turn, dump(request, "a request"), dump(answer, "an answer"), time.time()),
            )
            self.db.execute("COMMIT")

    def set_status(self, run_id: str, status: str) -> None:
        """Set a run's status (a loop's, whose turns are runs of their own)."""
        with self.errors():
            self.db.execute(
                "UPDATE runs SET status = ?, updated = ? WHERE run_id = ?",
                (status, time.time(), run_id),
            )
