"""The SQL a run journal's two databases do not share (docs/durable.md, docs/scale.md).

:class:`Backend` is the small interface the store writes through: ``execute`` and
``executemany`` with ``?`` placeholders (as :mod:`sqlite3` takes them), transactions
(:meth:`Backend.begin`, :meth:`Backend.commit`, :meth:`Backend.rollback`), upserts
(:meth:`Backend.upsert`, :meth:`Backend.insert_new`), the names of the tables, the
whole-file check, the commit level, and the run locks that a database can hold for a
process (:meth:`Backend.claim`).  :class:`SQLiteBackend` is one SQLite file in WAL mode;
:class:`~obelisk.interpreter.runtime.durable.postgres.PostgresBackend` a PostgreSQL
database shared by many processes.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from obelisk.errors import JournalError
from obelisk.interpreter.runtime.durable.schema import COLUMNS, SCHEMA

if TYPE_CHECKING:
    import sqlite3

__all__ = ["Backend", "Rows", "SQLiteBackend", "sqlite3_module"]


class Rows(Protocol):
    """What ``execute`` returns: a DB-API cursor's reading side."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Any: ...


def sqlite3_module() -> ModuleType:
    """The :mod:`sqlite3` module, imported when first needed and not with this module:
    most runs keep no journal, and ``obelisk run`` does not load it."""
    import sqlite3

    return sqlite3


class Backend:
    """One journal's connection, and the SQL that differs between databases.

    Subclasses set ``name`` (``"an SQLite"``, shown in messages), ``errors`` (the exception types of
    their driver), ``damaged`` (what their messages say of a damaged journal),
    ``for_update`` (appended to a ``SELECT`` of a row the transaction then changes)
    and implement the methods below."""

    name = "a"
    errors: tuple[type[BaseException], ...] = ()
    damaged: tuple[str, ...] = ()
    for_update = ""
    exists = True
    """Whether the journal existed before it was opened (its tables may not)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Rows:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    @property
    def in_transaction(self) -> bool:
        raise NotImplementedError

    def begin(self) -> None:
        """Start a transaction that writes (SQLite takes its write lock now)."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Set the connection up, once it is known to hold a journal or nothing."""

    def begin_schema(self) -> None:
        """Start a transaction that makes or migrates the tables, one process at a time."""
        self.begin()

    def batch(self) -> contextlib.AbstractContextManager[Any]:
        """Send the statements made inside it together (PostgreSQL's pipeline mode: one
        round trip for a whole transaction that reads nothing back); SQLite, in the
        process, has nothing to save."""
        return contextlib.nullcontext()

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")

    def close(self) -> None:
        raise NotImplementedError

    def tables(self) -> set[str]:
        """The names of the tables there are."""
        raise NotImplementedError

    def schema(self) -> Sequence[str]:
        """The statements that make a new journal's tables."""
        return [s for s in SCHEMA.split(";") if s.strip()]

    def statement(self, sql: str) -> str:
        """A statement of :mod:`~obelisk.interpreter.runtime.durable.schema`'s
        migrations, in this database's words."""
        return sql

    def check(self) -> list[str]:
        """Problems a whole-journal check finds (``["ok"]``: none)."""
        return ["ok"]

    def set_level(self, level: str) -> None:
        """How durable the next commits are: ``"NORMAL"`` or ``"FULL"``."""

    def upsert(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        """Insert ``rows`` (every column of ``table``), replacing those of the same key."""
        raise NotImplementedError

    def insert_new(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
        """Insert ``rows`` of ``columns``, leaving those whose key exists alone; returns
        how many were inserted (for one row: 1 or 0)."""
        raise NotImplementedError

    # -- run locks the database holds for a process --------------------------------------
    def claim(self, run_id: str) -> bool:
        """Take run ``run_id``'s lock in the database for this connection: ``False`` when
        another connection holds it.  SQLite holds none (the ``owner`` column does)."""
        return True

    def release(self, run_id: str) -> None:
        """Give back what :meth:`claim` took."""

    def held(self, run_id: str) -> bool | None:
        """Whether some connection holds run ``run_id``'s lock; ``None`` when the
        database holds no locks (then the ``owner`` column's process is asked)."""
        return None


@functools.lru_cache(maxsize=16)
def _replace(table: str) -> str:
    """SQLite's upsert of whole rows of ``table``."""
    return f"INSERT OR REPLACE INTO {table} VALUES ({', '.join('?' * len(COLUMNS[table]))})"


class SQLiteBackend(Backend):
    """One SQLite file in WAL mode (the standard library's :mod:`sqlite3`)."""

    name = "an SQLite"
    damaged = (
        "malformed",
        "not a database",
        "no such table",
        "no such column",
        "Could not decode to UTF-8",
    )

    def __init__(self, path: str, *, create: bool) -> None:
        sqlite = sqlite3_module()
        self.path = path
        self.errors = (sqlite.Error,)
        self.exists = os.path.exists(path) and os.path.getsize(path) > 0
        self.connection: sqlite3.Connection = sqlite.connect(
            path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._level = "NORMAL"

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Rows:
        return self.connection.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)

    @property
    def in_transaction(self) -> bool:
        return self.connection.in_transaction

    def begin(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def prepare(self) -> None:
        """WAL mode (:class:`JournalError` where the file cannot use it)."""
        mode = self.connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal {self.path!r} cannot use WAL mode ({mode})", self.path)
        self.connection.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        self.connection.close()

    def tables(self) -> set[str]:
        return {row[0] for row in self.connection.execute("SELECT name FROM sqlite_master")}

    def check(self) -> list[str]:
        return [str(row[0]) for row in self.connection.execute("PRAGMA quick_check(5)")]

    def set_level(self, level: str) -> None:
        if level != self._level:
            self.connection.execute(f"PRAGMA synchronous={level}")
            self._level = level

    def upsert(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        self.connection.executemany(_replace(table), rows)

    def insert_new(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
        marks = ", ".join("?" * len(columns))
        cursor = self.connection.executemany(
            f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows
        )
        return int(cursor.rowcount)
