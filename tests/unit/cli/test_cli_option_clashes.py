"""Options that do not go together are refused in the command line's own words, with
exit 2 and nothing run (docs/cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()


def test_loop_advance_step_with_stream_is_refused_in_option_words(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"calls": [], "output": 1}) + "\n")
    done = runner.invoke(
        app,
        ["loop", "--model", f"scripted:{transcript}", "--advance", "step", "--stream",
         "--no-stdlib"],
    )  # fmt: skip
    assert done.exit_code == 2
    assert done.output.strip().splitlines()[-1] == (
        "obelisk: error: --advance step and --stream cannot go together "
        "(a step starts no call early)"
    )


def test_resume_retry_failed_with_a_resolution_is_refused_before_the_journal_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(
        app, ["resume", "r1", "--journal", "runs.db", "--retry-failed", "--retry", "0",
              "--no-stdlib"],
    )  # fmt: skip
    assert done.exit_code == 2
    assert done.output.strip().splitlines()[-1] == (
        "obelisk: error: --retry-failed takes no --retry, --succeeded or --failed: a failed "
        "run has no call whose outcome is unknown"
    )
    assert not (tmp_path / "runs.db").exists()  # nothing was opened, nothing written


def test_verbose_counts_the_calls_a_step_leaves_for_later_as_planned(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(
        "from obelisk import tool\n\n\n@tool\ndef double(n: int) -> int:\n"
        '    """Twice n."""\n    return 2 * n\n'
    )
    first = {"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"}
    second = {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"}
    answer = {"calls": [first, second], "output": "†state"}
    script = tmp_path / "script.jsonl"
    script.write_text((json.dumps(answer, ensure_ascii=False) + "\n") * 2)
    (tmp_path / "input.json").write_text('{"n": 4}')
    done = runner.invoke(
        app,
        ["loop", "--model", f"scripted:{script}", "--tools", str(tmp_path / "tools.py"),
         "--input", str(tmp_path / "input.json"), "--advance", "step", "-v"],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    first_turn = next(line for line in done.stderr.splitlines() if line.startswith("turn 1:"))
    assert first_turn.startswith("turn 1: 2 calls (1 succeeded, 1 planned)")
