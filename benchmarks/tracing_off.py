"""Tracing off costs nothing measurable: the run-overhead workload on this tree and on
a tree from before tracing existed, side by side (docs/performance.md, "Tracing").

Each round runs ``run_overhead.overhead(n, repeat)`` (zero-work async calls in a
layered DAG, the plan checked as never seen; median of ``repeat`` runs) in a fresh
process for each tree, the two trees in turn, so the machine's drift hits both alike.
Reported: µs per call, wall and CPU, the median over the rounds, and the median of the
rounds' ratios (this tree ÷ the baseline).  Tracing is never turned on here.

Run ``python -m benchmarks.tracing_off --baseline PATH/TO/OLD/src [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

__all__ = ["main", "one_run"]

ROOT = Path(__file__).resolve().parents[1]
_PROGRAM = (
    "import json, sys\n"
    "from benchmarks.run_overhead import overhead\n"
    "print(json.dumps(overhead(int(sys.argv[1]), int(sys.argv[2]))))\n"
)


def one_run(src: Path, calls: int, repeat: int) -> dict[str, float]:
    """``run_overhead.overhead(calls, repeat)`` measured with obelisk from ``src``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(calls), str(repeat)],
        capture_output=True, text=True, env=env, check=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    row: dict[str, float] = json.loads(done.stdout)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src/ of the old tree")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (at least 5)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per process (median)")
    parser.add_argument("--calls", type=int, nargs="+", default=[1_000, 10_000])
    args = parser.parse_args(argv)
    rounds = max(args.rounds, 5)
    print(f"tracing off: this tree vs {args.baseline}, {rounds} rounds; µs per call, wall / CPU\n")
    print("| calls | baseline | this tree | this ÷ baseline |")
    print("|---:|---:|---:|---:|")
    for calls in args.calls:
        pairs = [
            (one_run(args.baseline, calls, args.repeat), one_run(ROOT / "src", calls, args.repeat))
            for _ in range(rounds)
        ]
        cells = []
        for side in (0, 1):
            wall = statistics.median(pair[side]["obelisk_us"] for pair in pairs)
            cpu = statistics.median(pair[side]["obelisk_cpu_us"] for pair in pairs)
            cells.append(f"{wall:.1f} / {cpu:.1f}")
        wall_ratio = statistics.median(p[1]["obelisk_us"] / p[0]["obelisk_us"] for p in pairs)
        cpu_ratio = statistics.median(
            p[1]["obelisk_cpu_us"] / p[0]["obelisk_cpu_us"] for p in pairs
        )
        print(f"| {calls:,} | {cells[0]} | {cells[1]} | {wall_ratio:.3f} / {cpu_ratio:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
