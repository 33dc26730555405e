"""Properties of parse_plan (docs/language.md, docs/diagnostics.md).

* parse -> serialize -> parse is the identity on plans, and serializing gives
  back the JSON that was parsed, in all three shapes, for plans that merely parse
  and for plans drawn by obelisk.testing.plans (which check);
* every ``†`` string in the arguments is found, at its path, and nothing else;
* whatever it is given, parse_plan returns a Plan or raises PlanError.
"""

from __future__ import annotations

import json
from typing import Any

import strategies
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from plan_tools import INPUT_SCHEMA, TOOLS

import obelisk.testing as testing
from obelisk.diagnostics import Collector
from obelisk.errors import PlanError
from obelisk.grammar import parse_expression
from obelisk.interpreter.plan.call import parse_reported_call
from obelisk.interpreter.plan.model import META_KEYS, Plan
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.plan.plain import plain_call
from obelisk.limits import DEFAULT_LIMITS


def calls_of(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    return data["calls"] if "calls" in data else data["plan"]


def dagger_strings(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[Any, str]]:
    """Independent walk: ``(path, text)`` of every string starting with ``†``."""
    if isinstance(value, str):
        return [(path, value)] if value.startswith("†") else []
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in dagger_strings(item, (*path, key))]
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in dagger_strings(item, (*path, i))]
    return []


def parse_or_plan_error(source: Any) -> Plan | None:
    try:
        plan = parse_plan(source)
    except PlanError as error:
        assert error.errors, "a PlanError must carry at least one error"
        return None
    assert isinstance(plan, Plan)
    assert all(d.severity == "warning" for d in plan.diagnostics)
    return plan


@given(strategies.plan_documents(), st.booleans())
def test_plan_round_trip(data: Any, ensure_ascii: bool) -> None:
    text = json.dumps(data, ensure_ascii=ensure_ascii)
    plan = parse_plan(text)
    assert parse_plan(plan.to_json()) == plan
    assert json.loads(plan.to_json()) == json.loads(text)
    assert plan.to_data() == data
    assert parse_plan(data) == plan
    assert parse_plan(text.encode("utf-8")) == plan
    check_plan_matches_its_json(plan, data)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(testing.plans(TOOLS, input_schema=INPUT_SCHEMA, instances=True), st.booleans())
def test_generated_plans_round_trip(generated: testing.GeneratedPlan, ensure_ascii: bool) -> None:
    """parse -> serialize -> parse over plans that check, as a model writes them."""
    text = json.dumps(generated.plan, ensure_ascii=ensure_ascii)
    plan = parse_plan(text)
    assert parse_plan(plan.to_json()) == plan
    assert json.loads(plan.to_json()) == generated.plan
    check_plan_matches_its_json(plan, generated.plan)


def check_plan_matches_its_json(plan: Plan, data: Any) -> None:
    """Every field of every call is what the JSON says (one generation, two properties)."""
    calls = calls_of(data)
    assert len(plan) == len(calls)
    expected_form = (
        "list" if isinstance(data, list) else ("object" if "calls" in data else "message")
    )
    assert plan.form == expected_form
    assert plan.mode == (None if isinstance(data, list) else data.get("mode"))
    unknown = 0
    for index, (call, raw) in enumerate(zip(plan, calls, strict=True)):
        assert call.index == index
        assert call.tool == raw["_tool"]
        arguments = {k: v for k, v in raw.items() if not k.startswith("_")}
        assert call.arguments == arguments
        assert call.extra == {
            k: v for k, v in raw.items() if k.startswith("_") and k not in META_KEYS
        }
        unknown += len(call.extra)
        assert call.has_output == ("_output" in raw)
        assert call.id == raw.get("_id")
        assert call.output_path == raw.get("_outputPath")
        assert call.output_method == raw.get("_outputMethod", "set")
        if call.output_path is not None:
            assert call.target == parse_expression(call.output_path)
        found = [(e.path, e.text) for e in call.expressions]
        assert found == dagger_strings(arguments)
        for expression in call.expressions:
            assert expression.expression == parse_expression(expression.text)
    assert [d.code for d in plan.diagnostics] == ["unknown_meta"] * unknown


@given(st.one_of(strategies.plan_documents().map(calls_of), st.lists(strategies.json_values)))
@example([{"_tools": None, "_tool": "0"}])
def test_the_fast_path_builds_what_the_general_parser_builds(calls: list[Any]) -> None:
    """plan/plain.py: a call the fast path takes is the general parser's, exactly, and
    it declines every call the general parser has something to say about, and every
    delegate's call (``_tools``, whose value only the general parser scans for limits)."""
    for index, raw in enumerate(calls):
        out = Collector()
        general = parse_reported_call(raw, index, out, False, DEFAULT_LIMITS)
        fast = plain_call(raw, index, DEFAULT_LIMITS) if type(raw) is dict else None
        if fast is None:
            assert out.diagnostics or "_tools" in raw
        else:
            assert out.diagnostics == [] and repr(fast) == repr(general)


@given(strategies.json_values)
@example({"calls": [{"_tool": "t", "x": '†state[\'a""""\\q\']'}]})
def test_any_json_value_gives_a_plan_or_a_plan_error(value: Any) -> None:
    parse_or_plan_error(value)
    parse_or_plan_error([value])
    parse_or_plan_error({"calls": [value]})


@given(strategies.json_values)
def test_any_json_text_gives_a_plan_or_a_plan_error(value: Any) -> None:
    text = json.dumps(value)
    plan = parse_or_plan_error(text)
    if plan is not None:
        assert parse_plan(plan.to_json()) == plan
    parse_or_plan_error(text.encode("utf-8"))


@given(st.one_of(st.text(), st.text().map(lambda s: "[" + s), st.text().map(lambda s: "†" + s)))
def test_any_text_gives_a_plan_or_a_plan_error(text: str) -> None:
    parse_or_plan_error(text)


@given(st.binary())
@example(b"\xef\xbb\xbf[]")
@example(b"\xef\xbb\xbf[\xff]")
def test_any_bytes_give_a_plan_or_a_plan_error(data: bytes) -> None:
    parse_or_plan_error(data)
