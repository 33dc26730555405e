"""Durable runs on the command line: ``run --journal``, ``resume``, ``approvals list``,
``approve``, ``reject``, ``runs list|show`` (docs/durable.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.interpreter.runtime.durable.journal import Journal

runner = CliRunner()

TOOLS = '''
import os
from obelisk import tool

@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n

@tool(requires_approval=True)
def refund(amount: int) -> str:
    """Give money back."""
    return f"refunded {amount}"

@tool
def charge(amount: int) -> str:
    """Charge a card; stops the process when STOP_CHARGE is set."""
    if os.environ.get("STOP_CHARGE"):
        raise KeyboardInterrupt
    return f"charged {amount}"
'''

APPROVAL_PLAN = [
    {"_tool": "double", "n": 3, "_outputPath": "†state.a"},
    {"_tool": "refund", "amount": "†state.a", "_outputPath": "†state.r"},
]


@pytest.fixture()
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "durable_tools.py").write_text(TOOLS)
    (tmp_path / "p.json").write_text(json.dumps(APPROVAL_PLAN))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("durable_tools", None)
    return tmp_path


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def paused(tmp: Path) -> str:
    """Start the approval plan as run r1 in runs.db; it pauses; returns the approval id."""
    done = cli("run", "p.json", "--tools", "durable_tools.py", "--journal", "runs.db",
               "--run-id", "r1")  # fmt: skip
    assert done.exit_code == 1, done.output
    assert json.loads(done.stdout) == {"a": 6}
    assert "obelisk resume r1 --journal runs.db" in done.stderr
    listed = cli("approvals", "list", "--journal", "runs.db", "--json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(row["run_id"], row["label"], row["arguments"]) for row in rows] == [
        ("r1", "#1 refund", {"amount": 6})
    ]
    return str(rows[0]["id"])


def test_a_paused_run_is_approved_then_resumed_by_separate_commands(tmp: Path) -> None:
    approval = paused(tmp)
    text = cli("approvals", "list", "--journal", "runs.db")
    assert text.exit_code == 0 and f"{approval}  run r1  #1 refund" in text.stdout
    done = cli("approve", approval, "--journal", "runs.db")
    assert done.exit_code == 0, done.output
    assert "obelisk resume r1 --journal runs.db" in done.stderr
    assert json.loads(cli("approvals", "list", "--journal", "runs.db", "--json").stdout) == []
    again = cli("approve", approval, "--journal", "runs.db")
    assert again.exit_code == 2 and "decided already" in again.stderr
    resumed = cli("resume", "r1", "--journal", "runs.db", "--tools", "durable_tools.py")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout) == {"a": 6, "r": "refunded 6"}
    over = cli("resume", "r1", "--journal", "runs.db", "--tools", "durable_tools.py")
    assert over.exit_code == 2 and "is over (completed)" in over.stderr


def test_a_rejected_call_fails_with_the_reason_on_resume(tmp: Path) -> None:
    approval = paused(tmp)
    done = cli("reject", approval, "--journal", "runs.db", "--reason", "not today")
    assert done.exit_code == 0, done.output
    resumed = cli("resume", "r1", "--journal", "runs.db", "--tools", "durable_tools.py",
                  "--json")  # fmt: skip
    assert resumed.exit_code == 1, resumed.output
    payload = json.loads(resumed.stdout)
    assert payload["status"] == "failed" and payload["run_id"] == "r1"
    refund = payload["calls"][1]
    assert refund["status"] == "failed" and "not today" in refund["error"]["message"]


def test_an_approval_id_is_bound_to_the_arguments(tmp: Path) -> None:
    approval = paused(tmp)
    call, _, digest = approval.partition("-")
    forged = f"{call}-{'0' * len(digest)}"
    done = cli("approve", forged, "--journal", "runs.db", "--run", "r1")
    assert done.exit_code == 2
    assert f"approval {forged!r} is unknown: no call awaits it in run 'r1'" in done.stderr
    assert len(json.loads(cli("approvals", "list", "--journal", "runs.db", "--json").stdout)) == 1


def test_runs_list_and_show(tmp: Path) -> None:
    approval = paused(tmp)
    listed = cli("runs", "list", "--journal", "runs.db", "--json")
    assert listed.exit_code == 0, listed.output
    [run] = json.loads(listed.stdout)
    assert (run["run_id"], run["status"], run["calls"], run["pending"]) == (
        "r1", "awaiting_approval", 2, 1
    )  # fmt: skip
    text = cli("runs", "list", "--journal", "runs.db")
    assert "r1  run  awaiting_approval  2 calls, 1 approval pending" in text.stdout
    shown = cli("runs", "show", "r1", "--journal", "runs.db", "--json")
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert [c["status"] for c in data["calls"]] == ["succeeded", "awaiting_approval"]
    assert data["pending"][0]["id"] == approval and data["writes"] == 1
    assert data["calls"][0]["seconds"] is not None
    text = cli("runs", "show", "r1", "--journal", "runs.db")
    assert text.exit_code == 0
    assert "#1 refund  awaiting_approval" in text.stdout
    assert f"awaits approval {approval}" in text.stdout
    missing = cli("runs", "show", "nope", "--journal", "runs.db")
    assert missing.exit_code == 2 and "nope" in missing.stderr


def test_a_missing_or_damaged_journal_exits_2(tmp: Path) -> None:
    for args in (
        ("runs", "list"),
        ("approvals", "list"),
        ("resume", "r1"),
        ("approve", "1-abc"),
    ):
        done = cli(*args, "--journal", "nope.db")
        assert done.exit_code == 2, (args, done.output)
        assert "obelisk: error: no journal at 'nope.db'" in done.stderr
        assert not (tmp / "nope.db").exists()
    (tmp / "junk.db").write_bytes(b"this is not a journal at all" * 100)
    done = cli("runs", "list", "--journal", "junk.db")
    assert done.exit_code == 2 and "obelisk: error:" in done.stderr
    assert "Traceback" not in done.output


def test_run_id_needs_a_journal_and_a_taken_id_is_refused(tmp: Path) -> None:
    done = cli("run", "p.json", "--tools", "durable_tools.py", "--run-id", "x")
    assert done.exit_code == 2 and "--run-id names a durable run" in done.stderr
    paused(tmp)
    again = cli("run", "p.json", "--tools", "durable_tools.py", "--journal", "runs.db",
                "--run-id", "r1")  # fmt: skip
    assert again.exit_code == 2 and "r1" in again.stderr


def _interrupted(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run r2 whose charge call stops the process (KeyboardInterrupt) mid-call."""
    monkeypatch.setenv("STOP_CHARGE", "1")
    plan = [
        {"_tool": "double", "n": 5, "_outputPath": "†state.a"},
        {"_tool": "charge", "amount": "†state.a", "_outputPath": "†state.c", "_id": "pay"},
    ]
    registry = obelisk.Registry.from_module(str(tmp / "durable_tools.py"))
    with pytest.raises(KeyboardInterrupt):
        obelisk.run_sync(plan, registry, journal="runs.db", run_id="r2")
    monkeypatch.delenv("STOP_CHARGE")


def test_an_unknown_call_is_reported_then_resolved_from_the_command_line(
    tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _interrupted(tmp, monkeypatch)
    shown = json.loads(cli("runs", "show", "r2", "--journal", "runs.db", "--json").stdout)
    assert [u["label"] for u in shown["unknown"]] == ["#1 charge (pay)"]
    assert shown["unknown"][0]["idempotency_key"].startswith("r2")
    held = cli("resume", "r2", "--journal", "runs.db", "--tools", "durable_tools.py")
    assert held.exit_code == 1, held.output
    assert "#1 charge (pay) may or may not have run" in held.stderr
    assert "--retry CALL" in held.stderr
    bad = cli("resume", "r2", "--journal", "runs.db", "--tools", "durable_tools.py",
              "--succeeded", "pay=oops")  # fmt: skip
    assert bad.exit_code == 2 and "not valid JSON" in bad.stderr
    wrong = cli("resume", "r2", "--journal", "runs.db", "--tools", "durable_tools.py",
                "--retry", "0")  # fmt: skip
    assert wrong.exit_code == 2 and "is not a call whose outcome is unknown" in wrong.stderr
    done = cli("resume", "r2", "--journal", "runs.db", "--tools", "durable_tools.py",
               "--succeeded", 'pay="charged by hand"')  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"a": 10, "c": "charged by hand"}


@pytest.mark.parametrize(
    ("option", "state", "code"),
    [
        (("--retry", "1"), {"a": 10, "c": "charged 10"}, 0),
        (("--failed", "pay=the bank said no"), {"a": 10}, 1),
    ],
)
def test_retry_and_failed_resolutions(
    tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    option: tuple[str, str],
    state: dict[str, Any],
    code: int,
) -> None:
    _interrupted(tmp, monkeypatch)
    done = cli("resume", "r2", "--journal", "runs.db", "--tools", "durable_tools.py", *option)
    assert done.exit_code == code, done.output
    assert json.loads(done.stdout) == state
    if code:
        assert "the bank said no" in done.stderr
    with Journal(tmp / "runs.db") as book:
        assert book.describe("r2")["status"] == ("completed" if code == 0 else "failed")
