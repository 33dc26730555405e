"""``OpenAIChatModel`` against the real ``openai`` SDK and a local handler (docs/loop.md).

No network: the SDK's HTTP client gets a ``MockTransport`` whose handler reads the
JSON body the SDK sends and answers with chat-completion JSON, an SSE stream or an
error status, as an OpenAI-compatible server would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

openai = pytest.importorskip("openai")

# openai 3.x ships on httpx2, openai 1.x on httpx (and anthropic may bring httpx2 beside it)
if int(openai.__version__.split(".")[0]) >= 3:  # pragma: no cover - the installed SDK
    import httpx2 as httpx
else:  # pragma: no cover
    import httpx

from obelisk import UsageError  # noqa: E402
from obelisk.errors import ModelError, SolutionError  # noqa: E402
from obelisk.interpreter.loop.messages import (  # noqa: E402
    InputMessage,
    Request,
    TextMessage,
)
from obelisk.interpreter.loop.model import StreamingModel  # noqa: E402
from obelisk.models import OpenAIChatModel  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"_tool": {"const": "lookup"}, "id": {"type": "string"}},
                "required": ["_tool"],
            },
        },
        "output": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "required": ["calls", "output"],
    "additionalProperties": False,
}
REQUEST = Request(
    config={"mode": "eager", "turn": 1},
    schema=SCHEMA,
    context=[TextMessage(text="Find the order."), InputMessage(input={"order": "A1"})],
)
ANSWER = {"calls": [{"_tool": "lookup", "id": "†input.order", "_outputPath": "†state.o"}]}
ANSWER_TEXT = json.dumps({**ANSWER, "output": None})
USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}

Handler = Callable[[Any], Any]


def completion(content: str | None, *, usage: dict[str, int] | None = USAGE, **message: Any) -> Any:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": "stop",
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def error(status: int, message: str, param: str | None = None) -> Any:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    return httpx.Response(status, json=body)


def sse(pieces: list[str], usage: dict[str, int] | None = USAGE) -> Any:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [choice]}  # fmt: skip

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in pieces]
    events.append(chunk({}, "stop"))
    if usage is not None:
        events.append({**chunk({}), "choices": [], "usage": usage})
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=text)


class Server:
    """Records the JSON bodies the SDK sends and answers with ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[Any] = []

    def __call__(self, request: Any) -> Any:
        assert request.url.path == "/v1/chat/completions"
        self.bodies.append(json.loads(request.content))
        self.headers.append(request.headers)
        return self.handler(self.bodies[-1])

    def model(self, **options: Any) -> OpenAIChatModel:
        client = openai.AsyncOpenAI(
            api_key="test",
            base_url="http://testserver/v1",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(self)),
        )
        return OpenAIChatModel("test-model", client=client, **options)


def collect(model: OpenAIChatModel, request: Request) -> list[str]:
    async def main() -> list[str]:
        return [piece async for piece in model.stream(request)]

    return asyncio.run(main())


# -- structured output -------------------------------------------------------------------


def test_structured_output_sends_the_schema_and_records_usage() -> None:
    server = Server(lambda body: completion(ANSWER_TEXT))
    model = server.model()
    solution = asyncio.run(model.complete(REQUEST))

    assert solution.calls == ANSWER["calls"] and solution.output is None
    assert solution.usage == USAGE and model.usage == [USAGE]
    assert model.requests == [REQUEST] and not model.json_mode
    (body,) = server.bodies
    assert body["model"] == "test-model"
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "solution", "schema": SCHEMA, "strict": False},
    }
    system, user = body["messages"]
    assert system["role"] == "system" and "†state.x" in system["content"]
    assert '"calls"' in system["content"] and "null" in system["content"]
    assert user["role"] == "user"
    assert json.loads(user["content"]) == {
        "config": REQUEST.config,
        "context": REQUEST.to_data()["context"],
    }  # the schema travels in response_format only
    assert server.headers[0]["authorization"] == "Bearer test"
    assert isinstance(model, StreamingModel)


def test_settings_are_sent_with_every_request() -> None:
    server = Server(lambda body: completion('{"calls": [], "output": 7}', usage=None))
    model = server.model(temperature=0.2, max_tokens=500, extra_body={"top_k": 20})
    solution = asyncio.run(model.complete(REQUEST))

    assert solution.output == 7 and solution.usage is None and model.usage == []
    body = server.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["top_k"]) == (0.2, 500, 20)


def test_an_empty_schema_asks_for_json_mode() -> None:
    server = Server(lambda body: completion('{"calls": [], "output": 1}'))
    asyncio.run(server.model().complete(Request()))
    assert server.bodies[0]["response_format"] == {"type": "json_object"}


# -- fallback to JSON mode ----------------------------------------------------------------


def rejects_json_schema(answers: list[str]) -> Handler:
    def handler(body: dict[str, Any]) -> Any:
        if body["response_format"]["type"] == "json_schema":
            return error(400, "response_format json_schema is not supported", "response_format")
        return completion(answers.pop(0))

    return handler


def test_a_server_without_structured_output_gets_json_mode() -> None:
    server = Server(rejects_json_schema([ANSWER_TEXT, '{"calls": [], "output": 3}']))
    model = server.model()
    first = asyncio.run(model.complete(REQUEST))
    second = asyncio.run(model.complete(REQUEST))

    assert first.calls == ANSWER["calls"] and second.output == 3 and model.json_mode
    kinds = [body["response_format"]["type"] for body in server.bodies]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered
    system, user = server.bodies[1]["messages"]
    assert json.loads(user["content"])["schema"] == SCHEMA
    assert "schema" in system["content"]
    assert model.requests == [REQUEST, REQUEST] and len(model.usage) == 2


def test_json_mode_checks_the_answer_against_the_schema() -> None:
    # the calls are left to the loop's check, whose diagnostics name the call (issue 29)
    misfit = '{"calls": [{"_tool": "refund"}], "output": null}'
    model = Server(rejects_json_schema([misfit])).model()
    assert asyncio.run(model.complete(REQUEST)).calls == [{"_tool": "refund"}]
    not_objects = '{"calls": [3], "output": null}'
    model = Server(rejects_json_schema([not_objects])).model()
    with pytest.raises(SolutionError) as caught:
        asyncio.run(model.complete(REQUEST))
    assert caught.value.text == not_objects

    wrong_output = '{"calls": [], "output": "seven"}'
    model = Server(lambda body: completion(wrong_output)).model(structured=False)
    with pytest.raises(SolutionError, match="does not fit the schema at output"):
        asyncio.run(model.complete(REQUEST))


def test_structured_false_starts_in_json_mode() -> None:
    server = Server(lambda body: completion(ANSWER_TEXT))
    model = server.model(structured=False)
    assert asyncio.run(model.complete(REQUEST)).calls == ANSWER["calls"]
    assert [body["response_format"]["type"] for body in server.bodies] == ["json_object"]


def test_structured_true_does_not_fall_back() -> None:
    server = Server(rejects_json_schema([ANSWER_TEXT]))
    model = server.model(structured=True)
    with pytest.raises(ModelError, match=r"HTTP 400.*json_schema is not supported"):
        asyncio.run(model.complete(REQUEST))
    assert len(server.bodies) == 1 and not model.json_mode


def test_other_bad_requests_do_not_fall_back() -> None:
    server = Server(lambda body: error(400, "temperature must be <= 2", "temperature"))
    model = server.model(temperature=5.0)
    with pytest.raises(ModelError, match=r"HTTP 400 .*temperature must be <= 2"):
        asyncio.run(model.complete(REQUEST))
    assert len(server.bodies) == 1 and not model.json_mode


# -- bad answers ---------------------------------------------------------------------------


def test_an_answer_that_is_not_json_is_a_solution_error() -> None:
    model = Server(lambda body: completion("Sure! Here is the plan: call lookup.")).model()
    with pytest.raises(SolutionError, match="not JSON") as caught:
        asyncio.run(model.complete(REQUEST))
    assert caught.value.text == "Sure! Here is the plan: call lookup."


def test_a_refusal_or_an_empty_answer_is_a_solution_error() -> None:
    refusing = Server(lambda body: completion(None, refusal="I can't help with that."))
    with pytest.raises(SolutionError, match="refused: I can't help with that"):
        asyncio.run(refusing.model().complete(REQUEST))
    empty = Server(lambda body: completion(""))
    with pytest.raises(SolutionError, match="empty"):
        asyncio.run(empty.model().complete(REQUEST))


# -- server errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "Incorrect API key provided"), (429, "Rate limit reached"), (500, "upstream died")],
)
def test_error_statuses_are_model_errors(status: int, message: str) -> None:
    model = Server(lambda body: error(status, message)).model()
    with pytest.raises(ModelError) as caught:
        asyncio.run(model.complete(REQUEST))
    text = str(caught.value)
    assert f"HTTP {status}" in text and message in text and "test-model" in text
    assert "\n" not in text


def test_an_unreachable_server_is_a_model_error() -> None:
    def handler(body: dict[str, Any]) -> Any:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(ModelError, match="cannot reach model 'test-model' at http://testserver"):
        asyncio.run(Server(handler).model().complete(REQUEST))


# -- streaming -----------------------------------------------------------------------------


def test_stream_yields_the_deltas_and_records_usage() -> None:
    pieces = [ANSWER_TEXT[i : i + 7] for i in range(0, len(ANSWER_TEXT), 7)]
    server = Server(lambda body: sse(pieces))
    model = server.model()

    assert collect(model, REQUEST) == pieces
    assert "".join(pieces) == ANSWER_TEXT and model.usage == [USAGE]
    body = server.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert model.requests == [REQUEST]


def test_stream_falls_back_like_complete() -> None:
    def handler(body: dict[str, Any]) -> Any:
        if "stream_options" in body:
            return error(400, "Unrecognized request argument: stream_options", "stream_options")
        if body["response_format"]["type"] == "json_schema":
            return error(400, "json_schema is not supported")
        return sse(['{"calls": [], ', '"output": 1}'], usage=None)

    server = Server(handler)
    model = server.model()
    assert "".join(collect(model, REQUEST)) == '{"calls": [], "output": 1}'
    assert len(server.bodies) == 3 and model.json_mode and model.usage == []


def test_stream_errors_are_model_or_solution_errors() -> None:
    failing = Server(lambda body: error(503, "overloaded")).model()
    with pytest.raises(ModelError, match="HTTP 503"):
        collect(failing, REQUEST)
    with pytest.raises(SolutionError, match="empty"):
        collect(Server(lambda body: sse([])).model(), REQUEST)


# -- construction --------------------------------------------------------------------------


def test_base_url_and_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = OpenAIChatModel("llama3", base_url="http://localhost:11434/v1", timeout=30)
    assert local.client.api_key == "not-needed"
    assert str(local.client.base_url).startswith("http://localhost:11434/v1")
    assert local.client.timeout == 30

    keyed = OpenAIChatModel("llama3", base_url="http://localhost:8000/v1", api_key="sk-local")
    assert keyed.client.api_key == "sk-local"

    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert OpenAIChatModel("gpt-4o-mini").client.api_key == "sk-from-env"

    client = openai.AsyncOpenAI(api_key="x", base_url="http://testserver/v1")
    assert OpenAIChatModel("m", client=client).client is client
    with pytest.raises(UsageError, match="not both"):
        OpenAIChatModel("m", client=client, base_url="http://localhost:8000/v1")


def test_without_the_extra_the_import_error_names_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['openai'] = None\n"
        "import obelisk\n"
        "try:\n"
        "    from obelisk.models import OpenAIChatModel\n"
        "except obelisk.ObeliskError as exc:\n"
        "    print(type(exc).__name__, isinstance(exc, ImportError), exc.code)\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "MissingDependencyError True missing_dependency",
        "OpenAIChatModel needs the openai package, an optional extra: "
        "pip install 'obelisk[openai]' (from a clone: pip install '.[openai]')",
    ]
