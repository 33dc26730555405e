"""The order in which calls commit their writes (docs/semantics.md)."""

from __future__ import annotations

import heapq
import itertools

from obelisk.interpreter.analysis.graph import PlanGraph

__all__ = ["commit_ranks"]


def commit_ranks(graph: PlanGraph) -> list[int]:
    """Each call's place in the commit order (docs/semantics.md).

    Writers of overlapping paths in one layer commit in plan order, unless a
    dependency says otherwise: each group of such writers is chained in plan
    order (a chain link that would close a cycle with the dependencies is left
    out), and the order is Kahn's over dependencies plus chain links, smallest
    index first.  It depends on nothing but the plan, so runs are repeatable.
    """
    size = len(graph.predecessors)
    group = list(range(size))  # union-find over "writes overlap in one layer"

    def root(node: int) -> int:
        while group[node] != node:
            group[node] = group[group[node]]
            node = group[node]
        return node

    for writes in graph.writes:
        for write in writes:
            for other in graph.index.overlapping(write.key):
                if other.call != write.call and other.instance == write.instance:
                    group[root(other.call)] = root(write.call)
    members: dict[int, list[int]] = {}
    for node in range(size):
        if graph.writes[node]:
            members.setdefault(root(node), []).append(node)
    links: list[list[int]] = [[] for _ in range(size)]

    def reaches(start: int, goal: int) -> bool:
        seen, stack = {start}, [start]
        while stack:
            node = stack.pop()
            for child in (*graph.successors[node], *links[node]):
                if child == goal:
                    return True
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return False

    for writers in members.values():
        for earlier, later in itertools.pairwise(writers):
            if not reaches(later, earlier):
                links[earlier].append(later)
    waiting = [len(preds) for preds in graph.predecessors]
    for node_links in links:
        for target in node_links:
            waiting[target] += 1
    heap = [node for node, count in enumerate(waiting) if count == 0]
    heapq.heapify(heap)
    rank = [0] * size
    position = 0
    while heap:
        node = heapq.heappop(heap)
        rank[node] = position
        position += 1
        for successor in (*graph.successors[node], *links[node]):
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(heap, successor)
    return rank
