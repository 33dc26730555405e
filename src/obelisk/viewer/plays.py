"""A dry run's report and a loop's transcript into the viewer's document
(docs/viewer.md; the document's shape is in :mod:`obelisk.viewer.document`).

:func:`simulation_document` reads ``obelisk simulate --json`` (``SimulationReport.to_dict()``):
one column per scenario, each call's status in each. :func:`loop_document` reads a loop's
turns (``obelisk loop --transcript`` JSON lines, or the ``turns`` of ``obelisk loop
--json``): each turn's request, answer and revision diff, and the calls each answer made.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from obelisk.interpreter.tools.registry import ToolsLike
from obelisk.viewer.document import call_entry, empty_document, plan_edges
from obelisk.viewer.runs import replayed_state

__all__ = ["loop_document", "simulation_document"]

_LABEL = re.compile(r"#(\d+) (\S+)(?: \((.*)\))?")


def _parse_label(label: str) -> tuple[int, str, str | None] | None:
    """``(index, tool, id)`` of ``#3 tool`` or ``#3 tool (id)``; ``None`` otherwise."""
    found = _LABEL.fullmatch(label)
    if found is None:
        return None
    return int(found.group(1)), found.group(2), found.group(3)


# -- a dry run -----------------------------------------------------------------------------
def simulation_document(
    report: Mapping[str, Any], title: str, plan: Any = None, tools: ToolsLike = None
) -> dict[str, Any]:
    """The document of a dry run's report.  A call's status is the one it has in every
    scenario, or ``varies``; its reason lists each scenario's.  The critical path is the
    first scenario's.  ``plan`` (the plan simulated) gives the graph's edges."""
    document = empty_document("simulation", title)
    scenarios = [_scenario(s) for s in report.get("scenarios", []) if isinstance(s, Mapping)]
    document["scenarios"] = scenarios
    labels: dict[int, tuple[str, str, str | None]] = {}
    for scenario in scenarios:
        for label in scenario["statuses"]:
            parsed = _parse_label(label)
            if parsed is not None:
                labels.setdefault(parsed[0], (label, parsed[1], parsed[2]))
    for index in sorted(labels):
        label, tool, call_id = labels[index]
        document["calls"].append(_simulated_call(index, label, tool, call_id, scenarios))
    if plan is not None:
        document["edges"] = plan_edges(plan, tools)
    else:
        document["notes"].append("no plan given (--plan): the graph shows no edges")
    keys = {call["label"]: call["key"] for call in document["calls"]}
    if scenarios:
        document["critical"] = [keys[c] for c in scenarios[0]["critical_path"] if c in keys]
        document["critical_basis"] = "simulation"
    summary = report.get("summary")
    document["status"] = f"{len(scenarios)} scenarios" if summary is None else None
    if isinstance(summary, Mapping):
        document["status"] = f"{summary.get('explored')} of {summary.get('total')} scenarios"
    return document


def _scenario(data: Mapping[str, Any]) -> dict[str, Any]:
    statuses: dict[str, str] = {}
    reasons: dict[str, Any] = {}
    for label in data.get("ran", []):
        statuses[str(label)] = "succeeded"
    for status, key in (("skipped", "skipped"), ("failed", "failed")):
        for label, reason in dict(data.get(key) or {}).items():
            statuses[str(label)], reasons[str(label)] = status, reason
    for approval in data.get("approvals") or []:
        label = approval.get("label") if isinstance(approval, Mapping) else approval
        if isinstance(label, str) and label in statuses:
            reasons.setdefault(label, "needs approval")
    return {
        "scenario": data.get("scenario"),
        "arms": data.get("arms") or {},
        "statuses": statuses,
        "reasons": reasons,
        "critical_path": list(data.get("critical_path") or []),
        "makespan": data.get("makespan"),
        "peak_concurrency": data.get("peak_concurrency"),
        "cost": data.get("cost"),
        "approvals": data.get("approvals") or [],
        "state": data.get("state"),
    }


def _simulated_call(
    index: int, label: str, tool: str, call_id: str | None, scenarios: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    seen = [s["statuses"].get(label, "not run") for s in scenarios]
    status = seen[0] if len(set(seen)) == 1 else "varies"
    reasons = [
        f"scenario {s['scenario']}: {s['reasons'][label]}"
        for s in scenarios
        if label in s["reasons"]
    ]
    return call_entry(
        str(index),
        index,
        tool,
        id=call_id,
        label=label,
        status=status,
        reason="; ".join(reasons) if reasons else None,
    )


# -- a loop's turns ------------------------------------------------------------------------
def loop_document(
    records: Sequence[Mapping[str, Any]],
    title: str,
    tools: ToolsLike = None,
    revisions: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The document of a loop's turns: ``records`` are transcript lines (``{"turn",
    "request", "solution", "raw", "state_diff", "errors", "revision"}``; the
    ``{"subrequest"}`` lines are left out) or ``obelisk loop --json``'s turns, whose
    revisions come in ``revisions``.  Call ``i`` of turn ``t`` has key ``"t.i"``."""
    document = empty_document("loop", title)
    made = {r.get("turn"): r for r in revisions if isinstance(r, Mapping)}
    turns = [r for r in records if isinstance(r, Mapping) and "turn" in r]
    for record in turns:
        revision = record.get("revision") or made.get(record.get("turn"))
        _take_turn(document, record, revision if isinstance(revision, Mapping) else None, tools)
    document["state"] = replayed_state(document["log"], None, document["notes"])
    document["notes"].append("a loop's transcript has no call times: the timeline is empty")
    last = turns[-1].get("solution") if turns else None
    if isinstance(last, Mapping) and last.get("output") is not None:
        document["status"] = "completed"
    return document


def _take_turn(
    document: dict[str, Any],
    record: Mapping[str, Any],
    revision: Mapping[str, Any] | None,
    tools: ToolsLike,
) -> None:
    """Add one turn, the writes it made and the calls of its answer to the document."""
    turn, solution = record.get("turn"), record.get("solution")
    entry = _turn_entry(record, revision)
    document["turns"].append(entry)
    document["log"].extend(entry["state_diff"])
    calls = solution.get("calls") if isinstance(solution, Mapping) else None
    if not isinstance(calls, list):
        return
    number = revision.get("revision") if revision is not None else None
    for index, call in enumerate(calls):
        if isinstance(call, Mapping):
            document["calls"].append(
                _turn_call(turn, index, call, entry["state_diff"], entry["errors"], number)
            )
    document["edges"].extend(plan_edges(calls, tools, prefix=f"{turn}."))


def _turn_entry(record: Mapping[str, Any], revision: Mapping[str, Any] | None) -> dict[str, Any]:
    """The document's ``turns`` entry of a transcript record."""
    request = record.get("request")
    if isinstance(request, Mapping):  # the answer's JSON schema: long, and the same each turn
        request = {key: value for key, value in request.items() if key != "schema"}
    solution = record.get("solution")
    return {
        "turn": record.get("turn"),
        "request": request,
        "answer": solution if solution is not None else {"raw": record.get("raw")},
        "errors": [e for e in record.get("errors") or [] if isinstance(e, Mapping)],
        "state_diff": [dict(w) for w in record.get("state_diff") or [] if isinstance(w, Mapping)],
        "revision": revision,
    }


def _turn_call(
    turn: Any,
    index: int,
    call: Mapping[str, Any],
    writes: Sequence[Mapping[str, Any]],
    errors: Sequence[Mapping[str, Any]],
    revision: Any,
) -> dict[str, Any]:
    """Call ``index`` of a turn's answer: ``failed`` with its error record,
    ``succeeded`` when it wrote, else ``not run``."""
    entry = call_entry(
        f"{turn}.{index}",
        index,
        call.get("_tool"),
        id=call.get("_id"),
        turn=turn,
        revision=revision,
        arguments={k: v for k, v in call.items() if not str(k).startswith("_")},
    )
    entry["label"] = f"turn {turn}: {entry['label']}"
    own = f"#{index} {call.get('_tool')}"
    record = next((e for e in errors if str(e.get("call", "")).startswith(own)), None)
    wrote = [w for w in writes if w.get("call") == index]
    if record is not None:
        entry["status"], entry["error"] = "failed", record.get("error")
        entry["reason"] = record.get("reason")
    elif wrote:
        entry["status"], entry["output"] = "succeeded", wrote[0].get("value")
    else:
        entry["status"] = "not run"
    if wrote:
        entry["finished"] = wrote[-1].get("time")
    return entry
