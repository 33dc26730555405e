"""The span of a call a person decided on carries its approval id when the run is
resumed (issue 30, point 1: ``obelisk.approval.id``; docs/observability.md), as the
pending call's span did: accepted, edited or rejected, in memory or through a journal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import obelisk
from obelisk.interpreter.tracing import uninstrument


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """Every run of the test traced into an in-memory exporter."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    obelisk.instrument(provider)
    try:
        yield memory
    finally:
        uninstrument()


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


def attributes_of(
    spans: tuple[ReadableSpan, ...], index: int
) -> tuple[ReadableSpan, dict[str, Any]]:
    (span,) = [s for s in spans if (s.attributes or {}).get("obelisk.call.index") == index]
    return span, dict(span.attributes or {})


def paused(exporter: InMemorySpanExporter, **options: Any) -> tuple[obelisk.RunResult, str]:
    """The plan run up to the call waiting for a person, and that call's approval id
    (also on the waiting span); the exporter is emptied for the resume."""
    result = obelisk.run_sync(PLAN, [triple, transfer], input={"n": 2}, **options)
    (pending,) = result.pending
    _, waiting = attributes_of(exporter.get_finished_spans(), 1)
    assert waiting["obelisk.approval.id"] == pending.id
    exporter.clear()
    return result, pending.id


def test_an_accepted_call_s_span_carries_its_approval_id(
    exporter: InMemorySpanExporter,
) -> None:
    result, approval = paused(exporter)
    resumed = obelisk.resume_sync(result, {approval: obelisk.Decision.accept()})
    assert resumed.state["receipt"] == "sent 6"
    span, seen = attributes_of(exporter.get_finished_spans(), 1)
    assert seen["obelisk.call.status"] == "succeeded"
    assert seen["obelisk.approval.id"] == approval
    assert span.status.status_code is StatusCode.UNSET
    _, replayed = attributes_of(exporter.get_finished_spans(), 0)
    assert "obelisk.approval.id" not in replayed  # nobody decided on it


def test_an_edited_or_rejected_call_s_span_carries_its_approval_id(
    exporter: InMemorySpanExporter,
) -> None:
    result, approval = paused(exporter)
    edited = obelisk.resume_sync(result, {approval: obelisk.Decision.edit({"amount": 1})})
    assert edited.state["receipt"] == "sent 1"
    assert attributes_of(exporter.get_finished_spans(), 1)[1]["obelisk.approval.id"] == approval
    exporter.clear()
    result, approval = paused(exporter)
    rejected = obelisk.resume_sync(result, {approval: obelisk.Decision.reject("too much")})
    assert rejected.calls[1].status == "failed"
    span, seen = attributes_of(exporter.get_finished_spans(), 1)
    assert seen["obelisk.approval.id"] == approval
    assert span.status.status_code is StatusCode.ERROR


def test_a_journaled_run_resumed_by_its_id_carries_the_approval_id(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    journal = str(tmp_path / "runs.db")
    _, approval = paused(exporter, journal=journal, run_id="pay-1")
    resumed = obelisk.resume_sync(
        "pay-1",
        tools=[triple, transfer],
        journal=journal,
        decisions={approval: obelisk.Decision.accept()},
    )
    assert resumed.state["receipt"] == "sent 6"
    assert attributes_of(exporter.get_finished_spans(), 1)[1]["obelisk.approval.id"] == approval


def test_a_run_without_approvals_has_no_approval_id(exporter: InMemorySpanExporter) -> None:
    obelisk.run_sync(PLAN[:1], [triple], input={"n": 1})
    assert "obelisk.approval.id" not in attributes_of(exporter.get_finished_spans(), 0)[1]
