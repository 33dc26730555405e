"""Dependency edges held once per distinct set of predecessors (docs/limits.md,
"Work that cannot blow up").

Calls that read the same path in one instance share one set of predecessors
(N readers of ``†state.items[*]`` after N writers stand for N² edges).  These
helpers keep that sharing from the graph's first sets to its sorted tuples, build
the successors and Kahn's order once per group of calls sharing one tuple, and
measure breadth-first distances for the walk of a dependency cycle
(obelisk/interpreter/analysis/graph.py); :func:`reaches` and :func:`descendants` are
the one search of what a call leads to, for the graph, its world-effect edges and
the runtime's commit order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from operator import ne

__all__ = ["Groups", "descendants", "distances", "mutable", "reaches", "sorted_shared"]


def mutable(predecessors: list[set[int] | frozenset[int]], node: int) -> set[int]:
    """``predecessors[node]`` as a set of its own (a shared frozenset is copied)."""
    mine = predecessors[node]
    if isinstance(mine, frozenset):
        mine = predecessors[node] = set(mine)
    return mine


def sorted_shared(predecessors: list[set[int] | frozenset[int]]) -> list[tuple[int, ...]]:
    """Each call's predecessors as a sorted tuple; calls sharing one set share one tuple."""
    done: dict[int, tuple[int, ...]] = {}  # id of a shared frozenset -> its tuple
    result: list[tuple[int, ...]] = []
    for preds in predecessors:
        if isinstance(preds, frozenset):
            ordered = done.get(id(preds))
            if ordered is None:
                ordered = done[id(preds)] = tuple(sorted(preds))
            result.append(ordered)
        else:
            result.append(tuple(sorted(preds)))
    return result


def reaches(start: int, goal: int, *edges: Sequence[Iterable[int]]) -> bool:
    """True when ``goal`` is reached from ``start`` in one step or more along ``edges``
    (each a list of every call's next calls, such as ``PlanGraph.successors``;
    several lists are followed together)."""
    return goal in _reached(start, edges, goal)


def descendants(start: int, *edges: Sequence[Iterable[int]]) -> set[int]:
    """Every call reached from ``start`` in one step or more along ``edges`` (as for
    :func:`reaches`); ``start`` itself only when it is on a cycle."""
    return _reached(start, edges, None)


def _reached(start: int, edges: tuple[Sequence[Iterable[int]], ...], goal: int | None) -> set[int]:
    """The calls reached from ``start`` (depth first), stopping once ``goal`` is."""
    seen: set[int] = set()
    stack = [start]
    while stack:
        node = stack.pop()
        for table in edges:
            for child in table[node]:
                if child not in seen:
                    if child == goal:
                        seen.add(child)
                        return seen
                    seen.add(child)
                    stack.append(child)
    return seen


def distances(
    source: int, edges: list[tuple[int, ...]], members: set[int], wanted: set[int]
) -> dict[int, int]:
    """Steps from ``source`` along ``edges`` inside ``members`` (breadth first),
    until every call of ``wanted`` is reached."""
    distance = {source: 0}
    left = len(wanted - {source})
    queue = deque([source])
    while queue and left:
        node = queue.popleft()
        steps = distance[node] + 1
        for child in edges[node]:
            if child in distance or child not in members:
                continue
            distance[child] = steps
            if child in wanted:
                left -= 1
                if not left:
                    break
            queue.append(child)
    return distance


class Groups:
    """The calls grouped by their predecessors (one group per distinct tuple object).

    Calls that share one tuple of predecessors (N readers of ``†state.items[*]``)
    become ready together, so Kahn's order counts down once per group and
    predecessor, and the successors of a call are built from the groups it is in:
    the work and memory grow with the distinct tuples, not with the edges they
    stand for.
    """

    def __init__(
        self, predecessors: list[tuple[int, ...]], size: int, nodes: Sequence[int] = ()
    ) -> None:
        """``nodes``: the calls' numbers ``0 .. size - 1`` as int objects to share (a
        plan's call indexes), so the successors and the order make no int per call."""
        self.size = size
        if len(nodes) != size or any(map(ne, nodes, range(size))):
            nodes = range(size)  # not the numbers 0 .. size - 1: made here
        number: dict[int, int] = {}  # id(tuple) -> group
        self.needs: list[tuple[int, ...]] = []  # each group's predecessors
        self.members: list[list[int]] = []  # each group's calls, ascending
        for node, preds in zip(nodes, predecessors, strict=True):
            if not preds:
                continue
            group = number.get(id(preds))
            if group is None:
                group = number[id(preds)] = len(self.needs)
                self.needs.append(preds)
                self.members.append([])
            self.members[group].append(node)
        self.starts = [node for node in nodes if not predecessors[node]]
        self.groups_of: list[list[int]] = [[] for _ in range(size)]  # groups a call feeds
        for group, preds in enumerate(self.needs):
            for pred in preds:
                self.groups_of[pred].append(group)

    def successors(self) -> list[tuple[int, ...]]:
        """Each call's successors, ascending; one tuple per group, shared."""
        members = [tuple(m) for m in self.members]
        result: list[tuple[int, ...]] = []
        for groups in self.groups_of:
            if not groups:
                result.append(())
            elif len(groups) == 1:
                result.append(members[groups[0]])
            else:
                result.append(tuple(sorted(node for g in groups for node in members[g])))
        return result

    def order(self) -> list[int]:
        """Kahn's order (the same as counting down each edge): a group whose last
        predecessor comes out releases its calls, in ascending order."""
        waiting = [len(preds) for preds in self.needs]
        queue = deque(self.starts)
        order: list[int] = []
        groups_of, members = self.groups_of, self.members
        while queue:
            node = queue.popleft()
            order.append(node)
            released: list[int] = []
            done = 0
            for group in groups_of[node]:
                waiting[group] -= 1
                if waiting[group] == 0:
                    released.extend(members[group])
                    done += 1
            if done > 1:
                released.sort()
            queue.extend(released)
        return order
