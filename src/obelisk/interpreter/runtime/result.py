"""The run's result: what the engine hands back once its calls have settled.

:func:`run_result` gathers the state's documents, the instance views, the call
records, the write log, the calls waiting for a person and what each call did
into a :class:`~obelisk.interpreter.runtime.records.RunResult`.  The state's
documents are copied unless the run owns its state (``owns_state``: nothing else
will read it, so the result takes its documents as they are).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.records import (
    CallOutcome,
    CallRecord,
    RunResult,
    RunStatus,
    UnknownCall,
)
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.labels import LabelMap

__all__ = ["run_result"]


def run_result(
    status: RunStatus,
    state: State,
    records: Sequence[CallRecord],
    *,
    owns_state: bool,
    pending: Mapping[int, PendingApproval],
    outcomes: Mapping[int, CallOutcome],
    unknown: Mapping[int, UnknownCall],
    run_id: str,
    plan: Any = None,
    labels: LabelMap | None = None,
) -> RunResult:
    """The :class:`RunResult` of a run with ``status`` over ``state`` and ``records``;
    ``pending`` and ``unknown`` (by call index) are listed in plan order; ``plan`` is
    what ran (for provenance), ``labels`` the state's label map (a run with labels)."""
    instances = {name: state.document("state", name) for name in state.instances}
    if owns_state:
        documents = state.hand_over()
    else:
        documents = {kind: state.document(kind) for kind in state.kinds}
    return RunResult(
        status=status,
        state=documents.get("state") or {},
        calls=tuple(records),
        log=tuple(state.log),
        documents=documents,
        instances=instances,
        pending=tuple(pending[i] for i in sorted(pending)),
        outcomes=dict(outcomes),
        run_id=run_id or None,
        unknown=tuple(unknown[i] for i in sorted(unknown)),
        plan=plan,
        labels=labels,
    )
