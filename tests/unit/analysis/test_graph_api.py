"""The public scheduling API of ``PlanGraph`` (docs/semantics.md, "Scheduling a plan by hand").

``topological_order()``, ``ready(settled)`` and ``is_complete(settled)`` on the graph
``obelisk.check`` returns: examples, a cycle as an error carrying its walks, and two
properties: the order agrees with networkx on random acyclic graphs (waves of
``topological_generations``, plan order inside a wave), and the hand-scheduling loop
visits every call once, each after the calls it depends on.
"""

from __future__ import annotations

import graphlib
import itertools
import pickle
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import obelisk

Edges = frozenset[tuple[int, int]]


def graph_plan(n: int, edges: Edges) -> list[dict[str, Any]]:
    """Call i writes †state.n<i> and reads †state.n<j> for each edge j -> i."""
    return [
        {
            "_tool": "node",
            "_outputPath": f"†state.n{i}",
            **{f"r{j}": f"†state.n{j}" for j in sorted(j for j, k in edges if k == i)},
        }
        for i in range(n)
    ]


def graph_of(n: int, edges: Edges) -> obelisk.PlanGraph:
    graph = obelisk.check(graph_plan(n, edges)).graph
    assert graph is not None
    assert set(graph.edges) == set(edges)
    return graph


@st.composite
def dags(draw: st.DrawFn) -> tuple[int, Edges]:
    """``(n, edges)``: an acyclic graph on n <= 12 calls; its edges point both ways
    in plan order (a random ranking of the calls decides which way)."""
    n = draw(st.integers(min_value=0, max_value=12))
    rank = draw(st.permutations(range(n)))
    pairs = [(a, b) for a, b in itertools.permutations(range(n), 2) if rank[a] < rank[b]]
    return n, frozenset(draw(st.sets(st.sampled_from(pairs)))) if pairs else frozenset()


@st.composite
def digraphs(draw: st.DrawFn) -> tuple[int, Edges]:
    """``(n, edges)``: any graph on n <= 10 calls without self-loops (cycles allowed)."""
    n = draw(st.integers(min_value=1, max_value=10))
    pairs = list(itertools.permutations(range(n), 2))
    return n, frozenset(draw(st.sets(st.sampled_from(pairs)))) if pairs else frozenset()


def nx_graph(n: int, edges: Edges) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def schedule_by_hand(graph: obelisk.PlanGraph) -> list[int]:
    """The loop of docs/semantics.md: start what is ready, settle it, until complete."""
    visited: list[int] = []
    settled: set[int] = set()
    while not graph.is_complete(settled):
        ready = graph.ready(settled)
        if not ready:
            break  # the rest is in or behind a cycle
        for call in ready:
            visited.append(call)
            settled.add(call)
    return visited


# -- examples ---------------------------------------------------------------------------


def test_topological_order_takes_waves_in_plan_order() -> None:
    # 3 reads 0 and 2; 2 reads 1; 0 reads 1: waves {1}, {0, 2}, {3}
    graph = graph_of(4, frozenset({(1, 0), (1, 2), (0, 3), (2, 3)}))
    assert graph.topological_order() == [1, 0, 2, 3]
    assert graph_of(2, frozenset({(1, 0)})).topological_order() == [1, 0]
    assert graph_of(4, frozenset({(0, 2), (1, 2), (2, 3)})).topological_order() == [0, 1, 2, 3]


def test_ready_gives_what_may_start_now_in_plan_order() -> None:
    graph = graph_of(3, frozenset({(0, 2), (1, 2)}))
    assert graph.ready(set()) == [0, 1]
    assert graph.ready({0}) == [1]
    assert graph.ready([1, 0]) == [2]  # any collection of indexes
    assert graph.ready({0, 1, 2}) == []
    assert not graph.is_complete({0, 1})
    assert graph.is_complete((0, 1, 2))


def test_an_empty_plan_is_complete_at_once() -> None:
    graph = obelisk.check([]).graph
    assert graph is not None
    assert graph.topological_order() == []
    assert graph.ready(set()) == []
    assert graph.is_complete(set())


def test_the_graph_of_a_checked_plan_with_tools_orders_its_calls() -> None:
    @obelisk.tool
    def fetch(key: str) -> str:
        """Fetch a value."""
        return key

    plan = [
        {"_tool": "fetch", "key": "†state.a", "_outputPath": "†state.b"},
        {"_tool": "fetch", "key": "x", "_outputPath": "†state.a"},
    ]
    result = obelisk.check(plan, [fetch])
    assert result.ok and result.graph is not None
    assert result.graph.topological_order() == [1, 0]
    assert result.graph.ready(set()) == [1]


def test_a_cycle_has_no_order_and_the_error_carries_it() -> None:
    # 0 and 1 read each other; 2 reads 1 (behind the cycle); 3 is free
    graph = graph_of(4, frozenset({(0, 1), (1, 0), (1, 2)}))
    with pytest.raises(obelisk.DependencyCycleError) as caught:
        graph.topological_order()
    error = caught.value
    assert isinstance(error, graphlib.CycleError)
    assert isinstance(error, obelisk.ObeliskError)
    assert isinstance(error, ValueError)
    assert error.code == "dependency_cycle"
    assert error.cycles == ((0, 1, 0),)
    assert [list(walk) for walk in error.cycles] == graph.cycles
    assert error.args[1] == [0, 1, 0]  # graphlib's convention: the cycle is args[1]
    assert str(error) == (
        "the plan's calls depend on each other in a cycle:\n  #0 node -> #1 node -> #0 node"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is obelisk.DependencyCycleError
    assert (copy.cycles, str(copy), copy.args) == (error.cycles, str(error), error.args)
    # the calls outside the cycle can still be scheduled by hand
    assert graph.ready(set()) == [3]
    assert schedule_by_hand(graph) == [3]
    assert not graph.is_complete({3})


def test_check_reports_the_cycle_the_error_names() -> None:
    result = obelisk.check(graph_plan(2, frozenset({(0, 1), (1, 0)})))
    assert [d.code for d in result.errors] == ["dependency_cycle"]
    assert result.graph is not None
    with pytest.raises(graphlib.CycleError):
        result.graph.topological_order()


# -- properties -------------------------------------------------------------------------


@given(dags())
def test_topological_order_agrees_with_networkx(graph: tuple[int, Edges]) -> None:
    n, edges = graph
    plan_graph = graph_of(n, edges)
    order = plan_graph.topological_order()
    reference = nx_graph(n, edges)
    assert order == [
        call for wave in nx.topological_generations(reference) for call in sorted(wave)
    ]
    assert sorted(order) == list(range(n))
    position = {call: at for at, call in enumerate(order)}
    assert all(position[a] < position[b] for a, b in edges)
    assert plan_graph.topological_order() == order  # deterministic


@given(digraphs())
def test_scheduling_by_hand_visits_every_call_once_dependencies_first(
    graph: tuple[int, Edges],
) -> None:
    n, edges = graph
    plan_graph = graph_of(n, edges)
    visited = schedule_by_hand(plan_graph)
    assert len(visited) == len(set(visited))
    position = {call: at for at, call in enumerate(visited)}
    for a, b in edges:
        if b in position:
            assert a in position and position[a] < position[b]
    reference = nx_graph(n, edges)
    if nx.is_directed_acyclic_graph(reference):
        assert sorted(visited) == list(range(n))
        assert plan_graph.is_complete(visited)
    else:
        # exactly the calls neither in nor behind a cycle
        stuck = {node for walk in plan_graph.cycles for node in walk}
        stuck |= {d for node in set(stuck) for d in nx.descendants(reference, node)}
        assert set(visited) == set(range(n)) - stuck
        assert not plan_graph.is_complete(visited)
        with pytest.raises(obelisk.DependencyCycleError):
            plan_graph.topological_order()
