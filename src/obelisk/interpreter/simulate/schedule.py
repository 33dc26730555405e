"""How long a scenario would take: critical path, makespan and peak concurrency.

Estimates, not measurements: each call that runs takes its tool's ``latency``
(seconds, default 1.0); a skipped call takes no time.  The critical path is the
longest chain of dependent calls (with unlimited parallelism).  The makespan and the
peak concurrency come from playing the schedule the runtime follows: a call starts
when everything it depends on has settled, in plan order, at most ``concurrency`` at
once and at most each tool's ``capacity`` at once (docs/simulate.md).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Schedule", "schedule"]


@dataclass(frozen=True, slots=True)
class Schedule:
    """``critical_path``: call indexes, first to last; ``critical_seconds`` its length;
    ``makespan``: seconds from the first start to the last finish; ``peak``: the most
    calls running at once; ``starts``: each call's start time (seconds)."""

    critical_path: tuple[int, ...]
    critical_seconds: float
    makespan: float
    peak: int
    starts: Mapping[int, float]


def schedule(
    predecessors: Sequence[Sequence[int]],
    durations: Mapping[int, float],
    tools: Sequence[str],
    capacity: Mapping[str, int | None],
    concurrency: int,
) -> Schedule:
    """The schedule of the calls in ``durations`` (index -> seconds; the others are
    skipped and take no time) given every call's ``predecessors``."""
    successors: list[list[int]] = [[] for _ in predecessors]
    for node, preds in enumerate(predecessors):
        for pred in preds:
            successors[pred].append(node)
    path, critical = _critical_path(predecessors, successors, durations)
    played = _Playback(predecessors, successors, durations, tools, capacity)
    played.run(concurrency)
    starts = played.starts
    makespan = max((starts[n] + durations[n] for n in durations if n in starts), default=0.0)
    return Schedule(tuple(path), critical, makespan, played.peak, starts)


def _critical_path(
    predecessors: Sequence[Sequence[int]],
    successors: list[list[int]],
    durations: Mapping[int, float],
) -> tuple[list[int], float]:
    """The longest chain of dependent calls with unlimited parallelism (the calls
    that take time, first to last) and its length in seconds."""
    size = len(predecessors)
    finish = [0.0] * size
    via: list[int | None] = [None] * size  # the predecessor that finishes last
    for node in _kahn_order(predecessors, successors):
        start = 0.0
        for pred in predecessors[node]:
            if finish[pred] > start or (finish[pred] == start and via[node] is None):
                start, via[node] = finish[pred], pred
        finish[node] = start + durations.get(node, 0.0)
    path: list[int] = []
    if durations:
        node_end: int | None = max(durations, key=lambda n: (finish[n], -n))
        while node_end is not None:
            if node_end in durations:
                path.append(node_end)
            node_end = via[node_end]
        path.reverse()
    return path, max((finish[n] for n in durations), default=0.0)


def _kahn_order(predecessors: Sequence[Sequence[int]], successors: list[list[int]]) -> list[int]:
    """The calls in a dependency order (Kahn's algorithm, last ready first)."""
    left = [len(preds) for preds in predecessors]
    queue = [node for node, count in enumerate(left) if count == 0]
    order: list[int] = []
    while queue:
        node = queue.pop()
        order.append(node)
        for child in successors[node]:
            left[child] -= 1
            if left[child] == 0:
                queue.append(child)
    return order


class _Playback:
    """The runtime's schedule played in time: a ready call starts in plan order, at
    most ``concurrency`` at once and each tool's ``capacity``; ``starts`` holds each
    call's start time and ``peak`` the most calls that take time running at once."""

    def __init__(
        self,
        predecessors: Sequence[Sequence[int]],
        successors: list[list[int]],
        durations: Mapping[int, float],
        tools: Sequence[str],
        capacity: Mapping[str, int | None],
    ) -> None:
        self.successors, self.durations = successors, durations
        self.tools, self.capacity = tools, capacity
        self.left = [len(preds) for preds in predecessors]  # unsettled predecessors
        self.ready = [node for node, count in enumerate(self.left) if count == 0]
        heapq.heapify(self.ready)
        self.running: list[tuple[float, int]] = []  # (finish time, call)
        self.now, self.peak = 0.0, 0
        self.busy = 0  # calls running that take time (a skipped call takes none)
        self.per_tool: dict[str, int] = {}
        self.starts: dict[int, float] = {}

    def run(self, concurrency: int) -> None:
        while self.ready or self.running:
            self._start_ready(concurrency)
            self.peak = max(self.peak, self.busy)
            if not self.running:
                break
            self._finish_next()

    def _start_ready(self, concurrency: int) -> None:
        """Start the ready calls, lowest index first, as far as the limits allow."""
        deferred = []
        while self.ready and len(self.running) < concurrency:
            node = heapq.heappop(self.ready)
            tool = self.tools[node]
            limit = self.capacity.get(tool)
            if limit is not None and self.per_tool.get(tool, 0) >= limit:
                deferred.append(node)
                continue
            self.starts[node] = self.now
            self.per_tool[tool] = self.per_tool.get(tool, 0) + 1
            heapq.heappush(self.running, (self.now + self.durations.get(node, 0.0), node))
            self.busy += node in self.durations
        for node in deferred:
            heapq.heappush(self.ready, node)

    def _finish_next(self) -> None:
        """Move time on to the next call that finishes; its successors may be ready."""
        self.now, done = heapq.heappop(self.running)
        self.busy -= done in self.durations
        self.per_tool[self.tools[done]] -= 1
        for child in self.successors[done]:
            self.left[child] -= 1
            if self.left[child] == 0:
                heapq.heappush(self.ready, child)
