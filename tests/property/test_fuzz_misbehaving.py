"""Fuzzing with misbehaving tools: random plans mixing ordinary calls with tools that
leak ``CancelledError``, raise ``StopIteration`` or exceptions that cannot print
themselves, stop or attack the event loop, swallow their cancellation, outlive their
timeout or return an endless iterator (issue 25; docs/limits.md, "Tools that
misbehave").

For every plan, ``run_sync`` returns; every ordinary call keeps its result (unless a
tool cancelled it while it ran, or the run's timeout passed first); a misbehaving call
fails, or its failure goes to its error arm; the run ends within its timeout plus the
documented slack; and nothing is printed on stdout or stderr.

Examples: the ``dev`` profile a few dozen (a few seconds: timeouts are 0.05-0.1 s),
the ``ci`` profile more (``CI=true``, see tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import obelisk
from obelisk.interpreter.runtime.shelter import GIVE_UP, GRACE

_CI = bool(os.environ.get("CI")) or os.environ.get("HYPOTHESIS_PROFILE") == "ci"

RUN_TIMEOUT = 0.1
"""Seconds: the run timeout of every fuzzed run."""

SLACK = 0.5
"""Seconds past ``RUN_TIMEOUT + GIVE_UP + GRACE`` a run may take (a loaded machine)."""

ATTEMPTS = 3
"""Runs of one plan before its time counts as too long: a shared CI machine can stall a
process for most of a second, once (a run that really overstays does so every time)."""


# -- ordinary tools -------------------------------------------------------------------


def good_sync(n: int) -> int:
    return n


async def good_async(n: int) -> int:
    await asyncio.sleep(0)
    return n


def good_on_the_loop(n: int) -> int:
    return n


# -- misbehaving tools ----------------------------------------------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


async def leaks_cancelled() -> int:
    raise asyncio.CancelledError()


def sync_leaks_cancelled() -> int:
    raise asyncio.CancelledError("leaked")


def empty_next() -> int:
    return int(next(iter([])))


def unprintable() -> int:
    raise Unprintable()


async def stops_the_loop() -> int:
    asyncio.get_running_loop().stop()
    return 1


async def cancels_every_task() -> int:
    await asyncio.sleep(0)
    me = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not me:
            task.cancel()
    return 1


def cancels_every_task_at_once() -> int:
    for task in asyncio.all_tasks():
        task.cancel()
    return 1


async def swallows_cancellation() -> int:
    while True:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(10)


def stuck_thread() -> int:
    time.sleep(0.3)
    return 1


def endless() -> Any:
    return itertools.count()


def plain_failure() -> int:
    raise ValueError("plain")


def tool(function: Callable[..., Any], name: str, **options: Any) -> obelisk.Tool:
    return obelisk.Tool.from_function(function, name=name, description="A fuzzed tool.", **options)


GOOD = {
    "good_sync": tool(good_sync, "good_sync"),
    "good_async": tool(good_async, "good_async"),
    "good_on_the_loop": tool(good_on_the_loop, "good_on_the_loop", blocking=False),
}
BAD = {
    "leaks_cancelled": tool(leaks_cancelled, "leaks_cancelled"),
    "sync_leaks_cancelled": tool(sync_leaks_cancelled, "sync_leaks_cancelled"),
    "empty_next": tool(empty_next, "empty_next"),
    "empty_next_on_the_loop": tool(empty_next, "empty_next_on_the_loop", blocking=False),
    "unprintable": tool(unprintable, "unprintable"),
    "stops_the_loop": tool(stops_the_loop, "stops_the_loop"),
    "cancels_every_task": tool(cancels_every_task, "cancels_every_task"),
    "cancels_at_once": tool(cancels_every_task_at_once, "cancels_at_once", blocking=False),
    "swallows_cancellation": tool(swallows_cancellation, "swallows_cancellation"),
    "swallows_past_its_timeout": tool(
        swallows_cancellation, "swallows_past_its_timeout", timeout=0.05
    ),
    "stuck_thread": tool(stuck_thread, "stuck_thread", timeout=0.05),
    "endless": tool(endless, "endless"),
    "plain_failure": tool(plain_failure, "plain_failure"),
}
ATTACKERS = {"cancels_every_task", "cancels_at_once"}  # they may cancel ordinary calls
SUCCEEDING = {"cancels_every_task", "cancels_at_once"}  # what they do is not their failure
TOOLS = [*GOOD.values(), *BAD.values()]


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to 8 calls, ordinary and misbehaving in random order; an ordinary call writes
    ``†state.g<i>``, a misbehaving one ``†state.b<i>``, with an error arm or not."""
    calls: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(GOOD)))
            calls.append({"_tool": name, "n": index, "_outputPath": f"†state.g{index}"})
        else:
            name = draw(st.sampled_from(sorted(BAD)))
            target = f"†state.b{index}"
            if draw(st.booleans()):
                target += f" || †state.e{index}"
            calls.append({"_tool": name, "_outputPath": target})
    return calls


def check_ordinary(record: obelisk.CallRecord, state: Any, attacked: bool) -> None:
    """An ordinary call keeps its result, unless a tool cancelled it in flight or the
    run's timeout came first."""
    if record.status == "succeeded":
        assert state[f"g{record.index}"] == record.index
        return
    assert f"g{record.index}" not in state
    if record.status == "failed":
        assert attacked and record.error is not None
        assert record.error["type"] == "CancelledError"
    else:
        assert record.status == "cancelled" and record.reason is not None
        assert "timed out" in record.reason or attacked


def check_misbehaving(record: obelisk.CallRecord, state: Any) -> None:
    """A misbehaving call fails with its error recorded, or its error arm takes it."""
    if record.tool in SUCCEEDING or record.status == "cancelled":
        return  # an attacker succeeds; any call may be cancelled by an attacker or the timeout
    assert record.error is not None, record
    assert isinstance(record.error["type"], str) and isinstance(record.error["message"], str)
    arm = state.get(f"e{record.index}")
    if record.status == "succeeded":
        assert arm == {"error": {**record.error, "tool": record.tool, "call": record.index}}
    else:
        assert record.status == "failed" and arm is None


def run_within_bound(plan: list[dict[str, Any]]) -> obelisk.RunResult:
    """Run ``plan``; fail if each of ``ATTEMPTS`` runs took longer than the bound."""
    bound = RUN_TIMEOUT + GIVE_UP + GRACE + SLACK
    times: list[float] = []
    for _ in range(ATTEMPTS):
        started = time.monotonic()
        result = obelisk.run_sync(plan, TOOLS, timeout=RUN_TIMEOUT)
        times.append(time.monotonic() - started)
        if times[-1] < bound:
            return result
    pytest.fail(f"every run took longer than {bound:.2f} s: {times}")


@settings(
    max_examples=300 if _CI else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plan=plans())
def test_a_run_with_misbehaving_tools_returns_keeps_results_and_prints_nothing(
    plan: list[dict[str, Any]], capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    result = run_within_bound(plan)
    attacked = any(call["_tool"] in ATTACKERS for call in plan)
    for record in result.calls:
        if record.tool in GOOD:
            check_ordinary(record, result.state, attacked)
        else:
            check_misbehaving(record, result.state)
    assert capfd.readouterr() == ("", "")
