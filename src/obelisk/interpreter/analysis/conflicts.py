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

from dataclasses import dataclass

from obelisk.diagnostics import Collector
from obelisk.grammar import ANY_INDEX
from obelisk.interpreter.analysis.graph import PlanGraph, Write

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


class _Node:
    __slots__ = ("below", "below_calls", "bits", "calls", "children", "items")

    def __init__(self) -> None:
        self.children: dict[object, _Node] = {}
        self.items: list[int] = []  # write numbers
        self.bits = 0  # members of the writes at this node (groups searched with bit sets)
        self.below = 0  # members of the writes in the subtree, this node excluded
        self.calls: tuple[int, ...] = ()  # up to two calls of grouped writes at this node
        self.below_calls: tuple[int, ...] = ()  # the same for the subtree, this node excluded


def _matching(root: _Node, key: tuple[object, ...]) -> tuple[list[_Node], list[_Node]]:
    """The trie nodes on the paths ``key`` overlaps by prefix, and those at its end.

    A negative index (``ANY_INDEX``) matches every index, and an index matches a
    stored negative index, as in :class:`~obelisk.interpreter.analysis.path_index.PathIndex`.
    """
    along: list[_Node] = []
    frontier = [root]
    for part in key:
        following: list[_Node] = []
        for node in frontier:
            children = node.children
            if not children:
                continue
            if part is ANY_INDEX:
                following.extend(c for k, c in children.items() if not isinstance(k, str))
                continue
            child = children.get(part)
            if child is not None:
                following.append(child)
            if isinstance(part, int):
                unknown = children.get(ANY_INDEX)
                if unknown is not None:
                    following.append(unknown)
        frontier = following
        along.extend(following)
    return along, frontier


def _bottom_up(root: _Node) -> list[_Node]:
    """Every node of the trie, children before their parents."""
    order: list[_Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children.values())
    order.reverse()
    return order


def _two(calls: tuple[int, ...], more: tuple[int, ...]) -> tuple[int, ...]:
    """Up to two distinct calls of ``calls`` then ``more``."""
    for call in more:
        if len(calls) == 2:
            break
        if call not in calls:
            calls = (*calls, call)
    return calls


class _Writes:
    """The ``set`` writes of the calls that can run, their tries (one per instance)
    and their groups (overlapping writes, by union-find along the tries)."""

    def __init__(self, graph: PlanGraph) -> None:
        calls = graph.plan.calls
        never = graph.unreachable
        self.writes: list[Write] = [
            write
            for index in graph.orderable()
            if calls[index].output_method == "set" and index not in never
            for write in graph.writes[index]
        ]
        self.tries: dict[str | None, _Node] = {}
        self.ends: list[_Node] = []  # the node of each write
        self.matches: list[tuple[list[_Node], list[_Node]]] = []  # each write's _matching
        self.groups: list[list[int]] = []  # write numbers, of groups of two calls or more

    def build(self) -> None:
        writes, tries = self.writes, self.tries
        for number, write in enumerate(writes):
            node = tries.get(write.instance)
            if node is None:
                node = tries[write.instance] = _Node()
            for part in write.key:
                child = node.children.get(part)
                if child is None:
                    child = node.children[part] = _Node()
                node = child
            node.items.append(number)
            self.ends.append(node)
        parent = list(range(len(writes)))

        def find(item: int) -> int:
            while parent[item] != item:
                parent[item] = parent[parent[item]]
                item = parent[item]
            return item

        for number, write in enumerate(writes):
            along, end = _matching(tries[write.instance], write.key)
            self.matches.append((along, end))
            for node in along:
                if node.items:
                    first, own = find(node.items[0]), find(number)
                    if first != own:
                        parent[own] = first
        by_root: dict[int, list[int]] = {}
        for number in range(len(writes)):
            by_root.setdefault(find(number), []).append(number)
        self.groups = [
            numbers
            for numbers in by_root.values()
            if len(numbers) > 1 and len({writes[n].call for n in numbers}) > 1
        ]


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
    plain = [g for g, numbers in enumerate(found.groups) if g in unordered]
    rest = [numbers for g, numbers in enumerate(found.groups) if g not in unordered]
    results = _plain_conflicts(found, [found.groups[g] for g in plain])
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
        mine = -1
        for pred in predecessors[index]:
            for seen in (above.get(pred, -1), group_of.get(pred, -1)):
                if seen == -1 or seen == mine:
                    continue
                mine = seen if mine == -1 else _MANY
            if mine == _MANY:
                break
        if mine != -1:
            above[index] = mine
    unordered: set[int] = set()
    for g, calls in enumerate(members):
        if all(above.get(call, -1) not in (g, _MANY) for call in calls) and not _any_exclusive(
            graph, calls
        ):
            unordered.add(g)
    return unordered


def _any_exclusive(graph: PlanGraph, calls: set[int]) -> bool:
    """True when two of ``calls`` hold different alternatives of one producer."""
    held: dict[int, int] = {}
    for call in calls:
        for producer, alternative in graph.tags(call):
            if held.setdefault(producer, alternative) != alternative:
                return True
    return False


def _plain_conflicts(found: _Writes, groups: list[list[int]]) -> list[tuple[int, int, Conflict]]:
    """Conflicts of groups whose calls neither wait for each other nor are exclusive:
    a call conflicts when one of its writes overlaps another call's.  Each trie node
    keeps up to two calls (of its writes, and of those below it), so a write learns
    whether it overlaps another call's in the time of its own trie walk."""
    if not groups:
        return []
    writes, ends = found.writes, found.ends
    for numbers in groups:
        for number in numbers:
            node = ends[number]
            node.calls = _two(node.calls, (writes[number].call,))
    for root in found.tries.values():
        for node in _bottom_up(root):
            below: tuple[int, ...] = ()
            for child in node.children.values():
                below = _two(_two(below, child.calls), child.below_calls)
            node.below_calls = below
    results: list[tuple[int, int, Conflict]] = []
    for numbers in groups:
        clashing: dict[int, int] = {}  # call -> its first write that overlaps another call's
        for number in numbers:
            call = writes[number].call
            if call in clashing:
                continue
            along, end = found.matches[number]
            if any(c != call for node in along for c in node.calls) or any(
                c != call for node in end for c in node.below_calls
            ):
                clashing[call] = number
        if not clashing:
            continue
        last = max(clashing)
        chosen = clashing[last]
        others = tuple(sorted(c for c in clashing if c != last))
        results.append((last, chosen, Conflict(last, writes[chosen], others)))
    return results


# -- the other groups: one bit per member -------------------------------------------
def _bitset_conflicts(
    graph: PlanGraph, found: _Writes, groups: list[list[int]]
) -> list[tuple[int, int, Conflict]]:
    """Conflicts of ``groups`` with bit sets: one bit per (group, call), and per
    member the members it overlaps, is ordered with and is exclusive with.  Exact
    for any group; its sets take (members)² bits."""
    writes = found.writes
    member_of: dict[int, int] = {}  # write number -> member
    member_call: list[int] = []
    for numbers in groups:
        mine: dict[int, int] = {}
        for number in numbers:
            call = writes[number].call
            if call not in mine:
                mine[call] = len(member_call)
                member_call.append(call)
            member_of[number] = mine[call]
    for number, member in member_of.items():
        found.ends[number].bits |= 1 << member
    for root in found.tries.values():
        for node in _bottom_up(root):
            below = 0
            for child in node.children.values():
                below |= child.bits | child.below
            node.below = below
    before, after = _ordered(graph, member_call)
    results: list[tuple[int, int, Conflict]] = []
    for numbers in groups:
        overlap: dict[int, int] = {}
        write_bits: dict[int, int] = {}
        for number in numbers:
            along, end = found.matches[number]
            bits = 0
            for matched in along:
                bits |= matched.bits
            for matched in end:
                bits |= matched.below
            write_bits[number] = bits
            member = member_of[number]
            overlap[member] = overlap.get(member, 0) | bits
        exclusive = _exclusive(graph, overlap, member_call)
        conflicts: dict[int, int] = {}
        for member, bits in overlap.items():
            call = member_call[member]
            bits &= ~(1 << member)
            bits &= ~(before.get(call, 0) | after.get(call, 0) | exclusive.get(member, 0))
            if bits:
                conflicts[member] = bits
        if not conflicts:
            continue
        last = max(conflicts, key=member_call.__getitem__)
        chosen = next(
            n for n in numbers if member_of[n] == last and write_bits[n] & conflicts[last]
        )
        others = tuple(sorted(member_call[m] for m in conflicts if m != last))
        # a call's writes are numbered in the order of its output path
        results.append(
            (member_call[last], chosen, Conflict(member_call[last], writes[chosen], others))
        )
    return results


def _ordered(graph: PlanGraph, member_call: list[int]) -> tuple[dict[int, int], dict[int, int]]:
    """Per call: the members it is reached from (``before``) and those it reaches
    (``after``), by two passes over a topological order."""
    call_bits: dict[int, int] = {}
    for member, call in enumerate(member_call):
        call_bits[call] = call_bits.get(call, 0) | (1 << member)
    runnable = graph.orderable()
    before: dict[int, int] = {}
    for index in runnable:  # a topological order: predecessors first
        bits = 0
        for pred in graph.predecessors[index]:
            bits |= before.get(pred, 0) | call_bits.get(pred, 0)
        if bits:
            before[index] = bits
    after: dict[int, int] = {}
    for index in reversed(runnable):
        bits = 0
        for succ in graph.successors[index]:
            bits |= after.get(succ, 0) | call_bits.get(succ, 0)
        if bits:
            after[index] = bits
    return before, after


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
