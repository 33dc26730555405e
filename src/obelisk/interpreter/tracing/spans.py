"""OpenTelemetry spans of runs and loops, after the GenAI semantic conventions
(docs/observability.md, "The span model").

:class:`SpanInstrument` is the :class:`~obelisk.interpreter.runtime.instrument.Instrument`
that ``obelisk.instrument()`` and ``run(..., tracer_provider=...)`` install.  Each engine
gets a :class:`CallSpans`, an observer of its calls (docs/architecture.md, ``hooks.py``):

* a run is an ``invoke_workflow`` span; a loop an ``invoke_agent`` span whose turns'
  calls are its children (no span per turn run);
* each call is an ``execute_tool {tool}`` span, started when its tool starts and ended
  when the call is over, with a link to the span of every call whose write it read
  (link attribute ``obelisk.link.path``: the path read); a call that never ran
  (skipped, cancelled, left to the loop) is a zero-length span at the moment it
  settled; a call that waits for a person a zero-length span with status UNSET;
* a model request that wrote a plan is a ``plan`` span holding a ``chat {model}``
  span with the token counts; any other request (a correction, a latent call's
  sub-request) is a ``chat {model}`` span alone, under the span current when it was
  made (the call's own, for sub-requests and delegates).

Arguments and results (``gen_ai.tool.call.arguments`` / ``.result``) are recorded
only with ``capture_content=True``: they may hold personal data.
"""

from __future__ import annotations

import functools
import json
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.instrument import RunTrace
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["CallAttributes", "CallSpans", "SpanInstrument", "call_attribute_hooks"]

CallAttributes = Callable[[CallRecord], Mapping[str, AttributeValue] | None]
"""A function that gives more attributes for a call's span (``obelisk.*`` names),
or ``None``; called when the call is over."""

call_attribute_hooks: list[CallAttributes] = []
"""Functions adding attributes to every call's span (:data:`CallAttributes`)."""

_ERROR_STATUSES = frozenset({"failed", "invalid_output", "cancelled", "unknown"})
_LOOP_ERRORS = frozenset({"budget_exceeded", "corrections_exceeded", "stopped"})

# the invoke_agent span whose turn runs are being traced in this context (None in a
# call's task: a run nested in a tool is a workflow of its own)
_agent: ContextVar[AgentSpan | None] = ContextVar("obelisk_agent_span", default=None)


F = TypeVar("F", bound=Callable[..., None])
_failed: set[str] = set()  # the tracing methods that raised once: reported once


def _never_raises(method: F) -> F:
    """``method``, whose errors become a ``RuntimeWarning`` (once per method) instead of
    stopping the run: tracing that breaks must not break what it traces."""

    @functools.wraps(method)
    def guarded(*args: Any) -> None:
        try:
            method(*args)
        except Exception as exc:
            name = method.__qualname__
            if name not in _failed:
                _failed.add(name)
                warnings.warn(
                    f"obelisk: tracing failed in {name}: {type(exc).__name__}: {exc}; the "
                    "run goes on, and later failures of it are not reported",
                    RuntimeWarning,
                    stacklevel=2,
                )

    return guarded  # type: ignore[return-value]


def _ns(seconds: float | None) -> int:
    return time.time_ns() if seconds is None else int(seconds * 1e9)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _link(path: str, writer: int) -> dict[str, AttributeValue]:
    """A link's attributes: the path read, and the index of the call that wrote it."""
    return {"obelisk.link.path": path, "obelisk.link.call": writer}


def _model_names(model: Any) -> tuple[str, str]:
    """``(model name, provider name)`` of a model object, as well as they are known."""
    name = getattr(model, "model", None)
    if not isinstance(name, str):
        name = type(model).__name__
    provider = getattr(model, "provider", None)
    if not isinstance(provider, str):
        provider = "openai" if "openai" in type(model).__module__ else "obelisk"
    return name, provider


class SpanInstrument:
    """Makes the spans of every run and loop it is installed for (see the module
    docstring); ``tracer`` is an OpenTelemetry ``Tracer``."""

    def __init__(self, tracer: trace.Tracer, *, capture_content: bool = False) -> None:
        self.tracer, self.capture_content = tracer, capture_content

    def trace_run(self, engine: Any) -> CallSpans:
        return CallSpans(self, engine)

    @contextmanager
    def agent(self, loop: Any) -> Iterator[AgentSpan]:
        name, provider = _model_names(getattr(loop.model, "inner", loop.model))
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": name,
            "obelisk.loop.mode": str(loop.mode),
            "obelisk.loop.depth": int(loop.depth),
        }
        span = self.tracer.start_span("invoke_agent", attributes=attributes)
        agent = AgentSpan(span)
        token = _agent.set(agent)
        try:
            with trace.use_span(span, end_on_exit=True, set_status_on_exception=False):
                yield agent
        finally:
            _agent.reset(token)

    @_never_raises
    def model_request(
        self,
        model: Any,
        request: Any,
        solution: Any,
        error: BaseException | None,
        times: tuple[float, float],
    ) -> None:
        start, end = _ns(times[0]), _ns(times[1])
        config = getattr(request, "config", {}) or {}
        calls = getattr(solution, "calls", None) or ()
        parent = None
        plan = None
        if config.get("mode") in ("eager", "lazy") and calls:  # it wrote or revised a plan
            plan_attributes: dict[str, AttributeValue] = {
                "gen_ai.operation.name": "plan",
                "obelisk.plan.calls": len(calls),
            }
            if "turn" in config:
                plan_attributes["obelisk.loop.turn"] = int(config["turn"])
            plan = self.tracer.start_span("plan", attributes=plan_attributes, start_time=start)
            parent = trace.set_span_in_context(plan)
        chat = self._chat(model, config, solution, error, parent, start)
        chat.end(end_time=end)
        if plan is not None:
            plan.end(end_time=end)

    def _chat(
        self,
        model: Any,
        config: Mapping[str, Any],
        solution: Any,
        error: BaseException | None,
        parent: otel_context.Context | None,
        start: int,
    ) -> trace.Span:
        name, provider = _model_names(model)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": name,
            "gen_ai.output.type": "json",
        }
        if isinstance(config.get("mode"), str):
            attributes["obelisk.request.mode"] = config["mode"]
        if isinstance(config.get("call"), str):
            attributes["obelisk.request.call"] = config["call"]
        usage = getattr(solution, "usage", None) or {}
        for ours, theirs in (("prompt_tokens", "input"), ("completion_tokens", "output")):
            if type(usage.get(ours)) is int:
                attributes[f"gen_ai.usage.{theirs}_tokens"] = usage[ours]
        span = self.tracer.start_span(
            f"chat {name}",
            context=parent,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        if error is not None:  # its message may quote the answer: only with content
            kind = type(error).__name__
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, str(error) if self.capture_content else kind))
        return span


class AgentSpan:
    """The ``invoke_agent`` span of a running loop; :meth:`finished` takes its result.
    ``calls`` holds the span of each call its turns ran, by ``(tool, started,
    finished)``: a call a later turn keeps (replays) is that span, not a new one."""

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.calls: dict[tuple[str, float | None, float | None], trace.SpanContext] = {}
        self.writers: dict[str, tuple[int, trace.SpanContext]] = {}  # path: its last writer

    def writer_of(self, path: str) -> tuple[int, trace.SpanContext] | None:
        """The call (index in its turn's plan, span) that last wrote ``path`` or a
        value holding it, in an earlier turn."""
        while True:
            found = self.writers.get(path)
            cut = max(path.rfind("."), path.rfind("["))
            if found is not None or cut <= 0:
                return found
            path = path[:cut]

    @_never_raises
    def finished(self, result: Any) -> None:
        """The loop ended with ``result`` (a ``LoopResult``, or ``None``)."""
        if result is None:
            self.span.set_status(Status(StatusCode.ERROR, "the loop stopped"))
            return
        status = str(result.status)
        self.span.set_attribute("obelisk.loop.status", status)
        self.span.set_attribute("obelisk.loop.turns", len(result.turns))
        usage = result.usage
        for ours, theirs in (("prompt_tokens", "input"), ("completion_tokens", "output")):
            if ours in usage:
                self.span.set_attribute(f"gen_ai.usage.{theirs}_tokens", usage[ours])
        if status in _LOOP_ERRORS:
            self.span.set_attribute("error.type", status)
            self.span.set_status(Status(StatusCode.ERROR, status))


class CallSpans(RunTrace):
    """The spans of one engine's run: the run's own (``invoke_workflow``, unless the
    run is a loop's turn) and one per call (see the module docstring)."""

    def __init__(self, instrument: SpanInstrument, engine: Any) -> None:
        self.instrument, self.tracer, self.engine = instrument, instrument.tracer, engine
        self.content = instrument.capture_content
        self.spans: dict[int, trace.Span] = {}  # calls whose span is open
        self.contexts: dict[int, trace.SpanContext] = {}  # every call's span, for links
        self.written: dict[int, frozenset[str]] = {}  # paths each call wrote
        self.parent: otel_context.Context | None = None
        self.run_span: trace.Span | None = None
        self.agent: AgentSpan | None = None  # the loop whose turn this run is

    # -- the run -------------------------------------------------------------------
    @contextmanager
    def running(self) -> Iterator[None]:
        self.agent = _agent.get()
        if self.agent is not None:  # a loop's turn: its calls go under invoke_agent
            self.parent = otel_context.get_current()
            yield
            return
        engine = self.engine
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_workflow",
            "obelisk.plan.calls": len(engine.records),
        }
        if engine.run_id:
            attributes["obelisk.run.id"] = str(engine.run_id)
        span = self.run_span = self.tracer.start_span("invoke_workflow", attributes=attributes)
        with trace.use_span(span, end_on_exit=True, set_status_on_exception=False):
            self.parent = otel_context.get_current()
            try:
                yield
            except BaseException as exc:  # KeyboardInterrupt in a tool, an engine bug
                kind = type(exc).__name__
                span.set_attribute("error.type", kind)
                span.set_status(
                    Status(StatusCode.ERROR, f"{kind}: {exc}" if self.content else kind)
                )
                raise

    @_never_raises
    def finished(self, result: Any) -> None:
        span = self.run_span
        if span is None:
            return
        status = str(result.status)
        span.set_attribute("obelisk.run.status", status)
        if status == "failed":
            span.set_attribute("error.type", "failed")
            span.set_status(Status(StatusCode.ERROR, "a call failed"))

    # -- the calls -----------------------------------------------------------------
    @_never_raises
    def started(self, record: CallRecord, tool: Tool) -> None:
        self.spans[record.index] = self._span(record, record.started)

    @_never_raises
    def invoking(self, index: int) -> None:
        # in the call's own task: what the tool starts (spans of its own, runs,
        # sub-requests, delegates) nests under the call's span
        span = self.spans.get(index)
        if span is not None:
            if self.agent is not None:
                _agent.set(None)  # a run inside the tool is a workflow of its own
            otel_context.attach(trace.set_span_in_context(span))

    @_never_raises
    def committed(self, record: CallRecord, entries: Sequence[WriteEntry]) -> None:
        index = record.index
        paths = [entry.path for entry in entries]
        if paths:
            self.written[index] = frozenset(paths)
        span = self.spans.pop(index, None)
        if span is not None:  # its tool ran: the span started with it
            span.set_attributes(self._closing(record, paths))
        else:  # it never ran a tool: skipped, replayed, rejected, cancelled...
            span = self._settled(record, paths)
            if span is None:
                return
        if record.error is not None or record.status in _ERROR_STATUSES:
            _set_error(span, record, self.content)
        span.end(end_time=_ns(record.finished) if record.finished else None)
        agent = self.agent
        if agent is not None:
            context = self.contexts[index]
            agent.calls[(record.tool, record.started, record.finished)] = context
            for path in paths:
                agent.writers[path] = (index, context)

    def _settled(self, record: CallRecord, paths: list[str]) -> trace.Span | None:
        """The zero-length span of a call that never ran a tool, with every attribute
        from its start, at the moment it settled (skipped: when it was skipped);
        ``None`` for a call a loop kept from an earlier turn (the span of that turn)."""
        index, agent, replay = record.index, self.agent, self.engine.replay
        if agent is not None and index in replay:
            kept = agent.calls.get((record.tool, record.started, record.finished))
            if kept is not None:
                self.contexts[index] = kept
                return None
        attributes = self._closing(record, paths)
        if index in replay:  # a resumed run: it ran before, and is replayed
            attributes["obelisk.call.replayed"] = True
        at = record.started if record.status == "skipped" else record.finished
        return self._span(record, at, attributes)

    @_never_raises
    def awaiting(self, pending: PendingApproval) -> None:
        # not an error: the run pauses here, and goes on once a person decides
        record, at = self.engine.records[pending.call], time.time()
        waiting: dict[str, AttributeValue] = {
            "obelisk.call.status": "awaiting_approval",
            "obelisk.approval.id": pending.id,
        }
        self._span(record, at, waiting).end(end_time=_ns(at))

    # -- a call's span -------------------------------------------------------------
    def _span(
        self,
        record: CallRecord,
        at: float | None,
        more: Mapping[str, AttributeValue] | None = None,
    ) -> trace.Span:
        """Call ``record``'s span, started at ``at`` (seconds; ``None``: now) with its
        attributes and ``more``, linked to the spans of the calls whose writes it read."""
        index = record.index
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": record.tool,
            "gen_ai.tool.call.id": f"#{index}" if record.id is None else str(record.id),
            "gen_ai.tool.type": "function",
            "obelisk.call.index": index,
        }
        if self.content and record.arguments is not None:
            attributes["gen_ai.tool.call.arguments"] = _json(record.arguments)
        if more:
            attributes.update(more)
        span = self.tracer.start_span(
            f"execute_tool {record.tool}",
            context=self.parent,
            attributes=attributes,
            links=self._links(index),
            start_time=_ns(at),
        )
        self.contexts[index] = span.get_span_context()
        return span

    def _links(self, index: int) -> list[Link]:
        """A link to the span of every call whose write call ``index`` read, once per
        (writer, path read), in the order of the reads (earlier turns' writers first)."""
        graph = self.engine.graph
        sources = graph.sources
        if index >= len(sources):
            return []
        written, contexts, reads = self.written, self.contexts, graph.reads[index]
        links: list[Link] = []
        earlier: list[Link] = []
        seen: set[tuple[int, str]] = set()
        for position, writes in enumerate(sources[index]):
            if not writes:
                if self.agent is not None:  # written in an earlier turn?
                    self._earlier(str(reads[position].reference), earlier)
                continue
            for write in writes:
                paths = written.get(write.call)
                # a writer that wrote nothing, or took another alternative, is no source
                if paths is None or str(write.reference) not in paths:
                    continue
                writer, path = write.call, str(reads[position].reference)
                context = contexts.get(writer)
                if context is not None and (writer, path) not in seen:
                    seen.add((writer, path))
                    links.append(Link(context, _link(path, writer)))
        return earlier + links if earlier else links

    def _earlier(self, path: str, links: list[Link]) -> None:
        """Link to the call of an earlier turn that wrote ``path``, if one did."""
        assert self.agent is not None
        earlier = self.agent.writer_of(path)
        if earlier is not None:
            links.append(Link(earlier[1], _link(path, earlier[0])))

    def _closing(self, record: CallRecord, paths: list[str]) -> dict[str, AttributeValue]:
        """What is known once the call is over: status, reason, attempts, writes, the
        alternative taken, the result (when content is captured), labels."""
        status = record.status
        attributes: dict[str, AttributeValue] = {"obelisk.call.status": status}
        if record.reason is not None:
            key = "obelisk.call.skip_reason" if status == "skipped" else "obelisk.call.reason"
            attributes[key] = record.reason
        if record.attempts:
            attributes["obelisk.call.attempts"] = record.attempts
        approval = self.engine.approved.get(record.index)
        if approval is not None:  # a resumed run's call a person decided on
            attributes["obelisk.approval.id"] = approval
        if paths:
            attributes["obelisk.call.paths_written"] = paths
            alternative = self._alternative(record.index, paths[0])
            if alternative is not None:
                attributes["obelisk.call.alternative"] = alternative
        if self.content and status == "succeeded":
            attributes["gen_ai.tool.call.result"] = _json(record.output)
        labels = getattr(record, "labels", None)
        if labels:  # information-flow labels, where the run has them
            attributes["obelisk.call.labels"] = [str(label) for label in labels]
        for hook in call_attribute_hooks:
            attributes.update(hook(record) or {})
        return attributes

    def _alternative(self, index: int, path: str) -> int | None:
        """Which of call ``index``'s alternatives wrote ``path`` (``None``: it has one)."""
        graph = self.engine.graph
        writes = graph.writes[index] if index < len(graph.writes) else ()
        if len(writes) < 2:
            return None
        for write in writes:
            if write.alternatives > 1 and str(write.reference) == path:
                return int(write.alternative)
        return None


def _set_error(span: trace.Span, record: CallRecord, content: bool) -> None:
    """A call that failed (or was cancelled, or is unknown) is an error, described by
    its error's message only when content is captured (a message may quote arguments),
    else by its type; one whose failure the plan's error arm took keeps its type only."""
    error, status = record.error, record.status
    if error is not None and status in _ERROR_STATUSES:
        kind = str(error.get("type", "_OTHER"))
        span.set_attribute("error.type", kind)
        span.set_status(
            Status(StatusCode.ERROR, str(error.get("message", kind)) if content else kind)
        )
    elif error is not None:  # taken by the error arm: the plan handled it
        span.set_attribute("obelisk.call.error_type", str(error.get("type", "_OTHER")))
    elif status in _ERROR_STATUSES:
        span.set_attribute("error.type", status)
        span.set_status(Status(StatusCode.ERROR, record.reason or status))
