"""A durable loop's journal shows the revision of the plan each turn's calls are:
``Journal.describe(turn run)["revision"]`` and ``obelisk runs show`` (issue 27,
point 5; docs/durable.md, "Inspecting runs")."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import obelisk
from obelisk import Loop, ScriptedModel
from obelisk.cli.app import app

RAN: list[int] = []


@obelisk.tool
def charge(n: int) -> int:
    """Charge n (a side effect)."""
    RAN.append(n)
    return n


ONE = {"_tool": "charge", "n": 1, "_outputPath": "†state.a"}
TWO = {"_tool": "charge", "n": 2, "_outputPath": "†state.b"}


def test_each_turn_run_shows_its_revision(tmp_path: Path) -> None:
    RAN.clear()
    journal = str(tmp_path / "runs.db")
    model = ScriptedModel([{"calls": [ONE], "output": None}, {"calls": [ONE, TWO], "output": 3}])
    result = Loop(model, [charge], journal=journal).run_sync()
    assert result.status == "completed" and RAN == [1, 2]
    with obelisk.Journal(journal) as book:
        second = book.describe(f"{result.run_id}.t2")["revision"]
        assert book.describe(result.run_id)["revision"] is None  # the loop's own run
    assert second == result.revisions[1].to_dict()
    assert [c["label"] for c in second["diff"]["kept"]] == ["#0 charge"]
    shown = CliRunner().invoke(app, ["runs", "show", f"{result.run_id}.t2", "--journal", journal])
    assert shown.exit_code == 0, shown.stderr
    assert "revision 2: 1 kept, 1 added" in shown.stdout.splitlines()
