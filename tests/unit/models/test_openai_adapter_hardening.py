"""``OpenAIChatModel`` as a deployed client (issue 24, point 1; docs/loop.md).

No network: a local HTTP server on the loopback interface (a thread of this
process, or of a child process when stderr must be watched) or an httpx
``MockTransport`` given to the SDK as ``http_client=``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")

# openai 3.x ships on httpx2, openai 1.x on httpx (and anthropic may bring httpx2 beside it)
if int(openai.__version__.split(".")[0]) >= 3:  # pragma: no cover - the installed SDK
    import httpx2 as httpx
else:  # pragma: no cover
    import httpx

import obelisk  # noqa: E402
from obelisk.errors import ModelError, SolutionError, UsageError  # noqa: E402
from obelisk.interpreter.loop.messages import Request, TextMessage  # noqa: E402
from obelisk.models import OpenAIChatModel  # noqa: E402

SRC = Path(obelisk.__file__).resolve().parents[1]  # the obelisk under test
USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
REQUEST = Request(config={"mode": "eager", "turn": 1}, context=[TextMessage(text="Go.")])


def completion_body(content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": USAGE,
    }


def sse_text(pieces: list[str], usage: dict[str, int] | None = USAGE) -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [choice]}  # fmt: skip

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in pieces]
    events.append(chunk({}, "stop"))
    if usage is not None:
        events.append({**chunk({}), "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"


def mock_model(handler: Callable[[Any], Any], **options: Any) -> tuple[OpenAIChatModel, list[Any]]:
    """A model whose SDK client answers with ``handler(request)``; the requests seen."""
    seen: list[Any] = []

    def respond(request: Any) -> Any:
        seen.append(request)
        return handler(request)

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://testserver/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(respond)),
    )
    return OpenAIChatModel("test-model", client=client, **options), seen


# -- a local server on the loopback interface -------------------------------------------


class Hanging(BaseHTTPRequestHandler):
    """Reads the request, then answers nothing until the test releases it."""

    protocol_version = "HTTP/1.1"
    release = threading.Event()
    first_chunk = False  # stream one chunk before hanging

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        if self.first_chunk:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            choice = {"index": 0, "delta": {"content": "{"}, "finish_reason": None}
            event = {"id": "c", "object": "chat.completion.chunk", "choices": [choice]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.release.wait(20)
        self.close_connection = True


@pytest.fixture
def hanging_server() -> Iterator[tuple[str, type[Hanging]]]:
    handler = type("HangingHandler", (Hanging,), {"release": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", handler
    finally:
        handler.release.set()
        server.shutdown()
        server.server_close()


# -- one model, many event loops -------------------------------------------------------

MANY_RUNS = textwrap.dedent(
    """
    import gc, json, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    import obelisk
    from obelisk.models import OpenAIChatModel

    ANSWER = '{"calls": [], "output": 7}'

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if body.get("stream"):
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0,
                         "model": "m", "choices": [{"index": 0, "delta": {"content": ANSWER},
                                                    "finish_reason": "stop"}]}
                data = ("data: " + json.dumps(chunk) + "\\n\\ndata: [DONE]\\n\\n").encode()
                kind = "text/event-stream"
            else:
                data = json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                   "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": ANSWER}}]}).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    model = OpenAIChatModel("m", base_url=f"http://127.0.0.1:{server.server_port}/v1")
    plain, streamed = obelisk.Loop(model, []), obelisk.Loop(model, [], stream=True)
    outputs = [loop.run_sync().output for loop in (plain, plain, streamed, plain, streamed)]
    print(outputs, len(model.requests))
    del plain, streamed
    gc.collect()
    """
)


def test_one_model_serves_many_run_sync_calls_without_noise() -> None:
    """Each ``run_sync`` has its own event loop; the second used to fail with
    ``Event loop is closed`` and httpx cleanup tracebacks reached stderr."""
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", MANY_RUNS],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", "PYTHONWARNINGS": "default"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "[7, 7, 7, 7, 7] 5"
    assert done.stderr == ""


def test_each_event_loop_gets_its_own_client_closed_with_the_loop() -> None:
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")
    seen = []

    async def client() -> Any:
        made = await model._client()
        assert await model._client() is made  # one per event loop
        seen.append(made)
        return made

    first, second = asyncio.run(client()), asyncio.run(client())
    assert first is not second and first.is_closed() and second.is_closed()
    assert model.client is not first and not model._clients  # nothing kept for dead loops


# -- timeout and retries -----------------------------------------------------------------


def test_timeout_bounds_the_whole_call_retries_included(
    hanging_server: tuple[str, type[Hanging]],
) -> None:
    url, _ = hanging_server
    model = OpenAIChatModel("m", base_url=url, timeout=1)  # the SDK retries twice by default
    started = time.perf_counter()
    with pytest.raises(ModelError, match=r"did not answer within timeout=1 s \(retries included\)"):
        asyncio.run(model.complete(REQUEST))
    assert time.perf_counter() - started < 1.9


def test_timeout_bounds_a_whole_stream(hanging_server: tuple[str, type[Hanging]]) -> None:
    url, handler = hanging_server
    handler.first_chunk = True
    model = OpenAIChatModel("m", base_url=url, timeout=1)
    loop = obelisk.Loop(model, [], stream=True)
    started = time.perf_counter()
    with pytest.raises(obelisk.LoopStopped, match="did not answer within timeout=1 s"):
        loop.run_sync()
    assert time.perf_counter() - started < 1.9


def test_max_retries_is_exposed() -> None:
    def overloaded(request: Any) -> Any:
        body = {"error": {"message": "overloaded", "type": "server_error"}}
        return httpx.Response(503, json=body, headers={"retry-after-ms": "1"})

    for retries in (0, 2):
        model, seen = mock_model(overloaded, max_retries=retries)
        with pytest.raises(ModelError, match="HTTP 503"):
            asyncio.run(model.complete(REQUEST))
        assert len(seen) == retries + 1 and model.max_retries == retries
    own = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", max_retries=5)
    assert own.client.max_retries == 5
    with pytest.raises(UsageError, match="max_retries must be an integer >= 0"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", max_retries=-1)
    with pytest.raises(UsageError, match="timeout must be a number of seconds > 0"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", timeout=0)


# -- streaming usage -------------------------------------------------------------------------


def test_a_streamed_turn_reports_its_token_usage() -> None:
    answer = '{"calls": [], "output": 5}'
    model, seen = mock_model(
        lambda request: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse_text([answer])
        )
    )
    result = obelisk.Loop(model, [], stream=True).run_sync()
    assert result.output == 5
    assert result.usage == USAGE and result.turns[0].usage == USAGE
    assert json.loads(seen[0].content)["stream_options"] == {"include_usage": True}

    async def read() -> Any:
        stream = model.stream(REQUEST)
        text = "".join([piece async for piece in stream])
        return text, stream.usage, stream.finish_reason

    assert asyncio.run(read()) == (answer, USAGE, "stop")


# -- answers: cut off, fenced, malformed -----------------------------------------------------


def test_a_truncated_answer_says_so_in_the_correction() -> None:
    cut = '{"calls": [{"_tool": "lookup", "id": "A'
    answers = [completion_body(cut, "length"), completion_body('{"calls": [], "output": 1}')]
    model, seen = mock_model(lambda request: httpx.Response(200, json=answers.pop(0)))
    result = obelisk.Loop(model, [], max_turns=2).run_sync()
    assert result.output == 1
    (error,) = result.turns[0].errors
    message = error.error["message"]
    assert "cut off" in message and "finish_reason='length'" in message, message
    user = json.loads(json.loads(seen[1].content)["messages"][1]["content"])
    assert any("cut off" in m.get("error", {}).get("message", "") for m in user["context"])

    model, _ = mock_model(
        lambda request: httpx.Response(200, json=completion_body(cut, "length")), max_tokens=64
    )
    with pytest.raises(SolutionError, match=r"cut off at max_tokens=64 \(finish_reason='length'\)"):
        asyncio.run(model.complete(REQUEST))


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"calls": [], "output": 3}\n```',
        '\n```\n{"calls": [], "output": 3}\n```\n',
        '```JSON\n{"calls": [], "output": 3}```',
    ],
)
def test_a_fenced_json_answer_is_accepted_in_json_mode(content: str) -> None:
    model, seen = mock_model(
        lambda request: httpx.Response(200, json=completion_body(content)), structured=False
    )
    schema = obelisk.solution_schema(obelisk.Registry([]), {"type": "integer"})
    request = Request(config={"mode": "eager", "turn": 1}, schema=schema)
    assert asyncio.run(model.complete(request)).output == 3
    assert json.loads(seen[0].content)["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("body", "content_type", "start"),
    [
        (b"<html><body>502 Bad Gateway</body></html>", "application/json", "b'<html><body>502"),
        (b"<html><body>502 Bad Gateway</body></html>", "text/html", "b'<html><body>502"),
        (b'{"object": "list", "data": []}', "application/json", 'b\'{"object": "list"'),
        (b'{"choices": [42]}', "application/json", "b'{\"choices\": [42]}'"),
    ],
)
def test_a_malformed_body_is_the_servers_fault_with_its_first_bytes(
    body: bytes, content_type: str, start: str
) -> None:
    model, _ = mock_model(
        lambda request: httpx.Response(200, content=body, headers={"content-type": content_type})
    )
    with pytest.raises(ModelError, match="sent a malformed response") as caught:
        asyncio.run(model.complete(REQUEST))
    assert start in str(caught.value) and "test-model" in str(caught.value)

    with pytest.raises(obelisk.LoopStopped, match="sent a malformed response"):
        obelisk.Loop(model, []).run_sync()


def test_a_malformed_stream_chunk_is_the_servers_fault() -> None:
    text = 'data: {"id": "c", "choices": "nope"}\n\ndata: [DONE]\n\n'
    model, _ = mock_model(
        lambda request: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=text
        )
    )
    with pytest.raises(obelisk.LoopStopped, match="sent a malformed response \\(a stream chunk"):
        obelisk.Loop(model, [], stream=True).run_sync()


def test_a_truncated_stream_says_so_in_the_correction() -> None:
    cut = '{"calls": [], "output": {"summary": "A lo'

    def chunks(pieces: list[str], finish: str) -> str:
        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}  # fmt: skip

        events = [chunk({"content": piece}) for piece in pieces] + [chunk({}, finish)]
        return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"

    answers = [
        chunks([cut[:10], cut[10:]], "length"),
        chunks(['{"calls": [], "output": 1}'], "stop"),
    ]
    model, _ = mock_model(
        lambda request: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=answers.pop(0)
        )
    )
    result = obelisk.Loop(model, [], stream=True, max_turns=2).run_sync()
    assert result.output == 1
    (error,) = result.turns[0].errors
    message = error.error["message"]
    assert message.startswith("the answer was cut off at the token limit (finish_reason='length')")
    assert "not JSON" in message
