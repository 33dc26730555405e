"""``obelisk worker``: the durable queue of a deployment (docs/scale.md).

A worker claims the runs of a journal that are ready to continue
(:meth:`~obelisk.interpreter.runtime.durable.journal.Journal.ready`: they crashed or
were interrupted, or their approvals were all decided) and finishes them, each with
:func:`obelisk.resume` under the run's lock: a run another worker holds is left to it
(:class:`~obelisk.errors.RunLocked`), so many workers share one journal, best a
PostgreSQL one (``--journal postgresql://...``); an SQLite file works the same on one
machine.  ``--once`` takes each ready run once and exits; otherwise the worker looks
again every ``--poll`` seconds until it is stopped (``SIGTERM`` or Ctrl-C: the run in
hand is left interrupted, and the next worker takes it up).
"""

from __future__ import annotations

import functools
import signal
import time
from typing import Annotated, Any

import typer

from obelisk.cli.io import (
    FilesRootOption,
    NoStdlibOption,
    OverrideOption,
    ToolsOption,
    err,
    fail,
    load_registry,
    out,
)
from obelisk.cli.otel import OtelOption, start_otel
from obelisk.cli.run import CLI_CONTEXT, settle
from obelisk.diagnostics import printable
from obelisk.errors import ObeliskError, RunLocked
from obelisk.interpreter.fixed_plan import resume_sync
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.tools.registry import Registry

__all__ = ["worker_command"]


class _Worker:
    """One worker's pass over a journal: which runs it finished and which it gave up."""

    def __init__(self, book: Journal, registry: Registry) -> None:
        self.book, self.registry = book, registry
        self.seen: set[str] = set()  # runs taken up (--once) or given up (errors)
        self.failures = 0
        self.stopped = False  # SIGTERM came

    def take(self, run_id: str) -> None:
        """Resume run ``run_id`` to its end (or its next pause) and say how it went."""
        try:
            result = settle(
                functools.partial(
                    resume_sync, run_id, tools=self.registry, journal=self.book, context=CLI_CONTEXT
                )
            )
        except RunLocked:
            return  # another worker took it meanwhile
        except ObeliskError as exc:
            self.seen.add(run_id)  # not taken up again by this worker: a person must look
            self.failures += 1
            err.print(printable(f"obelisk worker: run {run_id}: {exc}"), markup=False)
            return
        out.print(printable(f"{run_id} {result.status}"), markup=False)

    def ready(self) -> list[str]:
        return [run_id for run_id in self.book.ready() if run_id not in self.seen]

    def sweep(self, once: bool) -> int:
        """Take every ready run; returns how many were ready."""
        ready = self.ready()
        for run_id in ready:
            if self.stopped:
                raise KeyboardInterrupt
            if once:
                self.seen.add(run_id)
            self.take(run_id)
        return len(ready)


def _stop_on_sigterm(worker: _Worker) -> None:
    """``SIGTERM`` (a supervisor stopping the worker) stops it as Ctrl-C does."""

    def stop(signum: int, frame: Any) -> None:
        worker.stopped = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def worker_command(
    journal: Annotated[
        str,
        typer.Option(
            "--journal",
            metavar="FILE|URL",
            help="The journal to take runs from: a postgresql:// URL shared by the workers, "
            "or an SQLite file.",
        ),
    ],
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    once: Annotated[
        bool, typer.Option("--once", help="Take each ready run once, then exit.")
    ] = False,
    poll: Annotated[
        float,
        typer.Option("--poll", metavar="SECONDS", help="How often to look for ready runs."),
    ] = 2.0,
    otel: OtelOption = False,
) -> None:
    """Finish the durable runs of a journal that are ready to continue: crashed or
    interrupted runs, and runs whose approvals were all decided.

    Each run is resumed under its lock, so several workers can share one journal; a
    run another worker holds is left to it.  Prints one line per run, `RUN_ID STATUS`.
    A run that cannot be resumed (tools that changed, a damaged record) is reported on
    standard error and not taken up again by this worker.  With --once, exits when no
    ready run is left (1 if a run could not be resumed); otherwise looks again every
    --poll seconds until stopped (SIGTERM or Ctrl-C; the run in hand stays resumable).
    Give the --tools the runs started with.
    """
    if poll <= 0:
        fail(f"--poll must be a positive number of seconds, got {poll}")
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    stop_otel = start_otel(otel)  # --otel: spans to $OTEL_EXPORTER_OTLP_ENDPOINT (exits 2
    # without the extra, before the journal is opened)
    try:
        book = Journal(journal)
    except ObeliskError as exc:
        stop_otel()
        fail(str(exc))
    worker = _Worker(book, registry)
    _stop_on_sigterm(worker)
    try:
        while True:
            try:
                worker.sweep(once)
            except ObeliskError as exc:  # the journal itself failed: stop, loudly
                fail(str(exc))
            if worker.stopped:
                raise KeyboardInterrupt
            if once and not worker.ready():
                break
            if not once:
                time.sleep(poll)
    except KeyboardInterrupt:
        err.print("obelisk worker: stopped", markup=False)
    finally:
        book.close()
        stop_otel()  # sends the spans left in the batch
    if worker.failures:
        raise typer.Exit(1)
