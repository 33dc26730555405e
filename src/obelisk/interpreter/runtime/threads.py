"""Worker threads for sync tools that never keep the process alive (docs/semantics.md).

``concurrent.futures.ThreadPoolExecutor`` joins its workers when the interpreter
exits, so one sync tool stuck past its timeout would keep ``obelisk run`` (and any
program that called ``run_sync``) from exiting until the tool returns, which may be
never.  A thread cannot be killed in Python; what can be done is to not wait for it.
:class:`DaemonThreads` is a small pool of daemon threads: a worker left running a
call that timed out is written off (:meth:`DaemonThreads.abandon`) and another
takes its place, and nothing joins them at exit.  Tools that must be stopped hard
run in a process instead (``isolation="process"``, docs/tools.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["DaemonThreads", "Job", "stop_iteration"]


def stop_iteration(exc: StopIteration) -> RuntimeError:
    """What a sync tool's ``StopIteration`` (``next()`` on an empty iterator) becomes:
    ``RuntimeError("the tool raised StopIteration")`` (an asyncio future cannot hold a
    ``StopIteration``, and a coroutine turns one into ``RuntimeError``, PEP 479)."""
    error = RuntimeError("the tool raised StopIteration")
    error.__cause__ = exc
    return error


class Job:
    """One call handed to a worker: ``future`` gets its result on the caller's loop."""

    __slots__ = ("abandoned", "function", "future", "loop")

    def __init__(
        self,
        function: Callable[[], Any],
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
    ) -> None:
        self.function, self.loop, self.future = function, loop, future
        self.abandoned = False


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # cancelled, or timed out and given up on
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class DaemonThreads:
    """Up to ``size`` daemon worker threads, made on demand, plus one for each worker
    written off while running a call that timed out."""

    def __init__(self, size: int, name: str = "obelisk-tool") -> None:
        self.size, self.name = size, name
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._live = 0  # workers started and not yet stopped
        self._idle = 0  # workers waiting for a job
        self._queued = 0  # jobs handed in and not yet taken by a worker
        self._stuck = 0  # workers running a job that was abandoned

    def submit(self, function: Callable[[], Any]) -> Job:
        """Run ``function()`` in a worker; ``job.future`` (on the running loop) gets
        its return value or its exception."""
        loop = asyncio.get_running_loop()
        job = Job(function, loop, loop.create_future())
        with self._lock:
            self._queued += 1
            if self._queued > self._idle and self._live - self._stuck < self.size:
                self._live += 1
                worker = threading.Thread(
                    target=self._work, name=f"{self.name}-{self._live}", daemon=True
                )
                worker.start()
        self._jobs.put(job)
        return job

    def abandon(self, job: Job) -> None:
        """Stop waiting for ``job`` (it timed out): its worker no longer counts."""
        with self._lock:
            if not job.abandoned:
                job.abandoned = True
                self._stuck += 1

    def close(self) -> None:
        """Let every worker stop once it is idle; a worker still running a call
        finishes it first (nobody waits for it)."""
        with self._lock:
            live = self._live
        for _ in range(live):
            self._jobs.put(None)

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                if job is None:
                    self._live -= 1
                    return
                self._queued -= 1
            try:
                ok, value = True, job.function()
            except StopIteration as exc:  # a future refuses it (it would end a coroutine)
                ok, value = False, stop_iteration(exc)
            except BaseException as exc:  # every outcome goes back to the caller
                ok, value = False, exc
            with self._lock:
                if job.abandoned:
                    self._stuck -= 1
            # the loop may have closed meanwhile: then nobody is waiting
            with contextlib.suppress(RuntimeError):
                job.loop.call_soon_threadsafe(_deliver, job.future, ok, value)
            # an idle worker keeps nothing: an exception here would hold this frame in
            # its traceback, a cycle that keeps the whole run alive until a full collection
            del job, value
