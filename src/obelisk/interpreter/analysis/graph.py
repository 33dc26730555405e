"""Dependency graph of a plan (docs/semantics.md, docs/diagnostics.md).

Call B depends on call A when a path B reads overlaps a path A may write (any
alternative or fan-out target), and A's write is visible to B's instance
(docs/semantics.md: a write under ``_instance: "a"`` is seen by instance ``a`` only;
a write with no instance by every call).  List order never creates an edge.

Overlap queries go through a :class:`~obelisk.interpreter.analysis.path_index.PathIndex`
trie, so building the graph grows about linearly with the plan.  Cycles are
found by Kahn's algorithm (a call it never reaches is in or behind a cycle) and
reported whole (one per strongly connected component).  Exclusivity
(docs/diagnostics.md): two calls are exclusive when they depend on different
alternatives of the same output expression; a call that depends on two
alternatives of one output can never run.
"""

from __future__ import annotations

import graphlib
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

from obelisk.errors import DependencyCycleError
from obelisk.grammar import Reference
from obelisk.interpreter.analysis.accesses import Read, Sources, Write, reads_of, writes_of
from obelisk.interpreter.analysis.edges import (
    Groups,
    descendants,
    distances,
    mutable,
    reaches,
    sorted_shared,
)
from obelisk.interpreter.analysis.path_index import PathIndex
from obelisk.interpreter.analysis.world import WorldOrder
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.tools.effects import call_effects, is_templated

__all__ = ["PlanGraph", "Read", "Write"]

Tag = tuple[int, int]  # (producer call index, alternative index)


def _need(
    sources: tuple[Write, ...],
    tags: list[frozenset[Tag]],
    unreachable: dict[int, str],
    labels: list[str],
    relevant: set[int],
) -> tuple[str | None, frozenset[Tag]]:
    """What a required read of ``sources`` needs: the labels of its writers when none
    of them can run (else None), and the ``(producer, alternative)`` tags every
    writer that can run holds (with its own alternative, when it has several and
    is ``relevant``)."""
    live = [w for w in sources if w.call not in unreachable]
    if not live:
        return ", ".join(sorted({labels[w.call] for w in sources})), frozenset()
    common: frozenset[Tag] | None = None
    for write in live:
        mine = tags[write.call]
        if write.alternatives > 1 and write.call in relevant:
            mine = mine | {(write.call, write.alternative)}
        common = mine if common is None else common & mine
    return None, common or frozenset()


class _AlternativeWalk:
    """The ``(producer, alternative)`` tags each call holds, and the calls that can
    never run, worked out in a topological order (PlanGraph._analyse_alternatives).

    Only the alternatives of ``relevant`` producers are tags (two of their
    alternatives feed required reads)."""

    def __init__(self, graph: PlanGraph, relevant: set[int]) -> None:
        self.graph = graph
        self.relevant = relevant
        self.tags: list[frozenset[Tag]] = [frozenset()] * graph.size
        self.unreachable: dict[int, str] = {}
        self.labels = [call.label for call in graph.plan.calls]
        # id(sources) -> what a read of them needs: (the dead writers' labels, or None;
        # the tags every live writer holds).  Reads sharing one tuple of sources (N
        # readers of items[*]) are worked out once: the writers' tags are final then.
        self.needs: dict[int, tuple[str | None, frozenset[Tag]]] = {}

    def run(self, order: list[int], exists: Callable[[Reference], bool] | None) -> None:
        for node in order:
            held = self._held(node, exists)
            if isinstance(held, str):
                self.unreachable[node] = held
                continue
            clash = self._clash(held)
            if clash is not None:
                self.unreachable[node] = clash
            self.tags[node] = frozenset(held)

    def _held(self, node: int, exists: Callable[[Reference], bool] | None) -> set[Tag] | str:
        """The tags the required reads of ``node`` hold, or why it can never run."""
        graph, needs = self.graph, self.needs
        held: set[Tag] = set()
        for read, sources in zip(graph.reads[node], graph.sources[node], strict=True):
            if not read.required or not sources:
                continue
            if exists is not None and exists(read.reference):
                continue  # there before the plan: no alternative has to be written
            need = needs.get(id(sources))
            if need is None:
                need = needs[id(sources)] = _need(
                    sources, self.tags, self.unreachable, self.labels, self.relevant
                )
            dead, common = need
            if dead is not None:
                return (
                    f"it needs {read.reference}, which only {dead} can write, "
                    "and that can never run"
                )
            held.update(common)
        return held

    def _clash(self, held: set[Tag]) -> str | None:
        """Why a call holding ``held`` can never run: two alternatives of one producer."""
        chosen: dict[int, int] = {}
        for producer, alternative in sorted(held):
            if chosen.setdefault(producer, alternative) != alternative:
                return (
                    f"it depends on two different alternatives of {self.labels[producer]}, "
                    "and only one of them is ever written"
                )
        return None


class PlanGraph:
    """The calls of a plan and the dependency edges between them.

    Calls are identified by their index in the plan.  Attributes:

    * ``reads[i]`` / ``writes[i]``: what call ``i`` reads and may write;
    * ``sources[i][k]``: the writes that can feed ``reads[i][k]``;
    * ``predecessors[i]`` / ``successors[i]``: sorted call indexes;
    * ``cycles``: each dependency cycle as a closed walk ``[a, b, ..., a]``
      (empty when the graph is acyclic);
    * ``order_edges``: the order-only edges among those, ``(before, after) ->
      why`` (``"after"`` for ``_after``, else the world resource both touch), and
      ``unknown_after``: ``(call, target)`` for each ``_after`` that names no other call;
    * ``world_effects``: each call that touches the world -> the resources it touches
      and how, ``{0: {"files:notes/a.txt": "write"}}`` (a tool's ``{argument}`` replaced
      by the call's own path, docs/semantics.md, "World effects and order-only edges").

    The runtime schedules from ``predecessors`` and ``successors`` (a call is
    ready when every call that may write what it reads has settled,
    docs/semantics.md).  To schedule a plan by hand: :meth:`topological_order`,
    :meth:`ready` and :meth:`is_complete` (docs/semantics.md, "Scheduling a plan
    by hand").
    """

    def __init__(
        self,
        plan: Plan,
        exists: Callable[[Reference], bool] | None = None,
        effects: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self.plan = plan
        self._exists = exists
        calls = plan.calls
        self.size = len(calls)
        self.reads: list[tuple[Read, ...]] = [reads_of(call) for call in calls]
        self.writes: list[tuple[Write, ...]] = []
        self.index: PathIndex[Write] = PathIndex()
        add, keep = self.index.add, self.writes.append
        for call in calls:
            writes = writes_of(call)
            keep(writes)
            if len(writes) == 1:  # the common case: the leaf shares the call's tuple
                add(writes[0].reference.key, writes[0], writes)
                continue
            for write in writes:
                add(write.reference.key, write)
        self.sources: list[tuple[tuple[Write, ...], ...]] = []
        predecessors = self._find_sources()
        self.order_edges: dict[tuple[int, int], str] = {}
        self.unknown_after: list[tuple[int, str | int]] = []
        self.world_effects: dict[int, Mapping[str, str]] = {}
        self._add_order_edges(predecessors, effects)
        self.predecessors: list[tuple[int, ...]] = sorted_shared(predecessors)
        # not kept: a list or two per call
        groups = Groups(self.predecessors, self.size, [call.index for call in calls])
        self.successors: list[tuple[int, ...]] = groups.successors()
        self._order = groups.order()  # Kahn's order of every call not in or behind a cycle
        self.cycles: list[list[int]] = self._find_cycles()
        self._tags: list[frozenset[Tag]] | None = None
        self._unreachable: dict[int, str] | None = None

    def _find_sources(self) -> list[set[int] | frozenset[int]]:
        """Fill ``sources``; give each call's predecessors by data (:class:`Sources`)."""
        of_call, keep = Sources(self.index, self.writes).of_call, self.sources.append
        predecessors: list[set[int] | frozenset[int]] = []
        for call, reads in zip(self.plan.calls, self.reads, strict=True):
            sources_of_call, before = of_call(call, reads)
            keep(sources_of_call)
            predecessors.append(before)
        return predecessors

    # -- order-only edges: _after and world effects ---------------------------
    def _add_order_edges(
        self,
        predecessors: list[set[int] | frozenset[int]],
        effects: Callable[[str], Mapping[str, str]] | None,
    ) -> None:
        """Add the order-only edges to ``predecessors`` and record them in
        ``order_edges`` (``(before, after) -> "after" | resource``).

        ``_after`` targets are ``_id`` values, or indexes when no call has that
        integer id.  Two calls whose effects conflict (write/write or read/write on
        resources that overlap by prefix) run in plan order, unless the
        dependencies found so far already order them the other way.
        """
        self._add_after_edges(predecessors)
        if effects is not None:
            self._add_world_edges(predecessors, effects)

    def _add_after_edges(self, predecessors: list[set[int] | frozenset[int]]) -> None:
        """An edge from each ``_after`` target to its call; a target that names no
        other call goes to ``unknown_after``."""
        calls = self.plan.calls
        ids = {call.id: call.index for call in calls if call.id is not None}
        for call in calls:
            for target in call.after:
                found = ids.get(target)
                if found is None and type(target) is int and 0 <= target < self.size:
                    found = target  # an index, since no call has that integer id
                if found is None or found == call.index:
                    self.unknown_after.append((call.index, target))
                    continue
                mutable(predecessors, call.index).add(found)
                self.order_edges.setdefault((found, call.index), "after")

    def _touching(
        self, effects: Callable[[str], Mapping[str, str]]
    ) -> list[tuple[int, Mapping[str, str]]]:
        """The calls whose tools touch the world, with their effects (asked once per
        tool name, an ``{argument}`` in a resource replaced by the call's own literal
        path: :func:`call_effects`), in plan order."""
        of_tool: dict[str, tuple[Mapping[str, str], bool]] = {}
        touching: list[tuple[int, Mapping[str, str]]] = []
        for call in self.plan.calls:
            known = of_tool.get(call.tool)
            if known is None:
                declared = effects(call.tool)
                known = of_tool[call.tool] = (declared, is_templated(declared))
            mine, templated = known
            if templated:  # files:{path}: the call's own path (tools/effects.py)
                mine = call_effects(mine, call.arguments)
            if mine:
                touching.append((call.index, mine))
        return touching

    def _add_world_edges(
        self,
        predecessors: list[set[int] | frozenset[int]],
        effects: Callable[[str], Mapping[str, str]],
    ) -> None:
        """An edge between each two calls whose effects conflict (:class:`WorldOrder`),
        unless the edges so far already order them."""
        touching = self._touching(effects)
        if not touching:
            return  # the common case: no call touches the world, no order to add
        self.world_effects = dict(touching)
        successors: list[set[int]] = [set() for _ in range(self.size)]
        backward = False  # an edge against plan order: only then can a later call come first
        for node, preds in enumerate(predecessors):
            for pred in preds:
                successors[pred].add(node)
                backward = backward or pred > node

        def ordered_before(start: int, goal: int) -> bool:
            # with every edge pointing forward in plan order, no call reaches an earlier one
            return (backward or goal >= start) and reaches(start, goal, successors)

        world = WorldOrder()
        for me, mine in touching:
            for resource, access in mine.items():
                for earlier, label in world.add(me, resource, access, ordered_before):
                    if me in successors[earlier]:
                        continue  # a dependency orders them already
                    mutable(predecessors, me).add(earlier)
                    successors[earlier].add(me)
                    self.order_edges.setdefault((earlier, me), label)

    # -- structure -----------------------------------------------------------
    @property
    def edges(self) -> list[tuple[int, int]]:
        """Every dependency edge ``(producer, consumer)``, sorted."""
        return sorted((p, node) for node, preds in enumerate(self.predecessors) for p in preds)

    def _find_cycles(self) -> list[list[int]]:
        if len(self._order) == self.size:  # Kahn's order reached every call: no cycle
            return []
        return [self._walk_cycle(component) for component in self._components()]

    def _components(self) -> list[list[int]]:
        """Strongly connected components with a cycle (iterative Tarjan), by first call."""
        index_of: dict[int, int] = {}
        low: dict[int, int] = {}
        on_stack: set[int] = set()
        stack: list[int] = []
        found: list[list[int]] = []
        counter = 0
        for root in range(self.size):
            if root in index_of:
                continue
            work: list[tuple[int, Iterator[int]]] = [(root, iter(self.successors[root]))]
            index_of[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            while work:
                node, children = work[-1]
                for child in children:
                    if child not in index_of:
                        index_of[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(self.successors[child])))
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index_of[child])
                else:
                    work.pop()
                    if work:
                        parent = work[-1][0]
                        low[parent] = min(low[parent], low[node])
                    if low[node] == index_of[node]:
                        component = []
                        while True:
                            member = stack.pop()
                            on_stack.discard(member)
                            component.append(member)
                            if member == node:
                                break
                        if len(component) > 1:
                            found.append(sorted(component))
        return sorted(found)

    def _path_within(self, start: int, goal: int, members: set[int]) -> list[int]:
        """Shortest path ``[start, ..., goal]`` (at least one step) inside ``members``."""
        parent: dict[int, int] = {}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for child in self.successors[node]:
                if child not in members or child in parent:
                    continue
                parent[child] = node
                if child == goal:
                    path = [goal]
                    while path[-1] != start or len(path) == 1:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(child)
        raise AssertionError("members of a strongly connected component reach each other")

    def _walk_cycle(self, component: list[int]) -> list[int]:
        """A closed walk ``[a, ..., a]`` through every call of the component.

        It is the shortest cycle through the first call, extended (in plan order)
        by the shortest detour to each member that cycle misses (from the first
        place of the walk where a detour is shortest), so every call that takes
        part in the cycle is named.  Two searches from each missed member, each
        stopping once it has met every call of the walk, give the detour's length
        from every place at once.
        """
        members = set(component)
        start = component[0]
        walk = self._path_within(start, start, members)
        on_walk = set(walk)
        for member in component:
            if member in on_walk:
                continue
            places = set(walk[:-1])
            there = distances(member, self.predecessors, members, places)  # place -> member
            back = distances(member, self.successors, members, places)  # member -> place
            best_at = min(range(len(walk) - 1), key=lambda p: there[walk[p]] + back[walk[p]])
            node = walk[best_at]
            best = self._path_within(node, member, members)
            best += self._path_within(member, node, members)[1:]
            walk = walk[:best_at] + best + walk[best_at + 1 :]
            on_walk.update(best)
        return walk

    def reaches(self, start: int, goal: int, *links: Sequence[Iterable[int]]) -> bool:
        """True when ``goal`` depends, directly or not, on ``start`` (also through
        ``links``, more edges given as lists of each call's next calls)."""
        return reaches(start, goal, self.successors, *links)

    def descendants(self, start: int) -> set[int]:
        """The calls that depend, directly or not, on ``start``."""
        return descendants(start, self.successors)

    # -- alternatives ------------------------------------------------------
    def _analyse_alternatives(self) -> tuple[list[frozenset[Tag]], dict[int, str]]:
        if self._tags is None or self._unreachable is None:
            relevant = self._relevant_producers()
            if relevant:
                walk = _AlternativeWalk(self, relevant)
                walk.run(self._order, self._exists)
                self._tags, self._unreachable = walk.tags, walk.unreachable
            else:
                # no two alternatives of one output are read: nothing is exclusive,
                # everything can run
                self._tags, self._unreachable = [frozenset()] * self.size, {}
        return self._tags, self._unreachable

    def _relevant_producers(self) -> set[int]:
        """The calls two of whose alternatives feed required reads.

        Only their alternatives are tags: a call of which a single alternative is
        ever read can make no two calls exclusive and no call unreachable, and its
        tag would be carried by every call after it (a chain of n such calls held
        n²/2 tags)."""
        first: dict[int, int] = {}  # producer -> the first of its alternatives read
        relevant: set[int] = set()
        done: set[int] = set()  # ids of the tuples of sources looked at
        for reads, sources_of_call in zip(self.reads, self.sources, strict=True):
            for read, sources in zip(reads, sources_of_call, strict=True):
                if not read.required or not sources or id(sources) in done:
                    continue
                done.add(id(sources))
                for write in sources:
                    call, alternative = write.call, write.alternative
                    if (
                        write.alternatives > 1
                        and first.setdefault(call, alternative) != alternative
                    ):
                        relevant.add(call)
        return relevant

    @property
    def unreachable(self) -> dict[int, str]:
        """Calls that can never run, each with the reason (docs/diagnostics.md)."""
        return self._analyse_alternatives()[1]

    def tags(self, call: int) -> frozenset[Tag]:
        """The ``(producer, alternative)`` pairs call ``call`` depends on: two calls
        are exclusive when they hold different alternatives of one producer."""
        return self._analyse_alternatives()[0][call]

    def orderable(self) -> list[int]:
        """The calls not in or behind a dependency cycle, in a topological order."""
        return list(self._order)

    def exclusive(self, first: int, second: int) -> bool:
        """True when the two calls depend on different alternatives of one output."""
        tags = self._analyse_alternatives()[0]
        chosen = dict(tags[first])
        return any(chosen.get(producer, alt) != alt for producer, alt in tags[second])

    # -- scheduling by hand (docs/semantics.md) --------------------------------
    def topological_order(self) -> list[int]:
        """Every call index once, each after every call it depends on, by
        :class:`graphlib.TopologicalSorter` in waves (first the calls with no
        dependency, then those whose dependencies are all in the first wave, ...),
        plan order inside a wave: deterministic.  E.g. ``[0, 1, 2, 3]`` for ``edges
        == [(0, 2), (1, 2), (2, 3)]``; ``[1, 0]`` for ``[(1, 0)]``.

        Raises :class:`~obelisk.DependencyCycleError` (a :class:`graphlib.CycleError`)
        when the graph has a cycle; its ``cycles`` are :attr:`cycles`, those ``check``
        reports as ``dependency_cycle`` (docs/diagnostics.md).
        """
        if self.cycles:
            raise DependencyCycleError(self.cycles, [call.label for call in self.plan.calls])
        sorter = graphlib.TopologicalSorter(dict(enumerate(self.predecessors)))
        sorter.prepare()
        order: list[int] = []
        while sorter.is_active():
            wave = sorted(sorter.get_ready())
            order.extend(wave)
            sorter.done(*wave)
        return order

    def ready(self, settled: Collection[int]) -> list[int]:
        """The calls that may start now, in plan order: not in ``settled`` (the
        indexes of the calls that are over: succeeded, failed, skipped or
        cancelled), with every call they depend on in ``settled``.  A call in or
        behind a cycle is never ready.  E.g. with ``edges == [(0, 2), (1, 2)]``:
        ``ready(set()) == [0, 1]``, ``ready({0}) == [1]``, ``ready({0, 1}) == [2]``.
        """
        done = settled if isinstance(settled, (set, frozenset)) else set(settled)
        preds = self.predecessors
        return [n for n in range(self.size) if n not in done and all(p in done for p in preds[n])]

    def is_complete(self, settled: Collection[int]) -> bool:
        """True when every call of the plan is in ``settled`` (at once for an empty plan)."""
        return set(settled).issuperset(range(self.size))
