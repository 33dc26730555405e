"""A loop session's plan across revisions: what became of each call, and how a new
revision runs (docs/loop.md, "How a plan evolves").

:class:`Lineage` keeps every call the session has seen
(:class:`~obelisk.interpreter.loop.revisions.Seen`) and every
:class:`~obelisk.interpreter.loop.revisions.Revision`.  :meth:`Lineage.revise` matches
an answer's calls; :meth:`Lineage.plan_run` says how the checked revision runs (a
:class:`TurnPlan`: the kept calls' outcomes replayed with no writes, since their writes
stand, the calls a step leaves for later); :meth:`Lineage.settle` takes what the run
did.  :meth:`Lineage.statuses` is the ``_status`` of each call of the plan message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.loop.revisions import (
    Change,
    Pool,
    Revision,
    RevisionDiff,
    Seen,
    match,
    refresh,
    written_content,
)
from obelisk.interpreter.runtime.records import CallOutcome, RunResult
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.effects import effect_base
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Advance", "Lineage", "StreamKeeper", "TurnPlan", "plan_status"]

Advance = Literal["all", "step"]

_STATUS = {
    "succeeded": "succeeded",
    "failed": "failed",
    "invalid_output": "failed",
    "cancelled": "failed",
    "unknown": "failed",
    "skipped": "skipped",
    "pending_latent": "skipped",
    "awaiting_approval": "awaiting_approval",
    "waiting": "planned",
}
DEFERRED = "planned: not run in this step (advance='step'); it runs when a later answer keeps it"


def plan_status(record_status: str) -> str:
    """A call record's status as the plan message's ``_status`` (docs/language.md):
    ``succeeded``, ``failed`` (``invalid_output``, ``cancelled`` and ``unknown``
    too), ``skipped`` (``pending_latent`` too), ``awaiting_approval``, ``planned``."""
    return _STATUS.get(record_status, "failed")


def refreshable(tool: Tool) -> bool:
    """Whether a kept call of ``tool`` runs again when its inputs change: the tool is
    ``pure`` or ``idempotent``, or declares only ``read`` effects."""
    effects = tool.effects
    return tool.pure or tool.idempotent or (bool(effects) and "write" not in effects.values())


def _overlaps(read: str, written: str) -> bool:
    """Whether a read path and a written path overlap (one holds the other)."""
    read = read.split("[*]", 1)[0]
    if read == written:
        return True
    shorter, longer = sorted((read, written), key=len)
    return longer.startswith(shorter) and longer[len(shorter)] in ".["


def _restores(entry: Seen, log: Sequence[WriteEntry]) -> bool:
    """Whether kept call ``entry`` writes its result again: it sets its output (a push
    would add it again) and another call wrote over it since it ran."""
    if entry.data.get("_outputMethod", "set") != "set":
        return False
    later = log[entry.mark :]
    return any(_overlaps(path, written.path) for written in later for path in entry.written)


@dataclass(slots=True)
class TurnPlan:
    """How a checked revision runs: ``log_start`` the write log's length when its
    run starts, ``replay`` the kept calls' outcomes (replayed, not run; with no
    writes, since their writes stand, unless another call wrote over what a call
    that sets its output wrote: then with its writes again), ``standing`` the paths each kept call
    wrote, ``deferred`` the calls a step leaves for later (index -> reason)."""

    revision: Revision
    log_start: int = 0
    replay: dict[int, CallOutcome] = field(default_factory=dict)
    standing: dict[int, tuple[str, ...]] = field(default_factory=dict)
    deferred: dict[int, str] = field(default_factory=dict)

    def applied(self, resumption: Resumption) -> Resumption:
        """``resumption`` with this plan's kept calls replayed (before any outcome it
        replays already) and its deferred calls left for later."""
        replay = {**self.replay, **resumption.replay}
        return replace(resumption, replay=replay, standing=self.standing, deferred=self.deferred)

    def keep(self, index: int, entry: Seen, log: Sequence[WriteEntry]) -> CallOutcome:
        """Keep call ``index``, seen as ``entry``, on a state whose write log is
        ``log``: its outcome replays; returns it."""
        done: CallOutcome | None = entry.outcome
        if done is None:  # kept without a record of its run
            done = CallOutcome(True, (), None, None, 0, (None, None))
        if done.writes and _restores(entry, log):
            self.replay[index] = done  # overwritten since: its writes stand again
            return done
        kept = CallOutcome(
            True, (), done.output, done.error, done.attempts, done.times, False, done.warnings
        )
        self.replay[index], self.standing[index] = kept, entry.written
        return kept


class StreamKeeper:
    """Matches a streamed answer's calls as they arrive, as :meth:`Lineage.revise`
    will once the answer is whole (in order, one to one).  A call that matches one
    that succeeded is kept (:meth:`keep` returns its outcome to replay, ``plan``
    holds it), unless its tool is pure, idempotent or only reads: that one runs
    again (``refreshed``), since nothing decides yet what it reads."""

    def __init__(self, lineage: Lineage, registry: Registry, log: Sequence[WriteEntry]) -> None:
        self.lineage, self.registry, self.log = lineage, registry, log
        self.pool = Pool(lineage.seen)
        self.plan = TurnPlan(Revision(0, 0, [], RevisionDiff()), len(log))

    def keep(self, index: int, raw: Any) -> tuple[CallOutcome, tuple[str, ...]] | None:
        """The outcome to replay for streamed call ``index`` (``raw``, as written) and
        the paths it wrote before, or ``None``: it runs."""
        if not isinstance(raw, dict) or not isinstance(raw.get("_tool"), str):
            return None
        at = self.pool.take(raw)
        if at is None:
            return None
        entry = self.lineage.seen[at]
        tool = self.registry.get(raw["_tool"])
        if entry.status != "succeeded" or tool is None or refreshable(tool):
            return None
        if written_content(raw) != written_content(entry.data):
            return None
        outcome = self.plan.keep(index, entry, self.log)
        return outcome, self.plan.standing.get(index, ())


class Lineage:
    """Every call a session has seen (``seen``), its revisions (``revisions``), the
    seen call behind each call of the latest revision (``current``) and, per world
    resource, the last revision a call that writes it ran in (``world``)."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.revisions: list[Revision] = []
        self.current: list[int] = []
        self.world: dict[str, int] = {}

    def revise(self, calls: Sequence[Mapping[str, Any]], turn: int) -> Revision:
        """Record ``calls`` (an answer's, as written; ``turn`` 0: the caller's plan) as
        the next revision, matched against every call seen before."""
        number = self.revisions[-1].number + 1 if self.revisions else (1 if turn else 0)
        diff = match(self.seen, calls, number)
        revision = Revision(number, turn, [dict(call) for call in calls], diff)
        self.revisions.append(revision)
        for entry in self.seen:
            entry.current = False
        current: list[int] = []
        for change in diff.changes:
            if change.call is None:
                if change.kind == "superseded" and change.seen is not None:
                    self.seen[change.seen].status = "superseded"
                continue
            data = revision.calls[change.call]
            if change.seen is None:
                self.seen.append(Seen(data, number, index=change.call))
                current.append(len(self.seen) - 1)
                continue
            entry = self.seen[change.seen]
            if change.kind == "changed" or entry.status == "superseded":
                entry.status = "planned"  # written again: it waits to run
            entry.data, entry.index, entry.current = data, change.call, True
            current.append(change.seen)
        for at in current:
            self.seen[at].current = True
        self.current = current
        return revision

    def plan_run(
        self,
        revision: Revision,
        graph: PlanGraph,
        registry: Registry,
        log: Sequence[WriteEntry],
        advance: Advance,
    ) -> TurnPlan:
        """How ``revision`` (checked: ``graph``) runs on a state whose write log is
        ``log``: kept calls replayed, refreshed ones run again, and with
        ``advance="step"`` only the calls ready when the turn starts run."""
        tools = [registry[call.tool] for call in graph.plan.calls]
        kept = [(index, self.seen[at]) for index, at in revision.diff.matched("kept")]
        stale: dict[int, str] = {}
        for index, entry in kept:
            why = (
                self._stale(entry, graph, index, tools, log) if refreshable(tools[index]) else None
            )
            if why is not None:
                stale[index] = why
        restoring = {index for index, entry in kept if _restores(entry, log)}
        revision.diff = refresh(
            revision.diff, stale, graph.predecessors, lambda i: refreshable(tools[i]), restoring
        )
        plan = TurnPlan(revision, len(log))
        for index, at in revision.diff.matched("kept"):
            plan.keep(index, self.seen[at], log)
        if advance == "step":
            ready = set(graph.ready(set(plan.replay)))
            for index in range(graph.size):
                if index not in plan.replay and index not in ready:
                    plan.deferred[index] = DEFERRED
        return plan

    def streamed(
        self, calls: Sequence[Mapping[str, Any]], turn: int, keeper: StreamKeeper
    ) -> TurnPlan:
        """The revision a streamed answer made (its ``calls``), with the calls the
        ``keeper`` kept; a matched call it let run is ``refreshed``."""
        revision = self.revise(calls, turn)
        changes = []
        for change in revision.diff.changes:
            if change.kind == "kept" and change.call not in keeper.plan.replay:
                why = "streamed: its tool is pure, idempotent or only reads; runs again"
                change = Change("refreshed", change.call, change.label, why, change.seen)
            changes.append(change)
        revision.diff = RevisionDiff(changes)
        keeper.plan.revision = revision
        return keeper.plan

    def _stale(
        self,
        entry: Seen,
        graph: PlanGraph,
        index: int,
        tools: list[Tool],
        log: Sequence[WriteEntry],
    ) -> str | None:
        """Why kept call ``index`` (seen as ``entry``) must refresh: a path it reads
        was written since it ran, or a world resource it reads was written in a
        later revision; ``None`` when neither."""
        reads = [str(read.reference) for read in graph.reads[index]]
        for written in log[entry.mark :]:
            if any(_overlaps(read, written.path) for read in reads):
                return f"{written.path} was written since it ran"
        ran = entry.ran_in if entry.ran_in is not None else -1
        for resource in map(effect_base, tools[index].effects):  # files:{path} as files
            if self.world.get(resource, -1) > ran:
                return f"the world resource {resource!r} was written since it ran"
        return None

    def settle(
        self, plan: TurnPlan | None, run: RunResult, log: Sequence[WriteEntry], registry: Registry
    ) -> set[int]:
        """Take what the run of the latest revision (``plan``: how it ran) did, on a
        state whose write log is now ``log``; sets each record's ``revision``.  Returns
        the calls it did not run: kept, or planned (no error record for them)."""
        if plan is None:
            return set()
        entries, log_size = log[plan.log_start :], len(log)
        revision = self.revisions[-1]
        kept, deferred = plan.replay, plan.deferred
        wrote: dict[int, list[str]] = {}
        for written in entries:
            if written.call is not None:
                wrote.setdefault(written.call, []).append(written.path)
        for record, at in zip(run.calls, self.current, strict=False):
            entry = self.seen[at]
            record.revision = entry.revision
            index = record.index
            if index in kept:
                if kept[index].writes:  # restored: its writes are this turn's now
                    entry.mark, entry.written = log_size, tuple(wrote.get(index, ()))
                continue
            if index in deferred:
                entry.status = "planned"
                continue
            entry.status = plan_status(record.status)
            if record.started is None:
                continue
            entry.ran_in, entry.outcome, entry.mark = (
                revision.number,
                run.outcomes.get(index),
                log_size,
            )
            entry.written = tuple(wrote.get(index, ()))
            effects = registry[record.tool].effects if record.tool in registry else {}
            for resource, mode in effects.items():
                if mode == "write" and entry.status != "skipped":
                    self.world[effect_base(resource)] = revision.number
        return {*kept, *deferred}

    def statuses(self, count: int) -> list[str] | None:
        """The ``_status`` of each call of the latest revision, or ``None`` when it
        does not have ``count`` calls (the plan message carries something else)."""
        if len(self.current) != count:
            return None
        return [self.seen[at].status for at in self.current]

    def has_planned(self) -> bool:
        """True while a call of the latest revision is planned (a step left it)."""
        return any(self.seen[at].status == "planned" for at in self.current)
