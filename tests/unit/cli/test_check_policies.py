"""``obelisk check --policy``: untrusted flows and the approval load on the command line
(docs/security.md, "Decided before the run")."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from typing import Any
from obelisk import tool

@tool(output_trust="untrusted")
def read_bill(path: str) -> dict[str, Any]:
    """File content."""
    return {"iban": "X"}

@tool(effects={"mail": "write"})
def post(to: str) -> str:
    """Post."""
    return "ok"
'''

PLAN = [
    {"_tool": "read_bill", "path": "bill.txt", "_outputPath": "†state.bill"},
    {"_tool": "post", "to": "†state.bill.iban", "_outputPath": "†state.sent"},
]


def test_check_takes_the_policy_and_prints_the_approval_load(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    args = ["check", "-", "--tools", str(tmp_path / "tools.py"), "--no-stdlib"]
    off = runner.invoke(app, [*args, "--json"], input=json.dumps(PLAN))
    assert off.exit_code == 0 and json.loads(off.stdout) == {"ok": True, "diagnostics": []}
    strict = runner.invoke(app, [*args, "--json", "--policy", "strict"], input=json.dumps(PLAN))
    payload = json.loads(strict.stdout)
    assert strict.exit_code == 0 and payload["diagnostics"][0]["code"] == "untrusted_flow"
    [need] = payload["approval_load"]
    assert need["label"] == "#1 post" and "`#0 read_bill`" in need["reasons"][0]
    text = runner.invoke(app, [*args, "--policy", "strict"], input=json.dumps(PLAN))
    assert "warning[untrusted_flow] #1 post, args.to" in text.stdout
    assert "may need a person: #1 post: argument `to` of `#1 post`" in text.stdout
    bad = runner.invoke(app, [*args, "--policy", "lax"], input=json.dumps(PLAN))
    assert bad.exit_code != 0 and "--policy must be 'off' or 'strict'" in bad.output


DENY_TOOLS = '''
from typing import Any
from obelisk import tool

@tool(output_trust="untrusted")
def read_bill(path: str) -> dict[str, Any]:
    """File content."""
    return {"iban": "X"}

@tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny")
def pay(iban: str) -> str:
    """Pay."""
    return "ok"
'''

DENIED = [
    {"_tool": "read_bill", "path": "bill.txt", "_outputPath": "†state.bill"},
    {"_tool": "pay", "iban": "†state.bill.iban", "_outputPath": "†state.paid"},
]


def test_simulate_plays_a_denied_flow_and_prints_the_decision(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(DENY_TOOLS)
    args = ["--tools", str(tmp_path / "tools.py"), "--no-stdlib"]
    checked = runner.invoke(app, ["check", "-", *args], input=json.dumps(DENIED))
    assert checked.exit_code == 2 and "error[untrusted_flow] #1 pay" in checked.stdout
    stubs = tmp_path / "stubs.json"
    stubs.write_text(json.dumps({"read_bill": {"iban": "X"}}))
    played = runner.invoke(
        app, ["simulate", "-", *args, "--stubs", str(stubs)], input=json.dumps(DENIED)
    )
    assert played.exit_code == 0, played.output
    assert "scenario 1: deny #1 pay: argument `iban` of `#1 pay` comes from" in played.stdout
