"""Tools from JSON descriptions (OpenAI, MCP, obelisk's own), runnable with a function,
per-run context parameters and functools.partial (docs/tools.md)."""

from __future__ import annotations

import asyncio
import functools
from typing import Annotated, Any

import pytest

import obelisk
from obelisk import Context, Registry, Tool, ToolDefinitionError
from obelisk.errors import ArgumentProblem, ArgumentValidationError

SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "description": "IATA code"},
        "destination": {"type": "string"},
        "passengers": {"type": "integer", "minimum": 1},
    },
    "required": ["origin", "destination"],
    "additionalProperties": False,
}

OPENAI_SEARCH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "description": "Search flights.",
        "parameters": SEARCH_PARAMETERS,
        "strict": False,
    },
}


def search_flights(origin: str, destination: str, passengers: int = 1) -> str:
    return f"{origin}-{destination} x{passengers}"


MCP_WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "title": "Weather for a city",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"celsius": {"type": "number"}},
        "required": ["celsius"],
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
    "_meta": {"vendor": "x"},
}


async def get_weather(city: str) -> dict[str, Any]:
    return {"celsius": float(len(city))}


def message(spec: Any, **options: Any) -> str:
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_schema(spec, **options)
    return str(info.value)


# -- runnable tools from each shape ----------------------------------------------------------


def test_openai_spec_with_function_runs() -> None:
    t = Tool.from_schema(OPENAI_SEARCH, function=search_flights)
    assert (t.name, t.description, t.latent, t.is_async) == (
        "search_flights",
        "Search flights.",
        False,
        False,
    )
    assert t.parameters == SEARCH_PARAMETERS
    assert t.parameters is not SEARCH_PARAMETERS  # the caller's dict is not kept
    assert t.required == frozenset({"origin", "destination"})
    plan = [
        {
            "_tool": "search_flights",
            "origin": "AMS",
            "destination": "LIS",
            "passengers": 2,
            "_outputPath": "†state.trip",
        }
    ]
    assert obelisk.run_sync(plan, [t]).state == {"trip": "AMS-LIS x2"}


def test_arguments_are_validated_against_the_json_schema() -> None:
    t = Tool.from_schema(OPENAI_SEARCH, function=search_flights)
    with pytest.raises(ArgumentValidationError) as info:
        t.validate_arguments({"origin": 5, "passengers": 0})
    assert info.value.problems == (
        ArgumentProblem(("origin",), "expected a string, got 5"),
        ArgumentProblem(("passengers",), "0 is less than the minimum of 1"),
        ArgumentProblem(("destination",), "missing required argument"),
    )
    result = obelisk.run_sync(
        [{"_tool": "search_flights", "origin": "AMS", "destination": "†input.to"}],
        [t],
        input={"to": 7},
    )
    assert result.calls[0].status == "failed"
    assert result.calls[0].error == {
        "type": "ArgumentValidationError",
        "message": "invalid arguments for tool 'search_flights':\n"
        "  destination: expected a string, got 7",
    }


def test_bare_shape_and_obelisk_keys_with_async_function() -> None:
    async def lookup(query: str) -> dict[str, Any]:
        return {"id": len(query)}

    t = Tool.from_schema(
        {
            "name": "lookup",
            "description": "Find.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
            "output": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "timeout": 2,
            "capacity": 3,
            "pure": True,
        },
        function=lookup,
    )
    assert (t.is_async, t.timeout, t.capacity, t.pure) == (True, 2.0, 3, True)
    result = obelisk.run_sync([{"_tool": "lookup", "query": "abc", "_outputPath": "†state.r"}], [t])
    assert result.state == {"r": {"id": 3}}


def test_responses_api_flat_shape_is_the_bare_shape() -> None:
    t = Tool.from_schema(
        {"type": "function", "name": "ping", "parameters": {"type": "object"}, "strict": True},
        function=lambda: "pong",
    )
    assert (t.name, t.parameter_names) == ("ping", ())
    assert obelisk.run_sync([{"_tool": "ping", "_outputPath": "†state.p"}], [t]).state == {
        "p": "pong"
    }


def test_mcp_description_with_async_function() -> None:
    t = Tool.from_schema(MCP_WEATHER, function=get_weather)
    assert t.name == "get_weather"
    assert t.description == "Weather for a city"  # the title stands in for a description
    assert t.pure is True  # readOnlyHint
    assert t.is_async is True
    assert t.output_schema == MCP_WEATHER["outputSchema"]
    result = obelisk.run_sync(
        [{"_tool": "get_weather", "city": "Oslo", "_outputPath": "†state.w"}], [t]
    )
    assert result.state == {"w": {"celsius": 4.0}}


def test_mcp_output_schema_is_enforced_on_results() -> None:
    async def broken_weather(city: str) -> dict[str, Any]:
        return {"celsius": "warm"}

    t = Tool.from_schema(MCP_WEATHER, function=broken_weather)
    result = obelisk.run_sync(
        [{"_tool": "get_weather", "city": "Oslo", "_outputPath": "†state.w"}], [t]
    )
    assert result.state == {}
    assert result.calls[0].error == {
        "type": "OutputValidationError",
        "message": "the output of get_weather does not fit its schema at celsius: expected a "
        'number, got "warm"',
    }


def test_mcp_annotations_map_to_pure_only_through_read_only_hint() -> None:
    plain = {"name": "t", "inputSchema": {"type": "object"}}
    assert Tool.from_schema(plain).pure is False
    assert Tool.from_schema({**plain, "annotations": {"readOnlyHint": False}}).pure is False
    assert Tool.from_schema({**plain, "annotations": {"idempotentHint": True}}).pure is False
    hinted = {**plain, "annotations": {"readOnlyHint": True}}
    assert Tool.from_schema({**hinted, "pure": False}).pure is False  # obelisk's key wins
    assert Tool.from_schema({**plain, "description": "Says.", "title": "T"}).description == (
        "Says."
    )


def test_latent_from_schema_is_unchanged_without_a_function() -> None:
    t = Tool.from_schema(OPENAI_SEARCH)
    assert t.latent is True
    assert t.accepts_extra is False
    assert t.validate_argument("origin", 1) == [ArgumentProblem((), "expected a string, got 1")]


def test_an_open_schema_refuses_extra_names_the_function_cannot_take() -> None:
    open_schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    closed = Tool.from_schema({"name": "f", "parameters": open_schema}, function=lambda a=0: a)
    assert closed.accepts_extra is False
    assert closed.validate_argument("b", 1) == [
        ArgumentProblem((), "tool 'f' takes no argument 'b'")
    ]

    def flexible(a: int = 0, **rest: Any) -> Any:
        return rest

    t = Tool.from_schema({"name": "g", "parameters": open_schema}, function=flexible)
    assert t.accepts_extra is True
    result = obelisk.run_sync([{"_tool": "g", "b": 1, "_outputPath": "†state.r"}], [t])
    assert result.state == {"r": {"b": 1}}


# -- bad descriptions -----------------------------------------------------------------------


PLAIN_KEYS = (
    "name, description, parameters, input_schema, output, output_schema, strict, type, "
    "outcomes, timeout, capacity, pure, _delegate, _scopes, delegate, scopes, effects, "
    "requires_approval, idempotent, output_trust, trusted_args, on_untrusted, audience_arg"
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"name": "t", "paramters": {}},
            "tool 't': unknown key 'paramters' in the tool description; "
            f"the allowed keys are {PLAIN_KEYS}",
        ),
        (
            {"name": "t", "x": 1, "y": 2},
            f"tool 't': unknown keys 'x', 'y' in the tool description; the allowed keys are "
            f"{PLAIN_KEYS}",
        ),
        (
            {**OPENAI_SEARCH, "extra": True},
            "tool 'search_flights': unknown key 'extra' in the OpenAI tool description; "
            "the allowed keys are type, function, outcomes, timeout, capacity, pure, "
            "_delegate, _scopes, delegate, scopes, effects, requires_approval, idempotent, "
            "output_trust, trusted_args, on_untrusted, audience_arg",
        ),
        (
            {"type": "function", "function": {**OPENAI_SEARCH["function"], "examples": []}},
            "tool 'search_flights': unknown key 'examples' in 'function'; the allowed keys "
            "are name, description, parameters, input_schema, output, output_schema, "
            "strict, outcomes, timeout, capacity, pure, _delegate, _scopes, delegate, scopes, "
            "effects, requires_approval, idempotent, "
            "output_trust, trusted_args, on_untrusted, audience_arg",
        ),
        (
            {**MCP_WEATHER, "parameters": {}},
            "tool 'get_weather': unknown key 'parameters' in the MCP tool description; the "
            "allowed keys are name, title, description, inputSchema, outputSchema, "
            "annotations, icons, execution, _meta, outcomes, timeout, capacity, pure, "
            "_delegate, _scopes, delegate, scopes, effects, requires_approval, idempotent, "
            "output_trust, trusted_args, on_untrusted, audience_arg",
        ),
        (
            {"type": "function", "function": {"parameters": {}}},
            "tool description has no 'name'",
        ),
        (
            {"name": "t", "inputSchema": {"type": "array"}},
            "tool 't': 'inputSchema' must be a JSON schema with \"type\": \"object\"",
        ),
        (
            {"name": "t", "input_schema": {"type": "string"}},
            "tool 't': 'input_schema' must be a JSON schema with \"type\": \"object\"",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": 1}}}},
            "tool 't': 'inputSchema' is not a valid JSON schema at properties.a.type: "
            "1 is not valid under any of the given schemas",
        ),
        (
            {"name": "t", "inputSchema": {}, "outputSchema": {"type": "nope"}},
            "tool 't': 'outputSchema' is not a valid JSON schema at type: "
            "'nope' is not valid under any of the given schemas",
        ),
        (
            {"name": "t", "inputSchema": {}, "annotations": []},
            "tool 't': 'annotations' must be an object, got []",
        ),
        (
            {"name": "t", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}},
            "tool 't': 'annotations.readOnlyHint' must be true or false, got 'yes'",
        ),
        (
            {"name": "t", "inputSchema": {}, "title": 3},
            "tool 't': 'title' must be a string, got 3",
        ),
        ({"name": "t", "strict": "yes"}, "tool 't': 'strict' must be true or false, got 'yes'"),
        ({"name": "t", "type": "custom"}, "tool 't': 'type' must be \"function\", got 'custom'"),
    ],
)
def test_bad_descriptions_name_the_key(spec: Any, expected: str) -> None:
    assert message(spec) == expected


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (
            lambda origin, destination: None,
            "tool 'search_flights': 'parameters' lists 'passengers', which the function does "
            "not take (it takes origin, destination)",
        ),
        (
            lambda origin, destination, passengers, limit: None,
            "tool 'search_flights': the function requires 'limit', which 'parameters' does "
            "not list",
        ),
        (
            lambda origin, destination, passengers: None,
            "tool 'search_flights': the function requires 'passengers', which 'parameters' "
            'leaves optional; list it in "required" or give it a default',
        ),
        (
            lambda origin, /, destination, passengers=1: None,
            "tool 'search_flights': parameter 'origin' is positional; tools take named arguments",
        ),
        (3, "tool 'search_flights': function must be callable, got 3"),
    ],
)
def test_a_function_that_does_not_fit_the_schema_is_refused(function: Any, expected: str) -> None:
    assert message(OPENAI_SEARCH, function=function) == expected


def test_a_partial_bound_keyword_is_not_a_property() -> None:
    def search(origin: str, destination: str, passengers: int = 1, db: Any = None) -> Any:
        return db

    bound = functools.partial(search, passengers=2)
    assert message(OPENAI_SEARCH, function=bound) == (
        "tool 'search_flights': 'parameters' lists 'passengers', which the function does "
        "not take (it takes origin, destination, db)"
    )
    t = Tool.from_schema(OPENAI_SEARCH, function=functools.partial(search, db="the db"))
    plan = [
        {"_tool": "search_flights", "origin": "A", "destination": "B", "_outputPath": "†state.d"}
    ]
    assert obelisk.run_sync(plan, [t]).state == {"d": "the db"}


def test_delegate_with_function_is_refused() -> None:
    assert message({"name": "d", "_delegate": True}, function=lambda: None) == (
        "tool 'd': delegate must be true or false, and only on a latent tool"
    )


def test_a_repeated_schema_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonschema

    checked: list[Any] = []
    original = jsonschema.Draft202012Validator.check_schema

    def counting(schema: Any, *args: Any, **kwargs: Any) -> None:
        checked.append(schema)
        original(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", counting)
    unique = {"type": "object", "properties": {"never_seen_before_xyz": {"type": "string"}}}
    reordered = {"properties": {"never_seen_before_xyz": {"type": "string"}}, "type": "object"}
    for spec in ({"name": "a", "parameters": unique}, {"name": "b", "parameters": reordered}):
        Tool.from_schema(spec, function=lambda never_seen_before_xyz=None: None)
    assert checked == [unique]  # the same schema in another key order: canonical JSON hits


# -- context parameters --------------------------------------------------------------------


class Mailbox:
    def __init__(self) -> None:
        self.sent: list[str] = []


def send(to: str, text: str, ctx: Context[Mailbox]) -> int:
    """Send a message."""
    ctx.deps.sent.append(f"{to}: {text}")
    return len(ctx.deps.sent)


def test_context_parameter_is_left_out_of_the_schema() -> None:
    t = obelisk.tool(send)
    assert t.context_parameter == "ctx"
    assert t.parameters == {
        "type": "object",
        "properties": {"to": {"type": "string"}, "text": {"type": "string"}},
        "required": ["to", "text"],
        "additionalProperties": False,
    }
    assert t.validate_argument("ctx", {}) == [
        ArgumentProblem((), "tool 'send' takes no argument 'ctx'")
    ]


def test_context_annotated_or_bare_is_found() -> None:
    def annotated(x: int, world: Annotated[Context[Mailbox], "the world"]) -> int:
        return x

    def bare(x: int, world: Context) -> int:  # type: ignore[type-arg]
        return x

    assert obelisk.tool(annotated).context_parameter == "world"
    assert obelisk.tool(bare).context_parameter == "world"


def test_two_context_parameters_are_refused() -> None:
    def twice(a: Context[int], b: Context[int]) -> None: ...

    with pytest.raises(ToolDefinitionError) as info:
        obelisk.tool(twice)
    assert str(info.value) == (
        "tool 'twice': parameters 'a' and 'b' both take the run context; a tool has at most one"
    )
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_schema({"name": "twice"}, function=twice)
    assert str(info.value) == (
        "tool 'twice': parameters 'a' and 'b' both take the run context; a tool has at most one"
    )


def test_from_schema_finds_or_is_told_the_context_parameter() -> None:
    spec = {
        "name": "send",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "text": {"type": "string"}},
            "required": ["to", "text"],
        },
    }
    assert Tool.from_schema(spec, function=send).context_parameter == "ctx"

    def untyped(to: str, text: str, world: Any) -> int:
        return len(world.deps.sent)

    told = Tool.from_schema(spec, function=untyped, context_parameter="world")
    assert told.context_parameter == "world"
    assert message(spec, function=untyped) == (
        "tool 'send': the function requires 'world', which 'parameters' does not list"
    )
    assert message(spec, function=untyped, context_parameter="nope") == (
        "tool 'send': context_parameter 'nope' is not a parameter of the function"
    )
    assert message(spec, context_parameter="world") == (
        "tool 'send': context_parameter needs a function"
    )
    listed = {
        "name": "send",
        "parameters": {"type": "object", "properties": {"to": {}, "text": {}, "ctx": {}}},
    }
    assert message(listed, function=send) == (
        "tool 'send': 'parameters' lists 'ctx', the parameter that takes the run context"
    )


def test_string_annotations_are_resolved_for_the_context() -> None:
    namespace: dict[str, Any] = {"obelisk": obelisk}
    exec(
        "from __future__ import annotations\n"
        "def note(text: str, ctx: obelisk.Context[list]) -> int:\n"
        "    ctx.deps.append(text)\n"
        "    return len(ctx.deps)\n",
        namespace,
    )
    spec = {"name": "note", "parameters": {"type": "object", "properties": {"text": {}}}}
    assert message(spec, function=namespace["note"]) == (
        "tool 'note': the function requires 'text', which 'parameters' leaves optional; "
        'list it in "required" or give it a default'
    )
    spec["parameters"]["required"] = ["text"]  # type: ignore[index]
    assert Tool.from_schema(spec, function=namespace["note"]).context_parameter == "ctx"


# -- functools.partial -----------------------------------------------------------------------


def test_partial_bound_parameters_are_not_in_the_schema_nor_passed_twice() -> None:
    def lookup(key: str, db: dict[str, str], default: str = "?") -> str:
        return db.get(key, default)

    t = obelisk.tool(functools.partial(lookup, db={"k": "v"}))
    assert t.name == "lookup"
    assert t.parameter_names == ("key", "default")
    assert "db" not in t.parameters["properties"]
    result = obelisk.run_sync([{"_tool": "lookup", "key": "k", "_outputPath": "†state.v"}], [t])
    assert result.state == {"v": "v"}
    checked = obelisk.check([{"_tool": "lookup", "key": "k", "db": {}}], [t])
    assert [d.message for d in checked.diagnostics] == [
        "unexpected argument 'db'; lookup takes key, default"
    ]


def test_partial_bound_keyword_is_refused_even_with_kwargs() -> None:
    def flexible(key: str, db: Any = None, **rest: Any) -> Any:
        return rest

    t = obelisk.tool(functools.partial(flexible, db="x"))
    assert t.accepts_extra is True
    assert t.validate_argument("db", "y") == [
        ArgumentProblem((), "tool 'flexible' takes no argument 'db'")
    ]
    assert t.validate_argument("other", "y") == []


# -- registries --------------------------------------------------------------------------------


def test_registry_from_openai_tools() -> None:
    latent = {"type": "function", "function": {"name": "summarize", "parameters": {}}}
    registry = Registry.from_openai_tools(
        [OPENAI_SEARCH, latent], functions={"search_flights": search_flights}
    )
    assert registry.names() == ["search_flights", "summarize"]
    assert [t.latent for t in registry] == [False, True]
    assert registry["search_flights"](origin="A", destination="B") == "A-B x1"


def test_registry_function_without_description_is_an_error() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_openai_tools([OPENAI_SEARCH], functions={"serach_flights": search_flights})
    assert str(info.value) == "no tool description for the function 'serach_flights'"
    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_mcp_tools([], functions={"a": print, "b": print})
    assert str(info.value) == "no tool description for the functions 'a', 'b'"


class _Dumped:
    """Stands in for the mcp package's Tool model."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, *, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
        assert by_alias and exclude_none
        return self.data


class _Listed:
    def __init__(self, tools: list[Any]) -> None:
        self.tools = tools


def test_registry_from_mcp_tools_takes_lists_results_and_models() -> None:
    functions = {"get_weather": get_weather}
    for given in (
        [MCP_WEATHER],
        {"tools": [MCP_WEATHER]},
        _Listed([_Dumped(MCP_WEATHER)]),
    ):
        registry = Registry.from_mcp_tools(given, functions=functions)
        assert registry.names() == ["get_weather"]
        assert asyncio.run(registry["get_weather"](city="Rome")) == {"celsius": 4.0}
    assert Registry.from_mcp_tools([MCP_WEATHER])["get_weather"].latent is True
    with pytest.raises(ToolDefinitionError) as info:
        Registry.from_mcp_tools("tools")
    assert str(info.value) == "expected a list of MCP tool descriptions, got 'tools'"
