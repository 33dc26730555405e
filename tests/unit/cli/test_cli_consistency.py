"""The command line is consistent (issue 24 point 7, issue 25 point 6; docs/cli.md).

* ``obelisk run`` shows instance layers, as text and in ``--json``;
* ``graph`` takes ``--override``, ``--no-stdlib`` and ``--files-root`` like ``check``;
* the hint after a pause names the ``--tools`` to resume with, and works as printed;
* a journaled run names itself on standard error when it starts;
* a tool taking ``obelisk.Context`` works with and without ``--journal``;
* a failure's message of several lines prints on several lines;
* ``run --approve`` asks for a plain reason (there is no model);
* ``--tools`` help says it loads ``Tool`` objects;
* ``--state`` holding an array is a usage error;
* a tool raising ``SystemExit(0)`` fails its call, ``--json`` still prints its document;
* what a tools module prints at import or from ``atexit`` goes to standard error.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[3]
OBELISK = Path(sys.executable).with_name("obelisk")
INSTANCES = ROOT / "examples" / "instances"

TOOLS = '''
import os
import sys
import time

import obelisk
from obelisk import tool


@tool
def greet(name: str, ctx: obelisk.Context) -> str:
    """Greets name; reads its run context."""
    return f"hi {name} ({ctx.tool} #{ctx.call}, key {bool(ctx.idempotency_key)})"


@tool
def bad() -> int:
    """Fails with a message of two lines."""
    raise ValueError("line one\\nline two")


@tool
def quit_quietly() -> int:
    """Exits the process, as a careless tool might."""
    raise SystemExit(0)


@tool
def slow() -> int:
    """Says it started, then takes its time."""
    print("slow started", flush=True)
    time.sleep(float(os.environ.get("SLOW_SECONDS", "0")))
    return 1


@tool(requires_approval=True)
def refund(amount: int) -> str:
    """Gives money back."""
    return f"refunded {amount}"
'''

SHADOW = '''
from obelisk import tool


@tool(pure=True)
def upper(text: str) -> str:
    """Shouts (the name of a standard tool)."""
    return text.upper() + "!"
'''


@pytest.fixture()
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cc_tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "cc_shadow.py").write_text(SHADOW, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("cc_tools", "cc_shadow"):
        sys.modules.pop(name, None)
    return tmp_path


def plan(path: Path, *calls: dict[str, Any]) -> str:
    path.write_text(json.dumps(list(calls)), encoding="utf-8")
    return str(path)


def cli(*args: str, input: str | None = None) -> Any:
    return runner.invoke(app, list(args), input=input)


def shell(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OBELISK), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


# -- instances --------------------------------------------------------------------------


def test_run_json_has_the_instance_layers_of_examples_instances() -> None:
    done = cli(
        "run", str(INSTANCES / "plan.json"), "--tools", str(INSTANCES / "tools.py"),
        "--input", str(INSTANCES / "input.json"), "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    expected = json.loads((INSTANCES / "expected.json").read_text(encoding="utf-8"))
    assert payload["state"] == expected["state"]
    assert payload["instances"] == expected["instances"]


def test_run_prints_the_instance_layers_as_text() -> None:
    done = cli(
        "run", str(INSTANCES / "plan.json"), "--tools", str(INSTANCES / "tools.py"),
        "--input", str(INSTANCES / "input.json"),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    head, _, rest = done.stdout.partition("\ninstances:\n")
    assert head.startswith("state:\n")
    expected = json.loads((INSTANCES / "expected.json").read_text(encoding="utf-8"))
    assert json.loads(head.removeprefix("state:\n")) == expected["state"]
    assert json.loads(rest) == expected["instances"]


def test_a_plan_without_instances_prints_its_state_alone(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"})
    done = cli("run", path)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"s": 3}
    done = cli("run", str(tmp / "p.json"), "--json")
    assert "instances" not in json.loads(done.stdout)


# -- graph and simulate choose tools like check and run -----------------------------------


@pytest.mark.parametrize("command", ["graph", "simulate", "check", "run"])
def test_override_and_no_stdlib_work_for_every_command(tmp: Path, command: str) -> None:
    path = plan(tmp / "p.json", {"_tool": "upper", "text": "hi", "_outputPath": "†state.u"})
    refused = cli(command, path, "--tools", "cc_shadow.py")
    assert refused.exit_code == 2
    assert "pass --override" in refused.stderr
    for option in ("--override", "--no-stdlib"):
        done = cli(command, path, "--tools", "cc_shadow.py", option)
        assert done.exit_code == 0, (option, done.output)
        if command == "graph":
            assert "#0 upper" in done.stdout


def test_graph_takes_files_root(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "read_text", "path": "a.txt", "_outputPath": "†state.t"})
    done = cli("graph", path, "--files-root", str(tmp))
    assert done.exit_code == 0, done.output


# -- durable runs -------------------------------------------------------------------------


def test_the_pause_hint_names_the_tools_and_works_as_printed(tmp: Path) -> None:
    path = plan(
        tmp / "p.json",
        {"_tool": "upper", "text": "x", "_outputPath": "†state.u"},
        {"_tool": "refund", "amount": 6, "_outputPath": "†state.r"},
    )
    done = cli("run", path, "--tools", "cc_tools.py", "--tools", "cc_shadow.py", "--override",
               "--journal", "runs.db", "--run-id", "r1")  # fmt: skip
    assert done.exit_code == 1, done.output
    hint = done.stderr.strip().splitlines()[-1]
    command = hint.partition(", then ")[2]
    assert command == (
        "obelisk resume r1 --journal runs.db --tools cc_tools.py --tools cc_shadow.py --override"
    )
    listed = json.loads(cli("approvals", "list", "--journal", "runs.db", "--json").stdout)
    assert cli("approve", listed[0]["id"], "--journal", "runs.db").exit_code == 0
    resumed = cli(*shlex.split(command)[1:])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout) == {"r": "refunded 6", "u": "X!"}


def test_a_journaled_run_names_itself_before_its_tools_run(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "slow", "_outputPath": "†state.s"})
    done = cli("run", path, "--tools", "cc_tools.py", "--journal", "runs.db", "--run-id", "r7")
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert lines[0] == "run r7 (journal runs.db)"
    assert lines.index("slow started") > 0
    assert lines.count("run r7 (journal runs.db)") == 1


def test_a_killed_journaled_run_was_named_before_it_died(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "slow", "_outputPath": "†state.s"})
    process = subprocess.Popen(
        [str(OBELISK), "run", path, "--tools", "cc_tools.py", "--journal", "runs.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SLOW_SECONDS": "30"},
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline().strip()
        second = process.stderr.readline().strip()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    assert second == "slow started"
    assert first.startswith("run ") and first.endswith(" (journal runs.db)")
    run_id = first.split()[1]
    listed = json.loads(cli("runs", "list", "--journal", "runs.db", "--json").stdout)
    assert [row["run_id"] for row in listed] == [run_id]


@pytest.mark.parametrize("journal", [False, True])
def test_a_tool_taking_a_context_works_with_or_without_a_journal(tmp: Path, journal: bool) -> None:
    path = plan(tmp / "p.json", {"_tool": "greet", "name": "ann", "_outputPath": "†state.g"})
    extra = ["--journal", "runs.db"] if journal else []
    done = cli("run", path, "--tools", "cc_tools.py", *extra)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"g": "hi ann (greet #0, key True)"}


# -- what run prints ----------------------------------------------------------------------


def test_a_failure_message_of_two_lines_prints_on_two_lines(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "bad", "_outputPath": "†state.b"})
    done = cli("run", path, "--tools", "cc_tools.py")
    assert done.exit_code == 1
    assert "#0 bad failed: ValueError: line one\nline two\n" in done.stderr
    assert "\\n" not in done.stderr


def test_run_approve_asks_for_a_plain_reason(tmp: Path) -> None:
    path = plan(tmp / "p.json", {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"})
    done = cli("run", path, "--approve", input="n\nnot today\n")
    assert done.exit_code == 1
    assert "Reason: not today" in done.stderr
    assert "model" not in done.stderr
    assert "rejected: not today" in done.stderr


def test_tools_help_says_tool_objects_load_too() -> None:
    for command in ("run", "check", "graph", "simulate", "tools"):
        text = " ".join(cli(command, "--help").stdout.split())
        assert "Tool objects" in text, command


def test_tool_objects_of_a_module_load(tmp: Path) -> None:
    (tmp / "schema_tools.py").write_text(
        "from obelisk import Tool\n"
        "echo = Tool.from_schema({'name': 'echo', 'parameters': {'type': 'object',\n"
        "    'properties': {'x': {'type': 'integer'}}, 'required': ['x']}},\n"
        "    function=lambda x: x)\n",
        encoding="utf-8",
    )
    path = plan(tmp / "p.json", {"_tool": "echo", "x": 4, "_outputPath": "†state.e"})
    done = cli("run", path, "--tools", "schema_tools.py")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"e": 4}


@pytest.mark.parametrize("command", ["run", "check"])
@pytest.mark.parametrize("value", ["[1, 2]", '"text"', "3"])
def test_state_that_is_not_an_object_is_a_usage_error(tmp: Path, value: str, command: str) -> None:
    path = plan(tmp / "p.json", {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"})
    (tmp / "s.json").write_text(value, encoding="utf-8")
    done = cli(command, path, "--state", "s.json")
    assert done.exit_code == 2
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert done.stderr.startswith("obelisk: error: state 's.json' must hold a JSON object")
    assert "Traceback" not in done.stderr


# -- tools that misbehave toward the process -----------------------------------------------


def test_a_tool_raising_system_exit_fails_its_call_and_json_is_printed(tmp: Path) -> None:
    path = plan(
        tmp / "p.json",
        {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"},
        {"_tool": "quit_quietly", "_outputPath": "†state.q"},
    )
    done = shell("run", path, "--tools", "cc_tools.py", "--json")
    assert done.returncode == 1, done.stderr
    payload = json.loads(done.stdout)
    assert payload["status"] == "failed"
    failed = [call for call in payload["calls"] if call["tool"] == "quit_quietly"]
    assert failed[0]["status"] == "failed"
    assert failed[0]["error"]["type"] == "SystemExit"
    text = shell("run", path, "--tools", "cc_tools.py")
    assert text.returncode == 1
    assert "#1 quit_quietly failed: SystemExit" in text.stderr


NOISY_MODULE = '''
import atexit
import os
import sys

from obelisk import tool

print("printed at import")
os.write(1, b"fd 1 at import\\n")


def goodbye():
    print("printed at exit")
    sys.stdout.flush()
    os.write(1, b"fd 1 at exit\\n")


atexit.register(goodbye)


@tool
def quiet() -> int:
    """Returns 1."""
    return 1
'''


@pytest.mark.parametrize("command", ["run", "check", "tools"])
def test_a_module_printing_at_import_or_exit_leaves_json_stdout_alone(
    tmp: Path, command: str
) -> None:
    (tmp / "noisy_module.py").write_text(NOISY_MODULE, encoding="utf-8")
    path = plan(tmp / "p.json", {"_tool": "quiet", "_outputPath": "†state.q"})
    args = [path] if command != "tools" else []
    done = shell(command, *args, "--tools", "noisy_module.py", "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # exactly one JSON document
    assert done.stdout.count("\n") == 1
    for line in ("printed at import", "fd 1 at import", "printed at exit", "fd 1 at exit"):
        assert line in done.stderr


def test_a_stubs_file_printing_as_it_loads_leaves_json_stdout_alone(tmp: Path) -> None:
    (tmp / "stubs.py").write_text(
        "import os\nprint('stubs printed')\nos.write(1, b'stubs fd 1\\n')\n"
        "STUBS = {'quit_quietly': 5}\n",
        encoding="utf-8",
    )
    path = plan(tmp / "p.json", {"_tool": "quit_quietly", "_outputPath": "†state.q"})
    done = shell("simulate", path, "--tools", "cc_tools.py", "--stubs", "stubs.py", "--json")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)
    assert "stubs printed" in done.stderr and "stubs fd 1" in done.stderr


def test_a_tools_module_exiting_as_it_loads_is_a_usage_error(tmp: Path) -> None:
    (tmp / "exits.py").write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    path = plan(tmp / "p.json", {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.s"})
    done = shell("run", path, "--tools", "exits.py", "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "obelisk: error: cannot load tools from exits.py: it called sys.exit(0) as it loaded\n"
    )
