"""Calling tools: threads for sync tools, timeouts, retries (docs/semantics.md)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import sys
from asyncio.tasks import _enter_task, _leave_task
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from obelisk.errors import UsageError
from obelisk.interpreter.runtime.approvals import argument_hash
from obelisk.interpreter.runtime.records import CallRecord, idempotency_key
from obelisk.interpreter.runtime.threads import DaemonThreads, Job, stop_iteration
from obelisk.interpreter.tools.remote import active_runner
from obelisk.interpreter.tools.run_context import Context
from obelisk.interpreter.tools.tool import Tool

if TYPE_CHECKING:  # imported when a tool first runs in a process (multiprocessing with it)
    from obelisk.interpreter.runtime.processes import ProcessWorkers

__all__ = ["EAGER_SECONDS", "Invoker", "start_task"]

EAGER_SECONDS = 0.001
"""How long (seconds) one dispatch pass starts calls eagerly; after that it starts
the rest as ordinary tasks, so that a long chain of calls that never suspend still
lets the event loop run timers, cancellation and streaming in between."""


def start_task(coroutine: Coroutine[Any, Any, None], eager: bool) -> asyncio.Task[None]:
    """A task running ``coroutine`` on the running event loop.

    With ``eager``, the coroutine's first step runs now, inside this call, as the
    task's own step (an *eager* task: the tool sees the new task as its
    ``asyncio.current_task()``, and ``asyncio.timeout()`` in it cancels that task):
    a call that never suspends is done when this returns, without a trip through
    the event loop, and one that suspends goes on as an ordinary task.  Python 3.12
    and later do this themselves (``eager_start``); on 3.10 and 3.11 the task's
    first step is taken from the loop's queue and run now, the way 3.12 runs it,
    when the loop is asyncio's own (another loop, such as uvloop's, starts the task
    on its next turn).  Without ``eager`` the task starts on the loop's next turn.
    """
    loop = asyncio.get_running_loop()
    if eager and sys.version_info >= (3, 12):
        return asyncio.Task(coroutine, loop=loop, eager_start=True)
    task = loop.create_task(coroutine)  # what asyncio.ensure_future does, less its checks
    if eager:
        _run_first_step(loop, task)
    return task


def _run_first_step(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    """Run the step ``task`` just queued on ``loop``, now (Python 3.10 and 3.11).

    The step is the last handle of the ready queue of asyncio's ``BaseEventLoop``;
    anything else (another loop class, another handle) leaves the task to the loop.
    As in 3.12's eager start, the task running now (the engine's, or the task of
    a call that just settled) stops being current while the step runs, and is
    current again afterwards."""
    ready = getattr(loop, "_ready", None)
    if type(ready) is not deque or not ready:
        return
    handle = ready[-1]
    if getattr(getattr(handle, "_callback", None), "__self__", None) is not task:
        return
    ready.pop()
    current = asyncio.current_task(loop)
    if current is not None:
        _leave_task(loop, current)
    try:
        handle._run()
    finally:
        if current is not None:
            _enter_task(loop, current)


class Invoker:
    """Calls tools for one run.

    Async tools run on the event loop, and so do sync tools declared
    ``blocking=False``; other sync tools in up to ``threads`` daemon worker threads
    (:class:`~obelisk.interpreter.runtime.threads.DaemonThreads`, made on first use).
    ``tool.timeout`` (seconds) bounds each attempt and
    becomes ``TimeoutError("timed out after 2 s")`` at that moment: a timed-out
    sync tool's thread is left to finish on its own and never keeps the process
    alive; an async tool is cancelled and not waited for (one that ignores the
    cancellation is left behind); an async tool that blocked the event loop past
    its timeout fails too, whatever it returned.  ``tool.retry`` is applied
    with tenacity.  A tool with a ``context_parameter`` gets a
    :class:`~obelisk.interpreter.tools.run_context.Context` of ``context`` there
    (docs/tools.md), whose ``idempotency_key`` is made of ``run_id``, the call's index
    and its argument hash; with ``context=None`` its calls fail with
    :class:`~obelisk.errors.UsageError` before any attempt, unless the run is
    ``durable`` (journaled, docs/durable.md): then ``deps`` is ``None``.
    """

    def __init__(
        self, threads: int, context: Any = None, run_id: str = "", durable: bool = False
    ) -> None:
        self.threads = threads
        self.context = context
        self.run_id, self.durable = run_id, durable
        self._threads: DaemonThreads | None = None
        self._processes: ProcessWorkers | None = None

    def close(self) -> None:
        """Let the worker threads stop, without waiting for any still running, and
        stop the worker processes."""
        if self._threads is not None:
            self._threads.close()
        if self._processes is not None:
            self._processes.close()

    def invoke(self, tool: Tool, record: CallRecord, arguments: dict[str, Any]) -> Awaitable[Any]:
        """Run the tool once, or as its retry policy says; counts ``record.attempts``.
        Await what it returns: for an async tool without a timeout, retries or a
        context, the tool's own coroutine (no frame of obelisk's in between).  A function
        that only passes for a coroutine function (``inspect.markcoroutinefunction``) and
        raises ``StopIteration`` when called fails with ``RuntimeError``, as it would
        inside a coroutine."""
        function, policy = tool.function, tool.retry
        if (
            tool.timeout is None
            and tool.context_parameter is None
            and (policy is None or policy.attempts == 1)
            and (tool.remote is None or active_runner.get() is None)
        ):
            assert function is not None
            if tool.is_async:
                record.attempts += 1
                try:
                    coroutine: Awaitable[Any] = function(**arguments)
                except StopIteration as exc:  # as when called inside a coroutine (PEP 479)
                    raise RuntimeError("coroutine raised StopIteration") from exc
                return coroutine
            if tool.blocking and tool.isolation == "thread":  # the worker's future itself
                record.attempts += 1
                return self._in_thread(function, arguments).future
        return self._invoke(tool, record, arguments)

    async def _invoke(self, tool: Tool, record: CallRecord, arguments: dict[str, Any]) -> Any:
        if tool.context_parameter is not None and self.context is None and not self.durable:
            raise UsageError(
                f"tool {tool.name!r} needs a run context (its parameter "
                f"{tool.context_parameter!r} is an obelisk.Context); pass context= to "
                "obelisk.run, run_sync or Loop"
            )
        policy = tool.retry
        if policy is None or policy.attempts == 1:  # no retries: skip tenacity's set-up
            record.attempts += 1
            return await self._once(tool, record, arguments)
        import tenacity  # loaded by the first tool that retries

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
            digest = argument_hash(tool.name, record.arguments or {})
            key = idempotency_key(self.run_id, record.index, digest)
            context = Context(self.context, tool.name, record.index, record.attempts, key)
            arguments = {**arguments, tool.context_parameter: context}
        timeout = tool.timeout
        if tool.remote is not None:  # a Ray task, when an executor is active
            runner = active_runner.get()
            if runner is not None:
                return await runner.call(tool, function, arguments, timeout)
        if tool.is_async:
            coroutine: Awaitable[Any] = function(**arguments)
            if timeout is None:
                return await coroutine
            return await _async_within(coroutine, timeout)
        if not tool.blocking:  # a quick sync function: on the event loop, no thread
            if timeout is None:
                try:
                    return function(**arguments)
                except StopIteration as exc:
                    raise stop_iteration(exc) from exc
            return _sync_within(function, arguments, timeout)
        return await self._in_worker(tool, function, arguments, timeout)

    async def _in_worker(
        self,
        tool: Tool,
        function: Callable[..., Any],
        arguments: dict[str, Any],
        timeout: float | None,
    ) -> Any:
        """A blocking tool's result, from a worker process (``isolation="process"``)
        or a daemon thread; a thread that outlives ``timeout`` is abandoned."""
        if tool.isolation == "process":
            if self._processes is None:
                from obelisk.interpreter.runtime.processes import ProcessWorkers

                self._processes = ProcessWorkers(self.threads)
            return await self._processes.call(function, arguments, timeout)
        job = self._in_thread(function, arguments)
        if timeout is None:
            return await job.future
        try:
            return await asyncio.wait_for(job.future, timeout)
        except asyncio.TimeoutError:
            assert self._threads is not None
            self._threads.abandon(job)
            raise TimeoutError(f"timed out after {timeout:g} s") from None

    def _in_thread(self, function: Callable[..., Any], arguments: dict[str, Any]) -> Job:
        """``function(**arguments)`` handed to a worker thread of the run."""
        if self._threads is None:
            self._threads = DaemonThreads(self.threads)
        # the tool runs in the caller's context (as with asyncio.to_thread), so that it
        # sees the run's limits (obelisk.limits.active_limits) as it would on the loop
        return self._threads.submit(
            functools.partial(contextvars.copy_context().run, function, **arguments)
        )


def _sync_within(function: Callable[..., Any], arguments: dict[str, Any], timeout: float) -> Any:
    """A quick sync function's result, run on the event loop; a result that took
    longer than ``timeout`` seconds (it blocked the loop) is a timeout."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        result = function(**arguments)
    except StopIteration as exc:
        raise stop_iteration(exc) from exc
    elapsed = loop.time() - started
    if elapsed > timeout:
        raise _blocked(timeout, elapsed)
    return result


async def _async_within(coroutine: Awaitable[Any], timeout: float) -> Any:
    """The coroutine's result, or ``TimeoutError`` once ``timeout`` seconds have
    passed: then it is cancelled and not waited for, and a result that comes only
    after the timeout (the tool blocked the event loop) is a timeout too."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    task = asyncio.ensure_future(coroutine)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:  # the call itself was cancelled (fail_fast, a stop)
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError(f"timed out after {timeout:g} s")
    elapsed = loop.time() - started
    if elapsed > timeout:
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio never logs it as forgotten
        raise _blocked(timeout, elapsed)
    return task.result()


def _blocked(timeout: float, elapsed: float) -> TimeoutError:
    """A call that returned only after its ``timeout``, having held the event loop for
    ``elapsed`` seconds (nothing could stop it sooner)."""
    return TimeoutError(
        f"timed out after {timeout:g} s (it blocked the event loop for {elapsed:.2f} s)"
    )
