"""What a durable run's result says to do next, on standard error (docs/cli.md,
docs/durable.md): approve or resolve and resume a run that waits, retry or abort a run
that failed."""

from __future__ import annotations

import shlex

from obelisk.interpreter.runtime.records import RunResult

__all__ = ["durable_hint"]


def durable_hint(result: RunResult, flags: str) -> str | None:
    """How to go on with a durable run that waits (approvals, unknown calls) or
    failed (``--retry-failed``, or ``runs abort``); ``None`` for any other result."""
    if result.journal is None:
        return None
    where = f"--journal {shlex.quote(result.journal)}"
    tools = f" {flags}" if flags else ""
    if result.status == "failed":
        return (
            f"run {result.run_id} failed in {result.journal}: run its failed calls again with "
            f"obelisk resume {result.run_id} {where}{tools} --retry-failed, or give it up "
            f"with obelisk runs abort {result.run_id} {where} --reason TEXT"
        )
    if result.status not in ("awaiting_approval", "unknown"):
        return None
    return (
        f"run {result.run_id} waits in {result.journal}: "
        + (
            f"obelisk approve ID {where} (or reject), then "
            if result.pending
            else "resolve each unknown call (--retry CALL, --succeeded CALL=JSON or "
            "--failed CALL=MESSAGE) with "
        )
        + f"obelisk resume {result.run_id} {where}{tools}"
    )
