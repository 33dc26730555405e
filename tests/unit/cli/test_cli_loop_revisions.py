"""``obelisk loop --advance`` and the plan's revisions in ``--json`` and
``--transcript`` (issue 27; docs/cli.md, docs/loop.md "How a plan evolves")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool


@tool
def double(n: int) -> int:
    """Twice n."""
    print(f"double {n}")
    return 2 * n
'''

FIRST = {"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"}
SECOND = {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"}


def _args(tmp: Path, *answers: Any, extra: tuple[str, ...] = ()) -> list[str]:
    (tmp / "tools.py").write_text(TOOLS)
    (tmp / "input.json").write_text('{"n": 4}')
    script = tmp / "script.jsonl"
    script.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers))
    return ["loop", "--model", f"scripted:{script}", "--tools", str(tmp / "tools.py"),
            "--input", str(tmp / "input.json"), *extra]  # fmt: skip


def test_advance_step_runs_the_frontier_each_turn(tmp_path: Path) -> None:
    plan = {"calls": [FIRST, SECOND], "output": "†state"}
    args = _args(tmp_path, plan, plan, extra=("--advance", "step", "--json"))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["output"] == {"a": 8, "b": 16}
    assert [len(turn["state_diff"]) for turn in payload["turns"]] == [1, 1]
    assert [r["revision"] for r in payload["revisions"]] == [1, 2]
    diff = payload["revisions"][1]["diff"]
    assert [c["label"] for c in diff["kept"]] == ["#0 double"]
    assert [c["label"] for c in diff["carried"]] == ["#1 double"]
    assert result.stderr.count("double 4") == 1  # kept: not run again


def test_the_transcript_holds_each_turns_revision_and_bad_advance_is_refused(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "run.jsonl"
    again = {"calls": [FIRST], "output": "†state.a"}
    args = _args(tmp_path, {"calls": [FIRST], "output": None}, again,
                 extra=("--transcript", str(transcript)))  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [line["revision"]["diff"]["kept"] != [] for line in lines] == [False, True]
    bad = runner.invoke(app, _args(tmp_path, again, extra=("--advance", "later")))
    assert bad.exit_code == 2
    assert "unknown --advance 'later'; expected 'all' or 'step'" in bad.stderr


def test_verbose_says_what_each_revision_kept(tmp_path: Path) -> None:
    first = {"calls": [FIRST], "output": None}
    again = {"calls": [FIRST, SECOND], "output": "†state.b"}
    result = runner.invoke(app, _args(tmp_path, first, again, extra=("--verbose",)))
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("turn ")]
    assert lines == [
        "turn 1: 1 call (1 succeeded)",
        "turn 2: 2 calls (2 succeeded), revision 2: 1 kept, 1 added, output given",
    ]
