"""write_conflict groups agree with a brute-force oracle that compares every pair.

The checker finds conflicts with bit sets, once per group of overlapping writers
(obelisk/interpreter/analysis/conflicts.py).  The oracle is the former pairwise
search: two calls that can run (not in a cycle, not unreachable) and ``set``
overlapping paths in one instance, neither reaching the other and not exclusive,
conflict.  The calls a check names (the
warned call plus the ones it lists) are exactly the calls of some conflicting
pair, and there is one warning per group of overlapping writes holding a pair.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.conflicts import find_conflicts
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan

TARGETS = [
    "†state.a",
    "†state.a.b",
    "†state.a.c",
    "†state.b",
    "†state.items[0]",
    "†state.items[-1]",
    "†state.items[1].x",
    "†state.a || †state.b",
    "†state.a.b && †state.c",
    "†state.c || †state.d",
    "†state.items.x || †state.items[0]",  # a name and an index under one parent
]
READS = ["†state.a", "†state.b.x", "†state.c", "†state.d", "†state.items[0]", "†input.q"]


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(min_value=2, max_value=9))):
        call: dict[str, Any] = {"_tool": "t", "_outputPath": draw(st.sampled_from(TARGETS))}
        for n, read in enumerate(draw(st.lists(st.sampled_from(READS), max_size=2))):
            call[f"r{n}"] = read
        if draw(st.booleans()):
            call["_outputMethod"] = draw(st.sampled_from(["set", "push"]))
        if draw(st.integers(0, 4)) == 0:
            call["_instance"] = "i"
        calls.append(call)
    return calls


def oracle(graph: PlanGraph) -> tuple[set[int], int]:
    """(calls in a conflicting pair, groups of overlapping writes holding a pair)."""
    calls = graph.plan.calls
    runnable = set(graph.orderable()) - set(graph.unreachable)
    writes = [
        w for i in sorted(runnable) if calls[i].output_method == "set" for w in graph.writes[i]
    ]
    parent = list(range(len(writes)))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    overlapping = {id(w): {id(o) for o in graph.index.overlapping_writes(w)} for w in writes}
    pairs: list[tuple[int, int, int]] = []  # (write a, write b, ...) as positions
    for a, first in enumerate(writes):
        for b, second in enumerate(writes):
            if b <= a or first.instance != second.instance:
                continue
            if id(second) not in overlapping[id(first)]:
                continue
            parent[find(b)] = find(a)
            x, y = first.call, second.call
            if (
                x != y
                and not graph.exclusive(x, y)
                and not graph.reaches(x, y)
                and not graph.reaches(y, x)
            ):
                pairs.append((a, x, y))
    involved = {call for _, x, y in pairs for call in (x, y)}
    groups = {find(a) for a, _, _ in pairs}
    return involved, len(groups)


@given(plans())
def test_conflict_groups_agree_with_the_pairwise_oracle(raw: list[dict[str, Any]]) -> None:
    graph = PlanGraph(parse_plan(raw))
    found = find_conflicts(graph)
    involved, groups = oracle(graph)
    named = {call for conflict in found for call in (conflict.call, *conflict.others)}
    assert named == involved
    assert len(found) == groups
    for conflict in found:
        assert all(other < conflict.call for other in conflict.others)
        assert conflict.write.call == conflict.call
