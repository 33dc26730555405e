"""How fast ``obelisk.testing.plans()`` draws valid 20-call plans (docs/testing.md).

Each run is one Hypothesis test (generate phase only, no database, no shrinking)
that draws ``PLANS`` plans of exactly 20 calls over a registry like the one of
docs/diagnostics.md (typed outputs, a pydantic model, outcomes, a latent tool,
``Any`` parameters) with an input schema, branching on.  Reported: plans per
second by CPU time (``time.process_time()``) and by wall time, medians of
``--repeat`` runs (at least 5), and how many of a further 50 plans ``obelisk.check``
passes without errors (outside the timing; it must be all of them).  Target:
200 plans/s.

Run ``python -m benchmarks.plan_generation [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from pydantic import BaseModel

import obelisk
from obelisk.testing import GeneratedPlan, plans

CALLS = 20
PLANS = 200
TARGET = 200.0  # plans per second


class Customer(BaseModel):
    id: str
    email: str


@obelisk.tool
def get_customer(customer_id: str) -> Customer:
    """Look a customer up."""
    return Customer(id=customer_id, email="x@example.com")


@obelisk.tool
def charge(customer_id: str, amount: float) -> dict[str, Any]:
    """Charge a customer."""
    return {"customer_id": customer_id, "amount": amount}


@obelisk.tool
def send_email(to: str, subject: str, body: Any = None) -> str:
    """Send an email."""
    return "sent"


@obelisk.tool
def count(items: list[Any]) -> int:
    """Count items."""
    return len(items)


@obelisk.tool(outcomes=["approved", "declined"])
def review(amount: float) -> obelisk.Outcome:
    """Approve small amounts."""
    return obelisk.Outcome(0, amount)


SUMMARIZE = obelisk.Tool.from_schema(
    {
        "name": "summarize",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string"},
    }
)
TOOLS = obelisk.Registry([get_customer, charge, send_email, count, review, SUMMARIZE])
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"customer_id": {"type": "string"}, "amount": {"type": "number"}},
    "required": ["customer_id", "amount"],
}
STRATEGY = plans(TOOLS, input_schema=INPUT_SCHEMA, min_calls=CALLS, max_calls=CALLS)


def _draw(count: int, keep: list[GeneratedPlan] | None = None) -> int:
    drawn = 0

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(STRATEGY)
    def draw(generated: GeneratedPlan) -> None:
        nonlocal drawn
        drawn += 1
        if keep is not None:
            keep.append(generated)

    draw()
    return drawn


def measure(count: int = PLANS, repeat: int = 5) -> dict[str, Any]:
    """Medians over ``repeat`` runs of drawing ``count`` 20-call plans."""
    _draw(10)  # warm up: strategies built, schemas compiled
    cpu, wall, drawn = [], [], []
    for _ in range(repeat):
        gc.collect()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        drawn.append(_draw(count))
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    sample: list[GeneratedPlan] = []
    _draw(50, sample)
    valid = sum(1 for generated in sample if generated.check().ok)
    per_run = statistics.median(drawn)
    return {
        "calls": CALLS,
        "plans": per_run,
        "repeat": repeat,
        "cpu_s": statistics.median(cpu),
        "wall_s": statistics.median(wall),
        "plans_per_cpu_second": per_run / statistics.median(cpu),
        "plans_per_wall_second": per_run / statistics.median(wall),
        "checked": len(sample),
        "valid": valid,
        "target": TARGET,
    }


def markdown(found: dict[str, Any]) -> str:
    """The report line (Markdown)."""
    met = "meets" if found["plans_per_cpu_second"] >= found["target"] else "misses"
    return (
        f"**Plan generation** (`obelisk.testing.plans`): {found['plans_per_cpu_second']:,.0f} "
        f"valid {found['calls']}-call plans per CPU second ({found['plans_per_wall_second']:,.0f} "
        f"per wall second), median of {found['repeat']} runs of {found['plans']:.0f}; "
        f"{found['valid']}/{found['checked']} check without errors; {met} the target of "
        f"{found['target']:.0f}/s.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 plans, 1 run")
    parser.add_argument("--repeat", type=int, default=5, help="runs (median reported), >= 5")
    args = parser.parse_args(argv)
    found = measure(50, 1) if args.quick else measure(PLANS, max(args.repeat, 5))
    sys.stdout.write(markdown(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
