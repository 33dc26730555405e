"""A finished run leaves no reference cycles behind.

Whatever a run built (the parsed plan, the graph, the engine, records, frames of
failed tools) is freed by reference counting as soon as the result is dropped.  A
cycle would keep all of it alive until Python's next full garbage collection, which
walks every object of a large run: that cost a quarter of a 10,000-call run that
followed another.
"""

from __future__ import annotations

import asyncio
import gc
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import obelisk
from obelisk.testing import ScriptedModel


@obelisk.tool
def echo(value: Any) -> Any:
    """Returns its value (a sync tool: a worker thread)."""
    return value


@obelisk.tool
def boom(value: Any) -> Any:
    """Fails in a worker thread."""
    raise ValueError("no")


@obelisk.tool
async def aboom(value: Any) -> Any:
    """Fails on the event loop."""
    raise RuntimeError("no")


@obelisk.tool(timeout=0.01)
async def slow(value: Any) -> Any:
    """Times out."""
    await asyncio.sleep(5)
    return value


@obelisk.tool(requires_approval=True)
def guarded(value: Any) -> Any:
    """Waits for a person."""
    return value


TOOLS = [echo, boom, aboom, slow, guarded]
PLAN = [
    {"_tool": "echo", "value": 1, "_outputPath": "†state.a"},
    {"_tool": "boom", "value": "†state.a", "_outputPath": "†state.b"},
    {"_tool": "echo", "value": "†state.b", "_outputPath": "†state.c"},
    {"_tool": "aboom", "value": 2, "_outputPath": "†state.d || †state.error"},
    {"_tool": "slow", "value": 3, "_outputPath": "†state.e"},
    {"_tool": "guarded", "value": 4, "_outputPath": "†state.f"},
]


def _ours(thing: Any) -> bool:
    if isinstance(thing, types.FrameType):
        return "obelisk" in thing.f_code.co_filename
    return type(thing).__module__.startswith("obelisk")


@pytest.fixture
def collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def cyclic_garbage(make: Callable[[], Any]) -> list[str]:
    """What ``make()`` left that only the cycle collector could free (obelisk's own
    objects and frames of its code)."""
    result = make()
    assert result is not None
    del result
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    found = sorted({type(o).__qualname__ for o in gc.garbage if _ours(o)})
    gc.garbage.clear()
    gc.set_debug(0)
    return found


@pytest.mark.usefixtures("collector")
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: obelisk.check(PLAN, TOOLS), id="check"),
        pytest.param(lambda: obelisk.run_sync(PLAN, TOOLS), id="run"),
        pytest.param(lambda: obelisk.simulate(PLAN, TOOLS), id="simulate"),
        pytest.param(
            lambda: obelisk.Loop(
                ScriptedModel([{"calls": PLAN[:4], "output": "†state.a"}]), TOOLS
            ).run_sync({}),
            id="loop",
        ),
    ],
)
def test_nothing_is_left_in_a_cycle(make: Callable[[], Any]) -> None:
    assert cyclic_garbage(make) == []


@pytest.mark.usefixtures("collector")
def test_the_run_fails_tools_the_way_the_plan_says() -> None:
    # what the cycle test above runs: every way a call can end
    result = obelisk.run_sync(PLAN, TOOLS)
    assert [r.status for r in result.calls] == [
        "succeeded",
        "failed",
        "skipped",
        "succeeded",
        "failed",
        "awaiting_approval",
    ]
    assert result.state == {
        "a": 1,
        "error": {"error": {"type": "RuntimeError", "message": "no", "tool": "aboom", "call": 3}},
    }
