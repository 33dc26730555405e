"""What a check's graph holds per call (issue 31, point 6; docs/performance.md, "Memory").

Each call's reads, writes and sources are tuples (a list holds its items in a second
block), a read fed by a call's only write shares that call's tuple of writes, and a
leaf of the path index shares one empty dict of children with every other leaf, and
holds its only write in its call's tuple of writes.
"""

from __future__ import annotations

from typing import Any

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan


def _chain(size: int) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = [{"_tool": "t", "_outputPath": "†state.v0"}]
    calls += [
        {"_tool": "t", "a": f"†state.v{i - 1}", "_outputPath": f"†state.v{i}"}
        for i in range(1, size)
    ]
    return calls


def test_reads_writes_and_sources_are_tuples() -> None:
    graph = PlanGraph(parse_plan(_chain(3)))
    for per_call in (graph.reads, graph.writes, graph.sources):
        assert all(type(item) is tuple for item in per_call)
    assert graph.sources[2] == ((graph.writes[1][0],),)
    assert graph.sources[2][0] is graph.writes[1]  # shared, not a tuple per read
    assert [read.key for read in graph.reads[1]] == [("state", "v0")]
    assert graph.writes[1][0].key == ("state", "v1")


def test_path_index_leaves_share_their_children() -> None:
    graph = PlanGraph(parse_plan(_chain(3)))
    state = graph.index.matching(("state",))[1][0]
    leaves = list(state.children.values())
    assert len(leaves) == 3
    assert all(leaf.children is leaves[0].children for leaf in leaves)
    assert leaves[0].children == {}
    assert [list(leaf.items) for leaf in leaves] == [[w] for (w,) in graph.writes]
    assert all(leaf.items is writes for leaf, writes in zip(leaves, graph.writes, strict=True))


def test_two_writers_of_one_path_are_both_kept() -> None:
    calls = [{"_tool": "t", "_outputPath": "†state.x"}, {"_tool": "t", "_outputPath": "†state.x"}]
    graph = PlanGraph(parse_plan(calls))
    leaf = graph.index.matching(("state", "x"))[1][0]
    assert [write.call for write in leaf.items] == [0, 1]
    assert graph.index.has_overlaps()
