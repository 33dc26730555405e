"""check() catches what would fail later, after side effects ran (issue 24, point 3),
and a plan text with a repeated key is reported (issue 25, point 6).

Each test pins an exact diagnostic; each failed on the code before these changes.
"""

from __future__ import annotations

import json
from typing import Any, Literal
from uuid import UUID

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from obelisk import Diagnostic, check, tool


class User(BaseModel):
    id: str
    name: str


class Ticket(BaseModel):
    priority: Literal["low", "high"]
    user: str


class Order(BaseModel):
    id: str
    amount: float


@tool(name="getUser")
def get_user() -> User:
    return User(id="u1", name="Ada")


@tool(name="openTicket")
def open_ticket(ticket: Ticket) -> None:
    """Open a support ticket."""


@tool(name="tagUsers")
def tag_users(tags: list[Literal["vip", "new"]]) -> None:
    """Tag users."""


@tool(name="listOrders")
def list_orders() -> list[Order]:
    return [Order(id="o1", amount=3.0)]


@tool(name="chargeCard")
def charge_card(amounts: list[float]) -> float:
    return sum(amounts)


@tool
def show(s: str) -> None:
    """Show a string."""


TOOLS = [get_user, open_ticket, tag_users, list_orders, charge_card, show]


def d(
    code: str, message: str, call: int | None, path: str | None, span: tuple[int, int] | None
) -> Diagnostic:
    return Diagnostic(code, "error", message, call, path, span)


# -- did you mean, at any segment ----------------------------------------------------


def test_did_you_mean_corrects_a_middle_segment_of_a_written_path() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "show", "s": "†state.usr.id"},
    ]
    assert check(plan, TOOLS).diagnostics == (
        d(
            "unresolved_reference",
            "nothing in the plan writes †state.usr.id, and the state does not hold it; "
            "did you mean †state.user.id?",
            1,
            "args.s",
            (0, 13),
        ),
    )


def test_did_you_mean_from_the_input_document() -> None:
    plan = [{"_tool": "show", "s": "†input.userid"}]
    assert check(plan, TOOLS, input={"userId": "u1"}).diagnostics == (
        d(
            "unresolved_reference",
            "†input.userid is not in the input; did you mean †input.userId?",
            0,
            "args.s",
            (0, 13),
        ),
    )


def test_did_you_mean_deep_in_a_document_keeps_the_rest_of_the_path() -> None:
    plan = [{"_tool": "show", "s": "†state.account.profle.email"}]
    state = {"account": {"profile": {"email": "a@example.com"}}}
    assert check(plan, TOOLS, state=state).diagnostics[0].message == (
        "nothing in the plan writes †state.account.profle.email, and the state does not "
        "hold it; did you mean †state.account.profile.email?"
    )


def test_no_suggestion_when_nothing_is_close() -> None:
    plan = [{"_tool": "show", "s": "†input.zzz"}]
    assert check(plan, TOOLS, input={"userId": "u1"}).diagnostics[0].message == (
        "†input.zzz is not in the input"
    )


# -- a field read after [*] is checked against the item schema --------------------------


def test_field_after_wildcard_is_checked_against_the_item_schema() -> None:
    plan = [
        {"_tool": "listOrders", "_outputPath": "†state.orders"},
        {"_tool": "chargeCard", "amounts": "†state.orders[*].amout"},
    ]
    assert check(plan, TOOLS).diagnostics == (
        d(
            "unresolved_reference",
            "†state.orders[*].amout cannot exist when #0 listOrders writes it: it has no "
            "field 'amout'; did you mean 'amount'?",
            1,
            "args.amounts",
            (0, 22),
        ),
    )
    plan[1]["amounts"] = "†state.orders[*].amount"
    assert check(plan, TOOLS).diagnostics == ()


# -- a field a closed output schema cannot have -----------------------------------------


class Profile(BaseModel, extra="allow"):
    id: str


@tool(name="getProfile")
def get_profile() -> Profile:
    return Profile(id="p1", nickname="x")  # type: ignore[call-arg]


@tool(name="getRecord")
def get_record() -> dict[str, str]:
    return {"id": "r1"}


@tool(name="getEmail")
def get_email() -> str:
    return "a@example.com"


def test_field_a_pydantic_model_cannot_have_is_unresolved() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "show", "s": "†state.user.email"},  # a whole argument
        {"_tool": "openTicket", "ticket": {"priority": "low", "user": "†state.user.emial"}},
        {"_tool": "show", "s": "†state.user.name"},
    ]
    assert check(plan, TOOLS).diagnostics == (
        d(
            "unresolved_reference",
            "†state.user.email cannot exist when #0 getUser writes it: it has no field 'email'",
            1,
            "args.s",
            (0, 17),
        ),
        d(
            "unresolved_reference",
            "†state.user.emial cannot exist when #0 getUser writes it: it has no field 'emial'",
            2,
            "args.ticket.user",
            (0, 17),
        ),
    )


def test_open_outputs_and_other_writers_leave_the_read_alone() -> None:
    tools = [*TOOLS, get_profile, get_record, get_email]
    plan = [
        {"_tool": "getProfile", "_outputPath": "†state.profile"},  # extra="allow"
        {"_tool": "show", "s": "†state.profile.nickname"},
        {"_tool": "getRecord", "_outputPath": "†state.record"},  # a dict: any key
        {"_tool": "show", "s": "†state.record.anything"},
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "getEmail", "_outputPath": "†state.user.email", "_after": [4]},
        {"_tool": "show", "s": "†state.user.email"},  # #5 writes it after #4
    ]
    assert check(plan, tools).diagnostics == ()
    # the starting state may hold it too... but #0's write replaces the whole object
    assert check(plan[4:5] + plan[6:], tools, state={"user": {"email": "x"}}).ok


# -- literals beside references inside object and array arguments -----------------------


def test_literal_beside_a_reference_in_an_object_is_validated() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "openTicket", "ticket": {"priority": "urgent", "user": "†state.user.id"}},
    ]
    result = check(plan, TOOLS)
    assert result.diagnostics == (
        d(
            "invalid_argument",
            "Input should be 'low' or 'high', got \"urgent\"",
            1,
            "args.ticket.priority",
            None,
        ),
    )
    assert str(result.diagnostics[0]) == (
        "error[invalid_argument] #1 openTicket, args.ticket.priority: "
        "Input should be 'low' or 'high', got \"urgent\""
    )
    plan[1]["ticket"]["priority"] = "high"  # type: ignore[index]
    assert check(plan, TOOLS).diagnostics == ()


def test_literal_beside_a_reference_in_an_array_is_validated() -> None:
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "tagUsers", "tags": ["vip", "†state.user.name", "old"]},
    ]
    assert check(plan, TOOLS).diagnostics == (
        d(
            "invalid_argument",
            "Input should be 'vip' or 'new', got \"old\"",
            1,
            "args.tags[2]",
            None,
        ),
    )


class StrictTicket(BaseModel):
    priority: Literal["low", "high"]
    user: str = Field(min_length=3)


@tool(name="openStrictTicket")
def open_strict_ticket(ticket: StrictTicket) -> None:
    """Open a ticket whose user is at least 3 characters."""


def test_a_reference_whose_place_has_no_obvious_value_is_not_masked() -> None:
    # "" would not fit min_length=3: the argument is left to the run, not reported wrongly
    plan = [
        {"_tool": "getUser", "_outputPath": "†state.user"},
        {"_tool": "openStrictTicket", "ticket": {"priority": "low", "user": "†state.user.id"}},
    ]
    assert check(plan, [*TOOLS, open_strict_ticket]).diagnostics == ()


# -- a key repeated in one object (issue 25, point 6) -----------------------------------


def test_a_key_repeated_in_a_call_is_reported_where_it_is() -> None:
    text = '[{"_tool": "show", "s": "a", "s": "b"}]'
    result = check(text, TOOLS)
    assert result.diagnostics == (
        d(
            "json_syntax",
            'key "s" appears twice in one object at line 1, column 30; JSON keeps only the '
            "last value, so write each key once",
            None,
            None,
            (29, 32),
        ),
    )
    assert result.plan is None  # a plan with errors never runs
    assert str(result.diagnostics[0]).splitlines()[1:] == [
        '    [{"_tool": "show", "s": "a", "s": "b"}]',
        "                                 ^^^",
    ]


def test_a_key_repeated_inside_an_argument_is_reported_with_the_other_problems() -> None:
    text = '[{"_tool": "show",\n  "s": {"a": 1, "\\u0061": 2}},\n {"_tool": "nope"}]'
    result = check(text, TOOLS)
    assert [(x.code, x.call, x.span) for x in result.diagnostics] == [
        ("json_syntax", None, (35, 43)),
        ("invalid_argument", 0, None),
        ("unknown_tool", 1, None),
    ]
    assert result.diagnostics[0].message.startswith(
        'key "a" appears twice in one object at line 2, column 17;'
    )


def test_same_keys_in_different_objects_and_colons_in_strings_are_fine() -> None:
    text = (
        '[{"_tool": "openTicket", "ticket": {"priority": "low", "user": "a:b{c"}},'
        ' {"_tool": "openTicket", "ticket": {"priority": "high", "user": "x"}}]'
    )
    assert check(text, TOOLS).diagnostics == ()


# -- the stand-ins that mask references ----------------------------------------------------


class Shapes(BaseModel):
    level: Literal["a", "b"]
    note: str | None
    count: int
    ratio: float
    id: UUID
    scores: dict[str, float]
    pair: tuple[int, str]
    anything: Any
    short: str = Field(max_length=3)


SHAPES = TypeAdapter(Shapes).json_schema()
_UNKNOWN = object()  # (below) stand_in_at gives STAND_IN_UNKNOWN


@pytest.mark.parametrize(
    ("place", "expected"),
    [
        (("level",), "a"),  # the first value of an enum
        (("note",), ""),  # the first branch of an anyOf that has one
        (("count",), 0),
        (("ratio",), 0.0),
        (("scores", "x"), 0.0),  # additionalProperties
        (("pair", 1), ""),  # prefixItems
        (("anything",), None),
        (("extra",), None),  # no such property, extra keys allowed: anything
        (("id",), _UNKNOWN),  # a format
        (("short",), _UNKNOWN),  # bounds
        ((), _UNKNOWN),  # an object with required fields
    ],
)
def test_stand_in_at(place: tuple[str | int, ...], expected: Any) -> None:
    from obelisk.interpreter.analysis.schema_types import STAND_IN_UNKNOWN, stand_in_at

    expected = STAND_IN_UNKNOWN if expected is _UNKNOWN else expected
    assert stand_in_at(SHAPES, place, SHAPES) == expected


@pytest.mark.parametrize(
    "text",
    ["[null, [{}]]", '{"calls": [1, {"a": {"b": [{"c": 1}]}}]}', '"x"', "[]", '[{"a": ":"}]'],
)
def test_texts_without_repeated_keys(text: str) -> None:
    from obelisk.json_values import repeated_key  # (new: the file imports on the old code)

    assert repeated_key(text, json.loads(text)) is None
