"""A journaled run into the viewer's document (docs/viewer.md; the document's shape is
in :mod:`obelisk.viewer.document`).

:func:`journal_document` reads one run of a journal (docs/durable.md), finished or still
running, without taking its lock, so a run in progress goes on undisturbed: its plan,
each call's status, intent (the arguments it ran with), outcome and approval, and the
write log.  A durable loop's run (``Loop(journal=...)``) is read with its turns, each
turn's run (its child run ``<id>.t<turn>``) giving the calls of that turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from obelisk.interpreter.runtime.durable.data import Progress, RunRow, load
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.tools.registry import ToolsLike
from obelisk.viewer.document import call_entry, empty_document, plan_edges
from obelisk.viewer.runs import finish, replayed_state

__all__ = ["journal_document"]


class _Run:
    """What the journal holds of one run: :meth:`Journal.describe`'s view, its row,
    its progress and its write log."""

    def __init__(self, book: Journal, run_id: str) -> None:
        self.run_id = run_id
        self.described = book.describe(run_id)
        self.row: RunRow = book.run_row(run_id)
        self.progress: Progress = book.progress(run_id)
        self.log = [_log_entry(entry) for entry in book.log(run_id)]

    @property
    def revision(self) -> Mapping[str, Any] | None:
        """A durable loop turn's revision ``{"revision", "turn", "calls", "diff"}``."""
        made = self.described.get("revision")
        return made if isinstance(made, Mapping) else None

    def calls(self, prefix: str = "", turn: Any = None) -> list[dict[str, Any]]:
        number = self.revision.get("revision") if self.revision is not None else None
        return [
            _journal_call(info, self.progress, number, prefix, turn)
            for info in self.described["calls"]
        ]


def journal_document(
    path: str, run_id: str | None = None, tools: ToolsLike = None
) -> dict[str, Any]:
    """The document of run ``run_id`` of the journal at ``path`` (its newest run that is
    not part of another when ``None``), as far as it got.  Raises
    :class:`~obelisk.errors.JournalError` for a missing or damaged journal or an unknown
    run."""
    book = Journal(path, create=False)
    try:
        runs = book.runs()
        if run_id is None:
            top = [run for run in runs if run["parent"] is None]
            if not top:
                return empty_document("journal", f"{path}: no runs")
            run_id = str(top[-1]["run_id"])
        run = _Run(book, run_id)
        children = [str(r["run_id"]) for r in runs if r["parent"] == run_id]
        if run.row.kind == "loop":
            turns = [_Run(book, child) for child in children]
            return _loop_document(run, turns, book.turns(run_id), tools)
    finally:
        book.close()
    document = _run_document(run, tools)
    if children:
        document["notes"].append("runs started by this one: " + ", ".join(children))
    return document


def _run_document(run: _Run, tools: ToolsLike) -> dict[str, Any]:
    document = empty_document("journal", f"run {run.run_id}")
    document["status"] = run.described["status"]
    document["calls"] = run.calls()
    document["edges"] = plan_edges(run.row.plan, tools)
    document["log"] = _numbered(run.log)
    document["state"] = replayed_state(document["log"], run.row.state, document["notes"])
    return finish(document)


def _loop_document(
    loop: _Run, turns: Sequence[_Run], records: Sequence[tuple[int, Any, Any]], tools: ToolsLike
) -> dict[str, Any]:
    """A durable loop: each turn's request and answer from the loop's run, each turn's
    calls, revision and writes from its own run."""
    document = empty_document("loop", f"loop run {loop.run_id}")
    document["status"] = loop.described["status"]
    by_turn = {_turn_number(run, n): run for n, run in enumerate(turns, 1)}
    for turn, request, answer in records:
        run = by_turn.get(turn)
        if isinstance(request, Mapping):  # the answer's JSON schema: long, the same each turn
            request = {key: value for key, value in request.items() if key != "schema"}
        document["turns"].append(
            {
                "turn": turn,
                "request": request,
                "answer": answer,
                "errors": [],
                "state_diff": [] if run is None else run.log,
                "revision": None if run is None else run.revision,
            }
        )
    for turn, run in sorted(by_turn.items()):
        document["calls"].extend(run.calls(f"{turn}.", turn))
        document["edges"].extend(plan_edges(run.row.plan, tools, prefix=f"{turn}."))
        document["log"].extend(run.log)
    document["log"] = _numbered(document["log"])
    document["state"] = replayed_state(document["log"], loop.row.state, document["notes"])
    return finish(document)


def _turn_number(run: _Run, position: int) -> int:
    """The turn a loop's child run ran: its revision's turn, else its ``.t<n>`` suffix."""
    if run.revision is not None and isinstance(run.revision.get("turn"), int):
        return int(run.revision["turn"])
    _, _, suffix = run.run_id.rpartition(".t")
    return int(suffix) if suffix.isdigit() else position


def _log_entry(row: Sequence[Any]) -> dict[str, Any]:
    """A write log entry from a journal's ``writes`` row."""
    call, instance, path, method, value, at = row
    return {
        "seq": None,
        "call": call,
        "instance": instance,
        "path": path,
        "method": method,
        "value": load(value, "write"),
        "time": at,
    }


def _numbered(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` numbered 0, 1, ... in order (a journal's log spans sessions)."""
    return [{**entry, "seq": seq} for seq, entry in enumerate(entries)]


def _journal_call(
    info: Mapping[str, Any], progress: Progress, revision: Any, prefix: str, turn: Any
) -> dict[str, Any]:
    """One call of :meth:`Journal.describe`, with its intent's arguments, its outcome's
    output, its approval and ``revision`` (a durable loop turn's plan revision)."""
    index = info["index"]
    intent, outcome = progress.intents.get(index), progress.outcomes.get(index)
    entry = call_entry(
        f"{prefix}{index}",
        index,
        info["tool"],
        id=info["id"],
        status=info["status"],
        reason=info["reason"],
        arguments=intent.arguments if intent is not None else None,
        output=outcome.output if outcome is not None else None,
        error=info["error"],
        attempts=info["attempts"],
        approval=_approval(progress, index),
        revision=revision,
        turn=turn,
        started=info["started"],
        finished=info["finished"],
    )
    if turn is not None:
        entry["label"] = f"turn {turn}: {entry['label']}"
    return entry


def _approval(progress: Progress, index: int) -> dict[str, Any] | None:
    """Call ``index``'s last approval: ``{"id", "decision", "reason"}`` (``decision``
    ``None`` while no one decided), or ``None``."""
    asked = [a for a in progress.approvals.values() if a.call == index]
    if not asked:
        return None
    decision = progress.decisions.get(asked[-1].id)
    return {
        "id": asked[-1].id,
        "decision": None if decision is None else decision.action,
        "reason": None if decision is None else decision.reason,
    }
