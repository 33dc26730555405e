"""Remote tools without Ray (docs/scale.md): ``remote=True`` and its resources are checked
at declaration; a remote tool's calls go to the runner active in the context (the seam
``obelisk.RayExecutor`` fills), run here without one; a lost worker makes a call that is
neither pure nor idempotent ``unknown``, which a durable run keeps for a person; and
``import obelisk`` with the executor's name never imports Ray."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk.errors import WorkerLost
from obelisk.interpreter.tools.remote import Remote, active_runner

PLAN = [
    {"_tool": "heavy", "n": "†input.n", "_outputPath": "†state.a"},
    {"_tool": "heavy", "n": "†state.a", "_outputPath": "†state.b"},
]


class FakeRunner:
    """Runs each call here, counting them; ``lose`` makes the worker of call n vanish."""

    def __init__(self, lose: int | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lose = lose

    async def call(
        self, tool: Any, function: Callable[..., Any], arguments: dict[str, Any], timeout: Any
    ) -> Any:
        self.calls.append((tool.name, dict(arguments)))
        if arguments.get("n") == self.lose:
            raise WorkerLost(f"the worker running tool {tool.name!r} was lost")
        return function(**arguments)


def heavy_tool(**options: Any) -> obelisk.Tool:
    def heavy(n: int) -> int:
        "Adds one, somewhere else."
        return n + 1

    return obelisk.tool(remote=True, num_cpus=2, num_gpus=0.5, resources={"tpu": 1}, **options)(
        heavy
    )


def test_remote_options_are_kept_and_checked() -> None:
    tool = heavy_tool()
    assert tool.remote == Remote(2, 0.5, {"tpu": 1})
    assert obelisk.tool(lambda n: n, name="plain").remote is None
    with pytest.raises(obelisk.ToolDefinitionError, match="need remote=True"):
        obelisk.tool(num_cpus=1)(lambda n: n)
    with pytest.raises(obelisk.ToolDefinitionError, match="num_gpus must be a number >= 0"):
        obelisk.tool(remote=True, num_gpus=-1)(lambda n: n)
    with pytest.raises(obelisk.ToolDefinitionError, match="remote must be true or false"):
        obelisk.tool(remote="yes")(lambda n: n)


def test_without_a_runner_a_remote_tool_runs_here() -> None:
    result = obelisk.run_sync(PLAN, [heavy_tool()], input={"n": 1})
    assert result.state == {"a": 2, "b": 3}


def test_with_a_runner_each_call_goes_to_it() -> None:
    runner = FakeRunner()
    token = active_runner.set(runner)
    try:
        result = obelisk.run_sync(PLAN, [heavy_tool()], input={"n": 1})
    finally:
        active_runner.reset(token)
    assert result.state == {"a": 2, "b": 3}
    assert runner.calls == [("heavy", {"n": 1}), ("heavy", {"n": 2})]


def test_a_lost_worker_makes_the_call_unknown_and_what_needs_it_waits() -> None:
    token = active_runner.set(FakeRunner(lose=1))
    try:
        result = obelisk.run_sync(PLAN, [heavy_tool()], input={"n": 1})
    finally:
        active_runner.reset(token)
    assert result.status == "unknown"
    assert [c.status for c in result.calls] == ["unknown", "waiting"]
    assert result.calls[0].reason == "its remote worker was lost mid-call"
    assert [u.call for u in result.unknown] == [0]


def test_a_durable_run_keeps_the_lost_call_unknown_for_a_person(tmp_path: Path) -> None:
    journal = tmp_path / "runs.db"
    tool = heavy_tool()
    token = active_runner.set(FakeRunner(lose=1))
    try:
        first = obelisk.run_sync(PLAN, [tool], input={"n": 1}, journal=journal, run_id="r")
    finally:
        active_runner.reset(token)
    assert first.status == "unknown"
    again = obelisk.resume_sync("r", tools=[tool], journal=journal)
    assert again.status == "unknown"  # by the journal's rule: nothing ran again
    assert [u.call for u in again.unknown] == [0]
    done = obelisk.resume_sync(
        "r", tools=[tool], journal=journal, unknown={0: obelisk.Resolution.retry()}
    )
    assert done.status == "completed" and done.state == {"a": 2, "b": 3}


def test_import_obelisk_and_its_executors_never_load_ray() -> None:
    code = (
        "import sys, obelisk\n"
        "obelisk.RayExecutor, obelisk.run_many_sync, obelisk.LocalExecutor\n"
        "@obelisk.tool(remote=True)\ndef f(n: int) -> int:\n    return n\n"
        "r = obelisk.run_many_sync([1, 2], [f], plan=[{'_tool': 'f', 'n': '†input', "
        "'_outputPath': '†state.n'}])\n"
        "assert [x.state for x in r] == [{'n': 1}, {'n': 2}], r\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_without_ray_the_executor_names_the_extra() -> None:
    code = (
        "import sys\nsys.modules['ray'] = None\nimport obelisk\n"
        "try:\n    obelisk.RayExecutor().connect()\n"
        "except obelisk.ObeliskError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert "pip install 'obelisk[ray]'" in done.stdout, done.stderr
