"""Revisions of a loop's plan: each answer's calls matched against the calls before
them (docs/loop.md, "How a plan evolves").

The calls of each answer are a new *revision* of the session's plan.  Every call of
the new revision is matched, in order and one to one, against the calls seen in
earlier revisions: by ``_id`` when the call has one, otherwise by its
:func:`identity`, the canonical JSON of its tool, its arguments as written and its
output path (its other meta keys but ``_reasoningForCall`` and ``_status``); a
call written without the ``_id`` it had before matches that call too.  Two
identical calls inside one answer are two calls: the second matches a second earlier
call, or none.  Then :func:`match` sorts them into a :class:`RevisionDiff`:

* ``kept``: matched a call that succeeded; it does not run again, its writes stand;
* ``refreshed``: a kept call whose inputs were written since it ran, of a tool that is
  ``pure``, ``idempotent`` or only reads (:func:`refresh` decides; it runs again);
* ``retried``: matched a call that failed, was skipped or cancelled; it runs again;
* ``carried``: matched a call that never started (planned); it runs now or later;
* ``changed``: matched by ``_id`` but written differently; it runs;
* ``added``: matched nothing; it runs;
* ``superseded``: a call of the previous revision that never started (planned,
  awaiting approval, or skipped) and is not in the new one; it never runs;
* ``dropped``: a call of the previous revision that ran and is not in the new one;
  its writes stand.

Everything here is pure: the session (:mod:`~obelisk.interpreter.loop.plan_history`)
gives it what it saw and acts on the result.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "KINDS",
    "Change",
    "ChangeKind",
    "Pool",
    "Revision",
    "RevisionDiff",
    "Seen",
    "identity",
    "match",
    "refresh",
    "written_content",
]

ChangeKind = Literal[
    "kept", "refreshed", "retried", "carried", "changed", "added", "superseded", "dropped"
]
KINDS: tuple[ChangeKind, ...] = (
    "kept",
    "refreshed",
    "retried",
    "carried",
    "changed",
    "added",
    "superseded",
    "dropped",
)
_IGNORED = frozenset({"_id", "_reasoningForCall", "_status"})
_NOT_STARTED = frozenset({"planned", "superseded", "awaiting_approval"})
_NEVER_RAN = _NOT_STARTED | {"skipped"}  # left out, these are superseded


def written_content(call: Mapping[str, Any]) -> str:
    """The canonical JSON of a call as written, without ``_id``,
    ``_reasoningForCall`` and ``_status`` (keys sorted, no spaces).

    >>> written_content({"x": 1, "_tool": "t", "_reasoningForCall": "why"})
    '{"_tool":"t","x":1}'
    """
    kept = {key: value for key, value in call.items() if key not in _IGNORED}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def identity(call: Mapping[str, Any]) -> str:
    """What matches a call across revisions: its ``_id`` when it has one, otherwise
    :func:`written_content`.

    >>> identity({"_tool": "t", "_id": 7, "x": 1})
    'id:7'
    >>> identity({"_tool": "t", "x": 1}) == identity({"x": 1, "_tool": "t"})
    True
    """
    if "_id" in call:
        return "id:" + json.dumps(call["_id"], ensure_ascii=False)
    return written_content(call)


@dataclass(slots=True)
class Seen:
    """One call of the session's plan, across revisions: ``data`` as last written,
    ``revision`` the revision it first appeared in, ``status`` what became of it
    (``succeeded``, ``failed``, ``skipped``, ``planned``, ``superseded``,
    ``awaiting_approval``), ``ran_in`` the revision it last ran in, ``outcome`` what
    it did (a :class:`~obelisk.interpreter.runtime.records.CallOutcome`, or ``None``),
    ``written`` the paths it wrote, ``mark`` the write log's length once it ran (a
    later entry was written since), ``current``: it is in the latest revision, and
    ``index`` its place in the latest revision it is in."""

    data: dict[str, Any]
    revision: int
    status: str = "planned"
    ran_in: int | None = None
    outcome: Any = None
    written: tuple[str, ...] = ()
    mark: int = 0
    current: bool = True
    index: int = 0

    @property
    def key(self) -> str:
        """Its :func:`identity`."""
        return identity(self.data)


@dataclass(frozen=True, slots=True)
class Change:
    """What one call of a revision is to the revision before: ``kind`` (see the
    module docstring), ``call`` its index in the new revision (``None`` for a
    superseded or dropped call), ``label`` (``#1 issueRefund``, of the earlier
    revision for a superseded or dropped call), ``reason`` in words, and ``seen``:
    the index of the earlier call it matched (``None`` for an added call)."""

    kind: ChangeKind
    call: int | None
    label: str
    reason: str
    seen: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"call", "label", "reason"}``."""
        return {"call": self.call, "label": self.label, "reason": self.reason}


@dataclass(slots=True)
class RevisionDiff:
    """The :class:`Change` of every call of a revision, and of the previous revision's
    calls it left out, in order (``changes``)."""

    changes: list[Change] = field(default_factory=list)

    def of(self, kind: ChangeKind) -> list[Change]:
        """The changes of one kind, in order."""
        return [change for change in self.changes if change.kind == kind]

    def matched(self, kind: ChangeKind) -> list[tuple[int, int]]:
        """``(call, seen)`` for each change of ``kind`` that matched an earlier call."""
        return [
            (c.call, c.seen) for c in self.of(kind) if c.call is not None and c.seen is not None
        ]

    def by_call(self) -> dict[int, Change]:
        """The change of each call of the new revision, by index."""
        return {c.call: c for c in self.changes if c.call is not None}

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """``{kind: [{"call", "label", "reason"}, ...]}`` for every kind (docs/loop.md)."""
        return {kind: [c.to_dict() for c in self.of(kind)] for kind in KINDS}


@dataclass(slots=True)
class Revision:
    """Revision ``number`` of a loop's plan (0: the plan the caller gave), written in
    turn ``turn`` (0 for the caller's), its ``calls`` as written and its ``diff``
    against the revision before."""

    number: int
    turn: int
    calls: list[dict[str, Any]]
    diff: RevisionDiff

    def to_dict(self) -> dict[str, Any]:
        """``{"revision", "turn", "calls": <count>, "diff": {kind: [...]}}``."""
        return {
            "revision": self.number,
            "turn": self.turn,
            "calls": len(self.calls),
            "diff": self.diff.to_dict(),
        }


def _label(index: int, call: Mapping[str, Any]) -> str:
    tool = call.get("_tool")
    base = f"#{index} {tool}"
    return base if "_id" not in call else f"{base} ({call['_id']})"


def _matched(index: int, call: Mapping[str, Any], seen: Seen, at: int) -> Change:
    """The change of a new call that matched earlier call ``seen``."""
    label, ran = _label(index, call), seen.ran_in
    if written_content(call) != written_content(seen.data):
        return Change("changed", index, label, "its _id was written differently before", at)
    if seen.status == "succeeded":
        why = f"succeeded in revision {ran}; not run again, its writes stand"
        return Change("kept", index, label, why, at)
    if seen.status in _NOT_STARTED:
        why = f"{seen.status} since revision {seen.revision}; not run yet"
        return Change("carried", index, label, why, at)
    return Change("retried", index, label, f"{seen.status} in revision {ran}; runs again", at)


def _left_out(seen: Seen, at: int, number: int) -> Change:
    """The change of a call of the previous revision the new one leaves out."""
    label = _label(seen.index, seen.data)
    if seen.status in _NEVER_RAN:
        why = f"not in revision {number} and never started: it never runs"
        return Change("superseded", None, label, why, at)
    why = f"not in revision {number}; {seen.status} in revision {seen.ran_in}, writes stand"
    return Change("dropped", None, label, why, at)


class Pool:
    """The earlier calls ``seen`` a new revision's calls may still match, one to one
    and in order: a call with an ``_id`` matches by it; a call without one matches an
    earlier call written the same way, first one without an ``_id``, then one whose
    ``_id`` the model left out this time (it is still the call it repeats)."""

    def __init__(self, seen: Sequence[Seen]) -> None:
        self.by_key: dict[str, deque[int]] = {}
        self.by_content: dict[str, deque[int]] = {}
        for at, entry in enumerate(seen):
            self.by_key.setdefault(entry.key, deque()).append(at)
            if "_id" in entry.data:
                self.by_content.setdefault(written_content(entry.data), deque()).append(at)
        self.taken: set[int] = set()

    def take(self, call: Mapping[str, Any]) -> int | None:
        """The earlier call ``call`` matches (no longer free), or ``None``."""
        found = self._first(self.by_key.get(identity(call)))
        if found is None and "_id" not in call:
            found = self._first(self.by_content.get(written_content(call)))
        if found is not None:
            self.taken.add(found)
        return found

    def _first(self, waiting: deque[int] | None) -> int | None:
        while waiting:
            at = waiting.popleft()
            if at not in self.taken:
                return at
        return None


def match(seen: Sequence[Seen], calls: Sequence[Mapping[str, Any]], number: int) -> RevisionDiff:
    """The diff of revision ``number`` (``calls``, as written) against the calls
    ``seen`` in earlier revisions (see the module docstring).  Each new call takes
    the first earlier call it matches that no call before it took (:class:`Pool`).

    >>> earlier = [Seen({"_tool": "a"}, 1, "succeeded", 1), Seen({"_tool": "b"}, 1, index=1)]
    >>> diff = match(earlier, [{"_tool": "a"}, {"_tool": "a"}], 2)
    >>> [(c.kind, c.label) for c in diff.changes]
    [('kept', '#0 a'), ('added', '#1 a'), ('superseded', '#1 b')]
    """
    pool = Pool(seen)
    changes: list[Change] = []
    for index, call in enumerate(calls):
        at = pool.take(call)
        if at is not None:
            changes.append(_matched(index, call, seen[at], at))
        else:
            changes.append(Change("added", index, _label(index, call), "a new call"))
    for at, entry in enumerate(seen):
        if entry.current and at not in pool.taken:
            changes.append(_left_out(entry, at, number))
    return RevisionDiff(changes)


def refresh(
    diff: RevisionDiff,
    stale: Mapping[int, str],
    predecessors: Sequence[Sequence[int]],
    refreshable: Callable[[int], bool],
    writing: Collection[int] = (),
) -> RevisionDiff:
    """``diff`` with kept calls that must run again made ``refreshed``: those in
    ``stale`` (call index -> why: its inputs were written since it ran), then,
    until nothing changes, every kept call with ``refreshable(index)`` (its tool is
    pure, idempotent or only reads) that reads what a call that runs may write (a
    ``predecessors`` edge from a call that is not kept, or from a kept call in
    ``writing``, which writes its result again).

    >>> diff = RevisionDiff([Change("added", 0, "#0 a", ""), Change("kept", 1, "#1 b", "")])
    >>> [c.kind for c in refresh(diff, {}, [(), (0,)], lambda i: True).changes]
    ['added', 'refreshed']
    """
    why = dict(stale)
    moving, candidates = _moving(diff, why, writing, refreshable)
    growing = True
    while growing:
        growing = False
        for index in candidates:
            runs = [p for p in predecessors[index] if p in moving]
            if runs and index not in why:
                why[index] = f"reads what #{runs[0]} writes, which runs in this revision"
                moving.add(index)
                growing = True
    return _refreshed(diff, why)


def _moving(
    diff: RevisionDiff,
    why: Mapping[int, str],
    writing: Collection[int],
    refreshable: Callable[[int], bool],
) -> tuple[set[int], list[int]]:
    """The calls whose writes happen in this revision (not kept, stale, or kept and
    ``writing``), and the kept calls that may refresh (``refreshable``, not stale)."""
    kinds = {c.call: c.kind for c in diff.changes if c.call is not None}
    moving = {i for i, kind in kinds.items() if kind != "kept"} | set(why) | set(writing)
    waiting = [i for i, kind in kinds.items() if kind == "kept" and i not in why]
    return moving, [index for index in waiting if refreshable(index)]


def _refreshed(diff: RevisionDiff, why: Mapping[int, str]) -> RevisionDiff:
    """``diff`` with the kept calls in ``why`` made ``refreshed``, with the reason."""
    changes = []
    for change in diff.changes:
        if change.kind == "kept" and change.call is not None and change.call in why:
            reason = f"{why[change.call]}; runs again to refresh its result"
            change = Change("refreshed", change.call, change.label, reason, change.seen)
        changes.append(change)
    return RevisionDiff(changes)
