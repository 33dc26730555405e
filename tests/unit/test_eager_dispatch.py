"""Eager dispatch (docs/semantics.md, "When a call starts"): on Python 3.12+ a ready
call's first step runs at once, and a chain of calls that never suspend still lets
the event loop run between them."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

import obelisk
from obelisk.interpreter.runtime.events import CallStarted


@pytest.mark.skipif(sys.version_info < (3, 12), reason="eager tasks are Python 3.12+")
def test_a_ready_call_runs_before_the_event_loop_takes_another_turn() -> None:
    order: list[str] = []

    @obelisk.tool
    async def note() -> int:
        """Say when it ran."""
        order.append("tool")
        assert asyncio.current_task() is not None  # it runs as its own task
        return 1

    def on_event(event: obelisk.Event) -> None:
        if isinstance(event, CallStarted):  # just before the call's task is made
            asyncio.get_running_loop().call_soon(order.append, "loop turn")

    result = obelisk.run_sync(
        [{"_tool": "note", "_outputPath": "†state.x"}], [note], on_event=on_event
    )
    assert result.state == {"x": 1}
    assert order == ["tool", "loop turn"]


def test_a_chain_of_calls_that_never_suspend_still_lets_the_run_time_out() -> None:
    # Each call busy-waits 2 ms without awaiting: run one after another inside one
    # dispatch pass, the 2,000-call chain would take 4 s and the run's timeout
    # (0.2 s) could not fire until the end.  The loop gets a turn between calls.
    @obelisk.tool
    async def busy(previous: int = 0) -> int:
        """Spin for 2 ms, never suspending."""
        until = time.perf_counter() + 0.002
        while time.perf_counter() < until:
            pass
        return previous + 1

    plan: list[dict[str, object]] = [{"_tool": "busy", "_outputPath": "†state.v0"}]
    plan += [
        {"_tool": "busy", "previous": f"†state.v{i - 1}", "_outputPath": f"†state.v{i}"}
        for i in range(1, 2000)
    ]
    started = time.perf_counter()
    result = obelisk.run_sync(plan, [busy], timeout=0.2)
    elapsed = time.perf_counter() - started
    succeeded = sum(1 for call in result.calls if call.status == "succeeded")
    assert 0 < succeeded < 2000
    assert succeeded <= 0.25 / 0.002  # the timeout fired soon after 0.2 s
    assert all(
        call.status == "cancelled" and "timed out" in (call.reason or "")
        for call in result.calls[succeeded:]
    )
    assert elapsed < 2.0
