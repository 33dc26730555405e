"""Requests, solutions and the solution schema (docs/loop.md).

The schema tests validate real solutions with jsonschema's Draft 2020-12
validator, the way a model adapter (or a provider's structured-output mode)
would, so a schema that only *looks* right but rejects good answers or
accepts bad ones fails here.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

import obelisk
from obelisk import Registry, Request, ScriptedModel, Solution, SolutionError, Tool
from obelisk.interpreter.loop.messages import (
    OUTPUT_PATH_PATTERN,
    REFERENCE_PATTERN,
    DataMessage,
    ErrorMessage,
    InputMessage,
    PlanMessage,
    StateMessage,
    TextMessage,
    ToolMessage,
    parse_solution,
    solution_schema,
    tool_description,
)

# -- tools -----------------------------------------------------------------------------


class Address(BaseModel):
    city: str
    zip: str


class Parcel(BaseModel):
    """A different model, named Address in another tool's $defs."""

    weight: float


@obelisk.tool
def ship(address: Address, express: bool = False) -> str:
    """Ship a parcel to an address."""
    return f"{address.city} {address.zip} {express}"


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


SUMMARIZE = Tool.from_schema(
    {
        "name": "summarize",
        "description": "Summarize a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string", "maxLength": 20},
    }
)
REGISTRY = Registry([ship, double, SUMMARIZE])


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def is_valid(schema: dict[str, Any], solution: Any) -> bool:
    return validator(schema).is_valid(solution)


def has_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(has_key(v, key) for v in value.values())
    if isinstance(value, list):
        return any(has_key(v, key) for v in value)
    return False


def items_by_tool(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    items = schema["properties"]["calls"]["items"]["anyOf"]
    return {item["properties"]["_tool"]["const"]: item for item in items}


# -- Request ---------------------------------------------------------------------------

EVERY_MESSAGE = [
    TextMessage(text="You plan and execute."),
    ToolMessage(tools=[tool_description(double), tool_description(SUMMARIZE)]),
    InputMessage(input={"user": "Ann", "n": 2}),
    InputMessage(input={"user": "Bob"}, instance="b"),
    StateMessage(state={"profile": {"name": "Ann"}, "flags": [True, False]}),
    StateMessage(state={"seen": 1}, instance="b"),
    DataMessage(kind="search-results", data=[{"title": "t", "url": "u"}]),
    PlanMessage(plan=[{"_tool": "double", "n": "†state.x", "_outputPath": "†state.y"}]),
    PlanMessage(plan=[{"_tool": "summarize", "text": "†input.user"}], mode="lazy"),
    ErrorMessage(error={"type": "invalid_solution", "message": "the answer is not JSON"}),
    ErrorMessage(call="#3 issueRefund", error={"type": "ValueError", "message": "declined"}),
]


def full_request() -> Request:
    return Request(
        config={"mode": "eager", "turn": 2, "max_turns": 8},
        schema=solution_schema(REGISTRY, {"type": "string"}),
        context=EVERY_MESSAGE,
    )


def test_request_round_trips_through_data_and_json() -> None:
    request = full_request()
    data = request.to_data()
    assert Request.from_data(data) == request
    assert Request.from_data(json.loads(request.to_json())) == request
    assert json.loads(request.to_json()) == data


def test_request_data_shape_of_every_message_type() -> None:
    data = full_request().to_data()
    assert set(data) == {"config", "schema", "context"}
    assert data["config"] == {"mode": "eager", "turn": 2, "max_turns": 8}
    assert [m["type"] for m in data["context"]] == [
        "text",
        "tool",
        "input",
        "input",
        "state",
        "state",
        "data",
        "plan",
        "plan",
        "error",
        "error",
    ]
    # optional fields are left out when unset, present when set
    assert data["context"][2] == {"type": "input", "input": {"user": "Ann", "n": 2}}
    assert data["context"][3] == {"type": "input", "input": {"user": "Bob"}, "instance": "b"}
    assert data["context"][5] == {"type": "state", "state": {"seen": 1}, "instance": "b"}
    assert data["context"][6] == {
        "type": "data",
        "kind": "search-results",
        "data": [{"title": "t", "url": "u"}],
    }
    assert data["context"][7]["mode"] == "eager"  # the default mode is written out
    assert data["context"][8]["mode"] == "lazy"
    assert data["context"][9] == {
        "type": "error",
        "error": {"type": "invalid_solution", "message": "the answer is not JSON"},
    }
    assert data["context"][10]["call"] == "#3 issueRefund"
    tools = data["context"][1]["tools"]
    assert tools[0] == {
        "name": "double",
        "description": "Twice n.",
        "parameters": double.parameters,
        "output": {"type": "integer"},
        "latent": False,
    }
    assert tools[1]["latent"] is True and tools[1]["output"] == SUMMARIZE.output_schema


def test_request_json_is_compact_and_keeps_unicode() -> None:
    text = full_request().to_json()
    assert "†state.x" in text and "\\u2020" not in text  # not escaped
    assert text.startswith('{"schema":{')  # what changes every turn comes last (issue 29)
    assert text.endswith(',"config":{"mode":"eager","turn":2,"max_turns":8}}')


def test_request_schema_is_reachable_by_its_alias() -> None:
    request = Request.from_data({"schema": {"type": "object"}})
    assert request.schema == {"type": "object"}
    assert request.config == {} and request.context == []


def test_a_request_the_loop_sent_round_trips() -> None:
    model = ScriptedModel([{"calls": [], "output": "done"}])
    loop = obelisk.Loop(model, REGISTRY, instructions="Be brief.")
    asyncio.run(loop.run({"user": "Ann"}, {"seen": [1, 2]}))
    (sent,) = model.requests
    assert Request.from_data(json.loads(sent.to_json())) == sent


@pytest.mark.parametrize(
    "message",
    [
        {"type": "shout", "text": "hi"},  # unknown type
        {"type": "text"},  # missing text
        {"type": "text", "text": "hi", "extra": 1},  # extra key
        {"type": "plan", "plan": [], "mode": "sometimes"},  # bad mode
        {"type": "error", "error": "boom"},  # error must be an object
    ],
)
def test_request_from_data_rejects_bad_messages(message: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Request.from_data({"context": [message]})


def test_request_from_data_rejects_unknown_top_level_keys() -> None:
    with pytest.raises(ValidationError):
        Request.from_data({"config": {}, "schema": {}, "context": [], "history": []})


@pytest.mark.parametrize(
    "message",
    [
        InputMessage(input=None, instance="a"),
        DataMessage(kind="notes", data=None),
        StateMessage(state=None, instance="a"),
    ],
)
def test_request_round_trips_null_payloads(message: Any) -> None:
    request = Request(context=[message])
    assert Request.from_data(request.to_data()) == request


# -- Solution and parse_solution ----------------------------------------------------------


def test_parse_solution_from_text_bytes_mapping_and_solution() -> None:
    text = '{"calls": [{"_tool": "double", "n": 2}], "output": null}'
    expected = Solution(calls=[{"_tool": "double", "n": 2}], output=None)
    assert parse_solution(text) == expected
    assert parse_solution(text.encode()) == expected
    assert parse_solution(json.loads(text)) == expected
    assert parse_solution(expected) is expected


def test_parse_solution_defaults_missing_keys() -> None:
    assert parse_solution("{}") == Solution(calls=[], output=None)
    assert parse_solution('{"output": {"a": [1]}}').output == {"a": [1]}


def test_parse_solution_not_json() -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution('{"calls": [}')
    assert caught.value.reason == "the answer is not JSON: Expecting value at line 1 column 12"
    assert str(caught.value) == caught.value.reason
    assert caught.value.text == '{"calls": [}'
    assert caught.value.code == "invalid_solution"


def test_parse_solution_not_json_reports_the_line() -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution('{\n  "calls": [],\n  "output": nope\n}')
    assert caught.value.reason == "the answer is not JSON: Expecting value at line 3 column 13"


@pytest.mark.parametrize(
    ("answer", "kind"),
    [("[1, 2]", "list"), ('"calls"', "str"), ("42", "int"), ("null", "NoneType")],
)
def test_parse_solution_not_an_object(answer: str, kind: str) -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution(answer)
    assert caught.value.reason == (
        f'the answer must be a JSON object {{"calls": [...], "output": ...}}, got {kind}'
    )
    assert caught.value.text == answer


def test_parse_solution_decoded_value_that_is_not_an_object_has_no_text() -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution([{"calls": []}])  # type: ignore[arg-type]
    assert caught.value.reason.endswith("got list")
    assert caught.value.text is None


def test_parse_solution_calls_item_not_an_object() -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution('{"calls": [{"_tool": "a"}, {"_tool": "b"}, "c"], "output": null}')
    assert caught.value.reason == (
        "the answer does not fit the solution shape: calls.2: Input should be a valid dictionary"
    )


@pytest.mark.parametrize(
    ("answer", "where"),
    [
        ('{"calls": {"_tool": "a"}}', "calls: "),
        ('{"calls": [], "output": 1, "notes": "x"}', "notes: "),
    ],
)
def test_parse_solution_other_shape_problems_name_the_place(answer: str, where: str) -> None:
    with pytest.raises(SolutionError) as caught:
        parse_solution(answer)
    assert caught.value.reason.startswith("the answer does not fit the solution shape: " + where)


def test_solution_with_usage_is_a_copy() -> None:
    solution = Solution(calls=[], output=1)
    counted = solution.with_usage({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})
    assert counted.usage == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert solution.usage is None
    assert counted.to_data() == {"calls": [], "output": 1}
    assert counted.with_usage(None).usage is None


# -- solution_schema -------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    for mode in ("eager", "lazy"):
        Draft202012Validator.check_schema(solution_schema(REGISTRY, {"type": "string"}, mode=mode))


def test_one_item_per_tool_with_its_name_as_const() -> None:
    schema = solution_schema(REGISTRY)
    items = schema["properties"]["calls"]["items"]["anyOf"]
    assert [item["properties"]["_tool"] for item in items] == [
        {"const": "ship"},
        {"const": "double"},
        {"const": "summarize"},
    ]
    assert schema["required"] == ["calls", "output"]
    for item in items:
        assert "_tool" in item["required"]
    assert items_by_tool(schema)["ship"]["required"] == ["_tool", "address", "_outputPath"]
    assert items_by_tool(schema)["summarize"]["description"] == "Summarize a text."


def test_calls_must_name_a_registered_tool() -> None:
    schema = solution_schema(REGISTRY)
    assert is_valid(
        schema, {"calls": [{"_tool": "double", "n": 1, "_outputPath": "†state.x"}], "output": None}
    )
    # a tool with a result must say where it goes (issue 29)
    assert not is_valid(schema, {"calls": [{"_tool": "double", "n": 1}], "output": None})
    assert not is_valid(schema, {"calls": [{"_tool": "triple", "n": 1}], "output": None})
    assert not is_valid(schema, {"calls": [{"n": 1}], "output": None})
    assert not is_valid(schema, {"calls": [{"_tool": "double"}], "output": None})  # n required


def test_empty_registry_allows_only_no_calls() -> None:
    schema = solution_schema(Registry([]))
    assert is_valid(schema, {"calls": [], "output": "x"})
    assert not is_valid(schema, {"calls": [{"_tool": "anything"}], "output": None})


def test_output_path_must_be_an_expression() -> None:
    schema = solution_schema(REGISTRY)
    item = items_by_tool(schema)["double"]
    assert item["properties"]["_outputPath"] == {"$ref": "#/$defs/outputPath"}
    assert schema["$defs"]["outputPath"]["pattern"] == OUTPUT_PATH_PATTERN
    assert schema["$defs"]["reference"]["pattern"] == REFERENCE_PATTERN

    def call(path: Any) -> dict[str, Any]:
        return {"calls": [{"_tool": "double", "n": 2, "_outputPath": path}], "output": None}

    assert is_valid(schema, call("†state.x"))
    assert is_valid(schema, call("†state.ok || †state.error"))
    assert not is_valid(schema, call("state.x"))
    assert not is_valid(schema, call(" †state.x"))
    assert not is_valid(schema, call(["†state.x"]))


def test_arguments_accept_their_schema_or_an_expression() -> None:
    schema = solution_schema(REGISTRY)

    def with_n(n: Any) -> dict[str, Any]:
        return {"calls": [{"_tool": "double", "n": n, "_outputPath": "†state.x"}], "output": None}

    assert is_valid(schema, with_n(2))
    assert is_valid(schema, with_n("†input.n"))
    assert is_valid(schema, with_n("†state.a || †input.n"))
    assert not is_valid(schema, with_n("two"))
    assert not is_valid(schema, with_n(2.5))
    assert not is_valid(schema, with_n([2]))


def test_meta_properties_have_their_shapes() -> None:
    schema = solution_schema(REGISTRY)
    base = {"_tool": "double", "n": 1, "_outputPath": "†state.x"}
    for good in (
        {"_outputMethod": "push"},
        {"_instance": "a"},
        {"_id": "first"},
        {"_id": 3},
        {"_reasoningForCall": "because"},
    ):
        assert is_valid(schema, {"calls": [{**base, **good}], "output": None}), good
    for bad in ({"_outputMethod": "append"}, {"_instance": 1}, {"_id": 1.5}, {"_id": None}):
        assert not is_valid(schema, {"calls": [{**base, **bad}], "output": None}), bad


def test_closed_tools_reject_unknown_arguments_open_tools_accept_them() -> None:
    schema = solution_schema(REGISTRY)
    assert items_by_tool(schema)["double"]["additionalProperties"] is False
    assert items_by_tool(schema)["summarize"]["additionalProperties"] is True
    assert not is_valid(schema, {"calls": [{"_tool": "double", "n": 1, "m": 2}], "output": None})
    assert is_valid(
        schema,
        {
            "calls": [{"_tool": "summarize", "text": "t", "x": 1, "_outputPath": "†state.x"}],
            "output": None,
        },
    )


def test_output_only_for_latent_tools_in_eager_mode() -> None:
    eager = items_by_tool(solution_schema(REGISTRY, mode="eager"))
    lazy = items_by_tool(solution_schema(REGISTRY, mode="lazy"))
    assert eager["summarize"]["properties"]["_output"] == {"type": "string", "maxLength": 20}
    assert "_output" not in eager["double"]["properties"]
    assert "_output" not in eager["ship"]["properties"]
    for item in lazy.values():
        assert "_output" not in item["properties"]


def test_delegates_get_no_output_property() -> None:
    delegate = Tool.from_schema(
        {"name": "research", "_delegate": True, "output": {"type": "string"}}
    )
    item = items_by_tool(solution_schema(Registry([delegate]), mode="eager"))["research"]
    assert "_output" not in item["properties"]  # a delegate's result comes from its sub-loop


def test_latent_output_is_validated_against_the_tool_output_schema() -> None:
    schema = solution_schema(REGISTRY, mode="eager")

    def latent(output: Any) -> dict[str, Any]:
        call = {"_tool": "summarize", "text": "t", "_output": output, "_outputPath": "†state.s"}
        return {"calls": [call], "output": None}

    assert is_valid(schema, latent("short"))
    assert not is_valid(schema, latent(5))
    assert not is_valid(schema, latent("x" * 21))
    # a function tool may not carry _output (its parameters are closed)
    double_with_output = {"_tool": "double", "n": 1, "_output": 2}
    assert not is_valid(schema, {"calls": [double_with_output], "output": None})


def test_latent_tool_without_output_schema_takes_any_output() -> None:
    anything = Tool.from_schema({"name": "guess"})
    schema = solution_schema(Registry([anything]))
    assert items_by_tool(schema)["guess"]["properties"]["_output"] == {}
    for value in (None, 1, "x", {"a": [1]}):
        assert is_valid(
            schema,
            {
                "calls": [{"_tool": "guess", "_output": value, "_outputPath": "†state.x"}],
                "output": None,
            },
        )


def test_output_is_the_user_schema_made_nullable() -> None:
    schema = solution_schema(REGISTRY, {"type": "integer", "minimum": 0})
    reference = {"$ref": "#/$defs/reference"}  # held once in $defs (issue 29)
    assert schema["properties"]["output"] == {
        "anyOf": [{"type": "integer", "minimum": 0}, reference, {"type": "null"}]
    }  # a reference too (issue 24: the schema allows what the instructions ask for)
    assert is_valid(schema, {"calls": [], "output": 3})
    assert is_valid(schema, {"calls": [], "output": None})
    assert not is_valid(schema, {"calls": [], "output": -1})
    assert not is_valid(schema, {"calls": [], "output": "3"})
    assert not is_valid(schema, {"calls": []})  # output is required, even as null


def test_without_output_schema_any_output_is_allowed() -> None:
    schema = solution_schema(REGISTRY)
    for value in (None, 0, "done", [1], {"a": {"b": None}}):
        assert is_valid(schema, {"calls": [], "output": value})
    assert not is_valid(schema, {"calls": [], "output": None, "notes": ""})


def test_defs_are_hoisted_and_refs_rewritten() -> None:
    assert "$defs" in ship.parameters  # the premise: pydantic put Address in $defs
    schema = solution_schema(REGISTRY)
    assert set(schema["$defs"]) == {"ship.Address", "reference", "outputPath"}
    assert schema["$defs"]["ship.Address"] == ship.parameters["$defs"]["Address"]
    item = items_by_tool(schema)["ship"]
    assert not has_key(item, "$defs")
    assert item["properties"]["address"]["anyOf"][0] == {"$ref": "#/$defs/ship.Address"}
    # the tool's own schema is left alone
    assert ship.parameters["properties"]["address"] == {"$ref": "#/$defs/Address"}


def test_nested_model_arguments_validate_through_the_hoisted_defs() -> None:
    schema = solution_schema(REGISTRY)

    def with_address(address: Any) -> dict[str, Any]:
        return {
            "calls": [{"_tool": "ship", "address": address, "_outputPath": "†state.x"}],
            "output": None,
        }

    assert is_valid(schema, with_address({"city": "Oslo", "zip": "0150"}))
    assert is_valid(schema, with_address("†state.customer.address"))
    assert not is_valid(schema, with_address({"city": "Oslo"}))
    assert not is_valid(schema, with_address({"city": "Oslo", "zip": 150}))
    assert not is_valid(schema, with_address("Oslo"))


def test_defs_with_the_same_name_in_two_tools_do_not_clash() -> None:
    weigh = Tool.from_schema(
        {
            "name": "weigh",
            "parameters": {
                "type": "object",
                "properties": {"address": {"$ref": "#/$defs/Address"}},
                "required": ["address"],
                "$defs": {"Address": Parcel.model_json_schema()},
            },
        }
    )
    schema = solution_schema(Registry([ship, weigh]))
    assert set(schema["$defs"]) == {"ship.Address", "weigh.Address", "reference", "outputPath"}
    ship_call = {
        "_tool": "ship",
        "address": {"city": "Oslo", "zip": "0150"},
        "_outputPath": "†state.x",
    }
    weigh_call = {"_tool": "weigh", "address": {"weight": 2.5}, "_outputPath": "†state.x"}
    assert is_valid(schema, {"calls": [ship_call, weigh_call], "output": None})
    swapped = {"_tool": "weigh", "address": ship_call["address"], "_outputPath": "†state.x"}
    assert not is_valid(schema, {"calls": [swapped], "output": None})


class Profile(BaseModel):
    name: str
    address: Address


def test_latent_output_schema_with_defs_is_usable() -> None:
    profile = Tool.from_schema({"name": "profile", "output": Profile.model_json_schema()})
    schema = solution_schema(Registry([profile]))
    assert "Address" in profile.output_schema["$defs"]  # the premise
    assert not has_key(schema["properties"], "$defs")  # hoisted to the top
    good = {"name": "Ann", "address": {"city": "Oslo", "zip": "0150"}}
    bad = {"name": "Ann", "address": {"city": "Oslo"}}
    assert is_valid(
        schema,
        {
            "calls": [{"_tool": "profile", "_output": good, "_outputPath": "†state.x"}],
            "output": None,
        },
    )
    assert not is_valid(
        schema,
        {
            "calls": [{"_tool": "profile", "_output": bad, "_outputPath": "†state.x"}],
            "output": None,
        },
    )


def test_output_schema_with_defs_is_usable() -> None:
    schema = solution_schema(REGISTRY, Profile.model_json_schema())
    assert not has_key(schema["properties"], "$defs")
    assert "ship.Address" in schema["$defs"]  # the tools' defs are still there
    good = {"name": "Ann", "address": {"city": "Oslo", "zip": "0150"}}
    assert is_valid(schema, {"calls": [], "output": good})
    assert not is_valid(schema, {"calls": [], "output": {"name": "Ann", "address": {}}})


def test_real_solutions_against_the_schema() -> None:
    schema = solution_schema(REGISTRY, {"type": "object", "required": ["answer"]})
    good = {
        "calls": [
            {"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice", "_id": "d"},
            {
                "_tool": "ship",
                "address": {"city": "Oslo", "zip": "0150"},
                "express": "†state.rush || †input.rush",
                "_outputPath": "†state.receipt || †state.error",
                "_reasoningForCall": "the user asked for it",
            },
            {
                "_tool": "summarize",
                "text": "†state.receipt",
                "_output": "shipped to Oslo",
                "_outputPath": "†state.summary",
                "_outputMethod": "set",
            },
        ],
        "output": None,
    }
    assert is_valid(schema, good)
    assert parse_solution(json.dumps(good)).calls == good["calls"]
    errors = list(validator(schema).iter_errors({**good, "output": {"answer": 1, "x": 2}}))
    assert errors == []
    assert not is_valid(schema, {**good, "output": {"summary": "no answer key"}})
    assert not is_valid(schema, {**good, "calls": [*good["calls"], {"_tool": "ship"}]})
