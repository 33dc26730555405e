"""obelisk's share of a user's Hypothesis property test (issue 31, target ≤ 30%).

The test is the one docs/testing.md writes: ``@given(plans(tools, input_schema=...))``
draws a plan of the docs' three sync tools, and its body runs it with
``obelisk.run_sync(plan, FakeTools(tools), input=...)``; 200 examples, generate phase
only, no database.  Reported: the whole test's wall and CPU time (medians of
``--repeat`` runs, at least 5), and how that time splits between obelisk and the
rest (Hypothesis, and the test itself).

The split is read off stack samples, one every ``INTERVAL`` seconds of the
process's CPU time (``SIGPROF``, as statistical profilers do): a sample counts for
obelisk when the innermost frame that belongs to obelisk or to Hypothesis is
obelisk's.  So pydantic, jiter or asyncio working for obelisk count as obelisk, and
so do obelisk's strategies, which run inside Hypothesis's draws.  The sampled runs
are not the timed ones.

Run ``python -m benchmarks.property_tests [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

import obelisk
from obelisk.testing import FakeTools, GeneratedPlan, plans

__all__ = ["EXAMPLES", "INTERVAL", "TARGET", "collect", "markdown", "measure"]

EXAMPLES = 200
INTERVAL = 0.0005  # seconds of CPU time between stack samples
TARGET = 0.30  # obelisk's share at most


@obelisk.tool
def get_customer(customer_id: str) -> dict[str, str]:
    """Look a customer up."""
    return {"id": customer_id, "email": f"{customer_id}@example.com"}


@obelisk.tool
def translate(text: str, language: str = "en") -> str:
    """Translate a text."""
    return text


@obelisk.tool
def send_email(to: str, subject: str, body: Any = None) -> str:
    """Send an email."""
    return f"sent to {to}"


TOOLS = [get_customer, translate, send_email]
INPUT = {
    "type": "object",
    "properties": {"customer_id": {"type": "string"}, "note": {"type": "string"}},
    "required": ["customer_id", "note"],
}

_OBELISK = str(Path(obelisk.__file__).resolve().parent) + os.sep
_HYPOTHESIS = os.sep + "hypothesis" + os.sep


def _test(examples: int) -> None:
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(plans(TOOLS, input_schema=INPUT))
    def property_test(generated: GeneratedPlan) -> None:
        fakes = FakeTools(TOOLS)
        obelisk.run_sync(generated.plan, fakes, input=generated.input)

    property_test()


def _owner(frame: FrameType | None) -> str:
    """``"obelisk"``, ``"hypothesis"`` or ``"other"``: who the innermost frame of
    either belongs to."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_OBELISK):
            return "obelisk"
        if _HYPOTHESIS in name:
            return "hypothesis"
        frame = frame.f_back
    return "other"


def _sampled(examples: int) -> dict[str, int]:
    """Run the test once while sampling its stack every :data:`INTERVAL` seconds of
    CPU time (``SIGPROF``, handled in the test's thread between two bytecodes)."""
    counts = {"obelisk": 0, "hypothesis": 0, "other": 0}

    def sample(signum: int, frame: FrameType | None) -> None:
        counts[_owner(frame)] += 1

    previous = signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)
    try:
        _test(examples)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, previous)
    return counts


def measure(examples: int = EXAMPLES, repeat: int = 5) -> dict[str, Any]:
    """Medians over ``repeat`` timed runs, and the split from ``repeat`` sampled runs."""
    _test(10)  # warm up: strategies built, schemas compiled
    cpu, wall, shares = [], [], []
    for _ in range(repeat):
        gc.collect()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        _test(examples)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    for _ in range(repeat):
        counts = _sampled(examples)
        shares.append(counts["obelisk"] / max(1, sum(counts.values())))
    return {
        "examples": examples,
        "repeat": repeat,
        "cpu_s": statistics.median(cpu),
        "wall_s": statistics.median(wall),
        "obelisk_share": statistics.median(shares),
        "shares": shares,
        "target": TARGET,
    }


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    """:func:`measure` for ``python -m benchmarks``: 50 examples once when ``quick``."""
    return measure(50, 1) if quick else measure(EXAMPLES, max(repeat, 5))


def markdown(found: dict[str, Any]) -> str:
    """The report line (Markdown)."""
    share = found["obelisk_share"]
    met = "meets" if share <= found["target"] else "misses"
    return (
        f"**Property test** (`plans()` + `FakeTools` + `run_sync`, {found['examples']} "
        f"examples): {found['wall_s'] * 1000:,.0f} ms wall / {found['cpu_s'] * 1000:,.0f} ms "
        f"CPU, median of {found['repeat']} runs; obelisk's share {share:.0%} (stack samples, "
        f"median of {found['repeat']} runs), the rest Hypothesis and the test; {met} the "
        f"target of ≤ {found['target']:.0%}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs (median reported), >= 5")
    parser.add_argument("--examples", type=int, default=EXAMPLES)
    args = parser.parse_args(argv)
    sys.stdout.write(markdown(measure(args.examples, max(args.repeat, 5))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
