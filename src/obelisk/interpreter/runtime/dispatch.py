"""The calls in flight: concurrency, per-tool capacity and stopping (docs/semantics.md).

:class:`Dispatcher` starts ready calls in plan order while a slot is free: at most
``concurrency`` tasks run at once, and at most ``capacity`` of one tool; a call whose
tool is full waits, ready, for the next round.  Calls started within
:data:`~obelisk.interpreter.runtime.invoke.EAGER_SECONDS` of a round's start run
their first step at once (no turn of the event loop in between).  Once the run is
stopping (its timeout passed, ``fail_fast``, an interrupt), nothing more starts and
the tasks in flight are cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.runtime.invoke import EAGER_SECONDS, start_task
from obelisk.interpreter.runtime.readiness import Readiness
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Dispatcher"]

Starter = Callable[[int, "Tool | None"], None]
"""Starts call ``index`` with its tool (``None``: not registered)."""


class Dispatcher:
    """One run's tasks in flight (see the module docstring).  ``running`` maps a call
    index to its task; ``stopping`` is why the run stops early (``None`` while it
    does not): the reason given to the calls that never started; ``dispatching`` is
    True while :meth:`dispatch` runs (a call to it then does nothing)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.running: dict[int, asyncio.Task[None]] = {}
        self.stopping: str | None = None
        self._per_tool: dict[str, int] = {}
        self.dispatching, self._eager_until = False, 0.0

    def dispatch(
        self, calls: Readiness, plan: Sequence[Call], tools: Registry, start: Starter
    ) -> None:
        """Start ready calls of ``plan`` (its calls), lowest index first, while a slot
        is free (``start`` does it, given the call's tool in ``tools``; a call it
        settles at once may make others ready, taken in the same round).  Calls whose
        tool is at capacity stay ready."""
        # nothing to start, no free slot, or a call settled in start (skip, replay): the
        # loop below goes on, instead of recursing once per call of a long chain
        if self.dispatching or not calls.has_ready() or len(self.running) >= self.concurrency:
            return
        self.dispatching = True
        deferred: list[int] = []
        self._eager_until = time.perf_counter() + EAGER_SECONDS  # then the loop gets a turn
        running, per_tool, concurrency = self.running, self._per_tool, self.concurrency
        pop_ready, get = calls.pop_ready, tools.get
        try:
            while len(running) < concurrency and not self.stopping:
                index = pop_ready()
                if index is None:
                    break
                tool = get(plan[index].tool)
                cap = tool.capacity if tool is not None else None
                if tool is not None and cap is not None and per_tool.get(tool.name, 0) >= cap:
                    deferred.append(index)
                    continue
                start(index, tool)
        finally:
            self.dispatching = False
            if deferred:
                calls.requeue(deferred)

    def launch(self, tool: Tool, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``coroutine`` (a call of ``tool``) as a task, taking a slot of the tool;
        its first step runs at once within the round's eager window."""
        self._per_tool[tool.name] = self._per_tool.get(tool.name, 0) + 1
        return start_task(coroutine, time.perf_counter() < self._eager_until)

    def ended(self, tool_name: str, task: asyncio.Task[None]) -> BaseException | None:
        """A task of ``tool_name`` is over: free its slot.  Returns what it raised (an
        engine bug: the run raises it), ``None`` when it returned or was cancelled."""
        self._per_tool[tool_name] -= 1
        if task.cancelled():
            return None
        return task.exception()

    def stop(self, reason: str, spare: int = -1) -> None:
        """Start nothing more (``reason`` goes to the calls that never start) and
        cancel the tasks in flight, but that of call ``spare``."""
        self.stopping = reason
        for index, task in self.running.items():
            if index != spare:
                task.cancel()

    def cancel(self) -> None:
        """Cancel every task in flight (the run is over)."""
        for task in list(self.running.values()):
            task.cancel()

    def abandon(self) -> list[int]:
        """Give up on the tasks in flight (they ignored their cancellation); returns
        their calls.  Their slots are freed when they end, if ever."""
        given_up = list(self.running)
        self.running.clear()
        return given_up
