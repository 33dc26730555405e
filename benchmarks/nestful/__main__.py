"""Score obelisk on the NESTFUL v2 math records: ``python -m benchmarks.nestful``.

Conversion: each math record's gold call sequence becomes a plan.  The call
labelled ``$var_N`` is ``{"_tool": name, "arg_0": ..., "arg_1": ...,
"_outputPath": "†state.var_N"}`` (arguments by name = upstream's positional
order), and an argument that is exactly ``"$var_N.result$"`` becomes
``"†state.var_N.result"``.  The plan runs with ``obelisk.run_sync`` and the 40
math tools; its answer is the last call's ``result``.

Scoring (upstream's rule): if the answer and the gold are both floats, the answer
is rounded to as many decimals as the gold's printed form has (``400.0``: 1) and
then compared; a tuple equals a list with the same items; anything else must be
exactly equal.  A failed last call is a mismatch.

Prints a Markdown table (records, passed, score, total and mean time per plan,
calls) and every mismatch; ``--json`` prints the same as JSON, with every record.
``--runner standin`` uses the sequential stand-in instead of the engine.  Exit
status 0 after scoring, 2 when the corpus or the engine is not available.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .convert import NESTFUL_DIR, load_math_cases
from .score import Runner, Score, obelisk_runner, score_cases, standin_runner


def _cell(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False).replace("|", "\\|")


def markdown(score: Score) -> str:
    """The score table and the mismatch list, as Markdown."""
    lines = [
        f"## NESTFUL v2 math -- runner: {score.runner}",
        "",
        "| records | passed | score | total time | mean per plan | calls |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {score.total} | {score.passed} | {100 * score.score:.1f} % "
        f"| {score.seconds:.3f} s | {1000 * score.mean_seconds:.2f} ms | {score.calls} |",
        "",
    ]
    mismatches = score.mismatches
    if not mismatches:
        lines.append("No mismatches.")
        return "\n".join(lines)
    lines += [
        f"### Mismatches ({len(mismatches)})",
        "",
        "| sample id | expected | got | error |",
        "|---|---|---|---|",
    ]
    for record in mismatches:
        error = (record.error or "").replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| {record.sample_id} | {_cell(record.expected)} | {_cell(record.got)} | {error} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.nestful", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument(
        "--runner",
        choices=("obelisk", "standin"),
        default="obelisk",
        help="obelisk.run_sync (default) or the sequential stand-in",
    )
    parser.add_argument(
        "--data", type=Path, default=NESTFUL_DIR, help=f"the NESTFUL folder ({NESTFUL_DIR})"
    )
    args = parser.parse_args(argv)
    try:
        cases = load_math_cases(args.data)
    except FileNotFoundError as exc:
        print(f"NESTFUL corpus not available: {exc}", file=sys.stderr)
        return 2
    runner: Runner | None
    if args.runner == "obelisk":
        runner, name = obelisk_runner(), "obelisk.run_sync"
        if runner is None:
            print("engine not available: obelisk has no run_sync", file=sys.stderr)
            return 2
    else:
        runner, name = standin_runner(), "stand-in (sequential)"
    score = score_cases(cases, runner, name)
    if args.json:
        print(json.dumps(score.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(markdown(score))
    return 0


if __name__ == "__main__":
    sys.exit(main())
