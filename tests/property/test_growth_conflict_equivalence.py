"""The near-linear ``write_conflict`` search gives exactly the bit-set search's answer.

``find_conflicts`` takes a group whose calls neither wait for each other nor are
exclusive through per-node summaries (two calls per trie node), and leaves every
other group to the bit sets (obelisk/interpreter/analysis/conflicts.py).  The
oracle runs the bit sets on every group, which is the search as it was before:
same groups, same ``call``, same ``write``, same ``others``, in the same order.
The plans mix unordered writers, writers ordered by reads and ``_after``, paths
nested in each other, negative indexes, alternatives read by later calls (so some
calls are exclusive) and instances.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.conflicts import (
    _bitset_conflicts,
    _Writes,
    find_conflicts,
)
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan

TARGETS = [
    "†state.a",
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
    "†state.e || †state.f",
    "†state.items.x || †state.items[0]",
]
READS = ["†state.a.b", "†state.b.x", "†state.c", "†state.e", "†state.f", "†state.items[0]"]


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    size = draw(st.integers(min_value=2, max_value=12))
    for index in range(size):
        call: dict[str, Any] = {"_tool": "t", "_outputPath": draw(st.sampled_from(TARGETS))}
        for n, read in enumerate(draw(st.lists(st.sampled_from(READS), max_size=2))):
            call[f"r{n}"] = read
        if draw(st.integers(0, 5)) == 0:
            call["_outputMethod"] = "push"
        if draw(st.integers(0, 4)) == 0:
            call["_instance"] = "i"
        if index and draw(st.integers(0, 3)) == 0:
            call["_after"] = [draw(st.integers(0, index - 1))]
        calls.append(call)
    return calls


def bit_sets(graph: PlanGraph) -> list[tuple[int, object, tuple[int, ...]]]:
    found = _Writes(graph)
    if len(found.writes) < 2:
        return []
    found.build()
    results = _bitset_conflicts(graph, found, found.groups) if found.groups else []
    results.sort(key=lambda item: item[:2])
    return [(c.call, c.write, c.others) for _, _, c in results]


@given(plans())
def test_find_conflicts_equals_the_bit_sets_on_every_group(raw: list[dict[str, Any]]) -> None:
    graph = PlanGraph(parse_plan(raw))
    found = [(c.call, c.write, c.others) for c in find_conflicts(graph)]
    if not graph.index.has_overlaps():
        assert found == []
        return
    assert found == bit_sets(graph)
