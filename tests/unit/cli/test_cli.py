"""The command line: exit codes, exact output shapes, standard input, bad invocations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obelisk import __version__
from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool

@tool
def fetch(key: str) -> dict[str, int]:
    """Fetch."""
    return {"n": 1}

@tool
def double(n: int) -> int:
    """Double."""
    return 2 * n
'''

GOOD = [
    {"_tool": "fetch", "key": "†input.key", "_outputPath": "†state.r"},
    {"_tool": "double", "n": "†state.r.n", "_outputPath": "†state.d || †state.e"},
    {"_tool": "fetch", "key": "x", "_outputPath": "†state.other"},
]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "good.json").write_text(json.dumps(GOOD))
    bad = [{"_tool": "fetch", "key": 3}, {"_tool": "dbl", "n": "†state.nope"}]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "input.json").write_text('{"key": "k"}')
    return {p.stem: p for p in tmp_path.iterdir()}


def test_check_ok_exits_zero(files: dict[str, Path]) -> None:
    result = runner.invoke(
        app,
        [
            "check",
            str(files["good"]),
            "--tools",
            str(files["tools"]),
            "--input",
            str(files["input"]),
        ],
    )
    assert result.exit_code == 0
    assert result.stdout == f"{files['good']}: ok (3 calls, 1 dependency)\n"


def test_check_and_run_see_the_same_tools(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            [
                {
                    "_tool": "branch",
                    "condition": True,
                    "value": "x",
                    "_outputPath": "†state.a || †state.b",
                },
                {"_tool": "upper", "text": "†state.a", "_outputPath": "†state.c"},
            ]
        )
    )
    checked = runner.invoke(app, ["check", str(plan)])
    assert checked.exit_code == 0, checked.stdout
    assert checked.stdout == f"{plan}: ok (2 calls, 1 dependency)\n"
    ran = runner.invoke(app, ["run", str(plan), "--json"])
    assert ran.exit_code == 0
    assert json.loads(ran.stdout)["state"] == {"a": "x", "c": "X"}
    for command in ("check", "run"):
        left_out = runner.invoke(app, [command, str(plan), "--no-stdlib"])
        assert left_out.exit_code == 2
        shown = left_out.stdout + left_out.stderr
        assert "error[unknown_tool] #0 branch, _tool: unknown tool 'branch'" in shown


def test_two_tool_files_defining_one_name_is_an_error_naming_both(tmp_path: Path) -> None:
    source = 'from obelisk import tool\n\n@tool\ndef hello() -> str:\n    "Hi."\n    return "hi"\n'
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(source)
    (tmp_path / "plan.json").write_text('[{"_tool": "hello"}]')
    for command in ("check", "run", "tools"):
        args = [command] if command == "tools" else [command, str(tmp_path / "plan.json")]
        result = runner.invoke(
            app, [*args, "-t", str(tmp_path / "a.py"), "-t", str(tmp_path / "b.py")]
        )
        assert result.exit_code == 2
        assert result.stderr == (
            f"obelisk: error: tool 'hello' is defined in both {tmp_path / 'a.py'} "
            f"and {tmp_path / 'b.py'}\n"
        )


def test_check_errors_exit_two_with_located_messages(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["check", str(files["bad"]), "--tools", str(files["tools"])])
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [
        "error[invalid_argument] #0 fetch, args.key: expected a string, got 3",
        "error[unknown_tool] #1 dbl, _tool: unknown tool 'dbl'; did you mean 'double'?",
        "error[unresolved_reference] #1 dbl, args.n: nothing in the plan writes †state.nope, "
        "and the state does not hold it",
        "    †state.nope",
        "    ^^^^^^^^^^^",
        f"{files['bad']}: 3 errors (2 calls, 0 dependencies)",
    ]


def test_check_json_shape(files: dict[str, Path]) -> None:
    result = runner.invoke(
        app, ["check", str(files["bad"]), "--tools", str(files["tools"]), "--json"]
    )
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert set(payload) == {"ok", "diagnostics"}
    assert payload["ok"] is False
    assert payload["diagnostics"][2] == {
        "code": "unresolved_reference",
        "severity": "error",
        "call": 1,
        "path": "args.n",
        "span": [0, 11],
        "message": "nothing in the plan writes †state.nope, and the state does not hold it",
    }
    for item in payload["diagnostics"]:
        assert list(item) == ["code", "severity", "call", "path", "span", "message"]


def test_check_reads_standard_input(files: dict[str, Path]) -> None:
    args = ["check", "-", "--json", "--tools", str(files["tools"])]
    result = runner.invoke(app, args, input=json.dumps(GOOD))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"ok": True, "diagnostics": []}


def test_check_bad_json_from_stdin_is_located() -> None:
    # The words after "invalid JSON:" are Python's and change between versions; the code,
    # the location and the caret are obelisk's. A missing comma is found at the same place
    # by every supported Python.
    result = runner.invoke(app, ["check", "-"], input='[{"_tool": "a" "x": 1}]')
    assert result.exit_code == 2
    headline, source, caret = result.stdout.splitlines()[:3]
    assert re.fullmatch(r"error\[json_syntax\]: invalid JSON: \S.* at line 1, column 16", headline)
    assert source == '    [{"_tool": "a" "x": 1}]'
    assert caret == "                   ^"


def test_missing_plan_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert result.stderr == (
        f"obelisk: error: cannot read plan '{tmp_path / 'nope.json'}': No such file or directory\n"
    )


def test_bad_input_json(files: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = runner.invoke(app, ["check", str(files["good"]), "--input", str(broken)])
    assert result.exit_code == 2
    assert "is not valid JSON: Expecting property name enclosed in double quotes" in result.stderr


def test_tools_that_do_not_load(files: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["check", str(files["good"]), "--tools", str(tmp_path / "missing.py")]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("obelisk: error: ")
    assert "missing.py" in result.stderr
    assert "Traceback" not in result.stderr


def test_graph_mermaid_exact(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["graph", str(files["good"]), "--tools", str(files["tools"])])
    assert result.exit_code == 0
    assert result.stdout == (
        "flowchart TD\n"
        "  input([input])\n"
        '  c0["#0 fetch"]\n'
        '  c1["#1 double"]\n'
        '  c2["#2 fetch"]\n'
        '  input -- "†input.key" --> c0\n'
        '  c0 -- "†state.r.n" --> c1\n'
    )


def test_graph_dot_draws_alternatives_dashed(tmp_path: Path) -> None:
    plan = [
        {"_tool": "pay", "_outputPath": "†state.ok || †state.err"},
        {"_tool": "ship", "r": "†state.ok"},
        {"_tool": "report", "e": "†state.err"},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan))
    result = runner.invoke(app, ["graph", str(path), "--format", "dot"])
    assert result.exit_code == 2  # the tools are unknown: drawn all the same, errors on stderr
    assert result.stderr.splitlines()[0] == (
        "error[unknown_tool] #0 pay, _tool: unknown tool 'pay'"
    )
    assert result.stdout == (
        "digraph plan {\n"
        "  rankdir=TB;\n"
        "  node [shape=box];\n"
        '  c0 [label="#0 pay"];\n'
        '  c1 [label="#1 ship"];\n'
        '  c2 [label="#2 report"];\n'
        '  c0 -> c1 [label="†state.ok (alternative 1 of 2)", style=dashed];\n'
        '  c0 -> c2 [label="†state.err (alternative 2 of 2)", style=dashed];\n'
        "}\n"
    )


def test_graph_unknown_format(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["graph", str(files["good"]), "--format", "png"])
    assert result.exit_code == 2
    assert result.stderr == "obelisk: error: unknown --format 'png'; expected 'mermaid' or 'dot'\n"


def test_graph_of_unparsable_plan(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"calls": 3}')
    result = runner.invoke(app, ["graph", str(path)])
    assert result.exit_code == 2
    assert result.stderr == "error[plan_shape]: 'calls' must be an array of calls, found a number\n"


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"obelisk {__version__}\n"


def test_graph_marks_the_edges_of_a_cycle(tmp_path: Path) -> None:
    plan = [
        {"_tool": "upper", "text": "†state.b", "_outputPath": "†state.a"},
        {"_tool": "upper", "text": "†state.a", "_outputPath": "†state.b"},
        {"_tool": "upper", "text": "x", "_outputPath": "†state.c"},
        {"_tool": "upper", "text": "†state.c"},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan))
    result = runner.invoke(app, ["graph", str(path)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[-4:] == [
        '  c1 -- "†state.b" --> c0',
        '  c0 -- "†state.a" --> c1',
        '  c2 -- "†state.c" --> c3',
        "  linkStyle 0,1 stroke:#d32f2f,stroke-width:3px",
    ]
    assert (
        "error[dependency_cycle] #0 upper: dependency cycle: #0 upper -> #1 upper -> #0 upper"
        in (result.stderr)
    )
    dot = runner.invoke(app, ["graph", str(path), "-f", "dot"])
    assert '  c1 -> c0 [label="†state.b", color="#d32f2f", penwidth=3];' in dot.stdout
    assert '  c2 -> c3 [label="†state.c"];' in dot.stdout


def test_graph_colours_calls_from_a_trace(tmp_path: Path) -> None:
    plan = [
        {"_tool": "divide", "a": 1, "b": 0, "_outputPath": "†state.q"},
        {"_tool": "abs", "value": "†state.q"},
        {"_tool": "upper", "text": "fine"},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan))
    trace = tmp_path / "run.jsonl"
    ran = runner.invoke(app, ["run", str(path), "--trace", str(trace)])
    assert ran.exit_code == 1
    result = runner.invoke(app, ["graph", str(path), "--trace", str(trace)])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-6:] == [
        "  classDef failed fill:#ffcdd2",
        "  class c0 failed",
        "  classDef skipped fill:#e0e0e0",
        "  class c1 skipped",
        "  classDef succeeded fill:#c8e6c9",
        "  class c2 succeeded",
    ]
    dot = runner.invoke(app, ["graph", str(path), "--trace", str(trace), "-f", "dot"])
    assert '  c0 [label="#0 divide", style=filled, fillcolor="#ffcdd2", tooltip="failed"];' in (
        dot.stdout
    )


@pytest.mark.parametrize("command", ["check", "graph", "run", "loop", "tools"])
def test_help_is_plain_and_cites_only_the_docs(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith(f"Usage: obelisk {command} [OPTIONS]")
    for noise in ("<bool>", "<str>", "<path>", "<int", "{plan}", "{PLAN}", "DESIGN", "§"):
        assert noise not in text, noise
    assert "Traceback" not in text
