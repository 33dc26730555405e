"""Command-line output people and parsers can trust (issue 16 F; docs/cli.md).

* what tools print goes to standard error, so ``obelisk run --json`` stays JSON;
* ``--json`` output parses with a strict parser (no ``NaN``), and encodes as UTF-8
  even when a plan holds lone surrogates;
* bad JSON in ``--input`` and ``--state`` exits 2 with the line, column and a caret.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.cli.io import json_for_output

runner = CliRunner()
OBELISK = Path(sys.executable).with_name("obelisk")


def strict(text: str) -> Any:
    def reject(token: str) -> Any:
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=reject)


NOISY_TOOLS = '''
import os
import subprocess
import sys

import obelisk


@obelisk.tool
def noisy(n: int) -> int:
    """Print in three ways, then return n."""
    print("print from the tool")
    sys.stdout.write("sys.stdout from the tool\\n")
    sys.stdout.flush()
    os.write(1, b"fd 1 from the tool\\n")
    subprocess.run([sys.executable, "-c", "print('a subprocess of the tool')"], check=True)
    return n


@obelisk.tool
def odd(n: int) -> dict:
    """Return values strict JSON cannot hold."""
    return {"nan": float("nan"), "inf": float("inf"), "n": n}
'''


@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    path = tmp_path / "noisy_tools.py"
    path.write_text(NOISY_TOOLS, encoding="utf-8")
    return path


def test_what_tools_print_goes_to_stderr_and_run_json_stays_json(
    noisy: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('[{"_tool": "noisy", "n": 3, "_outputPath": "†state.n"}]', encoding="utf-8")
    done = subprocess.run(
        [str(OBELISK), "run", str(plan), "--tools", str(noisy), "--no-stdlib", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    payload = strict(done.stdout)
    assert payload["status"] == "completed" and payload["state"] == {"n": 3}
    for line in (
        "print from the tool",
        "sys.stdout from the tool",
        "fd 1 from the tool",
        "a subprocess of the tool",
    ):
        assert line in done.stderr
    after = subprocess.run(  # our own output still reaches stdout afterwards
        [str(OBELISK), "run", str(plan), "--tools", str(noisy), "--no-stdlib"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert strict(after.stdout) == {"n": 3}


def test_run_json_output_parses_strictly_whatever_a_tool_returns(
    noisy: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('[{"_tool": "odd", "n": 1, "_outputPath": "†state.odd"}]', encoding="utf-8")
    for extra in (["--json"], []):
        result = runner.invoke(
            app, ["run", str(plan), "--tools", str(noisy), "--no-stdlib", *extra]
        )
        assert result.exit_code in (0, 1), result.output
        assert "Traceback" not in result.output
        printed = strict(result.stdout)
        state = printed["state"] if extra else printed
        if state:  # the tool's result was kept: NaN and Infinity print as null
            assert state == {"odd": {"inf": None, "n": 1, "nan": None}}
            count = 4 if extra else 2  # --json prints the call's output too
            assert f"{count} values could not be printed as strict JSON" in result.stderr


def test_json_for_output_replaces_what_strict_json_cannot_hold() -> None:
    deep: Any = []
    for _ in range(1_000):
        deep = [deep]
    value = {
        "b": [float("nan"), float("-inf"), 1.5],
        "a": 10**5000,
        "c": "lone \ud800 surrogate †",
        "d": deep,
        7: object,
    }
    text, replaced = json_for_output(value, sort_keys=True)
    assert replaced == 4
    parsed = strict(text)
    assert list(parsed) == ["7", "a", "b", "c", "d"]
    assert parsed["a"] == "<integer of 5001 digits>"
    assert parsed["b"] == [None, None, 1.5]
    assert parsed["c"] == "lone \ud800 surrogate †"
    assert parsed["7"] == "<class 'object'>"
    assert '"lone \\ud800 surrogate †"' in text
    text.encode("utf-8")
    depth, inner = 0, parsed["d"]
    while isinstance(inner, list):
        depth, inner = depth + 1, inner[0]
    assert (depth, inner) == (399, "<nested too deeply to print>")


SURROGATE_PLAN = '[{"_tool": "count\\ud800", "items": "†state.\\ud800x", "note": "\\ud800"}]'


def test_lone_surrogates_in_a_plan_print_escaped() -> None:
    result = obelisk.check(SURROGATE_PLAN, tools=obelisk.Registry())
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, like a real stdout
    for diagnostic in result.diagnostics:
        print(diagnostic, file=stream)
    stream.flush()
    printed = stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    assert printed == (
        "error[unknown_tool] #0 count\\ud800, _tool: unknown tool 'count\\ud800'; no tools "
        "are registered\n"
        "error[reference_syntax] #0 count\\ud800, args.items: expected a name or an integer "
        "after '.', found '\\ud800'\n"
        "    †state.\\ud800x\n"
        "           ^^^^^^\n"
    )


@pytest.mark.parametrize("as_json", [False, True])
def test_check_of_a_plan_with_lone_surrogates_prints_utf8(tmp_path: Path, as_json: bool) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(SURROGATE_PLAN, encoding="utf-8")
    result = runner.invoke(app, ["check", str(plan), *(["--json"] if as_json else [])])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    result.stdout.encode("utf-8")
    if as_json:
        codes = [d["code"] for d in strict(result.stdout)["diagnostics"]]
        assert codes == ["unknown_tool", "reference_syntax"]
    else:
        assert "\\ud800" in result.stdout


@pytest.mark.parametrize("option", ["--input", "--state"])
def test_bad_json_in_input_and_state_files_is_located(tmp_path: Path, option: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,\n "b": NaN}', encoding="utf-8")
    what = option[2:]
    for command in ("check", "run"):
        result = runner.invoke(app, [command, str(plan), option, str(bad)])
        assert result.exit_code == 2
        assert result.stderr == (
            f"obelisk: error: {what} '{bad}' is not valid JSON: NaN is not valid JSON at line 2, "
            "column 7\n"
            '     "b": NaN}\n'
            "          ^\n"
        )


def test_huge_integers_and_deep_nesting_in_input_exit_2(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    for text, message in (
        ("[" + "9" * 5000 + "]", "integer of 5000 digits is too long"),
        ("[" * 50_000 + "]" * 50_000, "nested too deeply to decode (50000 levels)"),
    ):
        data = tmp_path / "input.json"
        data.write_text(text, encoding="utf-8")
        result = runner.invoke(app, ["run", str(plan), "--input", str(data)])
        assert result.exit_code == 2
        assert message in result.stderr and "Traceback" not in result.stderr
        assert all(len(line) < 120 for line in result.stderr.splitlines()[1:])


def test_input_from_stdin_is_read_strictly(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    result = runner.invoke(app, ["run", str(plan), "--input", "-"], input="[Infinity]")
    assert result.exit_code == 2
    assert result.stderr == (
        "obelisk: error: input from stdin is not valid JSON: Infinity is not valid JSON at "
        "line 1, column 2\n"
        "    [Infinity]\n"
        "     ^\n"
    )


def test_a_trace_with_a_huge_integer_is_a_clear_error(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("[]", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"event": "call_started", "call": ' + "1" * 5000 + "}\n", encoding="utf-8")
    result = runner.invoke(app, ["graph", str(plan), "--trace", str(trace)])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"obelisk: error: trace '{trace}' line 1 is not JSON: integer of 5000 digits is too long"
    )


def test_tools_print_to_stderr_restores_stdout() -> None:
    from obelisk.cli.io import tools_print_to_stderr

    before = sys.stdout
    with tools_print_to_stderr():
        assert sys.stdout is sys.stderr
    assert sys.stdout is before
    textwrap.dedent("")  # keep the import used on every platform


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"calls": [], "output": ' + "9" * 5000 + "}", "integer of 5000 digits is too long"),
        ("[" * 5000 + "]" * 5000, "nested too deeply to decode (5000 levels)"),
        ('{"calls": [], "output": NaN}', "NaN is not valid JSON at column 25"),
    ],
    ids=["huge", "deep", "nan"],
)
def test_a_scripted_transcript_is_read_strictly(tmp_path: Path, line: str, message: str) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(line + "\n", encoding="utf-8")
    result = runner.invoke(app, ["loop", "--model", f"scripted:{transcript}"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"obelisk: error: {transcript}:1: not JSON: ")
    assert message in result.stderr and "Traceback" not in result.stderr
