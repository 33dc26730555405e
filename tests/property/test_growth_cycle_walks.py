"""The walk a ``dependency_cycle`` names is the one the detour-by-detour search gives.

``PlanGraph._walk_cycle`` finds, for each call the walk misses, the place of the walk
where the detour through it is shortest from two breadth-first searches that stop
once they have met every call of the walk (obelisk/interpreter/analysis/graph.py).
The oracle is the former search: a shortest path there and back from every place of
the walk, the first shortest detour winning.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan

PATHS = ["†state.a", "†state.b", "†state.c", "†state.d", "†state.e"]


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(min_value=2, max_value=14))):
        call: dict[str, Any] = {"_tool": "t", "_outputPath": draw(st.sampled_from(PATHS))}
        for n, read in enumerate(draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=3))):
            call[f"r{n}"] = read
        calls.append(call)
    return calls


def former_walk(graph: PlanGraph, component: list[int]) -> list[int]:
    members = set(component)
    start = component[0]
    walk = graph._path_within(start, start, members)
    for member in component:
        if member in walk:
            continue
        best: list[int] | None = None
        best_at = 0
        for position, node in enumerate(walk[:-1]):
            detour = graph._path_within(node, member, members)
            detour += graph._path_within(member, node, members)[1:]
            if best is None or len(detour) < len(best):
                best, best_at = detour, position
        assert best is not None
        walk = walk[:best_at] + best + walk[best_at + 1 :]
    return walk


@given(plans())
def test_cycle_walks_equal_the_former_search(raw: list[dict[str, Any]]) -> None:
    graph = PlanGraph(parse_plan(raw))
    expected = [former_walk(graph, component) for component in graph._components()]
    assert graph.cycles == (expected if len(graph.orderable()) < graph.size else [])
