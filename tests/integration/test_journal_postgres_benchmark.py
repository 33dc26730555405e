"""``python -m benchmarks.journal_postgres`` runs against a real PostgreSQL server and its
report has the promised shape (no timing asserts; docs/scale.md quotes its figures)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import journal_postgres
from benchmarks.postgres_server import Unavailable, start


@pytest.mark.integration("postgresql")
def test_the_postgresql_journal_benchmark_measures_every_configuration() -> None:
    pytest.importorskip("psycopg")
    try:
        server = start(durable=False)
    except Unavailable as exc:
        pytest.skip(f"PostgreSQL cannot start here: {exc}")
    try:
        results = journal_postgres.measure(server.url, 200, 1)
    finally:
        server.stop()
    assert set(results["us_per_call"]) == set(journal_postgres.NAMES)
    for figure in results["us_per_call"].values():
        assert figure["wall"] > 0 and figure["cpu"] >= 0
    report = journal_postgres.markdown(results)
    assert '| PostgreSQL, `synchronous="full"` |' in report
