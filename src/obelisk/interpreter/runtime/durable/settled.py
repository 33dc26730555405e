"""Resuming a run whose calls all settled, straight from the journal (docs/durable.md).

A run that crashed after its last call committed, before it recorded its end, has
nothing left to run: its result is in the journal.  :func:`settled_result` builds it
there without checking the plan or starting an engine: the state is the write log
applied again in commit order (the log is ordered by session, then seq), and each
call's record comes from its final event, its intent and its outcome.  Any run it
is not sure of (a call not over, in flight or cancelled, approvals, listeners) is
left to the engine: it returns ``None`` then.
"""

from __future__ import annotations

from typing import Any

from obelisk.errors import JournalCorrupted, ObeliskError
from obelisk.grammar.parser import parse_reference
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime.durable.data import RunRow, load, plan_calls
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.runtime.durable.writer import RunWriter
from obelisk.interpreter.runtime.records import CallOutcome, CallRecord, RunResult, run_status
from obelisk.interpreter.runtime.result import run_result
from obelisk.interpreter.runtime.state import State

__all__ = ["settled_result"]

_OVER = frozenset({"succeeded", "failed", "invalid_output", "skipped"})


def settled_result(book: Journal, run_id: str, row: RunRow) -> RunResult | None:
    """The result of run ``run_id`` when every call of it settled (succeeded, failed,
    returned an output that was not written or was skipped) and nothing waits for a
    person, journaled as a resume that replayed every call; ``None`` when the engine
    must resume it.  Takes the run's lock (raises :class:`~obelisk.errors.RunLocked`).
    Raises :class:`~obelisk.errors.JournalCorrupted` when the journal disagrees with
    itself."""
    calls = plan_calls(row.plan)
    final = book.final(run_id)
    if len(final) != len(calls) or any(status not in _OVER for status, _ in final.values()):
        return None
    progress = book.progress(run_id)
    if progress.approvals:
        return None
    records: list[CallRecord] = []
    for index, call in enumerate(calls):
        status, data = final[index]
        outcome, intent = progress.outcomes.get(index), progress.intents.get(index)
        record = CallRecord(index, call.get("_id"), str(call.get("_tool")), status)  # type: ignore[arg-type]  # one of _OVER
        if status == "skipped":
            if outcome is not None or intent is not None:
                return None
            info = data if isinstance(data, dict) else {}
            record.reason, record.untaken = info.get("reason"), bool(info.get("untaken"))
        elif outcome is None or intent is None or outcome.status != status:
            return None  # an outcome the engine must judge (a latent call, an error arm)
        else:
            record.arguments, record.output, record.error = (
                intent.arguments,
                outcome.output,
                outcome.error,
            )
            record.attempts, (record.started, record.finished) = outcome.attempts, outcome.times
            record.warnings = outcome.warnings
        records.append(record)
    token, session = book.lock(run_id)
    ended: str | None = None  # the lock goes back as it was when this fails
    try:
        state = State(row.state, row.input, row.data)
        for call, instance, path, method, value, _at in book.log(run_id):
            try:
                state.write(
                    parse_reference(path),
                    load(value, "write"),
                    method,
                    call=call,
                    instance=instance,
                )
            except ObeliskError as exc:
                raise JournalCorrupted(
                    f"the journal's run {run_id!r} has a write that does not apply: {exc}",
                    book.path,
                ) from None
        status = ended = run_status(records, False)
        writer = RunWriter(book, run_id, session, frozenset(range(len(calls))))
        writer.note("run_resumed", None, {"replayed": len(progress.outcomes), "rerun": []})
        writer.note("run_finished", None, {"status": status})
        writer.close()
    finally:
        book.unlock(run_id, token, ended)
    return run_result(
        status,
        state,
        records,
        owns_state=False,
        pending={},
        outcomes=_outcomes(progress.outcomes),
        unknown={},
        run_id=run_id,
        plan=parse_plan(row.plan),
    )


def _outcomes(outcomes: dict[int, CallOutcome]) -> dict[int, CallOutcome]:
    """The outcomes with their write paths as references (as the engine keeps them)."""
    found: dict[int, CallOutcome] = {}
    for index, outcome in outcomes.items():
        writes: tuple[Any, ...] = tuple((parse_reference(str(p)), v) for p, v in outcome.writes)
        found[index] = CallOutcome(
            outcome.succeeded,
            writes,
            outcome.output,
            outcome.error,
            outcome.attempts,
            outcome.times,
            outcome.invalid_output,
            outcome.warnings,
        )
    return found
