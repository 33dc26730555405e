"""The journal's semantics on both of its backends (docs/durable.md, docs/scale.md): every
test runs once on an SQLite file and once on a real PostgreSQL server
(``journal="postgresql://..."``; those variants are ``integration("postgresql")`` tests,
see conftest.py), with the same assertions.  A run is journaled, listed and described;
a paused run is decided and resumed from another opening; a call in flight at a stop is
run again or held unknown; a failed run is retried, aborted and replaced; a run held by
another opening is locked; a journal of version 1 is migrated and a newer one refused;
a durable loop resumes; several processes write runs at once, and only one resumes a
given run."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk import Decision, Resolution
from obelisk.interpreter.runtime.durable.journal import Journal

BACKENDS = [  # the fixture journal_at (conftest.py) gives a journal of each
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.integration("postgresql")),
]
pytestmark = pytest.mark.parametrize("backend", BACKENDS)

Where = Callable[[str], str]
ran: Counter[str] = Counter()
failures: Counter[str] = Counter()
STOP = {"at": ""}


@obelisk.tool
def step(name: str) -> str:
    """Upper-cases ``name``; fails while ``failures`` says so; stops the process when told."""
    ran[name] += 1
    if STOP["at"] == name:
        STOP["at"] = ""
        raise KeyboardInterrupt
    if failures[name] > 0:
        failures[name] -= 1
        raise RuntimeError(f"{name} is down")
    return name.upper()


@obelisk.tool(idempotent=True)
def ship(what: str) -> str:
    """Ship (idempotent: run again when in flight at a stop)."""
    ran["ship"] += 1
    if STOP["at"] == "ship":
        STOP["at"] = ""
        raise KeyboardInterrupt
    return f"shipped {what}"


@obelisk.tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay (a person approves)."""
    ran["pay"] += 1
    return f"paid {amount}"


TOOLS = [step, ship, pay]
PLAN: list[dict[str, Any]] = [
    {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
    {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    {"_tool": "step", "name": "†state.f", "_outputPath": "†state.g"},
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()
    failures.clear()
    STOP["at"] = ""


def _raw(location: str, *statements: str) -> None:
    """Run SQL on the journal's database directly (as a damaged or older journal)."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)  # type: ignore[arg-type]
        return
    with sqlite3.connect(location) as connection:
        for statement in statements:
            connection.execute(statement)


def test_a_run_is_journaled_listed_and_described(journal_at: Where) -> None:
    db = journal_at("runs")
    state = {"text": "é ✓ \u2028 \\ 'quoted' %s ?", "big": 2**62, "x": 0.1}
    plan = [*PLAN[:1], {"_tool": "step", "name": "†state.a", "_outputPath": "†state.b"}]
    done = obelisk.run_sync(plan, TOOLS, journal=db, run_id="r1", state=state)
    assert done.status == "completed" and done.run_id == "r1"
    with Journal(db) as book:
        [listed] = book.runs()
        shown = book.describe("r1")
        row = book.run_row("r1")
    assert listed["run_id"] == "r1" and listed["status"] == "completed" and listed["calls"] == 2
    assert [c["status"] for c in shown["calls"]] == ["succeeded", "succeeded"]
    assert shown["locked_by"] is None and shown["writes"] == 2
    assert row.state == state  # JSON text round trips, whatever it holds
    assert shown["calls"][0]["idempotency_key"].startswith("r1/0/")
    with pytest.raises(obelisk.JournalError, match="already exists"):
        obelisk.run_sync(plan, TOOLS, journal=db, run_id="r1")
    with pytest.raises(obelisk.JournalError, match="is over"):
        obelisk.resume_sync("r1", tools=TOOLS, journal=db)
    with pytest.raises(obelisk.JournalError, match="no run 'nope'"):
        Journal(db).describe("nope")


def test_a_paused_run_is_decided_in_another_opening_and_resumed(journal_at: Where) -> None:
    db = journal_at("runs")
    plan = [PLAN[0], {"_tool": "pay", "amount": 5, "_outputPath": "†state.p"}]
    paused = obelisk.run_sync(plan, TOOLS, journal=db, run_id="p")
    assert paused.status == "awaiting_approval" and ran == Counter({"a": 1})
    with Journal(db) as book:
        [(run_id, pending)] = book.pending()
        assert run_id == "p" and pending.arguments == {"amount": 5}
        assert book.decide(pending.id, Decision.accept()) == "p"
        with pytest.raises(obelisk.ApprovalError, match="decided already"):
            book.decide(pending.id, Decision.accept())
    with Journal(db) as book:
        assert book.pending() == []
        done = obelisk.resume_sync("p", tools=TOOLS, journal=book)
    assert done.status == "completed" and done.state == {"a": "A", "p": "paid 5"}
    assert ran == Counter({"a": 1, "pay": 1})


def test_a_call_in_flight_runs_again_if_idempotent_and_is_otherwise_unknown(
    journal_at: Where,
) -> None:
    db = journal_at("runs")
    plan = [
        {"_tool": "ship", "what": "box", "_outputPath": "†state.s"},
        {"_tool": "step", "name": "charge", "_outputPath": "†state.c"},
    ]
    STOP["at"] = "ship"
    with pytest.raises(KeyboardInterrupt):
        obelisk.run_sync(plan, TOOLS, journal=db, run_id="r", concurrency=1)
    with Journal(db) as book:
        assert book.describe("r")["status"] == "interrupted"
    done = obelisk.resume_sync("r", tools=TOOLS, journal=db)
    assert done.status == "completed" and done.state == {"s": "shipped box", "c": "CHARGE"}
    assert ran == Counter({"ship": 2, "charge": 1})

    ran.clear()
    STOP["at"] = "charge"  # a call with side effects in flight: unknown until a person says
    with pytest.raises(KeyboardInterrupt):
        obelisk.run_sync(plan[1:], TOOLS, journal=db, run_id="u")
    held = obelisk.resume_sync("u", tools=TOOLS, journal=db)
    assert held.status == "unknown" and [u.label for u in held.unknown] == ["#0 step"]
    with Journal(db) as book:
        assert [u["call"] for u in book.describe("u")["unknown"]] == [0]
    done = obelisk.resume_sync(
        "u", tools=TOOLS, journal=db, unknown={0: Resolution.succeeded("CHARGED")}
    )
    assert done.status == "completed" and done.state == {"c": "CHARGED"}
    assert ran == Counter({"charge": 1})


def test_a_failed_run_is_retried_aborted_and_replaced(journal_at: Where) -> None:
    db = journal_at("runs")
    failures["flaky"] = 1
    assert obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="r").status == "failed"
    done = obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="failed")
    assert done.status == "completed" and done.state == {"a": "A", "f": "FLAKY", "g": "FLAKY"}
    assert ran == Counter({"a": 1, "flaky": 2, "FLAKY": 1})
    with Journal(db) as book:
        [retry] = book.describe("r")["retries"]
    assert (retry["call"], retry["session"], retry["status"]) == (1, 1, "failed")

    failures["flaky"] = 1
    assert obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="old").status == "failed"
    with Journal(db) as book:
        book.abort("old", "wrong plan")
        with pytest.raises(obelisk.JournalError, match="aborted already"):
            book.abort("old", "again")
    with pytest.raises(obelisk.JournalError, match=r"aborted \(wrong plan\)"):
        obelisk.resume_sync("old", tools=TOOLS, journal=db, retry="failed")
    obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="new", replaces="old")
    with Journal(db) as book:
        listed = {run["run_id"]: run for run in book.runs()}
    assert listed["old"]["replaced_by"] == "new" and listed["new"]["replaces"] == "old"
    assert list(listed) == ["r", "old", "new"]


def test_a_run_held_by_another_opening_is_locked(journal_at: Where) -> None:
    db = journal_at("runs")
    failures["flaky"] = 1
    plan = [PLAN[0], {"_tool": "pay", "amount": 5, "_outputPath": "†state.p"}]
    assert obelisk.run_sync(plan, TOOLS, journal=db, run_id="r").status == "awaiting_approval"
    holder, other = Journal(db), Journal(db)
    try:
        token, session = holder.lock("r")
        assert session == 1
        assert other.describe("r")["locked_by"] is not None
        with pytest.raises(obelisk.RunLocked, match="run 'r' is being run by"):
            obelisk.resume_sync("r", tools=TOOLS, journal=other)
        with pytest.raises(obelisk.RunLocked, match="it was not aborted"):
            other.abort("r", "stop")
        holder.unlock("r", token, "awaiting_approval")
        assert other.describe("r")["locked_by"] is None
        [(_, pending)] = other.pending()
        other.decide(pending.id, True)
        done = obelisk.resume_sync("r", tools=TOOLS, journal=other)
        assert done.status == "completed"
    finally:
        holder.close()
        other.close()


def test_a_journal_of_version_1_is_migrated_and_a_newer_one_refused(
    journal_at: Where,
) -> None:
    db = journal_at("runs")
    failures["flaky"] = 1
    assert obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="failed-v1").status == "failed"
    _raw(
        db,
        "ALTER TABLE runs DROP COLUMN reason",
        "ALTER TABLE runs DROP COLUMN replaces",
        "ALTER TABLE runs DROP COLUMN replaced_by",
        "DROP TABLE retries",
        "UPDATE meta SET value = '1' WHERE key = 'version'",
    )  # what version 1 lacked
    with Journal(db) as book:
        [listed] = book.runs()
        assert listed["status"] == "failed" and listed["reason"] is None
    done = obelisk.resume_sync("failed-v1", tools=TOOLS, journal=db, retry="failed")
    assert done.status == "completed"
    _raw(db, "UPDATE meta SET value = '99' WHERE key = 'version'")
    with pytest.raises(
        obelisk.JournalError, match="has version '99'; this obelisk reads version 2"
    ):
        Journal(db)


def test_a_foreign_database_or_a_missing_journal_is_refused(journal_at: Where) -> None:
    missing = journal_at("missing")
    if missing.endswith(".db"):
        with pytest.raises(obelisk.JournalError, match="no journal at"):
            Journal(missing, create=False)
    else:
        with pytest.raises(obelisk.JournalError, match="no journal at"):
            Journal(missing, create=False)
    foreign = journal_at("foreign")
    _raw(foreign, "CREATE TABLE customers (name TEXT)")
    with pytest.raises(obelisk.JournalCorrupted, match="not an obelisk run journal"):
        Journal(foreign)


def test_a_durable_loop_resumes_without_asking_the_model_again(journal_at: Where) -> None:
    db = journal_at("runs")
    turn = {"calls": [{"_tool": "step", "name": "a", "_outputPath": "†state.a"}], "output": None}
    with pytest.raises(obelisk.LoopStopped):  # the model runs out: the loop stops
        obelisk.Loop(obelisk.ScriptedModel([turn]), TOOLS, journal=db).run_sync({}, run_id="L")
    model = obelisk.ScriptedModel([{"calls": [], "output": "†state.a"}])
    result = obelisk.Loop(model, TOOLS, journal=db).resume_sync("L")
    assert result.output == "A" and ran == Counter({"a": 1})
    assert len(model.requests) == 1  # only the turn after the journaled one


def _write_runs(location: str, worker: int, count: int) -> None:
    """In a child process: ``count`` runs into the shared journal."""
    for n in range(count):
        result = obelisk.run_sync(PLAN[:1], TOOLS, journal=location, run_id=f"w{worker}-{n}")
        assert result.status == "completed", result.status


def test_several_processes_write_runs_into_one_journal_at_once(journal_at: Where) -> None:
    db = journal_at("runs")
    Journal(db).close()
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_write_runs, args=(db, w, 5)) for w in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(120)
    assert [child.exitcode for child in children] == [0, 0, 0]
    with Journal(db) as book:
        listed = book.runs()
    assert sorted(run["run_id"] for run in listed) == sorted(
        f"w{w}-{n}" for w in range(3) for n in range(5)
    )
    assert {run["status"] for run in listed} == {"completed"}


def _resume_in_child(location: str, outcomes: Any, count: Path) -> None:
    """In a child process: resume run ``r``, noting how it went and each tool call."""

    @obelisk.tool(name="step")
    def counted(name: str) -> str:
        with count.open("a") as file:
            file.write(name + "\n")
        import time

        time.sleep(0.5)  # long enough for the other process to try meanwhile
        return name.upper()

    try:
        obelisk.resume_sync("r", tools=[counted, ship, pay], journal=location)
        outcomes.put("resumed")
    except obelisk.RunLocked as exc:
        outcomes.put(f"locked: {exc}")
    except obelisk.JournalError as exc:
        outcomes.put(f"over: {exc}")


def test_only_one_process_resumes_a_run_at_a_time(journal_at: Where, tmp_path: Path) -> None:
    db = journal_at("runs")
    STOP["at"] = "a"
    with pytest.raises(KeyboardInterrupt):  # stopped before it ran anything
        obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="r")
    _raw(db, "DELETE FROM intents")  # nothing in flight: the resume runs #0 again
    count = tmp_path / "count.txt"
    context = multiprocessing.get_context("fork")
    outcomes = context.Queue()
    children = [
        context.Process(target=_resume_in_child, args=(db, outcomes, count)) for _ in range(2)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(120)
    seen = sorted(outcomes.get(timeout=10) for _ in children)
    assert seen[1] == "resumed", seen
    refused = ("locked: run 'r' is being run by", "locked: run 'r' was taken", "over: run 'r' is")
    assert seen[0].startswith(refused), seen  # what the other process got, by its timing
    assert count.read_text().splitlines() == ["a"]  # the tool ran once


def test_a_run_left_by_a_process_on_another_host_is_free_at_once_in_postgresql(
    journal_at: Where, backend: str
) -> None:
    """The one difference (docs/scale.md, "The locking rule"): SQLite trusts another
    host's recent heartbeat for 60 s; PostgreSQL knows the process's connection is gone."""
    db = journal_at("runs")
    STOP["at"] = "a"
    with pytest.raises(KeyboardInterrupt):
        obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="r")
    elsewhere = '{"pid": 1, "host": "elsewhere", "start": null, "token": "t", "since": 0}'
    _raw(
        db,
        "DELETE FROM intents",
        f"UPDATE runs SET status = 'running', owner = '{elsewhere}', heartbeat = {time.time()}",
    )  # as a process on another machine leaves a run when it dies
    with Journal(db) as book:
        assert book.ready() == ([] if backend == "sqlite" else ["r"])
    if backend == "sqlite":
        with pytest.raises(obelisk.RunLocked, match="process 1 on elsewhere"):
            obelisk.resume_sync("r", tools=TOOLS, journal=db)
    else:
        assert obelisk.resume_sync("r", tools=TOOLS, journal=db).status == "completed"


def test_a_resume_that_finds_the_run_taken_up_meanwhile_runs_nothing(journal_at: Where) -> None:
    db = journal_at("runs")
    assert obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="r").status == "completed"
    with Journal(db) as book:  # it read "interrupted"; another process finished the run since
        with pytest.raises(obelisk.RunLocked, match="taken up by another process meanwhile"):
            book.lock("r", "interrupted")
        assert book.describe("r")["status"] == "completed" and book.runs()[0]["status"] == (
            "completed"
        )


def test_ready_lists_the_runs_a_worker_takes_up(journal_at: Where) -> None:
    db = journal_at("runs")
    STOP["at"] = "a"
    with pytest.raises(KeyboardInterrupt):  # interrupted: ready
        obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="stopped")
    paused_plan = [{"_tool": "pay", "amount": 5, "_outputPath": "†state.p"}]
    obelisk.run_sync(paused_plan, TOOLS, journal=db, run_id="paused")  # waits for a person
    obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="done")
    obelisk.run_sync(paused_plan, TOOLS, journal=db, run_id="gone")
    with Journal(db) as book:
        book.abort("gone", "no longer wanted")
        assert book.ready() == ["stopped"]
        [(_, pending)] = book.pending("paused")
        book.decide(pending.id, Decision.accept())
        assert sorted(book.ready()) == ["paused", "stopped"]
