"""Unit tests for the dependency analysis: PathIndex (paths_index.py) and PlanGraph (graph.py).

docs/semantics.md: call B depends on call A when a path B reads overlaps a path A may
write (any alternative or fan-out target); two paths overlap when one is a prefix
of the other; ``[*]`` overlaps every index.  §1.4: a write under ``_instance: "a"``
is visible to instance ``a`` only, a write with no instance to every call.
"""

from __future__ import annotations

from typing import Any

import pytest

from obelisk.grammar import ANY_INDEX, WILDCARD, Field, Index, parse_reference
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.path_index import PathIndex
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime.commit_order import commit_ranks


def graph(*calls: dict[str, Any], exists: Any = None) -> PlanGraph:
    """A PlanGraph of calls given as dicts; a call without ``_tool`` is named ``t<i>``."""
    plan = parse_plan([{"_tool": f"t{i}", **call} for i, call in enumerate(calls)])
    return PlanGraph(plan, exists)


def node(index: int, *reads: int) -> dict[str, Any]:
    """Call ``index`` writes †state.n<index> and reads †state.n<j> for each j."""
    return {"_outputPath": f"†state.n{index}", **{f"r{j}": f"†state.n{j}" for j in reads}}


# -- PathIndex -----------------------------------------------------------------


def overlapping(index: PathIndex[str], *key: object) -> list[str]:
    return sorted(index.overlapping(key))


def test_reference_key_maps_fields_indices_and_unknown_positions() -> None:
    ref = parse_reference('†state.a[0].b[-1][*]["x y"].3')
    assert ref.key == ("state", "a", 0, "b", ANY_INDEX, WILDCARD, "x y", 3)
    assert parse_reference("†data").key == ("data",)
    assert repr(ANY_INDEX) == "ANY_INDEX"
    assert repr(WILDCARD) == "WILDCARD"


def test_prefix_overlaps_both_ways() -> None:
    index: PathIndex[str] = PathIndex()
    index.add(("state", "user"), "user")
    index.add(("state", "user", "name", "first"), "first")
    # a read below a write sees the write; a read above a write sees it too
    assert overlapping(index, "state", "user", "name") == ["first", "user"]
    assert overlapping(index, "state", "user", "email") == ["user"]
    assert overlapping(index, "state", "user", "name", "first", "x") == ["first", "user"]
    assert overlapping(index, "state") == ["first", "user"]
    # the same path
    assert overlapping(index, "state", "user") == ["first", "user"]


@pytest.mark.parametrize(
    ("keys", "overlaps"),
    [
        ([], False),
        ([("state", "a"), ("state", "b"), ("data", "a")], False),
        ([("state", "a"), ("state", "a")], True),  # one key twice
        ([("state", "a"), ("state", "a", "b")], True),  # a prefix, added first
        ([("state", "a", "b"), ("state", "a")], True),  # a prefix, added last
        ([("state", "a", "b"), ("state", "a", "c"), ("state", "x")], False),
        ([("state", "a", ANY_INDEX)], True),
        ([("state", WILDCARD, "b")], True),
    ],
)
def test_has_overlaps(keys: list[tuple[object, ...]], overlaps: bool) -> None:
    index: PathIndex[int] = PathIndex()
    for number, key in enumerate(keys):
        index.add(key, number)
    assert index.has_overlaps() is overlaps


def test_siblings_and_other_kinds_do_not_overlap() -> None:
    index: PathIndex[str] = PathIndex()
    index.add(("state", "a", "x"), "ax")
    index.add(("state", "a", 0), "a0")
    index.add(("data", "a"), "data")
    assert overlapping(index, "state", "b") == []
    assert overlapping(index, "state", "a", "y") == []
    assert overlapping(index, "state", "a", 1) == []
    assert overlapping(index, "input", "a") == []
    assert overlapping(index, "data", "b") == []
    assert overlapping(index, "data", "a", "deep") == ["data"]


def test_wildcard_query_overlaps_every_index_and_key() -> None:
    index: PathIndex[str] = PathIndex()
    index.add(("state", "rows", 0, "id"), "row0.id")
    index.add(("state", "rows", 7), "row7")
    index.add(("state", "rows", "meta"), "meta")
    index.add(("state", "rows", 1, "other"), "row1.other")
    index.add(("state", "rows", ANY_INDEX), "last")
    index.add(("state", "other"), "other")
    everything = ["last", "meta", "row0.id", "row1.other", "row7"]
    assert overlapping(index, "state", "rows", WILDCARD) == everything
    # below the wildcard the rest of the path must still overlap; the wildcard may
    # stand for the key "meta" too, so the whole of †state.rows.meta overlaps
    assert overlapping(index, "state", "rows", WILDCARD, "id") == [
        "last",
        "meta",
        "row0.id",
        "row7",
    ]
    assert overlapping(index, "state", "rows", WILDCARD, "name") == ["last", "meta", "row7"]


def test_negative_index_write_overlaps_any_index_read_but_no_key() -> None:
    index: PathIndex[str] = PathIndex()
    index.add(parse_reference("†state.log[-1]").key, "append")
    assert overlapping(index, "state", "log", 0) == ["append"]
    assert overlapping(index, "state", "log", 41, "text") == ["append"]
    assert overlapping(index, "state", "log") == ["append"]
    assert overlapping(index, "state", "log", "size") == []


def test_negative_index_read_overlaps_every_index_but_no_key() -> None:
    # paths_index: "[*] (and a negative index ...) overlaps every index, and [*]
    # also every key": a negative index is still an index, never an object key.
    index: PathIndex[str] = PathIndex()
    index.add(("state", "log", 3), "log3")
    index.add(("state", "log", 0, "text"), "log0.text")
    index.add(("state", "profile", "name"), "name")
    last = parse_reference("†state.log[-1]").key
    assert overlapping(index, *last) == ["log0.text", "log3"]
    assert overlapping(index, *parse_reference("†state.profile[-1]").key) == []


def test_each_item_is_yielded_once() -> None:
    index: PathIndex[str] = PathIndex()
    item = "write"
    index.add(("state", "a"), item)
    index.add(("state", "a", "b"), item)
    index.add(("state", "a", 0), item)
    index.add(("state", "a", ANY_INDEX), item)
    for key in [("state",), ("state", "a"), ("state", "a", "b"), ("state", "a", 0)]:
        assert list(index.overlapping(key)) == [item]
    assert list(index.overlapping(("state", "a", ANY_INDEX))) == [item]
    # two equal but distinct objects are two items
    first, second = ["same"], ["same"]
    other: PathIndex[list[str]] = PathIndex()
    other.add(("state", "x"), first)
    other.add(("state", "x"), second)
    found = list(other.overlapping(("state",)))
    assert len(found) == 2
    assert found[0] is first
    assert found[1] is second


def test_adding_after_a_query_is_seen_by_later_queries() -> None:
    index: PathIndex[str] = PathIndex()
    index.add(("state", "a", "b"), "ab")
    assert overlapping(index, "state") == ["ab"]  # fills the subtree caches
    assert overlapping(index, "state", "a") == ["ab"]
    index.add(("state", "a", "c", "d"), "acd")
    index.add(("state", "z"), "z")
    assert overlapping(index, "state") == ["ab", "acd", "z"]
    assert overlapping(index, "state", "a") == ["ab", "acd"]
    assert overlapping(index, "state", "a", "c") == ["acd"]


def test_overlapping_writes_uses_the_reference_of_the_write() -> None:
    g = graph({"_outputPath": "†state.a.b"}, {"_outputPath": "†state.a || †state.c"})
    first = g.writes[0][0]
    assert sorted((w.call, str(w.reference)) for w in g.index.overlapping_writes(first)) == [
        (0, "†state.a.b"),
        (1, "†state.a"),
    ]


# -- PlanGraph: reads, writes, edges ---------------------------------------------


def test_reads_and_writes_of_a_call() -> None:
    g = graph(
        {
            "_outputPath": "†state.ok && †state.copy || †state.err",
            "_instance": "a",
            "plain": "†state.x",
            "fallback": "†state.y || †state.z && †data.w",
            "all": "†state.rows[*].id",
            "literal": "††state.x",
            "nested": {"list": [1, "†input.q"]},
        }
    )
    reads = [(str(r.reference), r.required, r.option, r.argument.path) for r in g.reads[0]]
    assert reads == [
        ("†state.x", True, 0, ("plain",)),
        ("†state.y", False, 0, ("fallback",)),
        ("†state.z", False, 1, ("fallback",)),
        ("†data.w", False, 1, ("fallback",)),
        ("†state.rows[*].id", True, 0, ("all",)),  # the list must exist
        ("†input.q", True, 0, ("nested", "list", 1)),
    ]
    writes = [(str(w.reference), w.alternative, w.alternatives, w.instance) for w in g.writes[0]]
    assert writes == [
        ("†state.ok", 0, 2, "a"),
        ("†state.copy", 0, 2, "a"),
        ("†state.err", 1, 2, "a"),
    ]
    assert g.size == 1
    assert g.edges == []


def test_read_of_a_parent_waits_for_the_writer_of_a_child_and_the_reverse() -> None:
    g = graph(
        {"_outputPath": "†state.user.name"},
        {"who": "†state.user"},
        {"_outputPath": "†state.profile"},
        {"name": "†state.profile.name"},
    )
    assert g.edges == [(0, 1), (2, 3)]
    assert g.predecessors == [(), (0,), (), (2,)]
    assert g.successors == [(1,), (), (3,), ()]
    assert [[w.call for w in sources] for sources in g.sources[1]] == [[0]]


def test_siblings_and_other_kinds_create_no_edge() -> None:
    g = graph(
        {"_outputPath": "†state.user.name"},
        {"x": "†state.user.email"},
        {"x": "†data.user.name"},
        {"x": "†input.user.name"},
        {"x": "†state.username"},
    )
    assert g.edges == []


def test_index_overlaps() -> None:
    g = graph(
        {"_outputPath": "†state.rows[0]"},
        {"_outputPath": "†state.log[-1]"},
        {"all": "†state.rows[*].id"},
        {"first": "†state.rows.0.id"},
        {"second": "†state.rows[1]"},
        {"entry": "†state.log[3]"},
        {"last": "†state.rows[-1]"},
    )
    assert sorted(g.edges) == [(0, 2), (0, 3), (0, 6), (1, 5)]


def test_edges_are_sorted() -> None:
    # PlanGraph.edges: "Every dependency edge (producer, consumer), sorted."
    g = graph(
        {"_outputPath": "†state.a"},
        {"_outputPath": "†state.b"},
        {"x": "†state.b"},
        {"x": "†state.a"},
    )
    assert set(g.edges) == {(0, 3), (1, 2)}
    assert g.edges == [(0, 3), (1, 2)]


def test_negative_index_read_does_not_wait_for_a_key_writer() -> None:
    # †state.q[-1] is a list position; †state.q.name is an object key: they
    # never name the same place, so #0 does not depend on #1 and there is no cycle.
    g = graph(
        {"x": "†state.q[-1]", "_outputPath": "†state.p"},
        {"x": "†state.p", "_outputPath": "†state.q.name"},
    )
    assert g.edges == [(0, 1)]
    assert g.cycles == []


def test_every_fan_out_target_and_every_alternative_creates_edges() -> None:
    g = graph(
        {"_outputPath": "†state.a && †state.b || †state.c"},
        {"x": "†state.a"},
        {"x": "†state.b"},
        {"x": "†state.c"},
        {"x": "†state.d"},
    )
    assert g.edges == [(0, 1), (0, 2), (0, 3)]


def test_every_read_of_a_fallback_and_a_gate_creates_edges() -> None:
    g = graph(
        {"_outputPath": "†state.a"},
        {"_outputPath": "†state.b"},
        {"_outputPath": "†state.c"},
        {"x": "†state.a || †state.b && †state.c"},
        {"y": {"deep": ["†state.c"]}, "z": "††state.a"},
    )
    assert g.edges == [(0, 3), (1, 3), (2, 3), (2, 4)]


def test_instances() -> None:
    g = graph(
        {"_instance": "a", "_outputPath": "†state.v"},
        {"_instance": "a", "x": "†state.v"},
        {"_instance": "b", "x": "†state.v"},
        {"x": "†state.v"},
        {"_outputPath": "†state.w"},
        {"_instance": "a", "x": "†state.w"},
        {"_instance": "b", "x": "†state.w"},
        {"x": "†state.w"},
    )
    assert g.edges == [(0, 1), (4, 5), (4, 6), (4, 7)]


def test_no_self_edges() -> None:
    g = graph({"count": "†state.count", "_outputPath": "†state.count"})
    assert g.edges == []
    assert g.cycles == []
    assert order(g) == [0]


def test_list_order_never_creates_an_edge() -> None:
    g = graph(
        {"x": "†state.late"},
        {"_outputPath": "†state.other"},
        {"_outputPath": "†state.late"},
    )
    assert g.edges == [(2, 0)]
    assert g.predecessors == [(2,), (), ()]
    assert order(g) == [1, 2, 0]


def test_graph_keeps_its_plan() -> None:
    plan = parse_plan([{"_tool": "a", "_outputPath": "†state.x"}, {"_tool": "b", "x": "†state.x"}])
    g = PlanGraph(plan)
    assert g.plan is plan
    assert g.edges == [(0, 1)]


# -- ordering: the commit order the runtime schedules by ----------------------------


def order(g: PlanGraph) -> list[int]:
    """Calls in the runtime's commit order (dependency order, ties in plan order)."""
    ranks = commit_ranks(g)
    return sorted(range(g.size), key=ranks.__getitem__)


def test_order_ties_in_plan_order() -> None:
    assert order(graph({}, {}, {})) == [0, 1, 2]
    g = graph(
        {"x": "†state.b"},
        {"x": "†state.a", "_outputPath": "†state.b"},
        {"_outputPath": "†state.a"},
    )
    assert order(g) == [2, 1, 0]


def diamond() -> PlanGraph:
    return graph(
        {"_outputPath": "†state.a"},
        {"x": "†state.a", "_outputPath": "†state.b"},
        {"x": "†state.a", "_outputPath": "†state.c"},
        {"x": "†state.b", "y": "†state.c"},
    )


def test_a_diamond_orders_its_join_last() -> None:
    g = diamond()
    assert g.edges == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert g.predecessors == [(), (0,), (0,), (1, 2)]
    assert g.successors == [(1, 2), (3,), (3,), ()]
    assert order(g) == [0, 1, 2, 3]


def test_reaches() -> None:
    g = diamond()
    assert g.reaches(0, 3)
    assert g.reaches(1, 3)
    assert not g.reaches(3, 0)
    assert not g.reaches(1, 2)
    assert not g.reaches(2, 1)


def test_empty_plan() -> None:
    g = graph()
    assert g.size == 0
    assert g.edges == []
    assert g.cycles == []
    assert order(g) == []
    assert g.unreachable == {}


# -- cycles -------------------------------------------------------------------------


def test_two_call_cycle_is_a_closed_walk() -> None:
    g = graph(
        node(0),
        {"x": "†state.b", "_outputPath": "†state.a"},
        node(2),
        node(3),
        {"x": "†state.a", "_outputPath": "†state.b"},
    )
    assert g.cycles == [[1, 4, 1]]
    assert sorted(g.edges) == [(1, 4), (4, 1)]


def test_several_independent_cycles() -> None:
    g = graph(
        node(0, 2),
        node(1),
        node(2, 0),
        node(3, 6),
        node(4, 1),
        node(5, 3),
        node(6, 5),
        node(7, 6),  # behind a cycle, not in it
    )
    assert g.cycles == [[0, 2, 0], [3, 5, 6, 3]]


def test_cycles_mention_every_call_that_is_in_a_cycle() -> None:
    # 0 <-> 1 and 1 <-> 2 form one strongly connected component {0, 1, 2}: call 2
    # is in a dependency cycle, so some reported cycle has to name it.
    g = graph(node(0, 1), node(1, 0, 2), node(2, 1))
    assert sorted(g.edges) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert {call for cycle in g.cycles for call in cycle} == {0, 1, 2}


def test_acyclic_graph_has_no_cycles() -> None:
    assert diamond().cycles == []


# -- alternatives: exclusive and unreachable ----------------------------------------


def branches() -> PlanGraph:
    return graph(
        {"_tool": "pay", "_outputPath": "†state.receipt || †state.failure"},
        {"x": "†state.receipt", "_outputPath": "†state.mail"},
        {"x": "†state.failure", "_outputPath": "†state.ticket"},
        {"x": "†state.mail", "_outputPath": "†state.done"},
        {"x": "†state.mail || †state.ticket"},
        {"x": "†state.ticket", "y": "†state.unrelated"},
    )


def test_exclusive_branches_under_different_alternatives() -> None:
    g = branches()
    assert g.exclusive(1, 2)
    assert g.exclusive(2, 1)
    # transitively: 3 depends on 1, which depends on alternative 0
    assert g.exclusive(3, 2)
    assert g.exclusive(2, 3)
    assert g.exclusive(3, 5)
    # same branch, the producer itself, and a fallback reader are not exclusive
    assert not g.exclusive(1, 3)
    assert not g.exclusive(2, 5)
    assert not g.exclusive(0, 1)
    assert not g.exclusive(0, 2)
    assert not g.exclusive(4, 1)
    assert not g.exclusive(4, 2)
    assert g.unreachable == {}


def test_single_alternative_and_fan_out_are_never_exclusive() -> None:
    g = graph(
        {"_outputPath": "†state.a && †state.b"},
        {"x": "†state.a"},
        {"x": "†state.b"},
    )
    assert not g.exclusive(1, 2)
    assert g.unreachable == {}


def test_unreachable_when_reading_two_alternatives_of_one_call() -> None:
    g = graph(
        {"_tool": "pay", "_outputPath": "†state.receipt || †state.failure"},
        {"x": "†state.receipt", "y": "†state.failure"},
    )
    assert g.unreachable == {
        1: "it depends on two different alternatives of #0 pay, and only one of them is "
        "ever written"
    }


def test_unreachable_spreads_to_calls_reading_only_unreachable_writes() -> None:
    g = graph(
        {"_tool": "pay", "_outputPath": "†state.receipt || †state.failure"},
        {"x": "†state.receipt", "y": "†state.failure", "_outputPath": "†state.x"},
        {"x": "†state.x"},
        {"x": "†state.x || †state.receipt"},
    )
    assert g.unreachable == {
        1: "it depends on two different alternatives of #0 pay, and only one of them is "
        "ever written",
        2: "it needs †state.x, which only #1 t1 can write, and that can never run",
    }


def test_not_unreachable_when_the_path_exists_before_the_plan() -> None:
    def exists(reference: Any) -> bool:
        return str(reference) == "†state.x"

    g = graph(
        {"_tool": "pay", "_outputPath": "†state.receipt || †state.failure"},
        {"x": "†state.receipt", "y": "†state.failure", "_outputPath": "†state.x"},
        {"x": "†state.x"},
        exists=exists,
    )
    assert list(g.unreachable) == [1]


def test_not_unreachable_when_the_other_alternative_exists_before_the_plan() -> None:
    # #1 reads receipt (alternative 0 of #0) and failure (alternative 1), but
    # failure is already there before the plan runs: when #0 writes its receipt,
    # #1 reads that receipt and the old failure, so #1 can run.
    def exists(reference: Any) -> bool:
        return str(reference) == "†state.failure"

    g = graph(
        {"_tool": "pay", "_outputPath": "†state.receipt || †state.failure"},
        {"x": "†state.receipt", "y": "†state.failure"},
        exists=exists,
    )
    assert g.unreachable == {}


def test_cycle_members_are_not_analysed_for_alternatives() -> None:
    g = graph(node(0, 1), node(1, 0))
    assert g.unreachable == {}
    assert not g.exclusive(0, 1)


def test_field_and_index_segments_of_reads_are_kept() -> None:
    g = graph({"x": "†state.a[2].b"})
    assert g.reads[0][0].reference.segments == (Field("a"), Index(2), Field("b"))
