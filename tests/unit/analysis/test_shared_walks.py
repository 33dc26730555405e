"""The walks the analysis shares (issue 26, "the duplicates that matter").

One reachability search (``edges.reaches`` / ``edges.descendants``, behind
``PlanGraph.reaches`` and ``PlanGraph.descendants``) serves the graph, its
world-effect edges and the runtime's commit order; one path trie
(``PathIndex``) serves the checker's overlap queries and the conflict finder,
whose node walk (``PathIndex.matching``) finds what ``overlapping`` finds.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from obelisk.grammar import ANY_INDEX, WILDCARD
from obelisk.interpreter.analysis.edges import descendants, reaches
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.path_index import Key, PathIndex
from obelisk.interpreter.plan.parse import parse_plan


def test_reaches_follows_every_edge_list_given() -> None:
    successors = [(1,), (2,), (), ()]
    links = [[], [], [3], []]
    assert reaches(0, 2, successors)
    assert not reaches(0, 3, successors)
    assert reaches(0, 3, successors, links)
    assert not reaches(2, 0, successors, links)


def test_reaches_needs_one_step_at_least() -> None:
    assert not reaches(0, 0, [(1,), ()])
    assert reaches(0, 0, [(1,), (0,)])  # back to itself through a cycle


def test_descendants_hold_the_start_only_on_a_cycle() -> None:
    assert descendants(0, [(1, 2), (3,), (), ()]) == {1, 2, 3}
    assert descendants(0, [(1,), (0,)]) == {0, 1}


def test_plan_graph_reaches_and_descendants() -> None:
    graph = PlanGraph(
        parse_plan(
            [
                {"_tool": "a", "_outputPath": "†state.a"},
                {"_tool": "b", "x": "†state.a", "_outputPath": "†state.b"},
                {"_tool": "c", "x": "†state.b", "_outputPath": "†state.c"},
                {"_tool": "d", "_outputPath": "†state.d"},
            ]
        )
    )
    assert graph.descendants(0) == {1, 2}
    assert graph.descendants(3) == set()
    assert graph.reaches(0, 2)
    assert not graph.reaches(2, 0)
    assert not graph.reaches(0, 3)
    assert graph.reaches(0, 3, [[], [], [3], []])


_PARTS = st.one_of(st.sampled_from(["state", "a", "b"]), st.integers(0, 2), st.just(ANY_INDEX))
_KEYS = st.lists(_PARTS, min_size=1, max_size=4).map(tuple)


def _by_matching(index: PathIndex[int], key: Key) -> set[int]:
    along, end = index.matching(key)
    return {item for node in along for item in node.items} | {
        item for node in end for item in node.subtree()
    }


@given(st.lists(_KEYS, min_size=1, max_size=8), _KEYS)
def test_matching_finds_what_overlapping_finds(stored: list[Key], key: Key) -> None:
    index: PathIndex[int] = PathIndex()
    for number, path in enumerate(stored):
        assert number in index.add(path, number).items
    assert _by_matching(index, key) == set(index.overlapping(key))


def test_matching_walks_every_item_of_a_wildcard() -> None:
    index: PathIndex[int] = PathIndex()
    index.add(("state", "items", "k0"), 0)
    index.add(("state", "items", 1), 1)
    index.add(("state", "other"), 2)
    assert _by_matching(index, ("state", "items", WILDCARD)) == {0, 1}
    nodes = index.bottom_up()
    assert nodes[-1].children  # the root comes last, after its children
    assert all(
        nodes.index(child) < nodes.index(node) for node in nodes for child in node.children.values()
    )
