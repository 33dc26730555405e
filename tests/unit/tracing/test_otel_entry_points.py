"""Every public entry point that runs calls takes ``tracer_provider=``, as ``obelisk.run``
does (issue 30, point 1; docs/observability.md, "Turning it on"): ``obelisk.resume`` and
``resume_sync`` (in memory and by a journaled run's id), ``run_many`` and
``run_many_sync``, and ``obelisk.Loop(tracer_provider=...)`` for its ``run``, ``resume``
and a session driven turn by turn.  The spans go to the provider given, and none to the
one :func:`obelisk.instrument` installed (OpenTelemetry's global provider here)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import obelisk
from obelisk.interpreter.tracing import uninstrument


def memory_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


@pytest.fixture
def global_spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """OpenTelemetry's global provider (an in-memory one for the test), with
    ``obelisk.instrument()`` tracing every run into it unless a run says otherwise."""
    provider, memory = memory_provider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    obelisk.instrument()
    try:
        yield memory
    finally:
        uninstrument()


@pytest.fixture
def given() -> tuple[TracerProvider, InMemorySpanExporter]:
    """The provider given to the entry point, and what it received."""
    return memory_provider()


@obelisk.tool
def triple(n: int) -> int:
    """Three times n."""
    return 3 * n


@obelisk.tool(requires_approval=True)
def transfer(amount: int) -> str:
    """Moves money."""
    return f"sent {amount}"


PLAN = [
    {"_tool": "triple", "n": "†input.n", "_outputPath": "†state.a"},
    {"_tool": "transfer", "amount": "†state.a", "_outputPath": "†state.receipt"},
]


def names(spans: tuple[ReadableSpan, ...]) -> list[str]:
    return sorted(span.name for span in spans)


def paused_run(global_spans: InMemorySpanExporter, **options: Any) -> tuple[Any, str]:
    """The plan run up to the transfer waiting for a person (traced globally, then
    forgotten), and its approval id."""
    result = obelisk.run_sync(PLAN, [triple, transfer], input={"n": 2}, **options)
    (pending,) = result.pending
    global_spans.clear()
    return result, pending.id


def test_resume_traces_the_resumed_run_with_the_provider_given(
    global_spans: InMemorySpanExporter, given: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = given
    result, approval = paused_run(global_spans)
    resumed = asyncio.run(
        obelisk.resume(result, {approval: obelisk.Decision.accept()}, tracer_provider=provider)
    )
    assert resumed.state["receipt"] == "sent 6"
    assert names(memory.get_finished_spans()) == [
        "execute_tool transfer",
        "execute_tool triple",
        "invoke_workflow",
    ]
    assert global_spans.get_finished_spans() == ()
    obelisk.run_sync(PLAN[:1], [triple], input={"n": 1})  # the provider's scope ended
    assert names(global_spans.get_finished_spans()) == ["execute_tool triple", "invoke_workflow"]


def test_resume_sync_of_a_journaled_run_by_its_id_traces_with_the_provider_given(
    global_spans: InMemorySpanExporter,
    given: tuple[TracerProvider, InMemorySpanExporter],
    tmp_path: Path,
) -> None:
    provider, memory = given
    journal = str(tmp_path / "runs.db")
    _, approval = paused_run(global_spans, journal=journal, run_id="pay-1")
    resumed = obelisk.resume_sync(
        "pay-1",
        {approval: obelisk.Decision.accept()},
        tools=[triple, transfer],
        journal=journal,
        tracer_provider=provider,
    )
    assert resumed.state["receipt"] == "sent 6"
    assert "execute_tool transfer" in names(memory.get_finished_spans())
    assert global_spans.get_finished_spans() == ()


def test_run_many_traces_each_run_with_the_provider_given(
    global_spans: InMemorySpanExporter, given: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = given
    plan = PLAN[:1]
    results = asyncio.run(
        obelisk.run_many([{"n": 1}, {"n": 2}], [triple], plan=plan, tracer_provider=provider)
    )
    assert [r.state for r in results] == [{"a": 3}, {"a": 6}]
    assert names(memory.get_finished_spans()).count("invoke_workflow") == 2
    assert global_spans.get_finished_spans() == ()
    memory.clear()
    obelisk.run_many_sync([{"n": 3}], [triple], plan=plan, tracer_provider=provider)
    assert names(memory.get_finished_spans()) == ["execute_tool triple", "invoke_workflow"]
    assert global_spans.get_finished_spans() == ()


def test_a_loop_given_a_provider_traces_its_runs_with_it(
    global_spans: InMemorySpanExporter, given: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = given
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "triple", "n": "†input.n", "_outputPath": "†state.a"}]},
            {"calls": [], "output": "†state.a"},
        ]
    )
    loop = obelisk.Loop(model, [triple], tracer_provider=provider)
    assert loop.run_sync({"n": 2}).output == 6
    spans = memory.get_finished_spans()
    assert "invoke_agent" in names(spans) and "execute_tool triple" in names(spans)
    assert global_spans.get_finished_spans() == ()


def test_a_paused_loop_resumed_is_traced_with_its_provider(
    global_spans: InMemorySpanExporter, given: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = given
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "transfer", "amount": 5, "_outputPath": "†state.receipt"}]},
            {"calls": [], "output": "†state.receipt"},
        ]
    )
    loop = obelisk.Loop(model, [transfer], tracer_provider=provider)
    result = loop.run_sync()
    (pending,) = result.pending
    memory.clear()
    resumed = loop.resume_sync(result, {pending.id: obelisk.Decision.accept()})
    assert resumed.output == "sent 5"
    spans = memory.get_finished_spans()
    assert "execute_tool transfer" in names(spans) and "invoke_agent" in names(spans)
    assert global_spans.get_finished_spans() == ()


def test_a_session_driven_turn_by_turn_is_traced_with_its_loop_s_provider(
    global_spans: InMemorySpanExporter, given: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = given
    model = obelisk.ScriptedModel(
        [{"calls": [{"_tool": "triple", "n": "†input.n", "_outputPath": "†state.a"}]}]
    )
    session = obelisk.Loop(model, [triple], tracer_provider=provider).session({"n": 1})
    assert asyncio.run(session.turn(1)) is False
    assert session.state.document("state") == {"a": 3}
    assert "execute_tool triple" in names(memory.get_finished_spans())
    assert global_spans.get_finished_spans() == ()
