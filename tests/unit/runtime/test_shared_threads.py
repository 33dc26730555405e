"""Sync tools' worker threads are shared by every run of the process: reused, bounded,
stopped at exit, and never held up by a worker stuck past its timeout
(src/obelisk/interpreter/runtime/threads.py, docs/semantics.md "Timeouts and retries")."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

import obelisk
from obelisk.interpreter.runtime import threads


def _plan(n: int, tool: str = "where") -> list[dict[str, Any]]:
    return [{"_tool": tool, "i": i, "_outputPath": f"†state.v{i}"} for i in range(n)]


def _where(i: int) -> int:
    """The worker thread's ident."""
    return threading.get_ident()


where = obelisk.Tool.from_function(_where, name="where")


def test_later_runs_reuse_the_worker_threads_of_earlier_runs() -> None:
    first = obelisk.run_sync(_plan(4), [where], concurrency=2)
    seen = set(first.state.values())
    assert threading.get_ident() not in seen and len(seen) <= 2
    later = set()
    for _ in range(20):
        later |= set(obelisk.run_sync(_plan(4), [where], concurrency=2).state.values())
    # a fresh pool per run would start two new threads each time (idents may be
    # reused by the OS only after a thread ended: parked workers never end)
    assert later & seen
    workers = [t for t in threading.enumerate() if t.name.startswith("obelisk-tool")]
    assert len(workers) <= threads.KEEP  # other tests' libraries may hold threads of their own


def test_the_parked_workers_are_bounded() -> None:
    barrier = threading.Barrier(8, timeout=5)

    def meet(i: int) -> int:
        barrier.wait()
        return i

    tool = obelisk.Tool.from_function(meet, name="meet")
    for _ in range(3):
        result = obelisk.run_sync(_plan(8, "meet"), [tool], concurrency=8)
        assert result.status == "completed", result.calls
    workers = [t for t in threading.enumerate() if t.name.startswith("obelisk-tool")]
    assert len(workers) <= threads.KEEP


def test_a_stuck_worker_holds_up_neither_its_run_nor_later_runs() -> None:
    release = threading.Event()

    def stuck(i: int) -> int:
        release.wait(10)
        return i

    slow = obelisk.Tool.from_function(stuck, name="stuck", timeout=0.05)
    try:
        for _ in range(3):  # each run leaves one more worker stuck
            started = time.monotonic()
            result = obelisk.run_sync(
                [*_plan(3, "stuck"), {"_tool": "where", "i": 9, "_outputPath": "†state.w"}],
                [slow, where],
                concurrency=1,  # one worker for the run: the stuck ones do not count
            )
            assert time.monotonic() - started < 2
            assert [c.status for c in result.calls] == ["failed"] * 3 + ["succeeded"]
            assert result.calls[0].error == {
                "type": "TimeoutError",
                "message": "timed out after 0.05 s",
            }
        # a later run with only quick tools is not held up either
        started = time.monotonic()
        assert obelisk.run_sync(_plan(5), [where], concurrency=1).status == "completed"
        assert time.monotonic() - started < 2
    finally:
        release.set()


def test_the_waiting_calls_of_a_run_take_the_place_of_an_abandoned_one() -> None:
    release = threading.Event()
    order: list[str] = []

    def hang(i: int) -> int:
        order.append("hang")
        release.wait(10)
        return i

    def quick(i: int) -> int:
        order.append("quick")
        return i

    tools = [
        obelisk.Tool.from_function(hang, name="hang", timeout=0.05),
        obelisk.Tool.from_function(quick, name="quick"),
    ]
    plan = [*_plan(1, "hang"), {"_tool": "quick", "i": 1, "_outputPath": "†state.q"}]
    try:
        result = obelisk.run_sync(plan, tools, concurrency=1)
    finally:
        release.set()
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    assert order == ["hang", "quick"]


_AT_EXIT = """
import sys, threading, time, obelisk
from obelisk.interpreter.runtime import threads

def nap(i: int) -> int:
    return i

tool = obelisk.Tool.from_function(nap, name="nap")
plan = [{"_tool": "nap", "i": i, "_outputPath": f"†state.v{i}"} for i in range(6)]
print(obelisk.run_sync(plan, [tool], concurrency=3).status)
parked = lambda: [t for t in threading.enumerate() if t.name.startswith("obelisk-tool")]
print(len(parked()) > 0)
threads._WORKERS.close()  # what the process does at exit
deadline = time.monotonic() + 5
while parked() and time.monotonic() < deadline:
    time.sleep(0.01)
print(len(parked()))
"""


def test_the_parked_workers_are_told_to_stop_at_exit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _AT_EXIT], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["completed", "True", "0"]


_FORKED = """
import os, sys, obelisk

def double(i: int) -> int:
    return 2 * i

tool = obelisk.Tool.from_function(double, name="double")
plan = [{"_tool": "double", "i": 3, "_outputPath": "†state.x"}]
print(obelisk.run_sync(plan, [tool]).state["x"], flush=True)  # workers parked now
pid = os.fork()
if pid == 0:  # the parent's parked workers are not in the child
    print(obelisk.run_sync(plan, [tool]).state["x"], flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_starts_its_own_workers() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _FORKED],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == ["6", "6"]


def test_a_call_no_thread_can_be_started_for_fails_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "_WORKERS", threads._Workers())  # none parked

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    quick = obelisk.Tool.from_function(lambda i: i, name="quick", blocking=False)
    plan = [*_plan(2), {"_tool": "quick", "i": 3, "_outputPath": "†state.q"}]
    result = obelisk.run_sync(plan, [where, quick], concurrency=1)
    assert [c.status for c in result.calls] == ["failed", "failed", "succeeded"]
    assert result.calls[0].error == {"type": "RuntimeError", "message": "can't start new thread"}
