"""isolation="process": a tool that runs in a worker process, stopped for good at its
timeout (docs/tools.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import obelisk

sys.path.insert(0, str(Path(__file__).parent))
import process_tools


def test_a_process_tool_runs_elsewhere_and_a_stuck_one_is_stopped() -> None:
    plan: list[dict[str, Any]] = [
        {"_tool": "spin", "n": 1, "_outputPath": "†state.a || †state.stopped"},
        {"_tool": "pid", "n": 1, "_outputPath": "†state.pid"},
        {"_tool": "crash", "n": 1, "_outputPath": "†state.c"},
    ]
    tools = [process_tools.spin, process_tools.pid, process_tools.crash]
    result = obelisk.run_sync(plan, tools)
    assert result.state["pid"] != os.getpid()
    assert result.state["stopped"]["error"]["message"] == (
        "timed out after 0.3 s (its process was stopped)"
    )
    assert result.calls[2].error == {
        "type": "RuntimeError",
        "message": "its worker process died (exit code 3)",
    }


def test_process_isolation_needs_a_sync_function_without_context() -> None:
    async def later(n: int) -> int:
        return n

    with pytest.raises(obelisk.ToolDefinitionError, match="needs a sync function"):
        obelisk.Tool.from_function(later, isolation="process")
    with pytest.raises(obelisk.ToolDefinitionError, match="isolation must be 'thread'"):
        obelisk.Tool.from_function(process_tools.pid.function, isolation="fork")  # type: ignore[arg-type]
