"""Property tests for the dependency graph (docs/semantics.md).

* Cycle detection agrees with networkx on random directed graphs.
* Dependency edges agree with a brute-force oracle that compares every read
  with every write of a random plan.
* The commit order the runtime schedules by respects every edge, and neither it
  nor the edges depend on the hash seed.  (That the engine starts a call only
  after its producers settled is a property of tests/property/test_engine_properties.py.)
* The commit order's shortcut for plans whose dependencies all point forward gives
  the ranks and groups of the general algorithm.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from typing import Any
from unittest import mock

import networkx as nx
from hypothesis import example, given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime import commit_order
from obelisk.interpreter.runtime.commit_order import CommitOrder, commit_ranks

# -- random directed graphs as plans -------------------------------------------------

Edges = frozenset[tuple[int, int]]


@st.composite
def digraphs(draw: st.DrawFn) -> tuple[int, Edges]:
    """``(n, edges)``: n <= 10 nodes, edges ``(j, i)`` without self-loops."""
    n = draw(st.integers(min_value=1, max_value=10))
    pairs = [(j, i) for i in range(n) for j in range(n) if i != j]
    if not pairs:
        return n, frozenset()
    return n, frozenset(draw(st.sets(st.sampled_from(pairs))))


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


def nx_graph(n: int, edges: Edges) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def nontrivial_components(g: nx.DiGraph) -> list[frozenset[int]]:
    return [frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


@given(digraphs())
def test_cycles_agree_with_networkx(graph: tuple[int, Edges]) -> None:
    n, edges = graph
    g = PlanGraph(parse_plan(graph_plan(n, edges)))
    reference = nx_graph(n, edges)
    assert set(g.edges) == set(edges)
    assert (g.cycles == []) == nx.is_directed_acyclic_graph(reference)
    components = nontrivial_components(reference)
    for walk in g.cycles:
        # a real closed walk along dependency edges
        assert len(walk) >= 3
        assert walk[0] == walk[-1]
        assert all((a, b) in edges for a, b in itertools.pairwise(walk))
    # one cycle per strongly connected component with a cycle
    touched = [next(c for c in components if walk[0] in c) for walk in g.cycles]
    assert len(touched) == len(set(touched)) == len(components)


@given(digraphs())
def test_cycle_nodes_are_every_node_of_a_nontrivial_component(graph: tuple[int, Edges]) -> None:
    n, edges = graph
    g = PlanGraph(parse_plan(graph_plan(n, edges)))
    in_cycles = {node for walk in g.cycles for node in walk}
    expected = set().union(*nontrivial_components(nx_graph(n, edges)))
    assert in_cycles == expected


@given(digraphs())
def test_commit_order_respects_every_edge(graph: tuple[int, Edges]) -> None:
    n, edges = graph
    if not nx.is_directed_acyclic_graph(nx_graph(n, edges)):
        return  # a plan with a cycle never runs
    g = PlanGraph(parse_plan(graph_plan(n, edges)))
    ranks = commit_ranks(g)
    assert sorted(ranks) == list(range(n))
    assert all(ranks[a] < ranks[b] for a, b in edges)


WRITTEN = ["†state.x", "†state.x.a", "†state.x.b", "†state.y", "†state.y[0]", "†state.z"]


@st.composite
def writing_plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to 12 calls, each writing one of a few overlapping paths (maybe in an
    instance) and reading the outputs of some earlier calls."""
    n = draw(st.integers(min_value=1, max_value=12))
    calls: list[dict[str, Any]] = []
    for i in range(n):
        call: dict[str, Any] = {"_tool": "node", "_outputPath": draw(st.sampled_from(WRITTEN))}
        if draw(st.booleans()) and i:
            for j in draw(st.sets(st.integers(0, i - 1), max_size=2)):
                call[f"r{j}"] = calls[j]["_outputPath"]
        if draw(st.integers(0, 4)) == 0:
            call["_instance"] = draw(st.sampled_from(["a", "b"]))
        calls.append(call)
    return calls


@given(writing_plans())
def test_forward_plans_rank_like_the_general_order(plan: list[dict[str, Any]]) -> None:
    """A plan whose dependencies all point forward ranks in plan order without the
    general algorithm; the general algorithm gives the same ranks and groups."""
    g = PlanGraph(parse_plan(plan))
    shortcut = CommitOrder(g)
    with mock.patch.object(commit_order, "points_forward", return_value=False):
        general = CommitOrder(g)
    assert (shortcut.ranks, shortcut.groups) == (general.ranks, general.groups)
    if commit_order.points_forward(g.predecessors):
        assert shortcut.ranks == list(range(len(plan)))


# -- dependency edges against a brute-force oracle -------------------------------------------

Segment = tuple[str, Any]  # ("field", name) | ("index", i) | ("wildcard", None)
Path = tuple[str, tuple[Segment, ...]]
Expression = list[list[Path]]  # options (||), each a list of parts (&&)

FIELDS: list[Segment] = [("field", "a"), ("field", "b"), ("field", "c")]
INDICES: list[Segment] = [("index", 0), ("index", 1), ("index", -1)]
WILDCARD: Segment = ("wildcard", None)
WRITE_SEGMENTS = FIELDS + INDICES
READ_SEGMENTS = [*WRITE_SEGMENTS, WILDCARD]
READ_SEGMENTS_NO_NEGATIVE = [s for s in READ_SEGMENTS if s != ("index", -1)]


def render_path(path: Path) -> str:
    kind, segments = path
    text = "†" + kind
    for tag, value in segments:
        text += f".{value}" if tag == "field" else f"[{value}]" if tag == "index" else "[*]"
    return text


def render(expression: Expression) -> str:
    return " || ".join(" && ".join(render_path(p) for p in option) for option in expression)


def paths(segments: list[Segment]) -> st.SearchStrategy[Path]:
    return st.tuples(
        st.sampled_from(["state", "data"]),
        st.lists(st.sampled_from(segments), max_size=3).map(tuple),
    )


def expressions(segments: list[Segment]) -> st.SearchStrategy[Expression]:
    option = st.lists(paths(segments), min_size=1, max_size=2)
    return st.lists(option, min_size=1, max_size=3)


class RandomCall:
    def __init__(
        self,
        instance: str | None,
        target: Expression | None,
        arguments: list[tuple[Expression, bool]],
        escaped: bool,
    ) -> None:
        self.instance = instance
        self.target = target
        self.arguments = arguments  # (expression, nested inside a list?)
        self.escaped = escaped

    def __repr__(self) -> str:
        return repr(self.to_json())

    @property
    def reads(self) -> list[Path]:
        return [
            path for expression, _ in self.arguments for option in expression for path in option
        ]

    @property
    def writes(self) -> list[Path]:
        return [path for option in self.target or [] for path in option]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"_tool": "t"}
        if self.instance is not None:
            data["_instance"] = self.instance
        if self.target is not None:
            data["_outputPath"] = render(self.target)
        for number, (expression, nested) in enumerate(self.arguments):
            text = render(expression)
            data[f"arg{number}"] = {"inner": [1, text]} if nested else text
        if self.escaped:
            data["literal"] = "††state.a"  # an escaped literal reads nothing
        return data


def random_calls(read_segments: list[Segment]) -> st.SearchStrategy[RandomCall]:
    return st.builds(
        RandomCall,
        st.sampled_from([None, "x", "y"]),
        st.none() | expressions(WRITE_SEGMENTS),
        st.lists(st.tuples(expressions(read_segments), st.booleans()), max_size=3),
        st.booleans(),
    )


def segments_overlap(read: Segment, write: Segment) -> bool:
    if read == WILDCARD or write == WILDCARD:  # [*]: any index and any key
        return True
    if read[0] == "index" and write[0] == "index":  # a negative index: any index
        return read[1] == write[1] or read[1] < 0 or write[1] < 0
    return read == write


def overlap(read: Path, write: Path) -> bool:
    """One path is a prefix of the other, segment by segment."""
    (read_kind, read_segments), (write_kind, write_segments) = read, write
    return read_kind == write_kind and all(
        segments_overlap(r, w) for r, w in zip(read_segments, write_segments, strict=False)
    )


def oracle_edges(calls: list[RandomCall]) -> set[tuple[int, int]]:
    edges = set()
    for consumer, reader in enumerate(calls):
        for producer, writer in enumerate(calls):
            if producer == consumer:
                continue
            if writer.instance is not None and writer.instance != reader.instance:
                continue
            if any(overlap(r, w) for r in reader.reads for w in writer.writes):
                edges.add((producer, consumer))
    return edges


def check_edges(calls: list[RandomCall]) -> None:
    g = PlanGraph(parse_plan([call.to_json() for call in calls]))
    assert set(g.edges) == oracle_edges(calls)
    assert len(g.edges) == len(set(g.edges))
    for consumer, predecessors in enumerate(g.predecessors):
        assert list(predecessors) == sorted({p for p, c in g.edges if c == consumer})
    for producer, successors in enumerate(g.successors):
        assert sorted(successors) == sorted({c for p, c in g.edges if p == producer})


@given(st.lists(random_calls(READ_SEGMENTS), min_size=1, max_size=6))
@example(  # †state.a[-1] is a list position, †state.a.b an object key: no overlap
    [
        RandomCall(None, [[("state", (("field", "a"), ("field", "b")))]], [], False),
        RandomCall(None, None, [([[("state", (("field", "a"), ("index", -1)))]], False)], False),
    ]
)
def test_edges_match_a_brute_force_oracle(calls: list[RandomCall]) -> None:
    check_edges(calls)


@given(st.lists(random_calls(READ_SEGMENTS_NO_NEGATIVE), min_size=1, max_size=6))
def test_edges_match_the_oracle_without_negative_index_reads(calls: list[RandomCall]) -> None:
    check_edges(calls)


def test_oracle_sanity() -> None:
    a: Path = ("state", (("field", "a"),))
    a_b: Path = ("state", (("field", "a"), ("field", "b")))
    a_0: Path = ("state", (("field", "a"), ("index", 0)))
    a_last: Path = ("state", (("field", "a"), ("index", -1)))
    a_all: Path = ("state", (("field", "a"), WILDCARD))
    assert overlap(a, a_b) and overlap(a_b, a)
    assert not overlap(a_b, a_0)
    assert overlap(a_last, a_0) and overlap(a_0, a_last)
    assert not overlap(a_last, a_b) and not overlap(a_b, a_last)
    assert overlap(a_all, a_b) and overlap(a_all, a_0)
    assert not overlap(("data", a[1]), a)
    assert render_path(a_all) == "†state.a[*]"
    assert render([[a, a_last], [a_0]]) == "†state.a && †state.a[-1] || †state.a[0]"


# -- independence from the hash seed ---------------------------------------------------------

SEED_PLAN = [
    {"_tool": "fetchProfile", "user": "†input.user", "_outputPath": "†state.profile"},
    {"_tool": "fetchOrders", "user": "†input.user", "_outputPath": "†state.orders"},
    {
        "_tool": "summarize",
        "orders": "†state.orders",
        "profile": "†state.profile",
        "_outputPath": "†state.summary",
    },
    {"_tool": "fetchWeather", "city": "Oslo", "_outputPath": "†state.weather"},
    {"_tool": "email", "body": "†state.summary", "today": "†state.weather.today"},
    {"_tool": "log", "name": "†state.profile.name", "_outputPath": "†data.log"},
]
SEED_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from obelisk.interpreter.analysis.graph import PlanGraph
    from obelisk.interpreter.plan.parse import parse_plan
    from obelisk.interpreter.runtime.commit_order import commit_ranks
    g = PlanGraph(parse_plan(json.loads(sys.argv[1])))
    ranks = commit_ranks(g)
    print(json.dumps({"order": sorted(range(g.size), key=ranks.__getitem__),
                      "edges": sorted(g.edges)}))
    """
)


def test_order_does_not_depend_on_the_hash_seed() -> None:
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", SEED_SCRIPT, json.dumps(SEED_PLAN)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        outputs.append(json.loads(done.stdout))
    expected = {
        "order": [0, 1, 2, 3, 4, 5],  # Kahn's order, smallest index first
        "edges": [[0, 2], [0, 5], [1, 2], [2, 4], [3, 4]],
    }
    assert outputs == [expected, expected]
