"""The loop never leaks: whatever the model raises, however long it takes and however
many requests its delegates make, the loop stops with LoopStopped and the result so
far (docs/loop.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import obelisk
from obelisk import LoopStopped, Request, Solution


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


FIRST = {"calls": [{"_tool": "double", "n": 2, "_outputPath": "†state.a"}], "output": None}


class Flaky:
    """Answers the first request, then fails as told."""

    def __init__(self, failure: BaseException | None = None, delay: float = 0.0) -> None:
        self.failure, self.delay, self.asked = failure, delay, 0

    async def complete(self, request: Request) -> Solution:
        self.asked += 1
        if self.asked == 1:
            return obelisk.parse_solution(FIRST)
        await asyncio.sleep(self.delay)
        if self.failure is not None:
            raise self.failure
        return obelisk.parse_solution({"calls": [], "output": "†state.a"})


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (KeyError("choices"), "the model failed: the model raised KeyError: 'choices'"),
        (RuntimeError("connection reset"), "the model failed: the model raised RuntimeError"),
        (obelisk.ModelError("quota"), "the model failed: quota"),
    ],
)
def test_whatever_the_model_raises_stops_the_loop_with_its_result(
    failure: BaseException, message: str
) -> None:
    with pytest.raises(LoopStopped) as stopped:
        obelisk.Loop(Flaky(failure), [double]).run_sync()
    assert str(stopped.value).startswith(message)
    result = stopped.value.result
    assert result.status == "stopped" and result.state == {"a": 4} and len(result.turns) == 2


def test_model_timeout_bounds_each_answer() -> None:
    model = Flaky(delay=5)
    with pytest.raises(LoopStopped, match=r"the model did not answer within 0\.1 s") as stopped:
        obelisk.Loop(model, [double], model_timeout=0.1).run_sync()
    assert stopped.value.result.state == {"a": 4}
    # a quick model is not bothered
    assert obelisk.Loop(Flaky(), [double], model_timeout=5).run_sync().output == 4


def test_model_timeout_bounds_a_whole_stream() -> None:
    class SlowStream(Flaky):
        async def stream(self, request: Request) -> Any:
            text = '{"calls": [], "output": 1}'
            for character in text:
                await asyncio.sleep(0.05)
                yield character

    with pytest.raises(LoopStopped, match=r"did not answer within 0\.2 s"):
        obelisk.Loop(SlowStream(), [double], stream=True, model_timeout=0.2).run_sync()


def test_max_requests_counts_every_request_and_stops_the_loop() -> None:
    never_done = {"calls": [{"_tool": "double", "n": 1, "_outputPath": "†state.a"}]}
    model = obelisk.ScriptedModel(respond=lambda request: never_done)
    loop = obelisk.Loop(model, [double], max_turns=50, max_requests=3)
    with pytest.raises(LoopStopped) as stopped:
        loop.run_sync()
    assert str(stopped.value) == (
        "max_requests=3 model requests are used up (delegates and sub-requests included)"
    )
    assert len(model.requests) == 3 and loop.model.requests == 3
    assert stopped.value.result.state == {"a": 2}


def test_max_requests_covers_delegates_and_their_sub_requests() -> None:
    # Each delegate answers with more delegate calls: without a budget the fan-out
    # grows geometrically; with one, the whole tree stops at max_requests.
    helper = obelisk.Tool.from_schema(
        {
            "name": "helper",
            "description": "A delegate that asks more delegates.",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "_delegate": True,
        }
    )
    fan_out = {
        "calls": [{"_tool": "helper", "n": i, "_outputPath": f"†state.h{i}"} for i in range(5)],
        "output": None,
    }
    model = obelisk.ScriptedModel(respond=lambda request: fan_out)
    loop = obelisk.Loop(model, [helper], mode="lazy", max_requests=40, max_turns=3)
    with pytest.raises(LoopStopped, match="max_requests=40"):
        loop.run_sync()
    assert len(model.requests) == 40


def test_bad_settings_are_usage_errors() -> None:
    for settings in ({"max_requests": 0}, {"max_requests": 1.5}, {"model_timeout": 0},
                     {"model_timeout": float("nan")}, {"model_timeout": True}):  # fmt: skip
        with pytest.raises(obelisk.UsageError):
            obelisk.Loop(obelisk.ScriptedModel([]), [double], **settings)
