"""``obelisk loop``: model choice, output shapes, exit codes, approval, transcripts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk import Loop, Registry, ScriptedModel
from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool

@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n

@tool
def explode(n: int) -> int:
    """Always raises."""
    raise RuntimeError(f"boom {n}")
'''

DOUBLE = {"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}
AGAIN = {"_tool": "double", "n": "†state.twice", "_outputPath": "†state.four"}
DONE = {"calls": [], "output": {"result": "†state.twice"}}


MUST = "--model must be openai:MODEL, anthropic:MODEL, litellm:MODEL or scripted:FILE"


@pytest.fixture()
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "input.json").write_text('{"n": 4}')
    return tmp_path


def script(tmp: Path, *answers: Any, name: str = "script.jsonl") -> str:
    path = tmp / name
    path.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers))
    return f"scripted:{path}"


def loop_args(tmp: Path, model: str, *extra: str) -> list[str]:
    return [
        "loop",
        "--model",
        model,
        "--tools",
        str(tmp / "tools.py"),
        "--input",
        str(tmp / "input.json"),
        *extra,
    ]


def test_json_prints_the_whole_result(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": None}, DONE)
    result = runner.invoke(app, loop_args(tmp, model, "--json"))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert list(payload) == ["status", "output", "state", "turns", "revisions"]  # issue 27
    assert payload["status"] == "completed"
    assert payload["output"] == {"result": 8}
    assert payload["state"] == {"twice": 8}
    assert [t["turn"] for t in payload["turns"]] == [1, 2]
    first = payload["turns"][0]
    assert first["solution"] == {"calls": [DOUBLE], "output": None}
    assert first["state_diff"][0]["path"] == "†state.twice"
    assert result.stderr == ""


def test_human_output_shows_the_output_and_the_state(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    result = runner.invoke(app, loop_args(tmp, model))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "output:"
    assert lines[1] == "8"
    assert lines[2] == "state:"
    assert json.loads("\n".join(lines[3:])) == {"twice": 8}
    assert result.stderr.strip() == "completed in 1 turn"


def test_verbose_summarizes_every_turn(tmp: Path) -> None:
    failing = {"_tool": "explode", "n": 1, "_outputPath": "†state.x"}
    model = script(tmp, {"calls": [DOUBLE, failing], "output": None}, DONE)
    result = runner.invoke(app, loop_args(tmp, model, "--verbose"))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "turn 1: 2 calls (1 succeeded, 1 failed); #1 explode: RuntimeError: boom 1",
        "turn 2: 0 calls, output given",
        "completed in 2 turns",
    ]


def test_a_spent_turn_budget_exits_3_with_the_partial_result(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": None}, {"calls": [AGAIN], "output": None})
    result = runner.invoke(app, loop_args(tmp, model, "--max-turns", "2", "--json"))
    assert result.exit_code == 3
    payload = json.loads(result.stdout)
    assert payload["status"] == "budget_exceeded"
    assert payload["output"] is None
    assert payload["state"] == {"twice": 8, "four": 16}
    assert len(payload["turns"]) == 2
    assert result.stderr.splitlines() == [
        "obelisk: LoopBudgetExceeded: no output after max_turns=2 turns"
    ]
    human = runner.invoke(app, loop_args(tmp, model, "--max-turns", "2"))
    assert human.exit_code == 3
    assert "Traceback" not in human.stderr
    assert len(human.stderr.splitlines()) == 1


def test_a_spent_correction_budget_exits_1_with_one_line(tmp: Path) -> None:
    broken = {"raw": "this is not JSON"}
    model = script(tmp, broken, broken)
    result = runner.invoke(app, loop_args(tmp, model, "--max-corrections", "1", "--json"))
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["status"] == "corrections_exceeded"
    assert [t["raw"] for t in payload["turns"]] == ["this is not JSON"] * 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("obelisk: CorrectionBudgetExceeded: 2 unusable answers in a row")


def test_a_model_that_stops_exits_1_with_one_line(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": None})
    result = runner.invoke(app, loop_args(tmp, model, "--json"))
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert (payload["status"], payload["state"]) == ("stopped", {"twice": 8})
    assert result.stderr.splitlines() == [
        "obelisk: LoopStopped: the model failed: the scripted model ran out of answers: "
        "it had 1 and was asked for answer 2"
    ]
    human = runner.invoke(app, loop_args(tmp, model))
    assert human.exit_code == 1
    assert "Traceback" not in human.stderr and len(human.stderr.splitlines()) == 1
    assert human.stdout.splitlines()[:2] == ["output:", "null"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", f"{MUST}, got 'gpt-4o'"),
        ("claude:opus", f"{MUST}, got 'claude:opus'"),
        ("scripted:", f"{MUST}, got 'scripted:'"),
        ("openai:", f"{MUST}, got 'openai:'"),
        ("scripted:/no/such/file.jsonl", "cannot read transcript '/no/such/file.jsonl'"),
    ],
)
def test_a_bad_model_is_a_usage_error(tmp: Path, spec: str, message: str) -> None:
    result = runner.invoke(app, loop_args(tmp, spec))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"obelisk: error: {message}")


def test_a_bad_transcript_line_is_a_usage_error(tmp: Path) -> None:
    path = tmp / "bad.jsonl"
    path.write_text('{"calls": [], "output": 1}\nnot json\n')
    result = runner.invoke(app, loop_args(tmp, f"scripted:{path}"))
    assert result.exit_code == 2
    assert f"{path}:2: not JSON" in result.stderr


def test_openai_without_a_key_is_a_usage_error(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(app, loop_args(tmp, "openai:gpt-4o-mini"))
    assert result.exit_code == 2
    assert "OpenAIChatModel needs an API key" in result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mode", "sideways"], "unknown --mode 'sideways'"),
        (["--base-url", "http://localhost:8000/v1"], "--base-url applies to openai:"),
        (["--no-stdlib", "--files-root", "."], "--files-root applies to the standard file tools"),
        (["--max-turns", "0"], ""),
        (["--stream", "--mode", "lazy"], "stream=True applies to eager mode only"),
    ],
)
def test_bad_settings_are_usage_errors(tmp: Path, extra: list[str], message: str) -> None:
    model = script(tmp, DONE)
    result = runner.invoke(app, loop_args(tmp, model, *extra))
    assert result.exit_code == 2
    assert message in result.stderr


def test_bad_files_are_usage_errors(tmp: Path) -> None:
    model = script(tmp, DONE)
    (tmp / "list.json").write_text("[1, 2]")
    (tmp / "broken.json").write_text("{")
    for extra, message in [
        (["--state", str(tmp / "list.json")], "must hold a JSON object, got list"),
        (["--output-schema", str(tmp / "broken.json")], "is not valid JSON"),
        (["--output-schema", str(tmp / "missing.json")], "cannot read output schema"),
        (["--tools", str(tmp / "missing.py")], "cannot load tools"),
    ]:
        result = runner.invoke(app, loop_args(tmp, model, *extra))
        assert result.exit_code == 2, extra
        assert message in result.stderr, extra


def test_state_instructions_and_output_schema_reach_the_loop(tmp: Path) -> None:
    (tmp / "state.json").write_text('{"seen": true}')
    (tmp / "schema.json").write_text('{"type": "integer"}')
    model = script(tmp, {"calls": [], "output": "eight"}, {"calls": [DOUBLE], "output": 8})
    args = ["--state", str(tmp / "state.json"), "--output-schema", str(tmp / "schema.json")]
    args += ["--instructions", "Be brief.", "--json"]
    result = runner.invoke(app, loop_args(tmp, model, *args))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["state"] == {"seen": True, "twice": 8}
    first = payload["turns"][0]
    texts = [m["text"] for m in first["request"]["context"] if m["type"] == "text"]
    assert "Be brief." in texts
    reference = {"$ref": "#/$defs/reference"}  # held once in $defs (issue 29)
    assert first["request"]["schema"]["properties"]["output"] == {
        "anyOf": [{"type": "integer"}, reference, {"type": "null"}]
    }
    assert first["errors"][0]["error"]["type"] == "invalid_output"


def test_input_from_stdin(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    args = ["loop", "--model", model, "--tools", str(tmp / "tools.py"), "--input", "-"]
    result = runner.invoke(app, [*args, "--json"], input='{"n": 21}')
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["output"] == 42


def test_standard_tools_unless_no_stdlib(tmp: Path) -> None:
    upper = {"_tool": "upper", "text": "hi", "_outputPath": "†state.loud"}
    model = script(tmp, {"calls": [upper], "output": "†state.loud"})
    result = runner.invoke(app, loop_args(tmp, model, "--json"))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["output"] == "HI"
    without = runner.invoke(app, loop_args(tmp, model, "--no-stdlib", "--json"))
    assert without.exit_code == 1  # unknown tool goes back to the model, whose script ends
    errors = json.loads(without.stdout)["turns"][0]["errors"]
    assert errors[0]["error"]["type"] == "unknown_tool"


def test_stream_runs_the_same_turns(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": None}, DONE)
    result = runner.invoke(app, loop_args(tmp, model, "--stream", "--json"))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["output"], payload["state"]) == ({"result": 8}, {"twice": 8})


def lazy_args(tmp: Path, model: str, *extra: str) -> list[str]:
    return loop_args(tmp, model, "--mode", "lazy", "--approve", *extra)


def test_approve_yes_runs_the_plan(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE, AGAIN], "output": "†state.four"})
    result = runner.invoke(app, lazy_args(tmp, model, "--json"), input="y\n")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["output"] == 16
    shown = result.stderr
    for text in ("#0 double", "#1 double", 'n = "†input.n"', "†state.twice", "†state.four"):
        assert text in shown
    assert "Run this plan? [y]es / [n]o / [e]dit: y" in shown


def test_approve_no_sends_the_reason_to_the_model(tmp: Path) -> None:
    model = script(
        tmp,
        {"calls": [{**DOUBLE, "n": 100}], "output": "†state.twice"},
        {"calls": [DOUBLE], "output": "†state.twice"},
    )
    transcript = tmp / "run.jsonl"
    result = runner.invoke(
        app,
        lazy_args(tmp, model, "--json", "--transcript", str(transcript)),
        input="n\nstart from the input\ny\n",
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["output"] == 8
    first, second = payload["turns"]
    rejected = {"type": "rejected", "message": "the plan was rejected: start from the input"}
    assert first["errors"] == [{"type": "error", "error": rejected}]
    assert {"type": "error", "error": rejected} in second["request"]["context"]
    assert "Reason (sent to the model): start from the input" in result.stderr
    assert payload["state"] == {"twice": 8}  # the rejected plan did not run
    assert len(transcript.read_text(encoding="utf-8").splitlines()) == 2


def test_approve_no_with_a_one_answer_script(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    result = runner.invoke(app, lazy_args(tmp, model, "--json"), input="n\ntoo risky\n")
    assert result.exit_code == 1  # the rejection went back; the script had no second answer
    payload = json.loads(result.stdout)
    assert (payload["status"], payload["state"]) == ("stopped", {})
    assert payload["turns"][0]["errors"][0]["error"]["message"] == (
        "the plan was rejected: too risky"
    )


def test_approve_reads_answers_until_stdin_ends(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    result = runner.invoke(app, lazy_args(tmp, model), input="maybe\n")
    assert result.exit_code == 1
    assert "answer y, n or e" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "obelisk: approval abandoned: no answer: standard input ended"
    )


EDITOR = """
import json, sys
path = sys.argv[1]
plan = json.load(open(path, encoding="utf-8"))
plan[0]["n"] = 5
json.dump(plan, open(path, "w", encoding="utf-8"))
"""


def test_approve_edit_opens_the_editor(tmp: Path) -> None:
    (tmp / "editor.py").write_text(EDITOR)
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    env = {"VISUAL": "", "EDITOR": f"{sys.executable} {tmp / 'editor.py'}"}
    result = runner.invoke(app, lazy_args(tmp, model, "--json"), input="e\ny\n", env=env)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["output"] == 10
    assert result.stderr.count("Plan to approve") == 2  # the edited plan is shown again
    assert "n = 5" in result.stderr


def test_approve_edit_without_an_editor_asks_again(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    env = {"VISUAL": "", "EDITOR": ""}
    result = runner.invoke(app, lazy_args(tmp, model, "--json"), input="e\ny\n", env=env)
    assert result.exit_code == 0, result.stderr
    assert "set $EDITOR to edit the plan" in result.stderr
    assert json.loads(result.stdout)["output"] == 8


def test_transcript_replays_to_the_same_result(tmp: Path) -> None:
    failing = {"_tool": "explode", "n": 1, "_outputPath": "†state.x"}
    model = script(
        tmp,
        {"raw": "not JSON at all"},
        {"calls": [DOUBLE, failing], "output": None},
        {"calls": [AGAIN], "output": {"result": "†state.four"}},
    )
    transcript = tmp / "out" / "run.jsonl"
    transcript.parent.mkdir()
    result = runner.invoke(app, loop_args(tmp, model, "--json", "--transcript", str(transcript)))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    lines = transcript.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["turn"] for line in lines] == [1, 2, 3]
    assert json.loads(lines[0])["raw"] == "not JSON at all"
    # the Python API replays it ...
    tools = Registry.from_module(str(tmp / "tools.py"))
    replayed = Loop(ScriptedModel.from_jsonl(transcript), tools).run_sync({"n": 4})
    assert (replayed.output, replayed.state) == (payload["output"], payload["state"])
    assert [t.raw for t in replayed.turns] == ["not JSON at all", None, None]
    # ... and so does the command line
    again = runner.invoke(app, loop_args(tmp, f"scripted:{transcript}", "--json"))
    assert again.exit_code == 0, again.stderr
    second = json.loads(again.stdout)
    assert (second["output"], second["state"]) == (payload["output"], payload["state"])
    assert [t["solution"] for t in second["turns"]] == [t["solution"] for t in payload["turns"]]


def test_transcript_is_written_when_the_loop_stops(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": None})
    transcript = tmp / "stopped.jsonl"
    result = runner.invoke(app, loop_args(tmp, model, "--transcript", str(transcript)))
    assert result.exit_code == 1
    first, stopped = map(json.loads, transcript.read_text(encoding="utf-8").splitlines())
    assert first["solution"] == {"calls": [DOUBLE], "output": None}
    assert (stopped["turn"], stopped["solution"]) == (2, None)  # the request with no answer


def test_an_unwritable_transcript_is_a_usage_error(tmp: Path) -> None:
    model = script(tmp, DONE)
    result = runner.invoke(
        app, loop_args(tmp, model, "--transcript", str(tmp / "no" / "such" / "dir.jsonl"))
    )
    assert result.exit_code == 2
    assert "cannot write transcript" in result.stderr


def test_loop_is_listed_in_help() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "loop" in result.stdout
    detail = runner.invoke(app, ["loop", "--help"])
    assert detail.exit_code == 0
    for option in ("--model", "--mode", "--approve", "--transcript", "--max-turns", "--stream"):
        assert option in detail.stdout


def test_plan_starts_the_loop_from_a_given_plan(tmp: Path) -> None:
    model = script(tmp, {"calls": [DOUBLE], "output": "†state.twice"})
    plan = tmp / "start.json"
    plan.write_text(json.dumps([DOUBLE]))
    result = runner.invoke(app, loop_args(tmp, model, "--plan", str(plan), "--json"))
    assert result.exit_code == 0, result.stderr
    first = json.loads(result.stdout)["turns"][0]["request"]["context"]
    assert [m for m in first if m["type"] == "plan"] == [
        {"type": "plan", "plan": [{**DOUBLE, "_status": "planned"}], "mode": "eager"}
    ]
    plan.write_text('[{"_tool": 3}]')
    broken = runner.invoke(app, loop_args(tmp, model, "--plan", str(plan)))
    assert broken.exit_code == 2
    assert "error[plan_shape] #0, _tool:" in broken.stderr
    assert broken.stderr.splitlines()[-1] == f"obelisk: error: the --plan '{plan}' has errors"
