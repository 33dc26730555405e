"""``obelisk loop --plan FILE`` without ``--mode``: a plan message's ``"mode"`` picks
the loop's mode, as ``Loop(mode=None).run(plan=...)`` does (issue 27, point 3;
docs/cli.md, docs/loop.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool


@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n
'''

CALL = {"_tool": "double", "n": 4, "_outputPath": "†state.a"}


def _modes(tmp: Path, plan: object, *extra: str) -> list[str]:
    (tmp / "tools.py").write_text(TOOLS)
    (tmp / "plan.json").write_text(json.dumps(plan, ensure_ascii=False))
    script = tmp / "script.jsonl"
    script.write_text(json.dumps({"calls": [CALL], "output": "†state.a"}, ensure_ascii=False))
    args = ["loop", "--model", f"scripted:{script}", "--tools", str(tmp / "tools.py"),
            "--no-stdlib", "--plan", str(tmp / "plan.json"), "--json", *extra]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["output"] == 8
    return [turn["request"]["config"]["mode"] for turn in payload["turns"]]


@pytest.mark.parametrize(
    ("plan", "extra", "mode"),
    [
        ({"type": "plan", "mode": "lazy", "plan": [CALL]}, (), "lazy"),
        ({"type": "plan", "mode": "lazy", "plan": [CALL]}, ("--mode", "eager"), "eager"),
        ({"type": "plan", "mode": "eager", "plan": [CALL]}, (), "eager"),
        ([CALL], (), "eager"),
    ],
)
def test_a_plan_messages_mode_picks_the_mode_without_mode(
    tmp_path: Path, plan: object, extra: tuple[str, ...], mode: str
) -> None:
    assert _modes(tmp_path, plan, *extra) == [mode]
