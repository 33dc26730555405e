"""Calling tools: threads for sync tools, timeouts, retries (docs/semantics.md)."""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tenacity

from obelisk.errors import UsageError
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.tools.run_context import Context
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Invoker"]


class Invoker:
    """Calls tools for one run.

    Async tools run on the event loop; sync tools in a thread pool of up to
    ``threads`` workers (made on first use).  ``tool.timeout`` (seconds) bounds
    each attempt and becomes ``TimeoutError("timed out after 2 s")``; a timed-out
    sync tool's thread is left to finish on its own.  ``tool.retry`` is applied
    with tenacity.  A tool with a ``context_parameter`` gets a
    :class:`~obelisk.interpreter.tools.run_context.Context` of ``context`` there
    (docs/tools.md); with ``context=None`` its calls fail with
    :class:`~obelisk.errors.UsageError` before any attempt.
    """

    def __init__(self, threads: int, context: Any = None) -> None:
        self.threads = threads
        self.context = context
        self._executor: ThreadPoolExecutor | None = None

    def close(self) -> None:
        """Stop the thread pool without waiting for threads still running."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    async def invoke(self, tool: Tool, record: CallRecord, arguments: dict[str, Any]) -> Any:
        """Run the tool once, or as its retry policy says; counts ``record.attempts``."""
        if tool.context_parameter is not None and self.context is None:
            raise UsageError(
                f"tool {tool.name!r} needs a run context (its parameter "
                f"{tool.context_parameter!r} is an obelisk.Context); pass context= to "
                "obelisk.run, run_sync or Loop"
            )
        policy = tool.retry
        if policy is None or policy.attempts == 1:  # no retries: skip tenacity's set-up
            record.attempts += 1
            return await self._once(tool, record, arguments)
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(policy.attempts),
            wait=tenacity.wait_exponential(multiplier=policy.backoff)
            if policy.backoff
            else tenacity.wait_none(),
            retry=tenacity.retry_if_exception_type(policy.retry_on),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                record.attempts += 1
                return await self._once(tool, record, arguments)
        raise AssertionError("tenacity either returns or re-raises")  # pragma: no cover

    async def _once(self, tool: Tool, record: CallRecord, arguments: dict[str, Any]) -> Any:
        function = tool.function
        assert function is not None
        if tool.context_parameter is not None:
            context = Context(self.context, tool.name, record.index, record.attempts)
            arguments = {**arguments, tool.context_parameter: context}
        if tool.is_async:
            awaitable = function(**arguments)
        else:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.threads, thread_name_prefix="obelisk-tool"
                )
            loop = asyncio.get_running_loop()
            awaitable = loop.run_in_executor(
                self._executor, functools.partial(function, **arguments)
            )
        if tool.timeout is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, tool.timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"timed out after {tool.timeout:g} s") from None
