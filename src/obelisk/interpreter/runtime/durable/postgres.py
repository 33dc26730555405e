"""A run journal in PostgreSQL, shared by many processes (docs/scale.md).

:class:`PostgresBackend` is the :class:`~obelisk.interpreter.runtime.durable.backend.Backend`
of a ``postgresql://`` journal, through psycopg 3 (the ``postgres`` extra, imported
when such a journal is first opened).  The tables are the SQLite journal's, with
PostgreSQL's types (:func:`~obelisk.interpreter.runtime.durable.schema.postgres_statement`);
the store's ``?`` placeholders become psycopg's ``%s``.

Durability: ``synchronous="normal"`` commits with ``synchronous_commit=off`` and
``"full"`` with ``on`` (:meth:`PostgresBackend.set_level`), the SQLite journal's rule.

Locks: a transaction that changes a run locks its row (``SELECT ... FOR UPDATE``), and
the process that runs a run holds a session-level advisory lock on it
(:meth:`PostgresBackend.claim`) for as long as its connection lives.  So a second
process that tries to resume it gets :class:`~obelisk.errors.RunLocked` at once, and a
run whose process died (its connection closed) is free at once, on any host.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from obelisk.errors import JournalError
from obelisk.interpreter.runtime.durable.backend import Backend, Rows
from obelisk.interpreter.runtime.durable.schema import COLUMNS, KEYS, postgres_statement

__all__ = ["PostgresBackend", "is_postgres", "shown"]

_PREFIXES = ("postgresql://", "postgres://")


def is_postgres(location: object) -> bool:
    """Whether ``location`` is a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(_PREFIXES)


def shown(url: str) -> str:
    """``url`` with its password, if it has one, as ``***`` (for messages)."""
    return re.sub(r"^([a-z]+://[^:/@]*:)[^@/]*@", r"\1***@", url)


@functools.lru_cache(maxsize=512)
def _sql(text: str) -> str:
    """The store's SQL (``?`` placeholders) in psycopg's words (``%s``; ``%`` doubled)."""
    return text.replace("%", "%%").replace("?", "%s")


_COMMITS = {"NORMAL": "off", "FULL": "on"}


def _keys(name: str) -> tuple[int, int]:
    """The two 31-bit keys of the advisory lock named ``name``."""
    digest = hashlib.sha256(name.encode()).digest()
    return (
        int.from_bytes(digest[:4], "big") & 0x7FFFFFFF,
        int.from_bytes(digest[4:8], "big") & 0x7FFFFFFF,
    )


def _psycopg() -> Any:
    """psycopg 3, imported when a PostgreSQL journal is first opened."""
    try:
        import psycopg
    except ImportError:
        raise JournalError(
            "a postgresql:// journal needs psycopg 3: pip install 'obelisk[postgres]'"
        ) from None
    return psycopg


class PostgresBackend(Backend):
    """A journal in the PostgreSQL database at ``url`` (its current schema), through
    one psycopg connection in autocommit mode with explicit transactions."""

    name = "a PostgreSQL"
    damaged = ("does not exist",)
    for_update = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        self._level = ""
        psycopg = _psycopg()
        self.errors = (psycopg.Error,)
        self._idle = psycopg.pq.TransactionStatus.IDLE
        try:
            self.connection = psycopg.connect(url, autocommit=True)
            self._schema = str(self.connection.execute("SELECT current_schema()").fetchone()[0])
            self.exists = bool(self.tables())
            self.set_level("NORMAL")
        except psycopg.Error as exc:
            text = " ".join(str(exc).split())
            raise JournalError(f"cannot open journal {shown(url)!r}: {text}", shown(url)) from None

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Rows:
        result: Rows = self.connection.execute(_sql(sql), parameters)
        return result

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(_sql(sql), rows)

    @property
    def in_transaction(self) -> bool:
        return bool(self.connection.info.transaction_status != self._idle)

    def begin(self) -> None:
        self.connection.execute("BEGIN")

    def set_level(self, level: str) -> None:
        """``"NORMAL"``: ``synchronous_commit=off`` (a commit is the server's at once,
        and reaches its disk within ``3 x wal_writer_delay``, 0.6 s by default: a crash of
        the server or its machine may lose the last ones, as a power cut may lose
        SQLite's); ``"FULL"``: ``on``, flushed to disk before the commit returns."""
        if level != self._level:
            self.connection.execute(f"SET synchronous_commit = {_COMMITS[level]}")
            self._level = level

    def batch(self) -> contextlib.AbstractContextManager[Any]:
        return self.connection.pipeline()  # type: ignore[no-any-return]

    def begin_schema(self) -> None:
        self.connection.execute("BEGIN")
        self.connection.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", _keys(f"obelisk schema {self._schema}")
        )

    def close(self) -> None:
        self.connection.close()

    def tables(self) -> set[str]:
        rows = self.connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (self._schema,),
        )
        return {str(row[0]) for row in rows}

    def schema(self) -> Sequence[str]:
        return [postgres_statement(s) for s in super().schema()]

    def statement(self, sql: str) -> str:
        return postgres_statement(sql)

    def upsert(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        self.executemany(_upsert(table), rows)

    def insert_new(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
        marks = ", ".join("%s" for _ in columns)
        with self.connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) "
                "ON CONFLICT DO NOTHING",
                rows,
            )
            return int(cursor.rowcount)

    # -- run locks: session-level advisory locks ------------------------------------------
    def _run_keys(self, run_id: str) -> tuple[int, int]:
        return _keys(f"obelisk run {self._schema}/{run_id}")

    def claim(self, run_id: str) -> bool:
        row = self.connection.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", self._run_keys(run_id)
        ).fetchone()
        return bool(row[0])

    def release(self, run_id: str) -> None:
        self.connection.execute("SELECT pg_advisory_unlock(%s, %s)", self._run_keys(run_id))

    def held(self, run_id: str) -> bool:
        row = self.connection.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 2)",
            self._run_keys(run_id),
        ).fetchone()
        return bool(row[0])


@functools.lru_cache(maxsize=16)
def _upsert(table: str) -> str:
    """``INSERT ... ON CONFLICT (key) DO UPDATE`` of whole rows of ``table`` (``?`` marks)."""
    columns, key = COLUMNS[table], KEYS[table]
    rest = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
    return (
        f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {rest}"
    )
