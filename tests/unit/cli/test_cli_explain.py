"""Labels on the command line: ``obelisk run --json`` carries each call's argument
labels and the policy's decision, ``--policy strict``, and ``obelisk explain
RUN_OR_TRACE PATH`` prints a value's provenance from a journaled run or a trace
(docs/security.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
import obelisk

@obelisk.tool(output_trust="untrusted")
def read_bill(path: str) -> dict:
    """The bill."""
    return {"iban": "GB00ATTACKER", "amount": 120}

@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"])
def send_money(iban: str, amount: float) -> str:
    """Pay."""
    return f"paid {amount} to {iban}"

@obelisk.tool(effects={"mail": "write"})
def post(to: str) -> str:
    """Post."""
    return "posted"
'''

PLAN = [
    {"_tool": "read_bill", "path": "bill.txt", "_outputPath": "†state.bill"},
    {
        "_tool": "send_money",
        "iban": "†state.bill.iban",
        "amount": "†state.bill.amount",
        "_outputPath": "†state.paid",
    },
]
FLOW = "argument `iban` of `#1 send_money` comes from `#0 read_bill` (untrusted: the bill)"


@pytest.fixture()
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bill_tools.py").write_text(TOOLS)
    (tmp_path / "p.json").write_text(json.dumps(PLAN))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("bill_tools", None)
    return tmp_path


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_run_json_carries_the_labels_and_the_decision(tmp: Path) -> None:
    shown = cli("run", "p.json", "--tools", "bill_tools", "--json", "--trace", "t.jsonl")
    data = json.loads(shown.stdout)
    assert data["status"] == "awaiting_approval"
    paying = data["calls"][1]
    assert paying["labels"]["iban"]["trust"] == "untrusted"
    assert paying["policy"] == {"action": "ask", "reason": FLOW}
    assert data["pending"][0]["reason"] == FLOW
    explained = cli("explain", "t.jsonl", "†state.bill.iban")
    assert explained.exit_code == 0, explained.output
    assert "#0 read_bill via †state.bill.iban (untrusted: the bill)" in explained.stdout


def test_policy_strict_on_the_command_line(tmp: Path) -> None:
    (tmp / "bill.json").write_text(
        json.dumps([PLAN[0], {"_tool": "post", "to": "†state.bill.iban"}])
    )
    plain = cli("run", "bill.json", "--tools", "bill_tools", "--json")
    assert json.loads(plain.stdout)["status"] == "completed"  # post declares no rule
    strict = cli("run", "bill.json", "--tools", "bill_tools", "--json", "--policy", "strict")
    assert json.loads(strict.stdout)["status"] == "awaiting_approval"
    bad = cli("run", "bill.json", "--tools", "bill_tools", "--policy", "lax")
    assert bad.exit_code == 2 and "--policy must be off or strict" in bad.output


def test_explain_a_journaled_run(tmp: Path) -> None:
    cli("run", "p.json", "--tools", "bill_tools", "--journal", "j.db", "--run-id", "r1")
    listed = cli("approvals", "list", "--journal", "j.db", "--json")
    [waiting] = json.loads(listed.stdout)
    assert cli("approve", waiting["id"], "--journal", "j.db").exit_code == 0
    done = cli("resume", "r1", "--journal", "j.db", "--tools", "bill_tools")
    assert done.exit_code == 0, done.output
    explained = cli("explain", "r1", "†state.paid", "--journal", "j.db")
    assert explained.exit_code == 0, explained.output
    assert explained.stdout.splitlines() == [
        "†state.paid comes from:",
        "  #1 send_money via †state.paid (untrusted: the bill)",  # the amount is not vouched
        "    #0 read_bill via †state.bill.iban (untrusted: the bill)",
    ]
    as_json = json.loads(cli("explain", "r1", "†state.paid", "--journal", "j.db", "--json").stdout)
    assert [o["name"] for o in as_json] == ["#1 send_money", "#0 read_bill"]
    missing = cli("explain", "nope", "†state.paid", "--journal", "j.db")
    assert missing.exit_code == 2
    bad = cli("explain", "no-such-trace.jsonl", "†state.paid")
    assert bad.exit_code == 2 and "cannot read trace" in bad.output
