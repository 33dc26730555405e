"""``obelisk explain RUN_OR_TRACE PATH``: where a value came from, with the labels of
each step (docs/security.md, "Provenance").

``RUN_OR_TRACE`` is a durable run's id (with ``--journal FILE``) or a ``--trace`` file
of JSON-lines events (a run with labels: its ``call_policy`` events say what each
call read).  Prints the chain, or with ``--json`` the list of origins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from obelisk.cli.io import JournalOption, fail, out
from obelisk.errors import ObeliskError
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime.durable.data import label, plan_calls
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.tools.provenance import describe_chain, plan_reads, trace_back

__all__ = ["explain_command"]

Sources = tuple[
    list[tuple[int | None, str, str]],  # writes: (call, path, method)
    dict[int, list[str]],  # reads
    dict[int, str],  # names
    dict[int, dict[str, Any]],  # labels
]


def _from_journal(journal: str, run_id: str) -> Sources:
    """What the journal keeps of run ``run_id``."""
    try:
        with Journal(journal, create=False) as book:
            row = book.run_row(run_id)
            log = book.log(run_id)
            final = book.final(run_id)
    except ObeliskError as exc:
        fail(str(exc))
    writes = [(call, path, method) for call, _instance, path, method, _value, _at in log]
    calls = plan_calls(row.plan)
    names = {i: label(i, c.get("_tool"), c.get("_id")) for i, c in enumerate(calls)}
    labels: dict[int, dict[str, Any]] = {}
    for call, (_status, data) in final.items():
        if isinstance(data, dict) and isinstance(data.get("labels"), dict):
            labels[call] = data["labels"]
    return writes, plan_reads(parse_plan(row.plan)), names, labels


def _from_trace(trace: Path) -> Sources:
    """What a ``--trace`` file of JSON-lines events says."""
    try:
        lines = trace.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        fail(f"cannot read trace {str(trace)!r}: {exc.strerror or exc}")
    writes: list[tuple[int | None, str, str]] = []
    reads: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    labels: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line) if line.strip() else {}
        except json.JSONDecodeError as exc:
            fail(f"trace {str(trace)!r} line {number} is not JSON: {exc.msg}")
        kind = event.get("event")
        if kind == "state_written":
            writes.append((event.get("call"), event["path"], event.get("method", "set")))
        elif kind == "call_policy":
            call = event["call"]
            names[call] = f"#{call} {event['tool']}"
            reads[call] = list(event.get("reads", ()))
            labels[call] = {**event.get("labels", {}), "_result": event.get("result")}
        elif kind in ("call_started", "call_succeeded") and "call" in event:
            names.setdefault(event["call"], f"#{event['call']} {event.get('tool')}")
    return writes, reads, names, labels


def explain_command(
    target: Annotated[str, typer.Argument(metavar="RUN_OR_TRACE", help="A run id or a trace.")],
    path: Annotated[str, typer.Argument(metavar="PATH", help="The value, e.g. '†state.paid'.")],
    journal: JournalOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print where the value at PATH came from: the call that wrote it, what that call
    read, and so on back to the inputs, each with its label (trusted or untrusted, and
    from where).  RUN_OR_TRACE is a durable run's id (with --journal FILE) or a --trace
    file of a run with labels.  Exits 2 when neither can be read."""
    sources = _from_trace(Path(target)) if journal is None else _from_journal(journal, target)
    try:
        origins = trace_back(path, *sources)
    except ObeliskError as exc:
        fail(str(exc))
    if as_json:
        out.print_json(json.dumps([origin.to_dict() for origin in origins]))
    else:
        out.print(describe_chain(path, origins), markup=False, highlight=False)
