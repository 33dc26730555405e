"""``obelisk tools``: the tools a command would see, one in full, and the loop's descriptions."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.interpreter.loop.messages import tool_description
from obelisk.stdlib_tools import default_registry

runner = CliRunner()

TOOLS = '''
from obelisk import tool

@tool(timeout=2.5)
def greet(name: str, polite: bool = True) -> str:
    """Greet someone.

    Longer text that the list leaves out.
    """
    return f"hello {name}"
'''


def test_lists_standard_and_given_tools_with_signatures(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TOOLS)
    result = runner.invoke(app, ["tools", "-t", str(tmp_path / "t.py")])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(default_registry()) + 1
    assert lines[-1].split("  ")[0] == "greet(name: string, polite?: boolean) -> string"
    assert lines[-1].endswith("  Greet someone.")
    assert any(line.startswith("upper(text: string) -> string ") for line in lines)


def test_no_stdlib_leaves_the_standard_tools_out(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TOOLS)
    result = runner.invoke(app, ["tools", "--no-stdlib", "-t", str(tmp_path / "t.py")])
    assert result.exit_code == 0
    assert result.stdout == "greet(name: string, polite?: boolean) -> string  Greet someone.\n"


def test_one_tool_in_full(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TOOLS)
    result = runner.invoke(app, ["tools", "greet", "-t", str(tmp_path / "t.py")])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        "greet(name: string, polite?: boolean) -> string",
        "Greet someone.",
        "",
        "Longer text that the list leaves out.",
        "kind: function",
    ]
    assert "timeout: 2.5 s" in lines
    assert lines[lines.index("parameters:") + 1] == "{"


def test_unknown_tool_exits_two_with_a_suggestion() -> None:
    result = runner.invoke(app, ["tools", "uper"])
    assert result.exit_code == 2
    assert (
        result.stderr == "obelisk: error: unknown tool 'uper'; did you mean 'upper' or 'power'?\n"
    )


def test_json_is_what_the_loop_sends(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TOOLS)
    result = runner.invoke(app, ["tools", "--json", "-t", str(tmp_path / "t.py")])
    assert result.exit_code == 0
    registry = default_registry().merge(obelisk.Registry.from_module(str(tmp_path / "t.py")))
    assert json.loads(result.stdout) == [tool_description(t) for t in registry]
    request = obelisk.Loop(obelisk.ScriptedModel([]), registry).session().request(1)
    sent = next(m for m in request.context if m.type == "tool")
    assert json.loads(result.stdout) == sent.tools  # type: ignore[union-attr]
    one = runner.invoke(app, ["tools", "greet", "--json", "-t", str(tmp_path / "t.py")])
    assert json.loads(one.stdout) == tool_description(registry["greet"])
