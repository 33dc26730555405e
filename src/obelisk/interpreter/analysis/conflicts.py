"""Write conflicts: calls that ``set`` overlapping paths without waiting for each other.

Found once per *group* of writers, in about linear time (docs/diagnostics.md,
``write_conflict``).  A group is a set of ``set`` writes in one instance layer that
overlap each other, directly or through other writes of the group (``†state.user``
joins ``†state.user.age`` and ``†state.user.name``).  Two calls of a group conflict
when some of their writes overlap, neither depends on the other (directly or not),
and they do not hold different alternatives of one call.

Comparing every pair of writers would be quadratic: 5,000 calls writing one path
make 12.5 million pairs.  Most groups are *plain*: no call of the group waits for
another of it (directly or not) and none are exclusive, so two calls conflict
exactly when their writes overlap.  One pass over a topological order gives each
call one value, the group of the group members among its ancestors (or "several"),
and tells the plain groups apart; in them, each trie node keeps up to two calls (of
its writes, and of those below it), so each write learns whether it overlaps another
call's in the time of its own trie walk: linear time and memory.  The other groups
(some member ordered after another of the group, or after members of several
groups, or two members exclusive) go to bit sets, which are exact for any group:
each of their members is one bit, with three sets per member (the members it
overlaps, from the trie; it is ordered with, from two passes over the topological
order; it is exclusive with, from the alternatives each call depends on), so they
cost (members)² bits.  Calls that can never run (in or behind a dependency cycle,
or ``unreachable_call``) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from obelisk.diagnostics import Collector
from obelisk.interpreter.analysis.graph import PlanGraph, Write
from obelisk.interpreter.analysis.path_index import PathIndex, TrieNode

__all__ = ["Conflict", "find_conflicts", "report_conflicts"]

_NAMED = 5
"""How many other calls a ``write_conflict`` warning names before it says how many more."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """One group of conflicting writers.

    ``call`` is the last call of the group, in plan order, that conflicts with
    another; ``write`` is its write that overlaps a conflicting one; ``others`` are
    the other calls of the group that conflict with some call of it, in plan order.
    """

    call: int
    write: Write
    others: tuple[int, ...]


_T = TypeVar("_T")
_Trie = TrieNode[int]  # a node of a trie of write numbers
_Result = tuple[int, int, Conflict]  # (call, write number, the conflict): sorted by the first two


def _two(calls: tuple[int, ...], more: tuple[int, ...]) -> tuple[int, ...]:
    """Up to two distinct calls of ``calls`` then ``more``."""
    for call in more:
        if len(calls) == 2:
            break
        if call not in calls:
            calls = (*calls, call)
    return calls


class _Writes:
    """The ``set`` writes of the calls that can run, their tries of write numbers
    (one :class:`PathIndex` per instance) and their groups (overlapping writes, by
    union-find along the tries)."""

    def __init__(self, graph: PlanGraph) -> None:
        calls = graph.plan.calls
        never = graph.unreachable
        self.writes: list[Write] = [
            write
            for index in graph.orderable()
            if calls[index].output_method == "set" and index not in never
            for write in graph.writes[index]
        ]
        self.tries: dict[str | None, PathIndex[int]] = {}
        self.ends: list[_Trie] = []  # the node of each write
        self.matches: list[tuple[list[_Trie], list[_Trie]]] = []  # each write's matching
        self.groups: list[list[int]] = []  # write numbers, of groups of two calls or more

    def build(self) -> None:
        writes, tries = self.writes, self.tries
        for number, write in enumerate(writes):
            trie = tries.get(write.instance)
            if trie is None:
                trie = tries[write.instance] = PathIndex()
            self.ends.append(trie.add(write.key, number))
        self.matches = [tries[write.instance].matching(write.key) for write in writes]
        self.groups = self._overlapping_groups()

    def _overlapping_groups(self) -> list[list[int]]:
        """The writes joined with every write they overlap (union-find), as groups
        of write numbers; only the groups of two calls or more."""
        writes = self.writes
        parent = list(range(len(writes)))

        def find(item: int) -> int:
            while parent[item] != item:
                parent[item] = parent[parent[item]]
                item = parent[item]
            return item

        for number, (along, _) in enumerate(self.matches):
            for node in along:
                if node.items:
                    first, own = find(node.items[0]), find(number)
                    if first != own:
                        parent[own] = first
        by_root: dict[int, list[int]] = {}
        for number in range(len(writes)):
            by_root.setdefault(find(number), []).append(number)
        return [
            numbers
            for numbers in by_root.values()
            if len(numbers) > 1 and len({writes[n].call for n in numbers}) > 1
        ]

    def summed_up(
        self, at_node: dict[_Trie, _T], combine: Callable[[_T, _T], _T], empty: _T
    ) -> dict[_Trie, _T]:
        """Per trie node, ``combine`` of ``at_node``'s values of every node below it
        (the node itself excluded); nodes with nothing below are left out."""
        below: dict[_Trie, _T] = {}
        for trie in self.tries.values():
            for node in trie.bottom_up():
                total = empty
                for child in node.children.values():
                    total = combine(total, at_node.get(child, empty))
                    total = combine(total, below.get(child, empty))
                if total != empty:
                    below[node] = total
        return below


def _result(writes: list[Write], call: int, number: int, others: tuple[int, ...]) -> _Result:
    """The conflict of a group: on ``call``, at its write ``number``, with ``others``."""
    return call, number, Conflict(call, writes[number], others)


def find_conflicts(graph: PlanGraph) -> list[Conflict]:
    """Every group of conflicting writers of ``graph``'s plan, by ``call``, then by
    the place of ``write`` in that call's output path."""
    if not graph.index.has_overlaps():  # the common case: no two writes overlap at all
        return []
    found = _Writes(graph)
    if len(found.writes) < 2:
        return []
    found.build()
    if not found.groups:
        return []
    unordered = _unordered_groups(graph, found)
    plain = [numbers for g, numbers in enumerate(found.groups) if g in unordered]
    rest = [numbers for g, numbers in enumerate(found.groups) if g not in unordered]
    results = _plain_conflicts(found, plain)
    if rest:
        results += _bitset_conflicts(graph, found, rest)
    results.sort(key=lambda item: item[:2])  # keys alone may not compare: ("a",) vs (0,)
    return [conflict for _, _, conflict in results]


# -- groups whose calls neither wait for each other nor are exclusive -----------------
_MANY = -2  # more than one group among a call's ancestors


def _unordered_groups(graph: PlanGraph, found: _Writes) -> set[int]:
    """The groups no two calls of which are ordered (one reaching the other) or
    exclusive: in them, two calls conflict exactly when their writes overlap.

    One value per call, not one bit per member: the group of the group members
    among its ancestors (``-1`` for none, ``_MANY`` for several groups), from one
    pass over a topological order.  A group whose member has an ancestor from that
    group or from several is left to the bit sets, which are exact."""
    writes = found.writes
    group_of: dict[int, int] = {}  # call -> its group, or _MANY (its writes are in several)
    members: list[set[int]] = []
    for g, numbers in enumerate(found.groups):
        calls = {writes[n].call for n in numbers}
        members.append(calls)
        for call in calls:
            group_of[call] = g if group_of.get(call, g) == g else _MANY
    above: dict[int, int] = {}  # call -> the group among its ancestors, or _MANY
    predecessors = graph.predecessors
    for index in graph.orderable():
        mine = _group_above(predecessors[index], above, group_of)
        if mine != -1:
            above[index] = mine
    return {
        g
        for g, calls in enumerate(members)
        if all(above.get(call, -1) not in (g, _MANY) for call in calls)
        and not _any_exclusive(graph, calls)
    }


def _group_above(
    predecessors: tuple[int, ...], above: dict[int, int], group_of: dict[int, int]
) -> int:
    """The group of the group members among the ancestors of a call with these
    ``predecessors`` (``-1`` for none, ``_MANY`` for several groups)."""
    mine = -1
    for pred in predecessors:
        for seen in (above.get(pred, -1), group_of.get(pred, -1)):
            if seen == -1 or seen == mine:
                continue
            mine = seen if mine == -1 else _MANY
        if mine == _MANY:
            break
    return mine


def _any_exclusive(graph: PlanGraph, calls: set[int]) -> bool:
    """True when two of ``calls`` hold different alternatives of one producer."""
    held: dict[int, int] = {}
    for call in calls:
        for producer, alternative in graph.tags(call):
            if held.setdefault(producer, alternative) != alternative:
                return True
    return False


def _plain_conflicts(found: _Writes, groups: list[list[int]]) -> list[_Result]:
    """Conflicts of groups whose calls neither wait for each other nor are exclusive:
    a call conflicts when one of its writes overlaps another call's.  Each trie node
    keeps up to two calls (of its writes, and of those below it), so a write learns
    whether it overlaps another call's in the time of its own trie walk."""
    if not groups:
        return []
    writes = found.writes
    at_node: dict[_Trie, tuple[int, ...]] = {}
    for numbers in groups:
        for number in numbers:
            node = found.ends[number]
            at_node[node] = _two(at_node.get(node, ()), (writes[number].call,))
    below = found.summed_up(at_node, _two, ())
    results: list[_Result] = []
    for numbers in groups:
        clashing = _clashing(found, numbers, at_node, below)
        if clashing:
            last = max(clashing)
            others = tuple(sorted(c for c in clashing if c != last))
            results.append(_result(writes, last, clashing[last], others))
    return results


def _clashing(
    found: _Writes,
    numbers: list[int],
    at_node: dict[_Trie, tuple[int, ...]],
    below: dict[_Trie, tuple[int, ...]],
) -> dict[int, int]:
    """The calls of a plain group one of whose writes overlaps another call's: each
    with the first such write."""
    clashing: dict[int, int] = {}
    for number in numbers:
        call = found.writes[number].call
        if call in clashing:
            continue
        along, end = found.matches[number]
        if any(c != call for node in along for c in at_node.get(node, ())) or any(
            c != call for node in end for c in below.get(node, ())
        ):
            clashing[call] = number
    return clashing


# -- the other groups: one bit per member -------------------------------------------
def _bitset_conflicts(graph: PlanGraph, found: _Writes, groups: list[list[int]]) -> list[_Result]:
    """Conflicts of ``groups`` with bit sets (:class:`_BitSets`): exact for any group."""
    return _BitSets(graph, found, groups).conflicts()


class _BitSets:
    """Conflicts of ``groups`` with bit sets: one bit per (group, call), and per
    member the members it overlaps, is ordered with and is exclusive with.  Exact
    for any group; its sets take (members)² bits."""

    def __init__(self, graph: PlanGraph, found: _Writes, groups: list[list[int]]) -> None:
        self.graph, self.found, self.groups = graph, found, groups
        self.member_of: dict[int, int] = {}  # write number -> member
        self.member_call: list[int] = []
        for numbers in groups:
            mine: dict[int, int] = {}
            for number in numbers:
                call = found.writes[number].call
                if call not in mine:
                    mine[call] = len(self.member_call)
                    self.member_call.append(call)
                self.member_of[number] = mine[call]
        self.at_node: dict[_Trie, int] = {}  # members of the writes at each node
        for number, member in self.member_of.items():
            node = found.ends[number]
            self.at_node[node] = self.at_node.get(node, 0) | (1 << member)
        self.below = found.summed_up(self.at_node, int.__or__, 0)
        self.before, self.after = _ordered(graph, self.member_call)

    def conflicts(self) -> list[_Result]:
        results: list[_Result] = []
        for numbers in self.groups:
            found = self._group_conflict(numbers)
            if found is not None:
                results.append(found)
        return results

    def _group_conflict(self, numbers: list[int]) -> _Result | None:
        """The conflict of one group: on its last conflicting call in plan order, at
        that call's first write (in its output path's order) that conflicts."""
        write_bits = {number: self._overlapped(number) for number in numbers}
        overlap: dict[int, int] = {}  # member -> the members its writes overlap
        for number, bits in write_bits.items():
            member = self.member_of[number]
            overlap[member] = overlap.get(member, 0) | bits
        conflicts = self._unordered(overlap)
        if not conflicts:
            return None
        member_call = self.member_call
        last = max(conflicts, key=member_call.__getitem__)
        chosen = next(
            n for n in numbers if self.member_of[n] == last and write_bits[n] & conflicts[last]
        )
        others = tuple(sorted(member_call[m] for m in conflicts if m != last))
        return _result(self.found.writes, member_call[last], chosen, others)

    def _overlapped(self, number: int) -> int:
        """The members whose writes overlap write ``number``."""
        along, end = self.found.matches[number]
        bits = 0
        for matched in along:
            bits |= self.at_node.get(matched, 0)
        for matched in end:
            bits |= self.below.get(matched, 0)
        return bits

    def _unordered(self, overlap: dict[int, int]) -> dict[int, int]:
        """Per member of one group, the others it overlaps that it is neither ordered
        with nor exclusive with (members with none left out)."""
        exclusive = _exclusive(self.graph, overlap, self.member_call)
        conflicts: dict[int, int] = {}
        for member, bits in overlap.items():
            call = self.member_call[member]
            bits &= ~(1 << member)
            bits &= ~(self.before.get(call, 0) | self.after.get(call, 0) | exclusive.get(member, 0))
            if bits:
                conflicts[member] = bits
        return conflicts


def _ordered(graph: PlanGraph, member_call: list[int]) -> tuple[dict[int, int], dict[int, int]]:
    """Per call: the members it is reached from (``before``) and those it reaches
    (``after``), by two passes over a topological order."""
    call_bits: dict[int, int] = {}
    for member, call in enumerate(member_call):
        call_bits[call] = call_bits.get(call, 0) | (1 << member)
    runnable = graph.orderable()
    before = _carried(runnable, graph.predecessors, call_bits)  # predecessors first
    after = _carried(reversed(runnable), graph.successors, call_bits)
    return before, after


def _carried(
    order: Iterable[int], edges: list[tuple[int, ...]], call_bits: dict[int, int]
) -> dict[int, int]:
    """Per call, the bits of the calls behind it along ``edges`` (each call's
    neighbours that come earlier in ``order``), directly or not."""
    carried: dict[int, int] = {}
    for index in order:
        bits = 0
        for other in edges[index]:
            bits |= carried.get(other, 0) | call_bits.get(other, 0)
        if bits:
            carried[index] = bits
    return carried


def _exclusive(graph: PlanGraph, members: dict[int, int], member_call: list[int]) -> dict[int, int]:
    """Per member of one group: the members that hold another alternative of a call
    it holds an alternative of (so the two never both run)."""
    tags = {member: graph.tags(member_call[member]) for member in members}
    if not any(tags.values()):
        return {}
    holding: dict[int, int] = {}  # producer -> members holding any of its alternatives
    by_alternative: dict[tuple[int, int], int] = {}
    for member, held in tags.items():
        for producer, alternative in held:
            holding[producer] = holding.get(producer, 0) | (1 << member)
            key = (producer, alternative)
            by_alternative[key] = by_alternative.get(key, 0) | (1 << member)
    exclusive: dict[int, int] = {}
    for member, held in tags.items():
        bits = 0
        for producer, alternative in held:
            bits |= holding[producer] & ~by_alternative[(producer, alternative)]
        if bits:
            exclusive[member] = bits
    return exclusive


def report_conflicts(graph: PlanGraph, out: Collector) -> None:
    """One ``write_conflict`` warning per group of calls that ``set`` overlapping
    paths in one instance without waiting for each other (docs/diagnostics.md):
    on the group's last conflicting call, naming the others (the first five,
    then how many more)."""
    calls = graph.plan.calls
    for conflict in find_conflicts(graph):
        later = calls[conflict.call]
        write = conflict.write
        labels = [calls[other].label for other in conflict.others]
        if len(labels) == 1:
            message = (
                f"{write.reference} is also set by {labels[0]} and neither call waits "
                "for the other; this call's value wins, being later in the plan"
            )
        else:
            if len(labels) > _NAMED:
                named = ", ".join(labels[:_NAMED]) + f" and {len(labels) - _NAMED} more calls"
            else:
                named = ", ".join(labels[:-1]) + " and " + labels[-1]
            message = (
                f"{write.reference} is also set by {named}, and these calls do not all "
                "wait for each other; writes commit in plan order, so this call's value "
                "wins, being the last of them in the plan"
            )
        out.fail(
            "write_conflict",
            message,
            later,
            "_outputPath",
            write.reference.span,
            later.output_path,
            severity="warning",
        )
