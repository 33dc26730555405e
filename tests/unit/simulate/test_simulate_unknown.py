"""Dry runs and values nobody can predict (docs/simulate.md, "Unknown values").

A tool with neither a stub nor an output schema (every tool read from an OpenAI
function description) gives an *unknown* value, not ``null``: both arms of the
calls around it are explored, the calls reading it run with unknown arguments, the
report lists them and counts them in the approval load, and a person reads so
before the scenarios.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import obelisk
from obelisk import UnknownValue


def openai_spec(name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An OpenAI function tool: a name, a description and parameters; no output schema."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} (an OpenAI function tool)",
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
        **extra,
    }


def never(**arguments: Any) -> Any:
    raise AssertionError("a dry run never calls a tool that is not pure")


SPECS = {
    "lookup": openai_spec("lookup", {"email": {"type": "string"}}),
    "charge_card": openai_spec(
        "charge_card",
        {"card": {"type": "string"}, "amount": {"type": "number"}},
        requires_approval=True,
    ),
    "notify": openai_spec("notify", {"message": {"type": "string"}}),
}
LOOKUP = obelisk.Tool.from_schema(SPECS["lookup"], function=never)
CHARGE = obelisk.Tool.from_schema(SPECS["charge_card"], function=never)
NOTIFY = obelisk.Tool.from_schema(SPECS["notify"], function=never)
TOOLS = [LOOKUP, CHARGE, NOTIFY]

# #4 charge_card reads a field of #0 lookup's result, and has an error arm
PLAN: list[dict[str, Any]] = [
    {"_tool": "lookup", "email": "†input.email",
     "_outputPath": "†state.customer || †state.missing"},
    {"_tool": "notify", "message": "†state.missing.error.message", "_outputPath": "†state.n1"},
    {"_tool": "notify", "message": "checking out", "_outputPath": "†state.n2"},
    {"_tool": "notify", "message": "†input.email", "_outputPath": "†state.n3"},
    {"_tool": "charge_card", "card": "†state.customer.card", "amount": "†input.amount",
     "_outputPath": "†state.receipt || †state.declined"},
    {"_tool": "notify", "message": "†state.declined.error.message", "_outputPath": "†state.alert"},
]  # fmt: skip
INPUT = {"email": "ada@example.com", "amount": 12.5}


def dry_run(**options: Any) -> obelisk.SimulationReport:
    return obelisk.simulate(PLAN, TOOLS, input=INPUT, **options)


def test_a_value_nobody_can_predict_is_unknown_not_null() -> None:
    first = dry_run().scenarios[0]
    assert first.state["customer"] == UnknownValue("#0 lookup")
    assert first.state["customer"] is not None
    assert first.calls[0].output == UnknownValue("#0 lookup")
    # its JSON form names the call it comes from
    assert first.to_dict()["state"]["customer"] == {"$unknown": "#0 lookup"}
    assert first.unknown["#0 lookup"] == "no output schema and no stub"


def test_both_arms_of_its_call_and_of_the_call_reading_it_are_explored() -> None:
    report = dry_run()
    assert [s.arms for s in report.scenarios] == [
        {"#0 lookup": "†state.customer", "#4 charge_card": "†state.receipt"},
        {"#0 lookup": "†state.customer", "#4 charge_card": "error arm"},
        {"#0 lookup": "error arm"},
    ]
    assert (report.explored, report.total) == (3, 3)
    declined = report.scenarios[1]
    assert declined.ran == ["#0 lookup", "#2 notify", "#3 notify", "#4 charge_card", "#5 notify"]
    assert declined.state["declined"]["error"]["type"] == "SimulatedFailure"


def test_calls_reading_it_run_with_unknown_arguments() -> None:
    report = dry_run()
    assert (
        report.never_run == {}
    )  # it was {"#4 charge_card": "... is null, which has no field 'card'"}
    charge = report.scenarios[0].calls[4]
    assert charge.status == "succeeded"
    assert charge.arguments == {"card": UnknownValue("#0 lookup", "card"), "amount": 12.5}
    assert report.scenarios[0].unknown_arguments == {"#4 charge_card": ["#0 lookup"]}
    assert UnknownValue("#0 lookup", "card").to_json() == {"$unknown": "#0 lookup", "path": "card"}


def test_the_report_lists_unknown_values_and_counts_their_calls_in_the_approval_load() -> None:
    report = dry_run()
    labels = ["#0 lookup", "#1 notify", "#2 notify", "#3 notify", "#4 charge_card", "#5 notify"]
    assert report.unknown == dict.fromkeys(labels, "no output schema and no stub")
    assert list(report.unknown) == labels  # in plan order
    assert report.unknown_arguments == {"#4 charge_card": ["#0 lookup"]}
    assert report.needing_approval == ["#4 charge_card"]
    assert "#4 charge_card" in report.side_effects
    assert report.approval_load == pytest.approx(1 / 6)
    line = report.approval_line()
    assert line == (
        "approval load: 1 of 6 side-effecting calls need a person (17%), "
        "with unknown arguments: #4 charge_card"
    )
    summary = json.loads(json.dumps(report.to_dict()))["summary"]  # plain JSON throughout
    assert summary["unknown"]["#0 lookup"] == "no output schema and no stub"
    assert summary["unknown_arguments"] == {"#4 charge_card": ["#0 lookup"]}


def test_the_summary_a_person_approves_says_so_above_the_scenarios() -> None:
    checked = obelisk.check(PLAN, TOOLS, INPUT)
    lines = obelisk.Approval(checked, dry_run()).summary_lines()
    assert lines[0] == "dry run: 3 of 3 scenarios"
    assert lines[1:4] == [
        "  unknown values: nothing predicts these results; every arm is explored, "
        "and the calls reading them run with unknown arguments",
        "    #0 lookup: no output schema and no stub; read by #4 charge_card",
        "    #1 notify, #2 notify, #3 notify, #4 charge_card, #5 notify: "
        "no output schema and no stub; not read",
    ]
    first_scenario = next(i for i, line in enumerate(lines) if line.startswith("  scenario 1"))
    assert all("unknown" not in line for line in lines[first_scenario:-1])
    assert not any("never runs" in line for line in lines)
    assert lines[-1] == (
        "  approval load: 1 of 6 side-effecting calls need a person, "
        "with unknown arguments: #4 charge_card"
    )


def test_a_generated_object_without_the_field_says_so() -> None:
    @obelisk.tool(output_schema={"type": "object"})
    def profile(email: str) -> Any:
        """A profile: any object (the generator makes {})."""
        raise AssertionError("not run")

    plan = [
        {"_tool": "profile", "email": "a", "_outputPath": "†state.customer"},
        {"_tool": "notify", "message": "†state.customer.card", "_outputPath": "†state.n"},
    ]
    report = obelisk.simulate(plan, [profile, NOTIFY])
    assert report.scenarios[0].state["customer"] == {}
    assert report.scenarios[0].skipped == {
        "#1 notify": "†state.customer.card: the generated value has no field 'card' "
        "(#0 profile wrote †state.customer, generated from its output schema; a stub decides)"
    }
    assert "was not written" not in report.never_run["#1 notify"]


def test_an_approval_rule_cannot_tell_from_unknown_arguments_so_it_asks() -> None:
    @obelisk.tool(requires_approval=lambda arguments: arguments["amount"] > 50)
    def refund(card: str, amount: float) -> str:
        """Refund; above 50 a person approves."""
        raise AssertionError("not run")

    plan = [
        {"_tool": "lookup", "email": "a", "_outputPath": "†state.c"},
        {"_tool": "refund", "card": "x", "amount": "†state.c.total", "_outputPath": "†state.r"},
        {"_tool": "refund", "card": "x", "amount": 10, "_outputPath": "†state.s"},
    ]
    report = obelisk.simulate(plan, [LOOKUP, refund])
    assert report.needing_approval == ["#1 refund"]  # #2 is known not to ask


def test_validation_ignores_unknown_values_but_not_real_problems() -> None:
    plan = [
        {"_tool": "lookup", "email": "a", "_outputPath": "†state.c"},
        {"_tool": "charge_card", "card": "†state.c.card", "amount": "†state.c.total",
         "_outputPath": "†state.r"},
        {"_tool": "charge_card", "card": "†state.c.card", "amount": "†input.amount",
         "_outputPath": "†state.s"},
    ]  # fmt: skip
    report = obelisk.simulate(plan, TOOLS, input={"amount": "twelve"})
    first = report.scenarios[0]
    assert "#1 charge_card" in first.ran
    assert list(first.failed) == ["#2 charge_card"]
    assert "amount" in first.failed["#2 charge_card"]


def test_results_computed_from_unknown_arguments_are_unknown() -> None:
    @obelisk.tool(pure=True)
    def shout(message: str) -> str:
        """Pure: a dry run runs it, when its arguments are known."""
        return message.upper()

    called: list[Any] = []

    def stub(arguments: dict[str, Any]) -> str:
        called.append(arguments)
        return "sent"

    plan = [
        {"_tool": "lookup", "email": "a", "_outputPath": "†state.c"},
        {"_tool": "shout", "message": "†state.c.name", "_outputPath": "†state.loud"},
        {"_tool": "shout", "message": "hi", "_outputPath": "†state.hi"},
        {"_tool": "notify", "message": "†state.loud", "_outputPath": "†state.sent"},
    ]
    report = obelisk.simulate(plan, [LOOKUP, shout, NOTIFY], stubs={"notify": stub})
    state = report.scenarios[0].state
    assert state["loud"] == UnknownValue("#1 shout") and state["hi"] == "HI"
    assert state["sent"] == UnknownValue("#3 notify") and called == []
    assert report.unknown["#1 shout"] == "a pure tool, not run: its arguments are unknown"
    assert report.unknown["#3 notify"] == (
        "its stub is a function of its arguments, and they are unknown"
    )
    assert report.unknown_arguments == {"#1 shout": ["#0 lookup"], "#3 notify": ["#1 shout"]}


def test_reads_through_unknown_values_are_unknown_in_every_expression() -> None:
    plan = [
        {"_tool": "lookup", "email": "a", "_outputPath": "†state.c"},
        {"_tool": "notify", "message": "†state.c.names[0].first", "_outputPath": "†state.a"},
        {"_tool": "notify", "message": "†state.nope || †state.c.name", "_outputPath": "†state.b"},
        {"_tool": "notify", "message": "†state.c.id && †state.c.name", "_outputPath": "†state.d"},
        {"_tool": "notify", "message": {"all": "†state.c.items[*].sku"}, "_outputPath": "†state.e"},
    ]
    report = obelisk.simulate(plan, [LOOKUP, obelisk.Tool.from_schema(
        openai_spec("notify", {"message": {}}), function=never)])  # fmt: skip
    calls = report.scenarios[0].calls
    assert report.never_run == {}
    assert calls[1].arguments == {"message": UnknownValue("#0 lookup", "names[0].first")}
    assert calls[2].arguments == {"message": UnknownValue("#0 lookup", "name")}
    assert calls[3].arguments == {"message": UnknownValue("#0 lookup", "name")}
    assert calls[4].arguments == {"message": {"all": UnknownValue("#0 lookup", "items[*].sku")}}


def test_latent_openai_tools_give_unknown_values_in_each_alternative() -> None:
    specs = [SPECS["lookup"], {**SPECS["charge_card"], "requires_approval": False}]
    report = obelisk.simulate(PLAN[:1] + PLAN[4:5], specs, input=INPUT)
    assert [s.arms for s in report.scenarios] == [
        {"#0 lookup": "†state.customer", "#1 charge_card": "†state.receipt"},
        {"#0 lookup": "†state.customer", "#1 charge_card": "†state.declined"},
        {"#0 lookup": "†state.missing"},
    ]
    assert report.scenarios[1].state["declined"] == UnknownValue("#1 charge_card")
    assert report.scenarios[2].state["missing"] == UnknownValue("#0 lookup")


def test_a_concat_of_an_unknown_list_makes_the_list_unknown() -> None:
    plan = [
        {"_tool": "lookup", "email": "a", "_outputPath": "†state.all"},
        {"_tool": "lookup", "email": "b", "_outputPath": "†state.all", "_outputMethod": "concat"},
    ]
    report = obelisk.simulate(plan, [LOOKUP])
    assert report.scenarios[0].failed == {}
    assert report.scenarios[0].state == {"all": UnknownValue("#1 lookup")}


def test_the_scenario_predicts_a_real_run_whose_values_have_the_fields() -> None:
    """The calls that run with unknown arguments in a scenario are those a real run
    runs when the unknown values turn out to have what is read of them."""
    for scenario in dry_run().scenarios:
        failing = {label for label, arm in scenario.arms.items() if arm == "error arm"}
        real = obelisk.run_sync(PLAN, real_tools(failing), input=INPUT)
        assert [r.status for r in real.calls] == [r.status for r in scenario.calls]
        assert set(real.state) == set(scenario.state)


def real_tools(failing: set[str]) -> list[obelisk.Tool]:
    """The plan's tools, really run: the calls in ``failing`` raise."""

    def lookup(email: str) -> Any:
        if "#0 lookup" in failing:
            raise RuntimeError("no such customer")
        return {"card": "4242"}

    def charge_card(card: str, amount: float) -> Any:
        if "#4 charge_card" in failing:
            raise RuntimeError("declined")
        return {"paid": amount}

    def notify(message: str) -> Any:
        return "ok"

    functions = {"lookup": lookup, "charge_card": charge_card, "notify": notify}
    return [  # no approvals: the run goes through
        obelisk.Tool.from_schema({**SPECS[name], "requires_approval": False}, function=fn)
        for name, fn in functions.items()
    ]
