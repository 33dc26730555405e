"""Unit tests for obelisk.interpreter.tools.tool: Tool, @tool, Registry."""

import asyncio
import doctest
import functools
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

import jsonschema
import pytest
from pydantic import BaseModel, Field

from obelisk.errors import (
    ArgumentProblem,
    ArgumentValidationError,
    ObeliskError,
    ToolDefinitionError,
)
from obelisk.interpreter.tools import tool as tools_module
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool, tool

NAME_RULE = "must be a non-empty string without control characters or surrounding whitespace"


class Address(BaseModel):
    zip: str
    lines: list[str] = []


class Customer(BaseModel):
    id: str
    address: Address


def issue_refund(customer_id: str, amount: float, note: str = "") -> dict[str, str]:
    """Refund a customer.

    The amount is in euros.
    """
    return {"customer": customer_id, "amount": str(amount), "note": note}


LOOKUP_SPEC: dict[str, Any] = {
    "name": "lookupCustomer",
    "description": "Find a customer.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "filter": {"$ref": "#/$defs/Filter"},
        },
        "required": ["query"],
        "additionalProperties": False,
        "$defs": {
            "Filter": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            }
        },
    },
    "output": {"type": "object", "properties": {"id": {"type": "integer"}}},
}


# -- Outcome / ArgumentProblem / module surface ---------------------------------------------


def test_public_names_are_exported_sorted() -> None:
    assert tools_module.__all__ == sorted(tools_module.__all__)
    assert set(tools_module.__all__) == {"Tool", "tool"}


def test_outcome_is_a_frozen_value() -> None:
    outcome = Outcome("declined", {"reason": "limit"})
    assert outcome == Outcome("declined", {"reason": "limit"})
    assert (outcome.k, outcome.value) == ("declined", {"reason": "limit"})
    with pytest.raises(AttributeError):
        outcome.k = 1  # type: ignore[misc]


def test_argument_problem_path_renders_keys_and_indices() -> None:
    assert ArgumentProblem(("customer", "lines", 0), "x").path == "customer.lines[0]"
    assert ArgumentProblem((), "x").path == ""


def test_docstring_examples_run() -> None:
    result = doctest.testmod(tools_module)
    assert result.attempted >= 3
    assert result.failed == 0


# -- the decorator and Tool.from_function ---------------------------------------------------


def test_bare_decorator_builds_schema_from_signature() -> None:
    refund = tool(issue_refund)
    assert isinstance(refund, Tool)
    assert refund.name == "issue_refund"
    assert refund.description == "Refund a customer.\n\nThe amount is in euros."
    assert refund.parameters == {
        "type": "object",
        "properties": {
            "customer_id": {"type": "string"},
            "amount": {"type": "number"},
            "note": {"type": "string", "default": ""},
        },
        "required": ["customer_id", "amount"],
        "additionalProperties": False,
    }
    assert refund.output_schema == {"type": "object", "additionalProperties": {"type": "string"}}
    assert refund.required == frozenset({"customer_id", "amount"})
    assert refund.parameter_names == ("customer_id", "amount", "note")
    assert refund.accepts_extra is False
    assert refund.latent is False
    assert refund.is_async is False
    assert (refund.outcomes, refund.timeout, refund.capacity, refund.pure) == (
        (),
        None,
        None,
        False,
    )
    assert refund.parameter_schema("amount") == {"type": "number"}
    assert refund.parameter_schema("nope") is None
    assert (
        repr(refund)
        == "Tool('issue_refund', params=['customer_id', 'amount', 'note'], latent=False)"
    )


def test_decorator_with_options() -> None:
    @tool(name="issueRefund", outcomes=["ok", "declined"], timeout=2, capacity=4, pure=True)
    def refund(amount: float) -> Outcome:
        return Outcome("ok", amount)

    assert refund.name == "issueRefund"
    assert refund.outcomes == ("ok", "declined")
    assert refund.timeout == 2.0
    assert isinstance(refund.timeout, float)
    assert refund.capacity == 4
    assert refund.pure is True
    assert refund.description == ""
    assert refund.output_schema is None


def test_description_option_overrides_docstring() -> None:
    t = Tool.from_function(issue_refund, description="  Custom.\n    text")
    assert t.description == "Custom.\ntext"


def test_decorated_function_is_still_callable() -> None:
    refund = tool(issue_refund)
    assert refund("c1", 2.5, note="n") == {"customer": "c1", "amount": "2.5", "note": "n"}


async def _async_lookup(query: str) -> list[int]:
    return [len(query)]


class _AsyncCallable:
    async def __call__(self, query: str) -> int:
        return 1


class _SyncCallable:
    def __call__(self, query: str) -> int:
        return 1


def test_async_detection() -> None:
    assert tool(_async_lookup).is_async is True
    assert tool(issue_refund).is_async is False
    partial = Tool.from_function(functools.partial(_async_lookup), name="lookup")
    assert partial.is_async is True
    assert partial.parameter_names == ("query",)
    obj = Tool.from_function(_AsyncCallable(), name="obj")
    assert obj.is_async is True
    assert obj.parameters["properties"] == {"query": {"type": "string"}}
    assert obj.output_schema == {"type": "integer"}
    assert Tool.from_function(_SyncCallable(), name="sync_obj").is_async is False


def test_async_tool_call_returns_awaitable() -> None:
    assert asyncio.run(tool(_async_lookup)("abc")) == [3]


def test_callable_object_name_defaults_to_class_name() -> None:
    assert Tool.from_function(_SyncCallable()).name == "_SyncCallable"


def test_annotated_field_description_and_constraints() -> None:
    @tool
    def send(
        to: Annotated[str, Field(description="recipient address")],
        count: Annotated[int, Field(description="how many", gt=0)] = 1,
    ) -> None:
        pass

    assert send.parameters["properties"] == {
        "to": {"type": "string", "description": "recipient address"},
        "count": {
            "type": "integer",
            "description": "how many",
            "exclusiveMinimum": 0,
            "default": 1,
        },
    }
    assert send.output_schema == {"type": "null"}
    assert send.validate_argument("count", 0) == [
        ArgumentProblem((), "Input should be greater than 0, got 0")
    ]


def test_field_default_carries_constraints() -> None:
    @tool
    def page(size: int = Field(10, ge=1, description="page size")) -> int:
        return size

    assert page.parameters["properties"]["size"] == {
        "type": "integer",
        "minimum": 1,
        "default": 10,
        "description": "page size",
    }
    assert page.required == frozenset()
    assert page.validate_argument("size", 0) == [
        ArgumentProblem((), "Input should be greater than or equal to 1, got 0")
    ]


def test_unannotated_parameter_accepts_anything() -> None:
    @tool
    def echo(value, label: str = "x"):  # type: ignore[no-untyped-def]
        return value

    assert echo.parameters["properties"]["value"] == {}
    assert echo.required == frozenset({"value"})
    assert echo.validate_argument("value", {"any": [1, None]}) == []
    assert echo.output_schema is None


def test_pydantic_model_parameter_uses_top_level_defs() -> None:
    @tool
    def update(customer: Customer, dry_run: bool = False) -> Customer:
        return customer

    params = update.parameters
    assert params["properties"]["customer"] == {"$ref": "#/$defs/Customer"}
    assert set(params["$defs"]) == {"Customer", "Address"}
    assert params["$defs"]["Customer"]["properties"]["address"] == {"$ref": "#/$defs/Address"}
    assert params["$defs"]["Customer"]["required"] == ["id", "address"]
    # the schema is self-consistent: a valid arguments object passes jsonschema
    jsonschema.Draft202012Validator.check_schema(params)
    good = {"customer": {"id": "c1", "address": {"zip": "1000"}}}
    assert list(jsonschema.Draft202012Validator(params).iter_errors(good)) == []
    assert update.validate_argument("customer", {"id": 7, "address": {"lines": [1]}}) == [
        ArgumentProblem(("id",), "expected a string, got 7"),
        ArgumentProblem(("address", "zip"), "missing required field"),
        ArgumentProblem(("address", "lines", 0), "expected a string, got 1"),
    ]
    validated = update.validate_arguments(good)
    assert validated == {"customer": Customer(id="c1", address=Address(zip="1000"))}
    assert update.output_schema is not None
    assert update.output_schema["$defs"]["Address"]["required"] == ["zip"]
    assert update.validate_output(Customer(id="c1", address=Address(zip="1"))) == []
    assert update.validate_output({"id": "c1"}) == [
        ArgumentProblem(("address",), "missing required field")
    ]


def test_kwargs_accepts_extra_arguments() -> None:
    @tool
    def tag(item: str, **labels: int) -> None:
        pass

    assert tag.accepts_extra is True
    assert tag.parameter_names == ("item",)
    assert tag.parameters["additionalProperties"] == {"type": "integer"}
    assert tag.validate_arguments({"item": "a", "size": "3"}) == {"item": "a", "size": 3}
    assert tag.validate_argument("colour", "red") == [
        ArgumentProblem((), 'expected an integer, got "red"')
    ]

    @tool
    def anything(**extra: Any) -> None:
        pass

    assert anything.accepts_extra is True
    assert "additionalProperties" not in anything.parameters
    assert anything.validate_arguments({"a": object}) == {"a": object}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "def f(a, *rest): pass",
            "tool 'f': parameter 'rest' is positional; tools take named arguments",
        ),
        ("def f(a, /): pass", "tool 'f': parameter 'a' is positional; tools take named arguments"),
        (
            "def f(a: 'Missing'): pass",
            "tool 'f': cannot read the signature: name 'Missing' is not defined",
        ),
    ],
)
def test_signatures_that_cannot_be_tools(source: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError) as info:
        tool(namespace["f"])
    assert str(info.value) == message


def test_type_without_json_schema_names_the_parameter() -> None:
    class Opaque:
        pass

    def f(handle: Opaque) -> None:
        pass

    with pytest.raises(
        ToolDefinitionError, match=r"^tool 'f': parameter 'handle' has no JSON schema: "
    ):
        tool(f)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"name": ""},
            "invalid tool name '': " + NAME_RULE,
        ),
        (
            {"name": " padded"},
            "invalid tool name ' padded': " + NAME_RULE,
        ),
        (
            {"name": "tab\there"},
            "invalid tool name 'tab\\there': " + NAME_RULE,
        ),
        ({"timeout": 0}, "tool 'f': timeout must be a positive number of seconds, got 0"),
        ({"timeout": -1.5}, "tool 'f': timeout must be a positive number of seconds, got -1.5"),
        ({"timeout": True}, "tool 'f': timeout must be a positive number of seconds, got True"),
        ({"capacity": 0}, "tool 'f': capacity must be an integer >= 1, got 0"),
        ({"capacity": 2.0}, "tool 'f': capacity must be an integer >= 1, got 2.0"),
        (
            {"outcomes": ["ok", "ok"]},
            "tool 'f': outcomes must be a list of unique non-empty strings, got ('ok', 'ok')",
        ),
        (
            {"outcomes": ["ok", ""]},
            "tool 'f': outcomes must be a list of unique non-empty strings, got ('ok', '')",
        ),
        (
            {"outcomes": "ok"},
            "tool 'f': outcomes must be a list of unique non-empty strings, got 'ok'",
        ),
        ({"pure": "yes"}, "tool 'f': pure must be true or false, got 'yes'"),
    ],
)
def test_bad_options_raise(options: dict[str, Any], message: str) -> None:
    def f() -> None:
        pass

    with pytest.raises(ToolDefinitionError) as info:
        tool(**options)(f)
    assert str(info.value) == message
    assert info.value.code == "tool_definition"


def test_dotted_and_dashed_names_are_valid() -> None:
    assert tool(name="crm.lookup-v2")(issue_refund).name == "crm.lookup-v2"


# -- argument validation --------------------------------------------------------------------


def test_validate_argument_happy_path_and_wrong_type() -> None:
    refund = tool(issue_refund)
    assert refund.validate_argument("amount", 12.5) == []
    assert refund.validate_argument("amount", 3) == []
    problems = refund.validate_argument("amount", "abc")
    assert problems == [ArgumentProblem((), 'expected a number, got "abc"')]
    assert refund.validate_argument("customer_id", ["x"]) == [
        ArgumentProblem((), 'expected a string, got ["x"]')
    ]


def test_validate_argument_unknown_name_suggests() -> None:
    refund = tool(issue_refund)
    assert refund.validate_argument("amout", 1) == [
        ArgumentProblem((), "tool 'issue_refund' takes no argument 'amout'; did you mean 'amount'?")
    ]
    assert refund.validate_argument("zzz", 1) == [
        ArgumentProblem((), "tool 'issue_refund' takes no argument 'zzz'")
    ]


def test_validate_arguments_ok_returns_coerced_values() -> None:
    refund = tool(issue_refund)
    result = refund.validate_arguments({"amount": 5, "customer_id": "c9"})
    assert result == {"customer_id": "c9", "amount": 5.0}
    assert isinstance(result["amount"], float)
    assert refund(**result) == {"customer": "c9", "amount": "5.0", "note": ""}


def test_validate_arguments_collects_every_problem() -> None:
    refund = tool(issue_refund)
    with pytest.raises(ArgumentValidationError) as info:
        refund.validate_arguments({"amount": "lots", "extra": 1})
    error = info.value
    assert isinstance(error, ObeliskError)
    assert error.code == "invalid_argument"
    assert error.tool_name == "issue_refund"
    assert error.problems == (
        ArgumentProblem(("amount",), 'expected a number, got "lots"'),
        ArgumentProblem(("extra",), "tool 'issue_refund' takes no argument 'extra'"),
        ArgumentProblem(("customer_id",), "missing required argument"),
    )
    assert str(error) == (
        "invalid arguments for tool 'issue_refund':\n"
        '  amount: expected a number, got "lots"\n'
        "  extra: tool 'issue_refund' takes no argument 'extra'\n"
        "  customer_id: missing required argument"
    )


def test_validate_arguments_nested_loc_starts_with_argument() -> None:
    @tool
    def save(customer: Customer) -> None:
        pass

    with pytest.raises(ArgumentValidationError) as info:
        save.validate_arguments({"customer": {"id": "c", "address": {"zip": 1000}}})
    assert info.value.problems == (
        ArgumentProblem(("customer", "address", "zip"), "expected a string, got 1000"),
    )
    assert str(info.value).endswith("  customer.address.zip: expected a string, got 1000")


def test_validate_output_function_tool() -> None:
    refund = tool(issue_refund)
    assert refund.validate_output({"a": "b"}) == []
    assert refund.validate_output({"a": 1}) == [ArgumentProblem(("a",), "expected a string, got 1")]
    assert refund.validate_output([1]) == [ArgumentProblem((), "expected an object, got [1]")]


def test_output_schema_none_when_unknown() -> None:
    def no_annotation(x: int):  # type: ignore[no-untyped-def]
        return x

    def any_result(x: int) -> Any:
        return x

    def outcome_result(x: int) -> Outcome | int:
        return x

    for fn in (no_annotation, any_result, outcome_result):
        t = tool(fn)
        assert t.output_schema is None
        assert t.validate_output(object()) == []


def test_explicit_output_schema_overrides_annotation() -> None:
    t = Tool.from_function(issue_refund, output_schema={"type": "integer"})
    assert t.output_schema == {"type": "integer"}
    assert t.validate_output(3) == []
    assert t.validate_output("x") == [ArgumentProblem((), 'expected an integer, got "x"')]
    with pytest.raises(ToolDefinitionError, match="'output_schema' is not a valid JSON schema"):
        Tool.from_function(issue_refund, output_schema={"type": "nope"})


# -- schema-only tools ----------------------------------------------------------------------


def test_from_schema_plain_form() -> None:
    t = Tool.from_schema(LOOKUP_SPEC)
    assert t.name == "lookupCustomer"
    assert t.description == "Find a customer."
    assert t.latent is True
    assert t.function is None
    assert t.is_async is False
    assert t.parameters == LOOKUP_SPEC["parameters"]
    assert t.parameter_names == ("query", "filter")
    assert t.required == frozenset({"query"})
    assert t.accepts_extra is False
    assert t.output_schema == {"type": "object", "properties": {"id": {"type": "integer"}}}
    assert repr(t) == "Tool('lookupCustomer', params=['query', 'filter'], latent=True)"


def test_from_schema_openai_form_with_options() -> None:
    spec = {
        "type": "function",
        "function": {
            "name": "issueRefund",
            "description": "Refund.",
            "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}},
        },
        "outcomes": ["ok", "declined"],
        "timeout": 1.5,
        "capacity": 2,
        "pure": True,
    }
    t = Tool.from_schema(spec)
    assert (t.name, t.description) == ("issueRefund", "Refund.")
    assert t.parameter_names == ("amount",)
    assert t.required == frozenset()
    assert t.accepts_extra is True  # JSON Schema default: additionalProperties absent
    assert (t.outcomes, t.timeout, t.capacity, t.pure) == (("ok", "declined"), 1.5, 2, True)
    assert t.output_schema is None
    assert t.validate_output({"anything": 1}) == []


def test_from_schema_without_parameters_takes_no_arguments() -> None:
    t = Tool.from_schema({"name": "ping", "output_schema": {"type": "string"}})
    assert t.parameters == {"type": "object", "properties": {}}
    assert t.parameter_names == ()
    assert t.validate_arguments({}) == {}
    assert t.output_schema == {"type": "string"}
    assert t.validate_output(1) == [ArgumentProblem((), "expected a string, got 1")]


def test_schema_tool_validation_uses_jsonschema_with_refs() -> None:
    t = Tool.from_schema(LOOKUP_SPEC)
    assert t.validate_argument("query", "bob") == []
    assert t.validate_argument("query", 5) == [ArgumentProblem((), "expected a string, got 5")]
    assert t.validate_argument("filter", {"tags": ["a", 2]}) == [
        ArgumentProblem(("tags", 1), "expected a string, got 2")
    ]
    assert t.validate_argument("nope", 1) == [
        ArgumentProblem((), "tool 'lookupCustomer' takes no argument 'nope'")
    ]
    args = {"query": "bob", "filter": {"tags": ["vip"]}}
    assert t.validate_arguments(args) == args
    with pytest.raises(ArgumentValidationError) as info:
        t.validate_arguments({"filter": {"tags": "vip"}, "limit": 3})
    assert info.value.problems == (
        ArgumentProblem(("filter", "tags"), 'expected an array, got "vip"'),
        ArgumentProblem(("limit",), "tool 'lookupCustomer' takes no argument 'limit'"),
        ArgumentProblem(("query",), "missing required argument"),
    )
    assert t.validate_output({"id": "x"}) == [
        ArgumentProblem(("id",), 'expected an integer, got "x"')
    ]


def test_schema_tool_other_keywords_use_jsonschema_messages() -> None:
    t = Tool.from_schema(
        {
            "name": "pick",
            "parameters": {
                "type": "object",
                "properties": {"colour": {"enum": ["red", "blue"]}},
                "additionalProperties": {"type": "integer"},
            },
        }
    )
    assert t.validate_argument("colour", "green") == [
        ArgumentProblem((), "'green' is not one of ['red', 'blue']")
    ]
    assert t.accepts_extra is True
    assert t.validate_argument("size", "big") == [
        ArgumentProblem((), 'expected an integer, got "big"')
    ]
    assert t.validate_arguments({"size": 3}) == {"size": 3}


def test_schema_dialect_follows_dollar_schema() -> None:
    t = Tool.from_schema(
        {
            "name": "old",
            "parameters": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
            },
        }
    )
    assert t.validate_argument("n", 0) == [
        ArgumentProblem((), "0 is less than or equal to the minimum of 0")
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ([1], "a tool description must be an object, not [1]"),
        ({"description": "x"}, "tool description has no 'name'"),
        ({"type": "function", "function": "f"}, "tool description: 'function' must be an object"),
        (
            {"name": 5},
            "invalid tool name 5: " + NAME_RULE,
        ),
        (
            {"name": "a b "},
            "invalid tool name 'a b ': " + NAME_RULE,
        ),
        ({"name": "t", "description": 3}, "tool 't': 'description' must be a string, got 3"),
        (
            {"name": "t", "parameters": {"type": "array"}},
            "tool 't': 'parameters' must be a JSON schema with \"type\": \"object\"",
        ),
        (
            {"name": "t", "parameters": [1]},
            "tool 't': 'parameters' must be a JSON schema with \"type\": \"object\"",
        ),
        (
            {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}},
            "tool 't': 'parameters' is not a valid JSON schema at properties.a.type: "
            "5 is not valid under any of the given schemas",
        ),
        (
            {"name": "t", "output": {"minimum": "0"}},
            "tool 't': 'output' is not a valid JSON schema at minimum: '0' is not of type 'number'",
        ),
        (
            {"name": "t", "output": 3},
            "tool 't': 'output' must be a JSON schema object",
        ),
        (
            {"name": "t", "timeout": "1"},
            "tool 't': timeout must be a positive number of seconds, got '1'",
        ),
        ({"name": "t", "capacity": -2}, "tool 't': capacity must be an integer >= 1, got -2"),
        (
            {"name": "t", "outcomes": ["a", "a"]},
            "tool 't': outcomes must be a list of unique non-empty strings, got ['a', 'a']",
        ),
        ({"name": "t", "pure": "no"}, "tool 't': pure must be true or false, got 'no'"),
    ],
)
def test_bad_specs_raise(spec: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_schema(spec)
    assert str(info.value) == message


def test_calling_a_latent_tool_raises() -> None:
    t = Tool.from_schema(LOOKUP_SPEC)
    with pytest.raises(ToolDefinitionError) as info:
        t(query="x")
    assert str(info.value) == "tool 'lookupCustomer' is latent (schema only); it cannot be called"


# -- Registry -------------------------------------------------------------------------------


def _lookup(query: str) -> str:
    return query


def test_registry_add_get_and_order() -> None:
    registry = Registry([tool(issue_refund)])
    added = registry.add(_lookup)
    assert isinstance(added, Tool)
    assert added.name == "_lookup"
    assert registry.names() == ["issue_refund", "_lookup"]
    assert [t.name for t in registry] == ["issue_refund", "_lookup"]
    assert len(registry) == 2
    assert "issue_refund" in registry
    assert "missing" not in registry
    assert registry.get("_lookup") is added
    assert registry.get("missing") is None
    assert registry["_lookup"] is added
    assert repr(registry) == "Registry(['issue_refund', '_lookup'])"


def test_registry_clash_and_override() -> None:
    registry = Registry([issue_refund])
    first = registry["issue_refund"]
    with pytest.raises(ToolDefinitionError) as info:
        registry.add(issue_refund)
    assert str(info.value) == "tool 'issue_refund' is already registered"
    replacement = Tool.from_function(_lookup, name="issue_refund")
    assert registry.add(replacement, override=True) is replacement
    assert registry["issue_refund"] is replacement is not first
    assert len(registry) == 1


def test_registry_getitem_suggests_close_names() -> None:
    registry = Registry(
        [
            Tool.from_function(_lookup, name="issueRefund"),
            Tool.from_function(_lookup, name="lookupCustomer"),
        ]
    )
    with pytest.raises(KeyError) as info:
        registry["issueRefnd"]
    assert info.value.args[0] == "unknown tool 'issueRefnd'; did you mean 'issueRefund'?"
    with pytest.raises(KeyError) as info:
        registry["zzz"]
    assert info.value.args[0] == "unknown tool 'zzz'"
    assert registry.suggest("ISSUEREFUND") == ["issueRefund"]
    assert registry.suggest("lookupcustomers") == ["lookupCustomer"]
    assert registry.suggest("zzz") == []


def test_registry_merge_returns_new_registry() -> None:
    a = Registry([issue_refund])
    b = Registry([_lookup])
    merged = a.merge(b)
    assert merged.names() == ["issue_refund", "_lookup"]
    assert a.names() == ["issue_refund"]
    assert b.names() == ["_lookup"]
    other = Registry([Tool.from_function(_lookup, name="issue_refund")])
    with pytest.raises(ToolDefinitionError, match=r"^tool 'issue_refund' is already registered$"):
        a.merge(other)
    assert a.merge(other, override=True)["issue_refund"] is other["issue_refund"]


def test_registry_from_schemas() -> None:
    registry = Registry.from_schemas([LOOKUP_SPEC, {"name": "ping"}])
    assert registry.names() == ["lookupCustomer", "ping"]
    assert all(t.latent for t in registry)


def _write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def forget_modules() -> Any:
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("obelisk_test_", "_obelisk_tools_")):
            del sys.modules[name]


TOOLS_FILE = """
    from obelisk.interpreter.tools.tool import tool, Tool
    from {helper} import RATE

    @tool
    def second(x: int) -> int:
        return x * RATE

    @tool(name="first")
    def first_tool() -> None:
        pass

    alias = second
    not_a_tool = 3
    latent = Tool.from_schema({{"name": "latent"}})
"""


def test_registry_from_module_file(tmp_path: Path, forget_modules: None) -> None:
    _write(tmp_path / "obelisk_test_helper_a.py", "RATE = 3\n")
    path = _write(tmp_path / "my_tools.py", TOOLS_FILE.format(helper="obelisk_test_helper_a"))
    path_before = list(sys.path)
    registry = Registry.from_module(str(path))
    assert registry.names() == ["second", "first", "latent"]
    assert registry["second"](2) == 6
    assert sys.path == path_before


def test_registry_from_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_modules: None
) -> None:
    _write(tmp_path / "obelisk_test_helper_b.py", "RATE = 5\n")
    _write(tmp_path / "obelisk_test_tools_b.py", TOOLS_FILE.format(helper="obelisk_test_helper_b"))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry.from_module("obelisk_test_tools_b")
    assert registry.names() == ["second", "first", "latent"]
    assert registry["second"](1) == 5
    assert Registry.from_module(sys.modules["obelisk_test_tools_b"]).names() == registry.names()


def test_registry_from_module_errors(tmp_path: Path, forget_modules: None) -> None:
    broken = _write(tmp_path / "broken.py", "raise RuntimeError('boom')\n")
    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_module(str(broken))
    assert str(info.value) == f"cannot load tools from {broken}: RuntimeError: boom"
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__ is True

    bad_syntax = _write(tmp_path / "bad_syntax.py", "def (:\n")
    with pytest.raises(
        ToolDefinitionError, match=r"^cannot load tools from .*bad_syntax\.py: SyntaxError: "
    ):
        Registry.from_module(str(bad_syntax))

    missing = tmp_path / "missing.py"
    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_module(str(missing))
    assert str(info.value) == f"cannot load tools from {missing}: no such file"

    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_module("obelisk_no_such_module_xyz")
    assert str(info.value) == (
        "cannot import tools module 'obelisk_no_such_module_xyz': "
        "ModuleNotFoundError: No module named 'obelisk_no_such_module_xyz'"
    )


def test_registry_from_module_name_clash(tmp_path: Path, forget_modules: None) -> None:
    path = _write(
        tmp_path / "clash.py",
        """
        from obelisk.interpreter.tools.tool import Tool
        a = Tool.from_schema({"name": "same"})
        b = Tool.from_schema({"name": "same"})
        """,
    )
    with pytest.raises(ToolDefinitionError, match=r"^tool 'same' is already registered$"):
        Registry.from_module(str(path))


def test_coerce_none_and_registry() -> None:
    empty = Registry.coerce(None)
    assert isinstance(empty, Registry)
    assert len(empty) == 0
    registry = Registry([issue_refund])
    assert Registry.coerce(registry) is registry
    blank = Registry()
    assert Registry.coerce(blank) is blank


def test_coerce_mapping_uses_keys_as_names() -> None:
    lookup = tool(_lookup)
    registry = Registry.coerce(
        {"refund": issue_refund, "find": lookup, "ping": {"description": "Ping."}}
    )
    assert registry.names() == ["refund", "find", "ping"]
    assert registry["refund"].parameter_names == ("customer_id", "amount", "note")
    assert registry["find"].function is _lookup
    assert lookup.name == "_lookup"  # the original tool is not renamed
    assert registry["ping"].latent is True
    assert registry["ping"].description == "Ping."
    with pytest.raises(ToolDefinitionError, match=r"^invalid tool name 'bad name '"):
        Registry.coerce({"bad name ": lookup})


def test_names_with_spaces_are_accepted() -> None:
    """Real catalogs name tools with spaces (Seal-Tools: 'requestFirst Aid Assistance')."""
    spaced = Tool.from_schema({"name": "requestFirst Aid Assistance"})
    assert Registry([spaced]).names() == ["requestFirst Aid Assistance"]


def test_hand_built_tool_still_validates() -> None:
    built = Tool(
        "t",
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}},
        output_schema={"type": "string"},
    )
    assert [p.message for p in built.validate_argument("x", "abc")] == [
        'expected an integer, got "abc"'
    ]
    assert built.validate_argument("x", 3) == []
    assert [p.message for p in built.validate_output(1)] == ["expected a string, got 1"]


def test_coerce_iterables_specs_and_modules() -> None:
    registry = Registry.coerce([issue_refund, tool(_lookup), LOOKUP_SPEC])
    assert registry.names() == ["issue_refund", "_lookup", "lookupCustomer"]
    assert registry["lookupCustomer"].latent is True
    assert Registry.coerce(t for t in [issue_refund]).names() == ["issue_refund"]
    single = Registry.coerce({"type": "function", "function": {"name": "f"}})
    assert single.names() == ["f"]
    assert Registry.coerce(LOOKUP_SPEC).names() == ["lookupCustomer"]
    assert Registry.coerce(tools_module).names() == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tools.py", "cannot make a tool registry from 'tools.py'"),
        (5, "cannot make a tool registry from 5"),
        (
            [5],
            "cannot use 5 as a tool: expected a Tool, a function or a JSON tool description",
        ),
    ],
)
def test_coerce_rejects_other_values(value: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        Registry.coerce(value)
    assert str(info.value) == message


# -- deferred tools (the standard tools' declaration) -----------------------------------------


def _deferrable_functions() -> list[Any]:
    from obelisk import Context

    def fielded(size: int = Field(10, ge=1), *, key: Annotated[str, Field(min_length=1)]) -> int:
        return size

    def labelled(item: str, **labels: int) -> Outcome:
        return Outcome(0)

    def loose(ctx: Context[int], value, **extra: Any) -> list[Customer]:  # type: ignore[no-untyped-def]
        return []

    def bound(a: int, b: int, c: Customer | None = None) -> dict[str, int]:
        return {}

    return [fielded, labelled, loose, functools.partial(bound, b=2), issue_refund]


@pytest.mark.parametrize("fn", _deferrable_functions())
def test_a_deferred_tool_builds_on_first_use_what_an_eager_one_builds(fn: Any) -> None:
    eager = Tool.from_function(fn, name="t")
    deferred = Tool.from_function(fn, name="t", _deferred=True)
    assert not deferred.built
    for attribute in ("parameter_names", "required", "accepts_extra", "context_parameter"):
        assert getattr(deferred, attribute) == getattr(eager, attribute), attribute
    assert not deferred.built  # nothing above needed the schemas
    assert deferred.parameters == eager.parameters
    assert deferred.built
    assert deferred.output_schema == eager.output_schema
    assert deferred.typed_output is eager.typed_output


def test_a_deferred_tool_builds_on_validation_copy_and_explicit_output_schema() -> None:
    first = Tool.from_function(issue_refund, _deferred=True)
    assert first.validate_arguments({"customer_id": "c", "amount": "2"}) == {
        "customer_id": "c",
        "amount": 2.0,
    }
    assert first.built
    second = Tool.from_function(issue_refund, _deferred=True)
    renamed = Registry.coerce({"refund": second})["refund"]  # a copy, renamed
    assert renamed.name == "refund" and renamed.parameters == first.parameters
    third = Tool.from_function(issue_refund, output_schema={"type": "object"}, _deferred=True)
    assert third.output_schema == {"type": "object"}
    assert not third.built  # given, not built
    assert third.validate_output([]) == [ArgumentProblem((), "expected an object, got []")]
    with pytest.raises(AttributeError, match="'Tool' object has no attribute 'nope'"):
        third.nope  # type: ignore[attr-defined]  # noqa: B018
