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
    size = len(predecessors)
    successors: list[list[int]] = [[] for _ in range(size)]
    waiting = [len(preds) for preds in predecessors]
    for node, preds in enumerate(predecessors):
        for pred in preds:
            successors[pred].append(node)
    # the critical path, with unlimited parallelism (Kahn's order)
    finish = [0.0] * size
    via: list[int | None] = [None] * size
    queue = [node for node in range(size) if waiting[node] == 0]
    left = list(waiting)
    order: list[int] = []
    while queue:
        node = queue.pop()
        order.append(node)
        for child in successors[node]:
            left[child] -= 1
            if left[child] == 0:
                queue.append(child)
    for node in order:
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
    critical = max((finish[n] for n in durations), default=0.0)
    # the runtime's schedule: plan order among ready calls, within the limits
    now, peak = 0.0, 0
    ready = [node for node in range(size) if waiting[node] == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    busy = 0  # calls running that take time (a skipped call takes none)
    per_tool: dict[str, int] = {}
    starts: dict[int, float] = {}
    left = list(waiting)
    while ready or running:
        deferred = []
        while ready and len(running) < concurrency:
            node = heapq.heappop(ready)
            limit = capacity.get(tools[node])
            if limit is not None and per_tool.get(tools[node], 0) >= limit:
                deferred.append(node)
                continue
            starts[node] = now
            per_tool[tools[node]] = per_tool.get(tools[node], 0) + 1
            heapq.heappush(running, (now + durations.get(node, 0.0), node))
            busy += node in durations
        for node in deferred:
            heapq.heappush(ready, node)
        peak = max(peak, busy)
        if not running:
            break
        now, done = heapq.heappop(running)
        busy -= done in durations
        per_tool[tools[done]] -= 1
        for child in successors[done]:
            left[child] -= 1
            if left[child] == 0:
                heapq.heappush(ready, child)
    makespan = max((starts[n] + durations[n] for n in durations if n in starts), default=0.0)
    return Schedule(tuple(path), critical, makespan, peak, starts)
