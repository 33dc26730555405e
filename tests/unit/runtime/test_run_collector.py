"""The collector's first threshold while runs are in progress (docs/semantics.md,
"The garbage collector")."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator

import pytest

import obelisk
from obelisk.interpreter.runtime.collector import RUN_THRESHOLD, run_collector


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    found = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*found)


def _set(*thresholds: int) -> tuple[int, ...]:
    """Set the thresholds; what this Python reports then (3.14 has its own third)."""
    gc.set_threshold(*thresholds)
    return gc.get_threshold()


def test_a_run_raises_the_first_threshold_and_restores_what_it_found() -> None:
    seen: list[tuple[int, ...]] = []

    @obelisk.tool
    def look() -> int:
        """What the collector's thresholds are now."""
        seen.append(gc.get_threshold())
        return 0

    found = _set(700, 10, 10)
    obelisk.run_sync([{"_tool": "look"}], [look])
    assert seen == [(RUN_THRESHOLD, *found[1:])]
    assert gc.get_threshold() == found


def test_a_run_that_fails_its_check_restores_the_thresholds_too() -> None:
    found = _set(700, 10, 10)
    with pytest.raises(obelisk.PlanError):
        obelisk.run_sync([{"_tool": "missing"}], [])
    assert gc.get_threshold() == found


def test_overlapping_runs_restore_once_the_last_one_ends() -> None:
    seen: list[int] = []

    @obelisk.tool
    async def pause(ms: int) -> int:
        """Sleep ``ms`` milliseconds, then say what the first threshold is."""
        await asyncio.sleep(ms / 1000)
        seen.append(gc.get_threshold()[0])
        return ms

    async def both() -> None:
        short = obelisk.run([{"_tool": "pause", "ms": 1}], [pause])
        long = obelisk.run([{"_tool": "pause", "ms": 30}], [pause])
        await asyncio.gather(short, long)

    found = _set(700, 10, 10)
    asyncio.run(both())
    assert seen == [RUN_THRESHOLD, RUN_THRESHOLD]  # the short run's end restored nothing
    assert gc.get_threshold() == found


def test_runs_in_threads_restore_once_the_last_one_ends() -> None:
    started = threading.Barrier(3)
    release = {"first": threading.Event(), "second": threading.Event()}

    @obelisk.tool
    def wait(name: str) -> int:
        """Wait until the test lets this run go."""
        started.wait(timeout=5)
        release[name].wait(timeout=5)
        return 0

    threads = {
        name: threading.Thread(
            target=obelisk.run_sync, args=([{"_tool": "wait", "name": name}], [wait])
        )
        for name in release
    }
    found = _set(700, 10, 10)
    for thread in threads.values():
        thread.start()
    started.wait(timeout=5)
    assert gc.get_threshold()[0] == RUN_THRESHOLD
    release["first"].set()
    threads["first"].join(timeout=5)
    assert gc.get_threshold()[0] == RUN_THRESHOLD  # the second run is still in progress
    release["second"].set()
    threads["second"].join(timeout=5)
    assert gc.get_threshold() == found


def test_a_threshold_changed_during_a_run_is_kept() -> None:
    with run_collector():
        mine = _set(5_000, 20, 20)
    assert gc.get_threshold() == mine


@pytest.mark.parametrize("first", [0, RUN_THRESHOLD * 2])
def test_collection_turned_off_or_a_higher_threshold_is_left_alone(first: int) -> None:
    found = _set(first, 10, 10)
    with run_collector():
        assert gc.get_threshold() == found
    assert gc.get_threshold() == found
