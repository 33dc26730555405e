"""Durable runs retried from the failed step, aborted, and replaced (issue 27, point 6;
docs/durable.md, "Retry from the failed step", "Aborting a run", "Journal versions").

``journal_v1.db`` beside this file is a journal of version 1, made by obelisk before
this change with :data:`MAKE_V1` (``python -c MAKE_V1 journal_v1.db`` with that
obelisk on ``PYTHONPATH``): run ``failed-v1`` failed at ``#1 step`` (``flaky``), run
``paused-v1`` waits for a person's approval of ``#1 pay``."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk import Decision
from obelisk.interpreter.runtime.durable.journal import Journal

HERE = Path(__file__).parent
ORIGINAL = Path(os.environ.get("OBELISK_V1_SRC", "/nonexistent"))
"""The ``src`` of an obelisk that writes journals of version 1 (before format 2), named
by ``OBELISK_V1_SRC`` where one is at hand; the committed journal_v1.db covers the rest."""

MAKE_V1 = '''
import sys
import obelisk

@obelisk.tool
def step(name: str) -> str:
    """Fails for 'flaky' (in the process that made the journal)."""
    if name == "flaky":
        raise RuntimeError("flaky is down")
    return name.upper()

@obelisk.tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay (a person approves)."""
    return f"paid {amount}"

path = sys.argv[1]
obelisk.run_sync([
    {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
    {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    {"_tool": "step", "name": "†state.f", "_outputPath": "†state.g"},
], [step, pay], journal=path, run_id="failed-v1")
obelisk.run_sync([
    {"_tool": "step", "name": "b", "_outputPath": "†state.b"},
    {"_tool": "pay", "amount": 3, "_outputPath": "†state.paid"},
], [step, pay], journal=path, run_id="paused-v1")
'''

ran: Counter[str] = Counter()
failures: dict[str, int] = {}


@obelisk.tool
def step(name: str) -> str:
    """Fails for 'flaky' (in the process that made the journal)."""
    ran[name] += 1
    if failures.get(name, 0) > 0:
        failures[name] -= 1
        raise RuntimeError(f"{name} is down")
    return name.upper()


@obelisk.tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay (a person approves)."""
    ran["pay"] += 1
    return f"paid {amount}"


TOOLS = [step, pay]
PLAN: list[dict[str, Any]] = [
    {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
    {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    {"_tool": "step", "name": "†state.f", "_outputPath": "†state.g"},  # skipped: reads f
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()
    failures.clear()


def _failed(db: Path, run_id: str = "r") -> obelisk.RunResult:
    failures["flaky"] = 1
    result = obelisk.run_sync(PLAN, TOOLS, journal=db, run_id=run_id)
    assert result.status == "failed"
    return result


def test_a_failed_durable_run_is_retried_from_its_failed_step(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    with pytest.raises(obelisk.JournalError, match="--retry-failed"):
        obelisk.resume_sync("r", tools=TOOLS, journal=db)  # the message says how
    done = obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="failed")
    assert done.status == "completed"
    assert done.state == {"a": "A", "f": "FLAKY", "g": "FLAKY"}
    assert ran == Counter({"a": 1, "flaky": 2, "FLAKY": 1})
    with Journal(db) as book:
        shown = book.describe("r")
        [listed] = book.runs()
        events = [row[0] for row in book.db.execute("SELECT event FROM events ORDER BY n")]
    assert shown["status"] == listed["status"] == "completed"
    assert [c["status"] for c in shown["calls"]] == ["succeeded"] * 3
    [retry] = shown["retries"]  # what the failed attempt did is kept
    assert (retry["call"], retry["session"], retry["status"]) == (1, 1, "failed")
    assert retry["error"] == {"type": "RuntimeError", "message": "flaky is down"}
    assert events.count("call_failed") == 1 and "run_retried" in events
    assert events[-1] == "run_finished"
    with pytest.raises(obelisk.UsageError, match="it completed: nothing failed"):
        obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="failed")
    assert ran["a"] == 1


def test_a_durable_result_is_retried_through_its_journal(tmp_path: Path) -> None:
    failed = _failed(tmp_path / "runs.db")
    done = obelisk.resume_sync(failed, retry="failed")
    assert done.status == "completed" and done.run_id == "r"
    assert ran == Counter({"a": 1, "flaky": 2, "FLAKY": 1})


def test_a_retry_that_fails_again_is_kept_as_a_second_retry(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    failures["flaky"] = 1
    second = obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="failed")
    assert second.status == "failed"
    third = obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="failed")
    assert third.status == "completed" and ran["flaky"] == 3 and ran["a"] == 1
    with Journal(db) as book:
        retries = book.describe("r")["retries"]
    assert [(r["call"], r["session"]) for r in retries] == [(1, 1), (1, 2)]


def test_retry_errors(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    with pytest.raises(obelisk.UsageError, match="takes no decisions"):
        obelisk.resume_sync("r", {"0-x": True}, tools=TOOLS, journal=db, retry="failed")
    with pytest.raises(obelisk.UsageError, match="retry must be None"):
        obelisk.resume_sync("r", tools=TOOLS, journal=db, retry="everything")  # type: ignore[arg-type]
    paused = obelisk.run_sync([{"_tool": "pay", "amount": 1}], TOOLS, journal=db, run_id="p")
    assert paused.status == "awaiting_approval"
    with pytest.raises(obelisk.UsageError, match="it awaits approvals"):
        obelisk.resume_sync("p", tools=TOOLS, journal=db, retry="failed")
    assert ran["flaky"] == 1 and ran["pay"] == 0


def test_an_aborted_run_is_never_resumed(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    obelisk.run_sync([{"_tool": "pay", "amount": 1}], TOOLS, journal=db, run_id="p")
    with Journal(db) as book:
        book.abort("r", "the refund went out by hand")
        book.abort("p", "not needed")
        assert book.pending() == []  # an aborted run's approvals are no longer listed
        listed = {run["run_id"]: run for run in book.runs()}
        shown = book.describe("r")
    assert listed["r"]["status"] == listed["p"]["status"] == "aborted"
    assert listed["r"]["reason"] == shown["reason"] == "the refund went out by hand"
    for retry in (None, "failed"):
        with pytest.raises(obelisk.JournalError, match=r"aborted \(the refund went out by hand\)"):
            obelisk.resume_sync("r", tools=TOOLS, journal=db, retry=retry)  # type: ignore[arg-type]
    with pytest.raises(obelisk.JournalError, match="never resumed"):
        obelisk.resume_sync("p", tools=TOOLS, journal=db)
    assert ran == Counter({"a": 1, "flaky": 1})


def test_abort_errors(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="done")
    _failed(db)
    with Journal(db) as book:
        with pytest.raises(obelisk.JournalError, match="it completed"):
            book.abort("done", "x")
        with pytest.raises(obelisk.UsageError, match="needs a reason"):
            book.abort("r", " ")
        with pytest.raises(obelisk.JournalError, match="no run 'nope'"):
            book.abort("nope", "x")
        token, _ = book.lock("r")  # this process runs it
        with pytest.raises(obelisk.RunLocked, match="it was not aborted"):
            book.abort("r", "x")
        book.unlock("r", token, "failed")
        book.abort("r", "x")
        with pytest.raises(obelisk.JournalError, match=r"aborted already \(x\)"):
            book.abort("r", "y")


def test_a_run_that_replaces_another_records_the_link(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db, "old")
    with Journal(db) as book:
        book.abort("old", "wrong plan")
    new = obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="new", replaces="old")
    assert new.status == "completed"
    with Journal(db) as book:
        listed = {run["run_id"]: run for run in book.runs()}
        old_shown, new_shown = book.describe("old"), book.describe("new")
    assert listed["old"]["replaced_by"] == old_shown["replaced_by"] == "new"
    assert listed["new"]["replaces"] == new_shown["replaces"] == "old"
    assert listed["new"]["replaced_by"] is None and listed["old"]["replaces"] is None
    with pytest.raises(obelisk.JournalError, match="run 'new' replaces it"):
        obelisk.resume_sync("old", tools=TOOLS, journal=db, retry="failed")


def test_a_replaced_failed_run_is_not_retried(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db, "old")
    obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="new", replaces="old")
    with pytest.raises(obelisk.JournalError, match="was replaced by run 'new'"):
        obelisk.resume_sync("old", tools=TOOLS, journal=db, retry="failed")
    assert ran["flaky"] == 1


def test_replaces_errors(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db, "old")
    obelisk.run_sync([{"_tool": "pay", "amount": 1}], TOOLS, journal=db, run_id="p")
    with pytest.raises(obelisk.UsageError, match="needs journal="):
        obelisk.run_sync(PLAN, TOOLS, replaces="old")
    with pytest.raises(obelisk.JournalError, match="no run 'nope'"):
        obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="n1", replaces="nope")
    with pytest.raises(obelisk.JournalError, match="awaiting_approval, not over: abort it first"):
        obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="n2", replaces="p")
    obelisk.run_sync(PLAN[:1], TOOLS, journal=db, run_id="n3", replaces="old")
    with pytest.raises(obelisk.JournalError, match="replaced already, by run 'n3'"):
        obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="n4", replaces="old")
    with Journal(db) as book:
        names = [run["run_id"] for run in book.runs()]
    assert names == ["old", "p", "n3"]  # a refused run is not recorded


def _version(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return str(connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])


def _check_v1_journal(db: Path) -> None:
    """A journal of version 1 opens (migrated), lists, resumes and retries."""
    assert _version(db) == "1"
    with Journal(db) as book:
        listed = {run["run_id"]: run for run in book.runs()}
        [(run_id, pending)] = book.pending()
    assert _version(db) == "2"
    assert listed["failed-v1"]["status"] == "failed" and listed["failed-v1"]["reason"] is None
    assert listed["paused-v1"]["status"] == "awaiting_approval"
    assert run_id == "paused-v1" and pending.label == "#1 pay"
    paid = obelisk.resume_sync(
        "paused-v1", {pending.id: Decision.accept()}, tools=TOOLS, journal=db
    )
    assert paid.status == "completed" and paid.state == {"b": "B", "paid": "paid 3"}
    retried = obelisk.resume_sync("failed-v1", tools=TOOLS, journal=db, retry="failed")
    assert retried.status == "completed" and retried.state["g"] == "FLAKY"
    assert ran == Counter({"pay": 1, "flaky": 1, "FLAKY": 1})  # nothing that ran ran again
    with Journal(db) as book:
        assert book.describe("failed-v1")["retries"][0]["status"] == "failed"
    obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="next", replaces="failed-v1")


def test_a_version_1_journal_opens_resumes_and_lists(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    shutil.copyfile(HERE / "journal_v1.db", db)
    _check_v1_journal(db)


@pytest.mark.skipif(
    not ORIGINAL.is_dir(), reason="no obelisk of journal format 1 at hand (OBELISK_V1_SRC)"
)
def test_a_journal_made_by_the_original_code_opens_resumes_and_lists(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    environment = {**os.environ, "PYTHONPATH": str(ORIGINAL)}
    subprocess.run(
        [sys.executable, "-c", MAKE_V1, str(db)], env=environment, check=True, timeout=120
    )
    _check_v1_journal(db)


def test_a_journal_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    Journal(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
    with pytest.raises(
        obelisk.JournalError, match="has version '99'; this obelisk reads version 2"
    ):
        Journal(db)


@obelisk.tool(idempotent=True)
def ship(what: str) -> str:
    """Ship; the first call stops the process (KeyboardInterrupt)."""
    ran["ship"] += 1
    if ran["ship"] == 1:
        raise KeyboardInterrupt
    return f"shipped {what}"


def test_a_retry_stopped_halfway_is_resumed_as_usual(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    plan = [*PLAN, {"_tool": "ship", "what": "†state.g", "_outputPath": "†state.s"}]
    failures["flaky"] = 1
    tools = [*TOOLS, ship]
    assert obelisk.run_sync(plan, tools, journal=db, run_id="r").status == "failed"
    with pytest.raises(KeyboardInterrupt):  # the retry's process stops at #3 ship
        obelisk.resume_sync("r", tools=tools, journal=db, retry="failed")
    with Journal(db) as book:
        shown = book.describe("r")
    assert shown["status"] == "interrupted"
    assert [c["status"] for c in shown["calls"]] == [
        "succeeded",
        "succeeded",
        "succeeded",
        "unknown",
    ]
    done = obelisk.resume_sync("r", tools=tools, journal=db)  # ship is idempotent: run again
    assert done.status == "completed" and done.state["s"] == "shipped FLAKY"
    assert ran == Counter({"a": 1, "flaky": 2, "FLAKY": 1, "ship": 2})


def test_a_superseded_call_is_not_over_until_the_retry_ends_it(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    with Journal(db) as book:
        assert book.final("r")[1][0] == "failed"
        book.supersede("r", 1, {1: "failed"})  # as a retry does before it runs anything
        assert 1 not in book.final("r")
        assert book.describe("r")["calls"][1]["status"] == "waiting"
        assert book.progress("r").intents.keys() == {0}


def test_an_aborted_loop_is_never_resumed(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    turn = {"calls": [{"_tool": "step", "name": "a", "_outputPath": "†state.a"}], "output": None}
    with pytest.raises(obelisk.LoopStopped):  # the model runs out: the loop stops
        obelisk.Loop(obelisk.ScriptedModel([turn]), TOOLS, journal=db).run_sync({}, run_id="L")
    with Journal(db) as book:
        book.abort("L", "the customer hung up")
        with pytest.raises(obelisk.JournalError, match="abort the loop"):
            book.abort("L.t1", "x")
        assert {run["run_id"]: run["status"] for run in book.runs()}["L"] == "aborted"
    model = obelisk.ScriptedModel([])
    with pytest.raises(obelisk.JournalError, match=r"aborted: the customer hung up"):
        obelisk.Loop(model, TOOLS, journal=db).resume_sync("L")
    assert model.requests == [] and ran["a"] == 1


@obelisk.tool
async def slow(name: str) -> str:
    """Takes a while: a fail_fast run cancels it while it runs."""
    ran[name] += 1
    await asyncio.sleep(0.2)
    return f"{name}!"


def test_calls_cancelled_by_fail_fast_run_again_on_a_durable_retry(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    plan = [
        {"_tool": "slow", "name": "s", "_outputPath": "†state.s"},
        {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
        {"_tool": "step", "name": "†state.s", "_outputPath": "†state.t"},
    ]
    failures["flaky"] = 1
    tools = [*TOOLS, slow]
    failed = obelisk.run_sync(plan, tools, journal=db, run_id="r", fail_fast=True)
    assert [c.status for c in failed.calls] == ["cancelled", "failed", "cancelled"]
    done = obelisk.resume_sync("r", tools=tools, journal=db, retry="failed")
    assert done.status == "completed" and done.state == {"s": "s!", "f": "FLAKY", "t": "S!"}
    assert ran == Counter({"s": 2, "flaky": 2, "s!": 1})
    with Journal(db) as book:
        retries = book.describe("r")["retries"]
    # #2 never started: it had nothing to supersede, and runs all the same
    assert [(r["call"], r["status"]) for r in retries] == [(0, "cancelled"), (1, "failed")]


def test_a_run_aborted_after_resume_looked_at_it_is_not_locked(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _failed(db)
    with Journal(db) as book:
        book.abort("r", "too late")
        with pytest.raises(obelisk.JournalError, match=r"aborted \(too late\)"):
            book.lock("r")  # what a resume that read the row before the abort reaches
        assert book.run_row("r").status == "aborted"
    _failed(db, "r2")
    with Journal(db) as book:
        obelisk.run_sync(PLAN[:1], TOOLS, journal=book, run_id="new", replaces="r2")
        with pytest.raises(obelisk.JournalError, match="was replaced by run 'new'"):
            book.lock("r2")
