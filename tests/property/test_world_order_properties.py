"""World-effect edges keep only the frontier of each resource (docs/semantics.md, "World
effects"), and order exactly the calls that comparing every pair would order: on random
plans with overlapping resources and data dependencies in both directions, the
transitive closure of the dependency graph equals the one the pairwise rule gives."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import given

import obelisk

RESOURCES = ("a", "a.b", "a.c", "a.b.d", "x")
SLOTS = ("s0", "s1", "s2")


def _tools(effects_by_tool: dict[str, dict[str, str]]) -> list[obelisk.Tool]:
    tools = []
    for name, effects in effects_by_tool.items():

        def act(value: Any = None) -> Any:
            return value

        tools.append(obelisk.Tool.from_function(act, name=name, effects=effects or None))
    return tools


def _pairwise(data: list[set[int]], effects: list[dict[str, str]]) -> list[set[int]]:
    """The rule as first written: every earlier conflicting call, unless the edges so
    far order the two the other way."""
    predecessors = [set(p) for p in data]
    successors: list[set[int]] = [set() for _ in data]
    for node, preds in enumerate(predecessors):
        for pred in preds:
            successors[pred].add(node)

    def reaches(start: int, goal: int) -> bool:
        seen, stack = {start}, [start]
        while stack:
            for child in successors[stack.pop()]:
                if child == goal:
                    return True
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return False

    def overlap(r: str, s: str) -> bool:
        a, b = r.split("."), s.split(".")
        return a[: len(b)] == b or b[: len(a)] == a

    touched: list[tuple[int, str, str]] = []
    for me, mine in enumerate(effects):
        for resource, access in mine.items():
            for earlier, theirs, their_access in touched:
                if earlier == me or (access == "read" and their_access == "read"):
                    continue
                if not overlap(resource, theirs):
                    continue
                if me in successors[earlier] or reaches(me, earlier):
                    continue
                predecessors[me].add(earlier)
                successors[earlier].add(me)
        touched.extend((me, resource, access) for resource, access in mine.items())
    return predecessors


def _closure(predecessors: list[set[int]] | list[tuple[int, ...]]) -> set[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    for node in range(len(predecessors)):
        stack, seen = list(predecessors[node]), set()
        while stack:
            pred = stack.pop()
            if pred in seen:
                continue
            seen.add(pred)
            pairs.add((pred, node))
            stack.extend(predecessors[pred])
    return pairs


call = st.fixed_dictionaries(
    {
        "effects": st.dictionaries(
            st.sampled_from(RESOURCES), st.sampled_from(["read", "write"]), max_size=2
        ),
        "reads": st.lists(st.sampled_from(SLOTS), max_size=1),
        "writes": st.lists(st.sampled_from(SLOTS), max_size=1),
    }
)


@given(st.lists(call, min_size=1, max_size=12))
def test_frontier_edges_order_what_the_pairwise_rule_orders(calls: list[dict[str, Any]]) -> None:
    plan: list[dict[str, Any]] = []
    effects_by_tool: dict[str, dict[str, str]] = {}
    for index, spec in enumerate(calls):
        name = f"t{index}"
        effects_by_tool[name] = spec["effects"]
        item: dict[str, Any] = {"_tool": name}
        if spec["reads"]:
            item["value"] = f"†state.{spec['reads'][0]} || †input.none"
        if spec["writes"]:
            item["_outputPath"] = f"†state.{spec['writes'][0]}"
        plan.append(item)
    with_effects = obelisk.check(plan, _tools(effects_by_tool), input={"none": 0}).graph
    without = obelisk.check(
        plan, _tools({name: {} for name in effects_by_tool}), input={"none": 0}
    ).graph
    assert with_effects is not None and without is not None
    data = [set(p) for p in without.predecessors]
    expected = _pairwise(data, [spec["effects"] for spec in calls])
    assert _closure(list(with_effects.predecessors)) == _closure(expected)


def test_eight_thousand_writers_of_one_resource_make_a_chain() -> None:
    tool = obelisk.Tool.from_function(lambda: None, name="write", effects={"db.rows": "write"})
    plan = [{"_tool": "write"} for _ in range(8000)]
    graph = obelisk.check(plan, [tool]).graph
    assert graph is not None
    assert len(graph.edges) == 7999
    assert graph.edges[:3] == [(0, 1), (1, 2), (2, 3)]
