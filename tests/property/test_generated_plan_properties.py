"""Properties of running plans drawn by obelisk.testing (docs/semantics.md, docs/testing.md).

Plans come from :func:`obelisk.testing.plans` over ``plan_tools.TOOLS`` (typed
outputs, outcomes, a latent tool, error arms, fallbacks, gates, fan-out,
instances, input reads), run on :class:`~obelisk.testing.FakeTools` whose results
are a function of the arguments, with branch choices from
:func:`~obelisk.testing.outcome_assignments` and random delays.  The oracles do
not use obelisk's graph or engine:

* :func:`oracle_edges`: call B depends on A when a path B reads is a prefix of a
  path A writes, or the other way round, and A's write is visible to B's
  instance (brute force over every pair, from the plan's JSON);
* :func:`expected_run`: a sequential simulation in dependency order: a call runs
  iff every required read exists in what the calls before it wrote; what it
  writes follows its drawn alternative.

Properties:

* every call starts only after every call it depends on settled, and no call
  runs twice (one fake invocation per started call);
* the final state, the records and the write log per path are the same under
  two random delay assignments, and under two PYTHONHASHSEED values (in
  subprocesses);
* a call runs iff its reads exist: statuses, outputs, errors, the state and every
  instance's state are what the simulation says.

The simulation is also what ``simulate`` (another stage, not built yet) must
predict: when it lands, a property comparing it with :func:`expected_run` and the
real run belongs here.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_tools import INPUT_SCHEMA, TOOLS

import obelisk
from obelisk.testing import (
    FakeTools,
    GeneratedPlan,
    OutcomeAssignment,
    RecordingSubscriber,
    outcome_assignments,
    plans,
)

SLOW = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PLANS = plans(TOOLS, input_schema=INPUT_SCHEMA, max_calls=8, instances=True)
MISSING = object()


@st.composite
def cases(draw: st.DrawFn) -> tuple[GeneratedPlan, OutcomeAssignment]:
    generated = draw(PLANS)
    return generated, draw(outcome_assignments(generated))


def fakes_for(choices: OutcomeAssignment, salt: int) -> FakeTools:
    """Fakes whose delays (0-3 ms) depend on the arguments and ``salt``."""

    def delay(arguments: dict[str, Any]) -> float:
        key = f"{salt}:{json.dumps(arguments, sort_keys=True, default=repr)}".encode()
        return hashlib.sha256(key).digest()[0] % 4 / 1000

    return FakeTools(TOOLS, choices=choices, delays=dict.fromkeys(TOOLS.names(), delay), seed=1)


def run(generated: GeneratedPlan, fakes: FakeTools) -> tuple[obelisk.RunResult, Any]:
    events = RecordingSubscriber()
    result = obelisk.run_sync(
        generated.plan, fakes, input=generated.input, on_event=[fakes.observe, events]
    )
    return result, events


# -- the oracles ------------------------------------------------------------------------------


def references_in(value: Any) -> list[Any]:
    """Every reference read anywhere inside an argument value."""
    if isinstance(value, str):
        if value.startswith("†") and not value.startswith("††"):
            return list(obelisk.parse_expression(value).references)
        return []
    if isinstance(value, list):
        return [ref for item in value for ref in references_in(item)]
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in references_in(item)]
    return []


def path_of(reference: Any) -> tuple[Any, ...]:
    return (reference.kind, *(str(segment) for segment in reference.segments))


def writes_of(call: dict[str, Any]) -> list[list[tuple[Any, ...]]]:
    """The targets of each alternative of the call's output path."""
    if "_outputPath" not in call:
        return []
    node = obelisk.parse_expression(call["_outputPath"])
    options = node.options if hasattr(node, "options") else (node,)
    return [[path_of(ref) for ref in option.references] for option in options]


def oracle_edges(plan: list[dict[str, Any]]) -> set[tuple[int, int]]:
    edges = set()
    for consumer, reader in enumerate(plan):
        reads = [
            path_of(ref)
            for key, value in reader.items()
            if not key.startswith("_")
            for ref in references_in(value)
        ]
        for producer, writer in enumerate(plan):
            if producer == consumer:
                continue
            if writer.get("_instance") not in (None, reader.get("_instance")):
                continue
            written = [path for option in writes_of(writer) for path in option]
            for read in reads:
                for path in written:
                    shorter = min(len(read), len(path))
                    if read[:shorter] == path[:shorter]:
                        edges.add((producer, consumer))
    return edges


def dependency_order(plan: list[dict[str, Any]], edges: set[tuple[int, int]]) -> list[int]:
    waiting = {i: {a for a, b in edges if b == i} for i in range(len(plan))}
    order: list[int] = []
    while waiting:
        ready = min(i for i, before in waiting.items() if not before)
        order.append(ready)
        del waiting[ready]
        for before in waiting.values():
            before.discard(ready)
    return order


class Documents:
    """The input, the base state and one layer per instance, as the simulation sees them."""

    def __init__(self, document: Any) -> None:
        self.input = document
        self.base: dict[str, Any] = {}
        self.layers: dict[str, dict[str, Any]] = {}

    def lookup(self, reference: Any, instance: str | None) -> Any:
        if reference.kind == "input":
            value = self.input
        else:
            assert reference.kind == "state"
            value = {**self.base, **self.layers.get(instance, {})} if instance else self.base
        for segment in reference.segments:
            name = segment.name  # generated plans read object fields only
            if not isinstance(value, dict) or name not in value:
                return MISSING
            value = value[name]
        return value

    def evaluate(self, node: Any, instance: str | None) -> Any:
        options = node.options if hasattr(node, "options") else (node,)
        for option in options:
            parts = option.parts if hasattr(option, "parts") else (option,)
            values = [self.lookup(part, instance) for part in parts]
            if all(v is not MISSING for v in values):
                return values[-1]
        return MISSING

    def resolve(self, value: Any, instance: str | None) -> Any:
        if isinstance(value, str) and value.startswith("††"):
            return value[1:]
        if isinstance(value, str) and value.startswith("†"):
            return self.evaluate(obelisk.parse_expression(value), instance)
        if isinstance(value, list):
            items = [self.resolve(item, instance) for item in value]
            return MISSING if any(item is MISSING for item in items) else items
        if isinstance(value, dict):
            fields = {key: self.resolve(item, instance) for key, item in value.items()}
            return MISSING if any(item is MISSING for item in fields.values()) else fields
        return value

    def write(self, targets: list[tuple[Any, ...]], value: Any, instance: str | None) -> None:
        layer = self.layers.setdefault(instance, {}) if instance else self.base
        for kind, name in targets:  # generated plans write one state field per target
            assert kind == "state"
            layer[name[1:]] = value


def fake_output(tool: obelisk.Tool, arguments: dict[str, Any]) -> Any:
    """What the fakes return for these (validated) arguments, with no choice."""
    fake = FakeTools(TOOLS, seed=1)[tool.name]
    assert fake.function is not None
    value = asyncio.run(fake.function(**arguments))
    return value.value if isinstance(value, obelisk.Outcome) else value


def expected_run(
    generated: GeneratedPlan, choices: OutcomeAssignment
) -> tuple[list[tuple[str, Any, Any]], Documents]:
    """``(status, output, error)`` per call and the documents after the plan."""
    plan = generated.plan
    documents = Documents(generated.input)
    records: dict[int, tuple[str, Any, Any]] = {}
    for index in dependency_order(plan, oracle_edges(plan)):
        call = plan[index]
        instance = call.get("_instance")
        tool = TOOLS[call["_tool"]]
        arguments = {
            key: documents.resolve(value, instance)
            for key, value in call.items()
            if not key.startswith("_")
        }
        if any(value is MISSING for value in arguments.values()):
            records[index] = ("skipped", None, None)
            continue
        alternatives = writes_of(call)
        choice = choices.get(index, 0)
        if tool.latent:
            value, error = call["_output"], None
        elif not tool.outcomes and len(alternatives) >= 2 and choice == len(alternatives) - 1:
            message = f"{tool.name} raised, as call #{index}'s choice says"
            error = {"type": "FakeToolError", "message": message}
            value = {"error": {**error, "tool": tool.name, "call": index}}
            documents.write(alternatives[choice], value, instance)
            records[index] = ("succeeded", None, error)
            continue
        else:
            value, error = fake_output(tool, tool.validate_arguments(arguments)), None
        if alternatives:
            documents.write(alternatives[choice], value, instance)
        records[index] = ("succeeded", value, error)
    return [records[i] for i in range(len(plan))], documents


# -- properties -----------------------------------------------------------------------------


@SLOW
@given(cases(), st.integers(0, 1000))
def test_calls_start_after_their_dependencies_and_run_once(
    case: tuple[GeneratedPlan, OutcomeAssignment], salt: int
) -> None:
    generated, choices = case
    fakes = fakes_for(choices, salt)
    result, events = run(generated, fakes)
    edges = oracle_edges(generated.plan)
    checked = generated.check()
    assert checked.graph is not None and set(checked.graph.edges) == edges

    settled: dict[int, int] = {}
    for at, event in enumerate(events):
        if event.event in ("call_succeeded", "call_failed", "call_skipped"):
            settled[event.call] = at
        elif event.event == "state_written":
            settled[event.entry.call] = at
    for at, event in enumerate(events):
        if event.event == "call_ready":
            for producer, consumer in edges:
                if consumer == event.call:
                    assert settled[producer] < at, (producer, consumer)

    started = [event.call for event in events.of("call_started")]
    assert len(started) == len(set(started))
    function_calls = [i for i in started if not TOOLS[generated.plan[i]["_tool"]].latent]
    assert len(fakes.calls) == len(function_calls)
    ran = {i for i, record in enumerate(result.calls) if record.status != "skipped"}
    assert ran == set(started)


@SLOW
@given(cases(), st.integers(0, 1000), st.integers(0, 1000))
def test_the_same_run_under_different_delays(
    case: tuple[GeneratedPlan, OutcomeAssignment], first_salt: int, second_salt: int
) -> None:
    generated, choices = case
    first, _ = run(generated, fakes_for(choices, first_salt))
    second, _ = run(generated, fakes_for(choices, second_salt))
    assert first.status == second.status
    assert first.state == second.state
    assert first.instances == second.instances
    assert [(r.status, r.output, r.error, r.reason, r.arguments) for r in first.calls] == [
        (r.status, r.output, r.error, r.reason, r.arguments) for r in second.calls
    ]
    assert per_path(first) == per_path(second)


def per_path(result: obelisk.RunResult) -> dict[tuple[Any, str], list[Any]]:
    paths: dict[tuple[Any, str], list[Any]] = {}
    for entry in result.log:
        paths.setdefault((entry.instance, entry.path), []).append((entry.call, entry.value))
    return paths


@SLOW
@given(cases(), st.integers(0, 1000))
def test_a_call_runs_iff_its_reads_exist(
    case: tuple[GeneratedPlan, OutcomeAssignment], salt: int
) -> None:
    generated, choices = case
    result, _ = run(generated, fakes_for(choices, salt))
    records, documents = expected_run(generated, choices)
    assert [(r.status, r.output, r.error) for r in result.calls] == records
    assert result.state == documents.base
    for instance, layer in documents.layers.items():
        assert result.instances.get(instance, result.state) == {**documents.base, **layer}
    assert result.status == "completed"
    for record in result.calls:
        assert (record.reason is not None) == (record.status == "skipped")


HASH_SEED_SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import obelisk
    from obelisk.testing import FakeTools, OutcomeAssignment
    from plan_tools import TOOLS
    case = json.loads(sys.argv[2])
    choices = OutcomeAssignment(
        {int(k): v for k, v in case["choices"].items()},
        {int(k): v for k, v in case["alternatives"].items()},
    )
    fakes = FakeTools(TOOLS, choices=choices, seed=1)
    result = obelisk.run_sync(case["plan"], fakes, input=case["input"], on_event=fakes.observe)
    graph = obelisk.check(case["plan"], TOOLS, input=case["input"]).graph
    print(json.dumps({
        "state": result.state,
        "instances": result.instances,
        "calls": [[r.status, r.output, r.error] for r in result.calls],
        "edges": sorted(graph.edges),
        "cycles": graph.cycles,
        "log": sorted([e.instance or "", e.path, e.call] for e in result.log),
    }, sort_keys=True))
    """
)


@settings(SLOW, max_examples=4, deadline=None)
@given(cases())
def test_runs_do_not_depend_on_the_hash_seed(
    case: tuple[GeneratedPlan, OutcomeAssignment],
) -> None:
    generated, choices = case
    payload = json.dumps(
        {
            "plan": generated.plan,
            "input": generated.input,
            "choices": dict(choices),
            "alternatives": choices.alternatives,
        }
    )
    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", HASH_SEED_SCRIPT, str(Path(__file__).parent), payload],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
            timeout=120,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
