"""Requests a real model can use well (issue 29, point 3; docs/loop.md, "Models").

A local HTTP server on the loopback interface (a thread of this process) plays an
OpenAI-compatible server: it records each JSON body and answers from a script.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("openai")

import obelisk
from obelisk.models import OpenAIChatModel

Answer = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


def completion(content: str) -> tuple[int, dict[str, Any]]:
    return 200, {
        "id": "chatcmpl-1",
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
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class Loopback:
    """A chat-completions server on 127.0.0.1: ``bodies`` it received, ``answer``
    (body -> (status, JSON)) what it says."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                owner.bodies.append(body)
                status, reply = owner.answer(body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def model(self, **options: Any) -> OpenAIChatModel:
        return OpenAIChatModel("m", base_url=self.url, max_retries=0, **options)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def scripted(*contents: str) -> Answer:
    answers = iter(contents)
    return lambda body: completion(next(answers))


@pytest.fixture()
def serve() -> Iterator[Callable[[Answer], Loopback]]:
    made: list[Loopback] = []

    def start(answer: Answer) -> Loopback:
        made.append(Loopback(answer))
        return made[-1]

    yield start
    for server in made:
        server.close()


@obelisk.tool
def charge_card(customer: str, amount: float) -> dict[str, Any]:
    """Charge a customer's card."""
    return {"charged": amount, "customer": customer}


@obelisk.tool
def send_receipt(charge: dict[str, Any]) -> str:
    """Send a receipt for a charge."""
    return f"receipt for {charge['charged']}"


TOOLS = [charge_card, send_receipt]
INPUT = {"customer": "c-1", "amount": 5.0}
CHARGE = {
    "_tool": "charge_card",
    "customer": "†input.customer",
    "amount": "†input.amount",
    "_outputPath": "†state.charge",
}


def common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` have in common at their start."""
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return n
    return min(len(a), len(b))


def prompt_text(body: dict[str, Any]) -> str:
    """The request as a server's prompt cache sees it: the messages, in order."""
    return "".join(
        message["role"] + "\n" + message["content"] + "\n" for message in body["messages"]
    )


def test_consecutive_turns_share_a_prefix_covering_everything_static(
    serve: Callable[[Answer], Loopback],
) -> None:
    answers = (
        json.dumps({"calls": [CHARGE], "output": None}),
        json.dumps({"calls": [], "output": "†state.charge.charged"}),
    )
    for options in ({}, {"structured": False}):  # structured output, JSON mode
        server = serve(scripted(*answers))
        result = obelisk.Loop(server.model(**options), TOOLS).run_sync(INPUT)
        assert result.output == 5.0 and len(server.bodies) == 2
        first, second = (prompt_text(body) for body in server.bodies)
        user = json.loads(server.bodies[1]["messages"][-1]["content"])
        assert list(user)[-1] == "config" and user["config"]["turn"] == 2  # last, not first
        static_end = second.index('{"type": "state"')  # instructions, primer, tools, input
        assert second.index('"type": "tool"') < static_end
        assert second.index('"type": "input"') < static_end
        assert common_prefix(first, second) >= static_end, options


def test_a_wrong_tool_in_the_second_call_gets_checks_located_diagnostic(
    serve: Callable[[Answer], Loopback],
) -> None:
    wrong = {**CHARGE, "_tool": "chargeCard", "_outputPath": "†state.again"}
    server = serve(
        scripted(
            json.dumps({"calls": [CHARGE, wrong], "output": None}),
            json.dumps({"calls": [CHARGE], "output": "†state.charge.charged"}),  # fixed
        )
    )
    result = obelisk.Loop(server.model(structured=False), TOOLS).run_sync(INPUT)
    errors = result.turns[0].errors
    assert [error.call for error in errors] == ["#1 chargeCard"]
    assert errors[0].error["type"] == "unknown_tool"
    assert "calls.1" not in json.dumps(errors[0].error)  # not a schema validator's path
    sent = json.loads(server.bodies[1]["messages"][-1]["content"])
    sent_errors = [m for m in sent["context"] if m["type"] == "error"]
    assert [m["call"] for m in sent_errors] == ["#1 chargeCard"]
    assert result.output == 5.0


def test_a_5xx_answer_to_json_schema_falls_back_to_json_mode(
    serve: Callable[[Answer], Loopback],
) -> None:
    answer = json.dumps({"calls": [], "output": 7})

    def llama_cpp_like(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body["response_format"]["type"] == "json_schema":
            return 500, {"error": {"message": "Internal Server Error", "type": "server_error"}}
        return completion(answer)

    server = serve(llama_cpp_like)
    model = server.model()
    result = obelisk.Loop(model, TOOLS).run_sync(INPUT)
    assert result.output == 7 and model.json_mode
    kinds = [body["response_format"]["type"] for body in server.bodies]
    assert kinds == ["json_schema", "json_object"]
    # structured=True does not fall back: the 500 is the server's failure
    strict_server = serve(llama_cpp_like)
    with pytest.raises(obelisk.LoopStopped, match="HTTP 500"):
        obelisk.Loop(strict_server.model(structured=True), TOOLS).run_sync(INPUT)


def test_schema_strict_sends_the_strict_form_and_reads_answers_back(
    serve: Callable[[Answer], Loopback],
) -> None:
    left_out = {"_outputMethod": None, "_instance": None, "_id": None, "_reasoningForCall": None}
    strict_charge = {**CHARGE, **left_out}
    receipt = {"_tool": "send_receipt", "charge": "†state.charge", "_outputPath": "†state.r"}
    receipt = {**receipt, **left_out}
    server = serve(scripted(json.dumps({"calls": [strict_charge, receipt], "output": "†state.r"})))
    model = server.model(schema="strict")
    result = obelisk.Loop(model, TOOLS).run_sync(INPUT)
    assert result.output == "receipt for 5.0"
    sent = server.bodies[0]["response_format"]["json_schema"]
    assert sent["strict"] is True
    item = sent["schema"]["properties"]["calls"]["items"]["anyOf"][0]
    assert item["additionalProperties"] is False
    assert sorted(item["required"]) == sorted(item["properties"])
    assert result.turns[0].solution is not None
    assert result.turns[0].solution.calls[0] == CHARGE  # nulls read back as left out
    with pytest.raises(obelisk.UsageError, match="schema must be"):
        server.model(schema="exact")  # type: ignore[arg-type]
    with pytest.raises(obelisk.UsageError, match="cannot stream"):
        model.stream(model.requests[0])
