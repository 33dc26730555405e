"""``run_sync`` still closes what a run left behind, as ``asyncio.run`` does: async
generators left open and the loop's default executor (shelter.py skips those steps
only when there is nothing to close)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import obelisk

closed: list[str] = []
executors: list[Any] = []


async def _numbers() -> AsyncIterator[int]:
    try:
        yield 1
        yield 2
    finally:
        closed.append("generator")


kept: list[AsyncIterator[int]] = []


@obelisk.tool
async def first_number() -> int:
    """Take the first number of a generator and keep it open."""
    numbers = _numbers()
    kept.append(numbers)  # still referenced: only the loop's shutdown closes it
    return await numbers.__anext__()


@obelisk.tool
async def in_executor() -> int:
    """Run a function in the loop's default executor."""
    loop = asyncio.get_running_loop()
    value = await loop.run_in_executor(None, lambda: 7)
    executors.append(loop._default_executor)  # type: ignore[attr-defined]
    return value


def test_run_sync_closes_async_generators_left_open() -> None:
    closed.clear()
    result = obelisk.run_sync(
        [{"_tool": "first_number", "_outputPath": "†state.n"}], [first_number]
    )
    assert result.state == {"n": 1}
    assert closed == ["generator"]


def test_run_sync_shuts_the_default_executor_down() -> None:
    executors.clear()
    result = obelisk.run_sync([{"_tool": "in_executor", "_outputPath": "†state.n"}], [in_executor])
    assert result.state == {"n": 7}
    [executor] = executors
    assert executor._shutdown
