"""``obelisk simulate`` and ``obelisk run --approve`` with OpenAI function tools,
whose results a dry run cannot predict (docs/simulate.md, "Unknown values")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = """
from obelisk import Tool


def spec(name, properties, **extra):
    parameters = {"type": "object", "properties": properties, "required": list(properties)}
    function = {"name": name, "description": name, "parameters": parameters}
    return {"type": "function", "function": function, **extra}


def _lookup(email):
    return {"card": "4242"}


def _charge(card, amount):
    return {"paid": amount}


def _notify(message):
    return "ok: " + message


lookup = Tool.from_schema(spec("lookup", {"email": {"type": "string"}}), function=_lookup)
charge_card = Tool.from_schema(
    spec("charge_card", {"card": {"type": "string"}, "amount": {"type": "number"}},
         requires_approval=True),
    function=_charge,
)
notify = Tool.from_schema(spec("notify", {"message": {"type": "string"}}), function=_notify)
"""

PLAN: list[dict[str, Any]] = [
    {"_tool": "lookup", "email": "†input.email",
     "_outputPath": "†state.customer || †state.missing"},
    {"_tool": "notify", "message": "†state.missing.error.message", "_outputPath": "†state.n1"},
    {"_tool": "notify", "message": "checking out", "_outputPath": "†state.n2"},
    {"_tool": "notify", "message": "†input.email", "_outputPath": "†state.n3"},
    {"_tool": "charge_card", "card": "†state.customer.card", "amount": "†input.amount",
     "_outputPath": "†state.receipt || †state.declined"},
    {"_tool": "notify", "message": "†state.declined.error.message", "_outputPath": "†state.alert"},
]  # fmt: skip

HEADING = (
    "unknown values: nothing predicts these results; every arm is explored, "
    "and the calls reading them run with unknown arguments"
)


@pytest.fixture()
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN, ensure_ascii=False))
    (tmp_path / "input.json").write_text('{"email": "ada@example.com", "amount": 12.5}')
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


def lines_of(text: str) -> list[str]:
    """Lines as printed, without the trailing spaces of a wrapped terminal."""
    return [line.rstrip() for line in text.splitlines()]


def test_the_summary_says_so_above_the_scenarios(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "simulate"), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    lines = lines_of(result.stdout)
    assert lines[:3] == [
        HEADING,
        "  #0 lookup: no output schema and no stub; read by #4 charge_card",
        "  #1 notify, #2 notify, #3 notify, #4 charge_card, #5 notify: "
        "no output schema and no stub; not read",
    ]
    assert lines[3] == "scenarios: 3 explored of 3"
    assert not any(line.startswith("never runs") for line in lines)
    assert lines[-1] == (
        "approval load: 1 of 6 side-effecting calls need a person (17%), "
        "with unknown arguments: #4 charge_card"
    )
    assert "(null)" not in result.stderr


def test_the_details_name_the_calls_run_with_unknown_arguments(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "simulate", "-v"), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    lines = lines_of(result.stdout)
    assert lines[0] == HEADING
    assert lines.index(HEADING) < lines.index("scenario 1")
    assert "  #4 charge_card took error arm" in lines
    assert "  #4 charge_card runs with unknown arguments (from #0 lookup)" in lines


def test_json_has_the_unknown_values_and_their_shape(tmp: Path) -> None:
    result = runner.invoke(app, args(tmp, "simulate", "--json"))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    summary, scenarios = data["summary"], data["scenarios"]
    assert summary["unknown"]["#0 lookup"] == "no output schema and no stub"
    assert summary["unknown_arguments"] == {"#4 charge_card": ["#0 lookup"]}
    assert summary["never_run"] == {}
    assert summary["needing_approval"] == ["#4 charge_card"]
    assert [s["arms"].get("#4 charge_card") for s in scenarios] == [
        "†state.receipt",
        "error arm",
        None,
    ]
    assert scenarios[0]["state"]["customer"] == {"$unknown": "#0 lookup"}
    assert scenarios[0]["state"]["receipt"] == {"$unknown": "#4 charge_card"}
    assert scenarios[0]["unknown_arguments"] == {"#4 charge_card": ["#0 lookup"]}


def test_run_approve_shows_the_unknown_values_before_the_scenarios(tmp: Path) -> None:
    result = runner.invoke(
        app, args(tmp, "run", "--approve"), input="n\nnot now\n", env={"COLUMNS": "200"}
    )
    assert result.exit_code == 1
    lines = lines_of(result.stderr)
    start = lines.index("dry run: 3 of 3 scenarios")
    assert lines[start + 1] == "  " + HEADING
    assert lines[start + 2] == "    #0 lookup: no output schema and no stub; read by #4 charge_card"
    assert lines[start + 4].startswith("  scenario 1: #0 lookup -> †state.customer, ")
    assert "  approval load: 1 of 6 side-effecting calls need a person, " in result.stderr
    assert not any("never runs" in line for line in lines)
