"""Which calls may start: the scheduler's readiness bookkeeping (docs/semantics.md).

A call may start once every call that may write what it reads has settled.  The
interface follows :class:`graphlib.TopologicalSorter`: :meth:`Readiness.prepare`
makes ready the calls that wait for nothing, :meth:`~Readiness.pop_ready` hands out
the next ready call (the lowest index first, so that calls ready together start in
plan order), :meth:`~Readiness.start` marks a call started and
:meth:`~Readiness.done` marks one settled for good, returning the calls that became
ready through it.  A call that has started, or settled without starting, never
becomes ready again.  In a plan that grows while it runs (streaming),
:meth:`~Readiness.grow` adds a call held back until :meth:`~Readiness.release`;
:meth:`~Readiness.reject` settles an unstarted call without running it, and an
unstarted call that reads what a new call writes waits for it too.

:class:`Readiness` owns everything it tracks: callers ask, never write its lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from obelisk.interpreter.analysis.graph import PlanGraph

__all__ = ["Readiness"]


class Readiness:
    """The readiness of one run's calls, by index in the plan (see the module
    docstring).  ``graph`` is the plan's dependency graph; the successors of a call
    are the calls that read what it may write."""

    def __init__(self, graph: PlanGraph) -> None:
        self._graph = graph
        self._waiting = [len(preds) for preds in graph.predecessors]  # unsettled predecessors
        self._ready: list[int] = []  # a heap: the lowest index starts first
        self._held: set[int] = set()
        self._started = [False] * len(self._waiting)
        self._settled = [False] * len(self._waiting)
        self._settled_count = 0

    # -- what a call is up to -----------------------------------------------------------
    @property
    def settled(self) -> Sequence[bool]:
        """``settled[i]``: call ``i`` has settled for good (read-only)."""
        return self._settled

    def unstarted(self, index: int) -> bool:
        """True while call ``index`` has neither started nor settled."""
        return not (self._started[index] or self._settled[index])

    def is_started(self, index: int) -> bool:
        """True once call ``index`` has started (or was rejected)."""
        return self._started[index]

    def is_held(self, index: int) -> bool:
        """True while call ``index`` is held back (see :meth:`hold`)."""
        return index in self._held

    def is_waiting(self, index: int) -> bool:
        """True while some call that may write what call ``index`` reads has not settled."""
        return self._waiting[index] > 0

    def is_settled(self, index: int) -> bool:
        """True once call ``index`` has settled for good."""
        return self._settled[index]

    def all_settled(self) -> bool:
        """True once every call has settled."""
        return self._settled_count == len(self._settled)

    def has_ready(self) -> bool:
        """True while some call is ready and not handed out by :meth:`pop_ready`."""
        return bool(self._ready)

    # -- the graphlib-like interface ---------------------------------------------------
    def prepare(self) -> list[int]:
        """Make ready every call that waits for nothing (and is not held, started or
        settled); returns them in plan order."""
        ready = [i for i, waiting in enumerate(self._waiting) if not waiting and self._may_start(i)]
        for index in ready:
            heapq.heappush(self._ready, index)
        return ready

    def pop_ready(self) -> int | None:
        """The ready call with the lowest index, no longer ready (``None`` when no call
        is ready).  Hand it to :meth:`start`, or back with :meth:`requeue`."""
        return heapq.heappop(self._ready) if self._ready else None

    def requeue(self, indices: Sequence[int]) -> None:
        """Calls handed out by :meth:`pop_ready` that could not start yet are ready again."""
        for index in indices:
            heapq.heappush(self._ready, index)

    def start(self, index: int) -> None:
        """Call ``index`` has started: it never becomes ready again."""
        self._started[index] = True

    def done(self, index: int, *, wake: bool = True) -> list[int]:
        """Call ``index`` has settled for good: the calls that read what it writes wait
        for one call less.  Returns those that became ready through it (each once, in
        the order of its successors), unless ``wake`` is false (the run is stopping:
        their counts still go down, and none becomes ready)."""
        settled = self._settled
        settled[index] = True
        self._settled_count += 1
        waiting, woken = self._waiting, []
        held, started, ready = self._held, self._started, self._ready
        for successor in self._graph.successors[index]:
            waiting[successor] -= 1
            # as _may_start, inline: one call fewer per call of a run
            if (
                waiting[successor] == 0
                and wake
                and not (successor in held or started[successor] or settled[successor])
            ):
                heapq.heappush(ready, successor)
                woken.append(successor)
        return woken

    def cancel(self, index: int) -> None:
        """Call ``index`` settled without running and nothing of it will come (the run
        stopped): the calls that read what it writes are not let go."""
        self._settle(index)

    # -- a plan that grows while it runs -----------------------------------------------
    def grow(self, graph: PlanGraph, index: int) -> None:
        """Call ``index`` was appended (``graph`` is the grown plan's): it is held, waits
        for its unsettled predecessors, and the unstarted calls that read what it
        writes wait for it."""
        self._graph = graph
        self._started.append(False)
        self._settled.append(False)
        self._held.add(index)
        self._waiting.append(sum(1 for p in graph.predecessors[index] if not self._settled[p]))
        for reader in graph.successors[index]:
            if self.unstarted(reader):
                self._unready(reader)
                self._waiting[reader] += 1

    def hold(self, index: int) -> None:
        """Keep call ``index`` from starting until :meth:`release` (a call that has
        started or settled is left alone)."""
        if self.unstarted(index):
            self._held.add(index)
            self._unready(index)

    def release(self, index: int) -> bool:
        """Let call ``index`` start once its inputs are settled; True when it became
        ready now."""
        self._held.discard(index)
        if self.unstarted(index) and self._waiting[index] == 0 and index not in self._ready:
            heapq.heappush(self._ready, index)
            return True
        return False

    def reject(self, index: int) -> bool:
        """Call ``index`` is settled without running (:meth:`done` follows once it
        commits): it never becomes ready.  False, and nothing changes, when it has
        started or settled already."""
        if not self.unstarted(index):
            return False
        self._held.discard(index)
        self._unready(index)
        self._started[index] = True
        return True

    # -- inside ----------------------------------------------------------------------------
    def _may_start(self, index: int) -> bool:
        """False while call ``index`` is held, and once it started or settled (a member
        of a refused cycle may be freed after it settled)."""
        return not (index in self._held or self._started[index] or self._settled[index])

    def _settle(self, index: int) -> None:
        self._settled[index] = True
        self._settled_count += 1

    def _unready(self, index: int) -> None:
        if index in self._ready:
            self._ready.remove(index)
            heapq.heapify(self._ready)
