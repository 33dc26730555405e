"""Retry from the failed step: which calls of a failed run run again (docs/durable.md,
"Retry from the failed step").

``obelisk.resume(result, retry="failed")`` (and a durable run's resume with
``retry="failed"``, ``obelisk resume RUN --retry-failed``) takes up a run whose status
is ``failed``.  :func:`retried_calls` names the calls that run again: those that
``failed``, returned an output that was not written (``invalid_output``) or were
``cancelled`` (by ``fail_fast``, the run's timeout or an interrupt: they never
finished).  A call a person rejected (``ApprovalRejected``) is not among them: the
decision stands; a call a person approved runs again under that decision.  Their
outcomes are not replayed, so they run again; the calls skipped because of them are
never replayed (a skip is worked out again when its call is reached), so they run once
their inputs exist; every other call's outcome is replayed, so a call that succeeded
never runs twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from obelisk.errors import UsageError

__all__ = ["RETRIED", "Retry", "check_retryable", "retried", "retried_calls", "retry_mode"]

Retry = Literal["failed"] | None
"""What ``resume(..., retry=...)`` takes: ``None`` (resume as usual) or ``"failed"``."""

RETRIED = frozenset({"failed", "invalid_output", "cancelled"})
"""The statuses of the calls that ``retry="failed"`` runs again."""

_REJECTED = "ApprovalRejected"


def retry_mode(retry: Any) -> Retry:
    """``retry`` checked: ``None`` or ``"failed"``; :class:`~obelisk.errors.UsageError`
    otherwise."""
    if retry is None or retry == "failed":
        return retry  # type: ignore[no-any-return]
    raise UsageError(
        f"retry must be None (resume as usual) or 'failed' (run the failed calls again), "
        f"got {retry!r}"
    )


def check_retryable(run_id: str | None, status: str) -> None:
    """Raise :class:`~obelisk.errors.UsageError` unless a run of ``status`` can be
    retried from its failed step (only a ``failed`` run can)."""
    if status == "failed":
        return
    name = f"run {run_id!r}" if run_id else "this run"
    why = {
        "completed": "it completed: nothing failed",
        "partial": "nothing failed (it is partial: a latent call waits, or a read was missing)",
        "awaiting_approval": "it is not over: it awaits approvals (resume it with decisions)",
        "unknown": "it is not over: calls' outcomes are unknown (resume it with unknown=)",
    }.get(status, f"it is {status}, not failed (resume it without retry)")
    raise UsageError(f"{name} cannot be retried: {why}; retry='failed' takes a failed run")


def retried(status: str, error: Any) -> bool:
    """Whether a call that ended with ``status`` (and ``error``, its error record or
    ``None``) runs again under ``retry="failed"``."""
    if status not in RETRIED:
        return False
    return not (isinstance(error, dict) and error.get("type") == _REJECTED)


def retried_calls(records: Iterable[Any]) -> frozenset[int]:
    """The indexes of the calls (:class:`~obelisk.interpreter.runtime.records.CallRecord`
    objects) that ``retry="failed"`` runs again."""
    return frozenset(r.index for r in records if retried(r.status, r.error))
