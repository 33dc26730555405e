"""What a run journal costs (docs/durable.md).

* **overhead**: a layered plan of ``calls`` zero-work async calls (the one of
  ``run_overhead.py``), run in memory and with ``journal=`` (a fresh journal file in
  a temporary directory for every run, ``synchronous="normal"``), in the same
  process one after the other.  Reported: µs per call for both, wall time
  (``time.perf_counter``) beside CPU time (``time.process_time``), and the ratio
  journaled ÷ in memory; each a median of ``repeat`` runs (at least 5; ``--quick``:
  1k calls, as many runs as asked).
* **resume**: a run of ``resume_calls`` zero-work calls whose calls all committed,
  left unfinished (as after a crash just before its end), resumed from its journal:
  every call is replayed from the journal, none runs.  Reported: seconds (wall and
  CPU), median of ``repeat`` resumes, each of a fresh copy of the journal file.

Run ``python -m benchmarks.journal [--quick] [--repeat N] [--json]``; ``python -m
benchmarks`` includes it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import obelisk
from obelisk.interpreter.runtime.durable.journal import Journal

from .run_overhead import layered, plan_for, zero


def _median(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "wall": statistics.median(s[0] for s in samples),
        "cpu": statistics.median(s[1] for s in samples),
    }


def _timed(action: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def overhead(calls: int, repeat: int) -> dict[str, Any]:
    """µs per call of the same plan in memory and journaled (alternating runs)."""
    plan = plan_for(layered(calls))
    memory: list[tuple[float, float]] = []
    journaled: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="obelisk-journal-") as folder:
        for n in range(repeat):
            wall, cpu, result = _timed(lambda: obelisk.run_sync(plan, [zero]))
            assert result.status == "completed", result.status
            memory.append((wall, cpu))
            path = Path(folder) / f"runs{n}.db"
            wall, cpu, result = _timed(
                lambda path=path: obelisk.run_sync(plan, [zero], journal=path)
            )
            assert result.status == "completed", result.status
            journaled.append((wall, cpu))
    mem, jour = _median(memory), _median(journaled)
    return {
        "calls": calls,
        "memory_us": {k: v / calls * 1e6 for k, v in mem.items()},
        "journal_us": {k: v / calls * 1e6 for k, v in jour.items()},
        "ratio": {k: jour[k] / mem[k] for k in mem},
    }


def resume(calls: int, repeat: int) -> dict[str, Any]:
    """Seconds to resume a run of ``calls`` committed calls (all replayed)."""
    plan = plan_for(layered(calls))
    samples: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="obelisk-journal-") as folder:
        source = Path(folder) / "source.db"
        done = obelisk.run_sync(plan, [zero], journal=source, run_id="r")
        with Journal(source) as book:  # as if it crashed after its last commit
            book.set_status("r", "interrupted")
        reference = done.state
        for n in range(repeat):
            copy = Path(folder) / f"copy{n}.db"
            shutil.copyfile(source, copy)
            wall, cpu, result = _timed(
                lambda copy=copy: obelisk.resume_sync("r", tools=[zero], journal=copy)
            )
            assert result.status == "completed" and result.state == reference
            with Journal(copy) as book:  # every call was replayed, none ran
                row = book.db.execute(
                    "SELECT data FROM events WHERE event = 'run_resumed'"
                ).fetchone()
            assert json.loads(row[0])["replayed"] == calls, row
            samples.append((wall, cpu))
    return {"calls": calls, "seconds": _median(samples)}


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    """``--quick`` (a smoke run): 1k calls, ``repeat`` runs; else 10k calls and at
    least 5 runs."""
    runs = max(repeat, 1) if quick else max(repeat, 5)
    return {
        "repeat": runs,
        "overhead": overhead(1_000 if quick else 10_000, runs),
        "resume": resume(1_000 if quick else 10_000, runs),
    }


def markdown(results: dict[str, Any]) -> str:
    o, r = results["overhead"], results["resume"]
    m, j, q = o["memory_us"], o["journal_us"], o["ratio"]
    s = r["seconds"]
    return (
        f"**Run journal** (median of {results['repeat']}; wall / CPU): "
        f"{o['calls']:,} zero-work calls in memory {m['wall']:.1f} / {m['cpu']:.1f} µs per "
        f"call, journaled {j['wall']:.1f} / {j['cpu']:.1f} µs per call "
        f"({q['wall']:.2f}x / {q['cpu']:.2f}x); resuming a run of {r['calls']:,} committed "
        f"calls: {s['wall']:.3f} / {s['cpu']:.3f} s.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k calls, --repeat runs")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (at least 5)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    results = collect(args.quick, args.repeat)
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
