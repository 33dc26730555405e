"""What a misbehaving model does to ``Loop.run_sync`` (issue 25, point 6; docs/loop.md).

A model that raises ``GeneratorExit``, returns something other than a
``Solution``, streams bytes, or answers with a value nested 10,000 deep gets a
clear obelisk error (``LoopStopped`` from a ``ModelError``) or a correction, never
a raw foreign exception, never a ``RecursionError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

import obelisk
from obelisk import Solution
from obelisk.interpreter.loop.messages import Request


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@obelisk.tool
def echo(x: Any = None) -> Any:
    "Returns x."
    return x


class Misbehaving:
    """Gives ``answers`` in turn from ``complete`` (raising those that are exceptions)
    and streams ``chunks``."""

    def __init__(self, answers: list[Any], chunks: list[Any] | None = None) -> None:
        self.answers, self.chunks = answers, chunks or []
        self.requests: list[Request] = []

    async def complete(self, request: Request) -> Any:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def stream(self, request: Request) -> AsyncIterator[Any]:
        self.requests.append(request)
        for chunk in self.chunks:
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk


def stopped(model: Any, **options: Any) -> obelisk.LoopStopped:
    with pytest.raises(obelisk.LoopStopped) as caught:
        obelisk.Loop(model, [echo], **options).run_sync()
    assert isinstance(caught.value.__cause__, obelisk.ModelError)
    return caught.value


def test_generator_exit_from_the_model_stops_the_loop_cleanly() -> None:
    stop = stopped(Misbehaving([GeneratorExit()]))
    assert str(stop) == "the model failed: the model raised GeneratorExit"
    assert stop.result.status == "stopped"

    stop = stopped(Misbehaving([], chunks=['{"calls": ', GeneratorExit()]), stream=True)
    assert str(stop) == "the model failed: the model raised GeneratorExit"


@pytest.mark.parametrize(
    ("answer", "kind"),
    [({"calls": [], "output": 1}, "dict"), (None, "NoneType"), ('{"calls": []}', "str")],
)
def test_an_answer_that_is_not_a_solution_stops_the_loop(answer: Any, kind: str) -> None:
    stop = stopped(Misbehaving([answer]))
    assert str(stop) == (
        f"the model failed: the model's complete() returned {kind}, not a Solution "
        "(obelisk.parse_solution makes one from JSON text or a dict)"
    )


def test_bytes_in_a_stream_stop_the_loop() -> None:
    stop = stopped(Misbehaving([], chunks=[b'{"calls": [], "output": 1}']), stream=True)
    assert str(stop) == (
        "the model failed: the model's stream gave bytes, not str: a stream yields the "
        "answer's text"
    )


@pytest.mark.parametrize("where", ["output", "argument"])
def test_a_solution_nested_10000_deep_is_a_correction(where: str) -> None:
    deep = nested(10_000)
    if where == "output":
        first = Solution(calls=[], output=deep)
    else:
        first = Solution(calls=[{"_tool": "echo", "x": deep, "_outputPath": "†state.x"}])
    model = Misbehaving([first, Solution(calls=[], output=2)])
    result = obelisk.Loop(model, [echo]).run_sync()
    assert result.output == 2 and len(result.turns) == 2
    (error,) = result.turns[0].errors
    assert error.error["type"] == "invalid_solution"
    assert "nested deeper than 259 levels" in error.error["message"]
    assert result.state == {}  # nothing of the deep answer ran


def test_a_deep_latent_answer_is_a_correction_of_the_sub_request() -> None:
    summarize = obelisk.Tool.from_schema(
        {
            "name": "summarize",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "output": {"type": "string"},
        }
    )
    plan = Solution(
        calls=[{"_tool": "summarize", "text": "long", "_outputPath": "†state.s"}],
        output="†state.s",
    )
    model = Misbehaving([plan, Solution(calls=[], output=nested(10_000)), Solution(output="ok")])
    result = obelisk.Loop(model, [summarize], mode="lazy").run_sync()
    assert result.output == "ok"
    (note,) = result.turns[0].delegated
    assert note["answers"][0] == {"solution": None}  # the unusable answer
    retry = model.requests[2].to_data()["context"]
    (error,) = [message for message in retry if message["type"] == "error"]
    assert "nested deeper than 259 levels" in error["error"]["message"]
