"""Timeouts that hold: a timed-out call fails at its timeout and never keeps the
process alive (docs/semantics.md, docs/tools.md)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import textwrap
import time
from typing import Any

import obelisk


def run_one(tool: obelisk.Tool) -> obelisk.RunResult:
    return obelisk.run_sync([{"_tool": tool.name, "_outputPath": "†state.x"}], [tool])


def test_a_sync_tool_past_its_timeout_does_not_keep_the_process_alive() -> None:
    # The tool sleeps 60 s; its timeout is 0.2 s. The process prints the result at
    # once and exits without waiting for the thread (a generous bound: 20 s).
    script = textwrap.dedent(
        """
        import time, obelisk

        @obelisk.tool(timeout=0.2)
        def stuck() -> int:
            "Never returns in time."
            time.sleep(60)
            return 1

        result = obelisk.run_sync([{"_tool": "stuck", "_outputPath": "†state.x"}], [stuck])
        print(result.calls[0].status, result.calls[0].error["message"])
        """
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "failed timed out after 0.2 s"
    assert time.monotonic() - started < 20


def test_an_async_tool_that_swallows_cancellation_fails_at_its_timeout() -> None:
    @obelisk.tool(timeout=0.1)
    async def stubborn() -> str:
        """Ignores being cancelled, then returns."""
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(5)
        return "too late"

    result = run_one(stubborn)
    assert result.status == "failed" and result.state == {}
    assert result.calls[0].error == {"type": "TimeoutError", "message": "timed out after 0.1 s"}


def test_an_async_tool_that_blocks_the_event_loop_fails_after_it_returns() -> None:
    @obelisk.tool(timeout=0.05)
    async def blocking() -> str:
        """Blocks the event loop (time.sleep in a coroutine)."""
        time.sleep(0.3)
        return "late"

    result = run_one(blocking)
    error: Any = result.calls[0].error
    assert result.state == {} and error["type"] == "TimeoutError"
    assert error["message"].startswith("timed out after 0.05 s (it blocked the event loop for 0.")


def test_many_sync_tools_that_time_out_leave_room_for_the_others() -> None:
    # Each stuck worker is written off and replaced: with 2 threads and 4 stuck
    # calls, the quick call runs at once, not when a stuck thread is free again.
    @obelisk.tool(timeout=0.05)
    def stuck(i: int) -> int:
        """Sleeps past its timeout."""
        time.sleep(5)
        return i

    @obelisk.tool
    def quick(i: int) -> int:
        """Returns at once."""
        return i

    plan: list[dict[str, Any]] = [
        {"_tool": "stuck", "i": i, "_outputPath": f"†state.s{i}"} for i in range(4)
    ]
    plan += [{"_tool": "quick", "i": "†state.s0 || †input.zero", "_outputPath": "†state.q"}]
    started = time.monotonic()
    result = obelisk.run_sync(plan, [stuck, quick], input={"zero": 0}, concurrency=2)
    assert [r.status for r in result.calls] == ["failed"] * 4 + ["succeeded"]
    assert result.state == {"q": 0}
    assert time.monotonic() - started < 4  # the stuck threads sleep 5 s


def test_a_run_timeout_cancels_what_runs_and_keeps_what_was_written() -> None:
    @obelisk.tool
    async def quick(i: int) -> int:
        """Returns at once."""
        return i

    @obelisk.tool
    async def slow(i: int) -> int:
        """Takes 30 s."""
        await asyncio.sleep(30)
        return i

    @obelisk.tool
    async def deaf(i: int) -> int:
        """Ignores cancellation for 2 s."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(2)
        return i

    plan = [
        {"_tool": "quick", "i": 1, "_outputPath": "†state.q"},
        {"_tool": "slow", "i": "†state.q", "_outputPath": "†state.s"},
        {"_tool": "deaf", "i": 2, "_outputPath": "†state.d"},
        {"_tool": "quick", "i": "†state.s", "_outputPath": "†state.after"},
    ]
    started = time.monotonic()
    result = obelisk.run_sync(plan, [quick, slow, deaf], timeout=0.2)
    assert time.monotonic() - started < 1.5  # deaf is given up on, not waited for
    assert result.status == "failed" and result.state == {"q": 1}
    # deaf ignores its cancellation: it fails as timed out (issue 25, point 4)
    assert [r.status for r in result.calls] == ["succeeded", "cancelled", "failed", "cancelled"]
    assert {r.reason for r in result.calls[1::2]} == {"not run: the run timed out after 0.2 s"}
    assert result.calls[2].error == {
        "type": "TimeoutError",
        "message": "the run timed out after 0.2 s, and the call ignored its cancellation "
        "(given up on, its task may linger)",
    }


def test_a_bad_run_timeout_is_a_usage_error() -> None:
    for bad in (0, -1, float("nan"), float("inf"), True, "1"):
        try:
            obelisk.run_sync([], [], timeout=bad)  # type: ignore[arg-type]
        except obelisk.UsageError as error:
            assert "timeout must be a number of seconds > 0" in str(error)
        else:
            raise AssertionError(f"timeout={bad!r} was accepted")


def test_obelisk_run_timeout(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from obelisk.cli.app import app

    (tmp_path / "tools.py").write_text(
        "import asyncio, obelisk\n"
        "@obelisk.tool\n"
        "async def slow(i: int) -> int:\n"
        '    "Takes 30 s."\n'
        "    await asyncio.sleep(30)\n"
        "    return i\n"
    )
    (tmp_path / "plan.json").write_text('[{"_tool": "slow", "i": 1, "_outputPath": "†state.a"}]')
    result = CliRunner().invoke(
        app,
        ["run", str(tmp_path / "plan.json"), "--tools", str(tmp_path / "tools.py"),
         "--timeout", "0.2"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "not run: the run timed out after 0.2 s" in result.stderr
    assert "failed: 1 call (1 cancelled: #0 slow)" in result.stderr


def test_the_worker_threads_start_one_worker_per_waiting_call() -> None:
    # Eight calls that wait for each other need eight workers at once, however
    # quickly they are handed in (a worker that is about to take a job is not idle).
    import threading

    from obelisk.interpreter.runtime.threads import DaemonThreads

    async def main() -> list[int]:
        pool = DaemonThreads(8)
        barrier = threading.Barrier(8, timeout=5)

        def meet(i: int) -> int:
            barrier.wait()
            return i

        jobs = [pool.submit(lambda i=i: meet(i)) for i in range(8)]
        try:
            return list(await asyncio.gather(*(job.future for job in jobs)))
        finally:
            pool.close()

    for _ in range(20):
        assert asyncio.run(main()) == list(range(8))
