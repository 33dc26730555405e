"""Unit tests for check(): every diagnostic code of docs/diagnostics.md, with exact fields.

A Diagnostic compares on (code, severity, message, call, path, span); ``source``
and ``label`` only feed the rendering and are checked separately.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from obelisk import Diagnostic, Outcome, PlanError, Registry, Tool, check, parse_plan, tool
from obelisk import run_sync as obelisk_run
from obelisk.grammar import parse_reference, path_exists
from obelisk.interpreter.analysis.check import ERROR_ARM_SCHEMA
from obelisk.interpreter.analysis.result import CheckResult

# -- tools -------------------------------------------------------------------------


class Customer(BaseModel):
    id: str
    email: str


class Receipt(BaseModel):
    id: str
    amount: float


@tool(name="getCustomer")
def get_customer(customer_id: str) -> Customer:
    """Fetch a customer."""
    return Customer(id=customer_id, email=f"{customer_id}@example.com")


@tool(name="charge")
def charge(customer_id: str, amount: float) -> Receipt:
    """Charge a customer."""
    return Receipt(id="r1", amount=amount)


@tool(name="sendReceipt")
def send_receipt(email: str, receipt_id: str) -> None:
    """Mail a receipt."""


@tool(name="notifySupport")
def notify_support(message: str) -> None:
    """Tell support."""


@tool(name="pay")
def pay(amount: float) -> Receipt:
    """Pay; raises on a declined card."""
    return Receipt(id="r1", amount=amount)


@tool(name="payOutcome", outcomes=["paid", "declined"], output_schema={"type": "object"})
def pay_outcome(amount: float) -> Outcome:
    """Pay and say how it went."""
    return Outcome("paid", {"id": "r1"})


@tool
def count() -> int:
    return 1


@tool
def add(n: int) -> int:
    return n + 1


@tool
def scale(x: float) -> float:
    return x * 2


@tool
def show(s: str) -> None:
    """Show a string."""


@tool
def total(items: list[int]) -> int:
    return sum(items)


@tool(name="getUser")
def get_user() -> dict[str, str]:
    return {}


@tool
def register(customer: Customer) -> None:
    """Register a customer."""


@tool
def audit(first: Any = None, second: Any = None) -> None:
    """Accepts anything."""


@tool(name="checkWeather", outcomes=["sunny", "rainy"])
def check_weather(city: str) -> Outcome:
    return Outcome("sunny", {"city": city})


@tool(name="planPark")
def plan_park(forecast: Any) -> Any:
    return "park"


@tool(name="planMovie")
def plan_movie(forecast: Any) -> Any:
    return "movie"


@tool
def notify(activity: Any) -> None:
    """Send the plan."""


ESTIMATE = Tool.from_schema(
    {
        "name": "estimate",
        "description": "A latent tool: the model writes the estimate.",
        "output": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    }
)
SAY = Tool.from_schema(
    {
        "name": "say",
        "parameters": {
            "type": "object",
            "properties": {"text": {"enum": ["†ok"]}},
            "additionalProperties": False,
        },
    }
)
CLOSED_USER = Tool.from_schema(
    {
        "name": "getUser",
        "output": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "additionalProperties": False,
        },
    }
)
LATENT_A = Tool.from_schema({"name": "a"})
LATENT_B = Tool.from_schema({"name": "b"})

TOOLS = Registry(
    [
        get_customer,
        charge,
        send_receipt,
        notify_support,
        pay,
        pay_outcome,
        count,
        add,
        scale,
        show,
        total,
        get_user,
        register,
        audit,
        check_weather,
        plan_park,
        plan_movie,
        notify,
        ESTIMATE,
        SAY,
        LATENT_A,
        LATENT_B,
    ]
)


def run(plan: Any, tools: Any = TOOLS, **kwargs: Any) -> CheckResult:
    return check(plan, tools, **kwargs)


def d(
    code: str,
    message: str,
    call: int | None = None,
    path: str | None = None,
    span: tuple[int, int] | None = None,
    severity: str = "error",
) -> Diagnostic:
    return Diagnostic(code, severity, message, call, path, span)  # type: ignore[arg-type]


# -- happy path ------------------------------------------------------------------------

PAYMENT = [
    {
        "_tool": "getCustomer",
        "customer_id": "†input.customerId",
        "_outputPath": "†state.customer",
    },
    {
        "_tool": "charge",
        "customer_id": "†state.customer.id",
        "amount": "†input.amount",
        "_outputPath": "†state.receipt || †state.paymentError",
    },
    {
        "_tool": "sendReceipt",
        "email": "†state.customer.email",
        "receipt_id": "†state.receipt.id",
    },
    {
        "_tool": "notifySupport",
        "message": "†state.paymentError.error.message",
        "_reasoningForCall": "tell support when the card is declined",
    },
]


def test_payment_plan_with_error_arm_has_no_diagnostics() -> None:
    result = run(json.dumps(PAYMENT), input={"customerId": "c1", "amount": 12.5})
    assert result.diagnostics == ()
    assert result.ok
    assert result.errors == ()
    assert result.warnings == ()
    assert result.plan is not None
    assert [call.tool for call in result.plan] == [
        "getCustomer",
        "charge",
        "sendReceipt",
        "notifySupport",
    ]
    assert result.graph is not None
    assert sorted(result.graph.edges) == [(0, 1), (0, 2), (1, 2), (1, 3)]
    assert result.graph.exclusive(2, 3)
    assert result.to_dict() == {"ok": True, "diagnostics": []}
    result.raise_for_errors()  # no error: does not raise


def test_accepts_a_parsed_plan_and_plain_functions() -> None:
    def lookup(key: str) -> str:
        return key

    plan = parse_plan([{"_tool": "lookup", "key": "k", "_outputPath": "†state.v"}])
    result = check(plan, [lookup])
    assert result.plan is plan
    assert result.diagnostics == ()


# -- parse-stage codes through check(text) ----------------------------------------------


def test_json_syntax() -> None:
    # The words after "invalid JSON:" are Python's json module's and change between versions
    # (3.13 rewords several); obelisk's own part is the code, the location and the caret.
    # A missing comma is found at the same place by every supported Python.
    text = '[{"_tool": "a" "x": 1}]'
    result = run(text)
    assert result.plan is None
    assert result.graph is None
    assert not result.ok
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "json_syntax"
    assert diagnostic.severity == "error"
    assert (diagnostic.call, diagnostic.path, diagnostic.label) == (None, None, None)
    assert diagnostic.span == (15, 16)
    assert re.fullmatch(r"invalid JSON: \S.* at line 1, column 16", diagnostic.message)
    assert str(diagnostic).splitlines() == [
        f"error[json_syntax]: {diagnostic.message}",
        '    [{"_tool": "a" "x": 1}]',
        "                   ^",
    ]


def test_json_syntax_caret_sits_at_the_reported_column() -> None:
    # A trailing comma: Python 3.13 points at the comma, earlier versions at the brace after it.
    text = '[{"_tool": "a",}]'
    (diagnostic,) = run(text).diagnostics
    assert diagnostic.code == "json_syntax"
    found = re.fullmatch(r"invalid JSON: \S.* at line 1, column (\d+)", diagnostic.message)
    assert found is not None
    column = int(found[1])
    assert column in (15, 16)
    assert diagnostic.span == (column - 1, column)
    assert str(diagnostic).splitlines()[1:] == [f"    {text}", " " * (4 + column - 1) + "^"]


def test_plan_shape() -> None:
    result = run('{"calls": 3}')
    assert result.plan is None
    assert result.diagnostics == (
        d("plan_shape", "'calls' must be an array of calls, found a number"),
    )
    result = run([{"name": "x"}])
    assert result.plan is None
    assert result.diagnostics == (
        d("plan_shape", "'_tool' must name a tool; it is missing", 0, "_tool"),
    )


def test_reference_syntax_with_caret() -> None:
    text = '[{"_tool": "show", "s": "†state.a.*"}]'
    result = run(text)
    assert result.plan is None
    assert result.graph is None
    assert result.diagnostics == (
        d("reference_syntax", "a wildcard is written '[*]', not '.*'", 0, "args.s", (9, 10)),
    )
    assert result.diagnostics[0].label == "#0 show"
    assert str(result.diagnostics[0]) == (
        "error[reference_syntax] #0 show, args.s: a wildcard is written '[*]', not '.*'\n"
        "    †state.a.*\n"
        "             ^"
    )


def test_reference_syntax_in_output_path() -> None:
    result = run([{"_tool": "count", "_outputPath": "†state.a[*]"}])
    assert result.diagnostics == (
        d("reference_syntax", "cannot write through a wildcard '[*]'", 0, "_outputPath", (8, 11)),
    )
    result = run([{"_tool": "count", "_outputPath": "state.a"}])
    assert result.diagnostics == (
        d(
            "reference_syntax",
            "an output path must be an expression starting with '†', such as '†state.result'",
            0,
            "_outputPath",
            (0, 1),
        ),
    )


def test_parse_stage_diagnostics_come_in_the_stable_order() -> None:
    # CheckResult: diagnostics "in a stable order (by call, then argument path, then code)"
    text = '[{"_tool": "show", "s": "†state.a.*", "_outputMethod": "bogus"}]'
    result = run(text)
    assert [(x.call, x.path, x.code) for x in result.diagnostics] == [
        (0, "_outputMethod", "plan_shape"),
        (0, "args.s", "reference_syntax"),
    ]


# -- unknown_tool ----------------------------------------------------------------------


def test_unknown_tool_with_suggestion() -> None:
    result = run([{"_tool": "getCustomr", "customer_id": "c1"}])
    assert result.diagnostics == (
        d("unknown_tool", "unknown tool 'getCustomr'; did you mean 'getCustomer'?", 0, "_tool"),
    )
    assert result.diagnostics[0].label == "#0 getCustomr"


def test_unknown_tool_without_suggestion() -> None:
    result = run([{"_tool": "zzz"}])
    assert result.diagnostics == (d("unknown_tool", "unknown tool 'zzz'", 0, "_tool"),)


def test_unknown_tool_with_an_empty_registry() -> None:
    for tools in (Registry(), []):
        result = check([{"_tool": "getCustomer"}], tools)
        assert result.diagnostics == (
            d("unknown_tool", "unknown tool 'getCustomer'; no tools are registered", 0, "_tool"),
        )


def test_without_tools_names_arguments_and_types_are_not_checked() -> None:
    plan = [
        {"_tool": "anything", "x": 1, "_output": "whatever", "_outputPath": "†state.a"},
        {"_tool": "add", "n": "†state.a", "m": "not a parameter"},
        {"_tool": "other", "y": "†state.nothing"},
    ]
    result = check(plan, None)
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.nothing, and the state does not hold it",
            2,
            "args.y",
            (0, 14),
        ),
    )


def test_unknown_tool_still_checks_its_reads() -> None:
    result = run([{"_tool": "zzz", "x": "†state.nothing"}])
    assert result.diagnostics == (
        d("unknown_tool", "unknown tool 'zzz'", 0, "_tool"),
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.nothing, and the state does not hold it",
            0,
            "args.x",
            (0, 14),
        ),
    )


# -- missing_argument / invalid_argument ------------------------------------------------


def test_missing_argument() -> None:
    result = run([{"_tool": "charge", "customer_id": "c1"}])
    assert result.diagnostics == (
        d("missing_argument", "missing required argument 'amount' of charge", 0, "args.amount"),
    )


def test_missing_argument_not_reported_for_optional_or_reference() -> None:
    result = run(
        [
            {"_tool": "count", "_outputPath": "†state.n"},
            {"_tool": "audit"},
            {"_tool": "charge", "customer_id": "c1", "amount": "†state.n"},
        ]
    )
    assert result.diagnostics == ()


def test_invalid_argument_wrong_literal_type() -> None:
    result = run([{"_tool": "charge", "customer_id": 5, "amount": "ten"}])
    assert result.diagnostics == (
        d("invalid_argument", 'expected a number, got "ten"', 0, "args.amount"),
        d("invalid_argument", "expected a string, got 5", 0, "args.customer_id"),
    )


def test_invalid_argument_unexpected_name() -> None:
    result = run([{"_tool": "add", "n": 1, "m": 2}])
    assert result.diagnostics == (
        d("invalid_argument", "unexpected argument 'm'; add takes n", 0, "args.m"),
    )
    result = run([{"_tool": "count", "n": "†state.x"}])
    assert result.diagnostics == (
        d("invalid_argument", "unexpected argument 'n'; count takes no arguments", 0, "args.n"),
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.x, and the state does not hold it",
            0,
            "args.n",
            (0, 8),
        ),
    )


def test_invalid_argument_nested_path() -> None:
    result = run([{"_tool": "total", "items": [1, "x", 3]}])
    assert result.diagnostics == (
        d("invalid_argument", 'expected an integer, got "x"', 0, "args.items[1]"),
    )


def test_invalid_argument_escaped_literal_is_validated_unescaped() -> None:
    # "††ok" is the literal text "†ok", which the enum admits
    assert run([{"_tool": "say", "text": "††ok"}]).diagnostics == ()
    result = run([{"_tool": "say", "text": "††no"}])
    assert result.diagnostics == (
        d("invalid_argument", "'†no' is not one of ['†ok']", 0, "args.text"),
    )
    # escaped literals nested in lists are unescaped too
    result = run([{"_tool": "audit", "first": ["††x"]}, {"_tool": "total", "items": ["††1"]}])
    assert result.diagnostics == (
        d("invalid_argument", 'expected an integer, got "†1"', 1, "args.items[0]"),
    )


def test_arguments_holding_references_are_not_validated_as_literals() -> None:
    result = run(
        [
            {"_tool": "count", "_outputPath": "†state.n"},
            {"_tool": "total", "items": [1, "†state.n"]},
        ]
    )
    assert result.diagnostics == ()


# -- invalid_output --------------------------------------------------------------------------


def test_invalid_output_of_a_latent_call() -> None:
    result = run(
        [
            {"_tool": "estimate", "_output": {"n": "x"}, "_outputPath": "†state.e1"},
            {"_tool": "estimate", "_output": {}, "_outputPath": "†state.e2"},
            {"_tool": "estimate", "_output": None, "_outputPath": "†state.e3"},
            {"_tool": "estimate", "_output": {"n": 4}, "_outputPath": "†state.e4"},
            {"_tool": "estimate", "_outputPath": "†state.e5"},
        ]
    )
    assert result.diagnostics == (
        d("invalid_output", 'expected an integer, got "x"', 0, "_output.n"),
        d("invalid_output", "'n' is a required property", 1, "_output"),
        d("invalid_output", "expected an object, got null", 2, "_output"),
    )


def test_invalid_output_of_a_function_tool() -> None:
    result = run([{"_tool": "count", "_output": "many"}])
    assert result.diagnostics == (
        d("invalid_output", 'expected an integer, got "many"', 0, "_output"),
    )


# -- unresolved_reference --------------------------------------------------------------------


def test_unresolved_state_reference() -> None:
    result = run([{"_tool": "show", "s": "†state.greeting"}])
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.greeting, and the state does not hold it",
            0,
            "args.s",
            (0, 15),
        ),
    )


def test_state_reference_held_by_the_starting_state() -> None:
    plan = [{"_tool": "show", "s": "†state.user.name"}]
    assert run(plan, state={"user": {"name": "Ann"}}).diagnostics == ()
    assert run(plan, state={"user": {"name": None}}).diagnostics == ()
    assert len(run(plan, state={"user": {}}).errors) == 1


def test_unresolved_input_reference() -> None:
    plan = [{"_tool": "show", "s": "†input.nme"}]
    result = run(plan, input={"name": "Ann"})
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "†input.nme is not in the input; did you mean †input.name?",
            0,
            "args.s",
            (0, 10),
        ),
    )
    assert run([{"_tool": "show", "s": "†input.name"}], input={"name": "Ann"}).diagnostics == ()
    # no input given: †input references are not checked
    assert run(plan).diagnostics == ()
    assert run(plan, input=None).diagnostics == ()


def test_unresolved_reference_of_an_unknown_data_kind() -> None:
    result = run([{"_tool": "show", "s": "†crm.x"}])
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †crm.x, and no 'crm' document was given",
            0,
            "args.s",
            (0, 6),
        ),
    )


def test_data_kind_given_via_data() -> None:
    data = {"crm": {"x": "hello"}}
    assert run([{"_tool": "show", "s": "†crm.x"}], data=data).diagnostics == ()
    result = run([{"_tool": "show", "s": "†crm.y"}], data=data)
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †crm.y, and the 'crm' data does not hold it",
            0,
            "args.s",
            (0, 6),
        ),
    )
    # a data kind written by the plan resolves without data
    plan = [
        {"_tool": "getUser", "_outputPath": "†crm.user"},
        {"_tool": "show", "s": "†crm.user.name"},
    ]
    assert run(plan).diagnostics == ()


def test_fallback_reported_only_when_no_option_can_exist() -> None:
    text = "†state.a || †input.b"
    result = run([{"_tool": "show", "s": text}], input={})
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "no alternative of †state.a || †input.b can ever exist",
            0,
            "args.s",
            (0, 20),
        ),
    )
    assert run([{"_tool": "show", "s": text}], input={"b": "x"}).diagnostics == ()
    assert run([{"_tool": "show", "s": text}], input={}, state={"a": "x"}).diagnostics == ()
    written = [{"_tool": "getUser", "_outputPath": "†state.a"}, {"_tool": "audit", "first": text}]
    assert run(written, input={}).diagnostics == ()


def test_fallback_of_gates_needs_every_part_of_one_option() -> None:
    text = "†state.a && †state.b || †state.c"
    plan = [
        {"_tool": "count", "_outputPath": "†state.a"},
        {"_tool": "audit", "first": text},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "no alternative of †state.a && †state.b || †state.c can ever exist",
            1,
            "args.first",
            (0, 32),
        ),
    )
    assert run(plan, state={"c": 1}).diagnostics == ()
    assert run(plan, state={"b": 1}).diagnostics == ()


def test_gate_parts_are_reported_individually() -> None:
    text = "†state.token && †state.missing && †input.user"
    plan = [{"_tool": "count", "_outputPath": "†state.token"}, {"_tool": "audit", "first": text}]
    result = run(plan, input={"name": "Ann"})
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.missing, and the state does not hold it",
            1,
            "args.first",
            (16, 30),
        ),
        d("unresolved_reference", "†input.user is not in the input", 1, "args.first", (34, 45)),
    )
    assert str(result.diagnostics[0]) == (
        "error[unresolved_reference] #1 audit, args.first: nothing in the plan writes "
        "†state.missing, and the state does not hold it\n"
        "    †state.token && †state.missing && †input.user\n"
        "                    ^^^^^^^^^^^^^^"
    )


def test_unresolved_reference_did_you_mean() -> None:
    plan = [
        {"_tool": "getCustomer", "customer_id": "c1", "_outputPath": "†state.customer"},
        {"_tool": "audit", "first": "†state.custmer"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.custmer, and the state does not hold it; "
            "did you mean †state.customer?",
            1,
            "args.first",
            (0, 14),
        ),
    )


def test_unresolved_reference_in_an_instance() -> None:
    result = run([{"_tool": "show", "_instance": "a", "s": "†state.zz"}])
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.zz, and the state does not hold it",
            0,
            "args.s",
            (0, 9),
        ),
    )


def test_write_of_another_instance_does_not_resolve_a_read() -> None:
    plan = [
        {"_tool": "getUser", "_instance": "b", "_outputPath": "†state.v"},
        {"_tool": "audit", "_instance": "a", "first": "†state.v"},
        {"_tool": "audit", "_instance": "b", "first": "†state.v"},
    ]
    result = run(plan)
    assert [(x.code, x.call, x.path, x.span) for x in result.diagnostics] == [
        ("unresolved_reference", 1, "args.first", (0, 8))
    ]
    message = result.diagnostics[0].message
    assert message == (
        "†state.v is written only under another _instance (#0 getUser), "
        "which instance 'a' cannot see"
    )
    # suggesting the very path that was written makes no sense
    assert "did you mean †state.v?" not in message


def test_nested_reference_path_in_diagnostic() -> None:
    result = run([{"_tool": "audit", "first": {"customer": {"ids": [1, "†state.id"]}}}])
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.id, and the state does not hold it",
            0,
            "args.first.customer.ids[1]",
            (0, 9),
        ),
    )


def test_wildcard_read_resolves_against_a_list_in_state() -> None:
    plan = [{"_tool": "audit", "first": "†state.rows[*].id"}]
    assert run(plan, state={"rows": []}).diagnostics == ()
    assert len(run(plan).errors) == 1


# -- readonly_target ---------------------------------------------------------------------------


def test_readonly_target() -> None:
    result = run([{"_tool": "count", "_outputPath": "†state.ok || †input.err"}])
    assert result.diagnostics == (
        d(
            "readonly_target",
            "cannot write to †input.err: the input is read-only; write to †state or a data "
            "kind instead",
            0,
            "_outputPath",
            (13, 23),
        ),
    )
    assert str(result.diagnostics[0]).splitlines()[1:] == [
        "    †state.ok || †input.err",
        "                 ^^^^^^^^^^",
    ]


def test_data_kinds_are_writable() -> None:
    assert run([{"_tool": "count", "_outputPath": "†crm.total"}]).diagnostics == ()


# -- dependency_cycle ---------------------------------------------------------------------------


def test_dependency_cycle_message() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.z"},
        {"_tool": "a", "x": "†state.q", "_outputPath": "†state.p"},
        {"_tool": "count", "_outputPath": "†state.y"},
        {"_tool": "count", "_outputPath": "†state.w"},
        {"_tool": "b", "x": "†state.p", "_outputPath": "†state.q"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d("dependency_cycle", "dependency cycle: #1 a -> #4 b -> #1 a", 1),
    )
    assert not result.ok
    assert str(result.diagnostics[0]) == (
        "error[dependency_cycle] #1 a: dependency cycle: #1 a -> #4 b -> #1 a"
    )


def test_dependency_cycle_names_calls_with_their_ids() -> None:
    plan = [
        {"_tool": "a", "_id": "first", "x": "†state.q", "_outputPath": "†state.p"},
        {"_tool": "b", "x": "†state.p", "_outputPath": "†state.q"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d("dependency_cycle", "dependency cycle: #0 a (first) -> #1 b -> #0 a (first)", 0),
    )


# -- write_conflict -----------------------------------------------------------------------------


def conflict(later: int, earlier: str, path: str = "†state.x") -> Diagnostic:
    return d(
        "write_conflict",
        f"{path} is also set by {earlier} and neither call waits for the other; "
        "this call's value wins, being later in the plan",
        later,
        "_outputPath",
        (0, len(path)),
        "warning",
    )


def test_write_conflict() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.x"},
        {"_tool": "count", "_outputPath": "†state.x"},
    ]
    result = run(plan)
    assert result.diagnostics == (conflict(1, "#0 count"),)
    assert result.ok  # a warning only
    assert result.warnings == result.diagnostics


def test_write_conflict_on_overlapping_paths_reported_once_per_pair() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "count", "_outputPath": "†state.user.age && †state.user.name"},
        {"_tool": "count", "_outputPath": "†state.other"},
    ]
    result = run(plan)
    assert result.diagnostics == (conflict(1, "#0 getUser", "†state.user.age"),)


def test_no_write_conflict_for_exclusive_branches() -> None:
    plan = [
        {"_tool": "checkWeather", "city": "Oslo", "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "planPark", "forecast": "†state.sunny", "_outputPath": "†state.activity"},
        {"_tool": "planMovie", "forecast": "†state.rainy", "_outputPath": "†state.activity"},
        {"_tool": "notify", "activity": "†state.activity"},
    ]
    result = run(plan)
    assert result.diagnostics == ()
    assert result.graph is not None
    assert result.graph.unreachable == {}


def test_no_write_conflict_for_ordered_writers() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.x"},
        {"_tool": "add", "n": "†state.x", "_outputPath": "†state.x"},
    ]
    assert run(plan).diagnostics == ()
    transitive = [
        {"_tool": "count", "_outputPath": "†state.x && †state.t"},
        {"_tool": "add", "n": "†state.t", "_outputPath": "†state.u"},
        {"_tool": "add", "n": "†state.u", "_outputPath": "†state.x"},
    ]
    assert run(transitive).diagnostics == ()


def test_no_write_conflict_for_push_or_merge_writers() -> None:
    for first, second in [("set", "push"), ("push", "set"), ("merge", "set"), ("set", "merge")]:
        plan = [
            {"_tool": "count", "_outputPath": "†state.x", "_outputMethod": first},
            {"_tool": "count", "_outputPath": "†state.x", "_outputMethod": second},
        ]
        assert run(plan).diagnostics == (), (first, second)


def test_write_conflict_only_within_one_instance() -> None:
    plan = [
        {"_tool": "count", "_instance": "a", "_outputPath": "†state.x"},
        {"_tool": "count", "_instance": "b", "_outputPath": "†state.x"},
    ]
    assert run(plan).diagnostics == ()
    plan[1]["_instance"] = "a"
    assert run(plan).diagnostics == (conflict(1, "#0 count"),)


def test_write_conflict_is_reported_once_per_group_of_writers() -> None:
    plan = [{"_tool": "count", "_outputPath": "†state.x"} for _ in range(3)]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "write_conflict",
            "†state.x is also set by #0 count and #1 count, and these calls do not all wait "
            "for each other; writes commit in plan order, so this call's value wins, being the "
            "last of them in the plan",
            2,
            "_outputPath",
            (0, 8),
            "warning",
        ),
    )


def test_write_conflicts_of_one_call_follow_its_output_path() -> None:
    # a name and an index in one call's output path: their keys do not compare
    # ("b" vs 0), so the warnings are ordered by the output path, not by key
    plan = [{"_tool": "count", "_outputPath": "†state.x.b && †state.x[0]"} for _ in range(2)]
    result = run(plan)
    later = d(
        "write_conflict",
        "†state.x[0] is also set by #0 count and neither call waits for the other; "
        "this call's value wins, being later in the plan",
        1,
        "_outputPath",
        (14, 25),
        "warning",
    )
    assert result.diagnostics == (conflict(1, "#0 count", "†state.x.b"), later)


def test_write_conflict_names_five_writers_then_how_many_more() -> None:
    plan = [{"_tool": "count", "_outputPath": "†state.x"} for _ in range(2_000)]
    (warning,) = run(plan).diagnostics
    assert warning.call == 1_999
    assert warning.message.startswith(
        "†state.x is also set by #0 count, #1 count, #2 count, #3 count, #4 count and "
        "1994 more calls, and these calls do not all wait for each other"
    )


def test_write_conflict_groups_leave_out_ordered_and_exclusive_writers() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.x && †state.t"},  # 0
        {"_tool": "add", "n": "†state.t", "_outputPath": "†state.x"},  # 1: after 0
        {"_tool": "checkWeather", "city": "Oslo", "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "planPark", "forecast": "†state.sunny", "_outputPath": "†state.y"},  # 3
        {"_tool": "planMovie", "forecast": "†state.rainy", "_outputPath": "†state.y"},  # 4
        {"_tool": "count", "_outputPath": "†state.z.a"},  # 5
        {"_tool": "count", "_outputPath": "†state.z.b"},  # 6: no overlap with 5
    ]
    assert run(plan).diagnostics == ()
    plan.append({"_tool": "count", "_outputPath": "†state.z"})  # 7: overlaps 5 and 6
    plan.append({"_tool": "count", "_outputPath": "†state.x"})  # 8: overlaps 0 and 1
    assert [(x.call, x.message.split(", and")[0]) for x in run(plan).diagnostics] == [
        (7, "†state.z is also set by #5 count and #6 count"),
        (8, "†state.x is also set by #0 count and #1 add"),
    ]


def test_write_conflict_with_a_negative_index_overlaps_every_position() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.items[2].name"},
        {"_tool": "count", "_outputPath": "†state.items[-1]"},
        {"_tool": "count", "_outputPath": "†state.items.name"},
    ]
    assert run(plan).diagnostics == (conflict(1, "#0 count", "†state.items[-1]"),)


def test_write_conflict_leaves_out_calls_in_a_cycle() -> None:
    plan = [
        {"_tool": "add", "n": "†state.b", "_outputPath": "†state.a && †state.x"},
        {"_tool": "add", "n": "†state.a", "_outputPath": "†state.b && †state.x"},
    ]
    assert [x.code for x in run(plan).diagnostics] == ["dependency_cycle"]


# -- unreachable_call ---------------------------------------------------------------------------


def test_unreachable_call_warning() -> None:
    plan = [
        {"_tool": "pay", "amount": 5, "_outputPath": "†state.receipt || †state.failure"},
        {"_tool": "audit", "first": "†state.receipt", "second": "†state.failure"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "unreachable_call",
            "this call can never run: it depends on two different alternatives of #0 pay, "
            "and only one of them is ever written",
            1,
            severity="warning",
        ),
    )
    assert result.ok


def test_unreachable_call_behind_an_unreachable_call() -> None:
    plan = [
        {"_tool": "pay", "amount": 5, "_outputPath": "†state.receipt || †state.failure"},
        {
            "_tool": "audit",
            "first": "†state.receipt",
            "second": "†state.failure",
            "_outputPath": "†state.report",
        },
        {"_tool": "audit", "first": "†state.report"},
    ]
    assert run(plan).diagnostics == (
        d(
            "unreachable_call",
            "this call can never run: it depends on two different alternatives of #0 pay, "
            "and only one of them is ever written",
            1,
            severity="warning",
        ),
        d(
            "unreachable_call",
            "this call can never run: it needs †state.report, which only #1 audit can write, "
            "and that can never run",
            2,
            severity="warning",
        ),
    )
    # the report already exists before the plan runs: #2 can run
    assert [x.call for x in run(plan, state={"report": {}}).diagnostics] == [1]


def test_no_unreachable_call_when_the_other_alternative_is_already_in_state() -> None:
    # When #0 pays, #1 reads the new receipt and the failure that was already in
    # the state before the plan ran: #1 can run, so it is not unreachable.
    plan = [
        {"_tool": "pay", "amount": 5, "_outputPath": "†state.receipt || †state.failure"},
        {"_tool": "audit", "first": "†state.receipt", "second": "†state.failure"},
    ]
    assert run(plan, state={"failure": {"error": {"message": "old"}}}).diagnostics == ()


# -- type_mismatch ------------------------------------------------------------------------------


def test_type_mismatch_object_into_integer() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "add", "n": "†state.user"},
        {"_tool": "add", "n": "†state.user.name"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "type_mismatch",
            "†state.user is an object (written by #0 getUser), but add expects an integer for 'n'",
            1,
            "args.n",
            (0, 11),
        ),
        d(
            "type_mismatch",
            "†state.user.name is a string (written by #0 getUser), but add expects an integer "
            "for 'n'",
            2,
            "args.n",
            (0, 16),
        ),
    )


def test_type_mismatch_parameter_schema_through_ref() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.n"},
        {"_tool": "register", "customer": "†state.n"},
    ]
    assert run(plan).diagnostics == (
        d(
            "type_mismatch",
            "†state.n is an integer (written by #0 count), but register expects an object "
            "for 'customer'",
            1,
            "args.customer",
            (0, 8),
        ),
    )


def test_no_type_check_against_a_write_to_another_list_position() -> None:
    # #0 replaces the last item of †state.words with an integer; #1 reads the item
    # before it, which #0 does not write (it is whatever the list held), so the
    # integer schema of count says nothing about it.
    plan = [
        {"_tool": "count", "_outputPath": "†state.words[-1]"},
        {"_tool": "show", "s": "†state.words[-2]"},
    ]
    assert run(plan, state={"words": ["a", "b"]}).diagnostics == ()
    # the same position is checked
    plan[1]["s"] = "†state.words[-1]"
    assert [x.code for x in run(plan, state={"words": ["a", "b"]}).diagnostics] == ["type_mismatch"]


def test_unresolved_field_of_a_closed_object() -> None:
    # (a type_mismatch before issue 24: the path can never exist, whatever reads it)
    tools = TOOLS.merge(Registry([CLOSED_USER]), override=True)
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "show", "s": "†state.user.age"},
        {"_tool": "show", "s": "†state.user.name"},
    ]
    result = run(plan, tools)
    assert result.diagnostics == (
        d(
            "unresolved_reference",
            "†state.user.age cannot exist when #0 getUser writes it: it has no field 'age'",
            1,
            "args.s",
            (0, 15),
        ),
    )


def test_integer_into_number_is_fine() -> None:
    plan = [
        {"_tool": "count", "_outputPath": "†state.n"},
        {"_tool": "scale", "x": "†state.n", "_outputPath": "†state.f"},
    ]
    assert run(plan).diagnostics == ()


def test_type_mismatch_reading_the_error_arm() -> None:
    plan = [
        {"_tool": "pay", "amount": 5, "_outputPath": "†state.receipt || †state.failure"},
        {"_tool": "show", "s": "†state.failure.error.message"},
        {"_tool": "show", "s": "†state.failure.error.call"},
        {"_tool": "show", "s": "†state.receipt.id"},
        {"_tool": "add", "n": "†state.receipt.amount"},
    ]
    result = run(plan)
    assert result.diagnostics == (
        d(
            "type_mismatch",
            "†state.failure.error.call is an integer (written by the error arm of #0 pay), "
            "but show expects "
            "a string for 's'",
            2,
            "args.s",
            (0, 25),
        ),
    )
    assert ERROR_ARM_SCHEMA["properties"]["error"]["properties"]["call"] == {"type": "integer"}


def test_no_type_check_when_the_producer_declares_outcomes_or_pushes() -> None:
    outcomes = [
        {"_tool": "payOutcome", "amount": 5, "_outputPath": "†state.receipt || †state.failure"},
        {"_tool": "show", "s": "†state.failure.error.call"},
        {"_tool": "add", "n": "†state.receipt"},
    ]
    assert run(outcomes).diagnostics == ()
    pushed = [
        {"_tool": "getUser", "_outputPath": "†state.users", "_outputMethod": "push"},
        {"_tool": "add", "n": "†state.users"},
    ]
    assert run(pushed).diagnostics == ()
    # the same plan with "set" is a mismatch
    pushed[0]["_outputMethod"] = "set"
    assert [x.code for x in run(pushed).diagnostics] == ["type_mismatch"]


# -- unknown_meta --------------------------------------------------------------------------------


def test_unknown_meta_warning() -> None:
    result = run([{"_tool": "count", "_zz": 1}])
    assert result.diagnostics == (
        d(
            "unknown_meta",
            "unknown meta-property '_zz' (kept, not interpreted)",
            0,
            "_zz",
            severity="warning",
        ),
    )
    assert result.ok
    assert result.diagnostics[0].label == "#0 count"


# -- CheckResult ---------------------------------------------------------------------------------


def mixed() -> CheckResult:
    plan = [
        {"_tool": "a", "y": "†state.nowhere", "x": "†state.beta", "_outputPath": "†state.alpha"},
        {"_tool": "b", "x": "†state.alpha", "_outputPath": "†state.beta", "_note": 1},
        {"_tool": "nope"},
        {"_tool": "audit", "first": "†state.missingOne && †state.missingTwo"},
    ]
    return run(plan)


def test_diagnostics_sorted_by_call_then_path_then_code() -> None:
    result = mixed()
    assert [(x.call, x.path, x.code) for x in result.diagnostics] == [
        (0, None, "dependency_cycle"),
        (0, "args.y", "unresolved_reference"),
        (1, "_note", "unknown_meta"),
        (2, "_tool", "unknown_tool"),
        (3, "args.first", "unresolved_reference"),
        (3, "args.first", "unresolved_reference"),
    ]
    # equal keys keep the order the problems were found in
    assert [x.span for x in result.diagnostics[4:]] == [(0, 17), (21, 38)]
    assert "†state.missingOne" in result.diagnostics[4].message
    assert "†state.missingTwo" in result.diagnostics[5].message


def test_check_result_accessors() -> None:
    result = mixed()
    assert not result.ok
    assert [x.code for x in result.warnings] == ["unknown_meta"]
    assert [x.code for x in result.errors] == [
        "dependency_cycle",
        "unresolved_reference",
        "unknown_tool",
        "unresolved_reference",
        "unresolved_reference",
    ]
    as_dict = result.to_dict()
    assert as_dict["ok"] is False
    assert as_dict["diagnostics"][0] == {
        "code": "dependency_cycle",
        "severity": "error",
        "call": 0,
        "path": None,
        "span": None,
        "message": "dependency cycle: #0 a -> #1 b -> #0 a",
    }
    assert as_dict["diagnostics"][5] == {
        "code": "unresolved_reference",
        "severity": "error",
        "call": 3,
        "path": "args.first",
        "span": [21, 38],
        "message": "nothing in the plan writes †state.missingTwo, and the state does not hold it",
    }
    assert json.loads(json.dumps(as_dict)) == as_dict
    with pytest.raises(PlanError) as caught:
        result.raise_for_errors()
    assert caught.value.diagnostics == result.diagnostics
    assert str(caught.value).startswith("plan has 5 errors\nerror[dependency_cycle] #0 a: ")


def test_raise_for_errors_single_error_rendering() -> None:
    result = run([{"_tool": "show", "s": "†state.a"}])
    with pytest.raises(PlanError) as caught:
        result.raise_for_errors()
    assert str(caught.value) == (
        "plan has 1 error\n"
        "error[unresolved_reference] #0 show, args.s: nothing in the plan writes †state.a, "
        "and the state does not hold it\n"
        "    †state.a\n"
        "    ^^^^^^^^"
    )


def test_warnings_only_do_not_raise() -> None:
    result = run([{"_tool": "count", "_zz": 1}])
    result.raise_for_errors()
    assert result.to_dict() == {
        "ok": True,
        "diagnostics": [
            {
                "code": "unknown_meta",
                "severity": "warning",
                "call": 0,
                "path": "_zz",
                "span": None,
                "message": "unknown meta-property '_zz' (kept, not interpreted)",
            }
        ],
    }


# -- path_exists ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("†state", True),
        ("†state.a", True),
        ("†state.a.b", True),
        ("†state.a.c", False),
        ("†state.list[0]", True),
        ("†state.list[-2]", True),
        ("†state.list[2]", False),
        ("†state.list[-3]", False),
        ("†state.list.x", False),
        ("†state.a[0]", False),
        ("†state.zero", True),
        ("†state.none", True),
        ("†state.empty", True),
        ("†state.list[*]", True),
        ("†state.a[*].anything", True),
        ("†state.zero[*]", False),
    ],
)
def test_path_exists_is_existence_not_truthiness(text: str, expected: bool) -> None:
    document = {"a": {"b": 1}, "list": [0, False], "zero": 0, "none": None, "empty": ""}
    assert path_exists(document, parse_reference(text)) is expected


# -- every problem at once ----------------------------------------------------------


def test_a_reference_syntax_error_does_not_hide_the_other_problems() -> None:
    plan = [
        {"_tool": "charge", "customer_id": "†input..id", "amount": "ten"},
        {"_tool": "chrage", "customer_id": "c1", "amount": 1},
        {"_tool": "sendReceipt", "email": "x@y.z"},
    ]
    result = check(plan, TOOLS, input={"id": "c1"})
    assert result.plan is None and result.graph is None and not result.ok
    assert [(d.code, d.call, d.path) for d in result.diagnostics] == [
        ("invalid_argument", 0, "args.amount"),
        ("reference_syntax", 0, "args.customer_id"),
        ("unknown_tool", 1, "_tool"),
        ("missing_argument", 2, "args.receipt_id"),
    ]


def test_a_call_that_cannot_be_read_is_left_out_of_the_other_checks() -> None:
    plan = [
        "not a call",
        {"_tool": "notifySupport"},
        {"_outputPath": "†state.x"},
    ]
    result = check(plan, TOOLS)
    assert [(d.code, d.call, d.path) for d in result.diagnostics] == [
        ("plan_shape", 0, None),
        ("missing_argument", 1, "args.message"),
        ("plan_shape", 2, "_tool"),
    ]


def test_a_bad_output_path_does_not_make_its_readers_unresolved() -> None:
    # #0 meant to write †state.c; that its output path does not parse is the problem
    # to report, not that nothing writes what #1 reads.
    plan = [
        {"_tool": "getCustomer", "customer_id": "c1", "_outputPath": "†state.c |"},
        {"_tool": "notifySupport", "message": "†state.c.email"},
    ]
    result = check(plan, TOOLS)
    assert [(d.code, d.call) for d in result.diagnostics] == [("reference_syntax", 0)]


def test_parse_time_labels_carry_the_id() -> None:
    result = check([{"_tool": "notifySupport", "_id": "n1", "message": "m", "_x": 1}], TOOLS)
    assert str(result.diagnostics[0]).startswith("warning[unknown_meta] #0 notifySupport (n1), _x:")


def test_a_call_needs_one_alternative_per_declared_outcome() -> None:
    @tool(outcomes=["ok", "declined", "held"])
    def settle(amount: float) -> Outcome:
        """Settle a payment."""
        return Outcome("ok", amount)

    two = [{"_tool": "settle", "amount": 1, "_outputPath": "†state.a || †state.b"}]
    result = check(two, [settle])
    assert [(d.code, d.path, d.span) for d in result.diagnostics] == [
        ("outcome_mismatch", "_outputPath", (0, 20))
    ]
    assert result.diagnostics[0].message == (
        "settle declares 3 outcomes (ok, declined, held), but the output path has "
        "2 alternatives; write one alternative per outcome, in that order, joined by '||'"
    )
    three = [{"_tool": "settle", "amount": 1, "_outputPath": "†state.a || †state.b || †state.c"}]
    assert check(three, [settle]).ok
    nowhere = [{"_tool": "settle", "amount": 1}]
    assert check(nowhere, [settle]).ok
    assert obelisk_run(nowhere, [settle]).calls[0].status == "succeeded"
