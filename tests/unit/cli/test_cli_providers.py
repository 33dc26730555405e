"""``obelisk loop --model anthropic:MODEL`` and ``litellm:MODEL`` (issue 29, point 5;
docs/cli.md, docs/loop.md "Providers"): each talks to a local server on the loopback
interface that answers in its provider's wire format, never the network."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool

@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n
'''

DOUBLE = {"n": "†input.n", "_outputPath": "†state.twice"}


def message(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages API answer with one tool_use block."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": arguments}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 300, "output_tokens": 20},
    }


def completion(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat completion with one tool call."""
    call = {"id": f"call_{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
    }  # fmt: skip


@pytest.fixture
def server() -> Iterator[tuple[str, list[Any], list[str]]]:
    """A loopback server: answers queued in the list, paths seen in the other."""
    answers: list[Any] = []
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            paths.append(self.path)
            data = json.dumps(answers.pop(0)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.daemon_threads = True
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{http.server_port}", answers, paths
    finally:
        http.shutdown()
        http.server_close()


def loop_args(tmp: Path, model: str, *extra: str) -> list[str]:
    (tmp / "tools.py").write_text(TOOLS)
    (tmp / "input.json").write_text('{"n": 4}')
    return ["loop", "--model", model, "--tools", str(tmp / "tools.py"),
            "--input", str(tmp / "input.json"), "--json", *extra]  # fmt: skip


def test_anthropic_model_spec(tmp_path: Path, server: Any) -> None:
    pytest.importorskip("anthropic")
    url, answers, paths = server
    answers += [message("double", DOUBLE), message("final_output", {"output": "†state.twice"})]
    args = loop_args(tmp_path, "anthropic:claude-haiku-4-5", "--base-url", url)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["output"] == 8 and payload["state"] == {"twice": 8}
    assert paths == ["/v1/messages", "/v1/messages"]


def test_litellm_model_spec(tmp_path: Path, server: Any) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
    pytest.importorskip("litellm", reason="the litellm extra is not installed")
    url, answers, paths = server
    answers += [completion("double", DOUBLE), completion("final_output", {"output": 8})]
    args = loop_args(tmp_path, "litellm:openai/qwen2.5", "--base-url", url + "/v1")
    result = runner.invoke(app, args, env={"OPENAI_API_KEY": "test"})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["output"] == 8
    assert paths == ["/v1/chat/completions"] * 2


def test_a_missing_extra_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.delitem(sys.modules, "obelisk.models.anthropic_messages", raising=False)
    result = runner.invoke(app, loop_args(tmp_path, "anthropic:claude-haiku-4-5"))
    assert result.exit_code == 2
    assert "--model anthropic:...: AnthropicModel needs the anthropic package" in result.stderr
