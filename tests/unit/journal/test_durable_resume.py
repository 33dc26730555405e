"""Resuming durable runs (docs/durable.md): a run whose calls all settled is rebuilt
from the journal alone, exactly as the engine would replay it; a paused run is
decided and resumed across separate openings of the journal."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk import Decision
from obelisk.interpreter.runtime.durable.journal import Journal

RAN: list[str] = []


@obelisk.tool
def echo(value: Any) -> Any:
    """Return value."""
    RAN.append("echo")
    return value


@obelisk.tool
def explode(n: int) -> int:
    """Always fails."""
    RAN.append("explode")
    raise RuntimeError(f"boom {n}")


@obelisk.tool(requires_approval=True)
def refund(amount: int) -> str:
    """Give money back (a person approves)."""
    RAN.append("refund")
    return f"refunded {amount}"


TOOLS = [echo, explode, refund]
PLAN: list[dict[str, Any]] = [
    {"_tool": "echo", "value": {"a": 1}, "_outputPath": "†state.doc"},
    {"_tool": "echo", "value": {"b": 2}, "_outputPath": "†state.doc", "_outputMethod": "merge"},
    {"_tool": "echo", "value": "x", "_outputPath": "†state.tags", "_outputMethod": "push"},
    {"_tool": "echo", "value": "y", "_outputPath": "†state.tags", "_outputMethod": "push"},
    {"_tool": "explode", "n": 3, "_outputPath": "†state.bad", "_id": "bad"},
    {"_tool": "echo", "value": "†state.bad", "_outputPath": "†state.never"},
    {"_tool": "echo", "value": "†state.doc.b", "_outputPath": "†state.copy", "_instance": "i1"},
    {"_tool": "echo", "value": [1, 2], "_outputPath": "†state.list", "_outputMethod": "concat"},
]


def _interrupted_copy(tmp: Path, name: str) -> Path:
    source = tmp / "source.db"
    if not source.exists():
        obelisk.run_sync(PLAN, TOOLS, journal=source, run_id="r")
        with Journal(source) as book:  # as if it crashed after its last commit
            book.set_status("r", "interrupted")
    copy = tmp / name
    shutil.copyfile(source, copy)
    return copy


def _shape(result: obelisk.RunResult) -> Any:
    records = [
        (r.status, r.output, r.error, r.reason, r.untaken, r.arguments, r.attempts)
        for r in result.calls
    ]
    writes = sorted((e.call, e.path, e.method, repr(e.value), e.instance) for e in result.log)
    return result.status, result.state, result.instances, records, writes


def test_a_settled_run_is_rebuilt_from_the_journal_as_the_engine_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from obelisk.interpreter.runtime.durable import runs as durable

    fast_db, engine_db = _interrupted_copy(tmp_path, "a.db"), _interrupted_copy(tmp_path, "b.db")
    RAN.clear()
    checked = durable.check

    def no_check(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the plan was checked: the engine's path was taken")

    monkeypatch.setattr(durable, "check", no_check)
    fast = obelisk.resume_sync("r", tools=TOOLS, journal=fast_db)
    monkeypatch.setattr(durable, "check", checked)
    seen: list[str] = []  # a listener takes the engine's path
    slow = obelisk.resume_sync(
        "r", tools=TOOLS, journal=engine_db, on_event=lambda e: seen.append(e.event)
    )
    assert RAN == []  # neither ran a tool
    assert seen  # the engine replayed
    assert _shape(fast) == _shape(slow)
    assert fast.status == "failed" and fast.state["doc"] == {"a": 1, "b": 2}
    assert fast.state["tags"] == ["x", "y"] and fast.instances["i1"]["copy"] == 2
    assert fast.calls[5].status == "skipped" and fast.calls[5].reason
    for db in (fast_db, engine_db):
        with Journal(db) as book:
            shown = book.describe("r")
        assert shown["status"] == "failed" and shown["locked_by"] is None
        with pytest.raises(obelisk.JournalError, match="is over"):
            obelisk.resume_sync("r", tools=TOOLS, journal=db)


def test_a_paused_run_is_decided_and_resumed_across_journal_openings(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    plan = [
        {"_tool": "echo", "value": 5, "_outputPath": "†state.n"},
        {"_tool": "refund", "amount": "†state.n", "_outputPath": "†state.r"},
    ]
    RAN.clear()
    paused = obelisk.run_sync(plan, TOOLS, journal=db, run_id="p")  # the process may end here
    assert paused.status == "awaiting_approval" and RAN == ["echo"]
    with Journal(db) as book:  # days later, another process: a person decides
        [(run_id, pending)] = book.pending()
        assert run_id == "p" and pending.arguments == {"amount": 5}
        assert book.decide(pending.id, Decision.accept()) == "p"
    with Journal(db) as book:  # and another one resumes
        assert book.pending() == []
        done = obelisk.resume_sync("p", tools=TOOLS, journal=book)
    assert done.status == "completed" and done.state == {"n": 5, "r": "refunded 5"}
    assert RAN == ["echo", "refund"]  # the committed call did not run again
