"""Which calls may start: the scheduler's readiness bookkeeping (docs/semantics.md).

A call may start once every call that may write what it reads has settled:
``waiting[i]`` counts the predecessors of call ``i`` in the plan's dependency graph
that have not committed.  Ready calls wait in a heap, so that calls ready together
start in plan order.  A call that has started, or settled without starting, never
becomes ready again.  In a plan that grows while it runs (streaming), a new call is
held back until it is released, and an unstarted call that reads what the new call
writes waits for it too.
"""

from __future__ import annotations

import heapq

from obelisk.interpreter.analysis.graph import PlanGraph

__all__ = ["Readiness"]


class Readiness:
    """The readiness of one run's calls.  ``committed`` is the engine's own list (a
    call's entry turns ``True`` once it settled for good), read, never written, here."""

    def __init__(self, graph: PlanGraph, committed: list[bool]) -> None:
        self.waiting = [len(preds) for preds in graph.predecessors]
        self.ready: list[int] = []  # a heap: the lowest index starts first
        self.held: set[int] = set()
        self.started = [False] * len(self.waiting)
        self.committed = committed

    def unstarted(self, index: int) -> bool:
        """True while call ``index`` has neither started nor settled."""
        return not (self.started[index] or self.committed[index])

    def may_start(self, index: int) -> bool:
        """False while call ``index`` is held, and once it started or settled (a member
        of a refused cycle may be freed after it settled)."""
        return not (index in self.held or self.started[index] or self.committed[index])

    def push(self, index: int) -> None:
        """Call ``index`` is ready."""
        heapq.heappush(self.ready, index)

    def unready(self, index: int) -> None:
        """Call ``index`` is no longer ready (if it was)."""
        if index in self.ready:
            self.ready.remove(index)
            heapq.heapify(self.ready)

    def hold(self, index: int) -> None:
        """Keep call ``index`` from starting until it is released."""
        self.held.add(index)
        self.unready(index)

    def grow(self, graph: PlanGraph, index: int) -> None:
        """Call ``index`` was appended (``graph`` is the grown plan's, and ``committed``
        has its entry): it is held, waits for its unsettled predecessors, and the
        unstarted calls that read what it writes wait for it."""
        self.started.append(False)
        self.held.add(index)
        self.waiting.append(sum(1 for p in graph.predecessors[index] if not self.committed[p]))
        for reader in graph.successors[index]:
            if self.unstarted(reader):
                self.unready(reader)
                self.waiting[reader] += 1
