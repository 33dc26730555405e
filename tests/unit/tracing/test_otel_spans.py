"""OpenTelemetry spans of runs and loops (issue 30, point 1; docs/observability.md):
the GenAI span names and attributes, parents, links along the plan's data flow,
skipped calls, approvals, loops, sub-requests and delegates, read back from the SDK's
in-memory exporter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
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


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def one(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (found,) = by_name(spans, name)
    return found


def call_span(spans: tuple[ReadableSpan, ...], index: int) -> ReadableSpan:
    (found,) = [s for s in spans if (s.attributes or {}).get("obelisk.call.index") == index]
    return found


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@obelisk.tool
def add(a: int, b: int) -> int:
    """a plus b."""
    return a + b


@obelisk.tool
def boom(n: int) -> int:
    """Always fails."""
    raise ValueError(f"no {n}")


PLAN = [
    {"_tool": "double", "_id": "first", "n": "†input.n", "_outputPath": "†state.a"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"},
    {"_tool": "add", "a": "†state.a", "b": "†state.b", "_outputPath": "†state.c"},
]


def test_a_run_is_an_invoke_workflow_span_with_one_execute_tool_span_per_call(
    exporter: InMemorySpanExporter,
) -> None:
    result = obelisk.run_sync(PLAN, [double, add], input={"n": 2})
    assert result.state == {"a": 4, "b": 8, "c": 12}
    spans = exporter.get_finished_spans()
    run = one(spans, "invoke_workflow")
    assert run.parent is None
    assert attrs(run)["gen_ai.operation.name"] == "invoke_workflow"
    assert attrs(run)["obelisk.run.status"] == "completed"
    assert run.status.status_code is StatusCode.UNSET
    tools = by_name(spans, "execute_tool double") + by_name(spans, "execute_tool add")
    assert len(tools) == 3 == len(spans) - 1
    assert {parent_of(span) for span in tools} == {run.context.span_id}
    first = call_span(spans, 0)
    assert attrs(first) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "double",
        "gen_ai.tool.call.id": "first",  # the call's _id
        "gen_ai.tool.type": "function",
        "obelisk.call.index": 0,
        "obelisk.call.status": "succeeded",
        "obelisk.call.attempts": 1,
        "obelisk.call.paths_written": ("†state.a",),
    }
    assert attrs(call_span(spans, 1))["gen_ai.tool.call.id"] == "#1"  # no _id: #index
    for span in tools:
        assert run.start_time <= span.start_time <= span.end_time <= run.end_time


def test_each_call_links_to_the_spans_of_the_calls_whose_writes_it_read(
    exporter: InMemorySpanExporter,
) -> None:
    obelisk.run_sync(PLAN, [double, add], input={"n": 2})
    spans = exporter.get_finished_spans()
    first, second, third = (call_span(spans, i) for i in range(3))
    assert first.links == ()  # it reads only the input
    (link,) = second.links
    assert link.context.span_id == first.context.span_id
    assert dict(link.attributes or {}) == {"obelisk.link.path": "†state.a", "obelisk.link.call": 0}
    linked = {
        (lk.context.span_id, (lk.attributes or {})["obelisk.link.path"]) for lk in third.links
    }
    assert linked == {
        (first.context.span_id, "†state.a"),
        (second.context.span_id, "†state.b"),
    }


def test_arguments_and_results_are_exported_only_when_asked_for(
    exporter: InMemorySpanExporter,
) -> None:
    obelisk.run_sync(PLAN[:1], [double], input={"n": 2})
    assert not any(
        key in attrs(span)
        for span in exporter.get_finished_spans()
        for key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result")
    )
    exporter.clear()
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    obelisk.instrument(provider, capture_content=True)
    obelisk.run_sync(PLAN[:1], [double], input={"n": 2})
    span = call_span(memory.get_finished_spans(), 0)
    assert json.loads(attrs(span)["gen_ai.tool.call.arguments"]) == {"n": 2}
    assert json.loads(attrs(span)["gen_ai.tool.call.result"]) == 4
    memory.clear()
    obelisk.run_sync([{"_tool": "boom", "n": 7, "_outputPath": "†state.x"}], [boom])
    assert call_span(memory.get_finished_spans(), 0).status.description == "no 7"


def test_a_failed_call_is_an_error_and_the_call_it_starved_a_zero_length_skipped_span(
    exporter: InMemorySpanExporter,
) -> None:
    plan = [
        {"_tool": "boom", "n": "†input.n", "_outputPath": "†state.x"},
        {"_tool": "double", "n": "†state.x", "_outputPath": "†state.y"},
    ]
    result = obelisk.run_sync(plan, [boom, double], input={"n": 1})
    assert [call.status for call in result.calls] == ["failed", "skipped"]
    spans = exporter.get_finished_spans()
    failed, skipped = call_span(spans, 0), call_span(spans, 1)
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "ValueError"  # its message may hold personal data
    assert attrs(failed)["error.type"] == "ValueError"
    assert attrs(failed)["obelisk.call.status"] == "failed"
    assert skipped.start_time == skipped.end_time  # zero length
    assert skipped.status.status_code is StatusCode.UNSET  # skipping is not an error
    assert attrs(skipped)["obelisk.call.status"] == "skipped"
    assert attrs(skipped)["obelisk.call.skip_reason"] == result.calls[1].reason
    assert "boom failed" in attrs(skipped)["obelisk.call.skip_reason"]
    assert skipped.links == ()  # nothing was written for it to read
    run = one(spans, "invoke_workflow")
    assert run.status.status_code is StatusCode.ERROR
    assert attrs(run)["obelisk.run.status"] == "failed"


@obelisk.tool(outcomes=["even", "odd"])
def route(n: int) -> Any:
    """Takes the second alternative for odd n."""
    return obelisk.Outcome("odd" if n % 2 else "even", n)


def test_the_alternative_taken_and_the_untaken_branch(exporter: InMemorySpanExporter) -> None:
    plan = [
        {"_tool": "route", "n": "†input.n", "_outputPath": "†state.even || †state.odd"},
        {"_tool": "double", "n": "†state.even", "_outputPath": "†state.e2"},
        {"_tool": "double", "n": "†state.odd", "_outputPath": "†state.o2"},
    ]
    result = obelisk.run_sync(plan, [route, double], input={"n": 3})
    assert result.state == {"odd": 3, "o2": 6}
    spans = exporter.get_finished_spans()
    chooser = call_span(spans, 0)
    assert attrs(chooser)["obelisk.call.alternative"] == 1
    assert attrs(chooser)["obelisk.call.paths_written"] == ("†state.odd",)
    untaken, taken = call_span(spans, 1), call_span(spans, 2)
    assert attrs(untaken)["obelisk.call.status"] == "skipped"
    assert untaken.links == ()  # the alternative it reads was not taken
    ((link_path, link_call),) = [
        ((lk.attributes or {})["obelisk.link.path"], lk.context.span_id) for lk in taken.links
    ]
    assert (link_path, link_call) == ("†state.odd", chooser.context.span_id)


@obelisk.tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pays."""
    return f"paid {amount}"


def test_a_call_awaiting_approval_is_unset_not_an_error(exporter: InMemorySpanExporter) -> None:
    plan = [
        {"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"},
        {"_tool": "pay", "amount": "†state.a", "_outputPath": "†state.receipt"},
    ]
    result = obelisk.run_sync(plan, [double, pay], input={"n": 5})
    assert result.status == "awaiting_approval"
    (pending,) = result.pending
    spans = exporter.get_finished_spans()
    waiting = call_span(spans, 1)
    assert waiting.status.status_code is StatusCode.UNSET
    assert attrs(waiting)["obelisk.call.status"] == "awaiting_approval"
    assert attrs(waiting)["obelisk.approval.id"] == pending.id
    assert [lk.context.span_id for lk in waiting.links] == [call_span(spans, 0).context.span_id]
    run = one(spans, "invoke_workflow")
    assert run.status.status_code is StatusCode.UNSET
    assert attrs(run)["obelisk.run.status"] == "awaiting_approval"
    exporter.clear()
    resumed = obelisk.resume_sync(result, {pending.id: obelisk.Decision.accept()})
    assert resumed.state["receipt"] == "paid 10"
    paid = call_span(exporter.get_finished_spans(), 1)
    assert attrs(paid)["obelisk.call.status"] == "succeeded"
    assert "obelisk.call.replayed" not in attrs(paid)
    replayed = call_span(exporter.get_finished_spans(), 0)  # ran before the pause
    assert attrs(replayed)["obelisk.call.replayed"] is True
    assert [lk.context.span_id for lk in paid.links] == [replayed.context.span_id]


class UsageModel:
    """Answers each request with the next of ``answers``, reporting token usage."""

    def __init__(self, answers: list[dict[str, Any]], model: str = "test-model") -> None:
        self.answers, self.model = list(answers), model

    async def complete(self, request: obelisk.Request) -> obelisk.Solution:
        answer = self.answers.pop(0)
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        return obelisk.parse_solution(answer).with_usage(usage)


def test_a_loop_is_an_invoke_agent_span_with_a_plan_span_per_planning_request(
    exporter: InMemorySpanExporter,
) -> None:
    model = UsageModel(
        [
            {"calls": [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"}]},
            {"calls": [{"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"}]},
            {"calls": [], "output": "†state.b"},
        ]
    )
    result = obelisk.Loop(model, [double]).run_sync({"n": 3})
    assert result.output == 12
    spans = exporter.get_finished_spans()
    agent = one(spans, "invoke_agent")
    assert agent.parent is None
    assert attrs(agent)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs(agent)["gen_ai.request.model"] == "test-model"
    assert attrs(agent)["obelisk.loop.status"] == "completed"
    assert attrs(agent)["gen_ai.usage.input_tokens"] == 300
    assert not by_name(spans, "invoke_workflow")  # a turn's run is no workflow of its own
    plans = by_name(spans, "plan")
    assert len(plans) == 2  # the third request wrote no plan
    assert {parent_of(p) for p in plans} == {agent.context.span_id}
    chats = by_name(spans, "chat test-model")
    assert len(chats) == 3
    planned = [c for c in chats if parent_of(c) in {p.context.span_id for p in plans}]
    assert len(planned) == 2
    (final,) = [c for c in chats if parent_of(c) == agent.context.span_id]
    for chat in chats:
        assert attrs(chat)["gen_ai.operation.name"] == "chat"
        assert attrs(chat)["gen_ai.usage.input_tokens"] == 100
        assert attrs(chat)["gen_ai.usage.output_tokens"] == 20
    tools = by_name(spans, "execute_tool double")
    assert len(tools) == 2  # the call the second turn kept is the first turn's span
    assert {parent_of(t) for t in tools} == {agent.context.span_id}  # siblings of the plans
    first, second = sorted(tools, key=lambda t: t.start_time)
    assert attrs(second)["obelisk.call.paths_written"] == ("†state.b",)
    # the second turn's call reads what the first turn's wrote: linked across turns
    (link,) = second.links
    assert link.context.span_id == first.context.span_id
    assert dict(link.attributes or {}) == {"obelisk.link.path": "†state.a", "obelisk.link.call": 0}
    assert final.start_time >= max(t.end_time for t in tools)


summarize = obelisk.Tool.from_schema(
    {
        "name": "summarize",
        "description": "The summary of a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string"},
    }
)


def test_a_sub_request_nests_under_the_call_that_made_it(exporter: InMemorySpanExporter) -> None:
    plan = [{"_tool": "summarize", "text": "†input.text", "_outputPath": "†state.short"}]
    model = UsageModel([{"calls": [], "output": "Short."}])
    result = obelisk.run_sync(plan, [summarize], {"text": "A long text."}, model=model)
    assert result.state == {"short": "Short."}
    spans = exporter.get_finished_spans()
    call = call_span(spans, 0)
    (chat,) = by_name(spans, "chat test-model")
    assert parent_of(chat) == call.context.span_id
    assert attrs(chat)["obelisk.request.mode"] == "latent"
    assert not by_name(spans, "plan")  # a latent answer writes no plan


research = obelisk.Tool.from_schema(
    {
        "name": "research",
        "description": "Research a number.",
        "_delegate": True,
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "output": {"type": "integer"},
    }
)


def test_a_delegate_loop_nests_under_the_call_that_delegated(
    exporter: InMemorySpanExporter,
) -> None:
    def respond(request: obelisk.Request) -> Any:
        if request.config.get("depth"):  # the delegate's own loop
            if request.config["turn"] == 1:
                return {"calls": [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.d"}]}
            return {"calls": [], "output": "†state.d"}
        if request.config["turn"] == 1:
            return {"calls": [{"_tool": "research", "n": 4, "_outputPath": "†state.r"}]}
        return {"calls": [], "output": "†state.r"}

    model = obelisk.ScriptedModel(respond=respond)
    result = obelisk.Loop(model, [double, research]).run_sync({})
    assert result.output == 8
    spans = exporter.get_finished_spans()
    agents = by_name(spans, "invoke_agent")
    (outer,) = [a for a in agents if a.parent is None]
    (inner,) = [a for a in agents if a.parent is not None]
    (delegating,) = by_name(spans, "execute_tool research")
    assert parent_of(delegating) == outer.context.span_id
    assert parent_of(inner) == delegating.context.span_id
    assert attrs(inner)["obelisk.loop.depth"] == 1
    (doubled,) = by_name(spans, "execute_tool double")
    assert parent_of(doubled) == inner.context.span_id


def test_run_with_a_tracer_provider_traces_that_run_only() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    obelisk.run_sync(PLAN[:1], [double], input={"n": 1}, tracer_provider=provider)
    assert len(memory.get_finished_spans()) == 2
    obelisk.run_sync(PLAN[:1], [double], input={"n": 1})
    asyncio.run(obelisk.run(PLAN[:1], [double], input={"n": 1}))
    assert len(memory.get_finished_spans()) == 2  # the later runs were not traced


def test_a_run_nested_in_a_tool_is_a_workflow_under_that_call(
    exporter: InMemorySpanExporter,
) -> None:
    @obelisk.tool
    async def nested(n: int) -> int:
        """Runs a plan of its own."""
        inner = await obelisk.run(PLAN[:1], [double], input={"n": n})
        value: int = inner.state["a"]
        return value

    plan = [{"_tool": "nested", "n": 2, "_outputPath": "†state.x"}]
    assert obelisk.run_sync(plan, [nested]).state == {"x": 4}
    spans = exporter.get_finished_spans()
    outer, inner = sorted(by_name(spans, "invoke_workflow"), key=lambda s: s.start_time)
    (calling,) = by_name(spans, "execute_tool nested")
    assert parent_of(calling) == outer.context.span_id
    assert parent_of(inner) == calling.context.span_id


def test_an_attribute_hook_adds_attributes_to_every_call(exporter: InMemorySpanExporter) -> None:
    from obelisk.interpreter.tracing.spans import call_attribute_hooks

    call_attribute_hooks.append(lambda record: {"obelisk.call.labels": ["pii"]})
    try:
        obelisk.run_sync(PLAN[:1], [double], input={"n": 1})
    finally:
        call_attribute_hooks.clear()
    assert attrs(call_span(exporter.get_finished_spans(), 0))["obelisk.call.labels"] == ("pii",)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_without_tracing_nothing_of_opentelemetry_is_imported() -> None:
    done = _python(
        "import sys, obelisk\n"
        "@obelisk.tool\n"
        "def double(n: int) -> int:\n"
        "    'Twice n.'\n"
        "    return 2 * n\n"
        "plan = [{'_tool': 'double', 'n': 1, '_outputPath': '†state.a'}]\n"
        "assert obelisk.run_sync(plan, [double]).state == {'a': 2}\n"
        "obelisk.instrument  # the name resolves without loading OpenTelemetry\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "print(loaded, 'obelisk.interpreter.tracing.spans' in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] False"


def test_without_the_extra_instrument_names_it() -> None:
    done = _python(
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if the otel extra were not installed\n"
        "import obelisk\n"
        "try:\n"
        "    obelisk.instrument()\n"
        "except obelisk.ObeliskError as exc:\n"
        "    print(type(exc).__name__, exc.code, exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MissingDependencyError missing_dependency tracing needs")
    assert "pip install 'obelisk[otel]'" in done.stdout


def test_a_call_a_later_revision_keeps_is_the_span_of_the_turn_that_ran_it(
    exporter: InMemorySpanExporter,
) -> None:
    first = {"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"}
    second = {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"}
    model = UsageModel(
        [{"calls": [first]}, {"calls": [first, second]}, {"calls": [], "output": "†state.b"}]
    )
    result = obelisk.Loop(model, [double], mode="lazy").run_sync({"n": 3})
    assert result.output == 12
    spans = exporter.get_finished_spans()
    tools = sorted(by_name(spans, "execute_tool double"), key=lambda t: t.start_time)
    assert len(tools) == 2  # the kept call was not run again, and has no second span
    ran_first, ran_second = tools
    assert attrs(ran_second)["obelisk.call.index"] == 1
    assert [lk.context.span_id for lk in ran_second.links] == [ran_first.context.span_id]


def test_a_streamed_turn_is_a_plan_span_its_calls_under_the_agent(
    exporter: InMemorySpanExporter,
) -> None:
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"}]},
            {"calls": [], "output": "†state.a"},
        ]
    )
    result = obelisk.Loop(model, [double], stream=True).run_sync({"n": 5})
    assert result.output == 10
    spans = exporter.get_finished_spans()
    agent = one(spans, "invoke_agent")
    plan = one(spans, "plan")
    assert parent_of(plan) == agent.context.span_id
    chats = by_name(spans, "chat ScriptedModel")
    assert len(chats) == 2
    assert {parent_of(c) for c in chats} == {plan.context.span_id, agent.context.span_id}
    (tool,) = by_name(spans, "execute_tool double")
    assert parent_of(tool) == agent.context.span_id


def test_tracing_that_breaks_warns_and_the_run_goes_on(exporter: InMemorySpanExporter) -> None:
    from obelisk.interpreter.tracing.spans import call_attribute_hooks

    def broken(record: obelisk.CallRecord) -> dict[str, Any]:
        raise KeyError("labels")

    call_attribute_hooks.append(broken)
    try:
        with pytest.warns(RuntimeWarning, match="tracing failed in CallSpans.committed"):
            result = obelisk.run_sync(PLAN, [double, add], input={"n": 2})
    finally:
        call_attribute_hooks.clear()
    assert result.status == "completed" and result.state["c"] == 12
