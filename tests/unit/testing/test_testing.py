"""obelisk.testing: strategies and doubles do what docs/testing.md says."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import obelisk
import obelisk.testing
from obelisk.errors import MissingDependencyError, UsageError
from obelisk.testing import (
    INVALID_CODES,
    FakeToolError,
    FakeTools,
    GeneratedPlan,
    RecordingSubscriber,
    expressions,
    inputs,
    invalid_plans,
    outcome_assignments,
    plans,
    references,
    spellings,
    tool_outputs,
)

SLOW = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Customer(BaseModel):
    id: str
    email: str
    vip: bool = False


@obelisk.tool
def get_customer(customer_id: str) -> Customer:
    """Look a customer up."""
    return Customer(id=customer_id, email=f"{customer_id}@example.com")


@obelisk.tool
def charge(customer_id: str, amount: float) -> dict[str, Any]:
    """Charge a customer."""
    return {"customer_id": customer_id, "amount": amount}


@obelisk.tool
async def echo(value: Any) -> Any:
    """Return the value."""
    return value


@obelisk.tool(outcomes=["approved", "declined"])
def review(amount: float) -> obelisk.Outcome:
    """Approve small amounts."""
    return obelisk.Outcome("approved" if amount < 100 else "declined", amount)


@obelisk.tool
def count(items: list[Any]) -> int:
    """Count items."""
    return len(items)


@obelisk.tool
def send_email(to: str, subject: str, body: Any = None, urgent: bool = False) -> str:
    """Send an email."""
    return f"sent to {to}"


SUMMARIZE = obelisk.Tool.from_schema(
    {
        "name": "summarize",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string"},
    }
)
TOOLS = [get_customer, charge, echo, review, count, send_email, SUMMARIZE]
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "amount": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["customer", "amount"],
}


def test_all_is_pinned_and_sorted() -> None:
    assert obelisk.testing.__all__ == [
        "ERROR_ARM_SCHEMA",
        "FakeToolError",
        "FakeTools",
        "GeneratedPlan",
        "INVALID_CODES",
        "InvalidPlan",
        "OutcomeAssignment",
        "RecordingSubscriber",
        "ScriptedModel",
        "expressions",
        "inputs",
        "invalid_plans",
        "outcome_assignments",
        "plans",
        "references",
        "spellings",
        "tool_outputs",
    ]
    assert sorted(obelisk.testing.__all__) == obelisk.testing.__all__
    for name in obelisk.testing.__all__:
        assert getattr(obelisk.testing, name) is not None
    assert obelisk.testing.ScriptedModel is obelisk.ScriptedModel


# -- expressions -------------------------------------------------------------------------


@given(references())
def test_references_parse_to_one_reference(text: str) -> None:
    node = obelisk.parse_expression(text)
    assert type(node).__name__ == "Reference"
    assert obelisk.parse_expression(str(node)) == node


@given(expressions(), st.data())
def test_expressions_parse_and_every_spelling_gives_the_same_node(
    text: str, data: st.DataObject
) -> None:
    node = obelisk.parse_expression(text)
    again = data.draw(spellings(text))
    assert obelisk.parse_expression(again) == node


@given(expressions(paths=["†state.user", "†input.id"], max_segments=0, wildcards=False))
def test_expressions_over_given_paths_use_only_those_paths(text: str) -> None:
    node = obelisk.parse_expression(text)
    assert {str(ref) for ref in node.references} <= {"†state.user", "†input.id"}


@given(references(kinds=["catalog"], quoted=False, wildcards=False))
def test_references_keep_to_the_kinds_and_plain_names(text: str) -> None:
    assert text.startswith("†catalog")
    assert "[*]" not in text and "'" not in text and '"' not in text


def test_expression_arguments_are_checked() -> None:
    with pytest.raises(UsageError, match="name"):
        references(kinds=["not a name"])
    with pytest.raises(UsageError, match="plain references"):
        references(paths=["†state.a || †state.b"])
    with pytest.raises(obelisk.ReferenceSyntaxError):
        spellings("†state..x")


# -- plans ---------------------------------------------------------------------------------


@settings(SLOW, max_examples=150)
@given(plans(TOOLS, input_schema=INPUT_SCHEMA, instances=True))
def test_every_generated_plan_checks_without_errors(generated: GeneratedPlan) -> None:
    result = obelisk.check(generated.plan, TOOLS, input=generated.input)
    assert result.errors == ()
    assert not [d for d in result.warnings if d.code == "unreachable_call"]
    assert Draft202012Validator(INPUT_SCHEMA).is_valid(generated.input)
    assert 1 <= len(generated.plan) <= 20
    assert json.loads(generated.to_json()) == generated.plan


@settings(SLOW, max_examples=60)
@given(plans(TOOLS, branching=False, dependency_order=True, min_calls=3, max_calls=8))
def test_dependency_order_and_no_branching(generated: GeneratedPlan) -> None:
    result = generated.check()
    assert result.ok and result.graph is not None
    assert all(a < b for a, b in result.graph.edges)  # every call after what it reads
    for call in generated.plan:
        assert "||" not in call.get("_outputPath", "") or call["_tool"] == "review"
        # expressions only: a literal string (or a "††" escape) may hold "||" as text
        expressions = [
            v
            for k, v in call.items()
            if not k.startswith("_")
            and isinstance(v, str)
            and v.startswith("†")
            and not v.startswith("††")
        ]
        assert all("||" not in v and "&&" not in v for v in expressions)


def _shape_counts(draws: int) -> Counter[str]:
    """How often plans() used each feature, over ``draws`` plans."""
    seen: Counter[str] = Counter()

    @settings(SLOW, max_examples=draws, database=None)
    @given(plans(TOOLS, input_schema=INPUT_SCHEMA, instances=True))
    def collect(generated: GeneratedPlan) -> None:
        for call in generated.plan:
            for key, value in call.items():
                if key == "_outputPath":
                    seen["error arm"] += value.endswith("_error")
                    seen["fan-out"] += "&&" in value
                elif key == "_instance":
                    seen["instance"] += 1
                elif key == "_output":
                    seen["latent output"] += 1
                elif isinstance(value, str) and value.startswith("†") and key != "_tool":
                    seen["input read"] += "†input" in value
                    seen["state read"] += "†state" in value
                    seen["fallback"] += "||" in value
                    seen["gate"] += "&&" in value
                    seen["escaped"] += value.startswith("††")

    collect()
    return seen


def test_plans_use_every_feature() -> None:
    seen = _shape_counts(150)
    for feature in (
        "error arm",
        "fan-out",
        "instance",
        "latent output",
        "input read",
        "state read",
        "fallback",
        "gate",
    ):
        assert seen[feature] > 0, (feature, seen)


def test_references_feed_only_compatible_parameters() -> None:
    # count takes a list: only the input's tags (a list of strings) or an
    # any-typed output (echo's) may feed it, never a customer or a charge
    @settings(SLOW, max_examples=100, database=None)
    @given(plans(TOOLS, input_schema=INPUT_SCHEMA, branching=False))
    def check_items(generated: GeneratedPlan) -> None:
        writers = {}
        for position, call in enumerate(generated.plan):
            writers[f"†state.r{position}"] = call["_tool"]
        for call in generated.plan:
            items = call.get("items")
            if call["_tool"] == "count" and isinstance(items, str) and items.startswith("†state"):
                assert writers[items.split(".")[0] + "." + items.split(".")[1]] == "echo"

    check_items()


def test_a_failing_property_shrinks_to_a_small_plan() -> None:
    smallest = find(
        plans(TOOLS, input_schema=INPUT_SCHEMA),
        lambda g: any(
            call["_tool"] == "send_email" and "†input" in json.dumps(call, ensure_ascii=False)
            for call in g.plan
        ),
        settings=settings(database=None, max_examples=2000),
    )
    assert len(smallest.plan) <= 2
    assert smallest.check().ok


def test_plans_arguments_are_checked() -> None:
    with pytest.raises(UsageError, match="min_calls"):
        plans(TOOLS, min_calls=5, max_calls=2)
    with pytest.raises(UsageError, match="max_calls"):
        plans(TOOLS, max_calls=-1)
    with pytest.raises(UsageError, match="at least one tool"):
        plans([])
    with pytest.raises(UsageError, match="input_schema"):
        plans(TOOLS, input_schema="object")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="JSON schema"):
        inputs({"type": "no such type"})


@given(plans([get_customer], max_calls=0, min_calls=0))
def test_an_empty_plan_is_allowed(generated: GeneratedPlan) -> None:
    assert generated.plan == [] and generated.check().ok


# -- invalid plans ------------------------------------------------------------------------


@settings(SLOW, max_examples=200)
@given(invalid_plans(TOOLS, input_schema=INPUT_SCHEMA))
def test_every_invalid_plan_gives_exactly_its_code(case: Any) -> None:
    result = obelisk.check(case.plan, TOOLS, input=case.input)
    assert {d.code for d in result.errors} == {case.code}, (case.plan, result.errors)


@pytest.mark.parametrize("code", INVALID_CODES)
def test_each_code_can_be_drawn_alone(code: str) -> None:
    @settings(SLOW, max_examples=15, database=None)
    @given(invalid_plans(TOOLS, codes=[code]))
    def check_code(case: Any) -> None:
        assert case.code == code
        assert {d.code for d in case.check().errors} == {code}

    check_code()


def test_invalid_plans_say_which_codes_a_registry_cannot_make() -> None:
    with pytest.raises(UsageError, match="outcome_mismatch"):
        invalid_plans([get_customer], codes=["outcome_mismatch"])
    with pytest.raises(UsageError, match="knows no code"):
        invalid_plans(TOOLS, codes=["nonsense"])


# -- documents and outputs ----------------------------------------------------------------


@given(st.sampled_from(TOOLS).flatmap(lambda t: st.tuples(st.just(t), tool_outputs(t))))
def test_tool_outputs_fit_the_output_schema(case: tuple[obelisk.Tool, Any]) -> None:
    tool, value = case
    assert tool.validate_output(value) == []
    if tool.output_schema is not None:
        assert Draft202012Validator(tool.output_schema).is_valid(value)


NESTED = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"$ref": "#/$defs/item"},
            "minItems": 1,
            "maxItems": 3,
        },
        "mode": {"enum": ["a", "b"]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "when": {"type": "string", "format": "date"},
    },
    "required": ["items", "code"],
    "additionalProperties": False,
    "$defs": {
        "item": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "tag": {"type": ["string", "null"]},
            },
            "required": ["n"],
        }
    },
}


@given(inputs(NESTED))
def test_inputs_fit_nested_schemas_with_refs(document: Any) -> None:
    assert Draft202012Validator(NESTED).is_valid(document)


def test_recursive_and_remote_schemas_are_refused() -> None:
    recursive = {
        "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
        "$ref": "#/$defs/n",
    }
    with pytest.raises(UsageError, match="recursive"):
        inputs(recursive)
    with pytest.raises(UsageError, match="local"):
        inputs({"$ref": "https://example.com/schema.json"})


# -- outcome assignments ------------------------------------------------------------------

BRANCHING = [
    {"_tool": "charge", "customer_id": "c", "amount": 5, "_outputPath": "†state.ok || †state.err"},
    {"_tool": "review", "amount": 5, "_outputPath": "†state.yes || †state.no"},
    {"_tool": "echo", "value": 1, "_outputPath": "†state.plain"},
    {"_tool": "echo", "value": "†state.yes", "_outputPath": "†state.seen"},
]


@given(outcome_assignments(BRANCHING))
def test_outcome_assignments_cover_every_branching_call(choices: Any) -> None:
    assert set(choices) == {0, 1}
    assert all(0 <= choices[i] < 2 for i in choices)
    assert choices.alternatives == {0: 2, 1: 2}


@given(outcome_assignments(BRANCHING))
def test_fakes_write_the_alternatives_drawn(choices: Any) -> None:
    fakes = FakeTools(TOOLS, choices=choices, outputs={"charge": {"done": True}})
    result = obelisk.run_sync(BRANCHING, fakes, on_event=fakes.observe)
    assert ("ok" in result.state) == (choices[0] == 0)
    assert ("err" in result.state) == (choices[0] == 1)
    if choices[0] == 1:
        assert result.state["err"]["error"]["type"] == "FakeToolError"
    assert ("yes" in result.state) == (choices[1] == 0)
    assert ("seen" in result.state) == (choices[1] == 0)
    assert result.status == "completed"


def test_choices_without_observe_fail_the_calls_with_the_fix() -> None:
    fakes = FakeTools(TOOLS, choices={0: 1})
    result = obelisk.run_sync(BRANCHING[:1], fakes)
    assert result.calls[0].error is not None
    assert "on_event=fakes.observe" in result.calls[0].error["message"]


# -- fakes ---------------------------------------------------------------------------------


def test_fakes_keep_names_schemas_and_kinds() -> None:
    fakes = FakeTools(TOOLS)
    assert fakes.names() == [t.name for t in TOOLS]
    for real in TOOLS:
        fake = fakes[real.name]
        assert fake.parameters == real.parameters
        assert fake.output_schema == real.output_schema
        assert fake.is_async == real.is_async and fake.latent == real.latent
        assert fake.outcomes == real.outcomes
    assert obelisk.Registry.coerce(fakes) is fakes


def test_generated_outputs_fit_and_repeat_for_equal_arguments() -> None:
    plan = [
        {"_tool": "get_customer", "customer_id": "c-1", "_outputPath": "†state.a"},
        {"_tool": "get_customer", "customer_id": "c-1", "_outputPath": "†state.b"},
        {"_tool": "get_customer", "customer_id": "c-2", "_outputPath": "†state.c"},
        {"_tool": "count", "items": [1, 2], "_outputPath": "†state.n"},
    ]
    first = obelisk.run_sync(plan, FakeTools(TOOLS, seed=3))
    again = obelisk.run_sync(plan, FakeTools(TOOLS, seed=3))
    other = obelisk.run_sync(plan, FakeTools(TOOLS, seed=4))
    assert first.status == "completed"
    assert first.state == again.state
    assert first.state["a"] == first.state["b"]
    assert first.state != other.state
    Customer.model_validate(first.state["a"])
    assert isinstance(first.state["n"], int)


def test_scripted_outputs_delays_failures_and_recorded_calls() -> None:
    fakes = FakeTools(
        TOOLS,
        outputs={
            "get_customer": lambda args: {"id": args["customer_id"], "email": "x@example.com"},
            "count": 7,
        },
        delays={"get_customer": 0.05},
        failures={"charge": ValueError("card declined"), "send_email": True},
    )
    plan = [
        {"_tool": "get_customer", "customer_id": "c-1", "_outputPath": "†state.customer"},
        {"_tool": "count", "items": [], "_outputPath": "†state.n"},
        {
            "_tool": "charge",
            "customer_id": "†state.customer.id",
            "amount": 3,
            "_outputPath": "†state.paid || †state.failed",
        },
        {"_tool": "send_email", "to": "†state.customer.email", "subject": "hi"},
    ]
    started = time.perf_counter()
    result = obelisk.run_sync(plan, fakes)
    assert time.perf_counter() - started >= 0.05
    assert result.state["customer"] == {"id": "c-1", "email": "x@example.com"}
    assert result.state["n"] == 7
    assert result.state["failed"]["error"]["message"] == "card declined"
    assert result.calls[3].status == "failed"
    assert result.calls[3].error == {
        "type": "FakeToolError",
        "message": "scripted failure of send_email",
    }
    assert sorted(name for name, _ in fakes.calls) == [
        "charge",
        "count",
        "get_customer",
        "send_email",
    ]
    assert fakes.calls_to("charge") == [{"customer_id": "c-1", "amount": 3.0}]
    fakes.reset()
    assert fakes.calls == []


def test_calls_are_recorded_from_many_threads() -> None:
    fakes = FakeTools([send_email], delays={"send_email": 0.01})
    plan = [{"_tool": "send_email", "to": f"u{i}", "subject": "s"} for i in range(40)]
    result = obelisk.run_sync(plan, fakes, concurrency=16)
    assert result.status == "completed"
    assert sorted(args["to"] for _, args in fakes.calls) == sorted(f"u{i}" for i in range(40))
    assert threading.active_count() >= 1


def test_fakes_run_in_the_loop() -> None:
    fakes = FakeTools(TOOLS, outputs={"get_customer": {"id": "c", "email": "c@x"}})
    model = obelisk.ScriptedModel(
        [
            {
                "calls": [{"_tool": "get_customer", "customer_id": "c", "_outputPath": "†state.c"}],
                "output": None,
            },
            {"calls": [], "output": "done"},
        ]
    )
    result = obelisk.Loop(model, fakes).run_sync()
    assert result.output == "done" and result.state == {"c": {"id": "c", "email": "c@x"}}
    assert fakes.calls == [("get_customer", {"customer_id": "c"})]


def test_fake_arguments_are_validated_like_the_real_tool() -> None:
    result = obelisk.run_sync(
        [{"_tool": "charge", "customer_id": "c", "amount": "†input.amount"}],
        FakeTools(TOOLS),
        input={"amount": "lots"},
    )
    assert result.calls[0].error is not None
    assert result.calls[0].error["type"] == "ArgumentValidationError"


def test_fake_scripts_are_checked() -> None:
    with pytest.raises(UsageError, match="unknown tools: nope"):
        FakeTools(TOOLS, outputs={"nope": 1})
    result = obelisk.run_sync(
        [{"_tool": "count", "items": []}], FakeTools(TOOLS, delays={"count": -1})
    )
    assert result.calls[0].error is not None and "seconds" in result.calls[0].error["message"]
    assert issubclass(FakeToolError, RuntimeError)


def test_recording_subscriber() -> None:
    events = RecordingSubscriber()
    obelisk.run_sync(
        [
            {"_tool": "count", "items": [1], "_outputPath": "†state.n"},
            {"_tool": "count", "items": ["†state.gone"], "_outputPath": "†state.m"},
            {"_tool": "send_email", "to": "x", "subject": "y", "_outputPath": "†state.gone"},
        ],
        FakeTools(TOOLS, outputs={"count": 1}, failures={"send_email": True}),
        on_event=events,
    )
    assert events.names()[0] == "run_started" and events.names()[-1] == "run_finished"
    assert sorted(e.call for e in events.of("call_started")) == [0, 2]  # type: ignore[attr-defined]
    assert [e.event for e in events.for_call(0)] == [
        "call_ready",
        "call_started",
        "call_succeeded",
        "state_written",
    ]
    assert len(events.of("call_skipped")) == 1
    assert all("time" not in d for d in events.to_dicts())
    assert len(events) == len(list(events))
    events.clear()
    assert len(events) == 0


# -- packaging -----------------------------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("missing", ["hypothesis", "hypothesis_jsonschema"])
def test_importing_without_the_extra_names_it(missing: str) -> None:
    done = run_python(
        f"import sys\nsys.modules[{missing!r}] = None\n"
        "from obelisk.errors import MissingDependencyError\n"
        "try:\n    import obelisk.testing\n"
        "except MissingDependencyError as e:\n"
        "    assert isinstance(e, ImportError)\n    print(e)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'obelisk[testing]'" in done.stdout
    assert "pip install '.[testing]'" in done.stdout
    assert issubclass(MissingDependencyError, ImportError)


def test_import_obelisk_imports_neither_testing_nor_hypothesis() -> None:
    done = run_python(
        "import sys, obelisk, obelisk.cli.app\n"
        "print(sorted(m for m in sys.modules if m.startswith(('hypothesis', 'obelisk.testing'))))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_schema_sampler_follows_bounds() -> None:
    from obelisk.interpreter.simulate.samples import SchemaSampler

    sampler = SchemaSampler(
        {"type": "integer", "minimum": 3, "maximum": 5, "description": "three to five"}
    )
    import random

    values = {sampler.sample(random.Random(seed)) for seed in range(50)}
    assert values <= {3, 4, 5} and len(values) > 1
    with pytest.raises(UsageError, match="give this tool a fixed value instead"):
        SchemaSampler({"type": "string", "pattern": "^[0-9]{40}$"}).sample(random.Random(0))


def test_async_fakes_stay_async() -> None:
    fakes = FakeTools([echo], delays={"echo": 0.01})
    assert asyncio.iscoroutinefunction(fakes["echo"].function)
    result = obelisk.run_sync(
        [{"_tool": "echo", "value": i, "_outputPath": f"†state.v{i}"} for i in range(20)], fakes
    )
    assert result.status == "completed"
