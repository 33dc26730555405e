"""Output validation, per tool and per run (issue 24, point 6; docs/tools.md, "Output
validation").

τ²-bench's telecom ``enable_roaming`` is annotated ``-> Dict`` and returns a string,
after roaming was enabled.  ``strict`` (the default) settles such a call
``invalid_output``: its tool ran, its value is not written, the calls that read it
are skipped with that reason, and a journaled run never runs it again.  ``warn``
writes the value as returned with a warning in the call's record; ``off`` writes it.
A tool's own setting wins over the run's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk import Decision
from obelisk.cli.app import app
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.runtime.events import CallFailed, Event

ROAMING: list[str] = []  # the world: each line whose roaming was enabled


@obelisk.tool
def enable_roaming(line: str) -> dict[str, Any]:
    """Enable roaming on a line (returns a string, whatever its annotation says)."""
    ROAMING.append(line)
    return f"Roaming enabled on {line}"  # type: ignore[return-value]  # the bug under test


@obelisk.tool(output_validation="warn")
def enable_roaming_warn(line: str) -> dict[str, Any]:
    """The same tool, which says its results may not fit."""
    ROAMING.append(line)
    return f"Roaming enabled on {line}"  # type: ignore[return-value]


@obelisk.tool(output_validation="strict")
def enable_roaming_strict(line: str) -> dict[str, Any]:
    """The same tool, which insists its results fit."""
    ROAMING.append(line)
    return f"Roaming enabled on {line}"  # type: ignore[return-value]


@obelisk.tool
def echo(value: Any) -> Any:
    """Return value."""
    return value


@obelisk.tool(requires_approval=True)
def confirm(note: str) -> str:
    """A step a person approves (to pause a durable run)."""
    return f"confirmed {note}"


TOOLS = [enable_roaming, enable_roaming_warn, enable_roaming_strict, echo, confirm]
PLAN: list[dict[str, Any]] = [
    {"_tool": "enable_roaming", "line": "L1", "_outputPath": "†state.roaming"},
    {"_tool": "echo", "value": "†state.roaming", "_outputPath": "†state.copy"},
]
MISFIT = "the output of enable_roaming does not fit its schema"


@pytest.fixture(autouse=True)
def _world() -> None:
    ROAMING.clear()


# -- strict: the default ------------------------------------------------------------------
@pytest.mark.parametrize("setting", [{}, {"output_validation": "strict"}])
def test_strict_settles_invalid_output_writes_nothing_and_skips_dependents(
    setting: dict[str, Any],
) -> None:
    result = obelisk.run_sync(PLAN, TOOLS, **setting)
    roaming, copy = result.calls
    assert ROAMING == ["L1"]  # the tool ran once: roaming is on
    assert roaming.status == "invalid_output"
    assert roaming.error is not None and roaming.error["type"] == "OutputValidationError"
    assert roaming.error["message"].startswith(MISFIT)
    assert roaming.output is None and roaming.warnings == ()
    assert result.state == {} and result.log == ()  # its value is not written
    assert copy.status == "skipped" and not copy.untaken
    assert copy.reason == (
        "†state.roaming was not written: #0 enable_roaming invalid_output "
        "(it ran; its output did not fit)"
    )
    assert result.status == "failed"
    shown = result.to_dict()["calls"][0]
    assert shown["status"] == "invalid_output" and "warnings" not in shown


def test_strict_does_not_send_an_invalid_output_to_the_error_arm() -> None:
    plan = [{"_tool": "enable_roaming", "line": "L1", "_outputPath": "†state.ok || †state.err"}]
    result = obelisk.run_sync(plan, TOOLS)
    assert result.calls[0].status == "invalid_output"
    assert result.state == {}  # neither arm: the tool did not fail, its value did not fit


def test_invalid_output_has_its_own_event_which_is_a_call_failed() -> None:
    from obelisk.interpreter.runtime.events import CallInvalidOutput

    events: list[Event] = []
    obelisk.run_sync(PLAN[:1], TOOLS, on_event=events.append)
    [ended] = [e for e in events if isinstance(e, CallFailed)]
    assert isinstance(ended, CallInvalidOutput) and ended.event == "call_invalid_output"
    shape = ended.to_dict()
    assert shape["event"] == "call_invalid_output" and shape["call"] == 0
    assert shape["tool"] == "enable_roaming" and shape["error"]["message"].startswith(MISFIT)
    assert set(shape) == {"event", "call", "tool", "error", "time"}


# -- warn and off ---------------------------------------------------------------------------
def test_warn_writes_the_value_as_returned_with_a_warning() -> None:
    result = obelisk.run_sync(PLAN, TOOLS, output_validation="warn")
    roaming, copy = result.calls
    assert ROAMING == ["L1"]
    assert roaming.status == "succeeded" and roaming.error is None
    assert result.state == {"roaming": "Roaming enabled on L1", "copy": "Roaming enabled on L1"}
    [warning] = roaming.warnings
    assert warning.startswith(MISFIT)
    assert roaming.to_dict()["warnings"] == [warning]
    assert result.to_dict()["calls"][0]["warnings"] == [warning]
    assert copy.warnings == () and "warnings" not in result.to_dict()["calls"][1]
    assert result.status == "completed"


def test_off_writes_the_value_without_a_warning() -> None:
    result = obelisk.run_sync(PLAN, TOOLS, output_validation="off")
    assert [r.status for r in result.calls] == ["succeeded", "succeeded"]
    assert result.state["roaming"] == "Roaming enabled on L1"
    assert all(r.warnings == () for r in result.calls)
    assert all(r.to_dict()["warnings"] == [] for r in result.calls)


def test_a_json_schema_tool_takes_the_setting_too() -> None:
    spec = {
        "name": "enable_roaming_json",
        "parameters": {
            "type": "object",
            "properties": {"line": {"type": "string"}},
            "required": ["line"],
        },
        "output": {"type": "object"},
    }

    def run_it(line: str) -> Any:
        ROAMING.append(line)
        return f"Roaming enabled on {line}"

    warned = obelisk.Tool.from_schema(spec, function=run_it, output_validation="warn")
    plain = obelisk.Tool.from_schema(spec, function=run_it)
    plan = [{"_tool": "enable_roaming_json", "line": "L1", "_outputPath": "†state.r"}]
    assert obelisk.run_sync(plan, [plain]).calls[0].status == "invalid_output"
    result = obelisk.run_sync(plan, [warned])
    assert result.state == {"r": "Roaming enabled on L1"}
    assert result.calls[0].warnings[0].startswith("the output of enable_roaming_json does not fit")
    assert ROAMING == ["L1", "L1"]


# -- precedence: a tool's own setting wins over the run's -------------------------------
@pytest.mark.parametrize(
    ("tool", "run_setting", "status", "written", "warned"),
    [
        ("enable_roaming", "strict", "invalid_output", False, False),
        ("enable_roaming", "warn", "succeeded", True, True),
        ("enable_roaming_warn", "strict", "succeeded", True, True),
        ("enable_roaming_warn", "off", "succeeded", True, True),
        ("enable_roaming_strict", "warn", "invalid_output", False, False),
        ("enable_roaming_strict", "off", "invalid_output", False, False),
    ],
)
def test_the_tool_setting_wins_over_the_run_setting(
    tool: str, run_setting: Any, status: str, written: bool, warned: bool
) -> None:
    plan = [{"_tool": tool, "line": "L1", "_outputPath": "†state.r"}]
    result = obelisk.run_sync(plan, TOOLS, output_validation=run_setting)
    [record] = result.calls
    assert record.status == status
    assert ("r" in result.state) is written
    assert bool(record.warnings) is warned
    assert ROAMING == ["L1"]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(obelisk.ToolDefinitionError, match="output_validation must be 'strict'"):
        obelisk.tool(output_validation="loose")(lambda: None)
    with pytest.raises(obelisk.UsageError, match="output_validation must be 'strict'"):
        obelisk.run_sync(PLAN, TOOLS, output_validation="lenient")  # type: ignore[arg-type]
    model = obelisk.ScriptedModel([])
    with pytest.raises(obelisk.UsageError, match="output_validation must be 'strict'"):
        obelisk.Loop(model, TOOLS, output_validation=True)  # type: ignore[arg-type]
    assert ROAMING == []


# -- the journal: an invalid_output call is settled ----------------------------------------
def _journaled(tmp: Path, name: str, **settings: Any) -> Path:
    """A durable run of two roaming calls (strict: invalid_output; its own warn: written
    with a warning), left as if its process stopped after the last commit."""
    plan = [
        {"_tool": "enable_roaming", "line": "L1", "_outputPath": "†state.a"},
        {"_tool": "enable_roaming_warn", "line": "L2", "_outputPath": "†state.b"},
        {"_tool": "echo", "value": "†state.a", "_outputPath": "†state.c"},
    ]
    source = tmp / "source.db"
    if not source.exists():
        first = obelisk.run_sync(plan, TOOLS, journal=source, run_id="r", **settings)
        assert [r.status for r in first.calls] == ["invalid_output", "succeeded", "skipped"]
        with Journal(source) as book:
            book.set_status("r", "interrupted")
    copy = tmp / name
    shutil.copyfile(source, copy)
    return copy


def test_a_journaled_invalid_output_is_replayed_not_run_again(tmp_path: Path) -> None:
    fast_db, engine_db = _journaled(tmp_path, "a.db"), _journaled(tmp_path, "b.db")
    assert sorted(ROAMING) == ["L1", "L2"]  # two worker threads: either may go first
    fast = obelisk.resume_sync("r", tools=TOOLS, journal=fast_db)  # rebuilt from the journal
    seen: list[str] = []  # a listener takes the engine's path
    slow = obelisk.resume_sync("r", tools=TOOLS, journal=engine_db, on_event=seen.append)
    assert seen
    assert sorted(ROAMING) == ["L1", "L2"]  # neither resume enabled roaming again
    for result in (fast, slow):
        first, second, third = result.calls
        assert first.status == "invalid_output" and first.error is not None
        assert first.error["message"].startswith(MISFIT)
        assert second.status == "succeeded" and second.warnings
        assert second.warnings[0].startswith("the output of enable_roaming_warn does not fit")
        assert third.status == "skipped"
        assert result.state == {"b": "Roaming enabled on L2"}
        assert result.status == "failed"
    with Journal(fast_db) as book:
        shown = book.describe("r")
    assert [c["status"] for c in shown["calls"]] == ["invalid_output", "succeeded", "skipped"]
    assert shown["counts"]["invalid_output"] == 1


def test_a_paused_run_keeps_its_setting_and_its_invalid_output(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    plan = [
        {"_tool": "enable_roaming", "line": "L1", "_outputPath": "†state.a"},
        {"_tool": "confirm", "note": "go", "_outputPath": "†state.ok"},
        {"_tool": "enable_roaming", "line": "†state.ok", "_outputPath": "†state.b"},
    ]
    paused = obelisk.run_sync(plan, TOOLS, journal=db, run_id="p", output_validation="warn")
    assert paused.status == "awaiting_approval" and ROAMING == ["L1"]
    with Journal(db) as book:
        [(_, pending)] = book.pending()
        book.decide(pending.id, Decision.accept())
    done = obelisk.resume_sync("p", tools=TOOLS, journal=db)
    assert ROAMING == ["L1", "confirmed go"]  # the first call did not run again
    assert done.state["a"] == "Roaming enabled on L1"  # its warning is replayed too
    assert done.state["b"] == "Roaming enabled on confirmed go"  # the run's "warn" held
    assert done.calls[0].warnings and done.calls[2].warnings

    strict_db = tmp_path / "strict.db"
    ROAMING.clear()
    paused = obelisk.run_sync(plan, TOOLS, journal=strict_db, run_id="s")
    assert paused.calls[0].status == "invalid_output"
    with Journal(strict_db) as book:
        [(_, pending)] = book.pending()
        book.decide(pending.id, Decision.accept())
    done = obelisk.resume_sync("s", tools=TOOLS, journal=strict_db)
    assert ROAMING == ["L1", "confirmed go"]
    assert [r.status for r in done.calls] == ["invalid_output", "succeeded", "invalid_output"]
    assert done.state == {"ok": "confirmed go"}


# -- the loop tells the model what happened ------------------------------------------------
def test_the_loop_tells_the_model_the_tool_ran_and_its_result_did_not_fit() -> None:
    model = obelisk.ScriptedModel(
        [
            {"calls": PLAN[:1], "output": None},
            {"calls": [], "output": "done"},
        ]
    )
    result = obelisk.Loop(model, TOOLS).run_sync()
    assert result.output == "done" and ROAMING == ["L1"]
    second = json.dumps(model.requests[1].to_data(), ensure_ascii=False)
    assert "the tool ran (its effects may have happened), but its result did not fit" in second
    assert MISFIT in second

    warned = obelisk.ScriptedModel(
        [
            {"calls": PLAN[:1], "output": None},
            {"calls": [], "output": "†state.roaming"},
        ]
    )
    result = obelisk.Loop(warned, TOOLS, output_validation="warn").run_sync()
    assert result.output == "Roaming enabled on L1"


# -- the command line ------------------------------------------------------------------------
TOOLS_FILE = """
import obelisk

@obelisk.tool
def enable_roaming(line: str) -> dict:
    "Enable roaming."
    with open(__file__ + ".count", "a") as f:
        f.write(line + "\\n")
    return f"Roaming enabled on {line}"

@obelisk.tool
def echo(value: object) -> object:
    "Return value."
    return value
"""


def test_the_cli_flag(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text(TOOLS_FILE, encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    runner = CliRunner()
    base = ["run", str(plan), "--tools", str(tools), "--no-stdlib"]

    strict = runner.invoke(app, [*base, "--json"])
    assert strict.exit_code == 1
    payload = json.loads(strict.stdout)
    assert [c["status"] for c in payload["calls"]] == ["invalid_output", "skipped"]
    assert payload["state"] == {}

    shown = runner.invoke(app, base)
    assert shown.exit_code == 1
    assert "#0 enable_roaming invalid_output (it ran; its result was not written)" in shown.stderr
    assert "failed: 2 calls (1 invalid_output: #0 enable_roaming, 1 skipped: #1 echo)" in (
        shown.stderr
    )

    warn = runner.invoke(app, [*base, "--json", "--output-validation", "warn"])
    assert warn.exit_code == 0
    payload = json.loads(warn.stdout)
    assert payload["state"] == {"copy": "Roaming enabled on L1", "roaming": "Roaming enabled on L1"}
    assert payload["calls"][0]["warnings"][0].startswith(MISFIT)
    warn_text = runner.invoke(app, [*base, "--output-validation", "warn"])
    assert "#0 enable_roaming warning: " + MISFIT in warn_text.stderr

    off = runner.invoke(app, [*base, "--json", "--output-validation", "off"])
    assert off.exit_code == 0 and "warnings" not in json.loads(off.stdout)["calls"][0]

    bad = runner.invoke(app, [*base, "--output-validation", "loose"])
    assert bad.exit_code == 2 and "--output-validation must be strict, warn or off" in bad.stderr
    ran = (tmp_path / "tools.py.count").read_text(encoding="utf-8").split()
    assert ran == ["L1"] * 5  # each run enabled roaming once; the bad flag ran nothing


def test_obelisk_tools_shows_a_tool_setting(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text(
        TOOLS_FILE.replace(
            "@obelisk.tool\ndef enable", '@obelisk.tool(output_validation="warn")\ndef enable'
        ),
        encoding="utf-8",
    )
    shown = CliRunner().invoke(
        app, ["tools", "enable_roaming", "--tools", str(tools), "--no-stdlib"]
    )
    assert shown.exit_code == 0
    assert "output validation" in shown.stdout and "warn" in shown.stdout
