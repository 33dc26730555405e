"""``obelisk.models.tool_calls``: the ``tools`` protocol's pieces, provider-neutral and
SDK-free (issue 29, point 2; docs/loop.md, "Protocols")."""

from __future__ import annotations

import json
from typing import Any

import pytest

import obelisk
from obelisk.errors import SolutionError
from obelisk.interpreter.loop.messages import ErrorMessage, PlanMessage, TextMessage
from obelisk.models import openai_shapes, tool_calls
from obelisk.models.tool_calls import FINAL_OUTPUT, ToolCall

DOTTED = obelisk.Tool.from_schema(
    {
        "name": "crm.find",
        "description": "Find a customer.",
        "parameters": {
            "type": "object",
            "properties": {"who": {"$ref": "#/$defs/Who"}},
            "required": ["who"],
            "$defs": {"Who": {"type": "object", "properties": {"email": {"type": "string"}}}},
        },
    }
)
CLASH = obelisk.Tool.from_schema({"name": "final_output", "description": "A tool named so."})


def request(*tools: obelisk.Tool, output: Any = None, **config: Any) -> obelisk.Request:
    schema = obelisk.solution_schema(obelisk.Registry(list(tools)), output)
    return obelisk.Request(config={"mode": "eager", "turn": 1, **config}, schema=schema)


def test_names_providers_refuse_are_mapped_there_and_back() -> None:
    made = request(DOTTED, CLASH)
    offered = tool_calls.functions(made)
    assert [f["name"] for f in offered] == ["crm_find", "final_output_", FINAL_OUTPUT]
    parameters = offered[0]["parameters"]
    assert parameters["required"] == ["who", "_outputPath"]  # a result must go somewhere
    assert set(parameters["$defs"]) == {"crm.find.Who", "reference"}  # the defs it needs
    calls = [
        ToolCall("1", "crm_find", {"who": {"email": "a@b.c"}}),
        ToolCall("2", "final_output_", ""),
    ]
    solution = tool_calls.solution_of(made, calls, None)
    assert [call["_tool"] for call in solution.calls] == ["crm.find", "final_output"]


def test_every_meta_property_is_described_in_one_sentence() -> None:
    latent = obelisk.Tool.from_schema(
        {"name": "summarize", "parameters": {"type": "object"}, "output": {"type": "string"}}
    )
    (function, _) = tool_calls.functions(request(latent))
    meta = {k: v for k, v in function["parameters"]["properties"].items() if k.startswith("_")}
    assert set(meta) == {"_outputPath", "_outputMethod", "_instance", "_id",
                         "_reasoningForCall", "_output"}  # fmt: skip
    for name, schema in meta.items():
        text = schema["description"]
        assert text == tool_calls.META_DESCRIPTIONS[name]
        assert text.endswith(".") and ". " not in text, text
    # all optional but _outputPath: a result written nowhere is lost (docs/loop.md)
    assert function["parameters"]["required"] == ["_outputPath"]


def test_a_latent_sub_request_offers_only_final_output() -> None:
    schema = {
        "type": "object",
        "properties": {"calls": {"type": "array", "maxItems": 0}, "output": {"type": "string"}},
        "required": ["calls", "output"],
    }
    made = obelisk.Request(config={"mode": "latent"}, schema=schema)
    (only,) = tool_calls.functions(made)
    assert only["name"] == FINAL_OUTPUT
    assert only["parameters"]["properties"]["output"] == {"type": "string"}
    answer = [ToolCall("1", FINAL_OUTPUT, '{"output": "Short."}')]
    assert tool_calls.solution_of(made, answer, None).output == "Short."


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ([ToolCall("1", "crm_find", "[1, 2]")], "tool call #0 crm_find: its arguments must be"),
        ([ToolCall("1", FINAL_OUTPUT, "{}")], 'final_output takes {"output": ...}'),
        (
            [
                ToolCall("1", FINAL_OUTPUT, '{"output": 1}'),
                ToolCall("2", FINAL_OUTPUT, '{"output": 2}'),
            ],
            "final_output was called 2 times",
        ),
    ],
)
def test_unusable_tool_calls(calls: list[ToolCall], message: str) -> None:
    with pytest.raises(SolutionError, match=message.replace("[", r"\[").replace("{", r"\{")):
        tool_calls.solution_of(request(DOTTED), calls, None)


def test_streamed_calls_give_the_solution_text_call_by_call() -> None:
    made = request(DOTTED, output={"type": "integer"})
    stream = tool_calls.StreamedCalls(made)
    assert stream.start(0, "c1", "crm_find") == ""
    stream.piece(0, '{"who": {"email"')
    stream.piece(0, ': "a@b.c"}, "_outputPath": "†state.c"}')
    first = stream.start(1, "c2", FINAL_OUTPUT)  # the next call closes the first
    assert (
        first
        == '{"calls": [{"_tool": "crm.find", "who": {"email": "a@b.c"}, "_outputPath": "†state.c"}'
    )
    stream.piece(1, '{"output": 3}')
    text = first + stream.finish()
    assert json.loads(text) == {
        "calls": [{"_tool": "crm.find", "who": {"email": "a@b.c"}, "_outputPath": "†state.c"}],
        "output": 3,
    }
    empty = tool_calls.StreamedCalls(made)
    with pytest.raises(SolutionError, match="empty"):
        empty.finish()
    text_only = tool_calls.StreamedCalls(made)
    text_only.content("4")
    assert text_only.finish() == '{"calls": [], "output": 4}'  # the text fits the output schema
    cut = tool_calls.StreamedCalls(made)
    cut.content("4")
    with pytest.raises(SolutionError, match="no tool call"):
        cut.finish(cut=True)  # cut off at the token limit: the text is no answer


def test_the_carried_calls_are_answered_with_their_status_and_errors() -> None:
    made = obelisk.Request(
        config={"mode": "eager", "turn": 2},
        schema=obelisk.solution_schema(obelisk.Registry([DOTTED])),
        context=[
            TextMessage(text="Find a@b.c."),
            PlanMessage(plan=[
                {"_tool": "crm.find", "who": "†input.who", "_outputPath": "†state.c",
                 "_status": "failed"},
                {"_tool": "crm.find", "who": {}, "_status": "succeeded"},
            ]),
            ErrorMessage(call="#0 crm.find", error={"type": "tool_error", "message": "no"}),
        ],
    )  # fmt: skip
    talk = tool_calls.conversation(made)
    assert [call.name for call in talk.calls] == ["crm_find", "crm_find"]
    assert "_status" not in talk.calls[0].arguments
    first, second = (json.loads(result) for result in talk.results)
    assert first["status"] == "failed" and first["errors"][0]["error"]["message"] == "no"
    assert second == {"call": "#1 crm.find", "status": "succeeded",
                      "note": "the state and plan that follow show what it did"}  # fmt: skip
    assert json.loads(talk.opening)["context"][0]["type"] == "text"
    closing = json.loads(talk.closing)
    assert closing["config"]["turn"] == 2
    assert [m["type"] for m in closing["context"]] == ["plan", "error"]
    roles = [m["role"] for m in openai_shapes.openai_messages(talk)]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]


def test_a_solution_written_as_text_is_taken() -> None:
    made = request(DOTTED, output={"type": "object"})
    text = '```json\n{"calls": [{"_tool": "crm.find", "who": "†input.who"}], "output": null}\n```'
    solution = tool_calls.solution_of(made, [], text)
    assert solution.calls == [{"_tool": "crm.find", "who": "†input.who"}]
    assert solution.output is None
    assert tool_calls.solution_of(made, [], '{"calls": [], "output": {"id": 1}}').output == {
        "id": 1
    }
    assert tool_calls.solution_of(made, [], '{"id": 1}').output == {"id": 1}  # fits the schema
    streamed = tool_calls.StreamedCalls(made)
    streamed.content(text[:20])
    streamed.content(text[20:])
    assert json.loads(streamed.finish()) == solution.to_data()
