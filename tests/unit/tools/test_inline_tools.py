"""Sync tools declared ``blocking=False`` run on the event loop (docs/tools.md)."""

from __future__ import annotations

import threading
import time

import pytest

import obelisk
from obelisk.errors import ToolDefinitionError


def where(blocking: bool) -> obelisk.Tool:
    def thread_of(n: int) -> dict[str, int]:
        """Which thread ran the call."""
        return {"n": n, "thread": threading.get_ident()}

    return obelisk.Tool.from_function(thread_of, blocking=blocking)


def plan(n: int) -> list[dict[str, object]]:
    return [{"_tool": "thread_of", "n": i, "_outputPath": f"†state.r{i}"} for i in range(n)]


@pytest.mark.parametrize(("blocking", "on_the_loop"), [(False, True), (True, False)])
def test_where_a_sync_tool_runs(blocking: bool, on_the_loop: bool) -> None:
    result = obelisk.run_sync(plan(5), [where(blocking)])
    assert result.status == "completed"
    threads = {value["thread"] for value in result.state.values()}
    assert (threads == {threading.get_ident()}) is on_the_loop
    assert [result.state[f"r{i}"]["n"] for i in range(5)] == list(range(5))


def test_a_late_inline_call_fails_with_a_timeout() -> None:
    @obelisk.tool(blocking=False, timeout=0.05)
    def slow(x: int) -> int:
        """Blocks the event loop for 0.1 s."""
        time.sleep(0.1)
        return x

    @obelisk.tool(blocking=False, timeout=5)
    def quick(x: int) -> int:
        """Returns at once."""
        return x

    calls = [
        {"_tool": "slow", "x": 1, "_outputPath": "†state.a"},
        {"_tool": "quick", "x": 2, "_outputPath": "†state.b"},
    ]
    result = obelisk.run_sync(calls, [slow, quick])
    assert [r.status for r in result.calls] == ["failed", "succeeded"]
    assert result.calls[0].error is not None
    assert result.calls[0].error["type"] == "TimeoutError"
    assert (
        result.calls[0]
        .error["message"]
        .startswith("timed out after 0.05 s (it blocked the event loop for 0.1")
    )
    assert result.state == {"b": 2}


async def _async_tool(x: int) -> int:
    return x


def _sync_tool(x: int) -> int:
    return x


@pytest.mark.parametrize(
    ("fn", "options", "got"),
    [
        (_async_tool, {"blocking": False}, "False"),
        (_sync_tool, {"blocking": False, "isolation": "process"}, "False"),
        (_sync_tool, {"blocking": 0}, "0"),
        (_sync_tool, {"blocking": "no"}, "'no'"),
    ],
)
def test_blocking_is_checked(fn: object, options: dict[str, object], got: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        obelisk.Tool.from_function(fn, **options)  # type: ignore[arg-type]
    name = fn.__name__  # type: ignore[attr-defined]
    assert str(caught.value) == (
        f"tool {name!r}: blocking must be true or false, and false only for a sync "
        f"function run in a thread (got {got})"
    )


def test_a_latent_tool_cannot_be_inline() -> None:
    with pytest.raises(ToolDefinitionError, match="blocking must be true or false"):
        obelisk.Tool("think", blocking=False)
