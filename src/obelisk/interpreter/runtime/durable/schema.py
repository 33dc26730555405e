"""The run journal's SQLite schema, its version and the migrations of older journals
(docs/durable.md, "Journal versions").

:data:`SCHEMA` makes a new journal of :data:`VERSION`.  A journal of an older version
is migrated in place when it is opened (:func:`migrate`, one transaction per step):
version 1 gains the columns ``runs.reason``, ``runs.replaces`` and
``runs.replaced_by`` (an aborted run's reason and the runs that replace each other)
and the table ``retries`` (what the calls that ``retry="failed"`` ran again had
done).  A journal of a newer version is refused: an obelisk that does not know the
``aborted`` status would resume an aborted run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = [
    "COLUMNS",
    "FORMAT",
    "KEYS",
    "MIGRATIONS",
    "SCHEMA",
    "TABLES",
    "VERSION",
    "migrate",
    "postgres_statement",
]

FORMAT = "obelisk run journal"
VERSION = "2"

_RETRIES = """
CREATE TABLE retries (
    run_id TEXT NOT NULL, session INTEGER NOT NULL, call INTEGER NOT NULL,
    time REAL NOT NULL, status TEXT NOT NULL, intent TEXT, outcome TEXT,
    PRIMARY KEY (run_id, session, call)
) WITHOUT ROWID
"""

SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
    created REAL NOT NULL, updated REAL NOT NULL, calls INTEGER NOT NULL,
    fingerprint TEXT NOT NULL, pinned TEXT NOT NULL, plan TEXT NOT NULL,
    input TEXT NOT NULL, state TEXT NOT NULL, data TEXT NOT NULL, settings TEXT NOT NULL,
    owner TEXT, heartbeat REAL, parent TEXT, sessions INTEGER NOT NULL,
    reason TEXT, replaces TEXT, replaced_by TEXT
) WITHOUT ROWID;
CREATE TABLE intents (
    run_id TEXT NOT NULL, call INTEGER NOT NULL, tool TEXT NOT NULL,
    arguments TEXT NOT NULL, time REAL NOT NULL,
    PRIMARY KEY (run_id, call)
) WITHOUT ROWID;
CREATE TABLE outcomes (
    run_id TEXT NOT NULL, call INTEGER NOT NULL, succeeded INTEGER NOT NULL,
    writes TEXT NOT NULL, output TEXT NOT NULL, error TEXT NOT NULL,
    attempts INTEGER NOT NULL, started REAL, finished REAL,
    PRIMARY KEY (run_id, call)
) WITHOUT ROWID;
CREATE TABLE writes (
    run_id TEXT NOT NULL, session INTEGER NOT NULL, seq INTEGER NOT NULL, call INTEGER,
    instance TEXT, path TEXT NOT NULL, method TEXT NOT NULL, value TEXT NOT NULL,
    time REAL NOT NULL,
    PRIMARY KEY (run_id, session, seq)
) WITHOUT ROWID;
CREATE TABLE events (
    run_id TEXT NOT NULL, n INTEGER NOT NULL, time REAL NOT NULL, event TEXT NOT NULL,
    call INTEGER, data TEXT,
    PRIMARY KEY (run_id, n)
) WITHOUT ROWID;
CREATE TABLE approvals (
    run_id TEXT NOT NULL, id TEXT NOT NULL, call INTEGER NOT NULL, label TEXT NOT NULL,
    tool TEXT NOT NULL, arguments TEXT NOT NULL, hash TEXT NOT NULL, requested REAL NOT NULL,
    decision TEXT, decided REAL,
    PRIMARY KEY (run_id, id)
) WITHOUT ROWID;
CREATE TABLE turns (
    run_id TEXT NOT NULL, turn INTEGER NOT NULL, request TEXT NOT NULL,
    answer TEXT NOT NULL, time REAL NOT NULL,
    PRIMARY KEY (run_id, turn)
) WITHOUT ROWID;
"""
    + _RETRIES
)
TABLES = ("meta", "runs", "intents", "outcomes", "writes", "events", "approvals", "turns")
"""The tables every version has (a newer version's are created by its migration)."""

MIGRATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "1": (
        "2",
        (
            "ALTER TABLE runs ADD COLUMN reason TEXT",
            "ALTER TABLE runs ADD COLUMN replaces TEXT",
            "ALTER TABLE runs ADD COLUMN replaced_by TEXT",
            _RETRIES,
        ),
    ),
}
"""Version -> (the next version, the statements that make it)."""


COLUMNS: dict[str, tuple[str, ...]] = {
    "intents": ("run_id", "call", "tool", "arguments", "time"),
    "outcomes": (
        "run_id", "call", "succeeded", "writes", "output", "error", "attempts", "started",
        "finished",
    ),
    "writes": (
        "run_id", "session", "seq", "call", "instance", "path", "method", "value", "time",
    ),
    "events": ("run_id", "n", "time", "event", "call", "data"),
    "turns": ("run_id", "turn", "request", "answer", "time"),
    "retries": ("run_id", "session", "call", "time", "status", "intent", "outcome"),
}  # fmt: skip
"""The columns, in order, of the tables rows are upserted into (whole rows)."""

KEYS: dict[str, tuple[str, ...]] = {
    "intents": ("run_id", "call"),
    "outcomes": ("run_id", "call"),
    "writes": ("run_id", "session", "seq"),
    "events": ("run_id", "n"),
    "turns": ("run_id", "turn"),
    "retries": ("run_id", "session", "call"),
    "approvals": ("run_id", "id"),
    "meta": ("key",),
}
"""Each table's primary key (what an upsert replaces on)."""

_POSTGRES_TYPES = (
    (" WITHOUT ROWID", ""),
    (" REAL", " DOUBLE PRECISION"),
    (" INTEGER", " BIGINT"),
)


def postgres_statement(statement: str) -> str:
    """A statement of :data:`SCHEMA` or :data:`MIGRATIONS` for PostgreSQL: the same
    tables and columns, SQLite's ``REAL`` as ``DOUBLE PRECISION``, ``INTEGER`` as
    ``BIGINT``, without ``WITHOUT ROWID`` (every JSON value stays JSON text)."""
    for sqlite, postgres in _POSTGRES_TYPES:
        statement = statement.replace(sqlite, postgres)
    return statement


class _Database(Protocol):
    """What :func:`migrate` needs of a journal's connection (``durable/backend.py``)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any: ...

    def begin_schema(self) -> None: ...

    def commit(self) -> None: ...

    def statement(self, sql: str) -> str: ...


def _version(db: _Database) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    return None if row is None else str(row[0])


def migrate(db: _Database) -> None:
    """Bring an open journal of an older version up to :data:`VERSION`, one step per
    transaction (a step another process made meanwhile is not made again).  A version
    this module does not know is left alone (the caller refuses it), and a journal of
    this version is only read."""
    while _version(db) in MIGRATIONS:
        db.begin_schema()
        step = MIGRATIONS.get(_version(db) or "")
        if step is not None:
            after, statements = step
            for statement in statements:
                db.execute(db.statement(statement))
            db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (after,))
        db.commit()
