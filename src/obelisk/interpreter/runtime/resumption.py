"""What a resumed run brings to its engine: :class:`Resumption` (docs/approvals.md,
docs/durable.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from obelisk.interpreter.runtime.approvals import ApprovalIds, Decision
from obelisk.interpreter.runtime.records import CallOutcome, UnknownCall

__all__ = ["Resumption"]


@dataclass(frozen=True)
class Resumption:
    """What a run takes up again (a fresh run has only its ``run_id``).

    ``run_id`` names the run (in idempotency keys, results and journals; ``""``: an
    unnamed run).  ``approvals`` maps approval ids to the people's
    :class:`~obelisk.interpreter.runtime.approvals.Decision`; ``replay`` maps a call
    index to the :class:`~obelisk.interpreter.runtime.records.CallOutcome` it had,
    replayed instead of running it again; ``unknown`` maps a call index to an
    :class:`~obelisk.interpreter.runtime.records.UnknownCall`, held (not run) because
    it was in flight when its process stopped.  ``approval_ids`` names paused calls
    (default: ids bound to ``run_id``, or to a fresh scope without one).
    ``standing`` maps a replayed call to the paths it wrote before: its outcome
    replays with no writes, since they stand (a call an execution loop's revision
    keeps, docs/loop.md); ``deferred`` maps a call to the reason it is skipped
    without running (a call a step of the loop leaves for later).
    """

    run_id: str = ""
    approvals: Mapping[str, Decision] = field(default_factory=dict)
    replay: Mapping[int, CallOutcome] = field(default_factory=dict)
    unknown: Mapping[int, UnknownCall] = field(default_factory=dict)
    approval_ids: ApprovalIds | None = None
    standing: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    deferred: Mapping[int, str] = field(default_factory=dict)
