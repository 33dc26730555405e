"""Property tests for the engine (docs/semantics.md).

Random small DAG plans: node ``k`` reads a random subset of the outputs
``†state.n{j}`` of earlier nodes (some through a ``||`` fallback onto their
error arm ``†state.e{j}``), writes ``†state.n{k}`` (sometimes also the shared
``†state.last``, sometimes through an error arm ``|| †state.e{k}``), or pushes
onto the shared ``†state.log``.  A drawn flag makes a node's tool raise.  The
nodes are put into the plan in a random order, so plan order and dependency
order differ.  The tool is async, sleeps a drawn 0-3 ms and logs its start
and end.

* No call starts before all of its dependencies settled (and committed).
* No call runs twice.
* Final state and call records are identical under two random delay assignments.
* A call runs iff every required read exists when it becomes ready; the
  expected statuses, outputs, errors and final state come from an independent
  sequential simulation in dependency order.  Writes to one path are applied in
  plan order (docs/semantics.md) unless one writer depends on the other, which forces
  the dependency's order.

Plans whose writers of †state.last cannot be put in one such order (A before B
in the plan, B before C in the plan, but A depends on C) are left out: the
engine deadlocks on them, which ``test_engine.py::TestDeterminism::
test_plan_order_and_dependency_order_disagree`` shows on its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hypothesis import given, reject
from hypothesis import strategies as st

import obelisk


@dataclass(frozen=True)
class Node:
    """One call of a random plan; ``k`` is its node id (dependency order)."""

    k: int
    reads: tuple[int, ...]
    fallback: tuple[bool, ...]  # per read: `†state.n{j} || †state.e{j}`
    push: bool  # pushes onto †state.log instead of writing †state.n{k}
    shared: bool  # also writes †state.last (fan-out)
    error_arm: bool  # `... || †state.e{k}`
    fails: bool  # the tool raises


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[Node, ...]
    order: tuple[int, ...]  # order[pos] = node id at plan position pos

    @property
    def position(self) -> dict[int, int]:
        return {k: pos for pos, k in enumerate(self.order)}


@st.composite
def scenarios(draw: st.DrawFn, max_nodes: int = 7) -> Scenario:
    n = draw(st.integers(min_value=1, max_value=max_nodes))
    nodes: list[Node] = []
    for k in range(n):
        readable = [j for j in range(k) if not nodes[j].push]
        reads: tuple[int, ...] = ()
        if readable:
            reads = tuple(
                draw(st.lists(st.sampled_from(readable), unique=True, max_size=3).map(sorted))
            )
        fallback = tuple(draw(st.booleans()) for _ in reads)
        push = draw(st.integers(0, 3)) == 0
        nodes.append(
            Node(
                k=k,
                reads=reads,
                fallback=fallback,
                push=push,
                shared=not push and draw(st.booleans()),
                error_arm=draw(st.booleans()),
                fails=draw(st.integers(0, 2)) == 0,
            )
        )
    order = tuple(draw(st.permutations(range(n))))
    scenario = Scenario(tuple(nodes), order)
    if last_writer_order(scenario) is None:
        reject()
    return scenario


def depends_on(nodes: tuple[Node, ...]) -> list[set[int]]:
    """``depends_on(nodes)[k]``: every node id that node k depends on, transitively."""
    closure: list[set[int]] = []
    for node in nodes:
        found = set(node.reads)
        for j in node.reads:
            found |= closure[j]
        closure.append(found)
    return closure


def last_writer_order(scenario: Scenario) -> list[int] | None:
    """Node ids writing †state.last in the order their writes apply, or None when
    plan order and dependency order cannot both be kept.

    Two writers apply in plan order unless one depends on the other (then the
    dependency first): the same pairwise rule as the engine's commit order.
    """
    closure = depends_on(scenario.nodes)
    position = scenario.position
    writers = [node.k for node in scenario.nodes if node.shared]

    def before(a: int, b: int) -> bool:
        if a in closure[b]:
            return True
        if b in closure[a]:
            return False
        return position[a] < position[b]

    order: list[int] = []
    remaining = set(writers)
    while remaining:
        first = [a for a in remaining if all(before(a, b) for b in remaining if b != a)]
        if len(first) != 1:
            return None
        order.append(first[0])
        remaining.discard(first[0])
    return order


def delays_for(scenario: Scenario) -> st.SearchStrategy[list[int]]:
    """Milliseconds of sleep per node id."""
    n = len(scenario.nodes)
    return st.lists(st.integers(0, 3), min_size=n, max_size=n)


def build_plan(scenario: Scenario) -> list[dict[str, Any]]:
    plan = []
    for k in scenario.order:
        node = scenario.nodes[k]
        inputs = [
            f"†state.n{j} || †state.e{j}" if fallback else f"†state.n{j}"
            for j, fallback in zip(node.reads, node.fallback, strict=True)
        ]
        if node.push:
            main = "†state.log"
        elif node.shared:
            main = f"†state.n{k} && †state.last"
        else:
            main = f"†state.n{k}"
        target = f"{main} || †state.e{k}" if node.error_arm else main
        call: dict[str, Any] = {"_tool": "node", "k": k, "inputs": inputs, "_outputPath": target}
        if node.push:
            call["_outputMethod"] = "push"
        plan.append(call)
    return plan


def make_tool(scenario: Scenario, delays: list[int], log: list[tuple[str, int]]) -> obelisk.Tool:
    fails = [node.fails for node in scenario.nodes]

    @obelisk.tool(name="node")
    async def node(k: int, inputs: list) -> Any:  # type: ignore[type-arg]
        """A node of the random DAG."""
        log.append(("start", k))
        await asyncio.sleep(delays[k] / 1000)
        log.append(("end", k))
        if fails[k]:
            raise ValueError(f"node {k} failed")
        return {"k": k, "inputs": inputs}

    return node


@dataclass
class Run:
    result: obelisk.RunResult
    events: list[Any]
    log: list[tuple[str, int]]


def execute(scenario: Scenario, delays: list[int]) -> Run:
    log: list[tuple[str, int]] = []
    events: list[Any] = []
    run = obelisk.run(
        build_plan(scenario), [make_tool(scenario, delays, log)], on_event=events.append
    )
    # a run of at most 7 calls sleeping <= 3 ms each; the limit only turns a hang into a failure
    result = asyncio.run(asyncio.wait_for(run, timeout=10))
    return Run(result, events, log)


def simulate(scenario: Scenario) -> tuple[dict[str, Any], list[tuple[str, Any, Any]]]:
    """Expected final state and ``(status, output, error)`` per plan position.

    Nodes are settled in dependency order (node id order); a write to a path
    several nodes write is collected first and applied afterwards in its order:
    pushes onto †state.log in plan order (pushers never depend on each other),
    writes of †state.last in :func:`last_writer_order`.
    """
    position = scenario.position
    last_order = last_writer_order(scenario)
    assert last_order is not None
    exists: dict[str, Any] = {}
    ordered_writes: list[tuple[int, str, Any, bool]] = []  # (rank, path, value, push)
    records: dict[int, tuple[str, Any, Any]] = {}
    for node in scenario.nodes:
        values = []
        for j, fallback in zip(node.reads, node.fallback, strict=True):
            if f"n{j}" in exists:
                values.append(exists[f"n{j}"])
            elif fallback and f"e{j}" in exists:
                values.append(exists[f"e{j}"])
            else:
                break
        else:
            pos = position[node.k]
            if node.fails:
                error = {"type": "ValueError", "message": f"node {node.k} failed"}
                if node.error_arm:
                    arm = {"error": {**error, "tool": "node", "call": pos}}
                    exists[f"e{node.k}"] = [arm] if node.push else arm
                    records[node.k] = ("succeeded", None, error)
                else:
                    records[node.k] = ("failed", None, error)
                continue
            output = {"k": node.k, "inputs": values}
            records[node.k] = ("succeeded", output, None)
            if node.push:
                ordered_writes.append((pos, "log", output, True))
            else:
                exists[f"n{node.k}"] = output
                if node.shared:
                    ordered_writes.append((last_order.index(node.k), "last", output, False))
            continue
        records[node.k] = ("skipped", None, None)
    state = dict(exists)
    for _, path, value, push in sorted(ordered_writes, key=lambda write: (write[1], write[0])):
        if push:
            state.setdefault(path, []).append(value)
        else:
            state[path] = value
    return state, [records[k] for k in scenario.order]


def predecessors(scenario: Scenario) -> list[tuple[int, ...]]:
    graph = obelisk.check(build_plan(scenario), [make_tool(scenario, [0] * 8, [])]).graph
    assert graph is not None
    return graph.predecessors


def records_of(result: obelisk.RunResult) -> list[tuple[Any, ...]]:
    return [(r.status, r.output, r.error, r.reason) for r in result.calls]


def writes_per_path(result: obelisk.RunResult) -> dict[str, list[tuple[Any, ...]]]:
    """Each path's log entries in log order (only overlapping writes are ordered)."""
    paths: dict[str, list[tuple[Any, ...]]] = {}
    for entry in result.log:
        paths.setdefault(entry.path, []).append(
            (entry.call, entry.instance, entry.method, entry.value)
        )
    return paths


# -- properties ------------------------------------------------------------------------


@given(st.data())
def test_calls_start_only_after_their_dependencies_settled_and_run_once(
    data: st.DataObject,
) -> None:
    scenario = data.draw(scenarios())
    delays = data.draw(delays_for(scenario))
    run = execute(scenario, delays)
    position = scenario.position
    preds = predecessors(scenario)
    # the graph is what the plan says: node k waits for exactly the nodes it reads
    for node in scenario.nodes:
        assert preds[position[node.k]] == tuple(sorted(position[j] for j in node.reads))

    events = run.events
    assert events[0].event == "run_started"
    assert events[-1].event == "run_finished"
    settled_at: dict[int, int] = {}  # call -> index of its last settling event
    for at, event in enumerate(events):
        if event.event in ("call_succeeded", "call_failed", "call_skipped"):
            settled_at[event.call] = at
        elif event.event == "state_written":
            settled_at[event.entry.call] = at
    for at, event in enumerate(events):
        if event.event == "call_ready":
            for pred in preds[event.call]:
                assert pred in settled_at
                assert settled_at[pred] < at, (pred, event.call)

    # in the tool's own log: a node starts after every node it reads has ended
    for node in scenario.nodes:
        if ("start", node.k) in run.log:
            started = run.log.index(("start", node.k))
            for j in node.reads:
                assert ("end", j) in run.log[:started]

    # nobody runs twice, and exactly the calls that were not skipped ran
    starts = [k for what, k in run.log if what == "start"]
    assert len(starts) == len(set(starts))
    started_events = [e.call for e in events if e.event == "call_started"]
    assert len(started_events) == len(set(started_events))
    ran = {pos for pos, r in enumerate(run.result.calls) if r.status != "skipped"}
    assert {position[k] for k in starts} == ran == set(started_events)
    for pos in range(len(scenario.nodes)):
        kinds = [
            e.event
            for e in events
            if getattr(e, "call", None) == pos and e.event not in ("call_ready", "call_started")
        ]
        assert len(kinds) == 1, (pos, kinds)


@given(st.data())
def test_same_state_and_records_under_different_delays(data: st.DataObject) -> None:
    scenario = data.draw(scenarios())
    first = execute(scenario, data.draw(delays_for(scenario)))
    second = execute(scenario, data.draw(delays_for(scenario)))
    assert first.result.status == second.result.status
    assert first.result.state == second.result.state
    assert records_of(first.result) == records_of(second.result)
    assert [r.arguments for r in first.result.calls] == [r.arguments for r in second.result.calls]
    assert writes_per_path(first.result) == writes_per_path(second.result)


@given(st.data())
def test_a_call_runs_iff_its_required_reads_exist(data: st.DataObject) -> None:
    scenario = data.draw(scenarios())
    run = execute(scenario, data.draw(delays_for(scenario)))
    expected_state, expected_records = simulate(scenario)
    result = run.result
    assert [(r.status, r.output, r.error) for r in result.calls] == expected_records
    assert result.state == expected_state
    for record in result.calls:
        assert (record.reason is not None) == (record.status == "skipped")
        assert (record.arguments is None) == (record.status == "skipped")
    statuses = {r.status for r in result.calls}
    assert result.status == ("failed" if "failed" in statuses else "completed")
