"""``obelisk run-many``: one plan over many inputs, or many plans (docs/scale.md).

The inputs (``--inputs FILE``) or the plans (``--plans FILE``) are JSON Lines, one
value per line.  The results go out as JSON Lines in the inputs' order, as soon as each
one and those before it are done (to ``-o FILE``, or standard output); a summary of
the runs' statuses goes to standard error, with a progress bar while they run on a
terminal.  ``--journal`` makes every run durable: the same command run again after it
was killed reads the finished runs from the journal and runs only the others.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any, cast

import typer

from obelisk.cli.io import (
    FilesRootOption,
    JournalOption,
    NoStdlibOption,
    OverrideOption,
    ToolsOption,
    decode_json,
    err,
    fail,
    load_registry,
    read_plan,
    tools_print_to_stderr,
)
from obelisk.cli.otel import OtelOption, start_otel
from obelisk.cli.run import CLI_CONTEXT
from obelisk.diagnostics import printable
from obelisk.errors import ObeliskError
from obelisk.interpreter.many.batch import (
    DEFAULT_RUNS,
    BatchResult,
    Executor,
    batch_id,
    run_many_sync,
)
from obelisk.interpreter.plan.parse import parse_plan

__all__ = ["run_many_command"]

_LISTED = 20
"""How many runs that did not complete the summary names, at most."""


def read_lines(path: Path, what: str) -> list[Any]:
    """The JSON values of the JSON Lines file ``path`` (blank lines skipped); a bad line
    exits 2 naming the file and the line."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        fail(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        fail(f"{what} {str(path)!r} is not UTF-8: {exc.reason} at byte {exc.start}")
    values = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            values.append(decode_json(line, f"line {number} of {what} {str(path)!r}"))
    return values


class InOrder:
    """Writes results as JSON Lines in index order, each as soon as it and all those
    before it are done (the later ones wait in memory)."""

    def __init__(self, sink: IO[str]) -> None:
        self.sink, self.next = sink, 0
        self.waiting: dict[int, BatchResult] = {}

    def __call__(self, result: BatchResult) -> None:
        self.waiting[result.index] = result
        while self.next in self.waiting:
            done = self.waiting.pop(self.next)
            self.sink.write(json.dumps(done.to_dict(), ensure_ascii=False, default=repr) + "\n")
            self.next += 1
        self.sink.flush()


@contextmanager
def _progress(total: int) -> Iterator[Callable[[BatchResult], None]]:
    """A callback that advances a progress bar on standard error when it is a terminal
    (rich, imported then), and does nothing elsewhere."""
    if not err.is_terminal:
        yield lambda _: None
        return
    from rich.progress import Progress

    with Progress(console=err, transient=True) as progress:
        task = progress.add_task("runs", total=total)
        yield lambda _: progress.advance(task)


def summary_lines(results: list[BatchResult]) -> list[str]:
    """``"N runs: completed 8, failed 2"`` and one line per run that did not complete
    (at most :data:`_LISTED`): ``"run 3: failed (#0 charge: ValueError: ...)"``."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    shown = ", ".join(f"{status} {n}" for status, n in sorted(counts.items()))
    lines = [f"{len(results)} runs: {shown or 'none'}"]
    others = [r for r in results if not r.ok]
    for result in others[:_LISTED]:
        why = result.error or "; ".join(
            f"#{e['call']} {e['tool']}: {e['error']}" for e in result.errors[:1]
        )
        lines.append(f"run {result.index}: {result.status}" + (f" ({why})" if why else ""))
    if len(others) > _LISTED:
        lines.append(f"... and {len(others) - _LISTED} more")
    return lines


def _sink(output: Path | None) -> IO[str]:
    """Where the results go: ``output``, or a copy of standard output's descriptor (what
    tools print is sent to standard error meanwhile, descriptor 1 included)."""
    try:
        if output is not None:
            return output.open("w", encoding="utf-8")
        return os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {str(output)!r}: {exc.strerror or exc}")
    except (AttributeError, ValueError, io.UnsupportedOperation):  # no descriptor (a test)
        return cast(IO[str], _Kept(sys.stdout))


class _Kept(io.TextIOBase):
    """``stream``, written through, not closed at the end."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


def _executor(ray: str | None) -> Executor | None:
    if ray is None:
        return None
    from obelisk.interpreter.many.ray_executor import RayExecutor

    return RayExecutor(None if ray == "local" else ray)


def _items(plan: str | None, inputs: Path | None, plans: Path | None) -> tuple[Any, list[Any]]:
    """The plan (``None`` with ``--plans``) and the items: inputs or plans."""
    if (inputs is None) == (plans is None):
        fail("give --inputs FILE (one plan over many inputs) or --plans FILE (many plans)")
    if plans is not None:
        if plan is not None:
            fail("--plans takes no PLAN argument: each line of the file is a plan")
        return None, read_lines(plans, "plans")
    if plan is None:
        fail("--inputs needs the PLAN to run over them")
    assert inputs is not None
    try:
        parsed = parse_plan(read_plan(plan))
    except ObeliskError as exc:
        fail(f"plan {plan!r}: {exc}")
    return parsed, read_lines(inputs, "inputs")


def _batch(plan: str | None, items: list[Any]) -> str:
    """The batch's id in the journal: a hash of the plan file's bytes and the items."""
    text = read_plan(plan) if plan is not None else b""
    return batch_id(text.decode("utf-8", "replace"), items)


def run_many_command(
    plan: Annotated[
        str | None,
        typer.Argument(metavar="[PLAN]", help="Plan JSON file to run over --inputs."),
    ] = None,
    inputs: Annotated[
        Path | None,
        typer.Option("--inputs", metavar="FILE", help="JSON Lines file: one input per run."),
    ] = None,
    plans: Annotated[
        Path | None,
        typer.Option("--plans", metavar="FILE", help="JSON Lines file: one plan per run."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write the results here (JSON Lines)."),
    ] = None,
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    journal: JournalOption = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", metavar="N", help="Runs going at once.")
    ] = DEFAULT_RUNS,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", metavar="SECONDS", help="Time limit of each run."),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: 'local' (a Ray instance of this process), 'auto' (the "
            "cluster of this machine) or ray://HOST:PORT (the ray extra).",
        ),
    ] = None,
    otel: OtelOption = False,
) -> None:
    """Run one plan over many inputs (--inputs), or many plans (--plans).

    The results are JSON Lines, one per run in the inputs' order ({"index", "status",
    "state", "calls", "errors", "error", "run_id", "resumed"}), written as the runs end.
    A run that fails never stops the others.  With --journal every run is durable: run
    the same command again after a crash and only the unfinished runs run.  Exits 0
    when every run completed, 1 otherwise, 2 for bad input.  --otel traces the runs of
    this process (not those on Ray workers).
    """
    if concurrency < 1:
        fail(f"--concurrency must be at least 1, got {concurrency}")
    the_plan, items = _items(plan, inputs, plans)
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    stop_otel = start_otel(otel)  # --otel: spans to $OTEL_EXPORTER_OTLP_ENDPOINT (exits 2
    # without the extra, before -o FILE is opened)
    sink = _sink(output)
    writer = InOrder(sink)
    try:
        with _progress(len(items)) as advance, tools_print_to_stderr():

            def done(result: BatchResult) -> None:
                writer(result)
                advance(result)

            results = run_many_sync(
                items, registry, plan=the_plan, concurrency=concurrency, journal=journal,
                batch=None if journal is None or plan == "-" else _batch(plan, items),
                timeout=timeout, context=CLI_CONTEXT, executor=_executor(ray), on_result=done,
            )  # fmt: skip
    except ObeliskError as exc:
        fail(str(exc))
    finally:
        sink.close()
        stop_otel()  # sends the spans left in the batch
    for line in summary_lines(results):
        err.print(printable(line), markup=False)
    if not all(result.ok for result in results):
        raise typer.Exit(1)
