"""``obelisk loop``'s options for a real model (issue 29, point 3; docs/cli.md):
``--json-mode``, ``--protocol``, ``--temperature``, ``--max-tokens`` and
``--model-timeout`` reach the OpenAI-compatible server, here a local one on the loopback
interface."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("openai")

from obelisk.cli.app import app

runner = CliRunner()
ANSWER = json.dumps({"calls": [], "output": 42})


@pytest.fixture()
def server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            message = {"role": "assistant", "content": ANSWER}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                     "choices": [choice]}  # fmt: skip
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    made = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    made.daemon_threads = True
    threading.Thread(target=made.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{made.server_port}/v1", bodies
    made.shutdown()
    made.server_close()


def test_model_options_reach_the_server(
    server: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, bodies = server
    options = ["--json-mode", "--temperature", "0", "--max-tokens", "300"]
    args = ["loop", "--model", "openai:m", "--base-url", url, "--no-stdlib", "--json"]
    result = runner.invoke(app, [*args, *options, "--model-timeout", "30"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["output"] == 42
    (body,) = bodies
    assert body["response_format"] == {"type": "json_object"}  # --json-mode
    assert body["temperature"] == 0 and body["max_tokens"] == 300


def test_without_them_the_server_gets_structured_output_and_its_defaults(
    server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = server
    args = ["loop", "--model", "openai:m", "--base-url", url, "--no-stdlib", "--json"]
    assert runner.invoke(app, args).exit_code == 0
    (body,) = bodies
    assert body["response_format"]["type"] == "json_schema"
    assert "temperature" not in body and "max_tokens" not in body


def test_model_options_are_refused_for_a_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(ANSWER + "\n")
    args = ["loop", "--model", f"scripted:{script}", "--no-stdlib"]
    result = runner.invoke(app, [*args, "--temperature", "0.2"])
    assert result.exit_code == 2
    assert "apply to openai:, anthropic: and litellm: models only" in result.output
    assert runner.invoke(app, [*args, "--model-timeout", "5"]).exit_code == 0


def test_protocol_tools_offers_the_tools_as_functions(
    server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = server
    args = ["loop", "--model", "openai:m", "--base-url", url, "--json", "--protocol", "tools"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (body,) = bodies
    names = {tool["function"]["name"] for tool in body["tools"]}
    assert {"final_output", "add"} <= names  # the stdlib's tools, as functions
    assert "response_format" not in body


@pytest.mark.parametrize(
    ("model", "protocol", "message"),
    [
        ("openai:m", "xml", "--protocol must be json or tools, got 'xml'"),
        ("anthropic:m", "json", "--protocol applies to openai: and litellm: models only"),
        ("scripted:x.jsonl", "tools", "--protocol applies to openai: and litellm: models only"),
    ],
)
def test_a_protocol_that_does_not_apply_exits_2(model: str, protocol: str, message: str) -> None:
    result = runner.invoke(app, ["loop", "--model", model, "--protocol", protocol])
    assert result.exit_code == 2
    assert message in result.output
