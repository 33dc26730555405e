"""Durable runs: run a plan with a journal, resume it by its id (docs/durable.md).

:func:`run_journaled` records a new run in a
:class:`~obelisk.interpreter.runtime.durable.journal.Journal` and runs it, journaling
each call's intent before its tool runs and its outcome after. :func:`resume_journaled`
continues a run from the journal after a crash, a pause for approvals or a stop: every
call with an outcome is replayed from it, never run again; a call that was in flight (an
intent, no outcome) runs again only when its tool is ``pure`` or ``idempotent``, and is
otherwise ``unknown`` until a person resolves it. A run is pinned to its plan and its
tools' schemas: resuming it with tools that changed raises
:class:`~obelisk.errors.RunMismatch`."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.errors import (
    JournalCorrupted,
    JournalError,
    ObeliskError,
    RunMismatch,
    UsageError,
)
from obelisk.grammar import Reference
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.collector import gc_paused
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.approvals import (
    ApprovalIds,
    Decision,
    Resolution,
    check_decisions,
)
from obelisk.interpreter.runtime.durable.data import (
    FINISHED,
    Progress,
    RunRow,
    run_settings,
    settings_of,
)
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.runtime.durable.pinning import changes, pins, sha
from obelisk.interpreter.runtime.durable.settled import settled_result
from obelisk.interpreter.runtime.durable.unknown import chosen_resolutions, resolved_outcome
from obelisk.interpreter.runtime.durable.writer import RunWriter
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.events import Listener
from obelisk.interpreter.runtime.hooks import Hooks
from obelisk.interpreter.runtime.outcome import error_record
from obelisk.interpreter.runtime.records import (
    CallOutcome,
    RunResult,
    UnknownCall,
)
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.retry import Retry, check_retryable, retried
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.limits import Limits

__all__ = [
    "DurableOrigin",
    "JournalArgument",
    "new_run_id",
    "opened",
    "replay_outcomes",
    "resume_journaled",
    "run_journaled",
]

JournalArgument = Journal | str | os.PathLike[str]
"""What ``journal=`` takes: a :class:`Journal`, or the path of its file."""

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


@dataclass(frozen=True)
class DurableOrigin:
    """What a durable run's result remembers, so that ``obelisk.resume(result, ...)``
    goes on through the journal: its file, the run's id, the tools, the context
    object and the listeners it ran with, and the check's warnings."""

    journal: str
    run_id: str
    registry: Registry
    context: Any = None
    listeners: tuple[Listener, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


def new_run_id() -> str:
    """A fresh run id: 16 random hex digits (``os.urandom``, as ``uuid.uuid4`` reads,
    without building a UUID: a fifth of the time)."""
    return os.urandom(8).hex()


@contextlib.contextmanager
def opened(journal: Any) -> Iterator[Journal]:
    """The :class:`Journal` ``journal`` names: itself, or the file at a path or the
    database at a ``postgresql://`` URL (opened,
    and closed afterwards).  Raises :class:`~obelisk.errors.UsageError` for anything else."""
    if isinstance(journal, Journal):
        yield journal
        return
    if not isinstance(journal, (str, os.PathLike)) or not os.fspath(journal):
        raise UsageError(
            "journal must be a file path, a postgresql:// URL or an obelisk.Journal, "
            f"got {journal!r}"
        )
    book = Journal(journal)
    try:
        yield book
    finally:
        book.close()


async def run_journaled(
    checked: CheckResult,
    registry: Registry,
    *,
    input: Any,
    state: Any,
    data: Any,
    journal: Any,
    run_id: str | None,
    settings: RunSettings,
    listeners: tuple[Listener, ...],
    replaces: str | None = None,
) -> RunResult:
    """Run a checked plan as a durable run in ``journal`` (see :func:`obelisk.run`),
    with ``settings`` (kept in the journal, but its ``context``) and ``listeners``;
    ``replaces`` names a run of the journal that this one replaces (it must be over
    or aborted; both record the link).

    Raises :class:`~obelisk.errors.JournalError` when a run ``run_id`` exists, the
    input, state or data are not JSON data, or ``replaces`` cannot be replaced, and
    :class:`~obelisk.errors.UsageError` for a bad ``run_id``."""
    assert checked.plan is not None and checked.graph is not None
    if run_id is None:
        run_id = new_run_id()
    elif not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise UsageError(
            "run_id must be 1 to 128 letters, digits and . _ : - (starting with a letter "
            f"or a digit), got {run_id!r}"
        )
    plan, graph = checked.plan, checked.graph
    plan_data = plan.to_data()
    pinned, fingerprint = pins(plan_data, plan, registry)
    with opened(journal) as book:
        token = book.create_run(
            run_id,
            kind="run",
            calls=len(plan.calls),
            fingerprint=fingerprint,
            pinned=pinned,
            plan=plan_data,
            input=input,
            state=state,
            data=data,
            settings=run_settings(settings),
            replaces=replaces,
        )
        try:
            writer = RunWriter(book, run_id)
            with gc_paused():
                engine = Engine(
                    plan,
                    graph,
                    registry,
                    State(state, input, data),
                    settings,
                    Resumption(run_id),
                    Hooks.of(listeners, writer),
                    owns_state=True,
                )
        except BaseException:
            book.unlock(run_id, token, "interrupted")
            raise
        result = await _drive(book, run_id, token, engine, writer)
        context = settings.context
        origin = DurableOrigin(
            book.location, run_id, registry, context, listeners, checked.diagnostics
        )
        return dataclasses.replace(
            result, diagnostics=checked.diagnostics, origin=origin, journal=book.path
        )


async def _drive(
    book: Journal, run_id: str, token: str, engine: Engine, writer: RunWriter
) -> RunResult:
    """Run ``engine``, then journal how it ended and give the lock back.  A run that
    raises (KeyboardInterrupt, a journal that cannot be written) is left
    ``interrupted``: resumable."""
    try:
        result = await engine.run()
    except BaseException as exc:
        with contextlib.suppress(ObeliskError):  # best effort: the journal may be what failed
            writer.note("run_interrupted", None, {"error": error_record(exc)})
            writer.close()
        with contextlib.suppress(ObeliskError):
            book.unlock(run_id, token, "interrupted")
        raise
    try:
        over = result.status in FINISHED
        writer.note("run_finished" if over else "run_paused", None, {"status": result.status})
        writer.close()
    finally:
        with contextlib.suppress(ObeliskError):
            book.unlock(run_id, token, result.status)
    return result


def replay_outcomes(plan: Plan, progress: Progress) -> dict[int, CallOutcome]:
    """The journaled outcomes, their write paths resolved against the plan's calls."""
    replay: dict[int, CallOutcome] = {}
    count = len(plan.calls)
    for index, intent in progress.intents.items():
        if not 0 <= index < count or plan.calls[index].tool != intent.tool:
            raise JournalCorrupted(f"the journal has an intent of call {index} the plan lacks")
    for index, outcome in progress.outcomes.items():
        if not 0 <= index < count:
            raise JournalCorrupted(f"the journal has an outcome of call {index} the plan lacks")
        targets = {
            str(ref): ref for alternative in plan.calls[index].alternatives for ref in alternative
        }
        writes: list[tuple[Reference, Any]] = []
        for path, value in outcome.writes:
            target = targets.get(path) if isinstance(path, str) else None
            if target is None:
                raise JournalCorrupted(
                    f"the journal's outcome of call {index} writes {path!r}, which that call "
                    "cannot write"
                )
            writes.append((target, value))
        replay[index] = dataclasses.replace(outcome, writes=tuple(writes))
    return replay


async def resume_journaled(
    run_id: str,
    decisions: Mapping[str, Decision] | None,
    *,
    journal: Any,
    tools: ToolsLike,
    unknown: Mapping[Any, Resolution] | None = None,
    context: Any = None,
    listeners: tuple[Listener, ...] = (),
    retry: Retry = None,
) -> RunResult:
    """Continue durable run ``run_id`` from ``journal`` (see :func:`obelisk.resume`);
    with ``retry="failed"``, a ``failed`` run's failed and cancelled calls, and those
    skipped because of them, run again (:func:`_retry_failed`).

    Raises :class:`~obelisk.errors.JournalError` (no such run, a run that is over,
    aborted or replaced),
    :class:`~obelisk.errors.JournalCorrupted`, :class:`~obelisk.errors.RunMismatch`
    (tools changed), :class:`~obelisk.errors.RunLocked` (another process runs it),
    :class:`~obelisk.errors.ApprovalError` (a bad decision or resolution: nothing is
    recorded) and :class:`~obelisk.errors.UsageError` (no tools; ``retry="failed"`` for
    a run that did not fail)."""
    if not isinstance(run_id, str) or not run_id:
        raise UsageError(f"run_id must be a run's id, got {run_id!r}")
    if retry is not None and (decisions or unknown):
        raise UsageError(
            f"retry={retry!r} takes no decisions or unknown=: a failed run waits for neither"
        )
    with opened(journal) as book:
        row, registry = _resumable(book, run_id, tools, retry)
        settings = settings_of(row.settings, context)
        _check_pinned(book, row, registry)
        if not (decisions or unknown or listeners or retry):  # all settled: no engine
            settled = settled_result(book, run_id, row)
            if settled is not None:
                origin = DurableOrigin(book.location, run_id, registry, context, listeners)
                return dataclasses.replace(settled, origin=origin, journal=book.path)
        limits = settings.limits
        checked = check(
            row.plan, registry, row.input, row.state, data=row.data, limits=limits, policy=None
        )  # as the run was checked: its policies decide as it runs
        checked.raise_for_errors()
        token, session = book.lock(run_id, row.status)  # as _resumable read it
        try:
            person = _Person(decisions or {}, unknown or {}, listeners, retry)
            engine, writer = _prepare(book, session, row, checked, registry, settings, person)
        except BaseException:
            book.unlock(run_id, token)
            raise
        result = await _drive(book, run_id, token, engine, writer)
        origin = DurableOrigin(
            book.location, run_id, registry, context, listeners, checked.diagnostics
        )
        return dataclasses.replace(
            result, diagnostics=checked.diagnostics, origin=origin, journal=book.path
        )


def _resumable(
    book: Journal, run_id: str, tools: Any, retry: Retry = None
) -> tuple[RunRow, Registry]:
    """The journal's row of plain run ``run_id``, not over (failed, for ``retry``),
    and the tools to resume it with.  Raises :class:`~obelisk.errors.JournalError`
    (no such run, a loop or turn run, a run that is over, aborted or replaced) and
    :class:`~obelisk.errors.UsageError` (no tools, a ``retry`` of a run that did not
    fail)."""
    book.check()
    row = book.run_row(run_id)
    if row.kind != "run":
        loop = row.parent if row.kind == "turn" and row.parent else run_id
        raise JournalError(
            f"{run_id!r} is a {row.kind} run; resume its loop with "
            f"Loop(..., journal=...).resume({loop!r})",
            book.path,
        )
    _check_alive(book, row)
    if retry is not None:
        check_retryable(run_id, row.status)
    elif row.status in FINISHED:
        again = (
            f"; run its failed calls again with retry='failed' (obelisk resume {run_id} "
            f"--journal {book.path} --retry-failed)"
            if row.status == "failed"
            else ""
        )
        raise JournalError(
            f"run {run_id!r} is over ({row.status}); nothing to resume "
            f"(obelisk runs show {run_id} --journal {book.path}){again}",
            book.path,
        )
    if tools is None:
        raise UsageError(
            f"resuming run {run_id!r} needs its tools: pass tools= (the tools it started with)"
        )
    return row, Registry.coerce(tools)


def _check_alive(book: Journal, row: RunRow) -> None:
    """Raise :class:`~obelisk.errors.JournalError` for a run that is aborted (naming
    the reason) or replaced by another (naming it): such a run is never resumed."""
    run_id, shown = row.run_id, f"(obelisk runs show {row.run_id} --journal {book.path})"
    if row.status == "aborted":
        then = f"; run {row.replaced_by!r} replaces it" if row.replaced_by else ""
        raise JournalError(
            f"run {run_id!r} was aborted ({row.reason}): an aborted run is never resumed"
            f"{then} {shown}",
            book.path,
        )
    if row.replaced_by is not None:
        raise JournalError(
            f"run {run_id!r} was replaced by run {row.replaced_by!r}: it is never resumed {shown}",
            book.path,
        )


def _check_pinned(book: Journal, row: RunRow, registry: Registry) -> None:
    """Raises :class:`~obelisk.errors.JournalCorrupted` when the run's plan does not
    match its fingerprint, :class:`~obelisk.errors.RunMismatch` when its tools changed."""
    run_id = row.run_id
    if sha(row.pinned) != row.fingerprint or row.pinned.get("plan") != sha(row.plan):
        raise JournalCorrupted(
            f"run {run_id!r} in {book.path!r}: its plan does not match its fingerprint",
            book.path,
        )
    changed = changes(row.pinned, registry)
    if changed:
        raise RunMismatch(
            f"run {run_id!r} is pinned to the plan and tool schemas it started with, "
            f"and these changed: {'; '.join(changed)}; nothing was run",
            changed,
            book.path,
        )


@dataclass(frozen=True)
class _Person:
    """What a resume brings from people: ``decisions`` on paused calls, resolutions of
    ``unknown`` calls, the ``listeners`` that watch the run, and ``retry``."""

    decisions: Mapping[str, Decision]
    unknown: Mapping[Any, Resolution]
    listeners: tuple[Listener, ...]
    retry: Retry = None


def _prepare(
    book: Journal,
    session: int,
    row: RunRow,
    checked: CheckResult,
    registry: Registry,
    settings: RunSettings,
    person: _Person,
) -> tuple[Engine, RunWriter]:
    """Read what the run did, check the person's decisions and resolutions, record
    them, and build the engine that replays and goes on (the lock is held)."""
    assert checked.plan is not None and checked.graph is not None
    run_id, plan = row.run_id, checked.plan
    retried = _retry_failed(book, run_id, session) if person.retry == "failed" else []
    progress = book.progress(run_id)
    replay = replay_outcomes(plan, progress)
    committed = frozenset(replay)  # journaled by earlier sessions (writes and events too)
    held, rerun = _in_flight(plan, registry, progress, run_id)
    resolved = _resolved(plan, registry, person.unknown, held, settings.limits)
    undecided = tuple(a for a in progress.approvals.values() if a.id not in progress.decisions)
    given = check_decisions(undecided, person.decisions, registry, run_id)
    stored = check_decisions(
        tuple(progress.approvals.values()), progress.decisions, registry, run_id
    )  # edits recorded without tools are checked now
    # everything is checked: record the person's word before anything runs
    for approval_id, decision in given.items():
        book.decide(approval_id, decision, run_id=run_id, tools=registry)
    for index, outcome in resolved.items():
        if outcome is None:
            book.record(run_id, "unknown_retried", index, None)
        else:
            book.record_outcome(run_id, index, outcome, "unknown_resolved")
            replay[index] = outcome
        del held[index]
    writer = RunWriter(book, run_id, session, committed)
    resumed: dict[str, Any] = {"replayed": len(replay), "rerun": rerun}
    if retried:
        resumed["retried"] = retried
    writer.note("run_resumed", None, resumed)
    for index in held:
        writer.note("call_unknown", index, None)
    known = {(a.call, a.hash): a.id for a in progress.approvals.values()}
    resumption = Resumption(run_id, {**stored, **given}, replay, held, ApprovalIds(run_id, known))
    with gc_paused():
        engine = Engine(
            plan,
            checked.graph,
            registry,
            State(row.state, row.input, row.data),
            settings,
            resumption,
            Hooks.of(person.listeners, writer),
            owns_state=True,
        )
    return engine, writer


def _retry_failed(book: Journal, run_id: str, session: int) -> list[int]:
    """``retry="failed"`` of run ``run_id``, before session ``session`` runs: the calls
    that run again (:func:`~obelisk.interpreter.runtime.retry.retried`, by each call's
    final event), whose intents and outcomes move to the journal's ``retries`` so that
    they run again and the retry's own outcomes win (the lock is held)."""
    again = {}
    for index, (status, data) in book.final(run_id).items():
        if retried(status, data.get("error") if isinstance(data, dict) else None):
            again[index] = status
    book.supersede(run_id, session, again)
    return sorted(again)


def _in_flight(
    plan: Plan, registry: Registry, progress: Progress, run_id: str
) -> tuple[dict[int, UnknownCall], list[int]]:
    """The calls with an intent and no outcome (in flight when the run stopped): those
    held ``unknown`` for a person, and those run again (their tools are ``pure`` or
    ``idempotent``)."""
    held: dict[int, UnknownCall] = {}
    rerun: list[int] = []
    for index in sorted(progress.intents):
        if index in progress.outcomes:
            continue
        call, intent = plan.calls[index], progress.intents[index]
        tool = registry[call.tool]
        if tool.pure or tool.idempotent:
            rerun.append(index)  # in flight, and safe to run again
            continue
        key = intent.key(run_id, index)
        held[index] = UnknownCall(index, call.label, call.tool, intent.arguments, key, intent.time)
    return held, rerun


def _resolved(
    plan: Plan,
    registry: Registry,
    unknown: Mapping[Any, Resolution],
    held: Mapping[int, UnknownCall],
    limits: Limits,
) -> dict[int, CallOutcome | None]:
    """The outcomes people gave calls held unknown (``None``: run it again).  Raises
    :class:`~obelisk.errors.ApprovalError` for a bad resolution."""
    resolved: dict[int, CallOutcome | None] = {}
    for index, resolution in chosen_resolutions(unknown, plan, held).items():
        call = plan.calls[index]
        resolved[index] = resolved_outcome(
            call, registry[call.tool], resolution, limits, held[index].started
        )
    return resolved
