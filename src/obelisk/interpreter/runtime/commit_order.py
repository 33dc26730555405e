"""The order in which calls commit their writes (docs/semantics.md).

Two writes must commit in a fixed order when applying them in the other order
could give a different state:

* their paths overlap once every list position is taken as "some position":
  ``†state.r[0]`` and ``†state.r[1]`` interact (writing position 1 needs
  position 0 to exist), and so do ``†state.a`` and ``†state.a.b``;
* their layers meet: the same instance, or either one is shared (an instance
  sees the shared layer under its own writes).  Writes of two different
  instances never interact.

Such writers commit in plan order, unless a dependency says otherwise: the
dependency first.  Everything else commits as soon as it is done.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Callable, Sequence

from obelisk.grammar import ANY_INDEX, WILDCARD
from obelisk.interpreter.analysis.graph import PlanGraph, Write
from obelisk.interpreter.analysis.path_index import Key, PathIndex

__all__ = ["CommitGate", "CommitOrder", "commit_key", "commit_ranks", "points_forward"]


def commit_key(key: Key) -> Key:
    """A write's path key with every list position made "some position" (``key``
    itself when it has none)."""
    for part in key:
        if type(part) is int:
            return tuple(ANY_INDEX if type(part) is int else part for part in key)
    return key


def _layers_meet(first: str | None, second: str | None) -> bool:
    return first is None or second is None or first == second


class CommitOrder:
    """The commit order of a plan: ``ranks[i]`` is call ``i``'s place, and
    :meth:`blockers` the earlier calls whose writes must commit before call
    ``i``'s do.  Depends on nothing but the plan, so runs are repeatable.

    A plan that grows while it runs (streaming) :meth:`append` adds calls; each new
    call commits after every call before it.
    """

    def __init__(self, graph: PlanGraph) -> None:
        self.graph = graph
        self._index: PathIndex[Write] | None = None  # every write: built when first asked
        self.groups: list[list[int]] = []  # calls whose commits are ordered, by rank
        self.ranks = self._ranks()

    @property
    def index(self) -> PathIndex[Write]:
        """Every write of the plan by its commit key (for :meth:`conflicting`)."""
        if self._index is None:
            self._index = PathIndex()
            for writes in self.graph.writes:
                for write in writes:
                    self._index.add(commit_key(write.key), write)
        return self._index

    def conflicting(self, write: Write) -> list[Write]:
        """The other calls' writes that must commit in a fixed order with ``write``."""
        return [
            other
            for other in self.index.overlapping(commit_key(write.key))
            if other.call != write.call and _layers_meet(other.instance, write.instance)
        ]

    def blockers(self, call: int) -> tuple[int, ...]:
        """Calls earlier in the commit order whose writes must commit before ``call``'s."""
        mine = self.ranks[call]
        found = {
            other.call
            for write in self.graph.writes[call]
            for other in self.conflicting(write)
            if self.ranks[other.call] < mine
        }
        return tuple(sorted(found))

    def append(self, graph: PlanGraph) -> None:
        """``graph`` is the old plan's plus one last call, which commits after all others."""
        self.graph = graph
        index = len(self.ranks)
        if self._index is not None:
            for write in graph.writes[index]:
                self._index.add(commit_key(write.key), write)
        self.ranks.append(index)

    # -- the ranks -------------------------------------------------------------------
    def _ranks(self) -> list[int]:
        graph = self.graph
        size = len(graph.predecessors)
        writers = _writer_groups(graph)  # groups of two or more
        if points_forward(graph.predecessors):
            # so would every link below, and plan order is the order they give
            self.groups = writers
            return list(range(size))
        links = self._links(writers)
        rank = _topological_ranks(graph, links)
        self.groups = [sorted(group, key=rank.__getitem__) for group in writers]
        return rank

    def _links(self, writers: list[list[int]]) -> list[list[int]]:
        """The extra edges that put each group of writers in its commit order: plan
        order, or dependency first where a dependency points backward; a link that
        a path already implies is left out."""
        graph = self.graph
        links: list[list[int]] = [[] for _ in graph.predecessors]
        for group in writers:
            order = group  # plan order
            if any(graph.reaches(b, a) for a, b in itertools.pairwise(group)):
                order = self._dependency_first(group)
            for earlier, later in itertools.pairwise(order):
                if not graph.reaches(later, earlier, links):
                    links[earlier].append(later)
        return links

    def _dependency_first(self, writers: list[int]) -> list[int]:
        """Writers ordered dependency first, plan order between independent ones.

        Only needed where plan order and dependency order disagree; it keeps the
        order of writers that are not next to each other in the plan (chaining
        neighbours alone loses it when a link has to be left out).
        """
        below = {writer: self.graph.descendants(writer) for writer in writers}

        def compare(first: int, second: int) -> int:
            if second in below[first]:
                return -1
            if first in below[second]:
                return 1
            return first - second

        return sorted(writers, key=functools.cmp_to_key(compare))


class _Joined:
    """Union-find over call indices: which calls must commit in a fixed order."""

    __slots__ = ("parent",)

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def root(self, node: int) -> int:
        parent = self.parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(self, node: int, other: int) -> None:
        """``node``'s set joins ``other``'s (``other``'s root stays the root)."""
        self.parent[self.root(node)] = self.root(other)


def _writer_groups(graph: PlanGraph) -> list[list[int]]:
    """The writing calls that must commit in a fixed order, grouped (transitively):
    each group in plan order, the groups in the plan order of their first call.  A
    call whose writes interact with no other call's is in no group (a group of one
    orders nothing), so a plan whose writes never overlap has none, and builds no
    union-find for them."""
    heads, joins = _bucket_heads(graph)
    shared = all(instance is None for _, instance in heads)
    if shared and not any(WILDCARD in key for key, _ in heads):
        _join_prefixes(heads, joins)
    else:
        _join_overlaps(heads, joins)
    if not joins:
        return []
    joined = _Joined(len(graph.predecessors))
    for node, other in joins:
        joined.join(node, other)
    members: dict[int, list[int]] = {}
    root = joined.root
    for node, writes in enumerate(graph.writes):
        if writes:
            members.setdefault(root(node), []).append(node)
    return [group for group in members.values() if len(group) > 1]


Joins = list[tuple[int, int]]
"""Pairs of calls whose commits must be ordered (their sets are to be joined)."""


def _bucket_heads(graph: PlanGraph) -> tuple[dict[tuple[Key, str | None], Write], Joins]:
    """Writes to the same (path, layer) form one bucket, whose calls are joined with
    its first writer; returns each bucket's first write, and those joins.  Only the
    heads are then joined with the buckets they overlap, so n writers of one path
    cost linear time, not n * n."""
    heads: dict[tuple[Key, str | None], Write] = {}
    joins: Joins = []
    for writes in graph.writes:
        for write in writes:
            head = heads.setdefault((commit_key(write.key), write.instance), write)
            if head is not write and head.call != write.call:
                joins.append((write.call, head.call))
    return heads, joins


def _join_prefixes(heads: dict[tuple[Key, str | None], Write], joins: Joins) -> None:
    """One layer, no wildcards: keys overlap when one is a prefix of the other.  Each
    key is joined with its longest prefix that is a key too, which joins every
    chain of prefixes (a key's length in lookups, where sorting cost more)."""
    calls = {key: head.call for (key, _), head in heads.items()}
    for key, call in calls.items():
        for length in range(len(key) - 1, 0, -1):
            prefix = calls.get(key[:length])
            if prefix is not None:
                if prefix != call:
                    joins.append((call, prefix))
                break


def _join_overlaps(heads: dict[tuple[Key, str | None], Write], joins: Joins) -> None:
    """Layers or wildcards: each bucket is joined with every bucket it overlaps
    whose layer meets its own (found through a path index)."""
    index: PathIndex[Write] = PathIndex()
    for (key, _), head in heads.items():
        index.add(key, head)
    for (key, instance), head in heads.items():
        for other in index.overlapping(key):
            if other.call != head.call and _layers_meet(other.instance, instance):
                joins.append((other.call, head.call))


def _topological_ranks(graph: PlanGraph, links: list[list[int]]) -> list[int]:
    """Each call's place in the order given by the dependencies and ``links``,
    lowest plan index first among the calls ready at once."""
    size = len(graph.predecessors)
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


def points_forward(predecessors: Sequence[tuple[int, ...]]) -> bool:
    """Whether every dependency points forward in the plan (each call's sorted
    ``predecessors`` all come before it): then the commit order is plan order."""
    return all(not preds or preds[-1] < node for node, preds in enumerate(predecessors))


def commit_ranks(graph: PlanGraph) -> list[int]:
    """Each call's place in the commit order (see :class:`CommitOrder`)."""
    return CommitOrder(graph).ranks


class CommitGate:
    """Which finished calls may commit now, keeping :class:`CommitOrder`.

    A call that has run (:meth:`finish`) commits once it writes nothing, or once
    the calls it waits for (its blockers) have committed.  A call that writes
    nothing commits at once, but passes its turn on to the calls that wait for it
    only once its own blockers have committed, so those keep their order.
    ``committed[i]`` (the run's :class:`~obelisk.interpreter.runtime.readiness.Readiness`,
    read only) says whether call ``i`` has committed.
    """

    def __init__(self, order: CommitOrder, committed: Sequence[bool]) -> None:
        self.rank = order.ranks
        self.committed = committed
        self.holds = [0] * len(order.ranks)  # blockers not committed yet
        # who waits for whom (only calls someone waits for are keys): in each group, a
        # call waits for the one just before it by rank, which is waiting for every
        # earlier writer it may interact with, since each waits for the one before; so
        # n writers of one path cost linear time
        self.unblocks: dict[int, list[int]] = {}
        for members in order.groups:
            for earlier, later in itertools.pairwise(members):
                self.holds[later] = 1
                self.unblocks.setdefault(earlier, []).append(later)
        self.finished: dict[int, bool] = {}  # run, not committed -> has writes

    def add(self, blockers: tuple[int, ...]) -> None:
        """A call appended to a growing plan, waiting for ``blockers``."""
        self.holds.append(sum(1 for b in blockers if not self.committed[b]))
        for blocker in blockers:
            self.unblocks.setdefault(blocker, []).append(len(self.holds) - 1)

    def finish(self, index: int, writes: bool, commit: Callable[[int], None]) -> None:
        """Call ``index`` has run (``writes``: it has something to write); commits it
        and every call that frees up, with ``commit``, lowest commit rank first."""
        if writes and self.holds[index]:  # it waits for its blockers
            self.finished[index] = writes
            return
        commit(index)  # what flush([index]) would do, without its heap
        if index in self.unblocks:  # someone waits for it
            self.flush(self._release(index), commit)

    def committed_without_running(self, index: int, commit: Callable[[int], None]) -> None:
        """Call ``index`` was settled without running (cancelled): pass its turn on."""
        self.flush(self._release(index), commit)

    def flush(self, candidates: list[int], commit: Callable[[int], None]) -> None:
        heap = [(self.rank[c], c) for c in candidates if self._may_commit(c)]
        heapq.heapify(heap)
        while heap:
            _, candidate = heapq.heappop(heap)
            if candidate not in self.finished:
                continue
            del self.finished[candidate]
            commit(candidate)
            for freed in self._release(candidate):
                if self._may_commit(freed):
                    heapq.heappush(heap, (self.rank[freed], freed))

    def _may_commit(self, index: int) -> bool:
        writes = self.finished.get(index)
        return writes is not None and (not writes or self.holds[index] == 0)

    def _release(self, index: int) -> list[int]:
        """Call ``index`` has committed: the calls waiting for it wait for one less;
        returns those that wait for nothing more."""
        if self.holds[index]:
            return []  # passed on when its own wait ends
        freed: list[int] = []
        stack = [index]
        while stack:
            for waiter in self.unblocks.get(stack.pop(), ()):
                self.holds[waiter] -= 1
                if self.holds[waiter] == 0:
                    (stack if self.committed[waiter] else freed).append(waiter)
        return freed
