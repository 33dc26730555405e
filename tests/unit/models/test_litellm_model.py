"""``LiteLLMModel``: the providers LiteLLM reaches (issue 29, point 5; docs/loop.md,
"Providers").

LiteLLM (its ``openai/`` provider) talks to a local OpenAI-compatible server on the
loopback interface (tests/unit/models/conftest.py) that replays recorded
chat-completion responses (tests/data/models/openai_tools_*), never the network:
LiteLLM's model cost map is read from its own copy, not fetched. The tests mirror the
OpenAI adapter's: tool calls, JSON answers, streaming, usage, retries, timeouts,
truncated answers, refusals, server errors.

litellm is heavy, so it is not in the ``dev`` extra: these tests skip, with the reason,
where it is not installed; ``.ci/run`` installs the ``litellm`` extra for its first run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
pytest.importorskip("litellm", reason="the litellm extra is not installed")

import obelisk
from obelisk.errors import ModelError, SolutionError, UsageError
from obelisk.interpreter.loop.model import StreamingModel
from obelisk.models import LiteLLMModel

ORDERS = {"A1": {"id": "A1", "total": 50}}
REFUNDED = {"order": "A1", "refunded": 50}
USAGE = {"prompt_tokens": 612, "completion_tokens": 71, "total_tokens": 683}


@obelisk.tool
def lookup(id: str) -> dict[str, Any]:
    """Look an order up by its id."""
    return ORDERS[id]


@obelisk.tool
def refund(order: str, amount: int) -> dict[str, Any]:
    """Refund an amount (USD) of an order."""
    return {"order": order, "refunded": amount}


TOOLS = [lookup, refund]


def model(loopback: Any, **options: Any) -> LiteLLMModel:
    options.setdefault("max_retries", 0)
    name = "openai/qwen2.5-coder-1.5b-instruct"
    return LiteLLMModel(name, base_url=loopback.url + "/v1", api_key="test", **options)


def request(output: Any = None) -> obelisk.Request:
    schema = obelisk.solution_schema(obelisk.Registry(TOOLS), output or {"type": "object"})
    return obelisk.Request(config={"mode": "eager", "turn": 1}, schema=schema)


def completion(content: str | None, finish: str = "stop", **message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "qwen2.5-coder-1.5b-instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish,
            }
        ],
        "usage": USAGE,
    }


def test_tool_calls_through_litellm_are_one_plan(loopback: Any) -> None:
    loopback.answer(loopback.recorded("openai_tools_parallel.json"))
    loopback.answer(loopback.recorded("openai_tools_final.json"))
    llm = model(loopback, temperature=0.0, max_tokens=300)
    result = obelisk.Loop(llm, TOOLS, max_turns=3).run_sync({"order": "A1"})

    assert result.output == REFUNDED
    assert [c["_tool"] for c in result.turns[0].solution.calls] == ["lookup", "refund"]
    assert result.usage == {"prompt_tokens": 1357, "completion_tokens": 90, "total_tokens": 1447}
    assert isinstance(llm, StreamingModel)
    assert loopback.paths == ["/v1/chat/completions"] * 2
    body = loopback.bodies[0]
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup", "refund", "final_output"]
    assert (body["temperature"], body["max_tokens"]) == (0.0, 300)
    roles = [m["role"] for m in loopback.bodies[1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]


def test_json_protocol_checks_the_answer_against_the_schema(loopback: Any) -> None:
    loopback.answer(completion('```json\n{"calls": [], "output": 7}\n```'))
    llm = model(loopback, protocol="json")
    assert asyncio.run(llm.complete(request({"type": "integer"}))).output == 7
    body = loopback.bodies[0]
    assert body["response_format"] == {"type": "json_object"} and "tools" not in body
    assert (
        json.loads(body["messages"][1]["content"])["schema"] == request({"type": "integer"}).schema
    )

    loopback.answer(completion('{"calls": [], "output": "seven"}'))
    with pytest.raises(SolutionError, match="does not fit the schema at output"):
        asyncio.run(llm.complete(request({"type": "integer"})))


def test_streamed_tool_calls_and_usage(loopback: Any) -> None:
    loopback.answer(sse=loopback.recorded("openai_tools_parallel.sse"))
    loopback.answer(sse=loopback.recorded("openai_tools_final.sse"))
    llm = model(loopback)
    result = obelisk.Loop(llm, TOOLS, stream=True, max_turns=3).run_sync({"order": "A1"})
    assert result.output == REFUNDED
    assert result.turns[0].usage == USAGE
    assert loopback.bodies[0]["stream"] is True
    assert loopback.bodies[0]["stream_options"] == {"include_usage": True}


def test_a_truncated_answer_or_a_refusal_is_a_solution_error(loopback: Any) -> None:
    cut = json.loads(loopback.recorded("openai_tools_parallel.json"))
    cut["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"] = '{"order": "A'
    cut["choices"][0]["finish_reason"] = "length"
    loopback.answer(cut)
    with pytest.raises(SolutionError, match=r"cut off at max_tokens=40 \(finish_reason='length'\)"):
        asyncio.run(model(loopback, max_tokens=40).complete(request()))
    loopback.answer(completion(None, refusal="I can't help with that."))
    with pytest.raises(SolutionError, match="refused: I can't help with that"):
        asyncio.run(model(loopback).complete(request()))
    loopback.answer(completion(""))
    with pytest.raises(SolutionError, match="empty"):
        asyncio.run(model(loopback).complete(request()))


@pytest.mark.parametrize(
    ("status", "message"), [(401, "Incorrect API key"), (500, "upstream died")]
)
def test_error_statuses_are_model_errors(loopback: Any, status: int, message: str) -> None:
    loopback.answer({"error": {"message": message, "type": "server_error"}}, status=status)
    with pytest.raises(ModelError) as caught:
        asyncio.run(model(loopback).complete(request()))
    text = str(caught.value)
    assert f"HTTP {status}" in text and message in text and "qwen2.5-coder" in text


def test_max_retries_sends_again(loopback: Any) -> None:
    busy = {"error": {"message": "overloaded", "type": "server_error"}}
    loopback.answer(busy, status=503, headers={"retry-after-ms": "1"})
    loopback.answer(loopback.recorded("openai_tools_final.json"))
    llm = model(loopback, max_retries=1)
    assert asyncio.run(llm.complete(request())).output == "†state.refund"
    assert len(loopback.bodies) == 2
    with pytest.raises(UsageError, match="max_retries must be an integer >= 0"):
        LiteLLMModel("openai/m", max_retries=-1)
    with pytest.raises(UsageError, match="protocol must be 'json' or 'tools'"):
        LiteLLMModel("openai/m", protocol="xml")  # type: ignore[arg-type]


def test_timeout_bounds_the_whole_call(loopback: Any) -> None:
    loopback.hang(times=3)
    llm = model(loopback, timeout=1)
    started = time.perf_counter()
    with pytest.raises(ModelError, match=r"did not answer within timeout=1 s"):
        asyncio.run(llm.complete(request()))
    assert time.perf_counter() - started < 2.5


def test_an_unreachable_server_is_a_model_error() -> None:
    gone = LiteLLMModel("openai/m", base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)
    with pytest.raises(ModelError, match=r"model 'openai/m' at http://127\.0\.0\.1:9/v1"):
        asyncio.run(gone.complete(request()))


def test_without_the_extra_the_import_error_names_it() -> None:
    code = (
        "import sys; sys.modules['litellm'] = None\n"
        "import obelisk\n"
        "try:\n"
        "    from obelisk.models import LiteLLMModel\n"
        "except obelisk.ObeliskError as exc:\n"
        "    print(type(exc).__name__, isinstance(exc, ImportError))\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "MissingDependencyError True",
        "LiteLLMModel needs the litellm package, an optional extra: "
        "pip install 'obelisk[litellm]' (from a clone: pip install '.[litellm]')",
    ]


def test_one_model_serves_many_run_sync_calls(loopback: Any) -> None:
    llm = model(loopback)
    for _ in range(3):
        loopback.answer(loopback.recorded("openai_tools_final.json").replace("†state.refund", "7"))
        assert obelisk.Loop(llm, TOOLS).run_sync({"order": "A1"}).output == "7"
    assert len(llm.requests) == 3
