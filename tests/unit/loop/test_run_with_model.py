"""``obelisk.run(plan, tools, model=...)``: a fixed plan whose model steps (latent calls,
delegates) a model answers, one sub-request per call, without a planning turn
(docs/loop.md, "A fixed plan with model steps"; issue 27, point 4)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import obelisk


def latent(name: str, output: dict[str, Any], *, delegate: bool = False) -> obelisk.Tool:
    """A latent tool taking one string ``text``."""
    return obelisk.Tool.from_schema(
        {
            "name": name,
            "description": f"The {name} of a text.",
            **({"_delegate": True} if delegate else {}),
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            "output": output,
        }
    )


summarize = latent("summarize", {"type": "string"})
count = latent("count", {"type": "integer"})


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


def text_of(request: obelisk.Request) -> str:
    """The ``text`` argument a sub-request carries."""
    (message,) = [m for m in request.to_data()["context"] if m["type"] == "input"]
    text: str = message["input"]["text"]
    return text


PIPELINE = [
    {"_tool": "summarize", "text": "†input.text", "_outputPath": "†state.short"},
    {"_tool": "summarize", "text": "†state.short", "_outputPath": "†state.shorter"},
]


def test_two_latent_steps_run_to_completed_the_second_reading_the_first() -> None:
    model = obelisk.ScriptedModel(
        [{"calls": [], "output": "First. Second."}, {"calls": [], "output": "First."}]
    )
    result = obelisk.run_sync(PIPELINE, [summarize], {"text": "Zero. First. Second."}, model=model)
    assert result.status == "completed"
    assert result.state == {"short": "First. Second.", "shorter": "First."}
    assert [r.status for r in result.calls] == ["succeeded", "succeeded"]
    # one sub-request per call, as lazy mode makes them; no planning turn
    assert [r.config for r in model.requests] == [
        {"mode": "latent", "call": "#0 summarize", "depth": 0},
        {"mode": "latent", "call": "#1 summarize", "depth": 0},
    ]
    assert [text_of(r) for r in model.requests] == ["Zero. First. Second.", "First. Second."]


def test_without_a_model_the_latent_steps_stay_pending() -> None:
    result = obelisk.run_sync(PIPELINE, [summarize], {"text": "Zero. First."})
    assert result.status == "partial"
    assert [r.status for r in result.calls] == ["pending_latent", "skipped"]


def test_the_async_form_takes_a_model_too() -> None:
    model = obelisk.ScriptedModel(respond=lambda request: {"calls": [], "output": "s"})
    result = asyncio.run(obelisk.run(PIPELINE, [summarize], {"text": "t"}, model=model))
    assert (result.status, result.state) == ("completed", {"short": "s", "shorter": "s"})


def test_a_delegate_step_runs_as_a_child_loop() -> None:
    research = latent("research", {"type": "object"}, delegate=True)

    def respond(request: obelisk.Request) -> dict[str, Any]:
        assert request.config == {"mode": "lazy", "turn": 1, "max_turns": 8, "depth": 1}
        return {"calls": [], "output": {"about": text_of(request)}}

    model = obelisk.ScriptedModel(respond=respond)
    plan = [
        {"_tool": "research", "text": "†input.city", "_outputPath": "†state.found"},
        {"_tool": "double", "n": 21, "_outputPath": "†state.n"},
    ]
    result = obelisk.run_sync(plan, [research, double], {"city": "Oslo"}, model=model)
    assert result.status == "completed"
    assert result.state == {"found": {"about": "Oslo"}, "n": 42}
    assert len(model.requests) == 1


def test_a_model_that_answers_badly_fails_its_call_and_keeps_the_others() -> None:
    def respond(request: obelisk.Request) -> dict[str, Any]:
        if request.config["call"] == "#0 count":
            return {"calls": [], "output": "not a number"}  # never fits
        return {"calls": [], "output": "fine"}

    model = obelisk.ScriptedModel(respond=respond)
    plan = [
        {"_tool": "count", "text": "a b c", "_outputPath": "†state.words"},
        {"_tool": "summarize", "text": "a b c", "_outputPath": "†state.short"},
        {"_tool": "double", "n": 2, "_outputPath": "†state.four"},
        {"_tool": "double", "n": "†state.words", "_outputPath": "†state.eight"},
    ]
    result = obelisk.run_sync(plan, [count, summarize, double], model=model)
    assert result.status == "failed"
    assert result.state == {"short": "fine", "four": 4}
    counted, summarized, four, eight = result.calls
    assert (summarized.status, four.status, eight.status) == ("succeeded", "succeeded", "skipped")
    assert counted.status == "failed"
    assert counted.error is not None
    assert counted.error["type"] == "SubRequestError"
    assert counted.error["message"].startswith(
        "no usable result for latent #0 count after 4 answers: the output does not fit the "
        "schema of count"
    )
    # the first answer and max_corrections=3 corrections, then the call failed
    assert sum(r.config["call"] == "#0 count" for r in model.requests) == 4


def test_a_model_that_raises_fails_the_call_not_the_run() -> None:
    class Broken:
        async def complete(self, request: obelisk.Request) -> obelisk.Solution:
            raise KeyError("choices")

    plan = [
        {"_tool": "summarize", "text": "x", "_outputPath": "†state.short"},
        {"_tool": "double", "n": 1, "_outputPath": "†state.two"},
    ]
    result = obelisk.run_sync(plan, [summarize, double], model=Broken())
    assert result.state == {"two": 2}
    failed = result.calls[0]
    assert failed.status == "failed" and failed.error is not None
    assert failed.error["message"] == (
        "the model failed on #0 summarize: the model raised KeyError: 'choices'"
    )


def test_a_model_without_latent_calls_is_harmless() -> None:
    model = obelisk.ScriptedModel([])
    plan = [{"_tool": "double", "n": 21, "_outputPath": "†state.n"}]
    result = obelisk.run_sync(plan, [double], model=model)
    assert (result.status, result.state, model.requests) == ("completed", {"n": 42}, [])


def test_a_latent_call_with_output_is_written_without_asking_the_model() -> None:
    model = obelisk.ScriptedModel([])
    plan = [{"_tool": "summarize", "text": "x", "_output": "y", "_outputPath": "†state.s"}]
    result = obelisk.run_sync(plan, [summarize], model=model)
    assert (result.status, result.state, model.requests) == ("completed", {"s": "y"}, [])


def test_a_paused_run_resumes_with_its_model() -> None:
    @obelisk.tool(requires_approval=True)
    def publish(text: str) -> str:
        """Publish a text."""
        return f"published {text}"

    model = obelisk.ScriptedModel(respond=lambda request: {"calls": [], "output": "short"})
    plan = [
        {"_tool": "publish", "text": "†input.text", "_outputPath": "†state.published"},
        {"_tool": "summarize", "text": "†state.published", "_outputPath": "†state.short"},
    ]
    paused = obelisk.run_sync(plan, [publish, summarize], {"text": "t"}, model=model)
    assert paused.status == "awaiting_approval" and model.requests == []
    (pending,) = paused.pending
    result = obelisk.resume_sync(paused, {pending.id: obelisk.Decision.accept()})
    assert result.status == "completed"
    assert result.state == {"published": "published t", "short": "short"}
    assert [text_of(r) for r in model.requests] == ["published t"]


def test_a_model_cannot_go_with_a_journal(tmp_path: Path) -> None:
    journal = tmp_path / "runs.db"
    model = obelisk.ScriptedModel([])
    with pytest.raises(obelisk.UsageError, match="model= cannot go with journal="):
        obelisk.run_sync(PIPELINE, [summarize], {"text": "t"}, model=model, journal=journal)
    assert not journal.exists()  # refused before the journal was opened


def test_a_model_without_complete_is_a_usage_error() -> None:
    with pytest.raises(obelisk.UsageError, match="model must have an async complete"):
        obelisk.run_sync(PIPELINE, [summarize], {"text": "t"}, model=object())  # type: ignore[arg-type]


def test_run_stays_public_and_imports_the_loop_only_for_a_model() -> None:
    assert obelisk.run.__module__ == obelisk.run_sync.__module__ == "obelisk"
    code = (
        "import sys, obelisk\n"
        "def later():\n"
        "    return sorted(m for m in sys.modules if m.startswith('obelisk.interpreter.loop'))\n"
        "plan = [{'_tool': 'double', 'n': 1, '_outputPath': '†state.n'}]\n"
        "def double(n: int) -> int:\n"
        "    return 2 * n\n"
        "print(obelisk.run_sync(plan, [double]).status, later())\n"
        "print(obelisk.run_sync(plan, [double], model=obelisk.ScriptedModel([])).status,\n"
        "      'obelisk.interpreter.loop.steps' in later())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["completed []", "completed True"]
