"""Worker threads for sync tools that never keep the process alive (docs/semantics.md).

``concurrent.futures.ThreadPoolExecutor`` joins its workers when the interpreter
exits, so one sync tool stuck past its timeout would keep ``obelisk run`` (and any
program that called ``run_sync``) from exiting until the tool returns, which may be
never.  A thread cannot be killed in Python; what can be done is to not wait for it.

The worker threads are daemon threads, shared by every run of the process: a worker
that finishes a call and finds no other call of its run waiting parks, and the next
call of any run takes a parked worker before a new thread is started (starting
threads anew for every run cost a sync tool about twice an async one on small
plans, benchmarks/sync_tools.py).  At most :data:`KEEP` workers stay parked; the
ones parked at exit are told to stop, and nothing joins them.  Each run has its
own :class:`DaemonThreads`, which runs at most ``size`` of its calls in workers at
once; a worker left running a call that timed out is written off
(:meth:`DaemonThreads.abandon`) and no longer counts, so another call takes its
place, and a stuck worker never holds up a later run.  Tools that must be stopped
hard run in a process instead (``isolation="process"``, docs/tools.md).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["KEEP", "DaemonThreads", "Job", "stop_iteration"]

KEEP = 64
"""The most idle worker threads kept parked for later calls (a run uses at most 64)."""


def stop_iteration(exc: StopIteration) -> RuntimeError:
    """What a sync tool's ``StopIteration`` (``next()`` on an empty iterator) becomes:
    ``RuntimeError("the tool raised StopIteration")`` (an asyncio future cannot hold a
    ``StopIteration``, and a coroutine turns one into ``RuntimeError``, PEP 479)."""
    error = RuntimeError("the tool raised StopIteration")
    error.__cause__ = exc
    return error


class _Mailbox:
    """Outcomes on their way from the worker threads to one event loop: the first one
    posted while none is waiting wakes the loop (``call_soon_threadsafe``), and the
    loop then hands over every outcome posted meanwhile, so that calls finishing
    together cost one wake-up of the loop, not one each."""

    __slots__ = ("_lock", "_waiting", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._waiting: list[tuple[asyncio.Future[Any], bool, Any]] | None = None

    def post(self, future: asyncio.Future[Any], ok: bool, value: Any) -> None:
        """Hand an outcome to ``future``, on the loop (from any thread)."""
        with self._lock:
            if self._waiting is not None:  # a wake-up is on its way: it takes this too
                self._waiting.append((future, ok, value))
                return
            self._waiting = [(future, ok, value)]
        # the loop may have closed meanwhile: then nobody is waiting
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._hand_over)

    def _hand_over(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting or [], None
        for future, ok, value in waiting:
            try:
                _deliver(future, ok, value)
            except Exception as exc:  # one bad delivery never strands the rest
                self.loop.call_exception_handler(
                    {"message": "obelisk could not deliver a tool's outcome", "exception": exc}
                )


class Job:
    """One call handed to a worker: ``future`` gets its result on the caller's loop
    (through the run's mailbox)."""

    __slots__ = ("abandoned", "function", "future", "mailbox", "started")

    def __init__(
        self,
        function: Callable[[], Any],
        mailbox: _Mailbox,
        future: asyncio.Future[Any],
    ) -> None:
        self.function, self.mailbox, self.future = function, mailbox, future
        self.abandoned = self.started = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the caller waits on."""
        return self.mailbox.loop

    def call(self) -> tuple[bool, Any]:
        """Call the function: ``(True, its result)`` or ``(False, what it raised)``."""
        try:
            return True, self.function()
        except StopIteration as exc:  # a future refuses it (it would end a coroutine)
            return False, stop_iteration(exc)
        except BaseException as exc:  # every outcome goes back to the caller
            return False, exc

    def deliver(self, ok: bool, value: Any) -> None:
        """Hand an outcome to the future, on the caller's loop."""
        self.mailbox.post(self.future, ok, value)


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # cancelled, or timed out and given up on
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class _Workers:
    """The process's worker threads: started on demand, parked when idle (at most
    :data:`KEEP`), told to stop at exit; a child process made by ``fork`` starts
    with none (the parent's threads are not in it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parked: list[queue.SimpleQueue[tuple[DaemonThreads, Job] | None]] = []
        self._started = 0
        self._closed = False

    def start(self, owner: DaemonThreads, job: Job) -> None:
        """Run ``job`` in a parked worker, or in a new one."""
        with self._lock:
            inbox = self._parked.pop() if self._parked else None
            if inbox is None:
                self._started += 1
                number = self._started
        if inbox is None:
            inbox = queue.SimpleQueue()
            name = f"{owner.name}-{number}"
            threading.Thread(target=self._work, args=(inbox,), name=name, daemon=True).start()
        inbox.put((owner, job))

    def _work(self, inbox: queue.SimpleQueue[tuple[DaemonThreads, Job] | None]) -> None:
        parked = True
        while parked:
            item = inbox.get()
            if item is None:
                return
            owner, job = item
            following: Job | None = job
            del item
            while following is not None:  # the calls of that run still waiting, then park
                job = following
                ok, value = job.call()
                following = owner.finished(job)
                if following is None:  # parked before the caller hears of it, so that
                    parked = self._park(inbox)  # a call it starts next finds this worker
                job.deliver(ok, value)
                # an idle worker keeps nothing: an exception here would hold this frame in
                # its traceback, a cycle that keeps the whole run alive until a full collection
                del job, value
            del owner

    def _park(self, inbox: queue.SimpleQueue[tuple[DaemonThreads, Job] | None]) -> bool:
        """Wait for work in the shared set; False when this worker is to stop instead."""
        with self._lock:
            if self._closed or len(self._parked) >= KEEP:
                return False
            self._parked.append(inbox)
            return True

    def close(self) -> None:
        """Tell the parked workers to stop (at exit; nothing waits for them)."""
        with self._lock:
            self._closed = True
            parked, self._parked = self._parked, []
        for inbox in parked:
            inbox.put(None)

    def forget(self) -> None:
        """In a child process made by ``fork``: no worker of the parent is here."""
        self._lock = threading.Lock()
        self._parked = []


_WORKERS = _Workers()
atexit.register(_WORKERS.close)
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_WORKERS.forget)


class DaemonThreads:
    """The calls of one run in worker threads: at most ``size`` at once, not counting
    the workers written off while running a call that timed out; calls over that
    wait, in the order they were handed in."""

    def __init__(self, size: int, name: str = "obelisk-tool") -> None:
        self.size, self.name = size, name
        self._lock = threading.Lock()
        self._waiting: deque[Job] = deque()
        self._running = 0  # jobs handed to a worker and not finished
        self._stuck = 0  # of those, the abandoned ones
        self._mailbox: _Mailbox | None = None  # outcomes to the run's loop, made on first use

    def submit(self, function: Callable[[], Any]) -> Job:
        """Run ``function()`` in a worker; ``job.future`` (on the running loop) gets
        its return value or its exception."""
        loop = asyncio.get_running_loop()
        mailbox = self._mailbox
        if mailbox is None or mailbox.loop is not loop:
            mailbox = self._mailbox = _Mailbox(loop)
        job = Job(function, mailbox, loop.create_future())
        with self._lock:
            self._waiting.append(job)
            ready = self._ready()
        self._launch(ready)
        return job

    def abandon(self, job: Job) -> None:
        """Stop waiting for ``job`` (it timed out): its worker no longer counts."""
        with self._lock:
            if job.abandoned:
                return
            job.abandoned = True
            if not job.started:  # it runs when its turn comes, and counts as stuck then
                return
            self._stuck += 1
            ready = self._ready()
        self._launch(ready)

    def finished(self, job: Job) -> Job | None:
        """``job`` is done (called in its worker): the next waiting job, which that
        worker runs at once, if there is room for it."""
        with self._lock:
            self._running -= 1
            if job.abandoned:
                self._stuck -= 1
            ready = self._ready()
        self._launch(ready[1:])
        return ready[0] if ready else None

    def close(self) -> None:
        """The run is over: its calls still waiting run when their turn comes, and
        its workers go back to the shared ones when idle (nobody waits for them)."""

    def _launch(self, jobs: list[Job]) -> None:
        """Hand each job to a worker; a job no thread can be started for (the process
        ran out of them) fails with that error."""
        for job in jobs:
            try:
                _WORKERS.start(self, job)
            except Exception as exc:  # RuntimeError: can't start new thread
                with self._lock:
                    self._running -= 1
                    if job.abandoned:
                        self._stuck -= 1
                job.deliver(False, exc)

    def _ready(self) -> list[Job]:
        """Take the waiting jobs there is room for (under the lock)."""
        ready = []
        while self._waiting and self._running - self._stuck < self.size:
            job = self._waiting.popleft()
            job.started = True
            self._running += 1
            if job.abandoned:
                self._stuck += 1
            ready.append(job)
        return ready
