"""``obelisk run PLAN --model SPEC``: the model answers the plan's latent calls and
delegates (docs/cli.md; issue 27, point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import Tool, tool

summarize = Tool.from_schema({
    "name": "summarize",
    "description": "Summarize a text.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"]},
    "output": {"type": "string"},
})

@tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()
'''

PLAN = [
    {"_tool": "summarize", "text": "†input.text", "_outputPath": "†state.short"},
    {"_tool": "summarize", "text": "†state.short", "_outputPath": "†state.shorter"},
    {"_tool": "shout", "text": "†state.shorter", "_outputPath": "†state.loud"},
]


MUST = "--model must be openai:MODEL, anthropic:MODEL, litellm:MODEL or scripted:FILE"


@pytest.fixture()
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    (tmp_path / "input.json").write_text('{"text": "One. Two. Three."}')
    return tmp_path


def answers(tmp: Path, *outputs: object) -> str:
    path = tmp / "answers.jsonl"
    path.write_text("".join(json.dumps({"calls": [], "output": o}) + "\n" for o in outputs))
    return f"scripted:{path}"


def run(tmp: Path, *extra: str) -> tuple[int, str, str]:
    arguments = ["run", str(tmp / "plan.json"), "--tools", str(tmp / "tools.py")]
    arguments += ["--input", str(tmp / "input.json"), *extra]
    result = runner.invoke(app, arguments)
    return result.exit_code, result.stdout, result.stderr


def test_run_with_a_scripted_model_prints_the_final_state(tmp: Path) -> None:
    code, out, err = run(tmp, "--model", answers(tmp, "One. Two.", "One."))
    assert code == 0
    assert json.loads(out) == {"short": "One. Two.", "shorter": "One.", "loud": "ONE."}
    assert err.splitlines()[-1] == "completed: 3 calls (3 succeeded)"


def test_run_with_a_model_and_json_gives_every_call(tmp: Path) -> None:
    code, out, _ = run(tmp, "-m", answers(tmp, "a", "b"), "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["status"] == "completed"
    assert [c["status"] for c in payload["calls"]] == ["succeeded"] * 3


def test_without_a_model_the_latent_calls_stay_pending(tmp: Path) -> None:
    code, out, err = run(tmp)
    assert (code, json.loads(out)) == (1, {})
    assert err.splitlines()[-1] == (
        "partial: 3 calls (1 pending_latent: #0 summarize, 2 skipped: #1 summarize, #2 shout)"
    )


def test_a_model_that_answers_badly_fails_that_call_with_exit_one(tmp: Path) -> None:
    code, out, err = run(tmp, "--model", answers(tmp, "fine", 1, 2, 3, 4))
    assert code == 1
    assert json.loads(out) == {"short": "fine"}
    assert (
        "#1 summarize failed: SubRequestError: no usable result for latent #1 summarize after "
        "4 answers: the output does not fit the schema of summarize"
    ) in err
    assert err.splitlines()[-1] == (
        "failed: 3 calls (1 succeeded, 1 failed: #1 summarize, 1 skipped: #2 shout)"
    )


def test_a_model_that_runs_out_of_answers_fails_the_call(tmp: Path) -> None:
    code, _, err = run(tmp, "--model", answers(tmp, "only one"))
    assert code == 1
    assert "#1 summarize failed: SubRequestError: the model failed on #1 summarize:" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "nope"], f"{MUST}, got 'nope'"),
        (["--base-url", "http://localhost:8000/v1"], "--base-url applies to --model openai"),
        (["--model", "scripted:missing.jsonl"], "cannot read transcript 'missing.jsonl'"),
    ],
)
def test_bad_model_options_exit_two(tmp: Path, extra: list[str], message: str) -> None:
    code, _, err = run(tmp, *extra)
    assert code == 2
    assert message in err


def test_a_model_cannot_go_with_a_journal(tmp: Path) -> None:
    journal = tmp / "runs.db"
    code, _, err = run(tmp, "--model", answers(tmp, "a", "b"), "--journal", str(journal))
    assert code == 2
    assert "--model cannot go with --journal" in err
    assert not journal.exists()
