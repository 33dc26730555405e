"""``OpenAIChatModel(structured="json_object_schema")``: llama.cpp's own form of a
constrained answer (issue 29, point 6; docs/loop.md, "Models").

llama.cpp's server answers ``response_format: {"type": "json_schema"}`` with HTTP
500; it constrains decoding to ``{"type": "json_object", "schema": ...}`` instead.
A local HTTP server on the loopback interface plays the server and records each body.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("openai")

import obelisk
from obelisk.interpreter.loop.decoding import decoding_schema
from obelisk.models import OpenAIChatModel


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


ANSWERS = [
    '{"calls": [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.d"}], "output": null}',
    '{"calls": [], "output": "†state.d"}',
]


@pytest.fixture
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            bodies.append(body)
            content = ANSWERS[min(len(bodies), len(ANSWERS)) - 1]
            reply = {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1", bodies
    httpd.shutdown()
    httpd.server_close()


def test_the_schema_goes_in_llama_cpps_own_form(server: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = server
    model = OpenAIChatModel("m", base_url=url, max_retries=0, structured="json_object_schema")
    result = obelisk.Loop(model, [double], output_schema={"type": "integer"}).run_sync({"n": 4})
    assert (result.status, result.output) == ("completed", 8)
    assert model.json_mode
    for body, request in zip(bodies, model.requests, strict=True):
        schema = decoding_schema(request)  # the answer schema, narrowed to the turn
        assert body["response_format"] == {"type": "json_object", "schema": schema}
        assert '"schema"' not in body["messages"][1]["content"]  # the grammar carries it
        assert body["messages"][0]["content"].endswith("on one line, with no line breaks.")


def test_other_values_of_structured_are_refused() -> None:
    with pytest.raises(obelisk.UsageError, match="json_object_schema"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", structured="grammar")  # type: ignore[arg-type]
