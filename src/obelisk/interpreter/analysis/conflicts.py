"""Write conflicts: calls that ``set`` overlapping paths without waiting for each other.

Found once per *group* of writers, in about linear time (docs/diagnostics.md,
``write_conflict``).  A group is a set of ``set`` writes in one instance layer that
overlap each other, directly or through other writes of the group (``†state.user``
joins ``†state.user.age`` and ``†state.user.name``).  Two calls of a group conflict
when some of their writes overlap, neither depends on the other (directly or not),
and they do not hold different alternatives of one call.

Comparing every pair of writers would be quadratic: 5,000 calls writing one path
make 12.5 million pairs.  Instead each group member (a call in a group) is one bit,
and three bit sets are built per member: the members it overlaps (from a trie of the
written paths), the members it is ordered with (two passes over a topological order
of the graph), and the members it is exclusive with (from the alternatives each call
depends on).  Conflicts are the overlapping bits that are neither ordered nor
exclusive.  Calls that can never run (in or behind a dependency cycle, or
``unreachable_call``) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from obelisk.grammar import ANY_INDEX
from obelisk.interpreter.analysis.graph import PlanGraph, Write
from obelisk.interpreter.plan.call import Collector

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
    __slots__ = ("below", "bits", "children", "items")

    def __init__(self) -> None:
        self.children: dict[object, _Node] = {}
        self.items: list[int] = []  # write numbers
        self.bits = 0  # members of the writes at this node
        self.below = 0  # members of the writes in the subtree, this node excluded


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


def _fill_below(root: _Node) -> None:
    """Set ``below`` of every node: the member bits of its whole subtree."""
    order: list[_Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children.values())
    for node in reversed(order):  # children before parents
        below = 0
        for child in node.children.values():
            below |= child.bits | child.below
        node.below = below


def find_conflicts(graph: PlanGraph) -> list[Conflict]:
    """Every group of conflicting writers of ``graph``'s plan, by ``call``, then by
    the place of ``write`` in that call's output path."""
    if not graph.index.has_overlaps():  # the common case: no two writes overlap at all
        return []
    calls = graph.plan.calls
    runnable = graph.orderable()
    never = graph.unreachable
    writes: list[Write] = [
        write
        for index in runnable
        if calls[index].output_method == "set" and index not in never
        for write in graph.writes[index]
    ]
    if len(writes) < 2:
        return []

    # 1. one trie per instance; groups by union-find along overlapping prefixes
    parent = list(range(len(writes)))

    def find(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    tries: dict[str | None, _Node] = {}
    ends: list[_Node] = []
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
        ends.append(node)
    matches: list[tuple[list[_Node], list[_Node]]] = []
    for number, write in enumerate(writes):
        along, end = _matching(tries[write.instance], write.key)
        matches.append((along, end))
        for node in along:
            if node.items:
                first, own = find(node.items[0]), find(number)
                if first != own:
                    parent[own] = first
    by_root: dict[int, list[int]] = {}
    for number in range(len(writes)):
        by_root.setdefault(find(number), []).append(number)
    groups = [
        numbers
        for numbers in by_root.values()
        if len(numbers) > 1 and len({writes[n].call for n in numbers}) > 1
    ]
    if not groups:
        return []

    # 2. members: one bit per (group, call)
    member_of = [-1] * len(writes)
    member_call: list[int] = []
    for numbers in groups:
        mine: dict[int, int] = {}
        for number in numbers:
            call = writes[number].call
            if call not in mine:
                mine[call] = len(member_call)
                member_call.append(call)
            member_of[number] = mine[call]
    for number, node in enumerate(ends):
        if member_of[number] >= 0:
            node.bits |= 1 << member_of[number]
    for root in tries.values():
        _fill_below(root)
    call_bits: dict[int, int] = {}
    for member, call in enumerate(member_call):
        call_bits[call] = call_bits.get(call, 0) | (1 << member)

    # 3. ordered: members each call reaches, or is reached from
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

    found: list[tuple[int, int, Conflict]] = []
    for numbers in groups:
        overlap: dict[int, int] = {}
        write_bits: dict[int, int] = {}
        for number in numbers:
            along, end = matches[number]
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
        found.append(
            (member_call[last], chosen, Conflict(member_call[last], writes[chosen], others))
        )
    found.sort(key=lambda item: item[:2])  # keys alone may not compare: ("a",) vs (0,)
    return [conflict for _, _, conflict in found]


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
