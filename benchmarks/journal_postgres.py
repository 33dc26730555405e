"""What a run journal costs per call in PostgreSQL, against SQLite (docs/scale.md).

The plan of ``journal.py``'s overhead benchmark (``calls`` zero-work async calls in
layers, the worst case: real tools take far longer than a commit) runs in memory, with
a journal in an SQLite file, and with a journal in PostgreSQL (a server this benchmark
starts on loopback, ``postgres_server.py``, with its default settings: ``fsync`` on),
each with ``synchronous="normal"`` (PostgreSQL: ``synchronous_commit=off``) and
``"full"`` (``on``: the commits before a tool with side effects runs reach the disk
first; ``zero`` is such a tool).  Each PostgreSQL run is a new run id in one journal.
Reported per configuration: µs per call, wall time (``time.perf_counter``) beside CPU
time of this process (``time.process_time``; the server's own CPU time is not in it),
and the ratio to the run in memory; each a median of ``repeat`` runs (at least 5).

Run ``python -m benchmarks.journal_postgres [--quick] [--repeat N] [--json] [--url URL]``
(``--url``: an existing server's database instead of starting one; ``--quick``: 1,000
calls).  Needs psycopg (``pip install -e '.[postgres]'``) and PostgreSQL's programs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import obelisk

from .postgres_server import start
from .run_overhead import layered, plan_for, zero


def _timed(action: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    assert result.status == "completed", result.status
    return time.perf_counter() - wall, time.process_time() - cpu


def _per_call(samples: list[tuple[float, float]], calls: int) -> dict[str, float]:
    return {
        "wall": statistics.median(s[0] for s in samples) / calls * 1e6,
        "cpu": statistics.median(s[1] for s in samples) / calls * 1e6,
    }


NAMES = {
    "memory": "in memory",
    "sqlite_normal": 'SQLite, `synchronous="normal"`',
    "sqlite_full": 'SQLite, `synchronous="full"`',
    "postgresql_normal": 'PostgreSQL, `synchronous="normal"`',
    "postgresql_full": 'PostgreSQL, `synchronous="full"`',
}


def _journaled(plan: Any, where: str, synchronous: Any) -> Callable[[], Any]:
    """A run of ``plan`` journaled at ``where`` (a new run in it) with ``synchronous``."""

    def action() -> Any:
        with obelisk.Journal(where, synchronous=synchronous) as book:
            return obelisk.run_sync(plan, [zero], journal=book)

    return action


def measure(url: str, calls: int, repeat: int) -> dict[str, Any]:
    """µs per call in memory, journaled in SQLite and in PostgreSQL at ``url``, each
    with ``synchronous="normal"`` and ``"full"``; the configurations' runs interleaved."""
    plan = plan_for(layered(calls))
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in NAMES}
    with tempfile.TemporaryDirectory(prefix="obelisk-journal-") as folder:
        for n in range(repeat):
            targets: dict[str, Callable[[], Any]] = {
                "memory": lambda: obelisk.run_sync(plan, [zero]),
                "sqlite_normal": _journaled(plan, str(Path(folder) / f"n{n}.db"), "normal"),
                "sqlite_full": _journaled(plan, str(Path(folder) / f"f{n}.db"), "full"),
                "postgresql_normal": _journaled(plan, url, "normal"),
                "postgresql_full": _journaled(plan, url, "full"),
            }
            for name, action in targets.items():
                samples[name].append(_timed(action))
    figures = {name: _per_call(found, calls) for name, found in samples.items()}
    memory = figures["memory"]
    return {
        "calls": calls,
        "repeat": repeat,
        "us_per_call": figures,
        "ratio": {
            name: {k: figure[k] / memory[k] for k in figure} for name, figure in figures.items()
        },
    }


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"{results['calls']:,} zero-work calls, median of {results['repeat']} "
        "(wall / CPU of this process):",
        "",
        "| journal | µs per call | × in memory |",
        "|---|---|---|",
    ]
    for key, label in NAMES.items():
        us, ratio = results["us_per_call"][key], results["ratio"][key]
        lines.append(
            f"| {label} | {us['wall']:.1f} / {us['cpu']:.1f} | "
            f"{ratio['wall']:.2f}x / {ratio['cpu']:.2f}x |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k calls, --repeat runs")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (at least 5)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--url", help="an existing PostgreSQL database (default: start one)")
    args = parser.parse_args(argv)
    calls = 1_000 if args.quick else 10_000
    repeat = max(args.repeat, 1) if args.quick else max(args.repeat, 5)
    server = None if args.url else start()
    try:
        results = measure(args.url or server.url, calls, repeat)  # type: ignore[union-attr]
    finally:
        if server is not None:
            server.stop()
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
