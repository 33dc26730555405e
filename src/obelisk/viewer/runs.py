"""A run's trace into the viewer's document (docs/viewer.md; the document's shape is
in :mod:`obelisk.viewer.document`), and what every kind of run shares: the state
replayed from the write log, the critical path.

:func:`trace_document` reads the events ``obelisk run --trace`` writes (and
``on_event`` listeners see).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from obelisk.errors import ObeliskError
from obelisk.grammar.parser import parse_reference
from obelisk.interpreter.runtime.durable.data import plan_calls
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import ToolsLike
from obelisk.viewer.document import call_entry, critical_path, empty_document, plan_edges

__all__ = ["finish", "replayed_state", "trace_document"]

_ENDS = {
    "call_succeeded": "succeeded",
    "call_failed": "failed",
    "call_invalid_output": "invalid_output",
    "call_skipped": "skipped",
    "call_cancelled": "cancelled",
    "call_pending_latent": "pending_latent",
    "call_awaiting_approval": "awaiting_approval",
}
_EVENT_FIELDS = {  # event key -> call entry field
    "arguments": "arguments",
    "output": "output",
    "error": "error",
    "reason": "reason",
    "labels": "labels",
    "revision": "revision",
    "attempts": "attempts",
}


def replayed_state(
    entries: Iterable[Mapping[str, Any]], start: Any = None, notes: list[str] | None = None
) -> Any:
    """The state after ``entries`` (write log entries ``{"call", "instance", "path",
    "method", "value"}``) applied in order to ``start``; a write that does not apply is
    left out, with a note."""
    state = State(start if isinstance(start, dict) else None)
    for entry in entries:
        try:
            state.write(
                parse_reference(str(entry["path"])),
                entry.get("value"),
                entry.get("method", "set"),
                call=entry.get("call"),
                instance=entry.get("instance"),
            )
        except (ObeliskError, KeyError, TypeError, ValueError) as exc:
            if notes is not None:
                notes.append(f"write {entry.get('seq')} to {entry.get('path')} not shown: {exc}")
    return state.peek()


def finish(document: dict[str, Any]) -> dict[str, Any]:
    """Fill the document's critical path from its calls and edges; returns it."""
    document["critical"], document["critical_basis"] = critical_path(
        document["calls"], document["edges"]
    )
    return document


# -- a JSON-lines trace -----------------------------------------------------------------------
def trace_document(
    events: Sequence[Mapping[str, Any]],
    title: str,
    plan: Any = None,
    tools: ToolsLike = None,
) -> dict[str, Any]:
    """The document of a run's trace events (``{"event", ..., "time"}`` each, in the
    order written).  ``plan`` (the plan that ran) gives the graph's edges and the calls
    that never started; without it the graph has no edges and the critical path is an
    estimate from the times."""
    document = empty_document("trace", title)
    calls: dict[int, dict[str, Any]] = {}
    if plan is not None:
        _plan_calls(plan, calls)
        document["edges"] = plan_edges(plan, tools)
    else:
        document["notes"].append("no plan given (--plan): the graph shows no edges")
    for event in events:
        _take_event(document, calls, event)
    document["calls"] = [calls[index] for index in sorted(calls)]
    document["state"] = replayed_state(document["log"], None, document["notes"])
    return finish(document)


def _plan_calls(plan: Any, calls: dict[int, dict[str, Any]]) -> None:
    try:
        objects = plan_calls(plan)
    except ObeliskError:
        return
    for index, call in enumerate(objects):
        calls[index] = call_entry(str(index), index, call.get("_tool"), id=call.get("_id"))


def _take_event(
    document: dict[str, Any], calls: dict[int, dict[str, Any]], event: Mapping[str, Any]
) -> None:
    """Fold one trace event into the document."""
    name = event.get("event")
    if name == "state_written":
        document["log"].append({k: v for k, v in event.items() if k != "event"})
    elif name == "run_finished":
        document["status"] = event.get("status")
    elif isinstance(event.get("call"), int) and not isinstance(event.get("call"), bool):
        index = event["call"]
        entry = calls.get(index)
        if entry is None:
            entry = calls[index] = call_entry(str(index), index, event.get("tool"))
        _call_event(entry, str(name), event)


def _call_event(entry: dict[str, Any], name: str, event: Mapping[str, Any]) -> None:
    """Fold one event of a call into its entry: its times, status and fields."""
    at = event.get("time")
    if name == "call_started":
        entry["started"], entry["status"] = at, "running"
        entry["attempts"] = max(entry["attempts"], 1)
    elif name in _ENDS:
        entry["status"] = _ENDS[name]
        if entry["started"] is not None:  # a skipped call never started: no times
            entry["finished"] = at
    elif name == "call_ready" and entry["status"] == "waiting":
        entry["status"] = "ready"
    entry.update({field: event[key] for key, field in _EVENT_FIELDS.items() if key in event})
    if "approval" in event:
        entry["approval"] = {"id": event["approval"], "decision": None, "reason": None}
