"""``AnthropicModel``: Anthropic's Messages API with native tool use (issue 29, point 5;
docs/loop.md, "Providers").

The real ``anthropic`` SDK talks to a local HTTP server on the loopback interface
(tests/unit/models/conftest.py) that replays responses in the Messages API's wire
format, JSON and server-sent events (tests/data/models/anthropic_*), never the
network.  The tests mirror the OpenAI adapter's: tool use, streaming, usage, retries,
timeouts, truncated answers, refusals, server errors.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import pytest

pytest.importorskip("anthropic")

import obelisk
from obelisk.errors import ModelError, SolutionError, UsageError
from obelisk.interpreter.loop.model import StreamingModel
from obelisk.models import AnthropicModel

ORDERS = {"A1": {"id": "A1", "total": 50}}
REFUNDED = {"order": "A1", "refunded": 50}


@obelisk.tool
def lookup(id: str) -> dict[str, Any]:
    """Look an order up by its id."""
    return ORDERS[id]


@obelisk.tool
def refund(order: str, amount: int) -> dict[str, Any]:
    """Refund an amount (USD) of an order."""
    return {"order": order, "refunded": amount}


TOOLS = [lookup, refund]


def model(loopback: Any, **options: Any) -> AnthropicModel:
    options.setdefault("max_retries", 0)
    return AnthropicModel("claude-haiku-4-5", base_url=loopback.url, **options)


def request() -> obelisk.Request:
    schema = obelisk.solution_schema(obelisk.Registry(TOOLS), {"type": "object"})
    return obelisk.Request(config={"mode": "eager", "turn": 1}, schema=schema)


def error(status: int, kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def test_tool_use_blocks_are_one_plan_and_final_output_ends_the_loop(loopback: Any) -> None:
    loopback.answer(loopback.recorded("anthropic_tool_use.json"))
    loopback.answer(loopback.recorded("anthropic_final_output.json"))
    claude = model(loopback, temperature=0.0, max_tokens=1024)
    result = obelisk.Loop(claude, TOOLS, max_turns=3).run_sync({"order": "A1"})

    assert result.output == REFUNDED
    assert [c["_tool"] for c in result.turns[0].solution.calls] == ["lookup", "refund"]
    assert result.usage == {"prompt_tokens": 2486, "completion_tokens": 180, "total_tokens": 2666}
    assert claude.usage[1]["prompt_tokens"] == 96 + 1180  # cache reads count as prompt
    assert isinstance(claude, StreamingModel)

    assert loopback.paths == ["/v1/messages", "/v1/messages"]
    body = loopback.bodies[0]
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "claude-haiku-4-5",
        1024,
        0.0,
    )
    assert [t["name"] for t in body["tools"]] == ["lookup", "refund", "final_output"]
    schema = body["tools"][1]["input_schema"]
    assert schema["required"] == ["order", "amount", "_outputPath"]
    assert (
        "Where the call's result is written" in schema["properties"]["_outputPath"]["description"]
    )
    assert "planner" in body["system"]
    (first,) = body["messages"]
    opening, closing = first["content"]
    assert opening["cache_control"] == {"type": "ephemeral"}
    assert json.loads(closing["text"])["config"]["turn"] == 1

    user, assistant, results = loopback.bodies[1]["messages"]
    assert user["content"][0] == opening  # what stays the same comes first, unchanged
    uses = assistant["content"]
    assert [u["type"] for u in uses] == ["tool_use", "tool_use"]
    assert uses[1]["input"]["amount"] == "†state.order.total"
    assert [r.get("tool_use_id") for r in results["content"]] == [u["id"] for u in uses] + [None]
    state = [
        m for m in json.loads(results["content"][-1]["text"])["context"] if m["type"] == "state"
    ]
    assert state[0]["state"]["refund"] == REFUNDED


def test_streamed_tool_use_runs_each_call_as_its_block_ends(loopback: Any) -> None:
    loopback.answer(sse=loopback.recorded("anthropic_tool_use.sse"))
    claude = model(loopback)

    async def read() -> Any:
        stream = claude.stream(request())
        pieces = [piece async for piece in stream]
        return pieces, stream.usage, stream.finish_reason

    pieces, usage, reason = asyncio.run(read())
    assert (
        pieces[0]
        == '{"calls": [{"_tool": "lookup", "id": "†input.order", "_outputPath": "†state.order"}'
    )
    solution = obelisk.parse_solution("".join(pieces))
    assert [c["_tool"] for c in solution.calls] == ["lookup", "refund"] and solution.output is None
    assert usage == {"prompt_tokens": 1210, "completion_tokens": 142, "total_tokens": 1352}
    assert reason == "tool_use" and loopback.bodies[0]["stream"] is True

    loopback.answer(sse=loopback.recorded("anthropic_tool_use.sse"))
    loopback.answer(sse=loopback.recorded("anthropic_final_output.sse"))
    result = obelisk.Loop(claude, TOOLS, stream=True, max_turns=3).run_sync({"order": "A1"})
    assert result.output == REFUNDED and result.turns[0].usage == usage


def test_a_refusal_is_a_solution_error(loopback: Any) -> None:
    loopback.answer(loopback.recorded("anthropic_refusal.json"))
    with pytest.raises(SolutionError, match="the model refused"):
        asyncio.run(model(loopback).complete(request()))
    refusing = loopback.recorded("anthropic_tool_use.sse").replace(
        '"tool_use", "stop_seq', '"refusal", "stop_seq'
    )
    loopback.answer(sse=refusing)

    async def read() -> None:
        async for _ in model(loopback).stream(request()):
            pass

    with pytest.raises(SolutionError, match="refused"):
        asyncio.run(read())


def test_an_empty_answer_and_prose_are_solution_errors(loopback: Any) -> None:
    empty = json.loads(loopback.recorded("anthropic_refusal.json"))
    empty["stop_reason"] = "end_turn"
    loopback.answer(empty)
    with pytest.raises(SolutionError, match="empty"):
        asyncio.run(model(loopback).complete(request()))
    empty["content"] = [{"type": "text", "text": "Let me think about it."}]
    loopback.answer(empty)
    with pytest.raises(SolutionError, match="no tool call, and its text does not fit"):
        asyncio.run(model(loopback).complete(request()))


def final_sse(output: Any) -> str:
    """A streamed answer that calls final_output with ``output``, in one piece."""
    arguments = json.dumps({"output": output})
    events = [
        {"type": "message_start", "message": json.loads(RECORDED_START)},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_9", "name": "final_output",
                           "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": arguments}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


RECORDED_START = json.dumps(
    {"id": "msg_9", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
     "content": [], "stop_reason": None, "stop_sequence": None,
     "usage": {"input_tokens": 90, "output_tokens": 1}}
)  # fmt: skip


def test_a_truncated_answer_says_so_in_the_correction(loopback: Any) -> None:
    cut = json.loads(loopback.recorded("anthropic_refusal.json"))
    cut["stop_reason"] = "max_tokens"
    cut["content"] = [{"type": "text", "text": '{"id": "A'}]
    loopback.answer(cut)
    loopback.answer(
        loopback.recorded("anthropic_final_output.json").replace("†state.refund", "done")
    )
    result = obelisk.Loop(model(loopback, max_tokens=64), TOOLS, max_turns=2).run_sync(
        {"order": "A1"}
    )
    assert result.output == "done"
    (problem,) = result.turns[0].errors
    assert "cut off at max_tokens=64 (stop_reason='max_tokens')" in problem.error["message"]

    sse = loopback.recorded("anthropic_tool_use.sse")
    loopback.answer(
        sse=sse.split("event: content_block_stop")[0]
        + (
            'event: message_delta\ndata: {"type": "message_delta", "delta": {"stop_reason": '
            '"max_tokens"}, "usage": {"output_tokens": 64}}\n\n'
            'event: message_stop\ndata: {"type": "message_stop"}\n\n'
        )
    )
    loopback.answer(sse=final_sse("done"))
    streamed = obelisk.Loop(model(loopback), TOOLS, stream=True, max_turns=2)
    result = streamed.run_sync({"order": "A1"})
    assert result.output == "done"
    (problem,) = result.turns[0].errors
    assert "cut off at the token limit" in problem.error["message"]


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (401, "authentication_error", "invalid x-api-key"),
        (429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"),
        (529, "overloaded_error", "Overloaded"),
    ],
)
def test_error_statuses_are_model_errors(
    loopback: Any, status: int, kind: str, message: str
) -> None:
    loopback.answer(error(status, kind, message), status=status)
    with pytest.raises(ModelError) as caught:
        asyncio.run(model(loopback).complete(request()))
    text = str(caught.value)
    assert f"HTTP {status}" in text and message in text and "claude-haiku-4-5" in text
    loopback.answer(error(status, kind, message), status=status)
    with pytest.raises(obelisk.LoopStopped, match=f"HTTP {status}"):
        obelisk.Loop(model(loopback), TOOLS, stream=True).run_sync({"order": "A1"})


def test_max_retries_sends_again_after_overload(loopback: Any) -> None:
    overloaded = error(529, "overloaded_error", "Overloaded")
    loopback.answer(overloaded, status=529, headers={"retry-after-ms": "1"}, times=2)
    loopback.answer(loopback.recorded("anthropic_final_output.json"))
    claude = model(loopback, max_retries=2)
    assert asyncio.run(claude.complete(request())).output == "†state.refund"
    assert len(loopback.bodies) == 3 and claude.max_retries == 2
    with pytest.raises(UsageError, match="max_retries must be an integer >= 0"):
        AnthropicModel("m", base_url=loopback.url, max_retries=-1)
    with pytest.raises(UsageError, match="timeout must be a number of seconds > 0"):
        AnthropicModel("m", base_url=loopback.url, timeout=0)


def test_timeout_bounds_the_whole_call_retries_included(loopback: Any) -> None:
    loopback.hang(times=3)
    claude = model(loopback, timeout=1, max_retries=2)
    started = time.perf_counter()
    with pytest.raises(ModelError, match=r"did not answer within timeout=1 s \(retries included\)"):
        asyncio.run(claude.complete(request()))
    assert time.perf_counter() - started < 1.9


def test_an_unreachable_server_or_a_malformed_body_is_a_model_error(loopback: Any) -> None:
    gone = AnthropicModel("m", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ModelError, match=r"cannot reach model 'm' at http://127\.0\.0\.1:9"):
        asyncio.run(gone.complete(request()))
    loopback.answer(b"<html><body>502 Bad Gateway</body></html>")
    with pytest.raises(ModelError, match=r"sent a malformed response .*b'<html><body>502"):
        asyncio.run(model(loopback).complete(request()))


def test_one_model_serves_many_run_sync_calls(loopback: Any) -> None:
    claude = model(loopback)
    for _ in range(3):
        loopback.answer(
            loopback.recorded("anthropic_final_output.json").replace("†state.refund", "7")
        )
        assert obelisk.Loop(claude, TOOLS).run_sync({"order": "A1"}).output == "7"
    assert len(claude.requests) == 3


def test_keys_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-haiku-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    assert AnthropicModel("claude-haiku-4-5").client.api_key == "sk-ant-env"
    with pytest.raises(UsageError, match="max_tokens must be an integer >= 1"):
        AnthropicModel("claude-haiku-4-5", max_tokens=0)


def test_without_the_extra_the_import_error_names_it() -> None:
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "import obelisk\n"
        "try:\n"
        "    from obelisk.models import AnthropicModel\n"
        "except obelisk.ObeliskError as exc:\n"
        "    print(type(exc).__name__, isinstance(exc, ImportError))\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "MissingDependencyError True",
        "AnthropicModel needs the anthropic package, an optional extra: "
        "pip install 'obelisk[anthropic]' (from a clone: pip install '.[anthropic]')",
    ]
