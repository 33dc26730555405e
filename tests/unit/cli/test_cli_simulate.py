"""``obelisk simulate``, ``obelisk run --approve`` and the loop's per-call approvals
on the command line (docs/simulate.md, docs/approvals.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool

RAN = []

@tool(pure=True)
def lookup(user: str) -> dict:
    """Look a user up."""
    return {"name": user.title(), "tier": "gold"}

@tool(requires_approval=True)
def refund(user: str, amount: float) -> str:
    """Refund a user (a person approves)."""
    return f"refunded {amount} to {user}"

@tool
def notify(message: str) -> str:
    """Send a message."""
    return "ok: " + message
'''

PLAN: list[dict[str, Any]] = [
    {"_tool": "lookup", "user": "†input.user", "_outputPath": "†state.profile"},
    {"_tool": "refund", "user": "†state.profile.name", "amount": 12.5,
     "_outputPath": "†state.receipt || †state.error"},
    {"_tool": "notify", "message": "†state.receipt", "_outputPath": "†state.sent"},
    {"_tool": "notify", "message": "†state.error.error.message", "_outputPath": "†state.alert"},
]  # fmt: skip


@pytest.fixture()
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN, ensure_ascii=False))
    (tmp_path / "input.json").write_text('{"user": "ada"}')
    return tmp_path


def args(tmp: Path, command: str, *extra: str) -> list[str]:
    return [
        command,
        str(tmp / "plan.json"),
        "--tools",
        str(tmp / "tools.py"),
        "--input",
        str(tmp / "input.json"),
        *extra,
    ]


def simulate_json(tmp: Path, *extra: str) -> dict[str, Any]:
    result = runner.invoke(app, args(tmp, "simulate", "--json", *extra))
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# -- obelisk simulate -------------------------------------------------------------------


def test_simulate_explores_both_arms_and_reports_each_scenario(tmp: Path) -> None:
    data = simulate_json(tmp)
    summary, (ok, failed) = data["summary"], data["scenarios"]
    assert (summary["explored"], summary["total"]) == (2, 2)
    assert ok["arms"] == {"#1 refund": "†state.receipt"}
    assert failed["arms"] == {"#1 refund": "error arm"}
    assert ok["ran"] == ["#0 lookup", "#1 refund", "#2 notify"]
    assert ok["skipped"] == {
        "#3 notify": "†state.error.error.message was not written: #1 refund wrote †state.receipt"
    }
    assert ok["writes"] == {
        "†state.profile": "#0 lookup",
        "†state.receipt": "#1 refund",
        "†state.sent": "#2 notify",
    }
    assert ok["state"]["profile"] == {"name": "Ada", "tier": "gold"}  # the pure tool ran
    assert ok["critical_path"] == ["#0 lookup", "#1 refund", "#2 notify"]
    assert (ok["makespan"], ok["peak_concurrency"], ok["cost"]) == (3.0, 1, 3.0)
    assert ok["approvals"] == ["#1 refund"]
    assert summary["read_in_some"] == ["†state.error.error.message", "†state.receipt"]
    assert summary["written_never_read"] == ["†state.alert", "†state.sent"]
    assert summary["needing_approval"] == ["#1 refund"]
    assert summary["approval_load"] == pytest.approx(1 / 3)


def test_simulate_is_seeded(tmp: Path) -> None:
    first, again = simulate_json(tmp), simulate_json(tmp)
    assert first == again
    other = simulate_json(tmp, "--seed", "7")
    assert other["scenarios"][0]["state"]["receipt"] != first["scenarios"][0]["state"]["receipt"]


def test_stubs_latency_and_cost_files(tmp: Path) -> None:
    (tmp / "stubs.json").write_text(
        json.dumps(
            {
                "refund": {"$outcomes": ["refunded", {"$error": "card declined"}]},
                "notify": "sent",
            }
        )
    )
    (tmp / "latency.json").write_text('{"refund": 2.5, "lookup": 0.5}')
    (tmp / "cost.json").write_text('{"refund": 10}')
    data = simulate_json(
        tmp,
        "--stubs",
        str(tmp / "stubs.json"),
        "--latency",
        str(tmp / "latency.json"),
        "--cost",
        str(tmp / "cost.json"),
    )
    ok, failed = data["scenarios"]
    assert ok["state"]["receipt"] == "refunded"
    assert ok["state"]["sent"] == "sent"
    assert failed["state"]["error"]["error"]["message"] == "card declined"
    assert ok["makespan"] == 4.0 and ok["cost"] == 12.0


@pytest.mark.parametrize("stub", ["42", '["a plain list is one value"]'])
def test_a_stub_that_does_not_fit_is_a_diagnostic_naming_the_tool(tmp: Path, stub: str) -> None:
    (tmp / "stubs.json").write_text(f'{{"refund": {stub}}}')
    result = runner.invoke(app, args(tmp, "simulate", "--stubs", str(tmp / "stubs.json")))
    assert result.exit_code == 1
    assert "invalid_stub" in result.stderr and "the stub of refund" in result.stderr


def test_max_scenarios_says_how_many_exist(tmp: Path) -> None:
    data = simulate_json(tmp, "--max-scenarios", "1")
    assert (data["summary"]["explored"], data["summary"]["total"]) == (1, 2)
    table = runner.invoke(app, args(tmp, "simulate", "--max-scenarios", "1"))
    assert "scenarios: 1 explored of 2" in table.stdout


def test_the_terminal_report_and_its_details(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "simulate", "-v"))
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "scenarios: 2 explored of 2" in text
    assert "#1 refund took error arm" in text
    assert "skips #2 notify: †state.receipt was not written: #1 refund wrote †state.error" in text
    assert "writes †state.alert (#3 notify)" in text
    assert "critical path: #0 lookup -> #1 refund -> #2 notify (3 s)" in text
    assert "approval load: 1 of 3 side-effecting calls need a person (33%)" in text


def test_graph_marks_skips_and_the_critical_path(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "simulate", "--graph", "mermaid", "--scenario", "2"))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  class c2 skipped" in lines
    assert "  class c0,c1,c3 critical" in lines
    dot = runner.invoke(app, args(tmp, "simulate", "--graph", "dot"))
    assert dot.exit_code == 0 and dot.stdout.startswith("digraph")
    too_far = runner.invoke(app, args(tmp, "simulate", "--graph", "dot", "--scenario", "3"))
    assert too_far.exit_code == 2
    assert "--scenario 3: only 2 scenarios were explored" in too_far.stderr


def test_a_plan_with_errors_exits_2(tmp: Path) -> None:
    (tmp / "plan.json").write_text('[{"_tool": "nope", "_outputPath": "†state.x"}]')
    result = runner.invoke(app, args(tmp, "simulate"))
    assert result.exit_code == 2
    assert "unknown_tool" in result.stderr and "nothing to simulate" in result.stderr


# -- obelisk run with approvals -----------------------------------------------------------


def test_run_without_approve_stops_at_the_call_and_says_so(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "run"))
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"profile": {"name": "Ada", "tier": "gold"}}
    assert "#1 refund awaits approval (1-" in result.stderr
    assert '{"user": "Ada", "amount": 12.5}' in result.stderr


def test_run_approve_asks_for_the_plan_then_the_call(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "run", "--approve"), input="y\ny\n")
    assert result.exit_code == 0, result.stderr
    state = json.loads(result.stdout)
    assert state["receipt"] == "refunded 12.5 to Ada" and state["sent"].startswith("ok: ")
    assert "dry run: 2 of 2 scenarios" in result.stderr
    assert "Run this plan? [y]es / [n]o / [e]dit: y" in result.stderr
    assert "Run this call? [y]es / [n]o / [e]dit: y" in result.stderr


def test_run_approve_rejecting_the_call_takes_the_error_arm(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "run", "--approve"), input="y\nn\ntoo much\n")
    assert result.exit_code == 0, result.stderr
    state = json.loads(result.stdout)
    assert state["error"]["error"] == {
        "type": "ApprovalRejected",
        "message": "too much",
        "tool": "refund",
        "call": 1,
    }
    assert state["alert"] == "ok: too much" and "receipt" not in state


def test_run_approve_rejecting_the_plan_runs_nothing(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "run", "--approve"), input="n\nnot now\n")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "not now" in result.stderr


# -- obelisk loop with per-call approvals --------------------------------------------------


def loop_args(tmp: Path, *extra: str) -> list[str]:
    (tmp / "script.jsonl").write_text(
        json.dumps({"calls": PLAN, "output": "†state.sent"}, ensure_ascii=False) + "\n"
    )
    return [
        "loop",
        "--model",
        f"scripted:{tmp / 'script.jsonl'}",
        "--tools",
        str(tmp / "tools.py"),
        "--input",
        str(tmp / "input.json"),
        *extra,
    ]


def test_loop_stops_at_a_call_that_needs_approval(tmp: Path) -> None:
    result = runner.invoke(app, loop_args(tmp, "--json"))
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["status"] == "awaiting_approval"
    assert [p["label"] for p in payload["pending"]] == ["#1 refund"]
    assert "run again with --approve to decide" in result.stderr


def test_loop_approve_decides_each_call(tmp: Path) -> None:
    result = runner.invoke(app, loop_args(tmp, "--json", "--approve"), input="y\n")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "completed"
    assert payload["output"] == "ok: refunded 12.5 to Ada"
    assert "Run this call? [y]es / [n]o / [e]dit: y" in result.stderr
