"""The event loop of the ``*_sync`` entry points, sheltered from its tools (docs/limits.md).

``asyncio.run`` trusts the code it runs: a tool that calls ``loop.stop()`` ends it with
``Event loop stopped before Future completed``, a tool that cancels every task cancels
the run's own task, and at the end it waits for every task still running, so one that
swallows its cancellation keeps it from ever returning.  :func:`run_sheltered` runs a
coroutine like ``asyncio.run``, on a new event loop it owns, but:

- ``loop.stop()`` called by anything other than this module raises ``RuntimeError``
  in its caller (a tool's call fails); a stop that gets through anyway (a loop whose
  ``stop`` cannot be replaced) only makes the loop run on;
- the coroutine's task is *sheltered* (:func:`sheltered`): the engine running in it
  shrugs off cancellations (no one but its tools can reach that task), and its result
  is kept even if a cancellation ends the task at its last step;
- at the end, the tasks left are cancelled and given :data:`GRACE` seconds; those
  that ignore the cancellation are dropped (their coroutine closed, without
  asyncio's "Task was destroyed but it is pending" message) instead of waited for.

What it cannot do: stop a tool that blocks the event loop or never yields, stop a
thread, or undo what a tool does to the process (``os._exit``, signals, monkeypatching
asyncio).  ``isolation="process"`` runs a tool in a worker process that a timeout
terminates (docs/tools.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

from obelisk.interpreter.runtime.outcome import error_record, forget_traceback

__all__ = [
    "GIVE_UP",
    "GRACE",
    "ignored_cancellation",
    "not_cancelled",
    "run_sheltered",
    "sheltered",
    "uncancel",
    "wait_done",
]

T = TypeVar("T")

GRACE = 0.05
"""Seconds the tasks left at the end of a sheltered run get to finish once cancelled."""

GIVE_UP = 0.05
"""Seconds after a run's ``timeout`` at which the engine gives up on the calls that
ignore their cancellation: they fail (:func:`ignored_cancellation`) and the run returns."""

_SHELTERED: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()


def sheltered(task: asyncio.Task[Any] | None) -> bool:
    """True for the task :func:`run_sheltered` runs its coroutine in."""
    return task is not None and task in _SHELTERED


def uncancel(task: asyncio.Task[Any]) -> None:
    """Forget one cancellation request of ``task`` (Python 3.11 and later count them)."""
    if sys.version_info >= (3, 11):
        task.uncancel()


async def wait_done(done: asyncio.Future[None]) -> None:
    """Wait for ``done``.  In a sheltered task (``run_sync``'s: only a tool can cancel
    it) a cancellation is shrugged off; elsewhere it propagates, as usual."""
    task = asyncio.current_task()
    if not sheltered(task):
        await done
        return
    assert task is not None
    while True:
        try:
            await asyncio.shield(done)
            return
        except asyncio.CancelledError:
            if done.cancelled():
                raise
            uncancel(task)


def not_cancelled(exc: BaseException) -> BaseException:
    """The error of a call whose ``CancelledError`` obelisk did not ask for (the tool
    raised it, a library leaked it, or another tool cancelled the call's task): a
    failure, recorded as ``{"type": "CancelledError", "message": ...}``."""
    message = error_record(exc)["message"] or (
        "the tool raised CancelledError, or its task was cancelled, though obelisk "
        "did not cancel the call"
    )
    forget_traceback(exc)
    return asyncio.CancelledError(message)


def ignored_cancellation(timeout: float | None) -> TimeoutError:
    """The error of a call still running :data:`GIVE_UP` seconds after the run's
    ``timeout`` cancelled it: it timed out, and did not cooperate."""
    return TimeoutError(
        f"the run timed out after {timeout:g} s, and the call ignored its "
        "cancellation (given up on, its task may linger)"
    )


def _refuse_stop() -> None:
    raise RuntimeError("a tool may not stop the event loop that runs the plan (obelisk run_sync)")


async def _kept(coroutine: Coroutine[Any, Any, T], box: list[T]) -> None:
    box.append(await coroutine)


def run_sheltered(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end on a new event loop and return its result (or
    raise its exception), as ``asyncio.run`` does, sheltered from what the code it runs
    does to the loop (see the module docstring).  ``KeyboardInterrupt`` raised while
    it runs propagates, after the same clean-up."""
    loop = asyncio.new_event_loop()
    stop = loop.stop
    with contextlib.suppress(AttributeError):  # a loop type whose methods are fixed
        setattr(loop, "stop", _refuse_stop)  # noqa: B010  # the instance's own, not the class's
    box: list[T] = []
    main = loop.create_task(_kept(coroutine, box))

    def done(_: object) -> None:
        stop()

    try:
        asyncio.set_event_loop(loop)
        _SHELTERED.add(main)
        main.add_done_callback(done)
        while not main.done():  # a stop that got through: run on
            loop.run_forever()
        if box:  # returned: a cancellation at its last step does not lose the result
            return box[0]
        main.result()  # raises what the coroutine raised
        raise AssertionError("a finished run returns or raises")  # pragma: no cover
    finally:
        _SHELTERED.discard(main)  # Ctrl-C, or what the coroutine raised: it may be cancelled now
        main.remove_done_callback(done)
        if main.done() and not main.cancelled():  # a SystemExit left run_forever with it:
            main.exception()  # retrieved, so asyncio does not log it again at exit
        with contextlib.suppress(AttributeError):
            delattr(loop, "stop")
        try:
            _drop_leftovers(loop)
            _shut_down(loop)
        finally:
            asyncio.set_event_loop(None)
            loop.close()


_NOT_ASYNCIO = object()


def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    """Close the async generators and the default executor of ``loop``, as
    ``asyncio.run`` does; on asyncio's own loops, only when there are any (each costs
    a turn of the loop, a fifth of a small plan's set-up)."""
    if getattr(loop, "_asyncgens", _NOT_ASYNCIO):
        loop.run_until_complete(loop.shutdown_asyncgens())
    if getattr(loop, "_default_executor", _NOT_ASYNCIO) is not None:
        loop.run_until_complete(loop.shutdown_default_executor())


def _drop_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks still running on ``loop``, give them :data:`GRACE` seconds, and
    drop those still running then (their coroutines closed, nothing logged)."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.wait(tasks, timeout=GRACE))
    for task in tasks:
        if not task.done():
            task._log_destroy_pending = False  # type: ignore[attr-defined]  # dropped on purpose
            with contextlib.suppress(BaseException):  # one that ignores GeneratorExit too
                task.get_coro().close()  # type: ignore[union-attr,unused-ignore]  # 3.12: may be None
        elif not task.cancelled():
            task.exception()  # retrieved, so asyncio never logs it as forgotten
