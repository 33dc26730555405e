"""``obelisk run``: exit codes, output shapes, standard input, traces, tool clashes."""

from __future__ import annotations

import json
import subprocess
import sys
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

@tool
def explode(n: int) -> int:
    """Always raises."""
    raise RuntimeError(f"boom {n}")
'''

CLASH = '''
from obelisk import tool

@tool
def add(a: int, b: int) -> int:
    """Adds, but differently."""
    return a + b + 1000
'''


@pytest.fixture()
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "clash.py").write_text(CLASH)
    (tmp_path / "input.json").write_text('{"n": 4}')
    return tmp_path


def write(tmp: Path, name: str, plan: object) -> str:
    path = tmp / name
    path.write_text(json.dumps(plan))
    return str(path)


def test_run_prints_the_final_state_and_exits_zero(tmp: Path) -> None:
    plan = write(
        tmp,
        "p.json",
        [
            {"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"},
            {"_tool": "add", "a": "†state.twice", "b": 1, "_outputPath": "†state.result"},
        ],
    )
    result = runner.invoke(
        app, ["run", plan, "--tools", str(tmp / "tools.py"), "--input", str(tmp / "input.json")]
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"twice": 8, "result": 9}
    assert result.stderr.strip() == "completed: 2 calls (2 succeeded)"


def test_run_json_shape_and_failure_exit_code(tmp: Path) -> None:
    plan = write(
        tmp,
        "p.json",
        [
            {"_tool": "explode", "n": 1, "_outputPath": "†state.x"},
            {"_tool": "double", "n": "†state.x", "_outputPath": "†state.y"},
            {"_tool": "double", "n": 5, "_outputPath": "†state.z"},
        ],
    )
    result = runner.invoke(app, ["run", plan, "--tools", str(tmp / "tools.py"), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload == {
        "status": "failed",
        "state": {"z": 10},
        "calls": [
            {
                "index": 0,
                "id": None,
                "tool": "explode",
                "status": "failed",
                "output": None,
                "error": {"type": "RuntimeError", "message": "boom 1"},
                "reason": None,
            },
            {
                "index": 1,
                "id": None,
                "tool": "double",
                "status": "skipped",
                "output": None,
                "error": None,
                "reason": "†state.x was not written: #0 explode failed",
            },
            {
                "index": 2,
                "id": None,
                "tool": "double",
                "status": "succeeded",
                "output": 10,
                "error": None,
                "reason": None,
            },
        ],
        "diagnostics": [],
    }


def test_run_human_output_lists_failures(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "explode", "n": 2}])
    result = runner.invoke(app, ["run", plan, "--tools", str(tmp / "tools.py")])
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {}
    assert result.stderr.splitlines() == [
        "#0 explode failed: RuntimeError: boom 2",
        "failed: 1 call (1 failed: #0 explode)",
    ]


def test_run_prints_messages_as_written_without_emoji_codes(tmp: Path) -> None:
    (tmp / "emoji.py").write_text(
        "from obelisk import tool\n\n@tool\ndef shout() -> int:\n"
        "    'Raises.'\n    raise ValueError('bad :x: and :smile:')\n"
    )
    plan = write(tmp, "p.json", [{"_tool": "shout"}])
    result = runner.invoke(app, ["run", plan, "--tools", str(tmp / "emoji.py")])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == "#0 shout failed: ValueError: bad :x: and :smile:"


def test_run_plan_errors_exit_two_and_run_nothing(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "nope"}])
    result = runner.invoke(app, ["run", plan, "--json"])
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["status"] == "invalid"
    assert [d["code"] for d in payload["diagnostics"]] == ["unknown_tool"]
    human = runner.invoke(app, ["run", plan])
    assert human.exit_code == 2
    assert human.stderr.splitlines()[-1] == f"{plan}: the plan has errors; nothing ran"


def test_run_reads_the_plan_or_the_input_from_stdin(tmp: Path) -> None:
    plan = [{"_tool": "add", "a": "†input.a", "b": 2, "_outputPath": "†state.sum"}]
    result = runner.invoke(app, ["run", "-"], input=json.dumps(plan))
    assert result.exit_code == 1  # †input.a missing: the call is skipped, the run is partial
    assert json.loads(result.stdout) == {}
    assert result.stderr.splitlines()[-1] == "partial: 1 call (1 skipped: #0 add)"
    path = write(tmp, "p.json", plan)
    piped = runner.invoke(app, ["run", path, "--input", "-"], input='{"a": 40}')
    assert piped.exit_code == 0
    assert json.loads(piped.stdout) == {"sum": 42}
    both = runner.invoke(app, ["run", "-", "--input", "-"], input="[]")
    assert both.exit_code == 2
    assert "cannot both be read from standard input" in both.stderr


def test_run_tool_clash_needs_override(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"}])
    clash = runner.invoke(app, ["run", plan, "--tools", str(tmp / "clash.py")])
    assert clash.exit_code == 2
    assert clash.stderr == (
        f"obelisk: error: tool 'add' in {tmp / 'clash.py'} has the name of a standard tool; "
        "pass --override to replace the standard one, or --no-stdlib to leave the standard "
        "tools out\n"
    )
    replaced = runner.invoke(app, ["run", plan, "--tools", str(tmp / "clash.py"), "--override"])
    assert replaced.exit_code == 0
    assert json.loads(replaced.stdout) == {"s": 1003}


def test_run_trace_writes_json_lines(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "double", "n": 3, "_outputPath": "†state.d"}])
    trace = tmp / "trace.jsonl"
    result = runner.invoke(
        app, ["run", plan, "--tools", str(tmp / "tools.py"), "--trace", str(trace)]
    )
    assert result.exit_code == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["event"] for e in events] == [
        "run_started",
        "call_ready",
        "call_started",
        "call_succeeded",
        "state_written",
        "run_finished",
    ]
    written = events[4]
    assert (written["call"], written["path"], written["method"], written["value"]) == (
        0,
        "†state.d",
        "set",
        6,
    )
    assert events[-1]["status"] == "completed"


def test_run_files_root_confines_file_tools(tmp: Path) -> None:
    root = tmp / "root"
    root.mkdir()
    (root / "note.txt").write_text("hello")
    plan = write(
        tmp,
        "p.json",
        [
            {"_tool": "read_text", "path": "note.txt", "_outputPath": "†state.note"},
            {"_tool": "read_text", "path": "../tools.py", "_outputPath": "†state.escape"},
        ],
    )
    result = runner.invoke(app, ["run", plan, "--files-root", str(root), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["state"] == {"note": "hello"}
    assert payload["calls"][1]["error"]["type"] == "PermissionError"
    assert "outside the files root" in payload["calls"][1]["error"]["message"]


SLOW = '''
import asyncio
from obelisk import tool

@tool
async def slow(key: str, seconds: float) -> dict[str, str]:
    """Wait, then return an object."""
    await asyncio.sleep(seconds)
    return {"z": key, "a": key}

@tool
def summarize(text: str) -> str:
    """A latent-like tool stand-in."""
    return text
'''


def test_json_output_is_the_same_bytes_whatever_order_calls_finish_in(tmp: Path) -> None:
    (tmp / "slow.py").write_text(SLOW)
    outputs = []
    for first, second in ((0.0, 0.05), (0.05, 0.0)):
        plan = write(
            tmp,
            "p.json",
            [
                {"_tool": "slow", "key": "x", "seconds": first, "_outputPath": "†state.x"},
                {"_tool": "slow", "key": "b", "seconds": second, "_outputPath": "†state.b"},
                {"_tool": "slow", "key": "u", "seconds": second, "_outputPath": "†state.n.u"},
                {"_tool": "slow", "key": "t", "seconds": first, "_outputPath": "†state.n.t"},
            ],
        )
        result = runner.invoke(app, ["run", plan, "--tools", str(tmp / "slow.py"), "--json"])
        assert result.exit_code == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    state = json.loads(outputs[0])["state"]
    assert list(state) == ["b", "n", "x"]
    assert list(state["n"]) == ["t", "u"]
    assert list(state["x"]) == ["a", "z"]


def test_trace_keeps_the_dagger_readable_and_is_written_as_it_happens(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.d"}])
    trace = tmp / "run.jsonl"
    result = runner.invoke(
        app,
        ["run", plan, "--tools", str(tmp / "tools.py"), "-i", str(tmp / "input.json"),
         "--trace", str(trace)],
    )  # fmt: skip
    assert result.exit_code == 0
    text = trace.read_text(encoding="utf-8")
    assert "\\u2020" not in text
    written = [json.loads(line) for line in text.splitlines() if '"state_written"' in line]
    assert written[0]["path"] == "†state.d"


def test_summary_names_the_calls_that_did_not_succeed(tmp: Path) -> None:
    (tmp / "latent.json").write_text(
        json.dumps({"name": "summarize_it", "parameters": {"type": "object"}})
    )
    tools = tmp / "latent_tools.py"
    tools.write_text(
        "import json, pathlib\nfrom obelisk import Tool\n"
        "summarize_it = Tool.from_schema(json.loads("
        "(pathlib.Path(__file__).parent / 'latent.json').read_text()))\n"
    )
    plan = write(
        tmp,
        "p.json",
        [
            {"_tool": "upper", "text": "a", "_outputPath": "†state.a"},
            {"_tool": "summarize_it", "_outputPath": "†state.s"},
            {"_tool": "upper", "text": "†state.s"},
        ],
    )
    result = runner.invoke(app, ["run", plan, "--tools", str(tools)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "partial: 3 calls (1 succeeded, 1 pending_latent: #1 summarize_it, 1 skipped: #2 upper)"
    )


_WHAT_RUN_LOADS = """
import contextlib, io, runpy, sys
sys.argv = ["obelisk", "run", sys.argv[1], "--tools", sys.argv[2]]
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    runpy.run_module("obelisk", run_name="__main__")
from obelisk.stdlib_tools import default_registry
later = ("obelisk.interpreter.loop", "obelisk.interpreter.simulate", "obelisk.models")
later += ("re2", "sqlite3")  # (rich.table: older typer imports it itself)
print(sorted(m for m in sys.modules if m.startswith(later)))
print([t.name for t in default_registry() if t.built])
"""


def test_run_loads_neither_the_loop_nor_dry_runs_and_builds_no_standard_tool(tmp: Path) -> None:
    plan = write(tmp, "p.json", [{"_tool": "double", "n": 2, "_outputPath": "†state.x"}])
    done = subprocess.run(
        [sys.executable, "-c", _WHAT_RUN_LOADS, plan, str(tmp / "tools.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["[]", "[]"]
    assert done.stderr.strip() == "completed: 1 call (1 succeeded)"
