"""Eager dispatch (docs/semantics.md, "When a call starts"): a ready call's first step
runs at once, as its own task, and a chain of calls that never suspend still lets the
event loop run between them."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

import obelisk
from obelisk.interpreter.runtime.events import CallStarted


def test_a_ready_call_runs_before_the_event_loop_takes_another_turn() -> None:
    order: list[str] = []
    tasks: dict[str, asyncio.Task[object] | None] = {}

    @obelisk.tool
    async def note() -> int:
        """Say when it ran."""
        order.append("tool")
        tasks["tool"] = asyncio.current_task()
        return 1

    def on_event(event: obelisk.Event) -> None:
        if isinstance(event, CallStarted):  # just before the call's task is made
            tasks["starter"] = asyncio.current_task()
            asyncio.get_running_loop().call_soon(order.append, "loop turn")

    result = obelisk.run_sync(
        [{"_tool": "note", "_outputPath": "†state.x"}], [note], on_event=on_event
    )
    assert result.state == {"x": 1}
    assert order == ["tool", "loop turn"]
    # the tool runs as its own task, not as the task that started it
    assert tasks["tool"] is not None and tasks["tool"] is not tasks["starter"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is Python 3.11+")
def test_a_timeout_inside_an_eager_call_cancels_that_call_only() -> None:
    # the first step runs inside the dispatch pass: asyncio.timeout must cancel the
    # call's own task, never the run's
    @obelisk.tool
    async def patient(n: int) -> str:
        """Wait for something that never comes, for 10 ms."""
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(10)
        except TimeoutError:
            return f"gave up {n}"
        return "never"

    @obelisk.tool
    async def quick(n: int) -> int:
        """Answer at once."""
        return n

    plan = [
        {"_tool": "patient", "n": 1, "_outputPath": "†state.a"},
        {"_tool": "quick", "n": 2, "_outputPath": "†state.b"},
        {"_tool": "patient", "n": 3, "_outputPath": "†state.c"},
    ]
    result = obelisk.run_sync(plan, [patient, quick])
    assert result.status == "completed"
    assert result.state == {"a": "gave up 1", "b": 2, "c": "gave up 3"}


def test_calls_that_finish_at_once_and_calls_that_suspend_mix() -> None:
    # a call that never suspends is settled during the dispatch pass; one that awaits
    # goes on as an ordinary task; the run waits for both and keeps both results
    @obelisk.tool
    async def now(n: int) -> int:
        """Answer at once."""
        return n

    @obelisk.tool
    async def later(n: int) -> int:
        """Answer after a turn of the loop."""
        await asyncio.sleep(0)
        return n + 100

    plan: list[dict[str, object]] = []
    for i in range(40):
        plan.append({"_tool": "now" if i % 2 else "later", "n": i, "_outputPath": f"†state.v{i}"})
    result = obelisk.run_sync(plan, [now, later])
    assert result.status == "completed"
    assert result.state == {f"v{i}": i if i % 2 else i + 100 for i in range(40)}


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


def test_a_call_that_runs_a_plan_of_its_own_stays_its_own_task() -> None:
    # the inner run starts its calls eagerly inside the outer call's first step: the
    # outer call's task is current again when the inner run returns, with or without
    # a task factory on the loop
    @obelisk.tool
    async def inner(n: int) -> int:
        """Double."""
        return n * 2

    @obelisk.tool
    async def outer(n: int) -> int:
        """Run a one-call plan of its own."""
        me = asyncio.current_task()
        done = await obelisk.run([{"_tool": "inner", "n": n, "_outputPath": "†state.x"}], [inner])
        assert asyncio.current_task() is me
        return int(done.state["x"]) + 1

    plan = [{"_tool": "outer", "n": i, "_outputPath": f"†state.v{i}"} for i in range(10)]

    async def main(factory: bool) -> obelisk.RunResult:
        if factory:
            asyncio.get_running_loop().set_task_factory(
                lambda loop, coro, **options: asyncio.Task(coro, loop=loop, **options)
            )
        return await obelisk.run(plan, [outer, inner])

    for factory in (False, True):
        result = asyncio.run(main(factory))
        assert result.status == "completed"
        assert result.state == {f"v{i}": 2 * i + 1 for i in range(10)}
