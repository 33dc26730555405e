"""``OpenAIChatModel(protocol="tools")``: native tool calls (issue 29, point 2;
docs/loop.md, "Protocols").

The real ``openai`` SDK talks to a local HTTP server on the loopback interface
(tests/unit/models/conftest.py) that replays recorded chat-completion responses
(tests/data/models/openai_tools_*), never the network.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("openai")

import obelisk
from obelisk.errors import SolutionError, UsageError
from obelisk.models import OpenAIChatModel

ORDERS = {"A1": {"id": "A1", "total": 50}}


@obelisk.tool
def lookup(id: str) -> dict[str, Any]:
    """Look an order up by its id."""
    return ORDERS[id]


@obelisk.tool
def refund(order: str, amount: int) -> dict[str, Any]:
    """Refund an amount (USD) of an order."""
    return {"order": order, "refunded": amount}


TOOLS = [lookup, refund]


def model(loopback: Any, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(
        "qwen2.5-coder-1.5b-instruct",
        base_url=loopback.url + "/v1",
        protocol="tools",
        max_retries=0,
        **options,
    )


def test_parallel_tool_calls_are_one_plan_and_final_output_ends_the_loop(loopback: Any) -> None:
    loopback.answer(loopback.recorded("openai_tools_parallel.json"))
    loopback.answer(loopback.recorded("openai_tools_final.json"))
    chat = model(loopback)
    result = obelisk.Loop(chat, TOOLS, max_turns=3).run_sync({"order": "A1"})

    assert result.output == {"order": "A1", "refunded": 50}
    first = result.turns[0]
    assert [call["_tool"] for call in first.solution.calls] == ["lookup", "refund"]
    assert first.solution.calls[1]["amount"] == "†state.order.total"  # one plan: a reference
    assert result.usage == {"prompt_tokens": 1357, "completion_tokens": 90, "total_tokens": 1447}

    body = loopback.bodies[0]
    assert loopback.paths == ["/v1/chat/completions"] * 2
    assert "response_format" not in body
    names = [tool["function"]["name"] for tool in body["tools"]]
    assert names == ["lookup", "refund", "final_output"]
    parameters = body["tools"][0]["function"]["parameters"]
    assert parameters["required"] == ["id", "_outputPath"]
    assert "_tool" not in parameters["properties"]
    for meta in ("_outputPath", "_outputMethod", "_id", "_instance", "_reasoningForCall"):
        description = parameters["properties"][meta]["description"]
        assert description.endswith(".") and description.count(". ") == 0, description
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user"]

    # the second request: the calls answered by tool messages, then state and plan
    second = loopback.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool", "user"]
    replayed = second[2]["tool_calls"]
    assert [c["function"]["name"] for c in replayed] == ["lookup", "refund"]
    assert json.loads(replayed[0]["function"]["arguments"]) == {
        "id": "†input.order",
        "_outputPath": "†state.order",
    }
    assert [m["tool_call_id"] for m in second[3:5]] == [c["id"] for c in replayed]
    closing = json.loads(second[5]["content"])
    kinds = [m["type"] for m in closing["context"]]
    assert "state" in kinds and "plan" in kinds
    (state,) = [m for m in closing["context"] if m["type"] == "state"]
    assert state["state"]["refund"] == {"order": "A1", "refunded": 50}
    assert second[:2] == loopback.bodies[0]["messages"][:2]  # the opening does not change


def test_a_wrong_argument_gets_checks_located_correction(loopback: Any) -> None:
    loopback.answer(loopback.recorded("openai_tools_wrong_argument.json"))
    loopback.answer(loopback.recorded("openai_tools_parallel.json"))
    loopback.answer(loopback.recorded("openai_tools_final.json"))
    result = obelisk.Loop(model(loopback), TOOLS, max_turns=4).run_sync({"order": "A1"})

    assert result.output == {"order": "A1", "refunded": 50}
    messages = [e.error["message"] for e in result.turns[0].errors]
    assert any("#1 refund" in m and "amount" in m for m in messages), messages
    second = loopback.bodies[1]["messages"]
    tool_results = [m["content"] for m in second if m["role"] == "tool"]
    assert "#1 refund" in tool_results[1] and "amount" in tool_results[1]  # the located diagnostic
    assert "errors" not in tool_results[0]


def test_the_message_text_is_the_output_when_it_fits(loopback: Any) -> None:
    def text(content: str) -> dict[str, Any]:
        body = json.loads(loopback.recorded("openai_tools_final.json"))
        body["choices"][0]["message"] = {"role": "assistant", "content": content}
        body["choices"][0]["finish_reason"] = "stop"
        return body

    loopback.answer(text("42"))
    loop = obelisk.Loop(model(loopback), TOOLS, output_schema={"type": "integer"})
    assert loop.run_sync({"order": "A1"}).output == 42

    loopback.answer(text("I will look the order up."))
    with pytest.raises(SolutionError, match="no tool call, and its text does not fit"):
        asyncio.run(model(loopback).complete(loop_request()))


def loop_request() -> obelisk.Request:
    schema = obelisk.solution_schema(obelisk.Registry(TOOLS), {"type": "integer"})
    return obelisk.Request(config={"mode": "eager", "turn": 1}, schema=schema)


def test_arguments_that_are_not_json_name_the_call(loopback: Any) -> None:
    body = json.loads(loopback.recorded("openai_tools_parallel.json"))
    body["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] = '{"order": "A1",'
    loopback.answer(body)
    with pytest.raises(SolutionError, match=r"tool call #1 refund: its arguments are not JSON"):
        asyncio.run(model(loopback).complete(loop_request()))
    body["choices"][0]["finish_reason"] = "length"
    loopback.answer(body)
    with pytest.raises(SolutionError, match=r"cut off at max_tokens=40"):
        asyncio.run(model(loopback, max_tokens=40).complete(loop_request()))


def test_streamed_tool_calls_run_as_they_arrive(loopback: Any) -> None:
    loopback.answer(sse=loopback.recorded("openai_tools_parallel.sse"))
    chat = model(loopback)

    async def read() -> tuple[list[str], Any]:
        stream = chat.stream(loop_request())
        return [piece async for piece in stream], stream.usage

    pieces, usage = asyncio.run(read())
    text = "".join(pieces)
    solution = obelisk.parse_solution(text)
    assert [call["_tool"] for call in solution.calls] == ["lookup", "refund"]
    assert pieces[0].startswith('{"calls": [{"_tool": "lookup"')  # the first call, alone
    assert usage == {"prompt_tokens": 612, "completion_tokens": 71, "total_tokens": 683}
    assert loopback.bodies[0]["stream"] is True and "tools" in loopback.bodies[0]

    loopback.answer(sse=loopback.recorded("openai_tools_parallel.sse"))
    loopback.answer(sse=loopback.recorded("openai_tools_final.sse"))
    result = obelisk.Loop(chat, TOOLS, stream=True, max_turns=3).run_sync({"order": "A1"})
    assert result.output == {"order": "A1", "refunded": 50}
    assert result.turns[0].usage == usage


def test_protocol_is_checked() -> None:
    with pytest.raises(UsageError, match="protocol must be 'json' or 'tools'"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", protocol="xml")  # type: ignore[arg-type]
    assert OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1").protocol == "json"


def test_lazy_mode_takes_the_tool_calls_as_the_plan(loopback: Any) -> None:
    loopback.answer(loopback.recorded("openai_tools_parallel.json"))
    loopback.answer(loopback.recorded("openai_tools_final.json"))
    loop = obelisk.Loop(model(loopback), TOOLS, mode="lazy", max_turns=3)
    result = loop.run_sync({"order": "A1"})
    assert result.output == {"order": "A1", "refunded": 50}
    second = loopback.bodies[1]["messages"]
    statuses = [json.loads(m["content"])["status"] for m in second if m["role"] == "tool"]
    assert statuses == ["succeeded", "succeeded"]
    assert json.loads(second[-1]["content"])["config"]["mode"] == "lazy"
