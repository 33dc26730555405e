"""Sync tools' results reach the event loop together: calls that finish while the loop
is busy wake it once, not once each (docs/performance.md, "`run_sync` and sync tools")."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from obelisk.interpreter.runtime.threads import DaemonThreads


def test_results_that_arrive_together_wake_the_loop_once() -> None:
    async def scenario() -> tuple[list[Any], int]:
        loop = asyncio.get_running_loop()
        wakeups = 0
        original = loop.call_soon_threadsafe

        def counting(*args: Any, **kwargs: Any) -> Any:
            nonlocal wakeups
            wakeups += 1
            return original(*args, **kwargs)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        try:
            threads = DaemonThreads(4)
            finished = threading.Semaphore(0)

            def work(n: int) -> int:
                finished.release()
                return n * 10

            jobs = [threads.submit(lambda n=n: work(n)) for n in range(3)]
            # the loop stays busy until every worker has finished (however loaded the
            # machine), then a little longer while they post their outcomes
            for _ in jobs:
                assert finished.acquire(timeout=30)
            time.sleep(0.5)
            results = [await job.future for job in jobs]
        finally:
            del loop.call_soon_threadsafe
        threads.close()
        return results, wakeups

    results, wakeups = asyncio.run(scenario())
    assert results == [0, 10, 20]
    assert wakeups == 1


def test_an_exception_goes_back_through_the_same_mailbox() -> None:
    async def scenario() -> list[Any]:
        threads = DaemonThreads(2)

        def fails() -> int:
            raise ValueError("no")

        good, bad = threads.submit(lambda: 1), threads.submit(fails)
        found: list[Any] = [await good.future]
        with pytest.raises(ValueError, match="no"):
            await bad.future
        found.append("raised")
        threads.close()
        return found

    assert asyncio.run(scenario()) == [1, "raised"]
