"""Every folder under examples/ runs, and its final state is the one in expected.json.

Each folder has plan.json, input.json, tools.py and expected.json (the final
state, or ``{"state", "instances"}`` for plans with ``_instance``).  The tools are
the standard library plus the folder's tools.py, exactly as
``obelisk run examples/X/plan.json --tools examples/X/tools.py --input ...`` does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk import Registry, check
from obelisk.stdlib_tools import default_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FOLDERS = sorted(p for p in EXAMPLES.iterdir() if (p / "plan.json").exists())


def _load(folder: Path) -> tuple[str, Registry, Any, Any]:
    tools = default_registry().merge(Registry.from_module(str(folder / "tools.py")))
    plan = (folder / "plan.json").read_text(encoding="utf-8")
    given = json.loads((folder / "input.json").read_text(encoding="utf-8"))
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return plan, tools, given, expected


def test_every_situation_has_an_example() -> None:
    assert [p.name for p in FOLDERS] == [
        "aggregation",
        "diamond",
        "fallback_input",
        "fan_out",
        "instances",
        "payment",
        "profile_summary",
        "refund_approval",
        "translate",
        "weather",
    ]
    for folder in FOLDERS:
        assert {p.name for p in folder.iterdir()} >= {
            "plan.json",
            "input.json",
            "tools.py",
            "expected.json",
        }


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_example_checks_clean(folder: Path) -> None:
    plan, tools, given, _ = _load(folder)
    assert check(plan, tools, input=given).diagnostics == ()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_example_runs_to_its_expected_state(folder: Path) -> None:
    plan, tools, given, expected = _load(folder)
    result = obelisk.run_sync(plan, tools, given)
    if result.status == "awaiting_approval":  # a person accepts every call that asks
        accept = {pending.id: obelisk.Decision.accept() for pending in result.pending}
        result = obelisk.resume_sync(result, accept)
    assert result.status == "completed"
    if "instances" in expected:
        assert {"state": result.state, "instances": result.instances} == expected
    else:
        assert result.state == expected


def test_weather_takes_one_branch_and_skips_the_other() -> None:
    plan, tools, given, _ = _load(EXAMPLES / "weather")
    result = obelisk.run_sync(plan, tools, given)
    movie = result.calls[3]
    assert (movie.tool, movie.status) == ("plan_movie", "skipped")
    assert movie.reason == "†state.rainy_day was not written: #1 branch wrote †state.sunny_day"
    rainy = obelisk.run_sync(plan, tools, {"city": "London"})
    assert rainy.state["activity"] == "a film at the cinema (14.5 °C outside)"
    assert rainy.calls[2].status == "skipped"


def test_payment_decline_goes_to_the_error_arm() -> None:
    plan, tools, _, _ = _load(EXAMPLES / "payment")
    result = obelisk.run_sync(plan, tools, {"customerId": "c-42", "amount": 0})
    assert result.status == "completed"
    assert result.state["error"] == {
        "error": {
            "type": "ValueError",
            "message": "amount must be positive",
            "tool": "process_payment",
            "call": 1,
        }
    }
    assert result.calls[1].status == "succeeded"
    assert result.calls[1].error == {"type": "ValueError", "message": "amount must be positive"}
    assert result.calls[2].status == "skipped"
    assert result.calls[2].reason == (
        "†state.receipt was not written: #1 process_payment wrote †state.error"
    )
    assert result.state["notification"].startswith("payment failed: ")


def test_payment_branches_are_exclusive() -> None:
    plan, tools, given, _ = _load(EXAMPLES / "payment")
    result = check(plan, tools, input=given)
    assert result.graph is not None
    # send_receipt (#2) and report_failure (#3) hang off different alternatives of #1
    assert result.graph.exclusive(2, 3)
    assert result.graph.edges == [(0, 1), (0, 2), (1, 2), (1, 3)]


def test_payment_example_through_the_cli() -> None:
    folder = EXAMPLES / "payment"
    args = [
        sys.executable,
        "-m",
        "obelisk",
        "run",
        str(folder / "plan.json"),
        "--tools",
        str(folder / "tools.py"),
        "--input",
        str(folder / "input.json"),
    ]
    completed = subprocess.run(args, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    assert json.loads(completed.stdout) == expected
    as_json = subprocess.run([*args, "--json"], capture_output=True, text=True, check=False)
    payload = json.loads(as_json.stdout)
    assert list(payload) == ["status", "state", "calls", "diagnostics"]
    assert payload["status"] == "completed"
    assert [c["status"] for c in payload["calls"]] == [
        "succeeded",
        "succeeded",
        "succeeded",
        "skipped",
    ]


def test_refund_approval_pauses_before_the_refund_and_not_for_an_ineligible_order() -> None:
    plan, tools, given, _ = _load(EXAMPLES / "refund_approval")
    paused = obelisk.run_sync(plan, tools, given)
    assert paused.status == "awaiting_approval"
    (pending,) = paused.pending
    assert (pending.label, pending.arguments) == (
        "#2 issue_refund",
        {"order_id": "o-1001", "amount": 59.9},
    )
    assert paused.state.keys() == {"order", "eligible"}  # nothing moved money yet
    small = obelisk.run_sync(plan, tools, {"orderId": "o-1002"})
    assert small.status == "completed" and small.pending == ()
    assert small.state["notified"] == "to c-9: delivered over 30 days ago"
