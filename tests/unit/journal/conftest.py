"""The journal's two backends for the tests of this folder (docs/durable.md, docs/scale.md).

``postgres_server`` (session-scoped) starts a real PostgreSQL server on loopback in a
temporary folder (``benchmarks/postgres_server.py``: ``initdb`` and ``pg_ctl``, as the
``postgres`` user when the tests run as root) and stops it when the session ends; where
it cannot start, or psycopg is not installed, the test is skipped with the reason.
``journal_at`` gives, per test, a factory of fresh journal locations of the backend the
test is parametrized with (``backend``: ``"sqlite"`` or ``"postgresql"``): a file in
``tmp_path`` for SQLite, a new schema of the server's database
(``?options=-csearch_path=...``) for PostgreSQL.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.postgres_server import Server, Unavailable, start

_schemas = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A PostgreSQL server on loopback for the whole session (skips where it cannot start)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[postgres]')")
    try:
        server = start(durable=False)
    except Unavailable as exc:
        pytest.skip(f"PostgreSQL cannot start here: {exc}")
    try:
        yield server
    finally:
        server.stop()


def fresh_schema(server: Server) -> str:
    """A URL of a new, empty schema of ``server``'s database."""
    import psycopg

    name = f"t{next(_schemas)}"
    with psycopg.connect(server.url, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        connection.execute(f"CREATE SCHEMA {name}")
    return f"{server.url}?options=-csearch_path%3D{name}"


@pytest.fixture
def journal_at(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[[str], str]:
    """``journal_at(name)``: the location of a fresh journal ``name`` of ``backend``."""
    if backend == "sqlite":
        return lambda name: str(tmp_path / f"{name}.db")
    server: Any = request.getfixturevalue("postgres_server")
    made: dict[str, str] = {}

    def location(name: str) -> str:
        if name not in made:
            made[name] = fresh_schema(server)
        return made[name]

    return location
