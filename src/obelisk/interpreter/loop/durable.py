"""Durable loops: a loop whose turns are kept in a run journal (docs/durable.md).

A durable loop is a run of kind ``loop`` in the journal; each turn's request and
the model's answer are journaled as soon as the answer arrives (before its calls
run), and each turn's calls are a durable run of their own, of kind ``turn``, id
``<loop id>.t<n>`` (its intents, outcomes, writes and approvals; its settings keep
``"revision"``, the revision of the plan these calls are, with its diff).  Resuming the
loop by its id replays the journaled turns: their answers come from the journal
(the model is not asked again) and their calls' outcomes too (no tool runs again);
a call in flight at the crash runs again when its tool is ``pure`` or
``idempotent``, and is otherwise reported to the model as ``unknown``.  Then the
loop goes on asking the model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from obelisk.errors import JournalCorrupted, JournalError, RunMismatch, SolutionError
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.runtime.approvals import check_decisions
from obelisk.interpreter.runtime.durable.data import FINISHED, plan_calls
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.runtime.durable.pinning import changes, pins, sha, tool_pins
from obelisk.interpreter.runtime.durable.runs import new_run_id, replay_outcomes
from obelisk.interpreter.runtime.durable.writer import RunWriter
from obelisk.interpreter.runtime.records import CallOutcome, UnknownCall
from obelisk.interpreter.tools.registry import Registry

__all__ = ["LoopJournal", "TurnRun"]


class TurnRun:
    """What a turn's engine needs from the journal: the run id of the turn's calls,
    the ``recorder`` that journals them, the outcomes to ``replay``, the calls held
    ``unknown``, the ``approvals`` people decided, the ids the journal gave its
    paused calls (``approval_ids``, by call index and argument hash), the lock
    ``token``, and the ``status`` its run ended with (``interrupted`` until it
    returns)."""

    def __init__(
        self,
        run_id: str,
        token: str,
        recorder: RunWriter,
        replay: dict[int, CallOutcome],
        unknown: dict[int, UnknownCall],
        approvals: dict[str, Any],
        approval_ids: dict[tuple[int, str], str] | None = None,
    ) -> None:
        self.run_id, self.token, self.recorder = run_id, token, recorder
        self.replay, self.unknown, self.approvals = replay, unknown, approvals
        self.approval_ids = approval_ids or {}
        self.status = "interrupted"  # until the turn's run returns


class LoopJournal:
    """A durable loop's journal: ``book`` (an open :class:`Journal`), the loop's
    ``run_id``, the lock ``token`` and the ``answers`` journaled so far (turn number ->
    the answer's data), which the session replays instead of asking the model."""

    def __init__(
        self, book: Journal, run_id: str, token: str, answers: dict[int, Any] | None = None
    ) -> None:
        self.book, self.run_id, self.token = book, run_id, token
        self.answers = answers or {}

    # -- starting and resuming -----------------------------------------------------------
    @classmethod
    def start(
        cls,
        book: Journal,
        run_id: str | None,
        registry: Registry,
        settings: Mapping[str, Any],
        input: Any,
        state: Any,
        data: Any,
    ) -> LoopJournal:
        """Record a new loop run (locked by this process).  Raises
        :class:`~obelisk.errors.JournalError` when ``run_id`` exists or a value is
        not JSON data."""
        run_id = run_id or new_run_id()
        pinned = {
            "plan": sha(dict(settings)),
            "tools": {tool.name: tool_pins(tool) for tool in registry},
        }
        token = book.create_run(
            run_id,
            kind="loop",
            calls=0,
            fingerprint=sha(pinned),
            pinned=pinned,
            plan=dict(settings),
            input=input,
            state=state,
            data=data,
            settings=dict(settings),
        )
        return cls(book, run_id, token)

    @classmethod
    def reopen(cls, book: Journal, run_id: str, registry: Registry) -> tuple[LoopJournal, Any]:
        """Take loop run ``run_id`` up again; returns it and its row (input, state,
        data).  Raises :class:`JournalError` (no such loop, a loop that is over),
        :class:`RunMismatch` (tools changed) and :class:`RunLocked`."""
        book.check()
        row = book.run_row(run_id)
        if row.kind != "loop":
            raise JournalError(f"{run_id!r} is a {row.kind} run, not a loop", book.path)
        if row.status in FINISHED:
            why = f"aborted: {row.reason}" if row.status == "aborted" else row.status
            raise JournalError(f"loop {run_id!r} is over ({why}); nothing to resume")
        if sha(row.pinned) != row.fingerprint:
            raise JournalCorrupted(f"loop {run_id!r}: its pins do not match its fingerprint")
        found = changes(row.pinned, registry)
        if found:
            raise RunMismatch(
                f"loop {run_id!r} is pinned to the tool schemas it started with, and these "
                f"changed: {'; '.join(found)}; nothing was run",
                found,
                book.path,
            )
        token, _ = book.lock(run_id)
        answers = {turn: answer for turn, _, answer in book.turns(run_id)}
        return cls(book, run_id, token, answers), row

    def finish(self, status: str) -> None:
        """Give the loop's lock back, with the loop's status."""
        with contextlib.suppress(JournalError):
            self.book.unlock(self.run_id, self.token, status)

    # -- turns ---------------------------------------------------------------------------
    def replayed(self, number: int) -> Solution | SolutionError | None:
        """The journaled answer of turn ``number``: a :class:`Solution`, the
        :class:`SolutionError` an unusable answer raised, or ``None`` (not journaled:
        ask the model)."""
        if number not in self.answers:
            return None
        answer = self.answers[number]
        if isinstance(answer, dict) and isinstance(answer.get("unusable"), dict):
            bad = answer["unusable"]
            return SolutionError(str(bad.get("reason")), bad.get("text"))
        usage = answer.get("usage") if isinstance(answer, dict) else None
        try:
            solution = parse_solution({k: v for k, v in answer.items() if k != "usage"})
        except (SolutionError, AttributeError) as exc:
            raise JournalCorrupted(f"loop {self.run_id!r}: turn {number}'s answer: {exc}") from None
        return solution.with_usage(usage if isinstance(usage, dict) else None)

    def record(self, number: int, request: Request, answer: Solution | SolutionError) -> None:
        """Journal turn ``number``'s request and answer (committed at once)."""
        if isinstance(answer, SolutionError):
            data: Any = {"unusable": {"reason": answer.reason, "text": answer.text}}
        else:
            data = {**answer.to_data(), "usage": answer.usage}
        self.book.record_turn(self.run_id, number, request.to_data(), data)
        self.answers[number] = data

    def ran(self, number: int) -> list[dict[str, Any]] | None:
        """The calls turn ``number`` ran (its journaled run's plan), or ``None``."""
        with self.book.errors():
            row = self.book.db.execute(
                "SELECT 1 FROM runs WHERE run_id = ?", (f"{self.run_id}.t{number}",)
            ).fetchone()
        if row is None:
            return None
        return plan_calls(self.book.run_row(f"{self.run_id}.t{number}").plan)

    @contextlib.contextmanager
    def turn_run(
        self, number: int, plan: Plan, registry: Registry, input: Any, revision: Any = None
    ) -> Iterator[TurnRun]:
        """The journaled run of turn ``number``'s calls: created, or taken up again
        (its outcomes replayed, its in-flight calls re-run or held unknown, its
        approvals' decisions applied).  Closes the recorder and gives the lock back
        with ``TurnRun.status`` afterwards.  ``revision``: the plan's revision these
        calls are, as ``Revision.to_dict()`` gives it, kept in the run's settings as
        ``"revision"`` (docs/loop.md, "How a plan evolves")."""
        run_id = f"{self.run_id}.t{number}"
        book = self.book
        plan_data = plan.to_data()
        pinned, fingerprint = pins(plan_data, plan, registry)
        replay: dict[int, CallOutcome] = {}
        unknown: dict[int, UnknownCall] = {}
        approvals: dict[str, Any] = {}
        approval_ids: dict[tuple[int, str], str] = {}
        exists = book.db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if exists is None:
            token, session = book.create_run(
                run_id, kind="turn", calls=len(plan.calls), fingerprint=fingerprint,
                pinned=pinned, plan=plan_data, input=input, state=None, data=None,
                settings={} if revision is None else {"revision": revision},
                parent=self.run_id,
            ), 0  # fmt: skip
        else:
            if book.run_row(run_id).fingerprint != fingerprint:
                raise JournalCorrupted(f"turn run {run_id!r} does not match the turn's plan")
            token, session = book.lock(run_id)
            progress = book.progress(run_id)
            replay = replay_outcomes(plan, progress)
            for index, intent in progress.intents.items():
                tool = registry[intent.tool]
                if index in replay or tool.pure or tool.idempotent:
                    continue
                call = plan.calls[index]
                unknown[index] = UnknownCall(
                    index, call.label, call.tool, intent.arguments,
                    intent.key(run_id, index), intent.time,
                )  # fmt: skip
            approvals = check_decisions(
                tuple(progress.approvals.values()), progress.decisions, registry, run_id
            )
            approval_ids = {(a.call, a.hash): a.id for a in progress.approvals.values()}
        writer = RunWriter(book, run_id, session, frozenset(replay))
        turn = TurnRun(run_id, token, writer, replay, unknown, approvals, approval_ids)
        try:
            yield turn
        finally:
            with contextlib.suppress(JournalError):
                writer.close()
            with contextlib.suppress(JournalError):
                book.unlock(run_id, token, turn.status)
