"""What the ``obelisk`` command costs to start (issue 31, docs/performance.md "Cold start").

Each command runs as a whole process, in turn with the reference ``python -c "import
asyncio, json, pydantic, typer, rich"``, one run each per round after a warm-up;
each ratio is the median of the rounds' ratios, wall by wall and CPU by CPU (the
child's user + system time, from ``resource.getrusage``).  Targets: ``obelisk
--version`` ≤ 1.2x, ``obelisk run`` of a 5-call plan ≤ 1.6x.

A third command is the floor of any ``obelisk run`` whose tools pydantic builds and
whose output rich prints: the reference plus ``rich.console`` and one pydantic
model and type adapter (pydantic looks its plugins up among the installed packages
when it builds the first one).

obelisk's modules are compiled to bytecode first (``compileall``, as ``pip install``
does; docs/install.md): with ``PYTHONDONTWRITEBYTECODE`` set and a source checkout,
every start would compile every module again.

Run ``python -m benchmarks.cold_start [--rounds N]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import obelisk

__all__ = ["REFERENCE", "collect", "markdown"]

REFERENCE = "import asyncio, json, pydantic, typer, rich"
FLOOR = (
    REFERENCE + "; import rich.console; from pydantic import BaseModel, TypeAdapter, "
    "create_model; TypeAdapter(int); create_model('M', n=(int, ...))"
)
TOOLS = '''import obelisk


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n
'''
PLAN = [
    {"_tool": "double", "n": 1, "_outputPath": "†state.a"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.c"},
    {"_tool": "double", "n": "†state.b", "_outputPath": "†state.d"},
    {"_tool": "double", "n": "†state.d", "_outputPath": "†state.e"},
]
TARGETS = {"version": 1.2, "run": 1.6}


def _child(command: list[str]) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of one run of ``command`` (its output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def _paired(command: list[str], reference: list[str], rounds: int) -> dict[str, Any]:
    _child(command), _child(reference)  # warm-up: file caches
    runs, references = [], []
    for _ in range(rounds):
        runs.append(_child(command))
        references.append(_child(reference))
    return {
        "cpu_ms": statistics.median(r[0] for r in runs) * 1000,
        "wall_ms": statistics.median(r[1] for r in runs) * 1000,
        "reference_cpu_ms": statistics.median(r[0] for r in references) * 1000,
        "reference_wall_ms": statistics.median(r[1] for r in references) * 1000,
        "cpu": statistics.median(r[0] / b[0] for r, b in zip(runs, references, strict=True)),
        "wall": statistics.median(r[1] / b[1] for r, b in zip(runs, references, strict=True)),
    }


def collect(quick: bool = False, rounds: int = 7) -> dict[str, Any]:
    """The three commands against the reference, ``rounds`` rounds each (3 when quick)."""
    rounds = 3 if quick else max(rounds, 5)
    package = Path(obelisk.__file__).parent
    compileall.compile_dir(str(package), quiet=1)
    python = sys.executable
    obelisk_command = [python, "-m", "obelisk"]  # the console script's own code path
    reference = [python, "-c", REFERENCE]
    with tempfile.TemporaryDirectory() as folder:
        tools, plan = Path(folder) / "tools.py", Path(folder) / "plan.json"
        tools.write_text(TOOLS, encoding="utf-8")
        plan.write_text(json.dumps(PLAN, ensure_ascii=False), encoding="utf-8")
        run = [*obelisk_command, "run", str(plan), "--tools", str(tools)]
        return {
            "rounds": rounds,
            "pythondontwritebytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
            "version": _paired([*obelisk_command, "--version"], reference, rounds),
            "run": _paired(run, reference, rounds),
            "floor": _paired([python, "-c", FLOOR], reference, rounds),
        }


def markdown(found: dict[str, Any]) -> str:
    """The report (Markdown)."""
    lines = [
        "**Cold start**: whole processes, each ÷ `python -c "
        f'"{REFERENCE}"` run in turn with it, median of {found["rounds"]} rounds; '
        "CPU is the child's user + system time; wall / CPU:",
        "",
        "| command | time | reference | ÷ reference | target |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = (
        ("`obelisk --version`", "version"),
        ("`obelisk run` of a 5-call plan", "run"),
        ("floor of a run: the reference + `rich.console` + a pydantic model", "floor"),
    )
    for label, key in rows:
        row = found[key]
        target = TARGETS.get(key)
        verdict = "—"
        if target is not None:
            met = "met" if row["cpu"] <= target else "missed"
            verdict = f"≤ {target:.1f}x: {met}"
        lines.append(
            f"| {label} | {row['wall_ms']:,.0f} / {row['cpu_ms']:,.0f} ms "
            f"| {row['reference_wall_ms']:,.0f} / {row['reference_cpu_ms']:,.0f} ms "
            f"| {row['wall']:.2f}x / {row['cpu']:.2f}x | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds, >= 5")
    args = parser.parse_args(argv)
    sys.stdout.write(markdown(collect(False, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
