"""The run journal's storage: one SQLite file in WAL mode, or a PostgreSQL database
(docs/durable.md, docs/scale.md).

:class:`Store` opens (or creates) the journal and checks that it is one; it
writes runs, events, outcomes and turns, reads back what a run did
(:class:`~obelisk.interpreter.runtime.durable.data.Progress`) and holds each run's
lock.  :class:`~obelisk.interpreter.runtime.durable.journal.Journal` adds what people use
(listing, describing, deciding); :class:`~obelisk.interpreter.runtime.durable.writer.RunWriter`
journals a run as it goes.  The tables are listed in
:mod:`~obelisk.interpreter.runtime.durable.journal`.  What the two databases do not
share (placeholders, upserts, types, transactions, run locks) is behind
:class:`~obelisk.interpreter.runtime.durable.backend.Backend`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from obelisk.errors import JournalCorrupted, JournalError, RunLocked
from obelisk.interpreter.runtime.durable import readback
from obelisk.interpreter.runtime.durable.backend import Backend, SQLiteBackend, sqlite3_module
from obelisk.interpreter.runtime.durable.data import (
    FINISHED,
    Progress,
    RunRow,
    clipped,
    dump,
    holder,
    holder_alive,
    load,
    me,
    never_again,
    outcome_row,
)
from obelisk.interpreter.runtime.durable.postgres import PostgresBackend, is_postgres, shown
from obelisk.interpreter.runtime.durable.schema import FORMAT, TABLES, VERSION, migrate
from obelisk.interpreter.runtime.records import CallOutcome

__all__ = ["FORMAT", "HEARTBEAT", "VERSION", "Store", "Synchronous"]

HEARTBEAT = 15.0
"""Seconds between two heartbeats of a running process."""

Synchronous = Literal["normal", "full"]


# -- the journal ----------------------------------------------------------------------


_RUN_COLUMNS = (
    "run_id, kind, status, created, updated, calls, fingerprint, pinned, plan, input, "
    "state, data, settings, parent, reason, replaces, replaced_by"
)


class Store:
    """A run journal: one SQLite file in WAL mode, or a PostgreSQL database (see the
    module docstring).

    ``path`` is a file's path, or a ``postgresql://`` URL (docs/scale.md: its tables
    are made in the URL's database and schema).  It is created when it does not
    exist, unless ``create=False`` (then a missing journal raises
    :class:`~obelisk.errors.JournalError`).  ``synchronous`` is
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
        self.location: str = os.fspath(path)
        """What opens this journal again (a URL keeps its password)."""
        self.path: str = shown(self.location) if is_postgres(path) else self.location
        """The journal as messages name it (a URL's password is ``***``)."""
        self.synchronous = synchronous
        if not create and not is_postgres(path) and not os.path.exists(self.path):
            raise JournalError(f"no journal at {self.path!r}", self.path)
        self.db = self._connect(create)
        try:
            with self.errors():
                self._prepare(create)
        except BaseException:
            self.db.close()
            raise

    def _connect(self, create: bool) -> Backend:
        """The connection to the journal; :class:`JournalError` when it cannot be made."""
        if is_postgres(self.location):  # PostgresBackend raises JournalError itself
            return PostgresBackend(self.location)
        try:
            return SQLiteBackend(self.location, create=create)
        except sqlite3_module().Error as exc:
            text = clipped(str(exc).strip())
            raise JournalError(f"cannot open journal {self.path!r}: {text}", self.path) from None

    def _prepare(self, create: bool) -> None:
        db = self.db
        if db.exists and "meta" not in db.tables():  # damaged or foreign: before any write
            text = f"{self.path!r} is {db.name} database but not an obelisk run journal"
            raise JournalCorrupted(text, self.path)
        db.prepare()
        if not db.exists:
            if not create:
                raise JournalError(f"no journal at {self.path!r}", self.path)
            self._create_tables()
        self._check_format()

    def _create_tables(self) -> None:
        """Make the tables of a new journal (unless another process made them
        meanwhile), in one transaction."""
        db = self.db
        db.begin_schema()
        if "meta" not in db.tables():  # another process may have made it meanwhile
            for statement in db.schema():
                db.execute(statement)
            db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("version", VERSION)]
            )
        db.commit()

    def _check_format(self) -> None:
        """Raise unless the file is an obelisk run journal of this version (an older
        one is migrated) with every table."""
        db = self.db
        names = db.tables()
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
        read; PostgreSQL checks its pages itself); raises :class:`JournalCorrupted`
        naming the first problem.  Resume calls it, so a damaged journal is never
        resumed from."""
        with self.errors():
            found = self.db.check()
        if found != ["ok"]:
            raise JournalCorrupted(
                f"journal {self.path!r} is damaged: {'; '.join(map(str, found))}", self.path
            )

    # -- plumbing ----------------------------------------------------------------
    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Turn the database driver's errors into :class:`JournalError` (damage:
        :class:`JournalCorrupted`, text that is not UTF-8 included: one bad byte in the
        file)."""
        caught: tuple[type[BaseException], ...] = (*self.db.errors, UnicodeDecodeError)
        try:
            yield
        except caught as exc:
            text = clipped(str(exc).strip())
            with contextlib.suppress(*self.db.errors):  # a closed connection raises here too
                if self.db.in_transaction:
                    self.db.rollback()
            if isinstance(exc, UnicodeDecodeError) or any(d in text for d in self.db.damaged):
                raise JournalCorrupted(
                    f"journal {self.path!r} is damaged: {text}", self.path
                ) from None
            raise JournalError(f"journal {self.path!r}: {text}", self.path) from None

    def close(self) -> None:
        """Close the file (checkpointing the WAL into it when no one else has it open),
        or the connection (a PostgreSQL journal's run locks go with it)."""
        with contextlib.suppress(*self.db.errors):
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r})"

    def set_level(self, level: str) -> None:
        """``PRAGMA synchronous`` for the next commits (outside a transaction; for a
        PostgreSQL journal, ``synchronous_commit``: ``"NORMAL"`` off, ``"FULL"`` on)."""
        self.db.set_level(level)

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
            self.db.begin()
            found = self.db.execute(
                "SELECT status FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if found is not None:
                self.db.rollback()
                raise JournalError(
                    f"run {run_id!r} already exists in {self.path!r} (status {found[0]}); "
                    f"resume it (obelisk resume {run_id} --journal {self.path}) or choose "
                    "another run id",
                    self.path,
                )
            if replaces is not None:
                self._replacing(run_id, replaces, now)
            self._claim(run_id, None)
            self.db.execute(
                "INSERT INTO runs (run_id, kind, status, created, updated, calls, fingerprint, "
                "pinned, plan, input, state, data, settings, owner, heartbeat, parent, sessions, "
                "replaces) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                (*row, replaces),
            )
            self.event(run_id, now, "run_started", None, {"calls": calls})
            self._commit_claimed(run_id)
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
            self.db.rollback()
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
                listed = ", ".join(known[-5:]) if known else "none"
                raise JournalError(
                    f"no run {run_id!r} in journal {self.path!r} (runs: {listed})", self.path
                )
        return RunRow(row)

    def lock(self, run_id: str, seen: str | None = None) -> tuple[str, int]:
        """Take the run's lock for this process; returns the lock token and the number
        of this session (0 for the first run, 1 for the first resume, ...).  Raises
        :class:`RunLocked` naming the process that holds it, or when the run's status
        is no longer ``seen`` (what the caller read before: another process took the
        run up meanwhile), and :class:`JournalError` for a run aborted meanwhile
        (naming the reason)."""
        mine = me()
        with self.errors():
            self.db.begin()
            row = self.db.execute(
                "SELECT owner, heartbeat, sessions, status, reason, replaced_by FROM runs "
                "WHERE run_id = ?" + self.db.for_update,
                (run_id,),
            ).fetchone()
            over = None if row is None else never_again(run_id, row[3], row[4], row[5])
            if row is None or over is not None:
                self.db.rollback()
                raise JournalError(over or f"no run {run_id!r} in journal {self.path!r}", self.path)
            owner = load(row[0], f"run {run_id!r} owner") if row[0] is not None else None
            if seen not in (None, row[3]) and not self.running(run_id, owner, row[1]):
                self.db.rollback()
                raise RunLocked(
                    f"run {run_id!r} was taken up by another process meanwhile (it was "
                    f"{seen}, it is {row[3]}); nothing was run",
                    self.path,
                )
            self._claim(run_id, owner, row[1])
            now = time.time()
            self.db.execute(
                "UPDATE runs SET owner = ?, heartbeat = ?, status = 'running', updated = ?, "
                "sessions = sessions + 1 WHERE run_id = ?",
                (dump(mine), now, now, run_id),
            )
            self._commit_claimed(run_id)
        return str(mine["token"]), int(row[2]) + 1

    def running(self, run_id: str, owner: Any, heartbeat: float | None) -> bool:
        """Whether a live process holds run ``run_id`` (``owner``: the run's ``owner``
        column, decoded): PostgreSQL knows (an advisory lock, held while its
        connection lives); for SQLite, the owner's process is asked (the same host)
        or its heartbeat is recent (another host, within ``LEASE``)."""
        held = self.db.held(run_id)
        if held is not None:
            return held
        return isinstance(owner, dict) and holder_alive(owner, heartbeat)

    def _claim(self, run_id: str, owner: Any, heartbeat: float | None = None) -> None:
        """Inside a transaction that locks run ``run_id``: take its lock for this
        process, or roll back and raise :class:`RunLocked` naming the process that
        holds it (``owner``, ``heartbeat``: its row's columns)."""
        if not self.running(run_id, owner, heartbeat) and self.db.claim(run_id):
            return
        self.db.rollback()
        who = holder(owner) if isinstance(owner, dict) else "another process"
        raise RunLocked(
            f"run {run_id!r} is being run by {who}; nothing was run. "
            "Resume it once that process has stopped",
            self.path,
        )

    def _commit_claimed(self, run_id: str) -> None:
        """Commit the transaction that took run ``run_id``'s lock; a commit that fails
        gives back the lock it claimed."""
        try:
            self.db.commit()
        except BaseException:
            with contextlib.suppress(*self.db.errors):
                self.db.release(run_id)
            raise

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
            self.db.release(run_id)

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

    # -- what a run did, read back (durable/readback.py) ----------------------------------
    def progress(self, run_id: str) -> Progress:
        """Everything run ``run_id`` did so far (see :class:`Progress`)."""
        with self.errors():
            return readback.progress(self.db, run_id)

    def final(self, run_id: str) -> dict[int, tuple[str, Any]]:
        """The calls that are over: call index -> ``(status, event data)``."""
        with self.errors():
            return readback.final(self.db, run_id)

    def warnings(self, run_id: str) -> dict[int, tuple[str, ...]]:
        """The warnings of run ``run_id``'s calls that have some, by call index."""
        with self.errors():
            return readback.warnings(self.db, run_id)

    def labels(self, run_id: str) -> dict[int, Any]:
        """The labels :class:`~obelisk.Labeled` results gave their fields, by call index."""
        with self.errors():
            return readback.field_labels(self.db, run_id)

    def log(self, run_id: str) -> list[tuple[Any, ...]]:
        """The run's write log, in commit order."""
        with self.errors():
            return readback.write_log(self.db, run_id)

    def record_outcome(self, run_id: str, index: int, outcome: CallOutcome, event: str) -> None:
        """Write one call's outcome now (a person's resolution), with an event."""
        with self.errors():
            self.set_level("FULL" if self.synchronous == "full" else "NORMAL")
            self.db.begin()
            self.db.upsert("outcomes", [outcome_row(run_id, index, outcome)])
            self.event(run_id, time.time(), event, index, {"error": outcome.error})
            self.db.commit()

    def record(self, run_id: str, event: str, call: int | None, data: Any) -> None:
        """Append one event in a transaction of its own."""
        with self.errors():
            self.db.begin()
            self.event(run_id, time.time(), event, call, data)
            self.db.commit()

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
            self.db.begin()
            self.db.upsert(
                "turns",
                [
                    (
                        run_id,
                        turn,
                        dump(request, "a request"),
                        dump(answer, "an answer"),
                        time.time(),
                    )
                ],
            )
            self.db.commit()

    def set_status(self, run_id: str, status: str) -> None:
        """Set a run's status (a loop's, whose turns are runs of their own)."""
        with self.errors():
            self.db.execute(
                "UPDATE runs SET status = ?, updated = ? WHERE run_id = ?",
                (status, time.time(), run_id),
            )
