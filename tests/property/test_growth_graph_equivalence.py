"""A graph whose calls share their predecessors' tuple has the same edges and order.

The graph shares one tuple of sources, one set of predecessors and one tuple of
successors among the calls that read the same path in one instance, and counts
Kahn's order down once per group of calls sharing their predecessors
(obelisk/interpreter/analysis/graph.py).  Each is compared with the plain
construction: the sources a read's overlapping writes give, the successors built
edge by edge, and Kahn's algorithm counting down every edge.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan

TARGETS = ["†state.items.a", "†state.items.b", "†state.items[0]", "†state.x", "†state.y"]
READS = ["†state.items[*]", "†state.items[*]", "†state.items[-1]", "†state.x", "†state.y.z"]


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    size = draw(st.integers(min_value=1, max_value=12))
    for _ in range(size):
        call: dict[str, Any] = {"_tool": "t", "_outputPath": draw(st.sampled_from(TARGETS))}
        for n, read in enumerate(draw(st.lists(st.sampled_from(READS), max_size=2))):
            call[f"r{n}"] = read
        if draw(st.integers(0, 3)) == 0:
            call["_instance"] = draw(st.sampled_from(["i", "j"]))
        if draw(st.integers(0, 4)) == 0:
            call["_after"] = [draw(st.integers(0, size - 1))]
        calls.append(call)
    return calls


def kahn(successors: list[tuple[int, ...]], predecessors: list[tuple[int, ...]]) -> list[int]:
    waiting = [len(p) for p in predecessors]
    queue = deque(n for n in range(len(predecessors)) if waiting[n] == 0)
    order = []
    while queue:
        node = queue.popleft()
        order.append(node)
        for child in successors[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                queue.append(child)
    return order


@given(plans())
def test_shared_edges_and_order_equal_the_plain_construction(raw: list[dict[str, Any]]) -> None:
    graph = PlanGraph(parse_plan(raw))
    calls = graph.plan.calls
    for node, reads in enumerate(graph.reads):
        for read, sources in zip(reads, graph.sources[node], strict=True):
            expected = [
                w
                for w in graph.index.overlapping(read.key)
                if w.call != node and (w.instance is None or w.instance == calls[node].instance)
            ]
            assert list(sources) == expected
        feeding = {w.call for sources in graph.sources[node] for w in sources}
        feeding |= {before for before, after in graph.order_edges if after == node}
        assert set(graph.predecessors[node]) == feeding
    successors: list[list[int]] = [[] for _ in calls]
    for node, preds in enumerate(graph.predecessors):
        assert list(preds) == sorted(set(preds))
        for pred in preds:
            successors[pred].append(node)
    assert graph.successors == [tuple(s) for s in successors]
    assert graph.orderable() == kahn(graph.successors, graph.predecessors)
    assert graph.edges == sorted((p, n) for n, ps in enumerate(graph.predecessors) for p in ps)
